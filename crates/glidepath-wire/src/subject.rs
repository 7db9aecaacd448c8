//! NATS subject names: where the executive listens and where each federation's
//! topics live.
//!
//! Every federation's traffic is under `glidepath.<federationId>.`, and an endpoint
//! subscribes the single wildcard [`federation_wildcard`] and filters locally: the
//! NATS client delivers each subscription through its own channel, so order across
//! subscriptions is lost, while one subscription keeps the server's per-connection
//! order — the per-sender FIFO across topics that time management needs.

use glidepath_core::{
    FederateHandle, FederationId, InteractionClassHandle, ObjectClassHandle, Topic,
};

/// The executive's request/reply subject (JSON requests, see [`crate::encode_request`]).
pub const EXEC_SUBJECT: &str = "glidepath.exec";

/// The first token of every glidepath subject.
const ROOT: &str = "glidepath";

/// `glidepath.<federationId>.`: the prefix of every subject of one federation.
pub fn federation_prefix(federation: FederationId) -> String {
    format!("{ROOT}.{}.", federation.0)
}

/// `glidepath.<federationId>.>`: the one subscription an endpoint makes per federation.
pub fn federation_wildcard(federation: FederationId) -> String {
    format!("{ROOT}.{}.>", federation.0)
}

/// The subject a topic of a federation is published on.
pub fn topic_subject(federation: FederationId, topic: Topic) -> String {
    let f = federation.0;
    match topic {
        Topic::ObjectClass(c) => format!("{ROOT}.{f}.o.{}", c.0),
        Topic::InteractionClass(c) => format!("{ROOT}.{f}.i.{}", c.0),
        Topic::Time => format!("{ROOT}.{f}.time"),
        Topic::Federation => format!("{ROOT}.{f}.fed"),
        Topic::Federate(d) => format!("{ROOT}.{f}.d.{}", d.0),
    }
}

/// A decimal number in canonical form: digits only, no sign, no leading zero.
fn number<T: std::str::FromStr>(token: &str) -> Option<T> {
    let canonical = !token.is_empty()
        && token.bytes().all(|b| b.is_ascii_digit())
        && (token == "0" || !token.starts_with('0'));
    if canonical {
        token.parse().ok()
    } else {
        None
    }
}

/// The federation and topic a subject names; `None` for any other subject
/// (including [`EXEC_SUBJECT`] and non-canonical numbers such as `007`).
pub fn parse_topic_subject(subject: &str) -> Option<(FederationId, Topic)> {
    let rest = subject.strip_prefix(ROOT)?.strip_prefix('.')?;
    let (federation, rest) = rest.split_once('.')?;
    let federation = FederationId(number(federation)?);
    let topic = match rest.split_once('.') {
        None if rest == "time" => Topic::Time,
        None if rest == "fed" => Topic::Federation,
        None => return None,
        Some(("o", h)) => Topic::ObjectClass(ObjectClassHandle(number(h)?)),
        Some(("i", h)) => Topic::InteractionClass(InteractionClassHandle(number(h)?)),
        Some(("d", h)) => Topic::Federate(FederateHandle(number(h)?)),
        Some(_) => return None,
    };
    Some((federation, topic))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_are_as_specified() {
        let f = FederationId(7);
        assert_eq!(federation_prefix(f), "glidepath.7.");
        assert_eq!(federation_wildcard(f), "glidepath.7.>");
        assert_eq!(
            topic_subject(f, Topic::ObjectClass(ObjectClassHandle(3))),
            "glidepath.7.o.3"
        );
        assert_eq!(
            topic_subject(f, Topic::InteractionClass(InteractionClassHandle(2))),
            "glidepath.7.i.2"
        );
        assert_eq!(topic_subject(f, Topic::Time), "glidepath.7.time");
        assert_eq!(topic_subject(f, Topic::Federation), "glidepath.7.fed");
        assert_eq!(
            topic_subject(f, Topic::Federate(FederateHandle(4))),
            "glidepath.7.d.4"
        );
        assert_eq!(
            topic_subject(f, Topic::Federate(FederateHandle::EXECUTIVE)),
            "glidepath.7.d.4294967295"
        );
    }

    #[test]
    fn parse_inverts_topic_subject() {
        let topics = [
            Topic::ObjectClass(ObjectClassHandle(0)),
            Topic::ObjectClass(ObjectClassHandle(u32::MAX)),
            Topic::InteractionClass(InteractionClassHandle(12)),
            Topic::Time,
            Topic::Federation,
            Topic::Federate(FederateHandle(1)),
            Topic::Federate(FederateHandle::EXECUTIVE),
        ];
        for f in [FederationId(0), FederationId(1), FederationId(u64::MAX)] {
            for t in topics {
                let s = topic_subject(f, t);
                assert!(s.starts_with(&federation_prefix(f)));
                assert_eq!(parse_topic_subject(&s), Some((f, t)), "{s}");
            }
        }
    }

    #[test]
    fn parse_rejects_other_subjects() {
        for s in [
            EXEC_SUBJECT,
            "glidepath.7.>",
            "glidepath.7.",
            "glidepath.7",
            "glidepath..time",
            "glidepath.07.time",
            "glidepath.+7.time",
            "glidepath.7.o.",
            "glidepath.7.o.01",
            "glidepath.7.o.3.x",
            "glidepath.7.o.4294967296",
            "glidepath.7.d.-1",
            "glidepath.7.x.1",
            "glidepath.7.times",
            "other.7.time",
            "glidepathx.7.time",
            "",
        ] {
            assert_eq!(parse_topic_subject(s), None, "{s}");
        }
    }
}

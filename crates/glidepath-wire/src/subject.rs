//! NATS subject names, the one home for every subject glidepath uses (specified in
//! `docs/wire-format.md`): where the executive listens, the barrier probe, where each
//! federation's topics live, and the reliable-delivery subjects of the NATS backend.
//!
//! ```text
//! glidepath.exec                          executive requests (request/reply, JSON)
//! glidepath.barrier                       round-trip probe; no payload, any answer or
//!                                         "no responders" proves the server read what
//!                                         this connection sent before it
//! glidepath.<federation>.o.<class>        Topic::ObjectClass
//! glidepath.<federation>.i.<class>        Topic::InteractionClass
//! glidepath.<federation>.time             Topic::Time
//! glidepath.<federation>.fed              Topic::Federation (executive notifications)
//! glidepath.<federation>.d.<federate>     Topic::Federate (direct messages)
//! glidepath-flow.<federation>.<sender>    acknowledgements, NACKs and goodbyes for one sender
//! glidepath-retx.<federation>.<receiver>  retransmissions for one receiver (hex token)
//! glidepath-alive.<federation>.<federate> liveness probes of a joined federate (the
//!                                         executive server asks; its endpoint answers)
//! glidepath.<federation>.cells            a sender's account of its cell envelopes
//! glidepath-cell.<federation>.<grid>.o.<class>.<cell>
//! glidepath-cell.<federation>.<grid>.i.<class>.<cell>
//!                                         updates and interactions sent with regions,
//!                                         on the cells of the grid they cover (DDM)
//! ```
//!
//! `<federation>` is the decimal [`FederationId`], the classes and federates their
//! decimal handles.
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

/// The subject of round-trip probes (see the module documentation).
pub const BARRIER_SUBJECT: &str = "glidepath.barrier";

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

/// The topic a subject of `federation` stands for; `None` for anything else
/// (another federation, a malformed or unknown subject).
pub fn parse_topic(federation: FederationId, subject: &str) -> Option<Topic> {
    match parse_topic_subject(subject) {
        Some((f, topic)) if f == federation => Some(topic),
        _ => None,
    }
}

/// `glidepath.<federationId>.cells`: where a sender accounts for the envelopes it
/// sent on cell subjects (inside the federation's wildcard, so every receiver reads
/// it in order with the sender's other envelopes).
pub fn cells_subject(federation: FederationId) -> String {
    format!("{ROOT}.{}.cells", federation.0)
}

/// The `o.<class>` / `i.<class>` part of a data topic's subjects; `None` for the
/// other topics, which never travel on cells.
fn data_topic(topic: Topic) -> Option<String> {
    match topic {
        Topic::ObjectClass(c) => Some(format!("o.{}", c.0)),
        Topic::InteractionClass(c) => Some(format!("i.{}", c.0)),
        _ => None,
    }
}

/// `glidepath-cell.<federationId>.<grid>.<o|i>.<class>.<cell>`: one cell of a data
/// topic on a grid (`<grid>` in 4 lowercase hex digits); `None` for a topic that is no
/// object or interaction class.
pub fn cell_subject(
    federation: FederationId,
    grid: u16,
    topic: Topic,
    cell: u32,
) -> Option<String> {
    let t = data_topic(topic)?;
    Some(format!(
        "{ROOT}-cell.{}.{grid:04x}.{t}.{cell}",
        federation.0
    ))
}

/// Every cell of a data topic on a grid: `glidepath-cell.<federationId>.<grid>.<o|i>.<class>.*`.
pub fn cell_wildcard(federation: FederationId, grid: u16, topic: Topic) -> Option<String> {
    let t = data_topic(topic)?;
    Some(format!("{ROOT}-cell.{}.{grid:04x}.{t}.*", federation.0))
}

/// The topic and cell of a cell subject of `federation` on `grid`; `None` for
/// anything else.
pub fn parse_cell_subject(
    federation: FederationId,
    grid: u16,
    subject: &str,
) -> Option<(Topic, u32)> {
    let rest = subject.strip_prefix(ROOT)?.strip_prefix("-cell.")?;
    let (f, rest) = rest.split_once('.')?;
    if number::<u64>(f)? != federation.0 {
        return None;
    }
    let (g, rest) = rest.split_once('.')?;
    if g.len() != 4 || u16::from_str_radix(g, 16).ok()? != grid {
        return None;
    }
    let (kind, rest) = rest.split_once('.')?;
    let (class, cell) = rest.split_once('.')?;
    let topic = match kind {
        "o" => Topic::ObjectClass(ObjectClassHandle(number(class)?)),
        "i" => Topic::InteractionClass(InteractionClassHandle(number(class)?)),
        _ => return None,
    };
    Some((topic, number(cell)?))
}

/// `glidepath-alive.<federationId>.<federate>`: where the executive server asks
/// whether a joined federate's endpoint is still connected (NATS answers "no
/// responders" at once when it is not).
pub fn alive_subject(federation: FederationId, federate: FederateHandle) -> String {
    format!("glidepath-alive.{}.{}", federation.0, federate.0)
}

/// `glidepath-flow.<federationId>.<sender>`: the subject on which receivers talk to
/// one sender of a federation (the NATS backend's reliable delivery).
pub fn flow_subject(federation: FederationId, sender: FederateHandle) -> String {
    format!("glidepath-flow.{}.{}", federation.0, sender.0)
}

/// `glidepath-retx.<federationId>.<token>`: the subject on which a receiver gets
/// retransmissions, its token in 16 lowercase hex digits. Outside the federation's
/// wildcard: the receiver reads it through a subscription of its own, so a flood of
/// new data cannot crowd retransmissions out of the client's channel, and nobody
/// else reads them.
pub fn retx_subject(federation: FederationId, token: u64) -> String {
    format!("glidepath-retx.{}.{token:016x}", federation.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cell_subjects_round_trip_and_others_are_refused() {
        let f = FederationId(7);
        let o = Topic::ObjectClass(ObjectClassHandle(3));
        let i = Topic::InteractionClass(InteractionClassHandle(12));
        assert_eq!(cells_subject(f), "glidepath.7.cells");
        assert_eq!(alive_subject(f, FederateHandle(3)), "glidepath-alive.7.3");
        assert_eq!(
            cell_subject(f, 0xa3, o, 37).unwrap(),
            "glidepath-cell.7.00a3.o.3.37"
        );
        assert_eq!(
            cell_wildcard(f, 0xa3, i).unwrap(),
            "glidepath-cell.7.00a3.i.12.*"
        );
        assert_eq!(cell_subject(f, 1, Topic::Time, 0), None);
        assert_eq!(
            parse_cell_subject(f, 0xa3, "glidepath-cell.7.00a3.o.3.37"),
            Some((o, 37))
        );
        assert_eq!(
            parse_cell_subject(f, 0xa3, "glidepath-cell.7.00a3.i.12.0"),
            Some((i, 0))
        );
        for bad in [
            "glidepath-cell.8.00a3.o.3.37",
            "glidepath-cell.7.00a4.o.3.37",
            "glidepath-cell.7.a3.o.3.37",
            "glidepath-cell.7.00a3.x.3.37",
            "glidepath-cell.7.00a3.o.3",
            "glidepath-cell.7.00a3.o.3.037",
            "glidepath.7.o.3",
        ] {
            assert_eq!(parse_cell_subject(f, 0xa3, bad), None, "{bad}");
        }
    }

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
    fn reliable_delivery_subjects_are_as_specified() {
        assert_eq!(
            flow_subject(FederationId(7), FederateHandle(4)),
            "glidepath-flow.7.4"
        );
        assert_eq!(
            retx_subject(FederationId(7), 0xab),
            "glidepath-retx.7.00000000000000ab"
        );
        // Neither is under a federation's wildcard.
        assert_eq!(
            parse_topic_subject(&flow_subject(FederationId(7), FederateHandle(4))),
            None
        );
        assert_eq!(parse_topic_subject(&retx_subject(FederationId(7), 1)), None);
    }

    #[test]
    fn topics_of_another_federation_are_not_ours() {
        let subject = topic_subject(FederationId(42), Topic::Time);
        assert_eq!(parse_topic(FederationId(42), &subject), Some(Topic::Time));
        assert_eq!(parse_topic(FederationId(4), &subject), None);
        assert_eq!(parse_topic(FederationId(42), BARRIER_SUBJECT), None);
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
            BARRIER_SUBJECT,
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

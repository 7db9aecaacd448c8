//! The NATS subject layout (specified in `docs/wire-format.md`): which subject a
//! topic of a federation travels on, and the way back from a subject to a topic.
//!
//! ```text
//! glidepath.exec                      executive requests (request/reply, JSON)
//! glidepath.barrier                   round-trip probe; no payload, any answer or
//!                                     "no responders" proves the server read what
//!                                     this connection sent before it
//! glidepath.<federation>.o.<class>    Topic::ObjectClass
//! glidepath.<federation>.i.<class>    Topic::InteractionClass
//! glidepath.<federation>.time         Topic::Time
//! glidepath.<federation>.fed          Topic::Federation (executive notifications)
//! glidepath.<federation>.d.<federate> Topic::Federate (direct messages)
//! ```
//!
//! `<federation>` is the decimal [`FederationId`], the classes and federates their
//! decimal handles. The topic subjects come from `glidepath_wire::subject`; the
//! barrier subject and the two reply headers are this backend's.

use glidepath_core::FederationId;

pub use glidepath_wire::subject::{
    federation_wildcard, parse_topic_subject, topic_subject, EXEC_SUBJECT,
};

/// The subject of round-trip probes (see the module documentation).
pub const BARRIER_SUBJECT: &str = "glidepath.barrier";

/// A reply header set by the executive server when a request could not be decoded
/// or answered; its value says why, and the body is `{"error": "..."}`.
pub const ERROR_HEADER: &str = "Glidepath-Error";

/// A reply header set by the executive server when the request caused notifications:
/// `<federation> <seq>`, the federation and the `seq` of the last notification it
/// published (before the reply) on that federation's `fed` subject.
pub const NOTIFIED_HEADER: &str = "Glidepath-Notified";

/// The topic a subject of `federation` stands for; `None` for anything else
/// (another federation, a malformed or unknown subject).
pub fn parse_topic(federation: FederationId, subject: &str) -> Option<glidepath_core::Topic> {
    match parse_topic_subject(subject) {
        Some((f, topic)) if f == federation => Some(topic),
        _ => None,
    }
}

/// Parses the value of [`NOTIFIED_HEADER`].
pub fn parse_notified(value: &str) -> Option<(FederationId, u64)> {
    let (federation, seq) = value.trim().split_once(' ')?;
    Some((FederationId(federation.parse().ok()?), seq.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glidepath_core::Topic;

    #[test]
    fn topics_of_another_federation_are_not_ours() {
        let subject = topic_subject(FederationId(42), Topic::Time);
        assert_eq!(parse_topic(FederationId(42), &subject), Some(Topic::Time));
        assert_eq!(parse_topic(FederationId(4), &subject), None);
        assert_eq!(parse_topic(FederationId(42), BARRIER_SUBJECT), None);
    }

    #[test]
    fn notified_header_parses() {
        assert_eq!(parse_notified("7 12"), Some((FederationId(7), 12)));
        assert_eq!(parse_notified("7"), None);
        assert_eq!(parse_notified("x 1"), None);
    }
}

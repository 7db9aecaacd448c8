//! Persistence: the `nats` backend over NATS JetStream, switched on by
//! [`NatsOptions::persistence`] (like the persistence switch of the ATM TestBed's
//! ActiveMQ), so a run's messages survive a NATS server restart and can be replayed.
//!
//! # Layout
//!
//! The executive server creates one stream per federation when the federation is
//! created: named [`stream_name`] (`GLIDEPATH_<federation>`), capturing the
//! federation's subjects `glidepath.<federation>.>`, file storage, limits from
//! [`JetStreamOptions`] and discard policy `New`, so a full stream refuses new
//! messages (publishers see errors and retry) instead of silently dropping old ones.
//! The stream is kept when the federation is destroyed, for [`replay`]. The subjects
//! are those of core NATS, so the executive's notifications (still published with
//! core NATS) land in the stream too.
//!
//! # How the contract is met
//!
//! - **Publishing** goes through JetStream: each message carries the header
//!   [`ORIGIN_HEADER`] (`<endpoint id> <counter>`, the counter increasing by one per
//!   message of the endpoint) and is kept by the endpoint until the stream has
//!   acknowledged it. At most [`JetStreamOptions::acks_outstanding_max`] messages wait
//!   for their acknowledgement; the next `publish` then waits for the oldest one. That
//!   bounds the publisher's memory, whatever its subscribers do.
//! - **Retransmission.** When an acknowledgement fails (timed out across a NATS
//!   server restart, stream full, ...), the endpoint publishes every message still
//!   waiting again, oldest first, backing off, until acknowledged or until
//!   [`NatsOptions::request_timeout`] passes (then `publish` fails with
//!   [`TransportError::Timeout`] and keeps the messages for the next attempt).
//! - **Receiving** uses one ordered consumer per federation over the whole stream,
//!   which keeps per-sender FIFO across topics (a stream is one ordered log). It
//!   starts right after the stream's last message at the time of `subscribe`, so what
//!   is published after `subscribe` returns is delivered. A receiver accepts a
//!   message of an origin only when its counter is the next one: duplicates (a
//!   retransmission of something already stored) and messages behind a missing one
//!   (which the publisher is retransmitting, in order) are dropped. Messages of the
//!   endpoint itself are dropped (no self-delivery); messages without the header
//!   (executive notifications) are delivered as with core NATS. A consumer that
//!   stays silent for a second while the stream holds messages it has not
//!   delivered is replaced by a new one at the next message (counted in
//!   `EndpointStats::stream_consumer_restarts`).
//! - **Bounded memory.** A receiving endpoint stops reading the stream while
//!   [`JetStreamOptions::inbox_backlog_max`] envelopes wait in its inbox, so a slow
//!   subscriber's backlog stays on the NATS server's disk (bounded by
//!   [`JetStreamOptions::stream_bytes_max`], or by the server's JetStream store when that is
//!   0); publishers hold at most their window. Nobody's
//!   memory grows without bound; a stream that fills up refuses new messages, and
//!   publishers then wait and finally fail with [`TransportError::Timeout`].
//! - **Close** waits until every message the endpoint published is acknowledged by the
//!   stream (or the request timeout passes; what is then still unacknowledged is
//!   logged as lost).
//!
//! After a NATS server restart with the same store directory the stream is still
//! there; clients reconnect, each receiver starts a new consumer right after the
//! last message it delivered (ordered consumers live in the server's memory and
//! are gone), and publishers retransmit what was not acknowledged (after
//! `ACK_TIMEOUT`, 2 s): no acknowledged message is lost, and none is delivered
//! twice or out of order. Messages a publisher had not handed over when its
//! process died are lost with it; executive notifications still travel by core
//! NATS and can be lost in flight as without persistence.

mod consume;
mod playback;
mod publish;

use std::str::FromStr;
use std::time::Duration;

use async_nats::jetstream::stream::{Config as StreamConfig, DiscardPolicy, StorageType};
use glidepath_core::FederationId;

use super::subject::federation_wildcard;
#[cfg(doc)]
use super::NatsOptions;
#[cfg(doc)]
use crate::TransportError;

pub(super) use consume::subscribe;
pub use playback::{replay, Replay, ReplayedEnvelope};
pub(super) use publish::{JetStreamEndpoint, StreamHost};

/// The header that names a JetStream message's publishing endpoint and its number
/// there: `<endpoint id> <counter>`.
pub const ORIGIN_HEADER: &str = "Glidepath-Origin";

/// Whether the NATS backend keeps federations' messages. Configuration names:
/// `none` and `jetstream` (env `GLIDEPATH_PERSISTENCE`, CLI `--persistence`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Persistence {
    /// Core NATS, at most once: nothing is kept. The default, because it needs no
    /// JetStream-enabled server and is the fastest.
    #[default]
    None,
    /// A JetStream stream per federation (the NATS server must run with `--jetstream`).
    JetStream(JetStreamOptions),
}

impl Persistence {
    /// JetStream with default limits.
    pub fn jetstream() -> Persistence {
        Persistence::JetStream(JetStreamOptions::default())
    }

    /// The configuration name: `none` or `jetstream`.
    pub fn name(&self) -> &'static str {
        match self {
            Persistence::None => "none",
            Persistence::JetStream(_) => "jetstream",
        }
    }
}

/// A persistence name that is neither `none` nor `jetstream`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown persistence `{0}`; known: none, jetstream")]
pub struct UnknownPersistence(pub String);

impl FromStr for Persistence {
    type Err = UnknownPersistence;

    /// Parses `none` or `jetstream` (ignoring case and blanks); JetStream gets default limits.
    fn from_str(s: &str) -> Result<Persistence, UnknownPersistence> {
        match s.trim().to_ascii_lowercase().as_str() {
            "none" => Ok(Persistence::None),
            "jetstream" => Ok(Persistence::jetstream()),
            _ => Err(UnknownPersistence(s.to_string())),
        }
    }
}

/// Limits of the JetStream mode. Fields are public; start from [`JetStreamOptions::default`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JetStreamOptions {
    /// Bytes a federation's stream may hold; when full, new messages are refused
    /// (publishers retry, then fail) rather than old ones dropped. 0 sets no limit
    /// of the stream's own: the NATS server's JetStream store bounds it (its
    /// `max_file_store`, by default most of the free disk). Default 0, because the
    /// stream is the live path in this mode, so a limit is a limit on how long a
    /// federation can run — a full ATM TestBed day is about 15 GB — and because a
    /// limit is reserved in the server's store for as long as the stream is kept
    /// (replay), so a few dozen kept 1 GiB streams would exhaust a 40 GB store.
    pub stream_bytes_max: u64,
    /// How long messages are kept; zero keeps them until the stream is full or
    /// deleted. Default zero, so a run can be replayed any time later.
    pub stream_age_max: Duration,
    /// Messages an endpoint may have published and not yet seen acknowledged before
    /// `publish` waits. Default 4096: enough to keep the pipe to the server full,
    /// and at 100 B per message well under a megabyte held per publisher.
    pub acks_outstanding_max: usize,
    /// Envelopes a receiving endpoint lets wait in its inbox before it stops reading
    /// the stream; the rest of a slow subscriber's backlog waits on the NATS
    /// server's disk. Default 65,536: a few megabytes, far more than a federate that
    /// keeps up ever holds.
    pub inbox_backlog_max: usize,
    /// Copies of each federation's stream the NATS cluster keeps (JetStream's
    /// `num_replicas`, 1 to 5). Default 1, all a single server can hold; 3 on a
    /// cluster of three or more, so the stream survives the loss of a node.
    pub replicas: usize,
}

impl Default for JetStreamOptions {
    fn default() -> Self {
        JetStreamOptions {
            stream_bytes_max: 0,
            stream_age_max: Duration::ZERO,
            acks_outstanding_max: 4096,
            inbox_backlog_max: 64 << 10,
            replicas: 1,
        }
    }
}

/// How often a receiver looks whether its connection came back (to restart its
/// consumer at once after a NATS server restart).
const RECONNECT_CHECK: Duration = Duration::from_millis(100);

/// How often a receiver with a full inbox looks whether the application has read.
const BACKLOG_RECHECK: Duration = Duration::from_millis(1);

/// How long a publisher waits for one acknowledgement before publishing again.
const ACK_TIMEOUT: Duration = Duration::from_secs(2);

/// How long one pull of an ordered consumer may wait at the server.
const PULL_EXPIRES: Duration = Duration::from_secs(4);

/// How long a receiver hears nothing from its consumer before it asks the stream
/// whether messages are waiting, and if so starts a new consumer at the next one.
///
/// The client's ordered consumer notices a dead pull only by two missed idle
/// heartbeats (a miss is two heartbeats long, and the heartbeat is half of
/// [`PULL_EXPIRES`]: 8 s in all), then recreates itself without telling us. In
/// full-day ATM runs that happened a few times a day (three times in one run) and
/// showed as latencies of 8.1 s against a P99.9 of 71 ms.
const STALL_CHECK: Duration = Duration::from_secs(1);

/// The name of a federation's stream: `GLIDEPATH_<federation>`.
pub fn stream_name(federation: FederationId) -> String {
    format!("GLIDEPATH_{}", federation.0)
}

fn stream_config(federation: FederationId, options: &JetStreamOptions) -> StreamConfig {
    StreamConfig {
        name: stream_name(federation),
        subjects: vec![federation_wildcard(federation)],
        storage: StorageType::File,
        discard: DiscardPolicy::New,
        // -1: JetStream's "no limit".
        max_bytes: match options.stream_bytes_max {
            0 => -1,
            n => i64::try_from(n).unwrap_or(i64::MAX),
        },
        max_age: options.stream_age_max,
        num_replicas: options.replicas.max(1),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persistence_parses() {
        assert_eq!("none".parse::<Persistence>(), Ok(Persistence::None));
        assert_eq!(
            " JetStream ".parse::<Persistence>(),
            Ok(Persistence::jetstream())
        );
        assert!("disk".parse::<Persistence>().is_err());
    }
}

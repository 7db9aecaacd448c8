//! The transport seam ("Messaging Support"): how federates' envelopes and the
//! executive's requests travel, behind one trait with several backends.
//!
//! A [`Transport`] is a backend chosen by configuration (`inproc` today; NATS and
//! shared memory later). Each federate opens one [`Endpoint`] from it and drives its
//! [`glidepath_core::LocalRti`] through that endpoint. Backends never look inside an
//! [`Envelope`]: routing is by `(FederationId, Topic)` only.
//!
//! # The contract
//!
//! Every backend guarantees the following; [`conformance`] checks each point and
//! every backend runs it, through the one list of [`conformance_tests!`]
//! (`tests/conformance_*.rs`, `tests/jetstream.rs`).
//!
//! 1. **Per-sender FIFO across topics.** Envelopes one endpoint publishes reach each
//!    receiving endpoint in publication order, across all topics of a federation,
//!    without loss or duplication. Time management relies on this: a federate's time
//!    status travels behind every message it sent before.
//! 2. **No self-delivery.** An endpoint never receives an envelope it published, even
//!    on a topic it subscribes.
//! 3. **Subscriptions take effect when the call returns.** Every envelope published on
//!    `(federation, topic)` after [`Endpoint::subscribe`] returns is delivered to the
//!    subscriber; nothing published after [`Endpoint::unsubscribe`] returns is.
//!    Subscribing twice is the same as subscribing once. Topics of different
//!    federations are unrelated.
//! 4. **Requests reach the executive.** [`Endpoint::request`] is answered by the
//!    [`glidepath_core::Executive`] hosting the federation. The notifications a
//!    request causes are published on that federation's [`Topic::Federation`], with
//!    sender [`FederateHandle::EXECUTIVE`] and a `seq` that increases per federation,
//!    before the reply returns: a subscriber receives them before anything that any
//!    endpoint publishes after seeing the reply. A refusal by the executive is an
//!    `Ok` reply ([`ExecReply::FederationError`], ...); `Err` means the transport failed.
//! 5. **Publication time.** An envelope published with `publish_time_ns == 0` is
//!    stamped with [`monotonic_now_ns`]; other values are delivered unchanged.
//! 6. **Close drains.** When [`Endpoint::close`] returns, every envelope the endpoint
//!    published before is on its way to its subscribers and will be delivered (no
//!    reliable message is ever lost at shutdown). Afterwards `publish`, `subscribe`,
//!    `unsubscribe` and `request` fail with [`TransportError::Closed`], the endpoint
//!    receives nothing new, and its inbox yields what had arrived and then reports
//!    disconnection. Closing twice is harmless; dropping an endpoint closes it.
//! 7. **Best effort is shed, reliable is not.** When a receiving endpoint's inbox
//!    already holds [`BEST_EFFORT_BACKLOG_MAX`] envelopes, best-effort envelopes for it
//!    are dropped and counted ([`EndpointStats::best_effort_dropped`]); reliable ones are
//!    always kept, in order. Bounding reliable traffic needs flow control back to the
//!    sender: the NATS backend has it (acknowledgement windows over core NATS, the
//!    publish acknowledgement window with JetStream), so a slow subscriber slows its
//!    senders instead of growing another process's memory. Above the transport, an
//!    evoked federate that stops evoking stops moving envelopes from its inbox into
//!    its queue of callbacks at a bound (the front crate's `CALLBACK_BACKLOG_MAX`),
//!    so its backlog stays where this bound holds. `inproc` has none: all federates
//!    share one process, and a federate that stops draining grows its inbox in that
//!    process.
//!
//! The `inproc` backend ([`InprocTransport`]) is the embedded default: all federates
//! in one process, envelopes moved (their payloads are reference-counted [`bytes::Bytes`]),
//! never serialised. The `nats` backend (`NatsTransport`, cargo feature
//! `transport-nats`) connects federates in many processes and hosts through a NATS
//! server; its module documentation says how it meets each point and where it can
//! lose messages.

#![warn(missing_docs)]

use std::sync::OnceLock;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crossbeam_channel::Receiver;
use glidepath_core::{Envelope, ExecReply, ExecRequest, FederationId, Topic};

#[cfg(doc)]
use glidepath_core::FederateHandle;

pub mod conformance;
mod inproc;
#[cfg(feature = "transport-nats")]
pub mod nats;
mod save_dir;
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
pub mod shm;

pub use inproc::{InprocEndpoint, InprocTransport};
#[cfg(feature = "transport-nats")]
pub use nats::{NatsEndpoint, NatsOptions, NatsTransport};
pub use save_dir::DirSaveStore;
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
pub use shm::{ShmEndpoint, ShmOptions, ShmTransport};

/// Why a transport operation failed (defined in the core, which carries it in
/// `RtiError::Link`).
pub use glidepath_core::{ConnectCause, TransportError};

/// A messaging backend: opens endpoints, one per federate (or per admin client).
///
/// Implementations are cheap to share (`Arc<dyn Transport>`) and must satisfy the
/// contract in the [crate documentation](crate).
pub trait Transport: Send + Sync {
    /// Opens a new endpoint with no subscriptions and an empty inbox.
    fn open(&self) -> Result<Box<dyn Endpoint>, TransportError>;
    /// The backend's name as used in configuration (`"inproc"`, `"nats"`, ...).
    fn name(&self) -> &'static str;
}

/// One participant's connection to a transport.
///
/// All methods take `&self` so a federate's RTI thread and its user threads can share
/// the endpoint. See the [crate documentation](crate) for the ordering, subscription,
/// request and close guarantees every implementation gives.
pub trait Endpoint: Send + Sync {
    /// Publishes an envelope on a topic of a federation (stamping `publish_time_ns`
    /// when it is 0). Returns once the envelope is handed to the backend.
    fn publish(
        &self,
        federation: FederationId,
        topic: Topic,
        envelope: Envelope,
    ) -> Result<(), TransportError>;
    /// Starts receiving a topic of a federation; effective when it returns.
    fn subscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError>;
    /// Stops receiving a topic of a federation; effective when it returns.
    fn unsubscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError>;
    /// Says what this endpoint wants of a topic it subscribes (data distribution
    /// management): messages sent without regions, or with regions overlapping
    /// `regions`; `None` (the default) is everything. A backend may then drop at the
    /// source, before they reach this endpoint, messages whose regions overlap none of
    /// these (`inproc` does; effective when it returns); one that does not filter
    /// delivers everything and the receiver filters.
    fn set_interest(
        &self,
        federation: FederationId,
        topic: Topic,
        regions: Option<glidepath_core::RegionSet>,
    ) -> Result<(), TransportError> {
        let _ = (federation, topic, regions);
        Ok(())
    }
    /// Tells the backend the dimensions of a federation this endpoint joined (handle,
    /// name, upper bound). A backend that filters on the wire cuts them into cells
    /// (NATS); others ignore them.
    fn set_dimensions(
        &self,
        federation: FederationId,
        dimensions: &[(glidepath_core::DimensionHandle, String, u64)],
    ) -> Result<(), TransportError> {
        let _ = (federation, dimensions);
        Ok(())
    }
    /// Asks the executive and blocks until it answers; its notifications are
    /// published before this returns.
    fn request(&self, request: ExecRequest) -> Result<ExecReply, TransportError>;
    /// Envelopes delivered to this endpoint, in arrival order. A receiver, so a driver
    /// can `select!` over it and its own wake-up channel.
    fn inbox(&self) -> &Receiver<Envelope>;
    /// Drains what this endpoint published, stops receiving and releases the backend's
    /// resources. Idempotent.
    fn close(&self);
    /// Sends whatever this endpoint holds back (a bundle being gathered) and waits
    /// until the backend has it, so it reaches subscribers without waiting for a
    /// timer. The front crate calls it on time advance requests, on an explicit flush
    /// and before closing. A backend that holds nothing back (like `inproc`) does
    /// nothing.
    fn flush(&self) -> Result<(), TransportError> {
        Ok(())
    }
    /// Moves what the backend has ready into the inbox on the calling thread. A thread
    /// that spins on the inbox calls it on every round, so a backend with a thread of
    /// its own between the wire and the inbox (`shm`) can skip that hop, and that
    /// thread can stay off the CPU while someone spins. Others do nothing.
    fn pump(&self) {}
    /// What this endpoint has counted as lost or malformed so far. A backend that
    /// cannot lose or corrupt anything (like `inproc`) reports zeros.
    fn stats(&self) -> EndpointStats {
        EndpointStats::default()
    }
}

/// Counters of what an endpoint could not deliver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EndpointStats {
    /// Envelopes that never arrived, found as gaps in their senders' `seq`.
    pub lost_envelopes: u64,
    /// Messages dropped because they could not be decoded (or came on a subject that
    /// names no topic).
    pub malformed_envelopes: u64,
    /// Times the backend's client reported dropping messages for a slow consumer.
    pub slow_consumer_events: u64,
    /// Messages dropped because they failed authentication: a wrong key, no key,
    /// tampered bytes, or plaintext where the federation requires its key.
    pub rejected_frames: u64,
    /// Publications and subscriptions the messaging server refused because the
    /// connection's permissions do not allow them (NATS `Permissions Violation`).
    pub permission_violations: u64,
    /// Best-effort envelopes (updates and interactions the FOM marks `HLAbestEffort`)
    /// dropped because this endpoint's inbox already held [`BEST_EFFORT_BACKLOG_MAX`]
    /// envelopes: a slow subscriber sheds best-effort data instead of growing without
    /// bound. Reliable envelopes are never dropped this way.
    pub best_effort_dropped: u64,
    /// Envelopes that arrived twice (a retransmission that crossed the original) and
    /// were dropped the second time.
    pub duplicates_dropped: u64,
    /// Envelopes this endpoint sent again because a receiver missed them.
    pub retransmitted: u64,
    /// Receivers this endpoint stopped waiting for because they stayed silent while
    /// data waited for them (a crashed process, a cut network).
    pub receivers_given_up: u64,
    /// Notices this endpoint sent receivers that lacked envelopes it no longer kept
    /// (every receiver it knew of had them; the receiver learnt of it late): the
    /// receiver counts them lost instead of waiting (NATS reliable delivery).
    pub gone_notices: u64,
    /// With JetStream persistence: times this endpoint restarted a stream consumer
    /// that had gone silent while messages waited in the stream (restarts after a
    /// reconnection are not counted).
    pub stream_consumer_restarts: u64,
    /// Messages and bytes this endpoint's connection has read from the messaging
    /// server (NATS: the client's counters, data and control traffic alike), to
    /// compare what reaches a process with and without data distribution
    /// management's filtering. Zero on `inproc`, which has no wire.
    pub wire_in_messages: u64,
    /// The bytes of those messages (payloads, subjects and protocol).
    pub wire_in_bytes: u64,
}

/// Inbox length from which a receiving endpoint drops best-effort envelopes. 65,536
/// envelopes (a few MiB of typical updates): deep enough that a federate keeping up
/// never loses one, small enough that a stalled one stays bounded for such traffic.
pub const BEST_EFFORT_BACKLOG_MAX: usize = 65_536;

/// True for envelopes the sender marked best effort.
pub fn is_best_effort(envelope: &Envelope) -> bool {
    matches!(
        envelope.body,
        glidepath_core::Body::Update {
            transport: glidepath_core::TransportationType::BestEffort,
            ..
        } | glidepath_core::Body::Interaction {
            transport: glidepath_core::TransportationType::BestEffort,
            ..
        }
    )
}

/// Nanoseconds since the UNIX epoch, read from a monotonic clock that is anchored to
/// the system clock once per process, on first use.
///
/// Publication times are stamped with it, and receivers in other processes subtract
/// them from their own reading (latency T_S − T_P). A plain process-local clock would
/// make that difference meaningless across processes (each process would count
/// from its own start); the system clock alone could jump backwards within a run.
/// Anchored, the clock never goes back within a process, and two processes on one
/// host agree to within the change of the system clock's offset between their
/// anchors (microseconds, unless the clock is stepped). Across hosts, stamps compare
/// as well as the hosts' clocks are synchronised (NTP, PTP), as for the ATM
/// memorandum's own T_S − T_P.
///
/// Never returns 0, so a stamped envelope can be told from an unstamped one.
pub fn monotonic_now_ns() -> u64 {
    static ANCHOR: OnceLock<(Instant, u64)> = OnceLock::new();
    let (instant, wall_ns) = *ANCHOR.get_or_init(|| {
        let wall = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX));
        (Instant::now(), wall)
    });
    let ns = u64::try_from(instant.elapsed().as_nanos()).unwrap_or(u64::MAX);
    wall_ns.saturating_add(ns).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Publication stamps are comparable across processes because the clock reads
    /// the system's time (anchored once), not time since this process started.
    #[test]
    fn the_publication_clock_reads_the_system_time_and_never_goes_back() {
        let system = || {
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_nanos() as u64
        };
        let before = system();
        let mut last = monotonic_now_ns();
        let after = system();
        assert!(
            last + 1_000_000_000 > before && last < after + 1_000_000_000,
            "{before} ≤ {last} ≤ {after}, give or take a second"
        );
        for _ in 0..10_000 {
            let now = monotonic_now_ns();
            assert!(now >= last);
            last = now;
        }
    }
}

//! The `nats` backend: federates in many processes and on many hosts, connected by a
//! NATS server (or cluster) through the official async Rust client, `async-nats`.
//!
//! # Who hosts the federation
//!
//! The [`glidepath_core::Executive`] (membership, object names, synchronization
//! points, regulators) lives in one central **executive server** process,
//! [`serve_executive`] (the CLI's `glidepath server`). It answers requests on
//! [`subject::EXEC_SUBJECT`] and publishes each federation's notifications. We chose
//! a server over "hosted by the first federate" because a federation then outlives
//! any member, nobody's resignation moves state, and the server is the single
//! writer of every federation's notification sequence. Data never passes through
//! it: envelopes go straight from publisher to subscribers on the subjects of
//! [`subject`]. Run exactly one executive server per NATS system; a second one
//! refuses to start.
//!
//! # How the contract is met
//!
//! - **One connection per endpoint.** Each [`NatsEndpoint`] has its own NATS
//!   connection, so everything it publishes, on any topic, is one ordered stream at
//!   the server. The connections of one [`NatsTransport`] are driven by a small tokio
//!   runtime the transport owns; the endpoint's methods block the calling thread, so
//!   call them from ordinary threads, never from inside an async task.
//! - **One subscription per federation.** The client hands each subscription its own
//!   channel, which would lose the order between topics. An endpoint therefore
//!   subscribes one wildcard, `glidepath.<federation>.>`, per federation it has any
//!   topic of, and filters locally by the topics it subscribed (point 1, point 3).
//!   The price: a receiver reads every envelope of the federations it is in.
//! - **No self-delivery** by the connection's `no_echo` option (point 2).
//! - **Subscribe is effective on return** (point 3): after the server is asked to
//!   subscribe, the endpoint makes a round trip through it (a request on
//!   [`subject::BARRIER_SUBJECT`]; its "no responders" answer or anyone's reply
//!   proves the server has read everything this connection sent before). Adding a
//!   topic to a federation already subscribed only changes the local filter.
//!   Unsubscribing changes the filter at once and drops the wildcard when a
//!   federation's last topic goes.
//! - **Requests** (point 4) go to [`subject::EXEC_SUBJECT`] with a timeout
//!   ([`NatsOptions::request_timeout`], [`TransportError::Timeout`]). The server
//!   publishes a request's notifications on the same connection *before* its reply,
//!   so the NATS server delivers them first to everyone. The reply names the last
//!   notification (`Glidepath-Notified` header); when the requester itself is
//!   subscribed to that federation, `request` waits until that notification is in its
//!   inbox, as on `inproc`. What differs from `inproc`: (a) a notification reaches
//!   other subscribers asynchronously — before anything published after the reply,
//!   but possibly after the request has returned; (b) that "before" holds through
//!   one NATS server; in a cluster, a notification and a message published after
//!   seeing the reply can take different routes, and NATS orders messages only per
//!   publishing connection.
//! - **Publication time** (point 5) is stamped by the publisher with
//!   [`monotonic_now_ns`]: a monotonic clock anchored to the system clock, so stamps
//!   compare across processes of one host, and across hosts as far as their clocks
//!   are synchronised.
//! - **Close drains** (point 6): `close` makes the same round trip, so everything
//!   published before is at the NATS server and queued to every subscriber, then
//!   stops local delivery, drops the subscriptions and closes the connection.
//!
//! # Loss, and where it can happen
//!
//! Core NATS is at-most-once. A message can be dropped (1) by the receiving client's
//! subscription channel, when full ([`NatsOptions::subscription_capacity`]; the client
//! reports a slow consumer, counted in [`EndpointStats::slow_consumer_events`]); (2) by
//! the NATS server, when a receiving connection falls more than its `max_pending`
//! (64 MiB by default) behind; (3) with a broken connection. Reliable delivery
//! ([`flow`], on by default, [`NatsOptions::window_envelopes`]) repairs all three:
//! every sender numbers its envelopes, every receiver of a federation reads all of
//! them, acknowledges per sender and NACKs holes, and the sender keeps what is not
//! yet acknowledged and retransmits it. A sender may run at most a window ahead of its
//! slowest receiver, and a receiver whose inbox holds [`flow::RELIABLE_BACKLOG_MAX`]
//! envelopes stops reading until its federate catches up, so a slow subscriber slows
//! its senders down (bounded memory in every process) instead of losing data. Only a
//! hole nobody fills within [`flow::GAP_GIVEUP`] (the sender crashed, or a peer that
//! does not speak the protocol) is counted as lost ([`EndpointStats::lost_envelopes`])
//! and skipped; a receiver that stays silent for [`flow::PEER_TIMEOUT`] is given up
//! by its senders ([`EndpointStats::receivers_given_up`]). With the window set to 0,
//! the backend is plain at-most-once core NATS and gaps are only counted.
//!
//! # When the NATS server restarts
//!
//! Every connection reconnects by itself (backing off up to 4 s) and resubscribes;
//! what it publishes meanwhile waits in its client's queue. [`NatsEndpoint::flush`]
//! returns once the endpoint is connected again and the server has everything it
//! sent. A request answered with "no responders" after the executive server had
//! answered (any endpoint of the same transport) before is repeated, backing off, until the request timeout, since the
//! executive server is then most likely reconnecting; it keeps its state in memory.
//! Messages in flight when the server went down are retransmitted once both sides
//! are back (they are kept until acknowledged). With [`Persistence::JetStream`] ([`NatsOptions::persistence`]) nothing acknowledged
//! is lost and a run can be replayed: see [`jetstream`].

mod alive;
mod cell_routes;
pub mod cells;
mod endpoint;
pub mod flow;
mod frames;
pub mod jetstream;
mod process;
mod reader;
mod save_bucket;
pub mod security;
mod server;
mod throttle;
mod transport;

/// The NATS subjects: the wire crate's [`glidepath_wire::subject`], their one home.
pub use glidepath_wire::subject;

use reader::read_federation;
use throttle::warn_throttled;
pub use transport::barrier;
use transport::{connect_client, subscribe_error};

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Duration;

use async_nats::Client;
use crossbeam_channel::{Receiver, Sender};
use glidepath_core::{Envelope, FederateHandle, FederationId, Topic};
use parking_lot::{Condvar, Mutex, RwLock};
use tokio::sync::oneshot;

#[cfg(doc)]
use crate::{monotonic_now_ns, EndpointStats, TransportError};
use frames::{FrameCodec, Outgoing, Refused};
use subject::{federation_wildcard, parse_topic, topic_subject, BARRIER_SUBJECT, EXEC_SUBJECT};

pub use frames::{ClassOverride, MessagingOptions, FRAME_MARKER, SENDER_HEADER};
pub use glidepath_codec::{BundleConfig, ChainConfig, Compression, FederationKey};
pub use jetstream::{
    replay, stream_name, JetStreamOptions, Persistence, Replay, ReplayedEnvelope,
    UnknownPersistence, ORIGIN_HEADER,
};
pub use process::{
    find_nats_server, NatsCluster, NatsServerError, NatsServerProcess, NatsTestbed,
    NatsTestbedError, NATS_SERVER_ENV,
};
pub use save_bucket::{object_name as save_object_name, BucketSaveStore, SAVE_BUCKET};
pub use security::{redact_url, split_url_credentials, NatsAuth, NatsSecurity, NatsTls, Secret};
pub use server::{
    parse_notified, serve_executive, serve_executive_with, ExecutiveServer, FailoverOptions,
    ERROR_HEADER, LEASE_BUCKET, LOG_STREAM, LOG_SUBJECT, NOTIFIED_HEADER, REPUBLISH,
    SNAPSHOT_EVERY,
};

/// Where a NATS server listens when nobody says otherwise (`nats-server`'s default).
pub const DEFAULT_NATS_URL: &str = "nats://127.0.0.1:4222";

/// How the NATS backend behaves. Fields are public; start from [`NatsOptions::default`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NatsOptions {
    /// How long a request to the executive (and a round trip through the NATS server)
    /// may take. Default 10 s: generous, because a loaded CI machine can stall for
    /// seconds, and only a dead server makes anyone wait this long.
    pub request_timeout: Duration,
    /// How long to try to connect to the NATS server. Default 5 s.
    pub connect_timeout: Duration,
    /// Messages the client may hold for one subscription before it drops (a "slow
    /// consumer"). Default 4 Mi: memory is taken only as messages wait, and holding
    /// them in our process is better than the NATS server cutting the connection.
    pub subscription_capacity: usize,
    /// Commands (publications) the client queues before `publish` waits. Default
    /// 64 Ki: deep enough that a burst does not block on the socket, small enough to
    /// bound a fast publisher's memory.
    pub client_capacity: usize,
    /// Worker threads of the runtime driving the connections. Default 2 (the size of
    /// the machines we target); the work per message is small.
    pub runtime_workers: usize,
    /// The encoder chain (compression, federation key) and bundling. Default: plain
    /// envelopes, no compression, no key, no bundling. The executive server needs
    /// the same key as every federate.
    pub messaging: MessagingOptions,
    /// Whether federations' messages are kept in JetStream (see [`Persistence`]).
    /// Default [`Persistence::None`]: core NATS needs no JetStream-enabled server.
    pub persistence: Persistence,
    /// Reliable delivery over core NATS ([`flow`]): how many envelopes a sender may
    /// publish in a federation beyond what its slowest receiver has acknowledged
    /// before `publish` waits. Default 16,384 (16 ms of traffic at a million a
    /// second, several round trips). 0 turns acknowledgements, retransmission and
    /// the window off: core NATS's at-most-once, with gaps only counted.
    pub window_envelopes: usize,
    /// The same window in bytes of kept (unacknowledged) envelopes. Default 16 MiB:
    /// a sender's retransmission buffer never holds more, and a receiver never has
    /// more than this per sender in flight towards it.
    pub window_bytes: usize,
    /// TLS and the credential every connection presents (see [`security`]).
    /// Default: neither.
    pub security: NatsSecurity,
    /// For an executive server: failover (a request log and a lease in JetStream,
    /// so a standby server takes over; see `server/failover.rs`). Default none: one
    /// server, no JetStream needed.
    pub failover: Option<FailoverOptions>,
    /// For an executive server: copies of the JetStream object store bucket of
    /// federation saves ([`SAVE_BUCKET`]) the NATS cluster keeps when the server
    /// creates it (1 on a single server; 3 on a cluster). Default 1.
    pub save_replicas: usize,
    /// Data distribution management on the wire ([`cells`]): how many slices each
    /// axis of a federation's grid is cut into. Updates and interactions sent with
    /// regions travel on the subjects of the cells they cover, and a receiver reads
    /// only the cells its regions cover. Every member of a federation must use the
    /// same grid (a member on another grid still gets everything, through
    /// retransmissions). Default 8; 0 sends everything on the topics' subjects. Used
    /// with reliable delivery over core NATS, without a federation key, bundling or
    /// persistence.
    pub ddm_cells: u32,
    /// The dimensions the grid is cut along, by name (at most
    /// [`cells::GRID_AXES_MAX`]); empty (the default) takes the FOM's first two
    /// dimensions that are not the standard's `HLA…` ones.
    pub ddm_dimensions: Vec<String>,
    /// For an executive server: how long a member's endpoint may be gone (NATS
    /// answers its liveness probe with "no responders") before the server resigns it
    /// as lost, so that a crashed regulator does not hold time back for ever
    /// (`alive`). Default 10 s; `None` never resigns anyone.
    pub lost_after: Option<Duration>,
}

impl Default for NatsOptions {
    fn default() -> Self {
        NatsOptions {
            request_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(5),
            subscription_capacity: 4 << 20,
            client_capacity: 64 << 10,
            runtime_workers: 2,
            messaging: MessagingOptions::default(),
            persistence: Persistence::None,
            window_envelopes: 16 << 10,
            window_bytes: 16 << 20,
            security: NatsSecurity::default(),
            failover: None,
            save_replicas: 1,
            ddm_cells: 8,
            ddm_dimensions: Vec::new(),
            lost_after: Some(Duration::from_secs(10)),
        }
    }
}

/// A tokio runtime that shuts down without blocking, whoever drops it.
struct RuntimeHolder(Option<tokio::runtime::Runtime>);
struct TransportInner {
    url: String,
    options: NatsOptions,
    runtime: RuntimeHolder,
    next_endpoint: AtomicU64,
    /// Whether the executive server has ever answered an endpoint of this transport.
    answered: AtomicBool,
    /// The encoder chain and bundling settings of every endpoint.
    codec: Arc<FrameCodec>,
}
/// The NATS transport: opens endpoints, each with its own connection to one NATS
/// server URL. Cheap to clone; clones share the runtime.
#[derive(Clone)]
pub struct NatsTransport {
    inner: Arc<TransportInner>,
}
/// Loss and error counters of one connection.
#[derive(Default)]
struct Counters {
    lost: AtomicU64,
    malformed: AtomicU64,
    slow_consumer: AtomicU64,
    rejected: AtomicU64,
    best_effort_dropped: AtomicU64,
    duplicates: AtomicU64,
    consumer_restarts: AtomicU64,
    /// Publications and subscriptions the server refused for our permissions.
    permission_denied: AtomicU64,
    /// How many of them a call has already returned as an error.
    permission_reported: AtomicU64,
    /// The server's words about the last one.
    permission_detail: Mutex<String>,
}

impl Counters {
    /// An error for a permission violation the server reported since the last one
    /// returned, if any: NATS reports them asynchronously, so the next publish or
    /// flush of the connection returns it.
    fn take_permission_error(&self) -> Result<(), crate::TransportError> {
        let denied = self
            .permission_denied
            .load(std::sync::atomic::Ordering::Acquire);
        if denied
            > self
                .permission_reported
                .load(std::sync::atomic::Ordering::Acquire)
        {
            self.permission_reported
                .store(denied, std::sync::atomic::Ordering::Release);
            return Err(crate::TransportError::PermissionDenied {
                detail: self.permission_detail.lock().clone(),
            });
        }
        Ok(())
    }
}
/// The highest executive notification `seq` each federation's reader has delivered.
#[derive(Default)]
struct Notified {
    seen: Mutex<HashMap<FederationId, u64>>,
    changed: Condvar,
}
/// One federation's wildcard subscription.
struct FederationSubscription {
    /// Cell subscriptions and what the reader sees of them (`None` with persistence).
    cells: Option<cell_routes::FederationCells>,
    /// The topics subscribed, as the user asked.
    topics: HashSet<Topic>,
    /// The same set, read by the reader task for every message.
    filter: Arc<RwLock<HashSet<Topic>>>,
    stop: Option<oneshot::Sender<()>>,
    /// The reader task (core NATS), which says goodbye to its senders as it ends.
    task: Option<tokio::task::JoinHandle<()>>,
}
struct EndpointState {
    /// Cloned into every reader task; `None` once closed.
    inbox_tx: Option<Sender<Envelope>>,
    federations: HashMap<FederationId, FederationSubscription>,
}
/// An endpoint of the NATS backend: one connection to the NATS server.
pub struct NatsEndpoint {
    client: Client,
    transport: Arc<TransportInner>,
    inbox: Receiver<Envelope>,
    closed: AtomicBool,
    state: Mutex<EndpointState>,
    counters: Arc<Counters>,
    notified: Arc<Notified>,
    /// Bundler, chain and client of the outgoing path (unused when plain).
    outgoing: Arc<Outgoing>,
    /// Stops the bundle timer task, when bundling.
    timer_stop: Mutex<Option<oneshot::Sender<()>>>,
    /// Publishing and receiving through JetStream, with persistence.
    jetstream: Option<Arc<jetstream::JetStreamEndpoint>>,
    /// Reliable delivery over core NATS: what this endpoint keeps for its receivers.
    flow: Option<Arc<flow::Flow>>,
    /// Stops the flow ticker.
    flow_stop: Mutex<Option<oneshot::Sender<()>>>,
    /// This endpoint's name as a receiver (acknowledgements, retransmissions).
    token: u64,
    window: flow::Window,
    /// Data distribution management on the wire: grids, accounts, cell subscriptions.
    cells: cell_routes::Cells,
    /// Answers the executive server's liveness probes for the federates joined here.
    alive: alive::Responders,
}
/// What a federation's reader task needs.
struct Reader {
    federation: FederationId,
    filter: Arc<RwLock<HashSet<Topic>>>,
    inbox: Sender<Envelope>,
    counters: Arc<Counters>,
    notified: Arc<Notified>,
    /// The last `seq` seen from each sender without flow control (the executive's
    /// notifications, or everything when the window is off).
    last_seq: HashMap<FederateHandle, u64>,
    /// Opens frames and bundles.
    codec: Arc<FrameCodec>,
    /// Reliable delivery: per-sender order, acknowledgements, NACKs.
    receiver: Option<flow::Receiver>,
    /// This endpoint's sending side: while it waits for credit, we never stop reading.
    flow: Option<Arc<flow::Flow>>,
    /// The cells this endpoint reads in this federation.
    cell_view: Arc<RwLock<cells::CellView>>,
    /// Cell envelopes held that no account has covered yet.
    arrivals: cells::Arrivals,
}

/// Which subscription a message came through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    /// The federation's wildcard (or its JetStream consumer).
    Federation,
    /// This endpoint's retransmission subject (reliable delivery).
    Retransmission,
    /// A cell subscription: the envelope's topic and cell.
    Cell(Topic, u32),
}

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

pub mod flow;
mod frames;
pub mod jetstream;
mod process;
mod server;
mod throttle;

/// The NATS subjects: the wire crate's [`glidepath_wire::subject`], their one home.
pub use glidepath_wire::subject;

use throttle::warn_throttled;

use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::{Client, ConnectOptions, Event, Message, RequestErrorKind, Subscriber};
use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use futures::StreamExt;
use glidepath_core::{Envelope, ExecReply, ExecRequest, FederateHandle, FederationId, Topic};
use parking_lot::{Condvar, Mutex, RwLock};
use tokio::sync::oneshot;

use crate::{
    is_best_effort, monotonic_now_ns, Endpoint, EndpointStats, Transport, TransportError,
    BEST_EFFORT_BACKLOG_MAX,
};
use frames::{FrameCodec, Outgoing, Refused};
use subject::{federation_wildcard, parse_topic, topic_subject, BARRIER_SUBJECT, EXEC_SUBJECT};

pub use frames::{ClassOverride, MessagingOptions, FRAME_MARKER, SENDER_HEADER};
pub use glidepath_codec::{BundleConfig, ChainConfig, Compression, FederationKey};
pub use jetstream::{
    replay, stream_name, JetStreamOptions, Persistence, Replay, ReplayedEnvelope,
    UnknownPersistence, ORIGIN_HEADER,
};
pub use process::{
    find_nats_server, NatsServerError, NatsServerProcess, NatsTestbed, NatsTestbedError,
    NATS_SERVER_ENV,
};
pub use server::{
    parse_notified, serve_executive, serve_executive_with, ExecutiveServer, ERROR_HEADER,
    NOTIFIED_HEADER,
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
        }
    }
}

/// A tokio runtime that shuts down without blocking, whoever drops it.
struct RuntimeHolder(Option<tokio::runtime::Runtime>);

impl RuntimeHolder {
    fn handle(&self) -> &tokio::runtime::Handle {
        self.0.as_ref().expect("present until dropped").handle()
    }
}

impl Drop for RuntimeHolder {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

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

impl TransportInner {
    /// Runs a future to completion on our runtime from a plain thread.
    fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.handle().block_on(future)
    }
}

/// The NATS transport: opens endpoints, each with its own connection to one NATS
/// server URL. Cheap to clone; clones share the runtime.
#[derive(Clone)]
pub struct NatsTransport {
    inner: Arc<TransportInner>,
}

impl std::fmt::Debug for NatsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsTransport")
            .field("url", &self.inner.url)
            .finish_non_exhaustive()
    }
}

impl NatsTransport {
    /// A transport to the NATS server at `url` (`nats://host:port`) with default
    /// options; fails when the server cannot be reached.
    pub fn connect(url: &str) -> Result<NatsTransport, TransportError> {
        NatsTransport::connect_with(url, NatsOptions::default())
    }

    /// [`NatsTransport::connect`] with options.
    pub fn connect_with(url: &str, options: NatsOptions) -> Result<NatsTransport, TransportError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.runtime_workers.max(1))
            .thread_name("glidepath-nats")
            .enable_all()
            .build()
            .map_err(|e| TransportError::Io {
                what: "the NATS runtime",
                reason: e.to_string(),
            })?;
        let codec = Arc::new(FrameCodec::new(options.messaging.clone())?);
        // The JetStream path seals each envelope with the encoder chain (compression,
        // key) but has no bundler: its acknowledgement window and per-origin counters
        // count single envelopes. Refuse bundling rather than bypass it silently.
        if codec.options().bundling() && options.persistence != Persistence::None {
            return Err(TransportError::InvalidConfiguration(
                "JetStream persistence cannot be combined with bundling (compression and a federation key are fine): set bundle_bytes_max to 0".into(),
            ));
        }
        let inner = Arc::new(TransportInner {
            url: url.to_string(),
            codec,
            options,
            runtime: RuntimeHolder(Some(runtime)),
            next_endpoint: AtomicU64::new(1),
            answered: AtomicBool::new(false),
        });
        // Connect once now, so a wrong URL or a missing server is reported here.
        let probe = inner.block_on(connect_client(
            &inner.url,
            &inner.options,
            "glidepath-probe".into(),
            Arc::new(Counters::default()),
        ))?;
        inner.block_on(async {
            let _ = tokio::time::timeout(inner.options.request_timeout, probe.drain()).await;
        });
        Ok(NatsTransport { inner })
    }

    /// The NATS server URL.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// Opens an endpoint with its concrete type (for its loss counters).
    pub fn open_endpoint(&self) -> Result<NatsEndpoint, TransportError> {
        let inner = &self.inner;
        let id = inner.next_endpoint.fetch_add(1, Ordering::Relaxed);
        let counters = Arc::new(Counters::default());
        let name = format!("glidepath-endpoint-{}-{id}", std::process::id());
        let client = inner.block_on(connect_client(
            &inner.url,
            &inner.options,
            name.clone(),
            counters.clone(),
        ))?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let outgoing = Arc::new(Outgoing::new(inner.codec.clone(), client.clone(), name));
        let window = flow::Window {
            envelopes: inner.options.window_envelopes,
            bytes: inner.options.window_bytes.max(1),
        };
        let flow =
            (window.enabled() && inner.options.persistence == Persistence::None).then(|| {
                flow::Flow::new(
                    window,
                    client.clone(),
                    inner.codec.clone(),
                    inner.runtime.handle().clone(),
                )
            });
        let flow_stop = flow.as_ref().map(|flow| {
            let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
            let flow = flow.clone();
            inner.runtime.handle().spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(20));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        biased;
                        _ = &mut stop_rx => break,
                        _ = tick.tick() => flow.tick().await,
                    }
                }
            });
            stop_tx
        });
        let timer_stop = if inner.codec.options().bundling() {
            let (stop_tx, stop_rx) = oneshot::channel();
            inner
                .runtime
                .handle()
                .spawn(frames::run_timer(outgoing.clone(), stop_rx));
            Some(stop_tx)
        } else {
            None
        };
        Ok(NatsEndpoint {
            jetstream: jetstream::JetStreamEndpoint::new(
                &client,
                inner.runtime.handle(),
                &inner.options,
            ),
            outgoing,
            timer_stop: Mutex::new(timer_stop),
            client,
            transport: inner.clone(),
            inbox: rx,
            closed: AtomicBool::new(false),
            state: Mutex::new(EndpointState {
                inbox_tx: Some(tx),
                federations: HashMap::new(),
            }),
            counters,
            notified: Arc::new(Notified::default()),
            flow,
            flow_stop: Mutex::new(flow_stop),
            token: flow::new_token(),
            window,
        })
    }
}

impl Transport for NatsTransport {
    fn open(&self) -> Result<Box<dyn Endpoint>, TransportError> {
        Ok(Box::new(self.open_endpoint()?))
    }

    fn name(&self) -> &'static str {
        "nats"
    }
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
}

/// Opens one connection with our options; `counters` hears of slow-consumer drops.
async fn connect_client(
    url: &str,
    options: &NatsOptions,
    name: String,
    counters: Arc<Counters>,
) -> Result<Client, TransportError> {
    let conn_name = name.clone();
    ConnectOptions::new()
        .no_echo()
        .name(name)
        .subscription_capacity(options.subscription_capacity)
        .client_capacity(options.client_capacity)
        .connection_timeout(options.connect_timeout)
        .request_timeout(Some(options.request_timeout))
        .event_callback(move |event| {
            let counters = counters.clone();
            let conn_name = conn_name.clone();
            async move {
                match event {
                    Event::SlowConsumer(sid) => {
                        counters.slow_consumer.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(connection = %conn_name, sid, "NATS client dropped messages: slow consumer");
                    }
                    Event::Disconnected => {
                        tracing::warn!(connection = %conn_name, "disconnected from the NATS server; reconnecting")
                    }
                    Event::Connected => {
                        tracing::debug!(connection = %conn_name, "connected to the NATS server")
                    }
                    Event::ServerError(e) => {
                        tracing::warn!(connection = %conn_name, error = %e, "NATS server error")
                    }
                    Event::ClientError(e) => {
                        tracing::warn!(connection = %conn_name, error = %e, "NATS client error")
                    }
                    other => tracing::debug!(connection = %conn_name, event = %other, "NATS event"),
                }
            }
        })
        .connect(url)
        .await
        .map_err(|e| {
            TransportError::ConnectFailed {
                url: url.to_string(),
                reason: e.to_string(),
            }
        })
}

/// The [`TransportError`] of a failed subscription.
fn subscribe_error(e: async_nats::SubscribeError) -> TransportError {
    TransportError::ConnectionFailed {
        operation: "subscribe",
        reason: e.to_string(),
    }
}

/// A round trip through the NATS server: when it returns `Ok`, the server has read
/// everything this client sent before it.
async fn barrier(client: &Client, timeout: Duration) -> Result<(), TransportError> {
    match client.request(BARRIER_SUBJECT, Bytes::new()).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == RequestErrorKind::NoResponders => Ok(()),
        Err(e) if e.kind() == RequestErrorKind::TimedOut => Err(TransportError::Timeout(timeout)),
        Err(e) => Err(TransportError::ConnectionFailed {
            operation: "round trip through the NATS server",
            reason: e.to_string(),
        }),
    }
}

/// The highest executive notification `seq` each federation's reader has delivered.
#[derive(Default)]
struct Notified {
    seen: Mutex<HashMap<FederationId, u64>>,
    changed: Condvar,
}

impl Notified {
    fn record(&self, federation: FederationId, seq: u64) {
        let mut seen = self.seen.lock();
        let entry = seen.entry(federation).or_insert(0);
        if seq > *entry {
            *entry = seq;
            self.changed.notify_all();
        }
    }

    /// Waits until notification `seq` of `federation` was delivered; false on timeout.
    fn wait(&self, federation: FederationId, seq: u64, deadline: Instant) -> bool {
        let mut seen = self.seen.lock();
        while seen.get(&federation).copied().unwrap_or(0) < seq {
            if self.changed.wait_until(&mut seen, deadline).timed_out() {
                return seen.get(&federation).copied().unwrap_or(0) >= seq;
            }
        }
        true
    }
}

/// One federation's wildcard subscription.
struct FederationSubscription {
    /// The topics subscribed, as the user asked.
    topics: HashSet<Topic>,
    /// The same set, read by the reader task for every message.
    filter: Arc<RwLock<HashSet<Topic>>>,
    stop: Option<oneshot::Sender<()>>,
    /// The reader task (core NATS), which says goodbye to its senders as it ends.
    task: Option<tokio::task::JoinHandle<()>>,
}

impl FederationSubscription {
    /// Stops delivery at once; the reader task ends and drops the NATS subscription.
    fn stop(&mut self) {
        self.filter.write().clear();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Stops, then waits (a little) for the reader task to have said goodbye.
    async fn stop_and_wait(&mut self) {
        self.stop();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
    }
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
}

impl NatsEndpoint {
    fn check_open(&self) -> Result<(), TransportError> {
        if self.closed.load(Ordering::Acquire) {
            Err(TransportError::Closed)
        } else {
            Ok(())
        }
    }

    /// Envelopes that never arrived, found as gaps in their senders' `seq`.
    pub fn lost_envelopes(&self) -> u64 {
        self.counters.lost.load(Ordering::Relaxed)
    }

    /// Sends the bundle being gathered, if any, then waits until the NATS server has
    /// read everything this endpoint sent before (publications and subscriptions);
    /// while the client is reconnecting, that includes reconnecting and
    /// resubscribing. Fails with [`TransportError::Timeout`] after
    /// [`NatsOptions::request_timeout`].
    pub fn flush(&self) -> Result<(), TransportError> {
        self.check_open()?;
        let timeout = self.transport.options.request_timeout;
        self.transport.block_on(async {
            self.outgoing.flush().await?;
            barrier(&self.client, timeout).await
        })
    }

    /// With persistence, the most JetStream publications that ever waited for their
    /// acknowledgement at once (never above [`JetStreamOptions::acks_outstanding_max`]).
    pub fn jetstream_acks_outstanding_max(&self) -> Option<usize> {
        self.jetstream.as_ref().map(|js| js.outstanding_max())
    }

    /// The most envelopes this endpoint ever had published but not yet acknowledged
    /// by its slowest receiver in one federation (never above
    /// [`NatsOptions::window_envelopes`]); 0 without flow control.
    pub fn unacknowledged_max(&self) -> u64 {
        self.flow
            .as_ref()
            .map_or(0, |f| f.unacked_max.load(Ordering::Relaxed))
    }

    /// How many times a publication waited for a receiver to acknowledge.
    pub fn credit_waits(&self) -> u64 {
        self.flow
            .as_ref()
            .map_or(0, |f| f.credit_waits.load(Ordering::Relaxed))
    }

    /// Messages this endpoint dropped because they failed authentication.
    pub fn rejected_frames(&self) -> u64 {
        self.counters.rejected.load(Ordering::Relaxed)
    }

    /// Sends a request to the executive. "No responders" after the executive server
    /// has answered any endpoint of this transport means the executive server is reconnecting (after a NATS server restart,
    /// say): then the request is repeated, backing off, until the request timeout.
    async fn exec_request(&self, payload: Bytes) -> Result<Message, async_nats::RequestError> {
        let deadline = tokio::time::Instant::now() + self.transport.options.request_timeout;
        let mut backoff = Duration::from_millis(5);
        loop {
            let sent = match self.outgoing.sender_headers(&payload) {
                None => self.client.request(EXEC_SUBJECT, payload.clone()).await,
                Some(headers) => {
                    self.client
                        .request_with_headers(EXEC_SUBJECT, headers, payload.clone())
                        .await
                }
            };
            match sent {
                Err(e)
                    if e.kind() == RequestErrorKind::NoResponders
                        && self.transport.answered.load(Ordering::Relaxed)
                        && tokio::time::Instant::now() + backoff < deadline =>
                {
                    tracing::debug!("no executive server answers yet; asking again in {backoff:?}");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                }
                Ok(message) => {
                    self.transport.answered.store(true, Ordering::Relaxed);
                    return Ok(message);
                }
                other => return other,
            }
        }
    }

    fn request_error(&self, e: async_nats::RequestError) -> TransportError {
        let options = &self.transport.options;
        match e.kind() {
            RequestErrorKind::TimedOut => TransportError::Timeout(options.request_timeout),
            RequestErrorKind::NoResponders => TransportError::NoExecutive {
                url: self.transport.url.clone(),
                subject: EXEC_SUBJECT.to_string(),
            },
            RequestErrorKind::MaxPayloadExceeded => TransportError::PayloadTooLarge {
                what: "request",
                max_payload_bytes: self.client.server_info().max_payload,
            },
            _ => TransportError::ConnectionFailed {
                operation: "request to the executive",
                reason: e.to_string(),
            },
        }
    }
}

impl Endpoint for NatsEndpoint {
    fn publish(
        &self,
        federation: FederationId,
        topic: Topic,
        mut envelope: Envelope,
    ) -> Result<(), TransportError> {
        self.check_open()?;
        if envelope.publish_time_ns == 0 {
            envelope.publish_time_ns = monotonic_now_ns();
        }
        let payload = glidepath_wire::encode_envelope(&envelope);
        let subject = topic_subject(federation, topic);
        if let Some(js) = &self.jetstream {
            // The same payload as core NATS carries: a plain envelope, or a frame of
            // the encoder chain (never a bundle: refused with persistence).
            let payload = self.transport.codec.seal(Some(topic), payload)?;
            return self.transport.block_on(js.publish(subject, payload));
        }
        if let Some(flow) = &self.flow {
            if envelope.sender != FederateHandle::EXECUTIVE {
                flow.admit(federation, &envelope, topic, &payload)?;
            }
        }
        if !self.transport.codec.plain() {
            // Bundling and the chain; a plain executor as below, for the same reason.
            return futures::executor::block_on(self.outgoing.publish(subject, topic, payload));
        }
        // Publishing only queues a command for the connection task, which needs no
        // runtime context: a plain executor polls it, and waits (parked) only when
        // the client's queue is full. Cheaper than entering the runtime each time.
        futures::executor::block_on(self.client.publish(subject, payload))
            .map_err(|e| frames::publish_error(&self.client, &e))
    }

    fn subscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        let mut state = self.state.lock();
        let Some(inbox) = state.inbox_tx.clone() else {
            return Err(TransportError::Closed);
        };
        if let Some(sub) = state.federations.get_mut(&federation) {
            if sub.topics.insert(topic) {
                sub.filter.write().insert(topic);
            }
            return Ok(());
        }
        if let Some(js) = &self.jetstream {
            let sub = jetstream::subscribe(self, js, federation, topic, inbox)?;
            state.federations.insert(federation, sub);
            return Ok(());
        }
        let transport = &self.transport;
        let subscriber = transport
            .block_on(self.client.subscribe(federation_wildcard(federation)))
            .map_err(subscribe_error)?;
        let filter = Arc::new(RwLock::new(HashSet::from([topic])));
        let (stop_tx, stop_rx) = oneshot::channel();
        let receiver = self.window.enabled().then(|| {
            flow::Receiver::new(
                federation,
                self.token,
                self.window,
                self.client.clone(),
                transport.codec.clone(),
            )
        });
        let retransmissions = match &receiver {
            Some(r) => Some(
                transport
                    .block_on(self.client.subscribe(r.retx_subject()))
                    .map_err(subscribe_error)?,
            ),
            None => None,
        };
        let task = transport.runtime.handle().spawn(read_federation(
            Reader {
                federation,
                filter: filter.clone(),
                inbox,
                counters: self.counters.clone(),
                notified: self.notified.clone(),
                last_seq: HashMap::new(),
                codec: transport.codec.clone(),
                receiver,
                flow: self.flow.clone(),
            },
            subscriber,
            retransmissions,
            stop_rx,
        ));
        let mut sub = FederationSubscription {
            topics: HashSet::from([topic]),
            filter,
            stop: Some(stop_tx),
            task: Some(task),
        };
        if let Err(e) = transport.block_on(barrier(&self.client, transport.options.request_timeout))
        {
            sub.stop();
            return Err(e);
        }
        state.federations.insert(federation, sub);
        Ok(())
    }

    fn unsubscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        let mut state = self.state.lock();
        if state.inbox_tx.is_none() {
            return Err(TransportError::Closed);
        }
        let Some(sub) = state.federations.get_mut(&federation) else {
            return Ok(());
        };
        if sub.topics.remove(&topic) {
            sub.filter.write().remove(&topic);
            if sub.topics.is_empty() {
                if let Some(mut sub) = state.federations.remove(&federation) {
                    sub.stop();
                }
            }
        }
        Ok(())
    }

    fn request(&self, request: ExecRequest) -> Result<ExecReply, TransportError> {
        self.check_open()?;
        let payload = self
            .transport
            .codec
            .seal(None, Bytes::from(glidepath_wire::encode_request(&request)))?;
        let message: Message = self
            .transport
            .block_on(self.exec_request(payload))
            .map_err(|e| self.request_error(e))?;
        let header = |name: &str| {
            message
                .headers
                .as_ref()
                .and_then(|h| h.get(name))
                .map(|v| v.as_str().to_string())
        };
        if let Some(error) = header(ERROR_HEADER) {
            return Err(TransportError::ExecutiveFailed { message: error });
        }
        let body = self.transport.codec.open(&message.payload).map_err(|e| {
            TransportError::UnexpectedReply {
                what: "unreadable",
                reason: e.to_string(),
            }
        })?;
        let reply =
            glidepath_wire::decode_reply(&body).map_err(|e| TransportError::UnexpectedReply {
                what: "undecodable",
                reason: e.to_string(),
            })?;
        if let Some((federation, seq)) = header(NOTIFIED_HEADER).as_deref().and_then(parse_notified)
        {
            // As on inproc: the notifications this request caused are in our inbox
            // before the reply returns, if we listen to that federation at all.
            if self.state.lock().federations.contains_key(&federation) {
                let deadline = Instant::now() + self.transport.options.request_timeout;
                if !self.notified.wait(federation, seq, deadline) {
                    tracing::warn!(
                        federation = federation.0,
                        seq,
                        "executive notification did not arrive before the reply; counted as lost"
                    );
                }
            }
        }
        Ok(reply)
    }

    fn inbox(&self) -> &Receiver<Envelope> {
        &self.inbox
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let mut state = self.state.lock();
        if state.inbox_tx.take().is_none() {
            return;
        }
        let transport = self.transport.clone();
        let client = self.client.clone();
        let timeout = transport.options.request_timeout;
        let mut federations: Vec<FederationSubscription> =
            state.federations.drain().map(|(_, s)| s).collect();
        let outgoing = self.outgoing.clone();
        let timer_stop = self.timer_stop.lock().take();
        let jetstream = self.jetstream.clone();
        let flow = self.flow.clone();
        let flow_stop = self.flow_stop.lock().take();
        let finish = async move {
            // With persistence: until the stream has acknowledged everything.
            if let Some(js) = &jetstream {
                js.drain().await;
            }
            // The bundle being gathered goes first; nothing new can join it (closed).
            if let Err(e) = outgoing.flush().await {
                tracing::warn!(error = %e, "closing a NATS endpoint: could not send the last bundle");
            }
            if let Some(stop) = timer_stop {
                let _ = stop.send(());
            }
            // Everything published before is at the server once the round trip is back.
            if let Err(e) = barrier(&client, timeout).await {
                tracing::warn!(error = %e, "closing a NATS endpoint: could not confirm that the server has everything it published");
            }
            // Reliable over core NATS: until every receiver has acknowledged everything
            // (retransmitting meanwhile), or the request timeout.
            if let Some(flow) = &flow {
                let deadline = tokio::time::Instant::now() + timeout;
                while !flow.all_acknowledged() {
                    if tokio::time::Instant::now() >= deadline {
                        tracing::warn!("closing a NATS endpoint: receivers did not acknowledge everything within {timeout:?}");
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                flow.close();
            }
            if let Some(stop) = flow_stop {
                let _ = stop.send(());
            }
            for sub in &mut federations {
                sub.stop_and_wait().await;
            }
            let _ = tokio::time::timeout(timeout, client.drain()).await;
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            // Dropped inside some async task: cannot block here, so finish in the background.
            transport.runtime.handle().spawn(finish);
        } else {
            transport.block_on(finish);
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            lost_envelopes: self.counters.lost.load(Ordering::Relaxed),
            malformed_envelopes: self.counters.malformed.load(Ordering::Relaxed)
                + self
                    .flow
                    .as_ref()
                    .map_or(0, |f| f.malformed_controls.load(Ordering::Relaxed)),
            slow_consumer_events: self.counters.slow_consumer.load(Ordering::Relaxed),
            rejected_frames: self.counters.rejected.load(Ordering::Relaxed),
            best_effort_dropped: self.counters.best_effort_dropped.load(Ordering::Relaxed),
            duplicates_dropped: self.counters.duplicates.load(Ordering::Relaxed),
            retransmitted: self
                .flow
                .as_ref()
                .map_or(0, |f| f.retransmitted.load(Ordering::Relaxed)),
            receivers_given_up: self
                .flow
                .as_ref()
                .map_or(0, |f| f.peers_given_up.load(Ordering::Relaxed)),
            stream_consumer_restarts: self.counters.consumer_restarts.load(Ordering::Relaxed),
        }
    }

    /// Hands the bundle being gathered to the client, without the round trip through
    /// the server that [`NatsEndpoint::flush`] makes: the front crate calls this on
    /// every time advance request, where a round trip would only add latency (the
    /// client sends what it holds on its own).
    fn flush(&self) -> Result<(), TransportError> {
        self.check_open()?;
        self.transport.block_on(self.outgoing.flush())
    }
}

impl Drop for NatsEndpoint {
    fn drop(&mut self) {
        self.close();
    }
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
}

/// Which subscription a message came through.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Via {
    /// The federation's wildcard (or its JetStream consumer).
    Federation,
    /// This endpoint's retransmission subject (reliable delivery).
    Retransmission,
}

impl Reader {
    /// Takes one message from the federation's wildcard or from this endpoint's
    /// retransmission subject.
    fn handle(&mut self, message: Message, via: Via) {
        let topic = match &self.receiver {
            Some(receiver) if via == Via::Retransmission => receiver.retransmitted_topic(&message),
            _ => parse_topic(self.federation, &message.subject),
        };
        let Some(topic) = topic else {
            let total = self.counters.malformed.fetch_add(1, Ordering::Relaxed) + 1;
            warn_throttled!(subject = %message.subject, total, "dropped a message on a subject that is no glidepath topic");
            return;
        };
        let payload = message.payload;
        // Plain envelopes, the common case without a key, skip the frame machinery.
        if !self.codec.keyed() && payload.first() == Some(&glidepath_wire::MAGIC) {
            self.handle_envelope(topic, &message.subject, payload, via);
            return;
        }
        let envelopes = match self.codec.open(&payload).and_then(FrameCodec::split) {
            Ok(envelopes) => envelopes,
            Err(refused) => {
                let counter = match refused {
                    Refused::Rejected(_) => &self.counters.rejected,
                    Refused::Malformed(_) => &self.counters.malformed,
                };
                let total = counter.fetch_add(1, Ordering::Relaxed) + 1;
                warn_throttled!(subject = %message.subject, sender = frames::sender_of(message.headers.as_ref()), error = %refused, bytes = payload.len(), total, "dropped a message that failed authentication or decoding");
                return;
            }
        };
        for envelope in envelopes {
            self.handle_envelope(topic, &message.subject, envelope, via);
        }
    }

    fn handle_envelope(&mut self, topic: Topic, subject: &str, payload: Bytes, via: Via) {
        // Envelopes of topics we do not want are read only as far as the header,
        // which is enough to check their sender's sequence.
        let wanted = self.filter.read().contains(&topic);
        let bytes = payload.len();
        let decoded = if wanted {
            glidepath_wire::decode_envelope_bytes(payload.clone())
                .map(|e| (e.sender, e.seq, Some(e)))
        } else {
            glidepath_wire::decode_header(&payload).map(|h| (h.sender, h.seq, None))
        };
        let (sender, seq, envelope) = match decoded {
            Ok(d) => d,
            Err(error) => {
                let total = self.counters.malformed.fetch_add(1, Ordering::Relaxed) + 1;
                warn_throttled!(subject, %error, bytes, total, "dropped an undecodable envelope");
                return;
            }
        };
        if sender != FederateHandle::EXECUTIVE {
            if let Some(receiver) = &mut self.receiver {
                let (inbox, counters) = (&self.inbox, &*self.counters);
                let mut deliver = |e: Envelope| deliver_to(inbox, counters, e);
                let arrival = flow::Arrival {
                    sender,
                    seq,
                    bytes,
                    retransmitted: via == Via::Retransmission,
                };
                match receiver.admit(arrival, envelope, &counters.lost, &mut deliver) {
                    flow::Admission::Accepted => {}
                    flow::Admission::Duplicate => {
                        counters.duplicates.fetch_add(1, Ordering::Relaxed);
                    }
                }
                return;
            }
        }
        match self.last_seq.entry(sender) {
            Entry::Vacant(v) => {
                v.insert(seq);
            }
            Entry::Occupied(mut o) => {
                let last = *o.get();
                if seq > last + 1 {
                    let total = self
                        .counters
                        .lost
                        .fetch_add(seq - last - 1, Ordering::Relaxed)
                        + (seq - last - 1);
                    warn_throttled!(federation = self.federation.0, %sender, seq, last, lost = seq - last - 1, total, "envelopes lost in transit");
                }
                if seq > last {
                    o.insert(seq);
                }
            }
        }
        if let Some(envelope) = envelope {
            self.deliver(envelope);
        }
        if sender == FederateHandle::EXECUTIVE {
            self.notified.record(self.federation, seq);
        }
    }

    fn deliver(&self, envelope: Envelope) {
        deliver_to(&self.inbox, &self.counters, envelope);
    }

    /// Whether to stop reading for now: the inbox holds a reliable backlog and this
    /// endpoint is not itself waiting for credit (see [`flow`], "Why no deadlock").
    fn stalled(&self) -> bool {
        self.receiver.is_some()
            && self.inbox.len() >= flow::RELIABLE_BACKLOG_MAX
            && !self.flow.as_ref().is_some_and(|f| f.waiting())
    }

    fn tick(&mut self) {
        let Some(receiver) = &mut self.receiver else {
            return;
        };
        let (inbox, counters) = (&self.inbox, &*self.counters);
        receiver.tick(&counters.lost, &mut |e: Envelope| {
            deliver_to(inbox, counters, e)
        });
    }
}

/// Into the inbox, unless it is best effort and the inbox is already long.
fn deliver_to(inbox: &Sender<Envelope>, counters: &Counters, envelope: Envelope) {
    if is_best_effort(&envelope) && inbox.len() >= BEST_EFFORT_BACKLOG_MAX {
        // A slow subscriber sheds best-effort data; its seq was accounted for, so
        // this is not reported as loss in transit.
        counters.best_effort_dropped.fetch_add(1, Ordering::Relaxed);
        return;
    }
    // The receiver is gone only when the endpoint is closing.
    let _ = inbox.send(envelope);
}

/// The next message of an optional subscription; pending forever without one.
async fn next_of(subscriber: &mut Option<Subscriber>) -> Option<Message> {
    match subscriber {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}

/// Moves one federation's messages from the client into the endpoint's inbox until
/// stopped; dropping the subscriber at the end unsubscribes at the server. With flow
/// control it also acknowledges on a timer, and stops reading while the inbox is full.
async fn read_federation(
    mut reader: Reader,
    mut subscriber: Subscriber,
    mut retransmissions: Option<Subscriber>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut tick = tokio::time::interval(flow::ACK_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let stalled = reader.stalled();
        if let Some(receiver) = &mut reader.receiver {
            receiver.busy = stalled;
        }
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = tick.tick(), if reader.receiver.is_some() => reader.tick(),
            // Retransmissions first: they fill gaps that hold newer envelopes back.
            Some(m) = next_of(&mut retransmissions), if !stalled => reader.handle(m, Via::Retransmission),
            message = subscriber.next(), if !stalled => match message {
                Some(m) => reader.handle(m, Via::Federation),
                None => break,
            },
            _ = tokio::time::sleep(Duration::from_millis(1)), if stalled => {}
        }
        if let Some(receiver) = &mut reader.receiver {
            receiver.send().await;
        }
    }
    if let Some(receiver) = &mut reader.receiver {
        receiver.goodbye();
        receiver.send().await;
    }
}

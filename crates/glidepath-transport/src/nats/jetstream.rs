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

use std::collections::{HashMap, HashSet, VecDeque};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::connection::State;
use async_nats::jetstream::consumer::{pull::OrderedConfig, DeliverPolicy};
use async_nats::jetstream::context::{PublishAckFuture, PublishErrorKind};
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::stream::{Config as StreamConfig, DiscardPolicy, StorageType};
use async_nats::jetstream::Context;
use async_nats::{Client, HeaderMap, Message};
use bytes::Bytes;
use futures::StreamExt;
use glidepath_core::{Envelope, FederationId, Topic};
use tokio::sync::oneshot;

use super::frames::FrameCodec;
use super::subject::{federation_wildcard, parse_topic};
use super::throttle::warn_throttled;
use super::{
    connect_client, Counters, FederationSubscription, NatsEndpoint, NatsOptions, Reader, Via,
};
use crate::TransportError;
use parking_lot::RwLock;

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
}

impl Default for JetStreamOptions {
    fn default() -> Self {
        JetStreamOptions {
            stream_bytes_max: 0,
            stream_age_max: Duration::ZERO,
            acks_outstanding_max: 4096,
            inbox_backlog_max: 64 << 10,
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
        ..Default::default()
    }
}

// ----- executive server side ------------------------------------------------------------

/// Creates the streams of the federations the executive server creates.
pub(super) struct StreamHost {
    context: Context,
    options: JetStreamOptions,
    /// The highest federation id that already has a stream on the server.
    kept_through: u64,
}

impl StreamHost {
    /// `None` without persistence; fails when the NATS server has no JetStream.
    pub(super) async fn start(
        client: &Client,
        persistence: &Persistence,
    ) -> Result<Option<StreamHost>, TransportError> {
        let Persistence::JetStream(options) = persistence else {
            return Ok(None);
        };
        let context = async_nats::jetstream::new(client.clone());
        context
            .query_account()
            .await
            .map_err(|e| TransportError::PersistenceUnavailable {
                reason: e.to_string(),
            })?;
        // Streams outlive their executive (for replay) and are named by federation
        // id, which every executive counts from 1: a new federation must not get
        // the id, and so the full stream and the subjects, of an earlier one.
        let mut kept_through = 0;
        let mut names = context.stream_names();
        while let Some(name) = names.next().await {
            let name = name.map_err(|e| TransportError::PersistenceFailed {
                operation: "listing the JetStream streams".into(),
                reason: e.to_string(),
            })?;
            if let Some(id) = name
                .strip_prefix("GLIDEPATH_")
                .and_then(|id| id.parse::<u64>().ok())
            {
                kept_through = kept_through.max(id);
            }
        }
        Ok(Some(StreamHost {
            context,
            options: *options,
            kept_through,
        }))
    }

    /// The highest federation id that had a stream when the host started (0 for none).
    pub(super) fn kept_through(&self) -> u64 {
        self.kept_through
    }

    /// Creates the stream of a new federation (keeps an existing one).
    pub(super) async fn ensure_stream(
        &self,
        federation: FederationId,
    ) -> Result<(), TransportError> {
        self.context
            .get_or_create_stream(stream_config(federation, &self.options))
            .await
            .map(|_| ())
            .map_err(|e| TransportError::PersistenceFailed {
                operation: format!(
                    "creating the JetStream stream `{}`",
                    stream_name(federation)
                ),
                reason: e.to_string(),
            })
    }
}

// ----- endpoint side --------------------------------------------------------------------

/// A message published and not yet acknowledged.
struct Pending {
    subject: String,
    payload: Bytes,
    counter: u64,
    ack: Option<PublishAckFuture>,
}

#[derive(Default)]
struct Window {
    next_counter: u64,
    outstanding: VecDeque<Pending>,
}

/// An endpoint's JetStream half: publishes with acknowledgements, receives through
/// ordered consumers.
pub(super) struct JetStreamEndpoint {
    context: Context,
    origin: String,
    options: JetStreamOptions,
    timeout: Duration,
    window: tokio::sync::Mutex<Window>,
    outstanding_max: AtomicUsize,
    retransmitted: AtomicU64,
}

impl JetStreamEndpoint {
    /// The JetStream half of an endpoint on `client`, or `None` without persistence.
    pub(super) fn new(
        client: &Client,
        runtime: &tokio::runtime::Handle,
        options: &NatsOptions,
    ) -> Option<Arc<JetStreamEndpoint>> {
        let Persistence::JetStream(js) = options.persistence else {
            return None;
        };
        // The context spawns its acknowledgement task on the current runtime.
        let _runtime = runtime.enter();
        let origin = client
            .new_inbox()
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_string();
        // A lost acknowledgement (the server restarted) costs ACK_TIMEOUT before the
        // endpoint publishes again; a late one costs only a dropped duplicate. The
        // acknowledgements of messages published again are abandoned, and each holds
        // one of the client's in-flight permits until it arrives or times out: room
        // for several rounds of that beyond our own window.
        let context = async_nats::jetstream::ContextBuilder::new()
            .timeout(ACK_TIMEOUT)
            .ack_timeout(ACK_TIMEOUT)
            .max_ack_inflight(js.acks_outstanding_max.max(1).saturating_mul(8))
            .build(client.clone());
        Some(Arc::new(JetStreamEndpoint {
            context,
            origin,
            options: js,
            timeout: options.request_timeout,
            window: tokio::sync::Mutex::new(Window::default()),
            outstanding_max: AtomicUsize::new(0),
            retransmitted: AtomicU64::new(0),
        }))
    }

    /// The most messages that were ever waiting for their acknowledgement at once;
    /// never more than [`JetStreamOptions::acks_outstanding_max`].
    pub(super) fn outstanding_max(&self) -> usize {
        self.outstanding_max.load(Ordering::Relaxed)
    }

    async fn send(
        &self,
        subject: &str,
        payload: &Bytes,
        counter: u64,
    ) -> Result<PublishAckFuture, TransportError> {
        let message = PublishMessage::build()
            .payload(payload.clone())
            .header(ORIGIN_HEADER, format!("{} {counter}", self.origin));
        self.context
            .send_publish(subject.to_string(), message)
            .await
            .map_err(|e| TransportError::PersistenceFailed {
                operation: "JetStream publish".into(),
                reason: e.to_string(),
            })
    }

    /// Publishes one message (waiting for the oldest acknowledgement when the window is full).
    pub(super) async fn publish(
        &self,
        subject: String,
        payload: Bytes,
    ) -> Result<(), TransportError> {
        let mut window = self.window.lock().await;
        let bound = self.options.acks_outstanding_max.max(1);
        while window.outstanding.len() >= bound {
            self.settle_oldest(&mut window).await?;
        }
        let counter = window.next_counter + 1;
        let ack = self.send(&subject, &payload, counter).await?;
        window.next_counter = counter;
        window.outstanding.push_back(Pending {
            subject,
            payload,
            counter,
            ack: Some(ack),
        });
        self.outstanding_max
            .fetch_max(window.outstanding.len(), Ordering::Relaxed);
        Ok(())
    }

    /// Waits for the oldest message's acknowledgement; when it fails, publishes every
    /// waiting message again, in order, until acknowledged or the timeout passes.
    async fn settle_oldest(&self, window: &mut Window) -> Result<(), TransportError> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut backoff = Duration::from_millis(10);
        loop {
            let Some(front) = window.outstanding.front_mut() else {
                return Ok(());
            };
            let error = match front.ack.take() {
                Some(ack) => match ack.await {
                    Ok(_) => {
                        window.outstanding.pop_front();
                        return Ok(());
                    }
                    Err(e) => e,
                },
                None => async_nats::jetstream::context::PublishError::new(PublishErrorKind::Other),
            };
            if tokio::time::Instant::now() + backoff >= deadline {
                return Err(TransportError::Timeout(self.timeout));
            }
            tracing::debug!(error = %error, waiting = window.outstanding.len(), "JetStream publish not acknowledged; publishing again");
            if !matches!(error.kind(), PublishErrorKind::TimedOut) {
                // A fast refusal (no stream yet after a restart, stream full): do not spin.
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
            for pending in window.outstanding.iter_mut() {
                // Dropping an old acknowledgement future is harmless.
                pending.ack = None;
            }
            for i in 0..window.outstanding.len() {
                let (subject, payload, counter) = {
                    let p = &window.outstanding[i];
                    (p.subject.clone(), p.payload.clone(), p.counter)
                };
                match self.send(&subject, &payload, counter).await {
                    Ok(ack) => window.outstanding[i].ack = Some(ack),
                    Err(e) => {
                        tracing::debug!(error = %e, "could not publish again");
                        break;
                    }
                }
                self.retransmitted.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Waits until every message published is acknowledged (bounded by the timeout);
    /// what is left is logged as lost.
    pub(super) async fn drain(&self) {
        let mut window = self.window.lock().await;
        while !window.outstanding.is_empty() {
            if let Err(e) = self.settle_oldest(&mut window).await {
                tracing::warn!(error = %e, lost = window.outstanding.len(), "closing: JetStream did not acknowledge every message");
                return;
            }
        }
    }

    /// Starts receiving a federation's stream from its end into `reader`.
    async fn start_reading(
        &self,
        runtime: &tokio::runtime::Handle,
        federation: FederationId,
        reader: Reader,
        stop: oneshot::Receiver<()>,
    ) -> Result<(), TransportError> {
        let stream = self
            .context
            .get_stream(stream_name(federation))
            .await
            .map_err(|e| TransportError::StreamNotFound {
                stream: stream_name(federation),
                reason: e.to_string(),
            })?;
        let start = stream.cached_info().state.last_sequence + 1;
        let messages = ordered_messages(&stream, federation, start).await?;
        runtime.spawn(read_stream(
            StreamReader {
                reader,
                client: self.context.client(),
                stream,
                federation,
                next: start,
                backlog_max: self.options.inbox_backlog_max.max(1),
                filter: OriginFilter::new(Some(self.origin.clone())),
            },
            messages,
            stop,
        ));
        Ok(())
    }
}

/// [`NatsEndpoint`]'s `subscribe` of a federation it does not listen to yet, with
/// persistence: one ordered consumer from the stream's end.
pub(super) fn subscribe(
    endpoint: &NatsEndpoint,
    js: &JetStreamEndpoint,
    federation: FederationId,
    topic: Topic,
    inbox: crossbeam_channel::Sender<Envelope>,
) -> Result<FederationSubscription, TransportError> {
    let transport = &endpoint.transport;
    let filter = Arc::new(RwLock::new(HashSet::from([topic])));
    let (stop_tx, stop_rx) = oneshot::channel();
    let reader = Reader {
        federation,
        filter: filter.clone(),
        inbox,
        counters: endpoint.counters.clone(),
        notified: endpoint.notified.clone(),
        last_seq: HashMap::new(),
        codec: transport.codec.clone(),
        // JetStream has its own acknowledgements and exactly-once acceptance.
        receiver: None,
        flow: None,
    };
    transport.block_on(js.start_reading(
        transport.runtime.handle(),
        federation,
        reader,
        stop_rx,
    ))?;
    Ok(FederationSubscription {
        topics: HashSet::from([topic]),
        filter,
        stop: Some(stop_tx),
        task: None,
    })
}

async fn ordered_messages(
    stream: &async_nats::jetstream::stream::Stream,
    federation: FederationId,
    start_sequence: u64,
) -> Result<async_nats::jetstream::consumer::pull::Ordered, TransportError> {
    let consumer = stream
        .create_consumer(OrderedConfig {
            filter_subject: federation_wildcard(federation),
            deliver_policy: DeliverPolicy::ByStartSequence { start_sequence },
            // Shorter pulls than the client's 30 s make its idle heartbeat short too,
            // so a consumer notices a NATS server restart within seconds.
            max_expires: PULL_EXPIRES,
            ..Default::default()
        })
        .await
        .map_err(|e| TransportError::PersistenceFailed {
            operation: "creating a JetStream consumer".into(),
            reason: e.to_string(),
        })?;
    consumer
        .messages()
        .await
        .map_err(|e| TransportError::PersistenceFailed {
            operation: "reading the JetStream stream".into(),
            reason: e.to_string(),
        })
}

/// Accepts each origin's messages once and in order (see the module documentation).
struct OriginFilter {
    own: Option<String>,
    last: HashMap<String, u64>,
    dropped: u64,
}

impl OriginFilter {
    fn new(own: Option<String>) -> OriginFilter {
        OriginFilter {
            own,
            last: HashMap::new(),
            dropped: 0,
        }
    }

    fn admit(&mut self, headers: Option<&HeaderMap>) -> bool {
        let Some(value) = headers.and_then(|h| h.get(ORIGIN_HEADER)) else {
            return true;
        };
        let Some((origin, counter)) = value
            .as_str()
            .split_once(' ')
            .and_then(|(o, c)| Some((o, c.parse::<u64>().ok()?)))
        else {
            return true;
        };
        if self.own.as_deref() == Some(origin) {
            return false;
        }
        match self.last.get_mut(origin) {
            None => {
                self.last.insert(origin.to_string(), counter);
                true
            }
            Some(last) if counter == *last + 1 => {
                *last = counter;
                true
            }
            Some(_) => {
                self.dropped += 1;
                false
            }
        }
    }
}

/// What a federation's stream reader needs.
struct StreamReader {
    reader: Reader,
    client: Client,
    stream: async_nats::jetstream::stream::Stream,
    federation: FederationId,
    /// The stream sequence of the next message to deliver.
    next: u64,
    backlog_max: usize,
    filter: OriginFilter,
}

impl StreamReader {
    /// Whether the stream holds a message we have not been given: asked after
    /// [`STALL_CHECK`] of silence from the consumer. Logs the stall (rate-limited).
    async fn stalled(&self) -> bool {
        let last = match self.stream.get_info().await {
            Ok(info) => info.state.last_sequence,
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the JetStream stream's state");
                return false;
            }
        };
        if last < self.next {
            return false;
        }
        warn_throttled!(
            federation = self.federation.0,
            next = self.next,
            last,
            "the JetStream consumer went silent with messages waiting; starting a new one"
        );
        true
    }
}

/// Moves a federation's stream into the reader until stopped.
///
/// The client's ordered consumer lives in the NATS server's memory; after a server
/// restart the client notices that it is gone only after several retries (about
/// 15 s). We notice the reconnection ourselves and start a new consumer at the
/// next stream sequence we want. Messages before it (a consumer recreated by the
/// client from the stream's beginning, an overlap between consumers) are skipped.
async fn read_stream(
    mut r: StreamReader,
    mut messages: async_nats::jetstream::consumer::pull::Ordered,
    mut stop: oneshot::Receiver<()>,
) {
    let mut check = tokio::time::interval(RECONNECT_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let statistics = r.client.statistics();
    let mut connects = statistics.connects.load(Ordering::Relaxed);
    // When the consumer last gave us something, or we last stopped waiting for it.
    let mut heard = tokio::time::Instant::now();
    loop {
        // Flow control: while the inbox is full, leave the backlog in the stream.
        // Nothing tells us when the application reads, so look again shortly.
        if r.reader.inbox.len() >= r.backlog_max {
            while r.reader.inbox.len() >= r.backlog_max {
                tokio::select! {
                    biased;
                    _ = &mut stop => return,
                    _ = tokio::time::sleep(BACKLOG_RECHECK) => {}
                }
            }
            // We were not listening; the consumer was not silent.
            heard = tokio::time::Instant::now();
        }
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = check.tick() => {
                // Counts every (re)connection, so even a short outage is seen.
                let now = statistics.connects.load(Ordering::Relaxed);
                let reconnected = now != connects;
                let connected = r.client.connection_state() == State::Connected;
                let restart = if reconnected {
                    connected
                } else if connected && heard.elapsed() >= STALL_CHECK {
                    // At most one look at the stream per STALL_CHECK of silence: an
                    // idle federation costs one small request a second.
                    heard = tokio::time::Instant::now();
                    r.stalled().await
                } else {
                    false
                };
                if restart {
                    match ordered_messages(&r.stream, r.federation, r.next).await {
                        Ok(fresh) => {
                            messages = fresh;
                            connects = now;
                            if !reconnected {
                                r.reader.counters.consumer_restarts.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        // JetStream may not be ready yet: try again at the next check.
                        Err(e) => tracing::debug!(error = %e, "cannot restart the JetStream consumer yet"),
                    }
                    heard = tokio::time::Instant::now();
                }
            }
            message = messages.next() => match message {
                Some(Ok(m)) => {
                    heard = tokio::time::Instant::now();
                    if let Ok(info) = m.info() {
                        if info.stream_sequence < r.next {
                            continue;
                        }
                        r.next = info.stream_sequence + 1;
                    }
                    let message: Message = m.message;
                    if r.filter.admit(message.headers.as_ref()) {
                        r.reader.handle(message, Via::Federation);
                    }
                }
                Some(Err(e)) => tracing::debug!(error = %e, "JetStream consumer hiccup; it recovers by itself"),
                None => break,
            },
        }
    }
    if r.filter.dropped > 0 {
        tracing::debug!(
            dropped = r.filter.dropped,
            "duplicate or out-of-order JetStream messages dropped"
        );
    }
}

// ----- replay ---------------------------------------------------------------------------

/// One envelope read back from a federation's stream.
#[derive(Clone, Debug)]
pub struct ReplayedEnvelope {
    /// Its sequence number in the stream.
    pub stream_sequence: u64,
    /// The topic it was published on.
    pub topic: Topic,
    /// The envelope.
    pub envelope: Envelope,
}

/// What [`replay`] read.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    /// The envelopes, once each and in stream order.
    pub envelopes: Vec<ReplayedEnvelope>,
    /// Messages that could not be decoded or named no topic.
    pub malformed: u64,
    /// Retransmitted duplicates (and messages stored out of order) that were skipped.
    pub duplicates: u64,
}

/// Reads a federation's stream from stream sequence `from_sequence` (1 for the
/// beginning) up to its last message at the time of the call.
/// Frames of the encoder chain are opened with [`NatsOptions::messaging`] (the same
/// federation key as the run's); bundles yield each envelope, with the bundle's
/// stream sequence.
pub fn replay(
    url: &str,
    federation: FederationId,
    from_sequence: u64,
    options: &NatsOptions,
) -> Result<Replay, TransportError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TransportError::Io {
            what: "the replay's runtime",
            reason: e.to_string(),
        })?;
    let codec = FrameCodec::new(options.messaging.clone())?;
    runtime.block_on(async {
        let client = connect_client(
            url,
            options,
            "glidepath-replay".into(),
            Arc::new(Counters::default()),
        )
        .await?;
        let context = async_nats::jetstream::new(client.clone());
        let stream = context
            .get_stream(stream_name(federation))
            .await
            .map_err(|e| TransportError::StreamNotFound {
                stream: stream_name(federation),
                reason: format!("{e}, at {url}"),
            })?;
        let last = stream.cached_info().state.last_sequence;
        let mut replay = Replay::default();
        if last >= from_sequence.max(1) {
            let mut messages = ordered_messages(&stream, federation, from_sequence.max(1)).await?;
            let mut filter = OriginFilter::new(None);
            while let Some(item) = tokio::time::timeout(options.request_timeout, messages.next())
                .await
                .map_err(|_| TransportError::Timeout(options.request_timeout))?
            {
                let Ok(m) = item else { continue };
                let sequence = m.info().map(|i| i.stream_sequence).unwrap_or(0);
                let message = m.message;
                if filter.admit(message.headers.as_ref()) {
                    match parse_topic(federation, &message.subject) {
                        Some(topic) => {
                            for envelope in open_envelopes(&codec, message.payload) {
                                match envelope {
                                    Some(envelope) => replay.envelopes.push(ReplayedEnvelope {
                                        stream_sequence: sequence,
                                        topic,
                                        envelope,
                                    }),
                                    None => replay.malformed += 1,
                                }
                            }
                        }
                        None => replay.malformed += 1,
                    }
                }
                if sequence >= last {
                    break;
                }
            }
            replay.duplicates = filter.dropped;
        }
        let _ = tokio::time::timeout(options.request_timeout, client.drain()).await;
        Ok(replay)
    })
}

/// The envelopes in one stored message (a plain envelope, or a frame of the encoder
/// chain holding one or a bundle); `None` for each one that cannot be read.
fn open_envelopes(codec: &FrameCodec, payload: Bytes) -> Vec<Option<Envelope>> {
    let bodies = if !codec.keyed() && payload.first() == Some(&glidepath_wire::MAGIC) {
        Ok(vec![payload])
    } else {
        codec.open(&payload).and_then(FrameCodec::split)
    };
    match bodies {
        Ok(bodies) => bodies
            .into_iter()
            .map(|b| glidepath_wire::decode_envelope_bytes(b).ok())
            .collect(),
        Err(_) => vec![None],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ORIGIN_HEADER, value);
        h
    }

    /// A consumer that stops delivering while messages wait in the stream is
    /// replaced within seconds, at the next message: here the reader is handed a
    /// consumer of another, empty stream, which stays silent for good (as the
    /// client's ordered consumer did for 8 s once a full ATM day).
    #[test]
    fn a_silent_consumer_is_replaced_while_messages_wait() {
        use glidepath_core::{FederateHandle, InteractionClassHandle};
        let store =
            std::env::temp_dir().join(format!("glidepath-silent-consumer-{}", std::process::id()));
        let server = crate::nats::NatsServerProcess::start_with(
            None,
            &["--jetstream", "--store_dir", store.to_str().unwrap()],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let runtime = tokio::runtime::Runtime::new().unwrap();
        // The topic of conformance::data's interactions.
        let (federation, topic) = (
            FederationId(7),
            Topic::InteractionClass(InteractionClassHandle(1)),
        );
        let (inbox, delivered) = crossbeam_channel::unbounded();
        let counters = Arc::new(Counters::default());
        let sent = 500u64;
        runtime.block_on(async {
            let client = async_nats::connect(server.url()).await.unwrap();
            let js = async_nats::jetstream::new(client.clone());
            let stream = js
                .create_stream(stream_config(federation, &JetStreamOptions::default()))
                .await
                .unwrap();
            let empty = js
                .create_stream(stream_config(FederationId(8), &JetStreamOptions::default()))
                .await
                .unwrap();
            let silent = ordered_messages(&empty, FederationId(8), 1).await.unwrap();
            let reader = Reader {
                federation,
                filter: Arc::new(RwLock::new(HashSet::from([topic]))),
                inbox,
                counters: counters.clone(),
                notified: Arc::default(),
                last_seq: HashMap::new(),
                codec: Arc::new(FrameCodec::new(Default::default()).unwrap()),
                receiver: None,
                flow: None,
            };
            let (_stop, stop) = oneshot::channel();
            tokio::spawn(read_stream(
                StreamReader {
                    reader,
                    client: client.clone(),
                    stream,
                    federation,
                    next: 1,
                    backlog_max: 1 << 20,
                    filter: OriginFilter::new(None),
                },
                silent,
                stop,
            ));
            for seq in 1..=sent {
                let envelope = crate::conformance::data(3, seq);
                let subject = glidepath_wire::subject::topic_subject(federation, topic);
                let payload = glidepath_wire::encode_envelope(&envelope);
                js.publish(subject, payload).await.unwrap().await.unwrap();
            }
            // Received in order, once each, within a few stall checks.
            for seq in 1..=sent {
                let envelope =
                    tokio::task::block_in_place(|| delivered.recv_timeout(Duration::from_secs(30)))
                        .unwrap_or_else(|_| panic!("envelope {seq} of {sent} never came"));
                assert_eq!((envelope.sender, envelope.seq), (FederateHandle(3), seq));
            }
        });
        assert_eq!(counters.consumer_restarts.load(Ordering::Relaxed), 1);
        assert!(delivered.is_empty());
        drop(server);
        let _ = std::fs::remove_dir_all(&store);
    }

    #[test]
    fn origin_filter_admits_each_message_once_in_order() {
        let mut f = OriginFilter::new(Some("me".into()));
        assert!(f.admit(None));
        assert!(!f.admit(Some(&headers("me 1"))));
        assert!(f.admit(Some(&headers("a 1"))));
        assert!(f.admit(Some(&headers("a 2"))));
        // 3 lost in a restart: 4 and 5 wait for the retransmission of 3, 4, 5.
        assert!(!f.admit(Some(&headers("a 4"))));
        assert!(!f.admit(Some(&headers("a 5"))));
        assert!(!f.admit(Some(&headers("a 2"))));
        assert!(f.admit(Some(&headers("a 3"))));
        assert!(f.admit(Some(&headers("a 4"))));
        assert!(f.admit(Some(&headers("a 5"))));
        assert!(f.admit(Some(&headers("b 7"))));
        assert_eq!(f.dropped, 3);
    }

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

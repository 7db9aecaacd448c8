//! Reliable delivery over core NATS: per-sender windows, acknowledgements and
//! retransmission.
//!
//! Core NATS is at-most-once: a receiving client drops what does not fit its
//! subscription channel, the server cuts a connection that falls too far behind, and
//! whatever is in flight when a connection breaks is gone. Every envelope already
//! carries its sender's contiguous `seq`, and every endpoint in a federation reads
//! all of that federation's envelopes, so each receiver can say exactly what it has.
//! This module turns that into delivery that is exactly once and in order per sender,
//! with bounded memory on both sides.
//!
//! # Sender
//!
//! An endpoint keeps every envelope it publishes in a federation (as encoded bytes,
//! with its topic) until every receiver it knows of has acknowledged it. `publish`
//! waits while the oldest unacknowledged envelope is [`NatsOptions::window_envelopes`]
//! behind, or the kept bytes exceed [`NatsOptions::window_bytes`]: a slow receiver
//! slows its senders down instead of growing anyone's memory. Receivers are learnt
//! from their acknowledgements; one that says goodbye is forgotten at once, one that
//! stays silent for [`PEER_TIMEOUT`] while data waits for it is given up (counted,
//! logged) so that a crashed process cannot stall a federation forever.
//!
//! # Receiver
//!
//! A federation's reader delivers each sender's envelopes in `seq` order. An
//! envelope after a gap waits in a reorder buffer and the receiver asks the sender
//! for the missing range (a NACK, repeated every [`NACK_RETRY`] while nothing
//! arrives). The sender republishes what it still keeps on the receiver's own
//! retransmission subject. A gap that nobody fills for [`GAP_GIVEUP`] (the sender is
//! gone, or never kept it) is counted as lost and skipped. Receivers acknowledge what
//! they have moved into their inbox, at the latest every [`ACK_INTERVAL`], and keep
//! quiet senders informed every [`KEEPALIVE`]. When a receiver's inbox holds
//! [`RELIABLE_BACKLOG_MAX`] envelopes it stops reading (and so stops acknowledging)
//! until its federate catches up, which is what makes senders wait.
//!
//! A sender also retransmits on its own when a receiver's acknowledgement has not
//! moved for [`RETX_AFTER`] while it is not busy: that recovers a lost tail, which no
//! later envelope would reveal as a gap.
//!
//! # Why no deadlock
//!
//! Two federates that publish to each other while neither drains its inbox (say,
//! each user thread blocked in `publish` holding its federate's lock) would wait for
//! each other forever if both readers stopped at the bound. So a reader never stops
//! while its own endpoint is waiting for credit: the waiting endpoint keeps
//! accepting, the other side gets its acknowledgements and moves on. Memory grows
//! past the bound only in that case, and only by what the other side sends while
//! this one waits.
//!
//! # Subjects and control messages (`docs/wire-format.md`)
//!
//! The subjects are built by [`flow_subject`] and [`retx_subject`] (in
//! `glidepath_wire::subject`, with every other subject):
//!
//! ```text
//! glidepath-flow.<federation>.<sender>   acknowledgements, NACKs and goodbyes for one sender
//! glidepath-retx.<federation>.<receiver> retransmissions for one receiver (hex token),
//!                                        header Glidepath-Topic = the original subject
//! ```
//!
//! A control message is 26 bytes (through the federation's encoder chain when it has
//! a key): kind (`1` ack, `2` NACK, `3` goodbye), flags (bit 0: the receiver is busy,
//! its inbox full), the receiver's token (u64), then two u64 `seq`s — for an ack the
//! highest `seq` delivered in order and 0; for a NACK the first and last missing —
//! all little-endian.
//!
//! [`NatsOptions::window_envelopes`]: super::NatsOptions::window_envelopes
//! [`NatsOptions::window_bytes`]: super::NatsOptions::window_bytes

use std::collections::hash_map::{Entry, RandomState};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::{Client, HeaderMap, Message};
use bytes::{BufMut, Bytes, BytesMut};
use futures::StreamExt;
use glidepath_core::{Envelope, FederateHandle, FederationId, Topic};
use parking_lot::{Condvar, Mutex};
use tokio::sync::oneshot;

use super::frames::FrameCodec;
use super::subject::{flow_subject, parse_topic, retx_subject, topic_subject};
use crate::TransportError;

/// How long a receiver may stay silent, while data waits for it, before a sender
/// gives it up. Long enough to ride out a NATS server restart (clients back off up to
/// 4 s between reconnection attempts).
pub const PEER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a sender waits for a receiver's acknowledgement to move before it
/// retransmits the unacknowledged tail to it.
pub const RETX_AFTER: Duration = Duration::from_millis(200);
/// How often a receiver repeats a NACK for a gap that is still open.
pub const NACK_RETRY: Duration = Duration::from_millis(100);
/// How long a gap may stay open without any retransmission arriving before the
/// receiver counts it as lost and moves on.
pub const GAP_GIVEUP: Duration = Duration::from_secs(2);
/// A receiver acknowledges progress at the latest this often.
pub const ACK_INTERVAL: Duration = Duration::from_millis(10);
/// A receiver tells every sender it has heard from lately that it is alive this often.
pub const KEEPALIVE: Duration = Duration::from_millis(500);
/// A receiver stops keeping a sender informed after this long without hearing from it.
const SENDER_QUIET: Duration = Duration::from_secs(30);
/// Most envelopes one retransmission sends to one receiver.
const RETX_BATCH: usize = 1024;

/// Inbox length from which a reader stops taking reliable envelopes from the NATS
/// client (and so stops acknowledging them), unless its own endpoint is waiting for
/// credit. Twice [`crate::BEST_EFFORT_BACKLOG_MAX`], so best-effort data is shed
/// before reliable data pushes back.
pub const RELIABLE_BACKLOG_MAX: usize = 2 * crate::BEST_EFFORT_BACKLOG_MAX;

/// The header of a retransmission naming the subject the envelope was first sent on.
pub const TOPIC_HEADER: &str = "Glidepath-Topic";

const ACK: u8 = 1;
const NACK: u8 = 2;
const BYE: u8 = 3;
const BUSY: u8 = 1;
const CONTROL_LEN: usize = 26;

/// A random token naming one endpoint as a receiver.
pub(crate) fn new_token() -> u64 {
    let mut h = RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u128(Instant::now().elapsed().as_nanos());
    h.finish()
}

/// A control message from a receiver to a sender.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Control {
    Ack { token: u64, seq: u64, busy: bool },
    Nack { token: u64, first: u64, last: u64 },
    Bye { token: u64 },
}

impl Control {
    fn encode(self) -> Bytes {
        let mut b = BytesMut::with_capacity(CONTROL_LEN);
        let (kind, flags, token, x, y) = match self {
            Control::Ack { token, seq, busy } => (ACK, if busy { BUSY } else { 0 }, token, seq, 0),
            Control::Nack { token, first, last } => (NACK, 0, token, first, last),
            Control::Bye { token } => (BYE, 0, token, 0, 0),
        };
        b.put_u8(kind);
        b.put_u8(flags);
        b.put_u64_le(token);
        b.put_u64_le(x);
        b.put_u64_le(y);
        b.freeze()
    }

    fn decode(b: &[u8]) -> Option<Control> {
        if b.len() != CONTROL_LEN {
            return None;
        }
        let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let (token, x, y) = (u(2), u(10), u(18));
        match b[0] {
            ACK => Some(Control::Ack {
                token,
                seq: x,
                busy: b[1] & BUSY != 0,
            }),
            NACK if x <= y && x > 0 => Some(Control::Nack {
                token,
                first: x,
                last: y,
            }),
            BYE => Some(Control::Bye { token }),
            _ => None,
        }
    }
}

/// Window sizes; zero envelopes turns flow control off.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Window {
    pub envelopes: usize,
    pub bytes: usize,
}

impl Window {
    pub(crate) fn enabled(self) -> bool {
        self.envelopes > 0
    }
}

struct Kept {
    seq: u64,
    topic: Topic,
    body: Bytes,
}

struct Peer {
    acked: u64,
    busy: bool,
    heard: Instant,
    /// When `acked` last moved (or we last retransmitted to it).
    moved: Instant,
}

/// What one sender keeps for one federation.
struct Outbound {
    kept: VecDeque<Kept>,
    kept_bytes: usize,
    last_seq: u64,
    peers: HashMap<u64, Peer>,
    stop: Option<oneshot::Sender<()>>,
}

impl Outbound {
    fn min_acked(&self) -> Option<u64> {
        self.peers.values().map(|p| p.acked).min()
    }

    /// Drops what every known receiver has. With none known yet, keeps the window's
    /// worth of bytes: a receiver subscribed before we started may not have
    /// acknowledged anything yet (its first acknowledgement is a round trip away, and a
    /// fast sender publishes many envelopes meanwhile), and it must still be able to
    /// ask for the start of the stream.
    fn trim(&mut self, window: Window) {
        match self.min_acked() {
            Some(acked) => {
                while self.kept.front().is_some_and(|k| k.seq <= acked) {
                    self.pop();
                }
            }
            None => {
                while self.kept_bytes > window.bytes {
                    self.pop();
                }
            }
        }
    }

    fn pop(&mut self) {
        if let Some(k) = self.kept.pop_front() {
            self.kept_bytes -= weight(&k.body);
        }
    }

    /// Whether `window` is used up, `acked` being [`Outbound::min_acked`].
    fn full(&self, acked: Option<u64>, window: Window) -> bool {
        match acked {
            Some(acked) => {
                self.last_seq.saturating_sub(acked) >= window.envelopes as u64
                    || self.kept_bytes >= window.bytes
            }
            None => false,
        }
    }

    /// Up to a batch of kept envelopes from `first` to `last`.
    fn range(&self, first: u64, last: u64) -> Vec<(u64, Topic, Bytes)> {
        let start = self.kept.partition_point(|k| k.seq < first);
        self.kept
            .range(start..)
            .take_while(|k| k.seq <= last)
            .take(RETX_BATCH)
            .map(|k| (k.seq, k.topic, k.body.clone()))
            .collect()
    }
}

/// What a kept envelope costs in memory: its bytes and the bookkeeping around them.
fn weight(body: &Bytes) -> usize {
    body.len() + std::mem::size_of::<Kept>()
}

/// Retransmissions to send once the lock is released.
type Resend = Vec<(FederationId, u64, Vec<(u64, Topic, Bytes)>)>;

/// The sending side of one endpoint: what it keeps, its receivers, its counters.
pub(crate) struct Flow {
    window: Window,
    client: Client,
    codec: Arc<FrameCodec>,
    runtime: tokio::runtime::Handle,
    state: Mutex<HashMap<(FederationId, FederateHandle), Outbound>>,
    credit: Condvar,
    /// Threads of this endpoint waiting for credit.
    waiting: AtomicUsize,
    closed: std::sync::atomic::AtomicBool,
    pub(crate) unacked_max: AtomicU64,
    pub(crate) retransmitted: AtomicU64,
    pub(crate) peers_given_up: AtomicU64,
    pub(crate) credit_waits: AtomicU64,
    /// Acknowledgements and NACKs that could not be opened or decoded (dropped).
    pub(crate) malformed_controls: AtomicU64,
}

impl Flow {
    pub(crate) fn new(
        window: Window,
        client: Client,
        codec: Arc<FrameCodec>,
        runtime: tokio::runtime::Handle,
    ) -> Arc<Flow> {
        Arc::new(Flow {
            window,
            client,
            codec,
            runtime,
            state: Mutex::new(HashMap::new()),
            credit: Condvar::new(),
            waiting: AtomicUsize::new(0),
            closed: std::sync::atomic::AtomicBool::new(false),
            unacked_max: AtomicU64::new(0),
            retransmitted: AtomicU64::new(0),
            peers_given_up: AtomicU64::new(0),
            credit_waits: AtomicU64::new(0),
            malformed_controls: AtomicU64::new(0),
        })
    }

    /// Whether a thread of this endpoint waits for credit (readers then never stop).
    pub(crate) fn waiting(&self) -> bool {
        self.waiting.load(Ordering::Acquire) > 0
    }

    /// Waits for room in the window, then keeps `body` (the encoded envelope) until
    /// every receiver has it. Called by `publish` before handing it to the client,
    /// from a plain thread.
    pub(crate) fn admit(
        self: &Arc<Self>,
        federation: FederationId,
        envelope: &Envelope,
        topic: Topic,
        body: &Bytes,
    ) -> Result<(), TransportError> {
        let key = (federation, envelope.sender);
        let mut state = self.state.lock();
        if !state.contains_key(&key) {
            drop(state);
            self.listen(key)?;
            state = self.state.lock();
        }
        // The slowest receiver's acknowledgement, once there is room.
        let acked = loop {
            if self.closed.load(Ordering::Acquire) {
                return Err(TransportError::Closed);
            }
            let out = state.get_mut(&key).expect("listened above");
            let acked = out.min_acked();
            if !out.full(acked, self.window) {
                break acked;
            }
            self.credit_waits.fetch_add(1, Ordering::Relaxed);
            self.waiting.fetch_add(1, Ordering::AcqRel);
            self.credit.wait_for(&mut state, Duration::from_millis(50));
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            self.give_up_silent(&mut state);
        };
        let out = state.get_mut(&key).expect("listened above");
        out.kept_bytes += weight(body);
        out.kept.push_back(Kept {
            seq: envelope.seq,
            topic,
            body: body.clone(),
        });
        out.last_seq = out.last_seq.max(envelope.seq);
        if let Some(acked) = acked {
            self.unacked_max
                .fetch_max(out.last_seq.saturating_sub(acked), Ordering::Relaxed);
        } else {
            out.trim(self.window);
        }
        Ok(())
    }

    /// Subscribes the flow subject of one (federation, sender) and starts its task.
    fn listen(self: &Arc<Self>, key: (FederationId, FederateHandle)) -> Result<(), TransportError> {
        let subject = flow_subject(key.0, key.1);
        let client = self.client.clone();
        let mut subscriber = self
            .runtime
            .block_on(async move { client.subscribe(subject).await })
            .map_err(|e| {
                TransportError::Backend(format!("cannot subscribe to acknowledgements: {e}"))
            })?;
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let mut state = self.state.lock();
        match state.entry(key) {
            Entry::Occupied(_) => return Ok(()), // another thread was first; drop ours
            Entry::Vacant(v) => {
                v.insert(Outbound {
                    kept: VecDeque::new(),
                    kept_bytes: 0,
                    last_seq: 0,
                    peers: HashMap::new(),
                    stop: Some(stop_tx),
                });
            }
        }
        drop(state);
        let flow = self.clone();
        self.runtime.spawn(async move {
            loop {
                tokio::select! {
                    biased;
                    _ = &mut stop_rx => break,
                    message = subscriber.next() => match message {
                        Some(m) => flow.on_control(key, m).await,
                        None => break,
                    },
                }
            }
        });
        Ok(())
    }

    async fn on_control(&self, key: (FederationId, FederateHandle), message: Message) {
        let control = match self.codec.open(&message.payload) {
            Ok(body) => Control::decode(&body),
            Err(_) => None,
        };
        let Some(control) = control else {
            let total = self.malformed_controls.fetch_add(1, Ordering::Relaxed) + 1;
            super::warn_throttled!(subject = %message.subject, total, "dropped an unreadable flow-control message");
            return;
        };
        let now = Instant::now();
        let mut resend: Resend = Vec::new();
        {
            let mut state = self.state.lock();
            let Some(out) = state.get_mut(&key) else {
                return;
            };
            match control {
                Control::Ack { token, seq, busy } => {
                    let peer = out.peers.entry(token).or_insert(Peer {
                        acked: seq,
                        busy,
                        heard: now,
                        moved: now,
                    });
                    if seq > peer.acked {
                        peer.acked = seq;
                        peer.moved = now;
                    }
                    peer.busy = busy;
                    peer.heard = now;
                    out.trim(self.window);
                }
                Control::Nack { token, first, last } => {
                    if let Some(peer) = out.peers.get_mut(&token) {
                        peer.heard = now;
                        peer.moved = now;
                    }
                    let batch = out.range(first, last);
                    if !batch.is_empty() {
                        resend.push((key.0, token, batch));
                    }
                }
                Control::Bye { token } => {
                    out.peers.remove(&token);
                    out.trim(self.window);
                }
            }
        }
        self.credit.notify_all();
        self.resend(resend).await;
    }

    /// Forgets receivers silent for too long while data waits for them.
    fn give_up_silent(&self, state: &mut HashMap<(FederationId, FederateHandle), Outbound>) {
        let now = Instant::now();
        for ((federation, sender), out) in state.iter_mut() {
            let last = out.last_seq;
            let before = out.peers.len();
            out.peers.retain(|token, p| {
                let keep = p.acked >= last || now.duration_since(p.heard) < PEER_TIMEOUT;
                if !keep {
                    tracing::warn!(federation = federation.0, %sender, receiver = format!("{token:016x}"), acked = p.acked, last, "a receiver stayed silent for {PEER_TIMEOUT:?}: given up, no longer waited for");
                }
                keep
            });
            let gone = before - out.peers.len();
            if gone > 0 {
                self.peers_given_up
                    .fetch_add(gone as u64, Ordering::Relaxed);
                out.trim(self.window);
                self.credit.notify_all();
            }
        }
    }

    /// The periodic work: retransmit stalled tails, give up silent receivers.
    pub(crate) async fn tick(&self) {
        let now = Instant::now();
        let mut resend: Resend = Vec::new();
        {
            let mut state = self.state.lock();
            self.give_up_silent(&mut state);
            for ((federation, _), out) in state.iter_mut() {
                let last = out.last_seq;
                let mut due = Vec::new();
                for (token, peer) in out.peers.iter_mut() {
                    if peer.acked < last
                        && !peer.busy
                        && now.duration_since(peer.moved) >= RETX_AFTER
                    {
                        peer.moved = now;
                        due.push((*token, peer.acked + 1));
                    }
                }
                for (token, first) in due {
                    let batch = out.range(first, last);
                    if !batch.is_empty() {
                        resend.push((*federation, token, batch));
                    }
                }
            }
        }
        self.resend(resend).await;
    }

    async fn resend(&self, resend: Resend) {
        for (federation, token, batch) in resend {
            let subject = retx_subject(federation, token);
            for (_, topic, body) in batch {
                let payload = match self.codec.seal(Some(topic), body) {
                    Ok(p) => p,
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot seal a retransmission");
                        continue;
                    }
                };
                let mut headers = HeaderMap::new();
                headers.insert(TOPIC_HEADER, topic_subject(federation, topic).as_str());
                if self
                    .client
                    .publish_with_headers(subject.clone(), headers, payload)
                    .await
                    .is_ok()
                {
                    self.retransmitted.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }

    /// True when every known receiver has everything published.
    pub(crate) fn all_acknowledged(&self) -> bool {
        let mut state = self.state.lock();
        self.give_up_silent(&mut state);
        state
            .values()
            .all(|out| out.peers.values().all(|p| p.acked >= out.last_seq))
    }

    /// Wakes waiting publishers with `Closed` and stops the acknowledgement tasks.
    pub(crate) fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let mut state = self.state.lock();
        for out in state.values_mut() {
            if let Some(stop) = out.stop.take() {
                let _ = stop.send(());
            }
        }
        drop(state);
        self.credit.notify_all();
    }
}

/// Where a receiver stands with one sender.
struct Inbound {
    /// Every `seq` up to this one was delivered (or given up).
    delivered: u64,
    /// Envelopes after a gap: `None` for topics this endpoint does not want.
    pending: BTreeMap<u64, (Option<Envelope>, usize)>,
    acked: u64,
    bytes_since_ack: usize,
    acked_at: Instant,
    /// When we last heard from the sender (as of the last tick).
    heard: Instant,
    /// Something arrived since the last tick.
    touched: bool,
    nacked_at: Option<Instant>,
    /// The highest `seq` a NACK has asked for.
    nacked_upto: u64,
    /// When the open gap last saw progress (it opened, or a retransmission arrived).
    gap_progress: Instant,
}

impl Inbound {
    /// The acknowledgement of everything delivered so far, recorded as sent at `now`.
    fn ack(&mut self, token: u64, busy: bool, now: Instant) -> Control {
        self.acked = self.delivered;
        self.bytes_since_ack = 0;
        self.acked_at = now;
        Control::Ack {
            token,
            seq: self.delivered,
            busy,
        }
    }
}

/// Where an envelope came from: its sender and `seq`, its encoded size, and whether
/// it came as a retransmission.
pub(crate) struct Arrival {
    pub sender: FederateHandle,
    pub seq: u64,
    pub bytes: usize,
    pub retransmitted: bool,
}

/// What a receiver did with an envelope of a flow-controlled sender.
pub(crate) enum Admission {
    /// Taken: delivered (with whatever it released from the reorder buffer), or held
    /// until a gap below it is filled.
    Accepted,
    /// A duplicate (a retransmission that was not needed): drop it.
    Duplicate,
}

/// The receiving side of one federation's reader.
pub(crate) struct Receiver {
    federation: FederationId,
    token: u64,
    window: Window,
    client: Client,
    codec: Arc<FrameCodec>,
    senders: HashMap<FederateHandle, Inbound>,
    outbox: Vec<(FederateHandle, Control)>,
    /// Whether the reader has stopped reading because the inbox is full.
    pub(crate) busy: bool,
}

impl Receiver {
    pub(crate) fn new(
        federation: FederationId,
        token: u64,
        window: Window,
        client: Client,
        codec: Arc<FrameCodec>,
    ) -> Receiver {
        Receiver {
            federation,
            token,
            window,
            client,
            codec,
            senders: HashMap::new(),
            outbox: Vec::new(),
            busy: false,
        }
    }

    /// The topic a retransmission was first sent on (`None` when its header is
    /// missing or names no topic of this federation).
    pub(crate) fn retransmitted_topic(&self, message: &Message) -> Option<Topic> {
        message
            .headers
            .as_ref()
            .and_then(|h| h.get(TOPIC_HEADER))
            .and_then(|v| parse_topic(self.federation, v.as_str()))
    }

    /// The subject this receiver reads retransmissions on.
    pub(crate) fn retx_subject(&self) -> String {
        retx_subject(self.federation, self.token)
    }

    /// Takes one envelope of `sender` (already filtered: `None` when not wanted) and
    /// hands `deliver` whatever may now be delivered, in order. The common case (the
    /// next `seq`, nothing held) reads no clock and allocates nothing.
    pub(crate) fn admit(
        &mut self,
        arrival: Arrival,
        envelope: Option<Envelope>,
        lost: &AtomicU64,
        deliver: &mut dyn FnMut(Envelope),
    ) -> Admission {
        let Arrival {
            sender,
            seq,
            bytes,
            retransmitted,
        } = arrival;
        let inbound = match self.senders.entry(sender) {
            Entry::Occupied(o) => o.into_mut(),
            Entry::Vacant(v) => {
                // The first we hear of this sender: the stream starts here for us.
                let now = Instant::now();
                self.outbox.push((
                    sender,
                    Control::Ack {
                        token: self.token,
                        seq,
                        busy: false,
                    },
                ));
                v.insert(Inbound {
                    delivered: seq.saturating_sub(1),
                    pending: BTreeMap::new(),
                    acked: seq,
                    bytes_since_ack: 0,
                    acked_at: now,
                    heard: now,
                    touched: false,
                    nacked_at: None,
                    nacked_upto: 0,
                    gap_progress: now,
                })
            }
        };
        inbound.touched = true;
        if seq == inbound.delivered + 1 && inbound.pending.is_empty() {
            inbound.delivered = seq;
            inbound.bytes_since_ack += bytes;
            if let Some(e) = envelope {
                deliver(e);
            }
            self.ack_if_due(sender);
            return Admission::Accepted;
        }
        if seq <= inbound.delivered || inbound.pending.contains_key(&seq) {
            return Admission::Duplicate;
        }
        let now = Instant::now();
        if retransmitted || inbound.pending.is_empty() {
            inbound.gap_progress = now;
        }
        if seq != inbound.delivered + 1 {
            // A new hole ends just below this envelope: ask for it at once (holes
            // asked for already are repeated by the timer).
            let new_hole = seq - 1 > inbound.nacked_upto.max(inbound.delivered)
                && !inbound.pending.contains_key(&(seq - 1));
            inbound.pending.insert(seq, (envelope, bytes));
            if new_hole {
                let first = inbound.nacked_upto.max(inbound.delivered) + 1;
                inbound.nacked_at = Some(now);
                inbound.nacked_upto = seq - 1;
                self.outbox.push((
                    sender,
                    Control::Nack {
                        token: self.token,
                        first,
                        last: seq - 1,
                    },
                ));
            }
            if inbound.pending.len() > self.window.envelopes.max(1) * 2 {
                // More held than any sender's window allows: the gap will not fill.
                Self::skip_gap(inbound, lost, deliver);
                self.ack_if_due(sender);
                return Admission::Accepted;
            }
            return Admission::Accepted;
        }
        inbound.delivered = seq;
        inbound.bytes_since_ack += bytes;
        if let Some(e) = envelope {
            deliver(e);
        }
        Self::release(inbound, deliver);
        self.ack_if_due(sender);
        Admission::Accepted
    }

    /// A NACK for every hole below the newest envelope held: one round trip fills
    /// them all (the sender resends what we already hold too; those are dropped as
    /// duplicates, cheaper than one round trip per hole).
    fn nack(token: u64, inbound: &Inbound) -> Control {
        let newest = inbound
            .pending
            .keys()
            .next_back()
            .copied()
            .unwrap_or(inbound.delivered + 2);
        Control::Nack {
            token,
            first: inbound.delivered + 1,
            last: newest - 1,
        }
    }

    /// Moves consecutive envelopes out of the reorder buffer.
    fn release(inbound: &mut Inbound, deliver: &mut dyn FnMut(Envelope)) {
        while let Some(entry) = inbound.pending.first_entry() {
            if *entry.key() != inbound.delivered + 1 {
                break;
            }
            let (seq, (envelope, bytes)) = entry.remove_entry();
            inbound.delivered = seq;
            inbound.bytes_since_ack += bytes;
            if let Some(e) = envelope {
                deliver(e);
            }
        }
        if inbound.pending.is_empty() {
            inbound.nacked_at = None;
        }
    }

    /// Gives up the open gap: counts it into `lost` (before anything it releases is
    /// delivered, so whoever sees those sees the count) and releases what waits.
    fn skip_gap(inbound: &mut Inbound, lost: &AtomicU64, deliver: &mut dyn FnMut(Envelope)) {
        if let Some(first) = inbound.pending.keys().next().copied() {
            lost.fetch_add(first - inbound.delivered - 1, Ordering::Relaxed);
            inbound.delivered = first - 1;
            inbound.gap_progress = Instant::now();
            Self::release(inbound, deliver);
        }
    }

    /// Queues an acknowledgement to `sender` when enough was delivered since the last
    /// one (an eighth of a window); the timer acknowledges the rest.
    fn ack_if_due(&mut self, sender: FederateHandle) {
        let Some(inbound) = self.senders.get_mut(&sender) else {
            return;
        };
        let due = inbound.delivered.saturating_sub(inbound.acked)
            >= (self.window.envelopes as u64 / 8).max(1)
            || inbound.bytes_since_ack >= self.window.bytes / 8;
        if due {
            let ack = inbound.ack(self.token, self.busy, Instant::now());
            self.outbox.push((sender, ack));
        }
    }

    /// Periodic work: acknowledgements, NACK repeats, gaps given up (counted in
    /// `lost`; the envelopes they release go to `deliver`).
    pub(crate) fn tick(&mut self, lost: &AtomicU64, deliver: &mut dyn FnMut(Envelope)) {
        let now = Instant::now();
        for inbound in self.senders.values_mut() {
            if std::mem::take(&mut inbound.touched) {
                inbound.heard = now;
            }
        }
        let token = self.token;
        let busy = self.busy;
        self.senders.retain(|_, inbound| {
            now.duration_since(inbound.heard) < SENDER_QUIET || !inbound.pending.is_empty()
        });
        for (sender, inbound) in self.senders.iter_mut() {
            if !inbound.pending.is_empty() && now.duration_since(inbound.gap_progress) >= GAP_GIVEUP
            {
                tracing::warn!(federation = self.federation.0, %sender, from = inbound.delivered + 1, "a gap was not retransmitted in time; counted as lost");
                Self::skip_gap(inbound, lost, deliver);
            }
            if !inbound.pending.is_empty()
                && inbound
                    .nacked_at
                    .is_none_or(|at| now.duration_since(at) >= NACK_RETRY)
            {
                inbound.nacked_at = Some(now);
                let nack = Self::nack(token, inbound);
                if let Control::Nack { last, .. } = nack {
                    inbound.nacked_upto = inbound.nacked_upto.max(last);
                }
                self.outbox.push((*sender, nack));
            }
            let progress = inbound.delivered > inbound.acked;
            if (progress && now.duration_since(inbound.acked_at) >= ACK_INTERVAL)
                || now.duration_since(inbound.acked_at) >= KEEPALIVE
            {
                self.outbox.push((*sender, inbound.ack(token, busy, now)));
            }
        }
    }

    /// Says goodbye to every sender heard from: they stop waiting for us.
    pub(crate) fn goodbye(&mut self) {
        let token = self.token;
        let senders: Vec<FederateHandle> = self.senders.keys().copied().collect();
        self.outbox
            .extend(senders.into_iter().map(|s| (s, Control::Bye { token })));
    }

    /// Sends the control messages queued so far.
    pub(crate) async fn send(&mut self) {
        for (sender, control) in self.outbox.drain(..) {
            let body = match self.codec.seal(None, control.encode()) {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(error = %e, "cannot seal a flow-control message");
                    continue;
                }
            };
            let _ = self
                .client
                .publish(flow_subject(self.federation, sender), body)
                .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_messages_round_trip_and_garbage_is_refused() {
        for c in [
            Control::Ack {
                token: 7,
                seq: 42,
                busy: true,
            },
            Control::Ack {
                token: u64::MAX,
                seq: 0,
                busy: false,
            },
            Control::Nack {
                token: 1,
                first: 3,
                last: 9,
            },
            Control::Bye { token: 5 },
        ] {
            assert_eq!(Control::decode(&c.encode()), Some(c));
        }
        assert_eq!(Control::decode(b""), None);
        assert_eq!(Control::decode(&[9u8; CONTROL_LEN]), None);
        // A NACK for an empty or backwards range is refused.
        assert_eq!(
            Control::decode(
                &Control::Nack {
                    token: 1,
                    first: 9,
                    last: 3
                }
                .encode()
            ),
            None
        );
    }
}

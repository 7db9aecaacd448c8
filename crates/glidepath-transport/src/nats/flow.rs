//! Reliable delivery over core NATS: per-sender windows, acknowledgements and
//! retransmission — the driving of it.
//!
//! The protocol itself (what to keep, when to acknowledge, NACK, retransmit or give
//! up) is the pure state machines of `glidepath_flow` ([`glidepath_flow::Sender`],
//! [`glidepath_flow::Receiver`]), which the simulator (`glidepath-sim --flow`) also
//! drives over a faulty network. This module reads the clock once per event, runs the
//! timers, waits for credit, encodes control messages and publishes what the machines
//! return.
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
//! retransmission subject, and says so (a notice with [`GONE_HEADER`]) for what it no
//! longer keeps: a receiver it learnt of late (its first acknowledgements were cut)
//! may lack envelopes every receiver known then had, and a lost tail with nothing
//! after it would show it no gap. A gap that nobody fills for [`GAP_GIVEUP`] of
//! reading (the sender is gone, or no longer keeps it) is counted as lost and
//! skipped, and so is a tail the sender says it no longer keeps. Receivers acknowledge what
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
//! each user thread blocked in `publish` waiting for credit, and its RTI thread,
//! having drained a batch, waiting behind it to send the statuses that batch caused)
//! would wait for each other forever if both readers stopped at the bound. So a reader never stops
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
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::{Client, HeaderMap, Message};
use bytes::{BufMut, Bytes, BytesMut};
use futures::StreamExt;
use glidepath_core::{Envelope, FederateHandle, FederationId, Topic};
use glidepath_flow::{Control, FlowConfig, GiveUp, GivenUp, Retransmission, Sink};
use parking_lot::{Condvar, Mutex};
use tokio::sync::oneshot;

use super::frames::FrameCodec;
use super::subject::{flow_subject, parse_topic, retx_subject, topic_subject};
use crate::TransportError;

pub(crate) use glidepath_flow::{Admission, Window};
pub use glidepath_flow::{
    ACK_INTERVAL, GAP_GIVEUP, KEEPALIVE, NACK_RETRY, PEER_TIMEOUT, RETX_AFTER,
};

/// Where an envelope came from, as the reader tells the protocol.
pub(crate) type Arrival = glidepath_flow::Arrival<FederateHandle>;

/// Inbox length from which a reader stops taking reliable envelopes from the NATS
/// client (and so stops acknowledging them), unless its own endpoint is waiting for
/// credit. Twice [`crate::BEST_EFFORT_BACKLOG_MAX`], so best-effort data is shed
/// before reliable data pushes back.
pub const RELIABLE_BACKLOG_MAX: usize = 2 * crate::BEST_EFFORT_BACKLOG_MAX;

/// The header of a retransmission naming the subject the envelope was first sent on.
pub const TOPIC_HEADER: &str = "Glidepath-Topic";
/// The header that marks a message on a retransmission subject as a sender's notice
/// that it no longer keeps a range (`docs/wire-format.md`); its value is `1`.
pub const GONE_HEADER: &str = "Glidepath-Gone";
const GONE_LEN: usize = 20;

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

/// Nanoseconds since `origin`: the protocol's `now`, read once per event.
fn since(origin: Instant) -> u64 {
    origin.elapsed().as_nanos() as u64
}

/// A control message as sent (`docs/wire-format.md`).
fn encode_control(control: Control) -> Bytes {
    let mut b = BytesMut::with_capacity(CONTROL_LEN);
    let (kind, flags, token, x, y) = match control {
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

/// A control message as received; `None` for anything malformed.
fn decode_control(b: &[u8]) -> Option<Control> {
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

/// A sender's notice that it no longer keeps `first..=last`, as sent (through the
/// chain, so that with a key only a federation member can tell a receiver to skip).
fn encode_gone(sender: FederateHandle, first: u64, last: u64) -> Bytes {
    let mut b = BytesMut::with_capacity(GONE_LEN);
    b.put_u32_le(sender.0);
    b.put_u64_le(first);
    b.put_u64_le(last);
    b.freeze()
}

/// A notice as received; `None` for anything malformed.
pub(crate) fn decode_gone(b: &[u8]) -> Option<(FederateHandle, u64, u64)> {
    if b.len() != GONE_LEN {
        return None;
    }
    let u = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
    let sender = u32::from_le_bytes(b[0..4].try_into().expect("4 bytes"));
    let (first, last) = (u(4), u(12));
    (first >= 1 && first <= last).then_some((FederateHandle(sender), first, last))
}

/// What one sender keeps for one federation: the protocol's state, and the task
/// reading its control messages.
struct Outbound {
    protocol: glidepath_flow::Sender<(Topic, Bytes)>,
    stop: Option<oneshot::Sender<()>>,
}

/// Retransmissions (and notices of what is no longer kept) to send once the lock is
/// released, with the federation and sender they come from.
type Resend = Vec<(
    (FederationId, FederateHandle),
    Retransmission<(Topic, Bytes)>,
)>;

/// The sending side of one endpoint: what it keeps, its receivers, its counters.
pub(crate) struct Flow {
    config: FlowConfig,
    /// The origin of the protocol's clock.
    origin: Instant,
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
    pub(crate) gone_notices: AtomicU64,
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
            config: FlowConfig::new(window),
            origin: Instant::now(),
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
            gone_notices: AtomicU64::new(0),
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
        loop {
            if self.closed.load(Ordering::Acquire) {
                return Err(TransportError::Closed);
            }
            let out = state.get_mut(&key).expect("listened above");
            if out.protocol.has_credit() {
                break;
            }
            self.credit_waits.fetch_add(1, Ordering::Relaxed);
            self.waiting.fetch_add(1, Ordering::AcqRel);
            self.credit.wait_for(&mut state, Duration::from_millis(50));
            self.waiting.fetch_sub(1, Ordering::AcqRel);
            self.give_up_silent(&mut state, since(self.origin));
        }
        let out = state.get_mut(&key).expect("listened above");
        let lag = out.protocol.keep(
            envelope.seq,
            (topic, body.clone()),
            body.len(),
            since(self.origin),
        );
        if let Some(lag) = lag {
            self.unacked_max.fetch_max(lag, Ordering::Relaxed);
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
            .map_err(|e| TransportError::ConnectionFailed {
                operation: "subscribe to acknowledgements",
                reason: e.to_string(),
            })?;
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let mut state = self.state.lock();
        match state.entry(key) {
            Entry::Occupied(_) => return Ok(()), // another thread was first; drop ours
            Entry::Vacant(v) => {
                v.insert(Outbound {
                    protocol: glidepath_flow::Sender::new(self.config),
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
            Ok(body) => decode_control(&body),
            Err(_) => None,
        };
        let Some(control) = control else {
            let total = self.malformed_controls.fetch_add(1, Ordering::Relaxed) + 1;
            super::warn_throttled!(subject = %message.subject, total, "dropped an unreadable flow-control message");
            return;
        };
        let now = since(self.origin);
        let mut resend: Resend = Vec::new();
        {
            let mut state = self.state.lock();
            let Some(out) = state.get_mut(&key) else {
                return;
            };
            out.protocol.handle_control(now, control);
            while let Some(r) = out.protocol.poll_retransmission() {
                resend.push((key, r));
            }
        }
        self.credit.notify_all();
        self.resend(resend).await;
    }

    /// Counts and logs receivers given up by one sender.
    fn gave_up(&self, key: (FederationId, FederateHandle), gone: &[GivenUp]) {
        let ((federation, sender), timeout) = (key, PEER_TIMEOUT);
        for g in gone {
            tracing::warn!(federation = federation.0, %sender, receiver = format!("{:016x}", g.token), acked = g.acked, last = g.last, "a receiver stayed silent for {timeout:?}: given up, no longer waited for");
        }
        if !gone.is_empty() {
            self.peers_given_up
                .fetch_add(gone.len() as u64, Ordering::Relaxed);
            self.credit.notify_all();
        }
    }

    /// Forgets receivers silent for too long while data waits for them.
    fn give_up_silent(
        &self,
        state: &mut HashMap<(FederationId, FederateHandle), Outbound>,
        now: u64,
    ) {
        for (key, out) in state.iter_mut() {
            let gone = out.protocol.give_up_silent(now);
            self.gave_up(*key, &gone);
        }
    }

    /// The periodic work: retransmit stalled tails, give up silent receivers.
    pub(crate) async fn tick(&self) {
        let now = since(self.origin);
        let mut resend: Resend = Vec::new();
        {
            let mut state = self.state.lock();
            for (key, out) in state.iter_mut() {
                let gone = out.protocol.handle_timeout(now);
                self.gave_up(*key, &gone);
                while let Some(r) = out.protocol.poll_retransmission() {
                    resend.push((*key, r));
                }
            }
        }
        self.resend(resend).await;
    }

    async fn resend(&self, resend: Resend) {
        for ((federation, sender), r) in resend {
            let subject = retx_subject(federation, r.token);
            if let Some((first, last)) = r.gone {
                self.send_gone(subject.clone(), sender, first, last).await;
            }
            for (_, (topic, body)) in r.items {
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

    /// Tells one receiver that this sender no longer keeps `first..=last`.
    async fn send_gone(&self, subject: String, sender: FederateHandle, first: u64, last: u64) {
        let payload = match self.codec.seal(None, encode_gone(sender, first, last)) {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "cannot seal a notice of envelopes no longer kept");
                return;
            }
        };
        let mut headers = HeaderMap::new();
        headers.insert(GONE_HEADER, "1");
        if self
            .client
            .publish_with_headers(subject, headers, payload)
            .await
            .is_ok()
        {
            self.gone_notices.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// True when every known receiver has everything published.
    pub(crate) fn all_acknowledged(&self) -> bool {
        let mut state = self.state.lock();
        self.give_up_silent(&mut state, since(self.origin));
        state.values().all(|out| out.protocol.all_acknowledged())
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

/// Where the protocol's receiver puts what it delivers: the reader's inbox (envelopes
/// of topics this endpoint does not want are `None`), and the loss counter.
struct Deliver<'a> {
    federation: FederationId,
    lost: &'a AtomicU64,
    deliver: &'a mut dyn FnMut(Envelope),
}

impl Sink<FederateHandle, Option<Envelope>> for Deliver<'_> {
    fn deliver(&mut self, _: FederateHandle, _: u64, envelope: Option<Envelope>) {
        if let Some(e) = envelope {
            (self.deliver)(e);
        }
    }

    fn lost(&mut self, sender: FederateHandle, first: u64, last: u64, why: GiveUp) {
        if why == GiveUp::Timeout {
            tracing::warn!(federation = self.federation.0, %sender, from = first, "a gap was not retransmitted in time; counted as lost");
        }
        self.lost.fetch_add(last + 1 - first, Ordering::Relaxed);
    }
}

/// The receiving side of one federation's reader: the protocol's receiver, and the
/// client its control messages go out on.
pub(crate) struct Receiver {
    federation: FederationId,
    client: Client,
    codec: Arc<FrameCodec>,
    protocol: glidepath_flow::Receiver<FederateHandle, Option<Envelope>>,
    /// The origin of the protocol's clock.
    origin: Instant,
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
            client,
            codec,
            protocol: glidepath_flow::Receiver::new(token, FlowConfig::new(window)),
            origin: Instant::now(),
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
        retx_subject(self.federation, self.protocol.token())
    }

    /// Takes one envelope of `sender` (already filtered: `None` when not wanted) and
    /// hands `deliver` whatever may now be delivered, in order; holes given up are
    /// counted in `lost`.
    pub(crate) fn admit(
        &mut self,
        arrival: Arrival,
        envelope: Option<Envelope>,
        lost: &AtomicU64,
        deliver: &mut dyn FnMut(Envelope),
    ) -> Admission {
        let now = since(self.origin);
        self.protocol.set_busy(self.busy);
        let mut sink = Deliver {
            federation: self.federation,
            lost,
            deliver,
        };
        self.protocol
            .handle_envelope(now, arrival, envelope, &mut sink)
    }

    /// Passes over `first..=last` of `sender`, which its cell account says held
    /// nothing for this endpoint; what waited behind goes to `deliver`.
    pub(crate) fn skip(
        &mut self,
        sender: FederateHandle,
        first: u64,
        last: u64,
        lost: &AtomicU64,
        deliver: &mut dyn FnMut(Envelope),
    ) {
        let now = since(self.origin);
        let mut sink = Deliver {
            federation: self.federation,
            lost,
            deliver,
        };
        self.protocol
            .handle_skip(now, sender, first, last, &mut sink);
    }

    /// `sender` resigned or was lost: its position is not kept once it falls quiet.
    pub(crate) fn sender_departed(&mut self, sender: FederateHandle) {
        self.protocol.sender_departed(sender);
    }

    /// Asks `sender` for the holes at the next tick (an account showed them lost).
    pub(crate) fn expedite(&mut self, sender: FederateHandle) {
        self.protocol.expedite_nack(sender);
    }

    /// Periodic work: acknowledgements, NACK repeats, gaps given up (counted in
    /// `lost`; the envelopes they release go to `deliver`).
    pub(crate) fn tick(&mut self, lost: &AtomicU64, deliver: &mut dyn FnMut(Envelope)) {
        let now = since(self.origin);
        self.protocol.set_busy(self.busy);
        let mut sink = Deliver {
            federation: self.federation,
            lost,
            deliver,
        };
        self.protocol.handle_timeout(now, &mut sink);
    }

    /// Takes a message on the retransmission subject that carries
    /// [`GONE_HEADER`]: a sender's notice that it no longer keeps a range. Returns
    /// false when it cannot be opened or decoded (the caller counts it malformed).
    pub(crate) fn gone(&mut self, message: &Message) -> bool {
        let Some((sender, first, last)) = self
            .codec
            .open(&message.payload)
            .ok()
            .and_then(|body| decode_gone(&body))
        else {
            return false;
        };
        self.protocol
            .handle_gone(since(self.origin), sender, first, last);
        true
    }

    /// Whether a message on the retransmission subject is a notice of what a sender
    /// no longer keeps.
    pub(crate) fn is_gone_notice(message: &Message) -> bool {
        message
            .headers
            .as_ref()
            .is_some_and(|h| h.get(GONE_HEADER).is_some())
    }

    /// Says goodbye to every sender heard from: they stop waiting for us.
    pub(crate) fn goodbye(&mut self) {
        self.protocol.goodbye();
    }

    /// Sends the control messages queued so far.
    pub(crate) async fn send(&mut self) {
        while let Some((sender, control)) = self.protocol.poll_control() {
            let body = match self.codec.seal(None, encode_control(control)) {
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
            assert_eq!(decode_control(&encode_control(c)), Some(c));
        }
        assert_eq!(decode_control(b""), None);
        assert_eq!(decode_control(&[9u8; CONTROL_LEN]), None);
        // A notice of what a sender no longer keeps.
        let n = encode_gone(FederateHandle(9), 2, 7);
        assert_eq!(n.len(), GONE_LEN);
        assert_eq!(decode_gone(&n), Some((FederateHandle(9), 2, 7)));
        assert_eq!(decode_gone(&encode_gone(FederateHandle(9), 7, 2)), None);
        assert_eq!(decode_gone(&encode_gone(FederateHandle(9), 0, 2)), None);
        assert_eq!(decode_gone(&n[..GONE_LEN - 1]), None);
        // A NACK for an empty or backwards range is refused.
        assert_eq!(
            decode_control(&encode_control(Control::Nack {
                token: 1,
                first: 9,
                last: 3
            })),
            None
        );
    }
}

//! Reliable delivery over a lossy network, as two pure state machines: a [`Sender`]
//! (what one sender keeps for its receivers, its window, its retransmissions) and a
//! [`Receiver`] (one reader's view of every sender: order, holes, acknowledgements,
//! NACKs, holes given up).
//!
//! Neither reads a clock, touches a socket or spawns anything (quinn-proto's style):
//! time comes in as `now_ns`, nanoseconds since any origin the driver picks, inputs
//! are `handle_*` calls, and what must go out is returned or taken with `poll_*`.
//! The NATS backend (`glidepath_transport::nats::flow`) drives them with the monotonic
//! clock and a NATS client; the simulator (`glidepath-sim --flow`) drives the same code
//! with a virtual clock over a network that loses, duplicates, delays and partitions.
//!
//! # The protocol
//!
//! Every envelope carries its sender's contiguous `seq`. A sender keeps what it
//! published until every receiver it knows of has acknowledged it, and runs at most a
//! window ahead of the slowest ([`Sender::has_credit`]). Receivers are learnt from
//! their acknowledgements; one that says goodbye is forgotten at once, one that stays
//! silent for [`PEER_TIMEOUT`] while data waits for it is given up, so that a crashed
//! receiver cannot stall its senders forever.
//!
//! A receiver delivers each sender's envelopes in `seq` order. An envelope after a gap
//! waits in a reorder buffer, and the receiver asks for the missing range (a NACK,
//! repeated every [`NACK_RETRY`] while the gap stays open). A gap nobody fills for
//! [`GAP_GIVEUP`] (the sender is gone, or no longer keeps it), or one that holds more
//! than two windows back, is counted as lost ([`Sink::lost`]) and skipped. Receivers
//! acknowledge at the latest every [`ACK_INTERVAL`] and tell quiet senders they are
//! alive every [`KEEPALIVE`]. A sender retransmits a receiver's unacknowledged tail on
//! its own after [`RETX_AFTER`] without progress: no later envelope would reveal a
//! lost tail as a gap.
//!
//! The first envelope a receiver gets from a sender starts that sender's stream for
//! it (it may have subscribed late): what came before is not asked for.
//!
//! Maps are ordered (`BTreeMap`), so the same inputs give the same outputs in the same
//! order: the simulator relies on it to replay a seed.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

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
pub const SENDER_QUIET: Duration = Duration::from_secs(30);
/// Most envelopes one retransmission sends to one receiver.
pub const RETX_BATCH: usize = 1024;

/// Window sizes; zero envelopes turns flow control off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// How many envelopes a sender may run ahead of its slowest receiver.
    pub envelopes: usize,
    /// How many bytes a sender may keep for its receivers.
    pub bytes: usize,
}

impl Window {
    /// Whether flow control is on.
    pub fn enabled(self) -> bool {
        self.envelopes > 0
    }
}

/// The window and the protocol's timers, in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct FlowConfig {
    pub window: Window,
    /// [`PEER_TIMEOUT`] by default.
    pub peer_timeout_ns: u64,
    /// [`RETX_AFTER`] by default.
    pub retx_after_ns: u64,
    /// [`NACK_RETRY`] by default.
    pub nack_retry_ns: u64,
    /// [`GAP_GIVEUP`] by default.
    pub gap_giveup_ns: u64,
    /// [`ACK_INTERVAL`] by default.
    pub ack_interval_ns: u64,
    /// [`KEEPALIVE`] by default.
    pub keepalive_ns: u64,
    /// [`SENDER_QUIET`] by default.
    pub sender_quiet_ns: u64,
    /// [`RETX_BATCH`] by default.
    pub retx_batch: usize,
}

const fn ns(d: Duration) -> u64 {
    d.as_nanos() as u64
}

impl FlowConfig {
    /// The production timers with this window.
    pub const fn new(window: Window) -> FlowConfig {
        FlowConfig {
            window,
            peer_timeout_ns: ns(PEER_TIMEOUT),
            retx_after_ns: ns(RETX_AFTER),
            nack_retry_ns: ns(NACK_RETRY),
            gap_giveup_ns: ns(GAP_GIVEUP),
            ack_interval_ns: ns(ACK_INTERVAL),
            keepalive_ns: ns(KEEPALIVE),
            sender_quiet_ns: ns(SENDER_QUIET),
            retx_batch: RETX_BATCH,
        }
    }
}

/// A control message from a receiver (named by its token) to a sender. Its encoding
/// belongs to the transport (`docs/wire-format.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Everything up to `seq` was delivered; `busy`: the receiver's inbox is full.
    Ack { token: u64, seq: u64, busy: bool },
    /// Please resend `first..=last`.
    Nack { token: u64, first: u64, last: u64 },
    /// The receiver leaves: stop waiting for it.
    Bye { token: u64 },
}

// ---------------------------------------------------------------------------------
// Sender
// ---------------------------------------------------------------------------------

struct Kept<T> {
    seq: u64,
    weight: usize,
    item: T,
}

struct Peer {
    acked: u64,
    busy: bool,
    heard_ns: u64,
    /// When `acked` last moved (or we last retransmitted to it).
    moved_ns: u64,
}

/// Envelopes to send again to one receiver, in `seq` order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retransmission<T> {
    pub token: u64,
    pub items: Vec<(u64, T)>,
}

/// A receiver a sender stopped waiting for, because it stayed silent too long.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GivenUp {
    pub token: u64,
    /// The last `seq` it acknowledged.
    pub acked: u64,
    /// The sender's last `seq` then.
    pub last: u64,
}

/// What one sender keeps for its receivers (in one federation).
pub struct Sender<T> {
    config: FlowConfig,
    kept: VecDeque<Kept<T>>,
    kept_bytes: usize,
    last_seq: u64,
    peers: BTreeMap<u64, Peer>,
    retransmissions: VecDeque<Retransmission<T>>,
}

impl<T: Clone> Sender<T> {
    pub fn new(config: FlowConfig) -> Sender<T> {
        Sender {
            config,
            kept: VecDeque::new(),
            kept_bytes: 0,
            last_seq: 0,
            peers: BTreeMap::new(),
            retransmissions: VecDeque::new(),
        }
    }

    /// The slowest known receiver's acknowledgement (`None` while none is known).
    pub fn min_acked(&self) -> Option<u64> {
        self.peers.values().map(|p| p.acked).min()
    }

    /// Whether one more envelope fits the window. With no receiver known yet there is
    /// always room (what is kept is then bounded by bytes, see [`Sender::keep`]).
    pub fn has_credit(&self) -> bool {
        match self.min_acked() {
            Some(acked) => {
                self.last_seq.saturating_sub(acked) < self.config.window.envelopes as u64
                    && self.kept_bytes < self.config.window.bytes
            }
            None => true,
        }
    }

    /// Keeps a published envelope (`bytes` long) until every receiver has it. Call
    /// it only with credit ([`Sender::has_credit`]). Returns how many envelopes the
    /// slowest receiver now lags behind, `None` while no receiver is known.
    pub fn keep(&mut self, seq: u64, item: T, bytes: usize) -> Option<u64> {
        let acked = self.min_acked();
        let weight = bytes + std::mem::size_of::<Kept<T>>();
        self.kept_bytes += weight;
        self.kept.push_back(Kept { seq, weight, item });
        self.last_seq = self.last_seq.max(seq);
        match acked {
            Some(acked) => Some(self.last_seq.saturating_sub(acked)),
            None => {
                self.trim();
                None
            }
        }
    }

    /// Takes a control message from a receiver; a NACK queues a retransmission
    /// ([`Sender::poll_retransmission`]).
    pub fn handle_control(&mut self, now_ns: u64, control: Control) {
        match control {
            Control::Ack { token, seq, busy } => {
                let peer = self.peers.entry(token).or_insert(Peer {
                    acked: seq,
                    busy,
                    heard_ns: now_ns,
                    moved_ns: now_ns,
                });
                if seq > peer.acked {
                    peer.acked = seq;
                    peer.moved_ns = now_ns;
                }
                peer.busy = busy;
                peer.heard_ns = now_ns;
                self.trim();
            }
            Control::Nack { token, first, last } => {
                if let Some(peer) = self.peers.get_mut(&token) {
                    peer.heard_ns = now_ns;
                    peer.moved_ns = now_ns;
                }
                self.queue_range(token, first, last);
            }
            Control::Bye { token } => {
                self.peers.remove(&token);
                self.trim();
            }
        }
    }

    /// Forgets receivers silent for too long while data waits for them, and returns
    /// them. (A publisher waiting for credit calls this; [`Sender::handle_timeout`]
    /// does too.)
    pub fn give_up_silent(&mut self, now_ns: u64) -> Vec<GivenUp> {
        let last = self.last_seq;
        let timeout = self.config.peer_timeout_ns;
        let mut gone = Vec::new();
        self.peers.retain(|&token, p| {
            let keep = p.acked >= last || now_ns.saturating_sub(p.heard_ns) < timeout;
            if !keep {
                gone.push(GivenUp {
                    token,
                    acked: p.acked,
                    last,
                });
            }
            keep
        });
        if !gone.is_empty() {
            self.trim();
        }
        gone
    }

    /// The periodic work: gives up silent receivers (returned) and queues the
    /// unacknowledged tail of every receiver whose acknowledgement has not moved for
    /// the retransmission delay, unless it said it is busy.
    pub fn handle_timeout(&mut self, now_ns: u64) -> Vec<GivenUp> {
        let gone = self.give_up_silent(now_ns);
        let last = self.last_seq;
        let mut due = Vec::new();
        for (token, peer) in self.peers.iter_mut() {
            if peer.acked < last
                && !peer.busy
                && now_ns.saturating_sub(peer.moved_ns) >= self.config.retx_after_ns
            {
                peer.moved_ns = now_ns;
                due.push((*token, peer.acked + 1));
            }
        }
        for (token, first) in due {
            self.queue_range(token, first, last);
        }
        gone
    }

    /// The next retransmission to send.
    pub fn poll_retransmission(&mut self) -> Option<Retransmission<T>> {
        self.retransmissions.pop_front()
    }

    /// True when every known receiver has everything published.
    pub fn all_acknowledged(&self) -> bool {
        self.peers.values().all(|p| p.acked >= self.last_seq)
    }

    /// The highest `seq` kept so far.
    pub fn last_seq(&self) -> u64 {
        self.last_seq
    }

    /// How many envelopes are kept.
    pub fn kept_len(&self) -> usize {
        self.kept.len()
    }

    /// What the kept envelopes weigh (their bytes and the bookkeeping around them).
    pub fn kept_bytes(&self) -> usize {
        self.kept_bytes
    }

    /// The most a kept envelope of `bytes` bytes weighs in [`Sender::kept_bytes`].
    pub fn weight_of(bytes: usize) -> usize {
        bytes + std::mem::size_of::<Kept<T>>()
    }

    /// How many receivers are known.
    pub fn receivers(&self) -> usize {
        self.peers.len()
    }

    /// Drops what every known receiver has. With none known yet, keeps the window's
    /// worth of bytes: a receiver subscribed before we started may not have
    /// acknowledged anything yet (its first acknowledgement is a round trip away, and a
    /// fast sender publishes many envelopes meanwhile), and it must still be able to
    /// ask for the start of the stream.
    fn trim(&mut self) {
        match self.min_acked() {
            Some(acked) => {
                while self.kept.front().is_some_and(|k| k.seq <= acked) {
                    self.pop();
                }
            }
            None => {
                while self.kept_bytes > self.config.window.bytes {
                    self.pop();
                }
            }
        }
    }

    fn pop(&mut self) {
        if let Some(k) = self.kept.pop_front() {
            self.kept_bytes -= k.weight;
        }
    }

    /// Queues up to a batch of kept envelopes from `first` to `last` for `token`.
    fn queue_range(&mut self, token: u64, first: u64, last: u64) {
        let start = self.kept.partition_point(|k| k.seq < first);
        let items: Vec<(u64, T)> = self
            .kept
            .range(start..)
            .take_while(|k| k.seq <= last)
            .take(self.config.retx_batch)
            .map(|k| (k.seq, k.item.clone()))
            .collect();
        if !items.is_empty() {
            self.retransmissions
                .push_back(Retransmission { token, items });
        }
    }
}

// ---------------------------------------------------------------------------------
// Receiver
// ---------------------------------------------------------------------------------

/// Where an envelope came from: its sender and `seq`, its encoded size, and whether
/// it came as a retransmission.
#[derive(Clone, Copy, Debug)]
pub struct Arrival<K> {
    pub sender: K,
    pub seq: u64,
    pub bytes: usize,
    pub retransmitted: bool,
}

/// What a receiver did with an envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Taken: delivered (with whatever it released from the reorder buffer), or held
    /// until a gap below it is filled.
    Accepted,
    /// A duplicate (a retransmission that was not needed): drop it.
    Duplicate,
}

/// Why a gap was given up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GiveUp {
    /// Nothing filled it for the give-up delay.
    Timeout,
    /// More was held behind it than any sender's window allows.
    Overflow,
}

/// Where a [`Receiver`] puts what it delivers, in order, and the holes it gives up.
pub trait Sink<K, T> {
    /// The next envelope of `sender`, in `seq` order.
    fn deliver(&mut self, sender: K, seq: u64, item: T);
    /// `first..=last` of `sender` will never be delivered. Called before anything the
    /// skip releases is delivered, so whoever sees those sees the count.
    fn lost(&mut self, sender: K, first: u64, last: u64, why: GiveUp);
}

/// Where a receiver stands with one sender.
struct Inbound<T> {
    /// Every `seq` up to this one was delivered (or given up).
    delivered: u64,
    /// Envelopes after a gap, with their sizes.
    pending: BTreeMap<u64, (T, usize)>,
    acked: u64,
    bytes_since_ack: usize,
    acked_ns: u64,
    /// When we last heard from the sender (as of the last timeout).
    heard_ns: u64,
    /// Something arrived since the last timeout.
    touched: bool,
    nacked_ns: Option<u64>,
    /// The highest `seq` a NACK has asked for.
    nacked_upto: u64,
    /// When the open gap last saw progress (it opened, or a retransmission arrived).
    gap_progress_ns: u64,
}

impl<T> Inbound<T> {
    /// The acknowledgement of everything delivered so far, recorded as sent at `now_ns`.
    fn ack(&mut self, token: u64, busy: bool, now_ns: u64) -> Control {
        self.acked = self.delivered;
        self.bytes_since_ack = 0;
        self.acked_ns = now_ns;
        Control::Ack {
            token,
            seq: self.delivered,
            busy,
        }
    }

    /// Moves consecutive envelopes out of the reorder buffer.
    fn release<K: Copy>(&mut self, sender: K, sink: &mut impl Sink<K, T>) {
        while let Some(entry) = self.pending.first_entry() {
            if *entry.key() != self.delivered + 1 {
                break;
            }
            let (seq, (item, bytes)) = entry.remove_entry();
            self.delivered = seq;
            self.bytes_since_ack += bytes;
            sink.deliver(sender, seq, item);
        }
        if self.pending.is_empty() {
            self.nacked_ns = None;
        }
    }

    /// Gives up the open gap: counts it, then releases what waits behind it.
    fn skip_gap<K: Copy>(
        &mut self,
        sender: K,
        why: GiveUp,
        now_ns: u64,
        sink: &mut impl Sink<K, T>,
    ) {
        if let Some(first) = self.pending.keys().next().copied() {
            sink.lost(sender, self.delivered + 1, first - 1, why);
            self.delivered = first - 1;
            self.gap_progress_ns = now_ns;
            self.release(sender, sink);
        }
    }

    /// A NACK for every hole below the newest envelope held: one round trip fills
    /// them all (the sender resends what we already hold too; those are dropped as
    /// duplicates, cheaper than one round trip per hole).
    fn nack(&self, token: u64) -> Control {
        let newest = self
            .pending
            .keys()
            .next_back()
            .copied()
            .unwrap_or(self.delivered + 2);
        Control::Nack {
            token,
            first: self.delivered + 1,
            last: newest - 1,
        }
    }
}

/// One reader's view of every sender it hears from, keyed by `K`, holding items `T`.
pub struct Receiver<K, T> {
    token: u64,
    config: FlowConfig,
    senders: BTreeMap<K, Inbound<T>>,
    outbox: VecDeque<(K, Control)>,
    busy: bool,
}

impl<K: Copy + Ord, T> Receiver<K, T> {
    /// A receiver named `token` to its senders.
    pub fn new(token: u64, config: FlowConfig) -> Receiver<K, T> {
        Receiver {
            token,
            config,
            senders: BTreeMap::new(),
            outbox: VecDeque::new(),
            busy: false,
        }
    }

    /// The token naming this receiver.
    pub fn token(&self) -> u64 {
        self.token
    }

    /// Says whether the reader has stopped reading because its inbox is full; the
    /// acknowledgements tell senders, which then do not retransmit on their own.
    pub fn set_busy(&mut self, busy: bool) {
        self.busy = busy;
    }

    /// Takes one envelope and hands `sink` whatever may now be delivered, in order.
    /// The common case (the next `seq`, nothing held) allocates nothing.
    pub fn handle_envelope(
        &mut self,
        now_ns: u64,
        arrival: Arrival<K>,
        item: T,
        sink: &mut impl Sink<K, T>,
    ) -> Admission {
        let Arrival {
            sender,
            seq,
            bytes,
            retransmitted,
        } = arrival;
        let token = self.token;
        let inbound = match self.senders.entry(sender) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) => {
                // The first we hear of this sender: the stream starts here for us.
                self.outbox.push_back((
                    sender,
                    Control::Ack {
                        token,
                        seq,
                        busy: false,
                    },
                ));
                v.insert(Inbound {
                    delivered: seq.saturating_sub(1),
                    pending: BTreeMap::new(),
                    acked: seq,
                    bytes_since_ack: 0,
                    acked_ns: now_ns,
                    heard_ns: now_ns,
                    touched: false,
                    nacked_ns: None,
                    nacked_upto: 0,
                    gap_progress_ns: now_ns,
                })
            }
        };
        inbound.touched = true;
        if seq == inbound.delivered + 1 && inbound.pending.is_empty() {
            inbound.delivered = seq;
            inbound.bytes_since_ack += bytes;
            sink.deliver(sender, seq, item);
            self.ack_if_due(sender, now_ns);
            return Admission::Accepted;
        }
        if seq <= inbound.delivered || inbound.pending.contains_key(&seq) {
            return Admission::Duplicate;
        }
        if retransmitted || inbound.pending.is_empty() {
            inbound.gap_progress_ns = now_ns;
        }
        if seq != inbound.delivered + 1 {
            // A new hole ends just below this envelope: ask for it at once (holes
            // asked for already are repeated by the timer).
            let new_hole = seq - 1 > inbound.nacked_upto.max(inbound.delivered)
                && !inbound.pending.contains_key(&(seq - 1));
            inbound.pending.insert(seq, (item, bytes));
            if new_hole {
                let first = inbound.nacked_upto.max(inbound.delivered) + 1;
                inbound.nacked_ns = Some(now_ns);
                inbound.nacked_upto = seq - 1;
                self.outbox.push_back((
                    sender,
                    Control::Nack {
                        token,
                        first,
                        last: seq - 1,
                    },
                ));
            }
            if inbound.pending.len() > self.config.window.envelopes.max(1) * 2 {
                // More held than any sender's window allows: the gap will not fill.
                inbound.skip_gap(sender, GiveUp::Overflow, now_ns, sink);
                self.ack_if_due(sender, now_ns);
            }
            return Admission::Accepted;
        }
        inbound.delivered = seq;
        inbound.bytes_since_ack += bytes;
        sink.deliver(sender, seq, item);
        inbound.release(sender, sink);
        self.ack_if_due(sender, now_ns);
        Admission::Accepted
    }

    /// Queues an acknowledgement to `sender` when enough was delivered since the last
    /// one (an eighth of a window); the timer acknowledges the rest.
    fn ack_if_due(&mut self, sender: K, now_ns: u64) {
        let Some(inbound) = self.senders.get_mut(&sender) else {
            return;
        };
        let window = self.config.window;
        let due = inbound.delivered.saturating_sub(inbound.acked)
            >= (window.envelopes as u64 / 8).max(1)
            || inbound.bytes_since_ack >= window.bytes / 8;
        if due {
            let ack = inbound.ack(self.token, self.busy, now_ns);
            self.outbox.push_back((sender, ack));
        }
    }

    /// The periodic work: acknowledgements, NACK repeats, gaps given up (counted
    /// through `sink`, which also gets what they release).
    pub fn handle_timeout(&mut self, now_ns: u64, sink: &mut impl Sink<K, T>) {
        let config = self.config;
        for inbound in self.senders.values_mut() {
            if std::mem::take(&mut inbound.touched) {
                inbound.heard_ns = now_ns;
            }
        }
        self.senders.retain(|_, inbound| {
            now_ns.saturating_sub(inbound.heard_ns) < config.sender_quiet_ns
                || !inbound.pending.is_empty()
        });
        let (token, busy) = (self.token, self.busy);
        for (sender, inbound) in self.senders.iter_mut() {
            if !inbound.pending.is_empty()
                && now_ns.saturating_sub(inbound.gap_progress_ns) >= config.gap_giveup_ns
            {
                inbound.skip_gap(*sender, GiveUp::Timeout, now_ns, sink);
            }
            if !inbound.pending.is_empty()
                && inbound
                    .nacked_ns
                    .is_none_or(|at| now_ns.saturating_sub(at) >= config.nack_retry_ns)
            {
                inbound.nacked_ns = Some(now_ns);
                let nack = inbound.nack(token);
                if let Control::Nack { last, .. } = nack {
                    inbound.nacked_upto = inbound.nacked_upto.max(last);
                }
                self.outbox.push_back((*sender, nack));
            }
            let since_ack = now_ns.saturating_sub(inbound.acked_ns);
            let progress = inbound.delivered > inbound.acked;
            if (progress && since_ack >= config.ack_interval_ns) || since_ack >= config.keepalive_ns
            {
                self.outbox
                    .push_back((*sender, inbound.ack(token, busy, now_ns)));
            }
        }
    }

    /// Says goodbye to every sender heard from: they stop waiting for us.
    pub fn goodbye(&mut self) {
        let token = self.token;
        let senders: Vec<K> = self.senders.keys().copied().collect();
        self.outbox
            .extend(senders.into_iter().map(|s| (s, Control::Bye { token })));
    }

    /// The next control message to send, with the sender it is for.
    pub fn poll_control(&mut self) -> Option<(K, Control)> {
        self.outbox.pop_front()
    }

    /// Up to which `seq` everything of `sender` was delivered or given up (`None`
    /// when never heard of, or forgotten after a long silence).
    pub fn delivered(&self, sender: K) -> Option<u64> {
        self.senders.get(&sender).map(|i| i.delivered)
    }

    /// How many envelopes of `sender` wait behind a gap.
    pub fn pending_len(&self, sender: K) -> usize {
        self.senders.get(&sender).map_or(0, |i| i.pending.len())
    }

    /// How many envelopes wait behind gaps, over every sender.
    pub fn pending_total(&self) -> usize {
        self.senders.values().map(|i| i.pending.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log {
        delivered: Vec<(u8, u64)>,
        lost: Vec<(u8, u64, u64, GiveUp)>,
    }

    impl Sink<u8, u64> for Log {
        fn deliver(&mut self, sender: u8, seq: u64, item: u64) {
            assert_eq!(seq, item);
            self.delivered.push((sender, seq));
        }
        fn lost(&mut self, sender: u8, first: u64, last: u64, why: GiveUp) {
            self.lost.push((sender, first, last, why));
        }
    }

    fn config(envelopes: usize) -> FlowConfig {
        FlowConfig::new(Window {
            envelopes,
            bytes: 1 << 20,
        })
    }

    fn arrival(seq: u64, retransmitted: bool) -> Arrival<u8> {
        Arrival {
            sender: 1,
            seq,
            bytes: 10,
            retransmitted,
        }
    }

    #[test]
    fn a_hole_is_nacked_filled_by_the_sender_and_delivered_in_order() {
        let mut sender = Sender::<u64>::new(config(8));
        let mut receiver = Receiver::<u8, u64>::new(7, config(8));
        let mut log = Log::default();
        for seq in 1..=4 {
            assert!(sender.has_credit());
            sender.keep(seq, seq, 10);
        }
        receiver.handle_envelope(0, arrival(1, false), 1, &mut log);
        // 2 is lost; 3 opens a hole.
        receiver.handle_envelope(1, arrival(3, false), 3, &mut log);
        let mut nack = None;
        while let Some((_, c)) = receiver.poll_control() {
            sender.handle_control(2, c);
            if matches!(c, Control::Nack { .. }) {
                nack = Some(c);
            }
        }
        assert_eq!(
            nack,
            Some(Control::Nack {
                token: 7,
                first: 2,
                last: 2
            })
        );
        let retx = sender.poll_retransmission().expect("a retransmission");
        assert_eq!(retx.token, 7);
        assert_eq!(retx.items, vec![(2, 2)]);
        for (seq, item) in retx.items {
            receiver.handle_envelope(3, arrival(seq, true), item, &mut log);
        }
        receiver.handle_envelope(4, arrival(4, false), 4, &mut log);
        assert_eq!(log.delivered, vec![(1, 1), (1, 2), (1, 3), (1, 4)]);
        assert!(log.lost.is_empty());
        // A duplicate is refused.
        assert_eq!(
            receiver.handle_envelope(5, arrival(3, true), 3, &mut log),
            Admission::Duplicate
        );
    }

    #[test]
    fn a_hole_nobody_fills_is_counted_after_the_give_up_delay() {
        let c = config(8);
        let mut receiver = Receiver::<u8, u64>::new(7, c);
        let mut log = Log::default();
        receiver.handle_envelope(0, arrival(1, false), 1, &mut log);
        receiver.handle_envelope(0, arrival(5, false), 5, &mut log);
        receiver.handle_timeout(c.gap_giveup_ns - 1, &mut log);
        assert!(log.lost.is_empty());
        receiver.handle_timeout(c.gap_giveup_ns, &mut log);
        assert_eq!(log.lost, vec![(1, 2, 4, GiveUp::Timeout)]);
        assert_eq!(log.delivered, vec![(1, 1), (1, 5)]);
        assert_eq!(receiver.pending_len(1), 0);
    }

    #[test]
    fn the_window_stops_a_sender_until_the_slowest_receiver_acknowledges() {
        let mut sender = Sender::<u64>::new(config(4));
        sender.handle_control(
            0,
            Control::Ack {
                token: 1,
                seq: 0,
                busy: false,
            },
        );
        for seq in 1..=4 {
            assert!(sender.has_credit());
            assert_eq!(sender.keep(seq, seq, 10), Some(seq));
        }
        assert!(!sender.has_credit());
        sender.handle_control(
            1,
            Control::Ack {
                token: 1,
                seq: 2,
                busy: false,
            },
        );
        assert!(sender.has_credit());
        assert_eq!(sender.kept_len(), 2);
        // A silent receiver is given up after the peer timeout, and its data dropped.
        let c = config(4);
        assert!(sender.give_up_silent(c.peer_timeout_ns).is_empty());
        let gone = sender.give_up_silent(1 + c.peer_timeout_ns);
        assert_eq!(
            gone,
            vec![GivenUp {
                token: 1,
                acked: 2,
                last: 4
            }]
        );
        assert!(sender.all_acknowledged());
    }

    #[test]
    fn a_lost_tail_is_retransmitted_after_the_delay() {
        let c = config(8);
        let mut sender = Sender::<u64>::new(c);
        sender.handle_control(
            0,
            Control::Ack {
                token: 3,
                seq: 0,
                busy: false,
            },
        );
        sender.keep(1, 1, 10);
        sender.keep(2, 2, 10);
        sender.handle_timeout(c.retx_after_ns - 1);
        assert!(sender.poll_retransmission().is_none());
        sender.handle_timeout(c.retx_after_ns);
        assert_eq!(
            sender.poll_retransmission(),
            Some(Retransmission {
                token: 3,
                items: vec![(1, 1), (2, 2)]
            })
        );
    }
}

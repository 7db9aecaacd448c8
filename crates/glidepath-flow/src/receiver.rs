//! The receiving half: one [`Receiver`]'s view of every sender (order, holes,
//! acknowledgements, NACKs, holes given up) and the [`Sink`] it delivers into.

use std::collections::{BTreeMap, VecDeque};

use crate::{Control, FlowConfig};

/// Where an envelope came from: its sender and `seq`, its encoded size, whether it
/// came as a retransmission, and whether the holes it reveals may be ones the sender
/// will say were not for this receiver ([`Receiver::handle_skip`]).
#[derive(Clone, Copy, Debug)]
pub struct Arrival<K> {
    pub sender: K,
    pub seq: u64,
    pub bytes: usize,
    pub retransmitted: bool,
    /// A hole below this envelope may be skipped rather than lost (the envelope came
    /// on a subject only some receivers read, so the sender's other envelopes there
    /// went elsewhere): it is not asked for at once, only after
    /// [`FlowConfig::nack_retry_ns`] if nothing explained it meanwhile.
    pub deferred: bool,
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
    /// Its sender said it no longer keeps it ([`Receiver::handle_gone`]).
    Gone,
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
    /// Up to which `seq` the sender said it no longer keeps what we lack.
    gone_upto: u64,
    /// When the open gap last saw progress (it opened, a retransmission arrived, or
    /// the reader was busy and not reading).
    gap_progress_ns: u64,
    /// The sender left for good: once quiet, its position is not remembered.
    departed: bool,
}

impl<T> Inbound<T> {
    fn new(delivered: u64, acked: u64, now_ns: u64) -> Inbound<T> {
        Inbound {
            delivered,
            pending: BTreeMap::new(),
            acked,
            bytes_since_ack: 0,
            acked_ns: now_ns,
            heard_ns: now_ns,
            touched: false,
            nacked_ns: None,
            nacked_upto: 0,
            gone_upto: 0,
            gap_progress_ns: now_ns,
            departed: false,
        }
    }

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

/// How many quiet senders a receiver remembers the position of (see
/// [`Receiver::handle_timeout`]): a `seq` and a time each, the oldest forgotten first.
pub const QUIET_SENDERS_MAX: usize = 4096;

/// One reader's view of every sender it hears from, keyed by `K`, holding items `T`.
pub struct Receiver<K, T> {
    token: u64,
    config: FlowConfig,
    senders: BTreeMap<K, Inbound<T>>,
    /// Senders quiet for [`FlowConfig::sender_quiet_ns`], whose state was dropped:
    /// up to which `seq` they were delivered, and when they were dropped. Their next
    /// envelope resumes the stream there (a hole before it is asked for) instead of
    /// starting it afresh, which would skip, uncounted, an envelope lost right after
    /// the silence.
    quiet: BTreeMap<K, (u64, u64)>,
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
            quiet: BTreeMap::new(),
            outbox: VecDeque::new(),
            busy: false,
        }
    }

    /// `sender` left for good (its resignation was announced): its stream is kept
    /// until it has been quiet as any other's, so its last envelopes still in flight
    /// are delivered in order, but its position is then forgotten rather than
    /// remembered among the quiet senders' (it will never send again). Without this,
    /// every departed sender's position stays until [`QUIET_SENDERS_MAX`] pushes it
    /// out: a long run with churn grows by that much.
    pub fn sender_departed(&mut self, sender: K) {
        if self.quiet.remove(&sender).is_none() {
            if let Some(inbound) = self.senders.get_mut(&sender) {
                inbound.departed = true;
            }
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
            deferred,
        } = arrival;
        let token = self.token;
        let inbound = match self.senders.entry(sender) {
            std::collections::btree_map::Entry::Occupied(o) => o.into_mut(),
            std::collections::btree_map::Entry::Vacant(v) if self.quiet.contains_key(&sender) => {
                // A sender heard from again after a long silence: its stream goes on
                // from where it stood.
                let (delivered, _) = self.quiet.remove(&sender).unwrap_or_default();
                v.insert(Inbound::new(delivered, delivered, now_ns))
            }
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
                v.insert(Inbound::new(seq.saturating_sub(1), seq, now_ns))
            }
        };
        inbound.touched = true;
        if seq == inbound.delivered + 1 && inbound.pending.is_empty() {
            inbound.delivered = seq;
            inbound.gap_progress_ns = now_ns;
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
            inbound.pending.insert(seq, (item, bytes));
            // A new hole ends just below this envelope: ask for it at once (holes
            // asked for already are repeated by the timer).
            let new_hole = seq - 1 > inbound.nacked_upto.max(inbound.delivered)
                && !inbound.pending.contains_key(&(seq - 1));
            if new_hole && deferred {
                // Perhaps not ours at all: the timer asks, unless a skip comes first.
                inbound.nacked_ns.get_or_insert(now_ns);
            } else if new_hole {
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
        if deferred && !inbound.pending.is_empty() {
            // The hole now lowest is another one, perhaps not ours either.
            inbound.nacked_ns = Some(now_ns);
        }
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
        let quiet = &mut self.quiet;
        self.senders.retain(|sender, inbound| {
            let keep = now_ns.saturating_sub(inbound.heard_ns) < config.sender_quiet_ns
                || !inbound.pending.is_empty();
            if !keep && !inbound.departed {
                quiet.insert(*sender, (inbound.delivered, now_ns));
            }
            keep
        });
        if self.quiet.len() > QUIET_SENDERS_MAX {
            let mut by_age: Vec<(u64, K)> =
                self.quiet.iter().map(|(k, (_, at))| (*at, *k)).collect();
            by_age.sort_unstable();
            let excess = self.quiet.len() - QUIET_SENDERS_MAX;
            for (_, k) in by_age.into_iter().take(excess) {
                self.quiet.remove(&k);
            }
        }
        let (token, busy) = (self.token, self.busy);
        for (sender, inbound) in self.senders.iter_mut() {
            if busy && (!inbound.pending.is_empty() || inbound.delivered < inbound.gone_upto) {
                // A reader that has stopped reading cannot see the repair that waits
                // in its queue: the give-up clock stands still meanwhile.
                inbound.gap_progress_ns = now_ns;
            }
            if !inbound.pending.is_empty()
                && now_ns.saturating_sub(inbound.gap_progress_ns) >= config.gap_giveup_ns
            {
                // Counted as gone when the sender said it no longer keeps the hole.
                let hole_end = inbound.pending.keys().next().map_or(0, |k| k - 1);
                let why = if hole_end <= inbound.gone_upto {
                    GiveUp::Gone
                } else {
                    GiveUp::Timeout
                };
                inbound.skip_gap(*sender, why, now_ns, sink);
            }
            if !busy
                && inbound.pending.is_empty()
                && inbound.delivered < inbound.gone_upto
                && now_ns.saturating_sub(inbound.gap_progress_ns) >= config.gap_giveup_ns
            {
                // A tail the sender no longer keeps, and nothing of it came since.
                sink.lost(
                    *sender,
                    inbound.delivered + 1,
                    inbound.gone_upto,
                    GiveUp::Gone,
                );
                inbound.delivered = inbound.gone_upto;
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

    /// Takes a sender's word that it no longer keeps `first..=last` (every receiver
    /// it knew of had them). Some may still be on their way, so nothing is skipped
    /// at once: a hole there is given up after the give-up delay as any other (and
    /// counted as [`GiveUp::Gone`]); what is new is the tail with nothing held after
    /// it, which no later envelope would reveal, given up after the same delay
    /// without any of it arriving.
    pub fn handle_gone(&mut self, now_ns: u64, sender: K, first: u64, last: u64) {
        let Some(inbound) = self.senders.get_mut(&sender) else {
            return;
        };
        if first > last || last <= inbound.delivered.max(inbound.gone_upto) {
            return;
        }
        inbound.gone_upto = last;
        if inbound.pending.is_empty() {
            inbound.gap_progress_ns = now_ns;
        }
    }

    /// Takes a sender's word that `first..=last` holds nothing for this receiver
    /// (envelopes it sent on subjects this receiver does not read): what of the range
    /// was neither delivered nor is held is passed over without being counted lost,
    /// and what waited behind it is released. An envelope of the range that arrives
    /// later is dropped as a duplicate. A sender never heard of is ignored (its first
    /// envelope starts its stream).
    pub fn handle_skip(
        &mut self,
        now_ns: u64,
        sender: K,
        first: u64,
        last: u64,
        sink: &mut impl Sink<K, T>,
    ) where
        T: Default,
    {
        let Some(inbound) = self.senders.get_mut(&sender) else {
            return;
        };
        let from = first.max(inbound.delivered + 1);
        if from > last {
            return;
        }
        // Bounded by what a window can hold; a larger claim is not believed.
        if last - from > (self.config.window.envelopes.max(1) as u64) * 2 {
            return;
        }
        for seq in from..=last {
            inbound.pending.entry(seq).or_insert((T::default(), 0));
        }
        inbound.gap_progress_ns = now_ns;
        inbound.release(sender, sink);
        if inbound.pending.is_empty() {
            inbound.nacked_upto = inbound.nacked_upto.max(last);
        } else {
            // What is held now waits behind holes after the range: perhaps skipped
            // by the next account too.
            inbound.nacked_ns = Some(now_ns);
        }
        self.ack_if_due(sender, now_ns);
    }

    /// Asks for the holes of `sender` at the next timeout instead of after the NACK
    /// retry delay (a hole deferred by [`Arrival::deferred`] turned out to be real).
    pub fn expedite_nack(&mut self, sender: K) {
        if let Some(inbound) = self.senders.get_mut(&sender) {
            if !inbound.pending.is_empty() {
                inbound.nacked_ns = None;
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

    /// How many envelopes of `sender` wait behind a gap (with the `seq`s passed over
    /// by [`Receiver::handle_skip`] that wait there too).
    pub fn pending_len(&self, sender: K) -> usize {
        self.senders.get(&sender).map_or(0, |i| i.pending.len())
    }

    /// How many envelopes of `sender` wait behind a gap, without the `seq`s passed
    /// over (held as zero-byte markers; an envelope has at least one byte).
    pub fn held_len(&self, sender: K) -> usize {
        self.senders
            .get(&sender)
            .map_or(0, |i| i.pending.values().filter(|(_, b)| *b > 0).count())
    }

    /// How many quiet senders' positions are remembered (at most
    /// [`QUIET_SENDERS_MAX`]).
    pub fn quiet_len(&self) -> usize {
        self.quiet.len()
    }

    /// How many envelopes wait behind gaps, over every sender.
    pub fn pending_total(&self) -> usize {
        self.senders.values().map(|i| i.pending.len()).sum()
    }
}

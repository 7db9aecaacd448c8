//! The sending half: what one [`Sender`] keeps for its receivers, its window, its
//! retransmissions and the receivers it gives up.

use std::collections::{BTreeMap, VecDeque};

use crate::{Control, FlowConfig};

/// Kept envelopes' room is given back once it is four times what is kept, above
/// this many.
const SHRINK_ABOVE: usize = 4096;

struct Kept<T> {
    seq: u64,
    weight: usize,
    item: T,
    /// When it was published.
    sent_ns: u64,
    /// Whether it was sent again since (an acknowledgement of it then measures no
    /// round trip: Karn's rule).
    resent: bool,
}

struct Peer {
    acked: u64,
    busy: bool,
    heard_ns: u64,
    /// When `acked` last moved, data became outstanding, or we last retransmitted
    /// to it: the retransmission timer runs from here.
    moved_ns: u64,
    /// The retransmission timeout: [`FlowConfig::retx_after_ns`] at first, then
    /// the smoothed round trip plus four deviations (RFC 6298), never below
    /// `retx_after_ns`; doubled after each unasked retransmission up to
    /// [`FlowConfig::retx_max_ns`], and kept so until a new sample.
    rto_ns: u64,
    /// Smoothed round trip from publication to acknowledgement, and its deviation.
    srtt_ns: Option<u64>,
    rttvar_ns: u64,
}

impl Peer {
    fn new(acked: u64, busy: bool, now_ns: u64, config: &FlowConfig) -> Peer {
        Peer {
            acked,
            busy,
            heard_ns: now_ns,
            moved_ns: now_ns,
            rto_ns: config.retx_after_ns,
            srtt_ns: None,
            rttvar_ns: 0,
        }
    }

    /// Takes one round-trip sample and recomputes the timeout (RFC 6298 2.2–2.3).
    fn sample(&mut self, rtt_ns: u64, config: &FlowConfig) {
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(rtt_ns);
                self.rttvar_ns = rtt_ns / 2;
            }
            Some(srtt) => {
                self.rttvar_ns = (3 * self.rttvar_ns + srtt.abs_diff(rtt_ns)) / 4;
                self.srtt_ns = Some((7 * srtt + rtt_ns) / 8);
            }
        }
        let computed = self
            .srtt_ns
            .map_or(0, |srtt| srtt.saturating_add(4 * self.rttvar_ns));
        let max_ns = config.retx_max_ns.max(config.retx_after_ns);
        self.rto_ns = computed.clamp(config.retx_after_ns, max_ns);
    }
}

/// Envelopes to send again to one receiver, in `seq` order, and what it asked for
/// that is no longer kept.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Retransmission<T> {
    pub token: u64,
    pub items: Vec<(u64, T)>,
    /// `first..=last`, published but no longer kept (every receiver known then had
    /// it): the receiver counts what it lacks of it as lost
    /// ([`crate::Receiver::handle_gone`]) instead of waiting for it.
    pub gone: Option<(u64, u64)>,
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

    /// Keeps an envelope (`bytes` long) published at `now_ns` until every receiver
    /// has it. Call it only with credit ([`Sender::has_credit`]). Returns how many
    /// envelopes the slowest receiver now lags behind, `None` while no receiver is
    /// known.
    pub fn keep(&mut self, seq: u64, item: T, bytes: usize, now_ns: u64) -> Option<u64> {
        // A receiver that had everything starts waiting now: its retransmission
        // timer runs from here, not from its last acknowledgement, which may be old.
        for peer in self.peers.values_mut() {
            if peer.acked >= self.last_seq {
                peer.moved_ns = now_ns;
            }
        }
        let acked = self.min_acked();
        let weight = bytes + std::mem::size_of::<Kept<T>>();
        self.kept_bytes += weight;
        self.kept.push_back(Kept {
            seq,
            weight,
            item,
            sent_ns: now_ns,
            resent: false,
        });
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
                let config = self.config;
                if !self.peers.contains_key(&token) {
                    // A receiver we did not know (it started late, or was given up):
                    // what it still lacks and we no longer keep, it will never get.
                    if let Some(gone) = self.gone_of(seq + 1, self.last_seq) {
                        self.retransmissions.push_back(Retransmission {
                            token,
                            items: Vec::new(),
                            gone: Some(gone),
                        });
                    }
                }
                let peer = self
                    .peers
                    .entry(token)
                    .or_insert_with(|| Peer::new(seq, busy, now_ns, &config));
                if seq > peer.acked {
                    peer.acked = seq;
                    peer.moved_ns = now_ns;
                    // The newest envelope it acknowledges, if kept and sent once,
                    // measures the round trip (queueing on a slow link included).
                    // Progress without a sample keeps any back-off (Karn).
                    let at = self.kept.partition_point(|k| k.seq < seq);
                    if let Some(k) = self.kept.get(at) {
                        if k.seq == seq && !k.resent {
                            peer.sample(now_ns.saturating_sub(k.sent_ns), &config);
                        }
                    }
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

    /// The periodic work: gives up silent receivers (returned), and for every
    /// receiver whose acknowledgement has not moved for its retransmission timeout
    /// (unless it said it is busy) queues its first unacknowledged envelope and the
    /// last one published; the timeout then doubles until a new round-trip sample.
    ///
    /// Not the whole tail: on a slow link the "stalled" tail is usually still on
    /// its way, and sending it again would double the queue. The first envelope
    /// repairs a lost head; the last one, if the tail was lost, shows the receiver a
    /// gap, which it NACKs.
    pub fn handle_timeout(&mut self, now_ns: u64) -> Vec<GivenUp> {
        let gone = self.give_up_silent(now_ns);
        let last = self.last_seq;
        let max_ns = self.config.retx_max_ns.max(self.config.retx_after_ns);
        let mut due = Vec::new();
        for (token, peer) in self.peers.iter_mut() {
            if peer.acked < last
                && !peer.busy
                && now_ns.saturating_sub(peer.moved_ns) >= peer.rto_ns
            {
                peer.moved_ns = now_ns;
                peer.rto_ns = peer.rto_ns.saturating_mul(2).min(max_ns);
                due.push((*token, peer.acked + 1));
            }
        }
        for (token, first) in due {
            let gone = self.gone_of(first, last);
            let from = gone.map_or(first, |(_, l)| l + 1);
            let mut items = self.take_range(from, from);
            if last > from {
                items.extend(self.take_range(last, last));
            }
            if !items.is_empty() || gone.is_some() {
                self.retransmissions
                    .push_back(Retransmission { token, items, gone });
            }
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

    /// Room for kept envelopes (the store's capacity): given back after a backlog.
    pub fn kept_capacity(&self) -> usize {
        self.kept.capacity()
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
        // A backlog (receivers away while a NATS node restarted, say) grows the store
        // to its size; once it is acknowledged, the room goes back, so a process does
        // not keep its worst moment's memory for the rest of the run.
        if self.kept.capacity() > SHRINK_ABOVE && self.kept.len() < self.kept.capacity() / 4 {
            self.kept.shrink_to(self.kept.len() * 2);
        }
    }

    fn pop(&mut self) {
        if let Some(k) = self.kept.pop_front() {
            self.kept_bytes -= k.weight;
        }
    }

    /// Queues up to a batch of kept envelopes from `first` to `last` for `token`,
    /// and what of that range is no longer kept.
    fn queue_range(&mut self, token: u64, first: u64, last: u64) {
        let gone = self.gone_of(first, last);
        let items = self.take_range(first, last);
        if !items.is_empty() || gone.is_some() {
            self.retransmissions
                .push_back(Retransmission { token, items, gone });
        }
    }

    /// The part of `first..=last` that was published and is no longer kept.
    fn gone_of(&self, first: u64, last: u64) -> Option<(u64, u64)> {
        let oldest_kept = self.kept.front().map_or(self.last_seq + 1, |k| k.seq);
        let last = last.min(self.last_seq).min(oldest_kept - 1);
        (first >= 1 && first <= last).then_some((first, last))
    }

    /// Up to a batch of kept envelopes from `first` to `last`, marked as sent again.
    fn take_range(&mut self, first: u64, last: u64) -> Vec<(u64, T)> {
        let start = self.kept.partition_point(|k| k.seq < first);
        self.kept
            .range_mut(start..)
            .take_while(|k| k.seq <= last)
            .take(self.config.retx_batch)
            .map(|k| {
                k.resent = true;
                (k.seq, k.item.clone())
            })
            .collect()
    }
}

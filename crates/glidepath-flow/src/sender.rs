//! The sending half: what one [`Sender`] keeps for its receivers, its window, its
//! retransmissions and the receivers it gives up.

use std::collections::{BTreeMap, VecDeque};

use crate::{Control, FlowConfig};

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

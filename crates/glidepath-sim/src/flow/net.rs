//! The flow simulator's faulty packet network (TigerBeetle's packet simulator, in
//! small): every packet may be lost, duplicated or held back (which reorders it past
//! later packets), and a partition cuts some links for a while, then heals.
//!
//! Events — packets in flight and the nodes' own timers — wait in one heap ordered
//! by (time, insertion order), so the same seed pops them in the same order.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use glidepath_flow::Control;
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Something that happens at a point of virtual time.
#[derive(Clone, Debug)]
pub(crate) enum Event {
    /// Sender `0` wants to publish its next envelope.
    Publish(usize),
    /// Sender `0`'s periodic work.
    SenderTick(usize),
    /// Receiver `0`'s periodic work.
    ReceiverTick(usize),
    /// Sender `0` stops for good.
    Crash(usize),
    /// Receiver `0` stops reading (its inbox is full): what reaches it waits.
    Busy(usize),
    /// Receiver `0` reads again.
    Unbusy(usize),
    /// Receiver `0` is gone for good (its process died): it reads and answers nothing.
    ReceiverLost(usize),
    /// An envelope (or a retransmission of one) reaches a receiver.
    Data {
        from: usize,
        to: usize,
        seq: u64,
        item: u64,
        bytes: usize,
        retransmitted: bool,
        /// The cell it came on (`None`: to everyone, or a retransmission).
        cell: Option<u8>,
    },
    /// A sender's account of `(first, upto]`, all sent to cells: how many to each.
    Account {
        from: usize,
        to: usize,
        first: u64,
        upto: u64,
        counts: [u32; 4],
    },
    /// A sender's notice that it no longer keeps `first..=last` reaches a receiver.
    Gone {
        from: usize,
        to: usize,
        first: u64,
        last: u64,
    },
    /// A control message reaches a sender.
    Control {
        from: usize,
        to: usize,
        control: Control,
    },
}

struct Queued {
    at: u64,
    order: u64,
    event: Event,
}

impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.order) == (o.at, o.order)
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.at, self.order).cmp(&(o.at, o.order))
    }
}

/// The faults a network injects, as probabilities per packet.
#[derive(Clone, Copy, Debug)]
pub struct Faults {
    /// A packet vanishes.
    pub loss: f64,
    /// A packet arrives twice (each copy with its own delay).
    pub duplicate: f64,
    /// A packet is held back long enough for later ones to overtake it.
    pub reorder: f64,
}

/// A set of cut links, `(sender, receiver)`, both directions, from `start_ns` until
/// `end_ns`.
#[derive(Clone, Debug)]
pub(crate) struct Partition {
    pub start_ns: u64,
    pub end_ns: u64,
    pub links: Vec<(usize, usize)>,
}

/// What the network did, for the summary.
#[derive(Clone, Copy, Debug, Default)]
pub struct FaultCounts {
    pub losses: u64,
    pub duplicates: u64,
    pub reorders: u64,
    /// Packets dropped because their link was cut.
    pub partition_drops: u64,
}

pub(crate) struct Network {
    heap: BinaryHeap<Reverse<Queued>>,
    order: u64,
    faults: Faults,
    pub(crate) partition: Option<Partition>,
    pub(crate) counts: FaultCounts,
    pub(crate) packets: u64,
}

/// Latency of a packet that is not held back: 100 to 500 µs.
const LATENCY_NS: std::ops::Range<u64> = 100_000..500_000;
/// Extra delay of a packet held back: 1 to 30 ms.
const HOLD_BACK_NS: std::ops::Range<u64> = 1_000_000..30_000_000;

impl Network {
    pub(crate) fn new(faults: Faults, partition: Option<Partition>) -> Network {
        Network {
            heap: BinaryHeap::new(),
            order: 0,
            faults,
            partition,
            counts: FaultCounts::default(),
            packets: 0,
        }
    }

    /// Queues a local event (a timer, a crash): never faulty.
    pub(crate) fn at(&mut self, at: u64, event: Event) {
        self.order += 1;
        self.heap.push(Reverse(Queued {
            at,
            order: self.order,
            event,
        }));
    }

    /// The next event, with its time.
    pub(crate) fn pop(&mut self) -> Option<(u64, Event)> {
        self.heap.pop().map(|Reverse(q)| (q.at, q.event))
    }

    /// Whether the link between `sender` and `receiver` is cut at `now`.
    pub(crate) fn cut(&self, sender: usize, receiver: usize, now: u64) -> bool {
        self.partition.as_ref().is_some_and(|p| {
            now >= p.start_ns && now < p.end_ns && p.links.contains(&(sender, receiver))
        })
    }

    /// Sends a packet on the link between `sender` and `receiver` (either way),
    /// through the faults.
    pub(crate) fn send(
        &mut self,
        rng: &mut ChaCha8Rng,
        now: u64,
        link: (usize, usize),
        event: Event,
    ) {
        self.packets += 1;
        if self.cut(link.0, link.1, now) {
            self.counts.partition_drops += 1;
            return;
        }
        if rng.gen_bool(self.faults.loss) {
            self.counts.losses += 1;
            return;
        }
        let copies = if rng.gen_bool(self.faults.duplicate) {
            self.counts.duplicates += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            let mut delay = rng.gen_range(LATENCY_NS);
            if rng.gen_bool(self.faults.reorder) {
                self.counts.reorders += 1;
                delay += rng.gen_range(HOLD_BACK_NS);
            }
            self.at(now + delay, event.clone());
        }
    }
}

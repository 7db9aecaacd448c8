//! The flow simulator: the NATS backend's reliable delivery (`glidepath_flow`'s
//! [`Sender`] and [`Receiver`], the code `nats/flow.rs` drives in production) run by
//! several senders and receivers over a faulty network (`net.rs`) on a virtual clock.
//!
//! Each seed draws how many senders and receivers there are (1 to 4 each), the
//! window, how much each sender publishes and how fast, and whether a partition cuts
//! some links for a while (then heals), whether a sender crashes and whether a receiver
//! stops reading for a while (its inbox full: what reaches it waits, and its
//! acknowledgements say it is busy), and whether a receiver dies (its senders must give
//! it up and go on). Every packet may be lost, duplicated or held back. Senders and receivers run the production timers
//! (their ticks every 20 and 10 ms, as the NATS driver's).
//!
//! After every step it checks:
//! - **exactly once, in order:** each receiver gets each sender's envelopes with
//!   contiguous `seq`s from the first it heard of, each with the payload published,
//!   except holes it gave up, which must be reported (counted) exactly where they are;
//! - **cells** (half the seeds): a sender sends some envelopes to 1–2 of four cells,
//!   which only the receivers reading one of them get, and accounts for them before
//!   its next envelope to everyone, every eight and when idle; a receiver passes
//!   over what an account says went elsewhere once it holds what it reads of the
//!   range, and never passes over an envelope sent to everyone or to a cell it reads;
//! - **bounded buffers:** a receiver holds at most two windows behind a gap; a sender
//!   keeps at most its window's bytes (plus one envelope) and never runs more than its
//!   window ahead of its slowest known receiver;
//! - **no deadlock:** the run settles — every live sender has published everything
//!   and every receiver has acknowledged it; every receiver has delivered or given up
//!   everything of every live sender, and holds nothing of a crashed one — before
//!   [`FlowSimConfig::max_virtual_ns`].
//!
//! A failure names the seed and the command that replays it.

//!
//! This module holds the configuration, the outcome and the simulator's state;
//! `run.rs` is the run loop (events, publishing, retransmission, control messages),
//! `check.rs` the checkers (the receivers' sink and the bounds and settling checks).

mod check;
mod net;
mod run;

use std::collections::VecDeque;
use std::fmt::Write as _;

use glidepath_flow::{Control, FlowConfig, GiveUp, Receiver, Sender};

use rand_chacha::ChaCha8Rng;

use net::{Event, Network};
pub use net::{FaultCounts, Faults};

/// What to simulate.
#[derive(Clone, Debug)]
pub struct FlowSimConfig {
    pub seed: u64,
    pub faults: Faults,
    /// Whether a partition cuts links for a while; drawn per seed when `None`.
    pub partition: Option<bool>,
    /// Whether a sender crashes; drawn per seed when `None`.
    pub crash: Option<bool>,
    /// Whether a receiver stops reading for a while (its inbox full); drawn per seed
    /// when `None`.
    pub busy: Option<bool>,
    /// Whether a receiver dies (its senders must give it up and go on); drawn per seed
    /// when `None`.
    pub lost_receiver: Option<bool>,
    /// Whether senders send some envelopes to cells that only some receivers read,
    /// and account for them (the NATS backend's DDM cells); drawn per seed when
    /// `None`.
    pub cells: Option<bool>,
    /// The run must settle before this virtual time (the deadlock guard).
    pub max_virtual_ns: u64,
    /// Print every event.
    pub verbose: bool,
}

/// The default fault rates of `glidepath-sim --flow`.
pub const DEFAULT_FAULTS: Faults = Faults {
    loss: 0.05,
    duplicate: 0.02,
    reorder: 0.05,
};

impl FlowSimConfig {
    /// A seed with the default faults, partitions and crashes drawn per seed.
    pub fn for_seed(seed: u64) -> FlowSimConfig {
        FlowSimConfig {
            seed,
            faults: DEFAULT_FAULTS,
            partition: None,
            crash: None,
            busy: None,
            lost_receiver: None,
            cells: None,
            max_virtual_ns: 600_000_000_000,
            verbose: false,
        }
    }

    /// The command that replays this configuration.
    pub fn replay_command(&self) -> String {
        let mut s = format!(
            "cargo run -p glidepath-sim -- --flow --seed {} --loss {} --duplicate {} --reorder {}",
            self.seed, self.faults.loss, self.faults.duplicate, self.faults.reorder
        );
        for (name, v) in [
            ("partition", self.partition),
            ("crash", self.crash),
            ("busy", self.busy),
            ("lost-receiver", self.lost_receiver),
            ("cells", self.cells),
        ] {
            if let Some(v) = v {
                let _ = write!(s, " --{name} {}", if v { "always" } else { "never" });
            }
        }
        s.push_str(" --verbose");
        s
    }
}

/// What one successful run did.
#[derive(Clone, Debug, Default)]
pub struct FlowOutcome {
    pub seed: u64,
    pub senders: usize,
    pub receivers: usize,
    pub window_envelopes: usize,
    pub events: u64,
    /// Envelopes published.
    pub published: u64,
    /// Envelopes delivered, over every receiver.
    pub delivered: u64,
    /// Packets put on the network (envelopes, retransmissions, control messages).
    pub packets: u64,
    pub retransmitted: u64,
    pub controls: u64,
    pub faults: FaultCounts,
    pub partitions: u64,
    /// Periods a receiver spent not reading.
    pub busy_periods: u64,
    /// Receivers that died, and what their senders published after the last each had.
    pub receivers_lost: u64,
    pub lost_receiver_tails: u64,
    pub crashes: u64,
    /// Envelopes counted lost by receivers (holes given up), and in how many holes.
    pub lost: u64,
    pub holes: u64,
    /// Holes given up because more than two windows waited behind them.
    pub overflows: u64,
    /// Holes counted at a sender's word that it no longer keeps them.
    pub gone: u64,
    /// Such words sent by senders.
    pub gone_notices: u64,
    /// Copies receivers recognised as duplicates and dropped.
    pub duplicates_dropped: u64,
    /// Envelopes before a receiver's first contact with a sender (the stream starts
    /// at the first envelope a receiver gets: what came before is not asked for).
    pub before_first_contact: u64,
    /// Envelopes a crashed sender published after the last one a receiver heard of:
    /// nobody can know of them.
    pub crash_tails: u64,
    /// Receivers a sender stopped waiting for (silent too long).
    pub receivers_given_up: u64,
    /// Publications that waited for credit.
    pub credit_waits: u64,
    /// The most envelopes any receiver held behind a gap.
    pub pending_max: usize,
    /// Envelopes receivers passed over on a sender's account (sent to cells they do
    /// not read), and the accounts senders sent.
    pub skipped: u64,
    pub accounts: u64,
    /// Of the envelopes counted lost, those sent to cells the receiver does not read.
    pub lost_not_wanted: u64,
    pub virtual_time_ns: u64,
}

impl FlowOutcome {
    /// Adds another run's counts to these (for a batch's summary).
    pub fn add(&mut self, o: &FlowOutcome) {
        self.events += o.events;
        self.published += o.published;
        self.delivered += o.delivered;
        self.packets += o.packets;
        self.retransmitted += o.retransmitted;
        self.controls += o.controls;
        self.faults.losses += o.faults.losses;
        self.faults.duplicates += o.faults.duplicates;
        self.faults.reorders += o.faults.reorders;
        self.faults.partition_drops += o.faults.partition_drops;
        self.partitions += o.partitions;
        self.busy_periods += o.busy_periods;
        self.receivers_lost += o.receivers_lost;
        self.lost_receiver_tails += o.lost_receiver_tails;
        self.crashes += o.crashes;
        self.lost += o.lost;
        self.holes += o.holes;
        self.overflows += o.overflows;
        self.gone += o.gone;
        self.gone_notices += o.gone_notices;
        self.duplicates_dropped += o.duplicates_dropped;
        self.before_first_contact += o.before_first_contact;
        self.crash_tails += o.crash_tails;
        self.receivers_given_up += o.receivers_given_up;
        self.credit_waits += o.credit_waits;
        self.pending_max = self.pending_max.max(o.pending_max);
        self.skipped += o.skipped;
        self.accounts += o.accounts;
        self.lost_not_wanted += o.lost_not_wanted;
        self.virtual_time_ns = self.virtual_time_ns.max(o.virtual_time_ns);
    }
}

/// A violated invariant (or deadlock), with the command that replays it.
pub type FlowFailure = crate::ProtocolFailure;

/// Runs one seeded flow simulation, checking every invariant after every step.
pub fn run_flow(config: &FlowSimConfig) -> Result<FlowOutcome, FlowFailure> {
    FlowSim::new(config).run()
}

const SENDER_TICK_NS: u64 = 20_000_000;
const RECEIVER_TICK_NS: u64 = glidepath_flow::ACK_INTERVAL.as_nanos() as u64;
const TRACE_EVENTS: usize = 40;

/// The payload of `seq` from `sender`: receivers check they got exactly this.
fn payload(sender: usize, seq: u64) -> u64 {
    (sender as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ seq.wrapping_mul(0xBF58_476D_1CE4_E5B9)
}

struct SimSender {
    /// Keeps each envelope's payload and size.
    protocol: Sender<(u64, usize)>,
    /// How many envelopes it publishes in all.
    total: u64,
    /// Sizes of its envelopes, drawn per publish.
    bytes_max: usize,
    /// Mean gap between publishes.
    interval_ns: u64,
    published: u64,
    /// Waits for credit.
    blocked: bool,
    crashed: bool,
    /// A publish event is queued.
    publish_queued: bool,
    /// Cell envelopes not yet accounted for: the range `(from, upto]` and the
    /// envelopes per cell.
    account: Option<(u64, u64, [u32; CELLS])>,
}

/// Cells a sender may send to in a cells seed.
const CELLS: usize = 4;

/// What a receiver got from one sender, as the checker sees it.
#[derive(Clone, Copy, Debug, Default)]
struct Track {
    /// The first `seq` delivered (first contact).
    first: Option<u64>,
    /// Every `seq` from `first` to here was delivered or reported lost.
    upto: u64,
    delivered: u64,
    lost: u64,
}

struct SimReceiver {
    /// Items are payloads; `None` is what a skip passes over.
    protocol: Receiver<usize, Option<u64>>,
    tracks: Vec<Track>,
    /// The cells it reads (a bit each).
    cells: u8,
    /// Per sender: the cells each `seq` arrived on, until an account covers it.
    arrivals: Vec<std::collections::BTreeMap<u64, u8>>,
    /// Not reading (a full inbox): data, accounts and notices for it wait in `parked`,
    /// as messages wait in a subscription nobody reads.
    busy: bool,
    parked: VecDeque<Event>,
    /// Gone for good: nothing reaches it, and nothing is owed to it.
    lost: bool,
}

/// One traced event, kept as data and written out only on failure or `--verbose`.
// Its fields are read through `Debug` only, when a trace is printed.
#[allow(dead_code)]
#[derive(Clone, Debug)]
enum Traced {
    Event(Event),
    Published {
        sender: usize,
        seq: u64,
        lag: Option<u64>,
    },
    Blocked(usize),
    Sent {
        to_sender: usize,
        control: Control,
    },
    Retransmit {
        sender: usize,
        to: usize,
        first: u64,
        count: usize,
    },
    Gone {
        sender: usize,
        to: usize,
        first: u64,
        last: u64,
    },
    GaveUp {
        sender: usize,
        receiver: usize,
    },
    Lost {
        receiver: usize,
        sender: usize,
        first: u64,
        last: u64,
        why: GiveUp,
    },
    Skipped {
        receiver: usize,
        sender: usize,
        first: u64,
        last: u64,
    },
    Incomplete {
        receiver: usize,
        sender: usize,
    },
}

struct FlowSim {
    cfg: FlowSimConfig,
    rng: ChaCha8Rng,
    net: Network,
    flow: FlowConfig,
    senders: Vec<SimSender>,
    receivers: Vec<SimReceiver>,
    /// Receiver tokens, by receiver index.
    tokens: Vec<u64>,
    published: Vec<u64>,
    /// Per sender, where each envelope went, by `seq − 1`: 0 to every receiver, else
    /// the cells (kept here, beside `published`, for the checker to borrow).
    dest: Vec<Vec<u8>>,
    crash: Option<(usize, u64)>,
    now: u64,
    out: FlowOutcome,
    violation: Option<String>,
    notes: Vec<Traced>,
    trace: VecDeque<(u64, Traced)>,
    /// Whether this seed sends to cells.
    cells: bool,
}

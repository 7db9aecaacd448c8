//! The flow simulator: the NATS backend's reliable delivery (`glidepath_flow`'s
//! [`Sender`] and [`Receiver`], the code `nats/flow.rs` drives in production) run by
//! several senders and receivers over a faulty network ([`net`]) on a virtual clock.
//!
//! Each seed draws how many senders and receivers there are (1 to 4 each), the
//! window, how much each sender publishes and how fast, and whether a partition cuts
//! some links for a while (then heals) and whether a sender crashes. Every packet may
//! be lost, duplicated or held back. Senders and receivers run the production timers
//! (their ticks every 20 and 10 ms, as the NATS driver's).
//!
//! After every step it checks:
//! - **exactly once, in order:** each receiver gets each sender's envelopes with
//!   contiguous `seq`s from the first it heard of, each with the payload published,
//!   except holes it gave up, which must be reported (counted) exactly where they are;
//! - **bounded buffers:** a receiver holds at most two windows behind a gap; a sender
//!   keeps at most its window's bytes (plus one envelope) and never runs more than its
//!   window ahead of its slowest known receiver;
//! - **no deadlock:** the run settles — every live sender has published everything
//!   and every receiver has acknowledged it; every receiver has delivered or given up
//!   everything of every live sender, and holds nothing of a crashed one — before
//!   [`FlowSimConfig::max_virtual_ns`].
//!
//! A failure names the seed and the command that replays it.

mod net;

use std::collections::VecDeque;
use std::fmt::Write as _;

use glidepath_flow::{
    Admission, Arrival, Control, FlowConfig, GiveUp, Receiver, Sender, Sink, Window,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use net::{Event, Network, Partition};
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
        for (name, v) in [("partition", self.partition), ("crash", self.crash)] {
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
    pub crashes: u64,
    /// Envelopes counted lost by receivers (holes given up), and in how many holes.
    pub lost: u64,
    pub holes: u64,
    /// Holes given up because more than two windows waited behind them.
    pub overflows: u64,
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
        self.crashes += o.crashes;
        self.lost += o.lost;
        self.holes += o.holes;
        self.overflows += o.overflows;
        self.duplicates_dropped += o.duplicates_dropped;
        self.before_first_contact += o.before_first_contact;
        self.crash_tails += o.crash_tails;
        self.receivers_given_up += o.receivers_given_up;
        self.credit_waits += o.credit_waits;
        self.pending_max = self.pending_max.max(o.pending_max);
        self.virtual_time_ns = self.virtual_time_ns.max(o.virtual_time_ns);
    }
}

/// A violated invariant (or deadlock), with the command that replays it.
#[derive(Clone, Debug)]
pub struct FlowFailure {
    pub seed: u64,
    pub message: String,
    pub replay: String,
    pub trace: Vec<String>,
}

impl std::fmt::Display for FlowFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "flow seed {} failed: {}", self.seed, self.message)?;
        writeln!(f, "replay: {}", self.replay)?;
        writeln!(f, "last events:")?;
        for t in &self.trace {
            writeln!(f, "  {t}")?;
        }
        Ok(())
    }
}

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
}

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
    protocol: Receiver<usize, u64>,
    tracks: Vec<Track>,
}

/// The checker's sink: asserts order, integrity and exact accounting as the receiver
/// delivers, and remembers the first violation.
struct Checker<'a> {
    receiver: usize,
    tracks: &'a mut [Track],
    published: &'a [u64],
    out: &'a mut FlowOutcome,
    violation: &'a mut Option<String>,
    /// Holes given up, for the trace.
    notes: &'a mut Vec<Traced>,
}

impl Sink<usize, u64> for Checker<'_> {
    fn deliver(&mut self, sender: usize, seq: u64, item: u64) {
        if self.violation.is_some() {
            return;
        }
        let t = &mut self.tracks[sender];
        let r = self.receiver;
        if t.first.is_none() {
            t.first = Some(seq);
            t.upto = seq.saturating_sub(1);
        }
        let violation = if seq != t.upto + 1 {
            Some(format!(
                "receiver {r} got seq {seq} of sender {sender} after {} (duplicate, out of order or an uncounted hole)",
                t.upto
            ))
        } else if seq > self.published[sender] {
            Some(format!(
                "receiver {r} got seq {seq} of sender {sender}, which published only {}",
                self.published[sender]
            ))
        } else if item != payload(sender, seq) {
            Some(format!(
                "receiver {r} got seq {seq} of sender {sender} with the wrong payload"
            ))
        } else {
            None
        };
        if violation.is_some() {
            *self.violation = violation;
            return;
        }
        t.upto = seq;
        t.delivered += 1;
        self.out.delivered += 1;
    }

    fn lost(&mut self, sender: usize, first: u64, last: u64, why: GiveUp) {
        if self.violation.is_some() {
            return;
        }
        let t = &mut self.tracks[sender];
        let r = self.receiver;
        let violation = if t.first.is_none() || first != t.upto + 1 || last < first {
            Some(format!(
                "receiver {r} reported {first}..={last} of sender {sender} lost after {} (not the hole)",
                t.upto
            ))
        } else if last > self.published[sender] {
            Some(format!(
                "receiver {r} reported {first}..={last} of sender {sender} lost, which published only {}",
                self.published[sender]
            ))
        } else {
            None
        };
        if violation.is_some() {
            *self.violation = violation;
            return;
        }
        self.notes.push(Traced::Lost {
            receiver: r,
            sender,
            first,
            last,
            why,
        });
        t.upto = last;
        t.lost += last + 1 - first;
        self.out.lost += last + 1 - first;
        self.out.holes += 1;
        if why == GiveUp::Overflow {
            self.out.overflows += 1;
        }
    }
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
    crash: Option<(usize, u64)>,
    now: u64,
    out: FlowOutcome,
    violation: Option<String>,
    notes: Vec<Traced>,
    trace: VecDeque<(u64, Traced)>,
}

impl FlowSim {
    fn new(cfg: &FlowSimConfig) -> FlowSim {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let n_senders = rng.gen_range(1..=4);
        let n_receivers = rng.gen_range(1..=4);
        let window = Window {
            envelopes: [2, 4, 8, 32, 128][rng.gen_range(0..5)],
            bytes: [4 << 10, 16 << 10, 1 << 20][rng.gen_range(0..3)],
        };
        let flow = FlowConfig::new(window);
        let senders: Vec<SimSender> = (0..n_senders)
            .map(|_| SimSender {
                protocol: Sender::new(flow),
                total: rng.gen_range(20..=300),
                bytes_max: [64, 512, 2048][rng.gen_range(0..3)],
                interval_ns: [100_000, 1_000_000, 5_000_000][rng.gen_range(0..3)],
                published: 0,
                blocked: false,
                crashed: false,
                publish_queued: false,
            })
            .collect();
        // Distinct tokens, not in receiver order, as random tokens would be.
        let mut tokens: Vec<u64> = Vec::new();
        while tokens.len() < n_receivers {
            let t = rng.gen();
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        let receivers = tokens
            .iter()
            .map(|&t| SimReceiver {
                protocol: Receiver::new(t, flow),
                tracks: vec![Track::default(); n_senders],
            })
            .collect();
        let partition = cfg.partition.unwrap_or_else(|| rng.gen_bool(0.3)).then(|| {
            let start_ns = rng.gen_range(5_000_000..300_000_000);
            // Up to twice the give-up delay, and always shorter than the peer timeout.
            let end_ns = start_ns + rng.gen_range(50_000_000..4_000_000_000);
            let links = if rng.gen_bool(0.5) {
                let r = rng.gen_range(0..n_receivers);
                (0..n_senders).map(|s| (s, r)).collect()
            } else {
                let s = rng.gen_range(0..n_senders);
                (0..n_receivers).map(|r| (s, r)).collect()
            };
            Partition {
                start_ns,
                end_ns,
                links,
            }
        });
        let crash = cfg.crash.unwrap_or_else(|| rng.gen_bool(0.25)).then(|| {
            (
                rng.gen_range(0..n_senders),
                rng.gen_range(1_000_000..200_000_000),
            )
        });
        let mut net = Network::new(cfg.faults, partition);
        for (s, sender) in senders.iter().enumerate() {
            net.at(rng.gen_range(0..sender.interval_ns), Event::Publish(s));
            net.at(rng.gen_range(0..SENDER_TICK_NS), Event::SenderTick(s));
        }
        for r in 0..n_receivers {
            net.at(rng.gen_range(0..RECEIVER_TICK_NS), Event::ReceiverTick(r));
        }
        if let Some((s, at)) = crash {
            net.at(at, Event::Crash(s));
        }
        let out = FlowOutcome {
            seed: cfg.seed,
            senders: n_senders,
            receivers: n_receivers,
            window_envelopes: window.envelopes,
            partitions: u64::from(net.partition.is_some()),
            ..FlowOutcome::default()
        };
        let mut sim = FlowSim {
            cfg: cfg.clone(),
            rng,
            net,
            flow,
            senders,
            receivers,
            tokens,
            published: vec![0; n_senders],
            crash,
            now: 0,
            out,
            violation: None,
            notes: Vec::new(),
            trace: VecDeque::with_capacity(TRACE_EVENTS + 1),
        };
        for s in sim.senders.iter_mut() {
            s.publish_queued = true;
        }
        sim
    }

    fn run(mut self) -> Result<FlowOutcome, FlowFailure> {
        while let Some((at, event)) = self.net.pop() {
            self.now = at;
            if self.now > self.cfg.max_virtual_ns {
                return Err(self.fail(format!(
                    "deadlock: not settled after {} s of virtual time\n{}",
                    self.cfg.max_virtual_ns / 1_000_000_000,
                    self.describe()
                )));
            }
            self.out.events += 1;
            self.trace(Traced::Event(event.clone()));
            self.step(event);
            for note in std::mem::take(&mut self.notes) {
                self.trace(note);
            }
            if let Some(v) = self.violation.take() {
                return Err(self.fail(v));
            }
            self.check_bounds()?;
            if self.settled() {
                return self.finish();
            }
        }
        Err(self.fail(format!(
            "deadlock: nothing left to happen, not settled\n{}",
            self.describe()
        )))
    }

    fn step(&mut self, event: Event) {
        match event {
            Event::Publish(s) => {
                self.senders[s].publish_queued = false;
                self.publish(s);
            }
            Event::SenderTick(s) => {
                if self.senders[s].crashed {
                    return;
                }
                let gone = self.senders[s].protocol.handle_timeout(self.now);
                for g in gone {
                    self.out.receivers_given_up += 1;
                    let r = self.receiver_of(g.token);
                    self.trace(Traced::GaveUp {
                        sender: s,
                        receiver: r,
                    });
                }
                self.retransmit(s);
                self.unblock(s);
                self.net.at(self.now + SENDER_TICK_NS, Event::SenderTick(s));
            }
            Event::ReceiverTick(r) => {
                let now = self.now;
                let rec = &mut self.receivers[r];
                let mut sink = Checker {
                    receiver: r,
                    tracks: &mut rec.tracks,
                    published: &self.published,
                    out: &mut self.out,
                    violation: &mut self.violation,
                    notes: &mut self.notes,
                };
                rec.protocol.handle_timeout(now, &mut sink);
                self.send_controls(r);
                self.net.at(now + RECEIVER_TICK_NS, Event::ReceiverTick(r));
            }
            Event::Crash(s) => {
                self.senders[s].crashed = true;
                self.out.crashes += 1;
            }
            Event::Data {
                from,
                to,
                seq,
                item,
                bytes,
                retransmitted,
            } => {
                let now = self.now;
                let rec = &mut self.receivers[to];
                let mut sink = Checker {
                    receiver: to,
                    tracks: &mut rec.tracks,
                    published: &self.published,
                    out: &mut self.out,
                    violation: &mut self.violation,
                    notes: &mut self.notes,
                };
                let arrival = Arrival {
                    sender: from,
                    seq,
                    bytes,
                    retransmitted,
                };
                if rec.protocol.handle_envelope(now, arrival, item, &mut sink)
                    == Admission::Duplicate
                {
                    self.out.duplicates_dropped += 1;
                }
                self.out.pending_max = self.out.pending_max.max(rec.protocol.pending_len(from));
                self.send_controls(to);
            }
            Event::Control { from, to, control } => {
                let _ = from;
                if self.senders[to].crashed {
                    return;
                }
                self.senders[to].protocol.handle_control(self.now, control);
                self.retransmit(to);
                self.unblock(to);
            }
        }
    }

    /// Publishes sender `s`'s next envelope to every receiver, if it has credit.
    fn publish(&mut self, s: usize) {
        let sender = &mut self.senders[s];
        if sender.crashed || sender.published >= sender.total {
            return;
        }
        if !sender.protocol.has_credit() {
            if !sender.blocked {
                sender.blocked = true;
                self.out.credit_waits += 1;
                self.trace(Traced::Blocked(s));
            }
            return;
        }
        sender.blocked = false;
        let seq = sender.published + 1;
        let bytes = self.rng.gen_range(16..=sender.bytes_max);
        let item = payload(s, seq);
        let lag = sender.protocol.keep(seq, (item, bytes), bytes);
        sender.published = seq;
        self.published[s] = seq;
        self.out.published += 1;
        if let Some(lag) = lag {
            if lag > self.flow.window.envelopes as u64 {
                self.violation = Some(format!(
                    "sender {s} published seq {seq} {lag} envelopes ahead of its slowest receiver (window {})",
                    self.flow.window.envelopes
                ));
            }
        }
        self.trace(Traced::Published {
            sender: s,
            seq,
            lag,
        });
        for r in 0..self.receivers.len() {
            self.net.send(
                &mut self.rng,
                self.now,
                (s, r),
                Event::Data {
                    from: s,
                    to: r,
                    seq,
                    item,
                    bytes,
                    retransmitted: false,
                },
            );
        }
        let sender = &mut self.senders[s];
        if sender.published < sender.total {
            let gap = self.rng.gen_range(0..=2 * sender.interval_ns);
            sender.publish_queued = true;
            self.net.at(self.now + gap, Event::Publish(s));
        }
    }

    /// A blocked sender publishes as soon as it has credit again.
    fn unblock(&mut self, s: usize) {
        let sender = &mut self.senders[s];
        if sender.blocked && !sender.publish_queued && sender.protocol.has_credit() {
            sender.publish_queued = true;
            self.net.at(self.now, Event::Publish(s));
        }
    }

    fn receiver_of(&self, token: u64) -> usize {
        self.tokens
            .iter()
            .position(|&t| t == token)
            .expect("only receivers send control messages")
    }

    /// Sends what sender `s`'s protocol wants retransmitted.
    fn retransmit(&mut self, s: usize) {
        while let Some(retx) = self.senders[s].protocol.poll_retransmission() {
            let r = self.receiver_of(retx.token);
            self.trace(Traced::Retransmit {
                sender: s,
                to: r,
                first: retx.items[0].0,
                count: retx.items.len(),
            });
            for (seq, (item, bytes)) in retx.items {
                self.out.retransmitted += 1;
                self.net.send(
                    &mut self.rng,
                    self.now,
                    (s, r),
                    Event::Data {
                        from: s,
                        to: r,
                        seq,
                        item,
                        bytes,
                        retransmitted: true,
                    },
                );
            }
        }
    }

    /// Sends receiver `r`'s queued control messages.
    fn send_controls(&mut self, r: usize) {
        while let Some((s, control)) = self.receivers[r].protocol.poll_control() {
            self.out.controls += 1;
            self.trace(Traced::Sent {
                to_sender: s,
                control,
            });
            self.net.send(
                &mut self.rng,
                self.now,
                (s, r),
                Event::Control {
                    from: r,
                    to: s,
                    control,
                },
            );
        }
    }

    /// The buffers stay within their bounds.
    fn check_bounds(&self) -> Result<(), FlowFailure> {
        let w = self.flow.window;
        for (r, rec) in self.receivers.iter().enumerate() {
            for s in 0..self.senders.len() {
                let held = rec.protocol.pending_len(s);
                if held > 2 * w.envelopes.max(1) {
                    return Err(self.fail(format!(
                        "receiver {r} holds {held} envelopes of sender {s} behind a gap (window {})",
                        w.envelopes
                    )));
                }
            }
        }
        for (s, sender) in self.senders.iter().enumerate() {
            let bound = w.bytes + Sender::<(u64, usize)>::weight_of(sender.bytes_max);
            if sender.protocol.kept_bytes() > bound {
                return Err(self.fail(format!(
                    "sender {s} keeps {} bytes, more than its window of {} plus one envelope",
                    sender.protocol.kept_bytes(),
                    w.bytes
                )));
            }
        }
        Ok(())
    }

    /// Whether the run is over: see the module doc.
    fn settled(&self) -> bool {
        let senders_done = self
            .senders
            .iter()
            .all(|s| s.crashed || (s.published == s.total && s.protocol.all_acknowledged()));
        senders_done
            && self.receivers.iter().all(|rec| {
                self.senders.iter().enumerate().all(|(s, sender)| {
                    let t = &rec.tracks[s];
                    if sender.crashed {
                        rec.protocol.pending_len(s) == 0
                    } else {
                        // Never heard of it at all: everything came before first contact.
                        t.first.is_none() || t.upto == sender.total
                    }
                })
            })
    }

    fn finish(mut self) -> Result<FlowOutcome, FlowFailure> {
        for rec in &self.receivers {
            for (s, sender) in self.senders.iter().enumerate() {
                let t = rec.tracks[s];
                match t.first {
                    Some(first) => {
                        self.out.before_first_contact += first.saturating_sub(1);
                        self.out.crash_tails += sender.published.saturating_sub(t.upto);
                    }
                    None => self.out.before_first_contact += sender.published,
                }
            }
        }
        self.out.faults = self.net.counts;
        self.out.packets = self.net.packets;
        self.out.virtual_time_ns = self.now;
        Ok(self.out)
    }

    fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "  window {:?}, partition {:?}, crash {:?}",
            self.flow.window, self.net.partition, self.crash
        );
        for (i, x) in self.senders.iter().enumerate() {
            let _ = writeln!(
                s,
                "  sender {i}: published {}/{}, crashed {}, blocked {}, receivers known {}, kept {} ({} bytes), all acknowledged {}",
                x.published,
                x.total,
                x.crashed,
                x.blocked,
                x.protocol.receivers(),
                x.protocol.kept_len(),
                x.protocol.kept_bytes(),
                x.protocol.all_acknowledged()
            );
        }
        for (r, rec) in self.receivers.iter().enumerate() {
            for (i, t) in rec.tracks.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "  receiver {r} ({:016x}) from sender {i}: {t:?}, protocol delivered {:?}, held {}",
                    self.tokens[r],
                    rec.protocol.delivered(i),
                    rec.protocol.pending_len(i)
                );
            }
        }
        s
    }

    fn trace(&mut self, t: Traced) {
        if self.cfg.verbose {
            println!("[{:>14}ns] {t:?}", self.now);
        }
        // Timers fire all the time; what they do is traced on its own.
        if let Traced::Event(Event::SenderTick(_) | Event::ReceiverTick(_)) = t {
            return;
        }
        self.trace.push_back((self.now, t));
        if self.trace.len() > TRACE_EVENTS {
            self.trace.pop_front();
        }
    }

    fn fail(&self, message: String) -> FlowFailure {
        FlowFailure {
            seed: self.cfg.seed,
            message,
            replay: self.cfg.replay_command(),
            trace: self
                .trace
                .iter()
                .map(|(at, t)| format!("[{at:>14}ns] {t:?}"))
                .collect(),
        }
    }
}

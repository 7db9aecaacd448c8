//! The bus's ordered levels (AGREED, SAFE) and its membership over a faulty network:
//! the protocol of `glidepath::bus` over NATS (`docs/wire-format.md` 7.5), driven
//! through the same state machine, `glidepath_bus::stability::Stability`.
//!
//! A sequencer (the group's stream) numbers every data and membership frame and
//! sends each member a copy, in order per member, some copies lost; a member fetches
//! a hole from the sequencer (which keeps everything). Members acknowledge every
//! 100 ms and on each SAFE message (acks are lost and reordered too), declare a member
//! silent for 2 s crashed through the sequencer, and join again when told they
//! crashed. Random actions: AGREED and SAFE messages from members and non-members,
//! members joining, leaving, crashing, and pausing for longer than the crash timeout
//! (a false suspicion).
//!
//! Checked at every hand-out: a member hands out frames in increasing order, each the
//! sequencer's frame of that number (one total order at every member); a SAFE message
//! only once every member of the group at that point of the order has received it,
//! unless its departure is already in the order behind the message or it has been
//! silent for longer than the crash timeout since (and so counts as crashed). Checked at the end,
//! after the network went quiet: every member still in the group handed out every data
//! frame from its first one on (no loss, no SAFE message stuck).

use std::collections::BTreeMap;

use crate::agenda::{Agenda, Notes};

use bytes::Bytes;
use glidepath_bus::frame::{
    AckFrame, DataFrame, Frame, MemberId, MembershipFrame, MembershipKind, ServiceLevel,
};
use glidepath_bus::stability::{Arrival, Stability};
use glidepath_bus::{Encoding, Subject};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const MS: u64 = 1_000_000;
const HEARTBEAT: u64 = 100 * MS;
const CRASH_TIMEOUT: u64 = 2_000 * MS;
/// How long the network runs on after the last action, for the end checks.
const QUIET: u64 = 10_000 * MS;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct BusSimConfig {
    pub seed: u64,
    /// Members at the start; drawn from 1..=5 when `None`.
    pub members: Option<usize>,
    /// Random actions (messages, joins, leaves, crashes, pauses).
    pub actions: u32,
    /// Probability that a copy from the sequencer or an acknowledgement is lost.
    pub loss: f64,
    /// Print every hand-out and action.
    pub verbose: bool,
}

impl BusSimConfig {
    /// The default run of a seed.
    pub fn for_seed(seed: u64) -> BusSimConfig {
        BusSimConfig {
            seed,
            members: None,
            actions: 200,
            loss: 0.05,
            verbose: false,
        }
    }
}

/// What one run counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BusOutcome {
    pub seed: u64,
    /// Frames the sequencer numbered: data (AGREED, SAFE) and membership.
    pub agreed: u64,
    pub safe: u64,
    pub membership: u64,
    /// Frames handed out by members, of them SAFE messages checked for stability.
    pub handed_out: u64,
    pub safe_checked: u64,
    pub joins: u64,
    pub leaves: u64,
    pub crashes: u64,
    pub pauses: u64,
    /// Crash notices about a member that was alive (paused past the timeout).
    pub false_suspicions: u64,
    /// Copies and acknowledgements the network lost; holes fetched.
    pub copies_lost: u64,
    pub acks_lost: u64,
    pub fetches: u64,
}

/// A violated guarantee, with the seed that replays it.
pub type BusFailure = crate::ProtocolFailure;

enum Event {
    /// A frame reaches the sequencer.
    Append(Frame),
    /// Copy `seq` of the order reaches member `to` (`fetched`: answering a fetch).
    Copy { to: usize, seq: u64, fetched: bool },
    /// An acknowledgement reaches member `to`.
    Ack { to: usize, ack: AckFrame },
    /// Member `m`'s heartbeat.
    Heartbeat(usize),
    /// The sequencer's acknowledgement of member `m`'s joining, numbered `seq`.
    JoinAck { m: usize, seq: u64 },
    /// The next random action.
    Action,
}

struct Node {
    id: MemberId,
    stability: Stability,
    /// Receiving and acknowledging (false once it left or crashed).
    alive: bool,
    /// Paused until then (its events wait).
    paused_until: u64,
    /// Handed out: (number, frame).
    handed: Vec<(u64, Frame)>,
    /// The number of its (first) joining: every data frame from there on is for it.
    start: Option<u64>,
    /// Delivery time of the last copy sent to it (copies stay in order).
    last_copy_at: u64,
    /// When it last acknowledged (sent its heartbeat).
    last_ack_at: u64,
    /// Heartbeats so far.
    beats: u64,
    /// The ends of its silences longer than the crash timeout (paused, or its
    /// heartbeats late): it counts as crashed during them.
    long_silences_ended: Vec<u64>,
}

struct Sim {
    cfg: BusSimConfig,
    rng: ChaCha8Rng,
    now: u64,
    agenda: Agenda<Event>,
    log: Vec<Frame>,
    /// When each frame of the log was numbered.
    log_at: Vec<u64>,
    nodes: Vec<Node>,
    out: BusOutcome,
    notes: Notes,
    next_data: u64,
}

fn data(level: ServiceLevel, sender: MemberId, n: u64) -> Frame {
    Frame::Data(DataFrame {
        level,
        encoding: Encoding::Binary,
        sender,
        seq: n,
        publish_time_ns: 0,
        subject: Subject::new("SIM.DATA").expect("a valid subject"),
        payload: Bytes::copy_from_slice(&n.to_le_bytes()),
    })
}

fn change(kind: MembershipKind, member: MemberId) -> Frame {
    Frame::Membership(MembershipFrame {
        kind,
        member,
        name: String::new(),
    })
}

impl Sim {
    fn fail(&self, message: String) -> BusFailure {
        BusFailure {
            simulator: "bus",
            seed: self.cfg.seed,
            message,
            replay: format!(
                "cargo run -p glidepath-sim -- --bus --seed {} --verbose",
                self.cfg.seed
            ),
            trace: self.notes.last(30),
        }
    }

    fn note(&mut self, what: String) {
        self.notes.note(self.now, what);
    }

    fn at(&mut self, when: u64, e: Event) {
        self.agenda.at(when, e);
    }

    fn delay(&mut self, lo_ms: f64, hi_ms: f64) -> u64 {
        (self.rng.gen_range(lo_ms..hi_ms) * 1e6) as u64
    }

    /// A frame on its way to the sequencer (JetStream publishes are acknowledged:
    /// never lost).
    fn publish(&mut self, frame: Frame) {
        let d = self.delay(0.5, 3.0);
        self.at(self.now + d, Event::Append(frame));
    }

    fn join(&mut self) {
        let id = MemberId(1000 + self.nodes.len() as u64);
        let stability = Stability::new(id, self.now, CRASH_TIMEOUT);
        self.nodes.push(Node {
            id,
            stability,
            alive: true,
            paused_until: 0,
            handed: Vec::new(),
            start: None,
            last_copy_at: 0,
            last_ack_at: self.now,
            beats: 0,
            long_silences_ended: Vec::new(),
        });
        let m = self.nodes.len() - 1;
        self.out.joins += 1;
        self.note(format!("member {m} ({id}) joins"));
        self.publish(change(MembershipKind::Joined, id));
        let first = self.now + self.delay(0.0, 100.0);
        self.at(first, Event::Heartbeat(m));
    }

    fn live(&self) -> Vec<usize> {
        (0..self.nodes.len())
            .filter(|&m| self.nodes[m].alive)
            .collect()
    }

    fn action(&mut self) {
        let live = self.live();
        let roll = self.rng.gen_range(0..100);
        match roll {
            0..=69 => {
                self.next_data += 1;
                let n = self.next_data;
                let level = if self.rng.gen_bool(0.5) {
                    ServiceLevel::Safe
                } else {
                    ServiceLevel::Agreed
                };
                let sender = match live.is_empty() || self.rng.gen_bool(0.2) {
                    true => MemberId(1), // a non-member (open group)
                    false => self.nodes[live[self.rng.gen_range(0..live.len())]].id,
                };
                self.publish(data(level, sender, n));
            }
            70..=79 => self.join(),
            80..=87 if live.len() > 1 => {
                let m = live[self.rng.gen_range(0..live.len())];
                self.nodes[m].alive = false;
                self.out.leaves += 1;
                let id = self.nodes[m].id;
                self.note(format!("member {m} leaves"));
                self.publish(change(MembershipKind::Left, id));
            }
            88..=93 if live.len() > 1 => {
                let m = live[self.rng.gen_range(0..live.len())];
                self.nodes[m].alive = false;
                self.out.crashes += 1;
                self.note(format!("member {m} crashes"));
            }
            94..=99 if !live.is_empty() => {
                let m = live[self.rng.gen_range(0..live.len())];
                let d = self.delay(2_200.0, 3_500.0);
                self.nodes[m].paused_until = self.now + d;
                self.out.pauses += 1;
                self.note(format!("member {m} pauses for {} ms", d / MS));
            }
            _ => {}
        }
    }

    fn append(&mut self, frame: Frame) {
        match &frame {
            Frame::Data(d) if d.level == ServiceLevel::Safe => self.out.safe += 1,
            Frame::Data(_) => self.out.agreed += 1,
            _ => self.out.membership += 1,
        }
        if let Frame::Membership(m) = &frame {
            if m.kind == MembershipKind::Crashed {
                if let Some(node) = self.nodes.iter().find(|n| n.id == m.member) {
                    if node.alive {
                        self.out.false_suspicions += 1;
                    }
                }
            }
        }
        let joining = match &frame {
            Frame::Membership(c) if c.kind == MembershipKind::Joined => {
                self.nodes.iter().position(|n| n.id == c.member)
            }
            _ => None,
        };
        self.log.push(frame);
        self.log_at.push(self.now);
        let seq = self.log.len() as u64;
        if let Some(m) = joining {
            // Everything from its first joining on is for it.
            self.nodes[m].start.get_or_insert(seq);
            let d = self.delay(0.2, 3.0);
            self.at(self.now + d, Event::JoinAck { m, seq });
        }
        for to in 0..self.nodes.len() {
            if !self.nodes[to].alive {
                continue;
            }
            if self.rng.gen_bool(self.cfg.loss) {
                self.out.copies_lost += 1;
                continue;
            }
            let d = self.delay(0.2, 3.0);
            let when = (self.now + d).max(self.nodes[to].last_copy_at);
            self.nodes[to].last_copy_at = when;
            self.at(
                when,
                Event::Copy {
                    to,
                    seq,
                    fetched: false,
                },
            );
        }
    }

    fn acknowledge(&mut self, from: usize) {
        let ack = self.nodes[from].stability.ack();
        if self.now - self.nodes[from].last_ack_at > CRASH_TIMEOUT {
            self.nodes[from].long_silences_ended.push(self.now);
        }
        self.nodes[from].last_ack_at = self.now;
        for to in 0..self.nodes.len() {
            if to == from || !self.nodes[to].alive {
                continue;
            }
            if self.rng.gen_bool(self.cfg.loss) {
                self.out.acks_lost += 1;
                continue;
            }
            let d = self.delay(0.2, 3.0);
            self.at(
                self.now + d,
                Event::Ack {
                    to,
                    ack: ack.clone(),
                },
            );
        }
    }

    fn copy(&mut self, to: usize, seq: u64, fetched: bool) -> Result<(), BusFailure> {
        let frame = self.log[(seq - 1) as usize].clone();
        let safe = matches!(&frame, Frame::Data(d) if d.level == ServiceLevel::Safe);
        if fetched {
            self.out.fetches += 1;
        }
        let mut out = Vec::new();
        let arrival = self.nodes[to]
            .stability
            .on_ordered(seq, frame, self.now, &mut out);
        self.hand_out(to, out)?;
        if let Arrival::Hole(missing) = arrival.clone() {
            self.fetch(to, Some(missing));
        }
        if safe && arrival != Arrival::Seen {
            self.acknowledge(to);
        }
        Ok(())
    }

    /// The group at number `seq` of the order: each member whose last joining before
    /// `seq` has no departure between it and `seq`.
    fn members_at(&self, seq: u64) -> Vec<MemberId> {
        let mut inside: BTreeMap<MemberId, bool> = BTreeMap::new();
        for frame in &self.log[..(seq - 1) as usize] {
            if let Frame::Membership(m) = frame {
                inside.insert(m.member, m.kind == MembershipKind::Joined);
            }
        }
        inside
            .into_iter()
            .filter(|(_, i)| *i)
            .map(|(m, _)| m)
            .collect()
    }

    fn hand_out(&mut self, m: usize, out: Vec<(u64, Frame)>) -> Result<(), BusFailure> {
        for (seq, frame) in out {
            let last = self.nodes[m].handed.last().map_or(0, |(s, _)| *s);
            if seq <= last {
                return Err(self.fail(format!("member {m} handed out {seq} after {last}")));
            }
            if frame != self.log[(seq - 1) as usize] {
                return Err(self.fail(format!(
                    "member {m} handed out a frame {seq} that is not the order's"
                )));
            }
            self.out.handed_out += 1;
            if let Frame::Data(d) = &frame {
                if d.level == ServiceLevel::Safe {
                    self.check_safe(m, seq)?;
                }
            }
            if let Frame::Membership(c) = &frame {
                if c.kind == MembershipKind::Crashed
                    && c.member == self.nodes[m].id
                    && self.nodes[m].alive
                {
                    // Told it crashed while alive: it joins again.
                    self.note(format!("member {m} was declared crashed; joins again"));
                    self.publish(change(MembershipKind::Joined, self.nodes[m].id));
                }
            }
            self.note(format!("member {m} hands out {seq}: {}", describe(&frame)));
            self.nodes[m].handed.push((seq, frame));
        }
        Ok(())
    }

    /// SAFE `seq` handed out by `m`: every member of the group at `seq` has it, or its
    /// departure is already in the order behind it, or it has been silent for longer
    /// than the crash timeout since the message was numbered.
    fn check_safe(&mut self, m: usize, seq: u64) -> Result<(), BusFailure> {
        self.out.safe_checked += 1;
        for x in self.members_at(seq) {
            if x == self.nodes[m].id {
                continue;
            }
            let Some(node) = self.nodes.iter().find(|n| n.id == x) else {
                continue;
            };
            // A member silent for longer than the crash timeout since the message
            // was numbered counts as crashed (the failure model), whether or not its
            // notice is in the order yet.
            let numbered_at = self.log_at[(seq - 1) as usize];
            let silent = self.now - node.last_ack_at > CRASH_TIMEOUT
                || node
                    .long_silences_ended
                    .iter()
                    .any(|&end| end >= numbered_at);
            if node.stability.through() >= seq || silent {
                continue;
            }
            // Its departure already in the order behind the message (received by
            // `m`, or learnt from a member that received it).
            let departed = self.log[seq as usize..].iter().any(
                |f| matches!(f, Frame::Membership(c) if c.member == x && c.kind != MembershipKind::Joined),
            );
            if !departed {
                return Err(self.fail(format!(
                    "member {m} handed out SAFE {seq} while member {x} (in the group, through {}) did not have it; \
                     member {m}'s view: {:?}",
                    node.stability.through(),
                    self.nodes[m].stability.view().collect::<Vec<_>>()
                )));
            }
        }
        Ok(())
    }

    /// Member `to` fetches `missing` from the sequencer (which keeps everything).
    fn fetch(&mut self, to: usize, missing: Option<std::ops::Range<u64>>) {
        for seq in missing.into_iter().flatten() {
            let d = self.delay(1.0, 5.0);
            self.at(
                self.now + d,
                Event::Copy {
                    to,
                    seq,
                    fetched: true,
                },
            );
        }
    }

    fn heartbeat(&mut self, m: usize) -> Result<(), BusFailure> {
        self.acknowledge(m);
        self.nodes[m].beats += 1;
        if self.nodes[m].beats.is_multiple_of(10) {
            // Once a second, the sequencer's last number (a stream-info request).
            let last = self.log.len() as u64;
            let missing = self.nodes[m].stability.behind(last);
            self.fetch(m, missing);
        }
        let mut out = Vec::new();
        let silent = self.nodes[m].stability.on_tick(self.now, &mut out);
        self.hand_out(m, out)?;
        for x in silent {
            self.note(format!("member {m} declares {x} crashed"));
            self.publish(change(MembershipKind::Crashed, x));
        }
        let next = self.now + HEARTBEAT;
        self.at(next, Event::Heartbeat(m));
        Ok(())
    }

    fn step(&mut self, e: Event, end_of_actions: u64) -> Result<(), BusFailure> {
        match e {
            Event::Append(frame) => self.append(frame),
            Event::Copy { to, seq, fetched } => self.copy(to, seq, fetched)?,
            Event::Ack { to, ack } => {
                let mut out = Vec::new();
                let was = self.nodes[to].stability.learnt();
                let missing = self.nodes[to].stability.on_ack(&ack, self.now, &mut out);
                if !was && self.nodes[to].stability.learnt() {
                    let view: Vec<MemberId> = self.nodes[to].stability.view().collect();
                    self.note(format!(
                        "member {to} learns the group from {}: {view:?}",
                        ack.member
                    ));
                }
                self.hand_out(to, out)?;
                self.fetch(to, missing);
            }
            Event::Heartbeat(m) => self.heartbeat(m)?,
            Event::JoinAck { m, seq } => {
                let mut out = Vec::new();
                let missing = self.nodes[m].stability.joined_at(seq, self.now, &mut out);
                self.hand_out(m, out)?;
                self.fetch(m, missing);
            }
            Event::Action => {
                self.action();
                if self.now < end_of_actions {
                    let d = self.delay(1.0, 200.0);
                    self.at(self.now + d, Event::Action);
                }
            }
        }
        Ok(())
    }

    /// The member an event is for, if any.
    fn target(e: &Event) -> Option<usize> {
        match e {
            Event::Copy { to, .. } | Event::Ack { to, .. } => Some(*to),
            Event::Heartbeat(m) | Event::JoinAck { m, .. } => Some(*m),
            Event::Append(_) | Event::Action => None,
        }
    }
}

fn describe(f: &Frame) -> String {
    match f {
        Frame::Data(d) => format!("{} message {} from {}", d.level.name(), d.seq, d.sender),
        Frame::Membership(m) => format!("{:?} {}", m.kind, m.member),
        Frame::Ack(_) => "ack".into(),
    }
}

/// Runs one seed.
pub fn run_bus(cfg: &BusSimConfig) -> Result<BusOutcome, BusFailure> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0xB5B5_0000_0000_0000);
    let members = cfg.members.unwrap_or_else(|| rng.gen_range(1..=5));
    let mut sim = Sim {
        cfg: cfg.clone(),
        rng,
        now: 0,
        agenda: Agenda::new(),
        log: Vec::new(),
        log_at: Vec::new(),
        nodes: Vec::new(),
        out: BusOutcome {
            seed: cfg.seed,
            ..BusOutcome::default()
        },
        notes: Notes::new(cfg.verbose),
        next_data: 0,
    };
    for _ in 0..members {
        sim.join();
    }
    // Actions about every 100 ms; the first once the founders have joined.
    let end_of_actions = 300 * MS + u64::from(cfg.actions) * 100 * MS;
    sim.at(300 * MS, Event::Action);
    let end = end_of_actions + QUIET;
    while let Some((when, e)) = sim.agenda.pop() {
        if when > end {
            break;
        }
        sim.now = when;
        if let Some(m) = Sim::target(&e) {
            if !sim.nodes[m].alive {
                continue;
            }
            let resume = sim.nodes[m].paused_until;
            if resume > sim.now {
                // Paused: everything for it waits, in order.
                sim.at(resume, e);
                continue;
            }
        }
        sim.step(e, end_of_actions)?;
    }
    // Quiet: every member still in the group handed out every data frame from its
    // first one on.
    for m in 0..sim.nodes.len() {
        let node = &sim.nodes[m];
        if !node.alive {
            continue;
        }
        let Some(start) = node.start else { continue };
        let handed: std::collections::BTreeSet<u64> = node.handed.iter().map(|(s, _)| *s).collect();
        for seq in start..=sim.log.len() as u64 {
            if matches!(sim.log[(seq - 1) as usize], Frame::Data(_)) && !handed.contains(&seq) {
                let held = node.stability.held();
                let view: Vec<String> = node
                    .stability
                    .view()
                    .map(|x| match sim.nodes.iter().position(|n| n.id == x) {
                        Some(k) => format!(
                            "member {k} (alive {}, through {})",
                            sim.nodes[k].alive,
                            sim.nodes[k].stability.through()
                        ),
                        None => format!("{x}"),
                    })
                    .collect();
                return Err(sim.fail(format!(
                    "member {m} never handed out data frame {seq} (through {}, {held} held, learnt {}); \
                     its view: {view:?}",
                    node.stability.through(),
                    node.stability.learnt()
                )));
            }
        }
    }
    Ok(sim.out)
}

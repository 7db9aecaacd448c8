//! The bus's RELIABLE and FIFO levels over core NATS, repaired
//! (`glidepath_bus::repair`, `docs/wire-format.md` 7.5), over a network that breaks
//! connections, drops and duplicates copies and delays everything.
//!
//! Every node sends and receives in one group on one connection, as a bus connection
//! does: what it publishes goes to the server and from there to every node (itself
//! too), in order per receiver. What is in flight when a connection breaks is lost;
//! while a connection is down its publishes wait in the client and go out when it is
//! back (as async-nats buffers them). A receiver's client may drop a copy (a slow
//! consumer) and then raises the same event as a reconnection. A copy may arrive
//! twice (core NATS never does this; the rules must not care). A node may die.
//!
//! A node drives [`Order`] and [`Fetch`] as `glidepath::bus` does: a frame after a gap
//! waits while its reader asks the sender for the gap; after its own connection is
//! back (or a copy was dropped) it reads the copies already queued and then asks every
//! sender it has heard from for everything newer; a sender whose connection is back
//! sends its last frame again. A request finds no responder at once when the sender's
//! connection is down (an open request then ends; a gap is asked for again), and times
//! out after 2 s when it or its reply is lost; the reader waits
//! [`Fetch::retry_after_ns`] between tries.
//!
//! Checked at every hand-out: each sender's numbered frames are handed out in
//! increasing order, each once. Checked at the end, once the network is quiet: from the
//! first frame a node handed out of a sender's, every later frame of that sender's is
//! handed out or counted lost (a sender that died: up to the last one the node knows
//! of), and with a window that never forgets, none is counted lost.

use std::collections::{HashMap, VecDeque};

use bytes::Bytes;
use glidepath_bus::frame::{self, DataFrame, Frame, MemberId, ServiceLevel};
use glidepath_bus::repair::{Arrival, Fetch, Request, Window, KEEP_BYTES};
use glidepath_bus::{Encoding, Subject};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

mod check;

use crate::agenda::{Agenda, Notes};

const MS: u64 = 1_000_000;
const REQUEST_TIMEOUT: u64 = 2_000 * MS;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct RepairSimConfig {
    pub seed: u64,
    /// Nodes; drawn from 2..=5 when `None`.
    pub nodes: Option<usize>,
    /// Random actions (publishes, bursts, broken connections, deaths).
    pub actions: u32,
    /// Probability that a copy is dropped at its receiver (a slow consumer), and that a
    /// request or a reply is lost.
    pub loss: f64,
    /// Probability that a copy arrives twice.
    pub duplication: f64,
    /// Print every hand-out and action.
    pub verbose: bool,
}

impl RepairSimConfig {
    /// The default run of a seed.
    pub fn for_seed(seed: u64) -> RepairSimConfig {
        RepairSimConfig {
            seed,
            nodes: None,
            actions: 300,
            loss: 0.02,
            duplication: 0.01,
            verbose: false,
        }
    }
}

/// What one run counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RepairOutcome {
    pub seed: u64,
    /// Numbered frames published, and handed out (over all receivers).
    pub published: u64,
    pub handed_out: u64,
    /// Copies lost in flight (broken connections) and dropped at receivers.
    pub copies_lost: u64,
    pub copies_dropped: u64,
    pub duplicates: u64,
    pub breaks: u64,
    pub deaths: u64,
    /// Repairs done, frames they recovered, tries that found no responder or timed
    /// out, and frames counted lost (the sender no longer held them, or died).
    pub repairs: u64,
    pub recovered: u64,
    pub failed_tries: u64,
    pub counted_lost: u64,
    /// Stale copies the order dropped, and of them the ones it counted as violations.
    pub stale: u64,
    pub stale_violations: u64,
}

impl RepairOutcome {
    /// Adds another run's counts (the seed stays).
    pub fn add(&mut self, o: &RepairOutcome) {
        self.published += o.published;
        self.handed_out += o.handed_out;
        self.copies_lost += o.copies_lost;
        self.copies_dropped += o.copies_dropped;
        self.duplicates += o.duplicates;
        self.breaks += o.breaks;
        self.deaths += o.deaths;
        self.repairs += o.repairs;
        self.recovered += o.recovered;
        self.failed_tries += o.failed_tries;
        self.counted_lost += o.counted_lost;
        self.stale += o.stale;
        self.stale_violations += o.stale_violations;
    }
}

/// A violated guarantee, with the seed that replays it.
pub type RepairFailure = crate::ProtocolFailure;

enum Event {
    /// A frame published by `from` reaches the server, if `from`'s connection is still
    /// the one (`epoch`) it left on.
    AtServer {
        from: usize,
        epoch: u64,
        bytes: Bytes,
    },
    /// A copy reaches node `to`'s client.
    Copy { to: usize, epoch: u64, bytes: Bytes },
    /// Node `to`'s client says its connection came back or it dropped a copy.
    Reconnected { to: usize },
    /// Node `node`'s connection comes back.
    LinkUp { node: usize },
    /// A repair request reaches the sender `to` (through the server).
    Request {
        to: usize,
        from: usize,
        tag: u64,
        text: String,
    },
    /// A reply, or "no responders" (`None`), reaches the asking node.
    Reply {
        to: usize,
        epoch: u64,
        tag: u64,
        body: Option<Bytes>,
    },
    /// The try `tag` of node `node` has had no reply for 2 s.
    Timeout { node: usize, tag: u64 },
    /// Node `node` asks again.
    Retry { node: usize },
    /// The next random action.
    Action,
}

/// What a node's reader waits on.
enum Repairing {
    /// A gap before `frame`: hand it out after the repair.
    Gap {
        sender: MemberId,
        fetch: Fetch,
        frame: DataFrame,
    },
    /// Back from a reconnection: these senders, one after the other.
    Senders {
        sender: MemberId,
        fetch: Fetch,
        rest: Vec<(MemberId, u64)>,
    },
}

struct Node {
    id: MemberId,
    alive: bool,
    up: bool,
    /// Counts the connection's breaks: what left on an earlier one is lost.
    epoch: u64,
    next_seq: u64,
    window: Window,
    /// Publishes waiting for the connection.
    outbox: VecDeque<Bytes>,
    order: glidepath_bus::repair::Order,
    /// The subscription's copies, not yet read.
    inbox: VecDeque<DataFrame>,
    /// The reconnection event, not yet seen (a watch: several are one).
    reconnect_pending: bool,
    repairing: Option<Repairing>,
    /// The try in flight, if a request is out.
    waiting: Option<u64>,
    /// When the last copy to this node arrives, and the last of its own bytes reach
    /// the server (each direction stays in order).
    last_copy_at: u64,
    last_sent_at: u64,
    /// Per sender: frames handed out (numbers), and counted lost.
    handed: HashMap<MemberId, Vec<u64>>,
    lost: HashMap<MemberId, u64>,
}

struct Sim {
    cfg: RepairSimConfig,
    rng: ChaCha8Rng,
    now: u64,
    agenda: Agenda<Event>,
    nodes: Vec<Node>,
    group: Subject,
    /// Whether windows forget (some seeds keep everything: then nothing may be lost).
    forgetting: bool,
    tags: u64,
    out: RepairOutcome,
    notes: Notes,
}

impl Sim {
    fn fail(&self, message: String) -> RepairFailure {
        RepairFailure {
            simulator: "bus-repair",
            seed: self.cfg.seed,
            message,
            replay: format!(
                "cargo run -p glidepath-sim -- --bus-repair --seed {} --verbose",
                self.cfg.seed
            ),
            trace: self.notes.last(40),
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

    /// Node `n` publishes a numbered frame (or an unnumbered UNRELIABLE one).
    fn publish(&mut self, n: usize, numbered: bool) {
        let node = &mut self.nodes[n];
        let (level, seq) = if numbered {
            node.next_seq += 1;
            let level = if node.next_seq.is_multiple_of(2) {
                ServiceLevel::Fifo
            } else {
                ServiceLevel::Reliable
            };
            (level, node.next_seq)
        } else {
            (ServiceLevel::Unreliable, 0)
        };
        let bytes = Bytes::from(
            DataFrame {
                level,
                encoding: Encoding::Binary,
                sender: node.id,
                seq,
                publish_time_ns: 0,
                subject: Subject::new("SIM.DATA").expect("a valid subject"),
                payload: Bytes::from(vec![0u8; 16]),
            }
            .encode(),
        );
        if numbered {
            node.window.keep(seq, bytes.clone());
            self.out.published += 1;
        }
        self.send(n, bytes);
    }

    /// Bytes leave node `n` for the server, or wait while its connection is down.
    fn send(&mut self, n: usize, bytes: Bytes) {
        if !self.nodes[n].up {
            self.nodes[n].outbox.push_back(bytes);
            return;
        }
        let d = self.delay(0.05, 2.0);
        // One connection's bytes reach the server in the order they left.
        let when = (self.now + d).max(self.nodes[n].last_sent_at + 1);
        self.nodes[n].last_sent_at = when;
        let epoch = self.nodes[n].epoch;
        self.at(
            when,
            Event::AtServer {
                from: n,
                epoch,
                bytes,
            },
        );
    }

    /// The server sends a copy to every node whose connection is up.
    fn fan_out(&mut self, bytes: Bytes) {
        for to in 0..self.nodes.len() {
            if !self.nodes[to].up {
                continue;
            }
            let d = self.delay(0.05, 2.0);
            let when = (self.now + d).max(self.nodes[to].last_copy_at + 1);
            self.nodes[to].last_copy_at = when;
            let epoch = self.nodes[to].epoch;
            self.at(
                when,
                Event::Copy {
                    to,
                    epoch,
                    bytes: bytes.clone(),
                },
            );
            if self.rng.gen_bool(self.cfg.duplication) {
                self.out.duplicates += 1;
                self.nodes[to].last_copy_at = when + 1;
                self.at(
                    when + 1,
                    Event::Copy {
                        to,
                        epoch,
                        bytes: bytes.clone(),
                    },
                );
            }
        }
    }

    fn action(&mut self) {
        let live: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| self.nodes[n].alive)
            .collect();
        let n = live[self.rng.gen_range(0..live.len())];
        let roll = self.rng.gen_range(0..100);
        if roll < 62 {
            self.publish(n, true);
        } else if roll < 67 {
            self.publish(n, false);
        } else if roll < 80 {
            let burst = self.rng.gen_range(5..40);
            for _ in 0..burst {
                self.publish(n, true);
            }
            self.note(format!("node {n} sends a burst of {burst}"));
        } else if roll < 99 {
            if self.nodes[n].up {
                let down = self.delay(20.0, 4_000.0);
                let node = &mut self.nodes[n];
                node.up = false;
                node.epoch += 1;
                self.out.breaks += 1;
                self.note(format!(
                    "node {n}'s connection breaks for {:.0} ms",
                    down as f64 / 1e6
                ));
                self.at(self.now + down, Event::LinkUp { node: n });
            }
        } else if live.len() > 2 && self.out.deaths == 0 {
            let node = &mut self.nodes[n];
            node.alive = false;
            node.up = false;
            node.epoch += 1;
            self.out.deaths += 1;
            self.note(format!("node {n} dies"));
        }
    }

    fn link_up(&mut self, n: usize) {
        if !self.nodes[n].alive {
            return;
        }
        self.nodes[n].up = true;
        self.note(format!("node {n}'s connection is back"));
        let waiting: Vec<Bytes> = self.nodes[n].outbox.drain(..).collect();
        for bytes in waiting {
            self.send(n, bytes);
        }
        // The sender's repeat of its last frame, and the reader's event.
        if let Some(last) = self.nodes[n].window.last().cloned() {
            self.send(n, last);
        }
        let d = self.delay(0.0, 1.0);
        self.at(self.now + d, Event::Reconnected { to: n });
    }

    /// Reads what node `n`'s reader can read until it has to wait.
    fn read(&mut self, n: usize) -> Result<(), RepairFailure> {
        while self.nodes[n].alive && self.nodes[n].repairing.is_none() {
            let node = &mut self.nodes[n];
            // A reconnection is acted on once the copies already queued are read.
            let reconnect = node.reconnect_pending && node.inbox.is_empty();
            if reconnect {
                node.reconnect_pending = false;
                let senders = node.order.senders();
                self.note(format!(
                    "node {n} asks {} senders for anything newer",
                    senders.len()
                ));
                self.next_sender(n, senders)?;
                continue;
            }
            let Some(frame) = node.inbox.pop_front() else {
                return Ok(());
            };
            match node.order.arrive(&frame) {
                Arrival::Deliver => self.hand_out(n, &frame)?,
                Arrival::Stale { violation } => {
                    self.out.stale += 1;
                    self.out.stale_violations += violation as u64;
                }
                Arrival::Gap { from, to } => {
                    self.note(format!("node {n} misses {from}..{to} of {}", frame.sender));
                    self.out.repairs += 1;
                    let sender = frame.sender;
                    self.nodes[n].repairing = Some(Repairing::Gap {
                        sender,
                        fetch: Fetch::new(from, Some(to)),
                        frame,
                    });
                    self.ask(n)?;
                }
                Arrival::Lost(k) => {
                    return Err(self.fail(format!("an unnumbered level lost {k}: frame {frame:?}")))
                }
            }
        }
        Ok(())
    }

    /// Starts the repair from the next sender in `senders`, if any.
    fn next_sender(
        &mut self,
        n: usize,
        mut senders: Vec<(MemberId, u64)>,
    ) -> Result<(), RepairFailure> {
        if senders.is_empty() {
            return Ok(());
        }
        let (sender, from) = senders.remove(0);
        self.out.repairs += 1;
        self.nodes[n].repairing = Some(Repairing::Senders {
            sender,
            fetch: Fetch::new(from, None),
            rest: senders,
        });
        self.ask(n)
    }

    fn fetch_of(&mut self, n: usize) -> Option<(MemberId, &mut Fetch)> {
        match self.nodes[n].repairing.as_mut()? {
            Repairing::Gap { sender, fetch, .. } | Repairing::Senders { sender, fetch, .. } => {
                Some((*sender, fetch))
            }
        }
    }

    /// Sends node `n`'s next request, or finishes its repair.
    fn ask(&mut self, n: usize) -> Result<(), RepairFailure> {
        let group = self.group.clone();
        let Some((sender, fetch)) = self.fetch_of(n) else {
            return Ok(());
        };
        let Some(text) = fetch.request(&group) else {
            return self.finish(n);
        };
        self.tags += 1;
        let tag = self.tags;
        self.nodes[n].waiting = Some(tag);
        self.at(self.now + REQUEST_TIMEOUT, Event::Timeout { node: n, tag });
        let to = self
            .nodes
            .iter()
            .position(|x| x.id == sender)
            .expect("a known sender");
        if self.nodes[n].up && !self.rng.gen_bool(self.cfg.loss) {
            let d = self.delay(0.1, 2.0);
            self.at(
                self.now + d,
                Event::Request {
                    to,
                    from: n,
                    tag,
                    text,
                },
            );
        }
        Ok(())
    }

    fn answer(&mut self, to: usize, from: usize, tag: u64, text: &str) {
        let body = if self.nodes[to].up {
            let r = Request::parse(text.as_bytes()).expect("the simulator's own request");
            Some(self.nodes[to].window.answer(r.from, r.to))
        } else {
            None // no responders: the server says so at once
        };
        if body.is_some() && self.rng.gen_bool(self.cfg.loss) {
            return;
        }
        let d = self.delay(0.1, 2.0);
        let epoch = self.nodes[from].epoch;
        self.at(
            self.now + d,
            Event::Reply {
                to: from,
                epoch,
                tag,
                body,
            },
        );
    }

    fn reply(&mut self, n: usize, tag: u64, body: Option<Bytes>) -> Result<(), RepairFailure> {
        if self.nodes[n].waiting != Some(tag) {
            return Ok(()); // a reply to a try given up on
        }
        self.nodes[n].waiting = None;
        match body {
            Some(body) => {
                self.fetch_of(n).expect("waiting").1.on_reply(body);
                self.ask(n)
            }
            None => self.failed_try(n, true),
        }
    }

    fn failed_try(&mut self, n: usize, no_responders: bool) -> Result<(), RepairFailure> {
        self.out.failed_tries += 1;
        let (_, fetch) = self.fetch_of(n).expect("waiting");
        if no_responders {
            fetch.on_no_responders();
        } else {
            fetch.on_no_answer();
        }
        if fetch.is_done() {
            return self.finish(n);
        }
        let wait = fetch.retry_after_ns();
        self.at(self.now + wait, Event::Retry { node: n });
        Ok(())
    }

    /// Node `n`'s repair is done: hand out what it brought, account for the rest.
    fn finish(&mut self, n: usize) -> Result<(), RepairFailure> {
        let repairing = self.nodes[n].repairing.take().expect("repairing");
        let (Repairing::Gap { sender, fetch, .. } | Repairing::Senders { sender, fetch, .. }) =
            &repairing;
        let sender = *sender;
        self.note(format!(
            "node {n}'s repair from {sender} done: {} recovered, {} lost, next {}",
            fetch.frames.len(),
            fetch.lost,
            fetch.next
        ));
        self.out.recovered += fetch.frames.len() as u64;
        self.out.counted_lost += fetch.lost;
        *self.nodes[n].lost.entry(sender).or_default() += fetch.lost;
        for f in &fetch.frames {
            self.hand_out(n, f)?;
        }
        self.nodes[n].order.repaired(sender, fetch.next);
        match repairing {
            Repairing::Gap { frame, .. } => self.hand_out(n, &frame),
            Repairing::Senders { rest, .. } => self.next_sender(n, rest),
        }
    }

    fn step(&mut self, e: Event, actions_end: u64) -> Result<(), RepairFailure> {
        match e {
            Event::Action => {
                self.action();
                if self.now < actions_end {
                    let d = self.delay(0.5, 60.0);
                    self.at(self.now + d, Event::Action);
                }
            }
            Event::AtServer { from, epoch, bytes } => {
                if self.nodes[from].epoch == epoch {
                    self.fan_out(bytes);
                } else {
                    self.out.copies_lost += 1;
                }
            }
            Event::Copy { to, epoch, bytes } => {
                if self.nodes[to].epoch != epoch || !self.nodes[to].alive {
                    self.out.copies_lost += 1;
                    self.note(format!("a copy to node {to} is lost in flight"));
                } else if self.rng.gen_bool(self.cfg.loss) {
                    self.out.copies_dropped += 1;
                    self.note(format!("node {to}'s client drops a copy"));
                    let d = self.delay(0.0, 5.0);
                    self.at(self.now + d, Event::Reconnected { to });
                } else {
                    let Ok(Frame::Data(f)) = frame::decode(&bytes) else {
                        return Err(self.fail("a copy did not decode".into()));
                    };
                    self.nodes[to].inbox.push_back(f);
                    self.read(to)?;
                }
            }
            Event::Reconnected { to } => {
                self.nodes[to].reconnect_pending = true;
                self.read(to)?;
            }
            Event::LinkUp { node } => self.link_up(node),
            Event::Request {
                to,
                from,
                tag,
                text,
            } => self.answer(to, from, tag, &text),
            Event::Reply {
                to,
                epoch,
                tag,
                body,
            } => {
                if self.nodes[to].epoch == epoch && self.nodes[to].alive {
                    self.reply(to, tag, body)?;
                    self.read(to)?;
                }
            }
            Event::Timeout { node, tag } => {
                if self.nodes[node].alive && self.nodes[node].waiting == Some(tag) {
                    self.nodes[node].waiting = None;
                    self.failed_try(node, false)?;
                    self.read(node)?;
                }
            }
            Event::Retry { node } => {
                if self.nodes[node].alive {
                    self.ask(node)?;
                    self.read(node)?;
                }
            }
        }
        Ok(())
    }
}

/// Runs one seed.
pub fn run_bus_repair(cfg: &RepairSimConfig) -> Result<RepairOutcome, RepairFailure> {
    let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x005e_ed4e_9a14);
    let count = cfg.nodes.unwrap_or_else(|| rng.gen_range(2..=5));
    let forgetting = rng.gen_bool(0.5);
    let keep = if forgetting {
        rng.gen_range(4..64)
    } else {
        usize::MAX
    };
    let nodes = (0..count)
        .map(|k| Node {
            id: MemberId(100 + k as u64),
            alive: true,
            up: true,
            epoch: 0,
            next_seq: 0,
            window: Window::new(keep, KEEP_BYTES),
            outbox: VecDeque::new(),
            order: Default::default(),
            inbox: VecDeque::new(),
            reconnect_pending: false,
            repairing: None,
            waiting: None,
            last_copy_at: 0,
            last_sent_at: 0,
            handed: HashMap::new(),
            lost: HashMap::new(),
        })
        .collect();
    let mut sim = Sim {
        cfg: cfg.clone(),
        rng,
        now: 0,
        agenda: Agenda::new(),
        nodes,
        group: Subject::new("SIMGROUP").expect("a valid group"),
        forgetting,
        tags: 0,
        out: RepairOutcome {
            seed: cfg.seed,
            ..Default::default()
        },
        notes: Notes::new(cfg.verbose),
    };
    sim.note(format!(
        "{count} nodes, windows of {}",
        if forgetting {
            keep.to_string()
        } else {
            "everything".into()
        }
    ));
    sim.at(0, Event::Action);
    // The actions take about `actions` × 30 ms; then the network runs until quiet.
    let actions_end = cfg.actions as u64 * 30 * MS;
    while let Some((when, e)) = sim.agenda.pop() {
        sim.now = when;
        sim.step(e, actions_end)?;
    }
    sim.end_checks()?;
    Ok(sim.out)
}

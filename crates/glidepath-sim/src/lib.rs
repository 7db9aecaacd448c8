//! A deterministic, seeded simulator for glidepath's RTI services.
//!
//! It runs a whole federation — one [`Executive`] and 2 to 16 [`LocalRti`]s — inside a
//! single thread, on a virtual clock that jumps to the next event. The network keeps
//! each sender's envelopes in order towards each receiver but delays every envelope
//! randomly, so messages from different senders interleave in every possible way.
//! Federates follow random schedules of declarations, registrations, updates,
//! interactions, deletions and time advances (TAR, TARA, NER, NERA, flush queue).
//! After every step the checker asserts the time management guarantees; a failure
//! reports its seed, and `glidepath-sim --seed N --verbose` replays it exactly.

mod fom;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use glidepath_core::{
    AttributeHandle, Callback, Envelope, ExecReply, ExecRequest, Executive, FederateHandle,
    FederationId, InteractionClassHandle, Link, LocalRti, LogicalTime, ObjectClassHandle,
    ObjectInstanceHandle, OrderType, ResignAction, RtiError, Topic,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub use fom::sim_fom;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    /// Number of federates; drawn from 2..=16 when `None`.
    pub federates: Option<usize>,
    /// Time advances each federate makes before the final one.
    pub advances: u32,
    /// Print every event.
    pub verbose: bool,
    /// Give up (and fail) after this many events: a livelock guard.
    pub max_events: u64,
    /// Let some federates join late or resign early.
    pub churn: bool,
}

impl SimConfig {
    /// The configuration CI uses for one seed.
    pub fn for_seed(seed: u64) -> SimConfig {
        SimConfig {
            seed,
            federates: None,
            advances: 20,
            verbose: false,
            max_events: 5_000_000,
            churn: true,
        }
    }
}

/// What one successful run did.
#[derive(Clone, Debug, Default)]
pub struct SimOutcome {
    pub seed: u64,
    pub federates: usize,
    pub events: u64,
    pub grants: u64,
    pub tso_delivered: u64,
    pub ro_delivered: u64,
    pub envelopes: u64,
    pub virtual_time_ns: u64,
}

/// A violated invariant (or deadlock), with the seed that replays it.
#[derive(Clone, Debug)]
pub struct SimFailure {
    pub seed: u64,
    pub message: String,
    pub trace: Vec<String>,
}

impl std::fmt::Display for SimFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "seed {} failed: {}", self.seed, self.message)?;
        writeln!(
            f,
            "replay: cargo run -p glidepath-sim -- --seed {} --verbose",
            self.seed
        )?;
        writeln!(f, "last events:")?;
        for t in &self.trace {
            writeln!(f, "  {t}")?;
        }
        Ok(())
    }
}

const EXEC_NODE: usize = usize::MAX;
const FEDERATION: &str = "sim";
const T_END: f64 = 1_000_000.0;

/// Per-(sender, receiver) FIFO queues with delivery times.
#[derive(Default)]
struct Network {
    queues: BTreeMap<(usize, usize), VecDeque<(u64, Envelope)>>,
    subscribers: BTreeMap<(FederationId, Topic), BTreeSet<usize>>,
    exec_seq: u64,
    envelopes: u64,
}

impl Network {
    fn send(
        &mut self,
        rng: &mut ChaCha8Rng,
        now: u64,
        from: usize,
        federation: FederationId,
        topic: Topic,
        env: Envelope,
    ) {
        let Some(subs) = self.subscribers.get(&(federation, topic)) else {
            return;
        };
        for &to in subs {
            if to == from {
                continue;
            }
            // Mostly short delays, sometimes a long one: different senders overtake
            // each other, one sender's envelopes never do.
            let delay = if rng.gen_bool(0.05) {
                rng.gen_range(500_000..5_000_000)
            } else {
                rng.gen_range(1_000..100_000)
            };
            let q = self.queues.entry((from, to)).or_default();
            let at = q.back().map_or(now + delay, |(t, _)| (*t).max(now + delay));
            let mut e = env.clone();
            e.publish_time_ns = now;
            q.push_back((at, e));
            self.envelopes += 1;
        }
    }

    fn next(&self) -> Option<(u64, usize, usize)> {
        self.queues
            .iter()
            .filter_map(|((f, t), q)| q.front().map(|(at, _)| (*at, *f, *t)))
            .min()
    }
}

struct SimLink<'a> {
    node: usize,
    now: u64,
    net: &'a mut Network,
    exec: &'a mut Executive,
    rng: &'a mut ChaCha8Rng,
}

impl Link for SimLink<'_> {
    fn publish(&mut self, federation: FederationId, topic: Topic, envelope: Envelope) {
        self.net
            .send(self.rng, self.now, self.node, federation, topic, envelope);
    }
    fn subscribe(&mut self, federation: FederationId, topic: Topic) {
        self.net
            .subscribers
            .entry((federation, topic))
            .or_default()
            .insert(self.node);
    }
    fn unsubscribe(&mut self, federation: FederationId, topic: Topic) {
        if let Some(s) = self.net.subscribers.get_mut(&(federation, topic)) {
            s.remove(&self.node);
        }
    }
    fn request(&mut self, request: ExecRequest) -> Result<ExecReply, RtiError> {
        let (reply, federation, notifications) = self.exec.handle(request);
        if let Some(fed) = federation {
            for n in notifications {
                self.net.exec_seq += 1;
                let env = Envelope {
                    sender: FederateHandle::EXECUTIVE,
                    seq: self.net.exec_seq,
                    publish_time_ns: self.now,
                    body: glidepath_core::Body::Exec(n),
                };
                self.net
                    .send(self.rng, self.now, EXEC_NODE, fed, Topic::Federation, env);
            }
        }
        Ok(reply)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Joining,
    Setup,
    Running,
    Finishing,
    Finished,
    Resigned,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Tar,
    Ner,
    Fqr,
}

struct Node {
    idx: usize,
    lrc: Option<LocalRti>,
    phase: Phase,
    wake_at: Option<u64>,
    lookahead: Option<f64>,
    constrained_wanted: bool,
    regulation_on: bool,
    constrained_on: bool,
    ready_achieved: bool,
    done_announced: bool,
    done_achieved: bool,
    published: BTreeMap<ObjectClassHandle, Vec<AttributeHandle>>,
    subscribed: BTreeMap<ObjectClassHandle, BTreeSet<AttributeHandle>>,
    pub_interactions: Vec<InteractionClassHandle>,
    sub_interactions: BTreeSet<InteractionClassHandle>,
    owned: Vec<(ObjectInstanceHandle, ObjectClassHandle)>,
    setup_performed: bool,
    /// Enables regulation only while running, after others have advanced.
    late_regulation: bool,
    /// Regulation requested, callback not yet received.
    regulation_pending: bool,
    /// Constrained requested, callback not yet received.
    constrained_pending: bool,
    /// Joins while the others already run, and resigns on its own when done.
    late_join: bool,
    /// Resigns in the middle of the run.
    quitter: bool,
    discovered: HashMap<ObjectInstanceHandle, ObjectClassHandle>,
    advances_left: u32,
    actions_left: u32,
    pending: Option<(Kind, LogicalTime, bool)>,
    lt: LogicalTime,
    floor: LogicalTime,
    floor_strict: bool,
    last_key: Option<(LogicalTime, FederateHandle, u64)>,
    last_tso: LogicalTime,
}

/// Runs one seeded simulation and checks every invariant after every step.
pub fn run(config: &SimConfig) -> Result<SimOutcome, SimFailure> {
    Sim::new(config).run()
}

struct Sim {
    cfg: SimConfig,
    rng: ChaCha8Rng,
    net: Network,
    exec: Executive,
    nodes: Vec<Node>,
    now: u64,
    trace: VecDeque<String>,
    out: SimOutcome,
    available_only: bool,
    joined: usize,
}

fn t(x: f64) -> LogicalTime {
    LogicalTime::new(x).expect("finite")
}

impl Sim {
    fn new(cfg: &SimConfig) -> Sim {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let n = cfg.federates.unwrap_or_else(|| rng.gen_range(2..=16));
        let mut nodes = Vec::new();
        let mut zero_lookahead = false;
        for idx in 0..n {
            let regulating = rng.gen_bool(0.7);
            let lookahead = regulating.then(|| {
                let l = [0.0, 0.5, 1.0, 1.0, 2.0, 3.5][rng.gen_range(0..6)];
                zero_lookahead |= l == 0.0;
                l
            });
            nodes.push(Node {
                idx,
                lrc: None,
                phase: Phase::Joining,
                wake_at: Some(idx as u64 * 1_000),
                lookahead,
                constrained_wanted: rng.gen_bool(0.75),
                regulation_on: false,
                constrained_on: false,
                ready_achieved: false,
                done_announced: false,
                done_achieved: false,
                published: BTreeMap::new(),
                subscribed: BTreeMap::new(),
                pub_interactions: Vec::new(),
                sub_interactions: BTreeSet::new(),
                owned: Vec::new(),
                setup_performed: false,
                late_regulation: false,
                regulation_pending: false,
                constrained_pending: false,
                late_join: false,
                quitter: false,
                discovered: HashMap::new(),
                advances_left: cfg.advances,
                actions_left: cfg.advances * 6,
                pending: None,
                lt: LogicalTime::ZERO,
                floor: LogicalTime::ZERO,
                floor_strict: false,
                last_key: None,
                last_tso: LogicalTime::ZERO,
            });
        }
        for n in nodes.iter_mut() {
            n.late_regulation = n.lookahead.is_some() && rng.gen_bool(0.2);
            // Node 0 opens the barriers, so it always starts with the others.
            n.late_join = cfg.churn && n.idx > 0 && rng.gen_bool(0.1);
            n.quitter = cfg.churn && n.idx > 0 && !n.late_join && rng.gen_bool(0.1);
            if n.late_join {
                n.wake_at = Some(rng.gen_range(5_000_000..40_000_000));
            }
        }
        let mut exec = Executive::new();
        let (reply, _, _) = exec.handle(ExecRequest::Create {
            name: FEDERATION.into(),
            fom: Arc::new(sim_fom()),
        });
        assert!(matches!(reply, ExecReply::Created { .. }));
        Sim {
            cfg: cfg.clone(),
            rng,
            net: Network::default(),
            exec,
            nodes,
            now: 0,
            trace: VecDeque::new(),
            out: SimOutcome {
                seed: cfg.seed,
                federates: n,
                ..SimOutcome::default()
            },
            // With a zero lookahead regulator, only the "available" variants are
            // guaranteed to progress (as in the standard).
            available_only: zero_lookahead,
            joined: 0,
        }
    }

    fn log(&mut self, s: String) {
        if self.cfg.verbose {
            println!("[{:>12}ns] {s}", self.now);
        }
        self.trace.push_back(s);
        if self.trace.len() > 60 {
            self.trace.pop_front();
        }
    }

    fn describe(&self) -> String {
        let mut s = String::new();
        for n in &self.nodes {
            let _ = writeln!(
                s,
                "  federate {} {:?} pending {:?}: {}",
                n.idx,
                n.phase,
                n.pending,
                n.lrc.as_ref().map_or("not joined".into(), |l| format!(
                    "{} {}\n      {}",
                    l.handle(),
                    l.describe_time_state(),
                    l.describe_conditionals()
                ))
            );
        }
        s
    }

    fn fail(&self, message: String) -> SimFailure {
        SimFailure {
            seed: self.cfg.seed,
            message,
            trace: self.trace.iter().cloned().collect(),
        }
    }

    fn run(mut self) -> Result<SimOutcome, SimFailure> {
        loop {
            self.out.events += 1;
            if self.out.events > self.cfg.max_events {
                return Err(self.fail(format!(
                    "no end after {} events (livelock?)\n{}",
                    self.cfg.max_events,
                    self.describe()
                )));
            }
            let delivery = self.net.next();
            let wake = self
                .nodes
                .iter()
                .filter_map(|n| n.wake_at.map(|w| (w, n.idx)))
                .min();
            match (delivery, wake) {
                (None, None) => break,
                (Some((at, from, to)), w) if w.is_none_or(|(wt, _)| at <= wt) => {
                    self.now = at;
                    let (_, env) = self
                        .net
                        .queues
                        .get_mut(&(from, to))
                        .and_then(|q| q.pop_front())
                        .expect("head");
                    self.deliver(to, env)?;
                }
                (_, Some((wt, idx))) => {
                    self.now = wt;
                    self.nodes[idx].wake_at = None;
                    self.act(idx)?;
                }
                (Some(_), None) => unreachable!("covered by the guard above"),
            }
        }
        // Nothing left to happen: everyone must have finished.
        if let Some(n) = self.nodes.iter().find(|n| n.phase != Phase::Resigned) {
            let lrc = n.lrc.as_ref();
            return Err(self.fail(format!(
                "deadlock: federate {} stuck in {:?}, pending {:?}, time {}, GALT {:?}\n{}",
                n.idx,
                n.phase,
                n.pending,
                n.lt,
                lrc.and_then(|l| l.query_galt()),
                self.describe()
            )));
        }
        let (reply, _, _) = self.exec.handle(ExecRequest::Destroy {
            name: FEDERATION.into(),
        });
        if !matches!(reply, ExecReply::Ok) {
            return Err(self.fail(format!("destroy after everyone resigned failed: {reply:?}")));
        }
        self.out.envelopes = self.net.envelopes;
        self.out.virtual_time_ns = self.now;
        Ok(self.out)
    }

    fn deliver(&mut self, idx: usize, env: Envelope) -> Result<(), SimFailure> {
        let Sim {
            nodes,
            net,
            exec,
            rng,
            now,
            ..
        } = self;
        let node = &mut nodes[idx];
        let Some(lrc) = node.lrc.as_mut() else {
            return Ok(());
        };
        let desc = format!(
            "deliver to {idx}: from {} seq {} {:?}",
            env.sender,
            env.seq,
            short(&env)
        );
        let mut link = SimLink {
            node: idx,
            now: *now,
            net,
            exec,
            rng,
        };
        lrc.handle_envelope(&mut link, env);
        self.log(desc);
        self.after_step(idx)
    }

    fn link_call<R>(
        &mut self,
        idx: usize,
        f: impl FnOnce(&mut LocalRti, &mut SimLink) -> Result<R, RtiError>,
    ) -> Result<R, SimFailure> {
        let Sim {
            nodes,
            net,
            exec,
            rng,
            now,
            ..
        } = self;
        let mut link = SimLink {
            node: idx,
            now: *now,
            net,
            exec,
            rng,
        };
        let lrc = nodes[idx].lrc.as_mut().expect("joined");
        let result = f(lrc, &mut link);
        result.map_err(|e| self.fail(format!("federate {idx}: unexpected error: {e}")))
    }

    fn wake(&mut self, idx: usize, min: u64, max: u64) {
        let d = self.rng.gen_range(min..max);
        self.nodes[idx].wake_at = Some(self.now + d);
    }

    fn act(&mut self, idx: usize) -> Result<(), SimFailure> {
        match self.nodes[idx].phase {
            Phase::Joining => {
                let Sim {
                    net,
                    exec,
                    rng,
                    now,
                    ..
                } = self;
                let mut link = SimLink {
                    node: idx,
                    now: *now,
                    net,
                    exec,
                    rng,
                };
                let joined =
                    LocalRti::join(&mut link, FEDERATION, Some(&format!("fed{idx}")), "sim");
                let lrc = joined.map_err(|e| self.fail(format!("join failed: {e}")))?;
                self.nodes[idx].lrc = Some(lrc);
                self.nodes[idx].phase = Phase::Setup;
                self.log(format!("{idx} joined"));
                if self.nodes[idx].late_join {
                    // No barrier for a latecomer: set up now, run once its modes are on.
                    self.setup(idx)?;
                    self.after_step(idx)?;
                    return self.check_barriers(idx);
                }
                self.joined += 1;
                if self.joined == self.nodes.iter().filter(|n| !n.late_join).count() {
                    // Everyone is in: the first federate opens the two barriers.
                    self.link_call(0, |l, k| {
                        l.register_federation_synchronization_point(
                            k,
                            "ready",
                            Bytes::new(),
                            None,
                        )?;
                        l.register_federation_synchronization_point(k, "done", Bytes::new(), None)
                    })?;
                }
                self.after_step(idx)
            }
            Phase::Running => self.run_action(idx),
            Phase::Setup | Phase::Finishing | Phase::Finished => self.after_step(idx),
            Phase::Resigned => Ok(()),
        }
    }

    fn setup(&mut self, idx: usize) -> Result<(), SimFailure> {
        let fom = sim_fom();
        // Declarations: publish and subscribe random classes and attribute subsets.
        for c in 1..fom.object_classes.len() as u32 {
            let class = ObjectClassHandle(c);
            let all = fom.object_classes[c as usize].all_attributes.clone();
            if self.rng.gen_bool(0.5) {
                let attrs: Vec<AttributeHandle> = all
                    .iter()
                    .copied()
                    .filter(|_| self.rng.gen_bool(0.7))
                    .collect();
                if !attrs.is_empty() {
                    self.link_call(idx, |l, _| l.publish_object_class_attributes(class, &attrs))?;
                    self.nodes[idx].published.insert(class, attrs);
                }
            }
            if self.rng.gen_bool(0.5) {
                let attrs: Vec<AttributeHandle> = all
                    .iter()
                    .copied()
                    .filter(|_| self.rng.gen_bool(0.6))
                    .collect();
                if !attrs.is_empty() {
                    self.link_call(idx, |l, k| {
                        l.subscribe_object_class_attributes(k, class, &attrs)
                    })?;
                    self.nodes[idx]
                        .subscribed
                        .insert(class, attrs.into_iter().collect());
                }
            }
        }
        for c in 1..fom.interaction_classes.len() as u32 {
            let class = InteractionClassHandle(c);
            if self.rng.gen_bool(0.5) {
                self.link_call(idx, |l, _| l.publish_interaction_class(class))?;
                self.nodes[idx].pub_interactions.push(class);
            }
            if self.rng.gen_bool(0.5) {
                self.link_call(idx, |l, k| l.subscribe_interaction_class(k, class))?;
                self.nodes[idx].sub_interactions.insert(class);
            }
        }
        if let Some(la) = self.nodes[idx]
            .lookahead
            .filter(|_| !self.nodes[idx].late_regulation)
        {
            self.link_call(idx, |l, k| l.enable_time_regulation(k, la))?;
            self.nodes[idx].regulation_pending = true;
        }
        if self.nodes[idx].constrained_wanted {
            self.link_call(idx, |l, k| l.enable_time_constrained(k))?;
            self.nodes[idx].constrained_pending = true;
        }
        self.nodes[idx].setup_performed = true;
        self.log(format!(
            "{idx} setup: lookahead {:?} constrained {} publishes {:?} subscribes {:?}",
            self.nodes[idx].lookahead,
            self.nodes[idx].constrained_wanted,
            self.nodes[idx].published.keys().collect::<Vec<_>>(),
            self.nodes[idx].subscribed.keys().collect::<Vec<_>>()
        ));
        Ok(())
    }

    fn tso_time(&mut self, idx: usize) -> Option<LogicalTime> {
        let lrc = self.nodes[idx].lrc.as_ref()?;
        let earliest = lrc.earliest_tso_send_time()?;
        // Half-unit grid: many messages share a time stamp, exercising the tie-break.
        let ts = t((earliest.as_f64() * 2.0).ceil() / 2.0 + self.rng.gen_range(0..6) as f64 * 0.5);
        (ts.as_f64() <= T_END).then_some(ts)
    }

    fn run_action(&mut self, idx: usize) -> Result<(), SimFailure> {
        let n = &self.nodes[idx];
        let idle = n.pending.is_none();
        if n.actions_left == 0 {
            if n.regulation_pending || n.constrained_pending {
                // Still enabling a mode: no advance may be requested yet.
                self.wake(idx, 1_000, 200_000);
                return Ok(());
            }
            // Out of actions: only the final advances remain; the grant wakes us.
            return if idle { self.advance(idx) } else { Ok(()) };
        }
        self.nodes[idx].actions_left = self.nodes[idx].actions_left.saturating_sub(1);
        let roll = self.rng.gen_range(0..100);
        match roll {
            0..=29 if !self.nodes[idx].owned.is_empty() => {
                let i = self.rng.gen_range(0..self.nodes[idx].owned.len());
                let (instance, class) = self.nodes[idx].owned[i];
                let attrs = self.nodes[idx].published[&class].clone();
                let values: Vec<(AttributeHandle, Bytes)> = attrs
                    .iter()
                    .filter(|_| self.rng.gen_bool(0.7))
                    .map(|a| (*a, Bytes::from(format!("{idx}:{}", a.0))))
                    .collect();
                let time = self.tso_time(idx);
                if !values.is_empty() && (time.is_some() || !self.nodes[idx].regulation_on) {
                    self.link_call(idx, |l, k| {
                        l.update_attribute_values(
                            k,
                            instance,
                            values,
                            Bytes::from_static(b"u"),
                            time,
                        )
                    })?;
                    self.log(format!("{idx} updates {instance} at {time:?}"));
                }
            }
            30..=44 if !self.nodes[idx].pub_interactions.is_empty() => {
                let i = self
                    .rng
                    .gen_range(0..self.nodes[idx].pub_interactions.len());
                let class = self.nodes[idx].pub_interactions[i];
                let params = sim_fom().interaction_classes[class.index()]
                    .all_parameters
                    .clone();
                let values = params
                    .iter()
                    .map(|p| (*p, Bytes::from(format!("{idx}"))))
                    .collect();
                let time = self.tso_time(idx);
                if time.is_some() || !self.nodes[idx].regulation_on {
                    self.link_call(idx, |l, k| {
                        l.send_interaction(k, class, values, Bytes::from_static(b"i"), time)
                    })?;
                    self.log(format!("{idx} sends interaction {class} at {time:?}"));
                }
            }
            45..=52 if !self.nodes[idx].published.is_empty() => {
                let classes: Vec<ObjectClassHandle> =
                    self.nodes[idx].published.keys().copied().collect();
                let class = classes[self.rng.gen_range(0..classes.len())];
                let instance =
                    self.link_call(idx, |l, k| l.register_object_instance(k, class, None))?;
                self.nodes[idx].owned.push((instance, class));
                self.log(format!("{idx} registers {instance} of {class}"));
            }
            53..=55 if !self.nodes[idx].owned.is_empty() => {
                let i = self.rng.gen_range(0..self.nodes[idx].owned.len());
                let (instance, _) = self.nodes[idx].owned.swap_remove(i);
                let time = if self.rng.gen_bool(0.5) {
                    self.tso_time(idx)
                } else {
                    None
                };
                self.link_call(idx, |l, k| {
                    l.delete_object_instance(k, instance, Bytes::new(), time)
                })?;
                self.log(format!("{idx} deletes {instance} at {time:?}"));
            }
            56..=57 if !self.nodes[idx].subscribed.is_empty() => {
                let classes: Vec<ObjectClassHandle> =
                    self.nodes[idx].subscribed.keys().copied().collect();
                let class = classes[self.rng.gen_range(0..classes.len())];
                self.link_call(idx, |l, k| {
                    l.request_class_attribute_value_update(k, class, &[], Bytes::new())
                })?;
            }
            58..=59
                if idle
                    && self.nodes[idx].regulation_on
                    && self.nodes[idx].lookahead.is_some_and(|l| l > 0.0) =>
            {
                let la = [0.5, 1.0, 2.0, 3.0][self.rng.gen_range(0..4)];
                self.link_call(idx, |l, k| l.modify_lookahead(k, la))?;
                self.log(format!("{idx} lookahead -> {la}"));
            }
            60..=63
                if idle
                    && self.nodes[idx].lookahead.is_some()
                    && !self.nodes[idx].regulation_on
                    && !self.nodes[idx].regulation_pending =>
            {
                let la = self.nodes[idx]
                    .lookahead
                    .expect("regulating federates have a lookahead");
                self.nodes[idx].regulation_pending = true;
                self.link_call(idx, |l, k| l.enable_time_regulation(k, la))?;
                self.log(format!(
                    "{idx} enables regulation while running, lookahead {la}"
                ));
            }
            64 if idle && self.nodes[idx].regulation_on => {
                self.link_call(idx, |l, k| l.disable_time_regulation(k))?;
                self.nodes[idx].regulation_on = false;
                self.log(format!("{idx} disables regulation"));
            }
            65 if idle && self.nodes[idx].constrained_on => {
                self.link_call(idx, |l, k| l.disable_time_constrained(k))?;
                self.nodes[idx].constrained_on = false;
                self.log(format!("{idx} disables constrained"));
            }
            66..=67
                if idle
                    && self.nodes[idx].constrained_wanted
                    && !self.nodes[idx].constrained_on
                    && !self.nodes[idx].constrained_pending =>
            {
                self.link_call(idx, |l, k| l.enable_time_constrained(k))?;
                self.nodes[idx].constrained_pending = true;
                self.log(format!("{idx} enables constrained while running"));
            }
            68 if idle
                && self.nodes[idx].quitter
                && self.nodes[idx].advances_left < self.cfg.advances / 2 =>
            {
                self.link_call(idx, |l, k| l.resign(k, ResignAction::DeleteObjects))?;
                self.nodes[idx].phase = Phase::Resigned;
                self.nodes[idx].wake_at = None;
                self.log(format!("{idx} quits early"));
                return Ok(());
            }
            _ if idle
                && self.nodes[idx].advances_left > 0
                && !self.nodes[idx].regulation_pending
                && !self.nodes[idx].constrained_pending =>
            {
                return self.advance(idx)
            }
            _ => {}
        }
        self.wake(idx, 1_000, 200_000);
        self.after_step(idx)
    }

    fn advance(&mut self, idx: usize) -> Result<(), SimFailure> {
        let lt = self.nodes[idx].lt;
        // A late regulator may have been moved to the end by peers that finished.
        let finishing = self.nodes[idx].advances_left == 0 || lt >= t(T_END);
        let (kind, time, available) = if finishing {
            (
                Kind::Tar,
                t(T_END).max(lt),
                self.available_only || self.rng.gen_bool(0.3),
            )
        } else {
            let step = self.rng.gen_range(0..8) as f64 * 0.5;
            let time = t(lt.as_f64() + step);
            let kind = match self.rng.gen_range(0..100) {
                0..=44 => Kind::Tar,
                45..=94 => Kind::Ner,
                _ => Kind::Fqr,
            };
            (kind, time, self.available_only || self.rng.gen_bool(0.4))
        };
        self.nodes[idx].pending = Some((kind, time, available));
        self.nodes[idx].last_key = None;
        if finishing {
            self.nodes[idx].phase = Phase::Finishing;
        }
        self.log(format!(
            "{idx} requests {kind:?} {time} available={available}"
        ));
        match kind {
            Kind::Tar => self.link_call(idx, |l, k| {
                l.time_advance_request(k, time.as_f64(), available)
            })?,
            Kind::Ner => self.link_call(idx, |l, k| {
                l.next_message_request(k, time.as_f64(), available)
            })?,
            Kind::Fqr => self.link_call(idx, |l, k| l.flush_queue_request(k, time.as_f64()))?,
        }
        if !finishing {
            self.wake(idx, 1_000, 200_000);
        }
        self.after_step(idx)
    }

    /// Drains the federate's callbacks, checking each, and reacts to them.
    fn after_step(&mut self, idx: usize) -> Result<(), SimFailure> {
        loop {
            let Some(lrc) = self.nodes[idx].lrc.as_mut() else {
                return Ok(());
            };
            let stats = lrc.stats().clone();
            if stats.broken_promises > 0 || stats.out_of_order > 0 {
                return Err(self.fail(format!("federate {idx}: {:?}", stats)));
            }
            let Some(cb) = lrc.poll_callback() else {
                return Ok(());
            };
            self.check_callback(idx, cb)?;
        }
    }

    fn check_callback(&mut self, idx: usize, cb: Callback) -> Result<(), SimFailure> {
        self.log(format!("{idx} <- {}", short_cb(&cb)));
        match cb {
            Callback::AnnounceSynchronizationPoint { label, .. } => {
                if label == "ready" {
                    self.setup(idx)?;
                } else {
                    self.nodes[idx].done_announced = true;
                }
            }
            Callback::FederationSynchronized { label, failed } => {
                if !failed.is_empty() {
                    return Err(self.fail(format!("{label} synchronized with failures {failed:?}")));
                }
                if label == "ready" {
                    self.nodes[idx].phase = Phase::Running;
                    self.wake(idx, 1_000, 50_000);
                } else {
                    let r = self.link_call(idx, |l, k| l.resign(k, ResignAction::DeleteObjects));
                    r?;
                    self.nodes[idx].phase = Phase::Resigned;
                    self.nodes[idx].wake_at = None;
                    self.log(format!("{idx} resigned"));
                    return Ok(());
                }
            }
            Callback::SynchronizationPointRegistrationFailed { label, reason } => {
                return Err(self.fail(format!("sync point {label} failed: {reason}")));
            }
            Callback::TimeRegulationEnabled { time } => {
                self.nodes[idx].regulation_on = true;
                self.nodes[idx].regulation_pending = false;
                self.check_not_backwards(idx, time)?;
                let n = &mut self.nodes[idx];
                if time > n.lt {
                    if n.last_tso > time {
                        let last = n.last_tso;
                        return Err(self.fail(format!("federate {idx}: regulation enabled at {time} after delivering a message at {last}")));
                    }
                    n.lt = time;
                    n.floor = time;
                    n.floor_strict = false;
                }
                n.last_key = None;
            }
            Callback::TimeConstrainedEnabled { time } => {
                self.nodes[idx].constrained_on = true;
                self.nodes[idx].constrained_pending = false;
                self.check_not_backwards(idx, time)?;
                let n = &mut self.nodes[idx];
                n.floor = n.lt;
                n.floor_strict = false;
            }
            Callback::TimeAdvanceGrant { time } => {
                let Some((kind, req, available)) = self.nodes[idx].pending.take() else {
                    return Err(
                        self.fail(format!("federate {idx}: grant {time} without a request"))
                    );
                };
                self.check_not_backwards(idx, time)?;
                let ok = match kind {
                    Kind::Tar => time == req,
                    Kind::Ner | Kind::Fqr => time <= req,
                };
                if !ok {
                    return Err(
                        self.fail(format!("federate {idx}: {kind:?}({req}) granted at {time}"))
                    );
                }
                let n = &mut self.nodes[idx];
                n.lt = time;
                n.floor = time;
                n.floor_strict = !(available || kind == Kind::Fqr);
                n.last_key = None;
                if kind == Kind::Fqr {
                    n.last_tso = time;
                }
                n.advances_left = n.advances_left.saturating_sub(1);
                self.out.grants += 1;
                if n.phase == Phase::Running && n.wake_at.is_none() {
                    self.wake(idx, 1_000, 50_000);
                }
                let n = &mut self.nodes[idx];
                if n.phase == Phase::Finishing && time >= t(T_END) {
                    n.phase = Phase::Finished;
                }
            }
            Callback::ReflectAttributeValues {
                instance,
                class,
                values,
                info,
                ..
            } => {
                self.count(info.received_order);
                let n = &self.nodes[idx];
                match n.discovered.get(&instance) {
                    Some(c) if *c == class => {}
                    other => {
                        return Err(self.fail(format!(
                        "federate {idx}: reflect of {instance} as {class}, discovered as {other:?}"
                    )))
                    }
                }
                let sub = n.subscribed.get(&class);
                if let Some((a, _)) = values
                    .iter()
                    .find(|(a, _)| !sub.is_some_and(|s| s.contains(a)))
                {
                    return Err(self.fail(format!(
                        "federate {idx}: reflected unsubscribed attribute {a} of {class}"
                    )));
                }
                self.check_tso(idx, info.received_order, info.time, info.producer, info.seq)?;
            }
            Callback::ReceiveInteraction {
                class,
                info,
                values,
                ..
            } => {
                self.count(info.received_order);
                if !self.nodes[idx].sub_interactions.contains(&class) {
                    return Err(self.fail(format!(
                        "federate {idx}: received unsubscribed interaction {class}"
                    )));
                }
                let params = &sim_fom().interaction_classes[class.index()].all_parameters;
                if values.iter().any(|(p, _)| !params.contains(p)) {
                    return Err(self.fail(format!(
                        "federate {idx}: interaction {class} carries a parameter of a subclass"
                    )));
                }
                self.check_tso(idx, info.received_order, info.time, info.producer, info.seq)?;
            }
            Callback::RemoveObjectInstance { instance, info, .. } => {
                self.count(info.received_order);
                if self.nodes[idx].discovered.remove(&instance).is_none() {
                    return Err(self.fail(format!(
                        "federate {idx}: removal of undiscovered {instance}"
                    )));
                }
                self.check_tso(idx, info.received_order, info.time, info.producer, info.seq)?;
            }
            Callback::DiscoverObjectInstance {
                instance, class, ..
            } => {
                if !self.nodes[idx].subscribed.contains_key(&class) {
                    return Err(self.fail(format!(
                        "federate {idx}: discovered {instance} as unsubscribed {class}"
                    )));
                }
                if self.nodes[idx].discovered.insert(instance, class).is_some() {
                    return Err(self.fail(format!("federate {idx}: {instance} discovered twice")));
                }
            }
            Callback::ProvideAttributeValueUpdate { instance, .. }
                if !self.nodes[idx].owned.iter().any(|(i, _)| *i == instance) =>
            {
                return Err(self.fail(format!(
                    "federate {idx}: asked to provide {instance} it does not own"
                )));
            }
            _ => {}
        }
        self.check_barriers(idx)
    }

    /// Barriers: ready once both time modes are on, done once the final grant came.
    fn check_barriers(&mut self, idx: usize) -> Result<(), SimFailure> {
        let n = &self.nodes[idx];
        if n.phase == Phase::Setup
            && !n.ready_achieved
            && !n.regulation_pending
            && !n.constrained_pending
            && n.setup_performed
        {
            let late = n.late_join;
            self.nodes[idx].ready_achieved = true;
            if late {
                self.nodes[idx].phase = Phase::Running;
                self.wake(idx, 1_000, 50_000);
            } else {
                self.link_call(idx, |l, k| {
                    l.synchronization_point_achieved(k, "ready", true)
                })?;
            }
        }
        let n = &self.nodes[idx];
        if n.phase == Phase::Finished && n.late_join {
            self.link_call(idx, |l, k| l.resign(k, ResignAction::DeleteObjects))?;
            self.nodes[idx].phase = Phase::Resigned;
            self.log(format!("{idx} (late joiner) resigned"));
            return Ok(());
        }
        if n.phase == Phase::Finished && n.done_announced && !n.done_achieved {
            self.nodes[idx].done_achieved = true;
            self.link_call(idx, |l, k| {
                l.synchronization_point_achieved(k, "done", true)
            })?;
        }
        Ok(())
    }

    fn count(&mut self, order: OrderType) {
        match order {
            OrderType::TimeStamp => self.out.tso_delivered += 1,
            OrderType::Receive => self.out.ro_delivered += 1,
        }
    }

    fn check_not_backwards(&self, idx: usize, time: LogicalTime) -> Result<(), SimFailure> {
        if time < self.nodes[idx].lt {
            return Err(self.fail(format!(
                "federate {idx}: time moved backwards from {} to {time}",
                self.nodes[idx].lt
            )));
        }
        Ok(())
    }

    /// The time-stamp-order guarantees for one delivered message.
    fn check_tso(
        &mut self,
        idx: usize,
        order: OrderType,
        time: Option<LogicalTime>,
        producer: FederateHandle,
        seq: u64,
    ) -> Result<(), SimFailure> {
        if order != OrderType::TimeStamp {
            return Ok(());
        }
        let n = &self.nodes[idx];
        let Some(ts) = time else {
            return Err(self.fail(format!("federate {idx}: TSO delivery without a time stamp")));
        };
        if !n.constrained_on {
            return Err(self.fail(format!(
                "federate {idx}: TSO delivery while not constrained"
            )));
        }
        // Enabling regulation late may move a constrained federate's time forward: the
        // messages before the new time are delivered first, like an advance.
        let enabling = n.regulation_pending;
        let Some((kind, req, _)) =
            n.pending
                .or(enabling.then_some((Kind::Tar, LogicalTime::INFINITY, true)))
        else {
            return Err(self.fail(format!(
                "federate {idx}: TSO delivery at {ts} outside a time advance"
            )));
        };
        if ts < n.floor || (n.floor_strict && ts == n.floor) {
            return Err(self.fail(format!(
                "federate {idx}: TSO message at {ts} is in the past (logical time {}, strict {})",
                n.floor, n.floor_strict
            )));
        }
        if kind != Kind::Fqr && ts > req {
            return Err(self.fail(format!(
                "federate {idx}: TSO message at {ts} delivered during {kind:?}({req})"
            )));
        }
        let key = (ts, producer, seq);
        if kind != Kind::Fqr {
            if n.last_key.is_some_and(|k| k >= key) {
                return Err(self.fail(format!(
                    "federate {idx}: TSO order broken: {key:?} after {:?}",
                    n.last_key
                )));
            }
            if ts < n.last_tso {
                return Err(self.fail(format!(
                    "federate {idx}: TSO time went back from {} to {ts}",
                    n.last_tso
                )));
            }
        }
        let n = &mut self.nodes[idx];
        n.last_key = Some(key);
        n.last_tso = n.last_tso.max(ts);
        Ok(())
    }
}

fn short(env: &Envelope) -> String {
    let mut s = String::new();
    match &env.body {
        glidepath_core::Body::TimeStatus(st) => {
            let _ = write!(
                s,
                "status {:?} lt {} promise {} {:?} last_tso {}",
                st.regulation, st.logical_time, st.promise, st.advance, st.last_tso_seq
            );
        }
        b => {
            let d = format!("{b:?}");
            s.push_str(&d[..d.len().min(120)]);
        }
    }
    s
}

fn short_cb(cb: &Callback) -> String {
    let d = format!("{cb:?}");
    d[..d.len().min(160)].to_string()
}

//! A deterministic, seeded simulator for glidepath's RTI services.
//!
//! It runs a whole federation — one [`Executive`](glidepath_core::Executive) and 2 to 16 [`LocalRti`]s — inside a
//! single thread, on a virtual clock that jumps to the next event. The network keeps
//! each sender's envelopes in order towards each receiver but delays every envelope
//! randomly, so messages from different senders interleave in every possible way.
//! Federates follow random schedules of declarations, registrations, updates,
//! interactions, deletions and time advances (TAR, TARA, NER, NERA, flush queue).
//! After every step the checker asserts the time management guarantees, and at every
//! quiescent point (nothing in flight) it checks liveness: a federate that perfect
//! knowledge would grant must have been granted, and a status that tells nothing new
//! is never re-sent. A failure reports its seed, and `glidepath-sim --seed N
//! --verbose` replays it exactly.
//!
//! Files: `network` (the simulated network and link), `schedule` (what federates do),
//! `check` (the invariants), `trace` (the events a failure shows), `fom`. The `flow`
//! module is a second simulator: the NATS backend's reliable delivery over a faulty
//! network (`glidepath-sim --flow`); `ddm` a third: data distribution management's
//! regions, moved and committed at random, checked message by message
//! (`glidepath-sim --ddm`); `bus` a fourth: the bus's ordered levels and membership
//! over lossy links with churn, crashes and pauses (`glidepath-sim --bus`); and
//! `bus_repair` a fifth: the bus's RELIABLE and FIFO repairs over core NATS with
//! broken connections, dropped and duplicated copies and dying senders
//! (`glidepath-sim --bus-repair`).

mod agenda;
pub mod bus;
pub mod bus_repair;
mod check;
pub mod ddm;
pub mod flow;
mod fom;
mod network;
mod ownership;
mod save;
mod schedule;
mod trace;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

use glidepath_core::{
    AttributeHandle, Envelope, ExecReply, ExecRequest, ExecutiveHost, FederateHandle,
    InteractionClassHandle, LocalRti, LogicalTime, ObjectClassHandle, ObjectInstanceHandle,
    RtiError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use network::{Network, SimLink};
use trace::{Trace, TraceEvent};

pub use fom::sim_fom;
pub use glidepath_core::TimeRepresentation;
pub use save::{run_save_restore, SaveOutcome};
pub use trace::ProtocolFailure;

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
    /// How the random schedules are drawn.
    pub profile: Profile,
    /// The federation's time representation; `None` picks by seed: one seed in five
    /// (`seed % 5 == 4`) runs an `HLAinteger64Time` federation, the rest float (the
    /// classic profile is always float).
    pub time_representation: Option<TimeRepresentation>,
    /// Random ownership schedules (divest, negotiated divest and confirm, acquire,
    /// acquire if available, cancel, release denied, queries, resign with pending
    /// requests) on top of the weighted profile. Off, a seed replays the schedule it
    /// had before ownership management existed (the classic profile never has them).
    pub ownership: bool,
}

/// How a seed's federation and schedules are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Profile {
    /// Weighted towards where time management is hardest: zero-lookahead
    /// federations, next message requests, late regulation, and federates that resign
    /// in the middle of a request.
    #[default]
    Weighted,
    /// The schedules of the first simulator, kept so that seeds found with it (such as
    /// 5007226) replay exactly.
    Classic,
}

impl SimConfig {
    /// The time representation this run's federation uses.
    pub fn representation(&self) -> TimeRepresentation {
        match (self.time_representation, self.profile) {
            (Some(r), _) => r,
            (None, Profile::Weighted) if self.seed % 5 == 4 => TimeRepresentation::Integer64,
            (None, _) => TimeRepresentation::Float64,
        }
    }

    /// The configuration CI uses for one seed.
    pub fn for_seed(seed: u64) -> SimConfig {
        SimConfig {
            seed,
            federates: None,
            advances: 20,
            verbose: false,
            max_events: 5_000_000,
            churn: true,
            profile: Profile::default(),
            time_representation: None,
            ownership: true,
        }
    }

    /// Whether this run draws ownership schedules.
    pub fn ownership_schedules(&self) -> bool {
        self.ownership && self.profile == Profile::Weighted
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
    pub statuses: u64,
    /// Quiescent points at which liveness was checked.
    pub quiescent_checks: u64,
    pub virtual_time_ns: u64,
    /// Ownership services called (each one request to the executive).
    pub ownership_requests: u64,
    /// Instance attributes that changed owner to a federate (acquisition notifications).
    pub ownership_transfers: u64,
    /// Acquisitions asked for (attributes), and how they ended.
    pub acquisitions: u64,
    pub acquisitions_granted: u64,
    pub acquisitions_unavailable: u64,
    pub acquisitions_cancelled: u64,
    /// Updates of attributes the federate did not own, refused at the call.
    pub refused_updates: u64,
    /// Updates whose sender the executive confirmed as the owner when they were sent.
    pub owner_checked_updates: u64,
    /// Times the one-owner invariant was checked for an instance.
    pub ownership_checks: u64,
}

/// A violated invariant (or deadlock), with the seed that replays it.
#[derive(Clone, Debug)]
pub struct SimFailure {
    pub seed: u64,
    pub profile: Profile,
    pub message: String,
    pub trace: Vec<String>,
}

impl std::fmt::Display for SimFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        trace::write_failure(
            f,
            format_args!("seed {} failed: {}", self.seed, self.message),
            format_args!(
                "cargo run -p glidepath-sim -- --seed {}{} --verbose",
                self.seed,
                match self.profile {
                    Profile::Weighted => "",
                    Profile::Classic => " --profile classic",
                }
            ),
            &self.trace,
        )
    }
}

const FEDERATION: &str = "sim";
const T_END: f64 = 1_000_000.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    Joining,
    Setup,
    Running,
    Finishing,
    Finished,
    Resigned,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Tar,
    Ner,
    Fqr,
}

pub(crate) struct Node {
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
    /// Instances of which this federate owns some attribute, with the class it
    /// publishes them at (registered ones first, in registration order).
    owned: Vec<(ObjectInstanceHandle, ObjectClassHandle)>,
    /// Instances this federate registered, with their class.
    registered: HashMap<ObjectInstanceHandle, ObjectClassHandle>,
    /// Acquisitions this federate asked for that have not ended yet.
    acquiring: BTreeSet<(ObjectInstanceHandle, AttributeHandle)>,
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
    /// The federation's FOM, built once.
    fom: Arc<glidepath_core::Fom>,
    /// The time grid schedules draw on: half units for floats, whole ticks for integers.
    grid: f64,
    rng: ChaCha8Rng,
    net: Network,
    exec: ExecutiveHost,
    nodes: Vec<Node>,
    now: u64,
    trace: Trace,
    out: SimOutcome,
    available_only: bool,
    joined: usize,
    /// Counts steps that touched a federate, so liveness is checked once per quiescent point.
    generation: u64,
    checked_generation: u64,
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
        let weighted = cfg.profile == Profile::Weighted;
        // Integer federations run the same schedules on a grid of whole ticks: every
        // time and lookahead is twice the float federation's.
        let representation = cfg.representation();
        let grid = match representation {
            TimeRepresentation::Float64 => 0.5,
            TimeRepresentation::Integer64 => 1.0,
        };
        let scale = grid / 0.5;
        // Weighted: a third of the federations lean on zero lookahead.
        let zero_heavy = weighted && rng.gen_bool(0.35);
        for idx in 0..n {
            let regulating = rng.gen_bool(0.7);
            let lookahead = regulating.then(|| {
                let l = if zero_heavy && rng.gen_bool(0.5) {
                    0.0
                } else {
                    [0.0, 0.5, 1.0, 1.0, 2.0, 3.5][rng.gen_range(0..6)] * scale
                };
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
                registered: HashMap::new(),
                acquiring: BTreeSet::new(),
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
            n.late_regulation =
                n.lookahead.is_some() && rng.gen_bool(if weighted { 0.35 } else { 0.2 });
            // Node 0 opens the barriers, so it always starts with the others.
            n.late_join = cfg.churn && n.idx > 0 && rng.gen_bool(0.1);
            n.quitter = cfg.churn
                && n.idx > 0
                && !n.late_join
                && rng.gen_bool(if weighted { 0.2 } else { 0.1 });
            if n.late_join {
                n.wake_at = Some(rng.gen_range(5_000_000..40_000_000));
            }
        }
        let fom = Arc::new(glidepath_core::Fom {
            time_representation: representation,
            ..sim_fom()
        });
        let mut exec = ExecutiveHost::new();
        let (reply, _, _) = exec.executive_mut().handle(ExecRequest::Create {
            name: FEDERATION.into(),
            fom: fom.clone(),
        });
        assert!(matches!(reply, ExecReply::Created { .. }));
        Sim {
            cfg: cfg.clone(),
            fom,
            grid,
            rng,
            net: Network::default(),
            exec,
            nodes,
            now: 0,
            trace: Trace::new(cfg.verbose),
            out: SimOutcome {
                seed: cfg.seed,
                federates: n,
                ..SimOutcome::default()
            },
            // With a zero lookahead regulator, only the "available" variants are
            // guaranteed to progress (as in the standard).
            available_only: zero_lookahead,
            joined: 0,
            generation: 0,
            checked_generation: 0,
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
            profile: self.cfg.profile,
            message,
            trace: self.trace.lines(),
        }
    }

    fn log(&mut self, s: String) {
        self.trace.push(self.now, TraceEvent::Note(s));
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
            let delivery = self.net.next_at();
            let wake = self
                .nodes
                .iter()
                .filter_map(|n| n.wake_at.map(|w| (w, n.idx)))
                .min();
            match (delivery, wake) {
                (None, None) => break,
                (Some(at), w) if w.is_none_or(|(wt, _)| at <= wt) => {
                    let (at, to, env) = self.net.pop().expect("peeked");
                    self.now = at;
                    self.deliver(to, env)?;
                }
                (_, Some((wt, idx))) => {
                    self.now = wt;
                    self.nodes[idx].wake_at = None;
                    self.act(idx)?;
                }
                (Some(_), None) => unreachable!("covered by the guard above"),
            }
            if let Some(storm) = self.net.storm.take() {
                return Err(self.fail(format!("{storm}\n{}", self.describe())));
            }
            if let Some(v) = self.net.violations.first() {
                return Err(self.fail(v.clone()));
            }
            if self.net.is_quiet() && self.generation != self.checked_generation {
                self.checked_generation = self.generation;
                self.out.quiescent_checks += 1;
                self.check_liveness()?;
                self.check_all_ownership()?;
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
        let (reply, _, _) = self.exec.executive_mut().handle(ExecRequest::Destroy {
            name: FEDERATION.into(),
        });
        if !matches!(reply, ExecReply::Ok) {
            return Err(self.fail(format!("destroy after everyone resigned failed: {reply:?}")));
        }
        if let Some(((instance, attribute), idx)) = self.ended_check() {
            return Err(self.fail(format!(
                "federate {idx}'s acquisition of {attribute:?} of {instance} never ended"
            )));
        }
        self.out.owner_checked_updates = self.net.owner_checked.len() as u64;
        self.out.envelopes = self.net.envelopes;
        self.out.statuses = self.net.statuses;
        self.out.virtual_time_ns = self.now;
        Ok(self.out)
    }

    /// The federates and the link of federate `idx`, borrowed apart from each other.
    pub(crate) fn link_of(&mut self, idx: usize) -> (&mut Vec<Node>, SimLink<'_>) {
        let Sim {
            nodes,
            net,
            exec,
            rng,
            now,
            ..
        } = self;
        let link = SimLink {
            node: idx,
            now: *now,
            net,
            exec,
            rng,
        };
        (nodes, link)
    }

    fn deliver(&mut self, idx: usize, env: Envelope) -> Result<(), SimFailure> {
        let traced = env.clone();
        let greeting = matches!(
            env.body,
            glidepath_core::Body::Exec(glidepath_core::Notification::FederateJoined { .. })
        );
        let ownership_of = match &env.body {
            glidepath_core::Body::Exec(glidepath_core::Notification::Ownership {
                instance,
                ..
            }) => Some(*instance),
            _ => None,
        };
        let (nodes, mut link) = self.link_of(idx);
        let Some(lrc) = nodes[idx].lrc.as_mut() else {
            return Ok(());
        };
        link.net.greeting = greeting;
        lrc.handle_envelope(env);
        link.flush(lrc);
        self.net.greeting = false;
        self.generation += 1;
        self.trace.push(
            self.now,
            TraceEvent::Deliver {
                to: idx,
                envelope: traced,
            },
        );
        self.after_step(idx)?;
        match ownership_of {
            Some(instance) => self.check_instance_ownership(instance),
            None => Ok(()),
        }
    }

    fn link_call<R>(
        &mut self,
        idx: usize,
        f: impl FnOnce(&mut LocalRti, &mut SimLink) -> Result<R, RtiError>,
    ) -> Result<R, SimFailure> {
        let (nodes, mut link) = self.link_of(idx);
        let lrc = nodes[idx].lrc.as_mut().expect("joined");
        let result = f(lrc, &mut link);
        link.flush(lrc);
        self.generation += 1;
        result.map_err(|e| self.fail(format!("federate {idx}: unexpected error: {e}")))
    }

    fn wake(&mut self, idx: usize, min: u64, max: u64) {
        let d = self.rng.gen_range(min..max);
        self.nodes[idx].wake_at = Some(self.now + d);
    }
}

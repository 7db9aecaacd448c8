//! `glidepath-sim`: run or replay deterministic simulations of the RTI services.
//!
//! `glidepath-sim --seed 42 --verbose` replays one seed event by event;
//! `glidepath-sim --seeds 1000000 --jobs 2` runs a long batch on every core and prints
//! the first failure with its replay command. `--flow` runs the reliable-delivery
//! simulator instead (`glidepath-sim --flow --seeds 1000 --loss 0.05 --duplicate 0.02`),
//! `--ddm` the data distribution management simulator (`glidepath-sim --ddm --seeds 1000`),
//! `--bus` the bus's ordered levels and membership (`glidepath-sim --bus --seeds 1000`).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

use clap::{Parser, ValueEnum};
use glidepath_sim::flow::{run_flow, FlowFailure, FlowSimConfig, DEFAULT_FAULTS};
use glidepath_sim::{run, Profile, SimConfig, SimFailure, TimeRepresentation};

#[derive(Parser, Debug)]
#[command(
    name = "glidepath-sim",
    about = "Deterministic, seeded simulations of glidepath's RTI services"
)]
struct Args {
    /// Replay exactly this seed.
    #[arg(long, conflicts_with_all = ["seeds", "start"])]
    seed: Option<u64>,
    /// How many seeds to run.
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// The first seed of the batch.
    #[arg(long, default_value_t = 0)]
    start: u64,
    /// Threads running seeds in parallel (each seed is deterministic on its own);
    /// 0 means one per core.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Federates per federation (drawn from 2..=16 when absent).
    #[arg(long, value_parser = clap::value_parser!(u64).range(2..=64))]
    federates: Option<u64>,
    /// Time advances each federate makes before the final one.
    #[arg(long)]
    advances: Option<u32>,
    /// How schedules are drawn: `classic` replays seeds found by the first simulator.
    #[arg(long, value_enum, default_value_t = ProfileArg::Weighted)]
    profile: ProfileArg,
    /// The federation's time representation (by default one seed in five, `seed % 5
    /// == 4`, runs `HLAinteger64Time`).
    #[arg(long, value_enum)]
    time: Option<TimeArg>,
    /// Print every event (with --seed).
    #[arg(long)]
    verbose: bool,
    /// Write the batch's counts (seeds, events, grants, ownership transfers,
    /// violations, ...) to this file as JSON, pass or fail.
    #[arg(long, value_name = "FILE")]
    json: Option<std::path::PathBuf>,
    /// Without the random ownership schedules: seeds replay the schedules they had
    /// before ownership management existed.
    #[arg(long)]
    no_ownership: bool,
    /// Without the random save/restore run each seed also gets (see
    /// `glidepath_sim::run_save_restore`).
    #[arg(long)]
    no_save: bool,
    /// Simulate reliable delivery (the NATS backend's flow control) over a faulty
    /// network instead of time management.
    #[arg(long)]
    flow: bool,
    /// Simulate data distribution management (random regions moved and committed;
    /// every callback checked against the overlap when its message was sent)
    /// instead of time management.
    #[arg(long, conflicts_with = "flow")]
    ddm: bool,
    /// Simulate the bus's ordered levels and membership (AGREED, SAFE, joins, leaves,
    /// crashes, pauses; copies and acknowledgements lost) instead of time management.
    #[arg(long, conflicts_with_all = ["flow", "ddm"])]
    bus: bool,
    /// Simulate the bus's RELIABLE and FIFO repairs over core NATS (connections
    /// broken, copies dropped and duplicated, senders dying) instead of time
    /// management.
    #[arg(long, conflicts_with_all = ["flow", "ddm", "bus"])]
    bus_repair: bool,
    /// With --bus: the probability that a copy or an acknowledgement is lost.
    #[arg(long, value_parser = probability, default_value_t = 0.05, requires = "bus")]
    bus_loss: f64,
    /// With --flow: the probability that a packet is lost.
    #[arg(long, value_parser = probability, default_value_t = DEFAULT_FAULTS.loss, requires = "flow")]
    loss: f64,
    /// With --flow: the probability that a packet arrives twice.
    #[arg(long, value_parser = probability, default_value_t = DEFAULT_FAULTS.duplicate, requires = "flow")]
    duplicate: f64,
    /// With --flow: the probability that a packet is held back (reordered).
    #[arg(long, value_parser = probability, default_value_t = DEFAULT_FAULTS.reorder, requires = "flow")]
    reorder: f64,
    /// With --flow: whether a partition cuts links for a while (drawn per seed when absent).
    #[arg(long, value_enum, requires = "flow")]
    partition: Option<Draw>,
    /// With --flow: whether a sender crashes (drawn per seed when absent).
    #[arg(long, value_enum, requires = "flow")]
    crash: Option<Draw>,
    /// With --flow: whether a receiver stops reading for a while, its inbox full
    /// (drawn per seed when absent).
    #[arg(long, value_enum, requires = "flow")]
    busy: Option<Draw>,
    /// With --flow: whether a receiver dies (drawn per seed when absent).
    #[arg(long, value_enum, requires = "flow")]
    lost_receiver: Option<Draw>,
    /// With --flow: whether senders send to cells only some receivers read, with
    /// accounts (the NATS backend's DDM cells; drawn per seed when absent).
    #[arg(long, value_enum, requires = "flow")]
    cells: Option<Draw>,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Draw {
    Always,
    Never,
}

fn probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("`{s}` is not a probability between 0 and 1")),
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum TimeArg {
    /// `HLAfloat64Time`.
    Float,
    /// `HLAinteger64Time`.
    Integer,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ProfileArg {
    Weighted,
    Classic,
}

fn config(args: &Args, seed: u64) -> SimConfig {
    let mut cfg = SimConfig::for_seed(seed);
    cfg.verbose = args.verbose;
    cfg.federates = args.federates.map(|f| f as usize);
    if let Some(a) = args.advances {
        cfg.advances = a;
    }
    cfg.time_representation = args.time.map(|t| match t {
        TimeArg::Float => TimeRepresentation::Float64,
        TimeArg::Integer => TimeRepresentation::Integer64,
    });
    cfg.ownership = !args.no_ownership;
    cfg.profile = match args.profile {
        ProfileArg::Weighted => Profile::Weighted,
        ProfileArg::Classic => Profile::Classic,
    };
    cfg
}

/// Totals over a batch; seeds are handed out one at a time so jobs stay balanced.
#[derive(Default)]
struct Totals {
    ok: AtomicU64,
    events: AtomicU64,
    largest: AtomicU64,
    sums: Mutex<Sums>,
}

/// The outcome counts summed over the seeds that passed.
#[derive(Default)]
struct Sums {
    grants: u64,
    tso_delivered: u64,
    ro_delivered: u64,
    envelopes: u64,
    quiescent_checks: u64,
    ownership_requests: u64,
    ownership_transfers: u64,
    acquisitions: u64,
    acquisitions_granted: u64,
    acquisitions_unavailable: u64,
    acquisitions_cancelled: u64,
    owner_checked_updates: u64,
    refused_updates: u64,
    ownership_checks: u64,
    saves: u64,
    restores: u64,
    restore_snapshots_checked: u64,
    dropped_before_restore: u64,
    save_run_grants: u64,
}

impl Sums {
    fn add_save(&mut self, s: &glidepath_sim::SaveOutcome) {
        self.saves += s.saves;
        self.restores += s.restores;
        self.restore_snapshots_checked += s.snapshots_checked;
        self.dropped_before_restore += s.dropped_before_restore;
        self.save_run_grants += s.grants;
    }

    fn add(&mut self, o: &glidepath_sim::SimOutcome) {
        self.grants += o.grants;
        self.tso_delivered += o.tso_delivered;
        self.ro_delivered += o.ro_delivered;
        self.envelopes += o.envelopes;
        self.quiescent_checks += o.quiescent_checks;
        self.ownership_requests += o.ownership_requests;
        self.ownership_transfers += o.ownership_transfers;
        self.acquisitions += o.acquisitions;
        self.acquisitions_granted += o.acquisitions_granted;
        self.acquisitions_unavailable += o.acquisitions_unavailable;
        self.acquisitions_cancelled += o.acquisitions_cancelled;
        self.owner_checked_updates += o.owner_checked_updates;
        self.refused_updates += o.refused_updates;
        self.ownership_checks += o.ownership_checks;
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.verbose && args.seed.is_none() && args.seeds > 1 {
        eprintln!("--verbose prints every event: use it with --seed N");
        return ExitCode::from(2);
    }
    if args.flow {
        return flow_main(&args);
    }
    if args.ddm {
        return ddm_main(&args);
    }
    if args.bus {
        return bus_main(&args);
    }
    if args.bus_repair {
        return bus_repair_main(&args);
    }
    let (start, count) = match args.seed {
        Some(s) => (s, 1),
        None => (args.start, args.seeds),
    };
    let jobs = match args.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        j => j,
    };
    let began = Instant::now();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let totals = Totals::default();
    let first_failure: Mutex<Option<SimFailure>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(count.max(1) as usize) {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    let seed = start + i;
                    let outcome = run(&config(&args, seed)).and_then(|o| {
                        let saved = (!args.no_save)
                            .then(|| glidepath_sim::run_save_restore(seed))
                            .transpose()?;
                        Ok((o, saved))
                    });
                    match outcome {
                        Ok((o, saved)) => {
                            if let Some(s) = &saved {
                                totals.events.fetch_add(s.events, Ordering::Relaxed);
                                totals.sums.lock().expect("not poisoned").add_save(s);
                                if args.seed.is_some() {
                                    println!("{s:?}");
                                }
                            }
                            totals.ok.fetch_add(1, Ordering::Relaxed);
                            totals.events.fetch_add(o.events, Ordering::Relaxed);
                            totals
                                .largest
                                .fetch_max(o.federates as u64, Ordering::Relaxed);
                            totals.sums.lock().expect("not poisoned").add(&o);
                            if args.seed.is_some() {
                                println!("{o:?}");
                            }
                        }
                        Err(f) => {
                            stop.store(true, Ordering::Relaxed);
                            let mut first = first_failure.lock().expect("not poisoned");
                            // Report the lowest failing seed seen, so reruns agree.
                            if first.as_ref().is_none_or(|g| f.seed < g.seed) {
                                *first = Some(f);
                            }
                        }
                    }
                }
            });
        }
    });
    let failure = first_failure.into_inner().expect("not poisoned");
    let sums = totals.sums.lock().expect("not poisoned");
    if let Some(path) = &args.json {
        let json = serde_json::json!({
            "seeds": count,
            "start": start,
            "passed": totals.ok.load(Ordering::Relaxed),
            // Each failing seed stops at its first violated invariant.
            "violations": u64::from(failure.is_some()),
            "failed_seed": failure.as_ref().map(|f| f.seed),
            "failure": failure.as_ref().map(|f| f.message.clone()),
            "events": totals.events.load(Ordering::Relaxed),
            "largest_federation": totals.largest.load(Ordering::Relaxed),
            "grants": sums.grants,
            "tso_delivered": sums.tso_delivered,
            "ro_delivered": sums.ro_delivered,
            "envelopes": sums.envelopes,
            "quiescent_checks": sums.quiescent_checks,
            "ownership_requests": sums.ownership_requests,
            "ownership_transfers": sums.ownership_transfers,
            "acquisitions": sums.acquisitions,
            "acquisitions_granted": sums.acquisitions_granted,
            "acquisitions_unavailable": sums.acquisitions_unavailable,
            "acquisitions_cancelled": sums.acquisitions_cancelled,
            "owner_checked_updates": sums.owner_checked_updates,
            "refused_updates": sums.refused_updates,
            "ownership_checks": sums.ownership_checks,
            "saves": sums.saves,
            "restores": sums.restores,
            "restore_snapshots_checked": sums.restore_snapshots_checked,
            "dropped_before_restore": sums.dropped_before_restore,
            "save_run_grants": sums.save_run_grants,
            "seconds": began.elapsed().as_secs_f64(),
        });
        let text = serde_json::to_string_pretty(&json).expect("counts serialise");
        if let Err(e) = std::fs::write(path, text + "\n") {
            eprintln!("cannot write {}: {e}", path.display());
            return ExitCode::FAILURE;
        }
    }
    if let Some(f) = failure {
        eprintln!("{f}");
        return ExitCode::FAILURE;
    }
    println!(
        "{} seeds passed ({}..{}), {} events, largest federation {} federates, {:.1} s on {} jobs; \
         {} grants; ownership: {} requests, {} transfers, {} acquisitions ({} granted, {} unavailable, \
         {} cancelled), {} updates checked against the owner registry, {} refused from non-owners, \
         {} one-owner checks; {} saves, {} restores ({} federate states checked after a restore, \
         {} envelopes from before a restore dropped), 0 violations",
        totals.ok.load(Ordering::Relaxed),
        start,
        start + count,
        totals.events.load(Ordering::Relaxed),
        totals.largest.load(Ordering::Relaxed),
        began.elapsed().as_secs_f64(),
        jobs,
        sums.grants,
        sums.ownership_requests,
        sums.ownership_transfers,
        sums.acquisitions,
        sums.acquisitions_granted,
        sums.acquisitions_unavailable,
        sums.acquisitions_cancelled,
        sums.owner_checked_updates,
        sums.refused_updates,
        sums.ownership_checks,
        sums.saves,
        sums.restores,
        sums.restore_snapshots_checked,
        sums.dropped_before_restore
    );
    ExitCode::SUCCESS
}

fn flow_config(args: &Args, seed: u64) -> FlowSimConfig {
    let mut cfg = FlowSimConfig::for_seed(seed);
    cfg.faults.loss = args.loss;
    cfg.faults.duplicate = args.duplicate;
    cfg.faults.reorder = args.reorder;
    let draw = |d: Option<Draw>| d.map(|d| matches!(d, Draw::Always));
    cfg.partition = draw(args.partition);
    cfg.crash = draw(args.crash);
    cfg.busy = draw(args.busy);
    cfg.lost_receiver = draw(args.lost_receiver);
    cfg.cells = draw(args.cells);
    cfg.verbose = args.verbose;
    cfg
}

/// `--flow`: the reliable-delivery simulator, over a batch of seeds.
fn flow_main(args: &Args) -> ExitCode {
    let (start, count) = match args.seed {
        Some(s) => (s, 1),
        None => (args.start, args.seeds),
    };
    let jobs = match args.jobs {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        j => j,
    };
    let began = Instant::now();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let total: Mutex<glidepath_sim::flow::FlowOutcome> = Mutex::default();
    let passed = AtomicU64::new(0);
    let first_failure: Mutex<Option<FlowFailure>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs.min(count.max(1) as usize) {
            scope.spawn(|| {
                while !stop.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    match run_flow(&flow_config(args, start + i)) {
                        Ok(o) => {
                            passed.fetch_add(1, Ordering::Relaxed);
                            if args.seed.is_some() {
                                println!("{o:?}");
                            }
                            total.lock().expect("not poisoned").add(&o);
                        }
                        Err(f) => {
                            stop.store(true, Ordering::Relaxed);
                            let mut first = first_failure.lock().expect("not poisoned");
                            if first.as_ref().is_none_or(|g| f.seed < g.seed) {
                                *first = Some(f);
                            }
                        }
                    }
                }
            });
        }
    });
    if let Some(f) = first_failure.into_inner().expect("not poisoned") {
        eprintln!("{f}");
        return ExitCode::FAILURE;
    }
    let t = total.into_inner().expect("not poisoned");
    println!(
        "flow: {} seeds passed ({}..{}), {} events, {} messages published, {} delivered, {} packets; \
         faults injected: {} losses, {} duplicates, {} reorders, {} partitions ({} packets cut), {} crashes, {} busy periods, {} receivers dead; \
         {} retransmitted, {} duplicates dropped, {} lost in {} holes given up ({} by overflow, {} at the sender's word, {} such words), \
         {} before first contact, {} crash tails, {} receivers given up, {} credit waits; \
         {} cell accounts, {} envelopes passed over on them, {} of the lost sent to cells their receiver does not read; \
         loss {} duplicate {} reorder {}; {:.1} s on {} jobs",
        passed.load(Ordering::Relaxed),
        start,
        start + count,
        t.events,
        t.published,
        t.delivered,
        t.packets,
        t.faults.losses,
        t.faults.duplicates,
        t.faults.reorders,
        t.partitions,
        t.faults.partition_drops,
        t.crashes,
        t.busy_periods,
        t.receivers_lost,
        t.retransmitted,
        t.duplicates_dropped,
        t.lost,
        t.holes,
        t.overflows,
        t.gone,
        t.gone_notices,
        t.before_first_contact,
        t.crash_tails,
        t.receivers_given_up,
        t.credit_waits,
        t.accounts,
        t.skipped,
        t.lost_not_wanted,
        args.loss,
        args.duplicate,
        args.reorder,
        began.elapsed().as_secs_f64(),
        jobs
    );
    ExitCode::SUCCESS
}

/// `--ddm`: the data distribution management simulator, over a batch of seeds (one
/// thread: a seed takes milliseconds).
fn ddm_main(args: &Args) -> ExitCode {
    let (start, count) = match args.seed {
        Some(s) => (s, 1),
        None => (args.start, args.seeds),
    };
    let began = Instant::now();
    let mut t = glidepath_sim::ddm::DdmOutcome::default();
    for seed in start..start + count {
        let mut cfg = glidepath_sim::ddm::DdmSimConfig::for_seed(seed);
        cfg.verbose = args.verbose;
        cfg.federates = args.federates.map(|f| f as usize);
        match glidepath_sim::ddm::run_ddm(&cfg) {
            Ok(o) => {
                if args.seed.is_some() {
                    println!("{o:?}");
                }
                t.published += o.published;
                t.pairs += o.pairs;
                t.wanted += o.wanted;
                t.delivered += o.delivered;
                t.uncertain += o.uncertain;
                t.filtered_at_source += o.filtered_at_source;
                t.sender_moves += o.sender_moves;
                t.subscriber_moves += o.subscriber_moves;
                t.discovered_by_overlap += o.discovered_by_overlap;
                t.scope_callbacks += o.scope_callbacks;
                t.timed_runs += o.timed_runs;
                t.tso_delivered += o.tso_delivered;
                t.grants += o.grants;
                t.scope_switches += o.scope_switches;
            }
            Err(f) => {
                eprintln!("{f}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!(
        "ddm: {count} seeds passed ({start}..{}), {} messages published to {} receivers: \
         {} wanted when sent and all delivered, {} unwanted and none delivered, {} uncertain \
         (receiver moved its regions in flight); {} copies filtered at the source; {} sender \
         and {} subscriber region moves; {} discoveries by overlap; {} scope callbacks \
         checked ({} switch changes); {} runs with time management: {} time-stamped \
         deliveries in order, {} grants; {:.1} s",
        start + count,
        t.published,
        t.pairs,
        t.wanted,
        t.pairs - t.wanted - t.uncertain,
        t.uncertain,
        t.filtered_at_source,
        t.sender_moves,
        t.subscriber_moves,
        t.discovered_by_overlap,
        t.scope_callbacks,
        t.scope_switches,
        t.timed_runs,
        t.tso_delivered,
        t.grants,
        began.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}

/// `--bus`: the bus simulator over a batch of seeds (one thread).
fn bus_main(args: &Args) -> ExitCode {
    use glidepath_sim::bus::{run_bus, BusOutcome, BusSimConfig};
    let (start, count) = match args.seed {
        Some(s) => (s, 1),
        None => (args.start, args.seeds),
    };
    let began = Instant::now();
    let mut t = BusOutcome::default();
    for seed in start..start + count {
        let mut cfg = BusSimConfig::for_seed(seed);
        cfg.verbose = args.verbose;
        cfg.loss = args.bus_loss;
        cfg.members = args.federates.map(|f| f as usize);
        match run_bus(&cfg) {
            Ok(o) => {
                if args.seed.is_some() {
                    println!("{o:?}");
                }
                t.agreed += o.agreed;
                t.safe += o.safe;
                t.membership += o.membership;
                t.handed_out += o.handed_out;
                t.safe_checked += o.safe_checked;
                t.joins += o.joins;
                t.leaves += o.leaves;
                t.crashes += o.crashes;
                t.pauses += o.pauses;
                t.false_suspicions += o.false_suspicions;
                t.copies_lost += o.copies_lost;
                t.acks_lost += o.acks_lost;
                t.fetches += o.fetches;
            }
            Err(f) => {
                eprintln!("{f}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!(
        "bus: {count} seeds passed ({start}..{}): {} AGREED and {} SAFE messages, {} membership \
         frames; {} hand-outs, {} SAFE hand-outs checked stable; {} joins, {} leaves, {} crashes, \
         {} pauses ({} false suspicions); {} copies and {} acknowledgements lost, {} frames \
         fetched; {:.1} s",
        start + count,
        t.agreed,
        t.safe,
        t.membership,
        t.handed_out,
        t.safe_checked,
        t.joins,
        t.leaves,
        t.crashes,
        t.pauses,
        t.false_suspicions,
        t.copies_lost,
        t.acks_lost,
        t.fetches,
        began.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}

/// `--bus-repair`: the repair simulator over a batch of seeds (one thread).
fn bus_repair_main(args: &Args) -> ExitCode {
    use glidepath_sim::bus_repair::{run_bus_repair, RepairOutcome, RepairSimConfig};
    let (start, count) = match args.seed {
        Some(s) => (s, 1),
        None => (args.start, args.seeds),
    };
    let began = Instant::now();
    let mut t = RepairOutcome::default();
    for seed in start..start + count {
        let mut cfg = RepairSimConfig::for_seed(seed);
        cfg.verbose = args.verbose;
        cfg.nodes = args.federates.map(|f| f as usize);
        match run_bus_repair(&cfg) {
            Ok(o) => {
                if args.seed.is_some() {
                    println!("{o:?}");
                }
                t.add(&o);
            }
            Err(f) => {
                eprintln!("{f}");
                return ExitCode::FAILURE;
            }
        }
    }
    println!(
        "bus-repair: {count} seeds passed ({start}..{}): {} frames published, {} handed out; \
         {} copies lost in flight, {} dropped, {} duplicated; {} breaks, {} deaths; {} repairs \
         recovered {} frames ({} failed tries), {} counted lost; {} stale copies dropped \
         ({} unexplained); {:.1} s",
        start + count,
        t.published,
        t.handed_out,
        t.copies_lost,
        t.copies_dropped,
        t.duplicates,
        t.breaks,
        t.deaths,
        t.repairs,
        t.recovered,
        t.failed_tries,
        t.counted_lost,
        t.stale,
        t.stale_violations,
        began.elapsed().as_secs_f64()
    );
    ExitCode::SUCCESS
}

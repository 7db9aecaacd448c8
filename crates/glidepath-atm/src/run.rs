//! Runs a layout: the simulation manager takes every block through the TestBed's seven
//! states (memorandum section 4.3) while traffic blocks publish SNDEM track messages
//! through glidepath to the performance monitor (and recorders), in fast time.
//!
//! Every block is a federate on its own thread, joined to one federation created from
//! the air-traffic FOM; the transport is whatever the [`RtiConfig`] says, so the same
//! run goes through `inproc` or NATS by configuration alone.
//!
//! # Why time management carries the run
//! Fast time means "as fast as the middleware takes it", and the memorandum's runs lost
//! messages at shutdown. Both are settled by the core's time management instead of by
//! sleeps or counters: every block is time-regulating and time-constrained and logical
//! time is the simulated second. A traffic block publishes second `t`'s tracks
//! (receive order, reliable), then asks to advance to `t + 1`; the monitor's lookahead
//! bounds how far ahead of it the sources may run (flow control, so nothing queues
//! without bound), and because a federate's time status travels after its earlier
//! messages, the monitor's grant to `t + 1` proves it has every message of second `t`.
//! At the end the monitor has all of them: received = published is checked, not
//! hoped for.
//!
//! # The seven states
//! The manager registers one synchronization point per state; each block does the
//! state's work, achieves the point, and the state ends when the federation is
//! synchronized — "a state is advanced only if all the components complete the state".
//! The manager times each state from registration to synchronization (Table 4.5).

use std::collections::HashSet;
use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use crate::track::Track;
use glidepath::stats::Recorder;
use glidepath::{
    Bytes, Callback, Federate, Fom, FomModule, InteractionClassHandle, JoinOptions,
    ParameterHandle, ResignAction, Rti, RtiConfig, TransportKind, WaitStrategy,
};

use crate::layout::{Block, BlockKind, Layout, TrafficSource};
use crate::report::{RunReport, SecondStats};
use crate::traffic::{TrafficConfig, TrafficDay, DAY_S};

/// The air-traffic FOM module, built in so a run needs no file but its layout.
const AIR_TRAFFIC_FOM: &str = include_str!("../../../foms/air-traffic.xml");

/// The seven states, in order (memorandum section 4.3).
pub const STATES: [&str; 7] = [
    "deployment",
    "startup",
    "initialization",
    "execution",
    "shutdown",
    "archival",
    "retirement",
];

/// How long the manager lets a run go without any sign of progress before it fails
/// it as wedged: no block ended, yet (in threads) nothing was published or received
/// and no simulated second passed, or (retirement, which has no work) the federation
/// did not synchronize. Not a limit on a state's length: a full day through JetStream
/// takes longer than this, and a real-time run as long as the day it plays.
const WAIT: Duration = Duration::from_secs(600);

/// How many simulated seconds the traffic may run ahead of the monitor.
const MONITOR_LOOKAHEAD: f64 = 4.0;

/// How tracks are serialised (the first function of the encoder chain).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Codec {
    /// SNDEM JSON exactly as Table 4.1 (the TestBed's own format).
    #[default]
    Json,
    /// glidepath's compact binary track encoding.
    Binary,
}

impl Codec {
    /// The name as the CLI spells it.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Json => "json",
            Codec::Binary => "binary",
        }
    }

    fn encode(self, track: &Track, out: &mut Vec<u8>) {
        out.clear();
        match self {
            Codec::Json => track.write_sndem_json(out),
            Codec::Binary => track.encode_binary(out),
        }
    }

    fn decode(self, bytes: &[u8]) -> Option<Track> {
        let mut track = Track::default();
        self.decode_into(bytes, &mut track).then_some(track)
    }

    /// [`Codec::decode`] into `track`, reusing its memory where the codec can.
    fn decode_into(self, bytes: &[u8], track: &mut Track) -> bool {
        match self {
            Codec::Json => track.read_sndem_json(bytes).is_ok(),
            Codec::Binary => match Track::decode_binary(bytes) {
                Ok(t) => {
                    *track = t;
                    true
                }
                Err(_) => false,
            },
        }
    }
}

impl std::str::FromStr for Codec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "json" => Ok(Codec::Json),
            "binary" => Ok(Codec::Binary),
            other => Err(format!("unknown codec `{other}`: expected json or binary")),
        }
    }
}

/// How to run a layout.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Transport and encoder chain (compression, key, bundling, persistence).
    pub config: RtiConfig,
    /// Serialisation of the track messages.
    pub codec: Codec,
    /// Run only the first `hours` of the simulated day (default: all of it).
    pub hours: Option<f64>,
    /// Overrides the generated traffic's density (1.0 = the calibrated day).
    pub density: Option<f64>,
    /// The run's name, written into every message's `meta.run` (e.g. `1A`).
    pub run_name: String,
    /// Show a progress bar on stderr.
    pub progress: bool,
    /// How every block's federate waits for traffic (see [`WaitStrategy`]).
    pub wait: WaitStrategy,
    /// Whether blocks are threads of this process or processes of their own.
    pub deployment: Deployment,
}

/// Where a run's blocks execute (memorandum section 4.3: components are deployed, then
/// started).
#[derive(Clone, Default)]
pub enum Deployment {
    /// Every block is a thread of this process, on any transport: the default.
    #[default]
    Threads,
    /// Every block is a process of its own, started by the launcher; NATS only, since
    /// `inproc` cannot cross a process boundary. The simulation manager stays in this
    /// process (and hosts the executive when none answers on the server), waits until
    /// every block has joined, takes them through the seven states and reads each
    /// block's outcome from the file its launch names. A block process that outlives
    /// its purpose is killed: after the run, or at once when the run fails.
    Processes(Launcher),
}

/// Builds the command that runs one block in a process of its own (see
/// [`run_block_process`], which that command must end up calling).
pub type Launcher = Arc<dyn Fn(&BlockLaunch<'_>) -> std::process::Command + Send + Sync>;

/// What a [`Launcher`] is asked to start.
pub struct BlockLaunch<'a> {
    /// The block's name in the layout.
    pub block: &'a str,
    /// The federation to join (already created by the manager).
    pub federation: &'a str,
    /// Where the block process writes its outcome.
    pub outcome: &'a Path,
    /// The run's options, as the block must apply them.
    pub options: &'a RunOptions,
}

impl Deployment {
    /// `threads` or `processes`, as the report says.
    pub fn name(&self) -> &'static str {
        match self {
            Deployment::Threads => "threads",
            Deployment::Processes(_) => "processes",
        }
    }
}

impl std::fmt::Debug for Deployment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            config: RtiConfig::default(),
            codec: Codec::Json,
            hours: None,
            density: None,
            run_name: "1A".into(),
            progress: false,
            wait: WaitStrategy::default(),
            deployment: Deployment::Threads,
        }
    }
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// The RTI could not be set up (transport unreachable, bad configuration).
    #[error("cannot start the RTI: {0}")]
    Rti(String),
    /// A block failed; the message names it.
    #[error("block `{block}`: {reason}")]
    Block {
        /// The block's name.
        block: String,
        /// What went wrong.
        reason: String,
    },
    /// The layout cannot be run as it is.
    #[error("layout: {0}")]
    Layout(String),
    /// A block the manager stopped because the run failed elsewhere: never the
    /// cause, so a failed run reports the cause instead.
    #[error("block `{0}`: stopped: the run failed elsewhere")]
    Stopped(String),
}

fn block_error(block: &str, reason: impl std::fmt::Display) -> RunError {
    RunError::Block {
        block: block.to_string(),
        reason: reason.to_string(),
    }
}

/// Handles of the FOM's SNDEM message class.
#[derive(Clone, Copy)]
struct Sndem {
    class: InteractionClassHandle,
    vid: ParameterHandle,
    message: ParameterHandle,
}

impl Sndem {
    fn of(f: &Federate) -> Result<Sndem, String> {
        let class = f
            .interaction_class_handle("SndemMessage")
            .map_err(|e| e.to_string())?;
        Ok(Sndem {
            class,
            vid: f
                .parameter_handle(class, "vid")
                .map_err(|e| e.to_string())?,
            message: f
                .parameter_handle(class, "message")
                .map_err(|e| e.to_string())?,
        })
    }
}

/// Counters the blocks share with the progress bar, and the manager's stop signal.
#[derive(Default)]
struct Progress {
    published: AtomicU64,
    received: AtomicU64,
    monitor_second: AtomicU64,
    /// Set by the manager when the run failed: blocks stop waiting for the
    /// federation (block processes are stopped through their standard input).
    abort: AtomicBool,
}

impl Progress {
    fn snapshot(&self) -> (u64, u64, u64) {
        (
            self.published.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
            self.monitor_second.load(Ordering::Relaxed),
        )
    }
}

/// Fails a block's wait once the manager has stopped the run ([`run_block`] then
/// reports [`RunError::Stopped`]).
fn check_abort(abort: &AtomicBool) -> Result<(), String> {
    if abort.load(Ordering::Relaxed) {
        Err("stopped: the run failed elsewhere".into())
    } else {
        Ok(())
    }
}

/// The simulated seconds a run covers: `[0, end)`.
fn run_end(opts: &RunOptions) -> u32 {
    match opts.hours {
        Some(h) => ((h * 3600.0).round() as u32).clamp(1, DAY_S),
        None => DAY_S,
    }
}

fn air_traffic_fom() -> Result<Fom, RunError> {
    let module = FomModule::parse_str("air-traffic.xml", AIR_TRAFFIC_FOM)
        .map_err(|e| RunError::Rti(e.to_string()))?;
    Fom::merge(&[module]).map_err(|e| RunError::Rti(e.to_string()))
}

/// Starts the executive in this process when the transport is NATS and none answers
/// yet, so `glidepath run --transport nats` needs only a NATS server.
fn executive_for(
    config: &RtiConfig,
) -> Result<Option<glidepath::transport::nats::ExecutiveServer>, RunError> {
    if config.transport != TransportKind::Nats {
        return Ok(None);
    }
    let mut options = config.nats_options();
    options.messaging.bundle = Default::default();
    match glidepath::transport::nats::serve_executive_with(&config.nats_url, options) {
        Ok(server) => Ok(Some(server)),
        // Another executive already hosts federations there: use it.
        Err(e) if e.to_string().contains("already") => Ok(None),
        Err(e) => Err(RunError::Rti(format!(
            "cannot host the executive on {}: {e}",
            config.nats_url
        ))),
    }
}

/// Runs `layout` to the end and returns its report (not yet written anywhere).
pub fn run(layout: &Layout, opts: &RunOptions) -> Result<RunReport, RunError> {
    let monitors: Vec<&Block> = layout
        .blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Monitor)
        .collect();
    if monitors.len() != 1 {
        return Err(RunError::Layout(format!(
            "a run needs exactly one performance monitor block, the layout has {}",
            monitors.len()
        )));
    }
    if matches!(opts.deployment, Deployment::Processes(_))
        && opts.config.transport != TransportKind::Nats
    {
        return Err(RunError::Layout(format!(
            "blocks in processes of their own need the nats transport (this run uses {}, \
             which cannot cross a process boundary)",
            opts.config.transport.name()
        )));
    }
    let end = run_end(opts);
    let _executive = executive_for(&opts.config)?;
    let rti = Rti::from_config(&opts.config).map_err(|e| RunError::Rti(e.to_string()))?;
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let federation = format!(
        "atm-{}-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed),
        opts.run_name
    );
    rti.create_federation_execution_with_fom(&federation, air_traffic_fom()?)
        .map_err(|e| RunError::Rti(e.to_string()))?;
    let manager = rti
        .join(
            &federation,
            JoinOptions::named("simulation-manager", "manager"),
        )
        .map_err(|e| RunError::Rti(e.to_string()))?;

    let progress = Arc::new(Progress::default());
    let deployed = match &opts.deployment {
        Deployment::Threads => deploy_threads(&rti, &federation, layout, end, opts, &progress),
        Deployment::Processes(launcher) => {
            deploy_processes(launcher, &manager, &federation, layout, opts)
        }
    };
    let mut blocks = match deployed {
        Ok(blocks) => blocks,
        Err(e) => {
            let _ = manager.resign(ResignAction::DeleteObjects);
            let _ = rti.destroy_federation_execution(&federation);
            return Err(e);
        }
    };

    let bar = opts.progress.then(|| progress_bar(end));
    // Block processes count in their own memory: the bar can only show the states.
    let counters = matches!(blocks, Deployed::Threads(_)).then_some(&*progress);
    let mut durations = Vec::new();
    let mut failure = None;
    for state in STATES {
        let t0 = Instant::now();
        let watch = Watch {
            blocks: &mut blocks,
            counters,
        };
        if let Err(e) = manager_state(&manager, state, bar.as_ref(), watch) {
            failure = Some(e);
            break;
        }
        durations.push((state.to_string(), t0.elapsed().as_secs_f64()));
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let _ = manager.resign(ResignAction::DeleteObjects);
    if failure.is_some() {
        progress.abort.store(true, Ordering::Relaxed);
    }
    let outcomes = blocks.finish(failure.is_some());
    let _ = rti.destroy_federation_execution(&federation);
    let mut monitor = None;
    let mut published = 0;
    // What reached the monitor's links counts as published to it.
    let monitor_name = &monitors[0].name;
    // The first block that failed of itself is the cause; blocks are only stopped
    // after the manager's own failure, which then is the cause.
    for (name, outcome) in outcomes {
        match outcome {
            Ok(BlockOutcome::Published(n)) => {
                if layout
                    .links
                    .iter()
                    .any(|l| l.from == name && &l.to == monitor_name)
                {
                    published += n;
                }
            }
            Ok(BlockOutcome::Monitor(m)) => monitor = Some(m),
            Ok(BlockOutcome::Other) => {}
            Err(RunError::Stopped(_)) => {}
            Err(e) => return Err(e),
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let m = monitor.ok_or_else(|| RunError::Layout("the monitor reported nothing".into()))?;
    let execution_s = durations
        .iter()
        .find(|(s, _)| s == "execution")
        .map_or(0.0, |(_, d)| *d);
    let received = m.received;
    Ok(RunReport {
        run: opts.run_name.clone(),
        layout: layout.name.clone(),
        transport: opts.config.transport.name().to_string(),
        codec: opts.codec.name().to_string(),
        compression: opts.config.chain.compression.to_string(),
        persistence: persistence_on(&opts.config),
        deployment: opts.deployment.name().to_string(),
        hours: f64::from(end) / 3600.0,
        published,
        received,
        lost: published.saturating_sub(received),
        duplicated: m.duplicated,
        malformed: m.malformed,
        bytes: m.bytes,
        execution_s,
        throughput_mbit_s: if execution_s > 0.0 {
            m.bytes as f64 * 8.0 / execution_s / 1e6
        } else {
            0.0
        },
        peak_flights: m
            .per_second
            .iter()
            .map(|s| u64::from(s.flights))
            .max()
            .unwrap_or(0),
        lengths: m.lengths,
        frequencies: m.frequencies,
        latency_us: m.latency_us,
        per_second: m.per_second,
        state_durations_s: durations,
    })
}

/// The context a block of `layout` runs with.
fn context_of(
    layout: &Layout,
    block: &Block,
    end: u32,
    opts: &RunOptions,
    progress: &Arc<Progress>,
) -> Context {
    Context {
        sources: layout
            .links
            .iter()
            .filter(|l| l.to == block.name)
            .map(|l| l.from.clone())
            .collect(),
        layout_day_start: layout.day_start,
        end,
        opts: opts.clone(),
        progress: progress.clone(),
    }
}

/// Blocks that are running, and how to collect what they did.
enum Deployed {
    Threads(Vec<(String, thread::JoinHandle<Result<BlockOutcome, RunError>>)>),
    Processes(BlockProcesses),
}

/// Starts every block on a thread of its own and returns once all have joined.
fn deploy_threads(
    rti: &Rti,
    federation: &str,
    layout: &Layout,
    end: u32,
    opts: &RunOptions,
    progress: &Arc<Progress>,
) -> Result<Deployed, RunError> {
    let joined = Arc::new(Barrier::new(layout.blocks.len() + 1));
    let mut threads = Vec::new();
    for block in &layout.blocks {
        let (block, rti, federation, joined) = (
            block.clone(),
            rti.clone(),
            federation.to_string(),
            joined.clone(),
        );
        let ctx = context_of(layout, &block, end, opts, progress);
        let name = block.name.clone();
        let spawned = thread::Builder::new()
            .name(format!("atm-{}", block.name))
            .spawn(move || run_block(&rti, &federation, &block, &ctx, &joined))
            .map_err(|e| RunError::Rti(format!("cannot start a thread: {e}")))?;
        threads.push((name, spawned));
    }
    joined.wait();
    Ok(Deployed::Threads(threads))
}

impl Deployed {
    /// Fails when a block has already ended (during the run, it only ends by failing).
    fn check_running(&mut self) -> Result<(), RunError> {
        match self {
            Deployed::Threads(threads) => match threads.iter().find(|(_, t)| t.is_finished()) {
                Some((name, _)) => Err(block_error(name, "ended before the run did")),
                None => Ok(()),
            },
            Deployed::Processes(p) => p.check_running("before the run did"),
        }
    }

    /// Waits for every block to end and returns each one's outcome by name. After a
    /// failed run, block processes get a short grace period, then are killed.
    fn finish(self, failed: bool) -> Vec<(String, Result<BlockOutcome, RunError>)> {
        match self {
            Deployed::Threads(threads) => threads
                .into_iter()
                .map(|(name, t)| {
                    let outcome = t
                        .join()
                        .unwrap_or_else(|_| Err(block_error(&name, "its thread panicked")));
                    (name, outcome)
                })
                .collect(),
            Deployed::Processes(p) => p.finish(failed),
        }
    }
}

/// Block processes of one run, with their outcome files.
struct BlockProcesses {
    dir: PathBuf,
    children: Vec<BlockChild>,
}

struct BlockChild {
    name: String,
    child: std::process::Child,
    outcome: PathBuf,
    /// Held open while the run lasts: a block process started with
    /// `--exit-with-parent` ends when it reads end-of-file here.
    stdin: Option<std::process::ChildStdin>,
    /// Told to stop because the run failed elsewhere.
    stopped: bool,
}

/// How long block processes may take to start, connect and join.
const JOIN_WAIT: Duration = Duration::from_secs(120);

/// Starts every block as a process of its own and returns once all have joined.
fn deploy_processes(
    launcher: &Launcher,
    manager: &Federate,
    federation: &str,
    layout: &Layout,
    opts: &RunOptions,
) -> Result<Deployed, RunError> {
    static DIRS: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "glidepath-run-{}-{}",
        std::process::id(),
        DIRS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| RunError::Rti(format!("cannot create {}: {e}", dir.display())))?;
    let mut processes = BlockProcesses {
        dir,
        children: Vec::new(),
    };
    for (i, block) in layout.blocks.iter().enumerate() {
        let outcome = processes.dir.join(format!("block-{i}.json"));
        let mut command = launcher(&BlockLaunch {
            block: &block.name,
            federation,
            outcome: &outcome,
            options: opts,
        });
        command.stdin(std::process::Stdio::piped());
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                processes.finish(true);
                return Err(block_error(
                    &block.name,
                    format!(
                        "cannot start its process ({:?}): {e}",
                        command.get_program()
                    ),
                ));
            }
        };
        let stdin = child.stdin.take();
        processes.children.push(BlockChild {
            name: block.name.clone(),
            child,
            outcome,
            stdin,
            stopped: false,
        });
    }
    if let Err(e) = processes.wait_joined(manager) {
        processes.finish(true);
        return Err(e);
    }
    Ok(Deployed::Processes(processes))
}

impl BlockProcesses {
    /// Fails when a block process has already ended, saying it did so `when`.
    fn check_running(&mut self, when: &str) -> Result<(), RunError> {
        for c in &mut self.children {
            if let Ok(Some(status)) = c.child.try_wait() {
                return Err(block_error(
                    &c.name,
                    format!("its process ended ({status}) {when}"),
                ));
            }
        }
        Ok(())
    }

    /// Waits until every block process has joined the federation, or one of them
    /// has exited without joining.
    fn wait_joined(&mut self, manager: &Federate) -> Result<(), RunError> {
        let deadline = Instant::now() + JOIN_WAIT;
        loop {
            let joined = manager
                .list_federates()
                .map_err(|e| RunError::Rti(e.to_string()))?;
            let missing: Vec<String> = self
                .children
                .iter()
                .filter(|c| !joined.iter().any(|f| f.name == c.name))
                .map(|c| c.name.clone())
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            self.check_running("before the run began")?;
            if Instant::now() > deadline {
                return Err(RunError::Rti(format!(
                    "blocks {missing:?} did not join within {JOIN_WAIT:?}"
                )));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn finish(mut self, failed: bool) -> Vec<(String, Result<BlockOutcome, RunError>)> {
        // A finished run's blocks are only resigning. A failed run's may wait for
        // announcements that will never come: the block that failed gets a moment to
        // write why and end, then the others are told to stop by closing their
        // standard input (`--exit-with-parent`), and killed if they still do not.
        let grace = if failed {
            let moment = Instant::now() + Duration::from_secs(2);
            while Instant::now() < moment
                && self
                    .children
                    .iter_mut()
                    .all(|c| matches!(c.child.try_wait(), Ok(None)))
            {
                thread::sleep(Duration::from_millis(20));
            }
            thread::sleep(Duration::from_millis(200));
            for c in &mut self.children {
                // Those still running are stopped by us, not failing of themselves.
                c.stopped = matches!(c.child.try_wait(), Ok(None));
                c.stdin = None;
            }
            Duration::from_secs(5)
        } else {
            Duration::from_secs(60)
        };
        let deadline = Instant::now() + grace;
        let mut outcomes = Vec::new();
        for c in &mut self.children {
            let status = loop {
                match c.child.try_wait() {
                    Ok(Some(status)) => break Some(status),
                    Ok(None) if Instant::now() < deadline => {
                        thread::sleep(Duration::from_millis(20))
                    }
                    _ => {
                        let _ = c.child.kill();
                        let _ = c.child.wait();
                        break None;
                    }
                }
            };
            let outcome = match read_outcome(&c.outcome) {
                Ok(written) => written.map_err(|reason| block_error(&c.name, reason)),
                Err(_) if c.stopped => Err(RunError::Stopped(c.name.clone())),
                Err(e) => Err(block_error(
                    &c.name,
                    match status {
                        Some(status) if !c.outcome.exists() => {
                            format!("its process ended ({status}) without writing its outcome")
                        }
                        Some(status) => format!("its process ended ({status}): {e}"),
                        None => {
                            format!("its process did not end within {grace:?} and was killed")
                        }
                    },
                )),
            };
            outcomes.push((c.name.clone(), outcome));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        outcomes
    }
}

/// Reads the outcome a block process wrote.
fn read_outcome(path: &Path) -> Result<Result<BlockOutcome, String>, String> {
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs one block of `layout` in this process, joined to `federation` (created by the
/// manager of a run with [`Deployment::Processes`]), and writes its outcome to
/// `outcome` for the manager to read — also when the block fails.
pub fn run_block_process(
    layout: &Layout,
    opts: &RunOptions,
    block: &str,
    federation: &str,
    outcome: &Path,
) -> Result<(), RunError> {
    let b = layout
        .blocks
        .iter()
        .find(|b| b.name == block)
        .ok_or_else(|| {
            RunError::Layout(format!(
                "no block named `{block}` (the layout has {:?})",
                layout.blocks.iter().map(|b| &b.name).collect::<Vec<_>>()
            ))
        })?;
    let ctx = context_of(
        layout,
        b,
        run_end(opts),
        opts,
        &Arc::new(Progress::default()),
    );
    let result = Rti::from_config(&opts.config)
        .map_err(|e| RunError::Rti(e.to_string()))
        .and_then(|rti| run_block(&rti, federation, b, &ctx, &Barrier::new(1)));
    // The manager names the block itself: keep only the reason.
    let record: Result<&BlockOutcome, String> = result.as_ref().map_err(|e| match e {
        RunError::Block { reason, .. } => reason.clone(),
        other => other.to_string(),
    });
    let written = serde_json::to_vec(&record)
        .map_err(|e| format!("cannot encode the outcome: {e}"))
        .and_then(|body| {
            std::fs::write(outcome, body)
                .map_err(|e| format!("cannot write {}: {e}", outcome.display()))
        });
    // The block's own failure is the one worth reporting.
    result?;
    written.map_err(RunError::Rti)
}

fn persistence_on(config: &RtiConfig) -> bool {
    config.transport == TransportKind::Nats
        && config.persistence != glidepath::transport::nats::Persistence::default()
}

fn progress_bar(end: u32) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(u64::from(end));
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} sim {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// What the manager watches while it waits for a state to end.
struct Watch<'a> {
    blocks: &'a mut Deployed,
    /// The blocks' counters (threads only).
    counters: Option<&'a Progress>,
}

/// The manager's part of one state: register, achieve, wait for synchronization.
///
/// A state lasts as long as its work: the wait ends early only when a block ended
/// before the state did (its outcome says why), or nothing moved for [`WAIT`].
fn manager_state(
    manager: &Federate,
    state: &str,
    bar: Option<&indicatif::ProgressBar>,
    watch: Watch<'_>,
) -> Result<(), RunError> {
    let fail = |e: String| block_error("simulation-manager", format!("{state}: {e}"));
    manager
        .register_federation_synchronization_point(state, Bytes::new())
        .map_err(|e| fail(e.to_string()))?;
    let progress = watch.counters;
    let mut last_move = (Instant::now(), progress.map(Progress::snapshot));
    let mut achieved = false;
    let mut last_tick = Instant::now();
    loop {
        // Blocks end after the retirement state synchronizes; before, ending is failing.
        if state != "retirement" {
            watch.blocks.check_running()?;
        }
        let now = progress.map(Progress::snapshot);
        if now != last_move.1 {
            last_move = (Instant::now(), now);
        } else if last_move.0.elapsed() > WAIT && (state == "retirement" || progress.is_some()) {
            return Err(fail(format!(
                "nothing moved for {WAIT:?}: the federation seems wedged"
            )));
        }
        if let Some(bar) = bar {
            if last_tick.elapsed() > Duration::from_millis(200) {
                last_tick = Instant::now();
                match progress {
                    Some(progress) => {
                        let (published, received, second) = progress.snapshot();
                        let elapsed = bar.elapsed().as_secs_f64().max(1e-9);
                        bar.set_position(second);
                        bar.set_message(format!(
                            "{:02}:{:02} | state {state} | published {published} received {received} | {:.0} msg/s",
                            second / 3600,
                            second % 3600 / 60,
                            received as f64 / elapsed
                        ));
                    }
                    None => {
                        bar.set_message(format!("state {state} (blocks in their own processes)"))
                    }
                }
            }
        }
        manager.check_transport().map_err(|e| fail(e.to_string()))?;
        match manager.next_callback(Duration::from_millis(100)) {
            Some(Callback::AnnounceSynchronizationPoint { label, .. }) if label == state => {
                manager
                    .synchronization_point_achieved(state)
                    .map_err(|e| fail(e.to_string()))?;
                achieved = true;
            }
            Some(Callback::FederationSynchronized { label, failed }) if label == state => {
                if !achieved {
                    return Err(fail("synchronized before the manager achieved".into()));
                }
                if !failed.is_empty() {
                    return Err(fail(format!("blocks failed the state: {failed:?}")));
                }
                return Ok(());
            }
            _ => {}
        }
    }
}

/// What a block's thread needs besides the block.
struct Context {
    /// The blocks linked to this one: the only producers it takes messages from.
    sources: Vec<String>,
    layout_day_start: i64,
    end: u32,
    opts: RunOptions,
    progress: Arc<Progress>,
}

#[derive(serde::Serialize, serde::Deserialize)]
enum BlockOutcome {
    Published(u64),
    Monitor(Box<MonitorStats>),
    Other,
}

/// What the performance monitor measured.
#[derive(serde::Serialize, serde::Deserialize)]
struct MonitorStats {
    received: u64,
    duplicated: u64,
    malformed: u64,
    bytes: u64,
    lengths: Recorder,
    frequencies: Recorder,
    latency_us: Recorder,
    per_second: Vec<SecondStats>,
}

/// The work of one block in each state; callbacks outside the states' own waits go
/// to `callback`.
trait Component {
    fn state(&mut self, state: &str, f: &Federate, abort: &AtomicBool) -> Result<(), String>;
    fn callback(&mut self, _cb: Callback) {}
    fn outcome(self: Box<Self>) -> BlockOutcome;
}

fn run_block(
    rti: &Rti,
    federation: &str,
    block: &Block,
    ctx: &Context,
    joined: &Barrier,
) -> Result<BlockOutcome, RunError> {
    let fail = |e: &dyn std::fmt::Display| block_error(&block.name, e);
    let joining = rti.join(
        federation,
        JoinOptions::named(&block.name, block.kind.name()).with_wait(ctx.opts.wait),
    );
    // Everyone meets at the barrier, joined or not, so the manager never waits forever.
    joined.wait();
    let f = joining.map_err(|e| fail(&e))?;
    let sndem = Sndem::of(&f).map_err(|e| fail(&e))?;
    let mut component: Box<dyn Component> = match block.kind {
        BlockKind::Traffic | BlockKind::Player => Box::new(TrafficBlock::new(block, ctx, sndem)),
        BlockKind::Monitor => Box::new(MonitorBlock::new(ctx, sndem)),
        BlockKind::Recorder => Box::new(RecorderBlock::new(block, ctx, sndem)),
    };
    let abort = &ctx.progress.abort;
    for state in STATES {
        let r = lifecycle_state(&f, abort, state, &mut *component);
        if let Err(e) = r {
            // Read before telling the federation: the manager sets the flag as soon
            // as it sees this block fail, and a block that failed of itself must not
            // then be taken for one the manager stopped.
            let stopped = abort.load(Ordering::SeqCst);
            let _ = f.synchronization_point_failed(state);
            let _ = f.resign(ResignAction::DeleteObjects);
            if stopped {
                return Err(RunError::Stopped(block.name.clone()));
            }
            return Err(fail(&format!("{state}: {e}")));
        }
    }
    let _ = f.resign(ResignAction::DeleteObjects);
    Ok(component.outcome())
}

/// Waits for `state`'s announcement, does the work, achieves, waits for the
/// federation to synchronize.
fn lifecycle_state(
    f: &Federate,
    abort: &AtomicBool,
    state: &str,
    c: &mut dyn Component,
) -> Result<(), String> {
    // The synchronization after a state's work waits for the slowest block's work.
    let next = |c: &mut dyn Component| -> Result<Callback, String> {
        wait_until(
            f,
            abort,
            "synchronization",
            &mut |cb| c.callback(cb),
            |cb| {
                matches!(
                    cb,
                    Callback::AnnounceSynchronizationPoint { .. }
                        | Callback::FederationSynchronized { .. }
                )
            },
        )
    };
    loop {
        match next(c)? {
            Callback::AnnounceSynchronizationPoint { label, .. } if label == state => break,
            _ => {}
        }
    }
    c.state(state, f, abort)?;
    f.synchronization_point_achieved(state)
        .map_err(|e| e.to_string())?;
    loop {
        match next(c)? {
            Callback::FederationSynchronized { label, .. } if label == state => return Ok(()),
            _ => {}
        }
    }
}

/// Enables regulation (lookahead `lookahead`) and constrained, feeding other
/// callbacks to `c`.
fn enable_time(
    f: &Federate,
    abort: &AtomicBool,
    lookahead: f64,
    mut c: impl FnMut(Callback),
) -> Result<(), String> {
    f.enable_time_regulation(lookahead)
        .map_err(|e| e.to_string())?;
    wait_until(f, abort, "regulation", &mut c, |cb| {
        matches!(cb, Callback::TimeRegulationEnabled { .. })
    })?;
    f.enable_time_constrained().map_err(|e| e.to_string())?;
    wait_until(f, abort, "constrained", &mut c, |cb| {
        matches!(cb, Callback::TimeConstrainedEnabled { .. })
    })
    .map(drop)
}

/// Waits for the callback `done` accepts and returns it, feeding the others to `c`. No deadline: a
/// grant comes when the slowest regulating block gets there, which in a recorder's
/// case is the end of the run; the manager stops the run (`abort`) when something
/// failed, and a failed publish is reported at once.
fn wait_until(
    f: &Federate,
    abort: &AtomicBool,
    what: &str,
    c: &mut impl FnMut(Callback),
    done: impl Fn(&Callback) -> bool,
) -> Result<Callback, String> {
    loop {
        check_abort(abort).map_err(|e| format!("waiting for {what}: {e}"))?;
        // A publish that failed (a full JetStream store, a lost server) is reported
        // here, not never.
        f.check_transport().map_err(|e| e.to_string())?;
        if let Some(cb) = f.next_callback(Duration::from_millis(100)) {
            if done(&cb) {
                return Ok(cb);
            }
            c(cb);
        }
    }
}

/// Asks to advance to `t` and waits for the grant.
fn advance(
    f: &Federate,
    abort: &AtomicBool,
    t: f64,
    c: &mut impl FnMut(Callback),
) -> Result<(), String> {
    f.time_advance_request(t).map_err(|e| e.to_string())?;
    wait_until(f, abort, "time advance grant", c, |cb| {
        matches!(cb, Callback::TimeAdvanceGrant { .. })
    })
    .map(drop)
}

/// Where a traffic block's tracks come from, second by second.
enum Tracks {
    Generated(Box<TrafficDay>),
    /// Tracks already read (a CSV or a recording), sorted by second.
    Loaded {
        by_second: Vec<(u32, Track)>,
        next: usize,
    },
}

impl Tracks {
    /// Replaces `out`'s contents with second `t`'s tracks.
    fn second(&mut self, t: u32, out: &mut Vec<Track>) {
        match self {
            // Overwrites the tracks already in `out`: no allocation per track.
            Tracks::Generated(day) => day.second_reusing(t, out),
            Tracks::Loaded { by_second, next } => {
                out.clear();
                while let Some((s, track)) = by_second.get(*next) {
                    if *s > t {
                        break;
                    }
                    if *s == t {
                        out.push(track.clone());
                    }
                    *next += 1;
                }
            }
        }
    }
}

/// A traffic block (generated day, ADS-B CSV or a recording played back).
struct TrafficBlock {
    block: Block,
    day_start: i64,
    end: u32,
    codec: Codec,
    run_name: String,
    sndem: Sndem,
    progress: Arc<Progress>,
    density: Option<f64>,
    window: (u32, u32),
    tracks: Option<Tracks>,
    published: u64,
}

impl TrafficBlock {
    fn new(block: &Block, ctx: &Context, sndem: Sndem) -> TrafficBlock {
        TrafficBlock {
            block: block.clone(),
            day_start: ctx.layout_day_start,
            end: ctx.end,
            codec: ctx.opts.codec,
            run_name: ctx.opts.run_name.clone(),
            sndem,
            progress: ctx.progress.clone(),
            density: ctx.opts.density,
            window: (0, 0),
            tracks: None,
            published: 0,
        }
    }

    /// The simulated seconds `[from, to)` this block plays, clipped to the run.
    fn window(&self) -> (u32, u32) {
        let rel = |unix: i64| (unix - self.day_start).clamp(0, i64::from(DAY_S)) as u32;
        let delay = self.block.scheduled_delay_s.max(0.0).round() as u32;
        let from = self.block.traffic_start.map_or(delay, rel).max(delay);
        let to = self.block.traffic_end.map_or(DAY_S, rel);
        (from.min(self.end), to.min(self.end))
    }

    fn load(&mut self) -> Result<(), String> {
        let (from, to) = self.window;
        let tracks = match &self.block.source {
            Some(TrafficSource::Generated { seed, density }) => {
                if from >= to {
                    None
                } else {
                    let config = TrafficConfig {
                        seed: *seed,
                        start_s: from,
                        end_s: to,
                        density: self.density.unwrap_or(*density),
                        src: self.block.name.replace(':', "."),
                        run: self.run_name.clone(),
                        epoch_ms: self.day_start * 1000,
                    };
                    Some(Tracks::Generated(Box::new(
                        TrafficDay::new(config).map_err(|e| e.to_string())?,
                    )))
                }
            }
            Some(TrafficSource::AdsbCsv { path }) => {
                let (tracks, bad) = crate::adsb_csv::read_adsb_csv(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                for e in bad.iter().take(20) {
                    eprintln!("{}: skipped: {e}", self.block.name);
                }
                let day_ms = self.day_start * 1000;
                let mut by_second: Vec<(u32, Track)> = tracks
                    .into_iter()
                    .filter_map(|t| {
                        let s = (t.time - day_ms).div_euclid(1000);
                        (s >= i64::from(from) && s < i64::from(to)).then_some((s as u32, t))
                    })
                    .collect();
                by_second.sort_by_key(|(s, _)| *s);
                Some(Tracks::Loaded { by_second, next: 0 })
            }
            Some(TrafficSource::Recording { path }) => {
                let records = read_recording(path)?;
                let day_ms = self.day_start * 1000;
                let mut by_second: Vec<(u32, Track)> = Vec::with_capacity(records.len());
                for (i, (_, bytes)) in records.into_iter().enumerate() {
                    let track = Codec::Json
                        .decode(&bytes)
                        .or_else(|| Codec::Binary.decode(&bytes))
                        .ok_or_else(|| {
                            format!("{}: record {} is not a track", path.display(), i + 1)
                        })?;
                    let s = (track.time - day_ms).div_euclid(1000);
                    if s >= i64::from(from) && s < i64::from(to) {
                        by_second.push((s as u32, track));
                    }
                }
                by_second.sort_by_key(|(s, _)| *s);
                Some(Tracks::Loaded { by_second, next: 0 })
            }
            None => return Err("no traffic source".into()),
        };
        self.tracks = tracks;
        Ok(())
    }

    fn execute(&mut self, f: &Federate, abort: &AtomicBool) -> Result<(), String> {
        let (from, to) = self.window;
        let mut ignore = |_cb: Callback| {};
        let Some(tracks) = self.tracks.as_mut() else {
            // Nothing to play in this run: step aside to the end.
            return advance(f, abort, f64::from(self.end), &mut ignore);
        };
        if from > 0 {
            advance(f, abort, f64::from(from), &mut ignore)?;
        }
        let mut buf = Vec::new();
        let mut scratch = Vec::with_capacity(256);
        // Messages are cut from a shared 64 KiB block instead of one allocation each
        // for key and payload; a block is freed when its last message has been read.
        let mut arena = bytes::BytesMut::with_capacity(64 * 1024);
        let real_time = !self.block.fast_time;
        let started = Instant::now();
        for t in from..to {
            if real_time {
                let due = Duration::from_secs_f64(f64::from(t - from) / self.block.speed);
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    thread::sleep(wait);
                }
            }
            tracks.second(t, &mut buf);
            for track in &mut buf {
                track.meta.tpub = wall_ms();
                self.codec.encode(track, &mut scratch);
                arena.extend_from_slice(track.vid.as_bytes());
                let vid = arena.split().freeze();
                arena.extend_from_slice(&scratch);
                let message = arena.split().freeze();
                f.send_interaction(
                    self.sndem.class,
                    [(self.sndem.vid, vid), (self.sndem.message, message)],
                    Bytes::new(),
                )
                .map_err(|e| e.to_string())?;
            }
            self.published += buf.len() as u64;
            self.progress
                .published
                .fetch_add(buf.len() as u64, Ordering::Relaxed);
            advance(f, abort, f64::from(t + 1), &mut ignore)?;
        }
        if to < self.end {
            advance(f, abort, f64::from(self.end), &mut ignore)?;
        }
        Ok(())
    }
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Component for TrafficBlock {
    fn state(&mut self, state: &str, f: &Federate, abort: &AtomicBool) -> Result<(), String> {
        match state {
            "deployment" => {
                self.window = self.window();
                match &self.block.source {
                    Some(TrafficSource::AdsbCsv { path } | TrafficSource::Recording { path })
                        if !path.exists() =>
                    {
                        Err(format!("source file {} not found", path.display()))
                    }
                    _ => Ok(()),
                }
            }
            "startup" => f
                .publish_interaction_class(self.sndem.class)
                .map_err(|e| e.to_string()),
            "initialization" => {
                self.load()?;
                enable_time(f, abort, 1.0, |_| {})
            }
            "execution" => self.execute(f, abort),
            "shutdown" => {
                f.flush().map_err(|e| e.to_string())?;
                f.disable_time_regulation().map_err(|e| e.to_string())
            }
            _ => Ok(()),
        }
    }

    fn outcome(self: Box<Self>) -> BlockOutcome {
        BlockOutcome::Published(self.published)
    }
}

/// The performance monitor: message lengths, per-second frequencies, latency, counts.
struct MonitorBlock {
    day_start_ms: i64,
    end: u32,
    codec: Codec,
    sndem: Sndem,
    progress: Arc<Progress>,
    received: u64,
    malformed: u64,
    bytes: u64,
    lengths: Recorder,
    latency_us: Recorder,
    per_second: Vec<u32>,
    /// Distinct flights per simulated minute (hashes of the vehicle identifiers).
    minute_flights: Vec<u32>,
    minute_seen: HashSet<u64, std::hash::BuildHasherDefault<Prehashed>>,
    /// The track being decoded, reused message after message.
    scratch: Track,
    current_minute: u32,
    /// Per sender, the last sequence number seen: duplicates are counted, not hidden.
    last_seq: std::collections::HashMap<glidepath::FederateHandle, u64>,
    duplicated: u64,
    /// Names of the linked blocks, and their federates once known.
    sources: Vec<String>,
    linked: Linked,
}

/// A hasher for keys that are hashes already (the flight set's): passes them through.
#[derive(Default)]
struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// Which producers a subscribing block takes messages from: those of the blocks
/// linked to it in the layout (Figure 3.1's arrows). Learned from the federation's
/// list of federates during initialization, when every block has joined.
#[derive(Default)]
struct Linked {
    handles: HashSet<glidepath::FederateHandle>,
    /// Messages from producers no link names: not counted as received.
    unlinked: u64,
}

impl Linked {
    fn learn(&mut self, f: &Federate, sources: &[String]) -> Result<(), String> {
        let federates = f.list_federates().map_err(|e| e.to_string())?;
        for name in sources {
            let info = federates
                .iter()
                .find(|i| &i.name == name)
                .ok_or_else(|| format!("linked block `{name}` has not joined"))?;
            self.handles.insert(info.handle);
        }
        Ok(())
    }

    fn accepts(&mut self, producer: glidepath::FederateHandle) -> bool {
        let ok = self.handles.contains(&producer);
        if !ok {
            self.unlinked += 1;
        }
        ok
    }
}

impl MonitorBlock {
    fn new(ctx: &Context, sndem: Sndem) -> MonitorBlock {
        MonitorBlock {
            day_start_ms: ctx.layout_day_start * 1000,
            end: ctx.end,
            codec: ctx.opts.codec,
            sndem,
            progress: ctx.progress.clone(),
            received: 0,
            malformed: 0,
            bytes: 0,
            lengths: Recorder::new(),
            latency_us: Recorder::new(),
            per_second: vec![0; ctx.end as usize],
            minute_flights: vec![0; (ctx.end as usize).div_ceil(60)],
            minute_seen: HashSet::default(),
            scratch: Track::default(),
            current_minute: 0,
            last_seq: Default::default(),
            duplicated: 0,
            sources: ctx.sources.clone(),
            linked: Linked::default(),
        }
    }

    fn receive(&mut self, cb: Callback) {
        let Callback::ReceiveInteraction {
            class,
            values,
            info,
            ..
        } = cb
        else {
            return;
        };
        if class != self.sndem.class || !self.linked.accepts(info.producer) {
            return;
        }
        let now_ns = glidepath::transport::monotonic_now_ns();
        let last = self.last_seq.entry(info.producer).or_insert(0);
        if info.seq <= *last {
            self.duplicated += 1;
            return;
        }
        *last = info.seq;
        self.received += 1;
        self.progress.received.fetch_add(1, Ordering::Relaxed);
        let field = |p: ParameterHandle| values.iter().find(|(q, _)| *q == p).map(|(_, v)| v);
        let (Some(key), Some(message)) = (field(self.sndem.vid), field(self.sndem.message)) else {
            self.malformed += 1;
            return;
        };
        // "The length of a track message is the sum of the lengths of the key and the
        // payload" (memorandum, section 4): 7 + 200 bytes for Table 4.1's sample.
        let length = (key.len() + message.len()) as u64;
        self.bytes += length;
        self.lengths.record(length);
        self.latency_us
            .record(now_ns.saturating_sub(info.publish_time_ns) / 1000);
        if !self.codec.decode_into(message, &mut self.scratch) {
            self.malformed += 1;
            return;
        }
        let second = (self.scratch.time - self.day_start_ms).div_euclid(1000);
        if second >= 0 && (second as usize) < self.per_second.len() {
            let second = second as usize;
            self.per_second[second] += 1;
            let minute = (second / 60) as u32;
            if minute != self.current_minute {
                self.close_minute();
                self.current_minute = minute;
            }
            let mut h = std::collections::hash_map::DefaultHasher::new();
            self.scratch.vid.hash(&mut h);
            self.minute_seen.insert(h.finish());
        }
    }

    fn close_minute(&mut self) {
        let m = self.current_minute as usize;
        if let Some(slot) = self.minute_flights.get_mut(m) {
            *slot = (*slot).max(self.minute_seen.len() as u32);
        }
        self.minute_seen.clear();
    }
}

impl Component for MonitorBlock {
    fn state(&mut self, state: &str, f: &Federate, abort: &AtomicBool) -> Result<(), String> {
        match state {
            "startup" => f
                .subscribe_interaction_class(self.sndem.class)
                .map_err(|e| e.to_string()),
            "initialization" => {
                self.linked.learn(f, &self.sources)?;
                enable_time(f, abort, MONITOR_LOOKAHEAD, |cb| self.receive(cb))
            }
            "execution" => {
                for t in 1..=self.end {
                    advance(f, abort, f64::from(t), &mut |cb| self.receive(cb))?;
                    self.progress
                        .monitor_second
                        .store(u64::from(t), Ordering::Relaxed);
                }
                self.close_minute();
                Ok(())
            }
            "shutdown" => f.disable_time_regulation().map_err(|e| e.to_string()),
            _ => Ok(()),
        }
    }

    fn callback(&mut self, cb: Callback) {
        self.receive(cb);
    }

    fn outcome(self: Box<Self>) -> BlockOutcome {
        let mut frequencies = Recorder::new();
        for &n in &self.per_second {
            frequencies.record(u64::from(n));
        }
        let per_second = self
            .per_second
            .iter()
            .enumerate()
            .map(|(t, &messages)| SecondStats {
                t: t as u32,
                messages,
                flights: self.minute_flights.get(t / 60).copied().unwrap_or(0),
            })
            .collect();
        BlockOutcome::Monitor(Box::new(MonitorStats {
            received: self.received,
            duplicated: self.duplicated,
            malformed: self.malformed,
            bytes: self.bytes,
            lengths: self.lengths,
            frequencies,
            latency_us: self.latency_us,
            per_second,
        }))
    }
}

/// Magic at the start of a recording file.
const RECORDING_MAGIC: &[u8; 8] = b"GPREC01\n";

/// Writes every SNDEM message of a run to a file: after the magic, one record per
/// message — simulated second (u32 LE), length (u32 LE), the message bytes as they
/// travelled (JSON or binary).
struct RecorderBlock {
    name: String,
    end: u32,
    sources: Vec<String>,
    linked: Linked,
    path: Option<PathBuf>,
    sndem: Sndem,
    out: Option<BufWriter<File>>,
    error: Option<String>,
    written: u64,
}

impl RecorderBlock {
    fn new(block: &Block, ctx: &Context, sndem: Sndem) -> RecorderBlock {
        RecorderBlock {
            name: block.name.clone(),
            end: ctx.end,
            sources: ctx.sources.clone(),
            linked: Linked::default(),
            path: block.output.clone(),
            sndem,
            out: None,
            error: None,
            written: 0,
        }
    }

    fn record(&mut self, cb: Callback) {
        let (
            Some(out),
            Callback::ReceiveInteraction {
                class,
                values,
                info,
                ..
            },
        ) = (&mut self.out, cb)
        else {
            return;
        };
        if class != self.sndem.class || self.error.is_some() || !self.linked.accepts(info.producer)
        {
            return;
        }
        let Some((_, message)) = values.iter().find(|(p, _)| *p == self.sndem.message) else {
            return;
        };
        let second = Codec::Json
            .decode(message)
            .or_else(|| Codec::Binary.decode(message))
            .map_or(0, |t| (t.time.div_euclid(1000)) as u32);
        let r = out
            .write_all(&second.to_le_bytes())
            .and_then(|()| out.write_all(&(message.len() as u32).to_le_bytes()))
            .and_then(|()| out.write_all(message));
        match r {
            Ok(()) => self.written += 1,
            Err(e) => self.error = Some(e.to_string()),
        }
    }
}

impl Component for RecorderBlock {
    fn state(&mut self, state: &str, f: &Federate, abort: &AtomicBool) -> Result<(), String> {
        match state {
            "deployment" => {
                let path = self
                    .path
                    .clone()
                    .ok_or_else(|| format!("recorder {} has no output", self.name))?;
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                }
                let mut file = BufWriter::new(
                    File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?,
                );
                file.write_all(RECORDING_MAGIC)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                self.out = Some(file);
                Ok(())
            }
            "startup" => f
                .subscribe_interaction_class(self.sndem.class)
                .map_err(|e| e.to_string()),
            "initialization" => {
                self.linked.learn(f, &self.sources)?;
                // Constrained (not regulating: it holds nobody back), so the grant at
                // the end proves every message of the run has arrived.
                f.enable_time_constrained().map_err(|e| e.to_string())?;
                wait_until(f, abort, "constrained", &mut |cb| self.record(cb), |cb| {
                    matches!(cb, Callback::TimeConstrainedEnabled { .. })
                })
                .map(drop)
            }
            "execution" => advance(f, abort, f64::from(self.end), &mut |cb| self.record(cb)),
            "archival" => {
                if let Some(e) = self.error.take() {
                    return Err(e);
                }
                if let Some(mut out) = self.out.take() {
                    out.flush().map_err(|e| e.to_string())?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn callback(&mut self, cb: Callback) {
        self.record(cb);
    }

    fn outcome(self: Box<Self>) -> BlockOutcome {
        BlockOutcome::Other
    }
}

/// Reads a recording: (unix second of the track, message bytes) per record.
fn read_recording(path: &Path) -> Result<Vec<(u32, Vec<u8>)>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut r = BufReader::new(file);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)
        .map_err(|e| format!("{}: not a recording ({e})", path.display()))?;
    if &magic != RECORDING_MAGIC {
        return Err(format!("{}: not a glidepath recording", path.display()));
    }
    let mut out = Vec::new();
    loop {
        if r.fill_buf().map_err(|e| e.to_string())?.is_empty() {
            return Ok(out);
        }
        let mut head = [0u8; 8];
        r.read_exact(&mut head).map_err(|e| {
            format!(
                "{}: record {} truncated ({e})",
                path.display(),
                out.len() + 1
            )
        })?;
        let second = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(head[4..].try_into().expect("4 bytes")) as usize;
        if len > 1 << 20 {
            return Err(format!(
                "{}: record {} claims {len} bytes",
                path.display(),
                out.len() + 1
            ));
        }
        let mut message = vec![0; len];
        r.read_exact(&mut message).map_err(|e| {
            format!(
                "{}: record {} truncated ({e})",
                path.display(),
                out.len() + 1
            )
        })?;
        out.push((second, message));
    }
}

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
//!
//! # Where it lives
//! - `manager.rs`: the simulation manager ([`run`]): deploys the blocks, times each
//!   state, collects the outcomes into the report.
//! - `deploy.rs`: blocks on threads, or in processes of their own
//!   ([`Deployment::Processes`], [`run_block_process`]).
//! - `block.rs`: what every block does: join, go through the states, time management.
//! - one file per block kind: `traffic.rs` (generated, ADS-B CSV, or a recording played
//!   back), `monitor.rs` (the performance monitor), `recorder.rs`; `flights.rs`, the
//!   monitor's count of flights airborne per second (Figure 4.1(a));
//!   `recording.rs`, the recording file format; and `live.rs`, the run's live view
//!   ([`Live`]) and the credit window's counters.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use glidepath::stats::Recorder;
use glidepath::{
    Federate, Fom, FomModule, InteractionClassHandle, ParameterHandle, RtiConfig, WaitStrategy,
};

use crate::report::{SecondStats, SourceStats};
use crate::track::Track;
use crate::traffic::DAY_S;

mod block;
mod deploy;
mod external;
mod flights;
mod frame;
mod live;
mod manager;
mod monitor;
mod recorder;
mod recording;
mod sector;
mod traffic;

pub use deploy::run_block_process;
pub use external::{FrameTag, PROTOCOL as EXTERNAL_PROTOCOL};
/// The monitor's flight gap, for the generator's test that callsigns respect it.
#[cfg(test)]
pub(crate) use flights::FLIGHT_GAP_S;
pub use frame::{frame, RunFrame, MAX_RUN_S};
pub use live::{BlockCount, Latency, Live, Outcome, Snapshot, StateTime};
pub use manager::run;

/// The air-traffic FOM module, built in so a run needs no file but its layout.
const AIR_TRAFFIC_FOM: &str = include_str!("../../../../foms/air-traffic.xml");

/// The seven states every block goes through, in order (memorandum section 4.3).
/// Each is one federation synchronization point, labelled with [`SimulationState::name`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SimulationState {
    /// Every block is placed (a thread or a process) and checks what it needs.
    Deployment,
    /// Blocks publish and subscribe.
    Startup,
    /// Blocks load their traffic, learn their links and enable time management.
    Initialization,
    /// The simulated time runs: traffic is published and monitored.
    Execution,
    /// Publishers flush and stop regulating.
    Shutdown,
    /// Recorders close their files.
    Archival,
    /// No work left: blocks resign once it synchronizes.
    Retirement,
}

impl SimulationState {
    /// All seven, in order.
    pub const ALL: [SimulationState; 7] = [
        SimulationState::Deployment,
        SimulationState::Startup,
        SimulationState::Initialization,
        SimulationState::Execution,
        SimulationState::Shutdown,
        SimulationState::Archival,
        SimulationState::Retirement,
    ];

    /// The state's name: its synchronization point's label and its key in
    /// `report.json` (`deployment`, `startup`, ...).
    pub const fn name(self) -> &'static str {
        match self {
            SimulationState::Deployment => "deployment",
            SimulationState::Startup => "startup",
            SimulationState::Initialization => "initialization",
            SimulationState::Execution => "execution",
            SimulationState::Shutdown => "shutdown",
            SimulationState::Archival => "archival",
            SimulationState::Retirement => "retirement",
        }
    }
}

impl std::fmt::Display for SimulationState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How long the manager lets a run go without any sign of progress before it fails
/// it as wedged: no block ended, yet (in threads) nothing was published or received
/// and no simulated second passed, or (retirement, which has no work) the federation
/// did not synchronize. Not a limit on a state's length: a full day through JetStream
/// takes longer than this, and a real-time run as long as the day it plays.
const WAIT: Duration = Duration::from_secs(600);

/// How many simulated seconds the traffic may run ahead of the monitor.
const MONITOR_LOOKAHEAD: f64 = 4.0;

/// The lookahead of a block that publishes tracks (traffic, player, external): it
/// sends second `t`'s tracks before asking for `t + 1`.
const SOURCE_LOOKAHEAD: f64 = 1.0;

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
    /// Simulated second 0, Unix seconds; overrides the layout's `day_start` (default:
    /// the layout's, else the first row of its recorded sources, see [`frame`]).
    pub day_start: Option<i64>,
    /// Run only the first `hours` from second 0 (default: a whole day with generated
    /// traffic, the data's span with recorded sources only, see [`frame`]); at most
    /// [`MAX_RUN_S`].
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
    /// A live view of the run for the portal (`glidepath run --web`); one run per
    /// [`Live`]. `None`: the run keeps its counters to itself.
    pub live: Option<Arc<Live>>,
    /// Flow control by credit: at most this many messages published to the monitor
    /// and not yet received by it, over every block linked to it (blocks as threads
    /// only). `None`: only time management bounds what is in flight (the monitor's
    /// lookahead, 4 simulated seconds).
    pub credit: Option<u64>,
    /// The federation's name; `None`: one made up per run (`atm-PID-N-RUN`). External
    /// blocks join it by this name.
    pub federation: Option<String>,
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
            day_start: None,
            hours: None,
            density: None,
            run_name: "1A".into(),
            progress: false,
            wait: WaitStrategy::default(),
            deployment: Deployment::Threads,
            live: None,
            credit: None,
            federation: None,
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

/// The counters the blocks share with the progress bar and the portal, and the
/// manager's stop signal ([`Live`]).
type Progress = Live;

/// Fails a block's wait once the manager has stopped the run ([`run_block`] then
/// reports [`RunError::Stopped`]).
fn check_abort(abort: &AtomicBool) -> Result<(), String> {
    if abort.load(Ordering::Relaxed) {
        Err("stopped: the run failed elsewhere".into())
    } else {
        Ok(())
    }
}

/// The simulated seconds a run covers, `[0, end)`, when the options say (`hours`);
/// else a whole day. [`frame`] decides from the data when the options do not say.
fn run_end(opts: &RunOptions) -> u32 {
    match opts.hours {
        Some(h) => (h * 3600.0).round().clamp(1.0, f64::from(MAX_RUN_S)) as u32,
        None => DAY_S,
    }
}

fn air_traffic_fom() -> Result<Fom, RunError> {
    let module = FomModule::parse_str("air-traffic.xml", AIR_TRAFFIC_FOM)
        .map_err(|e| RunError::Rti(e.to_string()))?;
    Fom::merge(&[module]).map_err(|e| RunError::Rti(e.to_string()))
}

/// What a block's thread needs besides the block.
struct Context {
    /// The blocks linked to this one: the only producers it takes messages from.
    sources: Vec<String>,
    /// Unix seconds of simulated second 0 (resolved by [`frame`]).
    day_start: i64,
    end: u32,
    opts: RunOptions,
    progress: Arc<Progress>,
    /// The credit window this block publishes under ([`RunOptions::credit`], when it
    /// is linked to the monitor).
    credit: Option<u64>,
    /// A publisher's: the sector of the monitor it is linked to, if that has one (what
    /// counts as published to the monitor, and takes credit).
    monitor_sector: Option<crate::layout::Sector>,
    /// A publisher's: whether a block it is linked to has a sector, so its tracks go
    /// out with their points as regions.
    regions: bool,
}

#[derive(serde::Serialize, serde::Deserialize)]
enum BlockOutcome {
    /// A traffic or player block: what it played and skipped.
    Published(Box<SourceStats>),
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

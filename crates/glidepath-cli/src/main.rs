//! The `glidepath` command-line tool: check FOM modules, run the demo federation
//! (in one process or spread over several through NATS), host federations for NATS.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use glidepath::{Fom, ProcessModel, RtiConfig, TransportKind};
use nats_args::NatsArgs;

#[cfg(feature = "web")]
mod atm_web;
mod bench;
mod bridge_config;
mod bus;
mod demo;
mod federation;
mod nats_args;
mod netlab;
mod run;
mod status;
mod tg;
mod tg_nodes;

/// glidepath: an HLA run-time infrastructure for distributed simulation.
#[derive(Parser, Debug)]
#[command(name = "glidepath", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Work with FOM (Federation Object Model) modules.
    Fom {
        #[command(subcommand)]
        command: FomCommand,
    },
    /// Run a demo federation: aircraft federates publish their positions in time
    /// lock-step while a monitor federate watches. All in this process by default;
    /// with `--transport nats` and `--role`, spread over several processes.
    Demo(DemoArgs),
    /// Host federation executions for the `nats` transport: answer the federates'
    /// requests (create, join, resign, names, synchronization points, ...) on the
    /// NATS server and publish the federations' notifications. Run one per NATS
    /// system; data between federates never passes through it.
    Server(ServerArgs),
    /// Read back a federation's messages kept by a `glidepath server --persistence
    /// jetstream` and print how many each sender sent on each topic.
    Replay(ReplayArgs),
    /// Run a benchmark suite (latency, throughput, loopback, timeadv, fanout, tg, bus) on a
    /// transport, optionally next to the raw peer; print a table, write JSON and plots.
    Bench(Box<bench::BenchArgs>),
    /// Run an ATM TestBed layout (blocks and links in TOML, e.g.
    /// layouts/atm-testbed-day.toml): a simulated day of US traffic, in fast time,
    /// through the chosen transport to a performance monitor; prints and writes the
    /// memorandum's tables and figures.
    Run(run::RunArgs),
    /// Run a layout through every backend (inproc, nats, nats with JetStream; each
    /// with compression off and on) and write a side-by-side table next to the
    /// memorandum's runs.
    Matrix(run::RunArgs),
    /// The layout editor in the browser: blocks placed and linked by dragging, checked
    /// by the layout loader on every change, saved as the TOML `glidepath run` reads.
    #[cfg(feature = "web")]
    Edit(atm_web::EditArgs),
    /// Run the distributed target generator: a simulation server and processing nodes
    /// flying a scenario's aircraft (point-mass dynamics) as HLA object updates; a
    /// status line per second, operator controls on standard input.
    Tg(tg::TgArgs),
    /// Act on a running federation over NATS: `save NAME LABEL [--time T]`,
    /// `restore NAME LABEL`, `status NAME [--json]`. Prints what happened; exits
    /// non-zero with the reason when the federation refused.
    Federation {
        #[command(subcommand)]
        command: federation::FederationCommand,
    },
    /// The network laboratory (Linux, root): two hosts as network namespaces joined
    /// by an emulated link (bandwidth, delay, full or half duplex), the JAXA
    /// report's experiments rerun across it, and its cost model (α, β) fitted.
    Netlab(netlab::NetlabArgs),
    /// The formation-flying testbed's bus: `window` runs the 10 Hz soft real-time
    /// check (how many truth updates arrive within 20 ms early to 80 ms late);
    /// `bridge CONFIG` forwards between the bus and plain NATS in JSON.
    Bus {
        #[command(subcommand)]
        command: bus::BusCommand,
    },
}

#[derive(clap::Args, Debug)]
struct ReplayArgs {
    /// The federation's id (the number in its subjects, `glidepath.<id>.>`).
    #[arg(long, value_name = "ID")]
    federation_id: u64,
    #[command(flatten)]
    nats: NatsArgs,
    /// The stream sequence number to start from (1 is the first message).
    #[arg(long, default_value_t = 1, value_name = "SEQ")]
    from_seq: u64,
    /// The federation key of the run, when it had one (64 hex digits in a file)
    /// [default: $GLIDEPATH_KEY_FILE, else no key].
    #[arg(long, value_name = "FILE")]
    key_file: Option<String>,
}

#[derive(clap::Args, Debug)]
struct ServerArgs {
    /// What to host the federations on: nats (a NATS server, for processes on any
    /// host) or shm (shared memory, for processes of this host) [default: nats].
    #[arg(long, value_name = "BACKEND", value_parser = ["nats", "shm"])]
    transport: Option<String>,
    /// With --transport shm: the shared-memory system's name; its files are
    /// /dev/shm/glidepath-NAME.* [default: $GLIDEPATH_SHM_NAME, else glidepath].
    #[arg(long, value_name = "NAME")]
    shm_name: Option<String>,
    /// With --transport shm: bytes of each endpoint's ring, a power of two
    /// [default: $GLIDEPATH_SHM_RING_BYTES, else 8388608].
    #[arg(long, value_name = "BYTES")]
    shm_ring_bytes: Option<String>,
    #[command(flatten)]
    nats: NatsArgs,
    /// A file holding the federation key (64 hex digits): requests, replies and
    /// notifications are then encrypted and authenticated, and processes without the
    /// key are refused [default: $GLIDEPATH_KEY_FILE, else no key].
    #[arg(long, value_name = "FILE")]
    key_file: Option<String>,
    /// Compression of replies and notifications: none, lz4, zstd or zstd:LEVEL
    /// [default: $GLIDEPATH_COMPRESSION, else none].
    #[arg(long, value_name = "ALGORITHM")]
    compression: Option<String>,
    /// Keep every federation's messages in a JetStream stream (the NATS server must
    /// run with `--jetstream`): none or jetstream [default: $GLIDEPATH_PERSISTENCE, else none].
    #[arg(long, value_name = "MODE")]
    persistence: Option<String>,
    /// On a NATS cluster, the copies of each federation's stream (with JetStream
    /// persistence), of the executive log (with failover) and of the bucket of
    /// federation saves (1 to 5; 3 survives the loss of a node) [default: $GLIDEPATH_STREAM_REPLICAS, else 1].
    #[arg(long, value_name = "N")]
    stream_replicas: Option<String>,
    /// Run as one of several executive servers: the state in a JetStream log (the
    /// NATS server must run with `--jetstream`), one active, the others standing by
    /// to take over within about a second of its death.
    #[arg(long)]
    failover: bool,
    /// With --failover: requests logged between two snapshots of the executive's
    /// state; the log before each snapshot is purged, so it stays short [default: 1024].
    #[arg(long, value_name = "N", requires = "failover", value_parser = clap::value_parser!(u64).range(1..))]
    snapshot_every: Option<u64>,
    /// Resign a member whose endpoint has been gone this long (its process died or
    /// lost its connection), so a crashed regulator does not hold time back for
    /// ever; 0 never does [default: 10].
    #[arg(long, value_name = "SECONDS")]
    lost_after: Option<f64>,
}

/// Encoder-chain and bundling flags, shared by the commands that send messages.
#[derive(clap::Args, Debug, Default)]
struct MessagingArgs {
    /// Compression: none, lz4, zstd or zstd:LEVEL [default: $GLIDEPATH_COMPRESSION, else none].
    #[arg(long, value_name = "ALGORITHM")]
    compression: Option<String>,
    /// Messages shorter than this many bytes are not compressed [default: $GLIDEPATH_COMPRESS_MIN_BYTES, else 512].
    #[arg(long, value_name = "BYTES")]
    compress_min_bytes: Option<String>,
    /// A file holding the federation key (64 hex digits) [default: $GLIDEPATH_KEY_FILE, else no key].
    #[arg(long, value_name = "FILE")]
    key_file: Option<String>,
    /// Largest bundle in bytes; 0 turns bundling off [default: $GLIDEPATH_BUNDLE_BYTES, else 0].
    #[arg(long, value_name = "BYTES")]
    bundle_bytes: Option<String>,
    /// Longest a message waits in a bundle, in microseconds [default: $GLIDEPATH_BUNDLE_TIME_US, else 1000].
    #[arg(long, value_name = "MICROSECONDS")]
    bundle_time_us: Option<String>,
    /// Over core NATS, envelopes a sender may run ahead of its slowest receiver's
    /// acknowledgement; 0 turns acknowledgements and retransmission off [default: $GLIDEPATH_RELIABLE_WINDOW, else 16384].
    #[arg(long, value_name = "ENVELOPES")]
    reliable_window: Option<String>,
    /// Over core NATS, slices per axis of the cell grid that carries updates and
    /// interactions sent with regions; every process of a federation must agree; 0
    /// turns filtering on the wire off [default: $GLIDEPATH_DDM_CELLS, else 8].
    #[arg(long, value_name = "N")]
    ddm_cells: Option<String>,
    /// The dimensions the cell grid is cut along, comma-separated names [default:
    /// $GLIDEPATH_DDM_DIMENSIONS, else the FOM's first two non-HLA dimensions].
    #[arg(long, value_name = "NAMES")]
    ddm_dimensions: Option<String>,
}

impl MessagingArgs {
    /// Applies the flags given over `config`, with the same checks and messages as
    /// the environment variables.
    fn apply(self, config: &mut RtiConfig) -> anyhow::Result<()> {
        let flags = [
            ("--compression", self.compression),
            ("--compress-min-bytes", self.compress_min_bytes),
            ("--key-file", self.key_file),
            ("--bundle-bytes", self.bundle_bytes),
            ("--bundle-time-us", self.bundle_time_us),
            ("--reliable-window", self.reliable_window),
            ("--ddm-cells", self.ddm_cells),
            ("--ddm-dimensions", self.ddm_dimensions),
        ];
        for (flag, value) in flags {
            if let Some(value) = value {
                config.apply_args([flag.to_string(), value])?;
            }
        }
        Ok(())
    }
}

#[derive(Subcommand, Debug)]
enum FomCommand {
    /// Load and merge FOM modules (IEEE 1516-2010 OMT XML) and print what they define.
    Check {
        /// Module files, merged in the order given.
        #[arg(required = true, value_name = "FILE")]
        files: Vec<PathBuf>,
        /// Also print the merged FOM as a tree: classes, attributes with their data
        /// type, order and transportation, parameters, dimensions, update rates and
        /// switches.
        #[arg(long, short)]
        verbose: bool,
    },
}

#[derive(clap::Args, Debug)]
struct DemoArgs {
    /// How many aircraft federates to run.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..=1000))]
    federates: u32,
    /// How many time steps every federate advances.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    steps: u32,
    /// How callbacks are delivered: inside evoke calls, or on each federate's RTI thread.
    #[arg(long, value_enum, default_value_t = ProcessModelArg::Evoked)]
    process_model: ProcessModelArg,
    /// The air-traffic FOM module (relative paths are relative to the current directory).
    #[arg(long, default_value = "foms/air-traffic.xml", value_name = "FILE")]
    fom: PathBuf,
    /// The transport [default: $GLIDEPATH_TRANSPORT, else inproc].
    #[arg(long, value_enum)]
    transport: Option<TransportArg>,
    #[command(flatten)]
    nats: NatsArgs,
    /// Which part of the federation this process runs: everything, only the monitor
    /// (which waits for `--federates` aircraft from other processes), or only
    /// `--federates` aircraft numbered from `--index`.
    #[arg(long, value_enum, default_value_t = RoleArg::All)]
    role: RoleArg,
    /// The number of the first aircraft this process runs (`--role aircraft`), so that
    /// aircraft in different processes get different names.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    index: u32,
    /// The federation execution's name (processes of one federation must agree).
    #[arg(long, default_value = "glidepath-demo")]
    federation: String,
    #[command(flatten)]
    messaging: MessagingArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(crate) enum TransportArg {
    /// Every federate in this process.
    Inproc,
    /// Through a NATS server, with `glidepath server` hosting the federation.
    Nats,
    /// Through shared memory between processes of this host, with
    /// `glidepath server --transport shm` (or the run itself) hosting the federation.
    Shm,
}

impl TransportArg {
    pub(crate) fn kind(self) -> TransportKind {
        match self {
            TransportArg::Inproc => TransportKind::Inproc,
            TransportArg::Nats => TransportKind::Nats,
            TransportArg::Shm => TransportKind::Shm,
        }
    }
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum RoleArg {
    /// The monitor and every aircraft.
    All,
    /// Only the monitor.
    Monitor,
    /// Only aircraft.
    Aircraft,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
enum ProcessModelArg {
    /// Callbacks run inside evoke calls on the federate's own thread.
    Evoked,
    /// Callbacks run on the federate's RTI thread as soon as they happen.
    Immediate,
}

/// Where the log filter comes from: ours first, then the Rust ecosystem's usual one.
const LOG_VARS: [&str; 2] = ["GLIDEPATH_LOG", "RUST_LOG"];

/// Sends the library's log records (dropped messages with their sender, refused
/// requests, slow consumers, lost envelopes, reconnections) to standard error.
/// Warnings and errors by default; `GLIDEPATH_LOG` (or `RUST_LOG`) takes a filter
/// such as `info` or `warn,glidepath_transport=debug`.
fn init_logging() -> anyhow::Result<()> {
    use std::io::IsTerminal;
    use tracing_subscriber::EnvFilter;
    let (var, spec) = LOG_VARS
        .iter()
        .find_map(|var| Some((*var, std::env::var(var).ok()?)))
        .unwrap_or(("default", "warn".to_string()));
    let filter = EnvFilter::builder().parse(&spec).with_context(|| {
        format!("{var}={spec:?} is not a log filter (for example: warn, info, warn,glidepath_transport=debug)")
    })?;
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .init();
    Ok(())
}

/// Every message is allocated on the sending thread and freed on the receiving one;
/// glibc's malloc spent a quarter of an in-process throughput run on that
/// (`perf record`, `docs/benchmarks.md` "In-process throughput and the allocator").
/// jemalloc frees into the freeing thread's cache and returns blocks in batches:
/// about 1.3x the throughput, and no latency lost (mimalloc, tried too, lost some).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// Turns on jemalloc's background threads, which give pages freed a while ago
/// (`dirty_decay_ms`, 10 s) back to the system in every arena. Without them an arena
/// purges only when a thread allocates in it again: after a burst (a NATS node
/// restarting, a backlog caught up) the pages of arenas gone quiet stayed resident for
/// good, and resident memory rose in steps while live bytes stayed flat (the soak,
/// `docs/reliability.md`). Best effort: a jemalloc without them only purges later.
#[cfg(feature = "jemalloc")]
fn purge_in_background() {
    let _ = tikv_jemalloc_ctl::background_thread::write(true);
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Err(e) = init_logging() {
        eprintln!("error: {e:#}");
        return ExitCode::FAILURE;
    }
    #[cfg(feature = "jemalloc")]
    purge_in_background();
    let result = match cli.command {
        Command::Fom {
            command: FomCommand::Check { files, verbose },
        } => fom_check(&files, verbose),
        Command::Demo(args) => demo_options(args).and_then(|opts| demo::run(&opts)),
        Command::Server(args) => server(args),
        Command::Replay(args) => replay(args),
        Command::Bench(args) => bench::run(*args),
        Command::Run(args) => run::run_layout(args),
        Command::Matrix(args) => run::run_matrix(args),
        #[cfg(feature = "web")]
        Command::Edit(args) => atm_web::edit(args),
        Command::Tg(args) => tg::run(args),
        Command::Federation { command } => federation::run(command),
        Command::Bus { command } => bus::run(command),
        Command::Netlab(args) => netlab::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            say(&format!("error: {e:#}"));
            ExitCode::FAILURE
        }
    }
}

/// Writes one line to stderr in a single write. Node and block processes share
/// their parent's stderr, and `eprintln!` writes each formatted piece separately,
/// so two processes' lines could interleave mid-line; one write does not.
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&bytes);
}

/// `glidepath server --transport shm`: hosts the shared-memory system until killed
/// (the next host of the same name removes whatever a killed one left).
fn shm_server(config: &RtiConfig) -> anyhow::Result<()> {
    // Blocked before the host's threads start, so that they inherit the mask and the
    // signal reaches the `sigwait` below, which ends the server cleanly: its files
    // are removed (killed by SIGKILL instead, the next host sweeps them).
    let signals = glidepath_netlab::lab::block_termination_signals()?;
    let store = Box::new(glidepath::backend::DirSaveStore::new(&config.save_dir));
    let host =
        glidepath::ShmTransport::host_with_store(&config.shm_name, config.shm_options(), store)
            .with_context(|| format!("hosting the shared-memory system `{}`", config.shm_name))?;
    println!(
        "glidepath server: hosting federations in shared memory, system `{}` (/dev/shm/glidepath-{}.*); ready",
        host.system_name(),
        host.system_name()
    );
    use std::io::Write;
    std::io::stdout().flush()?;
    let signal = glidepath_netlab::lab::wait_for_signal(&signals);
    let name = host.system_name().to_string();
    drop(host);
    println!(
        "glidepath server: signal {signal}: stopped; the files of system `{name}` are removed"
    );
    Ok(())
}

/// The demo's options: flags over the environment over the defaults.
fn demo_options(args: DemoArgs) -> anyhow::Result<demo::DemoOptions> {
    let mut config = RtiConfig::from_env()?;
    if let Some(t) = args.transport {
        config.transport = t.kind();
    }
    args.nats.apply(&mut config)?;
    args.messaging.apply(&mut config)?;
    let role = match args.role {
        RoleArg::All => demo::Role::All,
        RoleArg::Monitor => demo::Role::Monitor,
        RoleArg::Aircraft => demo::Role::Aircraft { first: args.index },
    };
    if !matches!(role, demo::Role::All) && config.transport == TransportKind::Inproc {
        anyhow::bail!(
            "--role {:?} runs part of a federation whose other parts are in other processes: \
             it needs --transport nats",
            args.role
        );
    }
    Ok(demo::DemoOptions {
        federates: args.federates,
        steps: args.steps,
        process_model: match args.process_model {
            ProcessModelArg::Evoked => ProcessModel::Evoked,
            ProcessModelArg::Immediate => ProcessModel::Immediate,
        },
        fom: args.fom,
        config,
        role,
        federation: args.federation,
    })
}

/// `glidepath server`: hosts the executive until killed.
fn server(args: ServerArgs) -> anyhow::Result<()> {
    let mut config = RtiConfig::from_env()?;
    if let Some(name) = &args.shm_name {
        config.apply_args(["--shm-name".to_string(), name.clone()])?;
    }
    if let Some(bytes) = &args.shm_ring_bytes {
        config.apply_args(["--shm-ring-bytes".to_string(), bytes.clone()])?;
    }
    if args.transport.as_deref() == Some("shm") {
        return shm_server(&config);
    }
    args.nats.apply(&mut config)?;
    let messaging = MessagingArgs {
        compression: args.compression,
        compress_min_bytes: None,
        key_file: args.key_file,
        bundle_bytes: None,
        bundle_time_us: None,
        reliable_window: None,
        ddm_cells: None,
        ddm_dimensions: None,
    };
    messaging.apply(&mut config)?;
    if let Some(mode) = args.persistence {
        config.apply_args(["--persistence".to_string(), mode])?;
    }
    if let Some(n) = args.stream_replicas {
        config.apply_args(["--stream-replicas".to_string(), n])?;
    }
    config.executive_failover = args.failover;
    if let Some(n) = args.snapshot_every {
        config.executive_snapshot_every = n;
    }
    if let Some(s) = args.lost_after {
        if !s.is_finite() || s < 0.0 {
            anyhow::bail!("--lost-after `{s}`: seconds, a finite number at least 0");
        }
        config.executive_lost_after = (s > 0.0).then(|| std::time::Duration::from_secs_f64(s));
    }
    let keyed = if config.chain.key.is_some() {
        ", federation key required"
    } else {
        ""
    };
    let server = glidepath::serve_executive(&config).with_context(|| {
        format!(
            "starting the executive server on {}",
            config.nats_url_shown()
        )
    })?;
    println!(
        "glidepath server: hosting federations on {} (requests on {}{keyed}, persistence {}); ready",
        config.nats_url_shown(),
        glidepath::EXECUTIVE_SUBJECT,
        config.persistence.name()
    );
    use std::io::Write;
    std::io::stdout().flush()?;
    if config.executive_failover {
        // Say each change of role as it happens.
        let mut active = None;
        while !server.is_finished() {
            let now = server.is_active();
            if active != Some(now) {
                if now {
                    println!("glidepath server: active (holds the executive lease)");
                } else {
                    println!("glidepath server: standing by (following the executive log)");
                }
                std::io::stdout().flush()?;
                active = Some(now);
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
    server.wait();
    anyhow::bail!("the executive server stopped: its NATS connection closed")
}

/// `glidepath replay`: reads a federation's stream and prints a summary.
fn replay(args: ReplayArgs) -> anyhow::Result<()> {
    use std::collections::BTreeMap;
    let mut config = RtiConfig::from_env()?;
    args.nats.apply(&mut config)?;
    if let Some(file) = args.key_file {
        config.apply_args(["--key-file".to_string(), file])?;
    }
    let federation = glidepath::FederationId(args.federation_id);
    let replay = glidepath::replay(&config, federation, args.from_seq).with_context(|| {
        format!(
            "replaying federation {} from {}",
            federation.0,
            config.nats_url_shown()
        )
    })?;
    let mut per_sender: BTreeMap<String, u64> = BTreeMap::new();
    let mut per_topic: BTreeMap<String, u64> = BTreeMap::new();
    for r in &replay.envelopes {
        let sender = if r.envelope.sender == glidepath::FederateHandle::EXECUTIVE {
            "executive".to_string()
        } else {
            format!("federate {}", r.envelope.sender.0)
        };
        *per_sender.entry(sender).or_default() += 1;
        *per_topic.entry(format!("{:?}", r.topic)).or_default() += 1;
    }
    let first = replay.envelopes.first().map_or(0, |r| r.stream_sequence);
    let last = replay.envelopes.last().map_or(0, |r| r.stream_sequence);
    println!(
        "federation {}: {} envelope(s), stream sequence {first}..={last} ({} undecodable, {} duplicate(s) skipped)",
        federation.0,
        replay.envelopes.len(),
        replay.malformed,
        replay.duplicates
    );
    println!("  per sender:");
    for (sender, count) in per_sender {
        println!("    {sender:<20} {count:>10}");
    }
    println!("  per topic:");
    for (topic, count) in per_topic {
        println!("    {topic:<40} {count:>10}");
    }
    Ok(())
}

/// `glidepath fom check`: loads and merges the modules, prints a summary table and,
/// with `--verbose`, the merged tree.
fn fom_check(files: &[PathBuf], verbose: bool) -> anyhow::Result<()> {
    // The FOM error already reads `file:line:col: message`; add nothing around it.
    let fom = Fom::load_files(files)?;
    let s = fom.summary();
    println!("FOM OK: {} module(s) merged with the MIM", s.modules);
    let rows = [
        ("modules", s.modules, fom.module_names.join(", ")),
        ("object classes", s.object_classes, String::new()),
        ("attributes", s.attributes, String::new()),
        ("interaction classes", s.interaction_classes, String::new()),
        ("parameters", s.parameters, String::new()),
        ("dimensions", s.dimensions, String::new()),
        ("data types", s.data_types, String::new()),
    ];
    for (what, count, note) in rows {
        let line = format!("  {what:<20} {count:>6}  {note}");
        println!("{}", line.trim_end());
    }
    println!("(classes, attributes and data types include those the MIM defines)");
    if verbose {
        print!("{}", fom.tree());
    }
    Ok(())
}

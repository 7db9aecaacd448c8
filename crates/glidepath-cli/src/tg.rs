//! `glidepath tg`: the distributed target generator. By default the simulation server
//! and its processing nodes are threads of this process on the embedded transport;
//! with `--transport nats` the nodes are processes of this same program
//! (`--role node`), started by the server. Prints a status line per second and reads
//! operator controls from standard input (`pause`, `resume`, `step`, `stop`,
//! `rate HZ`, `speed F`, `CALLSIGN heading|altitude|speed|direct|resume ...`).
//! `glidepath bench tg` is here too: the update-rate tables of DASE's section VI.

use crate::tg_nodes::{node_failed, NodeProcess, ProcessRun, TwoHosts};
use std::io::BufRead;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use glidepath::{RtiConfig, TransportKind};
use glidepath_tg::bench::{self, BenchConfig, RateSummary, DASE_TABLES};
use glidepath_tg::model::Model;
use glidepath_tg::node::{run_node, NodeConfig};
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::runner::{self, Control, RunEnd, RunOptions, Status};
use glidepath_tg::scenario;
use glidepath_tg::server::{
    create_federation, Balance, LocalLayout, LocalRun, ServerConfig, SimulationServer,
};

/// The flags of `glidepath tg`.
#[derive(clap::Args, Debug)]
pub struct TgArgs {
    /// A built-in scenario (see --list) or a scenario file (TOML, scenarios/README.md).
    #[arg(long, default_value = "demo", value_name = "NAME|FILE")]
    scenario: String,
    /// List the built-in scenarios and exit.
    #[arg(long)]
    list: bool,
    /// Processing nodes.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    nodes: u32,
    /// Threads in each node's pool [default: this machine's cores / nodes, at least 1].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    threads: Option<u32>,
    /// The aircraft model: point-mass or stand-in.
    #[arg(long, default_value = "point-mass", value_name = "MODEL")]
    model: String,
    /// The stand-in model's fixed cost per aircraft step, microseconds of busy CPU.
    #[arg(long, default_value_t = 5.0, value_name = "MICROSECONDS")]
    stand_in_us: f64,
    /// Frames per second of wall time; 0 runs as fast as possible.
    #[arg(long, default_value_t = 60.0, value_name = "HZ")]
    rate: f64,
    /// Simulated seconds per wall second.
    #[arg(long, default_value_t = 1.0)]
    speed: f64,
    /// Wall seconds to run; 0 runs until `stop` [default: 10, or 0 with --web].
    #[arg(long)]
    seconds: Option<f64>,
    /// A performance file replacing data/aircraft-performance.csv (same layout).
    #[arg(long, value_name = "FILE")]
    performance: Option<PathBuf>,
    /// The transport: inproc (threads, the default) or nats (node processes)
    /// [default: $GLIDEPATH_TRANSPORT, else inproc].
    #[arg(long, value_name = "TRANSPORT")]
    transport: Option<String>,
    #[command(flatten)]
    nats: crate::nats_args::NatsArgs,
    /// The federation's name.
    #[arg(long, default_value = "glidepath-tg")]
    federation: String,
    /// `server` (the default: the whole target generator) or `node` (one processing
    /// node joining a running server's federation over NATS; the server starts these).
    #[arg(long, default_value = "server", value_name = "ROLE")]
    role: String,
    /// The node's name (`--role node`).
    #[arg(long, value_name = "NAME")]
    name: Option<String>,
    /// Failover: a node this many milliseconds later than the others with a frame is
    /// taken as lost and its aircraft continue on the others [default: off: the run
    /// fails after 10 s].
    #[arg(long, value_name = "MILLISECONDS")]
    failover_ms: Option<u64>,
    /// Leave aircraft where they are when a node falls behind the others [default:
    /// every 120 frames, a node whose compute time is over 25 % above the fastest
    /// node's (and over 2 ms a frame) gives aircraft to the others, so each node's
    /// share follows its speed].
    #[arg(long)]
    no_balance: bool,
    /// Serve the radar, pilot and control pages and the JSON API here
    /// (e.g. 127.0.0.1:8080; docs/web-api.md).
    #[cfg(feature = "web")]
    #[arg(long, value_name = "ADDR")]
    web: Option<std::net::SocketAddr>,
    /// The web's tokens, `ROLE=TOKEN[,ROLE=TOKEN...]` with roles pilot, controller
    /// and operator [default: $GLIDEPATH_WEB_TOKENS, else random ones, printed].
    #[cfg(feature = "web")]
    #[arg(long, value_name = "ROLE=TOKEN,...")]
    web_tokens: Option<String>,
    /// The most snapshots a second the simulation hands the web (each browser asks
    /// for its own rate within it).
    #[cfg(feature = "web")]
    #[arg(long, value_name = "HZ", default_value_t = 30.0, value_parser = web_rate)]
    web_rate: f64,
}

/// A snapshot rate: a number of hertz in (0, 1000].
#[cfg(feature = "web")]
fn web_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(hz) if hz > 0.0 && hz <= 1000.0 => Ok(hz),
        Ok(hz) => Err(format!("{hz} Hz is not in (0, 1000]")),
        Err(_) => Err(format!("`{text}` is not a number of hertz")),
    }
}

/// The model a flag names.
fn model(name: &str, stand_in_us: f64) -> anyhow::Result<Model> {
    match name {
        "point-mass" => Ok(Model::PointMass),
        "stand-in" if stand_in_us.is_finite() && stand_in_us >= 0.0 => Ok(Model::StandIn {
            cost: Duration::from_secs_f64(stand_in_us * 1e-6),
        }),
        "stand-in" => {
            bail!("--stand-in-us: {stand_in_us} is not a non-negative number of microseconds")
        }
        other => bail!("--model: `{other}` is not point-mass or stand-in"),
    }
}

fn default_threads(nodes: u32) -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get() as u32);
    (cores / nodes).max(1)
}

fn rti_config(
    transport: &Option<String>,
    nats: &crate::nats_args::NatsArgs,
) -> anyhow::Result<RtiConfig> {
    let mut config = RtiConfig::from_env()?;
    if let Some(t) = transport {
        config.apply_args(["--transport".to_string(), t.clone()])?;
    }
    nats.clone().apply(&mut config)?;
    Ok(config)
}

/// `glidepath tg`.
pub fn run(args: TgArgs) -> anyhow::Result<()> {
    if args.list {
        for (name, description) in scenario::builtin_names() {
            println!("{name:<14} {description}");
        }
        return Ok(());
    }
    let table = Arc::new(match &args.performance {
        Some(path) => PerformanceTable::from_path(path)?,
        None => PerformanceTable::builtin().clone(),
    });
    let model = model(&args.model, args.stand_in_us)?;
    let threads = args.threads.unwrap_or_else(|| default_threads(args.nodes)) as usize;
    let config = rti_config(&args.transport, &args.nats)?;
    if !(args.rate.is_finite() && args.rate >= 0.0) {
        bail!(
            "--rate: {} is not a rate in Hz (0 = as fast as possible)",
            args.rate
        );
    }
    if !(args.speed.is_finite() && args.speed > 0.0) {
        bail!("--speed: {} is not a positive speed factor", args.speed);
    }
    match args.role.as_str() {
        "node" => {
            if config.transport != TransportKind::Nats {
                bail!("--role node joins a server in another process: it needs --transport nats");
            }
            let name = args.name.clone().context("--role node needs --name")?;
            let rti = glidepath::Rti::from_config(&config)?;
            let mut node = NodeConfig::new(name, threads, model);
            node.performance = table;
            let report = run_node(&rti, &args.federation, node)?;
            crate::say(&format!(
                "{}: {} frames, {} aircraft, {:?}",
                args.name.unwrap_or_default(),
                report.frames,
                report.aircraft,
                report.stopped_by
            ));
            Ok(())
        }
        "server" => serve(&args, config, table, model, threads),
        other => bail!("--role: `{other}` is not server or node"),
    }
}

fn serve(
    args: &TgArgs,
    config: RtiConfig,
    table: Arc<PerformanceTable>,
    model: Model,
    threads: usize,
) -> anyhow::Result<()> {
    let scenario = scenario::load(&args.scenario, &table)?;
    let rti = glidepath::Rti::from_config(&config)?;
    let mut server_config = ServerConfig::new(args.nodes as usize);
    server_config.node_timeout = args.failover_ms.map(Duration::from_millis);
    server_config.balance = (!args.no_balance).then(Balance::default);
    println!(
        "scenario {} ({} aircraft): {} node(s) of {} thread(s), {} model, transport {}, {} Hz{}",
        scenario.name,
        scenario.aircraft.len(),
        args.nodes,
        threads,
        model.name(),
        rti.transport_name(),
        args.rate,
        if args.rate == 0.0 {
            " (as fast as possible)"
        } else {
            ""
        }
    );
    let (tx, rx) = crossbeam_channel::unbounded();
    let reader_tx = tx.clone();
    std::thread::spawn(move || {
        for (i, line) in std::io::stdin().lock().lines().enumerate() {
            let Ok(line) = line else { break };
            if line.trim().is_empty() {
                continue;
            }
            match Control::parse(&line) {
                Ok(c) => {
                    if reader_tx.send(c).is_err() {
                        break;
                    }
                }
                Err(e) => eprintln!("stdin:{}: {e}", i + 1),
            }
        }
    });
    let options = RunOptions {
        rate_hz: args.rate,
        speed: args.speed,
        seconds: seconds(args),
        status_every: Duration::from_secs(1),
    };
    let mut lost_reported = 0;
    let mut rebalances_reported = 0;
    #[cfg(feature = "web")]
    let web = start_web(
        args,
        &scenario,
        &table,
        tx.clone(),
        config.transport == TransportKind::Inproc,
    )?;
    let mut print = move |s: &Status, server: &mut SimulationServer| {
        let lost = server.lost_nodes();
        for node in &lost[lost_reported..] {
            let now_on = server.tracks().iter().filter(|t| t.node != *node).count();
            println!("node {node} lost: its aircraft continue on the other nodes ({now_on} aircraft flown)");
        }
        lost_reported = lost.len();
        if server.rebalances() > rebalances_reported {
            rebalances_reported = server.rebalances();
            let shares: Vec<String> = server
                .nodes()
                .iter()
                .map(|n| {
                    let flown = server.tracks().iter().filter(|t| t.node == *n).count();
                    format!("{n} {flown}")
                })
                .collect();
            println!(
                "{}: aircraft rebalanced ({})",
                server.last_rebalance().unwrap_or("rebalanced"),
                shares.join(", ")
            );
        }
        println!(
                        "t {:>6.1} s  frame {:>7}  sim {:>7.1} s  aircraft {:>6}  updates/frame {:>8.1}  rate {:>7.1} Hz  frame {:>7.3} ms (compute {:.3})  misses {}  jitter p50/p99/max {:.3}/{:.3}/{:.3} ms{}",
            s.elapsed_s, s.frame, s.sim_time_s, s.aircraft, s.updates_per_frame, s.rate_hz, s.frame_ms_mean, s.compute_ms_mean,
            s.deadline_misses, s.jitter_ms[0], s.jitter_ms[1], s.jitter_ms[2],
            if s.paused { "  (paused)" } else { "" }
        );
        server.take_acks().iter().for_each(print_ack);
    };
    #[cfg(feature = "web")]
    let (_web_server, web_observer) = match web {
        Some((s, o)) => (Some(s), Some(o)),
        None => (None, None),
    };
    let mut observer = Observers {
        print: runner::OnStatus(&mut print),
        #[cfg(feature = "web")]
        web: web_observer,
    };
    if config.transport == TransportKind::Inproc {
        let mut layout = LocalLayout::new(args.nodes as usize, threads, model);
        layout.performance = table;
        let mut tg = LocalRun::start(
            &rti,
            &args.federation,
            scenario,
            &layout,
            server_config.clone(),
        )?;
        // The operator may load another scenario (`load NAME`, or the web's control):
        // this run ends, the next starts from the named scenario's beginning.
        let mut status;
        loop {
            let end;
            (status, end) = runner::run_until(&mut tg.server, &rx, options.clone(), &mut observer)?;
            let RunEnd::Load(name) = end else { break };
            let next = match glidepath_tg::scenario::load(&name, &layout.performance) {
                Ok(next) => next,
                Err(e) => {
                    eprintln!("load {name}: {e}; the current scenario goes on");
                    continue;
                }
            };
            print_final(&tg.server, &status);
            tg.finish()?;
            println!(
                "scenario {}: {} aircraft, from its start",
                next.name,
                next.aircraft.len()
            );
            observer.load(&next, &layout.performance);
            tg = LocalRun::start(&rti, &args.federation, next, &layout, server_config.clone())?;
        }
        observer.finish();
        print_final(&tg.server, &status);
        tg.finish()?;
        drop(tx);
        return Ok(());
    }
    // Over NATS: host the executive when none answers, create the federation, start the
    // node processes, and serve.
    let _executive = glidepath::ensure_executive(&config)?;
    create_federation(&rti, &args.federation)?;
    let node = NodeProcess {
        config: &config,
        federation: &args.federation,
        threads,
        model: &args.model,
        stand_in_us: args.stand_in_us,
        performance: args.performance.as_deref(),
        hosts: &[],
    };
    let mut children = node.start_all(args.nodes as usize, true)?;
    let mut server = SimulationServer::start(&rti, &args.federation, scenario, server_config)?;
    // The node processes were started for this scenario: another cannot be loaded.
    let mut status;
    loop {
        let end;
        (status, end) = runner::run_until(&mut server, &rx, options.clone(), &mut observer)?;
        let RunEnd::Load(name) = end else { break };
        eprintln!(
            "load {name}: over NATS the node processes fly the scenario they were started for; \
             run glidepath tg on the inproc transport to switch scenarios (this one goes on)"
        );
    }
    observer.finish();
    print_final(&server, &status);
    let lost: Vec<String> = server.lost_nodes().iter().map(|n| n.to_string()).collect();
    server.stop()?;
    for (k, child) in children.0.iter_mut().enumerate() {
        let status = child.wait()?;
        if !status.success() && !lost.contains(&format!("tg-node-{}", k + 1)) {
            bail!("node process tg-node-{} ended with {status}", k + 1);
        }
    }
    children.0.clear();
    if let Err(e) = rti.destroy_federation_execution(&args.federation) {
        // A lost node never resigned: the federation stays until the executive ends.
        if lost.is_empty() {
            return Err(e.into());
        }
        eprintln!("federation {} left in place: {e}", args.federation);
    }
    Ok(())
}

fn seconds(args: &TgArgs) -> Option<f64> {
    #[cfg(feature = "web")]
    let default = if args.web.is_some() { 0.0 } else { 10.0 };
    #[cfg(not(feature = "web"))]
    let default = 10.0;
    let s = args.seconds.unwrap_or(default);
    (s > 0.0).then_some(s)
}

fn print_ack(ack: &glidepath_tg::command::CommandAck) {
    match &ack.outcome {
        Ok(()) => println!(
            "command {} to {}: applied at frame {}",
            ack.id, ack.callsign, ack.frame
        ),
        Err(e) => println!(
            "command {} to {}: refused at frame {}: {e}",
            ack.id, ack.callsign, ack.frame
        ),
    }
}

/// The status printer and, with `--web`, the web's observer.
struct Observers<P> {
    print: P,
    #[cfg(feature = "web")]
    web: Option<glidepath_web::TgObserver>,
}

impl<P: runner::Observer> Observers<P> {
    /// The run goes on with `scenario`.
    fn load(&mut self, scenario: &glidepath_tg::scenario::Scenario, table: &PerformanceTable) {
        #[cfg(feature = "web")]
        if let Some(w) = &mut self.web {
            w.load(glidepath_web::Catalog::new(scenario, table));
        }
        let _ = (scenario, table);
    }

    fn finish(&mut self) {
        #[cfg(feature = "web")]
        if let Some(w) = &mut self.web {
            w.finish();
        }
    }
}

impl<P: runner::Observer> runner::Observer for Observers<P> {
    fn status(&mut self, status: &Status, server: &mut SimulationServer) {
        #[cfg(feature = "web")]
        if let Some(w) = &mut self.web {
            w.on_status(status);
        }
        self.print.status(status, server);
    }

    fn tick(
        &mut self,
        server: &mut SimulationServer,
        frame: Option<&glidepath_tg::server::FrameReport>,
        sim_time_s: f64,
    ) {
        let _ = (&server, frame, sim_time_s);
        #[cfg(feature = "web")]
        if let Some(w) = &mut self.web {
            // The web takes the acknowledgements to answer its callers; print them here.
            w.on_tick(server, sim_time_s).iter().for_each(print_ack);
        }
    }
}

/// Starts the web server when `--web` asks for it, and says where and with which
/// tokens.
#[cfg(feature = "web")]
fn start_web(
    args: &TgArgs,
    scenario: &glidepath_tg::scenario::Scenario,
    table: &PerformanceTable,
    controls: crossbeam_channel::Sender<Control>,
    can_load: bool,
) -> anyhow::Result<Option<(glidepath_web::WebServer, glidepath_web::TgObserver)>> {
    let Some(addr) = args.web else {
        return Ok(None);
    };
    let mut config = glidepath_web::WebConfig::new(addr);
    config.max_rate_hz = args.web_rate;
    // The operator may switch to a built-in scenario where this process runs the
    // nodes itself (over NATS the node processes are started for one scenario).
    if can_load {
        config.scenarios = scenario::builtin_names()
            .into_iter()
            .map(|(name, description)| (name.to_string(), description))
            .collect();
    }
    let env = std::env::var("GLIDEPATH_WEB_TOKENS").ok();
    if let Some(spec) = args.web_tokens.as_ref().or(env.as_ref()) {
        config.add_tokens(spec)?;
    }
    let given = !config.tokens.is_empty();
    let catalog = glidepath_web::Catalog::new(scenario, table);
    let (server, observer) = glidepath_web::start(config, catalog, controls)?;
    println!("web: radar at http://{}/", server.addr());
    for (role, token) in server.tokens() {
        let page = match role {
            glidepath_web::Role::Operator => "control",
            glidepath_web::Role::Pilot => "pilot",
            glidepath_web::Role::Controller => "controller",
            glidepath_web::Role::Viewer => "",
        };
        if given {
            println!(
                "web: {} page http://{}/{page} (token as given)",
                role.name(),
                server.addr()
            );
        } else {
            println!(
                "web: {} page http://{}/{page}?token={token}",
                role.name(),
                server.addr()
            );
        }
    }
    Ok(Some((server, observer)))
}

/// The last line: how many aircraft have a state of the last frame.
fn print_final(server: &SimulationServer, status: &Status) {
    let t = server.tracks();
    let latest = t.iter().map(|t| t.track_time_us).max().unwrap_or(0);
    let current = t.iter().filter(|t| t.track_time_us == latest).count();
    println!(
        "final frame {}: {} aircraft, {} with a state of the last frame",
        server.frame(),
        t.len(),
        current
    );
    if status.paced_frames > 0 {
        let [p50, p99, max] = status.run_jitter_ms;
        println!(
            "paced: {} deadline misses; frame-start jitter over {} frames to the last status \
             p50/p99/max {p50:.3}/{p99:.3}/{max:.3} ms",
            status.deadline_misses, status.paced_frames
        );
    }
}

/// The flags of `glidepath bench tg` (parsed from `glidepath bench`'s own).
pub struct TgBenchArgs {
    /// Aircraft counts.
    pub aircraft: Vec<usize>,
    /// Node counts.
    pub nodes: Vec<usize>,
    /// Threads per node (None: cores / nodes).
    pub threads: Option<usize>,
    /// Measured seconds per run.
    pub seconds: f64,
    /// Runs per configuration.
    pub runs: usize,
    /// Model name.
    pub model: String,
    /// Stand-in cost.
    pub stand_in_us: f64,
    /// JSON output.
    pub json: Option<PathBuf>,
    /// `inproc`: nodes as threads of this process; `nats`: nodes as processes of
    /// their own, as DASE measured them, on this server.
    pub transport: TransportKind,
    /// The NATS server and its credentials (`--transport nats`).
    pub config: RtiConfig,
    /// 1: this host; 2: two network namespaces joined by a veth pair, the NATS
    /// server and the simulation server on the first, nodes on both
    /// ([`crate::tg_nodes::TwoHosts`]).
    pub hosts: usize,
}

/// One configuration's JSON row.
#[derive(serde::Serialize)]
struct Row {
    suite: &'static str,
    model: &'static str,
    stand_in_us: Option<f64>,
    aircraft: usize,
    nodes: usize,
    threads_per_node: usize,
    transport: &'static str,
    hosts: usize,
    seconds: f64,
    update_rate_hz: f64,
    sd_hz: f64,
    max_hz: f64,
    min_hz: f64,
    per_aircraft_us: f64,
    runs: Vec<RateSummary>,
    dase_update_rate_hz: Option<f64>,
}

/// `glidepath bench tg`.
pub fn bench(mut args: TgBenchArgs) -> anyhow::Result<()> {
    if args.hosts < 2 {
        return bench_on(args, &[]);
    }
    let nats_server = glidepath::backend::nats::find_nats_server()?;
    let hosts = TwoHosts::start(&nats_server)?;
    args.config.nats_url = hosts.nats_url();
    let namespaces = hosts.node_hosts();
    println!(
        "two hosts: the NATS server and the simulation server on {}, nodes on {} in turn",
        namespaces[1],
        namespaces.join(" and ")
    );
    hosts.inside(move || bench_on(args, &namespaces))
}

/// `glidepath bench tg` with the nodes in the network namespaces `hosts` in turn
/// (none: this host).
fn bench_on(args: TgBenchArgs, hosts: &[String]) -> anyhow::Result<()> {
    let model = model(&args.model, args.stand_in_us)?;
    // Over NATS the node processes and the server need an executive: this process
    // hosts one when none answers.
    let _executive = match args.transport {
        TransportKind::Nats => glidepath::ensure_executive(&args.config)?,
        _ => None,
    };
    let mut rows = Vec::new();
    for &aircraft in &args.aircraft {
        for &nodes in &args.nodes {
            let threads = args
                .threads
                .unwrap_or_else(|| default_threads(nodes as u32) as usize);
            let config = BenchConfig {
                aircraft,
                nodes,
                threads_per_node: threads,
                seconds: args.seconds,
                runs: args.runs,
                model,
                window: Duration::from_millis(500),
                warmup_frames: 10,
                seed: 1,
            };
            println!(
                "\n{aircraft} aircraft, {nodes} node(s) of {threads} thread(s), {} model, {}",
                model.name(),
                if !hosts.is_empty() {
                    "nodes as processes over NATS, on two hosts"
                } else if args.transport == TransportKind::Nats {
                    "nodes as processes over NATS"
                } else {
                    "inproc"
                }
            );
            println!(
                "{:<10} {:>12} {:>10} {:>10} {:>10} {:>8} {:>11} {:>11}",
                "run",
                "average Hz",
                "sd Hz",
                "max Hz",
                "min Hz",
                "frames",
                "compute ms",
                "publish ms"
            );
            let line = |label: &str, r: &RateSummary| {
                println!(
                    "{label:<10} {:>12.3} {:>10.3} {:>10.3} {:>10.3} {:>8} {:>11.3} {:>11.3}",
                    r.update_rate_hz,
                    r.sd_hz,
                    r.max_hz,
                    r.min_hz,
                    r.frames,
                    r.compute_ms_mean,
                    r.publish_ms_mean
                )
            };
            let each = |i: usize, r: &RateSummary| line(&format!("run {}", i + 1), r);
            let runs = if args.transport == TransportKind::Nats {
                let rti = glidepath::Rti::from_config(&args.config)?;
                bench::run_with(
                    &config,
                    |run, scenario| {
                        let federation = format!("tg-bench-{run}");
                        create_federation(&rti, &federation)?;
                        let node = NodeProcess {
                            config: &args.config,
                            federation: &federation,
                            threads,
                            model: &args.model,
                            stand_in_us: args.stand_in_us,
                            performance: None,
                            hosts,
                        };
                        let children = node
                            .start_all(nodes, false)
                            .map_err(|e| node_failed(0, format!("{e:#}")))?;
                        let server = SimulationServer::start(
                            &rti,
                            &federation,
                            scenario,
                            ServerConfig::new(nodes),
                        )?;
                        Ok(Box::new(ProcessRun {
                            server: Some(server),
                            children,
                            rti: rti.clone(),
                            federation,
                        }) as Box<dyn bench::BenchRun>)
                    },
                    each,
                )?
            } else {
                bench::run(glidepath::Rti::inproc, &config, each)?
            };
            let all = bench::all_runs(&runs);
            line("all runs", &all);
            let dase = DASE_TABLES
                .iter()
                .find(|(a, n, _)| *a == aircraft && *n == nodes)
                .map(|t| t.2);
            if let Some([avg, sd, max, min]) = dase {
                println!("{:<10} {avg:>12.3} {sd:>10.3} {max:>10.3} {min:>10.3}   (DASE, sleep stand-in, 72 threads)", "DASE");
            }
            rows.push(Row {
                suite: "tg",
                model: model.name(),
                stand_in_us: matches!(model, Model::StandIn { .. }).then_some(args.stand_in_us),
                aircraft,
                nodes,
                threads_per_node: threads,
                transport: args.transport.name(),
                hosts: args.hosts,
                seconds: args.seconds,
                update_rate_hz: all.update_rate_hz,
                sd_hz: all.sd_hz,
                max_hz: all.max_hz,
                min_hz: all.min_hz,
                per_aircraft_us: 1e6 / (all.update_rate_hz * aircraft as f64),
                runs,
                dase_update_rate_hz: dase.map(|d| d[0]),
            });
        }
    }
    if let Some(path) = &args.json {
        let text = if rows.len() == 1 {
            serde_json::to_string_pretty(&rows[0])?
        } else {
            serde_json::to_string_pretty(&rows)?
        };
        std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
        println!("results written to {}", path.display());
    }
    Ok(())
}

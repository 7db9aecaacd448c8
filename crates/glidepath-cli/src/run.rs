//! `glidepath run LAYOUT`: runs an ATM TestBed layout (issue 5) and prints and writes
//! the memorandum's tables and figures; `glidepath matrix LAYOUT`: the experiment
//! matrix of its Tables 3.2–3.3 re-run on glidepath's backends.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{bail, Context};
use glidepath::{RtiConfig, TransportKind};
use glidepath_atm::layout::{format_rfc3339, load_layout, parse_rfc3339};
use glidepath_atm::report::{matrix_table, RunReport};
use glidepath_atm::run::{
    frame, run, run_block_process, BlockLaunch, Codec, Deployment, Launcher, RunOptions, MAX_RUN_S,
};

use crate::{MessagingArgs, TransportArg};

/// Options of `glidepath run` (and, for what they share, `glidepath matrix`).
#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The layout file (TOML): blocks and links, as layouts/atm-testbed-day.toml.
    #[arg(value_name = "LAYOUT")]
    layout: PathBuf,
    /// The transport [default: $GLIDEPATH_TRANSPORT, else inproc].
    #[arg(long, value_enum)]
    transport: Option<TransportArg>,
    #[command(flatten)]
    nats: crate::nats_args::NatsArgs,
    /// Run only the first H hours from second 0 (a fraction is fine; at most a week)
    /// [default: a whole day with generated traffic, the data's span with recorded
    /// sources only].
    #[arg(long, value_name = "H")]
    hours: Option<f64>,
    /// Simulated second 0, an RFC 3339 time with an offset (2021-10-07T06:00:00Z)
    /// [default: the layout's day_start, else its earliest traffic_start, else the
    /// first row of its recorded data].
    #[arg(long, value_name = "TIME")]
    day_start: Option<String>,
    /// Scale the generated traffic (1.0 is the calibrated day of Table 4.2).
    #[arg(long, value_name = "FACTOR")]
    density: Option<f64>,
    /// Where the report goes (report.json, report.md, figures).
    #[arg(long, default_value = "report", value_name = "DIR")]
    report: PathBuf,
    /// How track messages are serialised.
    #[arg(long, default_value = "json", value_name = "json|binary")]
    codec: String,
    /// The run's name, written into every message (`meta.run`).
    #[arg(long, default_value = "1A")]
    run_name: String,
    /// Keep every message in JetStream (`--transport nats` only): none or jetstream
    /// [default: $GLIDEPATH_PERSISTENCE, else none].
    #[arg(long, value_name = "MODE")]
    persistence: Option<String>,
    /// How the blocks' federates wait for traffic: park, spin, spin-park or
    /// spin-park:MICROS.
    #[arg(long, default_value = "park", value_name = "STRATEGY")]
    wait: String,
    /// Run every block as a process of its own (needs `--transport nats`); this
    /// process keeps the simulation manager. `glidepath matrix` then runs its NATS
    /// rows this way and its inproc rows as threads.
    #[arg(long)]
    processes: bool,
    /// Flow control by credit: at most N messages published to the monitor and not
    /// yet received by it (blocks as threads). Bounds what waits in queues, so the
    /// latency is the hand-over's, not the lookahead's backlog.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    credit: Option<u64>,
    /// Internal, used by `--processes`: run only this block, joined to
    /// `--federation`, and write its outcome to `--outcome`.
    #[arg(
        long,
        hide = true,
        value_name = "NAME",
        requires = "federation",
        requires = "outcome"
    )]
    block: Option<String>,
    /// The federation's name (default: one made up per run, `atm-PID-N-RUN`).
    /// External blocks (`kind = "external"`) join it by this name.
    #[arg(long, value_name = "NAME")]
    federation: Option<String>,
    #[arg(long, hide = true, value_name = "FILE")]
    outcome: Option<PathBuf>,
    /// Internal, used by `--processes`: end when standard input closes (the manager
    /// process has ended), so no block outlives a killed run.
    #[arg(long, hide = true)]
    exit_with_parent: bool,
    #[command(flatten)]
    messaging: MessagingArgs,
    /// Serve the run monitoring portal here while the run goes on (e.g.
    /// 127.0.0.1:8090): the state of the seven, per-block counts, messages per
    /// second, latency and loss, then the report's tables and figures; it stays up
    /// after the run until Ctrl-C.
    #[cfg(feature = "web")]
    #[arg(long, value_name = "ADDR")]
    web: Option<std::net::SocketAddr>,
    /// The portal's tokens, `ROLE=TOKEN[,...]` [default: $GLIDEPATH_WEB_TOKENS].
    #[cfg(feature = "web")]
    #[arg(long, value_name = "TOKENS", requires = "web")]
    web_tokens: Option<String>,
}

fn config_of(args: &mut RunArgs) -> anyhow::Result<RtiConfig> {
    let mut config = RtiConfig::from_env()?;
    if let Some(t) = args.transport {
        config.transport = t.kind();
    }
    std::mem::take(&mut args.nats).apply(&mut config)?;
    if let Some(mode) = args.persistence.take() {
        config.apply_args(["--persistence".to_string(), mode])?;
    }
    let messaging = std::mem::take(&mut args.messaging);
    messaging.apply(&mut config)?;
    Ok(config)
}

fn check_hours(hours: Option<f64>) -> anyhow::Result<()> {
    let most = f64::from(MAX_RUN_S) / 3600.0;
    if let Some(h) = hours {
        if !(h.is_finite() && h > 0.0 && h <= most) {
            bail!("--hours {h}: expected a number of hours in (0, {most}]");
        }
    }
    Ok(())
}

/// Starts a block process: this same program, `glidepath run LAYOUT --block NAME`,
/// with the run's options written out as flags.
fn launcher(layout: PathBuf, key_file: Option<String>) -> anyhow::Result<Launcher> {
    let program = std::env::current_exe().context("finding this program to start blocks")?;
    Ok(Arc::new(move |launch: &BlockLaunch<'_>| {
        let o = launch.options;
        let mut command = std::process::Command::new(&program);
        command
            .arg("run")
            .arg(&layout)
            .args(["--block", launch.block, "--federation", launch.federation])
            .arg("--outcome")
            .arg(launch.outcome)
            .arg("--exit-with-parent")
            .args(["--codec", o.codec.name(), "--run-name", &o.run_name])
            .args(["--wait".to_string(), o.wait.to_string()])
            .args(o.config.to_args());
        o.config.configure_child(&mut command);
        if let Some(h) = o.hours {
            command.args(["--hours".to_string(), h.to_string()]);
        }
        if let Some(t) = o.day_start {
            command.args(["--day-start".to_string(), format_rfc3339(t)]);
        }
        if let Some(d) = o.density {
            command.args(["--density".to_string(), d.to_string()]);
        }
        // The key travels as the file it came from, never on a command line.
        if let Some(k) = &key_file {
            command.args(["--key-file", k]);
        }
        command
    }))
}

fn run_options(args: &mut RunArgs) -> anyhow::Result<RunOptions> {
    check_hours(args.hours)?;
    if let Some(d) = args.density {
        if !(d.is_finite() && d > 0.0) {
            bail!("--density {d}: expected a positive number");
        }
    }
    let codec: Codec = args
        .codec
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--codec: {e}"))?;
    let deployment = if args.processes {
        Deployment::Processes(launcher(
            args.layout.clone(),
            args.messaging.key_file.clone(),
        )?)
    } else {
        Deployment::Threads
    };
    let day_start = args
        .day_start
        .as_deref()
        .map(parse_rfc3339)
        .transpose()
        .map_err(|e| anyhow::anyhow!("--day-start: {e}"))?;
    Ok(RunOptions {
        config: config_of(args)?,
        codec,
        day_start,
        hours: args.hours,
        density: args.density,
        run_name: args.run_name.clone(),
        progress: std::io::IsTerminal::is_terminal(&std::io::stderr()),
        wait: args
            .wait
            .parse()
            .map_err(|e: String| anyhow::anyhow!("--wait: {e}"))?,
        deployment,
        live: None,
        credit: args.credit,
        federation: args.federation.clone(),
    })
}

fn print_and_write(report: &RunReport, dir: &std::path::Path) -> anyhow::Result<()> {
    println!("{}", report.tables());
    let written = report
        .write(dir)
        .with_context(|| format!("writing the report to {}", dir.display()))?;
    println!(
        "report written to {} ({} files)",
        dir.display(),
        written.len()
    );
    Ok(())
}

/// `glidepath run`.
pub fn run_layout(mut args: RunArgs) -> anyhow::Result<()> {
    let layout = load_layout(&args.layout)?;
    let mut opts = run_options(&mut args)?;
    if let Some(block) = args.block.take() {
        return run_one_block(&layout, &opts, &block, &args);
    }
    // Second 0 and the run's length, decided (from the data when the layout plays
    // recorded sources only) and said before anything runs.
    let frame = frame(&layout, &opts)?;
    eprintln!(
        "glidepath run: {} on {}, codec {}\n  {}",
        args.layout.display(),
        opts.config.transport.name(),
        opts.codec.name(),
        frame.describe().replace('\n', "\n  ")
    );
    opts.day_start = Some(frame.day_start);
    opts.hours = Some(f64::from(frame.end_s) / 3600.0);
    #[cfg(feature = "web")]
    let portal = match args.web {
        Some(addr) => {
            // Before any thread starts, so that only the wait below takes them.
            let signals = glidepath_netlab::lab::block_termination_signals()?;
            let live = Arc::new(glidepath_atm::run::Live::new());
            opts.live = Some(live.clone());
            let server = crate::atm_web::start_portal(
                addr,
                args.web_tokens.as_ref(),
                live.clone(),
                args.layout.clone(),
            )?;
            Some((server, live, signals))
        }
        None => None,
    };
    let result = run(&layout, &opts);
    #[cfg(feature = "web")]
    if let Some((_server, live, signals)) = portal {
        if let Ok(report) = &result {
            print_and_write(report, &args.report)?;
            live.report_written(&args.report.display().to_string());
        }
        if let Err(e) = &result {
            eprintln!("glidepath run: {e}");
        }
        println!("web: the run has ended; the portal stays up until Ctrl-C");
        let signal = glidepath_netlab::lab::wait_for_signal(&signals);
        crate::say(&format!(
            "glidepath run: signal {signal}, stopping the portal"
        ));
        return check_report(result?);
    }
    let report = result?;
    print_and_write(&report, &args.report)?;
    check_report(report)
}

/// A run that lost or mangled messages fails.
fn check_report(report: RunReport) -> anyhow::Result<()> {
    if report.lost > 0 || report.malformed > 0 {
        bail!(
            "{} message(s) lost and {} malformed of {} published",
            report.lost,
            report.malformed,
            report.published
        );
    }
    Ok(())
}

/// `glidepath run LAYOUT --block NAME --federation F`: one block of a run whose
/// manager is another process.
fn run_one_block(
    layout: &glidepath_atm::layout::Layout,
    opts: &RunOptions,
    block: &str,
    args: &RunArgs,
) -> anyhow::Result<()> {
    if args.exit_with_parent {
        // The manager holds our standard input open; end-of-file means it is gone.
        std::thread::spawn(|| {
            let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
            crate::say("glidepath run: the manager process has ended; this block stops");
            std::process::exit(3);
        });
    }
    let federation = args
        .federation
        .as_deref()
        .context("--block needs --federation")?;
    let outcome = args.outcome.as_deref().context("--block needs --outcome")?;
    match run_block_process(layout, opts, block, federation, outcome) {
        Ok(()) => Ok(()),
        // The manager reports the failure, naming this block: saying it here too would
        // read as a second failure.
        Err(_) if outcome.exists() => std::process::exit(1),
        Err(e) => Err(e.into()),
    }
}

/// `glidepath matrix`: inproc, nats, nats with JetStream, each with compression off
/// and on (lz4), then one side-by-side table next to the memorandum's runs.
pub fn run_matrix(mut args: RunArgs) -> anyhow::Result<()> {
    #[cfg(feature = "web")]
    if args.web.is_some() {
        bail!("--web: the portal shows one run (glidepath run LAYOUT --web ADDR), not a matrix");
    }
    let layout = load_layout(&args.layout)?;
    let base = run_options(&mut args)?;
    let mut reports = Vec::new();
    // 1C: in process with a credit window of one message, the configuration that
    // beats the memorandum's 1A on execution time and mean latency at once.
    let rows: [(&str, TransportKind, &str, &str); 7] = [
        ("1A", TransportKind::Inproc, "none", "none"),
        ("1C", TransportKind::Inproc, "none", "none"),
        ("1B", TransportKind::Inproc, "lz4", "none"),
        ("4A", TransportKind::Nats, "none", "none"),
        ("4B", TransportKind::Nats, "lz4", "none"),
        ("4C", TransportKind::Nats, "none", "jetstream"),
        ("4D", TransportKind::Nats, "lz4", "jetstream"),
    ];
    for (name, transport, compression, persistence) in rows {
        let mut opts = base.clone();
        opts.run_name = name.to_string();
        opts.config.transport = transport;
        if name == "1C" {
            opts.credit = Some(1);
        }
        if transport == TransportKind::Inproc {
            // inproc cannot cross a process boundary: its rows run blocks as threads.
            opts.deployment = Deployment::Threads;
        }
        opts.config
            .apply_args(["--compression".to_string(), compression.to_string()])?;
        if transport == TransportKind::Nats {
            opts.config
                .apply_args(["--persistence".to_string(), persistence.to_string()])?;
        }
        eprintln!(
            "matrix: run {name}: {}, compression {compression}, persistence {persistence}",
            transport.name()
        );
        let report = run(&layout, &opts).with_context(|| format!("run {name}"))?;
        let dir = args.report.join(name);
        report
            .write(&dir)
            .with_context(|| format!("writing {}", dir.display()))?;
        reports.push(report);
    }
    let table = matrix_table(&reports);
    println!("{table}");
    std::fs::create_dir_all(&args.report)?;
    std::fs::write(args.report.join("matrix.md"), &table)?;
    println!(
        "matrix written to {}",
        args.report.join("matrix.md").display()
    );
    Ok(())
}

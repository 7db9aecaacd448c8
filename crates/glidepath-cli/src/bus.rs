//! `glidepath bus ...`: the formation-flying testbed's bus from the command line.
//! `window` runs the 10 Hz soft real-time check of the paper's section II.C.1
//! (`glidepath_bench::bus_window`) and prints how many truth updates each consumer
//! had on time, early and late, with the distribution of arrival minus nominal time.
//! `bridge CONFIG` forwards between the bus and plain NATS in JSON
//! (`glidepath::bus::bridge`), routes read from a TOML file (`bridge_config.rs`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Subcommand;
use glidepath::bus::{Encoding, ServiceLevel};
use glidepath::{RtiConfig, TransportKind};
use glidepath_bench::bus_window::{self, WindowOptions, WindowReport};

use crate::nats_args::NatsArgs;
use crate::TransportArg;

#[derive(Subcommand, Debug)]
pub(crate) enum BusCommand {
    /// The 10 Hz soft real-time check: a truth publisher sends one update per period,
    /// each stamped with the instant it is for; N consumers count the updates that
    /// arrive within the window (20 ms early to 80 ms late by default), early, late
    /// or never; optionally under background load.
    Window(WindowArgs),
    /// Forward between the bus and plain NATS subjects carrying JSON (routes in a
    /// TOML file, e.g. examples/bus/bridge.toml), so any NATS client can publish to
    /// and read from the bus; prints what it forwarded and refused.
    Bridge(crate::bridge_config::BridgeArgs),
}

#[derive(clap::Args, Debug)]
pub(crate) struct WindowArgs {
    /// The transport [default: inproc].
    #[arg(long, value_enum)]
    transport: Option<TransportArg>,
    #[command(flatten)]
    nats: NatsArgs,
    /// Consumers, each a connection on a thread of its own.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1000))]
    consumers: u32,
    /// How long the publisher sends, in seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    seconds: f64,
    /// Truth updates per second.
    #[arg(long, default_value_t = 10.0, value_name = "HZ")]
    rate_hz: f64,
    /// How long before its nominal time the publisher sends each update, in ms.
    #[arg(long, default_value_t = 0.0, value_name = "MS")]
    lead_ms: f64,
    /// An update arriving more than this before its nominal time is early, in ms.
    #[arg(long, default_value_t = 20.0, value_name = "MS")]
    early_ms: f64,
    /// An update arriving more than this after its nominal time is late, in ms.
    #[arg(long, default_value_t = 80.0, value_name = "MS")]
    late_ms: f64,
    /// The truth updates' service level: unreliable, reliable, fifo, causal, agreed or safe.
    #[arg(long, default_value = "agreed", value_name = "LEVEL")]
    service: String,
    /// The message encoding: xml or binary.
    #[arg(long, default_value = "xml", value_name = "ENCODING")]
    encoding: String,
    /// Background load: threads that keep a core busy for the whole run.
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=256))]
    load_threads: u32,
    /// Background load: messages per second from a second publisher in the same group.
    #[arg(long, default_value_t = 0, value_name = "PER_SECOND")]
    load_rate: u64,
    /// Also write the report as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

pub(crate) fn run(command: BusCommand) -> anyhow::Result<()> {
    match command {
        BusCommand::Window(args) => window(args),
        BusCommand::Bridge(args) => crate::bridge_config::run(args),
    }
}

/// A duration in milliseconds from a flag, checked.
fn millis(flag: &str, ms: f64, upto: f64) -> anyhow::Result<Duration> {
    anyhow::ensure!(
        ms.is_finite() && (0.0..=upto).contains(&ms),
        "{flag} {ms} is not a time between 0 and {upto} ms"
    );
    Ok(Duration::from_secs_f64(ms / 1e3))
}

fn options(args: WindowArgs) -> anyhow::Result<(WindowOptions, Option<PathBuf>)> {
    let mut config = RtiConfig::default();
    args.nats.apply(&mut config)?;
    let transport = args
        .transport
        .map_or(TransportKind::Inproc, TransportArg::kind);
    anyhow::ensure!(
        args.seconds.is_finite() && args.seconds > 0.0 && args.seconds <= 86_400.0,
        "--seconds {} is not a duration between 0 and 86400 s",
        args.seconds
    );
    anyhow::ensure!(
        args.rate_hz.is_finite() && args.rate_hz > 0.0 && args.rate_hz <= 10_000.0,
        "--rate-hz {} is not a rate between 0 and 10000",
        args.rate_hz
    );
    let level: ServiceLevel = args
        .service
        .parse()
        .map_err(|e| anyhow::anyhow!("--service: {e}"))?;
    let encoding: Encoding = args
        .encoding
        .parse()
        .map_err(|e| anyhow::anyhow!("--encoding: {e}"))?;
    Ok((
        WindowOptions {
            transport,
            nats_url: config.nats_url.clone(),
            nats_security: config.nats_security.clone(),
            consumers: args.consumers as usize,
            duration: Duration::from_secs_f64(args.seconds),
            rate_hz: args.rate_hz,
            lead: millis("--lead-ms", args.lead_ms, 60_000.0)?,
            early: millis("--early-ms", args.early_ms, 60_000.0)?,
            late: millis("--late-ms", args.late_ms, 60_000.0)?,
            level,
            encoding,
            load_threads: args.load_threads as usize,
            load_rate: args.load_rate,
        },
        args.json,
    ))
}

fn window(args: WindowArgs) -> anyhow::Result<()> {
    let (opts, json) = options(args)?;
    crate::say(&format!(
        "bus window: {} consumer(s), {} Hz for {:.1} s over {} ({}, {}), window -{:.0}/+{:.0} ms",
        opts.consumers,
        opts.rate_hz,
        opts.duration.as_secs_f64(),
        opts.transport.name(),
        opts.level.name(),
        opts.encoding.name(),
        opts.early.as_secs_f64() * 1e3,
        opts.late.as_secs_f64() * 1e3,
    ));
    let report = bus_window::run(&opts)?;
    print_report(&report);
    if let Some(path) = json {
        std::fs::write(&path, serde_json::to_string_pretty(&report)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(())
}

fn print_report(r: &WindowReport) {
    println!(
        "{:<12} {:>8} {:>8} {:>6} {:>6} {:>6} {:>9} {:>9} {:>9} {:>9}",
        "consumer",
        "received",
        "on time",
        "early",
        "late",
        "lost",
        "min ms",
        "p50 ms",
        "p99 ms",
        "max ms"
    );
    for c in &r.consumers {
        let (min, p50, p99, max) = c
            .offset_ms
            .map_or((f64::NAN, f64::NAN, f64::NAN, f64::NAN), |s| {
                (s.min, s.p50, s.p99, s.max)
            });
        println!(
            "{:<12} {:>8} {:>8} {:>6} {:>6} {:>6} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            c.name, c.received, c.on_time, c.early, c.late, c.lost, min, p50, p99, max
        );
    }
    let (on_time, early, late, lost) = r.totals();
    let expected = r.sent * r.consumers.len() as u64;
    println!(
        "{} updates of {} B sent; {on_time} of {expected} deliveries on time ({:.2} %), {early} early, {late} late, {lost} lost",
        r.sent,
        r.size_bytes,
        100.0 * on_time as f64 / expected.max(1) as f64
    );
    if let Some(lag) = r.publisher_lag_ms {
        println!(
            "publisher's own lag behind its schedule: p50 {:.3} ms, p99 {:.3} ms, max {:.3} ms",
            lag.p50, lag.p99, lag.max
        );
    }
    if r.load_threads > 0 || r.load_sent > 0 {
        println!(
            "background load: {} spinning thread(s), {} background messages",
            r.load_threads, r.load_sent
        );
    }
}

//! `glidepath netlab`: the network laboratory (Linux, root). Without a subcommand it
//! builds two hosts joined by an emulated link, reruns the JAXA report's experiments
//! across it (the quick grid, or the report's ranges with `--full`) and prints the
//! tables; `--json F` writes everything, `--out DIR` the figures and tables.
//! `netlab cleanup` removes laboratory namespaces left behind; `netlab peer` is one
//! benchmark federate, started by the laboratory inside a host.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use glidepath_netlab::experiment::{ExchangeSpec, LinkConfig, Shaper, Testbed};
use glidepath_netlab::grid::{self, Grid};
use glidepath_netlab::lab::Duplex;
use glidepath_netlab::peer::{self, Mode, Order, PeerOptions, Role};
use glidepath_netlab::{lab, report};

use crate::say;

/// The flags of `glidepath netlab`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct NetlabArgs {
    #[command(subcommand)]
    command: Option<NetlabCommand>,
    /// The reduced grid (a few minutes; the default).
    #[arg(long, conflicts_with = "full")]
    quick: bool,
    /// The report's ranges: 7 bandwidths, 6 sizes, 6 delays, 10 runs per point
    /// (hours).
    #[arg(long)]
    full: bool,
    /// What limits the bandwidth: `relay` (the user-space link serialises each
    /// message, so delay and transmission add) or `tbf` (the kernel's token bucket;
    /// bursts pass unserialised).
    #[arg(long, default_value = "relay", value_parser = parse_shaper)]
    shaper: Shaper,
    /// Write every result as JSON here (keys `sync` and `async` hold `alpha_bytes`,
    /// `beta_ms` and `r2`).
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// Write the figures (PNG) and the tables (markdown) into this directory.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Runs per point, instead of the grid's (quick 1, full 10).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=1000))]
    repetitions: Option<u64>,
    /// Exchanges per run at most, instead of the grid's (quick 100, full 1000).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(2..=1_000_000))]
    max_count: Option<u64>,
    /// Seconds a run may take by the report's formula before it runs fewer
    /// exchanges (never fewer than 20), instead of the grid's (quick 1.5, full 20).
    #[arg(long, value_name = "S")]
    point_budget_s: Option<f64>,
    /// Bundle the federates' messages (bytes per bundle; `--bundle-bytes` of
    /// `glidepath bench`): how bundling changes α and β.
    #[arg(long, value_name = "BYTES")]
    bundle_bytes: Option<usize>,
    /// With --bundle-bytes: the longest a message waits in a bundle, µs.
    #[arg(long, value_name = "US", requires = "bundle_bytes")]
    bundle_time_us: Option<u64>,
    /// The nats-server executable [default: $GLIDEPATH_NATS_SERVER, else
    /// `nats-server` on PATH].
    #[arg(long, value_name = "PATH")]
    nats_server: Option<PathBuf>,
}

#[derive(clap::Subcommand, Debug)]
enum NetlabCommand {
    /// Remove every laboratory namespace (and what runs in them), in use or not.
    Cleanup,
    /// One exchange across one link, printed as JSON (time per exchange, bytes
    /// that crossed the link, retransmissions): what a link does to a federation.
    Exchange(ExchangeArgs),
    /// One benchmark federate (started by the laboratory inside a host).
    #[command(hide = true)]
    Peer(PeerArgs),
}

#[derive(clap::Args, Debug)]
struct ExchangeArgs {
    /// Link bandwidth per direction, bit/s (k and M suffixes: 128k, 1M); none:
    /// unlimited.
    #[arg(long, value_parser = parse_bandwidth)]
    bandwidth: Option<u64>,
    /// One-way delay, ms.
    #[arg(long, default_value_t = 0.0)]
    delay_ms: f64,
    /// Half duplex: both directions share the bandwidth.
    #[arg(long)]
    half_duplex: bool,
    #[arg(long, default_value = "relay", value_parser = parse_shaper)]
    shaper: Shaper,
    /// sync (time management, one advance per exchange) or async.
    #[arg(long, default_value = "sync", value_parser = parse_mode)]
    mode: Mode,
    /// The data's order in sync mode: timestamp or receive.
    #[arg(long, default_value = "timestamp", value_parser = parse_order)]
    order: Order,
    /// Both federates send.
    #[arg(long)]
    two_way: bool,
    /// Payload bytes.
    #[arg(long, default_value_t = 1024)]
    size: usize,
    /// Exchanges.
    #[arg(long, default_value_t = 100)]
    count: u64,
    /// Runs of the exchange in the same laboratory (each printed).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
    repetitions: u64,
    /// Sync mode: the lookahead in steps (a sender runs that many steps ahead).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    lookahead: u64,
    /// Bundle messages up to this many bytes (GLIDEPATH_BUNDLE_BYTES).
    #[arg(long, value_name = "BYTES")]
    bundle_bytes: Option<usize>,
    /// Time-only federates on the server host.
    #[arg(long, default_value_t = 0)]
    tickers_server: usize,
    /// Time-only federates on the remote host.
    #[arg(long, default_value_t = 0)]
    tickers_remote: usize,
    #[arg(long, value_name = "PATH")]
    nats_server: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
struct PeerArgs {
    #[arg(long)]
    nats_url: String,
    #[arg(long)]
    federation: String,
    #[arg(long)]
    name: String,
    #[arg(long, value_parser = parse_role)]
    role: Role,
    #[arg(long, value_parser = parse_mode)]
    mode: Mode,
    #[arg(long, default_value = "timestamp", value_parser = parse_order)]
    order: Order,
    #[arg(long, default_value_t = 64)]
    size: usize,
    #[arg(long, default_value_t = 1000)]
    count: u64,
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    lookahead: u64,
    #[arg(long, default_value_t = 2)]
    members: usize,
    #[arg(long)]
    leader: bool,
    #[arg(long, default_value_t = 600)]
    timeout_s: u64,
}

/// Runs `glidepath netlab`. When a signal tears the laboratory down, the work
/// fails (its processes are killed); the signal thread then exits the process with
/// 128 + the signal, and this waits for it rather than report that failure.
pub fn run(args: NetlabArgs) -> anyhow::Result<()> {
    let result = run_command(args);
    if result.is_err() {
        lab::wait_if_signalled();
    }
    result
}

fn run_command(args: NetlabArgs) -> anyhow::Result<()> {
    match args.command {
        Some(NetlabCommand::Cleanup) => {
            lab::check_privileges()?;
            let removed = lab::remove_all()?;
            println!("removed {} laboratory namespaces", removed.len());
            Ok(())
        }
        Some(NetlabCommand::Exchange(e)) => exchange(e),
        Some(NetlabCommand::Peer(p)) => {
            let report = peer::run(&PeerOptions {
                nats_url: p.nats_url,
                federation: p.federation,
                name: p.name,
                role: p.role,
                mode: p.mode,
                order: p.order,
                size: p.size,
                count: p.count,
                lookahead: p.lookahead,
                members: p.members,
                leader: p.leader,
                timeout: Duration::from_secs(p.timeout_s),
            })?;
            println!("{}", serde_json::to_string(&report)?);
            Ok(())
        }
        None => laboratory(args),
    }
}

/// Checks the privileges, installs the signal teardown (before any thread starts,
/// so that every thread inherits the blocked signals), finds nats-server and this
/// program, and starts the laboratory with the bundling asked for. Returns it with
/// the nats-server it runs.
fn start_testbed(
    nats_server: Option<PathBuf>,
    shaper: Shaper,
    bundle_bytes: Option<usize>,
    bundle_time_us: Option<u64>,
) -> anyhow::Result<(Testbed, PathBuf)> {
    lab::check_privileges()?;
    lab::teardown_on_signals()?;
    let nats_server = match nats_server {
        Some(p) => p,
        None => glidepath::backend::nats::find_nats_server()?,
    };
    let program = std::env::current_exe().context("finding this program's path")?;
    let mut bed = Testbed::start(&program, &nats_server, shaper)?;
    if let Some(bytes) = bundle_bytes {
        bed.set_peer_env(glidepath::BUNDLE_BYTES_ENV, &bytes.to_string());
    }
    if let Some(us) = bundle_time_us {
        bed.set_peer_env(glidepath::BUNDLE_TIME_US_ENV, &us.to_string());
    }
    Ok((bed, nats_server))
}

fn laboratory(args: NetlabArgs) -> anyhow::Result<()> {
    let mut grid = if args.full {
        Grid::full()
    } else {
        Grid::quick()
    };
    if let Some(n) = args.repetitions {
        grid.repetitions = n as usize;
    }
    if let Some(n) = args.max_count {
        grid.max_count = n;
        grid.min_count = grid.min_count.min(n);
    }
    if let Some(s) = args.point_budget_s {
        if !(s.is_finite() && s > 0.0) {
            anyhow::bail!("--point-budget-s must be a positive number of seconds, got {s}");
        }
        grid.point_budget_s = s;
    }
    let (mut bed, nats_server) = start_testbed(
        args.nats_server,
        args.shaper,
        args.bundle_bytes,
        args.bundle_time_us,
    )?;
    say(&format!(
        "netlab: {} grid, shaper {:?}, nats-server {}",
        grid.name,
        args.shaper,
        nats_server.display()
    ));
    let result = grid::run(&mut bed, &grid, &|line| say(&format!("netlab: {line}")))?;
    drop(bed);
    let tables = report::markdown(&result);
    println!("{tables}");
    if let Some(path) = &args.json {
        std::fs::write(path, report::json(&result)?)
            .with_context(|| format!("writing {}", path.display()))?;
        say(&format!("netlab: wrote {}", path.display()));
    }
    if let Some(dir) = &args.out {
        for png in report::figures(&result, dir)? {
            say(&format!("netlab: wrote {}", png.display()));
        }
        let md = dir.join("netlab.md");
        std::fs::write(&md, &tables).with_context(|| format!("writing {}", md.display()))?;
        say(&format!("netlab: wrote {}", md.display()));
    }
    Ok(())
}

fn exchange(e: ExchangeArgs) -> anyhow::Result<()> {
    let (mut bed, _) = start_testbed(e.nats_server, e.shaper, e.bundle_bytes, None)?;
    bed.configure(LinkConfig {
        bandwidth_bps: e.bandwidth,
        delay_ms: e.delay_ms,
        duplex: if e.half_duplex {
            Duplex::Half
        } else {
            Duplex::Full
        },
    })?;
    let spec = ExchangeSpec {
        mode: e.mode,
        order: e.order,
        two_way: e.two_way,
        size: e.size,
        count: e.count,
        lookahead: e.lookahead,
        tickers_server: e.tickers_server,
        tickers_remote: e.tickers_remote,
    };
    for _ in 0..e.repetitions {
        let result = bed.exchange(&spec)?;
        println!("{}", serde_json::to_string_pretty(&result)?);
    }
    Ok(())
}

/// "128k", "1M", "20m", "1000000".
fn parse_bandwidth(s: &str) -> Result<u64, String> {
    let (digits, factor) = match s.chars().last() {
        Some('k' | 'K') => (&s[..s.len() - 1], 1_000.0),
        Some('m' | 'M') => (&s[..s.len() - 1], 1_000_000.0),
        Some('g' | 'G') => (&s[..s.len() - 1], 1_000_000_000.0),
        _ => (s, 1.0),
    };
    let value: f64 = digits
        .parse()
        .map_err(|_| format!("{s:?} is not a bandwidth (bit/s, e.g. 128k, 1M, 20M)"))?;
    let bps = value * factor;
    if !(1.0..=100e9).contains(&bps) {
        return Err(format!(
            "bandwidth {s:?} is out of range (1 bit/s to 100 Gbit/s)"
        ));
    }
    Ok(bps as u64)
}

fn parse_shaper(s: &str) -> Result<Shaper, String> {
    match s {
        "relay" => Ok(Shaper::Relay),
        "tbf" => Ok(Shaper::Tbf),
        _ => Err(format!("unknown shaper {s:?}: relay or tbf")),
    }
}

fn parse_role(s: &str) -> Result<Role, String> {
    match s {
        "sender" => Ok(Role::Sender),
        "receiver" => Ok(Role::Receiver),
        "both" => Ok(Role::Both),
        "ticker" => Ok(Role::Ticker),
        _ => Err(format!(
            "unknown role {s:?}: sender, receiver, both or ticker"
        )),
    }
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    match s {
        "sync" => Ok(Mode::Sync),
        "async" => Ok(Mode::Async),
        _ => Err(format!("unknown mode {s:?}: sync or async")),
    }
}

fn parse_order(s: &str) -> Result<Order, String> {
    match s {
        "timestamp" => Ok(Order::Timestamp),
        "receive" => Ok(Order::Receive),
        _ => Err(format!("unknown order {s:?}: timestamp or receive")),
    }
}

//! `glidepath bench SUITE`: runs one of the benchmark suites of issue 4 on the chosen
//! transport (and its raw peer with `--raw`), prints the table, and writes JSON and
//! plots on request. The suites live in `glidepath-bench`; this file only turns flags
//! into `BenchOptions`, with a message naming the flag when one is wrong.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use glidepath::{ProcessModel, TransportKind, WaitStrategy};
use glidepath_bench::harness::{BenchOptions, TransportChoice};
use glidepath_bench::output::{write_json, write_plots, write_table, BarProgress};

/// The flags of `glidepath bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The suite: latency, throughput, loopback, timeadv, fanout, ddm (data
    /// distribution management: messages per subscriber with regions against class
    /// subscription), tg (the target generator's update rate, DASE's Tables 1–5) or
    /// bus (the formation-flying testbed's bus: `bus send`, `bus send-receive`, `bus
    /// throughput`).
    #[arg(value_name = "SUITE")]
    suite: String,
    /// The bus benchmark's test: send, send-receive or throughput (bus only).
    #[arg(value_name = "TEST")]
    test: Option<String>,
    /// The bus's service level: unreliable, reliable, fifo, causal, agreed or safe
    /// (bus) [default: agreed, as the paper].
    #[arg(long, value_name = "LEVEL")]
    service: Option<String>,
    /// The bus's message encoding: xml or binary (bus) [default: xml].
    #[arg(long, value_name = "ENCODING")]
    encoding: Option<String>,
    /// The transport glidepath runs on: inproc, nats or shm [default: inproc]. For
    /// the tg suite, inproc runs the nodes as threads and nats as processes of their
    /// own, as DASE measured them.
    #[arg(long, value_name = "TRANSPORT")]
    transport: Option<String>,
    /// The NATS server for `--transport nats` and the raw NATS peer (the executive is
    /// started in this process when no `glidepath server` answers there), and how to
    /// reach it.
    #[command(flatten)]
    nats: crate::nats_args::NatsArgs,
    /// Message sizes in bytes, comma-separated; K/KiB (1024) and M/MiB suffixes
    /// allowed, e.g. `200` or `32,1K,64KiB` [default: the suite's sweep].
    #[arg(long, alias = "sizes", value_name = "BYTES")]
    size: Option<String>,
    /// Messages (or grants) per configuration [default: the suite's].
    #[arg(long, value_name = "N")]
    count: Option<String>,
    /// Federates taking part [default: the suite's].
    #[arg(long, value_name = "N")]
    federates: Option<String>,
    /// Subscriber counts, comma-separated [default: the suite's sweep].
    #[arg(long, value_name = "N")]
    subscribers: Option<String>,
    /// Process model: evoked or immediate [default: evoked].
    #[arg(long, value_name = "MODEL")]
    process_model: Option<String>,
    /// How delivering threads wait: spin, spin-park, spin-park:MICROS or park
    /// [default: park].
    #[arg(long, value_name = "STRATEGY")]
    wait: Option<String>,
    /// Longest a message waits in a bundle, in microseconds (nats only).
    #[arg(long, value_name = "MICROSECONDS")]
    bundle_time_us: Option<String>,
    /// Largest bundle in bytes; 0 turns bundling off (nats only) [default: off].
    #[arg(long, value_name = "BYTES")]
    bundle_bytes: Option<String>,
    /// Over core NATS, envelopes a sender may run ahead of its slowest receiver's
    /// acknowledgement; 0 turns reliable delivery off (nats only) [default: 16384].
    #[arg(long, value_name = "ENVELOPES")]
    reliable_window: Option<String>,
    /// Over core NATS, slices per axis of the cell grid carrying updates sent with
    /// regions; 0 sends them on the topics' subjects (nats only) [default: 8].
    #[arg(long, value_name = "N")]
    ddm_cells: Option<String>,
    /// ddm: also run each subscriber count with every subscriber's attribute scope
    /// advisory switch on (a `scope` row: what the owner's region notices cost).
    #[arg(long)]
    scope_advisories: bool,
    /// Also run the raw peer (raw NATS, raw channels or raw shared-memory rings) and report the ratios.
    #[arg(long)]
    raw: bool,
    /// Run the suite this many times on one setup (each run measures glidepath, then
    /// the raw peer, per configuration) and report each run's ratio and their median;
    /// needs `--raw` (the bus suite always measures raw NATS). With `--json` the file
    /// holds `{"runs": [[result, ...], ...], "ratios": [...]}`; plots are of the last run.
    #[arg(long, value_name = "N")]
    repeat: Option<String>,
    /// Write the results as a JSON array to this file.
    #[arg(long, value_name = "PATH")]
    json: Option<PathBuf>,
    /// Write PNG plots into this directory.
    #[arg(long, value_name = "DIR")]
    plot: Option<PathBuf>,
    /// Busy work in microseconds per cycle at both ends (latency).
    #[arg(long, value_name = "MICROSECONDS")]
    compute_us: Option<String>,
    /// Add a federate flooding best-effort traffic during the measurement (latency).
    #[arg(long)]
    background_load: bool,
    /// Run federates as processes of their own, as other RTIs' figures are measured
    /// (nats or shm): latency's ponger, every timeadv federate but the first, every
    /// receiver of throughput and fanout, every loopback repeater; bus throughput:
    /// every subscriber, the raw NATS peer's too, as the paper did (nats).
    #[arg(long)]
    processes: bool,
    /// The shared-memory system to join instead of hosting one (shm).
    #[arg(long, value_name = "NAME", hide = true)]
    shm_name: Option<String>,
    /// Be one federate of this federation (how `--processes` runs its children),
    /// number `--member-index`: latency's ponger, a timeadv federate, a throughput
    /// receiver, a fanout subscriber or a loopback repeater.
    #[arg(long, value_name = "FEDERATION", hide = true)]
    member_of: Option<String>,
    /// Which of the suite's federates this child process is (with `--member-of`).
    #[arg(long, value_name = "I", hide = true, requires = "member_of")]
    member_index: Option<usize>,
    /// What this child process does where a suite has several parts (with
    /// `--member-of`; fanout: send-receive or throughput).
    #[arg(long, value_name = "ROLE", hide = true, requires = "member_of")]
    member_role: Option<String>,
    /// Be one bus subscriber of `bench bus throughput --processes` in this group (how
    /// it runs its children).
    #[arg(
        long,
        value_name = "GROUP",
        hide = true,
        conflicts_with = "raw_subscriber_of"
    )]
    subscriber_of: Option<String>,
    /// Be one raw NATS subscriber of `bench bus throughput --processes` on this
    /// subject (how it runs its children).
    #[arg(long, value_name = "SUBJECT", hide = true)]
    raw_subscriber_of: Option<String>,
    /// Lookahead of the time-advance suite [default: 1].
    #[arg(long, value_name = "TIME")]
    lookahead: Option<String>,
    /// Aircraft counts, comma-separated (tg) [default: 400,1000].
    #[arg(long, value_name = "N")]
    aircraft: Option<String>,
    /// Processing node counts, comma-separated (tg) [default: 1,2].
    #[arg(long, value_name = "N")]
    nodes: Option<String>,
    /// Threads per processing node (tg) [default: cores / nodes].
    #[arg(long, value_name = "N")]
    threads: Option<String>,
    /// Measured seconds per run (tg) [default: 10].
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<String>,
    /// Runs per configuration (tg) [default: 5, as the paper].
    #[arg(long, value_name = "N")]
    runs: Option<String>,
    /// The aircraft model, point-mass or stand-in (tg) [default: point-mass].
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// The stand-in model's fixed cost per step in microseconds (tg) [default: 5].
    #[arg(long, value_name = "MICROSECONDS")]
    stand_in_us: Option<String>,
    /// Hosts for the tg suite over NATS: 2 runs the NATS server and the simulation
    /// server in one network namespace and the processing nodes in a second one and
    /// the first in turn, joined by a veth pair, as DASE's two hosts (needs root)
    /// [default: 1, this host].
    #[arg(long, value_name = "N")]
    hosts: Option<String>,
}

/// `glidepath bench tg`: the target generator's flags, checked.
fn tg_args(args: &BenchArgs) -> anyhow::Result<crate::tg::TgBenchArgs> {
    let positive = |flag: &str, v: usize| {
        if v == 0 {
            bail!("{flag}: must be at least 1")
        }
        Ok(v)
    };
    let counts =
        |flag: &str, v: &Option<String>, default: &[usize]| -> anyhow::Result<Vec<usize>> {
            match v {
                None => Ok(default.to_vec()),
                Some(v) => list(flag, v, |f, x| {
                    number::<usize>(f, x).and_then(|n| positive(f, n))
                }),
            }
        };
    let seconds = args
        .seconds
        .as_deref()
        .map_or(Ok(10.0), |v| number::<f64>("--seconds", v))?;
    if !(seconds.is_finite() && seconds > 0.0) {
        bail!("--seconds: {seconds} is not a positive number of seconds");
    }
    let hosts = args
        .hosts
        .as_deref()
        .map_or(Ok(1), |v| number::<usize>("--hosts", v))?;
    if !(1..=2).contains(&hosts) {
        bail!("--hosts {hosts}: the tg suite runs on 1 host or 2 (two network namespaces)");
    }
    let tg = crate::tg::TgBenchArgs {
        hosts,
        aircraft: counts("--aircraft", &args.aircraft, &[400, 1000])?,
        nodes: counts("--nodes", &args.nodes, &[1, 2])?,
        threads: args
            .threads
            .as_deref()
            .map(|v| number::<usize>("--threads", v).and_then(|n| positive("--threads", n)))
            .transpose()?,
        seconds,
        runs: args.runs.as_deref().map_or(Ok(5), |v| {
            number::<usize>("--runs", v).and_then(|n| positive("--runs", n))
        })?,
        model: args.model.clone().unwrap_or_else(|| "point-mass".into()),
        stand_in_us: args
            .stand_in_us
            .as_deref()
            .map_or(Ok(5.0), |v| number::<f64>("--stand-in-us", v))?,
        json: args.json.clone(),
        transport: match args.transport.as_deref().map(str::trim) {
            None | Some("inproc") => TransportKind::Inproc,
            Some("nats") => TransportKind::Nats,
            Some(other) => bail!(
                "--transport `{other}`: the tg suite runs on inproc (nodes as threads) or nats \
                 (nodes as processes)"
            ),
        },
        config: {
            let mut config = glidepath::RtiConfig::from_env()?;
            args.nats.clone().apply(&mut config)?;
            config.transport = TransportKind::Nats;
            config
        },
    };
    if hosts == 2 && tg.transport != TransportKind::Nats {
        bail!("--hosts 2 runs the nodes as processes on two hosts: it needs --transport nats");
    }
    if hosts == 2 && (args.nats.nats_url.is_some() || args.nats.nats_url_file.is_some()) {
        bail!("--hosts 2 starts its own NATS server on the first host: leave out --nats-url");
    }
    Ok(tg)
}

/// Parses a number, naming the flag when it is not one.
fn number<T: std::str::FromStr>(flag: &str, value: &str) -> anyhow::Result<T>
where
    T::Err: std::fmt::Display,
{
    value
        .trim()
        .parse::<T>()
        .map_err(|e| anyhow::anyhow!("{flag} `{value}`: {e}"))
}

/// Parses a size: digits with an optional K, KiB, M or MiB suffix (binary units).
fn size(flag: &str, value: &str) -> anyhow::Result<usize> {
    let v = value.trim();
    let split = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, suffix) = v.split_at(split);
    let unit: usize = match suffix.trim() {
        "" | "B" | "b" => 1,
        "K" | "k" | "KiB" | "KB" | "kB" => 1 << 10,
        "M" | "m" | "MiB" | "MB" => 1 << 20,
        other => bail!("{flag} `{value}`: unknown unit `{other}` (use B, K/KiB or M/MiB)"),
    };
    if digits.is_empty() {
        bail!("{flag} `{value}`: expected a number of bytes such as 200, 1K or 64KiB");
    }
    let n: usize = number(flag, digits)?;
    n.checked_mul(unit)
        .ok_or_else(|| anyhow::anyhow!("{flag} `{value}`: too large"))
}

/// Parses a comma-separated list with `item`.
fn list<T>(
    flag: &str,
    value: &str,
    item: impl Fn(&str, &str) -> anyhow::Result<T>,
) -> anyhow::Result<Vec<T>> {
    value
        .split(',')
        .map(|v| item(flag, v))
        .collect::<anyhow::Result<Vec<T>>>()
}

/// The suite's options from the flags, the environment and the defaults.
fn options(args: &BenchArgs) -> anyhow::Result<BenchOptions> {
    let mut o = BenchOptions::default();
    if let Some(t) = &args.transport {
        o.transport = match t.trim() {
            "inproc" => TransportChoice::Inproc,
            "nats" => TransportChoice::Nats,
            "shm" => TransportChoice::Shm,
            other => bail!("--transport `{other}`: expected inproc, nats or shm"),
        };
    }
    let mut config = glidepath::RtiConfig::from_env()?;
    args.nats.clone().apply(&mut config)?;
    o.nats_url = config.nats_url.clone();
    o.nats_security = config.nats_security.clone();
    if let Some(v) = &args.size {
        o.sizes = list("--size", v, size)?;
        if o.sizes.contains(&0) {
            bail!("--size `{v}`: sizes must be at least 1 byte");
        }
    }
    if let Some(v) = &args.count {
        o.count = number("--count", v)?;
        if o.count == 0 {
            bail!("--count `{v}`: must be at least 1");
        }
    }
    if let Some(v) = &args.federates {
        o.federates = number("--federates", v)?;
        if o.federates == 0 {
            bail!("--federates `{v}`: must be at least 1");
        }
    }
    if let Some(v) = &args.subscribers {
        o.subscribers = list("--subscribers", v, number::<usize>)?;
        if o.subscribers.contains(&0) {
            bail!("--subscribers `{v}`: counts must be at least 1");
        }
    }
    if let Some(v) = &args.process_model {
        o.process_model = match v.trim() {
            "evoked" => ProcessModel::Evoked,
            "immediate" => ProcessModel::Immediate,
            other => bail!("--process-model `{other}`: expected evoked or immediate"),
        };
    }
    if let Some(v) = &args.wait {
        o.wait = v
            .trim()
            .parse::<WaitStrategy>()
            .map_err(|e| anyhow::anyhow!("--wait: {e}"))?;
    }
    if let Some(v) = &args.bundle_time_us {
        o.bundle_time_us = Some(number("--bundle-time-us", v)?);
    }
    if let Some(v) = &args.bundle_bytes {
        o.bundle_bytes = Some(size("--bundle-bytes", v)?);
    }
    if let Some(v) = &args.reliable_window {
        o.reliable_window_envelopes = Some(number("--reliable-window", v)?);
    }
    o.scope_advisories = args.scope_advisories;
    if let Some(v) = &args.ddm_cells {
        o.ddm_cells = Some(number("--ddm-cells", v)?);
    }
    if let Some(v) = &args.compute_us {
        o.compute_us = number("--compute-us", v)?;
    }
    if let Some(v) = &args.lookahead {
        let l: f64 = number("--lookahead", v)?;
        if !l.is_finite() || l < 0.0 {
            bail!("--lookahead `{v}`: must be a finite number at least 0");
        }
        o.lookahead = l;
    }
    o.raw = args.raw;
    o.background_load = args.background_load;
    o.processes = args.processes;
    o.shm_name = args.shm_name.clone();
    o.member_of = args.member_of.clone();
    o.member_index = args.member_index.unwrap_or(0);
    o.member_role = args.member_role.clone();
    processes_cross(args, o.transport.name(), "nats or shm")?;
    let process_suites = glidepath_bench::suites::PROCESS_SUITES;
    if args.processes && !process_suites.contains(&args.suite.as_str()) {
        bail!(
            "--processes: the {} suite runs its federates as threads of one process only; \
             {}, bus throughput and tg (over nats) run them as processes",
            args.suite,
            process_suites.join(", ")
        );
    }
    if !glidepath_bench::suites::SUITES.contains(&args.suite.as_str()) {
        bail!(
            "unknown suite `{}`; the suites are: {}",
            args.suite,
            glidepath_bench::suites::SUITES.join(", ")
        );
    }
    Ok(o)
}

/// `--processes` runs parts of a suite in processes of their own, which the
/// in-process transport cannot reach: refused there, naming the transports that can.
fn processes_cross(args: &BenchArgs, transport: &str, needs: &str) -> anyhow::Result<()> {
    if args.processes && transport == "inproc" {
        bail!("--processes needs --transport {needs}: inproc cannot cross a process boundary");
    }
    Ok(())
}

/// `glidepath bench bus TEST`: the bus benchmark's flags, checked.
fn bus_args(args: &BenchArgs) -> anyhow::Result<glidepath_bench::bus::BusBenchOptions> {
    use glidepath_bench::bus::BusVariant;
    let Some(test) = args.test.as_deref() else {
        bail!("bench bus needs a test: send, send-receive or throughput");
    };
    let variant: BusVariant = test.parse()?;
    let transport = match args.transport.as_deref() {
        None => glidepath::TransportKind::Inproc,
        Some(t) => t.parse().map_err(|e| anyhow::anyhow!("--transport: {e}"))?,
    };
    processes_cross(args, transport.name(), "nats")?;
    if args.processes && variant != BusVariant::Throughput {
        bail!(
            "--processes: only bus throughput runs its subscribers as processes (send has \
             none, and send-receive paces each message on in-process acknowledgements)"
        );
    }
    // The paper went to nearly 10 MB; NATS refuses payloads over its `max_payload`
    // (1 MB by default), so larger sizes are asked for with `--size` on a server
    // configured for them.
    let default_sizes: &[usize] = &[100, 1_000, 10_000, 100_000];
    let default_subscribers: &[usize] = match variant {
        BusVariant::Throughput => &[1, 5, 10, 20, 30, 50],
        _ => &[1, 2, 3, 4, 5, 6, 7, 8, 9],
    };
    Ok(glidepath_bench::bus::BusBenchOptions {
        variant,
        transport,
        nats_url: {
            let mut config = glidepath::RtiConfig::from_env()?;
            args.nats.clone().apply(&mut config)?;
            config.nats_url
        },
        sizes: match &args.size {
            None => default_sizes.to_vec(),
            Some(v) => list("--size", v, size)?,
        },
        subscribers: match &args.subscribers {
            None => default_subscribers.to_vec(),
            Some(v) => list("--subscribers", v, number::<usize>)?,
        },
        count: args.count.as_deref().map_or(
            Ok(if variant == BusVariant::Throughput {
                10_000
            } else {
                1_000
            }),
            |v| number::<usize>("--count", v),
        )?,
        level: args
            .service
            .as_deref()
            .map_or(Ok(glidepath::bus::ServiceLevel::Agreed), |v| v.parse())
            .map_err(|e| anyhow::anyhow!("--service: {e}"))?,
        encoding: args
            .encoding
            .as_deref()
            .map_or(Ok(glidepath::bus::Encoding::Xml), |v| v.parse())
            .map_err(|e| anyhow::anyhow!("--encoding: {e}"))?,
        // Raw NATS is always measured next to the bus over NATS.
        raw: true,
        processes: args.processes,
    })
}

/// `--repeat N`: how many runs (1 without the flag), checked against the suite.
fn repeat(args: &BenchArgs) -> anyhow::Result<usize> {
    let Some(v) = &args.repeat else {
        return Ok(1);
    };
    let n: usize = number("--repeat", v)?;
    if n == 0 {
        bail!("--repeat: must be at least 1");
    }
    if args.suite == "tg" {
        bail!("--repeat: not for the tg suite (it has --runs)");
    }
    if !args.raw && args.suite != "bus" {
        bail!("--repeat needs --raw: it reports ratios to the raw peer");
    }
    Ok(n)
}

/// `--subscriber-of` or `--raw-subscriber-of`: which subscriber this process is.
fn subscriber_role(args: &BenchArgs) -> Option<glidepath_bench::bus_process::SubscriberRole> {
    use glidepath_bench::bus_process::SubscriberRole;
    args.subscriber_of
        .clone()
        .map(SubscriberRole::Bus)
        .or_else(|| args.raw_subscriber_of.clone().map(SubscriberRole::Raw))
}

/// `glidepath bench`: runs the suite and writes what was asked for.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    if args.suite == "tg" {
        return crate::tg::bench(tg_args(&args)?);
    }
    if let Some(role) = subscriber_role(&args) {
        // A child of `bench bus throughput --processes`: its output is the protocol.
        return glidepath_bench::bus_process::serve_subscriber(&bus_args(&args)?, &role);
    }
    let repeats = repeat(&args)?;
    let progress = BarProgress::new();
    let runs: anyhow::Result<Vec<Vec<_>>> = if args.suite == "bus" {
        let opts = bus_args(&args)?;
        (0..repeats)
            .map(|_| glidepath_bench::bus::run(&opts, &progress))
            .collect()
    } else {
        let opts = options(&args)?;
        // One setup (RTI, NATS executive) for every run.
        glidepath_bench::Bench::start(&opts).and_then(|bench| {
            (0..repeats)
                .map(|_| glidepath_bench::suites::run_on(&bench, &args.suite, &opts, &progress))
                .collect()
        })
    };
    progress.finish();
    let runs = runs.with_context(|| format!("running the {} suite", args.suite))?;
    let mut stdout = std::io::stdout().lock();
    for (i, results) in runs.iter().enumerate() {
        if repeats > 1 {
            writeln!(stdout, "run {} of {repeats}:", i + 1)?;
        }
        write_table(&mut stdout, results)?;
    }
    // The last run's results, borrowed: they hold every latency sample.
    let results: &[_] = runs.last().map_or(&[], Vec::as_slice);
    if repeats > 1 {
        let ratios = glidepath_bench::repeat::summarize(&runs)?;
        glidepath_bench::repeat::write_ratios(&mut stdout, &ratios)?;
        if let Some(path) = &args.json {
            write_json(path, &serde_json::json!({ "runs": runs, "ratios": ratios }))?;
            println!("results written to {}", path.display());
        }
    } else if let Some(path) = &args.json {
        write_json(path, results)?;
        println!("results written to {}", path.display());
    }
    if let Some(dir) = &args.plot {
        let files = write_plots(dir, results)?;
        println!("{} plot(s) written to {}", files.len(), dir.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_accept_binary_suffixes() {
        assert_eq!(size("--size", "200").unwrap(), 200);
        assert_eq!(size("--size", "1K").unwrap(), 1024);
        assert_eq!(size("--size", "64KiB").unwrap(), 65536);
        assert_eq!(size("--size", "2M").unwrap(), 2 << 20);
        assert!(size("--size", "12Q")
            .unwrap_err()
            .to_string()
            .contains("--size"));
        assert!(size("--size", "K").is_err());
        assert_eq!(list("--size", "32,1K", size).unwrap(), vec![32, 1024]);
    }
}

//! `glidepath bus bridge CONFIG`: the bridge's routes from a TOML file (see
//! `examples/bus/bridge.toml`), checked with errors that name the file, the field and
//! the route; then the bridge runs until stopped (or for `--seconds`), printing what
//! it forwarded and refused every `--report-s` seconds and at the end.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use glidepath::bus::bridge::{Bridge, BridgeConfig, FromNats, ToNats};
use glidepath::bus::{BusConfig, Encoding, Pattern, ServiceLevel, Subject};
use glidepath::{RtiConfig, TransportKind};
use serde::Deserialize;

use crate::nats_args::NatsArgs;

#[derive(clap::Args, Debug)]
pub(crate) struct BridgeArgs {
    /// The routes (TOML: [bus], [nats], [[to_nats]], [[from_nats]]).
    #[arg(value_name = "CONFIG")]
    config: PathBuf,
    /// The NATS server and credentials for both sides, unless the file names a URL.
    #[command(flatten)]
    nats: NatsArgs,
    /// Stop after this many seconds (default: run until killed).
    #[arg(long, value_name = "SECONDS")]
    seconds: Option<f64>,
    /// Print the counts every this many seconds.
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    report_s: f64,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    bus: BusSection,
    #[serde(default)]
    nats: NatsSection,
    #[serde(default)]
    to_nats: Vec<ToNatsRoute>,
    #[serde(default)]
    from_nats: Vec<FromNatsRoute>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct BusSection {
    transport: Option<String>,
    nats_url: Option<String>,
    group: Option<String>,
    encoding: Option<String>,
    name: Option<String>,
}

#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
struct NatsSection {
    url: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ToNatsRoute {
    pattern: String,
    prefix: String,
    group: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FromNatsRoute {
    subject: String,
    level: Option<String>,
    group: Option<String>,
}

/// A NATS subject or prefix: dot-separated tokens without spaces, `*` and `>` only
/// where allowed.
fn check_nats_subject(what: &str, s: &str, wildcards: bool) -> anyhow::Result<()> {
    let bad = s.is_empty()
        || s.split('.').enumerate().any(|(i, t)| {
            t.is_empty()
                || t.chars().any(|c| c.is_whitespace())
                || (!wildcards && (t.contains('*') || t.contains('>')))
                || (wildcards && t.contains('>') && (t != ">" || i + 1 != s.split('.').count()))
                || (wildcards && t.contains('*') && t != "*")
        });
    anyhow::ensure!(
        !bad,
        "{what} `{s}` is not a NATS subject{}",
        if wildcards {
            ""
        } else {
            " (no wildcards here)"
        }
    );
    Ok(())
}

fn group(s: &Option<String>, route: &str) -> anyhow::Result<Option<Subject>> {
    s.as_deref()
        .map(|g| Subject::new(g).with_context(|| format!("{route}: group `{g}`")))
        .transpose()
}

/// The bridge's configuration from the file, over the flags' NATS settings.
pub(crate) fn load(path: &Path, nats: NatsArgs) -> anyhow::Result<BridgeConfig> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let file: File = toml::from_str(&text).with_context(|| format!("{}", path.display()))?;
    let shown = path.display();
    let mut rti = RtiConfig::default();
    nats.apply(&mut rti)?;
    let b = &file.bus;
    let transport = match b.transport.as_deref().unwrap_or("nats") {
        "nats" => TransportKind::Nats,
        "inproc" => TransportKind::Inproc,
        other => anyhow::bail!("{shown}: [bus] transport `{other}`: expected nats or inproc"),
    };
    let bus_url = b.nats_url.clone().unwrap_or_else(|| rti.nats_url.clone());
    let bus = BusConfig {
        transport,
        nats_url: bus_url.clone(),
        nats_security: rti.nats_security.clone(),
        encoding: match b.encoding.as_deref() {
            None => Encoding::Xml,
            Some(e) => e
                .parse()
                .map_err(|err| anyhow::anyhow!("{shown}: [bus] encoding: {err}"))?,
        },
        name: b.name.clone().unwrap_or_else(|| "bridge".into()),
        default_group: match &b.group {
            None => BusConfig::default().default_group,
            Some(g) => Subject::new(g).with_context(|| format!("{shown}: [bus] group `{g}`"))?,
        },
        ..BusConfig::default()
    };
    let mut to_nats = Vec::new();
    for (i, r) in file.to_nats.iter().enumerate() {
        let route = format!("{shown}: to_nats route {}", i + 1);
        check_nats_subject(&format!("{route}: prefix"), &r.prefix, false)?;
        to_nats.push(ToNats {
            pattern: Pattern::new(&r.pattern)
                .with_context(|| format!("{route}: pattern `{}`", r.pattern))?,
            group: group(&r.group, &route)?,
            prefix: r.prefix.clone(),
        });
    }
    let mut from_nats = Vec::new();
    for (i, r) in file.from_nats.iter().enumerate() {
        let route = format!("{shown}: from_nats route {}", i + 1);
        check_nats_subject(&format!("{route}: subject"), &r.subject, true)?;
        let level: ServiceLevel = match r.level.as_deref() {
            None => ServiceLevel::Fifo,
            Some(l) => l
                .parse()
                .map_err(|e| anyhow::anyhow!("{route}: level: {e}"))?,
        };
        from_nats.push(FromNats {
            subject: r.subject.clone(),
            level,
            group: group(&r.group, &route)?,
        });
    }
    anyhow::ensure!(
        !to_nats.is_empty() || !from_nats.is_empty(),
        "{shown}: no routes: add [[to_nats]] or [[from_nats]]"
    );
    Ok(BridgeConfig {
        bus,
        nats_url: file.nats.url.clone().unwrap_or(bus_url),
        nats_security: rti.nats_security.clone(),
        to_nats,
        from_nats,
    })
}

pub(crate) fn run(args: BridgeArgs) -> anyhow::Result<()> {
    anyhow::ensure!(
        args.report_s.is_finite() && args.report_s > 0.0,
        "--report-s {} is not a positive number of seconds",
        args.report_s
    );
    if let Some(s) = args.seconds {
        anyhow::ensure!(
            s.is_finite() && s > 0.0,
            "--seconds {s} is not a positive number of seconds"
        );
    }
    let config = load(&args.config, args.nats)?;
    let (routes_out, routes_in) = (config.to_nats.len(), config.from_nats.len());
    let bridge = Bridge::start(config)?;
    crate::say(&format!(
        "bus bridge: {routes_out} route(s) to NATS, {routes_in} from NATS; running{}",
        args.seconds
            .map_or(" until stopped".to_string(), |s| format!(" for {s} s"))
    ));
    let started = Instant::now();
    let end = args.seconds.map(|s| started + Duration::from_secs_f64(s));
    let every = Duration::from_secs_f64(args.report_s);
    let mut next = started + every;
    loop {
        let now = Instant::now();
        if end.is_some_and(|e| now >= e) {
            break;
        }
        let wake = end.map_or(next, |e| e.min(next));
        std::thread::sleep(
            wake.saturating_duration_since(now)
                .min(Duration::from_millis(200)),
        );
        if Instant::now() >= next {
            report(&bridge);
            next += every;
        }
    }
    report(&bridge);
    bridge.close();
    Ok(())
}

fn report(bridge: &Bridge) {
    let s = bridge.stats();
    println!(
        "bridge: {} to NATS, {} from NATS, {} refused (not bus messages in JSON), {} failed",
        s.to_nats, s.from_nats, s.refused_from_nats, s.failed
    );
}

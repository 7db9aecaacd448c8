//! `glidepath bus bridge CONFIG`: the bridge's routes from a TOML file (see
//! `examples/bus/bridge.toml` and, to an HLA federation, `examples/bus/bridge-hla.toml`),
//! checked with errors that name the file, the field and the route; then the bridge
//! runs until stopped (or for `--seconds`), printing what it forwarded and refused
//! every `--report-s` seconds and at the end.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::Context;
use glidepath::bus::bridge::{Bridge, BridgeConfig, FromNats, ToNats};
use glidepath::bus::hla::{FromHla, HlaBridge, ToHla};
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
    hla: Option<HlaSection>,
    #[serde(default)]
    to_hla: Vec<ToHlaRoute>,
    #[serde(default)]
    from_hla: Vec<FromHlaRoute>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct HlaSection {
    federation: String,
    #[serde(default)]
    fom: Vec<String>,
    name: Option<String>,
    transport: Option<String>,
    nats_url: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct ToHlaRoute {
    pattern: String,
    class: String,
    parameters: std::collections::BTreeMap<String, String>,
    group: Option<String>,
}

#[derive(Deserialize, Debug)]
#[serde(deny_unknown_fields)]
struct FromHlaRoute {
    class: String,
    subject: String,
    parameters: std::collections::BTreeMap<String, String>,
    level: Option<String>,
    group: Option<String>,
}

/// The HLA side of a bridge: where the federation is and the routes to and from it.
pub(crate) struct HlaSide {
    rti: RtiConfig,
    federation: String,
    fom: Vec<PathBuf>,
    name: String,
    to_hla: Vec<ToHla>,
    from_hla: Vec<FromHla>,
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

/// The bridge's configuration from the file, over the flags' NATS settings: the NATS
/// side (possibly without routes) and the HLA side, if the file has `[hla]`.
pub(crate) fn load(path: &Path, nats: NatsArgs) -> anyhow::Result<(BridgeConfig, Option<HlaSide>)> {
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
    let level_of = |l: &Option<String>, route: &str| -> anyhow::Result<ServiceLevel> {
        match l.as_deref() {
            None => Ok(ServiceLevel::Fifo),
            Some(l) => l
                .parse()
                .map_err(|e| anyhow::anyhow!("{route}: level: {e}")),
        }
    };
    let mut from_nats = Vec::new();
    for (i, r) in file.from_nats.iter().enumerate() {
        let route = format!("{shown}: from_nats route {}", i + 1);
        check_nats_subject(&format!("{route}: subject"), &r.subject, true)?;
        let level = level_of(&r.level, &route)?;
        from_nats.push(FromNats {
            subject: r.subject.clone(),
            level,
            group: group(&r.group, &route)?,
        });
    }
    let hla = match &file.hla {
        None => {
            anyhow::ensure!(
                file.to_hla.is_empty() && file.from_hla.is_empty(),
                "{shown}: [[to_hla]] and [[from_hla]] routes need an [hla] section naming the federation"
            );
            None
        }
        Some(h) => {
            let mut side_rti = rti.clone();
            side_rti.transport = match h.transport.as_deref() {
                None => transport,
                Some("nats") => TransportKind::Nats,
                Some("inproc") => TransportKind::Inproc,
                Some(other) => {
                    anyhow::bail!("{shown}: [hla] transport `{other}`: expected nats or inproc")
                }
            };
            side_rti.nats_url = h.nats_url.clone().unwrap_or_else(|| bus_url.clone());
            anyhow::ensure!(
                !h.federation.trim().is_empty(),
                "{shown}: [hla] federation must not be empty"
            );
            let dir = path.parent().unwrap_or(Path::new("."));
            let mut to_hla = Vec::new();
            for (i, r) in file.to_hla.iter().enumerate() {
                let route = format!("{shown}: to_hla route {}", i + 1);
                to_hla.push(ToHla {
                    pattern: Pattern::new(&r.pattern)
                        .with_context(|| format!("{route}: pattern `{}`", r.pattern))?,
                    group: group(&r.group, &route)?,
                    class: r.class.clone(),
                    parameters: r.parameters.clone().into_iter().collect(),
                });
            }
            let mut from_hla = Vec::new();
            for (i, r) in file.from_hla.iter().enumerate() {
                let route = format!("{shown}: from_hla route {}", i + 1);
                from_hla.push(FromHla {
                    class: r.class.clone(),
                    subject: Subject::new(&r.subject)
                        .with_context(|| format!("{route}: subject `{}`", r.subject))?,
                    level: level_of(&r.level, &route)?,
                    group: group(&r.group, &route)?,
                    parameters: r.parameters.clone().into_iter().collect(),
                });
            }
            anyhow::ensure!(
                !to_hla.is_empty() || !from_hla.is_empty(),
                "{shown}: [hla] without routes: add [[to_hla]] or [[from_hla]]"
            );
            Some(HlaSide {
                rti: side_rti,
                federation: h.federation.clone(),
                fom: h.fom.iter().map(|f| dir.join(f)).collect(),
                name: h.name.clone().unwrap_or_else(|| "bus-bridge".into()),
                to_hla,
                from_hla,
            })
        }
    };
    anyhow::ensure!(
        !to_nats.is_empty() || !from_nats.is_empty() || hla.is_some(),
        "{shown}: no routes: add [[to_nats]], [[from_nats]], or an [hla] section with [[to_hla]] or [[from_hla]]"
    );
    Ok((
        BridgeConfig {
            bus,
            nats_url: file.nats.url.clone().unwrap_or(bus_url),
            nats_security: rti.nats_security.clone(),
            to_nats,
            from_nats,
        },
        hla,
    ))
}

/// The HLA side running: the bridge, the federate it sends with, and what to undo.
struct HlaRunning {
    bridge: HlaBridge,
    federate: glidepath::Federate,
    rti: glidepath::Rti,
    federation: String,
    created: bool,
    _executive: Option<glidepath::ExecutiveServer>,
}

/// Joins the HLA side's federation (creating it from `fom` when it does not exist)
/// and starts its routes.
fn start_hla(side: HlaSide, bus: &BusConfig) -> anyhow::Result<HlaRunning> {
    let executive = match side.rti.transport {
        TransportKind::Nats => glidepath::ensure_executive(&side.rti)
            .with_context(|| format!("[hla]: the executive on {}", side.rti.nats_url))?,
        _ => None,
    };
    let rti = glidepath::Rti::from_config(&side.rti).context("[hla]: the RTI")?;
    let created = if side.fom.is_empty() {
        false
    } else {
        match rti.create_federation_execution(&side.federation, &side.fom) {
            Ok(()) => true,
            Err(glidepath::RtiError::Federation(
                glidepath::FederationError::FederationExecutionAlreadyExists(_),
            )) => false,
            Err(e) => {
                return Err(anyhow::anyhow!(
                    "[hla]: creating federation `{}`: {e}",
                    side.federation
                ))
            }
        }
    };
    let federate = rti
        .join(
            &side.federation,
            glidepath::JoinOptions::named(&side.name, "bus-bridge"),
        )
        .with_context(|| {
            format!(
                "[hla]: joining federation `{}` as `{}`",
                side.federation, side.name
            )
        })?;
    let bridge =
        HlaBridge::start(bus, federate.clone(), side.to_hla, side.from_hla).context("[hla]")?;
    Ok(HlaRunning {
        bridge,
        federate,
        rti,
        federation: side.federation,
        created,
        _executive: executive,
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
    let (config, hla) = load(&args.config, args.nats)?;
    let (routes_out, routes_in) = (config.to_nats.len(), config.from_nats.len());
    let hla_routes = hla
        .as_ref()
        .map(|h| (h.to_hla.len(), h.from_hla.len(), h.federation.clone()));
    let hla = hla.map(|side| start_hla(side, &config.bus)).transpose()?;
    let bridge = if routes_out + routes_in > 0 {
        Some(Bridge::start(config)?)
    } else {
        None
    };
    crate::say(&format!(
        "bus bridge: {routes_out} route(s) to NATS, {routes_in} from NATS{}; running{}",
        hla_routes.map_or(String::new(), |(o, i, f)| format!(
            ", {o} to HLA and {i} from HLA (federation `{f}`)"
        )),
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
            report(bridge.as_ref(), hla.as_ref());
            next += every;
        }
    }
    report(bridge.as_ref(), hla.as_ref());
    if let Some(b) = bridge {
        b.close();
    }
    if let Some(h) = hla {
        h.bridge.close();
        let _ = h.federate.resign(glidepath::ResignAction::DeleteObjects);
        if h.created {
            // Others may still be in it: then it stays.
            let _ = h.rti.destroy_federation_execution(&h.federation);
        }
    }
    Ok(())
}

fn report(bridge: Option<&Bridge>, hla: Option<&HlaRunning>) {
    if let Some(bridge) = bridge {
        let s = bridge.stats();
        println!(
            "bridge: {} to NATS, {} from NATS, {} refused (not bus messages in JSON), {} failed",
            s.to_nats, s.from_nats, s.refused_from_nats, s.failed
        );
    }
    if let Some(h) = hla {
        let s = h.bridge.stats();
        println!(
            "bridge: {} to HLA, {} from HLA, {} refused to HLA, {} refused from HLA, {} failed",
            s.to_hla, s.from_hla, s.refused_to_hla, s.refused_from_hla, s.failed
        );
    }
}

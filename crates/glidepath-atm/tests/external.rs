//! External blocks (layouts/README.md, "External blocks"): a federate the run does not
//! start joins under the block's name and publishes tracks, and the monitor measures
//! them as a traffic block's. Here the external federate is a thread of the test,
//! talking to the run only through a real nats-server, as a Python model would.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use glidepath::fom::Value;
use glidepath::{
    Bytes, Callback, Federate, JoinOptions, ResignAction, Rti, RtiConfig, TransportKind,
};
use glidepath_atm::layout::{parse_layout, Layout};
use glidepath_atm::run::{run, FrameTag, RunOptions, EXTERNAL_PROTOCOL};
use glidepath_atm::track::Track;

const STATES: [&str; 7] = [
    "deployment",
    "startup",
    "initialization",
    "execution",
    "shutdown",
    "archival",
    "retirement",
];

fn layout(join_within: &str) -> Layout {
    parse_layout(
        &format!(
            r#"
name = "external"
day_start = "2016-03-23T07:00:00Z"
[[block]]
name = "traffic"
kind = "traffic"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-24T07:00:00Z"
source = {{ kind = "generated", seed = 1, density = 0.05 }}
[[block]]
name = "model"
kind = "external"
join_within = "{join_within}"
[[block]]
name = "monitor"
kind = "monitor"
[[link]]
from = "traffic"
to = "monitor"
[[link]]
from = "model"
to = "monitor"
"#
        ),
        "external.toml",
    )
    .expect("the layout loads")
}

fn options(config: &RtiConfig, federation: &str) -> RunOptions {
    RunOptions {
        config: config.clone(),
        hours: Some(0.05),
        run_name: "ext".into(),
        federation: Some(federation.into()),
        ..Default::default()
    }
}

/// How the test's external block misbehaves, if it does.
#[derive(Clone, Copy, PartialEq)]
enum Behaviour {
    Proper,
    /// Resigns in the middle of the execution state.
    LeavesEarly,
    /// Never sends its BlockReport.
    NoReport,
}

struct ExternalBlock {
    f: Federate,
}

impl ExternalBlock {
    fn join(config: &RtiConfig, federation: &str) -> ExternalBlock {
        let rti = Rti::from_config(config).unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match rti.join(federation, JoinOptions::named("model", "external")) {
                Ok(f) => return ExternalBlock { f },
                Err(e) => {
                    assert!(Instant::now() < deadline, "cannot join: {e}");
                    thread::sleep(Duration::from_millis(100));
                }
            }
        }
    }

    fn until(&self, mut done: impl FnMut(&Callback) -> bool) -> Callback {
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            assert!(
                Instant::now() < deadline,
                "the run said nothing for 2 minutes"
            );
            if let Some(cb) = self.f.next_callback(Duration::from_millis(100)) {
                if done(&cb) {
                    return cb;
                }
            }
        }
    }

    /// Goes through the seven states publishing `per_second` tracks each second;
    /// returns how many it published.
    fn run(self, behaviour: Behaviour, per_second: u32) -> u64 {
        let f = &self.f;
        let sndem = f.interaction_class_handle("SndemMessage").unwrap();
        let (vid, message) = (
            f.parameter_handle(sndem, "vid").unwrap(),
            f.parameter_handle(sndem, "message").unwrap(),
        );
        let report = f.interaction_class_handle("BlockReport").unwrap();
        let (block, published_h) = (
            f.parameter_handle(report, "block").unwrap(),
            f.parameter_handle(report, "published").unwrap(),
        );
        let mut frame = None;
        let mut published = 0u64;
        for state in STATES {
            let announced = self.until(|cb| {
                matches!(cb, Callback::AnnounceSynchronizationPoint { label, .. } if label == state)
            });
            match state {
                "deployment" => {
                    let Callback::AnnounceSynchronizationPoint { tag, .. } = announced else {
                        unreachable!()
                    };
                    let t: FrameTag = serde_json::from_slice(&tag).expect("the frame is JSON");
                    assert_eq!(t.protocol, EXTERNAL_PROTOCOL);
                    frame = Some(t);
                }
                "startup" => {
                    f.publish_interaction_class(sndem).unwrap();
                    f.publish_interaction_class(report).unwrap();
                }
                "initialization" => {
                    let lookahead = frame.as_ref().unwrap().lookahead_s;
                    f.enable_time_regulation(lookahead).unwrap();
                    self.until(|cb| matches!(cb, Callback::TimeRegulationEnabled { .. }));
                    f.enable_time_constrained().unwrap();
                    self.until(|cb| matches!(cb, Callback::TimeConstrainedEnabled { .. }));
                }
                "execution" => {
                    let frame = frame.as_ref().unwrap();
                    for t in 0..frame.end_s {
                        if behaviour == Behaviour::LeavesEarly && t == frame.end_s / 2 {
                            f.resign(ResignAction::DeleteObjects).unwrap();
                            return published;
                        }
                        for i in 0..per_second {
                            let track = Track {
                                vid: format!("EXT{i:03}"),
                                lat_deg: 37.0 + f64::from(t) * 1e-3,
                                lon_deg: -122.0,
                                alt_ft: 30_000.0,
                                time: (frame.day_start + i64::from(t)) * 1000,
                                gs_kt: 400.0,
                                crs_deg: 90.0,
                                vs_fpm: 0.0,
                                ..Track::default()
                            };
                            f.send_interaction(
                                sndem,
                                [
                                    (vid, Bytes::from(track.vid.clone())),
                                    (message, Bytes::from(track.to_sndem_json())),
                                ],
                                Bytes::new(),
                            )
                            .unwrap();
                            published += 1;
                        }
                        f.time_advance_request(f64::from(t + 1)).unwrap();
                        self.until(|cb| matches!(cb, Callback::TimeAdvanceGrant { .. }));
                    }
                }
                "shutdown" => {
                    f.flush().unwrap();
                    if behaviour != Behaviour::NoReport {
                        let fom = f.fom();
                        let name = fom
                            .encode_value("HLAunicodeString", &Value::Text("model".into()))
                            .unwrap();
                        let n = fom
                            .encode_value("HLAinteger64BE", &Value::Int(published as i64))
                            .unwrap();
                        f.send_interaction(
                            report,
                            [(block, Bytes::from(name)), (published_h, Bytes::from(n))],
                            Bytes::new(),
                        )
                        .unwrap();
                    }
                    f.disable_time_regulation().unwrap();
                }
                _ => {}
            }
            f.synchronization_point_achieved(state).unwrap();
            self.until(
                |cb| matches!(cb, Callback::FederationSynchronized { label, .. } if label == state),
            );
        }
        let _ = f.resign(ResignAction::DeleteObjects);
        published
    }
}

fn nats() -> (glidepath::backend::nats::NatsTestbed, RtiConfig) {
    let testbed = glidepath::backend::nats::NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = testbed.url();
    (testbed, config)
}

/// Runs the layout with the test's external block behaving as `behaviour`; returns the
/// run's result and what the block published.
fn run_with_external(
    config: &RtiConfig,
    federation: &str,
    behaviour: Behaviour,
) -> (Result<glidepath_atm::report::RunReport, String>, u64) {
    let (tx, rx) = mpsc::channel();
    let (layout, opts) = (layout("1 min"), options(config, federation));
    thread::spawn(move || {
        let _ = tx.send(run(&layout, &opts).map_err(|e| e.to_string()));
    });
    let block = ExternalBlock::join(config, federation);
    let published = block.run(behaviour, 7);
    let result = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the run ended within 2 minutes of its external block");
    (result, published)
}

#[test]
fn an_external_blocks_tracks_are_measured_by_the_monitor_and_nothing_is_lost() {
    let (_testbed, config) = nats();
    let (result, published) = run_with_external(&config, "external-ok", Behaviour::Proper);
    let report = result.expect("the run completes");
    assert_eq!(published, 7 * 180, "7 tracks a second for 0.05 h");
    let external = report
        .sources
        .iter()
        .find(|s| s.block == "model")
        .expect("the external block is among the sources");
    assert_eq!(external.kind, "external");
    assert_eq!(external.published, published);
    let traffic = report
        .sources
        .iter()
        .find(|s| s.block == "traffic")
        .unwrap();
    assert!(traffic.published > 0);
    assert_eq!(report.published, published + traffic.published);
    assert_eq!(
        report.received, report.published,
        "every track reached the monitor"
    );
    assert_eq!(
        (report.lost, report.duplicated, report.malformed),
        (0, 0, 0)
    );
    // Its seconds are counted in the per-second frequencies with the traffic's.
    assert!(report.per_second.iter().all(|s| s.messages >= 7));
}

#[test]
fn an_external_block_that_leaves_early_fails_the_run_naming_it() {
    let (_testbed, config) = nats();
    let (result, _) = run_with_external(&config, "external-leaves", Behaviour::LeavesEarly);
    let e = result.expect_err("the block left");
    assert!(
        e.contains("block `model`") && e.contains("left the federation"),
        "{e}"
    );
}

#[test]
fn an_external_block_without_a_report_fails_the_run_naming_it() {
    let (_testbed, config) = nats();
    let (result, _) = run_with_external(&config, "external-silent", Behaviour::NoReport);
    let e = result.expect_err("no report");
    assert!(
        e.contains("block `model`") && e.contains("no BlockReport"),
        "{e}"
    );
}

#[test]
fn an_external_block_that_never_joins_fails_the_run_after_join_within() {
    let (_testbed, config) = nats();
    let started = Instant::now();
    let e = run(&layout("1 s"), &options(&config, "external-absent"))
        .expect_err("nobody joined")
        .to_string();
    assert!(
        e.contains("block `model`") && e.contains("did not join"),
        "{e}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the wait is join_within's"
    );
}

#[test]
fn an_external_block_needs_a_transport_another_process_reaches() {
    let e = run(
        &layout("1 min"),
        &options(&RtiConfig::default(), "external-inproc"),
    )
    .expect_err("inproc is refused")
    .to_string();
    assert!(
        e.contains("external block `model`") && e.contains("nats or shm"),
        "{e}"
    );
}

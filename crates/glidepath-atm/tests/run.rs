//! Runs a short slice of the ATM TestBed layout through every backend and checks the
//! report: counts add up, nothing is lost, Table 4.2 has its shape; a recording of one
//! run played back into another delivers the same messages.

use std::path::PathBuf;
use std::sync::Arc;

use glidepath::{RtiConfig, TransportKind};
use glidepath_atm::layout::{load_layout, parse_layout};
use glidepath_atm::report::RunReport;
use glidepath_atm::run::{run, Codec, Live, RunOptions};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn day_layout() -> glidepath_atm::layout::Layout {
    load_layout(&repo().join("layouts/atm-testbed-day.toml")).expect("the shipped layout loads")
}

/// A quarter of an hour of the day at a twentieth of the traffic.
fn slice(config: RtiConfig, codec: Codec) -> RunOptions {
    RunOptions {
        config,
        codec,
        hours: Some(0.25),
        density: Some(0.05),
        run_name: "test".into(),
        ..Default::default()
    }
}

fn check(report: &RunReport) {
    assert!(report.published > 1000, "{} published", report.published);
    assert_eq!(report.received, report.published, "received = published");
    assert_eq!(report.lost, 0);
    assert_eq!(report.duplicated, 0);
    assert_eq!(report.malformed, 0);
    // Table 4.2's shape: one length per message, one frequency per simulated second.
    let lengths = report.lengths.summary().expect("lengths");
    assert_eq!(lengths.count, report.received);
    let frequencies = report.frequencies.summary().expect("frequencies");
    assert_eq!(frequencies.count, 900, "a quarter of an hour of seconds");
    let per_second: u64 = report
        .per_second
        .iter()
        .map(|s| u64::from(s.messages))
        .sum();
    assert_eq!(
        per_second, report.received,
        "every message falls in a second"
    );
    assert_eq!(report.latency_us.count(), report.received);
    assert!(report.peak_flights > 0);
    let states: Vec<&str> = report
        .state_durations_s
        .iter()
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(
        states,
        [
            "deployment",
            "startup",
            "initialization",
            "execution",
            "shutdown",
            "archival",
            "retirement"
        ]
    );
    let json = report.to_json();
    for key in [
        "published",
        "received",
        "lost",
        "execution_s",
        "throughput_mbit_s",
        "peak_flights",
    ] {
        assert!(json.get(key).is_some(), "report.json has {key}");
    }
    for table in ["lengths", "frequencies", "latency_ms"] {
        for stat in ["min", "p25", "p50", "p75", "max", "mean", "sd", "count"] {
            assert!(
                json[table].get(stat).is_some(),
                "report.json {table}.{stat}"
            );
        }
    }
    for state in states {
        assert!(json["state_durations_s"].get(state).is_some(), "{state}");
    }
}

#[test]
fn a_slice_of_the_day_loses_nothing_inproc() {
    let report = run(&day_layout(), &slice(RtiConfig::default(), Codec::Json)).unwrap();
    check(&report);
    // SNDEM JSON lengths stay in the memorandum's range.
    let lengths = report.lengths.summary().unwrap();
    assert!(lengths.min >= 180.0 && lengths.max <= 230.0, "{lengths:?}");
    let dir = std::env::temp_dir().join(format!("glidepath-atm-report-{}", std::process::id()));
    let written = report.write(&dir).unwrap();
    assert!(written.iter().any(|p| p.ends_with("report.json")));
    assert!(written
        .iter()
        .any(|p| p.extension().is_some_and(|e| e == "png")));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Also checks the live view the portal reads: after the run it agrees with the
/// report, second by second and block by block.
#[test]
fn a_slice_of_the_day_loses_nothing_with_the_binary_codec() {
    let live = Arc::new(Live::new());
    let options = RunOptions {
        live: Some(live.clone()),
        ..slice(RtiConfig::default(), Codec::Binary)
    };
    let report = run(&day_layout(), &options).unwrap();
    check(&report);

    let seen = live.snapshot(0);
    assert_eq!(seen.layout, "atm-testbed-day");
    assert_eq!(seen.run, "test");
    assert_eq!(seen.state, None, "no state after the run");
    let states: Vec<&str> = seen.states.iter().map(|s| s.state.as_str()).collect();
    let reported: Vec<&str> = report
        .state_durations_s
        .iter()
        .map(|(s, _)| s.as_str())
        .collect();
    assert_eq!(states, reported);
    assert_eq!(seen.end, 900);
    assert_eq!(seen.second, 900);
    let per_second: Vec<u32> = report.per_second.iter().map(|s| s.messages).collect();
    assert_eq!(
        seen.per_second, per_second,
        "the live seconds are the report's"
    );
    assert_eq!(seen.received, report.received);
    assert_eq!(seen.published, report.published);
    let published: u64 = seen.blocks.values().map(|b| b.published).sum();
    assert_eq!(published, report.published);
    let monitor = &seen.blocks["Network Performance"];
    assert_eq!(
        (monitor.kind.as_str(), monitor.received),
        ("monitor", report.received)
    );
    let latency = seen.latency_us.expect("latency measured");
    assert_eq!(latency.count, report.received);
    assert!(latency.p50 <= latency.p99 && latency.p99 <= latency.max);
    let outcome = seen.outcome.expect("an outcome");
    assert!(outcome.ok, "{}", outcome.message);
    assert_eq!((outcome.published, outcome.lost), (report.published, 0));
    // Asking from a later second gives only the rest.
    let tail = live.snapshot(850);
    assert_eq!((tail.per_second_from, tail.per_second.len()), (850, 50));
    assert_eq!(live.snapshot(5000).per_second.len(), 0);
}

#[test]
fn a_credit_window_bounds_what_is_in_flight_and_loses_nothing() {
    let live = Arc::new(Live::new());
    let options = RunOptions {
        credit: Some(4),
        live: Some(live.clone()),
        ..slice(RtiConfig::default(), Codec::Json)
    };
    let report = run(&day_layout(), &options).unwrap();
    check(&report);
    let peak = live.credit_peak();
    assert!((1..=4).contains(&peak), "in flight at most 4, saw {peak}");
    let refused = run(
        &day_layout(),
        &RunOptions {
            credit: Some(0),
            ..slice(RtiConfig::default(), Codec::Json)
        },
    );
    assert!(refused.is_err_and(|e| e.to_string().contains("lets nothing through")));
}

#[test]
fn a_slice_of_the_day_loses_nothing_over_nats() {
    let testbed = glidepath::backend::nats::NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = testbed.url();
    let report = run(&day_layout(), &slice(config.clone(), Codec::Json)).unwrap();
    check(&report);
    assert_eq!(report.transport, "nats");
    // Compression on: the same messages arrive.
    config
        .apply_args(["--compression".to_string(), "lz4".to_string()])
        .unwrap();
    let compressed = run(&day_layout(), &slice(config, Codec::Json)).unwrap();
    check(&compressed);
    assert_eq!(
        compressed.published, report.published,
        "the same seeded traffic"
    );
}

#[test]
fn a_recording_plays_back_into_a_later_run() {
    let dir = std::env::temp_dir().join(format!("glidepath-atm-rec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let recording = dir.join("run.rec");
    let record = format!(
        r#"
name = "record"
day_start = "2016-03-23T07:00:00Z"
[[block]]
name = "traffic"
kind = "traffic"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-24T07:00:00Z"
source = {{ kind = "generated", seed = 7, density = 0.05 }}
[[block]]
name = "monitor"
kind = "monitor"
[[block]]
name = "recorder"
kind = "recorder"
output = "{}"
[[link]]
from = "traffic"
to = "monitor"
[[link]]
from = "traffic"
to = "recorder"
"#,
        recording.display()
    );
    let layout = parse_layout(&record, "record.toml").unwrap();
    let first = run(&layout, &slice(RtiConfig::default(), Codec::Json)).unwrap();
    check(&first);
    let play = format!(
        r#"
name = "play"
day_start = "2016-03-23T07:00:00Z"
[[block]]
name = "player"
kind = "player"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-24T07:00:00Z"
source = {{ kind = "recording", path = "{}" }}
[[block]]
name = "monitor"
kind = "monitor"
[[link]]
from = "player"
to = "monitor"
"#,
        recording.display()
    );
    let layout = parse_layout(&play, "play.toml").unwrap();
    let second = run(&layout, &slice(RtiConfig::default(), Codec::Json)).unwrap();
    check(&second);
    assert_eq!(
        second.published, first.published,
        "the recording holds every message"
    );
    assert_eq!(second.bytes, first.bytes, "byte for byte");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unlinked_source_reaches_nobody() {
    let layout_text = |stray: &str| {
        format!(
            r#"
name = "unlinked"
day_start = "2016-03-23T07:00:00Z"
[[block]]
name = "linked"
kind = "traffic"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-24T07:00:00Z"
source = {{ kind = "generated", seed = 1, density = 0.05 }}
{stray}
[[block]]
name = "monitor"
kind = "monitor"
[[link]]
from = "linked"
to = "monitor"
"#
        )
    };
    let stray = r#"
[[block]]
name = "stray"
kind = "traffic"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-24T07:00:00Z"
source = { kind = "generated", seed = 2, density = 0.05 }
"#;
    let with_stray = parse_layout(&layout_text(stray), "with-stray.toml").unwrap();
    let alone = parse_layout(&layout_text(""), "alone.toml").unwrap();
    let a = run(&with_stray, &slice(RtiConfig::default(), Codec::Json)).unwrap();
    let b = run(&alone, &slice(RtiConfig::default(), Codec::Json)).unwrap();
    check(&a);
    check(&b);
    // The stray block published too, but no link leads from it to the monitor.
    assert_eq!(a.received, b.received);
    assert_eq!(a.bytes, b.bytes);
}

/// A block that fails stops the run at once: the manager stops the other blocks,
/// which would otherwise wait for announcements that never come, and the error names
/// the block that failed, not one it stopped.
#[test]
fn a_failing_block_stops_the_run_and_is_named() {
    let layout = parse_layout(
        r#"
name = "missing"
day_start = "2016-03-23T07:00:00Z"
[[block]]
name = "traffic"
kind = "traffic"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-24T07:00:00Z"
source = { kind = "generated", seed = 7, density = 0.05 }
[[block]]
name = "replay"
kind = "player"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-24T07:00:00Z"
source = { kind = "recording", path = "/nonexistent/glidepath/run.rec" }
[[block]]
name = "monitor"
kind = "monitor"
[[link]]
from = "traffic"
to = "monitor"
[[link]]
from = "replay"
to = "monitor"
"#,
        "missing.toml",
    )
    .unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(run(&layout, &slice(RtiConfig::default(), Codec::Json)));
    });
    let result = rx
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the run did not stop within a minute of a block failing");
    let e = result.expect_err("a block failed").to_string();
    assert!(
        e.contains("block `replay`") && e.contains("not found"),
        "{e}"
    );
}

/// A generated source whose window holds no track (a sparse day, a short window) fails
/// the run rather than leaving an empty report behind.
#[test]
fn a_generated_source_that_publishes_nothing_fails_the_run() {
    let layout = parse_layout(
        r#"
name = "sparse"
[[block]]
name = "traffic"
kind = "traffic"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-23T07:00:02Z"
source = { kind = "generated", seed = 1, density = 0.00001 }
[[block]]
name = "monitor"
kind = "monitor"
[[link]]
from = "traffic"
to = "monitor"
"#,
        "sparse.toml",
    )
    .unwrap();
    let opts = RunOptions {
        hours: Some(0.01),
        ..RunOptions::default()
    };
    let e = run(&layout, &opts)
        .expect_err("nothing to publish")
        .to_string();
    assert_eq!(
        e,
        "block `traffic`: execution: published nothing in its window 2016-03-23T07:00:00Z + 2 s: its source has no track there"
    );
}

/// A monitor with a sector receives, through DDM, exactly the tracks inside it: the
/// count is the generator's own tracks in the sector, counted here independently
/// (no false negatives, no false positives), and nothing in the sector is lost.
fn a_sectored_monitor_gets_exactly_the_tracks_inside(config: RtiConfig) {
    use glidepath_atm::layout::sector::Point;
    use glidepath_atm::traffic::{TrafficConfig, TrafficDay};
    let layout = parse_layout(
        r#"
name = "sector"
day_start = "2016-03-23T07:00:00Z"
[[block]]
name = "traffic"
kind = "traffic"
scheduled_period = "1 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = "2016-03-24T07:00:00Z"
source = { kind = "generated", seed = 1, density = 0.05 }
[[block]]
name = "west"
kind = "monitor"
sector = { lat = [32.0, 42.0], lon = [-125.0, -114.0], alt_ft = [10000, 30000] }
[[link]]
from = "traffic"
to = "west"
"#,
        "sector.toml",
    )
    .unwrap();
    let sector = layout.block("west").unwrap().sector.unwrap();
    let opts = RunOptions {
        hours: Some(0.1),
        ..slice(config, Codec::Json)
    };
    let report = run(&layout, &opts).unwrap();
    let mut day = TrafficDay::new(TrafficConfig {
        seed: 1,
        start_s: 0,
        end_s: 360,
        density: 0.05,
        ..TrafficConfig::default()
    })
    .unwrap();
    let (mut all, mut inside, mut tracks) = (0u64, 0u64, Vec::new());
    for t in 0..360 {
        day.second_reusing(t, &mut tracks);
        all += tracks.len() as u64;
        inside += tracks
            .iter()
            .filter(|k| sector.contains(Point::of(k.lat_deg, k.lon_deg, k.alt_ft)))
            .count() as u64;
    }
    let source = &report.sources[0];
    assert_eq!(source.published, all, "the block published every track");
    assert_eq!(source.in_sector, Some(inside));
    assert!(inside > 0 && inside < all / 2, "{inside} of {all} inside");
    assert_eq!(report.published, inside, "what the monitor was sent");
    assert_eq!(report.received, inside, "exactly the tracks inside arrived");
    assert_eq!(
        (report.lost, report.duplicated, report.malformed),
        (0, 0, 0)
    );
}

#[test]
fn a_sectored_monitor_gets_exactly_the_tracks_inside_inproc() {
    a_sectored_monitor_gets_exactly_the_tracks_inside(RtiConfig::default());
}

#[test]
fn a_sectored_monitor_gets_exactly_the_tracks_inside_over_nats() {
    let testbed = glidepath::backend::nats::NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = testbed.url();
    a_sectored_monitor_gets_exactly_the_tracks_inside(config);
}

//! The end-of-run report (issue 5): built from synthetic data shaped like the
//! memorandum's day, its tables carry the headers and numbers of Tables 4.2, 4.3, 4.5 and
//! 4.7, `report.json` has every documented key, `write` produces the files (PNG figures
//! included), and the matrix table stands next to the memorandum's runs.

use std::path::PathBuf;

use glidepath::stats::Recorder;
use glidepath_atm::report::{matrix_table, RunReport, SecondStats, SourceStats, STATES};

/// Two simulated hours: flights and messages rising then falling, lengths 193..219
/// around 210 B, latencies of a few hundred microseconds with a rare 70 ms outlier.
fn synthetic() -> RunReport {
    let mut lengths = Recorder::new();
    let mut frequencies = Recorder::new();
    let mut latency_us = Recorder::new();
    let mut per_second = Vec::new();
    let mut published = 0u64;
    let mut bytes = 0u64;
    for t in 0..7200u32 {
        let flights = 1000 + (t % 3600) / 2;
        let messages = 24 + (t * 7919) % 1756;
        per_second.push(SecondStats {
            t,
            messages,
            flights,
            callsigns_in_minute: flights + 40,
        });
        frequencies.record(u64::from(messages));
        for i in 0..messages {
            let len = 193 + u64::from((i * 31 + t) % 27);
            lengths.record(len);
            latency_us.record(u64::from((i * 37 + t) % 900));
            bytes += len;
            published += 1;
        }
    }
    latency_us.record(70_000);
    let execution_s = 12.5;
    RunReport {
        run: "inproc-json-none".into(),
        layout: "atm-testbed-day".into(),
        transport: "inproc".into(),
        codec: "json".into(),
        compression: "none".into(),
        persistence: false,
        deployment: "threads".into(),
        credit: None,
        day_start: 1_458_716_400,
        hours: 2.0,
        published,
        received: published,
        lost: 0,
        duplicated: 0,
        malformed: 0,
        bytes,
        execution_s,
        throughput_mbit_s: bytes as f64 * 8.0 / execution_s / 1e6,
        peak_flights: 2799,
        peak_flights_s: Some(3598),
        peak_callsigns_per_minute: 2839,
        lengths,
        frequencies,
        latency_us,
        per_second,
        sources: vec![
            SourceStats {
                block: "ATAC Data:1".into(),
                kind: "generated".into(),
                window_s: (0, 7200),
                rows: published - 10,
                published: published - 10,
                ..SourceStats::default()
            },
            SourceStats {
                block: "Recorded".into(),
                kind: "adsb_csv".into(),
                path: Some("data/states.csv".into()),
                window_s: (0, 7200),
                rows: 14,
                published: 10,
                before_window: 1,
                after_window: 1,
                bad_rows: 2,
                bad_examples: vec![
                    "line 3: `lat` is `north`, not a number".into(),
                    "line 9: `time` is empty".into(),
                ],
                empty_callsigns: 3,
                first_ms: Some(1_458_716_399_000),
                last_ms: Some(1_458_723_600_000),
                reading: Some("timestamps: Unix milliseconds (detected)".into()),
                in_sector: None,
            },
        ],
        state_durations_s: STATES
            .iter()
            .enumerate()
            .map(|(i, s)| {
                (
                    s.to_string(),
                    if *s == "execution" {
                        execution_s
                    } else {
                        0.001 * (i + 1) as f64
                    },
                )
            })
            .collect(),
    }
}

#[test]
fn tables_have_the_memorandum_layout_and_our_numbers() {
    let r = synthetic();
    let text = r.tables();
    println!("{text}");
    for header in [
        "Table 4.2",
        "Table 4.3",
        "Table 4.5",
        "Table 4.7",
        "| Message | Min | P25 | P50 | P75 | Max | Mean | SD | Unit | Count |",
        "| Run | Min | P25 | P50 | P75 | Max | Mean | SD | Unit | Count |",
        "Deployment",
        "Initialization",
        "Retirement",
        "**Total**",
        "Published",
        "Received",
        "Lost",
        "Peak flights",
    ] {
        assert!(text.contains(header), "missing {header:?}");
    }
    let l = r.lengths.summary().unwrap();
    assert_eq!((l.min, l.max), (193.0, 219.0));
    assert!(
        text.contains(&format!(
            "| Lengths | 193 | {} | {} | {} | 219 | {:.2} |",
            l.p25, l.p50, l.p75, l.mean
        )),
        "lengths row"
    );
    // The memorandum's own rows for comparison.
    assert!(text.contains("| 193 | 207 | 210 | 212 | 219 | 209.63 | 3.15 | bytes | 43,308,919 |"));
    assert!(text.contains("| 24 | 247 | 525 | 704 | 1,779 | 501.26 | 281.79 | msg/s | 86,400 |"));
    assert!(text.contains("| 0 | 0 | 0 | 0 | 70 | 0.0113 | 0.119 | ms | 43,308,919 |"));
    assert!(text.contains("| 0 | 0 | 1 | 2 | 139 | 1.49 | 3.144 | ms | 43,308,917 |"));
    // Latency in ms from the exact microsecond summary: the outlier is the max.
    assert!(text.contains("| 70.000 | "), "latency max 70 ms");
    assert!(text.contains(&format!("| {} |", fmt_group(r.published))));
    assert!(text.contains("663.702") && text.contains("109.430"));
    assert!(text.contains("every published message was received"));
    // Flights counted as the memorandum counts them, at the second they peak; the
    // coarser per-minute count under its own name.
    assert!(
        text.contains("| Peak flights (airborne in one second, first to last message) | 2,799 at 2016-03-23T07:59:58Z | 4,744 at 2016-03-23T20:44:43Z |"),
        "peak flights row"
    );
    assert!(text.contains("| Most distinct callsigns reporting in one minute | 2,839 | |"));
    assert!(text.contains("simulated hours from 2016-03-23T07:00:00Z"));
    // Every source: what it played and what it skipped, with the lines.
    assert!(text.contains("## Traffic sources"));
    assert!(text.contains(
        "| Recorded | adsb_csv `data/states.csv` | 2016-03-23T07:00:00Z + 2 h | 14 | 10 | 1 | 1 | 2 | 3 |"
    ), "recorded source row");
    assert!(text.contains("| ATAC Data:1 | generated | 2016-03-23T07:00:00Z + 2 h |"));
    assert!(text.contains("line 3: `lat` is `north`, not a number; line 9: `time` is empty"));
    assert!(text.contains("rows from 2016-03-23T06:59:59Z to 2016-03-23T09:00:00Z"));
    assert!(text.contains("3 rows without a callsign published under their icao24"));
    let mut lossy = synthetic();
    lossy.received -= 2;
    lossy.lost = 2;
    assert!(lossy.tables().contains("received ≠ published"));
}

fn fmt_group(v: u64) -> String {
    let s = v.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn json_has_every_key() {
    let r = synthetic();
    let j = r.to_json();
    for key in [
        "run",
        "layout",
        "transport",
        "codec",
        "compression",
        "persistence",
        "hours",
        "published",
        "received",
        "lost",
        "duplicated",
        "malformed",
        "bytes",
        "execution_s",
        "throughput_mbit_s",
        "peak_flights",
        "total_s",
    ] {
        assert!(!j[key].is_null(), "missing {key}");
    }
    for obj in ["lengths", "frequencies", "latency_ms"] {
        for key in ["min", "p25", "p50", "p75", "max", "mean", "sd", "count"] {
            assert!(j[obj][key].is_number(), "missing {obj}.{key}");
        }
    }
    for state in STATES {
        assert!(
            j["state_durations_s"][state].is_number(),
            "missing state {state}"
        );
    }
    assert_eq!(j["state_durations_s"].as_object().unwrap().len(), 7);
    assert_eq!(j["published"].as_u64(), Some(r.published));
    assert_eq!(j["latency_ms"]["max"].as_f64(), Some(70.0));
    assert_eq!(j["latency_ms"]["count"].as_u64(), Some(r.published + 1));
    assert_eq!(j["frequencies"]["count"].as_u64(), Some(7200));
    assert_eq!(j["lengths"]["min"].as_f64(), Some(193.0));
    assert_eq!(j["persistence"].as_bool(), Some(false));
    assert_eq!(j["day_start"].as_str(), Some("2016-03-23T07:00:00Z"));
    assert_eq!(j["peak_flights_at"].as_str(), Some("2016-03-23T07:59:58Z"));
    assert_eq!(j["peak_callsigns_per_minute"].as_u64(), Some(2839));
    let recorded = &j["sources"][1];
    for (key, want) in [
        ("rows", 14),
        ("published", 10),
        ("before_window", 1),
        ("after_window", 1),
        ("bad_rows", 2),
        ("empty_callsigns", 3),
    ] {
        assert_eq!(recorded[key].as_u64(), Some(want), "sources[1].{key}");
    }
    assert_eq!(recorded["window_s"], serde_json::json!([0, 7200]));
    assert_eq!(recorded["bad_examples"][1], "line 9: `time` is empty");

    // An empty run still has every key (null statistics, zero counts), and no panic.
    let empty = RunReport::default();
    let j = empty.to_json();
    assert_eq!(j["latency_ms"]["count"].as_u64(), Some(0));
    assert!(j["latency_ms"]["p50"].is_null());
    assert!(j["state_durations_s"]["execution"].is_null());
    assert!(empty.tables().contains("Table 4.2"));
}

#[test]
fn write_creates_report_files_and_pngs() {
    let dir = std::env::temp_dir().join(format!("glidepath-report-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let r = synthetic();
    let written = r
        .write(&dir.join("nested"))
        .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    for expected in [
        "report.json",
        "report.md",
        "fig4_1a_flights.png",
        "fig4_1b_messages.png",
        "fig4_2a_lengths.png",
        "fig4_2b_frequencies.png",
        "fig4_3_latency.png",
    ] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not in {names:?}"
        );
    }
    for p in &written {
        let data = std::fs::read(p).unwrap();
        if p.extension().is_some_and(|e| e == "png") {
            assert_eq!(
                &data[..8],
                b"\x89PNG\r\n\x1a\n",
                "{} is not a PNG",
                p.display()
            );
        }
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("nested/report.json")).unwrap()).unwrap();
    assert_eq!(json, r.to_json());
    let md = std::fs::read_to_string(dir.join("nested/report.md")).unwrap();
    assert!(md.starts_with(&r.tables()));
    assert!(md.contains("(fig4_3_latency.png)"));
    // Figures drawn from a sample say so; those drawn from every value do not.
    let caption = |name: &str| {
        md.lines()
            .find(|l| l.contains(&format!("({name})")))
            .unwrap_or_else(|| panic!("no caption for {name}"))
            .to_string()
    };
    let latency = caption("fig4_3_latency.png");
    assert!(
        latency.contains(", drawn from a sample of ")
            && latency.contains(&format!("of {} messages", fmt_group(r.latency_us.count()))),
        "{latency}"
    );
    assert!(caption("fig4_2a_lengths.png").contains("sample"));
    assert!(!caption("fig4_2b_frequencies.png").contains("sample"));
    assert!(caption("fig4_1a_flights.png").contains("first to last message"));

    // A run with no per-second series and no samples still writes a report.
    let empty: Vec<PathBuf> = RunReport::default().write(&dir.join("empty")).unwrap();
    assert!(empty.iter().all(|p| p.exists()));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn matrix_table_stands_next_to_the_memorandum() {
    let a = synthetic();
    let mut b = synthetic();
    b.run = "nats-json-lz4".into();
    b.transport = "nats".into();
    b.compression = "lz4".into();
    b.execution_s = 20.0;
    b.credit = Some(1);
    let text = matrix_table(&[a, b]);
    println!("{text}");
    assert!(text.contains("| Run | Transport |"));
    assert!(text.contains("| inproc-json-none | inproc | json | none | off | — |"));
    assert!(text.contains("| nats-json-lz4 | nats | json | lz4 | off | 1 |"));
    for memo in [
        "1A (memorandum)",
        "663.702",
        "109.430",
        "0.0113",
        "| 70 |",
        "4A (memorandum)",
        "673.550",
        "107.831",
        "1.49",
        "| 139 |",
        "2A (memorandum)",
        "4,786.092",
        "15.175",
        "43,308,917",
        "| 2 |",
    ] {
        assert!(text.contains(memo), "missing {memo:?}");
    }
    assert_eq!(text.lines().count(), 2 + 2 + 3);
}

//! Real recorded traffic through a run (issue 12): the OpenSky sample kept in
//! `data/recorded/` played by `layouts/recorded-switzerland.toml` (every row published
//! and received, nothing skipped, second 0 and the length taken from the data); the
//! same rows with their times in seconds, milliseconds, microseconds and ISO 8601 play
//! the same messages, as does the sample in OpenSky's column names and SI units; skipped
//! rows (rows without a position among them) are counted and named; and a source with
//! no row in its window fails the run with the reason.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use glidepath_atm::layout::{format_rfc3339, load_layout, parse_layout, parse_rfc3339};
use glidepath_atm::report::RunReport;
use glidepath_atm::run::{frame, run, RunOptions};
use glidepath_atm::track::Track;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn sample() -> PathBuf {
    repo().join("data/recorded/switzerland-2018-08-01T1130Z.csv")
}

/// Rows of the sample (its header aside) and the instant of its first row.
const SAMPLE_ROWS: u64 = 2_359;
const FIRST_ROW: &str = "2018-08-01T11:30:00Z";

fn options() -> RunOptions {
    RunOptions {
        run_name: "recorded".into(),
        ..RunOptions::default()
    }
}

/// A scratch directory for one test, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "glidepath-atm-recorded-{name}-{}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
    fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, contents).unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The sample's rows as (timestamp ms, the rest of the line).
fn sample_rows() -> (String, Vec<(i64, String)>) {
    let text = std::fs::read_to_string(sample()).unwrap();
    let mut lines = text.lines();
    let header = lines.next().unwrap().to_string();
    assert!(header.starts_with("timestamp,"), "{header}");
    let rows = lines
        .map(|l| {
            let (t, rest) = l.split_once(',').unwrap();
            (t.parse().unwrap(), rest.to_string())
        })
        .collect();
    (header, rows)
}

/// Flights airborne per second counted independently of the monitor: each callsign
/// (column 3) from its first row to its last; the most and the first second of it.
fn peak_airborne(rows: &[(i64, String)], day_start: i64) -> (u64, u32) {
    let mut spans: HashMap<&str, (i64, i64)> = HashMap::new();
    for (t, rest) in rows {
        let callsign = rest.split(',').nth(1).unwrap();
        let s = t / 1000 - day_start;
        let e = spans.entry(callsign).or_insert((s, s));
        *e = (e.0.min(s), e.1.max(s));
    }
    let mut best = (0, 0);
    for s in 0..=spans.values().map(|e| e.1).max().unwrap() {
        let n = spans.values().filter(|e| e.0 <= s && s <= e.1).count() as u64;
        if n > best.0 {
            best = (n, s as u32);
        }
    }
    best
}

fn check_received_everything(r: &RunReport) {
    assert_eq!(r.received, r.published, "received = published");
    assert_eq!((r.lost, r.duplicated, r.malformed), (0, 0, 0));
    let per_second: u64 = r.per_second.iter().map(|s| u64::from(s.messages)).sum();
    assert_eq!(per_second, r.received, "every message falls in a second");
}

/// The shipped layout plays the shipped sample: second 0 is its first row, the run
/// lasts as long as the data, every row is published and received, nothing skipped.
#[test]
fn the_recorded_sample_plays_every_row() {
    let layout = load_layout(&repo().join("layouts/recorded-switzerland.toml"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(layout.day_start, None, "the layout names no instant");
    let f = frame(&layout, &options()).unwrap();
    assert_eq!(f.day_start, parse_rfc3339(FIRST_ROW).unwrap());
    // The last row is at 11:39:50Z: the run covers up to the end of its second.
    assert_eq!(f.end_s, 591);
    let described = f.describe();
    assert!(
        described.contains(
            "second 0 at 2018-08-01T11:30:00Z (the first row of block `OpenSky Switzerland`"
        ) && described
            .contains("length 9 min 51 s (591 s, to 2018-08-01T11:39:51Z; the span of the data"),
        "{described}"
    );

    let r = run(&layout, &options()).unwrap_or_else(|e| panic!("{e}"));
    check_received_everything(&r);
    assert_eq!(r.published, SAMPLE_ROWS);
    assert_eq!(r.day_start, f.day_start);
    assert_eq!(
        r.frequencies.count(),
        591,
        "one frequency per simulated second"
    );
    let s = &r.sources[0];
    assert_eq!(s.block, "OpenSky Switzerland");
    assert_eq!(s.kind, "adsb_csv");
    assert_eq!(
        (
            s.rows,
            s.published,
            s.before_window,
            s.after_window,
            s.bad_rows,
            s.empty_callsigns
        ),
        (SAMPLE_ROWS, SAMPLE_ROWS, 0, 0, 0, 0)
    );
    assert!(s.bad_examples.is_empty());
    assert_eq!(s.window_s, (0, 591));
    assert_eq!(
        s.reading.as_deref(),
        Some("timestamps: Unix milliseconds (detected)")
    );
    // Figure 4.1(a)'s count, as the memorandum counts: flights from first to last message.
    let (_, rows) = sample_rows();
    let (peak, at) = peak_airborne(&rows, f.day_start);
    assert_eq!((r.peak_flights, r.peak_flights_s), (peak, Some(at)));
    assert_eq!(r.per_second[at as usize].flights as u64, peak);
    assert!(r.peak_callsigns_per_minute >= r.peak_flights);
    // Every message carries its block as publisher and the run's name.
    assert!(r.tables().contains("| OpenSky Switzerland | adsb_csv `"));
}

/// The sample with its `timestamp` column rewritten by `write`.
fn rewritten(dir: &Scratch, name: &str, write: impl Fn(i64) -> String) -> PathBuf {
    let (header, rows) = sample_rows();
    let mut text = header + "\n";
    for (t, rest) in &rows {
        text.push_str(&format!("{},{rest}\n", write(*t)));
    }
    dir.file(name, &text)
}

/// A layout playing `csv` to a monitor and a recorder writing to `recording`.
fn recording_layout(csv: &Path, recording: &Path) -> String {
    format!(
        r#"
name = "forms"
[[block]]
name = "Recorded"
kind = "traffic"
scheduled_period = "1 s"
source = {{ kind = "adsb_csv", path = "{}" }}
[[block]]
name = "Monitor"
kind = "monitor"
[[block]]
name = "Recorder"
kind = "recorder"
output = "{}"
[[link]]
from = "Recorded"
to = "Monitor"
[[link]]
from = "Recorded"
to = "Recorder"
"#,
        csv.display(),
        recording.display()
    )
}

/// The messages of a recording (`run/recording.rs`: an 8-byte magic, then per message
/// the simulated second, the length and the bytes), as tracks with their publication
/// stamp cleared: what was played, not when.
fn recorded_tracks(path: &Path) -> Vec<(u32, Track)> {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"GPREC01\n");
    let mut rest = &bytes[8..];
    let mut out = Vec::new();
    while !rest.is_empty() {
        let second = u32::from_le_bytes(rest[..4].try_into().unwrap());
        let len = u32::from_le_bytes(rest[4..8].try_into().unwrap()) as usize;
        let mut track = Track::from_sndem_json(&rest[8..8 + len]).unwrap();
        track.meta.tpub = 0;
        out.push((second, track));
        rest = &rest[8 + len..];
    }
    out
}

/// Writes a row's timestamp (given in Unix milliseconds) in one of the forms.
type TimeWriter = Box<dyn Fn(i64) -> String>;

/// Acceptance (issue 12): a CSV with millisecond timestamps and one with ISO 8601 times
/// (in UTC and with another offset) play the same messages as the same data in
/// seconds, as do microseconds.
#[test]
fn milliseconds_iso_8601_and_seconds_play_the_same_messages() {
    let dir = Scratch::new("forms");
    let forms: [(&str, TimeWriter); 5] = [
        ("seconds", Box::new(|ms| format!("{}", ms / 1000))),
        ("milliseconds", Box::new(|ms| ms.to_string())),
        ("microseconds", Box::new(|ms| format!("{ms}000"))),
        ("iso-utc", Box::new(|ms| format_rfc3339(ms / 1000))),
        (
            "iso-cest",
            // Swiss summer time: the same instant written two hours later, +02:00.
            Box::new(|ms| format_rfc3339(ms / 1000 + 7200).replace('Z', "+02:00")),
        ),
    ];
    let mut played = Vec::new();
    for (name, write) in &forms {
        let csv = rewritten(&dir, &format!("{name}.csv"), write);
        let recording = dir.0.join(format!("{name}.rec"));
        let layout = parse_layout(&recording_layout(&csv, &recording), name)
            .unwrap_or_else(|e| panic!("{e}"));
        let r = run(&layout, &options()).unwrap_or_else(|e| panic!("{name}: {e}"));
        check_received_everything(&r);
        assert_eq!(r.published, SAMPLE_ROWS, "{name}");
        assert_eq!(r.day_start, parse_rfc3339(FIRST_ROW).unwrap(), "{name}");
        let messages = recorded_tracks(&recording);
        assert_eq!(messages.len() as u64, SAMPLE_ROWS, "{name}");
        played.push((name, r, messages));
    }
    let (_, seconds, want) = &played[0];
    for (name, r, messages) in &played[1..] {
        assert_eq!(messages, want, "{name} plays what seconds play");
        assert_eq!(r.bytes, seconds.bytes, "{name}");
        assert_eq!(r.per_second, seconds.per_second, "{name}");
    }
    // The tracks are the sample's rows, in time order, stamped with their block.
    let first = &want[0].1;
    assert_eq!(first.time, 1_533_123_000_000);
    assert_eq!(
        (first.meta.src.as_str(), first.meta.run.as_str()),
        ("Recorded", "recorded")
    );
}

/// OpenSky's historical state vectors (its Trino/Impala database and datasets): the
/// header, in its order, with the columns glidepath does not read.
const OPENSKY_HEADER: &str = "time,icao24,lat,lon,velocity,heading,vertrate,callsign,onground,alert,spi,squawk,baroaltitude,geoaltitude,lastposupdate,lastcontact,hour";

/// A sample row (`timestamp` ms, then the rest) as OpenSky writes it: whole seconds,
/// metres, metres per second, the callsign padded to 8 characters, a geometric
/// altitude 45 m above the barometric one (so reading it instead would show).
fn opensky_row(t_ms: i64, rest: &str) -> String {
    let f: Vec<&str> = rest.split(',').collect();
    let [icao24, callsign, lat, lon, alt_ft, gs_kt, track, vs_fpm] = f[..] else {
        panic!("not a sample row: {rest}");
    };
    assert_eq!(t_ms % 1000, 0, "OpenSky's times are whole seconds: {t_ms}");
    let t = t_ms / 1000;
    let si = |v: &str, factor: f64| match v.parse::<f64>() {
        Ok(v) => format!("{}", v * factor),
        Err(_) => String::new(),
    };
    let alt_m = si(alt_ft, 0.3048);
    let geo_m = alt_ft
        .parse::<f64>()
        .map_or(String::new(), |ft| format!("{}", ft * 0.3048 + 45.0));
    format!(
        "{t},{icao24},{lat},{lon},{},{track},{},{callsign:<8},false,false,false,1000,{alt_m},{geo_m},{}.4,{}.9,{}",
        si(gs_kt, 1_852.0 / 3_600.0),
        si(vs_fpm, 0.3048 / 60.0),
        t - 1,
        t,
        t - t.rem_euclid(3600)
    )
}

/// The sample rewritten as OpenSky writes it, with `extra` rows (already in OpenSky's
/// form) after it.
fn opensky_sample(dir: &Scratch, name: &str, extra: &[&str]) -> PathBuf {
    let (_, rows) = sample_rows();
    let mut text = format!("{OPENSKY_HEADER}\n");
    for (t, rest) in &rows {
        text.push_str(&opensky_row(*t, rest));
        text.push('\n');
    }
    for row in extra {
        text.push_str(row);
        text.push('\n');
    }
    dir.file(name, &text)
}

/// Runs `csv` through [`recording_layout`]: the report and the messages played.
fn play(dir: &Scratch, name: &str, csv: &Path) -> (RunReport, Vec<(u32, Track)>) {
    let recording = dir.0.join(format!("{name}.rec"));
    let layout =
        parse_layout(&recording_layout(csv, &recording), name).unwrap_or_else(|e| panic!("{e}"));
    let r = run(&layout, &options()).unwrap_or_else(|e| panic!("{name}: {e}"));
    check_received_everything(&r);
    (r, recorded_tracks(&recording))
}

/// Whether two values read through a unit conversion agree: the reader rounds
/// converted values to 0.01, so they are at most half of that apart (and a hair more
/// for the floating-point arithmetic of the round trip).
fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= 0.005 + 1e-9
}

/// The real sample in OpenSky's column names, order and SI units plays the same
/// messages, in the same seconds, as the native file: the same instants, vehicles
/// and positions exactly, altitude, speed and vertical rate within the 0.01 the
/// conversion rounds to.
#[test]
fn the_sample_in_opensky_columns_and_units_plays_the_same_messages() {
    let dir = Scratch::new("opensky");
    let native_csv = rewritten(&dir, "native.csv", |ms| ms.to_string());
    let opensky_csv = opensky_sample(&dir, "opensky.csv", &[]);
    let (native, want) = play(&dir, "native", &native_csv);
    let (opensky, got) = play(&dir, "opensky", &opensky_csv);

    assert_eq!(opensky.published, SAMPLE_ROWS);
    assert_eq!(got.len(), want.len());
    let mut rounded = 0;
    for (i, ((s_got, g), (s_want, w))) in got.iter().zip(&want).enumerate() {
        assert_eq!(s_got, s_want, "message {i}: second");
        assert_eq!(
            (&g.vid, g.time, g.lat_deg, g.lon_deg, g.crs_deg, &g.meta),
            (&w.vid, w.time, w.lat_deg, w.lon_deg, w.crs_deg, &w.meta),
            "message {i}"
        );
        assert!(
            close(g.alt_ft, w.alt_ft) && close(g.gs_kt, w.gs_kt) && close(g.vs_fpm, w.vs_fpm),
            "message {i}: {g:?} against {w:?}"
        );
        rounded += usize::from(g.gs_kt != w.gs_kt);
    }
    // The sample's speeds have ten decimals: most of them come back rounded.
    assert!(rounded > 1_000, "{rounded} speeds rounded");
    // What the report counts from the messages is the same; only the bytes differ,
    // by the decimals the conversion rounded away.
    assert_eq!(opensky.per_second, native.per_second);
    assert_eq!(opensky.day_start, native.day_start);
    assert_eq!(
        (opensky.peak_flights, opensky.peak_flights_s),
        (native.peak_flights, native.peak_flights_s)
    );
    let s = &opensky.sources[0];
    assert_eq!(
        (s.rows, s.published, s.bad_rows, s.empty_callsigns),
        (SAMPLE_ROWS, SAMPLE_ROWS, 0, 0)
    );
    assert_eq!(
        s.reading.as_deref(),
        Some(
            "timestamps: Unix seconds (detected); timestamp from `time`, latitude from `lat`, \
             longitude from `lon`, altitude from `baroaltitude` (m → ft), groundspeed from \
             `velocity` (m/s → kt), track from `heading`, vertical_rate from `vertrate` \
             (m/s → ft/min)"
        )
    );
}

/// State vectors without a position (OpenSky has them for an aircraft it has heard
/// but not yet located) are bad rows, counted with their line and reason, and nothing
/// is published for them; an on-ground row has a position and is played.
#[test]
fn rows_without_a_position_are_skipped_and_on_ground_rows_play() {
    let dir = Scratch::new("no-position");
    let tail = "false,false,false,1000,1066.8,1111.8,1533123299.4,1533123300.9,1533121200";
    let no_lat = format!("1533123300,4b1806,,8.55,92.6,280.5,-4.22656,SWR12K  ,{tail}");
    let no_position = format!("1533123310,4b1806,,,92.6,280.5,-4.22656,SWR12K  ,{tail}");
    let no_lon = format!("1533123320,4b1806,47.46,NaN,92.6,280.5,-4.22656,SWR12K  ,{tail}");
    let on_ground = "1533123330,4b1a2f,47.4531,8.5652,5.14,120.0,0.0,SWR15   ,true,false,false,2000,,,1533123329.4,1533123330.9,1533121200";
    let csv = opensky_sample(
        &dir,
        "opensky.csv",
        &[&no_lat, &no_position, &no_lon, on_ground],
    );
    let (r, messages) = play(&dir, "no-position", &csv);

    let s = &r.sources[0];
    assert_eq!(
        (s.rows, s.bad_rows, s.published, r.published),
        (SAMPLE_ROWS + 4, 3, SAMPLE_ROWS + 1, SAMPLE_ROWS + 1)
    );
    let first_extra = SAMPLE_ROWS + 2; // the header is line 1
    let reason = "is missing: a row without a position is not played";
    assert_eq!(
        s.bad_examples,
        [
            format!("line {first_extra}: `lat` {reason}"),
            format!("line {}: `lat` {reason}", first_extra + 1),
            format!("line {}: `lon` {reason}", first_extra + 2),
        ]
    );
    assert_eq!(messages.len() as u64, SAMPLE_ROWS + 1);
    assert!(
        messages
            .iter()
            .all(|(_, t)| t.lat_deg.is_finite() && t.lon_deg.is_finite()),
        "a message at NaN"
    );
    assert!(
        !messages.iter().any(|(_, t)| t.vid == "SWR12K"),
        "a row without a position was played"
    );
    let taxiing: Vec<&Track> = messages
        .iter()
        .map(|(_, t)| t)
        .filter(|t| t.vid == "SWR15")
        .collect();
    assert_eq!(taxiing.len(), 1);
    assert_eq!(
        (
            taxiing[0].time,
            taxiing[0].lat_deg,
            taxiing[0].lon_deg,
            taxiing[0].gs_kt
        ),
        (1_533_123_330_000, 47.4531, 8.5652, 9.99)
    );
}

/// Acceptance (issue 12): a source with no row in the simulated window fails the run,
/// and the error says how many rows there are, where the window is and where the data
/// is.
#[test]
fn a_source_with_no_row_in_the_window_fails_the_run_with_the_reason() {
    let text = format!(
        r#"
name = "elsewhere"
day_start = "2021-10-07T00:00:00Z"
[[block]]
name = "Recorded"
kind = "traffic"
scheduled_period = "1 s"
source = {{ kind = "adsb_csv", path = "{}" }}
[[block]]
name = "Monitor"
kind = "monitor"
[[link]]
from = "Recorded"
to = "Monitor"
"#,
        sample().display()
    );
    let layout = parse_layout(&text, "elsewhere.toml").unwrap();
    let opts = RunOptions {
        hours: Some(24.0),
        ..options()
    };
    let e = run(&layout, &opts)
        .expect_err("nothing to play")
        .to_string();
    assert!(
        e.starts_with("block `Recorded`: initialization: 0 of 2,359 rows fall in the simulated window 2021-10-07T00:00:00Z + 24 h; first row at 2018-08-01T11:30:00Z, last at 2018-08-01T11:39:50Z"),
        "{e}"
    );
    assert!(e.contains("Unix milliseconds (detected)"), "{e}");

    // The issue's trap: milliseconds declared as seconds are instants past the year
    // 9999, so every row is skipped, and the run cannot even find its second 0.
    let wrong_unit = text
        .replace("day_start = \"2021-10-07T00:00:00Z\"\n", "")
        .replace("\" }", "\", timestamp_unit = \"s\" }");
    let layout = parse_layout(&wrong_unit, "wrong-unit.toml").unwrap();
    let e = run(&layout, &options())
        .expect_err("no readable row")
        .to_string();
    assert!(
        e.contains("no day_start")
            && e.contains("block `Recorded` has no readable row (2,359 rows, all skipped; first: line 2: `timestamp` 1533123070000 s is outside the years 1..9999)"),
        "{e}"
    );
    // With a day_start the same mistake fails in the block, naming the skipped rows.
    let with_day = wrong_unit.replacen(
        "[[block]]",
        "day_start = \"2018-08-01T11:30:00Z\"\n[[block]]",
        1,
    );
    let layout = parse_layout(&with_day, "wrong-unit-day.toml").unwrap();
    let e = run(&layout, &options())
        .expect_err("no readable row")
        .to_string();
    assert!(
        e.starts_with("block `Recorded`: initialization: 0 of 2,359 rows fall in the simulated window 2018-08-01T11:30:00Z + 1 s; no row could be read; 2,359 rows skipped for bad values, first: line 2: `timestamp` 1533123070000 s is outside the years 1..9999"),
        "{e}"
    );
}

/// Rows outside the window, rows with a bad value and rows without a callsign are all
/// counted per source, the bad ones by line; the good rows in the window are all
/// published and received.
#[test]
fn skipped_rows_are_counted_and_named() {
    let dir = Scratch::new("skipped");
    let (header, rows) = sample_rows();
    let mut text = header + "\n";
    for (t, rest) in &rows {
        text.push_str(&format!("{t},{rest}\n"));
    }
    let line = |n: usize| rows.len() + 2 + n; // 1-based, after the header and the rows
    text.push_str("1533123061000,4b1806,SWR12K,north,8.55,3500,180,280,-832\n");
    text.push_str(",4b1806,SWR12K,47.46,8.55,3500,180,280,-832\n");
    text.push_str("12,4b1806,SWR12K,47.46,8.55,3500,180,280,-832\n");
    text.push_str("1533123060000,4b1806,,47.46,8.55,3500,180,280,-832\n");
    let csv = dir.file("states.csv", &text);
    let layout = parse_layout(
        &format!(
            r#"
name = "skipped"
[[block]]
name = "Recorded"
kind = "traffic"
scheduled_period = "1 s"
traffic_end = "2018-08-01T11:35:00Z"
source = {{ kind = "adsb_csv", path = "{}" }}
[[block]]
name = "Monitor"
kind = "monitor"
[[link]]
from = "Recorded"
to = "Monitor"
"#,
            csv.display()
        ),
        "skipped.toml",
    )
    .unwrap();
    assert_eq!(
        frame(&layout, &options()).unwrap().end_s,
        300,
        "traffic_end cuts the span"
    );
    let r = run(&layout, &options()).unwrap_or_else(|e| panic!("{e}"));
    check_received_everything(&r);
    let end_ms = parse_rfc3339("2018-08-01T11:35:00Z").unwrap() * 1000;
    let after = rows.iter().filter(|(t, _)| *t >= end_ms).count() as u64;
    assert!(after > 500, "the window cuts the sample: {after}");
    let s = &r.sources[0];
    assert_eq!(s.rows, SAMPLE_ROWS + 4);
    assert_eq!(s.bad_rows, 3);
    assert_eq!(s.empty_callsigns, 1);
    assert_eq!((s.before_window, s.after_window), (0, after));
    assert_eq!(
        s.published,
        SAMPLE_ROWS - after + 1,
        "the row without a callsign plays"
    );
    assert_eq!(r.published, s.published);
    let lines: Vec<String> = s
        .bad_examples
        .iter()
        .map(|e| e.split(':').next().unwrap().to_string())
        .collect();
    assert_eq!(lines, [1, 2, 3].map(|n| format!("line {}", line(n - 1))));
    assert!(
        s.bad_examples[0].contains("`latitude` is `north`, not a number"),
        "{:?}",
        s.bad_examples
    );
    assert!(
        s.bad_examples[1].contains("`timestamp` is empty"),
        "{:?}",
        s.bad_examples
    );
    assert!(
        s.bad_examples[2].contains("`timestamp` 12 is ambiguous"),
        "{:?}",
        s.bad_examples
    );
    let tables = r.tables();
    assert!(
        tables.contains(&format!(
            "| Recorded | adsb_csv `{}` | 2018-08-01T11:30:00Z + 5 min | 2,363 | {} | 0 | {} | 3 | 1 |",
            csv.display(),
            grouped(s.published),
            grouped(after)
        )),
        "{tables}"
    );
    assert!(tables.contains("1 row without a callsign published under their icao24"));
}

/// `1,261`.
fn grouped(v: u64) -> String {
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

//! Layout files (issue 5, memorandum Figure 3.1 / Table 3.1): the shipped
//! `layouts/atm-testbed-day.toml` loads with the memorandum's blocks, every validation
//! error names the block and the property (and the line), malformed TOML gives
//! line:col, and no input — however hostile — makes the parser panic.

use std::path::{Path, PathBuf};

use glidepath_atm::layout::{
    load_layout, parse_layout, parse_rfc3339, BlockKind, LayoutError, TrafficSource,
};
use glidepath_atm::TimestampUnit;

fn shipped() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../layouts/atm-testbed-day.toml")
}

#[test]
fn shipped_layout_mirrors_figure_3_1_and_table_3_1() {
    let layout = load_layout(&shipped()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(layout.name, "atm-testbed-day");
    assert_eq!(
        layout.day_start,
        Some(parse_rfc3339("2016-03-23T07:00:00Z").unwrap())
    );
    assert_eq!(layout.blocks.len(), 3);

    let t = |s: &str| Some(parse_rfc3339(s).unwrap());
    let a1 = layout.block("ATAC Data:1").expect("block 1");
    assert_eq!(a1.kind, BlockKind::Traffic);
    assert_eq!((a1.scheduled_period_s, a1.scheduled_delay_s), (1.0, 0.0));
    assert_eq!(a1.traffic_start, t("2016-03-23T07:00:00Z"));
    // The effective end of block 1's one-day file (see the comment in the layout).
    assert_eq!(a1.traffic_end, t("2016-03-24T00:00:00Z"));
    assert_eq!(a1.data_category, "USA");
    assert!(a1.publish_track && !a1.publish_flight_plan && a1.fast_time);
    assert_eq!(a1.host, "localhost");
    assert_eq!(a1.speed, 1.0);
    assert_eq!(
        a1.source,
        Some(TrafficSource::Generated {
            seed: 1,
            density: 1.0
        })
    );
    assert_eq!(a1.output, None);

    let a2 = layout.block("ATAC Data:2").expect("block 2");
    assert_eq!(a2.kind, BlockKind::Traffic);
    assert_eq!(
        (a2.scheduled_period_s, a2.scheduled_delay_s),
        (1.0, 61_200.0)
    );
    assert_eq!(a2.traffic_start, t("2016-03-24T00:00:00Z"));
    assert_eq!(a2.traffic_end, t("2016-03-24T07:00:00Z"));
    assert_eq!(a2.source, a1.source);
    // Block 2 starts exactly at its delay, and the two windows tile one day.
    assert_eq!(
        layout.day_start.unwrap() + a2.scheduled_delay_s as i64,
        a2.traffic_start.unwrap()
    );
    assert_eq!(a1.traffic_end, a2.traffic_start);
    let played: i64 = layout
        .traffic_blocks()
        .map(|b| b.traffic_end.unwrap() - b.traffic_start.unwrap())
        .sum();
    assert_eq!(played, 86_400);

    let np = layout.block("Network Performance").expect("monitor");
    assert_eq!(np.kind, BlockKind::Monitor);
    assert!(np.fast_time);
    assert_eq!(np.host, "localhost");
    assert_eq!(np.source, None);

    assert_eq!(layout.traffic_blocks().count(), 2);
    assert_eq!(layout.links.len(), 2);
    for from in ["ATAC Data:1", "ATAC Data:2"] {
        let sinks: Vec<&str> = layout
            .sinks_of(from)
            .iter()
            .map(|b| b.name.as_str())
            .collect();
        assert_eq!(sinks, ["Network Performance"]);
    }
    assert!(layout.sinks_of("Network Performance").is_empty());
}

const GOOD: &str = r#"
name = "t"
day_start = 2016-03-23T07:00:00Z

[[block]]
name = "A"
kind = "traffic"
scheduled_period = 1
scheduled_delay = "0 s"
traffic_start = "2016-03-23T07:00:00Z"
traffic_end = 2016-03-23T08:00:00Z
source = { kind = "generated", seed = 7 }

[[block]]
name = "M"
kind = "monitor"

[[block]]
name = "R"
kind = "recorder"
output = "out/run.rec"

[[block]]
name = "P"
kind = "player"
source = { kind = "recording", path = "old.rec" }
fast_time = false
speed = 2.5

[[link]]
from = "A"
to = "M"

[[link]]
from = "P"
to = "R"
"#;

#[test]
fn defaults_and_both_time_and_duration_spellings() {
    let l = parse_layout(GOOD, "good.toml").unwrap_or_else(|e| panic!("{e}"));
    let a = l.block("A").unwrap();
    assert_eq!(a.traffic_end.unwrap() - a.traffic_start.unwrap(), 3600);
    assert_eq!(
        a.source,
        Some(TrafficSource::Generated {
            seed: 7,
            density: 1.0
        })
    );
    assert_eq!(
        (
            a.data_category.as_str(),
            a.host.as_str(),
            a.publish_track,
            a.publish_flight_plan,
            a.fast_time
        ),
        ("USA", "localhost", true, false, true)
    );
    let m = l.block("M").unwrap();
    assert_eq!(m.scheduled_period_s, 1.0);
    assert_eq!(
        l.block("R").unwrap().output,
        Some(PathBuf::from("out/run.rec"))
    );
    let p = l.block("P").unwrap();
    assert_eq!((p.fast_time, p.speed), (false, 2.5));
    assert_eq!(
        p.source,
        Some(TrafficSource::Recording {
            path: PathBuf::from("old.rec")
        })
    );
    // Without day_start, second 0 is the earliest traffic start.
    let no_day = GOOD.replace("day_start = 2016-03-23T07:00:00Z", "");
    assert_eq!(parse_layout(&no_day, "x").unwrap().day_start, l.day_start);
}

/// Recorded traffic: the CSV source's timestamp unit, and a layout that names no
/// instant at all (its run starts at the data's first row).
#[test]
fn a_recorded_source_needs_no_day_start_and_may_name_its_timestamp_unit() {
    let text = r#"
name = "recorded"
[[block]]
name = "Recorded"
kind = "traffic"
scheduled_period = "1 s"
source = { kind = "adsb_csv", path = "states.csv", timestamp_unit = "ms" }
[[block]]
name = "M"
kind = "monitor"
[[link]]
from = "Recorded"
to = "M"
"#;
    let l = parse_layout(text, "recorded.toml").unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(l.day_start, None, "taken from the data when the run starts");
    assert_eq!(
        l.block("Recorded").unwrap().source,
        Some(TrafficSource::AdsbCsv {
            path: PathBuf::from("states.csv"),
            timestamp_unit: TimestampUnit::Milliseconds
        })
    );
    let auto = parse_layout(&text.replace(", timestamp_unit = \"ms\"", ""), "x").unwrap();
    assert!(matches!(
        auto.block("Recorded").unwrap().source,
        Some(TrafficSource::AdsbCsv {
            timestamp_unit: TimestampUnit::Auto,
            ..
        })
    ));
    let bad = parse_layout(&text.replace("\"ms\"", "\"minutes\""), "bad.toml")
        .unwrap_err()
        .to_string();
    assert!(
        bad.starts_with("bad.toml:7: block \"Recorded\": property `source.timestamp_unit`: unknown unit \"minutes\" (expected one of: auto, s, ms, us, ns)"),
        "{bad}"
    );
    let generated = text.replace(
        "kind = \"adsb_csv\", path = \"states.csv\"",
        "kind = \"generated\", seed = 1",
    );
    let e = parse_layout(&generated, "g.toml").unwrap_err().to_string();
    assert!(
        e.contains("`source.timestamp_unit`: not used by a \"generated\" source"),
        "{e}"
    );
}

#[test]
fn load_layout_resolves_relative_paths_against_the_file() {
    let dir = std::env::temp_dir().join(format!("glidepath-layout-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("l.toml");
    std::fs::write(&file, GOOD).unwrap();
    let l = load_layout(&file).unwrap();
    assert_eq!(l.block("R").unwrap().output, Some(dir.join("out/run.rec")));
    assert_eq!(
        l.block("P").unwrap().source,
        Some(TrafficSource::Recording {
            path: dir.join("old.rec")
        })
    );
    let missing = load_layout(&dir.join("nope.toml")).unwrap_err();
    assert!(matches!(missing, LayoutError::Io { .. }));
    assert!(missing.to_string().contains("nope.toml"), "{missing}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Replaces `from` (which must occur) in the good layout and returns the error text.
fn error_of(from: &str, to: &str) -> (LayoutError, String) {
    assert!(GOOD.contains(from), "test bug: {from:?} not in GOOD");
    let text = GOOD.replacen(from, to, 1);
    let e = parse_layout(&text, "bad.toml")
        .expect_err(&format!("accepted after replacing {from:?} with {to:?}"));
    let s = e.to_string();
    (e, s)
}

fn assert_names(msg: &str, parts: &[&str]) {
    assert!(msg.starts_with("bad.toml:"), "no file:line in {msg:?}");
    for p in parts {
        assert!(msg.contains(p), "{msg:?} does not mention {p:?}");
    }
}

#[test]
fn every_validation_error_names_block_and_property() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "kind = \"monitor\"",
            "kind = \"monitr\"",
            &["block \"M\"", "`kind`", "monitr"],
        ),
        (
            "scheduled_period = 1\n",
            "",
            &["block \"A\"", "`scheduled_period`", "missing"],
        ),
        (
            "scheduled_period = 1\n",
            "scheduled_period = -1\n",
            &["block \"A\"", "`scheduled_period`", "positive"],
        ),
        (
            "scheduled_period = 1\n",
            "scheduled_period = \"1 fortnight\"\n",
            &["block \"A\"", "`scheduled_period`", "fortnight"],
        ),
        (
            "scheduled_delay = \"0 s\"",
            "scheduled_delay = \"-5 s\"",
            &["block \"A\"", "`scheduled_delay`", "negative"],
        ),
        (
            "traffic_end = 2016-03-23T08:00:00Z",
            "traffic_end = 2016-03-23T06:00:00Z",
            &["block \"A\"", "`traffic_end`", "not after"],
        ),
        (
            "traffic_end = 2016-03-23T08:00:00Z",
            "traffic_end = \"yesterday\"",
            &["block \"A\"", "`traffic_end`", "RFC 3339"],
        ),
        (
            "traffic_end = 2016-03-23T08:00:00Z",
            "traffic_end = 2016-03-23T08:00:00",
            &["block \"A\"", "`traffic_end`", "offset"],
        ),
        (
            "traffic_end = 2016-03-23T08:00:00Z\n",
            "",
            &["block \"A\"", "`traffic_end`", "missing"],
        ),
        (
            "speed = 2.5",
            "speed = 0.0",
            &["block \"P\"", "`speed`", "> 0"],
        ),
        ("speed = 2.5", "speed = -3", &["block \"P\"", "`speed`"]),
        ("speed = 2.5", "speed = nan", &["block \"P\"", "`speed`"]),
        (
            "name = \"M\"",
            "name = \"A\"",
            &[
                "block \"A\"",
                "`name`",
                "duplicate",
                "first defined on line 6",
            ],
        ),
        (
            "source = { kind = \"generated\", seed = 7 }\n",
            "",
            &["block \"A\"", "`source`", "missing"],
        ),
        ("seed = 7", "seed = -7", &["block \"A\"", "`source.seed`"]),
        (
            "seed = 7",
            "seed = \"seven\"",
            &["block \"A\"", "`source.seed`", "invalid type"],
        ),
        (
            "seed = 7",
            "seed = 7, colour = 1",
            &["block \"A\"", "colour", "unknown field"],
        ),
        (
            "seed = 7",
            "seed = 7, density = 0",
            &["block \"A\"", "`source.density`"],
        ),
        (
            "seed = 7",
            "seed = 7, path = \"x\"",
            &["block \"A\"", "`source.path`"],
        ),
        (
            "kind = \"generated\", seed = 7",
            "seed = 7",
            &["block \"A\"", "`source.kind`", "missing"],
        ),
        (
            "kind = \"generated\"",
            "kind = \"magic\"",
            &["block \"A\"", "`source.kind`", "magic"],
        ),
        (
            "kind = \"recording\", path = \"old.rec\"",
            "kind = \"generated\", seed = 1",
            &["block \"P\"", "`source.kind`", "player"],
        ),
        (
            "output = \"out/run.rec\"\n",
            "",
            &["block \"R\"", "`output`", "missing"],
        ),
        (
            "kind = \"monitor\"",
            "kind = \"monitor\"\noutput = \"x\"",
            &["block \"M\"", "`output`", "not used by a monitor"],
        ),
        (
            "kind = \"monitor\"",
            "kind = \"monitor\"\nsource = { kind = \"generated\", seed = 1 }",
            &["block \"M\"", "`source`"],
        ),
        (
            "kind = \"monitor\"",
            "kind = \"monitor\"\ntraffic_start = 2016-03-23T07:00:00Z",
            &["block \"M\"", "`traffic_start`"],
        ),
        (
            "kind = \"monitor\"",
            "kind = \"monitor\"\nperiod = 1",
            &["block \"M\"", "period", "unknown field"],
        ),
        (
            "kind = \"monitor\"",
            "kind = \"monitor\"\nfast_time = \"yes\"",
            &["block \"M\"", "`fast_time`", "invalid type"],
        ),
        (
            "kind = \"monitor\"",
            "kind = \"monitor\"\nhost = \"\"",
            &["block \"M\"", "`host`", "empty"],
        ),
        ("name = \"M\"\n", "", &["<unnamed>", "`name`", "missing"]),
        ("name = \"M\"", "name = \"\"", &["`name`", "empty"]),
        (
            "name = \"R\"\nkind = \"recorder\"",
            "name = \"R\"",
            &["block \"R\"", "`kind`", "missing"],
        ),
        (
            "from = \"A\"",
            "from = \"Z\"",
            &["link 1", "`from`", "unknown block \"Z\""],
        ),
        (
            "to = \"R\"",
            "to = \"Q\"",
            &["link 2", "`to`", "unknown block \"Q\""],
        ),
        (
            "from = \"A\"",
            "from = \"M\"",
            &["link 1", "`from`", "monitor"],
        ),
        ("to = \"M\"", "to = \"P\"", &["link 1", "`to`", "player"]),
        (
            "from = \"P\"\nto = \"R\"",
            "from = \"A\"\nto = \"M\"",
            &["link 2", "duplicate"],
        ),
        (
            "from = \"A\"\nto = \"M\"",
            "from = \"A\"\nto = \"R\"",
            &["block \"M\"", "no incoming link"],
        ),
        ("from = \"A\"\n", "", &["link 1", "`from`", "missing"]),
        ("name = \"t\"", "nmae = \"t\"", &["nmae", "unknown field"]),
        (
            "speed = 2.5",
            "speed = 2.5\nposition = [1.0]",
            &["block \"P\"", "`position`", "two finite numbers"],
        ),
        (
            "speed = 2.5",
            "speed = 2.5\nposition = [-3, 4]",
            &["block \"P\"", "`position`", ">= 0"],
        ),
        (
            "day_start = 2016-03-23T07:00:00Z",
            "day_start = \"soon\"",
            &["`day_start`"],
        ),
    ];
    for (from, to, parts) in cases {
        let (_, msg) = error_of(from, to);
        assert_names(&msg, parts);
    }
}

#[test]
fn errors_point_at_the_right_line() {
    let (e, msg) = error_of("speed = 2.5", "speed = 0.0");
    let line = GOOD.lines().position(|l| l.starts_with("speed")).unwrap() + 1;
    assert!(
        matches!(&e, LayoutError::InvalidProperty { line: l, block, property, .. } if *l == line && block == "P" && property == "speed"),
        "{e:?}"
    );
    assert!(msg.starts_with(&format!("bad.toml:{line}:")), "{msg}");
    let (e, _) = error_of("kind = \"monitor\"", "kind = \"monitor\"\nperiod = 1");
    let line = GOOD
        .lines()
        .position(|l| l == "kind = \"monitor\"")
        .unwrap()
        + 2;
    assert!(
        matches!(&e, LayoutError::Syntax { line: l, col: 1, block: Some(b), .. } if *l == line && b == "M"),
        "{e:?}"
    );
}

#[test]
fn an_error_names_its_line_block_and_property_as_fields_too() {
    let (e, _) = error_of("speed = 2.5", "speed = 0.0");
    assert_eq!(e.block(), Some("P"));
    assert_eq!(e.property(), Some("speed"));
    let line = GOOD.lines().position(|l| l.starts_with("speed")).unwrap() + 1;
    assert_eq!(e.line(), Some(line));
    let (e, _) = error_of("kind = \"monitor\"", "kind = \"monitr\"");
    assert_eq!((e.block(), e.property()), (Some("M"), Some("kind")));
    let (e, _) = error_of("from = \"A\"\n", "");
    assert_eq!((e.block(), e.property()), (None, Some("from")));
}

#[test]
fn a_block_keeps_the_editor_position_the_run_ignores() {
    let text = GOOD.replacen("speed = 2.5", "speed = 2.5\nposition = [120, 40.5]", 1);
    let layout = parse_layout(&text, "p.toml").unwrap();
    assert_eq!(layout.block("P").unwrap().position, Some([120.0, 40.5]));
    assert_eq!(layout.block("A").unwrap().position, None);
}

#[test]
fn malformed_toml_gives_line_and_column() {
    let text = "name = \"x\"\n\n[[block]]\nname = \"A\nkind = \"traffic\"\n";
    let e = parse_layout(text, "broken.toml").unwrap_err();
    let LayoutError::Syntax { line, col, .. } = &e else {
        panic!("{e:?}")
    };
    assert_eq!(*line, 4, "{e}");
    assert!(*col >= 1);
    assert!(
        e.to_string().starts_with(&format!("broken.toml:4:{col}: ")),
        "{e}"
    );

    let e = parse_layout("name = \"x\"\n[[block]\n", "b.toml").unwrap_err();
    assert!(e.to_string().starts_with("b.toml:2:"), "{e}");
    let e = parse_layout("a = = 1", "c.toml").unwrap_err();
    assert!(e.to_string().starts_with("c.toml:1:"), "{e}");
}

/// A tiny deterministic generator (xorshift), so the fuzz below replays exactly.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[test]
fn hostile_and_random_input_never_panics() {
    let shipped_text = std::fs::read_to_string(shipped()).unwrap();
    let fixed = [
        "",
        "\u{0}",
        "[[block]]",
        "[[block]]\n[[block]]\n[[link]]",
        "block = 1\nlink = \"x\"",
        "name = \"x\"\n[[block]]\nname = \"é\"\nkind = \"traffic\"\nscheduled_period = 1e308\ntraffic_start = \"9999-12-31T23:59:60Z\"\ntraffic_end = \"0000-01-01T00:00:00+23:59\"\nsource = { kind = \"generated\", seed = 9223372036854775807, density = inf }",
        "name = \"x\"\n[[block]]\nname = \"a\"\nkind = \"traffic\"\nscheduled_period = \"1e400 s\"",
        "name = \"x\"\n[[block]]\nname = \"a\"\nkind = \"traffic\"\nscheduled_period = -inf",
        "name = \"x\"\n[[block]]\nname = \"a\"\nkind = \"traffic\"\nscheduled_period = 1\ntraffic_start = \"2016-03-23T07:00:00.Z\"",
        "name = \"x\"\n[[block]]\nname = \"a\"\nkind = \"traffic\"\nscheduled_period = 1\ntraffic_start = \"２０１６-03-23T07:00:00Z\"",
        "name = \"x\"\n[[block]]\nname = '''\nmulti'''\nkind = [1, 2]",
        "[[block]]\nsource = { kind = \"adsb_csv\", path = \"\" }",
    ];
    for text in fixed {
        let _ = parse_layout(text, "hostile.toml");
    }
    // Mutations of the real layout: byte deletions, duplications, swaps and insertions
    // of TOML-significant characters; every result must be a value or an error.
    let alphabet: Vec<char> = "[]{}=\"'#,.:-+\n 0123456789abcdefzZT\u{e9}\u{1F6EB}\\"
        .chars()
        .collect();
    let mut rng = Rng(0x5eed_1a40_u64);
    for _ in 0..3000 {
        let mut chars: Vec<char> = shipped_text.chars().collect();
        for _ in 0..1 + rng.below(6) {
            let at = rng.below(chars.len().max(1));
            match rng.below(4) {
                0 if !chars.is_empty() => {
                    chars.remove(at);
                }
                1 => chars.insert(at, alphabet[rng.below(alphabet.len())]),
                2 if !chars.is_empty() => {
                    let c = chars[at];
                    chars.insert(at, c);
                }
                _ => {
                    let other = rng.below(chars.len().max(1));
                    if at < chars.len() && other < chars.len() {
                        chars.swap(at, other);
                    }
                }
            }
        }
        let text: String = chars.into_iter().collect();
        if let Err(e) = parse_layout(&text, "mutant.toml") {
            assert!(e.to_string().starts_with("mutant.toml:"), "{e}");
        }
    }
    // Purely random short texts.
    for _ in 0..2000 {
        let len = rng.below(80);
        let text: String = (0..len)
            .map(|_| alphabet[rng.below(alphabet.len())])
            .collect();
        let _ = parse_layout(&text, "random.toml");
    }
}

#[test]
fn the_python_model_layout_has_an_external_block_and_join_within_is_checked() {
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../layouts/python-model.toml");
    let layout = load_layout(&shipped).unwrap_or_else(|e| panic!("{e}"));
    let numpy = layout.block("numpy").expect("the numpy block");
    assert_eq!(numpy.kind, BlockKind::External);
    assert!(numpy.kind.publishes() && !numpy.kind.subscribes());
    assert_eq!(numpy.join_within_s, Some(120.0));
    assert_eq!(
        layout.block("Network Performance").unwrap().join_within_s,
        None
    );
    let with = |block: &str| {
        parse_layout(
            &format!(
                "name = \"x\"\nday_start = \"2016-03-23T07:00:00Z\"\n{block}\n\
                 [[block]]\nname = \"m\"\nkind = \"monitor\"\n\
                 [[link]]\nfrom = \"e\"\nto = \"m\"\n"
            ),
            "bad.toml",
        )
    };
    let ok = with("[[block]]\nname = \"e\"\nkind = \"external\"\njoin_within = \"5 s\"").unwrap();
    assert_eq!(ok.block("e").unwrap().join_within_s, Some(5.0));
    let e = with("[[block]]\nname = \"e\"\nkind = \"external\"\njoin_within = 0").unwrap_err();
    assert_names(
        &e.to_string(),
        &["\"e\"", "join_within", "must be positive"],
    );
    let e = with(
        "[[block]]\nname = \"e\"\nkind = \"traffic\"\nscheduled_period = 1\njoin_within = 5\n\
         source = { kind = \"generated\", seed = 1 }\n\
         traffic_start = \"2016-03-23T07:00:00Z\"\ntraffic_end = \"2016-03-23T08:00:00Z\"",
    )
    .unwrap_err();
    assert_names(
        &e.to_string(),
        &["\"e\"", "join_within", "only by external blocks"],
    );
    let e = with(
        "[[block]]\nname = \"e\"\nkind = \"external\"\nsource = { kind = \"generated\", seed = 1 }",
    )
    .unwrap_err();
    assert_names(
        &e.to_string(),
        &["\"e\"", "source", "not used by an external block"],
    );
}

#[test]
fn a_sector_is_checked_and_only_for_monitors_and_recorders() {
    let with = |sector: &str, kind: &str| {
        parse_layout(
            &format!(
                "name = \"x\"\nday_start = \"2016-03-23T07:00:00Z\"\n\
                 [[block]]\nname = \"t\"\nkind = \"traffic\"\nscheduled_period = 1\n\
                 source = {{ kind = \"generated\", seed = 1 }}\n\
                 traffic_start = \"2016-03-23T07:00:00Z\"\ntraffic_end = \"2016-03-23T08:00:00Z\"\n\
                 [[block]]\nname = \"m\"\nkind = \"{kind}\"\n{sector}\n\
                 [[link]]\nfrom = \"t\"\nto = \"m\"\n"
            ),
            "bad.toml",
        )
    };
    let ok = with(
        "sector = { lat = [37, 38.5], lon = [-123, -121] }",
        "monitor",
    )
    .unwrap();
    let s = ok.block("m").unwrap().sector.unwrap();
    assert_eq!(
        (s.lat_deg, s.lon_deg, s.alt_ft),
        ([37.0, 38.5], [-123.0, -121.0], None)
    );
    for (sector, says) in [
        (
            "sector = { lat = [38.5, 37], lon = [-123, -121] }",
            "sector.lat",
        ),
        (
            "sector = { lat = [37, 38], lon = [-190, -121] }",
            "sector.lon",
        ),
        ("sector = { lat = [37, 38] }", "sector.lon"),
        (
            "sector = { lat = [37, 38], lon = [1, 2], alt_ft = [5000] }",
            "sector.alt_ft",
        ),
        (
            "sector = { lat = [37, 38], lon = [1, 2], colour = 1 }",
            "colour",
        ),
    ] {
        let e = with(sector, "monitor").unwrap_err().to_string();
        assert_names(&e, &["\"m\"", says]);
    }
    let e = with(
        "output = \"r.rec\"\nsector = { lat = [37, 38], lon = [1, 2] }",
        "recorder",
    );
    assert!(e.is_ok(), "{e:?}");
    let e = parse_layout(
        "name = \"x\"\n[[block]]\nname = \"t\"\nkind = \"player\"\n\
         source = { kind = \"recording\", path = \"r.rec\" }\nsector = { lat = [1, 2], lon = [1, 2] }\n",
        "bad.toml",
    )
    .unwrap_err()
    .to_string();
    assert_names(
        &e,
        &["\"t\"", "sector", "only by monitor and recorder blocks"],
    );
}

//! The `glidepath` binary run as a user would: FOM checks, the demo, and bad input.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn glidepath(args: &[&str]) -> Output {
    glidepath_with_env(args, &[])
}

/// [`glidepath`] with these environment variables set.
fn glidepath_with_env(args: &[&str], vars: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_glidepath"))
        .args(args)
        .current_dir(workspace_root())
        .env_remove("GLIDEPATH_TRANSPORT")
        .envs(vars.iter().copied())
        .output()
        .expect("the binary runs")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A scratch file in the target directory's temp area, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn with(name: &str, contents: &str) -> Scratch {
        let path =
            std::env::temp_dir().join(format!("glidepath-cli-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).unwrap();
        Scratch(path)
    }
    fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[test]
fn version() {
    let o = glidepath(&["--version"]);
    assert!(o.status.success());
    assert_eq!(
        stdout(&o).trim(),
        format!("glidepath {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn fom_check_prints_a_summary() {
    let o = glidepath(&["fom", "check", "foms/air-traffic.xml", "foms/benchmark.xml"]);
    assert!(o.status.success(), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with("FOM OK: 2 module(s) merged"), "{out}");
    for row in [
        "modules",
        "object classes",
        "attributes",
        "interaction classes",
        "parameters",
        "dimensions",
        "data types",
    ] {
        assert!(
            out.lines().any(|l| l.trim_start().starts_with(row)
                && l.split_whitespace().any(|w| w.parse::<u32>().is_ok())),
            "row `{row}` with a count in:\n{out}"
        );
    }
}

#[test]
fn fom_check_verbose_prints_the_merged_tree() {
    let o = glidepath(&["fom", "check", "--verbose", "foms/air-traffic.xml"]);
    assert!(o.status.success(), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.trim_start().starts_with(needle))
            .unwrap_or_else(|| panic!("no line starting `{needle}` in:\n{out}"))
    };
    // The summary comes first, then the tree: the standard MIM's root and MOM
    // classes, the module's Aircraft below the root with its attributes.
    let root = at("HLAobjectRoot");
    assert!(at("data types") < root);
    let aircraft = at("Aircraft");
    assert!(
        root < aircraft
            && aircraft
                < at("- altitudeFt: HLAfloat64BE, TimeStamp, reliable, dimensions [FlightLevel]")
    );
    assert!(at("HLAmanager") < aircraft);
    assert!(at("HLAinteractionRoot (TimeStamp, reliable)") > aircraft);
    at("time: HLAfloat64Time");
}

#[test]
fn fom_check_of_a_truncated_file_names_file_line_and_column() {
    let text = std::fs::read_to_string(workspace_root().join("foms/air-traffic.xml")).unwrap();
    let cut = (0..=text.len() / 3)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap();
    let truncated = Scratch::with("truncated.xml", &text[..cut]);
    let o = glidepath(&["fom", "check", truncated.path()]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    let prefix = format!("error: {}:", truncated.path());
    assert!(err.starts_with(&prefix), "{err}");
    let rest: Vec<&str> = err[prefix.len()..].splitn(3, ':').collect();
    assert!(
        rest.len() == 3 && rest[0].parse::<u32>().is_ok() && rest[1].parse::<u32>().is_ok(),
        "file:line:col: {err}"
    );
    assert!(stdout(&o).is_empty());
}

#[test]
fn fom_check_of_a_missing_file_fails_clearly() {
    let o = glidepath(&["fom", "check", "foms/no-such-module.xml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("foms/no-such-module.xml"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn demo_runs_and_reports() {
    let o = glidepath(&["demo", "--federates", "3", "--steps", "50"]);
    assert!(o.status.success(), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    let expected = [
        "glidepath demo: 3 aircraft and 1 monitor, 50 steps, evoked callbacks, inproc transport",
        "created federation glidepath-demo from foms/air-traffic.xml",
        "synchronized at `start`: 4 federates",
        "monitor discovered 3 aircraft: GP101, GP102, GP103",
        "reflections at monitor: aircraft-1 51, aircraft-2 51, aircraft-3 51",
        "delivered in time-stamp order: 150 of 153",
        "grants: 200 (50 per federate), final logical time 50 for every federate",
        "resigned: 3 aircraft (objects deleted, 3 removals seen by the monitor), monitor",
    ];
    for line in expected {
        assert!(
            out.lines().any(|l| l == line),
            "missing `{line}` in:\n{out}"
        );
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with("joined: monitor as federate#1, aircraft-1 as federate#")),
        "{out}"
    );
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("federation destroyed after"),
        "{out}"
    );
}

#[test]
fn demo_runs_with_immediate_callbacks_and_an_explicit_fom() {
    let fom = workspace_root().join("foms/air-traffic.xml");
    let o = glidepath(&[
        "demo",
        "--federates",
        "2",
        "--steps",
        "20",
        "--process-model",
        "immediate",
        "--fom",
        fom.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "stderr: {}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("2 aircraft and 1 monitor, 20 steps, immediate callbacks"),
        "{out}"
    );
    assert!(
        out.contains("reflections at monitor: aircraft-1 21, aircraft-2 21"),
        "{out}"
    );
    assert!(
        out.contains("final logical time 20 for every federate"),
        "{out}"
    );
}

#[test]
fn demo_without_the_fom_says_where_it_looked() {
    let o = glidepath(&["demo", "--fom", "elsewhere/air-traffic.xml"]);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("elsewhere/air-traffic.xml not found") && err.contains("--fom"),
        "{err}"
    );
}

#[test]
fn demo_rejects_an_unknown_transport() {
    let o = glidepath_with_env(
        &["demo", "--steps", "1"],
        &[("GLIDEPATH_TRANSPORT", "carrier-pigeon")],
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o)
            .contains("unknown transport `carrier-pigeon`; this build knows: inproc, nats, shm"),
        "{}",
        stderr(&o)
    );
}

/// A log filter that does not parse stops the command before it starts, naming the
/// variable and its value; a valid one is taken.
#[test]
fn a_bad_log_filter_is_named() {
    let o = glidepath_with_env(&["demo", "--steps", "1"], &[("GLIDEPATH_LOG", "warn,=[")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("GLIDEPATH_LOG=\"warn,=[\" is not a log filter"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    let o = glidepath_with_env(
        &["demo", "--steps", "1"],
        &[("GLIDEPATH_LOG", "info,glidepath_transport=debug")],
    );
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn bad_flags_fail_with_a_message() {
    let o = glidepath(&["demo", "--federates", "lots"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("invalid value 'lots' for '--federates"),
        "{}",
        stderr(&o)
    );
    let o = glidepath(&["demo", "--process-model", "telepathic"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("telepathic") && stderr(&o).contains("evoked, immediate"),
        "{}",
        stderr(&o)
    );
    let o = glidepath(&["--bogus"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unexpected argument '--bogus'"),
        "{}",
        stderr(&o)
    );
    let o = glidepath(&["fom", "check"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("<FILE>"), "{}", stderr(&o));
}

/// Recorded traffic from the command line (issue 12): a layout with one CSV source and
/// no instant in it runs from the data's first row for the data's span, says so before
/// it starts, and publishes and receives every row.
#[test]
fn a_recorded_layout_takes_its_frame_from_the_data() {
    let report =
        std::env::temp_dir().join(format!("glidepath-cli-recorded-{}", std::process::id()));
    let o = glidepath(&[
        "run",
        "layouts/recorded-switzerland.toml",
        "--report",
        report.to_str().unwrap(),
    ]);
    let (out, err) = (stdout(&o), stderr(&o));
    assert!(o.status.success(), "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        err.contains("second 0 at 2018-08-01T11:30:00Z (the first row of block `OpenSky Switzerland`; day_start in the layout or --day-start sets it)"),
        "{err}"
    );
    assert!(
        err.contains("length 9 min 51 s (591 s, to 2018-08-01T11:39:51Z; the span of the data; --hours sets it)"),
        "{err}"
    );
    assert!(
        out.contains("every published message was received"),
        "{out}"
    );
    assert!(out.contains("## Traffic sources"), "{out}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["published"].as_u64(), Some(2_359));
    assert_eq!(json["received"].as_u64(), Some(2_359));
    assert_eq!(json["day_start"], "2018-08-01T11:30:00Z");
    assert_eq!(json["sources"][0]["bad_rows"].as_u64(), Some(0));
    let _ = std::fs::remove_dir_all(&report);
}

/// Acceptance (issue 12): a traffic source with no row in the window fails the run
/// with the reason, never an empty report with exit status 0.
#[test]
fn a_recorded_source_outside_the_window_fails_the_run() {
    let report =
        std::env::temp_dir().join(format!("glidepath-cli-elsewhere-{}", std::process::id()));
    let o = glidepath(&[
        "run",
        "layouts/recorded-switzerland.toml",
        "--day-start",
        "2021-10-07T00:00:00Z",
        "--hours",
        "24",
        "--report",
        report.to_str().unwrap(),
    ]);
    let err = stderr(&o);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains("second 0 at 2021-10-07T00:00:00Z (--day-start)"),
        "{err}"
    );
    assert!(
        err.contains("block `OpenSky Switzerland`: initialization: 0 of 2,359 rows fall in the simulated window 2021-10-07T00:00:00Z + 24 h; first row at 2018-08-01T11:30:00Z"),
        "{err}"
    );
    assert!(
        !report.join("report.json").exists(),
        "no report of an empty run"
    );
    let o = glidepath(&[
        "run",
        "layouts/recorded-switzerland.toml",
        "--day-start",
        "yesterday",
    ]);
    assert!(!o.status.success());
    assert!(
        stderr(&o).contains("--day-start: \"yesterday\" is not an RFC 3339 time"),
        "{}",
        stderr(&o)
    );
}

//! The `glidepath` binary over NATS, as the README tells users to run it: a real
//! `nats-server`, `glidepath server` as its own process, and the demo federation
//! either in one process or spread over three (a monitor and two aircraft processes).
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use glidepath::backend::nats::NatsServerProcess;

mod support;
use support::*;

/// Generous: each process finishes in well under a second on an idle machine.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A running `glidepath server` and the lines of its standard error, read as they come.
struct ExecutiveServer {
    _process: Running,
    stderr: mpsc::Receiver<String>,
}

impl ExecutiveServer {
    /// Waits up to [`TIMEOUT`] for a line of standard error that `matches`; returns it.
    fn stderr_line(&self, matches: impl Fn(&str) -> bool) -> Option<String> {
        let deadline = std::time::Instant::now() + TIMEOUT;
        while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
            match self.stderr.recv_timeout(left) {
                Ok(line) if matches(&line) => return Some(line),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
        None
    }
}

/// Forwards each line of `from` to a channel, from a thread of its own.
fn lines_of(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Starts `glidepath server` on `url` (with `extra` arguments) and waits for its
/// `ready` line.
fn executive_server(url: &str, extra: &[&str]) -> ExecutiveServer {
    let mut args = vec!["server", "--nats-url", url];
    args.extend_from_slice(extra);
    let mut child = glidepath(&args).spawn().unwrap();
    let stdout = lines_of(child.stdout.take().unwrap());
    let stderr = lines_of(child.stderr.take().unwrap());
    let process = Running(child);
    loop {
        match stdout.recv_timeout(TIMEOUT) {
            Ok(line) if line.ends_with("; ready") => {
                assert!(line.contains(url), "{line}");
                return ExecutiveServer {
                    _process: process,
                    stderr,
                };
            }
            Ok(_) => {}
            Err(e) => {
                let err: Vec<String> = stderr.try_iter().collect();
                panic!("glidepath server did not get ready ({e}); stderr: {err:?}");
            }
        }
    }
}

/// Runs a command to completion within [`TIMEOUT`]; returns (success, stdout, stderr).
fn run(mut command: Command) -> (bool, String, String) {
    let child = command.spawn().unwrap();
    let id = child.id();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(TIMEOUT)
        .unwrap_or_else(|_| panic!("process {id} ({command:?}) did not finish within {TIMEOUT:?}"))
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn nats_server() -> NatsServerProcess {
    NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn the_demo_runs_over_nats_with_a_server_process() {
    let nats = nats_server();
    let url = nats.url();
    let _server = executive_server(&url, &[]);
    let (ok, out, err) = run(glidepath(&[
        "demo",
        "--transport",
        "nats",
        "--nats-url",
        &url,
        "--federates",
        "2",
        "--steps",
        "30",
    ]));
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    for line in [
        "glidepath demo: 2 aircraft and 1 monitor, 30 steps, evoked callbacks, nats transport",
        "reflections at monitor: aircraft-1 31, aircraft-2 31",
        "delivered in time-stamp order: 60 of 62",
        "grants: 90 (30 per federate), final logical time 30 for every federate",
        "resigned: 2 aircraft (objects deleted, 2 removals seen by the monitor), monitor",
    ] {
        assert!(
            out.lines().any(|l| l == line),
            "missing `{line}` in:\n{out}"
        );
    }
}

#[test]
fn a_federation_of_three_processes_exchanges_updates_and_advances_time() {
    let nats = nats_server();
    let url = nats.url();
    let _server = executive_server(&url, &[]);
    let common = [
        "demo",
        "--transport",
        "nats",
        "--nats-url",
        &url,
        "--steps",
        "40",
        "--federation",
        "spread",
    ];
    let spawn = |extra: &[&str]| {
        let args: Vec<&str> = common.iter().chain(extra).copied().collect();
        let command = glidepath(&args);
        thread::spawn(move || run(command))
    };
    let monitor = spawn(&["--role", "monitor", "--federates", "2"]);
    let first = spawn(&["--role", "aircraft", "--federates", "1", "--index", "1"]);
    let second = spawn(&[
        "--role",
        "aircraft",
        "--federates",
        "1",
        "--index",
        "2",
        "--process-model",
        "immediate",
    ]);
    support::check_spread_demo(
        monitor.join().unwrap(),
        [first.join().unwrap(), second.join().unwrap()],
    );
}

#[test]
fn a_second_executive_server_refuses_to_start() {
    let nats = nats_server();
    let url = nats.url();
    let _server = executive_server(&url, &[]);
    let (ok, _, err) = run(glidepath(&["server", "--nats-url", &url]));
    assert!(!ok);
    assert!(
        err.contains("another executive server already answers"),
        "{err}"
    );
}

/// What a peer does wrong is logged where the operator looks: a federate with the
/// wrong federation key is refused, and `glidepath server` says so on standard error
/// with the sender's name, while the federate's own error says what failed.
#[test]
fn the_server_logs_a_federate_with_the_wrong_key() {
    let nats = nats_server();
    let url = nats.url();
    let dir = std::env::temp_dir().join(format!("glidepath-wrong-key-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (right, wrong) = (dir.join("right.key"), dir.join("wrong.key"));
    std::fs::write(&right, "11".repeat(32)).unwrap();
    std::fs::write(&wrong, "22".repeat(32)).unwrap();
    let server = executive_server(&url, &["--key-file", right.to_str().unwrap()]);
    let (ok, out, err) = run(glidepath(&[
        "demo",
        "--transport",
        "nats",
        "--nats-url",
        &url,
        "--key-file",
        wrong.to_str().unwrap(),
    ]));
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!ok, "a federate with the wrong key ran: {out}");
    assert!(err.contains("authentication"), "{err}");
    let line = server
        .stderr_line(|l| l.contains("refused a request that failed authentication"))
        .expect("the server logged nothing about the refused request");
    assert!(
        line.contains("WARN") && line.contains("sender=\"glidepath-endpoint-"),
        "{line}"
    );
}

#[test]
fn the_demo_without_a_nats_server_says_what_to_start() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("nats://127.0.0.1:{port}");
    let (ok, _, err) = run(glidepath(&[
        "demo",
        "--transport",
        "nats",
        "--nats-url",
        &url,
    ]));
    assert!(!ok);
    assert!(err.contains(&url) && err.contains("nats-server"), "{err}");
    let (ok, _, err) = run(glidepath(&["demo", "--role", "monitor"]));
    assert!(!ok);
    assert!(err.contains("needs --transport nats"), "{err}");
}

/// The arguments of live process `pid` (`None` when gone or a zombie).
fn live_cmdline(pid: u32) -> Option<Vec<Vec<u8>>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    if stat
        .rsplit(')')
        .next()
        .unwrap_or("")
        .trim_start()
        .starts_with('Z')
    {
        return None;
    }
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    Some(cmdline.split(|&b| b == 0).map(<[u8]>::to_vec).collect())
}

/// Whether `args` has `flag` followed by a value `value` accepts.
fn has_flag(args: &[Vec<u8>], flag: &str, value: impl Fn(&[u8]) -> bool) -> bool {
    args.windows(2)
        .any(|w| w[0] == flag.as_bytes() && value(&w[1]))
}

/// Pids of the block processes a `glidepath run --processes` with pid `manager`
/// started: their command lines name the federation `atm-<manager>-...`.
fn block_processes(manager: u32) -> Vec<u32> {
    let prefix = format!("atm-{manager}-");
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| {
            live_cmdline(pid).is_some_and(|args| {
                has_flag(&args, "--federation", |v| v.starts_with(prefix.as_bytes()))
            })
        })
        .collect()
}

/// The pid of the block process named `block` of the run with pid `manager`.
fn block_process_named(manager: u32, block: &str) -> Option<u32> {
    block_processes(manager).into_iter().find(|&pid| {
        live_cmdline(pid).is_some_and(|args| has_flag(&args, "--block", |v| v == block.as_bytes()))
    })
}

/// `glidepath run LAYOUT --processes` over NATS at `url`, writing to `report`.
fn run_in_processes(layout: &str, url: &str, report: &Path, extra: &[&str]) -> Command {
    let report = report.to_str().unwrap();
    let mut args = vec![
        "run",
        layout,
        "--processes",
        "--transport",
        "nats",
        "--nats-url",
        url,
        "--report",
        report,
    ];
    args.extend_from_slice(extra);
    glidepath(&args)
}

/// Waits (up to `within`) until the run with pid `manager` has no block process left.
fn wait_blocks_gone(manager: u32, within: Duration, what: &str) {
    let deadline = std::time::Instant::now() + within;
    while !block_processes(manager).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: {:?}",
            block_processes(manager)
        );
        thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn the_atm_layout_runs_with_every_block_in_a_process_of_its_own() {
    let nats = nats_server();
    let url = nats.url();
    let report = std::env::temp_dir().join(format!("glidepath-processes-{}", std::process::id()));
    let mut command = run_in_processes(
        "layouts/atm-testbed-day.toml",
        &url,
        &report,
        &["--hours", "0.25", "--density", "0.05"],
    );
    command.stdout(Stdio::piped());
    let child = command.spawn().unwrap();
    let manager = child.id();
    // While the run lasts, its three blocks are processes of their own.
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let mut most = 0;
    let output = loop {
        most = most.max(block_processes(manager).len());
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(output) => break output.unwrap(),
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(e) => panic!("{e}"),
        }
    };
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(output.status.success(), "stdout:\n{out}\nstderr:\n{err}");
    assert_eq!(
        most, 3,
        "two traffic blocks and the monitor, each its own process"
    );
    assert!(
        block_processes(manager).is_empty(),
        "no block outlives its run"
    );
    assert!(out.contains("blocks as processes"), "{out}");
    assert!(
        out.contains("every published message was received"),
        "{out}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["deployment"], "processes");
    assert_eq!(json["transport"], "nats");
    let published = json["published"].as_u64().unwrap();
    assert!(published > 1000, "{published}");
    assert_eq!(json["received"].as_u64(), Some(published));
    assert_eq!(json["lost"].as_u64(), Some(0));
    assert_eq!(json["duplicated"].as_u64(), Some(0));
    // Latency crosses processes here: the publisher's stamp and the monitor's
    // reading come from two processes' clocks. Sanity bounds only (a clock offset
    // that made stamps run ahead of the monitor would show as 0); that the clock
    // reads the system's time is checked in glidepath-transport.
    let latency = &json["latency_ms"];
    let (min, max) = (
        latency["min"].as_f64().unwrap(),
        latency["max"].as_f64().unwrap(),
    );
    assert!(min > 0.0 && max < 60_000.0, "{latency}");
    let _ = std::fs::remove_dir_all(&report);
}

/// Recorded traffic with its blocks in processes: the manager takes second 0 and the
/// length from the data and hands them to the block processes (`--day-start`,
/// `--hours`), which play every row.
#[test]
fn a_recorded_layout_runs_with_its_blocks_in_processes() {
    let nats = nats_server();
    let url = nats.url();
    let report = std::env::temp_dir().join(format!(
        "glidepath-recorded-processes-{}",
        std::process::id()
    ));
    let (ok, out, err) = run(run_in_processes(
        "layouts/recorded-switzerland.toml",
        &url,
        &report,
        &[],
    ));
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(err.contains("second 0 at 2018-08-01T11:30:00Z"), "{err}");
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(report.join("report.json")).unwrap()).unwrap();
    assert_eq!(json["deployment"], "processes");
    assert_eq!(json["published"].as_u64(), Some(2_359));
    assert_eq!(json["received"].as_u64(), Some(2_359));
    assert_eq!(json["sources"][0]["published"].as_u64(), Some(2_359));
    let _ = std::fs::remove_dir_all(&report);
}

#[test]
fn a_block_process_that_fails_fails_the_run_and_says_which_and_why() {
    let nats = nats_server();
    let url = nats.url();
    let dir = std::env::temp_dir().join(format!("glidepath-failing-block-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let layout = dir.join("layout.toml");
    std::fs::write(
        &layout,
        r#"
name = "missing-recording"
day_start = "2016-03-23T07:00:00Z"

[[block]]
name = "Replay"
kind = "player"
source = { kind = "recording", path = "no-such-recording.gprec" }

[[block]]
name = "Monitor"
kind = "monitor"

[[link]]
from = "Replay"
to = "Monitor"
"#,
    )
    .unwrap();
    let (ok, out, err) = run(run_in_processes(
        layout.to_str().unwrap(),
        &url,
        &dir.join("report"),
        &["--hours", "0.01"],
    ));
    assert!(!ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        err.contains("block `Replay`")
            && err.contains("no-such-recording.gprec")
            && err.contains("not found"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn block_processes_end_when_their_manager_is_killed() {
    let nats = nats_server();
    let url = nats.url();
    let report = std::env::temp_dir().join(format!("glidepath-killed-{}", std::process::id()));
    let mut command = run_in_processes("layouts/atm-testbed-day.toml", &url, &report, &[]);
    command.stdout(Stdio::null()).stderr(Stdio::null());
    let mut manager = command.spawn().unwrap();
    let id = manager.id();
    let deadline = std::time::Instant::now() + TIMEOUT;
    while block_processes(id).len() < 3 {
        assert!(
            std::time::Instant::now() < deadline,
            "the blocks did not start"
        );
        thread::sleep(Duration::from_millis(20));
    }
    // SIGKILL: the manager gets no chance to clean up; its blocks notice on their own.
    manager.kill().unwrap();
    manager.wait().unwrap();
    wait_blocks_gone(id, Duration::from_secs(30), "blocks outlived their manager");
    let _ = std::fs::remove_dir_all(&report);
    // A killed manager cannot remove the directory of its blocks' outcome files.
    let _ = std::fs::remove_dir_all(std::env::temp_dir().join(format!("glidepath-run-{id}-0")));
}

#[test]
fn a_block_process_that_dies_mid_run_fails_the_run_at_once() {
    let nats = nats_server();
    let url = nats.url();
    let report = std::env::temp_dir().join(format!("glidepath-died-{}", std::process::id()));
    let mut command = run_in_processes("layouts/atm-testbed-day.toml", &url, &report, &[]);
    command.stdout(Stdio::null());
    let child = command.spawn().unwrap();
    let manager = child.id();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let deadline = std::time::Instant::now() + TIMEOUT;
    let monitor = loop {
        if let Some(pid) = block_process_named(manager, "Network Performance") {
            if block_processes(manager).len() == 3 {
                break pid;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the blocks did not start"
        );
        thread::sleep(Duration::from_millis(20));
    };
    // Let the day get going, then the monitor dies without a word.
    thread::sleep(Duration::from_millis(1500));
    let killed = Command::new("kill")
        .args(["-9", &monitor.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // A full day takes minutes; the run must fail well before.
    let output = rx
        .recv_timeout(TIMEOUT)
        .expect("the run did not fail within a minute of its monitor dying")
        .unwrap();
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{err}");
    assert!(
        err.contains("block `Network Performance`") && err.contains("ended"),
        "{err}"
    );
    wait_blocks_gone(
        manager,
        Duration::from_secs(30),
        "blocks outlived the failed run",
    );
    let _ = std::fs::remove_dir_all(&report);
}

/// A regulating federate's process is killed (SIGKILL, no resign): a constrained
/// federate's time advance waits for it only until the executive server (`--lost-after
/// 2`) has found its endpoint gone and resigned it, then is granted.
#[test]
fn a_killed_regulator_is_resigned_and_time_advances_go_on() {
    use glidepath::{Callback, Rti, RtiConfig, TransportKind};
    let nats = nats_server();
    let url = nats.url();
    let _server = executive_server(&url, &["--lost-after", "2"]);
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = url.clone();
    let rti = Rti::from_config(&config).unwrap();
    let fom = glidepath::Fom::load_files(&[support::workspace_root().join("foms/air-traffic.xml")])
        .unwrap();
    rti.create_federation_execution_with_fom("lost-regulator", fom)
        .unwrap();
    let watcher = rti
        .join(
            "lost-regulator",
            glidepath::JoinOptions::named("watcher", "watcher"),
        )
        .unwrap();
    watcher.enable_time_constrained().unwrap();
    let next = |what: &str| {
        watcher
            .next_callback(TIMEOUT)
            .unwrap_or_else(|| panic!("no callback while waiting for {what}"))
    };
    while !matches!(next("constrained"), Callback::TimeConstrainedEnabled { .. }) {}
    // An aircraft in a process of its own: regulating, flying for far longer than this.
    let aircraft = Running(
        glidepath(&[
            "demo",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--role",
            "aircraft",
            "--federates",
            "1",
            "--steps",
            "100000000",
            "--federation",
            "lost-regulator",
        ])
        .spawn()
        .unwrap(),
    );
    let listed = |w: &glidepath::Federate| {
        w.list_federates()
            .unwrap()
            .iter()
            .any(|m| m.name.starts_with("aircraft-1"))
    };
    // Regulating, as the watcher sees it: its GALT is bounded. (A member is not yet
    // a regulator; a request made before would be granted at once.)
    let deadline = std::time::Instant::now() + TIMEOUT;
    while watcher.query_galt().is_none() {
        assert!(
            std::time::Instant::now() < deadline,
            "the aircraft never became a regulator"
        );
        let _ = watcher.next_callback(Duration::from_millis(20));
    }
    assert!(listed(&watcher));
    // While it flies, it holds the watcher back: a grant at 1e9 cannot come.
    watcher.time_advance_request(1.0e9).unwrap();
    thread::sleep(Duration::from_millis(500));
    let early: Vec<Callback> = std::iter::from_fn(|| watcher.next_callback(Duration::ZERO))
        .filter(|c| matches!(c, Callback::TimeAdvanceGrant { .. }))
        .collect();
    assert!(
        early.is_empty(),
        "granted while the regulator flew: {early:?}"
    );
    drop(aircraft); // SIGKILL
    let killed = std::time::Instant::now();
    loop {
        match next("the grant after the regulator was lost") {
            Callback::TimeAdvanceGrant { time } => {
                assert_eq!(time, glidepath::LogicalTime::new(1.0e9).unwrap());
                break;
            }
            _ => continue,
        }
    }
    let waited = killed.elapsed();
    println!("granted {waited:?} after the regulator's process was killed (--lost-after 2)");
    assert!(
        !listed(&watcher),
        "the lost aircraft is still listed as a member"
    );
    watcher
        .resign(glidepath::ResignAction::DeleteObjects)
        .unwrap();
}

//! The `glidepath` binary over NATS, as the README tells users to run it: a real
//! `nats-server`, `glidepath server` as its own process, and the demo federation
//! either in one process or spread over three (a monitor and two aircraft processes).
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use glidepath::transport::nats::NatsServerProcess;

/// Generous: each process finishes in well under a second on an idle machine.
const TIMEOUT: Duration = Duration::from_secs(60);

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn glidepath(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_glidepath"));
    c.args(args)
        .current_dir(workspace_root())
        .env_remove("GLIDEPATH_TRANSPORT")
        .env_remove("GLIDEPATH_NATS_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A child process killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `glidepath server` on `url` and waits for its `ready` line.
fn executive_server(url: &str) -> Running {
    let mut child = glidepath(&["server", "--nats-url", url]).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let server = Running(child);
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let _ = tx.send(line);
        }
    });
    loop {
        match rx.recv_timeout(TIMEOUT) {
            Ok(line) if line.ends_with("; ready") => {
                assert!(line.contains(url), "{line}");
                return server;
            }
            Ok(_) => {}
            Err(e) => {
                let mut err = String::new();
                let _ = stderr.read_to_string(&mut err);
                panic!("glidepath server did not get ready ({e}); stderr: {err}");
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
    let _server = executive_server(&url);
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
    let _server = executive_server(&url);
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
    let (ok, out, err) = monitor.join().unwrap();
    assert!(ok, "monitor stdout:\n{out}\nstderr:\n{err}");
    for line in [
        "monitor discovered 2 aircraft: GP101, GP102",
        "delivered in time-stamp order: 80 of 82",
        "grants: 40, final logical time 40",
        "resigned after 2 removals",
    ] {
        assert!(
            out.lines().any(|l| l == line),
            "missing `{line}` in monitor's:\n{out}"
        );
    }
    assert!(
        out.lines()
            .any(|l| l.starts_with("reflections at monitor: ") && l.matches(" 41").count() == 2),
        "{out}"
    );
    for (aircraft, index) in [(first, 1), (second, 2)] {
        let (ok, out, err) = aircraft.join().unwrap();
        assert!(ok, "aircraft {index} stdout:\n{out}\nstderr:\n{err}");
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("aircraft-{index} as federate#"))
                    && l.ends_with(": 40 grants, final logical time 40, resigned")),
            "{out}"
        );
    }
}

#[test]
fn a_second_executive_server_refuses_to_start() {
    let nats = nats_server();
    let url = nats.url();
    let _server = executive_server(&url);
    let (ok, _, err) = run(glidepath(&["server", "--nats-url", &url]));
    assert!(!ok);
    assert!(
        err.contains("another executive server already answers"),
        "{err}"
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

//! What the CLI tests share: the workspace root, the `glidepath` command with the
//! user's transport settings removed, a child process killed on drop, and a
//! `glidepath server --failover` process whose role lines are read as they come.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// The `glidepath` binary with `args`, run from the workspace root, its standard
/// output and error piped, and no `GLIDEPATH_TRANSPORT` or `GLIDEPATH_NATS_URL` from
/// the environment.
pub fn glidepath(args: &[&str]) -> Command {
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
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A `glidepath server --failover` process (killed on drop) and its standard output,
/// line by line.
pub struct FailoverServer {
    pub child: Child,
    lines: mpsc::Receiver<String>,
}

impl FailoverServer {
    /// Starts one on the NATS server(s) `urls`, with `extra` arguments.
    pub fn start(urls: &str, extra: &[&str]) -> FailoverServer {
        let mut child = Command::new(env!("CARGO_BIN_EXE_glidepath"))
            .args(["server", "--failover"])
            .args(extra)
            .current_dir(workspace_root())
            .env("GLIDEPATH_NATS_URL", urls)
            .env_remove("GLIDEPATH_TRANSPORT")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        FailoverServer { child, lines }
    }

    /// Waits (up to a minute) for a line containing `what`.
    pub fn expect(&self, what: &str) {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(what) => return,
                Ok(_) => {}
                Err(e) => panic!("no `{what}` from the server: {e}"),
            }
        }
    }
}

impl Drop for FailoverServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What `glidepath demo --federation spread --steps 40` printed in its three
/// processes (success, stdout, stderr): the monitor with `--federates 2`, then the
/// aircraft with `--index 1` and `--index 2`. Checks the federation ran whole.
pub fn check_spread_demo(monitor: (bool, String, String), aircraft: [(bool, String, String); 2]) {
    let (ok, out, err) = monitor;
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
    for (index, (ok, out, err)) in (1..).zip(aircraft) {
        assert!(ok, "aircraft {index} stdout:\n{out}\nstderr:\n{err}");
        assert!(
            out.lines()
                .any(|l| l.starts_with(&format!("aircraft-{index} as federate#"))
                    && l.ends_with(": 40 grants, final logical time 40, resigned")),
            "{out}"
        );
    }
}

//! `glidepath bench bus throughput --processes`: every subscriber, the bus's and the
//! raw NATS peer's, as a process of its own, as the paper ran them (seed 003 section
//! IV.A: "the publisher and subscribers ... were executed as individual processes").
//! A subscriber process is this program again with a hidden flag, as the latency
//! suite runs its ponger.
//!
//! The protocol, on the child's standard input and output:
//! 1. the parent starts `glidepath bench bus throughput --subscriber-of GROUP` (or
//!    `--raw-subscriber-of SUBJECT`) once per subscriber; each connects, subscribes
//!    and prints `ready`;
//! 2. once every child is ready the parent writes `go` to each and publishes (so a
//!    child ready early does not spend its patience while the slowest starts);
//! 3. each child receives until it has `--count` measured messages or none came for
//!    `PATIENCE`, prints its `SubscriberReport` as one JSON line and ends.
//!
//! Arrival times are [`glidepath::monotonic_now_ns`] (CLOCK_MONOTONIC), one clock for
//! every process of the host, so the parent computes the rate from its first send to
//! the last arrival exactly as for threads. A child the parent gives up on is killed
//! and reaped ([`SubscriberProcesses`]'s `Drop`); a child whose parent died ends by
//! itself, at end of input before `go` and after `PATIENCE` of silence after it.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use crossbeam_channel::{Receiver, Sender};
use glidepath::bus::{Bus, Pattern, Subject};

use crate::bus::{config, receive_bus, receive_raw, BusBenchOptions, SubscriberReport, PATTERN};

/// Which subscriber a child process is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SubscriberRole {
    /// A `glidepath::bus` subscriber in this group (`--subscriber-of GROUP`).
    Bus(String),
    /// A raw NATS subscriber on this subject (`--raw-subscriber-of SUBJECT`).
    Raw(String),
}

impl SubscriberRole {
    fn what(&self) -> &'static str {
        match self {
            SubscriberRole::Bus(_) => "bus subscriber",
            SubscriberRole::Raw(_) => "raw NATS subscriber",
        }
    }
}

/// How long the children of one configuration have to say `ready`: 50 processes
/// starting on two busy cores, each connecting and (for the ordered levels) creating
/// its JetStream consumer, take seconds.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How long after the last send the parent waits for every report. A child ends by
/// itself once it has everything or after `PATIENCE` of silence; this bounds one
/// that hangs in spite of that, and leaves a backlog of 50 × 10^4 large messages on
/// two cores time to drain.
const REPORT_TIMEOUT: Duration = Duration::from_secs(180);

/// How long a child that has reported may take to close its connection and end.
const EXIT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long an error waits for a dead child's standard error to be read to its end.
const STDERR_WAIT: Duration = Duration::from_secs(1);

/// How much of the end of a child's standard error an error quotes.
const STDERR_TAIL_CHARS: usize = 4096;

/// One line of a child's standard output, or its end.
enum Line {
    Ready,
    Report(String),
    Other,
    Closed,
}

struct SubscriberProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Standard error, all of it once the child has ended (quoted when it fails).
    stderr: Receiver<Vec<u8>>,
}

/// The subscriber processes of one measurement, killed and reaped when dropped
/// unless they ended by themselves.
pub(crate) struct SubscriberProcesses {
    role: SubscriberRole,
    children: Vec<SubscriberProcess>,
    /// Every child's standard output, line by line, with the child's index.
    lines: Receiver<(usize, Line)>,
    /// [`REPORT_TIMEOUT`] and [`EXIT_TIMEOUT`], shorter in tests.
    report_timeout: Duration,
    exit_timeout: Duration,
}

impl SubscriberProcesses {
    /// Starts `n` subscriber processes and waits until each has said `ready`.
    pub(crate) fn spawn(
        opts: &BusBenchOptions,
        role: &SubscriberRole,
        n: usize,
    ) -> anyhow::Result<SubscriberProcesses> {
        let exe = std::env::current_exe().context("finding this program to start subscribers")?;
        let commands = (0..n).map(|_| {
            let mut command = Command::new(&exe);
            command.args(["bench", "bus", "throughput", "--transport", "nats"]);
            command.args(["--nats-url", &opts.nats_url]);
            command.args(["--count", &opts.count.to_string()]);
            command.args(["--encoding", opts.encoding.name()]);
            command.args(["--service", opts.level.name()]);
            match role {
                SubscriberRole::Bus(group) => command.args(["--subscriber-of", group]),
                SubscriberRole::Raw(subject) => command.args(["--raw-subscriber-of", subject]),
            };
            command
        });
        SubscriberProcesses::start(role, commands, READY_TIMEOUT)
    }

    /// Starts one child per command and waits up to `ready_timeout` until each has
    /// said `ready`.
    fn start(
        role: &SubscriberRole,
        commands: impl ExactSizeIterator<Item = Command>,
        ready_timeout: Duration,
    ) -> anyhow::Result<SubscriberProcesses> {
        let n = commands.len();
        let (tx, rx) = crossbeam_channel::unbounded();
        let mut this = SubscriberProcesses {
            role: role.clone(),
            children: Vec::with_capacity(n),
            lines: rx,
            report_timeout: REPORT_TIMEOUT,
            exit_timeout: EXIT_TIMEOUT,
        };
        for (k, mut command) in commands.enumerate() {
            command
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            let mut child = command
                .spawn()
                .with_context(|| format!("starting {} process {k}", role.what()))?;
            let stdout = child.stdout.take().expect("piped");
            let stderr = child.stderr.take().expect("piped");
            let stdin = child.stdin.take();
            let (stderr_tx, stderr_rx) = crossbeam_channel::bounded(1);
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = BufReader::new(stderr).read_to_end(&mut bytes);
                let _ = stderr_tx.send(bytes);
            });
            this.children.push(SubscriberProcess {
                child,
                stdin,
                stderr: stderr_rx,
            });
            read_lines(k, stdout, tx.clone());
        }
        let deadline = Instant::now() + ready_timeout;
        let mut ready = vec![false; n];
        while let Some(waiting) = ready.iter().position(|r| !r) {
            match this.lines.recv_deadline(deadline) {
                Ok((k, Line::Ready)) => ready[k] = true,
                Ok((k, Line::Closed)) => return Err(this.failed(k, "ended before it was ready")),
                Ok(_) => {}
                Err(_) => {
                    return Err(this.failed(
                        waiting,
                        &format!("did not say ready within {ready_timeout:?}"),
                    ))
                }
            }
        }
        Ok(this)
    }

    /// Tells every child to start waiting for messages: the publisher starts now.
    pub(crate) fn go(&mut self) -> anyhow::Result<()> {
        for k in 0..self.children.len() {
            let told = self.children[k]
                .stdin
                .take()
                .map(|mut stdin| stdin.write_all(b"go\n").and_then(|()| stdin.flush()));
            if let Some(Err(e)) = told {
                return Err(self.failed(k, &format!("could not be told to start ({e})")));
            }
        }
        Ok(())
    }

    /// Every child's report, once each has sent it and ended.
    pub(crate) fn reports(mut self) -> anyhow::Result<Vec<SubscriberReport>> {
        let n = self.children.len();
        let mut reports: Vec<Option<SubscriberReport>> = vec![None; n];
        let mut closed = vec![false; n];
        let deadline = Instant::now() + self.report_timeout;
        while let Some(waiting) = reports.iter().position(Option::is_none) {
            match self.lines.recv_deadline(deadline) {
                Ok((k, Line::Report(json))) => match serde_json::from_str(&json) {
                    Ok(report) => reports[k] = Some(report),
                    Err(e) => {
                        return Err(self.failed(k, &format!("sent a report that is not one ({e})")))
                    }
                },
                Ok((k, Line::Closed)) => {
                    closed[k] = true;
                    if reports[k].is_none() {
                        return Err(self.failed(k, "ended without a report"));
                    }
                }
                Ok(_) => {}
                Err(_) => {
                    return Err(self.failed(
                        waiting,
                        &format!(
                            "sent no report within {:?} of the last message",
                            self.report_timeout
                        ),
                    ))
                }
            }
        }
        // Each child ends once it has reported: its output closes, then it is reaped.
        let deadline = Instant::now() + self.exit_timeout;
        while let Some(open) = closed.iter().position(|c| !c) {
            match self.lines.recv_deadline(deadline) {
                Ok((k, Line::Closed)) => closed[k] = true,
                Ok(_) => {}
                Err(_) => {
                    return Err(self.failed(
                        open,
                        &format!("did not end within {:?} of its report", self.exit_timeout),
                    ))
                }
            }
        }
        for k in 0..n {
            let status = self.children[k].child.wait()?;
            if !status.success() {
                return Err(self.failed(k, "failed after its report"));
            }
        }
        Ok(reports.into_iter().flatten().collect())
    }

    /// The error for child `k`, which is killed (if still running) and reaped first
    /// so that its exit status and all of its standard error can be quoted.
    fn failed(&mut self, k: usize, what: &str) -> anyhow::Error {
        let p = &mut self.children[k];
        let pid = p.child.id();
        let status = match p.child.try_wait() {
            Ok(Some(status)) => format!("{status}"),
            _ => {
                let _ = p.child.kill();
                match p.child.wait() {
                    Ok(status) => format!("killed, {status}"),
                    Err(e) => format!("killed, not reaped: {e}"),
                }
            }
        };
        // Complete once the child has ended, unless something it started holds the
        // pipe open: then nothing rather than a wait.
        let stderr = p.stderr.recv_timeout(STDERR_WAIT).unwrap_or_default();
        let stderr = String::from_utf8_lossy(&stderr);
        let tail = stderr
            .char_indices()
            .rev()
            .nth(STDERR_TAIL_CHARS)
            .map_or(&*stderr, |(at, _)| &stderr[at..]);
        anyhow!(
            "{} process {k} of {} (pid {pid}) {what} ({status}); its standard error:\n{}",
            self.role.what(),
            self.children.len(),
            if tail.trim().is_empty() {
                "(empty)"
            } else {
                tail.trim_end()
            }
        )
    }
}

impl Drop for SubscriberProcesses {
    fn drop(&mut self) {
        for p in &mut self.children {
            if matches!(p.child.try_wait(), Ok(None)) {
                let _ = p.child.kill();
            }
            let _ = p.child.wait();
        }
    }
}

/// Sends child `k`'s standard output, line by line, then [`Line::Closed`].
fn read_lines(k: usize, stdout: impl Read + Send + 'static, tx: Sender<(usize, Line)>) {
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let line = line.trim();
            let parsed = if line == "ready" {
                Line::Ready
            } else if line.starts_with('{') {
                Line::Report(line.to_string())
            } else {
                Line::Other
            };
            if tx.send((k, parsed)).is_err() {
                return;
            }
        }
        let _ = tx.send((k, Line::Closed));
    });
}

/// `--subscriber-of GROUP` or `--raw-subscriber-of SUBJECT`: this process is one
/// subscriber of a `--processes` run (see the module doc for the protocol).
pub fn serve_subscriber(opts: &BusBenchOptions, role: &SubscriberRole) -> anyhow::Result<()> {
    let report = match role {
        SubscriberRole::Bus(group) => {
            let group = Subject::new(group).with_context(|| format!("--subscriber-of {group}"))?;
            let name = format!("subscriber-{}", std::process::id());
            let bus = Bus::connect(&config(opts, &name, &group)).with_context(|| {
                format!(
                    "bus subscriber: cannot connect to NATS at {}",
                    opts.nats_url
                )
            })?;
            let sub = bus
                .subscribe(&Pattern::new(PATTERN)?)
                .context("bus subscriber: cannot subscribe")?;
            ready_then_go()?;
            let report = receive_bus(&sub, opts.count, || {});
            drop(sub);
            bus.close();
            report
        }
        SubscriberRole::Raw(subject) => {
            // One worker keeps the connection served while the loop parses.
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .enable_all()
                .build()?;
            let client = rt
                .block_on(async_nats::connect(&opts.nats_url))
                .with_context(|| {
                    format!(
                        "raw NATS subscriber: cannot connect to NATS at {}",
                        opts.nats_url
                    )
                })?;
            let mut sub = rt
                .block_on(client.subscribe(subject.clone()))
                .context("raw NATS subscriber: cannot subscribe")?;
            // Effective at the server before `ready` (as for the thread version).
            rt.block_on(crate::harness::settle(&client))?;
            ready_then_go()?;
            receive_raw(rt.handle(), &mut sub, opts.count, || {})
        }
    };
    let mut stdout = std::io::stdout().lock();
    serde_json::to_writer(&mut stdout, &report)?;
    stdout.write_all(b"\n")?;
    stdout.flush()?;
    Ok(())
}

/// Says `ready` and waits for the parent's `go`.
fn ready_then_go() -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(b"ready\n")?;
    stdout.flush()?;
    drop(stdout);
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    anyhow::ensure!(
        line.trim() == "go",
        "the benchmark that started this subscriber went away before it published"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child that is `sh -c SCRIPT`.
    fn sh(script: &str) -> Command {
        let mut c = Command::new("sh");
        c.args(["-c", script]);
        c
    }

    fn start(scripts: &[&str], ready_timeout: Duration) -> anyhow::Result<SubscriberProcesses> {
        let role = SubscriberRole::Raw("test".into());
        SubscriberProcesses::start(&role, scripts.iter().map(|s| sh(s)), ready_timeout)
    }

    /// Whether process `pid` still exists (a reaped child does not).
    fn exists(pid: u32) -> bool {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }

    #[test]
    fn reports_are_gathered_after_go_and_the_children_reaped() {
        let report = r#"{"received":2,"order_violations":0,"latencies_ns":[5,7],"first_arrival_ns":1,"last_arrival_ns":9}"#;
        let script = format!("echo ready; read go; [ \"$go\" = go ] && echo '{report}'");
        let mut p = start(&[&script, &script], Duration::from_secs(30)).unwrap();
        let pids: Vec<u32> = p.children.iter().map(|c| c.child.id()).collect();
        p.go().unwrap();
        let reports = p.reports().unwrap();
        assert_eq!(reports.len(), 2);
        assert_eq!(reports[1].latencies_ns, vec![5, 7]);
        assert_eq!(reports[0].last_arrival_ns, Some(9));
        assert!(pids.iter().all(|&pid| !exists(pid)), "{pids:?}");
    }

    #[test]
    fn a_child_that_fails_before_ready_is_named_with_its_stderr() {
        let e = start(
            &["echo ready; read go", "echo no server here >&2; exit 3"],
            Duration::from_secs(30),
        )
        .err()
        .expect("a failed child fails the start");
        let text = format!("{e:#}");
        assert!(
            text.contains("raw NATS subscriber process 1 of 2"),
            "{text}"
        );
        assert!(text.contains("ended before it was ready"), "{text}");
        assert!(text.contains("exit status: 3"), "{text}");
        assert!(text.contains("no server here"), "{text}");
    }

    #[test]
    fn a_silent_child_is_killed_and_reaped_at_each_deadline() {
        // Never ready.
        let p = SubscriberProcesses::start(
            &SubscriberRole::Bus("G".into()),
            [
                sh("echo ready; read go; exec sleep 30"),
                sh("exec sleep 30"),
            ]
            .into_iter(),
            Duration::from_millis(300),
        );
        let text = format!("{:#}", p.err().expect("times out"));
        assert!(text.contains("bus subscriber process 1 of 2"), "{text}");
        assert!(text.contains("did not say ready"), "{text}");
        assert!(text.contains("killed"), "{text}");
        // Ready, then no report: the error names it, and nothing is left running.
        let mut p = start(
            &["echo ready; read go; exec sleep 30"],
            Duration::from_secs(30),
        )
        .unwrap();
        let pid = p.children[0].child.id();
        p.report_timeout = Duration::from_millis(300);
        p.go().unwrap();
        let text = format!("{:#}", p.reports().expect_err("times out"));
        assert!(text.contains("sent no report"), "{text}");
        assert!(!exists(pid), "{pid} left behind");
    }

    #[test]
    fn dropping_kills_and_reaps_every_child() {
        let p = start(
            &["echo ready; exec sleep 30", "echo ready; exec sleep 30"],
            Duration::from_secs(30),
        )
        .unwrap();
        let pids: Vec<u32> = p.children.iter().map(|c| c.child.id()).collect();
        drop(p);
        assert!(pids.iter().all(|&pid| !exists(pid)), "{pids:?}");
    }
}

//! A suite's federate in a process of its own (`--processes`): this program again,
//! as `glidepath bench SUITE --member-of FEDERATION --member-index I …`, joined to the
//! run's federation on the same transport, as the peers' figures across processes are
//! measured.
//!
//! The child's standard output is the protocol: `READY` once it has joined and
//! declared what it needs, then any lines the suite reports (each starting with a
//! word of the suite's choosing), then it exits 0 once it has resigned.

use std::io::{BufRead, Write};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use crossbeam_channel::{Receiver, RecvTimeoutError};
use glidepath::WaitStrategy;

use super::{Bench, BenchOptions, TransportChoice, RECEIVE_TIMEOUT};

/// How long the parent waits for a child's line or its end: a child that stops
/// hearing anything gives up after [`RECEIVE_TIMEOUT`] and then reports, so twice that.
const REPORT_WAIT: Duration = RECEIVE_TIMEOUT.saturating_mul(2);

/// Says, on this process's standard output, that the child has joined and is ready
/// (the parent waits for it before going on).
pub fn say_ready() -> anyhow::Result<()> {
    say("READY")
}

/// Writes one protocol line on standard output and flushes it.
pub fn say(line: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush().context("writing to the parent process")
}

/// One child process of a `--processes` run.
pub struct MemberProcess {
    child: Child,
    what: String,
    /// The child's output lines after `READY`.
    lines: Receiver<String>,
    /// Lines read while waiting for others, kept for a later
    /// [`MemberProcess::next_line`].
    said: Vec<String>,
}

impl MemberProcess {
    /// Starts `glidepath bench SUITE --member-of FEDERATION --member-index INDEX` with
    /// this run's transport, wait strategy and process model, plus `args`, and waits
    /// until it says it is ready.
    pub fn spawn(
        bench: &Bench,
        opts: &BenchOptions,
        suite: &str,
        federation: &str,
        index: usize,
        args: &[String],
    ) -> anyhow::Result<MemberProcess> {
        let what = format!("the {suite} suite's process {index}");
        let wait = match opts.wait {
            WaitStrategy::SpinPark { spin } => format!("spin-park:{}", spin.as_micros()),
            other => other.name().to_string(),
        };
        let mut command = Command::new(std::env::current_exe()?);
        command.args(["bench", suite, "--transport", opts.transport.name()]);
        command.args([
            "--member-of",
            federation,
            "--member-index",
            &index.to_string(),
        ]);
        command.args([
            "--wait",
            &wait,
            "--process-model",
            opts.process_model_name(),
        ]);
        // The publishing settings the parent was given, so both sides send alike.
        for (flag, value) in [
            ("--bundle-bytes", opts.bundle_bytes.map(|v| v as u64)),
            ("--bundle-time-us", opts.bundle_time_us),
            (
                "--reliable-window",
                opts.reliable_window_envelopes.map(|v| v as u64),
            ),
            ("--ddm-cells", opts.ddm_cells.map(|v| v as u64)),
        ] {
            if let Some(value) = value {
                command.args([flag, &value.to_string()]);
            }
        }
        command.args(args);
        match opts.transport {
            // The URL and this run's credentials in the environment, not on a command
            // line `ps` shows (they may hold a password).
            TransportChoice::Nats => {
                opts.rti_config().configure_child(&mut command);
                command.env(glidepath::NATS_URL_ENV, &opts.nats_url)
            }
            TransportChoice::Shm => command.args([
                "--shm-name",
                bench.shm_system().context("an shm run has a system")?,
            ]),
            TransportChoice::Inproc => bail!("--processes needs nats or shm"),
        };
        command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command
            .spawn()
            .with_context(|| format!("starting {what}"))?;
        let stdout = child.stdout.take().context("the child's output")?;
        let (ready_tx, ready_rx) = crossbeam_channel::bounded(1);
        let (lines_tx, lines) = crossbeam_channel::unbounded();
        thread::spawn(move || {
            let mut ready = Some(ready_tx);
            for line in std::io::BufReader::new(stdout)
                .lines()
                .map_while(Result::ok)
            {
                let line = line.trim_end().to_string();
                if ready.is_some() && line.ends_with("READY") {
                    if let Some(tx) = ready.take() {
                        let _ = tx.send(());
                    }
                } else if ready.is_none() && lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        let process = MemberProcess {
            child,
            what,
            lines,
            said: Vec::new(),
        };
        ready_rx
            .recv_timeout(RECEIVE_TIMEOUT * 3)
            .map_err(|_| anyhow!("{} did not get ready", process.what))?;
        Ok(process)
    }

    /// Waits until the child has said `count` lines starting with `word` (keeping
    /// the others for a later [`MemberProcess::next_line`]).
    pub fn expect(&mut self, word: &str, count: usize) -> anyhow::Result<()> {
        for heard in 0..count {
            self.next_line(word).map_err(|_| {
                anyhow!(
                    "{} said `{word}` {heard} of {count} times within {RECEIVE_TIMEOUT:?}",
                    self.what
                )
            })?;
        }
        Ok(())
    }

    /// The child's next line starting with `word`, waiting for it at most
    /// [`REPORT_WAIT`]; other lines are kept for later calls.
    pub fn next_line(&mut self, word: &str) -> anyhow::Result<String> {
        if let Some(i) = self.said.iter().position(|l| l.starts_with(word)) {
            return Ok(self.said.remove(i));
        }
        let deadline = Instant::now() + REPORT_WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left).map_err(|e| match e {
                RecvTimeoutError::Disconnected => {
                    anyhow!("{} ended without saying `{word}`", self.what)
                }
                RecvTimeoutError::Timeout => {
                    anyhow!("{} said no `{word}` within {REPORT_WAIT:?}", self.what)
                }
            })?;
            if line.starts_with(word) {
                return Ok(line);
            }
            self.said.push(line);
        }
    }

    /// Waits for the child to resign and end.
    pub fn finish(mut self) -> anyhow::Result<()> {
        let deadline = Instant::now() + REPORT_WAIT;
        loop {
            if let Some(status) = self.child.try_wait()? {
                anyhow::ensure!(status.success(), "{} failed: {status}", self.what);
                return Ok(());
            }
            if Instant::now() >= deadline {
                bail!("{} did not end", self.what);
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for MemberProcess {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// A line a child process said: its first word, then fields separated by single
/// spaces as `layout` names them (`"RUN START END STEPS LATENCIES"`), read with
/// errors that name the child and the field.
pub struct Said<'a> {
    who: &'a str,
    layout: &'a str,
    fields: Vec<&'a str>,
}

impl<'a> Said<'a> {
    /// Splits `line`, said by `who` (for errors), checking it has `layout`'s fields.
    pub fn parse(line: &'a str, who: &'a str, layout: &'a str) -> anyhow::Result<Said<'a>> {
        let fields: Vec<&str> = line.split(' ').collect();
        if fields.len() != layout.split(' ').count()
            || fields.first().copied() != layout.split(' ').next()
        {
            bail!("{who} said `{line}`, not `{layout}`");
        }
        Ok(Said {
            who,
            layout,
            fields,
        })
    }

    /// Field `i` (counting the word as 0) as a number.
    pub fn number(&self, i: usize) -> anyhow::Result<u64> {
        let v = self.fields[i];
        v.parse()
            .with_context(|| format!("{}'s {} `{v}`", self.who, self.name(i)))
    }

    /// Field `i` as a comma-separated list of numbers (empty for none).
    pub fn numbers(&self, i: usize) -> anyhow::Result<Vec<u64>> {
        self.fields[i]
            .split(',')
            .filter(|v| !v.is_empty())
            .map(|v| {
                v.parse()
                    .with_context(|| format!("{}'s {} `{v}`", self.who, self.name(i)))
            })
            .collect()
    }

    fn name(&self, i: usize) -> String {
        self.layout
            .split(' ')
            .nth(i)
            .unwrap_or("field")
            .to_lowercase()
    }
}

/// Numbers as [`Said::numbers`] reads them: comma-separated.
pub fn list(values: impl IntoIterator<Item = u64>) -> String {
    let values: Vec<String> = values.into_iter().map(|v| v.to_string()).collect();
    values.join(",")
}

//! What a run shows while it runs: the state of the seven, each block's count, the
//! monitor's messages per simulated second (Figure 4.1(b) as it grows), its latency
//! percentiles so far, and how the run ended. `glidepath run --web` serves it as the
//! run monitoring portal; anyone may read a [`Live`] while the run writes it.
//!
//! The blocks' hot paths only add to atomics (as the progress bar's counters always
//! did); the rest is written under a mutex once per simulated second (the monitor's
//! closed second), once per publication round (a block's count) or once per state.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Instant;

use glidepath::stats::Recorder;
use parking_lot::Mutex;
use serde::Serialize;

use super::{RunOptions, SimulationState};
use crate::layout::Layout;

/// A run's live view. Give one to [`super::RunOptions::live`] and read it with
/// [`Live::snapshot`] from any thread while the run goes on. One run per `Live`.
#[derive(Default)]
pub struct Live {
    pub(super) published: AtomicU64,
    pub(super) received: AtomicU64,
    pub(super) monitor_second: AtomicU64,
    /// Messages published under a credit window ([`super::RunOptions::credit`]).
    pub(super) sent: AtomicU64,
    /// The most messages in flight under the credit window so far.
    pub(super) credit_peak: AtomicU64,
    /// Set by the manager when the run failed: blocks stop waiting for the
    /// federation (block processes are stopped through their standard input).
    pub(super) abort: AtomicBool,
    detail: Mutex<Detail>,
}

#[derive(Default)]
struct Detail {
    started: Option<Instant>,
    layout: String,
    run: String,
    transport: String,
    deployment: String,
    day_start: Option<i64>,
    end: u32,
    state: Option<(SimulationState, Instant)>,
    states: Vec<StateTime>,
    blocks: BTreeMap<String, BlockCount>,
    per_second: Vec<u32>,
    latency_us: Option<Latency>,
    outcome: Option<Outcome>,
}

/// How long a state took.
#[derive(Clone, Debug, Serialize)]
pub struct StateTime {
    /// Its name (`deployment`, ...).
    pub state: String,
    /// Wall seconds from its registration to its synchronization.
    pub seconds: f64,
}

/// One block's count so far.
#[derive(Clone, Debug, Default, Serialize)]
pub struct BlockCount {
    /// `traffic`, `monitor`, `recorder` or `player`.
    pub kind: String,
    /// Messages it published (traffic, player).
    pub published: u64,
    /// Messages it received (monitor, recorder).
    pub received: u64,
}

/// The monitor's latency percentiles so far, microseconds (T_S − T_P).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Latency {
    /// Messages measured.
    pub count: u64,
    /// Median.
    pub p50: u64,
    /// 90th percentile.
    pub p90: u64,
    /// 99th percentile.
    pub p99: u64,
    /// Largest.
    pub max: u64,
}

impl Latency {
    pub(super) fn of(r: &Recorder) -> Option<Latency> {
        Some(Latency {
            count: r.count(),
            p50: r.percentile(50.0)?,
            p90: r.percentile(90.0)?,
            p99: r.percentile(99.0)?,
            max: r.percentile(100.0)?,
        })
    }
}

/// How the run ended.
#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    /// Whether it completed.
    pub ok: bool,
    /// What happened, one line (the error when it failed).
    pub message: String,
    /// Published to the monitor's links.
    pub published: u64,
    /// Received by the monitor.
    pub received: u64,
    /// `published - received`.
    pub lost: u64,
    /// Where the report was written, when it was.
    pub report: Option<String>,
}

/// A copy of the live view at one moment ([`Live::snapshot`]).
#[derive(Clone, Debug, Serialize)]
pub struct Snapshot {
    /// The layout's name.
    pub layout: String,
    /// The run's name (`1A`, ...).
    pub run: String,
    /// The transport.
    pub transport: String,
    /// `threads` or `processes` (block processes count in their own memory: then only
    /// the states are live).
    pub deployment: String,
    /// Wall seconds since the run started.
    pub elapsed_s: f64,
    /// The state now, `None` before the first and after the last.
    pub state: Option<String>,
    /// Wall seconds in the current state so far.
    pub state_s: f64,
    /// The states done, in order, with their durations.
    pub states: Vec<StateTime>,
    /// Unix seconds of simulated second 0.
    pub day_start: Option<i64>,
    /// Simulated seconds the run covers.
    pub end: u32,
    /// The last simulated second the monitor was granted.
    pub second: u64,
    /// Messages published to the monitor's links so far.
    pub published: u64,
    /// Messages the monitor received so far.
    pub received: u64,
    /// Per block, its count so far.
    pub blocks: BTreeMap<String, BlockCount>,
    /// Index of `per_second`'s first element among all the run's seconds.
    pub per_second_from: usize,
    /// Messages per simulated second, closed seconds from `per_second_from` on.
    pub per_second: Vec<u32>,
    /// The monitor's latency so far.
    pub latency_us: Option<Latency>,
    /// How the run ended, once it has.
    pub outcome: Option<Outcome>,
}

impl std::fmt::Debug for Live {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Live")
            .field("published", &self.published.load(Ordering::Relaxed))
            .field("received", &self.received.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Live {
    /// A view for one run.
    pub fn new() -> Live {
        Live::default()
    }

    pub(super) fn snapshot_counts(&self) -> (u64, u64, u64) {
        (
            self.published.load(Ordering::Relaxed),
            self.received.load(Ordering::Relaxed),
            self.monitor_second.load(Ordering::Relaxed),
        )
    }

    /// The run is set up: what it is, and its blocks.
    pub(super) fn begin(&self, layout: &Layout, opts: &RunOptions, end: u32) {
        let mut d = self.detail.lock();
        d.started = Some(Instant::now());
        d.layout = layout.name.clone();
        d.run = opts.run_name.clone();
        d.transport = opts.config.transport.name().to_string();
        d.deployment = opts.deployment.name().to_string();
        d.day_start = opts.day_start;
        d.end = end;
        d.blocks = layout
            .blocks
            .iter()
            .map(|b| {
                (
                    b.name.clone(),
                    BlockCount {
                        kind: b.kind.name().to_string(),
                        ..BlockCount::default()
                    },
                )
            })
            .collect();
    }

    pub(super) fn enter(&self, state: SimulationState) {
        self.detail.lock().state = Some((state, Instant::now()));
    }

    pub(super) fn leave(&self, state: SimulationState, seconds: f64) {
        let mut d = self.detail.lock();
        d.state = None;
        d.states.push(StateTime {
            state: state.name().to_string(),
            seconds,
        });
    }

    /// A block published `n` more messages.
    pub(super) fn block_published(&self, block: &str, n: u64) {
        self.published.fetch_add(n, Ordering::Relaxed);
        if let Some(b) = self.detail.lock().blocks.get_mut(block) {
            b.published += n;
        }
    }

    /// A subscribing block's count now (not added to the run's `received`, which
    /// is the monitor's).
    pub(super) fn block_received(&self, block: &str, total: u64) {
        if let Some(b) = self.detail.lock().blocks.get_mut(block) {
            b.received = total;
        }
    }

    /// The monitor closed simulated second `t` with `messages`, its count now is
    /// `received`; `latency` when it measured it anew.
    pub(super) fn second_closed(
        &self,
        monitor: &str,
        t: usize,
        messages: u32,
        latency: Option<Latency>,
    ) {
        let mut d = self.detail.lock();
        if d.per_second.len() <= t {
            d.per_second.resize(t + 1, 0);
        }
        d.per_second[t] = messages;
        if latency.is_some() {
            d.latency_us = latency;
        }
        let received = self.received.load(Ordering::Relaxed);
        if let Some(b) = d.blocks.get_mut(monitor) {
            b.received = received;
        }
    }

    /// The run ended.
    pub(super) fn finish(&self, outcome: Outcome, latency: Option<Latency>) {
        let mut d = self.detail.lock();
        d.state = None;
        if latency.is_some() {
            d.latency_us = latency;
        }
        d.outcome = Some(outcome);
    }

    /// Where the report went (after the run, by whoever writes it).
    pub fn report_written(&self, dir: &str) {
        if let Some(o) = &mut self.detail.lock().outcome {
            o.report = Some(dir.to_string());
        }
    }

    /// Where the report was written, once it was ([`Live::report_written`]).
    pub fn report_dir(&self) -> Option<String> {
        self.detail.lock().outcome.as_ref()?.report.clone()
    }

    /// The most messages that were published to the monitor and not yet received
    /// by it at once, under a credit window (0 without one).
    pub fn credit_peak(&self) -> u64 {
        self.credit_peak.load(Ordering::Relaxed)
    }

    /// The view now, with the messages per second from simulated second `from` on.
    pub fn snapshot(&self, from: usize) -> Snapshot {
        let (published, received, second) = self.snapshot_counts();
        let d = self.detail.lock();
        let from = from.min(d.per_second.len());
        Snapshot {
            layout: d.layout.clone(),
            run: d.run.clone(),
            transport: d.transport.clone(),
            deployment: d.deployment.clone(),
            elapsed_s: d.started.map_or(0.0, |t| t.elapsed().as_secs_f64()),
            state: d.state.map(|(s, _)| s.name().to_string()),
            state_s: d.state.map_or(0.0, |(_, t)| t.elapsed().as_secs_f64()),
            states: d.states.clone(),
            day_start: d.day_start,
            end: d.end,
            second,
            published,
            received,
            blocks: d.blocks.clone(),
            per_second_from: from,
            per_second: d.per_second[from..].to_vec(),
            latency_us: d.latency_us,
            outcome: d.outcome.clone(),
        }
    }
}

//! `timeadv`: time-advance grants per second, thesis section 5.3.5 (DMSO BmTimeAdv)
//! and 6.3. N federates (default 8, the thesis's largest federation), every one
//! time-regulating and time-constrained with lookahead L (`--lookahead`, default 1,
//! the thesis's setting), each requesting `count` advances concurrently: a time
//! advance request to t + L at each step, then waiting for the grant.
//!
//! As in BmTimeAdv the clock starts before the first request and stops when the last
//! is granted (over all federates). `rate_per_s` is grants per second per federate,
//! `total_rate_per_s` over all federates (the thesis's 14 grants/s at 8 federates is
//! the per-federate figure of an LBTS-round RTI; `ARCHITECTURE.md` explains why
//! glidepath needs no rounds). The latency columns are request-to-grant times.
//! With lookahead 0 a TAR could never be granted while others wait at the same time,
//! so the suite then uses TARA (time advance request available), and says so in the
//! variant.
//!
//! There is no raw time management, so the raw peer (`--raw`) is the least any
//! conservative lockstep needs: every step, each participant tells every other one
//! "I reached step k" and waits until it has heard the same from all of them — an
//! all-to-all exchange through bounded crossbeam channels between threads, received
//! with the same wait strategy, for `inproc`; through one raw NATS subject every
//! participant subscribes (no echo), for `nats`. glidepath's grant costs the same
//! one status message per federate and step, so the ratio is its overhead.

use std::sync::Barrier;
use std::thread;

use anyhow::{anyhow, bail, Context};
use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use futures::StreamExt;
use glidepath::{Callback, LogicalTime, WaitStrategy};

use super::throughput::{latencies, raw_subject, send_with};
use crate::harness::{
    self, Bench, BenchOptions, Member, MemberProcess, Progress, RawNats, TransportChoice,
    RECEIVE_TIMEOUT,
};
use crate::result::BenchResult;

/// Federates when no `--federates` is given: the thesis's largest federation (6.3).
const DEFAULT_FEDERATES: usize = 8;

/// Advances per federate when no `--count` is given. The thesis used 1000; twice
/// that keeps an in-process run above a tenth of a second at the target rate.
const DEFAULT_STEPS: u64 = 2000;

/// Runs the suite for `--federates` federates with `--lookahead`.
pub fn run(
    bench: &Bench,
    opts: &BenchOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BenchResult>> {
    let steps = opts.count_or(DEFAULT_STEPS);
    if let Some(federation) = &opts.member_of {
        serve_member(bench, federation, opts, steps)?;
        return Ok(Vec::new());
    }
    let n = opts.federates_or(DEFAULT_FEDERATES);
    let lookahead = opts.lookahead;
    if n < 2 {
        bail!("timeadv needs at least 2 federates (--federates), got {n}");
    }
    if !lookahead.is_finite() || lookahead < 0.0 {
        bail!("timeadv needs a finite, non-negative lookahead, got {lookahead}");
    }
    let available = lookahead == 0.0;
    let request = if available { "tara" } else { "tar" };
    // Across processes the raw peer still runs as threads of this one.
    let variant = if opts.processes {
        format!("{request}, {n} processes")
    } else {
        request.to_string()
    };
    let label = format!("timeadv {n} federates, lookahead {lookahead}, {steps} steps");
    progress.stage(&label);
    let measured = if opts.processes {
        glidepath_processes(bench, opts, n, steps, lookahead, progress)
    } else {
        glidepath_run(bench, n, steps, lookahead, progress)
    }
    .context(label.clone())?;
    let raw = if opts.raw {
        progress.stage(&format!("{label} (raw all-to-all peer)"));
        let raw = match opts.transport {
            TransportChoice::Nats => raw_nats_run(
                &RawNats::new(&opts.nats_url, &opts.nats_security)?,
                n,
                steps,
            ),
            TransportChoice::Inproc => raw_channel_run(opts.wait, n, steps, progress),
            TransportChoice::Shm => Err(anyhow::anyhow!(
                "no raw shared-memory peer for timeadv yet; run without --raw"
            )),
        };
        Some(raw.with_context(|| format!("{label} (raw peer)"))?)
    } else {
        None
    };

    let mut r = opts.result("timeadv", &variant);
    let expected = steps * n as u64;
    r.federates = n as u64;
    r.count = expected;
    r.received = measured.grants.min(expected);
    r.lost = expected.saturating_sub(measured.grants);
    r.rate_per_s = measured.per_federate_rate(n);
    r.total_rate_per_s = Some(harness::rate(measured.grants, measured.elapsed_s));
    r.elapsed_s = measured.elapsed_s;
    let (recorder, samples) = latencies(&measured.latency_ns);
    r.set_latency_ns(&recorder);
    r.samples_us = samples;
    if let Some(raw) = raw {
        let (raw_recorder, _) = latencies(&raw.latency_ns);
        let us = |p: Option<u64>| p.map_or(0.0, |ns| ns as f64 / 1000.0);
        r.set_raw(
            us(raw_recorder.percentile(50.0)),
            us(raw_recorder.percentile(99.0)),
            raw.per_federate_rate(n),
        );
    }
    Ok(vec![r])
}

/// Grants (or raw steps) over every participant.
#[derive(Debug, Default)]
struct Measured {
    grants: u64,
    elapsed_s: f64,
    latency_ns: Vec<u64>,
}

impl Measured {
    fn per_federate_rate(&self, n: usize) -> f64 {
        harness::rate(self.grants, self.elapsed_s) / n as f64
    }

    /// Combines the participants' runs: one clock from the earliest start to the
    /// latest end.
    fn combine(runs: Vec<Run>) -> Measured {
        let mut m = Measured::default();
        let first = runs.iter().map(|r| r.start_ns).min();
        let last = runs.iter().map(|r| r.end_ns).max();
        if let (Some(first), Some(last)) = (first, last) {
            m.elapsed_s = last.saturating_sub(first) as f64 / 1e9;
        }
        for r in runs {
            m.grants += r.steps;
            m.latency_ns.extend(r.latency_ns);
        }
        m
    }
}

/// One participant's run, its clock in [`harness::now_ns`] (comparable across the
/// processes of one host).
#[derive(Debug, PartialEq)]
struct Run {
    start_ns: u64,
    end_ns: u64,
    steps: u64,
    latency_ns: Vec<u64>,
}

impl Run {
    /// The line a child process says for its run.
    fn line(&self) -> String {
        format!(
            "RUN {} {} {} {}",
            self.start_ns,
            self.end_ns,
            self.steps,
            harness::list(self.latency_ns.iter().copied())
        )
    }

    /// Reads a child's `RUN` line.
    fn parse(line: &str) -> anyhow::Result<Run> {
        let said = harness::Said::parse(line, "a time-advance process", RUN_LINE)?;
        Ok(Run {
            start_ns: said.number(1)?,
            end_ns: said.number(2)?,
            steps: said.number(3)?,
            latency_ns: said.numbers(4)?,
        })
    }
}

/// What a time-advance process says at the end: its clock in [`harness::now_ns`].
const RUN_LINE: &str = "RUN START END STEPS LATENCIES";

// ----- glidepath --------------------------------------------------------------------

fn glidepath_run(
    bench: &Bench,
    n: usize,
    steps: u64,
    lookahead: f64,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let federation = bench.new_federation("timeadv")?;
    let mut members = Vec::new();
    for i in 0..n {
        members.push(bench.join(&federation, &member_name(i))?);
    }
    let runs = thread::scope(|s| {
        let handles: Vec<_> = members
            .iter()
            .enumerate()
            .map(|(i, member)| {
                let shown = (i == 0).then_some(progress);
                s.spawn(move || advance(member, i == 0, steps, lookahead, shown))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow!("a time-advancing thread panicked"))?
            })
            .collect::<anyhow::Result<Vec<Run>>>()
    });
    // Resign and destroy even after a failure, so the error is the one reported.
    let finished = bench.finish(&federation, members);
    let runs = runs?;
    finished?;
    Ok(Measured::combine(runs))
}

/// `--processes`: federate 0 in this process, every other one in a process of its
/// own (`harness::MemberProcess`, which runs [`serve_member`]), each reporting its
/// run when it ends.
fn glidepath_processes(
    bench: &Bench,
    opts: &BenchOptions,
    n: usize,
    steps: u64,
    lookahead: f64,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let federation = bench.new_federation("timeadv")?;
    let args = [
        "--count".to_string(),
        steps.to_string(),
        "--lookahead".to_string(),
        lookahead.to_string(),
    ];
    let children = (1..n)
        .map(|i| MemberProcess::spawn(bench, opts, "timeadv", &federation, i, &args))
        .collect::<anyhow::Result<Vec<_>>>()?;
    // Every child has joined (it said so): the start point includes them all.
    let member = bench.join(&federation, &member_name(0))?;
    let mut runs = Vec::new();
    let mut failure = None;
    match advance(&member, true, steps, lookahead, Some(progress)) {
        Ok(run) => runs.push(run),
        Err(e) => failure = Some(e),
    }
    // The children resign before the federation can be destroyed.
    for mut child in children {
        let reported = child
            .next_line("RUN ")
            .and_then(|line| Run::parse(&line))
            .and_then(|run| child.finish().map(|()| run));
        match reported {
            Ok(run) => runs.push(run),
            Err(e) => {
                failure.get_or_insert(e);
            }
        }
    }
    let finished = bench.finish(&federation, vec![member]);
    if let Some(e) = failure {
        return Err(e);
    }
    finished?;
    if runs.len() != n {
        bail!(
            "{} of {n} time-advancing federates reported their run",
            runs.len()
        );
    }
    Ok(Measured::combine(runs))
}

/// `--member-of FEDERATION`: this process is federate `--member-index` of a
/// `--processes` run. Joins, says `READY`, advances like the others, says its `RUN`,
/// resigns.
fn serve_member(
    bench: &Bench,
    federation: &str,
    opts: &BenchOptions,
    steps: u64,
) -> anyhow::Result<()> {
    let member = bench.join(federation, &member_name(opts.member_index))?;
    harness::say_ready()?;
    let run = advance(&member, false, steps, opts.lookahead, None)?;
    harness::say(&run.line())?;
    member.resign()
}

fn member_name(i: usize) -> String {
    format!("timeadv-{i}")
}

/// The synchronization point every federate reaches once it is regulating and
/// constrained; the clock starts when the federation is synchronized on it.
const START_POINT: &str = "timeadv-start";

/// One federate: becomes regulating and constrained, reaches the start point (which
/// federate 0, `registers`, registered for all once all had joined), then requests
/// `steps` advances of `lookahead` each, timing request to grant. Every wait evokes,
/// so a federate that is ready still answers the handshakes of those still enabling.
fn advance(
    member: &Member,
    registers: bool,
    steps: u64,
    lookahead: f64,
    progress: Option<&dyn Progress>,
) -> anyhow::Result<Run> {
    if registers {
        member.register_federation_synchronization_point(START_POINT, Bytes::new())?;
    }
    member.wait_for("the start point's announcement", |cb| {
        matches!(cb, Callback::AnnounceSynchronizationPoint { label, .. } if label == START_POINT)
            .then_some(())
    })?;
    member.enable_time_regulation(lookahead)?;
    member.wait_for("time regulation enabled", |cb| {
        matches!(cb, Callback::TimeRegulationEnabled { .. }).then_some(())
    })?;
    member.enable_time_constrained()?;
    member.wait_for("time constrained enabled", |cb| {
        matches!(cb, Callback::TimeConstrainedEnabled { .. }).then_some(())
    })?;
    member.synchronization_point_achieved(START_POINT)?;
    member.wait_for("every federate at the start point", |cb| match cb {
        Callback::FederationSynchronized { label, failed } if label == START_POINT => {
            Some(if failed.is_empty() {
                Ok(())
            } else {
                Err(anyhow!("federates {failed:?} failed the start point"))
            })
        }
        _ => None,
    })??;
    let step = if lookahead > 0.0 { lookahead } else { 1.0 };
    let mut now = member.query_logical_time().as_f64();
    let mut latency_ns = Vec::with_capacity(usize::try_from(steps).unwrap_or(0));
    let start_ns = harness::now_ns();
    for k in 1..=steps {
        let target = now + step;
        let asked = harness::now_ns();
        if lookahead > 0.0 {
            member.time_advance_request(target)?;
        } else {
            member.time_advance_request_available(target)?;
        }
        let granted: LogicalTime = member.wait_for("a time advance grant", |cb| match cb {
            Callback::TimeAdvanceGrant { time } => Some(time),
            _ => None,
        })?;
        latency_ns.push(harness::now_ns().saturating_sub(asked));
        if granted.as_f64() != target {
            bail!("{}: asked for {target}, granted {granted}", member.name());
        }
        now = target;
        if let Some(p) = progress {
            if k.is_multiple_of(64) || k == steps {
                p.set(k, steps);
            }
        }
    }
    Ok(Run {
        start_ns,
        end_ns: harness::now_ns(),
        steps,
        latency_ns,
    })
}

// ----- raw peer: channels -------------------------------------------------------------

/// Counts "reached step k" messages for the current step and the next: a peer can
/// be at most one step ahead, since it cannot leave step k without this one's message.
#[derive(Debug, Default)]
struct StepCounts {
    current: u64,
    next: u64,
}

impl StepCounts {
    fn heard(&mut self, step: u64, at: u64) {
        if step == at {
            self.current += 1;
        } else if step == at + 1 {
            self.next += 1;
        }
    }

    fn advance(&mut self) {
        self.current = self.next;
        self.next = 0;
    }
}

fn raw_channel_run(
    wait: WaitStrategy,
    n: usize,
    steps: u64,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    // Two steps' worth from every peer fit, so a send never waits for a slow reader.
    let inboxes: Vec<(Sender<u64>, Receiver<u64>)> =
        (0..n).map(|_| crossbeam_channel::bounded(2 * n)).collect();
    let go = Barrier::new(n);
    let runs = thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (inboxes, go) = (&inboxes, &go);
                s.spawn(move || -> anyhow::Result<Run> {
                    let inbox = &inboxes[i].1;
                    let mut counts = StepCounts::default();
                    let mut latency_ns = Vec::with_capacity(usize::try_from(steps).unwrap_or(0));
                    go.wait();
                    let start_ns = harness::now_ns();
                    for k in 1..=steps {
                        let asked = harness::now_ns();
                        for (j, (tx, _)) in inboxes.iter().enumerate() {
                            if j != i && !send_with(tx, k, wait, RECEIVE_TIMEOUT) {
                                bail!("raw participant {i}: participant {j} stopped at step {k}");
                            }
                        }
                        while counts.current < n as u64 - 1 {
                            match harness::recv_with(inbox, wait, RECEIVE_TIMEOUT) {
                                Some(step) => counts.heard(step, k),
                                None => bail!(
                                    "raw participant {i}: heard {} of {} peers at step {k} within {:?}",
                                    counts.current,
                                    n - 1,
                                    RECEIVE_TIMEOUT
                                ),
                            }
                        }
                        counts.advance();
                        latency_ns.push(harness::now_ns().saturating_sub(asked));
                        if i == 0 && (k.is_multiple_of(64) || k == steps) {
                            progress.set(k, steps);
                        }
                    }
                    Ok(Run {
                        start_ns,
                        end_ns: harness::now_ns(),
                        steps,
                        latency_ns,
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| anyhow!("a raw participant panicked"))?
            })
            .collect::<anyhow::Result<Vec<Run>>>()
    })?;
    Ok(Measured::combine(runs))
}

// ----- raw peer: NATS ---------------------------------------------------------------

fn raw_nats_run(raw: &RawNats, n: usize, steps: u64) -> anyhow::Result<Measured> {
    let subject = async_nats::Subject::from(raw_subject("timeadv"));
    raw.block_on(async {
        let mut participants = Vec::new();
        for _ in 0..n {
            let client = raw.connect().await?;
            let sub = client.subscribe(subject.clone()).await?;
            crate::harness::settle(&client).await?;
            participants.push((client, sub));
        }
        let go = std::sync::Arc::new(tokio::sync::Barrier::new(n));
        let tasks: Vec<_> = participants
            .into_iter()
            .enumerate()
            .map(|(i, (client, mut sub))| {
                let (subject, go) = (subject.clone(), go.clone());
                tokio::spawn(async move {
                    let mut counts = StepCounts::default();
                    let mut latency_ns = Vec::with_capacity(usize::try_from(steps).unwrap_or(0));
                    go.wait().await;
                    let start_ns = harness::now_ns();
                    for k in 1..=steps {
                        let asked = harness::now_ns();
                        client
                            .publish(subject.clone(), Bytes::copy_from_slice(&k.to_le_bytes()))
                            .await?;
                        while counts.current < n as u64 - 1 {
                            match tokio::time::timeout(RECEIVE_TIMEOUT, sub.next()).await {
                                Ok(Some(m)) => {
                                    let step = m
                                        .payload
                                        .get(..8)
                                        .and_then(|b| b.try_into().ok())
                                        .map(u64::from_le_bytes)
                                        .unwrap_or(0);
                                    counts.heard(step, k);
                                }
                                Ok(None) | Err(_) => bail!(
                                    "raw participant {i}: heard {} of {} peers at step {k} within {:?}",
                                    counts.current,
                                    n - 1,
                                    RECEIVE_TIMEOUT
                                ),
                            }
                        }
                        counts.advance();
                        latency_ns.push(harness::now_ns().saturating_sub(asked));
                    }
                    let end_ns = harness::now_ns();
                    // The last step's message may still sit in the client's buffer,
                    // and a slower peer needs it.
                    client.flush().await?;
                    Ok::<_, anyhow::Error>(Run {
                        start_ns,
                        end_ns,
                        steps,
                        latency_ns,
                    })
                })
            })
            .collect();
        let mut runs = Vec::new();
        for t in tasks {
            runs.push(t.await.context("a raw participant task failed")??);
        }
        Ok(Measured::combine(runs))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_counts_carry_early_messages_to_the_next_step() {
        let mut c = StepCounts::default();
        c.heard(1, 1);
        c.heard(2, 1);
        c.heard(7, 1);
        assert_eq!((c.current, c.next), (1, 1));
        c.advance();
        assert_eq!((c.current, c.next), (1, 0));
    }

    #[test]
    fn a_childs_run_line_reads_back_and_a_garbled_one_is_refused() {
        let run = Run {
            start_ns: 17,
            end_ns: 99,
            steps: 3,
            latency_ns: vec![5, 6, 7],
        };
        assert_eq!(Run::parse(&run.line()).unwrap(), run);
        let e = Run::parse("RUN 1 2 x 5").unwrap_err().to_string();
        assert!(e.contains("steps `x`"), "{e}");
        let e = Run::parse("RUN 1 2").unwrap_err().to_string();
        assert!(e.contains("not `RUN START END STEPS LATENCIES`"), "{e}");
    }

    #[test]
    fn the_raw_channel_peer_runs_in_lockstep() {
        let m = raw_channel_run(WaitStrategy::Park, 3, 50, &harness::NoProgress).unwrap();
        assert_eq!(m.grants, 150);
        assert_eq!(m.latency_ns.len(), 150);
    }
}

//! The simulation manager: deploys the blocks, takes the federation through the seven
//! states (one synchronization point each, timed for Table 4.5) and collects every
//! block's outcome into the run's report.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glidepath::{
    Bytes, Callback, Federate, JoinOptions, ResignAction, Rti, RtiConfig, TransportKind,
};

use super::deploy::{deploy_processes, deploy_threads, Deployed, RunEnd};
use super::external::Externals;
use super::flights;
use super::frame::{frame, with_frame};
use super::{
    air_traffic_fom, block_error, run_end, BlockOutcome, Context, Deployment, Latency, Live,
    Outcome, Progress, RunError, RunOptions, SimulationState, SOURCE_LOOKAHEAD, WAIT,
};
use crate::layout::{Block, BlockKind, Layout};
use crate::report::RunReport;

/// Starts the executive in this process when the transport needs one and none answers
/// yet, so `glidepath run --transport nats` needs only a NATS server and
/// `--transport shm` nothing at all. The guard keeps it alive for the run.
fn executive_for(config: &RtiConfig) -> Result<Option<Box<dyn std::any::Any>>, RunError> {
    let hosting = |e: &dyn std::fmt::Display, on: &str| {
        RunError::Rti(format!("cannot host the executive on {on}: {e}"))
    };
    match config.transport {
        // Another executive already hosting federations there is used as it is.
        TransportKind::Nats => glidepath::ensure_executive(config)
            .map(|s| s.map(|s| Box::new(s) as Box<dyn std::any::Any>))
            .map_err(|e| hosting(&e, &config.nats_url)),
        TransportKind::Shm => glidepath::ensure_shm_host(config)
            .map(|s| s.map(|s| Box::new(s) as Box<dyn std::any::Any>))
            .map_err(|e| hosting(&e, &format!("shared-memory system `{}`", config.shm_name))),
        _ => Ok(None),
    }
}

/// Runs `layout` to the end and returns its report (not yet written anywhere). The
/// run's second 0 and length are [`frame`](super::frame)'s (read from the data when
/// neither the layout nor the options say).
///
/// With [`RunOptions::live`], the run's states, counts and outcome are written there
/// as it goes (the run monitoring portal reads them).
pub fn run(layout: &Layout, opts: &RunOptions) -> Result<RunReport, RunError> {
    let live = opts.live.clone().unwrap_or_default();
    let result = run_with(layout, opts, &live);
    let (published, received, _) = live.snapshot_counts();
    match &result {
        Ok(r) => live.finish(
            Outcome {
                ok: true,
                message: format!(
                    "completed: {} published, {} received, {} lost in {:.1} s of execution",
                    r.published, r.received, r.lost, r.execution_s
                ),
                published: r.published,
                received: r.received,
                lost: r.lost,
                report: None,
            },
            Latency::of(&r.latency_us),
        ),
        Err(e) => live.finish(
            Outcome {
                ok: false,
                message: e.to_string(),
                published,
                received,
                lost: 0,
                report: None,
            },
            None,
        ),
    }
    result
}

fn run_with(layout: &Layout, opts: &RunOptions, live: &Arc<Live>) -> Result<RunReport, RunError> {
    let monitors: Vec<&Block> = layout
        .blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Monitor)
        .collect();
    if monitors.len() != 1 {
        return Err(RunError::Layout(format!(
            "a run needs exactly one performance monitor block, the layout has {}",
            monitors.len()
        )));
    }
    if matches!(opts.deployment, Deployment::Processes(_)) && opts.credit.is_some() {
        return Err(RunError::Layout(
            "a credit window counts in this process's memory: it needs the blocks as threads, \
             not processes"
                .into(),
        ));
    }
    if opts.credit == Some(0) {
        return Err(RunError::Layout(
            "a credit window of 0 messages lets nothing through".into(),
        ));
    }
    if matches!(opts.deployment, Deployment::Processes(_))
        && opts.config.transport != TransportKind::Nats
    {
        return Err(RunError::Layout(format!(
            "blocks in processes of their own need the nats transport (this run uses {}, \
             which cannot cross a process boundary)",
            opts.config.transport.name()
        )));
    }
    let mut externals = Externals::of(layout);
    externals.check_links(layout)?;
    externals.check_transport(opts)?;
    let frame = frame(layout, opts)?;
    let opts = &with_frame(opts, &frame);
    let end = run_end(opts);
    let _executive = executive_for(&opts.config)?;
    let rti = Rti::from_config(&opts.config).map_err(|e| RunError::Rti(e.to_string()))?;
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let federation = opts.federation.clone().unwrap_or_else(|| {
        format!(
            "atm-{}-{}-{}",
            std::process::id(),
            RUNS.fetch_add(1, Ordering::Relaxed),
            opts.run_name
        )
    });
    rti.create_federation_execution_with_fom(&federation, air_traffic_fom()?)
        .map_err(|e| RunError::Rti(e.to_string()))?;
    let manager = rti
        .join(
            &federation,
            JoinOptions::named("simulation-manager", "manager"),
        )
        .map_err(|e| RunError::Rti(e.to_string()))?;
    if let Err(e) = externals.subscribe(&manager) {
        let _ = manager.resign(ResignAction::DeleteObjects);
        let _ = rti.destroy_federation_execution(&federation);
        return Err(e);
    }

    let progress = live.clone();
    progress.begin(layout, opts, end);
    let deployed = match &opts.deployment {
        Deployment::Threads => deploy_threads(&rti, &federation, layout, end, opts, &progress),
        Deployment::Processes(launcher) => {
            deploy_processes(launcher, &manager, &federation, layout, opts)
        }
    };
    let mut blocks = match deployed {
        Ok(blocks) => blocks,
        Err(e) => {
            let _ = manager.resign(ResignAction::DeleteObjects);
            let _ = rti.destroy_federation_execution(&federation);
            return Err(e);
        }
    };

    let bar = opts.progress.then(|| progress_bar(end));
    // Block processes count in their own memory: the bar can only show the states.
    let counters = matches!(blocks, Deployed::Threads(_)).then_some(&*progress);
    let mut durations = Vec::new();
    // Blocks wait for the first state: external ones must have joined by then.
    let mut failure = externals.wait_joined(&manager, &federation, opts).err();
    let deployment_tag = Externals::frame_tag(opts, end, SOURCE_LOOKAHEAD);
    for state in SimulationState::ALL {
        if failure.is_some() {
            break;
        }
        let t0 = Instant::now();
        progress.enter(state);
        let watch = Watch {
            blocks: &mut blocks,
            counters,
            externals: &mut externals,
            tag: if state == SimulationState::Deployment {
                deployment_tag.clone()
            } else {
                Bytes::new()
            },
        };
        if let Err(e) = manager_state(&manager, state, bar.as_ref(), watch) {
            failure = Some(e);
            break;
        }
        durations.push((state.name().to_string(), t0.elapsed().as_secs_f64()));
        progress.leave(state, t0.elapsed().as_secs_f64());
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if failure.is_none() {
        externals.wait_reports(&manager);
    }
    let _ = manager.resign(ResignAction::DeleteObjects);
    if failure.is_some() {
        progress.abort.store(true, Ordering::Relaxed);
    }
    let mut outcomes = blocks.finish(if failure.is_some() {
        RunEnd::Failed
    } else {
        RunEnd::Completed
    });
    if failure.is_none() {
        for (name, outcome) in externals.outcomes(end) {
            if let Ok(BlockOutcome::Published(stats)) = &outcome {
                progress.block_published(&name, stats.published);
            }
            outcomes.push((name, outcome));
        }
    }
    let _ = rti.destroy_federation_execution(&federation);
    let mut monitor = None;
    let mut published = 0;
    let mut sources = Vec::new();
    // What reached the monitor's links counts as published to it.
    let monitor_name = &monitors[0].name;
    // The first block that failed of itself is the cause; blocks are only stopped
    // after the manager's own failure, which then is the cause.
    for (name, outcome) in outcomes {
        match outcome {
            Ok(BlockOutcome::Published(stats)) => {
                if layout
                    .links
                    .iter()
                    .any(|l| l.from == name && &l.to == monitor_name)
                {
                    // With a sector, what the monitor was sent is what is inside it.
                    published += stats.in_sector.unwrap_or(stats.published);
                }
                sources.push(*stats);
            }
            Ok(BlockOutcome::Monitor(m)) => monitor = Some(m),
            Ok(BlockOutcome::Other) => {}
            Err(RunError::Stopped(_)) => {}
            Err(e) => return Err(e),
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    let m = monitor.ok_or_else(|| RunError::Layout("the monitor reported nothing".into()))?;
    let execution_s = durations
        .iter()
        .find(|(s, _)| s == SimulationState::Execution.name())
        .map_or(0.0, |(_, d)| *d);
    let received = m.received;
    let peak = flights::peak(m.per_second.iter().map(|s| s.flights));
    Ok(RunReport {
        run: opts.run_name.clone(),
        layout: layout.name.clone(),
        transport: opts.config.transport.name().to_string(),
        codec: opts.codec.name().to_string(),
        compression: opts.config.chain.compression.to_string(),
        persistence: persistence_on(&opts.config),
        deployment: opts.deployment.name().to_string(),
        credit: opts.credit,
        day_start: frame.day_start,
        hours: f64::from(end) / 3600.0,
        published,
        received,
        lost: published.saturating_sub(received),
        duplicated: m.duplicated,
        malformed: m.malformed,
        bytes: m.bytes,
        execution_s,
        throughput_mbit_s: if execution_s > 0.0 {
            m.bytes as f64 * 8.0 / execution_s / 1e6
        } else {
            0.0
        },
        peak_flights: peak.map_or(0, |(flights, _)| u64::from(flights)),
        peak_flights_s: peak.map(|(_, t)| t),
        peak_callsigns_per_minute: m
            .per_second
            .iter()
            .map(|s| u64::from(s.callsigns_in_minute))
            .max()
            .unwrap_or(0),
        lengths: m.lengths,
        frequencies: m.frequencies,
        latency_us: m.latency_us,
        per_second: m.per_second,
        sources,
        state_durations_s: durations,
    })
}

/// The context a block of `layout` runs with.
pub(super) fn context_of(
    layout: &Layout,
    block: &Block,
    end: u32,
    opts: &RunOptions,
    progress: &Arc<Progress>,
) -> Context {
    Context {
        sources: layout
            .links
            .iter()
            .filter(|l| l.to == block.name)
            .map(|l| l.from.clone())
            .collect(),
        day_start: opts
            .day_start
            .expect("the run's frame is resolved before its blocks start"),
        end,
        opts: opts.clone(),
        progress: progress.clone(),
        monitor_sector: layout
            .links
            .iter()
            .filter(|l| l.from == block.name)
            .filter_map(|l| layout.block(&l.to))
            .find(|b| b.kind == BlockKind::Monitor)
            .and_then(|b| b.sector),
        regions: layout
            .links
            .iter()
            .filter(|l| l.from == block.name)
            .any(|l| layout.block(&l.to).is_some_and(|b| b.sector.is_some())),
        credit: opts.credit.filter(|_| {
            layout.links.iter().any(|l| {
                l.from == block.name
                    && layout
                        .block(&l.to)
                        .is_some_and(|b| b.kind == BlockKind::Monitor)
            })
        }),
    }
}

fn persistence_on(config: &RtiConfig) -> bool {
    config.transport == TransportKind::Nats
        && config.persistence != glidepath::Persistence::default()
}

fn progress_bar(end: u32) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new(u64::from(end));
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} sim {msg}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

/// What the manager watches while it waits for a state to end.
struct Watch<'a> {
    blocks: &'a mut Deployed,
    /// The blocks' counters (threads only).
    counters: Option<&'a Progress>,
    /// The external blocks: still joined? reported?
    externals: &'a mut Externals,
    /// The state's point's tag (the run's frame, for the Deployment point).
    tag: Bytes,
}

/// The manager's part of one state: register, achieve, wait for synchronization.
///
/// A state lasts as long as its work: the wait ends early only when a block ended
/// before the state did (its outcome says why), or nothing moved for [`WAIT`].
fn manager_state(
    manager: &Federate,
    state: SimulationState,
    bar: Option<&indicatif::ProgressBar>,
    watch: Watch<'_>,
) -> Result<(), RunError> {
    let fail = |e: String| block_error("simulation-manager", format!("{state}: {e}"));
    manager
        .register_federation_synchronization_point(state.name(), watch.tag.clone())
        .map_err(|e| fail(e.to_string()))?;
    let progress = watch.counters;
    let mut last_move = (Instant::now(), progress.map(Progress::snapshot_counts));
    let mut achieved = false;
    let mut last_tick = Instant::now();
    loop {
        // Blocks end after the retirement state synchronizes; before, ending is failing.
        if state != SimulationState::Retirement {
            watch.blocks.check_running()?;
            watch.externals.check_present(manager)?;
        }
        let now = progress.map(Progress::snapshot_counts);
        if now != last_move.1 {
            last_move = (Instant::now(), now);
        } else if last_move.0.elapsed() > WAIT
            && (state == SimulationState::Retirement || progress.is_some())
        {
            return Err(fail(format!(
                "nothing moved for {WAIT:?}: the federation seems wedged"
            )));
        }
        if let Some(bar) = bar {
            if last_tick.elapsed() > Duration::from_millis(200) {
                last_tick = Instant::now();
                match progress {
                    Some(progress) => {
                        let (published, received, second) = progress.snapshot_counts();
                        let elapsed = bar.elapsed().as_secs_f64().max(1e-9);
                        bar.set_position(second);
                        bar.set_message(format!(
                            "{:02}:{:02} | state {state} | published {published} received {received} | {:.0} msg/s",
                            second / 3600,
                            second % 3600 / 60,
                            received as f64 / elapsed
                        ));
                    }
                    None => {
                        bar.set_message(format!("state {state} (blocks in their own processes)"))
                    }
                }
            }
        }
        manager.check_transport().map_err(|e| fail(e.to_string()))?;
        match manager.next_callback(Duration::from_millis(100)) {
            Some(Callback::AnnounceSynchronizationPoint { label, .. }) if label == state.name() => {
                manager
                    .synchronization_point_achieved(state.name())
                    .map_err(|e| fail(e.to_string()))?;
                achieved = true;
            }
            Some(Callback::FederationSynchronized { label, failed }) if label == state.name() => {
                if !achieved {
                    return Err(fail("synchronized before the manager achieved".into()));
                }
                if !failed.is_empty() {
                    return Err(fail(format!("blocks failed the state: {failed:?}")));
                }
                if state != SimulationState::Retirement {
                    watch.externals.require_present(manager)?;
                }
                return Ok(());
            }
            Some(cb) => watch.externals.callback(manager, &cb),
            None => {}
        }
    }
}

//! The update-rate benchmark of DASE's section VI: N random flights on K processing
//! nodes, frames as fast as they go with every state received by the server, the
//! update rate measured per window and summarised per run and over all runs as the
//! paper's Tables 2–5 do (average, standard deviation, maximum, minimum).

use std::time::{Duration, Instant};

use glidepath::Rti;

use crate::federation::TgError;
use crate::model::Model;
use crate::scenario::{random_flights, FlightKind, Region, Scenario};
use crate::server::{LocalLayout, LocalRun, ServerConfig, SimulationServer};

/// A target generator started for one measured run (nodes as threads, or as
/// processes a caller starts): its server, and how to end it.
pub trait BenchRun {
    /// The run's simulation server.
    fn server(&mut self) -> &mut SimulationServer;
    /// Stops the server and the nodes, and removes the run's federation.
    fn finish(self: Box<Self>) -> Result<(), TgError>;
}

impl BenchRun for LocalRun {
    fn server(&mut self) -> &mut SimulationServer {
        &mut self.server
    }

    fn finish(self: Box<Self>) -> Result<(), TgError> {
        LocalRun::finish(*self).map(drop)
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    /// Aircraft flown.
    pub aircraft: usize,
    /// Processing nodes.
    pub nodes: usize,
    /// Threads in each node's pool.
    pub threads_per_node: usize,
    /// Measured wall seconds per run (after `warmup_frames`).
    pub seconds: f64,
    /// Runs.
    pub runs: usize,
    /// The model.
    pub model: Model,
    /// The window a rate sample covers: 0.5 s gives 20 samples in a 10-second run.
    pub window: Duration,
    /// Frames run before measuring (the first frames register the instances): 10.
    pub warmup_frames: u64,
    /// The random flights' seed.
    pub seed: u64,
}

/// One run's (or all runs') update rate, in the paper's columns.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct RateSummary {
    /// Frames per second over the run: every aircraft updated once per frame.
    pub update_rate_hz: f64,
    /// Standard deviation of the window rates.
    pub sd_hz: f64,
    /// Fastest window.
    pub max_hz: f64,
    /// Slowest window.
    pub min_hz: f64,
    /// Frames measured.
    pub frames: u64,
    /// Mean of the slowest node's parallel step per frame, ms.
    pub compute_ms_mean: f64,
    /// Mean of the slowest node's publishing per frame, ms.
    pub publish_ms_mean: f64,
}

/// Measures `config.runs` runs, each on a fresh federation of `rti()` with the nodes
/// on threads; `each` hears every run's summary as it ends.
pub fn run(
    rti: impl Fn() -> Rti,
    config: &BenchConfig,
    each: impl FnMut(usize, &RateSummary),
) -> Result<Vec<RateSummary>, TgError> {
    run_with(
        config,
        |run, scenario| {
            let layout = LocalLayout::new(config.nodes, config.threads_per_node, config.model);
            let tg = LocalRun::start(
                &rti(),
                &format!("tg-bench-{run}"),
                scenario,
                &layout,
                ServerConfig::new(config.nodes),
            )?;
            Ok(Box::new(tg) as Box<dyn BenchRun>)
        },
        each,
    )
}

/// [`run`] with the target generator of each run started by `start(run, scenario)`
/// (for example with node processes over NATS).
pub fn run_with(
    config: &BenchConfig,
    mut start: impl FnMut(usize, Scenario) -> Result<Box<dyn BenchRun>, TgError>,
    mut each: impl FnMut(usize, &RateSummary),
) -> Result<Vec<RateSummary>, TgError> {
    let flights = random_flights(
        FlightKind::Airline,
        Region::Us,
        config.aircraft,
        config.seed,
        crate::perf::PerformanceTable::builtin(),
    )
    .map_err(TgError::Generate)?;
    let mut out = Vec::new();
    for run in 0..config.runs {
        let scenario = Scenario {
            name: format!("bench-{}", config.aircraft),
            description: String::new(),
            wind: Default::default(),
            aircraft: flights.clone(),
        };
        let mut tg = start(run, scenario)?;
        for _ in 0..config.warmup_frames {
            tg.server().step()?;
        }
        let start = Instant::now();
        let mut window_start = start;
        let mut window_frames = 0u64;
        let mut rates = Vec::new();
        let (mut frames, mut compute, mut publish) = (0u64, Duration::ZERO, Duration::ZERO);
        loop {
            let r = tg.server().step()?;
            frames += 1;
            window_frames += 1;
            compute += r.compute;
            publish += r.publish;
            let now = Instant::now();
            if now - window_start >= config.window {
                rates.push(window_frames as f64 / (now - window_start).as_secs_f64());
                window_start = now;
                window_frames = 0;
            }
            if (now - start).as_secs_f64() >= config.seconds {
                break;
            }
        }
        let elapsed = start.elapsed().as_secs_f64();
        tg.finish()?;
        let summary = summarize(frames as f64 / elapsed, &rates, frames, compute, publish);
        each(run, &summary);
        out.push(summary);
    }
    Ok(out)
}

fn summarize(
    rate: f64,
    windows: &[f64],
    frames: u64,
    compute: Duration,
    publish: Duration,
) -> RateSummary {
    let n = windows.len() as f64;
    let mean = windows.iter().sum::<f64>() / n.max(1.0);
    let sd = if windows.len() > 1 {
        (windows.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let per_frame_ms = |d: Duration| d.as_secs_f64() * 1e3 / frames.max(1) as f64;
    RateSummary {
        update_rate_hz: rate,
        sd_hz: sd,
        max_hz: windows.iter().copied().fold(f64::NAN, f64::max),
        min_hz: windows.iter().copied().fold(f64::NAN, f64::min),
        frames,
        compute_ms_mean: per_frame_ms(compute),
        publish_ms_mean: per_frame_ms(publish),
    }
}

/// The paper's "All Runs" row: the mean of the runs' averages and of their standard
/// deviations (Table 2's 0.097 Hz is the mean of its five), the largest maximum and
/// the smallest minimum.
pub fn all_runs(runs: &[RateSummary]) -> RateSummary {
    let n = runs.len().max(1) as f64;
    let mean = |f: fn(&RateSummary) -> f64| runs.iter().map(f).sum::<f64>() / n;
    RateSummary {
        update_rate_hz: mean(|r| r.update_rate_hz),
        sd_hz: mean(|r| r.sd_hz),
        max_hz: runs.iter().map(|r| r.max_hz).fold(f64::NAN, f64::max),
        min_hz: runs.iter().map(|r| r.min_hz).fold(f64::NAN, f64::min),
        frames: runs.iter().map(|r| r.frames).sum(),
        compute_ms_mean: mean(|r| r.compute_ms_mean),
        publish_ms_mean: mean(|r| r.publish_ms_mean),
    }
}

/// DASE's Tables 2–5 (one node, Unix socket; two nodes, TCP): aircraft, nodes, and the
/// "All Runs" row (average, standard deviation, maximum, minimum, Hz).
pub const DASE_TABLES: [(usize, usize, [f64; 4]); 4] = [
    (400, 1, [125.427, 0.097, 126.503, 124.819]),
    (1000, 1, [48.870, 0.173, 49.467, 48.503]),
    (400, 2, [79.550, 0.381, 81.732, 78.883]),
    (1000, 2, [32.014, 0.203, 32.971, 31.518]),
];

//! Running a target generator in time: real-time pacing at a fixed rate (each frame's
//! start against its schedule: deadline misses and jitter), or as fast as possible;
//! the operator's controls (pause, resume, single step, stop, rate, speed factor,
//! commands); and a status every second.

use std::time::{Duration, Instant};

use crossbeam_channel::Receiver;

use crate::command::Instruction;
use crate::federation::TgError;
use crate::server::{FrameReport, SimulationServer};

/// What a run tells its caller: a status once per `status_every`, and a look at the
/// server after every frame (and every few milliseconds while paused), on the run's
/// own thread. An observer must not block: the frames wait for it.
pub trait Observer {
    /// One period's status.
    fn status(&mut self, status: &Status, server: &mut SimulationServer);
    /// After a frame (`Some`) or a paused pass of the loop (`None`), with the
    /// simulated seconds since the start. The default does nothing.
    fn tick(
        &mut self,
        server: &mut SimulationServer,
        frame: Option<&FrameReport>,
        sim_time_s: f64,
    ) {
        let _ = (server, frame, sim_time_s);
    }
}

/// A closure that takes the statuses is an observer.
pub struct OnStatus<F>(pub F);

impl<F: FnMut(&Status, &mut SimulationServer)> Observer for OnStatus<F> {
    fn status(&mut self, status: &Status, server: &mut SimulationServer) {
        (self.0)(status, server)
    }
}

/// What an operator can tell a running target generator.
#[derive(Clone, Debug, PartialEq)]
pub enum Control {
    /// Stop stepping until resumed.
    Pause,
    /// Step again.
    Resume,
    /// While paused, run exactly one frame.
    Step,
    /// End the run.
    Stop,
    /// Frames per second of wall time (0 = as fast as possible).
    Rate(f64),
    /// Simulated seconds per wall second.
    Speed(f64),
    /// End this run so that its caller starts the named scenario instead
    /// ([`run_until`] returns [`RunEnd::Load`]; [`run`] treats it as a stop).
    Load(String),
    /// A pilot input to one aircraft.
    Command {
        /// The aircraft.
        callsign: String,
        /// What to do.
        instruction: Instruction,
    },
}

impl Control {
    /// Parses an operator's line: `pause`, `resume`, `step`, `stop`, `rate HZ`,
    /// `speed FACTOR`, `load SCENARIO`, or
    /// `CALLSIGN heading|altitude|speed|direct|resume ...`.
    pub fn parse(line: &str) -> Result<Control, String> {
        let line = line.trim();
        let mut words = line.split_whitespace();
        let first = words.next().ok_or("an empty line")?;
        let number = |w: Option<&str>, what: &str| -> Result<f64, String> {
            let w = w.ok_or(format!("`{first}` needs {what}"))?;
            match w.parse::<f64>() {
                Ok(v) if v.is_finite() && v >= 0.0 => Ok(v),
                _ => Err(format!("`{w}` is not {what}")),
            }
        };
        Ok(match first {
            "pause" => Control::Pause,
            "resume" => Control::Resume,
            "step" => Control::Step,
            "stop" => Control::Stop,
            "rate" => Control::Rate(number(words.next(), "a rate in Hz")?),
            "speed" => {
                let s = number(words.next(), "a speed factor")?;
                if s == 0.0 {
                    return Err("a speed factor must be above 0 (pause stops time)".into());
                }
                Control::Speed(s)
            }
            "load" => Control::Load(
                words
                    .next()
                    .ok_or("`load` needs a scenario's name or file")?
                    .to_string(),
            ),
            callsign => Control::Command {
                callsign: callsign.to_string(),
                instruction: Instruction::parse(line[callsign.len()..].trim())?,
            },
        })
    }
}

/// One second's status.
#[derive(Clone, Debug, PartialEq)]
pub struct Status {
    /// Wall seconds since the run started.
    pub elapsed_s: f64,
    /// The last frame.
    pub frame: u64,
    /// Simulated seconds since the start.
    pub sim_time_s: f64,
    /// Aircraft flown.
    pub aircraft: usize,
    /// Frames per wall second over the last status period.
    pub rate_hz: f64,
    /// Mean frame wall time over the period, ms.
    pub frame_ms_mean: f64,
    /// Mean of the slowest node's compute time per frame, ms.
    pub compute_ms_mean: f64,
    /// Frames that overran their period (paced runs), over the whole run.
    pub deadline_misses: u64,
    /// Frame start lateness against the schedule over the period: p50, p99, max, ms.
    pub jitter_ms: [f64; 3],
    /// The same over the whole run so far (to the microsecond), and how many frames
    /// it covers.
    pub run_jitter_ms: [f64; 3],
    /// Paced frames in `run_jitter_ms`.
    pub paced_frames: u64,
    /// Whether the run is paused.
    pub paused: bool,
    /// State updates the server received per frame over the period (the aircraft
    /// count when none is lost or duplicated).
    pub updates_per_frame: f64,
}

/// How to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// Frames per wall second; 0 runs as fast as possible.
    pub rate_hz: f64,
    /// Simulated seconds per wall second (the step is speed / rate).
    pub speed: f64,
    /// Stop after this many wall seconds (None: until `Control::Stop`).
    pub seconds: Option<f64>,
    /// How often a status is given.
    pub status_every: Duration,
}

/// Runs `server` until the time is up or a `Stop` (or a `Load`) arrives, obeying
/// `controls` and telling `observer` of every frame and, once per `status_every`,
/// the status. Returns the last status.
pub fn run(
    server: &mut SimulationServer,
    controls: &Receiver<Control>,
    options: RunOptions,
    observer: &mut dyn Observer,
) -> Result<Status, TgError> {
    run_until(server, controls, options, observer).map(|(status, _)| status)
}

/// Why a run ended.
#[derive(Clone, Debug, PartialEq)]
pub enum RunEnd {
    /// A `Stop` arrived (or the controls were dropped: nobody can resume it).
    Stopped,
    /// `RunOptions::seconds` passed.
    TimeUp,
    /// A `Load` arrived: the caller starts this scenario next.
    Load(String),
}

/// [`run`], also saying why the run ended.
pub fn run_until(
    server: &mut SimulationServer,
    controls: &Receiver<Control>,
    mut options: RunOptions,
    observer: &mut dyn Observer,
) -> Result<(Status, RunEnd), TgError> {
    let start = Instant::now();
    let mut paused = false;
    let mut single_steps = 0u64;
    let mut next_start = Instant::now();
    let mut misses = 0u64;
    let mut sim_time = 0.0;
    let mut period_start = Instant::now();
    let (mut period_frames, mut period_wall, mut period_compute) =
        (0u64, Duration::ZERO, Duration::ZERO);
    let mut period_updates = 0u64;
    let mut jitter: Vec<Duration> = Vec::new();
    // The whole run's, in microseconds: a few hundred distinct values whatever its length.
    let mut run_jitter = glidepath::stats::Recorder::new();
    let mut last = None;
    if options.rate_hz > 0.0 {
        server.set_dt_s(options.speed / options.rate_hz);
    }
    loop {
        // The operator's controls, then the stations' (TgControl), in arrival order.
        let mut pending: Vec<Control> = controls.try_iter().collect();
        pending.extend(server.take_controls());
        for control in pending {
            match control {
                Control::Pause => paused = true,
                Control::Resume => {
                    paused = false;
                    next_start = Instant::now();
                }
                Control::Step => single_steps += 1,
                Control::Stop => {
                    return Ok((
                        last.unwrap_or_else(|| empty_status(server)),
                        RunEnd::Stopped,
                    ))
                }
                Control::Load(name) => {
                    return Ok((
                        last.unwrap_or_else(|| empty_status(server)),
                        RunEnd::Load(name),
                    ))
                }
                Control::Rate(r) => {
                    options.rate_hz = r;
                    next_start = Instant::now();
                    if r > 0.0 {
                        server.set_dt_s(options.speed / r);
                    }
                }
                Control::Speed(s) => {
                    options.speed = s;
                    if options.rate_hz > 0.0 {
                        server.set_dt_s(s / options.rate_hz);
                    }
                }
                Control::Command {
                    callsign,
                    instruction,
                } => {
                    server.command(&callsign, instruction);
                }
            }
        }
        if options
            .seconds
            .is_some_and(|s| start.elapsed().as_secs_f64() >= s)
        {
            return Ok((last.unwrap_or_else(|| empty_status(server)), RunEnd::TimeUp));
        }
        let run_frame = !paused || single_steps > 0;
        if run_frame {
            if options.rate_hz > 0.0 && !paused {
                wait_until(next_start);
                let late = Instant::now().saturating_duration_since(next_start);
                jitter.push(late);
                run_jitter.record(late.as_micros() as u64);
            }
            single_steps = single_steps.saturating_sub(u64::from(paused));
            let report = server.step()?;
            sim_time += server.dt_s();
            period_frames += 1;
            period_wall += report.wall;
            period_compute += report.compute;
            period_updates += report.updates;
            observer.tick(server, Some(&report), sim_time);
            if options.rate_hz > 0.0 {
                let period = Duration::from_secs_f64(1.0 / options.rate_hz);
                next_start += period;
                let now = Instant::now();
                if next_start < now {
                    // Overran: the next frame starts now, not in a burst catching up.
                    misses += 1;
                    next_start = now;
                }
            }
        } else {
            // Paused: still hear the stations (a TgControl may resume the run).
            server.poll(Duration::from_millis(5))?;
            observer.tick(server, None, sim_time);
        }
        if period_start.elapsed() >= options.status_every {
            let secs = period_start.elapsed().as_secs_f64();
            jitter.sort();
            let pick = |q: f64| {
                jitter
                    .get(
                        ((jitter.len() as f64 * q).ceil() as usize).clamp(1, jitter.len().max(1))
                            - 1,
                    )
                    .map_or(0.0, |d| d.as_secs_f64() * 1e3)
            };
            let s = Status {
                elapsed_s: start.elapsed().as_secs_f64(),
                frame: server.frame(),
                sim_time_s: sim_time,
                aircraft: server.tracks().len(),
                rate_hz: period_frames as f64 / secs,
                frame_ms_mean: ms_mean(period_wall, period_frames),
                compute_ms_mean: ms_mean(period_compute, period_frames),
                deadline_misses: misses,
                jitter_ms: [pick(0.5), pick(0.99), pick(1.0)],
                run_jitter_ms: [50.0, 99.0, 100.0]
                    .map(|i| run_jitter.percentile(i).map_or(0.0, |us| us as f64 / 1e3)),
                paced_frames: run_jitter.count(),
                paused,
                updates_per_frame: period_updates as f64 / period_frames.max(1) as f64,
            };
            observer.status(&s, server);
            last = Some(s);
            period_start = Instant::now();
            (period_frames, period_wall, period_compute) = (0, Duration::ZERO, Duration::ZERO);
            period_updates = 0;
            jitter.clear();
        }
    }
}

fn ms_mean(total: Duration, n: u64) -> f64 {
    if n == 0 {
        0.0
    } else {
        total.as_secs_f64() * 1e3 / n as f64
    }
}

fn empty_status(server: &SimulationServer) -> Status {
    Status {
        elapsed_s: 0.0,
        frame: server.frame(),
        sim_time_s: 0.0,
        aircraft: server.tracks().len(),
        rate_hz: 0.0,
        frame_ms_mean: 0.0,
        compute_ms_mean: 0.0,
        deadline_misses: 0,
        jitter_ms: [0.0; 3],
        run_jitter_ms: [0.0; 3],
        paced_frames: 0,
        paused: false,
        updates_per_frame: 0.0,
    }
}

/// Sleeps until shortly before `deadline`, then spins: a sleep alone wakes up to a
/// scheduler tick late, which is the jitter this pacing exists to avoid.
fn wait_until(deadline: Instant) {
    const SPIN: Duration = Duration::from_micros(300);
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        if left > SPIN {
            std::thread::sleep(left - SPIN);
        } else {
            std::hint::spin_loop();
        }
    }
}

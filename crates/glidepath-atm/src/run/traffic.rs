//! The traffic block: publishes each simulated second's SNDEM tracks, from a generated
//! day, an ADS-B CSV, or a recording played back, then advances to the next second.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use glidepath::{Bytes, Callback, Federate};

use super::block::{advance, enable_time, Component};
use super::recording::read_recording;
use super::{BlockOutcome, Codec, Context, Progress, SimulationState, Sndem};
use crate::layout::{Block, TrafficSource};
use crate::track::Track;
use crate::traffic::{TrafficConfig, TrafficDay, DAY_S};

/// Where a traffic block's tracks come from, second by second.
enum Tracks {
    Generated(Box<TrafficDay>),
    /// Tracks already read (a CSV or a recording), sorted by second.
    Loaded {
        by_second: Vec<(u32, Track)>,
        next: usize,
    },
}

impl Tracks {
    /// Replaces `out`'s contents with second `t`'s tracks.
    fn second(&mut self, t: u32, out: &mut Vec<Track>) {
        match self {
            // Overwrites the tracks already in `out`: no allocation per track.
            Tracks::Generated(day) => day.second_reusing(t, out),
            Tracks::Loaded { by_second, next } => {
                out.clear();
                while let Some((s, track)) = by_second.get(*next) {
                    if *s > t {
                        break;
                    }
                    if *s == t {
                        out.push(track.clone());
                    }
                    *next += 1;
                }
            }
        }
    }
}

/// A traffic block (generated day, ADS-B CSV or a recording played back).
pub(super) struct TrafficBlock {
    block: Block,
    day_start: i64,
    end: u32,
    codec: Codec,
    run_name: String,
    sndem: Sndem,
    progress: Arc<Progress>,
    density: Option<f64>,
    window: (u32, u32),
    tracks: Option<Tracks>,
    published: u64,
}

impl TrafficBlock {
    pub(super) fn new(block: &Block, ctx: &Context, sndem: Sndem) -> TrafficBlock {
        TrafficBlock {
            block: block.clone(),
            day_start: ctx.layout_day_start,
            end: ctx.end,
            codec: ctx.opts.codec,
            run_name: ctx.opts.run_name.clone(),
            sndem,
            progress: ctx.progress.clone(),
            density: ctx.opts.density,
            window: (0, 0),
            tracks: None,
            published: 0,
        }
    }

    /// The simulated seconds `[from, to)` this block plays, clipped to the run.
    fn window(&self) -> (u32, u32) {
        let rel = |unix: i64| (unix - self.day_start).clamp(0, i64::from(DAY_S)) as u32;
        let delay = self.block.scheduled_delay_s.max(0.0).round() as u32;
        let from = self.block.traffic_start.map_or(delay, rel).max(delay);
        let to = self.block.traffic_end.map_or(DAY_S, rel);
        (from.min(self.end), to.min(self.end))
    }

    fn load(&mut self) -> Result<(), String> {
        let (from, to) = self.window;
        let tracks = match &self.block.source {
            Some(TrafficSource::Generated { seed, density }) => {
                if from >= to {
                    None
                } else {
                    let config = TrafficConfig {
                        seed: *seed,
                        start_s: from,
                        end_s: to,
                        density: self.density.unwrap_or(*density),
                        src: self.block.name.replace(':', "."),
                        run: self.run_name.clone(),
                        epoch_ms: self.day_start * 1000,
                    };
                    Some(Tracks::Generated(Box::new(
                        TrafficDay::new(config).map_err(|e| e.to_string())?,
                    )))
                }
            }
            Some(TrafficSource::AdsbCsv { path }) => {
                let (tracks, bad) = crate::adsb_csv::read_adsb_csv(path)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                for e in bad.iter().take(20) {
                    eprintln!("{}: skipped: {e}", self.block.name);
                }
                let day_ms = self.day_start * 1000;
                let mut by_second: Vec<(u32, Track)> = tracks
                    .into_iter()
                    .filter_map(|t| {
                        let s = (t.time - day_ms).div_euclid(1000);
                        (s >= i64::from(from) && s < i64::from(to)).then_some((s as u32, t))
                    })
                    .collect();
                by_second.sort_by_key(|(s, _)| *s);
                Some(Tracks::Loaded { by_second, next: 0 })
            }
            Some(TrafficSource::Recording { path }) => {
                let records = read_recording(path)?;
                let day_ms = self.day_start * 1000;
                let mut by_second: Vec<(u32, Track)> = Vec::with_capacity(records.len());
                for (i, (_, bytes)) in records.into_iter().enumerate() {
                    let track = Codec::Json
                        .decode(&bytes)
                        .or_else(|| Codec::Binary.decode(&bytes))
                        .ok_or_else(|| {
                            format!("{}: record {} is not a track", path.display(), i + 1)
                        })?;
                    let s = (track.time - day_ms).div_euclid(1000);
                    if s >= i64::from(from) && s < i64::from(to) {
                        by_second.push((s as u32, track));
                    }
                }
                by_second.sort_by_key(|(s, _)| *s);
                Some(Tracks::Loaded { by_second, next: 0 })
            }
            None => return Err("no traffic source".into()),
        };
        self.tracks = tracks;
        Ok(())
    }

    fn execute(&mut self, f: &Federate, abort: &AtomicBool) -> Result<(), String> {
        let (from, to) = self.window;
        let mut ignore = |_cb: Callback| {};
        let Some(tracks) = self.tracks.as_mut() else {
            // Nothing to play in this run: step aside to the end.
            return advance(f, abort, f64::from(self.end), &mut ignore);
        };
        if from > 0 {
            advance(f, abort, f64::from(from), &mut ignore)?;
        }
        let mut buf = Vec::new();
        let mut scratch = Vec::with_capacity(256);
        // Messages are cut from a shared 64 KiB block instead of one allocation each
        // for key and payload; a block is freed when its last message has been read.
        let mut arena = bytes::BytesMut::with_capacity(64 * 1024);
        let real_time = !self.block.fast_time;
        let started = Instant::now();
        for t in from..to {
            if real_time {
                let due = Duration::from_secs_f64(f64::from(t - from) / self.block.speed);
                if let Some(wait) = due.checked_sub(started.elapsed()) {
                    thread::sleep(wait);
                }
            }
            tracks.second(t, &mut buf);
            for track in &mut buf {
                track.meta.tpub = wall_ms();
                self.codec.encode(track, &mut scratch);
                arena.extend_from_slice(track.vid.as_bytes());
                let vid = arena.split().freeze();
                arena.extend_from_slice(&scratch);
                let message = arena.split().freeze();
                f.send_interaction(
                    self.sndem.class,
                    [(self.sndem.vid, vid), (self.sndem.message, message)],
                    Bytes::new(),
                )
                .map_err(|e| e.to_string())?;
            }
            self.published += buf.len() as u64;
            self.progress
                .published
                .fetch_add(buf.len() as u64, Ordering::Relaxed);
            advance(f, abort, f64::from(t + 1), &mut ignore)?;
        }
        if to < self.end {
            advance(f, abort, f64::from(self.end), &mut ignore)?;
        }
        Ok(())
    }
}

fn wall_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Component for TrafficBlock {
    fn state(
        &mut self,
        state: SimulationState,
        f: &Federate,
        abort: &AtomicBool,
    ) -> Result<(), String> {
        match state {
            SimulationState::Deployment => {
                self.window = self.window();
                match &self.block.source {
                    Some(TrafficSource::AdsbCsv { path } | TrafficSource::Recording { path })
                        if !path.exists() =>
                    {
                        Err(format!("source file {} not found", path.display()))
                    }
                    _ => Ok(()),
                }
            }
            SimulationState::Startup => f
                .publish_interaction_class(self.sndem.class)
                .map_err(|e| e.to_string()),
            SimulationState::Initialization => {
                self.load()?;
                enable_time(f, abort, 1.0, |_| {})
            }
            SimulationState::Execution => self.execute(f, abort),
            SimulationState::Shutdown => {
                f.flush().map_err(|e| e.to_string())?;
                f.disable_time_regulation().map_err(|e| e.to_string())
            }
            _ => Ok(()),
        }
    }

    fn outcome(self: Box<Self>) -> BlockOutcome {
        BlockOutcome::Published(self.published)
    }
}

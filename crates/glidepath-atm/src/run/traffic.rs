//! The traffic block: publishes each simulated second's SNDEM tracks, from a generated
//! day, an ADS-B CSV, or a recording played back, then advances to the next second.

use std::fmt::Write as _;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use glidepath::{Bytes, Callback, Federate};

use super::block::{advance, enable_time, Component};
use super::recording::read_recording;
use super::sector::PointRegions;
use super::{BlockOutcome, Codec, Context, Progress, SimulationState, Sndem, SOURCE_LOOKAHEAD};
use crate::adsb_csv::AdsbFile;
use crate::layout::sector::Point;
use crate::layout::{format_rfc3339, Block, TrafficSource};
use crate::report::tables::{group, rows, span};
use crate::report::SourceStats;
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

/// A recorded source read whole: its good tracks, in file order, and what the file
/// holds besides (rows, bad rows, empty callsigns, first and last time).
pub(super) struct Recorded {
    pub(super) tracks: Vec<Track>,
    pub(super) stats: SourceStats,
}

/// Reads a block's recorded source (an ADS-B CSV or a recording) whole; `None` for the
/// generated day. Tracks carry the block's name (`:` as `.`, as the memorandum's
/// `ATAC Data.1`) and `run` as their publisher and run.
pub(super) fn read_recorded(block: &Block, run: &str) -> Result<Option<Recorded>, String> {
    let Some(source) = &block.source else {
        return Err("no traffic source".into());
    };
    let mut stats = SourceStats {
        block: block.name.clone(),
        kind: source.kind_name().to_string(),
        path: source.path().map(|p| p.display().to_string()),
        ..SourceStats::default()
    };
    let mut tracks = match source {
        TrafficSource::Generated { .. } => return Ok(None),
        TrafficSource::AdsbCsv {
            path,
            timestamp_unit,
        } => {
            let file = AdsbFile::read(path, *timestamp_unit)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            stats.rows = file.rows;
            stats.bad_rows = file.bad_rows;
            stats.bad_examples = file.errors.iter().map(ToString::to_string).collect();
            stats.empty_callsigns = file.empty_callsigns;
            stats.reading = Some(file.reading(*timestamp_unit));
            file.tracks
        }
        TrafficSource::Recording { path } => {
            let records = read_recording(path)?;
            stats.rows = records.len() as u64;
            let mut tracks = Vec::with_capacity(records.len());
            for (i, (_, bytes)) in records.into_iter().enumerate() {
                let track = Codec::Json
                    .decode(&bytes)
                    .or_else(|| Codec::Binary.decode(&bytes))
                    .ok_or_else(|| {
                        format!("{}: record {} is not a track", path.display(), i + 1)
                    })?;
                tracks.push(track);
            }
            tracks
        }
    };
    if let TrafficSource::AdsbCsv { .. } = source {
        let src = block.name.replace(':', ".");
        for t in &mut tracks {
            t.meta.src.clone_from(&src);
            t.meta.run = run.to_string();
        }
    }
    stats.first_ms = tracks.iter().map(|t| t.time).min();
    stats.last_ms = tracks.iter().map(|t| t.time).max();
    Ok(Some(Recorded { tracks, stats }))
}

/// Why a recorded source that has rows but none in its window fails the run: "0 of
/// 284,505 rows fall in the simulated window 2021-10-07T00:00:00Z + 24 h; first row at
/// ...". A source that publishes nothing is never a silent, empty run.
fn nothing_in_window(stats: &SourceStats, day_start: i64, (from, to): (u32, u32)) -> String {
    let at = |ms: i64| format_rfc3339(ms.div_euclid(1000));
    let mut why = format!(
        "0 of {} rows fall in the simulated window {} + {}",
        group(stats.rows),
        format_rfc3339(day_start + i64::from(from)),
        span(u64::from(to - from))
    );
    match (stats.first_ms, stats.last_ms) {
        (Some(first), Some(last)) => {
            let _ = write!(why, "; first row at {}, last at {}", at(first), at(last));
            if stats.after_window == stats.rows - stats.bad_rows {
                why.push_str(" (all after the window: check day_start, and the timestamps' unit)");
            } else if stats.before_window == stats.rows - stats.bad_rows {
                why.push_str(
                    " (all before the window: check day_start, --hours, and the timestamps' unit)",
                );
            }
        }
        _ if stats.rows == 0 => why.push_str("; the file has no data rows"),
        _ => why.push_str("; no row could be read"),
    }
    if stats.bad_rows > 0 {
        let _ = write!(
            why,
            "; {} skipped for bad values, first: {}",
            rows(stats.bad_rows),
            stats.bad_examples.first().map_or("?", String::as_str)
        );
    }
    if let Some(r) = &stats.reading {
        let _ = write!(why, "; {r}");
    }
    why
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
    credit: Option<u64>,
    density: Option<f64>,
    window: (u32, u32),
    tracks: Option<Tracks>,
    stats: SourceStats,
    /// The linked monitor's sector, if it has one.
    monitor_sector: Option<crate::layout::Sector>,
    /// Whether tracks go out with their points as regions, and those regions.
    sends_regions: bool,
    regions: Option<PointRegions>,
}

impl TrafficBlock {
    pub(super) fn new(block: &Block, ctx: &Context, sndem: Sndem) -> TrafficBlock {
        TrafficBlock {
            block: block.clone(),
            day_start: ctx.day_start,
            end: ctx.end,
            codec: ctx.opts.codec,
            run_name: ctx.opts.run_name.clone(),
            sndem,
            progress: ctx.progress.clone(),
            credit: ctx.credit,
            density: ctx.opts.density,
            window: (0, 0),
            tracks: None,
            monitor_sector: ctx.monitor_sector,
            sends_regions: ctx.regions,
            regions: None,
            stats: SourceStats {
                block: block.name.clone(),
                kind: block
                    .source
                    .as_ref()
                    .map_or("none", TrafficSource::kind_name)
                    .to_string(),
                ..SourceStats::default()
            },
        }
    }

    /// The simulated seconds `[from, to)` this block plays, clipped to the run. The
    /// generated day ends with its day.
    fn window(&self) -> (u32, u32) {
        let rel = |unix: i64| (unix - self.day_start).clamp(0, i64::from(self.end)) as u32;
        let delay = self.block.scheduled_delay_s.max(0.0).round() as u32;
        let from = self.block.traffic_start.map_or(delay, rel).max(delay);
        let generated = matches!(self.block.source, Some(TrafficSource::Generated { .. }));
        let last = if generated { DAY_S } else { self.end };
        let to = self.block.traffic_end.map_or(last, rel).min(last);
        (from.min(self.end), to.min(self.end))
    }

    fn load(&mut self) -> Result<(), String> {
        let (from, to) = self.window;
        self.stats.window_s = self.window;
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
            Some(_) => {
                let recorded =
                    read_recorded(&self.block, &self.run_name)?.expect("a recorded source");
                let mut stats = recorded.stats;
                stats.window_s = self.window;
                let day_ms = self.day_start * 1000;
                let mut by_second: Vec<(u32, Track)> = Vec::with_capacity(recorded.tracks.len());
                for t in recorded.tracks {
                    let s = (t.time - day_ms).div_euclid(1000);
                    if s < i64::from(from) {
                        stats.before_window += 1;
                    } else if s >= i64::from(to) {
                        stats.after_window += 1;
                    } else {
                        by_second.push((s as u32, t));
                    }
                }
                // A block whose window the run does not reach plays nothing by design
                // (its delay is past the end of a shortened run); one with a window
                // and no row in it fails the run, saying why.
                if by_second.is_empty() && from < to {
                    return Err(nothing_in_window(&stats, self.day_start, self.window));
                }
                self.stats = stats;
                // Stable: rows of one second keep their file order.
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
                let point = Point::of(track.lat_deg, track.lon_deg, track.alt_ft);
                // Outside the monitor's sector, nothing reaches it: no credit taken.
                let to_monitor = self.monitor_sector.is_none_or(|s| s.contains(point));
                if let Some(window) = self.credit.filter(|_| to_monitor) {
                    wait_for_credit(&self.progress, window, abort)?;
                }
                let values = [(self.sndem.vid, vid), (self.sndem.message, message)];
                match &self.regions {
                    Some(regions) => {
                        let region = regions.at(f, point)?;
                        f.send_interaction_with_regions(
                            self.sndem.class,
                            values,
                            &[region],
                            Bytes::new(),
                        )
                    }
                    None => f.send_interaction(self.sndem.class, values, Bytes::new()),
                }
                .map_err(|e| e.to_string())?;
                if self.monitor_sector.is_some() && to_monitor {
                    *self.stats.in_sector.get_or_insert(0) += 1;
                }
            }
            self.stats.published += buf.len() as u64;
            self.progress
                .block_published(&self.block.name, buf.len() as u64);
            advance(f, abort, f64::from(t + 1), &mut ignore)?;
        }
        if self.stats.published == 0 && from < to {
            // Recorded sources fail earlier (initialization) when no row is in the
            // window; a generated day can be empty where it is sparse.
            return Err(format!(
                "published nothing in its window {} + {}: its source has no track there",
                format_rfc3339(self.day_start + i64::from(from)),
                span(u64::from(to - from))
            ));
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
                    Some(
                        TrafficSource::AdsbCsv { path, .. } | TrafficSource::Recording { path },
                    ) if !path.exists() => Err(format!("source file {} not found", path.display())),
                    _ => Ok(()),
                }
            }
            SimulationState::Startup => f
                .publish_interaction_class(self.sndem.class)
                .map_err(|e| e.to_string()),
            SimulationState::Initialization => {
                self.load()?;
                if self.sends_regions {
                    self.regions = Some(PointRegions::new(f)?);
                }
                if self.monitor_sector.is_some() {
                    self.stats.in_sector = Some(0);
                }
                enable_time(f, abort, SOURCE_LOOKAHEAD, |_| {})
            }
            SimulationState::Execution => self.execute(f, abort),
            SimulationState::Shutdown => {
                f.flush().map_err(|e| e.to_string())?;
                f.disable_time_regulation().map_err(|e| e.to_string())
            }
            _ => Ok(()),
        }
    }

    fn outcome(mut self: Box<Self>) -> BlockOutcome {
        if matches!(self.block.source, Some(TrafficSource::Generated { .. })) {
            // The generated day's rows are the tracks it generated in the window.
            self.stats.rows = self.stats.published;
        }
        BlockOutcome::Published(Box::new(self.stats))
    }
}

/// Waits until fewer than `window` messages published under credit are not yet
/// received by the monitor; spins first, then yields the core.
fn wait_for_credit(progress: &Progress, window: u64, abort: &AtomicBool) -> Result<(), String> {
    use std::sync::atomic::Ordering;
    let mut spins = 0u32;
    loop {
        let sent = progress.sent.load(Ordering::Acquire);
        let in_flight = sent.saturating_sub(progress.received.load(Ordering::Acquire));
        // Taken by compare-and-swap: blocks publishing at once never overdraw it.
        if in_flight < window
            && progress
                .sent
                .compare_exchange_weak(sent, sent + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            progress
                .credit_peak
                .fetch_max(in_flight + 1, Ordering::Relaxed);
            return Ok(());
        }
        spins += 1;
        if spins < 256 {
            std::hint::spin_loop();
        } else {
            if spins.is_multiple_of(1024) {
                super::check_abort(abort)?;
            }
            thread::yield_now();
        }
    }
}

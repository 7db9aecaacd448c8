//! The run's time frame: which instant is simulated second 0 and how many seconds the
//! run plays, from the options, the layout, or — when the layout plays recorded data
//! only — from the data itself, so a layout with one CSV source needs neither a
//! `day_start` nor `--hours`.

use super::traffic::read_recorded;
use super::{run_end, RunError, RunOptions};
use crate::layout::{format_rfc3339, BlockKind, Layout, TrafficSource};
use crate::report::tables::{rows, span};
use crate::traffic::DAY_S;

/// The longest run: a week of simulated seconds. Recorded data spanning more is
/// played for its first week (the rest is counted as after the window) unless
/// `--hours` says otherwise; the report's per-second data grows with the run.
pub const MAX_RUN_S: u32 = 7 * DAY_S;

/// Simulated second 0 and the run's length, and where each came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFrame {
    /// Unix seconds of simulated second 0.
    pub day_start: i64,
    /// Where `day_start` came from, e.g. "the first row of block `Swiss traffic`".
    pub day_start_from: String,
    /// Simulated seconds the run plays, `[0, end_s)`.
    pub end_s: u32,
    /// Where `end_s` came from, e.g. "the span of the data".
    pub end_from: String,
}

impl RunFrame {
    /// Two lines for the start of a run: second 0 and the length, each with its origin
    /// and how to change it.
    pub fn describe(&self) -> String {
        // An origin the user gave needs no hint of how to give it.
        let hint = |from: &str, how: &str| {
            if from.starts_with("--") {
                from.to_string()
            } else {
                format!("{from}; {how}")
            }
        };
        format!(
            "second 0 at {} ({})\nlength {} ({} s, to {}; {})",
            format_rfc3339(self.day_start),
            hint(
                &self.day_start_from,
                "day_start in the layout or --day-start sets it"
            ),
            span(u64::from(self.end_s)),
            self.end_s,
            format_rfc3339(self.day_start + i64::from(self.end_s)),
            hint(&self.end_from, "--hours sets it"),
        )
    }
}

/// Decides the run's frame. Second 0 is `opts.day_start`, else the layout's
/// `day_start` (or its earliest `traffic_start`), else — the layout plays recorded
/// sources only — the second of the earliest row of their data. The length is
/// `opts.hours`, else a whole day when a source is the generated day, else the
/// data's span: up to the second of the latest row played (a block's `traffic_end`
/// cuts its data), at most [`MAX_RUN_S`]. The data is read only when needed.
pub fn frame(layout: &Layout, opts: &RunOptions) -> Result<RunFrame, RunError> {
    let sources: Vec<_> = layout
        .blocks
        .iter()
        .filter_map(|b| b.source.as_ref().map(|s| (b, s)))
        .collect();
    let generated = sources
        .iter()
        .any(|(_, s)| matches!(s, TrafficSource::Generated { .. }));
    let known_start = opts.day_start.or(layout.day_start);
    let need_data = known_start.is_none() || (opts.hours.is_none() && !generated);
    // (block, first row ms, last row ms, traffic_end) of every recorded source.
    let mut spans = Vec::new();
    let mut unreadable = Vec::new();
    if need_data {
        for (block, _) in sources.iter().filter(|(_, s)| s.is_recorded()) {
            let recorded = read_recorded(block, "frame")
                .map_err(|e| super::block_error(&block.name, e))?
                .expect("a recorded source");
            match (recorded.stats.first_ms, recorded.stats.last_ms) {
                (Some(first), Some(last)) => spans.push((block, first, last)),
                _ => unreadable.push(format!(
                    "block `{}` has no readable row ({}{})",
                    block.name,
                    rows(recorded.stats.rows),
                    recorded
                        .stats
                        .bad_examples
                        .first()
                        .map_or(String::new(), |e| format!(", all skipped; first: {e}"))
                )),
            }
        }
    }
    let (day_start, day_start_from) = match (opts.day_start, layout.day_start) {
        (Some(t), _) => (t, "--day-start".to_string()),
        (None, Some(t)) => (
            t,
            "the layout's day_start, else its earliest traffic_start".to_string(),
        ),
        (None, None) => {
            let (block, first, _) =
                spans
                    .iter()
                    .min_by_key(|(_, first, _)| *first)
                    .ok_or_else(|| {
                        RunError::Layout(format!(
                    "no day_start: the layout has neither day_start nor a traffic_start, and \
                     its data has no row to start at: {}",
                    if unreadable.is_empty() {
                        "no block plays recorded data".to_string()
                    } else {
                        unreadable.join("; ")
                    }
                ))
                    })?;
            (
                first.div_euclid(1000),
                format!("the first row of block `{}`", block.name),
            )
        }
    };
    let (end_s, end_from) = if opts.hours.is_some() {
        (run_end(opts), "--hours".to_string())
    } else if generated {
        (DAY_S, "a whole day of generated traffic".to_string())
    } else {
        // Up to the second of the latest row a block plays (inclusive).
        let last = spans
            .iter()
            .map(|(block, _, last)| {
                let s = last.div_euclid(1000) + 1;
                block.traffic_end.map_or(s, |end| s.min(end))
            })
            .max();
        match last {
            Some(last) => {
                let want = last - day_start;
                let end = want.clamp(1, i64::from(MAX_RUN_S)) as u32;
                let from = if want > i64::from(MAX_RUN_S) {
                    format!(
                        "the data's span, {}, capped at the longest run",
                        span(want as u64)
                    )
                } else {
                    "the span of the data".to_string()
                };
                (end, from)
            }
            None if layout.blocks.iter().any(|b| b.kind == BlockKind::External) => {
                return Err(RunError::Layout(
                    "the run's length: its external blocks have no data to read it from and \
                     no block plays a generated day: give --hours"
                        .into(),
                ))
            }
            None => (1, "no readable row in the data".to_string()),
        }
    };
    Ok(RunFrame {
        day_start,
        day_start_from,
        end_s,
        end_from,
    })
}

/// The options with the frame written in (`day_start` and `hours` set), so blocks,
/// block processes and the report all use the same frame.
pub(super) fn with_frame(opts: &RunOptions, frame: &RunFrame) -> RunOptions {
    RunOptions {
        day_start: Some(frame.day_start),
        hours: Some(f64::from(frame.end_s) / 3600.0),
        ..opts.clone()
    }
}

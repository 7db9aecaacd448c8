//! The end-of-run report: the ATM TestBed memorandum's tables and figures for one run,
//! with the memorandum's own numbers beside ours, and a side-by-side table for a matrix
//! of runs.
//!
//! Why this shape: the point of issue 5 is that a reader can put glidepath's run next to
//! the memorandum (`000_5ec45ac95430ffab`) and compare line by line. So [`RunReport::tables`]
//! prints the memorandum's tables in its own column layout (Min, P25, P50, P75, Max, Mean,
//! SD, Unit, Count; percentiles by its exact-rank formula, through
//! [`glidepath::stats::Recorder`]):
//!
//! | part | reproduces |
//! | --- | --- |
//! | lengths and frequencies | Table 4.2 (with the memorandum's row underneath) |
//! | latency T_S − T_P in ms | Table 4.3 (with runs 1A, 2A, 3A, 4A underneath) |
//! | durations by state | Table 4.5 (the seven states of section 4.3, and the total) |
//! | throughput | Table 4.7 (bytes · 8 / execution s / 10⁶) |
//! | counts | published vs received vs lost (section 4.2.1), peak flights (Figure 4.1), what every source played and skipped |
//!
//! [`RunReport::write`] puts the same tables in `report.md`, the numbers in `report.json`
//! (a stable, documented set of keys that scripts and tests read), and PNG figures like
//! Figures 4.1–4.3. [`matrix_table`] is the experiment matrix of Tables 3.2–3.3 next to
//! the memorandum's runs 1A, 2A and 4A.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glidepath::stats::{Recorder, Summary};
use glidepath_plot::PlotError;
use serde_json::{json, Value};

use crate::run::SimulationState;

mod figures;
mod memo;
pub(crate) mod tables;

pub use tables::matrix_table;

/// The seven states every component goes through (memorandum section 4.3), in order; the
/// keys of `state_durations_s` in `report.json`.
pub const STATES: [&str; 7] = {
    let mut names = [""; 7];
    let mut i = 0;
    while i < names.len() {
        names[i] = SimulationState::ALL[i].name();
        i += 1;
    }
    names
};

/// One simulated second of the run (the data of Figure 4.1).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SecondStats {
    /// Simulated second since the layout's second 0.
    pub t: u32,
    /// Messages published in that second.
    pub messages: u32,
    /// Flights airborne in that second, as the memorandum counts them (Figure 4.1(a)):
    /// a flight is airborne from its first message to its last. A flight is one
    /// vehicle id's messages; a vehicle silent for more than 30 minutes starts a new
    /// flight when it reports again (the same callsign flying a later leg). In the
    /// run's first and last minute the count is low: a flight already in the air at
    /// second 0 counts from its first message in the run, one still flying at the end
    /// up to its last.
    pub flights: u32,
    /// Distinct vehicle ids that reported during this second's minute (a different,
    /// coarser count: it includes flights that only began or ended in the minute).
    pub callsigns_in_minute: u32,
}

/// What one traffic or player block played, and what it skipped and why: nothing a
/// source holds goes missing from a run without being counted here.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SourceStats {
    /// The block's name.
    pub block: String,
    /// `generated`, `adsb_csv` or `recording`.
    pub kind: String,
    /// The file a recorded source plays.
    pub path: Option<String>,
    /// The simulated seconds `[from, to)` the block plays (its window within the run).
    pub window_s: (u32, u32),
    /// Rows (records) the file holds, good and bad; for the generated day, the tracks
    /// generated in the window.
    pub rows: u64,
    /// Messages the block published.
    pub published: u64,
    /// Good rows timed before the block's window, and at or after its end.
    pub before_window: u64,
    /// See `before_window`.
    pub after_window: u64,
    /// Rows skipped because a value is bad (malformed number, ambiguous timestamp,
    /// latitude out of range, ...).
    pub bad_rows: u64,
    /// The first of them, `line N: what is wrong`.
    pub bad_examples: Vec<String>,
    /// Good rows whose callsign was empty: published with their `icao24` as the
    /// vehicle id.
    pub empty_callsigns: u64,
    /// Time of the earliest and the latest good row, Unix milliseconds.
    pub first_ms: Option<i64>,
    /// See `first_ms`.
    pub last_ms: Option<i64>,
    /// How the file was read (timestamp unit, columns under other names or units).
    pub reading: Option<String>,
    /// Of what it published, the tracks inside the sector of the monitor it is linked
    /// to, when that monitor has one (`None` otherwise): what the monitor should
    /// receive.
    #[serde(default)]
    pub in_sector: Option<u64>,
}

/// Everything measured in one run, and how the run was configured.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Run label, e.g. `1A` or `inproc-json-none`.
    pub run: String,
    /// The layout's name.
    pub layout: String,
    /// Backend: `inproc`, `nats`, ...
    pub transport: String,
    /// Encoder: `json` (SNDEM) or `binary`.
    pub codec: String,
    /// `none`, `lz4`, `zstd`.
    pub compression: String,
    /// Whether the backend persisted messages (JetStream).
    pub persistence: bool,
    /// Where the blocks ran: `threads` (of one process) or `processes` (one each).
    pub deployment: String,
    /// The credit window (`--credit N`): at most this many messages in flight to the
    /// monitor; `None`: only the monitor's lookahead bounds them.
    pub credit: Option<u64>,
    /// Unix seconds of simulated second 0.
    pub day_start: i64,
    /// Simulated hours played.
    pub hours: f64,
    /// Messages published by the traffic blocks.
    pub published: u64,
    /// Messages received by the monitor.
    pub received: u64,
    /// Published but never received.
    pub lost: u64,
    /// Received more than once.
    pub duplicated: u64,
    /// Received but not decodable.
    pub malformed: u64,
    /// Bytes of all published messages (key + payload, as in Table 4.1).
    pub bytes: u64,
    /// Wall-clock seconds of the execution state (Table 4.5's "Execution").
    pub execution_s: f64,
    /// `bytes · 8 / execution_s / 10⁶` (Table 4.7).
    pub throughput_mbit_s: f64,
    /// Most flights airborne in one second, each from its first message to its last
    /// (Figure 4.1(a); 4,744 in the memorandum).
    pub peak_flights: u64,
    /// The first simulated second with `peak_flights` airborne.
    pub peak_flights_s: Option<u32>,
    /// Most distinct vehicle ids reporting within one simulated minute.
    pub peak_callsigns_per_minute: u64,
    /// Bytes per message (key + payload).
    pub lengths: Recorder,
    /// Messages per simulated second.
    pub frequencies: Recorder,
    /// Latency T_S − T_P in microseconds.
    pub latency_us: Recorder,
    /// The run second by second (may be empty).
    pub per_second: Vec<SecondStats>,
    /// What each traffic and player block played and skipped, in layout order.
    pub sources: Vec<SourceStats>,
    /// Wall-clock seconds of each state, in the order of [`STATES`].
    pub state_durations_s: Vec<(String, f64)>,
}

/// The report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// A file or the folder could not be written.
    #[error("{}: cannot write report: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A figure could not be drawn (names its file).
    #[error(transparent)]
    Plot(#[from] PlotError),
}

impl RunReport {
    /// Table 4.3's latency row in milliseconds: the exact-rank summary of `latency_us`,
    /// every column divided by 1000 (the percentiles stay measured values).
    pub fn latency_ms(&self) -> Option<Summary> {
        self.latency_us.summary().map(|s| Summary {
            count: s.count,
            min: s.min / 1e3,
            p25: s.p25 / 1e3,
            p50: s.p50 / 1e3,
            p75: s.p75 / 1e3,
            p99: s.p99 / 1e3,
            p999: s.p999 / 1e3,
            max: s.max / 1e3,
            mean: s.mean / 1e3,
            sd: s.sd / 1e3,
        })
    }

    /// Sum of the state durations (Table 4.5's "Total").
    pub fn total_s(&self) -> f64 {
        self.state_durations_s.iter().map(|(_, s)| s).sum()
    }

    /// The machine-readable report (`report.json`). Keys: `run`, `layout`, `transport`,
    /// `codec`, `compression`, `persistence`, `deployment`, `day_start` (RFC 3339),
    /// `hours`, `published`, `received`, `lost`, `duplicated`, `malformed`, `bytes`,
    /// `execution_s`, `throughput_mbit_s`, `peak_flights` (airborne in one second,
    /// first to last message), `peak_flights_at` (RFC 3339, null when no flight),
    /// `peak_callsigns_per_minute`, `total_s`; objects `lengths` (bytes), `frequencies`
    /// (msg/s) and `latency_ms`, each with `min`, `p25`, `p50`, `p75`, `p99`, `p999`,
    /// `max`, `mean`, `sd` (null when empty), `count` and `unit`; `state_durations_s`
    /// with one key per state of [`STATES`] (null when the state was not timed); and
    /// `sources`, one object per traffic or player block with the fields of
    /// [`SourceStats`] (`window_s` as `[from, to]`).
    pub fn to_json(&self) -> Value {
        let mut states = serde_json::Map::new();
        for state in STATES {
            let d = self
                .state_durations_s
                .iter()
                .find(|(s, _)| s.eq_ignore_ascii_case(state))
                .map(|(_, d)| *d);
            states.insert(state.to_string(), json_f(d));
        }
        json!({
            "run": self.run,
            "layout": self.layout,
            "transport": self.transport,
            "codec": self.codec,
            "compression": self.compression,
            "persistence": self.persistence,
            "deployment": self.deployment,
            "credit": self.credit,
            "day_start": crate::layout::format_rfc3339(self.day_start),
            "hours": json_f(Some(self.hours)),
            "published": self.published,
            "received": self.received,
            "lost": self.lost,
            "duplicated": self.duplicated,
            "malformed": self.malformed,
            "bytes": self.bytes,
            "execution_s": json_f(Some(self.execution_s)),
            "throughput_mbit_s": json_f(Some(self.throughput_mbit_s)),
            "peak_flights": self.peak_flights,
            "peak_flights_at": self
                .peak_flights_s
                .map(|t| crate::layout::format_rfc3339(self.day_start + i64::from(t))),
            "peak_callsigns_per_minute": self.peak_callsigns_per_minute,
            "total_s": json_f(Some(self.total_s())),
            "lengths": summary_json(self.lengths.summary().as_ref(), "bytes"),
            "frequencies": summary_json(self.frequencies.summary().as_ref(), "msg/s"),
            "latency_ms": summary_json(self.latency_ms().as_ref(), "ms"),
            "state_durations_s": states,
            "sources": serde_json::to_value(&self.sources)
                .expect("source stats always serialize"),
        })
    }

    /// Writes `report.json`, `report.md` (the [`tables`](Self::tables)) and the figures
    /// into `dir` (created if needed); returns the paths written.
    ///
    /// Figures: `fig4_1a_flights.png` and `fig4_1b_messages.png` (flights airborne and
    /// messages per simulated second, Figure 4.1; only when `per_second` is not empty),
    /// `fig4_2a_lengths.png` and `fig4_2b_frequencies.png` (Figure 4.2),
    /// `fig4_3_latency.png` (histogram and percentile curve in ms, Figure 4.3).
    pub fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, ReportError> {
        std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
            path: dir.to_path_buf(),
            source,
        })?;
        let mut written = Vec::new();
        let put =
            |name: &str, text: String, written: &mut Vec<PathBuf>| -> Result<(), ReportError> {
                let path = dir.join(name);
                std::fs::write(&path, text).map_err(|source| ReportError::Io {
                    path: path.clone(),
                    source,
                })?;
                written.push(path);
                Ok(())
            };
        let json = serde_json::to_string_pretty(&self.to_json())
            .expect("a serde_json::Value always serializes");
        put("report.json", json + "\n", &mut written)?;

        let mut md = self.tables();
        md.push_str("\n## Figures\n\n");
        let figures = self.figures(dir)?;
        for (path, caption) in &figures {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let _ = writeln!(md, "![{caption}]({name})\n");
        }
        put("report.md", md, &mut written)?;
        written.extend(figures.into_iter().map(|(p, _)| p));
        Ok(written)
    }
}

fn summary_json(s: Option<&Summary>, unit: &str) -> Value {
    let f = |g: fn(&Summary) -> f64| json_f(s.map(g));
    json!({
        "min": f(|s| s.min),
        "p25": f(|s| s.p25),
        "p50": f(|s| s.p50),
        "p75": f(|s| s.p75),
        "p99": f(|s| s.p99),
        "p999": f(|s| s.p999),
        "max": f(|s| s.max),
        "mean": f(|s| s.mean),
        "sd": f(|s| s.sd),
        "count": s.map_or(0, |s| s.count),
        "unit": unit,
    })
}

/// A number for JSON; NaN and infinities (which JSON cannot hold) become null.
fn json_f(v: Option<f64>) -> Value {
    v.filter(|v| v.is_finite())
        .map_or(Value::Null, |v| json!(v))
}

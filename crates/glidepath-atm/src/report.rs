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
//! | counts | published vs received vs lost (section 4.2.1), peak flights (Figure 4.1) |
//!
//! [`RunReport::write`] puts the same tables in `report.md`, the numbers in `report.json`
//! (a stable, documented set of keys that scripts and tests read), and PNG figures like
//! Figures 4.1–4.3. [`matrix_table`] is the experiment matrix of Tables 3.2–3.3 next to
//! the memorandum's runs 1A, 2A and 4A.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glidepath::stats::{Recorder, Summary};
use glidepath_plot::{PlotError, Scale, Series};
use serde_json::{json, Value};

use crate::run::SimulationState;

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
    /// Flights airborne in that second.
    pub flights: u32,
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
    /// Most flights airborne in one second (Figure 4.1(a); 4,744 in the memorandum).
    pub peak_flights: u64,
    /// Bytes per message (key + payload).
    pub lengths: Recorder,
    /// Messages per simulated second.
    pub frequencies: Recorder,
    /// Latency T_S − T_P in microseconds.
    pub latency_us: Recorder,
    /// The run second by second (may be empty).
    pub per_second: Vec<SecondStats>,
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

/// A row of the memorandum: Min, P25, P50, P75, Max, Mean, SD, Count.
struct MemoRow {
    label: &'static str,
    cells: [f64; 7],
    count: u64,
}

/// Table 4.2 of the memorandum.
const MEMO_LENGTHS: MemoRow = MemoRow {
    label: "Lengths (memorandum)",
    cells: [193.0, 207.0, 210.0, 212.0, 219.0, 209.63, 3.15],
    count: 43_308_919,
};
const MEMO_FREQUENCIES: MemoRow = MemoRow {
    label: "Frequencies (memorandum)",
    cells: [24.0, 247.0, 525.0, 704.0, 1779.0, 501.26, 281.79],
    count: 86_400,
};

/// Table 4.3 of the memorandum (whole milliseconds: its clocks had 1 ms resolution).
const MEMO_LATENCY: [MemoRow; 4] = [
    MemoRow {
        label: "1A in-memory (memorandum)",
        cells: [0.0, 0.0, 0.0, 0.0, 70.0, 0.0113, 0.119],
        count: 43_308_919,
    },
    MemoRow {
        label: "2A ActiveMQ (memorandum)",
        cells: [0.0, 0.0, 0.0, 0.0, 38.0, 0.134, 0.342],
        count: 43_308_919,
    },
    MemoRow {
        label: "3A Basic (memorandum)",
        cells: [0.0, 5.0, 26.0, 27.0, 57.0, 19.7, 11.5],
        count: 43_304_541,
    },
    MemoRow {
        label: "4A NATS (memorandum)",
        cells: [0.0, 0.0, 1.0, 2.0, 139.0, 1.49, 3.144],
        count: 43_308_917,
    },
];

/// Table 4.5 of the memorandum, runs 1A and 4A, in the order of [`STATES`].
const MEMO_DURATIONS_1A: [f64; 7] = [2.874, 1.534, 117.521, 663.702, 0.655, 9.403, 0.011];
const MEMO_DURATIONS_4A: [f64; 7] = [3.374, 1.620, 108.598, 673.550, 0.281, 1.036, 0.009];

/// Messages and bytes of the memorandum's day (sections 4.1 and 4.4).
const MEMO_MESSAGES: u64 = 43_308_919;
const MEMO_BYTES: u64 = 9_078_643_231;
const MEMO_PEAK_FLIGHTS: u64 = 4_744;

/// One run of the memorandum for [`matrix_table`].
struct MemoRun {
    run: &'static str,
    what: &'static str,
    execution_s: f64,
    throughput_mbit_s: f64,
    latency_ms: [f64; 3], // P50, mean, max
    received: u64,
}

const MEMO_RUNS: [MemoRun; 3] = [
    MemoRun {
        run: "1A",
        what: "in-memory (Java calls)",
        execution_s: 663.702,
        throughput_mbit_s: 109.430,
        latency_ms: [0.0, 0.0113, 70.0],
        received: 43_308_919,
    },
    MemoRun {
        run: "2A",
        what: "ActiveMQ, compression + persistence",
        execution_s: 4786.092,
        throughput_mbit_s: 15.175,
        latency_ms: [0.0, 0.134, 38.0],
        received: 43_308_919,
    },
    MemoRun {
        run: "4A",
        what: "NATS",
        execution_s: 673.550,
        throughput_mbit_s: 107.831,
        latency_ms: [1.0, 1.49, 139.0],
        received: 43_308_917,
    },
];

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

    /// The human report: the memorandum's Tables 4.2, 4.3, 4.5 and 4.7 for this run, with
    /// the memorandum's figures beside them, and the message counts. Markdown tables, so
    /// the same text reads well printed and in `report.md`.
    pub fn tables(&self) -> String {
        let mut o = String::new();
        let persistence = if self.persistence { "on" } else { "off" };
        let _ = writeln!(
            o,
            "# ATM TestBed report: run {} (layout {})\n",
            self.run, self.layout
        );
        let _ = writeln!(
            o,
            "transport {} · codec {} · compression {} · persistence {} · blocks as {} · {} simulated hours\n",
            self.transport,
            self.codec,
            self.compression,
            persistence,
            self.deployment,
            fmt_f(self.hours, 2)
        );

        // Table 4.2
        let _ = writeln!(o, "## Table 4.2. Message statistics\n");
        stats_header(&mut o, "Message");
        stats_row(
            &mut o,
            "Lengths",
            self.lengths.summary().as_ref(),
            2,
            "bytes",
            0,
        );
        memo_row(&mut o, &MEMO_LENGTHS, 2, "bytes");
        stats_row(
            &mut o,
            "Frequencies",
            self.frequencies.summary().as_ref(),
            2,
            "msg/s",
            0,
        );
        memo_row(&mut o, &MEMO_FREQUENCIES, 2, "msg/s");
        o.push('\n');

        // Table 4.3
        let _ = writeln!(o, "## Table 4.3. Latency T_S − T_P\n");
        stats_header(&mut o, "Run");
        let latency = self.latency_ms();
        stats_row(&mut o, &self.run, latency.as_ref(), 4, "ms", 3);
        for row in &MEMO_LATENCY {
            memo_row(&mut o, row, 4, "ms");
        }
        let _ = writeln!(o, "\nglidepath measures microseconds; the memorandum's clocks counted whole milliseconds, hence its 0 ms percentiles.");
        if let Some(l) = latency {
            let _ = writeln!(
                o,
                "This run: P99 {} ms, P99.9 {} ms.",
                fmt_f(l.p99, 3),
                fmt_f(l.p999, 3)
            );
        }
        o.push('\n');

        // Table 4.5
        let _ = writeln!(o, "## Table 4.5. Durations by state, in seconds\n");
        let _ = writeln!(
            o,
            "| State | {} | 1A (memorandum) | 4A (memorandum) |",
            self.run
        );
        let _ = writeln!(o, "|---|---:|---:|---:|");
        for (i, state) in STATES.iter().enumerate() {
            let ours = self
                .state_durations_s
                .iter()
                .find(|(s, _)| s.eq_ignore_ascii_case(state))
                .map_or("—".to_string(), |(_, d)| fmt_f(*d, 3));
            let _ = writeln!(
                o,
                "| {} | {ours} | {} | {} |",
                capitalize(state),
                fmt_f(MEMO_DURATIONS_1A[i], 3),
                fmt_f(MEMO_DURATIONS_4A[i], 3)
            );
        }
        // States outside the seven (a caller's extra phase) are still shown, not dropped.
        for (state, d) in self
            .state_durations_s
            .iter()
            .filter(|(s, _)| !STATES.iter().any(|k| s.eq_ignore_ascii_case(k)))
        {
            let _ = writeln!(o, "| {state} | {} | | |", fmt_f(*d, 3));
        }
        let memo_total = |d: &[f64; 7]| d.iter().sum::<f64>();
        let _ = writeln!(
            o,
            "| **Total** | {} ({}) | {} ({}) | {} ({}) |\n",
            fmt_f(self.total_s(), 3),
            minutes(self.total_s()),
            fmt_f(memo_total(&MEMO_DURATIONS_1A), 3),
            minutes(memo_total(&MEMO_DURATIONS_1A)),
            fmt_f(memo_total(&MEMO_DURATIONS_4A), 3),
            minutes(memo_total(&MEMO_DURATIONS_4A)),
        );

        // Table 4.7
        let _ = writeln!(o, "## Table 4.7. Throughput, in Mbit/s\n");
        let _ = writeln!(o, "| Run | Bytes | Execution (s) | Throughput (Mbit/s) |");
        let _ = writeln!(o, "|---|---:|---:|---:|");
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            self.run,
            group(self.bytes),
            fmt_f(self.execution_s, 3),
            fmt_f(self.throughput_mbit_s, 3)
        );
        for m in &MEMO_RUNS {
            let _ = writeln!(
                o,
                "| {} {} (memorandum) | {} | {} | {} |",
                m.run,
                m.what,
                group(MEMO_BYTES),
                fmt_f(m.execution_s, 3),
                fmt_f(m.throughput_mbit_s, 3)
            );
        }
        o.push('\n');

        // Counts
        let _ = writeln!(o, "## Messages\n");
        let _ = writeln!(o, "| | {} | memorandum |", self.run);
        let _ = writeln!(o, "|---|---:|---:|");
        let _ = writeln!(
            o,
            "| Published | {} | {} |",
            group(self.published),
            group(MEMO_MESSAGES)
        );
        let _ = writeln!(
            o,
            "| Received | {} | {} (1A) · {} (4A) |",
            group(self.received),
            group(MEMO_MESSAGES),
            group(MEMO_RUNS[2].received)
        );
        let _ = writeln!(
            o,
            "| Lost | {} | 0 (1A) · 2 (4A) · 4,378 (3A) |",
            group(self.lost)
        );
        let _ = writeln!(o, "| Duplicated | {} | |", group(self.duplicated));
        let _ = writeln!(o, "| Malformed | {} | |", group(self.malformed));
        let _ = writeln!(
            o,
            "| Peak flights | {} | {} |",
            group(self.peak_flights),
            group(MEMO_PEAK_FLIGHTS)
        );
        let max_rate = self
            .frequencies
            .summary()
            .map_or("—".to_string(), |s| group(s.max as u64));
        let _ = writeln!(o, "| Most messages in one second | {max_rate} | 1,779 |");
        let verdict = if self.received == self.published && self.lost == 0 {
            "every published message was received"
        } else {
            "received ≠ published"
        };
        let _ = writeln!(o, "\n{verdict}.");
        o
    }

    /// The machine-readable report (`report.json`). Keys: `run`, `layout`, `transport`,
    /// `codec`, `compression`, `persistence`, `deployment`, `hours`, `published`, `received`, `lost`,
    /// `duplicated`, `malformed`, `bytes`, `execution_s`, `throughput_mbit_s`,
    /// `peak_flights`, `total_s`; objects `lengths` (bytes), `frequencies` (msg/s) and
    /// `latency_ms`, each with `min`, `p25`, `p50`, `p75`, `p99`, `p999`, `max`, `mean`,
    /// `sd` (null when empty), `count` and `unit`; and `state_durations_s` with one key
    /// per state of [`STATES`] (null when the state was not timed).
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
            "total_s": json_f(Some(self.total_s())),
            "lengths": summary_json(self.lengths.summary().as_ref(), "bytes"),
            "frequencies": summary_json(self.frequencies.summary().as_ref(), "msg/s"),
            "latency_ms": summary_json(self.latency_ms().as_ref(), "ms"),
            "state_durations_s": states,
        })
    }

    /// Writes `report.json`, `report.md` (the [`tables`](Self::tables)) and the figures
    /// into `dir` (created if needed); returns the paths written.
    ///
    /// Figures: `fig4_1a_flights.png` and `fig4_1b_messages.png` (flights and messages per
    /// second over the simulated day, Figure 4.1; only when `per_second` is not empty),
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

    fn figures(&self, dir: &Path) -> Result<Vec<(PathBuf, String)>, ReportError> {
        let mut out = Vec::new();
        let label = format!("run {} ({}, {})", self.run, self.transport, self.codec);
        if !self.per_second.is_empty() {
            // Figure 4.1: per second, as the memorandum draws it. Flights change slowly, so
            // past two hours of seconds the curve is drawn from per-minute means; messages
            // keep every second (the plot keeps each run's min and max, so spikes survive)
            // with the one-minute mean on top, as the memorandum's orange line.
            let hours = |t: f64| t / 3600.0;
            let flights: Vec<(f64, f64)> = if self.per_second.len() > 7200 {
                per_minute_means(&self.per_second, |s| s.flights)
            } else {
                self.per_second
                    .iter()
                    .map(|s| (f64::from(s.t), f64::from(s.flights)))
                    .collect()
            };
            let path = dir.join("fig4_1a_flights.png");
            let caption = format!("Figure 4.1(a)-like: flights per simulated second, {label}");
            glidepath_plot::lines(
                &path,
                &caption,
                "simulated time (hours)",
                "flights",
                &[Series::new(
                    "flights",
                    flights.into_iter().map(|(t, v)| (hours(t), v)).collect(),
                )],
                Scale::Linear,
                Scale::Linear,
            )?;
            out.push((path, caption));

            let per_s: Vec<(f64, f64)> = self
                .per_second
                .iter()
                .map(|s| (hours(f64::from(s.t)), f64::from(s.messages)))
                .collect();
            let minute: Vec<(f64, f64)> = per_minute_means(&self.per_second, |s| s.messages)
                .into_iter()
                .map(|(t, v)| (hours(t), v))
                .collect();
            let path = dir.join("fig4_1b_messages.png");
            let caption = format!("Figure 4.1(b)-like: messages per simulated second, {label}");
            glidepath_plot::lines(
                &path,
                &caption,
                "simulated time (hours)",
                "messages/s",
                &[
                    Series::new("per second", per_s),
                    Series::new("one-minute mean", minute),
                ],
                Scale::Linear,
                Scale::Linear,
            )?;
            out.push((path, caption));
        }

        let lengths = expand(&self.lengths, 1.0);
        let bins = self
            .lengths
            .summary()
            .map_or(1, |s| (s.max - s.min) as usize + 1)
            .clamp(1, 200);
        let path = dir.join("fig4_2a_lengths.png");
        let caption = format!("Figure 4.2(a)-like: message lengths, {label}");
        glidepath_plot::histogram(&path, &caption, "message length (bytes)", &lengths, bins)?;
        out.push((path, caption));

        let frequencies = expand(&self.frequencies, 1.0);
        // Bins of about 50 msg/s, like the memorandum's histogram.
        let bins = self
            .frequencies
            .summary()
            .map_or(1, |s| ((s.max - s.min) / 50.0).ceil() as usize)
            .clamp(1, 100);
        let path = dir.join("fig4_2b_frequencies.png");
        let caption = format!("Figure 4.2(b)-like: messages per simulated second, {label}");
        glidepath_plot::histogram(&path, &caption, "messages per second", &frequencies, bins)?;
        out.push((path, caption));

        let latency = expand(&self.latency_us, 1e-3);
        let path = dir.join("fig4_3_latency.png");
        let caption = format!("Figure 4.3-like: latency T_S − T_P, {label}");
        glidepath_plot::latency_histogram_and_percentiles(&path, &caption, "ms", &latency)?;
        out.push((path, caption));
        Ok(out)
    }
}

/// At most this many values are handed to a plot for one distribution.
const PLOT_VALUES_MAX: u64 = 1_000_000;

/// The samples of `r` as plot input, each multiplied by `scale`.
///
/// A [`Recorder`] keeps value → count, and a full day holds 43 million messages: rather
/// than materialise them all, each distinct value is repeated in proportion to its count,
/// scaled so the total stays near [`PLOT_VALUES_MAX`]. Counts are rounded *up*, so a value
/// seen even once (the minimum, the maximum, a rare outlier) still appears: the shape of
/// the histogram and of the percentile curve is kept, the tails are not lost. The values
/// come from the recorder's HDR histogram (3 significant digits: exact below 2048, within
/// 0.1 % above), which is plenty for a figure; the tables use the exact summary.
fn expand(r: &Recorder, scale: f64) -> Vec<f64> {
    let n = r.count();
    if n == 0 {
        return Vec::new();
    }
    let hdr = r.to_hdr();
    // Clamped to the exact extremes, so the figures' min and max match the tables.
    let (lo, hi) = r.summary().map_or((0.0, 0.0), |s| (s.min, s.max));
    let keep = if n <= PLOT_VALUES_MAX {
        1.0
    } else {
        PLOT_VALUES_MAX as f64 / n as f64
    };
    let mut out = Vec::new();
    for v in hdr.iter_recorded() {
        let c = v.count_at_value();
        let copies = if keep >= 1.0 {
            c
        } else {
            ((c as f64) * keep).ceil() as u64
        };
        let value = (hdr.highest_equivalent(v.value_iterated_to()) as f64).clamp(lo, hi) * scale;
        out.extend(std::iter::repeat_n(value, copies as usize));
    }
    out
}

/// `(start second of the minute, mean of field over that minute)`.
fn per_minute_means(
    seconds: &[SecondStats],
    field: impl Fn(&SecondStats) -> u32,
) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut current: Option<(u32, u64, u32)> = None; // minute, sum, n
    for s in seconds {
        let minute = s.t / 60;
        match &mut current {
            Some((m, sum, n)) if *m == minute => {
                *sum += u64::from(field(s));
                *n += 1;
            }
            _ => {
                if let Some((m, sum, n)) = current {
                    out.push((f64::from(m * 60), sum as f64 / f64::from(n)));
                }
                current = Some((minute, u64::from(field(s)), 1));
            }
        }
    }
    if let Some((m, sum, n)) = current {
        out.push((f64::from(m * 60), sum as f64 / f64::from(n)));
    }
    out
}

/// The experiment matrix (Tables 3.2–3.3 re-run with glidepath's backends) side by side,
/// with the memorandum's runs 1A (in-memory), 2A (ActiveMQ with compression and
/// persistence) and 4A (NATS) underneath. `vs 1A` is the memorandum's 1A execution time
/// divided by the run's: above 1 means faster than the memorandum's in-memory baseline
/// (meaningful for full-day runs; a shorter `--hours` run plays less traffic).
pub fn matrix_table(reports: &[RunReport]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "| Run | Transport | Codec | Compression | Persistence | Hours | Execution (s) | vs 1A | Throughput (Mbit/s) | Latency P50 (ms) | Latency mean (ms) | Latency max (ms) | Published | Received | Lost |");
    let _ = writeln!(
        o,
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in reports {
        let l = r.latency_ms();
        let cell =
            |f: fn(&Summary) -> f64| l.as_ref().map_or("—".to_string(), |s| fmt_f(f(s), 3));
        let speedup = if r.execution_s > 0.0 {
            format!("{}×", fmt_f(MEMO_RUNS[0].execution_s / r.execution_s, 1))
        } else {
            "—".to_string()
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {speedup} | {} | {} | {} | {} | {} | {} | {} |",
            r.run,
            r.transport,
            r.codec,
            r.compression,
            if r.persistence { "on" } else { "off" },
            fmt_f(r.hours, 2),
            fmt_f(r.execution_s, 3),
            fmt_f(r.throughput_mbit_s, 3),
            cell(|s| s.p50),
            cell(|s| s.mean),
            cell(|s| s.max),
            group(r.published),
            group(r.received),
            group(r.lost),
        );
    }
    for m in &MEMO_RUNS {
        let _ = writeln!(
            o,
            "| {} (memorandum) | {} | SNDEM JSON | {} | {} | 24 | {} | {}× | {} | {} | {} | {} | {} | {} | {} |",
            m.run,
            m.what,
            if m.run == "2A" { "on" } else { "off" },
            if m.run == "2A" { "on" } else { "off" },
            fmt_f(m.execution_s, 3),
            fmt_f(MEMO_RUNS[0].execution_s / m.execution_s, 1),
            fmt_f(m.throughput_mbit_s, 3),
            fmt_f(m.latency_ms[0], 0),
            trim_zeros(&fmt_f(m.latency_ms[1], 4)),
            fmt_f(m.latency_ms[2], 0),
            group(MEMO_MESSAGES),
            group(m.received),
            group(MEMO_MESSAGES - m.received),
        );
    }
    o
}

fn stats_header(o: &mut String, first: &str) {
    let _ = writeln!(
        o,
        "| {first} | Min | P25 | P50 | P75 | Max | Mean | SD | Unit | Count |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|");
}

/// A row of our numbers: percentiles with `p_decimals` (0 for whole bytes or messages),
/// mean and SD with `decimals`.
fn stats_row(
    o: &mut String,
    label: &str,
    s: Option<&Summary>,
    decimals: usize,
    unit: &str,
    p_decimals: usize,
) {
    match s {
        Some(s) => {
            let p = |v: f64| fmt_f(v, p_decimals);
            let _ = writeln!(
                o,
                "| {label} | {} | {} | {} | {} | {} | {} | {} | {unit} | {} |",
                p(s.min),
                p(s.p25),
                p(s.p50),
                p(s.p75),
                p(s.max),
                fmt_f(s.mean, decimals),
                fmt_f(s.sd, decimals),
                group(s.count)
            );
        }
        None => {
            let _ = writeln!(o, "| {label} | — | — | — | — | — | — | — | {unit} | 0 |");
        }
    }
}

fn memo_row(o: &mut String, row: &MemoRow, decimals: usize, unit: &str) {
    let [min, p25, p50, p75, max, mean, sd] = row.cells;
    let p = |v: f64| fmt_f(v, 0);
    // The memorandum's own precision: it printed 0.0113 and 3.144, so trailing digits are
    // trimmed rather than padded.
    let m = |v: f64| trim_zeros(&fmt_f(v, decimals));
    let _ = writeln!(
        o,
        "| *{}* | {} | {} | {} | {} | {} | {} | {} | {unit} | {} |",
        row.label,
        p(min),
        p(p25),
        p(p50),
        p(p75),
        p(max),
        m(mean),
        m(sd),
        group(row.count)
    );
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

fn fmt_f(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "—".to_string();
    }
    let s = format!("{v:.decimals$}");
    // Thousands separators on the integer part, as the memorandum prints counts.
    let (sign, rest) = s.strip_prefix('-').map_or(("", s.as_str()), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let grouped = group_digits(int);
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

fn group(v: u64) -> String {
    group_digits(&v.to_string())
}

fn group_digits(int: &str) -> String {
    let mut out = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// `795.7` → `13'16"`, the memorandum's Table 4.5 style.
fn minutes(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "—".to_string();
    }
    let whole = s.round() as u64;
    format!("{}'{:02}\"", whole / 60, whole % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_helpers() {
        assert_eq!(fmt_f(43_308_919.0, 0), "43,308,919");
        assert_eq!(fmt_f(-1234.5, 1), "-1,234.5");
        assert_eq!(fmt_f(0.0113, 4), "0.0113");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(minutes(795.700), "13'16\"");
        assert_eq!(minutes(4891.338), "81'31\"");
        assert_eq!(trim_zeros("3.1440"), "3.144");
    }

    #[test]
    fn expansion_keeps_tails_and_caps_size() {
        let mut r = Recorder::new();
        for _ in 0..3_000_000u64 {
            r.record(210);
        }
        r.record(193);
        r.record(219);
        let v = expand(&r, 1.0);
        assert!(v.len() as u64 <= PLOT_VALUES_MAX + 3);
        assert!(v.contains(&193.0) && v.contains(&219.0));
        let minutes = per_minute_means(
            &[
                SecondStats {
                    t: 0,
                    messages: 2,
                    flights: 1,
                },
                SecondStats {
                    t: 59,
                    messages: 4,
                    flights: 1,
                },
                SecondStats {
                    t: 60,
                    messages: 9,
                    flights: 1,
                },
            ],
            |s| s.messages,
        );
        assert_eq!(minutes, vec![(0.0, 3.0), (60.0, 9.0)]);
    }
}

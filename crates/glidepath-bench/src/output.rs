//! Writing results, the same way for every suite: the human table on stdout, the
//! progress bar on stderr, the JSON array of `--json PATH` and the PNG figures of
//! `--plot DIR` (the papers' figures, drawn by `glidepath-plot`).

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use glidepath_plot::{Scale, Series};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::harness::Progress;
use crate::result::BenchResult;

/// The progress bar of `glidepath bench`: drawn on stderr while a suite runs, hidden
/// when stderr is not a terminal so logs and tests stay clean.
pub struct BarProgress {
    bar: ProgressBar,
}

impl Default for BarProgress {
    fn default() -> Self {
        Self::new()
    }
}

impl BarProgress {
    /// A bar on stderr, hidden unless stderr is a terminal.
    pub fn new() -> BarProgress {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(0), target);
        bar.set_style(
            ProgressStyle::with_template("{msg:32} [{bar:40}] {pos}/{len} {per_sec}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        BarProgress { bar }
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

impl Progress for BarProgress {
    fn set(&self, done: u64, total: u64) {
        self.bar.set_length(total);
        self.bar.set_position(done);
    }

    fn stage(&self, label: &str) {
        self.bar.reset();
        self.bar.set_message(label.to_string());
    }
}

fn opt(v: Option<f64>, decimals: usize) -> String {
    v.map_or_else(|| "-".to_string(), |x| format!("{x:.decimals$}"))
}

/// Writes the human table: one line per result, glidepath's figures then the raw
/// peer's and the ratios (glidepath over raw: P50, P99, rate) where a raw peer ran.
pub fn write_table(out: &mut impl Write, results: &[BenchResult]) -> std::io::Result<()> {
    writeln!(
        out,
        "{:<10} {:<13} {:<6} {:<9} {:<9} {:>7} {:>4} {:>4} {:>7} {:>5} {:>9} {:>9} {:>9} {:>11} {:>9} {:>9} {:>11} {:>7} {:>7} {:>7}",
        "suite", "variant", "trans", "model", "wait", "size", "feds", "subs", "count", "lost",
        "p50 us", "p99 us", "mean us", "rate/s", "Mbit/s", "raw p50", "raw rate/s", "x p50", "x p99", "x rate"
    )?;
    for r in results {
        writeln!(
            out,
            "{:<10} {:<13} {:<6} {:<9} {:<9} {:>7} {:>4} {:>4} {:>7} {:>5} {:>9.2} {:>9.2} {:>9.2} {:>11.0} {:>9.1} {:>9} {:>11} {:>7} {:>7} {:>7}",
            r.suite,
            r.variant,
            r.transport,
            r.process_model,
            r.wait,
            r.size_bytes,
            r.federates,
            r.subscribers,
            r.count,
            r.lost,
            r.p50_us,
            r.p99_us,
            r.mean_us,
            r.rate_per_s,
            r.mbit_per_s,
            opt(r.raw_p50_us, 2),
            opt(r.raw_rate_per_s, 0),
            opt(r.ratio_p50, 2),
            opt(r.ratio_p99, 2),
            opt(r.ratio_rate, 2),
        )?;
    }
    if results.iter().any(|r| r.ddm.is_some()) {
        write_ddm_table(out, results)?;
    }
    Ok(())
}

/// The `ddm` suite's own columns, per subscriber: envelopes its RTI took in, wire
/// bytes (NATS), reflections, and the ratios of the run with regions to the one
/// without.
fn write_ddm_table(out: &mut impl Write, results: &[BenchResult]) -> std::io::Result<()> {
    writeln!(out)?;
    writeln!(
        out,
        "{:<10} {:<6} {:>4} {:>10} {:>8} {:>12} {:>8} {:>10} {:>10} {:>6} {:>6} {:>8}",
        "variant",
        "trans",
        "subs",
        "msgs/sub",
        "x msgs",
        "wire B/sub",
        "x wire",
        "cb/sub",
        "expect/sub",
        "f.neg",
        "f.pos",
        "x sender"
    )?;
    for r in results {
        let Some(d) = &r.ddm else { continue };
        writeln!(
            out,
            "{:<10} {:<6} {:>4} {:>10.1} {:>8.3} {:>12} {:>8} {:>10.1} {:>10.1} {:>6} {:>6} {:>8.2}",
            r.variant,
            r.transport,
            r.subscribers,
            d.messages_per_subscriber,
            d.messages_ratio,
            opt(d.wire_bytes_per_subscriber, 0),
            opt(d.wire_bytes_ratio, 3),
            d.callbacks_per_subscriber,
            d.expected_per_subscriber,
            d.false_negatives,
            d.false_positives,
            d.sender_time_ratio,
        )?;
    }
    Ok(())
}

/// Writes the results as a JSON array of objects (the keys of [`BenchResult`]).
pub fn write_json<T: serde::Serialize + ?Sized>(path: &Path, results: &T) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating directory {}", dir.display()))?;
    }
    let json = serde_json::to_string_pretty(results).context("encoding the results as JSON")?;
    std::fs::write(path, json + "\n").with_context(|| format!("writing {}", path.display()))
}

/// A figure against message size: file suffix, y label, glidepath's value, the raw peer's.
/// A boxplot figure: file suffix, what the groups are, x label, the grouping key.
type Boxplot = (
    &'static str,
    &'static str,
    &'static str,
    fn(&BenchResult) -> u64,
);

type Figure = (
    &'static str,
    &'static str,
    fn(&BenchResult) -> f64,
    fn(&BenchResult) -> Option<f64>,
);

/// A file-name-safe version of a label.
fn slug(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect::<String>()
        .trim_matches('-')
        .to_string()
}

/// Writes the figures into `dir` and returns the files written:
/// - per result with samples: latency histogram and percentile curve (ATM TestBed
///   Fig. 4.3);
/// - per suite and variant with results for several subscriber counts: notched
///   boxplots of the latency samples by subscriber count (FFTB Figs. 9–12), and with
///   several sizes, by message size (FFTB Figs. 7–10);
/// - per suite and variant with several sizes: rate, Mbit/s and P50 against message
///   size, one line per federate/subscriber count, raw peer dashed beside
///   (thesis Figs. 17–19).
pub fn write_plots(dir: &Path, results: &[BenchResult]) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut written = Vec::new();
    let plot_err = |path: &Path, e: glidepath_plot::PlotError| {
        anyhow::anyhow!("writing plot {}: {e}", path.display())
    };
    for r in results.iter().filter(|r| !r.samples_us.is_empty()) {
        let name = format!(
            "{}-{}-{}-{}B-{}f-{}s.png",
            r.suite,
            slug(&r.variant),
            r.transport,
            r.size_bytes,
            r.federates,
            r.subscribers
        );
        let path = dir.join(name);
        let title = format!(
            "{} {} over {} ({}, {}), {} B, {} subscriber(s), n = {}",
            r.suite,
            r.variant,
            r.transport,
            r.process_model,
            r.wait,
            r.size_bytes,
            r.subscribers,
            r.samples_us.len()
        );
        glidepath_plot::latency_histogram_and_percentiles(&path, &title, "µs", &r.samples_us)
            .map_err(|e| plot_err(&path, e))?;
        written.push(path);
    }

    // Group by (suite, variant, transport).
    let mut groups: BTreeMap<(String, String, String), Vec<&BenchResult>> = BTreeMap::new();
    for r in results {
        groups
            .entry((r.suite.clone(), r.variant.clone(), r.transport.clone()))
            .or_default()
            .push(r);
    }
    for ((suite, variant, transport), rs) in groups {
        let stem = format!("{suite}-{}-{transport}", slug(&variant));
        // Notched boxplots of every sample, grouped by subscriber count (pooling the
        // sizes) and by message size (pooling the subscriber counts).
        let boxplots: [Boxplot; 2] = [
            (
                "subscribers",
                "subscriber count (all sizes)",
                "subscribers",
                |r| r.subscribers,
            ),
            (
                "size",
                "message size (all subscriber counts)",
                "message size (bytes)",
                |r| r.size_bytes,
            ),
        ];
        for (file, by, x_label, key) in boxplots {
            let mut pooled: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
            for r in &rs {
                pooled
                    .entry(key(r))
                    .or_default()
                    .extend(r.samples_us.iter().copied());
            }
            pooled.retain(|_, v| !v.is_empty());
            if pooled.len() < 2 {
                continue;
            }
            let path = dir.join(format!("{stem}-boxplot-by-{file}.png"));
            let groups: Vec<(String, Vec<f64>)> = pooled
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect();
            glidepath_plot::notched_boxplots(
                &path,
                &format!("{suite} {variant} over {transport}: latency by {by}"),
                x_label,
                "latency (µs)",
                &groups,
            )
            .map_err(|e| plot_err(&path, e))?;
            written.push(path);
        }
        // Figures against message size.
        let sizes: std::collections::BTreeSet<u64> = rs.iter().map(|r| r.size_bytes).collect();
        if sizes.len() > 1 {
            let figures: [Figure; 3] = [
                (
                    "rate",
                    "messages per second",
                    |r| r.rate_per_s,
                    |r| r.raw_rate_per_s,
                ),
                (
                    "mbit",
                    "Mbit/s of payload",
                    |r| r.mbit_per_s,
                    |r| {
                        r.raw_rate_per_s
                            .map(|raw| raw * r.size_bytes as f64 * 8.0 / 1e6)
                    },
                ),
                ("p50", "P50 latency (µs)", |r| r.p50_us, |r| r.raw_p50_us),
            ];
            for (what, y_label, ours, raw) in figures {
                let mut series: BTreeMap<String, Vec<(f64, f64)>> = BTreeMap::new();
                for r in &rs {
                    let key = format!("glidepath, {} fed, {} sub", r.federates, r.subscribers);
                    series
                        .entry(key)
                        .or_default()
                        .push((r.size_bytes as f64, ours(r)));
                    if let Some(v) = raw(r) {
                        series
                            .entry(format!(
                                "raw peer, {} fed, {} sub",
                                r.federates, r.subscribers
                            ))
                            .or_default()
                            .push((r.size_bytes as f64, v));
                    }
                }
                let series: Vec<Series> = series
                    .into_iter()
                    .map(|(label, mut points)| {
                        points.sort_by(|a, b| a.0.total_cmp(&b.0));
                        Series::new(label, points)
                    })
                    .collect();
                let path = dir.join(format!("{stem}-{what}-by-size.png"));
                glidepath_plot::lines(
                    &path,
                    &format!("{suite} {variant} over {transport}: {y_label} by message size"),
                    "message size (bytes)",
                    y_label,
                    &series,
                    Scale::Log,
                    if what == "p50" {
                        Scale::Linear
                    } else {
                        Scale::Log
                    },
                )
                .map_err(|e| plot_err(&path, e))?;
                written.push(path);
            }
        }
    }
    Ok(written)
}

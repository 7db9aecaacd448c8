//! PNG figures in the style of the published simulation-interoperability papers that
//! glidepath measures itself against.
//!
//! The point of this crate is that glidepath's benchmark results can be put *next to* the
//! figures of those papers and compared by eye: same kind of chart, same axes, same
//! statistics. Each plot reproduces one family of figures:
//!
//! | function | reproduces | why that form |
//! | --- | --- | --- |
//! | [`latency_histogram_and_percentiles`] | ATM TestBed report, Fig. 4.3 (latency histogram beside its percentile curve) | the histogram shows the body of the distribution, the percentile curve its tail, with the report's exact-rank percentiles so the curve matches the report's tables |
//! | [`histogram`] | the plain histograms of the same report | one distribution, equal-width bins over `[min, max]` |
//! | [`notched_boxplots`] | FFTB paper, Figs. 9–12 (one notched boxplot per configuration) | notches (median ± 1.57·IQR/√n) show at a glance whether two medians differ |
//! | [`lines`] | throughput vs. message size (thesis Figs. 17–19), also time series | one marked line per RTI / configuration, optionally on log axes |
//!
//! [`boxplot_stats`] is the pure computation behind the boxplots, public so that tables
//! and figures can be made from the very same numbers.
//!
//! ```no_run
//! use std::path::Path;
//! use glidepath_plot::{latency_histogram_and_percentiles, lines, Scale, Series};
//!
//! let latencies_us = vec![180.0, 175.5, 210.0, 1900.0, 182.25];
//! latency_histogram_and_percentiles(Path::new("out/latency.png"), "Update latency", "µs", &latencies_us)?;
//! let sizes = [16.0, 256.0, 4096.0];
//! let nats = Series::new("NATS", sizes.iter().map(|&s| (s, 3.5e5 / (1.0 + s / 2048.0))).collect());
//! lines(Path::new("out/throughput.png"), "Throughput", "message size (bytes)", "updates/s", &[nats], Scale::Log, Scale::Log)?;
//! # Ok::<(), glidepath_plot::PlotError>(())
//! ```
//!
//! # Robustness
//! The plots are meant to be produced unattended at the end of benchmark runs, so no input
//! makes them panic: non-finite values (NaN, ±∞) are skipped, an empty input yields a
//! figure that says "no data", a single value or all-equal values yield a sensible
//! figure, and ten million values are binned in one pass without per-point allocation
//! (the percentile curve is drawn with at most 1000 points).
//!
//! # Fonts
//! Text is drawn with DejaVu Sans, embedded in the library (`fonts/`, Bitstream Vera
//! licence), through plotters' `ab_glyph` backend: no system fonts, fontconfig or freetype
//! are needed, so the figures look the same on a bare CI machine as on a desktop.
#![warn(missing_docs)]

use std::fmt;
use std::path::{Path, PathBuf};

mod boxplot;
mod histogram;
mod lines;
mod render;
mod stats;

pub use stats::{boxplot_stats, BoxStats};

/// A plot could not be written: names the file and what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlotError {
    path: PathBuf,
    message: String,
}

impl PlotError {
    pub(crate) fn new(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }

    /// The PNG file that was being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// What went wrong.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for PlotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "cannot write plot {}: {}",
            self.path.display(),
            self.message
        )
    }
}

impl std::error::Error for PlotError {}

/// One named line of a [`lines`] chart.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// `(x, y)` points, drawn in the given order.
    pub points: Vec<(f64, f64)>,
}

impl Series {
    /// A series from a label and its points.
    pub fn new(label: impl Into<String>, points: Vec<(f64, f64)>) -> Self {
        Self {
            label: label.into(),
            points,
        }
    }
}

/// Like ATM TestBed Fig. 4.3: two panels side by side in one 1400×600 PNG — left a
/// histogram of the values (x: value in `unit`, y: count), right the percentile curve
/// (x: percentile 0–100, y: value), using the exact-rank percentile
/// `j = min(max(1, ceil(i/100·n)), n)` of the sorted values.
///
/// The histogram spans `[min, P99.9]` when the P99.9 is below the maximum, so that a few
/// extreme outliers do not squeeze the body of the distribution into one bar; how many
/// values lie beyond is written on the panel, and the percentile curve (which always goes
/// up to the maximum) shows them. Non-finite values are skipped.
pub fn latency_histogram_and_percentiles(
    path: &Path,
    title: &str,
    unit: &str,
    values: &[f64],
) -> Result<(), PlotError> {
    render::plot_to_file(path, render::WIDE, |root| {
        histogram::latency_figure(root, title, unit, values)
    })
}

/// A single 1000×600 histogram: `bins` equal-width bins over `[min, max]` of the finite
/// values (`bins` is taken as at least 1 and at most 10 000).
pub fn histogram(
    path: &Path,
    title: &str,
    x_label: &str,
    values: &[f64],
    bins: usize,
) -> Result<(), PlotError> {
    render::plot_to_file(path, render::NORMAL, |root| {
        histogram::histogram_figure(root, title, x_label, values, bins)
    })
}

/// Like FFTB Figs. 9–12: one notched boxplot per group in a 1000×600 PNG (box = P25..P75,
/// whiskers to the most extreme value within 1.5 IQR, median line,
/// notch = median ± 1.57·IQR/√n, outliers as dots). See [`boxplot_stats`] for the exact
/// definitions. A group without finite values gets an empty slot labelled "no data".
pub fn notched_boxplots(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    groups: &[(String, Vec<f64>)],
) -> Result<(), PlotError> {
    render::plot_to_file(path, render::NORMAL, |root| {
        boxplot::figure(root, title, x_label, y_label, groups)
    })
}

/// How an axis of a [`lines`] chart maps values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    /// Evenly spaced values.
    Linear,
    /// Logarithmic: evenly spaced powers of ten.
    Log,
}

/// Line chart (1000×600 PNG) with markers and a legend, one line per series — throughput
/// vs. message size like thesis Figs. 17–19, or time series. `x` / `y` select each
/// axis's [`Scale`]; on a logarithmic axis, points that cannot be shown on them (≤ 0) are skipped, as are
/// non-finite points.
///
/// Markers are drawn only on series of at most 60 points (beyond that they would hide the
/// line); series of more than 20 000 points are reduced to the minimum and maximum of each
/// of 2000 consecutive runs, which keeps every spike visible.
pub fn lines(
    path: &Path,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    x: Scale,
    y: Scale,
) -> Result<(), PlotError> {
    let (log_x, log_y) = (x == Scale::Log, y == Scale::Log);
    render::plot_to_file(path, render::NORMAL, |root| {
        lines::figure(root, title, x_label, y_label, series, log_x, log_y)
    })
}

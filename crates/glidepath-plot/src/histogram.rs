//! Histograms and the percentile curve (ATM TestBed report, Fig. 4.3).
//!
//! The report shows each latency distribution twice: a histogram, where the shape of the
//! body is visible, and a percentile curve, where the tail is. Both are drawn from one
//! pass over the values (plus one sort for the percentiles), so that ten million samples
//! of a day-long run plot in about a second.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::render::{
    self, fmt_num, font, Area, DrawResult, DESC_SIZE, LABEL_SIZE, PANEL_TITLE_SIZE,
};
use crate::stats::{self, Bins};

/// At most this many points make up the percentile curve.
const CURVE_POINTS: usize = 1000;

/// Square-root rule, within 10..=100 bins.
fn auto_bins(n: usize) -> usize {
    ((n as f64).sqrt().ceil() as usize).clamp(10, 100)
}

pub(crate) fn histogram_figure(
    root: &Area,
    title: &str,
    x_label: &str,
    values: &[f64],
    bins: usize,
) -> DrawResult {
    let Some((lo, hi)) = stats::finite_min_max(values) else {
        return render::no_data(root, title);
    };
    let bins = stats::bin(values, lo, hi, bins);
    let area = render::titled(root, title)?;
    let n: u64 = bins.counts.iter().sum();
    draw_bins(&area, "", x_label, &bins, &format!("n = {n}"))
}

pub(crate) fn latency_figure(root: &Area, title: &str, unit: &str, values: &[f64]) -> DrawResult {
    let sorted = stats::finite_sorted(values);
    if sorted.is_empty() {
        return render::no_data(root, title);
    }
    let value_label = if unit.is_empty() {
        "latency".to_string()
    } else {
        format!("latency ({unit})")
    };
    let area = render::titled(root, title)?;
    let (left, right) = area.split_horizontally(area.dim_in_pixel().0 / 2);

    let n = sorted.len();
    let (min, max) = (sorted[0], sorted[n - 1]);
    let p999 = stats::percentile_of_sorted(&sorted, 99.9);
    let bins = stats::bin(&sorted, min, p999, auto_bins(n));
    let mut note = format!("n = {n}");
    if bins.above > 0 {
        note.push_str(&format!(
            "\n{} values > P99.9 not shown\n(max {})",
            bins.above,
            fmt_num(max)
        ));
    }
    draw_bins(&left, "Histogram", &value_label, &bins, &note)?;
    draw_percentiles(&right, &value_label, &sorted)
}

/// One histogram panel: bars over the bins, the count axis from zero, `note` written in
/// the upper right corner.
fn draw_bins(area: &Area, panel_title: &str, x_label: &str, bins: &Bins, note: &str) -> DrawResult {
    let max_count = bins.counts.iter().copied().max().unwrap_or(0).max(1) as f64;
    let (x0, x1) = render::padded(bins.lo, bins.hi, 0.02);
    let mut builder = ChartBuilder::on(area);
    builder
        .margin(15)
        .x_label_area_size(55)
        .y_label_area_size(80);
    if !panel_title.is_empty() {
        builder.caption(panel_title, render::font(PANEL_TITLE_SIZE));
    }
    let mut chart = builder.build_cartesian_2d(x0..x1, 0.0..max_count * 1.08)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(WHITE.mix(0.0))
        .x_desc(x_label)
        .y_desc("count")
        .axis_desc_style(font(DESC_SIZE))
        .label_style(font(LABEL_SIZE))
        .x_label_formatter(&|v| fmt_num(*v))
        // Counts are whole: few labels for small counts, so that steps are integers.
        .y_labels((max_count as usize + 1).min(10))
        .y_label_formatter(&|v| {
            if v.fract() == 0.0 {
                fmt_num(*v)
            } else {
                String::new()
            }
        })
        .draw()?;

    let width = bins.width();
    let fill = render::colour(0);
    let edge = ShapeStyle::from(&RGBColor(20, 60, 110)).stroke_width(1);
    let bars = bins
        .counts
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(k, &c)| {
            let left = bins.lo + k as f64 * width;
            [(left, 0.0), (left + width, c as f64)]
        });
    chart.draw_series(bars.clone().map(|r| Rectangle::new(r, fill.filled())))?;
    // Outlines only when bars are wide enough for them not to turn the histogram black.
    let bar_pixels =
        chart.backend_coord(&(bins.lo + width, 0.0)).0 - chart.backend_coord(&(bins.lo, 0.0)).0;
    if bar_pixels >= 4 {
        chart.draw_series(bars.map(|r| Rectangle::new(r, edge)))?;
    }
    draw_note(&chart, area, x1, max_count * 1.08, note)
}

/// Multi-line text anchored at the upper right of the plotting area.
fn draw_note<X, Y>(
    chart: &ChartContext<BitMapBackend, Cartesian2d<X, Y>>,
    area: &Area,
    x: f64,
    y: f64,
    note: &str,
) -> DrawResult
where
    X: plotters::coord::ranged1d::Ranged<ValueType = f64>,
    Y: plotters::coord::ranged1d::Ranged<ValueType = f64>,
{
    let (px, py) = chart.backend_coord(&(x, y));
    let (ax, ay) = area.get_base_pixel();
    let style = font(LABEL_SIZE).pos(Pos::new(HPos::Right, VPos::Top));
    for (k, line) in note.lines().enumerate() {
        area.draw(&Text::new(
            line.to_string(),
            (px - ax - 10, py - ay + 8 + 20 * k as i32),
            style.clone(),
        ))?;
    }
    Ok(())
}

/// The percentile curve: value of percentile i for i in 0..=100 at ≤ 1000 points,
/// with P50 / P90 / P99 / P99.9 / max written in the upper left.
fn draw_percentiles(area: &Area, value_label: &str, sorted: &[f64]) -> DrawResult {
    let n = sorted.len();
    let (min, max) = (sorted[0], sorted[n - 1]);
    let (y0, y1) = render::padded(min, max, 0.04);
    let mut chart = ChartBuilder::on(area)
        .margin(15)
        .x_label_area_size(55)
        .y_label_area_size(80)
        .caption("Percentiles", font(PANEL_TITLE_SIZE))
        .build_cartesian_2d(0.0..100.0, y0..y1)?;
    chart
        .configure_mesh()
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(RGBColor(225, 225, 225))
        .x_desc("percentile (%)")
        .y_desc(value_label)
        .axis_desc_style(font(DESC_SIZE))
        .label_style(font(LABEL_SIZE))
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_num(*v))
        .draw()?;

    let points = (0..CURVE_POINTS).map(|k| {
        let i = 100.0 * k as f64 / (CURVE_POINTS - 1) as f64;
        (i, stats::percentile_of_sorted(sorted, i))
    });
    chart.draw_series(LineSeries::new(points, render::colour(0).stroke_width(2)))?;

    let marks = [50.0, 90.0, 99.0, 99.9];
    let red = render::colour(3);
    chart.draw_series(
        marks
            .iter()
            .map(|&i| Circle::new((i, stats::percentile_of_sorted(sorted, i)), 4, red.filled())),
    )?;
    let (px, py) = chart.backend_coord(&(0.0, y1));
    let (ax, ay) = area.get_base_pixel();
    let style = font(LABEL_SIZE);
    let mut lines: Vec<String> = marks
        .iter()
        .map(|&i| {
            format!(
                "P{} = {}",
                fmt_num(i),
                fmt_num(stats::percentile_of_sorted(sorted, i))
            )
        })
        .collect();
    lines.push(format!("max = {}", fmt_num(max)));
    for (k, line) in lines.iter().enumerate() {
        area.draw(&Text::new(
            line.clone(),
            (px - ax + 12, py - ay + 10 + 20 * k as i32),
            style.clone(),
        ))?;
    }
    Ok(())
}

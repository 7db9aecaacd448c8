//! Line charts with markers and a legend: throughput vs. message size (thesis
//! Figs. 17–19) and time series.
//!
//! Each series gets its own colour *and* marker shape, so the figure stays readable when
//! printed in grey, as the thesis figures are. The legend sits to the right of the plot
//! rather than inside it, where it could hide a line whatever the data.

use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::render::{self, fmt_num, font, Area, DrawResult, DESC_SIZE, LABEL_SIZE};
use crate::Series;

/// Series with more points than this are drawn without markers.
const MAX_MARKED_POINTS: usize = 60;
/// Series with more points than this are reduced to min/max runs.
const MAX_DRAWN_POINTS: usize = 20_000;
/// Number of runs a long series is reduced to.
const RUNS: usize = 2000;
const MARKER_RADIUS: i32 = 5;

struct Cleaned {
    label: String,
    points: Vec<(f64, f64)>,
}

pub(crate) fn figure(
    root: &Area,
    title: &str,
    x_label: &str,
    y_label: &str,
    series: &[Series],
    log_x: bool,
    log_y: bool,
) -> DrawResult {
    let mut skipped = 0usize;
    let cleaned: Vec<Cleaned> = series
        .iter()
        .map(|s| {
            let points: Vec<(f64, f64)> = s
                .points
                .iter()
                .copied()
                .filter(|&(x, y)| {
                    x.is_finite() && y.is_finite() && (!log_x || x > 0.0) && (!log_y || y > 0.0)
                })
                .collect();
            skipped += s
                .points
                .iter()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .count()
                - points.len();
            Cleaned {
                label: s.label.clone(),
                points: decimate(points),
            }
        })
        .collect();
    let Some(((xl, xh), (yl, yh))) =
        cleaned
            .iter()
            .flat_map(|s| &s.points)
            .fold(None, |acc, &(x, y)| match acc {
                None => Some(((x, x), (y, y))),
                Some(((a, b), (c, d))) => Some(((x.min(a), x.max(b)), (y.min(c), y.max(d)))),
            })
    else {
        return render::no_data(root, title);
    };

    let area = render::titled(root, title)?;
    let label_style = font(LABEL_SIZE + 1.0);
    let widest = cleaned
        .iter()
        .map(|s| {
            area.estimate_text_size(&s.label, &label_style)
                .map(|(w, _)| w)
                .unwrap_or(0)
        })
        .max()
        .unwrap_or(0);
    let legend_width = if widest == 0 {
        0
    } else {
        (widest + 75).clamp(140, 320)
    };
    let (plot, legend) = area.split_horizontally(area.dim_in_pixel().0 - legend_width);

    let (x0, x1) = if log_x {
        render::padded_log(xl, xh)
    } else {
        render::padded(xl, xh, 0.03)
    };
    let (y0, y1) = if log_y {
        render::padded_log(yl, yh)
    } else {
        render::padded(yl, yh, 0.05)
    };
    let lin = |a: f64, b: f64| RangedCoordf64::from(a..b);
    let log = |a: f64, b: f64| LogCoord::from((a..b).log_scale());
    let top = match (log_x, log_y) {
        (false, false) => draw_chart(&plot, lin(x0, x1), lin(y0, y1), x_label, y_label, &cleaned)?,
        (true, false) => draw_chart(&plot, log(x0, x1), lin(y0, y1), x_label, y_label, &cleaned)?,
        (false, true) => draw_chart(&plot, lin(x0, x1), log(y0, y1), x_label, y_label, &cleaned)?,
        (true, true) => draw_chart(&plot, log(x0, x1), log(y0, y1), x_label, y_label, &cleaned)?,
    };
    if legend_width > 0 {
        draw_legend(&legend, top, &cleaned, &label_style)?;
    }
    if skipped > 0 {
        let note = format!(
            "{skipped} point{} ≤ 0 not shown on log axes",
            if skipped == 1 { "" } else { "s" }
        );
        let style = font(LABEL_SIZE - 1.0)
            .color(&RGBColor(90, 90, 90))
            .pos(Pos::new(HPos::Right, VPos::Bottom));
        let (w, h) = area.dim_in_pixel();
        area.draw(&Text::new(note, (w as i32 - 10, h as i32 - 8), style))?;
    }
    Ok(())
}

/// Draws axes, lines and markers; returns the top pixel row of the plotting area
/// (relative to `area`) for the legend to line up with.
fn draw_chart<X, Y>(
    area: &Area,
    x: X,
    y: Y,
    x_label: &str,
    y_label: &str,
    series: &[Cleaned],
) -> Result<i32, Box<dyn std::error::Error>>
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    let mut chart = ChartBuilder::on(area)
        .margin(15)
        .margin_right(25)
        .x_label_area_size(55)
        .y_label_area_size(85)
        .build_cartesian_2d(x, y)?;
    chart
        .configure_mesh()
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(RGBColor(225, 225, 225))
        .x_desc(x_label)
        .y_desc(y_label)
        .axis_desc_style(font(DESC_SIZE))
        .label_style(font(LABEL_SIZE))
        .x_label_formatter(&|v| fmt_num(*v))
        .y_label_formatter(&|v| fmt_num(*v))
        .draw()?;
    for (i, s) in series.iter().enumerate() {
        let c = render::colour(i);
        // Thick lines of many short segments render ragged: dense series get thin ones.
        let width = if s.points.len() <= 200 { 2 } else { 1 };
        chart.draw_series(LineSeries::new(
            s.points.iter().copied(),
            c.stroke_width(width),
        ))?;
        if marked(s) {
            let shape = marker(i, MARKER_RADIUS);
            chart.draw_series(
                s.points
                    .iter()
                    .map(|&p| EmptyElement::at(p) + Polygon::new(shape.clone(), c.filled())),
            )?;
        }
    }
    let top = chart.plotting_area().get_base_pixel().1 - area.get_base_pixel().1;
    Ok(top)
}

fn draw_legend(area: &Area, top: i32, series: &[Cleaned], style: &TextStyle) -> DrawResult {
    let style = style.pos(Pos::new(HPos::Left, VPos::Center));
    for (i, s) in series.iter().enumerate() {
        let c = render::colour(i);
        let y = top + 12 + 26 * i as i32;
        area.draw(&PathElement::new(vec![(4, y), (40, y)], c.stroke_width(2)))?;
        if marked(s) {
            let shape: Vec<(i32, i32)> = marker(i, MARKER_RADIUS)
                .into_iter()
                .map(|(dx, dy)| (22 + dx, y + dy))
                .collect();
            area.draw(&Polygon::new(shape, c.filled()))?;
        }
        let width = area.dim_in_pixel().0.saturating_sub(56);
        let label = render::fit_text(area, &s.label, &style, width);
        area.draw(&Text::new(label, (50, y), style.clone()))?;
    }
    Ok(())
}

/// Whether the series is drawn with markers (in the chart and the legend).
fn marked(s: &Cleaned) -> bool {
    s.points.len() <= MAX_MARKED_POINTS
}

/// Marker outline (pixel offsets) for series `i`: circle, square, triangle, diamond,
/// inverted triangle, in turn.
fn marker(i: usize, r: i32) -> Vec<(i32, i32)> {
    match i % 5 {
        0 => (0..12)
            .map(|k| {
                let a = k as f64 * std::f64::consts::TAU / 12.0;
                (
                    (r as f64 * a.cos()).round() as i32,
                    (r as f64 * a.sin()).round() as i32,
                )
            })
            .collect(),
        1 => vec![
            (-r + 1, -r + 1),
            (r - 1, -r + 1),
            (r - 1, r - 1),
            (-r + 1, r - 1),
        ],
        2 => vec![(0, -r - 1), (r, r - 1), (-r, r - 1)],
        3 => vec![(0, -r - 1), (r + 1, 0), (0, r + 1), (-r - 1, 0)],
        _ => vec![(0, r + 1), (r, -r + 1), (-r, -r + 1)],
    }
}

/// Keeps long series drawable: splits them into [`RUNS`] consecutive runs and keeps the
/// lowest and highest point of each, in their original order, so spikes stay visible.
fn decimate(points: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    if points.len() <= MAX_DRAWN_POINTS {
        return points;
    }
    let run = points.len().div_ceil(RUNS);
    let mut out = Vec::with_capacity(2 * RUNS);
    for chunk in points.chunks(run) {
        let (mut lo, mut hi) = (0, 0);
        for (k, p) in chunk.iter().enumerate() {
            if p.1 < chunk[lo].1 {
                lo = k;
            }
            if p.1 > chunk[hi].1 {
                hi = k;
            }
        }
        out.push(chunk[lo.min(hi)]);
        if lo != hi {
            out.push(chunk[lo.max(hi)]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimation_keeps_spikes_and_order() {
        let mut pts: Vec<(f64, f64)> = (0..100_000).map(|i| (i as f64, 1.0)).collect();
        pts[54_321].1 = 99.0;
        pts[7].1 = -5.0;
        let out = decimate(pts);
        assert!(out.len() <= 2 * RUNS);
        assert!(out.contains(&(54_321.0, 99.0)));
        assert!(out.contains(&(7.0, -5.0)));
        assert!(out.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn short_series_are_kept() {
        let pts = vec![(1.0, 2.0), (3.0, 4.0)];
        assert_eq!(decimate(pts.clone()), pts);
    }
}

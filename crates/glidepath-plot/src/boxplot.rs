//! Notched boxplots, one per group (FFTB paper, Figs. 9–12).
//!
//! The FFTB paper compares RTIs and configurations with notched boxplots because the
//! notches answer the question a reader asks first — "is this median really different
//! from that one?" — without a table of tests. The statistics come from
//! [`boxplot_stats`](crate::boxplot_stats); this module only draws them.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::render::{self, fmt_num, font, Area, DrawResult, DESC_SIZE, LABEL_SIZE};
use crate::stats::{self, BoxStats};

pub(crate) fn figure(
    root: &Area,
    title: &str,
    x_label: &str,
    y_label: &str,
    groups: &[(String, Vec<f64>)],
) -> DrawResult {
    let stats: Vec<(usize, Option<BoxStats>)> = groups
        .iter()
        .map(|(_, values)| {
            let sorted = stats::finite_sorted(values);
            let n = sorted.len();
            (n, (n > 0).then(|| stats::boxplot_stats_of_sorted(&sorted)))
        })
        .collect();
    // The y range covers every drawn element: whiskers, outliers and notches.
    let Some((lo, hi)) = stats
        .iter()
        .filter_map(|(_, s)| s.as_ref())
        .map(|s| {
            let lo = s
                .outliers
                .first()
                .copied()
                .unwrap_or(s.whisker_low)
                .min(s.whisker_low)
                .min(s.notch_low.max(s.q1));
            let hi = s
                .outliers
                .last()
                .copied()
                .unwrap_or(s.whisker_high)
                .max(s.whisker_high)
                .max(s.notch_high.min(s.q3));
            (lo, hi)
        })
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)))
    else {
        return render::no_data(root, title);
    };

    let area = render::titled(root, title)?;
    let k = groups.len();
    let (y0, y1) = render::padded(lo, hi, 0.05);
    let mut chart = ChartBuilder::on(&area)
        .margin(15)
        .x_label_area_size(75)
        .y_label_area_size(85)
        .build_cartesian_2d(-0.5..k as f64 - 0.5, y0..y1)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(RGBColor(225, 225, 225))
        .x_desc(x_label)
        .y_desc(y_label)
        .axis_desc_style(font(DESC_SIZE))
        .label_style(font(LABEL_SIZE))
        .y_label_formatter(&|v| fmt_num(*v))
        .draw()?;

    let slot = chart.backend_coord(&(1.0, y0)).0 - chart.backend_coord(&(0.0, y0)).0;
    let name_style = font(LABEL_SIZE + 1.0).pos(Pos::new(HPos::Center, VPos::Top));
    let count_style = font(LABEL_SIZE - 2.0)
        .color(&RGBColor(90, 90, 90))
        .pos(Pos::new(HPos::Center, VPos::Top));
    for (g, ((name, _), (n, s))) in groups.iter().zip(&stats).enumerate() {
        let x = g as f64;
        if let Some(s) = s {
            draw_box(root, &mut chart, x, s, render::colour(g))?;
        }
        // Group name and count under the axis, on the whole figure's area.
        let (px, py) = chart.backend_coord(&(x, y0));
        let name = render::fit_text(root, name, &name_style, (slot - 6).max(10) as u32);
        root.draw(&Text::new(name, (px, py + 8), name_style.clone()))?;
        let count = if *n > 0 {
            format!("n = {n}")
        } else {
            "no data".to_string()
        };
        root.draw(&Text::new(count, (px, py + 28), count_style.clone()))?;
    }
    Ok(())
}

type Chart<'a, 'b> = ChartContext<
    'a,
    BitMapBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_box(root: &Area, chart: &mut Chart, x: f64, s: &BoxStats, colour: RGBColor) -> DrawResult {
    let w = 0.3; // half width of the box, in slots
    let (left, right) = (x - w, x + w);
    let inner = w * 0.5; // half width at the notch's waist
                         // The notch may reach beyond the box (small n, wide IQR); it is drawn clipped to the
                         // box so that the outline stays a simple polygon.
    let nl = s.notch_low.max(s.q1);
    let nh = s.notch_high.min(s.q3);
    let outline = vec![
        (left, s.q1),
        (right, s.q1),
        (right, nl),
        (x + inner, s.median),
        (right, nh),
        (right, s.q3),
        (left, s.q3),
        (left, nh),
        (x - inner, s.median),
        (left, nl),
    ];
    let dark = RGBColor(40, 40, 40);
    let edge = ShapeStyle::from(&colour).stroke_width(2);
    let whisker = ShapeStyle::from(&dark).stroke_width(1);

    // Whiskers with caps.
    let cap = w * 0.5;
    for (from, to) in [(s.q1, s.whisker_low), (s.q3, s.whisker_high)] {
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x, from), (x, to)],
            whisker,
        )))?;
        chart.draw_series(std::iter::once(PathElement::new(
            vec![(x - cap, to), (x + cap, to)],
            whisker,
        )))?;
    }
    fill_notched(
        root,
        chart,
        x,
        w,
        inner,
        s.q1,
        nl,
        s.median,
        nh,
        s.q3,
        render::light(colour, 0.35),
    )?;
    // The outline as separate segments: a thick polyline would put long miter spikes on
    // the sharp corners of a flat notch.
    let corners = outline.len();
    chart.draw_series(
        (0..corners).map(|k| PathElement::new(vec![outline[k], outline[(k + 1) % corners]], edge)),
    )?;
    chart.draw_series(std::iter::once(PathElement::new(
        vec![(x - inner, s.median), (x + inner, s.median)],
        ShapeStyle::from(&dark).stroke_width(3),
    )))?;

    // Outliers: one hollow dot per distinct pixel row, so that millions of outliers cost
    // no more than a few hundred dots.
    let mut last_row = None;
    let mut dots = Vec::new();
    for &v in &s.outliers {
        let row = chart.backend_coord(&(x, v)).1;
        if last_row != Some(row) {
            last_row = Some(row);
            dots.push(v);
        }
    }
    chart.draw_series(
        dots.into_iter()
            .map(|v| Circle::new((x, v), 3, ShapeStyle::from(&dark).stroke_width(1))),
    )?;
    Ok(())
}

/// Fills the notched box row by row in pixels. (plotters' polygon fill misdraws concave
/// shapes with nearly horizontal edges, which flat notches are.)
#[allow(clippy::too_many_arguments)]
fn fill_notched(
    root: &Area,
    chart: &Chart,
    x: f64,
    w: f64,
    inner: f64,
    q1: f64,
    nl: f64,
    median: f64,
    nh: f64,
    q3: f64,
    fill: RGBColor,
) -> DrawResult {
    let at = |v: f64| chart.backend_coord(&(x, v));
    let xc = at(median).0;
    let half = (chart.backend_coord(&(x + w, median)).0 - xc) as f64;
    let waist = (chart.backend_coord(&(x + inner, median)).0 - xc) as f64;
    let (top, bottom) = (at(q3).1, at(q1).1);
    let (row_nh, row_med, row_nl) = (at(nh).1, at(median).1, at(nl).1);
    let lerp = |from: i32, to: i32, y: i32, a: f64, b: f64| {
        if to == from {
            b
        } else {
            a + (b - a) * (y - from) as f64 / (to - from) as f64
        }
    };
    for y in top..=bottom {
        let hw = if y >= row_nh && y < row_med {
            lerp(row_nh, row_med, y, half, waist)
        } else if y >= row_med && y <= row_nl {
            lerp(row_med, row_nl, y, waist, half)
        } else {
            half
        };
        let hw = hw.round() as i32;
        root.draw(&Rectangle::new(
            [(xc - hw, y), (xc + hw, y + 1)],
            fill.filled(),
        ))?;
    }
    Ok(())
}

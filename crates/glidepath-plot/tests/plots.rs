//! Every figure is written as a PNG of the right size with something drawn where the data
//! goes, for ordinary and for degenerate input.

mod common;

use std::time::Instant;

use common::{blueish, check_png, non_white, out};
use glidepath_plot::{
    histogram, latency_histogram_and_percentiles, lines, notched_boxplots, Scale, Series,
};

/// The plotting region of a single-panel figure, as fractions of the image.
const PLOT: (f64, f64, f64, f64) = (0.15, 0.15, 0.75, 0.8);

fn latencies(n: usize) -> Vec<f64> {
    // Deterministic, skewed, with a few large outliers.
    (0..n)
        .map(|i| {
            let u = ((i as u64).wrapping_mul(2_654_435_761) % 10_000) as f64 / 10_000.0;
            if i % 997 == 0 {
                5000.0 + u
            } else {
                100.0 + 200.0 * u * u
            }
        })
        .collect()
}

#[test]
fn latency_figure_has_two_filled_panels() {
    let path = out("latency.png");
    latency_histogram_and_percentiles(&path, "Latency", "µs", &latencies(50_000)).unwrap();
    let img = check_png(&path, 1400, 600);
    // Bars in the left half, the curve in the right half.
    assert!(
        img.count_in((0.05, 0.15, 0.5, 0.9), blueish) > 2000,
        "no histogram bars"
    );
    assert!(
        img.count_in((0.55, 0.15, 0.98, 0.9), blueish) > 300,
        "no percentile curve"
    );
    // The title is written at the top.
    assert!(
        img.count_in((0.3, 0.0, 0.7, 0.06), non_white) > 50,
        "no title"
    );
}

#[test]
fn histogram_has_bars() {
    let path = out("histogram.png");
    let values: Vec<f64> = (0..10_000).map(|i| (i % 100) as f64).collect();
    histogram(&path, "Sizes", "size (bytes)", &values, 20).unwrap();
    let img = check_png(&path, 1000, 600);
    // A flat distribution: bars fill most of the plot area.
    assert!(img.count_in(PLOT, blueish) > 100_000);
}

#[test]
fn boxplots_are_drawn_per_group() {
    let path = out("boxplots.png");
    let groups: Vec<(String, Vec<f64>)> = (0..3)
        .map(|g| {
            (
                format!("group {g}"),
                (0..200).map(|i| (g * 10 + i % 17) as f64).collect(),
            )
        })
        .collect();
    notched_boxplots(&path, "Boxes", "group", "value", &groups).unwrap();
    let img = check_png(&path, 1000, 600);
    assert!(img.count_in(PLOT, non_white) > 5000);
    assert!(
        img.count_in((0.0, 0.0, 1.0, 1.0), blueish) > 200,
        "first box not drawn in the first colour"
    );
}

#[test]
fn lines_linear_and_logarithmic() {
    let series = vec![
        Series::new(
            "a",
            (1..=8)
                .map(|k| (2f64.powi(k * 2), 1e6 / k as f64))
                .collect(),
        ),
        Series::new(
            "b",
            (1..=8)
                .map(|k| (2f64.powi(k * 2), 3e5 / k as f64))
                .collect(),
        ),
    ];
    for (log_x, log_y) in [(false, false), (true, false), (false, true), (true, true)] {
        let path = out(&format!("lines-{log_x}-{log_y}.png"));
        lines(
            &path,
            "Throughput",
            "message size (bytes)",
            "updates/s",
            &series,
            if log_x { Scale::Log } else { Scale::Linear },
            if log_y { Scale::Log } else { Scale::Linear },
        )
        .unwrap();
        let img = check_png(&path, 1000, 600);
        // The plotting area, left of the legend.
        let area = (0.1, 0.1, 0.84, 0.9);
        assert!(
            img.count_in(area, blueish) > 200,
            "log_x={log_x} log_y={log_y}: first line missing"
        );
        let orange = |(r, g, b): (u8, u8, u8)| r > 220 && (100..160).contains(&g) && b < 60;
        assert!(
            img.count_in(area, orange) > 200,
            "log_x={log_x} log_y={log_y}: second line missing"
        );
        // The legend names both series in their colours.
        assert!(img.count_in((0.85, 0.05, 1.0, 0.3), blueish) > 30);
        assert!(img.count_in((0.85, 0.05, 1.0, 0.3), orange) > 30);
    }
}

#[test]
fn long_time_series_is_drawn() {
    let path = out("timeseries.png");
    let series = vec![Series::new(
        "queue",
        (0..200_000)
            .map(|t| (t as f64, (t % 1000) as f64))
            .collect(),
    )];
    lines(
        &path,
        "Queue",
        "t",
        "n",
        &series,
        Scale::Linear,
        Scale::Linear,
    )
    .unwrap();
    let img = check_png(&path, 1000, 600);
    assert!(img.count_in(PLOT, blueish) > 2000);
}

/// Empty, NaN-only, single and all-equal inputs: a PNG of the right size, no panic.
#[test]
fn degenerate_inputs_give_figures() {
    let nan = f64::NAN;
    let inputs: [(&str, Vec<f64>); 6] = [
        ("empty", vec![]),
        ("nan", vec![nan, nan]),
        ("inf", vec![f64::INFINITY, f64::NEG_INFINITY]),
        ("single", vec![42.0]),
        ("equal", vec![7.0; 1000]),
        ("zeros-and-nan", vec![0.0, nan, 0.0]),
    ];
    for (name, values) in &inputs {
        let path = out(&format!("latency-{name}.png"));
        latency_histogram_and_percentiles(&path, name, "ms", values).unwrap();
        check_png(&path, 1400, 600);
        for bins in [0, 1, 10, usize::MAX] {
            let path = out(&format!("hist-{name}-{bins}.png"));
            histogram(&path, name, "x", values, bins).unwrap();
            check_png(&path, 1000, 600);
        }
        let path = out(&format!("box-{name}.png"));
        notched_boxplots(
            &path,
            name,
            "g",
            "v",
            &[
                (name.to_string(), values.clone()),
                ("other".into(), vec![1.0, 2.0]),
            ],
        )
        .unwrap();
        check_png(&path, 1000, 600);
        let path = out(&format!("lines-{name}.png"));
        let points = values
            .iter()
            .enumerate()
            .map(|(i, &v)| (i as f64, v))
            .collect();
        lines(
            &path,
            name,
            "x",
            "y",
            &[Series::new(*name, points)],
            Scale::Log,
            Scale::Log,
        )
        .unwrap();
        check_png(&path, 1000, 600);
    }
}

#[test]
fn empty_input_says_no_data() {
    let path = out("empty.png");
    histogram(&path, "", "x", &[], 10).unwrap();
    let img = check_png(&path, 1000, 600);
    // Grey text in the middle, nothing in the data colour.
    assert!(img.count_in((0.3, 0.3, 0.7, 0.7), non_white) > 100);
    assert_eq!(img.count_in((0.0, 0.0, 1.0, 1.0), blueish), 0);

    for (name, groups) in [
        ("no-groups", vec![]),
        (
            "empty-groups",
            vec![("a".to_string(), vec![]), ("b".to_string(), vec![f64::NAN])],
        ),
    ] {
        let path = out(&format!("{name}.png"));
        notched_boxplots(&path, name, "g", "v", &groups).unwrap();
        let img = check_png(&path, 1000, 600);
        assert!(img.count_in((0.3, 0.3, 0.7, 0.7), non_white) > 100);
    }
    for series in [
        vec![],
        vec![Series::new("empty", vec![])],
        vec![Series::new("negative", vec![(-1.0, -1.0)])],
    ] {
        let path = out("lines-empty.png");
        lines(&path, "", "x", "y", &series, Scale::Log, Scale::Log).unwrap();
        let img = check_png(&path, 1000, 600);
        assert!(img.count_in((0.3, 0.3, 0.7, 0.7), non_white) > 100);
    }
}

#[test]
fn boxplots_with_some_empty_groups_and_long_names() {
    let path = out("box-mixed.png");
    let groups = vec![
        (
            "a very long group name that cannot possibly fit under its box".to_string(),
            vec![1.0, 2.0, 3.0, 40.0],
        ),
        ("empty".to_string(), vec![]),
        ("one".to_string(), vec![5.0]),
    ];
    notched_boxplots(&path, "mixed", "g", "v", &groups).unwrap();
    check_png(&path, 1000, 600);
}

#[test]
fn ten_million_values_are_quick() {
    let values: Vec<f64> = (0..10_000_000u64)
        .map(|i| (i.wrapping_mul(2_654_435_761) % 100_000) as f64)
        .collect();
    let start = Instant::now();
    let path = out("hist-10m.png");
    histogram(&path, "10M", "v", &values, 100).unwrap();
    check_png(&path, 1000, 600);
    let path = out("latency-10m.png");
    latency_histogram_and_percentiles(&path, "10M", "µs", &values).unwrap();
    check_png(&path, 1400, 600);
    let path = out("box-10m.png");
    notched_boxplots(&path, "10M", "g", "v", &[("all".into(), values)]).unwrap();
    check_png(&path, 1000, 600);
    let took = start.elapsed();
    assert!(took.as_secs() < 30, "10M values took {took:?}");
}

#[test]
fn unwritable_path_names_the_file() {
    let blocker = out("not-a-dir");
    std::fs::write(&*blocker, b"x").unwrap();
    let path = blocker.join("plot.png");
    let err = histogram(&path, "t", "x", &[1.0, 2.0], 5).unwrap_err();
    assert_eq!(err.path(), path.as_path());
    let text = err.to_string();
    assert!(
        text.contains("plot.png") && text.contains("cannot"),
        "{text}"
    );
    let _: &dyn std::error::Error = &err;
}

#[test]
fn parent_directories_are_created() {
    let dir = out("nested");
    let path = dir.join("deeper").join("plot.png");
    histogram(&path, "t", "x", &[1.0, 2.0, 3.0], 3).unwrap();
    check_png(&path, 1000, 600);
}

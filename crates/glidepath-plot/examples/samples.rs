//! Renders one example of every figure, to look at them after a change:
//! `cargo run -p glidepath-plot --example samples [DIR]` (default `/tmp/plot-samples`).

use std::path::PathBuf;

use glidepath_plot::{
    histogram, latency_histogram_and_percentiles, lines, notched_boxplots, Scale, Series,
};

/// Deterministic pseudo-random numbers in [0, 1) (xorshift), so no dependency is needed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Log-normal-ish latency with a rare slow tail.
    fn latency(&mut self, median: f64) -> f64 {
        let z: f64 = (0..6).map(|_| self.next()).sum::<f64>() - 3.0;
        let tail = if self.next() < 0.002 {
            20.0 * self.next()
        } else {
            1.0
        };
        median * (0.35 * z).exp() * tail
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "/tmp/plot-samples".into()),
    );
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);

    let latencies: Vec<f64> = (0..200_000).map(|_| rng.latency(180.0)).collect();
    latency_histogram_and_percentiles(
        &dir.join("latency.png"),
        "Update latency, 2 federates, local NATS",
        "µs",
        &latencies,
    )?;

    let sizes: Vec<f64> = (0..50_000)
        .map(|_| 40.0 + 200.0 * rng.next() * rng.next())
        .collect();
    histogram(
        &dir.join("histogram.png"),
        "Encoded update size",
        "size (bytes)",
        &sizes,
        40,
    )?;

    let groups: Vec<(String, Vec<f64>)> = [
        ("in-process", 40.0),
        ("loopback TCP", 95.0),
        ("NATS", 210.0),
        ("NATS + TLS", 260.0),
    ]
    .iter()
    .map(|&(name, median)| {
        (
            name.to_string(),
            (0..400).map(|_| rng.latency(median)).collect(),
        )
    })
    .collect();
    notched_boxplots(
        &dir.join("boxplots.png"),
        "Round-trip time per transport",
        "transport",
        "round-trip time (µs)",
        &groups,
    )?;

    // Few samples per group: wide notches, as in FFTB's per-configuration runs.
    let small: Vec<(String, Vec<f64>)> = [
        "1 federate",
        "2 federates",
        "4 federates",
        "8 federates",
        "16 federates",
    ]
    .iter()
    .enumerate()
    .map(|(k, name)| {
        (
            name.to_string(),
            (0..25)
                .map(|_| 10.0 + 3.0 * k as f64 + 4.0 * rng.next() + 3.0 * rng.next())
                .collect(),
        )
    })
    .collect();
    notched_boxplots(
        &dir.join("boxplots-small-n.png"),
        "Time-advance grant latency",
        "federation size",
        "latency (ms)",
        &small,
    )?;

    let msg_sizes = [16.0, 64.0, 256.0, 1024.0, 4096.0, 16384.0, 65536.0];
    let series: Vec<Series> = [
        ("glidepath in-process", 2.0e6),
        ("glidepath NATS", 3.5e5),
        ("reference RTI", 1.2e5),
    ]
    .iter()
    .map(|&(label, peak)| {
        Series::new(
            label,
            msg_sizes
                .iter()
                .map(|&s| (s, peak / (1.0 + s / 2048.0)))
                .collect(),
        )
    })
    .collect();
    lines(
        &dir.join("throughput.png"),
        "Throughput vs. message size",
        "message size (bytes)",
        "throughput (updates/s)",
        &series,
        Scale::Log,
        Scale::Log,
    )?;

    let ts = vec![
        Series::new(
            "federate A",
            (0..3000)
                .map(|t| {
                    (
                        t as f64 / 10.0,
                        50.0 + 10.0 * (t as f64 / 100.0).sin() + 5.0 * rng.next(),
                    )
                })
                .collect(),
        ),
        Series::new(
            "federate B",
            (0..3000)
                .map(|t| {
                    (
                        t as f64 / 10.0,
                        35.0 + 8.0 * (t as f64 / 70.0).cos() + 5.0 * rng.next(),
                    )
                })
                .collect(),
        ),
    ];
    lines(
        &dir.join("timeseries.png"),
        "Queue length over time",
        "time (s)",
        "queued updates",
        &ts,
        Scale::Linear,
        Scale::Linear,
    )?;

    // Degenerate inputs, to check they still give readable figures.
    let odd = dir.join("degenerate");
    histogram(&odd.join("no-data.png"), "Empty input", "value", &[], 10)?;
    latency_histogram_and_percentiles(&odd.join("latency-single.png"), "One value", "µs", &[42.0])?;
    latency_histogram_and_percentiles(
        &odd.join("latency-equal.png"),
        "All equal (and NaN)",
        "µs",
        &[7.0, f64::NAN, 7.0, 7.0],
    )?;
    let mixed = vec![
        (
            "a very long group name that cannot possibly fit under its box".to_string(),
            vec![1.0, 2.0, 3.0, 40.0],
        ),
        ("empty".to_string(), vec![]),
        ("one value".to_string(), vec![5.0]),
    ];
    notched_boxplots(
        &odd.join("boxplots-mixed.png"),
        "Mixed groups",
        "group",
        "value",
        &mixed,
    )?;
    let with_zero = vec![Series::new(
        "with a zero",
        vec![(0.0, 1.0), (1.0, 10.0), (10.0, 100.0), (100.0, 1000.0)],
    )];
    lines(
        &odd.join("lines-log-zero.png"),
        "Log axes, one point at x = 0",
        "x",
        "y",
        &with_zero,
        Scale::Log,
        Scale::Log,
    )?;
    println!("wrote samples to {}", dir.display());
    Ok(())
}

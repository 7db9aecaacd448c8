//! The laboratory's experiments, as grids: [`Grid::quick`] (a few minutes) and
//! [`Grid::full`] (the report's ranges, hours), run by [`run`] on one [`Testbed`]
//! into a [`LabReport`].
//!
//! The experiments, after the report's sections: Tables 1–2 (the emulator's
//! configured vs measured bandwidth and round trip), Figs. 4 and 7 (time per exchange
//! against size per bandwidth, synchronised and asynchronous, no delay: formula (1)
//! fitted), two-way exchange (its β), Fig. 6 (64 B with delays: does delay add?),
//! Fig. 8 (time-only federates on either host), receive vs time-stamp order, and
//! Table 3 (one-way / two-way × full / half duplex at 1 Mbit/s, 1 KiB).
//!
//! How many exchanges a point runs: the grid's `max_count` (the report's 1000), fewer
//! when formula (1) with the report's α and β predicts the point would take longer
//! than the grid's `point_budget_s`, never fewer than `min_count`.

use std::collections::BTreeMap;

use anyhow::Context;

use crate::experiment::{ExchangeSpec, LinkConfig, Shaper, Testbed};
use crate::fit::{self, Crossing, DelayModels, Fit, Point};
use crate::lab::Duplex;
use crate::peer::{Mode, Order};

/// The report's α and β (pRTI 1516): synchronised, asynchronous, and two-way β.
pub const REPORT_SYNC: (f64, f64) = (374.0, 0.45);
/// The report's asynchronous α (bytes) and β (ms).
pub const REPORT_ASYNC: (f64, f64) = (103.0, 0.6);
/// The report's two-way β (ms), from its 128 kbit/s and 1 Mbit/s lines.
pub const REPORT_TWO_WAY_BETA_MS: f64 = 1.92;
/// The report's Table 3 (ms): one-way full, one-way half, two-way full, two-way half.
pub const REPORT_TABLE3_MS: [f64; 4] = [12.0, 14.8, 14.0, 35.9];
/// The report's Table 1: NIST Net setting (bit/s) and measured ftp rate (bit/s).
pub const REPORT_TABLE1: [(u64, f64); 6] = [
    (100_000_000, 94e6),
    (50_000_000, 48e6),
    (10_000_000, 9.6e6),
    (1_000_000, 0.96e6),
    (512_000, 503e3),
    (128_000, 126e3),
];
/// The report's Table 2: NIST Net delay setting (ms) and measured ping round trip.
pub const REPORT_TABLE2: [(f64, f64); 6] = [
    (0.0, 0.6),
    (5.0, 10.9),
    (10.0, 20.8),
    (15.0, 31.4),
    (50.0, 103.4),
    (100.0, 204.3),
];

/// What to run.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Grid {
    /// "quick" or "full".
    pub name: String,
    /// Table 1's bandwidths, bit/s.
    pub table_bandwidths_bps: Vec<u64>,
    /// Table 2's delays, ms.
    pub table_delays_ms: Vec<f64>,
    /// Figs. 4 and 7: bandwidths, bit/s.
    pub fit_bandwidths_bps: Vec<u64>,
    /// Figs. 4 and 7: payload sizes, bytes.
    pub sizes: Vec<usize>,
    /// Runs per point (the report: 10).
    pub repetitions: usize,
    /// Exchanges per run at most (the report: 1000).
    pub max_count: u64,
    /// Exchanges per run at least.
    pub min_count: u64,
    /// Seconds a run should take at most, by the report's formula.
    pub point_budget_s: f64,
    /// Bandwidths of the two-way fit (none: skipped).
    pub two_way_bandwidths_bps: Vec<u64>,
    /// Fig. 6: bandwidths and delays (64 B).
    pub delay_bandwidths_bps: Vec<u64>,
    /// Fig. 6's delays, ms.
    pub delays_ms: Vec<f64>,
    /// Fig. 8: bandwidths, and time-only federate counts per host.
    pub placement_bandwidths_bps: Vec<u64>,
    /// Fig. 8's counts of time-only federates.
    pub placement_counts: Vec<usize>,
    /// 3.4: the links (bit/s, one-way delay in ms) of the order comparison (the
    /// report: 128 kbit/s; the first link gives `receive_over_timestamp`) and of the
    /// other remedies — the report's operational link among them, 1 Mbit/s with a
    /// 200 ms round trip.
    pub remedy_links: Vec<(u64, f64)>,
}

impl Grid {
    /// A reduced grid that runs in a few minutes.
    pub fn quick() -> Grid {
        Grid {
            name: "quick".into(),
            table_bandwidths_bps: vec![1_000_000, 10_000_000],
            table_delays_ms: vec![0.0, 5.0, 10.0],
            fit_bandwidths_bps: vec![512_000, 1_000_000, 10_000_000],
            sizes: vec![64, 1024, 4096],
            repetitions: 1,
            max_count: 100,
            min_count: 20,
            point_budget_s: 1.5,
            two_way_bandwidths_bps: vec![],
            delay_bandwidths_bps: vec![1_000_000],
            delays_ms: vec![0.0, 10.0, 50.0],
            placement_bandwidths_bps: vec![1_000_000],
            placement_counts: vec![0, 2],
            remedy_links: vec![(1_000_000, 0.0), (1_000_000, 100.0)],
        }
    }

    /// The report's ranges: hours.
    pub fn full() -> Grid {
        let all = vec![
            128_000,
            512_000,
            1_000_000,
            10_000_000,
            20_000_000,
            50_000_000,
            100_000_000,
        ];
        Grid {
            name: "full".into(),
            table_bandwidths_bps: vec![
                100_000_000,
                50_000_000,
                10_000_000,
                1_000_000,
                512_000,
                128_000,
            ],
            table_delays_ms: vec![0.0, 5.0, 10.0, 15.0, 50.0, 100.0],
            fit_bandwidths_bps: all,
            sizes: vec![64, 256, 1024, 4096, 16384, 65536],
            repetitions: 10,
            max_count: 1000,
            min_count: 20,
            point_budget_s: 20.0,
            two_way_bandwidths_bps: vec![128_000, 1_000_000, 20_000_000],
            delay_bandwidths_bps: vec![128_000, 1_000_000],
            delays_ms: vec![0.0, 5.0, 10.0, 15.0, 50.0, 100.0],
            placement_bandwidths_bps: vec![128_000, 20_000_000],
            placement_counts: vec![0, 1, 2, 4],
            remedy_links: vec![(128_000, 0.0), (1_000_000, 0.0), (1_000_000, 100.0)],
        }
    }

    fn count_for(&self, link: &LinkConfig, size: usize) -> u64 {
        let per_exchange_s = link
            .bandwidth_bps
            .map_or(0.0, |b| (size as f64 + REPORT_SYNC.0) * 8.0 / b as f64)
            + link.delay_ms / 1000.0
            + REPORT_SYNC.1 / 1000.0;
        let fits = (self.point_budget_s / per_exchange_s.max(1e-6)) as u64;
        fits.clamp(self.min_count, self.max_count)
    }
}

/// One point of a sweep: its settings and what the repetitions measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Measured {
    /// The link.
    pub link: LinkConfig,
    /// The program's settings (count is the exchanges of each run).
    pub spec: ExchangeSpec,
    /// Time per exchange of each repetition, ms.
    pub per_exchange_ms: Vec<f64>,
    /// Their mean, ms.
    pub mean_ms: f64,
    /// Their sample standard deviation, ms (0 for one repetition).
    pub std_ms: f64,
    /// Mean TCP payload bytes per exchange that crossed the link from the server
    /// host, and from the remote host.
    pub link_bytes_per_exchange: [f64; 2],
}

impl Measured {
    fn point(&self) -> Option<Point> {
        Some(Point {
            bandwidth_bps: self.link.bandwidth_bps? as f64,
            size: self.spec.size as f64,
            delay_ms: self.link.delay_ms,
            time_ms: self.mean_ms,
        })
    }
}

/// A fit and its crossings.
#[derive(Clone, Debug, serde::Serialize)]
pub struct FitReport {
    /// Least squares over all points: the headline α and β.
    pub alpha_bytes: f64,
    /// β, ms.
    pub beta_ms: f64,
    /// R² of formula (1) with the least-squares α and β.
    pub r2: f64,
    /// The least-squares fit in full (residuals, largest relative error).
    pub least_squares: Fit,
    /// The report's method (mean of the crossings), judged on the same points.
    pub crossing: Option<Fit>,
    /// Each pair of bandwidths' crossing.
    pub crossings: Vec<Crossing>,
    /// The report's α and β for this program, to compare.
    pub report_alpha_bytes: Option<f64>,
    /// The report's β, ms.
    pub report_beta_ms: f64,
}

/// Everything one run of the laboratory measured.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LabReport {
    /// The grid.
    pub grid: Grid,
    /// The bandwidth emulator.
    pub shaper: Shaper,
    /// Table 1: configured bit/s → measured bit/s.
    pub table1: Vec<(u64, f64)>,
    /// Table 2: configured one-way delay (ms) → measured round trip (ms).
    pub table2: Vec<(f64, f64)>,
    /// Formula (1) fitted to the synchronised program (Fig. 4).
    pub sync: FitReport,
    /// Formula (1) fitted to the asynchronous program (Fig. 7).
    #[serde(rename = "async")]
    pub asynchronous: FitReport,
    /// Formula (1) fitted to the two-way synchronised program, if run.
    pub two_way: Option<FitReport>,
    /// Fig. 6: formula (1) against formula (2) on the delay sweep (sync α, β).
    pub delay_models: BTreeMap<String, DelayModels>,
    /// Every measured point, by experiment.
    pub points: BTreeMap<String, Vec<Measured>>,
    /// Table 3 analogue: one-way full, one-way half, two-way full, two-way half (ms).
    pub table3_ms: [f64; 4],
    /// 3.4: receive order's time per exchange over time-stamp order's (at the
    /// first of `order_bandwidths_bps`).
    pub receive_over_timestamp: f64,
    /// The remedies for a slow link against the lock-step baseline (1 KiB).
    pub remedies: Vec<RemedyResult>,
}

/// What a federation on a slow link can change (the report's 3.4, and what it
/// suggests: order, lookahead, fewer messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Remedy {
    /// Synchronised, time-stamp order, lookahead 1: one exchange per time step.
    Baseline,
    /// The data in receive order (time advance no longer waits for it).
    ReceiveOrder,
    /// A lookahead of 4 steps: the sender runs up to 4 exchanges ahead.
    Lookahead4,
    /// No time management.
    Async,
    /// No time management, messages bundled (16 KiB, 1 ms).
    AsyncBundled,
}

impl Remedy {
    /// In the order they are run and shown.
    pub const ALL: [Remedy; 5] = [
        Remedy::Baseline,
        Remedy::ReceiveOrder,
        Remedy::Lookahead4,
        Remedy::Async,
        Remedy::AsyncBundled,
    ];

    fn mode(self) -> Mode {
        match self {
            Remedy::Async | Remedy::AsyncBundled => Mode::Async,
            _ => Mode::Sync,
        }
    }

    /// How the tables name it.
    pub fn label(self) -> &'static str {
        match self {
            Remedy::Baseline => "synchronised, time-stamp order, lookahead 1 (baseline)",
            Remedy::ReceiveOrder => "synchronised, receive order",
            Remedy::Lookahead4 => "synchronised, lookahead 4",
            Remedy::Async => "asynchronous",
            Remedy::AsyncBundled => "asynchronous, bundled (16 KiB, 1 ms)",
        }
    }
}

/// One remedy's time per exchange.
#[derive(Clone, Debug, serde::Serialize)]
pub struct RemedyResult {
    /// The link's bandwidth, bit/s.
    pub bandwidth_bps: u64,
    /// The link's one-way delay, ms.
    pub delay_ms: f64,
    /// What was changed.
    pub remedy: Remedy,
    /// Time per exchange, ms.
    pub time_ms: f64,
    /// Over the baseline's at this bandwidth.
    pub over_baseline: f64,
}

/// Runs `grid` on `bed`, saying each step through `progress`.
pub fn run(bed: &mut Testbed, grid: &Grid, progress: &dyn Fn(&str)) -> anyhow::Result<LabReport> {
    let shaper = bed.shaper();
    let mut points: BTreeMap<String, Vec<Measured>> = BTreeMap::new();

    let mut table1 = Vec::new();
    for &bw in &grid.table_bandwidths_bps {
        bed.configure(link(Some(bw), 0.0, Duplex::Full))?;
        progress(&format!("table 1: {}", bandwidth_label(bw)));
        table1.push((bw, bed.measure_bandwidth(2.0)?));
    }
    let mut table2 = Vec::new();
    for &d in &grid.table_delays_ms {
        bed.configure(link(None, d, Duplex::Full))?;
        progress(&format!("table 2: delay {d} ms"));
        table2.push((d, bed.measure_rtt(20)?));
    }

    let spec = |mode, two_way, size| ExchangeSpec {
        mode,
        order: Order::Timestamp,
        two_way,
        size,
        count: 0,
        lookahead: 1,
        tickers_server: 0,
        tickers_remote: 0,
    };
    for (key, mode, two_way, bandwidths) in [
        ("sync", Mode::Sync, false, &grid.fit_bandwidths_bps),
        ("async", Mode::Async, false, &grid.fit_bandwidths_bps),
        ("two_way", Mode::Sync, true, &grid.two_way_bandwidths_bps),
    ] {
        for &bw in bandwidths {
            for &size in &grid.sizes {
                let l = link(Some(bw), 0.0, Duplex::Full);
                let m = measure(bed, grid, l, spec(mode, two_way, size), key, progress)?;
                points.entry(key.into()).or_default().push(m);
            }
        }
    }
    let fit_of = |key: &str, report: Option<(f64, f64)>, report_beta: f64| -> Option<FitReport> {
        let pts: Vec<Point> = points
            .get(key)?
            .iter()
            .filter_map(Measured::point)
            .collect();
        let ls = fit::least_squares(&pts)?;
        let (crossing, crossings) = match fit::crossings(&pts) {
            Some((f, c)) => (Some(f), c),
            None => (None, Vec::new()),
        };
        Some(FitReport {
            alpha_bytes: ls.alpha_bytes,
            beta_ms: ls.beta_ms,
            r2: ls.r2,
            least_squares: ls,
            crossing,
            crossings,
            report_alpha_bytes: report.map(|r| r.0),
            report_beta_ms: report.map_or(report_beta, |r| r.1),
        })
    };
    let sync = fit_of("sync", Some(REPORT_SYNC), 0.0)
        .context("the synchronised points fit nothing (need two bandwidths)")?;
    let asynchronous = fit_of("async", Some(REPORT_ASYNC), 0.0)
        .context("the asynchronous points fit nothing (need two bandwidths)")?;
    let two_way = fit_of("two_way", None, REPORT_TWO_WAY_BETA_MS);

    let mut delay_models = BTreeMap::new();
    for &bw in &grid.delay_bandwidths_bps {
        let key = format!("delay {}", bandwidth_label(bw));
        for &d in &grid.delays_ms {
            let m = measure(
                bed,
                grid,
                link(Some(bw), d, Duplex::Full),
                spec(Mode::Sync, false, 64),
                &key,
                progress,
            )?;
            points.entry(key.clone()).or_default().push(m);
        }
        let pts: Vec<Point> = points[&key].iter().filter_map(Measured::point).collect();
        if let Some(models) = fit::delay_models(sync.alpha_bytes, sync.beta_ms, &pts) {
            delay_models.insert(key, models);
        }
    }

    for &bw in &grid.placement_bandwidths_bps {
        for &k in &grid.placement_counts {
            for on_server in [true, false] {
                if k == 0 && !on_server {
                    continue;
                }
                let mut s = spec(Mode::Sync, false, 1024);
                if on_server {
                    s.tickers_server = k;
                } else {
                    s.tickers_remote = k;
                }
                let key = format!("placement {}", bandwidth_label(bw));
                let m = measure(
                    bed,
                    grid,
                    link(Some(bw), 0.0, Duplex::Full),
                    s,
                    &key,
                    progress,
                )?;
                points.entry(key).or_default().push(m);
            }
        }
    }

    // The remedies for a slow link, each against the lock-step baseline.
    let mut remedies = Vec::new();
    let mut order_times = [0.0; 2];
    for (i, &(bw, delay_ms)) in grid.remedy_links.iter().enumerate() {
        let l = link(Some(bw), delay_ms, Duplex::Full);
        let mut baseline_ms = 0.0;
        for remedy in Remedy::ALL {
            let mut s = spec(remedy.mode(), false, 1024);
            match remedy {
                Remedy::ReceiveOrder => s.order = Order::Receive,
                Remedy::Lookahead4 => s.lookahead = 4,
                _ => {}
            }
            if remedy == Remedy::AsyncBundled {
                bed.set_peer_env(glidepath::BUNDLE_BYTES_ENV, "16384");
            }
            let key = format!("remedies {}, {delay_ms} ms", bandwidth_label(bw));
            let m = measure(bed, grid, l, s, &key, progress);
            bed.remove_peer_env(glidepath::BUNDLE_BYTES_ENV);
            let m = m?;
            if remedy == Remedy::Baseline {
                baseline_ms = m.mean_ms;
            }
            if i == 0 {
                match remedy {
                    Remedy::Baseline => order_times[0] = m.mean_ms,
                    Remedy::ReceiveOrder => order_times[1] = m.mean_ms,
                    _ => {}
                }
            }
            remedies.push(RemedyResult {
                bandwidth_bps: bw,
                delay_ms,
                remedy,
                time_ms: m.mean_ms,
                over_baseline: m.mean_ms / baseline_ms,
            });
            points.entry(key).or_default().push(m);
        }
    }

    let mut table3_ms = [0.0; 4];
    for (i, (two_way, duplex)) in [
        (false, Duplex::Full),
        (false, Duplex::Half),
        (true, Duplex::Full),
        (true, Duplex::Half),
    ]
    .into_iter()
    .enumerate()
    {
        let m = measure(
            bed,
            grid,
            link(Some(1_000_000), 0.0, duplex),
            spec(Mode::Sync, two_way, 1024),
            "table3",
            progress,
        )?;
        table3_ms[i] = m.mean_ms;
        points.entry("table3".into()).or_default().push(m);
    }

    Ok(LabReport {
        grid: grid.clone(),
        shaper,
        table1,
        table2,
        sync,
        asynchronous,
        two_way,
        delay_models,
        points,
        table3_ms,
        receive_over_timestamp: order_times[1] / order_times[0],
        remedies,
    })
}

fn measure(
    bed: &mut Testbed,
    grid: &Grid,
    link: LinkConfig,
    mut spec: ExchangeSpec,
    what: &str,
    progress: &dyn Fn(&str),
) -> anyhow::Result<Measured> {
    bed.configure(link)?;
    spec.count = grid.count_for(&link, spec.size);
    let label = describe(what, &link, &spec);
    let mut per_exchange_ms = Vec::new();
    let mut bytes = [0.0; 2];
    let reps = grid.repetitions.max(1);
    for rep in 0..reps {
        progress(&format!("{label} (run {} of {reps})", rep + 1));
        let r = bed.exchange(&spec).with_context(|| label.clone())?;
        per_exchange_ms.push(r.per_exchange_ms);
        bytes[0] += r.down_bytes_per_exchange / reps as f64;
        bytes[1] += r.up_bytes_per_exchange / reps as f64;
    }
    let n = per_exchange_ms.len() as f64;
    let mean_ms = per_exchange_ms.iter().sum::<f64>() / n;
    let std_ms = if per_exchange_ms.len() > 1 {
        (per_exchange_ms
            .iter()
            .map(|t| (t - mean_ms).powi(2))
            .sum::<f64>()
            / (n - 1.0))
            .sqrt()
    } else {
        0.0
    };
    Ok(Measured {
        link,
        spec,
        per_exchange_ms,
        mean_ms,
        std_ms,
        link_bytes_per_exchange: bytes,
    })
}

fn link(bandwidth_bps: Option<u64>, delay_ms: f64, duplex: Duplex) -> LinkConfig {
    LinkConfig {
        bandwidth_bps,
        delay_ms,
        duplex,
    }
}

fn describe(what: &str, link: &LinkConfig, spec: &ExchangeSpec) -> String {
    format!(
        "{what}: {} {} B {:?}{}{}, {}, delay {} ms, {:?} duplex, {} exchanges",
        if spec.two_way { "two-way" } else { "one-way" },
        spec.size,
        spec.mode,
        if spec.order == Order::Receive {
            " receive-order"
        } else {
            ""
        },
        match (spec.tickers_server, spec.tickers_remote) {
            (0, 0) => String::new(),
            (s, r) => format!(" +{s} time-only on the server host, +{r} on the remote"),
        },
        link.bandwidth_bps
            .map_or("unlimited".into(), bandwidth_label),
        link.delay_ms,
        link.duplex,
        spec.count
    )
}

/// "128 kbit/s", "1 Mbit/s", "20 Mbit/s".
pub fn bandwidth_label(bps: u64) -> String {
    if bps >= 1_000_000 && bps.is_multiple_of(1_000_000) {
        format!("{} Mbit/s", bps / 1_000_000)
    } else if bps >= 1000 && bps.is_multiple_of(1000) {
        format!("{} kbit/s", bps / 1000)
    } else {
        format!("{bps} bit/s")
    }
}

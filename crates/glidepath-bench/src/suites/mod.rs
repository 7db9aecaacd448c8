//! The suites of `glidepath bench`, one module each, and the dispatch by name.
//!
//! Every suite has the same shape, `run(bench, opts, progress) -> Vec<BenchResult>`:
//! it creates its own federations through the shared [`Bench`], sweeps what its paper
//! sweeps, runs the raw peer in the same run when `opts.raw` is set, and returns one
//! result per configuration. Printing, JSON and plots happen in `output` for all.

use crate::harness::{Bench, BenchOptions, Progress};
use crate::result::BenchResult;

pub mod ddm;
pub mod fanout;
pub mod latency;
pub mod loopback;
pub mod throughput;
pub mod timeadv;

/// The suites' names, in the order `glidepath bench --help` lists them.
pub const SUITES: &[&str] = &[
    "latency",
    "throughput",
    "loopback",
    "timeadv",
    "fanout",
    "ddm",
];

/// The suites that can run federates as processes of their own (`--processes`);
/// `ddm` cannot (it counts messages and bytes, which a process boundary leaves as
/// they are).
pub const PROCESS_SUITES: &[&str] = &["latency", "throughput", "loopback", "timeadv", "fanout"];

/// Runs the suite named `suite` on a fresh setup built from `opts`.
pub fn run(
    suite: &str,
    opts: &BenchOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BenchResult>> {
    if !SUITES.contains(&suite) {
        anyhow::bail!(
            "unknown suite `{suite}`; the suites are: {}",
            SUITES.join(", ")
        );
    }
    let bench = Bench::start(opts)?;
    run_on(&bench, suite, opts, progress)
}

/// Runs the suite named `suite` on an existing setup.
pub fn run_on(
    bench: &Bench,
    suite: &str,
    opts: &BenchOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BenchResult>> {
    match suite {
        "latency" => latency::run(bench, opts, progress),
        "throughput" => throughput::run(bench, opts, progress),
        "loopback" => loopback::run(bench, opts, progress),
        "timeadv" => timeadv::run(bench, opts, progress),
        "fanout" => fanout::run(bench, opts, progress),
        "ddm" => ddm::run(bench, opts, progress),
        other => anyhow::bail!(
            "unknown suite `{other}`; the suites are: {}",
            SUITES.join(", ")
        ),
    }
}

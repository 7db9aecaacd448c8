//! `--repeat N`: the same suite run N times on one setup, each run measuring glidepath
//! and then its raw peer for every configuration, and per configuration the ratios
//! of each run and their median. On a shared 2-core machine one run moves by more
//! than a 1.2× target, so a ratio is only trusted as the median of alternating runs
//! (issue 20, item 4).

use std::io::Write;

use serde::Serialize;

use crate::result::BenchResult;

/// One configuration's ratios over the repeated runs.
#[derive(Clone, Debug, Serialize)]
pub struct RepeatedRatios {
    pub suite: String,
    pub variant: String,
    pub transport: String,
    pub size_bytes: u64,
    pub subscribers: u64,
    /// glidepath's P50 over the raw peer's, run by run.
    pub ratio_p50: Vec<f64>,
    /// glidepath's P99 over the raw peer's, run by run.
    pub ratio_p99: Vec<f64>,
    /// glidepath's rate over the raw peer's, run by run.
    pub ratio_rate: Vec<f64>,
    pub median_ratio_p50: Option<f64>,
    pub median_ratio_p99: Option<f64>,
    pub median_ratio_rate: Option<f64>,
}

/// The median of `values` (the mean of the two middle ones for an even count);
/// `None` when empty. NaNs sort last.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

fn same_configuration(a: &BenchResult, b: &BenchResult) -> bool {
    (
        &a.suite,
        &a.variant,
        &a.transport,
        a.size_bytes,
        a.subscribers,
        a.federates,
    ) == (
        &b.suite,
        &b.variant,
        &b.transport,
        b.size_bytes,
        b.subscribers,
        b.federates,
    )
}

/// Per configuration, the ratios of every run and their medians. Every run must
/// have measured the same configurations in the same order (the suites sweep
/// deterministically); a run that did not is an error.
pub fn summarize(runs: &[Vec<BenchResult>]) -> anyhow::Result<Vec<RepeatedRatios>> {
    let Some(first) = runs.first() else {
        return Ok(Vec::new());
    };
    let mut out: Vec<RepeatedRatios> = first
        .iter()
        .map(|r| RepeatedRatios {
            suite: r.suite.clone(),
            variant: r.variant.clone(),
            transport: r.transport.clone(),
            size_bytes: r.size_bytes,
            subscribers: r.subscribers,
            ratio_p50: Vec::new(),
            ratio_p99: Vec::new(),
            ratio_rate: Vec::new(),
            median_ratio_p50: None,
            median_ratio_p99: None,
            median_ratio_rate: None,
        })
        .collect();
    for (i, run) in runs.iter().enumerate() {
        if run.len() != first.len()
            || run
                .iter()
                .zip(first)
                .any(|(a, b)| !same_configuration(a, b))
        {
            anyhow::bail!(
                "run {} measured other configurations than run 1; cannot compare them",
                i + 1
            );
        }
        for (summary, r) in out.iter_mut().zip(run) {
            summary.ratio_p50.extend(r.ratio_p50);
            summary.ratio_p99.extend(r.ratio_p99);
            summary.ratio_rate.extend(r.ratio_rate);
        }
    }
    for s in &mut out {
        s.median_ratio_p50 = median(&s.ratio_p50);
        s.median_ratio_p99 = median(&s.ratio_p99);
        s.median_ratio_rate = median(&s.ratio_rate);
    }
    Ok(out)
}

/// The ratios table: each run's ratio, then the median, per configuration and figure.
pub fn write_ratios(out: &mut impl Write, ratios: &[RepeatedRatios]) -> std::io::Result<()> {
    writeln!(out, "ratios to the raw peer, run by run, and their median:")?;
    for r in ratios {
        for (figure, values, median) in [
            ("x p50", &r.ratio_p50, r.median_ratio_p50),
            ("x p99", &r.ratio_p99, r.median_ratio_p99),
            ("x rate", &r.ratio_rate, r.median_ratio_rate),
        ] {
            let Some(median) = median else { continue };
            let runs: Vec<String> = values.iter().map(|v| format!("{v:.2}")).collect();
            writeln!(
                out,
                "{:<10} {:<13} {:<6} {:>7} B {:>3} subs {:<6} median {:>6.2}   runs {}",
                r.suite,
                r.variant,
                r.transport,
                r.size_bytes,
                r.subscribers,
                figure,
                median,
                runs.join(" ")
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_even_and_empty() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), Some(2.5));
        assert_eq!(median(&[]), None);
    }
}

//! Distribution statistics in the ATM TestBed report's format (report `000_...`,
//! section 4.1): Min, P25, P50, P75, Max, Mean, corrected SD and Count, with the
//! report's exact percentile formula, plus P99 and P99.9.
//!
//! The percentile of rank `i` (0 < i ≤ 100) of `n` sorted values `v_1..v_n` is
//! `v_j` with `j = min(max(1, ceil(i/100 · n)), n)`: always one of the measured values,
//! never an interpolation. [`Recorder`] keeps integer samples as exact counts per value,
//! so even the 43 million messages of a full day take memory in proportion to the
//! number of *distinct* values, and every percentile is still exact.

use std::collections::BTreeMap;

/// The row of a statistics table.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub count: u64,
    pub min: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p99: f64,
    pub p999: f64,
    pub max: f64,
    pub mean: f64,
    /// Corrected sample standard deviation (divides by n − 1); 0 for one sample.
    pub sd: f64,
}

/// The report's index for percentile `i` of `n` values, 1-based (`i` is taken to a
/// thousandth of a percent).
pub fn percentile_rank(i: f64, n: u64) -> u64 {
    assert!(n > 0, "no percentile of nothing");
    // In integers (i to a thousandth), so 99.9 % of 1000 is exactly rank 999 and not
    // 1000 through floating-point rounding.
    let milli = (i * 1000.0).round().max(0.0) as u128;
    let j = (milli * n as u128).div_ceil(100_000);
    (j.max(1) as u64).min(n)
}

/// The report's percentile of already sorted values.
pub fn percentile_of_sorted(sorted: &[f64], i: f64) -> f64 {
    sorted[percentile_rank(i, sorted.len() as u64) as usize - 1]
}

/// Summarises samples (sorts them in place). `None` when there are none.
pub fn summarize(values: &mut [f64]) -> Option<Summary> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let sd = if values.len() > 1 {
        (values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let p = |i| percentile_of_sorted(values, i);
    Some(Summary {
        count: values.len() as u64,
        min: values[0],
        p25: p(25.0),
        p50: p(50.0),
        p75: p(75.0),
        p99: p(99.0),
        p999: p(99.9),
        max: values[values.len() - 1],
        mean,
        sd,
    })
}

/// Exact statistics of non-negative integer samples (nanoseconds, bytes, counts)
/// without keeping every sample: counts per distinct value, plus running sums.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct Recorder {
    counts: BTreeMap<u64, u64>,
    n: u64,
    sum: u128,
    sum_sq: u128,
}

impl Recorder {
    /// An empty recorder.
    pub fn new() -> Recorder {
        Recorder::default()
    }

    /// Adds one sample.
    pub fn record(&mut self, v: u64) {
        *self.counts.entry(v).or_insert(0) += 1;
        self.n += 1;
        self.sum += v as u128;
        self.sum_sq += (v as u128) * (v as u128);
    }

    /// Adds every sample of another recorder.
    pub fn merge(&mut self, other: &Recorder) {
        for (v, c) in &other.counts {
            *self.counts.entry(*v).or_insert(0) += c;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// How many samples.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The report's percentile `i` (0 < i ≤ 100); `None` when empty.
    pub fn percentile(&self, i: f64) -> Option<u64> {
        if self.n == 0 {
            return None;
        }
        let rank = percentile_rank(i, self.n);
        let mut seen = 0;
        for (v, c) in &self.counts {
            seen += c;
            if seen >= rank {
                return Some(*v);
            }
        }
        unreachable!("ranks never exceed the count")
    }

    /// The full row; `None` when empty.
    pub fn summary(&self) -> Option<Summary> {
        if self.n == 0 {
            return None;
        }
        let n = self.n as f64;
        let mean = self.sum as f64 / n;
        // Σ(v − mean)² = Σv² − n·mean², computed in exact integers before the division.
        let sd = if self.n > 1 {
            let centered = self.sum_sq as f64 - (self.sum as f64) * (self.sum as f64) / n;
            (centered.max(0.0) / (n - 1.0)).sqrt()
        } else {
            0.0
        };
        let p = |i| self.percentile(i).expect("not empty") as f64;
        Some(Summary {
            count: self.n,
            min: *self.counts.keys().next().expect("not empty") as f64,
            p25: p(25.0),
            p50: p(50.0),
            p75: p(75.0),
            p99: p(99.0),
            p999: p(99.9),
            max: *self.counts.keys().next_back().expect("not empty") as f64,
            mean,
            sd,
        })
    }

    /// A high-dynamic-range histogram of the same samples (3 significant digits), for
    /// plots and for tools that expect one.
    pub fn to_hdr(&self) -> hdrhistogram::Histogram<u64> {
        let mut h = hdrhistogram::Histogram::<u64>::new(3).expect("3 significant digits is valid");
        for (v, c) in &self.counts {
            h.record_n(*v, *c)
                .expect("auto-resizing histogram accepts any value");
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rank_follows_the_report_formula() {
        // n = 4: P25 -> ceil(1) = 1, P50 -> 2, P75 -> 3, P100 -> 4, tiny i -> 1.
        assert_eq!(percentile_rank(25.0, 4), 1);
        assert_eq!(percentile_rank(50.0, 4), 2);
        assert_eq!(percentile_rank(75.0, 4), 3);
        assert_eq!(percentile_rank(100.0, 4), 4);
        assert_eq!(percentile_rank(0.001, 4), 1);
        // n = 10: P99 -> ceil(9.9) = 10, P50 -> 5.
        assert_eq!(percentile_rank(99.0, 10), 10);
        assert_eq!(percentile_rank(50.0, 10), 5);
        assert_eq!(percentile_rank(99.9, 1000), 999);
    }

    #[test]
    fn summary_of_known_values() {
        let mut v = vec![4.0, 1.0, 3.0, 2.0, 5.0];
        let s = summarize(&mut v).unwrap();
        assert_eq!(
            (s.min, s.p25, s.p50, s.p75, s.max),
            (1.0, 2.0, 3.0, 4.0, 5.0)
        );
        assert_eq!(s.mean, 3.0);
        assert!(
            (s.sd - 2.5f64.sqrt()).abs() < 1e-12,
            "corrected SD of 1..5 is sqrt(2.5)"
        );
        assert_eq!(s.count, 5);
        assert_eq!(summarize(&mut []), None);
        assert_eq!(summarize(&mut [7.0]).unwrap().sd, 0.0);
    }

    #[test]
    fn recorder_matches_sorting_every_sample() {
        let samples: Vec<u64> = (0..10_000u64)
            .map(|i| (i * 7919) % 1013 + (i % 7) * 1000)
            .collect();
        let mut r = Recorder::new();
        for s in &samples {
            r.record(*s);
        }
        let mut f: Vec<f64> = samples.iter().map(|s| *s as f64).collect();
        let exact = summarize(&mut f).unwrap();
        let got = r.summary().unwrap();
        assert_eq!(
            (got.min, got.p25, got.p50, got.p75, got.p99, got.p999, got.max),
            (exact.min, exact.p25, exact.p50, exact.p75, exact.p99, exact.p999, exact.max)
        );
        assert_eq!(got.count, exact.count);
        assert!((got.mean - exact.mean).abs() < 1e-9);
        assert!((got.sd - exact.sd).abs() < 1e-6 * exact.sd);
        let mut halves = Recorder::new();
        let mut other = Recorder::new();
        for (i, s) in samples.iter().enumerate() {
            if i % 2 == 0 {
                halves.record(*s)
            } else {
                other.record(*s)
            }
        }
        halves.merge(&other);
        assert_eq!(halves.summary(), r.summary());
        assert_eq!(r.to_hdr().len(), 10_000);
    }

    #[test]
    fn table_4_2_lengths_shape() {
        // A distribution shaped like Table 4.2's message lengths gives the report's
        // percentiles back (193..219 around 210).
        let mut r = Recorder::new();
        for (len, count) in [
            (193u64, 1u64),
            (207, 30),
            (208, 20),
            (210, 40),
            (212, 30),
            (219, 1),
        ] {
            for _ in 0..count {
                r.record(len);
            }
        }
        let s = r.summary().unwrap();
        assert_eq!(
            (s.min, s.p25, s.p50, s.p75, s.max),
            (193.0, 207.0, 210.0, 212.0, 219.0)
        );
    }
}

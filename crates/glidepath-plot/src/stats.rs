//! The numbers behind the figures, kept apart from the drawing so they can be unit tested
//! and reused for tables.
//!
//! Percentiles use the ATM TestBed report's exact-rank definition (the same one as
//! `glidepath-bench`): the percentile `i` of `n` sorted values is the value of rank
//! `j = min(max(1, ceil(i/100·n)), n)`. It is always a measured value, never an
//! interpolation, so the box of a boxplot and the points of a percentile curve are the
//! very numbers printed in the benchmark tables.

/// The statistics of one notched boxplot, computed by [`boxplot_stats`].
#[derive(Debug, Clone, PartialEq)]
pub struct BoxStats {
    /// First quartile (P25, exact rank): bottom of the box.
    pub q1: f64,
    /// Median (P50, exact rank).
    pub median: f64,
    /// Third quartile (P75, exact rank): top of the box.
    pub q3: f64,
    /// Lower whisker: the smallest value ≥ `q1 − 1.5·IQR`.
    pub whisker_low: f64,
    /// Upper whisker: the largest value ≤ `q3 + 1.5·IQR`.
    pub whisker_high: f64,
    /// Lower end of the notch: `median − 1.57·IQR/√n`.
    pub notch_low: f64,
    /// Upper end of the notch: `median + 1.57·IQR/√n`.
    pub notch_high: f64,
    /// Values outside the whiskers, ascending.
    pub outliers: Vec<f64>,
}

/// Boxplot statistics of the finite values (NaN and ±∞ are skipped), `None` when none
/// are left.
///
/// Quartiles and median are exact-rank percentiles (see the module docs), IQR = q3 − q1,
/// whiskers reach the most extreme values within 1.5·IQR of the box, everything beyond
/// is an outlier, and the notch is `median ± 1.57·IQR/√n` (McGill, Tukey & Larsen 1978:
/// non-overlapping notches suggest different medians at roughly 95 % confidence).
pub fn boxplot_stats(values: &[f64]) -> Option<BoxStats> {
    let sorted = finite_sorted(values);
    if sorted.is_empty() {
        return None;
    }
    Some(boxplot_stats_of_sorted(&sorted))
}

/// [`boxplot_stats`] of values already finite and sorted ascending.
pub(crate) fn boxplot_stats_of_sorted(sorted: &[f64]) -> BoxStats {
    let n = sorted.len();
    let q1 = percentile_of_sorted(sorted, 25.0);
    let median = percentile_of_sorted(sorted, 50.0);
    let q3 = percentile_of_sorted(sorted, 75.0);
    let iqr = q3 - q1;
    let (fence_low, fence_high) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
    // The fences enclose [q1, q3], which are data values, so both whiskers exist.
    let lo = sorted.partition_point(|&v| v < fence_low);
    let hi = sorted.partition_point(|&v| v <= fence_high);
    let half_notch = 1.57 * iqr / (n as f64).sqrt();
    let mut outliers = Vec::with_capacity(lo + (n - hi));
    outliers.extend_from_slice(&sorted[..lo]);
    outliers.extend_from_slice(&sorted[hi..]);
    BoxStats {
        q1,
        median,
        q3,
        whisker_low: sorted[lo],
        whisker_high: sorted[hi - 1],
        notch_low: median - half_notch,
        notch_high: median + half_notch,
        outliers,
    }
}

/// The finite values, sorted ascending.
pub(crate) fn finite_sorted(values: &[f64]) -> Vec<f64> {
    let mut v: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    v.sort_unstable_by(f64::total_cmp);
    v
}

/// The 1-based rank of percentile `i` (0 ≤ i ≤ 100) among `n > 0` values:
/// `min(max(1, ceil(i/100·n)), n)`. Computed in integers with `i` taken to a thousandth,
/// so that P99.9 of 1000 values is rank 999 and not 1000 through rounding.
pub(crate) fn percentile_rank(i: f64, n: usize) -> usize {
    let milli = (i.clamp(0.0, 100.0) * 1000.0).round() as u128;
    let j = (milli * n as u128).div_ceil(100_000);
    (j.max(1) as usize).min(n)
}

/// The exact-rank percentile `i` of non-empty sorted values.
pub(crate) fn percentile_of_sorted(sorted: &[f64], i: f64) -> f64 {
    sorted[percentile_rank(i, sorted.len()) - 1]
}

/// Smallest and largest finite value, `None` when there is none.
pub(crate) fn finite_min_max(values: &[f64]) -> Option<(f64, f64)> {
    values
        .iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, &v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Equal-width bin counts over `[lo, hi]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Bins {
    pub lo: f64,
    pub hi: f64,
    pub counts: Vec<u64>,
    /// Finite values above `hi` (not counted in any bin).
    pub above: u64,
}

impl Bins {
    pub fn width(&self) -> f64 {
        (self.hi - self.lo) / self.counts.len() as f64
    }
}

/// `[lo, hi]`, widened around the value when it is a single point.
fn widen_if_flat(lo: f64, hi: f64) -> (f64, f64) {
    if hi > lo {
        (lo, hi)
    } else {
        // All values equal: a bin of ±5 % (±0.5 around zero) centred on the value.
        let d = if lo == 0.0 { 0.5 } else { lo.abs() * 0.05 };
        (lo - d, hi + d)
    }
}

/// Counts the finite values of `values` into `bins` equal-width bins over `[lo, hi]`
/// (the last bin is closed, values above `hi` go to `above`, values below `lo` are
/// ignored). One pass, no allocation beyond the counts.
pub(crate) fn bin(values: &[f64], lo: f64, hi: f64, bins: usize) -> Bins {
    let bins = bins.clamp(1, 10_000);
    let (lo, hi) = widen_if_flat(lo, hi);
    let mut counts = vec![0u64; bins];
    let mut above = 0;
    let scale = bins as f64 / (hi - lo);
    for &v in values {
        if !v.is_finite() || v < lo {
            continue;
        }
        if v > hi {
            above += 1;
            continue;
        }
        let k = ((v - lo) * scale) as usize;
        counts[k.min(bins - 1)] += 1;
    }
    Bins {
        lo,
        hi,
        counts,
        above,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_rank_percentiles() {
        assert_eq!(percentile_rank(25.0, 4), 1);
        assert_eq!(percentile_rank(50.0, 4), 2);
        assert_eq!(percentile_rank(75.0, 4), 3);
        assert_eq!(percentile_rank(100.0, 4), 4);
        assert_eq!(percentile_rank(0.0, 4), 1);
        assert_eq!(percentile_rank(99.9, 1000), 999);
        assert_eq!(percentile_rank(50.0, 1), 1);
    }

    #[test]
    fn binning_is_closed_on_the_right() {
        let b = bin(&[0.0, 1.0, 2.0, 3.0, 4.0, f64::NAN], 0.0, 4.0, 4);
        assert_eq!(b.counts, vec![1, 1, 1, 2]);
        assert_eq!(b.width(), 1.0);
        let b = bin(&[0.0, 1.0, 9.0], 0.0, 1.0, 2);
        assert_eq!((b.counts, b.above), (vec![1, 1], 1));
    }

    #[test]
    fn binning_all_equal_values_widens_the_range() {
        let b = bin(&[3.0; 5], 3.0, 3.0, 3);
        assert!(b.lo < 3.0 && b.hi > 3.0);
        assert_eq!(b.counts, vec![0, 5, 0]);
        let b = bin(&[0.0; 2], 0.0, 0.0, 0);
        assert_eq!(b.counts, vec![2]);
    }

    #[test]
    fn min_max_skips_non_finite() {
        assert_eq!(
            finite_min_max(&[f64::NAN, 2.0, f64::INFINITY, -1.0]),
            Some((-1.0, 2.0))
        );
        assert_eq!(finite_min_max(&[f64::NAN]), None);
    }
}

//! The report's cost model, formula (1):
//!
//! ```text
//! time per exchange = (size + α) · 8 / bandwidth + delay + β
//! ```
//!
//! (size and α in bytes, bandwidth in bit/s, delay one-way), fitted two ways:
//!
//! - **The report's method** ([`crossings`]): a straight line of time against size
//!   per bandwidth; two such lines cross at size −α and time β + delay, so every pair
//!   of bandwidths gives an estimate and their mean is the fit. (The report left out
//!   its noisiest bandwidth, 20 Mbit/s; we keep every pair and show each.)
//! - **Least squares** ([`least_squares`]): with `y = time − delay − size·8/bandwidth`
//!   and `x = 8/bandwidth`, formula (1) is the line `y = α·x + β`, fitted over all
//!   points at once, each weighted by 1/time², so that it minimises the *relative*
//!   errors (the report judges its fit by them, "within 3.5 %"): unweighted, the
//!   largest messages on the slowest link would decide α and β alone.
//!
//! Each fit is judged against all points ([`Fit::r2`], the largest relative error,
//! the residuals). [`delay_models`] compares formula (1) (delay and transmission
//! add) with formula (2) (the larger of the two, what the report found NIST Net did)
//! on points with a delay.

/// One measured point: the link and the message, and the time per exchange.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Point {
    /// Link bandwidth, bit/s.
    pub bandwidth_bps: f64,
    /// Payload bytes.
    pub size: f64,
    /// One-way delay, ms.
    pub delay_ms: f64,
    /// Measured time per exchange, ms.
    pub time_ms: f64,
}

/// α and β, and how well they predict the points.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fit {
    /// Bytes the RTI adds per exchange.
    pub alpha_bytes: f64,
    /// Time per exchange that is not transmission or delay, ms.
    pub beta_ms: f64,
    /// Coefficient of determination of formula (1) with these α and β over the
    /// points (1 is perfect).
    pub r2: f64,
    /// The largest |predicted − measured| / measured over the points (the report's
    /// "within 3.5 %").
    pub max_relative_error: f64,
    /// Measured minus predicted, ms, one per point in the order given.
    pub residuals_ms: Vec<f64>,
}

/// Formula (1)'s prediction, ms.
pub fn predict_ms(alpha_bytes: f64, beta_ms: f64, p: &Point) -> f64 {
    (p.size + alpha_bytes) * 8.0 / p.bandwidth_bps * 1000.0 + p.delay_ms + beta_ms
}

/// Judges `alpha_bytes` and `beta_ms` against `points`.
pub fn judge(alpha_bytes: f64, beta_ms: f64, points: &[Point]) -> Fit {
    let residuals_ms: Vec<f64> = points
        .iter()
        .map(|p| p.time_ms - predict_ms(alpha_bytes, beta_ms, p))
        .collect();
    let mean = points.iter().map(|p| p.time_ms).sum::<f64>() / points.len().max(1) as f64;
    let ss_tot: f64 = points.iter().map(|p| (p.time_ms - mean).powi(2)).sum();
    let ss_res: f64 = residuals_ms.iter().map(|r| r * r).sum();
    let max_relative_error = points
        .iter()
        .zip(&residuals_ms)
        .map(|(p, r)| (r / p.time_ms).abs())
        .fold(0.0, f64::max);
    Fit {
        alpha_bytes,
        beta_ms,
        r2: if ss_tot > 0.0 {
            1.0 - ss_res / ss_tot
        } else {
            f64::NAN
        },
        max_relative_error,
        residuals_ms,
    }
}

/// Least squares over all points; `None` with fewer than two distinct bandwidths.
pub fn least_squares(points: &[Point]) -> Option<Fit> {
    let xy: Vec<(f64, f64)> = points
        .iter()
        .map(|p| {
            let x = 8.0 / p.bandwidth_bps * 1000.0;
            (x, p.time_ms - p.delay_ms - p.size * x)
        })
        .collect();
    let weights: Vec<f64> = points
        .iter()
        .map(|p| 1.0 / p.time_ms.max(1e-9).powi(2))
        .collect();
    let (alpha, beta) = weighted_line(&xy, &weights)?;
    Some(judge(alpha, beta, points))
}

/// One pair of bandwidths' crossing: the estimate of α and β it gives.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Crossing {
    /// The two bandwidths, bit/s.
    pub bandwidths_bps: (f64, f64),
    /// −(size at the crossing).
    pub alpha_bytes: f64,
    /// Time at the crossing minus the delay, ms.
    pub beta_ms: f64,
}

/// The report's method: a line per bandwidth (all points of one bandwidth must share
/// one delay), crossed pairwise. Returns the mean fit and the crossings; `None` with
/// fewer than two bandwidths of at least two sizes.
pub fn crossings(points: &[Point]) -> Option<(Fit, Vec<Crossing>)> {
    let mut bandwidths: Vec<f64> = points.iter().map(|p| p.bandwidth_bps).collect();
    bandwidths.sort_by(f64::total_cmp);
    bandwidths.dedup();
    let lines: Vec<(f64, f64, f64, f64)> = bandwidths
        .iter()
        .filter_map(|&b| {
            let of: Vec<&Point> = points.iter().filter(|p| p.bandwidth_bps == b).collect();
            let xy: Vec<(f64, f64)> = of.iter().map(|p| (p.size, p.time_ms)).collect();
            let delay = of.iter().map(|p| p.delay_ms).sum::<f64>() / of.len() as f64;
            line(&xy).map(|(slope, intercept)| (b, slope, intercept, delay))
        })
        .collect();
    let mut found = Vec::new();
    for (i, &(b1, m1, c1, d1)) in lines.iter().enumerate() {
        for &(b2, m2, c2, d2) in &lines[i + 1..] {
            if (m1 - m2).abs() < f64::EPSILON {
                continue;
            }
            let size = (c2 - c1) / (m1 - m2);
            let time = m1 * size + c1;
            found.push(Crossing {
                bandwidths_bps: (b1, b2),
                alpha_bytes: -size,
                beta_ms: time - (d1 + d2) / 2.0,
            });
        }
    }
    if found.is_empty() {
        return None;
    }
    let n = found.len() as f64;
    let alpha = found.iter().map(|c| c.alpha_bytes).sum::<f64>() / n;
    let beta = found.iter().map(|c| c.beta_ms).sum::<f64>() / n;
    Some((judge(alpha, beta, points), found))
}

/// How formulas (1) and (2) predict points with a delay, given α and β.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DelayModels {
    /// Root-mean-square error of formula (1) (delay and transmission add), ms.
    pub rms_additive_ms: f64,
    /// Root-mean-square error of formula (2) (the larger of the two), ms.
    pub rms_max_ms: f64,
    /// Least-squares slope of measured time against delay (1: each millisecond of
    /// delay adds a millisecond per exchange).
    pub delay_slope: f64,
}

/// Compares formula (1) with formula (2) on `points`; `None` without two distinct
/// delays.
pub fn delay_models(alpha_bytes: f64, beta_ms: f64, points: &[Point]) -> Option<DelayModels> {
    let slope = line(
        &points
            .iter()
            .map(|p| (p.delay_ms, p.time_ms))
            .collect::<Vec<_>>(),
    )?
    .0;
    let rms = |f: &dyn Fn(&Point) -> f64| {
        (points
            .iter()
            .map(|p| (p.time_ms - f(p)).powi(2))
            .sum::<f64>()
            / points.len() as f64)
            .sqrt()
    };
    let transmission = |p: &Point| (p.size + alpha_bytes) * 8.0 / p.bandwidth_bps * 1000.0;
    Some(DelayModels {
        rms_additive_ms: rms(&|p| predict_ms(alpha_bytes, beta_ms, p)),
        rms_max_ms: rms(&|p| transmission(p).max(p.delay_ms) + beta_ms),
        delay_slope: slope,
    })
}

/// Least-squares line through `(x, y)`: `(slope, intercept)`; `None` with fewer
/// than two distinct x.
pub fn line(xy: &[(f64, f64)]) -> Option<(f64, f64)> {
    weighted_line(xy, &vec![1.0; xy.len()])
}

/// Weighted least-squares line through `(x, y)` (weights `w`, one per point).
pub fn weighted_line(xy: &[(f64, f64)], w: &[f64]) -> Option<(f64, f64)> {
    if xy.len() < 2 || w.len() != xy.len() {
        return None;
    }
    let sw: f64 = w.iter().sum();
    let mx = xy.iter().zip(w).map(|(p, w)| w * p.0).sum::<f64>() / sw;
    let my = xy.iter().zip(w).map(|(p, w)| w * p.1).sum::<f64>() / sw;
    let sxx: f64 = xy.iter().zip(w).map(|(p, w)| w * (p.0 - mx).powi(2)).sum();
    if sxx <= f64::EPSILON * mx.abs().max(1.0) * sw {
        return None;
    }
    let sxy: f64 = xy
        .iter()
        .zip(w)
        .map(|(p, w)| w * (p.0 - mx) * (p.1 - my))
        .sum();
    let slope = sxy / sxx;
    Some((slope, my - slope * mx))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn synthetic(alpha: f64, beta: f64, delay_ms: f64) -> Vec<Point> {
        let mut points = Vec::new();
        for bw in [128e3, 1e6, 10e6] {
            for size in [64.0, 1024.0, 4096.0, 16384.0] {
                let mut p = Point {
                    bandwidth_bps: bw,
                    size,
                    delay_ms,
                    time_ms: 0.0,
                };
                p.time_ms = predict_ms(alpha, beta, &p);
                points.push(p);
            }
        }
        points
    }

    #[test]
    fn both_methods_recover_the_reports_alpha_and_beta() {
        let points = synthetic(374.0, 0.45, 0.0);
        let ls = least_squares(&points).unwrap();
        assert!((ls.alpha_bytes - 374.0).abs() < 1e-6, "{ls:?}");
        assert!((ls.beta_ms - 0.45).abs() < 1e-9);
        assert!((ls.r2 - 1.0).abs() < 1e-12);
        let (cross, pairs) = crossings(&points).unwrap();
        assert_eq!(pairs.len(), 3);
        assert!((cross.alpha_bytes - 374.0).abs() < 1e-6);
        assert!((cross.beta_ms - 0.45).abs() < 1e-9);
    }

    #[test]
    fn crossings_subtract_the_delay() {
        let (cross, _) = crossings(&synthetic(103.0, 0.6, 10.0)).unwrap();
        assert!((cross.alpha_bytes - 103.0).abs() < 1e-6);
        assert!((cross.beta_ms - 0.6).abs() < 1e-9);
    }

    #[test]
    fn a_noisy_point_shows_in_its_residual_and_the_relative_error() {
        let mut points = synthetic(374.0, 0.45, 0.0);
        points[0].time_ms *= 1.1;
        let fit = judge(374.0, 0.45, &points);
        assert!((fit.max_relative_error - 0.1 / 1.1).abs() < 1e-9);
        assert!(fit.residuals_ms[0] > 0.0);
        assert!(fit.r2 < 1.0);
    }

    #[test]
    fn additive_delay_is_told_from_the_larger_of_the_two() {
        let points: Vec<Point> = [0.0, 10.0, 50.0, 100.0]
            .iter()
            .map(|&d| {
                let mut p = Point {
                    bandwidth_bps: 128e3,
                    size: 64.0,
                    delay_ms: d,
                    time_ms: 0.0,
                };
                p.time_ms = predict_ms(374.0, 0.45, &p);
                p
            })
            .collect();
        let m = delay_models(374.0, 0.45, &points).unwrap();
        assert!(m.rms_additive_ms < 1e-9);
        assert!(m.rms_max_ms > 1.0);
        assert!((m.delay_slope - 1.0).abs() < 1e-9);
    }

    #[test]
    fn too_few_points_fit_nothing() {
        assert!(least_squares(&[]).is_none());
        let one_bandwidth: Vec<Point> = synthetic(1.0, 1.0, 0.0)
            .into_iter()
            .filter(|p| p.bandwidth_bps == 1e6)
            .collect();
        assert!(least_squares(&one_bandwidth).is_none());
        assert!(crossings(&one_bandwidth).is_none());
    }
}

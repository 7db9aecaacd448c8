//! `boxplot_stats` against values computed by hand with the exact-rank percentile
//! `j = min(max(1, ceil(i/100·n)), n)`.

use glidepath_plot::{boxplot_stats, BoxStats};

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn eleven_values_with_one_high_outlier() {
    // n = 11: P25 → rank ceil(2.75) = 3, P50 → ceil(5.5) = 6, P75 → ceil(8.25) = 9.
    let v = [5.0, 1.0, 100.0, 2.0, 3.0, 4.0, 6.0, 7.0, 8.0, 9.0, 10.0];
    let s = boxplot_stats(&v).unwrap();
    assert_eq!((s.q1, s.median, s.q3), (3.0, 6.0, 9.0));
    // IQR = 6, fences -6 and 18: whiskers at 1 and 10, 100 is an outlier.
    assert_eq!((s.whisker_low, s.whisker_high), (1.0, 10.0));
    assert_eq!(s.outliers, vec![100.0]);
    let half = 1.57 * 6.0 / 11f64.sqrt(); // 2.8402...
    assert!(
        close(s.notch_low, 6.0 - half) && close(s.notch_high, 6.0 + half),
        "{s:?}"
    );
    assert!((half - 2.840_2).abs() < 1e-4);
}

#[test]
fn four_values() {
    // n = 4: ranks 1, 2, 3; IQR = 2, fences -2 and 6; notch 2 ± 1.57·2/2.
    let s = boxplot_stats(&[4.0, 3.0, 2.0, 1.0]).unwrap();
    assert_eq!(
        s,
        BoxStats {
            q1: 1.0,
            median: 2.0,
            q3: 3.0,
            whisker_low: 1.0,
            whisker_high: 4.0,
            notch_low: 2.0 - 1.57,
            notch_high: 2.0 + 1.57,
            outliers: vec![],
        }
    );
}

#[test]
fn low_outlier() {
    // n = 8: ranks 2, 4, 6 of [-50, 10..=16] → 10, 12, 14; IQR 4, fences 4 and 20.
    let v = [-50.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0];
    let s = boxplot_stats(&v).unwrap();
    assert_eq!((s.q1, s.median, s.q3), (10.0, 12.0, 14.0));
    assert_eq!((s.whisker_low, s.whisker_high), (10.0, 16.0));
    assert_eq!(s.outliers, vec![-50.0]);
    let half = 1.57 * 4.0 / 8f64.sqrt();
    assert!(close(s.notch_low, 12.0 - half) && close(s.notch_high, 12.0 + half));
}

#[test]
fn outliers_on_both_sides_are_sorted() {
    // n = 10 of 1..=8 plus -100 and 200: sorted [-100, 1..=8, 200];
    // ranks ceil(2.5) = 3 → 2, 5 → 4, ceil(7.5) = 8 → 7; IQR 5, fences -5.5 and 14.5.
    let v = [200.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, -100.0];
    let s = boxplot_stats(&v).unwrap();
    assert_eq!((s.q1, s.median, s.q3), (2.0, 4.0, 7.0));
    assert_eq!((s.whisker_low, s.whisker_high), (1.0, 8.0));
    assert_eq!(s.outliers, vec![-100.0, 200.0]);
}

#[test]
fn single_and_equal_values() {
    for v in [vec![5.0], vec![5.0; 17]] {
        let s = boxplot_stats(&v).unwrap();
        assert_eq!(
            (s.q1, s.median, s.q3, s.whisker_low, s.whisker_high),
            (5.0, 5.0, 5.0, 5.0, 5.0)
        );
        assert_eq!((s.notch_low, s.notch_high), (5.0, 5.0));
        assert!(s.outliers.is_empty());
    }
}

#[test]
fn non_finite_values_are_skipped() {
    let with = boxplot_stats(&[
        f64::NAN,
        4.0,
        3.0,
        f64::INFINITY,
        2.0,
        1.0,
        f64::NEG_INFINITY,
    ])
    .unwrap();
    assert_eq!(with, boxplot_stats(&[1.0, 2.0, 3.0, 4.0]).unwrap());
}

#[test]
fn nothing_to_summarise() {
    assert_eq!(boxplot_stats(&[]), None);
    assert_eq!(boxplot_stats(&[f64::NAN, f64::NAN]), None);
}

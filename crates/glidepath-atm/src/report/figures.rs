//! The PNG figures like the memorandum's Figures 4.1–4.3, and the sampling that keeps
//! a full day's distributions small enough to plot.

use std::path::{Path, PathBuf};

use glidepath::stats::Recorder;
use glidepath_plot::{Scale, Series};

use super::{ReportError, RunReport, SecondStats};

impl RunReport {
    pub(super) fn figures(&self, dir: &Path) -> Result<Vec<(PathBuf, String)>, ReportError> {
        let mut out = Vec::new();
        let label = format!("run {} ({}, {})", self.run, self.transport, self.codec);
        if !self.per_second.is_empty() {
            // Figure 4.1, every simulated second as the memorandum draws it (the plot
            // keeps each run's min and max of the points it merges into a pixel, so
            // spikes survive). (a) counts a flight from its first message to its last;
            // the distinct callsigns of each minute are drawn beside it, a coarser
            // count that includes flights that only began or ended in the minute.
            let hours = |t: f64| t / 3600.0;
            let airborne: Vec<(f64, f64)> = self
                .per_second
                .iter()
                .map(|s| (hours(f64::from(s.t)), f64::from(s.flights)))
                .collect();
            let minute: Vec<(f64, f64)> = self
                .per_second
                .iter()
                .map(|s| (hours(f64::from(s.t)), f64::from(s.callsigns_in_minute)))
                .collect();
            let path = dir.join("fig4_1a_flights.png");
            let caption = format!(
                "Figure 4.1(a)-like: flights airborne per simulated second (first to last message), {label}"
            );
            glidepath_plot::lines(
                &path,
                &caption,
                "simulated time (hours)",
                "flights",
                &[
                    Series::new("airborne (first to last message)", airborne),
                    Series::new("distinct callsigns in the minute", minute),
                ],
                Scale::Linear,
                Scale::Linear,
            )?;
            out.push((path, caption));

            let per_s: Vec<(f64, f64)> = self
                .per_second
                .iter()
                .map(|s| (hours(f64::from(s.t)), f64::from(s.messages)))
                .collect();
            let minute: Vec<(f64, f64)> = per_minute_means(&self.per_second, |s| s.messages)
                .into_iter()
                .map(|(t, v)| (hours(t), v))
                .collect();
            let path = dir.join("fig4_1b_messages.png");
            let caption = format!("Figure 4.1(b)-like: messages per simulated second, {label}");
            glidepath_plot::lines(
                &path,
                &caption,
                "simulated time (hours)",
                "messages/s",
                &[
                    Series::new("per second", per_s),
                    Series::new("one-minute mean", minute),
                ],
                Scale::Linear,
                Scale::Linear,
            )?;
            out.push((path, caption));
        }

        let lengths = expand(&self.lengths, 1.0);
        let bins = self
            .lengths
            .summary()
            .map_or(1, |s| (s.max - s.min) as usize + 1)
            .clamp(1, 200);
        let path = dir.join("fig4_2a_lengths.png");
        let caption = format!(
            "Figure 4.2(a)-like: message lengths, {label}{}",
            sample_note(&self.lengths, lengths.len(), "messages")
        );
        glidepath_plot::histogram(&path, &caption, "message length (bytes)", &lengths, bins)?;
        out.push((path, caption));

        let frequencies = expand(&self.frequencies, 1.0);
        // Bins of about 50 msg/s, like the memorandum's histogram.
        let bins = self
            .frequencies
            .summary()
            .map_or(1, |s| ((s.max - s.min) / 50.0).ceil() as usize)
            .clamp(1, 100);
        let path = dir.join("fig4_2b_frequencies.png");
        let caption = format!(
            "Figure 4.2(b)-like: messages per simulated second, {label}{}",
            sample_note(&self.frequencies, frequencies.len(), "seconds")
        );
        glidepath_plot::histogram(&path, &caption, "messages per second", &frequencies, bins)?;
        out.push((path, caption));

        let latency = expand(&self.latency_us, 1e-3);
        let path = dir.join("fig4_3_latency.png");
        let caption = format!(
            "Figure 4.3-like: latency T_S − T_P, {label}{}",
            sample_note(&self.latency_us, latency.len(), "messages")
        );
        glidepath_plot::latency_histogram_and_percentiles(&path, &caption, "ms", &latency)?;
        out.push((path, caption));
        Ok(out)
    }
}

/// At most this many values are handed to a plot for one distribution.
pub(super) const PLOT_VALUES_MAX: u64 = 1_000_000;

/// The samples of `r` as plot input, each multiplied by `scale`.
///
/// A [`Recorder`] keeps value → count, and a full day holds 43 million messages: rather
/// than materialise them all, each distinct value is repeated in proportion to its count,
/// scaled so the total stays near [`PLOT_VALUES_MAX`]. Counts are rounded *up*, so a value
/// seen even once (the minimum, the maximum, a rare outlier) still appears: the shape of
/// the histogram and of the percentile curve is kept, the tails are not lost. The values
/// come from the recorder's HDR histogram (3 significant digits: exact below 2048, within
/// 0.1 % above), which is plenty for a figure; the tables use the exact summary.
pub(super) fn expand(r: &Recorder, scale: f64) -> Vec<f64> {
    let n = r.count();
    if n == 0 {
        return Vec::new();
    }
    let hdr = r.to_hdr();
    // Clamped to the exact extremes, so the figures' min and max match the tables.
    let (lo, hi) = r.summary().map_or((0.0, 0.0), |s| (s.min, s.max));
    let keep = if n <= PLOT_VALUES_MAX {
        1.0
    } else {
        PLOT_VALUES_MAX as f64 / n as f64
    };
    let mut out = Vec::new();
    for v in hdr.iter_recorded() {
        let c = v.count_at_value();
        let copies = if keep >= 1.0 {
            c
        } else {
            ((c as f64) * keep).ceil() as u64
        };
        let value = (hdr.highest_equivalent(v.value_iterated_to()) as f64).clamp(lo, hi) * scale;
        out.extend(std::iter::repeat_n(value, copies as usize));
    }
    out
}

/// What a caption says when a figure is drawn from a sample of the recorded values
/// ([`expand`], every value kept in proportion to its count) rather than from every
/// one: ", drawn from a sample of 1,002,097 of 43,308,919 messages"; nothing when
/// every value is drawn. The tables always count every value.
pub(super) fn sample_note(r: &Recorder, drawn: usize, what: &str) -> String {
    if drawn as u64 == r.count() {
        return String::new();
    }
    format!(
        ", drawn from a sample of {} of {} {what}",
        super::tables::group(drawn as u64),
        super::tables::group(r.count())
    )
}

/// `(start second of the minute, mean of field over that minute)`.
pub(super) fn per_minute_means(
    seconds: &[SecondStats],
    field: impl Fn(&SecondStats) -> u32,
) -> Vec<(f64, f64)> {
    let mut out: Vec<(f64, f64)> = Vec::new();
    let mut current: Option<(u32, u64, u32)> = None; // minute, sum, n
    for s in seconds {
        let minute = s.t / 60;
        match &mut current {
            Some((m, sum, n)) if *m == minute => {
                *sum += u64::from(field(s));
                *n += 1;
            }
            _ => {
                if let Some((m, sum, n)) = current {
                    out.push((f64::from(m * 60), sum as f64 / f64::from(n)));
                }
                current = Some((minute, u64::from(field(s)), 1));
            }
        }
    }
    if let Some((m, sum, n)) = current {
        out.push((f64::from(m * 60), sum as f64 / f64::from(n)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expansion_keeps_tails_and_caps_size() {
        let mut r = Recorder::new();
        for _ in 0..3_000_000u64 {
            r.record(210);
        }
        r.record(193);
        r.record(219);
        let v = expand(&r, 1.0);
        assert!(v.len() as u64 <= PLOT_VALUES_MAX + 3);
        assert!(v.contains(&193.0) && v.contains(&219.0));
        let minutes = per_minute_means(
            &[
                SecondStats {
                    t: 0,
                    messages: 2,
                    ..SecondStats::default()
                },
                SecondStats {
                    t: 59,
                    messages: 4,
                    ..SecondStats::default()
                },
                SecondStats {
                    t: 60,
                    messages: 9,
                    ..SecondStats::default()
                },
            ],
            |s| s.messages,
        );
        assert_eq!(minutes, vec![(0.0, 3.0), (60.0, 9.0)]);
        assert!(sample_note(&r, v.len(), "messages").contains("of 3,000,002 messages"));
        let small = expand(&Recorder::new(), 1.0);
        assert_eq!(sample_note(&Recorder::new(), small.len(), "messages"), "");
    }
}

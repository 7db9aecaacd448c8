//! The human report: the memorandum's tables for one run (`RunReport::tables`), the
//! experiment matrix (`matrix_table`), and the number formatting they share.

use std::fmt::Write as _;

use glidepath::stats::Summary;

use super::memo::{
    MemoRow, MEMO_BYTES, MEMO_DURATIONS_1A, MEMO_DURATIONS_4A, MEMO_FREQUENCIES, MEMO_LATENCY,
    MEMO_LENGTHS, MEMO_MESSAGES, MEMO_PEAK_FLIGHTS, MEMO_PEAK_FLIGHTS_AT, MEMO_RUNS,
};
use super::{RunReport, STATES};
use crate::layout::format_rfc3339;

impl RunReport {
    /// The human report: the memorandum's Tables 4.2, 4.3, 4.5 and 4.7 for this run, with
    /// the memorandum's figures beside them, and the message counts. Markdown tables, so
    /// the same text reads well printed and in `report.md`.
    pub fn tables(&self) -> String {
        let mut o = String::new();
        let persistence = if self.persistence { "on" } else { "off" };
        let _ = writeln!(
            o,
            "# ATM TestBed report: run {} (layout {})\n",
            self.run, self.layout
        );
        let _ = writeln!(
            o,
            "transport {} · codec {} · compression {} · persistence {} · blocks as {}{} · {} simulated hours from {}\n",
            self.transport,
            self.codec,
            self.compression,
            persistence,
            self.deployment,
            self.credit
                .map_or(String::new(), |c| format!(" · credit window {c}")),
            fmt_f(self.hours, 2),
            format_rfc3339(self.day_start)
        );

        // Table 4.2
        let _ = writeln!(o, "## Table 4.2. Message statistics\n");
        stats_header(&mut o, "Message");
        stats_row(
            &mut o,
            "Lengths",
            self.lengths.summary().as_ref(),
            2,
            "bytes",
            0,
        );
        memo_row(&mut o, &MEMO_LENGTHS, 2, "bytes");
        stats_row(
            &mut o,
            "Frequencies",
            self.frequencies.summary().as_ref(),
            2,
            "msg/s",
            0,
        );
        memo_row(&mut o, &MEMO_FREQUENCIES, 2, "msg/s");
        o.push('\n');

        // Table 4.3
        let _ = writeln!(o, "## Table 4.3. Latency T_S − T_P\n");
        stats_header(&mut o, "Run");
        let latency = self.latency_ms();
        stats_row(&mut o, &self.run, latency.as_ref(), 4, "ms", 3);
        for row in &MEMO_LATENCY {
            memo_row(&mut o, row, 4, "ms");
        }
        let _ = writeln!(o, "\nglidepath measures microseconds; the memorandum's clocks counted whole milliseconds, hence its 0 ms percentiles.");
        if let Some(l) = latency {
            let _ = writeln!(
                o,
                "This run: P99 {} ms, P99.9 {} ms.",
                fmt_f(l.p99, 3),
                fmt_f(l.p999, 3)
            );
        }
        o.push('\n');

        // Table 4.5
        let _ = writeln!(o, "## Table 4.5. Durations by state, in seconds\n");
        let _ = writeln!(
            o,
            "| State | {} | 1A (memorandum) | 4A (memorandum) |",
            self.run
        );
        let _ = writeln!(o, "|---|---:|---:|---:|");
        for (i, state) in STATES.iter().enumerate() {
            let ours = self
                .state_durations_s
                .iter()
                .find(|(s, _)| s.eq_ignore_ascii_case(state))
                .map_or("—".to_string(), |(_, d)| fmt_f(*d, 3));
            let _ = writeln!(
                o,
                "| {} | {ours} | {} | {} |",
                capitalize(state),
                fmt_f(MEMO_DURATIONS_1A[i], 3),
                fmt_f(MEMO_DURATIONS_4A[i], 3)
            );
        }
        // States outside the seven (a caller's extra phase) are still shown, not dropped.
        for (state, d) in self
            .state_durations_s
            .iter()
            .filter(|(s, _)| !STATES.iter().any(|k| s.eq_ignore_ascii_case(k)))
        {
            let _ = writeln!(o, "| {state} | {} | | |", fmt_f(*d, 3));
        }
        let memo_total = |d: &[f64; 7]| d.iter().sum::<f64>();
        let _ = writeln!(
            o,
            "| **Total** | {} ({}) | {} ({}) | {} ({}) |\n",
            fmt_f(self.total_s(), 3),
            minutes(self.total_s()),
            fmt_f(memo_total(&MEMO_DURATIONS_1A), 3),
            minutes(memo_total(&MEMO_DURATIONS_1A)),
            fmt_f(memo_total(&MEMO_DURATIONS_4A), 3),
            minutes(memo_total(&MEMO_DURATIONS_4A)),
        );

        // Table 4.7
        let _ = writeln!(o, "## Table 4.7. Throughput, in Mbit/s\n");
        let _ = writeln!(o, "| Run | Bytes | Execution (s) | Throughput (Mbit/s) |");
        let _ = writeln!(o, "|---|---:|---:|---:|");
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} |",
            self.run,
            group(self.bytes),
            fmt_f(self.execution_s, 3),
            fmt_f(self.throughput_mbit_s, 3)
        );
        for m in &MEMO_RUNS {
            let _ = writeln!(
                o,
                "| {} {} (memorandum) | {} | {} | {} |",
                m.run,
                m.what,
                group(MEMO_BYTES),
                fmt_f(m.execution_s, 3),
                fmt_f(m.throughput_mbit_s, 3)
            );
        }
        o.push('\n');

        // Counts
        let _ = writeln!(o, "## Messages\n");
        let _ = writeln!(o, "| | {} | memorandum |", self.run);
        let _ = writeln!(o, "|---|---:|---:|");
        let _ = writeln!(
            o,
            "| Published | {} | {} |",
            group(self.published),
            group(MEMO_MESSAGES)
        );
        let _ = writeln!(
            o,
            "| Received | {} | {} (1A) · {} (4A) |",
            group(self.received),
            group(MEMO_MESSAGES),
            group(MEMO_RUNS[2].received)
        );
        let _ = writeln!(
            o,
            "| Lost | {} | 0 (1A) · 2 (4A) · 4,378 (3A) |",
            group(self.lost)
        );
        let _ = writeln!(o, "| Duplicated | {} | |", group(self.duplicated));
        let _ = writeln!(o, "| Malformed | {} | |", group(self.malformed));
        let peak_at = self.peak_flights_s.map_or(String::new(), |t| {
            format!(" at {}", format_rfc3339(self.day_start + i64::from(t)))
        });
        let _ = writeln!(
            o,
            "| Peak flights (airborne in one second, first to last message) | {}{peak_at} | {} at {} |",
            group(self.peak_flights),
            group(MEMO_PEAK_FLIGHTS),
            MEMO_PEAK_FLIGHTS_AT
        );
        let _ = writeln!(
            o,
            "| Most distinct callsigns reporting in one minute | {} | |",
            group(self.peak_callsigns_per_minute)
        );
        let max_rate = self
            .frequencies
            .summary()
            .map_or("—".to_string(), |s| group(s.max as u64));
        let _ = writeln!(o, "| Most messages in one second | {max_rate} | 1,779 |");
        let verdict = if self.published == 0 {
            "nothing was published"
        } else if self.received == self.published && self.lost == 0 {
            "every published message was received"
        } else {
            "received ≠ published"
        };
        let _ = writeln!(o, "\n{verdict}.");
        if !self.sources.is_empty() {
            self.sources_table(&mut o);
        }
        o
    }

    /// What every traffic block played and skipped: nothing a source holds leaves a
    /// run uncounted.
    fn sources_table(&self, o: &mut String) {
        let _ = writeln!(o, "\n## Traffic sources\n");
        let _ = writeln!(
            o,
            "| Block | Source | Window | Rows | Published | Before window | After window | Bad values | Empty callsign |"
        );
        let _ = writeln!(o, "|---|---|---|---:|---:|---:|---:|---:|---:|");
        for s in &self.sources {
            let recorded = s.path.is_some();
            let n = |v: u64| {
                if recorded {
                    group(v)
                } else {
                    "—".to_string()
                }
            };
            let window = if s.window_s.0 < s.window_s.1 {
                format!(
                    "{} + {}",
                    format_rfc3339(self.day_start + i64::from(s.window_s.0)),
                    span(u64::from(s.window_s.1 - s.window_s.0))
                )
            } else {
                "empty (outside the run)".to_string()
            };
            let _ = writeln!(
                o,
                "| {} | {} | {window} | {} | {} | {} | {} | {} | {} |",
                s.block,
                s.path
                    .as_ref()
                    .map_or(s.kind.clone(), |p| format!("{} `{p}`", s.kind)),
                group(s.rows),
                group(s.published),
                n(s.before_window),
                n(s.after_window),
                n(s.bad_rows),
                n(s.empty_callsigns),
            );
        }
        for s in self.sources.iter().filter(|s| s.path.is_some()) {
            let mut notes = Vec::new();
            if let (Some(first), Some(last)) = (s.first_ms, s.last_ms) {
                notes.push(format!(
                    "rows from {} to {}",
                    format_rfc3339(first.div_euclid(1000)),
                    format_rfc3339(last.div_euclid(1000))
                ));
            }
            if let Some(r) = &s.reading {
                notes.push(r.clone());
            }
            if s.bad_rows > 0 {
                notes.push(format!(
                    "skipped: {}{}",
                    s.bad_examples.join("; "),
                    if s.bad_rows > s.bad_examples.len() as u64 {
                        format!("; … ({} in all)", group(s.bad_rows))
                    } else {
                        String::new()
                    }
                ));
            }
            if s.empty_callsigns > 0 {
                notes.push(format!(
                    "{} without a callsign published under their icao24",
                    rows(s.empty_callsigns)
                ));
            }
            let _ = writeln!(o, "\n- {}: {}.", s.block, notes.join("; "));
        }
    }
}

/// `1 row`, `2,359 rows`.
pub(crate) fn rows(n: u64) -> String {
    if n == 1 {
        "1 row".to_string()
    } else {
        format!("{} rows", group(n))
    }
}

/// A number of seconds as `24 h`, `2 h 30 min`, `10 min`, `90 s`.
pub(crate) fn span(s: u64) -> String {
    let (h, m, sec) = (s / 3600, s % 3600 / 60, s % 60);
    let mut parts = Vec::new();
    if h > 0 {
        parts.push(format!("{h} h"));
    }
    if m > 0 {
        parts.push(format!("{m} min"));
    }
    if sec > 0 || parts.is_empty() {
        parts.push(format!("{sec} s"));
    }
    parts.join(" ")
}

/// The experiment matrix (Tables 3.2–3.3 re-run with glidepath's backends) side by side,
/// with the memorandum's runs 1A (in-memory), 2A (ActiveMQ with compression and
/// persistence) and 4A (NATS) underneath. `vs 1A` is the memorandum's 1A execution time
/// divided by the run's: above 1 means faster than the memorandum's in-memory baseline
/// (meaningful for full-day runs; a shorter `--hours` run plays less traffic).
pub fn matrix_table(reports: &[RunReport]) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "| Run | Transport | Codec | Compression | Persistence | Credit | Hours | Execution (s) | vs 1A | Throughput (Mbit/s) | Latency P50 (ms) | Latency mean (ms) | Latency max (ms) | Published | Received | Lost |");
    let _ = writeln!(
        o,
        "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    for r in reports {
        let l = r.latency_ms();
        let cell =
            |f: fn(&Summary) -> f64| l.as_ref().map_or("—".to_string(), |s| fmt_f(f(s), 3));
        let speedup = if r.execution_s > 0.0 {
            format!("{}×", fmt_f(MEMO_RUNS[0].execution_s / r.execution_s, 1))
        } else {
            "—".to_string()
        };
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} | {} | {} | {speedup} | {} | {} | {} | {} | {} | {} | {} |",
            r.run,
            r.transport,
            r.codec,
            r.compression,
            if r.persistence { "on" } else { "off" },
            r.credit.map_or("—".to_string(), group),
            fmt_f(r.hours, 2),
            fmt_f(r.execution_s, 3),
            fmt_f(r.throughput_mbit_s, 3),
            cell(|s| s.p50),
            // Four places, as the memorandum's rows: 1A's mean is 0.0113 ms.
            l.as_ref().map_or("—".to_string(), |s| fmt_f(s.mean, 4)),
            cell(|s| s.max),
            group(r.published),
            group(r.received),
            group(r.lost),
        );
    }
    for m in &MEMO_RUNS {
        let _ = writeln!(
            o,
            "| {} (memorandum) | {} | SNDEM JSON | {} | {} | — | 24 | {} | {}× | {} | {} | {} | {} | {} | {} | {} |",
            m.run,
            m.what,
            if m.run == "2A" { "on" } else { "off" },
            if m.run == "2A" { "on" } else { "off" },
            fmt_f(m.execution_s, 3),
            fmt_f(MEMO_RUNS[0].execution_s / m.execution_s, 1),
            fmt_f(m.throughput_mbit_s, 3),
            fmt_f(m.latency_ms[0], 0),
            trim_zeros(&fmt_f(m.latency_ms[1], 4)),
            fmt_f(m.latency_ms[2], 0),
            group(MEMO_MESSAGES),
            group(m.received),
            group(MEMO_MESSAGES - m.received),
        );
    }
    o
}

pub(super) fn stats_header(o: &mut String, first: &str) {
    let _ = writeln!(
        o,
        "| {first} | Min | P25 | P50 | P75 | Max | Mean | SD | Unit | Count |"
    );
    let _ = writeln!(o, "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|");
}

/// A row of our numbers: percentiles with `p_decimals` (0 for whole bytes or messages),
/// mean and SD with `decimals`.
pub(super) fn stats_row(
    o: &mut String,
    label: &str,
    s: Option<&Summary>,
    decimals: usize,
    unit: &str,
    p_decimals: usize,
) {
    match s {
        Some(s) => {
            let p = |v: f64| fmt_f(v, p_decimals);
            let _ = writeln!(
                o,
                "| {label} | {} | {} | {} | {} | {} | {} | {} | {unit} | {} |",
                p(s.min),
                p(s.p25),
                p(s.p50),
                p(s.p75),
                p(s.max),
                fmt_f(s.mean, decimals),
                fmt_f(s.sd, decimals),
                group(s.count)
            );
        }
        None => {
            let _ = writeln!(o, "| {label} | — | — | — | — | — | — | — | {unit} | 0 |");
        }
    }
}

pub(super) fn memo_row(o: &mut String, row: &MemoRow, decimals: usize, unit: &str) {
    let [min, p25, p50, p75, max, mean, sd] = row.cells;
    let p = |v: f64| fmt_f(v, 0);
    // The memorandum's own precision: it printed 0.0113 and 3.144, so trailing digits are
    // trimmed rather than padded.
    let m = |v: f64| trim_zeros(&fmt_f(v, decimals));
    let _ = writeln!(
        o,
        "| *{}* | {} | {} | {} | {} | {} | {} | {} | {unit} | {} |",
        row.label,
        p(min),
        p(p25),
        p(p50),
        p(p75),
        p(max),
        m(mean),
        m(sd),
        group(row.count)
    );
}

pub(super) fn fmt_f(v: f64, decimals: usize) -> String {
    if !v.is_finite() {
        return "—".to_string();
    }
    let s = format!("{v:.decimals$}");
    // Thousands separators on the integer part, as the memorandum prints counts.
    let (sign, rest) = s.strip_prefix('-').map_or(("", s.as_str()), |r| ("-", r));
    let (int, frac) = rest
        .split_once('.')
        .map_or((rest, None), |(i, f)| (i, Some(f)));
    let grouped = group_digits(int);
    match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    }
}

pub(super) fn trim_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}

pub(crate) fn group(v: u64) -> String {
    group_digits(&v.to_string())
}

pub(super) fn group_digits(int: &str) -> String {
    let mut out = String::with_capacity(int.len() + int.len() / 3);
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

pub(super) fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
}

/// `795.7` → `13'16"`, the memorandum's Table 4.5 style.
pub(super) fn minutes(s: f64) -> String {
    if !s.is_finite() || s < 0.0 {
        return "—".to_string();
    }
    let whole = s.round() as u64;
    format!("{}'{:02}\"", whole / 60, whole % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formatting_helpers() {
        assert_eq!(fmt_f(43_308_919.0, 0), "43,308,919");
        assert_eq!(fmt_f(-1234.5, 1), "-1,234.5");
        assert_eq!(fmt_f(0.0113, 4), "0.0113");
        assert_eq!(group(999), "999");
        assert_eq!(group(1000), "1,000");
        assert_eq!(minutes(795.700), "13'16\"");
        assert_eq!(minutes(4891.338), "81'31\"");
        assert_eq!(trim_zeros("3.1440"), "3.144");
        assert_eq!(span(86_400), "24 h");
        assert_eq!(span(9_000), "2 h 30 min");
        assert_eq!(span(600), "10 min");
        assert_eq!(span(90), "1 min 30 s");
        assert_eq!(span(0), "0 s");
    }
}

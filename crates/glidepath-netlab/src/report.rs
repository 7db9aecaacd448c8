//! The laboratory's results as the report shows them: markdown tables side by side
//! with the report's numbers ([`markdown`]), the figures as PNG ([`figures`]), and
//! the whole [`LabReport`] as JSON ([`json`]).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use glidepath_plot::{lines, Scale, Series};

use crate::grid::{
    bandwidth_label, FitReport, LabReport, Measured, REPORT_TABLE1, REPORT_TABLE2, REPORT_TABLE3_MS,
};

/// The report as JSON: the acceptance keys `sync` and `async` (each with
/// `alpha_bytes`, `beta_ms`, `r2`) and everything else measured.
pub fn json(report: &LabReport) -> anyhow::Result<String> {
    Ok(serde_json::to_string_pretty(report)?)
}

/// The tables, in markdown, each next to the report's figures.
pub fn markdown(r: &LabReport) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "## glidepath netlab ({} grid, shaper: {:?})\n",
        r.grid.name, r.shaper
    );
    let _ = writeln!(
        s,
        "### Table 1: bandwidth, configured and measured (bulk TCP through the link)\n"
    );
    let _ = writeln!(
        s,
        "| configured | measured | ratio | report's NIST Net ratio |"
    );
    let _ = writeln!(s, "|---|---|---|---|");
    for &(bw, got) in &r.table1 {
        let theirs = REPORT_TABLE1
            .iter()
            .find(|(b, _)| *b == bw)
            .map_or("—".to_string(), |(b, m)| format!("{:.3}", m / *b as f64));
        let _ = writeln!(
            s,
            "| {} | {:.3} Mbit/s | {:.3} | {theirs} |",
            bandwidth_label(bw),
            got / 1e6,
            got / bw as f64
        );
    }
    let _ = writeln!(
        s,
        "\n### Table 2: one-way delay setting and measured round trip (1-byte TCP echo)\n"
    );
    let _ = writeln!(
        s,
        "| delay setting | round trip | report's ping round trip |"
    );
    let _ = writeln!(s, "|---|---|---|");
    for &(d, rtt) in &r.table2 {
        let theirs = REPORT_TABLE2
            .iter()
            .find(|(x, _)| *x == d)
            .map_or("—".to_string(), |(_, m)| format!("{m} ms"));
        let _ = writeln!(s, "| {d} ms | {rtt:.2} ms | {theirs} |");
    }
    let _ = writeln!(s, "\n### Formula (1) fitted: α and β\n");
    let _ = writeln!(s, "| program | α (least squares) | β | R² | largest error | α, β by crossings (R²) | report (pRTI 1516) |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    let mut fit_row = |name: &str, f: &FitReport| {
        let crossing = f.crossing.as_ref().map_or("—".into(), |c| {
            format!("{:.0} B, {:.3} ms ({:.4})", c.alpha_bytes, c.beta_ms, c.r2)
        });
        let theirs = match f.report_alpha_bytes {
            Some(a) => format!("{a:.0} B, {} ms", f.report_beta_ms),
            None => format!("β {} ms", f.report_beta_ms),
        };
        let _ = writeln!(
            s,
            "| {name} | {:.0} B | {:.3} ms | {:.4} | {:.1} % | {crossing} | {theirs} |",
            f.alpha_bytes,
            f.beta_ms,
            f.r2,
            f.least_squares.max_relative_error * 100.0
        );
    };
    fit_row("synchronised", &r.sync);
    fit_row("asynchronous", &r.asynchronous);
    if let Some(t) = &r.two_way {
        fit_row("two-way synchronised", t);
    }
    let _ = writeln!(s, "\n### The points (Figs. 4 and 7; two-way when run)\n");
    let _ = writeln!(s, "Bytes are TCP payload bytes per exchange that crossed the link while the exchange ran: from the server host (the data to the remote receiver, the sender's time statuses), less the payload, and from the remote host (its time statuses and acknowledgements).\n");
    let _ = writeln!(s, "| program | bandwidth | size | time per exchange | formula (1) | bytes down − size | bytes up |");
    let _ = writeln!(s, "|---|---|---|---|---|---|---|");
    for (key, f) in [
        ("sync", Some(&r.sync)),
        ("async", Some(&r.asynchronous)),
        ("two_way", r.two_way.as_ref()),
    ] {
        let Some(f) = f else { continue };
        for m in r.points.get(key).into_iter().flatten() {
            let Some(bw) = m.link.bandwidth_bps else {
                continue;
            };
            let model = (m.spec.size as f64 + f.alpha_bytes) * 8.0 / bw as f64 * 1000.0
                + m.link.delay_ms
                + f.beta_ms;
            let _ = writeln!(
                s,
                "| {key} | {} | {} B | {} | {model:.2} ms | {:.0} | {:.0} |",
                bandwidth_label(bw),
                m.spec.size,
                mean_spread(m),
                m.link_bytes_per_exchange[0] - m.spec.size as f64,
                m.link_bytes_per_exchange[1]
            );
        }
    }
    if !r.delay_models.is_empty() {
        let _ = writeln!(s, "\n### Fig. 6: does delay add? (64 B, synchronised)\n");
        let _ = writeln!(s, "| link | slope of time against delay | RMS error, formula (1) | RMS error, formula (2) |");
        let _ = writeln!(s, "|---|---|---|---|");
        for (key, m) in &r.delay_models {
            let _ = writeln!(
                s,
                "| {key} | {:.3} | {:.3} ms | {:.3} ms |",
                m.delay_slope, m.rms_additive_ms, m.rms_max_ms
            );
        }
    }
    let _ = writeln!(
        s,
        "\n### Fig. 8: time-only federates and their placement (1 KiB, synchronised)\n"
    );
    let _ = writeln!(s, "| link | time-only federates | on | time per exchange |");
    let _ = writeln!(s, "|---|---|---|---|");
    for (key, ms) in r.points.iter().filter(|(k, _)| k.starts_with("placement")) {
        for m in ms {
            let (k, on) = match (m.spec.tickers_server, m.spec.tickers_remote) {
                (0, 0) => (0, "—"),
                (k, 0) => (k, "server host"),
                (_, k) => (k, "remote host"),
            };
            let _ = writeln!(
                s,
                "| {} | {k} | {on} | {} |",
                &key["placement ".len()..],
                mean_spread(m)
            );
        }
    }
    let _ = writeln!(
        s,
        "\n### Order (1 KiB, {}): receive order takes {:.3} × the time of time-stamp order (report: about 0.95)\n",
        bandwidth_label(r.grid.remedy_links.first().map_or(0, |l| l.0)),
        r.receive_over_timestamp
    );
    let _ = writeln!(s, "### Remedies for a slow link (1 KiB, one-way)\n");
    let _ = writeln!(s, "| link | remedy | time per exchange | × baseline |");
    let _ = writeln!(s, "|---|---|---|---|");
    for m in &r.remedies {
        let _ = writeln!(
            s,
            "| {}, {} ms one-way | {} | {:.2} ms | {:.3} |",
            bandwidth_label(m.bandwidth_bps),
            m.delay_ms,
            m.remedy.label(),
            m.time_ms,
            m.over_baseline
        );
    }
    let _ = writeln!(s);
    let _ = writeln!(s, "### Table 3: 1 Mbit/s, 1 KiB, time per exchange\n");
    let _ = writeln!(
        s,
        "| exchange | full duplex | half duplex | report full | report half |"
    );
    let _ = writeln!(s, "|---|---|---|---|---|");
    let t = r.table3_ms;
    let p = REPORT_TABLE3_MS;
    let _ = writeln!(
        s,
        "| one-way | {:.2} ms | {:.2} ms | {} ms | {} ms |",
        t[0], t[1], p[0], p[1]
    );
    let _ = writeln!(
        s,
        "| two-way | {:.2} ms | {:.2} ms | {} ms | {} ms |",
        t[2], t[3], p[2], p[3]
    );
    s
}

fn mean_spread(m: &Measured) -> String {
    if m.per_exchange_ms.len() > 1 {
        format!("{:.2} ± {:.2} ms", m.mean_ms, m.std_ms)
    } else {
        format!("{:.2} ms", m.mean_ms)
    }
}

/// Writes Figs. 4–8 as PNG into `dir`; returns the files written.
pub fn figures(r: &LabReport, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let per_bandwidth = |key: &str| -> Vec<Series> {
        let mut series: Vec<Series> = Vec::new();
        for m in r.points.get(key).into_iter().flatten() {
            let label = m
                .link
                .bandwidth_bps
                .map_or("unlimited".into(), bandwidth_label);
            let point = (m.spec.size as f64, m.mean_ms);
            match series.iter_mut().find(|s| s.label == label) {
                Some(s) => s.points.push(point),
                None => series.push(Series::new(label, vec![point])),
            }
        }
        series
    };
    for (file, key, title) in [
        (
            "fig4-sync.png",
            "sync",
            "Fig. 4 analogue: synchronised, time per exchange against size",
        ),
        (
            "fig7-async.png",
            "async",
            "Fig. 7 analogue: asynchronous, time per exchange against size",
        ),
        (
            "two-way.png",
            "two_way",
            "Two-way synchronised, time per exchange against size",
        ),
    ] {
        let series = per_bandwidth(key);
        if series.is_empty() {
            continue;
        }
        let path = dir.join(file);
        // Linear axes, as the report's: each bandwidth a straight line, crossing the
        // others near (−α, β).
        lines(
            &path,
            title,
            "message size (bytes)",
            "time per exchange (ms)",
            &series,
            Scale::Linear,
            Scale::Linear,
        )?;
        written.push(path);
    }
    // Fig. 5: against bandwidth, measured and formula (1), per size.
    let mut fig5 = Vec::new();
    for &size in &r.grid.sizes {
        let measured: Vec<(f64, f64)> = r.points["sync"]
            .iter()
            .filter(|m| m.spec.size == size)
            .filter_map(|m| Some((m.link.bandwidth_bps? as f64 / 1e6, m.mean_ms)))
            .collect();
        let model = measured
            .iter()
            .map(|&(mbit, _)| {
                let t = (size as f64 + r.sync.alpha_bytes) * 8.0 / (mbit * 1e6) * 1000.0
                    + r.sync.beta_ms;
                (mbit, t)
            })
            .collect();
        fig5.push(Series::new(format!("{size} B measured"), measured));
        fig5.push(Series::new(format!("{size} B formula (1)"), model));
    }
    let path = dir.join("fig5-bandwidth.png");
    lines(
        &path,
        "Fig. 5 analogue: synchronised, against bandwidth, with formula (1)",
        "bandwidth (Mbit/s)",
        "time per exchange (ms)",
        &fig5,
        Scale::Log,
        Scale::Log,
    )?;
    written.push(path);
    // Fig. 6: against delay, measured and both formulas.
    let mut fig6 = Vec::new();
    for (key, ms) in r.points.iter().filter(|(k, _)| k.starts_with("delay")) {
        let measured: Vec<(f64, f64)> = ms.iter().map(|m| (m.link.delay_ms, m.mean_ms)).collect();
        let (a, b) = (r.sync.alpha_bytes, r.sync.beta_ms);
        let tx = |m: &Measured| {
            m.link.bandwidth_bps.map_or(0.0, |bw| {
                (m.spec.size as f64 + a) * 8.0 / bw as f64 * 1000.0
            })
        };
        let f1 = ms
            .iter()
            .map(|m| (m.link.delay_ms, tx(m) + m.link.delay_ms + b))
            .collect();
        let f2 = ms
            .iter()
            .map(|m| (m.link.delay_ms, tx(m).max(m.link.delay_ms) + b))
            .collect();
        let link = &key["delay ".len()..];
        fig6.push(Series::new(format!("{link} measured"), measured));
        fig6.push(Series::new(format!("{link} formula (1)"), f1));
        fig6.push(Series::new(format!("{link} formula (2)"), f2));
    }
    if !fig6.is_empty() {
        let path = dir.join("fig6-delay.png");
        lines(
            &path,
            "Fig. 6 analogue: 64 B synchronised, against one-way delay",
            "one-way delay (ms)",
            "time per exchange (ms)",
            &fig6,
            Scale::Linear,
            Scale::Linear,
        )?;
        written.push(path);
    }
    // Fig. 8: against the number of time-only federates, per host.
    let mut fig8 = Vec::new();
    for (key, ms) in r.points.iter().filter(|(k, _)| k.starts_with("placement")) {
        let link = &key["placement ".len()..];
        let on = |server: bool| -> Vec<(f64, f64)> {
            ms.iter()
                .filter(|m| {
                    let (s, rem) = (m.spec.tickers_server, m.spec.tickers_remote);
                    (s == 0 && rem == 0) || (server && s > 0) || (!server && rem > 0)
                })
                .map(|m| {
                    (
                        (m.spec.tickers_server + m.spec.tickers_remote) as f64,
                        m.mean_ms,
                    )
                })
                .collect()
        };
        fig8.push(Series::new(format!("{link}, on the server host"), on(true)));
        fig8.push(Series::new(
            format!("{link}, on the remote host"),
            on(false),
        ));
    }
    if !fig8.is_empty() {
        let path = dir.join("fig8-placement.png");
        lines(
            &path,
            "Fig. 8 analogue: time-only federates by host (1 KiB, synchronised)",
            "time-only federates",
            "time per exchange (ms)",
            &fig8,
            Scale::Linear,
            Scale::Linear,
        )?;
        written.push(path);
    }
    Ok(written)
}

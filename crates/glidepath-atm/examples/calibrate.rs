//! Generates the calibrated full day and prints the report's Table 4.2 beside ours:
//! `cargo run --release -p glidepath-atm --example calibrate [seed]`.

use std::time::Instant;

use glidepath_atm::track::Track;
use glidepath_atm::{message_len, TrafficConfig, TrafficDay, DAY_S};

/// The report's percentile: v_j with j = min(max(1, ceil(i/100 n)), n), 1-based.
fn percentile(sorted: &[u64], i: u64) -> u64 {
    let n = sorted.len() as u64;
    let j = (i * n).div_ceil(100).clamp(1, n);
    sorted[j as usize - 1]
}

fn main() {
    let seed = std::env::args()
        .nth(1)
        .map_or(1, |s| s.parse().expect("seed is a number"));
    let config = TrafficConfig {
        seed,
        ..TrafficConfig::default()
    };

    // Pass 1: generation alone, timed.
    let mut airborne_hourly = Vec::new();
    let cpu_started = thread_cpu_s();
    let started = Instant::now();
    let mut day = TrafficDay::new(config.clone()).expect("default config is valid");
    let setup = started.elapsed();
    let mut out: Vec<Track> = Vec::with_capacity(4096);
    let mut per_second = Vec::with_capacity(DAY_S as usize);
    let mut peak_airborne = (0, 0);
    for t in 0..DAY_S {
        out.clear();
        day.second(t, &mut out);
        per_second.push(out.len() as u64);
        if t % 3600 == 0 {
            airborne_hourly.push(day.airborne());
        }
        if day.airborne() > peak_airborne.0 {
            peak_airborne = (day.airborne(), t);
        }
    }
    let generated = started.elapsed();
    let generated_cpu = thread_cpu_s().zip(cpu_started).map(|(b, a)| b - a);

    // Pass 1b: the same with one recycled buffer (no allocation per track).
    let cpu_started = thread_cpu_s();
    let started_reuse = Instant::now();
    let mut day = TrafficDay::new(config.clone()).expect("default config is valid");
    let mut reused = 0u64;
    for t in 0..DAY_S {
        day.second_reusing(t, &mut out);
        reused += out.len() as u64;
    }
    let reuse_time = started_reuse.elapsed();
    let reuse_cpu = thread_cpu_s().zip(cpu_started).map(|(b, a)| b - a);
    out.clear();

    // Pass 2: message lengths (key + JSON payload with a 13-digit tpub stamped).
    let started_len = Instant::now();
    let mut day = TrafficDay::new(config).expect("default config is valid");
    let mut lengths = vec![0u64; 512];
    let mut scratch = Vec::with_capacity(256);
    for t in 0..DAY_S {
        out.clear();
        day.second(t, &mut out);
        for track in &mut out {
            track.meta.tpub = track.time + 1_234;
            lengths[message_len(track, &mut scratch).min(511)] += 1;
        }
    }
    let length_time = started_len.elapsed();

    let count: u64 = per_second.iter().sum();
    let len_sorted: Vec<u64> = lengths
        .iter()
        .enumerate()
        .flat_map(|(l, &c)| std::iter::repeat_n(l as u64, c as usize))
        .collect();
    let len_mean = len_sorted.iter().sum::<u64>() as f64 / count as f64;
    let len_sd = (len_sorted
        .iter()
        .map(|&l| (l as f64 - len_mean).powi(2))
        .sum::<f64>()
        / (count as f64 - 1.0))
        .sqrt();
    let mut freq = per_second.clone();
    freq.sort_unstable();
    let f_mean = count as f64 / DAY_S as f64;
    let f_sd = (per_second
        .iter()
        .map(|&c| (c as f64 - f_mean).powi(2))
        .sum::<f64>()
        / (DAY_S as f64 - 1.0))
        .sqrt();
    let in_400_800 = per_second
        .iter()
        .filter(|&&c| (400..800).contains(&c))
        .count() as f64
        / DAY_S as f64;
    let in_208_212: u64 = lengths[208..=212].iter().sum();

    println!("Table 4.2, Message Statistics: report (R) and glidepath-atm seed {seed} (G)");
    println!(
        "{:<14} {:>5} {:>5} {:>5} {:>5} {:>5} {:>8} {:>7} {:>6} {:>11}",
        "", "Min", "P25", "P50", "P75", "Max", "Mean", "SD", "Unit", "Count"
    );
    println!(
        "{:<14} {:>5} {:>5} {:>5} {:>5} {:>5} {:>8.2} {:>7.2} {:>6} {:>11}",
        "R Lengths", 193, 207, 210, 212, 219, 209.63, 3.15, "bytes", 43_308_919
    );
    println!(
        "{:<14} {:>5} {:>5} {:>5} {:>5} {:>5} {:>8.2} {:>7.2} {:>6} {:>11}",
        "G Lengths",
        len_sorted[0],
        percentile(&len_sorted, 25),
        percentile(&len_sorted, 50),
        percentile(&len_sorted, 75),
        len_sorted[len_sorted.len() - 1],
        len_mean,
        len_sd,
        "bytes",
        count
    );
    println!(
        "{:<14} {:>5} {:>5} {:>5} {:>5} {:>5} {:>8.2} {:>7.2} {:>6} {:>11}",
        "R Frequencies", 24, 247, 525, 704, 1779, 501.26, 281.79, "msg/s", 86_400
    );
    println!(
        "{:<14} {:>5} {:>5} {:>5} {:>5} {:>5} {:>8.2} {:>7.2} {:>6} {:>11}",
        "G Frequencies",
        freq[0],
        percentile(&freq, 25),
        percentile(&freq, 50),
        percentile(&freq, 75),
        freq[freq.len() - 1],
        f_mean,
        f_sd,
        "msg/s",
        DAY_S
    );
    println!();
    println!(
        "lengths 208-212: report 54.9 %, ours {:.1} %",
        100.0 * in_208_212 as f64 / count as f64
    );
    println!(
        "seconds with 400-800 messages: report 50.5 %, ours {:.1} %",
        100.0 * in_400_800
    );
    let hms = |t: u32| format!("{:02}:{:02}:{:02}Z", t / 3600, t / 60 % 60, t % 60);
    let busiest = per_second
        .iter()
        .enumerate()
        .max_by_key(|(_, &c)| c)
        .map_or(0, |(t, _)| t as u32);
    println!(
        "peak airborne: report 4,744 at 20:44:43Z, ours {} at {}",
        peak_airborne.0,
        hms(peak_airborne.1)
    );
    println!(
        "busiest second: report 1,779 at 20:35:47Z, ours {} at {}",
        freq[freq.len() - 1],
        hms(busiest)
    );
    println!("flights: {}", day.flight_count());
    println!(
        "time: setup {:.3} s, whole day of Track structs {:.2} s wall, {} CPU ({:.0} ns/track wall); with JSON lengths {:.2} s",
        setup.as_secs_f64(),
        generated.as_secs_f64(),
        generated_cpu.map_or("?".to_string(), |c| format!("{c:.2} s")),
        generated.as_nanos() as f64 / count as f64,
        length_time.as_secs_f64()
    );
    println!(
        "time, recycling one buffer (second_reusing): {:.2} s wall, {} CPU for {reused} tracks",
        reuse_time.as_secs_f64(),
        reuse_cpu.map_or("?".to_string(), |c| format!("{c:.2} s"))
    );
    println!("length histogram (bytes: share %):");
    for (l, &c) in lengths.iter().enumerate().filter(|(_, &c)| c > 0) {
        println!("  {l}: {:.2}", 100.0 * c as f64 / count as f64);
    }
    println!("hour (UTC): mean msg/s, max msg/s, min msg/s, airborne at the hour");
    for h in 0..24usize {
        let s = &per_second[h * 3600..(h + 1) * 3600];
        println!(
            "  {h:02}Z {:7.1} {:5} {:5} {:5}",
            s.iter().sum::<u64>() as f64 / 3600.0,
            s.iter().max().unwrap(),
            s.iter().min().unwrap(),
            airborne_hourly[h]
        );
    }
}

/// CPU time of this thread (Linux), so a busy shared machine does not inflate the figure.
fn thread_cpu_s() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().next()?.parse::<f64>().ok()? / 1e9)
}

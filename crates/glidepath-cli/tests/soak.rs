//! The soak: a federation over a three-node NATS cluster (JetStream, everything kept
//! three times) with churn — federates joining and resigning all the time, cluster
//! nodes restarted, the active executive server killed once (a standby of
//! `glidepath server --failover` takes over). A publisher sends reliable updates the
//! whole time; the receiver checks each arrives once and in order. Reports messages
//! sent and received, and the resident memory and open files of every process, sampled
//! every fiftieth of the run: a process's growth runs from its first sample after its
//! own warm-up (a tenth of the run after the start, or after a restarted node came
//! back) to its last, so a restarted node is compared with itself, not with its
//! predecessor.
//!
//! `GLIDEPATH_SOAK_SECS` sets the length (default 20 s here; `scripts/soak.sh` runs 30
//! minutes); `GLIDEPATH_SOAK_JSON=F` writes the report as JSON.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread;
use std::time::{Duration, Instant};

mod support;
use support::{workspace_root, FailoverServer};

use glidepath::backend::nats::NatsCluster;
use glidepath::{
    Bytes, Callback, Federate, JoinOptions, ResignAction, Rti, RtiConfig, TransportKind,
};

/// The federates of this process allocate as the `glidepath` binary's processes do
/// (jemalloc; `src/main.rs`): the soak measures what a federate keeps, not how one
/// allocator or another holds on to pages freed after a burst.
#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn seconds() -> u64 {
    std::env::var("GLIDEPATH_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20)
        .max(10)
}

/// One process's resident memory (KiB) and open files over its life, sampled.
struct Track {
    name: String,
    pid: u32,
    /// When it was first seen (the start, or its restart).
    since: Duration,
    samples: Vec<(Duration, u64, usize)>,
}

/// Takes a sample of every process, starting a track for each pid not seen before.
fn sample_all(tracks: &mut Vec<Track>, now: Duration, pids: Vec<(String, u32)>) {
    for (name, pid) in pids {
        let Some((rss, fds)) = usage(pid) else {
            continue;
        };
        match tracks.iter_mut().find(|t| t.pid == pid && t.name == name) {
            Some(t) => t.samples.push((now, rss, fds)),
            None => tracks.push(Track {
                name,
                pid,
                since: now,
                samples: vec![(now, rss, fds)],
            }),
        }
    }
}

/// Resident memory (KiB) and open files of a process, from /proc.
fn usage(pid: u32) -> Option<(u64, usize)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some((rss, fds))
}

#[test]
fn soak_a_federation_over_a_cluster_with_churn_restarts_and_a_failover() {
    let total = Duration::from_secs(seconds());
    let mut cluster = NatsCluster::start(3, true).unwrap_or_else(|e| panic!("{e}"));
    let urls = cluster.url_list();
    let mut servers = vec![FailoverServer::start(&urls, &["--stream-replicas", "3"])];
    servers[0].expect("active");
    servers.push(FailoverServer::start(&urls, &["--stream-replicas", "3"]));
    servers[1].expect("standing by");

    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = urls.clone();
    let rti = Rti::from_config(&config).unwrap();
    let fom = workspace_root().join("foms/benchmark.xml");
    rti.create_federation_execution("soak", &[fom]).unwrap();
    let receiver = rti
        .join("soak", JoinOptions::named("receiver", "soak"))
        .unwrap();
    let sender = rti
        .join("soak", JoinOptions::named("sender", "soak"))
        .unwrap();
    let class = sender.interaction_class_handle("BenchInteraction").unwrap();
    let payload = sender.parameter_handle(class, "payload").unwrap();
    sender.publish_interaction_class(class).unwrap();
    receiver.subscribe_interaction_class(class).unwrap();

    let stop = AtomicBool::new(false);
    let sent = AtomicU64::new(0);
    let churned = AtomicU64::new(0);
    let churn_retries = AtomicU64::new(0);
    let churn_error = std::sync::Mutex::new(None::<String>);
    let started = Instant::now();
    let mut tracks: Vec<Track> = Vec::new();
    let mut received = 0u64;
    let pids = |servers: &[FailoverServer], cluster: &NatsCluster| {
        let mut pids: Vec<(String, u32)> = vec![("test process".into(), std::process::id())];
        for (i, s) in servers.iter().enumerate() {
            pids.push((format!("glidepath server {i}"), s.child.id()));
        }
        for (i, pid) in cluster.pids().into_iter().enumerate() {
            pids.push((format!("nats-server {i}"), pid));
        }
        pids
    };
    let every = total / 50;
    let mut next_sample = Duration::ZERO;
    thread::scope(|s| {
        // The publisher: reliable interactions, about 5,000 a second, numbered.
        s.spawn(|| {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                for _ in 0..50 {
                    n += 1;
                    sender
                        .send_interaction(
                            class,
                            [(payload, Bytes::copy_from_slice(&n.to_be_bytes()))],
                            Bytes::new(),
                        )
                        .unwrap_or_else(|e| panic!("send {n}: {e}"));
                }
                sent.store(n, Ordering::Relaxed);
                thread::sleep(Duration::from_millis(10));
            }
            // The end marker.
            sender
                .send_interaction(class, [(payload, Bytes::from_static(b"end"))], Bytes::new())
                .unwrap();
        });
        // Churn: a federate joins, subscribes and resigns, over and over.
        s.spawn(|| {
            let mut k = 0u64;
            while !stop.load(Ordering::Relaxed) {
                k += 1;
                match rti.join("soak", JoinOptions::named(format!("churn-{k}"), "soak")) {
                    Ok(f) => {
                        let _ = f.subscribe_interaction_class(class);
                        thread::sleep(Duration::from_millis(100));
                        resign_asking_again(&f, &churn_retries, &churn_error);
                        churned.fetch_add(1, Ordering::Relaxed);
                    }
                    // A request in flight while the executive fails over times out.
                    Err(e) => {
                        churn_retries.fetch_add(1, Ordering::Relaxed);
                        churn_error.lock().unwrap().get_or_insert(e.to_string());
                    }
                }
                thread::sleep(Duration::from_millis(100));
            }
        });
        // The receiver, and the events on the schedule.
        // A node restarted every eighth of the run (every 3.75 min in 30), in turn;
        // the active executive killed halfway.
        let mut events: Vec<(Duration, String)> = Vec::new();
        for k in 1..8u32 {
            if k == 4 {
                events.push((total / 2, "kill the active executive".into()));
            } else {
                events.push((total * k / 8, format!("restart node {}", k % 3)));
            }
        }
        events.push((total, "stop".into()));
        events.sort_by_key(|(at, _)| *at);
        events.reverse();
        let mut expected = 1u64;
        loop {
            if started.elapsed() >= next_sample {
                sample_all(&mut tracks, started.elapsed(), pids(&servers, &cluster));
                next_sample += every;
            }
            if let Some((at, what)) = events.last().cloned() {
                if started.elapsed() >= at {
                    events.pop();
                    eprintln!("soak: {:>6.1} s: {what}", started.elapsed().as_secs_f64());
                    match what.as_str() {
                        restart if restart.starts_with("restart node ") => {
                            let node: usize = restart["restart node ".len()..].parse().unwrap();
                            cluster.restart(node).unwrap();
                        }
                        "kill the active executive" => {
                            servers[0].child.kill().unwrap();
                            servers[0].child.wait().unwrap();
                            servers[1].expect("active");
                            eprintln!(
                                "soak: {:>6.1} s: the standby is active",
                                started.elapsed().as_secs_f64()
                            );
                        }
                        _ => {
                            sample_all(&mut tracks, started.elapsed(), pids(&servers, &cluster));
                            stop.store(true, Ordering::Relaxed);
                        }
                    }
                }
            }
            if let Some(Callback::ReceiveInteraction { values, .. }) =
                receiver.next_callback(Duration::from_millis(20))
            {
                let v = &values[0].1;
                if &v[..] == b"end" {
                    break;
                }
                let got = u64::from_be_bytes(v[..].try_into().unwrap());
                assert_eq!(got, expected, "lost, duplicated or reordered");
                expected += 1;
                received += 1;
            }
        }
    });
    let sent = sent.load(Ordering::Relaxed);
    assert_eq!(received, sent, "sent {sent}, received {received}");
    let stats = receiver.transport_stats();
    assert_eq!(stats.lost_envelopes, 0);
    eprintln!(
        "soak: {:.0} s; {sent} reliable interactions sent, {received} received, lost {}; \
         {} churn federates joined and resigned ({} joins or resigns refused and asked again; \
         the first refusal: {:?})",
        started.elapsed().as_secs_f64(),
        stats.lost_envelopes,
        churned.load(Ordering::Relaxed),
        churn_retries.load(Ordering::Relaxed),
        churn_error.lock().unwrap().clone()
    );
    // Each process from its first sample a warm-up (a tenth of the run) after it
    // was first seen to its last; a life too short for that is not reported.
    let warm = total / 10;
    let mut json_rows = Vec::new();
    for t in &tracks {
        let Some(&(from, rss, fds)) = t.samples.iter().find(|(at, _, _)| *at >= t.since + warm)
        else {
            continue;
        };
        let &(to, rss2, fds2) = t.samples.last().expect("a track has a sample");
        if to <= from {
            continue;
        }
        let peak = t.samples.iter().map(|s| s.1).max().unwrap_or(rss2);
        let growth = (rss2 as f64 / rss as f64 - 1.0) * 100.0;
        // The same, steadied: the median of five samples at each end, so that a burst
        // caught by one sample (and freed by the next) does not pass for growth.
        let after: Vec<u64> = t
            .samples
            .iter()
            .filter(|(at, _, _)| *at >= t.since + warm)
            .map(|s| s.1)
            .collect();
        let median5 = |w: &[u64]| {
            let mut w = w.to_vec();
            w.sort_unstable();
            w[w.len() / 2]
        };
        let k = after.len().min(5);
        let (steady_from, steady_to) = (median5(&after[..k]), median5(&after[after.len() - k..]));
        let steady = (steady_to as f64 / steady_from as f64 - 1.0) * 100.0;
        let (from, to) = (from.as_secs(), to.as_secs());
        eprintln!(
            "soak: {:<18} (pid {}) {from:>5}..{to:>5} s: resident {rss:>7} KiB -> {rss2:>7} KiB \
             ({growth:+.1} %; medians of five {steady_from} -> {steady_to} KiB, {steady:+.1} %; \
             peak {peak} KiB), open files {fds} -> {fds2}",
            t.name, t.pid
        );
        // The whole series too, so that a plateau can be told from a leak.
        let series: Vec<String> = t
            .samples
            .iter()
            .map(|(at, rss, fds)| format!("[{:.1},{rss},{fds}]", at.as_secs_f64()))
            .collect();
        json_rows.push(format!(
            r#"{{"process":"{}","pid":{},"from_s":{from},"to_s":{to},"rss_kib_start":{rss},"rss_kib_end":{rss2},"rss_kib_peak":{peak},"rss_growth_pct":{growth:.2},"rss_growth_median5_pct":{steady:.2},"fds_start":{fds},"fds_end":{fds2},"samples_s_kib_fds":[{}]}}"#,
            t.name,
            t.pid,
            series.join(",")
        ));
    }
    assert!(
        json_rows.iter().any(|r| r.contains("test process")),
        "the federates' process was sampled after warm-up"
    );
    if let Ok(path) = std::env::var("GLIDEPATH_SOAK_JSON") {
        let json = format!(
            r#"{{"seconds":{},"sent":{sent},"received":{received},"lost":{},"churned":{},"processes":[{}]}}"#,
            started.elapsed().as_secs(),
            stats.lost_envelopes,
            churned.load(Ordering::Relaxed),
            json_rows.join(",")
        );
        std::fs::write(path, json).unwrap();
    }
    // The last restarts may still be settling: the same asking again as the churn's.
    let (retries, error) = (AtomicU64::new(0), Mutex::new(None));
    resign_asking_again(&receiver, &retries, &error);
    resign_asking_again(&sender, &retries, &error);
    if let Some(e) = error.into_inner().unwrap() {
        println!(
            "soak: the final resigns were asked again {} times; the first refusal: {e}",
            retries.load(Ordering::Relaxed)
        );
    }
}

/// Resigns `f`, asking again (every 200 ms, at most 100 times) while the request is
/// refused: while the log's stream elects a leader after a node restart, or while
/// the standby executive reconnects after a failover, a request is not applied.
/// Counts the refusals and keeps the first.
fn resign_asking_again(f: &Federate, retries: &AtomicU64, first: &Mutex<Option<String>>) {
    let mut tries = 0;
    while let Err(e) = f.resign(ResignAction::DeleteObjects) {
        tries += 1;
        retries.fetch_add(1, Ordering::Relaxed);
        first.lock().unwrap().get_or_insert(e.to_string());
        assert!(tries < 100, "resign refused 100 times: {e}");
        thread::sleep(Duration::from_millis(200));
    }
}

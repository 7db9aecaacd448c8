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

/// One process's memory and open files over its life, sampled.
struct Track {
    name: String,
    pid: u32,
    /// When it was first seen (the start, or its restart).
    since: Duration,
    samples: Vec<Sample>,
}

/// One sample of a process.
#[derive(Clone, Copy)]
struct Sample {
    at: Duration,
    /// Resident memory (`VmRSS`), and its anonymous part (`RssAnon`: the heap, stacks)
    /// and file-backed part (`RssFile`: mostly the program's own code, paged in as
    /// code paths first run), KiB.
    rss_kib: u64,
    anon_kib: u64,
    file_kib: u64,
    fds: usize,
    /// The allocator's own figures, for this process only.
    heap: Option<Heap>,
}

/// jemalloc's statistics (KiB): `allocated` is what the program holds live;
/// `active`, `resident` and `retained` what the allocator holds for it (pages in use,
/// pages mapped and resident, and address space kept unmapped for reuse).
#[derive(Clone, Copy)]
struct Heap {
    allocated_kib: u64,
    active_kib: u64,
    resident_kib: u64,
    retained_kib: u64,
}

/// This process's jemalloc statistics, refreshed (`epoch`) first.
#[cfg(feature = "jemalloc")]
fn heap() -> Option<Heap> {
    use tikv_jemalloc_ctl::{epoch, stats};
    epoch::advance().ok()?;
    let kib = |bytes: usize| bytes as u64 / 1024;
    Some(Heap {
        allocated_kib: kib(stats::allocated::read().ok()?),
        active_kib: kib(stats::active::read().ok()?),
        resident_kib: kib(stats::resident::read().ok()?),
        retained_kib: kib(stats::retained::read().ok()?),
    })
}

#[cfg(not(feature = "jemalloc"))]
fn heap() -> Option<Heap> {
    None
}

/// Takes a sample of every process, starting a track for each pid not seen before.
fn sample_all(tracks: &mut Vec<Track>, now: Duration, pids: Vec<(String, u32)>) {
    for (name, pid) in pids {
        let Some(mut sample) = usage(pid, now) else {
            continue;
        };
        if pid == std::process::id() {
            sample.heap = heap();
        }
        match tracks.iter_mut().find(|t| t.pid == pid && t.name == name) {
            Some(t) => t.samples.push(sample),
            None => tracks.push(Track {
                name,
                pid,
                since: now,
                samples: vec![sample],
            }),
        }
    }
}

/// Resident memory and open files of a process, from /proc.
fn usage(pid: u32, at: Duration) -> Option<Sample> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib = |field: &str| -> Option<u64> {
        status
            .lines()
            .find(|l| l.starts_with(field))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    Some(Sample {
        at,
        rss_kib: kib("VmRSS:")?,
        anon_kib: kib("RssAnon:")?,
        file_kib: kib("RssFile:")?,
        fds: std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count(),
        heap: None,
    })
}

/// Growth from the first to the last of `values` (after warm-up), in per cent: as
/// sampled, and steadied (the median of five samples at each end, so that a burst
/// caught by one sample, and freed by the next, does not pass for growth). Returns
/// (first, last, growth %, steady first, steady last, steady growth %).
fn growth(values: &[u64]) -> (u64, u64, f64, u64, u64, f64) {
    let pct = |a: u64, b: u64| (b as f64 / a.max(1) as f64 - 1.0) * 100.0;
    let median = |w: &[u64]| {
        let mut w = w.to_vec();
        w.sort_unstable();
        w[w.len() / 2]
    };
    let (first, last) = (values[0], values[values.len() - 1]);
    let k = values.len().min(5);
    let (from, to) = (median(&values[..k]), median(&values[values.len() - k..]));
    (first, last, pct(first, last), from, to, pct(from, to))
}

#[test]
fn soak_a_federation_over_a_cluster_with_churn_restarts_and_a_failover() {
    // With jemalloc's background purging on, as `src/main.rs` turns it on.
    #[cfg(feature = "jemalloc")]
    tikv_jemalloc_ctl::background_thread::write(true).expect("jemalloc background threads");
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
    let received = thread::scope(|s| {
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
        // The receiver, on a thread of its own: it reads on while a node restarts or
        // the executive fails over (the schedule's waits below would otherwise leave
        // a backlog of seconds of interactions at every event).
        let receiving = s.spawn(|| {
            let mut expected = 1u64;
            loop {
                let Some(Callback::ReceiveInteraction { values, .. }) =
                    receiver.next_callback(Duration::from_millis(20))
                else {
                    continue;
                };
                let v = &values[0].1;
                if &v[..] == b"end" {
                    return expected - 1;
                }
                let got = u64::from_be_bytes(v[..].try_into().unwrap());
                assert_eq!(got, expected, "lost, duplicated or reordered");
                expected += 1;
            }
        });
        // The samples, and the events on the schedule: a node restarted every eighth
        // of the run (every 3.75 min in 30), in turn; the active executive killed
        // halfway.
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
        while !stop.load(Ordering::Relaxed) {
            if started.elapsed() >= next_sample {
                sample_all(&mut tracks, started.elapsed(), pids(&servers, &cluster));
                next_sample += every;
            }
            let Some((at, what)) = events.last().cloned() else {
                break;
            };
            if started.elapsed() < at {
                // Only the clock is awaited here.
                thread::sleep(Duration::from_millis(20));
                continue;
            }
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
        receiving.join().expect("the receiver")
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
    let json_rows: Vec<String> = tracks.iter().filter_map(|t| report(t, warm)).collect();
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

/// Prints one process's growth after its warm-up and returns it as a JSON object;
/// `None` for a life too short to have samples after warm-up.
fn report(t: &Track, warm: Duration) -> Option<String> {
    let after: Vec<&Sample> = t
        .samples
        .iter()
        .filter(|s| s.at >= t.since + warm)
        .collect();
    let (first, last) = (*after.first()?, *after.last()?);
    if last.at <= first.at {
        return None;
    }
    let of = |f: &dyn Fn(&Sample) -> u64| growth(&after.iter().map(|s| f(s)).collect::<Vec<_>>());
    let (rss, rss2, rss_pct, steady_from, steady_to, steady_pct) = of(&|s| s.rss_kib);
    let (anon, anon2, anon_pct, ..) = of(&|s| s.anon_kib);
    let (file, file2, file_pct, ..) = of(&|s| s.file_kib);
    let peak = t.samples.iter().map(|s| s.rss_kib).max().unwrap_or(rss2);
    let (from, to) = (first.at.as_secs(), last.at.as_secs());
    let (fds, fds2) = (first.fds, last.fds);
    eprintln!(
        "soak: {:<18} (pid {}) {from:>5}..{to:>5} s: resident {rss:>7} KiB -> {rss2:>7} KiB \
         ({rss_pct:+.1} %; medians of five {steady_from} -> {steady_to} KiB, {steady_pct:+.1} %; \
         peak {peak} KiB; anonymous {anon} -> {anon2} KiB, {anon_pct:+.1} %; \
         file-backed {file} -> {file2} KiB, {file_pct:+.1} %), open files {fds} -> {fds2}",
        t.name, t.pid
    );
    let mut heap_json = String::new();
    if after.iter().all(|s| s.heap.is_some()) {
        let heap = |f: fn(&Heap) -> u64| of(&|s| f(&s.heap.expect("checked")));
        let (live, live2, live_pct, live_from, live_to, live_steady) = heap(|h| h.allocated_kib);
        let (_, resident2, ..) = heap(|h| h.resident_kib);
        let (_, retained2, ..) = heap(|h| h.retained_kib);
        eprintln!(
            "soak: {:<18} live (jemalloc allocated) {live:>7} KiB -> {live2:>7} KiB \
             ({live_pct:+.1} %; medians of five {live_from} -> {live_to} KiB, {live_steady:+.1} %); \
             jemalloc resident {resident2} KiB and retained {retained2} KiB at the end",
            t.name
        );
        heap_json = format!(
            r#","allocated_kib_start":{live},"allocated_kib_end":{live2},"allocated_growth_pct":{live_pct:.2},"allocated_growth_median5_pct":{live_steady:.2}"#
        );
    }
    // The whole series too, so that a plateau can be told from a leak.
    let series: Vec<String> = t
        .samples
        .iter()
        .map(|s| {
            let h = s.heap.map_or("null,null,null,null".into(), |h| {
                format!(
                    "{},{},{},{}",
                    h.allocated_kib, h.active_kib, h.resident_kib, h.retained_kib
                )
            });
            format!(
                "[{:.1},{},{},{},{},{h}]",
                s.at.as_secs_f64(),
                s.rss_kib,
                s.anon_kib,
                s.file_kib,
                s.fds
            )
        })
        .collect();
    Some(format!(
        r#"{{"process":"{}","pid":{},"from_s":{from},"to_s":{to},"rss_kib_start":{rss},"rss_kib_end":{rss2},"rss_kib_peak":{peak},"rss_growth_pct":{rss_pct:.2},"rss_growth_median5_pct":{steady_pct:.2},"anon_kib_start":{anon},"anon_kib_end":{anon2},"file_kib_start":{file},"file_kib_end":{file2},"fds_start":{fds},"fds_end":{fds2}{heap_json},"series_columns":["s","rss_kib","anon_kib","file_kib","fds","allocated_kib","active_kib","resident_kib","retained_kib"],"series":[{}]}}"#,
        t.name,
        t.pid,
        series.join(",")
    ))
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

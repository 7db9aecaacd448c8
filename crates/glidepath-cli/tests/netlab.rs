//! The network laboratory on this machine: namespaces and the veth pair come up and
//! are always removed (when dropped, on Ctrl-C, and after SIGKILL by the next run's
//! sweep); the link relay adds its configured delay and does not cap throughput; and
//! two federates exchanging across a 1 Mbit/s link take the time formula (1),
//! fitted on two other bandwidths, predicts.
//!
//! These tests need root (network namespaces and `tc` need CAP_NET_ADMIN), as
//! `bash scripts/test.sh` runs in CI, and `nats-server` (on PATH or in
//! GLIDEPATH_NATS_SERVER). Without them they fail and say so.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use glidepath_netlab::experiment::{ExchangeSpec, LinkConfig, Shaper, Testbed};
use glidepath_netlab::fit::{self, Point};
use glidepath_netlab::lab::{self, Duplex, Host, Lab};
use glidepath_netlab::peer::{Mode, Order};

mod support;

fn program() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_glidepath"))
}

fn nats_server() -> PathBuf {
    glidepath::backend::nats::find_nats_server()
        .expect("nats-server not found: run `bash scripts/test.sh`, which installs it")
}

/// Taken by every test: a laboratory's federates, relay and grid must not share the
/// two cores with another test's, or the timing tests measure the other test.
static ONE_LAB_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn require_root() -> std::sync::MutexGuard<'static, ()> {
    lab::check_privileges().expect("the netlab tests need root (CI runs them as root)");
    ONE_LAB_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn ours(pid: u32) -> Vec<String> {
    let prefix = format!("{}{pid}-", lab::NAMESPACE_PREFIX);
    lab::namespaces()
        .unwrap()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

fn pids_in(ns: &str) -> Vec<i32> {
    let out = Command::new("ip")
        .args(["netns", "pids", ns])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .collect()
}

/// Whether process `pid` still runs (a zombie waiting for its reaper does not).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Polls `cond` until it holds or `limit` passes; returns whether it held.
fn eventually(limit: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if cond() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    cond()
}

#[test]
fn a_lab_comes_up_linked_and_is_removed_when_dropped() {
    let _one = require_root();
    let mut l = Lab::create().unwrap();
    let names = ours(std::process::id());
    assert!(
        names.contains(&l.namespace(Host::Server).to_string()),
        "{names:?}"
    );
    assert!(names.contains(&l.namespace(Host::Remote).to_string()));
    let out = Command::new("ip")
        .args([
            "-n",
            l.namespace(Host::Remote),
            "-br",
            "addr",
            "show",
            "eth0",
        ])
        .output()
        .unwrap();
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        line.contains("UP") && line.contains("10.86.0.2/24"),
        "{line}"
    );
    // Both shapers' kernel parts can be set and removed.
    l.shape_kernel(Some((1_000_000, Duplex::Full))).unwrap();
    l.shape_kernel(Some((1_000_000, Duplex::Half))).unwrap();
    l.shape_kernel(None).unwrap();
    let kept = [
        l.namespace(Host::Server).to_string(),
        l.namespace(Host::Remote).to_string(),
    ];
    drop(l);
    let left = lab::namespaces().unwrap();
    assert!(
        kept.iter().all(|n| !left.contains(n)),
        "left behind: {left:?}"
    );
}

/// Starts `glidepath netlab --quick`, waits until its hosts run processes, and
/// returns it with its namespaces and those processes.
fn start_laboratory() -> (std::process::Child, Vec<String>, Vec<i32>) {
    let child = support::glidepath(&["netlab", "--quick"])
        .env("GLIDEPATH_NATS_SERVER", nats_server())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut names = Vec::new();
    let mut pids = Vec::new();
    let up = eventually(Duration::from_secs(60), || {
        names = ours(pid);
        pids = names.iter().flat_map(|n| pids_in(n)).collect();
        names.len() == 2 && !pids.is_empty()
    });
    assert!(
        up,
        "glidepath netlab did not bring up its hosts: {names:?} {pids:?}"
    );
    (child, names, pids)
}

#[test]
fn ctrl_c_removes_the_namespaces_and_their_processes() {
    let _one = require_root();
    let (mut child, names, pids) = start_laboratory();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGINT), "{status}");
    let left = lab::namespaces().unwrap();
    assert!(
        names.iter().all(|n| !left.contains(n)),
        "left behind: {left:?}"
    );
    assert!(
        eventually(Duration::from_secs(10), || pids
            .iter()
            .all(|&p| !running(p))),
        "processes still running: {:?}",
        pids.iter().filter(|&&p| running(p)).collect::<Vec<_>>()
    );
}

#[test]
fn after_a_sigkill_the_next_run_removes_what_was_left() {
    let _one = require_root();
    let (mut child, names, pids) = start_laboratory();
    child.kill().unwrap();
    child.wait().unwrap();
    // The processes die with their parent (parent-death signal)…
    assert!(
        eventually(Duration::from_secs(10), || pids
            .iter()
            .all(|&p| !running(p))),
        "processes outlived the laboratory: {pids:?}"
    );
    // …and the namespaces stay until a later run sweeps them (this one, or a
    // laboratory another test of this file creates meanwhile).
    lab::sweep_stale().unwrap();
    let left = lab::namespaces().unwrap();
    assert!(
        names.iter().all(|n| !left.contains(n)),
        "left behind: {left:?}"
    );
}

#[test]
fn the_relay_adds_the_configured_delay_and_keeps_the_bandwidth() {
    let _one = require_root();
    let mut bed = Testbed::start(&program(), &nats_server(), Shaper::Relay).unwrap();
    let link = |bandwidth_bps, delay_ms| LinkConfig {
        bandwidth_bps,
        delay_ms,
        duplex: Duplex::Full,
    };
    bed.configure(link(None, 0.0)).unwrap();
    let base = bed.measure_rtt(30).unwrap();
    bed.configure(link(None, 10.0)).unwrap();
    let delayed = bed.measure_rtt(30).unwrap();
    // Two crossings of 10 ms; the median of 30 round trips, a generous 3 ms either
    // way for a busy machine (docs/netlab.md has the measured accuracy).
    let added = delayed - base;
    assert!(
        (added - 20.0).abs() < 3.0,
        "added {added:.3} ms to {base:.3} ms, 20 configured"
    );
    // Unlimited, the relay carries far more than the fastest link the lab emulates;
    // limited, a bulk transfer sees the line rate less TCP/IP headers.
    bed.configure(link(None, 0.0)).unwrap();
    let unlimited = bed.measure_bandwidth(1.0).unwrap();
    assert!(
        unlimited > 100e6,
        "the relay caps throughput at {:.1} Mbit/s",
        unlimited / 1e6
    );
    bed.configure(link(Some(10_000_000), 0.0)).unwrap();
    let shaped = bed.measure_bandwidth(1.0).unwrap();
    assert!(
        (0.90e7..=1.0e7).contains(&shaped),
        "10 Mbit/s link carried {:.2} Mbit/s",
        shaped / 1e6
    );
}

#[test]
fn an_exchange_across_1_mbit_takes_what_formula_1_predicts() {
    let _one = require_root();
    let mut bed = Testbed::start(&program(), &nats_server(), Shaper::Relay).unwrap();
    let mut measure = |bandwidth_bps: u64, size: usize, count: u64| -> Point {
        bed.configure(LinkConfig {
            bandwidth_bps: Some(bandwidth_bps),
            delay_ms: 0.0,
            duplex: Duplex::Full,
        })
        .unwrap();
        let r = bed
            .exchange(&ExchangeSpec {
                mode: Mode::Sync,
                order: Order::Timestamp,
                two_way: false,
                size,
                count,
                lookahead: 1,
                tickers_server: 0,
                tickers_remote: 0,
            })
            .unwrap();
        Point {
            bandwidth_bps: bandwidth_bps as f64,
            size: size as f64,
            delay_ms: 0.0,
            time_ms: r.per_exchange_ms,
        }
    };
    // α and β from two other bandwidths, as the report uses its fit (sizes whose
    // transmission outweighs the processes' own time, which a busy machine
    // stretches)…
    let points = vec![
        measure(2_000_000, 4096, 30),
        measure(2_000_000, 16384, 20),
        measure(4_000_000, 4096, 40),
        measure(4_000_000, 16384, 30),
    ];
    let f = fit::least_squares(&points).unwrap();
    // …to predict a 1 Mbit/s link.
    let at_1m = measure(1_000_000, 8192, 20);
    let predicted = fit::predict_ms(f.alpha_bytes, f.beta_ms, &at_1m);
    let error = (at_1m.time_ms - predicted).abs() / predicted;
    assert!(
        error < 0.10,
        "measured {:.3} ms per exchange, formula (1) with α {:.0} B, β {:.3} ms predicts {predicted:.3} ms",
        at_1m.time_ms,
        f.alpha_bytes,
        f.beta_ms
    );
}

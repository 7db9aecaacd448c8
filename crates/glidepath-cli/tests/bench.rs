//! `glidepath bench`: every suite runs briefly from the built binary on `inproc` and
//! on `nats` (a real `nats-server` started here; the bench hosts the executive in its
//! own process when none answers), with the raw peer and `--json`. The JSON's shape is
//! checked (the keys present, every number finite) and the counts add up:
//! `count = received + lost`, nothing lost on reliable classes. Speed is measured by
//! the suites, never asserted here.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) the NATS tests fail and
//! say how to install it: `bash scripts/test.sh`.

use std::path::PathBuf;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use glidepath::backend::nats::NatsServerProcess;

mod support;
use serde_json::Value;
use support::glidepath;

/// Generous: each run takes about a second on an idle machine.
const TIMEOUT: Duration = Duration::from_secs(60);

/// Keys every result carries (issue 4, point 5).
const KEYS: &[&str] = &[
    "suite",
    "transport",
    "process_model",
    "size_bytes",
    "federates",
    "count",
    "lost",
    "min_us",
    "p25_us",
    "p50_us",
    "p75_us",
    "p99_us",
    "max_us",
    "mean_us",
    "sd_us",
    "rate_per_s",
    "mbit_per_s",
];

/// Keys a result carries when the raw peer ran.
const RAW_KEYS: &[&str] = &["raw_p50_us", "raw_rate_per_s", "ratio_p50", "ratio_rate"];

/// A scratch directory for one test's outputs, emptied first.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "glidepath-bench-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `glidepath ARGS` to completion within [`TIMEOUT`]; (success, stdout, stderr).
fn run(args: &[&str]) -> (bool, String, String) {
    let child = glidepath(args).spawn().unwrap();
    let id = child.id();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(TIMEOUT)
        .unwrap_or_else(|_| {
            panic!("glidepath {args:?} (pid {id}) did not finish within {TIMEOUT:?}")
        })
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn nats_server() -> NatsServerProcess {
    NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"))
}

/// Runs `glidepath bench ARGS --raw --json FILE` and returns the parsed results
/// after checking their shape and counts.
fn run_suite(name: &str, args: &[&str]) -> Vec<Value> {
    let dir = scratch(name);
    let json = dir.join("results.json");
    let json_arg = json.to_str().unwrap().to_string();
    let mut full = vec!["bench"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--raw", "--json", &json_arg]);
    let (ok, out, err) = run(&full);
    assert!(
        ok,
        "glidepath {full:?} failed\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(out.contains("p50 us"), "no table header in:\n{out}");
    let text = std::fs::read_to_string(&json).unwrap();
    let results: Vec<Value> = serde_json::from_str(&text).unwrap();
    assert!(!results.is_empty(), "no results in {text}");
    for r in &results {
        check_result(r);
    }
    // The table has one line per result, after its header.
    let rows = out
        .lines()
        .filter(|l| l.starts_with(&format!("{} ", r_suite(&results))))
        .count();
    assert_eq!(rows, results.len(), "table rows in:\n{out}");
    let _ = std::fs::remove_dir_all(&dir);
    results
}

fn r_suite(results: &[Value]) -> String {
    results[0]["suite"].as_str().unwrap().to_string()
}

/// The keys, finite numbers, counts that add up, nothing lost, raw figures.
fn check_result(r: &Value) {
    let obj = r
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {r}"));
    for key in KEYS.iter().chain(RAW_KEYS) {
        assert!(obj.contains_key(*key), "missing `{key}` in {r}");
    }
    for (key, value) in obj {
        if let Some(x) = value.as_f64() {
            assert!(x.is_finite() && x >= 0.0, "`{key}` = {x} in {r}");
        }
    }
    let n = |k: &str| {
        r[k].as_u64()
            .unwrap_or_else(|| panic!("`{k}` not a count in {r}"))
    };
    assert_eq!(n("count"), n("received") + n("lost"), "counts in {r}");
    assert_eq!(n("lost"), 0, "reliable messages lost in {r}");
    assert!(n("count") > 0, "{r}");
    let f = |k: &str| r[k].as_f64().unwrap();
    assert!(
        f("min_us") <= f("p50_us") && f("p50_us") <= f("p99_us") && f("p99_us") <= f("max_us"),
        "{r}"
    );
    assert!(f("rate_per_s") > 0.0, "{r}");
    assert!(f("raw_rate_per_s") > 0.0 && f("ratio_rate") > 0.0, "{r}");
}

#[test]
fn latency_runs_on_inproc_with_compute_and_background_load_and_plots() {
    let results = run_suite(
        "latency-inproc",
        &[
            "latency",
            "--size",
            "32,4K",
            "--count",
            "200",
            "--compute-us",
            "5",
            "--background-load",
        ],
    );
    assert_eq!(results.len(), 2);
    assert_eq!(results[1]["size_bytes"], 4096);
    assert_eq!(results[0]["federates"], 4, "background pair counted");
    assert_eq!(results[0]["transport"], "inproc");

    // Plots: one histogram and percentile figure per size, lines against size.
    let dir = scratch("latency-plots");
    let plots = dir.join("plots");
    let (ok, out, err) = run(&[
        "bench",
        "latency",
        "--size",
        "64,128",
        "--count",
        "100",
        "--process-model",
        "immediate",
        "--wait",
        "spin-park",
        "--plot",
        plots.to_str().unwrap(),
    ]);
    assert!(ok, "stdout:\n{out}\nstderr:\n{err}");
    assert!(
        out.contains("immediate") && out.contains("spin-park"),
        "{out}"
    );
    let pngs: Vec<_> = std::fs::read_dir(&plots)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
        .collect();
    assert!(pngs.len() >= 3, "plots: {pngs:?}");
    for p in &pngs {
        let bytes = std::fs::read(p).unwrap();
        assert!(bytes.starts_with(b"\x89PNG"), "{} is no PNG", p.display());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn latency_runs_over_nats_next_to_raw_nats() {
    let nats = nats_server();
    let url = nats.url();
    let results = run_suite(
        "latency-nats",
        &[
            "latency",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--size",
            "200",
            "--count",
            "200",
        ],
    );
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["transport"], "nats");
    assert_eq!(results[0]["size_bytes"], 200);
    // The ponger in a process of its own, through the same NATS server.
    let results = run_suite(
        "latency-nats-processes",
        &[
            "latency",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--processes",
            "--size",
            "200",
            "--count",
            "200",
        ],
    );
    assert_eq!(results[0]["variant"], "round-trip/2, 2 processes");
    assert_eq!(results[0]["received"], 200);
}

/// Shared memory, the ponger in a process of its own (`--processes`), next to the raw
/// rings; and the throughput suite on shm next to them too.
#[test]
fn latency_and_throughput_run_over_shm_with_the_ponger_in_its_own_process() {
    let results = run_suite(
        "latency-shm-processes",
        &[
            "latency",
            "--transport",
            "shm",
            "--processes",
            "--size",
            "64,1K",
            "--count",
            "200",
        ],
    );
    assert_eq!(results.len(), 2);
    for r in &results {
        assert_eq!(r["transport"], "shm");
        assert_eq!(r["variant"], "round-trip/2, 2 processes");
        assert_eq!(r["received"], 200);
    }
    let results = run_suite(
        "throughput-shm",
        &[
            "throughput",
            "--transport",
            "shm",
            "--size",
            "100",
            "--count",
            "20000",
        ],
    );
    assert!(results.iter().all(|r| r["transport"] == "shm"));
    // Receivers as processes: two for the sender variant (1→2), one for the
    // receiver variant (2→1); every update counted by the process that got it.
    let results = run_suite(
        "throughput-shm-processes",
        &[
            "throughput",
            "--transport",
            "shm",
            "--processes",
            "--subscribers",
            "2",
            "--size",
            "100",
            "--count",
            "20000",
        ],
    );
    assert_eq!(results.len(), 2);
    for r in &results {
        assert!(
            r["variant"]
                .as_str()
                .unwrap()
                .ends_with(", receivers as processes"),
            "{r}"
        );
        assert_eq!(r["lost"], 0, "{r}");
        assert_eq!(r["received"], r["count"], "{r}");
        assert!(r["rate_per_s"].as_f64().unwrap() > 0.0, "{r}");
    }
    assert_eq!(results[0]["count"], 40000);
}

/// The time-advance suite with every federate but the first in a process of its own,
/// fanout with every subscriber in one and loopback with every repeater in one, next
/// to raw NATS: each child reports what it measured, and every grant, delivery and
/// reply is counted.
#[test]
fn timeadv_fanout_and_loopback_run_their_federates_as_processes_over_nats() {
    let nats = nats_server();
    let url = nats.url();
    let results = run_suite(
        "timeadv-nats-processes",
        &[
            "timeadv",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--processes",
            "--federates",
            "3",
            "--count",
            "100",
        ],
    );
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(r["variant"], "tar, 3 processes");
    assert_eq!(r["federates"], 3);
    assert_eq!(r["received"], 300, "{r}");
    assert_eq!(r["lost"], 0, "{r}");
    assert!(r["total_rate_per_s"].as_f64().unwrap() > 0.0, "{r}");
    let results = run_suite(
        "fanout-nats-processes",
        &[
            "fanout",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--processes",
            "--subscribers",
            "2",
            "--size",
            "100",
            "--count",
            "100",
        ],
    );
    // Send-only (no subscriber, in this process), send-receive and throughput.
    assert_eq!(results.len(), 3);
    for r in &results[1..] {
        assert!(
            r["variant"]
                .as_str()
                .unwrap()
                .ends_with(", subscribers as processes"),
            "{r}"
        );
        assert_eq!(r["received"], 200, "{r}");
        assert_eq!(r["lost"], 0, "{r}");
    }
    let results = run_suite(
        "loopback-nats-processes",
        &[
            "loopback",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--processes",
            "--subscribers",
            "2",
            "--size",
            "100",
            "--count",
            "200",
        ],
    );
    assert_eq!(results.len(), 1);
    let r = &results[0];
    assert_eq!(r["variant"], "master, repeaters as processes", "{r}");
    assert_eq!(r["lost"], 0, "{r}");
}

#[test]
fn processes_need_a_transport_that_crosses_them() {
    let (ok, _, err) = run(&["bench", "latency", "--processes"]);
    assert!(!ok);
    assert!(
        err.contains("--processes needs --transport nats or shm"),
        "{err}"
    );
    // A suite that runs its federates as threads only says so, rather than
    // measuring threads under a flag that promises processes.
    let (ok, _, err) = run(&["bench", "ddm", "--transport", "shm", "--processes"]);
    assert!(!ok);
    assert!(
        err.contains("the ddm suite runs its federates as threads of one process only"),
        "{err}"
    );
    let (ok, _, err) = run(&["bench", "fanout", "--transport", "shm", "--raw"]);
    assert!(!ok);
    assert!(err.contains("no raw shared-memory peer"), "{err}");
}

#[test]
fn fanout_runs_on_inproc() {
    let results = run_suite(
        "fanout-inproc",
        &[
            "fanout",
            "--size",
            "100",
            "--count",
            "100",
            "--subscribers",
            "1,3",
        ],
    );
    let variants: Vec<&str> = results
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert_eq!(
        variants,
        [
            "send-only",
            "send-receive",
            "send-receive",
            "throughput",
            "throughput"
        ]
    );
    // Deliveries: updates times subscribers.
    assert_eq!(results[2]["subscribers"], 3);
    assert_eq!(results[2]["count"], 300);
}

#[test]
fn fanout_runs_over_nats_in_the_immediate_model() {
    let nats = nats_server();
    let url = nats.url();
    let results = run_suite(
        "fanout-nats",
        &[
            "fanout",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--size",
            "100",
            "--count",
            "100",
            "--subscribers",
            "2",
            "--process-model",
            "immediate",
        ],
    );
    assert_eq!(results.len(), 3);
    assert!(results.iter().all(|r| r["process_model"] == "immediate"));
}

#[test]
fn bad_options_are_named_and_fail() {
    for (args, wanted) in [
        (
            vec!["bench", "latency", "--wait", "sometimes"],
            "unknown wait strategy",
        ),
        (
            vec!["bench", "latency", "--transport", "carrier-pigeon"],
            "--transport",
        ),
        (vec!["bench", "latency", "--size", "12Q"], "--size"),
        (vec!["bench", "latency", "--count", "many"], "--count"),
        (
            vec!["bench", "latency", "--process-model", "lazy"],
            "--process-model",
        ),
        (
            vec!["bench", "fanout", "--subscribers", "0"],
            "--subscribers",
        ),
        (vec!["bench", "nosuchsuite"], "unknown suite `nosuchsuite`"),
        (
            vec!["bench", "latency", "--repeat", "3"],
            "--repeat needs --raw",
        ),
        (
            vec!["bench", "latency", "--raw", "--repeat", "0"],
            "--repeat",
        ),
    ] {
        let (ok, out, err) = run(&args);
        assert!(!ok, "{args:?} succeeded: {out}");
        assert!(
            err.contains(wanted),
            "{args:?}: `{wanted}` not in stderr: {err}"
        );
    }
}

#[test]
fn nats_without_a_server_says_so() {
    // A port nobody listens on: bind one, note it, and free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("nats://127.0.0.1:{port}");
    let (ok, _, err) = run(&[
        "bench",
        "latency",
        "--transport",
        "nats",
        "--nats-url",
        &url,
        "--count",
        "5",
    ]);
    assert!(!ok);
    assert!(err.contains(&format!("nothing answers at {url}")), "{err}");
}

// ===== B2 suites (throughput, loopback, timeadv) =====================================
// Tests of the suites written in parallel go below this line, using `run_suite`.

#[test]
fn throughput_runs_both_variants_on_inproc() {
    let results = run_suite(
        "throughput-inproc",
        &[
            "throughput",
            "--size",
            "100",
            "--count",
            "2000",
            "--subscribers",
            "2",
        ],
    );
    let variants: Vec<&str> = results
        .iter()
        .map(|r| r["variant"].as_str().unwrap())
        .collect();
    assert_eq!(variants, ["sender", "receiver"]);
    // Sender throughput: every one of 2 receivers gets all 2000; receiver
    // throughput: 2 senders send 1000 each to one receiver.
    assert_eq!(results[0]["count"], 4000);
    assert_eq!(results[0]["subscribers"], 2);
    assert_eq!(results[1]["count"], 2000);
    assert_eq!(results[1]["federates"], 3);
    assert!(results[0]["mbit_per_s"].as_f64().unwrap() > 0.0);
}

#[test]
fn throughput_runs_over_nats_with_bundling_in_the_immediate_model() {
    let nats = nats_server();
    let url = nats.url();
    let results = run_suite(
        "throughput-nats",
        &[
            "throughput",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--size",
            "100",
            "--count",
            "2000",
            "--bundle-bytes",
            "16384",
            "--bundle-time-us",
            "1000",
            "--process-model",
            "immediate",
        ],
    );
    assert_eq!(results.len(), 2);
    assert!(results
        .iter()
        .all(|r| r["transport"] == "nats" && r["count"] == 2000));
}

#[test]
fn loopback_runs_on_inproc_with_two_repeaters() {
    let results = run_suite(
        "loopback-inproc",
        &[
            "loopback",
            "--size",
            "100",
            "--count",
            "500",
            "--subscribers",
            "2",
            "--wait",
            "spin-park",
        ],
    );
    assert_eq!(results.len(), 1);
    // Every repeater returns every update.
    assert_eq!(results[0]["count"], 1000);
    assert_eq!(results[0]["wait"], "spin-park");
}

#[test]
fn loopback_runs_over_nats() {
    let nats = nats_server();
    let url = nats.url();
    let results = run_suite(
        "loopback-nats",
        &[
            "loopback",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--size",
            "100",
            "--count",
            "500",
        ],
    );
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["count"], 500);
}

#[test]
fn timeadv_runs_on_inproc_in_both_process_models() {
    for model in ["evoked", "immediate"] {
        let results = run_suite(
            &format!("timeadv-inproc-{model}"),
            &[
                "timeadv",
                "--federates",
                "3",
                "--count",
                "100",
                "--process-model",
                model,
            ],
        );
        assert_eq!(results.len(), 1);
        assert_eq!(results[0]["variant"], "tar");
        assert_eq!(results[0]["federates"], 3);
        // Grants over all federates.
        assert_eq!(results[0]["count"], 300);
        assert!(results[0]["total_rate_per_s"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn timeadv_runs_over_nats_with_zero_lookahead() {
    let nats = nats_server();
    let url = nats.url();
    let results = run_suite(
        "timeadv-nats",
        &[
            "timeadv",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--federates",
            "3",
            "--count",
            "50",
            "--lookahead",
            "0",
        ],
    );
    assert_eq!(results.len(), 1);
    // Zero lookahead needs time advance request available to progress.
    assert_eq!(results[0]["variant"], "tara");
    assert_eq!(results[0]["count"], 150);
}

/// `glidepath bench bus TEST ... --json FILE` → its parsed rows.
fn run_bus(name: &str, args: &[&str]) -> Vec<Value> {
    let dir = scratch(name);
    let json = dir.join("results.json");
    let json_arg = json.to_str().unwrap().to_string();
    let mut full = vec!["bench", "bus"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--json", &json_arg]);
    let (ok, out, err) = run(&full);
    assert!(
        ok,
        "glidepath {full:?} failed\nstdout:\n{out}\nstderr:\n{err}"
    );
    let results: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    results
}

#[test]
fn bus_send_receive_runs_in_process_and_over_nats_next_to_raw_nats() {
    let inproc = run_bus(
        "bus-inproc",
        &[
            "send-receive",
            "--subscribers",
            "2",
            "--size",
            "200",
            "--count",
            "30",
            "--service",
            "safe",
        ],
    );
    let store = scratch("bus-js");
    let server = NatsServerProcess::start_with(
        None,
        &["--jetstream", "--store_dir", store.to_str().unwrap()],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let url = server.url();
    let plots = scratch("bus-plots");
    let nats = run_bus(
        "bus-nats",
        &[
            "send-receive",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--subscribers",
            "2",
            "--size",
            "200,2K",
            "--count",
            "30",
            "--service",
            "agreed",
            "--plot",
            plots.to_str().unwrap(),
        ],
    );
    // The paper's notched boxplots by size (Figs. 9-10), from every sample.
    let boxplot = std::fs::read(plots.join("bus-send-receive-nats-boxplot-by-size.png")).unwrap();
    assert!(boxplot.starts_with(b"\x89PNG"), "a PNG");
    let _ = std::fs::remove_dir_all(&plots);
    assert_eq!((inproc.len(), nats.len()), (1, 2));
    for r in inproc.iter().chain(&nats) {
        assert_eq!(r["suite"], "bus");
        assert_eq!(r["variant"], "send-receive");
        assert_eq!(r["lost"], 0, "{r}");
        assert_eq!(r["order_violations"], 0, "{r}");
        assert_eq!(r["received"], 60, "{r}");
        assert!(r["p99_us"].as_f64().unwrap() > 0.0, "{r}");
    }
    for r in &nats {
        assert!(
            r["raw_p50_us"].as_f64().unwrap() > 0.0,
            "raw NATS in the same run: {r}"
        );
    }
    let (ok, _, err) = run(&["bench", "bus", "send-receive", "--service", "total"]);
    assert!(!ok && err.contains("--service"), "{err}");
    let (ok, _, err) = run(&["bench", "bus", "receive"]);
    assert!(!ok && err.contains("send-receive"), "{err}");
    let _ = std::fs::remove_dir_all(&store);
}

/// Throughput with every subscriber, the raw NATS peer's too, a process of its own
/// (the paper's setup): everything arrives in order, and the JSON says where the
/// subscribers ran.
#[test]
fn bus_throughput_runs_its_subscribers_as_processes_over_nats() {
    let store = scratch("bus-processes-js");
    let server = NatsServerProcess::start_with(
        None,
        &["--jetstream", "--store_dir", store.to_str().unwrap()],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let url = server.url();
    let results = run_bus(
        "bus-processes",
        &[
            "throughput",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--processes",
            "--subscribers",
            "3",
            "--sizes",
            "1000",
            "--count",
            "200",
        ],
    );
    assert_eq!(results.len(), 1);
    for r in &results {
        assert_eq!(r["variant"], "throughput");
        assert_eq!(r["subscribers"], 3);
        assert_eq!(r["subscribers_in"], "processes", "{r}");
        assert_eq!(r["received"], 600, "{r}");
        assert_eq!(r["lost"], 0, "{r}");
        assert_eq!(r["order_violations"], 0, "{r}");
        assert!(r["p99_us"].as_f64().unwrap() > 0.0, "{r}");
        assert!(r["rate_per_s"].as_f64().unwrap() > 0.0, "{r}");
        assert!(
            r["raw_rate_per_s"].as_f64().unwrap() > 0.0,
            "raw NATS in the same run: {r}"
        );
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&store);
}

#[test]
fn bus_processes_are_refused_where_they_cannot_run() {
    let (ok, _, err) = run(&[
        "bench",
        "bus",
        "throughput",
        "--transport",
        "inproc",
        "--processes",
    ]);
    assert!(!ok);
    assert!(
        err.contains("--processes needs --transport nats: inproc cannot cross a process boundary"),
        "{err}"
    );
    let (ok, _, err) = run(&[
        "bench",
        "bus",
        "send-receive",
        "--transport",
        "nats",
        "--processes",
    ]);
    assert!(!ok);
    assert!(err.contains("only bus throughput"), "{err}");
}

#[test]
fn repeat_reports_each_runs_ratio_and_their_median() {
    let dir = scratch("repeat");
    let json = dir.join("repeat.json");
    let json_arg = json.to_str().unwrap().to_string();
    let args = [
        "bench",
        "latency",
        "--transport",
        "inproc",
        "--size",
        "200",
        "--count",
        "300",
        "--raw",
        "--repeat",
        "3",
        "--json",
        &json_arg,
    ];
    let (ok, out, err) = run(&args);
    assert!(
        ok,
        "glidepath {args:?} failed\nstdout:\n{out}\nstderr:\n{err}"
    );
    for i in 1..=3 {
        assert!(out.contains(&format!("run {i} of 3:")), "{out}");
    }
    assert!(out.contains("median"), "{out}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 3, "{doc}");
    for run in runs {
        for r in run.as_array().unwrap() {
            check_result(r);
        }
    }
    let ratios = doc["ratios"].as_array().unwrap();
    assert_eq!(ratios.len(), runs[0].as_array().unwrap().len(), "{doc}");
    for (i, summary) in ratios.iter().enumerate() {
        // Each run's ratio, in run order, and the middle one of the three as the median.
        let each: Vec<f64> = summary["ratio_p50"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_f64().unwrap())
            .collect();
        let from_runs: Vec<f64> = runs
            .iter()
            .map(|run| run[i]["ratio_p50"].as_f64().unwrap())
            .collect();
        assert_eq!(each, from_runs, "{summary}");
        let mut sorted = each.clone();
        sorted.sort_by(|a, b| a.total_cmp(b));
        assert_eq!(
            summary["median_ratio_p50"].as_f64().unwrap(),
            sorted[1],
            "{summary}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! `glidepath bench ddm` end to end: the binary runs both modes for each subscriber
//! count on `inproc` and over a real nats-server, and its JSON rows carry what the
//! issue asks for, with no update lost and none delivered outside its region.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use glidepath::backend::nats::NatsServerProcess;

mod support;
use serde_json::Value;
use support::glidepath;

/// Generous: a debug build on a shared machine.
const TIMEOUT: Duration = Duration::from_secs(120);

/// Runs `glidepath bench ddm ARGS --json FILE` and returns the rows.
fn bench_ddm(name: &str, args: &[&str]) -> Vec<Value> {
    let dir = std::env::temp_dir().join(format!(
        "glidepath-bench-ddm-test-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let json = dir.join("results.json");
    let mut full = vec!["bench", "ddm"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let child = glidepath(&full).spawn().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx
        .recv_timeout(TIMEOUT)
        .unwrap_or_else(|_| panic!("glidepath bench ddm {args:?} did not finish"))
        .unwrap();
    let (out, err) = (
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr),
    );
    assert!(
        output.status.success(),
        "bench ddm {args:?} failed\nstdout:\n{out}\nstderr:\n{err}"
    );
    assert!(out.contains("msgs/sub"), "no DDM table in:\n{out}");
    let rows: Vec<Value> = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    rows
}

/// Two rows per subscriber count, baseline first; nothing lost or misdelivered.
fn check(rows: &[Value], subscribers: &[u64]) {
    // Two rows per count, and with one subscriber a third: one fixed region.
    let ones = subscribers.iter().filter(|n| **n == 1).count();
    assert_eq!(rows.len(), 2 * subscribers.len() + ones, "{rows:#?}");
    let mut rows = rows.to_vec();
    if let Some(i) = rows.iter().position(|r| r["variant"] == "one-region") {
        let one = rows.remove(i);
        assert_eq!(one["subscribers"], 1, "{one}");
        assert_eq!(one["lost"], 0, "{one}");
        assert_eq!(one["false_negatives"], 0, "{one}");
        assert_eq!(one["false_positives"], 0, "{one}");
        assert_eq!(one["count"], one["received"], "{one}");
    }
    for (pair, n) in rows.chunks(2).zip(subscribers) {
        assert_eq!(pair[0]["variant"], "no-ddm");
        assert_eq!(pair[1]["variant"], "regions");
        for r in pair {
            assert_eq!(r["subscribers"], *n, "{r}");
            assert_eq!(r["lost"], 0, "{r}");
            assert_eq!(r["false_negatives"], 0, "{r}");
            assert_eq!(r["false_positives"], 0, "{r}");
            assert_eq!(r["count"], r["received"], "{r}");
        }
        // Without regions every subscriber expects every update; with them, the
        // ones in its cell (the cells tile the plane once).
        let total = |r: &Value| r["expected_per_subscriber"].as_f64().unwrap() * *n as f64;
        assert_eq!(
            total(&pair[1]),
            pair[0]["expected_per_subscriber"].as_f64().unwrap()
        );
    }
}

#[test]
fn on_inproc_a_subscriber_takes_in_about_its_share() {
    let rows = bench_ddm("inproc", &["--subscribers", "1,4", "--count", "2000"]);
    check(&rows, &[1, 4]);
    assert!(rows.iter().all(|r| r.get("wire_bytes_ratio").is_none()));
    // A quarter of the plane: a quarter of the updates, plus registrations and
    // statuses, which every subscriber takes in.
    let four = rows
        .iter()
        .find(|r| r["variant"] == "regions" && r["subscribers"] == 4)
        .expect("a regions row at 4 subscribers");
    let ratio = four["messages_ratio"].as_f64().unwrap();
    assert!(ratio < 0.4, "messages ratio {ratio} at 4 subscribers");
}

#[test]
fn over_nats_the_rows_carry_the_wire_figures() {
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let rows = bench_ddm(
        "nats",
        &[
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--subscribers",
            "4",
            "--count",
            "600",
        ],
    );
    check(&rows, &[4]);
    for r in &rows {
        assert!(
            r["wire_bytes_per_subscriber"].as_f64().unwrap() > 0.0,
            "{r}"
        );
        let ratio = r["wire_bytes_ratio"].as_f64().unwrap();
        if r["variant"] == "regions" {
            // Cells: each subscriber's connection reads about a quarter of the
            // updates (each a little larger), not all of them.
            assert!(ratio < 0.6, "{r}");
        } else {
            assert_eq!(ratio, 1.0, "{r}");
        }
    }
}

#[test]
fn the_raw_peer_is_refused_with_a_reason() {
    let output = glidepath(&["bench", "ddm", "--raw", "--subscribers", "1"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(err.contains("no raw peer"), "{err}");
}

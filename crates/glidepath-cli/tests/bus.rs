//! `glidepath bus window`: the 10 Hz soft real-time check, in one process and over a
//! real `nats-server` with JetStream, and its refusal of bad flags.

mod support;
use support::glidepath;

use glidepath::backend::nats::NatsServerProcess;
use serde_json::Value;

/// Runs `glidepath bus window ARGS --json F`; the parsed report.
fn window(args: &[&str]) -> Value {
    let json = std::env::temp_dir().join(format!(
        "glidepath-bus-window-{}-{}.json",
        std::process::id(),
        glidepath::monotonic_now_ns()
    ));
    let mut full = vec!["bus", "window"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["--json", json.to_str().unwrap()]);
    let out = glidepath(&full).output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{full:?}\n{stdout}\n{stderr}");
    assert!(stdout.contains("deliveries on time"), "{stdout}");
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    report
}

/// Every consumer got every update once, each classified exactly once.
fn check_complete(r: &Value, sent: u64, consumers: usize) {
    assert_eq!(r["sent"], sent, "{r}");
    let cs = r["consumers"].as_array().unwrap();
    assert_eq!(cs.len(), consumers);
    for c in cs {
        assert_eq!(c["received"], sent, "{c}");
        assert_eq!(c["lost"], 0, "{c}");
        let classified = ["on_time", "early", "late"]
            .iter()
            .map(|k| c[k].as_u64().unwrap())
            .sum::<u64>();
        assert_eq!(classified, sent, "{c}");
        assert_eq!(c["offset_ms"]["count"], sent, "{c}");
    }
}

#[test]
fn window_in_process_counts_every_update_and_a_lead_makes_them_early() {
    let r = window(&["--consumers", "2", "--seconds", "1", "--rate-hz", "20"]);
    check_complete(&r, 20, 2);
    assert_eq!(r["transport"], "inproc");
    for c in r["consumers"].as_array().unwrap() {
        assert_eq!(c["early"], 0, "sent at the nominal time: {c}");
    }
    // Sent 500 ms ahead with a 20 ms early bound: every update is early.
    let r = window(&["--seconds", "0.5", "--rate-hz", "20", "--lead-ms", "500"]);
    check_complete(&r, 10, 1);
    assert_eq!(r["consumers"][0]["early"], 10, "{r}");
    assert_eq!(r["lead_ms"], 500.0);
}

#[test]
fn window_over_nats_with_safe_and_background_load() {
    let store =
        std::env::temp_dir().join(format!("glidepath-bus-window-js-{}", std::process::id()));
    let server = NatsServerProcess::start_with(
        None,
        &["--jetstream", "--store_dir", store.to_str().unwrap()],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let url = server.url();
    let r = window(&[
        "--transport",
        "nats",
        "--nats-url",
        &url,
        "--consumers",
        "2",
        "--seconds",
        "1",
        "--rate-hz",
        "20",
        "--service",
        "safe",
        "--load-threads",
        "1",
        "--load-rate",
        "500",
    ]);
    check_complete(&r, 20, 2);
    assert_eq!(
        (r["transport"].as_str(), r["level"].as_str()),
        (Some("nats"), Some("safe"))
    );
    assert!(r["load_sent"].as_u64().unwrap() > 0, "{r}");
    drop(server);
    let _ = std::fs::remove_dir_all(&store);
}

#[test]
fn window_refuses_bad_flags_naming_them() {
    for (args, names) in [
        (&["--service", "total"][..], "--service"),
        (&["--encoding", "json"][..], "--encoding"),
        (&["--rate-hz", "0"][..], "--rate-hz"),
        (&["--seconds", "nan"][..], "--seconds"),
        (&["--late-ms", "1e9"][..], "--late-ms"),
    ] {
        let mut full = vec!["bus", "window"];
        full.extend_from_slice(args);
        let out = glidepath(&full).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(stderr.contains(names), "{args:?}: {stderr}");
    }
}

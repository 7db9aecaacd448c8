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

/// Writes a bridge configuration to a scratch file.
fn bridge_config(name: &str, text: &str) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!(
        "glidepath-bridge-{name}-{}-{}.toml",
        std::process::id(),
        glidepath::monotonic_now_ns()
    ));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn bridge_forwards_both_ways_and_counts_what_it_refuses() {
    use futures::StreamExt;
    use glidepath::bus::{Bus, BusConfig, Message, ServiceLevel, Subject};
    use std::io::{BufRead, BufReader};
    let store = std::env::temp_dir().join(format!("glidepath-bridge-js-{}", std::process::id()));
    let server = NatsServerProcess::start_with(
        None,
        &["--jetstream", "--store_dir", store.to_str().unwrap()],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let url = server.url();
    let config = bridge_config(
        "run",
        &format!(
            "[bus]\nnats_url = \"{url}\"\ngroup = \"FFTB\"\n\n\
             [[to_nats]]\npattern = \"FFTB.MMS.*.DATA.TRUTH.>\"\nprefix = \"fftb.json\"\n\n\
             [[from_nats]]\nsubject = \"fftb.in.>\"\nlevel = \"fifo\"\n"
        ),
    );
    let mut child = glidepath(&[
        "bus",
        "bridge",
        config.to_str().unwrap(),
        "--seconds",
        "6",
        "--report-s",
        "1",
    ])
    .spawn()
    .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("running"), "{line}");

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let client = runtime.block_on(async_nats::connect(url.clone())).unwrap();
    let mut out = runtime
        .block_on(client.subscribe("fftb.json.>".to_string()))
        .unwrap();
    let _ =
        runtime.block_on(client.request("settle.cli.bridge".to_string(), glidepath::Bytes::new()));
    let bus_config = BusConfig {
        default_group: Subject::new("FFTB").unwrap(),
        ..BusConfig::nats(&url)
    };
    let stars = Bus::connect(&bus_config).unwrap();
    let commands = stars
        .subscribe(&glidepath::bus::Pattern::new("FFTB.MMS.*.CMD.>").unwrap())
        .unwrap();
    stars
        .publish(
            &Subject::new("FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL").unwrap(),
            &Message::new().with("x", 7000.5f64),
            ServiceLevel::Agreed,
        )
        .unwrap();
    let m = runtime
        .block_on(async {
            tokio::time::timeout(std::time::Duration::from_secs(10), out.next()).await
        })
        .expect("the truth message on NATS in time")
        .unwrap();
    let json: Value = serde_json::from_slice(&m.payload).unwrap();
    assert_eq!(json["entries"][0]["val"], "7000.5", "{json}");

    for body in [
        r#"{"subject":"FFTB.MMS.SAT1.CMD.MANEUVER.FE.BURN","entries":[{"key":"dv","typ":"D","val":"0.25"}]}"#,
        r#"{"subject":"FFTB.MMS.SAT1.CMD.X","entries":[{"key":"dv","typ":"D","val":"fast"}]}"#,
    ] {
        runtime
            .block_on(client.publish("fftb.in.cmd".to_string(), glidepath::Bytes::from(body)))
            .unwrap();
    }
    runtime.block_on(client.flush()).unwrap();
    let Some(glidepath::bus::Event::Message(d)) = commands
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap()
    else {
        panic!("the command on the bus");
    };
    assert_eq!(d.message.get_f64("dv").unwrap(), 0.25);

    let out = child.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{rest}");
    let last = stdout.lines().last().unwrap_or_default();
    assert_eq!(
        last, "bridge: 1 to NATS, 1 from NATS, 1 refused (not bus messages in JSON), 0 failed",
        "{stdout}"
    );
    assert!(
        rest.contains("entry 0 (`dv`)") && rest.contains("fast"),
        "the refusal says why: {rest}"
    );
    let _ = std::fs::remove_file(&config);
    drop((commands, stars));
    drop(server);
    let _ = std::fs::remove_dir_all(&store);
}

#[test]
fn bridge_refuses_bad_configurations_naming_file_and_route() {
    for (text, says) in [
        (
            "[[to_nats]]\npattern = \"fftb.lower\"\nprefix = \"p\"\n",
            "to_nats route 1: pattern",
        ),
        (
            "[[to_nats]]\npattern = \"A.>\"\nprefix = \"p q\"\n",
            "prefix `p q`",
        ),
        (
            "[[from_nats]]\nsubject = \"in.>\"\nlevel = \"total\"\n",
            "from_nats route 1: level",
        ),
        (
            "[[from_nats]]\nsubject = \"in.>.x\"\n",
            "is not a NATS subject",
        ),
        (
            "[bus]\ntransport = \"carrier-pigeon\"\n[[from_nats]]\nsubject = \"in\"\n",
            "transport",
        ),
        ("[bus]\ncolour = 1\n", "unknown field"),
        (
            "[[to_hla]]\npattern = \"A.>\"\nclass = \"C\"\nparameters = { a = \"b\" }\n",
            "need an [hla] section",
        ),
        (
            "[hla]\nfederation = \"f\"\n[[from_hla]]\nclass = \"C\"\nsubject = \"a.b\"\nparameters = { a = \"B\" }\n",
            "from_hla route 1: subject `a.b`",
        ),
        ("", "no routes"),
    ] {
        let path = bridge_config("bad", text);
        let out = glidepath(&["bus", "bridge", path.to_str().unwrap(), "--seconds", "1"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{text:?} was accepted");
        assert!(stderr.contains(says), "{text:?}: {stderr}");
        assert!(
            stderr.contains(path.file_name().unwrap().to_str().unwrap()),
            "{text:?} names the file: {stderr}"
        );
        let _ = std::fs::remove_file(&path);
    }
}

#[test]
fn bridge_to_hla_forwards_both_ways_with_the_fom_types() {
    use glidepath::bus::{Bus, BusConfig, Event, Message, Pattern, ServiceLevel, Subject, Value};
    use glidepath::fom::Value as HlaValue;
    use glidepath::{Callback, JoinOptions, ResignAction, Rti, RtiConfig, TransportKind};
    use std::io::{BufRead, BufReader};
    use std::time::{Duration, Instant};
    let store = std::env::temp_dir().join(format!("glidepath-bridge-hla-{}", std::process::id()));
    let server = NatsServerProcess::start_with(
        None,
        &["--jetstream", "--store_dir", store.to_str().unwrap()],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let url = server.url();
    // The shipped example, as a user runs it.
    let mut child = glidepath(&[
        "bus",
        "bridge",
        "examples/bus/bridge-hla.toml",
        "--nats-url",
        &url,
        "--seconds",
        "8",
        "--report-s",
        "1",
    ])
    .spawn()
    .unwrap();
    let mut stderr = BufReader::new(child.stderr.take().unwrap());
    // The bridge says it runs once both sides are up (log lines may come first).
    let mut said = String::new();
    while !said.contains("running") {
        let mut line = String::new();
        assert!(
            stderr.read_line(&mut line).unwrap() > 0,
            "the bridge ended: {said}"
        );
        said.push_str(&line);
    }
    assert!(
        said.contains("1 to HLA and 1 from HLA (federation `formation`)"),
        "{said}"
    );

    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = url.clone();
    let rti = Rti::from_config(&config).unwrap();
    let fe = rti
        .join("formation", JoinOptions::named("flight-executive", "fe"))
        .unwrap();
    let truth = fe.interaction_class_handle("TruthState").unwrap();
    fe.subscribe_interaction_class(truth).unwrap();
    let thrust = fe.interaction_class_handle("ThrustCommand").unwrap();
    fe.publish_interaction_class(thrust).unwrap();
    let bus = Bus::connect(&BusConfig {
        default_group: Subject::new("FFTB").unwrap(),
        ..BusConfig::nats(&url)
    })
    .unwrap();
    let thruster = bus
        .subscribe(&Pattern::new("FFTB.MMS.*.CMD.>").unwrap())
        .unwrap();

    let mut m = Message::new();
    m.set("SAT", "SAT1");
    for (k, v) in [
        ("T", 0.1),
        ("X", 7000.5),
        ("Y", 0.0),
        ("Z", 0.0),
        ("VX", 0.0),
        ("VY", 7.5),
        ("VZ", 0.0),
    ] {
        m.set(k, v);
    }
    bus.publish(
        &Subject::new("FFTB.MMS.SAT1.DATA.TRUTH.SIM.POSVEL").unwrap(),
        &m,
        ServiceLevel::Fifo,
    )
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let x = loop {
        assert!(
            Instant::now() < deadline,
            "no TruthState reached the federate"
        );
        if let Some(Callback::ReceiveInteraction { values, .. }) =
            fe.next_callback(Duration::from_millis(50))
        {
            let px = fe.parameter_handle(truth, "x").unwrap();
            let bytes = &values.iter().find(|(p, _)| *p == px).unwrap().1;
            break fe.fom().decode_value("HLAfloat64BE", bytes).unwrap();
        }
    };
    assert_eq!(x, HlaValue::Float(7000.5));

    let fom = fe.fom().clone();
    let p = |n: &str| fe.parameter_handle(thrust, n).unwrap();
    let enc = |dt: &str, v: HlaValue| glidepath::Bytes::from(fom.encode_value(dt, &v).unwrap());
    fe.send_interaction(
        thrust,
        [
            (
                p("satellite"),
                enc("HLAunicodeString", HlaValue::Text("SAT1".into())),
            ),
            (p("burnId"), enc("HLAinteger32BE", HlaValue::Int(3))),
            (p("deltaV"), enc("HLAfloat32BE", HlaValue::Float(0.5))),
            (p("armed"), enc("HLAboolean", HlaValue::Bool(false))),
        ],
        glidepath::Bytes::new(),
    )
    .unwrap();
    let d = loop {
        match thruster.recv_timeout(Duration::from_secs(10)).unwrap() {
            Some(Event::Message(d)) => break d,
            Some(Event::Membership(_)) => continue,
            None => panic!("no command reached the bus"),
        }
    };
    assert_eq!(d.subject.as_str(), "FFTB.MMS.SAT1.CMD.MANEUVER.FE.BURN");
    assert_eq!(d.message.get("BURN"), Some(&Value::I32(3)));
    assert_eq!(d.message.get("DV"), Some(&Value::F32(0.5)));
    assert_eq!(d.message.get("ARMED"), Some(&Value::Bool(false)));
    fe.resign(ResignAction::DeleteObjects).unwrap();
    bus.close();

    let out = child.wait_with_output().unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{rest}");
    assert_eq!(
        stdout.lines().last().unwrap_or_default(),
        "bridge: 1 to HLA, 1 from HLA, 0 refused to HLA, 0 refused from HLA, 0 failed",
        "{stdout}"
    );
    drop(server);
    let _ = std::fs::remove_dir_all(&store);
}

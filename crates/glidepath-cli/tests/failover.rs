//! No single point of failure in the executive: two `glidepath server --failover`
//! processes on a JetStream-enabled `nats-server`, one active and one standing by.
//! The active one is killed with SIGKILL in the middle of a federation's run; the
//! standby takes over with the whole state (the federation, its members and their
//! names), the federation goes on, and a federate joins afterwards. The takeover
//! delay is printed.

use std::time::{Duration, Instant};

mod support;
use support::{workspace_root, FailoverServer};

use glidepath::backend::nats::NatsServerProcess;
use glidepath::{Bytes, Callback, JoinOptions, ResignAction, Rti, RtiConfig, TransportKind};

const TIMEOUT: Duration = Duration::from_secs(30);

fn next_interaction(f: &glidepath::Federate) -> Bytes {
    let deadline = Instant::now() + TIMEOUT;
    loop {
        assert!(Instant::now() < deadline, "no interaction arrived");
        if let Some(Callback::ReceiveInteraction { values, .. }) =
            f.next_callback(Duration::from_millis(50))
        {
            return values[0].1.clone();
        }
    }
}

#[test]
fn a_standby_executive_takes_over_when_the_active_one_is_killed() {
    let store = std::env::temp_dir().join(format!("glidepath-failover-{}", std::process::id()));
    let store_arg = store.display().to_string();
    let nats = NatsServerProcess::start_with(None, &["--jetstream", "--store_dir", &store_arg])
        .unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let mut first = FailoverServer::start(&url, &[]);
    first.expect("active");
    let second = FailoverServer::start(&url, &[]);
    second.expect("standing by");

    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = url.clone();
    let rti = Rti::from_config(&config).unwrap();
    let fom = workspace_root().join("foms/benchmark.xml");
    rti.create_federation_execution("failover", &[fom]).unwrap();
    let a = rti
        .join("failover", JoinOptions::named("a", "test"))
        .unwrap();
    let b = rti
        .join("failover", JoinOptions::named("b", "test"))
        .unwrap();
    let class = a.interaction_class_handle("BenchInteraction").unwrap();
    let payload = a.parameter_handle(class, "payload").unwrap();
    a.publish_interaction_class(class).unwrap();
    b.subscribe_interaction_class(class).unwrap();
    a.send_interaction(
        class,
        [(payload, Bytes::from_static(b"before"))],
        Bytes::new(),
    )
    .unwrap();
    assert_eq!(&next_interaction(&b)[..], b"before");

    // SIGKILL: the lease is not released, it expires.
    first.child.kill().unwrap();
    let killed = Instant::now();
    first.child.wait().unwrap();
    // The federation goes on without any executive: data does not pass through it.
    a.send_interaction(
        class,
        [(payload, Bytes::from_static(b"during"))],
        Bytes::new(),
    )
    .unwrap();
    assert_eq!(&next_interaction(&b)[..], b"during");
    second.expect("active");
    let takeover = killed.elapsed();

    // A federate joins afterwards: the successor knows the federation and its
    // members (the name "a" is still taken).
    let c = rti
        .join("failover", JoinOptions::named("c", "test"))
        .unwrap_or_else(|e| panic!("joining after the failover: {e}"));
    let joined = killed.elapsed();
    let taken = rti.join("failover", JoinOptions::named("a", "test"));
    assert!(taken.is_err(), "the name `a` must still be in use");
    c.subscribe_interaction_class(class).unwrap();
    a.send_interaction(
        class,
        [(payload, Bytes::from_static(b"after"))],
        Bytes::new(),
    )
    .unwrap();
    assert_eq!(&next_interaction(&b)[..], b"after");
    assert_eq!(&next_interaction(&c)[..], b"after");
    eprintln!(
        "failover: the standby took over {takeover:?} after the SIGKILL; a federate joined {joined:?} after it"
    );
    for f in [a, b, c] {
        f.resign(ResignAction::DeleteObjects).unwrap();
    }
    rti.destroy_federation_execution("failover").unwrap();
    drop(second);
    drop(nats);
    let _ = std::fs::remove_dir_all(store);
}

/// The log's stream as the NATS server's monitoring endpoint reports it:
/// (messages, first sequence, last sequence).
fn log_stream_state(monitor_port: u16) -> (u64, u64, u64) {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", monitor_port)).unwrap();
    write!(
        conn,
        "GET /jsz?accounts=true&streams=true HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    conn.read_to_string(&mut response).unwrap();
    let body = &response[response.find("\r\n\r\n").expect("an HTTP response") + 4..];
    let jsz: serde_json::Value = serde_json::from_str(body).unwrap();
    let streams = jsz["account_details"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|a| a["stream_detail"].as_array().into_iter().flatten());
    for s in streams {
        if s["name"] == "GLIDEPATH_EXECUTIVE_LOG" {
            let st = &s["state"];
            return (
                st["messages"].as_u64().unwrap(),
                st["first_seq"].as_u64().unwrap(),
                st["last_seq"].as_u64().unwrap(),
            );
        }
    }
    panic!("no executive log stream in {body}");
}

/// Snapshots keep the log short: after hundreds of requests the log holds at most
/// about `--snapshot-every` entries, and a server started afterwards (which can only
/// read the log from its latest snapshot) rebuilds the whole state and takes over.
#[test]
fn snapshots_keep_the_log_short_and_a_late_standby_rebuilds_from_them() {
    let store = std::env::temp_dir().join(format!("glidepath-compact-{}", std::process::id()));
    let store_arg = store.display().to_string();
    let monitor = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let monitor_port = monitor.local_addr().unwrap().port();
    drop(monitor);
    let nats = NatsServerProcess::start_with(
        None,
        &[
            "--jetstream",
            "--store_dir",
            &store_arg,
            "-m",
            &monitor_port.to_string(),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let every = 16u64;
    let every_arg = every.to_string();
    let mut first = FailoverServer::start(&url, &["--snapshot-every", &every_arg]);
    first.expect("active");

    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = url.clone();
    let rti = Rti::from_config(&config).unwrap();
    let fom = workspace_root().join("foms/benchmark.xml");
    rti.create_federation_execution("compact", &[fom]).unwrap();
    let keeper = rti
        .join("compact", JoinOptions::named("keeper", "test"))
        .unwrap();
    let churn = 100;
    for k in 0..churn {
        let f = rti
            .join("compact", JoinOptions::named(format!("churn-{k}"), "test"))
            .unwrap();
        f.resign(ResignAction::DeleteObjects).unwrap();
    }
    let (messages, first_seq, last_seq) = log_stream_state(monitor_port);
    eprintln!(
        "log after {} requests: {messages} entries, {first_seq}..={last_seq}",
        2 + 2 * churn
    );
    assert!(
        last_seq > 2 * churn as u64,
        "every request is logged: last {last_seq}"
    );
    assert!(
        messages <= every + 1 && first_seq > 1,
        "the log was not cut short: {messages} entries from {first_seq} to {last_seq}"
    );

    // A standby started now reads only the latest snapshot and what follows it.
    let second = FailoverServer::start(&url, &["--snapshot-every", &every_arg]);
    second.expect("standing by");
    first.child.kill().unwrap();
    first.child.wait().unwrap();
    second.expect("active");
    let taken = rti.join("compact", JoinOptions::named("keeper", "test"));
    assert!(taken.is_err(), "the name `keeper` must still be in use");
    let late = rti
        .join("compact", JoinOptions::named("late", "test"))
        .unwrap_or_else(|e| panic!("joining after the takeover: {e}"));
    // Handles go on from where the snapshot left them: never reused.
    assert!(
        late.handle().0 > churn + 1,
        "handle {:?} reused after the snapshot",
        late.handle()
    );
    for f in [late, keeper] {
        f.resign(ResignAction::DeleteObjects).unwrap();
    }
    rti.destroy_federation_execution("compact").unwrap();
    drop(second);
    drop(nats);
    let _ = std::fs::remove_dir_all(store);
}

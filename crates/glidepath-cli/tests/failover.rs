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

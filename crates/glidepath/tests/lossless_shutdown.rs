//! Lossless shutdown (the ATM TestBed report's Table 4.3 lost messages at shutdown;
//! we lose none): one federate publishes a million updates and resigns right after
//! the last one; the other receives exactly a million, in order. On every backend.

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::*;
use glidepath::{Bytes, Callback, Federate, ResignAction, Rti};

const UPDATES: u64 = 1_000_000;

/// Publishes the million updates from `sender` and resigns right after the last one.
fn send_a_million_then_resign(sender: Federate) {
    let n = Names::of(&sender);
    sender
        .publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let instance = sender.register_object_instance(n.vehicle).unwrap();
    for i in 1..=UPDATES {
        sender
            .update_attribute_values(
                instance,
                [(n.label, Bytes::copy_from_slice(&i.to_be_bytes()))],
                Bytes::new(),
            )
            .unwrap();
    }
    // Immediately: the drain on resign is what is under test.
    sender.resign(ResignAction::DeleteObjects).unwrap();
}

/// Receives until the sender's instance is removed: exactly the million, in order.
fn receive_the_million(receiver: &Federate) {
    let mut expected = 1u64;
    let mut discovered = false;
    loop {
        match next(receiver) {
            Callback::DiscoverObjectInstance { .. } => discovered = true,
            Callback::ReflectAttributeValues { values, .. } => {
                let got = u64::from_be_bytes(values[0].1[..].try_into().unwrap());
                assert_eq!(got, expected, "update lost, duplicated or reordered");
                expected += 1;
            }
            Callback::RemoveObjectInstance { .. } => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert!(discovered);
    assert_eq!(expected - 1, UPDATES, "updates received before the removal");
    assert_eq!(receiver.stats().out_of_order, 0);
}

/// Creates federation `name` and joins the receiver, subscribed.
fn receiver_of(rti: &Rti, name: &str) -> Federate {
    rti.create_federation_execution_with_fom(name, vehicles_fom())
        .unwrap();
    let receiver = join(rti, name, "receiver");
    let n = Names::of(&receiver);
    receiver
        .subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    receiver
}

/// Runs the million-update shutdown on `rti` (whose federation `name` uses the test
/// FOM); returns how long it took.
fn publish_a_million_then_resign(rti: &Rti, name: &str) -> Duration {
    let receiver = receiver_of(rti, name);
    let sender = join(rti, name, "sender");
    let started = Instant::now();
    thread::scope(|s| {
        s.spawn(|| send_a_million_then_resign(sender));
        receive_the_million(&receiver);
    });
    let took = started.elapsed();
    assert_eq!(receiver.transport_stats().lost_envelopes, 0);
    receiver.resign(ResignAction::DeleteObjects).unwrap();
    rti.destroy_federation_execution(name).unwrap();
    eprintln!("{}: {UPDATES} updates in {took:?}", rti.transport_name());
    took
}

#[test]
fn a_million_updates_then_resign_lose_nothing_inproc() {
    publish_a_million_then_resign(&Rti::inproc(), "shutdown-inproc");
}

#[cfg(feature = "transport-nats")]
#[test]
fn a_million_updates_then_resign_lose_nothing_over_nats() {
    let testbed = glidepath::backend::nats::NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let rti = Rti::nats(&testbed.url()).unwrap();
    publish_a_million_then_resign(&rti, "shutdown-nats");
}

/// The same with bundling on (16 KiB / 1 ms): resign sends the last bundle before it
/// drains, so nothing waiting in the bundler is lost either.
#[cfg(feature = "transport-nats")]
#[test]
fn a_million_updates_then_resign_lose_nothing_over_nats_with_bundling() {
    let testbed = glidepath::backend::nats::NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let mut config = glidepath::RtiConfig::default();
    config.transport = glidepath::TransportKind::Nats;
    config.nats_url = testbed.url();
    config.bundle = glidepath::BundleConfig {
        bundle_bytes_max: 16 << 10,
        bundle_time_ns_max: 1_000_000,
    };
    let rti = Rti::from_config(&config).unwrap();
    publish_a_million_then_resign(&rti, "shutdown-nats-bundled");
}

/// The same through shared memory, every federate in this process (each envelope still
/// goes through the receiver's ring, encoded).
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
#[test]
fn a_million_updates_then_resign_lose_nothing_over_shm() {
    let name = format!("shutdown-{}", std::process::id());
    let host = glidepath::ShmTransport::host(&name, glidepath::backend::ShmOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let rti = Rti::with_transport(std::sync::Arc::new(host));
    publish_a_million_then_resign(&rti, "shutdown-shm");
}

/// Through shared memory across processes: this test runs again as a child process
/// (`GLIDEPATH_SHUTDOWN_SENDER` names the system) that joins, publishes the million
/// updates and resigns right after the last one; this process receives them.
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
#[test]
fn a_million_updates_from_another_process_then_resign_lose_nothing_over_shm() {
    const SENDER_ENV: &str = "GLIDEPATH_SHUTDOWN_SENDER";
    const FEDERATION: &str = "shutdown-shm-processes";
    if let Ok(system) = std::env::var(SENDER_ENV) {
        let rti = Rti::shm_with(&system, glidepath::backend::ShmOptions::default()).unwrap();
        send_a_million_then_resign(join(&rti, FEDERATION, "sender"));
        return;
    }
    let system = format!("shutdown-proc-{}", std::process::id());
    let host = glidepath::ShmTransport::host(&system, glidepath::backend::ShmOptions::default())
        .unwrap_or_else(|e| panic!("{e}"));
    let rti = Rti::with_transport(std::sync::Arc::new(host));
    let receiver = receiver_of(&rti, FEDERATION);
    let started = Instant::now();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_million_updates_from_another_process_then_resign_lose_nothing_over_shm",
            "--test-threads=1",
        ])
        .env(SENDER_ENV, &system)
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    receive_the_million(&receiver);
    assert!(
        child.wait().unwrap().success(),
        "the sending process failed"
    );
    receiver.resign(ResignAction::DeleteObjects).unwrap();
    rti.destroy_federation_execution(FEDERATION).unwrap();
    eprintln!(
        "shm across processes: {UPDATES} updates in {:?}",
        started.elapsed()
    );
}

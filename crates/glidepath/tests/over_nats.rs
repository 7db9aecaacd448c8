//! The front API over the `nats` transport with a real `nats-server` and an
//! executive server started by each test: federates exchange updates and advance
//! time in lock-step, configuration picks the backend, and a missing server is a
//! clear error.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

mod common;

use std::thread;

use common::*;
use glidepath::backend::nats::NatsTestbed;
use glidepath::{Callback, ConfigError, OrderType, Rti, RtiConfig, TransportKind};

/// A NATS server with an executive, and an RTI on it (dropped first).
struct Fixture {
    rti: Rti,
    testbed: NatsTestbed,
}

fn fixture() -> Fixture {
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = testbed.url();
    let rti = Rti::from_config(&config).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(rti.transport_name(), "nats");
    Fixture { rti, testbed }
}

#[test]
fn two_federates_exchange_updates_in_lock_step_for_a_hundred_steps() {
    const STEPS: u32 = 100;
    let f = fixture();
    f.rti
        .create_federation_execution_with_fom("lock-step", vehicles_fom())
        .unwrap();
    // Two RTIs on the same server: as if the federates were in two processes.
    let other = Rti::nats(&f.testbed.url()).unwrap();
    let fa = join(&f.rti, "lock-step", "a");
    let fb = join(&other, "lock-step", "b");
    let n = Names::of(&fa);
    for x in [&fa, &fb] {
        x.publish_object_class_attributes(n.vehicle, &[n.label, n.position])
            .unwrap();
        x.subscribe_object_class_attributes(n.vehicle, &[n.label, n.position])
            .unwrap();
        regulating_and_constrained(x, 1.0);
    }
    thread::scope(|s| {
        for (me, peer_name) in [(&fa, "b"), (&fb, "a")] {
            let n = &n;
            s.spawn(move || {
                let instance = me.register_object_instance(n.vehicle).unwrap();
                let mut reflected = Vec::new();
                let mut discovered = false;
                for step in 1..=STEPS {
                    let time = f64::from(step);
                    me.update_attribute_values_at(
                        instance,
                        [(n.position, b(&format!("{} at {step}", me.name())))],
                        "position",
                        time,
                    )
                    .unwrap();
                    me.time_advance_request(time).unwrap();
                    let (grant, skipped) = wait_for(me, "a grant", |c| {
                        matches!(c, Callback::TimeAdvanceGrant { .. })
                    });
                    assert!(
                        matches!(grant, Callback::TimeAdvanceGrant { time: g } if g == t(time)),
                        "{grant:?}"
                    );
                    for cb in skipped {
                        match cb {
                            Callback::DiscoverObjectInstance { .. } => discovered = true,
                            Callback::ReflectAttributeValues { values, info, .. } => {
                                assert_eq!(info.received_order, OrderType::TimeStamp);
                                let at = info.time.expect("time-stamped");
                                assert!(at <= t(time), "reflected {at:?} after granting {time}");
                                reflected.push(values[0].1.clone());
                            }
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                }
                assert!(
                    discovered,
                    "{} never discovered {peer_name}'s object",
                    me.name()
                );
                // The peer's update for the last step arrives with the last grant
                // at the latest: every one of the peer's updates, in order.
                let expected: Vec<_> = (1..=STEPS)
                    .map(|s| b(&format!("{peer_name} at {s}")))
                    .collect();
                assert_eq!(reflected, expected, "{}", me.name());
            });
        }
    });
    for x in [&fa, &fb] {
        assert_eq!(x.query_logical_time(), t(f64::from(STEPS)));
        assert_eq!(x.transport_stats().lost_envelopes, 0);
        assert_eq!(x.transport_stats().malformed_envelopes, 0);
    }
    fa.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    fb.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    f.rti.destroy_federation_execution("lock-step").unwrap();
}

#[test]
fn the_federation_lives_in_the_executive_server() {
    let f = fixture();
    f.rti
        .create_federation_execution_with_fom("shared", vehicles_fom())
        .unwrap();
    // Another RTI on the same server sees the same federation.
    let other = Rti::nats(&f.testbed.url()).unwrap();
    let err = other
        .create_federation_execution_with_fom("shared", vehicles_fom())
        .unwrap_err();
    assert!(err.to_string().contains("shared"), "{err}");
    let a = join(&f.rti, "shared", "a");
    let b = join(&other, "shared", "b");
    let names: Vec<String> = b
        .list_federates()
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(names, ["a", "b"]);
    assert!(f.testbed.executive.requests() > 0);
    assert_eq!(f.testbed.executive.malformed_requests(), 0);
    a.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    b.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    other.destroy_federation_execution("shared").unwrap();
}

#[test]
fn no_nats_server_is_a_clear_configuration_error() {
    // A port nothing listens on: bind one, note it, let it go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("nats://127.0.0.1:{port}");
    match Rti::nats(&url) {
        Err(ConfigError::Unavailable { transport, reason }) => {
            assert_eq!(transport, "nats");
            assert!(reason.contains(&url), "{reason}");
        }
        other => panic!("expected Unavailable, got {other:?}"),
    }
}

#[test]
fn no_executive_server_is_a_clear_error() {
    let server =
        glidepath::backend::nats::NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let rti = Rti::nats(&server.url()).unwrap();
    let err = rti
        .create_federation_execution_with_fom("x", vehicles_fom())
        .unwrap_err();
    assert!(
        err.to_string().contains("glidepath server --nats-url"),
        "{err}"
    );
}

/// An evoked federate that stops evoking while a peer in another process publishes
/// to it: its queue of callbacks stops growing at a bound, the rest waits in the
/// transport, whose bound makes the sender wait (reliable flow control) instead of
/// this process growing; when it evokes again, everything arrives once, in order.
#[test]
fn an_evoked_federate_that_stops_evoking_holds_its_sender_back() {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{Duration, Instant};
    // More than the receiver can hold: its callback queue and inbox (131,072 each)
    // and the NATS client's buffer.
    const TOTAL: u64 = 600_000;
    let f = fixture();
    f.rti
        .create_federation_execution_with_fom("backlog", vehicles_fom())
        .unwrap();
    let other = Rti::nats(&f.testbed.url()).unwrap();
    let sender = join(&f.rti, "backlog", "sender");
    let idle = join(&other, "backlog", "idle");
    let n = Names::of(&sender);
    sender.publish_interaction_class(n.alert).unwrap();
    idle.subscribe_interaction_class(n.alert).unwrap();
    let sent = AtomicU64::new(0);
    thread::scope(|s| {
        s.spawn(|| {
            for i in 0..TOTAL {
                sender
                    .send_interaction(
                        n.alert,
                        [(
                            n.message,
                            glidepath::Bytes::copy_from_slice(&i.to_le_bytes()),
                        )],
                        "",
                    )
                    .unwrap();
                sent.fetch_add(1, Ordering::Relaxed);
            }
        });
        // Wait until the sender is held back: nothing sent for a second.
        let deadline = Instant::now() + Duration::from_secs(120);
        let mut last = (u64::MAX, Instant::now());
        loop {
            let now = sent.load(Ordering::Relaxed);
            if now != last.0 {
                last = (now, Instant::now());
            } else if last.1.elapsed() > Duration::from_secs(1) {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "the sender never stopped ({now} sent)"
            );
            thread::sleep(Duration::from_millis(50));
        }
        let held_at = sent.load(Ordering::Relaxed);
        assert!(
            held_at < TOTAL,
            "the sender was not held back: it sent all {TOTAL}"
        );
        let queued = idle.pending_callbacks();
        eprintln!("sender held back after {held_at} of {TOTAL}; {queued} callbacks queued");
        assert!(
            queued <= 131_072 + 256,
            "{queued} callbacks queued for a federate that does not evoke"
        );
        // Evoke again: every message arrives, once, in order.
        for expected in 0..TOTAL {
            match next(&idle) {
                Callback::ReceiveInteraction { values, .. } => {
                    let got = u64::from_le_bytes(values[0].1[..].try_into().unwrap());
                    assert_eq!(got, expected, "held back at {held_at}, {queued} queued");
                }
                other => panic!("unexpected {other:?}"),
            }
        }
    });
    assert_eq!(idle.transport_stats().lost_envelopes, 0);
}

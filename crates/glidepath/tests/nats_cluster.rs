//! A three-node NATS cluster that loses a node: federates connected to different
//! nodes, the node a publisher is connected to killed in the middle of a run. The
//! clients reconnect to a surviving node (learnt from the cluster's gossip), every
//! reliable update arrives exactly once and in order, time advances resume, and the
//! delay is printed.
//!
//! `GLIDEPATH_CLUSTER_UPDATES` sets the run's length (default one million, as the
//! lossless-shutdown test).

#![cfg(feature = "transport-nats")]

mod common;

use std::thread;
use std::time::{Duration, Instant};

use common::*;
use glidepath::backend::nats::NatsCluster;
use glidepath::{Bytes, Callback, Federate, ResignAction, Rti, RtiConfig, TransportKind};

/// Creates federation `name` (test FOM) and joins a receiver subscribed to the
/// vehicle's label and a sender publishing it, each through its own RTI.
fn sender_and_receiver(
    sender_rti: &Rti,
    receiver_rti: &Rti,
    name: &str,
) -> (Federate, Federate, Names) {
    receiver_rti
        .create_federation_execution_with_fom(name, vehicles_fom())
        .unwrap();
    let receiver = join(receiver_rti, name, "receiver");
    let n = Names::of(&receiver);
    receiver
        .subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let sender = join(sender_rti, name, "sender");
    sender
        .publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    (sender, receiver, n)
}

/// `sender` registers an instance and updates it `total` times with the numbers 1..,
/// then resigns; `receiver` checks each arrives once and in order, and calls `kill`
/// once update `kill_at` has arrived. Returns the longest pause between two
/// consecutive updates after the kill (the receiver's view of the failure; its inbox
/// may hold a backlog when it happens).
fn numbered_run(
    sender: &Federate,
    receiver: &Federate,
    n: &Names,
    total: u64,
    kill_at: u64,
    mut kill: impl FnMut(),
) -> Duration {
    let mut killed = false;
    let mut last = Instant::now();
    let mut longest_pause = Duration::ZERO;
    thread::scope(|s| {
        s.spawn(|| {
            let instance = sender.register_object_instance(n.vehicle).unwrap();
            for i in 1..=total {
                sender
                    .update_attribute_values(
                        instance,
                        [(n.label, Bytes::copy_from_slice(&i.to_be_bytes()))],
                        Bytes::new(),
                    )
                    .unwrap_or_else(|e| panic!("update {i}: {e}"));
            }
            sender.resign(ResignAction::DeleteObjects).unwrap();
        });
        let mut expected = 1u64;
        loop {
            match next(receiver) {
                Callback::DiscoverObjectInstance { .. } => {}
                Callback::ReflectAttributeValues { values, .. } => {
                    let got = u64::from_be_bytes(values[0].1[..].try_into().unwrap());
                    assert_eq!(got, expected, "update lost, duplicated or reordered");
                    expected += 1;
                    let now = Instant::now();
                    if killed {
                        longest_pause = longest_pause.max(now - last);
                    }
                    last = now;
                    if got == kill_at && !killed {
                        kill();
                        killed = true;
                        last = Instant::now();
                    }
                }
                Callback::RemoveObjectInstance { .. } => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(expected - 1, total, "updates received before the removal");
    });
    longest_pause
}

fn rti_on(url: &str) -> Rti {
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = url.to_string();
    Rti::from_config(&config).unwrap()
}

fn updates() -> u64 {
    std::env::var("GLIDEPATH_CLUSTER_UPDATES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}

#[test]
fn reliable_updates_survive_the_loss_of_the_publishers_node() {
    let mut cluster = NatsCluster::start(3, false).unwrap_or_else(|e| panic!("{e}"));
    let urls = cluster.urls();
    // The executive on node 2, which stays up; the receiver on node 1, the sender on
    // node 0, which dies.
    let mut exec_config = RtiConfig::default();
    exec_config.nats_url = urls[2].clone();
    let _executive = glidepath::serve_executive(&exec_config).unwrap();
    let sender_rti = rti_on(&urls[0]);
    let receiver_rti = rti_on(&urls[1]);
    let name = "cluster-loss";
    let (sender, receiver, n) = sender_and_receiver(&sender_rti, &receiver_rti, name);
    let total = updates();
    let kill_at = total / 3;
    let mut killed_at = None;
    let longest_pause = numbered_run(&sender, &receiver, &n, total, kill_at, || {
        cluster.kill(0);
        killed_at = Some(Instant::now());
    });
    assert!(killed_at.is_some());
    assert_eq!(receiver.transport_stats().lost_envelopes, 0);
    assert_eq!(receiver.stats().out_of_order, 0);
    eprintln!(
        "cluster: {total} updates, the publisher's node killed after update {kill_at}; \
         longest pause between two updates after it {longest_pause:?}, the rest took {:?}",
        killed_at.map(|k| k.elapsed())
    );
    receiver.resign(ResignAction::DeleteObjects).unwrap();
    receiver_rti.destroy_federation_execution(name).unwrap();
}

#[test]
fn time_advances_resume_after_the_loss_of_a_regulators_node() {
    let mut cluster = NatsCluster::start(3, false).unwrap_or_else(|e| panic!("{e}"));
    let urls = cluster.urls();
    let mut exec_config = RtiConfig::default();
    exec_config.nats_url = urls[2].clone();
    let _executive = glidepath::serve_executive(&exec_config).unwrap();
    let rti_a = rti_on(&urls[0]);
    let rti_b = rti_on(&urls[1]);
    let name = "cluster-time";
    rti_b
        .create_federation_execution_with_fom(name, vehicles_fom())
        .unwrap();
    let a = join(&rti_a, name, "a");
    let b = join(&rti_b, name, "b");
    regulating_and_constrained(&a, 1.0);
    regulating_and_constrained(&b, 1.0);
    const STEPS: u32 = 400;
    let mut delay = None;
    thread::scope(|s| {
        s.spawn(|| {
            for k in 1..=STEPS {
                a.time_advance_request(f64::from(k)).unwrap();
                assert_eq!(grant(&a), t(f64::from(k)));
            }
        });
        // The longest grant after the kill: a's statuses reach b again only once a
        // has reconnected to a surviving node.
        let mut longest = Duration::ZERO;
        for k in 1..=STEPS {
            if k == STEPS / 2 {
                cluster.kill(0);
            }
            let asked = Instant::now();
            b.time_advance_request(f64::from(k)).unwrap();
            assert_eq!(grant(&b), t(f64::from(k)));
            if k >= STEPS / 2 {
                longest = longest.max(asked.elapsed());
            }
        }
        delay = Some(longest);
    });
    eprintln!(
        "cluster: {STEPS} lock-step grants; the longest after killing a regulator's node took {:?}",
        delay.unwrap()
    );
    a.resign(ResignAction::DeleteObjects).unwrap();
    b.resign(ResignAction::DeleteObjects).unwrap();
}

#[test]
fn a_stream_kept_three_times_survives_the_loss_of_a_node() {
    let mut cluster = NatsCluster::start(3, true).unwrap_or_else(|e| panic!("{e}"));
    let urls = cluster.urls();
    let config_on = |url: &str| {
        let mut config = RtiConfig::default();
        config.transport = TransportKind::Nats;
        config.nats_url = url.to_string();
        config
            .apply_args(["--persistence", "jetstream", "--stream-replicas", "3"])
            .unwrap();
        config
    };
    let _executive = glidepath::serve_executive(&config_on(&urls[2])).unwrap();
    let sender_rti = Rti::from_config(&config_on(&urls[0])).unwrap();
    let receiver_rti = Rti::from_config(&config_on(&urls[1])).unwrap();
    let name = "cluster-stream";
    let (sender, receiver, n) = sender_and_receiver(&sender_rti, &receiver_rti, name);
    let total: u64 = (updates() / 10).max(3);
    let kill_at = total / 3;
    numbered_run(&sender, &receiver, &n, total, kill_at, || cluster.kill(0));
    assert_eq!(receiver.transport_stats().lost_envelopes, 0);
    eprintln!("cluster: {total} updates through a stream of three replicas, a node killed after {kill_at}: none lost");
    receiver.resign(ResignAction::DeleteObjects).unwrap();
}

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

use std::net::TcpListener;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use common::*;
use glidepath::backend::nats::NatsServerProcess;
use glidepath::{Bytes, Callback, ResignAction, Rti, RtiConfig, TransportKind};

/// A port nothing listens on now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Three `nats-server`s joined by routes on 127.0.0.1.
struct Cluster {
    nodes: Vec<Option<NatsServerProcess>>,
    urls: Vec<String>,
    /// With JetStream: the nodes' stores, removed at the end.
    store: Option<std::path::PathBuf>,
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for node in self.nodes.iter_mut().flatten() {
            node.stop();
        }
        if let Some(dir) = &self.store {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

impl Cluster {
    fn start() -> Cluster {
        Cluster::start_with(false)
    }

    /// With `jetstream`, every node runs JetStream with a store of its own.
    fn start_with(jetstream: bool) -> Cluster {
        let store = jetstream.then(|| {
            let dir = std::env::temp_dir().join(format!(
                "glidepath-cluster-js-{}-{}",
                std::process::id(),
                free_port()
            ));
            std::fs::create_dir_all(&dir).unwrap();
            dir
        });
        let cluster_ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let mut nodes = Vec::new();
        let mut urls = Vec::new();
        for (i, port) in cluster_ports.iter().enumerate() {
            let listen = format!("nats://127.0.0.1:{port}");
            let routes: Vec<String> = cluster_ports
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != i)
                .map(|(_, p)| format!("nats://127.0.0.1:{p}"))
                .collect();
            let name = format!("node-{i}");
            let routes = routes.join(",");
            let mut args = vec![
                "--name",
                &name,
                "--cluster_name",
                "glidepath-test",
                "--cluster",
                &listen,
                "--routes",
                &routes,
            ];
            let node_store = store.as_ref().map(|d| d.join(&name).display().to_string());
            if let Some(dir) = &node_store {
                args.extend(["--jetstream", "--store_dir", dir]);
            }
            let node = NatsServerProcess::start_with(None, &args).unwrap_or_else(|e| panic!("{e}"));
            urls.push(node.url());
            nodes.push(Some(node));
        }
        let cluster = Cluster { nodes, urls, store };
        cluster.wait_for_routes();
        if jetstream {
            cluster.wait_for_jetstream();
        }
        cluster
    }

    /// Waits (bounded) until the cluster's JetStream can place a stream of three
    /// replicas (its meta leader elected, every node's store known).
    fn wait_for_jetstream(&self) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let client = async_nats::connect(&self.urls[0]).await.unwrap();
            let js = async_nats::jetstream::new(client);
            let deadline = Instant::now() + Duration::from_secs(60);
            loop {
                let probe = async_nats::jetstream::stream::Config {
                    name: "GLIDEPATH_PROBE".into(),
                    subjects: vec!["glidepath-test.js-probe".into()],
                    num_replicas: 3,
                    ..Default::default()
                };
                match js.create_stream(probe).await {
                    Ok(_) => {
                        let _ = js.delete_stream("GLIDEPATH_PROBE").await;
                        return;
                    }
                    Err(e) => {
                        assert!(
                            Instant::now() < deadline,
                            "JetStream never became ready: {e}"
                        );
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }
        });
    }

    /// Waits (bounded) until a message published on each node reaches the others.
    fn wait_for_routes(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        let n = self.urls.len();
        while !(0..n).all(|i| probe(&self.urls[i], &self.urls[(i + 1) % n])) {
            assert!(
                Instant::now() < deadline,
                "the cluster's routes never formed"
            );
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn kill(&mut self, node: usize) {
        if let Some(mut n) = self.nodes[node].take() {
            n.stop();
        }
    }
}

/// Whether a message published at `from` reaches a subscriber at `to`.
fn probe(from: &str, to: &str) -> bool {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        use futures::StreamExt;
        let (Ok(a), Ok(b)) = (
            async_nats::connect(from).await,
            async_nats::connect(to).await,
        ) else {
            return false;
        };
        let Ok(mut sub) = b.subscribe("glidepath-test.probe").await else {
            return false;
        };
        if b.flush().await.is_err() {
            return false;
        }
        // Interest crosses the route asynchronously: publish a few times.
        for _ in 0..10 {
            let _ = a.publish("glidepath-test.probe", "x".into()).await;
            let _ = a.flush().await;
            if let Ok(Some(_)) = tokio::time::timeout(Duration::from_millis(50), sub.next()).await {
                return true;
            }
        }
        false
    })
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
    let mut cluster = Cluster::start();
    // The executive on node 2, which stays up; the receiver on node 1, the sender on
    // node 0, which dies.
    let mut exec_config = RtiConfig::default();
    exec_config.nats_url = cluster.urls[2].clone();
    let _executive = glidepath::serve_executive(&exec_config).unwrap();
    let sender_rti = rti_on(&cluster.urls[0]);
    let receiver_rti = rti_on(&cluster.urls[1]);
    let name = "cluster-loss";
    receiver_rti
        .create_federation_execution_with_fom(name, vehicles_fom())
        .unwrap();
    let receiver = join(&receiver_rti, name, "receiver");
    let n = Names::of(&receiver);
    receiver
        .subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let sender = join(&sender_rti, name, "sender");
    sender
        .publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let total = updates();
    let kill_at = total / 3;
    let killed = AtomicBool::new(false);
    // The longest pause between two consecutive updates after the kill: the
    // receiver's view of the failover (its inbox may hold a backlog when it happens).
    let mut killed_at = None;
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
            match next(&receiver) {
                Callback::DiscoverObjectInstance { .. } => {}
                Callback::ReflectAttributeValues { values, .. } => {
                    let got = u64::from_be_bytes(values[0].1[..].try_into().unwrap());
                    assert_eq!(got, expected, "update lost, duplicated or reordered");
                    expected += 1;
                    let now = Instant::now();
                    if killed_at.is_some() {
                        longest_pause = longest_pause.max(now - last);
                    }
                    last = now;
                    if got == kill_at && !killed.swap(true, Ordering::SeqCst) {
                        cluster.kill(0);
                        killed_at = Some(Instant::now());
                        last = Instant::now();
                    }
                }
                Callback::RemoveObjectInstance { .. } => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(expected - 1, total, "updates received before the removal");
    });
    assert!(killed.load(Ordering::SeqCst));
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
    let mut cluster = Cluster::start();
    let mut exec_config = RtiConfig::default();
    exec_config.nats_url = cluster.urls[2].clone();
    let _executive = glidepath::serve_executive(&exec_config).unwrap();
    let rti_a = rti_on(&cluster.urls[0]);
    let rti_b = rti_on(&cluster.urls[1]);
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
    let mut cluster = Cluster::start_with(true);
    let config_on = |url: &str| {
        let mut config = RtiConfig::default();
        config.transport = TransportKind::Nats;
        config.nats_url = url.to_string();
        config
            .apply_args(["--persistence", "jetstream", "--stream-replicas", "3"])
            .unwrap();
        config
    };
    let _executive = glidepath::serve_executive(&config_on(&cluster.urls[2])).unwrap();
    let sender_rti = Rti::from_config(&config_on(&cluster.urls[0])).unwrap();
    let receiver_rti = Rti::from_config(&config_on(&cluster.urls[1])).unwrap();
    let name = "cluster-stream";
    receiver_rti
        .create_federation_execution_with_fom(name, vehicles_fom())
        .unwrap();
    let receiver = join(&receiver_rti, name, "receiver");
    let n = Names::of(&receiver);
    receiver
        .subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let sender = join(&sender_rti, name, "sender");
    sender
        .publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let total: u64 = (updates() / 10).max(3);
    let kill_at = total / 3;
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
            match next(&receiver) {
                Callback::DiscoverObjectInstance { .. } => {}
                Callback::ReflectAttributeValues { values, .. } => {
                    let got = u64::from_be_bytes(values[0].1[..].try_into().unwrap());
                    assert_eq!(got, expected, "update lost, duplicated or reordered");
                    expected += 1;
                    if got == kill_at {
                        cluster.kill(0);
                    }
                }
                Callback::RemoveObjectInstance { .. } => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(expected - 1, total, "updates received before the removal");
    });
    assert_eq!(receiver.transport_stats().lost_envelopes, 0);
    eprintln!("cluster: {total} updates through a stream of three replicas, a node killed after {kill_at}: none lost");
    receiver.resign(ResignAction::DeleteObjects).unwrap();
}

//! Micro-benchmarks of time management's inner loop: the GALT closure
//! ([`galt_bound`], `src/time.rs`) for 2, 8 and 32 regulating federates, with only
//! unconditional promises and with every federate waiting in a next message request
//! (conditional bounds, the min-plus closure), and a [`LocalRti`] handling incoming
//! envelopes, which re-evaluates GALT after every one.
//!
//! `cargo bench -p glidepath-core --bench galt -- --warm-up-time 1 --measurement-time 3`
//! (`scripts/microbench.sh` runs every micro-benchmark; results in `docs/microbenchmarks.md`).

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glidepath_core::fom::Fom;
use glidepath_core::instant::InstantNetwork;
use glidepath_core::{
    galt_bound, Body, Envelope, ExecRequest, FederateHandle, LocalRti, LogicalTime,
    LogicalTimeInterval, RegulatorView,
};

const SIZES: [usize; 3] = [2, 8, 32];

/// `n` regulators with spread promises and lookaheads; with `conditional`, each waits
/// in a next message request for a time of its own.
fn views(n: usize, conditional: bool) -> Vec<RegulatorView> {
    (0..n)
        .map(|i| {
            let x = i as f64;
            RegulatorView {
                federate: FederateHandle(i as u32 + 1),
                promise: LogicalTime::new(10.0 + (x * 7.0) % 5.0).expect("finite"),
                lookahead: LogicalTimeInterval::new(0.5 + (x * 3.0) % 2.0).expect("finite"),
                conditional: conditional
                    .then(|| LogicalTime::new(20.0 + (x * 11.0) % 13.0).expect("finite")),
            }
        })
        .collect()
}

fn bench_galt_bound(c: &mut Criterion) {
    let mut g = c.benchmark_group("galt_bound");
    g.throughput(Throughput::Elements(1));
    for n in SIZES {
        for (name, conditional) in [("unconditional", false), ("conditional_ner", true)] {
            let v = views(n, conditional);
            g.bench_with_input(
                BenchmarkId::new(name, format!("{n}_regulators")),
                &v,
                |b, v| b.iter(|| galt_bound(black_box(FederateHandle(1)), black_box(v))),
            );
        }
    }
    g.finish();
}

// ---------------------------------------------------------------------------------
/// The benched federate (the last of `n`) and two envelopes it receives in steady
/// state: a receive-order update of an instance it discovered, and a peer's unchanged
/// time status. Every federate regulates (lookahead 1) and is constrained; federate 0
/// owns the instance and sits granted at 0, every other one (the benched one too)
/// waits in a next message request for 1000, so GALT is computed with conditional
/// bounds and nobody is granted.
struct Scenario {
    me: LocalRti,
    update: Envelope,
    status: Envelope,
}

fn scenario(n: usize) -> Scenario {
    let fom = Fom::load_files(&[PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../foms/air-traffic.xml"
    ))])
    .expect("FOM loads");
    let aircraft = fom.object_class_by_name("Aircraft").expect("Aircraft");
    let callsign = fom
        .attribute_by_name(aircraft, "callsign")
        .expect("callsign");
    let mut net = InstantNetwork::new();
    net.host.handle(
        ExecRequest::Create {
            name: "bench".into(),
            fom: Arc::new(fom),
        },
        0,
    );
    let mut feds: Vec<LocalRti> = (0..n)
        .map(|i| net.join(i, "bench", &format!("f{i}")).expect("join"))
        .collect();
    let mut log: Vec<Envelope> = Vec::new();
    let me = n - 1;
    // Runs the federation until nothing moves, keeping what the benched one got.
    let drain = |net: &mut InstantNetwork, feds: &mut Vec<LocalRti>, log: &mut Vec<Envelope>| {
        net.drain(feds, |to, env| {
            if to == me {
                log.push(env.clone());
            }
        });
        for fed in feds.iter_mut() {
            while fed.poll_callback().is_some() {}
        }
    };
    for i in 0..n {
        feds[i]
            .enable_time_regulation(&mut net.link(i), 1.0)
            .expect("regulation");
        drain(&mut net, &mut feds, &mut log);
    }
    for fed in feds.iter_mut() {
        fed.enable_time_constrained().expect("constrained");
    }
    drain(&mut net, &mut feds, &mut log);
    feds[me]
        .subscribe_object_class_attributes(&mut net.link(me), aircraft, &[callsign])
        .expect("subscribe");
    feds[0]
        .publish_object_class_attributes(aircraft, &[callsign])
        .expect("publish");
    feds[0]
        .register_object_instance(&mut net.link(0), aircraft, None)
        .expect("register");
    drain(&mut net, &mut feds, &mut log);
    for i in 1..n {
        feds[i].next_message_request(1000.0, false).expect("nmr");
        drain(&mut net, &mut feds, &mut log);
    }
    let instance = log
        .iter()
        .find_map(|e| match e.body {
            Body::Register { instance, .. } => Some(instance),
            _ => None,
        })
        .expect("the registration arrived");
    feds[0]
        .update_attribute_values(
            instance,
            vec![(callsign, Bytes::from_static(b"SWA1234"))],
            Bytes::new(),
            None,
        )
        .expect("update");
    drain(&mut net, &mut feds, &mut log);
    assert!(
        feds.iter().skip(1).all(LocalRti::is_advancing),
        "nobody may be granted in the benched state"
    );
    let update = log
        .iter()
        .rev()
        .find(|e| matches!(e.body, Body::Update { .. }))
        .expect("the update arrived")
        .clone();
    // The last status of a waiting peer (the owner's when n == 2).
    let peer = if n > 2 {
        FederateHandle(2)
    } else {
        FederateHandle(1)
    };
    let status = log
        .iter()
        .rev()
        .find(|e| e.sender == peer && matches!(e.body, Body::TimeStatus(_)))
        .expect("a status arrived")
        .clone();
    let me = feds.pop().expect("n >= 2");
    Scenario { me, update, status }
}

fn bench_local_rti(c: &mut Criterion) {
    let mut g = c.benchmark_group("local_rti_handle_envelope");
    g.throughput(Throughput::Elements(1));
    for n in SIZES {
        for which in ["update_ro", "time_status"] {
            let Scenario {
                mut me,
                update,
                status,
            } = scenario(n);
            let template = if which == "update_ro" { update } else { status };
            let mut seq = 1_000_000_000u64;
            let delivered_before = me.stats().delivered;
            // What the benched federate publishes goes nowhere, as on a transport
            // with no subscribers.
            let mut sent = Vec::new();
            g.bench_function(BenchmarkId::new(which, format!("{n}_federates")), |b| {
                b.iter(|| {
                    seq += 1;
                    let mut env = template.clone();
                    env.seq = seq;
                    me.handle_envelope(black_box(env));
                    me.take_outputs(&mut sent);
                    sent.clear();
                    while let Some(cb) = me.poll_callback() {
                        black_box(cb);
                    }
                })
            });
            assert!(
                me.is_advancing(),
                "the benched federate must still be waiting"
            );
            if which == "update_ro" {
                assert!(
                    me.stats().delivered > delivered_before,
                    "updates were delivered"
                );
            }
            assert_eq!(me.stats().out_of_order, 0);
        }
    }
    g.finish();
}

criterion_group!(benches, bench_galt_bound, bench_local_rti);
criterion_main!(benches);

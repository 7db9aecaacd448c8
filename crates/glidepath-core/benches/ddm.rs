//! Micro-benchmarks of what data distribution management costs the local RTI
//! component per update when there is nothing to filter: an owner sending an
//! update of `Entity.position` (`foms/ddm-bench.xml`), and a subscriber handling
//! it, without regions and with one region covering the plane on both sides (the
//! issue's "one region, no filtering" case, ≤ 10 % of throughput lost).
//!
//! `cargo bench -p glidepath-core --bench ddm -- --warm-up-time 1 --measurement-time 3`
//! (`scripts/microbench.sh` runs every micro-benchmark; results in `docs/microbenchmarks.md`).

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glidepath_core::fom::Fom;
use glidepath_core::instant::InstantNetwork;
use glidepath_core::{
    AttributeHandle, Body, Envelope, ExecRequest, LocalRti, ObjectInstanceHandle, RangeBounds,
};

/// The owner and the subscriber after set-up, the instance, the attribute, and an
/// update envelope as the subscriber receives it.
struct Scenario {
    owner: LocalRti,
    subscriber: LocalRti,
    instance: ObjectInstanceHandle,
    position: AttributeHandle,
    update: Envelope,
}

fn scenario(regions: bool) -> Scenario {
    let fom = Fom::load_files(&[PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../foms/ddm-bench.xml"
    ))])
    .expect("FOM loads");
    let entity = fom.object_class_by_name("Entity").expect("Entity");
    let position = fom.attribute_by_name(entity, "position").expect("position");
    let lat = fom.dimension_by_name("Latitude").expect("Latitude");
    let lon = fom.dimension_by_name("Longitude").expect("Longitude");
    let upper = fom.dimension(lat).expect("Latitude").upper_bound;
    let mut net = InstantNetwork::new();
    net.host.handle(
        ExecRequest::Create {
            name: "bench".into(),
            fom: Arc::new(fom),
        },
        0,
    );
    let mut feds: Vec<LocalRti> = (0..2)
        .map(|i| net.join(i, "bench", &format!("f{i}")).expect("join"))
        .collect();
    let mut log: Vec<Envelope> = Vec::new();
    let plane = |f: &mut LocalRti| {
        let r = f.create_region(&[lat, lon]).expect("region");
        f.set_range_bounds(r, lat, RangeBounds::new(0, upper))
            .expect("bounds");
        f.set_range_bounds(r, lon, RangeBounds::new(0, upper))
            .expect("bounds");
        f.commit_region_modifications(&[r]).expect("commit");
        r
    };
    if regions {
        let r = plane(&mut feds[1]);
        feds[1]
            .subscribe_object_class_attributes_with_regions(
                &mut net.link(1),
                entity,
                &[(vec![position], vec![r])],
            )
            .expect("subscribe");
    } else {
        feds[1]
            .subscribe_object_class_attributes(&mut net.link(1), entity, &[position])
            .expect("subscribe");
    }
    feds[0]
        .publish_object_class_attributes(entity, &[position])
        .expect("publish");
    let instance = if regions {
        let r = plane(&mut feds[0]);
        feds[0]
            .register_object_instance_with_regions(
                &mut net.link(0),
                entity,
                &[(vec![position], vec![r])],
                None,
            )
            .expect("register")
    } else {
        feds[0]
            .register_object_instance(&mut net.link(0), entity, None)
            .expect("register")
    };
    feds[0]
        .update_attribute_values(
            instance,
            vec![(position, Bytes::from_static(&[7; 24]))],
            Bytes::new(),
            None,
        )
        .expect("update");
    net.drain(&mut feds, |to, env| {
        if to == 1 {
            log.push(env.clone());
        }
    });
    while feds[1].poll_callback().is_some() {}
    let update = log
        .iter()
        .rev()
        .find(|e| matches!(e.body, Body::Update { .. }))
        .expect("the update arrived")
        .clone();
    assert_eq!(update.body.regions().is_some(), regions);
    let subscriber = feds.pop().expect("two");
    let owner = feds.pop().expect("two");
    Scenario {
        owner,
        subscriber,
        instance,
        position,
        update,
    }
}

fn bench_ddm(c: &mut Criterion) {
    let mut g = c.benchmark_group("ddm_per_update");
    g.throughput(Throughput::Elements(1));
    for (name, regions) in [("no_regions", false), ("one_region", true)] {
        let Scenario {
            mut owner,
            mut subscriber,
            instance,
            position,
            update,
        } = scenario(regions);
        let mut sent = Vec::new();
        let value = Bytes::from_static(&[7; 24]);
        g.bench_function(BenchmarkId::new("send", name), |b| {
            b.iter(|| {
                owner
                    .update_attribute_values(
                        black_box(instance),
                        vec![(position, value.clone())],
                        Bytes::new(),
                        None,
                    )
                    .expect("update");
                owner.take_outputs(&mut sent);
                black_box(&sent);
                sent.clear();
            })
        });
        let mut seq = 1_000_000_000u64;
        let delivered_before = subscriber.stats().delivered;
        g.bench_function(BenchmarkId::new("receive", name), |b| {
            b.iter(|| {
                seq += 1;
                let mut env = update.clone();
                env.seq = seq;
                subscriber.handle_envelope(black_box(env));
                subscriber.take_outputs(&mut sent);
                sent.clear();
                while let Some(cb) = subscriber.poll_callback() {
                    black_box(cb);
                }
            })
        });
        assert!(
            subscriber.stats().delivered > delivered_before,
            "the benched updates were reflected"
        );
    }
    g.finish();
}

criterion_group!(benches, bench_ddm);
criterion_main!(benches);

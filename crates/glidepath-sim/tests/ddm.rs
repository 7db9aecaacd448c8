//! A bounded batch of DDM-simulator seeds on every `cargo test`: random regions moved
//! and committed while federates update and send; every callback must have been
//! wanted when its message was sent, and every message wanted when sent (to a
//! receiver that kept its regions meanwhile) must arrive; scope advisories match the
//! overlap; in timed runs, time-stamped messages arrive in order within the grants and
//! everyone reaches the end. Longer runs:
//! `cargo run --release -p glidepath-sim -- --ddm --seeds 10000 --jobs 2`.

use glidepath_sim::ddm::{run_ddm, DdmSimConfig};

#[test]
fn random_region_schedules_deliver_exactly_what_overlapped_when_sent() {
    let seeds: u64 = std::env::var("GLIDEPATH_DDM_SEEDS")
        .map(|v| {
            v.parse()
                .expect("GLIDEPATH_DDM_SEEDS must be a whole number")
        })
        .unwrap_or(200);
    let (mut wanted, mut unwanted_pairs, mut filtered, mut moves, mut by_overlap) = (0, 0, 0, 0, 0);
    let (mut scope_callbacks, mut switches) = (0, 0);
    let (mut timed, mut tso, mut grants) = (0, 0, 0);
    for seed in 0..seeds {
        let o = run_ddm(&DdmSimConfig::for_seed(seed)).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(o.wanted, o.delivered, "seed {seed}: {o:?}");
        wanted += o.wanted;
        unwanted_pairs += o.pairs - o.wanted - o.uncertain;
        filtered += o.filtered_at_source;
        moves += o.subscriber_moves + o.sender_moves;
        by_overlap += o.discovered_by_overlap;
        scope_callbacks += o.scope_callbacks;
        switches += o.scope_switches;
        timed += o.timed_runs;
        tso += o.tso_delivered;
        grants += o.grants;
    }
    // The schedules exercise both sides of the overlap test, filtering at the
    // source, region moves and discovery by overlap.
    assert!(wanted > 1000, "{wanted} wanted pairs");
    assert!(unwanted_pairs > 1000, "{unwanted_pairs} unwanted pairs");
    assert!(filtered > 0 && moves > 0 && by_overlap > 0);
    // ... and scope advisories, switched on and off, checked against the overlap.
    assert!(scope_callbacks > 1000, "{scope_callbacks} scope callbacks");
    assert!(switches > 200, "{switches} switch changes");
    // ... and, in about half the runs, time management: time-stamped deliveries in
    // order and within the grants, and everyone granted the end.
    assert!(timed > seeds / 4, "{timed} timed runs");
    assert!(
        tso > 500 && grants > 500,
        "{tso} time-stamped deliveries, {grants} grants"
    );
}

#[test]
fn a_seed_replays_exactly() {
    let cfg = DdmSimConfig::for_seed(77);
    assert_eq!(run_ddm(&cfg).unwrap(), run_ddm(&cfg).unwrap());
}

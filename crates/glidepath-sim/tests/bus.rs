//! A bounded batch of bus-simulator seeds on every `cargo test`: AGREED and SAFE
//! messages, members joining, leaving, crashing and pausing past the crash timeout,
//! copies and acknowledgements lost; one total order at every member, SAFE handed out
//! only once every member had it, nothing lost or stuck. Longer runs:
//! `cargo run --release -p glidepath-sim -- --bus --seeds 50000`.

use glidepath_sim::bus::{run_bus, BusOutcome, BusSimConfig};

#[test]
fn ordered_levels_hold_under_churn_crashes_pauses_and_loss() {
    let seeds: u64 = std::env::var("GLIDEPATH_BUS_SEEDS")
        .map(|v| {
            v.parse()
                .expect("GLIDEPATH_BUS_SEEDS must be a whole number")
        })
        .unwrap_or(1000);
    let mut t = BusOutcome::default();
    for seed in 0..seeds {
        let o = run_bus(&BusSimConfig::for_seed(seed)).unwrap_or_else(|f| panic!("{f}"));
        t.safe_checked += o.safe_checked;
        t.fetches += o.fetches;
        t.crashes += o.crashes;
        t.false_suspicions += o.false_suspicions;
        t.leaves += o.leaves;
    }
    // The schedules exercise SAFE, holes, crashes, leaves and false suspicions.
    assert!(t.safe_checked > 10_000, "{t:?}");
    assert!(
        t.fetches > 0 && t.crashes > 0 && t.leaves > 0 && t.false_suspicions > 0,
        "{t:?}"
    );
}

#[test]
fn a_seed_replays_exactly() {
    let cfg = BusSimConfig::for_seed(4242);
    assert_eq!(run_bus(&cfg).unwrap(), run_bus(&cfg).unwrap());
}

#[test]
fn with_more_loss_every_guarantee_still_holds() {
    for seed in 0..100 {
        let cfg = BusSimConfig {
            loss: 0.3,
            ..BusSimConfig::for_seed(seed)
        };
        run_bus(&cfg).unwrap_or_else(|f| panic!("{f}"));
    }
}

//! A bounded batch of repair-simulator seeds on every `cargo test`: RELIABLE and FIFO
//! over core NATS with connections broken, copies dropped and duplicated, requests and
//! replies lost, small and unbounded sender windows, and senders dying; every sender's
//! frames handed out once and in order at every node, every one from the first on
//! handed out or counted lost, none lost that a window still held. Longer runs:
//! `cargo run --release -p glidepath-sim -- --bus-repair --seeds 20000`.

use glidepath_sim::bus_repair::{run_bus_repair, RepairOutcome, RepairSimConfig};

#[test]
fn repairs_deliver_once_in_order_and_account_for_every_frame() {
    let seeds: u64 = std::env::var("GLIDEPATH_BUS_REPAIR_SEEDS")
        .map(|v| {
            v.parse()
                .expect("GLIDEPATH_BUS_REPAIR_SEEDS must be a whole number")
        })
        .unwrap_or(1000);
    let mut t = RepairOutcome::default();
    for seed in 0..seeds {
        let o = run_bus_repair(&RepairSimConfig::for_seed(seed)).unwrap_or_else(|f| panic!("{f}"));
        t.add(&o);
    }
    // The schedules exercise every fault and every way a repair ends.
    assert!(t.published > 100_000, "{t:?}");
    assert!(
        t.copies_lost > 0 && t.copies_dropped > 0 && t.duplicates > 0 && t.breaks > 0,
        "{t:?}"
    );
    assert!(
        t.deaths > 0 && t.recovered > 0 && t.failed_tries > 0 && t.counted_lost > 0,
        "{t:?}"
    );
    assert_eq!(t.stale_violations, 0, "{t:?}");
}

#[test]
fn a_seed_replays_exactly() {
    let cfg = RepairSimConfig::for_seed(777);
    assert_eq!(run_bus_repair(&cfg).unwrap(), run_bus_repair(&cfg).unwrap());
}

#[test]
fn with_more_loss_and_duplication_every_guarantee_still_holds() {
    for seed in 0..60 {
        let cfg = RepairSimConfig {
            loss: 0.2,
            duplication: 0.2,
            ..RepairSimConfig::for_seed(seed)
        };
        run_bus_repair(&cfg).unwrap_or_else(|f| panic!("{f}"));
    }
}

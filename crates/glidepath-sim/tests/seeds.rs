//! Runs a bounded batch of simulator seeds on every `cargo test`.
//!
//! `GLIDEPATH_SIM_SEEDS=N` runs more (and `GLIDEPATH_SIM_START=S` moves the window);
//! a failure prints the seed and the one command that replays it.

use glidepath_sim::{run, SimConfig};

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a non-negative integer, got `{v}`")),
        Err(_) => default,
    }
}

#[test]
fn random_federations_keep_every_time_management_guarantee() {
    let seeds = env_u64("GLIDEPATH_SIM_SEEDS", 1000);
    let start = env_u64("GLIDEPATH_SIM_START", 0);
    let (mut events, mut largest, mut grants, mut tso) = (0, 0, 0, 0);
    for seed in start..start + seeds {
        match run(&SimConfig::for_seed(seed)) {
            Ok(o) => {
                events += o.events;
                largest = largest.max(o.federates);
                grants += o.grants;
                tso += o.tso_delivered;
            }
            Err(f) => panic!("{f}"),
        }
    }
    println!("simulator: {seeds} seeds from {start}, {events} events, {grants} grants, {tso} TSO deliveries, largest federation {largest}");
    assert!(largest >= 10, "the batch should include large federations");
    assert!(tso > 0 && grants > 0);
}

#[test]
fn sixteen_federates_with_many_advances() {
    let mut cfg = SimConfig::for_seed(7);
    cfg.federates = Some(16);
    cfg.advances = 60;
    // Everyone stays to the end, so every federate makes every advance.
    cfg.churn = false;
    let o = run(&cfg).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(o.federates, 16);
    assert!(o.grants >= 16 * 60);
}

#[test]
fn a_failing_seed_is_reported_with_its_replay_command() {
    // A livelock guard far too small for any run turns into a failure that names the seed.
    let mut cfg = SimConfig::for_seed(3);
    cfg.max_events = 10;
    let f = run(&cfg).expect_err("ten events cannot finish a federation");
    let text = f.to_string();
    assert!(text.contains("seed 3 failed"), "{text}");
    assert!(text.contains("--seed 3"), "{text}");
}

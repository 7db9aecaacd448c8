//! Runs bounded batches of simulator seeds on every `cargo test`: a fixed window, and
//! a second window that moves every day, so CI does not keep re-proving the same
//! seeds.
//!
//! `GLIDEPATH_SIM_SEEDS=N` runs more (and `GLIDEPATH_SIM_START=S` moves the fixed
//! window; `GLIDEPATH_SIM_ROTATING_START=S` pins the moving one); a failure prints the
//! seed and the one command that replays it. Longer runs use every core:
//! `cargo run --release -p glidepath-sim -- --seeds 1000000 --jobs 2`.

use std::time::{SystemTime, UNIX_EPOCH};

use glidepath_sim::{run, Profile, SimConfig};

fn env_u64(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) => v
            .parse()
            .unwrap_or_else(|_| panic!("{name} must be a non-negative integer, got `{v}`")),
        Err(_) => default,
    }
}

/// A seed's configuration as it was when the seed was found: without the ownership
/// schedules, so it replays exactly the schedule that showed the bug.
fn before_ownership(seed: u64) -> SimConfig {
    let mut cfg = SimConfig::for_seed(seed);
    cfg.ownership = false;
    cfg
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

/// Where today's rotating window starts: a million seeds further each day, above the
/// fixed window, so a year of CI runs visits a different range every day.
fn rotating_start() -> u64 {
    match std::env::var("GLIDEPATH_SIM_ROTATING_START") {
        Ok(_) => env_u64("GLIDEPATH_SIM_ROTATING_START", 0),
        Err(_) => {
            let days = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .expect("the clock is after 1970")
                .as_secs()
                / 86_400;
            10_000_000 + (days % 1000) * 1_000_000
        }
    }
}

#[test]
fn a_window_of_seeds_that_moves_every_day() {
    let start = rotating_start();
    let seeds = 300;
    for seed in start..start + seeds {
        if let Err(f) = run(&SimConfig::for_seed(seed)) {
            panic!("{f}\n(rotating window from {start}: GLIDEPATH_SIM_ROTATING_START={start} replays it)");
        }
    }
    println!("simulator: rotating window of {seeds} seeds from {start} passed");
}

/// The livelock of issue 22, with the schedules that found it: thirteen federates, zero
/// lookahead, several in next message requests, and two regulators that each sent
/// time-stamped messages after their last status to classes the other does not
/// subscribe. Each distrusted the other's conditional bound forever.
#[test]
fn seed_5007226_of_the_classic_profile_ends_with_every_federate_finished() {
    let mut cfg = SimConfig::for_seed(5_007_226);
    cfg.profile = Profile::Classic;
    let o = run(&cfg).unwrap_or_else(|f| panic!("{f}"));
    assert_eq!(o.federates, 13);
    assert!(
        o.grants > 13 * 20,
        "every federate makes its advances: {o:?}"
    );
}

/// The same livelock found by the liveness check at a quiescent point: without the
/// announcement of time-stamped messages sent while waiting, federate#2 could proceed
/// to 3.5 but held its GALT at 3 ("me: last tso 63 > seen 61").
#[test]
fn seed_291_stays_live_at_every_quiescent_point() {
    let o = run(&before_ownership(291)).unwrap_or_else(|f| panic!("{f}"));
    assert!(o.quiescent_checks > 0, "the liveness check ran: {o:?}");
}

/// A late joiner learned from the executive that a regulator had resigned before that
/// regulator's last messages (sent before its resignation, time-stamped 84) reached it;
/// it stopped waiting for the regulator, jumped to 85.5 while enabling regulation, and
/// then received the messages in its past. Only the regulator's own last status, which
/// follows everything it sent, may release it.
#[test]
fn seed_100003103_keeps_a_resigned_regulator_until_its_last_status() {
    run(&before_ownership(100_003_103)).unwrap_or_else(|f| panic!("{f}"));
}

/// A late joiner trusted a waiting peer's conditional bound while a federate that had
/// resigned before the late joiner arrived still had a message (time-stamped 16) in
/// flight to that peer; granted at 16.5, the late joiner then received it in its past.
/// A peer's bound is trusted only once it reports having processed every such
/// federate's last status.
#[test]
fn seed_300082656_waits_for_what_a_departed_federate_sent() {
    run(&before_ownership(300_082_656)).unwrap_or_else(|f| panic!("{f}"));
}

/// A zero-lookahead federate enabling regulation late, after a zero-lookahead
/// regulator had finished at the end of time, would wait forever to start just after
/// it (an application deadlock under any RTI): the schedules no longer ask for it.
#[test]
fn seed_400097025_does_not_schedule_a_late_regulator_behind_a_finished_one() {
    run(&before_ownership(400_097_025)).unwrap_or_else(|f| panic!("{f}"));
}

/// A late joiner trusted a peer's conditional bound while a member that had stopped
/// regulating, and so never greeted newcomers, still had a time-stamped message in
/// flight to that peer. Newcomers now wait for every member's status.
#[test]
fn seed_500137605_waits_for_every_member_before_trusting_a_bound() {
    run(&before_ownership(500_137_605)).unwrap_or_else(|f| panic!("{f}"));
}

/// Random ownership schedules keep one owner per instance attribute in every view,
/// refuse updates from non-owners, and end every acquisition; and they really move
/// ownership around (granted, unavailable and cancelled acquisitions all happen).
#[test]
fn ownership_schedules_keep_one_owner_and_end_every_acquisition() {
    let (mut transfers, mut unavailable, mut cancelled, mut checked) = (0, 0, 0, 0);
    for seed in 0..200 {
        let o = run(&SimConfig::for_seed(seed)).unwrap_or_else(|f| panic!("{f}"));
        assert_eq!(
            o.acquisitions,
            o.acquisitions_granted + o.acquisitions_unavailable + o.acquisitions_cancelled,
            "seed {seed}: every acquisition ends exactly once: {o:?}"
        );
        transfers += o.ownership_transfers;
        unavailable += o.acquisitions_unavailable;
        cancelled += o.acquisitions_cancelled;
        checked += o.owner_checked_updates;
    }
    assert!(transfers > 1000, "{transfers} transfers");
    assert!(
        unavailable > 0 && cancelled > 0,
        "{unavailable} {cancelled}"
    );
    assert!(
        checked > 1000,
        "{checked} updates checked against the registry"
    );
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

/// Random saves and restores (with messages from before a restore still in flight)
/// bring every federate's RTI state back to what it saved, keep time management's
/// guarantees, and end.
#[test]
fn saves_and_restores_bring_every_federate_back_to_what_it_saved() {
    let seeds = env_u64("GLIDEPATH_SIM_SAVE_SEEDS", 200);
    let (mut saves, mut restores, mut checked, mut dropped) = (0, 0, 0, 0);
    for seed in 0..seeds {
        let o = glidepath_sim::run_save_restore(seed).unwrap_or_else(|f| panic!("{f}"));
        saves += o.saves;
        restores += o.restores;
        checked += o.snapshots_checked;
        dropped += o.dropped_before_restore;
    }
    assert!(
        saves > 0 && restores > 0 && checked >= restores * 2,
        "{saves} saves, {restores} restores, {checked} states checked"
    );
    // Some restores happened with a peer's messages from before them in flight.
    assert!(dropped > 0, "no stale envelope was ever dropped");
    println!(
        "simulator: {seeds} save/restore seeds, {saves} saves, {restores} restores, {checked} federate states checked, {dropped} stale envelopes dropped"
    );
}

//! The simulation server and processing nodes on the embedded transport: trajectories
//! are the same bits whatever the number of nodes and threads (and the same as stepping
//! the scenario serially), and commands are applied at the next frame and acknowledged,
//! or refused with the reason.

use glidepath::Rti;
use glidepath_tg::command::{Instruction, Refusal};
use glidepath_tg::dynamics::Aircraft;
use glidepath_tg::model::Model;
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::scenario::{self, Scenario};
use glidepath_tg::server::{LocalLayout, LocalRun, ServerConfig};

const FRAMES: u64 = 120;
const DT: f64 = 0.5;

fn scenario() -> Scenario {
    let mut s = scenario::load("demo", PerformanceTable::builtin()).unwrap();
    let extra = scenario::load("us-400", PerformanceTable::builtin()).unwrap();
    s.aircraft.extend(extra.aircraft.into_iter().take(150));
    s
}

/// The commands of the run: (frame, callsign, instruction).
fn commands() -> Vec<(u64, &'static str, Instruction)> {
    vec![
        (5, "UAL101", Instruction::Heading { deg: 200.0 }),
        (5, "SWA202", Instruction::Altitude { ft: 15_000.0 }),
        (9, "DAL404", Instruction::Speed { kt: 230.0 }),
        (
            12,
            "AAL505",
            Instruction::DirectTo {
                waypoint: "KDEN".into(),
            },
        ),
        (60, "UAL101", Instruction::Resume),
    ]
}

fn fnv(hash: &mut u64, x: f64) {
    for b in x.to_bits().to_be_bytes() {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x100_0000_01b3);
    }
}

/// Runs the scenario; returns a digest of every frame's states and the final states.
fn run(nodes: usize, threads: usize) -> (Vec<u64>, Vec<[f64; 9]>) {
    let rti = Rti::inproc();
    let layout = LocalLayout::new(nodes, threads, Model::PointMass);
    let mut config = ServerConfig::new(nodes);
    config.dt_s = DT;
    let mut tg = LocalRun::start(&rti, "tg-determinism", scenario(), &layout, config).unwrap();
    assert_eq!(tg.server.nodes().len(), nodes);
    let mut digests = Vec::new();
    let commands = commands();
    for frame in 1..=FRAMES {
        for (at, callsign, instruction) in &commands {
            // Queued before the frame's step: applied at its step.
            if *at == frame {
                tg.server.command(callsign, instruction.clone());
            }
        }
        let report = tg.server.step().unwrap();
        assert_eq!(
            report.updates,
            tg.server.tracks().len() as u64,
            "every state of frame {frame} arrived"
        );
        let mut hash = 0xcbf2_9ce4_8422_2325;
        for t in tg.server.tracks() {
            assert_eq!(t.track_time_us, (frame as f64 * DT * 1e6).round() as i64);
            let s = t.state;
            for v in [
                s.lat_deg,
                s.lon_deg,
                s.alt_ft,
                s.gs_kt,
                s.course_deg,
                s.vs_fpm,
                s.heading_deg,
                s.pitch_deg,
                s.roll_deg,
            ] {
                fnv(&mut hash, v);
            }
        }
        digests.push(hash);
    }
    let acks = tg.server.take_acks();
    assert_eq!(acks.len(), commands.len());
    assert!(acks.iter().all(|a| a.outcome.is_ok()), "{acks:?}");
    let finals = tg
        .server
        .tracks()
        .iter()
        .map(|t| {
            let s = t.state;
            [
                s.lat_deg,
                s.lon_deg,
                s.alt_ft,
                s.gs_kt,
                s.course_deg,
                s.vs_fpm,
                s.heading_deg,
                s.pitch_deg,
                s.roll_deg,
            ]
        })
        .collect();
    let reports = tg.finish().unwrap();
    assert_eq!(reports.iter().map(|r| r.aircraft).sum::<usize>(), 158);
    assert!(reports.iter().all(|r| r.frames == FRAMES));
    (digests, finals)
}

fn serial() -> Vec<[f64; 9]> {
    let table = PerformanceTable::builtin();
    let s = scenario();
    let mut fleet: Vec<Aircraft> = s.aircraft.clone();
    let commands = commands();
    for frame in 1..=FRAMES {
        for (at, callsign, instruction) in &commands {
            if *at == frame {
                let a = fleet.iter_mut().find(|a| a.callsign == *callsign).unwrap();
                instruction
                    .check(table.get(a.type_index).unwrap(), a)
                    .unwrap();
                instruction.apply(a);
            }
        }
        for a in &mut fleet {
            Model::PointMass.step(table, a, DT, s.wind);
        }
    }
    fleet
        .iter()
        .map(|a| {
            let s = a.published();
            [
                s.lat_deg,
                s.lon_deg,
                s.alt_ft,
                s.gs_kt,
                s.course_deg,
                s.vs_fpm,
                s.heading_deg,
                s.pitch_deg,
                s.roll_deg,
            ]
        })
        .collect()
}

fn bits(states: &[[f64; 9]]) -> Vec<[u64; 9]> {
    states.iter().map(|s| s.map(f64::to_bits)).collect()
}

#[test]
fn trajectories_are_bit_identical_whatever_the_nodes_and_threads() {
    let (one, one_final) = run(1, 1);
    for (nodes, threads) in [(2, 3), (3, 2)] {
        let (d, f) = run(nodes, threads);
        assert_eq!(
            d, one,
            "frame digests differ with {nodes} nodes of {threads} threads"
        );
        assert_eq!(bits(&f), bits(&one_final));
    }
    // And the same as stepping the scenario in one loop, without any RTI.
    assert_eq!(bits(&serial()), bits(&one_final));
    // The commands took effect: UAL101 turned towards 200° before it resumed its plan.
    let distinct: std::collections::BTreeSet<u64> = one.iter().copied().collect();
    assert_eq!(distinct.len(), one.len(), "every frame moves the traffic");
}

#[test]
fn commands_apply_at_the_next_frame_and_refusals_say_why() {
    let rti = Rti::inproc();
    let layout = LocalLayout::new(2, 1, Model::PointMass);
    let mut tg = LocalRun::start(
        &rti,
        "tg-commands",
        scenario::load("demo", PerformanceTable::builtin()).unwrap(),
        &layout,
        ServerConfig::new(2),
    )
    .unwrap();
    tg.server.step().unwrap();
    let heading = tg
        .server
        .command("UAL101", Instruction::Heading { deg: 270.0 });
    let unknown = tg
        .server
        .command("NOPE1", Instruction::Heading { deg: 90.0 });
    let too_high = tg
        .server
        .command("JBU606", Instruction::Altitude { ft: 60_000.0 });
    let too_fast = tg.server.command("UAM1", Instruction::Speed { kt: 400.0 });
    let nowhere = tg.server.command(
        "DAL404",
        Instruction::DirectTo {
            waypoint: "KJFK".into(),
        },
    );
    let bad = tg
        .server
        .command("ASA303", Instruction::Heading { deg: 360.0 });
    tg.server.step().unwrap();
    let mut acks = tg.server.take_acks();
    acks.sort_by_key(|a| a.id);
    let outcome = |id: u64| {
        acks.iter()
            .find(|a| a.id == id)
            .unwrap_or_else(|| panic!("no ack for {id}: {acks:?}"))
    };
    assert_eq!(acks.len(), 6);
    assert!(
        acks.iter().all(|a| a.frame == 2),
        "applied or refused at the next frame: {acks:?}"
    );
    assert_eq!(outcome(heading).outcome, Ok(()));
    assert_eq!(
        outcome(unknown).outcome,
        Err(Refusal::UnknownAircraft("NOPE1".into()))
    );
    assert_eq!(
        outcome(too_high).outcome.as_ref().unwrap_err().to_string(),
        "out of the A320 envelope: altitude 60000 ft is outside 0–41010 ft"
    );
    assert_eq!(
        outcome(too_fast).outcome.as_ref().unwrap_err().to_string(),
        "out of the EVTL envelope: speed 400 kt is outside 0–137.5 kt"
    );
    assert_eq!(
        outcome(nowhere).outcome,
        Err(Refusal::UnknownWaypoint("KJFK".into()))
    );
    assert!(matches!(
        outcome(bad).outcome,
        Err(Refusal::InvalidValue(_))
    ));
    // The accepted heading is flown: UAL101 turns left onto 270° within two minutes.
    tg.server.set_dt_s(0.5);
    for _ in 0..240 {
        tg.server.step().unwrap();
    }
    let ual = tg
        .server
        .tracks()
        .iter()
        .find(|t| t.callsign == "UAL101")
        .unwrap();
    assert!(
        (ual.state.heading_deg - 270.0).abs() < 0.5,
        "{:?}",
        ual.state
    );
    tg.finish().unwrap();
}

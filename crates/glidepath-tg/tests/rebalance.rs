//! A processing node joining a running target generator gets an even share of the
//! aircraft between two frames, and one that falls behind gives aircraft to the
//! faster ones: every aircraft takes every frame, and each trajectory stays bit for
//! bit the one it has without the move (the donor hands the whole state over,
//! `TgHandover`).

use std::time::Duration;

use glidepath::Rti;
use glidepath_tg::model::Model;
use glidepath_tg::node::{run_node, NodeConfig};
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::scenario;
use glidepath_tg::server::{
    create_federation, Balance, LocalLayout, LocalRun, ServerConfig, SimulationServer, Track,
};

const FRAMES: u64 = 40;

fn fly(federation: &str, join_at: Option<u64>) -> (Vec<Track>, u64) {
    let rti = Rti::inproc();
    let scenario = scenario::load("us-400", PerformanceTable::builtin()).unwrap();
    let count = scenario.aircraft.len() as u64;
    let layout = LocalLayout::new(1, 1, Model::PointMass);
    let mut tg =
        LocalRun::start(&rti, federation, scenario, &layout, ServerConfig::new(1)).unwrap();
    let mut newcomer = None;
    for frame in 1..=FRAMES {
        if join_at == Some(frame) {
            let (rti, federation) = (rti.clone(), federation.to_string());
            newcomer = Some(std::thread::spawn(move || {
                run_node(
                    &rti,
                    &federation,
                    NodeConfig::new("tg-node-new", 1, Model::PointMass),
                )
            }));
        }
        // While the newcomer joins, frames go on at a human pace, not all at once.
        if newcomer.is_some() && tg.server.rebalances() == 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
        let report = tg.server.step().unwrap();
        assert_eq!(
            report.updates, count,
            "frame {frame}: every aircraft stepped"
        );
    }
    let tracks = tg.server.tracks().to_vec();
    let rebalances = tg.server.rebalances();
    tg.finish().unwrap();
    if let Some(node) = newcomer {
        let report = node.join().unwrap().unwrap();
        assert!(report.aircraft > 0, "{report:?}");
    }
    (tracks, rebalances)
}

#[test]
fn a_node_that_joins_takes_half_the_aircraft_and_changes_no_trajectory() {
    let (alone, none) = fly("tg-rebalance-ref", None);
    assert_eq!(none, 0);
    let (shared, rebalances) = fly("tg-rebalance-join", Some(5));
    assert_eq!(rebalances, 1, "the newcomer got its share once");
    let moved = shared.iter().filter(|t| t.node == "tg-node-new").count();
    assert_eq!(moved, alone.len() / 2, "an even share");
    for (a, b) in alone.iter().zip(&shared) {
        assert_eq!(a.callsign, b.callsign);
        assert_eq!(a.track_time_us, b.track_time_us, "{}", a.callsign);
        assert_eq!(a.state, b.state, "{}: bit for bit", a.callsign);
    }
}

/// Two nodes flying DASE's stand-in, one eight times as costly per step as the other
/// (a slower host), `frames` frames; balancing on or off. Returns the final tracks, the
/// rebalances, why the first one was, and the slow node's aircraft just after it.
fn fly_uneven(
    federation: &str,
    balance: Option<Balance>,
    frames: u64,
) -> (Vec<Track>, u64, Option<String>, Option<usize>) {
    let rti = Rti::inproc();
    let scenario = scenario::load("us-400", PerformanceTable::builtin()).unwrap();
    let count = scenario.aircraft.len() as u64;
    create_federation(&rti, federation).unwrap();
    let nodes: Vec<_> = [("tg-node-slow", 40), ("tg-node-fast", 5)]
        .into_iter()
        .map(|(name, us)| {
            let (rti, federation) = (rti.clone(), federation.to_string());
            let model = Model::StandIn {
                cost: Duration::from_micros(us),
            };
            std::thread::spawn(move || run_node(&rti, &federation, NodeConfig::new(name, 1, model)))
        })
        .collect();
    let mut config = ServerConfig::new(2);
    config.balance = balance;
    let mut server = SimulationServer::start(&rti, federation, scenario, config).unwrap();
    let mut compute = Vec::new();
    let (mut first_why, mut slow_after_first) = (None, None);
    for frame in 1..=frames {
        let report = server.step().unwrap();
        assert_eq!(
            report.updates, count,
            "frame {frame}: every aircraft stepped"
        );
        compute.push(report.compute.as_secs_f64() * 1e3);
        if server.rebalances() == 1 && first_why.is_none() {
            first_why = server.last_rebalance().map(str::to_string);
            let slow = server.tracks().iter().filter(|t| t.node == "tg-node-slow");
            slow_after_first = Some(slow.count());
        }
    }
    // For the reader (--nocapture), not asserted: the slowest node's compute time.
    eprintln!(
        "{federation}: slowest node's compute, first 10 frames {:.2} ms, last 10 {:.2} ms",
        compute[..10].iter().sum::<f64>() / 10.0,
        compute[compute.len() - 10..].iter().sum::<f64>() / 10.0
    );
    let (tracks, rebalances) = (server.tracks().to_vec(), server.rebalances());
    server.stop().unwrap();
    for node in nodes {
        node.join().unwrap().unwrap();
    }
    rti.destroy_federation_execution(federation).unwrap();
    (tracks, rebalances, first_why, slow_after_first)
}

#[test]
fn a_node_that_falls_behind_gives_aircraft_to_the_faster_one_and_changes_no_trajectory() {
    const FRAMES: u64 = 60;
    let (still, none, _, _) = fly_uneven("tg-behind-ref", None, FRAMES);
    assert_eq!(none, 0, "without balancing nothing moves");
    let on_slow = |tracks: &[Track]| tracks.iter().filter(|t| t.node == "tg-node-slow").count();
    assert_eq!(
        on_slow(&still),
        still.len() / 2,
        "an even share to begin with"
    );
    let balance = Balance {
        every: 20,
        threshold: 0.25,
        min_compute: Duration::from_millis(1),
    };
    let (balanced, rebalances, why, slow) = fly_uneven("tg-behind", Some(balance), FRAMES);
    assert!(rebalances >= 1, "the slow node was relieved");
    // The first move is the slow node's. (A loaded machine may correct it later: the
    // speeds measured then include each node's preemptions.)
    assert_eq!(why.as_deref(), Some("tg-node-slow fell behind"));
    // Shares follow speed: the fast node, 8x as quick per aircraft, takes most.
    let slow = slow.expect("a first rebalance");
    assert!(
        slow > 0 && slow < balanced.len() * 3 / 10,
        "{slow} of {} left on the slow node",
        balanced.len()
    );
    for (a, b) in still.iter().zip(&balanced) {
        assert_eq!(a.callsign, b.callsign);
        assert_eq!(a.track_time_us, b.track_time_us, "{}", a.callsign);
        assert_eq!(a.state, b.state, "{}: bit for bit", a.callsign);
    }
}

//! A processing node joining a running target generator gets an even share of the
//! aircraft between two frames: every aircraft takes every frame, and each
//! trajectory stays bit for bit the one it has without the newcomer (the donor hands
//! the whole state over, `TgHandover`).

use std::time::Duration;

use glidepath::Rti;
use glidepath_tg::model::Model;
use glidepath_tg::node::{run_node, NodeConfig};
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::scenario;
use glidepath_tg::server::{LocalLayout, LocalRun, ServerConfig, Track};

const FRAMES: u64 = 40;

fn fly(federation: &str, join_at: Option<u64>) -> (Vec<Track>, u64) {
    let rti = Rti::inproc();
    let scenario = scenario::load("us-400", PerformanceTable::builtin()).unwrap();
    let count = scenario.aircraft.len() as u64;
    let layout = LocalLayout::new(1, 1, Model::PointMass);
    let mut tg = LocalRun::start(&rti, federation, scenario, &layout, ServerConfig::new(1)).unwrap();
    let mut newcomer = None;
    for frame in 1..=FRAMES {
        if join_at == Some(frame) {
            let (rti, federation) = (rti.clone(), federation.to_string());
            newcomer = Some(std::thread::spawn(move || {
                run_node(&rti, &federation, NodeConfig::new("tg-node-new", 1, Model::PointMass))
            }));
        }
        // While the newcomer joins, frames go on at a human pace, not all at once.
        if newcomer.is_some() && tg.server.rebalances() == 0 {
            std::thread::sleep(Duration::from_millis(50));
        }
        let report = tg.server.step().unwrap();
        assert_eq!(report.updates, count, "frame {frame}: every aircraft stepped");
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

//! Stations control a running target generator over HLA (`TgControl`: an operator's
//! line), as the stdin and the web do: the run pauses and resumes, a paused run still
//! hears its stations, a load ends the run for its caller to start the named
//! scenario, and a line that does not parse is counted, never obeyed.

use std::time::{Duration, Instant};

use glidepath::{Bytes, Federate, JoinOptions, ProcessModel, Rti};
use glidepath_tg::model::Model;
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::runner::{self, Control, Observer, RunEnd, RunOptions, Status};
use glidepath_tg::scenario;
use glidepath_tg::server::{LocalLayout, LocalRun, ServerConfig, SimulationServer};

fn station(rti: &Rti, federation: &str) -> (Federate, impl Fn(&str)) {
    let f = rti
        .join(
            federation,
            JoinOptions::named("station", "test").with_process_model(ProcessModel::Evoked),
        )
        .unwrap();
    let class = f.interaction_class_handle("TgControl").unwrap();
    let param = f.parameter_handle(class, "control").unwrap();
    f.publish_interaction_class(class).unwrap();
    let sender = f.clone();
    let send = move |line: &str| {
        let value = glidepath::mom::encode_unicode_string(line);
        sender
            .send_interaction(class, [(param, value)], Bytes::new())
            .unwrap();
    };
    (f, send)
}

#[test]
fn the_server_hands_on_a_stations_controls_and_counts_a_bad_line() {
    let rti = Rti::inproc();
    let demo = scenario::load("demo", PerformanceTable::builtin()).unwrap();
    let layout = LocalLayout::new(1, 1, Model::PointMass);
    let mut tg = LocalRun::start(&rti, "tg-station", demo, &layout, ServerConfig::new(1)).unwrap();
    let (f, send) = station(&rti, "tg-station");
    send("pause");
    send("rate 30");
    send("warp 9");
    send("load us-400");
    let t0 = Instant::now();
    let mut got = Vec::new();
    while got.len() < 3 && t0.elapsed() < Duration::from_secs(10) {
        tg.server.poll(Duration::from_millis(50)).unwrap();
        got.extend(tg.server.take_controls());
    }
    assert_eq!(
        got,
        [
            Control::Pause,
            Control::Rate(30.0),
            Control::Load("us-400".into())
        ]
    );
    assert_eq!(tg.server.malformed(), 1, "`warp 9` is counted");
    f.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    tg.finish().unwrap();
}

/// Counts the frames a run makes.
struct Frames(u64);

impl Observer for Frames {
    fn status(&mut self, _: &Status, _: &mut SimulationServer) {}
    fn tick(
        &mut self,
        _: &mut SimulationServer,
        frame: Option<&glidepath_tg::server::FrameReport>,
        _: f64,
    ) {
        self.0 += u64::from(frame.is_some());
    }
}

#[test]
fn a_station_pauses_resumes_and_loads_through_the_run() {
    let rti = Rti::inproc();
    let demo = scenario::load("demo", PerformanceTable::builtin()).unwrap();
    let layout = LocalLayout::new(1, 1, Model::PointMass);
    let mut tg =
        LocalRun::start(&rti, "tg-run-station", demo, &layout, ServerConfig::new(1)).unwrap();
    let (f, send) = station(&rti, "tg-run-station");
    let (_keep, controls) = crossbeam_channel::unbounded::<Control>();
    let options = RunOptions {
        rate_hz: 50.0,
        speed: 1.0,
        seconds: Some(60.0),
        status_every: Duration::from_millis(200),
    };
    let stations = std::thread::spawn(move || {
        // Paused for a second, then resumed; then the load ends the run.
        std::thread::sleep(Duration::from_millis(300));
        send("pause");
        std::thread::sleep(Duration::from_millis(1000));
        send("resume");
        std::thread::sleep(Duration::from_millis(500));
        send("load us-400");
        f
    });
    let t0 = Instant::now();
    let mut frames = Frames(0);
    let (_, end) = runner::run_until(&mut tg.server, &controls, options, &mut frames).unwrap();
    let wall = t0.elapsed().as_secs_f64();
    assert_eq!(end, RunEnd::Load("us-400".into()));
    // About 0.3 + 0.5 s of frames at 50 Hz, none in the paused second.
    let running_s = wall - 1.0;
    assert!(
        (frames.0 as f64) < (running_s + 0.3) * 50.0,
        "{} frames in {wall:.2} s of which 1 s paused",
        frames.0
    );
    assert!(frames.0 > 10, "{} frames", frames.0);
    let f = stations.join().unwrap();
    f.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    tg.finish().unwrap();
}

//! The operator's controls: a paused run steps exactly as often as asked, a command
//! line becomes a command, and bad lines are refused with the reason.

use std::time::Duration;

use glidepath::Rti;
use glidepath_tg::command::Instruction;
use glidepath_tg::model::Model;
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::runner::{run, Control, OnStatus, RunOptions, Status};
use glidepath_tg::scenario;
use glidepath_tg::server::{LocalLayout, LocalRun, ServerConfig, SimulationServer};

#[test]
fn pause_single_steps_resume_and_commands() {
    let rti = Rti::inproc();
    let demo = scenario::load("demo", PerformanceTable::builtin()).unwrap();
    let mut tg = LocalRun::start(
        &rti,
        "tg-runner",
        demo,
        &LocalLayout::new(1, 1, Model::PointMass),
        ServerConfig::new(1),
    )
    .unwrap();
    let (tx, rx) = crossbeam_channel::unbounded();
    for c in [Control::Pause, Control::Step, Control::Step] {
        tx.send(c).unwrap();
    }
    let options = RunOptions {
        rate_hz: 0.0,
        speed: 1.0,
        seconds: Some(0.3),
        status_every: Duration::from_millis(100),
    };
    let mut statuses = Vec::new();
    let mut keep = OnStatus(|s: &Status, _: &mut SimulationServer| statuses.push(s.clone()));
    run(&mut tg.server, &rx, options.clone(), &mut keep).unwrap();
    assert_eq!(
        tg.server.frame(),
        2,
        "paused: two single steps, nothing else"
    );
    assert!(statuses.iter().all(|s| s.paused && s.aircraft == 8));

    // Resume paced at 200 Hz with a command on the way; then an explicit stop.
    tx.send(Control::Resume).unwrap();
    tx.send(Control::Rate(200.0)).unwrap();
    tx.send(Control::parse("UAL101 altitude 20000").unwrap())
        .unwrap();
    let paced = RunOptions {
        seconds: Some(0.5),
        ..options
    };
    let last = run(
        &mut tg.server,
        &rx,
        paced,
        &mut OnStatus(|_: &Status, _: &mut SimulationServer| {}),
    )
    .unwrap();
    assert!(tg.server.frame() > 10, "frame {}", tg.server.frame());
    assert!(!last.paused && last.rate_hz > 0.0, "{last:?}");
    // The run-wide jitter covers every paced frame up to the last status, and its
    // percentiles are ordered.
    assert!(last.paced_frames > 10, "{last:?}");
    let [p50, p99, max] = last.run_jitter_ms;
    assert!(0.0 <= p50 && p50 <= p99 && p99 <= max, "{last:?}");
    assert_eq!(
        statuses[0].paced_frames, 0,
        "unpaced frames are not counted"
    );
    let acks = tg.server.take_acks();
    assert_eq!(acks.len(), 1);
    assert_eq!(acks[0].outcome, Ok(()));
    tx.send(Control::Stop).unwrap();
    let before = tg.server.frame();
    run(
        &mut tg.server,
        &rx,
        RunOptions {
            seconds: None,
            ..options
        },
        &mut OnStatus(|_: &Status, _: &mut SimulationServer| {}),
    )
    .unwrap();
    assert_eq!(
        tg.server.frame(),
        before,
        "stop ends the run before another frame"
    );
    tg.finish().unwrap();
}

#[test]
fn control_lines_parse_or_say_what_is_wrong() {
    assert_eq!(Control::parse(" rate 30 ").unwrap(), Control::Rate(30.0));
    assert_eq!(Control::parse("speed 4").unwrap(), Control::Speed(4.0));
    assert_eq!(
        Control::parse("load us-400").unwrap(),
        Control::Load("us-400".into())
    );
    assert!(Control::parse("load").unwrap_err().contains("scenario"));
    assert_eq!(
        Control::parse("DAL404 direct KSEA").unwrap(),
        Control::Command {
            callsign: "DAL404".into(),
            instruction: Instruction::DirectTo {
                waypoint: "KSEA".into()
            }
        }
    );
    assert_eq!(
        Control::parse("rate fast").unwrap_err(),
        "`fast` is not a rate in Hz"
    );
    assert_eq!(
        Control::parse("speed 0").unwrap_err(),
        "a speed factor must be above 0 (pause stops time)"
    );
    assert_eq!(
        Control::parse("UAL1 climb 3").unwrap_err(),
        "unknown command `climb` (heading, altitude, speed, direct, resume)"
    );
    assert_eq!(
        Control::parse("UAL1 heading").unwrap_err(),
        "`heading` needs a number of degrees"
    );
    assert_eq!(
        Control::parse("UAL1 resume now").unwrap_err(),
        "unexpected `now` after the command"
    );
}

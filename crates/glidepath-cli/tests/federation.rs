//! `glidepath federation save`, `restore` and `status` against a running federation
//! over NATS: a real `nats-server`, `glidepath server` as its own process, and member
//! federates in this process (one answers its part of each save and restore; for
//! `status`, two whose management object model values the tool prints).
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) this test fails and
//! says how to install it: `bash scripts/test.sh`.

use std::io::{BufRead, BufReader};

use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use glidepath::backend::nats::NatsServerProcess;
use glidepath::{Bytes, Callback, CallbackLog, Fom, JoinOptions, ResignAction, Rti};

mod support;
use support::*;

const TIMEOUT: Duration = Duration::from_secs(60);

/// Starts `glidepath server` on `url` and waits for its `ready` line.
fn executive_server(url: &str) -> Running {
    let mut child = glidepath(&["server", "--nats-url", url]).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let process = Running(child);
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    loop {
        let line = rx
            .recv_timeout(TIMEOUT)
            .expect("glidepath server gets ready");
        if line.ends_with("; ready") {
            return process;
        }
    }
}

/// Runs a command to completion within [`TIMEOUT`]; returns (success, stdout, stderr).
fn run(mut command: Command) -> (bool, String, String) {
    let child = command.spawn().unwrap();
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let output = rx.recv_timeout(TIMEOUT).expect("finishes").unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_cli_saves_and_restores_a_running_federation_and_reports_a_refusal() {
    const NAME: &str = "cli-save";
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let _server = executive_server(&url);
    let rti = Rti::nats(&url).unwrap();
    let fom = Fom::load_files(&[workspace_root().join("foms/air-traffic.xml")]).unwrap();
    rti.create_federation_execution_with_fom(NAME, fom).unwrap();
    let member = rti.join(NAME, JoinOptions::named("member", "sim")).unwrap();

    // The member answers its part of every save and restore, and reports outcomes.
    let stop = Arc::new(AtomicBool::new(false));
    let (outcomes_tx, outcomes) = mpsc::channel();
    let answering = {
        let stop = stop.clone();
        thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                match member.next_callback(Duration::from_millis(50)) {
                    Some(Callback::InitiateFederateSave { .. }) => {
                        member.federate_save_begun().unwrap();
                        member.federate_save_complete(&b"member state"[..]).unwrap();
                    }
                    Some(Callback::InitiateFederateRestore { user_state, .. }) => {
                        assert_eq!(&user_state[..], b"member state");
                        member.federate_restore_complete().unwrap();
                    }
                    Some(
                        c
                        @ (Callback::FederationSaved { .. } | Callback::FederationRestored { .. }),
                    ) => {
                        outcomes_tx.send(c).unwrap();
                    }
                    _ => {}
                }
            }
            member.resign(ResignAction::NoAction).unwrap();
        })
    };

    let (ok, out, err) = run(glidepath(&[
        "federation",
        "save",
        NAME,
        "first",
        "--nats-url",
        &url,
    ]));
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert!(
        out.contains("federation `cli-save` saved as `first`"),
        "{out}"
    );
    assert_eq!(
        outcomes.recv_timeout(TIMEOUT).unwrap(),
        Callback::FederationSaved {
            label: "first".into()
        }
    );

    let (ok, out, err) = run(glidepath(&[
        "federation",
        "restore",
        NAME,
        "first",
        "--nats-url",
        &url,
    ]));
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert!(
        out.contains("federation `cli-save` restored to `first`"),
        "{out}"
    );
    assert_eq!(
        outcomes.recv_timeout(TIMEOUT).unwrap(),
        Callback::FederationRestored {
            label: "first".into()
        }
    );

    let (ok, out, err) = run(glidepath(&[
        "federation",
        "restore",
        NAME,
        "nope",
        "--nats-url",
        &url,
    ]));
    assert!(!ok, "stdout: {out}\nstderr: {err}");
    assert!(err.contains("no save labelled `nope`"), "{err}");

    stop.store(true, Ordering::Relaxed);
    answering.join().unwrap();
}

#[test]
fn status_prints_every_member_as_the_mom_reports_it() {
    const NAME: &str = "cli-status";
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let _server = executive_server(&url);
    let rti = Rti::nats(&url).unwrap();
    let fom = Fom::load_files(&[workspace_root().join("foms/air-traffic.xml")]).unwrap();
    rti.create_federation_execution_with_fom(NAME, fom).unwrap();
    // Immediate model: the members' RTI threads answer while this thread waits.
    let tower = rti
        .join_immediate(
            NAME,
            JoinOptions::named("tower", "controller"),
            CallbackLog::default(),
        )
        .unwrap();
    let pilot = rti
        .join_immediate(
            NAME,
            JoinOptions::named("pilot", "station"),
            CallbackLog::default(),
        )
        .unwrap();
    tower.enable_time_regulation(5.0).unwrap();
    pilot.enable_time_constrained().unwrap();
    let deadline = std::time::Instant::now() + TIMEOUT;
    while !(tower.is_time_regulating() && pilot.is_time_constrained()) {
        assert!(
            std::time::Instant::now() < deadline,
            "time modes not enabled"
        );
        thread::sleep(Duration::from_millis(10));
    }
    let interaction = tower
        .fom()
        .interaction_classes
        .iter()
        .find(|c| c.name != "HLAinteractionRoot" && !c.qualified_name.contains("HLAmanager"))
        .map(|c| c.handle)
        .expect("the FOM has an interaction class");
    tower.publish_interaction_class(interaction).unwrap();
    for _ in 0..4 {
        tower
            .send_interaction(
                interaction,
                Vec::<(glidepath::ParameterHandle, Bytes)>::new(),
                "",
            )
            .unwrap();
    }

    let (ok, out, err) = run(glidepath(&[
        "federation",
        "status",
        NAME,
        "--nats-url",
        &url,
    ]));
    assert!(ok, "stdout: {out}\nstderr: {err}");
    assert!(
        out.contains(&format!("federation `{NAME}`: 3 members")),
        "{out}"
    );
    let row = |name: &str| {
        out.lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .unwrap_or_else(|| panic!("no row for {name}:\n{out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect::<Vec<_>>()
    };
    let tower_row = row("tower");
    assert_eq!(tower_row[0], tower.handle().0.to_string(), "{out}");
    assert_eq!(tower_row[2], "controller", "{out}");
    assert_eq!(tower_row[4], "true", "regulating: {out}");
    assert_eq!(tower_row[7], "5", "lookahead: {out}");
    assert_eq!(tower_row[13], "4", "interactions sent: {out}");
    let pilot_row = row("pilot");
    assert_eq!(pilot_row[4], "false", "{out}");
    assert_eq!(pilot_row[5], "true", "constrained: {out}");

    let (ok, out, err) = run(glidepath(&[
        "federation",
        "status",
        NAME,
        "--json",
        "--nats-url",
        &url,
    ]));
    assert!(ok, "stdout: {out}\nstderr: {err}");
    let json: serde_json::Value = serde_json::from_str(&out).unwrap();
    let federates = json["HLAfederate"].as_array().unwrap();
    assert_eq!(federates.len(), 2, "{out}");
    assert_eq!(federates[0]["HLAfederateName"], "tower");
    assert_eq!(federates[0]["HLAinteractionsSent"], 4);
    assert_eq!(federates[1]["HLAtimeConstrained"], true);
    assert_eq!(json["HLAfederation"]["HLAfederationName"], NAME);

    let (ok, _, err) = run(glidepath(&[
        "federation",
        "status",
        "no-such-federation",
        "--nats-url",
        &url,
    ]));
    assert!(!ok);
    assert!(err.contains("no-such-federation"), "{err}");

    // The tool left again: only the two members remain.
    assert_eq!(tower.list_federates().unwrap().len(), 2);
    pilot.resign(ResignAction::NoAction).unwrap();
    tower.resign(ResignAction::NoAction).unwrap();
}

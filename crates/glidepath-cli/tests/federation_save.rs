//! `glidepath federation save` and `restore` against a running federation over NATS:
//! a real `nats-server`, `glidepath server` as its own process, and a member federate
//! in this process that answers its part of each save and restore.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) this test fails and
//! says how to install it: `bash scripts/test.sh`.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use glidepath::backend::nats::NatsServerProcess;
use glidepath::{Callback, Fom, JoinOptions, ResignAction, Rti};

const TIMEOUT: Duration = Duration::from_secs(60);

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn glidepath(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_glidepath"));
    c.args(args)
        .current_dir(workspace_root())
        .env_remove("GLIDEPATH_TRANSPORT")
        .env_remove("GLIDEPATH_NATS_URL")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// A child process killed on drop.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

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

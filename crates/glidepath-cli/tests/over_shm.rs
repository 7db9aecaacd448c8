//! The `shm` transport from the command line: `glidepath server --transport shm`
//! hosts a shared-memory system and federates in three other processes of this host
//! run the demo through it; a second host is refused, a bad name is named, and a
//! federate with no host says what to start.

mod support;

use std::io::{BufRead, BufReader};
use std::process::Command;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use support::{glidepath, Running};

const TIMEOUT: Duration = Duration::from_secs(60);

fn system(test: &str) -> String {
    format!("cli-{test}-{}", std::process::id())
}

/// Starts `glidepath server --transport shm --shm-name NAME` and waits for `ready`.
fn shm_server(name: &str) -> Running {
    let mut child = glidepath(&["server", "--transport", "shm", "--shm-name", name])
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let line = rx
        .recv_timeout(TIMEOUT)
        .expect("glidepath server --transport shm did not get ready");
    assert!(
        line.ends_with("; ready") && line.contains(&format!("system `{name}`")),
        "{line}"
    );
    Running(child)
}

/// Runs a command to completion; returns (success, stdout, stderr).
fn run(mut command: Command) -> (bool, String, String) {
    let output = command.output().unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn demo(name: &str, extra: &[&str]) -> Command {
    let mut args = vec![
        "demo",
        "--transport",
        "shm",
        "--steps",
        "40",
        "--federation",
        "spread",
    ];
    args.extend_from_slice(extra);
    let mut c = glidepath(&args);
    c.env("GLIDEPATH_SHM_NAME", name);
    c
}

#[test]
fn a_federation_of_three_processes_runs_through_shared_memory() {
    let name = system("three");
    let _server = shm_server(&name);
    let spawn = |extra: &'static [&'static str]| {
        let command = demo(&name, extra);
        thread::spawn(move || run(command))
    };
    let monitor = spawn(&["--role", "monitor", "--federates", "2"]);
    let first = spawn(&["--role", "aircraft", "--federates", "1", "--index", "1"]);
    let second = spawn(&[
        "--role",
        "aircraft",
        "--federates",
        "1",
        "--index",
        "2",
        "--process-model",
        "immediate",
    ]);
    support::check_spread_demo(
        monitor.join().unwrap(),
        [first.join().unwrap(), second.join().unwrap()],
    );
}

#[test]
fn a_second_host_a_bad_name_and_a_missing_host_are_refused_clearly() {
    let name = system("refusals");
    {
        let _server = shm_server(&name);
        let (ok, _, err) = run(glidepath(&[
            "server",
            "--transport",
            "shm",
            "--shm-name",
            &name,
        ]));
        assert!(!ok);
        assert!(
            err.contains("another executive server already answers"),
            "{err}"
        );
    }
    let (ok, _, err) = run(glidepath(&[
        "server",
        "--transport",
        "shm",
        "--shm-name",
        "../etc",
    ]));
    assert!(!ok);
    assert!(
        err.contains("--shm-name") && err.contains("letters, digits"),
        "{err}"
    );
    // The server above was killed: nobody hosts the system any more.
    let (ok, _, err) = run(demo(&name, &["--federates", "1"]));
    assert!(!ok);
    assert!(
        err.contains(&format!(
            "glidepath server --transport shm --shm-name {name}"
        )),
        "{err}"
    );
}

#[test]
fn a_signalled_server_removes_its_files() {
    let name = system("signal");
    let files = || -> Vec<String> {
        std::fs::read_dir("/dev/shm")
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with(&format!("glidepath-{name}.")))
            .collect()
    };
    for signal in [libc::SIGTERM, libc::SIGINT] {
        let mut server = shm_server(&name);
        assert!(!files().is_empty(), "the system has files while hosted");
        // SAFETY: kill(2) on our own child's pid.
        assert_eq!(unsafe { libc::kill(server.0.id() as i32, signal) }, 0);
        let status = server.0.wait().unwrap();
        assert!(status.success(), "signal {signal}: {status:?}");
        assert_eq!(files(), Vec::<String>::new(), "signal {signal}: files left");
    }
}

//! `glidepath tg` and `glidepath bench tg` as users run them: the built-in list, the
//! demo on the embedded transport with its status lines and commands from standard
//! input, a scenario error, the same demo with two node processes over a real
//! `nats-server`, and the benchmark's JSON.
//!
//! Every run is bounded by its own `--seconds`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use glidepath::backend::nats::NatsServerProcess;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn glidepath(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_glidepath"))
        .args(args)
        .current_dir(workspace_root())
        .env_remove("GLIDEPATH_TRANSPORT")
        .env_remove("GLIDEPATH_NATS_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// Reads the child's standard error to the end on a thread of its own, so that it
/// never fills the pipe; joined, the thread gives all of it.
fn drain_stderr(child: &mut std::process::Child) -> std::thread::JoinHandle<String> {
    let mut stderr = child.stderr.take().expect("stderr piped");
    std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).unwrap();
        s
    })
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn status_lines(out: &str) -> Vec<&str> {
    out.lines().filter(|l| l.starts_with("t ")).collect()
}

#[test]
fn list_names_the_builtins() {
    let o = glidepath(&["tg", "--list"], "");
    assert!(o.status.success());
    let out = text(&o.stdout);
    for name in ["demo", "us-400", "us-1000", "us-10000", "uam-bay-area"] {
        assert!(
            out.lines().any(|l| l.starts_with(name)),
            "{name} missing in:\n{out}"
        );
    }
}

#[test]
fn demo_prints_a_status_per_second_and_answers_commands() {
    let o = glidepath(
        &["tg", "--scenario", "demo", "--seconds", "2.5"],
        "UAL101 heading 270\nNOPE1 altitude 3000\n",
    );
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    let lines = status_lines(&out);
    assert_eq!(lines.len(), 2, "{out}");
    assert!(
        lines
            .iter()
            .all(|l| l.contains("aircraft      8") && l.contains(" Hz")),
        "{out}"
    );
    assert!(
        out.contains("command 1 to UAL101: applied at frame"),
        "{out}"
    );
    assert!(
        out.contains("command 2 to NOPE1: refused at frame")
            && out.contains("unknown aircraft NOPE1"),
        "{out}"
    );
}

#[test]
fn a_bad_scenario_is_reported_at_its_line() {
    let dir = std::env::temp_dir().join(format!("glidepath-tg-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.toml");
    std::fs::write(
        &file,
        "name = \"bad\"\n[[aircraft]]\ncallsign = \"X1\"\ntype = \"Z999\"\nroute = [\"KSFO\"]\n",
    )
    .unwrap();
    let o = glidepath(&["tg", "--scenario", file.to_str().unwrap()], "");
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.contains(&format!(
            "{}:4: aircraft[0].type: unknown type `Z999`",
            file.display()
        )),
        "{err}"
    );
    let o = glidepath(&["tg", "--model", "lookup"], "");
    assert!(text(&o.stderr).contains("--model: `lookup` is not point-mass or stand-in"));
    for (rate, why) in [
        ("0", "0 Hz is not in (0, 1000]"),
        ("fast", "`fast` is not a number of hertz"),
    ] {
        let o = glidepath(&["tg", "--web-rate", rate], "");
        assert!(!o.status.success());
        let err = text(&o.stderr);
        assert!(err.contains("--web-rate") && err.contains(why), "{err}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn two_node_processes_over_nats() {
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let o = glidepath(
        &[
            "tg",
            "--scenario",
            "demo",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--nodes",
            "2",
            "--seconds",
            "2.5",
        ],
        "",
    );
    let (out, err) = (text(&o.stdout), text(&o.stderr));
    assert!(o.status.success(), "{out}\n{err}");
    assert_eq!(status_lines(&out).len(), 2, "{out}");
    assert!(
        out.contains("2 node(s)") && out.contains("transport nats"),
        "{out}"
    );
    // Each node process flew half the demo and stopped when told. The two processes
    // share one stderr, so their lines may interleave: count, do not parse lines.
    for node in ["tg-node-1", "tg-node-2"] {
        assert!(err.contains(node), "{err}");
    }
    assert!(err.matches("4 aircraft, Stopped").count() >= 2, "{err}");
}

#[test]
fn bench_tg_writes_the_update_rate() {
    let json = std::env::temp_dir().join(format!("glidepath-tg-bench-{}.json", std::process::id()));
    let o = glidepath(
        &[
            "bench",
            "tg",
            "--aircraft",
            "50",
            "--nodes",
            "2",
            "--seconds",
            "0.5",
            "--runs",
            "2",
            "--json",
            json.to_str().unwrap(),
        ],
        "",
    );
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}\n{}", text(&o.stderr));
    assert!(out.contains("all runs"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["model"], "point-mass");
    assert_eq!(v["aircraft"], 50);
    assert_eq!(v["nodes"], 2);
    assert!(v["update_rate_hz"].as_f64().unwrap() > 0.0);
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    std::fs::remove_file(&json).unwrap();
}

/// `bench tg --transport nats`: the nodes are processes of their own, as DASE measured
/// them, and every aircraft's state reaches the server each frame.
#[test]
fn bench_tg_over_nats_runs_the_nodes_as_processes() {
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let json = std::env::temp_dir().join(format!(
        "glidepath-tg-bench-nats-{}.json",
        std::process::id()
    ));
    let o = glidepath(
        &[
            "bench",
            "tg",
            "--transport",
            "nats",
            "--nats-url",
            &nats.url(),
            "--aircraft",
            "50",
            "--nodes",
            "2",
            "--seconds",
            "0.5",
            "--runs",
            "2",
            "--json",
            json.to_str().unwrap(),
        ],
        "",
    );
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}\n{}", text(&o.stderr));
    assert!(out.contains("nodes as processes over NATS"), "{out}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(v["transport"], "nats");
    assert_eq!(v["nodes"], 2);
    assert!(v["update_rate_hz"].as_f64().unwrap() > 0.0);
    assert_eq!(v["runs"].as_array().unwrap().len(), 2);
    std::fs::remove_file(&json).unwrap();
    let o = glidepath(&["bench", "tg", "--transport", "shm", "--runs", "1"], "");
    assert!(!o.status.success());
    assert!(
        text(&o.stderr).contains("--transport `shm`"),
        "{}",
        text(&o.stderr)
    );
}

/// `bench tg --hosts 2`: DASE's two hosts as two network namespaces joined by a veth
/// pair; the nodes' states cross the link to the simulation server, and nothing of the
/// laboratory is left behind. Wrong combinations are refused with the reason.
#[test]
fn bench_tg_on_two_hosts_runs_the_nodes_across_a_link() {
    let json = std::env::temp_dir().join(format!(
        "glidepath-tg-bench-hosts-{}.json",
        std::process::id()
    ));
    let child = Command::new(env!("CARGO_BIN_EXE_glidepath"))
        .args([
            "bench",
            "tg",
            "--transport",
            "nats",
            "--hosts",
            "2",
            "--aircraft",
            "50",
            "--nodes",
            "1,2",
            "--seconds",
            "0.5",
            "--runs",
            "1",
            "--json",
        ])
        .arg(&json)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let o = child.wait_with_output().unwrap();
    let out = text(&o.stdout);
    assert!(o.status.success(), "{out}\n{}", text(&o.stderr));
    assert!(out.contains("on two hosts"), "{out}");
    let rows: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for (row, nodes) in rows.iter().zip([1, 2]) {
        assert_eq!(row["hosts"], 2);
        assert_eq!(row["nodes"], nodes);
        assert!(row["update_rate_hz"].as_f64().unwrap() > 0.0, "{row}");
    }
    std::fs::remove_file(&json).unwrap();
    let namespaces = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let prefix = format!("gplab-{pid}-");
    assert!(
        !text(&namespaces.stdout).contains(&prefix),
        "{}",
        text(&namespaces.stdout)
    );
    for (args, why) in [
        (&["--hosts", "2"][..], "needs --transport nats"),
        (&["--transport", "nats", "--hosts", "3"], "1 host or 2"),
        (
            &[
                "--transport",
                "nats",
                "--hosts",
                "2",
                "--nats-url",
                "nats://127.0.0.1:1",
            ],
            "leave out --nats-url",
        ),
    ] {
        let mut all = vec!["bench", "tg", "--runs", "1"];
        all.extend_from_slice(args);
        let o = glidepath(&all, "");
        assert!(!o.status.success(), "{args:?}");
        assert!(
            text(&o.stderr).contains(why),
            "{args:?}: {}",
            text(&o.stderr)
        );
    }
}

/// A node process killed mid-run: within the failover time its aircraft continue on
/// the other node from their last published state, none lost and none duplicated
/// (every frame after it carries exactly one state per aircraft).
#[test]
fn a_killed_node_process_hands_its_aircraft_to_the_other() {
    use std::io::{BufRead, BufReader};
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let mut child = Command::new(env!("CARGO_BIN_EXE_glidepath"))
        .args([
            "tg",
            "--scenario",
            "us-400",
            "--transport",
            "nats",
            "--nats-url",
            &url,
            "--nodes",
            "2",
        ])
        .args(["--seconds", "5", "--rate", "30", "--failover-ms", "500"])
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err_reader = drain_stderr(&mut child);
    let mut lines = Vec::new();
    let mut victim = None;
    let mut killed = false;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if let Some(pid) = line.strip_prefix("node tg-node-2 pid ") {
            victim = Some(pid.to_string());
        }
        // After the first status line: the run is under way.
        if line.starts_with("t ") && !killed {
            let pid = victim
                .clone()
                .expect("the node's pid is printed before the run");
            assert!(Command::new("kill")
                .args(["-9", &pid])
                .status()
                .unwrap()
                .success());
            killed = true;
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    let err = err_reader.join().unwrap();
    let out = lines.join("\n");
    assert!(status.success(), "{out}\n{err}");
    assert!(killed, "{out}");
    let lost_at = lines
        .iter()
        .position(|l| l.starts_with("node tg-node-2 lost"))
        .unwrap_or_else(|| panic!("no failover in:\n{out}"));
    // The status lines after the one that saw the failover: 400 aircraft, one update each per frame.
    let after: Vec<&String> = lines[lost_at + 1..]
        .iter()
        .filter(|l| l.starts_with("t "))
        .skip(1)
        .collect();
    assert!(!after.is_empty(), "{out}");
    for l in after {
        assert!(
            l.contains("aircraft    400  updates/frame    400.0"),
            "{l}\n{out}"
        );
    }
    assert!(
        out.contains("final frame")
            && out.contains("400 aircraft, 400 with a state of the last frame"),
        "{out}"
    );
    assert!(
        err.lines().any(|l| l.starts_with("tg-node-1")
            && l.contains("400 aircraft")
            && l.ends_with("Stopped")),
        "{err}"
    );
}

/// A node process that joins a running target generator over NATS takes half the
/// aircraft before the next frame, and every frame after still carries one state per
/// aircraft.
#[test]
fn a_node_process_that_joins_takes_an_even_share() {
    use std::io::{BufRead, BufReader};
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let url = nats.url();
    let mut child = Command::new(env!("CARGO_BIN_EXE_glidepath"))
        .args([
            "tg",
            "--scenario",
            "us-400",
            "--transport",
            "nats",
            "--nats-url",
            &url,
        ])
        .args(["--nodes", "1", "--seconds", "6", "--rate", "30"])
        .current_dir(workspace_root())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let err_reader = drain_stderr(&mut child);
    let mut lines = Vec::new();
    let mut newcomer = None;
    for line in BufReader::new(child.stdout.take().unwrap()).lines() {
        let line = line.unwrap();
        if line.starts_with("t ") && newcomer.is_none() {
            newcomer = Some(
                Command::new(env!("CARGO_BIN_EXE_glidepath"))
                    .args([
                        "tg",
                        "--role",
                        "node",
                        "--transport",
                        "nats",
                        "--nats-url",
                        &url,
                    ])
                    .args(["--federation", "glidepath-tg", "--name", "tg-node-late"])
                    .stdin(Stdio::null())
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap(),
            );
        }
        lines.push(line);
    }
    let status = child.wait().unwrap();
    let err = err_reader.join().unwrap();
    let out = lines.join("\n");
    assert!(status.success(), "{out}\n{err}");
    let node = newcomer.expect("a status line").wait_with_output().unwrap();
    let node_err = String::from_utf8_lossy(&node.stderr);
    assert!(node.status.success(), "{node_err}");
    let joined = lines
        .iter()
        .position(|l| l.starts_with("a node joined"))
        .unwrap_or_else(|| panic!("no rebalance in:\n{out}"));
    assert!(
        lines[joined].contains("tg-node-1 200") && lines[joined].contains("tg-node-late 200"),
        "{}",
        lines[joined]
    );
    for l in lines[joined + 1..]
        .iter()
        .filter(|l| l.starts_with("t "))
        .skip(1)
    {
        assert!(
            l.contains("aircraft    400  updates/frame    400.0"),
            "{l}\n{out}"
        );
    }
    assert!(
        out.contains("400 aircraft, 400 with a state of the last frame"),
        "{out}"
    );
    assert!(node_err.contains("200 aircraft"), "{node_err}");
}

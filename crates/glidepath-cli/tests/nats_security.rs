//! The command line against a `nats-server` that requires a user and password: the
//! credentials work from the environment (in the URL) and from a user flag with a
//! password file; a password on the command line is refused unprinted; a wrong one is
//! reported as an authorization refusal (not as "nothing answers"), never printed.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use glidepath::backend::nats::NatsServerProcess;

const PASSWORD: &str = "pw-Zq81x";

fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .and_then(|p| p.parent())
        .unwrap()
        .to_path_buf()
}

/// Runs `glidepath` with `args` and extra environment; (success, stdout, stderr).
fn run(args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_glidepath"));
    command.args(args).current_dir(workspace_root());
    for v in [
        "GLIDEPATH_TRANSPORT",
        "GLIDEPATH_NATS_URL",
        "GLIDEPATH_NATS_USER",
        "GLIDEPATH_NATS_PASSWORD",
    ] {
        command.env_remove(v);
    }
    command.envs(env.iter().copied());
    let output = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn secured_server(dir: &std::path::Path) -> NatsServerProcess {
    let conf = dir.join("server.conf");
    std::fs::write(
        &conf,
        format!(r#"authorization {{ users = [ {{ user: alice, password: "{PASSWORD}" }} ] }}"#),
    )
    .unwrap();
    NatsServerProcess::start_with(None, &["-c", conf.to_str().unwrap()])
        .unwrap_or_else(|e| panic!("{e}"))
}

const BENCH: [&str; 8] = [
    "bench",
    "latency",
    "--transport",
    "nats",
    "--count",
    "20",
    "--size",
    "200",
];

#[test]
fn bench_over_a_server_that_requires_a_password() {
    let dir = std::env::temp_dir().join(format!("glidepath-cli-sec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let nats = secured_server(&dir);
    let port = nats.port();

    // Credentials in the URL, from the environment.
    let url = format!("nats://alice:{PASSWORD}@127.0.0.1:{port}");
    let (ok, out, err) = run(&BENCH, &[("GLIDEPATH_NATS_URL", &url)]);
    assert!(ok, "{out}\n{err}");
    assert!(
        !out.contains(PASSWORD) && !err.contains(PASSWORD),
        "{out}\n{err}"
    );

    // A user flag and a password file.
    let file = dir.join("password");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let plain = nats.url();
    let mut args = BENCH.to_vec();
    args.extend([
        "--nats-url",
        &plain,
        "--nats-user",
        "alice",
        "--nats-password-file",
        file.to_str().unwrap(),
    ]);
    let (ok, out, err) = run(&args, &[]);
    assert!(ok, "{out}\n{err}");
    // The same with the ponger in a process of its own: the child gets the
    // credentials too (in its environment, never on its command line).
    args.push("--processes");
    let (ok, out, err) = run(&args, &[]);
    assert!(ok, "{out}\n{err}");
    assert!(out.contains("2 processes"), "{out}");

    // The same URL on the command line: refused before anything is tried, unprinted.
    let mut args = BENCH.to_vec();
    args.extend(["--nats-url", &url]);
    let (ok, _, err) = run(&args, &[]);
    assert!(!ok);
    assert!(err.contains("visible to every user"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");

    // A wrong password: an authorization refusal, not "nothing answers", unprinted.
    let wrong = format!("nats://alice:not-{PASSWORD}@127.0.0.1:{port}");
    let (ok, _, err) = run(&BENCH, &[("GLIDEPATH_NATS_URL", &wrong)]);
    assert!(!ok);
    assert!(
        err.contains("refused the connection: authorization"),
        "{err}"
    );
    assert!(!err.contains("nothing answers"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
    let _ = std::fs::remove_dir_all(dir);
}

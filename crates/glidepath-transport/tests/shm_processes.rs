//! The `shm` backend across real process boundaries, and what a process killed with
//! SIGKILL leaves behind: nothing that blocks its peers or the next run.
//!
//! Each test re-runs this test binary as its child (`--exact` the same test, with the
//! child's role in `GLIDEPATH_SHM_TEST_ROLE`), so parent and child are separate
//! processes sharing only the system's files in /dev/shm.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use bytes::Bytes;
use glidepath_core::{
    Body, Envelope, ExecReply, ExecRequest, FederateHandle, FederationId, Fom,
    InteractionClassHandle, OrderType, ParameterHandle, Topic, TransportationType,
};
use glidepath_transport::{Endpoint, ShmOptions, ShmTransport, TransportError};

const ROLE_ENV: &str = "GLIDEPATH_SHM_TEST_ROLE";
const SYSTEM_ENV: &str = "GLIDEPATH_SHM_TEST_SYSTEM";
const FEDERATION_ENV: &str = "GLIDEPATH_SHM_TEST_FEDERATION";
const TOPIC: Topic = Topic::InteractionClass(InteractionClassHandle(1));

fn options() -> ShmOptions {
    ShmOptions {
        ring_bytes: 1 << 16,
        ..ShmOptions::default()
    }
}

fn system_name(test: &str) -> String {
    format!("proc-{test}-{}", std::process::id())
}

fn data(sender: u32, seq: u64) -> Envelope {
    Envelope {
        sender: FederateHandle(sender),
        seq,
        publish_time_ns: 0,
        body: Body::Interaction {
            class: InteractionClassHandle(1),
            values: std::sync::Arc::from(vec![(
                ParameterHandle(1),
                Bytes::from(vec![seq as u8; 100]),
            )]),
            tag: Bytes::new(),
            order: OrderType::Receive,
            transport: TransportationType::Reliable,
            time: None,
            regions: None,
        },
    }
}

fn create(endpoint: &dyn Endpoint, name: &str) -> FederationId {
    match endpoint.request(ExecRequest::Create {
        name: name.into(),
        fom: std::sync::Arc::new(Fom::default()),
    }) {
        Ok(ExecReply::Created { id }) => id,
        other => panic!("create: {other:?}"),
    }
}

/// Starts this test again as a child process in `role`; returns it once it printed
/// `READY`.
fn spawn_child(test: &str, role: &str, system: &str, federation: Option<FederationId>) -> Child {
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", test, "--nocapture", "--test-threads=1"])
        .env(ROLE_ENV, role)
        .env(SYSTEM_ENV, system)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if let Some(f) = federation {
        cmd.env(FEDERATION_ENV, f.0.to_string());
    }
    let mut child = cmd.spawn().expect("re-run the test binary");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) if line.trim_end().ends_with("READY") => break,
            Some(Ok(_)) => continue,
            other => panic!("the child ended before it was ready: {other:?}"),
        }
    }
    // Keep reading its output so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    child
}

fn kill(child: &mut Child) {
    // SAFETY: sending a signal to our own child.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGKILL);
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the child was killed: {status:?}");
}

fn role() -> Option<(String, String, Option<FederationId>)> {
    let role = std::env::var(ROLE_ENV).ok()?;
    let system = std::env::var(SYSTEM_ENV).unwrap();
    let federation = std::env::var(FEDERATION_ENV)
        .ok()
        .map(|f| FederationId(f.parse().unwrap()));
    Some((role, system, federation))
}

fn ready_then_wait_to_be_killed() -> ! {
    println!("READY");
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// A child that subscribes and never reads is killed: a reliable sender whose
/// envelopes fill its ring finds it dead, frees its slot and goes on, and another
/// receiver gets every envelope in order.
#[test]
fn a_killed_receiver_does_not_block_its_senders() {
    const TEST: &str = "a_killed_receiver_does_not_block_its_senders";
    if let Some((_, system, federation)) = role() {
        let transport = ShmTransport::connect(&system, options()).unwrap();
        let endpoint = transport.open_endpoint().unwrap();
        endpoint.subscribe(federation.unwrap(), TOPIC).unwrap();
        ready_then_wait_to_be_killed();
    }
    let system = system_name("recv");
    let host = ShmTransport::host(&system, options()).unwrap();
    let sender = host.open_endpoint().unwrap();
    let receiver = host.open_endpoint().unwrap();
    let fed = create(&sender, "killed-receiver");
    receiver.subscribe(fed, TOPIC).unwrap();
    let mut child = spawn_child(TEST, "receiver", &system, Some(fed));
    kill(&mut child);
    const N: u64 = 20_000; // about 40 rings' worth for the dead receiver
    let sent = Instant::now();
    std::thread::scope(|s| {
        s.spawn(|| {
            for seq in 1..=N {
                sender.publish(fed, TOPIC, data(1, seq)).unwrap();
            }
        });
        for seq in 1..=N {
            let env = receiver
                .inbox()
                .recv_timeout(Duration::from_secs(20))
                .expect("the live receiver gets everything");
            assert_eq!(env.seq, seq, "lost, duplicated or reordered");
        }
    });
    assert_eq!(
        sender.stats().receivers_given_up,
        1,
        "the dead receiver was given up once"
    );
    eprintln!("{N} envelopes past a dead receiver in {:?}", sent.elapsed());
}

/// A sender killed while it publishes as fast as it can (so most likely inside a
/// ring's mutex or between two records): the ring it wrote into still works for the
/// next sender, and what arrived from the dead one is an unbroken prefix.
#[test]
fn a_sender_killed_mid_publish_leaves_the_ring_usable() {
    const TEST: &str = "a_sender_killed_mid_publish_leaves_the_ring_usable";
    if let Some((_, system, federation)) = role() {
        let transport = ShmTransport::connect(&system, options()).unwrap();
        let endpoint = transport.open_endpoint().unwrap();
        println!("READY");
        for seq in 1.. {
            endpoint
                .publish(federation.unwrap(), TOPIC, data(9, seq))
                .unwrap();
        }
        unreachable!();
    }
    let system = system_name("send");
    let host = ShmTransport::host(&system, options()).unwrap();
    let receiver = host.open_endpoint().unwrap();
    let fed = create(&receiver, "killed-sender");
    receiver.subscribe(fed, TOPIC).unwrap();
    let mut child = spawn_child(TEST, "sender", &system, Some(fed));
    let mut next = 1u64;
    while next <= 5_000 {
        let env = receiver
            .inbox()
            .recv_timeout(Duration::from_secs(20))
            .unwrap();
        assert_eq!((env.sender, env.seq), (FederateHandle(9), next));
        next += 1;
    }
    kill(&mut child);
    // Whatever the dead sender finished writing arrives in order.
    while let Ok(env) = receiver.inbox().recv_timeout(Duration::from_millis(300)) {
        assert_eq!((env.sender, env.seq), (FederateHandle(9), next));
        next += 1;
    }
    let other = host.open_endpoint().unwrap();
    for seq in 1..=1_000 {
        other.publish(fed, TOPIC, data(2, seq)).unwrap();
    }
    for seq in 1..=1_000 {
        let env = receiver
            .inbox()
            .recv_timeout(Duration::from_secs(20))
            .unwrap();
        assert_eq!((env.sender, env.seq), (FederateHandle(2), seq));
    }
    eprintln!("the dead sender's last envelope to arrive: {}", next - 1);
}

/// The host is killed: requests fail with a clear error instead of hanging, a new host
/// of the same name removes what the old one left and works, and the files of the
/// dead system are gone.
#[test]
fn a_killed_host_leaves_nothing_that_blocks_the_next_run() {
    const TEST: &str = "a_killed_host_leaves_nothing_that_blocks_the_next_run";
    if let Some((_, system, _)) = role() {
        let host = ShmTransport::host(&system, options()).unwrap();
        let endpoint = host.open_endpoint().unwrap();
        let fed = create(&endpoint, "doomed");
        endpoint.subscribe(fed, TOPIC).unwrap();
        ready_then_wait_to_be_killed();
    }
    let system = system_name("host");
    let mut child = spawn_child(TEST, "host", &system, None);
    let client = ShmTransport::connect(&system, options()).expect("the child hosts it");
    let endpoint = client.open_endpoint().unwrap();
    assert!(endpoint
        .request(ExecRequest::ListFederates {
            federation: FederationId(1)
        })
        .is_ok());
    assert!(matches!(
        ShmTransport::host(&system, options()),
        Err(TransportError::ExecutiveAlreadyHosted { .. })
    ));
    kill(&mut child);
    let e = endpoint
        .request(ExecRequest::ListFederates {
            federation: FederationId(1),
        })
        .unwrap_err();
    assert!(matches!(e, TransportError::NoShmHost { .. }), "{e}");
    assert!(
        e.to_string().contains("glidepath server --transport shm"),
        "{e}"
    );
    let e = ShmTransport::connect(&system, options()).unwrap_err();
    assert!(matches!(e, TransportError::NoShmHost { .. }), "{e}");
    drop(endpoint);
    drop(client);

    let files = |dir: &str| -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with(&format!("glidepath-{system}.")))
            .collect()
    };
    // What the kill left (unless another test's host already swept it).
    let left = files("/dev/shm");
    let next = ShmTransport::host(&system, options()).expect("a new host after a crash");
    assert!(
        !files("/dev/shm")
            .iter()
            .any(|f| left.contains(f) && f.contains(".ep")),
        "the dead system's rings are removed"
    );
    glidepath_transport::conformance::per_sender_fifo_across_topics(&next);
    glidepath_transport::conformance::executive_request_and_notifications(&next);
    drop(next);
    assert!(
        files("/dev/shm").is_empty(),
        "a host that stops removes its files"
    );
}

/// A program killed while hosting a system of a name nobody uses again (benchmarks
/// name theirs by process id): the next host of any name removes its files.
#[test]
fn the_next_host_sweeps_systems_whose_hosts_died() {
    const TEST: &str = "the_next_host_sweeps_systems_whose_hosts_died";
    if let Some((_, system, _)) = role() {
        let host = ShmTransport::host(&system, options()).unwrap();
        let _endpoint = host.open_endpoint().unwrap();
        ready_then_wait_to_be_killed();
    }
    let dead = system_name("swept");
    let mut child = spawn_child(TEST, "host", &dead, None);
    kill(&mut child);
    let files_of = |name: &str| -> Vec<String> {
        std::fs::read_dir("/dev/shm")
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with(&format!("glidepath-{name}.")) && !f.ends_with(".lock"))
            .collect()
    };
    // Registry, exec and one ring are left by the kill (another test's host may
    // already have swept them: tests run side by side).
    assert!(files_of(&dead).len() <= 3);
    let _other = ShmTransport::host(&system_name("sweeper"), options()).unwrap();
    assert_eq!(
        files_of(&dead),
        Vec::<String>::new(),
        "swept by the next host"
    );
    let _ = std::fs::remove_file(format!("/dev/shm/glidepath-{dead}.lock"));
}

/// A memory file system too small for another ring (a container's 64 MiB /dev/shm,
/// here a 20 MiB tmpfs this test mounts; root, as the netlab tests): opening the
/// endpoint fails with an error that says so, instead of the process dying of SIGBUS
/// at its first write past the room, and the system goes on working.
#[test]
fn a_full_memory_file_system_is_an_error_not_a_crash() {
    let dir = std::env::temp_dir().join(format!("glidepath-small-shm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=20m", "tmpfs"])
        .arg(&dir)
        .status()
        .expect("run mount");
    assert!(mounted.success(), "mounting a tmpfs needs root");
    let outcome = std::panic::catch_unwind(|| {
        let options = ShmOptions {
            dir: dir.clone(),
            ring_bytes: 4 << 20,
            ..ShmOptions::default()
        };
        // The registry (about 4 MiB) and the executive's ring (4 MiB) fit.
        let host = ShmTransport::host("small", options).unwrap();
        let mut opened = vec![
            host.open_endpoint().expect("a first 4 MiB ring fits"),
            host.open_endpoint().expect("a second 4 MiB ring fits"),
        ];
        let mut refused = None;
        for _ in 0..4 {
            match host.open_endpoint() {
                Ok(e) => opened.push(e),
                Err(e) => {
                    refused = Some(e.to_string());
                    break;
                }
            }
        }
        let refused = refused.expect("20 MiB cannot hold six 4 MiB rings and a registry");
        assert!(refused.contains("cannot reserve"), "{refused}");
        // What was opened still works.
        let fed = create(&opened[0], "small");
        opened[1].subscribe(fed, TOPIC).unwrap();
        opened[0].publish(fed, TOPIC, data(1, 1)).unwrap();
        let env = opened[1]
            .inbox()
            .recv_timeout(Duration::from_secs(10))
            .unwrap();
        assert_eq!(env.seq, 1);
    });
    let _ = Command::new("umount").arg(&dir).status();
    let _ = std::fs::remove_dir(&dir);
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

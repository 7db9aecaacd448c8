//! Federation save and restore through the front API, on both transports: four
//! time-managed federates exchange time-stamped updates, save at t = 50, run to
//! t = 100, restore to 50 and run to 100 again with identical results; the same
//! save restored into a fresh federation by federates joined anew (in another order,
//! so every federate handle is mapped): from the save directory on `inproc`, from the
//! executive server over NATS, with every federate on a connection of its own that
//! is closed after the save and new connections for the restore. Over NATS with
//! JetStream, the save is kept in the object store bucket: restored after the
//! executive server and every federate stopped, by a new executive server and new
//! federates; and restored after the active executive server stopped and a standby
//! took over.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) the NATS tests fail
//! and say how to install it: `bash scripts/test.sh`.

mod common;

use common::*;
use glidepath::backend::nats::{
    serve_executive, serve_executive_with, FailoverOptions, NatsServerProcess, NatsTestbed,
    SAVE_BUCKET,
};
use glidepath::backend::NatsOptions;
use glidepath::{
    Bytes, Callback, Federate, FederateHandle, FederateSnapshot, ObjectInstanceHandle,
    ResignAction, Rti, RtiError, SaveRestoreError, SavedMessage,
};

const NAMES: [&str; 4] = ["alpha", "bravo", "charlie", "delta"];

/// One federate and the state of its own model.
struct Member {
    f: Federate,
    name: &'static str,
    instance: ObjectInstanceHandle,
    /// The model's state: a hash of everything it received, step by step.
    x: u64,
}

impl Member {
    fn user_state(&self) -> Bytes {
        let mut v = self.x.to_be_bytes().to_vec();
        v.extend_from_slice(&self.instance.0.to_be_bytes());
        Bytes::from(v)
    }

    fn take_user_state(&mut self, b: &[u8]) {
        self.x = u64::from_be_bytes(b[..8].try_into().unwrap());
        self.instance = ObjectInstanceHandle(u64::from_be_bytes(b[8..16].try_into().unwrap()));
    }
}

/// FNV-1a over the previous state, the step and what was received.
fn step(x: u64, k: i64, received: &[String]) -> u64 {
    let mut h = x ^ 0xcbf2_9ce4_8422_2325;
    for byte in k
        .to_be_bytes()
        .iter()
        .chain(received.iter().flat_map(|s| s.as_bytes()))
    {
        h ^= u64::from(*byte);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Joins the four members (member `i` through `rtis[i]`), time-managed, each with an
/// aircraft.
fn start(rtis: &[Rti], federation: &str) -> Vec<Member> {
    let mut members: Vec<Member> = NAMES
        .iter()
        .zip(rtis)
        .map(|(name, rti)| Member {
            f: join(rti, federation, name),
            name,
            instance: ObjectInstanceHandle(0),
            x: 0,
        })
        .collect();
    let n = Names::of(&members[0].f);
    for m in &mut members {
        m.f.publish_object_class_attributes(n.aircraft, &[n.position])
            .unwrap();
        m.f.subscribe_object_class_attributes(n.aircraft, &[n.position])
            .unwrap();
        m.instance = m.f.register_object_instance(n.aircraft).unwrap();
    }
    for m in &members {
        regulating_and_constrained(&m.f, 1.0);
    }
    members
}

/// Runs every member from logical time `from` to `to`, one step at a time: each
/// sends its position stamped two steps ahead and asks for the next step; its state
/// takes in what it received up to the grant. Returns each step's states.
fn run(members: &mut [Member], from: i64, to: i64, save: Option<&str>) -> Vec<(i64, Vec<u64>)> {
    let n = Names::of(&members[0].f);
    let mut trace = Vec::new();
    for k in from..to {
        if k == 40 {
            if let Some(label) = save {
                members[0]
                    .f
                    .request_federation_save_at(label, t(50.0))
                    .unwrap();
            }
        }
        for m in members.iter() {
            let value = format!("{}:{}", m.name, m.x);
            m.f.update_attribute_values_at(
                m.instance,
                [(n.position, b(&value))],
                "",
                t((k + 2) as f64),
            )
            .unwrap();
            m.f.time_advance_request(t((k + 1) as f64)).unwrap();
        }
        for m in members.iter_mut() {
            let (granted, skipped) = wait_for(&m.f, "the grant", |c| {
                matches!(c, Callback::TimeAdvanceGrant { .. })
            });
            assert!(
                matches!(granted, Callback::TimeAdvanceGrant { time } if time == t((k + 1) as f64))
            );
            let mut received: Vec<String> = skipped
                .iter()
                .filter_map(|c| match c {
                    Callback::ReflectAttributeValues { values, info, .. } => Some(format!(
                        "{:?}={}",
                        info.time,
                        String::from_utf8_lossy(&values[0].1)
                    )),
                    _ => None,
                })
                .collect();
            received.sort();
            m.x = step(m.x, k + 1, &received);
        }
        trace.push((k + 1, members.iter().map(|m| m.x).collect()));
    }
    trace
}

/// Each member answers *initiate federate save* (delivered with the grant of 50):
/// returns each member's RTI snapshot as saved.
fn save_all(members: &[Member], label: &str) -> Vec<FederateSnapshot> {
    let snapshots = members
        .iter()
        .map(|m| {
            let (cb, _) = wait_for(&m.f, "initiate federate save", |c| {
                matches!(c, Callback::InitiateFederateSave { .. })
            });
            assert_eq!(
                cb,
                Callback::InitiateFederateSave {
                    label: label.into(),
                    time: Some(t(50.0))
                }
            );
            // Time stands still while the save is in progress.
            assert_eq!(
                m.f.time_advance_request(t(51.0)),
                Err(RtiError::SaveRestore(SaveRestoreError::SaveInProgress))
            );
            m.f.federate_save_begun().unwrap();
            let snapshot = m.f.rti_snapshot().unwrap();
            m.f.federate_save_complete(m.user_state()).unwrap();
            snapshot
        })
        .collect();
    for m in members {
        wait_for(
            &m.f,
            "federation saved",
            |c| matches!(c, Callback::FederationSaved { label: l } if l == label),
        );
    }
    snapshots
}

/// `s` with every federate handle mapped.
fn mapped(s: &FederateSnapshot, mapping: &[(FederateHandle, FederateHandle)]) -> FederateSnapshot {
    let map = |f: FederateHandle| mapping.iter().find(|(a, _)| *a == f).map_or(f, |(_, b)| *b);
    let mut s = s.clone();
    s.federate = map(s.federate);
    for m in &mut s.pending_tso {
        match m {
            SavedMessage::Update { sender, .. }
            | SavedMessage::Interaction { sender, .. }
            | SavedMessage::Delete { sender, .. } => *sender = map(*sender),
        }
    }
    s
}

/// `s` with its queue in a fixed order: messages of equal time stamps are
/// delivered in sender order, and the senders' handles changed.
fn comparable(mut s: FederateSnapshot) -> FederateSnapshot {
    s.pending_tso.sort_by_key(|m| format!("{m:?}"));
    s
}

/// Restores `label`: every member takes back its state and RTI state.
fn restore_all(members: &mut [Member], label: &str, saved: &[(String, FederateSnapshot)]) {
    let mapping: Vec<(FederateHandle, FederateHandle)> = saved
        .iter()
        .map(|(name, s)| {
            let now = members.iter().find(|m| m.name == name).unwrap();
            (s.federate, now.f.handle())
        })
        .collect();
    members[0].f.request_federation_restore(label).unwrap();
    wait_for(&members[0].f, "restore request succeeded", |c| {
        matches!(c, Callback::RequestFederationRestoreSucceeded { .. })
    });
    for m in members.iter_mut() {
        wait_for(&m.f, "restore begun", |c| {
            matches!(c, Callback::FederationRestoreBegun { .. })
        });
        let (cb, _) = wait_for(&m.f, "initiate federate restore", |c| {
            matches!(c, Callback::InitiateFederateRestore { .. })
        });
        let Callback::InitiateFederateRestore {
            name,
            handle,
            user_state,
            ..
        } = cb
        else {
            unreachable!()
        };
        assert_eq!((name.as_str(), handle), (m.name, m.f.handle()));
        m.take_user_state(&user_state);
        let now = m.f.rti_snapshot().unwrap();
        let (_, was) = saved.iter().find(|(n, _)| n == m.name).unwrap();
        // The same RTI state, with each saved federate handle mapped to the one
        // that federate has now.
        assert_eq!(
            comparable(now),
            comparable(mapped(was, &mapping)),
            "{}",
            m.name
        );
        m.f.federate_restore_complete().unwrap();
    }
    for m in members.iter() {
        wait_for(&m.f, "federation restored", |c| {
            matches!(c, Callback::FederationRestored { .. })
        });
    }
}

fn named(members: &[Member], snapshots: Vec<FederateSnapshot>) -> Vec<(String, FederateSnapshot)> {
    members
        .iter()
        .map(|m| m.name.to_string())
        .zip(snapshots)
        .collect()
}

/// Saves at 50, runs to 100, restores 50 and runs to 100 again: the same states.
fn save_run_restore_rerun(rtis: &[Rti], name: &str) {
    save_run_then_restore_rerun(rtis, name, || {});
}

/// [`save_run_restore_rerun`], with `between` called after the run to 100 and
/// before the restore.
fn save_run_then_restore_rerun(rtis: &[Rti], name: &str, between: impl FnOnce()) {
    rtis[0]
        .create_federation_execution_with_fom(name, vehicles_fom())
        .unwrap();
    let mut members = start(rtis, name);
    let mut first = run(&mut members, 0, 50, Some("t50"));
    let saved = named(&members, save_all(&members, "t50"));
    assert!(
        saved.iter().any(|(_, s)| !s.pending_tso.is_empty()),
        "updates stamped 51 wait in the queues at the save"
    );
    first.extend(run(&mut members, 50, 100, None));
    between();
    restore_all(&mut members, "t50", &saved);
    let again = run(&mut members, 50, 100, None);
    assert_eq!(again, first[50..].to_vec());
    // A restore of an unknown label fails with the reason.
    members[1].f.request_federation_restore("nope").unwrap();
    let (cb, _) = wait_for(&members[1].f, "restore request failed", |c| {
        matches!(c, Callback::RequestFederationRestoreFailed { .. })
    });
    assert!(
        matches!(&cb, Callback::RequestFederationRestoreFailed { reason, .. } if reason.contains("no save labelled `nope`")),
        "{cb:?}"
    );
    for m in members {
        m.f.resign(ResignAction::DeleteObjects).unwrap();
    }
    rtis[0].destroy_federation_execution(name).unwrap();
}

/// Saves at 50 and runs to 100; every federate leaves and the federation is
/// destroyed; RTIs from `fresh` (new connections: new processes, as far as the
/// federation can tell) create it again, join in reverse order, restore 50 and run
/// to 100 again: the same states.
fn restore_into_a_fresh_federation(rtis: Vec<Rti>, fresh: impl Fn() -> Rti, name: &str) {
    rtis[0]
        .create_federation_execution_with_fom(name, vehicles_fom())
        .unwrap();
    let mut members = start(&rtis, name);
    run(&mut members, 0, 50, Some("t50"));
    let saved = named(&members, save_all(&members, "t50"));
    let tail = run(&mut members, 50, 100, None);
    for m in members {
        m.f.resign(ResignAction::DeleteObjects).unwrap();
    }
    rtis[0].destroy_federation_execution(name).unwrap();
    drop(rtis);
    let rtis: Vec<Rti> = (0..NAMES.len()).map(|_| fresh()).collect();
    restore_and_rerun(&rtis, name, &saved, &tail);
}

/// A fresh federation `name` on `rtis`, its federates joined in reverse order,
/// restores the save `t50` and reruns 50..100: the same as `tail`.
fn restore_and_rerun(
    rtis: &[Rti],
    name: &str,
    saved: &[(String, FederateSnapshot)],
    tail: &[(i64, Vec<u64>)],
) {
    rtis[0]
        .create_federation_execution_with_fom(name, vehicles_fom())
        .unwrap();
    let mut members: Vec<Member> = NAMES
        .iter()
        .zip(rtis)
        .rev()
        .map(|(name_of, rti)| Member {
            f: join(rti, name, name_of),
            name: name_of,
            instance: ObjectInstanceHandle(0),
            x: 0,
        })
        .collect();
    restore_all(&mut members, "t50", saved);
    members.sort_by_key(|m| NAMES.iter().position(|n| *n == m.name));
    let again = run(&mut members, 50, 100, None);
    assert_eq!(again, tail);
    for m in members {
        m.f.resign(ResignAction::DeleteObjects).unwrap();
    }
    rtis[0].destroy_federation_execution(name).unwrap();
}

#[test]
fn four_time_managed_federates_save_at_50_and_rerun_from_it_identically() {
    let rti = Rti::inproc();
    let rtis: Vec<Rti> = (0..NAMES.len()).map(|_| rti.clone()).collect();
    save_run_restore_rerun(&rtis, "save-rerun");
}

#[test]
fn a_save_is_restored_from_its_directory_into_a_fresh_federation() {
    let dir = std::env::temp_dir().join(format!("glidepath-save-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    const NAME: &str = "save-fresh";
    let rti = Rti::inproc_with_save_dir(&dir);
    let rtis: Vec<Rti> = (0..NAMES.len()).map(|_| rti.clone()).collect();
    drop(rti);
    // Another bus on the same directory, as a new process would be (it reads the
    // directory only when asked to restore).
    let second = Rti::inproc_with_save_dir(&dir);
    restore_into_a_fresh_federation(rtis, || second.clone(), NAME);
    assert!(dir.join(NAME).join("t50.gpsave").is_file());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn over_nats_four_federates_save_at_50_and_rerun_from_it_identically() {
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let rtis: Vec<Rti> = (0..NAMES.len())
        .map(|_| Rti::nats(&testbed.url()).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    save_run_restore_rerun(&rtis, "save-rerun-nats");
}

#[test]
fn over_nats_new_connections_restore_a_save_into_a_fresh_federation() {
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let url = testbed.url();
    let connect = || Rti::nats(&url).unwrap_or_else(|e| panic!("{e}"));
    let rtis: Vec<Rti> = (0..NAMES.len()).map(|_| connect()).collect();
    restore_into_a_fresh_federation(rtis, connect, "save-fresh-nats");
}

/// A `nats-server --jetstream` with a store directory of its own (removed on drop).
struct JetStreamNats {
    server: NatsServerProcess,
    store: std::path::PathBuf,
}

impl JetStreamNats {
    fn start(name: &str) -> JetStreamNats {
        let store = std::env::temp_dir().join(format!("glidepath-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&store);
        let server = NatsServerProcess::start_with(
            None,
            &["--jetstream", "--store_dir", store.to_str().unwrap()],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        JetStreamNats { server, store }
    }
}

impl Drop for JetStreamNats {
    fn drop(&mut self) {
        self.server.stop();
        let _ = std::fs::remove_dir_all(&self.store);
    }
}

#[test]
fn over_nats_a_save_in_jetstream_outlives_the_executive_server_and_every_federate() {
    const NAME: &str = "save-outlives-nats";
    let nats = JetStreamNats::start("save-outlives");
    let url = nats.server.url();
    let connect = || Rti::nats(&url).unwrap_or_else(|e| panic!("{e}"));
    let executive = serve_executive(&url).unwrap_or_else(|e| panic!("{e}"));
    let rtis: Vec<Rti> = (0..NAMES.len()).map(|_| connect()).collect();
    rtis[0]
        .create_federation_execution_with_fom(NAME, vehicles_fom())
        .unwrap();
    let mut members = start(&rtis, NAME);
    run(&mut members, 0, 50, Some("t50"));
    let saved = named(&members, save_all(&members, "t50"));
    let tail = run(&mut members, 50, 100, None);
    // Every process of the federation stops: the federates (neither resigning
    // explicitly nor destroying the federation), then the executive server, whose
    // memory held the federation.
    drop(members);
    drop(rtis);
    executive.stop();

    let executive = serve_executive(&url).unwrap_or_else(|e| panic!("{e}"));
    let rtis: Vec<Rti> = (0..NAMES.len()).map(|_| connect()).collect();
    restore_and_rerun(&rtis, NAME, &saved, &tail);
    drop(rtis);
    drop(executive);
    // The save is in the bucket's stream, on the NATS server's disk.
    let stream = nats
        .store
        .join("jetstream/$G/streams")
        .join(format!("OBJ_{SAVE_BUCKET}"));
    assert!(stream.is_dir(), "no {}", stream.display());
}

#[test]
fn over_nats_a_standby_executive_that_took_over_restores_a_save() {
    let nats = JetStreamNats::start("save-failover");
    let url = nats.server.url();
    let failover = || NatsOptions {
        failover: Some(FailoverOptions::default()),
        ..Default::default()
    };
    let first = serve_executive_with(&url, failover()).unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !first.is_active() {
        assert!(std::time::Instant::now() < deadline, "no active executive");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let second = serve_executive_with(&url, failover()).unwrap_or_else(|e| panic!("{e}"));
    let rtis: Vec<Rti> = (0..NAMES.len())
        .map(|_| Rti::nats(&url).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    save_run_then_restore_rerun(&rtis, "save-failover-nats", || {
        assert!(!second.is_active(), "the second server stands by");
        first.stop();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !second.is_active() {
            assert!(
                std::time::Instant::now() < deadline,
                "the standby did not take over"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    });
}

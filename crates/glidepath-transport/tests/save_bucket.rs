//! Federation saves in the JetStream object store bucket (`BucketSaveStore`), against
//! a real `nats-server --jetstream` with a store directory of its own: a missing
//! save, a put read back, an overwrite, a save of many chunks, names that need
//! escaping, a save read back by a new connection and after a NATS server restart,
//! a standby's held saves written on release, and a clear error from a server
//! without JetStream.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

use glidepath_core::SaveStore;
use glidepath_transport::nats::{
    save_object_name, BucketSaveStore, NatsOptions, NatsServerProcess, SAVE_BUCKET,
};
use glidepath_transport::TransportError;

mod support;
use support::StoreDir;

fn jetstream_server(store: &StoreDir, port: Option<u16>) -> NatsServerProcess {
    NatsServerProcess::start_with(port, &["--jetstream", "--store_dir", store.arg()])
        .unwrap_or_else(|e| panic!("{e}"))
}

fn open(url: &str) -> BucketSaveStore {
    BucketSaveStore::open(url, &NatsOptions::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn saves_are_put_read_back_overwritten_and_outlive_the_connection_and_the_server() {
    let store = StoreDir::new("save-bucket-put");
    let mut nats = jetstream_server(&store, None);
    let url = nats.url();
    let mut saves = open(&url);

    assert_eq!(saves.get("fed", "t50"), Ok(None), "nothing saved yet");
    saves.put("fed", "t50", b"first").unwrap();
    assert_eq!(saves.get("fed", "t50"), Ok(Some(b"first".to_vec())));
    saves.put("fed", "t50", b"second").unwrap();
    assert_eq!(saves.get("fed", "t50"), Ok(Some(b"second".to_vec())));
    assert_eq!(saves.get("fed", "t5"), Ok(None), "another label");
    assert_eq!(saves.get("other", "t50"), Ok(None), "another federation");

    // Names whose parts would collide unescaped are two saves.
    saves.put("a/b", "c", b"one").unwrap();
    saves.put("a", "b/c", b"two").unwrap();
    saves.put("x.y =", "..", b"three").unwrap();
    assert_eq!(saves.get("a/b", "c"), Ok(Some(b"one".to_vec())));
    assert_eq!(saves.get("a", "b/c"), Ok(Some(b"two".to_vec())));
    assert_eq!(saves.get("x.y =", ".."), Ok(Some(b"three".to_vec())));

    // Larger than a chunk (128 KiB) many times over.
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    saves.put("fed", "big", &big).unwrap();
    assert_eq!(saves.get("fed", "big").unwrap().as_deref(), Some(&big[..]));

    // A new connection (a new executive server) reads them.
    drop(saves);
    let mut again = open(&url);
    assert_eq!(again.get("fed", "t50"), Ok(Some(b"second".to_vec())));
    drop(again);

    // So does one after the NATS server restarted on the same store.
    let port = nats.port();
    nats.stop();
    let nats = jetstream_server(&store, Some(port));
    let mut after = open(&nats.url());
    assert_eq!(after.get("fed", "t50"), Ok(Some(b"second".to_vec())));
    assert_eq!(after.get("fed", "big").unwrap().as_deref(), Some(&big[..]));
    assert_eq!(after.get("a", "b/c"), Ok(Some(b"two".to_vec())));

    // The objects are where the documentation says.
    assert_eq!(save_object_name("fed", "t50"), "fed/t50");
    assert_eq!(SAVE_BUCKET, "GLIDEPATH_SAVES");
}

#[test]
fn a_standby_holds_its_saves_and_writes_those_missing_when_it_takes_over() {
    let store = StoreDir::new("save-bucket-hold");
    let nats = jetstream_server(&store, None);
    let url = nats.url();
    let mut active = open(&url);
    let mut standby = open(&url);
    active.put("fed", "kept", b"by the active").unwrap();

    standby.hold();
    // The active server wrote this one; the standby applies it from the log too.
    standby.put("fed", "kept", b"by the active").unwrap();
    // The active server died before writing this one.
    standby.put("fed", "lost", b"only in the log").unwrap();
    assert_eq!(
        active.get("fed", "lost"),
        Ok(None),
        "a standby does not write"
    );
    assert_eq!(
        standby.get("fed", "lost"),
        Ok(Some(b"only in the log".to_vec())),
        "a standby reads what it holds first"
    );
    assert_eq!(
        standby.release(),
        Ok(1),
        "only the save the bucket lacked is written"
    );
    assert_eq!(
        active.get("fed", "lost"),
        Ok(Some(b"only in the log".to_vec()))
    );
    // Active now: writes go to the bucket at once.
    standby.put("fed", "next", b"written").unwrap();
    assert_eq!(active.get("fed", "next"), Ok(Some(b"written".to_vec())));
}

#[test]
fn without_jetstream_opening_fails_naming_the_bucket_and_the_remedy() {
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let e = BucketSaveStore::open(&nats.url(), &NatsOptions::default()).unwrap_err();
    assert!(
        matches!(e, TransportError::PersistenceFailed { .. }),
        "{e:?}"
    );
    let text = e.to_string();
    assert!(text.contains(SAVE_BUCKET), "{text}");
    assert!(text.contains("--jetstream"), "{text}");
}

//! The `nats` backend with persistence (`Persistence::JetStream`): the conformance
//! suite, a NATS server restart in the middle of a run with nothing lost, replay of a
//! federation's stream after the run, and a bounded publisher in front of a slow
//! subscriber. Each test starts its own `nats-server --jetstream` with a store
//! directory of its own.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

use std::collections::HashMap;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use glidepath_core::{FederateHandle, FederationId};
use glidepath_transport::nats::{
    replay, serve_executive_with, BundleConfig, ChainConfig, Compression, ExecutiveServer,
    FederationKey, JetStreamOptions, NatsOptions, NatsServerProcess, Persistence,
};
use glidepath_transport::{Endpoint, NatsEndpoint, NatsTransport, Transport};

/// Generous: a loaded CI machine, plus a NATS server restart and consumer recovery.
const TIMEOUT: Duration = Duration::from_secs(60);

/// A JetStream-enabled NATS server, an executive server with persistence and a
/// transport with persistence; dropped in that reverse order.
struct Bed {
    transport: NatsTransport,
    _executive: ExecutiveServer,
    server: NatsServerProcess,
    store: StoreDir,
    options: NatsOptions,
}

fn start_server(port: Option<u16>, store: &StoreDir) -> NatsServerProcess {
    NatsServerProcess::start_with(port, &["--jetstream", "--store_dir", store.arg()])
        .unwrap_or_else(|e| panic!("{e}"))
}

fn bed_with(js: JetStreamOptions) -> Bed {
    let store = StoreDir::new("jetstream");
    let server = start_server(None, &store);
    let options = NatsOptions {
        persistence: Persistence::JetStream(js),
        // Long enough to ride out a NATS server restart without failing a publish.
        request_timeout: Duration::from_secs(30),
        ..NatsOptions::default()
    };
    let executive =
        serve_executive_with(&server.url(), options.clone()).unwrap_or_else(|e| panic!("{e}"));
    let transport = NatsTransport::connect_with(&server.url(), options.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    Bed {
        transport,
        _executive: executive,
        server,
        store,
        options,
    }
}

mod support;
use support::{create, data, expect_within, StoreDir, TOPIC};

fn expect(endpoint: &NatsEndpoint, sender: u32, seq: u64) {
    expect_within(endpoint, sender, seq, TIMEOUT);
}

fn bed() -> Bed {
    bed_with(JetStreamOptions::default())
}

// ----- the conformance suite ------------------------------------------------------------

glidepath_transport::conformance_tests!(bed, many = 100_000);

// ----- persistence ----------------------------------------------------------------------

#[test]
fn nothing_is_lost_across_a_nats_server_restart_and_the_run_replays() {
    const BEFORE: u64 = 8_000;
    const TOTAL: u64 = 20_000;
    let mut bed = bed();
    let port = bed.server.port();
    let a = bed.transport.open_endpoint().unwrap();
    let b = bed.transport.open_endpoint().unwrap();
    let fed = create(&a, "restart");
    b.subscribe(fed, TOPIC).unwrap();
    let (half_tx, half_rx) = mpsc::channel();
    let (stopped_tx, stopped_rx) = mpsc::channel();
    let sender = thread::spawn(move || {
        for seq in 1..=BEFORE {
            a.publish(fed, TOPIC, data(1, seq)).unwrap();
        }
        half_tx.send(()).unwrap();
        // Keeps publishing while the NATS server is down and coming back.
        stopped_rx.recv().unwrap();
        for seq in BEFORE + 1..=TOTAL {
            a.publish(fed, TOPIC, data(1, seq))
                .unwrap_or_else(|e| panic!("publishing {seq}: {e}"));
        }
        a.close();
    });
    half_rx.recv().unwrap();
    bed.server.stop();
    stopped_tx.send(()).unwrap();
    bed.server = start_server(Some(port), &bed.store);
    for seq in 1..=TOTAL {
        expect(&b, 1, seq);
    }
    sender.join().unwrap();
    // Published after the sender's close returned, so behind anything it sent: no
    // duplicate of the sender can follow.
    let c = bed.transport.open_endpoint().unwrap();
    c.publish(fed, TOPIC, data(2, 1)).unwrap();
    expect(&b, 2, 1);
    assert_eq!(b.lost_envelopes(), 0);
    // The executive server kept its state and creates streams again.
    let other = create(&c, "after-restart");
    assert_ne!(other, fed);

    let replayed = replay(&bed.server.url(), fed, 1, &bed.options).unwrap();
    let mut per_sender: HashMap<FederateHandle, Vec<u64>> = HashMap::new();
    for r in &replayed.envelopes {
        per_sender
            .entry(r.envelope.sender)
            .or_default()
            .push(r.envelope.seq);
    }
    assert_eq!(
        per_sender.get(&FederateHandle(1)),
        Some(&(1..=TOTAL).collect::<Vec<_>>()),
        "replay holds every update of the sender once, in order"
    );
    assert_eq!(per_sender.get(&FederateHandle(2)), Some(&vec![1]));
    assert_eq!(replayed.malformed, 0);
    // Replay from the middle: the stream's sequence numbers are kept.
    let middle = replayed.envelopes[replayed.envelopes.len() / 2].stream_sequence;
    let tail = replay(&bed.server.url(), fed, middle, &bed.options).unwrap();
    assert_eq!(
        tail.envelopes.first().map(|r| r.stream_sequence),
        Some(middle)
    );
    assert!(tail.envelopes.len() < replayed.envelopes.len());
    drop((b, c));
}

#[test]
fn replay_of_an_empty_federation_is_empty() {
    let bed = bed();
    let a = bed.transport.open_endpoint().unwrap();
    let fed = create(&a, "empty");
    let replayed = replay(&bed.server.url(), fed, 1, &bed.options).unwrap();
    assert!(replayed.envelopes.is_empty(), "{replayed:?}");
    assert!(replay(&bed.server.url(), FederationId(999), 1, &bed.options).is_err());
}

#[test]
fn persistence_with_bundling_is_refused_with_a_reason() {
    let bed = bed();
    let mut options = bed.options.clone();
    options.messaging.bundle = BundleConfig {
        bundle_bytes_max: 4096,
        ..BundleConfig::default()
    };
    let error = NatsTransport::connect_with(&bed.server.url(), options.clone()).unwrap_err();
    assert!(error.to_string().contains("JetStream"), "{error}");
    assert!(error.to_string().contains("bundling"), "{error}");
    // Bundling is refused together with the chain too; the chain alone is not.
    options.messaging.chain = keyed_lz4_chain();
    assert!(NatsTransport::connect_with(&bed.server.url(), options.clone()).is_err());
    options.messaging.bundle = BundleConfig::default();
    NatsTransport::connect_with(&bed.server.url(), options).unwrap_or_else(|e| panic!("{e}"));
}

/// LZ4 from 16 bytes on, and a federation key: every payload is a sealed frame.
fn keyed_lz4_chain() -> ChainConfig {
    ChainConfig {
        compression: Compression::Lz4,
        compress_bytes_min: 16,
        key: Some(FederationKey::from_bytes([9; 32])),
        ..ChainConfig::default()
    }
}

#[test]
fn persistence_carries_the_encoder_chain_and_replay_needs_the_key() {
    const COUNT: u64 = 5_000;
    let store = StoreDir::new("jetstream");
    let server = start_server(None, &store);
    let mut options = NatsOptions {
        persistence: Persistence::jetstream(),
        request_timeout: Duration::from_secs(30),
        ..NatsOptions::default()
    };
    options.messaging.chain = keyed_lz4_chain();
    let _executive =
        serve_executive_with(&server.url(), options.clone()).unwrap_or_else(|e| panic!("{e}"));
    let transport = NatsTransport::connect_with(&server.url(), options.clone())
        .unwrap_or_else(|e| panic!("{e}"));
    let a = transport.open_endpoint().unwrap();
    let b = transport.open_endpoint().unwrap();
    let fed = create(&a, "keyed");
    b.subscribe(fed, TOPIC).unwrap();
    for seq in 1..=COUNT {
        a.publish(fed, TOPIC, data(1, seq))
            .unwrap_or_else(|e| panic!("publishing {seq}: {e}"));
    }
    a.close();
    for seq in 1..=COUNT {
        expect(&b, 1, seq);
    }
    assert_eq!(b.lost_envelopes(), 0);
    assert_eq!(b.rejected_frames(), 0);

    // With the key, replay opens every frame.
    let replayed = replay(&server.url(), fed, 1, &options).unwrap_or_else(|e| panic!("{e}"));
    let updates: Vec<u64> = replayed
        .envelopes
        .iter()
        .filter(|r| r.envelope.sender == FederateHandle(1))
        .map(|r| r.envelope.seq)
        .collect();
    assert_eq!(updates, (1..=COUNT).collect::<Vec<_>>());
    assert_eq!(replayed.malformed, 0);

    // Without it, nothing in the stream can be read (the payloads are sealed frames,
    // not plain envelopes), and replay says so rather than panicking.
    let mut unkeyed = options.clone();
    unkeyed.messaging.chain = ChainConfig::default();
    match replay(&server.url(), fed, 1, &unkeyed) {
        Ok(r) => {
            assert!(
                r.envelopes.is_empty(),
                "{} envelopes read without the key",
                r.envelopes.len()
            );
            assert!(r.malformed >= COUNT, "{} refused", r.malformed);
        }
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    // A wrong key fares no better.
    let mut wrong = options.clone();
    wrong.messaging.chain.key = Some(FederationKey::from_bytes([7; 32]));
    match replay(&server.url(), fed, 1, &wrong) {
        Ok(r) => assert!(r.envelopes.is_empty() && r.malformed >= COUNT, "{r:?}"),
        Err(e) => assert!(!e.to_string().is_empty()),
    }
    drop(b);
}

#[test]
fn a_slow_subscriber_grows_neither_the_publisher_nor_itself() {
    const WINDOW: usize = 256;
    const BACKLOG: usize = 1_000;
    const COUNT: u64 = 50_000;
    let bed = bed_with(JetStreamOptions {
        acks_outstanding_max: WINDOW,
        inbox_backlog_max: BACKLOG,
        ..JetStreamOptions::default()
    });
    let a = bed.transport.open_endpoint().unwrap();
    let b = bed.transport.open_endpoint().unwrap();
    let fed = create(&a, "slow");
    b.subscribe(fed, TOPIC).unwrap();
    // The subscriber reads nothing until the publisher is done: as slow as it gets.
    for seq in 1..=COUNT {
        a.publish(fed, TOPIC, data(1, seq)).unwrap();
    }
    a.close();
    let most = a
        .jetstream_acks_outstanding_max()
        .expect("persistence is on");
    assert!(most <= WINDOW, "{most} acknowledgements waited at once");
    assert!(most > 0);
    // Everything is stored; the subscriber's inbox holds at most its backlog bound,
    // and the rest follows as it reads.
    for seq in 1..=COUNT {
        let waiting = b.inbox().len();
        assert!(waiting <= BACKLOG, "{waiting} envelopes in the inbox");
        expect(&b, 1, seq);
    }
    assert_eq!(b.lost_envelopes(), 0);
}

#[test]
fn an_executive_with_persistence_needs_jetstream() {
    let server = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let options = NatsOptions {
        persistence: Persistence::jetstream(),
        ..NatsOptions::default()
    };
    let error = serve_executive_with(&server.url(), options).unwrap_err();
    assert!(error.to_string().contains("--jetstream"), "{error}");
}

/// `glidepath matrix` runs 4C and then 4D, each with an executive of its own, on one
/// NATS server: the second federation must not land in the first one's (kept, maybe
/// full) stream.
#[test]
fn a_new_executive_does_not_reuse_the_stream_of_an_earlier_federation() {
    let store = StoreDir::new("jetstream");
    let server = start_server(None, &store);
    let options = NatsOptions {
        persistence: Persistence::jetstream(),
        ..NatsOptions::default()
    };
    let session = |name: &str, publish: bool| {
        let executive =
            serve_executive_with(&server.url(), options.clone()).unwrap_or_else(|e| panic!("{e}"));
        let transport = NatsTransport::connect_with(&server.url(), options.clone())
            .unwrap_or_else(|e| panic!("{e}"));
        let a = transport.open_endpoint().unwrap();
        let fed = create(&a, name);
        if publish {
            a.publish(fed, TOPIC, data(1, 1)).unwrap();
        }
        a.close();
        drop(transport);
        drop(executive);
        fed
    };
    let first = session("first", true);
    let second = session("second", false);
    assert_ne!(second, first);
    let replayed = replay(&server.url(), second, 1, &options).unwrap();
    assert!(replayed.envelopes.is_empty(), "{replayed:?}");
    let kept = replay(&server.url(), first, 1, &options).unwrap();
    assert_eq!(kept.envelopes.len(), 1, "{kept:?}");
}

#[test]
fn the_transport_name_is_nats() {
    assert_eq!(bed().transport.name(), "nats");
}

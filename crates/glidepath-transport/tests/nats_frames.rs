//! The encoder chain and bundling over a real NATS server: keys keep strangers out
//! (a wrong key cannot join, a keyless publisher cannot inject), corrupted frames are
//! counted and never delivered, compression shrinks the bytes on the wire, bundling
//! sends fewer NATS messages without reordering anything, and a lone message leaves
//! its bundle on time without any further publish.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

use std::time::{Duration, Instant};

use bytes::Bytes;
use glidepath_codec::{unbundle, EncoderChain};
use glidepath_core::{Body, Envelope, ExecRequest, FederationId, Topic};
use glidepath_transport::nats::subject::topic_subject;
use glidepath_transport::nats::{
    serve_executive_with, BundleConfig, ChainConfig, Compression, FederationKey, MessagingOptions,
    NatsOptions, NatsServerProcess, NatsTestbed, FRAME_MARKER,
};
use glidepath_transport::{Endpoint, NatsEndpoint, NatsTransport, TransportError};

const TIMEOUT: Duration = Duration::from_secs(10);

mod support;
use support::{envelope_with, expect_within, try_create, Raw, TOPIC};

fn key(byte: u8) -> FederationKey {
    FederationKey::from_bytes([byte; 32])
}

fn options(chain: ChainConfig, bundle: BundleConfig) -> NatsOptions {
    NatsOptions {
        messaging: MessagingOptions {
            chain,
            bundle,
            ..MessagingOptions::default()
        },
        ..NatsOptions::default()
    }
}

fn keyed(k: FederationKey) -> NatsOptions {
    options(
        ChainConfig {
            key: Some(k),
            ..ChainConfig::default()
        },
        BundleConfig::default(),
    )
}

/// A NATS server with an executive server configured by `options`.
fn testbed(options: NatsOptions) -> NatsTestbed {
    let server = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let executive = serve_executive_with(&server.url(), options).unwrap();
    NatsTestbed { executive, server }
}

fn data(sender: u32, seq: u64, payload: Bytes) -> Envelope {
    envelope_with(sender, seq, payload)
}

fn small(sender: u32, seq: u64) -> Envelope {
    data(sender, seq, Bytes::copy_from_slice(&seq.to_be_bytes()))
}

fn create(endpoint: &dyn Endpoint, name: &str) -> Result<FederationId, TransportError> {
    try_create(endpoint, name)
}

fn expect(endpoint: &NatsEndpoint, sender: u32, seq: u64) -> Envelope {
    expect_within(endpoint, sender, seq, TIMEOUT)
}

#[test]
fn a_wrong_key_cannot_join_and_a_keyless_publisher_cannot_inject() {
    let bed = testbed(keyed(key(1)));
    let good = NatsTransport::connect_with(&bed.url(), keyed(key(1))).unwrap();
    let receiver = good.open_endpoint().unwrap();
    let fed = create(&receiver, "keyed").unwrap();
    receiver.subscribe(fed, TOPIC).unwrap();

    // A wrong key, then no key: the executive cannot read either request.
    for (what, options) in [
        ("wrong key", keyed(key(2))),
        ("no key", NatsOptions::default()),
    ] {
        let stranger = NatsTransport::connect_with(&bed.url(), options).unwrap();
        let endpoint = stranger.open_endpoint().unwrap();
        let error = endpoint
            .request(ExecRequest::Join {
                federation: fed,
                federate_name: Some(what.into()),
                federate_type: "stranger".into(),
            })
            .expect_err(what);
        assert!(
            error.to_string().contains("authentication failed"),
            "{what}: {error}"
        );
    }
    assert_eq!(bed.executive.rejected_requests(), 2);

    // Injection: a plaintext envelope, a frame sealed with another key, a frame with
    // no key at all. Then a genuine one, from the same raw connection (so after them).
    let raw = Raw::connect(&bed.url());
    let subject = topic_subject(fed, TOPIC);
    let encode = |e: &Envelope| glidepath_wire::encode_envelope(e);
    raw.publish(subject.clone(), encode(&small(5, 1)));
    let other = EncoderChain::new(ChainConfig {
        key: Some(key(2)),
        ..ChainConfig::default()
    })
    .unwrap();
    raw.publish(
        subject.clone(),
        other.encode(&encode(&small(5, 2))).unwrap(),
    );
    let keyless = EncoderChain::new(ChainConfig {
        compression: Compression::Lz4,
        compress_bytes_min: 0,
        ..ChainConfig::default()
    })
    .unwrap();
    raw.publish(
        subject.clone(),
        keyless.encode(&encode(&small(5, 3))).unwrap(),
    );
    let genuine = EncoderChain::new(ChainConfig {
        key: Some(key(1)),
        ..ChainConfig::default()
    })
    .unwrap();
    raw.publish(
        subject.clone(),
        genuine.encode(&encode(&small(6, 1))).unwrap(),
    );
    expect(&receiver, 6, 1);
    let stats = receiver.stats();
    assert_eq!(stats.rejected_frames, 3, "{stats:?}");
    assert_eq!(stats.malformed_envelopes, 0, "{stats:?}");
    assert_eq!(receiver.rejected_frames(), 3);
    assert!(
        receiver.inbox().try_recv().is_err(),
        "nothing else was delivered"
    );

    // A keyed endpoint still talks to it.
    let sender = good.open_endpoint().unwrap();
    sender.publish(fed, TOPIC, small(7, 1)).unwrap();
    expect(&receiver, 7, 1);
}

#[test]
fn corrupted_frames_are_counted_and_never_delivered() {
    let bed = testbed(keyed(key(3)));
    let transport = NatsTransport::connect_with(&bed.url(), keyed(key(3))).unwrap();
    let receiver = transport.open_endpoint().unwrap();
    let fed = create(&receiver, "corrupt-frames").unwrap();
    receiver.subscribe(fed, TOPIC).unwrap();
    let raw = Raw::connect(&bed.url());
    let subject = topic_subject(fed, TOPIC);
    let chain = EncoderChain::new(ChainConfig {
        key: Some(key(3)),
        compression: Compression::Zstd { level: 1 },
        compress_bytes_min: 0,
        ..ChainConfig::default()
    })
    .unwrap();
    let frame = chain
        .encode(&glidepath_wire::encode_envelope(&data(
            5,
            1,
            Bytes::from(vec![b'x'; 300]),
        )))
        .unwrap();
    let mut corrupted: Vec<Vec<u8>> = Vec::new();
    // One bit flipped in every byte of the frame, in turn: marker, flags, nonce,
    // ciphertext and tag.
    for i in 0..frame.len() {
        let mut bad = frame.to_vec();
        bad[i] ^= 1 << (i % 8);
        corrupted.push(bad);
    }
    // Truncations, an empty payload, garbage behind a frame marker.
    corrupted.push(frame[..frame.len() / 2].to_vec());
    corrupted.push(frame[..2].to_vec());
    corrupted.push(Vec::new());
    corrupted.push(vec![FRAME_MARKER, 0xff, 0, 1, 2]);
    for bad in &corrupted {
        raw.publish(subject.clone(), bad.clone());
    }
    raw.publish(
        subject.clone(),
        chain
            .encode(&glidepath_wire::encode_envelope(&small(5, 2)))
            .unwrap(),
    );
    // Only the intact frame behind them all arrives.
    expect(&receiver, 5, 2);
    assert!(
        receiver.inbox().try_recv().is_err(),
        "a corrupted frame was delivered"
    );
    let stats = receiver.stats();
    assert_eq!(
        stats.rejected_frames + stats.malformed_envelopes,
        corrupted.len() as u64,
        "{stats:?}"
    );
    assert!(
        stats.rejected_frames >= frame.len() as u64,
        "every bit flip fails authentication: {stats:?}"
    );
}

#[test]
fn corrupted_bundles_and_compressed_frames_without_a_key_are_counted_as_malformed() {
    let bed = testbed(NatsOptions::default());
    let transport = NatsTransport::connect(&bed.url()).unwrap();
    let receiver = transport.open_endpoint().unwrap();
    let fed = create(&receiver, "corrupt-bundles").unwrap();
    receiver.subscribe(fed, TOPIC).unwrap();
    let raw = Raw::connect(&bed.url());
    let subject = topic_subject(fed, TOPIC);
    let mut bundler = glidepath_codec::Bundler::new(BundleConfig {
        bundle_bytes_max: 4096,
        bundle_time_ns_max: 1,
    });
    for seq in 1..=3 {
        assert!(bundler
            .push(&glidepath_wire::encode_envelope(&small(5, seq)), 0)
            .is_empty());
    }
    let bundle = bundler.flush().unwrap();
    let lz4 = EncoderChain::new(ChainConfig {
        compression: Compression::Lz4,
        compress_bytes_min: 0,
        ..ChainConfig::default()
    })
    .unwrap();
    let frame = lz4
        .encode(&glidepath_wire::encode_envelope(&data(
            5,
            4,
            Bytes::from(vec![b'y'; 400]),
        )))
        .unwrap();
    let corrupted = [
        bundle[..bundle.len() - 3].to_vec(),
        {
            let mut b = bundle.to_vec();
            b[1] = 0x7f; // claims 127 messages
            b
        },
        frame[..frame.len() - 5].to_vec(),
        {
            let mut f = frame.to_vec();
            f[1] = 0b1000; // unknown flag
            f
        },
    ];
    for bad in &corrupted {
        raw.publish(subject.clone(), bad.clone());
    }
    raw.publish(subject.clone(), bundle.clone());
    raw.publish(subject.clone(), frame.clone());
    for seq in 1..=4 {
        expect(&receiver, 5, seq);
    }
    assert!(receiver.inbox().try_recv().is_err());
    let stats = receiver.stats();
    assert_eq!(
        stats.malformed_envelopes,
        corrupted.len() as u64,
        "{stats:?}"
    );
    assert_eq!(stats.rejected_frames, 0, "{stats:?}");
    assert_eq!(stats.lost_envelopes, 0, "{stats:?}");
}

/// Sends one compressible envelope with `compression` and returns its size on the wire
/// next to its plain size.
fn wire_size_with(compression: Compression) -> (usize, usize) {
    let bed = testbed(NatsOptions::default());
    let chain = ChainConfig {
        compression,
        compress_bytes_min: 64,
        ..ChainConfig::default()
    };
    let transport =
        NatsTransport::connect_with(&bed.url(), options(chain, BundleConfig::default())).unwrap();
    let receiver = transport.open_endpoint().unwrap();
    let fed = create(&receiver, "compressed").unwrap();
    receiver.subscribe(fed, TOPIC).unwrap();
    let raw = Raw::connect(&bed.url());
    let mut watcher = raw.subscribe(fed);
    let text: Vec<u8> = b"position 51.4700 -0.4543 altitude 3500 heading 270; "
        .iter()
        .copied()
        .cycle()
        .take(16 << 10)
        .collect();
    let envelope = data(8, 1, Bytes::from(text.clone()));
    let plain = glidepath_wire::encode_envelope(&envelope).len();
    let sender = transport.open_endpoint().unwrap();
    sender.publish(fed, TOPIC, envelope).unwrap();
    let got = expect(&receiver, 8, 1);
    match &got.body {
        Body::Interaction { values, .. } => assert_eq!(values[0].1, Bytes::from(text)),
        other => panic!("{other:?}"),
    }
    let on_wire = raw.next(&mut watcher, TIMEOUT);
    assert_eq!(on_wire.payload[0], FRAME_MARKER);
    (on_wire.payload.len(), plain)
}

#[test]
fn zstd_and_lz4_round_trip_and_shrink_the_bytes_on_the_wire() {
    for compression in [Compression::Lz4, Compression::Zstd { level: 3 }] {
        let (on_wire, plain) = wire_size_with(compression);
        eprintln!("{compression:?}: {plain} bytes plain, {on_wire} on the wire");
        assert!(
            on_wire * 4 < plain,
            "{compression:?}: {on_wire} bytes on the wire for {plain} plain"
        );
    }
}

#[test]
fn bundling_sends_ten_thousand_updates_in_fewer_messages_in_order() {
    const UPDATES: u64 = 10_000;
    let bed = testbed(NatsOptions::default());
    let bundled = options(
        ChainConfig::default(),
        BundleConfig {
            bundle_bytes_max: 16 << 10,
            bundle_time_ns_max: 1_000_000,
        },
    );
    let transport = NatsTransport::connect_with(&bed.url(), bundled).unwrap();
    let receiver = transport.open_endpoint().unwrap();
    let fed = create(&receiver, "bundled").unwrap();
    receiver.subscribe(fed, TOPIC).unwrap();
    let raw = Raw::connect(&bed.url());
    let mut watcher = raw.subscribe(fed);
    let sender = transport.open_endpoint().unwrap();
    for seq in 1..=UPDATES {
        sender.publish(fed, TOPIC, small(9, seq)).unwrap();
    }
    sender.flush().unwrap();
    for seq in 1..=UPDATES {
        expect(&receiver, 9, seq);
    }
    let (mut messages, mut envelopes) = (0u64, 0u64);
    while envelopes < UPDATES {
        let m = raw.next(&mut watcher, TIMEOUT);
        messages += 1;
        envelopes += unbundle(&m.payload).expect("a bundle").len() as u64;
    }
    eprintln!("{UPDATES} updates in {messages} NATS messages");
    assert_eq!(envelopes, UPDATES);
    assert!(
        messages * 10 < UPDATES,
        "{messages} NATS messages for {UPDATES} updates"
    );
    assert_eq!(receiver.stats().lost_envelopes, 0);
}

#[test]
fn a_lone_message_leaves_its_bundle_on_time_without_another_publish() {
    let bed = testbed(NatsOptions::default());
    let bundled = options(
        ChainConfig::default(),
        BundleConfig {
            bundle_bytes_max: 64 << 10,
            bundle_time_ns_max: 2_000_000,
        },
    );
    let transport = NatsTransport::connect_with(&bed.url(), bundled).unwrap();
    let receiver = transport.open_endpoint().unwrap();
    let fed = create(&receiver, "timer").unwrap();
    receiver.subscribe(fed, TOPIC).unwrap();
    let sender = transport.open_endpoint().unwrap();
    for round in 1..=3 {
        let started = Instant::now();
        sender.publish(fed, TOPIC, small(4, round)).unwrap();
        // No flush, no further publish: only the timer can send it.
        expect(&receiver, 4, round);
        assert!(started.elapsed() < TIMEOUT);
    }
}

#[test]
fn time_statuses_are_never_held_and_keep_their_place() {
    let bed = testbed(NatsOptions::default());
    // A long bundle time: anything that waits for the timer would show.
    let bundled = options(
        ChainConfig::default(),
        BundleConfig {
            bundle_bytes_max: 64 << 10,
            bundle_time_ns_max: 60_000_000_000,
        },
    );
    let transport = NatsTransport::connect_with(&bed.url(), bundled).unwrap();
    let receiver = transport.open_endpoint().unwrap();
    let fed = create(&receiver, "time-not-held").unwrap();
    receiver.subscribe(fed, TOPIC).unwrap();
    receiver.subscribe(fed, Topic::Time).unwrap();
    let sender = transport.open_endpoint().unwrap();
    sender.publish(fed, TOPIC, small(3, 1)).unwrap();
    sender.publish(fed, TOPIC, small(3, 2)).unwrap();
    // A time-topic envelope sends the waiting bundle, then itself, at once.
    sender.publish(fed, Topic::Time, small(3, 3)).unwrap();
    for seq in 1..=3 {
        expect(&receiver, 3, seq);
    }
}

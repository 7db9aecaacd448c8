//! Encodes and decodes 100k Update envelopes with a 100-byte payload and prints the
//! rate. Informative only: speed is measured by benchmarks, never asserted here.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use glidepath_core::{
    AttributeHandle, Body, Envelope, FederateHandle, LogicalTime, ObjectClassHandle,
    ObjectInstanceHandle, OrderType, TransportationType,
};
use glidepath_wire::{decode_envelope_bytes, encode_envelope};

#[test]
fn update_encode_decode_rate() {
    const N: u64 = 100_000;
    let payload = Bytes::from(vec![0x5a; 100]);
    let mut envelope = Envelope {
        sender: FederateHandle(3),
        seq: 0,
        publish_time_ns: 1_700_000_000_000_000_000,
        body: Body::Update {
            instance: ObjectInstanceHandle(42),
            class: ObjectClassHandle(5),
            values: Arc::from(vec![(AttributeHandle(7), payload)]),
            tag: Bytes::new(),
            order: OrderType::TimeStamp,
            transport: TransportationType::Reliable,
            time: LogicalTime::new(1.5),
            regions: None,
        },
    };
    let start = Instant::now();
    let mut bytes_total = 0usize;
    for seq in 1..=N {
        envelope.seq = seq;
        let bytes = encode_envelope(&envelope);
        bytes_total += bytes.len();
        let back = decode_envelope_bytes(bytes).expect("valid");
        assert_eq!(back.seq, seq);
    }
    let elapsed = start.elapsed();
    let rate = N as f64 / elapsed.as_secs_f64();
    println!(
        "encode+decode of {N} Update envelopes ({} B each, 100 B payload): {:.3} s, {:.0} envelopes/s, {:.0} ns each, {:.1} MB/s \
         ({}; informative only)",
        bytes_total as u64 / N,
        elapsed.as_secs_f64(),
        rate,
        elapsed.as_nanos() as f64 / N as f64,
        bytes_total as f64 / elapsed.as_secs_f64() / 1e6,
        if cfg!(debug_assertions) { "test profile: opt-level 1, debug assertions" } else { "release profile" },
    );
}

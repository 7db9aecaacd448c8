//! Micro-benchmarks of the binary envelope (`docs/wire-format.md`): encoding and
//! validating decoding of the envelopes that dominate the data plane.
//!
//! Every envelope a NATS federate sends is encoded once and decoded once per
//! receiver, so these costs sit on every message's path.
//!
//! `cargo bench -p glidepath-wire --bench envelope -- --warm-up-time 1 --measurement-time 3`
//! (`scripts/microbench.sh` runs every micro-benchmark; results in `docs/microbenchmarks.md`).
//!
//! Before measuring, the binary prints how many heap allocations one operation makes
//! (a counting global allocator), since allocation is the usual hidden cost.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::{Bytes, BytesMut};
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glidepath_core::{
    Advance, AttributeHandle, Body, Envelope, FederateHandle, InteractionClassHandle, LogicalTime,
    LogicalTimeInterval, ObjectClassHandle, ObjectInstanceHandle, OrderType, ParameterHandle,
    Regulation, TimeStatus, TransportationType,
};
use glidepath_wire::{
    decode_envelope, decode_envelope_bytes, decode_header, encode_envelope, encode_envelope_into,
    encoded_len,
};

/// Counts allocations so the report can say how many one operation makes.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded unchanged to the system allocator.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Average allocations of `f` over many runs.
fn allocations_per_call(mut f: impl FnMut()) -> f64 {
    const RUNS: u64 = 1_000;
    f();
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..RUNS {
        f();
    }
    (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / RUNS as f64
}

/// A time-stamped attribute update: `attributes` values of `payload` bytes each.
fn update(attributes: u32, payload: usize) -> Envelope {
    let values: Vec<(AttributeHandle, Bytes)> = (0..attributes)
        .map(|a| (AttributeHandle(10 + a), Bytes::from(vec![0x5a; payload])))
        .collect();
    Envelope {
        sender: FederateHandle(3),
        seq: 123_456,
        publish_time_ns: 1_700_000_000_000_000_000,
        body: Body::Update {
            instance: ObjectInstanceHandle(42),
            class: ObjectClassHandle(5),
            values: values.into(),
            tag: Bytes::new(),
            order: OrderType::TimeStamp,
            transport: TransportationType::Reliable,
            time: LogicalTime::new(1.5),
            regions: None,
        },
    }
}

/// A receive-order interaction with four small parameters and a tag.
fn interaction() -> Envelope {
    let values: Vec<(ParameterHandle, Bytes)> = (0..4)
        .map(|p| (ParameterHandle(20 + p), Bytes::from(vec![0x33; 16])))
        .collect();
    Envelope {
        sender: FederateHandle(7),
        seq: 99,
        publish_time_ns: 1_700_000_000_000_000_000,
        body: Body::Interaction {
            class: InteractionClassHandle(4),
            values: values.into(),
            tag: Bytes::from_static(b"tag"),
            order: OrderType::Receive,
            transport: TransportationType::Reliable,
            time: None,
            regions: None,
        },
    }
}

/// The time status of a federate in a next message request in a federation of
/// `peers + 1` federates (its `seen` list has one entry per peer).
fn time_status(peers: u32) -> Envelope {
    let t = |x| LogicalTime::new(x).expect("finite");
    Envelope {
        sender: FederateHandle(1),
        seq: 5_000,
        publish_time_ns: 1_700_000_000_000_000_000,
        body: Body::TimeStatus(std::sync::Arc::new(TimeStatus {
            regulation: Regulation::On,
            constrained: true,
            logical_time: t(100.0),
            last_grant_available: false,
            lookahead: LogicalTimeInterval::new(1.0).expect("finite"),
            delivered_up_to: t(100.0),
            promise: t(101.0),
            advance: Advance::Ner {
                time: t(110.0),
                next: t(105.0),
                available: false,
            },
            last_tso_seq: 4_990,
            seen: (2..peers + 2)
                .map(|f| (FederateHandle(f), 4_000 + u64::from(f)))
                .collect::<Vec<_>>()
                .into(),
            finished_below: FederateHandle(1),
            resigned: false,
        })),
    }
}

fn cases() -> Vec<(&'static str, Envelope)> {
    vec![
        ("update_1x100B", update(1, 100)),
        ("update_8x16B", update(8, 16)),
        ("update_1x4KiB", update(1, 4096)),
        ("interaction_4x16B", interaction()),
        ("time_status_8", time_status(7)),
        ("time_status_32", time_status(31)),
    ]
}

fn report_allocations() {
    println!("allocations per operation (counting allocator):");
    for (name, env) in cases() {
        let bytes = encode_envelope(&env);
        let mut buf = BytesMut::with_capacity(64 * 1024);
        let encode = allocations_per_call(|| {
            black_box(encode_envelope(black_box(&env)));
        });
        let encode_into = allocations_per_call(|| {
            buf.clear();
            encode_envelope_into(black_box(&env), &mut buf);
        });
        let decode = allocations_per_call(|| {
            black_box(decode_envelope_bytes(black_box(bytes.clone())).expect("valid"));
        });
        let decode_copy = allocations_per_call(|| {
            black_box(decode_envelope(black_box(&bytes)).expect("valid"));
        });
        println!(
            "  {name:<18} {:>5} B  encode {encode:.1}  encode_into(reused buffer) {encode_into:.1}  decode_bytes {decode:.1}  decode(&[u8]) {decode_copy:.1}",
            bytes.len()
        );
    }
}

fn bench(c: &mut Criterion) {
    report_allocations();

    let mut g = c.benchmark_group("envelope_encode");
    for (name, env) in cases() {
        let len = encoded_len(&env);
        g.throughput(Throughput::Bytes(len as u64));
        g.bench_with_input(BenchmarkId::new("encode_envelope", name), &env, |b, env| {
            b.iter(|| encode_envelope(black_box(env)))
        });
        let mut buf = BytesMut::with_capacity(64 * 1024);
        g.bench_with_input(
            BenchmarkId::new("encode_envelope_into", name),
            &env,
            |b, env| {
                b.iter(|| {
                    buf.clear();
                    encode_envelope_into(black_box(env), &mut buf);
                    black_box(buf.len())
                })
            },
        );
        if matches!(name, "update_1x100B" | "time_status_32") {
            // The size pass alone: `encode_envelope` runs it before writing.
            g.bench_with_input(BenchmarkId::new("encoded_len", name), &env, |b, env| {
                b.iter(|| encoded_len(black_box(env)))
            });
        }
    }
    g.finish();

    let mut g = c.benchmark_group("envelope_decode");
    for (name, env) in cases() {
        let bytes = encode_envelope(&env);
        g.throughput(Throughput::Bytes(bytes.len() as u64));
        g.bench_with_input(
            BenchmarkId::new("decode_envelope_bytes", name),
            &bytes,
            |b, bytes| b.iter(|| decode_envelope_bytes(black_box(bytes.clone())).expect("valid")),
        );
        if name == "update_1x100B" {
            // With the input copied once into a fresh buffer first (borrowed input).
            g.bench_with_input(
                BenchmarkId::new("decode_envelope", name),
                &bytes,
                |b, bytes| b.iter(|| decode_envelope(black_box(&bytes[..])).expect("valid")),
            );
            // What a transport reads to check `seq` before a full decode.
            g.bench_with_input(
                BenchmarkId::new("decode_header", name),
                &bytes,
                |b, bytes| b.iter(|| decode_header(black_box(&bytes[..])).expect("valid")),
            );
        }
    }
    g.finish();

    // What `inproc` pays per extra subscriber instead of encoding: a clone bumps
    // reference counts (the values are an `Arc`, payloads are `Bytes`).
    let env = update(1, 100);
    let mut g = c.benchmark_group("envelope_clone");
    g.throughput(Throughput::Elements(1));
    g.bench_function("clone/update_1x100B", |b| {
        b.iter(|| black_box(&env).clone())
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Micro-benchmarks of the SNDEM track serialisations: JSON written byte for byte as
//! Table 4.1 and read back, and the compact binary form.
//!
//! The ATM TestBed traffic is SNDEM tracks of about 220 bytes; every message a traffic
//! block publishes is written once and read once by each subscriber.
//!
//! `cargo bench -p glidepath-atm --bench track -- --warm-up-time 1 --measurement-time 3`
//! (`scripts/microbench.sh` runs every micro-benchmark; results in `docs/microbenchmarks.md`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use glidepath_atm::track::{Track, TrackMeta};

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

/// The sample track of the TestBed report's Table 4.1, with the vehicle varied.
fn track(i: u32) -> Track {
    Track {
        vid: format!("SWA{:04}", 1000 + i % 9000),
        lat_deg: 37.61882 + f64::from(i % 100) * 1e-3,
        lon_deg: -122.38169 - f64::from(i % 100) * 1e-3,
        alt_ft: 11_000.0 + f64::from(i % 50) * 100.0,
        time: 1_481_068_800_000 + i64::from(i) * 100,
        gs_kt: 287.0,
        crs_deg: 121.5,
        vs_fpm: -600.0,
        meta: TrackMeta {
            src: "ATAC Data.1".into(),
            ver: "2.3".into(),
            run: "1A".into(),
            tpub: 1_481_068_800_050 + i64::from(i) * 100,
        },
    }
}

fn track_json(i: u32) -> Vec<u8> {
    let mut out = Vec::new();
    track(i).write_sndem_json(&mut out);
    out
}

fn report_allocations() {
    println!("allocations per operation (counting allocator):");
    let json = track_json(1);
    let t = track(1);
    let mut out = Vec::with_capacity(1024);
    println!(
        "  track: write_sndem_json(reused buffer) {:.1}  from_sndem_json {:.1}  encode_binary(reused buffer) {:.1}",
        allocations_per_call(|| {
            out.clear();
            black_box(&t).write_sndem_json(&mut out);
        }),
        allocations_per_call(|| {
            black_box(Track::from_sndem_json(black_box(&json)).expect("valid"));
        }),
        allocations_per_call(|| {
            out.clear();
            black_box(&t).encode_binary(&mut out);
        }),
    );
}

fn bench_track(c: &mut Criterion) {
    let t = track(1);
    let json = track_json(1);
    let mut binary = Vec::new();
    t.encode_binary(&mut binary);
    let mut g = c.benchmark_group("track");
    g.throughput(Throughput::Elements(1));
    let mut out = Vec::with_capacity(1024);
    g.bench_function("write_sndem_json", |b| {
        b.iter(|| {
            out.clear();
            black_box(&t).write_sndem_json(&mut out);
            black_box(out.len())
        })
    });
    g.bench_function("from_sndem_json", |b| {
        b.iter(|| Track::from_sndem_json(black_box(&json)).expect("valid"))
    });
    g.bench_function("encode_binary", |b| {
        b.iter(|| {
            out.clear();
            black_box(&t).encode_binary(&mut out);
            black_box(out.len())
        })
    });
    g.bench_function("decode_binary", |b| {
        b.iter(|| Track::decode_binary(black_box(&binary)).expect("valid"))
    });
    g.finish();
    println!(
        "  track: SNDEM JSON {} B, binary {} B",
        json.len(),
        binary.len()
    );
}

fn bench(c: &mut Criterion) {
    report_allocations();
    bench_track(c);
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Micro-benchmarks of the encoder chain's stages: data bundling and the frame
//! (none / lz4 / zstd / XChaCha20-Poly1305 key), on SNDEM track payloads. (The track
//! serialisations themselves are measured by `glidepath-atm`'s bench `track`.)
//!
//! On the NATS backend every outgoing envelope passes the bundler and the chain, and
//! every incoming payload is unbundled and decoded, so each stage's cost is paid per
//! message; the ATM TestBed traffic is SNDEM tracks of about 220 bytes.
//!
//! `cargo bench -p glidepath-codec --bench bundle -- --warm-up-time 1 --measurement-time 3`
//! (`scripts/microbench.sh` runs every micro-benchmark; results in `docs/microbenchmarks.md`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glidepath_codec::{
    unbundle, BundleConfig, Bundler, ChainConfig, Compression, EncoderChain, FederationKey,
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

/// The SNDEM JSON of the sample track of the TestBed report's Table 4.1, with the
/// vehicle varied: the bytes `glidepath_atm::track::Track::write_sndem_json` writes
/// (this crate cannot depend on the ATM layer). Every number is finite and in
/// [1e-3, 1e7), where Java's `Double.toString` is Rust's `Display` plus `.0` for whole
/// numbers.
fn write_track_json(i: u32, out: &mut Vec<u8>) {
    let java = |x: f64| {
        let s = x.to_string();
        if s.contains('.') {
            s
        } else {
            s + ".0"
        }
    };
    let json = format!(
        "{{\"vid\":\"SWA{:04}\",\"latDeg\":{},\"lonDeg\":{},\"altFt\":{},\"time\":{},\"gsKt\":{},\"crsDeg\":{},\"vsFpm\":{},\"meta\":{{\"src\":\"ATAC Data.1\",\"ver\":\"2.3\",\"run\":\"1A\",\"tpub\":{}}}}}",
        1000 + i % 9000,
        java(37.61882 + f64::from(i % 100) * 1e-3),
        java(-122.38169 - f64::from(i % 100) * 1e-3),
        java(11_000.0 + f64::from(i % 50) * 100.0),
        1_481_068_800_000 + i64::from(i) * 100,
        java(287.0),
        java(121.5),
        java(-600.0),
        1_481_068_800_050 + i64::from(i) * 100,
    );
    out.extend_from_slice(json.as_bytes());
}

fn track_json(i: u32) -> Vec<u8> {
    let mut out = Vec::new();
    write_track_json(i, &mut out);
    out
}

/// About `size` bytes of consecutive tracks' JSON: a batch as it would leave in one
/// bundle, compressible like real traffic (not random, not one repeated byte).
fn json_batch(size: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut i = 0;
    while out.len() < size {
        write_track_json(i, &mut out);
        i += 1;
    }
    out.truncate(size);
    out
}

const BUNDLE_16K: BundleConfig = BundleConfig {
    bundle_bytes_max: 16 * 1024,
    bundle_time_ns_max: 1_000_000,
};

fn chains() -> Vec<(&'static str, EncoderChain)> {
    let key = FederationKey::from_bytes([7; 32]);
    let cfg = |compression, key: Option<FederationKey>| ChainConfig {
        compression,
        // Compress whatever the size, so the cost shows on small messages too (the
        // default threshold, 512 B, skips them).
        compress_bytes_min: 0,
        key,
        ..ChainConfig::default()
    };
    [
        ("plain", cfg(Compression::None, None)),
        ("lz4", cfg(Compression::Lz4, None)),
        ("zstd1", cfg(Compression::Zstd { level: 1 }, None)),
        ("zstd3", cfg(Compression::Zstd { level: 3 }, None)),
        ("key", cfg(Compression::None, Some(key.clone()))),
        ("lz4+key", cfg(Compression::Lz4, Some(key))),
    ]
    .into_iter()
    .map(|(name, cfg)| (name, EncoderChain::new(cfg).expect("valid chain")))
    .collect()
}

fn report_allocations() {
    println!("allocations per operation (counting allocator):");
    let json = track_json(1);
    for (name, chain) in chains() {
        let frame = chain.encode(&json).expect("encodes");
        println!(
            "  chain {name:<8} track ({} B -> {} B): encode {:.1}  decode {:.1}",
            json.len(),
            frame.len(),
            allocations_per_call(|| {
                black_box(chain.encode(black_box(&json)).expect("encodes"));
            }),
            allocations_per_call(|| {
                black_box(chain.decode(black_box(&frame)).expect("decodes"));
            }),
        );
    }
    let mut bundler = Bundler::new(BUNDLE_16K);
    println!(
        "  bundler 16 KiB push of one track: {:.2} (amortised, flushes included)",
        allocations_per_call(|| {
            black_box(bundler.push(black_box(&json), 0));
        })
    );
}

fn bench_bundle(c: &mut Criterion) {
    const BATCH: usize = 1_000;
    let messages: Vec<Vec<u8>> = (0..BATCH as u32).map(track_json).collect();
    let mut g = c.benchmark_group("bundle");
    g.throughput(Throughput::Elements(BATCH as u64));
    // 1000 SNDEM tracks through a bundler, then flushed: per-message cost including
    // the bundles it sends (about 70 tracks per 16 KiB bundle).
    for (name, config) in [
        ("push_flush_16KiB", BUNDLE_16K),
        ("push_off", BundleConfig::default()),
    ] {
        g.bench_function(BenchmarkId::new(name, "1000_tracks"), |b| {
            let mut bundler = Bundler::new(config);
            b.iter(|| {
                let mut sent = 0usize;
                for (i, m) in messages.iter().enumerate() {
                    sent += bundler.push(black_box(m), i as u64).len();
                }
                sent += usize::from(bundler.flush().is_some());
                black_box(sent)
            })
        });
    }
    // Receiving side: a full 16 KiB bundle split into its messages (zero copy).
    let mut bundler = Bundler::new(BUNDLE_16K);
    let mut full = None;
    for m in &messages {
        if let Some(b) = bundler.push(m, 0).into_iter().next() {
            full = Some(b);
            break;
        }
    }
    let full: Bytes = full.expect("a 16 KiB bundle fills up");
    let count = unbundle(&full).expect("valid").len();
    g.throughput(Throughput::Elements(count as u64));
    g.bench_function(
        BenchmarkId::new("unbundle_16KiB", format!("{count}_tracks")),
        |b| b.iter(|| unbundle(black_box(&full)).expect("valid")),
    );
    g.finish();
}

fn bench_chain(c: &mut Criterion) {
    let payloads = [
        ("track_json", track_json(1)),
        ("batch_16KiB", json_batch(16 * 1024)),
    ];
    for (pname, payload) in &payloads {
        let mut g = c.benchmark_group(format!("chain_{pname}"));
        g.throughput(Throughput::Bytes(payload.len() as u64));
        for (name, chain) in chains() {
            let frame = chain.encode(payload).expect("encodes");
            g.bench_function(BenchmarkId::new("encode", name), |b| {
                b.iter(|| chain.encode(black_box(payload)).expect("encodes"))
            });
            g.bench_function(BenchmarkId::new("decode", name), |b| {
                b.iter(|| chain.decode(black_box(&frame)).expect("decodes"))
            });
            println!(
                "  chain {name:<8} {pname}: {} B -> {} B",
                payload.len(),
                frame.len()
            );
        }
        g.finish();
    }
}

fn bench(c: &mut Criterion) {
    report_allocations();
    bench_bundle(c);
    bench_chain(c);
}

criterion_group!(benches, bench);
criterion_main!(benches);

//! Micro-benchmarks of the in-process queue: an envelope published on the `inproc`
//! bus until it is taken out of each subscriber's inbox, for 1, 4 and 8 subscribers,
//! next to a raw crossbeam channel carrying the same envelopes (the floor any
//! in-process bus built on it can reach).
//!
//! Every update and interaction between federates of one process takes this path,
//! and the RTI thread's inbox is the queue it waits on.
//!
//! `cargo bench -p glidepath-transport --bench inproc -- --warm-up-time 1 --measurement-time 3`
//! (`scripts/microbench.sh` runs every micro-benchmark; results in `docs/microbenchmarks.md`).

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use glidepath_core::fom::Fom;
use glidepath_core::{
    AttributeHandle, Body, Envelope, ExecReply, ExecRequest, FederateHandle, FederationId,
    LogicalTime, ObjectClassHandle, ObjectInstanceHandle, OrderType, Topic, TransportationType,
};
use glidepath_transport::{Endpoint, InprocEndpoint, InprocTransport};

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

/// Envelopes published per measured iteration, then received: deep enough to
/// amortise the drain loop, small enough to stay in cache like a live inbox.
const BATCH: usize = 256;
const CLASS: ObjectClassHandle = ObjectClassHandle(1);

/// The envelope every case carries: a time-stamped update with one 100-byte value.
/// Its `publish_time_ns` is set, so the bus does not read the clock (a driver
/// stamps it when the RTI sends it).
fn update() -> Envelope {
    Envelope {
        sender: FederateHandle(1),
        seq: 1,
        publish_time_ns: 1,
        body: Body::Update {
            instance: ObjectInstanceHandle(42),
            class: CLASS,
            values: Arc::from(vec![(AttributeHandle(3), Bytes::from(vec![0x5a; 100]))]),
            tag: Bytes::new(),
            order: OrderType::TimeStamp,
            transport: TransportationType::Reliable,
            time: LogicalTime::new(1.5),
            regions: None,
        },
    }
}

/// A bus with one federation, a publisher and `subscribers` endpoints subscribed to
/// the class topic.
fn bus(subscribers: usize) -> (InprocEndpoint, Vec<InprocEndpoint>, FederationId) {
    let transport = InprocTransport::new();
    let admin = transport.open_endpoint();
    let reply = admin
        .request(ExecRequest::Create {
            name: "bench".into(),
            fom: Arc::new(Fom::default()),
        })
        .expect("request");
    let ExecReply::Created { id } = reply else {
        panic!("create failed: {reply:?}")
    };
    let publisher = transport.open_endpoint();
    let subs: Vec<InprocEndpoint> = (0..subscribers)
        .map(|_| {
            let e = transport.open_endpoint();
            e.subscribe(id, Topic::ObjectClass(CLASS))
                .expect("subscribe");
            e
        })
        .collect();
    (publisher, subs, id)
}

/// Publishes `BATCH` envelopes, then empties every inbox.
fn round(
    publisher: &InprocEndpoint,
    subs: &[InprocEndpoint],
    id: FederationId,
    template: &Envelope,
) -> usize {
    for _ in 0..BATCH {
        publisher
            .publish(id, Topic::ObjectClass(CLASS), black_box(template).clone())
            .expect("publish");
    }
    let mut got = 0;
    for s in subs {
        while let Ok(e) = s.inbox().try_recv() {
            black_box(&e);
            got += 1;
        }
    }
    assert_eq!(got, BATCH * subs.len());
    got
}

fn report_allocations() {
    let template = update();
    for n in [1, 4] {
        let (publisher, subs, id) = bus(n);
        round(&publisher, &subs, id, &template);
        let before = ALLOCATIONS.load(Ordering::Relaxed);
        for _ in 0..10 {
            round(&publisher, &subs, id, &template);
        }
        let per = (ALLOCATIONS.load(Ordering::Relaxed) - before) as f64 / (10 * BATCH) as f64;
        println!("allocations per published envelope, inproc with {n} subscriber(s): {per:.2} (the unbounded inbox allocates a block per 31 messages)");
    }
}

/// Same thread: publish a batch, then drain. Measures the queue operations and the
/// bus's routing, without any thread hand-off.
fn bench_same_thread(c: &mut Criterion) {
    let template = update();
    let mut g = c.benchmark_group("inproc_same_thread");
    for n in [1usize, 4, 8] {
        g.throughput(Throughput::Elements((BATCH * n) as u64));
        let (publisher, subs, id) = bus(n);
        g.bench_function(
            BenchmarkId::new("inproc_publish_receive", format!("{n}_subscribers")),
            |b| b.iter(|| round(&publisher, &subs, id, &template)),
        );
        // The reference: the same envelopes through raw channels, one per subscriber,
        // cloned for all but the last as the bus does.
        for (name, bounded) in [("crossbeam_bounded", true), ("crossbeam_unbounded", false)] {
            let channels: Vec<_> = (0..n)
                .map(|_| {
                    if bounded {
                        crossbeam_channel::bounded::<Envelope>(BATCH)
                    } else {
                        crossbeam_channel::unbounded()
                    }
                })
                .collect();
            g.bench_function(BenchmarkId::new(name, format!("{n}_subscribers")), |b| {
                b.iter(|| {
                    for _ in 0..BATCH {
                        let env = black_box(&template).clone();
                        let (last, rest) = channels.split_last().expect("at least one");
                        for (tx, _) in rest {
                            tx.send(env.clone()).expect("send");
                        }
                        last.0.send(env).expect("send");
                    }
                    let mut got = 0;
                    for (_, rx) in &channels {
                        while let Ok(e) = rx.try_recv() {
                            black_box(&e);
                            got += 1;
                        }
                    }
                    assert_eq!(got, BATCH * n);
                    got
                })
            });
        }
    }
    g.finish();
}

/// Two threads: the publisher here, one subscriber's receiving thread blocked on its
/// inbox as an RTI thread is. Time runs until the receiver has taken the last one.
fn bench_cross_thread(c: &mut Criterion) {
    let template = update();
    let mut g = c.benchmark_group("inproc_cross_thread");
    g.throughput(Throughput::Elements(1));
    let (publisher, mut subs, id) = bus(1);
    let sub = subs.pop().expect("one subscriber");
    g.bench_function("inproc_publish_receive/1_subscriber", |b| {
        b.iter_custom(|iters| {
            std::thread::scope(|s| {
                let receiver = s.spawn(|| {
                    for _ in 0..iters {
                        black_box(sub.inbox().recv().expect("open"));
                    }
                });
                let start = Instant::now();
                for _ in 0..iters {
                    publisher
                        .publish(id, Topic::ObjectClass(CLASS), template.clone())
                        .expect("publish");
                }
                receiver.join().expect("receiver");
                start.elapsed()
            })
        })
    });
    g.bench_function("crossbeam_bounded/1_subscriber", |b| {
        let (tx, rx) = crossbeam_channel::bounded::<Envelope>(1024);
        b.iter_custom(|iters| {
            std::thread::scope(|s| {
                let receiver = s.spawn(|| {
                    for _ in 0..iters {
                        black_box(rx.recv().expect("open"));
                    }
                });
                let start = Instant::now();
                for _ in 0..iters {
                    tx.send(template.clone()).expect("send");
                }
                receiver.join().expect("receiver");
                start.elapsed()
            })
        })
    });
    g.finish();
    // Keep the subscriber alive until here.
    drop(sub);
}

fn bench(c: &mut Criterion) {
    report_allocations();
    bench_same_thread(c);
    bench_cross_thread(c);
}

criterion_group!(benches, bench);
criterion_main!(benches);

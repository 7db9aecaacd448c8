//! `glidepath bench bus send | send-receive | throughput`: the formation-flying
//! testbed's measurements of its bus (seed `003_...` section IV), on `glidepath::bus`
//! and, over NATS, on raw NATS in the same run.
//!
//! - **send**: the time one `publish` call takes, by message size, with no subscriber
//!   (Figs. 7–8).
//! - **send-receive**: one publisher, 1–9 subscribers on threads of their own; each
//!   message is parsed by each subscriber before its clock stops, and the publisher
//!   sends the next only when every subscriber has the last, so each sample is one
//!   message's latency, not a queue's (Figs. 9–12).
//! - **throughput**: the publisher sends as fast as it can; payload bytes delivered to
//!   all subscribers over the time until the last one has everything (Figs. 13–14).
//!   Subscribers are threads here, not the paper's processes.
//!
//! Every subscriber records the order it received; `order_violations` counts
//! positions where a subscriber's order differs from the publisher's (one publisher:
//! the total order and the send order are the same), and `lost` what never arrived.
//! The raw peer publishes the same XML bytes with an 8-byte time stamp in front, on a
//! NATS subject of its own, and its subscribers parse the XML too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use futures::StreamExt;
use glidepath::bus::{Bus, BusConfig, Encoding, Event, Message, Pattern, ServiceLevel, Subject};
use glidepath::stats::Recorder;
use glidepath::{monotonic_now_ns, TransportKind};

use crate::harness::Progress;
use crate::result::BenchResult;

/// Which of the paper's tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BusVariant {
    /// Send-only latency.
    Send,
    /// Send-receive latency.
    SendReceive,
    /// Throughput.
    Throughput,
}

impl std::str::FromStr for BusVariant {
    type Err = anyhow::Error;
    fn from_str(s: &str) -> anyhow::Result<BusVariant> {
        match s {
            "send" => Ok(BusVariant::Send),
            "send-receive" => Ok(BusVariant::SendReceive),
            "throughput" => Ok(BusVariant::Throughput),
            other => anyhow::bail!(
                "unknown bus benchmark `{other}`; the variants are: send, send-receive, throughput"
            ),
        }
    }
}

impl BusVariant {
    fn name(self) -> &'static str {
        match self {
            BusVariant::Send => "send",
            BusVariant::SendReceive => "send-receive",
            BusVariant::Throughput => "throughput",
        }
    }
}

/// What to measure.
#[derive(Clone, Debug)]
pub struct BusBenchOptions {
    /// The test.
    pub variant: BusVariant,
    /// `inproc` or `nats`.
    pub transport: TransportKind,
    /// The NATS server (with JetStream, for the totally ordered levels).
    pub nats_url: String,
    /// Encoded message sizes in bytes (the paper: 100 B to nearly 10 MB).
    pub sizes: Vec<usize>,
    /// Subscriber counts (the paper: 1–9 for send-receive; 1, 5, 10, 20, 30, 50 for throughput).
    pub subscribers: Vec<usize>,
    /// Messages per configuration (the paper: 10^3 for send-receive, 10^4 for throughput).
    pub count: usize,
    /// The service level (the paper: AGREED).
    pub level: ServiceLevel,
    /// How messages are encoded (the paper: XML).
    pub encoding: Encoding,
    /// Also measure raw NATS in the same run (over NATS only).
    pub raw: bool,
}

/// Messages sent before the measured ones (numbered below 0, neither timed nor
/// counted), so that connections, the stream and the caches are warm.
const WARMUP: i32 = 100;

/// How long a subscriber waits for a message before it is counted lost.
const PATIENCE: Duration = Duration::from_secs(5);

const SUBJECT: &str = "FFTB.BENCH.SAT1.DATA.TRUTH.STARS.POSVEL";

/// Messages received by all subscribers together, and the publisher waiting for them:
/// it sleeps until the subscribers wake it, rather than spinning, because a spinning
/// publisher takes a whole core from the subscribers and the server on a small machine
/// (the bus's path, with more hops to schedule, suffered more from it than raw NATS).
struct Arrivals {
    count: AtomicU64,
    publisher: std::thread::Thread,
}

impl Arrivals {
    /// For the calling thread, which publishes and waits.
    fn new() -> Arc<Arrivals> {
        Arc::new(Arrivals {
            count: AtomicU64::new(0),
            publisher: std::thread::current(),
        })
    }

    /// One more message received by one subscriber.
    fn arrived(&self) {
        self.count.fetch_add(1, Ordering::Release);
        self.publisher.unpark();
    }

    /// Waits until `want` have arrived, at most [`PATIENCE`].
    fn wait_for(&self, want: u64) {
        let deadline = Instant::now() + PATIENCE;
        while self.count.load(Ordering::Acquire) < want {
            let now = Instant::now();
            if now >= deadline {
                return;
            }
            std::thread::park_timeout(deadline - now);
        }
    }
}

/// A message whose encoding is about `size` bytes: a counter and a string filler.
fn message_of_size(size: usize, encoding: Encoding) -> Message {
    let base = Message::new().with("i", 0i32).with("fill", String::new());
    let mut bytes = Vec::new();
    base.encode(encoding, &mut bytes)
        .expect("plain text encodes");
    let fill = size.saturating_sub(bytes.len() + 4);
    Message::new()
        .with("i", 0i32)
        .with("fill", "x".repeat(fill))
}

fn config(opts: &BusBenchOptions, name: &str, group: &Subject) -> BusConfig {
    BusConfig {
        transport: opts.transport,
        nats_url: opts.nats_url.clone(),
        encoding: opts.encoding,
        name: name.to_string(),
        default_group: group.clone(),
        hub: None,
        crash_timeout: BusConfig::default().crash_timeout,
        // The bus bench talks to an open server, as its raw NATS peer does.
        nats_security: Default::default(),
    }
}

/// Runs the chosen test over every size and subscriber count.
pub fn run(opts: &BusBenchOptions, progress: &dyn Progress) -> anyhow::Result<Vec<BenchResult>> {
    let mut results = Vec::new();
    let subscriber_counts = if opts.variant == BusVariant::Send {
        vec![0]
    } else {
        opts.subscribers.clone()
    };
    let total = (opts.sizes.len() * subscriber_counts.len()) as u64;
    progress.stage(&format!("bus {}", opts.variant.name()));
    let mut done = 0;
    let mut run_id = 0u64;
    for &size in &opts.sizes {
        for &n in &subscriber_counts {
            run_id += 1;
            // A group of its own per configuration: nothing left over from the last.
            let group = Subject::new(&format!("BENCH{}-{run_id}", std::process::id()))?;
            let mut r = measure(opts, &group, size, n)
                .with_context(|| format!("size {size}, {n} subscribers"))?;
            if opts.raw && opts.transport == TransportKind::Nats {
                let raw = measure_raw(
                    opts,
                    &format!("gpbench.raw.{}.{run_id}", std::process::id()),
                    size,
                    n,
                )?;
                r.set_raw(raw.p50_us, raw.p99_us, raw.rate_per_s);
            }
            results.push(r);
            done += 1;
            progress.set(done, total);
        }
    }
    Ok(results)
}

fn result(opts: &BusBenchOptions, size: usize, n: usize) -> BenchResult {
    let mut r = BenchResult::new(
        "bus",
        opts.variant.name(),
        opts.transport.name(),
        opts.level.name(),
        opts.encoding.name(),
    );
    r.size_bytes = size as u64;
    r.subscribers = n as u64;
    r.federates = n as u64 + 1;
    r.count = opts.count as u64;
    r
}

/// What subscribers saw, for loss and order.
#[derive(Default)]
struct Seen {
    received: u64,
    violations: u64,
}

fn order_check(orders: &[Vec<i32>], count: usize) -> Seen {
    let mut seen = Seen::default();
    for order in orders {
        seen.received += order.len() as u64;
        // The publisher's order is 0, 1, 2, ...: every position that differs.
        seen.violations += order
            .iter()
            .enumerate()
            .filter(|(k, i)| **i != *k as i32)
            .count() as u64;
        if order.len() > count {
            seen.violations += (order.len() - count) as u64;
        }
    }
    seen
}

fn measure(
    opts: &BusBenchOptions,
    group: &Subject,
    size: usize,
    n: usize,
) -> anyhow::Result<BenchResult> {
    let publisher = Bus::connect(&config(opts, "publisher", group))?;
    let subject = Subject::new(SUBJECT)?;
    let template = message_of_size(size, opts.encoding);
    let mut r = result(opts, size, n);
    let mut probe = Vec::new();
    template.encode(opts.encoding, &mut probe)?;
    r.size_bytes = probe.len() as u64;
    let received = Arrivals::new();
    let mut handles = Vec::new();
    for k in 0..n {
        let bus = Bus::connect(&config(opts, &format!("subscriber-{k}"), group))?;
        let sub = bus.subscribe(&Pattern::new("FFTB.BENCH.>")?)?;
        let received = received.clone();
        let count = opts.count;
        handles.push(std::thread::spawn(move || {
            let _bus = bus;
            let mut latencies = Recorder::new();
            let mut samples_us = Vec::with_capacity(count);
            let mut order = Vec::with_capacity(count);
            while order.len() < count {
                match sub.recv_timeout(PATIENCE) {
                    Ok(Some(Event::Message(d))) => {
                        // The message is parsed (recv decodes it) before the clock stops.
                        let now = monotonic_now_ns();
                        let i = d.message.get_i32("i").unwrap_or(i32::MIN);
                        received.arrived();
                        if i < 0 && i != i32::MIN {
                            continue;
                        }
                        let ns = now.saturating_sub(d.publish_time_ns);
                        latencies.record(ns);
                        samples_us.push(ns as f64 / 1e3);
                        order.push(i);
                    }
                    Ok(Some(Event::Membership(_))) => {}
                    Ok(None) | Err(_) => break,
                }
            }
            (latencies, order, samples_us)
        }));
    }
    let mut send = Recorder::new();
    let mut send_samples_us = Vec::with_capacity(opts.count);
    let mut started = Instant::now();
    for i in -WARMUP..opts.count as i32 {
        if i == 0 {
            started = Instant::now();
        }
        let m = template.clone().with("i", i);
        let t0 = Instant::now();
        publisher.publish(&subject, &m, opts.level)?;
        if i >= 0 {
            let ns = t0.elapsed().as_nanos() as u64;
            send.record(ns);
            send_samples_us.push(ns as f64 / 1e3);
        }
        if opts.variant == BusVariant::SendReceive {
            received.wait_for(((i + WARMUP + 1) as usize * n) as u64);
        }
    }
    let mut all = Recorder::new();
    let mut all_samples_us = Vec::new();
    let mut orders = Vec::new();
    for h in handles {
        let (lat, order, samples_us) = h
            .join()
            .map_err(|_| anyhow::anyhow!("a subscriber panicked"))?;
        all.merge(&lat);
        all_samples_us.extend(samples_us);
        orders.push(order);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let seen = order_check(&orders, opts.count);
    match opts.variant {
        BusVariant::Send => {
            r.set_latency_ns(&send);
            r.samples_us = send_samples_us;
            r.received = opts.count as u64;
        }
        _ => {
            r.set_latency_ns(&all);
            r.samples_us = all_samples_us;
            r.received = seen.received;
            r.lost = (opts.count * n) as u64 - seen.received.min((opts.count * n) as u64);
            r.order_violations = Some(seen.violations + publisher.stats().order_violations);
        }
    }
    r.elapsed_s = elapsed;
    r.rate_per_s = r.received as f64 / elapsed;
    r.mbit_per_s = r.rate_per_s * r.size_bytes as f64 * 8.0 / 1e6;
    publisher.close();
    Ok(r)
}

/// The same test on raw NATS: the XML bytes with an 8-byte stamp in front.
fn measure_raw(
    opts: &BusBenchOptions,
    nats_subject: &str,
    size: usize,
    n: usize,
) -> anyhow::Result<BenchResult> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let template = message_of_size(size, Encoding::Xml);
    let publisher = rt.block_on(async_nats::connect(&opts.nats_url))?;
    let received = Arrivals::new();
    let mut handles = Vec::new();
    for _ in 0..n {
        let client = rt.block_on(async_nats::connect(&opts.nats_url))?;
        let mut sub = rt.block_on(client.subscribe(nats_subject.to_string()))?;
        // Effective at the server before the publisher's first message (a flush only
        // empties the socket buffer, and the first message would be lost).
        rt.block_on(crate::harness::settle(&client))?;
        let received = received.clone();
        let count = opts.count;
        let handle = rt.handle().clone();
        handles.push(std::thread::spawn(move || {
            let mut latencies = Recorder::new();
            let mut order = Vec::with_capacity(count);
            while order.len() < count {
                let next =
                    handle.block_on(async { tokio::time::timeout(PATIENCE, sub.next()).await });
                let Ok(Some(msg)) = next else { break };
                if msg.payload.len() < 8 {
                    break;
                }
                let stamp = u64::from_le_bytes(msg.payload[..8].try_into().expect("8 bytes"));
                let Ok(m) = Message::from_xml(&msg.payload[8..]) else {
                    break;
                };
                let now = monotonic_now_ns();
                received.arrived();
                let i = m.get_i32("i").unwrap_or(i32::MIN);
                if i < 0 && i != i32::MIN {
                    continue;
                }
                latencies.record(now.saturating_sub(stamp));
                order.push(i);
            }
            drop(client);
            (latencies, order)
        }));
    }
    let mut send = Recorder::new();
    let mut started = Instant::now();
    for i in -WARMUP..opts.count as i32 {
        if i == 0 {
            started = Instant::now();
        }
        let m = template.clone().with("i", i);
        // Encoded before the stamp, as the bus encodes before it stamps its frame.
        let mut xml = Vec::with_capacity(size);
        m.encode(Encoding::Xml, &mut xml)?;
        let mut bytes = Vec::with_capacity(xml.len() + 8);
        bytes.extend_from_slice(&monotonic_now_ns().to_le_bytes());
        bytes.extend_from_slice(&xml);
        let t0 = Instant::now();
        rt.block_on(publisher.publish(nats_subject.to_string(), Bytes::from(bytes)))?;
        if i >= 0 {
            send.record(t0.elapsed().as_nanos() as u64);
        }
        if opts.variant == BusVariant::SendReceive {
            received.wait_for(((i + WARMUP + 1) as usize * n) as u64);
        }
    }
    rt.block_on(publisher.flush())?;
    let mut all = Recorder::new();
    let mut orders = Vec::new();
    for h in handles {
        let (lat, order) = h
            .join()
            .map_err(|_| anyhow::anyhow!("a raw subscriber panicked"))?;
        all.merge(&lat);
        orders.push(order);
    }
    let elapsed = started.elapsed().as_secs_f64();
    let mut r = result(opts, size, n);
    let seen = order_check(&orders, opts.count);
    if opts.variant == BusVariant::Send {
        r.set_latency_ns(&send);
        r.received = opts.count as u64;
    } else {
        r.set_latency_ns(&all);
        r.received = seen.received;
    }
    r.rate_per_s = r.received as f64 / elapsed;
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::NoProgress;

    /// In-process, every variant delivers everything in the one order, and sizes are
    /// what was asked for.
    #[test]
    fn every_variant_runs_in_process_without_loss_or_disorder() {
        for variant in [
            BusVariant::Send,
            BusVariant::SendReceive,
            BusVariant::Throughput,
        ] {
            let opts = BusBenchOptions {
                variant,
                transport: TransportKind::Inproc,
                nats_url: String::new(),
                sizes: vec![100, 2_000],
                subscribers: vec![3],
                count: 50,
                level: ServiceLevel::Agreed,
                encoding: Encoding::Xml,
                raw: false,
            };
            let results = run(&opts, &NoProgress).unwrap();
            assert_eq!(results.len(), 2);
            for r in &results {
                // The smallest message (two entries) is already over 100 bytes.
                if r.size_bytes > 1000 {
                    assert!(r.size_bytes.abs_diff(2_000) <= 8, "{}", r.size_bytes);
                }
                assert_eq!(r.lost, 0, "{variant:?}");
                if variant != BusVariant::Send {
                    assert_eq!(r.received, 150);
                    assert_eq!(r.order_violations, Some(0), "{variant:?}");
                }
                assert!(r.p50_us > 0.0);
            }
        }
    }
}

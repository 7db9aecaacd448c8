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
//!   all subscribers over the time from the first measured send until the last one has
//!   everything (Figs. 13–14). Subscribers are threads of this process, or with
//!   `--processes` (over NATS) processes of their own as in the paper, the raw peer's
//!   too (`bus_process`).
//!
//! Every subscriber records the order it received; `order_violations` counts
//! positions where a subscriber's order differs from the publisher's (one publisher:
//! the total order and the send order are the same), and `lost` what never arrived.
//! Threads and processes report the same `SubscriberReport`, gathered in one place.
//! The raw peer publishes the same XML bytes with an 8-byte time stamp in front, on a
//! NATS subject of its own, and its subscribers parse the XML too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use futures::StreamExt;
use glidepath::bus::{
    Bus, BusConfig, Encoding, Event, Message, Pattern, ServiceLevel, Subject, Subscription,
};
use glidepath::stats::Recorder;
use glidepath::{monotonic_now_ns, TransportKind};
use serde::{Deserialize, Serialize};

use crate::bus_process::{SubscriberProcesses, SubscriberRole};
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
    /// Run every subscriber, the raw peer's too, as a process of its own, as the paper
    /// did (throughput over NATS only); off: threads of this process.
    pub processes: bool,
}

/// Messages sent before the measured ones (numbered below 0, neither timed nor
/// counted), so that connections, the stream and the caches are warm.
const WARMUP: i32 = 100;

/// How long a subscriber waits for a message before it is counted lost.
pub(crate) const PATIENCE: Duration = Duration::from_secs(5);

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

/// What every subscriber subscribes to.
pub(crate) const PATTERN: &str = "FFTB.BENCH.>";

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

pub(crate) fn config(opts: &BusBenchOptions, name: &str, group: &Subject) -> BusConfig {
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
    if opts.processes {
        anyhow::ensure!(
            opts.variant == BusVariant::Throughput,
            "--processes: only bus throughput runs its subscribers as processes (send has \
             none, and send-receive paces each message on in-process acknowledgements)"
        );
        anyhow::ensure!(
            opts.transport == TransportKind::Nats,
            "--processes needs --transport nats: {} cannot cross a process boundary",
            opts.transport.name()
        );
    }
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
                )
                .with_context(|| format!("raw NATS, size {size}, {n} subscribers"))?;
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
    if opts.variant != BusVariant::Send {
        let place = if opts.processes {
            "processes"
        } else {
            "threads"
        };
        r.subscribers_in = Some(place.to_string());
    }
    r
}

/// What one subscriber saw of the measured messages. A thread returns it; a
/// subscriber process prints it as one JSON line (`bus_process`).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct SubscriberReport {
    /// Measured messages received (the warm-up is not counted).
    pub received: u64,
    /// Positions where the arrival order differs from the publisher's 0, 1, 2, ...
    pub order_violations: u64,
    /// Each measured message's latency in nanoseconds, in arrival order.
    pub latencies_ns: Vec<u64>,
    /// [`monotonic_now_ns`] of the first and the last measured arrival: one clock
    /// (CLOCK_MONOTONIC) for every process of the host.
    pub first_arrival_ns: Option<u64>,
    pub last_arrival_ns: Option<u64>,
}

impl SubscriberReport {
    fn with_capacity(count: usize) -> SubscriberReport {
        SubscriberReport {
            latencies_ns: Vec::with_capacity(count),
            ..SubscriberReport::default()
        }
    }

    /// Message `i` (`i32::MIN` when it had none) arrived at `now_ns`, sent at
    /// `sent_ns`; the warm-up (below 0) is skipped.
    fn arrive(&mut self, i: i32, now_ns: u64, sent_ns: u64) {
        if i < 0 && i != i32::MIN {
            return;
        }
        // The publisher's order is 0, 1, 2, ...: every position that differs.
        if i64::from(i) != self.received as i64 {
            self.order_violations += 1;
        }
        self.received += 1;
        self.latencies_ns.push(now_ns.saturating_sub(sent_ns));
        self.first_arrival_ns.get_or_insert(now_ns);
        self.last_arrival_ns = Some(now_ns);
    }
}

/// A bus subscriber's loop: until `count` measured messages or [`PATIENCE`] of
/// silence. `arrived` is told of every message, the warm-up's too.
pub(crate) fn receive_bus(
    sub: &Subscription,
    count: usize,
    arrived: impl Fn(),
) -> SubscriberReport {
    let mut report = SubscriberReport::with_capacity(count);
    while (report.received as usize) < count {
        match sub.recv_timeout(PATIENCE) {
            Ok(Some(Event::Message(d))) => {
                // The message is parsed (recv decodes it) before the clock stops.
                let now = monotonic_now_ns();
                arrived();
                let i = d.message.get_i32("i").unwrap_or(i32::MIN);
                report.arrive(i, now, d.publish_time_ns);
            }
            Ok(Some(Event::Membership(_))) => {}
            Ok(None) | Err(_) => break,
        }
    }
    report
}

/// A raw NATS subscriber's loop: the 8-byte stamp, then the XML, parsed before the
/// clock stops; otherwise as [`receive_bus`].
pub(crate) fn receive_raw(
    rt: &tokio::runtime::Handle,
    sub: &mut async_nats::Subscriber,
    count: usize,
    arrived: impl Fn(),
) -> SubscriberReport {
    let mut report = SubscriberReport::with_capacity(count);
    while (report.received as usize) < count {
        let next = rt.block_on(async { tokio::time::timeout(PATIENCE, sub.next()).await });
        let Ok(Some(msg)) = next else { break };
        if msg.payload.len() < 8 {
            break;
        }
        let stamp = u64::from_le_bytes(msg.payload[..8].try_into().expect("8 bytes"));
        let Ok(m) = Message::from_xml(&msg.payload[8..]) else {
            break;
        };
        let now = monotonic_now_ns();
        arrived();
        report.arrive(m.get_i32("i").unwrap_or(i32::MIN), now, stamp);
    }
    report
}

/// The subscribers of one measurement: threads of this process, or processes of
/// their own that report the same way.
enum Subscribers {
    Threads(Vec<std::thread::JoinHandle<SubscriberReport>>),
    Processes(SubscriberProcesses),
}

impl Subscribers {
    /// Subscriber processes start waiting for messages now (threads already are).
    fn go(&mut self) -> anyhow::Result<()> {
        match self {
            Subscribers::Threads(_) => Ok(()),
            Subscribers::Processes(p) => p.go(),
        }
    }

    /// Every subscriber's report, once each has ended.
    fn reports(self) -> anyhow::Result<Vec<SubscriberReport>> {
        match self {
            Subscribers::Threads(handles) => handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .map_err(|_| anyhow::anyhow!("a subscriber panicked"))
                })
                .collect(),
            Subscribers::Processes(p) => p.reports(),
        }
    }
}

/// Fills received, lost, order violations, latency, elapsed time and rate from every
/// subscriber's report; the rate runs from the first measured send (`started_ns`)
/// until the last subscriber had everything.
fn fill(
    r: &mut BenchResult,
    reports: &[SubscriberReport],
    publisher_violations: u64,
    started_ns: u64,
) {
    let mut latencies = Recorder::new();
    let mut samples_us = Vec::new();
    let mut received = 0;
    let mut violations = publisher_violations;
    let mut last_arrival_ns = None;
    for report in reports {
        received += report.received;
        violations += report.order_violations;
        for &ns in &report.latencies_ns {
            latencies.record(ns);
            samples_us.push(ns as f64 / 1e3);
        }
        last_arrival_ns = last_arrival_ns.max(report.last_arrival_ns);
    }
    let expected = r.count * reports.len() as u64;
    r.set_latency_ns(&latencies);
    r.samples_us = samples_us;
    r.received = received;
    r.lost = expected - received.min(expected);
    r.order_violations = Some(violations);
    let ended_ns = last_arrival_ns.unwrap_or_else(monotonic_now_ns);
    r.elapsed_s = ended_ns.saturating_sub(started_ns) as f64 / 1e9;
    r.rate_per_s = r.received as f64 / r.elapsed_s;
    r.mbit_per_s = r.rate_per_s * r.size_bytes as f64 * 8.0 / 1e6;
}

/// Publishes the warm-up and then `opts.count` measured messages: `send(i)` sends
/// message `i` and says how long its call took. In send-receive it waits after each
/// until all `n` subscribers have it. Returns the measured calls' times (ns) and when
/// the first measured message went (monotonic ns).
fn publish_all(
    opts: &BusBenchOptions,
    n: usize,
    received: &Arrivals,
    mut send: impl FnMut(i32) -> anyhow::Result<Duration>,
) -> anyhow::Result<(Vec<u64>, u64)> {
    let mut send_ns = Vec::with_capacity(opts.count);
    let mut started_ns = monotonic_now_ns();
    for i in -WARMUP..opts.count as i32 {
        if i == 0 {
            started_ns = monotonic_now_ns();
        }
        let took = send(i)?;
        if i >= 0 {
            send_ns.push(took.as_nanos() as u64);
        }
        if opts.variant == BusVariant::SendReceive {
            received.wait_for(((i + WARMUP + 1) as usize * n) as u64);
        }
    }
    Ok((send_ns, started_ns))
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
    let mut subscribers = if opts.processes {
        let role = SubscriberRole::Bus(group.as_str().to_string());
        Subscribers::Processes(SubscriberProcesses::spawn(opts, &role, n)?)
    } else {
        let mut handles = Vec::new();
        for k in 0..n {
            let bus = Bus::connect(&config(opts, &format!("subscriber-{k}"), group))?;
            let sub = bus.subscribe(&Pattern::new(PATTERN)?)?;
            let received = received.clone();
            let count = opts.count;
            handles.push(std::thread::spawn(move || {
                let _bus = bus;
                receive_bus(&sub, count, || {
                    received.arrived();
                })
            }));
        }
        Subscribers::Threads(handles)
    };
    subscribers.go()?;
    let (send_ns, started_ns) = publish_all(opts, n, &received, |i| {
        let m = template.clone().with("i", i);
        let t0 = Instant::now();
        publisher.publish(&subject, &m, opts.level)?;
        Ok(t0.elapsed())
    })?;
    let reports = subscribers.reports()?;
    if opts.variant == BusVariant::Send {
        let mut send = Recorder::new();
        send_ns.iter().for_each(|&ns| send.record(ns));
        r.set_latency_ns(&send);
        r.samples_us = send_ns.iter().map(|&ns| ns as f64 / 1e3).collect();
        r.received = opts.count as u64;
        r.elapsed_s = monotonic_now_ns().saturating_sub(started_ns) as f64 / 1e9;
        r.rate_per_s = r.received as f64 / r.elapsed_s;
        r.mbit_per_s = r.rate_per_s * r.size_bytes as f64 * 8.0 / 1e6;
    } else {
        fill(
            &mut r,
            &reports,
            publisher.stats().order_violations,
            started_ns,
        );
    }
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
    let mut subscribers = if opts.processes {
        let role = SubscriberRole::Raw(nats_subject.to_string());
        Subscribers::Processes(SubscriberProcesses::spawn(opts, &role, n)?)
    } else {
        let mut handles = Vec::new();
        for _ in 0..n {
            let client = rt.block_on(async_nats::connect(&opts.nats_url))?;
            let mut sub = rt.block_on(client.subscribe(nats_subject.to_string()))?;
            // Effective at the server before the publisher's first message (a flush
            // only empties the socket buffer, and the first message would be lost).
            rt.block_on(crate::harness::settle(&client))?;
            let received = received.clone();
            let count = opts.count;
            let handle = rt.handle().clone();
            handles.push(std::thread::spawn(move || {
                let report = receive_raw(&handle, &mut sub, count, || {
                    received.arrived();
                });
                drop(client);
                report
            }));
        }
        Subscribers::Threads(handles)
    };
    subscribers.go()?;
    let (send_ns, started_ns) = publish_all(opts, n, &received, |i| {
        let m = template.clone().with("i", i);
        // Encoded before the stamp, as the bus encodes before it stamps its frame.
        let mut xml = Vec::with_capacity(size);
        m.encode(Encoding::Xml, &mut xml)?;
        let mut bytes = Vec::with_capacity(xml.len() + 8);
        bytes.extend_from_slice(&monotonic_now_ns().to_le_bytes());
        bytes.extend_from_slice(&xml);
        let t0 = Instant::now();
        rt.block_on(publisher.publish(nats_subject.to_string(), Bytes::from(bytes)))?;
        Ok(t0.elapsed())
    })?;
    rt.block_on(publisher.flush())?;
    let reports = subscribers.reports()?;
    let mut r = result(opts, size, n);
    if opts.variant == BusVariant::Send {
        let mut send = Recorder::new();
        send_ns.iter().for_each(|&ns| send.record(ns));
        r.set_latency_ns(&send);
        r.received = opts.count as u64;
        r.rate_per_s =
            r.received as f64 / (monotonic_now_ns().saturating_sub(started_ns) as f64 / 1e9);
    } else {
        fill(&mut r, &reports, 0, started_ns);
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::harness::NoProgress;

    /// The warm-up is skipped, and every position that differs from 0, 1, 2, ... is
    /// one violation; arrival times bound the rate.
    #[test]
    fn a_report_counts_positions_out_of_order() {
        let mut report = SubscriberReport::default();
        for (i, now) in [(-2, 1), (-1, 2), (0, 10), (2, 11), (1, 12), (3, 13)] {
            report.arrive(i, now, 5);
        }
        assert_eq!(report.received, 4);
        assert_eq!(report.order_violations, 2);
        assert_eq!(report.latencies_ns, vec![5, 6, 7, 8]);
        assert_eq!(
            (report.first_arrival_ns, report.last_arrival_ns),
            (Some(10), Some(13))
        );
        let opts = BusBenchOptions {
            variant: BusVariant::Throughput,
            transport: TransportKind::Nats,
            nats_url: String::new(),
            sizes: vec![],
            subscribers: vec![],
            count: 5,
            level: ServiceLevel::Agreed,
            encoding: Encoding::Xml,
            raw: false,
            processes: true,
        };
        let mut r = result(&opts, 1000, 2);
        fill(&mut r, &[report.clone(), report], 1, 3);
        assert_eq!((r.received, r.lost, r.order_violations), (8, 2, Some(5)));
        assert_eq!(r.subscribers_in.as_deref(), Some("processes"));
        // 8 messages from 3 ns to 13 ns.
        assert!((r.rate_per_s - 8.0 / 10e-9).abs() < 1.0, "{}", r.rate_per_s);
    }

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
                processes: false,
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

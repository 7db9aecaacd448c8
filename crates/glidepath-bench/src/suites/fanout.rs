//! `fanout`: the formation-flying testbed's three measurements (FFTB paper, IV.A and
//! V.B–V.D), one publisher and a number of subscriber federates, all in this process
//! so every clock is the same one ([`now_ns`]).
//!
//! - `send-only`: the time one `update_attribute_values` call takes with nobody
//!   subscribed (the paper's "Send": client to daemon only). Rate = calls per second.
//! - `send-receive`: by subscriber count (default 1–9) and size. The publisher stamps
//!   sequence number and send time into the update's tag, every subscriber records
//!   its receive time minus the stamp, and the publisher sends the next update once
//!   every subscriber has acknowledged the last (through an in-process channel read
//!   with the same wait strategy), so each sample is a latency, not a queue.
//! - `throughput`: by size and subscriber count (default 1, 5, 10, 20, 30, 50), the
//!   publisher sends `count` updates as fast as it can; rate = deliveries (updates ×
//!   subscribers) per second from the first send to the last delivery, Mbit/s = payload
//!   delivered to all subscribers per second, as the paper computes it. Latency
//!   columns are the deliveries' send-to-receive times, queueing included.
//!
//! In the `send-receive` and `throughput` rows `count` is deliveries expected
//! (updates × subscribers) and `received` deliveries made, so `count = received +
//! lost` holds per row. Updates use `BenchObject.payload`, reliable and
//! receive-ordered; the payload is exactly `size` bytes, the 16-byte stamp rides in
//! the tag.
//!
//! The raw peer (`--raw`) repeats each row without glidepath: for `inproc` a bounded
//! crossbeam channel per subscriber thread (the publisher sends to each), for `nats`
//! one async-nats client per subscriber on one subject, stamp in front of the payload.

use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use bytes::Bytes;
use futures::StreamExt;
use glidepath::{AttributeHandle, Callback, ObjectInstanceHandle};

use crate::harness::{
    mbit_per_s, now_ns, payload, rate, read_stamp, recv_with, settle, stamp, Bench, BenchOptions,
    Member, Progress, RawNats, SeqTracker, TransportChoice, RECEIVE_TIMEOUT,
};
use crate::result::BenchResult;
use glidepath::stats::Recorder;

/// Sizes of the send-receive and throughput sweeps: the FFTB range (100 B up),
/// bounded at 10 KB so a default run takes seconds, not minutes.
pub const DEFAULT_SIZES: &[usize] = &[100, 1000, 10_000];
/// Send-only sizes reach further (one call each, nothing delivered).
pub const SEND_ONLY_SIZES: &[usize] = &[100, 1000, 10_000, 100_000];
/// The paper's send-receive subscriber counts.
pub const SEND_RECEIVE_SUBSCRIBERS: &[usize] = &[1, 2, 3, 4, 5, 6, 7, 8, 9];
/// The paper's throughput subscriber counts (loopback scenario).
pub const THROUGHPUT_SUBSCRIBERS: &[usize] = &[1, 5, 10, 20, 30, 50];
/// Updates per configuration: the paper's send-receive used 10^3; its throughput
/// 10^4, which times 50 subscribers and three sizes is too long for a default run.
pub const DEFAULT_COUNT: u64 = 1000;
/// How long subscribers keep waiting after the publisher is done before the rest
/// counts as lost.
const LINGER: Duration = Duration::from_secs(2);

/// Runs the three variants; one result per (variant, size, subscriber count).
pub fn run(
    bench: &Bench,
    opts: &BenchOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BenchResult>> {
    if let Some(federation) = &opts.member_of {
        return processes::serve_subscriber(bench, federation, opts).map(|()| Vec::new());
    }
    let count = opts.count_or(DEFAULT_COUNT);
    crate::harness::no_raw_shm(opts, "fanout")?;
    let raw = match (opts.raw, opts.transport) {
        (true, TransportChoice::Nats) => Some(RawNats::new(&opts.nats_url, &opts.nats_security)?),
        _ => None,
    };
    let raw = Raw {
        nats: raw.as_ref(),
        enabled: opts.raw,
    };
    let mut results = Vec::new();
    send_only(bench, opts, progress, count, &raw, &mut results)?;
    for subscribers in opts.subscribers_or(SEND_RECEIVE_SUBSCRIBERS) {
        delivered(
            bench,
            opts,
            progress,
            count,
            subscribers,
            Variant::SendReceive,
            &raw,
            &mut results,
        )?;
    }
    for subscribers in opts.subscribers_or(THROUGHPUT_SUBSCRIBERS) {
        delivered(
            bench,
            opts,
            progress,
            count,
            subscribers,
            Variant::Throughput,
            &raw,
            &mut results,
        )?;
    }
    Ok(results)
}

/// Which raw peer to run, if any.
struct Raw<'a> {
    nats: Option<&'a RawNats>,
    enabled: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Variant {
    SendReceive,
    Throughput,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::SendReceive => "send-receive",
            Variant::Throughput => "throughput",
        }
    }
}

/// What receivers collected, merged over subscribers.
#[derive(Default)]
struct Collected {
    latency_ns: Recorder,
    samples_us: Vec<f64>,
    received: u64,
    duplicated: u64,
    /// When the last delivery happened.
    last_at: Option<Instant>,
}

impl Collected {
    fn merge(&mut self, other: Collected) {
        self.latency_ns.merge(&other.latency_ns);
        self.samples_us.extend(other.samples_us);
        self.received += other.received;
        self.duplicated += other.duplicated;
        self.last_at = match (self.last_at, other.last_at) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// Records one delivery stamped `(seq, sent_ns)`, received at `now`.
    fn delivery(&mut self, tracker: &mut SeqTracker, seq: u64, sent_ns: u64, now: u64) {
        if tracker.record(seq) {
            let ns = now.saturating_sub(sent_ns);
            self.latency_ns.record(ns);
            self.samples_us.push(ns as f64 / 1000.0);
            self.received += 1;
            self.last_at = Some(Instant::now());
        }
    }

    fn finish(&mut self, tracker: &SeqTracker) {
        self.duplicated += tracker.duplicated;
    }
}

fn fill(r: &mut BenchResult, c: &Collected, expected: u64, size: usize, elapsed_s: f64) {
    r.count = expected;
    r.received = c.received;
    r.lost = expected.saturating_sub(c.received);
    r.duplicated = c.duplicated;
    r.set_latency_ns(&c.latency_ns);
    r.elapsed_s = elapsed_s;
    r.rate_per_s = rate(c.received, elapsed_s);
    r.mbit_per_s = mbit_per_s(c.received, size, elapsed_s);
    r.samples_us = c.samples_us.clone();
}

fn set_raw(r: &mut BenchResult, c: &Collected, elapsed_s: f64) {
    let (p50, p99) = c
        .latency_ns
        .summary()
        .map_or((0.0, 0.0), |s| (s.p50 / 1000.0, s.p99 / 1000.0));
    r.set_raw(p50, p99, rate(c.received, elapsed_s));
}

/// Send-only: the publish call's duration, nobody subscribed.
fn send_only(
    bench: &Bench,
    opts: &BenchOptions,
    progress: &dyn Progress,
    count: u64,
    raw: &Raw,
    results: &mut Vec<BenchResult>,
) -> anyhow::Result<()> {
    let federation = bench.new_federation("fanout-send-only")?;
    let publisher = bench.join(&federation, "publisher")?;
    let (instance, attribute) = publish(&publisher)?;
    for size in opts.sizes_or(SEND_ONLY_SIZES) {
        progress.stage(&format!("fanout send-only {size} B"));
        let body = payload(size);
        let mut c = Collected::default();
        let started = Instant::now();
        for i in 0..count {
            let t0 = Instant::now();
            publisher.update_attribute_values(
                instance,
                [(attribute, body.clone())],
                stamp(i, now_ns()),
            )?;
            let ns = t0.elapsed().as_nanos() as u64;
            c.latency_ns.record(ns);
            c.samples_us.push(ns as f64 / 1000.0);
            c.received += 1;
            if i.is_multiple_of(256) {
                progress.set(i, count);
            }
        }
        let elapsed_s = started.elapsed().as_secs_f64();
        let mut r = opts.result("fanout", "send-only");
        r.size_bytes = size as u64;
        r.federates = 1;
        r.subscribers = 0;
        fill(&mut r, &c, count, size, elapsed_s);
        if raw.enabled {
            progress.stage(&format!("fanout send-only {size} B (raw peer)"));
            let (rc, secs) = match raw.nats {
                Some(nats) => raw_nats_send_only(nats, size, count)?,
                None => raw_channel_send_only(size, count),
            };
            set_raw(&mut r, &rc, secs);
        }
        results.push(r);
    }
    bench.finish(&federation, vec![publisher])
}

/// Declares the publisher's side and registers the instance it updates.
fn publish(publisher: &Member) -> anyhow::Result<(ObjectInstanceHandle, AttributeHandle)> {
    let class = publisher.object_class_handle("BenchObject")?;
    let attribute = publisher.attribute_handle(class, "payload")?;
    publisher.publish_object_class_attributes(class, &[attribute])?;
    let instance = publisher.register_object_instance(class)?;
    Ok((instance, attribute))
}

/// Send-receive or throughput with `subscribers` subscriber federates, every size.
#[allow(clippy::too_many_arguments)]
fn delivered(
    bench: &Bench,
    opts: &BenchOptions,
    progress: &dyn Progress,
    count: u64,
    subscribers: usize,
    variant: Variant,
    raw: &Raw,
    results: &mut Vec<BenchResult>,
) -> anyhow::Result<()> {
    let federation = bench.new_federation(&format!("fanout-{}-{subscribers}", variant.name()))?;
    let publisher = bench.join(&federation, "publisher")?;
    // `--processes`: the subscribers are processes of their own, subscribed before the
    // publisher registers its instance.
    let mut children = if opts.processes {
        processes::spawn_subscribers(bench, opts, &federation, subscribers, variant, count)?
    } else {
        Vec::new()
    };
    let mut subs = Vec::with_capacity(subscribers);
    for k in 0..if opts.processes { 0 } else { subscribers } {
        let s = bench.join(&federation, &format!("subscriber-{k}"))?;
        let class = s.object_class_handle("BenchObject")?;
        let attribute = s.attribute_handle(class, "payload")?;
        s.subscribe_object_class_attributes(class, &[attribute])?;
        subs.push(s);
    }
    let (instance, attribute) = publish(&publisher)?;
    // Sequence numbers run on across sizes so stragglers are never counted twice.
    let mut base = 0u64;
    for size in opts.sizes_or(DEFAULT_SIZES) {
        progress.stage(&format!(
            "fanout {} {size} B x{subscribers}",
            variant.name()
        ));
        let (c, elapsed_s) = if opts.processes {
            processes::round(
                &publisher,
                &mut children,
                instance,
                attribute,
                size,
                count,
                base,
                variant,
                progress,
            )?
        } else {
            glidepath_round(
                &publisher, &subs, instance, attribute, opts, size, count, base, variant, progress,
            )?
        };
        base += count;
        let mut r = if opts.processes {
            // The raw peer still runs as threads of this process.
            opts.result(
                "fanout",
                &format!("{}, subscribers as processes", variant.name()),
            )
        } else {
            opts.result("fanout", variant.name())
        };
        r.size_bytes = size as u64;
        r.federates = 1 + subscribers as u64;
        r.subscribers = subscribers as u64;
        fill(&mut r, &c, count * subscribers as u64, size, elapsed_s);
        if raw.enabled {
            progress.stage(&format!(
                "fanout {} {size} B x{subscribers} (raw peer)",
                variant.name()
            ));
            let (rc, secs) = match raw.nats {
                Some(nats) => raw_nats_round(nats, opts, size, count, subscribers, variant)?,
                None => raw_channel_round(opts, size, count, subscribers, variant),
            };
            let expected = count * subscribers as u64;
            if rc.received < expected {
                bail!(
                    "fanout {} {size} B x{subscribers}: the raw peer delivered only {} of {expected}",
                    variant.name(),
                    rc.received
                );
            }
            set_raw(&mut r, &rc, secs);
        }
        results.push(r);
    }
    // The subscriber processes resign before the federation can be destroyed.
    for child in children {
        child.finish()?;
    }
    let mut members = vec![publisher];
    members.extend(subs);
    bench.finish(&federation, members)
}

mod processes;

/// One size of send-receive or throughput through glidepath.
#[allow(clippy::too_many_arguments)]
fn glidepath_round(
    publisher: &Member,
    subs: &[Member],
    instance: ObjectInstanceHandle,
    attribute: AttributeHandle,
    opts: &BenchOptions,
    size: usize,
    count: u64,
    base: u64,
    variant: Variant,
    progress: &dyn Progress,
) -> anyhow::Result<(Collected, f64)> {
    let body = payload(size);
    let done = AtomicBool::new(false);
    let (ack_tx, ack_rx) = crossbeam_channel::unbounded::<()>();
    thread::scope(|s| {
        let receivers: Vec<_> = subs
            .iter()
            .map(|sub| {
                let (done, ack_tx) = (&done, ack_tx.clone());
                s.spawn(move || {
                    let gave_up = |idle: Duration| done.load(Ordering::Acquire) && idle >= LINGER;
                    let mut ack = || {
                        if variant == Variant::SendReceive {
                            let _ = ack_tx.send(());
                        }
                        Ok(())
                    };
                    collect(sub, count, base, &gave_up, &mut ack)
                })
            })
            .collect();
        drop(ack_tx);
        let started = Instant::now();
        let mut acked =
            || (0..subs.len()).all(|_| recv_with(&ack_rx, opts.wait, RECEIVE_TIMEOUT).is_some());
        let sending = publish_all(
            publisher, instance, attribute, &body, count, base, variant, progress, &mut acked,
        );
        done.store(true, Ordering::Release);
        let mut all = Collected::default();
        for r in receivers {
            all.merge(
                r.join()
                    .map_err(|_| anyhow!("a subscriber thread panicked"))??,
            );
        }
        sending?;
        let elapsed_s = all
            .last_at
            .map_or(0.0, |t| t.saturating_duration_since(started).as_secs_f64());
        progress.set(count, count);
        Ok((all, elapsed_s))
    })
}

/// The publisher's side of one size: `count` updates numbered from `base`, each
/// stamped with its send time; in send-receive each waits until `acked` says every
/// subscriber has it (false: one missed it, and the rest counts as lost). Flushes at
/// the end, so a bundle still being gathered is part of the measured time.
#[allow(clippy::too_many_arguments)]
fn publish_all(
    publisher: &Member,
    instance: ObjectInstanceHandle,
    attribute: AttributeHandle,
    body: &Bytes,
    count: u64,
    base: u64,
    variant: Variant,
    progress: &dyn Progress,
    acked: &mut dyn FnMut() -> bool,
) -> anyhow::Result<()> {
    for i in 0..count {
        publisher
            .update_attribute_values(
                instance,
                [(attribute, body.clone())],
                stamp(base + i, now_ns()),
            )
            .context("publisher: updating")?;
        if variant == Variant::SendReceive && !acked() {
            break;
        }
        if i.is_multiple_of(256) {
            progress.set(i, count);
        }
    }
    publisher.flush().context("publisher: flushing")
}

/// One subscriber's deliveries of one size: `count` updates numbered from `base`,
/// until all came or `gave_up` says so after a time without any; `ack` after each.
fn collect(
    sub: &Member,
    count: u64,
    base: u64,
    gave_up: &dyn Fn(Duration) -> bool,
    ack: &mut dyn FnMut() -> anyhow::Result<()>,
) -> anyhow::Result<Collected> {
    let mut tracker = SeqTracker::new(count);
    let mut c = Collected::default();
    let mut idle_since: Option<Instant> = None;
    while c.received < count {
        let Some(cb) = sub.next_callback(Duration::from_millis(50)) else {
            if gave_up(idle_since.get_or_insert_with(Instant::now).elapsed()) {
                break;
            }
            continue;
        };
        idle_since = None;
        if let Callback::ReflectAttributeValues { tag, .. } = cb {
            let now = now_ns();
            if let Some((seq, sent)) = read_stamp(&tag) {
                match seq.checked_sub(base) {
                    Some(i) if i < count => c.delivery(&mut tracker, i, sent, now),
                    _ => tracker.duplicated += 1,
                }
            }
            ack()?;
        }
    }
    c.finish(&tracker);
    Ok(c)
}

/// The raw peer of `inproc` send-only: handing a message to a queue nobody reads
/// yet (the payload is shared, so the queue holds references, not copies).
fn raw_channel_send_only(size: usize, count: u64) -> (Collected, f64) {
    let body = payload(size);
    let (tx, rx) = crossbeam_channel::unbounded::<(Bytes, Bytes)>();
    let mut c = Collected::default();
    let started = Instant::now();
    for i in 0..count {
        let t0 = Instant::now();
        let _ = tx.send((stamp(i, now_ns()), body.clone()));
        let ns = t0.elapsed().as_nanos() as u64;
        c.latency_ns.record(ns);
        c.received += 1;
    }
    let secs = started.elapsed().as_secs_f64();
    drop(rx);
    (c, secs)
}

/// The raw peer of `nats` send-only: the async-nats publish call with nobody subscribed.
fn raw_nats_send_only(raw: &RawNats, size: usize, count: u64) -> anyhow::Result<(Collected, f64)> {
    let body = payload(size);
    let subject = format!("glidepath-bench.raw.{}.send-only", std::process::id());
    raw.block_on(async {
        let client = raw.connect().await?;
        let mut c = Collected::default();
        let started = Instant::now();
        for i in 0..count {
            let message = stamped(i, &body);
            let t0 = Instant::now();
            client.publish(subject.clone(), message).await?;
            let ns = t0.elapsed().as_nanos() as u64;
            c.latency_ns.record(ns);
            c.received += 1;
        }
        let secs = started.elapsed().as_secs_f64();
        client.flush().await?;
        Ok((c, secs))
    })
}

/// A raw message: the stamp, then the payload.
fn stamped(seq: u64, body: &Bytes) -> Bytes {
    let mut m = Vec::with_capacity(16 + body.len());
    m.extend_from_slice(&stamp(seq, now_ns()));
    m.extend_from_slice(body);
    m.into()
}

/// The raw peer of `inproc` send-receive and throughput: one bounded channel per
/// subscriber thread; acknowledgements (send-receive) through one more channel.
fn raw_channel_round(
    opts: &BenchOptions,
    size: usize,
    count: u64,
    subscribers: usize,
    variant: Variant,
) -> (Collected, f64) {
    let body = payload(size);
    let wait = opts.wait;
    let (ack_tx, ack_rx) = crossbeam_channel::unbounded::<()>();
    let channels: Vec<_> = (0..subscribers)
        .map(|_| crossbeam_channel::bounded::<(Bytes, Bytes)>(1024))
        .collect();
    thread::scope(|s| {
        let receivers: Vec<_> = channels
            .iter()
            .map(|(_, rx)| {
                let ack_tx = ack_tx.clone();
                s.spawn(move || {
                    let mut tracker = SeqTracker::new(count);
                    let mut c = Collected::default();
                    while c.received < count {
                        let Some((st, _body)) = recv_with(rx, wait, RECEIVE_TIMEOUT) else {
                            break;
                        };
                        let now = now_ns();
                        if let Some((seq, sent)) = read_stamp(&st) {
                            c.delivery(&mut tracker, seq, sent, now);
                        }
                        if variant == Variant::SendReceive {
                            let _ = ack_tx.send(());
                        }
                    }
                    c.finish(&tracker);
                    c
                })
            })
            .collect();
        drop(ack_tx);
        let started = Instant::now();
        'send: for i in 0..count {
            let st = stamp(i, now_ns());
            for (tx, _) in &channels {
                if tx.send((st.clone(), body.clone())).is_err() {
                    break 'send;
                }
            }
            if variant == Variant::SendReceive {
                for _ in 0..subscribers {
                    if recv_with(&ack_rx, wait, RECEIVE_TIMEOUT).is_none() {
                        break 'send;
                    }
                }
            }
        }
        let mut all = Collected::default();
        for r in receivers {
            if let Ok(c) = r.join() {
                all.merge(c);
            }
        }
        let secs = all
            .last_at
            .map_or(0.0, |t| t.saturating_duration_since(started).as_secs_f64());
        (all, secs)
    })
}

/// The raw peer of `nats` send-receive and throughput: one async-nats client per
/// subscriber on one subject of the same server, one publishing client.
fn raw_nats_round(
    raw: &RawNats,
    opts: &BenchOptions,
    size: usize,
    count: u64,
    subscribers: usize,
    variant: Variant,
) -> anyhow::Result<(Collected, f64)> {
    let _ = opts;
    let body = payload(size);
    static ROUND: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let subject = format!(
        "glidepath-bench.raw.{}.fanout.{}",
        std::process::id(),
        ROUND.fetch_add(1, Ordering::Relaxed)
    );
    raw.block_on(async {
        let publisher = raw.connect().await?;
        let (ack_tx, mut ack_rx) = tokio::sync::mpsc::unbounded_channel::<()>();
        let mut tasks = Vec::with_capacity(subscribers);
        for _ in 0..subscribers {
            let client = raw.connect().await?;
            let mut sub = client.subscribe(subject.clone()).await?;
            settle(&client).await?;
            let ack_tx = ack_tx.clone();
            tasks.push(tokio::spawn(async move {
                let _client = client;
                let mut tracker = SeqTracker::new(count);
                let mut c = Collected::default();
                while c.received < count {
                    let Ok(Some(m)) = tokio::time::timeout(RECEIVE_TIMEOUT, sub.next()).await
                    else {
                        break;
                    };
                    let now = now_ns();
                    if let Some((seq, sent)) = read_stamp(&m.payload) {
                        c.delivery(&mut tracker, seq, sent, now);
                    }
                    if variant == Variant::SendReceive {
                        let _ = ack_tx.send(());
                    }
                }
                c.finish(&tracker);
                c
            }));
        }
        drop(ack_tx);
        // Every subscription is effective (settled above); the publisher's connection too.
        settle(&publisher).await?;
        let started = Instant::now();
        'send: for i in 0..count {
            publisher
                .publish(subject.clone(), stamped(i, &body))
                .await?;
            if variant == Variant::SendReceive {
                for _ in 0..subscribers {
                    match tokio::time::timeout(RECEIVE_TIMEOUT, ack_rx.recv()).await {
                        Ok(Some(())) => {}
                        _ => break 'send,
                    }
                }
            }
        }
        publisher.flush().await?;
        let mut all = Collected::default();
        for t in tasks {
            all.merge(
                t.await
                    .map_err(|e| anyhow!("a raw subscriber task failed: {e}"))?,
            );
        }
        let secs = all
            .last_at
            .map_or(0.0, |t| t.saturating_duration_since(started).as_secs_f64());
        Ok((all, secs))
    })
}

//! `throughput`: how many updates per second get through, thesis sections 5.3.2
//! (sender throughput, DMSO BmThroughput: one sender, N receivers) and 5.3.3
//! (receiver throughput: N senders each sending K/N updates to one receiver).
//!
//! Both variants send reliable, receive-order updates of `BenchObject.payload` (the
//! thesis sends attribute updates) as fast as the sender can call the service, then
//! flush, so a bundle still being gathered is part of the measured time. Receivers
//! count what arrives; a receiver that hears nothing for [`RECEIVE_TIMEOUT`] stops
//! and reports the rest as lost (`lost = sent − received`), so a dead peer costs at
//! most that long and never hangs the run.
//!
//! - `sender` (5.3.2): the clock starts when the sender starts sending and stops, per
//!   receiver, at its last receipt. `rate_per_s` is the mean over receivers of
//!   received / elapsed (what each receiver got per second), `total_rate_per_s` their
//!   sum; `mbit_per_s` is payload megabits per second per receiver, like the ATM
//!   TestBed report's Table 4.7 (total bits over duration).
//! - `receiver` (5.3.3): the receiver's clock runs from its first receipt to its
//!   K-th, exactly as the thesis defines it; all senders start together.
//!
//! The latency columns are the one-way delay under this load, sampled every
//! [`SAMPLE_EVERY`]th message from the publication time the transport stamps on every
//! envelope (raw peers carry the same stamp): under saturation this is mostly queueing.
//!
//! The raw peer (`--raw`) runs the same pattern without glidepath: for `inproc`,
//! bounded crossbeam channels between threads, received with the same wait strategy;
//! for `nats`, async-nats publishers and subscribers on the same server with the same
//! client settings (each message carries a 16-byte stamp instead of glidepath's
//! envelope header, and is published on its own: the raw peer has no bundling). This
//! suite supersedes the throughput half of `crates/glidepath/examples/nats_vs_raw.rs`.

use std::sync::Barrier;
use std::thread;
use std::time::Instant;

use anyhow::{anyhow, Context};
use bytes::{BufMut, Bytes, BytesMut};
use futures::StreamExt;
use glidepath::{AttributeHandle, Callback, ObjectInstanceHandle};

use crate::harness::{
    self, Bench, BenchOptions, Member, MemberProcess, Progress, RawNats, TransportChoice,
    RECEIVE_TIMEOUT,
};
use crate::result::BenchResult;
use glidepath::stats::Recorder;

/// Sizes swept when none is given: small messages, where per-message cost dominates
/// (the 100 B target), up to 64 KiB, where bandwidth does (thesis Figs. 17–19).
const DEFAULT_SIZES: &[usize] = &[32, 100, 1024, 8192, 65536];

/// Updates per receiver when no `--count` is given: enough that a run at millions per
/// second lasts tens of milliseconds, well above the clock's and the threads' start-up.
const DEFAULT_COUNT: u64 = 200_000;

/// With the default count, no configuration moves more payload than this per
/// receiver, so the 64 KiB row does not take minutes or gigabytes of backlog.
const DEFAULT_PAYLOAD_BUDGET_BYTES: u64 = 256 << 20;

/// One in this many received messages has its one-way delay read: reading the clock
/// costs tens of nanoseconds, a tenth of a message's budget at millions per second.
pub(crate) const SAMPLE_EVERY: u64 = 64;

/// Capacity of the raw inproc peer's channels: large enough that sender and receiver
/// rarely wait on each other (so the raw figure is the channel's, not a wake-up's),
/// small enough that the backlog stays in cache. The same as `nats_vs_raw`.
const RAW_CHANNEL_CAPACITY: usize = 1024;

/// Runs both variants for every size and every N of `--subscribers` (default 1:
/// the 1→1 figures of thesis section 6.2).
pub fn run(
    bench: &Bench,
    opts: &BenchOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BenchResult>> {
    if let Some(federation) = &opts.member_of {
        return serve_receiver(bench, federation, opts).map(|()| Vec::new());
    }
    let sizes = opts.sizes_or(DEFAULT_SIZES);
    let peers = opts.peers("throughput", "receiver (and one sender)")?;
    let raw_nats = match (opts.raw, opts.transport) {
        (true, TransportChoice::Nats) => Some(RawNats::new(&opts.nats_url, &opts.nats_security)?),
        _ => None,
    };
    let mut results = Vec::new();
    for &size in &sizes {
        let count = count_for(opts, size);
        for &n in &peers {
            for variant in [Variant::Sender, Variant::Receiver] {
                let label = format!(
                    "throughput {} {size} B {}",
                    variant.name(),
                    variant.shape(n)
                );
                progress.stage(&label);
                let measured = glidepath_run(bench, opts, variant, size, count, n, progress)
                    .with_context(|| label.clone())?;
                let raw = if opts.raw {
                    progress.stage(&format!("{label} (raw peer)"));
                    Some(
                        match &raw_nats {
                            Some(raw) => raw_nats_run(raw, variant, size, count, n, progress),
                            None if opts.transport == TransportChoice::Shm => {
                                raw_shm_run(opts.wait, variant, size, count, n, progress)
                            }
                            None => raw_channel_run(opts.wait, variant, size, count, n, progress),
                        }
                        .with_context(|| format!("{label} (raw peer)"))?,
                    )
                } else {
                    None
                };
                let mut r = row(opts, variant, size, n, &measured, raw.as_ref());
                if opts.processes {
                    // The raw peer still runs as threads of this process.
                    r.variant = format!("{}, receivers as processes", r.variant);
                }
                results.push(r);
            }
        }
    }
    Ok(results)
}

/// The count for one size: `--count` as given, or the default within the payload budget.
fn count_for(opts: &BenchOptions, size: usize) -> u64 {
    if opts.count > 0 {
        return opts.count;
    }
    let budget = DEFAULT_PAYLOAD_BUDGET_BYTES / (size.max(1) as u64);
    DEFAULT_COUNT.min(budget.max(1000))
}

/// Which side has many federates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    /// One sender, N receivers (5.3.2).
    Sender,
    /// N senders, one receiver (5.3.3).
    Receiver,
}

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Sender => "sender",
            Variant::Receiver => "receiver",
        }
    }

    fn shape(self, n: usize) -> String {
        match self {
            Variant::Sender => format!("1→{n}"),
            Variant::Receiver => format!("{n}→1"),
        }
    }

    /// Updates each sender sends: all of them for `sender`, K/N for `receiver` (the
    /// first K mod N senders send one more, so the total is exactly K).
    fn shares(self, count: u64, n: usize) -> Vec<u64> {
        match self {
            Variant::Sender => vec![count],
            Variant::Receiver => {
                let n = n as u64;
                (0..n)
                    .map(|i| count / n + u64::from(i < count % n))
                    .collect()
            }
        }
    }

    /// How many receivers there are.
    fn receivers(self, n: usize) -> usize {
        match self {
            Variant::Sender => n,
            Variant::Receiver => 1,
        }
    }
}

/// What a receiver process says at the end.
const RECEIPT_LINE: &str = "RECEIPT RECEIVED DUPLICATED FIRST LAST LATENCIES";

/// What one receiver saw.
#[derive(Debug, Default)]
pub(crate) struct Receipt {
    pub received: u64,
    /// Messages the receiver saw more than once (and dropped).
    pub duplicated: u64,
    pub first: Option<Instant>,
    pub last: Option<Instant>,
    /// One-way delays in nanoseconds, one every [`SAMPLE_EVERY`] messages.
    pub latency_ns: Vec<u64>,
}

impl Receipt {
    /// The line a receiver process says for its receipt ([`RECEIPT_LINE`]), the
    /// instants in [`harness::now_ns`] (0 when none), which is comparable across the
    /// processes of one host.
    fn line(&self) -> String {
        let ns = |at: Option<Instant>| at.map_or(0, harness::ns_of_instant);
        format!(
            "RECEIPT {} {} {} {} {}",
            self.received,
            self.duplicated,
            ns(self.first),
            ns(self.last),
            harness::list(self.latency_ns.iter().copied())
        )
    }

    /// Reads a receiver process's `RECEIPT` line.
    fn parse(line: &str) -> anyhow::Result<Receipt> {
        let said = harness::Said::parse(line, "a receiver process", RECEIPT_LINE)?;
        let at = |i| {
            said.number(i)
                .map(|ns| (ns != 0).then(|| harness::instant_of_ns(ns)))
        };
        Ok(Receipt {
            received: said.number(1)?,
            duplicated: said.number(2)?,
            first: at(3)?,
            last: at(4)?,
            latency_ns: said.numbers(5)?,
        })
    }

    /// Counts one message sent at `sent_ns`; reads the clock for every
    /// [`SAMPLE_EVERY`]th and the last. Returns whether it read the clock (a good
    /// moment to report progress).
    fn count(&mut self, sent_ns: Option<u64>, expected: u64) -> bool {
        self.received += 1;
        if self.first.is_none() {
            self.first = Some(Instant::now());
        }
        let sampled = self.received.is_multiple_of(SAMPLE_EVERY) || self.received == expected;
        if sampled {
            if let Some(sent) = sent_ns {
                self.latency_ns.push(harness::now_ns().saturating_sub(sent));
            }
            self.last = Some(Instant::now());
        }
        sampled
    }
}

/// The figures of one run (glidepath's or the raw peer's).
#[derive(Debug)]
struct Measured {
    /// Messages every receiver together should have received.
    expected: u64,
    received: u64,
    duplicated: u64,
    /// Mean over receivers of messages per second.
    rate_per_receiver: f64,
    /// Sum over receivers of messages per second.
    total_rate: f64,
    elapsed_s: f64,
    latency_ns: Vec<u64>,
}

/// Turns receipts into figures. `start` is when sending started (`sender`); `None`
/// measures each receiver from its own first receipt (`receiver`, thesis 5.3.3).
fn measure(receipts: Vec<Receipt>, expected_each: u64, start: Option<Instant>) -> Measured {
    let mut m = Measured {
        expected: expected_each * receipts.len() as u64,
        received: 0,
        duplicated: 0,
        rate_per_receiver: 0.0,
        total_rate: 0.0,
        elapsed_s: 0.0,
        latency_ns: Vec::new(),
    };
    let receivers = receipts.len().max(1) as f64;
    for r in receipts {
        let seconds = match (start.or(r.first), r.last) {
            (Some(from), Some(to)) => to.saturating_duration_since(from).as_secs_f64(),
            _ => 0.0,
        };
        let rate = harness::rate(r.received, seconds);
        m.received += r.received;
        m.duplicated += r.duplicated;
        m.total_rate += rate;
        m.rate_per_receiver += rate / receivers;
        m.elapsed_s = m.elapsed_s.max(seconds);
        m.latency_ns.extend(r.latency_ns);
    }
    m
}

fn row(
    opts: &BenchOptions,
    variant: Variant,
    size: usize,
    n: usize,
    m: &Measured,
    raw: Option<&Measured>,
) -> BenchResult {
    let mut r = opts.result("throughput", variant.name());
    r.size_bytes = size as u64;
    r.federates = n as u64 + 1;
    r.subscribers = variant.receivers(n) as u64;
    r.count = m.expected;
    r.received = m.received.min(m.expected);
    r.lost = m.expected.saturating_sub(m.received);
    r.duplicated = m.duplicated;
    r.rate_per_s = m.rate_per_receiver;
    r.total_rate_per_s = Some(m.total_rate);
    r.mbit_per_s = m.rate_per_receiver * size as f64 * 8.0 / 1e6;
    r.elapsed_s = m.elapsed_s;
    let (recorder, samples) = latencies(&m.latency_ns);
    r.set_latency_ns(&recorder);
    r.samples_us = samples;
    if let Some(raw) = raw {
        let (raw_recorder, _) = latencies(&raw.latency_ns);
        let us = |p: Option<u64>| p.map_or(0.0, |ns| ns as f64 / 1000.0);
        r.set_raw(
            us(raw_recorder.percentile(50.0)),
            us(raw_recorder.percentile(99.0)),
            raw.rate_per_receiver,
        );
    }
    r
}

/// A recorder of nanosecond samples and the same samples in microseconds for plots.
pub(crate) fn latencies(ns: &[u64]) -> (Recorder, Vec<f64>) {
    let mut recorder = Recorder::new();
    for &v in ns {
        recorder.record(v);
    }
    (recorder, ns.iter().map(|&v| v as f64 / 1000.0).collect())
}

// ----- glidepath --------------------------------------------------------------------

/// A sender's object and attribute.
#[derive(Clone, Copy)]
struct Source {
    instance: ObjectInstanceHandle,
    attribute: AttributeHandle,
}

fn glidepath_run(
    bench: &Bench,
    opts: &BenchOptions,
    variant: Variant,
    size: usize,
    count: u64,
    n: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let federation = bench.new_federation("throughput")?;
    let shares = variant.shares(count, n);
    let expected_each: u64 = match variant {
        Variant::Sender => count,
        Variant::Receiver => shares.iter().sum(),
    };
    // `--processes`: every receiver a process of its own, subscribed before the
    // senders join.
    let mut children = Vec::new();
    if opts.processes {
        let args = ["--count".to_string(), expected_each.to_string()];
        for i in 0..variant.receivers(n) {
            children.push(MemberProcess::spawn(
                bench,
                opts,
                "throughput",
                &federation,
                i,
                &args,
            )?);
        }
    }
    let mut receivers = Vec::new();
    for i in 0..if opts.processes {
        0
    } else {
        variant.receivers(n)
    } {
        let m = bench.join(&federation, &format!("receiver-{i}"))?;
        let class = m.object_class_handle("BenchObject")?;
        let attribute = m.attribute_handle(class, "payload")?;
        m.subscribe_object_class_attributes(class, &[attribute])?;
        receivers.push(m);
    }
    let mut senders = Vec::new();
    for i in 0..shares.len() {
        let m = bench.join(&federation, &format!("sender-{i}"))?;
        let class = m.object_class_handle("BenchObject")?;
        let attribute = m.attribute_handle(class, "payload")?;
        m.publish_object_class_attributes(class, &[attribute])?;
        let instance = m.register_object_instance(class)?;
        senders.push((
            m,
            Source {
                instance,
                attribute,
            },
        ));
    }
    // Every receiver knows every sender's object before the clock starts, so the
    // measured phase is updates only.
    for r in &receivers {
        for _ in 0..senders.len() {
            r.wait_for("discovery of a sender's object", |cb| {
                matches!(cb, Callback::DiscoverObjectInstance { .. }).then_some(())
            })?;
        }
    }
    for child in &mut children {
        child.expect("DISCOVERED", senders.len())?;
    }
    let payload = harness::payload(size);
    let go = Barrier::new(senders.len() + receivers.len());
    let (start, receipts) = thread::scope(|s| -> anyhow::Result<_> {
        let receiving: Vec<_> = receivers
            .iter()
            .enumerate()
            .map(|(i, member)| {
                let go = &go;
                s.spawn(move || {
                    go.wait();
                    let shown = (i == 0).then_some(progress);
                    receive_updates(member, expected_each, shown)
                })
            })
            .collect();
        let sending: Vec<_> = senders
            .iter()
            .zip(&shares)
            .map(|((member, source), &share)| {
                let (go, payload) = (&go, &payload);
                s.spawn(move || -> anyhow::Result<Instant> {
                    go.wait();
                    let start = Instant::now();
                    send_updates(member, *source, payload, share)?;
                    Ok(start)
                })
            })
            .collect();
        let mut start: Option<Instant> = None;
        let mut failure = None;
        for h in sending {
            match h.join().map_err(|_| anyhow!("a sender thread panicked"))? {
                Ok(t) => start = Some(start.map_or(t, |s: Instant| s.min(t))),
                Err(e) => failure = Some(e),
            }
        }
        let mut receipts = receiving
            .into_iter()
            .map(|h| h.join().map_err(|_| anyhow!("a receiver thread panicked")))
            .collect::<anyhow::Result<Vec<_>>>()?;
        if let Some(e) = failure {
            return Err(e.context("sending updates"));
        }
        for mut child in children {
            receipts.push(Receipt::parse(&child.next_line("RECEIPT ")?)?);
            child.finish()?;
        }
        Ok((start, receipts))
    })?;
    let measured = measure(
        receipts,
        expected_each,
        (variant == Variant::Sender).then_some(start).flatten(),
    );
    let members = receivers
        .into_iter()
        .chain(senders.into_iter().map(|(m, _)| m))
        .collect();
    bench.finish(&federation, members)?;
    Ok(measured)
}

/// `--member-of FEDERATION`: this process is receiver `--member-index` of a
/// `--processes` run. Joins and subscribes, says `READY`; says `DISCOVERED` for each
/// sender's object it discovers (the parent starts sending once it has heard them
/// all); counts `--count` reflections, says its `RECEIPT`, resigns.
fn serve_receiver(bench: &Bench, federation: &str, opts: &BenchOptions) -> anyhow::Result<()> {
    let member = bench.join(federation, &format!("receiver-{}", opts.member_index))?;
    let class = member.object_class_handle("BenchObject")?;
    let attribute = member.attribute_handle(class, "payload")?;
    member.subscribe_object_class_attributes(class, &[attribute])?;
    harness::say_ready()?;
    let receipt = receive_updates_saying(&member, opts.count, None, &mut |cb| {
        if matches!(cb, Callback::DiscoverObjectInstance { .. }) {
            harness::say("DISCOVERED")?;
        }
        Ok(())
    })?;
    harness::say(&receipt.line())?;
    member.resign()
}

/// Sends `count` updates as fast as the service takes them, then flushes what a
/// bundle still holds.
fn send_updates(
    member: &Member,
    source: Source,
    payload: &Bytes,
    count: u64,
) -> anyhow::Result<()> {
    for _ in 0..count {
        member.update_attribute_values(
            source.instance,
            [(source.attribute, payload.clone())],
            Bytes::new(),
        )?;
    }
    member.flush()?;
    Ok(())
}

/// Counts reflections until `expected` arrived or nothing came for [`RECEIVE_TIMEOUT`].
fn receive_updates(member: &Member, expected: u64, progress: Option<&dyn Progress>) -> Receipt {
    receive_updates_saying(member, expected, progress, &mut |_| Ok(()))
        .expect("ignoring other callbacks cannot fail")
}

/// [`receive_updates`], handing every other callback to `other`.
fn receive_updates_saying(
    member: &Member,
    expected: u64,
    progress: Option<&dyn Progress>,
    other: &mut dyn FnMut(&Callback) -> anyhow::Result<()>,
) -> anyhow::Result<Receipt> {
    let mut receipt = Receipt::default();
    let duplicates_before = member.stats().out_of_order;
    while receipt.received < expected {
        match member.next_callback(RECEIVE_TIMEOUT) {
            Some(Callback::ReflectAttributeValues { info, .. }) => {
                if receipt.count(Some(info.publish_time_ns), expected) {
                    if let Some(p) = progress {
                        p.set(receipt.received, expected);
                    }
                }
            }
            Some(cb) => other(&cb)?,
            None => break,
        }
    }
    // The core drops (and counts) any envelope not newer than its sender's last one.
    receipt.duplicated = member.stats().out_of_order - duplicates_before;
    Ok(receipt)
}

mod raw;
pub(crate) use raw::send_with;
use raw::{raw_channel_run, raw_shm_run};

// ----- raw peer: NATS ---------------------------------------------------------------

/// A subject of its own for one raw run, so runs sharing a server never mix.
pub(crate) fn raw_subject(what: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static RUNS: AtomicU64 = AtomicU64::new(0);
    format!(
        "glidepath-bench.raw.{}.{what}.{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    )
}

/// `payload` behind a 16-byte stamp (sequence number, send time): the raw peer's
/// stand-in for the header glidepath's envelope carries.
pub(crate) fn stamped(seq: u64, payload: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(harness::STAMP_BYTES + payload.len());
    b.put_u64_le(seq);
    b.put_u64_le(harness::now_ns());
    b.put_slice(payload);
    b.freeze()
}

fn raw_nats_run(
    raw: &RawNats,
    variant: Variant,
    size: usize,
    count: u64,
    n: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let shares = variant.shares(count, n);
    let expected_each: u64 = match variant {
        Variant::Sender => count,
        Variant::Receiver => shares.iter().sum(),
    };
    let subject = async_nats::Subject::from(raw_subject("throughput"));
    let payload = harness::payload(size);
    let (start, receipts) = raw.block_on(async {
        let mut subscribers = Vec::new();
        for _ in 0..variant.receivers(n) {
            let client = raw.connect().await?;
            let sub = client.subscribe(subject.clone()).await?;
            // The server has the subscription once it answered this round trip.
            crate::harness::settle(&client).await?;
            subscribers.push((client, sub));
        }
        let mut publishers = Vec::new();
        for _ in &shares {
            publishers.push(raw.connect().await?);
        }
        let receiving: Vec<_> = subscribers
            .into_iter()
            .map(|(client, mut sub)| {
                tokio::spawn(async move {
                    let mut receipt = Receipt::default();
                    while receipt.received < expected_each {
                        match tokio::time::timeout(RECEIVE_TIMEOUT, sub.next()).await {
                            Ok(Some(m)) => {
                                let sent = harness::read_stamp(&m.payload).map(|(_, t)| t);
                                receipt.count(sent, expected_each);
                            }
                            Ok(None) | Err(_) => break,
                        }
                    }
                    drop(client);
                    receipt
                })
            })
            .collect();
        let start = Instant::now();
        let sending: Vec<_> = publishers
            .into_iter()
            .zip(shares.iter().copied())
            .map(|(client, share)| {
                let (subject, payload) = (subject.clone(), payload.clone());
                tokio::spawn(async move {
                    for seq in 0..share {
                        client
                            .publish(subject.clone(), stamped(seq, &payload))
                            .await?;
                    }
                    client.flush().await?;
                    Ok::<_, anyhow::Error>(())
                })
            })
            .collect();
        for h in sending {
            h.await.context("a raw publisher task failed")??;
        }
        let mut receipts = Vec::new();
        for h in receiving {
            receipts.push(h.await.context("a raw subscriber task failed")?);
        }
        Ok::<_, anyhow::Error>((start, receipts))
    })?;
    if let Some(first) = receipts.first() {
        progress.set(first.received, expected_each);
    }
    Ok(measure(
        receipts,
        expected_each,
        (variant == Variant::Sender).then_some(start),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use glidepath::WaitStrategy;
    use std::time::Duration;

    #[test]
    fn a_receivers_receipt_line_reads_back_and_a_garbled_one_is_refused() {
        let first = Instant::now();
        let receipt = Receipt {
            received: 9,
            duplicated: 1,
            first: Some(first),
            last: Some(first + Duration::from_millis(5)),
            latency_ns: vec![3, 4],
        };
        let back = Receipt::parse(&receipt.line()).unwrap();
        assert_eq!((back.received, back.duplicated), (9, 1));
        assert_eq!(back.latency_ns, vec![3, 4]);
        // The instants go through the clock both processes share: the span survives.
        let span = back.last.unwrap() - back.first.unwrap();
        assert!(
            span.abs_diff(Duration::from_millis(5)) < Duration::from_micros(50),
            "{span:?}"
        );
        let none = Receipt::parse("RECEIPT 0 0 0 0 ").unwrap();
        assert_eq!((none.first, none.last), (None, None));
        let e = Receipt::parse("RECEIPT 1 x 0 0 ").unwrap_err().to_string();
        assert!(e.contains("duplicated `x`"), "{e}");
        assert!(Receipt::parse("RECEIPT 1").is_err());
    }

    #[test]
    fn shares_add_up_to_the_count() {
        assert_eq!(Variant::Receiver.shares(10, 3), vec![4, 3, 3]);
        assert_eq!(Variant::Receiver.shares(2, 3), vec![1, 1, 0]);
        assert_eq!(Variant::Sender.shares(10, 3), vec![10]);
    }

    #[test]
    fn the_default_count_keeps_within_the_payload_budget() {
        let opts = BenchOptions::default();
        assert_eq!(count_for(&opts, 100), DEFAULT_COUNT);
        assert_eq!(count_for(&opts, 65536), 4096);
        let given = BenchOptions {
            count: 7,
            ..BenchOptions::default()
        };
        assert_eq!(count_for(&given, 65536), 7);
    }

    #[test]
    fn send_with_gives_up_on_a_full_channel() {
        for wait in [
            WaitStrategy::Park,
            WaitStrategy::Spin,
            WaitStrategy::SpinPark {
                spin: Duration::from_micros(50),
            },
        ] {
            let (tx, rx) = crossbeam_channel::bounded(1);
            assert!(send_with(&tx, 1, wait, Duration::from_millis(5)));
            assert!(!send_with(&tx, 2, wait, Duration::from_millis(5)));
            assert_eq!(rx.try_recv(), Ok(1));
        }
    }

    #[test]
    fn stamped_messages_carry_their_stamp() {
        let m = stamped(9, b"abc");
        assert_eq!(m.len(), harness::STAMP_BYTES + 3);
        assert_eq!(harness::read_stamp(&m).map(|(seq, _)| seq), Some(9));
    }
}

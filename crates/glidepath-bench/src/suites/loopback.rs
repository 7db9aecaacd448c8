//! `loopback`: concurrent send and receive, thesis section 5.3.4. One master sends
//! K updates (`BenchObject.payload`); each of N repeaters reflects every one back at
//! once (as a `BenchInteraction`, which only the master subscribes, so repeaters do
//! not hear each other); the master sends new updates while the replies come in, and
//! stops the clock when all K·N replies are back.
//!
//! The master is one thread doing both, like a single federate that distributes its
//! status and hears every subscriber answer. It keeps at most [`WINDOW`] updates
//! without all their replies: without a bound an unbounded queue would make the
//! round trip the time to drain a backlog, not the RTI's. Before it waits for a reply
//! it flushes, so a bundle never holds the updates the replies depend on.
//!
//! Figures: `rate_per_s` is replies the master received per second (messages
//! delivered to it), `total_rate_per_s` what it sent and received per second (the
//! thesis's "number of sent/received updates / (endTime − startTime)"); the latency
//! columns are round-trip times, update sent to reply received, every message. The
//! tag carries the stamp (sequence number, send time) out and back; replies are
//! counted per repeater and sequence number, so duplicates and losses show.
//!
//! The raw peer does the same over bounded crossbeam channels (`inproc`) or raw
//! async-nats subjects (`nats`), with the same window.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use anyhow::{anyhow, Context};
use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use futures::StreamExt;
use glidepath::{Callback, WaitStrategy};

use super::throughput::{latencies, raw_subject, send_with, stamped};
use crate::harness::{
    self, Bench, BenchOptions, Member, MemberProcess, Progress, RawNats, SeqTracker,
    TransportChoice, RECEIVE_TIMEOUT,
};
use crate::result::BenchResult;

/// Sizes swept when none is given (thesis Fig. 18 runs small to large messages).
const DEFAULT_SIZES: &[usize] = &[100, 1024, 8192];

/// Updates the master sends when no `--count` is given; the thesis sent 10,000, and
/// a few times that keeps the run long against thread start-up on fast transports.
const DEFAULT_COUNT: u64 = 50_000;

/// Updates the master may have out without all their replies. A few thousand
/// messages cover the bandwidth-delay product of NATS on loopback (about 70 µs × a
/// million per second) while keeping the queues, and so the round trip, short.
const WINDOW: u64 = 1024;

/// Runs every size for every N of `--subscribers` (default 1 repeater).
pub fn run(
    bench: &Bench,
    opts: &BenchOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BenchResult>> {
    let sizes = opts.sizes_or(DEFAULT_SIZES);
    let count = opts.count_or(DEFAULT_COUNT);
    if let Some(federation) = &opts.member_of {
        return serve_repeater(bench, federation, opts, count).map(|()| Vec::new());
    }
    let repeaters = opts.peers("loopback", "repeater")?;
    harness::no_raw_shm(opts, "loopback")?;
    let raw_nats = match (opts.raw, opts.transport) {
        (true, TransportChoice::Nats) => Some(RawNats::new(&opts.nats_url, &opts.nats_security)?),
        _ => None,
    };
    let mut results = Vec::new();
    for &size in &sizes {
        for &n in &repeaters {
            let label = format!("loopback {size} B, 1 master, {n} repeaters");
            progress.stage(&label);
            let measured = glidepath_run(bench, opts, size, count, n, progress)
                .with_context(|| label.clone())?;
            let raw = if opts.raw {
                progress.stage(&format!("{label} (raw peer)"));
                Some(
                    match &raw_nats {
                        Some(raw) => raw_nats_run(raw, size, count, n, progress),
                        None => raw_channel_run(opts.wait, size, count, n, progress),
                    }
                    .with_context(|| format!("{label} (raw peer)"))?,
                )
            } else {
                None
            };
            let mut r = row(opts, size, count, n, &measured, raw.as_ref());
            if opts.processes {
                // The raw peer still runs as threads of this process.
                r.variant = format!("{}, repeaters as processes", r.variant);
            }
            results.push(r);
        }
    }
    Ok(results)
}

/// What the master saw.
#[derive(Debug, Default)]
struct Measured {
    sent: u64,
    /// Distinct replies.
    replies: u64,
    duplicated: u64,
    elapsed_s: f64,
    rtt_ns: Vec<u64>,
}

impl Measured {
    fn reply_rate(&self) -> f64 {
        harness::rate(self.replies, self.elapsed_s)
    }
}

fn row(
    opts: &BenchOptions,
    size: usize,
    count: u64,
    n: usize,
    m: &Measured,
    raw: Option<&Measured>,
) -> BenchResult {
    let mut r = opts.result("loopback", "master");
    let expected = count * n as u64;
    r.size_bytes = size as u64;
    r.federates = n as u64 + 1;
    r.subscribers = n as u64;
    r.count = expected;
    r.received = m.replies.min(expected);
    r.lost = expected.saturating_sub(m.replies);
    r.duplicated = m.duplicated;
    r.rate_per_s = m.reply_rate();
    r.total_rate_per_s = Some(harness::rate(m.sent + m.replies, m.elapsed_s));
    r.mbit_per_s = harness::mbit_per_s(m.replies, size, m.elapsed_s);
    r.elapsed_s = m.elapsed_s;
    let (recorder, samples) = latencies(&m.rtt_ns);
    r.set_latency_ns(&recorder);
    r.samples_us = samples;
    if let Some(raw) = raw {
        let (raw_recorder, _) = latencies(&raw.rtt_ns);
        let us = |p: Option<u64>| p.map_or(0.0, |ns| ns as f64 / 1000.0);
        r.set_raw(
            us(raw_recorder.percentile(50.0)),
            us(raw_recorder.percentile(99.0)),
            raw.reply_rate(),
        );
    }
    r
}

/// Counts replies per repeater and sequence number, and their round trips.
struct Replies {
    per_repeater: HashMap<u64, SeqTracker>,
    count: u64,
    m: Measured,
}

impl Replies {
    fn new() -> Replies {
        Replies {
            per_repeater: HashMap::new(),
            count: 0,
            m: Measured::default(),
        }
    }

    /// Records a reply from `repeater` carrying the stamp in `stamp`.
    fn record(&mut self, repeater: u64, stamp: &[u8]) {
        let Some((seq, sent_ns)) = harness::read_stamp(stamp) else {
            // Not ours: a reply always echoes the stamp.
            self.m.duplicated += 1;
            return;
        };
        let count = self.count;
        let tracker = self
            .per_repeater
            .entry(repeater)
            .or_insert_with(|| SeqTracker::new(count));
        if tracker.record(seq) {
            self.m.replies += 1;
            self.m
                .rtt_ns
                .push(harness::now_ns().saturating_sub(sent_ns));
        } else {
            self.m.duplicated += 1;
        }
    }
}

// ----- glidepath --------------------------------------------------------------------

fn glidepath_run(
    bench: &Bench,
    opts: &BenchOptions,
    size: usize,
    count: u64,
    n: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let federation = bench.new_federation("loopback")?;
    let master = bench.join(&federation, "master")?;
    let class = master.object_class_handle("BenchObject")?;
    let attribute = master.attribute_handle(class, "payload")?;
    let reply = master.interaction_class_handle("BenchInteraction")?;
    let reply_payload = master.parameter_handle(reply, "payload")?;
    master.subscribe_interaction_class(reply)?;
    // `--processes`: every repeater a process of its own ([`serve_repeater`]).
    let mut children = Vec::new();
    if opts.processes {
        let args = ["--count".to_string(), count.to_string()];
        for i in 0..n {
            children.push(MemberProcess::spawn(
                bench,
                opts,
                "loopback",
                &federation,
                i,
                &args,
            )?);
        }
    }
    let mut repeaters = Vec::new();
    for i in 0..if opts.processes { 0 } else { n } {
        repeaters.push(join_repeater(bench, &federation, i)?);
    }
    master.publish_object_class_attributes(class, &[attribute])?;
    let instance = master.register_object_instance(class)?;
    for r in &repeaters {
        wait_for_master(r)?;
    }
    for child in &mut children {
        child.expect("DISCOVERED", 1)?;
    }
    let payload = harness::payload(size);
    let measured = thread::scope(|s| -> anyhow::Result<Measured> {
        let echoing: Vec<_> = repeaters
            .iter()
            .map(|r| s.spawn(move || repeat(r, count, reply, reply_payload)))
            .collect();
        let mut replies = Replies::new();
        replies.count = count;
        let expected = count * n as u64;
        let start = Instant::now();
        let mut sent = 0u64;
        let outcome = (|| -> anyhow::Result<()> {
            while replies.m.replies < expected {
                while sent < count && sent - replies.m.replies / (n as u64) < WINDOW {
                    let tag = harness::stamp(sent, harness::now_ns());
                    master.update_attribute_values(
                        instance,
                        [(attribute, payload.clone())],
                        tag,
                    )?;
                    sent += 1;
                }
                let callback = match master.try_next_callback() {
                    Some(cb) => cb,
                    None => {
                        master.flush()?;
                        match master.next_callback(RECEIVE_TIMEOUT) {
                            Some(cb) => cb,
                            None => return Ok(()),
                        }
                    }
                };
                if let Callback::ReceiveInteraction { tag, info, .. } = callback {
                    replies.record(u64::from(info.producer.0), &tag);
                    if replies.m.replies.is_multiple_of(1024) {
                        progress.set(replies.m.replies, expected);
                    }
                }
            }
            Ok(())
        })();
        replies.m.elapsed_s = start.elapsed().as_secs_f64();
        replies.m.sent = sent;
        replies.m.duplicated += master.stats().out_of_order;
        for h in echoing {
            h.join()
                .map_err(|_| anyhow!("a repeater thread panicked"))??;
        }
        for child in children {
            child.finish()?;
        }
        outcome.context("master")?;
        Ok(replies.m)
    })?;
    let members = std::iter::once(master).chain(repeaters).collect();
    bench.finish(&federation, members)?;
    Ok(measured)
}

/// Joins repeater `i`: subscribes the master's updates, publishes the replies.
fn join_repeater(bench: &Bench, federation: &str, i: usize) -> anyhow::Result<Member> {
    let r = bench.join(federation, &format!("repeater-{i}"))?;
    let class = r.object_class_handle("BenchObject")?;
    let attribute = r.attribute_handle(class, "payload")?;
    r.subscribe_object_class_attributes(class, &[attribute])?;
    r.publish_interaction_class(r.interaction_class_handle("BenchInteraction")?)?;
    Ok(r)
}

/// Waits until the repeater discovered the master's object.
fn wait_for_master(r: &Member) -> anyhow::Result<()> {
    r.wait_for("discovery of the master's object", |cb| {
        matches!(cb, Callback::DiscoverObjectInstance { .. }).then_some(())
    })
}

/// `--member-of FEDERATION`: this process is repeater `--member-index` of a
/// `--processes` run. Joins, says `READY`; says `DISCOVERED` once it knows the
/// master's object; reflects `--count` updates back; resigns.
fn serve_repeater(
    bench: &Bench,
    federation: &str,
    opts: &BenchOptions,
    count: u64,
) -> anyhow::Result<()> {
    let r = join_repeater(bench, federation, opts.member_index)?;
    harness::say_ready()?;
    wait_for_master(&r)?;
    harness::say("DISCOVERED")?;
    let reply = r.interaction_class_handle("BenchInteraction")?;
    let reply_payload = r.parameter_handle(reply, "payload")?;
    repeat(&r, count, reply, reply_payload)?;
    r.resign()
}

/// A repeater: reflects every update back as an interaction with the same payload
/// and tag, flushing whenever it is about to wait, until `count` were reflected or
/// nothing came for [`RECEIVE_TIMEOUT`].
fn repeat(
    member: &Member,
    count: u64,
    reply: glidepath::InteractionClassHandle,
    reply_payload: glidepath::ParameterHandle,
) -> anyhow::Result<()> {
    let mut reflected = 0u64;
    while reflected < count {
        let callback = match member.try_next_callback() {
            Some(cb) => cb,
            None => {
                member.flush()?;
                match member.next_callback(RECEIVE_TIMEOUT) {
                    Some(cb) => cb,
                    None => break,
                }
            }
        };
        if let Callback::ReflectAttributeValues { values, tag, .. } = callback {
            let value = values.first().map(|(_, v)| v.clone()).unwrap_or_default();
            member
                .send_interaction(reply, [(reply_payload, value)], tag)
                .with_context(|| format!("{} replying", member.name()))?;
            reflected += 1;
        }
    }
    member.flush()?;
    Ok(())
}

// ----- raw peer: channels -------------------------------------------------------------

/// An update or a reply of the raw inproc peer.
struct RawMessage {
    seq: u64,
    sent_ns: u64,
    payload: Bytes,
    repeater: u64,
}

fn raw_channel_run(
    wait: WaitStrategy,
    size: usize,
    count: u64,
    n: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let capacity = usize::try_from(WINDOW).unwrap_or(usize::MAX);
    let (outs, inboxes): (Vec<Sender<RawMessage>>, Vec<Receiver<RawMessage>>) =
        (0..n).map(|_| crossbeam_channel::bounded(capacity)).unzip();
    let (back_tx, back_rx) = crossbeam_channel::bounded::<RawMessage>(capacity * n);
    let payload = harness::payload(size);
    thread::scope(|s| {
        for (i, rx) in inboxes.into_iter().enumerate() {
            let back_tx = back_tx.clone();
            s.spawn(move || {
                for _ in 0..count {
                    let Some(mut m) = harness::recv_with(&rx, wait, RECEIVE_TIMEOUT) else {
                        return;
                    };
                    m.repeater = i as u64;
                    if !send_with(&back_tx, m, wait, RECEIVE_TIMEOUT) {
                        return;
                    }
                }
            });
        }
        drop(back_tx);
        let mut replies = Replies::new();
        replies.count = count;
        let expected = count * n as u64;
        let start = Instant::now();
        let mut sent = 0u64;
        while replies.m.replies < expected {
            while sent < count && sent - replies.m.replies / (n as u64) < WINDOW {
                let sent_ns = harness::now_ns();
                for tx in &outs {
                    let m = RawMessage {
                        seq: sent,
                        sent_ns,
                        payload: payload.clone(),
                        repeater: 0,
                    };
                    // The window keeps every channel below its capacity.
                    if !send_with(tx, m, wait, RECEIVE_TIMEOUT) {
                        return Err(anyhow!("a raw repeater stopped taking messages"));
                    }
                }
                sent += 1;
            }
            let m = match back_rx.try_recv() {
                Ok(m) => m,
                Err(_) => match harness::recv_with(&back_rx, wait, RECEIVE_TIMEOUT) {
                    Some(m) => m,
                    None => break,
                },
            };
            let stamp = harness::stamp(m.seq, m.sent_ns);
            drop(m.payload);
            replies.record(m.repeater, &stamp);
            if replies.m.replies.is_multiple_of(1024) {
                progress.set(replies.m.replies, expected);
            }
        }
        replies.m.elapsed_s = start.elapsed().as_secs_f64();
        replies.m.sent = sent;
        // Let the repeaters see the end of their channels.
        drop(outs);
        Ok(replies.m)
    })
}

// ----- raw peer: NATS ---------------------------------------------------------------

fn raw_nats_run(
    raw: &RawNats,
    size: usize,
    count: u64,
    n: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let out = async_nats::Subject::from(raw_subject("loopback-out"));
    let back = raw_subject("loopback-back");
    let payload = harness::payload(size);
    let expected = count * n as u64;
    raw.block_on(async {
        let master = raw.connect().await?;
        let mut replies_in = master.subscribe(format!("{back}.*")).await?;
        crate::harness::settle(&master).await?;
        let mut repeaters = Vec::new();
        for i in 0..n {
            let client = raw.connect().await?;
            let mut sub = client.subscribe(out.clone()).await?;
            crate::harness::settle(&client).await?;
            let subject = async_nats::Subject::from(format!("{back}.{i}"));
            repeaters.push(tokio::spawn(async move {
                for _ in 0..count {
                    match tokio::time::timeout(RECEIVE_TIMEOUT, sub.next()).await {
                        Ok(Some(m)) => client.publish(subject.clone(), m.payload).await?,
                        Ok(None) | Err(_) => break,
                    }
                }
                client.flush().await?;
                Ok::<_, anyhow::Error>(())
            }));
        }
        let window = Arc::new(tokio::sync::Semaphore::new(
            usize::try_from(WINDOW).unwrap_or(usize::MAX),
        ));
        let sent = Arc::new(AtomicU64::new(0));
        let start = Instant::now();
        let sender = {
            let (master, window, out, payload, sent) = (
                master.clone(),
                window.clone(),
                out.clone(),
                payload.clone(),
                sent.clone(),
            );
            tokio::spawn(async move {
                for seq in 0..count {
                    window.acquire().await?.forget();
                    master.publish(out.clone(), stamped(seq, &payload)).await?;
                    sent.store(seq + 1, Ordering::Relaxed);
                }
                master.flush().await?;
                Ok::<_, anyhow::Error>(())
            })
        };
        let mut replies = Replies::new();
        replies.count = count;
        while replies.m.replies < expected {
            match tokio::time::timeout(RECEIVE_TIMEOUT, replies_in.next()).await {
                Ok(Some(m)) => {
                    let repeater = m
                        .subject
                        .rsplit('.')
                        .next()
                        .and_then(|i| i.parse::<u64>().ok())
                        .unwrap_or(u64::MAX);
                    let before = replies.m.replies;
                    replies.record(repeater, &m.payload);
                    if replies.m.replies != before && replies.m.replies.is_multiple_of(n as u64) {
                        window.add_permits(1);
                    }
                    if replies.m.replies.is_multiple_of(1024) {
                        progress.set(replies.m.replies, expected);
                    }
                }
                Ok(None) | Err(_) => break,
            }
        }
        replies.m.elapsed_s = start.elapsed().as_secs_f64();
        // A sender stuck on the window after a loss has nothing more to do.
        window.close();
        let sending = sender
            .await
            .context("the raw master's sending task failed")?;
        replies.m.sent = sent.load(Ordering::Relaxed);
        if replies.m.replies == expected {
            // Everything came back, so the sender finished: any error is real.
            sending.context("raw master")?;
        }
        for r in repeaters {
            r.await.context("a raw repeater task failed")??;
        }
        Ok(replies.m)
    })
}

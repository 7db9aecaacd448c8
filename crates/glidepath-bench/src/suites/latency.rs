//! `latency`: one-way latency as round trip / 2 between two federates (thesis
//! 5.3.1, after DMSO's BmLatency), swept over message sizes.
//!
//! The pinger starts the clock just before it sends a `Ping` interaction (sequence
//! number in `seq`, `size` bytes in `payload`), the ponger answers each `Ping` it
//! receives with a `Pong` carrying the same values, and the pinger stops the clock when
//! that `Pong` arrives. Both classes are reliable and receive-ordered.
//!
//! - `--compute-us N`: the thesis's computing load "between tick() calls at both ends":
//!   while a side waits for its next message it polls without blocking and burns N µs
//!   of busy work whenever nothing has arrived. A reply is therefore noticed up to N µs
//!   late, as in the thesis, and the RTI's own threads compete for the CPU.
//! - `--background-load`: a third federate floods `BenchObject.payloadBestEffort`
//!   updates of the same size as fast as it can, and a fourth drains them. The measuring
//!   pair do **not** subscribe: on `nats` the flood still reaches their connections
//!   (one wildcard subscription per federation, filtered in the process) and shares
//!   the NATS server with them, which is the thesis's shared-network condition; on
//!   `inproc` it competes for the CPU and the bus.
//!
//! The raw peer (`--raw`) runs the same ping-pong without glidepath: for `inproc` two
//! threads over a pair of bounded crossbeam channels, waiting with the same wait
//! strategy; for `nats` two async-nats clients on two subjects of the same server.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use bytes::Bytes;
use futures::StreamExt;
use glidepath::{Callback, InteractionClassHandle, ParameterHandle, WaitStrategy};

use crate::harness::{
    self, busy_work, mbit_per_s, payload, rate, recv_with, settle, Bench, BenchOptions, Member,
    MemberProcess, Progress, RawNats, TransportChoice, RECEIVE_TIMEOUT,
};
use crate::result::BenchResult;
use glidepath::stats::Recorder;

/// The thesis's sweep, 32 B to 64 KiB (BmLatency's range).
pub const DEFAULT_SIZES: &[usize] = &[
    32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536,
];

/// Round trips per size: the thesis sent 1000 per run; twice that gives P99 some
/// support and takes well under a second per size at tens of microseconds each.
pub const DEFAULT_COUNT: u64 = 2000;

/// Round trips before the clock starts, so connection set-up, first allocations and
/// cold caches do not land in the distribution.
fn warmup(count: u64) -> u64 {
    (count / 10).clamp(1, 200)
}

struct Classes {
    ping: InteractionClassHandle,
    ping_seq: ParameterHandle,
    ping_payload: ParameterHandle,
    pong: InteractionClassHandle,
    pong_seq: ParameterHandle,
    pong_payload: ParameterHandle,
}

impl Classes {
    fn lookup(m: &Member) -> anyhow::Result<Classes> {
        let ping = m.interaction_class_handle("Ping")?;
        let pong = m.interaction_class_handle("Pong")?;
        Ok(Classes {
            ping,
            ping_seq: m.parameter_handle(ping, "seq")?,
            ping_payload: m.parameter_handle(ping, "payload")?,
            pong,
            pong_seq: m.parameter_handle(pong, "seq")?,
            pong_payload: m.parameter_handle(pong, "payload")?,
        })
    }
}

/// Runs the latency sweep; one result per size.
pub fn run(
    bench: &Bench,
    opts: &BenchOptions,
    progress: &dyn Progress,
) -> anyhow::Result<Vec<BenchResult>> {
    if let Some(federation) = &opts.member_of {
        serve_ponger(bench, federation, opts)?;
        return Ok(Vec::new());
    }
    let sizes = opts.sizes_or(DEFAULT_SIZES);
    let count = opts.count_or(DEFAULT_COUNT);
    if opts.processes && opts.background_load {
        bail!("latency: --processes and --background-load cannot be combined yet");
    }
    let federation = bench.new_federation("latency")?;
    let pinger = bench.join(&federation, "pinger")?;
    let ponger = if opts.processes {
        None
    } else {
        Some(bench.join(&federation, "ponger")?)
    };
    let classes = Classes::lookup(&pinger)?;
    pinger.publish_interaction_class(classes.ping)?;
    pinger.subscribe_interaction_class(classes.pong)?;
    if let Some(ponger) = &ponger {
        ponger.publish_interaction_class(classes.pong)?;
        ponger.subscribe_interaction_class(classes.ping)?;
    }
    // Every ping of every size goes to the one ponger process.
    let remote = if opts.processes {
        let total = sizes.len() as u64 * (warmup(count) + count);
        let args = [
            "--count".to_string(),
            total.to_string(),
            "--compute-us".to_string(),
            opts.compute_us.to_string(),
        ];
        Some(MemberProcess::spawn(
            bench,
            opts,
            "latency",
            &federation,
            1,
            &args,
        )?)
    } else {
        None
    };

    let raw = match (opts.raw, opts.transport) {
        (true, TransportChoice::Nats) => Some(RawNats::new(&opts.nats_url, &opts.nats_security)?),
        _ => None,
    };
    let mut results = Vec::new();
    // Sequence numbers run on across sizes, so a straggler of one size is never
    // taken for a reply of the next.
    let mut next_seq = 0u64;
    for &size in &sizes {
        progress.stage(&format!("latency {size} B"));
        let background = if opts.background_load {
            Some(Background::start(bench, &federation, size)?)
        } else {
            None
        };
        let total = warmup(count) + count;
        let measured = ping_pong(
            &pinger,
            ponger.as_ref(),
            &classes,
            opts,
            size,
            count,
            next_seq,
            progress,
        );
        next_seq += total;
        let federates = if let Some(b) = background {
            b.stop()?;
            4
        } else {
            2
        };
        let measured = measured?;
        let variant = if opts.processes {
            "round-trip/2, 2 processes"
        } else {
            "round-trip/2"
        };
        let mut r = opts.result("latency", variant);
        r.size_bytes = size as u64;
        r.federates = federates;
        r.subscribers = 1;
        fill(&mut r, &measured, count, size);
        if opts.raw {
            progress.stage(&format!("latency {size} B (raw peer)"));
            let raw_measured = match &raw {
                Some(nats) => raw_nats_ping_pong(nats, opts, size, count)?,
                None if opts.transport == TransportChoice::Shm => {
                    raw_shm_ping_pong(opts, size, count)?
                }
                None => raw_channel_ping_pong(opts, size, count),
            };
            if raw_measured.received < count {
                bail!(
                    "latency {size} B: the raw peer got only {} of {count} replies",
                    raw_measured.received
                );
            }
            let s = raw_measured.one_way_ns.summary();
            let (p50, p99) = s.map_or((0.0, 0.0), |s| (s.p50 / 1000.0, s.p99 / 1000.0));
            r.set_raw(
                p50,
                p99,
                rate(2 * raw_measured.received, raw_measured.elapsed_s),
            );
        }
        results.push(r);
    }
    if let Some(remote) = remote {
        remote.finish()?;
    }
    bench.finish(&federation, std::iter::once(pinger).chain(ponger).collect())?;
    Ok(results)
}

/// What one ping-pong run measured.
struct Measured {
    one_way_ns: Recorder,
    samples_us: Vec<f64>,
    received: u64,
    duplicated: u64,
    elapsed_s: f64,
}

fn fill(r: &mut BenchResult, m: &Measured, count: u64, size: usize) {
    r.count = count;
    r.received = m.received;
    r.lost = count - m.received.min(count);
    r.duplicated = m.duplicated;
    r.set_latency_ns(&m.one_way_ns);
    r.elapsed_s = m.elapsed_s;
    // Both directions deliver a message per round trip.
    r.rate_per_s = rate(2 * m.received, m.elapsed_s);
    r.mbit_per_s = mbit_per_s(2 * m.received, size, m.elapsed_s);
    r.samples_us = m.samples_us.clone();
}

/// Waits for the callback `want` accepts, the thesis's way: without compute load,
/// block (or spin) in `next_callback`; with it, poll and burn `compute_us` between polls.
fn await_callback<T>(
    m: &Member,
    compute_us: u64,
    deadline: Instant,
    mut want: impl FnMut(Callback) -> Option<T>,
) -> Option<T> {
    loop {
        let cb = if compute_us == 0 {
            m.next_callback(deadline.saturating_duration_since(Instant::now()))
        } else {
            m.try_next_callback()
        };
        match cb {
            Some(cb) => {
                if let Some(t) = want(cb) {
                    return Some(t);
                }
            }
            None if Instant::now() >= deadline => return None,
            None => busy_work(compute_us),
        }
    }
}

fn seq_of(values: &[(ParameterHandle, Bytes)], param: ParameterHandle) -> Option<u64> {
    let (_, v) = values.iter().find(|(p, _)| *p == param)?;
    Some(u64::from_le_bytes(v.get(..8)?.try_into().ok()?))
}

/// The ponger's side: answers `total` pings with pongs carrying the same sequence
/// number and payload. Stops early, without error, when pings stop coming (the pinger
/// gave up after a lost reply and reports it).
fn echo(ponger: &Member, c: &Classes, total: u64, compute_us: u64) -> anyhow::Result<()> {
    for _ in 0..total {
        let deadline = Instant::now() + RECEIVE_TIMEOUT;
        let got = await_callback(ponger, compute_us, deadline, |cb| match cb {
            Callback::ReceiveInteraction { class, values, .. } if class == c.ping => Some(values),
            _ => None,
        });
        let Some(values) = got else { return Ok(()) };
        let value_of = |p: ParameterHandle| {
            values
                .iter()
                .find(|(q, _)| *q == p)
                .map(|(_, v)| v.clone())
                .unwrap_or_default()
        };
        ponger
            .send_interaction(
                c.pong,
                [
                    (c.pong_seq, value_of(c.ping_seq)),
                    (c.pong_payload, value_of(c.ping_payload)),
                ],
                Bytes::new(),
            )
            .context("ponger: sending Pong")?;
    }
    Ok(())
}

/// `--member-of FEDERATION`: this process is the ponger of a `--processes` run. Says
/// `READY` on standard output once it is subscribed, echoes `--count` pings, resigns.
fn serve_ponger(bench: &Bench, federation: &str, opts: &BenchOptions) -> anyhow::Result<()> {
    let ponger = bench.join(federation, "ponger")?;
    let c = Classes::lookup(&ponger)?;
    ponger.publish_interaction_class(c.pong)?;
    ponger.subscribe_interaction_class(c.ping)?;
    harness::say_ready()?;
    echo(&ponger, &c, opts.count, opts.compute_us)?;
    ponger.resign()
}

#[allow(clippy::too_many_arguments)]
fn ping_pong(
    pinger: &Member,
    ponger: Option<&Member>,
    c: &Classes,
    opts: &BenchOptions,
    size: usize,
    count: u64,
    first_seq: u64,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let body = payload(size);
    let total = warmup(count) + count;
    let compute_us = opts.compute_us;
    thread::scope(|s| {
        let echo = ponger.map(|ponger| s.spawn(move || echo(ponger, c, total, compute_us)));
        let mut m = Measured {
            one_way_ns: Recorder::new(),
            samples_us: Vec::with_capacity(count as usize),
            received: 0,
            duplicated: 0,
            elapsed_s: 0.0,
        };
        let mut started_at = None;
        let pinging = (|| -> anyhow::Result<()> {
            for i in 0..total {
                let seq = first_seq + i;
                if i == warmup(count) {
                    started_at = Some(Instant::now());
                }
                let t0 = Instant::now();
                pinger
                    .send_interaction(
                        c.ping,
                        [
                            (c.ping_seq, Bytes::copy_from_slice(&seq.to_le_bytes())),
                            (c.ping_payload, body.clone()),
                        ],
                        Bytes::new(),
                    )
                    .context("pinger: sending Ping")?;
                let deadline = t0 + RECEIVE_TIMEOUT;
                let mut duplicates = 0;
                let got = await_callback(pinger, compute_us, deadline, |cb| match cb {
                    Callback::ReceiveInteraction { class, values, .. } if class == c.pong => {
                        match seq_of(&values, c.pong_seq) {
                            Some(s) if s == seq => Some(()),
                            Some(s) if s < seq => {
                                duplicates += 1;
                                None
                            }
                            _ => None,
                        }
                    }
                    _ => None,
                });
                let rtt_ns = t0.elapsed().as_nanos() as u64;
                if i >= warmup(count) {
                    m.duplicated += duplicates;
                }
                if got.is_none() {
                    // Lost: everything not yet answered counts as lost.
                    return Ok(());
                }
                if i >= warmup(count) {
                    m.one_way_ns.record(rtt_ns / 2);
                    m.samples_us.push(rtt_ns as f64 / 2000.0);
                    m.received += 1;
                    if m.received.is_multiple_of(256) {
                        progress.set(m.received, count);
                    }
                }
            }
            Ok(())
        })();
        m.elapsed_s = started_at.map_or(0.0, |t| t.elapsed().as_secs_f64());
        progress.set(m.received, count);
        if let Some(echo) = echo {
            echo.join()
                .map_err(|_| anyhow!("the ponger thread panicked"))??;
        }
        pinging?;
        Ok(m)
    })
}

/// The background load: a flooding federate and the federate draining it, each on
/// its own thread (which owns it), until stopped.
struct Background {
    stop: Arc<AtomicBool>,
    threads: Vec<thread::JoinHandle<anyhow::Result<Member>>>,
}

impl Background {
    fn start(bench: &Bench, federation: &str, size: usize) -> anyhow::Result<Background> {
        // Parking: the load must not hold a core the measured pair could use for spinning.
        let flooder = bench.join_with(federation, "background-flooder", WaitStrategy::Park)?;
        let sink = bench.join_with(federation, "background-sink", WaitStrategy::Park)?;
        let class = flooder.object_class_handle("BenchObject")?;
        let attribute = flooder.attribute_handle(class, "payloadBestEffort")?;
        sink.subscribe_object_class_attributes(class, &[attribute])?;
        flooder.publish_object_class_attributes(class, &[attribute])?;
        let instance = flooder.register_object_instance(class)?;
        let stop = Arc::new(AtomicBool::new(false));
        let body = payload(size);
        let flood = {
            let stop = stop.clone();
            thread::Builder::new()
                .name("bench-background-flood".into())
                .spawn(move || -> anyhow::Result<Member> {
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..64 {
                            flooder
                                .update_attribute_values(
                                    instance,
                                    [(attribute, body.clone())],
                                    Bytes::new(),
                                )
                                .context("background flood")?;
                        }
                        // Best effort: a brief yield keeps the flood from starving the
                        // sink and growing the queues without bound.
                        thread::yield_now();
                    }
                    Ok(flooder)
                })?
        };
        let drain = {
            let stop = stop.clone();
            thread::Builder::new()
                .name("bench-background-sink".into())
                .spawn(move || -> anyhow::Result<Member> {
                    while !stop.load(Ordering::Relaxed) {
                        let _ = sink.next_callback(Duration::from_millis(10));
                    }
                    Ok(sink)
                })?
        };
        Ok(Background {
            stop,
            threads: vec![flood, drain],
        })
    }

    /// Stops the load and resigns its federates.
    fn stop(self) -> anyhow::Result<()> {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads {
            let member = t
                .join()
                .map_err(|_| anyhow!("a background-load thread panicked"))??;
            member.resign()?;
        }
        Ok(())
    }
}

/// The raw peer of `inproc`: two threads ping-ponging over bounded channels,
/// waiting with the options' strategy (and the same compute load).
fn raw_channel_ping_pong(opts: &BenchOptions, size: usize, count: u64) -> Measured {
    let (ping_tx, ping_rx) = crossbeam_channel::bounded::<(u64, Bytes)>(1);
    let (pong_tx, pong_rx) = crossbeam_channel::bounded::<(u64, Bytes)>(1);
    let total = warmup(count) + count;
    let (wait, compute_us) = (opts.wait, opts.compute_us);
    let recv = move |rx: &crossbeam_channel::Receiver<(u64, Bytes)>| -> Option<(u64, Bytes)> {
        let deadline = Instant::now() + RECEIVE_TIMEOUT;
        loop {
            if compute_us == 0 {
                return recv_with(rx, wait, RECEIVE_TIMEOUT);
            }
            if let Ok(m) = rx.try_recv() {
                return Some(m);
            }
            if Instant::now() >= deadline {
                return None;
            }
            busy_work(compute_us);
        }
    };
    let body = payload(size);
    thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..total {
                let Some(m) = recv(&ping_rx) else { return };
                if pong_tx.send(m).is_err() {
                    return;
                }
            }
        });
        let mut m = Measured {
            one_way_ns: Recorder::new(),
            samples_us: Vec::new(),
            received: 0,
            duplicated: 0,
            elapsed_s: 0.0,
        };
        let mut started_at = Instant::now();
        for i in 0..total {
            if i == warmup(count) {
                started_at = Instant::now();
            }
            let t0 = Instant::now();
            if ping_tx.send((i, body.clone())).is_err() {
                break;
            }
            match recv(&pong_rx) {
                Some((seq, _)) if seq == i => {}
                _ => break,
            }
            if i >= warmup(count) {
                m.one_way_ns.record(t0.elapsed().as_nanos() as u64 / 2);
                m.received += 1;
            }
        }
        m.elapsed_s = started_at.elapsed().as_secs_f64();
        drop(ping_tx);
        m
    })
}

/// The raw peer of `shm`: two threads ping-ponging through two shared-memory rings
/// (8 bytes of sequence number, then the payload), waiting with the options' strategy.
fn raw_shm_ping_pong(opts: &BenchOptions, size: usize, count: u64) -> anyhow::Result<Measured> {
    use glidepath::backend::shm::raw::RawRing;
    let dir = std::path::Path::new(glidepath::backend::shm::DEFAULT_SHM_DIR);
    let tag = format!("{}-{size}", std::process::id());
    let ping_ring = RawRing::create(dir, &format!("ping-{tag}"), 8 << 20)?;
    let pong_ring = RawRing::create(dir, &format!("pong-{tag}"), 8 << 20)?;
    let to_ponger = RawRing::open(dir, &format!("ping-{tag}"))?;
    let to_pinger = RawRing::open(dir, &format!("pong-{tag}"))?;
    let total = warmup(count) + count;
    let (spin, compute_us) = (crate::harness::spin_of(opts.wait), opts.compute_us);
    let recv = move |ring: &RawRing, out: &mut Vec<u8>| -> bool {
        if compute_us == 0 {
            return ring.recv(out, spin, RECEIVE_TIMEOUT);
        }
        let deadline = Instant::now() + RECEIVE_TIMEOUT;
        loop {
            if ring.recv(out, Duration::ZERO, Duration::ZERO) {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            busy_work(compute_us);
        }
    };
    let body = payload(size);
    Ok(thread::scope(|s| {
        s.spawn(|| {
            let mut m = Vec::with_capacity(size + 8);
            for _ in 0..total {
                if !recv(&ping_ring, &mut m) || !to_pinger.send(&m) {
                    return;
                }
            }
        });
        let mut m = Measured {
            one_way_ns: Recorder::new(),
            samples_us: Vec::new(),
            received: 0,
            duplicated: 0,
            elapsed_s: 0.0,
        };
        let mut message = Vec::with_capacity(size + 8);
        let mut reply = Vec::with_capacity(size + 8);
        let mut started_at = Instant::now();
        for i in 0..total {
            if i == warmup(count) {
                started_at = Instant::now();
            }
            let t0 = Instant::now();
            message.clear();
            message.extend_from_slice(&i.to_le_bytes());
            message.extend_from_slice(&body);
            if !to_ponger.send(&message) || !recv(&pong_ring, &mut reply) {
                break;
            }
            if reply.get(..8) != Some(&i.to_le_bytes()[..]) {
                break;
            }
            if i >= warmup(count) {
                m.one_way_ns.record(t0.elapsed().as_nanos() as u64 / 2);
                m.received += 1;
            }
        }
        m.elapsed_s = started_at.elapsed().as_secs_f64();
        m
    }))
}

/// The raw peer of `nats`: two async-nats clients ping-ponging on two subjects of
/// the same server, 8 bytes of sequence number in front of the payload.
fn raw_nats_ping_pong(
    raw: &RawNats,
    opts: &BenchOptions,
    size: usize,
    count: u64,
) -> anyhow::Result<Measured> {
    let total = warmup(count) + count;
    let body = payload(size);
    let compute_us = opts.compute_us;
    let prefix = format!("glidepath-bench.raw.{}", std::process::id());
    raw.block_on(async {
        let pinger = raw.connect().await?;
        let ponger = raw.connect().await?;
        let (ping_subject, pong_subject) = (format!("{prefix}.ping"), format!("{prefix}.pong"));
        let mut pings = ponger.subscribe(ping_subject.clone()).await?;
        let mut pongs = pinger.subscribe(pong_subject.clone()).await?;
        settle(&ponger).await?;
        settle(&pinger).await?;
        let echo = tokio::spawn(async move {
            for _ in 0..total {
                let Ok(Some(m)) = tokio::time::timeout(RECEIVE_TIMEOUT, pings.next()).await else {
                    return;
                };
                busy_work(compute_us);
                if ponger
                    .publish(pong_subject.clone(), m.payload)
                    .await
                    .is_err()
                {
                    return;
                }
            }
            let _ = ponger.flush().await;
        });
        let mut m = Measured {
            one_way_ns: Recorder::new(),
            samples_us: Vec::new(),
            received: 0,
            duplicated: 0,
            elapsed_s: 0.0,
        };
        let mut started_at = Instant::now();
        for i in 0..total {
            if i == warmup(count) {
                started_at = Instant::now();
            }
            let mut message = Vec::with_capacity(8 + size);
            message.extend_from_slice(&i.to_le_bytes());
            message.extend_from_slice(&body);
            let t0 = Instant::now();
            pinger.publish(ping_subject.clone(), message.into()).await?;
            let reply = tokio::time::timeout(RECEIVE_TIMEOUT, pongs.next()).await;
            let ok =
                matches!(&reply, Ok(Some(r)) if r.payload.get(..8) == Some(&i.to_le_bytes()[..]));
            if !ok {
                break;
            }
            if i >= warmup(count) {
                m.one_way_ns.record(t0.elapsed().as_nanos() as u64 / 2);
                m.received += 1;
            }
            busy_work(compute_us);
        }
        m.elapsed_s = started_at.elapsed().as_secs_f64();
        echo.abort();
        Ok::<_, anyhow::Error>(m)
    })
}

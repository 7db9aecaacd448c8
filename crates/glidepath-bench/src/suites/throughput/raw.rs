//! The throughput suite's raw peers on one host: channels (the peer of `inproc`) and
//! shared-memory rings (the peer of `shm`).

use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail};
use bytes::Bytes;
use crossbeam_channel::{Receiver, SendTimeoutError, Sender, TrySendError};
use glidepath::WaitStrategy;

use super::{measure, Measured, Receipt, Variant, RAW_CHANNEL_CAPACITY};
use crate::harness::{self, Progress, RECEIVE_TIMEOUT};

// ----- raw peer: channels -------------------------------------------------------------

/// A raw inproc message: the payload and its send time, like an envelope's header.
struct RawMessage {
    _payload: Bytes,
    sent_ns: u64,
}

pub(super) fn raw_channel_run(
    wait: WaitStrategy,
    variant: Variant,
    size: usize,
    count: u64,
    n: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    let shares = variant.shares(count, n);
    let payload = harness::payload(size);
    let expected_each: u64 = match variant {
        Variant::Sender => count,
        Variant::Receiver => shares.iter().sum(),
    };
    let channels: Vec<(Sender<RawMessage>, Receiver<RawMessage>)> = (0..variant.receivers(n))
        .map(|_| crossbeam_channel::bounded(RAW_CHANNEL_CAPACITY))
        .collect();
    let go = Barrier::new(shares.len() + channels.len());
    let (start, receipts) = thread::scope(|s| -> anyhow::Result<_> {
        let receiving: Vec<_> = channels
            .iter()
            .enumerate()
            .map(|(i, (_, rx))| {
                let go = &go;
                s.spawn(move || {
                    go.wait();
                    let mut receipt = Receipt::default();
                    while receipt.received < expected_each {
                        match harness::recv_with(rx, wait, RECEIVE_TIMEOUT) {
                            Some(m) => {
                                if receipt.count(Some(m.sent_ns), expected_each) && i == 0 {
                                    progress.set(receipt.received, expected_each);
                                }
                            }
                            None => break,
                        }
                    }
                    receipt
                })
            })
            .collect();
        let sending: Vec<_> = shares
            .iter()
            .map(|&share| {
                let (go, payload, channels) = (&go, &payload, &channels);
                s.spawn(move || -> anyhow::Result<Instant> {
                    go.wait();
                    let start = Instant::now();
                    for _ in 0..share {
                        for (tx, _) in channels {
                            let m = RawMessage {
                                _payload: payload.clone(),
                                sent_ns: harness::now_ns(),
                            };
                            if !send_with(tx, m, wait, RECEIVE_TIMEOUT) {
                                bail!("a raw receiver stopped taking messages");
                            }
                        }
                    }
                    Ok(start)
                })
            })
            .collect();
        join_raw(sending, receiving)
    })?;
    Ok(measure(
        receipts,
        expected_each,
        (variant == Variant::Sender).then_some(start).flatten(),
    ))
}

// ----- raw peer: shared-memory rings ---------------------------------------------------

/// The raw peer of `shm`: the same pattern through shared-memory rings (one per
/// receiver, as the transport has), each message its send time and the payload.
pub(super) fn raw_shm_run(
    wait: WaitStrategy,
    variant: Variant,
    size: usize,
    count: u64,
    n: usize,
    progress: &dyn Progress,
) -> anyhow::Result<Measured> {
    use glidepath::backend::shm::raw::RawRing;
    let dir = std::path::Path::new(glidepath::backend::shm::DEFAULT_SHM_DIR);
    let shares = variant.shares(count, n);
    let payload = harness::payload(size);
    let expected_each: u64 = match variant {
        Variant::Sender => count,
        Variant::Receiver => shares.iter().sum(),
    };
    let names: Vec<String> = (0..variant.receivers(n))
        .map(|i| format!("tput-{}-{size}-{n}-{i}", std::process::id()))
        .collect();
    let rings = names
        .iter()
        .map(|name| RawRing::create(dir, name, 8 << 20))
        .collect::<std::io::Result<Vec<_>>>()?;
    let spin = harness::spin_of(wait);
    let go = Barrier::new(shares.len() + rings.len());
    let (start, receipts) = thread::scope(|s| -> anyhow::Result<_> {
        let receiving: Vec<_> = rings
            .iter()
            .enumerate()
            .map(|(i, ring)| {
                let go = &go;
                s.spawn(move || {
                    go.wait();
                    let mut receipt = Receipt::default();
                    let mut m = Vec::with_capacity(size + 8);
                    while receipt.received < expected_each {
                        if !ring.recv(&mut m, spin, RECEIVE_TIMEOUT) {
                            break;
                        }
                        let sent = u64::from_le_bytes(m[..8].try_into().unwrap_or_default());
                        if receipt.count(Some(sent), expected_each) && i == 0 {
                            progress.set(receipt.received, expected_each);
                        }
                    }
                    receipt
                })
            })
            .collect();
        let sending: Vec<_> = shares
            .iter()
            .map(|&share| {
                let (go, payload, names) = (&go, &payload, &names);
                s.spawn(move || -> anyhow::Result<Instant> {
                    let targets = names
                        .iter()
                        .map(|name| RawRing::open(dir, name))
                        .collect::<std::io::Result<Vec<_>>>()?;
                    let mut m = Vec::with_capacity(size + 8);
                    go.wait();
                    let start = Instant::now();
                    for _ in 0..share {
                        for ring in &targets {
                            m.clear();
                            m.extend_from_slice(&harness::now_ns().to_le_bytes());
                            m.extend_from_slice(payload);
                            if !ring.send(&m) {
                                bail!("a raw receiver stopped taking messages");
                            }
                        }
                    }
                    Ok(start)
                })
            })
            .collect();
        join_raw(sending, receiving)
    })?;
    Ok(measure(
        receipts,
        expected_each,
        (variant == Variant::Sender).then_some(start).flatten(),
    ))
}

/// Waits for a raw peer's threads: when sending started (the earliest sender) and
/// every receiver's receipt; a sender's failure is returned after all have ended.
fn join_raw(
    sending: Vec<thread::ScopedJoinHandle<'_, anyhow::Result<Instant>>>,
    receiving: Vec<thread::ScopedJoinHandle<'_, Receipt>>,
) -> anyhow::Result<(Option<Instant>, Vec<Receipt>)> {
    let mut start: Option<Instant> = None;
    let mut failure = None;
    for h in sending {
        match h
            .join()
            .map_err(|_| anyhow!("a raw sender thread panicked"))?
        {
            Ok(t) => start = Some(start.map_or(t, |s: Instant| s.min(t))),
            Err(e) => failure = Some(e),
        }
    }
    let receipts = receiving
        .into_iter()
        .map(|h| {
            h.join()
                .map_err(|_| anyhow!("a raw receiver thread panicked"))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if let Some(e) = failure {
        return Err(e);
    }
    Ok((start, receipts))
}

/// Sends on a bounded channel the way `wait` says: park blocks (for at most
/// `max_wait`), spin polls a full channel, spin-park polls for its budget and then
/// blocks. Returns false when the receiver is gone or did not take the message in
/// time. The raw peers' counterpart of [`harness::recv_with`].
pub(crate) fn send_with<T>(
    tx: &Sender<T>,
    mut value: T,
    wait: WaitStrategy,
    max_wait: Duration,
) -> bool {
    let spin_for = match wait {
        WaitStrategy::Park => Duration::ZERO,
        WaitStrategy::SpinPark { spin } => spin.min(max_wait),
        WaitStrategy::Spin => max_wait,
    };
    let start = Instant::now();
    let mut polls = 0u32;
    loop {
        match tx.try_send(value) {
            Ok(()) => return true,
            Err(TrySendError::Disconnected(_)) => return false,
            Err(TrySendError::Full(v)) => value = v,
        }
        if spin_for.is_zero() {
            break;
        }
        std::hint::spin_loop();
        polls = polls.wrapping_add(1);
        // Reading the clock costs more than a poll; look every 64 polls.
        if polls.is_multiple_of(64) && start.elapsed() >= spin_for {
            if matches!(wait, WaitStrategy::Spin) {
                return false;
            }
            break;
        }
    }
    match tx.send_timeout(value, max_wait.saturating_sub(start.elapsed())) {
        Ok(()) => true,
        Err(SendTimeoutError::Timeout(_) | SendTimeoutError::Disconnected(_)) => false,
    }
}

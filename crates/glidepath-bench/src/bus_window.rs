//! `glidepath bus window`: the formation-flying testbed's soft real-time check (seed
//! `003_...` section II.C.1). STARS sends truth state to the GPS signal generator at
//! 10 Hz, and each update is accepted from 20 ms before to 80 ms after the instant it
//! is for. Here a truth publisher sends one update per period on the bus, stamped
//! with that instant (its *nominal* time; `lead` sends it that much before), and N
//! consumers, each a connection of its own on a thread of its own, compare the
//! instant each update is in their hands (decoded) with its nominal time: **early**
//! if more than `early` before, **late** if more than `late` after, **on time**
//! otherwise; an update that never arrives is **lost**. Background load, optional:
//! threads that keep cores busy, and a second publisher flooding the same group on
//! another subject (the consumers receive and filter it, as group members do).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use glidepath::bus::{Bus, BusConfig, Encoding, Event, Message, Pattern, ServiceLevel, Subject};
use glidepath::stats::{summarize, Summary};
use glidepath::{monotonic_now_ns, TransportKind};
use serde::Serialize;

/// The truth subject, in the paper's seven-element convention.
pub const TRUTH_SUBJECT: &str = "FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL";
/// The background flood's subject: same group, not matched by the consumers.
const LOAD_SUBJECT: &str = "FFTB.MMS.SAT2.DATA.LOAD.BACKGROUND.FILL";

/// What to run.
#[derive(Clone, Debug)]
pub struct WindowOptions {
    /// `inproc` or `nats`.
    pub transport: TransportKind,
    /// The NATS server (JetStream for the totally ordered levels).
    pub nats_url: String,
    /// TLS and credentials for that server.
    pub nats_security: glidepath::NatsSecurity,
    /// How many consumers.
    pub consumers: usize,
    /// How long the publisher sends.
    pub duration: Duration,
    /// Updates per second (the paper: 10).
    pub rate_hz: f64,
    /// How long before its nominal time the publisher sends an update.
    pub lead: Duration,
    /// An update more than this before its nominal time is early (the paper: 20 ms).
    pub early: Duration,
    /// An update more than this after its nominal time is late (the paper: 80 ms).
    pub late: Duration,
    /// The service level of the truth updates.
    pub level: ServiceLevel,
    /// How messages are encoded.
    pub encoding: Encoding,
    /// Threads that spin for the whole run.
    pub load_threads: usize,
    /// Background messages per second from a second publisher in the same group.
    pub load_rate: u64,
}

impl Default for WindowOptions {
    fn default() -> Self {
        WindowOptions {
            transport: TransportKind::Inproc,
            nats_url: glidepath::DEFAULT_NATS_URL.to_string(),
            nats_security: Default::default(),
            consumers: 1,
            duration: Duration::from_secs(10),
            rate_hz: 10.0,
            lead: Duration::ZERO,
            early: Duration::from_millis(20),
            late: Duration::from_millis(80),
            level: ServiceLevel::Agreed,
            encoding: Encoding::Xml,
            load_threads: 0,
            load_rate: 0,
        }
    }
}

/// One consumer's tally.
#[derive(Clone, Debug, Serialize)]
pub struct ConsumerReport {
    /// `consumer-K`.
    pub name: String,
    /// Updates received.
    pub received: u64,
    /// Within the window.
    pub on_time: u64,
    /// More than `early` before their nominal time.
    pub early: u64,
    /// More than `late` after it.
    pub late: u64,
    /// Never received.
    pub lost: u64,
    /// Arrival minus nominal time, milliseconds (negative: before it).
    pub offset_ms: Option<Summary>,
}

/// The whole run.
#[derive(Clone, Debug, Serialize)]
pub struct WindowReport {
    /// `inproc` or `nats`.
    pub transport: &'static str,
    /// The level of the truth updates.
    pub level: &'static str,
    /// The encoding.
    pub encoding: &'static str,
    /// Updates per second.
    pub rate_hz: f64,
    /// Updates sent.
    pub sent: u64,
    /// Encoded size of one update, bytes.
    pub size_bytes: usize,
    /// The window, milliseconds before and after the nominal time.
    pub early_ms: f64,
    /// See `early_ms`.
    pub late_ms: f64,
    /// The publisher's lead, milliseconds.
    pub lead_ms: f64,
    /// Spinning threads.
    pub load_threads: usize,
    /// Background messages sent.
    pub load_sent: u64,
    /// How late the publisher itself was in sending (send time minus the time it
    /// meant to send), milliseconds: the part of lateness that is the sender's
    /// scheduling, not the bus.
    pub publisher_lag_ms: Option<Summary>,
    /// Per consumer.
    pub consumers: Vec<ConsumerReport>,
}

impl WindowReport {
    /// Updates on time, early, late and lost over all consumers.
    pub fn totals(&self) -> (u64, u64, u64, u64) {
        self.consumers.iter().fold((0, 0, 0, 0), |t, c| {
            (t.0 + c.on_time, t.1 + c.early, t.2 + c.late, t.3 + c.lost)
        })
    }
}

fn config(opts: &WindowOptions, name: &str, group: &Subject) -> BusConfig {
    BusConfig {
        transport: opts.transport,
        nats_url: opts.nats_url.clone(),
        encoding: opts.encoding,
        name: name.to_string(),
        default_group: group.clone(),
        nats_security: opts.nats_security.clone(),
        ..BusConfig::default()
    }
}

/// A truth update: the paper's position and velocity (`D`), its number and nominal time.
fn truth(k: i32, nominal_ns: u64) -> Message {
    let t = k as f64 * 0.1;
    Message::new()
        .with("k", k)
        .with("t_ns", nominal_ns as i64)
        .with("x", 7000.0 + t)
        .with("y", 0.5 * t)
        .with("z", -0.25 * t)
        .with("vx", 1.0)
        .with("vy", 0.5)
        .with("vz", -0.25)
}

/// Sleeps until `deadline_ns` on [`monotonic_now_ns`]'s clock.
fn sleep_until(deadline_ns: u64) {
    let now = monotonic_now_ns();
    if deadline_ns > now {
        std::thread::sleep(Duration::from_nanos(deadline_ns - now));
    }
}

/// Runs the check.
pub fn run(opts: &WindowOptions) -> anyhow::Result<WindowReport> {
    anyhow::ensure!(opts.consumers >= 1, "the window check needs a consumer");
    anyhow::ensure!(
        opts.rate_hz > 0.0 && opts.rate_hz <= 10_000.0,
        "the update rate must be above 0 and at most 10000 Hz"
    );
    let period_ns = (1e9 / opts.rate_hz) as u64;
    let count = ((opts.duration.as_secs_f64() * opts.rate_hz).round() as u64).max(1);
    let count_i32 = i32::try_from(count).context("too many updates")?;
    let group = Subject::new(&format!("WINDOW{}", std::process::id()))?;
    let pattern = Pattern::new("FFTB.MMS.*.DATA.TRUTH.>")?;
    let subject = Subject::new(TRUTH_SUBJECT)?;
    let publisher = Bus::connect(&config(opts, "stars", &group))?;
    let mut probe = Vec::new();
    truth(0, monotonic_now_ns()).encode(opts.encoding, &mut probe)?;

    let mut consumers = Vec::new();
    for k in 0..opts.consumers {
        let name = format!("consumer-{k}");
        let bus = Bus::connect(&config(opts, &name, &group))?;
        let sub = bus.subscribe(&pattern)?;
        let (early_ns, late_ns) = (opts.early.as_nanos() as i64, opts.late.as_nanos() as i64);
        // Long enough for the last update, however late, but bounded.
        let patience = opts.late.max(Duration::from_millis(500)) * 4;
        consumers.push(std::thread::spawn(move || {
            let _bus = bus;
            let mut report = ConsumerReport {
                name,
                received: 0,
                on_time: 0,
                early: 0,
                late: 0,
                lost: 0,
                offset_ms: None,
            };
            let mut offsets = Vec::with_capacity(count as usize);
            let mut last = -1i32;
            while last + 1 < count_i32 {
                match sub.recv_timeout(patience) {
                    Ok(Some(Event::Message(d))) => {
                        let now = monotonic_now_ns() as i64;
                        let (Ok(k), Ok(nominal)) =
                            (d.message.get_i32("k"), d.message.get_i64("t_ns"))
                        else {
                            continue;
                        };
                        let offset = now - nominal;
                        report.received += 1;
                        if offset < -early_ns {
                            report.early += 1;
                        } else if offset > late_ns {
                            report.late += 1;
                        } else {
                            report.on_time += 1;
                        }
                        offsets.push(offset as f64 / 1e6);
                        last = last.max(k);
                    }
                    Ok(Some(Event::Membership(_))) => {}
                    Ok(None) | Err(_) => break,
                }
            }
            report.lost = count.saturating_sub(report.received);
            report.offset_ms = summarize(&mut offsets);
            report
        }));
    }

    let stop = Arc::new(AtomicBool::new(false));
    let spinners: Vec<_> = (0..opts.load_threads)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let mut x = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..10_000 {
                        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    }
                    std::hint::black_box(x);
                }
            })
        })
        .collect();
    let flood = if opts.load_rate > 0 {
        let bus = Bus::connect(&config(opts, "load", &group))?;
        let (stop, rate) = (stop.clone(), opts.load_rate);
        let filler = Message::new().with("fill", "x".repeat(200));
        Some(std::thread::spawn(move || -> anyhow::Result<u64> {
            let subject = Subject::new(LOAD_SUBJECT)?;
            let gap = 1e9 / rate as f64;
            let start = monotonic_now_ns();
            let mut sent = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let due = start + (sent as f64 * gap) as u64;
                sleep_until(due);
                bus.publish(&subject, &filler, ServiceLevel::Fifo)?;
                sent += 1;
            }
            bus.close();
            Ok(sent)
        }))
    } else {
        None
    };

    // Everyone is connected: the first update is for a moment from now.
    let t0 = monotonic_now_ns() + 200_000_000 + opts.lead.as_nanos() as u64;
    let mut lags = Vec::with_capacity(count as usize);
    for k in 0..count_i32 {
        let nominal = t0 + k as u64 * period_ns;
        let send_at = nominal - opts.lead.as_nanos() as u64;
        sleep_until(send_at);
        lags.push(monotonic_now_ns().saturating_sub(send_at) as f64 / 1e6);
        publisher.publish(&subject, &truth(k, nominal), opts.level)?;
    }
    let mut reports = Vec::new();
    for c in consumers {
        reports.push(
            c.join()
                .map_err(|_| anyhow::anyhow!("a consumer panicked"))?,
        );
    }
    stop.store(true, Ordering::Relaxed);
    for s in spinners {
        let _ = s.join();
    }
    let load_sent = match flood {
        Some(f) => f
            .join()
            .map_err(|_| anyhow::anyhow!("the background publisher panicked"))??,
        None => 0,
    };
    publisher.close();
    Ok(WindowReport {
        transport: opts.transport.name(),
        level: opts.level.name(),
        encoding: opts.encoding.name(),
        rate_hz: opts.rate_hz,
        sent: count,
        size_bytes: probe.len(),
        early_ms: opts.early.as_secs_f64() * 1e3,
        late_ms: opts.late.as_secs_f64() * 1e3,
        lead_ms: opts.lead.as_secs_f64() * 1e3,
        load_threads: opts.load_threads,
        load_sent,
        publisher_lag_ms: summarize(&mut lags),
        consumers: reports,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// In one process at 50 Hz for a second: everything arrives, and with a lead far
    /// beyond the early bound everything is early.
    #[test]
    fn updates_are_classified_against_the_window() {
        let opts = WindowOptions {
            consumers: 2,
            duration: Duration::from_secs(1),
            rate_hz: 50.0,
            ..WindowOptions::default()
        };
        let r = run(&opts).unwrap();
        assert_eq!(r.sent, 50);
        for c in &r.consumers {
            assert_eq!((c.received, c.lost), (50, 0), "{c:?}");
            assert_eq!(c.on_time + c.early + c.late, 50);
            assert_eq!(c.early, 0, "sent at the nominal time, never early: {c:?}");
        }
        let r = run(&WindowOptions {
            lead: Duration::from_millis(500),
            duration: Duration::from_millis(400),
            ..opts
        })
        .unwrap();
        for c in &r.consumers {
            assert_eq!((c.received, c.early), (20, 20), "{c:?}");
            assert!(c.offset_ms.as_ref().unwrap().max < 0.0, "{c:?}");
        }
    }
}

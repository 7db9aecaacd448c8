//! The user-space link emulator: a TCP relay between the hosts that delays what it
//! forwards and, by default, serialises it at the link's bandwidth.
//!
//! Why in user space: the kernel's `netem` is missing on the machines this runs on,
//! so nothing in the kernel can delay packets. Why serialise here too: the kernel's
//! token bucket (`tbf`, [`crate::lab::Lab::shape_kernel`]) lets a burst of up to its
//! bucket through at once, so a 1 KiB message that follows an idle moment crosses a
//! "1 Mbit/s" bucket in no time instead of the 8 ms a real line takes — exactly the
//! per-exchange cost the report's formula (1) is about.
//!
//! The model is a serial line per direction (one shared line in half duplex): what
//! the relay reads is cut into segments of at most 1448 bytes; a segment of `n`
//! bytes read at time `t` starts on the line at `max(t, line free)`, occupies it for
//! `wire(n) · 8 / bandwidth`, and is written out one `delay` after it has left the
//! line — so a long message arrives progressively, as on a real line, and its
//! receiver's acknowledgements flow back while the rest is still on the way. `wire(n)` adds each TCP segment's headers (Ethernet, IPv4,
//! TCP with timestamps: 66 bytes per 1448-byte segment), which is why a bulk transfer
//! sees about 96 % of the configured bandwidth, as the report's Table 1 does. What
//! the model leaves out: the acknowledgements of the reverse direction (they do not
//! take the line's time), and the relay's TCP ends see the short local round trip,
//! not the emulated one, so the window never caps throughput.
//!
//! Each forwarded direction is a reader thread and a writer thread with a bounded
//! queue between them (a slow reader holds the writer back through TCP, as a real
//! link would); the writer sleeps until each chunk's time with a 1 ns timer slack,
//! which keeps its error in the tens of microseconds.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::Context;
use bytes::Bytes;
use parking_lot::Mutex;

use crate::lab::{enter_namespace, Duplex};

/// TCP payload bytes per segment on an Ethernet link with the timestamp option.
pub const SEGMENT_PAYLOAD_BYTES: u64 = 1448;
/// Headers per segment on the wire: Ethernet 14, IPv4 20, TCP 20 + 12 (timestamps).
pub const SEGMENT_HEADER_BYTES: u64 = 66;

/// Segments one direction may hold between its reader and its writer (each at most
/// [`SEGMENT_PAYLOAD_BYTES`]): 11,586 × 1448 B bounds a direction at 16 MiB.
const QUEUE_SEGMENTS: usize = 11_586;
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// What the emulated link does.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinkSettings {
    /// Bandwidth of each direction (of the shared line in half duplex) in bit/s;
    /// `None`: not limited here (no shaping, or the kernel's `tbf` does it).
    pub bandwidth_bps: Option<u64>,
    /// One-way delay, added in each direction (the report's NIST Net setting: its
    /// Table 2 shows a round trip of twice the setting).
    pub delay: Duration,
    /// Whether both directions share the line.
    pub duplex: Duplex,
}

impl Default for LinkSettings {
    /// An ideal link: no bandwidth limit, no delay, full duplex.
    fn default() -> Self {
        LinkSettings {
            bandwidth_bps: None,
            delay: Duration::ZERO,
            duplex: Duplex::Full,
        }
    }
}

/// The bytes `payload` bytes of a TCP stream occupy on the wire.
pub fn wire_bytes(payload: u64) -> u64 {
    payload + payload.div_ceil(SEGMENT_PAYLOAD_BYTES) * SEGMENT_HEADER_BYTES
}

/// Which way data crosses the link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// From the server host to the remote host.
    Down = 0,
    /// From the remote host to the server host.
    Up = 1,
}

/// The line state one laboratory's relays share: the settings (changeable between
/// measurements) and when each line is next free.
pub struct Link {
    settings: Mutex<LinkSettings>,
    free_at: [Mutex<Instant>; 2],
    /// While recording: every chunk read, as (system-clock ns, direction, bytes).
    traffic: Mutex<Option<Vec<(u64, Direction, u32)>>>,
}

impl Link {
    /// A link with `settings`.
    pub fn new(settings: LinkSettings) -> Arc<Link> {
        let now = Instant::now();
        Arc::new(Link {
            settings: Mutex::new(settings),
            free_at: [Mutex::new(now), Mutex::new(now)],
            traffic: Mutex::new(None),
        })
    }

    /// When both lines will have carried everything scheduled so far (and its
    /// delay): the moment the link is idle.
    pub fn idle_at(&self) -> Instant {
        let delay = self.settings().delay;
        let down = *self.free_at[0].lock();
        let up = *self.free_at[1].lock();
        down.max(up) + delay
    }

    /// Starts recording what crosses the link (forgetting an earlier recording).
    pub fn record(&self) {
        *self.traffic.lock() = Some(Vec::new());
    }

    /// Stops recording; returns the TCP payload bytes that crossed each way
    /// (`[down, up]`) between `from_ns` and `to_ns` (system clock, inclusive), and
    /// in how many reads (each at least one segment on the line).
    pub fn recorded(&self, from_ns: u64, to_ns: u64) -> ([u64; 2], [u64; 2]) {
        let mut sums = [0u64; 2];
        let mut reads = [0u64; 2];
        for (at, direction, bytes) in self.traffic.lock().take().unwrap_or_default() {
            if (from_ns..=to_ns).contains(&at) {
                sums[direction as usize] += u64::from(bytes);
                reads[direction as usize] += 1;
            }
        }
        (sums, reads)
    }

    fn note(&self, direction: Direction, bytes: usize) {
        if let Some(log) = self.traffic.lock().as_mut() {
            log.push((crate::peer::now_ns(), direction, bytes as u32));
        }
    }

    /// Changes the settings; chunks already scheduled keep their times.
    pub fn set(&self, settings: LinkSettings) {
        *self.settings.lock() = settings;
    }

    /// The current settings.
    pub fn settings(&self) -> LinkSettings {
        *self.settings.lock()
    }

    /// When `bytes` bytes that reached the link at `arrived` going `direction` have
    /// crossed it (their last byte off the line, plus the delay).
    pub fn schedule(&self, direction: Direction, bytes: usize, arrived: Instant) -> Instant {
        let s = self.settings();
        let line = match s.duplex {
            Duplex::Full => &self.free_at[direction as usize],
            Duplex::Half => &self.free_at[0],
        };
        let left = match s.bandwidth_bps {
            None => arrived,
            Some(bps) => {
                let nanos = (wire_bytes(bytes as u64) as u128 * 8 * 1_000_000_000) / bps as u128;
                let mut free = line.lock();
                let start = arrived.max(*free);
                *free = start + Duration::from_nanos(nanos as u64);
                *free
            }
        };
        left + s.delay
    }
}

/// A relay listening on one address in one namespace and forwarding every
/// connection to one target through a [`Link`]. Stops (closing every connection)
/// when dropped.
pub struct Relay {
    local: SocketAddr,
    stop: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: Option<thread::JoinHandle<()>>,
}

impl Relay {
    /// Listens on `listen` inside namespace `namespace` (the calling thread's own
    /// when `None`) and forwards each connection to `target` (reached from that same
    /// namespace). Data from the connecting side travels [`Direction::Up`], replies
    /// [`Direction::Down`].
    pub fn start(
        namespace: Option<&str>,
        listen: SocketAddr,
        target: SocketAddr,
        link: Arc<Link>,
    ) -> anyhow::Result<Relay> {
        let stop = Arc::new(AtomicBool::new(false));
        let streams = Arc::new(Mutex::new(Vec::new()));
        let (bound_tx, bound_rx) = crossbeam_channel::bounded(1);
        let namespace = namespace.map(str::to_string);
        let (stop2, streams2) = (stop.clone(), streams.clone());
        let acceptor = thread::Builder::new()
            .name("netlab-relay".into())
            .spawn(move || {
                let listener = (|| -> io::Result<TcpListener> {
                    if let Some(ns) = &namespace {
                        enter_namespace(ns)?;
                    }
                    let l = TcpListener::bind(listen)?;
                    l.set_nonblocking(true)?;
                    Ok(l)
                })();
                let listener = match listener {
                    Ok(l) => {
                        let _ = bound_tx.send(l.local_addr());
                        l
                    }
                    Err(e) => {
                        let _ = bound_tx.send(Err(e));
                        return;
                    }
                };
                accept_loop(listener, target, link, stop2, streams2);
            })
            .context("starting the relay thread")?;
        let local = bound_rx
            .recv()
            .context("the relay thread ended before listening")?
            .with_context(|| format!("the link relay cannot listen on {listen}"))?;
        Ok(Relay {
            local,
            stop,
            streams,
            acceptor: Some(acceptor),
        })
    }

    /// The address it listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for s in self.streams.lock().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
        if let Some(t) = self.acceptor.take() {
            let _ = t.join();
        }
    }
}

fn accept_loop(
    listener: TcpListener,
    target: SocketAddr,
    link: Arc<Link>,
    stop: Arc<AtomicBool>,
    streams: Arc<Mutex<Vec<TcpStream>>>,
) {
    while !stop.load(Ordering::Relaxed) {
        let client = match listener.accept() {
            Ok((c, _)) => c,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(10));
                continue;
            }
            Err(_) => continue,
        };
        // Threads started here inherit this thread's namespace, so the connection to
        // the target is made from the relay's namespace.
        let server = match TcpStream::connect(target) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("netlab relay: cannot reach {target}: {e}");
                continue;
            }
        };
        let _ = client.set_nonblocking(false);
        for s in [&client, &server] {
            let _ = s.set_nodelay(true);
        }
        let pairs = (|| -> io::Result<_> {
            Ok([
                (client.try_clone()?, server.try_clone()?, Direction::Up),
                (server.try_clone()?, client.try_clone()?, Direction::Down),
            ])
        })();
        let Ok(pairs) = pairs else { continue };
        streams.lock().extend([client, server]);
        for (from, to, direction) in pairs {
            forward(from, to, direction, link.clone());
        }
    }
}

/// Starts the reader and writer threads of one direction.
fn forward(mut from: TcpStream, mut to: TcpStream, direction: Direction, link: Arc<Link>) {
    let (tx, rx) = crossbeam_channel::bounded::<(Instant, Bytes)>(QUEUE_SEGMENTS);
    let _ = thread::Builder::new()
        .name("netlab-read".into())
        .spawn(move || {
            let mut buf = vec![0u8; READ_CHUNK_BYTES];
            loop {
                match from.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => {
                        link.note(direction, n);
                        let arrived = Instant::now();
                        let chunk = Bytes::copy_from_slice(&buf[..n]);
                        let mut at = 0;
                        while at < n {
                            let end = (at + SEGMENT_PAYLOAD_BYTES as usize).min(n);
                            let due = link.schedule(direction, end - at, arrived);
                            if tx.send((due, chunk.slice(at..end))).is_err() {
                                return;
                            }
                            at = end;
                        }
                    }
                }
            }
            // Dropping `tx` lets the writer finish what is queued, then close.
        });
    let _ = thread::Builder::new()
        .name("netlab-write".into())
        .spawn(move || {
            precise_timers();
            for (due, chunk) in rx {
                sleep_until(due);
                if to.write_all(&chunk).is_err() {
                    break;
                }
            }
            let _ = to.shutdown(Shutdown::Write);
        });
}

/// Asks the kernel to wake this thread's sleeps without the default 50 µs slack.
pub fn precise_timers() {
    // SAFETY: prctl with PR_SET_TIMERSLACK takes a plain integer.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
}

/// Sleeps until `due` (returns at once when it has passed).
pub fn sleep_until(due: Instant) {
    let now = Instant::now();
    if due > now {
        thread::sleep(due - now);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_bytes_add_a_header_per_segment() {
        assert_eq!(wire_bytes(0), 0);
        assert_eq!(wire_bytes(1), 67);
        assert_eq!(wire_bytes(1448), 1514);
        assert_eq!(wire_bytes(1449), 1449 + 132);
    }

    #[test]
    fn a_full_duplex_line_serialises_each_direction_on_its_own() {
        let link = Link::new(LinkSettings {
            bandwidth_bps: Some(1_000_000),
            delay: Duration::from_millis(5),
            duplex: Duplex::Full,
        });
        // After the lines' creation, when both are free.
        let t0 = Instant::now() + Duration::from_millis(1);
        // 1448 B payload = 1514 B on the wire = 12.112 ms at 1 Mbit/s, plus 5 ms.
        let first = link.schedule(Direction::Up, 1448, t0);
        assert_eq!(first - t0, Duration::from_micros(12_112 + 5_000));
        // The next chunk waits for the line, the other direction does not.
        let second = link.schedule(Direction::Up, 1448, t0);
        assert_eq!(second - t0, Duration::from_micros(2 * 12_112 + 5_000));
        let down = link.schedule(Direction::Down, 1448, t0);
        assert_eq!(down - t0, Duration::from_micros(12_112 + 5_000));
    }

    #[test]
    fn a_half_duplex_line_is_shared_by_both_directions() {
        let link = Link::new(LinkSettings {
            bandwidth_bps: Some(1_000_000),
            delay: Duration::ZERO,
            duplex: Duplex::Half,
        });
        let t0 = Instant::now() + Duration::from_millis(1);
        link.schedule(Direction::Up, 1448, t0);
        let down = link.schedule(Direction::Down, 1448, t0);
        assert_eq!(down - t0, Duration::from_micros(2 * 12_112));
    }

    #[test]
    fn an_unlimited_link_only_delays() {
        let t0 = Instant::now() + Duration::from_millis(1);
        let link = Link::new(LinkSettings {
            delay: Duration::from_millis(10),
            ..LinkSettings::default()
        });
        assert_eq!(
            link.schedule(Direction::Down, 1 << 20, t0) - t0,
            Duration::from_millis(10)
        );
    }

    #[test]
    fn the_relay_forwards_both_ways_with_the_delay() {
        // An echo server and a relay in this process's own namespace (no root needed).
        let echo = TcpListener::bind("127.0.0.1:0").unwrap();
        let target = echo.local_addr().unwrap();
        thread::spawn(move || {
            let (mut s, _) = echo.accept().unwrap();
            let mut buf = [0u8; 4096];
            loop {
                match s.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => s.write_all(&buf[..n]).unwrap(),
                }
            }
        });
        let delay = Duration::from_millis(20);
        let link = Link::new(LinkSettings {
            delay,
            ..LinkSettings::default()
        });
        let relay = Relay::start(None, "127.0.0.1:0".parse().unwrap(), target, link).unwrap();
        let mut c = TcpStream::connect(relay.local_addr()).unwrap();
        c.set_nodelay(true).unwrap();
        let mut got = [0u8; 5];
        let start = Instant::now();
        c.write_all(b"hello").unwrap();
        c.read_exact(&mut got).unwrap();
        let rtt = start.elapsed();
        assert_eq!(&got, b"hello");
        // Two crossings of 20 ms each; a generous upper bound for a busy machine.
        assert!(
            rtt >= 2 * delay,
            "round trip {rtt:?} is shorter than twice the delay"
        );
        assert!(
            rtt < 2 * delay + Duration::from_millis(500),
            "round trip {rtt:?}"
        );
    }
}

//! One laboratory set up for measuring ([`Testbed`]): the two hosts, a `nats-server`
//! and a `glidepath server` on the server host, the link relay in front of the NATS
//! port, and the measurements made through it — the report's Tables 1 and 2 (bulk
//! throughput and round trip through the link) and one exchange of the benchmark
//! program ([`Testbed::exchange`]).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use std::sync::Arc;

use crate::lab::{enter_namespace, Duplex, Host, Lab, SERVER_HOST_ADDR};
use crate::link::{Link, LinkSettings, Relay};
use crate::peer::{Mode, Order, PeerReport, Role};

/// The NATS port on the server host's loopback (federates there connect to it
/// directly, as the report's federate next to its CRC did).
const NATS_PORT: u16 = 4222;
/// The relay's port on the server host's link address (federates on the remote host
/// connect to it, so their traffic crosses the emulated link).
const RELAY_PORT: u16 = 4223;

/// The benchmark federates' request timeout (`GLIDEPATH_REQUEST_TIMEOUT_MS`): ten
/// minutes, since the grid's slowest points queue minutes of data on the link.
const PEER_REQUEST_TIMEOUT_MS: u64 = 600_000;

/// The longest [`Testbed::exchange`] waits for the line to drain what the previous
/// run left on it.
const LINE_DRAIN_MAX: Duration = Duration::from_secs(600);

/// Which emulator limits the bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Shaper {
    /// The relay serialises every chunk at the bandwidth (a serial line) and delays
    /// it: delay and transmission add. The default.
    Relay,
    /// The kernel's token bucket (`tc tbf`) on the veth pair limits the bandwidth,
    /// the relay only delays: bursts up to the bucket pass unserialised.
    Tbf,
}

/// The emulated link of one measurement.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LinkConfig {
    /// Bandwidth per direction (shared in half duplex), bit/s; `None`: unlimited.
    pub bandwidth_bps: Option<u64>,
    /// One-way delay in milliseconds.
    pub delay_ms: f64,
    /// Full or half duplex.
    pub duplex: Duplex,
}

/// One run of the benchmark program.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExchangeSpec {
    /// Synchronised or asynchronous.
    pub mode: Mode,
    /// The data messages' order (synchronised mode).
    pub order: Order,
    /// Both federates send (two-way) or one sends to the other (one-way).
    pub two_way: bool,
    /// Payload bytes per message.
    pub size: usize,
    /// Exchanges.
    pub count: u64,
    /// Synchronised mode's lookahead in steps (1: lock-step).
    pub lookahead: u64,
    /// Time-only federates on the server host (the report's 3.3).
    pub tickers_server: usize,
    /// Time-only federates on the remote host.
    pub tickers_remote: usize,
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExchangeResult {
    /// From the first send to the last receipt, in milliseconds.
    pub total_ms: f64,
    /// `total_ms / count`: the left-hand side of the report's formula (1).
    pub per_exchange_ms: f64,
    /// TCP payload bytes per exchange that crossed the link from the server host
    /// (data to the remote receiver, the sender's time statuses, …) while the
    /// exchange ran.
    pub down_bytes_per_exchange: f64,
    /// The same from the remote host (its time statuses, acknowledgements, …).
    pub up_bytes_per_exchange: f64,
    /// In how many reads of the relay (writes of the sending side) the bytes came,
    /// per exchange, down and up: each is at least one segment on the line.
    pub reads_per_exchange: [f64; 2],
    /// Every peer's report.
    pub peers: Vec<PeerReport>,
}

/// A laboratory ready to measure. Dropping it stops everything and removes the
/// namespaces.
pub struct Testbed {
    // Field order is drop order: the relay (kept only to be dropped first) has
    // threads in the lab's namespace.
    _relay: Relay,
    link: Arc<Link>,
    shaper: Shaper,
    program: PathBuf,
    peer_env: Vec<(String, String)>,
    next_federation: u64,
    lab: Lab,
}

impl Testbed {
    /// Builds the lab and starts `nats_server` and `program server` (the glidepath
    /// executable) on the server host, then the relay. Call from the main thread
    /// (see [`Lab::spawn`]).
    pub fn start(program: &Path, nats_server: &Path, shaper: Shaper) -> anyhow::Result<Testbed> {
        let mut lab = Lab::create()?;
        let ns = lab.namespace(Host::Server).to_string();
        let port = NATS_PORT.to_string();
        // nats-server logs its start-up to stderr: not the laboratory's output.
        let mut nats = lab.command(Host::Server, nats_server);
        nats.args(["-a", "127.0.0.1", "-p", &port])
            .stderr(Stdio::null());
        lab.start(nats)?;
        wait_for_port(&ns, SocketAddr::from(([127, 0, 0, 1], NATS_PORT)))
            .context("waiting for nats-server on the server host")?;
        let url = format!("nats://127.0.0.1:{NATS_PORT}");
        // Errors only: it warns that saves stay in memory (no JetStream here).
        let mut executive = lab.command(Host::Server, program);
        executive
            .args(["server", "--nats-url", &url])
            .env("GLIDEPATH_LOG", "error");
        let server = lab.start(executive)?;
        let stdout = lab
            .child(server)
            .stdout
            .take()
            .ok_or_else(|| anyhow!("no stdout from glidepath server"))?;
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .context("reading glidepath server's first line")?;
        if !line.contains("ready") {
            bail!("glidepath server did not start: {line:?}");
        }
        let link = Link::new(LinkSettings::default());
        let relay = Relay::start(
            Some(&ns),
            SocketAddr::from((SERVER_HOST_ADDR, RELAY_PORT)),
            SocketAddr::from(([127, 0, 0, 1], NATS_PORT)),
            link.clone(),
        )?;
        Ok(Testbed {
            _relay: relay,
            link,
            shaper,
            program: program.to_path_buf(),
            // A reply behind a slow link's backlog (64 KiB messages at 128 kbit/s
            // take 4 s each) must not fail the federate.
            peer_env: vec![(
                glidepath::REQUEST_TIMEOUT_MS_ENV.to_string(),
                PEER_REQUEST_TIMEOUT_MS.to_string(),
            )],
            next_federation: 0,
            lab,
        })
    }

    /// Sets an environment variable of every benchmark federate started from now on
    /// (`GLIDEPATH_BUNDLE_BYTES`, say: the federates read their RTI settings from it).
    pub fn set_peer_env(&mut self, name: &str, value: &str) {
        self.peer_env.retain(|(n, _)| n != name);
        self.peer_env.push((name.to_string(), value.to_string()));
    }

    /// Removes a variable [`Testbed::set_peer_env`] set.
    pub fn remove_peer_env(&mut self, name: &str) {
        self.peer_env.retain(|(n, _)| n != name);
    }

    /// Which emulator limits the bandwidth.
    pub fn shaper(&self) -> Shaper {
        self.shaper
    }

    /// The laboratory.
    pub fn lab(&self) -> &Lab {
        &self.lab
    }

    /// Sets the emulated link for what follows.
    pub fn configure(&mut self, link: LinkConfig) -> anyhow::Result<()> {
        let delay = Duration::from_secs_f64(link.delay_ms.max(0.0) / 1000.0);
        match self.shaper {
            Shaper::Relay => {
                self.lab.shape_kernel(None)?;
                self.link.set(LinkSettings {
                    bandwidth_bps: link.bandwidth_bps,
                    delay,
                    duplex: link.duplex,
                });
            }
            Shaper::Tbf => {
                self.lab
                    .shape_kernel(link.bandwidth_bps.map(|b| (b, link.duplex)))?;
                self.link.set(LinkSettings {
                    bandwidth_bps: None,
                    delay,
                    duplex: link.duplex,
                });
            }
        }
        Ok(())
    }

    /// Runs the benchmark program once: a sender on the server host and a receiver
    /// on the remote host (two senders-and-receivers for two-way), plus the
    /// time-only federates, each a process of its own.
    pub fn exchange(&mut self, spec: &ExchangeSpec) -> anyhow::Result<ExchangeResult> {
        // What the previous run left on the line (data for federates that have
        // left, still being serialised at 128 kbit/s) drains first, as it would on a
        // real line, so the next run's connections do not queue behind it.
        let idle = self.link.idle_at();
        let now = Instant::now();
        if idle > now {
            let wait = idle - now;
            if wait > LINE_DRAIN_MAX {
                bail!("the link is still busy for {wait:?} with what the previous run sent");
            }
            thread::sleep(wait);
        }
        self.next_federation += 1;
        let federation = format!("netlab-{}-{}", std::process::id(), self.next_federation);
        let (first, second) = if spec.two_way {
            (Role::Both, Role::Both)
        } else {
            (Role::Sender, Role::Receiver)
        };
        let mut members = vec![("a", first, Host::Server), ("b", second, Host::Remote)];
        let names: Vec<String> = (0..spec.tickers_server)
            .map(|i| format!("tick-s{i}"))
            .chain((0..spec.tickers_remote).map(|i| format!("tick-r{i}")))
            .collect();
        for (i, name) in names.iter().enumerate() {
            let host = if i < spec.tickers_server {
                Host::Server
            } else {
                Host::Remote
            };
            members.push((name.as_str(), Role::Ticker, host));
        }
        let total = members.len().to_string();
        self.link.record();
        let timeout_s = 1800.to_string();
        let mut children = Vec::new();
        for (i, (name, role, host)) in members.iter().enumerate() {
            let url = match host {
                Host::Server => format!("nats://127.0.0.1:{NATS_PORT}"),
                Host::Remote => format!("nats://{SERVER_HOST_ADDR}:{RELAY_PORT}"),
            };
            let mut args = vec![
                "netlab".to_string(),
                "peer".into(),
                "--nats-url".into(),
                url,
                "--federation".into(),
                federation.clone(),
                "--name".into(),
                name.to_string(),
                "--role".into(),
                enum_name(role),
                "--mode".into(),
                enum_name(&spec.mode),
                "--order".into(),
                enum_name(&spec.order),
                "--size".into(),
                spec.size.to_string(),
                "--count".into(),
                spec.count.to_string(),
                "--lookahead".into(),
                spec.lookahead.max(1).to_string(),
                "--members".into(),
                total.clone(),
                "--timeout-s".into(),
                timeout_s.clone(),
            ];
            if i == 0 {
                args.push("--leader".into());
            }
            let mut command = self.lab.command(*host, &self.program);
            command
                .args(&args)
                .envs(self.peer_env.iter().map(|(k, v)| (k, v)));
            children.push(self.lab.start(command)?);
        }
        let mut peers = Vec::new();
        for index in children {
            let child = self.lab.child(index);
            let mut out = String::new();
            if let Some(mut stdout) = child.stdout.take() {
                stdout
                    .read_to_string(&mut out)
                    .context("reading a peer's report")?;
            }
            let status = child.wait().context("waiting for a peer")?;
            if !status.success() {
                bail!("a benchmark peer failed ({status}); its error is above");
            }
            let line = out.lines().last().unwrap_or_default();
            let report: PeerReport = serde_json::from_str(line)
                .with_context(|| format!("a peer's report is not JSON: {line:?}"))?;
            peers.push(report);
        }
        self.lab.forget_exited();
        let first_send = peers.iter().filter_map(|p| p.first_send_ns).min();
        let last_receive = peers.iter().filter_map(|p| p.last_receive_ns).max();
        let (Some(first), Some(last)) = (first_send, last_receive) else {
            bail!("the exchange sent or received nothing");
        };
        let received: u64 = peers.iter().map(|p| p.received).sum();
        let expected = spec.count * if spec.two_way { 2 } else { 1 };
        if received != expected {
            bail!("the exchange delivered {received} messages, {expected} expected");
        }
        let total_ms = last.saturating_sub(first) as f64 / 1e6;
        let ([down, up], [reads_down, reads_up]) = self.link.recorded(first, last);
        let count = spec.count as f64;
        Ok(ExchangeResult {
            total_ms,
            per_exchange_ms: total_ms / count,
            down_bytes_per_exchange: down as f64 / count,
            up_bytes_per_exchange: up as f64 / count,
            reads_per_exchange: [reads_down as f64 / count, reads_up as f64 / count],
            peers,
        })
    }

    /// The report's Table 1 for the current link: goodput of one bulk TCP transfer
    /// from the remote host to the server host through the link, in bit/s. Sends
    /// about `seconds` worth at the configured bandwidth (at least 64 KiB, at most
    /// 64 MiB).
    pub fn measure_bandwidth(&self, seconds: f64) -> anyhow::Result<f64> {
        let configured = self.link_bandwidth();
        let bytes = configured
            .map_or(64 << 20, |bps| (bps as f64 / 8.0 * seconds) as usize)
            .clamp(64 << 10, 64 << 20);
        let ns = self.lab.namespace(Host::Server).to_string();
        let sink = in_namespace(&ns, || TcpListener::bind("127.0.0.1:0"))?;
        let target = sink.local_addr()?;
        // The clock runs from the sender's first write to the sink's last read (one
        // process, one monotonic clock), as an ftp transfer time does.
        let reader = thread::spawn(move || -> std::io::Result<(usize, Instant)> {
            let (mut s, _) = sink.accept()?;
            let mut buf = vec![0u8; 64 << 10];
            let mut total = 0;
            loop {
                let n = s.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                total += n;
            }
            Ok((total, Instant::now()))
        });
        let (relay, remote) = self.probe_relay(target)?;
        let to = relay.local_addr();
        let started = in_namespace(&remote, move || -> std::io::Result<Instant> {
            let mut c = TcpStream::connect(to)?;
            let started = Instant::now();
            let chunk = vec![0x33u8; 64 << 10];
            let mut left = bytes;
            while left > 0 {
                let n = left.min(chunk.len());
                c.write_all(&chunk[..n])?;
                left -= n;
            }
            Ok(started)
        })?;
        let (total, finished) = reader
            .join()
            .map_err(|_| anyhow!("the bandwidth sink panicked"))??;
        if total != bytes {
            bail!("the bulk transfer delivered {total} of {bytes} bytes");
        }
        let elapsed = finished.saturating_duration_since(started);
        Ok(total as f64 * 8.0 / elapsed.as_secs_f64().max(1e-9))
    }

    /// The report's Table 2 for the current link: the median round trip of a 1-byte
    /// echo from the remote host to the server host and back through the link, in
    /// milliseconds, over `samples` round trips.
    pub fn measure_rtt(&self, samples: usize) -> anyhow::Result<f64> {
        let ns = self.lab.namespace(Host::Server).to_string();
        let echo = in_namespace(&ns, || TcpListener::bind("127.0.0.1:0"))?;
        let target = echo.local_addr()?;
        thread::spawn(move || {
            if let Ok((mut s, _)) = echo.accept() {
                let _ = s.set_nodelay(true);
                let mut b = [0u8; 1];
                while s.read_exact(&mut b).is_ok() && s.write_all(&b).is_ok() {}
            }
        });
        let (relay, remote) = self.probe_relay(target)?;
        let to = relay.local_addr();
        let mut rtts = in_namespace(&remote, move || -> std::io::Result<Vec<f64>> {
            let mut c = TcpStream::connect(to)?;
            c.set_nodelay(true)?;
            let mut b = [7u8; 1];
            let mut rtts = Vec::with_capacity(samples);
            for _ in 0..samples.max(1) {
                let t = Instant::now();
                c.write_all(&b)?;
                c.read_exact(&mut b)?;
                rtts.push(t.elapsed().as_secs_f64() * 1000.0);
            }
            Ok(rtts)
        })?;
        rtts.sort_by(f64::total_cmp);
        Ok(rtts[rtts.len() / 2])
    }

    /// A relay through the link from the server host's link address (any port) to
    /// `target` on the server host, and the remote host's namespace to reach it from:
    /// the path the Tables 1 and 2 probes take.
    fn probe_relay(&self, target: SocketAddr) -> anyhow::Result<(Relay, String)> {
        let relay = Relay::start(
            Some(self.lab.namespace(Host::Server)),
            SocketAddr::from((SERVER_HOST_ADDR, 0)),
            target,
            self.link.clone(),
        )?;
        Ok((relay, self.lab.namespace(Host::Remote).to_string()))
    }

    fn link_bandwidth(&self) -> Option<u64> {
        match self.shaper {
            Shaper::Relay => self.link.settings().bandwidth_bps,
            Shaper::Tbf => self.lab.kernel_bandwidth(),
        }
    }
}

/// Runs `f` on a thread of its own inside namespace `ns` and returns its result.
pub fn in_namespace<T: Send + 'static>(
    ns: &str,
    f: impl FnOnce() -> std::io::Result<T> + Send + 'static,
) -> anyhow::Result<T> {
    let ns = ns.to_string();
    thread::spawn(move || -> std::io::Result<T> {
        enter_namespace(&ns)?;
        f()
    })
    .join()
    .map_err(|_| anyhow!("a thread in namespace panicked"))?
    .map_err(Into::into)
}

/// Waits up to 20 s until something inside namespace `ns` listens on `addr`.
pub fn wait_for_port(ns: &str, addr: SocketAddr) -> anyhow::Result<()> {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if in_namespace(ns, move || TcpStream::connect(addr)).is_ok() {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("nothing listens on {addr} after 20 s");
        }
        thread::sleep(Duration::from_millis(50));
    }
}

fn enum_name<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

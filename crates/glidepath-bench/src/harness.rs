//! What every suite shares: the options of `glidepath bench`, a running setup
//! ([`Bench`]: the RTI on the chosen transport, the NATS executive when we host it,
//! fresh federations of the benchmark FOM), federates that deliver callbacks the same
//! way in both process models ([`Member`]), the raw peers' plumbing (a tokio runtime
//! with async-nats clients, a wait-strategy-aware channel receive), payload stamps,
//! busy work, and the progress hook.
//!
//! Suites are written once: they join [`Member`]s, call HLA services through them
//! (`Deref` to [`Federate`]) and read callbacks with [`Member::next_callback`],
//! whichever process model and wait strategy the options chose.

use std::ops::Deref;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bytes::Bytes;
use crossbeam_channel::{Receiver, TryRecvError};
use glidepath::{
    BundleConfig, Callback, Federate, FederateAmbassador, Fom, FomModule, JoinOptions,
    ProcessModel, ResignAction, Rti, RtiConfig, TransportKind, WaitStrategy,
};

/// The benchmark FOM module, embedded so the binary runs from any directory.
pub const BENCHMARK_FOM: &str = include_str!("../../../foms/benchmark.xml");

/// How long any single wait for a message may take before a suite gives up and
/// reports the rest as lost. Generous: only a dead peer takes this long.
pub const RECEIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which transport the glidepath side of a suite runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TransportChoice {
    /// Every federate in this process on the in-process bus; raw peer: channels.
    #[default]
    Inproc,
    /// Through a NATS server; raw peer: async-nats publish/subscribe on the same server.
    Nats,
    /// Through shared-memory rings (a system this process hosts); raw peer: the same
    /// rings without glidepath (`glidepath_transport::shm::raw`).
    Shm,
}

impl TransportChoice {
    /// The name used on the command line and in results.
    pub fn name(self) -> &'static str {
        match self {
            TransportChoice::Inproc => "inproc",
            TransportChoice::Nats => "nats",
            TransportChoice::Shm => "shm",
        }
    }
}

/// Everything `glidepath bench` can be told. Suites read what applies to them and
/// take their own defaults where a field is empty (an empty `sizes` or
/// `subscribers`, a zero `count` or `federates`), since the papers' sweeps differ by suite.
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The glidepath side's transport. Default inproc: needs no server.
    pub transport: TransportChoice,
    /// The NATS server for `Nats` (and for the raw NATS peer).
    pub nats_url: String,
    /// TLS and credentials for that server (glidepath's connections and the raw peer's).
    pub nats_security: glidepath::NatsSecurity,
    /// Payload sizes in bytes; empty means the suite's own sweep.
    pub sizes: Vec<usize>,
    /// Messages (or grants) per configuration; 0 means the suite's default.
    pub count: u64,
    /// Federates taking part; 0 means the suite's default.
    pub federates: usize,
    /// Subscriber counts swept; empty means the suite's default sweep.
    pub subscribers: Vec<usize>,
    /// How callbacks are delivered. Default evoked, the HLA default.
    pub process_model: ProcessModel,
    /// How delivering threads wait (and how raw peers wait, so the comparison is fair).
    pub wait: WaitStrategy,
    /// Bundling: longest a message waits in a bundle (NATS only).
    pub bundle_time_us: Option<u64>,
    /// Bundling: largest bundle in bytes; `Some(0)` or `None` leaves bundling off (NATS only).
    pub bundle_bytes: Option<usize>,
    /// Reliable delivery over core NATS: the sender's window in envelopes; `Some(0)`
    /// turns it off, `None` keeps the default (NATS only).
    pub reliable_window_envelopes: Option<usize>,
    /// Data distribution management on the NATS wire: slices per axis of the cell
    /// grid; `Some(0)` sends everything on the topics' subjects, `None` keeps the
    /// default (NATS only).
    pub ddm_cells: Option<u32>,
    /// ddm: also a run with every subscriber's attribute scope advisory switch on.
    pub scope_advisories: bool,
    /// Also run the raw peer and report the ratios.
    pub raw: bool,
    /// Busy work in microseconds per cycle at both ends (latency's compute load).
    pub compute_us: u64,
    /// A third federate floods best-effort traffic during the latency suite.
    pub background_load: bool,
    /// Lookahead for the time-advance suite. Default 1, the thesis's setting.
    pub lookahead: f64,
    /// The latency suite's ponger runs in a process of its own (this program again),
    /// as the peers' figures are measured (nats and shm).
    pub processes: bool,
    /// For `shm`: join this system instead of hosting one of the run's own (how a
    /// child process of `processes` finds its parent's).
    pub shm_name: Option<String>,
    /// Run as one federate of this federation (a child process of `processes`,
    /// `harness::MemberProcess`), instead of measuring: the latency suite's ponger,
    /// a time-advance federate, a throughput receiver, a fanout subscriber or a
    /// loopback repeater, number `member_index`.
    pub member_of: Option<String>,
    /// Which of the suite's federates the child process is (`member_of`).
    pub member_index: usize,
    /// What the child process does, where a suite has more than one part (`fanout`:
    /// `send-receive` or `throughput`).
    pub member_role: Option<String>,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            transport: TransportChoice::Inproc,
            nats_url: glidepath::DEFAULT_NATS_URL.to_string(),
            nats_security: Default::default(),
            sizes: Vec::new(),
            count: 0,
            federates: 0,
            subscribers: Vec::new(),
            process_model: ProcessModel::Evoked,
            wait: WaitStrategy::Park,
            bundle_time_us: None,
            bundle_bytes: None,
            reliable_window_envelopes: None,
            ddm_cells: None,
            scope_advisories: false,
            raw: false,
            compute_us: 0,
            background_load: false,
            lookahead: 1.0,
            processes: false,
            shm_name: None,
            member_of: None,
            member_index: 0,
            member_role: None,
        }
    }
}

impl BenchOptions {
    /// The sizes to sweep: the options' list, or `default` when none was given.
    pub fn sizes_or(&self, default: &[usize]) -> Vec<usize> {
        if self.sizes.is_empty() {
            default.to_vec()
        } else {
            self.sizes.clone()
        }
    }

    /// The count to use: the options' count, or `default` when none was given.
    pub fn count_or(&self, default: u64) -> u64 {
        if self.count == 0 {
            default
        } else {
            self.count
        }
    }

    /// The subscriber counts to sweep: the options' list, or `default`.
    pub fn subscribers_or(&self, default: &[usize]) -> Vec<usize> {
        if self.subscribers.is_empty() {
            default.to_vec()
        } else {
            self.subscribers.clone()
        }
    }

    /// The peer counts of a one-to-N suite (receivers, repeaters): `--subscribers`,
    /// else `--federates` minus the one measuring federate, else one. A zero count is
    /// refused with a message naming the suite and what it needs.
    pub fn peers(&self, suite: &str, what: &str) -> anyhow::Result<Vec<usize>> {
        let peers = if self.subscribers.is_empty() && self.federates > 1 {
            vec![self.federates - 1]
        } else {
            self.subscribers_or(&[1])
        };
        if peers.contains(&0) {
            anyhow::bail!("{suite} needs at least one {what}: --subscribers must be 1 or more");
        }
        Ok(peers)
    }

    /// The federate count to use: the options' count, or `default`.
    pub fn federates_or(&self, default: usize) -> usize {
        if self.federates == 0 {
            default
        } else {
            self.federates
        }
    }

    /// `evoked` or `immediate`, as results spell it.
    pub fn process_model_name(&self) -> &'static str {
        match self.process_model {
            ProcessModel::Evoked => "evoked",
            ProcessModel::Immediate => "immediate",
        }
    }

    /// A result row with this run's identity (suite, variant, transport, model, wait).
    pub fn result(&self, suite: &str, variant: &str) -> crate::result::BenchResult {
        crate::result::BenchResult::new(
            suite,
            variant,
            self.transport.name(),
            self.process_model_name(),
            self.wait.name(),
        )
    }

    /// The RTI configuration these options describe.
    pub fn rti_config(&self) -> RtiConfig {
        let mut config = RtiConfig::default();
        config.transport = match self.transport {
            TransportChoice::Inproc => TransportKind::Inproc,
            TransportChoice::Nats => TransportKind::Nats,
            TransportChoice::Shm => TransportKind::Shm,
        };
        config.nats_url = self.nats_url.clone();
        config.nats_security = self.nats_security.clone();
        let mut bundle = BundleConfig::default();
        if let Some(bytes) = self.bundle_bytes {
            bundle.bundle_bytes_max = bytes;
        }
        if let Some(us) = self.bundle_time_us {
            bundle.bundle_time_ns_max = us.saturating_mul(1000);
        }
        config.bundle = bundle;
        if let Some(window) = self.reliable_window_envelopes {
            config.reliable_window_envelopes = window;
        }
        if let Some(cells) = self.ddm_cells {
            config.ddm_cells = cells;
        }
        config
    }
}

/// How long a wait strategy spins before it sleeps (the shared-memory rings' readers
/// and the raw ring peer follow the federates' strategy).
pub fn spin_of(wait: WaitStrategy) -> std::time::Duration {
    match wait {
        WaitStrategy::Park => std::time::Duration::ZERO,
        WaitStrategy::SpinPark { spin } => spin,
        WaitStrategy::Spin => std::time::Duration::from_secs(1),
    }
}

/// Fails for a suite that has no raw peer on shared memory yet.
pub fn no_raw_shm(opts: &BenchOptions, suite: &str) -> anyhow::Result<()> {
    if opts.raw && opts.transport == TransportChoice::Shm {
        anyhow::bail!(
            "{suite}: no raw shared-memory peer yet (latency and throughput have one); run without --raw"
        );
    }
    Ok(())
}

/// Reports progress of a suite; the CLI draws a bar, tests pass [`NoProgress`].
/// Suites call [`Progress::stage`] when a configuration starts and
/// [`Progress::set`] as messages go (every few thousand is enough).
pub trait Progress: Sync {
    /// `done` of `total` steps of the current stage are finished.
    fn set(&self, done: u64, total: u64);
    /// A new stage starts (for example `latency 1024 B`).
    fn stage(&self, _label: &str) {}
}

/// Progress nobody watches.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn set(&self, _done: u64, _total: u64) {}
}

/// A running setup: the RTI on the chosen transport, the executive server when this
/// process hosts it, and a source of fresh federation names.
pub struct Bench {
    rti: Rti,
    /// The shared-memory system's name, on `shm`.
    shm_system: Option<String>,
    /// The executive we started because none answered on the NATS server; dropped
    /// (stopped) after the RTI.
    executive: Option<glidepath::ExecutiveServer>,
    fom: Fom,
    opts: BenchOptions,
    /// Distinguishes this run's federations from other runs on a shared NATS server.
    run_id: String,
    next_federation: AtomicU64,
}

impl std::fmt::Debug for Bench {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bench")
            .field("transport", &self.rti.transport_name())
            .field("hosts_executive", &self.executive.is_some())
            .field("run_id", &self.run_id)
            .finish_non_exhaustive()
    }
}

impl Bench {
    /// Builds the RTI the options describe. For NATS: fails with a message saying
    /// so when nothing listens at the URL, and starts the executive in this process
    /// when no `glidepath server` answers there.
    pub fn start(opts: &BenchOptions) -> anyhow::Result<Bench> {
        let fom = Fom::merge(&[FomModule::parse_str("benchmark.xml", BENCHMARK_FOM)
            .context("parsing the embedded benchmark FOM")?])
        .context("merging the benchmark FOM")?;
        let executive = match opts.transport {
            TransportChoice::Inproc | TransportChoice::Shm => None,
            TransportChoice::Nats => ensure_executive(&opts.rti_config())?,
        };
        let mut shm_system = None;
        let rti = if opts.transport == TransportChoice::Shm {
            // A system of this run's own, hosted here, unless told to join one.
            // Spinning federates take envelopes off their rings themselves
            // (`Endpoint::pump`).
            let options = glidepath::backend::ShmOptions::default();
            let transport = match &opts.shm_name {
                Some(name) => glidepath::ShmTransport::connect(name, options)
                    .with_context(|| format!("joining the shared-memory system {name}"))?,
                None => {
                    let name = format!("bench-{}", std::process::id());
                    glidepath::ShmTransport::host(&name, options)
                        .with_context(|| format!("hosting the shared-memory system {name}"))?
                }
            };
            shm_system = Some(transport.system_name().to_string());
            Rti::with_transport(std::sync::Arc::new(transport))
        } else {
            Rti::from_config(&opts.rti_config()).with_context(|| {
                format!(
                    "connecting the nats transport to {}",
                    glidepath::redact_url(&opts.nats_url)
                )
            })?
        };
        let run_id = format!(
            "{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_millis())
                .unwrap_or(0)
        );
        Ok(Bench {
            rti,
            shm_system,
            executive,
            fom,
            opts: opts.clone(),
            run_id,
            next_federation: AtomicU64::new(0),
        })
    }

    /// The RTI every federate of this run joins through.
    pub fn rti(&self) -> &Rti {
        &self.rti
    }

    /// The shared-memory system this run uses, on `shm`.
    pub fn shm_system(&self) -> Option<&str> {
        self.shm_system.as_deref()
    }

    /// The options the setup was started with.
    pub fn options(&self) -> &BenchOptions {
        &self.opts
    }

    /// Whether this process hosts the NATS executive (none answered at the URL).
    pub fn hosts_executive(&self) -> bool {
        self.executive.is_some()
    }

    /// Creates a fresh federation execution with the benchmark FOM and returns its
    /// name (`prefix` plus a number unique to this run).
    pub fn new_federation(&self, prefix: &str) -> anyhow::Result<String> {
        let n = self.next_federation.fetch_add(1, Ordering::Relaxed);
        let name = format!("bench-{prefix}-{}-{n}", self.run_id);
        self.rti
            .create_federation_execution_with_fom(&name, self.fom.clone())
            .with_context(|| format!("creating federation execution {name}"))?;
        Ok(name)
    }

    /// [`Bench::new_federation`] with another FOM (the `ddm` suite's).
    pub fn new_federation_with_fom(&self, prefix: &str, fom: Fom) -> anyhow::Result<String> {
        let n = self.next_federation.fetch_add(1, Ordering::Relaxed);
        let name = format!("bench-{prefix}-{}-{n}", self.run_id);
        self.rti
            .create_federation_execution_with_fom(&name, fom)
            .with_context(|| format!("creating federation execution {name}"))?;
        Ok(name)
    }

    /// Resigns every member (deleting their objects) and destroys the federation.
    pub fn finish(&self, federation: &str, members: Vec<Member>) -> anyhow::Result<()> {
        for m in members {
            m.resign()?;
        }
        self.rti
            .destroy_federation_execution(federation)
            .with_context(|| format!("destroying federation execution {federation}"))
    }

    /// Joins `federation` as `name` with the options' process model and wait strategy.
    pub fn join(&self, federation: &str, name: &str) -> anyhow::Result<Member> {
        self.join_with(federation, name, self.opts.wait)
    }

    /// [`Bench::join`] with another wait strategy (for a background federate that
    /// should not hold a core).
    pub fn join_with(
        &self,
        federation: &str,
        name: &str,
        wait: WaitStrategy,
    ) -> anyhow::Result<Member> {
        let options = JoinOptions::named(name, "glidepath-bench")
            .with_process_model(self.opts.process_model)
            .with_wait(wait);
        let joined = match self.opts.process_model {
            ProcessModel::Evoked => self.rti.join(federation, options).map(|federate| Member {
                federate,
                immediate: None,
                wait,
            }),
            ProcessModel::Immediate => {
                let (tx, rx) = crossbeam_channel::unbounded();
                self.rti
                    .join_immediate(federation, options, ForwardingAmbassador(tx))
                    .map(|federate| Member {
                        federate,
                        immediate: Some(rx),
                        wait,
                    })
            }
        };
        joined.with_context(|| format!("joining {federation} as {name}"))
    }
}

/// Makes sure an executive answers on the NATS server of `config`: returns `None`
/// when one does (a `glidepath server`), or the one started here when none does.
fn ensure_executive(config: &RtiConfig) -> anyhow::Result<Option<glidepath::ExecutiveServer>> {
    let url = config.nats_url_shown();
    match glidepath::ensure_executive(config) {
        Ok(executive) => Ok(executive),
        Err(
            e @ glidepath::TransportError::ConnectFailed {
                cause: glidepath::ConnectCause::Unreachable,
                ..
            },
        ) => Err(anyhow::Error::new(e).context(format!(
            "nothing answers at {url}: start `nats-server -a 127.0.0.1 -p PORT` and pass \
                 --nats-url nats://127.0.0.1:PORT (or set {})",
            glidepath::NATS_URL_ENV
        ))),
        Err(e) => Err(anyhow::Error::new(e)
            .context(format!("starting the executive in this process on {url}"))),
    }
}

/// Forwards every callback of an immediate-model federate into a channel, so the
/// suite reads them exactly as it reads an evoked federate's.
struct ForwardingAmbassador(crossbeam_channel::Sender<Callback>);

impl FederateAmbassador for ForwardingAmbassador {
    fn callback(&mut self, callback: Callback) {
        // The suite may have stopped reading (an error elsewhere); nothing to do then.
        let _ = self.0.send(callback);
    }
}

/// A joined federate plus the way its callbacks are read, the same for both models.
pub struct Member {
    /// The federate; every HLA service is reachable through `Deref` too.
    pub federate: Federate,
    /// Callbacks of the immediate model, forwarded by the ambassador.
    immediate: Option<Receiver<Callback>>,
    wait: WaitStrategy,
}

impl Deref for Member {
    type Target = Federate;
    fn deref(&self) -> &Federate {
        &self.federate
    }
}

impl Member {
    /// Resigns, deleting the federate's objects (how every suite's federate leaves).
    pub fn resign(&self) -> anyhow::Result<()> {
        self.federate
            .resign(ResignAction::DeleteObjects)
            .with_context(|| format!("resigning {}", self.federate.name()))
    }

    /// The next callback within `max_wait`, or `None`. Evoked: the federate's own
    /// `next_callback` (which honours the wait strategy). Immediate: the forwarding
    /// channel, read with the same wait strategy.
    pub fn next_callback(&self, max_wait: Duration) -> Option<Callback> {
        match &self.immediate {
            None => self.federate.next_callback(max_wait),
            Some(rx) => recv_with(rx, self.wait, max_wait),
        }
    }

    /// A callback that is already there, without waiting.
    pub fn try_next_callback(&self) -> Option<Callback> {
        match &self.immediate {
            None => self.federate.next_callback(Duration::ZERO),
            Some(rx) => rx.try_recv().ok(),
        }
    }

    /// The wait strategy this member was joined with.
    pub fn wait(&self) -> WaitStrategy {
        self.wait
    }

    /// Reads callbacks until `want` returns `Some`, skipping others (discoveries,
    /// grants of no interest); fails after [`RECEIVE_TIMEOUT`] without one.
    pub fn wait_for<T>(
        &self,
        what: &str,
        mut want: impl FnMut(Callback) -> Option<T>,
    ) -> anyhow::Result<T> {
        let deadline = Instant::now() + RECEIVE_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.next_callback(left) {
                Some(cb) => {
                    if let Some(t) = want(cb) {
                        return Ok(t);
                    }
                }
                None => bail!(
                    "{}: no {what} within {:?}",
                    self.federate.name(),
                    RECEIVE_TIMEOUT
                ),
            }
        }
    }
}

/// Receives from a channel the way `wait` says: spin polls, park blocks, spin-park
/// polls for its budget and then blocks. Raw inproc peers use it so they wait
/// exactly as the federates they are compared with.
pub fn recv_with<T>(rx: &Receiver<T>, wait: WaitStrategy, max_wait: Duration) -> Option<T> {
    let spin_for = match wait {
        WaitStrategy::Park => Duration::ZERO,
        WaitStrategy::SpinPark { spin } => spin.min(max_wait),
        WaitStrategy::Spin => max_wait,
    };
    if !spin_for.is_zero() {
        let start = Instant::now();
        let mut polls = 0u32;
        loop {
            match rx.try_recv() {
                Ok(v) => return Some(v),
                Err(TryRecvError::Disconnected) => return None,
                Err(TryRecvError::Empty) => {}
            }
            std::hint::spin_loop();
            polls = polls.wrapping_add(1);
            // Reading the clock costs more than a poll; look every 64 polls.
            if polls.is_multiple_of(64) && start.elapsed() >= spin_for {
                break;
            }
        }
        if matches!(wait, WaitStrategy::Spin) {
            return None;
        }
    }
    let left = match wait {
        WaitStrategy::Park => max_wait,
        _ => max_wait.saturating_sub(spin_for),
    };
    rx.recv_timeout(left).ok()
}

mod member_process;
mod raw_nats;
pub use member_process::{list, say, say_ready, MemberProcess, Said};
pub use raw_nats::{settle, RawNats};

/// Length of a [`stamp`]: sequence number and send time, little-endian.
pub const STAMP_BYTES: usize = 16;

/// A stamp carried in a message's tag (glidepath) or header bytes (raw peers):
/// sequence number and the sender's [`now_ns`] at send time, so receivers count
/// loss and duplicates and, in one process, measure one-way latency.
pub fn stamp(seq: u64, sent_ns: u64) -> Bytes {
    let mut b = [0u8; STAMP_BYTES];
    b[..8].copy_from_slice(&seq.to_le_bytes());
    b[8..].copy_from_slice(&sent_ns.to_le_bytes());
    Bytes::copy_from_slice(&b)
}

/// Reads a [`stamp`] from the first [`STAMP_BYTES`] of `bytes`.
pub fn read_stamp(bytes: &[u8]) -> Option<(u64, u64)> {
    let seq = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?);
    let sent = u64::from_le_bytes(bytes.get(8..16)?.try_into().ok()?);
    Some((seq, sent))
}

/// Nanoseconds on the process-wide monotonic clock the transports use, so stamps
/// taken on any thread of this process compare.
pub fn now_ns() -> u64 {
    glidepath::monotonic_now_ns()
}

/// An instant of this process as [`now_ns`] reads it.
pub fn ns_of_instant(at: Instant) -> u64 {
    let (now, at_ns) = (Instant::now(), now_ns());
    match at.checked_duration_since(now) {
        Some(ahead) => at_ns.saturating_add(ahead.as_nanos() as u64),
        None => at_ns.saturating_sub(now.duration_since(at).as_nanos() as u64),
    }
}

/// The instant of this process at [`now_ns`] `ns` (read in another process
/// of this host).
pub fn instant_of_ns(ns: u64) -> Instant {
    let (now, at_ns) = (Instant::now(), now_ns());
    if ns <= at_ns {
        now.checked_sub(std::time::Duration::from_nanos(at_ns - ns))
            .unwrap_or(now)
    } else {
        now + std::time::Duration::from_nanos(ns - at_ns)
    }
}

/// A payload of `size` bytes (content irrelevant, but not all zero so compression
/// cannot make it vanish).
pub fn payload(size: usize) -> Bytes {
    Bytes::from((0..size).map(|i| (i % 251) as u8).collect::<Vec<u8>>())
}

/// Busy work for `us` microseconds: the compute load of thesis 5.3.1 (a federate
/// that computes between messages, so the RTI's own threads compete for the CPU).
pub fn busy_work(us: u64) {
    if us == 0 {
        return;
    }
    let until = Instant::now() + Duration::from_micros(us);
    let mut x = 0u64;
    while Instant::now() < until {
        for i in 0..64u64 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
        }
    }
    std::hint::black_box(x);
}

/// Counts distinct sequence numbers received and duplicates, for loss accounting.
#[derive(Debug, Default, Clone)]
pub struct SeqTracker {
    seen: Vec<u64>,
    count: u64,
    /// Distinct sequence numbers received.
    pub received: u64,
    /// Sequence numbers received more than once.
    pub duplicated: u64,
}

impl SeqTracker {
    /// A tracker for sequence numbers `0..count`.
    pub fn new(count: u64) -> SeqTracker {
        SeqTracker {
            seen: vec![0; usize::try_from(count.div_ceil(64)).unwrap_or(0)],
            count,
            received: 0,
            duplicated: 0,
        }
    }

    /// Records `seq`; returns true when it is new. Out-of-range numbers count as
    /// duplicates (nobody sent them in this run).
    pub fn record(&mut self, seq: u64) -> bool {
        if seq >= self.count {
            self.duplicated += 1;
            return false;
        }
        let (word, bit) = ((seq / 64) as usize, seq % 64);
        match self.seen.get_mut(word) {
            Some(w) if *w & (1 << bit) == 0 => {
                *w |= 1 << bit;
                self.received += 1;
                true
            }
            _ => {
                self.duplicated += 1;
                false
            }
        }
    }
}

/// Megabits per second of payload for `messages` of `size` bytes in `seconds`.
pub fn mbit_per_s(messages: u64, size: usize, seconds: f64) -> f64 {
    if seconds <= 0.0 {
        return 0.0;
    }
    messages as f64 * size as f64 * 8.0 / seconds / 1e6
}

/// Messages per second.
pub fn rate(messages: u64, seconds: f64) -> f64 {
    if seconds <= 0.0 {
        0.0
    } else {
        messages as f64 / seconds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_round_trip() {
        let s = stamp(42, 123_456_789);
        assert_eq!(read_stamp(&s), Some((42, 123_456_789)));
        assert_eq!(read_stamp(&s[..15]), None);
    }

    #[test]
    fn seq_tracker_counts_duplicates_and_strangers() {
        let mut t = SeqTracker::new(100);
        assert!(t.record(0));
        assert!(t.record(99));
        assert!(!t.record(99));
        assert!(!t.record(100));
        assert_eq!((t.received, t.duplicated), (2, 2));
    }

    #[test]
    fn recv_with_honours_each_strategy() {
        for wait in [
            WaitStrategy::Park,
            WaitStrategy::Spin,
            WaitStrategy::SpinPark {
                spin: Duration::from_micros(50),
            },
        ] {
            let (tx, rx) = crossbeam_channel::bounded(1);
            tx.send(7).unwrap();
            assert_eq!(recv_with(&rx, wait, Duration::from_millis(10)), Some(7));
            assert_eq!(recv_with(&rx, wait, Duration::from_millis(5)), None);
        }
    }

    #[test]
    fn the_embedded_fom_merges() {
        let fom = Fom::merge(&[FomModule::parse_str("benchmark.xml", BENCHMARK_FOM).unwrap()]);
        assert!(fom.is_ok());
    }
}

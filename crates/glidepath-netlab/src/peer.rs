//! The benchmark federates: the JAXA report's Fig. 3 program, run as one process per
//! federate inside a laboratory host by `glidepath netlab peer`.
//!
//! The report says only that "the receiving federate receives data of a chosen size
//! sent by the sending federate, repeated synchronised or asynchronously, and the
//! time until all data have been received is measured" (its flowchart is not in the
//! text). Ours, stated so it can be compared:
//!
//! - **Synchronised** ([`Mode::Sync`]): every federate is time-regulating, with a
//!   lookahead of 1, and time-constrained. At step `k = 1..=count` a sender sends one
//!   interaction of `size` bytes stamped `k` and requests an advance to `k`; a
//!   receiver requests `k` and counts what arrives until it is granted. The data
//!   go as `BenchInteractionTso` (reliable, time-stamp order), or as
//!   `BenchInteraction` (receive order) with `--order receive`, the report's 3.4
//!   comparison. A lookahead of 1 lets a sender be at most one step ahead of its
//!   receiver, so each exchange waits for the other side, as a time-synchronised
//!   federation does; `--lookahead L` lets it run L steps ahead (messages stamped
//!   `k + L − 1`), the report's other remedy for a slow link.
//! - **Asynchronous** ([`Mode::Async`]): no time management; a sender sends `count`
//!   interactions in receive order as fast as flow control lets it; a receiver counts
//!   them.
//! - **Two-way** ([`Role::Both`]): both federates send and receive (the report's
//!   "both run the same program").
//! - **Time-only** ([`Role::Ticker`]): the report's 3.3 extra federates, which only
//!   advance time, step by step, to `count`.
//!
//! All members set up (publish, subscribe, time management), then meet at the
//! synchronisation point `netlab-start`, run, and meet at `netlab-done` before they
//! resign, so nobody leaves while data are in flight. Each prints one JSON line
//! ([`PeerReport`]) on stdout: when it sent its first message and received its last,
//! in nanoseconds of the system clock, which every namespace of one machine shares.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{anyhow, bail, Context};
use glidepath::{
    Bytes, Callback, Federate, FederationError, Fom, FomModule, InteractionClassHandle,
    JoinOptions, ParameterHandle, ResignAction, Rti, RtiConfig, RtiError, TransportKind,
};

/// The benchmark FOM (`foms/benchmark.xml`), which has the classes the program sends.
pub const BENCHMARK_FOM: &str = include_str!("../../../foms/benchmark.xml");

const START: &str = "netlab-start";
const DONE: &str = "netlab-done";

/// What a peer does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Sends `count` messages.
    Sender,
    /// Receives `count` messages.
    Receiver,
    /// Sends and receives `count` messages (two-way exchange).
    Both,
    /// Advances time to `count` and nothing else.
    Ticker,
}

/// Synchronised (time management) or asynchronous.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Time-regulating and constrained, one advance per exchange.
    Sync,
    /// No time management.
    Async,
}

/// The order the data messages are sent in (synchronised mode).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Time-stamp order: delivered when the receiver is granted the stamp.
    Timestamp,
    /// Receive order: delivered on arrival, time advance not held back by it.
    Receive,
}

/// One peer's settings.
#[derive(Clone, Debug)]
pub struct PeerOptions {
    /// The NATS server (through the link relay for the remote host).
    pub nats_url: String,
    /// The federation execution (created by whichever peer comes first).
    pub federation: String,
    /// This federate's name (unique in the federation).
    pub name: String,
    /// What it does.
    pub role: Role,
    /// Synchronised or asynchronous.
    pub mode: Mode,
    /// Data messages' order in synchronised mode.
    pub order: Order,
    /// Payload bytes per message.
    pub size: usize,
    /// Exchanges (steps).
    pub count: u64,
    /// Synchronised mode: the lookahead, in steps (at least 1). With more, a sender
    /// runs up to that many steps ahead of its receiver.
    pub lookahead: u64,
    /// How many federates take part: the start waits until all have joined.
    pub members: usize,
    /// Whether this peer registers the synchronisation points (exactly one does).
    pub leader: bool,
    /// Gives up (an error) after this long.
    pub timeout: Duration,
}

/// What a peer reports on stdout when done.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PeerReport {
    /// The federate's name.
    pub name: String,
    /// Messages sent.
    pub sent: u64,
    /// Data messages received.
    pub received: u64,
    /// System-clock time of the first send (ns since the Unix epoch), if any.
    pub first_send_ns: Option<u64>,
    /// System-clock time of the last data message received, if any.
    pub last_receive_ns: Option<u64>,
    /// System-clock time when the exchange started (after `netlab-start`).
    pub start_ns: u64,
    /// System-clock time when its part was done (before `netlab-done`).
    pub end_ns: u64,
    /// Envelopes its reliable flow control sent again (asked, or unasked when a
    /// receiver's acknowledgement stood still).
    pub retransmitted: u64,
    /// Duplicate envelopes it received and dropped.
    pub duplicates_dropped: u64,
}

struct Classes {
    tso: InteractionClassHandle,
    tso_payload: ParameterHandle,
    ro: InteractionClassHandle,
    ro_payload: ParameterHandle,
}

/// Runs one peer to the end and returns its report.
pub fn run(opts: &PeerOptions) -> anyhow::Result<PeerReport> {
    if opts.size == 0 && opts.role != Role::Ticker {
        bail!("a message size of 0 bytes measures nothing: give --size of at least 1");
    }
    let fom = Fom::merge(&[FomModule::parse_str("benchmark.xml", BENCHMARK_FOM)?])?;
    // The environment's settings (bundling: GLIDEPATH_BUNDLE_BYTES, …), on NATS.
    let mut config = RtiConfig::from_env().context("reading GLIDEPATH_* settings")?;
    config.transport = TransportKind::Nats;
    config.nats_url = opts.nats_url.clone();
    let rti =
        Rti::from_config(&config).with_context(|| format!("connecting to {}", opts.nats_url))?;
    match rti.create_federation_execution_with_fom(&opts.federation, fom) {
        Ok(())
        | Err(RtiError::Federation(FederationError::FederationExecutionAlreadyExists(_))) => {}
        Err(e) => return Err(e).context("creating the federation execution"),
    }
    let federate = rti
        .join(&opts.federation, JoinOptions::named(&opts.name, "netlab"))
        .with_context(|| format!("joining {} as {}", opts.federation, opts.name))?;
    let mut peer = Peer {
        federate,
        deadline: Instant::now() + opts.timeout,
        announced: Vec::new(),
        synchronized: Vec::new(),
        granted: None,
        report: PeerReport {
            name: opts.name.clone(),
            ..PeerReport::default()
        },
    };
    let classes = peer.set_up(opts)?;
    peer.meet(START, opts)?;
    peer.report.start_ns = now_ns();
    let payload = Bytes::from(vec![0x5a; opts.size]);
    match opts.mode {
        Mode::Sync => peer.run_sync(opts, &classes, &payload)?,
        Mode::Async => peer.run_async(opts, &classes, &payload)?,
    }
    peer.report.end_ns = now_ns();
    peer.meet(DONE, opts)?;
    let stats = peer.federate.transport_stats();
    peer.report.retransmitted = stats.retransmitted;
    peer.report.duplicates_dropped = stats.duplicates_dropped;
    peer.federate
        .resign(ResignAction::DeleteObjects)
        .context("resigning")?;
    if opts.leader {
        // The last to leave destroys it; a member still inside refuses, which is fine.
        let _ = rti.destroy_federation_execution(&opts.federation);
    }
    Ok(peer.report)
}

struct Peer {
    federate: Federate,
    deadline: Instant,
    announced: Vec<String>,
    synchronized: Vec<String>,
    granted: Option<f64>,
    report: PeerReport,
}

impl Peer {
    fn set_up(&mut self, opts: &PeerOptions) -> anyhow::Result<Classes> {
        let f = &self.federate;
        let tso = f.interaction_class_handle("BenchInteractionTso")?;
        let ro = f.interaction_class_handle("BenchInteraction")?;
        let classes = Classes {
            tso,
            tso_payload: f.parameter_handle(tso, "payload")?,
            ro,
            ro_payload: f.parameter_handle(ro, "payload")?,
        };
        let sends = matches!(opts.role, Role::Sender | Role::Both);
        let receives = matches!(opts.role, Role::Receiver | Role::Both);
        for class in [tso, ro] {
            if sends {
                f.publish_interaction_class(class)?;
            }
            if receives {
                f.subscribe_interaction_class(class)?;
            }
        }
        if opts.mode == Mode::Sync {
            f.enable_time_regulation(opts.lookahead.max(1) as f64)?;
            self.wait_for("time regulation", |cb| {
                matches!(cb, Callback::TimeRegulationEnabled { .. })
            })?;
            self.federate.enable_time_constrained()?;
            self.wait_for("time constrained", |cb| {
                matches!(cb, Callback::TimeConstrainedEnabled { .. })
            })?;
        }
        Ok(classes)
    }

    /// Meets every member at synchronisation point `label`: the leader registers it
    /// once all `members` have joined; everyone achieves it and waits for the rest.
    fn meet(&mut self, label: &str, opts: &PeerOptions) -> anyhow::Result<()> {
        if opts.leader {
            while self.federate.list_federates()?.len() < opts.members {
                self.pump(Duration::from_millis(20))?;
                self.check_deadline(&format!("waiting for {} members", opts.members))?;
            }
            self.federate
                .register_federation_synchronization_point(label, Bytes::new())?;
        }
        while !self.announced.iter().any(|l| l == label) {
            self.pump(Duration::from_millis(100))?;
            self.check_deadline(&format!("waiting for the announcement of {label}"))?;
        }
        self.federate.synchronization_point_achieved(label)?;
        while !self.synchronized.iter().any(|l| l == label) {
            self.pump(Duration::from_millis(100))?;
            self.check_deadline(&format!("waiting for the federation to reach {label}"))?;
        }
        Ok(())
    }

    fn run_sync(&mut self, opts: &PeerOptions, c: &Classes, payload: &Bytes) -> anyhow::Result<()> {
        let sends = matches!(opts.role, Role::Sender | Role::Both);
        let receives = matches!(opts.role, Role::Receiver | Role::Both);
        // A message sent at step k is stamped k + lookahead − 1 (the earliest the
        // lookahead allows), so a receiver advances that much further to get the last.
        let lookahead = opts.lookahead.max(1);
        let steps = if receives {
            opts.count + lookahead - 1
        } else {
            opts.count
        };
        for k in 1..=steps {
            let t = k as f64;
            let stamp = (k + lookahead - 1) as f64;
            if sends && k <= opts.count {
                self.stamp_first_send();
                match opts.order {
                    Order::Timestamp => self.federate.send_interaction_at(
                        c.tso,
                        [(c.tso_payload, payload.clone())],
                        Bytes::new(),
                        stamp,
                    )?,
                    Order::Receive => self.federate.send_interaction(
                        c.ro,
                        [(c.ro_payload, payload.clone())],
                        Bytes::new(),
                    )?,
                }
                self.report.sent += 1;
            }
            self.federate.time_advance_request(t)?;
            while self.granted != Some(t) {
                self.pump(Duration::from_millis(100))?;
                self.check_deadline(&format!("waiting for the grant of step {k}"))?;
            }
        }
        // Receive-order data need not have arrived by the last grant.
        self.await_all(opts)
    }

    fn run_async(
        &mut self,
        opts: &PeerOptions,
        c: &Classes,
        payload: &Bytes,
    ) -> anyhow::Result<()> {
        if matches!(opts.role, Role::Sender | Role::Both) {
            self.stamp_first_send();
            for _ in 0..opts.count {
                self.federate.send_interaction(
                    c.ro,
                    [(c.ro_payload, payload.clone())],
                    Bytes::new(),
                )?;
                self.report.sent += 1;
                // Two-way: take in what arrived, so the callback queue stays short.
                while let Some(cb) = self.federate.next_callback(Duration::ZERO) {
                    self.handle(cb);
                }
            }
            self.federate.flush()?;
        }
        self.await_all(opts)
    }

    fn await_all(&mut self, opts: &PeerOptions) -> anyhow::Result<()> {
        if matches!(opts.role, Role::Receiver | Role::Both) {
            while self.report.received < opts.count {
                self.pump(Duration::from_millis(100))?;
                self.check_deadline(&format!(
                    "waiting for data: {} of {} received",
                    self.report.received, opts.count
                ))?;
            }
        }
        Ok(())
    }

    fn stamp_first_send(&mut self) {
        if self.report.first_send_ns.is_none() {
            self.report.first_send_ns = Some(now_ns());
        }
    }

    /// Handles the callbacks that arrive within `wait`.
    fn pump(&mut self, wait: Duration) -> anyhow::Result<()> {
        if let Some(cb) = self.federate.next_callback(wait) {
            self.handle(cb);
            while let Some(cb) = self.federate.next_callback(Duration::ZERO) {
                self.handle(cb);
            }
        }
        self.federate
            .check_transport()
            .map_err(|e| anyhow!("the transport failed: {e}"))
    }

    fn handle(&mut self, cb: Callback) {
        match cb {
            Callback::ReceiveInteraction { .. } => {
                self.report.received += 1;
                self.report.last_receive_ns = Some(now_ns());
            }
            Callback::TimeAdvanceGrant { time } => self.granted = Some(time.as_f64()),
            Callback::AnnounceSynchronizationPoint { label, .. } => self.announced.push(label),
            Callback::FederationSynchronized { label, .. } => self.synchronized.push(label),
            _ => {}
        }
    }

    fn wait_for(&mut self, what: &str, want: impl Fn(&Callback) -> bool) -> anyhow::Result<()> {
        loop {
            let cb = self
                .federate
                .next_callback(self.deadline.saturating_duration_since(Instant::now()));
            match cb {
                Some(cb) if want(&cb) => return Ok(()),
                Some(cb) => self.handle(cb),
                None => self.check_deadline(&format!("waiting for {what}"))?,
            }
        }
    }

    fn check_deadline(&self, what: &str) -> anyhow::Result<()> {
        if Instant::now() >= self.deadline {
            bail!("{}: timed out {what}", self.report.name);
        }
        Ok(())
    }
}

/// Nanoseconds since the Unix epoch on the system clock.
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

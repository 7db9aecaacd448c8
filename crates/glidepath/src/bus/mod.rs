//! The group-communication bus of the formation-flying testbed (seed `003_...`):
//! GMSEC subjects, key/typ/val messages in XML or binary, publish/subscribe with
//! Spread's service levels, groups with membership notifications, open-group sends.
//!
//! The model, its encodings and the frames are `glidepath-bus`'s, re-exported here so
//! that programs, the CLI and the Python bindings use this crate only. A [`Bus`] is one
//! connection, over the in-process hub or NATS by configuration ([`BusConfig`]):
//!
//! ```
//! use glidepath::bus::{Bus, BusConfig, Event, Message, Pattern, ServiceLevel, Subject};
//!
//! let config = BusConfig { name: "doc".into(), ..BusConfig::isolated_inproc() };
//! let stars = Bus::connect(&config)?;
//! let fe = Bus::connect_like(&stars, "fe-1")?;
//! let truth = fe.subscribe(&Pattern::new("FFTB.MMS.*.DATA.TRUTH.>")?)?;
//! let subject = Subject::new("FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL")?;
//! stars.publish(&subject, &Message::new().with("x", 7000.5f64), ServiceLevel::Fifo)?;
//! let Event::Message(m) = truth.recv()? else { panic!("a message") };
//! assert_eq!(m.message.get_f64("x")?, 7000.5);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Groups are Spread's: a group (named like a subject, [`BusConfig::default_group`]
//! unless given) is the unit of membership and of order. A connection is a member of
//! a group while it holds a subscription in it ([`Bus::subscribe_in`], or
//! [`Bus::join`], which also reports members joining and leaving); every member
//! receives what is sent to the group and keeps what its patterns match. Anyone may
//! send to a group (open-group semantics). Each level's guarantee, on each transport,
//! is in `ARCHITECTURE.md` ("The bus").

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TryRecvError};
use parking_lot::Mutex;

pub use glidepath_bus::frame::{DataFrame, MemberId, MembershipKind, ServiceLevel};
pub use glidepath_bus::message::{binary, json, xml};
pub use glidepath_bus::subject::fms;
pub use glidepath_bus::subject::fms::FmsSubject;
pub use glidepath_bus::{
    AccessError, DecodeError, EncodeError, Encoding, Entry, EntryError, Message, Pattern, Subject,
    SubjectError, SubjectErrorKind, Value, ValueType,
};

use crate::config::TransportKind;

#[cfg(feature = "transport-nats")]
mod acks;
#[cfg(feature = "transport-nats")]
pub mod bridge;
pub mod hla;
mod hub;
#[cfg(feature = "transport-nats")]
mod nats;
#[cfg(feature = "transport-nats")]
mod repair;
mod route;
mod workers;

pub use hub::InprocHub;
use route::{LocalSub, RawEvent, Router};

/// How to connect to the bus. Fields are public; start from [`BusConfig::default`].
#[derive(Clone, Debug)]
pub struct BusConfig {
    /// The transport. Default [`TransportKind::Inproc`]: the process-wide hub, so
    /// connections in one program see each other with no server.
    pub transport: TransportKind,
    /// The NATS server for the `nats` transport (it must run JetStream for the
    /// totally ordered levels and membership notices). Default
    /// [`crate::DEFAULT_NATS_URL`].
    pub nats_url: String,
    /// TLS and credentials for that server (as [`crate::RtiConfig::nats_security`]).
    /// Default none.
    #[cfg(feature = "transport-nats")]
    pub nats_security: crate::NatsSecurity,
    /// How this connection encodes the messages it publishes (receivers read both).
    /// Default XML, the paper's format.
    pub encoding: Encoding,
    /// This member's name, shown to others in membership notices. Default `member`.
    pub name: String,
    /// The group used when none is named. Default `BUS`.
    pub default_group: Subject,
    /// An in-process hub other than the process-wide one (tests that must not see
    /// each other). Default none.
    pub hub: Option<InprocHub>,
    /// Over NATS, how long a member of a group may stay silent (it acknowledges every
    /// 100 ms) before the others declare it crashed: a *crashed* notice goes to every
    /// member and SAFE messages stop waiting for it. Default 2 s. (In one process a
    /// member cannot crash without the process.)
    pub crash_timeout: Duration,
}

impl Default for BusConfig {
    fn default() -> Self {
        BusConfig {
            transport: TransportKind::Inproc,
            nats_url: crate::DEFAULT_NATS_URL.to_string(),
            #[cfg(feature = "transport-nats")]
            nats_security: Default::default(),
            encoding: Encoding::Xml,
            name: "member".into(),
            default_group: Subject::new("BUS").expect("valid"),
            hub: None,
            crash_timeout: Duration::from_secs(2),
        }
    }
}

impl BusConfig {
    /// In-process, on a hub of its own (connections made with [`Bus::connect_like`]
    /// share it).
    pub fn isolated_inproc() -> BusConfig {
        BusConfig {
            hub: Some(InprocHub::new()),
            ..BusConfig::default()
        }
    }

    /// Over NATS at `url`.
    #[cfg(feature = "transport-nats")]
    pub fn nats(url: &str) -> BusConfig {
        BusConfig {
            transport: TransportKind::Nats,
            nats_url: url.to_string(),
            ..BusConfig::default()
        }
    }
}

/// Why a bus operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BusError {
    /// A subject, pattern or group name was refused.
    #[error(transparent)]
    Subject(#[from] SubjectError),
    /// The message cannot be encoded (XML cannot carry a character).
    #[error(transparent)]
    Encode(#[from] EncodeError),
    /// The transport failed or is unavailable.
    #[error("bus transport {transport}: {reason}")]
    Transport {
        /// `inproc` or `nats`.
        transport: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// The connection or subscription is closed.
    #[error("closed")]
    Closed,
}

/// Counters of what a connection could not deliver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BusStats {
    /// Messages dropped because their frame or their XML/binary message was refused.
    pub malformed: u64,
    /// Messages found missing (gaps in a sender's or a group's sequence numbers).
    pub lost: u64,
    /// Messages that arrived out of their group's total order or twice (dropped).
    pub order_violations: u64,
    /// RELIABLE and FIFO messages core NATS dropped that a repair brought back from
    /// their sender (delivered in order, not lost).
    pub repaired: u64,
}

#[derive(Default)]
pub(crate) struct Counters {
    malformed: AtomicU64,
    lost: AtomicU64,
    order_violations: AtomicU64,
    repaired: AtomicU64,
}

impl Counters {
    pub(crate) fn malformed(&self) {
        self.malformed.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn lost(&self, n: u64) {
        self.lost.fetch_add(n, Ordering::Relaxed);
    }
    pub(crate) fn order_violation(&self) {
        self.order_violations.fetch_add(1, Ordering::Relaxed);
    }
    pub(crate) fn repaired(&self, n: u64) {
        self.repaired.fetch_add(n, Ordering::Relaxed);
    }
    fn snapshot(&self) -> BusStats {
        BusStats {
            malformed: self.malformed.load(Ordering::Relaxed),
            lost: self.lost.load(Ordering::Relaxed),
            order_violations: self.order_violations.load(Ordering::Relaxed),
            repaired: self.repaired.load(Ordering::Relaxed),
        }
    }
}

/// A message as a subscriber receives it.
#[derive(Clone, Debug)]
pub struct Delivery {
    /// The group it was sent to.
    pub group: Subject,
    /// Its subject.
    pub subject: Subject,
    /// The message, decoded.
    pub message: Message,
    /// The level it was sent with.
    pub level: ServiceLevel,
    /// Who sent it.
    pub sender: MemberId,
    /// For totally ordered levels, its position in the group's order.
    pub group_seq: Option<u64>,
    /// Publication time (nanoseconds since the UNIX epoch, [`crate::monotonic_now_ns`]).
    pub publish_time_ns: u64,
    /// Size of the encoded message.
    pub encoded_bytes: usize,
}

/// A member joined, left or crashed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MembershipChange {
    /// The group.
    pub group: Subject,
    /// What happened.
    pub kind: MembershipKind,
    /// To whom.
    pub member: MemberId,
    /// The member's name.
    pub name: String,
}

/// What a subscription receives.
#[derive(Clone, Debug)]
pub enum Event {
    /// A message.
    Message(Delivery),
    /// A membership change (only on subscriptions made by [`Bus::join`]).
    Membership(MembershipChange),
}

impl Event {
    /// The delivery, if this is a message.
    pub fn into_message(self) -> Option<Delivery> {
        match self {
            Event::Message(d) => Some(d),
            Event::Membership(_) => None,
        }
    }
}

/// What a transport offers a connection.
pub(crate) trait Backend: Send + Sync {
    fn name(&self) -> &'static str;
    /// Sends an encoded frame to a group.
    fn publish(&self, group: &Subject, frame: DataFrame) -> Result<(), BusError>;
    /// Starts receiving a group (the first subscription in it): joins it.
    fn join(&self, group: &Subject) -> Result<(), BusError>;
    /// Stops receiving a group (its last subscription went): leaves it.
    fn leave(&self, group: &Subject);
    /// Closes the connection.
    fn close(&self);
}

struct Inner {
    config: BusConfig,
    member: MemberId,
    backend: Box<dyn Backend>,
    router: Arc<Router>,
    counters: Arc<Counters>,
    /// Per group and path, the last sequence number of this sender: the levels a
    /// backend sends through a sequencer (CAUSAL, AGREED, SAFE) are numbered apart
    /// from RELIABLE and FIFO, whose receivers count a gap in the numbers as lost.
    seqs: Mutex<std::collections::HashMap<(Subject, bool), u64>>,
    next_sub: AtomicU64,
}

/// One connection to the bus. Cheap to clone (clones share the connection).
#[derive(Clone)]
pub struct Bus {
    inner: Arc<Inner>,
}

impl fmt::Debug for Bus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Bus")
            .field("name", &self.inner.config.name)
            .field("member", &self.inner.member)
            .field("transport", &self.inner.backend.name())
            .finish()
    }
}

/// A random member token: the process, the time and the hasher's random keys.
fn new_member_id() -> MemberId {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u32(std::process::id());
    h.write_u64(crate::monotonic_now_ns());
    MemberId(h.finish().max(1))
}

impl Bus {
    /// Connects by configuration.
    pub fn connect(config: &BusConfig) -> Result<Bus, BusError> {
        let member = new_member_id();
        let counters = Arc::new(Counters::default());
        let router = Arc::new(Router::new());
        let backend: Box<dyn Backend> = match config.transport {
            TransportKind::Inproc => {
                let hub = config.hub.clone().unwrap_or_else(InprocHub::global);
                Box::new(hub.attach(member, config.name.clone(), router.clone()))
            }
            #[cfg(feature = "transport-nats")]
            TransportKind::Nats => Box::new(nats::NatsBackend::connect(
                &config.nats_url,
                &config.nats_security,
                member,
                config.name.clone(),
                config.crash_timeout,
                router.clone(),
                counters.clone(),
            )?),
            #[cfg(all(feature = "transport-shm", target_os = "linux"))]
            TransportKind::Shm => {
                return Err(BusError::Transport {
                    transport: "shm",
                    reason: "the message bus runs on inproc or nats; shared memory carries federations only (for now)".into(),
                })
            }
        };
        Ok(Bus {
            inner: Arc::new(Inner {
                config: config.clone(),
                member,
                backend,
                router,
                counters,
                seqs: Mutex::new(Default::default()),
                next_sub: AtomicU64::new(1),
            }),
        })
    }

    /// Another connection with the same configuration (the same hub), named `name`.
    pub fn connect_like(other: &Bus, name: &str) -> Result<Bus, BusError> {
        let config = BusConfig {
            name: name.to_string(),
            ..other.inner.config.clone()
        };
        Bus::connect(&config)
    }

    /// This connection's member token.
    pub fn member(&self) -> MemberId {
        self.inner.member
    }

    /// This connection's configuration.
    pub fn config(&self) -> &BusConfig {
        &self.inner.config
    }

    /// What this connection counted as malformed, lost or out of order.
    pub fn stats(&self) -> BusStats {
        self.inner.counters.snapshot()
    }

    /// Publishes on a subject of the default group.
    pub fn publish(
        &self,
        subject: &Subject,
        message: &Message,
        level: ServiceLevel,
    ) -> Result<(), BusError> {
        let group = self.inner.config.default_group.clone();
        self.publish_to(&group, subject, message, level)
    }

    /// Publishes on a subject of a group; this connection need not be a member
    /// (open-group semantics).
    pub fn publish_to(
        &self,
        group: &Subject,
        subject: &Subject,
        message: &Message,
        level: ServiceLevel,
    ) -> Result<(), BusError> {
        let mut payload = Vec::new();
        message.encode(self.inner.config.encoding, &mut payload)?;
        self.publish_encoded(
            group,
            subject,
            Bytes::from(payload),
            self.inner.config.encoding,
            level,
        )
    }

    /// Publishes an already encoded message (benchmarks encode once; the bridge
    /// forwards what it checked).
    pub fn publish_encoded(
        &self,
        group: &Subject,
        subject: &Subject,
        payload: Bytes,
        encoding: Encoding,
        level: ServiceLevel,
    ) -> Result<(), BusError> {
        let seq = match level {
            ServiceLevel::Unreliable => 0,
            _ => {
                let sequenced = matches!(
                    level,
                    ServiceLevel::Causal | ServiceLevel::Agreed | ServiceLevel::Safe
                );
                let mut seqs = self.inner.seqs.lock();
                let next = seqs.entry((group.clone(), sequenced)).or_insert(0);
                *next += 1;
                *next
            }
        };
        let frame = DataFrame {
            level,
            encoding,
            sender: self.inner.member,
            seq,
            publish_time_ns: crate::monotonic_now_ns(),
            subject: subject.clone(),
            payload,
        };
        self.inner.backend.publish(group, frame)
    }

    /// Subscribes to a pattern in the default group.
    pub fn subscribe(&self, pattern: &Pattern) -> Result<Subscription, BusError> {
        let group = self.inner.config.default_group.clone();
        self.subscribe_in(&group, pattern)
    }

    /// Subscribes to a pattern in a group, joining it if this is the connection's
    /// first subscription there.
    pub fn subscribe_in(
        &self,
        group: &Subject,
        pattern: &Pattern,
    ) -> Result<Subscription, BusError> {
        self.open(group, pattern.clone(), false)
    }

    /// Joins a group: receives everything sent to it and its membership changes
    /// (members joined, left, crashed), this connection's own join first.
    pub fn join(&self, group: &Subject) -> Result<Subscription, BusError> {
        self.open(group, Pattern::all(), true)
    }

    /// Subscribes with a callback, called on a thread of its own for each event
    /// until the returned handle is dropped.
    pub fn subscribe_with<F>(
        &self,
        pattern: &Pattern,
        mut callback: F,
    ) -> Result<CallbackSubscription, BusError>
    where
        F: FnMut(Event) + Send + 'static,
    {
        let sub = self.subscribe(pattern)?;
        let rx = sub.rx.clone();
        let counters = sub.counters.clone();
        let thread = std::thread::Builder::new()
            .name("glidepath-bus-callback".into())
            .spawn(move || {
                while let Ok(raw) = rx.recv() {
                    if let Some(event) = decode(raw, &counters) {
                        callback(event);
                    }
                }
            })
            .map_err(|e| BusError::Transport {
                transport: "inproc",
                reason: format!("cannot start the callback thread: {e}"),
            })?;
        Ok(CallbackSubscription {
            subscription: Some(sub),
            thread: Some(thread),
        })
    }

    fn open(
        &self,
        group: &Subject,
        pattern: Pattern,
        membership: bool,
    ) -> Result<Subscription, BusError> {
        let (tx, rx) = crossbeam_channel::unbounded();
        let id = self.inner.next_sub.fetch_add(1, Ordering::Relaxed);
        let first = self.inner.router.add(
            group,
            LocalSub {
                id,
                pattern,
                membership,
                tx,
            },
        );
        if first {
            if let Err(e) = self.inner.backend.join(group) {
                self.inner.router.remove(group, id);
                return Err(e);
            }
        }
        Ok(Subscription {
            rx,
            counters: self.inner.counters.clone(),
            owner: Some((self.clone(), group.clone(), id)),
        })
    }

    fn close_subscription(&self, group: &Subject, id: u64) {
        if self.inner.router.remove(group, id) {
            self.inner.backend.leave(group);
        }
    }

    /// Leaves every group and closes the connection.
    pub fn close(&self) {
        for group in self.inner.router.clear() {
            self.inner.backend.leave(&group);
        }
        self.inner.backend.close();
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        for group in self.router.clear() {
            self.backend.leave(&group);
        }
        self.backend.close();
    }
}

fn decode(raw: RawEvent, counters: &Counters) -> Option<Event> {
    match raw {
        RawEvent::Membership(m) => Some(Event::Membership(m)),
        RawEvent::Message {
            group,
            frame,
            group_seq,
        } => match Message::decode(frame.encoding, &frame.payload) {
            Ok(message) => Some(Event::Message(Delivery {
                group,
                encoded_bytes: frame.payload.len(),
                subject: frame.subject,
                message,
                level: frame.level,
                sender: frame.sender,
                group_seq,
                publish_time_ns: frame.publish_time_ns,
            })),
            Err(e) => {
                counters.malformed();
                tracing::warn!(sender = %frame.sender, subject = %frame.subject, "bus message dropped: {e}");
                None
            }
        },
    }
}

/// Events of one subscription: messages whose subject its pattern matches, decoded
/// when taken (a malformed one is counted in [`Bus::stats`] and skipped), and for a
/// [`Bus::join`] membership changes. Dropping it unsubscribes.
pub struct Subscription {
    rx: Receiver<RawEvent>,
    counters: Arc<Counters>,
    owner: Option<(Bus, Subject, u64)>,
}

impl fmt::Debug for Subscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Subscription")
            .field("queued", &self.rx.len())
            .finish()
    }
}

impl Subscription {
    /// Waits for the next event.
    pub fn recv(&self) -> Result<Event, BusError> {
        loop {
            let raw = self.rx.recv().map_err(|_| BusError::Closed)?;
            if let Some(e) = decode(raw, &self.counters) {
                return Ok(e);
            }
        }
    }

    /// Waits at most `timeout` for the next event.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<Option<Event>, BusError> {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(raw) => {
                    if let Some(e) = decode(raw, &self.counters) {
                        return Ok(Some(e));
                    }
                }
                Err(RecvTimeoutError::Timeout) => return Ok(None),
                Err(RecvTimeoutError::Disconnected) => return Err(BusError::Closed),
            }
        }
    }

    /// The next event if one is there.
    pub fn try_recv(&self) -> Result<Option<Event>, BusError> {
        loop {
            match self.rx.try_recv() {
                Ok(raw) => {
                    if let Some(e) = decode(raw, &self.counters) {
                        return Ok(Some(e));
                    }
                }
                Err(TryRecvError::Empty) => return Ok(None),
                Err(TryRecvError::Disconnected) => return Err(BusError::Closed),
            }
        }
    }

    /// Unsubscribes (leaving the group if it was the connection's last subscription
    /// there).
    pub fn close(mut self) {
        self.unsubscribe();
    }

    fn unsubscribe(&mut self) {
        if let Some((bus, group, id)) = self.owner.take() {
            bus.close_subscription(&group, id);
        }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        self.unsubscribe();
    }
}

/// A subscription whose events go to a callback on a thread of its own; dropping it
/// unsubscribes and waits for the thread.
pub struct CallbackSubscription {
    subscription: Option<Subscription>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl fmt::Debug for CallbackSubscription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallbackSubscription")
            .finish_non_exhaustive()
    }
}

impl Drop for CallbackSubscription {
    fn drop(&mut self) {
        drop(self.subscription.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

pub(crate) type EventSender = Sender<RawEvent>;

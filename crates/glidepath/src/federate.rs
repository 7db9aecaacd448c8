//! A joined federate: the handle users call services on, and the RTI thread that feeds
//! its local RTI component from the transport.
//!
//! Threads and locks, in one place:
//! - The [`LocalRti`] sits behind one mutex. User calls and the RTI thread take it for
//!   the length of one core call; callbacks are never invoked while it is held, so a
//!   callback may call back into the federate.
//! - The RTI thread waits on the endpoint's inbox and a wake channel. It feeds
//!   envelopes to the core in batches; in the evoked model it then signals a condvar
//!   that `evoke_*` waits on, in the immediate model it pops callbacks and invokes the
//!   ambassador itself. User calls that queue callbacks (an immediate grant, a
//!   reservation answer) wake it too.
//! - Only one thread invokes an ambassador at a time, in queue order: the RTI thread
//!   (immediate), or whoever holds the evoke lock (evoked).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::thread::{self, JoinHandle, ThreadId};
use std::time::{Duration, Instant};

use bytes::Bytes;
use crossbeam_channel::{Receiver, Sender};
use glidepath_core::{
    AttributeHandle, Callback, FederateHandle, FederateInfo, Fom, InteractionClassHandle, LocalRti,
    LocalStats, LogicalTime, LogicalTimeInterval, ObjectClassHandle, ObjectInstanceHandle,
    ParameterHandle, ProcessModel, ResignAction, RtiError, TimeError,
};
use glidepath_transport::Endpoint;
use parking_lot::{Mutex, MutexGuard};

use crate::ambassador::FederateAmbassador;
use crate::error::{NameError, NameKind};
use crate::link::{EndpointLink, LinkFailure};

/// How many envelopes the RTI thread feeds to the core under one lock.
const ENVELOPE_BATCH: usize = 256;

/// Callbacks an evoked federate may have queued before its RTI thread stops moving
/// envelopes from the inbox into the core. A federate that stops evoking then holds
/// its backlog in the transport's inbox, where the transport's bound applies: over
/// NATS the endpoint stops reading, acknowledging and so lets its senders wait
/// (`glidepath_transport::nats::flow`), instead of this process growing without
/// bound. The same as the NATS inbox's bound, so a federate never holds more than
/// about twice that.
pub(crate) const CALLBACK_BACKLOG_MAX: usize = 2 * glidepath_transport::BEST_EFFORT_BACKLOG_MAX;

/// How long the RTI thread of an evoked federate stays off the inbox after the last
/// wait inside an evoke call ended. While evoke calls follow each other closer than
/// this, the evoker alone drains the inbox (spinning or blocked on it) and messages
/// reach its callbacks with one thread hand-over fewer; once the user stops evoking,
/// the RTI thread takes over within about this long, so the federate still answers
/// its peers (acknowledgements, time status).
const SPIN_HANDOFF: Duration = Duration::from_millis(1);

/// How a federate joins a federation execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinOptions {
    /// The federate's name, unique in the federation. Default `None`: the executive
    /// names it `HLAfederate<handle>`, so anonymous federates never collide.
    pub federate_name: Option<String>,
    /// The federate's type, free text shown by `list_federates`. Default `"glidepath"`.
    pub federate_type: String,
    /// When callbacks are delivered. Default [`ProcessModel::Evoked`], because it
    /// needs no ambassador at join time and keeps callbacks on the user's thread.
    pub process_model: ProcessModel,
    /// How the thread that delivers callbacks waits for traffic. Default
    /// [`WaitStrategy::Park`]: no CPU burnt while idle.
    pub wait: WaitStrategy,
}

/// How a federate's delivering thread waits for incoming traffic.
///
/// On a virtual machine a blocking wake-up of a thread on the other core costs tens
/// of microseconds, while a cache line crosses in well under one: a latency-critical
/// federate spins, one that must leave the CPU to others parks.
///
/// - [`WaitStrategy::Park`]: block until woken (the RTI thread feeds the core).
/// - [`WaitStrategy::Spin`]: busy-poll the inbox, never block. In the evoked model the
///   evoking thread itself drains the inbox and feeds the core while the RTI thread
///   keeps off it (it takes over a millisecond after evoke calls stop, so the federate
///   still answers its peers); in the immediate model the RTI thread spins and holds
///   a core.
/// - [`WaitStrategy::SpinPark`]: spin for `spin`, then park.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum WaitStrategy {
    /// Block until woken.
    #[default]
    Park,
    /// Busy-poll, then block once `spin` has passed without traffic.
    SpinPark {
        /// How long to poll before blocking.
        spin: Duration,
    },
    /// Busy-poll forever.
    Spin,
}

impl WaitStrategy {
    /// The spin budget of `spin-park` when none is given: a few wake-up costs.
    pub const DEFAULT_SPIN: Duration = Duration::from_micros(100);

    /// The strategy's name as the CLI spells it: `park`, `spin-park` or `spin`.
    pub fn name(self) -> &'static str {
        match self {
            WaitStrategy::Park => "park",
            WaitStrategy::SpinPark { .. } => "spin-park",
            WaitStrategy::Spin => "spin",
        }
    }
}

impl std::fmt::Display for WaitStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for WaitStrategy {
    type Err = String;

    /// `park`, `spin`, `spin-park` (spinning [`WaitStrategy::DEFAULT_SPIN`]) or
    /// `spin-park:MICROS`.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "park" => Ok(WaitStrategy::Park),
            "spin" => Ok(WaitStrategy::Spin),
            "spin-park" => Ok(WaitStrategy::SpinPark {
                spin: WaitStrategy::DEFAULT_SPIN,
            }),
            other => match other.strip_prefix("spin-park:").map(str::parse::<u64>) {
                Some(Ok(us)) => Ok(WaitStrategy::SpinPark {
                    spin: Duration::from_micros(us),
                }),
                _ => Err(format!(
                    "unknown wait strategy `{other}`: expected park, spin, spin-park or spin-park:MICROS"
                )),
            },
        }
    }
}

impl Default for JoinOptions {
    fn default() -> Self {
        JoinOptions {
            federate_name: None,
            federate_type: "glidepath".into(),
            process_model: ProcessModel::Evoked,
            wait: WaitStrategy::Park,
        }
    }
}

impl JoinOptions {
    /// Evoked-model options for a named federate of a type.
    pub fn named(federate_name: impl Into<String>, federate_type: impl Into<String>) -> Self {
        JoinOptions {
            federate_name: Some(federate_name.into()),
            federate_type: federate_type.into(),
            ..Default::default()
        }
    }

    /// The same options with another process model.
    pub fn with_process_model(mut self, process_model: ProcessModel) -> Self {
        self.process_model = process_model;
        self
    }

    /// The same options with another wait strategy.
    pub fn with_wait(mut self, wait: WaitStrategy) -> Self {
        self.wait = wait;
        self
    }
}

/// A value usable as a logical time: an `f64` (seconds or whatever unit the
/// federation agrees on), a [`LogicalTime`], or a `u32`.
pub trait IntoLogicalTime: Copy {
    /// The time as a float (NaN is rejected by the service it is passed to).
    fn into_time_f64(self) -> f64;
}
impl IntoLogicalTime for f64 {
    fn into_time_f64(self) -> f64 {
        self
    }
}
impl IntoLogicalTime for LogicalTime {
    fn into_time_f64(self) -> f64 {
        self.as_f64()
    }
}
impl IntoLogicalTime for u32 {
    fn into_time_f64(self) -> f64 {
        f64::from(self)
    }
}

fn logical_time(t: impl IntoLogicalTime) -> Result<LogicalTime, RtiError> {
    let x = t.into_time_f64();
    LogicalTime::new(x).ok_or_else(|| TimeError::InvalidLogicalTime(x).into())
}

/// What the user handles and the RTI thread share.
struct Shared {
    rti: Mutex<LocalRti>,
    endpoint: Box<dyn Endpoint>,
    failure: LinkFailure,
    process_model: ProcessModel,
    wait: WaitStrategy,
    /// Evoked model: an evoker is waiting on the inbox now (spinning or blocked).
    evoker_waiting: AtomicBool,
    /// Evoked model: how many waits evoke calls have ended, so the RTI thread can
    /// tell whether one ended in its last [`SPIN_HANDOFF`] without reading a clock
    /// on every callback.
    waits_ended: AtomicU64,
    /// Wakes a blocked evoker when callbacks are queued by another thread or the
    /// federate stops (capacity one: a pending wake-up is enough, and one sent
    /// before the evoker blocks is not lost).
    evoker_wake: Sender<()>,
    evoker_woken: Receiver<()>,
    /// Wakes the RTI thread (capacity one: a pending wake-up is enough).
    wake: Sender<()>,
    stopped: AtomicBool,
    /// Serialises evoke calls so callbacks reach ambassadors in order.
    evoke_lock: Mutex<()>,
    /// The thread inside an evoke call, to refuse re-entry from a callback.
    evoking: Mutex<Option<ThreadId>>,
    handle: FederateHandle,
    name: String,
    federation_name: String,
    fom: Arc<Fom>,
}

impl Shared {
    fn link(&self) -> EndpointLink<'_> {
        EndpointLink {
            endpoint: &*self.endpoint,
            failure: &self.failure,
        }
    }

    fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Lets whoever delivers callbacks know some are queued.
    fn callbacks_queued(&self) {
        match self.process_model {
            ProcessModel::Evoked => self.wake_evoker(),
            ProcessModel::Immediate => {
                let _ = self.wake.try_send(());
            }
        }
    }

    /// Runs one user call against the core: reports a transport failure recorded
    /// since the last call (or during this one), and hands on queued callbacks.
    fn call<R>(
        &self,
        f: impl FnOnce(&mut LocalRti, &mut EndpointLink<'_>) -> Result<R, RtiError>,
    ) -> Result<R, RtiError> {
        let (result, queued) = {
            let mut rti = self.rti.lock();
            if let Some(e) = self.failure.take() {
                return Err(e);
            }
            let result = f(&mut rti, &mut self.link());
            let result = match self.failure.take() {
                Some(e) => Err(e),
                None => result,
            };
            (result, rti.pending_callbacks() > 0)
        };
        if queued {
            self.callbacks_queued();
        }
        result
    }

    /// Reads the core without going through the transport.
    fn read<R>(&self, f: impl FnOnce(&LocalRti) -> R) -> R {
        f(&self.rti.lock())
    }

    /// Feeds what is waiting in the inbox (up to a batch) to the core, under the
    /// core's lock.
    ///
    /// Every envelope is taken off the inbox with the lock held, by whichever thread
    /// drains (the RTI thread, or an evoker that spins): taking one outside the lock
    /// could let a later envelope of the same sender overtake it.
    fn drain_inbox(&self, rti: &mut LocalRti) -> Drained {
        let inbox = self.endpoint.inbox();
        let mut link = self.link();
        let mut drained = Drained::Empty;
        for _ in 0..ENVELOPE_BATCH {
            match inbox.try_recv() {
                Ok(env) => {
                    rti.handle_envelope(&mut link, env);
                    drained = Drained::Some;
                }
                Err(crossbeam_channel::TryRecvError::Empty) => break,
                Err(crossbeam_channel::TryRecvError::Disconnected) => return Drained::Closed,
            }
        }
        drained
    }

    /// The RTI thread's drain: takes the lock, feeds the core, and tells an evoker
    /// when callbacks are queued.
    fn handle_inbox(&self) -> Drained {
        let (drained, queued) = {
            let mut rti = self.rti.lock();
            let drained = self.drain_inbox(&mut rti);
            (drained, rti.pending_callbacks())
        };
        if queued > 0 && drained == Drained::Some && self.process_model == ProcessModel::Evoked {
            self.wake_evoker();
            if queued >= CALLBACK_BACKLOG_MAX {
                return Drained::Backlogged;
            }
        }
        drained
    }

    /// Evoked model: whether the callbacks waiting for evoke calls reached
    /// [`CALLBACK_BACKLOG_MAX`].
    fn backlogged(&self) -> bool {
        self.process_model == ProcessModel::Evoked
            && self.rti.lock().pending_callbacks() >= CALLBACK_BACKLOG_MAX
    }

    fn wake_evoker(&self) {
        let _ = self.evoker_wake.try_send(());
    }

    /// Immediate model: invokes the ambassador for every queued callback, without
    /// holding the core's lock.
    fn deliver_immediate(&self, ambassador: &mut dyn FederateAmbassador) {
        while !self.stopped() {
            let Some(callback) = self.rti.lock().poll_callback() else {
                break;
            };
            ambassador.callback(callback);
        }
    }

    /// Evoked model: the next callback, waiting until `deadline` (forever when `None`)
    /// the way the wait strategy says: spinning first, then blocking. Either way this
    /// thread drains the inbox itself while it waits and the RTI thread keeps off it,
    /// so a message reaches the callback with one thread hand-over fewer.
    fn wait_callback(&self, deadline: Option<Instant>) -> Option<Callback> {
        let spin_until = match self.wait {
            WaitStrategy::Park => None,
            WaitStrategy::Spin => Some(deadline),
            WaitStrategy::SpinPark { spin } => {
                let end = Instant::now().checked_add(spin);
                Some(match (end, deadline) {
                    (Some(e), Some(d)) => Some(e.min(d)),
                    (e, d) => e.or(d),
                })
            }
        };
        self.evoker_waiting.store(true, Ordering::Release);
        let found = match spin_until {
            Some(until) => match self.spin_for_callback(until) {
                Some(cb) => Some(cb),
                None if self.wait == WaitStrategy::Spin || self.stopped() => None,
                None => self.block_for_callback(deadline),
            },
            None => self.block_for_callback(deadline),
        };
        self.waits_ended.fetch_add(1, Ordering::Release);
        self.evoker_waiting.store(false, Ordering::Release);
        found
    }

    /// Waits for a callback until `deadline`, draining the inbox on this thread and
    /// blocking (no CPU) until it has something, the RTI thread or a user call queues
    /// callbacks, or the federate stops.
    fn block_for_callback(&self, deadline: Option<Instant>) -> Option<Callback> {
        let inbox = self.endpoint.inbox();
        // Built only when this call must block: most find a callback at once.
        let mut select: Option<crossbeam_channel::Select<'_>> = None;
        // The deadline passed: one last look, then give up.
        let mut last_look = false;
        loop {
            {
                let mut rti = self.rti.lock();
                if self.stopped() {
                    return None;
                }
                if let Some(cb) = rti.poll_callback() {
                    return Some(cb);
                }
                let drained = self.drain_inbox(&mut rti);
                if let Some(cb) = rti.poll_callback() {
                    return Some(cb);
                }
                match drained {
                    Drained::Closed => return None,
                    _ if last_look => return None,
                    // A full batch: more may be waiting, no need to block.
                    Drained::Some if !inbox.is_empty() => continue,
                    _ => {}
                }
            }
            // Nothing is taken off a channel here: the inbox only under the lock
            // above, and a wake-up token just below.
            let select = select.get_or_insert_with(|| {
                let mut select = crossbeam_channel::Select::new();
                select.recv(inbox);
                select.recv(&self.evoker_woken);
                select
            });
            let ready = match deadline {
                Some(d) => select.ready_deadline(d).ok(),
                None => Some(select.ready()),
            };
            let _ = self.evoker_woken.try_recv();
            last_look = ready.is_none();
        }
    }

    /// Polls for a callback, draining the inbox on this thread, until `until`.
    fn spin_for_callback(&self, until: Option<Instant>) -> Option<Callback> {
        {
            let mut rounds = 0u32;
            loop {
                {
                    let mut rti = self.rti.lock();
                    if self.stopped() {
                        return None;
                    }
                    if let Some(cb) = rti.poll_callback() {
                        return Some(cb);
                    }
                    let drained = self.drain_inbox(&mut rti);
                    if let Some(cb) = rti.poll_callback() {
                        return Some(cb);
                    }
                    if drained == Drained::Closed {
                        return None;
                    }
                }
                rounds = rounds.wrapping_add(1);
                // Reading the clock costs more than a spin round: look every 64.
                if rounds & 63 == 0 && until.is_some_and(|t| Instant::now() >= t) {
                    return None;
                }
                std::hint::spin_loop();
            }
        }
    }

    /// Enters an evoke call, or `None` when evoking is not allowed here (immediate
    /// model, or re-entry from a callback on the evoking thread).
    fn enter_evoke(&self) -> Option<EvokeGuard<'_>> {
        if self.process_model == ProcessModel::Immediate {
            return None;
        }
        let me = thread::current().id();
        if *self.evoking.lock() == Some(me) {
            return None;
        }
        let lock = self.evoke_lock.lock();
        *self.evoking.lock() = Some(me);
        Some(EvokeGuard {
            _lock: lock,
            evoking: &self.evoking,
        })
    }
}

struct EvokeGuard<'a> {
    _lock: MutexGuard<'a, ()>,
    evoking: &'a Mutex<Option<ThreadId>>,
}

impl Drop for EvokeGuard<'_> {
    fn drop(&mut self) {
        *self.evoking.lock() = None;
    }
}

/// Stops callback delivery cleanly if an ambassador panics on the RTI thread: the
/// federate's next call reports it instead of callbacks silently ceasing.
struct RtiThreadExit<'a>(&'a Shared);

impl Drop for RtiThreadExit<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            self.0.failure.record_panic();
        }
        self.0.stopped.store(true, Ordering::Release);
        self.0.wake_evoker();
    }
}

/// What a drain of the inbox found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Drained {
    Empty,
    Some,
    /// Some, and the evoked federate's queue of callbacks is full: stop draining.
    Backlogged,
    /// The endpoint was closed: nothing more will come.
    Closed,
}

fn rti_thread(
    shared: Arc<Shared>,
    wake: Receiver<()>,
    mut ambassador: Option<Box<dyn FederateAmbassador + Send>>,
) {
    let _exit = RtiThreadExit(&shared);
    let inbox = shared.endpoint.inbox().clone();
    // An evoked federate drains its inbox in its evoke calls while it waits; a
    // thread here that also blocked on the inbox would make senders pay for waking
    // it, and every message cross one more thread.
    let evoked = shared.process_model == ProcessModel::Evoked;
    let spin = match (shared.process_model, shared.wait) {
        (ProcessModel::Immediate, WaitStrategy::Spin) => None,
        (ProcessModel::Immediate, WaitStrategy::SpinPark { spin }) => Some(spin),
        _ => Some(Duration::ZERO),
    };
    let mut select = crossbeam_channel::Select::new();
    let wake_index = select.recv(&wake);
    select.recv(&inbox);
    let mut waits_seen = u64::MAX;
    let mut backlogged = false;
    loop {
        // Whether an evoke call waits on the inbox now, or ended a wait since the
        // last look (at most SPIN_HANDOFF ago): then the evoker drains, not us.
        let evoker_draining = evoked && {
            let waits = shared.waits_ended.load(Ordering::Acquire);
            let active = shared.evoker_waiting.load(Ordering::Acquire) || waits != waits_seen;
            waits_seen = waits;
            active
        };
        // Off the inbox while the evoker drains it, or while nobody evokes and the
        // queue is full (the rest stays in the inbox, see CALLBACK_BACKLOG_MAX, until
        // evoke calls have taken some); back on once neither holds.
        if evoker_draining || backlogged {
            match wake.recv_timeout(SPIN_HANDOFF) {
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
                _ if shared.stopped() => break,
                _ => {
                    if backlogged {
                        backlogged = shared.backlogged();
                    }
                    continue;
                }
            }
        }
        let mut closed = false;
        if spin != Some(Duration::ZERO) {
            // Immediate model, spinning: poll the inbox, deliver, until the budget
            // passes without traffic.
            let mut idle_since = Instant::now();
            let mut rounds = 0u32;
            loop {
                match shared.handle_inbox() {
                    Drained::Closed => {
                        closed = true;
                        break;
                    }
                    Drained::Some | Drained::Backlogged => idle_since = Instant::now(),
                    Drained::Empty => {}
                }
                if let Some(amb) = ambassador.as_mut() {
                    shared.deliver_immediate(&mut **amb);
                }
                // A wake-up only matters for stopping: callbacks are polled anyway.
                let _ = wake.try_recv();
                if shared.stopped() {
                    break;
                }
                rounds = rounds.wrapping_add(1);
                if rounds & 63 == 0 {
                    if let Some(budget) = spin {
                        if idle_since.elapsed() >= budget {
                            break;
                        }
                    }
                }
                std::hint::spin_loop();
            }
        }
        if closed || shared.stopped() {
            break;
        }
        // Block until the inbox has something or somebody wakes us; take nothing off
        // the inbox outside the core's lock.
        let ready = select.ready();
        if ready == wake_index {
            let _ = wake.try_recv();
        } else {
            match shared.handle_inbox() {
                Drained::Closed => break,
                Drained::Backlogged => backlogged = true,
                Drained::Some | Drained::Empty => {}
            }
        }
        if shared.stopped() {
            break;
        }
        if let Some(amb) = ambassador.as_mut() {
            shared.deliver_immediate(&mut **amb);
        }
    }
}

/// The part whose drop means "the user let go of the federate".
struct Inner {
    shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    thread_id: ThreadId,
}

impl Inner {
    /// Stops the RTI thread and closes the endpoint (draining what was published).
    fn shutdown(&self) {
        let s = &self.shared;
        s.stopped.store(true, Ordering::Release);
        let _ = s.wake.try_send(());
        s.endpoint.close();
        s.wake_evoker();
        if thread::current().id() != self.thread_id {
            if let Some(handle) = self.thread.lock().take() {
                // A panic on the RTI thread was recorded by its exit guard.
                let _ = handle.join();
            }
        }
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        {
            let mut rti = self.shared.rti.lock();
            if !rti.is_resigned() {
                // Nobody is left to hear about a failure here.
                let _ = rti.resign(&mut self.shared.link(), ResignAction::DeleteObjects);
            }
        }
        self.shutdown();
    }
}

/// A federate joined to a federation execution.
///
/// Cheap to clone; every clone is the same federate and may be used from any thread.
/// Dropping the last clone resigns with [`ResignAction::DeleteObjects`] (if still
/// joined) and stops the federate's RTI thread.
///
/// In the immediate model an ambassador that keeps a clone keeps the federate alive:
/// keep a [`WeakFederate`] there instead, or call [`Federate::resign`] explicitly.
#[derive(Clone)]
pub struct Federate {
    inner: Arc<Inner>,
}

/// A federate reference that does not keep it joined (see [`Federate::downgrade`]).
#[derive(Clone)]
pub struct WeakFederate {
    inner: Weak<Inner>,
}

impl WeakFederate {
    /// The federate, if some [`Federate`] handle still holds it.
    pub fn upgrade(&self) -> Option<Federate> {
        self.inner.upgrade().map(|inner| Federate { inner })
    }
}

impl std::fmt::Debug for Federate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.inner.shared;
        f.debug_struct("Federate")
            .field("handle", &s.handle)
            .field("name", &s.name)
            .field("federation", &s.federation_name)
            .field("process_model", &s.process_model)
            .finish()
    }
}

impl Federate {
    /// Starts the RTI thread for a freshly joined core.
    pub(crate) fn start(
        endpoint: Box<dyn Endpoint>,
        failure: LinkFailure,
        rti: LocalRti,
        process_model: ProcessModel,
        wait: WaitStrategy,
        ambassador: Option<Box<dyn FederateAmbassador + Send>>,
    ) -> Result<Federate, RtiError> {
        let (wake_tx, wake_rx) = crossbeam_channel::bounded(1);
        let (evoker_wake, evoker_woken) = crossbeam_channel::bounded(1);
        let shared = Arc::new(Shared {
            handle: rti.handle(),
            name: rti.name().to_string(),
            federation_name: rti.federation_name().to_string(),
            fom: rti.fom().clone(),
            rti: Mutex::new(rti),
            endpoint,
            failure,
            process_model,
            wait,
            evoker_waiting: AtomicBool::new(false),
            waits_ended: AtomicU64::new(0),
            evoker_wake,
            evoker_woken,
            wake: wake_tx,
            stopped: AtomicBool::new(false),
            evoke_lock: Mutex::new(()),
            evoking: Mutex::new(None),
        });
        let for_thread = shared.clone();
        let spawned = thread::Builder::new()
            .name(format!("glidepath-rti-{}", shared.name))
            .spawn(move || rti_thread(for_thread, wake_rx, ambassador));
        match spawned {
            Ok(handle) => {
                let thread_id = handle.thread().id();
                let inner = Arc::new(Inner {
                    shared,
                    thread: Mutex::new(Some(handle)),
                    thread_id,
                });
                // Callbacks queued by the join itself must not wait for traffic.
                if inner.shared.read(|r| r.pending_callbacks()) > 0 {
                    inner.shared.callbacks_queued();
                }
                Ok(Federate { inner })
            }
            Err(e) => {
                let _ = shared
                    .rti
                    .lock()
                    .resign(&mut shared.link(), ResignAction::DeleteObjects);
                shared.endpoint.close();
                Err(RtiError::Transport(format!(
                    "cannot start the federate's RTI thread: {e}"
                )))
            }
        }
    }

    fn shared(&self) -> &Shared {
        &self.inner.shared
    }

    // ----- identity -------------------------------------------------------------------

    /// This federate's handle in the federation.
    pub fn handle(&self) -> FederateHandle {
        self.shared().handle
    }
    /// This federate's name (given at join, or assigned by the executive).
    pub fn name(&self) -> &str {
        &self.shared().name
    }
    /// The federation execution's name.
    pub fn federation_name(&self) -> &str {
        &self.shared().federation_name
    }
    /// The federation's merged FOM.
    pub fn fom(&self) -> &Arc<Fom> {
        &self.shared().fom
    }
    /// The process model chosen at join.
    pub fn process_model(&self) -> ProcessModel {
        self.shared().process_model
    }
    /// A reference that does not keep the federate joined.
    pub fn downgrade(&self) -> WeakFederate {
        WeakFederate {
            inner: Arc::downgrade(&self.inner),
        }
    }
    /// True once the federate has resigned.
    pub fn is_resigned(&self) -> bool {
        self.shared().read(|r| r.is_resigned())
    }

    // ----- support services: names and handles ------------------------------------

    /// The handle of an object class by dotted name, with or without `HLAobjectRoot.`.
    pub fn object_class_handle(&self, name: &str) -> Result<ObjectClassHandle, NameError> {
        self.fom()
            .object_class_by_name(name)
            .ok_or_else(|| NameError::not_found(NameKind::ObjectClass, name))
    }
    /// The handle of an attribute (own or inherited) of an object class.
    pub fn attribute_handle(
        &self,
        class: ObjectClassHandle,
        name: &str,
    ) -> Result<AttributeHandle, NameError> {
        self.fom()
            .object_class(class)
            .ok_or(NameError::InvalidObjectClassHandle(class))?;
        self.fom()
            .attribute_by_name(class, name)
            .ok_or_else(|| NameError::not_found(NameKind::Attribute(class), name))
    }
    /// The handle of an interaction class by dotted name, with or without `HLAinteractionRoot.`.
    pub fn interaction_class_handle(
        &self,
        name: &str,
    ) -> Result<InteractionClassHandle, NameError> {
        self.fom()
            .interaction_class_by_name(name)
            .ok_or_else(|| NameError::not_found(NameKind::InteractionClass, name))
    }
    /// The handle of a parameter (own or inherited) of an interaction class.
    pub fn parameter_handle(
        &self,
        class: InteractionClassHandle,
        name: &str,
    ) -> Result<ParameterHandle, NameError> {
        self.fom()
            .interaction_class(class)
            .ok_or(NameError::InvalidInteractionClassHandle(class))?;
        self.fom()
            .parameter_by_name(class, name)
            .ok_or_else(|| NameError::not_found(NameKind::Parameter(class), name))
    }
    /// The dotted name of an object class (`HLAobjectRoot.Vehicle.Aircraft`).
    pub fn object_class_name(&self, class: ObjectClassHandle) -> Result<&str, NameError> {
        self.fom()
            .object_class(class)
            .map(|c| c.qualified_name.as_str())
            .ok_or(NameError::InvalidObjectClassHandle(class))
    }
    /// The name of an attribute.
    pub fn attribute_name(&self, attribute: AttributeHandle) -> Result<&str, NameError> {
        self.fom()
            .attribute(attribute)
            .map(|a| a.name.as_str())
            .ok_or(NameError::InvalidAttributeHandle(attribute))
    }
    /// The dotted name of an interaction class.
    pub fn interaction_class_name(&self, class: InteractionClassHandle) -> Result<&str, NameError> {
        self.fom()
            .interaction_class(class)
            .map(|c| c.qualified_name.as_str())
            .ok_or(NameError::InvalidInteractionClassHandle(class))
    }
    /// The name of a parameter.
    pub fn parameter_name(&self, parameter: ParameterHandle) -> Result<&str, NameError> {
        self.fom()
            .parameter(parameter)
            .map(|p| p.name.as_str())
            .ok_or(NameError::InvalidParameterHandle(parameter))
    }
    /// The name of an object instance this federate has discovered.
    pub fn object_instance_name(&self, instance: ObjectInstanceHandle) -> Option<String> {
        self.shared()
            .read(|r| r.object_instance_name(instance).map(str::to_string))
    }

    // ----- federation management ------------------------------------------------------

    /// The federation's members as the executive lists them.
    pub fn list_federates(&self) -> Result<Vec<FederateInfo>, RtiError> {
        self.shared().call(|r, l| r.list_federates(l))
    }

    /// Sends whatever the transport holds back (a bundle being gathered) and waits
    /// until the transport has it. Time advance requests (TAR, TARA, NER, NERA, FQR)
    /// and resign do this by themselves; call it after a burst of updates that must
    /// not wait for the bundle timer. Does nothing on `inproc`.
    pub fn flush(&self) -> Result<(), RtiError> {
        self.shared()
            .endpoint
            .flush()
            .map_err(crate::link::transport_error)
    }

    /// Resigns from the federation, deleting or divesting owned objects as `action`
    /// says, then stops the RTI thread and closes the endpoint. No callback arrives
    /// after this returns `Ok`. On `Err` the federate is still joined.
    pub fn resign(&self, action: ResignAction) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.resign(l, action))?;
        self.inner.shutdown();
        Ok(())
    }

    /// Registers a synchronization point for every joined federate. The outcome
    /// arrives as `synchronization_point_registration_succeeded` (or `_failed`).
    pub fn register_federation_synchronization_point(
        &self,
        label: &str,
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.register_federation_synchronization_point(l, label, tag, None))
    }

    /// Registers a synchronization point for the listed federates only (an empty
    /// list means every joined federate, as the standard says).
    pub fn register_federation_synchronization_point_for(
        &self,
        label: &str,
        tag: impl Into<Bytes>,
        federates: &[FederateHandle],
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared().call(|r, l| {
            r.register_federation_synchronization_point(l, label, tag, Some(federates.to_vec()))
        })
    }

    /// Reports that this federate reached an announced synchronization point.
    pub fn synchronization_point_achieved(&self, label: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.synchronization_point_achieved(l, label, true))
    }

    /// Reports that this federate could not reach an announced synchronization point;
    /// it is listed in `federation_synchronized`'s `failed`.
    pub fn synchronization_point_failed(&self, label: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.synchronization_point_achieved(l, label, false))
    }

    // ----- declaration management ---------------------------------------------------

    /// Publishes these attributes of `class` (added to those already published).
    pub fn publish_object_class_attributes(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.publish_object_class_attributes(class, attributes))
    }
    /// Stops publishing `class`.
    pub fn unpublish_object_class(&self, class: ObjectClassHandle) -> Result<(), RtiError> {
        self.shared().call(|r, _| r.unpublish_object_class(class))
    }
    /// Subscribes these attributes of `class` (replacing the class's previous set).
    /// Instances of `class` and its subclasses, including those registered earlier,
    /// are discovered as `class` unless a closer subscribed class applies.
    pub fn subscribe_object_class_attributes(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.subscribe_object_class_attributes(l, class, attributes))
    }
    /// Stops subscribing `class`.
    pub fn unsubscribe_object_class(&self, class: ObjectClassHandle) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.unsubscribe_object_class(l, class))
    }
    /// Publishes an interaction class.
    pub fn publish_interaction_class(&self, class: InteractionClassHandle) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.publish_interaction_class(class))
    }
    /// Stops publishing an interaction class.
    pub fn unpublish_interaction_class(
        &self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.unpublish_interaction_class(class))
    }
    /// Subscribes an interaction class; interactions of subclasses arrive as this class.
    pub fn subscribe_interaction_class(
        &self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.subscribe_interaction_class(l, class))
    }
    /// Stops subscribing an interaction class.
    pub fn unsubscribe_interaction_class(
        &self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.unsubscribe_interaction_class(l, class))
    }

    // ----- object management --------------------------------------------------------

    /// Asks to reserve an object instance name; the answer arrives as
    /// `object_instance_name_reservation_succeeded` (or `_failed`).
    pub fn reserve_object_instance_name(&self, name: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.reserve_object_instance_name(l, name))
    }
    /// Releases a reserved name that was not used.
    pub fn release_object_instance_name(&self, name: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.release_object_instance_name(l, name))
    }
    /// Registers an instance of a published class under a name the executive picks.
    pub fn register_object_instance(
        &self,
        class: ObjectClassHandle,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        self.shared()
            .call(|r, l| r.register_object_instance(l, class, None))
    }
    /// Registers an instance under a name this federate reserved.
    pub fn register_object_instance_with_name(
        &self,
        class: ObjectClassHandle,
        name: &str,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        self.shared()
            .call(|r, l| r.register_object_instance(l, class, Some(name)))
    }
    /// Updates published attributes of an owned instance, in receive order.
    pub fn update_attribute_values(
        &self,
        instance: ObjectInstanceHandle,
        values: impl IntoIterator<Item = (AttributeHandle, Bytes)>,
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let (values, tag) = (values.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, l| r.update_attribute_values(l, instance, values, tag, None))
    }
    /// Updates attributes with a time stamp: attributes the FOM orders by time stamp
    /// travel in time-stamp order when this federate is regulating (the time must then
    /// be at least logical time plus lookahead); the others in receive order.
    pub fn update_attribute_values_at(
        &self,
        instance: ObjectInstanceHandle,
        values: impl IntoIterator<Item = (AttributeHandle, Bytes)>,
        tag: impl Into<Bytes>,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        let time = logical_time(time)?;
        let (values, tag) = (values.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, l| r.update_attribute_values(l, instance, values, tag, Some(time)))
    }
    /// Sends an interaction of a published class, in receive order.
    pub fn send_interaction(
        &self,
        class: InteractionClassHandle,
        parameters: impl IntoIterator<Item = (ParameterHandle, Bytes)>,
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let (values, tag) = (parameters.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, l| r.send_interaction(l, class, values, tag, None))
    }
    /// Sends an interaction with a time stamp (time-stamp order when the FOM says so
    /// and this federate is regulating).
    pub fn send_interaction_at(
        &self,
        class: InteractionClassHandle,
        parameters: impl IntoIterator<Item = (ParameterHandle, Bytes)>,
        tag: impl Into<Bytes>,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        let time = logical_time(time)?;
        let (values, tag) = (parameters.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, l| r.send_interaction(l, class, values, tag, Some(time)))
    }
    /// Deletes an owned instance; subscribers get `remove_object_instance`.
    pub fn delete_object_instance(
        &self,
        instance: ObjectInstanceHandle,
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.delete_object_instance(l, instance, tag, None))
    }
    /// Deletes an owned instance with a time stamp (time-stamp order when regulating).
    pub fn delete_object_instance_at(
        &self,
        instance: ObjectInstanceHandle,
        tag: impl Into<Bytes>,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        let time = logical_time(time)?;
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.delete_object_instance(l, instance, tag, Some(time)))
    }
    /// Asks the owner of a discovered instance to provide current values; it gets
    /// `provide_attribute_value_update`.
    pub fn request_instance_attribute_value_update(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.request_instance_attribute_value_update(l, instance, attributes, tag))
    }
    /// Asks the owners of every instance of `class` and its subclasses to provide values.
    pub fn request_class_attribute_value_update(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.request_class_attribute_value_update(l, class, attributes, tag))
    }

    // ----- time management ----------------------------------------------------------

    /// Asks to become time-regulating with `lookahead`; enabled by the
    /// `time_regulation_enabled` callback.
    pub fn enable_time_regulation(&self, lookahead: f64) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.enable_time_regulation(l, lookahead))
    }
    /// Stops regulating.
    pub fn disable_time_regulation(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.disable_time_regulation(l))
    }
    /// Asks to become time-constrained; enabled by the `time_constrained_enabled` callback.
    pub fn enable_time_constrained(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.enable_time_constrained(l))
    }
    /// Stops being constrained; queued time-stamped messages arrive in receive order.
    pub fn disable_time_constrained(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.disable_time_constrained(l))
    }
    /// Changes the lookahead of a regulating federate.
    pub fn modify_lookahead(&self, lookahead: f64) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.modify_lookahead(l, lookahead))
    }
    /// Time advance request (TAR): granted exactly at `time` once no earlier
    /// time-stamped message can arrive; messages up to and including `time` first.
    pub fn time_advance_request(&self, time: impl IntoLogicalTime) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.time_advance_request(l, time.into_time_f64(), false))?;
        self.flush()
    }
    /// Time advance request available (TARA): like TAR, but granted when messages at
    /// `time` itself may still arrive; needed for progress with zero lookahead.
    pub fn time_advance_request_available(
        &self,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.time_advance_request(l, time.into_time_f64(), true))?;
        self.flush()
    }
    /// Next message request (NER): granted at the earlier of `time` and the next
    /// time-stamped message, after delivering the messages at that time.
    pub fn next_message_request(&self, time: impl IntoLogicalTime) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.next_message_request(l, time.into_time_f64(), false))?;
        self.flush()
    }
    /// Next message request available (NERA): NER that may grant while messages at
    /// the granted time can still arrive.
    pub fn next_message_request_available(
        &self,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.next_message_request(l, time.into_time_f64(), true))?;
        self.flush()
    }
    /// Flush queue request (FQR): delivers every queued time-stamped message now and
    /// grants at the earliest of `time`, GALT and the first delivered time stamp.
    pub fn flush_queue_request(&self, time: impl IntoLogicalTime) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.flush_queue_request(l, time.into_time_f64()))?;
        self.flush()
    }
    /// Greatest Available Logical Time, `None` when no other federate regulates.
    pub fn query_galt(&self) -> Option<LogicalTime> {
        self.shared().read(|r| r.query_galt())
    }
    /// Least Incoming Time Stamp, `None` when nothing can arrive.
    pub fn query_lits(&self) -> Option<LogicalTime> {
        self.shared().read(|r| r.query_lits())
    }
    /// The federate's logical time.
    pub fn query_logical_time(&self) -> LogicalTime {
        self.shared().read(|r| r.logical_time())
    }
    /// The federate's lookahead.
    pub fn query_lookahead(&self) -> LogicalTimeInterval {
        self.shared().read(|r| r.lookahead())
    }
    /// True when time regulation is enabled (not merely requested).
    pub fn is_time_regulating(&self) -> bool {
        self.shared().read(|r| r.is_regulating())
    }
    /// True when time constrained is enabled (not merely requested).
    pub fn is_time_constrained(&self) -> bool {
        self.shared().read(|r| r.is_constrained())
    }
    /// True while a time advance waits for its grant.
    pub fn is_time_advancing(&self) -> bool {
        self.shared().read(|r| r.is_advancing())
    }

    // ----- callbacks (evoked model) ---------------------------------------------------

    /// Delivers one callback to `ambassador` on this thread, waiting up to `max_wait`
    /// for one. Returns whether a callback was delivered.
    ///
    /// Returns `Ok(false)` at once in the immediate model (callbacks go to the RTI
    /// thread there), after resigning, and when called from inside a callback
    /// delivered by another evoke call on this thread. Concurrent evoke calls take
    /// turns, so callbacks keep their order.
    pub fn evoke_callback(
        &self,
        ambassador: &mut impl FederateAmbassador,
        max_wait: Duration,
    ) -> Result<bool, RtiError> {
        self.check_transport()?;
        let Some(_guard) = self.shared().enter_evoke() else {
            return Ok(false);
        };
        match self
            .shared()
            .wait_callback(Instant::now().checked_add(max_wait))
        {
            Some(cb) => {
                ambassador.callback(cb);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Delivers callbacks to `ambassador` on this thread: everything that arrives
    /// during `min_wait`, then whatever is already queued, stopping at `max_wait`.
    /// Returns how many were delivered. Same restrictions as [`Federate::evoke_callback`].
    pub fn evoke_multiple_callbacks(
        &self,
        ambassador: &mut impl FederateAmbassador,
        min_wait: Duration,
        max_wait: Duration,
    ) -> Result<usize, RtiError> {
        self.check_transport()?;
        let Some(_guard) = self.shared().enter_evoke() else {
            return Ok(0);
        };
        let start = Instant::now();
        let min_deadline = start.checked_add(min_wait);
        let max_deadline = start.checked_add(max_wait.max(min_wait));
        let mut delivered = 0;
        loop {
            let now = Instant::now();
            if max_deadline.is_some_and(|d| now >= d) {
                break;
            }
            let waiting = min_deadline.is_none_or(|d| now < d);
            let callback = if waiting {
                self.shared().wait_callback(min_deadline)
            } else {
                self.shared().wait_callback(Some(now))
            };
            match callback {
                Some(cb) => {
                    ambassador.callback(cb);
                    delivered += 1;
                }
                None if waiting && !self.shared().stopped() => continue,
                None => break,
            }
        }
        Ok(delivered)
    }

    /// The next callback itself instead of an ambassador call, waiting up to
    /// `max_wait` (evoked model; `None` in the immediate model or after resigning).
    pub fn next_callback(&self, max_wait: Duration) -> Option<Callback> {
        let _guard = self.shared().enter_evoke()?;
        self.shared()
            .wait_callback(Instant::now().checked_add(max_wait))
    }

    /// How many callbacks are queued for this federate.
    pub fn pending_callbacks(&self) -> usize {
        self.shared().read(|r| r.pending_callbacks())
    }

    // ----- diagnostics ---------------------------------------------------------------

    /// Counters of received, delivered and dropped input.
    pub fn stats(&self) -> LocalStats {
        self.shared().read(|r| r.stats().clone())
    }
    /// The transport failure recorded since the federate's last call, reported (and
    /// cleared) as that call would have reported it; `Ok` when there is none. Every
    /// other call reports such a failure this way, but waiting for callbacks
    /// (`next_callback`, `evoke_callback`) does not, so a loop that only waits should
    /// ask here: a federate whose messages can no longer be sent then fails at once,
    /// instead of waiting for answers that cannot come.
    pub fn check_transport(&self) -> Result<(), RtiError> {
        match self.shared().failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
    /// How many transport operations have failed since the federate joined (each
    /// also made the next call return [`RtiError::Transport`]).
    pub fn transport_failures(&self) -> u64 {
        self.shared().failure.count()
    }
    /// What the federate's transport endpoint counted as lost or malformed (always
    /// zero on `inproc`; on `nats`, gaps in senders' sequence numbers and envelopes
    /// that could not be decoded).
    pub fn transport_stats(&self) -> glidepath_transport::EndpointStats {
        self.shared().endpoint.stats()
    }
}

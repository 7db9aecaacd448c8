//! Callback delivery: what a federate's handles and its RTI thread share
//! ([`Shared`]), the RTI thread itself, the waits inside `evoke_*`, and the
//! [`WaitStrategy`] that decides how the delivering thread waits.
//!
//! Threads and locks, in one place:
//! - The [`LocalRti`] sits behind one mutex. User calls and the RTI thread take it for
//!   the length of one core call; callbacks are never invoked while it is held, so a
//!   callback may call back into the federate.
//! - The RTI thread waits on the endpoint's inbox and a wake channel. It feeds
//!   envelopes to the core in batches; in the evoked model it then wakes an evoker
//!   blocked in `evoke_*` (and keeps off the inbox while an evoker drains it), in the
//!   immediate model it pops callbacks and invokes the ambassador itself. User calls
//!   that queue callbacks (an immediate grant, a reservation answer) wake it too.
//! - Only one thread invokes an ambassador at a time, in queue order: the RTI thread
//!   (immediate), or whoever holds the evoke lock (evoked).
//! - Envelopes are taken off a federate's inbox only while its core's lock is held,
//!   whoever drains (the RTI thread or an evoker), so a sender's order is never broken
//!   by two drainers ([`Shared::drain_inbox`]).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use glidepath_core::{Callback, FederateHandle, Fom, LocalRti, ProcessModel, RtiError};
use glidepath_transport::Endpoint;
use parking_lot::{Mutex, MutexGuard};

use crate::ambassador::FederateAmbassador;
use crate::link::{EndpointLink, LinkFailure, Outbound};
use crate::mom_clock::MomClock;

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

/// What the user handles and the RTI thread share.
pub(crate) struct Shared {
    pub(crate) rti: Mutex<LocalRti>,
    pub(crate) endpoint: Box<dyn Endpoint>,
    /// The way out: outputs in order, and transport failures.
    pub(crate) outbound: Outbound,
    pub(crate) process_model: ProcessModel,
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
    /// The evoking thread's [`thread_tag`] (0: none).
    evoking: AtomicU64,
    pub(crate) handle: FederateHandle,
    pub(crate) name: String,
    pub(crate) federation_name: String,
    pub(crate) fom: Arc<Fom>,
    /// The management object model's periodic reports.
    mom: MomClock,
}

impl Shared {
    /// What a freshly joined core's federate shares, and the receiving end of the RTI
    /// thread's wake channel (for [`spawn_rti_thread`]).
    pub(crate) fn new(
        endpoint: Box<dyn Endpoint>,
        outbound: Outbound,
        rti: LocalRti,
        process_model: ProcessModel,
        wait: WaitStrategy,
    ) -> (Arc<Shared>, Receiver<()>) {
        let (wake_tx, wake_rx) = crossbeam_channel::bounded(1);
        let (evoker_wake, evoker_woken) = crossbeam_channel::bounded(1);
        let shared = Arc::new(Shared {
            handle: rti.handle(),
            name: rti.name().to_string(),
            federation_name: rti.federation_name().to_string(),
            fom: rti.fom().clone(),
            rti: Mutex::new(rti),
            endpoint,
            outbound,
            process_model,
            wait,
            evoker_waiting: AtomicBool::new(false),
            waits_ended: AtomicU64::new(0),
            evoker_wake,
            evoker_woken,
            wake: wake_tx,
            stopped: AtomicBool::new(false),
            evoke_lock: Mutex::new(()),
            evoking: AtomicU64::new(0),
            mom: MomClock::default(),
        });
        shared.mom.attach(Arc::downgrade(&shared));
        (shared, wake_rx)
    }

    /// Stops delivery: the RTI thread and any evoker return, and the endpoint closes
    /// (draining what was published).
    pub(crate) fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        let _ = self.wake.try_send(());
        self.endpoint.close();
        self.wake_evoker();
    }

    pub(crate) fn link(&self) -> EndpointLink<'_> {
        EndpointLink {
            endpoint: &*self.endpoint,
            outbound: &self.outbound,
        }
    }

    /// Carries out what the core queued, letting go of its lock (see
    /// [`Outbound::send`]); a failure is returned.
    pub(crate) fn send(&self, rti: MutexGuard<'_, LocalRti>) -> Result<(), RtiError> {
        self.outbound.send(&*self.endpoint, rti)
    }

    /// As [`Shared::send`] where no caller waits: a failure is kept for the next call.
    fn send_or_record(&self, rti: MutexGuard<'_, LocalRti>) {
        self.outbound.send_or_record(&*self.endpoint, rti);
    }

    pub(crate) fn failure(&self) -> &LinkFailure {
        &self.outbound.failure
    }

    pub(crate) fn stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }

    /// Lets whoever delivers callbacks know some are queued.
    pub(crate) fn callbacks_queued(&self) {
        match self.process_model {
            ProcessModel::Evoked => self.wake_evoker(),
            ProcessModel::Immediate => {
                let _ = self.wake.try_send(());
            }
        }
    }

    /// Runs one user call against the core and carries out what it queued: reports a
    /// transport failure the RTI thread met since the last call, or the one this
    /// call's outputs met, and hands on queued callbacks.
    pub(crate) fn call<R>(
        &self,
        f: impl FnOnce(&mut LocalRti, &mut EndpointLink<'_>) -> Result<R, RtiError>,
    ) -> Result<R, RtiError> {
        let mut rti = self.rti.lock();
        if let Some(e) = self.failure().take() {
            return Err(e);
        }
        let result = f(&mut rti, &mut self.link());
        let queued = rti.pending_callbacks() > 0;
        let sent = self.send(rti);
        if queued {
            self.callbacks_queued();
        }
        match (result, sent) {
            (Ok(r), Ok(())) => Ok(r),
            (Ok(_), Err(e)) => Err(e),
            (Err(e), Ok(())) => Err(e),
            (Err(e), Err(lost)) => {
                // The call's own error wins; the transport's waits for the next call.
                self.failure().keep("sending the RTI's messages", lost);
                Err(e)
            }
        }
    }

    /// Reads the core without going through the transport.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&LocalRti) -> R) -> R {
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
        let mut drained = Drained::Empty;
        for _ in 0..ENVELOPE_BATCH {
            match inbox.try_recv() {
                Ok(env) => {
                    rti.handle_envelope(env);
                    drained = Drained::Some;
                }
                Err(crossbeam_channel::TryRecvError::Empty) => break,
                Err(crossbeam_channel::TryRecvError::Disconnected) => return Drained::Closed,
            }
        }
        if drained == Drained::Some {
            self.mom.after_input(rti);
        }
        drained
    }

    /// Publishes the federate's management object model report now (the periodic
    /// report an `HLAsetTiming` asked for).
    pub(crate) fn mom_report(&self) {
        let mut rti = self.rti.lock();
        rti.mom_report();
        self.send_or_record(rti);
    }

    /// The RTI thread's drain: takes the lock, feeds the core, and tells an evoker
    /// when callbacks are queued.
    fn handle_inbox(&self) -> Drained {
        let (drained, queued) = {
            let mut rti = self.rti.lock();
            let drained = self.drain_inbox(&mut rti);
            let queued = rti.pending_callbacks();
            self.send_or_record(rti);
            (drained, queued)
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
        ambassador.callbacks(&mut || {
            if self.stopped() {
                return None;
            }
            self.rti.lock().poll_callback()
        });
    }

    /// Evoked model: the next callback, waiting until `deadline` (forever when `None`)
    /// the way the wait strategy says: spinning first, then blocking. Either way this
    /// thread drains the inbox itself while it waits and the RTI thread keeps off it,
    /// so a message reaches the callback with one thread hand-over fewer.
    pub(crate) fn wait_callback(&self, deadline: impl Into<Deadline>) -> Option<Callback> {
        let mut deadline = deadline.into();
        let spin_until = match self.wait {
            WaitStrategy::Park => None,
            WaitStrategy::Spin => Some(deadline),
            WaitStrategy::SpinPark { spin } => {
                let end = Instant::now().checked_add(spin);
                Some(Deadline::At(match (end, deadline.instant()) {
                    (Some(e), Some(d)) => Some(e.min(d)),
                    (e, d) => e.or(d),
                }))
            }
        };
        self.evoker_waiting.store(true, Ordering::Release);
        let found = match spin_until {
            Some(mut until) => match self.spin_for_callback(&mut until) {
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
    fn block_for_callback(&self, mut deadline: Deadline) -> Option<Callback> {
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
                let found = rti.poll_callback();
                self.send_or_record(rti);
                if found.is_some() {
                    return found;
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
            let ready = match deadline.instant() {
                Some(d) => select.ready_deadline(d).ok(),
                None => Some(select.ready()),
            };
            let _ = self.evoker_woken.try_recv();
            last_look = ready.is_none();
        }
    }

    /// Polls for a callback, draining the inbox on this thread, until `until`.
    fn spin_for_callback(&self, until: &mut Deadline) -> Option<Callback> {
        {
            let mut rounds = 0u32;
            loop {
                // Spinning: take what the backend has straight into the inbox on
                // this thread (no hand-over from a transport thread).
                self.endpoint.pump();
                {
                    let mut rti = self.rti.lock();
                    if self.stopped() {
                        return None;
                    }
                    if let Some(cb) = rti.poll_callback() {
                        return Some(cb);
                    }
                    let drained = self.drain_inbox(&mut rti);
                    let found = rti.poll_callback();
                    self.send_or_record(rti);
                    if found.is_some() {
                        return found;
                    }
                    if drained == Drained::Closed {
                        return None;
                    }
                }
                rounds = rounds.wrapping_add(1);
                // Reading the clock costs more than a spin round: look every 64.
                if rounds & 63 == 0 && until.instant().is_some_and(|t| Instant::now() >= t) {
                    return None;
                }
                std::hint::spin_loop();
            }
        }
    }

    /// Enters an evoke call, or `None` when evoking is not allowed here (immediate
    /// model, or re-entry from a callback on the evoking thread).
    pub(crate) fn enter_evoke(&self) -> Option<EvokeGuard<'_>> {
        if self.process_model == ProcessModel::Immediate {
            return None;
        }
        let me = thread_tag();
        // Only this thread ever stores its own tag, so reading another's is harmless.
        if self.evoking.load(Ordering::Acquire) == me {
            return None;
        }
        let lock = self.evoke_lock.lock();
        self.evoking.store(me, Ordering::Release);
        Some(EvokeGuard {
            _lock: lock,
            evoking: &self.evoking,
        })
    }
}

/// A number for the calling thread, never 0 and never reused (`ThreadId::as_u64` is
/// not stable; `thread::current()` costs a reference count each call).
fn thread_tag() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    thread_local! {
        static TAG: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    TAG.with(|t| *t)
}

pub(crate) struct EvokeGuard<'a> {
    _lock: MutexGuard<'a, ()>,
    evoking: &'a AtomicU64,
}

impl Drop for EvokeGuard<'_> {
    fn drop(&mut self) {
        self.evoking.store(0, Ordering::Release);
    }
}

/// Stops callback delivery cleanly if an ambassador panics on the RTI thread: the
/// federate's next call reports it instead of callbacks silently ceasing.
struct RtiThreadExit<'a>(&'a Shared);

impl Drop for RtiThreadExit<'_> {
    fn drop(&mut self) {
        if thread::panicking() {
            self.0.failure().record_panic();
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

/// Starts the federate's RTI thread, named after the federate.
pub(crate) fn spawn_rti_thread(
    shared: Arc<Shared>,
    wake: Receiver<()>,
    ambassador: Option<Box<dyn FederateAmbassador + Send>>,
) -> std::io::Result<JoinHandle<()>> {
    thread::Builder::new()
        .name(format!("glidepath-rti-{}", shared.name))
        .spawn(move || rti_thread(shared, wake, ambassador))
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
                shared.endpoint.pump();
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

/// How long an evoke call may wait. `After` is turned into an instant only when the
/// call first has to look at the clock: most calls find a callback at once, and
/// reading the clock was 2.4 % of an in-process throughput run (`perf record`).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Deadline {
    /// Until this instant (forever when `None`).
    At(Option<Instant>),
    /// This long from the first look at the clock.
    After(Duration),
}

impl Deadline {
    /// The instant, fixed on first use.
    fn instant(&mut self) -> Option<Instant> {
        match *self {
            Deadline::At(at) => at,
            Deadline::After(wait) => {
                let at = Instant::now().checked_add(wait);
                *self = Deadline::At(at);
                at
            }
        }
    }
}

impl From<Option<Instant>> for Deadline {
    fn from(at: Option<Instant>) -> Self {
        Deadline::At(at)
    }
}

//! Where the core's outputs meet a transport [`Endpoint`].
//!
//! The core queues what it publishes and subscribes ([`Output`]); the thread that
//! called it carries the outputs out here, after the call, outside the core's lock.
//! One sender's envelopes must reach every receiver in the order the core queued them,
//! across topics, although two threads (a user thread and the RTI thread) call the
//! same core: the outputs are taken under the core's lock and the [`Outbound`] lock is
//! taken *before* the core's lock is let go, so whoever took outputs first sends them
//! first. A transport error is returned by the call whose outputs failed; one met by
//! the RTI thread, which has no caller, is kept in a [`LinkFailure`] for the user's
//! next call.

use std::ops::DerefMut;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use glidepath_core::{ExecReply, ExecRequest, Link, LocalRti, Output, RtiError};
use glidepath_transport::{Endpoint, TransportError};
use parking_lot::Mutex;

/// Failures no call could be told of (met by the RTI thread), and the count of every
/// transport failure.
#[derive(Default)]
pub(crate) struct LinkFailure {
    last: Mutex<Option<RtiError>>,
    /// Whether `last` holds something: every user call looks, so the common answer
    /// (nothing) must not take a lock.
    pending: AtomicBool,
    count: AtomicU64,
}

impl LinkFailure {
    /// Counts a failure that the call which met it returns.
    fn count_returned(&self) {
        self.count.fetch_add(1, Ordering::Relaxed);
    }

    /// Keeps a failure (already counted) that nobody could be told of, for the
    /// user's next call.
    pub(crate) fn keep(&self, what: &str, error: RtiError) {
        tracing::warn!(%error, "{what} failed; the federate's next call reports it");
        *self.last.lock() = Some(error);
        self.pending.store(true, Ordering::Release);
    }

    /// Records that the RTI thread ended because an ambassador callback panicked.
    pub(crate) fn record_panic(&self) {
        self.count.fetch_add(1, Ordering::Relaxed);
        self.keep("callback delivery", RtiError::CallbackPanicked);
    }

    /// The failure not yet reported to the user, as an [`RtiError`]; clears it.
    pub(crate) fn take(&self) -> Option<RtiError> {
        // A plain load first: the common answer costs no locked instruction.
        if !self.pending.load(Ordering::Acquire) || !self.pending.swap(false, Ordering::AcqRel) {
            return None;
        }
        self.last.lock().take()
    }

    /// How many transport operations failed since the federate joined.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

/// Turns a transport error into the RTI error users see.
pub(crate) fn transport_error(error: TransportError) -> RtiError {
    RtiError::Link(error)
}

/// One federate's way out to its endpoint: the lock that keeps its senders in order,
/// holding the buffer outputs are carried out of (reused, so sending allocates
/// nothing in the steady state), and the failures met.
#[derive(Default)]
pub(crate) struct Outbound {
    queue: Mutex<Vec<Output>>,
    pub(crate) failure: LinkFailure,
}

impl Outbound {
    /// Carries out what `rti` queued and lets go of its lock: the outputs are taken
    /// and this federate's send lock is held before the core's lock is released, so
    /// they go out after every output taken earlier and before every later one. The
    /// first failure is returned; every output is tried.
    #[inline]
    pub(crate) fn send(
        &self,
        endpoint: &dyn Endpoint,
        rti: impl DerefMut<Target = LocalRti>,
    ) -> Result<(), RtiError> {
        // Most calls of a spinning evoker have nothing to send: that answer inline.
        if !rti.has_outputs() {
            return Ok(());
        }
        self.send_queued(endpoint, rti)
    }

    fn send_queued(
        &self,
        endpoint: &dyn Endpoint,
        mut rti: impl DerefMut<Target = LocalRti>,
    ) -> Result<(), RtiError> {
        let mut queue = self.queue.lock();
        rti.take_outputs(&mut queue);
        drop(rti);
        self.carry_out(endpoint, &mut queue)
    }

    /// As [`Outbound::send`], for a thread no caller waits on: a failure is kept for
    /// the user's next call.
    #[inline]
    pub(crate) fn send_or_record(
        &self,
        endpoint: &dyn Endpoint,
        rti: impl DerefMut<Target = LocalRti>,
    ) {
        if let Err(e) = self.send(endpoint, rti) {
            self.failure.keep("sending the RTI's messages", e);
        }
    }

    /// Carries out `outputs` in order, emptying it.
    fn carry_out(
        &self,
        endpoint: &dyn Endpoint,
        outputs: &mut Vec<Output>,
    ) -> Result<(), RtiError> {
        let mut first = None;
        for output in outputs.drain(..) {
            let done = match output {
                Output::Publish {
                    federation,
                    topic,
                    envelope,
                } => endpoint.publish(federation, topic, envelope),
                Output::Subscribe { federation, topic } => endpoint.subscribe(federation, topic),
                Output::Unsubscribe { federation, topic } => {
                    endpoint.unsubscribe(federation, topic)
                }
                Output::Interest {
                    federation,
                    topic,
                    regions,
                } => endpoint.set_interest(federation, topic, regions),
            };
            if let Err(e) = done {
                self.failure.count_returned();
                first.get_or_insert(transport_error(e));
            }
        }
        first.map_or(Ok(()), Err)
    }
}

/// The core's way to the executive over an endpoint, made afresh for each call.
pub(crate) struct EndpointLink<'a> {
    pub(crate) endpoint: &'a dyn Endpoint,
    pub(crate) outbound: &'a Outbound,
}

impl Link for EndpointLink<'_> {
    fn request(
        &mut self,
        queued: &mut Vec<Output>,
        request: ExecRequest,
    ) -> Result<ExecReply, RtiError> {
        if !queued.is_empty() {
            // After whatever another thread took from the core before this call.
            let _in_order = self.outbound.queue.lock();
            self.outbound.carry_out(self.endpoint, queued)?;
        }
        self.endpoint.request(request).map_err(transport_error)
    }
}

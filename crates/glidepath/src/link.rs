//! The bridge from the core's [`Link`] to a transport [`Endpoint`].
//!
//! `Link::publish` and `Link::subscribe` cannot fail in the core's eyes (it has no
//! I/O), so a transport error there is recorded in a [`LinkFailure`] and surfaced by
//! the federate's next user call instead of being lost.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use glidepath_core::{Envelope, ExecReply, ExecRequest, FederationId, Link, RtiError, Topic};
use glidepath_transport::{Endpoint, TransportError};
use parking_lot::Mutex;

/// Transport failures seen where the core could not be told.
#[derive(Default)]
pub(crate) struct LinkFailure {
    last: Mutex<Option<RtiError>>,
    /// Whether `last` holds something: every user call looks, twice, so the common
    /// answer (nothing) must not take a lock.
    pending: AtomicBool,
    count: AtomicU64,
}

impl LinkFailure {
    fn record(&self, what: &str, error: RtiError) {
        self.count.fetch_add(1, Ordering::Relaxed);
        tracing::warn!(%error, "transport {what} failed; the federate's next call reports it");
        *self.last.lock() = Some(error);
        self.pending.store(true, Ordering::Release);
    }

    /// Records that the RTI thread ended because an ambassador callback panicked.
    pub(crate) fn record_panic(&self) {
        self.record("callback delivery", RtiError::CallbackPanicked);
    }

    /// The failure not yet reported to the user, as an [`RtiError`]; clears it.
    pub(crate) fn take(&self) -> Option<RtiError> {
        // A plain load first: the common answer costs no locked instruction.
        if !self.pending.load(Ordering::Acquire) || !self.pending.swap(false, Ordering::AcqRel) {
            return None;
        }
        self.last.lock().take()
    }

    /// How many failures were recorded since the federate joined.
    pub(crate) fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

/// Turns a transport error into the RTI error users see.
pub(crate) fn transport_error(error: TransportError) -> RtiError {
    RtiError::Link(error)
}

/// A [`Link`] over an endpoint, made afresh for each call into the core.
pub(crate) struct EndpointLink<'a> {
    pub(crate) endpoint: &'a dyn Endpoint,
    pub(crate) failure: &'a LinkFailure,
}

impl Link for EndpointLink<'_> {
    fn publish(&mut self, federation: FederationId, topic: Topic, envelope: Envelope) {
        if let Err(e) = self.endpoint.publish(federation, topic, envelope) {
            self.failure.record("publish", e.into());
        }
    }

    fn subscribe(&mut self, federation: FederationId, topic: Topic) {
        if let Err(e) = self.endpoint.subscribe(federation, topic) {
            self.failure.record("subscribe", e.into());
        }
    }

    fn unsubscribe(&mut self, federation: FederationId, topic: Topic) {
        if let Err(e) = self.endpoint.unsubscribe(federation, topic) {
            self.failure.record("unsubscribe", e.into());
        }
    }

    fn request(&mut self, request: ExecRequest) -> Result<ExecReply, RtiError> {
        self.endpoint.request(request).map_err(transport_error)
    }
}

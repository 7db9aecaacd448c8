//! The `inproc` backend: an in-process bus where every federate of every federation
//! lives in one process.
//!
//! Publishing looks up the subscribers of `(federation, topic)` under a read lock and
//! pushes the envelope into each subscriber's unbounded channel: one sender's pushes
//! happen in call order, and each endpoint has a single inbox for all its topics, so
//! per-sender FIFO across topics holds by construction. Envelopes are cloned only
//! for the second and later receivers, and a clone copies handles and bumps
//! reference counts (payloads are `Bytes`); nothing is ever serialised.
//!
//! The executive runs under a mutex in the caller's thread; its notifications are
//! pushed while that mutex is held, so their `seq` order is their delivery order.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender};
use glidepath_core::hash::{FastMap, FastSet};
use glidepath_core::{
    Envelope, ExecReply, ExecRequest, ExecutiveHost, FederationId, RegionSet, SaveStore, Topic,
};
use parking_lot::{Mutex, RwLock};

use crate::{
    is_best_effort, monotonic_now_ns, Endpoint, EndpointStats, Transport, TransportError,
    BEST_EFFORT_BACKLOG_MAX,
};

type Route = (FederationId, Topic);

/// One subscriber of a route.
struct Subscriber {
    endpoint: u64,
    inbox: Sender<Envelope>,
    /// The regions this subscriber wants (data distribution management): a message
    /// sent with regions overlapping none of these is not handed to it.
    interest: Option<RegionSet>,
    /// Best-effort envelopes shed because this subscriber's inbox was full.
    best_effort_dropped: Arc<AtomicU64>,
}

impl Subscriber {
    fn hand(&self, envelope: Envelope) {
        if is_best_effort(&envelope) && self.inbox.len() >= BEST_EFFORT_BACKLOG_MAX {
            self.best_effort_dropped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        // A receiver that is gone has closed; what it misses is by its own choice.
        let _ = self.inbox.send(envelope);
    }
}

/// What every endpoint of one [`InprocTransport`] shares.
struct Bus {
    host: Mutex<ExecutiveHost>,
    routes: RwLock<FastMap<Route, Vec<Subscriber>>>,
    next_endpoint: AtomicU64,
}

impl Bus {
    /// Hands `envelope` to every subscriber of `route` except `from`.
    fn deliver(&self, from: Option<u64>, route: Route, mut envelope: Envelope) {
        if envelope.publish_time_ns == 0 {
            envelope.publish_time_ns = monotonic_now_ns();
        }
        let routes = self.routes.read();
        let Some(subscribers) = routes.get(&route) else {
            return;
        };
        // Filtered at the source: a subscriber none of whose regions overlaps the
        // message's never sees it (time management treats it as a topic it does not
        // subscribe).
        let regions = envelope.body.regions();
        let mut targets = subscribers.iter().filter(|s| {
            Some(s.endpoint) != from
                && match (regions, &s.interest) {
                    (Some(m), Some(i)) => m.overlaps(i),
                    _ => true,
                }
        });
        let Some(mut current) = targets.next() else {
            return;
        };
        for next in targets {
            current.hand(envelope.clone());
            current = next;
        }
        current.hand(envelope);
    }

    fn forget_federation(&self, federation: FederationId) {
        self.routes.write().retain(|(f, _), _| *f != federation);
    }
}

/// The in-process transport: a bus shared by every endpoint it opens, hosting its own
/// [`Executive`](glidepath_core::Executive).
///
/// Cloning gives another handle to the same bus, so federates opened from clones see
/// each other. Each [`InprocTransport::new`] is an independent bus.
#[derive(Clone)]
pub struct InprocTransport {
    bus: Arc<Bus>,
}

impl InprocTransport {
    /// A fresh bus with an empty executive, keeping federation saves in memory.
    pub fn new() -> Self {
        InprocTransport::with_save_store(Box::new(glidepath_core::MemorySaveStore::default()))
    }

    /// A fresh bus with an empty executive, keeping federation saves in `store`
    /// (for example a [`crate::DirSaveStore`], so they outlive the process).
    pub fn with_save_store(store: Box<dyn SaveStore>) -> Self {
        InprocTransport {
            bus: Arc::new(Bus {
                host: Mutex::new(ExecutiveHost::with_store(store)),
                routes: RwLock::new(FastMap::default()),
                next_endpoint: AtomicU64::new(1),
            }),
        }
    }

    /// Opens an endpoint with its concrete type (for callers that do not need `dyn`).
    pub fn open_endpoint(&self) -> InprocEndpoint {
        let (tx, rx) = crossbeam_channel::unbounded();
        InprocEndpoint {
            id: self.bus.next_endpoint.fetch_add(1, Ordering::Relaxed),
            bus: self.bus.clone(),
            inbox: rx,
            closed: AtomicBool::new(false),
            best_effort_dropped: Arc::new(AtomicU64::new(0)),
            state: Mutex::new(EndpointState {
                inbox_tx: Some(tx),
                routes: FastSet::default(),
                interests: FastMap::default(),
            }),
        }
    }
}

impl Default for InprocTransport {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for InprocTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InprocTransport").finish_non_exhaustive()
    }
}

impl Transport for InprocTransport {
    fn open(&self) -> Result<Box<dyn Endpoint>, TransportError> {
        Ok(Box::new(self.open_endpoint()))
    }

    fn name(&self) -> &'static str {
        "inproc"
    }
}

struct EndpointState {
    /// The sending half of our inbox, cloned into each route we subscribe; dropped on
    /// close so the inbox disconnects once drained.
    inbox_tx: Option<Sender<Envelope>>,
    routes: FastSet<Route>,
    /// The interest told for each route that has one.
    interests: FastMap<Route, RegionSet>,
}

/// An endpoint of the in-process bus.
pub struct InprocEndpoint {
    id: u64,
    bus: Arc<Bus>,
    inbox: Receiver<Envelope>,
    closed: AtomicBool,
    state: Mutex<EndpointState>,
    best_effort_dropped: Arc<AtomicU64>,
}

impl InprocEndpoint {
    fn check_open(&self) -> Result<(), TransportError> {
        if self.closed.load(Ordering::Acquire) {
            Err(TransportError::Closed)
        } else {
            Ok(())
        }
    }
}

impl Endpoint for InprocEndpoint {
    fn stats(&self) -> EndpointStats {
        EndpointStats {
            best_effort_dropped: self.best_effort_dropped.load(Ordering::Relaxed),
            ..EndpointStats::default()
        }
    }

    fn publish(
        &self,
        federation: FederationId,
        topic: Topic,
        envelope: Envelope,
    ) -> Result<(), TransportError> {
        self.check_open()?;
        self.bus
            .deliver(Some(self.id), (federation, topic), envelope);
        Ok(())
    }

    fn subscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        let mut state = self.state.lock();
        let Some(tx) = state.inbox_tx.clone() else {
            return Err(TransportError::Closed);
        };
        if state.routes.insert((federation, topic)) {
            self.bus
                .routes
                .write()
                .entry((federation, topic))
                .or_default()
                .push(Subscriber {
                    endpoint: self.id,
                    inbox: tx,
                    interest: state.interests.get(&(federation, topic)).cloned(),
                    best_effort_dropped: self.best_effort_dropped.clone(),
                });
        }
        Ok(())
    }

    fn unsubscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        let mut state = self.state.lock();
        if state.inbox_tx.is_none() {
            return Err(TransportError::Closed);
        }
        if state.routes.remove(&(federation, topic)) {
            remove_subscriber(&mut self.bus.routes.write(), (federation, topic), self.id);
        }
        Ok(())
    }

    fn set_interest(
        &self,
        federation: FederationId,
        topic: Topic,
        regions: Option<RegionSet>,
    ) -> Result<(), TransportError> {
        let mut state = self.state.lock();
        if state.inbox_tx.is_none() {
            return Err(TransportError::Closed);
        }
        let route = (federation, topic);
        match &regions {
            Some(r) => state.interests.insert(route, r.clone()),
            None => state.interests.remove(&route),
        };
        if state.routes.contains(&route) {
            if let Some(list) = self.bus.routes.write().get_mut(&route) {
                for s in list.iter_mut().filter(|s| s.endpoint == self.id) {
                    s.interest = regions.clone();
                }
            }
        }
        Ok(())
    }

    fn request(&self, request: ExecRequest) -> Result<ExecReply, TransportError> {
        self.check_open()?;
        // The host's lock is held while its notifications are delivered, so their
        // `seq` order is their delivery order.
        let mut host = self.bus.host.lock();
        let hosted = host.handle(request, 0);
        if let Some(federation) = hosted.federation {
            if hosted.destroyed {
                self.bus.forget_federation(federation);
            }
            for envelope in hosted.notifications {
                self.bus
                    .deliver(None, (federation, Topic::Federation), envelope);
            }
        }
        Ok(hosted.reply)
    }

    fn inbox(&self) -> &Receiver<Envelope> {
        &self.inbox
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let mut state = self.state.lock();
        if state.inbox_tx.take().is_none() {
            return;
        }
        let mut routes = self.bus.routes.write();
        for route in state.routes.drain() {
            remove_subscriber(&mut routes, route, self.id);
        }
    }
}

impl Drop for InprocEndpoint {
    fn drop(&mut self) {
        self.close();
    }
}

fn remove_subscriber(routes: &mut FastMap<Route, Vec<Subscriber>>, route: Route, endpoint: u64) {
    if let Some(list) = routes.get_mut(&route) {
        list.retain(|s| s.endpoint != endpoint);
        if list.is_empty() {
            routes.remove(&route);
        }
    }
}

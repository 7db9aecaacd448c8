//! One endpoint of a shared-memory system: its slot, its inbound ring and the reader
//! thread that turns the ring's records into its inbox.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use crossbeam_channel::{Receiver, Sender};
use glidepath_core::hash::{FastMap, FastSet};
use glidepath_core::{Envelope, ExecReply, ExecRequest, FederationId, Topic};
use parking_lot::{Mutex, RwLock};

use super::registry::{self, SlotId};
use super::ring::{Pushed, Ring, KIND_ENVELOPE, KIND_REPLY, KIND_REQUEST};
use super::{parse_route, route_bytes, Route, System};
use crate::{
    is_best_effort, monotonic_now_ns, Endpoint, EndpointStats, TransportError,
    BEST_EFFORT_BACKLOG_MAX,
};

/// What the endpoint and its reader thread share.
struct Shared {
    /// The routes this endpoint subscribes, exactly (the registry holds hashes).
    routes: RwLock<FastSet<Route>>,
    stop: AtomicBool,
    best_effort_dropped: AtomicU64,
    malformed: AtomicU64,
}

/// A sender's targets per route, valid for one registry generation.
struct SenderState {
    generation: u64,
    targets: FastMap<Route, Vec<(SlotId, Arc<Ring>)>>,
    buffer: BytesMut,
}

/// An endpoint of a shared-memory system.
pub struct ShmEndpoint {
    system: Arc<System>,
    slot: SlotId,
    ring: Arc<Ring>,
    inbox: Receiver<Envelope>,
    replies: Receiver<(u64, Result<Vec<u8>, String>)>,
    shared: Arc<Shared>,
    sender: Mutex<SenderState>,
    /// Serialises requests; the next request id.
    requests: Mutex<u64>,
    /// Subscription changes, one at a time.
    subscriptions: Mutex<()>,
    closed: AtomicBool,
    reader: Mutex<Option<JoinHandle<()>>>,
    /// Shared with the reader thread; dropped on close so the inbox disconnects.
    consumer: Mutex<Option<Arc<Consumer>>>,
    receivers_given_up: AtomicU64,
}

impl ShmEndpoint {
    pub(super) fn open(system: Arc<System>) -> Result<ShmEndpoint, TransportError> {
        let slot = system
            .registry
            .claim(|id| system.is_dead(id))
            .ok_or_else(|| {
                TransportError::Backend(format!(
                    "shm system `{}`: all {} endpoint slots are taken by live processes",
                    system.name,
                    registry::MAX_SLOTS
                ))
            })?;
        let path = system.ring_path(slot);
        let _ = std::fs::remove_file(&path);
        let ring = match Ring::create(&path, system.options.ring_bytes) {
            Ok(r) => Arc::new(r),
            Err(e) => {
                system.registry.release(slot);
                return Err(super::io_error("cannot create", &path, e));
            }
        };
        let (inbox_tx, inbox) = crossbeam_channel::unbounded();
        let (replies_tx, replies) = crossbeam_channel::unbounded();
        let shared = Arc::new(Shared {
            routes: RwLock::new(FastSet::default()),
            stop: AtomicBool::new(false),
            best_effort_dropped: AtomicU64::new(0),
            malformed: AtomicU64::new(0),
        });
        let consumer = Arc::new(Consumer {
            ring: ring.clone(),
            shared: shared.clone(),
            inbox: inbox_tx,
            replies: replies_tx,
            lock: Mutex::new(()),
            pumps: AtomicU64::new(0),
        });
        let reader = {
            let (consumer, spin) = (consumer.clone(), system.options.spin);
            std::thread::Builder::new()
                .name(format!("shm-reader-{}", slot.index))
                .spawn(move || consumer.read(spin))
                .map_err(|e| TransportError::Io {
                    what: "the shared-memory reader thread",
                    reason: e.to_string(),
                })?
        };
        let generation = system.registry.generation();
        Ok(ShmEndpoint {
            system,
            slot,
            ring,
            inbox,
            replies,
            shared,
            sender: Mutex::new(SenderState {
                generation,
                targets: FastMap::default(),
                buffer: BytesMut::with_capacity(1024),
            }),
            requests: Mutex::new(0),
            subscriptions: Mutex::new(()),
            closed: AtomicBool::new(false),
            reader: Mutex::new(Some(reader)),
            consumer: Mutex::new(Some(consumer)),
            receivers_given_up: AtomicU64::new(0),
        })
    }

    fn check_open(&self) -> Result<(), TransportError> {
        if self.closed.load(Ordering::Acquire) {
            Err(TransportError::Closed)
        } else {
            Ok(())
        }
    }

    fn too_large(&self, what: &str, len: usize) -> TransportError {
        TransportError::InvalidConfiguration(format!(
            "a {what} of {len} bytes exceeds the shared-memory ring's largest record ({} bytes): raise the ring size (--shm-ring-bytes)",
            self.ring.max_record()
        ))
    }
}

impl Endpoint for ShmEndpoint {
    fn publish(
        &self,
        federation: FederationId,
        topic: Topic,
        mut envelope: Envelope,
    ) -> Result<(), TransportError> {
        self.check_open()?;
        if envelope.publish_time_ns == 0 {
            envelope.publish_time_ns = monotonic_now_ns();
        }
        let route = (federation, topic);
        let mut sender = self.sender.lock();
        let generation = self.system.registry.generation();
        if generation != sender.generation {
            sender.targets.clear();
            sender.generation = generation;
            self.system.prune();
        }
        let SenderState {
            targets, buffer, ..
        } = &mut *sender;
        let targets = targets
            .entry(route)
            .or_insert_with(|| self.system.targets(route, Some(self.slot.index)).0);
        if targets.is_empty() {
            return Ok(());
        }
        buffer.clear();
        buffer.extend_from_slice(&route_bytes(route));
        glidepath_wire::encode_envelope_into(&envelope, buffer);
        if buffer.len() > self.ring.max_record() {
            return Err(self.too_large("message", buffer.len()));
        }
        let best_effort = is_best_effort(&envelope);
        let mut gone = Vec::new();
        for (id, ring) in targets.iter() {
            if ring.push(KIND_ENVELOPE, &[buffer], best_effort) == Pushed::Gone && !ring.is_closed()
            {
                gone.push(*id);
            }
        }
        if !gone.is_empty() {
            for id in gone {
                self.receivers_given_up.fetch_add(1, Ordering::Relaxed);
                self.system.reap(id);
            }
            sender.targets.clear();
        }
        Ok(())
    }

    fn subscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        let _one = self.subscriptions.lock();
        self.check_open()?;
        let route = (federation, topic);
        if !self.shared.routes.write().insert(route) {
            return Ok(());
        }
        let hash = registry::route_hash(&route_bytes(route));
        if self.system.registry.add_route(self.slot, hash).is_err() {
            self.shared.routes.write().remove(&route);
            return Err(TransportError::InvalidConfiguration(format!(
                "an shm endpoint subscribes at most {} topics at once",
                registry::MAX_ROUTES
            )));
        }
        Ok(())
    }

    fn unsubscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        let _one = self.subscriptions.lock();
        self.check_open()?;
        let route = (federation, topic);
        let mut routes = self.shared.routes.write();
        if routes.remove(&route) {
            let hash = registry::route_hash(&route_bytes(route));
            // Two routes of ours may share a hash: keep it while another needs it.
            if !routes
                .iter()
                .any(|r| registry::route_hash(&route_bytes(*r)) == hash)
            {
                self.system.registry.remove_route(self.slot, hash);
            }
        }
        Ok(())
    }

    fn request(&self, request: ExecRequest) -> Result<ExecReply, TransportError> {
        self.check_open()?;
        let mut next_id = self.requests.lock();
        *next_id += 1;
        let id = *next_id;
        let json = glidepath_wire::encode_request(&request);
        let mut head = [0u8; 20];
        head[..4].copy_from_slice(&self.slot.index.to_le_bytes());
        head[4..12].copy_from_slice(&self.slot.epoch.to_le_bytes());
        head[12..].copy_from_slice(&id.to_le_bytes());
        if head.len() + json.len() > self.system.exec.max_record() {
            return Err(self.too_large("request", json.len()));
        }
        if self.system.exec.push(KIND_REQUEST, &[&head, &json], false) == Pushed::Gone {
            return Err(self.system.no_executive());
        }
        let deadline = Instant::now() + self.system.options.request_timeout;
        loop {
            let wait = deadline
                .saturating_duration_since(Instant::now())
                .min(Duration::from_millis(250));
            match self.replies.recv_timeout(wait) {
                Ok((reply_id, reply)) if reply_id == id => {
                    let bytes =
                        reply.map_err(|message| TransportError::ExecutiveFailed { message })?;
                    return glidepath_wire::decode_reply(&bytes).map_err(|e| {
                        TransportError::UnexpectedReply {
                            what: "undecodable",
                            reason: e.to_string(),
                        }
                    });
                }
                // The answer to an earlier request that timed out.
                Ok(_) => continue,
                Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                    return Err(TransportError::Closed)
                }
                Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                    if !self.system.exec.consumer_alive() {
                        return Err(self.system.no_executive());
                    }
                    if Instant::now() >= deadline {
                        return Err(TransportError::Timeout(self.system.options.request_timeout));
                    }
                }
            }
        }
    }

    fn inbox(&self) -> &Receiver<Envelope> {
        &self.inbox
    }

    fn close(&self) {
        if self.closed.swap(true, Ordering::AcqRel) {
            return;
        }
        let _one = self.subscriptions.lock();
        self.system.registry.release(self.slot);
        self.shared.routes.write().clear();
        self.shared.stop.store(true, Ordering::Release);
        self.ring.close();
        if let Some(reader) = self.reader.lock().take() {
            let _ = reader.join();
        }
        self.consumer.lock().take();
        let _ = std::fs::remove_file(self.system.ring_path(self.slot));
    }

    fn pump(&self) {
        if let Some(consumer) = self.consumer.lock().as_ref() {
            consumer.pump();
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            best_effort_dropped: self.shared.best_effort_dropped.load(Ordering::Relaxed)
                + self.ring.shed(),
            malformed_envelopes: self.shared.malformed.load(Ordering::Relaxed),
            receivers_given_up: self.receivers_given_up.load(Ordering::Relaxed),
            gone_notices: 0,
            ..EndpointStats::default()
        }
    }
}

impl Drop for ShmEndpoint {
    fn drop(&mut self) {
        self.close();
    }
}

/// Takes records off the endpoint's ring: the reader thread, or a caller's thread
/// that spins ([`Endpoint::pump`]). One at a time (the `lock`), so records reach the
/// inbox in ring order whoever takes them.
struct Consumer {
    ring: Arc<Ring>,
    shared: Arc<Shared>,
    inbox: Sender<Envelope>,
    replies: Sender<(u64, Result<Vec<u8>, String>)>,
    lock: Mutex<()>,
    /// Pump calls so far: while they keep coming, the reader thread leaves the ring
    /// to the spinning caller.
    pumps: AtomicU64,
}

/// What one pass over the ring did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Took {
    Nothing,
    Some,
    /// A reliable envelope waits for room in the inbox.
    Held,
}

/// Records taken in one pass at most, so a flood cannot keep a pump call forever.
const PASS_RECORDS: usize = 1024;

impl Consumer {
    /// One pass: records from the ring into the inbox (envelopes) or to the waiting
    /// request (replies). The caller holds `lock`.
    fn pass(&self) -> Took {
        let ring = &self.ring;
        let mut took = Took::Nothing;
        for _ in 0..PASS_RECORDS {
            let Some(record) = ring.front() else { break };
            match record.kind {
                KIND_ENVELOPE => {
                    if !deliver(record.bytes, &self.shared, &self.inbox) {
                        took = Took::Held;
                        break;
                    }
                }
                KIND_REPLY if record.bytes.len() >= 9 => {
                    let id = u64::from_le_bytes(record.bytes[..8].try_into().unwrap());
                    let body = record.bytes[9..].to_vec();
                    let reply = if record.bytes[8] == 0 {
                        Ok(body)
                    } else {
                        Err(String::from_utf8_lossy(&body).into_owned())
                    };
                    let _ = self.replies.send((id, reply));
                }
                _ => {
                    self.shared.malformed.fetch_add(1, Ordering::Relaxed);
                }
            }
            ring.consume(record);
            took = Took::Some;
        }
        if took != Took::Nothing {
            ring.release_room();
        }
        took
    }

    /// The reader thread, until the endpoint closes.
    fn read(&self, spin: Duration) {
        let mut pumps_seen = self.pumps.load(Ordering::Relaxed);
        while !self.shared.stop.load(Ordering::Acquire) {
            let took = self.pass_locked();
            match took {
                Took::Some => continue,
                // Hold it (and, as the ring fills, its senders) until the federate
                // takes some of the inbox.
                Took::Held => {
                    std::thread::sleep(Duration::from_micros(200));
                    continue;
                }
                Took::Nothing => {}
            }
            let pumps = self.pumps.load(Ordering::Relaxed);
            if pumps != pumps_seen {
                // A caller spins on the ring: stay out of its way (and off the CPU)
                // without asking senders to wake us; look again shortly, and take
                // over once it stopped.
                pumps_seen = pumps;
                std::thread::sleep(Duration::from_micros(100));
                continue;
            }
            self.ring.wait(spin, Duration::from_millis(100));
        }
    }

    fn pass_locked(&self) -> Took {
        let _one = self.lock.lock();
        self.pass()
    }

    /// A spinning caller's pass, unless another consumer is at it.
    fn pump(&self) {
        self.pumps.fetch_add(1, Ordering::Relaxed);
        if let Some(_one) = self.lock.try_lock() {
            self.pass();
        }
    }
}
/// Decodes one envelope record into the inbox; false when it must wait (reliable, and
/// the inbox is full).
fn deliver(bytes: &[u8], shared: &Shared, inbox: &Sender<Envelope>) -> bool {
    let Some((route, body)) = bytes
        .split_first_chunk::<13>()
        .and_then(|(r, body)| parse_route(r).map(|r| (r, body)))
    else {
        shared.malformed.fetch_add(1, Ordering::Relaxed);
        return true;
    };
    if !shared.routes.read().contains(&route) {
        return true;
    }
    let envelope = match glidepath_wire::decode_envelope_bytes(Bytes::copy_from_slice(body)) {
        Ok(e) => e,
        Err(_) => {
            shared.malformed.fetch_add(1, Ordering::Relaxed);
            return true;
        }
    };
    if inbox.len() >= BEST_EFFORT_BACKLOG_MAX {
        if is_best_effort(&envelope) {
            shared.best_effort_dropped.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        return false;
    }
    let _ = inbox.send(envelope);
    true
}

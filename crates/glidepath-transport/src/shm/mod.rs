//! The `shm` backend: federates in separate processes on one host exchange envelopes
//! through shared memory (Linux).
//!
//! # The parts
//!
//! A *system* is a name (`--shm-name`, default `glidepath`) and a set of files in a
//! directory (`/dev/shm`, a memory file system):
//!
//! - `glidepath-NAME.lock`: locked by the process hosting the executive, for its life.
//! - `glidepath-NAME.registry` ([`registry`]): the live endpoint slots and the routes
//!   (federation, topic) each subscribes.
//! - `glidepath-NAME.exec`: the executive's request ring.
//! - `glidepath-NAME.ep<SLOT>.<EPOCH>`: one inbound ring per endpoint ([`ring`]).
//!
//! Each endpoint has one inbound ring that every sender writes into, under the ring's
//! process-shared robust mutex, and one reader thread that decodes records into the
//! endpoint's inbox. A publisher encodes an envelope once (the wire format of
//! `docs/wire-format.md`) and copies it into the ring of each live endpoint whose
//! routes include the envelope's; it finds them in the registry and caches them per
//! route until the registry's generation changes.
//!
//! # Who hosts the executive
//!
//! One process per system, chosen explicitly: [`ShmTransport::host`] (the CLI's
//! `glidepath server --transport shm`, or any program that wants to be the host)
//! creates the system, and runs the executive on a thread that reads the request ring;
//! [`ShmTransport::connect`] joins a hosted system. The host is a process of its own
//! for the same reason as over NATS: the federation outlives every member.
//!
//! # How the contract is met
//!
//! - **Per-sender FIFO** (point 1): one ring per receiver, written in the order
//!   senders take its mutex; a sender writes its envelopes one after another.
//! - **No self-delivery** (point 2): a sender skips its own slot.
//! - **Subscribe effective on return** (point 3): the registry change and its
//!   generation bump are done before `subscribe` returns, and every publish reads the
//!   generation first. The reader filters by the endpoint's exact routes too, so
//!   nothing published after `unsubscribe` returns is delivered.
//! - **Requests** (point 4) go into the executive's ring; the host applies each, writes
//!   its notifications into the subscribers' rings, and only then the reply into the
//!   requester's. A notification is therefore in every subscriber's ring before the
//!   reply exists, ahead of anything published after it. A refusal is an `Ok` reply.
//! - **Publication time** (point 5): stamped with [`crate::monotonic_now_ns`], which
//!   processes of one host share.
//! - **Close drains** (point 6): `publish` returns once the envelope is in every
//!   receiver's ring, so a closing sender has nothing to wait for. A closing receiver
//!   frees its slot, marks its ring closed (senders waiting for room give up) and
//!   stops its reader; its inbox yields what had been read and disconnects.
//! - **Best effort shed, reliable held** (point 7): the reader stops taking reliable
//!   records while the inbox holds [`crate::BEST_EFFORT_BACKLOG_MAX`] envelopes, so the
//!   ring fills and holds its senders back (bounded memory: the ring plus the inbox);
//!   best-effort ones are dropped instead, by the reader or, when the ring is full, by
//!   the sender, and counted either way in the receiver's
//!   [`EndpointStats::best_effort_dropped`].
//!
//! # Memory
//!
//! A ring takes its memory when it is created (`posix_fallocate`): a memory file
//! system without room for it refuses the endpoint with an error, where a sparse file
//! would let the process die of SIGBUS at its first write past the room.
//!
//! # Crashes
//!
//! A process that dies holding a ring's or the registry's mutex leaves it to the next
//! locker (robust mutexes) with nothing half-published. A dead receiver's ring fills;
//! a sender waiting on it finds its process gone (the ring file's lock died with it),
//! frees its slot and stops sending to it ([`EndpointStats::receivers_given_up`]).
//! Slots of dead processes are reclaimed when none is free. When the host dies, its
//! lock dies too, and the next [`ShmTransport::host`] of the name removes every file
//! of the old system before creating a new one; requests meanwhile fail with
//! [`TransportError::NoShmHost`].

mod endpoint;
mod host;
pub mod raw;
mod registry;
mod ring;
mod sys;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use glidepath_core::hash::FastMap;
use glidepath_core::{FederationId, SaveStore, Topic};
use parking_lot::Mutex;

pub use endpoint::ShmEndpoint;

use crate::{Endpoint, Transport, TransportError};
use registry::{Registry, SlotId};
use ring::Ring;

/// The default system name.
pub const DEFAULT_SHM_NAME: &str = "glidepath";
/// The default directory of the system's files.
pub const DEFAULT_SHM_DIR: &str = "/dev/shm";

/// Settings of a shared-memory system.
#[derive(Clone, Debug)]
pub struct ShmOptions {
    /// The directory of the system's files (a memory file system: `/dev/shm`).
    pub dir: PathBuf,
    /// Bytes of records in each endpoint's inbound ring (a power of two, at least 64 KiB).
    /// The largest envelope is a quarter of it.
    pub ring_bytes: usize,
    /// How long a reader thread spins before it sleeps when its ring is empty. None
    /// by default: on a 2-core machine a reader spinning 50 µs took the core its own
    /// federate needed, and cost more than the wake-up it saved (parked one-way
    /// latency 41–43 µs against 22–28 µs without, eight federates' time advance 4×
    /// slower, throughput 1.9 against 2.5 M/s; `docs/benchmarks.md`). A federate that
    /// spins takes records off its ring itself ([`Endpoint::pump`]) either way.
    pub spin: Duration,
    /// How long a request waits for the executive.
    pub request_timeout: Duration,
}

impl Default for ShmOptions {
    fn default() -> Self {
        ShmOptions {
            dir: PathBuf::from(DEFAULT_SHM_DIR),
            ring_bytes: 8 << 20,
            spin: Duration::ZERO,
            request_timeout: Duration::from_secs(30),
        }
    }
}

type Route = (FederationId, Topic);

/// The 13 bytes that name a route in a record and in the registry.
fn route_bytes((federation, topic): Route) -> [u8; 13] {
    let (tag, handle) = match topic {
        Topic::ObjectClass(c) => (1u8, c.0),
        Topic::InteractionClass(c) => (2, c.0),
        Topic::Time => (3, 0),
        Topic::Federation => (4, 0),
        Topic::Federate(f) => (5, f.0),
    };
    let mut out = [0u8; 13];
    out[..8].copy_from_slice(&federation.0.to_le_bytes());
    out[8] = tag;
    out[9..].copy_from_slice(&handle.to_le_bytes());
    out
}

fn parse_route(bytes: &[u8; 13]) -> Option<Route> {
    let federation = FederationId(u64::from_le_bytes(bytes[..8].try_into().ok()?));
    let handle = u32::from_le_bytes(bytes[9..].try_into().ok()?);
    let topic = match bytes[8] {
        1 => Topic::ObjectClass(glidepath_core::ObjectClassHandle(handle)),
        2 => Topic::InteractionClass(glidepath_core::InteractionClassHandle(handle)),
        3 => Topic::Time,
        4 => Topic::Federation,
        5 => Topic::Federate(glidepath_core::FederateHandle(handle)),
        _ => return None,
    };
    Some((federation, topic))
}

/// What every endpoint of one system in this process shares.
pub(crate) struct System {
    name: String,
    dir: PathBuf,
    options: ShmOptions,
    registry: Registry,
    exec: Ring,
    /// Rings of other endpoints mapped by this process, by slot and epoch.
    rings: Mutex<FastMap<SlotId, Arc<Ring>>>,
}

impl System {
    fn new(name: &str, options: ShmOptions, registry: Registry, exec: Ring) -> System {
        System {
            name: name.to_string(),
            dir: options.dir.clone(),
            options,
            registry,
            exec,
            rings: Mutex::new(FastMap::default()),
        }
    }

    fn path(dir: &Path, name: &str, suffix: &str) -> PathBuf {
        dir.join(format!("glidepath-{name}.{suffix}"))
    }

    fn ring_path(&self, id: SlotId) -> PathBuf {
        System::path(
            &self.dir,
            &self.name,
            &format!("ep{}.{}", id.index, id.epoch),
        )
    }

    fn no_executive(&self) -> TransportError {
        no_executive(&self.dir, &self.name)
    }

    /// The ring of a slot, mapped once per process.
    fn ring(&self, id: SlotId) -> Option<Arc<Ring>> {
        let mut rings = self.rings.lock();
        if let Some(r) = rings.get(&id) {
            return Some(r.clone());
        }
        let ring = Arc::new(Ring::open(&self.ring_path(id)).ok()?);
        rings.insert(id, ring.clone());
        Some(ring)
    }

    /// The rings of the live endpoints subscribing `route`, except `except`.
    fn targets(&self, route: Route, except: Option<u32>) -> (Vec<(SlotId, Arc<Ring>)>, u64) {
        let hash = registry::route_hash(&route_bytes(route));
        let (ids, generation) = self.registry.targets(hash, except);
        let rings = ids
            .into_iter()
            .filter_map(|id| self.ring(id).map(|r| (id, r)))
            .collect();
        (rings, generation)
    }

    /// Forgets mappings of slots that are no longer live.
    fn prune(&self) {
        let live = self.registry.live();
        self.rings.lock().retain(|id, _| live.contains(id));
    }

    /// A receiver stayed full and its process is gone: free its slot and file.
    fn reap(&self, id: SlotId) {
        if self.registry.release(id) {
            let _ = std::fs::remove_file(self.ring_path(id));
            tracing_warn(&format!(
                "shm system `{}`: endpoint slot {} belonged to a process that died; freed",
                self.name, id.index
            ));
        }
        self.rings.lock().remove(&id);
    }

    /// True when a slot's ring has no living owner.
    fn is_dead(&self, id: SlotId) -> bool {
        match Ring::open(&self.ring_path(id)) {
            Ok(ring) => !ring.consumer_alive(),
            Err(_) => true,
        }
    }
}

fn tracing_warn(message: &str) {
    eprintln!("glidepath: {message}");
}

fn no_executive(dir: &Path, name: &str) -> TransportError {
    TransportError::NoShmHost {
        name: name.to_string(),
        dir: dir.display().to_string(),
    }
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> TransportError {
    TransportError::Backend(format!("shm: {what} {}: {e}", path.display()))
}

/// Checks a system name: 1 to 64 of `A-Z a-z 0-9 _ -`, so it makes one file name.
pub fn check_name(name: &str) -> Result<(), TransportError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(TransportError::InvalidConfiguration(format!(
            "shm system name `{name}`: use 1 to 64 letters, digits, `_` or `-`"
        )))
    }
}

/// Checks a ring size: a power of two of at least 64 KiB.
pub fn check_ring_bytes(bytes: usize) -> Result<(), TransportError> {
    if !bytes.is_power_of_two() || bytes < 64 << 10 {
        return Err(TransportError::InvalidConfiguration(format!(
            "shm ring size {bytes} bytes: use a power of two of at least 65536"
        )));
    }
    Ok(())
}

fn check_options(options: &ShmOptions) -> Result<(), TransportError> {
    check_ring_bytes(options.ring_bytes)
}

/// The shared-memory transport: endpoints in this process of one system (see the
/// [module documentation](self)). Cloning gives another handle to the same system.
#[derive(Clone)]
pub struct ShmTransport {
    system: Arc<System>,
    /// The executive, when this process hosts it; it stops when the last clone drops.
    _host: Option<Arc<host::Host>>,
}

impl std::fmt::Debug for ShmTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShmTransport")
            .field("name", &self.system.name)
            .field("dir", &self.system.dir)
            .field("hosting", &self._host.is_some())
            .finish()
    }
}

impl ShmTransport {
    /// Creates the system `name` and hosts its executive in this process (saves kept in
    /// memory). Files left by a host that died are removed first. Fails with
    /// [`TransportError::ExecutiveAlreadyHosted`] while another process hosts it.
    pub fn host(name: &str, options: ShmOptions) -> Result<ShmTransport, TransportError> {
        ShmTransport::host_with_store(
            name,
            options,
            Box::new(glidepath_core::MemorySaveStore::default()),
        )
    }

    /// As [`ShmTransport::host`], keeping federation saves in `store`.
    pub fn host_with_store(
        name: &str,
        options: ShmOptions,
        store: Box<dyn SaveStore>,
    ) -> Result<ShmTransport, TransportError> {
        check_name(name)?;
        check_options(&options)?;
        let dir = options.dir.clone();
        let lock_path = System::path(&dir, name, "lock");
        let lock: File = match sys::lock_exclusive(&lock_path) {
            Ok(Some(f)) => f,
            Ok(None) => {
                return Err(TransportError::ExecutiveAlreadyHosted {
                    url: format!("shm:{name} (in {})", dir.display()),
                    subject: lock_path.display().to_string(),
                })
            }
            Err(e) => return Err(io_error("cannot lock", &lock_path, e)),
        };
        remove_stale_files(&dir, name);
        sweep_dead_systems(&dir);
        let registry_path = System::path(&dir, name, "registry");
        let registry = Registry::create(&registry_path)
            .map_err(|e| io_error("cannot create", &registry_path, e))?;
        let exec_path = System::path(&dir, name, "exec");
        let exec = Ring::create(&exec_path, options.ring_bytes)
            .map_err(|e| io_error("cannot create", &exec_path, e))?;
        let system = Arc::new(System::new(name, options, registry, exec));
        let host = host::Host::start(system.clone(), store, lock)?;
        Ok(ShmTransport {
            system,
            _host: Some(Arc::new(host)),
        })
    }

    /// Joins the system `name`, hosted by another process (or this one).
    pub fn connect(name: &str, options: ShmOptions) -> Result<ShmTransport, TransportError> {
        check_name(name)?;
        check_options(&options)?;
        let dir = options.dir.clone();
        let registry = Registry::open(&System::path(&dir, name, "registry"))
            .map_err(|_| no_executive(&dir, name))?;
        let exec =
            Ring::open(&System::path(&dir, name, "exec")).map_err(|_| no_executive(&dir, name))?;
        if !exec.consumer_alive() {
            return Err(no_executive(&dir, name));
        }
        Ok(ShmTransport {
            system: Arc::new(System::new(name, options, registry, exec)),
            _host: None,
        })
    }

    /// The system's name.
    pub fn system_name(&self) -> &str {
        &self.system.name
    }

    /// Opens an endpoint with its concrete type.
    pub fn open_endpoint(&self) -> Result<ShmEndpoint, TransportError> {
        ShmEndpoint::open(self.system.clone())
    }
}

impl Transport for ShmTransport {
    fn open(&self) -> Result<Box<dyn Endpoint>, TransportError> {
        Ok(Box::new(self.open_endpoint()?))
    }

    fn name(&self) -> &'static str {
        "shm"
    }
}

/// Removes the files of every system in `dir` whose host died (its lock is free),
/// holding that lock meanwhile so no new host of the name starts half-way. A killed
/// program with a system of its own name (benchmarks and tests use their process id)
/// would otherwise leave its rings in memory for good. The empty lock files stay.
fn sweep_dead_systems(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(name) = file
            .to_str()
            .and_then(|f| f.strip_prefix("glidepath-"))
            .and_then(|f| f.strip_suffix(".lock"))
        else {
            continue;
        };
        if let Ok(Some(_held)) = sys::lock_exclusive(&entry.path()) {
            remove_stale_files(dir, name);
        }
    }
}

/// Removes every file of system `name` but its lock (which the caller holds).
fn remove_stale_files(dir: &Path, name: &str) {
    let prefix = format!("glidepath-{name}.");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(file) = file.to_str() else { continue };
        if let Some(rest) = file.strip_prefix(&prefix) {
            if rest != "lock" && (rest == "registry" || rest == "exec" || rest.starts_with("ep")) {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glidepath_core::{FederateHandle, InteractionClassHandle, ObjectClassHandle};

    #[test]
    fn routes_survive_their_bytes() {
        for topic in [
            Topic::ObjectClass(ObjectClassHandle(7)),
            Topic::InteractionClass(InteractionClassHandle(u32::MAX)),
            Topic::Time,
            Topic::Federation,
            Topic::Federate(FederateHandle(3)),
        ] {
            let route = (FederationId(u64::MAX - 1), topic);
            assert_eq!(parse_route(&route_bytes(route)), Some(route));
        }
        let mut bad = route_bytes((FederationId(1), Topic::Time));
        bad[8] = 9;
        assert_eq!(parse_route(&bad), None);
    }

    #[test]
    fn names_and_ring_sizes_are_checked() {
        assert!(check_name("sim_1-a").is_ok());
        for bad in ["", "a/b", "../x", "a b", &"x".repeat(65)] {
            let e = check_name(bad).unwrap_err().to_string();
            assert!(e.contains("shm system name"), "{e}");
        }
        let o = ShmOptions {
            ring_bytes: 100_000,
            ..ShmOptions::default()
        };
        assert!(check_options(&o)
            .unwrap_err()
            .to_string()
            .contains("power of two"));
    }
}

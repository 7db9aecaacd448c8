//! The registry segment: which endpoint slots are live and which routes each one
//! subscribes, shared by every process of one shared-memory system.
//!
//! Every change happens under the registry's robust mutex and bumps `generation`
//! (release) before the mutex is let go. A publisher keeps its own cache of targets per
//! route and checks `generation` (acquire) on every publish: a subscription made
//! before a publish starts is always seen, which is contract point 3.
//!
//! A slot's routes are an open-addressing table of 64-bit route hashes (0 empty,
//! 1 deleted). A hash names a route only probably: the receiver filters by its exact
//! routes as well, so a collision costs a wasted copy, never a wrong delivery.

use std::path::Path;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::sys::{Mapping, SharedMutex, SharedMutexGuard};

/// "gpregi01", written last when the registry is created.
const MAGIC: u64 = u64::from_le_bytes(*b"gpregi01");
/// Endpoints one system holds at once.
pub(super) const MAX_SLOTS: usize = 128;
/// Routes one endpoint may subscribe at once (a route is a topic of a federation).
pub(super) const MAX_ROUTES: usize = 2048;
const TABLE: usize = MAX_ROUTES * 2;
const EMPTY: u64 = 0;
const DELETED: u64 = 1;

#[repr(C, align(64))]
struct Header {
    magic: AtomicU64,
    _pad0: [u64; 7],
    generation: AtomicU64,
    _pad1: [u64; 7],
    mutex: SharedMutex,
}

#[repr(C)]
struct Slot {
    /// 0 free, 1 live.
    state: AtomicU32,
    /// The process that holds it (for messages only: liveness is the ring's lock).
    pid: AtomicU32,
    /// Bumped each time the slot is claimed, so a ring file name is never reused.
    epoch: AtomicU64,
    routes_used: AtomicU64,
    routes: [AtomicU64; TABLE],
}

const HEADER_BYTES: usize = 4096;
const _: () = assert!(std::mem::size_of::<Header>() <= HEADER_BYTES);
const BYTES: usize = HEADER_BYTES + MAX_SLOTS * std::mem::size_of::<Slot>();

/// A live slot: its index and epoch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) struct SlotId {
    pub index: u32,
    pub epoch: u64,
}

pub(super) struct Registry {
    map: Mapping,
}

/// Why a route could not be added.
#[derive(Debug)]
pub(super) struct RoutesFull;

impl Registry {
    pub(super) fn create(path: &Path) -> std::io::Result<Registry> {
        let map = Mapping::create(path, BYTES)?;
        // SAFETY: a fresh zeroed mapping nobody else uses until MAGIC is stored.
        unsafe {
            let header = map.as_ptr().cast::<Header>();
            SharedMutex::init(&raw mut (*header).mutex)?;
            (*header).magic.store(MAGIC, Ordering::Release);
        }
        Ok(Registry { map })
    }

    pub(super) fn open(path: &Path) -> std::io::Result<Registry> {
        let map = Mapping::open(path, BYTES)?;
        let registry = Registry { map };
        if registry.header().magic.load(Ordering::Acquire) != MAGIC {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} is not a glidepath registry", path.display()),
            ));
        }
        Ok(registry)
    }

    fn header(&self) -> &Header {
        // SAFETY: the mapping is at least BYTES long; fields are atomics or the mutex.
        unsafe { &*self.map.as_ptr().cast::<Header>() }
    }

    fn slot(&self, index: usize) -> &Slot {
        assert!(index < MAX_SLOTS);
        // SAFETY: within the mapping (BYTES covers MAX_SLOTS slots); all atomics.
        unsafe {
            &*self
                .map
                .as_ptr()
                .add(HEADER_BYTES + index * std::mem::size_of::<Slot>())
                .cast::<Slot>()
        }
    }

    /// The registry's change counter.
    pub(super) fn generation(&self) -> u64 {
        self.header().generation.load(Ordering::Acquire)
    }

    fn lock(&self) -> SharedMutexGuard<'_> {
        self.header().mutex.lock()
    }

    fn bump(&self) {
        self.header().generation.fetch_add(1, Ordering::AcqRel);
    }

    /// Claims a free slot for this process, with no routes; `None` when all are
    /// taken. `is_dead` is asked about live slots first when none is free, and the
    /// dead ones are freed (their process died without closing).
    pub(super) fn claim(&self, mut is_dead: impl FnMut(SlotId) -> bool) -> Option<SlotId> {
        let _guard = self.lock();
        let claim = |i: usize| {
            let slot = self.slot(i);
            for r in &slot.routes {
                r.store(EMPTY, Ordering::Relaxed);
            }
            slot.routes_used.store(0, Ordering::Relaxed);
            slot.pid.store(std::process::id(), Ordering::Relaxed);
            let epoch = slot.epoch.fetch_add(1, Ordering::Relaxed) + 1;
            slot.state.store(1, Ordering::Release);
            self.bump();
            SlotId {
                index: i as u32,
                epoch,
            }
        };
        if let Some(i) = (0..MAX_SLOTS).find(|&i| self.slot(i).state.load(Ordering::Acquire) == 0) {
            return Some(claim(i));
        }
        let dead = (0..MAX_SLOTS).find(|&i| {
            let slot = self.slot(i);
            is_dead(SlotId {
                index: i as u32,
                epoch: slot.epoch.load(Ordering::Relaxed),
            })
        })?;
        Some(claim(dead))
    }

    /// Frees a slot if it is still the one claimed (same epoch). True if it was.
    pub(super) fn release(&self, id: SlotId) -> bool {
        let _guard = self.lock();
        let slot = self.slot(id.index as usize);
        if slot.state.load(Ordering::Acquire) == 1 && slot.epoch.load(Ordering::Relaxed) == id.epoch
        {
            slot.state.store(0, Ordering::Release);
            self.bump();
            true
        } else {
            false
        }
    }

    /// Adds a route hash to a slot's table (no-op when present).
    pub(super) fn add_route(&self, id: SlotId, hash: u64) -> Result<(), RoutesFull> {
        let _guard = self.lock();
        let slot = self.slot(id.index as usize);
        if find(slot, hash).is_some() {
            return Ok(());
        }
        if slot.routes_used.load(Ordering::Relaxed) as usize >= MAX_ROUTES {
            return Err(RoutesFull);
        }
        let mut i = hash as usize % TABLE;
        loop {
            let v = slot.routes[i].load(Ordering::Relaxed);
            if v == EMPTY || v == DELETED {
                slot.routes[i].store(hash, Ordering::Relaxed);
                slot.routes_used.fetch_add(1, Ordering::Relaxed);
                break;
            }
            i = (i + 1) % TABLE;
        }
        self.bump();
        Ok(())
    }

    /// Removes a route hash from a slot's table.
    pub(super) fn remove_route(&self, id: SlotId, hash: u64) {
        let _guard = self.lock();
        let slot = self.slot(id.index as usize);
        if let Some(i) = find(slot, hash) {
            slot.routes[i].store(DELETED, Ordering::Relaxed);
            slot.routes_used.fetch_sub(1, Ordering::Relaxed);
            self.bump();
        }
    }

    /// The live slots subscribing `hash`, except `except`, and the generation they
    /// were read at.
    pub(super) fn targets(&self, hash: u64, except: Option<u32>) -> (Vec<SlotId>, u64) {
        let _guard = self.lock();
        let generation = self.generation();
        let ids = (0..MAX_SLOTS)
            .filter(|&i| Some(i as u32) != except)
            .filter_map(|i| {
                let slot = self.slot(i);
                (slot.state.load(Ordering::Acquire) == 1 && find(slot, hash).is_some()).then(|| {
                    SlotId {
                        index: i as u32,
                        epoch: slot.epoch.load(Ordering::Relaxed),
                    }
                })
            })
            .collect();
        (ids, generation)
    }

    /// Every live slot.
    pub(super) fn live(&self) -> Vec<SlotId> {
        let _guard = self.lock();
        (0..MAX_SLOTS)
            .filter_map(|i| {
                let slot = self.slot(i);
                (slot.state.load(Ordering::Acquire) == 1).then(|| SlotId {
                    index: i as u32,
                    epoch: slot.epoch.load(Ordering::Relaxed),
                })
            })
            .collect()
    }
}

fn find(slot: &Slot, hash: u64) -> Option<usize> {
    let mut i = hash as usize % TABLE;
    for _ in 0..TABLE {
        match slot.routes[i].load(Ordering::Relaxed) {
            EMPTY => return None,
            v if v == hash => return Some(i),
            _ => i = (i + 1) % TABLE,
        }
    }
    None
}

/// A route's 64-bit hash (FNV-1a over its bytes, then a final mix), never 0 or 1.
pub(super) fn route_hash(route_bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in route_bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h.max(2)
}

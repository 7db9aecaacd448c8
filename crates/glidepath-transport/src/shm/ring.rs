//! One endpoint's inbound ring: many producers (any process), one consumer (the
//! endpoint's reader thread), variable-sized records, in one shared file.
//!
//! Producers take the ring's robust mutex, write a record after the committed head
//! and publish it by storing the new head (release); the consumer reads records from
//! its tail up to the head (acquire) and stores the new tail. So records are read in
//! the order producers took the mutex: one order for all senders, which is what lets
//! an executive's notifications, written before its reply, reach every subscriber
//! before anything another endpoint publishes after seeing the reply. A producer that
//! dies holding the mutex leaves the head where it was: its half-written record was
//! never published.
//!
//! Layout: a 4 KiB header (fields on their own cache lines), then `capacity` bytes of
//! records. A record is an 8-byte header (`u32` length, `u8` kind) and its bytes,
//! padded to 8. A record never wraps: when it does not fit before the end, a `PAD`
//! record fills the rest and it starts at offset 0.
//!
//! Sleeping: the consumer spins, then sets `consumer_sleeping` and sleeps on it (a
//! futex); a producer that published checks the flag after a full fence and wakes it.
//! A producer that finds no room counts itself in `producers_waiting` and sleeps on
//! `space_seq`, which the consumer bumps after freeing room while anyone waits.

use std::path::Path;
use std::sync::atomic::{fence, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::sys::{futex_wait, futex_wake_all, Mapping, SharedMutex};

/// Written last when a ring is created: "gpring01".
const MAGIC: u64 = u64::from_le_bytes(*b"gpring01");
const HEADER_BYTES: usize = 4096;
const RECORD_HEADER: usize = 8;

/// Record kinds.
pub(super) const KIND_PAD: u8 = 0;
/// An envelope on a route: `federation u64, topic tag u8, topic handle u32`, then the
/// encoded envelope.
pub(super) const KIND_ENVELOPE: u8 = 1;
/// A request for the executive: `endpoint slot u32, slot epoch u64, request id u64`,
/// then the JSON request.
pub(super) const KIND_REQUEST: u8 = 2;
/// The executive's reply: `request id u64`, then the JSON reply.
pub(super) const KIND_REPLY: u8 = 3;

#[repr(C, align(64))]
struct Line<T>(T);

#[repr(C)]
struct Header {
    magic: Line<AtomicU64>,
    capacity: Line<u64>,
    head: Line<AtomicU64>,
    tail: Line<AtomicU64>,
    consumer_sleeping: Line<AtomicU32>,
    producers_waiting: Line<AtomicU32>,
    space_seq: Line<AtomicU32>,
    closed: Line<AtomicU32>,
    /// Best-effort records shed by producers because the ring was full.
    shed: Line<AtomicU64>,
    mutex: Line<SharedMutex>,
}

const _: () = assert!(std::mem::size_of::<Header>() <= HEADER_BYTES);

/// What became of a push.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Pushed {
    Written,
    /// Best effort, and no room: dropped and counted in the ring.
    Shed,
    /// The consumer closed or died: nobody will read it.
    Gone,
}

/// A mapped ring, from either side.
pub(super) struct Ring {
    map: Mapping,
    capacity: u64,
}

/// A record as the consumer sees it, valid until [`Ring::consume`].
pub(super) struct Record<'a> {
    pub kind: u8,
    pub bytes: &'a [u8],
    end: u64,
}

fn padded(len: usize) -> u64 {
    (RECORD_HEADER + len).next_multiple_of(8) as u64
}

impl Ring {
    /// Creates the ring file with room for `capacity` bytes of records (a power of two).
    pub(super) fn create(path: &Path, capacity: usize) -> std::io::Result<Ring> {
        assert!(capacity.is_power_of_two() && capacity >= 4096);
        let map = Mapping::create(path, HEADER_BYTES + capacity)?;
        let header = map.as_ptr().cast::<Header>();
        // SAFETY: a fresh mapping nobody else has opened yet (the name is new and
        // becomes valid to others only once MAGIC is stored).
        unsafe {
            (*header).capacity.0 = capacity as u64;
            SharedMutex::init(&raw mut (*header).mutex.0)?;
            (*header).magic.0.store(MAGIC, Ordering::Release);
        }
        map.lock_shared()?;
        Ok(Ring {
            map,
            capacity: capacity as u64,
        })
    }

    /// Maps an existing ring.
    pub(super) fn open(path: &Path) -> std::io::Result<Ring> {
        let map = Mapping::open(path, HEADER_BYTES + 4096)?;
        // SAFETY: the file is at least a header long; the magic is read atomically.
        let header = unsafe { &*map.as_ptr().cast::<Header>() };
        if header.magic.0.load(Ordering::Acquire) != MAGIC {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} is not a glidepath ring (yet)", path.display()),
            ));
        }
        let capacity = header.capacity.0;
        if !capacity.is_power_of_two() || HEADER_BYTES as u64 + capacity > map.len() as u64 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: bad capacity {capacity}", path.display()),
            ));
        }
        Ok(Ring { map, capacity })
    }

    fn header(&self) -> &Header {
        // SAFETY: validated in create/open; the header is only touched through
        // atomics and the robust mutex after that.
        unsafe { &*self.map.as_ptr().cast::<Header>() }
    }

    fn data(&self) -> *mut u8 {
        // SAFETY: HEADER_BYTES is within the mapping.
        unsafe { self.map.as_ptr().add(HEADER_BYTES) }
    }

    /// The largest record this ring takes (a quarter of it, so a full ring always
    /// frees room for one).
    pub(super) fn max_record(&self) -> usize {
        (self.capacity / 4) as usize - RECORD_HEADER
    }

    /// Best-effort records producers shed for want of room.
    pub(super) fn shed(&self) -> u64 {
        self.header().shed.0.load(Ordering::Relaxed)
    }

    /// True while the consumer's process lives (it holds a lock on the file).
    pub(super) fn consumer_alive(&self) -> bool {
        self.map.owner_alive()
    }

    pub(super) fn is_closed(&self) -> bool {
        self.header().closed.0.load(Ordering::Acquire) != 0
    }

    /// Marks the ring closed: producers waiting for room give up, later pushes are
    /// `Gone`.
    pub(super) fn close(&self) {
        let h = self.header();
        h.closed.0.store(1, Ordering::Release);
        h.space_seq.0.fetch_add(1, Ordering::SeqCst);
        futex_wake_all(&h.space_seq.0);
        h.consumer_sleeping.0.store(0, Ordering::SeqCst);
        futex_wake_all(&h.consumer_sleeping.0);
    }

    /// Writes one record made of `parts` (their total at most [`Ring::max_record`]).
    /// Without room, a best-effort record is shed; a reliable one waits for the
    /// consumer, and gives up (`Gone`) once it has waited 200 ms and the consumer's
    /// process is dead.
    pub(super) fn push(&self, kind: u8, parts: &[&[u8]], best_effort: bool) -> Pushed {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        debug_assert!(len <= self.max_record());
        let need = padded(len);
        let h = self.header();
        let mut waiting_since: Option<Instant> = None;
        loop {
            {
                let _guard = h.mutex.0.lock();
                if h.closed.0.load(Ordering::Acquire) != 0 {
                    return Pushed::Gone;
                }
                let head = h.head.0.load(Ordering::Relaxed);
                let tail = h.tail.0.load(Ordering::Acquire);
                let offset = head % self.capacity;
                let to_end = self.capacity - offset;
                let pad = if need > to_end { to_end } else { 0 };
                if head + pad + need - tail <= self.capacity {
                    let mut at = head;
                    if pad > 0 {
                        self.write_header(at, KIND_PAD, 0);
                        at += pad;
                    }
                    self.write_header(at, kind, len as u32);
                    let mut p = (at % self.capacity) as usize + RECORD_HEADER;
                    for part in parts {
                        // SAFETY: the record lies within [head, head+pad+need), which the
                        // consumer does not read until the head store below; it fits
                        // before the end of the data area (pad moved it to 0 otherwise).
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                part.as_ptr(),
                                self.data().add(p),
                                part.len(),
                            );
                        }
                        p += part.len();
                    }
                    h.head.0.store(at + need, Ordering::Release);
                    break;
                }
            }
            if best_effort {
                h.shed.0.fetch_add(1, Ordering::Relaxed);
                return Pushed::Shed;
            }
            // Wait for room.
            let since = *waiting_since.get_or_insert_with(Instant::now);
            h.producers_waiting.0.fetch_add(1, Ordering::SeqCst);
            let seq = h.space_seq.0.load(Ordering::SeqCst);
            let tail = h.tail.0.load(Ordering::SeqCst);
            let head = h.head.0.load(Ordering::SeqCst);
            // Room for the record and the worst padding before it.
            if head + 2 * need > tail + self.capacity {
                futex_wait(&h.space_seq.0, seq, Duration::from_millis(20));
            }
            h.producers_waiting.0.fetch_sub(1, Ordering::SeqCst);
            if since.elapsed() > Duration::from_millis(200) && !self.consumer_alive() {
                return Pushed::Gone;
            }
        }
        fence(Ordering::SeqCst);
        if h.consumer_sleeping.0.load(Ordering::Relaxed) != 0
            && h.consumer_sleeping.0.swap(0, Ordering::SeqCst) != 0
        {
            futex_wake_all(&h.consumer_sleeping.0);
        }
        Pushed::Written
    }

    fn write_header(&self, at: u64, kind: u8, len: u32) {
        let mut header = [0u8; RECORD_HEADER];
        header[..4].copy_from_slice(&len.to_le_bytes());
        header[4] = kind;
        // SAFETY: `at` is 8-aligned and at least 8 bytes before the end of the data.
        unsafe {
            std::ptr::copy_nonoverlapping(
                header.as_ptr(),
                self.data().add((at % self.capacity) as usize),
                RECORD_HEADER,
            );
        }
    }

    /// The oldest unread record, if any (consumer only).
    pub(super) fn front(&self) -> Option<Record<'_>> {
        let h = self.header();
        let mut tail = h.tail.0.load(Ordering::Relaxed);
        let head = h.head.0.load(Ordering::Acquire);
        loop {
            if tail >= head {
                return None;
            }
            let offset = (tail % self.capacity) as usize;
            let mut header = [0u8; RECORD_HEADER];
            // SAFETY: [tail, head) was published by the release store of head.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    self.data().add(offset),
                    header.as_mut_ptr(),
                    RECORD_HEADER,
                );
            }
            let kind = header[4];
            if kind == KIND_PAD {
                tail += self.capacity - offset as u64;
                h.tail.0.store(tail, Ordering::Release);
                continue;
            }
            let len = u32::from_le_bytes(header[..4].try_into().unwrap()) as usize;
            let end = tail + padded(len);
            if end > head || offset + RECORD_HEADER + len > self.capacity as usize {
                // Cannot happen with our producers; a corrupt ring is dropped whole.
                h.tail.0.store(head, Ordering::Release);
                return None;
            }
            // SAFETY: as above; the bytes stay valid until consume() lets producers
            // reuse them.
            let bytes =
                unsafe { std::slice::from_raw_parts(self.data().add(offset + RECORD_HEADER), len) };
            return Some(Record { kind, bytes, end });
        }
    }

    /// Lets producers reuse the record's bytes (consumer only).
    pub(super) fn consume(&self, record: Record<'_>) {
        self.header().tail.0.store(record.end, Ordering::Release);
    }

    /// Wakes producers waiting for room, if any (consumer, after consuming).
    pub(super) fn release_room(&self) {
        let h = self.header();
        fence(Ordering::SeqCst);
        if h.producers_waiting.0.load(Ordering::Relaxed) != 0 {
            h.space_seq.0.fetch_add(1, Ordering::SeqCst);
            futex_wake_all(&h.space_seq.0);
        }
    }

    /// Waits for a record: spins for `spin`, then sleeps (at most `max_sleep`).
    /// Returns early when the ring is closed.
    pub(super) fn wait(&self, spin: Duration, max_sleep: Duration) {
        let h = self.header();
        let tail = h.tail.0.load(Ordering::Relaxed);
        if !spin.is_zero() {
            let until = Instant::now() + spin;
            let mut n = 0u32;
            loop {
                if h.head.0.load(Ordering::Acquire) != tail || self.is_closed() {
                    return;
                }
                std::hint::spin_loop();
                n += 1;
                if n.is_multiple_of(64) && Instant::now() >= until {
                    break;
                }
            }
        }
        h.consumer_sleeping.0.store(1, Ordering::SeqCst);
        if h.head.0.load(Ordering::SeqCst) != tail || self.is_closed() {
            h.consumer_sleeping.0.store(0, Ordering::Relaxed);
            return;
        }
        futex_wait(&h.consumer_sleeping.0, 1, max_sleep);
        h.consumer_sleeping.0.store(0, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let p =
            std::env::temp_dir().join(format!("glidepath-ring-test-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&p);
        p
    }

    #[test]
    fn records_come_out_in_order_across_the_wrap_and_full_rings_shed_best_effort() {
        let path = temp("order");
        let ring = Ring::create(&path, 4096).unwrap();
        let producer = Ring::open(&path).unwrap();
        let mut next_out = 0u32;
        let mut shed = 0;
        for i in 0..10_000u32 {
            let body = vec![i as u8; (i % 300) as usize];
            match producer.push(KIND_ENVELOPE, &[&i.to_le_bytes(), &body], true) {
                Pushed::Written => {}
                Pushed::Shed => {
                    shed += 1;
                    // Drain everything, checking order, then retry reliably.
                    while let Some(r) = ring.front() {
                        let n = u32::from_le_bytes(r.bytes[..4].try_into().unwrap());
                        assert_eq!(n, next_out);
                        assert!(r.bytes[4..].iter().all(|b| *b == n as u8));
                        next_out += 1;
                        ring.consume(r);
                    }
                    assert_eq!(
                        producer.push(KIND_ENVELOPE, &[&i.to_le_bytes(), &body], false),
                        Pushed::Written
                    );
                }
                Pushed::Gone => panic!("gone"),
            }
        }
        while let Some(r) = ring.front() {
            assert_eq!(
                u32::from_le_bytes(r.bytes[..4].try_into().unwrap()),
                next_out
            );
            next_out += 1;
            ring.consume(r);
        }
        assert_eq!(next_out, 10_000);
        assert_eq!(ring.shed(), shed);
        assert!(shed > 0);
        ring.close();
        assert_eq!(producer.push(KIND_ENVELOPE, &[b"x"], false), Pushed::Gone);
        let _ = std::fs::remove_file(&path);
    }

    #[test]
    fn a_reliable_producer_waits_for_the_consumer_across_threads() {
        let path = temp("threads");
        let ring = Ring::create(&path, 4096).unwrap();
        let producer = Ring::open(&path).unwrap();
        std::thread::scope(|s| {
            s.spawn(|| {
                for i in 0..100_000u64 {
                    assert_eq!(
                        producer.push(KIND_ENVELOPE, &[&i.to_le_bytes()], false),
                        Pushed::Written
                    );
                }
            });
            let mut expect = 0u64;
            while expect < 100_000 {
                match ring.front() {
                    Some(r) => {
                        assert_eq!(u64::from_le_bytes(r.bytes.try_into().unwrap()), expect);
                        expect += 1;
                        ring.consume(r);
                        ring.release_room();
                    }
                    None => ring.wait(Duration::from_micros(10), Duration::from_millis(50)),
                }
            }
        });
        let _ = std::fs::remove_file(&path);
    }
}

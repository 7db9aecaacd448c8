//! The rings without glidepath: what the benchmarks run as the `shm` transport's raw
//! peer (bytes in, bytes out; no envelopes, no routes, no reader thread, no RTI).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::ring::{Pushed, Ring, KIND_ENVELOPE};

/// One ring in a file of its own: any number of senders, one receiver.
pub struct RawRing {
    ring: Ring,
    /// Removed on drop when this side created it.
    created: Option<PathBuf>,
    /// Records taken since producers waiting for room were last woken.
    taken: std::sync::atomic::AtomicU32,
}

impl RawRing {
    /// Creates the ring `dir/glidepath-raw-NAME` with `bytes` of records (a power of
    /// two); this side is its receiver. The file is removed on drop.
    pub fn create(dir: &Path, name: &str, bytes: usize) -> std::io::Result<RawRing> {
        let path = dir.join(format!("glidepath-raw-{name}"));
        let _ = std::fs::remove_file(&path);
        Ok(RawRing {
            ring: Ring::create(&path, bytes)?,
            created: Some(path),
            taken: Default::default(),
        })
    }

    /// Opens a ring another side created, to send into it.
    pub fn open(dir: &Path, name: &str) -> std::io::Result<RawRing> {
        Ok(RawRing {
            ring: Ring::open(&dir.join(format!("glidepath-raw-{name}")))?,
            created: None,
            taken: Default::default(),
        })
    }

    /// Writes one record, waiting for room; false when the receiver closed or died or
    /// the record is larger than a quarter of the ring.
    pub fn send(&self, bytes: &[u8]) -> bool {
        bytes.len() <= self.ring.max_record()
            && self.ring.push(KIND_ENVELOPE, &[bytes], false) == Pushed::Written
    }

    /// Takes the oldest record into `out`; waits spinning for `spin`, then sleeping,
    /// at most `timeout` in all. False when nothing came.
    pub fn recv(&self, out: &mut Vec<u8>, spin: Duration, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(record) = self.ring.front() {
                out.clear();
                out.extend_from_slice(record.bytes);
                self.ring.consume(record);
                // As the endpoints' reader does: wake waiting senders every 256.
                if self
                    .taken
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                    % 256
                    == 255
                {
                    self.ring.release_room();
                }
                return true;
            }
            self.ring.release_room();
            let now = Instant::now();
            if now >= deadline {
                return false;
            }
            self.ring.wait(
                spin.min(deadline - now),
                (deadline - now).min(Duration::from_millis(100)),
            );
        }
    }
}

impl Drop for RawRing {
    fn drop(&mut self) {
        if let Some(path) = &self.created {
            self.ring.close();
            let _ = std::fs::remove_file(path);
        }
    }
}

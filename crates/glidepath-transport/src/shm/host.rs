//! The executive of a shared-memory system, on a thread of the hosting process: it
//! reads requests from the executive's ring, writes each request's notifications into
//! the rings of the federation topic's subscribers, and then the reply into the
//! requester's ring.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::BytesMut;
use glidepath_core::{ExecutiveHost, SaveStore, Topic};
use parking_lot::Mutex;

use super::registry::SlotId;
use super::ring::{Pushed, KIND_ENVELOPE, KIND_REPLY, KIND_REQUEST};
use super::{route_bytes, System};
use crate::{monotonic_now_ns, TransportError};

pub(super) struct Host {
    system: Arc<System>,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The system's lock, held for the host's life.
    _lock: File,
    malformed: Arc<AtomicU64>,
}

impl Host {
    pub(super) fn start(
        system: Arc<System>,
        store: Box<dyn SaveStore>,
        lock: File,
    ) -> Result<Host, TransportError> {
        let stop = Arc::new(AtomicBool::new(false));
        let malformed = Arc::new(AtomicU64::new(0));
        let thread = {
            let (system, stop, malformed) = (system.clone(), stop.clone(), malformed.clone());
            std::thread::Builder::new()
                .name("shm-executive".into())
                .spawn(move || serve(&system, ExecutiveHost::with_store(store), &stop, &malformed))
                .map_err(|e| TransportError::Io {
                    what: "the shared-memory executive thread",
                    reason: e.to_string(),
                })?
        };
        Ok(Host {
            system,
            stop,
            thread: Mutex::new(Some(thread)),
            _lock: lock,
            malformed,
        })
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        self.system.exec.close();
        if let Some(t) = self.thread.lock().take() {
            let _ = t.join();
        }
        let malformed = self.malformed.load(Ordering::Relaxed);
        if malformed > 0 {
            super::tracing_warn(&format!(
                "shm system `{}`: {malformed} malformed requests were refused",
                self.system.name
            ));
        }
        // Every file of the system, the rings of endpoints still open included (their
        // processes keep their mappings, but without an executive the system is over).
        super::remove_stale_files(&self.system.dir, &self.system.name);
        let _ = std::fs::remove_file(System::path(&self.system.dir, &self.system.name, "lock"));
    }
}

fn serve(system: &System, mut host: ExecutiveHost, stop: &AtomicBool, malformed: &AtomicU64) {
    let mut buffer = BytesMut::with_capacity(1024);
    while !stop.load(Ordering::Acquire) {
        let Some(record) = system.exec.front() else {
            system.exec.release_room();
            system.exec.wait(Duration::ZERO, Duration::from_millis(100));
            continue;
        };
        if record.kind != KIND_REQUEST || record.bytes.len() < 20 {
            malformed.fetch_add(1, Ordering::Relaxed);
            system.exec.consume(record);
            continue;
        }
        let b = record.bytes;
        let requester = SlotId {
            index: u32::from_le_bytes(b[..4].try_into().unwrap()),
            epoch: u64::from_le_bytes(b[4..12].try_into().unwrap()),
        };
        let id = u64::from_le_bytes(b[12..20].try_into().unwrap());
        let outcome = glidepath_wire::decode_request(&b[20..]);
        system.exec.consume(record);
        system.exec.release_room();
        let reply = match outcome {
            Ok(request) => {
                let hosted = host.handle(request, 0);
                if let Some(federation) = hosted.federation {
                    let route = (federation, Topic::Federation);
                    let (targets, _) = system.targets(route, None);
                    for mut envelope in hosted.notifications {
                        if envelope.publish_time_ns == 0 {
                            envelope.publish_time_ns = monotonic_now_ns();
                        }
                        buffer.clear();
                        buffer.extend_from_slice(&route_bytes(route));
                        glidepath_wire::encode_envelope_into(&envelope, &mut buffer);
                        for (target, ring) in &targets {
                            if ring.push(KIND_ENVELOPE, &[&buffer], false) == Pushed::Gone
                                && !ring.is_closed()
                            {
                                system.reap(*target);
                            }
                        }
                    }
                }
                Ok(glidepath_wire::encode_reply(&hosted.reply))
            }
            Err(e) => {
                malformed.fetch_add(1, Ordering::Relaxed);
                Err(format!("malformed request: {e}"))
            }
        };
        let Some(ring) = system.ring(requester) else {
            continue; // The requester closed meanwhile.
        };
        let too_large;
        let (flag, body) = match &reply {
            Ok(bytes) if bytes.len() + 9 <= ring.max_record() => (0u8, bytes.as_slice()),
            Ok(bytes) => {
                too_large = format!(
                    "the reply of {} bytes exceeds the requester's ring's largest record ({} bytes): raise the ring size (--shm-ring-bytes)",
                    bytes.len(),
                    ring.max_record()
                );
                (1u8, too_large.as_bytes())
            }
            Err(text) => (1u8, text.as_bytes()),
        };
        ring.push(KIND_REPLY, &[&id.to_le_bytes(), &[flag], body], false);
    }
}

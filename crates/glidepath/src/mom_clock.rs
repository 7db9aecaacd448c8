//! The management object model's clock: the core reports a federate's
//! `HLAmanager.HLAfederate` values on request by itself, but it has no clock, so the
//! periodic reports an `HLAsetTiming` asks for are driven from here.
//!
//! Nothing runs until a period is set: the thread that sends the reports is started
//! the first time the core's period becomes non-zero (seen after the inbox is fed
//! to the core), and it ends with the federate.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{OnceLock, Weak};
use std::time::Duration;

use crossbeam_channel::{RecvTimeoutError, Sender};
use glidepath_core::LocalRti;

use crate::delivery::Shared;

/// This host's name for `HLAfederateHost`: the kernel's, else `HOSTNAME`, else empty.
pub(crate) fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}

/// What [`Shared`] keeps for the periodic reports.
#[derive(Default)]
pub(crate) struct MomClock {
    /// The period (seconds) last handed to the reporting thread.
    seen: AtomicU32,
    /// The way to the reporting thread, once started.
    tx: OnceLock<Sender<u32>>,
    /// The federate's shared state, for the thread to report through.
    shared: OnceLock<Weak<Shared>>,
}

impl MomClock {
    /// Tells the clock which federate it reports for (once, right after [`Shared`]
    /// is made).
    pub(crate) fn attach(&self, shared: Weak<Shared>) {
        let _ = self.shared.set(shared);
    }

    /// After the core took envelopes (one may have been an `HLAsetTiming`): hands a
    /// changed period to the reporting thread, starting it the first time.
    #[inline]
    pub(crate) fn after_input(&self, rti: &LocalRti) {
        let period = rti.mom_report_period_s();
        if period == self.seen.load(Ordering::Relaxed) {
            return;
        }
        self.seen.store(period, Ordering::Relaxed);
        if let Some(tx) = self.tx.get() {
            let _ = tx.send(period);
            return;
        }
        let Some(shared) = self.shared.get().cloned() else {
            return;
        };
        let (tx, rx) = crossbeam_channel::unbounded();
        let _ = tx.send(period);
        let spawned = std::thread::Builder::new()
            .name("glidepath-mom".into())
            .spawn(move || {
                let mut period = 0u32;
                loop {
                    let next = if period == 0 {
                        rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
                    } else {
                        rx.recv_timeout(Duration::from_secs(u64::from(period)))
                    };
                    match next {
                        Ok(p) => period = p,
                        Err(RecvTimeoutError::Timeout) => {
                            let Some(shared) = shared.upgrade() else {
                                break;
                            };
                            if shared.stopped() {
                                break;
                            }
                            shared.mom_report();
                        }
                        Err(RecvTimeoutError::Disconnected) => break,
                    }
                }
            });
        if spawned.is_ok() {
            let _ = self.tx.set(tx);
        }
    }
}

//! The forwarding threads of a bridge (`bridge.rs`, `hla.rs`): each loops until its
//! bridge tells it to stop, looking at the flag between waits.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A bridge's threads and their stop flag.
#[derive(Default)]
pub(crate) struct Workers {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Workers {
    /// Starts thread `name` running `f`, which loops until the flag it is given is set.
    pub(crate) fn spawn(
        &mut self,
        name: &str,
        f: impl FnOnce(Arc<AtomicBool>) + Send + 'static,
    ) -> std::io::Result<()> {
        let stop = self.stop.clone();
        let t = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || f(stop))?;
        self.threads.push(t);
        Ok(())
    }

    /// Whether threads run (not yet stopped).
    pub(crate) fn running(&self) -> bool {
        !self.threads.is_empty()
    }

    /// Tells every thread to stop and waits for them.
    pub(crate) fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Whether a worker's flag says stop.
pub(crate) fn stopped(flag: &AtomicBool) -> bool {
    flag.load(Ordering::Relaxed)
}

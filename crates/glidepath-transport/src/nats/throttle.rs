//! Rate limits for warnings a peer can cause.
//!
//! Every message dropped for failing authentication or decoding is counted and
//! logged with its sender. A peer that floods a subject with bad messages must not
//! flood the log as well: writing a line per message would make the log, not the
//! bad traffic, the bottleneck of the reader. So each kind of warning is let through
//! at most once per [`INTERVAL`], and the line that is let through says how many of
//! its kind were held back since the last one. The counters count every message.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::monotonic_now_ns;

/// The shortest time between two lines of one kind of warning.
pub(crate) const INTERVAL_NS: u64 = 1_000_000_000;

/// One kind of warning's rate limit; [`warn_throttled`] keeps one per call site.
pub(crate) struct LogThrottle {
    /// When the next line may be written (monotonic nanoseconds; 0: at once).
    next_ns: AtomicU64,
    /// Lines held back since the last one written.
    held_back: AtomicU64,
}

impl LogThrottle {
    pub(crate) const fn new() -> LogThrottle {
        LogThrottle {
            next_ns: AtomicU64::new(0),
            held_back: AtomicU64::new(0),
        }
    }

    /// `Some(n)` when a line is due now, `n` lines of this kind having been held
    /// back since the last; `None` (and one more held back) otherwise.
    pub(crate) fn admit(&self) -> Option<u64> {
        self.admit_at(monotonic_now_ns())
    }

    fn admit_at(&self, now_ns: u64) -> Option<u64> {
        let next = self.next_ns.load(Ordering::Relaxed);
        if now_ns >= next
            && self
                .next_ns
                .compare_exchange(
                    next,
                    now_ns + INTERVAL_NS,
                    Ordering::Relaxed,
                    Ordering::Relaxed,
                )
                .is_ok()
        {
            return Some(self.held_back.swap(0, Ordering::Relaxed));
        }
        self.held_back.fetch_add(1, Ordering::Relaxed);
        None
    }
}

/// `tracing::warn!` through a [`LogThrottle`] of its own call site, with the field
/// `held_back` added. The fields are evaluated only when the line is written, so a
/// flood of bad messages pays for none of them.
macro_rules! warn_throttled {
    ($($arg:tt)+) => {{
        static LOG: $crate::nats::throttle::LogThrottle =
            $crate::nats::throttle::LogThrottle::new();
        if let Some(held_back) = LOG.admit() {
            tracing::warn!(held_back, $($arg)+);
        }
    }};
}
pub(crate) use warn_throttled;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lets_one_line_through_per_interval_and_counts_the_rest() {
        let t = LogThrottle::new();
        assert_eq!(t.admit_at(5), Some(0));
        for i in 1..=10 {
            assert_eq!(t.admit_at(5 + i), None);
        }
        assert_eq!(t.admit_at(5 + INTERVAL_NS - 1), None);
        assert_eq!(t.admit_at(5 + INTERVAL_NS), Some(11));
        assert_eq!(t.admit_at(5 + 3 * INTERVAL_NS), Some(0));
    }
}

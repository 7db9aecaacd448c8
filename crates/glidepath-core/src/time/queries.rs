//! What a federate can ask about its time (the HLA queries) and the diagnostics
//! checkers and logs read: logical time, lookahead, GALT, LITS, a snapshot.

use crate::local_rti::*;
use crate::message::{Advance, Regulation};
use crate::time::state::*;
use crate::types::{FederateHandle, LogicalTime, LogicalTimeInterval};

impl LocalRti {
    /// The federate's logical time.
    pub fn logical_time(&self) -> LogicalTime {
        self.time.logical_time
    }
    /// The federate's lookahead.
    pub fn lookahead(&self) -> LogicalTimeInterval {
        self.time.lookahead
    }
    /// True when regulation is enabled (not pending).
    pub fn is_regulating(&self) -> bool {
        self.time.regulation == Regulation::On
    }
    /// True when constrained is enabled (not pending).
    pub fn is_constrained(&self) -> bool {
        self.time.constrained == Constrained::On
    }
    /// How many time-stamped messages wait in the queue.
    pub fn queued_tso(&self) -> usize {
        self.time.queue.len()
    }
    /// The earliest time stamp this federate may send in time-stamp order now (its
    /// logical time, or requested time while advancing, plus lookahead, never below a
    /// promise already made). `None` when not regulating.
    pub fn earliest_tso_send_time(&self) -> Option<LogicalTime> {
        (self.time.regulation == Regulation::On).then(|| self.earliest_send_time())
    }
    /// A one-line description of the time state, for diagnostics.
    pub fn describe_time_state(&self) -> String {
        format!(
            "lt {} regulation {:?} constrained {:?} advance {:?} galt {} promise {} queued {} pending-regulation {:?}",
            self.time.logical_time,
            self.time.regulation,
            self.time.constrained,
            self.time.advance,
            self.galt(),
            self.promise(),
            self.time.queue.len(),
            self.time.pending_regulation.as_ref().map(|p| (p.earliest, p.waiting.iter().copied().collect::<Vec<_>>())),
        )
    }
    /// For each peer waiting in a next message request, why its conditional bound is
    /// or is not trusted, for diagnostics.
    pub fn describe_conditionals(&self) -> String {
        let mut out = String::new();
        for (f, (_, s)) in &self.time.statuses {
            if let Advance::Ner { next, .. } = s.advance {
                let seen = |k: FederateHandle| s.seen_from(k);
                let mut why = Vec::new();
                if self.time.last_tso_seq > seen(self.me) {
                    why.push(format!(
                        "me: last tso {} > seen {}",
                        self.time.last_tso_seq,
                        seen(self.me)
                    ));
                }
                for (k, (_, ks)) in &self.time.statuses {
                    if k != f && ks.last_tso_seq > seen(*k) {
                        why.push(format!(
                            "{k}: last tso {} > seen {}",
                            ks.last_tso_seq,
                            seen(*k)
                        ));
                    }
                }
                out.push_str(&format!(
                    "[{f} {:?} constrained {} next {next}: {}] ",
                    s.regulation,
                    s.constrained,
                    if why.is_empty() {
                        "valid".to_string()
                    } else {
                        why.join(", ")
                    }
                ));
            }
        }
        out
    }
    /// The advance waited for, with a next message request's `next` as of now (the
    /// earlier of the requested time and the first queued time stamp).
    pub(crate) fn advance_now(&self) -> Advance {
        match self.time.advance {
            Advance::Ner {
                time, available, ..
            } => Advance::Ner {
                time,
                next: self.next_event(time),
                available,
            },
            other => other,
        }
    }

    /// What this federate would tell its peers about its time now, and whether it
    /// waits on GALT: for checkers (the simulator's liveness oracle) and diagnostics.
    pub fn time_snapshot(&self) -> TimeSnapshot {
        let advance = self.advance_now();
        TimeSnapshot {
            federate: self.me,
            regulation: self.time.regulation,
            constrained: self.time.constrained == Constrained::On,
            logical_time: self.time.logical_time,
            lookahead: self.time.lookahead,
            promise: self.promise(),
            advance,
            waits_on_galt: !self.resigned && self.waits_on_galt(),
        }
    }

    /// True when this federate, waiting on GALT, would proceed (be granted, or have
    /// constrained mode enabled) if its GALT were `galt`.
    pub fn can_proceed_with_galt(&self, galt: LogicalTime) -> bool {
        match (self.time.constrained, self.time.advance) {
            (Constrained::Pending, _) => galt >= self.time.logical_time,
            (Constrained::On, Advance::Tar { time, available }) => {
                grant_allowed(time, available, galt)
            }
            (
                Constrained::On,
                Advance::Ner {
                    time, available, ..
                },
            ) => grant_allowed(self.next_event(time), available, galt),
            _ => false,
        }
    }

    /// True while a time advance is pending.
    pub fn is_advancing(&self) -> bool {
        self.time.advance != Advance::Idle
    }

    /// Greatest Available Logical Time: no time-stamped message below it can still
    /// arrive. `None` when no other federate regulates (the standard's "undefined").
    pub fn query_galt(&self) -> Option<LogicalTime> {
        let g = self.galt();
        (g != LogicalTime::INFINITY).then_some(g)
    }

    /// Least Incoming Time Stamp: the smaller of GALT and the earliest queued message.
    pub fn query_lits(&self) -> Option<LogicalTime> {
        let g = self.galt();
        let l = self.next_event(g);
        (l != LogicalTime::INFINITY).then_some(l)
    }
}

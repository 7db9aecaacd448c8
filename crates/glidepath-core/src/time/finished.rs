//! Peers a federate is done with, and the `seen` list of its time statuses.
//!
//! A federate's status says, for each peer, how far it has processed that peer's
//! envelopes (`seen`), because others trust its conditional bound only once it has
//! processed every time-stamped message in flight to it. Peers that resigned, and
//! whose last envelope it has processed, read as "everything" (`u64::MAX`). Listing
//! each of them made every status, and every federate's table of statuses, grow with
//! each federate that ever joined: over a long run with churn, memory and status size
//! grew without bound (the 30-minute soak of issue 21). Instead:
//!
//! - a resigned peer is forgotten once nothing can depend on it any more
//!   ([`LocalRti::forget_finished_peers`]), and remembered only as a handle in the
//!   `finished` ranges;
//! - a status lists the peers that are still relevant and summarises the rest with
//!   `finished_below`: every unlisted handle below it is finished.

use crate::local_rti::LocalRti;
use crate::message::TimeStatus;
use crate::types::FederateHandle;

impl LocalRti {
    /// The `seen` list and `finished_below` of a status published now.
    pub(crate) fn seen_now(&self) -> (Vec<(FederateHandle, u64)>, FederateHandle) {
        let done = |f: &FederateHandle| self.ghosts.contains(*f) || self.finished.contains(*f);
        let mut seen: Vec<(FederateHandle, u64)> = self
            .last_seq_from
            .iter()
            .filter(|(f, _)| **f != FederateHandle::EXECUTIVE && !done(f))
            .map(|(f, s)| {
                // A peer's resigned status is the last thing it sends: having processed
                // it means having processed everything from it (`u64::MAX`, as for
                // finished peers), which a federate that joined after it resigned
                // relies on.
                let resigned = self.time.statuses.get(f).is_some_and(|(_, st)| st.resigned);
                (*f, if resigned { u64::MAX } else { *s })
            })
            .collect();
        // Members not heard from yet are listed (as 0, what an unlisted handle above
        // `finished_below` reads) so that they do not hold `finished_below` down.
        for m in self.members.keys() {
            if *m != self.me && !self.last_seq_from.contains_key(m) && !done(m) {
                seen.push((*m, 0));
            }
        }
        // Sorted by handle, so peers look entries up by binary search.
        seen.sort_unstable_by_key(|(h, _)| *h);
        // The first handle that is neither listed, nor finished, nor ours.
        let mut below = 1u32;
        loop {
            let next = self.ghosts.run_end(below).max(self.finished.run_end(below));
            if next > below {
                below = next;
            } else if below == self.me.0
                || seen
                    .binary_search_by_key(&FederateHandle(below), |(h, _)| *h)
                    .is_ok()
            {
                below += 1;
            } else {
                break;
            }
        }
        // Finished peers above it (a gap below them) are listed one by one.
        let listed = seen.len();
        for set in [&self.ghosts, &self.finished] {
            for &(start, end) in set.ranges() {
                for h in start.max(below)..end {
                    seen.push((FederateHandle(h), u64::MAX));
                }
            }
        }
        if seen.len() > listed {
            seen.sort_unstable_by_key(|(h, _)| *h);
        }
        (seen, FederateHandle(below))
    }

    /// What our last published status said we had processed from `k`.
    pub(crate) fn published_seen_from(&self, k: FederateHandle) -> u64 {
        match self.time.published_seen.get(&k) {
            Some(s) => *s,
            None if k < self.time.published_finished_below => u64::MAX,
            None => 0,
        }
    }

    /// True when `status` (of peer `f`) says it has processed the last status of every
    /// federate that resigned before we joined: those may have had messages in flight
    /// to `f` that we never heard of.
    pub(crate) fn covers_ghosts(&self, f: FederateHandle, status: &TimeStatus) -> bool {
        let below = status.finished_below.0;
        for &(start, end) in self.ghosts.ranges() {
            // Listed entries inside the run must say "everything".
            let from = status.seen.partition_point(|(h, _)| h.0 < start);
            let inside = status.seen[from..].iter().take_while(|(h, _)| h.0 < end);
            let mut listed_above = 0u32;
            for (h, s) in inside {
                if *h != f && *s != u64::MAX {
                    return false;
                }
                if h.0 >= below {
                    listed_above += 1;
                }
            }
            // Unlisted handles at or above `finished_below` read as 0.
            let open_from = start.max(below);
            if open_from < end {
                let f_inside = u32::from(f.0 >= open_from && f.0 < end);
                if listed_above + f_inside < end - open_from {
                    return false;
                }
            }
        }
        true
    }

    /// Forgets resigned peers nothing depends on any more. A resigned peer whose last
    /// status we have processed is still needed while some member may not have
    /// processed its last time-stamped message (a waiting member's conditional bound
    /// is trusted only once it has); one that sent none is never needed again.
    pub(crate) fn forget_finished_peers(&mut self, just_resigned: Option<FederateHandle>) {
        if let Some(k) = just_resigned {
            self.time.resigned_pending.insert(k);
        }
        if self.time.resigned_pending.is_empty() {
            return;
        }
        let forgettable: Vec<FederateHandle> = self
            .time
            .resigned_pending
            .iter()
            .copied()
            .filter(|k| self.nothing_depends_on(*k))
            .collect();
        for k in forgettable {
            self.time.resigned_pending.remove(&k);
            self.time.statuses.remove(&k);
            self.last_seq_from.remove(&k);
            self.time.acked.remove(&k);
            self.time.awaited_regulators.remove(&k);
            self.finished.insert(k);
        }
    }

    fn nothing_depends_on(&self, k: FederateHandle) -> bool {
        let Some((_, last)) = self.time.statuses.get(&k) else {
            return true;
        };
        let tso = last.last_tso_seq;
        if tso == 0 {
            return true;
        }
        // Every other member (one that joined after `k` resigned has it as a ghost and
        // never receives its messages, but we cannot tell it apart here) must have
        // published a status that has processed `k`'s last time-stamped message.
        self.members.keys().all(|m| {
            *m == self.me
                || *m == k
                || self
                    .time
                    .statuses
                    .get(m)
                    .is_some_and(|(_, s)| s.resigned || s.seen_from(k) >= tso)
        }) && self
            .time
            .statuses
            .iter()
            .all(|(p, (_, s))| *p == k || s.resigned || s.seen_from(k) >= tso)
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::sync::Arc;

    use bytes::Bytes;

    use crate::callback::Callback;
    use crate::exec::ExecRequest;
    use crate::instant::InstantNetwork;
    use crate::local_rti::LocalRti;
    use crate::types::{FederateHandle, LogicalTime, ResignAction};
    use crate::Fom;

    fn drain(net: &mut InstantNetwork, feds: &mut [LocalRti]) {
        net.drain(feds, |_, _| {});
    }

    fn granted(fed: &mut LocalRti) -> bool {
        let mut granted = false;
        while let Some(cb) = fed.poll_callback() {
            granted |= matches!(cb, Callback::TimeAdvanceGrant { .. });
        }
        granted
    }

    /// Hundreds of time-managed federates join, send time-stamped interactions and
    /// resign while two stay: what the two keep of them, and the statuses they
    /// publish, stay as small as the federation is now, and time still advances.
    #[test]
    fn departed_federates_leave_nothing_behind() {
        let fom = Fom::load_files(&[PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../foms/benchmark.xml"
        ))])
        .expect("FOM loads");
        let class = fom
            .interaction_class_by_name("BenchInteractionTso")
            .expect("BenchInteractionTso");
        let mut net = InstantNetwork::new();
        net.host.handle(
            ExecRequest::Create {
                name: "churn".into(),
                fom: Arc::new(fom),
            },
            0,
        );
        // Slots 0 and 1 stay; slot 2 is each churner in turn.
        let mut feds: Vec<LocalRti> = (0..2)
            .map(|i| net.join(i, "churn", &format!("stays-{i}")).expect("join"))
            .collect();
        for i in 0..2 {
            feds[i]
                .enable_time_regulation(&mut net.link(i), 1.0)
                .unwrap();
            drain(&mut net, &mut feds);
            feds[i].enable_time_constrained().unwrap();
            feds[i].subscribe_interaction_class(class).unwrap();
            drain(&mut net, &mut feds);
        }
        let churners = 300u32;
        let mut t = 0.0;
        for k in 0..churners {
            let churner = net.join(2, "churn", &format!("churn-{k}")).expect("join");
            feds.push(churner);
            feds[2]
                .enable_time_regulation(&mut net.link(2), 1.0)
                .unwrap();
            drain(&mut net, &mut feds);
            // Every other churner sends a time-stamped interaction before it goes.
            if k % 2 == 0 {
                feds[2].publish_interaction_class(class).unwrap();
                let at = feds[2].time_snapshot().logical_time;
                let when = LogicalTime::new(at.as_f64() + 1.0).unwrap();
                feds[2]
                    .send_interaction(class, vec![], Bytes::new(), Some(when))
                    .unwrap();
            }
            let mut churner = feds.pop().unwrap();
            churner
                .resign(&mut net.link(2), ResignAction::DeleteObjects)
                .unwrap();
            net.flush(2, &mut churner);
            // The two that stay advance together.
            t += 2.0;
            for fed in feds.iter_mut() {
                fed.time_advance_request(t, false).unwrap();
            }
            drain(&mut net, &mut feds);
            for fed in feds.iter_mut() {
                assert!(granted(fed), "no grant to {t} after churner {k}");
            }
        }
        for (i, fed) in feds.iter().enumerate() {
            let other = FederateHandle(2 - i as u32);
            assert!(
                fed.time.statuses.len() <= 2 && fed.last_seq_from.len() <= 3,
                "federate {i} keeps {} statuses and {} peers",
                fed.time.statuses.len(),
                fed.last_seq_from.len()
            );
            assert!(fed.time.resigned_pending.len() <= 1);
            assert!(
                fed.finished.ranges().len() <= 2,
                "{:?}",
                fed.finished.ranges()
            );
            let status = fed.time.last_status.as_ref().expect("a status");
            assert!(status.seen.len() <= 2, "seen: {:?}", status.seen);
            assert!(
                status.finished_below.0 >= churners,
                "{:?}",
                status.finished_below
            );
            assert_eq!(status.seen_from(FederateHandle(100)), u64::MAX);
            assert!(status.seen_from(other) > 0);
        }
    }
}

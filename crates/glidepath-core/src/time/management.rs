//! Time management of one federate (the services of IEEE 1516.1 chapter 8): regulation
//! and constrained modes, advance requests, GALT from the held statuses, promises,
//! time statuses and grants. See ARCHITECTURE.md "Time management without LBTS rounds".

use std::cmp::Reverse;
use std::sync::Arc;

use crate::callback::Callback;
use crate::error::{RtiError, TimeError};
use crate::exec::{ExecReply, ExecRequest};
use crate::local_rti::*;
use crate::message::{Advance, Body, Regulation};
use crate::message::{TimeStatus, Topic};
use crate::time::state::*;
use crate::time::{galt_bound, RegulatorView};
use crate::types::{FederateHandle, LogicalTime, LogicalTimeInterval, TimeValue};
use crate::OrderType;

impl LocalRti {
    // ----- time management ----------------------------------------------------------

    /// Asks to become time-regulating with `lookahead`. Granted by a
    /// `TimeRegulationEnabled` callback once every member has acknowledged.
    pub fn enable_time_regulation(
        &mut self,
        link: &mut impl Link,
        lookahead: impl Into<TimeValue>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let lookahead = self.requested_lookahead(lookahead.into())?;
        match self.time.regulation {
            Regulation::On => return Err(TimeError::TimeRegulationAlreadyEnabled.into()),
            Regulation::Pending => return Err(TimeError::RequestForTimeRegulationPending.into()),
            Regulation::Off => {}
        }
        if self.time.advance != Advance::Idle {
            return Err(TimeError::InTimeAdvancingState.into());
        }
        let reply = expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::EnableRegulation {
                federation: self.federation,
                federate: self.me,
            },
        )?)?;
        let ExecReply::RegulationEnabling { ack_from } = reply else {
            return Err(unexpected(&reply));
        };
        self.time.lookahead = lookahead;
        self.time.regulation = Regulation::Pending;
        let status_seq = self.publish_status(StatusReason::Answer);
        self.time.pending_regulation = Some(PendingRegulation {
            status_seq,
            waiting: ack_from.into_iter().collect(),
            earliest: self.time.logical_time,
        });
        self.evaluate();
        Ok(())
    }

    /// Stops regulating; peers drop this federate from GALT when the status arrives.
    pub fn disable_time_regulation(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        self.live()?;
        if self.time.regulation != Regulation::On {
            return Err(TimeError::TimeRegulationIsNotEnabled.into());
        }
        self.time.regulation = Regulation::Off;
        self.time.promise_floor = LogicalTime::NEG_INFINITY;
        self.publish_status(StatusReason::Changed);
        expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::DisableRegulation {
                federation: self.federation,
                federate: self.me,
            },
        )?)?;
        self.mom_changed();
        Ok(())
    }

    /// Asks to become time-constrained; granted by `TimeConstrainedEnabled` once GALT
    /// has reached the federate's logical time.
    pub fn enable_time_constrained(&mut self) -> Result<(), RtiError> {
        self.live()?;
        match self.time.constrained {
            Constrained::On => return Err(TimeError::TimeConstrainedAlreadyEnabled.into()),
            Constrained::Pending => return Err(TimeError::RequestForTimeConstrainedPending.into()),
            Constrained::Off => {}
        }
        if self.time.advance != Advance::Idle {
            return Err(TimeError::InTimeAdvancingState.into());
        }
        self.time.constrained = Constrained::Pending;
        self.evaluate();
        Ok(())
    }

    /// Stops being constrained: queued time-stamped messages are delivered in receive order.
    pub fn disable_time_constrained(&mut self) -> Result<(), RtiError> {
        self.live()?;
        if self.time.constrained != Constrained::On {
            return Err(TimeError::TimeConstrainedIsNotEnabled.into());
        }
        self.time.constrained = Constrained::Off;
        while let Some(Reverse(q)) = self.time.queue.pop() {
            self.deliver(
                q.sender,
                q.seq,
                q.publish_time_ns,
                q.body,
                OrderType::Receive,
            );
        }
        if self.time.regulation != Regulation::Off {
            self.publish_status(StatusReason::Changed);
        }
        self.mom_changed();
        Ok(())
    }

    /// Changes lookahead. Promises already made stand, so a smaller lookahead takes
    /// effect only as logical time moves on.
    pub fn modify_lookahead(&mut self, lookahead: impl Into<TimeValue>) -> Result<(), RtiError> {
        self.live()?;
        let la = self.requested_lookahead(lookahead.into())?;
        if self.time.regulation != Regulation::On {
            return Err(TimeError::TimeRegulationIsNotEnabled.into());
        }
        self.time.lookahead = la;
        self.publish_status(StatusReason::Changed);
        self.evaluate();
        Ok(())
    }

    pub(crate) fn check_request(&self, time: TimeValue) -> Result<LogicalTime, RtiError> {
        self.live()?;
        self.refuse_during_save()?;
        let t = self.requested_time(time)?;
        if self.time.advance != Advance::Idle {
            return Err(TimeError::InTimeAdvancingState.into());
        }
        if self.time.regulation == Regulation::Pending {
            return Err(TimeError::RequestForTimeRegulationPending.into());
        }
        if self.time.constrained == Constrained::Pending {
            return Err(TimeError::RequestForTimeConstrainedPending.into());
        }
        if t < self.time.logical_time {
            return Err(TimeError::LogicalTimeAlreadyPassed {
                requested: t,
                current: self.time.logical_time,
            }
            .into());
        }
        Ok(t)
    }

    /// Time advance request (`available` = TARA): grant exactly at `time` once no
    /// earlier time-stamped message can arrive.
    pub fn time_advance_request(
        &mut self,
        time: impl Into<TimeValue>,
        available: bool,
    ) -> Result<(), RtiError> {
        let t = self.check_request(time.into())?;
        self.time.advance = Advance::Tar { time: t, available };
        if self.time.regulation == Regulation::On {
            self.publish_status(StatusReason::Changed);
        }
        self.evaluate();
        Ok(())
    }

    /// Next message request (`available` = NERA): grant at the earlier of `time` and the
    /// next time-stamped message.
    pub fn next_message_request(
        &mut self,
        time: impl Into<TimeValue>,
        available: bool,
    ) -> Result<(), RtiError> {
        let t = self.check_request(time.into())?;
        let next = self.next_event(t);
        self.time.advance = Advance::Ner {
            time: t,
            next,
            available,
        };
        if self.time.regulation == Regulation::On {
            self.publish_status(StatusReason::Changed);
        }
        self.evaluate();
        Ok(())
    }

    /// Flush queue request: deliver every queued time-stamped message now and grant at
    /// the earliest of `time`, GALT and the first delivered time stamp.
    pub fn flush_queue_request(&mut self, time: impl Into<TimeValue>) -> Result<(), RtiError> {
        let t = self.check_request(time.into())?;
        let mut grant = t;
        if self.time.constrained == Constrained::On {
            grant = grant.min(self.galt());
            if let Some(h) = self.queue_head() {
                grant = grant.min(h);
            }
        }
        while let Some(Reverse(q)) = self.time.queue.pop() {
            self.deliver_tso(q);
        }
        let grant = grant.max(self.time.logical_time);
        // GALT may equal the grant, so messages at exactly the grant time can still
        // arrive: this grant behaves like an "available" one.
        self.grant(grant, true);
        Ok(())
    }

    /// The earlier of `time` and the first queued time stamp: when a next message
    /// request (or a query) for `time` would be answered.
    pub(crate) fn next_event(&self, time: LogicalTime) -> LogicalTime {
        self.queue_head().map_or(time, |h| h.min(time))
    }

    pub(crate) fn queue_head(&self) -> Option<LogicalTime> {
        self.time.queue.peek().map(|Reverse(q)| q.time)
    }

    /// Computes GALT from the held statuses (see [`crate::galt_bound`]).
    pub(crate) fn galt(&self) -> LogicalTime {
        if !self.time.awaited_regulators.is_empty() {
            // A regulator we have not heard from yet could send anything above its
            // logical time: hold everything.
            return LogicalTime::NEG_INFINITY;
        }
        let mut views = Vec::with_capacity(self.time.statuses.len() + 1);
        for (f, (_, s)) in &self.time.statuses {
            if s.regulation == Regulation::Off || s.resigned {
                continue;
            }
            let conditional = match s.advance {
                Advance::Ner { next, .. }
                    if s.constrained
                        && s.regulation == Regulation::On
                        && self.no_message_in_flight_to(*f, s) =>
                {
                    Some(next.plus(s.lookahead))
                }
                _ => None,
            };
            views.push(RegulatorView {
                federate: *f,
                promise: s.promise,
                lookahead: s.lookahead,
                conditional,
            });
        }
        if self.time.regulation != Regulation::Off {
            let conditional = match self.time.advance {
                Advance::Ner { time, .. }
                    if self.time.constrained == Constrained::On
                        && self.time.regulation == Regulation::On =>
                {
                    Some(self.next_event(time).plus(self.time.lookahead))
                }
                _ => None,
            };
            views.push(RegulatorView {
                federate: self.me,
                promise: self.current_promise_without_galt(),
                lookahead: self.time.lookahead,
                conditional,
            });
        }
        galt_bound(self.me, &views)
    }

    /// True when `status` of federate `f` reports having processed the latest
    /// time-stamped message of every regulating peer (as far as this federate knows).
    pub(crate) fn no_message_in_flight_to(&self, f: FederateHandle, status: &TimeStatus) -> bool {
        if self.time.last_tso_seq > status.seen_from(self.me) {
            return false;
        }
        // Federates that resigned before we joined (ghosts) may still have messages in
        // flight to `f`, and we never saw their statuses: trust `f` only once it has
        // processed their last status (simulator seed 300082656).
        if !self.covers_ghosts(f, status) {
            return false;
        }
        // Both `statuses` and a well-formed `seen` are sorted by handle: walk them
        // together (this runs for every waiting peer on every evaluation). An unsorted
        // `seen` from a foreign peer only makes entries read as 0: conservative.
        let mut seen = status.seen.iter().peekable();
        for (k, (_, s)) in &self.time.statuses {
            while seen.next_if(|(h, _)| h < k).is_some() {}
            let unlisted = if *k < status.finished_below {
                u64::MAX
            } else {
                0
            };
            let seen_k = seen
                .peek()
                .filter(|(h, _)| h == k)
                .map_or(unlisted, |(_, q)| *q);
            // Federates that stopped regulating or resigned count too: what they sent
            // before may still be on its way.
            if *k != f && s.last_tso_seq > seen_k {
                return false;
            }
        }
        true
    }

    /// Promise ignoring GALT: used for our own node in the GALT computation.
    pub(crate) fn current_promise_without_galt(&self) -> LogicalTime {
        let la = self.time.lookahead;
        let p = match (self.time.regulation, self.time.advance) {
            (Regulation::Off, _) => LogicalTime::INFINITY,
            (Regulation::Pending, _) => {
                let earliest = self
                    .time
                    .pending_regulation
                    .as_ref()
                    .map_or(self.time.logical_time, |p| p.earliest);
                self.time.logical_time.max(earliest).plus(la)
            }
            (Regulation::On, Advance::Idle) => self.time.logical_time.plus(la),
            (Regulation::On, Advance::Tar { time, .. }) => time.plus(la),
            (Regulation::On, Advance::Ner { time, .. }) => {
                if self.time.constrained == Constrained::On {
                    self.time.logical_time.plus(la)
                } else {
                    time.plus(la)
                }
            }
        };
        p.max(self.time.promise_floor)
    }

    /// The unconditional promise to publish now.
    pub(crate) fn promise(&self) -> LogicalTime {
        self.promise_given(None)
    }

    /// [`Self::promise`] with GALT already computed by the caller (it is the costly part).
    pub(crate) fn promise_given(&self, galt: Option<LogicalTime>) -> LogicalTime {
        if self.time.regulation == Regulation::Off {
            return LogicalTime::INFINITY;
        }
        let mut p = self.current_promise_without_galt();
        if let (Regulation::On, Advance::Ner { time, .. }) =
            (self.time.regulation, self.time.advance)
        {
            if self.time.constrained == Constrained::On {
                let next = self
                    .next_event(time)
                    .min(galt.unwrap_or_else(|| self.galt()));
                p = p.max(next.plus(self.time.lookahead));
            }
        }
        p
    }

    /// Publishes this federate's time status for `reason`; returns the seq of the status
    /// that stands (the previous one when nothing new was worth sending).
    pub(crate) fn publish_status(&mut self, reason: StatusReason) -> u64 {
        self.publish_status_given(reason, None)
    }

    /// [`Self::publish_status`] with GALT already computed by the caller.
    pub(crate) fn publish_status_given(
        &mut self,
        reason: StatusReason,
        galt: Option<LogicalTime>,
    ) -> u64 {
        let promise = self.promise_given(galt);
        let advance = self.advance_now();
        self.time.advance = advance;
        let (seen, finished_below) = self.seen_now();
        let status = TimeStatus {
            regulation: self.time.regulation,
            constrained: self.time.constrained == Constrained::On,
            logical_time: self.time.logical_time,
            last_grant_available: self.time.last_grant_available,
            lookahead: self.time.lookahead,
            delivered_up_to: self.time.delivered_up_to,
            promise,
            advance,
            last_tso_seq: self.time.last_tso_seq,
            seen: seen.into(),
            finished_below,
            resigned: reason == StatusReason::Resign,
        };
        if reason == StatusReason::Changed {
            if let Some(last) = &self.time.last_status {
                if !self.tells_something_new(last, &status) {
                    return self.time.last_status_seq;
                }
            }
        }
        if promise != LogicalTime::INFINITY {
            self.time.promise_floor = self.time.promise_floor.max(promise);
        }
        self.time.published_seen = status.seen.iter().copied().collect();
        self.time.published_finished_below = status.finished_below;
        self.time.announced_tso_seq = self.time.last_tso_seq;
        let status = Arc::new(status);
        self.time.last_status = Some(status.clone());
        let seq = self.send(Topic::Time, Body::TimeStatus(status));
        self.time.last_status_seq = seq;
        seq
    }

    /// True when `new` tells peers something `last` did not: any field but `seen`
    /// differs, or `new.seen` covers time-stamped messages a peer has announced that
    /// `last.seen` did not (which is what lets peers trust our conditional bound). A
    /// `seen` that moved only over messages nobody depends on is not worth a message:
    /// re-sending it is how statuses would circle forever.
    pub(crate) fn tells_something_new(&self, last: &TimeStatus, new: &TimeStatus) -> bool {
        let same_but_seen = TimeStatus {
            seen: last.seen.clone(),
            finished_below: last.finished_below,
            ..new.clone()
        };
        if same_but_seen != *last {
            return true;
        }
        // Everything from a resigned peer, newly processed: newly finished, or newly
        // listed as everything.
        let newly_finished = (last.finished_below.0..new.finished_below.0)
            .map(FederateHandle)
            .any(|k| {
                k != self.me
                    && new.seen_from(k) == u64::MAX
                    && self.published_seen_from(k) != u64::MAX
            });
        newly_finished
            || new.seen.iter().any(|(k, now)| {
                let before = self.published_seen_from(*k);
                if *now == u64::MAX && before != u64::MAX {
                    return true;
                }
                let announced = self.time.statuses.get(k).map_or(0, |(_, s)| s.last_tso_seq);
                before < announced && announced <= *now
            })
    }

    /// True while this federate's progress depends on GALT: constrained, and waiting
    /// for a grant or for constrained mode or regulation to be enabled.
    pub(crate) fn waits_on_galt(&self) -> bool {
        match self.time.constrained {
            Constrained::Off => false,
            Constrained::Pending => true,
            Constrained::On => {
                self.time.advance != Advance::Idle || self.time.pending_regulation.is_some()
            }
        }
    }

    /// Announces time-stamped messages sent since our last status when a waiting
    /// peer's conditional bound is distrusted only because of them.
    ///
    /// We trust a peer's conditional bound only once its status has seen our latest
    /// time-stamped message. The peer republishes when a status of ours announces
    /// messages it had not seen; but messages sent after our last status (while we
    /// wait) are announced by nobody, and a peer not subscribed to them never sees a
    /// newer seq from us. Both would wait for the other forever (simulator seed
    /// 5007226): so while we wait on GALT and such a peer exists, we announce.
    pub(crate) fn announce_if_owed(&mut self) {
        let (last, announced) = (self.time.last_tso_seq, self.time.announced_tso_seq);
        if last <= announced || self.resigned || !self.waits_on_galt() {
            return;
        }
        let me = self.me;
        let owed = self.time.statuses.values().any(|(_, s)| {
            let seen = s.seen_from(me);
            matches!(s.advance, Advance::Ner { .. })
                && s.constrained
                && s.regulation == Regulation::On
                && !s.resigned
                && seen < last
                && seen >= announced
        });
        if owed {
            self.publish_status(StatusReason::Changed);
        }
    }

    pub(crate) fn grant(&mut self, time: LogicalTime, available: bool) {
        self.time.logical_time = time;
        self.time.last_grant_available = available;
        self.time.advance = Advance::Idle;
        self.callbacks
            .push_back(Callback::TimeAdvanceGrant { time });
        self.maybe_initiate_save();
        // After a time advance request the promise made while waiting (t + lookahead)
        // is already what the grant implies: peers learn nothing new, so nothing is
        // sent. Grants that raise the promise (next message, flush) are published.
        if self.time.regulation == Regulation::On && self.promise() > self.time.promise_floor {
            self.publish_status(StatusReason::Changed);
        }
    }

    /// Moves time management forward as far as the held statuses allow: enables
    /// pending modes, delivers what is safe and grants what can be granted; then, if
    /// still waiting, announces what peers must know for us to move later.
    pub(crate) fn evaluate(&mut self) {
        if self.resigned {
            return;
        }
        self.evaluate_grants();
        self.announce_if_owed();
    }

    pub(crate) fn evaluate_grants(&mut self) {
        self.try_complete_regulation();
        if !self.waits_on_galt() {
            // Nothing here depends on GALT (its computation is the costly part of
            // handling an envelope): grant an unconstrained request at once.
            if let Advance::Tar { time, available }
            | Advance::Ner {
                time, available, ..
            } = self.time.advance
            {
                if self.time.constrained == Constrained::Off {
                    self.grant(time, available);
                }
            }
            return;
        }
        let galt = self.galt();
        if self.time.constrained == Constrained::Pending && galt >= self.time.logical_time {
            self.time.constrained = Constrained::On;
            // Enabled once GALT reached our time: a message at exactly that time may
            // still come, as after an "available" grant.
            self.time.last_grant_available = true;
            self.callbacks.push_back(Callback::TimeConstrainedEnabled {
                time: self.time.logical_time,
            });
            if self.time.regulation != Regulation::Off {
                self.publish_status(StatusReason::Changed);
            }
            self.mom_changed();
        }
        let constrained = self.time.constrained == Constrained::On;
        match self.time.advance {
            Advance::Idle => {}
            Advance::Tar { time, available } => {
                if !constrained {
                    self.grant(time, available);
                    return;
                }
                // Deliver what is already safe, then grant when the request is.
                while let Some(h) = self.queue_head() {
                    if h <= time && h < galt {
                        let Reverse(q) = self.time.queue.pop().expect("head");
                        self.deliver_tso(q);
                    } else {
                        break;
                    }
                }
                if grant_allowed(time, available, galt) {
                    while self.queue_head().is_some_and(|h| h <= time) {
                        let Reverse(q) = self.time.queue.pop().expect("head");
                        self.deliver_tso(q);
                    }
                    self.grant(time, available);
                }
            }
            Advance::Ner {
                time, available, ..
            } => {
                if !constrained {
                    self.grant(time, available);
                    return;
                }
                let next = self.next_event(time);
                if grant_allowed(next, available, galt) {
                    while self.queue_head().is_some_and(|h| h <= next) {
                        let Reverse(q) = self.time.queue.pop().expect("head");
                        self.deliver_tso(q);
                    }
                    self.grant(next, available);
                } else if self.time.regulation == Regulation::On
                    && self.promise_given(Some(galt)) > self.time.promise_floor
                {
                    // GALT moved: a higher unconditional promise lets peers move too.
                    self.publish_status_given(StatusReason::Changed, Some(galt));
                }
            }
        }
    }

    pub(crate) fn try_complete_regulation(&mut self) {
        let Some(p) = &mut self.time.pending_regulation else {
            return;
        };
        let status_seq = p.status_seq;
        let statuses = &self.time.statuses;
        let before = p.earliest;
        let mut earliest = p.earliest;
        let me = self.me;
        p.waiting.retain(|f| {
            let Some((_, s)) = statuses.get(f) else {
                return true;
            };
            let seen = s.seen_from(me);
            if s.resigned {
                return false;
            }
            if seen < status_seq {
                return true;
            }
            if s.constrained {
                earliest = earliest.max(s.logical_time).max(s.delivered_up_to);
            }
            false
        });
        let waiting = !p.waiting.is_empty();
        if !waiting {
            // With zero lookahead a message at `earliest` would land in the past of a
            // peer whose last grant was not an "available" one, or behind messages it
            // already delivered there: start just after it.
            let lt = self.time.logical_time.max(earliest);
            if self.time.lookahead == LogicalTimeInterval::ZERO
                && statuses.values().any(|(_, s)| {
                    s.constrained
                        && ((!s.last_grant_available && s.logical_time == lt)
                            || s.delivered_up_to == lt)
                })
            {
                earliest = lt.next_after();
            }
        }
        p.earliest = earliest;
        if earliest > before {
            // We will start no earlier than this: promise it now, so regulators behind
            // us are not held back by our old time.
            self.publish_status(StatusReason::Changed);
        }
        if waiting {
            return;
        }
        let lt = self.time.logical_time.max(earliest);
        if self.time.constrained == Constrained::On && lt > self.time.logical_time {
            // Jumping forward is a time advance for a constrained federate: wait until
            // nothing earlier can arrive, and deliver what is queued before `lt`.
            let galt = self.galt();
            while self.queue_head().is_some_and(|h| h < lt && h < galt) {
                let Reverse(q) = self.time.queue.pop().expect("head");
                self.deliver_tso(q);
            }
            if galt < lt {
                return;
            }
            self.time.last_grant_available = true;
        }
        self.time.pending_regulation = None;
        self.time.logical_time = lt;
        self.time.regulation = Regulation::On;
        self.publish_status(StatusReason::Changed);
        self.callbacks
            .push_back(Callback::TimeRegulationEnabled { time: lt });
        self.mom_changed();
    }

    /// Returns true when our own status should be republished.
    pub(crate) fn handle_status(
        &mut self,
        sender: FederateHandle,
        seq: u64,
        status: TimeStatus,
    ) -> bool {
        let mut republish = false;
        if self.finished.contains(sender) {
            // Forgotten already (its last status processed): a late copy changes nothing.
            return false;
        }
        // A peer becoming regulating waits for everybody's status: answer once.
        // Once per enabling episode: two pending federates would otherwise answer each
        // other's answers forever.
        if status.regulation != Regulation::Pending {
            self.time.acked.remove(&sender);
        } else if self.time.acked.insert(sender) {
            self.time.statuses.insert(sender, (seq, status.clone()));
            self.time.awaited_regulators.remove(&sender);
            self.publish_status(StatusReason::Answer);
            return false;
        }
        // A waiting federate's published `seen` must cover every regulator's latest
        // time-stamped message for others to trust its conditional bound.
        if let Advance::Ner { .. } = self.time.advance {
            let published = self.published_seen_from(sender);
            // A resignation is news too: peers that joined after it count on us to
            // say we have everything the resigned federate sent.
            if status.last_tso_seq > published || status.resigned {
                republish = true;
            }
        }
        self.time.awaited_regulators.remove(&sender);
        if status.resigned {
            if let Some(p) = &mut self.time.pending_regulation {
                p.waiting.remove(&sender);
            }
        }
        // Resigned federates stay in the table (excluded from GALT) while their last
        // time-stamped messages may still be in flight to a waiting peer.
        let resigned = status.resigned.then_some(sender);
        self.time.statuses.insert(sender, (seq, status));
        self.forget_finished_peers(resigned);
        republish
    }
}

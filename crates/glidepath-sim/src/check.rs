//! The invariants checked after every step (callbacks, time-stamp order, barriers)
//! and at every quiescent point (liveness).

use glidepath_core::{
    galt_bound, Advance, Callback, FederateHandle, LogicalTime, OrderType, Regulation,
    RegulatorView,
};

use crate::trace::TraceEvent;
use crate::{t, Kind, Phase, Sim, SimFailure, T_END};

impl Sim {
    /// Drains the federate's callbacks, checking each, and reacts to them.
    pub(crate) fn after_step(&mut self, idx: usize) -> Result<(), SimFailure> {
        loop {
            let Some(lrc) = self.nodes[idx].lrc.as_mut() else {
                return Ok(());
            };
            let stats = lrc.stats().clone();
            if stats.broken_promises > 0 || stats.out_of_order > 0 {
                return Err(self.fail(format!("federate {idx}: {:?}", stats)));
            }
            let Some(cb) = lrc.poll_callback() else {
                return Ok(());
            };
            self.check_callback(idx, cb)?;
        }
    }

    pub(crate) fn check_callback(&mut self, idx: usize, cb: Callback) -> Result<(), SimFailure> {
        self.trace.push(
            self.now,
            TraceEvent::Callback {
                node: idx,
                callback: cb.clone(),
            },
        );
        if self.ownership_callback(idx, &cb)? {
            return self.check_barriers(idx);
        }
        match cb {
            Callback::AnnounceSynchronizationPoint { label, .. } => {
                if label == "ready" {
                    self.setup(idx)?;
                } else {
                    self.nodes[idx].done_announced = true;
                }
            }
            Callback::FederationSynchronized { label, failed } => {
                if !failed.is_empty() {
                    return Err(self.fail(format!("{label} synchronized with failures {failed:?}")));
                }
                if label == "ready" {
                    self.nodes[idx].phase = Phase::Running;
                    self.wake(idx, 1_000, 50_000);
                } else {
                    self.resign_node(idx)?;
                    self.log(format!("{idx} resigned"));
                    return Ok(());
                }
            }
            Callback::SynchronizationPointRegistrationFailed { label, reason } => {
                return Err(self.fail(format!("sync point {label} failed: {reason}")));
            }
            Callback::TimeRegulationEnabled { time } => {
                self.nodes[idx].regulation_on = true;
                self.nodes[idx].regulation_pending = false;
                self.check_not_backwards(idx, time)?;
                let n = &mut self.nodes[idx];
                if time > n.lt {
                    if n.last_tso > time {
                        let last = n.last_tso;
                        return Err(self.fail(format!("federate {idx}: regulation enabled at {time} after delivering a message at {last}")));
                    }
                    n.lt = time;
                    n.floor = time;
                    n.floor_strict = false;
                }
                n.last_key = None;
            }
            Callback::TimeConstrainedEnabled { time } => {
                self.nodes[idx].constrained_on = true;
                self.nodes[idx].constrained_pending = false;
                self.check_not_backwards(idx, time)?;
                let n = &mut self.nodes[idx];
                n.floor = n.lt;
                n.floor_strict = false;
            }
            Callback::TimeAdvanceGrant { time } => {
                let Some((kind, req, available)) = self.nodes[idx].pending.take() else {
                    return Err(
                        self.fail(format!("federate {idx}: grant {time} without a request"))
                    );
                };
                self.check_not_backwards(idx, time)?;
                let ok = match kind {
                    Kind::Tar => time == req,
                    Kind::Ner | Kind::Fqr => time <= req,
                };
                if !ok {
                    return Err(
                        self.fail(format!("federate {idx}: {kind:?}({req}) granted at {time}"))
                    );
                }
                let n = &mut self.nodes[idx];
                n.lt = time;
                n.floor = time;
                n.floor_strict = !(available || kind == Kind::Fqr);
                n.last_key = None;
                if kind == Kind::Fqr {
                    n.last_tso = time;
                }
                n.advances_left = n.advances_left.saturating_sub(1);
                self.out.grants += 1;
                if n.phase == Phase::Running && n.wake_at.is_none() {
                    self.wake(idx, 1_000, 50_000);
                }
                let n = &mut self.nodes[idx];
                if n.phase == Phase::Finishing && time >= t(T_END) {
                    n.phase = Phase::Finished;
                }
            }
            Callback::ReflectAttributeValues {
                instance,
                class,
                values,
                info,
                ..
            } => {
                self.count(info.received_order);
                let n = &self.nodes[idx];
                // Its own registered instance reflects once others own attributes of it.
                match n.discovered.get(&instance).or(n.registered.get(&instance)) {
                    Some(c) if *c == class => {}
                    other => {
                        return Err(self.fail(format!(
                        "federate {idx}: reflect of {instance} as {class}, discovered as {other:?}"
                    )))
                    }
                }
                let sub = n.subscribed.get(&class);
                if let Some((a, _)) = values
                    .iter()
                    .find(|(a, _)| !sub.is_some_and(|s| s.contains(a)))
                {
                    return Err(self.fail(format!(
                        "federate {idx}: reflected unsubscribed attribute {a} of {class}"
                    )));
                }
                if !self.net.owner_checked.contains(&(info.producer, info.seq)) {
                    return Err(self.fail(format!(
                        "federate {idx}: reflected an update of {instance} (seq {} from {}) its sender did not own when it sent it",
                        info.seq, info.producer
                    )));
                }
                self.check_tso(idx, info.received_order, info.time, info.producer, info.seq)?;
            }
            Callback::ReceiveInteraction {
                class,
                info,
                values,
                ..
            } => {
                self.count(info.received_order);
                if !self.nodes[idx].sub_interactions.contains(&class) {
                    return Err(self.fail(format!(
                        "federate {idx}: received unsubscribed interaction {class}"
                    )));
                }
                let params = &self.fom.interaction_classes[class.index()].all_parameters;
                if values.iter().any(|(p, _)| !params.contains(p)) {
                    return Err(self.fail(format!(
                        "federate {idx}: interaction {class} carries a parameter of a subclass"
                    )));
                }
                self.check_tso(idx, info.received_order, info.time, info.producer, info.seq)?;
            }
            Callback::RemoveObjectInstance { instance, info, .. } => {
                self.count(info.received_order);
                let registered = self.nodes[idx].registered.contains_key(&instance);
                if self.nodes[idx].discovered.remove(&instance).is_none() && !registered {
                    return Err(self.fail(format!(
                        "federate {idx}: removal of undiscovered {instance}"
                    )));
                }
                self.instance_gone(idx, instance);
                self.check_tso(idx, info.received_order, info.time, info.producer, info.seq)?;
            }
            Callback::DiscoverObjectInstance {
                instance, class, ..
            } => {
                if !self.nodes[idx].subscribed.contains_key(&class) {
                    return Err(self.fail(format!(
                        "federate {idx}: discovered {instance} as unsubscribed {class}"
                    )));
                }
                if self.nodes[idx].discovered.insert(instance, class).is_some() {
                    return Err(self.fail(format!("federate {idx}: {instance} discovered twice")));
                }
            }
            Callback::ProvideAttributeValueUpdate { instance, .. }
                if !self.nodes[idx].owned.iter().any(|(i, _)| *i == instance) =>
            {
                return Err(self.fail(format!(
                    "federate {idx}: asked to provide {instance} it does not own"
                )));
            }
            _ => {}
        }
        self.check_barriers(idx)
    }

    /// Barriers: ready once both time modes are on, done once the final grant came.
    pub(crate) fn check_barriers(&mut self, idx: usize) -> Result<(), SimFailure> {
        let n = &self.nodes[idx];
        if n.phase == Phase::Setup
            && !n.ready_achieved
            && !n.regulation_pending
            && !n.constrained_pending
            && n.setup_performed
        {
            let late = n.late_join;
            self.nodes[idx].ready_achieved = true;
            if late {
                self.nodes[idx].phase = Phase::Running;
                self.wake(idx, 1_000, 50_000);
            } else {
                self.link_call(idx, |l, k| {
                    l.synchronization_point_achieved(k, "ready", true)
                })?;
            }
        }
        let n = &self.nodes[idx];
        if n.phase == Phase::Finished && n.late_join {
            self.resign_node(idx)?;
            self.log(format!("{idx} (late joiner) resigned"));
            return Ok(());
        }
        if n.phase == Phase::Finished && n.done_announced && !n.done_achieved {
            self.nodes[idx].done_achieved = true;
            self.link_call(idx, |l, k| {
                l.synchronization_point_achieved(k, "done", true)
            })?;
        }
        Ok(())
    }

    pub(crate) fn count(&mut self, order: OrderType) {
        match order {
            OrderType::TimeStamp => self.out.tso_delivered += 1,
            OrderType::Receive => self.out.ro_delivered += 1,
        }
    }

    pub(crate) fn check_not_backwards(
        &self,
        idx: usize,
        time: LogicalTime,
    ) -> Result<(), SimFailure> {
        if time < self.nodes[idx].lt {
            return Err(self.fail(format!(
                "federate {idx}: time moved backwards from {} to {time}",
                self.nodes[idx].lt
            )));
        }
        Ok(())
    }

    /// The time-stamp-order guarantees for one delivered message.
    pub(crate) fn check_tso(
        &mut self,
        idx: usize,
        order: OrderType,
        time: Option<LogicalTime>,
        producer: FederateHandle,
        seq: u64,
    ) -> Result<(), SimFailure> {
        if order != OrderType::TimeStamp {
            return Ok(());
        }
        let n = &self.nodes[idx];
        let Some(ts) = time else {
            return Err(self.fail(format!("federate {idx}: TSO delivery without a time stamp")));
        };
        if !n.constrained_on {
            return Err(self.fail(format!(
                "federate {idx}: TSO delivery while not constrained"
            )));
        }
        // Enabling regulation late may move a constrained federate's time forward: the
        // messages before the new time are delivered first, like an advance.
        let enabling = n.regulation_pending;
        let Some((kind, req, _)) =
            n.pending
                .or(enabling.then_some((Kind::Tar, LogicalTime::INFINITY, true)))
        else {
            return Err(self.fail(format!(
                "federate {idx}: TSO delivery at {ts} outside a time advance"
            )));
        };
        if ts < n.floor || (n.floor_strict && ts == n.floor) {
            return Err(self.fail(format!(
                "federate {idx}: TSO message at {ts} is in the past (logical time {}, strict {})",
                n.floor, n.floor_strict
            )));
        }
        if kind != Kind::Fqr && ts > req {
            return Err(self.fail(format!(
                "federate {idx}: TSO message at {ts} delivered during {kind:?}({req})"
            )));
        }
        let key = (ts, producer, seq);
        if kind != Kind::Fqr {
            if n.last_key.is_some_and(|k| k >= key) {
                return Err(self.fail(format!(
                    "federate {idx}: TSO order broken: {key:?} after {:?}",
                    n.last_key
                )));
            }
            if ts < n.last_tso {
                return Err(self.fail(format!(
                    "federate {idx}: TSO time went back from {} to {ts}",
                    n.last_tso
                )));
            }
        }
        let n = &mut self.nodes[idx];
        n.last_key = Some(key);
        n.last_tso = n.last_tso.max(ts);
        Ok(())
    }

    /// Liveness at a quiescent point: nothing is in flight, so every federate holds
    /// every peer's latest status and has processed every message. A federate that
    /// perfect knowledge of the federation (every waiting federate's conditional bound
    /// trusted) would let proceed must then already have proceeded; and when every
    /// member waits on GALT, perfect knowledge must let at least one proceed.
    pub(crate) fn check_liveness(&self) -> Result<(), SimFailure> {
        let snapshots: Vec<_> = self
            .nodes
            .iter()
            .filter(|n| n.phase != Phase::Resigned)
            .filter_map(|n| n.lrc.as_ref().map(|l| (n.idx, l, l.time_snapshot())))
            .collect();
        let views: Vec<RegulatorView> = snapshots
            .iter()
            .filter(|(_, _, s)| s.regulation != Regulation::Off)
            .map(|(_, _, s)| RegulatorView {
                federate: s.federate,
                promise: s.promise,
                lookahead: s.lookahead,
                conditional: match s.advance {
                    Advance::Ner { next, .. }
                        if s.constrained && s.regulation == Regulation::On =>
                    {
                        Some(next.plus(s.lookahead))
                    }
                    _ => None,
                },
            })
            .collect();
        let mut all_wait = !snapshots.is_empty();
        let mut blocked = String::new();
        for (idx, lrc, s) in &snapshots {
            if !s.waits_on_galt {
                all_wait = false;
                continue;
            }
            let galt = galt_bound(s.federate, &views);
            if lrc.can_proceed_with_galt(galt) {
                return Err(self.fail(format!(
                    "liveness: nothing in flight, federate {idx} ({}) could proceed with the GALT \
                     perfect knowledge gives ({galt}) but its own is {:?}: {}\n      {}\n{}",
                    s.federate,
                    lrc.query_galt(),
                    lrc.describe_time_state(),
                    lrc.describe_conditionals(),
                    self.describe()
                )));
            }
            blocked.push_str(&format!(
                "  federate {idx} waits ({:?}) with GALT {galt}, held by {}\n",
                s.advance,
                holder(s.federate, &views, galt)
            ));
        }
        if all_wait {
            return Err(self.fail(format!(
                "liveness: every member waits on GALT and none can proceed, even with \
                 perfect knowledge:\n{blocked}{}",
                self.describe()
            )));
        }
        Ok(())
    }
}

/// The regulators whose bound is the GALT `galt` of `me`: the ones holding it back.
fn holder(me: FederateHandle, views: &[RegulatorView], galt: LogicalTime) -> String {
    let held: Vec<String> = views
        .iter()
        .filter(|v| v.federate != me && (v.promise == galt || v.conditional == Some(galt)))
        .map(|v| {
            format!(
                "{} (promise {}, conditional {:?})",
                v.federate, v.promise, v.conditional
            )
        })
        .collect();
    if held.is_empty() {
        "a bound through the lookahead closure".to_string()
    } else {
        held.join(", ")
    }
}

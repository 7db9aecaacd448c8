//! What simulated federates do: join, declare, enable time modes, and a random
//! schedule of registrations, updates, interactions, deletions and time advances.

use bytes::Bytes;
use glidepath_core::{
    AttributeHandle, InteractionClassHandle, LocalRti, LogicalTime, ObjectClassHandle, ObjectError,
    RtiError,
};
use rand::Rng;

use crate::{t, Kind, Phase, Profile, Sim, SimFailure, FEDERATION, T_END};

impl Sim {
    pub(crate) fn act(&mut self, idx: usize) -> Result<(), SimFailure> {
        match self.nodes[idx].phase {
            Phase::Joining => {
                let (_, mut link) = self.link_of(idx);
                let mut joined =
                    LocalRti::join(&mut link, FEDERATION, Some(&format!("fed{idx}")), "sim");
                if let Ok(lrc) = joined.as_mut() {
                    link.flush(lrc);
                }
                let lrc = joined.map_err(|e| self.fail(format!("join failed: {e}")))?;
                self.nodes[idx].lrc = Some(lrc);
                self.nodes[idx].phase = Phase::Setup;
                let galt = lrc_galt(self.nodes[idx].lrc.as_ref());
                let handle = self.nodes[idx].lrc.as_ref().map(|l| l.handle());
                self.log(format!("{idx} joined as {handle:?}, GALT {galt:?}"));
                if self.nodes[idx].late_join {
                    // No barrier for a latecomer: set up now, run once its modes are on.
                    self.setup(idx)?;
                    self.after_step(idx)?;
                    return self.check_barriers(idx);
                }
                self.joined += 1;
                if self.joined == self.nodes.iter().filter(|n| !n.late_join).count() {
                    // Everyone is in: the first federate opens the two barriers.
                    self.link_call(0, |l, k| {
                        l.register_federation_synchronization_point(
                            k,
                            "ready",
                            Bytes::new(),
                            None,
                        )?;
                        l.register_federation_synchronization_point(k, "done", Bytes::new(), None)
                    })?;
                }
                self.after_step(idx)
            }
            Phase::Running => self.run_action(idx),
            Phase::Setup | Phase::Finishing | Phase::Finished => self.after_step(idx),
            Phase::Resigned => Ok(()),
        }
    }

    pub(crate) fn setup(&mut self, idx: usize) -> Result<(), SimFailure> {
        let fom = self.fom.clone();
        // Declarations: publish and subscribe random classes and attribute subsets.
        for c in 1..fom.object_classes.len() as u32 {
            let class = ObjectClassHandle(c);
            let all = fom.object_classes[c as usize].all_attributes.clone();
            if self.rng.gen_bool(0.5) {
                let attrs: Vec<AttributeHandle> = all
                    .iter()
                    .copied()
                    .filter(|_| self.rng.gen_bool(0.7))
                    .collect();
                if !attrs.is_empty() {
                    self.link_call(idx, |l, _| l.publish_object_class_attributes(class, &attrs))?;
                    self.nodes[idx].published.insert(class, attrs);
                }
            }
            if self.rng.gen_bool(0.5) {
                let attrs: Vec<AttributeHandle> = all
                    .iter()
                    .copied()
                    .filter(|_| self.rng.gen_bool(0.6))
                    .collect();
                if !attrs.is_empty() {
                    self.link_call(idx, |l, k| {
                        l.subscribe_object_class_attributes(k, class, &attrs)
                    })?;
                    self.nodes[idx]
                        .subscribed
                        .insert(class, attrs.into_iter().collect());
                }
            }
        }
        for c in 1..fom.interaction_classes.len() as u32 {
            let class = InteractionClassHandle(c);
            if self.rng.gen_bool(0.5) {
                self.link_call(idx, |l, _| l.publish_interaction_class(class))?;
                self.nodes[idx].pub_interactions.push(class);
            }
            if self.rng.gen_bool(0.5) {
                self.link_call(idx, |l, _| l.subscribe_interaction_class(class))?;
                self.nodes[idx].sub_interactions.insert(class);
            }
        }
        if let Some(la) = self.nodes[idx]
            .lookahead
            .filter(|_| !self.nodes[idx].late_regulation)
        {
            self.link_call(idx, |l, k| l.enable_time_regulation(k, la))?;
            self.nodes[idx].regulation_pending = true;
        }
        if self.nodes[idx].constrained_wanted {
            self.link_call(idx, |l, _| l.enable_time_constrained())?;
            self.nodes[idx].constrained_pending = true;
        }
        self.nodes[idx].setup_performed = true;
        self.log(format!(
            "{idx} setup: lookahead {:?} constrained {} publishes {:?} subscribes {:?}",
            self.nodes[idx].lookahead,
            self.nodes[idx].constrained_wanted,
            self.nodes[idx].published.keys().collect::<Vec<_>>(),
            self.nodes[idx].subscribed.keys().collect::<Vec<_>>()
        ));
        Ok(())
    }

    pub(crate) fn tso_time(&mut self, idx: usize) -> Option<LogicalTime> {
        let lrc = self.nodes[idx].lrc.as_ref()?;
        let earliest = lrc.earliest_tso_send_time()?;
        // On the grid: many messages share a time stamp, exercising the tie-break.
        let g = self.grid;
        let ts = t((earliest.as_f64() / g).ceil() * g + self.rng.gen_range(0..6) as f64 * g);
        (ts.as_f64() <= T_END).then_some(ts)
    }

    pub(crate) fn run_action(&mut self, idx: usize) -> Result<(), SimFailure> {
        let n = &self.nodes[idx];
        let idle = n.pending.is_none();
        if n.actions_left == 0 {
            if n.regulation_pending || n.constrained_pending {
                // Still enabling a mode: no advance may be requested yet.
                self.wake(idx, 1_000, 200_000);
                return Ok(());
            }
            // Out of actions: only the final advances remain; the grant wakes us.
            return if idle { self.advance(idx) } else { Ok(()) };
        }
        self.nodes[idx].actions_left = self.nodes[idx].actions_left.saturating_sub(1);
        if self.cfg.ownership_schedules() && self.rng.gen_bool(0.3) {
            self.ownership_action(idx)?;
            // Its callbacks first (they come from the replies), as a federate's would.
            self.after_step(idx)?;
            if self.nodes[idx].phase != Phase::Running {
                return Ok(());
            }
        }
        let roll = self.rng.gen_range(0..100);
        match roll {
            0..=29 if !self.nodes[idx].owned.is_empty() => {
                let i = self.rng.gen_range(0..self.nodes[idx].owned.len());
                let (instance, class) = self.nodes[idx].owned[i];
                let owned = self.nodes[idx]
                    .lrc
                    .as_ref()
                    .map(|l| l.owned_attributes(instance))
                    .unwrap_or_default();
                // Any of what it publishes: an attribute whose ownership moved away
                // must be refused at the call, with the standard's exception.
                let attrs = self.nodes[idx].published[&class].clone();
                let mut values: Vec<(AttributeHandle, Bytes)> = attrs
                    .iter()
                    .filter(|_| self.rng.gen_bool(0.7))
                    .map(|a| (*a, Bytes::from(format!("{idx}:{}", a.0))))
                    .collect();
                let time = self.tso_time(idx);
                if let Some(&(a, _)) = values.iter().find(|(a, _)| !owned.contains(a)) {
                    let refused = self.nodes[idx].lrc.as_mut().map(|l| {
                        l.update_attribute_values(
                            instance,
                            values.clone(),
                            Bytes::from_static(b"u"),
                            time,
                        )
                    });
                    let expected = Err(RtiError::Object(ObjectError::AttributeNotOwned(a)));
                    if refused != Some(expected) {
                        return Err(self.fail(format!(
                            "federate {idx}: an update of {a:?} of {instance}, which it does not own, gave {refused:?}"
                        )));
                    }
                    self.out.refused_updates += 1;
                    values.retain(|(a, _)| owned.contains(a));
                }
                if !values.is_empty() && (time.is_some() || !self.nodes[idx].regulation_on) {
                    self.link_call(idx, |l, _| {
                        l.update_attribute_values(instance, values, Bytes::from_static(b"u"), time)
                    })?;
                    self.log(format!("{idx} updates {instance} at {time:?}"));
                }
            }
            30..=44 if !self.nodes[idx].pub_interactions.is_empty() => {
                let i = self
                    .rng
                    .gen_range(0..self.nodes[idx].pub_interactions.len());
                let class = self.nodes[idx].pub_interactions[i];
                let params = self.fom.interaction_classes[class.index()]
                    .all_parameters
                    .clone();
                let values = params
                    .iter()
                    .map(|p| (*p, Bytes::from(format!("{idx}"))))
                    .collect();
                let time = self.tso_time(idx);
                if time.is_some() || !self.nodes[idx].regulation_on {
                    self.link_call(idx, |l, _| {
                        l.send_interaction(class, values, Bytes::from_static(b"i"), time)
                    })?;
                    self.log(format!("{idx} sends interaction {class} at {time:?}"));
                }
            }
            45..=52 if !self.nodes[idx].published.is_empty() => {
                let classes: Vec<ObjectClassHandle> =
                    self.nodes[idx].published.keys().copied().collect();
                let class = classes[self.rng.gen_range(0..classes.len())];
                let instance =
                    self.link_call(idx, |l, k| l.register_object_instance(k, class, None))?;
                self.nodes[idx].owned.push((instance, class));
                self.nodes[idx].registered.insert(instance, class);
                self.log(format!("{idx} registers {instance} of {class}"));
            }
            53..=55 if !self.nodes[idx].owned.is_empty() => {
                let i = self.rng.gen_range(0..self.nodes[idx].owned.len());
                let (instance, class) = self.nodes[idx].owned[i];
                // Only the holder of the privilege to delete may.
                let privilege = self
                    .fom
                    .attribute_by_name(class, "HLAprivilegeToDeleteObject");
                let privileged = self.nodes[idx].lrc.as_ref().is_some_and(|l| {
                    privilege.is_some_and(|p| l.owned_attributes(instance).contains(&p))
                });
                if !privileged {
                    self.wake(idx, 1_000, 200_000);
                    return self.after_step(idx);
                }
                self.nodes[idx].owned.swap_remove(i);
                let time = if self.rng.gen_bool(0.5) {
                    self.tso_time(idx)
                } else {
                    None
                };
                self.link_call(idx, |l, k| {
                    l.delete_object_instance(k, instance, Bytes::new(), time)
                })?;
                self.instance_gone(idx, instance);
                self.log(format!("{idx} deletes {instance} at {time:?}"));
            }
            56..=57 if !self.nodes[idx].subscribed.is_empty() => {
                let classes: Vec<ObjectClassHandle> =
                    self.nodes[idx].subscribed.keys().copied().collect();
                let class = classes[self.rng.gen_range(0..classes.len())];
                self.link_call(idx, |l, _| {
                    l.request_class_attribute_value_update(class, &[], Bytes::new())
                })?;
            }
            58..=59
                if idle
                    && self.nodes[idx].regulation_on
                    && self.nodes[idx].lookahead.is_some_and(|l| l > 0.0) =>
            {
                let la = [1.0, 2.0, 4.0, 6.0][self.rng.gen_range(0..4)] * self.grid;
                self.link_call(idx, |l, _| l.modify_lookahead(la))?;
                self.log(format!("{idx} lookahead -> {la}"));
            }
            60..=63
                if idle
                    && self.nodes[idx].lookahead.is_some()
                    && !self.nodes[idx].regulation_on
                    && !self.nodes[idx].regulation_pending
                    && !self.late_regulation_deadlocks(idx) =>
            {
                let la = self.nodes[idx]
                    .lookahead
                    .expect("regulating federates have a lookahead");
                self.nodes[idx].regulation_pending = true;
                self.link_call(idx, |l, k| l.enable_time_regulation(k, la))?;
                self.log(format!(
                    "{idx} enables regulation while running, lookahead {la}"
                ));
            }
            64 if idle && self.nodes[idx].regulation_on => {
                self.link_call(idx, |l, k| l.disable_time_regulation(k))?;
                self.nodes[idx].regulation_on = false;
                self.log(format!("{idx} disables regulation"));
            }
            65 if idle && self.nodes[idx].constrained_on => {
                self.link_call(idx, |l, _| l.disable_time_constrained())?;
                self.nodes[idx].constrained_on = false;
                self.log(format!("{idx} disables constrained"));
            }
            66..=67
                if idle
                    && self.nodes[idx].constrained_wanted
                    && !self.nodes[idx].constrained_on
                    && !self.nodes[idx].constrained_pending =>
            {
                self.link_call(idx, |l, _| l.enable_time_constrained())?;
                self.nodes[idx].constrained_pending = true;
                self.log(format!("{idx} enables constrained while running"));
            }
            r if self.quits(r, idle)
                && self.nodes[idx].quitter
                && self.nodes[idx].advances_left < self.cfg.advances / 2 =>
            {
                self.resign_node(idx)?;
                self.log(format!("{idx} quits early"));
                return Ok(());
            }
            _ if idle
                && self.nodes[idx].advances_left > 0
                && !self.nodes[idx].regulation_pending
                && !self.nodes[idx].constrained_pending =>
            {
                return self.advance(idx)
            }
            _ => {}
        }
        self.wake(idx, 1_000, 200_000);
        self.after_step(idx)
    }

    pub(crate) fn advance(&mut self, idx: usize) -> Result<(), SimFailure> {
        let lt = self.nodes[idx].lt;
        // A late regulator may have been moved to the end by peers that finished.
        let finishing = self.nodes[idx].advances_left == 0 || lt >= t(T_END);
        let (kind, time, available) = if finishing {
            (
                Kind::Tar,
                t(T_END).max(lt),
                self.available_only || self.rng.gen_bool(0.3),
            )
        } else {
            let step = self.rng.gen_range(0..8) as f64 * self.grid;
            let time = t(lt.as_f64() + step);
            // Weighted: two thirds of the advances are next message requests.
            let tar_max = match self.cfg.profile {
                Profile::Classic => 44,
                Profile::Weighted => 29,
            };
            let kind = match self.rng.gen_range(0..100) {
                r if r <= tar_max => Kind::Tar,
                r if r <= 94 => Kind::Ner,
                _ => Kind::Fqr,
            };
            (kind, time, self.available_only || self.rng.gen_bool(0.4))
        };
        self.nodes[idx].pending = Some((kind, time, available));
        self.nodes[idx].last_key = None;
        if finishing {
            self.nodes[idx].phase = Phase::Finishing;
        }
        self.log(format!(
            "{idx} requests {kind:?} {time} available={available}"
        ));
        match kind {
            Kind::Tar => {
                self.link_call(idx, |l, _| l.time_advance_request(time.as_f64(), available))?
            }
            Kind::Ner => {
                self.link_call(idx, |l, _| l.next_message_request(time.as_f64(), available))?
            }
            Kind::Fqr => self.link_call(idx, |l, _| l.flush_queue_request(time.as_f64()))?,
        }
        if !finishing {
            self.wake(idx, 1_000, 200_000);
        }
        self.after_step(idx)
    }

    /// Whether action roll `roll` makes a quitter resign now: when idle in the classic
    /// profile; in the weighted one also in the middle of a time advance request.
    pub(crate) fn quits(&self, roll: u32, idle: bool) -> bool {
        match self.cfg.profile {
            Profile::Classic => roll == 68 && idle,
            Profile::Weighted => roll == 68 || roll == 69,
        }
    }
}

fn lrc_galt(lrc: Option<&LocalRti>) -> Option<LogicalTime> {
    lrc.and_then(|l| l.query_galt())
}

impl Sim {
    /// A constrained zero-lookahead federate that becomes regulating starts just after
    /// the constrained peers' time, and must wait for GALT to pass it. Once a
    /// zero-lookahead regulator has finished (idle at the end, never to advance
    /// again), that never happens: the schedule, not the RTI, would deadlock
    /// (seed 400097025), as it would under any HLA RTI.
    fn late_regulation_deadlocks(&self, idx: usize) -> bool {
        self.nodes[idx].lookahead == Some(0.0)
            && self.nodes.iter().any(|n| {
                n.idx != idx
                    && n.lookahead == Some(0.0)
                    && matches!(n.phase, Phase::Finishing | Phase::Finished)
            })
    }
}

//! The DDM simulator's checks of what is delivered: for each message published, what
//! each receiver should make of it; for each callback drained, that it was wanted
//! when sent (or uncertain), discovered first, and (scope) consistent.

use std::collections::BTreeSet;

use glidepath_core::{AttributeHandle, Body, Callback, FederateHandle, ObjectInstanceHandle};

use super::{Box2, DdmFailure, DdmSim, Expect};
use crate::network::SimLink;

impl DdmSim {
    /// Notes, for each message just published, what each subscriber should get.
    pub(super) fn note_published(&mut self) {
        let published = std::mem::take(self.net.published.as_mut().expect("recording"));
        for (from, env, sent_to) in published {
            let Some(sent_with) = self.sent_box(from, &env.body) else {
                continue;
            };
            self.out.published += 1;
            for to in 0..self.members.len() {
                if to == from {
                    continue;
                }
                let m = &self.members[to];
                let wanted = match (&env.body, sent_with) {
                    // `label` travels with the default region: wanted by whoever
                    // subscribes it.
                    (Body::Update { .. }, None) => m.wants_label,
                    (_, Some(b)) => m.subscription.iter().any(|r| self.boxes[r].overlaps(&b)),
                    (_, None) => true,
                };
                self.out.pairs += 1;
                self.expect.insert(
                    (env.sender, env.seq, to),
                    Expect {
                        wanted,
                        in_flight: sent_to.contains(&to),
                        uncertain: false,
                        delivered: false,
                        tso: env.body.tso_time().is_some(),
                    },
                );
            }
        }
    }

    /// The box an update or interaction was sent with: `Some(None)` for the default
    /// region, `None` for other bodies.
    pub(super) fn sent_box(&self, from: usize, body: &Body) -> Option<Option<Box2>> {
        let m = &self.members[from];
        match body {
            Body::Update {
                instance, values, ..
            } => {
                if values.iter().all(|(a, _)| *a == self.h.label) {
                    return Some(None);
                }
                let region = m.instances.iter().find(|(i, _)| i == instance)?.1;
                Some(Some(self.boxes[&region]))
            }
            Body::Interaction { .. } => Some(Some(self.boxes[&m.send_region])),
            _ => None,
        }
    }

    /// Drains member `idx`'s callbacks, checking each.
    pub(super) fn drain(&mut self, idx: usize) -> Result<(), DdmFailure> {
        let mut just_discovered: Option<ObjectInstanceHandle> = None;
        while let Some(cb) = self.members[idx].lrc.poll_callback() {
            if let Some(instance) = just_discovered.take() {
                // Discovered by overlap: the reflection that discovered it follows
                // (after what came into scope with it).
                if matches!(&cb, Callback::AttributesInScope { instance: i, .. } if *i == instance)
                {
                    just_discovered = Some(instance);
                }
                let follows = just_discovered.is_some()
                    || matches!(&cb, Callback::ReflectAttributeValues { instance: i, .. } if *i == instance);
                if !follows {
                    return Err(self.fail(format!(
                        "federate {idx} discovered {instance} (subscribing with regions only) without reflecting an update of it: next came {cb:?}"
                    )));
                }
            }
            if self.time_callback(idx, &cb)? {
                continue;
            }
            let came = matches!(cb, Callback::AttributesInScope { .. });
            match cb {
                Callback::DiscoverObjectInstance { instance, .. } => {
                    self.log(format!("{idx} discovers {instance}"));
                    if !self.members[idx].discovered.insert(instance) {
                        return Err(self.fail(format!("{idx} discovered {instance} twice")));
                    }
                    if !self.members[idx].wants_label {
                        self.out.discovered_by_overlap += 1;
                        just_discovered = Some(instance);
                    }
                }
                Callback::ReflectAttributeValues {
                    instance,
                    values,
                    info,
                    ..
                } => {
                    if !self.members[idx].discovered.contains(&instance) {
                        return Err(
                            self.fail(format!("{idx} reflected {instance} before discovering it"))
                        );
                    }
                    let label_only = values.iter().all(|(a, _)| *a == self.h.label);
                    if label_only != values.iter().any(|(a, _)| *a == self.h.label) {
                        return Err(self.fail(format!(
                            "{idx} reflected position and label of {instance} together (seq {}): they travel apart",
                            info.seq
                        )));
                    }
                    self.check_time_order(idx, &info)?;
                    self.delivered(idx, info.producer, info.seq, "reflection")?;
                }
                Callback::ReceiveInteraction { info, .. } => {
                    self.check_time_order(idx, &info)?;
                    self.delivered(idx, info.producer, info.seq, "interaction")?;
                }
                Callback::AttributesInScope {
                    instance,
                    attributes,
                }
                | Callback::AttributesOutOfScope {
                    instance,
                    attributes,
                } => {
                    let m = &mut self.members[idx];
                    if let Err(e) = m.scope.callback(came, instance, &attributes, &m.discovered) {
                        return Err(self.fail(format!("federate {idx}: {e}")));
                    }
                    self.out.scope_callbacks += 1;
                    self.log(format!(
                        "{idx} {} {instance} {attributes:?}",
                        if came { "in scope" } else { "out of scope" }
                    ));
                }
                other => {
                    return Err(self.fail(format!("{idx}: unexpected callback {other:?}")));
                }
            }
        }
        if let Some(instance) = just_discovered {
            return Err(self.fail(format!(
                "federate {idx} discovered {instance} with nothing reflected after it"
            )));
        }
        let stats = self.members[idx].lrc.stats();
        if stats.unknown_instance > 0 || stats.out_of_order > 0 || stats.unknown_class > 0 {
            return Err(self.fail(format!("federate {idx}: {stats:?}")));
        }
        Ok(())
    }

    /// A callback for (sender, seq) reached `to`: it must have been wanted when
    /// sent, unless `to` moved its regions while it was in flight.
    pub(super) fn delivered(
        &mut self,
        to: usize,
        sender: FederateHandle,
        seq: u64,
        what: &str,
    ) -> Result<(), DdmFailure> {
        let Some(e) = self.expect.get_mut(&(sender, seq, to)) else {
            return Err(self.fail(format!(
                "{to} got a {what} of {sender} seq {seq} that was never published to it"
            )));
        };
        if e.delivered {
            return Err(self.fail(format!("{to} got {sender} seq {seq} twice")));
        }
        e.delivered = true;
        if !e.wanted && !e.uncertain {
            return Err(self.fail(format!(
                "false positive: {to} got a {what} of {sender} seq {seq} whose regions overlapped none of its subscription regions when sent"
            )));
        }
        self.log(format!("{to} gets {what} {sender}#{seq}"));
        Ok(())
    }

    /// What is in scope at member `idx` by the checker's regions: `position` of each
    /// discovered instance whose update region overlaps one of its subscription
    /// regions, `label` of each discovered instance if it subscribes it.
    pub(super) fn scope_now(
        &self,
        idx: usize,
    ) -> BTreeSet<(ObjectInstanceHandle, AttributeHandle)> {
        let m = &self.members[idx];
        let mut now = BTreeSet::new();
        for (owner, o) in self.members.iter().enumerate() {
            if owner == idx {
                continue;
            }
            for (instance, region) in &o.instances {
                if !m.discovered.contains(instance) {
                    continue;
                }
                let at = self.boxes[region];
                if m.subscription.iter().any(|r| self.boxes[r].overlaps(&at)) {
                    now.insert((*instance, self.h.position));
                }
                if m.wants_label {
                    now.insert((*instance, self.h.label));
                }
            }
        }
        now
    }

    pub(super) fn deliver(
        &mut self,
        to: usize,
        env: glidepath_core::Envelope,
    ) -> Result<(), DdmFailure> {
        if let Some(e) = self.expect.get_mut(&(env.sender, env.seq, to)) {
            e.in_flight = false;
        }
        if let Body::UpdateRegions {
            instance,
            regions,
            owned,
            ..
        } = &env.body
        {
            let line = format!(
                "{to} hears from {}#{} where {instance} is: {}",
                env.sender,
                env.seq,
                if *owned {
                    format!("{regions:?}")
                } else {
                    "given up".into()
                }
            );
            self.log(line);
        }
        if let Body::ScopeAnswered { .. } = &env.body {
            self.log(format!("{to} has the answer of {}#{}", env.sender, env.seq));
        }
        let mut link = SimLink {
            node: to,
            now: self.now,
            net: &mut self.net,
            exec: &mut self.exec,
            rng: &mut self.rng,
        };
        let lrc = &mut self.members[to].lrc;
        lrc.handle_envelope(env);
        link.flush(lrc);
        self.note_published();
        self.drain(to)
    }
}

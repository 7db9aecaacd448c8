//! What arrives from peers: envelopes checked for order and turned into callbacks
//! (time statuses go to time management).

use std::cmp::Reverse;

use super::*;
use crate::callback::{Callback, MessageInfo};
use crate::error::PeerError;
use crate::exec::{FederateInfo, Notification};
use crate::message::{Advance, Body, Envelope, Regulation, Values};
use crate::region::regions_overlap;
use crate::time::state::*;
use crate::types::{FederateHandle, LogicalTime, ObjectInstanceHandle};
use crate::{AttributeHandle, OrderType, ParameterHandle, TransportationType};

impl LocalRti {
    // ----- incoming messages -----------------------------------------------------------

    /// Processes one envelope from the transport, then advances time management.
    pub fn handle_envelope(&mut self, env: Envelope) {
        if self.resigned || env.sender == self.me {
            return;
        }
        self.stats.received += 1;
        if self.finished.contains(env.sender) {
            // Its last status is processed and it is forgotten: nothing can follow.
            self.stats.from_departed += 1;
            return;
        }
        let last = self.last_seq_from.get(&env.sender).copied().unwrap_or(0);
        if env.seq <= last {
            self.stats.out_of_order += 1;
            self.stats.last_peer_error = Some(PeerError::OutOfOrder {
                sender: env.sender,
                seq: env.seq,
                last,
            });
            return;
        }
        self.last_seq_from.insert(env.sender, env.seq);
        let Envelope {
            sender,
            seq,
            publish_time_ns,
            body,
        } = env;
        if self.ghosts.contains(sender) && !matches!(body, Body::TimeStatus(_) | Body::Exec(_)) {
            // Published before we could subscribe any data topic: not ours to deliver.
            self.stats.from_departed += 1;
            return;
        }
        if self.take_restore_marker(sender, &body) {
            return;
        }
        if self.sent_before_restore(sender) && !matches!(body, Body::Exec(_)) {
            self.stats.from_before_restore += 1;
            return;
        }
        if let Body::Interaction { class, values, .. } = &body {
            // The management object model's HLAsetTiming is read by the RTI itself.
            self.mom_adjust(sender, *class, values);
        }
        let mut republish = false;
        match body {
            Body::TimeStatus(status) => {
                republish = self.handle_status(sender, seq, Arc::unwrap_or_clone(status))
            }
            Body::Exec(n) => self.handle_notification(n),
            Body::Register {
                instance,
                class,
                name,
            } => {
                if self.fom.object_class(class).is_none() {
                    self.peer_error(PeerError::UnknownObjectClass { sender, class });
                } else {
                    self.discover(instance, class, &name, sender);
                }
            }
            Body::UpdateRegions {
                instance,
                attributes,
                regions,
                owned,
                ..
            } => self.told_update_regions(
                sender,
                seq,
                instance,
                attributes.iter().copied(),
                regions.as_ref(),
                owned,
            ),
            Body::ScopeAdvisory { on, announce } => {
                self.handle_scope_advisory(sender, on, announce)
            }
            Body::ScopeAnswered { first } => self.handle_scope_answered(sender, first),
            Body::RequestUpdate {
                instance,
                class,
                attributes,
                tag,
                regions,
            } => {
                // Each owner answers for the requested attributes it owns (all
                // of them when none are named); asked with regions, for those whose
                // update regions overlap the request's (data distribution
                // management; the default region overlaps every region).
                let mut targets: Vec<(ObjectInstanceHandle, Vec<AttributeHandle>)> = self
                    .known
                    .iter()
                    .filter(|(i, k)| match instance {
                        Some(wanted) => **i == wanted,
                        None => self.fom.is_object_subclass_of(k.class, class),
                    })
                    .filter_map(|(i, k)| {
                        let owned: Vec<AttributeHandle> = if attributes.is_empty() {
                            Vec::new()
                        } else {
                            attributes
                                .iter()
                                .copied()
                                .filter(|a| k.owned.contains(a))
                                .filter(|a| {
                                    regions_overlap(
                                        regions.as_ref(),
                                        self.update_regions(*i, *a).as_ref(),
                                    )
                                })
                                .collect()
                        };
                        let answers = if attributes.is_empty() {
                            !k.owned.is_empty()
                        } else {
                            !owned.is_empty()
                        };
                        answers.then_some((*i, owned))
                    })
                    .collect();
                targets.sort_unstable_by_key(|(i, _)| *i);
                for (instance, attributes) in targets {
                    self.callbacks
                        .push_back(Callback::ProvideAttributeValueUpdate {
                            instance,
                            attributes,
                            tag: tag.clone(),
                        });
                }
                // The RTI answers for the management object model's instances itself.
                self.mom_request(instance, class, &attributes, &tag);
            }
            body => match body.tso_time() {
                Some(t) if self.time.constrained == Constrained::On => {
                    let promise = self.time.statuses.get(&sender).map(|(_, s)| s.promise);
                    let lower = if self.time.last_grant_available {
                        t < self.time.logical_time
                    } else {
                        t <= self.time.logical_time
                    };
                    if promise.is_some_and(|p| t < p) || lower {
                        self.peer_error(PeerError::BrokenPromise {
                            sender,
                            time: t,
                            promise: promise.unwrap_or(LogicalTime::NEG_INFINITY),
                        });
                        self.stats.broken_promises += 1;
                        self.deliver(sender, seq, publish_time_ns, body, OrderType::Receive);
                    } else {
                        self.time.queue.push(Reverse(Queued {
                            time: t,
                            sender,
                            seq,
                            publish_time_ns,
                            body,
                        }));
                        republish = matches!(self.time.advance, Advance::Ner { .. });
                    }
                }
                _ => self.deliver(sender, seq, publish_time_ns, body, OrderType::Receive),
            },
        }
        if republish
            && self.time.regulation == Regulation::On
            && self.time.constrained == Constrained::On
        {
            self.publish_status(StatusReason::Changed);
        }
        self.evaluate();
    }

    pub(crate) fn peer_error(&mut self, e: PeerError) {
        match e {
            PeerError::UnknownObjectClass { .. } | PeerError::UnknownInteractionClass { .. } => {
                self.stats.unknown_class += 1
            }
            _ => {}
        }
        self.stats.last_peer_error = Some(e);
    }

    pub(crate) fn handle_notification(&mut self, n: Notification) {
        match n {
            Notification::FederateJoined {
                federate,
                name,
                federate_type,
            } => {
                if federate == self.me {
                    return;
                }
                self.members.insert(
                    federate,
                    FederateInfo {
                        handle: federate,
                        name,
                        federate_type,
                    },
                );
                let name = self.members[&federate].name.clone();
                self.mom_member_joined(federate, &name);
                // The newcomer subscribed before joining; tell it where we stand. It
                // waits for every member's status (regulating or not) before it
                // trusts any conditional bound.
                self.publish_status(StatusReason::Answer);
                if self.ddm.scope.on {
                    // And that we want to hear where its attributes are.
                    self.send(
                        Topic::Federation,
                        Body::ScopeAdvisory {
                            on: true,
                            announce: false,
                        },
                    );
                }
            }
            Notification::FederateResigned { federate } => {
                // Not yet done with it as a regulator: this notification comes from the
                // executive and may overtake what the federate sent before resigning.
                // Its own last status (marked resigned) follows everything it sent, and
                // that is what releases GALT (simulator seed 100003103).
                self.members.remove(&federate);
                self.mom_member_resigned(federate);
                self.scope_member_left(federate);
            }
            Notification::FederateLost { federate } => {
                // Gone for good (its process died): no last status of its own will
                // come, so its last known one stands for it, marked resigned. What it
                // sent before dying arrived long ago (the host waits seconds before
                // calling it lost) or never will.
                self.members.remove(&federate);
                self.mom_member_resigned(federate);
                self.scope_member_left(federate);
                if let Some((seq, status)) = self.time.statuses.get(&federate).cloned() {
                    let mut last = status;
                    last.resigned = true;
                    let republish = self.handle_status(federate, seq, last);
                    if republish
                        && self.time.regulation == Regulation::On
                        && self.time.constrained == Constrained::On
                    {
                        self.publish_status(StatusReason::Changed);
                    }
                }
            }
            Notification::AnnounceSynchronizationPoint {
                label,
                tag,
                targets,
            } => {
                if targets.contains(&self.me) {
                    self.announced.insert(label.clone());
                    self.callbacks
                        .push_back(Callback::AnnounceSynchronizationPoint { label, tag });
                }
            }
            Notification::FederationSynchronized {
                label,
                failed,
                targets,
            } => {
                if targets.contains(&self.me) {
                    self.announced.remove(&label);
                    self.callbacks
                        .push_back(Callback::FederationSynchronized { label, failed });
                }
            }
            Notification::Ownership {
                notice,
                federate,
                instance,
                attributes,
                tag,
            } => self.handle_ownership_notice(notice, federate, instance, attributes, tag),
            Notification::Save(notice) => self.handle_save_notice(notice),
        }
    }

    pub(crate) fn deliver_tso(&mut self, q: Queued) {
        self.time.delivered_up_to = self.time.delivered_up_to.max(q.time);
        self.deliver(
            q.sender,
            q.seq,
            q.publish_time_ns,
            q.body,
            OrderType::TimeStamp,
        );
    }

    /// Turns a data body into a callback, filtered by the current subscriptions.
    pub(crate) fn deliver(
        &mut self,
        producer: FederateHandle,
        seq: u64,
        publish_time_ns: u64,
        body: Body,
        received_order: OrderType,
    ) {
        let info = |sent_order, transport, time| MessageInfo {
            producer,
            seq,
            sent_order,
            received_order,
            transport,
            time,
            publish_time_ns,
        };
        let cb = match body {
            Body::Update {
                instance,
                values,
                tag,
                order,
                transport,
                time,
                regions,
                ..
            } => {
                // The bit first: ordinary updates pay no extra lookup here.
                if crate::mom::is_mom_instance(instance) && !self.known.contains_key(&instance) {
                    self.mom_discover_on_update(instance);
                }
                if !self.known.contains_key(&instance)
                    && !self.discover_on_overlap(instance, &values, regions.as_ref())
                {
                    return;
                }
                if self.ddm.scope.on {
                    // The update's regions are its owner's latest word on them.
                    self.told_update_regions(
                        producer,
                        seq,
                        instance,
                        values.iter().map(|(a, _)| *a),
                        regions.as_ref(),
                        true,
                    );
                }
                let Some(known) = self.known.get(&instance) else {
                    self.stats.unknown_instance += 1;
                    return;
                };
                let class = known.known_class;
                let Some(subscribed) = self.subscribed_attributes.get(&class) else {
                    return;
                };
                // Subscribed, and (data distribution management) one of the
                // attribute's subscription regions overlaps one the update was sent with.
                let wanted = |a: &AttributeHandle| {
                    subscribed.contains(a)
                        && self.overlaps_subscription(class, *a, regions.as_ref())
                };
                let values: Values<AttributeHandle> = if values.iter().all(|(a, _)| wanted(a)) {
                    values
                } else {
                    values.iter().filter(|(a, _)| wanted(a)).cloned().collect()
                };
                if values.is_empty() {
                    return;
                }
                Callback::ReflectAttributeValues {
                    instance,
                    class,
                    values,
                    tag,
                    info: info(order, transport, time),
                }
            }
            Body::Interaction {
                class,
                values,
                tag,
                order,
                transport,
                time,
                regions,
            } => {
                if self.fom.interaction_class(class).is_none() {
                    self.peer_error(PeerError::UnknownInteractionClass {
                        sender: producer,
                        class,
                    });
                    return;
                }
                let Some(as_class) = self.subscribed_interaction_class_for(class) else {
                    return;
                };
                if regions.is_some()
                    && !regions_overlap(
                        regions.as_ref(),
                        self.interaction_subscription_regions(as_class).as_ref(),
                    )
                {
                    return;
                }
                let own = &self.fom.interaction_classes[as_class.index()].all_parameters;
                let values: Values<ParameterHandle> = if values.iter().all(|(p, _)| own.contains(p))
                {
                    values
                } else {
                    values
                        .iter()
                        .filter(|(p, _)| own.contains(p))
                        .cloned()
                        .collect()
                };
                Callback::ReceiveInteraction {
                    class: as_class,
                    values,
                    tag,
                    info: info(order, transport, time),
                }
            }
            Body::Delete {
                instance,
                tag,
                order,
                time,
                ..
            } => {
                if self.known.remove(&instance).is_none() {
                    // An instance never discovered here goes without a callback.
                    if self.ddm.undiscovered.remove(&instance).is_none() {
                        self.stats.unknown_instance += 1;
                    }
                    return;
                }
                self.forget_associations(instance);
                Callback::RemoveObjectInstance {
                    instance,
                    tag,
                    info: info(order, TransportationType::Reliable, time),
                }
            }
            _ => return,
        };
        self.stats.delivered += 1;
        self.callbacks.push_back(cb);
    }

    /// Discovers an instance waiting undiscovered (its class subscribed with regions
    /// only) when an update of it overlaps: some attribute it carries is subscribed,
    /// and one of that attribute's subscription regions overlaps one of the update's
    /// regions. True when the instance is known now; false, and nothing counted,
    /// when it waits on (or is unknown: then the caller counts it).
    fn discover_on_overlap(
        &mut self,
        instance: ObjectInstanceHandle,
        values: &Values<AttributeHandle>,
        regions: Option<&crate::region::RegionSet>,
    ) -> bool {
        let Some(waiting) = self.ddm.undiscovered.get(&instance) else {
            return true;
        };
        let Some(known_class) = self.subscribed_object_class_for(waiting.class) else {
            // No longer subscribed: a later subscription lists it again.
            self.ddm.undiscovered.remove(&instance);
            return false;
        };
        let overlaps = self
            .subscribed_attributes
            .get(&known_class)
            .is_some_and(|subscribed| {
                values.iter().any(|(a, _)| {
                    subscribed.contains(a) && self.overlaps_subscription(known_class, *a, regions)
                })
            });
        if !overlaps {
            return false;
        }
        let waiting = self
            .ddm
            .undiscovered
            .remove(&instance)
            .expect("looked up above");
        self.known.insert(
            instance,
            KnownInstance::new(waiting.class, known_class, waiting.name.clone()),
        );
        self.callbacks.push_back(Callback::DiscoverObjectInstance {
            instance,
            class: known_class,
            name: waiting.name,
            producer: waiting.producer,
        });
        true
    }
}

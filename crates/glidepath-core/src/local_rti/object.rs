//! Object management: instance names, registration, updates, interactions, deletion,
//! update requests and discovery.

use bytes::Bytes;

use super::*;
use crate::callback::Callback;
use crate::error::{ObjectError, RtiError, TimeError};
use crate::exec::{ExecReply, ExecRequest};
use crate::message::Topic;
use crate::message::{Advance, Body, Regulation};
use crate::region::{RegionHandle, RegionSet};
use crate::types::{
    FederateHandle, LogicalTime, LogicalTimeInterval, ObjectInstanceHandle, TimeValue,
};
use crate::{
    AttributeHandle, InteractionClassHandle, ObjectClassHandle, OrderType, ParameterHandle,
    TransportationType,
};

impl LocalRti {
    // ----- object management ------------------------------------------------------

    /// Asks the executive to reserve an instance name; the answer arrives as a callback.
    pub fn reserve_object_instance_name(
        &mut self,
        link: &mut impl Link,
        name: &str,
    ) -> Result<(), RtiError> {
        self.live()?;
        let reply = expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::ReserveName {
                federation: self.federation,
                federate: self.me,
                name: name.to_string(),
            },
        )?)?;
        match reply {
            ExecReply::NameReserved {
                name,
                success: true,
            } => self
                .callbacks
                .push_back(Callback::ObjectInstanceNameReservationSucceeded { name }),
            ExecReply::NameReserved {
                name,
                success: false,
            } => self
                .callbacks
                .push_back(Callback::ObjectInstanceNameReservationFailed { name }),
            other => return Err(unexpected(&other)),
        }
        Ok(())
    }

    /// Releases a reserved name that was not used.
    pub fn release_object_instance_name(
        &mut self,
        link: &mut impl Link,
        name: &str,
    ) -> Result<(), RtiError> {
        self.live()?;
        expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::ReleaseName {
                federation: self.federation,
                federate: self.me,
                name: name.to_string(),
            },
        )?)?;
        Ok(())
    }

    /// Registers an instance of a published class, optionally under a name this
    /// federate reserved. Subscribers discover it.
    pub fn register_object_instance(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        name: Option<&str>,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        let instance = self.register_unannounced(link, class, name)?;
        self.announce_owned(instance);
        Ok(instance)
    }

    /// [`LocalRti::register_object_instance`] without telling scope watchers.
    pub(crate) fn register_unannounced(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        name: Option<&str>,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        self.live()?;
        self.fom
            .object_class(class)
            .ok_or(ObjectError::ObjectClassNotDefined(class))?;
        let Some(published) = self.published_attributes.get(&class) else {
            return Err(ObjectError::ObjectClassNotPublished(class).into());
        };
        // The registrant owns what it publishes, and the privilege to delete.
        let mut owned = published.clone();
        owned.extend(self.privilege_to_delete(class));
        let reply = expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::RegisterInstance {
                federation: self.federation,
                federate: self.me,
                class,
                name: name.map(str::to_string),
                attributes: owned.iter().copied().collect(),
            },
        )?)?;
        let ExecReply::Registered { instance, name } = reply else {
            return Err(unexpected(&reply));
        };
        let mut known = KnownInstance::new(class, class, name.clone());
        known.owned = owned;
        self.known.insert(instance, known);
        self.mom.counts.registered += 1;
        self.send(
            Topic::ObjectClass(class),
            Body::Register {
                instance,
                class,
                name: name.into(),
            },
        );
        Ok(instance)
    }

    /// The earliest time stamp this federate may send now.
    pub(crate) fn earliest_send_time(&self) -> LogicalTime {
        let base = match self.time.advance {
            Advance::Idle => self.time.logical_time,
            Advance::Tar { time, .. } | Advance::Ner { time, .. } => time,
        };
        base.plus(self.time.lookahead).max(self.time.promise_floor)
    }

    /// A time stamp a user gives, in the federation's representation (a float `3.0`
    /// becomes the integer 3 in an `HLAinteger64Time` federation; `3.5` is refused).
    pub(crate) fn federation_time(&self, t: LogicalTime) -> Result<LogicalTime, ObjectError> {
        let representation = self.fom.time_representation;
        LogicalTime::in_representation(representation, t).ok_or(
            ObjectError::TimeNotInRepresentation {
                time: t,
                representation,
            },
        )
    }

    pub(crate) fn federation_times(
        &self,
        t: Option<LogicalTime>,
    ) -> Result<Option<LogicalTime>, ObjectError> {
        t.map(|t| self.federation_time(t)).transpose()
    }

    /// A logical time a user asks for, in the federation's representation.
    pub(crate) fn requested_time(&self, value: TimeValue) -> Result<LogicalTime, TimeError> {
        let representation = self.fom.time_representation;
        LogicalTime::in_representation(representation, value).ok_or(if value.is_nan() {
            TimeError::InvalidLogicalTime(value)
        } else {
            TimeError::NotInTimeRepresentation {
                value,
                representation,
            }
        })
    }

    /// A lookahead a user gives, in the federation's representation.
    pub(crate) fn requested_lookahead(
        &self,
        value: TimeValue,
    ) -> Result<LogicalTimeInterval, TimeError> {
        LogicalTimeInterval::in_representation(self.fom.time_representation, value)
            .ok_or(TimeError::InvalidLookahead(value))
    }

    /// Decides the sent order of a message with the FOM's `order` and an optional time
    /// stamp: time-stamp order only from a regulating federate, checked against its promise.
    pub(crate) fn sent_order(
        &self,
        order: OrderType,
        time: Option<LogicalTime>,
    ) -> Result<OrderType, ObjectError> {
        match (order, time) {
            (OrderType::TimeStamp, Some(t)) if self.time.regulation == Regulation::On => {
                let earliest = self.earliest_send_time();
                if t < earliest {
                    return Err(ObjectError::InvalidLogicalTime { time: t, earliest });
                }
                Ok(OrderType::TimeStamp)
            }
            _ => Ok(OrderType::Receive),
        }
    }

    /// Updates any subset of an owned instance's published attributes. Values are split
    /// by the order and transportation the FOM gives each attribute.
    pub fn update_attribute_values(
        &mut self,
        instance: ObjectInstanceHandle,
        values: Vec<(AttributeHandle, Bytes)>,
        tag: Bytes,
        time: Option<LogicalTime>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let time = self.federation_times(time)?;
        let known = self
            .known
            .get(&instance)
            .ok_or(ObjectError::ObjectInstanceNotKnown(instance))?;
        let class = known.class;
        let fom = self.fom.clone();
        let c = fom
            .object_class(class)
            .ok_or(ObjectError::ObjectClassNotDefined(class))?;
        type Key = (OrderType, TransportationType, Option<RegionSet>);
        // Every attribute checked, and the message each travels in keyed; in the
        // common case all share one key and the caller's vector goes out as it is.
        let mut single: Option<Key> = None;
        let mut uniform = true;
        for (a, _) in &values {
            let a = *a;
            if !c.all_attributes.contains(&a) {
                return Err(ObjectError::AttributeNotDefined {
                    class,
                    attribute: a,
                }
                .into());
            }
            // Only the owner may update: checked here, on the federate's own view,
            // which never runs ahead of the executive's grants.
            if !known.owned.contains(&a) {
                return Err(ObjectError::AttributeNotOwned(a).into());
            }
            let attr = &fom.attributes[a.index()];
            let order = self.sent_order(attr.order, time)?;
            let key = (order, attr.transportation, self.update_regions(instance, a));
            match &single {
                None => single = Some(key),
                Some(k) if *k == key => {}
                Some(_) => uniform = false,
            }
        }
        if let (true, Some(key)) = (uniform, single) {
            self.send_update(instance, class, values, tag, key, time);
            self.mom.counts.updates_sent += 1;
            self.announce_if_owed();
            return Ok(());
        }
        // Attributes associated with different regions (or of different orders or
        // transports) travel apart, each message with its regions.
        let mut groups: Vec<(Key, Vec<(AttributeHandle, Bytes)>)> = Vec::new();
        for (a, v) in values {
            let attr = &fom.attributes[a.index()];
            let order = self.sent_order(attr.order, time)?;
            let key = (order, attr.transportation, self.update_regions(instance, a));
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push((a, v)),
                None => groups.push((key, vec![(a, v)])),
            }
        }
        for (key, vals) in groups {
            self.send_update(instance, class, vals, tag.clone(), key, time);
        }
        self.mom.counts.updates_sent += 1;
        self.announce_if_owed();
        Ok(())
    }

    /// Queues one update message: `key` is its order, transportation and regions.
    pub(crate) fn send_update(
        &mut self,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        values: Vec<(AttributeHandle, Bytes)>,
        tag: Bytes,
        (order, transport, regions): (OrderType, TransportationType, Option<RegionSet>),
        time: Option<LogicalTime>,
    ) {
        self.send(
            Topic::ObjectClass(class),
            Body::Update {
                instance,
                class,
                values: values.into(),
                tag,
                order,
                transport,
                time,
                regions,
            },
        );
    }

    /// Sends an interaction of a published class.
    pub fn send_interaction(
        &mut self,
        class: InteractionClassHandle,
        values: Vec<(ParameterHandle, Bytes)>,
        tag: Bytes,
        time: Option<LogicalTime>,
    ) -> Result<(), RtiError> {
        self.send_interaction_with_regions(class, values, &[], tag, time)
    }

    /// Sends an interaction of a published class with regions (none: the default
    /// region). Every region must be this federate's and have only dimensions the
    /// class has; receivers whose subscription regions overlap none of them get
    /// nothing.
    pub fn send_interaction_with_regions(
        &mut self,
        class: InteractionClassHandle,
        values: Vec<(ParameterHandle, Bytes)>,
        regions: &[RegionHandle],
        tag: Bytes,
        time: Option<LogicalTime>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let time = self.federation_times(time)?;
        let fom = self.fom.clone();
        let c = fom
            .interaction_class(class)
            .ok_or(ObjectError::InteractionClassNotDefined(class))?;
        if !self.published_interactions.contains(&class) {
            return Err(ObjectError::InteractionClassNotPublished(class).into());
        }
        for (p, _) in &values {
            if !c.all_parameters.contains(p) {
                return Err(ObjectError::InteractionParameterNotDefined {
                    class,
                    parameter: *p,
                }
                .into());
            }
        }
        let regions = self.interaction_regions(class, regions)?;
        let order = self.sent_order(c.order, time)?;
        // The management object model's adjustments are for the RTIs, which all
        // hear the federation topic (subscribers of the class get them there too).
        let topic = if self.mom.is_adjustment(class) {
            Topic::Federation
        } else {
            Topic::InteractionClass(class)
        };
        self.mom.counts.interactions_sent += 1;
        self.send(
            topic,
            Body::Interaction {
                class,
                values: values.into(),
                tag,
                order,
                transport: c.transportation,
                time,
                regions,
            },
        );
        self.announce_if_owed();
        Ok(())
    }

    /// Deletes an owned instance; subscribers get `RemoveObjectInstance`.
    pub fn delete_object_instance(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        tag: Bytes,
        time: Option<LogicalTime>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let time = self.federation_times(time)?;
        let Some(known) = self.known.get(&instance) else {
            return Err(ObjectError::ObjectInstanceNotKnown(instance).into());
        };
        let class = known.class;
        let privileged = self
            .privilege_to_delete(class)
            .is_some_and(|p| known.owned.contains(&p));
        if !privileged {
            return Err(ObjectError::DeletePrivilegeNotHeld(instance).into());
        }
        let order = self.sent_order(OrderType::TimeStamp, time)?;
        expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::DeleteInstance {
                federation: self.federation,
                federate: self.me,
                instance,
            },
        )?)?;
        self.known.remove(&instance);
        self.forget_associations(instance);
        self.mom.counts.deleted += 1;
        self.send(
            Topic::ObjectClass(class),
            Body::Delete {
                instance,
                class,
                tag,
                order,
                time,
            },
        );
        self.announce_if_owed();
        Ok(())
    }

    /// Asks the owners of `attributes` of `instance` to provide current values. The
    /// request goes to every member, and each owner answers for what it owns: the
    /// attributes of one instance may have several owners.
    pub fn request_instance_attribute_value_update(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) -> Result<(), RtiError> {
        self.live()?;
        let class = self
            .known
            .get(&instance)
            .ok_or(ObjectError::ObjectInstanceNotKnown(instance))?
            .known_class;
        self.check_class_attributes(class, attributes)?;
        self.send(
            Topic::Federation,
            Body::RequestUpdate {
                instance: Some(instance),
                class,
                attributes: attributes.into(),
                tag,
                regions: None,
            },
        );
        Ok(())
    }

    /// Asks the owners of every instance of `class` (and subclasses) to provide values.
    pub fn request_class_attribute_value_update(
        &mut self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, attributes)?;
        self.send(
            Topic::Federation,
            Body::RequestUpdate {
                instance: None,
                class,
                attributes: attributes.into(),
                tag,
                regions: None,
            },
        );
        Ok(())
    }

    pub(crate) fn discover(
        &mut self,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        name: &str,
        producer: FederateHandle,
    ) {
        if self.known.contains_key(&instance) {
            return;
        }
        let Some(known_class) = self.subscribed_object_class_for(class) else {
            return;
        };
        if !self.discovers_at_registration(known_class) {
            // Subscribed with regions only: discovered when an update overlaps.
            self.ddm.undiscovered.insert(
                instance,
                super::ddm::Undiscovered {
                    class,
                    name: name.to_string(),
                    producer,
                },
            );
            return;
        }
        self.ddm.undiscovered.remove(&instance);
        self.known.insert(
            instance,
            KnownInstance::new(class, known_class, name.to_string()),
        );
        self.callbacks.push_back(Callback::DiscoverObjectInstance {
            instance,
            class: known_class,
            name: name.to_string(),
            producer,
        });
    }

    /// The instance's name, when this federate knows or owns it.
    pub fn object_instance_name(&self, instance: ObjectInstanceHandle) -> Option<&str> {
        self.known.get(&instance).map(|k| k.name.as_str())
    }

    /// The `HLAprivilegeToDeleteObject` attribute of a class (inherited from
    /// `HLAobjectRoot`), when the FOM has one.
    pub(crate) fn privilege_to_delete(&self, class: ObjectClassHandle) -> Option<AttributeHandle> {
        self.fom
            .attribute_by_name(class, crate::exec::PRIVILEGE_TO_DELETE)
    }
}

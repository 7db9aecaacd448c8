//! Declaration management: what a federate publishes and subscribes, and the
//! transport topics that follow from it.

use std::collections::BTreeSet;

use super::*;
use crate::error::{DeclarationError, RtiError};
use crate::exec::{ExecReply, ExecRequest};
use crate::message::Topic;
use crate::types::FederateHandle;
use crate::{AttributeHandle, InteractionClassHandle, ObjectClassHandle};

impl LocalRti {
    // ----- declaration management --------------------------------------------------

    pub(crate) fn check_class_attributes(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), DeclarationError> {
        let c = self
            .fom
            .object_class(class)
            .ok_or(DeclarationError::ObjectClassNotDefined(class))?;
        for a in attributes {
            if !c.all_attributes.contains(a) {
                return Err(DeclarationError::AttributeNotDefined {
                    class,
                    attribute: *a,
                });
            }
        }
        Ok(())
    }

    /// Publishes these attributes of `class` (added to what is already published).
    pub fn publish_object_class_attributes(
        &mut self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, attributes)?;
        self.published_attributes
            .entry(class)
            .or_default()
            .extend(attributes.iter().copied());
        Ok(())
    }

    /// Stops publishing `class` entirely; what this federate owns of instances it
    /// knows as `class` is unconditionally divested (the privilege to delete stays).
    pub fn unpublish_object_class(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, &[])?;
        let all = self
            .published_attributes
            .get(&class)
            .cloned()
            .unwrap_or_default();
        self.unpublish(link, class, all)
    }

    /// Stops publishing these attributes of `class`; what this federate owns of them
    /// is unconditionally divested. Refused while it is acquiring one of them.
    pub fn unpublish_object_class_attributes(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, attributes)?;
        self.unpublish(link, class, attributes.iter().copied().collect())
    }

    fn unpublish(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        attributes: BTreeSet<AttributeHandle>,
    ) -> Result<(), RtiError> {
        self.check_no_acquisition(class, &attributes)?;
        self.divest_unpublished(link, class, &attributes)?;
        if let Some(published) = self.published_attributes.get_mut(&class) {
            published.retain(|a| !attributes.contains(a));
            if published.is_empty() {
                self.published_attributes.remove(&class);
            }
        }
        Ok(())
    }

    /// Subscribes these attributes of `class` (replacing the class's previous set, as the
    /// standard says). Instances already registered by others are discovered now.
    pub fn subscribe_object_class_attributes(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, attributes)?;
        self.ddm.subscription_cache = None;
        if attributes.is_empty() {
            self.ddm.default_attributes.remove(&class);
        } else {
            self.ddm
                .default_attributes
                .insert(class, attributes.iter().copied().collect());
        }
        self.resubscribe_object_class(link, class)
    }

    /// Brings `class`'s subscribed attributes (with the default region or with
    /// regions) and the topics in line with the declarations; a class that is
    /// subscribed discovers the instances already registered.
    pub(crate) fn resubscribe_object_class(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
    ) -> Result<(), RtiError> {
        let mut attributes: BTreeSet<AttributeHandle> = self
            .ddm
            .default_attributes
            .get(&class)
            .cloned()
            .unwrap_or_default();
        attributes.extend(
            self.ddm
                .attribute_subscriptions
                .iter()
                .filter(|((c, _), regions)| *c == class && !regions.is_empty())
                .map(|((_, a), _)| *a),
        );
        if attributes.is_empty() {
            self.subscribed_attributes.remove(&class);
            self.sync_topics();
            return Ok(());
        }
        self.subscribed_attributes.insert(class, attributes);
        self.sync_topics();
        let classes = self.fom.object_class_and_descendants(class);
        let reply = expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::ListInstances {
                federation: self.federation,
                federate: self.me,
                classes,
            },
        )?)?;
        let ExecReply::Instances(list) = reply else {
            return Err(unexpected(&reply));
        };
        for info in list {
            // Divested instances have no owner but still exist: discover them too.
            let producer = info.owner.unwrap_or(FederateHandle::EXECUTIVE);
            self.discover(info.instance, info.class, &info.name, producer);
        }
        self.mom_discover_members();
        Ok(())
    }

    /// Stops subscribing `class`. Known instances stay known but reflect nothing more
    /// unless another subscription covers them.
    pub fn unsubscribe_object_class(&mut self, class: ObjectClassHandle) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, &[])?;
        self.subscribed_attributes.remove(&class);
        self.ddm.subscription_cache = None;
        self.ddm.default_attributes.remove(&class);
        self.ddm
            .attribute_subscriptions
            .retain(|(c, _), _| *c != class);
        self.sync_topics();
        Ok(())
    }

    /// Publishes an interaction class.
    pub fn publish_interaction_class(
        &mut self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .interaction_class(class)
            .ok_or(DeclarationError::InteractionClassNotDefined(class))?;
        self.published_interactions.insert(class);
        Ok(())
    }

    /// Stops publishing an interaction class.
    pub fn unpublish_interaction_class(
        &mut self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .interaction_class(class)
            .ok_or(DeclarationError::InteractionClassNotDefined(class))?;
        self.published_interactions.remove(&class);
        Ok(())
    }

    /// Subscribes an interaction class (and, through the hierarchy, its subclasses).
    pub fn subscribe_interaction_class(
        &mut self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .interaction_class(class)
            .ok_or(DeclarationError::InteractionClassNotDefined(class))?;
        self.ddm.default_interactions.insert(class);
        self.resubscribe_interactions();
        Ok(())
    }

    /// Subscribed interaction classes: those subscribed with the default region or
    /// with regions; the topics follow.
    pub(crate) fn resubscribe_interactions(&mut self) {
        self.subscribed_interactions = self.ddm.default_interactions.clone();
        self.subscribed_interactions.extend(
            self.ddm
                .interaction_subscriptions
                .iter()
                .filter(|(_, regions)| !regions.is_empty())
                .map(|(c, _)| *c),
        );
        self.sync_topics();
    }

    /// Stops subscribing an interaction class.
    pub fn unsubscribe_interaction_class(
        &mut self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .interaction_class(class)
            .ok_or(DeclarationError::InteractionClassNotDefined(class))?;
        self.ddm.default_interactions.remove(&class);
        self.ddm.interaction_subscriptions.remove(&class);
        self.resubscribe_interactions();
        Ok(())
    }

    /// Brings the transport's subscriptions in line with the declarations: a class topic
    /// is needed when the class or one of its ancestors is subscribed.
    pub(crate) fn sync_topics(&mut self) {
        self.cache_subscription_regions();
        let mut want = BTreeSet::new();
        for class in self.subscribed_attributes.keys() {
            for c in self.fom.object_class_and_descendants(*class) {
                want.insert(Topic::ObjectClass(c));
            }
        }
        for class in &self.subscribed_interactions {
            for c in self.fom.interaction_class_and_descendants(*class) {
                want.insert(Topic::InteractionClass(c));
            }
        }
        for t in want.difference(&self.data_topics) {
            self.outbox.push(Output::Subscribe {
                federation: self.federation,
                topic: *t,
            });
        }
        for t in self.data_topics.difference(&want) {
            self.outbox.push(Output::Unsubscribe {
                federation: self.federation,
                topic: *t,
            });
        }
        // What each subscribed topic is wanted for, told when it changes.
        for t in &want {
            let interest = self.topic_interest_now(*t);
            if self.topic_interest.get(t) != interest.as_ref() {
                match &interest {
                    Some(r) => self.topic_interest.insert(*t, r.clone()),
                    None => self.topic_interest.remove(t),
                };
                self.outbox.push(Output::Interest {
                    federation: self.federation,
                    topic: *t,
                    regions: interest,
                });
            }
        }
        self.topic_interest.retain(|t, _| want.contains(t));
        self.data_topics = want;
        // What is in scope follows the subscriptions and their regions.
        self.refresh_all_scope();
    }

    /// The regions a data topic is wanted for: the union of the subscription regions
    /// of every attribute (or of the interaction class) it is delivered as; `None`
    /// when one of them is subscribed with the default region.
    fn topic_interest_now(&self, topic: Topic) -> Option<crate::region::RegionSet> {
        match topic {
            Topic::ObjectClass(c) => {
                let known = self.subscribed_object_class_for(c)?;
                let mut union: Option<crate::region::RegionSet> = None;
                for a in self.subscribed_attributes.get(&known)? {
                    let regions = self.attribute_subscription_regions(known, *a)?;
                    union = Some(match union {
                        Some(u) => u.union(&regions),
                        None => regions,
                    });
                }
                union
            }
            Topic::InteractionClass(c) => {
                let known = self.subscribed_interaction_class_for(c)?;
                self.interaction_subscription_regions(known)
            }
            _ => None,
        }
    }

    /// The subscribed class an instance of `class` is known as: the closest subscribed
    /// ancestor (or the class itself).
    pub(crate) fn subscribed_object_class_for(
        &self,
        class: ObjectClassHandle,
    ) -> Option<ObjectClassHandle> {
        let mut c = Some(class);
        while let Some(h) = c {
            if self.subscribed_attributes.contains_key(&h) {
                return Some(h);
            }
            c = self.fom.object_class(h).and_then(|x| x.parent);
        }
        None
    }

    pub(crate) fn subscribed_interaction_class_for(
        &self,
        class: InteractionClassHandle,
    ) -> Option<InteractionClassHandle> {
        let mut c = Some(class);
        while let Some(h) = c {
            if self.subscribed_interactions.contains(&h) {
                return Some(h);
            }
            c = self.fom.interaction_class(h).and_then(|x| x.parent);
        }
        None
    }
}

//! Attribute scope advisories (data distribution management): *attributes in scope*
//! and *attributes out of scope*, with the switch that turns them on.
//!
//! An attribute of an instance is in scope at a federate when the federate knows the
//! instance (it discovered it), subscribes the attribute, does not own it, and the
//! attribute's owner updates it with regions overlapping one of the federate's
//! subscription regions for it (the default region overlaps every region).
//!
//! A receiver learns an owner's update regions from two messages of the owner's:
//! every update carries them, and [`Body::UpdateRegions`] tells of a change when no
//! update follows (a commit, an association, an ownership change). Owners send the
//! latter only while some member's switch is on: a member turning it on says so to
//! everyone ([`Body::ScopeAdvisory`], again whenever a member joins, so newcomers
//! know), and each owner then tells it the regions of everything it owns. So a
//! federation in which nobody asks for scope advisories pays nothing for them.
//!
//! A notice travels by the new regions together with those they replace (filtered
//! at the source like an update, on NATS by cells): every receiver whose scope may
//! change hears of it, and the others do not pay for it. So what a receiver knows of
//! attributes out of its scope may be stale; when its own subscriptions change it
//! forgets that and asks the owners again (a [`Body::ScopeAdvisory`] with
//! `announce`), whose answers, routed by their regions, reach it where they overlap.
//! Each member answers an ask with its notices and then a [`Body::ScopeAnswered`]
//! naming where the answer began: what the asker knows from that member from before
//! it was routed by the asker's old subscriptions and may be older than a move it
//! never heard of, so it is forgotten unless the answer said it again.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::message::Body;
use crate::region::{regions_overlap, RegionHandle, RegionSet};

/// What this federate knows for scope advisories.
#[derive(Default)]
pub(crate) struct ScopeState {
    /// This federate's attribute scope advisory switch.
    pub(crate) on: bool,
    /// Members whose switch is on: while there is one, this federate tells of its
    /// update regions when they change.
    pub(crate) watchers: BTreeSet<FederateHandle>,
    /// Per instance known to be another federate's (while the switch is on): its
    /// owners' latest word on each attribute, and what is in scope here now.
    pub(crate) instances: FastMap<ObjectInstanceHandle, InstanceScope>,
    /// This federate's subscription regions per subscribed attribute when it last
    /// asked the owners (while the switch is on).
    subscriptions: FastMap<(ObjectClassHandle, AttributeHandle), Option<RegionSet>>,
    /// Per member, where its latest answer to this federate's asks began: a word it
    /// sent before (a time-stamped update delivered late, say) is not taken.
    answered_from: BTreeMap<FederateHandle, u64>,
}

/// Attributes with the regions and the route of the notice that tells of them.
type NoticeGroup = (Option<RegionSet>, Option<RegionSet>, Vec<AttributeHandle>);

/// Where attributes were before a change, for a notice's route.
pub(crate) enum Was {
    /// Nowhere anyone heard of (a registration, an answer to a request): the
    /// notice travels by the new regions.
    Nowhere,
    /// Unknown here (another federate owned them): to every subscriber.
    Unknown,
    /// At these regions, per attribute (an attribute missing: nowhere).
    At(BTreeMap<AttributeHandle, Option<RegionSet>>),
}

/// A notice's route: the new regions with the old ones; `None` (everyone) when
/// either is the default region or the old ones are unknown.
fn route(
    new: &Option<RegionSet>,
    old: Option<&Option<RegionSet>>,
    unknown: bool,
) -> Option<RegionSet> {
    match (new, old) {
        _ if unknown => None,
        (Some(n), Some(Some(o))) => Some(n.union(o)),
        (Some(n), None) => Some(n.clone()),
        _ => None,
    }
}

#[derive(Default)]
pub(crate) struct InstanceScope {
    told: BTreeMap<AttributeHandle, Told>,
    in_scope: BTreeSet<AttributeHandle>,
}

/// An owner's latest word on an attribute's update regions.
struct Told {
    owner: FederateHandle,
    /// The `seq` of the owner's envelope that said it: an older word (a time-stamped
    /// update delivered after a newer notice) does not replace it.
    seq: u64,
    regions: Option<RegionSet>,
}

impl LocalRti {
    /// Turns the attribute scope advisory switch on: from now on this federate is
    /// told *attributes in scope* and *attributes out of scope*. Owners answer the
    /// switch by telling where their instances' attributes are, so what is in scope
    /// now comes in as those answers arrive.
    pub fn enable_attribute_scope_advisory_switch(&mut self) -> Result<(), RtiError> {
        self.live()?;
        if self.ddm.scope.on {
            return Err(crate::error::DdmError::AttributeScopeAdvisorySwitchIsOn.into());
        }
        self.ddm.scope.on = true;
        self.ddm.scope.instances.clear();
        self.ddm.scope.subscriptions = self.subscription_regions().clone();
        self.ask_owners();
        Ok(())
    }

    /// Turns the attribute scope advisory switch off: no more scope callbacks.
    pub fn disable_attribute_scope_advisory_switch(&mut self) -> Result<(), RtiError> {
        self.live()?;
        if !self.ddm.scope.on {
            return Err(crate::error::DdmError::AttributeScopeAdvisorySwitchIsOff.into());
        }
        self.ddm.scope.on = false;
        self.ddm.scope.instances.clear();
        self.ddm.scope.subscriptions.clear();
        self.ddm.scope.answered_from.clear();
        self.send(
            Topic::Federation,
            Body::ScopeAdvisory {
                on: false,
                announce: false,
            },
        );
        Ok(())
    }

    /// Whether the attribute scope advisory switch is on.
    pub fn attribute_scope_advisory_switch(&self) -> bool {
        self.ddm.scope.on
    }

    /// Asks every owner where what it owns is (the switch is on).
    fn ask_owners(&mut self) {
        self.send(
            Topic::Federation,
            Body::ScopeAdvisory {
                on: true,
                announce: true,
            },
        );
    }

    // ----- the owner's side --------------------------------------------------------------

    /// A member's switch (its [`Body::ScopeAdvisory`]).
    pub(crate) fn handle_scope_advisory(
        &mut self,
        sender: FederateHandle,
        on: bool,
        announce: bool,
    ) {
        if !on {
            self.ddm.scope.watchers.remove(&sender);
            return;
        }
        // A watcher new here (this federate joined after it turned its switch on)
        // hears of everything too.
        let first = self.seq + 1;
        if self.ddm.scope.watchers.insert(sender) || announce {
            self.announce_all_owned();
        }
        if announce {
            self.send(Topic::Federate(sender), Body::ScopeAnswered { first });
        }
    }

    /// A member answered this federate's ask in its envelopes from `first` on:
    /// what it said before and did not say again is forgotten.
    pub(crate) fn handle_scope_answered(&mut self, sender: FederateHandle, first: u64) {
        if !self.ddm.scope.on {
            return;
        }
        self.ddm.scope.answered_from.insert(sender, first);
        self.forget_words(|t| t.owner == sender && t.seq < first);
    }

    /// Tells watchers where everything this federate owns is.
    fn announce_all_owned(&mut self) {
        if self.ddm.scope.watchers.is_empty() {
            return;
        }
        let mut owned: Vec<ObjectInstanceHandle> = self
            .known
            .iter()
            .filter(|(_, k)| !k.owned.is_empty())
            .map(|(i, _)| *i)
            .collect();
        owned.sort_unstable();
        for instance in owned {
            self.announce_owned(instance);
        }
    }

    /// Tells watchers where every attribute this federate owns of an instance is.
    pub(crate) fn announce_owned(&mut self, instance: ObjectInstanceHandle) {
        if self.ddm.scope.watchers.is_empty() {
            return;
        }
        let owned: Vec<AttributeHandle> = self
            .known
            .get(&instance)
            .map(|k| k.owned.iter().copied().collect())
            .unwrap_or_default();
        self.announce_update_regions(instance, &owned, &Was::Nowhere);
    }

    /// A member left: it watches no more.
    pub(crate) fn scope_member_left(&mut self, federate: FederateHandle) {
        self.ddm.scope.watchers.remove(&federate);
        self.ddm.scope.answered_from.remove(&federate);
        if !self.ddm.scope.on {
            return;
        }
        // What it owned has no owner now (or a new one, who will say so).
        self.forget_words(|t| t.owner == federate);
    }

    /// Forgets the words `stale` picks and works out the scope of the instances
    /// they were about again.
    fn forget_words(&mut self, stale: impl Fn(&Told) -> bool) {
        let affected: Vec<ObjectInstanceHandle> = self
            .ddm
            .scope
            .instances
            .iter_mut()
            .filter_map(|(i, s)| {
                let before = s.told.len();
                s.told.retain(|_, t| !stale(t));
                (s.told.len() != before).then_some(*i)
            })
            .collect();
        for instance in affected {
            self.refresh_scope(instance);
        }
    }

    /// Where these attributes of an instance are now, for a later notice's route
    /// (empty while nobody watches).
    pub(crate) fn scope_was(
        &self,
        instance: ObjectInstanceHandle,
        attributes: impl IntoIterator<Item = AttributeHandle>,
    ) -> Was {
        if self.ddm.scope.watchers.is_empty() {
            return Was::At(BTreeMap::new());
        }
        Was::At(
            attributes
                .into_iter()
                .map(|a| (a, self.update_regions(instance, a)))
                .collect(),
        )
    }

    /// Tells watchers the update regions of these attributes of an instance, those
    /// this federate owns, grouped by region set and route. Nothing while nobody
    /// watches.
    pub(crate) fn announce_update_regions(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        was: &Was,
    ) {
        if self.ddm.scope.watchers.is_empty() {
            return;
        }
        let Some(k) = self.known.get(&instance) else {
            return;
        };
        let class = k.class;
        let mut groups: Vec<NoticeGroup> = Vec::new();
        for a in attributes.iter().filter(|a| k.owned.contains(a)) {
            let regions = self.update_regions(instance, *a);
            let route = match was {
                Was::Nowhere => route(&regions, None, false),
                Was::Unknown => route(&regions, None, true),
                Was::At(old) => route(&regions, old.get(a), false),
            };
            match groups
                .iter_mut()
                .find(|(r, t, _)| *r == regions && *t == route)
            {
                Some((_, _, group)) => group.push(*a),
                None => groups.push((regions, route, vec![*a])),
            }
        }
        self.send_notices(instance, class, true, groups);
    }

    /// Sends one [`Body::UpdateRegions`] per group of attributes (regions, route).
    fn send_notices(
        &mut self,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        owned: bool,
        groups: Vec<NoticeGroup>,
    ) {
        for (regions, route, attributes) in groups {
            self.send(
                Topic::ObjectClass(class),
                Body::UpdateRegions {
                    instance,
                    class,
                    attributes: attributes.into(),
                    regions,
                    owned,
                    route,
                },
            );
        }
    }

    /// Tells watchers this federate no longer owns these attributes (routed by the
    /// regions it updated them with).
    pub(crate) fn announce_divested(
        &mut self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) {
        if self.ddm.scope.watchers.is_empty() || attributes.is_empty() {
            return;
        }
        let Some(k) = self.known.get(&instance) else {
            return;
        };
        let class = k.class;
        let mut groups: Vec<NoticeGroup> = Vec::new();
        for a in attributes {
            let route = self.update_regions(instance, *a);
            match groups.iter_mut().find(|(_, t, _)| *t == route) {
                Some((_, _, group)) => group.push(*a),
                None => groups.push((None, route, vec![*a])),
            }
        }
        self.send_notices(instance, class, false, groups);
    }

    /// Before a commit of `regions`: where the owned attributes associated with them
    /// are (nothing while nobody watches).
    pub(crate) fn scope_before_commit(
        &self,
        regions: &[RegionHandle],
    ) -> BTreeMap<ObjectInstanceHandle, Was> {
        let mut before: BTreeMap<ObjectInstanceHandle, Vec<AttributeHandle>> = BTreeMap::new();
        if self.ddm.scope.watchers.is_empty() {
            return BTreeMap::new();
        }
        for r in regions {
            for (instance, attribute) in self.ddm.associated_with.get(r).into_iter().flatten() {
                let attributes = before.entry(*instance).or_default();
                if !attributes.contains(attribute) {
                    attributes.push(*attribute);
                }
            }
        }
        before
            .into_iter()
            .map(|(i, attributes)| (i, self.scope_was(i, attributes)))
            .collect()
    }

    /// After that commit: tells watchers where those attributes are now.
    pub(crate) fn announce_committed(&mut self, before: BTreeMap<ObjectInstanceHandle, Was>) {
        for (instance, was) in before {
            let Was::At(old) = &was else { continue };
            let attributes: Vec<AttributeHandle> = old.keys().copied().collect();
            self.announce_update_regions(instance, &attributes, &was);
        }
    }

    /// After a restore (this federate's marker sent): what it knew of others'
    /// regions is from the state left, so it forgets it and, watching, asks again;
    /// and it tells watchers where what it owns now is. Owners that restore later
    /// tell again after their own marker, so nothing said before a restore is
    /// relied on.
    pub(crate) fn restart_scope(&mut self) {
        self.ddm.scope.instances.clear();
        if self.ddm.scope.on {
            self.ddm.scope.subscriptions = self.subscription_regions().clone();
            self.ask_owners();
        }
        self.announce_all_owned();
    }

    // ----- the receiver's side -----------------------------------------------------------

    /// An owner's word on some attributes' update regions (a notice, or an update
    /// being delivered): kept, and scope worked out again.
    pub(crate) fn told_update_regions(
        &mut self,
        sender: FederateHandle,
        seq: u64,
        instance: ObjectInstanceHandle,
        attributes: impl IntoIterator<Item = AttributeHandle>,
        regions: Option<&RegionSet>,
        owned: bool,
    ) {
        if !self.ddm.scope.on {
            return;
        }
        if !self.known.contains_key(&instance) && !self.ddm.undiscovered.contains_key(&instance) {
            return;
        }
        let stale = self
            .ddm
            .scope
            .answered_from
            .get(&sender)
            .is_some_and(|first| seq < *first);
        if !stale {
            let entry = self.ddm.scope.instances.entry(instance).or_default();
            for a in attributes {
                match entry.told.get(&a) {
                    Some(t) if t.owner == sender && t.seq > seq => continue,
                    Some(t) if t.owner != sender && !owned => continue,
                    _ => {}
                }
                if owned {
                    entry.told.insert(
                        a,
                        Told {
                            owner: sender,
                            seq,
                            regions: regions.cloned(),
                        },
                    );
                } else {
                    entry.told.remove(&a);
                }
            }
        }
        // Even a stale word comes with news: an update may just have discovered
        // the instance, bringing what was told of it before into scope.
        self.refresh_scope(instance);
    }

    /// Works out what of an instance is in scope now and tells the federate what
    /// changed (nothing for an instance it does not know).
    pub(crate) fn refresh_scope(&mut self, instance: ObjectInstanceHandle) {
        let Some(entry) = self.ddm.scope.instances.get(&instance) else {
            return;
        };
        let known = self.known.get(&instance);
        let now: BTreeSet<AttributeHandle> = match known {
            None => BTreeSet::new(),
            Some(k) => {
                let subscribed = self.subscribed_attributes.get(&k.known_class);
                entry
                    .told
                    .iter()
                    .filter(|(a, t)| {
                        !k.owned.contains(a)
                            && subscribed.is_some_and(|s| s.contains(a))
                            && regions_overlap(
                                t.regions.as_ref(),
                                self.attribute_subscription_regions(k.known_class, **a)
                                    .as_ref(),
                            )
                    })
                    .map(|(a, _)| *a)
                    .collect()
            }
        };
        let tell = known.is_some() && self.ddm.scope.on;
        let entry = self
            .ddm
            .scope
            .instances
            .get_mut(&instance)
            .expect("looked up above");
        if entry.in_scope == now {
            return;
        }
        let gone: Vec<AttributeHandle> = entry.in_scope.difference(&now).copied().collect();
        let came: Vec<AttributeHandle> = now.difference(&entry.in_scope).copied().collect();
        entry.in_scope = now;
        if !tell {
            return;
        }
        if !gone.is_empty() {
            self.callbacks.push_back(Callback::AttributesOutOfScope {
                instance,
                attributes: gone,
            });
        }
        if !came.is_empty() {
            self.callbacks.push_back(Callback::AttributesInScope {
                instance,
                attributes: came,
            });
        }
    }

    /// This federate's subscriptions or their regions may have changed (called
    /// whenever it works out its topics): if they did, scope is worked out again
    /// for every instance, what it knew of attributes out of its scope is
    /// forgotten (their moves elsewhere were not routed here, so it may be stale),
    /// and the owners are asked again.
    pub(crate) fn refresh_all_scope(&mut self) {
        if !self.ddm.scope.on {
            return;
        }
        let now = self.subscription_regions().clone();
        if now == self.ddm.scope.subscriptions {
            return;
        }
        self.ddm.scope.subscriptions = now;
        let mut instances: Vec<ObjectInstanceHandle> =
            self.ddm.scope.instances.keys().copied().collect();
        instances.sort_unstable();
        for instance in instances {
            // Only what is in scope was routed here wherever it went: the rest is
            // forgotten before the new subscriptions are compared with it.
            if let Some(entry) = self.ddm.scope.instances.get_mut(&instance) {
                let in_scope = &entry.in_scope;
                entry.told.retain(|a, _| in_scope.contains(a));
            }
            self.refresh_scope(instance);
        }
        self.ask_owners();
    }

    /// Forgets an instance that is gone (no callback: its removal says enough).
    pub(crate) fn forget_scope(&mut self, instance: ObjectInstanceHandle) {
        self.ddm.scope.instances.remove(&instance);
    }
}

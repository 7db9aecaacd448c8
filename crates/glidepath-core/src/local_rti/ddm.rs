//! Data distribution management in the local RTI component: this federate's
//! regions (create, set and get range bounds, commit, delete), the regions it
//! subscribes with and associates with the attributes it updates, and what those
//! make of the regions a message carries.
//!
//! Regions are local: only their creator uses them, and nothing travels when one is
//! created, changed or deleted. What others see is a region's *committed* extent, in
//! the messages sent with it. `set_range_bounds` edits a region's bounds; they take
//! effect at `commit_region_modifications`, for what is sent (and received) after it.
//!
//! A region used with an attribute or interaction class may have only dimensions the
//! FOM makes available to it; in a message it is *filled*: each available dimension
//! it lacks takes the dimension's value when unspecified (or is left out when that is
//! `Excluded`), so a receiver compares plainly, dimension by dimension. An attribute
//! or class with no available dimensions always uses the default region.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;

use super::*;
use crate::error::{DdmError, ObjectError, RegionContext, RtiError};
use crate::message::{Body, Topic};
use crate::region::{regions_overlap, Extent, RangeBounds, RegionHandle, RegionSet};
use crate::types::FederateHandle;
use crate::DimensionHandle;
use glidepath_fom::DefaultRange;

/// Attributes and the regions to use them with (the standard's attribute set /
/// region set pair list).
pub type AttributeRegions = (Vec<AttributeHandle>, Vec<RegionHandle>);

/// One region this federate created.
pub(crate) struct OwnRegion {
    /// Its dimensions, as given at creation.
    pub(crate) dimensions: BTreeSet<DimensionHandle>,
    /// The bounds as last set, committed or not.
    pub(crate) bounds: BTreeMap<DimensionHandle, RangeBounds>,
    /// The bounds in effect since the last commit (or creation).
    pub(crate) committed: Extent,
}

/// This federate's regions and what it uses them for.
#[derive(Default)]
pub(crate) struct DdmState {
    /// The serial of the last region created.
    pub(crate) last_serial: u32,
    pub(crate) regions: BTreeMap<RegionHandle, OwnRegion>,
    /// Attributes subscribed with the default region, per class (the plain
    /// subscribe service's set, which each call replaces).
    pub(crate) default_attributes: FastMap<ObjectClassHandle, BTreeSet<AttributeHandle>>,
    /// Attributes subscribed with regions.
    pub(crate) attribute_subscriptions:
        BTreeMap<(ObjectClassHandle, AttributeHandle), BTreeSet<RegionHandle>>,
    /// Interaction classes subscribed with the default region.
    pub(crate) default_interactions: FastSet<InteractionClassHandle>,
    /// Interaction classes subscribed with regions.
    pub(crate) interaction_subscriptions: BTreeMap<InteractionClassHandle, BTreeSet<RegionHandle>>,
    /// Regions associated for updates with instance attributes.
    pub(crate) associations:
        BTreeMap<(ObjectInstanceHandle, AttributeHandle), BTreeSet<RegionHandle>>,
    /// What `LocalRti::update_regions` answers, per association: worked out when an
    /// association or one of its regions changes, not on every update.
    pub(crate) update_cache: FastMap<(ObjectInstanceHandle, AttributeHandle), Option<RegionSet>>,
    /// What `LocalRti::attribute_subscription_regions` answers, per subscribed
    /// attribute: filled when the topics are worked out, emptied (`None`) by
    /// anything that changes a subscription's regions until then.
    pub(crate) subscription_cache:
        Option<FastMap<(ObjectClassHandle, AttributeHandle), Option<RegionSet>>>,
    /// The same, per region: what a commit of it moves.
    pub(crate) associated_with:
        BTreeMap<RegionHandle, BTreeSet<(ObjectInstanceHandle, AttributeHandle)>>,
    /// Instances registered by others that this federate would know as a subscribed
    /// class but has not discovered: it subscribes their class's attributes with
    /// regions only, and no update of theirs overlapping one of those regions has
    /// arrived yet (discovery follows overlap).
    pub(crate) undiscovered: BTreeMap<ObjectInstanceHandle, Undiscovered>,
    /// Attribute scope advisories (`scope.rs`).
    pub(crate) scope: super::scope::ScopeState,
}

/// An instance registered by another federate and not yet discovered here.
pub(crate) struct Undiscovered {
    /// The class it was registered as.
    pub(crate) class: ObjectClassHandle,
    pub(crate) name: String,
    /// The federate that registered it (or owns it now).
    pub(crate) producer: FederateHandle,
}

impl LocalRti {
    // ----- data distribution management: regions ---------------------------------------

    /// The upper bound of a dimension: its normalized values lie in `[0, upper bound]`.
    pub fn dimension_upper_bound(&self, dimension: DimensionHandle) -> Result<u64, DdmError> {
        self.fom
            .dimension(dimension)
            .map(|d| d.upper_bound)
            .ok_or(DdmError::InvalidDimensionHandle(dimension))
    }

    /// Creates a region with these dimensions, each with its full range `[0, upper
    /// bound)`, committed: it may be used at once.
    pub fn create_region(
        &mut self,
        dimensions: &[DimensionHandle],
    ) -> Result<RegionHandle, RtiError> {
        self.live()?;
        let mut bounds = BTreeMap::new();
        for d in dimensions {
            let upper = self.dimension_upper_bound(*d)?;
            bounds.insert(*d, RangeBounds::new(0, upper));
        }
        self.ddm.last_serial += 1;
        let handle = RegionHandle {
            federate: self.me,
            serial: self.ddm.last_serial,
        };
        let committed = Extent::new(bounds.iter().map(|(d, r)| (*d, *r)));
        self.ddm.regions.insert(
            handle,
            OwnRegion {
                dimensions: bounds.keys().copied().collect(),
                bounds,
                committed,
            },
        );
        Ok(handle)
    }

    /// A region of this federate, or why not.
    pub(crate) fn own_region(&self, region: RegionHandle) -> Result<&OwnRegion, DdmError> {
        if region.federate != self.me {
            return Err(DdmError::RegionNotCreatedByThisFederate(region));
        }
        self.ddm
            .regions
            .get(&region)
            .ok_or(DdmError::InvalidRegion(region))
    }

    /// The dimensions a region was created with.
    pub fn region_dimensions(
        &self,
        region: RegionHandle,
    ) -> Result<Vec<DimensionHandle>, RtiError> {
        self.live()?;
        Ok(self
            .own_region(region)?
            .dimensions
            .iter()
            .copied()
            .collect())
    }

    /// Sets a region's range on one of its dimensions; effective at the next
    /// [`LocalRti::commit_region_modifications`]. The range must satisfy `lower <=
    /// upper <= ` the dimension's upper bound.
    pub fn set_range_bounds(
        &mut self,
        region: RegionHandle,
        dimension: DimensionHandle,
        bounds: RangeBounds,
    ) -> Result<(), RtiError> {
        self.live()?;
        let upper_bound = self.dimension_upper_bound(dimension)?;
        let r = self.own_region(region)?;
        if !r.dimensions.contains(&dimension) {
            return Err(
                DdmError::RegionDoesNotContainSpecifiedDimension { region, dimension }.into(),
            );
        }
        if bounds.lower > bounds.upper || bounds.upper > upper_bound {
            return Err(DdmError::InvalidRangeBound {
                dimension,
                bounds,
                upper_bound,
            }
            .into());
        }
        self.ddm
            .regions
            .get_mut(&region)
            .expect("checked above")
            .bounds
            .insert(dimension, bounds);
        Ok(())
    }

    /// A region's range on one of its dimensions, as last set (committed or not).
    pub fn range_bounds(
        &self,
        region: RegionHandle,
        dimension: DimensionHandle,
    ) -> Result<RangeBounds, RtiError> {
        self.live()?;
        let r = self.own_region(region)?;
        r.bounds.get(&dimension).copied().ok_or_else(|| {
            DdmError::RegionDoesNotContainSpecifiedDimension { region, dimension }.into()
        })
    }

    /// A region's bounds in effect (as of its last commit).
    pub fn committed_extent(&self, region: RegionHandle) -> Result<Extent, RtiError> {
        self.live()?;
        Ok(self.own_region(region)?.committed.clone())
    }

    /// Makes the bounds set on these regions take effect, for messages sent after
    /// this call: all of them checked first, then all committed.
    pub fn commit_region_modifications(
        &mut self,
        regions: &[RegionHandle],
    ) -> Result<(), RtiError> {
        self.live()?;
        for r in regions {
            self.own_region(*r)?;
        }
        let before = self.scope_before_commit(regions);
        self.ddm.subscription_cache = None;
        for r in regions {
            let region = self.ddm.regions.get_mut(r).expect("checked above");
            region.committed = Extent::new(region.bounds.iter().map(|(d, b)| (*d, *b)));
        }
        let moved: Vec<(ObjectInstanceHandle, AttributeHandle)> = regions
            .iter()
            .flat_map(|r| self.ddm.associated_with.get(r).into_iter().flatten())
            .copied()
            .collect();
        for (instance, attribute) in moved {
            self.recache_update_regions(instance, attribute);
        }
        // Subscriptions with these regions want something else of their topics now.
        self.sync_topics();
        self.announce_committed(before);
        Ok(())
    }

    /// Deletes a region; refused while a subscription or an update association uses it.
    pub fn delete_region(&mut self, region: RegionHandle) -> Result<(), RtiError> {
        self.live()?;
        self.own_region(region)?;
        if self.region_in_use(region) {
            return Err(DdmError::RegionInUseForUpdateOrSubscription(region).into());
        }
        self.ddm.regions.remove(&region);
        Ok(())
    }

    /// True when a subscription or an update association uses the region.
    pub(crate) fn region_in_use(&self, region: RegionHandle) -> bool {
        let d = &self.ddm;
        d.attribute_subscriptions
            .values()
            .chain(d.interaction_subscriptions.values())
            .chain(d.associations.values())
            .any(|regions| regions.contains(&region))
    }

    // ----- regions in use ----------------------------------------------------------------

    /// Checks that each region is this federate's and has only dimensions in
    /// `available` (the dimensions of `context`).
    fn check_regions(
        &self,
        regions: &[RegionHandle],
        available: &[DimensionHandle],
        context: RegionContext,
    ) -> Result<(), DdmError> {
        for region in regions {
            if let Some(dimension) = self
                .own_region(*region)?
                .dimensions
                .iter()
                .find(|d| !available.contains(d))
            {
                return Err(DdmError::InvalidRegionContext {
                    region: *region,
                    dimension: *dimension,
                    context,
                });
            }
        }
        Ok(())
    }

    /// Checks attribute / region pairs for `class`: the attributes are the class's,
    /// each region fits each attribute of its pair.
    fn check_attribute_regions(
        &self,
        class: ObjectClassHandle,
        pairs: &[AttributeRegions],
    ) -> Result<(), RtiError> {
        for (attributes, regions) in pairs {
            self.check_class_attributes(class, attributes)?;
            for a in attributes {
                let available = &self.fom.attributes[a.index()].dimensions;
                let context = RegionContext::Attribute {
                    class,
                    attribute: *a,
                };
                self.check_regions(regions, available, context)?;
            }
        }
        Ok(())
    }

    /// A region's committed extent filled for `available` dimensions: each one it
    /// lacks takes the dimension's value when unspecified, unless that is excluded.
    fn filled(&self, region: RegionHandle, available: &[DimensionHandle]) -> Option<Extent> {
        let committed = &self.ddm.regions.get(&region)?.committed;
        let missing = available.iter().filter_map(|d| {
            if committed.range(*d).is_some() {
                return None;
            }
            match self.fom.dimension(*d)?.default_range {
                DefaultRange::Excluded => None,
                DefaultRange::Range { lower, upper } => Some((*d, RangeBounds::new(lower, upper))),
            }
        });
        Some(Extent::new(
            committed
                .ranges()
                .iter()
                .copied()
                .chain(missing)
                .collect::<Vec<_>>(),
        ))
    }

    /// The set of `regions` filled for `available` dimensions; `None` (the default
    /// region) when there are none, or no dimension is available.
    fn region_set(
        &self,
        regions: impl IntoIterator<Item = RegionHandle>,
        available: &[DimensionHandle],
    ) -> Option<RegionSet> {
        if available.is_empty() {
            return None;
        }
        RegionSet::new(
            regions
                .into_iter()
                .filter_map(|r| self.filled(r, available))
                .collect(),
        )
    }

    /// The regions an update of `attribute` of `instance` is sent with now.
    pub(crate) fn update_regions(
        &self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) -> Option<RegionSet> {
        self.ddm
            .update_cache
            .get(&(instance, attribute))
            .cloned()
            .flatten()
    }

    /// Works out again what [`LocalRti::update_regions`] answers for an
    /// association (after it or one of its regions changed).
    fn recache_update_regions(
        &mut self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) {
        let Some(regions) = self.ddm.associations.get(&(instance, attribute)) else {
            self.ddm.update_cache.remove(&(instance, attribute));
            return;
        };
        let set = self
            .fom
            .attributes
            .get(attribute.index())
            .and_then(|a| self.region_set(regions.iter().copied(), &a.dimensions));
        self.ddm.update_cache.insert((instance, attribute), set);
    }

    /// The regions an interaction of `class` is sent with, checked.
    pub(crate) fn interaction_regions(
        &self,
        class: InteractionClassHandle,
        regions: &[RegionHandle],
    ) -> Result<Option<RegionSet>, DdmError> {
        let available = self
            .fom
            .interaction_class(class)
            .map(|c| c.dimensions.as_slice())
            .unwrap_or_default();
        self.check_regions(regions, available, RegionContext::InteractionClass(class))?;
        Ok(self.region_set(regions.iter().copied(), available))
    }

    /// The regions `attribute` of `class` is subscribed with: `None` when with the
    /// default region (it overlaps everything).
    pub(crate) fn attribute_subscription_regions(
        &self,
        class: ObjectClassHandle,
        attribute: AttributeHandle,
    ) -> Option<RegionSet> {
        match self.cached_subscription(class, attribute) {
            Some(cached) => cached.clone(),
            None => self.subscription_regions_now(class, attribute),
        }
    }

    /// What the cache holds for `attribute` of `class`, if it is filled and has it.
    fn cached_subscription(
        &self,
        class: ObjectClassHandle,
        attribute: AttributeHandle,
    ) -> Option<&Option<RegionSet>> {
        self.ddm
            .subscription_cache
            .as_ref()
            .and_then(|c| c.get(&(class, attribute)))
    }

    /// Whether `regions` (an update's) overlap the regions `attribute` of `class` is
    /// subscribed with (the default region overlaps everything): the receiver's
    /// test, without copying the subscription's regions.
    pub(crate) fn overlaps_subscription(
        &self,
        class: ObjectClassHandle,
        attribute: AttributeHandle,
        regions: Option<&RegionSet>,
    ) -> bool {
        if regions.is_none() {
            return true;
        }
        match self.cached_subscription(class, attribute) {
            Some(cached) => regions_overlap(regions, cached.as_ref()),
            None => regions_overlap(
                regions,
                self.subscription_regions_now(class, attribute).as_ref(),
            ),
        }
    }

    /// The regions every subscribed attribute is subscribed with now: the cache
    /// [`LocalRti::attribute_subscription_regions`] reads, filled if it is empty.
    pub(crate) fn subscription_regions(
        &mut self,
    ) -> &FastMap<(ObjectClassHandle, AttributeHandle), Option<RegionSet>> {
        if self.ddm.subscription_cache.is_none() {
            self.cache_subscription_regions();
        }
        self.ddm.subscription_cache.get_or_insert_default()
    }

    /// Fills the cache [`LocalRti::attribute_subscription_regions`] reads, for every
    /// subscribed attribute.
    pub(crate) fn cache_subscription_regions(&mut self) {
        let me = &*self;
        let cache = me
            .subscribed_attributes
            .iter()
            .flat_map(|(class, attributes)| {
                attributes
                    .iter()
                    .map(move |a| ((*class, *a), me.subscription_regions_now(*class, *a)))
            })
            .collect();
        self.ddm.subscription_cache = Some(cache);
    }

    /// [`LocalRti::attribute_subscription_regions`], worked out.
    fn subscription_regions_now(
        &self,
        class: ObjectClassHandle,
        attribute: AttributeHandle,
    ) -> Option<RegionSet> {
        if self
            .ddm
            .default_attributes
            .get(&class)
            .is_some_and(|a| a.contains(&attribute))
        {
            return None;
        }
        let regions = self.ddm.attribute_subscriptions.get(&(class, attribute))?;
        let available = &self.fom.attributes.get(attribute.index())?.dimensions;
        self.region_set(regions.iter().copied(), available)
    }

    /// The regions interaction class `class` is subscribed with (`None`: the
    /// default region).
    pub(crate) fn interaction_subscription_regions(
        &self,
        class: InteractionClassHandle,
    ) -> Option<RegionSet> {
        if self.ddm.default_interactions.contains(&class) {
            return None;
        }
        let regions = self.ddm.interaction_subscriptions.get(&class)?;
        let available = &self.fom.interaction_class(class)?.dimensions;
        self.region_set(regions.iter().copied(), available)
    }

    /// True when an instance known as `known_class` is discovered at once, when it is
    /// registered or when the class is subscribed: some subscribed attribute of the
    /// class uses the default region (it overlaps every update region). Otherwise the
    /// instance waits, undiscovered, for an update that overlaps.
    pub(crate) fn discovers_at_registration(&self, known_class: ObjectClassHandle) -> bool {
        self.subscribed_attributes
            .get(&known_class)
            .is_some_and(|attributes| {
                attributes.iter().any(|a| {
                    self.attribute_subscription_regions(known_class, *a)
                        .is_none()
                })
            })
    }

    /// Forgets the update associations and the scope of an instance that is gone.
    pub(crate) fn forget_associations(&mut self, instance: ObjectInstanceHandle) {
        let d = &mut self.ddm;
        let gone = d
            .associations
            .range((instance, AttributeHandle(0))..=(instance, AttributeHandle(u32::MAX)));
        for ((i, a), regions) in gone {
            for r in regions {
                unindex(&mut d.associated_with, *r, (*i, *a));
            }
        }
        d.associations.retain(|(i, _), _| *i != instance);
        d.update_cache.retain(|(i, _), _| *i != instance);
        self.forget_scope(instance);
    }

    /// Subscribes attributes of `class` with regions, in addition to what is already
    /// subscribed (with the default region or other regions). Instances already
    /// registered are discovered.
    pub fn subscribe_object_class_attributes_with_regions(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        pairs: &[AttributeRegions],
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_attribute_regions(class, pairs)?;
        self.ddm.subscription_cache = None;
        for (attributes, regions) in pairs {
            for a in attributes {
                self.ddm
                    .attribute_subscriptions
                    .entry((class, *a))
                    .or_default()
                    .extend(regions.iter().copied());
            }
        }
        self.resubscribe_object_class(link, class)
    }

    /// Takes these regions off the subscriptions of these attributes; an attribute
    /// left with neither regions nor the default region is no longer subscribed.
    pub fn unsubscribe_object_class_attributes_with_regions(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        pairs: &[AttributeRegions],
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_attribute_regions(class, pairs)?;
        self.ddm.subscription_cache = None;
        for (attributes, regions) in pairs {
            for a in attributes {
                if let Some(set) = self.ddm.attribute_subscriptions.get_mut(&(class, *a)) {
                    set.retain(|r| !regions.contains(r));
                    if set.is_empty() {
                        self.ddm.attribute_subscriptions.remove(&(class, *a));
                    }
                }
            }
        }
        self.resubscribe_object_class(link, class)
    }

    /// Subscribes an interaction class with regions, in addition to what is already
    /// subscribed.
    pub fn subscribe_interaction_class_with_regions(
        &mut self,
        class: InteractionClassHandle,
        regions: &[RegionHandle],
    ) -> Result<(), RtiError> {
        self.live()?;
        let available = &self
            .fom
            .interaction_class(class)
            .ok_or(crate::error::DeclarationError::InteractionClassNotDefined(
                class,
            ))?
            .dimensions;
        self.check_regions(regions, available, RegionContext::InteractionClass(class))?;
        self.ddm
            .interaction_subscriptions
            .entry(class)
            .or_default()
            .extend(regions.iter().copied());
        self.resubscribe_interactions();
        Ok(())
    }

    /// Takes these regions off an interaction class's subscription.
    pub fn unsubscribe_interaction_class_with_regions(
        &mut self,
        class: InteractionClassHandle,
        regions: &[RegionHandle],
    ) -> Result<(), RtiError> {
        self.live()?;
        let available = &self
            .fom
            .interaction_class(class)
            .ok_or(crate::error::DeclarationError::InteractionClassNotDefined(
                class,
            ))?
            .dimensions;
        self.check_regions(regions, available, RegionContext::InteractionClass(class))?;
        if let Some(set) = self.ddm.interaction_subscriptions.get_mut(&class) {
            set.retain(|r| !regions.contains(r));
            if set.is_empty() {
                self.ddm.interaction_subscriptions.remove(&class);
            }
        }
        self.resubscribe_interactions();
        Ok(())
    }

    /// Registers an instance of a published class and associates regions with its
    /// attributes for updates, as `associate_regions_for_updates` would right after:
    /// the pairs are checked first, so a refused call registers nothing.
    pub fn register_object_instance_with_regions(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        pairs: &[AttributeRegions],
        name: Option<&str>,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        self.live()?;
        self.fom
            .object_class(class)
            .ok_or(ObjectError::ObjectClassNotDefined(class))?;
        self.check_attribute_regions(class, pairs)?;
        let instance = self.register_unannounced(link, class, name)?;
        self.associate(instance, pairs)?;
        self.announce_owned(instance);
        Ok(instance)
    }

    /// Associates regions with attributes of a known instance: its updates of them
    /// are sent with these regions (and those associated before).
    pub fn associate_regions_for_updates(
        &mut self,
        instance: ObjectInstanceHandle,
        pairs: &[AttributeRegions],
    ) -> Result<(), RtiError> {
        let attributes = pair_attributes(pairs);
        let was = self.scope_was(instance, attributes.iter().copied());
        self.associate(instance, pairs)?;
        self.announce_update_regions(instance, &attributes, &was);
        Ok(())
    }

    /// [`LocalRti::associate_regions_for_updates`] without telling scope watchers.
    fn associate(
        &mut self,
        instance: ObjectInstanceHandle,
        pairs: &[AttributeRegions],
    ) -> Result<(), RtiError> {
        self.live()?;
        let class = self
            .known
            .get(&instance)
            .ok_or(ObjectError::ObjectInstanceNotKnown(instance))?
            .class;
        self.check_attribute_regions(class, pairs)?;
        for (attributes, regions) in pairs {
            for a in attributes {
                self.ddm
                    .associations
                    .entry((instance, *a))
                    .or_default()
                    .extend(regions.iter().copied());
                for r in regions {
                    self.ddm
                        .associated_with
                        .entry(*r)
                        .or_default()
                        .insert((instance, *a));
                }
                self.recache_update_regions(instance, *a);
            }
        }
        Ok(())
    }

    /// Takes regions off attributes of a known instance; an attribute left with none
    /// is updated with the default region again.
    pub fn unassociate_regions_for_updates(
        &mut self,
        instance: ObjectInstanceHandle,
        pairs: &[AttributeRegions],
    ) -> Result<(), RtiError> {
        self.live()?;
        let class = self
            .known
            .get(&instance)
            .ok_or(ObjectError::ObjectInstanceNotKnown(instance))?
            .class;
        self.check_attribute_regions(class, pairs)?;
        let attributes = pair_attributes(pairs);
        let was = self.scope_was(instance, attributes.iter().copied());
        for (attributes, regions) in pairs {
            for a in attributes {
                if let Some(set) = self.ddm.associations.get_mut(&(instance, *a)) {
                    set.retain(|r| !regions.contains(r));
                    if set.is_empty() {
                        self.ddm.associations.remove(&(instance, *a));
                    }
                }
                for r in regions {
                    unindex(&mut self.ddm.associated_with, *r, (instance, *a));
                }
                self.recache_update_regions(instance, *a);
            }
        }
        self.announce_update_regions(instance, &attributes, &was);
        Ok(())
    }

    /// Asks the owners of `class`'s instances (and its subclasses') for current
    /// values of attributes whose update regions overlap the regions paired with
    /// them. Each pair's regions are filled per attribute; attributes wanting the
    /// same regions go in one request. Owners answer with
    /// `ProvideAttributeValueUpdate` for what they own and overlaps.
    pub fn request_attribute_value_update_with_regions(
        &mut self,
        class: ObjectClassHandle,
        pairs: &[AttributeRegions],
        tag: Bytes,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .object_class(class)
            .ok_or(ObjectError::ObjectClassNotDefined(class))?;
        self.check_attribute_regions(class, pairs)?;
        let mut requests: Vec<(Option<RegionSet>, Vec<AttributeHandle>)> = Vec::new();
        for (attributes, regions) in pairs {
            for a in attributes {
                let available = &self.fom.attributes[a.index()].dimensions;
                let set = self.region_set(regions.iter().copied(), available);
                match requests.iter_mut().find(|(r, _)| *r == set) {
                    Some((_, group)) if !group.contains(a) => group.push(*a),
                    Some(_) => {}
                    None => requests.push((set, vec![*a])),
                }
            }
        }
        for (regions, attributes) in requests {
            self.send(
                Topic::Federation,
                Body::RequestUpdate {
                    instance: None,
                    class,
                    attributes: attributes.into(),
                    tag: tag.clone(),
                    regions,
                },
            );
        }
        Ok(())
    }
}

/// The attributes of attribute / region pairs.
fn pair_attributes(pairs: &[AttributeRegions]) -> Vec<AttributeHandle> {
    pairs.iter().flat_map(|(a, _)| a.iter().copied()).collect()
}

/// Takes an association off a region's entry in `associated_with` (and the entry,
/// once empty).
fn unindex(
    index: &mut BTreeMap<RegionHandle, BTreeSet<(ObjectInstanceHandle, AttributeHandle)>>,
    region: RegionHandle,
    association: (ObjectInstanceHandle, AttributeHandle),
) {
    if let Some(users) = index.get_mut(&region) {
        users.remove(&association);
        if users.is_empty() {
            index.remove(&region);
        }
    }
}

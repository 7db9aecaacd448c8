//! Data distribution management on the [`Federate`] facade: the FOM's dimensions and
//! their queries, and this federate's regions.
//!
//! A dimension has normalized values in `[0, upper bound]` (the FOM's
//! `<upperBound>`; federates normalize their own values, as the FOM's normalization
//! function describes). A region is a set of dimensions with a half-open range
//! `[lower, upper)` on each. Regions belong to the federate that created them. Range
//! bounds set with [`Federate::set_range_bounds`] take effect at
//! [`Federate::commit_region_modifications`], for what is sent after it.
//!
//! Two regions overlap when their ranges overlap in every dimension both have (two
//! ranges overlap when their lower bounds are equal or each starts before the other
//! ends). Data sent or subscribed without regions uses the *default region*, which
//! overlaps every region.

#[cfg(doc)]
use glidepath_core::DdmError;
use glidepath_core::{AttributeRegions, DimensionHandle, RangeBounds, RegionHandle};

use super::*;

impl Federate {
    // ----- support services: dimensions -----------------------------------------------

    /// The handle of a dimension by name.
    pub fn dimension_handle(&self, name: &str) -> Result<DimensionHandle, NameError> {
        self.fom()
            .dimension_by_name(name)
            .ok_or_else(|| NameError::not_found(NameKind::Dimension, name))
    }
    /// The name of a dimension.
    pub fn dimension_name(&self, dimension: DimensionHandle) -> Result<&str, NameError> {
        self.fom()
            .dimension(dimension)
            .map(|d| d.name.as_str())
            .ok_or(NameError::InvalidDimensionHandle(dimension))
    }
    /// A dimension's upper bound: its normalized values lie in `[0, upper bound]`.
    pub fn dimension_upper_bound(&self, dimension: DimensionHandle) -> Result<u64, NameError> {
        self.fom()
            .dimension(dimension)
            .map(|d| d.upper_bound)
            .ok_or(NameError::InvalidDimensionHandle(dimension))
    }
    /// The dimensions the FOM gives an attribute of an object class: the only ones a
    /// region used with it may have.
    pub fn available_dimensions_for_class_attribute(
        &self,
        class: ObjectClassHandle,
        attribute: AttributeHandle,
    ) -> Result<Vec<DimensionHandle>, NameError> {
        let c = self
            .fom()
            .object_class(class)
            .ok_or(NameError::InvalidObjectClassHandle(class))?;
        let a = self
            .fom()
            .attribute(attribute)
            .ok_or(NameError::InvalidAttributeHandle(attribute))?;
        if !c.all_attributes.contains(&attribute) {
            return Err(NameError::AttributeNotDefined { class, attribute });
        }
        Ok(a.dimensions.clone())
    }
    /// The dimensions the FOM gives an interaction class: the only ones a region used
    /// with it may have.
    pub fn available_dimensions_for_interaction_class(
        &self,
        class: InteractionClassHandle,
    ) -> Result<Vec<DimensionHandle>, NameError> {
        self.fom()
            .interaction_class(class)
            .map(|c| c.dimensions.clone())
            .ok_or(NameError::InvalidInteractionClassHandle(class))
    }
    /// The normalized value of a federate handle on the MIM's `HLAfederate`
    /// dimension (the standard's *normalize federate handle*).
    pub fn normalize_federate_handle(&self, federate: FederateHandle) -> u64 {
        u64::from(federate.0)
    }

    // ----- regions ---------------------------------------------------------------------

    /// Creates a region with these dimensions, each with its full range `[0, upper
    /// bound)`; usable at once. Fails with [`DdmError::InvalidDimensionHandle`].
    pub fn create_region(&self, dimensions: &[DimensionHandle]) -> Result<RegionHandle, RtiError> {
        self.shared().call(|r, _| r.create_region(dimensions))
    }
    /// The dimensions a region was created with.
    pub fn dimension_handle_set(
        &self,
        region: RegionHandle,
    ) -> Result<Vec<DimensionHandle>, RtiError> {
        self.shared().read(|r| r.region_dimensions(region))
    }
    /// Sets a region's range on one of its dimensions (`lower <= upper <=` the
    /// dimension's upper bound, else [`DdmError::InvalidRangeBound`]); it takes effect
    /// at [`Federate::commit_region_modifications`].
    pub fn set_range_bounds(
        &self,
        region: RegionHandle,
        dimension: DimensionHandle,
        bounds: RangeBounds,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.set_range_bounds(region, dimension, bounds))
    }
    /// A region's range on one of its dimensions, as last set (committed or not).
    pub fn range_bounds(
        &self,
        region: RegionHandle,
        dimension: DimensionHandle,
    ) -> Result<RangeBounds, RtiError> {
        self.shared().read(|r| r.range_bounds(region, dimension))
    }
    /// Makes the ranges set on these regions take effect for everything sent after
    /// this call. Every region is checked before any is committed.
    pub fn commit_region_modifications(&self, regions: &[RegionHandle]) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.commit_region_modifications(regions))
    }
    /// Deletes a region. Refused with
    /// [`DdmError::RegionInUseForUpdateOrSubscription`] while a subscription or an
    /// update association uses it.
    pub fn delete_region(&self, region: RegionHandle) -> Result<(), RtiError> {
        self.shared().call(|r, _| r.delete_region(region))
    }

    // ----- attribute scope advisories ----------------------------------------------------

    /// Turns the attribute scope advisory switch on (it starts off): the ambassador
    /// is told [`crate::FederateAmbassador::attributes_in_scope`] when an attribute it
    /// subscribes of a discovered instance gains an owner whose update regions
    /// overlap its subscription regions, and `attributes_out_of_scope` when that
    /// ends. Owners tell where their instances are in answer, so what is in scope
    /// already comes in as those answers arrive. Refused with
    /// [`DdmError::AttributeScopeAdvisorySwitchIsOn`] when already on.
    pub fn enable_attribute_scope_advisory_switch(&self) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.enable_attribute_scope_advisory_switch())
    }
    /// Turns the attribute scope advisory switch off. Refused with
    /// [`DdmError::AttributeScopeAdvisorySwitchIsOff`] when already off.
    pub fn disable_attribute_scope_advisory_switch(&self) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.disable_attribute_scope_advisory_switch())
    }

    // ----- regions in use ----------------------------------------------------------------

    /// Subscribes attributes of `class` with regions, each pair naming attributes and
    /// the regions to subscribe them with, in addition to what is subscribed already
    /// (with the default region or other regions). An update of a subscribed attribute
    /// is reflected only if one of its subscription regions overlaps one of the
    /// regions the update was sent with. Each region must be this federate's and have
    /// only dimensions available to the attributes it is paired with
    /// ([`glidepath_core::DdmError::InvalidRegionContext`]).
    pub fn subscribe_object_class_attributes_with_regions(
        &self,
        class: ObjectClassHandle,
        pairs: &[(&[AttributeHandle], &[RegionHandle])],
    ) -> Result<(), RtiError> {
        let pairs = owned_pairs(pairs);
        self.shared()
            .call(|r, l| r.subscribe_object_class_attributes_with_regions(l, class, &pairs))
    }
    /// The passive form of
    /// [`Federate::subscribe_object_class_attributes_with_regions`]; glidepath sends
    /// no relevance advisories, so it subscribes the same way.
    pub fn subscribe_object_class_attributes_passively_with_regions(
        &self,
        class: ObjectClassHandle,
        pairs: &[(&[AttributeHandle], &[RegionHandle])],
    ) -> Result<(), RtiError> {
        self.subscribe_object_class_attributes_with_regions(class, pairs)
    }
    /// Takes these regions off the subscriptions of these attributes; an attribute
    /// left with no region (and not subscribed with the default region) is no longer
    /// subscribed.
    pub fn unsubscribe_object_class_attributes_with_regions(
        &self,
        class: ObjectClassHandle,
        pairs: &[(&[AttributeHandle], &[RegionHandle])],
    ) -> Result<(), RtiError> {
        let pairs = owned_pairs(pairs);
        self.shared()
            .call(|r, l| r.unsubscribe_object_class_attributes_with_regions(l, class, &pairs))
    }
    /// Subscribes an interaction class with regions, in addition to what is
    /// subscribed already: an interaction is received only if one of these overlaps
    /// one of the regions it was sent with.
    pub fn subscribe_interaction_class_with_regions(
        &self,
        class: InteractionClassHandle,
        regions: &[RegionHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.subscribe_interaction_class_with_regions(class, regions))
    }
    /// The passive form of [`Federate::subscribe_interaction_class_with_regions`]
    /// (the same: glidepath sends no relevance advisories).
    pub fn subscribe_interaction_class_passively_with_regions(
        &self,
        class: InteractionClassHandle,
        regions: &[RegionHandle],
    ) -> Result<(), RtiError> {
        self.subscribe_interaction_class_with_regions(class, regions)
    }
    /// Takes these regions off an interaction class's subscription.
    pub fn unsubscribe_interaction_class_with_regions(
        &self,
        class: InteractionClassHandle,
        regions: &[RegionHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, _| r.unsubscribe_interaction_class_with_regions(class, regions))
    }
    /// Registers an instance of a published class (under a name the executive
    /// picks, or one this federate reserved) and associates regions with its
    /// attributes for updates. The pairs are checked before anything is registered.
    pub fn register_object_instance_with_regions(
        &self,
        class: ObjectClassHandle,
        pairs: &[(&[AttributeHandle], &[RegionHandle])],
        name: Option<&str>,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        let pairs = owned_pairs(pairs);
        self.shared()
            .call(|r, l| r.register_object_instance_with_regions(l, class, &pairs, name))
    }
    /// Associates regions with attributes of a known instance: this federate's
    /// updates of them are sent with these regions (and those associated before).
    pub fn associate_regions_for_updates(
        &self,
        instance: ObjectInstanceHandle,
        pairs: &[(&[AttributeHandle], &[RegionHandle])],
    ) -> Result<(), RtiError> {
        let pairs = owned_pairs(pairs);
        self.shared()
            .call(|r, _| r.associate_regions_for_updates(instance, &pairs))
    }
    /// Takes regions off attributes of a known instance; an attribute left with none
    /// is updated with the default region again.
    pub fn unassociate_regions_for_updates(
        &self,
        instance: ObjectInstanceHandle,
        pairs: &[(&[AttributeHandle], &[RegionHandle])],
    ) -> Result<(), RtiError> {
        let pairs = owned_pairs(pairs);
        self.shared()
            .call(|r, _| r.unassociate_regions_for_updates(instance, &pairs))
    }
    /// Asks the owners of instances of `class` (and its subclasses) for current
    /// values of the attributes whose update regions overlap the regions paired with
    /// them; each owner gets `provide_attribute_value_update` for what it owns and
    /// overlaps. An update sent without regions (the default region) overlaps all.
    pub fn request_attribute_value_update_with_regions(
        &self,
        class: ObjectClassHandle,
        pairs: &[(&[AttributeHandle], &[RegionHandle])],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let (pairs, tag) = (owned_pairs(pairs), tag.into());
        self.shared()
            .call(|r, _| r.request_attribute_value_update_with_regions(class, &pairs, tag))
    }
    /// Sends an interaction with regions, in receive order: subscribers whose
    /// regions overlap none of these receive nothing. No regions is the default
    /// region.
    pub fn send_interaction_with_regions(
        &self,
        class: InteractionClassHandle,
        parameters: impl IntoIterator<Item = (ParameterHandle, Bytes)>,
        regions: &[RegionHandle],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let (values, tag) = (parameters.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, _| r.send_interaction_with_regions(class, values, regions, tag, None))
    }
    /// Sends an interaction with regions and a time stamp (time-stamp order when the
    /// FOM says so and this federate is regulating).
    pub fn send_interaction_with_regions_at(
        &self,
        class: InteractionClassHandle,
        parameters: impl IntoIterator<Item = (ParameterHandle, Bytes)>,
        regions: &[RegionHandle],
        tag: impl Into<Bytes>,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        let time = logical_time(time)?;
        let (values, tag) = (parameters.into_iter().collect(), tag.into());
        self.shared()
            .call(|r, _| r.send_interaction_with_regions(class, values, regions, tag, Some(time)))
    }
}

/// Attribute / region pairs as the core takes them.
fn owned_pairs(pairs: &[(&[AttributeHandle], &[RegionHandle])]) -> Vec<AttributeRegions> {
    pairs
        .iter()
        .map(|(a, r)| (a.to_vec(), r.to_vec()))
        .collect()
}

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
use glidepath_core::{DimensionHandle, RangeBounds, RegionHandle};

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
}

//! Data distribution management in the local RTI component: this federate's
//! regions (create, set and get range bounds, commit, delete) and the dimension
//! queries that need them.
//!
//! Regions are local: only their creator uses them, and nothing travels when one is
//! created, changed or deleted. What others see is a region's *committed* extent, in
//! the messages sent with it. `set_range_bounds` edits a region's bounds; they take
//! effect at `commit_region_modifications`.

use std::collections::{BTreeMap, BTreeSet};

use super::*;
use crate::error::{DdmError, RtiError};
use crate::region::{Extent, RangeBounds, RegionHandle};
use crate::DimensionHandle;

/// One region this federate created.
pub(crate) struct OwnRegion {
    /// Its dimensions, as given at creation.
    pub(crate) dimensions: BTreeSet<DimensionHandle>,
    /// The bounds as last set, committed or not.
    pub(crate) bounds: BTreeMap<DimensionHandle, RangeBounds>,
    /// The bounds in effect since the last commit (or creation).
    pub(crate) committed: Extent,
}

/// This federate's regions.
#[derive(Default)]
pub(crate) struct DdmState {
    /// The serial of the last region created.
    pub(crate) last_serial: u32,
    pub(crate) regions: BTreeMap<RegionHandle, OwnRegion>,
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
        for r in regions {
            let region = self.ddm.regions.get_mut(r).expect("checked above");
            region.committed = Extent::new(region.bounds.iter().map(|(d, b)| (*d, *b)));
        }
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
    pub(crate) fn region_in_use(&self, _region: RegionHandle) -> bool {
        false
    }
}

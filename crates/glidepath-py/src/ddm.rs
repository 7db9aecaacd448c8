//! Data distribution management on `glidepath.Federate`: dimensions, regions and the
//! services that use them (IEEE 1516.1-2010 chapter 9), as the Rust facade has them.
//!
//! A region handle is an `int` (the creating federate's handle in the high 32 bits,
//! its serial in the low ones); a range is `(lower, upper)`, half-open. Object-class
//! services take `pairs`, a list of `(attributes, regions)` tuples, as the standard's
//! attribute-handle-set / region-handle-set pairs.

use glidepath::{
    AttributeHandle, DimensionHandle, FederateHandle, InteractionClassHandle, ObjectClassHandle,
    ObjectInstanceHandle, ParameterHandle, RangeBounds, RegionHandle,
};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::convert::{values_from_py, with_time, PyTime};
use crate::errors::name_error;
use crate::federate::{tag_bytes, PyFederate};

fn region(raw: u64) -> RegionHandle {
    RegionHandle {
        federate: FederateHandle((raw >> 32) as u32),
        serial: raw as u32,
    }
}

fn region_to_py(r: RegionHandle) -> u64 {
    (u64::from(r.federate.0) << 32) | u64::from(r.serial)
}

fn to_regions(raw: Vec<u64>) -> Vec<RegionHandle> {
    raw.into_iter().map(region).collect()
}

/// `[(attributes, regions), ...]` as the facade takes them.
type Pairs = Vec<(Vec<AttributeHandle>, Vec<RegionHandle>)>;

fn to_pairs(raw: Vec<(Vec<u32>, Vec<u64>)>) -> Pairs {
    raw.into_iter()
        .map(|(a, r)| (a.into_iter().map(AttributeHandle).collect(), to_regions(r)))
        .collect()
}

fn borrowed(p: &Pairs) -> Vec<(&[AttributeHandle], &[RegionHandle])> {
    p.iter()
        .map(|(a, r)| (a.as_slice(), r.as_slice()))
        .collect()
}

#[pymethods]
impl PyFederate {
    // ----- dimensions -------------------------------------------------------------------

    /// The dimension called `name` in the FOM.
    fn get_dimension_handle(&self, name: &str) -> PyResult<u32> {
        self.fed()
            .dimension_handle(name)
            .map(|d| d.0)
            .map_err(name_error)
    }
    /// A dimension's name.
    fn get_dimension_name(&self, dimension: u32) -> PyResult<String> {
        self.fed()
            .dimension_name(DimensionHandle(dimension))
            .map(str::to_string)
            .map_err(name_error)
    }
    /// A dimension's upper bound: its normalized values lie in `[0, upper bound]`.
    fn get_dimension_upper_bound(&self, dimension: u32) -> PyResult<u64> {
        self.fed()
            .dimension_upper_bound(DimensionHandle(dimension))
            .map_err(name_error)
    }
    /// The dimensions the FOM gives an attribute of an object class.
    fn get_available_dimensions_for_class_attribute(
        &self,
        object_class: u32,
        attribute: u32,
    ) -> PyResult<Vec<u32>> {
        self.fed()
            .available_dimensions_for_class_attribute(
                ObjectClassHandle(object_class),
                AttributeHandle(attribute),
            )
            .map(|d| d.into_iter().map(|d| d.0).collect())
            .map_err(name_error)
    }
    /// The dimensions the FOM gives an interaction class.
    fn get_available_dimensions_for_interaction_class(
        &self,
        interaction_class: u32,
    ) -> PyResult<Vec<u32>> {
        self.fed()
            .available_dimensions_for_interaction_class(InteractionClassHandle(interaction_class))
            .map(|d| d.into_iter().map(|d| d.0).collect())
            .map_err(name_error)
    }

    // ----- regions ------------------------------------------------------------------------

    /// Creates a region over `dimensions`, each at its full range; usable at once.
    fn create_region(&self, py: Python<'_>, dimensions: Vec<u32>) -> PyResult<u64> {
        let dims: Vec<DimensionHandle> = dimensions.into_iter().map(DimensionHandle).collect();
        self.call(py, |f| f.create_region(&dims)).map(region_to_py)
    }
    /// The dimensions a region was created with.
    fn get_dimension_handle_set(&self, py: Python<'_>, region_handle: u64) -> PyResult<Vec<u32>> {
        self.call(py, |f| f.dimension_handle_set(region(region_handle)))
            .map(|d| d.into_iter().map(|d| d.0).collect())
    }
    /// Sets a region's range `[lower, upper)` on one of its dimensions; it takes
    /// effect at `commit_region_modifications`.
    fn set_range_bounds(
        &self,
        py: Python<'_>,
        region_handle: u64,
        dimension: u32,
        bounds: (u64, u64),
    ) -> PyResult<()> {
        let (lower, upper) = bounds;
        self.call(py, |f| {
            f.set_range_bounds(
                region(region_handle),
                DimensionHandle(dimension),
                RangeBounds { lower, upper },
            )
        })
    }
    /// A region's range on one of its dimensions, `(lower, upper)`, as last set.
    fn get_range_bounds(
        &self,
        py: Python<'_>,
        region_handle: u64,
        dimension: u32,
    ) -> PyResult<(u64, u64)> {
        self.call(py, |f| {
            f.range_bounds(region(region_handle), DimensionHandle(dimension))
        })
        .map(|b| (b.lower, b.upper))
    }
    /// Makes the ranges set on these regions take effect for what is sent after.
    fn commit_region_modifications(&self, py: Python<'_>, regions: Vec<u64>) -> PyResult<()> {
        let r = to_regions(regions);
        self.call(py, |f| f.commit_region_modifications(&r))
    }
    /// Deletes a region (refused with `RegionInUseForUpdateOrSubscription` while used).
    fn delete_region(&self, py: Python<'_>, region_handle: u64) -> PyResult<()> {
        self.call(py, |f| f.delete_region(region(region_handle)))
    }
    /// Turns the attribute scope advisory switch on: `attributes_in_scope` and
    /// `attributes_out_of_scope` callbacks follow.
    fn enable_attribute_scope_advisory_switch(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.enable_attribute_scope_advisory_switch())
    }
    /// Turns the attribute scope advisory switch off.
    fn disable_attribute_scope_advisory_switch(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.disable_attribute_scope_advisory_switch())
    }

    // ----- regions in use ----------------------------------------------------------------

    /// Subscribes attributes of `object_class` within regions: `pairs` is a list of
    /// `(attributes, regions)`.
    fn subscribe_object_class_attributes_with_regions(
        &self,
        py: Python<'_>,
        object_class: u32,
        pairs: Vec<(Vec<u32>, Vec<u64>)>,
    ) -> PyResult<()> {
        let p = to_pairs(pairs);
        self.call(py, |f| {
            f.subscribe_object_class_attributes_with_regions(
                ObjectClassHandle(object_class),
                &borrowed(&p),
            )
        })
    }
    /// Takes those regions off the subscription of those attributes.
    fn unsubscribe_object_class_attributes_with_regions(
        &self,
        py: Python<'_>,
        object_class: u32,
        pairs: Vec<(Vec<u32>, Vec<u64>)>,
    ) -> PyResult<()> {
        let p = to_pairs(pairs);
        self.call(py, |f| {
            f.unsubscribe_object_class_attributes_with_regions(
                ObjectClassHandle(object_class),
                &borrowed(&p),
            )
        })
    }
    /// Subscribes `interaction_class` within `regions`.
    fn subscribe_interaction_class_with_regions(
        &self,
        py: Python<'_>,
        interaction_class: u32,
        regions: Vec<u64>,
    ) -> PyResult<()> {
        let r = to_regions(regions);
        self.call(py, |f| {
            f.subscribe_interaction_class_with_regions(
                InteractionClassHandle(interaction_class),
                &r,
            )
        })
    }
    /// Takes `regions` off the subscription of `interaction_class`.
    fn unsubscribe_interaction_class_with_regions(
        &self,
        py: Python<'_>,
        interaction_class: u32,
        regions: Vec<u64>,
    ) -> PyResult<()> {
        let r = to_regions(regions);
        self.call(py, |f| {
            f.unsubscribe_interaction_class_with_regions(
                InteractionClassHandle(interaction_class),
                &r,
            )
        })
    }
    /// Registers an instance whose attributes are updated within regions.
    #[pyo3(signature = (object_class, pairs, name = None))]
    fn register_object_instance_with_regions(
        &self,
        py: Python<'_>,
        object_class: u32,
        pairs: Vec<(Vec<u32>, Vec<u64>)>,
        name: Option<String>,
    ) -> PyResult<u64> {
        let p = to_pairs(pairs);
        self.call(py, |f| {
            f.register_object_instance_with_regions(
                ObjectClassHandle(object_class),
                &borrowed(&p),
                name.as_deref(),
            )
        })
        .map(|i| i.0)
    }
    /// Updates of these attributes of `instance` go out within these regions.
    fn associate_regions_for_updates(
        &self,
        py: Python<'_>,
        instance: u64,
        pairs: Vec<(Vec<u32>, Vec<u64>)>,
    ) -> PyResult<()> {
        let p = to_pairs(pairs);
        self.call(py, |f| {
            f.associate_regions_for_updates(ObjectInstanceHandle(instance), &borrowed(&p))
        })
    }
    /// Takes those regions off the updates of those attributes of `instance`.
    fn unassociate_regions_for_updates(
        &self,
        py: Python<'_>,
        instance: u64,
        pairs: Vec<(Vec<u32>, Vec<u64>)>,
    ) -> PyResult<()> {
        let p = to_pairs(pairs);
        self.call(py, |f| {
            f.unassociate_regions_for_updates(ObjectInstanceHandle(instance), &borrowed(&p))
        })
    }
    /// Asks the owners for the current values of attributes within regions.
    #[pyo3(signature = (object_class, pairs, tag = None))]
    fn request_attribute_value_update_with_regions(
        &self,
        py: Python<'_>,
        object_class: u32,
        pairs: Vec<(Vec<u32>, Vec<u64>)>,
        tag: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let (p, tag) = (to_pairs(pairs), tag_bytes(tag));
        self.call(py, |f| {
            f.request_attribute_value_update_with_regions(
                ObjectClassHandle(object_class),
                &borrowed(&p),
                tag,
            )
        })
    }
    /// Sends an interaction within `regions`: subscribers whose regions overlap none
    /// of them receive nothing (with `time`, at that time stamp).
    #[pyo3(signature = (interaction_class, parameters, regions, tag = None, time = None))]
    fn send_interaction_with_regions(
        &self,
        py: Python<'_>,
        interaction_class: u32,
        parameters: &Bound<'_, PyDict>,
        regions: Vec<u64>,
        tag: Option<Vec<u8>>,
        time: Option<PyTime>,
    ) -> PyResult<()> {
        let parameters = values_from_py(parameters, ParameterHandle)?;
        let (class, r, tag) = (
            InteractionClassHandle(interaction_class),
            to_regions(regions),
            tag_bytes(tag),
        );
        match time {
            None => self.call(py, |f| {
                f.send_interaction_with_regions(class, parameters, &r, tag)
            }),
            Some(time) => with_time!(time, |t| self.call(py, |f| {
                f.send_interaction_with_regions_at(class, parameters, &r, tag, t)
            })),
        }
    }
}

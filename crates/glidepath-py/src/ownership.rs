//! Ownership management on `glidepath.Federate`: divesting, acquiring and querying
//! the ownership of instance attributes (IEEE 1516.1-2010 chapter 7), as the Rust
//! facade has them.
//!
//! Instances are `int`s, attributes lists of `int`s. Each instance attribute has at
//! most one owner, and only the owner may update it; the outcome of most services
//! arrives as a callback (`attribute_ownership_acquisition_notification`,
//! `request_attribute_ownership_release`, `inform_attribute_ownership`, ...).

use glidepath::{AttributeHandle, ObjectInstanceHandle};
use pyo3::prelude::*;

use crate::federate::{tag_bytes, PyFederate};

fn attrs(raw: Vec<u32>) -> Vec<AttributeHandle> {
    raw.into_iter().map(AttributeHandle).collect()
}

#[pymethods]
impl PyFederate {
    // ----- divestiture --------------------------------------------------------------------

    /// Gives up `attributes` of `instance` at once: each goes to the first federate
    /// waiting to acquire it, or to nobody (then publishers are offered it).
    fn unconditional_attribute_ownership_divestiture(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
    ) -> PyResult<()> {
        let a = attrs(attributes);
        self.call(py, |f| {
            f.unconditional_attribute_ownership_divestiture(ObjectInstanceHandle(instance), &a)
        })
    }
    /// Offers `attributes` of `instance`: publishers get
    /// `request_attribute_ownership_assumption`; this federate keeps them until it
    /// calls `confirm_divestiture` after `request_divestiture_confirmation`.
    #[pyo3(signature = (instance, attributes, tag = None))]
    fn negotiated_attribute_ownership_divestiture(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
        tag: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let (a, tag) = (attrs(attributes), tag_bytes(tag));
        self.call(py, |f| {
            f.negotiated_attribute_ownership_divestiture(ObjectInstanceHandle(instance), &a, tag)
        })
    }
    /// Hands offered attributes to the federates waiting for them (the answer to
    /// `request_divestiture_confirmation`); `NoAcquisitionPending` when nobody waits.
    #[pyo3(signature = (instance, attributes, tag = None))]
    fn confirm_divestiture(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
        tag: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let (a, tag) = (attrs(attributes), tag_bytes(tag));
        self.call(py, |f| {
            f.confirm_divestiture(ObjectInstanceHandle(instance), &a, tag)
        })
    }
    /// Gives up those of `attributes` some federate waits to acquire and returns
    /// them (the positive answer to `request_attribute_ownership_release`).
    fn attribute_ownership_divestiture_if_wanted(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
    ) -> PyResult<Vec<u32>> {
        let a = attrs(attributes);
        let divested = self.call(py, |f| {
            f.attribute_ownership_divestiture_if_wanted(ObjectInstanceHandle(instance), &a)
        })?;
        Ok(divested.into_iter().map(|h| h.0).collect())
    }
    /// Withdraws an offer made with `negotiated_attribute_ownership_divestiture`.
    fn cancel_negotiated_attribute_ownership_divestiture(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
    ) -> PyResult<()> {
        let a = attrs(attributes);
        self.call(py, |f| {
            f.cancel_negotiated_attribute_ownership_divestiture(ObjectInstanceHandle(instance), &a)
        })
    }

    // ----- acquisition --------------------------------------------------------------------

    /// Asks for `attributes` of a known instance this federate publishes: unowned
    /// ones are acquired at once, owners are asked to release the others
    /// (`attribute_ownership_acquisition_notification` when acquired).
    #[pyo3(signature = (instance, attributes, tag = None))]
    fn attribute_ownership_acquisition(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
        tag: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let (a, tag) = (attrs(attributes), tag_bytes(tag));
        self.call(py, |f| {
            f.attribute_ownership_acquisition(ObjectInstanceHandle(instance), &a, tag)
        })
    }
    /// Asks for `attributes` only if nobody holds on to them: unowned or offered ones
    /// are acquired, the others reported with `attribute_ownership_unavailable`.
    fn attribute_ownership_acquisition_if_available(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
    ) -> PyResult<()> {
        let a = attrs(attributes);
        self.call(py, |f| {
            f.attribute_ownership_acquisition_if_available(ObjectInstanceHandle(instance), &a)
        })
    }
    /// Refuses to release attributes this federate was asked for (the negative
    /// answer to `request_attribute_ownership_release`).
    fn attribute_ownership_release_denied(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
    ) -> PyResult<()> {
        let a = attrs(attributes);
        self.call(py, |f| {
            f.attribute_ownership_release_denied(ObjectInstanceHandle(instance), &a)
        })
    }
    /// Cancels a pending acquisition:
    /// `confirm_attribute_ownership_acquisition_cancellation` follows.
    fn cancel_attribute_ownership_acquisition(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
    ) -> PyResult<()> {
        let a = attrs(attributes);
        self.call(py, |f| {
            f.cancel_attribute_ownership_acquisition(ObjectInstanceHandle(instance), &a)
        })
    }

    // ----- queries ------------------------------------------------------------------------

    /// Asks who owns `attribute` of `instance`: answered by `inform_attribute_ownership`,
    /// `attribute_is_not_owned` or `attribute_is_owned_by_rti`.
    fn query_attribute_ownership(
        &self,
        py: Python<'_>,
        instance: u64,
        attribute: u32,
    ) -> PyResult<()> {
        self.call(py, |f| {
            f.query_attribute_ownership(ObjectInstanceHandle(instance), AttributeHandle(attribute))
        })
    }
    /// True when this federate owns `attribute` of `instance` (answered locally).
    fn is_attribute_owned_by_federate(
        &self,
        py: Python<'_>,
        instance: u64,
        attribute: u32,
    ) -> PyResult<bool> {
        self.call(py, |f| {
            f.is_attribute_owned_by_federate(
                ObjectInstanceHandle(instance),
                AttributeHandle(attribute),
            )
        })
    }
}

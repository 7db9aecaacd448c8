//! Ownership management on the [`Federate`] facade: divesting, acquiring and
//! querying the ownership of instance attributes.
//!
//! Each instance attribute has at most one owner, and only the owner may update it
//! (others get `AttributeNotOwned`, checked locally). The federation's executive
//! keeps the one registry of owners and makes every transfer one step, so at no
//! instant do two federates own the same attribute, over any transport. The
//! federate that registers an instance owns the attributes it publishes and
//! `HLAprivilegeToDeleteObject`; a federate acquires only attributes it publishes at
//! the instance's known class.

use bytes::Bytes;
use glidepath_core::{AttributeHandle, ObjectInstanceHandle, RtiError};

use super::Federate;

impl Federate {
    /// Gives up attributes at once. Each goes to the first federate waiting to
    /// acquire it (*attribute ownership acquisition notification* there), or to
    /// nobody, and is then offered to the federates that publish it (*request
    /// attribute ownership assumption*).
    pub fn unconditional_attribute_ownership_divestiture(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.unconditional_attribute_ownership_divestiture(l, instance, attributes))
    }

    /// Offers attributes: publishers get *request attribute ownership assumption*;
    /// when one asks to acquire, this federate gets *request divestiture
    /// confirmation* and keeps the attributes until it calls
    /// [`Federate::confirm_divestiture`].
    pub fn negotiated_attribute_ownership_divestiture(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.negotiated_attribute_ownership_divestiture(l, instance, attributes, tag))
    }

    /// Hands offered attributes to the federates waiting for them (answers *request
    /// divestiture confirmation*); fails with `NoAcquisitionPending` when nobody waits
    /// for one of them any more.
    pub fn confirm_divestiture(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.confirm_divestiture(l, instance, attributes, tag))
    }

    /// Gives up those of `attributes` some federate waits to acquire, and returns
    /// them (the positive answer to *request attribute ownership release*).
    pub fn attribute_ownership_divestiture_if_wanted(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<Vec<AttributeHandle>, RtiError> {
        self.shared()
            .call(|r, l| r.attribute_ownership_divestiture_if_wanted(l, instance, attributes))
    }

    /// Withdraws an offer made with
    /// [`Federate::negotiated_attribute_ownership_divestiture`]. Federates that
    /// acquire if available get *attribute ownership unavailable*; if others still
    /// wait, this federate gets *request attribute ownership release*.
    pub fn cancel_negotiated_attribute_ownership_divestiture(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared().call(|r, l| {
            r.cancel_negotiated_attribute_ownership_divestiture(l, instance, attributes)
        })
    }

    /// Asks for attributes of a known instance this federate publishes. Unowned ones
    /// are acquired at once; for owned ones the owner gets *request attribute
    /// ownership release* (or, if it offers them, *request divestiture
    /// confirmation*). Each ends with *attribute ownership acquisition
    /// notification*, *attribute ownership unavailable*, or a cancellation.
    pub fn attribute_ownership_acquisition(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: impl Into<Bytes>,
    ) -> Result<(), RtiError> {
        let tag = tag.into();
        self.shared()
            .call(|r, l| r.attribute_ownership_acquisition(l, instance, attributes, tag))
    }

    /// Asks for attributes only if nobody holds on to them: unowned ones are
    /// acquired, offered ones when their owner confirms, the others are reported
    /// with *attribute ownership unavailable*.
    pub fn attribute_ownership_acquisition_if_available(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.attribute_ownership_acquisition_if_available(l, instance, attributes))
    }

    /// Refuses to release attributes this federate was asked for (the negative
    /// answer to *request attribute ownership release*); the federates waiting for
    /// them get *attribute ownership unavailable*, so their acquisitions end.
    pub fn attribute_ownership_release_denied(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.attribute_ownership_release_denied(l, instance, attributes))
    }

    /// Cancels a pending acquisition: *confirm attribute ownership acquisition
    /// cancellation* follows for the attributes still pending; an acquisition that
    /// ended first ends with its own callback.
    pub fn cancel_attribute_ownership_acquisition(
        &self,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.cancel_attribute_ownership_acquisition(l, instance, attributes))
    }

    /// Asks who owns an attribute: the answer arrives as *inform attribute
    /// ownership* or *attribute is not owned*.
    pub fn query_attribute_ownership(
        &self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.query_attribute_ownership(l, instance, attribute))
    }

    /// True when this federate owns the attribute (answered locally).
    pub fn is_attribute_owned_by_federate(
        &self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) -> Result<bool, RtiError> {
        self.shared()
            .read(|r| r.is_attribute_owned_by_federate(instance, attribute))
    }
}

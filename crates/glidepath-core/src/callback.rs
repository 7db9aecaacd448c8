//! Callbacks the RTI delivers to a federate (the federate ambassador's services).

use bytes::Bytes;

use crate::message::Values;
use crate::types::{FederateHandle, LogicalTime, ObjectInstanceHandle};
use crate::{
    AttributeHandle, InteractionClassHandle, ObjectClassHandle, OrderType, ParameterHandle,
    TransportationType,
};

/// Where a delivered message came from and how it travelled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MessageInfo {
    /// The federate that sent it.
    pub producer: FederateHandle,
    /// The sender's sequence number (unique per sender).
    pub seq: u64,
    /// The order it was sent with.
    pub sent_order: OrderType,
    /// The order it was delivered in (time-stamp order only to constrained federates).
    pub received_order: OrderType,
    pub transport: TransportationType,
    /// The time stamp, when one was supplied.
    pub time: Option<LogicalTime>,
    /// Wall-clock publication time in nanoseconds.
    pub publish_time_ns: u64,
}

/// One callback.
#[derive(Clone, Debug, PartialEq)]
pub enum Callback {
    SynchronizationPointRegistrationSucceeded {
        label: String,
    },
    SynchronizationPointRegistrationFailed {
        label: String,
        reason: String,
    },
    AnnounceSynchronizationPoint {
        label: String,
        tag: Bytes,
    },
    FederationSynchronized {
        label: String,
        failed: Vec<FederateHandle>,
    },
    ObjectInstanceNameReservationSucceeded {
        name: String,
    },
    ObjectInstanceNameReservationFailed {
        name: String,
    },
    DiscoverObjectInstance {
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        name: String,
        producer: FederateHandle,
    },
    ReflectAttributeValues {
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        values: Values<AttributeHandle>,
        tag: Bytes,
        info: MessageInfo,
    },
    ReceiveInteraction {
        class: InteractionClassHandle,
        values: Values<ParameterHandle>,
        tag: Bytes,
        info: MessageInfo,
    },
    RemoveObjectInstance {
        instance: ObjectInstanceHandle,
        tag: Bytes,
        info: MessageInfo,
    },
    /// These attributes of a discovered instance came into scope (data distribution
    /// management, while the attribute scope advisory switch is on): this federate
    /// subscribes them, another federate owns them, and the owner's update regions
    /// overlap this federate's subscription regions (the default region overlaps
    /// every region). Reflections of them may follow.
    AttributesInScope {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
    },
    /// These attributes went out of scope: the overlap ended, or the subscription,
    /// or another federate's ownership.
    AttributesOutOfScope {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
    },
    ProvideAttributeValueUpdate {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    },
    TimeRegulationEnabled {
        time: LogicalTime,
    },
    TimeConstrainedEnabled {
        time: LogicalTime,
    },
    TimeAdvanceGrant {
        time: LogicalTime,
    },
    /// Another federate offers these attributes (negotiated or unconditional
    /// divestiture); this federate publishes them at the instance's known class and
    /// may acquire them.
    RequestAttributeOwnershipAssumption {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    },
    /// A federate wants attributes this federate offers (negotiated divestiture):
    /// answer with `confirm_divestiture` (or cancel the divestiture).
    RequestDivestitureConfirmation {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
    },
    /// This federate now owns these attributes.
    AttributeOwnershipAcquisitionNotification {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    },
    /// These attributes cannot be acquired now (owned and not offered, or the owner
    /// denied their release, or the offer was withdrawn, or the instance was deleted).
    AttributeOwnershipUnavailable {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
    },
    /// A federate wants attributes this federate owns: release them with
    /// `attribute_ownership_divestiture_if_wanted`, or refuse with
    /// `attribute_ownership_release_denied`.
    RequestAttributeOwnershipRelease {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    },
    /// The acquisition of these attributes is cancelled.
    ConfirmAttributeOwnershipAcquisitionCancellation {
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
    },
    /// The answer to `query_attribute_ownership`: `owner` owns the attribute.
    InformAttributeOwnership {
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
        owner: FederateHandle,
    },
    /// The answer to `query_attribute_ownership`: nobody owns the attribute.
    AttributeIsNotOwned {
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    },
    /// The answer to `query_attribute_ownership`: the RTI itself owns the attribute
    /// (attributes of the management object model's instances).
    AttributeIsOwnedByRti {
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    },
    /// Save now (the federation save's time, if it had one, is granted).
    InitiateFederateSave {
        label: String,
        time: Option<LogicalTime>,
    },
    FederationSaved {
        label: String,
    },
    FederationNotSaved {
        label: String,
        reason: crate::save::SaveFailureReason,
    },
    FederationSaveStatusResponse {
        statuses: Vec<(FederateHandle, crate::save::SaveStatus)>,
    },
    RequestFederationRestoreSucceeded {
        label: String,
    },
    RequestFederationRestoreFailed {
        label: String,
        reason: String,
    },
    FederationRestoreBegun {
        label: String,
    },
    /// The federate's RTI state is the saved one again; it restores its own from
    /// `user_state` (what it saved) and calls federate restore complete. It is now
    /// `handle` and `name`, in the place of the saved federate `saved_as`.
    InitiateFederateRestore {
        label: String,
        name: String,
        handle: FederateHandle,
        saved_as: FederateHandle,
        user_state: Bytes,
    },
    FederationRestored {
        label: String,
    },
    FederationNotRestored {
        label: String,
        reason: crate::save::RestoreFailureReason,
    },
    FederationRestoreStatusResponse {
        statuses: Vec<(FederateHandle, crate::save::RestoreStatus)>,
    },
}

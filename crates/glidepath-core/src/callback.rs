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
}

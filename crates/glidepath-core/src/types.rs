//! Handles and the logical time type shared by every service.

use std::fmt;

/// A joined federate, unique within its federation execution for the execution's life.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct FederateHandle(pub u32);

impl FederateHandle {
    /// The sender handle used by the federation execution itself for its notifications.
    pub const EXECUTIVE: FederateHandle = FederateHandle(u32::MAX);
}

impl fmt::Display for FederateHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::EXECUTIVE {
            write!(f, "executive")
        } else {
            write!(f, "federate#{}", self.0)
        }
    }
}

/// A federation execution, as numbered by the process or server hosting it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct FederationId(pub u64);

/// An object instance, unique within its federation execution.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ObjectInstanceHandle(pub u64);

impl fmt::Display for ObjectInstanceHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "object#{}", self.0)
    }
}

pub use crate::logical_time::{LogicalTime, LogicalTimeInterval, TimeRepresentation, TimeValue};

/// What a federate asks the RTI to do with its objects when it resigns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ResignAction {
    /// Leave the objects registered; every attribute the federate owns goes to a
    /// federate waiting to acquire it, or to nobody.
    UnconditionallyDivestAttributes,
    /// Delete every object whose `HLAprivilegeToDeleteObject` the federate holds;
    /// fails with `FederateOwnsAttributes` if it owns attributes of other objects.
    DeleteObjects,
    /// Cancel the federate's pending ownership acquisitions; fails with
    /// `FederateOwnsAttributes` if it still owns instance attributes.
    CancelPendingOwnershipAcquisitions,
    /// Delete the objects the federate may delete (it holds their
    /// `HLAprivilegeToDeleteObject`), divest every other attribute it owns.
    DeleteObjectsThenDivest,
    /// Cancel pending acquisitions, then as `DeleteObjectsThenDivest`: the action that
    /// never fails, which a dropped federate resigns with.
    CancelThenDeleteThenDivest,
    /// Fail with `FederateOwnsAttributes` if the federate still owns instance
    /// attributes, or `OwnershipAcquisitionPending` if it is acquiring some.
    NoAction,
}

/// When callbacks reach the federate (thesis section 2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessModel {
    /// Callbacks are queued and delivered only inside `evoke_callback` /
    /// `evoke_multiple_callbacks` (the thesis's `tick()`).
    Evoked,
    /// Callbacks are delivered on an RTI thread as soon as a message arrives
    /// (the thesis's asynchronous multithreaded model, Figure 4).
    Immediate,
}

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
    /// Leave the objects registered but owned by nobody.
    UnconditionallyDivestAttributes,
    /// Delete every object the federate registered.
    DeleteObjects,
    /// Nothing to cancel without ownership management; behaves as `NoAction`.
    CancelPendingOwnershipAcquisitions,
    /// Delete the objects the federate may delete, divest the rest.
    DeleteObjectsThenDivest,
    /// Same as `DeleteObjectsThenDivest` until ownership management lands.
    CancelThenDeleteThenDivest,
    /// Fail with `FederateOwnsAttributes` if the federate still owns objects.
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

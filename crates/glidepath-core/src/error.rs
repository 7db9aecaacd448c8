//! Typed errors, one enum per service, variants named after the HLA exceptions.

use thiserror::Error;

use crate::region::{RangeBounds, RegionHandle};
use crate::transport_error::TransportError;
use crate::types::{
    FederateHandle, LogicalTime, ObjectInstanceHandle, TimeRepresentation, TimeValue,
};
use crate::{
    AttributeHandle, DimensionHandle, InteractionClassHandle, ObjectClassHandle, ParameterHandle,
};

/// Federation management (create, join, resign, synchronization points).
#[derive(Debug, Error, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum FederationError {
    #[error("federation execution `{0}` already exists")]
    FederationExecutionAlreadyExists(String),
    #[error("federation execution `{0}` does not exist")]
    FederationExecutionDoesNotExist(String),
    #[error("federation execution `{name}` still has {count} joined federate(s)")]
    FederatesCurrentlyJoined { name: String, count: usize },
    #[error("federate name `{0}` is already in use in this federation")]
    FederateNameAlreadyInUse(String),
    #[error("the federate is not joined to a federation execution")]
    FederateNotExecutionMember,
    #[error("the federate is already joined to a federation execution")]
    FederateAlreadyExecutionMember,
    #[error(
        "the federate still owns {0} object instance(s); resign with a delete or divest action"
    )]
    FederateOwnsAttributes(usize),
    #[error("synchronization point `{0}` is not announced to this federate")]
    SynchronizationPointLabelNotAnnounced(String),
    /// Resigning with an action that does not cancel them while ownership
    /// acquisitions are pending.
    #[error("the federate has {0} pending ownership acquisition(s); resign with a cancel action or cancel them first")]
    OwnershipAcquisitionPending(usize),
    #[error("the FOM could not be loaded: {0}")]
    ErrorReadingFdd(String),
    #[error("the FOM modules given do not match the federation's: {0}")]
    InconsistentFdd(String),
}

/// Federation save and restore.
#[derive(Debug, Error, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SaveRestoreError {
    #[error("a federation save is in progress")]
    SaveInProgress,
    #[error("a federation restore is in progress")]
    RestoreInProgress,
    #[error("no federation save is in progress for this federate")]
    SaveNotInitiated,
    #[error("no federation restore is in progress for this federate")]
    RestoreNotRequested,
    #[error("the federate has not begun its save")]
    FederateHasNotBegunSave,
    #[error("the save label must not be empty")]
    IllegalLabel,
    #[error("the save time {time} is already passed (the federate is at {now})")]
    LogicalTimeAlreadyPassed { time: String, now: String },
    /// The federate's state cannot be saved now (for example during a time advance).
    #[error("the federate cannot save now: {0}")]
    SaveNotPossible(String),
}

/// Declaration management (publish and subscribe).
#[derive(Debug, Error, Clone, PartialEq)]
pub enum DeclarationError {
    #[error("object class {0} is not defined in the FOM")]
    ObjectClassNotDefined(ObjectClassHandle),
    #[error("attribute {attribute} is not an attribute of object class {class}")]
    AttributeNotDefined {
        class: ObjectClassHandle,
        attribute: AttributeHandle,
    },
    #[error("interaction class {0} is not defined in the FOM")]
    InteractionClassNotDefined(InteractionClassHandle),
    /// Unpublishing attributes the federate is acquiring.
    #[error("attribute {0} is being acquired by this federate; cancel the acquisition before unpublishing")]
    OwnershipAcquisitionPending(AttributeHandle),
    #[error(transparent)]
    Federation(#[from] FederationError),
}

/// Ownership management (divestiture, acquisition, queries).
#[derive(Debug, Error, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum OwnershipError {
    #[error("object instance {0} is not known to this federate")]
    ObjectInstanceNotKnown(ObjectInstanceHandle),
    #[error("attribute {attribute} is not an attribute of object class {class}")]
    AttributeNotDefined {
        class: ObjectClassHandle,
        attribute: AttributeHandle,
    },
    #[error("attribute {0} of the instance is not owned by this federate")]
    AttributeNotOwned(AttributeHandle),
    #[error("attribute {0} of the instance is already owned by this federate")]
    FederateOwnsAttributes(AttributeHandle),
    #[error("object class {0} is not published by this federate")]
    ObjectClassNotPublished(ObjectClassHandle),
    #[error("attribute {0} is not published by this federate at the instance's known class")]
    AttributeNotPublished(AttributeHandle),
    #[error("attribute {0} is already being divested (negotiated divestiture pending)")]
    AttributeAlreadyBeingDivested(AttributeHandle),
    #[error("no negotiated divestiture of attribute {0} is pending")]
    AttributeDivestitureWasNotRequested(AttributeHandle),
    #[error("attribute {0} is already being acquired by this federate")]
    AttributeAlreadyBeingAcquired(AttributeHandle),
    #[error("no acquisition of attribute {0} by this federate is pending")]
    AttributeAcquisitionWasNotRequested(AttributeHandle),
    #[error("no federate is waiting to acquire attribute {0}: nothing to confirm")]
    NoAcquisitionPending(AttributeHandle),
    #[error(transparent)]
    Federation(#[from] FederationError),
}

/// Object management (names, registration, updates, interactions, deletion).
#[derive(Debug, Error, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum ObjectError {
    #[error("object class {0} is not defined in the FOM")]
    ObjectClassNotDefined(ObjectClassHandle),
    #[error("object class {0} is not published by this federate")]
    ObjectClassNotPublished(ObjectClassHandle),
    #[error("attribute {attribute} is not an attribute of object class {class}")]
    AttributeNotDefined {
        class: ObjectClassHandle,
        attribute: AttributeHandle,
    },
    #[error("attribute {0} is not published by this federate for the instance's class")]
    AttributeNotOwned(AttributeHandle),
    #[error("object instance {0} is not known to this federate")]
    ObjectInstanceNotKnown(ObjectInstanceHandle),
    #[error("object instance {0} is not owned by this federate")]
    DeletePrivilegeNotHeld(ObjectInstanceHandle),
    #[error("object instance name `{0}` is not reserved by this federate")]
    ObjectInstanceNameNotReserved(String),
    #[error("object instance name `{0}` is already in use")]
    ObjectInstanceNameInUse(String),
    #[error("`{0}` is not a legal object instance name (empty, or starts with `HLA`)")]
    IllegalName(String),
    #[error("interaction class {0} is not defined in the FOM")]
    InteractionClassNotDefined(InteractionClassHandle),
    #[error("interaction class {0} is not published by this federate")]
    InteractionClassNotPublished(InteractionClassHandle),
    #[error("parameter {parameter} is not a parameter of interaction class {class}")]
    InteractionParameterNotDefined {
        class: InteractionClassHandle,
        parameter: ParameterHandle,
    },
    #[error("time stamp {time} is earlier than this federate may send ({earliest}: logical time plus lookahead)")]
    InvalidLogicalTime {
        time: LogicalTime,
        earliest: LogicalTime,
    },
    #[error("time stamp {time} is not a time of this federation ({representation:?}: {})", representation_rule(*.representation))]
    TimeNotInRepresentation {
        time: LogicalTime,
        representation: TimeRepresentation,
    },
    #[error(transparent)]
    Federation(#[from] FederationError),
}

/// What a value must be to belong to a time representation, for error messages.
fn representation_rule(r: TimeRepresentation) -> &'static str {
    match r {
        TimeRepresentation::Float64 => "a double, integers at most 2^53 in magnitude",
        TimeRepresentation::Integer64 => "a whole number within i64",
    }
}

/// Time management.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum TimeError {
    #[error("time regulation is already enabled")]
    TimeRegulationAlreadyEnabled,
    #[error("a request to enable time regulation is pending")]
    RequestForTimeRegulationPending,
    #[error("time regulation is not enabled")]
    TimeRegulationIsNotEnabled,
    #[error("time constrained is already enabled")]
    TimeConstrainedAlreadyEnabled,
    #[error("a request to enable time constrained is pending")]
    RequestForTimeConstrainedPending,
    #[error("time constrained is not enabled")]
    TimeConstrainedIsNotEnabled,
    #[error("the federate is already advancing time; wait for the grant")]
    InTimeAdvancingState,
    #[error(
        "lookahead must be a finite number >= 0 of this federation's time representation, got {0}"
    )]
    InvalidLookahead(TimeValue),
    #[error("requested time {requested} is before the federate's logical time {current}")]
    LogicalTimeAlreadyPassed {
        requested: LogicalTime,
        current: LogicalTime,
    },
    #[error("`{0}` is not a valid logical time")]
    InvalidLogicalTime(TimeValue),
    #[error("`{value}` is not a time of this federation ({representation:?}: {})", representation_rule(*.representation))]
    NotInTimeRepresentation {
        value: TimeValue,
        representation: TimeRepresentation,
    },
    #[error(transparent)]
    Federation(#[from] FederationError),
}

/// Data distribution management: dimensions and regions (IEEE 1516.1-2010 chapter 9).
/// The services that use regions with objects and interactions raise these for their
/// regions and the object or declaration errors for the rest.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum DdmError {
    #[error("{0} is not a dimension of the FOM")]
    InvalidDimensionHandle(DimensionHandle),
    #[error("{0} is not a region of this federate (never created, or deleted)")]
    InvalidRegion(RegionHandle),
    #[error("{0} was created by another federate; a federate uses only its own regions")]
    RegionNotCreatedByThisFederate(RegionHandle),
    #[error("{region} was created without dimension {dimension}")]
    RegionDoesNotContainSpecifiedDimension {
        region: RegionHandle,
        dimension: DimensionHandle,
    },
    /// A range must have `lower <= upper <= ` the dimension's upper bound.
    #[error("{bounds} is not a range of {dimension}, whose values lie in [0, {upper_bound}]")]
    InvalidRangeBound {
        dimension: DimensionHandle,
        bounds: RangeBounds,
        upper_bound: u64,
    },
    /// Deleting a region still used by a subscription or an update association.
    #[error("{0} is used for updates or subscriptions: stop using it before deleting it")]
    RegionInUseForUpdateOrSubscription(RegionHandle),
    /// A region used with an attribute or interaction class has a dimension that is
    /// not among the available dimensions the FOM gives it.
    #[error("{region} has dimension {dimension}, which is not available for {context}")]
    InvalidRegionContext {
        region: RegionHandle,
        dimension: DimensionHandle,
        context: RegionContext,
    },
    #[error("the attribute scope advisory switch is already on")]
    AttributeScopeAdvisorySwitchIsOn,
    #[error("the attribute scope advisory switch is already off")]
    AttributeScopeAdvisorySwitchIsOff,
    #[error(transparent)]
    Federation(#[from] FederationError),
}

/// What a region was used with, in [`DdmError::InvalidRegionContext`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegionContext {
    /// An attribute of an object class.
    Attribute {
        class: ObjectClassHandle,
        attribute: AttributeHandle,
    },
    /// An interaction class.
    InteractionClass(InteractionClassHandle),
}

impl std::fmt::Display for RegionContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RegionContext::Attribute { class, attribute } => {
                write!(f, "attribute {attribute} of {class}")
            }
            RegionContext::InteractionClass(c) => write!(f, "interaction class {c}"),
        }
    }
}

/// Any RTI error, for callers that do not care which service raised it.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum RtiError {
    #[error(transparent)]
    Federation(#[from] FederationError),
    #[error(transparent)]
    Declaration(#[from] DeclarationError),
    #[error(transparent)]
    Object(#[from] ObjectError),
    #[error(transparent)]
    Time(#[from] TimeError),
    #[error(transparent)]
    Ownership(#[from] OwnershipError),
    #[error(transparent)]
    Ddm(#[from] DdmError),
    #[error(transparent)]
    SaveRestore(#[from] SaveRestoreError),
    /// The transport, or the executive behind it, failed; match the
    /// [`TransportError`] to tell why.
    #[error("transport failure: {0}")]
    Link(#[from] TransportError),
    /// [`ProcessModel::Immediate`](crate::ProcessModel) was asked for without an
    /// ambassador to deliver the callbacks to.
    #[error("the immediate process model needs an ambassador: use Rti::join_immediate")]
    AmbassadorRequired,
    /// The federate's RTI thread could not be started (the operating system's reason).
    #[error("cannot start the federate's RTI thread: {0}")]
    RtiThreadNotStarted(String),
    /// The federate's RTI thread stopped because an ambassador callback panicked; the
    /// federate delivers no more callbacks.
    #[error("the federate's RTI thread stopped: an ambassador callback panicked")]
    CallbackPanicked,
}

/// A peer sent something this federate cannot use. Never fatal: counted and dropped.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum PeerError {
    #[error("{sender} sent a message for unknown object class {class}")]
    UnknownObjectClass {
        sender: FederateHandle,
        class: ObjectClassHandle,
    },
    #[error("{sender} sent a message for unknown interaction class {class}")]
    UnknownInteractionClass {
        sender: FederateHandle,
        class: InteractionClassHandle,
    },
    #[error("{sender} sent seq {seq} after {last}: per-sender order broken by the transport")]
    OutOfOrder {
        sender: FederateHandle,
        seq: u64,
        last: u64,
    },
    #[error("{sender} sent a time-stamped message at {time}, earlier than its promise {promise}")]
    BrokenPromise {
        sender: FederateHandle,
        time: LogicalTime,
        promise: LogicalTime,
    },
    #[error("{sender} sent a management object model message this RTI cannot read: {reason}")]
    MalformedMom {
        sender: FederateHandle,
        reason: String,
    },
}

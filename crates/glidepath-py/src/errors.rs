//! The HLA exceptions as Python exception classes, all under `RTIexception`, and
//! the mapping from the front crate's typed errors to them.

use glidepath::{
    ConfigError, DeclarationError, FederationError, NameError, ObjectError, OwnershipError,
    RtiError, SaveRestoreError, TimeError,
};
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::{create_exception, PyErr};

create_exception!(
    glidepath,
    RTIexception,
    PyException,
    "Base class of every exception the RTI raises (the standard's RTIexception)."
);

/// Declares each HLA exception as a subclass of `RTIexception` and lists them for
/// the module.
macro_rules! hla_exceptions {
    ($($name:ident: $doc:literal,)*) => {
        $(create_exception!(glidepath, $name, RTIexception, $doc);)*
        /// Adds `RTIexception` and every HLA exception to the module.
        pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
            let py = m.py();
            m.add("RTIexception", py.get_type::<RTIexception>())?;
            $(m.add(stringify!($name), py.get_type::<$name>())?;)*
            Ok(())
        }
    };
}

hla_exceptions! {
    FederationExecutionAlreadyExists: "A federation execution of that name already exists.",
    FederationExecutionDoesNotExist: "No federation execution of that name exists.",
    FederatesCurrentlyJoined: "The federation execution still has joined federates.",
    FederateNameAlreadyInUse: "The federate name is already in use in this federation.",
    FederateNotExecutionMember: "The federate is not (or no longer) joined.",
    FederateAlreadyExecutionMember: "The federate is already joined.",
    FederateOwnsAttributes: "The federate still owns object instances; resign with a delete or divest action.",
    SynchronizationPointLabelNotAnnounced: "The synchronization point is not announced to this federate.",
    EncoderException: "A value could not be encoded or decoded as its FOM data type.",
    ErrorReadingFDD: "A FOM module could not be read, parsed or merged.",
    InconsistentFDD: "The FOM modules given do not match the federation's.",
    ObjectClassNotDefined: "The object class is not defined in the FOM.",
    AttributeNotDefined: "The attribute is not an attribute of the object class.",
    InteractionClassNotDefined: "The interaction class is not defined in the FOM.",
    InteractionParameterNotDefined: "The parameter is not a parameter of the interaction class.",
    ObjectClassNotPublished: "The object class is not published by this federate.",
    InteractionClassNotPublished: "The interaction class is not published by this federate.",
    AttributeNotOwned: "The attribute is not published (owned) by this federate.",
    ObjectInstanceNotKnown: "The object instance is not known to this federate.",
    DeletePrivilegeNotHeld: "The object instance is not owned by this federate.",
    ObjectInstanceNameNotReserved: "The object instance name is not reserved by this federate.",
    ObjectInstanceNameInUse: "The object instance name is already in use.",
    IllegalName: "Not a legal object instance name (empty, or starts with `HLA`).",
    InvalidLogicalTime: "Not a valid logical time here (too early, or not of the federation's time representation).",
    TimeRegulationAlreadyEnabled: "Time regulation is already enabled.",
    RequestForTimeRegulationPending: "A request to enable time regulation is pending.",
    TimeRegulationIsNotEnabled: "Time regulation is not enabled.",
    TimeConstrainedAlreadyEnabled: "Time constrained is already enabled.",
    RequestForTimeConstrainedPending: "A request to enable time constrained is pending.",
    TimeConstrainedIsNotEnabled: "Time constrained is not enabled.",
    InTimeAdvancingState: "The federate is already advancing time; wait for the grant.",
    InvalidLookahead: "The lookahead is not a finite number >= 0 of the federation's time representation.",
    LogicalTimeAlreadyPassed: "The requested time is before the federate's logical time.",
    NameNotFound: "No class, attribute or parameter of that name in the FOM.",
    InvalidObjectClassHandle: "No object class has that handle.",
    InvalidAttributeHandle: "No attribute has that handle.",
    InvalidInteractionClassHandle: "No interaction class has that handle.",
    InvalidParameterHandle: "No parameter has that handle.",
    ConnectionFailed: "The configured transport cannot be reached (for example, no NATS server answers).",
    InvalidLocalSettingsDesignator: "A configuration setting (transport, URL, compression, key file, ...) is not understood.",
    CallNotAllowedFromWithinCallback: "An evoke call was made from inside a callback of the same federate.",
    InvalidDimensionHandle: "No dimension has that handle.",
    InvalidRegion: "Not a region of this federate (never created, or deleted).",
    RegionNotCreatedByThisFederate: "The region was created by another federate.",
    RegionDoesNotContainSpecifiedDimension: "The region was created without that dimension.",
    InvalidRangeBound: "Not a range [lower, upper) within the dimension's bounds.",
    RegionInUseForUpdateOrSubscription: "The region is used for updates or subscriptions: stop using it before deleting it.",
    InvalidRegionContext: "The region has a dimension not available for that attribute or interaction class.",
    AttributeScopeAdvisorySwitchIsOn: "The attribute scope advisory switch is already on.",
    AttributeScopeAdvisorySwitchIsOff: "The attribute scope advisory switch is already off.",
    AttributeNotPublished: "The attribute is not published by this federate at the instance's known class.",
    AttributeAlreadyBeingDivested: "A negotiated divestiture of the attribute is already pending.",
    AttributeDivestitureWasNotRequested: "No negotiated divestiture of the attribute is pending.",
    AttributeAlreadyBeingAcquired: "This federate is already acquiring the attribute.",
    AttributeAcquisitionWasNotRequested: "No acquisition of the attribute by this federate is pending.",
    NoAcquisitionPending: "No federate is waiting to acquire the attribute: nothing to confirm.",
    OwnershipAcquisitionPending: "This federate has ownership acquisitions pending; cancel them first (or resign with a cancel action).",
    SaveInProgress: "A federation save is in progress.",
    RestoreInProgress: "A federation restore is in progress.",
    SaveNotInitiated: "This federate was not asked to save (no initiate_federate_save to answer).",
    SaveNotInProgress: "No federation save is in progress (nothing to abort).",
    FederateHasNotBegunSave: "This federate has not called federate_save_begun.",
    RestoreNotRequested: "This federate was not asked to restore (no initiate_federate_restore to answer).",
    RestoreNotInProgress: "No federation restore is in progress (nothing to abort).",
    IllegalLabel: "Not a legal save label (empty). glidepath's own: the standard has no exception for it.",
    SaveNotPossible: "This federate's state cannot be saved or restored now (a time advance or time mode change is pending, or the saved state could not be taken back); the message says why. glidepath's own: the standard has no exception for it.",
    RTIinternalError: "The transport or the RTI itself failed; the message says why.",
}

/// The Python exception for any RTI error.
pub fn rti_error(e: RtiError) -> PyErr {
    let message = e.to_string();
    match e {
        RtiError::Federation(f) => federation_error(f, message),
        RtiError::Declaration(d) => match d {
            DeclarationError::ObjectClassNotDefined(_) => ObjectClassNotDefined::new_err(message),
            DeclarationError::AttributeNotDefined { .. } => AttributeNotDefined::new_err(message),
            DeclarationError::InteractionClassNotDefined(_) => {
                InteractionClassNotDefined::new_err(message)
            }
            DeclarationError::Federation(f) => federation_error(f, message),
            DeclarationError::OwnershipAcquisitionPending(_) => {
                OwnershipAcquisitionPending::new_err(message)
            }
        },
        RtiError::Ownership(o) => ownership_error(o, message),
        RtiError::Object(o) => object_error(o, message),
        RtiError::Time(t) => time_error(t, message),
        RtiError::Ddm(d) => ddm_error(d, message),
        RtiError::SaveRestore(s) => save_restore_error(s, message),
        RtiError::Link(_)
        | RtiError::AmbassadorRequired
        | RtiError::RtiThreadNotStarted(_)
        | RtiError::CallbackPanicked => RTIinternalError::new_err(message),
    }
}

fn federation_error(e: FederationError, message: String) -> PyErr {
    use FederationError as F;
    match e {
        F::FederationExecutionAlreadyExists(_) => {
            FederationExecutionAlreadyExists::new_err(message)
        }
        F::FederationExecutionDoesNotExist(_) => FederationExecutionDoesNotExist::new_err(message),
        F::FederatesCurrentlyJoined { .. } => FederatesCurrentlyJoined::new_err(message),
        F::FederateNameAlreadyInUse(_) => FederateNameAlreadyInUse::new_err(message),
        F::FederateNotExecutionMember => FederateNotExecutionMember::new_err(message),
        F::FederateAlreadyExecutionMember => FederateAlreadyExecutionMember::new_err(message),
        F::FederateOwnsAttributes(_) => FederateOwnsAttributes::new_err(message),
        F::SynchronizationPointLabelNotAnnounced(_) => {
            SynchronizationPointLabelNotAnnounced::new_err(message)
        }
        F::ErrorReadingFdd(_) => ErrorReadingFDD::new_err(message),
        F::InconsistentFdd(_) => InconsistentFDD::new_err(message),
        F::OwnershipAcquisitionPending(_) => OwnershipAcquisitionPending::new_err(message),
    }
}

fn ddm_error(e: glidepath::DdmError, message: String) -> PyErr {
    use glidepath::DdmError as D;
    match e {
        D::InvalidDimensionHandle(_) => InvalidDimensionHandle::new_err(message),
        D::InvalidRegion(_) => InvalidRegion::new_err(message),
        D::RegionNotCreatedByThisFederate(_) => RegionNotCreatedByThisFederate::new_err(message),
        D::RegionDoesNotContainSpecifiedDimension { .. } => {
            RegionDoesNotContainSpecifiedDimension::new_err(message)
        }
        D::InvalidRangeBound { .. } => InvalidRangeBound::new_err(message),
        D::RegionInUseForUpdateOrSubscription(_) => {
            RegionInUseForUpdateOrSubscription::new_err(message)
        }
        D::InvalidRegionContext { .. } => InvalidRegionContext::new_err(message),
        D::AttributeScopeAdvisorySwitchIsOn => AttributeScopeAdvisorySwitchIsOn::new_err(message),
        D::AttributeScopeAdvisorySwitchIsOff => AttributeScopeAdvisorySwitchIsOff::new_err(message),
        D::Federation(f) => federation_error(f, message),
    }
}

fn ownership_error(e: OwnershipError, message: String) -> PyErr {
    use OwnershipError as W;
    match e {
        W::ObjectInstanceNotKnown(_) => ObjectInstanceNotKnown::new_err(message),
        W::AttributeNotDefined { .. } => AttributeNotDefined::new_err(message),
        W::AttributeNotOwned(_) => AttributeNotOwned::new_err(message),
        // Acquiring an attribute this federate already owns: the standard's attribute
        // ownership acquisition (if available) raises FederateOwnsAttributes for it.
        W::FederateOwnsAttributes(_) => FederateOwnsAttributes::new_err(message),
        W::ObjectClassNotPublished(_) => ObjectClassNotPublished::new_err(message),
        W::AttributeNotPublished(_) => AttributeNotPublished::new_err(message),
        W::AttributeAlreadyBeingDivested(_) => AttributeAlreadyBeingDivested::new_err(message),
        W::AttributeDivestitureWasNotRequested(_) => {
            AttributeDivestitureWasNotRequested::new_err(message)
        }
        W::AttributeAlreadyBeingAcquired(_) => AttributeAlreadyBeingAcquired::new_err(message),
        W::AttributeAcquisitionWasNotRequested(_) => {
            AttributeAcquisitionWasNotRequested::new_err(message)
        }
        W::NoAcquisitionPending(_) => NoAcquisitionPending::new_err(message),
        W::Federation(f) => federation_error(f, message),
    }
}

fn save_restore_error(e: SaveRestoreError, message: String) -> PyErr {
    use SaveRestoreError as S;
    match e {
        S::SaveInProgress => SaveInProgress::new_err(message),
        S::RestoreInProgress => RestoreInProgress::new_err(message),
        S::SaveNotInitiated => SaveNotInitiated::new_err(message),
        S::RestoreNotRequested => RestoreNotRequested::new_err(message),
        S::FederateHasNotBegunSave => FederateHasNotBegunSave::new_err(message),
        S::IllegalLabel => IllegalLabel::new_err(message),
        S::LogicalTimeAlreadyPassed { .. } => LogicalTimeAlreadyPassed::new_err(message),
        S::SaveNotPossible(_) => SaveNotPossible::new_err(message),
    }
}

/// The Python exception for an abort call (abort federation save or restore): the
/// facade reports "nothing to abort" as `SaveNotInitiated` / `RestoreNotRequested`,
/// which the standard names `SaveNotInProgress` / `RestoreNotInProgress` for these
/// two services.
pub fn abort_error(e: RtiError) -> PyErr {
    match e {
        RtiError::SaveRestore(SaveRestoreError::SaveNotInitiated) => {
            SaveNotInProgress::new_err("no federation save is in progress")
        }
        RtiError::SaveRestore(SaveRestoreError::RestoreNotRequested) => {
            RestoreNotInProgress::new_err("no federation restore is in progress")
        }
        other => rti_error(other),
    }
}

fn object_error(e: ObjectError, message: String) -> PyErr {
    use ObjectError as O;
    match e {
        O::ObjectClassNotDefined(_) => ObjectClassNotDefined::new_err(message),
        O::ObjectClassNotPublished(_) => ObjectClassNotPublished::new_err(message),
        O::AttributeNotDefined { .. } => AttributeNotDefined::new_err(message),
        O::AttributeNotOwned(_) => AttributeNotOwned::new_err(message),
        O::ObjectInstanceNotKnown(_) => ObjectInstanceNotKnown::new_err(message),
        O::DeletePrivilegeNotHeld(_) => DeletePrivilegeNotHeld::new_err(message),
        O::ObjectInstanceNameNotReserved(_) => ObjectInstanceNameNotReserved::new_err(message),
        O::ObjectInstanceNameInUse(_) => ObjectInstanceNameInUse::new_err(message),
        O::IllegalName(_) => IllegalName::new_err(message),
        O::InteractionClassNotDefined(_) => InteractionClassNotDefined::new_err(message),
        O::InteractionClassNotPublished(_) => InteractionClassNotPublished::new_err(message),
        O::InteractionParameterNotDefined { .. } => {
            InteractionParameterNotDefined::new_err(message)
        }
        O::InvalidLogicalTime { .. } | O::TimeNotInRepresentation { .. } => {
            InvalidLogicalTime::new_err(message)
        }
        O::Federation(f) => federation_error(f, message),
    }
}

fn time_error(e: TimeError, message: String) -> PyErr {
    use TimeError as T;
    match e {
        T::TimeRegulationAlreadyEnabled => TimeRegulationAlreadyEnabled::new_err(message),
        T::RequestForTimeRegulationPending => RequestForTimeRegulationPending::new_err(message),
        T::TimeRegulationIsNotEnabled => TimeRegulationIsNotEnabled::new_err(message),
        T::TimeConstrainedAlreadyEnabled => TimeConstrainedAlreadyEnabled::new_err(message),
        T::RequestForTimeConstrainedPending => RequestForTimeConstrainedPending::new_err(message),
        T::TimeConstrainedIsNotEnabled => TimeConstrainedIsNotEnabled::new_err(message),
        T::InTimeAdvancingState => InTimeAdvancingState::new_err(message),
        T::InvalidLookahead(_) => InvalidLookahead::new_err(message),
        T::LogicalTimeAlreadyPassed { .. } => LogicalTimeAlreadyPassed::new_err(message),
        T::InvalidLogicalTime(_) | T::NotInTimeRepresentation { .. } => {
            InvalidLogicalTime::new_err(message)
        }
        T::Federation(f) => federation_error(f, message),
    }
}

/// The Python exception for a name or handle the FOM does not know.
pub fn name_error(e: NameError) -> PyErr {
    let message = e.to_string();
    match e {
        NameError::NameNotFound { .. } => NameNotFound::new_err(message),
        NameError::InvalidObjectClassHandle(_) => InvalidObjectClassHandle::new_err(message),
        NameError::InvalidAttributeHandle(_) => InvalidAttributeHandle::new_err(message),
        NameError::InvalidInteractionClassHandle(_) => {
            InvalidInteractionClassHandle::new_err(message)
        }
        NameError::InvalidParameterHandle(_) => InvalidParameterHandle::new_err(message),
        NameError::AttributeNotDefined { .. } => AttributeNotDefined::new_err(message),
        NameError::InvalidDimensionHandle(_) => InvalidDimensionHandle::new_err(message),
    }
}

/// The Python exception for a configuration that cannot be used.
pub fn config_error(e: ConfigError) -> PyErr {
    let message = e.to_string();
    match e {
        ConfigError::Unavailable { .. } => ConnectionFailed::new_err(message),
        _ => InvalidLocalSettingsDesignator::new_err(message),
    }
}

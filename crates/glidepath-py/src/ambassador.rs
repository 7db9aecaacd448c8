//! Delivering the RTI's callbacks to a Python federate ambassador: the standard
//! callback names in snake case, called on the ambassador object when it has them.
//! In the evoked model the evoke calls deliver them on the calling thread; in the
//! immediate model [`ImmediateAmbassador`] delivers them on the federate's RTI thread,
//! taking the GIL once for up to 64 queued callbacks.
//!
//! Handles are `int`s, attribute sets `list`s, tags and user states `bytes`; the
//! save and restore callbacks' reasons and statuses are the Rust enumerators' names
//! (`"SaveAborted"`, `"FederateSaving"`, ...; see `crate::save`).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use glidepath::{AttributeHandle, Callback, FederateAmbassador, ObjectInstanceHandle};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::convert::{time_to_py, values_to_py, PyMessageInfo};
use crate::save::{restore_failure_name, restore_status_name, save_failure_name, save_status_name};

/// `(instance, [attributes])` or `(instance, [attributes], tag)` for the ownership
/// callbacks that carry an attribute set.
fn instance_attributes<'py>(
    py: Python<'py>,
    instance: ObjectInstanceHandle,
    attributes: &[AttributeHandle],
    tag: Option<&[u8]>,
) -> PyResult<Bound<'py, PyTuple>> {
    let attributes = PyList::new(py, attributes.iter().map(|a| a.0))?;
    match tag {
        None => (instance.0, attributes).into_pyobject(py),
        Some(tag) => (instance.0, attributes, PyBytes::new(py, tag)).into_pyobject(py),
    }
}

/// Calls the ambassador method named after `callback`, if the ambassador has one; an
/// exception it raises is returned.
pub fn deliver(py: Python<'_>, ambassador: &Bound<'_, PyAny>, callback: Callback) -> PyResult<()> {
    let (name, args): (&str, Bound<'_, PyTuple>) = match callback {
        Callback::SynchronizationPointRegistrationSucceeded { label } => (
            "synchronization_point_registration_succeeded",
            (label,).into_pyobject(py)?,
        ),
        Callback::SynchronizationPointRegistrationFailed { label, reason } => (
            "synchronization_point_registration_failed",
            (label, reason).into_pyobject(py)?,
        ),
        Callback::AnnounceSynchronizationPoint { label, tag } => (
            "announce_synchronization_point",
            (label, PyBytes::new(py, &tag)).into_pyobject(py)?,
        ),
        Callback::FederationSynchronized { label, failed } => {
            let failed = PyList::new(py, failed.iter().map(|f| f.0))?;
            (
                "federation_synchronized",
                (label, failed).into_pyobject(py)?,
            )
        }
        Callback::ObjectInstanceNameReservationSucceeded { name } => (
            "object_instance_name_reservation_succeeded",
            (name,).into_pyobject(py)?,
        ),
        Callback::ObjectInstanceNameReservationFailed { name } => (
            "object_instance_name_reservation_failed",
            (name,).into_pyobject(py)?,
        ),
        Callback::DiscoverObjectInstance {
            instance,
            class,
            name,
            producer,
        } => (
            "discover_object_instance",
            (instance.0, class.0, name, producer.0).into_pyobject(py)?,
        ),
        Callback::ReflectAttributeValues {
            instance,
            class,
            values,
            tag,
            info,
        } => (
            "reflect_attribute_values",
            (
                instance.0,
                class.0,
                values_to_py(py, &values, |h| h.0)?,
                PyBytes::new(py, &tag),
                PyMessageInfo::new(py, &info),
            )
                .into_pyobject(py)?,
        ),
        Callback::ReceiveInteraction {
            class,
            values,
            tag,
            info,
        } => (
            "receive_interaction",
            (
                class.0,
                values_to_py(py, &values, |h| h.0)?,
                PyBytes::new(py, &tag),
                PyMessageInfo::new(py, &info),
            )
                .into_pyobject(py)?,
        ),
        Callback::RemoveObjectInstance {
            instance,
            tag,
            info,
        } => (
            "remove_object_instance",
            (
                instance.0,
                PyBytes::new(py, &tag),
                PyMessageInfo::new(py, &info),
            )
                .into_pyobject(py)?,
        ),
        Callback::AttributesInScope {
            instance,
            attributes,
        } => (
            "attributes_in_scope",
            (instance.0, PyList::new(py, attributes.iter().map(|a| a.0))?).into_pyobject(py)?,
        ),
        Callback::AttributesOutOfScope {
            instance,
            attributes,
        } => (
            "attributes_out_of_scope",
            (instance.0, PyList::new(py, attributes.iter().map(|a| a.0))?).into_pyobject(py)?,
        ),
        Callback::ProvideAttributeValueUpdate {
            instance,
            attributes,
            tag,
        } => {
            let attributes = PyList::new(py, attributes.iter().map(|a| a.0))?;
            (
                "provide_attribute_value_update",
                (instance.0, attributes, PyBytes::new(py, &tag)).into_pyobject(py)?,
            )
        }
        Callback::TimeRegulationEnabled { time } => (
            "time_regulation_enabled",
            (time_to_py(py, time),).into_pyobject(py)?,
        ),
        Callback::TimeConstrainedEnabled { time } => (
            "time_constrained_enabled",
            (time_to_py(py, time),).into_pyobject(py)?,
        ),
        Callback::TimeAdvanceGrant { time } => (
            "time_advance_grant",
            (time_to_py(py, time),).into_pyobject(py)?,
        ),
        // ----- ownership management: handles as ints, attribute sets as lists -----
        Callback::RequestAttributeOwnershipAssumption {
            instance,
            attributes,
            tag,
        } => (
            "request_attribute_ownership_assumption",
            instance_attributes(py, instance, &attributes, Some(&tag))?,
        ),
        Callback::RequestDivestitureConfirmation {
            instance,
            attributes,
        } => (
            "request_divestiture_confirmation",
            instance_attributes(py, instance, &attributes, None)?,
        ),
        Callback::AttributeOwnershipAcquisitionNotification {
            instance,
            attributes,
            tag,
        } => (
            "attribute_ownership_acquisition_notification",
            instance_attributes(py, instance, &attributes, Some(&tag))?,
        ),
        Callback::AttributeOwnershipUnavailable {
            instance,
            attributes,
        } => (
            "attribute_ownership_unavailable",
            instance_attributes(py, instance, &attributes, None)?,
        ),
        Callback::RequestAttributeOwnershipRelease {
            instance,
            attributes,
            tag,
        } => (
            "request_attribute_ownership_release",
            instance_attributes(py, instance, &attributes, Some(&tag))?,
        ),
        Callback::ConfirmAttributeOwnershipAcquisitionCancellation {
            instance,
            attributes,
        } => (
            "confirm_attribute_ownership_acquisition_cancellation",
            instance_attributes(py, instance, &attributes, None)?,
        ),
        Callback::InformAttributeOwnership {
            instance,
            attribute,
            owner,
        } => (
            "inform_attribute_ownership",
            (instance.0, attribute.0, owner.0).into_pyobject(py)?,
        ),
        Callback::AttributeIsNotOwned {
            instance,
            attribute,
        } => (
            "attribute_is_not_owned",
            (instance.0, attribute.0).into_pyobject(py)?,
        ),
        Callback::AttributeIsOwnedByRti {
            instance,
            attribute,
        } => (
            "attribute_is_owned_by_rti",
            (instance.0, attribute.0).into_pyobject(py)?,
        ),
        // ----- save and restore: reasons and statuses as enumerator names -----
        Callback::InitiateFederateSave { label, time } => (
            "initiate_federate_save",
            (label, time.map(|t| time_to_py(py, t))).into_pyobject(py)?,
        ),
        Callback::FederationSaved { label } => ("federation_saved", (label,).into_pyobject(py)?),
        Callback::FederationNotSaved { label, reason } => (
            "federation_not_saved",
            (label, save_failure_name(&reason)).into_pyobject(py)?,
        ),
        Callback::FederationSaveStatusResponse { statuses } => {
            let statuses = PyList::new(
                py,
                statuses.iter().map(|(f, s)| (f.0, save_status_name(*s))),
            )?;
            (
                "federation_save_status_response",
                (statuses,).into_pyobject(py)?,
            )
        }
        Callback::RequestFederationRestoreSucceeded { label } => (
            "request_federation_restore_succeeded",
            (label,).into_pyobject(py)?,
        ),
        Callback::RequestFederationRestoreFailed { label, reason } => (
            "request_federation_restore_failed",
            (label, reason).into_pyobject(py)?,
        ),
        Callback::FederationRestoreBegun { label } => {
            ("federation_restore_begun", (label,).into_pyobject(py)?)
        }
        Callback::InitiateFederateRestore {
            label,
            name,
            handle,
            saved_as,
            user_state,
        } => (
            "initiate_federate_restore",
            (
                label,
                name,
                handle.0,
                saved_as.0,
                PyBytes::new(py, &user_state),
            )
                .into_pyobject(py)?,
        ),
        Callback::FederationRestored { label } => {
            ("federation_restored", (label,).into_pyobject(py)?)
        }
        Callback::FederationNotRestored { label, reason } => (
            "federation_not_restored",
            (label, restore_failure_name(&reason)).into_pyobject(py)?,
        ),
        Callback::FederationRestoreStatusResponse { statuses } => {
            let statuses = PyList::new(
                py,
                statuses.iter().map(|(f, s)| (f.0, restore_status_name(*s))),
            )?;
            (
                "federation_restore_status_response",
                (statuses,).into_pyobject(py)?,
            )
        }
    };
    if ambassador.hasattr(name)? {
        ambassador.call_method1(name, args)?;
    }
    Ok(())
}

/// The immediate model's ambassador: runs on the federate's RTI thread and hands
/// every callback to the Python ambassador with the GIL held. An exception the
/// Python method raises is reported through `sys.unraisablehook` (printed to
/// standard error by default) and counted; the RTI thread goes on.
pub struct ImmediateAmbassador {
    /// The Python ambassador object.
    pub ambassador: Py<PyAny>,
    /// How many callbacks raised, shared with the Python `Federate`.
    pub errors: Arc<AtomicU64>,
}

/// The most callbacks delivered under one taking of the GIL: enough to spread its
/// cost (13-22 µs per taking, `docs/benchmarks.md` "Python"), few enough that other
/// Python threads get the GIL between batches.
const CALLBACKS_PER_GIL: usize = 64;

impl ImmediateAmbassador {
    fn deliver_one(&self, py: Python<'_>, callback: Callback) {
        let ambassador = self.ambassador.bind(py);
        if let Err(e) = deliver(py, ambassador, callback) {
            self.errors.fetch_add(1, Ordering::Relaxed);
            e.write_unraisable(py, Some(ambassador));
        }
    }
}

impl FederateAmbassador for ImmediateAmbassador {
    fn callback(&mut self, callback: Callback) {
        Python::with_gil(|py| self.deliver_one(py, callback))
    }

    /// Takes the GIL once per batch of queued callbacks. Polling the next one takes
    /// the core's lock with the GIL held; that order is safe because no thread ever
    /// waits for the GIL while holding the core's lock (every service releases the
    /// GIL first).
    fn callbacks(&mut self, next: &mut dyn FnMut() -> Option<Callback>) {
        // The first one is polled without the GIL: most wake-ups find one or none.
        let Some(mut callback) = next() else {
            return;
        };
        loop {
            let more = Python::with_gil(|py| {
                self.deliver_one(py, callback);
                for _ in 1..CALLBACKS_PER_GIL {
                    match next() {
                        Some(c) => self.deliver_one(py, c),
                        None => return None,
                    }
                }
                next()
            });
            match more {
                Some(c) => callback = c,
                None => return,
            }
        }
    }
}

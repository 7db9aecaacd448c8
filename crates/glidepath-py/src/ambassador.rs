//! Delivering the RTI's callbacks to a Python federate ambassador: the standard
//! callback names in snake case, called on the ambassador object when it has them.
//! In the evoked model the evoke calls deliver them on the calling thread; in the
//! immediate model [`ImmediateAmbassador`] delivers them on the federate's RTI thread,
//! taking the GIL for each one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use glidepath::{Callback, FederateAmbassador};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};

use crate::convert::{time_to_py, values_to_py, PyMessageInfo};

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
        // Ownership management is not bound in Python yet (it landed after these
        // bindings): a Python federate can neither divest nor acquire, so its
        // ownership callbacks (another federate asking it to release what it
        // registered, say) have no service to answer them with and are not delivered.
        _ => return Ok(()),
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

impl FederateAmbassador for ImmediateAmbassador {
    fn callback(&mut self, callback: Callback) {
        Python::with_gil(|py| {
            let ambassador = self.ambassador.bind(py);
            if let Err(e) = deliver(py, ambassador, callback) {
                self.errors.fetch_add(1, Ordering::Relaxed);
                e.write_unraisable(py, Some(ambassador));
            }
        })
    }
}

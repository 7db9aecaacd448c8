//! `glidepath.Federate`: one joined federate, its HLA services as methods. Every
//! service releases the GIL while the RTI works, so other Python threads (and the
//! immediate model's callback thread) run meanwhile.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use glidepath::{
    AttributeHandle, Bytes, Callback, Federate, FederateHandle, InteractionClassHandle,
    ObjectClassHandle, ObjectInstanceHandle, ParameterHandle, ProcessModel, RtiError,
};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

use crate::ambassador::deliver;
use crate::convert::{interval_to_py, time_to_py, values_from_py, with_time, PyTime};
use crate::errors::{
    name_error, rti_error, CallNotAllowedFromWithinCallback, EncoderException,
    InvalidAttributeHandle, InvalidParameterHandle,
};
use crate::values;
use crate::{PyProcessModel, PyResignAction};

/// A federate joined to a federation execution (from `Rti.join`).
///
/// Handles (object classes, attributes, interaction classes, parameters, object
/// instances, federates) are plain `int`s. Values are `dict`s of handle to `bytes`.
/// Logical times are `float` (`HLAfloat64Time`) or `int` (`HLAinteger64Time`).
/// Every call that can wait releases the GIL.
#[pyclass(module = "glidepath", name = "Federate")]
pub struct PyFederate {
    /// `None` only while being dropped.
    federate: Option<Federate>,
    /// The ambassador the evoke calls deliver to (evoked model).
    ambassador: Py<PyAny>,
    /// Callbacks whose Python method raised, in the immediate model.
    callback_errors: Arc<AtomicU64>,
    /// The thread delivering an evoked callback right now, if any: an evoke call
    /// from inside a callback is refused, as the standard says.
    delivering: Mutex<Option<ThreadId>>,
}

impl PyFederate {
    pub fn new(federate: Federate, ambassador: Py<PyAny>, callback_errors: Arc<AtomicU64>) -> Self {
        PyFederate {
            federate: Some(federate),
            ambassador,
            callback_errors,
            delivering: Mutex::new(None),
        }
    }

    /// Hands one evoked callback to the ambassador on this thread.
    fn deliver(&self, py: Python<'_>, callback: Callback) -> PyResult<()> {
        *self.delivering.lock().expect("not poisoned") = Some(std::thread::current().id());
        let result = deliver(py, self.ambassador.bind(py), callback);
        *self.delivering.lock().expect("not poisoned") = None;
        result
    }

    fn check_not_in_callback(&self) -> PyResult<()> {
        if *self.delivering.lock().expect("not poisoned") == Some(std::thread::current().id()) {
            return Err(CallNotAllowedFromWithinCallback::new_err(
                "evoke called from inside a callback of the same federate",
            ));
        }
        Ok(())
    }

    pub(crate) fn fed(&self) -> &Federate {
        self.federate
            .as_ref()
            .expect("federate present until dropped")
    }

    /// Runs a service with the GIL released and maps its error.
    pub(crate) fn call<T: Send>(
        &self,
        py: Python<'_>,
        service: impl FnOnce(&Federate) -> Result<T, RtiError> + Send,
    ) -> PyResult<T> {
        let federate = self.fed();
        py.allow_threads(|| service(federate)).map_err(rti_error)
    }
}

impl Drop for PyFederate {
    fn drop(&mut self) {
        // Dropping the last clone resigns and joins the RTI thread, which in the
        // immediate model may be waiting for the GIL: let it go meanwhile.
        if let Some(federate) = self.federate.take() {
            Python::with_gil(|py| py.allow_threads(move || drop(federate)));
        }
    }
}

impl PyFederate {
    /// The FOM data type of an attribute handle.
    fn attribute_type(&self, attribute: u32) -> PyResult<String> {
        let fom = self.fed().fom();
        let a = fom.attribute(AttributeHandle(attribute)).ok_or_else(|| {
            InvalidAttributeHandle::new_err(format!("no attribute has handle {attribute}"))
        })?;
        a.data_type.clone().ok_or_else(|| {
            EncoderException::new_err(format!(
                "the attribute `{}` has no data type in the FOM",
                a.name
            ))
        })
    }

    /// The FOM data type of a parameter handle.
    fn parameter_type(&self, parameter: u32) -> PyResult<String> {
        let fom = self.fed().fom();
        let p = fom.parameter(ParameterHandle(parameter)).ok_or_else(|| {
            InvalidParameterHandle::new_err(format!("no parameter has handle {parameter}"))
        })?;
        p.data_type.clone().ok_or_else(|| {
            EncoderException::new_err(format!(
                "the parameter `{}` has no data type in the FOM",
                p.name
            ))
        })
    }
}

fn handles<H>(raw: Vec<u32>, make: impl Fn(u32) -> H) -> Vec<H> {
    raw.into_iter().map(make).collect()
}

pub(crate) fn tag_bytes(tag: Option<Vec<u8>>) -> Bytes {
    tag.map(Bytes::from).unwrap_or_default()
}

fn seconds(what: &str, value: f64) -> PyResult<Duration> {
    Duration::try_from_secs_f64(value).map_err(|_| {
        PyValueError::new_err(format!(
            "{what} must be a number of seconds >= 0, got {value}"
        ))
    })
}

#[pymethods]
impl PyFederate {
    // ----- identity -------------------------------------------------------------------

    /// This federate's handle.
    #[getter]
    fn handle(&self) -> u32 {
        self.fed().handle().0
    }
    /// This federate's name (as given, or as the RTI chose).
    #[getter]
    fn name(&self) -> String {
        self.fed().name().to_string()
    }
    /// The federation execution's name.
    #[getter]
    fn federation_name(&self) -> String {
        self.fed().federation_name().to_string()
    }
    /// `ProcessModel.EVOKED` or `ProcessModel.IMMEDIATE`.
    #[getter]
    fn process_model(&self) -> PyProcessModel {
        match self.fed().process_model() {
            ProcessModel::Evoked => PyProcessModel::Evoked,
            ProcessModel::Immediate => PyProcessModel::Immediate,
        }
    }
    /// True once resigned.
    #[getter]
    fn is_resigned(&self) -> bool {
        self.fed().is_resigned()
    }
    /// How many callbacks raised an exception in the immediate model (each was
    /// reported through `sys.unraisablehook`). In the evoked model the exception
    /// propagates out of the evoke call instead.
    #[getter]
    fn callback_errors(&self) -> u64 {
        self.callback_errors.load(Ordering::Relaxed)
    }
    /// The ambassador given at join.
    #[getter]
    fn ambassador(&self, py: Python<'_>) -> Py<PyAny> {
        self.ambassador.clone_ref(py)
    }
    fn __repr__(&self) -> String {
        format!(
            "Federate(handle={}, name={:?}, federation={:?})",
            self.fed().handle().0,
            self.fed().name(),
            self.fed().federation_name()
        )
    }

    // ----- support services: handles and names ----------------------------------------

    /// The handle of the object class named `name` (a simple or dotted name).
    fn get_object_class_handle(&self, name: &str) -> PyResult<u32> {
        self.fed()
            .object_class_handle(name)
            .map(|h| h.0)
            .map_err(name_error)
    }
    /// The handle of attribute `name` of object class `object_class`.
    fn get_attribute_handle(&self, object_class: u32, name: &str) -> PyResult<u32> {
        self.fed()
            .attribute_handle(ObjectClassHandle(object_class), name)
            .map(|h| h.0)
            .map_err(name_error)
    }
    /// The handle of the interaction class named `name`.
    fn get_interaction_class_handle(&self, name: &str) -> PyResult<u32> {
        self.fed()
            .interaction_class_handle(name)
            .map(|h| h.0)
            .map_err(name_error)
    }
    /// The handle of parameter `name` of interaction class `interaction_class`.
    fn get_parameter_handle(&self, interaction_class: u32, name: &str) -> PyResult<u32> {
        self.fed()
            .parameter_handle(InteractionClassHandle(interaction_class), name)
            .map(|h| h.0)
            .map_err(name_error)
    }
    /// The name of an object class handle.
    fn get_object_class_name(&self, object_class: u32) -> PyResult<String> {
        self.fed()
            .object_class_name(ObjectClassHandle(object_class))
            .map(str::to_string)
            .map_err(name_error)
    }
    /// The name of an attribute handle.
    fn get_attribute_name(&self, attribute: u32) -> PyResult<String> {
        self.fed()
            .attribute_name(AttributeHandle(attribute))
            .map(str::to_string)
            .map_err(name_error)
    }
    /// The name of an interaction class handle.
    fn get_interaction_class_name(&self, interaction_class: u32) -> PyResult<String> {
        self.fed()
            .interaction_class_name(InteractionClassHandle(interaction_class))
            .map(str::to_string)
            .map_err(name_error)
    }
    /// The name of a parameter handle.
    fn get_parameter_name(&self, parameter: u32) -> PyResult<String> {
        self.fed()
            .parameter_name(ParameterHandle(parameter))
            .map(str::to_string)
            .map_err(name_error)
    }
    /// The name of a known object instance, or `None`.
    fn get_object_instance_name(&self, instance: u64) -> Option<String> {
        self.fed()
            .object_instance_name(ObjectInstanceHandle(instance))
    }

    // ----- typed values: the FOM's data types --------------------------------------------

    /// `value` (a bool, int, float, str, bytes, list or dict) in the HLA encoding of
    /// the FOM data type named `data_type`, e.g. `encode("HLAfloat64BE", 1.5)`.
    fn encode(&self, data_type: &str, value: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
        let bytes = values::encode(self.fed().fom(), data_type, value)?;
        Ok(PyBytes::new(value.py(), &bytes).unbind())
    }
    /// The value that `data` encodes as the FOM data type named `data_type`.
    fn decode(&self, py: Python<'_>, data_type: &str, data: &[u8]) -> PyResult<PyObject> {
        values::decode(py, self.fed().fom(), data_type, data)
    }
    /// `value` in the encoding of attribute `attribute`'s data type.
    fn encode_attribute(&self, attribute: u32, value: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
        let data_type = self.attribute_type(attribute)?;
        self.encode(&data_type, value)
    }
    /// The value that `data` encodes as attribute `attribute`'s data type.
    fn decode_attribute(&self, py: Python<'_>, attribute: u32, data: &[u8]) -> PyResult<PyObject> {
        let data_type = self.attribute_type(attribute)?;
        self.decode(py, &data_type, data)
    }
    /// `value` in the encoding of parameter `parameter`'s data type.
    fn encode_parameter(&self, parameter: u32, value: &Bound<'_, PyAny>) -> PyResult<Py<PyBytes>> {
        let data_type = self.parameter_type(parameter)?;
        self.encode(&data_type, value)
    }
    /// The value that `data` encodes as parameter `parameter`'s data type.
    fn decode_parameter(&self, py: Python<'_>, parameter: u32, data: &[u8]) -> PyResult<PyObject> {
        let data_type = self.parameter_type(parameter)?;
        self.decode(py, &data_type, data)
    }

    // ----- federation management ------------------------------------------------------

    /// The joined federates as `(handle, name, federate_type)` tuples.
    fn list_federates(&self, py: Python<'_>) -> PyResult<Vec<(u32, String, String)>> {
        let list = self.call(py, |f| f.list_federates())?;
        Ok(list
            .into_iter()
            .map(|i| (i.handle.0, i.name, i.federate_type))
            .collect())
    }
    /// Resigns from the federation execution (default: delete this federate's objects).
    #[pyo3(signature = (action = PyResignAction::DeleteObjects))]
    fn resign_federation_execution(&self, py: Python<'_>, action: PyResignAction) -> PyResult<()> {
        self.call(py, |f| f.resign(action.into()))
    }
    /// Registers a synchronization point for every joined federate, or only for the
    /// federates listed.
    #[pyo3(signature = (label, tag = None, federates = None))]
    fn register_federation_synchronization_point(
        &self,
        py: Python<'_>,
        label: &str,
        tag: Option<Vec<u8>>,
        federates: Option<Vec<u32>>,
    ) -> PyResult<()> {
        let tag = tag_bytes(tag);
        match federates {
            None => self.call(py, |f| {
                f.register_federation_synchronization_point(label, tag)
            }),
            Some(list) => {
                let list = handles(list, FederateHandle);
                self.call(py, |f| {
                    f.register_federation_synchronization_point_for(label, tag, &list)
                })
            }
        }
    }
    /// Reports that this federate reached an announced synchronization point.
    fn synchronization_point_achieved(&self, py: Python<'_>, label: &str) -> PyResult<()> {
        self.call(py, |f| f.synchronization_point_achieved(label))
    }
    /// Reports that this federate failed to reach an announced synchronization point.
    fn synchronization_point_failed(&self, py: Python<'_>, label: &str) -> PyResult<()> {
        self.call(py, |f| f.synchronization_point_failed(label))
    }

    // ----- declaration management -----------------------------------------------------

    /// Publishes `attributes` of `object_class`.
    fn publish_object_class_attributes(
        &self,
        py: Python<'_>,
        object_class: u32,
        attributes: Vec<u32>,
    ) -> PyResult<()> {
        let attributes = handles(attributes, AttributeHandle);
        self.call(py, |f| {
            f.publish_object_class_attributes(ObjectClassHandle(object_class), &attributes)
        })
    }
    /// Stops publishing `object_class`.
    fn unpublish_object_class(&self, py: Python<'_>, object_class: u32) -> PyResult<()> {
        self.call(py, |f| {
            f.unpublish_object_class(ObjectClassHandle(object_class))
        })
    }
    /// Subscribes to `attributes` of `object_class` (and its subclasses).
    fn subscribe_object_class_attributes(
        &self,
        py: Python<'_>,
        object_class: u32,
        attributes: Vec<u32>,
    ) -> PyResult<()> {
        let attributes = handles(attributes, AttributeHandle);
        self.call(py, |f| {
            f.subscribe_object_class_attributes(ObjectClassHandle(object_class), &attributes)
        })
    }
    /// Stops subscribing to `object_class`.
    fn unsubscribe_object_class(&self, py: Python<'_>, object_class: u32) -> PyResult<()> {
        self.call(py, |f| {
            f.unsubscribe_object_class(ObjectClassHandle(object_class))
        })
    }
    /// Publishes `interaction_class`.
    fn publish_interaction_class(&self, py: Python<'_>, interaction_class: u32) -> PyResult<()> {
        self.call(py, |f| {
            f.publish_interaction_class(InteractionClassHandle(interaction_class))
        })
    }
    /// Stops publishing `interaction_class`.
    fn unpublish_interaction_class(&self, py: Python<'_>, interaction_class: u32) -> PyResult<()> {
        self.call(py, |f| {
            f.unpublish_interaction_class(InteractionClassHandle(interaction_class))
        })
    }
    /// Subscribes to `interaction_class` (and its subclasses).
    fn subscribe_interaction_class(&self, py: Python<'_>, interaction_class: u32) -> PyResult<()> {
        self.call(py, |f| {
            f.subscribe_interaction_class(InteractionClassHandle(interaction_class))
        })
    }
    /// Stops subscribing to `interaction_class`.
    fn unsubscribe_interaction_class(
        &self,
        py: Python<'_>,
        interaction_class: u32,
    ) -> PyResult<()> {
        self.call(py, |f| {
            f.unsubscribe_interaction_class(InteractionClassHandle(interaction_class))
        })
    }

    // ----- object management ----------------------------------------------------------

    /// Reserves an object instance name; the outcome arrives as
    /// `object_instance_name_reservation_succeeded` (or `_failed`).
    fn reserve_object_instance_name(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.call(py, |f| f.reserve_object_instance_name(name))
    }
    /// Releases a reserved object instance name.
    fn release_object_instance_name(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        self.call(py, |f| f.release_object_instance_name(name))
    }
    /// Registers an instance of a published class; returns its handle. With `name`,
    /// the name must have been reserved.
    #[pyo3(signature = (object_class, name = None))]
    fn register_object_instance(
        &self,
        py: Python<'_>,
        object_class: u32,
        name: Option<&str>,
    ) -> PyResult<u64> {
        let class = ObjectClassHandle(object_class);
        let instance = match name {
            None => self.call(py, |f| f.register_object_instance(class))?,
            Some(name) => self.call(py, |f| f.register_object_instance_with_name(class, name))?,
        };
        Ok(instance.0)
    }
    /// Updates attributes of an owned instance: `values` maps attribute handles to
    /// bytes. With `time`, the update carries that time stamp.
    #[pyo3(signature = (instance, values, tag = None, time = None))]
    fn update_attribute_values(
        &self,
        py: Python<'_>,
        instance: u64,
        values: &Bound<'_, PyDict>,
        tag: Option<Vec<u8>>,
        time: Option<PyTime>,
    ) -> PyResult<()> {
        let values = values_from_py(values, AttributeHandle)?;
        let (instance, tag) = (ObjectInstanceHandle(instance), tag_bytes(tag));
        match time {
            None => self.call(py, |f| f.update_attribute_values(instance, values, tag)),
            Some(time) => with_time!(time, |t| self.call(py, |f| {
                f.update_attribute_values_at(instance, values, tag, t)
            })),
        }
    }
    /// Sends an interaction: `parameters` maps parameter handles to bytes. With
    /// `time`, it carries that time stamp.
    #[pyo3(signature = (interaction_class, parameters, tag = None, time = None))]
    fn send_interaction(
        &self,
        py: Python<'_>,
        interaction_class: u32,
        parameters: &Bound<'_, PyDict>,
        tag: Option<Vec<u8>>,
        time: Option<PyTime>,
    ) -> PyResult<()> {
        let parameters = values_from_py(parameters, ParameterHandle)?;
        let (class, tag) = (InteractionClassHandle(interaction_class), tag_bytes(tag));
        match time {
            None => self.call(py, |f| f.send_interaction(class, parameters, tag)),
            Some(time) => with_time!(time, |t| self
                .call(py, |f| { f.send_interaction_at(class, parameters, tag, t) })),
        }
    }
    /// Deletes an owned instance (with `time`, at that time stamp).
    #[pyo3(signature = (instance, tag = None, time = None))]
    fn delete_object_instance(
        &self,
        py: Python<'_>,
        instance: u64,
        tag: Option<Vec<u8>>,
        time: Option<PyTime>,
    ) -> PyResult<()> {
        let (instance, tag) = (ObjectInstanceHandle(instance), tag_bytes(tag));
        match time {
            None => self.call(py, |f| f.delete_object_instance(instance, tag)),
            Some(time) => with_time!(time, |t| self
                .call(py, |f| { f.delete_object_instance_at(instance, tag, t) })),
        }
    }
    /// Asks the owner of a known instance for current values of `attributes`.
    #[pyo3(signature = (instance, attributes, tag = None))]
    fn request_instance_attribute_value_update(
        &self,
        py: Python<'_>,
        instance: u64,
        attributes: Vec<u32>,
        tag: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let attributes = handles(attributes, AttributeHandle);
        let tag = tag_bytes(tag);
        self.call(py, |f| {
            f.request_instance_attribute_value_update(
                ObjectInstanceHandle(instance),
                &attributes,
                tag,
            )
        })
    }
    /// Asks the owners of every instance of `object_class` for current values.
    #[pyo3(signature = (object_class, attributes, tag = None))]
    fn request_class_attribute_value_update(
        &self,
        py: Python<'_>,
        object_class: u32,
        attributes: Vec<u32>,
        tag: Option<Vec<u8>>,
    ) -> PyResult<()> {
        let attributes = handles(attributes, AttributeHandle);
        let tag = tag_bytes(tag);
        self.call(py, |f| {
            f.request_class_attribute_value_update(
                ObjectClassHandle(object_class),
                &attributes,
                tag,
            )
        })
    }

    // ----- time management ------------------------------------------------------------

    /// Asks to regulate time with `lookahead`; `time_regulation_enabled` follows.
    fn enable_time_regulation(&self, py: Python<'_>, lookahead: PyTime) -> PyResult<()> {
        with_time!(lookahead, |l| self
            .call(py, |f| f.enable_time_regulation(l)))
    }
    /// Stops regulating time.
    fn disable_time_regulation(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.disable_time_regulation())
    }
    /// Asks to be time constrained; `time_constrained_enabled` follows.
    fn enable_time_constrained(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.enable_time_constrained())
    }
    /// Stops being time constrained.
    fn disable_time_constrained(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.disable_time_constrained())
    }
    /// Changes the lookahead of a regulating federate.
    fn modify_lookahead(&self, py: Python<'_>, lookahead: PyTime) -> PyResult<()> {
        with_time!(lookahead, |l| self.call(py, |f| f.modify_lookahead(l)))
    }
    /// Time Advance Request (TAR): `time_advance_grant` follows.
    fn time_advance_request(&self, py: Python<'_>, time: PyTime) -> PyResult<()> {
        with_time!(time, |t| self.call(py, |f| f.time_advance_request(t)))
    }
    /// Time Advance Request Available (TARA).
    fn time_advance_request_available(&self, py: Python<'_>, time: PyTime) -> PyResult<()> {
        with_time!(time, |t| self
            .call(py, |f| f.time_advance_request_available(t)))
    }
    /// Next Message Request (NER): granted at `time` or at the next time-stamped
    /// message before it.
    fn next_message_request(&self, py: Python<'_>, time: PyTime) -> PyResult<()> {
        with_time!(time, |t| self.call(py, |f| f.next_message_request(t)))
    }
    /// Next Message Request Available (NERA).
    fn next_message_request_available(&self, py: Python<'_>, time: PyTime) -> PyResult<()> {
        with_time!(time, |t| self
            .call(py, |f| f.next_message_request_available(t)))
    }
    /// Flush Queue Request (FQR): delivers every queued time-stamped message, then
    /// grants.
    fn flush_queue_request(&self, py: Python<'_>, time: PyTime) -> PyResult<()> {
        with_time!(time, |t| self.call(py, |f| f.flush_queue_request(t)))
    }
    /// Sends whatever this federate has buffered (bundling) now.
    fn flush(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.flush())
    }
    /// Greatest Available Logical Time, or `None` when no federate regulates.
    fn query_galt(&self, py: Python<'_>) -> Option<PyObject> {
        self.fed().query_galt().map(|t| time_to_py(py, t))
    }
    /// Least Incoming Time Stamp, or `None`.
    fn query_lits(&self, py: Python<'_>) -> Option<PyObject> {
        self.fed().query_lits().map(|t| time_to_py(py, t))
    }
    /// This federate's logical time.
    fn query_logical_time(&self, py: Python<'_>) -> PyObject {
        time_to_py(py, self.fed().query_logical_time())
    }
    /// This federate's lookahead.
    fn query_lookahead(&self, py: Python<'_>) -> PyObject {
        interval_to_py(py, self.fed().query_lookahead())
    }
    /// True while time regulation is enabled.
    #[getter]
    fn is_time_regulating(&self) -> bool {
        self.fed().is_time_regulating()
    }
    /// True while time constrained is enabled.
    #[getter]
    fn is_time_constrained(&self) -> bool {
        self.fed().is_time_constrained()
    }
    /// True between a time advance request and its grant.
    #[getter]
    fn is_time_advancing(&self) -> bool {
        self.fed().is_time_advancing()
    }

    // ----- callbacks (evoked model) ---------------------------------------------------

    /// Delivers at most one callback to the ambassador, waiting up to `timeout`
    /// seconds for one (the GIL is released while waiting). Returns whether one was
    /// delivered. An exception the ambassador raises propagates from here; the
    /// federate stays usable. Returns `False` at once in the immediate model.
    #[pyo3(signature = (timeout = 0.0))]
    fn evoke(&self, py: Python<'_>, timeout: f64) -> PyResult<bool> {
        let timeout = seconds("timeout", timeout)?;
        if self.fed().process_model() == ProcessModel::Immediate {
            return Ok(false);
        }
        self.check_not_in_callback()?;
        self.fed().check_transport().map_err(rti_error)?;
        let federate = self.fed();
        match py.allow_threads(|| federate.next_callback(timeout)) {
            Some(callback) => {
                self.deliver(py, callback)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// Delivers callbacks to the ambassador: everything that arrives during
    /// `min_wait` seconds, then whatever is already queued, stopping at `max_wait`
    /// seconds. Returns how many were delivered. An exception the ambassador raises
    /// propagates (the callbacks after it stay queued).
    fn evoke_multiple(&self, py: Python<'_>, min_wait: f64, max_wait: f64) -> PyResult<usize> {
        let min_wait = seconds("min_wait", min_wait)?;
        let max_wait = seconds("max_wait", max_wait)?.max(min_wait);
        if self.fed().process_model() == ProcessModel::Immediate {
            return Ok(0);
        }
        self.check_not_in_callback()?;
        self.fed().check_transport().map_err(rti_error)?;
        let federate = self.fed();
        let start = Instant::now();
        let (min_deadline, max_deadline) = (start + min_wait, start + max_wait);
        let mut delivered = 0;
        loop {
            let now = Instant::now();
            if now >= max_deadline {
                break;
            }
            let waiting = now < min_deadline;
            let wait = if waiting {
                min_deadline - now
            } else {
                Duration::ZERO
            };
            match py.allow_threads(|| federate.next_callback(wait)) {
                Some(callback) => {
                    self.deliver(py, callback)?;
                    delivered += 1;
                    py.check_signals()?;
                }
                None if waiting && !federate.is_resigned() => continue,
                None => break,
            }
        }
        Ok(delivered)
    }

    /// How many callbacks are queued for this federate.
    fn pending_callbacks(&self) -> usize {
        self.fed().pending_callbacks()
    }
}

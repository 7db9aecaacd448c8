//! Conversions between Python values and the front crate's: logical times (a Python
//! `int` is an integer time, a `float` a float time), attribute and parameter
//! values (a `dict` of handle to `bytes`), and callbacks' arguments.

use glidepath::{
    Bytes, LogicalTime, LogicalTimeInterval, MessageInfo, OrderType, TransportationType,
};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt};

/// A logical time or interval as Python gave it, before the RTI checks it against
/// the federation's time representation.
#[derive(Clone, Copy, Debug)]
pub enum PyTime {
    /// A Python `float`: `HLAfloat64Time`.
    Float(f64),
    /// A Python `int`: `HLAinteger64Time` (or a whole float time).
    Integer(i64),
}

impl<'py> FromPyObject<'py> for PyTime {
    fn extract_bound(ob: &Bound<'py, PyAny>) -> PyResult<Self> {
        if ob.is_instance_of::<PyInt>() {
            Ok(PyTime::Integer(ob.extract()?))
        } else if ob.is_instance_of::<PyFloat>() {
            Ok(PyTime::Float(ob.extract()?))
        } else {
            Err(PyTypeError::new_err(format!(
                "a logical time must be an int or a float, not {}",
                ob.get_type().name()?
            )))
        }
    }
}

/// Calls `$call` with the time as the type the front crate takes (`f64` or `i64`).
macro_rules! with_time {
    ($time:expr, |$t:ident| $call:expr) => {
        match $time {
            $crate::convert::PyTime::Float($t) => $call,
            $crate::convert::PyTime::Integer($t) => $call,
        }
    };
}
pub(crate) use with_time;

/// A logical time for Python: an `int` for an integer time, else a `float`.
pub fn time_to_py(py: Python<'_>, time: LogicalTime) -> PyObject {
    match (time.is_integer(), time.as_i64()) {
        (true, Some(i)) => i.into_pyobject(py).expect("int").into_any().unbind(),
        _ => time
            .as_f64()
            .into_pyobject(py)
            .expect("float")
            .into_any()
            .unbind(),
    }
}

/// A lookahead for Python, as [`time_to_py`].
pub fn interval_to_py(py: Python<'_>, interval: LogicalTimeInterval) -> PyObject {
    match (interval.is_integer(), interval.as_i64()) {
        (true, Some(i)) => i.into_pyobject(py).expect("int").into_any().unbind(),
        _ => interval
            .as_f64()
            .into_pyobject(py)
            .expect("float")
            .into_any()
            .unbind(),
    }
}

/// Handle → value pairs from a Python mapping of `int` to bytes-like values.
pub fn values_from_py<H>(
    values: &Bound<'_, PyDict>,
    handle: impl Fn(u32) -> H,
) -> PyResult<Vec<(H, Bytes)>> {
    let mut out = Vec::with_capacity(values.len());
    for (key, value) in values.iter() {
        let h: u32 = key.extract()?;
        let bytes: Vec<u8> = if let Ok(b) = value.downcast::<PyBytes>() {
            b.as_bytes().to_vec()
        } else {
            value.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "the value of handle {h} must be bytes (or bytearray), not {}",
                    value
                        .get_type()
                        .name()
                        .map(|n| n.to_string())
                        .unwrap_or_default()
                ))
            })?
        };
        out.push((handle(h), Bytes::from(bytes)));
    }
    Ok(out)
}

/// Values for Python: a `dict` of handle (`int`) to `bytes`.
pub fn values_to_py<'py, H: Copy>(
    py: Python<'py>,
    values: &[(H, Bytes)],
    handle: impl Fn(H) -> u32,
) -> PyResult<Bound<'py, PyDict>> {
    let dict = PyDict::new(py);
    for (h, v) in values {
        dict.set_item(handle(*h), PyBytes::new(py, v))?;
    }
    Ok(dict)
}

fn order_name(order: OrderType) -> &'static str {
    match order {
        OrderType::Receive => "receive",
        OrderType::TimeStamp => "timestamp",
    }
}

/// How a reflected update, a received interaction or a removal travelled.
#[pyclass(frozen, module = "glidepath", name = "MessageInfo")]
pub struct PyMessageInfo {
    /// The handle of the federate that sent it.
    #[pyo3(get)]
    pub producer: u32,
    /// The sender's sequence number (unique per sender).
    #[pyo3(get)]
    pub seq: u64,
    /// The order it was sent with: `"receive"` or `"timestamp"`.
    #[pyo3(get)]
    pub sent_order: &'static str,
    /// The order it was delivered in (`"timestamp"` only to constrained federates).
    #[pyo3(get)]
    pub received_order: &'static str,
    /// `"reliable"` or `"best_effort"`.
    #[pyo3(get)]
    pub transportation: &'static str,
    /// The time stamp (`int` or `float`), or `None` when sent without one.
    #[pyo3(get)]
    pub time: Option<PyObject>,
    /// Wall-clock publication time in nanoseconds (the sender's monotonic clock).
    #[pyo3(get)]
    pub publish_time_ns: u64,
}

#[pymethods]
impl PyMessageInfo {
    fn __repr__(&self) -> String {
        format!(
            "MessageInfo(producer={}, seq={}, sent_order={:?}, received_order={:?}, transportation={:?}, time={}, publish_time_ns={})",
            self.producer,
            self.seq,
            self.sent_order,
            self.received_order,
            self.transportation,
            self.time.as_ref().map(|t| t.to_string()).unwrap_or_else(|| "None".into()),
            self.publish_time_ns
        )
    }
}

impl PyMessageInfo {
    /// The Python form of the front crate's `MessageInfo`.
    pub fn new(py: Python<'_>, info: &MessageInfo) -> PyMessageInfo {
        PyMessageInfo {
            producer: info.producer.0,
            seq: info.seq,
            sent_order: order_name(info.sent_order),
            received_order: order_name(info.received_order),
            transportation: match info.transport {
                TransportationType::Reliable => "reliable",
                TransportationType::BestEffort => "best_effort",
            },
            time: info.time.map(|t| time_to_py(py, t)),
            publish_time_ns: info.publish_time_ns,
        }
    }
}

//! The group-communication bus (`glidepath::bus`) for Python: `Bus`, `BusMessage`,
//! `BusSubscription`, `BusDelivery`, `BusMembership` and the `BusError` exception.
//!
//! Subjects and patterns are `str` (validated by the bus: a bad one raises
//! `ValueError` naming the element); service levels and encodings are their
//! lower-case names (`"fifo"`, `"agreed"`, `"xml"`, `"binary"`). A message's values
//! keep the paper's types: each entry has a type letter (`I`, `F`, `D`, `L`, `B`, `S`,
//! `X`), inferred from the Python value when not given (`bool` → `B`, `int` → `L`,
//! `float` → `D`, `str` → `S`, `bytes` → `X`). Every call that can wait releases the
//! GIL.

use std::str::FromStr;
use std::sync::Mutex;
use std::time::Duration;

use glidepath::bus::{
    Bus, BusConfig, BusError as RustBusError, Delivery, Encoding, Event, MembershipChange,
    MembershipKind, Message, Pattern, ServiceLevel, Subject, Subscription, Value, ValueType,
};
use glidepath::{Bytes, TransportKind};
use pyo3::exceptions::{PyException, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyString};
use pyo3::{create_exception, IntoPyObjectExt};

create_exception!(
    glidepath,
    BusError,
    PyException,
    "The bus's transport failed or is unavailable, or the connection or subscription is closed."
);

fn bus_error(e: RustBusError) -> PyErr {
    match e {
        RustBusError::Subject(e) => PyValueError::new_err(e.to_string()),
        RustBusError::Encode(e) => PyValueError::new_err(e.to_string()),
        other => BusError::new_err(other.to_string()),
    }
}

fn subject(text: &str) -> PyResult<Subject> {
    Subject::new(text).map_err(|e| PyValueError::new_err(e.to_string()))
}

fn pattern(text: &str) -> PyResult<Pattern> {
    Pattern::new(text).map_err(|e| PyValueError::new_err(e.to_string()))
}

fn level(name: &str) -> PyResult<ServiceLevel> {
    ServiceLevel::from_str(name).map_err(PyValueError::new_err)
}

fn value_type(letter: &str) -> PyResult<ValueType> {
    ValueType::from_letter(letter).ok_or_else(|| {
        PyValueError::new_err(format!(
            "unknown value type {letter:?}; known: I (32-bit integer), F (32-bit float), \
             D (64-bit float), L (64-bit integer), B (boolean), S (string), X (binary)"
        ))
    })
}

/// The type the bus gives a Python value when none is named.
fn inferred_type(value: &Bound<'_, PyAny>) -> PyResult<ValueType> {
    // `bool` first: it is a subclass of `int`.
    if value.is_instance_of::<PyBool>() {
        Ok(ValueType::Bool)
    } else if value.is_instance_of::<PyInt>() {
        Ok(ValueType::I64)
    } else if value.is_instance_of::<PyFloat>() {
        Ok(ValueType::F64)
    } else if value.is_instance_of::<PyString>() {
        Ok(ValueType::Str)
    } else if value.is_instance_of::<PyBytes>() || value.is_instance_of::<PyByteArray>() {
        Ok(ValueType::Bin)
    } else {
        Err(PyTypeError::new_err(format!(
            "a bus value is bool, int, float, str or bytes, not {}",
            value.get_type().name()?
        )))
    }
}

/// Converts a Python value to a bus value of type `typ` (an `int` that does not fit
/// `I` raises `OverflowError`; a wrong kind of value `TypeError`).
fn to_value(value: &Bound<'_, PyAny>, typ: ValueType) -> PyResult<Value> {
    Ok(match typ {
        ValueType::I32 => Value::I32(value.extract()?),
        ValueType::F32 => Value::F32(value.extract::<f64>()? as f32),
        ValueType::F64 => Value::F64(value.extract()?),
        ValueType::I64 => Value::I64(value.extract()?),
        ValueType::Bool => {
            if !value.is_instance_of::<PyBool>() {
                return Err(PyTypeError::new_err("type B takes a bool"));
            }
            Value::Bool(value.extract()?)
        }
        ValueType::Str => Value::Str(value.extract()?),
        ValueType::Bin => Value::Bin(Bytes::from(value.extract::<Vec<u8>>()?)),
    })
}

fn to_python(py: Python<'_>, value: &Value) -> PyResult<PyObject> {
    match value {
        Value::I32(v) => v.into_py_any(py),
        Value::F32(v) => f64::from(*v).into_py_any(py),
        Value::F64(v) => v.into_py_any(py),
        Value::I64(v) => v.into_py_any(py),
        Value::Bool(v) => v.into_py_any(py),
        Value::Str(v) => v.into_py_any(py),
        Value::Bin(v) => PyBytes::new(py, v).into_py_any(py),
    }
}

/// A bus message: unordered entries, each a key, a type letter and a value, in the
/// paper's XML (`to_xml`) or the compact binary form (`to_binary`).
///
/// `BusMessage({"x": 1.5, "n": 3})` infers the types; `set(key, value, type="I")`
/// names one. `m[key]` reads a value, `m[key] = v` sets one (keeping the entry's type
/// when the key exists).
#[pyclass(module = "glidepath", name = "BusMessage", eq)]
#[derive(Clone, Default, PartialEq)]
pub struct PyBusMessage {
    pub(crate) message: Message,
}

#[pymethods]
impl PyBusMessage {
    #[new]
    #[pyo3(signature = (entries = None))]
    fn new(entries: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut m = PyBusMessage::default();
        if let Some(entries) = entries {
            for (k, v) in entries.iter() {
                m.set_entry(&k.extract::<String>()?, &v, None)?;
            }
        }
        Ok(m)
    }

    /// Sets `key` to `value` with type letter `type` (inferred when `None`, or the
    /// existing entry's type); returns the message, so calls chain.
    #[pyo3(name = "set", signature = (key, value, r#type = None))]
    fn set_py<'py>(
        slf: &Bound<'py, Self>,
        key: &str,
        value: &Bound<'py, PyAny>,
        r#type: Option<&str>,
    ) -> PyResult<Bound<'py, Self>> {
        slf.borrow_mut().set_entry(key, value, r#type)?;
        Ok(slf.clone())
    }

    /// The value of `key` (`KeyError` when absent).
    fn get(&self, py: Python<'_>, key: &str) -> PyResult<PyObject> {
        self.__getitem__(py, key)
    }

    /// The type letter of `key`'s entry (`KeyError` when absent).
    fn type_of(&self, key: &str) -> PyResult<String> {
        match self.message.get(key) {
            Some(v) => Ok(v.value_type().letter().to_string()),
            None => Err(PyKeyError::new_err(key.to_string())),
        }
    }

    /// The keys, in entry order.
    fn keys(&self) -> Vec<String> {
        self.message
            .entries()
            .iter()
            .map(|e| e.key.clone())
            .collect()
    }

    /// `(key, type letter, value)` for each entry, in entry order.
    fn entries(&self, py: Python<'_>) -> PyResult<Vec<(String, String, PyObject)>> {
        self.message
            .entries()
            .iter()
            .map(|e| {
                Ok((
                    e.key.clone(),
                    e.value.value_type().letter().to_string(),
                    to_python(py, &e.value)?,
                ))
            })
            .collect()
    }

    /// The entries as a `dict` of values.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for e in self.message.entries() {
            d.set_item(&e.key, to_python(py, &e.value)?)?;
        }
        Ok(d)
    }

    /// The paper's XML (section III.A.2 of the formation-flying testbed paper).
    fn to_xml(&self) -> PyResult<String> {
        self.message
            .to_xml()
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// Parses the paper's XML strictly; a bad message raises `ValueError` with the
    /// position and the reason.
    #[staticmethod]
    fn from_xml(data: &Bound<'_, PyAny>) -> PyResult<Self> {
        let bytes: Vec<u8> = if let Ok(s) = data.downcast::<PyString>() {
            s.to_cow()?.as_bytes().to_vec()
        } else {
            data.extract()?
        };
        Message::from_xml(bytes)
            .map(|message| PyBusMessage { message })
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// The compact binary encoding (`docs/wire-format.md`).
    fn to_binary<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.message.to_binary())
    }

    /// Parses the binary encoding; bad bytes raise `ValueError`.
    #[staticmethod]
    fn from_binary(data: &[u8]) -> PyResult<Self> {
        Message::from_binary(data)
            .map(|message| PyBusMessage { message })
            .map_err(|e| PyValueError::new_err(e.to_string()))
    }

    fn __getitem__(&self, py: Python<'_>, key: &str) -> PyResult<PyObject> {
        match self.message.get(key) {
            Some(v) => to_python(py, v),
            None => Err(PyKeyError::new_err(key.to_string())),
        }
    }

    fn __setitem__(&mut self, key: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        self.set_entry(key, value, None)
    }

    fn __delitem__(&mut self, key: &str) -> PyResult<()> {
        match self.message.remove(key) {
            Some(_) => Ok(()),
            None => Err(PyKeyError::new_err(key.to_string())),
        }
    }

    fn __contains__(&self, key: &str) -> bool {
        self.message.get(key).is_some()
    }

    fn __len__(&self) -> usize {
        self.message.len()
    }

    fn __repr__(&self) -> String {
        let entries: Vec<String> = self
            .message
            .entries()
            .iter()
            .map(|e| format!("{}:{}={:?}", e.key, e.value.value_type().letter(), e.value))
            .collect();
        format!("BusMessage({})", entries.join(", "))
    }
}

impl PyBusMessage {
    fn set_entry(
        &mut self,
        key: &str,
        value: &Bound<'_, PyAny>,
        typ: Option<&str>,
    ) -> PyResult<()> {
        if key.is_empty() {
            return Err(PyValueError::new_err("a bus message key must not be empty"));
        }
        let typ = match typ {
            Some(letter) => value_type(letter)?,
            None => match self.message.get(key) {
                Some(old) => old.value_type(),
                None => inferred_type(value)?,
            },
        };
        self.message.set(key, to_value(value, typ)?);
        Ok(())
    }
}

/// A message as a subscriber received it.
#[pyclass(module = "glidepath", name = "BusDelivery", frozen, get_all)]
pub struct PyBusDelivery {
    /// The group it was sent to.
    group: String,
    /// Its subject.
    subject: String,
    /// The message.
    message: Py<PyBusMessage>,
    /// The service level it was sent with (`"fifo"`, `"agreed"`, ...).
    level: &'static str,
    /// The sender's member id.
    sender: u64,
    /// Its position in the group's total order (AGREED and SAFE), else `None`.
    group_seq: Option<u64>,
    /// Publication time, nanoseconds (`glidepath`'s clock, comparable across
    /// processes of one host).
    publish_time_ns: u64,
    /// Size of the encoded message, bytes.
    encoded_bytes: usize,
}

#[pymethods]
impl PyBusDelivery {
    fn __repr__(&self) -> String {
        format!(
            "BusDelivery(group={:?}, subject={:?}, level={:?}, sender={})",
            self.group, self.subject, self.level, self.sender
        )
    }
}

/// A member joined, left or crashed (on subscriptions made by `Bus.join`).
#[pyclass(module = "glidepath", name = "BusMembership", frozen, get_all)]
pub struct PyBusMembership {
    /// The group.
    group: String,
    /// `"joined"`, `"left"` or `"crashed"`.
    kind: &'static str,
    /// The member's id.
    member: u64,
    /// The member's name.
    name: String,
}

#[pymethods]
impl PyBusMembership {
    fn __repr__(&self) -> String {
        format!(
            "BusMembership(group={:?}, kind={:?}, member={}, name={:?})",
            self.group, self.kind, self.member, self.name
        )
    }
}

fn delivery(py: Python<'_>, d: Delivery) -> PyResult<PyObject> {
    let message = Py::new(py, PyBusMessage { message: d.message })?;
    PyBusDelivery {
        group: d.group.as_str().to_string(),
        subject: d.subject.as_str().to_string(),
        message,
        level: d.level.name(),
        sender: d.sender.0,
        group_seq: d.group_seq,
        publish_time_ns: d.publish_time_ns,
        encoded_bytes: d.encoded_bytes,
    }
    .into_py_any(py)
}

fn membership(py: Python<'_>, m: MembershipChange) -> PyResult<PyObject> {
    PyBusMembership {
        group: m.group.as_str().to_string(),
        kind: match m.kind {
            MembershipKind::Joined => "joined",
            MembershipKind::Left => "left",
            MembershipKind::Crashed => "crashed",
        },
        member: m.member.0,
        name: m.name,
    }
    .into_py_any(py)
}

fn event(py: Python<'_>, e: Option<Event>) -> PyResult<Option<PyObject>> {
    match e {
        None => Ok(None),
        Some(Event::Message(d)) => delivery(py, d).map(Some),
        Some(Event::Membership(m)) => membership(py, m).map(Some),
    }
}

/// What `Bus.subscribe` or `Bus.join` returns: `recv` waits for the next
/// `BusDelivery` or `BusMembership`; iterating yields them until the subscription
/// closes.
#[pyclass(module = "glidepath", name = "BusSubscription")]
pub struct PyBusSubscription {
    subscription: Mutex<Option<Subscription>>,
}

impl PyBusSubscription {
    fn with<R>(&self, f: impl FnOnce(&Subscription) -> R) -> PyResult<R> {
        let guard = self.subscription.lock().expect("not poisoned");
        match guard.as_ref() {
            Some(s) => Ok(f(s)),
            None => Err(BusError::new_err("the subscription is closed")),
        }
    }
}

#[pymethods]
impl PyBusSubscription {
    /// The next event, waiting at most `timeout` seconds (forever when `None`);
    /// `None` when the time ran out.
    #[pyo3(signature = (timeout = None))]
    fn recv(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<Option<PyObject>> {
        // A bad argument is the caller's mistake, said before anything waits.
        let timeout = match timeout {
            Some(t) if !(t.is_finite() && t >= 0.0) => {
                return Err(PyValueError::new_err(format!(
                    "timeout must be a finite number of seconds >= 0, not {t}"
                )))
            }
            other => other.map(Duration::from_secs_f64),
        };
        let received = py.allow_threads(|| {
            self.with(|s| match timeout {
                None => s.recv().map(Some),
                Some(t) => s.recv_timeout(t),
            })
        })?;
        event(py, received.map_err(bus_error)?)
    }

    /// The next event if one is waiting, else `None`.
    fn try_recv(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        let received = self.with(|s| s.try_recv())?;
        event(py, received.map_err(bus_error)?)
    }

    /// Stops the subscription (leaving the group if it was the connection's last
    /// there).
    fn close(&self, py: Python<'_>) {
        let s = self.subscription.lock().expect("not poisoned").take();
        py.allow_threads(move || {
            if let Some(s) = s {
                s.close();
            }
        });
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<PyObject>> {
        let received = py.allow_threads(|| self.with(|s| s.recv()))?;
        match received {
            Ok(e) => event(py, Some(e)),
            // A closed subscription ends the iteration.
            Err(RustBusError::Closed) => Ok(None),
            Err(e) => Err(bus_error(e)),
        }
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (_t = None, _v = None, _tb = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        _t: Option<&Bound<'_, PyAny>>,
        _v: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.close(py);
    }
}

/// A connection to the group-communication bus: publish typed messages on
/// subjects with one of Spread's six service levels, subscribe with GMSEC patterns,
/// join groups and see who joins, leaves or crashes.
///
/// `Bus()` is in-process (every `Bus` of this process sees the others);
/// `Bus(transport="nats", nats_url=...)` goes through a NATS server, which must run
/// JetStream for the ordered levels.
#[pyclass(module = "glidepath", name = "Bus")]
pub struct PyBus {
    bus: Bus,
}

#[pymethods]
impl PyBus {
    #[new]
    #[pyo3(signature = (transport = "inproc", nats_url = None, name = "member", group = "BUS", encoding = "xml", crash_timeout = 2.0))]
    fn new(
        py: Python<'_>,
        transport: &str,
        nats_url: Option<String>,
        name: &str,
        group: &str,
        encoding: &str,
        crash_timeout: f64,
    ) -> PyResult<Self> {
        let transport =
            TransportKind::from_str(transport).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let encoding = Encoding::from_str(encoding).map_err(PyValueError::new_err)?;
        if !(crash_timeout.is_finite() && crash_timeout > 0.0) {
            return Err(PyValueError::new_err(format!(
                "crash_timeout must be a positive number of seconds, not {crash_timeout}"
            )));
        }
        let mut config = BusConfig {
            transport,
            encoding,
            name: name.to_string(),
            default_group: subject(group)?,
            crash_timeout: Duration::from_secs_f64(crash_timeout),
            ..BusConfig::default()
        };
        if let Some(url) = nats_url {
            config.nats_url = url;
        }
        let bus = py
            .allow_threads(|| Bus::connect(&config))
            .map_err(bus_error)?;
        Ok(PyBus { bus })
    }

    /// This connection's member id (as senders and membership notices show it).
    #[getter]
    fn member(&self) -> u64 {
        self.bus.member().0
    }

    /// `"inproc"` or `"nats"`.
    #[getter]
    fn transport(&self) -> &'static str {
        match self.bus.config().transport {
            TransportKind::Nats => "nats",
            _ => "inproc",
        }
    }

    /// Publishes `message` (a `BusMessage` or a `dict`) on `subject` with service
    /// level `level`, in `group` (the connection's default group when `None`; this
    /// connection need not be a member).
    #[pyo3(signature = (subject, message, level = "fifo", group = None))]
    fn publish(
        &self,
        py: Python<'_>,
        subject: &str,
        message: &Bound<'_, PyAny>,
        level: &str,
        group: Option<&str>,
    ) -> PyResult<()> {
        let message = match message.downcast::<PyBusMessage>() {
            Ok(m) => m.borrow().message.clone(),
            Err(_) => match message.downcast::<PyDict>() {
                Ok(d) => PyBusMessage::new(Some(d))?.message,
                Err(_) => {
                    return Err(PyTypeError::new_err(
                        "publish takes a BusMessage or a dict of values",
                    ))
                }
            },
        };
        let subject = self::subject(subject)?;
        let level = self::level(level)?;
        let group = match group {
            Some(g) => self::subject(g)?,
            None => self.bus.config().default_group.clone(),
        };
        let bus = &self.bus;
        py.allow_threads(|| bus.publish_to(&group, &subject, &message, level))
            .map_err(bus_error)
    }

    /// Subscribes to a pattern (`*` one element, `>` one or more trailing, `+` zero
    /// or more trailing) in `group` (the default group when `None`).
    #[pyo3(signature = (pattern, group = None))]
    fn subscribe(
        &self,
        py: Python<'_>,
        pattern: &str,
        group: Option<&str>,
    ) -> PyResult<PyBusSubscription> {
        let pattern = self::pattern(pattern)?;
        let group = match group {
            Some(g) => self::subject(g)?,
            None => self.bus.config().default_group.clone(),
        };
        let bus = &self.bus;
        let subscription = py
            .allow_threads(|| bus.subscribe_in(&group, &pattern))
            .map_err(bus_error)?;
        Ok(PyBusSubscription {
            subscription: Mutex::new(Some(subscription)),
        })
    }

    /// Joins `group`: receives everything sent to it and its membership changes,
    /// this connection's own join first.
    fn join(&self, py: Python<'_>, group: &str) -> PyResult<PyBusSubscription> {
        let group = subject(group)?;
        let bus = &self.bus;
        let subscription = py.allow_threads(|| bus.join(&group)).map_err(bus_error)?;
        Ok(PyBusSubscription {
            subscription: Mutex::new(Some(subscription)),
        })
    }

    /// What the connection could not deliver, and what it repaired: `{"malformed",
    /// "lost", "order_violations", "repaired"}`.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.bus.stats();
        let d = PyDict::new(py);
        d.set_item("malformed", s.malformed)?;
        d.set_item("lost", s.lost)?;
        d.set_item("order_violations", s.order_violations)?;
        d.set_item("repaired", s.repaired)?;
        Ok(d)
    }

    /// Closes the connection (what was published goes out first, bounded).
    fn close(&self, py: Python<'_>) {
        let bus = &self.bus;
        py.allow_threads(|| bus.close());
    }

    fn __enter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    #[pyo3(signature = (_t = None, _v = None, _tb = None))]
    fn __exit__(
        &self,
        py: Python<'_>,
        _t: Option<&Bound<'_, PyAny>>,
        _v: Option<&Bound<'_, PyAny>>,
        _tb: Option<&Bound<'_, PyAny>>,
    ) {
        self.close(py);
    }

    fn __repr__(&self) -> String {
        format!(
            "Bus(transport={:?}, member={})",
            self.transport(),
            self.bus.member().0
        )
    }
}

/// Adds the bus's classes and `BusError` to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyBus>()?;
    m.add_class::<PyBusMessage>()?;
    m.add_class::<PyBusSubscription>()?;
    m.add_class::<PyBusDelivery>()?;
    m.add_class::<PyBusMembership>()?;
    m.add("BusError", m.py().get_type::<BusError>())?;
    Ok(())
}

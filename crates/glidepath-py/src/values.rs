//! Typed values from Python: `bool`, `int`, `float`, `str`, `bytes`, `list` and
//! `dict` to and from the HLA encodings of the FOM's data types
//! (`glidepath::fom::Value`, IEEE 1516.2 encodings). Errors are `EncoderException`.

use glidepath::fom::{Fom, Value, ValueError};
use pyo3::prelude::*;
use pyo3::types::{
    PyBool, PyByteArray, PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple,
};

use crate::errors::EncoderException;

/// How deep a Python value may nest before it is refused (a list that contains
/// itself would never end).
const DEPTH_MAX: usize = 64;

/// A Python value as a typed value.
pub fn value_from_py(ob: &Bound<'_, PyAny>) -> PyResult<Value> {
    from_py(ob, 0)
}

fn from_py(ob: &Bound<'_, PyAny>, depth: usize) -> PyResult<Value> {
    if depth > DEPTH_MAX {
        return Err(EncoderException::new_err(format!(
            "a value nested more than {DEPTH_MAX} deep"
        )));
    }
    if ob.is_instance_of::<PyBool>() {
        return Ok(Value::Bool(ob.extract()?));
    }
    if ob.is_instance_of::<PyInt>() {
        return ob
            .extract::<i64>()
            .map(Value::Int)
            .map_err(|_| EncoderException::new_err(format!("{ob} does not fit a 64-bit integer")));
    }
    if ob.is_instance_of::<PyFloat>() {
        return Ok(Value::Float(ob.extract()?));
    }
    if ob.is_instance_of::<PyString>() {
        return Ok(Value::Text(ob.extract()?));
    }
    if ob.is_instance_of::<PyBytes>() || ob.is_instance_of::<PyByteArray>() {
        return Ok(Value::Bytes(ob.extract()?));
    }
    if ob.is_instance_of::<PyList>() || ob.is_instance_of::<PyTuple>() {
        let items = ob
            .try_iter()?
            .map(|item| from_py(&item?, depth + 1))
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Value::List(items));
    }
    if let Ok(dict) = ob.downcast::<PyDict>() {
        let mut fields = Vec::with_capacity(dict.len());
        for (k, v) in dict.iter() {
            let name: String = k.extract().map_err(|_| {
                EncoderException::new_err(format!("a record's field names are str, not {k:?}"))
            })?;
            fields.push((name, from_py(&v, depth + 1)?));
        }
        return Ok(Value::Record(fields));
    }
    // numpy's integers and floats, and anything else that says it is a number.
    if ob.hasattr("__index__")? {
        return Ok(Value::Int(ob.call_method0("__index__")?.extract()?));
    }
    if ob.hasattr("__float__")? {
        return Ok(Value::Float(ob.call_method0("__float__")?.extract()?));
    }
    Err(EncoderException::new_err(format!(
        "cannot encode a {}: give a bool, int, float, str, bytes, list or dict",
        ob.get_type().name()?
    )))
}

/// A typed value as a Python value.
pub fn value_to_py(py: Python<'_>, value: &Value) -> PyResult<PyObject> {
    Ok(match value {
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        Value::Int(i) => i.into_pyobject(py)?.into_any().unbind(),
        Value::Float(f) => f.into_pyobject(py)?.into_any().unbind(),
        Value::Text(t) => t.into_pyobject(py)?.into_any().unbind(),
        Value::Bytes(b) => PyBytes::new(py, b).into_any().unbind(),
        Value::List(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(value_to_py(py, item)?)?;
            }
            list.into_any().unbind()
        }
        Value::Record(fields) => {
            let dict = PyDict::new(py);
            for (name, v) in fields {
                dict.set_item(name, value_to_py(py, v)?)?;
            }
            dict.into_any().unbind()
        }
    })
}

fn value_error(e: ValueError) -> PyErr {
    EncoderException::new_err(e.to_string())
}

/// Encodes a Python value as `data_type`.
pub fn encode(fom: &Fom, data_type: &str, ob: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let value = value_from_py(ob)?;
    fom.encode_value(data_type, &value).map_err(value_error)
}

/// Decodes `data` as `data_type` into a Python value.
pub fn decode(py: Python<'_>, fom: &Fom, data_type: &str, data: &[u8]) -> PyResult<PyObject> {
    let value = fom.decode_value(data_type, data).map_err(value_error)?;
    value_to_py(py, &value)
}

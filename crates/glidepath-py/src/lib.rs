//! The `glidepath` Python package's native module (`glidepath._glidepath`): the RTI,
//! federates and their HLA services, bound with PyO3 to the front crate only.
//!
//! Python sees handles as `int`, values as `dict[int, bytes]`, logical times as
//! `float` or `int`, and errors as the HLA exceptions under `RTIexception`. Every
//! service that can wait releases the GIL; callbacks reach a Python federate
//! ambassador inside `Federate.evoke` / `evoke_multiple` (evoked model) or on the
//! federate's RTI thread, which takes the GIL for each one (immediate model).

use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};

use glidepath::{JoinOptions, ProcessModel, ResignAction, Rti, RtiConfig, TransportKind};
use pyo3::prelude::*;

mod ambassador;
mod bus;
mod convert;
mod ddm;
mod errors;
mod federate;
mod ownership;
mod rust_peer;
mod save;
mod values;

use ambassador::ImmediateAmbassador;
use errors::{config_error, rti_error};
use federate::PyFederate;

/// The process model: where callbacks are delivered.
#[pyclass(eq, eq_int, frozen, module = "glidepath", name = "ProcessModel")]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PyProcessModel {
    /// Callbacks are delivered inside `Federate.evoke` / `evoke_multiple`, on the
    /// calling thread.
    #[pyo3(name = "EVOKED")]
    Evoked,
    /// Callbacks are delivered as soon as they happen, on the federate's RTI thread
    /// (which takes the GIL for each one).
    #[pyo3(name = "IMMEDIATE")]
    Immediate,
}

/// What resigning does with the federate's object instances.
#[pyclass(eq, eq_int, frozen, module = "glidepath", name = "ResignAction")]
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PyResignAction {
    /// Leave the objects registered but owned by nobody.
    #[pyo3(name = "UNCONDITIONALLY_DIVEST_ATTRIBUTES")]
    UnconditionallyDivestAttributes,
    /// Delete every object the federate registered.
    #[pyo3(name = "DELETE_OBJECTS")]
    DeleteObjects,
    /// Cancel pending ownership acquisitions.
    #[pyo3(name = "CANCEL_PENDING_OWNERSHIP_ACQUISITIONS")]
    CancelPendingOwnershipAcquisitions,
    /// Delete the objects the federate may delete, divest the rest.
    #[pyo3(name = "DELETE_OBJECTS_THEN_DIVEST")]
    DeleteObjectsThenDivest,
    /// Cancel acquisitions, delete, then divest.
    #[pyo3(name = "CANCEL_THEN_DELETE_THEN_DIVEST")]
    CancelThenDeleteThenDivest,
    /// Fail with `FederateOwnsAttributes` if the federate still owns objects.
    #[pyo3(name = "NO_ACTION")]
    NoAction,
}

impl From<PyResignAction> for ResignAction {
    fn from(a: PyResignAction) -> ResignAction {
        match a {
            PyResignAction::UnconditionallyDivestAttributes => {
                ResignAction::UnconditionallyDivestAttributes
            }
            PyResignAction::DeleteObjects => ResignAction::DeleteObjects,
            PyResignAction::CancelPendingOwnershipAcquisitions => {
                ResignAction::CancelPendingOwnershipAcquisitions
            }
            PyResignAction::DeleteObjectsThenDivest => ResignAction::DeleteObjectsThenDivest,
            PyResignAction::CancelThenDeleteThenDivest => ResignAction::CancelThenDeleteThenDivest,
            PyResignAction::NoAction => ResignAction::NoAction,
        }
    }
}

/// A run-time infrastructure over one transport: `"inproc"` (every federate in this
/// process), `"nats"` (federates in many processes through a NATS server) or `"shm"`
/// (federates in processes of one host through shared memory, hosted by
/// `Rti.host_shm_system` or `glidepath server --transport shm`).
///
/// `Rti()` is the in-process RTI. Keyword arguments override settings; names are
/// the command-line flags' (`transport`, `nats_url`, `compression`,
/// `compress_min_bytes`, `key_file`, `bundle_bytes`, `bundle_time_us`,
/// `persistence`, `reliable_window`, `ddm_cells`, `ddm_dimensions`, `shm_name`,
/// `shm_ring_bytes`, `save_dir`).
/// `Rti.from_env()` starts from the `GLIDEPATH_*` environment variables instead of the
/// defaults. `save_dir` is where `inproc` keeps federation saves (default
/// `glidepath-saves` under the working directory).
#[pyclass(module = "glidepath", name = "Rti")]
pub struct PyRti {
    rti: Rti,
    config: RtiConfig,
}

fn config_with(mut config: RtiConfig, settings: Vec<(String, String)>) -> PyResult<RtiConfig> {
    let mut args = Vec::new();
    for (name, value) in settings {
        args.push(format!("--{}={value}", name.replace('_', "-")));
    }
    let known = [
        "transport",
        "nats-url",
        "compression",
        "compress-min-bytes",
        "key-file",
        "bundle-bytes",
        "bundle-time-us",
        "persistence",
        "reliable-window",
        "ddm-cells",
        "ddm-dimensions",
        "shm-name",
        "shm-ring-bytes",
        "save-dir",
    ];
    for arg in &args {
        let name = arg[2..].split('=').next().unwrap_or_default();
        if !known.contains(&name) {
            return Err(errors::InvalidLocalSettingsDesignator::new_err(format!(
                "unknown setting `{}`; known: {}",
                name.replace('-', "_"),
                known.join(", ").replace('-', "_")
            )));
        }
    }
    config.apply_args(args).map_err(config_error)?;
    Ok(config)
}

fn settings_from(
    kwargs: Option<&Bound<'_, pyo3::types::PyDict>>,
) -> PyResult<Vec<(String, String)>> {
    let mut settings = Vec::new();
    if let Some(kwargs) = kwargs {
        for (k, v) in kwargs.iter() {
            if v.is_none() {
                continue;
            }
            settings.push((k.extract::<String>()?, v.str()?.extract::<String>()?));
        }
    }
    Ok(settings)
}

impl PyRti {
    fn build(py: Python<'_>, config: RtiConfig) -> PyResult<PyRti> {
        let rti = py
            .allow_threads(|| Rti::from_config(&config))
            .map_err(config_error)?;
        Ok(PyRti { rti, config })
    }
}

#[pymethods]
impl PyRti {
    #[new]
    #[pyo3(signature = (**settings))]
    fn new(py: Python<'_>, settings: Option<&Bound<'_, pyo3::types::PyDict>>) -> PyResult<PyRti> {
        let config = config_with(RtiConfig::default(), settings_from(settings)?)?;
        PyRti::build(py, config)
    }

    /// An RTI configured by the `GLIDEPATH_*` environment variables
    /// (`GLIDEPATH_TRANSPORT`, `GLIDEPATH_NATS_URL`, ...), then by keyword overrides.
    #[staticmethod]
    #[pyo3(signature = (**settings))]
    fn from_env(
        py: Python<'_>,
        settings: Option<&Bound<'_, pyo3::types::PyDict>>,
    ) -> PyResult<PyRti> {
        let config = RtiConfig::from_env().map_err(config_error)?;
        let config = config_with(config, settings_from(settings)?)?;
        PyRti::build(py, config)
    }

    /// The transport's name: `"inproc"` or `"nats"`.
    #[getter]
    fn transport(&self) -> &'static str {
        self.rti.transport_name()
    }

    /// The NATS server URL this RTI was configured with.
    #[getter]
    fn nats_url(&self) -> String {
        self.config.nats_url.clone()
    }

    fn __repr__(&self) -> String {
        format!("Rti(transport={:?})", self.rti.transport_name())
    }

    /// Creates a federation execution from FOM module files, merged in order.
    fn create_federation_execution(
        &self,
        py: Python<'_>,
        name: &str,
        fom_modules: Vec<PathBuf>,
    ) -> PyResult<()> {
        let rti = &self.rti;
        py.allow_threads(|| rti.create_federation_execution(name, &fom_modules))
            .map_err(rti_error)
    }

    /// Destroys a federation execution (fails while federates are joined).
    fn destroy_federation_execution(&self, py: Python<'_>, name: &str) -> PyResult<()> {
        let rti = &self.rti;
        py.allow_threads(|| rti.destroy_federation_execution(name))
            .map_err(rti_error)
    }

    /// Joins federation execution `federation`. Callbacks go to `ambassador` (an
    /// object with the standard callback methods, usually a `FederateAmbassador`
    /// subclass): inside `Federate.evoke` calls in the evoked model, on the RTI
    /// thread in the immediate model. `name=None` lets the RTI choose a name.
    #[pyo3(signature = (federation, ambassador, name = None, federate_type = "python", process_model = PyProcessModel::Evoked))]
    fn join_federation_execution(
        &self,
        py: Python<'_>,
        federation: &str,
        ambassador: Py<PyAny>,
        name: Option<String>,
        federate_type: &str,
        process_model: PyProcessModel,
    ) -> PyResult<PyFederate> {
        let options = JoinOptions {
            federate_name: name,
            federate_type: federate_type.to_string(),
            ..JoinOptions::default()
        };
        let errors = Arc::new(AtomicU64::new(0));
        let rti = &self.rti;
        let federate = match process_model {
            PyProcessModel::Evoked => {
                let options = options.with_process_model(ProcessModel::Evoked);
                py.allow_threads(|| rti.join(federation, options))
            }
            PyProcessModel::Immediate => {
                let bridge = ImmediateAmbassador {
                    ambassador: ambassador.clone_ref(py),
                    errors: errors.clone(),
                };
                py.allow_threads(|| rti.join_immediate(federation, options, bridge))
            }
        }
        .map_err(rti_error)?;
        Ok(PyFederate::new(federate, ambassador, errors))
    }

    /// For the `nats` transport: hosts the executive (the federations' shared state)
    /// in this process unless one already answers on the NATS server. Returns an
    /// `ExecutiveServer` to keep (it stops when closed or garbage-collected), or
    /// `None` when another process hosts it. For `inproc` it returns `None`: the
    /// executive lives inside the transport.
    fn ensure_executive(&self, py: Python<'_>) -> PyResult<Option<PyExecutiveServer>> {
        if self.config.transport != TransportKind::Nats {
            return Ok(None);
        }
        let config = &self.config;
        let server = py
            .allow_threads(|| glidepath::ensure_executive(config))
            .map_err(|e| errors::ConnectionFailed::new_err(e.to_string()))?;
        Ok(server.map(|s| PyExecutiveServer {
            server: Mutex::new(Some(Box::new(s))),
        }))
    }

    /// Hosts the shared-memory system `name` (its files `/dev/shm/glidepath-NAME.*`)
    /// in this process, for `Rti(transport="shm", shm_name=name)` here and in other
    /// processes of this host. Returns the `ExecutiveServer` to keep: the system ends
    /// when it is closed or garbage-collected. Fails when another live process hosts
    /// the name.
    #[staticmethod]
    #[pyo3(signature = (name = "glidepath", ring_bytes = None))]
    fn host_shm_system(
        py: Python<'_>,
        name: &str,
        ring_bytes: Option<u64>,
    ) -> PyResult<PyExecutiveServer> {
        let mut settings = vec![("shm_name".to_string(), name.to_string())];
        if let Some(bytes) = ring_bytes {
            settings.push(("shm_ring_bytes".to_string(), bytes.to_string()));
        }
        let config = config_with(RtiConfig::default(), settings)?;
        let store = Box::new(glidepath::backend::DirSaveStore::new(&config.save_dir));
        let host = py
            .allow_threads(|| {
                glidepath::ShmTransport::host_with_store(
                    &config.shm_name,
                    config.shm_options(),
                    store,
                )
            })
            .map_err(|e| errors::ConnectionFailed::new_err(e.to_string()))?;
        Ok(PyExecutiveServer {
            server: Mutex::new(Some(Box::new(host))),
        })
    }
}

/// The executive hosted by this process: for a NATS system (from
/// `Rti.ensure_executive`) or a shared-memory system (from `Rti.host_shm_system`).
#[pyclass(module = "glidepath", name = "ExecutiveServer")]
pub struct PyExecutiveServer {
    /// A `glidepath::ExecutiveServer` or a hosting `glidepath::ShmTransport`: kept,
    /// and dropped (stopped) on close.
    server: Mutex<Option<Box<dyn std::any::Any + Send>>>,
}

#[pymethods]
impl PyExecutiveServer {
    /// Stops the executive server.
    fn close(&self, py: Python<'_>) {
        let server = self.server.lock().expect("not poisoned").take();
        py.allow_threads(move || drop(server));
    }
}

impl Drop for PyExecutiveServer {
    fn drop(&mut self) {
        if let Some(server) = self.server.lock().map(|mut s| s.take()).unwrap_or(None) {
            Python::with_gil(|py| py.allow_threads(move || drop(server)));
        }
    }
}

/// Runs the test suite's Rust federate (`rust_peer`) on this RTI with the GIL
/// released (call it from a Python thread): `mode` `"lockstep"` returns `(grants,
/// matched, last_grant)`, `"flood"` returns `(sent, receivers_given_up, 0.0)`. For interoperability
/// tests; not part of the stable API.
#[pyfunction]
#[pyo3(name = "_run_rust_peer", signature = (rti, federation, count, mode = "lockstep"))]
fn run_rust_peer(
    py: Python<'_>,
    rti: &PyRti,
    federation: &str,
    count: u32,
    mode: &str,
) -> PyResult<(u64, u64, f64)> {
    let rti = rti.rti.clone();
    let result = match mode {
        "lockstep" => py
            .allow_threads(|| rust_peer::lockstep(&rti, federation, count))
            .map(|r| (r.grants, r.matched, r.last_grant)),
        "flood" => py
            .allow_threads(|| rust_peer::flood(&rti, federation, u64::from(count)))
            .map(|r| (r.sent, r.receivers_given_up, 0.0)),
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "mode must be \"lockstep\" or \"flood\", not {other:?}"
            )))
        }
    };
    result.map_err(|e| errors::RTIinternalError::new_err(format!("rust peer: {e}")))
}

/// The native module.
#[pymodule]
fn _glidepath(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<PyRti>()?;
    m.add_class::<PyFederate>()?;
    m.add_class::<PyExecutiveServer>()?;
    m.add_class::<PyProcessModel>()?;
    m.add_class::<PyResignAction>()?;
    m.add_class::<convert::PyMessageInfo>()?;
    m.add_function(wrap_pyfunction!(run_rust_peer, m)?)?;
    errors::register(m)?;
    bus::register(m)?;
    Ok(())
}

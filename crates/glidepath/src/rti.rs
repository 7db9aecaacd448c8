//! The entry point: an [`Rti`] creates and destroys federation executions over a
//! transport and joins federates to them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use glidepath_core::{
    ExecReply, ExecRequest, FederationError, Fom, LocalRti, ProcessModel, RtiError, TransportError,
};
use glidepath_transport::{Endpoint, InprocTransport, Transport};
use parking_lot::Mutex;

use crate::ambassador::FederateAmbassador;
use crate::config::{ConfigError, RtiConfig, TransportKind};
use crate::federate::{Federate, JoinOptions};
use crate::link::{transport_error, EndpointLink, Outbound};

/// A connection to the run-time infrastructure over one transport.
///
/// Cheap to clone: clones share the transport, so federates joined through any clone
/// see each other.
#[derive(Clone)]
pub struct Rti {
    inner: Arc<RtiInner>,
}

struct RtiInner {
    transport: Arc<dyn Transport>,
    /// The endpoint for create and destroy requests, opened on first use.
    control: Mutex<Option<Box<dyn Endpoint>>>,
}

impl std::fmt::Debug for Rti {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rti")
            .field("transport", &self.inner.transport.name())
            .finish()
    }
}

impl Rti {
    /// An RTI on a fresh in-process bus: every federate joined through it (or its
    /// clones) lives in this process.
    pub fn inproc() -> Rti {
        Rti::with_transport(Arc::new(InprocTransport::new()))
    }

    /// An RTI on a fresh in-process bus that keeps federation saves in files under
    /// `save_dir` ([`Rti::inproc`] keeps them in memory, for the life of the bus).
    pub fn inproc_with_save_dir(save_dir: impl Into<std::path::PathBuf>) -> Rti {
        let store = glidepath_transport::DirSaveStore::new(save_dir);
        Rti::with_transport(Arc::new(InprocTransport::with_save_store(Box::new(store))))
    }

    /// An RTI over any transport backend.
    pub fn with_transport(transport: Arc<dyn Transport>) -> Rti {
        Rti {
            inner: Arc::new(RtiInner {
                transport,
                control: Mutex::new(None),
            }),
        }
    }

    /// An RTI as configured (see [`RtiConfig::from_env`] to honour `GLIDEPATH_TRANSPORT`
    /// and `GLIDEPATH_NATS_URL`). For `nats`, fails with [`ConfigError::Unavailable`]
    /// when no NATS server answers at the configured URL.
    pub fn from_config(config: &RtiConfig) -> Result<Rti, ConfigError> {
        match config.transport {
            TransportKind::Inproc => Ok(Rti::inproc_with_save_dir(&config.save_dir)),
            #[cfg(feature = "transport-nats")]
            TransportKind::Nats => Rti::nats_with(&config.nats_url, config.nats_options()),
            #[cfg(all(feature = "transport-shm", target_os = "linux"))]
            TransportKind::Shm => Rti::shm_with(&config.shm_name, config.shm_options()),
        }
    }

    /// An RTI on the shared-memory system `name` of this host, hosted by a
    /// `glidepath server --transport shm --shm-name NAME` (or any process that called
    /// [`glidepath_transport::ShmTransport::host`]).
    #[cfg(all(feature = "transport-shm", target_os = "linux"))]
    pub fn shm_with(
        name: &str,
        options: glidepath_transport::ShmOptions,
    ) -> Result<Rti, ConfigError> {
        let transport = glidepath_transport::ShmTransport::connect(name, options).map_err(|e| {
            ConfigError::Unavailable {
                transport: TransportKind::Shm.name(),
                reason: e.to_string(),
            }
        })?;
        Ok(Rti::with_transport(Arc::new(transport)))
    }

    /// An RTI over the NATS server at `url`, where a `glidepath server` hosts the
    /// federations. Federates joined through it (or through an RTI in another
    /// process on the same NATS server) see each other.
    #[cfg(feature = "transport-nats")]
    pub fn nats(url: &str) -> Result<Rti, ConfigError> {
        Rti::nats_with(url, glidepath_transport::NatsOptions::default())
    }

    /// [`Rti::nats`] with options: the encoder chain, bundling, per-class overrides,
    /// timeouts.
    #[cfg(feature = "transport-nats")]
    pub fn nats_with(
        url: &str,
        options: glidepath_transport::NatsOptions,
    ) -> Result<Rti, ConfigError> {
        let transport =
            glidepath_transport::NatsTransport::connect_with(url, options).map_err(|e| {
                ConfigError::Unavailable {
                    transport: TransportKind::Nats.name(),
                    reason: e.to_string(),
                }
            })?;
        Ok(Rti::with_transport(Arc::new(transport)))
    }

    /// The transport's configuration name (`"inproc"`, ...).
    pub fn transport_name(&self) -> &'static str {
        self.inner.transport.name()
    }

    /// The transport, for opening endpoints of one's own (tools, benchmarks).
    pub fn transport(&self) -> &Arc<dyn Transport> {
        &self.inner.transport
    }

    fn request(&self, request: ExecRequest) -> Result<ExecReply, RtiError> {
        let mut control = self.inner.control.lock();
        let endpoint = match &mut *control {
            Some(e) => e,
            None => control.insert(self.inner.transport.open().map_err(transport_error)?),
        };
        match endpoint.request(request).map_err(transport_error)? {
            ExecReply::FederationError(e) => Err(e.into()),
            ExecReply::ObjectError(e) => Err(e.into()),
            other => Ok(other),
        }
    }

    /// Creates a federation execution from FOM module files, merged in the order
    /// given. A file that cannot be read, parsed or merged gives
    /// [`FederationError::ErrorReadingFdd`] with `file:line:col: message`.
    pub fn create_federation_execution(
        &self,
        name: &str,
        fom_modules: &[impl AsRef<Path>],
    ) -> Result<(), RtiError> {
        if fom_modules.is_empty() {
            return Err(FederationError::ErrorReadingFdd("no FOM module given".into()).into());
        }
        let paths: Vec<PathBuf> = fom_modules
            .iter()
            .map(|p| p.as_ref().to_path_buf())
            .collect();
        let fom =
            Fom::load_files(&paths).map_err(|e| FederationError::ErrorReadingFdd(e.to_string()))?;
        self.create_federation_execution_with_fom(name, fom)
    }

    /// Creates a federation execution from an already merged FOM.
    pub fn create_federation_execution_with_fom(
        &self,
        name: &str,
        fom: Fom,
    ) -> Result<(), RtiError> {
        match self.request(ExecRequest::Create {
            name: name.to_string(),
            fom: Arc::new(fom),
        })? {
            ExecReply::Created { .. } => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// Destroys a federation execution; fails with
    /// [`FederationError::FederatesCurrentlyJoined`] while anyone is joined.
    pub fn destroy_federation_execution(&self, name: &str) -> Result<(), RtiError> {
        match self.request(ExecRequest::Destroy {
            name: name.to_string(),
        })? {
            ExecReply::Ok => Ok(()),
            other => Err(unexpected(&other)),
        }
    }

    /// Joins a federation execution with callbacks delivered by the evoke calls
    /// ([`ProcessModel::Evoked`]).
    ///
    /// `options.process_model` must be `Evoked`: the immediate model needs an
    /// ambassador, given through [`Rti::join_immediate`].
    pub fn join(&self, federation: &str, options: JoinOptions) -> Result<Federate, RtiError> {
        if options.process_model == ProcessModel::Immediate {
            return Err(RtiError::AmbassadorRequired);
        }
        self.join_with(federation, &options, ProcessModel::Evoked, None)
    }

    /// Joins a federation execution with callbacks delivered to `ambassador` on the
    /// federate's RTI thread as soon as they are produced ([`ProcessModel::Immediate`],
    /// whatever `options.process_model` says).
    pub fn join_immediate(
        &self,
        federation: &str,
        options: JoinOptions,
        ambassador: impl FederateAmbassador + Send + 'static,
    ) -> Result<Federate, RtiError> {
        self.join_with(
            federation,
            &options,
            ProcessModel::Immediate,
            Some(Box::new(ambassador)),
        )
    }

    fn join_with(
        &self,
        federation: &str,
        options: &JoinOptions,
        process_model: ProcessModel,
        ambassador: Option<Box<dyn FederateAmbassador + Send>>,
    ) -> Result<Federate, RtiError> {
        let endpoint = self.inner.transport.open().map_err(transport_error)?;
        let outbound = Outbound::default();
        let joined = LocalRti::join(
            &mut EndpointLink {
                endpoint: &*endpoint,
                outbound: &outbound,
            },
            federation,
            options.federate_name.as_deref(),
            &options.federate_type,
        );
        let mut rti = match joined {
            Ok(rti) => rti,
            Err(e) => {
                endpoint.close();
                return Err(e);
            }
        };
        rti.set_mom_host(&crate::mom_clock::host_name());
        // Joined, but the federate cannot be started: resign it again and say why.
        let abandon = |rti: &mut LocalRti, e: RtiError| {
            let mut link = EndpointLink {
                endpoint: &*endpoint,
                outbound: &outbound,
            };
            let _ = rti.resign(&mut link, glidepath_core::ResignAction::DeleteObjects);
            let _ = outbound.send(&*endpoint, rti);
            endpoint.close();
            Err(e)
        };
        // A backend that filters regions on the wire cuts these into cells.
        let dimensions: Vec<_> = rti
            .fom()
            .dimensions
            .iter()
            .map(|d| (d.handle, d.name.clone(), d.upper_bound))
            .collect();
        if let Err(e) = endpoint.set_dimensions(rti.federation(), &dimensions) {
            return abandon(&mut rti, transport_error(e));
        }
        // The federate's own topic: a subscription that failed would leave it deaf.
        if let Err(e) = outbound.send(&*endpoint, &mut rti) {
            return abandon(&mut rti, e);
        }
        Federate::start(
            endpoint,
            outbound,
            rti,
            process_model,
            options.wait,
            ambassador,
        )
    }
}

fn unexpected(reply: &ExecReply) -> RtiError {
    RtiError::Link(TransportError::UnexpectedReply {
        what: "unexpected",
        reason: format!("{reply:?}"),
    })
}

/// Hosts the shared-memory system `config.shm_name` in this process unless a live
/// process already does: `None` then. Keep the returned transport alive for as long
/// as the federations are needed (dropping it stops the executive).
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
pub fn ensure_shm_host(
    config: &RtiConfig,
) -> Result<Option<glidepath_transport::ShmTransport>, glidepath_transport::TransportError> {
    let store = Box::new(glidepath_transport::DirSaveStore::new(&config.save_dir));
    match glidepath_transport::ShmTransport::host_with_store(
        &config.shm_name,
        config.shm_options(),
        store,
    ) {
        Ok(host) => Ok(Some(host)),
        Err(glidepath_transport::TransportError::ExecutiveAlreadyHosted { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

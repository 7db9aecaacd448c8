//! glidepath: an HLA run-time infrastructure (RTI) for distributed simulation.
//!
//! This crate is the public API; the command-line tool and language bindings use
//! nothing else. An [`Rti`] runs over a transport (the in-process bus by default)
//! and hosts federation executions; each [`Federate`] joined to one offers the HLA
//! services as methods and delivers callbacks to a [`FederateAmbassador`], either
//! inside the evoke calls ([`ProcessModel::Evoked`]) or on its own RTI thread as soon
//! as they happen ([`ProcessModel::Immediate`]).
//!
//! Two federates, one sending an interaction to the other:
//!
//! ```
//! use std::time::Duration;
//! use glidepath::{Bytes, Callback, Fom, FomModule, JoinOptions, ResignAction, Rti};
//!
//! const FOM: &str = r#"<?xml version="1.0"?>
//! <objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
//!   <modelIdentification><name>greetings</name><type>FOM</type><version>1</version></modelIdentification>
//!   <interactions>
//!     <interactionClass>
//!       <name>HLAinteractionRoot</name>
//!       <interactionClass>
//!         <name>Greeting</name>
//!         <sharing>PublishSubscribe</sharing>
//!         <transportation>HLAreliable</transportation>
//!         <order>Receive</order>
//!         <parameter><name>text</name><dataType>HLAunicodeString</dataType></parameter>
//!       </interactionClass>
//!     </interactionClass>
//!   </interactions>
//! </objectModel>"#;
//!
//! let rti = Rti::inproc();
//! let fom = Fom::merge(&[FomModule::parse_str("greetings.xml", FOM)?])?;
//! rti.create_federation_execution_with_fom("hello", fom)?;
//!
//! let alice = rti.join("hello", JoinOptions::named("alice", "example"))?;
//! let bob = rti.join("hello", JoinOptions::named("bob", "example"))?;
//! let greeting = alice.interaction_class_handle("Greeting")?;
//! let text = alice.parameter_handle(greeting, "text")?;
//! bob.subscribe_interaction_class(greeting)?;
//! alice.publish_interaction_class(greeting)?;
//! alice.send_interaction(greeting, [(text, Bytes::from("hello, bob"))], "first")?;
//!
//! // Evoked model: callbacks arrive when bob asks for them.
//! match bob.next_callback(Duration::from_secs(10)) {
//!     Some(Callback::ReceiveInteraction { values, info, .. }) => {
//!         assert_eq!(values[0].1, "hello, bob");
//!         assert_eq!(info.producer, alice.handle());
//!     }
//!     other => panic!("expected the greeting, got {other:?}"),
//! }
//!
//! alice.resign(ResignAction::DeleteObjects)?;
//! bob.resign(ResignAction::DeleteObjects)?;
//! rti.destroy_federation_execution("hello")?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! `crates/glidepath/examples/two_federates.rs` shows objects, time stamps and an
//! ambassador.

#![warn(missing_docs)]

mod ambassador;
pub mod bus;
mod config;
mod delivery;
mod error;
mod federate;
#[cfg(feature = "transport-nats")]
mod hosting;
mod link;
mod mom_clock;
mod rti;

pub use ambassador::{CallbackLog, FederateAmbassador};
pub use config::{
    read_key_file, ConfigError, RtiConfig, TransportKind, BUNDLE_BYTES_ENV, BUNDLE_TIME_US_ENV,
    COMPRESSION_ENV, COMPRESS_MIN_BYTES_ENV, DEFAULT_NATS_URL, DEFAULT_SAVE_DIR, KEY_FILE_ENV,
    NATS_URL_ENV, SAVE_DIR_ENV, TRANSPORT_ENV,
};
#[cfg(feature = "transport-nats")]
pub use config::{
    NATS_CA_ENV, NATS_CERT_ENV, NATS_CREDS_ENV, NATS_KEY_ENV, NATS_NKEY_ENV, NATS_NKEY_FILE_ENV,
    NATS_PASSWORD_ENV, NATS_PASSWORD_FILE_ENV, NATS_TOKEN_ENV, NATS_TOKEN_FILE_ENV,
    NATS_URL_FILE_ENV, NATS_USER_ENV, REQUEST_TIMEOUT_MS_ENV, STREAM_REPLICAS_ENV,
};
pub use delivery::WaitStrategy;
pub use error::{NameError, NameKind};
pub use federate::{Federate, IntoLogicalTime, JoinOptions, WeakFederate};
pub use glidepath_codec::{BundleConfig, ChainConfig, Compression, FederationKey};
pub use rti::Rti;

/// Reference-counted byte buffers: attribute and parameter values and tags.
pub use bytes::Bytes;
/// The management object model: the handles reserved for the RTI's
/// `HLAmanager.HLAfederate` and `HLAmanager.HLAfederation` instances, the attributes
/// glidepath reports, and the IEEE 1516.2 encodings to read their values with.
pub use glidepath_core::mom;
/// A federation execution's number, as the executive assigned it (what
/// [`replay`] reads a kept run by).
pub use glidepath_core::FederationId;
pub use glidepath_core::{
    AttributeHandle, Callback, DdmError, DeclarationError, DimensionHandle, FederateHandle,
    FederateInfo, FederationError, InteractionClassHandle, LocalStats, LogicalTime,
    LogicalTimeInterval, MessageInfo, ObjectClassHandle, ObjectError, ObjectInstanceHandle,
    OrderType, OwnershipError, ParameterHandle, PeerError, ProcessModel, RangeBounds,
    RegionContext, RegionHandle, ResignAction, RtiError, TimeError, TimeRepresentation, TimeValue,
    TransportationType, Values,
};
/// Federation save and restore: statuses, failure reasons, and the snapshot format.
pub use glidepath_core::{
    FederateSnapshot, RestoreFailureReason, RestoreStatus, SaveFailureReason, SaveRestoreError,
    SaveStatus, SavedInstance, SavedMessage, SavedTime, SnapshotError,
};
/// The Federation Object Model: loading, merging and inspecting FOM modules.
pub use glidepath_fom as fom;
pub use glidepath_fom::{Fom, FomError, FomModule, FomSummary};
/// The ATM TestBed report's statistics: exact-rank percentiles, corrected SD and a
/// recorder of exact counts per value, for benchmarks and run reports alike.
pub use glidepath_stats as stats;
pub use glidepath_transport::{
    monotonic_now_ns, ConnectCause, EndpointStats, InprocTransport, Transport, TransportError,
};

#[cfg(feature = "transport-nats")]
pub use glidepath_transport::nats::{
    redact_url, ExecutiveServer, NatsAuth, NatsSecurity, NatsTls, Persistence, Replay,
    ReplayedEnvelope, Secret,
};
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
pub use glidepath_transport::ShmTransport;
#[cfg(feature = "transport-nats")]
pub use hosting::{ensure_executive, replay, serve_executive, EXECUTIVE_SUBJECT};
#[cfg(all(feature = "transport-shm", target_os = "linux"))]
pub use rti::ensure_shm_host;

/// What it takes to write a transport backend, or to test one: the traits, the
/// contract's conformance suite, the message types a backend routes without reading,
/// and the NATS backend's own options, executive server and test helpers. Programs
/// that only run federates never need it.
pub mod backend {
    pub use glidepath_core::{
        Body, Envelope, ExecReply, ExecRequest, FederationId, Notification, OwnershipNotice,
        OwnershipOutcome, OwnershipRequest, Topic,
    };
    /// The NATS backend, the executive server that hosts federations for it, and a
    /// helper that starts a real `nats-server` (for tests and benchmarks).
    #[cfg(feature = "transport-nats")]
    pub use glidepath_transport::nats;
    /// The shared-memory backend: processes of one host, through rings in `/dev/shm`.
    #[cfg(all(feature = "transport-shm", target_os = "linux"))]
    pub use glidepath_transport::shm;
    pub use glidepath_transport::{
        conformance, conformance_tests, monotonic_now_ns, DirSaveStore, Endpoint, EndpointStats,
        InprocTransport, Transport, TransportError,
    };
    #[cfg(feature = "transport-nats")]
    pub use glidepath_transport::{NatsOptions, NatsTransport};
    #[cfg(all(feature = "transport-shm", target_os = "linux"))]
    pub use glidepath_transport::{ShmOptions, ShmTransport};
}

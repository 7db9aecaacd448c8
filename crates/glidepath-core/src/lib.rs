//! The RTI services — federation, declaration, object, ownership, time and data
//! distribution management — as state machines with no I/O and no clock.
//!
//! Two machines make a federation:
//! - [`FederationExecution`] holds what must be agreed federation-wide: membership,
//!   object instance names and handles, synchronization points, the set of
//!   time-regulating federates. It answers [`ExecRequest`]s and emits [`Notification`]s.
//! - [`LocalRti`] is one federate's local RTI component: its declarations, the object
//!   instances it knows, its time state (GALT, the time-stamp-order queue) and the
//!   callbacks waiting for it. User calls and incoming [`Envelope`]s go in; what to
//!   publish and subscribe comes out as [`Output`]s in an outbox
//!   ([`LocalRti::take_outputs`]), callbacks as [`Callback`]s
//!   ([`LocalRti::poll_callback`]).
//!
//! Whoever drives a `LocalRti` carries its outputs out: a transport (in production)
//! or the deterministic simulator (in tests). The one effect a call waits for, a
//! request to the executive, goes through the [`Link`] trait, which first carries out
//! what was queued before it.

mod callback;
mod error;
mod exec;
pub mod hash;
mod host;
pub mod instant;
mod local_rti;
mod logical_time;
mod message;
pub mod mom;
mod region;
pub mod save;
mod time;
mod transport_error;
mod types;

pub use callback::*;
pub use error::*;
pub use exec::*;
pub use glidepath_fom as fom;
pub use glidepath_fom::{
    AttributeHandle, DimensionHandle, Fom, InteractionClassHandle, ObjectClassHandle, OrderType,
    ParameterHandle, TransportationType,
};
pub use host::{ExecutiveHost, Hosted};
pub use local_rti::{AttributeRegions, Link, LocalRti, LocalStats, Output};
pub use message::*;
pub use region::{regions_overlap, Extent, RangeBounds, RegionHandle, RegionSet};
pub use save::{
    FederateSnapshot, MemorySaveStore, RestoreFailureReason, RestoreStatus, SaveFailureReason,
    SaveNotice, SaveRequest, SaveStatus, SaveStore, SaveStoreError, SavedFederation, SavedInstance,
    SavedMessage, SavedTime, SnapshotError,
};
pub use time::{galt_bound, RegulatorView, TimeSnapshot};
pub use transport_error::{ConnectCause, TransportError};
pub use types::*;

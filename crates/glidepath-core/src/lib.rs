//! The RTI services — federation, declaration, object and time management — as state
//! machines with no I/O and no clock.
//!
//! Two machines make a federation:
//! - [`FederationExecution`] holds what must be agreed federation-wide: membership,
//!   object instance names and handles, synchronization points, the set of
//!   time-regulating federates. It answers [`ExecRequest`]s and emits [`Notification`]s.
//! - [`LocalRti`] is one federate's local RTI component: its declarations, the object
//!   instances it knows, its time state (GALT, the time-stamp-order queue) and the
//!   callbacks waiting for it. User calls and incoming [`Envelope`]s go in; envelopes
//!   to publish, transport subscriptions and [`Callback`]s come out.
//!
//! Both talk to the outside only through the [`Link`] trait, which a transport (in
//! production) or the deterministic simulator (in tests) implements.

mod callback;
mod error;
mod exec;
mod host;
mod local_rti;
mod logical_time;
mod message;
mod time;
mod transport_error;
mod types;

pub use callback::*;
pub use error::*;
pub use exec::*;
pub use glidepath_fom as fom;
pub use glidepath_fom::{
    AttributeHandle, Fom, InteractionClassHandle, ObjectClassHandle, OrderType, ParameterHandle,
    TransportationType,
};
pub use host::{ExecutiveHost, Hosted};
pub use local_rti::{Link, LocalRti, LocalStats};
pub use message::*;
pub use time::{galt_bound, RegulatorView, TimeSnapshot};
pub use transport_error::TransportError;
pub use types::*;

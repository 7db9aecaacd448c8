//! The group-communication bus of the formation-flying testbed (seed `003_...`):
//! GMSEC subjects, key/typ/val messages in XML or binary, and (with the transports)
//! publish/subscribe with Spread's six service levels.
//!
//! The model and its encodings are `glidepath-bus`'s, re-exported here so that
//! programs, the CLI and the Python bindings use this crate only.

pub use glidepath_bus::message::{binary, xml};
pub use glidepath_bus::subject::fms;
pub use glidepath_bus::subject::fms::FmsSubject;
pub use glidepath_bus::{
    AccessError, DecodeError, EncodeError, Encoding, Entry, EntryError, Message, Pattern, Subject,
    SubjectError, SubjectErrorKind, Value, ValueType,
};

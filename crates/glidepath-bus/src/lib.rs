//! The group-communication bus of the formation-flying testbed (seed `003_...`,
//! issue 15), without I/O: what the front crate's `glidepath::bus` drives over the
//! in-process hub and NATS, and what the simulator drives over a faulty network.
//!
//! - [`subject`]: GMSEC subjects, patterns with the wildcards `*`, `>` and `+`, the
//!   seven-element convention ([`subject::fms`]) and the mapping onto NATS subjects.
//! - [`message`]: the key/typ/val message model with typed accessors, the paper's
//!   XML ([`message::xml`]) and a compact binary form ([`message::binary`]).
//! - [`frame`]: the frames that carry messages and membership changes, and Spread's
//!   six service levels ([`ServiceLevel`]).
//! - [`repair`]: RELIABLE and FIFO over a path that drops: the sender's window,
//!   the repair of a gap, a receiver's per-sender order.
//! - [`stability`]: SAFE delivery and crash detection over a group's total order.
//!
//! **Invariant:** nothing here reads a clock, touches a socket, spawns a thread or
//! draws a random number; decoding never panics on any input.

#![warn(missing_docs)]

pub mod frame;
pub mod message;
pub mod repair;
pub mod stability;
pub mod subject;

pub use frame::{MemberId, MembershipKind, ServiceLevel};
pub use message::{
    AccessError, DecodeError, EncodeError, Encoding, Entry, EntryError, Message, Value, ValueType,
};
pub use subject::{Pattern, Subject, SubjectError, SubjectErrorKind};

//! glidepath-tg: the distributed target generator.
#![warn(missing_docs)]

pub mod atmosphere;
pub mod dynamics;
pub mod geo;
pub mod perf;

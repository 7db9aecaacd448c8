//! glidepath-tg: the distributed target generator.
#![warn(missing_docs)]

pub mod atmosphere;
pub mod bench;
pub mod command;
pub mod dynamics;
pub mod federation;
pub mod geo;
pub mod model;
pub mod node;
pub mod perf;
pub mod runner;
pub mod scenario;
pub mod server;
pub mod wire;

//! glidepath-tg: the distributed target generator (issue 16; NASA's DASE, seed
//! `004_...`, sections V–VII), built on glidepath's public API.
//!
//! A **simulation server** ([`server::SimulationServer`]) and **processing nodes**
//! ([`node::run_node`]) are federates of one federation. The server waits for the
//! nodes, gives each an equal share of a [`scenario::Scenario`]'s aircraft, clocks the
//! frames, routes pilot [`command`]s to the node that owns each aircraft, and takes
//! over a lost node's aircraft ([`server::ServerConfig::node_timeout`]). Each node steps
//! its aircraft in parallel on a rayon pool with the 3-degree-of-freedom point-mass
//! model ([`dynamics`], performance from [`perf`]) or DASE's fixed-cost stand-in
//! ([`model::Model`]), and publishes every state as an HLA `Aircraft` update, so any
//! federate subscribed to `Aircraft` sees the traffic. Aircraft states are updates,
//! control is interactions (`foms/target-generator.xml`); the transport is the RTI's
//! (threads on `inproc`, processes over NATS).
//!
//! ```
//! use glidepath::Rti;
//! use glidepath_tg::{model::Model, perf::PerformanceTable, scenario};
//! use glidepath_tg::server::{LocalLayout, LocalRun, ServerConfig};
//! use glidepath_tg::command::Instruction;
//!
//! let demo = scenario::load("demo", PerformanceTable::builtin())?;
//! let rti = Rti::inproc();
//! let layout = LocalLayout::new(2, 1, Model::PointMass); // two nodes of one thread
//! let mut tg = LocalRun::start(&rti, "tg-doc", demo, &layout, ServerConfig::new(2))?;
//! tg.server.command("UAL101", Instruction::Heading { deg: 270.0 });
//! for _ in 0..3 {
//!     let frame = tg.server.step()?; // every aircraft stepped once and received
//!     assert_eq!(frame.updates, 8);
//! }
//! assert!(tg.server.take_acks()[0].outcome.is_ok());
//! tg.finish()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
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

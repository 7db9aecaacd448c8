//! The Federation Object Model: object classes, interaction classes, dimensions and
//! data types, loaded from IEEE 1516-2010 OMT XML modules and merged into one [`Fom`].
//!
//! Handles are small dense integers assigned in merge order, so every federate that
//! loads the same modules in the same order gets the same handles — the wire format
//! relies on that (the federation executive hands the module list to every joiner).
//!
//! Typical use:
//!
//! ```no_run
//! use std::path::PathBuf;
//! use glidepath_fom::Fom;
//!
//! let fom = Fom::load_files(&[PathBuf::from("foms/air-traffic.xml")])?;
//! let aircraft = fom.object_class_by_name("Aircraft").expect("declared by the module");
//! let altitude = fom.attribute_by_name(aircraft, "altitudeFt");
//! # Ok::<(), glidepath_fom::FomError>(())
//! ```
//!
//! Parsing ([`FomModule::parse_str`], [`FomModule::load`]) checks what one file can
//! show; [`Fom::merge`] adds the built-in MIM, applies the standard's merge rules and
//! checks every cross-reference. Every failure is a [`FomError`] naming the file,
//! line and column.

// `FomError` carries the file name and the names involved so that a message
// can be printed without the modules at hand; it is returned once per load, on a
// cold path, so its size does not matter and boxing it would only make callers'
// matches clumsier.
#![allow(clippy::result_large_err)]

mod error;
mod location;
mod merge;
mod mim;
mod model;
mod parse;
mod xml;

pub use error::{FomError, FomErrorKind};
pub use location::SourceLocation;
pub use mim::{MIM_DATA_TYPE_COUNT, STANDARD_MIM_XML};
pub use model::*;
pub use parse::{
    FomModule, Located, ModuleAttribute, ModuleDataType, ModuleDimension, ModuleInteractionClass,
    ModuleObjectClass, ModuleParameter, ModuleSwitch, ModuleTime, ModuleTransportation,
    ModuleUpdateRate,
};

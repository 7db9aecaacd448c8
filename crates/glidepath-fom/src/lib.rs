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
//!
//! # The MIM
//!
//! The built-in MIM is the standard's own `HLAstandardMIM.xml` (IEEE Std
//! 1516.1-2010), compiled in ([`STANDARD_MIM_XML`]): the roots, the MOM classes,
//! the `HLAfederate` and `HLAserviceGroup` dimensions and the `HLA*` data types.
//! Listing the standard MIM explicitly, first or anywhere, changes nothing.
//!
//! # Merge rules
//!
//! Modules are merged in the order given, after the standard MIM. Each rule has
//! an accepting and a rejecting pair of modules in the crate's
//! `tests/merge_rules.rs`, and published module sets check them in
//! `tests/corpus.rs`.
//!
//! - **Classes.** A class is identified by its qualified name; the same name in
//!   several modules is the same class. The first module to declare a class
//!   defines it, with the attributes (or parameters) it lists, possibly none. A
//!   later module may repeat the class only
//!   - as *scaffolding*: its name with no attributes or parameters, to place
//!     subclasses below it, or
//!   - with an *equivalent* definition: the same attribute (parameter) names,
//!     each agreeing in every property it states.
//!
//!   Anything else (an attribute added, left out or renamed) is refused:
//!   1516-2010 has no way to extend a class from another module. Because the
//!   first declaration defines, scaffolding must come after the module that
//!   defines the class: list modules after the modules they depend on
//!   (OpenRTI's module test and the RPR FOM's `Dependency` references expect the
//!   same).
//! - **Attributes and parameters.** A repeated declaration must agree with the
//!   first in data type, transportation, order and dimensions where it states
//!   them. A name may not appear twice along one class hierarchy.
//! - **Interaction class settings.** Transportation, order and dimensions stated
//!   by several modules must agree; a class that never states them takes its
//!   parent's (the MIM's `HLAinteractionRoot` is reliable and time-stamp ordered,
//!   as the standard's file says).
//! - **Data types, dimensions, transportations, update rates, switches and the
//!   time representation.** The same name declared by several modules must have
//!   identical definitions (data types), the same data type and upper bound
//!   (dimensions; the first declaration's normalization and value when
//!   unspecified are kept), the same reliability (transportations), the same rate (update
//!   rates) and the same setting (switches); every module that names a time
//!   stamp or lookahead type of the standard's must name the same representation.
//! - **References.** Every data type named by an attribute, parameter, array,
//!   record, variant or `<time>` section must be declared by some module or the
//!   MIM; a simple or enumerated type's representation must be a basic data
//!   representation; a variant's discriminant must be an enumeration, and its
//!   alternatives may name only that enumeration's enumerators (ranges
//!   `[A .. C]` and `HLAother` included); every dimension named must be declared.
//!
//! The standard MIM listed explicitly is a module like any other: being the
//! same file as the built-in MIM, it is equivalent in every class, attribute,
//! parameter and data type, and merges without changing anything.
//!

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
mod tree;
mod values;
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
pub use tree::FomTree;
pub use values::{Value, ValueError};

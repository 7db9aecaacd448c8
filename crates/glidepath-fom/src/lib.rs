//! The Federation Object Model: object classes, interaction classes, dimensions and
//! data types, loaded from IEEE 1516-2010 OMT XML modules and merged into one [`Fom`].
//!
//! Handles are small dense integers assigned in merge order, so every federate that
//! loads the same modules in the same order gets the same handles — the wire format
//! relies on that (the federation executive hands the module list to every joiner).

mod model;

pub use model::*;

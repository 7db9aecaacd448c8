//! Merging parsed modules (after the built-in MIM) into one validated [`Fom`],
//! following the IEEE 1516-2010 rules for modular FOMs.
//!
//! The rules applied are written down in the crate documentation (`lib.rs`,
//! "Merge rules").
//!
//! Handles are assigned in the order things are first met: the MIM, then the
//! modules in the order given, each depth-first in document order. The same
//! module list therefore yields the same handles in every process.
//!
//! Data types, dimensions and the other tables of all modules are gathered
//! before any class is merged, so a module may use a data type or dimension
//! that a later module declares; errors still point at the element that is
//! wrong.
//!
//! Here: the entry points and the merger's state; `merge/tables.rs` gathers the
//! tables (transportation types, data types, dimensions, update rates, switches)
//! and checks references, `merge/classes.rs` merges the class trees.

mod classes;
mod tables;

use std::collections::HashMap;
use std::path::PathBuf;

use crate::error::{FomError, FomErrorKind};
use crate::location::SourceLocation;
use crate::mim::standard_mim;
use crate::model::{
    DataType, DimensionHandle, Fom, OrderType, TimeRepresentation, TransportationType,
};
use crate::parse::{FomModule, ReferenceKind};

impl Fom {
    /// Merges the built-in MIM and then `modules`, in order, into one FOM, and
    /// validates every cross-reference.
    ///
    /// The result's [`Fom::module_names`] lists the given modules (not the MIM).
    /// Errors name the file and position of the offending element; when two
    /// modules disagree, that is the element in the later module.
    pub fn merge(modules: &[FomModule]) -> Result<Fom, FomError> {
        let all: Vec<&FomModule> = std::iter::once(standard_mim()).chain(modules).collect();
        let mut merger = Merger::default();
        for (index, module) in all.iter().enumerate() {
            merger.merge_tables(index, module)?;
        }
        for (index, module) in all.iter().enumerate() {
            merger.merge_classes(index, module)?;
        }
        merger.check_type_references()?;
        let mut fom = merger.finish();
        fom.module_names = modules.iter().map(|m| m.name.clone()).collect();
        Ok(fom)
    }

    /// Reads, parses and merges module files, in the order given.
    pub fn load_files(paths: &[PathBuf]) -> Result<Fom, FomError> {
        let modules = paths
            .iter()
            .map(|p| FomModule::load(p))
            .collect::<Result<Vec<_>, _>>()?;
        Fom::merge(&modules)
    }

    /// A data type by name (MIM or module).
    pub fn data_type(&self, name: &str) -> Option<&DataType> {
        self.data_types.iter().find(|t| t.name() == name)
    }

    /// The basic representation that encodes values of data type `name`: the type
    /// itself when it is basic, else the representation behind a simple or
    /// enumerated type. `None` for arrays, records and unknown names.
    ///
    /// Codecs use this so that a simple type such as `EpochMicros` is encoded
    /// exactly as the basic type it aliases.
    pub fn basic_representation(&self, name: &str) -> Option<&DataType> {
        let mut current = self.data_type(name)?;
        // Bounded so that a cycle of aliases cannot loop forever.
        for _ in 0..=self.data_types.len() {
            match current {
                DataType::Basic { .. } => return Some(current),
                DataType::Simple { representation, .. }
                | DataType::Enumerated { representation, .. } => {
                    current = self.data_type(representation)?;
                }
                _ => return None,
            }
        }
        None
    }

    /// A dimension by name.
    pub fn dimension_by_name(&self, name: &str) -> Option<DimensionHandle> {
        self.dimensions
            .iter()
            .find(|d| d.name == name)
            .map(|d| d.handle)
    }
}

/// Where something was declared: which module (0 is the MIM), which file, where.
#[derive(Clone, Copy)]
struct Origin<'m> {
    module: usize,
    file: &'m str,
    location: SourceLocation,
}

impl Origin<'_> {
    /// `file:line:column`, or just the MIM's label for built-in items.
    fn describe(&self) -> String {
        if self.location.is_known() {
            format!("{}:{}", self.file, self.location)
        } else {
            self.file.to_owned()
        }
    }

    fn error(&self, kind: FomErrorKind) -> FomError {
        FomError::new(self.file, self.location, kind)
    }

    fn moved(&self, location: SourceLocation) -> Self {
        Origin { location, ..*self }
    }
}

/// A data type name that must resolve once every module's types are known.
struct PendingTypeReference<'m> {
    name: String,
    referenced_by: String,
    origin: Origin<'m>,
    kind: ReferenceKind,
}

/// A variant record alternative whose enumerators must belong to the
/// discriminant's enumeration, checked once every module's types are known.
struct PendingAlternative<'m> {
    enumeration: String,
    enumerators: String,
    referenced_by: String,
    origin: Origin<'m>,
}

/// The explicit settings of an interaction class, from whichever module gave them first.
#[derive(Default)]
struct InteractionSettings<'m> {
    transportation: Option<(TransportationType, String, Origin<'m>)>,
    order: Option<(OrderType, Origin<'m>)>,
    dimensions: Option<(Vec<DimensionHandle>, Origin<'m>)>,
}

#[derive(Default)]
struct Merger<'m> {
    fom: Fom,
    /// Per object class: the declaration of the module that first declared it.
    object_class_origins: Vec<Origin<'m>>,
    /// Per interaction class: the declaration of the module that first declared it.
    interaction_class_origins: Vec<Origin<'m>>,
    attribute_origins: Vec<Origin<'m>>,
    /// Per attribute: the transportation name as first written, for messages.
    attribute_transportation_names: Vec<String>,
    parameter_origins: Vec<Origin<'m>>,
    interaction_settings: Vec<InteractionSettings<'m>>,
    data_type_index: HashMap<String, (usize, Origin<'m>)>,
    dimension_origins: HashMap<String, (DimensionHandle, Option<u64>, Origin<'m>)>,
    transportations: HashMap<String, (Option<bool>, Origin<'m>)>,
    pending_type_references: Vec<PendingTypeReference<'m>>,
    pending_alternatives: Vec<PendingAlternative<'m>>,
    update_rate_origins: HashMap<String, (f64, Origin<'m>)>,
    switch_origins: HashMap<String, (String, Origin<'m>)>,
    /// The time representation and the first module element that named it.
    time: Option<(TimeRepresentation, &'m str, Origin<'m>)>,
}

impl<'m> Merger<'m> {
    /// Settles inherited lists and interaction settings. Parents always have
    /// smaller handles than their subclasses, so one pass in handle order sees
    /// every parent finished before its children.
    fn finish(mut self) -> Fom {
        self.fom.time_representation = self.time.map(|(r, _, _)| r).unwrap_or_default();
        for i in 0..self.fom.object_classes.len() {
            let mut all = match self.fom.object_classes[i].parent {
                Some(p) => self.fom.object_classes[p.index()].all_attributes.clone(),
                None => Vec::new(),
            };
            all.extend_from_slice(&self.fom.object_classes[i].own_attributes);
            self.fom.object_classes[i].all_attributes = all;
        }
        for i in 0..self.fom.interaction_classes.len() {
            let parent = self.fom.interaction_classes[i]
                .parent
                .map(|p| self.fom.interaction_classes[p.index()].clone());
            let settings = &self.interaction_settings[i];
            let class = &mut self.fom.interaction_classes[i];
            let mut all = parent
                .as_ref()
                .map(|p| p.all_parameters.clone())
                .unwrap_or_default();
            all.extend_from_slice(&class.own_parameters);
            class.all_parameters = all;
            // A class that never states its transportation or order (pure
            // scaffolding) takes its parent's; the root's come from the MIM.
            if let Some((t, _, _)) = &settings.transportation {
                class.transportation = *t;
            } else if let Some(p) = &parent {
                class.transportation = p.transportation;
            }
            if let Some((o, _)) = &settings.order {
                class.order = *o;
            } else if let Some(p) = &parent {
                class.order = p.order;
            }
            if let Some((d, _)) = &settings.dimensions {
                class.dimensions = d.clone();
            }
        }
        self.fom
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).expect("more than 2^32 FOM items")
}

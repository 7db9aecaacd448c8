//! Merging parsed modules (after the built-in MIM) into one validated [`Fom`],
//! following the IEEE 1516-2010 rules for modular FOMs.
//!
//! The rules, as applied here:
//! - A class is identified by its qualified name. The same name in several
//!   modules is the same class; a module that extends a class declares the path
//!   to it from the root (scaffolding), and may add attributes or parameters.
//! - An attribute or parameter may be declared by several modules only if every
//!   declaration agrees (data type, transportation, order, dimensions); a
//!   declaration that gives only the name is a reference and always agrees. The
//!   same name may not appear twice along one class hierarchy (in a class and in
//!   one of its ancestors or descendants).
//! - Data types, dimensions and transportation types with the same name must
//!   have identical definitions.
//! - Every data type named by an attribute, parameter, array, record or variant
//!   must be declared by some module or the MIM; every dimension named by an
//!   attribute or interaction class must be declared by some module.
//!
//! Handles are assigned in the order things are first met: the MIM, then the
//! modules in the order given, each depth-first in document order. The same
//! module list therefore yields the same handles in every process.
//!
//! Data types, dimensions and transportation tables of all modules are gathered
//! before any class is merged, so a module may use what a later module declares
//! (the restaurant example's food module relies on a dimension type from the
//! drinks module); errors still point at the element that is wrong.

use std::collections::HashMap;
use std::path::PathBuf;

use crate::error::{FomError, FomErrorKind};
use crate::location::SourceLocation;
use crate::mim::standard_mim;
use crate::model::{
    Attribute, AttributeHandle, DataType, Dimension, DimensionHandle, Fom, InteractionClass,
    InteractionClassHandle, ObjectClass, ObjectClassHandle, OrderType, Parameter, ParameterHandle,
    TimeRepresentation, TransportationType,
};
use crate::parse::{
    FomModule, Located, ModuleAttribute, ModuleInteractionClass, ModuleObjectClass, ModuleParameter,
};

impl Fom {
    /// Merges the built-in MIM and then `modules`, in order, into one FOM, and
    /// validates every cross-reference.
    ///
    /// The result's [`Fom::module_names`] lists the given modules (not the MIM).
    /// Errors name the file and position of the offending element; when two
    /// modules disagree, that is the element in the later module.
    pub fn merge(modules: &[FomModule]) -> Result<Fom, FomError> {
        let mim = standard_mim();
        let all: Vec<&FomModule> = std::iter::once(&mim).chain(modules).collect();
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
    attribute_origins: Vec<Origin<'m>>,
    /// Per attribute: the transportation name as first written, for messages.
    attribute_transportation_names: Vec<String>,
    parameter_origins: Vec<Origin<'m>>,
    interaction_settings: Vec<InteractionSettings<'m>>,
    data_type_index: HashMap<String, (usize, Origin<'m>)>,
    dimension_origins: HashMap<String, (DimensionHandle, Option<u64>, Origin<'m>)>,
    transportations: HashMap<String, (Option<bool>, Origin<'m>)>,
    pending_type_references: Vec<PendingTypeReference<'m>>,
    /// The time representation and the first module element that named it.
    time: Option<(TimeRepresentation, &'m str, Origin<'m>)>,
}

impl<'m> Merger<'m> {
    /// Transportation table, data types and dimensions of one module.
    fn merge_tables(&mut self, module: usize, m: &'m FomModule) -> Result<(), FomError> {
        let file = m.source.as_str();
        let origin = |location| Origin {
            module,
            file,
            location,
        };

        // Every module that names a time stamp or lookahead type must agree.
        for (name, location) in m.time.time_stamp.iter().chain(&m.time.lookahead) {
            let here = origin(*location);
            let Some(representation) = TimeRepresentation::from_type_name(name) else {
                continue; // refused by the parser already
            };
            match &self.time {
                None => self.time = Some((representation, name, here)),
                Some((before, first_name, first)) if *before != representation => {
                    return Err(here.error(FomErrorKind::InconsistentDefinition {
                        what: "time representation".into(),
                        name: name.clone(),
                        detail: format!("{name} here, {first_name} before"),
                        first: first.describe(),
                    }));
                }
                Some(_) => {}
            }
        }

        for t in &m.transportations {
            let here = origin(t.location);
            match self.transportations.get_mut(&t.name) {
                None => {
                    self.transportations
                        .insert(t.name.clone(), (t.reliable, here));
                }
                Some((reliable, first)) => match (*reliable, t.reliable) {
                    (Some(a), Some(b)) if a != b => {
                        return Err(here.error(FomErrorKind::InconsistentDefinition {
                            what: "transportation".into(),
                            name: t.name.clone(),
                            detail: format!("reliable {} here, {} before", yes_no(b), yes_no(a)),
                            first: first.describe(),
                        }))
                    }
                    (None, Some(_)) => *reliable = t.reliable,
                    _ => {}
                },
            }
        }

        for t in &m.data_types {
            let here = origin(t.location);
            let name = t.definition.name();
            if let Some((index, first)) = self.data_type_index.get(name) {
                let before = &self.fom.data_types[*index];
                if *before != t.definition {
                    return Err(here.error(FomErrorKind::InconsistentDefinition {
                        what: "data type".into(),
                        name: name.to_owned(),
                        detail: format!(
                            "{} here, {} before",
                            describe_type(&t.definition),
                            describe_type(before)
                        ),
                        first: first.describe(),
                    }));
                }
                continue;
            }
            self.data_type_index
                .insert(name.to_owned(), (self.fom.data_types.len(), here));
            self.fom.data_types.push(t.definition.clone());
            for r in &t.references {
                self.pending_type_references.push(PendingTypeReference {
                    name: r.name.clone(),
                    referenced_by: r.referenced_by.clone(),
                    origin: origin(r.location),
                });
            }
        }

        for d in &m.dimensions {
            let here = origin(d.location);
            if let Some((handle, upper_bound, first)) = self.dimension_origins.get(&d.name) {
                let before = &self.fom.dimensions[handle.index()];
                let detail = if before.data_type != d.data_type {
                    Some(format!(
                        "data type {} here, {} before",
                        d.data_type, before.data_type
                    ))
                } else if *upper_bound != d.upper_bound {
                    Some(format!(
                        "upper bound {} here, {} before",
                        bound(d.upper_bound),
                        bound(*upper_bound)
                    ))
                } else {
                    None
                };
                if let Some(detail) = detail {
                    return Err(here.error(FomErrorKind::InconsistentDefinition {
                        what: "dimension".into(),
                        name: d.name.clone(),
                        detail,
                        first: first.describe(),
                    }));
                }
                continue;
            }
            let handle = DimensionHandle(to_u32(self.fom.dimensions.len()));
            self.dimension_origins
                .insert(d.name.clone(), (handle, d.upper_bound, here));
            self.fom.dimensions.push(Dimension {
                handle,
                name: d.name.clone(),
                data_type: d.data_type.clone(),
                // Only the MIM's HLAfederate leaves the bound to the RTI: one
                // value per possible federate handle.
                upper_bound: d.upper_bound.unwrap_or(1 << 32),
            });
        }
        Ok(())
    }

    fn merge_classes(&mut self, module: usize, m: &'m FomModule) -> Result<(), FomError> {
        let file = m.source.as_str();
        if let Some(root) = &m.object_root {
            self.merge_object_class(module, file, root, None)?;
        }
        if let Some(root) = &m.interaction_root {
            self.merge_interaction_class(module, file, root, None)?;
        }
        Ok(())
    }

    fn merge_object_class(
        &mut self,
        module: usize,
        file: &'m str,
        class: &'m ModuleObjectClass,
        parent: Option<ObjectClassHandle>,
    ) -> Result<(), FomError> {
        let qualified_name = match parent {
            Some(p) => format!(
                "{}.{}",
                self.fom.object_classes[p.index()].qualified_name,
                class.name
            ),
            None => class.name.clone(),
        };
        let handle = match self.fom.object_class_by_qname.get(&qualified_name) {
            Some(h) => *h,
            None => {
                let handle = ObjectClassHandle(to_u32(self.fom.object_classes.len()));
                self.fom.object_classes.push(ObjectClass {
                    handle,
                    name: class.name.clone(),
                    qualified_name: qualified_name.clone(),
                    parent,
                    own_attributes: Vec::new(),
                    all_attributes: Vec::new(),
                });
                self.fom
                    .object_class_by_qname
                    .insert(qualified_name, handle);
                handle
            }
        };
        for attribute in &class.attributes {
            self.merge_attribute(module, file, handle, attribute)?;
        }
        for subclass in &class.subclasses {
            self.merge_object_class(module, file, subclass, Some(handle))?;
        }
        Ok(())
    }

    fn merge_attribute(
        &mut self,
        module: usize,
        file: &'m str,
        class: ObjectClassHandle,
        decl: &'m ModuleAttribute,
    ) -> Result<(), FomError> {
        let here = Origin {
            module,
            file,
            location: decl.location,
        };
        let class_name = self.fom.object_classes[class.index()]
            .qualified_name
            .clone();

        let own = &self.fom.object_classes[class.index()].own_attributes;
        if let Some(existing) = own
            .iter()
            .copied()
            .find(|a| self.fom.attributes[a.index()].name == decl.name)
        {
            return self.check_attribute_agrees(here, existing, decl);
        }

        // The name must be free along the whole hierarchy through this class.
        let clash = self
            .fom
            .object_classes
            .iter()
            .filter(|c| {
                c.handle != class
                    && (self.fom.is_object_subclass_of(class, c.handle)
                        || self.fom.is_object_subclass_of(c.handle, class))
            })
            .flat_map(|c| c.own_attributes.iter().copied())
            .find(|a| self.fom.attributes[a.index()].name == decl.name);
        if let Some(other) = clash {
            let owner = &self.fom.object_classes[self.fom.attributes[other.index()].class.index()]
                .qualified_name;
            return Err(here.error(FomErrorKind::DuplicateName {
                what: "attribute".into(),
                name: format!("{class_name}.{} (also declared by {owner})", decl.name),
                first: self.attribute_origins[other.index()].describe(),
            }));
        }

        let data_type = decl
            .data_type
            .as_ref()
            .ok_or_else(|| here.error(FomErrorKind::missing("dataType", "attribute")))?;
        let transportation_decl = decl
            .transportation
            .as_ref()
            .ok_or_else(|| here.error(FomErrorKind::missing("transportation", "attribute")))?;
        let order = decl
            .order
            .as_ref()
            .ok_or_else(|| here.error(FomErrorKind::missing("order", "attribute")))?;
        let transportation = self.resolve_transportation(here, transportation_decl)?;
        let referenced_by = format!("attribute {class_name}.{}", decl.name);
        let dimensions = match &decl.dimensions {
            Some(list) => self.resolve_dimensions(here, list, &referenced_by)?,
            None => Vec::new(),
        };

        let handle = AttributeHandle(to_u32(self.fom.attributes.len()));
        self.fom.attributes.push(Attribute {
            handle,
            name: decl.name.clone(),
            class,
            data_type: data_type.value.clone(),
            transportation,
            order: order.value,
            dimensions,
        });
        self.attribute_origins.push(here);
        self.attribute_transportation_names
            .push(transportation_decl.value.clone());
        self.fom.object_classes[class.index()]
            .own_attributes
            .push(handle);
        self.pending_type_references.push(PendingTypeReference {
            name: data_type.value.clone(),
            referenced_by,
            origin: here.moved(data_type.location),
        });
        Ok(())
    }

    /// A second declaration of an attribute: from another module, and agreeing in
    /// every property it states.
    fn check_attribute_agrees(
        &self,
        here: Origin<'m>,
        existing: AttributeHandle,
        decl: &ModuleAttribute,
    ) -> Result<(), FomError> {
        let before = &self.fom.attributes[existing.index()];
        let first = self.attribute_origins[existing.index()];
        let class = self.fom.object_classes[before.class.index()]
            .qualified_name
            .clone();
        if first.module == here.module {
            return Err(here.error(FomErrorKind::DuplicateName {
                what: "attribute".into(),
                name: format!("{class}.{}", decl.name),
                first: first.describe(),
            }));
        }
        let inconsistent = |location: SourceLocation, detail: String| {
            here.moved(location)
                .error(FomErrorKind::InconsistentAttribute {
                    class: class.clone(),
                    attribute: decl.name.clone(),
                    detail,
                    first: first.describe(),
                })
        };
        if let Some(t) = &decl.data_type {
            if t.value != before.data_type {
                return Err(inconsistent(
                    t.location,
                    format!("data type {} here, {} before", t.value, before.data_type),
                ));
            }
        }
        if let Some(t) = &decl.transportation {
            if self.resolve_transportation(here, t)? != before.transportation {
                let name_before = &self.attribute_transportation_names[existing.index()];
                return Err(inconsistent(
                    t.location,
                    format!("transportation {} here, {name_before} before", t.value),
                ));
            }
        }
        if let Some(o) = &decl.order {
            if o.value != before.order {
                return Err(inconsistent(
                    o.location,
                    format!(
                        "order {} here, {} before",
                        order_name(o.value),
                        order_name(before.order)
                    ),
                ));
            }
        }
        if let Some(list) = &decl.dimensions {
            let referenced_by = format!("attribute {class}.{}", decl.name);
            let dimensions = self.resolve_dimensions(here, list, &referenced_by)?;
            if !same_set(&dimensions, &before.dimensions) {
                let location = list.first().map_or(here.location, |d| d.location);
                return Err(inconsistent(
                    location,
                    format!(
                        "dimensions [{}] here, [{}] before",
                        self.dimension_names(&dimensions),
                        self.dimension_names(&before.dimensions)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn merge_interaction_class(
        &mut self,
        module: usize,
        file: &'m str,
        class: &'m ModuleInteractionClass,
        parent: Option<InteractionClassHandle>,
    ) -> Result<(), FomError> {
        let here = Origin {
            module,
            file,
            location: class.location,
        };
        let qualified_name = match parent {
            Some(p) => format!(
                "{}.{}",
                self.fom.interaction_classes[p.index()].qualified_name,
                class.name
            ),
            None => class.name.clone(),
        };
        let handle = match self.fom.interaction_class_by_qname.get(&qualified_name) {
            Some(h) => *h,
            None => {
                let handle = InteractionClassHandle(to_u32(self.fom.interaction_classes.len()));
                self.fom.interaction_classes.push(InteractionClass {
                    handle,
                    name: class.name.clone(),
                    qualified_name: qualified_name.clone(),
                    parent,
                    own_parameters: Vec::new(),
                    all_parameters: Vec::new(),
                    // Settled in `finish`, from this or an ancestor's declaration.
                    transportation: TransportationType::Reliable,
                    order: OrderType::Receive,
                    dimensions: Vec::new(),
                });
                self.interaction_settings
                    .push(InteractionSettings::default());
                self.fom
                    .interaction_class_by_qname
                    .insert(qualified_name.clone(), handle);
                handle
            }
        };

        let inconsistent = |origin: Origin<'m>, detail: String, first: &Origin<'m>| {
            origin.error(FomErrorKind::InconsistentDefinition {
                what: "interaction class".into(),
                name: qualified_name.clone(),
                detail,
                first: first.describe(),
            })
        };
        if let Some(t) = &class.transportation {
            let resolved = self.resolve_transportation(here, t)?;
            let origin = here.moved(t.location);
            match &self.interaction_settings[handle.index()].transportation {
                Some((before, name, first)) if *before != resolved => {
                    return Err(inconsistent(
                        origin,
                        format!("transportation {} here, {name} before", t.value),
                        first,
                    ));
                }
                Some(_) => {}
                None => {
                    self.interaction_settings[handle.index()].transportation =
                        Some((resolved, t.value.clone(), origin))
                }
            }
        }
        if let Some(o) = &class.order {
            let origin = here.moved(o.location);
            match &self.interaction_settings[handle.index()].order {
                Some((before, first)) if *before != o.value => {
                    let detail = format!(
                        "order {} here, {} before",
                        order_name(o.value),
                        order_name(*before)
                    );
                    return Err(inconsistent(origin, detail, first));
                }
                Some(_) => {}
                None => self.interaction_settings[handle.index()].order = Some((o.value, origin)),
            }
        }
        if let Some(list) = &class.dimensions {
            let dimensions = self.resolve_dimensions(
                here,
                list,
                &format!("interaction class {qualified_name}"),
            )?;
            let origin = here.moved(list.first().map_or(class.location, |d| d.location));
            match &self.interaction_settings[handle.index()].dimensions {
                Some((before, first)) if !same_set(before, &dimensions) => {
                    let detail = format!(
                        "dimensions [{}] here, [{}] before",
                        self.dimension_names(&dimensions),
                        self.dimension_names(before)
                    );
                    return Err(inconsistent(origin, detail, first));
                }
                Some(_) => {}
                None => {
                    self.interaction_settings[handle.index()].dimensions =
                        Some((dimensions, origin))
                }
            }
        }

        for parameter in &class.parameters {
            self.merge_parameter(module, file, handle, parameter)?;
        }
        for subclass in &class.subclasses {
            self.merge_interaction_class(module, file, subclass, Some(handle))?;
        }
        Ok(())
    }

    fn merge_parameter(
        &mut self,
        module: usize,
        file: &'m str,
        class: InteractionClassHandle,
        decl: &'m ModuleParameter,
    ) -> Result<(), FomError> {
        let here = Origin {
            module,
            file,
            location: decl.location,
        };
        let class_name = self.fom.interaction_classes[class.index()]
            .qualified_name
            .clone();

        let own = &self.fom.interaction_classes[class.index()].own_parameters;
        if let Some(existing) = own
            .iter()
            .copied()
            .find(|p| self.fom.parameters[p.index()].name == decl.name)
        {
            let first = self.parameter_origins[existing.index()];
            if first.module == module {
                return Err(here.error(FomErrorKind::DuplicateName {
                    what: "parameter".into(),
                    name: format!("{class_name}.{}", decl.name),
                    first: first.describe(),
                }));
            }
            let before = &self.fom.parameters[existing.index()].data_type;
            if let Some(t) = decl.data_type.as_ref().filter(|t| t.value != *before) {
                return Err(here
                    .moved(t.location)
                    .error(FomErrorKind::InconsistentParameter {
                        class: class_name,
                        parameter: decl.name.clone(),
                        detail: format!("data type {} here, {before} before", t.value),
                        first: first.describe(),
                    }));
            }
            return Ok(());
        }

        let clash = self
            .fom
            .interaction_classes
            .iter()
            .filter(|c| {
                c.handle != class
                    && (self.fom.is_interaction_subclass_of(class, c.handle)
                        || self.fom.is_interaction_subclass_of(c.handle, class))
            })
            .flat_map(|c| c.own_parameters.iter().copied())
            .find(|p| self.fom.parameters[p.index()].name == decl.name);
        if let Some(other) = clash {
            let owner = &self.fom.interaction_classes
                [self.fom.parameters[other.index()].class.index()]
            .qualified_name;
            return Err(here.error(FomErrorKind::DuplicateName {
                what: "parameter".into(),
                name: format!("{class_name}.{} (also declared by {owner})", decl.name),
                first: self.parameter_origins[other.index()].describe(),
            }));
        }

        let data_type = decl
            .data_type
            .as_ref()
            .ok_or_else(|| here.error(FomErrorKind::missing("dataType", "parameter")))?;
        let handle = ParameterHandle(to_u32(self.fom.parameters.len()));
        self.fom.parameters.push(Parameter {
            handle,
            name: decl.name.clone(),
            class,
            data_type: data_type.value.clone(),
        });
        self.parameter_origins.push(here);
        self.fom.interaction_classes[class.index()]
            .own_parameters
            .push(handle);
        self.pending_type_references.push(PendingTypeReference {
            name: data_type.value.clone(),
            referenced_by: format!("parameter {class_name}.{}", decl.name),
            origin: here.moved(data_type.location),
        });
        Ok(())
    }

    /// Maps a transportation name to a delivery guarantee: the two standard names,
    /// or a name from a `<transportations>` table that states its reliability.
    fn resolve_transportation(
        &self,
        here: Origin<'m>,
        name: &Located<String>,
    ) -> Result<TransportationType, FomError> {
        let at = here.moved(name.location);
        match self.transportations.get(&name.value) {
            Some((Some(true), _)) => Ok(TransportationType::Reliable),
            Some((Some(false), _)) => Ok(TransportationType::BestEffort),
            Some((None, _)) => Err(at.error(FomErrorKind::invalid(
                "transportation",
                &name.value,
                "a transportation whose <reliable> is stated in its <transportations> table",
            ))),
            None => Err(at.error(FomErrorKind::UnknownTransportation {
                name: name.value.clone(),
            })),
        }
    }

    fn resolve_dimensions(
        &self,
        here: Origin<'m>,
        names: &[Located<String>],
        referenced_by: &str,
    ) -> Result<Vec<DimensionHandle>, FomError> {
        names
            .iter()
            .map(|d| {
                self.dimension_origins
                    .get(&d.value)
                    .map(|(h, _, _)| *h)
                    .ok_or_else(|| {
                        here.moved(d.location)
                            .error(FomErrorKind::UnknownDimension {
                                name: d.value.clone(),
                                referenced_by: referenced_by.to_owned(),
                            })
                    })
            })
            .collect()
    }

    fn dimension_names(&self, handles: &[DimensionHandle]) -> String {
        handles
            .iter()
            .map(|h| self.fom.dimensions[h.index()].name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn check_type_references(&self) -> Result<(), FomError> {
        for r in &self.pending_type_references {
            if !self.data_type_index.contains_key(&r.name) {
                return Err(r.origin.error(FomErrorKind::UnknownDataType {
                    name: r.name.clone(),
                    referenced_by: r.referenced_by.clone(),
                }));
            }
        }
        Ok(())
    }

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

fn same_set(a: &[DimensionHandle], b: &[DimensionHandle]) -> bool {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort();
    b.sort();
    a == b
}

fn order_name(order: OrderType) -> &'static str {
    match order {
        OrderType::Receive => "Receive",
        OrderType::TimeStamp => "TimeStamp",
    }
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "Yes"
    } else {
        "No"
    }
}

fn bound(b: Option<u64>) -> String {
    b.map_or_else(|| "(left to the RTI)".to_owned(), |b| b.to_string())
}

/// A one-line description of a data type definition, for mismatch messages.
fn describe_type(t: &DataType) -> String {
    match t {
        DataType::Basic {
            size_bits, endian, ..
        } => format!("basic {size_bits}-bit {endian:?}-endian"),
        DataType::Simple { representation, .. } => format!("simple over {representation}"),
        DataType::Enumerated {
            representation,
            enumerators,
            ..
        } => {
            let list: Vec<String> = enumerators
                .iter()
                .map(|(n, v)| format!("{n}={}", v.join("|")))
                .collect();
            format!("enumeration over {representation} [{}]", list.join(", "))
        }
        DataType::Array {
            element,
            cardinality,
            encoding,
            ..
        } => {
            format!("array of {element}, cardinality {cardinality}, encoding {encoding}")
        }
        DataType::FixedRecord {
            fields, encoding, ..
        } => {
            let list: Vec<String> = fields.iter().map(|(n, t)| format!("{n}: {t}")).collect();
            format!("fixed record {{{}}} encoding {encoding}", list.join(", "))
        }
        DataType::VariantRecord {
            discriminant,
            data_type,
            alternatives,
            encoding,
            ..
        } => {
            let list: Vec<String> = alternatives
                .iter()
                .map(|(e, n, t)| format!("{e} => {n}: {t}"))
                .collect();
            format!(
                "variant record on {discriminant}: {data_type} [{}] encoding {encoding}",
                list.join(", ")
            )
        }
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).expect("more than 2^32 FOM items")
}

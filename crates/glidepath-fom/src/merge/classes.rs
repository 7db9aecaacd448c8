//! Merging the object and interaction class trees: classes by qualified name,
//! attributes and parameters that must agree across modules, and the settings an
//! interaction class inherits.

use crate::error::{FomError, FomErrorKind};
use crate::location::SourceLocation;
use crate::model::{
    Attribute, AttributeHandle, DimensionHandle, InteractionClass, InteractionClassHandle,
    ObjectClass, ObjectClassHandle, OrderType, Parameter, ParameterHandle, TransportationType,
};
use crate::parse::{
    FomModule, Located, ModuleAttribute, ModuleInteractionClass, ModuleObjectClass,
    ModuleParameter, ReferenceKind,
};

use super::{to_u32, InteractionSettings, Merger, Origin, PendingTypeReference};

impl<'m> Merger<'m> {
    pub(super) fn merge_classes(
        &mut self,
        module: usize,
        m: &'m FomModule,
    ) -> Result<(), FomError> {
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
        let here = Origin {
            module,
            file,
            location: class.location,
        };
        let handle = match self.fom.object_class_by_qname.get(&qualified_name) {
            Some(h) => {
                // Declared by an earlier module: this is scaffolding (no
                // attributes) or must be an equivalent definition.
                let own: Vec<&str> = self.fom.object_classes[h.index()]
                    .own_attributes
                    .iter()
                    .map(|a| self.fom.attributes[a.index()].name.as_str())
                    .collect();
                let declared: Vec<&str> =
                    class.attributes.iter().map(|a| a.name.as_str()).collect();
                if !declared.is_empty() && !same_names(&own, &declared) {
                    return Err(not_equivalent(
                        here,
                        "object class",
                        &qualified_name,
                        "attributes",
                        &declared,
                        &own,
                        &self.object_class_origins[h.index()],
                    ));
                }
                *h
            }
            None => {
                let handle = ObjectClassHandle(to_u32(self.fom.object_classes.len()));
                self.object_class_origins.push(here);
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

        // The 1516-2010 DIF schema makes everything but the name optional; an
        // attribute that states no transportation or order is reliable and
        // receive-ordered, the standard's defaults.
        let reliable = Located {
            value: "HLAreliable".to_owned(),
            location: decl.location,
        };
        let transportation_decl = decl.transportation.as_ref().unwrap_or(&reliable);
        let order = decl.order.as_ref().map_or(OrderType::Receive, |o| o.value);
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
            data_type: decl.data_type.as_ref().map(|t| t.value.clone()),
            transportation,
            order,
            dimensions,
        });
        self.attribute_origins.push(here);
        self.attribute_transportation_names
            .push(transportation_decl.value.clone());
        self.fom.object_classes[class.index()]
            .own_attributes
            .push(handle);
        if let Some(data_type) = &decl.data_type {
            self.pending_type_references.push(PendingTypeReference {
                name: data_type.value.clone(),
                referenced_by,
                origin: here.moved(data_type.location),
                kind: ReferenceKind::Any,
            });
        }
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
            if Some(&t.value) != before.data_type.as_ref() {
                return Err(inconsistent(
                    t.location,
                    format!(
                        "data type {} here, {} before",
                        t.value,
                        before.data_type.as_deref().unwrap_or("(none)")
                    ),
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
            Some(h) => {
                // Declared by an earlier module: this is scaffolding (no
                // parameters) or must be an equivalent definition.
                let own: Vec<&str> = self.fom.interaction_classes[h.index()]
                    .own_parameters
                    .iter()
                    .map(|p| self.fom.parameters[p.index()].name.as_str())
                    .collect();
                let declared: Vec<&str> =
                    class.parameters.iter().map(|p| p.name.as_str()).collect();
                if !declared.is_empty() && !same_names(&own, &declared) {
                    return Err(not_equivalent(
                        here,
                        "interaction class",
                        &qualified_name,
                        "parameters",
                        &declared,
                        &own,
                        &self.interaction_class_origins[h.index()],
                    ));
                }
                *h
            }
            None => {
                let handle = InteractionClassHandle(to_u32(self.fom.interaction_classes.len()));
                self.interaction_class_origins.push(here);
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
            if let Some(t) = decl
                .data_type
                .as_ref()
                .filter(|t| Some(&t.value) != before.as_ref())
            {
                return Err(here
                    .moved(t.location)
                    .error(FomErrorKind::InconsistentParameter {
                        class: class_name,
                        parameter: decl.name.clone(),
                        detail: format!(
                            "data type {} here, {} before",
                            t.value,
                            before.as_deref().unwrap_or("(none)")
                        ),
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

        let handle = ParameterHandle(to_u32(self.fom.parameters.len()));
        self.fom.parameters.push(Parameter {
            handle,
            name: decl.name.clone(),
            class,
            data_type: decl.data_type.as_ref().map(|t| t.value.clone()),
        });
        self.parameter_origins.push(here);
        self.fom.interaction_classes[class.index()]
            .own_parameters
            .push(handle);
        if let Some(data_type) = &decl.data_type {
            self.pending_type_references.push(PendingTypeReference {
                name: data_type.value.clone(),
                referenced_by: format!("parameter {class_name}.{}", decl.name),
                origin: here.moved(data_type.location),
                kind: ReferenceKind::Any,
            });
        }
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
}

/// True when both lists hold the same names, in any order.
fn same_names(a: &[&str], b: &[&str]) -> bool {
    let mut a = a.to_vec();
    let mut b = b.to_vec();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

/// A class repeated by a later module with other attributes or parameters than
/// the module that first declared it.
fn not_equivalent(
    here: Origin<'_>,
    what: &str,
    class: &str,
    members: &str,
    declared: &[&str],
    before: &[&str],
    first: &Origin<'_>,
) -> FomError {
    here.error(FomErrorKind::InconsistentDefinition {
        what: what.into(),
        name: class.into(),
        detail: format!(
            "{members} [{}] here, [{}] before; IEEE 1516-2010 lets a later module repeat a \
             class only with the same {members} (an equivalent definition) or with none \
             (scaffolding for its subclasses)",
            declared.join(", "),
            before.join(", ")
        ),
        first: first.describe(),
    })
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

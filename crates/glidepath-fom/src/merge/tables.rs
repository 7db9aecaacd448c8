//! Merging the tables every class refers to: transportation types, data types,
//! dimensions, update rates and switches (all modules' before any class), and the
//! checks that every data type named is declared and of the kind required there.

use crate::error::{FomError, FomErrorKind};
use crate::model::{DataType, Dimension, DimensionHandle, Switch, TimeRepresentation, UpdateRate};
use crate::parse::{FomModule, ReferenceKind};

use super::{to_u32, Merger, Origin, PendingAlternative, PendingTypeReference};

impl<'m> Merger<'m> {
    /// Transportation table, data types and dimensions of one module.
    pub(super) fn merge_tables(&mut self, module: usize, m: &'m FomModule) -> Result<(), FomError> {
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
                // A time type of the module's own (the restaurant example's
                // `TimeType`) must be declared, but selects no representation:
                // glidepath's time is HLAfloat64Time or HLAinteger64Time.
                self.pending_type_references.push(PendingTypeReference {
                    name: name.clone(),
                    referenced_by: "the <time> section".into(),
                    origin: here,
                    kind: ReferenceKind::Any,
                });
                continue;
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
                    kind: r.kind,
                });
            }
            if let DataType::VariantRecord {
                data_type,
                alternatives,
                ..
            } = &t.definition
            {
                for (index, (alternative, enumerators)) in alternatives
                    .iter()
                    .zip(&t.alternative_enumerators)
                    .enumerate()
                {
                    let label = alternative
                        .name
                        .clone()
                        .unwrap_or_else(|| (index + 1).to_string());
                    self.pending_alternatives.push(PendingAlternative {
                        enumeration: data_type.clone(),
                        enumerators: enumerators.value.clone(),
                        referenced_by: format!("alternative {label} of variant record {name}"),
                        origin: origin(enumerators.location),
                    });
                }
            }
        }

        for r in &m.update_rates {
            let here = origin(r.location);
            match self.update_rate_origins.get(&r.name) {
                Some((rate, first)) if *rate != r.rate_hz => {
                    return Err(here.error(FomErrorKind::InconsistentDefinition {
                        what: "update rate".into(),
                        name: r.name.clone(),
                        detail: format!("rate {} here, {} before", r.rate_hz, rate),
                        first: first.describe(),
                    }));
                }
                Some(_) => {}
                None => {
                    self.update_rate_origins
                        .insert(r.name.clone(), (r.rate_hz, here));
                    self.fom.update_rates.push(UpdateRate {
                        name: r.name.clone(),
                        rate_hz: r.rate_hz,
                    });
                }
            }
        }

        for s in &m.switches {
            let here = origin(s.location);
            match self.switch_origins.get(&s.name) {
                Some((value, first)) if *value != s.value => {
                    return Err(here.error(FomErrorKind::InconsistentDefinition {
                        what: "switch".into(),
                        name: s.name.clone(),
                        detail: format!("{} here, {value} before", s.value),
                        first: first.describe(),
                    }));
                }
                Some(_) => {}
                None => {
                    self.switch_origins
                        .insert(s.name.clone(), (s.value.clone(), here));
                    self.fom.switches.push(Switch {
                        name: s.name.clone(),
                        value: s.value.clone(),
                    });
                }
            }
        }

        for d in &m.dimensions {
            let here = origin(d.location);
            if let Some((handle, upper_bound, first)) = self.dimension_origins.get(&d.name) {
                let before = &self.fom.dimensions[handle.index()];
                let detail = if before.data_type != d.data_type {
                    Some(format!(
                        "data type {} here, {} before",
                        or_none(&d.data_type),
                        or_none(&before.data_type)
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
                // A dimension without a bound (the MIM's HLAfederate, for one)
                // leaves it to the RTI: one value per possible federate handle.
                upper_bound: d.upper_bound.unwrap_or(1 << 32),
                normalization: d.normalization.clone(),
                default_range: d.default_range.unwrap_or_default(),
            });
        }
        Ok(())
    }

    /// Every data type named resolves, to a type of the kind required there, and
    /// every variant alternative names enumerators its discriminant has.
    pub(super) fn check_type_references(&self) -> Result<(), FomError> {
        for r in &self.pending_type_references {
            let Some((index, _)) = self.data_type_index.get(&r.name) else {
                return Err(r.origin.error(FomErrorKind::UnknownDataType {
                    name: r.name.clone(),
                    referenced_by: r.referenced_by.clone(),
                }));
            };
            let found = &self.fom.data_types[*index];
            let expected = match (r.kind, found) {
                (ReferenceKind::Any, _)
                | (ReferenceKind::BasicRepresentation, DataType::Basic { .. })
                | (ReferenceKind::Enumeration, DataType::Enumerated { .. }) => continue,
                (ReferenceKind::BasicRepresentation, _) => "a basic data representation",
                (ReferenceKind::Enumeration, _) => "an enumerated data type",
            };
            return Err(r.origin.error(FomErrorKind::WrongDataTypeKind {
                name: r.name.clone(),
                referenced_by: r.referenced_by.clone(),
                found: kind_name(found).into(),
                expected: expected.into(),
            }));
        }
        for a in &self.pending_alternatives {
            let Some(DataType::Enumerated { enumerators, .. }) = self
                .data_type_index
                .get(&a.enumeration)
                .map(|(index, _)| &self.fom.data_types[*index])
            else {
                continue; // reported above
            };
            let known = |name: &str| enumerators.iter().any(|(e, _)| e == name);
            if let Some(missing) = enumerator_names(&a.enumerators).find(|n| !known(n)) {
                return Err(a.origin.error(FomErrorKind::UnknownEnumerator {
                    enumerator: missing.to_owned(),
                    enumeration: a.enumeration.clone(),
                    referenced_by: a.referenced_by.clone(),
                }));
            }
        }
        Ok(())
    }
}

/// The enumerator names an alternative's `<enumerator>` text mentions: items
/// separated by commas, each a name or a range `[first .. last]`; `HLAother`
/// (every value no other alternative names) is not a name of the enumeration.
fn enumerator_names(text: &str) -> impl Iterator<Item = &str> {
    text.split(',')
        .map(str::trim)
        .flat_map(|item| {
            let range = item.strip_prefix('[').and_then(|r| r.strip_suffix(']'));
            match range.and_then(|r| r.split_once("..")) {
                Some((first, last)) => vec![first.trim(), last.trim()],
                None => vec![item],
            }
        })
        .filter(|name| !name.is_empty() && *name != "HLAother")
}

/// How a data type's kind reads in a message.
fn kind_name(t: &DataType) -> &'static str {
    match t {
        DataType::Basic { .. } => "a basic data representation",
        DataType::Simple { .. } => "a simple data type",
        DataType::Enumerated { .. } => "an enumerated data type",
        DataType::Array { .. } => "an array data type",
        DataType::FixedRecord { .. } => "a fixed record data type",
        DataType::VariantRecord { .. } => "a variant record data type",
    }
}

fn or_none(name: &Option<String>) -> &str {
    name.as_deref().unwrap_or("(none)")
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
                .map(|a| {
                    format!(
                        "{} => {}: {}",
                        a.enumerators,
                        a.name.as_deref().unwrap_or("(unnamed)"),
                        a.data_type.as_deref().unwrap_or("(no data)")
                    )
                })
                .collect();
            format!(
                "variant record on {discriminant}: {data_type} [{}] encoding {encoding}",
                list.join(", ")
            )
        }
    }
}

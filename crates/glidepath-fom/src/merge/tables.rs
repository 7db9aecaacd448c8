//! Merging the tables every class refers to: transportation types, data types and
//! dimensions (all modules' before any class), and the check that every data type
//! named is declared.

use crate::error::{FomError, FomErrorKind};
use crate::model::{DataType, Dimension, DimensionHandle, TimeRepresentation};
use crate::parse::FomModule;

use super::{to_u32, Merger, Origin, PendingTypeReference};

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

    pub(super) fn check_type_references(&self) -> Result<(), FomError> {
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

//! Reading the data type tables: one `ModuleDataType` per `<basicData>`,
//! `<simpleData>`, `<enumeratedData>`, `<arrayData>`, `<fixedRecordData>` and
//! `<variantRecordData>`, with the value checks the OMT schema states.

use crate::error::{FomError, FomErrorKind};
use crate::location::SourceLocation;
use crate::model::{DataType, Endian, VariantAlternative};
use crate::xml::Element;

use super::super::{Located, ModuleDataType, ReferenceKind, TypeReference};
use super::{Field, ModuleReader};

impl ModuleReader<'_> {
    /// One entry of a data type table; `None` for elements that are not data types
    /// (tool-specific extensions), which are skipped like other unknown content.
    ///
    /// Every value the schema constrains is checked here (sizes, endianness,
    /// cardinalities, enumerator values); what needs the other tables (a
    /// representation being basic, an alternative's enumerator existing) is checked
    /// when the modules are merged.
    pub(super) fn data_type(&self, element: &Element) -> Result<Option<ModuleDataType>, FomError> {
        let location = self.loc(element);
        let name = || self.required(element, "name").map(|f| f.text.to_owned());
        let mut references = Vec::new();
        let mut alternative_enumerators = Vec::new();
        let mut refer = |field: &Field<'_>, referenced_by: String, kind: ReferenceKind| {
            references.push(TypeReference {
                name: field.text.to_owned(),
                referenced_by,
                location: field.location,
                kind,
            });
        };

        let definition = match element.name.as_str() {
            "basicData" => {
                let name = name()?;
                let size = self.required(element, "size")?;
                let size_bits = size.text.parse::<u32>().map_err(|_| {
                    self.error(
                        size.location,
                        FomErrorKind::invalid("size", size.text, "a size in bits"),
                    )
                })?;
                let endian = self.required(element, "endian")?;
                let endian = match endian.text {
                    "Big" => Endian::Big,
                    "Little" => Endian::Little,
                    other => {
                        return Err(self.error(
                            endian.location,
                            FomErrorKind::invalid("endian", other, "Big or Little"),
                        ))
                    }
                };
                DataType::Basic {
                    name,
                    size_bits,
                    endian,
                }
            }
            "simpleData" => {
                let name = name()?;
                let representation = self.required(element, "representation")?;
                refer(
                    &representation,
                    format!("simple data type {name}"),
                    ReferenceKind::BasicRepresentation,
                );
                DataType::Simple {
                    name,
                    representation: representation.text.to_owned(),
                }
            }
            "enumeratedData" => {
                let name = name()?;
                let representation = self.required(element, "representation")?;
                refer(
                    &representation,
                    format!("enumerated data type {name}"),
                    ReferenceKind::BasicRepresentation,
                );
                let mut enumerators = Vec::new();
                for e in element.children_named("enumerator") {
                    let enumerator = self.required(e, "name")?.text.to_owned();
                    enumerators.push((enumerator, self.enumerator_values(e)?));
                }
                if enumerators.is_empty() {
                    return Err(self.error(
                        location,
                        FomErrorKind::missing("enumerator", "enumeratedData"),
                    ));
                }
                DataType::Enumerated {
                    name,
                    representation: representation.text.to_owned(),
                    enumerators,
                }
            }
            "arrayData" => {
                let name = name()?;
                let element_type = self.required(element, "dataType")?;
                refer(
                    &element_type,
                    format!("array data type {name}"),
                    ReferenceKind::Any,
                );
                let cardinality = self.required(element, "cardinality")?;
                if !is_cardinality(cardinality.text) {
                    return Err(self.error(
                        cardinality.location,
                        FomErrorKind::invalid(
                            "cardinality",
                            cardinality.text,
                            "Dynamic, a non-negative integer, or a range [lower..upper], \
                             one per dimension separated by commas",
                        ),
                    ));
                }
                let encoding = self.required(element, "encoding")?.text.to_owned();
                DataType::Array {
                    name,
                    element: element_type.text.to_owned(),
                    cardinality: cardinality.text.to_owned(),
                    encoding,
                }
            }
            "fixedRecordData" => {
                let name = name()?;
                let encoding = self.required(element, "encoding")?.text.to_owned();
                let mut fields = Vec::new();
                for f in element.children_named("field") {
                    let field_name = self.required(f, "name")?.text.to_owned();
                    let field_type = self.required(f, "dataType")?;
                    refer(
                        &field_type,
                        format!("field {field_name} of fixed record {name}"),
                        ReferenceKind::Any,
                    );
                    fields.push((field_name, field_type.text.to_owned()));
                }
                DataType::FixedRecord {
                    name,
                    fields,
                    encoding,
                }
            }
            "variantRecordData" => {
                let name = name()?;
                let discriminant = self.required(element, "discriminant")?.text.to_owned();
                let discriminant_type = self.required(element, "dataType")?;
                refer(
                    &discriminant_type,
                    format!("discriminant of variant record {name}"),
                    ReferenceKind::Enumeration,
                );
                let encoding = self.required(element, "encoding")?.text.to_owned();
                let mut alternatives = Vec::new();
                for (index, a) in element.children_named("alternative").enumerate() {
                    let enumerator = self.required(a, "enumerator")?;
                    // The schema makes an alternative's name and data type optional.
                    let alternative_name = self.optional(a, "name")?.map(|n| n.value);
                    let label = match &alternative_name {
                        Some(n) => format!("alternative {n} of variant record {name}"),
                        None => format!("alternative {} of variant record {name}", index + 1),
                    };
                    let alternative_type = self.optional(a, "dataType")?;
                    // `NA` marks an alternative that carries no data.
                    let data_type = alternative_type.filter(|t| t.value != "NA");
                    if let Some(t) = &data_type {
                        refer(
                            &Field {
                                text: &t.value,
                                location: t.location,
                            },
                            label.clone(),
                            ReferenceKind::Any,
                        );
                    }
                    alternative_enumerators.push(Located {
                        value: enumerator.text.to_owned(),
                        location: enumerator.location,
                    });
                    alternatives.push(VariantAlternative {
                        enumerators: enumerator.text.to_owned(),
                        name: alternative_name,
                        data_type: data_type.map(|t| t.value),
                    });
                }
                DataType::VariantRecord {
                    name,
                    discriminant,
                    data_type: discriminant_type.text.to_owned(),
                    alternatives,
                    encoding,
                }
            }
            _ => return Ok(None),
        };
        Ok(Some(ModuleDataType {
            definition,
            location,
            references,
            alternative_enumerators,
        }))
    }

    /// An enumerator's `<value>`s (or the older `values="1, 2"`), each an integer.
    fn enumerator_values(&self, e: &Element) -> Result<Vec<String>, FomError> {
        let mut values: Vec<(&str, SourceLocation)> = Vec::new();
        for v in e.children_named("value") {
            if v.trimmed_text().is_empty() {
                return Err(self.error(self.loc(v), FomErrorKind::empty("value", "enumerator")));
            }
            values.push((v.trimmed_text(), self.loc(v)));
        }
        if values.is_empty() {
            if let Some(text) = e.attribute("values") {
                values = text
                    .split(',')
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(|v| (v, self.loc(e)))
                    .collect();
            }
        }
        if values.is_empty() {
            return Err(self.error(self.loc(e), FomErrorKind::missing("value", "enumerator")));
        }
        for (value, location) in &values {
            if value.parse::<i64>().is_err() {
                return Err(self.error(
                    *location,
                    FomErrorKind::invalid("value", value, "an integer"),
                ));
            }
        }
        Ok(values.into_iter().map(|(v, _)| v.to_owned()).collect())
    }
}

/// True for the schema's cardinality pattern: comma-separated dimensions, each
/// `Dynamic`, a non-negative integer, or a range `[lower..upper]` of them (white
/// space around the parts is tolerated, as OMT tools write it).
fn is_cardinality(text: &str) -> bool {
    let number = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    text.split(',').map(str::trim).all(|dimension| {
        if dimension == "Dynamic" || number(dimension) {
            return true;
        }
        // The schema writes a range `[2..5]`; Portico's own test FOM writes
        // `(2..5)` for the same range, which is accepted too.
        let Some(range) = dimension
            .strip_prefix('[')
            .and_then(|d| d.strip_suffix(']'))
            .or_else(|| {
                dimension
                    .strip_prefix('(')
                    .and_then(|d| d.strip_suffix(')'))
            })
        else {
            return false;
        };
        match range.split_once("..") {
            Some((lower, upper)) => number(lower.trim()) && number(upper.trim()),
            None => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::is_cardinality;

    #[test]
    fn cardinality_follows_the_schema_pattern() {
        for ok in [
            "Dynamic",
            "0",
            "12",
            "[1..4]",
            "[1 .. 4]",
            "4,[1..4],Dynamic",
        ] {
            assert!(is_cardinality(ok), "{ok}");
        }
        for bad in [
            "", "-1", "abc", "1.5", "[1..]", "[..4]", "[1-4]", "4,,2", "dynamic",
        ] {
            assert!(!is_cardinality(bad), "{bad}");
        }
    }
}

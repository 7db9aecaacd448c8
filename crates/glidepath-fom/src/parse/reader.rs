//! The OMT module parser: [`ModuleReader`] turns an XML element tree into a
//! [`FomModule`], reading each property from a child element or an XML attribute and
//! locating every error.

use std::collections::HashMap;

use crate::error::{FomError, FomErrorKind};
use crate::location::{LineIndex, SourceLocation};
use crate::model::{DataType, Endian, OrderType, TimeRepresentation};
use crate::xml::Element;

use super::{
    FomModule, Located, ModuleAttribute, ModuleDataType, ModuleDimension, ModuleInteractionClass,
    ModuleObjectClass, ModuleParameter, ModuleTime, ModuleTransportation, TypeReference,
};

/// Interprets an element tree as an OMT module, turning offsets into positions.
pub(super) struct ModuleReader<'a> {
    pub(super) source: &'a str,
    pub(super) lines: &'a LineIndex<'a>,
}

/// One OMT property read from either a child element or an XML attribute.
struct Field<'e> {
    text: &'e str,
    location: SourceLocation,
}

impl ModuleReader<'_> {
    fn loc(&self, element: &Element) -> SourceLocation {
        self.lines.locate(element.offset)
    }

    fn error(&self, location: SourceLocation, kind: FomErrorKind) -> FomError {
        FomError::new(self.source, location, kind)
    }

    fn at(&self, location: SourceLocation) -> String {
        format!("{}:{}", self.source, location)
    }

    /// The property `name` of `element`: the trimmed text of its first `<name>` child,
    /// else its `name="..."` attribute. Absent and empty are both `None`.
    fn field<'e>(&self, element: &'e Element, name: &str) -> Option<Field<'e>> {
        if let Some(child) = element.child(name) {
            let text = child.trimmed_text();
            return (!text.is_empty()).then(|| Field {
                text,
                location: self.loc(child),
            });
        }
        let text = element.attribute(name)?.trim();
        (!text.is_empty()).then(|| Field {
            text,
            location: self.loc(element),
        })
    }

    fn required<'e>(&self, element: &'e Element, name: &str) -> Result<Field<'e>, FomError> {
        self.field(element, name).ok_or_else(|| {
            self.error(
                self.loc(element),
                FomErrorKind::missing(name, &element.name),
            )
        })
    }

    fn located_string(&self, element: &Element, name: &str) -> Option<Located<String>> {
        self.field(element, name).map(|f| Located {
            value: f.text.to_owned(),
            location: f.location,
        })
    }

    pub(super) fn module(&self, name: &str, root: &Element) -> Result<FomModule, FomError> {
        if root.name != "objectModel" {
            return Err(self.error(
                self.loc(root),
                FomErrorKind::UnexpectedElement {
                    expected: "objectModel".into(),
                    found: root.name.clone(),
                },
            ));
        }
        let model_name = root
            .child("modelIdentification")
            .and_then(|m| self.field(m, "name"))
            .map(|f| f.text.to_owned())
            .or_else(|| root.attribute("name").map(str::to_owned));

        let object_root = match root.child("objects") {
            Some(objects) => self.class_root(objects, "objectClass", "HLAobjectRoot", |e| {
                self.object_class(e)
            })?,
            None => None,
        };
        let interaction_root = match root.child("interactions") {
            Some(interactions) => self.class_root(
                interactions,
                "interactionClass",
                "HLAinteractionRoot",
                |e| self.interaction_class(e),
            )?,
            None => None,
        };

        let mut dimensions = Vec::new();
        if let Some(table) = root.child("dimensions") {
            let mut seen = HashMap::new();
            for element in table.children_named("dimension") {
                let dimension = self.dimension(element)?;
                self.check_unique(&mut seen, "dimension", &dimension.name, dimension.location)?;
                dimensions.push(dimension);
            }
        }

        let mut transportations = Vec::new();
        if let Some(table) = root.child("transportations") {
            let mut seen = HashMap::new();
            for element in table.children_named("transportation") {
                let transportation = self.transportation(element)?;
                self.check_unique(
                    &mut seen,
                    "transportation",
                    &transportation.name,
                    transportation.location,
                )?;
                transportations.push(transportation);
            }
        }

        let mut data_types = Vec::new();
        if let Some(tables) = root.child("dataTypes") {
            let mut seen = HashMap::new();
            for table in &tables.children {
                for element in &table.children {
                    let Some(data_type) = self.data_type(element)? else {
                        continue;
                    };
                    self.check_unique(
                        &mut seen,
                        "data type",
                        data_type.definition.name(),
                        data_type.location,
                    )?;
                    data_types.push(data_type);
                }
            }
        }

        let mut time = ModuleTime::default();
        if let Some(section) = root.child("time") {
            let data_type = |child: &str| {
                section
                    .child(child)
                    .and_then(|e| self.field(e, "dataType"))
                    .map(|f| (f.text.to_owned(), f.location))
            };
            time.time_stamp = data_type("timeStamp");
            time.lookahead = data_type("lookahead");
            for (name, location) in time.time_stamp.iter().chain(&time.lookahead) {
                if TimeRepresentation::from_type_name(name).is_none() {
                    return Err(self.error(
                        *location,
                        FomErrorKind::invalid(
                            "dataType",
                            name,
                            "a time representation glidepath supports: HLAfloat64Time or \
                             HLAinteger64Time (HLAfloat64Interval or HLAinteger64Interval for lookahead)",
                        ),
                    ));
                }
            }
        }

        Ok(FomModule {
            name: name.to_owned(),
            source: self.source.to_owned(),
            model_name,
            object_root,
            interaction_root,
            dimensions,
            transportations,
            data_types,
            time,
        })
    }

    /// Records `name` as declared at `location`, failing if it already was.
    fn check_unique(
        &self,
        seen: &mut HashMap<String, SourceLocation>,
        what: &str,
        name: &str,
        location: SourceLocation,
    ) -> Result<(), FomError> {
        if let Some(first) = seen.insert(name.to_owned(), location) {
            return Err(self.error(
                location,
                FomErrorKind::DuplicateName {
                    what: what.into(),
                    name: name.into(),
                    first: self.at(first),
                },
            ));
        }
        Ok(())
    }

    /// The single root class of a class table, which must carry the standard root name.
    fn class_root<T>(
        &self,
        table: &Element,
        tag: &str,
        root_name: &str,
        read: impl Fn(&Element) -> Result<(T, SourceLocation), FomError>,
    ) -> Result<Option<T>, FomError> {
        let mut roots = table.children_named(tag);
        let Some(first) = roots.next() else {
            return Ok(None);
        };
        if let Some(second) = roots.next() {
            return Err(self.error(
                self.loc(second),
                FomErrorKind::DuplicateName {
                    what: tag.into(),
                    name: root_name.into(),
                    first: self.at(self.loc(first)),
                },
            ));
        }
        let name = self.required(first, "name")?;
        if name.text != root_name {
            return Err(self.error(
                name.location,
                FomErrorKind::invalid(
                    "name",
                    name.text,
                    &format!("{root_name}, the root of every {tag} tree"),
                ),
            ));
        }
        read(first).map(|(class, _)| Some(class))
    }

    fn object_class(
        &self,
        element: &Element,
    ) -> Result<(ModuleObjectClass, SourceLocation), FomError> {
        let location = self.loc(element);
        let name = self.required(element, "name")?.text.to_owned();

        let mut attributes = Vec::new();
        let mut seen = HashMap::new();
        for a in element.children_named("attribute") {
            let attribute = self.attribute(a)?;
            self.check_unique(
                &mut seen,
                "attribute",
                &format!("{name}.{}", attribute.name),
                attribute.location,
            )?;
            attributes.push(attribute);
        }

        let mut subclasses = Vec::new();
        let mut seen = HashMap::new();
        for c in element.children_named("objectClass") {
            let (class, class_location) = self.object_class(c)?;
            self.check_unique(
                &mut seen,
                "object class",
                &format!("{name}.{}", class.name),
                class_location,
            )?;
            subclasses.push(class);
        }
        Ok((
            ModuleObjectClass {
                name,
                location,
                attributes,
                subclasses,
            },
            location,
        ))
    }

    fn attribute(&self, element: &Element) -> Result<ModuleAttribute, FomError> {
        Ok(ModuleAttribute {
            name: self.required(element, "name")?.text.to_owned(),
            location: self.loc(element),
            data_type: self.located_string(element, "dataType"),
            transportation: self.located_string(element, "transportation"),
            order: self.order(element)?,
            dimensions: self.dimension_list(element),
        })
    }

    fn interaction_class(
        &self,
        element: &Element,
    ) -> Result<(ModuleInteractionClass, SourceLocation), FomError> {
        let location = self.loc(element);
        let name = self.required(element, "name")?.text.to_owned();

        let mut parameters = Vec::new();
        let mut seen = HashMap::new();
        for p in element.children_named("parameter") {
            let parameter = ModuleParameter {
                name: self.required(p, "name")?.text.to_owned(),
                location: self.loc(p),
                data_type: self.located_string(p, "dataType"),
            };
            self.check_unique(
                &mut seen,
                "parameter",
                &format!("{name}.{}", parameter.name),
                parameter.location,
            )?;
            parameters.push(parameter);
        }

        let mut subclasses = Vec::new();
        let mut seen = HashMap::new();
        for c in element.children_named("interactionClass") {
            let (class, class_location) = self.interaction_class(c)?;
            self.check_unique(
                &mut seen,
                "interaction class",
                &format!("{name}.{}", class.name),
                class_location,
            )?;
            subclasses.push(class);
        }
        let class = ModuleInteractionClass {
            name,
            location,
            transportation: self.located_string(element, "transportation"),
            order: self.order(element)?,
            dimensions: self.dimension_list(element),
            parameters,
            subclasses,
        };
        Ok((class, location))
    }

    fn order(&self, element: &Element) -> Result<Option<Located<OrderType>>, FomError> {
        let Some(field) = self.field(element, "order") else {
            return Ok(None);
        };
        let value = match field.text {
            "Receive" => OrderType::Receive,
            "TimeStamp" => OrderType::TimeStamp,
            other => {
                return Err(self.error(
                    field.location,
                    FomErrorKind::invalid("order", other, "Receive or TimeStamp"),
                ))
            }
        };
        Ok(Some(Located {
            value,
            location: field.location,
        }))
    }

    /// `<dimensions><dimension>D</dimension>...</dimensions>`, or the older
    /// `dimensions="D1 D2"` attribute. `NA` means none.
    fn dimension_list(&self, element: &Element) -> Option<Vec<Located<String>>> {
        if let Some(list) = element.child("dimensions") {
            let names = list
                .children_named("dimension")
                .map(|d| Located {
                    value: d.trimmed_text().to_owned(),
                    location: self.loc(d),
                })
                .filter(|d| !d.value.is_empty() && d.value != "NA")
                .collect();
            return Some(names);
        }
        let text = element.attribute("dimensions")?;
        let location = self.loc(element);
        Some(
            text.split(|c: char| c.is_whitespace() || c == ',')
                .filter(|s| !s.is_empty() && *s != "NA")
                .map(|s| Located {
                    value: s.to_owned(),
                    location,
                })
                .collect(),
        )
    }

    fn dimension(&self, element: &Element) -> Result<ModuleDimension, FomError> {
        let name = self.required(element, "name")?.text.to_owned();
        let data_type = self.required(element, "dataType")?.text.to_owned();
        let upper_bound = match self.field(element, "upperBound") {
            Some(f) => Some(f.text.parse::<u64>().map_err(|_| {
                self.error(
                    f.location,
                    FomErrorKind::invalid("upperBound", f.text, "a non-negative integer"),
                )
            })?),
            // The standard leaves only the federate dimension's bound to the RTI.
            None if name == "HLAfederate" => None,
            None => {
                return Err(self.error(
                    self.loc(element),
                    FomErrorKind::missing("upperBound", "dimension"),
                ))
            }
        };
        Ok(ModuleDimension {
            name,
            location: self.loc(element),
            data_type,
            upper_bound,
        })
    }

    fn transportation(&self, element: &Element) -> Result<ModuleTransportation, FomError> {
        let name = self.required(element, "name")?.text.to_owned();
        let reliable = match self.field(element, "reliable") {
            None => None,
            Some(f) if f.text.eq_ignore_ascii_case("yes") => Some(true),
            Some(f) if f.text.eq_ignore_ascii_case("no") => Some(false),
            Some(f) => {
                return Err(self.error(
                    f.location,
                    FomErrorKind::invalid("reliable", f.text, "Yes or No"),
                ))
            }
        };
        Ok(ModuleTransportation {
            name,
            location: self.loc(element),
            reliable,
        })
    }

    /// One entry of a data type table; `None` for elements that are not data types
    /// (tool-specific extensions), which are skipped like other unknown content.
    fn data_type(&self, element: &Element) -> Result<Option<ModuleDataType>, FomError> {
        let location = self.loc(element);
        let name = || self.required(element, "name").map(|f| f.text.to_owned());
        let mut references = Vec::new();
        let mut refer = |field: &Field<'_>, referenced_by: String| {
            references.push(TypeReference {
                name: field.text.to_owned(),
                referenced_by,
                location: field.location,
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
                refer(&representation, format!("simple data type {name}"));
                DataType::Simple {
                    name,
                    representation: representation.text.to_owned(),
                }
            }
            "enumeratedData" => {
                let name = name()?;
                let representation = self.required(element, "representation")?;
                refer(&representation, format!("enumerated data type {name}"));
                let mut enumerators = Vec::new();
                for e in element.children_named("enumerator") {
                    let enumerator = self.required(e, "name")?.text.to_owned();
                    let mut values: Vec<String> = e
                        .children_named("value")
                        .map(|v| v.trimmed_text().to_owned())
                        .filter(|v| !v.is_empty())
                        .collect();
                    if values.is_empty() {
                        // The older layout: values="1" or values="1, 2".
                        if let Some(text) = e.attribute("values") {
                            values = text
                                .split(',')
                                .map(|v| v.trim().to_owned())
                                .filter(|v| !v.is_empty())
                                .collect();
                        }
                    }
                    if values.is_empty() {
                        return Err(
                            self.error(self.loc(e), FomErrorKind::missing("value", "enumerator"))
                        );
                    }
                    enumerators.push((enumerator, values));
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
                refer(&element_type, format!("array data type {name}"));
                let cardinality = self.required(element, "cardinality")?.text.to_owned();
                let encoding = self.required(element, "encoding")?.text.to_owned();
                DataType::Array {
                    name,
                    element: element_type.text.to_owned(),
                    cardinality,
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
                );
                let encoding = self.required(element, "encoding")?.text.to_owned();
                let mut alternatives = Vec::new();
                for a in element.children_named("alternative") {
                    let enumerator = self.required(a, "enumerator")?.text.to_owned();
                    let alternative_name = self.required(a, "name")?.text.to_owned();
                    let alternative_type = self.required(a, "dataType")?;
                    // `NA` marks an alternative that carries no data.
                    if alternative_type.text != "NA" {
                        refer(
                            &alternative_type,
                            format!("alternative {alternative_name} of variant record {name}"),
                        );
                    }
                    alternatives.push((
                        enumerator,
                        alternative_name,
                        alternative_type.text.to_owned(),
                    ));
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
        }))
    }
}

//! The OMT module parser: [`ModuleReader`] turns an XML element tree into a
//! [`FomModule`], reading each property from a child element or an XML attribute and
//! locating every error. The data type tables are read in `reader/data_types.rs`.

use std::collections::HashMap;

use crate::error::{FomError, FomErrorKind};
use crate::location::{LineIndex, SourceLocation};
use crate::model::{DefaultRange, OrderType};
use crate::xml::Element;

mod data_types;

use super::{
    FomModule, Located, ModuleAttribute, ModuleDimension, ModuleInteractionClass,
    ModuleObjectClass, ModuleParameter, ModuleSwitch, ModuleTime, ModuleTransportation,
    ModuleUpdateRate,
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

    /// A required property: an error at the element when it is absent, at the
    /// property when it is present but empty.
    fn required<'e>(&self, element: &'e Element, name: &str) -> Result<Field<'e>, FomError> {
        if let Some(field) = self.field(element, name) {
            return Ok(field);
        }
        let (location, kind) = match element.child(name) {
            Some(empty) => (self.loc(empty), FomErrorKind::empty(name, &element.name)),
            None if element.attribute(name).is_some() => {
                (self.loc(element), FomErrorKind::empty(name, &element.name))
            }
            None => (
                self.loc(element),
                FomErrorKind::missing(name, &element.name),
            ),
        };
        Err(self.error(location, kind))
    }

    /// An optional property: `None` when absent, an error when present but empty
    /// (the schemas' names are non-empty), else its trimmed text.
    fn optional(&self, element: &Element, name: &str) -> Result<Option<Located<String>>, FomError> {
        let (text, location) = if let Some(child) = element.child(name) {
            (child.trimmed_text(), self.loc(child))
        } else if let Some(text) = element.attribute(name) {
            (text.trim(), self.loc(element))
        } else {
            return Ok(None);
        };
        if text.is_empty() {
            return Err(self.error(location, FomErrorKind::empty(name, &element.name)));
        }
        Ok(Some(Located {
            value: text.to_owned(),
            location,
        }))
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
        // The 1516-2000 DTD fixes this attribute on the root; 1516-2010 has none.
        if root.attribute("DTDversion").is_some() {
            return Err(self.error(
                self.loc(root),
                FomErrorKind::UnsupportedFormat {
                    format: "IEEE 1516-2000 OMT (DTDversion 1516.2)".into(),
                    hint: "convert it to the IEEE 1516-2010 OMT format (an OMT editor such as \
                           Pitch Visual OMT or the MAK FOM Editor can), then load it again"
                        .into(),
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

        let mut update_rates = Vec::new();
        if let Some(table) = root.child("updateRates") {
            let mut seen = HashMap::new();
            for element in table.children_named("updateRate") {
                let rate = self.update_rate(element)?;
                self.check_unique(&mut seen, "update rate", &rate.name, rate.location)?;
                update_rates.push(rate);
            }
        }
        let switches = match root.child("switches") {
            Some(table) => self.switches(table)?,
            None => Vec::new(),
        };

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
            update_rates,
            switches,
        })
    }

    fn update_rate(&self, element: &Element) -> Result<ModuleUpdateRate, FomError> {
        let name = self.required(element, "name")?.text.to_owned();
        let rate = self.required(element, "rate")?;
        let rate_hz = rate
            .text
            .parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && *r >= 0.0)
            .ok_or_else(|| {
                self.error(
                    rate.location,
                    FomErrorKind::invalid(
                        "rate",
                        rate.text,
                        "a non-negative number of updates per second",
                    ),
                )
            })?;
        Ok(ModuleUpdateRate {
            name,
            location: self.loc(element),
            rate_hz,
        })
    }

    /// `<switches>`: each child is one switch, set by `isEnabled="true|false"`
    /// (`automaticResignAction` by `resignAction="..."`).
    fn switches(&self, table: &Element) -> Result<Vec<ModuleSwitch>, FomError> {
        const RESIGN_ACTIONS: [&str; 6] = [
            "UnconditionallyDivestAttributes",
            "DeleteObjects",
            "CancelPendingOwnershipAcquisitions",
            "DeleteObjectsThenDivest",
            "CancelThenDeleteThenDivest",
            "NoAction",
        ];
        let mut switches = Vec::new();
        let mut seen = HashMap::new();
        for element in &table.children {
            let location = self.loc(element);
            let value = if element.name == "automaticResignAction" {
                let action = element.attribute("resignAction").map(str::trim);
                match action {
                    Some(a) if RESIGN_ACTIONS.contains(&a) => a.to_owned(),
                    Some(a) => {
                        return Err(self.error(
                            location,
                            FomErrorKind::invalid(
                                "automaticResignAction",
                                a,
                                &format!("one of {}", RESIGN_ACTIONS.join(", ")),
                            ),
                        ))
                    }
                    None => {
                        return Err(self.error(
                            location,
                            FomErrorKind::missing("resignAction", "automaticResignAction"),
                        ))
                    }
                }
            } else {
                match element.attribute("isEnabled").map(str::trim) {
                    Some("true") => "true".to_owned(),
                    Some("false") => "false".to_owned(),
                    Some(other) => {
                        return Err(self.error(
                            location,
                            FomErrorKind::invalid(
                                &element.name,
                                other,
                                "isEnabled=\"true\" or \"false\"",
                            ),
                        ))
                    }
                    None => {
                        return Err(
                            self.error(location, FomErrorKind::missing("isEnabled", &element.name))
                        )
                    }
                }
            };
            self.check_unique(&mut seen, "switch", &element.name, location)?;
            switches.push(ModuleSwitch {
                name: element.name.clone(),
                location,
                value,
            });
        }
        Ok(switches)
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

    /// The single root class of a class table, which must carry the standard root
    /// name; any other class at the top level is outside the tree.
    fn class_root<T>(
        &self,
        table: &Element,
        tag: &str,
        root_name: &str,
        read: impl Fn(&Element) -> Result<(T, SourceLocation), FomError>,
    ) -> Result<Option<T>, FomError> {
        let mut root = None;
        for class in table.children_named(tag) {
            let name = self.required(class, "name")?;
            if name.text != root_name || root.is_some() {
                let kind = if name.text == root_name {
                    FomErrorKind::DuplicateName {
                        what: tag.into(),
                        name: root_name.into(),
                        first: self.at(self.loc(root.expect("checked above"))),
                    }
                } else {
                    FomErrorKind::OutsideRoot {
                        tag: tag.into(),
                        name: name.text.into(),
                        root: root_name.into(),
                    }
                };
                return Err(self.error(name.location, kind));
            }
            root = Some(class);
        }
        match root {
            Some(class) => read(class).map(|(class, _)| Some(class)),
            None => Ok(None),
        }
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
            data_type: self.optional(element, "dataType")?,
            transportation: self.optional(element, "transportation")?,
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
                data_type: self.optional(p, "dataType")?,
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
            transportation: self.optional(element, "transportation")?,
            order: self.order(element)?,
            dimensions: self.dimension_list(element),
            parameters,
            subclasses,
        };
        Ok((class, location))
    }

    fn order(&self, element: &Element) -> Result<Option<Located<OrderType>>, FomError> {
        let Some(field) = self.optional(element, "order")? else {
            return Ok(None);
        };
        let value = match field.value.as_str() {
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
        let data_type = self.optional(element, "dataType")?.map(|t| t.value);
        // The 1516-2010 schemas make the bound optional; without one the RTI
        // chooses it (as the standard does for the MIM's HLAfederate).
        let upper_bound = match self.optional(element, "upperBound")? {
            Some(f) => Some(f.value.parse::<u64>().map_err(|_| {
                self.error(
                    f.location,
                    FomErrorKind::invalid("upperBound", &f.value, "a non-negative integer"),
                )
            })?),
            None => None,
        };
        let normalization = self.optional(element, "normalization")?.map(|t| t.value);
        let default_range = match self.optional(element, "value")? {
            Some(f) => Some(parse_default_range(&f.value, upper_bound).ok_or_else(|| {
                self.error(
                    f.location,
                    FomErrorKind::invalid(
                        "value",
                        &f.value,
                        "Excluded, a range [lower..upper) or one value [v), within the upper bound",
                    ),
                )
            })?),
            None => None,
        };
        Ok(ModuleDimension {
            name,
            location: self.loc(element),
            data_type,
            upper_bound,
            normalization,
            default_range,
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
}

/// A dimension's `<value>`: `Excluded`, `[lower..upper)` or `[v)` (one normalized
/// value, the range `[v, v + 1)`), with `lower <= upper <= upper_bound` when the
/// module gives an upper bound. Spaces around the numbers are allowed.
fn parse_default_range(text: &str, upper_bound: Option<u64>) -> Option<DefaultRange> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("Excluded") {
        return Some(DefaultRange::Excluded);
    }
    let inner = text.strip_prefix('[')?.strip_suffix(')')?;
    let (lower, upper) = match inner.split_once("..") {
        Some((l, u)) => (l.trim().parse::<u64>().ok()?, u.trim().parse::<u64>().ok()?),
        None => {
            let v = inner.trim().parse::<u64>().ok()?;
            (v, v.checked_add(1)?)
        }
    };
    if lower > upper || upper_bound.is_some_and(|b| upper > b) {
        return None;
    }
    Some(DefaultRange::Range { lower, upper })
}

//! Reading one IEEE 1516-2010 OMT XML module into a [`FomModule`]: the class trees,
//! dimensions, transportation, update rate and switches tables and data types it
//! declares, each with its position in the file.
//!
//! A module on its own is not a FOM: it may extend classes and use data types that
//! other modules declare. So this step checks only what one file can show (well
//! formed XML, required elements present and not empty, values from the allowed
//! sets, no duplicate siblings); references across modules are checked by
//! [`crate::Fom::merge`].
//!
//! What is required follows the 1516.2-2010 schemas: a module states
//! `xsi:schemaLocation` for the DIF schema, which makes everything but names
//! optional for classes, attributes, parameters and dimensions. So `<dataType>`
//! may be left out of an attribute, parameter or dimension (the data type is then
//! unknown), `<transportation>` and `<order>` of an attribute (reliable and
//! receive order are used) or of an interaction class (its parent's are used),
//! and `<upperBound>` of a dimension (the RTI chooses it). Data types follow the
//! OMT schema, which requires their definitions to be complete except for a
//! variant alternative's `<name>` and `<dataType>`. An element that is present
//! must not be empty. Values are checked against the schemas' patterns: sizes,
//! cardinalities (`Dynamic`, `N`, `[L..U]`, comma-separated per dimension),
//! integer enumerator values, `Receive`/`TimeStamp`, `Big`/`Little`, `Yes`/`No`,
//! switch settings and rates.
//!
//! Two layouts are read for every property: the 1516-2010 one, where it is a
//! child element (`<name>Aircraft</name>`, which may carry `notes="..."`), and
//! the attribute one (`<objectClass name="Aircraft">`) some tools write. A
//! module in the older IEEE 1516-2000 format (its root carries `DTDversion`) is
//! refused as such. Tables the RTI does not use (model identification, notes,
//! semantics, tags, synchronizations, ...) are skipped.
//!
//! Here: what a module holds (the `Module*` types); `parse/reader.rs` is the parser
//! that reads the element tree into them.

mod reader;

use std::path::Path;

use crate::error::{FomError, FomErrorKind};
use crate::location::{LineIndex, SourceLocation};
use crate::model::{DataType, OrderType};
use crate::xml::parse_document;

use reader::ModuleReader;

/// A value read from a module together with where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located<T> {
    /// The value.
    pub value: T,
    /// Where it is in the module's file.
    pub location: SourceLocation,
}

/// One parsed FOM module, not yet merged with the MIM or other modules.
///
/// Modules are parsed independently (so they can be checked on their own and
/// reported on per file) and combined by [`crate::Fom::merge`].
#[derive(Clone, Debug, PartialEq)]
pub struct FomModule {
    /// A short designator: the file name for [`FomModule::load`], the label given to
    /// [`FomModule::parse_str`]. This is what [`crate::Fom::module_names`] lists.
    pub name: String,
    /// Where the module came from, used in error messages: the path as given to
    /// [`FomModule::load`], or the label given to [`FomModule::parse_str`].
    pub source: String,
    /// `<modelIdentification><name>`, when present.
    pub model_name: Option<String>,
    /// The object class tree, starting at `HLAobjectRoot`, if the module has one.
    pub object_root: Option<ModuleObjectClass>,
    /// The interaction class tree, starting at `HLAinteractionRoot`, if any.
    pub interaction_root: Option<ModuleInteractionClass>,
    /// The dimensions table.
    pub dimensions: Vec<ModuleDimension>,
    /// The transportation table (names other than `HLAreliable`/`HLAbestEffort`
    /// that attributes and interactions may use).
    pub transportations: Vec<ModuleTransportation>,
    /// All data types, in document order within each table.
    pub data_types: Vec<ModuleDataType>,
    /// The `<time>` section's `<timeStamp>` and `<lookahead>` data types, when given.
    pub time: ModuleTime,
    /// The update rate table.
    pub update_rates: Vec<ModuleUpdateRate>,
    /// The switches table's settings, in document order.
    pub switches: Vec<ModuleSwitch>,
}

/// A row of the update rate table.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleUpdateRate {
    /// The rate's name.
    pub name: String,
    /// Where the `<updateRate>` element starts.
    pub location: SourceLocation,
    /// `<rate>`, in updates per second.
    pub rate_hz: f64,
}

/// One setting of the switches table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleSwitch {
    /// The switch's element name, e.g. `autoProvide`.
    pub name: String,
    /// Where the switch's element is.
    pub location: SourceLocation,
    /// `true`/`false` from `isEnabled`, or the `resignAction` of `automaticResignAction`.
    pub value: String,
}

/// A module's `<time>` section: the data type names of the time stamp and of
/// lookahead, where the module gives them.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ModuleTime {
    /// `<timeStamp><dataType>` and where it is.
    pub time_stamp: Option<(String, SourceLocation)>,
    /// `<lookahead><dataType>` and where it is.
    pub lookahead: Option<(String, SourceLocation)>,
}

/// An object class as one module declares it: possibly only scaffolding (a name
/// that places subclasses in the tree), possibly with attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleObjectClass {
    /// The simple name.
    pub name: String,
    /// Where the `<objectClass>` element starts.
    pub location: SourceLocation,
    /// Attributes declared here, in document order.
    pub attributes: Vec<ModuleAttribute>,
    /// Direct subclasses, in document order.
    pub subclasses: Vec<ModuleObjectClass>,
}

/// An attribute as one module declares it.
///
/// Properties are optional because a module may restate an attribute that another
/// module defines with its name only; the merge step requires them on the first
/// declaration and checks that later ones agree.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleAttribute {
    /// The attribute name.
    pub name: String,
    /// Where the `<attribute>` element starts.
    pub location: SourceLocation,
    /// `<dataType>`.
    pub data_type: Option<Located<String>>,
    /// `<transportation>`, as written (resolved against transportation tables at merge).
    pub transportation: Option<Located<String>>,
    /// `<order>`.
    pub order: Option<Located<OrderType>>,
    /// `<dimensions>`: `None` when absent, an empty list for `<dimensions/>` or `NA`.
    pub dimensions: Option<Vec<Located<String>>>,
}

/// An interaction class as one module declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleInteractionClass {
    /// The simple name.
    pub name: String,
    /// Where the `<interactionClass>` element starts.
    pub location: SourceLocation,
    /// `<transportation>`, as written; scaffolding declarations often omit it.
    pub transportation: Option<Located<String>>,
    /// `<order>`; scaffolding declarations often omit it.
    pub order: Option<Located<OrderType>>,
    /// `<dimensions>`: `None` when absent.
    pub dimensions: Option<Vec<Located<String>>>,
    /// Parameters declared here, in document order.
    pub parameters: Vec<ModuleParameter>,
    /// Direct subclasses, in document order.
    pub subclasses: Vec<ModuleInteractionClass>,
}

/// A parameter as one module declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleParameter {
    /// The parameter name.
    pub name: String,
    /// Where the `<parameter>` element starts.
    pub location: SourceLocation,
    /// `<dataType>`; optional for the same reason as [`ModuleAttribute::data_type`].
    pub data_type: Option<Located<String>>,
}

/// A row of the dimensions table.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleDimension {
    /// The dimension name.
    pub name: String,
    /// Where the `<dimension>` element starts.
    pub location: SourceLocation,
    /// `<dataType>`, optional in the 1516-2010 schemas. Not checked against the
    /// data type tables: modules commonly name a dimension type from a module the
    /// federation does not load (the standard's own restaurant example does), and
    /// the RTI never encodes it.
    pub data_type: Option<String>,
    /// `<upperBound>`; `None` when the module gives none (the MIM's
    /// `HLAfederate`, for one), which leaves the bound to the RTI.
    pub upper_bound: Option<u64>,
    /// `<normalization>` as written; informative only.
    pub normalization: Option<String>,
    /// `<value>`: `Excluded`, a range `[lower..upper)`, or one value `[v)` (the range
    /// `[v, v + 1)`); `None` when absent (then `Excluded`).
    pub default_range: Option<crate::model::DefaultRange>,
}

/// A row of the transportation table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleTransportation {
    /// The transportation name.
    pub name: String,
    /// Where the `<transportation>` element starts.
    pub location: SourceLocation,
    /// `<reliable>Yes|No</reliable>`; `None` when the table does not say, in which
    /// case the name cannot be mapped to a delivery guarantee and using it is an error.
    pub reliable: Option<bool>,
}

/// A data type as one module declares it.
#[derive(Clone, Debug, PartialEq)]
pub struct ModuleDataType {
    /// The definition, as stored in the merged FOM.
    pub definition: DataType,
    /// Where its element (`<basicData>`, `<arrayData>`, ...) starts.
    pub location: SourceLocation,
    /// The data types this definition names, with where each is named.
    pub(crate) references: Vec<TypeReference>,
    /// A variant record's alternatives' `<enumerator>` texts and where each is,
    /// checked against the discriminant's enumeration once every type is known.
    pub(crate) alternative_enumerators: Vec<Located<String>>,
}

/// What a data type reference must resolve to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ReferenceKind {
    /// Any data type (an attribute's, a field's, an array element's).
    Any,
    /// A basic data representation (a simple or enumerated type's representation).
    BasicRepresentation,
    /// An enumerated data type (a variant record's discriminant).
    Enumeration,
}

/// One use of a data type name inside a data type definition.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct TypeReference {
    /// The data type named.
    pub(crate) name: String,
    /// What names it, for messages: `element type of array X`, `field f of record R`.
    pub(crate) referenced_by: String,
    pub(crate) location: SourceLocation,
    /// What the name must resolve to.
    pub(crate) kind: ReferenceKind,
}

impl FomModule {
    /// Parses a module from text. `source_name` labels it in errors and in
    /// [`crate::Fom::module_names`] (use the file name when there is one).
    pub fn parse_str(source_name: &str, xml: &str) -> Result<FomModule, FomError> {
        Self::parse_with_name(source_name, source_name, xml)
    }

    /// Reads and parses a module file. Errors name the path as given.
    pub fn load(path: &Path) -> Result<FomModule, FomError> {
        let source = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| {
            FomError::new(
                &source,
                SourceLocation::NONE,
                FomErrorKind::Io {
                    kind: e.kind(),
                    message: e.to_string(),
                },
            )
        })?;
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| source.clone());
        Self::parse_with_name(&name, &source, &text)
    }

    fn parse_with_name(name: &str, source: &str, xml: &str) -> Result<FomModule, FomError> {
        let lines = LineIndex::new(xml);
        let reader = ModuleReader {
            source,
            lines: &lines,
        };
        let root = parse_document(xml)
            .map_err(|(offset, kind)| FomError::new(source, lines.locate(offset), kind))?;
        reader.module(name, &root)
    }
}

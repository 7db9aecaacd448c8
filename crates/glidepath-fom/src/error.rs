//! The one error type of FOM loading: what is wrong, in which file, and where.
//!
//! A FOM is written by hand or by an OMT tool and read by people who must fix it,
//! so every error carries the file and the `line:column` of the offending element
//! (for merge errors, the element in the later module, which is the one that
//! disagrees with what came before).

use crate::location::SourceLocation;

/// A FOM module could not be read, parsed, merged or validated.
///
/// `Display` prints `file:line:column: message` (or `file: message` when there is
/// no position, as for a file that cannot be opened), the form compilers use and
/// editors turn into links.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}{kind}", position_prefix(.file, *.line, *.column))]
pub struct FomError {
    /// The module's source: the path as given to [`crate::FomModule::load`], or the
    /// label given to [`crate::FomModule::parse_str`].
    pub file: String,
    /// 1-based line; 0 when the error has no position.
    pub line: u32,
    /// 1-based column in characters; 0 when the error has no position.
    pub column: u32,
    /// What is wrong.
    pub kind: FomErrorKind,
}

impl FomError {
    /// An error at `location` in `file`.
    pub fn new(file: impl Into<String>, location: SourceLocation, kind: FomErrorKind) -> Self {
        FomError {
            file: file.into(),
            line: location.line,
            column: location.column,
            kind,
        }
    }

    /// The position as a [`SourceLocation`].
    pub fn location(&self) -> SourceLocation {
        SourceLocation {
            line: self.line,
            column: self.column,
        }
    }
}

/// `file:line:column: `, or `file: ` when there is no position.
fn position_prefix(file: &str, line: u32, column: u32) -> String {
    if line == 0 {
        format!("{file}: ")
    } else {
        format!("{file}:{line}:{column}: ")
    }
}

/// What is wrong with a FOM module or with a set of modules merged together.
///
/// Variants are named for the fault, so that a caller (the CLI's `fom check`, a
/// test) can match on them; each carries the names needed for a useful message.
/// Places that an error refers back to (where something was first declared) are
/// given as `file:line:column` text.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FomErrorKind {
    /// The file could not be read.
    #[error("cannot read FOM module: {message}")]
    Io {
        /// The operating system's error class.
        kind: std::io::ErrorKind,
        /// The operating system's message.
        message: String,
    },
    /// The text is not well-formed XML (including a file cut short).
    #[error("malformed XML: {message}")]
    Xml {
        /// The XML reader's description.
        message: String,
    },
    /// The document is XML but not an OMT object model (wrong root element, or a
    /// class tree that does not start at `HLAobjectRoot` / `HLAinteractionRoot`).
    #[error("expected <{expected}>, found <{found}>")]
    UnexpectedElement {
        /// What the OMT requires here.
        expected: String,
        /// What the file has.
        found: String,
    },
    /// A required child element (or, in the older layout, XML attribute) is absent.
    #[error("<{parent}> has no <{element}>")]
    MissingElement {
        /// The element that is missing, e.g. `name` or `dataType`.
        element: String,
        /// The element that should contain it, e.g. `attribute`.
        parent: String,
    },
    /// An element is present but empty, where the schema requires a value (every
    /// name and reference in the OMT is a non-empty identifier).
    #[error("<{parent}> has an empty <{element}>")]
    EmptyElement {
        /// The empty element, e.g. `dataType`.
        element: String,
        /// The element that contains it, e.g. `attribute`.
        parent: String,
    },
    /// A class of a module's class table is not nested inside the table's root class.
    #[error("<{tag}> `{name}` is outside {root}: every {tag} of a module must be nested inside the one {root} class")]
    OutsideRoot {
        /// `objectClass` or `interactionClass`.
        tag: String,
        /// The class found at the top level.
        name: String,
        /// `HLAobjectRoot` or `HLAinteractionRoot`.
        root: String,
    },
    /// The document is an object model in a format other than IEEE 1516-2010.
    #[error("this module is in the {format} format, which glidepath does not read: {hint}")]
    UnsupportedFormat {
        /// The format recognised, e.g. `IEEE 1516-2000 OMT`.
        format: String,
        /// What the user can do about it.
        hint: String,
    },
    /// An element holds a value outside the set the OMT allows.
    #[error("invalid <{element}> value `{value}`: expected {expected}")]
    InvalidValue {
        /// The element, e.g. `order`.
        element: String,
        /// The text found.
        value: String,
        /// A description of the allowed values.
        expected: String,
    },
    /// An attribute, parameter, array, record or variant names a data type that no
    /// loaded module (nor the MIM) declares.
    #[error("unknown data type `{name}` referenced by {referenced_by}")]
    UnknownDataType {
        /// The data type name.
        name: String,
        /// What refers to it, e.g. `attribute HLAobjectRoot.Aircraft.altitude`.
        referenced_by: String,
    },
    /// A data type is named where a data type of another kind is required (a simple
    /// or enumerated type's representation must be a basic data representation; a
    /// variant record's discriminant must be an enumeration).
    #[error("data type `{name}` referenced by {referenced_by} is {found}, but {expected} is required there")]
    WrongDataTypeKind {
        /// The data type named.
        name: String,
        /// What names it.
        referenced_by: String,
        /// What kind of data type it is, e.g. `a simple data type`.
        found: String,
        /// What kind is required, e.g. `a basic data representation`.
        expected: String,
    },
    /// A variant record alternative names an enumerator that the discriminant's
    /// enumeration does not have.
    #[error(
        "enumerator `{enumerator}` of {referenced_by} is not an enumerator of `{enumeration}`"
    )]
    UnknownEnumerator {
        /// The enumerator named.
        enumerator: String,
        /// The discriminant's enumerated data type.
        enumeration: String,
        /// What names it, e.g. `alternative 2 of variant record R`.
        referenced_by: String,
    },
    /// An attribute or interaction class names a dimension no loaded module declares.
    #[error("unknown dimension `{name}` referenced by {referenced_by}")]
    UnknownDimension {
        /// The dimension name.
        name: String,
        /// What refers to it.
        referenced_by: String,
    },
    /// A transportation type that is neither `HLAreliable`, `HLAbestEffort` nor
    /// declared in any module's `<transportations>` table.
    #[error("unknown transportation `{name}` (not HLAreliable, HLAbestEffort, nor declared in a <transportations> table)")]
    UnknownTransportation {
        /// The transportation name.
        name: String,
    },
    /// The same name is declared twice where it must be unique: sibling classes in
    /// one module, an attribute or parameter within one class hierarchy, a data type
    /// or dimension within one module.
    #[error("duplicate {what} `{name}` (first declared at {first})")]
    DuplicateName {
        /// What kind of thing, e.g. `attribute`.
        what: String,
        /// The duplicated name (qualified where that helps).
        name: String,
        /// Where the first declaration is, as `file:line:column`.
        first: String,
    },
    /// An attribute is declared by two modules with different definitions.
    #[error(
        "attribute `{attribute}` of `{class}` differs from its declaration at {first}: {detail}"
    )]
    InconsistentAttribute {
        /// The class's qualified name.
        class: String,
        /// The attribute name.
        attribute: String,
        /// Which property differs and how.
        detail: String,
        /// Where the earlier declaration is, as `file:line:column`.
        first: String,
    },
    /// A parameter is declared by two modules with different definitions.
    #[error(
        "parameter `{parameter}` of `{class}` differs from its declaration at {first}: {detail}"
    )]
    InconsistentParameter {
        /// The interaction class's qualified name.
        class: String,
        /// The parameter name.
        parameter: String,
        /// Which property differs and how.
        detail: String,
        /// Where the earlier declaration is, as `file:line:column`.
        first: String,
    },
    /// A class, data type, dimension, transportation, update rate, switch or time
    /// representation is declared by two modules with different definitions.
    #[error("{what} `{name}` differs from its declaration at {first}: {detail}")]
    InconsistentDefinition {
        /// What kind of thing, e.g. `data type`.
        what: String,
        /// Its name.
        name: String,
        /// Which property differs and how.
        detail: String,
        /// Where the earlier declaration is, as `file:line:column`.
        first: String,
    },
}

impl FomErrorKind {
    /// A [`FomErrorKind::MissingElement`].
    pub(crate) fn missing(element: &str, parent: &str) -> Self {
        FomErrorKind::MissingElement {
            element: element.to_owned(),
            parent: parent.to_owned(),
        }
    }

    /// A [`FomErrorKind::EmptyElement`].
    pub(crate) fn empty(element: &str, parent: &str) -> Self {
        FomErrorKind::EmptyElement {
            element: element.to_owned(),
            parent: parent.to_owned(),
        }
    }

    /// A [`FomErrorKind::InvalidValue`].
    pub(crate) fn invalid(element: &str, value: &str, expected: &str) -> Self {
        FomErrorKind::InvalidValue {
            element: element.to_owned(),
            value: value.to_owned(),
            expected: expected.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_file_line_column_message() {
        let e = FomError::new(
            "a.xml",
            SourceLocation {
                line: 12,
                column: 5,
            },
            FomErrorKind::missing("name", "objectClass"),
        );
        assert_eq!(e.to_string(), "a.xml:12:5: <objectClass> has no <name>");
    }

    #[test]
    fn display_without_position_omits_it() {
        let e = FomError::new(
            "missing.xml",
            SourceLocation::NONE,
            FomErrorKind::Io {
                kind: std::io::ErrorKind::NotFound,
                message: "No such file".into(),
            },
        );
        assert_eq!(
            e.to_string(),
            "missing.xml: cannot read FOM module: No such file"
        );
    }
}

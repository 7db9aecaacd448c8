//! Errors of the support services (name and handle lookups) that the core's error
//! enums do not cover.

use std::fmt;

use glidepath_core::{
    AttributeHandle, DimensionHandle, InteractionClassHandle, ObjectClassHandle, ParameterHandle,
};

/// What kind of FOM name a lookup was for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameKind {
    /// An object class name.
    ObjectClass,
    /// An attribute name of the given object class.
    Attribute(ObjectClassHandle),
    /// An interaction class name.
    InteractionClass,
    /// A parameter name of the given interaction class.
    Parameter(InteractionClassHandle),
    /// A dimension name.
    Dimension,
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameKind::ObjectClass => write!(f, "object class"),
            NameKind::Attribute(c) => write!(f, "attribute of {c}"),
            NameKind::InteractionClass => write!(f, "interaction class"),
            NameKind::Parameter(c) => write!(f, "parameter of {c}"),
            NameKind::Dimension => write!(f, "dimension"),
        }
    }
}

/// A name or handle lookup failed (the standard's `NameNotFound` and `Invalid*Handle`).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum NameError {
    /// No such name in the federation's FOM.
    #[error("no {kind} named `{name}` in the FOM")]
    NameNotFound {
        /// What was looked up.
        kind: NameKind,
        /// The name as given.
        name: String,
    },
    /// The object class handle is not in the FOM.
    #[error("{0} is not an object class of the FOM")]
    InvalidObjectClassHandle(ObjectClassHandle),
    /// The attribute handle is not in the FOM.
    #[error("{0} is not an attribute of the FOM")]
    InvalidAttributeHandle(AttributeHandle),
    /// The interaction class handle is not in the FOM.
    #[error("{0} is not an interaction class of the FOM")]
    InvalidInteractionClassHandle(InteractionClassHandle),
    /// The parameter handle is not in the FOM.
    #[error("{0} is not a parameter of the FOM")]
    InvalidParameterHandle(ParameterHandle),
    /// The dimension handle is not in the FOM.
    #[error("{0} is not a dimension of the FOM")]
    InvalidDimensionHandle(DimensionHandle),
    /// The attribute exists, but not in the object class (nor inherited by it).
    #[error("{attribute} is not an attribute of {class}")]
    AttributeNotDefined {
        /// The object class.
        class: ObjectClassHandle,
        /// The attribute.
        attribute: AttributeHandle,
    },
}

impl NameError {
    pub(crate) fn not_found(kind: NameKind, name: &str) -> Self {
        NameError::NameNotFound {
            kind,
            name: name.to_string(),
        }
    }
}

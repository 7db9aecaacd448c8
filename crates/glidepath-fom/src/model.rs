//! The merged, validated object model and its handle types.

use std::collections::HashMap;
use std::fmt;

macro_rules! handle {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(pub u32);
        impl $name {
            /// The handle as an index into the FOM's tables.
            pub fn index(self) -> usize { self.0 as usize }
        }
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }
    };
}

handle!(
    /// An object class (`HLAobjectRoot` is always handle 0).
    ObjectClassHandle
);
handle!(
    /// An attribute, unique across the whole FOM; subclasses inherit their parents' handles.
    AttributeHandle
);
handle!(
    /// An interaction class (`HLAinteractionRoot` is always handle 0).
    InteractionClassHandle
);
handle!(
    /// A parameter, unique across the whole FOM; subclasses inherit their parents' handles.
    ParameterHandle
);
handle!(
    /// A DDM dimension.
    DimensionHandle
);

/// How a class's data travels: `HLAreliable` or `HLAbestEffort` (the FOM's transportation type).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TransportationType {
    /// Delivered exactly once, in order per sender.
    Reliable,
    /// May be dropped under pressure; drops are counted.
    BestEffort,
}

/// The delivery order the FOM asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OrderType {
    /// Delivered as soon as it arrives.
    Receive,
    /// Delivered in time-stamp order to time-constrained federates.
    TimeStamp,
}

/// An object class.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectClass {
    pub handle: ObjectClassHandle,
    /// The simple name, e.g. `Aircraft`.
    pub name: String,
    /// The dotted name from the root, e.g. `HLAobjectRoot.Aircraft`.
    pub qualified_name: String,
    pub parent: Option<ObjectClassHandle>,
    /// Attributes declared by this class itself (not inherited).
    pub own_attributes: Vec<AttributeHandle>,
    /// Own plus inherited attributes, root first.
    pub all_attributes: Vec<AttributeHandle>,
}

/// An attribute of an object class.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribute {
    pub handle: AttributeHandle,
    pub name: String,
    /// The class that declares it.
    pub class: ObjectClassHandle,
    /// The name of its data type (resolved in [`Fom::data_types`]).
    pub data_type: String,
    pub transportation: TransportationType,
    pub order: OrderType,
    pub dimensions: Vec<DimensionHandle>,
}

/// An interaction class.
#[derive(Clone, Debug, PartialEq)]
pub struct InteractionClass {
    pub handle: InteractionClassHandle,
    pub name: String,
    pub qualified_name: String,
    pub parent: Option<InteractionClassHandle>,
    pub own_parameters: Vec<ParameterHandle>,
    pub all_parameters: Vec<ParameterHandle>,
    pub transportation: TransportationType,
    pub order: OrderType,
    pub dimensions: Vec<DimensionHandle>,
}

/// A parameter of an interaction class.
#[derive(Clone, Debug, PartialEq)]
pub struct Parameter {
    pub handle: ParameterHandle,
    pub name: String,
    pub class: InteractionClassHandle,
    pub data_type: String,
}

/// A DDM dimension.
#[derive(Clone, Debug, PartialEq)]
pub struct Dimension {
    pub handle: DimensionHandle,
    pub name: String,
    pub data_type: String,
    pub upper_bound: u64,
}

/// Endianness of a basic data representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Endian {
    Big,
    Little,
}

/// One data type of the OMT's data type tables.
#[derive(Clone, Debug, PartialEq)]
pub enum DataType {
    /// `basicData`: size in bits and endianness.
    Basic { name: String, size_bits: u32, endian: Endian },
    /// `simpleData`: a named alias of a basic representation.
    Simple { name: String, representation: String },
    /// `enumeratedData`: named enumerators over a representation.
    Enumerated { name: String, representation: String, enumerators: Vec<(String, Vec<String>)> },
    /// `arrayData`: an element type and a cardinality (`Dynamic` or a number / range text).
    Array { name: String, element: String, cardinality: String, encoding: String },
    /// `fixedRecordData`: named fields in order.
    FixedRecord { name: String, fields: Vec<(String, String)>, encoding: String },
    /// `variantRecordData`: a discriminant and alternatives.
    VariantRecord { name: String, discriminant: String, data_type: String, alternatives: Vec<(String, String, String)>, encoding: String },
}

impl DataType {
    /// The type's name.
    pub fn name(&self) -> &str {
        match self {
            DataType::Basic { name, .. }
            | DataType::Simple { name, .. }
            | DataType::Enumerated { name, .. }
            | DataType::Array { name, .. }
            | DataType::FixedRecord { name, .. }
            | DataType::VariantRecord { name, .. } => name,
        }
    }
}

/// Counts printed by `glidepath fom check`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FomSummary {
    pub modules: usize,
    pub object_classes: usize,
    pub attributes: usize,
    pub interaction_classes: usize,
    pub parameters: usize,
    pub dimensions: usize,
    pub data_types: usize,
}

/// The merged Federation Object Model.
///
/// Index tables are dense: `object_classes[h.index()]` is the class of handle `h`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fom {
    pub module_names: Vec<String>,
    pub object_classes: Vec<ObjectClass>,
    pub attributes: Vec<Attribute>,
    pub interaction_classes: Vec<InteractionClass>,
    pub parameters: Vec<Parameter>,
    pub dimensions: Vec<Dimension>,
    pub data_types: Vec<DataType>,
    pub object_class_by_qname: HashMap<String, ObjectClassHandle>,
    pub interaction_class_by_qname: HashMap<String, InteractionClassHandle>,
}

impl Fom {
    /// The root object class, `HLAobjectRoot`.
    pub const OBJECT_ROOT: ObjectClassHandle = ObjectClassHandle(0);
    /// The root interaction class, `HLAinteractionRoot`.
    pub const INTERACTION_ROOT: InteractionClassHandle = InteractionClassHandle(0);

    /// The object class of a handle, if it exists.
    pub fn object_class(&self, h: ObjectClassHandle) -> Option<&ObjectClass> {
        self.object_classes.get(h.index())
    }
    /// The attribute of a handle, if it exists.
    pub fn attribute(&self, h: AttributeHandle) -> Option<&Attribute> {
        self.attributes.get(h.index())
    }
    /// The interaction class of a handle, if it exists.
    pub fn interaction_class(&self, h: InteractionClassHandle) -> Option<&InteractionClass> {
        self.interaction_classes.get(h.index())
    }
    /// The parameter of a handle, if it exists.
    pub fn parameter(&self, h: ParameterHandle) -> Option<&Parameter> {
        self.parameters.get(h.index())
    }

    /// Looks a class up by its dotted name, with or without the `HLAobjectRoot.` prefix.
    pub fn object_class_by_name(&self, name: &str) -> Option<ObjectClassHandle> {
        if let Some(h) = self.object_class_by_qname.get(name) {
            return Some(*h);
        }
        self.object_class_by_qname.get(&format!("HLAobjectRoot.{name}")).copied()
    }
    /// Looks an interaction class up by its dotted name, with or without the `HLAinteractionRoot.` prefix.
    pub fn interaction_class_by_name(&self, name: &str) -> Option<InteractionClassHandle> {
        if let Some(h) = self.interaction_class_by_qname.get(name) {
            return Some(*h);
        }
        self.interaction_class_by_qname.get(&format!("HLAinteractionRoot.{name}")).copied()
    }
    /// An attribute of `class` (own or inherited) by name.
    pub fn attribute_by_name(&self, class: ObjectClassHandle, name: &str) -> Option<AttributeHandle> {
        let c = self.object_class(class)?;
        c.all_attributes.iter().copied().find(|a| self.attributes[a.index()].name == name)
    }
    /// A parameter of `class` (own or inherited) by name.
    pub fn parameter_by_name(&self, class: InteractionClassHandle, name: &str) -> Option<ParameterHandle> {
        let c = self.interaction_class(class)?;
        c.all_parameters.iter().copied().find(|p| self.parameters[p.index()].name == name)
    }
    /// True when `class` is `ancestor` or descends from it.
    pub fn is_object_subclass_of(&self, class: ObjectClassHandle, ancestor: ObjectClassHandle) -> bool {
        let mut c = Some(class);
        while let Some(h) = c {
            if h == ancestor {
                return true;
            }
            c = self.object_classes.get(h.index()).and_then(|x| x.parent);
        }
        false
    }
    /// True when `class` is `ancestor` or descends from it.
    pub fn is_interaction_subclass_of(&self, class: InteractionClassHandle, ancestor: InteractionClassHandle) -> bool {
        let mut c = Some(class);
        while let Some(h) = c {
            if h == ancestor {
                return true;
            }
            c = self.interaction_classes.get(h.index()).and_then(|x| x.parent);
        }
        false
    }
    /// `class` and all its descendants.
    pub fn object_class_and_descendants(&self, class: ObjectClassHandle) -> Vec<ObjectClassHandle> {
        self.object_classes.iter().map(|c| c.handle).filter(|h| self.is_object_subclass_of(*h, class)).collect()
    }
    /// `class` and all its descendants.
    pub fn interaction_class_and_descendants(&self, class: InteractionClassHandle) -> Vec<InteractionClassHandle> {
        self.interaction_classes.iter().map(|c| c.handle).filter(|h| self.is_interaction_subclass_of(*h, class)).collect()
    }
    /// Counts for a summary.
    pub fn summary(&self) -> FomSummary {
        FomSummary {
            modules: self.module_names.len(),
            object_classes: self.object_classes.len(),
            attributes: self.attributes.len(),
            interaction_classes: self.interaction_classes.len(),
            parameters: self.parameters.len(),
            dimensions: self.dimensions.len(),
            data_types: self.data_types.len(),
        }
    }
}

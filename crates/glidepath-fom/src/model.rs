//! The merged, validated object model and its handle types.

use std::collections::HashMap;
use std::fmt;

macro_rules! handle {
    ($(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
        #[serde(transparent)]
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
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum TransportationType {
    /// Delivered exactly once, in order per sender.
    Reliable,
    /// May be dropped under pressure; drops are counted.
    BestEffort,
}

/// How the federation represents logical time: the FOM's `<time><timeStamp>` data
/// type (IEEE 1516.1-2010 section 12.4). A FOM that names none uses
/// `HLAfloat64Time`, the standard's usual choice.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum TimeRepresentation {
    /// `HLAfloat64Time` (with `HLAfloat64Interval` lookahead): seconds or any unit
    /// as an IEEE double. Sums are rounded as floats are.
    #[default]
    Float64,
    /// `HLAinteger64Time` (with `HLAinteger64Interval` lookahead): integer ticks;
    /// every sum is exact.
    Integer64,
}

impl TimeRepresentation {
    /// The standard's name of the time stamp data type.
    pub fn time_type_name(self) -> &'static str {
        match self {
            TimeRepresentation::Float64 => "HLAfloat64Time",
            TimeRepresentation::Integer64 => "HLAinteger64Time",
        }
    }

    /// The representation a `<timeStamp>` or `<lookahead>` data type name stands for.
    pub fn from_type_name(name: &str) -> Option<TimeRepresentation> {
        match name {
            "HLAfloat64Time" | "HLAfloat64Interval" => Some(TimeRepresentation::Float64),
            "HLAinteger64Time" | "HLAinteger64Interval" => Some(TimeRepresentation::Integer64),
            _ => None,
        }
    }
}

/// The delivery order the FOM asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum OrderType {
    /// Delivered as soon as it arrives.
    Receive,
    /// Delivered in time-stamp order to time-constrained federates.
    TimeStamp,
}

/// An object class.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ObjectClass {
    /// Its handle; `object_classes[handle.index()]` is this class.
    pub handle: ObjectClassHandle,
    /// The simple name, e.g. `Aircraft`.
    pub name: String,
    /// The dotted name from the root, e.g. `HLAobjectRoot.Aircraft`.
    pub qualified_name: String,
    /// The superclass; `None` only for `HLAobjectRoot`.
    pub parent: Option<ObjectClassHandle>,
    /// Attributes declared by this class itself (not inherited).
    pub own_attributes: Vec<AttributeHandle>,
    /// Own plus inherited attributes, root first.
    pub all_attributes: Vec<AttributeHandle>,
}

/// An attribute of an object class.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Attribute {
    /// Its handle, unique in the whole FOM.
    pub handle: AttributeHandle,
    /// The name, unique along its class hierarchy.
    pub name: String,
    /// The class that declares it.
    pub class: ObjectClassHandle,
    /// The name of its data type (resolved in [`Fom::data_types`]); `None` when no
    /// module gives one (the 1516-2010 schemas make it optional).
    pub data_type: Option<String>,
    /// The delivery guarantee, resolved from the FOM's transportation name.
    pub transportation: TransportationType,
    /// The delivery order the FOM asks for.
    pub order: OrderType,
    /// The DDM dimensions its values can be filtered on.
    pub dimensions: Vec<DimensionHandle>,
}

/// An interaction class.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct InteractionClass {
    /// Its handle; `interaction_classes[handle.index()]` is this class.
    pub handle: InteractionClassHandle,
    /// The simple name, e.g. `Track`.
    pub name: String,
    /// The dotted name from the root, e.g. `HLAinteractionRoot.Track`.
    pub qualified_name: String,
    /// The superclass; `None` only for `HLAinteractionRoot`.
    pub parent: Option<InteractionClassHandle>,
    /// Parameters declared by this class itself (not inherited).
    pub own_parameters: Vec<ParameterHandle>,
    /// Own plus inherited parameters, root first.
    pub all_parameters: Vec<ParameterHandle>,
    /// The delivery guarantee; a class whose modules never state one takes its parent's.
    pub transportation: TransportationType,
    /// The delivery order; a class whose modules never state one takes its parent's.
    pub order: OrderType,
    /// The DDM dimensions sent interactions can be filtered on.
    pub dimensions: Vec<DimensionHandle>,
}

/// A parameter of an interaction class.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Parameter {
    /// Its handle, unique in the whole FOM.
    pub handle: ParameterHandle,
    /// The name, unique along its class hierarchy.
    pub name: String,
    /// The class that declares it.
    pub class: InteractionClassHandle,
    /// The name of its data type (resolved in [`Fom::data_types`]); `None` when no
    /// module gives one (the 1516-2010 schemas make it optional).
    pub data_type: Option<String>,
}

/// A DDM dimension.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Dimension {
    /// Its handle; `dimensions[handle.index()]` is this dimension.
    pub handle: DimensionHandle,
    /// The name, e.g. `FlightLevel`.
    pub name: String,
    /// The data type named by the FOM (informative; the RTI works on normalised
    /// values); `None` when the module names none.
    pub data_type: Option<String>,
    /// Normalised region bounds on this dimension lie in `[0, upper_bound]`: a range
    /// is `[lower, upper)` with `lower <= upper <= upper_bound`.
    pub upper_bound: u64,
    /// The normalization function as the module writes it (`linear (altitudeFt / 100,
    /// 0, 1000)`). Informative: federates normalize their own values and the RTI works
    /// on normalized bounds only. `None` when the module gives none.
    #[serde(default)]
    pub normalization: Option<String>,
    /// The OMT's *value when unspecified*: the range a region takes on this dimension
    /// when it is used with an attribute or interaction class that has the dimension
    /// but the region does not ([`DefaultRange::Excluded`] when the module says
    /// `Excluded` or gives no value).
    #[serde(default)]
    pub default_range: DefaultRange,
}

/// A dimension's *value when unspecified* (IEEE 1516.2-2010, the dimension table).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DefaultRange {
    /// A region that does not specify the dimension is not compared on it: overlap
    /// is decided by the other dimensions.
    #[default]
    Excluded,
    /// A region that does not specify the dimension has this normalized range,
    /// `[lower, upper)`.
    Range {
        /// Inclusive lower bound.
        lower: u64,
        /// Exclusive upper bound.
        upper: u64,
    },
}

/// Endianness of a basic data representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Endian {
    /// Most significant byte first (network order, the HLA default).
    Big,
    /// Least significant byte first.
    Little,
}

/// One data type of the OMT's data type tables.
///
/// Names of other data types are kept as written; [`Fom::merge`] has checked that
/// each resolves in [`Fom::data_types`].
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum DataType {
    /// `basicData`: size in bits and endianness.
    Basic {
        /// The type's name.
        name: String,
        /// Size of one value in bits.
        size_bits: u32,
        /// Byte order of one value.
        endian: Endian,
    },
    /// `simpleData`: a named alias of a basic representation.
    Simple {
        /// The type's name.
        name: String,
        /// The basic data representation it aliases.
        representation: String,
    },
    /// `enumeratedData`: named enumerators over a representation.
    Enumerated {
        /// The type's name.
        name: String,
        /// The basic data representation the values are encoded with.
        representation: String,
        /// Each enumerator's name and its value(s), as written.
        enumerators: Vec<(String, Vec<String>)>,
    },
    /// `arrayData`: an element type and a cardinality (`Dynamic` or a number / range text).
    Array {
        /// The type's name.
        name: String,
        /// The element data type.
        element: String,
        /// `Dynamic`, a count, or a range, as written.
        cardinality: String,
        /// `HLAfixedArray`, `HLAvariableArray` or a FOM-specific encoding name.
        encoding: String,
    },
    /// `fixedRecordData`: named fields in order.
    FixedRecord {
        /// The type's name.
        name: String,
        /// Each field's name and data type, in encoding order.
        fields: Vec<(String, String)>,
        /// `HLAfixedRecord` or a FOM-specific encoding name.
        encoding: String,
    },
    /// `variantRecordData`: a discriminant and alternatives.
    VariantRecord {
        /// The type's name.
        name: String,
        /// The discriminant's name.
        discriminant: String,
        /// The discriminant's data type (an enumeration).
        data_type: String,
        /// The alternatives, in document order.
        alternatives: Vec<VariantAlternative>,
        /// `HLAvariantRecord` or a FOM-specific encoding name.
        encoding: String,
    },
}

/// One alternative of a variant record data type.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VariantAlternative {
    /// The discriminant values that select it, as written: enumerator names and
    /// ranges (`[Apprentice .. Senior], Master`), or `HLAother` for all others.
    pub enumerators: String,
    /// The field name; `None` when the module gives none (the schema allows it).
    pub name: Option<String>,
    /// The data type of the value it carries; `None` when it carries none (no
    /// `<dataType>`, or `NA`).
    pub data_type: Option<String>,
}

/// A row of the update rate table (`<updateRates>`): a named maximum rate.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct UpdateRate {
    /// The name attributes and subscriptions refer to.
    pub name: String,
    /// The rate in updates per second.
    pub rate_hz: f64,
}

/// One setting of the switches table (`<switches>`), as the modules give it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Switch {
    /// The switch's element name, e.g. `autoProvide` or `automaticResignAction`.
    pub name: String,
    /// `true` or `false` (`isEnabled`), or the resign action (`resignAction`).
    pub value: String,
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
///
/// `modules` counts the modules given to [`Fom::merge`], not the built-in MIM;
/// every other count covers the whole merged FOM, MIM included: the two root
/// classes and `HLAprivilegeToDeleteObject`, the MOM's classes, attributes,
/// parameters and two dimensions, and the MIM's
/// [`MIM_DATA_TYPE_COUNT`](crate::MIM_DATA_TYPE_COUNT) data types.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FomSummary {
    /// Modules merged, not counting the MIM.
    pub modules: usize,
    /// Object classes, `HLAobjectRoot` and the MOM's included.
    pub object_classes: usize,
    /// Attributes, `HLAprivilegeToDeleteObject` and the MOM's included.
    pub attributes: usize,
    /// Interaction classes, `HLAinteractionRoot` and the MOM's included.
    pub interaction_classes: usize,
    /// Parameters, the MOM's included.
    pub parameters: usize,
    /// Dimensions, the MIM's `HLAfederate` and `HLAserviceGroup` included.
    pub dimensions: usize,
    /// Data types, the MIM's included.
    pub data_types: usize,
}

/// The merged Federation Object Model.
///
/// Index tables are dense: `object_classes[h.index()]` is the class of handle `h`.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Fom {
    /// The merged modules' names in merge order (the MIM is implicit and not listed).
    pub module_names: Vec<String>,
    /// Object classes by handle.
    pub object_classes: Vec<ObjectClass>,
    /// Attributes by handle.
    pub attributes: Vec<Attribute>,
    /// Interaction classes by handle.
    pub interaction_classes: Vec<InteractionClass>,
    /// Parameters by handle.
    pub parameters: Vec<Parameter>,
    /// Dimensions by handle.
    pub dimensions: Vec<Dimension>,
    /// All data types, the MIM's first, then each module's new ones in order.
    pub data_types: Vec<DataType>,
    /// Object classes by dotted name from the root, e.g. `HLAobjectRoot.Aircraft`.
    pub object_class_by_qname: HashMap<String, ObjectClassHandle>,
    /// Interaction classes by dotted name from the root, e.g. `HLAinteractionRoot.Track`.
    pub interaction_class_by_qname: HashMap<String, InteractionClassHandle>,
    /// How logical time is represented, from the modules' `<time>` sections.
    #[serde(default)]
    pub time_representation: TimeRepresentation,
    /// The update rate table of all modules, in the order first declared.
    #[serde(default)]
    pub update_rates: Vec<UpdateRate>,
    /// The switches the modules set, in the order first set.
    #[serde(default)]
    pub switches: Vec<Switch>,
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
    /// The dimension of a handle, if it exists.
    pub fn dimension(&self, h: DimensionHandle) -> Option<&Dimension> {
        self.dimensions.get(h.index())
    }

    /// Looks a class up by its dotted name, with or without the `HLAobjectRoot.` prefix.
    pub fn object_class_by_name(&self, name: &str) -> Option<ObjectClassHandle> {
        if let Some(h) = self.object_class_by_qname.get(name) {
            return Some(*h);
        }
        self.object_class_by_qname
            .get(&format!("HLAobjectRoot.{name}"))
            .copied()
    }
    /// Looks an interaction class up by its dotted name, with or without the `HLAinteractionRoot.` prefix.
    pub fn interaction_class_by_name(&self, name: &str) -> Option<InteractionClassHandle> {
        if let Some(h) = self.interaction_class_by_qname.get(name) {
            return Some(*h);
        }
        self.interaction_class_by_qname
            .get(&format!("HLAinteractionRoot.{name}"))
            .copied()
    }
    /// An attribute of `class` (own or inherited) by name.
    pub fn attribute_by_name(
        &self,
        class: ObjectClassHandle,
        name: &str,
    ) -> Option<AttributeHandle> {
        let c = self.object_class(class)?;
        c.all_attributes
            .iter()
            .copied()
            .find(|a| self.attributes[a.index()].name == name)
    }
    /// A parameter of `class` (own or inherited) by name.
    pub fn parameter_by_name(
        &self,
        class: InteractionClassHandle,
        name: &str,
    ) -> Option<ParameterHandle> {
        let c = self.interaction_class(class)?;
        c.all_parameters
            .iter()
            .copied()
            .find(|p| self.parameters[p.index()].name == name)
    }
    /// True when `class` is `ancestor` or descends from it.
    pub fn is_object_subclass_of(
        &self,
        class: ObjectClassHandle,
        ancestor: ObjectClassHandle,
    ) -> bool {
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
    pub fn is_interaction_subclass_of(
        &self,
        class: InteractionClassHandle,
        ancestor: InteractionClassHandle,
    ) -> bool {
        let mut c = Some(class);
        while let Some(h) = c {
            if h == ancestor {
                return true;
            }
            c = self
                .interaction_classes
                .get(h.index())
                .and_then(|x| x.parent);
        }
        false
    }
    /// `class` and all its descendants.
    pub fn object_class_and_descendants(&self, class: ObjectClassHandle) -> Vec<ObjectClassHandle> {
        self.object_classes
            .iter()
            .map(|c| c.handle)
            .filter(|h| self.is_object_subclass_of(*h, class))
            .collect()
    }
    /// `class` and all its descendants.
    pub fn interaction_class_and_descendants(
        &self,
        class: InteractionClassHandle,
    ) -> Vec<InteractionClassHandle> {
        self.interaction_classes
            .iter()
            .map(|c| c.handle)
            .filter(|h| self.is_interaction_subclass_of(*h, class))
            .collect()
    }
    /// Counts for a summary; see [`FomSummary`] for what each includes.
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

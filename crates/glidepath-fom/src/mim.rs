//! The built-in MOM and Initialization Module (MIM): the roots of both class trees
//! and the standard `HLA*` data types that every FOM module may use without
//! declaring them, as the IEEE 1516-2010 standards define them.
//!
//! It is written here as Rust data rather than loaded from a file so that merging
//! never depends on a file being installed next to the binary, and so that the
//! handles it fixes (`HLAobjectRoot` = 0, `HLAprivilegeToDeleteObject` = 0,
//! `HLAinteractionRoot` = 0) cannot drift.
//!
//! Not yet included: the MOM classes (`HLAobjectRoot.HLAmanager...`,
//! `HLAinteractionRoot.HLAmanager...`) and the MOM dimensions `HLAfederate` and
//! `HLAserviceGroup`. glidepath's management services do not publish MOM data
//! yet; adding the classes later appends handles after the roots' and leaves
//! those of user classes in a deterministic order. A module that declares MOM
//! classes itself still merges, as any module would.

use crate::location::SourceLocation;
use crate::model::{DataType, Endian, OrderType};
use crate::parse::{
    FomModule, Located, ModuleAttribute, ModuleDataType, ModuleInteractionClass, ModuleObjectClass,
    ModuleTransportation,
};

/// The label the MIM carries in error messages.
pub(crate) const MIM_SOURCE: &str = "HLAstandardMIM (built in)";

/// Builds the MIM as a module, so that merging treats it exactly like a user's.
pub(crate) fn standard_mim() -> FomModule {
    let here = SourceLocation::NONE;
    let text = |s: &str| {
        Some(Located {
            value: s.to_owned(),
            location: here,
        })
    };

    let object_root = ModuleObjectClass {
        name: "HLAobjectRoot".into(),
        location: here,
        attributes: vec![ModuleAttribute {
            name: "HLAprivilegeToDeleteObject".into(),
            location: here,
            data_type: text("HLAtoken"),
            transportation: text("HLAreliable"),
            order: Some(Located {
                value: OrderType::TimeStamp,
                location: here,
            }),
            dimensions: None,
        }],
        subclasses: Vec::new(),
    };
    let interaction_root = ModuleInteractionClass {
        name: "HLAinteractionRoot".into(),
        location: here,
        transportation: text("HLAreliable"),
        order: Some(Located {
            value: OrderType::Receive,
            location: here,
        }),
        dimensions: None,
        parameters: Vec::new(),
        subclasses: Vec::new(),
    };
    let transportations = [("HLAreliable", true), ("HLAbestEffort", false)]
        .into_iter()
        .map(|(name, reliable)| ModuleTransportation {
            name: name.into(),
            location: here,
            reliable: Some(reliable),
        })
        .collect();

    FomModule {
        name: "HLAstandardMIM".into(),
        source: MIM_SOURCE.into(),
        model_name: Some(
            "Standard MOM and Initialization Module (MIM) for HLA IEEE 1516-2010".into(),
        ),
        object_root: Some(object_root),
        interaction_root: Some(interaction_root),
        dimensions: Vec::new(),
        transportations,
        data_types: standard_data_types()
            .into_iter()
            .map(ModuleDataType::builtin)
            .collect(),
        // The MIM leaves the time representation to the federation's modules.
        time: Default::default(),
    }
}

/// The MIM's data types, in the order of the standard's tables.
fn standard_data_types() -> Vec<DataType> {
    let mut types = Vec::new();

    // Basic data representations: name, size in bits, byte order.
    let basics: [(&str, u32, Endian); 13] = [
        ("HLAinteger16BE", 16, Endian::Big),
        ("HLAinteger32BE", 32, Endian::Big),
        ("HLAinteger64BE", 64, Endian::Big),
        ("HLAfloat32BE", 32, Endian::Big),
        ("HLAfloat64BE", 64, Endian::Big),
        ("HLAoctetPairBE", 16, Endian::Big),
        ("HLAinteger16LE", 16, Endian::Little),
        ("HLAinteger32LE", 32, Endian::Little),
        ("HLAinteger64LE", 64, Endian::Little),
        ("HLAfloat32LE", 32, Endian::Little),
        ("HLAfloat64LE", 64, Endian::Little),
        ("HLAoctetPairLE", 16, Endian::Little),
        ("HLAoctet", 8, Endian::Big),
    ];
    types.extend(
        basics
            .into_iter()
            .map(|(name, size_bits, endian)| DataType::Basic {
                name: name.into(),
                size_bits,
                endian,
            }),
    );

    // Simple data types: name and the basic representation they alias.
    let simples: [(&str, &str); 10] = [
        ("HLAASCIIchar", "HLAoctet"),
        ("HLAunicodeChar", "HLAoctetPairBE"),
        ("HLAbyte", "HLAoctet"),
        ("HLAcount", "HLAinteger32BE"),
        ("HLAseconds", "HLAinteger32BE"),
        ("HLAmsec", "HLAinteger32BE"),
        ("HLAnormalizedFederateHandle", "HLAinteger32BE"),
        ("HLAindex", "HLAinteger32BE"),
        ("HLAinteger64Time", "HLAinteger64BE"),
        ("HLAfloat64Time", "HLAfloat64BE"),
    ];
    types.extend(
        simples
            .into_iter()
            .map(|(name, representation)| DataType::Simple {
                name: name.into(),
                representation: representation.into(),
            }),
    );

    // Enumerated data types, all represented as HLAinteger32BE.
    let enumerations: [(&str, &[(&str, u32)]); 9] = [
        ("HLAboolean", &[("HLAfalse", 0), ("HLAtrue", 1)]),
        (
            "HLAfederateState",
            &[
                ("ActiveFederate", 1),
                ("FederateSaveInProgress", 3),
                ("FederateRestoreInProgress", 5),
            ],
        ),
        ("HLAtimeState", &[("TimeGranted", 0), ("TimeAdvancing", 1)]),
        ("HLAownership", &[("Unowned", 0), ("Owned", 1)]),
        (
            "HLAresignAction",
            &[
                ("DivestOwnership", 1),
                ("DeleteObjectInstances", 2),
                ("CancelPendingAcquisitions", 3),
                ("DeleteObjectInstancesThenDivestOwnership", 4),
                (
                    "CancelPendingAcquisitionsThenDeleteObjectInstancesThenDivestOwnership",
                    5,
                ),
                ("NoAction", 6),
            ],
        ),
        ("HLAorderType", &[("Receive", 0), ("TimeStamp", 1)]),
        ("HLAswitch", &[("Enabled", 1), ("Disabled", 0)]),
        (
            "HLAsynchPointStatus",
            &[
                ("NoActivity", 0),
                ("AttemptingToRegisterSynchPoint", 1),
                ("MovingToSynchPoint", 2),
                ("WaitingForRestOfFederation", 3),
            ],
        ),
        (
            "HLAnormalizedServiceGroup",
            &[
                ("FederationManagement", 0),
                ("DeclarationManagement", 1),
                ("ObjectManagement", 2),
                ("OwnershipManagement", 3),
                ("TimeManagement", 4),
                ("DataDistributionManagement", 5),
                ("SupportServices", 6),
            ],
        ),
    ];
    types.extend(enumerations.into_iter().map(|(name, enumerators)| {
        DataType::Enumerated {
            name: name.into(),
            representation: "HLAinteger32BE".into(),
            enumerators: enumerators
                .iter()
                .map(|(e, v)| ((*e).to_owned(), vec![v.to_string()]))
                .collect(),
        }
    }));

    // Array data types: name, element type, cardinality, encoding.
    let arrays: [(&str, &str, &str, &str); 17] = [
        (
            "HLAASCIIstring",
            "HLAASCIIchar",
            "Dynamic",
            "HLAvariableArray",
        ),
        (
            "HLAunicodeString",
            "HLAunicodeChar",
            "Dynamic",
            "HLAvariableArray",
        ),
        ("HLAopaqueData", "HLAbyte", "Dynamic", "HLAvariableArray"),
        ("HLAtoken", "HLAbyte", "0", "HLAfixedArray"),
        ("HLAhandle", "HLAbyte", "Dynamic", "HLAvariableArray"),
        (
            "HLAtransportationName",
            "HLAunicodeChar",
            "Dynamic",
            "HLAvariableArray",
        ),
        (
            "HLAupdateRateName",
            "HLAunicodeChar",
            "Dynamic",
            "HLAvariableArray",
        ),
        ("HLAlogicalTime", "HLAbyte", "Dynamic", "HLAvariableArray"),
        ("HLAtimeInterval", "HLAbyte", "Dynamic", "HLAvariableArray"),
        ("HLAhandleList", "HLAhandle", "Dynamic", "HLAvariableArray"),
        (
            "HLAinteractionSubList",
            "HLAinteractionSubscription",
            "Dynamic",
            "HLAvariableArray",
        ),
        (
            "HLAargumentList",
            "HLAunicodeString",
            "Dynamic",
            "HLAvariableArray",
        ),
        (
            "HLAobjectClassBasedCounts",
            "HLAobjectClassBasedCount",
            "Dynamic",
            "HLAvariableArray",
        ),
        (
            "HLAinteractionCounts",
            "HLAinteractionCount",
            "Dynamic",
            "HLAvariableArray",
        ),
        (
            "HLAsynchPointList",
            "HLAunicodeString",
            "Dynamic",
            "HLAvariableArray",
        ),
        (
            "HLAsynchPointFederateList",
            "HLAsynchPointFederate",
            "Dynamic",
            "HLAvariableArray",
        ),
        (
            "HLAmoduleDesignatorList",
            "HLAunicodeString",
            "Dynamic",
            "HLAvariableArray",
        ),
    ];
    types.extend(
        arrays
            .into_iter()
            .map(|(name, element, cardinality, encoding)| DataType::Array {
                name: name.into(),
                element: element.into(),
                cardinality: cardinality.into(),
                encoding: encoding.into(),
            }),
    );

    // Fixed records used by the MOM: name and (field, type) pairs.
    let records: [(&str, [(&str, &str); 2]); 4] = [
        (
            "HLAinteractionSubscription",
            [
                ("HLAinteractionClass", "HLAhandle"),
                ("HLAactive", "HLAboolean"),
            ],
        ),
        (
            "HLAobjectClassBasedCount",
            [("HLAobjectClass", "HLAhandle"), ("HLAcount", "HLAcount")],
        ),
        (
            "HLAinteractionCount",
            [
                ("HLAinteractionClass", "HLAhandle"),
                ("HLAinteractionCount", "HLAcount"),
            ],
        ),
        (
            "HLAsynchPointFederate",
            [
                ("HLAfederate", "HLAhandle"),
                ("HLAfederateSynchStatus", "HLAsynchPointStatus"),
            ],
        ),
    ];
    types.extend(records.into_iter().map(|(name, fields)| {
        DataType::FixedRecord {
            name: name.into(),
            fields: fields
                .iter()
                .map(|(f, t)| ((*f).to_owned(), (*t).to_owned()))
                .collect(),
            encoding: "HLAfixedRecord".into(),
        }
    }));

    types
}

/// How many data types the MIM declares; part of every merged FOM's count.
pub const MIM_DATA_TYPE_COUNT: usize = 53;

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn data_type_names_are_unique_and_counted() {
        let types = standard_data_types();
        let names: HashSet<&str> = types.iter().map(DataType::name).collect();
        assert_eq!(names.len(), types.len());
        assert_eq!(types.len(), MIM_DATA_TYPE_COUNT);
    }

    #[test]
    fn every_reference_resolves_within_the_mim() {
        let mim = standard_mim();
        let names: HashSet<&str> = mim.data_types.iter().map(|t| t.definition.name()).collect();
        for t in &mim.data_types {
            for r in &t.references {
                assert!(
                    names.contains(r.name.as_str()),
                    "{} -> {}",
                    t.definition.name(),
                    r.name
                );
            }
        }
    }
}

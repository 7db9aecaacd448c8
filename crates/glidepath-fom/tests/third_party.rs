//! A closer look at some published third-party FOM modules (SISO Space Reference
//! FOM, SISO RPR FOM 2.0 foundation and switches, the IEEE 1516.2 restaurant
//! example): counts, inheritance and data types as their authors wrote them.
//! `tests/corpus.rs` checks every vendored module against what its publisher
//! expects; `tests/data/third_party/README.md` says where each file comes from.

mod support;

use std::path::PathBuf;

use glidepath_fom::{
    DataType, Endian, Fom, FomErrorKind, FomModule, FomSummary, OrderType, TransportationType,
    MIM_DATA_TYPE_COUNT,
};
use support::{foms_dir, mim, plus_mom, third_party};

/// The complete Space FOM (SISO-STD-018-2020), in dependency order.
const SPACE_FOM: [&str; 5] = [
    "spacefom/SISO_SpaceFOM_switches.xml",
    "spacefom/SISO_SpaceFOM_datatypes.xml",
    "spacefom/SISO_SpaceFOM_management.xml",
    "spacefom/SISO_SpaceFOM_environment.xml",
    "spacefom/SISO_SpaceFOM_entity.xml",
];
const RPR: [&str; 2] = ["rpr/RPR-Switches_v2.0.xml", "rpr/RPR-Foundation_v2.0.xml"];
const RESTAURANT: [&str; 2] = [
    "restaurant/RestaurantFood.xml",
    "restaurant/RestaurantDrinks.xml",
];

fn paths(names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| third_party(n)).collect()
}

fn attribute_names(fom: &Fom, qualified_name: &str) -> Vec<String> {
    let class = fom
        .object_class(fom.object_class_by_name(qualified_name).unwrap())
        .unwrap();
    class
        .all_attributes
        .iter()
        .map(|a| fom.attributes[a.index()].name.clone())
        .collect()
}

#[test]
fn every_vendored_module_parses_on_its_own() {
    for name in SPACE_FOM.iter().chain(&RPR).chain(&RESTAURANT) {
        let module = FomModule::load(&third_party(name)).unwrap_or_else(|e| panic!("{e}"));
        assert!(name.ends_with(&module.name), "{name}");
        assert!(
            module.model_name.is_some(),
            "{name} has a modelIdentification"
        );
    }
}

#[test]
fn space_fom_merges_with_expected_counts() {
    let fom = Fom::load_files(&paths(&SPACE_FOM)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fom.summary(),
        plus_mom(FomSummary {
            modules: 5,
            // Root, ExecutionConfiguration, ReferenceFrame, PhysicalEntity,
            // PhysicalEntity.DynamicalEntity, PhysicalInterface.
            object_classes: 6,
            attributes: 30,
            interaction_classes: 2,
            parameters: 1,
            dimensions: 0,
            // 20 simple, 11 array, 4 fixed record, 2 enumerated.
            data_types: MIM_DATA_TYPE_COUNT + 37,
        })
    );
}

#[test]
fn space_fom_subclass_inherits_root_first() {
    let fom = Fom::load_files(&paths(&SPACE_FOM)).unwrap();
    let entity = attribute_names(&fom, "HLAobjectRoot.PhysicalEntity");
    let dynamical = attribute_names(&fom, "HLAobjectRoot.PhysicalEntity.DynamicalEntity");
    assert_eq!(entity.len(), 10);
    assert_eq!(dynamical.len(), 16);
    assert_eq!(dynamical[..10], entity[..]);
    assert_eq!(dynamical[0], "HLAprivilegeToDeleteObject");
    assert_eq!(
        dynamical[10..],
        [
            "force",
            "torque",
            "mass",
            "mass_rate",
            "inertia",
            "inertia_rate"
        ]
    );

    let dynamical_class = fom
        .object_class_by_name("PhysicalEntity.DynamicalEntity")
        .unwrap();
    let state = fom
        .attribute(fom.attribute_by_name(dynamical_class, "state").unwrap())
        .unwrap();
    assert_eq!(state.data_type.as_deref(), Some("SpaceTimeCoordinateState"));
    assert_eq!(
        state.class,
        fom.object_class_by_name("PhysicalEntity").unwrap()
    );
    assert_eq!(
        (state.transportation, state.order),
        (TransportationType::Reliable, OrderType::TimeStamp)
    );

    // The same attribute name in unrelated classes is not a clash.
    for class in ["ReferenceFrame", "PhysicalEntity", "PhysicalInterface"] {
        assert!(fom
            .attribute_by_name(fom.object_class_by_name(class).unwrap(), "name")
            .is_some());
    }
}

#[test]
fn space_fom_interactions_and_types() {
    let fom = Fom::load_files(&paths(&SPACE_FOM)).unwrap();
    let mtr = fom
        .interaction_class_by_name("ModeTransitionRequest")
        .unwrap();
    let parameter = fom
        .parameter(fom.parameter_by_name(mtr, "execution_mode").unwrap())
        .unwrap();
    assert_eq!(parameter.data_type.as_deref(), Some("MTRMode"));
    match fom.data_type("MTRMode") {
        Some(DataType::Enumerated {
            representation,
            enumerators,
            ..
        }) => {
            assert_eq!(representation, "HLAinteger16LE");
            assert_eq!(
                enumerators[0],
                ("MTR_GOTO_RUN".to_owned(), vec!["2".to_owned()])
            );
        }
        other => panic!("MTRMode is {other:?}"),
    }
    assert_eq!(
        fom.basic_representation("Time"),
        Some(&DataType::Basic {
            name: "HLAfloat64LE".into(),
            size_bits: 64,
            endian: Endian::Little
        })
    );
    match fom.data_type("InertiaMatrix") {
        Some(DataType::Array {
            element,
            cardinality,
            encoding,
            ..
        }) => {
            assert_eq!(
                (element.as_str(), cardinality.as_str(), encoding.as_str()),
                ("MassMomentOfInertia", "9", "HLAfixedArray")
            );
        }
        other => panic!("InertiaMatrix is {other:?}"),
    }
}

#[test]
fn space_fom_merges_in_any_order() {
    // Data types are gathered from every module before classes are checked, so
    // listing the entity module before the data types module is fine.
    let mut reversed = SPACE_FOM;
    reversed.reverse();
    let fom = Fom::load_files(&paths(&reversed)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fom.summary(),
        Fom::load_files(&paths(&SPACE_FOM)).unwrap().summary()
    );
    // Handles differ with the order: the entity module now comes first.
    assert_eq!(
        fom.object_classes[mim().object_classes.len()].qualified_name,
        "HLAobjectRoot.PhysicalEntity"
    );
}

#[test]
fn rpr_foundation_and_switches_merge() {
    let fom = Fom::load_files(&paths(&RPR)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fom.summary(),
        plus_mom(FomSummary {
            modules: 2,
            object_classes: 1,
            attributes: 1,
            interaction_classes: 1,
            parameters: 0,
            dimensions: 0,
            data_types: MIM_DATA_TYPE_COUNT + 7,
        })
    );
    match fom.data_type("RTIobjectId") {
        Some(DataType::Array {
            element, encoding, ..
        }) => {
            assert_eq!(element, "HLAASCIIchar");
            // RPR's own array encoding is kept as written.
            assert_eq!(encoding, "RPRnullTerminatedArray");
        }
        other => panic!("RTIobjectId is {other:?}"),
    }
    assert_eq!(
        fom.basic_representation("RPRboolean").map(DataType::name),
        Some("HLAoctet")
    );
}

#[test]
fn restaurant_modules_share_scaffolding() {
    let fom = Fom::load_files(&paths(&RESTAURANT)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fom.summary(),
        plus_mom(FomSummary {
            modules: 2,
            // The root, 23 food classes, and Water, Coffee and Soda from the drinks module.
            object_classes: 27,
            attributes: 3,
            interaction_classes: 1,
            parameters: 0,
            dimensions: 3,
            data_types: MIM_DATA_TYPE_COUNT + 3,
        })
    );
    // Drinks extends Food.Drink, declared by the food module; Soda inherits NumberCups.
    assert_eq!(
        attribute_names(&fom, "Food.Drink.Soda"),
        ["HLAprivilegeToDeleteObject", "NumberCups", "Flavor"]
    );
    let soda = fom.object_class_by_name("Food.Drink.Soda").unwrap();
    let flavor = fom
        .attribute(fom.attribute_by_name(soda, "Flavor").unwrap())
        .unwrap();
    let dimensions: Vec<&str> = flavor
        .dimensions
        .iter()
        .map(|d| fom.dimensions[d.index()].name.as_str())
        .collect();
    assert_eq!(dimensions, ["SodaFlavor", "BarQuantity"]);
    assert_eq!(
        fom.object_class_and_descendants(fom.object_class_by_name("Food.Drink").unwrap())
            .len(),
        4
    );
    assert_eq!(
        fom.object_class_by_qname
            .get("HLAobjectRoot.Food.Dessert.IceCream.Chocolate")
            .copied(),
        fom.object_class_by_name("Food.Dessert.IceCream.Chocolate")
    );
}

#[test]
fn restaurant_drinks_before_food_is_refused() {
    // The drinks module declares Food.Drink as scaffolding; listed first, it
    // defines Drink without attributes, and the food module may not add
    // NumberCups to it afterwards (1516-2010 has no attribute extension).
    let mut reversed = RESTAURANT;
    reversed.reverse();
    let e = Fom::load_files(&paths(&reversed)).unwrap_err();
    assert!(e.file.ends_with("RestaurantFood.xml"), "{e}");
    assert!(
        matches!(&e.kind, FomErrorKind::InconsistentDefinition { what, name, .. }
            if what == "object class" && name == "HLAobjectRoot.Food.Drink"),
        "{e}"
    );
}

#[test]
fn everything_merges_together_with_our_modules() {
    let mut all = paths(&SPACE_FOM);
    all.extend(paths(&RPR));
    all.extend(paths(&RESTAURANT));
    all.push(foms_dir().join("benchmark.xml"));
    all.push(foms_dir().join("air-traffic.xml"));
    let fom = Fom::load_files(&all).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fom.summary(),
        plus_mom(FomSummary {
            modules: 11,
            object_classes: 6 + 26 + 3,
            attributes: 30 + 2 + 23, // Aircraft has the target generator's 4 more
            interaction_classes: 2 + 8,
            parameters: 1 + 23,
            dimensions: 3 + 3,
            data_types: MIM_DATA_TYPE_COUNT + 37 + 7 + 3 + 3,
        })
    );
}

//! The corpus: every vendored third-party FOM module (see
//! `tests/data/third_party/README.md` for where each comes from and under which
//! licence), each asserted to do what its publisher expects:
//!
//! - the IEEE's standard MIM loads alone and first, and equals the built-in MIM;
//! - SISO's 14 RPR FOM 2.0 modules, in the order their own `Dependency`
//!   references give, merge into exactly SISO's monolithic RPR FOM 2.0;
//! - SISO's 5 Space FOM modules merge, also after the standard MIM;
//! - the 4 modules of the IEEE 1516.2-2010 restaurant example merge in the order
//!   their `Dependency` references give;
//! - the 26 modules of OpenRTI's module-merging test merge alone and in every
//!   ordered pair exactly when that test expects, defining what it expects;
//! - Portico's data type test modules are accepted or rejected, each for the
//!   fault its name announces.

// Helpers return the crate's own `Result<Fom, FomError>`; the crate allows its
// size for the reason given in its lib.rs.
#![allow(clippy::result_large_err)]
mod support;

use std::path::PathBuf;

use glidepath_fom::{DataType, DefaultRange, Endian, Fom, FomError, FomErrorKind, FomModule};
use support::{mim, third_party};

fn load(paths: &[PathBuf]) -> Result<Fom, FomError> {
    Fom::load_files(paths)
}

fn paths(dir: &str, names: &[&str]) -> Vec<PathBuf> {
    names
        .iter()
        .map(|n| third_party(&format!("{dir}/{n}")))
        .collect()
}

fn standard_mim_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/HLAstandardMIM.xml")
}

/// The `<reference><type>Dependency</type><identification>` texts of a module.
fn dependencies(path: &PathBuf) -> Vec<String> {
    let text = std::fs::read_to_string(path).unwrap();
    text.split("<type>Dependency</type>")
        .skip(1)
        .map(|rest| {
            let start = rest.find("<identification>").unwrap() + "<identification>".len();
            let end = rest.find("</identification>").unwrap();
            rest[start..end].trim().to_owned()
        })
        .collect()
}

/// Every module's dependencies are the MIM or modules listed before it, matched
/// by the end of their model name (RPR's references omit the standard number) or
/// by their file name (the restaurant's name `RestaurantProcesses`).
fn assert_dependency_order(paths: &[PathBuf]) {
    let mut earlier: Vec<String> = Vec::new();
    for path in paths {
        for dependency in dependencies(path) {
            assert!(
                dependency == "MIM" || earlier.iter().any(|name| name.ends_with(&dependency)),
                "{} depends on {dependency}, not listed before it",
                path.display()
            );
        }
        earlier.push(FomModule::load(path).unwrap().model_name.unwrap());
        earlier.push(path.file_stem().unwrap().to_string_lossy().into_owned());
    }
}

#[test]
fn ieee_standard_mim_loads_alone_and_first_and_is_the_built_in_mim() {
    let alone = load(&[standard_mim_path()]).unwrap_or_else(|e| panic!("{e}"));
    let built_in = mim();
    assert_eq!(alone.object_classes, built_in.object_classes);
    assert_eq!(alone.attributes, built_in.attributes);
    assert_eq!(alone.interaction_classes, built_in.interaction_classes);
    assert_eq!(alone.parameters, built_in.parameters);
    assert_eq!(alone.dimensions, built_in.dimensions);
    assert_eq!(alone.data_types, built_in.data_types);
    // What the standard's file declares: the MOM's 4 object and 85 interaction
    // classes with 44 + 1 attributes, the HLAfederate and HLAserviceGroup
    // dimensions, and 53 data types.
    let s = alone.summary();
    assert_eq!(
        (s.object_classes, s.attributes, s.interaction_classes),
        (4, 45, 85)
    );
    assert_eq!((s.dimensions, s.data_types), (2, 53));

    let mut first = vec![standard_mim_path()];
    first.extend(paths("rpr", &RPR));
    let with_mim = load(&first).unwrap_or_else(|e| panic!("{e}"));
    let without = load(&paths("rpr", &RPR)).unwrap();
    assert_eq!(with_mim.object_classes, without.object_classes);
    assert_eq!(with_mim.attributes, without.attributes);
    assert_eq!(with_mim.parameters, without.parameters);
    assert_eq!(with_mim.data_types, without.data_types);
}

/// SISO-STD-001.1-2015, the RPR FOM 2.0 modules, in dependency order.
const RPR: [&str; 14] = [
    "RPR-Foundation_v2.0.xml",
    "RPR-Switches_v2.0.xml",
    "RPR-Enumerations_v2.0.xml",
    "RPR-Base_v2.0.xml",
    "RPR-Physical_v2.0.xml",
    "RPR-Aggregate_v2.0.xml",
    "RPR-Warfare_v2.0.xml",
    "RPR-Logistics_v2.0.xml",
    "RPR-SIMAN_v2.0.xml",
    "RPR-SE_v2.0.xml",
    "RPR-Minefield_v2.0.xml",
    "RPR-DER_v2.0.xml",
    "RPR-Communication_v2.0.xml",
    "RPR-UA_v2.0.xml",
];

#[test]
fn rpr_modules_merge_into_sisos_monolithic_rpr_fom() {
    let modules = paths("rpr", &RPR);
    assert_dependency_order(&modules);
    let merged = load(&modules).unwrap_or_else(|e| panic!("{e}"));
    // SISO generated the monolithic FOM from these modules: merging them must
    // give the same classes, attributes, parameters and data types.
    let monolithic =
        load(&paths("rpr", &["RPR_FOM_v2.0_1516-2010.xml"])).unwrap_or_else(|e| panic!("{e}"));
    let classes = |f: &Fom| {
        let mut names: Vec<String> = f
            .object_classes
            .iter()
            .map(|c| c.qualified_name.clone())
            .chain(
                f.interaction_classes
                    .iter()
                    .map(|c| c.qualified_name.clone()),
            )
            .collect();
        names.sort();
        names
    };
    let attributes = |f: &Fom| {
        let mut all: Vec<String> = f
            .attributes
            .iter()
            .map(|a| {
                format!(
                    "{}.{} {:?} {:?} {:?} {:?}",
                    f.object_classes[a.class.index()].qualified_name,
                    a.name,
                    a.data_type,
                    a.transportation,
                    a.order,
                    a.dimensions
                )
            })
            .collect();
        all.sort();
        all
    };
    let parameters = |f: &Fom| {
        let mut all: Vec<String> = f
            .parameters
            .iter()
            .map(|p| {
                let class = &f.interaction_classes[p.class.index()];
                format!(
                    "{}.{} {:?} {:?} {:?}",
                    class.qualified_name, p.name, p.data_type, class.transportation, class.order
                )
            })
            .collect();
        all.sort();
        all
    };
    let data_types = |f: &Fom| {
        let mut all: Vec<String> = f.data_types.iter().map(|t| format!("{t:?}")).collect();
        all.sort();
        all
    };
    assert_eq!(classes(&merged), classes(&monolithic));
    assert_eq!(attributes(&merged), attributes(&monolithic));
    assert_eq!(parameters(&merged), parameters(&monolithic));
    assert_eq!(data_types(&merged), data_types(&monolithic));
    let s = merged.summary();
    let mom = mim().summary();
    assert_eq!(
        (
            s.object_classes - mom.object_classes,
            s.attributes - mom.attributes,
            s.interaction_classes - mom.interaction_classes,
            s.parameters - mom.parameters,
            s.data_types - mom.data_types
        ),
        (63, 311, 78, 277, 286)
    );
}

#[test]
fn rpr_minefield_before_its_synthetic_environment_dependency_is_refused() {
    let mut modules = RPR;
    let se = modules
        .iter()
        .position(|m| m.starts_with("RPR-SE"))
        .unwrap();
    modules.swap(se, se + 1);
    let e = load(&paths("rpr", &modules)).unwrap_err();
    assert!(e.file.ends_with("RPR-SE_v2.0.xml"), "{e}");
    assert!(
        matches!(&e.kind, FomErrorKind::InconsistentDefinition { what, name, first, .. }
            if what == "object class" && name == "HLAobjectRoot.EnvironmentObject"
                && first.contains("RPR-Minefield_v2.0.xml")),
        "{e}"
    );
}

/// SISO-STD-018-2020, the Space Reference FOM, in the order TrickHLA loads it.
const SPACE_FOM: [&str; 5] = [
    "SISO_SpaceFOM_switches.xml",
    "SISO_SpaceFOM_datatypes.xml",
    "SISO_SpaceFOM_management.xml",
    "SISO_SpaceFOM_environment.xml",
    "SISO_SpaceFOM_entity.xml",
];

#[test]
fn space_fom_merges_alone_and_after_the_standard_mim() {
    let modules = paths("spacefom", &SPACE_FOM);
    let alone = load(&modules).unwrap_or_else(|e| panic!("{e}"));
    let mut with_mim = vec![standard_mim_path()];
    with_mim.extend(modules);
    let after = load(&with_mim).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(alone.object_classes, after.object_classes);
    assert_eq!(alone.attributes, after.attributes);
    assert_eq!(
        alone.object_class_by_name("PhysicalEntity.DynamicalEntity"),
        after.object_class_by_name("PhysicalEntity.DynamicalEntity")
    );
    // The switches module sets every switch of the 1516-2010 table.
    assert_eq!(alone.switches.len(), 11);
}

/// The IEEE 1516.2-2010 restaurant example, in the order its references give.
const RESTAURANT: [&str; 4] = [
    "RestaurantProcesses.xml",
    "RestaurantFood.xml",
    "RestaurantDrinks.xml",
    "RestaurantSoup.xml",
];

#[test]
fn restaurant_example_merges_in_dependency_order() {
    let modules = paths("restaurant", &RESTAURANT);
    assert_dependency_order(&modules);
    let fom = load(&modules).unwrap_or_else(|e| panic!("{e}"));
    // Its own time type is accepted (glidepath keeps float time).
    assert!(fom.data_type("TimeType").is_some());
    // A variant record whose alternatives use an enumerator range and HLAother.
    match fom.data_type("WaiterValue") {
        Some(DataType::VariantRecord { alternatives, .. }) => {
            assert!(alternatives
                .iter()
                .any(|a| a.enumerators == "[Apprentice .. Senior], Master"));
        }
        other => panic!("WaiterValue is {other:?}"),
    }
    assert!(fom.object_class_by_name("Food.Drink.Soda").is_some());
    assert!(fom
        .object_class_by_name("Food.Appetizers.Soup.ClamChowder.Manhattan")
        .is_some());
    // The dimension table: normalization as written, and each value when
    // unspecified (a range, one value, excluded).
    let dimension = |name: &str| &fom.dimensions[fom.dimension_by_name(name).unwrap().index()];
    let flavor = dimension("SodaFlavor");
    assert_eq!(flavor.upper_bound, 3);
    assert_eq!(
        flavor.normalization.as_deref(),
        Some("linearEnumerated (Flavor, [Cola, Orange, RootBeer])")
    );
    assert_eq!(
        flavor.default_range,
        DefaultRange::Range { lower: 0, upper: 3 }
    );
    assert_eq!(
        dimension("BarQuantity").default_range,
        DefaultRange::Range { lower: 0, upper: 1 }
    );
    assert_eq!(dimension("WaiterId").default_range, DefaultRange::Excluded);
}

#[path = "corpus/openrti.rs"]
mod openrti;
#[path = "corpus/portico.rs"]
mod portico;

#[test]
fn portico_datatypes_module_loads_with_what_portico_asserts() {
    let fom = load(&paths("portico", &["datatypes.xml"])).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fom.data_type("UnsignedShort"),
        Some(&DataType::Basic {
            name: "UnsignedShort".into(),
            size_bits: 16,
            endian: Endian::Big
        })
    );
    match fom.data_type("WaiterTasks") {
        Some(DataType::Enumerated { enumerators, .. }) => {
            let values: Vec<(&str, &str)> = enumerators
                .iter()
                .map(|(n, v)| (n.as_str(), v[0].as_str()))
                .collect();
            assert_eq!(
                values,
                [
                    ("TakingOrder", "1"),
                    ("Serving", "2"),
                    ("Cleaning", "3"),
                    ("CalculatingBill", "4"),
                    ("Other", "5")
                ]
            );
        }
        other => panic!("WaiterTasks is {other:?}"),
    }
    assert_eq!(
        fom.basic_representation("Channel").map(DataType::name),
        Some("UnsignedShort")
    );
}

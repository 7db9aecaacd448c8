//! OpenRTI's module-merging test (`tests/rti1516e/modules/modules.cpp`): 26 small
//! modules, what each defines, and which module may not follow which. Its rule,
//! restated from that test: a list of modules is valid unless a module names one
//! listed before it as incompatible; a module may be listed twice.

use std::path::PathBuf;

use glidepath_fom::{Fom, FomModule};

use crate::support::third_party;

/// One module of the test: the classes it defines (dotted names below the
/// root) with their own attributes or parameters, its dimensions and update
/// rates, and the modules it may not follow.
struct Module {
    name: &'static str,
    incompatible_with_earlier: &'static [&'static str],
    object_classes: &'static [(&'static str, &'static [&'static str])],
    interaction_classes: &'static [(&'static str, &'static [&'static str])],
    dimensions: &'static [&'static str],
    update_rates: &'static [&'static str],
}

const NONE: Module = Module {
    name: "",
    incompatible_with_earlier: &[],
    object_classes: &[],
    interaction_classes: &[],
    dimensions: &[],
    update_rates: &[],
};

const MODULES: [Module; 26] = [
    Module {
        name: "Dimension1-1.xml",
        incompatible_with_earlier: &["Dimension1-2.xml"],
        dimensions: &["Dimension1"],
        ..NONE
    },
    Module {
        name: "Dimension1-2.xml",
        incompatible_with_earlier: &["Dimension1-1.xml"],
        dimensions: &["Dimension1"],
        ..NONE
    },
    Module {
        name: "Dimension2-1.xml",
        incompatible_with_earlier: &["Dimension2-2.xml"],
        dimensions: &["Dimension2"],
        ..NONE
    },
    Module {
        name: "Dimension2-2.xml",
        incompatible_with_earlier: &["Dimension2-1.xml"],
        dimensions: &["Dimension2"],
        ..NONE
    },
    Module {
        name: "UpdateRate1-1.xml",
        incompatible_with_earlier: &["UpdateRate1-2.xml"],
        update_rates: &["UpdateRate1"],
        ..NONE
    },
    Module {
        name: "UpdateRate1-2.xml",
        incompatible_with_earlier: &["UpdateRate1-1.xml"],
        update_rates: &["UpdateRate1"],
        ..NONE
    },
    Module {
        name: "UpdateRate2-1.xml",
        incompatible_with_earlier: &["UpdateRate2-2.xml"],
        update_rates: &["UpdateRate2"],
        ..NONE
    },
    Module {
        name: "UpdateRate2-2.xml",
        incompatible_with_earlier: &["UpdateRate2-1.xml"],
        update_rates: &["UpdateRate2"],
        ..NONE
    },
    Module {
        name: "InteractionClass1.xml",
        interaction_classes: &[("InteractionClass1", &[])],
        ..NONE
    },
    Module {
        name: "InteractionClass1-1.xml",
        incompatible_with_earlier: &[
            "InteractionClass1.xml",
            "InteractionClass1-2.xml",
            "InteractionClass2.xml",
            "InteractionClass2-1.xml",
            "InteractionClass2-2.xml",
        ],
        interaction_classes: &[("InteractionClass1", &["Parameter1"])],
        ..NONE
    },
    Module {
        name: "InteractionClass1-2.xml",
        incompatible_with_earlier: &[
            "InteractionClass1.xml",
            "InteractionClass1-1.xml",
            "InteractionClass2.xml",
            "InteractionClass2-1.xml",
            "InteractionClass2-2.xml",
        ],
        interaction_classes: &[("InteractionClass1", &["OtherParameter1"])],
        ..NONE
    },
    Module {
        name: "InteractionClass2.xml",
        interaction_classes: &[
            ("InteractionClass1", &[]),
            ("InteractionClass1.InteractionClass2", &[]),
        ],
        ..NONE
    },
    Module {
        name: "InteractionClass2-1.xml",
        incompatible_with_earlier: &["InteractionClass2.xml", "InteractionClass2-2.xml"],
        interaction_classes: &[
            ("InteractionClass1", &[]),
            ("InteractionClass1.InteractionClass2", &["Parameter2"]),
        ],
        ..NONE
    },
    Module {
        name: "InteractionClass2-2.xml",
        incompatible_with_earlier: &["InteractionClass2.xml", "InteractionClass2-1.xml"],
        interaction_classes: &[
            ("InteractionClass1", &[]),
            ("InteractionClass1.InteractionClass2", &["OtherParameter2"]),
        ],
        ..NONE
    },
    Module {
        name: "InteractionClass3.xml",
        interaction_classes: &[("InteractionClass3", &[])],
        ..NONE
    },
    Module {
        name: "InteractionClass3-1.xml",
        incompatible_with_earlier: &["InteractionClass3.xml", "InteractionClass3-2.xml"],
        interaction_classes: &[("InteractionClass3", &["Parameter3"])],
        ..NONE
    },
    Module {
        name: "InteractionClass3-2.xml",
        incompatible_with_earlier: &["InteractionClass3.xml", "InteractionClass3-1.xml"],
        interaction_classes: &[("InteractionClass3", &["OtherParameter3"])],
        ..NONE
    },
    Module {
        name: "ObjectClass1.xml",
        object_classes: &[("ObjectClass1", &[])],
        ..NONE
    },
    Module {
        name: "ObjectClass1-1.xml",
        incompatible_with_earlier: &[
            "ObjectClass1.xml",
            "ObjectClass1-2.xml",
            "ObjectClass2.xml",
            "ObjectClass2-1.xml",
            "ObjectClass2-2.xml",
        ],
        object_classes: &[("ObjectClass1", &["Attribute1"])],
        ..NONE
    },
    Module {
        name: "ObjectClass1-2.xml",
        incompatible_with_earlier: &[
            "ObjectClass1.xml",
            "ObjectClass1-1.xml",
            "ObjectClass2.xml",
            "ObjectClass2-1.xml",
            "ObjectClass2-2.xml",
        ],
        object_classes: &[("ObjectClass1", &["OtherAttribute1"])],
        ..NONE
    },
    Module {
        name: "ObjectClass2.xml",
        object_classes: &[("ObjectClass1", &[]), ("ObjectClass1.ObjectClass2", &[])],
        ..NONE
    },
    Module {
        name: "ObjectClass2-1.xml",
        incompatible_with_earlier: &["ObjectClass2.xml", "ObjectClass2-2.xml"],
        object_classes: &[
            ("ObjectClass1", &[]),
            ("ObjectClass1.ObjectClass2", &["Attribute2"]),
        ],
        ..NONE
    },
    Module {
        name: "ObjectClass2-2.xml",
        incompatible_with_earlier: &["ObjectClass2.xml", "ObjectClass2-1.xml"],
        object_classes: &[
            ("ObjectClass1", &[]),
            ("ObjectClass1.ObjectClass2", &["OtherAttribute2"]),
        ],
        ..NONE
    },
    Module {
        name: "ObjectClass3.xml",
        object_classes: &[("ObjectClass3", &[])],
        ..NONE
    },
    Module {
        name: "ObjectClass3-1.xml",
        incompatible_with_earlier: &["ObjectClass3.xml", "ObjectClass3-2.xml"],
        object_classes: &[("ObjectClass3", &["Attribute3"])],
        ..NONE
    },
    Module {
        name: "ObjectClass3-2.xml",
        incompatible_with_earlier: &["ObjectClass3.xml", "ObjectClass3-1.xml"],
        object_classes: &[("ObjectClass3", &["OtherAttribute3"])],
        ..NONE
    },
];

fn parsed(name: &str) -> FomModule {
    let path: PathBuf = third_party(&format!("openrti/{name}"));
    FomModule::load(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn own_names(fom: &Fom, class: &str, object: bool) -> Vec<String> {
    if object {
        let c = fom
            .object_class_by_name(class)
            .unwrap_or_else(|| panic!("{class}"));
        fom.object_classes[c.index()]
            .own_attributes
            .iter()
            .map(|a| fom.attributes[a.index()].name.clone())
            .collect()
    } else {
        let c = fom
            .interaction_class_by_name(class)
            .unwrap_or_else(|| panic!("{class}"));
        fom.interaction_classes[c.index()]
            .own_parameters
            .iter()
            .map(|p| fom.parameters[p.index()].name.clone())
            .collect()
    }
}

#[test]
fn openrti_each_module_defines_what_its_test_expects() {
    let files = std::fs::read_dir(third_party("openrti"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "xml")
        })
        .count();
    assert_eq!(files, MODULES.len());
    for module in &MODULES {
        let fom =
            Fom::merge(&[parsed(module.name)]).unwrap_or_else(|e| panic!("{}: {e}", module.name));
        for (class, attributes) in module.object_classes {
            assert_eq!(own_names(&fom, class, true), *attributes, "{}", module.name);
        }
        for (class, parameters) in module.interaction_classes {
            assert_eq!(
                own_names(&fom, class, false),
                *parameters,
                "{}",
                module.name
            );
        }
        for dimension in module.dimensions {
            assert!(
                fom.dimension_by_name(dimension).is_some(),
                "{}",
                module.name
            );
        }
        let rates: Vec<&str> = fom.update_rates.iter().map(|r| r.name.as_str()).collect();
        assert_eq!(rates, module.update_rates, "{}", module.name);
    }
}

#[test]
fn openrti_every_ordered_pair_merges_exactly_when_its_test_expects() {
    let parsed: Vec<FomModule> = MODULES.iter().map(|m| parsed(m.name)).collect();
    let mut refused = 0;
    for (i, earlier) in MODULES.iter().enumerate() {
        for (j, later) in MODULES.iter().enumerate() {
            let expected = i == j || !later.incompatible_with_earlier.contains(&earlier.name);
            let result = Fom::merge(&[parsed[i].clone(), parsed[j].clone()]);
            assert_eq!(
                result.is_ok(),
                expected,
                "{} then {}: {:?}",
                earlier.name,
                later.name,
                result.err().map(|e| e.to_string())
            );
            refused += usize::from(!expected);
        }
    }
    // 8 dimension and update rate pairs, 18 interaction and 18 object class pairs.
    assert_eq!(refused, 8 + 18 + 18);
}

/// The scaffolding order rule at a glance: `ObjectClass2.xml` and
/// `InteractionClass2.xml` name class 1 only to place class 2 below it.
#[test]
fn openrti_scaffolding_may_follow_a_definition_but_not_precede_it() {
    for (definition, scaffolding) in [
        ("ObjectClass1-1.xml", "ObjectClass2.xml"),
        ("InteractionClass1-1.xml", "InteractionClass2.xml"),
    ] {
        let after = Fom::merge(&[parsed(definition), parsed(scaffolding)]);
        assert!(after.is_ok(), "{definition} then {scaffolding}");
        let before = Fom::merge(&[parsed(scaffolding), parsed(definition)]);
        let e = before.expect_err("scaffolding first defines the class empty");
        assert!(e.file.ends_with(definition), "{e}");
    }
}

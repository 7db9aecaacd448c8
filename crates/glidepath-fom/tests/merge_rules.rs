//! The IEEE 1516-2010 rules for merging FOM modules, each shown by a pair of
//! modules that merges and a pair that must not (the rules are written down in
//! the crate's `merge` module documentation).

// Helpers return the crate's own `Result<Fom, FomError>`; the crate allows its
// size for the reason given in its lib.rs.
#![allow(clippy::result_large_err)]
mod support;

use glidepath_fom::{Fom, FomError, FomErrorKind, FomModule, UpdateRate, STANDARD_MIM_XML};
use support::{attribute, mim, module, position_of};

fn pair(first: &str, second: &str) -> Result<Fom, FomError> {
    Fom::merge(&[
        FomModule::parse_str("first.xml", first)?,
        FomModule::parse_str("second.xml", second)?,
    ])
}

/// The rule refused the second module, at the element `needle` in it, saying
/// `what` `name` differs from the first module.
fn refused(first: &str, second: &str, needle: &str, what: &str, name: &str) {
    let e = pair(first, second).expect_err("the pair must not merge");
    assert_eq!(e.file, "second.xml", "{e}");
    assert_eq!((e.line, e.column), position_of(second, needle, 0), "{e}");
    match &e.kind {
        FomErrorKind::InconsistentDefinition {
            what: w,
            name: n,
            first,
            ..
        } => {
            assert_eq!((w.as_str(), n.as_str()), (what, name), "{e}");
            assert!(first.starts_with("first.xml:"), "{e}");
        }
        other => panic!("{other:?}: {e}"),
    }
}

fn object(class: &str, attributes: &[&str]) -> String {
    let attributes: Vec<String> = attributes
        .iter()
        .map(|a| attribute(a, "HLAfloat64BE", "HLAreliable", "Receive"))
        .collect();
    module(
        &format!(
            "<objectClass><name>{class}</name>\n{}\n</objectClass>",
            attributes.join("\n")
        ),
        "",
        "",
    )
}

#[test]
fn an_object_class_in_two_modules_must_be_equivalent() {
    let a = object("Car", &["speed"]);
    let fom = pair(&a, &a).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fom.summary().attributes, mim().summary().attributes + 1);

    refused(
        &a,
        &object("Car", &["speed", "fuel"]),
        "<objectClass><name>Car",
        "object class",
        "HLAobjectRoot.Car",
    );
    refused(
        &a,
        &object("Car", &["fuel"]),
        "<objectClass><name>Car",
        "object class",
        "HLAobjectRoot.Car",
    );
}

#[test]
fn scaffolding_places_subclasses_but_comes_after_the_definition() {
    let car = object("Car", &["speed"]);
    let scaffolding = module(
        &format!(
            "<objectClass><name>Car</name><objectClass><name>Taxi</name>\n{}\n</objectClass></objectClass>",
            attribute("fare", "HLAfloat64BE", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    let fom = pair(&car, &scaffolding).unwrap_or_else(|e| panic!("{e}"));
    let taxi = fom.object_class_by_name("Car.Taxi").unwrap();
    let names: Vec<&str> = fom.object_classes[taxi.index()]
        .all_attributes
        .iter()
        .map(|a| fom.attributes[a.index()].name.as_str())
        .collect();
    assert_eq!(names, ["HLAprivilegeToDeleteObject", "speed", "fare"]);

    // Listed first, the scaffolding defines Car without attributes, and the
    // later module may not add `speed` (OpenRTI's modules test expects the same).
    refused(
        &scaffolding,
        &car,
        "<objectClass><name>Car",
        "object class",
        "HLAobjectRoot.Car",
    );
}

#[test]
fn an_interaction_class_in_two_modules_must_be_equivalent() {
    let ping = |parameters: &str, order: &str| {
        module(
            "",
            &format!(
                "<interactionClass><name>Ping</name><transportation>HLAreliable</transportation>\
                 <order>{order}</order>{parameters}</interactionClass>"
            ),
            "",
        )
    };
    let seq = "<parameter><name>seq</name><dataType>HLAinteger32BE</dataType></parameter>";
    let size = "<parameter><name>size</name><dataType>HLAinteger32BE</dataType></parameter>";
    pair(&ping(seq, "Receive"), &ping(seq, "Receive")).unwrap_or_else(|e| panic!("{e}"));
    // Name only, with no parameters: scaffolding.
    pair(&ping(seq, "Receive"), &ping("", "Receive")).unwrap_or_else(|e| panic!("{e}"));

    let other_parameters = ping(size, "Receive");
    refused(
        &ping(seq, "Receive"),
        &other_parameters,
        "<interactionClass><name>Ping",
        "interaction class",
        "HLAinteractionRoot.Ping",
    );
    let other_order = ping(seq, "TimeStamp");
    refused(
        &ping(seq, "Receive"),
        &other_order,
        "<order>TimeStamp",
        "interaction class",
        "HLAinteractionRoot.Ping",
    );
}

#[test]
fn data_types_with_one_name_must_be_identical() {
    let speed = |representation: &str| {
        module(
            "",
            "",
            &format!(
                "<dataTypes><simpleDataTypes><simpleData><name>Speed</name>\
                 <representation>{representation}</representation></simpleData>\
                 </simpleDataTypes></dataTypes>"
            ),
        )
    };
    pair(&speed("HLAfloat64BE"), &speed("HLAfloat64BE")).unwrap_or_else(|e| panic!("{e}"));
    refused(
        &speed("HLAfloat64BE"),
        &speed("HLAfloat32BE"),
        "<simpleData>",
        "data type",
        "Speed",
    );
}

#[test]
fn dimensions_with_one_name_must_be_identical() {
    let dimension = |bound: u32| {
        module(
            "",
            "",
            &format!(
                "<dimensions><dimension><name>Altitude</name><dataType>HLAinteger32BE</dataType>\
                 <upperBound>{bound}</upperBound></dimension></dimensions>"
            ),
        )
    };
    pair(&dimension(100), &dimension(100)).unwrap_or_else(|e| panic!("{e}"));
    refused(
        &dimension(100),
        &dimension(200),
        "<dimension>",
        "dimension",
        "Altitude",
    );
}

#[test]
fn transportations_with_one_name_must_agree() {
    let fast = |reliable: &str| {
        module(
            "",
            "",
            &format!(
                "<transportations><transportation><name>Fast</name><reliable>{reliable}</reliable>\
                 </transportation></transportations>"
            ),
        )
    };
    pair(&fast("No"), &fast("No")).unwrap_or_else(|e| panic!("{e}"));
    refused(
        &fast("No"),
        &fast("Yes"),
        "<transportation>",
        "transportation",
        "Fast",
    );
}

#[test]
fn switches_set_by_two_modules_must_agree() {
    let switches = |auto_provide: &str| {
        module(
            "",
            "",
            &format!(
                "<switches><autoProvide isEnabled=\"{auto_provide}\"/>\
                 <automaticResignAction resignAction=\"CancelThenDeleteThenDivest\"/></switches>"
            ),
        )
    };
    let fom = pair(&switches("false"), &switches("false")).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<(&str, &str)> = fom
        .switches
        .iter()
        .map(|s| (s.name.as_str(), s.value.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("autoProvide", "false"),
            ("automaticResignAction", "CancelThenDeleteThenDivest")
        ]
    );
    refused(
        &switches("false"),
        &switches("true"),
        "<autoProvide",
        "switch",
        "autoProvide",
    );
}

#[test]
fn update_rates_with_one_name_must_agree() {
    let rate = |hz: &str| {
        module(
            "",
            "",
            &format!(
                "<updateRates><updateRate><name>Fast</name><rate>{hz}</rate></updateRate></updateRates>"
            ),
        )
    };
    let fom = pair(&rate("50"), &rate("50.0")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        fom.update_rates,
        [UpdateRate {
            name: "Fast".into(),
            rate_hz: 50.0
        }]
    );
    refused(
        &rate("50"),
        &rate("25"),
        "<updateRate>",
        "update rate",
        "Fast",
    );

    let bad = rate("fast");
    let e = FomModule::parse_str("m.xml", &bad).unwrap_err();
    assert_eq!((e.line, e.column), position_of(&bad, "<rate>fast", 0));
}

#[test]
fn the_standard_mim_listed_explicitly_is_equivalent_to_the_built_in_one() {
    let standard = FomModule::parse_str("HLAstandardMIM.xml", STANDARD_MIM_XML).unwrap();
    let explicit = Fom::merge(&[standard]).unwrap_or_else(|e| panic!("{e}"));
    let built_in = mim();
    assert_eq!(explicit.object_classes, built_in.object_classes);
    assert_eq!(explicit.attributes, built_in.attributes);
    assert_eq!(explicit.interaction_classes, built_in.interaction_classes);
    assert_eq!(explicit.parameters, built_in.parameters);
    assert_eq!(explicit.dimensions, built_in.dimensions);
    assert_eq!(explicit.data_types, built_in.data_types);

    // A MIM that is not the standard's is not equivalent: the mistake the
    // built-in MIM once made (HLAinteractionRoot receive-ordered) is refused.
    let root = STANDARD_MIM_XML
        .find("<name>HLAinteractionRoot</name>")
        .unwrap();
    let order = root
        + STANDARD_MIM_XML[root..]
            .find("<order>TimeStamp</order>")
            .unwrap();
    let altered = format!(
        "{}<order>Receive</order>{}",
        &STANDARD_MIM_XML[..order],
        &STANDARD_MIM_XML[order + "<order>TimeStamp</order>".len()..]
    );
    let e = Fom::merge(&[FomModule::parse_str("altered.xml", &altered).unwrap()]).unwrap_err();
    let nth = altered[..order].matches("<order>Receive").count();
    assert_eq!(
        (e.line, e.column),
        position_of(&altered, "<order>Receive", nth)
    );
    assert_eq!(
        e.kind,
        FomErrorKind::InconsistentDefinition {
            what: "interaction class".into(),
            name: "HLAinteractionRoot".into(),
            detail: "order Receive here, TimeStamp before".into(),
            first: format!(
                "HLAstandardMIM (built in):{}:{}",
                position_of(STANDARD_MIM_XML, "<order>TimeStamp", 1).0,
                position_of(STANDARD_MIM_XML, "<order>TimeStamp", 1).1
            ),
        }
    );
}

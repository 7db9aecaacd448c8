//! What the IEEE 1516.2-2010 schemas make optional is accepted, and every value
//! constraint they state is enforced with an error at the offending element:
//! cardinalities, enumerator values, representations, discriminants and the
//! enumerators variant alternatives name. Also the two messages that used to
//! mislead: classes outside the root, and modules in the 1516-2000 format.

// Helpers return the crate's own `Result<Fom, FomError>`; the crate allows its
// size for the reason given in its lib.rs.
#![allow(clippy::result_large_err)]
mod support;

use glidepath_fom::{DataType, Fom, FomError, FomErrorKind, FomModule, VariantAlternative};
use support::{module, position_of};

/// A module with only data type tables.
fn types(tables: &str) -> String {
    module("", "", &format!("<dataTypes>\n{tables}\n</dataTypes>"))
}

fn merged(xml: &str) -> Result<Fom, FomError> {
    Fom::merge(&[FomModule::parse_str("m.xml", xml)?])
}

fn at(e: &FomError) -> (u32, u32) {
    (e.line, e.column)
}

const WAITER_TASKS: &str = "<enumeratedDataTypes><enumeratedData><name>Task</name>\
<representation>HLAinteger32BE</representation>\
<enumerator><name>Order</name><value>1</value></enumerator>\
<enumerator><name>Serve</name><value>2</value></enumerator>\
<enumerator><name>Clean</name><value>3</value></enumerator>\
<enumerator><name>Bill</name><value>4</value></enumerator>\
</enumeratedData></enumeratedDataTypes>";

fn variant(alternatives: &str) -> String {
    types(&format!(
        "{WAITER_TASKS}\n<variantRecordDataTypes><variantRecordData><name>Work</name>\
         <discriminant>task</discriminant><dataType>Task</dataType>\n{alternatives}\n\
         <encoding>HLAvariantRecord</encoding></variantRecordData></variantRecordDataTypes>"
    ))
}

fn array(cardinality: &str) -> String {
    types(&format!(
        "<arrayDataTypes><arrayData><name>A</name><dataType>HLAbyte</dataType>\
         <cardinality>{cardinality}</cardinality><encoding>HLAfixedArray</encoding>\
         </arrayData></arrayDataTypes>"
    ))
}

#[test]
fn array_cardinality_must_follow_the_schema_pattern() {
    for ok in ["Dynamic", "4", "[1..8]", "2,[1..4],Dynamic"] {
        merged(&array(ok)).unwrap_or_else(|e| panic!("{ok}: {e}"));
    }
    for bad in ["-6", "four", "1.5", "[4..]"] {
        let xml = array(bad);
        let e = FomModule::parse_str("m.xml", &xml).expect_err(bad);
        assert_eq!(
            at(&e),
            position_of(&xml, &format!("<cardinality>{bad}"), 0),
            "{bad}"
        );
        assert!(
            matches!(&e.kind, FomErrorKind::InvalidValue { element, value, .. }
                if element == "cardinality" && value == bad),
            "{e}"
        );
    }
}

#[test]
fn enumerator_values_must_be_integers() {
    let good = types(WAITER_TASKS);
    merged(&good).unwrap_or_else(|e| panic!("{e}"));
    let negative = good.replace("<value>4</value>", "<value>-4</value>");
    merged(&negative).unwrap_or_else(|e| panic!("{e}"));

    let bad = good.replace("<value>2</value>", "<value>two</value>");
    let e = FomModule::parse_str("m.xml", &bad).unwrap_err();
    assert_eq!(at(&e), position_of(&bad, "<value>two", 0));
    assert_eq!(
        e.kind,
        FomErrorKind::InvalidValue {
            element: "value".into(),
            value: "two".into(),
            expected: "an integer".into()
        }
    );
}

#[test]
fn simple_and_enumerated_representations_must_be_basic() {
    let simple = |representation: &str| {
        types(&format!(
            "<simpleDataTypes><simpleData><name>Speed</name>\
             <representation>{representation}</representation></simpleData></simpleDataTypes>"
        ))
    };
    merged(&simple("HLAfloat64BE")).unwrap_or_else(|e| panic!("{e}"));
    let xml = simple("HLAboolean");
    let e = merged(&xml).unwrap_err();
    assert_eq!(at(&e), position_of(&xml, "<representation>HLAboolean", 0));
    assert_eq!(
        e.kind,
        FomErrorKind::WrongDataTypeKind {
            name: "HLAboolean".into(),
            referenced_by: "simple data type Speed".into(),
            found: "an enumerated data type".into(),
            expected: "a basic data representation".into()
        }
    );

    // A representation may be a basic type from another module, named before it
    // is declared; only its kind matters.
    let enumeration = types(WAITER_TASKS).replace("HLAinteger32BE", "HLAhandleList");
    let e = merged(&enumeration).unwrap_err();
    assert!(
        matches!(&e.kind, FomErrorKind::WrongDataTypeKind { name, found, .. }
            if name == "HLAhandleList" && found == "an array data type"),
        "{e}"
    );
    assert_eq!(
        at(&e),
        position_of(&enumeration, "<representation>HLAhandleList", 0)
    );
}

#[test]
fn a_variant_discriminant_must_be_an_enumeration() {
    let xml = variant("<alternative><enumerator>Order</enumerator></alternative>").replace(
        "<dataType>Task</dataType>",
        "<dataType>HLAinteger32BE</dataType>",
    );
    let e = merged(&xml).unwrap_err();
    assert!(
        matches!(&e.kind, FomErrorKind::WrongDataTypeKind { name, expected, .. }
            if name == "HLAinteger32BE" && expected == "an enumerated data type"),
        "{e}"
    );
}

#[test]
fn alternatives_name_enumerators_of_the_discriminant() {
    // Names, lists, ranges and HLAother, as the restaurant example writes them.
    let good = variant(
        "<alternative><enumerator>Order</enumerator><name>table</name><dataType>HLAinteger32BE</dataType></alternative>\
         <alternative><enumerator>[Serve .. Clean], Bill</enumerator><name>minutes</name><dataType>HLAfloat32BE</dataType></alternative>\
         <alternative><enumerator>HLAother</enumerator><name>other</name><dataType>HLAtoken</dataType></alternative>",
    );
    merged(&good).unwrap_or_else(|e| panic!("{e}"));

    for (enumerators, missing) in [
        ("Wash", "Wash"),
        ("Order, Wash", "Wash"),
        ("[Serve .. Wash]", "Wash"),
    ] {
        let xml = variant(&format!(
            "<alternative><enumerator>{enumerators}</enumerator><name>x</name><dataType>HLAboolean</dataType></alternative>"
        ));
        let e = merged(&xml).unwrap_err();
        assert_eq!(
            e.kind,
            FomErrorKind::UnknownEnumerator {
                enumerator: missing.into(),
                enumeration: "Task".into(),
                referenced_by: "alternative x of variant record Work".into()
            },
            "{enumerators}"
        );
        assert_eq!(
            at(&e),
            position_of(&xml, &format!("<enumerator>{enumerators}"), 0)
        );
    }
}

#[test]
fn an_alternative_may_leave_out_its_name_and_data_type() {
    // IEEE1516-OMT-2010.xsd and the FDD/DIF schemas make both optional; an
    // alternative without a data type carries no value.
    let xml = variant(
        "<alternative><enumerator>Order</enumerator></alternative>\
         <alternative><enumerator>Serve</enumerator><name>minutes</name></alternative>\
         <alternative><enumerator>Clean</enumerator><name>none</name><dataType>NA</dataType></alternative>",
    );
    let fom = merged(&xml).unwrap_or_else(|e| panic!("{e}"));
    match fom.data_type("Work") {
        Some(DataType::VariantRecord { alternatives, .. }) => assert_eq!(
            alternatives[..2],
            [
                VariantAlternative {
                    enumerators: "Order".into(),
                    name: None,
                    data_type: None
                },
                VariantAlternative {
                    enumerators: "Serve".into(),
                    name: Some("minutes".into()),
                    data_type: None
                }
            ]
        ),
        other => panic!("{other:?}"),
    }
    // Present but empty is not left out.
    let empty =
        variant("<alternative><enumerator>Order</enumerator><dataType></dataType></alternative>");
    let e = FomModule::parse_str("m.xml", &empty).unwrap_err();
    assert_eq!(
        e.kind,
        FomErrorKind::EmptyElement {
            element: "dataType".into(),
            parent: "alternative".into()
        }
    );
}

#[test]
fn optional_dimension_bound_is_left_to_the_rti() {
    let xml = module(
        "",
        "",
        "<dimensions><dimension><name>D</name></dimension></dimensions>",
    );
    let fom = merged(&xml).unwrap_or_else(|e| panic!("{e}"));
    let d = fom.dimension_by_name("D").unwrap();
    assert_eq!(fom.dimensions[d.index()].upper_bound, 1 << 32);
}

#[test]
fn a_class_beside_the_root_is_named_as_outside_it() {
    // The file never names HLAobjectRoot twice: the message must not say it does.
    let xml = module("", "", "").replace(
        "    </objects>",
        "        <objectClass><name>Vehicle</name></objectClass>\n    </objects>",
    );
    let e = FomModule::parse_str("m.xml", &xml).unwrap_err();
    assert_eq!(
        e.kind,
        FomErrorKind::OutsideRoot {
            tag: "objectClass".into(),
            name: "Vehicle".into(),
            root: "HLAobjectRoot".into()
        }
    );
    assert_eq!(at(&e), position_of(&xml, "<name>Vehicle", 0));
    assert!(!e.to_string().contains("duplicate"), "{e}");

    let xml = module("", "", "").replace(
        "    </interactions>",
        "        <interactionClass><name>Ping</name></interactionClass>\n    </interactions>",
    );
    let e = FomModule::parse_str("m.xml", &xml).unwrap_err();
    assert!(
        matches!(&e.kind, FomErrorKind::OutsideRoot { name, root, .. }
            if name == "Ping" && root == "HLAinteractionRoot"),
        "{e}"
    );
}

#[test]
fn a_1516_2000_module_is_named_as_that_format() {
    let xml = r#"<?xml version="1.0"?>
<objectModel DTDversion="1516.2" name="Old" type="FOM" version="1.0">
  <objects>
    <objectClass name="HLAobjectRoot">
      <attribute name="HLAprivilegeToDeleteObject" dataType="HLAtoken" transportation="HLAreliable" order="TimeStamp"/>
    </objectClass>
  </objects>
</objectModel>
"#;
    let e = FomModule::parse_str("old.xml", xml).unwrap_err();
    assert_eq!(at(&e), position_of(xml, "<objectModel", 0));
    assert!(
        matches!(&e.kind, FomErrorKind::UnsupportedFormat { format, .. } if format.contains("1516-2000")),
        "{e}"
    );
    assert!(e.to_string().contains("1516-2010"), "{e}");
}

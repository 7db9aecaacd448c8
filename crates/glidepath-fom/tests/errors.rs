//! Bad modules are rejected with an error that names the right file, line and
//! column, and the right kind of fault.

mod support;

use glidepath_fom::{Fom, FomError, FomErrorKind, FomModule, OrderType, TransportationType};
use support::{attribute, foms_dir, module, position_of};

fn parse(name: &str, xml: &str) -> FomModule {
    FomModule::parse_str(name, xml).unwrap_or_else(|e| panic!("{e}"))
}

fn merge_err(modules: &[(&str, &str)]) -> FomError {
    let parsed: Vec<FomModule> = modules.iter().map(|(n, x)| parse(n, x)).collect();
    Fom::merge(&parsed).expect_err("merge should fail")
}

fn at(e: &FomError) -> (u32, u32) {
    (e.line, e.column)
}

#[test]
fn truncated_module_reports_the_end_of_the_file() {
    let full = std::fs::read_to_string(foms_dir().join("air-traffic.xml")).unwrap();
    // Cut right after an element has been opened, as a failed copy would.
    let cut = full.find("<name>FlightPlan</name>").unwrap() + "<name>FlightPlan</name>\n".len();
    let truncated = &full[..cut];
    let e = FomModule::parse_str("air-traffic-truncated.xml", truncated).unwrap_err();
    assert_eq!(e.file, "air-traffic-truncated.xml");
    assert!(
        matches!(&e.kind, FomErrorKind::Xml { message } if message.contains("<objectClass>")),
        "{e}"
    );
    let last_line = truncated.lines().count() as u32 + 1;
    assert_eq!(at(&e), (last_line, 1));
}

#[test]
fn module_cut_inside_a_tag_points_at_that_tag() {
    let full = std::fs::read_to_string(foms_dir().join("benchmark.xml")).unwrap();
    let tag = full.find("<dataType>HLAinteger64BE").unwrap();
    let truncated = &full[..tag + "<dataTy".len()];
    let e = FomModule::parse_str("benchmark.xml", truncated).unwrap_err();
    assert!(matches!(e.kind, FomErrorKind::Xml { .. }), "{e}");
    assert_eq!(
        at(&e),
        position_of(
            truncated,
            "<dataTy",
            truncated.matches("<dataTy").count() - 1
        )
    );
}

#[test]
fn mismatched_end_tag_is_an_xml_error_with_position() {
    let xml = module(
        "            <objectClass><name>A</name></attribute>",
        "",
        "",
    );
    let e = FomModule::parse_str("bad.xml", &xml).unwrap_err();
    assert!(matches!(e.kind, FomErrorKind::Xml { .. }), "{e}");
    assert_eq!(e.line, position_of(&xml, "</attribute>", 0).0);
}

#[test]
fn attribute_declared_differently_in_two_modules_is_inconsistent() {
    let a = module(
        &format!(
            "<objectClass><name>Aircraft</name>\n{}\n</objectClass>",
            attribute("altitude", "HLAfloat64BE", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    let b = module(
        &format!(
            "<objectClass><name>Aircraft</name>\n{}\n</objectClass>",
            attribute("altitude", "HLAinteger32BE", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    let e = merge_err(&[("a.xml", &a), ("b.xml", &b)]);
    assert_eq!(e.file, "b.xml");
    assert_eq!(at(&e), position_of(&b, "<dataType>HLAinteger32BE", 0));
    match &e.kind {
        FomErrorKind::InconsistentAttribute {
            class,
            attribute,
            detail,
            first,
        } => {
            assert_eq!(class, "HLAobjectRoot.Aircraft");
            assert_eq!(attribute, "altitude");
            assert!(
                detail.contains("HLAinteger32BE") && detail.contains("HLAfloat64BE"),
                "{detail}"
            );
            let (line, column) = position_of(&a, "<attribute>", 0);
            assert_eq!(first, &format!("a.xml:{line}:{column}"));
        }
        other => panic!("{other:?}"),
    }
    assert!(
        e.to_string().starts_with(&format!(
            "b.xml:{}:{}: attribute `altitude`",
            e.line, e.column
        )),
        "{e}"
    );
}

#[test]
fn attribute_redeclared_identically_or_by_name_only_is_accepted() {
    let a = module(
        &format!(
            "<objectClass><name>Aircraft</name>\n{}\n</objectClass>",
            attribute("altitude", "HLAfloat64BE", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    let name_only = module("<objectClass><name>Aircraft</name><attribute><name>altitude</name></attribute></objectClass>", "", "");
    let fom = Fom::merge(&[
        parse("a.xml", &a),
        parse("b.xml", &a),
        parse("c.xml", &name_only),
    ])
    .unwrap();
    let mim = Fom::merge(&[]).unwrap();
    assert_eq!(fom.attributes.len(), mim.attributes.len() + 1);
}

#[test]
fn transportation_or_order_differences_are_inconsistent_too() {
    let a = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n</objectClass>",
            attribute("x", "HLAfloat64BE", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    let b = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n</objectClass>",
            attribute("x", "HLAfloat64BE", "HLAbestEffort", "Receive")
        ),
        "",
        "",
    );
    let e = merge_err(&[("a.xml", &a), ("b.xml", &b)]);
    assert!(
        matches!(&e.kind, FomErrorKind::InconsistentAttribute { detail, .. } if detail.contains("transportation")),
        "{e}"
    );
    assert_eq!(at(&e), position_of(&b, "<transportation>", 0));

    let c = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n</objectClass>",
            attribute("x", "HLAfloat64BE", "HLAreliable", "TimeStamp")
        ),
        "",
        "",
    );
    let e = merge_err(&[("a.xml", &a), ("c.xml", &c)]);
    assert!(
        matches!(&e.kind, FomErrorKind::InconsistentAttribute { detail, .. } if detail.contains("order")),
        "{e}"
    );
    assert_eq!(
        (e.file.as_str(), at(&e)),
        ("c.xml", position_of(&c, "<order>", 0))
    );
}

#[test]
fn redeclaring_the_mim_attribute_differently_names_the_mim() {
    let xml = module("", "", "").replace(
        "<name>HLAobjectRoot</name>",
        &format!(
            "<name>HLAobjectRoot</name>\n{}",
            attribute(
                "HLAprivilegeToDeleteObject",
                "HLAtoken",
                "HLAreliable",
                "Receive"
            )
        ),
    );
    let e = merge_err(&[("m.xml", &xml)]);
    match &e.kind {
        FomErrorKind::InconsistentAttribute { first, .. } => {
            assert!(first.contains("HLAstandardMIM"), "{first}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn unknown_data_type_is_reported_where_it_is_named() {
    let xml = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n</objectClass>",
            attribute("x", "NoSuchType", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    let e = merge_err(&[("types.xml", &xml)]);
    assert_eq!(e.file, "types.xml");
    assert_eq!(at(&e), position_of(&xml, "<dataType>NoSuchType", 0));
    assert_eq!(
        e.kind,
        FomErrorKind::UnknownDataType {
            name: "NoSuchType".into(),
            referenced_by: "attribute HLAobjectRoot.A.x".into()
        }
    );
}

#[test]
fn unknown_data_types_inside_data_types_are_reported() {
    let record = module(
        "",
        "",
        r#"    <dataTypes>
        <fixedRecordDataTypes>
            <fixedRecordData>
                <name>R</name>
                <encoding>HLAfixedRecord</encoding>
                <field><name>a</name><dataType>HLAinteger32BE</dataType></field>
                <field><name>b</name><dataType>Missing</dataType></field>
            </fixedRecordData>
        </fixedRecordDataTypes>
    </dataTypes>"#,
    );
    let e = merge_err(&[("record.xml", &record)]);
    assert_eq!(at(&e), position_of(&record, "<dataType>Missing", 0));
    assert!(
        matches!(&e.kind, FomErrorKind::UnknownDataType { referenced_by, .. } if referenced_by == "field b of fixed record R")
    );

    let array = module(
        "",
        "",
        r#"    <dataTypes><arrayDataTypes><arrayData>
        <name>Arr</name><dataType>Element</dataType><cardinality>Dynamic</cardinality><encoding>HLAvariableArray</encoding>
    </arrayData></arrayDataTypes></dataTypes>"#,
    );
    let e = merge_err(&[("array.xml", &array)]);
    assert!(
        matches!(&e.kind, FomErrorKind::UnknownDataType { name, .. } if name == "Element"),
        "{e}"
    );
    assert_eq!(at(&e), position_of(&array, "<dataType>Element", 0));
}

#[test]
fn parameter_with_unknown_data_type() {
    let xml = module(
        "",
        "<interactionClass><name>I</name><transportation>HLAreliable</transportation><order>Receive</order>\n<parameter><name>p</name><dataType>Nope</dataType></parameter></interactionClass>",
        "",
    );
    let e = merge_err(&[("p.xml", &xml)]);
    assert!(
        matches!(&e.kind, FomErrorKind::UnknownDataType { referenced_by, .. } if referenced_by == "parameter HLAinteractionRoot.I.p")
    );
    assert_eq!(at(&e), position_of(&xml, "<dataType>Nope", 0));
}

#[test]
fn duplicate_attribute_in_one_class_is_rejected_at_parse() {
    let xml = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n{}\n</objectClass>",
            attribute("x", "HLAfloat64BE", "HLAreliable", "Receive"),
            attribute("x", "HLAfloat64BE", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    let e = FomModule::parse_str("dup.xml", &xml).unwrap_err();
    assert!(
        matches!(&e.kind, FomErrorKind::DuplicateName { what, .. } if what == "attribute"),
        "{e}"
    );
    assert_eq!(at(&e), position_of(&xml, "<attribute>", 1));
}

#[test]
fn attribute_repeating_an_inherited_name_is_a_duplicate() {
    let xml = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n<objectClass><name>B</name>\n{}\n</objectClass></objectClass>",
            attribute("x", "HLAfloat64BE", "HLAreliable", "Receive"),
            attribute("x", "HLAfloat64BE", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    let e = merge_err(&[("inherit.xml", &xml)]);
    match &e.kind {
        FomErrorKind::DuplicateName { what, name, first } => {
            assert_eq!(what, "attribute");
            assert!(
                name.contains("HLAobjectRoot.A.B.x") && name.contains("HLAobjectRoot.A"),
                "{name}"
            );
            let (line, column) = position_of(&xml, "<attribute>", 0);
            assert_eq!(first, &format!("inherit.xml:{line}:{column}"));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(at(&e), position_of(&xml, "<attribute>", 1));
}

#[test]
fn attribute_added_by_a_later_module_to_an_existing_class_is_refused() {
    let child = module(
        &format!("<objectClass><name>A</name><objectClass><name>B</name>\n{}\n</objectClass></objectClass>", attribute("x", "HLAfloat64BE", "HLAreliable", "Receive")),
        "",
        "",
    );
    let parent = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n</objectClass>",
            attribute("x", "HLAfloat64BE", "HLAreliable", "Receive")
        ),
        "",
        "",
    );
    // child.xml declares A first, without attributes (scaffolding above B); in
    // 1516-2010 a later module cannot add attributes to it.
    let e = merge_err(&[("child.xml", &child), ("parent.xml", &parent)]);
    assert_eq!(e.file, "parent.xml");
    assert_eq!(at(&e), position_of(&parent, "<objectClass><name>A", 0));
    assert!(
        matches!(&e.kind, FomErrorKind::InconsistentDefinition { what, name, first, .. }
            if what == "object class" && name == "HLAobjectRoot.A" && first.starts_with("child.xml:")),
        "{e}"
    );
    assert!(
        e.to_string().contains("attributes [x] here, [] before"),
        "{e}"
    );
}

#[test]
fn duplicate_sibling_classes_in_one_module() {
    let xml = module(
        "<objectClass><name>A</name></objectClass>\n<objectClass><name>A</name></objectClass>",
        "",
        "",
    );
    let e = FomModule::parse_str("siblings.xml", &xml).unwrap_err();
    assert!(
        matches!(&e.kind, FomErrorKind::DuplicateName { what, .. } if what == "object class"),
        "{e}"
    );
    assert_eq!(at(&e), position_of(&xml, "<objectClass><name>A", 1));
}

#[test]
fn bad_order_value() {
    let xml = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n</objectClass>",
            attribute("x", "HLAfloat64BE", "HLAreliable", "Timestamp")
        ),
        "",
        "",
    );
    let e = FomModule::parse_str("order.xml", &xml).unwrap_err();
    assert_eq!(at(&e), position_of(&xml, "<order>Timestamp", 0));
    assert_eq!(
        e.kind,
        FomErrorKind::InvalidValue {
            element: "order".into(),
            value: "Timestamp".into(),
            expected: "Receive or TimeStamp".into()
        }
    );
    assert_eq!(
        e.to_string(),
        format!(
            "order.xml:{}:{}: invalid <order> value `Timestamp`: expected Receive or TimeStamp",
            e.line, e.column
        )
    );
}

#[test]
fn missing_name() {
    let xml = module(
        "<objectClass><sharing>Publish</sharing></objectClass>",
        "",
        "",
    );
    let e = FomModule::parse_str("noname.xml", &xml).unwrap_err();
    assert_eq!(
        e.kind,
        FomErrorKind::MissingElement {
            element: "name".into(),
            parent: "objectClass".into()
        }
    );
    assert_eq!(at(&e), position_of(&xml, "<objectClass><sharing>", 0));
}

#[test]
fn data_type_may_be_left_out_but_not_left_empty() {
    // The 1516-2010 schemas make <dataType> optional on attributes, parameters
    // and dimensions.
    let without = module(
        "<objectClass><name>A</name><attribute><name>x</name><transportation>HLAreliable</transportation><order>Receive</order></attribute></objectClass>",
        "<interactionClass><name>I</name><transportation>HLAreliable</transportation><order>Receive</order><parameter><name>p</name></parameter></interactionClass>",
        "<dimensions><dimension><name>D</name><upperBound>10</upperBound></dimension></dimensions>",
    );
    let fom = Fom::merge(&[parse("m.xml", &without)]).unwrap_or_else(|e| panic!("{e}"));
    let a = fom.object_class_by_name("A").unwrap();
    let x = fom
        .attribute(fom.attribute_by_name(a, "x").unwrap())
        .unwrap();
    assert_eq!(x.data_type, None);
    let i = fom.interaction_class_by_name("I").unwrap();
    let p = fom
        .parameter(fom.parameter_by_name(i, "p").unwrap())
        .unwrap();
    assert_eq!(p.data_type, None);
    let d = fom.dimension_by_name("D").unwrap();
    assert_eq!(fom.dimensions[d.index()].data_type, None);

    // An empty element is not leaving it out: a reference must name something.
    let empty = without.replace("<name>x</name>", "<name>x</name><dataType> </dataType>");
    let e = FomModule::parse_str("e.xml", &empty).unwrap_err();
    assert_eq!(
        e.kind,
        FomErrorKind::EmptyElement {
            element: "dataType".into(),
            parent: "attribute".into()
        }
    );
    assert_eq!(at(&e), position_of(&empty, "<dataType> </dataType>", 0));
}

#[test]
fn attribute_without_transportation_or_order_takes_the_defaults() {
    // The DIF schema, which modules declare, makes both optional.
    let xml = module(
        "<objectClass><name>A</name><attribute><name>x</name></attribute></objectClass>",
        "",
        "",
    );
    let fom = Fom::merge(&[parse("m.xml", &xml)]).unwrap_or_else(|e| panic!("{e}"));
    let a = fom.object_class_by_name("A").unwrap();
    let x = fom
        .attribute(fom.attribute_by_name(a, "x").unwrap())
        .unwrap();
    assert_eq!(
        (x.transportation, x.order),
        (TransportationType::Reliable, OrderType::Receive)
    );
}

#[test]
fn unknown_dimension() {
    let xml = module(
        "<objectClass><name>A</name><attribute><name>x</name><dataType>HLAinteger32BE</dataType>\n<dimensions><dimension>Nowhere</dimension></dimensions><transportation>HLAreliable</transportation><order>Receive</order></attribute></objectClass>",
        "",
        "",
    );
    let e = merge_err(&[("dims.xml", &xml)]);
    assert!(
        matches!(&e.kind, FomErrorKind::UnknownDimension { name, .. } if name == "Nowhere"),
        "{e}"
    );
    assert_eq!(at(&e), position_of(&xml, "<dimension>Nowhere", 0));
}

#[test]
fn transportations_from_a_table_map_by_reliability() {
    let table = r#"    <transportations>
        <transportation><name>LowLatency</name><reliable>No</reliable></transportation>
        <transportation><name>Ordered</name><reliable>Yes</reliable></transportation>
        <transportation><name>Vague</name></transportation>
    </transportations>"#;
    let ok = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n{}\n</objectClass>",
            attribute("fast", "HLAfloat64BE", "LowLatency", "Receive"),
            attribute("safe", "HLAfloat64BE", "Ordered", "TimeStamp")
        ),
        "",
        table,
    );
    let fom = Fom::merge(&[parse("t.xml", &ok)]).unwrap();
    let a = fom.object_class_by_name("A").unwrap();
    let mode = |n: &str| {
        let attr = fom.attribute(fom.attribute_by_name(a, n).unwrap()).unwrap();
        (attr.transportation, attr.order)
    };
    assert_eq!(
        mode("fast"),
        (TransportationType::BestEffort, OrderType::Receive)
    );
    assert_eq!(
        mode("safe"),
        (TransportationType::Reliable, OrderType::TimeStamp)
    );

    let vague = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n</objectClass>",
            attribute("x", "HLAfloat64BE", "Vague", "Receive")
        ),
        "",
        table,
    );
    let e = merge_err(&[("v.xml", &vague)]);
    assert!(
        matches!(&e.kind, FomErrorKind::InvalidValue { element, .. } if element == "transportation"),
        "{e}"
    );
    assert_eq!(at(&e), position_of(&vague, "<transportation>Vague", 0));

    let unknown = module(
        &format!(
            "<objectClass><name>A</name>\n{}\n</objectClass>",
            attribute("x", "HLAfloat64BE", "Carrier", "Receive")
        ),
        "",
        "",
    );
    let e = merge_err(&[("u.xml", &unknown)]);
    assert_eq!(
        e.kind,
        FomErrorKind::UnknownTransportation {
            name: "Carrier".into()
        }
    );
}

#[test]
fn data_types_with_the_same_name_must_match() {
    let types = |size: u32| {
        module(
            "",
            "",
            &format!(
                "    <dataTypes><basicDataRepresentations><basicData><name>U16</name><size>{size}</size><endian>Big</endian></basicData></basicDataRepresentations></dataTypes>"
            ),
        )
    };
    let (a, b) = (types(16), types(32));
    Fom::merge(&[parse("a.xml", &a), parse("a2.xml", &a)]).unwrap();
    let e = merge_err(&[("a.xml", &a), ("b.xml", &b)]);
    assert_eq!(e.file, "b.xml");
    assert!(
        matches!(&e.kind, FomErrorKind::InconsistentDefinition { what, name, .. } if what == "data type" && name == "U16"),
        "{e}"
    );
    assert_eq!(at(&e), position_of(&b, "<basicData>", 0));
}

#[test]
fn interaction_scaffolding_inherits_and_conflicts_are_caught() {
    let base = module(
        "",
        "<interactionClass><name>Msg</name><transportation>HLAbestEffort</transportation><order>TimeStamp</order></interactionClass>",
        "",
    );
    let extension = module(
        "",
        "<interactionClass><name>Msg</name><interactionClass><name>Chat</name><parameter><name>text</name><dataType>HLAunicodeString</dataType></parameter></interactionClass></interactionClass>",
        "",
    );
    let fom = Fom::merge(&[parse("base.xml", &base), parse("ext.xml", &extension)]).unwrap();
    let chat = fom
        .interaction_class(fom.interaction_class_by_name("Msg.Chat").unwrap())
        .unwrap();
    assert_eq!(
        (chat.transportation, chat.order),
        (TransportationType::BestEffort, OrderType::TimeStamp)
    );

    let conflicting = module(
        "",
        "<interactionClass><name>Msg</name><transportation>HLAbestEffort</transportation><order>Receive</order></interactionClass>",
        "",
    );
    let e = merge_err(&[("base.xml", &base), ("conflict.xml", &conflicting)]);
    assert_eq!(e.file, "conflict.xml");
    assert!(
        matches!(&e.kind, FomErrorKind::InconsistentDefinition { what, .. } if what == "interaction class"),
        "{e}"
    );
    assert_eq!(at(&e), position_of(&conflicting, "<order>Receive", 0));
}

#[test]
fn wrong_root_element_and_wrong_class_root() {
    let e = FomModule::parse_str("x.xml", "<?xml version=\"1.0\"?>\n<foo/>").unwrap_err();
    assert_eq!(
        e.kind,
        FomErrorKind::UnexpectedElement {
            expected: "objectModel".into(),
            found: "foo".into()
        }
    );
    assert_eq!(at(&e), (2, 1));

    let xml = module("", "", "").replace("<name>HLAobjectRoot</name>", "<name>ObjectRoot</name>");
    let e = FomModule::parse_str("root.xml", &xml).unwrap_err();
    assert_eq!(
        e.kind,
        FomErrorKind::OutsideRoot {
            tag: "objectClass".into(),
            name: "ObjectRoot".into(),
            root: "HLAobjectRoot".into()
        }
    );
    assert_eq!(at(&e), position_of(&xml, "<name>ObjectRoot", 0));
}

#[test]
fn older_attribute_layout_and_notes_are_accepted() {
    let xml = r#"<?xml version="1.0"?>
<objectModel name="legacy">
  <objects>
    <objectClass name="HLAobjectRoot">
      <objectClass name="Vehicle" sharing="PublishSubscribe">
        <attribute name="speed" dataType="HLAfloat64BE" transportation="HLAbestEffort" order="Receive" dimensions="NA"/>
      </objectClass>
    </objectClass>
  </objects>
  <interactions>
    <interactionClass name="HLAinteractionRoot">
      <interactionClass transportation="HLAreliable" order="TimeStamp">
        <name notes="n1">Horn</name>
        <parameter name="volume" dataType="HLAinteger32BE"/>
      </interactionClass>
    </interactionClass>
  </interactions>
</objectModel>"#;
    let fom = Fom::merge(&[parse("legacy.xml", xml)]).unwrap();
    let vehicle = fom.object_class_by_name("Vehicle").unwrap();
    let speed = fom
        .attribute(fom.attribute_by_name(vehicle, "speed").unwrap())
        .unwrap();
    assert_eq!(speed.transportation, TransportationType::BestEffort);
    assert!(speed.dimensions.is_empty());
    let horn = fom
        .interaction_class(fom.interaction_class_by_name("Horn").unwrap())
        .unwrap();
    assert_eq!(horn.order, OrderType::TimeStamp);
    assert_eq!(horn.all_parameters.len(), 1);
}

#[test]
fn missing_file_is_an_io_error_naming_the_path() {
    let path = foms_dir().join("does-not-exist.xml");
    let e = Fom::load_files(std::slice::from_ref(&path)).unwrap_err();
    assert_eq!(e.file, path.display().to_string());
    assert!(
        matches!(
            e.kind,
            FomErrorKind::Io {
                kind: std::io::ErrorKind::NotFound,
                ..
            }
        ),
        "{e}"
    );
    assert_eq!(e.line, 0);
    assert!(
        e.to_string()
            .starts_with(&format!("{}: cannot read FOM module", path.display())),
        "{e}"
    );
}

#[test]
fn every_prefix_of_a_module_fails_cleanly_with_a_position_inside_it() {
    // A cut at any point must give an error (never a panic, never a silently
    // smaller FOM) that points somewhere within the text that was read.
    let full = std::fs::read_to_string(foms_dir().join("benchmark.xml")).unwrap();
    let end_of_root = full.rfind("</objectModel>").unwrap();
    for cut in (0..end_of_root).filter(|i| full.is_char_boundary(*i)) {
        let prefix = &full[..cut];
        let e =
            FomModule::parse_str("prefix.xml", prefix).expect_err("a cut module must not parse");
        let lines = prefix.split('\n').count() as u32;
        assert!(e.line >= 1 && e.line <= lines, "cut at {cut}: {e}");
    }
}

#[test]
fn a_dimension_value_is_excluded_a_range_or_one_value_within_the_bound() {
    let with = |value: &str| {
        module(
            "",
            "",
            &format!("<dimensions><dimension><name>D</name><upperBound>10</upperBound><normalization>linear (x, 0, 10)</normalization><value>{value}</value></dimension></dimensions>"),
        )
    };
    for (value, expected) in [
        ("Excluded", glidepath_fom::DefaultRange::Excluded),
        (
            "[2..7)",
            glidepath_fom::DefaultRange::Range { lower: 2, upper: 7 },
        ),
        (
            "[ 0 .. 10 )",
            glidepath_fom::DefaultRange::Range {
                lower: 0,
                upper: 10,
            },
        ),
        (
            "[4)",
            glidepath_fom::DefaultRange::Range { lower: 4, upper: 5 },
        ),
    ] {
        let fom = Fom::merge(&[parse("m.xml", &with(value))]).unwrap_or_else(|e| panic!("{e}"));
        let d = &fom.dimensions[fom.dimension_by_name("D").unwrap().index()];
        assert_eq!(d.default_range, expected, "{value}");
        assert_eq!(d.normalization.as_deref(), Some("linear (x, 0, 10)"));
    }
    for value in ["[7..2)", "[0..11)", "[10)", "0..3", "[a..b)", "Included"] {
        let e = FomModule::parse_str("m.xml", &with(value)).unwrap_err();
        assert!(
            matches!(&e.kind, FomErrorKind::InvalidValue { element, .. } if element == "value"),
            "{value}: {e}"
        );
    }
    // No value: excluded.
    let fom = Fom::merge(&[parse(
        "m.xml",
        &module("", "", "<dimensions><dimension><name>D</name><upperBound>10</upperBound></dimension></dimensions>"),
    )])
    .unwrap();
    assert_eq!(
        fom.dimensions[fom.dimension_by_name("D").unwrap().index()].default_range,
        glidepath_fom::DefaultRange::Excluded
    );
}

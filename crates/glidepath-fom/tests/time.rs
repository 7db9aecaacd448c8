//! The time representation comes from the modules' `<time>` sections: float unless a
//! module names `HLAinteger64Time`; modules must agree; a module's own time type
//! must be declared and selects nothing; an undeclared one is refused where it is
//! written.

mod support;

use glidepath_fom::{Fom, FomErrorKind, FomModule, TimeRepresentation};
use support::{foms_dir, position_of};

fn with_time(time_stamp: &str, lookahead: &str) -> String {
    format!(
        r#"<?xml version="1.0" encoding="UTF-8"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
    <modelIdentification>
        <name>time</name>
        <type>FOM</type>
    </modelIdentification>
    <time>
        <timeStamp>
            <dataType>{time_stamp}</dataType>
        </timeStamp>
        <lookahead>
            <dataType>{lookahead}</dataType>
        </lookahead>
    </time>
</objectModel>
"#
    )
}

fn load(paths: &[&str]) -> Fom {
    let paths: Vec<_> = paths.iter().map(|p| foms_dir().join(p)).collect();
    Fom::load_files(&paths).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_federation_without_a_time_section_counts_in_floats() {
    assert_eq!(
        load(&["air-traffic.xml"]).time_representation,
        TimeRepresentation::Float64
    );
}

#[test]
fn the_integer_time_module_makes_a_federation_count_in_integers() {
    let fom = load(&["air-traffic.xml", "integer-time.xml"]);
    assert_eq!(fom.time_representation, TimeRepresentation::Integer64);
    // The order of modules does not matter for the representation.
    let fom = load(&["integer-time.xml", "benchmark.xml"]);
    assert_eq!(fom.time_representation, TimeRepresentation::Integer64);
}

#[test]
fn modules_that_disagree_are_refused_with_both_places() {
    let float = with_time("HLAfloat64Time", "HLAfloat64Interval");
    let integer = with_time("HLAinteger64Time", "HLAinteger64Interval");
    let modules = [
        FomModule::parse_str("float.xml", &float).unwrap(),
        FomModule::parse_str("integer.xml", &integer).unwrap(),
    ];
    let e = Fom::merge(&modules).expect_err("float and integer time cannot be merged");
    assert_eq!(e.file, "integer.xml");
    assert_eq!(
        (e.line, e.column),
        position_of(&integer, "<dataType>HLAinteger64Time", 0)
    );
    match &e.kind {
        FomErrorKind::InconsistentDefinition { what, first, .. } => {
            assert_eq!(what, "time representation");
            assert!(first.starts_with("float.xml:"), "{first}");
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn a_lookahead_of_the_other_representation_is_refused() {
    let mixed = with_time("HLAinteger64Time", "HLAfloat64Interval");
    let module = FomModule::parse_str("mixed.xml", &mixed).unwrap();
    let e = Fom::merge(&[module]).expect_err("integer time with float lookahead");
    assert_eq!(
        (e.line, e.column),
        position_of(&mixed, "<dataType>HLAfloat64Interval", 0)
    );
}

#[test]
fn an_undeclared_time_type_is_named_where_it_is_written() {
    let odd = with_time("HLAfloat32Time", "HLAfloat64Interval");
    let module = FomModule::parse_str("odd.xml", &odd).unwrap_or_else(|e| panic!("{e}"));
    let e = Fom::merge(&[module]).expect_err("no such data type");
    assert_eq!(
        (e.line, e.column),
        position_of(&odd, "<dataType>HLAfloat32Time", 0)
    );
    assert!(
        matches!(&e.kind, FomErrorKind::UnknownDataType { name, referenced_by }
            if name == "HLAfloat32Time" && referenced_by == "the <time> section"),
        "{e}"
    );
}

#[test]
fn a_time_type_of_the_modules_own_is_accepted_and_selects_no_representation() {
    // The 1516.2 restaurant example names its own TimeType (minutes as a float32):
    // a declared data type is accepted; glidepath keeps its own float time.
    let own = with_time("HLAfloat64BE", "HLAfloat64BE");
    let fom = Fom::merge(&[FomModule::parse_str("own.xml", &own).unwrap()])
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(fom.time_representation, TimeRepresentation::Float64);
}

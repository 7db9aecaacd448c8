//! Portico's FOM parser tests (`Hla1516eFomParserTest.java`, `CreateFederationTest.java`):
//! one module per malformed data type, each of which Portico expects to be
//! rejected, the modules it expects to load, and the MIM extensions it expects
//! to keep out of the FOM. Here each rejection must also be for the fault the
//! file's name announces, at a position in that file.
//!
//! Two files differ on purpose: Portico rejects a variant record alternative
//! without `<name>` or without `<dataType>`, which the 1516.2-2010 schemas make
//! optional (and the standard's restaurant example relies on); glidepath
//! accepts both.

use std::path::PathBuf;

use glidepath_fom::{Fom, FomErrorKind, FomModule};

use crate::support::third_party;

/// What a Portico test module should do.
#[derive(Clone, Copy, Debug)]
enum Expect {
    /// Loads (the two schema-optional alternative properties).
    Accepted,
    /// `<parent> has no <element>`.
    Missing(&'static str),
    /// `<parent> has an empty <element>`.
    Empty(&'static str),
    /// An `<element>` value outside what the schema allows.
    Invalid(&'static str),
    /// Names a data type no module declares.
    UnknownType(&'static str),
    /// A variant alternative names an enumerator its discriminant lacks.
    UnknownEnumerator(&'static str),
    /// A representation that is not a basic data representation.
    NotBasic,
}

use Expect::*;

const DATA_TYPE_MODULES: [(&str, Expect); 52] = [
    ("arrayCardinalityEmpty.xml", Empty("cardinality")),
    ("arrayCardinalityMissing.xml", Missing("cardinality")),
    ("arrayCardinalityNegative.xml", Invalid("cardinality")),
    ("arrayCardinalityNonNumeric.xml", Invalid("cardinality")),
    ("arrayDatatypeDoesntExist.xml", UnknownType("DoesNotExist")),
    ("arrayDatatypeEmpty.xml", Empty("dataType")),
    ("arrayDatatypeMissing.xml", Missing("dataType")),
    ("arrayNameEmpty.xml", Empty("name")),
    ("arrayNameMissing.xml", Missing("name")),
    ("basicNameEmpty.xml", Empty("name")),
    ("basicNameMissing.xml", Missing("name")),
    ("basicSizeEmpty.xml", Empty("size")),
    ("basicSizeMissing.xml", Missing("size")),
    ("basicSizeNegative.xml", Invalid("size")),
    ("basicSizeNonNumeric.xml", Invalid("size")),
    ("enumeratedEnumeratorNameEmpty.xml", Empty("name")),
    ("enumeratedEnumeratorNameMissing.xml", Missing("name")),
    ("enumeratedEnumeratorValueEmpty.xml", Empty("value")),
    ("enumeratedEnumeratorValueMissing.xml", Missing("value")),
    ("enumeratedEnumeratorValueNonNumeric.xml", Invalid("value")),
    ("enumeratedNameEmpty.xml", Empty("name")),
    ("enumeratedNameMissing.xml", Missing("name")),
    ("enumeratedNoEnumerators.xml", Missing("enumerator")),
    (
        "enumeratedRepresentationDoesntExist.xml",
        UnknownType("DoesNotExist"),
    ),
    ("enumeratedRepresentationEmpty.xml", Empty("representation")),
    (
        "enumeratedRepresentationMissing.xml",
        Missing("representation"),
    ),
    ("enumeratedRepresentationNotABasicType.xml", NotBasic),
    (
        "fixedRecordFieldDatatypeDoesntExist.xml",
        UnknownType("DoesNotExist"),
    ),
    ("fixedRecordFieldDatatypeEmpty.xml", Empty("dataType")),
    ("fixedRecordFieldDatatypeMissing.xml", Missing("dataType")),
    ("fixedRecordFieldNameEmpty.xml", Empty("name")),
    ("fixedRecordFieldNameMissing.xml", Missing("name")),
    ("fixedRecordNameEmpty.xml", Empty("name")),
    ("fixedRecordNameMissing.xml", Missing("name")),
    ("simpleNameEmpty.xml", Empty("name")),
    ("simpleNameMissing.xml", Missing("name")),
    (
        "simpleRepresentationDoesntExist.xml",
        UnknownType("NotMyType"),
    ),
    ("simpleRepresentationEmpty.xml", Empty("representation")),
    ("simpleRepresentationMissing.xml", Missing("representation")),
    ("simpleRepresentationNotABasicType.xml", NotBasic),
    (
        "variantRecordAlternativeDatatypeDoesntExist.xml",
        UnknownType("DoesNotExist"),
    ),
    (
        "variantRecordAlternativeDatatypeEmpty.xml",
        Empty("dataType"),
    ),
    ("variantRecordAlternativeDatatypeMissing.xml", Accepted),
    (
        "variantRecordAlternativeEnumeratorDoesntExist.xml",
        UnknownEnumerator("DoesNotExist"),
    ),
    (
        "variantRecordAlternativeEnumeratorEmpty.xml",
        Empty("enumerator"),
    ),
    (
        "variantRecordAlternativeEnumeratorMissing.xml",
        Missing("enumerator"),
    ),
    ("variantRecordAlternativeNameEmpty.xml", Empty("name")),
    ("variantRecordAlternativeNameMissing.xml", Accepted),
    // Portico's valid modules: the data type catalogue and the module set its
    // "no interactions" and "no objects" tests merge.
    ("datatypes.xml", Accepted),
    ("testfomModule.xml", Accepted),
    ("testfomModuleNoInteractions.xml", Accepted),
    ("testfomModuleNoObjects.xml", Accepted),
];

/// The variant record test modules use `WaiterTasks` and `DynamicArray`, which
/// only Portico's `datatypes.xml` declares (and that file also declares the
/// variant record they redefine). This module restates the two, as that file
/// defines them, so that each variant module fails only for its own fault.
const VARIANT_CONTEXT: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<objectModel xmlns="http://standards.ieee.org/IEEE1516-2010">
  <modelIdentification><name>variant context</name></modelIdentification>
  <dataTypes>
    <enumeratedDataTypes>
      <enumeratedData>
        <name>WaiterTasks</name>
        <representation>HLAinteger32BE</representation>
        <enumerator><name>TakingOrder</name><value>1</value></enumerator>
        <enumerator><name>Serving</name><value>2</value></enumerator>
        <enumerator><name>Cleaning</name><value>3</value></enumerator>
        <enumerator><name>CalculatingBill</name><value>4</value></enumerator>
        <enumerator><name>Other</name><value>5</value></enumerator>
      </enumeratedData>
    </enumeratedDataTypes>
    <arrayDataTypes>
      <arrayData>
        <name>DynamicArray</name>
        <dataType>HLAunicodeChar</dataType>
        <cardinality>Dynamic</cardinality>
        <encoding>HLAvariableArray</encoding>
      </arrayData>
    </arrayDataTypes>
  </dataTypes>
</objectModel>
"#;

fn path(name: &str) -> PathBuf {
    third_party(&format!("portico/{name}"))
}

fn matches(expect: Expect, kind: &FomErrorKind) -> bool {
    match (expect, kind) {
        (Missing(want), FomErrorKind::MissingElement { element, .. })
        | (Empty(want), FomErrorKind::EmptyElement { element, .. })
        | (Invalid(want), FomErrorKind::InvalidValue { element, .. }) => element == want,
        (UnknownType(want), FomErrorKind::UnknownDataType { name, .. }) => name == want,
        (UnknownEnumerator(want), FomErrorKind::UnknownEnumerator { enumerator, .. }) => {
            enumerator == want
        }
        (NotBasic, FomErrorKind::WrongDataTypeKind { expected, .. }) => {
            expected == "a basic data representation"
        }
        _ => false,
    }
}

#[test]
fn portico_data_type_modules_fail_for_the_fault_their_name_announces() {
    let files = std::fs::read_dir(third_party("portico"))
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            let name = name.to_string_lossy();
            name.ends_with(".xml") && !name.starts_with("NonEquivalentMIM")
        })
        .count();
    assert_eq!(files, DATA_TYPE_MODULES.len());
    let context = FomModule::parse_str("variant context", VARIANT_CONTEXT).unwrap();
    for (name, expect) in DATA_TYPE_MODULES {
        let result = FomModule::load(&path(name)).and_then(|module| {
            if name.starts_with("variantRecord") {
                Fom::merge(&[context.clone(), module])
            } else {
                Fom::merge(&[module])
            }
        });
        match (expect, result) {
            (Accepted, Ok(_)) => {}
            (Accepted, Err(e)) => panic!("{name}: {e}"),
            (_, Ok(_)) => panic!("{name} loaded; Portico expects {expect:?}"),
            (_, Err(e)) => {
                assert!(matches(expect, &e.kind), "{name}: {expect:?}, got {e}");
                assert!(e.file.ends_with(name), "{name}: {e}");
                assert!(e.line > 0, "{name}: {e}");
            }
        }
    }
}

#[test]
fn portico_module_sets_without_objects_or_interactions_merge_in_either_order() {
    for names in [
        ["testfomModule.xml", "testfomModuleNoInteractions.xml"],
        ["testfomModuleNoInteractions.xml", "testfomModule.xml"],
        ["testfomModuleNoObjects.xml", "testfomModule.xml"],
    ] {
        let paths: Vec<PathBuf> = names.iter().map(|n| path(n)).collect();
        Fom::load_files(&paths).unwrap_or_else(|e| panic!("{names:?}: {e}"));
    }
}

#[test]
fn portico_non_equivalent_mim_extensions_stay_out_of_the_fom() {
    // Portico creates the federation and drops the class; 1516-2010 requires a
    // repeated class to be equivalent, so glidepath refuses the module, naming
    // the class and the standard MIM's declaration of it. Either way neither
    // FakeHandle nor FakeParameter ever reaches a federate.
    let mim = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/HLAstandardMIM.xml");
    for (name, what, class) in [
        (
            "NonEquivalentMIM-Objects.xml",
            "object class",
            "HLAobjectRoot.HLAmanager.HLAfederate",
        ),
        (
            "NonEquivalentMIM-Interactions.xml",
            "interaction class",
            "HLAinteractionRoot.HLAmanager.HLAfederate",
        ),
    ] {
        let e = Fom::load_files(&[mim.clone(), path(name)]).unwrap_err();
        assert!(e.file.ends_with(name), "{e}");
        assert!(
            matches!(&e.kind, FomErrorKind::InconsistentDefinition { what: w, name: n, first, .. }
                if w == what && n == class && first.starts_with("HLAstandardMIM (built in):")),
            "{e}"
        );
    }
}

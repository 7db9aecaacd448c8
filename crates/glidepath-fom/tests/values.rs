//! Typed values: the HLA encodings of the MIM's data types and of a module's own
//! records, arrays and enumerations, byte for byte as IEEE 1516.2-2010 lays them out
//! (padding to each value's octet boundary), and clear errors for bad values and bad
//! bytes.

mod support;

use glidepath_fom::{Fom, FomModule, Value};

use support::module;

fn mim() -> Fom {
    Fom::merge(&[]).unwrap()
}

/// A module with a record mixing sizes, an array of it, a fixed array, an
/// enumeration and a record that contains itself.
fn own() -> Fom {
    let tables = r#"    <dataTypes>
        <enumeratedDataTypes>
            <enumeratedData>
                <name>Phase</name><representation>HLAinteger16BE</representation>
                <enumerator><name>Taxi</name><value>1</value></enumerator>
                <enumerator><name>Cruise</name><value>7</value></enumerator>
            </enumeratedData>
        </enumeratedDataTypes>
        <arrayDataTypes>
            <arrayData><name>Mixes</name><dataType>Mix</dataType><cardinality>Dynamic</cardinality><encoding>HLAvariableArray</encoding></arrayData>
            <arrayData><name>Triple</name><dataType>HLAinteger16LE</dataType><cardinality>3</cardinality><encoding>HLAfixedArray</encoding></arrayData>
            <arrayData><name>Odd</name><dataType>HLAoctet</dataType><cardinality>Dynamic</cardinality><encoding>MyLengthless</encoding></arrayData>
        </arrayDataTypes>
        <fixedRecordDataTypes>
            <fixedRecordData>
                <name>Mix</name><encoding>HLAfixedRecord</encoding>
                <field><name>flag</name><dataType>HLAoctet</dataType></field>
                <field><name>speed</name><dataType>HLAfloat64BE</dataType></field>
                <field><name>phase</name><dataType>Phase</dataType></field>
            </fixedRecordData>
            <fixedRecordData>
                <name>Loop</name><encoding>HLAfixedRecord</encoding>
                <field><name>next</name><dataType>Loop</dataType></field>
            </fixedRecordData>
        </fixedRecordDataTypes>
    </dataTypes>"#;
    let xml = module("", "", tables);
    Fom::merge(&[FomModule::parse_str("own.xml", &xml).unwrap()]).unwrap()
}

fn round_trip(fom: &Fom, data_type: &str, value: Value, bytes: &[u8]) {
    let encoded = fom.encode_value(data_type, &value).unwrap();
    assert_eq!(encoded, bytes, "{data_type} {value:?}");
    assert_eq!(
        fom.decode_value(data_type, bytes).unwrap(),
        value,
        "{data_type}"
    );
}

fn mix(flag: i64, speed: f64, phase: &str) -> Value {
    Value::Record(vec![
        ("flag".into(), Value::Int(flag)),
        ("speed".into(), Value::Float(speed)),
        ("phase".into(), Value::Text(phase.into())),
    ])
}

#[test]
fn the_mims_basic_types_encode_as_the_standard_says() {
    let fom = mim();
    round_trip(&fom, "HLAinteger32BE", Value::Int(1234), &[0, 0, 4, 210]);
    round_trip(&fom, "HLAinteger16LE", Value::Int(-2), &[0xfe, 0xff]);
    round_trip(
        &fom,
        "HLAinteger64BE",
        Value::Int(i64::MIN),
        &[0x80, 0, 0, 0, 0, 0, 0, 0],
    );
    round_trip(
        &fom,
        "HLAfloat64BE",
        Value::Float(1.5),
        &1.5f64.to_be_bytes(),
    );
    round_trip(
        &fom,
        "HLAfloat32LE",
        Value::Float(-0.25),
        &(-0.25f32).to_le_bytes(),
    );
    round_trip(&fom, "HLAoctet", Value::Int(255), &[255]);
    round_trip(&fom, "HLAoctetPairBE", Value::Int(0xbeef), &[0xbe, 0xef]);
    // Simple types encode as what they alias.
    round_trip(&fom, "HLAcount", Value::Int(7), &[0, 0, 0, 7]);
    round_trip(&fom, "HLAboolean", Value::Bool(true), &[0, 0, 0, 1]);
    round_trip(&fom, "HLAboolean", Value::Bool(false), &[0, 0, 0, 0]);
    // An integer is taken for a float.
    assert_eq!(
        fom.encode_value("HLAfloat64LE", &Value::Int(2)).unwrap(),
        2f64.to_le_bytes()
    );
}

#[test]
fn strings_and_opaque_data_are_variable_arrays_with_a_count() {
    let fom = mim();
    round_trip(
        &fom,
        "HLAASCIIstring",
        Value::Text("abc".into()),
        &[0, 0, 0, 3, b'a', b'b', b'c'],
    );
    round_trip(
        &fom,
        "HLAunicodeString",
        Value::Text("é€".into()),
        &[0, 0, 0, 2, 0x00, 0xe9, 0x20, 0xac],
    );
    round_trip(
        &fom,
        "HLAopaqueData",
        Value::Bytes(vec![9, 8]),
        &[0, 0, 0, 2, 9, 8],
    );
    round_trip(
        &fom,
        "HLAASCIIstring",
        Value::Text(String::new()),
        &[0, 0, 0, 0],
    );
}

#[test]
fn records_and_arrays_pad_each_value_to_its_octet_boundary() {
    let fom = own();
    assert_eq!(fom.octet_boundary("Mix"), Some(8));
    assert_eq!(fom.octet_boundary("Mixes"), Some(8));
    // flag at 0, speed at 8 (7 bytes of padding), phase at 16.
    let mut one = vec![1, 0, 0, 0, 0, 0, 0, 0];
    one.extend(250.0f64.to_be_bytes());
    one.extend([0, 7]);
    round_trip(&fom, "Mix", mix(1, 250.0, "Cruise"), &one);
    // The count at 0, the first record at 8 (after 4 bytes of padding), the second at
    // 32: 18 bytes of the first, padded to the record's boundary.
    let mut two = vec![0, 0, 0, 2, 0, 0, 0, 0];
    two.extend(&one);
    two.extend([0; 6]);
    let mut second = vec![0, 0, 0, 0, 0, 0, 0, 0];
    second.extend(0.5f64.to_be_bytes());
    second.extend([0, 1]);
    two.extend(&second);
    round_trip(
        &fom,
        "Mixes",
        Value::List(vec![mix(1, 250.0, "Cruise"), mix(0, 0.5, "Taxi")]),
        &two,
    );
    round_trip(
        &fom,
        "Triple",
        Value::List(vec![Value::Int(1), Value::Int(-1), Value::Int(2)]),
        &[1, 0, 0xff, 0xff, 2, 0],
    );
    // An enumerator is also taken by its value.
    assert_eq!(fom.encode_value("Phase", &Value::Int(7)).unwrap(), [0, 7]);
}

#[test]
fn a_third_party_record_of_the_rpr_fom_encodes() {
    // SISO-STD-001.1-2015's monolithic RPR FOM 2.0.
    let fom = Fom::load_files(&[support::third_party("rpr/RPR_FOM_v2.0_1516-2010.xml")]).unwrap();
    let at = Value::Record(vec![
        ("X".into(), Value::Float(1.0)),
        ("Y".into(), Value::Float(2.0)),
        ("Z".into(), Value::Float(3.0)),
    ]);
    let bytes = fom.encode_value("WorldLocationStruct", &at).unwrap();
    assert_eq!(bytes.len(), 24);
    assert_eq!(&bytes[8..16], &2.0f64.to_be_bytes());
    assert_eq!(fom.decode_value("WorldLocationStruct", &bytes).unwrap(), at);
}

#[test]
fn bad_values_are_refused_with_where_and_why() {
    let fom = own();
    let message = |t: &str, v: Value| fom.encode_value(t, &v).unwrap_err().to_string();
    assert_eq!(
        message("HLAinteger16BE", Value::Int(40_000)),
        "encoding `HLAinteger16BE` at `/`: 40000 is outside -32768..=32767"
    );
    assert!(message("HLAoctet", Value::Int(-1)).contains("outside 0..=255"));
    assert!(
        message("HLAfloat64BE", Value::Text("x".into())).contains("expected a number, got text")
    );
    assert!(message("HLAASCIIstring", Value::Text("é".into())).contains("`é` is not ASCII"));
    assert!(message("Phase", Value::Text("Climb".into()))
        .contains("no enumerator `Climb` (it has Taxi, Cruise)"));
    assert!(message("Phase", Value::Int(3)).contains("3 is the value of no enumerator"));
    assert!(message("Triple", Value::List(vec![])).contains("a fixed array of 3 elements, got 0"));
    assert!(message("Unknown", Value::Int(1)).contains("no data type `Unknown` in the FOM"));
    assert!(message("Odd", Value::Bytes(vec![1])).contains("`MyLengthless` is FOM-specific"));
    assert!(message("Mix", Value::Record(vec![])).contains("the field `flag` is missing"));
    // The path names the element and the field.
    let e = fom
        .encode_value(
            "Mixes",
            &Value::List(vec![mix(1, 1.0, "Taxi"), mix(300, 1.0, "Taxi")]),
        )
        .unwrap_err();
    assert_eq!(
        (e.path.as_str(), e.data_type.as_str()),
        ("/1/flag", "HLAoctet"),
        "{e}"
    );
    let mut extra = match mix(1, 1.0, "Taxi") {
        Value::Record(f) => f,
        _ => unreachable!(),
    };
    extra.push(("altitude".into(), Value::Int(1)));
    assert!(message("Mix", Value::Record(extra))
        .contains("no field `altitude` (it has flag, speed, phase)"));
    // A record that contains itself ends with an error, not a stack overflow.
    assert!(message("Loop", Value::Record(vec![])).contains("nest more than 64 deep"));
    let mut deep = Value::Int(0);
    for _ in 0..100 {
        deep = Value::Record(vec![("next".into(), deep)]);
    }
    assert!(message("Loop", deep).contains("nest more than 64 deep"));
}

#[test]
fn bad_bytes_are_refused_with_where_and_why() {
    let fom = own();
    let message = |t: &str, b: &[u8]| fom.decode_value(t, b).unwrap_err().to_string();
    assert!(message("HLAinteger32BE", &[0, 1]).contains("4 bytes needed at 0, the data ends at 2"));
    assert!(message("HLAinteger32BE", &[0, 0, 0, 1, 9]).contains("1 bytes left over"));
    assert!(message("HLAboolean", &[0, 0, 0, 2]).contains("2 is the value of no enumerator"));
    assert!(message("HLAASCIIstring", &[0xff, 0xff, 0xff, 0xff])
        .contains("a negative element count (-1)"));
    assert!(message("HLAASCIIstring", &[0x7f, 0, 0, 0, b'a'])
        .contains("2130706432 elements, but only 1 bytes left"));
    assert!(message("HLAASCIIstring", &[0, 0, 0, 1, 0xc3]).contains("not ASCII text"));
    assert!(message("HLAunicodeString", &[0, 0, 0, 1, 0xd8, 0x00]).contains("unpaired surrogate"));
    let mut bad_padding = vec![1, 0, 0, 9, 0, 0, 0, 0];
    bad_padding.extend(1.0f64.to_be_bytes());
    bad_padding.extend([0, 1]);
    let e = fom.decode_value("Mix", &bad_padding).unwrap_err();
    assert_eq!(e.path, "/speed", "{e}");
    assert!(e.reason.contains("padding at 1..8 is not zero"), "{e}");
}

#[test]
fn random_records_round_trip() {
    let fom = own();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..500 {
        let n = (next() % 5) as usize;
        let items: Vec<Value> = (0..n)
            .map(|_| {
                let phase = if next() % 2 == 0 { "Taxi" } else { "Cruise" };
                mix((next() % 256) as i64, f64::from_bits(next() >> 2), phase)
            })
            .collect();
        let value = Value::List(items);
        let bytes = fom.encode_value("Mixes", &value).unwrap();
        assert_eq!(fom.decode_value("Mixes", &bytes).unwrap(), value);
    }
}

/// A variant record: an enumeration `Kind` selects a point (a record of two
/// float64), a radius, nothing (a range and `HLAother`).
fn variants() -> Fom {
    let tables = r#"    <dataTypes>
        <enumeratedDataTypes>
            <enumeratedData>
                <name>Kind</name><representation>HLAinteger16BE</representation>
                <enumerator><name>Point</name><value>0</value></enumerator>
                <enumerator><name>Circle</name><value>1</value></enumerator>
                <enumerator><name>Gone</name><value>2</value></enumerator>
                <enumerator><name>Lost</name><value>3</value></enumerator>
                <enumerator><name>Odd</name><value>9</value></enumerator>
            </enumeratedData>
        </enumeratedDataTypes>
        <fixedRecordDataTypes>
            <fixedRecordData>
                <name>Vec2</name><encoding>HLAfixedRecord</encoding>
                <field><name>x</name><dataType>HLAfloat64BE</dataType></field>
                <field><name>y</name><dataType>HLAfloat64BE</dataType></field>
            </fixedRecordData>
        </fixedRecordDataTypes>
        <variantRecordDataTypes>
            <variantRecordData>
                <name>Shape</name>
                <discriminant>kind</discriminant><dataType>Kind</dataType>
                <alternative><enumerator>Point</enumerator><name>at</name><dataType>Vec2</dataType></alternative>
                <alternative><enumerator>Circle</enumerator><name>radius</name><dataType>HLAinteger32BE</dataType></alternative>
                <alternative><enumerator>[Gone .. Lost]</enumerator><name>none</name><dataType>NA</dataType></alternative>
                <alternative><enumerator>HLAother</enumerator><name>code</name><dataType>HLAoctet</dataType></alternative>
                <encoding>HLAvariantRecord</encoding>
            </variantRecordData>
        </variantRecordDataTypes>
    </dataTypes>"#;
    let xml = module("", "", tables);
    Fom::merge(&[FomModule::parse_str("variants.xml", &xml).unwrap()]).unwrap()
}

fn shape(kind: &str, field: Option<(&str, Value)>) -> Value {
    let mut fields = vec![("kind".to_string(), Value::Text(kind.into()))];
    fields.extend(field.map(|(n, v)| (n.to_string(), v)));
    Value::Record(fields)
}

#[test]
fn a_variant_record_encodes_its_discriminant_and_the_alternative_it_selects() {
    let fom = variants();
    // The record's boundary is 8 (Vec2's float64): the discriminant (2 bytes) then
    // padding to the alternative's own boundary.
    assert_eq!(fom.octet_boundary("Shape"), Some(8));
    let point = shape(
        "Point",
        Some((
            "at",
            Value::Record(vec![
                ("x".into(), Value::Float(1.0)),
                ("y".into(), Value::Float(-2.0)),
            ]),
        )),
    );
    let mut bytes = vec![0, 0, 0, 0, 0, 0, 0, 0];
    bytes.extend(1.0f64.to_be_bytes());
    bytes.extend((-2.0f64).to_be_bytes());
    round_trip(&fom, "Shape", point, &bytes);
    round_trip(
        &fom,
        "Shape",
        shape("Circle", Some(("radius", Value::Int(300)))),
        &[0, 1, 0, 0, 0, 0, 1, 44],
    );
    // A range selects an alternative without a value: the discriminant alone.
    round_trip(&fom, "Shape", shape("Lost", None), &[0, 3]);
    round_trip(&fom, "Shape", shape("Gone", None), &[0, 2]);
    // HLAother takes every other enumerator.
    round_trip(
        &fom,
        "Shape",
        shape("Odd", Some(("code", Value::Int(7)))),
        &[0, 9, 7],
    );
    // The discriminant by its value is taken too.
    let by_value = Value::Record(vec![
        ("kind".into(), Value::Int(1)),
        ("radius".into(), Value::Int(2)),
    ]);
    assert_eq!(
        fom.encode_value("Shape", &by_value).unwrap(),
        [0, 1, 0, 0, 0, 0, 0, 2]
    );
}

#[test]
fn a_bad_variant_says_what_and_where() {
    let fom = variants();
    let err = |v: Value| fom.encode_value("Shape", &v).unwrap_err().to_string();
    let e = err(shape("Circle", Some(("at", Value::Int(1)))));
    assert!(e.contains("`at`") && e.contains("`radius`"), "{e}");
    let e = err(shape("Lost", Some(("none", Value::Int(1)))));
    assert!(e.contains("without a value"), "{e}");
    let e = err(Value::Record(vec![("radius".into(), Value::Int(1))]));
    assert!(e.contains("discriminant `kind` is missing"), "{e}");
    let e = err(shape("Square", None));
    assert!(e.contains("no enumerator"), "{e}");
    let e = err(shape("Circle", None));
    assert!(e.contains("`radius`, which is missing"), "{e}");
    let e = err(shape("Point", Some(("at", Value::Int(3)))));
    assert!(e.contains("/at"), "{e}");
    // Bytes: an unknown discriminant value, a truncated alternative, bad padding,
    // bytes left over.
    for (bytes, says) in [
        (&[0u8, 5][..], "no enumerator"),
        (&[0, 1, 0, 0, 0, 0][..], "ends"),
        (&[0, 1, 0, 9, 0, 0, 0, 1][..], "padding"),
        (&[0, 3, 1][..], "left over"),
    ] {
        let e = fom.decode_value("Shape", bytes).unwrap_err().to_string();
        assert!(e.contains(says), "{bytes:?}: {e}");
    }
}

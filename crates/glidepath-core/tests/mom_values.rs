//! The MOM's hand-written encoders (`glidepath_core::mom`) and the FOM's generic
//! typed-value encoder (`Fom::encode_value`) write the same bytes for the MIM's data
//! types: two independent readings of IEEE 1516.2 that must agree.

use glidepath_core::fom::{Fom, Value};
use glidepath_core::mom;
use glidepath_core::FederateHandle;

#[test]
fn the_mom_and_the_typed_value_encoder_agree() {
    let fom = Fom::merge(&[]).unwrap();
    let same = |data_type: &str, value: Value, hand: &[u8]| {
        assert_eq!(
            fom.encode_value(data_type, &value).unwrap(),
            hand,
            "{data_type}"
        );
        assert_eq!(
            fom.decode_value(data_type, hand).unwrap(),
            value,
            "{data_type}"
        );
    };
    same("HLAinteger32BE", Value::Int(-7), &mom::encode_i32(-7));
    same("HLAcount", Value::Int(12), &mom::encode_count(12));
    same("HLAboolean", Value::Bool(true), &mom::encode_bool(true));
    same(
        "HLAunicodeString",
        Value::Text("Föderat".into()),
        &mom::encode_unicode_string("Föderat"),
    );
    let h = |n: u32| Value::Bytes(n.to_be_bytes().to_vec());
    same(
        "HLAhandle",
        h(9),
        &mom::encode_federate_handle(FederateHandle(9)),
    );
    same(
        "HLAhandleList",
        Value::List(vec![h(1), h(300)]),
        &mom::encode_federate_handles(&[FederateHandle(1), FederateHandle(300)]),
    );
    // Strings of odd lengths: each element of the list starts on a 4-byte boundary.
    let names = ["a.xml", "bb.xml", "ccc.xml"].map(String::from);
    same(
        "HLAmoduleDesignatorList",
        Value::List(names.iter().map(|n| Value::Text(n.clone())).collect()),
        &mom::encode_unicode_strings(&names),
    );
}

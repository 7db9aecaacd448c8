//! Pins the exact bytes of one small Update envelope and the exact JSON of one
//! request and one reply, and checks that `docs/wire-format.md` shows the same, so
//! neither the format nor its worked examples can drift silently.

use std::sync::Arc;

use bytes::Bytes;
use glidepath_core::{
    AttributeHandle, Body, DimensionHandle, Envelope, ExecReply, ExecRequest, Extent,
    FederateHandle, FederationError, FederationId, LogicalTime, ObjectClassHandle,
    ObjectInstanceHandle, OrderType, RangeBounds, RegionSet, TransportationType,
};
use glidepath_wire::{
    decode_envelope, decode_reply, decode_request, encode_envelope, encode_reply, encode_request,
};

/// The worked example of `docs/wire-format.md`, one space between bytes.
const GOLDEN_UPDATE_HEX: &str = "47 08 02 02 05 d2 85 d8 cc 04 07 03 01 01 02 64 ac 02 01 00 01 00 00 00 00 00 00 25 40 01 74 02 04 02 68 69 ac 02 01 01";

const GOLDEN_JOIN_JSON: &str = r#"{"version":3,"request":{"Join":{"federation":1,"federate_name":"radar","federate_type":"Sensor"}}}"#;
const GOLDEN_REGISTERED_JSON: &str =
    r#"{"version":3,"reply":{"Registered":{"instance":1,"name":"HLAobject1"}}}"#;
const GOLDEN_ERROR_JSON: &str =
    r#"{"version":3,"reply":{"FederationError":{"FederateNameAlreadyInUse":"radar"}}}"#;

fn golden_update() -> Envelope {
    Envelope {
        sender: FederateHandle(2),
        seq: 5,
        publish_time_ns: 1_234_567_890,
        body: Body::Update {
            instance: ObjectInstanceHandle(7),
            class: ObjectClassHandle(3),
            values: Arc::from(vec![
                (AttributeHandle(4), Bytes::from_static(b"hi")),
                (AttributeHandle(300), Bytes::from_static(&[0x01])),
            ]),
            tag: Bytes::from_static(b"t"),
            order: OrderType::TimeStamp,
            transport: TransportationType::Reliable,
            time: LogicalTime::new(10.5),
            regions: RegionSet::new(vec![Extent::new([(
                DimensionHandle(2),
                RangeBounds::new(100, 300),
            )])]),
        },
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn spec() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/wire-format.md");
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn update_envelope_bytes_are_pinned() {
    let bytes = encode_envelope(&golden_update());
    assert_eq!(hex(&bytes), GOLDEN_UPDATE_HEX);
    assert_eq!(bytes.len(), 40);
    assert_eq!(decode_envelope(&bytes), Ok(golden_update()));
}

#[test]
fn management_plane_json_is_pinned() {
    let join = ExecRequest::Join {
        federation: FederationId(1),
        federate_name: Some("radar".into()),
        federate_type: "Sensor".into(),
    };
    assert_eq!(
        String::from_utf8(encode_request(&join)).unwrap(),
        GOLDEN_JOIN_JSON
    );
    assert!(matches!(
        decode_request(GOLDEN_JOIN_JSON.as_bytes()),
        Ok(ExecRequest::Join { federation: FederationId(1), federate_name: Some(n), federate_type: t }) if n == "radar" && t == "Sensor"
    ));

    let registered = ExecReply::Registered {
        instance: ObjectInstanceHandle(1),
        name: "HLAobject1".into(),
    };
    assert_eq!(
        String::from_utf8(encode_reply(&registered)).unwrap(),
        GOLDEN_REGISTERED_JSON
    );

    let error =
        ExecReply::FederationError(FederationError::FederateNameAlreadyInUse("radar".into()));
    assert_eq!(
        String::from_utf8(encode_reply(&error)).unwrap(),
        GOLDEN_ERROR_JSON
    );
    assert!(matches!(
        decode_reply(GOLDEN_ERROR_JSON.as_bytes()),
        Ok(ExecReply::FederationError(FederationError::FederateNameAlreadyInUse(n))) if n == "radar"
    ));
}

#[test]
fn the_specification_shows_the_pinned_examples() {
    let spec = spec();
    for (what, text) in [
        ("the Update envelope's bytes", GOLDEN_UPDATE_HEX),
        ("the Join request", GOLDEN_JOIN_JSON),
        ("the Registered reply", GOLDEN_REGISTERED_JSON),
        ("the error reply", GOLDEN_ERROR_JSON),
    ] {
        assert!(
            spec.contains(text),
            "docs/wire-format.md must show {what} exactly:\n{text}"
        );
    }
}

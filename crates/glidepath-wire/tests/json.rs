//! The management plane: every request and reply variant (errors included) survives
//! a JSON round trip, and malformed or newer messages are refused with a clear error.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use bytes::Bytes;
use glidepath_core::fom::Fom;
use glidepath_core::{
    AttributeHandle, ExecReply, ExecRequest, FederateHandle, FederateInfo, FederationError,
    FederationId, InstanceInfo, InteractionClassHandle, LogicalTime, LogicalTimeInterval,
    ObjectClassHandle, ObjectError, ObjectInstanceHandle, OwnershipError, OwnershipOutcome,
    OwnershipRequest, ParameterHandle, ResignAction, RestoreStatus, SaveRequest, SaveRestoreError,
    SaveStatus, SavedTime,
};
use glidepath_wire::{decode_reply, decode_request, encode_reply, encode_request, WireError};
use proptest::prelude::*;

fn fom() -> Arc<Fom> {
    let path = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../foms/air-traffic.xml"
    ));
    Arc::new(Fom::load_files(&[path]).expect("the air-traffic FOM loads"))
}

fn request_name(r: &ExecRequest) -> &'static str {
    // Exhaustive on purpose: a new variant does not compile until it has a case below.
    match r {
        ExecRequest::Create { .. } => "Create",
        ExecRequest::Destroy { .. } => "Destroy",
        ExecRequest::Lookup { .. } => "Lookup",
        ExecRequest::Join { .. } => "Join",
        ExecRequest::Resign { .. } => "Resign",
        ExecRequest::Lost { .. } => "Lost",
        ExecRequest::ListFederates { .. } => "ListFederates",
        ExecRequest::ReserveName { .. } => "ReserveName",
        ExecRequest::ReleaseName { .. } => "ReleaseName",
        ExecRequest::RegisterInstance { .. } => "RegisterInstance",
        ExecRequest::DeleteInstance { .. } => "DeleteInstance",
        ExecRequest::ListInstances { .. } => "ListInstances",
        ExecRequest::RegisterSyncPoint { .. } => "RegisterSyncPoint",
        ExecRequest::AchieveSyncPoint { .. } => "AchieveSyncPoint",
        ExecRequest::EnableRegulation { .. } => "EnableRegulation",
        ExecRequest::DisableRegulation { .. } => "DisableRegulation",
        ExecRequest::Ownership { .. } => "Ownership",
        ExecRequest::Save { .. } => "Save",
    }
}
const REQUEST_VARIANTS: usize = 18;

fn reply_name(r: &ExecReply) -> &'static str {
    match r {
        ExecReply::Ok => "Ok",
        ExecReply::Created { .. } => "Created",
        ExecReply::Found { .. } => "Found",
        ExecReply::Joined { .. } => "Joined",
        ExecReply::Resigned { .. } => "Resigned",
        ExecReply::Federates(_) => "Federates",
        ExecReply::NameReserved { .. } => "NameReserved",
        ExecReply::Registered { .. } => "Registered",
        ExecReply::Instances(_) => "Instances",
        ExecReply::SyncPointRegistered { .. } => "SyncPointRegistered",
        ExecReply::RegulationEnabling { .. } => "RegulationEnabling",
        ExecReply::FederationError(_) => "FederationError",
        ExecReply::ObjectError(_) => "ObjectError",
        ExecReply::Ownership(_) => "Ownership",
        ExecReply::AttributeOwner { .. } => "AttributeOwner",
        ExecReply::OwnershipError(_) => "OwnershipError",
        ExecReply::RestoreRequest { .. } => "RestoreRequest",
        ExecReply::SaveStatus(_) => "SaveStatus",
        ExecReply::RestoreStatus(_) => "RestoreStatus",
        ExecReply::SaveError(_) => "SaveError",
    }
}
const REPLY_VARIANTS: usize = 20;

fn requests() -> Vec<ExecRequest> {
    let f = FederationId(3);
    let me = FederateHandle(2);
    let mut v = vec![
        ExecRequest::Create {
            name: "ATC".into(),
            fom: fom(),
        },
        ExecRequest::Destroy { name: "ATC".into() },
        ExecRequest::Lookup {
            name: "ATC \"quoted\" ✈".into(),
        },
        ExecRequest::Join {
            federation: f,
            federate_name: Some("radar".into()),
            federate_type: "Sensor".into(),
        },
        ExecRequest::Join {
            federation: f,
            federate_name: None,
            federate_type: String::new(),
        },
        ExecRequest::ListFederates { federation: f },
        ExecRequest::ReserveName {
            federation: f,
            federate: me,
            name: "KLM123".into(),
        },
        ExecRequest::ReleaseName {
            federation: f,
            federate: me,
            name: "KLM123".into(),
        },
        ExecRequest::RegisterInstance {
            federation: f,
            federate: me,
            class: ObjectClassHandle(1),
            name: Some("KLM123".into()),
            attributes: vec![AttributeHandle(0), AttributeHandle(4)],
        },
        ExecRequest::RegisterInstance {
            federation: f,
            federate: me,
            class: ObjectClassHandle(1),
            name: None,
            attributes: Vec::new(),
        },
        ExecRequest::DeleteInstance {
            federation: f,
            federate: me,
            instance: ObjectInstanceHandle(u64::from(u32::MAX) + 1),
        },
        ExecRequest::ListInstances {
            federation: f,
            federate: me,
            classes: vec![ObjectClassHandle(1), ObjectClassHandle(2)],
        },
        ExecRequest::RegisterSyncPoint {
            federation: f,
            federate: me,
            label: "Ready".into(),
            tag: Bytes::from_static(b"\x00go\xff"),
            set: None,
        },
        ExecRequest::RegisterSyncPoint {
            federation: f,
            federate: me,
            label: "Ready".into(),
            tag: Bytes::new(),
            set: Some(vec![FederateHandle(1), FederateHandle::EXECUTIVE]),
        },
        ExecRequest::AchieveSyncPoint {
            federation: f,
            federate: me,
            label: "Ready".into(),
            success: false,
        },
        ExecRequest::EnableRegulation {
            federation: f,
            federate: me,
        },
        ExecRequest::DisableRegulation {
            federation: f,
            federate: me,
        },
    ];
    let attributes = vec![AttributeHandle(4), AttributeHandle(5)];
    let tag = Bytes::from_static(b"take");
    for request in [
        OwnershipRequest::UnconditionalDivest {
            attributes: attributes.clone(),
        },
        OwnershipRequest::NegotiatedDivest {
            attributes: attributes.clone(),
            tag: tag.clone(),
        },
        OwnershipRequest::ConfirmDivestiture {
            attributes: attributes.clone(),
            tag: Bytes::new(),
        },
        OwnershipRequest::DivestIfWanted {
            attributes: attributes.clone(),
        },
        OwnershipRequest::CancelDivestiture {
            attributes: attributes.clone(),
        },
        OwnershipRequest::Acquire {
            attributes: attributes.clone(),
            tag: tag.clone(),
        },
        OwnershipRequest::AcquireIfAvailable {
            attributes: attributes.clone(),
        },
        OwnershipRequest::ReleaseDenied {
            attributes: attributes.clone(),
        },
        OwnershipRequest::CancelAcquisition {
            attributes: Vec::new(),
        },
        OwnershipRequest::Query {
            attribute: AttributeHandle(0),
        },
    ] {
        v.push(ExecRequest::Ownership {
            federation: f,
            federate: me,
            instance: ObjectInstanceHandle(7),
            request,
        });
    }
    for request in [
        SaveRequest::RequestSave {
            label: "t50".into(),
            time: Some(SavedTime::Float(50.5)),
        },
        SaveRequest::RequestSave {
            label: "now".into(),
            time: None,
        },
        SaveRequest::SaveBegun,
        SaveRequest::SaveComplete {
            state: Bytes::from_static(b"GPSAVE\x00\x01"),
        },
        SaveRequest::SaveNotComplete,
        SaveRequest::AbortSave,
        SaveRequest::QuerySaveStatus,
        SaveRequest::RequestRestore {
            label: "t50".into(),
        },
        SaveRequest::RestoreComplete,
        SaveRequest::RestoreNotComplete,
        SaveRequest::AbortRestore,
        SaveRequest::QueryRestoreStatus,
    ] {
        v.push(ExecRequest::Save {
            federation: f,
            federate: me,
            request,
        });
    }
    for action in [
        ResignAction::UnconditionallyDivestAttributes,
        ResignAction::DeleteObjects,
        ResignAction::CancelPendingOwnershipAcquisitions,
        ResignAction::DeleteObjectsThenDivest,
        ResignAction::CancelThenDeleteThenDivest,
        ResignAction::NoAction,
    ] {
        v.push(ExecRequest::Resign {
            federation: f,
            federate: me,
            action,
        });
    }
    v.push(ExecRequest::Lost {
        federation: f,
        federate: me,
    });
    v
}

fn federation_errors() -> Vec<FederationError> {
    vec![
        FederationError::FederationExecutionAlreadyExists("ATC".into()),
        FederationError::FederationExecutionDoesNotExist("ATC".into()),
        FederationError::FederatesCurrentlyJoined {
            name: "ATC".into(),
            count: 3,
        },
        FederationError::FederateNameAlreadyInUse("radar".into()),
        FederationError::FederateNotExecutionMember,
        FederationError::FederateAlreadyExecutionMember,
        FederationError::FederateOwnsAttributes(2),
        FederationError::SynchronizationPointLabelNotAnnounced("Ready".into()),
        FederationError::ErrorReadingFdd("x.xml:1:2: bad".into()),
        FederationError::InconsistentFdd("other modules".into()),
    ]
}

fn object_errors() -> Vec<ObjectError> {
    let t = |v| LogicalTime::new(v).unwrap();
    vec![
        ObjectError::ObjectClassNotDefined(ObjectClassHandle(9)),
        ObjectError::ObjectClassNotPublished(ObjectClassHandle(9)),
        ObjectError::AttributeNotDefined {
            class: ObjectClassHandle(1),
            attribute: AttributeHandle(7),
        },
        ObjectError::AttributeNotOwned(AttributeHandle(7)),
        ObjectError::ObjectInstanceNotKnown(ObjectInstanceHandle(5)),
        ObjectError::DeletePrivilegeNotHeld(ObjectInstanceHandle(5)),
        ObjectError::ObjectInstanceNameNotReserved("KLM1".into()),
        ObjectError::ObjectInstanceNameInUse("KLM1".into()),
        ObjectError::IllegalName("HLAx".into()),
        ObjectError::InteractionClassNotDefined(InteractionClassHandle(4)),
        ObjectError::InteractionClassNotPublished(InteractionClassHandle(4)),
        ObjectError::InteractionParameterNotDefined {
            class: InteractionClassHandle(4),
            parameter: ParameterHandle(2),
        },
        ObjectError::InvalidLogicalTime {
            time: t(1.25),
            earliest: t(2.0),
        },
        ObjectError::InvalidLogicalTime {
            time: LogicalTime::NEG_INFINITY,
            earliest: LogicalTime::INFINITY,
        },
        ObjectError::InvalidLogicalTime {
            time: t(-0.0),
            earliest: t(f64::MIN_POSITIVE / 4.0),
        },
        ObjectError::Federation(FederationError::FederateNotExecutionMember),
    ]
}

fn replies() -> Vec<ExecReply> {
    let fom = fom();
    let members = vec![
        FederateInfo {
            handle: FederateHandle(1),
            name: "tower".into(),
            federate_type: "ATC".into(),
        },
        FederateInfo {
            handle: FederateHandle(2),
            name: "radar".into(),
            federate_type: "Sensor".into(),
        },
    ];
    let instances = vec![
        InstanceInfo {
            instance: ObjectInstanceHandle(1),
            class: ObjectClassHandle(1),
            name: "KLM1".into(),
            owner: Some(FederateHandle(1)),
        },
        InstanceInfo {
            instance: ObjectInstanceHandle(2),
            class: ObjectClassHandle(2),
            name: "HLAobject2".into(),
            owner: None,
        },
    ];
    let mut v = vec![
        ExecReply::Ok,
        ExecReply::Created {
            id: FederationId(u64::from(u32::MAX) * 4),
        },
        ExecReply::Found {
            id: FederationId(1),
            fom: fom.clone(),
        },
        ExecReply::Joined {
            federate: FederateHandle(2),
            fom,
            members: members.clone(),
            regulators: vec![FederateHandle(1)],
        },
        ExecReply::Resigned {
            delete: instances.clone(),
        },
        ExecReply::Resigned { delete: Vec::new() },
        ExecReply::Federates(members),
        ExecReply::NameReserved {
            name: "KLM1".into(),
            success: true,
        },
        ExecReply::NameReserved {
            name: "KLM1".into(),
            success: false,
        },
        ExecReply::Registered {
            instance: ObjectInstanceHandle(1),
            name: "HLAobject1".into(),
        },
        ExecReply::Instances(instances),
        ExecReply::SyncPointRegistered {
            label: "Ready".into(),
            result: Ok(()),
        },
        ExecReply::SyncPointRegistered {
            label: "Ready".into(),
            result: Err("label already in use".into()),
        },
        ExecReply::RegulationEnabling {
            ack_from: vec![FederateHandle(1), FederateHandle(3)],
        },
        ExecReply::RegulationEnabling {
            ack_from: Vec::new(),
        },
        ExecReply::Ownership(OwnershipOutcome::default()),
        ExecReply::Ownership(OwnershipOutcome {
            acquired: vec![AttributeHandle(1)],
            divested: vec![AttributeHandle(2)],
            pending: vec![AttributeHandle(3)],
            unavailable: vec![AttributeHandle(4)],
            cancelled: vec![AttributeHandle(5)],
            confirm: vec![AttributeHandle(6)],
            release: vec![AttributeHandle(7)],
            release_tag: Bytes::from_static(b"please"),
        }),
        ExecReply::AttributeOwner {
            owner: Some(FederateHandle(2)),
        },
        ExecReply::AttributeOwner { owner: None },
        ExecReply::OwnershipError(OwnershipError::AttributeNotOwned(AttributeHandle(4))),
        ExecReply::OwnershipError(OwnershipError::NoAcquisitionPending(AttributeHandle(4))),
        ExecReply::OwnershipError(OwnershipError::AttributeNotDefined {
            class: ObjectClassHandle(1),
            attribute: AttributeHandle(9),
        }),
    ];
    v.extend(
        federation_errors()
            .into_iter()
            .map(ExecReply::FederationError),
    );
    v.extend(object_errors().into_iter().map(ExecReply::ObjectError));
    v.extend([
        ExecReply::RestoreRequest {
            label: "t50".into(),
            result: Ok(()),
        },
        ExecReply::RestoreRequest {
            label: "t50".into(),
            result: Err("no save labelled `t50`".into()),
        },
        ExecReply::SaveStatus(vec![(
            FederateHandle(1),
            SaveStatus::FederateWaitingForFederationToSave,
        )]),
        ExecReply::RestoreStatus(vec![(
            FederateHandle(1),
            RestoreStatus::FederateInstructedToRestore,
        )]),
        ExecReply::SaveError(SaveRestoreError::LogicalTimeAlreadyPassed {
            time: "50".into(),
            now: "60".into(),
        }),
    ]);
    v
}

/// The JSON tree of a value: equal trees mean equal values for these types.
fn tree(bytes: &[u8]) -> serde_json::Value {
    serde_json::from_slice(bytes).expect("valid JSON")
}

#[test]
fn every_request_round_trips() {
    let mut seen = BTreeSet::new();
    for r in requests() {
        seen.insert(request_name(&r));
        let bytes = encode_request(&r);
        let back = decode_request(&bytes).unwrap_or_else(|e| panic!("{r:?}: {e}"));
        assert_eq!(request_name(&back), request_name(&r));
        assert_eq!(tree(&encode_request(&back)), tree(&bytes), "{r:?}");
        if let (ExecRequest::Create { fom: a, .. }, ExecRequest::Create { fom: b, .. }) =
            (&r, &back)
        {
            assert_eq!(a, b, "the whole merged FOM survives");
        }
    }
    assert_eq!(seen.len(), REQUEST_VARIANTS);
}

#[test]
fn every_reply_round_trips_errors_included() {
    let mut seen = BTreeSet::new();
    for r in replies() {
        seen.insert(reply_name(&r));
        let bytes = encode_reply(&r);
        let back = decode_reply(&bytes).unwrap_or_else(|e| panic!("{r:?}: {e}"));
        assert_eq!(tree(&encode_reply(&back)), tree(&bytes), "{r:?}");
        match (&r, &back) {
            (ExecReply::FederationError(a), ExecReply::FederationError(b)) => assert_eq!(a, b),
            (ExecReply::ObjectError(a), ExecReply::ObjectError(b)) => {
                assert_eq!(a, b);
                // Times keep their bits (negative zero, subnormals, infinities).
                if let (
                    ObjectError::InvalidLogicalTime {
                        time: t1,
                        earliest: e1,
                    },
                    ObjectError::InvalidLogicalTime {
                        time: t2,
                        earliest: e2,
                    },
                ) = (a, b)
                {
                    assert_eq!(t1.as_f64().to_bits(), t2.as_f64().to_bits());
                    assert_eq!(e1.as_f64().to_bits(), e2.as_f64().to_bits());
                }
            }
            (
                ExecReply::Found { fom: a, .. } | ExecReply::Joined { fom: a, .. },
                ExecReply::Found { fom: b, .. } | ExecReply::Joined { fom: b, .. },
            ) => {
                assert_eq!(a, b)
            }
            (ExecReply::Federates(a), ExecReply::Federates(b)) => assert_eq!(a, b),
            (ExecReply::Instances(a), ExecReply::Instances(b)) => assert_eq!(a, b),
            (
                ExecReply::SyncPointRegistered { result: a, .. },
                ExecReply::SyncPointRegistered { result: b, .. },
            ) => assert_eq!(a, b),
            _ => assert_eq!(reply_name(&r), reply_name(&back)),
        }
    }
    assert_eq!(seen.len(), REPLY_VARIANTS);
}

#[test]
fn infinite_times_are_strings_in_json() {
    let r = ExecReply::ObjectError(ObjectError::InvalidLogicalTime {
        time: LogicalTime::NEG_INFINITY,
        earliest: LogicalTime::INFINITY,
    });
    let text = String::from_utf8(encode_reply(&r)).unwrap();
    assert!(
        text.contains(r#""time":"-Infinity","earliest":"Infinity""#),
        "{text}"
    );
}

#[test]
fn bad_times_are_refused() {
    for bad in [r#""NaN""#, r#""inf""#, "null", "true", r#"[1]"#] {
        let text = format!(
            r#"{{"version":3,"reply":{{"ObjectError":{{"InvalidLogicalTime":{{"time":{bad},"earliest":1}}}}}}}}"#
        );
        assert!(
            matches!(decode_reply(text.as_bytes()), Err(WireError::Json { .. })),
            "{text}"
        );
    }
    // Integers are accepted as times.
    let text =
        r#"{"version":3,"reply":{"ObjectError":{"InvalidLogicalTime":{"time":3,"earliest":-4}}}}"#;
    assert!(matches!(
        decode_reply(text.as_bytes()),
        Ok(ExecReply::ObjectError(
            ObjectError::InvalidLogicalTime { .. }
        ))
    ));
}

#[test]
fn intervals_are_checked_on_decode() {
    assert_eq!(
        serde_json::to_string(&LogicalTimeInterval::new(0.5).unwrap()).unwrap(),
        "0.5"
    );
    assert!(serde_json::from_str::<LogicalTimeInterval>("0.5").is_ok());
    assert!(serde_json::from_str::<LogicalTimeInterval>("0").is_ok());
    assert!(serde_json::from_str::<LogicalTimeInterval>("-1.0").is_err());
    assert!(serde_json::from_str::<LogicalTimeInterval>("1e400").is_err());
    assert!(serde_json::from_str::<LogicalTimeInterval>("null").is_err());
}

#[test]
fn versions_and_malformed_messages_are_refused() {
    // Version 1 had no ownership management: a version 1 peer is refused.
    let join = r#"{"request":{"Join":{"federation":1,"federate_name":null,"federate_type":"x"}},"version":1}"#;
    assert_eq!(
        decode_request(join.as_bytes()).unwrap_err(),
        WireError::UnsupportedVersion {
            version: 1,
            supported: 3
        }
    );
    assert_eq!(
        decode_reply(br#"{"version":7,"reply":"Ok"}"#).unwrap_err(),
        WireError::UnsupportedVersion {
            version: 7,
            supported: 3
        }
    );
    for bad in [
        &br#"{"request":"ListFederates"}"#[..],
        br#"{"version":3}"#,
        br#"{"version":3,"request":{"Launch":{}}}"#,
        br#"{"version":3,"request":{"Join":{"federation":-1,"federate_type":"x"}}}"#,
        br#"{"version":3,"request":{"ListFederates":{"federation":1}}"#,
        br#"{"version":"1","request":{"ListFederates":{"federation":1}}}"#,
        b"",
        b"\xff\xfe",
        b"[]",
    ] {
        match decode_request(bad) {
            Err(WireError::Json { message }) => assert!(!message.is_empty()),
            other => panic!("{}: {other:?}", String::from_utf8_lossy(bad)),
        }
    }
    // Optional members may be left out, and unknown members are ignored (room for
    // additive changes without a version bump).
    let text = br#"{"version":3,"request":{"Join":{"federation":1,"federate_type":"x","priority":3}},"trace":"abc"}"#;
    assert!(matches!(
        decode_request(text),
        Ok(ExecRequest::Join {
            federate_name: None,
            ..
        })
    ));
    assert!(matches!(
        decode_reply(br#"{"version":3,"reply":"Ok"}"#),
        Ok(ExecReply::Ok)
    ));
}

#[test]
fn tags_are_byte_arrays() {
    let r = ExecRequest::RegisterSyncPoint {
        federation: FederationId(1),
        federate: FederateHandle(1),
        label: "L".into(),
        tag: Bytes::from_static(b"\x00A"),
        set: None,
    };
    let text = String::from_utf8(encode_request(&r)).unwrap();
    assert!(text.contains(r#""tag":[0,65]"#), "{text}");
}

proptest! {
    #![proptest_config(common::config(2000))]

    #[test]
    fn times_round_trip_bit_for_bit(v in any::<f64>()) {
        if let Some(t) = LogicalTime::new(v) {
            let json = serde_json::to_string(&t).unwrap();
            let back: LogicalTime = serde_json::from_str(&json).unwrap();
            prop_assert_eq!(back.as_f64().to_bits(), v.to_bits());
        }
    }

    #[test]
    fn random_json_never_panics(input in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = decode_request(&input);
        let _ = decode_reply(&input);
    }
}

//! Object management through the front API: names, registration and discovery,
//! updates and interactions with their tags and message information, deletion, and
//! attribute value update requests.

mod common;

use common::*;
use glidepath::{Callback, ObjectError, OrderType, RtiError, TransportationType};

#[test]
fn instance_names_are_reserved_once_and_unique() {
    let rti = federation("om-names");
    let a = join(&rti, "om-names", "a");
    let b = join(&rti, "om-names", "b");
    let n = Names::of(&a);
    a.publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    b.publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();

    a.reserve_object_instance_name("Enterprise").unwrap();
    assert_eq!(
        next(&a),
        Callback::ObjectInstanceNameReservationSucceeded {
            name: "Enterprise".into()
        }
    );
    b.reserve_object_instance_name("Enterprise").unwrap();
    assert_eq!(
        next(&b),
        Callback::ObjectInstanceNameReservationFailed {
            name: "Enterprise".into()
        }
    );
    assert_eq!(
        b.register_object_instance_with_name(n.vehicle, "Enterprise"),
        Err(RtiError::Object(
            ObjectError::ObjectInstanceNameNotReserved("Enterprise".into())
        ))
    );
    let e = a
        .register_object_instance_with_name(n.vehicle, "Enterprise")
        .unwrap();
    // In use now: neither reservable nor registrable again.
    b.reserve_object_instance_name("Enterprise").unwrap();
    assert_eq!(
        next(&b),
        Callback::ObjectInstanceNameReservationFailed {
            name: "Enterprise".into()
        }
    );
    assert_eq!(
        a.register_object_instance_with_name(n.vehicle, "Enterprise"),
        Err(RtiError::Object(ObjectError::ObjectInstanceNameInUse(
            "Enterprise".into()
        )))
    );
    // Released names are free for others.
    a.reserve_object_instance_name("Defiant").unwrap();
    assert!(matches!(
        next(&a),
        Callback::ObjectInstanceNameReservationSucceeded { .. }
    ));
    a.release_object_instance_name("Defiant").unwrap();
    assert_eq!(
        a.release_object_instance_name("Defiant"),
        Err(RtiError::Object(
            ObjectError::ObjectInstanceNameNotReserved("Defiant".into())
        ))
    );
    b.reserve_object_instance_name("Defiant").unwrap();
    assert!(matches!(
        next(&b),
        Callback::ObjectInstanceNameReservationSucceeded { .. }
    ));
    // Executive-chosen names are distinct.
    let x = a.register_object_instance(n.vehicle).unwrap();
    let y = b.register_object_instance(n.vehicle).unwrap();
    assert!(x != y && x != e);
    assert_eq!(
        a.reserve_object_instance_name(""),
        Err(RtiError::Object(ObjectError::IllegalName(String::new())))
    );
}

#[test]
fn updates_reflect_subsets_with_tag_and_message_info() {
    let rti = federation("om-updates");
    let owner = join(&rti, "om-updates", "owner");
    let sub = join(&rti, "om-updates", "sub");
    let n = Names::of(&owner);
    sub.subscribe_object_class_attributes(
        n.aircraft,
        &[n.label, n.position, n.altitude, n.callsign],
    )
    .unwrap();
    owner
        .publish_object_class_attributes(n.aircraft, &[n.label, n.position, n.altitude, n.callsign])
        .unwrap();
    owner.reserve_object_instance_name("KL1").unwrap();
    next(&owner);
    let plane = owner
        .register_object_instance_with_name(n.aircraft, "KL1")
        .unwrap();
    assert_eq!(
        next(&sub),
        Callback::DiscoverObjectInstance {
            instance: plane,
            class: n.aircraft,
            name: "KL1".into(),
            producer: owner.handle()
        }
    );

    // A subset, with a time stamp from a federate that does not regulate: receive order.
    owner
        .update_attribute_values_at(plane, [(n.altitude, b("35000"))], "climb", 12.5)
        .unwrap();
    match next(&sub) {
        Callback::ReflectAttributeValues {
            instance,
            class,
            values,
            tag,
            info,
        } => {
            assert_eq!((instance, class), (plane, n.aircraft));
            assert_eq!(values.to_vec(), vec![(n.altitude, b("35000"))]);
            assert_eq!(tag, "climb");
            assert_eq!(info.producer, owner.handle());
            assert_eq!(
                info.sent_order,
                OrderType::Receive,
                "only a regulating federate sends time-stamp order"
            );
            assert_eq!(info.received_order, OrderType::Receive);
            assert_eq!(info.transport, TransportationType::Reliable);
            assert_eq!(info.time, Some(t(12.5)));
            assert!(info.publish_time_ns > 0, "stamped by the transport");
            assert!(info.seq > 0);
        }
        other => panic!("expected a reflection, got {other:?}"),
    }
    // Values travel grouped by transportation: best-effort callsign separately.
    owner
        .update_attribute_values(plane, [(n.label, b("L")), (n.callsign, b("KLM1"))], "both")
        .unwrap();
    let mut seen = Vec::new();
    for _ in 0..2 {
        match next(&sub) {
            Callback::ReflectAttributeValues {
                values, info, tag, ..
            } => {
                assert_eq!(tag, "both");
                assert_eq!(info.time, None);
                seen.push((
                    values.iter().map(|(a, _)| *a).collect::<Vec<_>>(),
                    info.transport,
                ));
            }
            other => panic!("expected a reflection, got {other:?}"),
        }
    }
    seen.sort_by_key(|(a, _)| a[0]);
    assert_eq!(
        seen,
        vec![
            (vec![n.label], TransportationType::Reliable),
            (vec![n.callsign], TransportationType::BestEffort)
        ]
    );
    assert_eq!(
        sub.update_attribute_values(plane, [(n.label, b("x"))], ""),
        Err(RtiError::Object(ObjectError::AttributeNotOwned(n.label))),
        "only the owner updates: the subscriber knows the instance but owns none of it"
    );
}

#[test]
fn interactions_carry_parameters_tag_and_producer() {
    let rti = federation("om-interactions");
    let a = join(&rti, "om-interactions", "a");
    let b_ = join(&rti, "om-interactions", "b");
    let n = Names::of(&a);
    b_.subscribe_interaction_class(n.alert).unwrap();
    a.publish_interaction_class(n.alert).unwrap();
    for i in 0..100 {
        a.send_interaction(
            n.alert,
            [(n.message, b(&format!("alert {i}")))],
            format!("tag {i}"),
        )
        .unwrap();
    }
    let mut last_seq = 0;
    for i in 0..100 {
        match next(&b_) {
            Callback::ReceiveInteraction {
                class,
                values,
                tag,
                info,
            } => {
                assert_eq!(class, n.alert);
                assert_eq!(
                    values.to_vec(),
                    vec![(n.message, b(&format!("alert {i}")))],
                    "in send order"
                );
                assert_eq!(tag, format!("tag {i}").as_str());
                assert_eq!(info.producer, a.handle());
                assert!(info.seq > last_seq);
                last_seq = info.seq;
            }
            other => panic!("expected an interaction, got {other:?}"),
        }
    }
}

#[test]
fn deleting_removes_at_subscribers_and_needs_ownership() {
    let rti = federation("om-delete");
    let owner = join(&rti, "om-delete", "owner");
    let sub = join(&rti, "om-delete", "sub");
    let n = Names::of(&owner);
    sub.subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    owner
        .publish_object_class_attributes(n.ship, &[n.label])
        .unwrap();
    let ship = owner.register_object_instance(n.ship).unwrap();
    assert!(matches!(
        next(&sub),
        Callback::DiscoverObjectInstance { .. }
    ));
    assert_eq!(
        sub.delete_object_instance(ship, ""),
        Err(RtiError::Object(ObjectError::DeletePrivilegeNotHeld(ship)))
    );
    owner.delete_object_instance(ship, "scuttled").unwrap();
    match next(&sub) {
        Callback::RemoveObjectInstance {
            instance,
            tag,
            info,
        } => {
            assert_eq!(instance, ship);
            assert_eq!(tag, "scuttled");
            assert_eq!(info.producer, owner.handle());
        }
        other => panic!("expected removal, got {other:?}"),
    }
    assert_eq!(
        owner.delete_object_instance(ship, ""),
        Err(RtiError::Object(ObjectError::ObjectInstanceNotKnown(ship)))
    );
    assert_eq!(
        sub.object_instance_name(ship),
        None,
        "forgotten after removal"
    );
    assert_eq!(
        owner.update_attribute_values(ship, [(n.label, b("x"))], ""),
        Err(RtiError::Object(ObjectError::ObjectInstanceNotKnown(ship)))
    );
}

#[test]
fn attribute_value_update_requests_reach_the_owner() {
    let rti = federation("om-request");
    let owner = join(&rti, "om-request", "owner");
    let other_owner = join(&rti, "om-request", "other");
    let sub = join(&rti, "om-request", "sub");
    let n = Names::of(&owner);
    sub.subscribe_object_class_attributes(n.vehicle, &[n.label, n.position])
        .unwrap();
    owner
        .publish_object_class_attributes(n.aircraft, &[n.label, n.position])
        .unwrap();
    other_owner
        .publish_object_class_attributes(n.ship, &[n.label])
        .unwrap();
    let plane = owner.register_object_instance(n.aircraft).unwrap();
    let ship = other_owner.register_object_instance(n.ship).unwrap();
    wait_for(
        &sub,
        "plane discovered",
        |c| matches!(c, Callback::DiscoverObjectInstance { instance, .. } if *instance == plane),
    );

    sub.request_instance_attribute_value_update(plane, &[n.label], "please")
        .unwrap();
    assert_eq!(
        next(&owner),
        Callback::ProvideAttributeValueUpdate {
            instance: plane,
            attributes: vec![n.label],
            tag: "please".into()
        }
    );
    owner
        .update_attribute_values(plane, [(n.label, b("current"))], "provided")
        .unwrap();
    let (reflection, _) = wait_for(&sub, "the provided values", |c| {
        matches!(c, Callback::ReflectAttributeValues { .. })
    });
    assert!(
        matches!(reflection, Callback::ReflectAttributeValues { instance, tag, .. } if instance == plane && tag == "provided")
    );

    // A class-wide request reaches every owner of an instance of the class or a subclass.
    sub.request_class_attribute_value_update(n.vehicle, &[n.label], "all")
        .unwrap();
    assert_eq!(
        next(&owner),
        Callback::ProvideAttributeValueUpdate {
            instance: plane,
            attributes: vec![n.label],
            tag: "all".into()
        }
    );
    assert_eq!(
        next(&other_owner),
        Callback::ProvideAttributeValueUpdate {
            instance: ship,
            attributes: vec![n.label],
            tag: "all".into()
        }
    );

    assert_eq!(
        sub.request_instance_attribute_value_update(
            glidepath::ObjectInstanceHandle(9999),
            &[n.label],
            ""
        ),
        Err(RtiError::Object(ObjectError::ObjectInstanceNotKnown(
            glidepath::ObjectInstanceHandle(9999)
        )))
    );
}

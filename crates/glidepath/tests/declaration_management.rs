//! Declaration management through the front API: publication and subscription along
//! the class hierarchy, attribute filtering, interaction promotion, and the typed
//! errors of bad declarations and names.

mod common;

use common::*;
use glidepath::{Callback, DeclarationError, NameError, NameKind, ObjectError, RtiError};

#[test]
fn superclass_subscriber_discovers_subclass_instances_as_the_superclass() {
    let rti = federation("dm-hierarchy");
    let publisher = join(&rti, "dm-hierarchy", "publisher");
    let vehicles = join(&rti, "dm-hierarchy", "vehicles");
    let aircraft = join(&rti, "dm-hierarchy", "aircraft");
    let ships = join(&rti, "dm-hierarchy", "ships");
    let n = Names::of(&publisher);

    vehicles
        .subscribe_object_class_attributes(n.vehicle, &[n.label, n.position])
        .unwrap();
    // Subscribing both a class and its subclass: instances are known as the closest.
    aircraft
        .subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    aircraft
        .subscribe_object_class_attributes(n.aircraft, &[n.altitude])
        .unwrap();
    ships
        .subscribe_object_class_attributes(n.ship, &[n.draught])
        .unwrap();
    ships.subscribe_interaction_class(n.alert).unwrap();

    publisher
        .publish_object_class_attributes(n.aircraft, &[n.label, n.position, n.altitude, n.callsign])
        .unwrap();
    publisher.publish_interaction_class(n.alert).unwrap();
    let plane = publisher.register_object_instance(n.aircraft).unwrap();

    match next(&vehicles) {
        Callback::DiscoverObjectInstance {
            instance,
            class,
            producer,
            ..
        } => {
            assert_eq!(
                (instance, class, producer),
                (plane, n.vehicle, publisher.handle()),
                "known as the subscribed superclass"
            )
        }
        other => panic!("expected discovery, got {other:?}"),
    }
    match next(&aircraft) {
        Callback::DiscoverObjectInstance {
            instance, class, ..
        } => assert_eq!((instance, class), (plane, n.aircraft)),
        other => panic!("expected discovery, got {other:?}"),
    }

    publisher
        .update_attribute_values(
            plane,
            [
                (n.label, b("AF447")),
                (n.position, b("p")),
                (n.altitude, b("a")),
                (n.callsign, b("c")),
            ],
            "u1",
        )
        .unwrap();
    // Only subscribed attributes are reflected: label and position for `vehicles`
    // (callsign is best effort, so it travels separately and is not subscribed).
    let reflected = |f| match next(f) {
        Callback::ReflectAttributeValues {
            instance,
            class,
            values,
            tag,
            ..
        } => {
            assert_eq!(instance, plane);
            assert_eq!(tag, "u1");
            let mut attrs: Vec<_> = values.iter().map(|(a, _)| *a).collect();
            attrs.sort();
            (class, attrs)
        }
        other => panic!("expected a reflection, got {other:?}"),
    };
    assert_eq!(reflected(&vehicles), (n.vehicle, vec![n.label, n.position]));
    assert_eq!(
        reflected(&aircraft),
        (n.aircraft, vec![n.altitude]),
        "the subclass subscription's own attribute set applies"
    );

    // An update of attributes nobody at `vehicles` subscribes reflects nothing there.
    publisher
        .update_attribute_values(plane, [(n.altitude, b("a2"))], "u2")
        .unwrap();
    send_marker(&publisher, &n, "m1");
    assert!(matches!(
        next(&aircraft),
        Callback::ReflectAttributeValues { .. }
    ));
    vehicles.subscribe_interaction_class(n.alert).unwrap();
    send_marker(&publisher, &n, "m2");
    assert!(
        is_marker(&next(&vehicles), "m2"),
        "no empty reflection, no m1 (sent before subscribing)"
    );

    // The Ship subscriber never hears of the aircraft: the marker is its first callback.
    assert!(is_marker(&next(&ships), "m1"));
    assert!(is_marker(&next(&ships), "m2"));
}

#[test]
fn subscribing_late_discovers_existing_instances() {
    let rti = federation("dm-late");
    let publisher = join(&rti, "dm-late", "publisher");
    let late = join(&rti, "dm-late", "late");
    let n = Names::of(&publisher);
    publisher
        .publish_object_class_attributes(n.ship, &[n.label, n.draught])
        .unwrap();
    publisher.reserve_object_instance_name("Titanic").unwrap();
    assert!(matches!(
        next(&publisher),
        Callback::ObjectInstanceNameReservationSucceeded { .. }
    ));
    let ship = publisher
        .register_object_instance_with_name(n.ship, "Titanic")
        .unwrap();
    late.subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    assert_eq!(
        next(&late),
        Callback::DiscoverObjectInstance {
            instance: ship,
            class: n.vehicle,
            name: "Titanic".into(),
            producer: publisher.handle()
        }
    );
    assert_eq!(late.object_instance_name(ship).as_deref(), Some("Titanic"));
}

#[test]
fn unsubscribing_stops_reflections() {
    let rti = federation("dm-unsub");
    let publisher = join(&rti, "dm-unsub", "publisher");
    let sub = join(&rti, "dm-unsub", "sub");
    let n = Names::of(&publisher);
    sub.subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    sub.subscribe_interaction_class(n.alert).unwrap();
    publisher
        .publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    publisher.publish_interaction_class(n.alert).unwrap();
    let v = publisher.register_object_instance(n.vehicle).unwrap();
    assert!(matches!(
        next(&sub),
        Callback::DiscoverObjectInstance { .. }
    ));
    publisher
        .update_attribute_values(v, [(n.label, b("one"))], "")
        .unwrap();
    assert!(matches!(
        next(&sub),
        Callback::ReflectAttributeValues { .. }
    ));
    sub.unsubscribe_object_class(n.vehicle).unwrap();
    publisher
        .update_attribute_values(v, [(n.label, b("two"))], "")
        .unwrap();
    send_marker(&publisher, &n, "after");
    assert!(
        is_marker(&next(&sub), "after"),
        "no reflection after unsubscribing"
    );
    sub.unsubscribe_interaction_class(n.alert).unwrap();
    sub.subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    send_marker(&publisher, &n, "unheard");
    publisher
        .update_attribute_values(v, [(n.label, b("three"))], "")
        .unwrap();
    match next(&sub) {
        Callback::ReflectAttributeValues { values, .. } => {
            assert_eq!(values[0].1, "three", "the marker was not received")
        }
        other => panic!("expected the reflection of `three`, got {other:?}"),
    }
}

#[test]
fn interactions_are_promoted_to_the_subscribed_superclass() {
    let rti = federation("dm-interactions");
    let sender = join(&rti, "dm-interactions", "sender");
    let general = join(&rti, "dm-interactions", "general");
    let specific = join(&rti, "dm-interactions", "specific");
    let nobody = join(&rti, "dm-interactions", "nobody");
    let n = Names::of(&sender);
    general.subscribe_interaction_class(n.alert).unwrap();
    specific.subscribe_interaction_class(n.critical).unwrap();
    nobody.subscribe_interaction_class(n.fire).unwrap();
    sender.publish_interaction_class(n.critical).unwrap();
    sender.publish_interaction_class(n.fire).unwrap();
    sender
        .send_interaction(
            n.critical,
            [(n.message, b("engine fire")), (n.severity, b("5"))],
            "t",
        )
        .unwrap();

    match next(&general) {
        Callback::ReceiveInteraction { class, values, .. } => {
            assert_eq!(class, n.alert, "received as the subscribed superclass");
            assert_eq!(
                values.iter().map(|(p, _)| *p).collect::<Vec<_>>(),
                vec![n.message],
                "with only its parameters"
            );
        }
        other => panic!("expected an interaction, got {other:?}"),
    }
    match next(&specific) {
        Callback::ReceiveInteraction { class, values, .. } => {
            assert_eq!(class, n.critical);
            assert_eq!(values.len(), 2);
        }
        other => panic!("expected an interaction, got {other:?}"),
    }
    sender
        .send_interaction(n.fire, [(n.target, b("x"))], "")
        .unwrap();
    assert!(
        matches!(next(&nobody), Callback::ReceiveInteraction { class, .. } if class == n.fire),
        "Fire subscriber got no Alert"
    );
}

#[test]
fn bad_declarations_and_names_give_typed_errors() {
    let rti = federation("dm-errors");
    let f = join(&rti, "dm-errors", "f");
    let n = Names::of(&f);
    assert_eq!(
        f.publish_object_class_attributes(n.ship, &[n.altitude]),
        Err(RtiError::Declaration(
            DeclarationError::AttributeNotDefined {
                class: n.ship,
                attribute: n.altitude
            }
        ))
    );
    assert_eq!(
        f.register_object_instance(n.ship),
        Err(RtiError::Object(ObjectError::ObjectClassNotPublished(
            n.ship
        )))
    );
    assert_eq!(
        f.send_interaction(n.alert, [(n.message, b("x"))], ""),
        Err(RtiError::Object(ObjectError::InteractionClassNotPublished(
            n.alert
        )))
    );
    f.publish_interaction_class(n.alert).unwrap();
    assert_eq!(
        f.send_interaction(n.alert, [(n.severity, b("x"))], ""),
        Err(RtiError::Object(
            ObjectError::InteractionParameterNotDefined {
                class: n.alert,
                parameter: n.severity
            }
        ))
    );
    f.publish_object_class_attributes(n.aircraft, &[n.label])
        .unwrap();
    let plane = f.register_object_instance(n.aircraft).unwrap();
    assert_eq!(
        f.update_attribute_values(plane, [(n.altitude, b("x"))], ""),
        Err(RtiError::Object(ObjectError::AttributeNotOwned(n.altitude)))
    );
    f.unpublish_object_class(n.aircraft).unwrap();
    assert_eq!(
        f.register_object_instance(n.aircraft),
        Err(RtiError::Object(ObjectError::ObjectClassNotPublished(
            n.aircraft
        )))
    );

    assert_eq!(
        f.object_class_handle("Submarine"),
        Err(NameError::NameNotFound {
            kind: NameKind::ObjectClass,
            name: "Submarine".into()
        })
    );
    assert_eq!(
        f.attribute_handle(n.ship, "altitude"),
        Err(NameError::NameNotFound {
            kind: NameKind::Attribute(n.ship),
            name: "altitude".into()
        })
    );
    assert_eq!(
        f.interaction_class_handle("Nope").unwrap_err().to_string(),
        "no interaction class named `Nope` in the FOM"
    );
    assert!(matches!(
        f.parameter_handle(n.alert, "severity"),
        Err(NameError::NameNotFound { .. })
    ));
    assert_eq!(
        f.attribute_handle(glidepath::ObjectClassHandle(999), "x"),
        Err(NameError::InvalidObjectClassHandle(
            glidepath::ObjectClassHandle(999)
        ))
    );
    // Reverse lookups and inherited names.
    assert_eq!(
        f.object_class_name(n.aircraft).unwrap(),
        "HLAobjectRoot.Vehicle.Aircraft"
    );
    assert_eq!(
        f.attribute_handle(n.aircraft, "label").unwrap(),
        n.label,
        "inherited attributes resolve through the subclass"
    );
    assert_eq!(f.attribute_name(n.callsign).unwrap(), "callsign");
    assert_eq!(
        f.interaction_class_name(n.critical).unwrap(),
        "HLAinteractionRoot.Alert.CriticalAlert"
    );
    assert_eq!(
        f.parameter_handle(n.critical, "message").unwrap(),
        n.message
    );
    assert_eq!(f.parameter_name(n.severity).unwrap(), "severity");
}

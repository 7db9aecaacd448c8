//! Federation management through the front API: create and destroy, join and resign,
//! listing federates, resign actions and synchronization points.

mod common;

use std::fs;

use common::*;
use glidepath::{
    Callback, FederateHandle, FederationError, JoinOptions, ObjectError, ResignAction, Rti,
    RtiError,
};

#[test]
fn create_and_destroy_report_typed_errors() {
    let rti = federation("fm-create");
    assert_eq!(
        rti.create_federation_execution_with_fom("fm-create", vehicles_fom()),
        Err(RtiError::Federation(
            FederationError::FederationExecutionAlreadyExists("fm-create".into())
        ))
    );
    assert_eq!(
        rti.destroy_federation_execution("nope"),
        Err(RtiError::Federation(
            FederationError::FederationExecutionDoesNotExist("nope".into())
        ))
    );
    let a = join(&rti, "fm-create", "a");
    assert_eq!(
        rti.destroy_federation_execution("fm-create"),
        Err(RtiError::Federation(
            FederationError::FederatesCurrentlyJoined {
                name: "fm-create".into(),
                count: 1
            }
        ))
    );
    a.resign(ResignAction::NoAction).unwrap();
    rti.destroy_federation_execution("fm-create").unwrap();
    assert!(matches!(
        rti.join("fm-create", JoinOptions::named("late", "test")),
        Err(RtiError::Federation(
            FederationError::FederationExecutionDoesNotExist(_)
        ))
    ));
    // The name is free again.
    rti.create_federation_execution_with_fom("fm-create", vehicles_fom())
        .unwrap();
}

#[test]
fn create_from_files_and_fom_errors_name_the_place() {
    let rti = Rti::inproc();
    rti.create_federation_execution("fm-files", &[data_path("vehicles.xml")])
        .unwrap();
    let f = join(&rti, "fm-files", "a");
    assert!(f.object_class_handle("Vehicle.Aircraft").is_ok());

    let missing = data_path("does-not-exist.xml");
    match rti.create_federation_execution("fm-missing", &[&missing]) {
        Err(RtiError::Federation(FederationError::ErrorReadingFdd(m))) => {
            assert!(
                m.contains("does-not-exist.xml"),
                "the message names the file: {m}"
            )
        }
        other => panic!("expected ErrorReadingFdd, got {other:?}"),
    }

    let text = fs::read_to_string(data_path("vehicles.xml")).unwrap();
    let truncated =
        std::env::temp_dir().join(format!("glidepath-truncated-{}.xml", std::process::id()));
    let cut = (0..=text.len() / 2)
        .rev()
        .find(|i| text.is_char_boundary(*i))
        .unwrap();
    fs::write(&truncated, &text[..cut]).unwrap();
    let result = rti.create_federation_execution("fm-truncated", &[&truncated]);
    fs::remove_file(&truncated).unwrap();
    match result {
        Err(RtiError::Federation(FederationError::ErrorReadingFdd(m))) => {
            let prefix = format!("{}:", truncated.display());
            assert!(m.starts_with(&prefix), "file:line:col first: {m}");
            let position: Vec<&str> = m[prefix.len()..].splitn(3, ':').collect();
            assert!(
                position.len() == 3
                    && position[0].parse::<u32>().is_ok()
                    && position[1].parse::<u32>().is_ok(),
                "line and column: {m}"
            );
        }
        other => panic!("expected ErrorReadingFdd, got {other:?}"),
    }
    let no_paths: [&str; 0] = [];
    assert!(matches!(
        rti.create_federation_execution("fm-none", &no_paths),
        Err(RtiError::Federation(FederationError::ErrorReadingFdd(_)))
    ));
}

#[test]
fn join_names_are_unique_and_listed() {
    let rti = federation("fm-join");
    assert!(matches!(
        rti.join("fm-nope", JoinOptions::default()),
        Err(RtiError::Federation(
            FederationError::FederationExecutionDoesNotExist(_)
        ))
    ));
    let a = rti
        .join("fm-join", JoinOptions::named("alpha", "radar"))
        .unwrap();
    assert_eq!(
        rti.join("fm-join", JoinOptions::named("alpha", "other"))
            .err(),
        Some(RtiError::Federation(
            FederationError::FederateNameAlreadyInUse("alpha".into())
        ))
    );
    let anonymous = rti.join("fm-join", JoinOptions::default()).unwrap();
    assert_eq!(
        anonymous.name(),
        format!("HLAfederate{}", anonymous.handle().0)
    );
    let c = rti
        .join("fm-join", JoinOptions::named("gamma", "display"))
        .unwrap();
    assert_eq!(a.name(), "alpha");
    assert_eq!(a.federation_name(), "fm-join");

    let listed: Vec<(String, String)> = c
        .list_federates()
        .unwrap()
        .into_iter()
        .map(|i| (i.name, i.federate_type))
        .collect();
    assert_eq!(
        listed,
        vec![
            ("alpha".to_string(), "radar".to_string()),
            (anonymous.name().to_string(), "glidepath".to_string()),
            ("gamma".to_string(), "display".to_string()),
        ]
    );
    anonymous.resign(ResignAction::NoAction).unwrap();
    let names: Vec<String> = a
        .list_federates()
        .unwrap()
        .into_iter()
        .map(|i| i.name)
        .collect();
    assert_eq!(names, ["alpha", "gamma"]);
    // A resigned federate refuses every service; its name is free again.
    assert!(anonymous.is_resigned());
    assert_eq!(
        anonymous.list_federates().err(),
        Some(RtiError::Federation(
            FederationError::FederateNotExecutionMember
        ))
    );
    assert_eq!(
        anonymous.resign(ResignAction::NoAction).err(),
        Some(RtiError::Federation(
            FederationError::FederateNotExecutionMember
        ))
    );
    a.resign(ResignAction::NoAction).unwrap();
    rti.join("fm-join", JoinOptions::named("alpha", "again"))
        .unwrap();
}

#[test]
fn immediate_model_needs_an_ambassador() {
    let rti = federation("fm-immediate");
    let options =
        JoinOptions::named("x", "test").with_process_model(glidepath::ProcessModel::Immediate);
    match rti.join("fm-immediate", options) {
        Err(e) => assert!(
            e.to_string().contains("join_immediate"),
            "the message says what to do: {e}"
        ),
        Ok(_) => panic!("join with the immediate model and no ambassador must fail"),
    }
    // The failed attempt left nothing joined.
    rti.destroy_federation_execution("fm-immediate").unwrap();
}

#[test]
fn resign_actions_decide_what_happens_to_owned_objects() {
    let rti = federation("fm-resign");
    let watcher = join(&rti, "fm-resign", "watcher");
    let marker_sender = join(&rti, "fm-resign", "marker");
    let n = Names::of(&watcher);
    watcher
        .subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    watcher.subscribe_interaction_class(n.alert).unwrap();
    marker_sender.publish_interaction_class(n.alert).unwrap();

    let owner = |name: &str| {
        let f = join(&rti, "fm-resign", name);
        f.publish_object_class_attributes(n.vehicle, &[n.label])
            .unwrap();
        let object_name = format!("{name}-object");
        f.reserve_object_instance_name(&object_name).unwrap();
        assert!(matches!(
            next(&f),
            Callback::ObjectInstanceNameReservationSucceeded { .. }
        ));
        let obj = f
            .register_object_instance_with_name(n.vehicle, &object_name)
            .unwrap();
        match next(&watcher) {
            Callback::DiscoverObjectInstance { instance, name, .. } => {
                assert_eq!((instance, name), (obj, object_name))
            }
            other => panic!("expected discovery, got {other:?}"),
        }
        (f, obj)
    };

    // NoAction with an owned object is refused and leaves the federate joined.
    let (keeper, kept) = owner("keeper");
    assert_eq!(
        keeper.resign(ResignAction::NoAction),
        Err(RtiError::Federation(
            FederationError::FederateOwnsAttributes(1)
        ))
    );
    assert!(!keeper.is_resigned());

    // DeleteObjects removes the object at subscribers.
    keeper.resign(ResignAction::DeleteObjects).unwrap();
    match next(&watcher) {
        Callback::RemoveObjectInstance { instance, info, .. } => {
            assert_eq!(instance, kept);
            assert_eq!(info.producer, keeper.handle());
        }
        other => panic!("expected removal, got {other:?}"),
    }

    // Divesting leaves the object in place: the next callback is the marker sent
    // after the resign returned (inproc delivers before publish returns).
    let (diver, divested) = owner("diver");
    diver
        .resign(ResignAction::UnconditionallyDivestAttributes)
        .unwrap();
    send_marker(&marker_sender, &n, "after divest");
    assert!(
        is_marker(&next(&watcher), "after divest"),
        "a divested object is not removed"
    );
    assert_eq!(
        watcher.object_instance_name(divested).as_deref(),
        Some("diver-object"),
        "the watcher still knows the divested object"
    );
    // A federate subscribing later still discovers the divested object, from nobody.
    let late = join(&rti, "fm-resign", "late-subscriber");
    late.subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    match next(&late) {
        Callback::DiscoverObjectInstance {
            instance,
            name,
            producer,
            ..
        } => {
            assert_eq!((instance, name.as_str()), (divested, "diver-object"));
            assert_eq!(producer, FederateHandle::EXECUTIVE);
        }
        other => panic!("expected discovery of the divested object, got {other:?}"),
    }
    // Its name stays in use; the deleted object's name is free.
    marker_sender
        .reserve_object_instance_name("keeper-object")
        .unwrap();
    assert!(matches!(
        next(&marker_sender),
        Callback::ObjectInstanceNameReservationSucceeded { .. }
    ));
    marker_sender
        .reserve_object_instance_name("diver-object")
        .unwrap();
    assert!(matches!(
        next(&marker_sender),
        Callback::ObjectInstanceNameReservationFailed { .. }
    ));
}

#[test]
fn dropping_the_last_handle_resigns_and_deletes_objects() {
    let rti = federation("fm-drop");
    let watcher = join(&rti, "fm-drop", "watcher");
    let n = Names::of(&watcher);
    watcher
        .subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let owner = join(&rti, "fm-drop", "owner");
    owner
        .publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let obj = owner.register_object_instance(n.vehicle).unwrap();
    assert!(matches!(
        next(&watcher),
        Callback::DiscoverObjectInstance { .. }
    ));
    let clone = owner.clone();
    drop(owner);
    // A clone keeps it joined.
    assert_eq!(watcher.list_federates().unwrap().len(), 2);
    drop(clone);
    match next(&watcher) {
        Callback::RemoveObjectInstance { instance, .. } => assert_eq!(instance, obj),
        other => panic!("expected removal, got {other:?}"),
    }
    assert_eq!(watcher.list_federates().unwrap().len(), 1);
}

#[test]
fn synchronization_point_for_everyone() {
    let rti = federation("fm-sync");
    let feds: Vec<_> = (0..3)
        .map(|i| join(&rti, "fm-sync", &format!("f{i}")))
        .collect();
    feds[0]
        .register_federation_synchronization_point("ready", "tag-1")
        .unwrap();
    assert_eq!(
        next(&feds[0]),
        Callback::SynchronizationPointRegistrationSucceeded {
            label: "ready".into()
        }
    );
    for f in &feds {
        assert_eq!(
            wait_for(f, "announce", |c| matches!(
                c,
                Callback::AnnounceSynchronizationPoint { .. }
            ))
            .0,
            Callback::AnnounceSynchronizationPoint {
                label: "ready".into(),
                tag: "tag-1".into()
            }
        );
    }
    // A label in use is refused through the callback, not an error.
    feds[1]
        .register_federation_synchronization_point("ready", "")
        .unwrap();
    assert!(
        matches!(next(&feds[1]), Callback::SynchronizationPointRegistrationFailed { label, .. } if label == "ready")
    );
    feds[0].synchronization_point_achieved("ready").unwrap();
    feds[1].synchronization_point_failed("ready").unwrap();
    feds[2].synchronization_point_achieved("ready").unwrap();
    for f in &feds {
        assert_eq!(
            next(f),
            Callback::FederationSynchronized {
                label: "ready".into(),
                failed: vec![feds[1].handle()]
            }
        );
    }
    // Done: the label is no longer announced.
    assert_eq!(
        feds[0].synchronization_point_achieved("ready"),
        Err(RtiError::Federation(
            FederationError::SynchronizationPointLabelNotAnnounced("ready".into())
        ))
    );
}

#[test]
fn synchronization_point_for_a_subset_waits_for_a_late_achiever() {
    let rti = federation("fm-sync-subset");
    let a = join(&rti, "fm-sync-subset", "a");
    let b = join(&rti, "fm-sync-subset", "b");
    let outsider = join(&rti, "fm-sync-subset", "outsider");
    a.register_federation_synchronization_point_for("pair", "", &[a.handle(), b.handle()])
        .unwrap();
    assert!(matches!(
        next(&a),
        Callback::SynchronizationPointRegistrationSucceeded { .. }
    ));
    assert!(
        matches!(next(&a), Callback::AnnounceSynchronizationPoint { label, .. } if label == "pair")
    );
    assert!(
        matches!(next(&b), Callback::AnnounceSynchronizationPoint { label, .. } if label == "pair")
    );
    assert_eq!(
        outsider.synchronization_point_achieved("pair"),
        Err(RtiError::Federation(
            FederationError::SynchronizationPointLabelNotAnnounced("pair".into())
        ))
    );

    // a achieves; b is late. A probe point registered afterwards is announced to a
    // before any synchronization: notifications arrive in the executive's order.
    a.synchronization_point_achieved("pair").unwrap();
    outsider
        .register_federation_synchronization_point("probe", "")
        .unwrap();
    assert!(
        matches!(next(&a), Callback::AnnounceSynchronizationPoint { label, .. } if label == "probe"),
        "not synchronized before b achieves"
    );
    assert!(matches!(
        next(&outsider),
        Callback::SynchronizationPointRegistrationSucceeded { .. }
    ));
    assert!(
        matches!(next(&outsider), Callback::AnnounceSynchronizationPoint { label, .. } if label == "probe"),
        "the outsider sees only the probe"
    );

    b.synchronization_point_achieved("pair").unwrap();
    let synced = Callback::FederationSynchronized {
        label: "pair".into(),
        failed: vec![],
    };
    assert_eq!(next(&a), synced);
    assert_eq!(
        wait_for(&b, "pair synchronized", |c| matches!(
            c,
            Callback::FederationSynchronized { .. }
        ))
        .0,
        synced
    );
    // The outsider's next executive callback is the probe's completion, not "pair".
    for f in [&a, &b, &outsider] {
        f.synchronization_point_achieved("probe").unwrap();
    }
    assert_eq!(
        next(&outsider),
        Callback::FederationSynchronized {
            label: "probe".into(),
            failed: vec![]
        }
    );
}

#[test]
fn registering_for_a_federate_not_joined_fails() {
    let rti = federation("fm-sync-bad");
    let a = join(&rti, "fm-sync-bad", "a");
    a.register_federation_synchronization_point_for(
        "x",
        "",
        &[a.handle(), glidepath::FederateHandle(999)],
    )
    .unwrap();
    assert!(
        matches!(next(&a), Callback::SynchronizationPointRegistrationFailed { label, .. } if label == "x")
    );
}

#[test]
fn a_resigning_member_no_longer_holds_a_point_back() {
    let rti = federation("fm-sync-resign");
    let a = join(&rti, "fm-sync-resign", "a");
    let b = join(&rti, "fm-sync-resign", "b");
    a.register_federation_synchronization_point("bye", "")
        .unwrap();
    wait_for(&a, "announce", |c| {
        matches!(c, Callback::AnnounceSynchronizationPoint { .. })
    });
    a.synchronization_point_achieved("bye").unwrap();
    b.resign(ResignAction::NoAction).unwrap();
    assert_eq!(
        next(&a),
        Callback::FederationSynchronized {
            label: "bye".into(),
            failed: vec![]
        }
    );
}

#[test]
fn object_errors_pass_through_unchanged() {
    let rti = federation("fm-errors");
    let a = join(&rti, "fm-errors", "a");
    assert_eq!(
        a.reserve_object_instance_name("HLAreserved"),
        Err(RtiError::Object(ObjectError::IllegalName(
            "HLAreserved".into()
        )))
    );
}

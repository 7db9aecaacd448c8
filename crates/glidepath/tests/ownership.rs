//! Ownership management through the front API, on both transports: a pilot station
//! takes an aircraft's position attributes from the target generator that
//! registered it, the generator's further updates of them are refused, a radar sees
//! the pilot's updates, and ownership returns by negotiated divestiture. Over NATS
//! each federate has its own RTI (its own connection), as if in its own process, and
//! the executive server serialises every transfer.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) the NATS tests fail
//! and say how to install it: `bash scripts/test.sh`.

mod common;

use common::*;
use glidepath::backend::nats::NatsTestbed;
use glidepath::{
    Callback, FederateHandle, FederationError, ObjectError, OwnershipError, ResignAction, Rti,
    RtiError,
};

/// Waits for a reflection of `instance` carrying `attribute` and returns its producer.
fn reflected_by(
    f: &glidepath::Federate,
    instance: glidepath::ObjectInstanceHandle,
    attribute: glidepath::AttributeHandle,
    value: &str,
) -> FederateHandle {
    match wait_for(f, "a reflection", |c| {
        matches!(c, Callback::ReflectAttributeValues { instance: i, values, .. }
            if *i == instance && values.iter().any(|(a, v)| *a == attribute && v == value.as_bytes()))
    })
    .0
    {
        Callback::ReflectAttributeValues { info, .. } => info.producer,
        _ => unreachable!(),
    }
}

/// The pilot-station handover, on three RTIs (one per federate; the same RTI three
/// times on `inproc`).
fn pilot_station_handover(rti_generator: &Rti, rti_pilot: &Rti, rti_radar: &Rti) {
    const NAME: &str = "handover";
    let generator = join(rti_generator, NAME, "generator");
    let pilot = join(rti_pilot, NAME, "pilot");
    let radar = join(rti_radar, NAME, "radar");
    let n = Names::of(&generator);
    let moving = [n.position, n.altitude];
    for f in [&generator, &pilot] {
        f.publish_object_class_attributes(n.aircraft, &[n.position, n.altitude, n.callsign])
            .unwrap();
    }
    pilot
        .subscribe_object_class_attributes(n.aircraft, &[n.position, n.altitude])
        .unwrap();
    radar
        .subscribe_object_class_attributes(n.aircraft, &[n.position, n.altitude, n.callsign])
        .unwrap();

    // The generator registers the aircraft and owns what it publishes.
    let aircraft = generator.register_object_instance(n.aircraft).unwrap();
    for f in [&pilot, &radar] {
        wait_for(
            f,
            "the discovery",
            |c| matches!(c, Callback::DiscoverObjectInstance { instance, .. } if *instance == aircraft),
        );
    }
    assert!(generator
        .is_attribute_owned_by_federate(aircraft, n.position)
        .unwrap());
    assert!(!pilot
        .is_attribute_owned_by_federate(aircraft, n.position)
        .unwrap());
    generator
        .update_attribute_values(aircraft, [(n.position, b("gen-1"))], "")
        .unwrap();
    assert_eq!(
        reflected_by(&radar, aircraft, n.position, "gen-1"),
        generator.handle()
    );
    // Before the handover the pilot may not update.
    assert_eq!(
        pilot.update_attribute_values(aircraft, [(n.position, b("early"))], ""),
        Err(RtiError::Object(ObjectError::AttributeNotOwned(n.position)))
    );

    // The pilot asks; the generator is asked to release, and does.
    pilot
        .attribute_ownership_acquisition(aircraft, &moving, "pilot takes over")
        .unwrap();
    let (asked, _) = wait_for(&generator, "a release request", |c| {
        matches!(c, Callback::RequestAttributeOwnershipRelease { .. })
    });
    assert_eq!(
        asked,
        Callback::RequestAttributeOwnershipRelease {
            instance: aircraft,
            attributes: moving.to_vec(),
            tag: b("pilot takes over"),
        }
    );
    let released = generator
        .attribute_ownership_divestiture_if_wanted(aircraft, &moving)
        .unwrap();
    assert_eq!(released, moving.to_vec());
    // The generator's further updates of them are refused at the call; what it
    // still owns it may still update.
    assert_eq!(
        generator.update_attribute_values(aircraft, [(n.position, b("gen-2"))], ""),
        Err(RtiError::Object(ObjectError::AttributeNotOwned(n.position)))
    );
    generator
        .update_attribute_values(aircraft, [(n.callsign, b("KLM1"))], "")
        .unwrap();
    let (granted, _) = wait_for(&pilot, "the acquisition", |c| {
        matches!(
            c,
            Callback::AttributeOwnershipAcquisitionNotification { .. }
        )
    });
    match granted {
        Callback::AttributeOwnershipAcquisitionNotification {
            instance,
            attributes,
            ..
        } => {
            assert_eq!(instance, aircraft);
            assert_eq!(attributes, moving.to_vec());
        }
        _ => unreachable!(),
    }
    assert!(pilot
        .is_attribute_owned_by_federate(aircraft, n.position)
        .unwrap());
    assert!(!generator
        .is_attribute_owned_by_federate(aircraft, n.position)
        .unwrap());
    pilot
        .update_attribute_values(aircraft, [(n.position, b("pilot-1"))], "")
        .unwrap();
    assert_eq!(
        reflected_by(&radar, aircraft, n.position, "pilot-1"),
        pilot.handle()
    );
    radar
        .query_attribute_ownership(aircraft, n.position)
        .unwrap();
    let (informed, _) = wait_for(&radar, "the owner", |c| {
        matches!(c, Callback::InformAttributeOwnership { .. })
    });
    assert_eq!(
        informed,
        Callback::InformAttributeOwnership {
            instance: aircraft,
            attribute: n.position,
            owner: pilot.handle(),
        }
    );

    // Ownership returns: the pilot offers, the generator takes if available, the
    // pilot confirms.
    pilot
        .negotiated_attribute_ownership_divestiture(aircraft, &moving, "handing back")
        .unwrap();
    let (offered, _) = wait_for(&generator, "the offer", |c| {
        matches!(c, Callback::RequestAttributeOwnershipAssumption { .. })
    });
    assert_eq!(
        offered,
        Callback::RequestAttributeOwnershipAssumption {
            instance: aircraft,
            attributes: moving.to_vec(),
            tag: b("handing back"),
        }
    );
    generator
        .attribute_ownership_acquisition_if_available(aircraft, &moving)
        .unwrap();
    wait_for(
        &pilot,
        "the confirmation request",
        |c| matches!(c, Callback::RequestDivestitureConfirmation { attributes, .. } if *attributes == moving.to_vec()),
    );
    // Offered but not yet divested: the pilot still owns and may update.
    pilot
        .update_attribute_values(aircraft, [(n.position, b("pilot-2"))], "")
        .unwrap();
    pilot
        .confirm_divestiture(aircraft, &moving, "yours")
        .unwrap();
    assert_eq!(
        pilot.update_attribute_values(aircraft, [(n.position, b("late"))], ""),
        Err(RtiError::Object(ObjectError::AttributeNotOwned(n.position)))
    );
    wait_for(
        &generator,
        "the acquisition",
        |c| matches!(c, Callback::AttributeOwnershipAcquisitionNotification { tag, .. } if tag == "yours"),
    );
    generator
        .update_attribute_values(aircraft, [(n.position, b("gen-3"))], "")
        .unwrap();
    assert_eq!(
        reflected_by(&radar, aircraft, n.position, "gen-3"),
        generator.handle()
    );
    for f in [radar, pilot, generator] {
        f.resign(ResignAction::NoAction).unwrap_or_else(|e| {
            // Only the generator owns anything, and it deletes its aircraft.
            assert_eq!(
                e,
                RtiError::Federation(FederationError::FederateOwnsAttributes(1))
            );
            f.resign(ResignAction::DeleteObjects).unwrap()
        });
    }
}

#[test]
fn the_pilot_station_takes_the_aircraft_and_hands_it_back_inproc() {
    let rti = federation("handover");
    pilot_station_handover(&rti, &rti, &rti);
    rti.destroy_federation_execution("handover").unwrap();
}

#[test]
fn the_pilot_station_takes_the_aircraft_and_hands_it_back_over_nats() {
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let rtis: Vec<Rti> = (0..3)
        .map(|_| Rti::nats(&testbed.url()).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    rtis[0]
        .create_federation_execution_with_fom("handover", vehicles_fom())
        .unwrap();
    pilot_station_handover(&rtis[0], &rtis[1], &rtis[2]);
    rtis[0].destroy_federation_execution("handover").unwrap();
}

/// Two acquirers on two connections race for the same attribute, twenty times: the
/// executive server serialises them, so exactly one wins each round (the other is
/// refused when the winner denies the release it is then asked for), the winner may
/// update and the loser may not.
#[test]
fn racing_acquirers_over_nats_never_both_win() {
    const NAME: &str = "race";
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let rtis: Vec<Rti> = (0..3)
        .map(|_| Rti::nats(&testbed.url()).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    rtis[0]
        .create_federation_execution_with_fom(NAME, vehicles_fom())
        .unwrap();
    let feds: Vec<glidepath::Federate> = ["a", "b", "c"]
        .iter()
        .zip(&rtis)
        .map(|(name, rti)| join(rti, NAME, name))
        .collect();
    let n = Names::of(&feds[0]);
    for f in &feds {
        f.publish_object_class_attributes(n.aircraft, &[n.position])
            .unwrap();
    }
    for f in &feds[1..] {
        f.subscribe_object_class_attributes(n.aircraft, &[n.position])
            .unwrap();
    }
    let aircraft = feds[0].register_object_instance(n.aircraft).unwrap();
    for f in &feds[1..] {
        wait_for(f, "the discovery", |c| {
            matches!(c, Callback::DiscoverObjectInstance { .. })
        });
    }
    let mut owner = 0;
    for round in 0..20 {
        let racers: Vec<usize> = (0..3).filter(|i| *i != owner).collect();
        let won: Vec<bool> = std::thread::scope(|s| {
            let runs: Vec<_> = racers
                .iter()
                .map(|&i| {
                    let f = &feds[i];
                    let position = n.position;
                    s.spawn(move || {
                        f.attribute_ownership_acquisition(aircraft, &[position], "")
                            .unwrap();
                        let (mut won, mut denied) = (false, false);
                        loop {
                            match next(f) {
                                Callback::AttributeOwnershipAcquisitionNotification { .. } => {
                                    won = true
                                }
                                Callback::RequestAttributeOwnershipRelease {
                                    attributes, ..
                                } => {
                                    f.attribute_ownership_release_denied(aircraft, &attributes)
                                        .unwrap();
                                    denied = true;
                                }
                                Callback::AttributeOwnershipUnavailable { .. } => return false,
                                _ => {}
                            }
                            if won && denied {
                                return true;
                            }
                        }
                    })
                })
                .collect();
            // The owner is asked once, however many wait, and releases.
            wait_for(&feds[owner], "a release request", |c| {
                matches!(c, Callback::RequestAttributeOwnershipRelease { .. })
            });
            assert_eq!(
                feds[owner]
                    .attribute_ownership_divestiture_if_wanted(aircraft, &[n.position])
                    .unwrap(),
                vec![n.position]
            );
            runs.into_iter().map(|r| r.join().unwrap()).collect()
        });
        assert_eq!(
            won.iter().filter(|w| **w).count(),
            1,
            "round {round}: exactly one winner, got {won:?}"
        );
        let winner = racers[won.iter().position(|w| *w).unwrap()];
        for (i, f) in feds.iter().enumerate() {
            assert_eq!(
                f.is_attribute_owned_by_federate(aircraft, n.position)
                    .unwrap(),
                i == winner,
                "round {round}: federate {i}"
            );
            let update = f.update_attribute_values(aircraft, [(n.position, b("x"))], "");
            if i == winner {
                update.unwrap();
            } else {
                assert_eq!(
                    update,
                    Err(RtiError::Object(ObjectError::AttributeNotOwned(n.position)))
                );
            }
        }
        owner = winner;
    }
    for f in feds {
        f.resign(ResignAction::CancelThenDeleteThenDivest).unwrap();
    }
    rtis[0].destroy_federation_execution(NAME).unwrap();
}

/// Release denied, cancellation, the local checks, queries of unowned attributes, and
/// the resign actions with pending acquisitions and shared instances.
#[test]
fn denied_cancelled_and_resigned_acquisitions_all_end() {
    let rti = federation("denials");
    let generator = join(&rti, "denials", "generator");
    let pilot = join(&rti, "denials", "pilot");
    let n = Names::of(&generator);
    generator
        .publish_object_class_attributes(n.aircraft, &[n.position, n.altitude])
        .unwrap();
    pilot
        .subscribe_object_class_attributes(n.aircraft, &[n.position])
        .unwrap();
    let aircraft = generator.register_object_instance(n.aircraft).unwrap();
    wait_for(&pilot, "the discovery", |c| {
        matches!(c, Callback::DiscoverObjectInstance { .. })
    });
    // Acquire only what you publish.
    assert_eq!(
        pilot.attribute_ownership_acquisition(aircraft, &[n.position], ""),
        Err(RtiError::Ownership(
            OwnershipError::ObjectClassNotPublished(n.aircraft)
        ))
    );
    pilot
        .publish_object_class_attributes(n.aircraft, &[n.position])
        .unwrap();
    assert_eq!(
        pilot.attribute_ownership_acquisition(aircraft, &[n.altitude], ""),
        Err(RtiError::Ownership(OwnershipError::AttributeNotPublished(
            n.altitude
        )))
    );
    // Denied: the acquisition ends as unavailable.
    pilot
        .attribute_ownership_acquisition(aircraft, &[n.position], "please")
        .unwrap();
    assert_eq!(
        pilot.attribute_ownership_acquisition(aircraft, &[n.position], ""),
        Err(RtiError::Ownership(
            OwnershipError::AttributeAlreadyBeingAcquired(n.position)
        ))
    );
    wait_for(&generator, "a release request", |c| {
        matches!(c, Callback::RequestAttributeOwnershipRelease { .. })
    });
    generator
        .attribute_ownership_release_denied(aircraft, &[n.position])
        .unwrap();
    wait_for(
        &pilot,
        "unavailable",
        |c| matches!(c, Callback::AttributeOwnershipUnavailable { attributes, .. } if *attributes == vec![n.position]),
    );
    // If available: owned and not offered, so unavailable at once.
    pilot
        .attribute_ownership_acquisition_if_available(aircraft, &[n.position])
        .unwrap();
    wait_for(&pilot, "unavailable", |c| {
        matches!(c, Callback::AttributeOwnershipUnavailable { .. })
    });
    // Cancelled: confirmed, and the owner's later release finds nobody waiting.
    pilot
        .attribute_ownership_acquisition(aircraft, &[n.position], "again")
        .unwrap();
    pilot
        .cancel_attribute_ownership_acquisition(aircraft, &[n.position])
        .unwrap();
    wait_for(&pilot, "the cancellation", |c| {
        matches!(
            c,
            Callback::ConfirmAttributeOwnershipAcquisitionCancellation { .. }
        )
    });
    assert_eq!(
        pilot.cancel_attribute_ownership_acquisition(aircraft, &[n.position]),
        Err(RtiError::Ownership(
            OwnershipError::AttributeAcquisitionWasNotRequested(n.position)
        ))
    );
    assert_eq!(
        generator.attribute_ownership_divestiture_if_wanted(aircraft, &[n.position]),
        Ok(Vec::new())
    );
    assert_eq!(
        generator.confirm_divestiture(aircraft, &[n.position], ""),
        Err(RtiError::Ownership(
            OwnershipError::AttributeDivestitureWasNotRequested(n.position)
        ))
    );
    // Unconditional divestiture leaves the attribute unowned, and the pilot, which
    // publishes it, is offered it.
    generator
        .unconditional_attribute_ownership_divestiture(aircraft, &[n.position])
        .unwrap();
    wait_for(&pilot, "the offer", |c| {
        matches!(c, Callback::RequestAttributeOwnershipAssumption { .. })
    });
    pilot
        .query_attribute_ownership(aircraft, n.position)
        .unwrap();
    wait_for(
        &pilot,
        "not owned",
        |c| matches!(c, Callback::AttributeIsNotOwned { attribute, .. } if *attribute == n.position),
    );
    // Unowned attributes are acquired at once, in the reply.
    pilot
        .attribute_ownership_acquisition_if_available(aircraft, &[n.position])
        .unwrap();
    assert!(pilot
        .is_attribute_owned_by_federate(aircraft, n.position)
        .unwrap());
    // The pilot now acquires altitude too; it cannot resign without cancelling.
    pilot
        .publish_object_class_attributes(n.aircraft, &[n.altitude])
        .unwrap();
    pilot
        .attribute_ownership_acquisition(aircraft, &[n.altitude], "")
        .unwrap();
    assert_eq!(
        pilot.resign(ResignAction::DeleteObjectsThenDivest),
        Err(RtiError::Federation(
            FederationError::OwnershipAcquisitionPending(1)
        ))
    );
    assert_eq!(
        pilot.unpublish_object_class(n.aircraft),
        Err(RtiError::Declaration(
            glidepath::DeclarationError::OwnershipAcquisitionPending(n.altitude)
        ))
    );
    // The generator deletes the aircraft: the pilot's acquisition ends, and it owns
    // nothing of the deleted instance.
    generator.delete_object_instance(aircraft, "gone").unwrap();
    wait_for(
        &pilot,
        "unavailable",
        |c| matches!(c, Callback::AttributeOwnershipUnavailable { attributes, .. } if *attributes == vec![n.altitude]),
    );
    wait_for(&pilot, "the removal", |c| {
        matches!(c, Callback::RemoveObjectInstance { .. })
    });
    assert_eq!(
        pilot.update_attribute_values(aircraft, [(n.position, b("x"))], ""),
        Err(RtiError::Object(ObjectError::ObjectInstanceNotKnown(
            aircraft
        )))
    );
    pilot.resign(ResignAction::NoAction).unwrap();
    generator.resign(ResignAction::NoAction).unwrap();
    rti.destroy_federation_execution("denials").unwrap();
}

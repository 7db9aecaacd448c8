//! Ownership management: a pilot station takes over an aircraft's position from the
//! target generator that flies it, and hands it back.
//!
//! Run it from the repository root:
//!
//! ```text
//! cargo run -p glidepath --example ownership_handover
//! ```
//!
//! Over NATS by configuration alone, with a NATS server and the executive server
//! running (`glidepath server`): `-- --transport nats`.
//!
//! The generator registers the aircraft, so it owns every attribute it publishes.
//! The pilot asks for the position attributes (*attribute ownership acquisition*);
//! the generator is asked to release them and does (*attribute ownership
//! divestiture if wanted*); from then on the generator's updates of them are refused
//! at the call, and the pilot's reach the tower. The pilot hands them back with a
//! negotiated divestiture the generator accepts. The federation's executive keeps
//! the one registry of owners, so at no instant do two federates own an attribute.

use std::error::Error;
use std::path::PathBuf;
use std::time::Duration;

use glidepath::{
    AttributeHandle, Bytes, Callback, Federate, JoinOptions, ObjectError, ResignAction, Rti,
    RtiConfig, RtiError,
};

/// How long to wait for any one callback before giving up.
const WAIT: Duration = Duration::from_secs(10);

/// Waits for the first callback `want` accepts, printing the others.
fn expect(f: &Federate, what: &str, want: impl Fn(&Callback) -> bool) -> Result<Callback, String> {
    loop {
        match f.next_callback(WAIT) {
            Some(cb) if want(&cb) => return Ok(cb),
            Some(_) => continue,
            None => return Err(format!("{}: no {what} within {WAIT:?}", f.name())),
        }
    }
}

fn degrees(v: f64) -> Bytes {
    Bytes::copy_from_slice(&v.to_be_bytes())
}

fn main() -> Result<(), Box<dyn Error>> {
    let fom = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../foms/air-traffic.xml");
    let rti = Rti::from_config(&RtiConfig::from_env_and_args()?)?;
    rti.create_federation_execution("handover", &[&fom])?;
    let generator = rti.join(
        "handover",
        JoinOptions::named("generator", "target generator"),
    )?;
    let pilot = rti.join("handover", JoinOptions::named("pilot", "pilot station"))?;
    let tower = rti.join(
        "handover",
        JoinOptions::named("tower", "controller station"),
    )?;

    let aircraft_class = generator.object_class_handle("Aircraft")?;
    let attribute = |name| generator.attribute_handle(aircraft_class, name);
    let callsign = attribute("callsign")?;
    let position: Vec<AttributeHandle> =
        vec![attribute("latitudeDeg")?, attribute("longitudeDeg")?];
    let mut all = position.clone();
    all.push(callsign);
    // Both the generator and the pilot station can fly aircraft: both publish.
    generator.publish_object_class_attributes(aircraft_class, &all)?;
    pilot.publish_object_class_attributes(aircraft_class, &all)?;
    pilot.subscribe_object_class_attributes(aircraft_class, &all)?;
    tower.subscribe_object_class_attributes(aircraft_class, &all)?;

    let aircraft = generator.register_object_instance(aircraft_class)?;
    expect(&pilot, "discovery", |c| {
        matches!(c, Callback::DiscoverObjectInstance { .. })
    })?;
    expect(&tower, "discovery", |c| {
        matches!(c, Callback::DiscoverObjectInstance { .. })
    })?;
    let fly = |f: &Federate, lat: f64| {
        f.update_attribute_values(
            aircraft,
            [(position[0], degrees(lat)), (position[1], degrees(4.76))],
            "",
        )
    };
    fly(&generator, 52.30)?;

    // The pilot station takes over.
    pilot.attribute_ownership_acquisition(aircraft, &position, "pilot takes over")?;
    expect(&generator, "release request", |c| {
        matches!(c, Callback::RequestAttributeOwnershipRelease { .. })
    })?;
    let released = generator.attribute_ownership_divestiture_if_wanted(aircraft, &position)?;
    println!("generator released {} attributes", released.len());
    match fly(&generator, 52.31) {
        Err(RtiError::Object(ObjectError::AttributeNotOwned(a))) => {
            println!("generator's update refused: it no longer owns attribute {a}")
        }
        other => return Err(format!("expected AttributeNotOwned, got {other:?}").into()),
    }
    expect(&pilot, "acquisition", |c| {
        matches!(
            c,
            Callback::AttributeOwnershipAcquisitionNotification { .. }
        )
    })?;
    fly(&pilot, 52.32)?;
    if let Callback::ReflectAttributeValues { info, .. } = expect(
        &tower,
        "the pilot's update",
        |c| matches!(c, Callback::ReflectAttributeValues { info, .. } if info.producer == pilot.handle()),
    )? {
        println!("tower: position now comes from {}", info.producer);
    }

    // And hands it back: offer, acceptance, confirmation.
    pilot.negotiated_attribute_ownership_divestiture(aircraft, &position, "handing back")?;
    expect(&generator, "offer", |c| {
        matches!(c, Callback::RequestAttributeOwnershipAssumption { .. })
    })?;
    generator.attribute_ownership_acquisition_if_available(aircraft, &position)?;
    expect(&pilot, "confirmation request", |c| {
        matches!(c, Callback::RequestDivestitureConfirmation { .. })
    })?;
    pilot.confirm_divestiture(aircraft, &position, "yours again")?;
    expect(&generator, "acquisition", |c| {
        matches!(
            c,
            Callback::AttributeOwnershipAcquisitionNotification { .. }
        )
    })?;
    fly(&generator, 52.33)?;
    println!(
        "generator owns the position again: {}",
        generator.is_attribute_owned_by_federate(aircraft, position[0])?
    );

    tower.resign(ResignAction::NoAction)?;
    pilot.resign(ResignAction::NoAction)?;
    generator.resign(ResignAction::DeleteObjects)?;
    rti.destroy_federation_execution("handover")?;
    Ok(())
}

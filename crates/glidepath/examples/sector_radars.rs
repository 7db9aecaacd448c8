//! Data distribution management: two sector radars, each interested in one half of
//! a latitude × longitude plane, watch aircraft that a generator moves; each radar
//! discovers an aircraft when its first update inside the sector arrives, and gets
//! only the updates from inside its sector. With their attribute scope advisory
//! switches on, the radars are also told when an aircraft's position comes into
//! their sector's scope and when it leaves, whether or not an update follows.
//!
//! Run it from the repository root:
//!
//! ```text
//! cargo run -p glidepath --example sector_radars
//! ```
//!
//! Over NATS by configuration alone, with a NATS server and the executive server
//! running (`glidepath server`): `-- --transport nats` (there the updates travel on
//! the subjects of the grid cells their regions cover, and each radar's connection
//! reads only its sector's cells; on `inproc` the sender's bus drops what overlaps no
//! region).
//!
//! The FOM is `foms/ddm-bench.xml`: `Entity.position` has the dimensions `Latitude`
//! and `Longitude`, each normalized to `[0, 65536]`. The generator gives each aircraft
//! a point region and moves it (set range bounds, commit) before each update; each
//! radar subscribes `position` with its sector's region only.

use std::error::Error;
use std::path::PathBuf;
use std::time::Duration;

use glidepath::{
    Bytes, Callback, DimensionHandle, Federate, JoinOptions, RangeBounds, RegionHandle,
    ResignAction, Rti, RtiConfig,
};

const WAIT: Duration = Duration::from_secs(10);
const HALF: u64 = 32_768;

/// Prints what a radar got until the generator's `Done` marker; returns the count
/// of reflections.
fn watch(radar: &Federate, done: glidepath::InteractionClassHandle) -> Result<usize, String> {
    let mut reflections = 0;
    loop {
        match radar.next_callback(WAIT) {
            Some(Callback::DiscoverObjectInstance { name, .. }) => {
                println!("  {}: discovers {name}", radar.name())
            }
            Some(Callback::ReflectAttributeValues {
                instance, values, ..
            }) => {
                reflections += 1;
                let v = &values[0].1;
                println!(
                    "  {}: {} at ({}, {})",
                    radar.name(),
                    radar.object_instance_name(instance).unwrap_or_default(),
                    u64::from_be_bytes(v[..8].try_into().unwrap()),
                    u64::from_be_bytes(v[8..].try_into().unwrap())
                );
            }
            Some(Callback::AttributesInScope { instance, .. }) => println!(
                "  {}: {} comes into scope",
                radar.name(),
                radar.object_instance_name(instance).unwrap_or_default()
            ),
            Some(Callback::AttributesOutOfScope { instance, .. }) => println!(
                "  {}: {} goes out of scope",
                radar.name(),
                radar.object_instance_name(instance).unwrap_or_default()
            ),
            Some(Callback::ProvideAttributeValueUpdate { .. }) => {}
            Some(Callback::ReceiveInteraction { class, .. }) if class == done => {
                return Ok(reflections)
            }
            Some(_) => {}
            None => return Err(format!("{}: nothing within {WAIT:?}", radar.name())),
        }
    }
}

/// A region of `f` on both dimensions, committed.
fn region(
    f: &Federate,
    dims: [DimensionHandle; 2],
    lat: (u64, u64),
    lon: (u64, u64),
) -> Result<RegionHandle, Box<dyn Error>> {
    let r = f.create_region(&dims)?;
    f.set_range_bounds(r, dims[0], RangeBounds::new(lat.0, lat.1))?;
    f.set_range_bounds(r, dims[1], RangeBounds::new(lon.0, lon.1))?;
    f.commit_region_modifications(&[r])?;
    Ok(r)
}

fn main() -> Result<(), Box<dyn Error>> {
    let fom = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../foms/ddm-bench.xml");
    let rti = Rti::from_config(&RtiConfig::from_env_and_args()?)?;
    rti.create_federation_execution("sectors", &[&fom])?;
    let join = |name: &str| rti.join("sectors", JoinOptions::named(name, "example"));
    let generator = join("generator")?;
    let west = join("west")?;
    let east = join("east")?;

    let entity = generator.object_class_handle("Entity")?;
    let position = generator.attribute_handle(entity, "position")?;
    let done = generator.interaction_class_handle("Done")?;
    let dims = [
        generator.dimension_handle("Latitude")?,
        generator.dimension_handle("Longitude")?,
    ];
    generator.publish_object_class_attributes(entity, &[position])?;
    generator.publish_interaction_class(done)?;
    // West watches longitudes [0, half), east [half, 65536).
    for (radar, lon) in [(&west, (0, HALF)), (&east, (HALF, 2 * HALF))] {
        let sector = region(radar, dims, (0, 2 * HALF), lon)?;
        radar
            .subscribe_object_class_attributes_with_regions(entity, &[(&[position], &[sector])])?;
        radar.subscribe_interaction_class(done)?;
        radar.enable_attribute_scope_advisory_switch()?;
    }

    // Two aircraft, both starting in the west; AF123 flies east.
    let mut aircraft = Vec::new();
    for (name, lon) in [("KL456", 10_000), ("AF123", 30_000)] {
        generator.reserve_object_instance_name(name)?;
        while !matches!(
            generator.next_callback(WAIT),
            Some(Callback::ObjectInstanceNameReservationSucceeded { .. })
        ) {}
        let at = region(&generator, dims, (20_000, 20_001), (lon, lon + 1))?;
        let instance = generator.register_object_instance_with_regions(
            entity,
            &[(&[position], &[at])],
            Some(name),
        )?;
        aircraft.push((instance, at, lon, name == "AF123"));
    }
    // The generator (evoked) takes in what arrived meanwhile, the radars' switches
    // among it: from then on it tells them when it moves an aircraft's region.
    while generator
        .next_callback(Duration::from_millis(100))
        .is_some()
    {}
    for step in 0..4u64 {
        for (instance, at, lon, flies_east) in aircraft.iter_mut() {
            if *flies_east {
                *lon += 1_000 * step;
            }
            generator.set_range_bounds(*at, dims[1], RangeBounds::new(*lon, *lon + 1))?;
            generator.commit_region_modifications(&[*at])?;
            let mut value = 20_000u64.to_be_bytes().to_vec();
            value.extend_from_slice(&lon.to_be_bytes());
            generator.update_attribute_values(*instance, [(position, Bytes::from(value))], "")?;
        }
    }
    generator.send_interaction(done, [], "")?;
    println!("west sector:");
    let w = watch(&west, done)?;
    println!("east sector:");
    let e = watch(&east, done)?;
    println!("8 updates sent; west reflected {w}, east {e}");

    for f in [generator, west, east] {
        f.resign(ResignAction::DeleteObjects)?;
    }
    rti.destroy_federation_execution("sectors")?;
    Ok(())
}

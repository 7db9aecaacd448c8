//! Two federates in one process: a pilot publishes an aircraft and sends track
//! interactions with time stamps, a tower subscribes and prints what it receives.
//!
//! Run it from the repository root:
//!
//! ```text
//! cargo run -p glidepath --example two_federates
//! ```
//!
//! The same program runs over NATS by configuration alone, with a NATS server and
//! the executive server running (see the README):
//!
//! ```text
//! cargo run -p glidepath --example two_federates -- --transport nats [--nats-url nats://127.0.0.1:4222]
//! GLIDEPATH_TRANSPORT=nats cargo run -p glidepath --example two_federates
//! ```
//!
//! Both federates use the evoked process model, so this program decides when
//! callbacks run: inside `evoke_callback`, on this thread. The pilot regulates time
//! (its time stamps are promises), the tower is constrained (it never moves past a
//! time at which the pilot could still send something).
//!
//! Values are encoded by hand as the FOM's data types say (`HLAfloat64BE`,
//! `HLAunicodeString`); the air-traffic FOM orders these attributes `Receive`, so
//! updates arrive as soon as they are sent and carry their time stamp along.

use std::error::Error;
use std::path::PathBuf;
use std::time::Duration;

use glidepath::{
    AttributeHandle, Bytes, Callback, Federate, FederateAmbassador, FederateHandle,
    InteractionClassHandle, JoinOptions, LogicalTime, MessageInfo, ObjectClassHandle,
    ObjectInstanceHandle, ParameterHandle, ResignAction, Rti, RtiConfig, Values,
};

/// How long to wait for any one callback before giving up.
const WAIT: Duration = Duration::from_secs(10);

fn main() -> Result<(), Box<dyn Error>> {
    let fom = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../foms/air-traffic.xml");
    // The transport comes from GLIDEPATH_TRANSPORT / GLIDEPATH_NATS_URL or from
    // `--transport` / `--nats-url`: in-process unless told otherwise.
    let rti = Rti::from_config(&RtiConfig::from_env_and_args()?)?;
    rti.create_federation_execution("two-federates", &[&fom])?;

    let pilot = rti.join(
        "two-federates",
        JoinOptions::named("pilot", "aircraft model"),
    )?;
    let tower = rti.join(
        "two-federates",
        JoinOptions::named("tower", "controller station"),
    )?;

    // Handles come from names in the FOM.
    let aircraft = pilot.object_class_handle("Aircraft")?;
    let callsign = pilot.attribute_handle(aircraft, "callsign")?;
    let latitude = pilot.attribute_handle(aircraft, "latitudeDeg")?;
    let longitude = pilot.attribute_handle(aircraft, "longitudeDeg")?;
    let altitude = pilot.attribute_handle(aircraft, "altitudeFt")?;
    let track = pilot.interaction_class_handle("Track")?;
    let track_callsign = pilot.parameter_handle(track, "callsign")?;
    let track_altitude = pilot.parameter_handle(track, "altitudeFt")?;

    // Declarations: who sends what, who wants what.
    pilot.publish_object_class_attributes(aircraft, &[callsign, latitude, longitude, altitude])?;
    pilot.publish_interaction_class(track)?;
    tower
        .subscribe_object_class_attributes(aircraft, &[callsign, latitude, longitude, altitude])?;
    tower.subscribe_interaction_class(track)?;

    // Time: the pilot regulates with lookahead 1, the tower is constrained.
    let mut printer = Printer::new(&tower);
    pilot.enable_time_regulation(1.0)?;
    tower.enable_time_constrained()?;
    wait_for(&pilot, &mut Quiet, |c| {
        matches!(c, Callback::TimeRegulationEnabled { .. })
    })?;
    wait_for(&tower, &mut printer, |c| {
        matches!(c, Callback::TimeConstrainedEnabled { .. })
    })?;

    // An object with a reserved name: the reservation answer is a callback.
    pilot.reserve_object_instance_name("KLM1023")?;
    wait_for(&pilot, &mut Quiet, |c| {
        matches!(c, Callback::ObjectInstanceNameReservationSucceeded { .. })
    })?;
    let plane = pilot.register_object_instance_with_name(aircraft, "KLM1023")?;
    pilot.update_attribute_values(
        plane,
        [(callsign, hla_unicode_string("KLM1023"))],
        "initial",
    )?;

    for step in 1..=5u32 {
        let time = f64::from(step);
        let (lat, lon, alt) = (52.3 + 0.01 * time, 4.76 + 0.02 * time, 2000.0 * time);
        // A regulating federate may send time stamps from logical time + lookahead on.
        pilot.update_attribute_values_at(
            plane,
            [
                (latitude, hla_float64(lat)),
                (longitude, hla_float64(lon)),
                (altitude, hla_float64(alt)),
            ],
            "position",
            time,
        )?;
        pilot.send_interaction_at(
            track,
            [
                (track_callsign, hla_unicode_string("KLM1023")),
                (track_altitude, hla_float64(alt)),
            ],
            "track",
            time,
        )?;
        // Both ask to advance; each grant is a callback.
        pilot.time_advance_request(time)?;
        tower.time_advance_request(time)?;
        wait_for(&pilot, &mut Quiet, |c| {
            matches!(c, Callback::TimeAdvanceGrant { .. })
        })?;
        wait_for(&tower, &mut printer, |c| {
            matches!(c, Callback::TimeAdvanceGrant { .. })
        })?;
    }

    pilot.resign(ResignAction::DeleteObjects)?;
    wait_for(&tower, &mut printer, |c| {
        matches!(c, Callback::RemoveObjectInstance { .. })
    })?;
    tower.resign(ResignAction::DeleteObjects)?;
    rti.destroy_federation_execution("two-federates")?;
    println!(
        "done: {} reflections, {} interactions",
        printer.reflections, printer.interactions
    );
    Ok(())
}

/// Evokes callbacks of `federate` into `ambassador` until one matches `done`.
fn wait_for(
    federate: &Federate,
    ambassador: &mut impl FederateAmbassador,
    done: impl Fn(&Callback) -> bool,
) -> Result<(), Box<dyn Error>> {
    loop {
        let Some(callback) = federate.next_callback(WAIT) else {
            return Err(format!("{}: no callback within {WAIT:?}", federate.name()).into());
        };
        let finished = done(&callback);
        ambassador.callback(callback);
        if finished {
            return Ok(());
        }
    }
}

/// Ignores every callback (the pilot only waits for its grants).
struct Quiet;
impl FederateAmbassador for Quiet {}

/// Prints what the tower receives, decoding values with the FOM's names.
struct Printer {
    federate: Federate,
    reflections: usize,
    interactions: usize,
}

impl Printer {
    fn new(federate: &Federate) -> Self {
        Printer {
            federate: federate.clone(),
            reflections: 0,
            interactions: 0,
        }
    }

    fn describe(&self, name: &str, bytes: &Bytes) -> String {
        if name == "callsign" {
            decode_unicode_string(bytes).unwrap_or_else(|| format!("{bytes:?}"))
        } else {
            <[u8; 8]>::try_from(&bytes[..])
                .map(|b| format!("{:.3}", f64::from_be_bytes(b)))
                .unwrap_or_else(|_| format!("{bytes:?}"))
        }
    }
}

impl FederateAmbassador for Printer {
    fn discover_object_instance(
        &mut self,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        name: &str,
        producer: FederateHandle,
    ) {
        let class = self.federate.object_class_name(class).unwrap_or("?");
        println!("tower: discovered {name} ({instance}) of {class} from {producer}");
    }

    fn reflect_attribute_values(
        &mut self,
        instance: ObjectInstanceHandle,
        _class: ObjectClassHandle,
        values: Values<AttributeHandle>,
        tag: Bytes,
        info: MessageInfo,
    ) {
        self.reflections += 1;
        let fields: Vec<String> = values
            .iter()
            .map(|(a, v)| {
                let name = self.federate.attribute_name(*a).unwrap_or("?");
                format!("{name}={}", self.describe(name, v))
            })
            .collect();
        let time = info.time.map_or("none".to_string(), |t| t.to_string());
        println!(
            "tower: {instance} {} (tag {:?}, time stamp {time}, {:?} order)",
            fields.join(" "),
            String::from_utf8_lossy(&tag),
            info.received_order
        );
    }

    fn receive_interaction(
        &mut self,
        class: InteractionClassHandle,
        values: Values<ParameterHandle>,
        _tag: Bytes,
        info: MessageInfo,
    ) {
        self.interactions += 1;
        let class = self.federate.interaction_class_name(class).unwrap_or("?");
        let time = info.time.map_or("none".to_string(), |t| t.to_string());
        println!(
            "tower: {class} with {} parameters at time stamp {time}",
            values.len()
        );
    }

    fn remove_object_instance(
        &mut self,
        instance: ObjectInstanceHandle,
        _tag: Bytes,
        info: MessageInfo,
    ) {
        println!("tower: {instance} removed by {}", info.producer);
    }

    fn time_constrained_enabled(&mut self, time: LogicalTime) {
        println!("tower: time constrained at {time}");
    }

    fn time_advance_grant(&mut self, time: LogicalTime) {
        println!("tower: granted {time}");
    }
}

/// `HLAfloat64BE`: eight bytes, big-endian IEEE 754.
fn hla_float64(x: f64) -> Bytes {
    Bytes::copy_from_slice(&x.to_be_bytes())
}

/// `HLAunicodeString`: a 32-bit big-endian count of UTF-16 code units, then the units big-endian.
fn hla_unicode_string(s: &str) -> Bytes {
    let units: Vec<u16> = s.encode_utf16().collect();
    let mut out = Vec::with_capacity(4 + 2 * units.len());
    out.extend_from_slice(&(units.len() as u32).to_be_bytes());
    for u in units {
        out.extend_from_slice(&u.to_be_bytes());
    }
    Bytes::from(out)
}

fn decode_unicode_string(bytes: &[u8]) -> Option<String> {
    let count = u32::from_be_bytes(bytes.get(..4)?.try_into().ok()?) as usize;
    let body = bytes.get(4..4 + 2 * count)?;
    String::from_utf16(
        &body
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect::<Vec<_>>(),
    )
    .ok()
}

//! Helpers shared by the integration tests: the test FOM, joining, and waiting for
//! callbacks with generous timeouts (never sleeping).
//!
//! "Nothing arrived" is shown with a marker: a later message from the same sender
//! (or, on `inproc`, from anyone after the call that would have produced the
//! unwanted message returned, since `inproc` delivers before `publish` returns).
#![allow(dead_code)]

pub mod sectors;

use std::path::PathBuf;
use std::time::Duration;

use glidepath::{
    AttributeHandle, Bytes, Callback, Federate, Fom, InteractionClassHandle, JoinOptions,
    LogicalTime, ObjectClassHandle, ParameterHandle, Rti,
};

/// How long any wait for an expected callback may take before the test fails.
pub const TIMEOUT: Duration = Duration::from_secs(10);

/// The path of a file in `tests/data`.
pub fn data_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The test FOM: Vehicle { label (RO), position (TSO) } with subclasses
/// Aircraft { altitude (TSO), callsign (RO, best effort) } and Ship { draught };
/// interactions Alert { message } > CriticalAlert { severity } (RO) and Fire { target } (TSO).
pub fn vehicles_fom() -> Fom {
    Fom::load_files(&[data_path("vehicles.xml")]).expect("the test FOM loads")
}

/// A fresh in-process RTI with one federation `name` on the test FOM.
pub fn federation(name: &str) -> Rti {
    let rti = Rti::inproc();
    rti.create_federation_execution_with_fom(name, vehicles_fom())
        .expect("create");
    rti
}

/// Joins an evoked federate named `name`.
pub fn join(rti: &Rti, federation: &str, name: &str) -> Federate {
    rti.join(federation, JoinOptions::named(name, "test"))
        .unwrap_or_else(|e| panic!("join {name}: {e}"))
}

/// Handles of the test FOM, looked up by name through a federate.
pub struct Names {
    pub vehicle: ObjectClassHandle,
    pub aircraft: ObjectClassHandle,
    pub ship: ObjectClassHandle,
    pub label: AttributeHandle,
    pub position: AttributeHandle,
    pub altitude: AttributeHandle,
    pub callsign: AttributeHandle,
    pub draught: AttributeHandle,
    pub alert: InteractionClassHandle,
    pub critical: InteractionClassHandle,
    pub fire: InteractionClassHandle,
    pub message: ParameterHandle,
    pub severity: ParameterHandle,
    pub target: ParameterHandle,
}

impl Names {
    pub fn of(f: &Federate) -> Names {
        let vehicle = f.object_class_handle("Vehicle").unwrap();
        let aircraft = f.object_class_handle("Vehicle.Aircraft").unwrap();
        let ship = f.object_class_handle("HLAobjectRoot.Vehicle.Ship").unwrap();
        let alert = f.interaction_class_handle("Alert").unwrap();
        let critical = f.interaction_class_handle("Alert.CriticalAlert").unwrap();
        let fire = f.interaction_class_handle("Fire").unwrap();
        Names {
            vehicle,
            aircraft,
            ship,
            label: f.attribute_handle(vehicle, "label").unwrap(),
            position: f.attribute_handle(vehicle, "position").unwrap(),
            altitude: f.attribute_handle(aircraft, "altitude").unwrap(),
            callsign: f.attribute_handle(aircraft, "callsign").unwrap(),
            draught: f.attribute_handle(ship, "draught").unwrap(),
            alert,
            critical,
            fire,
            message: f.parameter_handle(alert, "message").unwrap(),
            severity: f.parameter_handle(critical, "severity").unwrap(),
            target: f.parameter_handle(fire, "target").unwrap(),
        }
    }
}

/// The next callback of an evoked federate; fails the test after [`TIMEOUT`].
pub fn next(f: &Federate) -> Callback {
    f.next_callback(TIMEOUT)
        .unwrap_or_else(|| panic!("{}: no callback within {TIMEOUT:?}", f.name()))
}

/// Waits for the first callback matching `pred`; returns it and the ones skipped.
pub fn wait_for(
    f: &Federate,
    what: &str,
    mut pred: impl FnMut(&Callback) -> bool,
) -> (Callback, Vec<Callback>) {
    let mut skipped = Vec::new();
    loop {
        let cb = f.next_callback(TIMEOUT).unwrap_or_else(|| {
            panic!(
                "{}: waiting for {what}: nothing within {TIMEOUT:?}; skipped {skipped:#?}",
                f.name()
            )
        });
        if pred(&cb) {
            return (cb, skipped);
        }
        skipped.push(cb);
    }
}

/// Waits for a time advance grant and returns its time.
pub fn grant(f: &Federate) -> LogicalTime {
    match wait_for(f, "a time advance grant", |c| {
        matches!(c, Callback::TimeAdvanceGrant { .. })
    })
    .0
    {
        Callback::TimeAdvanceGrant { time } => time,
        _ => unreachable!(),
    }
}

/// Enables regulation (with `lookahead`) and constrained, waiting for both callbacks.
pub fn regulating_and_constrained(f: &Federate, lookahead: f64) {
    f.enable_time_regulation(lookahead).unwrap();
    wait_for(f, "regulation enabled", |c| {
        matches!(c, Callback::TimeRegulationEnabled { .. })
    });
    f.enable_time_constrained().unwrap();
    wait_for(f, "constrained enabled", |c| {
        matches!(c, Callback::TimeConstrainedEnabled { .. })
    });
}

/// A logical time from a float.
pub fn t(x: f64) -> LogicalTime {
    LogicalTime::new(x).unwrap()
}

/// Payload bytes from a string.
pub fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

/// Sends a receive-order `Alert` whose message is `text`, from a federate that
/// publishes `Alert`: the usual marker.
pub fn send_marker(f: &Federate, names: &Names, text: &str) {
    f.send_interaction(names.alert, [(names.message, b(text))], "marker")
        .unwrap();
}

/// True for the marker `Alert` with message `text`.
pub fn is_marker(cb: &Callback, text: &str) -> bool {
    matches!(cb, Callback::ReceiveInteraction { values, tag, .. } if tag == "marker" && values.iter().any(|(_, v)| v == text.as_bytes()))
}

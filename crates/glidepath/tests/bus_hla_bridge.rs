//! The bus bridge to HLA (`glidepath::bus::hla`): a bus component's messages reach a
//! federate as interactions with typed parameters, a federate's interactions reach
//! bus subscribers as typed messages, and what cannot cross (a key missing, a value
//! of the wrong type, bytes that do not decode) is counted and never forwarded. In one
//! process (inproc bus and RTI), and over a real nats-server on both sides.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use glidepath::bus::hla::{FromHla, HlaBridge, HlaBridgeError, ToHla};
use glidepath::bus::{
    Bus, BusConfig, Event, InprocHub, Message, Pattern, ServiceLevel, Subject, Value,
};
use glidepath::fom::Value as HlaValue;
use glidepath::{
    Bytes, Callback, Federate, JoinOptions, ResignAction, Rti, RtiConfig, TransportKind,
};

const WAIT: Duration = Duration::from_secs(10);

fn fom() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../foms/formation-flying.xml")
}

fn pairs(p: &[(&str, &str)]) -> Vec<(String, String)> {
    p.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn to_hla() -> ToHla {
    ToHla {
        pattern: Pattern::new("GMSEC.FF.*.MSG.TRUTH").unwrap(),
        group: None,
        class: "TruthState".into(),
        parameters: pairs(&[
            ("SAT", "satellite"),
            ("T", "time"),
            ("X", "x"),
            ("Y", "y"),
            ("Z", "z"),
            ("VX", "vx"),
            ("VY", "vy"),
            ("VZ", "vz"),
        ]),
    }
}

fn from_hla() -> FromHla {
    FromHla {
        class: "ThrustCommand".into(),
        subject: Subject::new("GMSEC.FF.SAT1.REQ.THRUST").unwrap(),
        level: ServiceLevel::Fifo,
        group: None,
        parameters: pairs(&[
            ("satellite", "SAT"),
            ("burnId", "BURN"),
            ("deltaV", "DV"),
            ("armed", "ARMED"),
        ]),
    }
}

fn truth(x: f64) -> Message {
    let mut m = Message::new();
    m.set("SAT", "SAT1");
    m.set("T", 0.1);
    for (k, v) in [
        ("X", x),
        ("Y", 2.0),
        ("Z", 3.0),
        ("VX", 0.5),
        ("VY", 0.0),
        ("VZ", -0.5),
    ] {
        m.set(k, v);
    }
    m
}

/// The next interaction `f` receives, as (class name, parameter name -> value).
fn next_interaction(f: &Federate) -> Option<(String, Vec<(String, HlaValue)>)> {
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if let Some(Callback::ReceiveInteraction { class, values, .. }) =
            f.next_callback(Duration::from_millis(50))
        {
            let fom = f.fom();
            let decoded = values
                .iter()
                .map(|(p, bytes)| {
                    let param = fom.parameter(*p).unwrap();
                    let dt = param.data_type.clone().unwrap();
                    (param.name.clone(), fom.decode_value(&dt, bytes).unwrap())
                })
                .collect();
            return Some((
                f.interaction_class_name(class).unwrap().to_string(),
                decoded,
            ));
        }
    }
    None
}

fn stats_settle(bridge: &HlaBridge, done: impl Fn(&glidepath::bus::hla::HlaBridgeStats) -> bool) {
    let deadline = Instant::now() + WAIT;
    while !done(&bridge.stats()) {
        assert!(
            Instant::now() < deadline,
            "bridge stats stuck at {:?}",
            bridge.stats()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Both ways and the refusals, with the bus connections of `bus` and the RTI `rti`.
fn bridge_both_ways(bus: BusConfig, rti: &Rti, federation: &str) {
    rti.create_federation_execution(federation, &[fom()])
        .unwrap();
    let bridge_fed = rti
        .join(federation, JoinOptions::named("bus-bridge", "bridge"))
        .unwrap();
    let executive = rti
        .join(federation, JoinOptions::named("flight-executive", "fe"))
        .unwrap();
    let truth_class = executive.interaction_class_handle("TruthState").unwrap();
    executive.subscribe_interaction_class(truth_class).unwrap();
    let thrust = executive.interaction_class_handle("ThrustCommand").unwrap();
    executive.publish_interaction_class(thrust).unwrap();

    let bridge = HlaBridge::start(
        &BusConfig {
            name: "bridge".into(),
            ..bus.clone()
        },
        bridge_fed.clone(),
        vec![to_hla()],
        vec![from_hla()],
    )
    .unwrap();
    let simulator = Bus::connect(&BusConfig {
        name: "truth-sim".into(),
        ..bus.clone()
    })
    .unwrap();
    let thruster = simulator
        .subscribe(&Pattern::new("GMSEC.FF.*.REQ.>").unwrap())
        .unwrap();

    // Bus -> HLA: the truth state arrives as a TruthState with its FOM types.
    let subject = Subject::new("GMSEC.FF.SAT1.MSG.TRUTH").unwrap();
    simulator
        .publish(&subject, &truth(1.0), ServiceLevel::Fifo)
        .unwrap();
    let (class, values) = next_interaction(&executive).expect("the truth state crossed over");
    assert_eq!(class, "HLAinteractionRoot.TruthState");
    let get = |name: &str| {
        values
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    assert_eq!(get("satellite"), Some(HlaValue::Text("SAT1".into())));
    assert_eq!(get("x"), Some(HlaValue::Float(1.0)));
    assert_eq!(get("vz"), Some(HlaValue::Float(-0.5)));
    assert_eq!(values.len(), 8);

    // What cannot cross is refused and counted: a key missing, a string for a float.
    let mut missing = truth(2.0);
    missing.remove("VZ");
    simulator
        .publish(&subject, &missing, ServiceLevel::Fifo)
        .unwrap();
    let mut wrong = truth(3.0);
    wrong.set("X", "three");
    simulator
        .publish(&subject, &wrong, ServiceLevel::Fifo)
        .unwrap();
    simulator
        .publish(&subject, &truth(4.0), ServiceLevel::Fifo)
        .unwrap();
    let (_, after) = next_interaction(&executive).expect("the good one after the bad ones");
    assert!(
        after.contains(&("x".into(), HlaValue::Float(4.0))),
        "{after:?}: only the good one crossed"
    );
    stats_settle(&bridge, |s| s.refused_to_hla == 2 && s.to_hla == 2);

    // HLA -> bus: a ThrustCommand becomes a typed bus message.
    let fom = executive.fom().clone();
    let p = |name: &str| executive.parameter_handle(thrust, name).unwrap();
    let enc = |dt: &str, v: HlaValue| Bytes::from(fom.encode_value(dt, &v).unwrap());
    let command = |dv: Bytes| {
        vec![
            (
                p("satellite"),
                enc("HLAunicodeString", HlaValue::Text("SAT1".into())),
            ),
            (p("burnId"), enc("HLAinteger32BE", HlaValue::Int(7))),
            (p("deltaV"), dv),
            (p("armed"), enc("HLAboolean", HlaValue::Bool(true))),
        ]
    };
    // First a command whose deltaV is 3 bytes, not an HLAfloat32BE: refused.
    executive
        .send_interaction(
            thrust,
            command(Bytes::from_static(&[1, 2, 3])),
            Bytes::new(),
        )
        .unwrap();
    executive
        .send_interaction(
            thrust,
            command(enc("HLAfloat32BE", HlaValue::Float(0.25))),
            Bytes::new(),
        )
        .unwrap();
    let d = loop {
        match thruster.recv_timeout(WAIT).unwrap() {
            Some(Event::Message(d)) => break d,
            Some(Event::Membership(_)) => continue,
            None => panic!("no thrust command reached the bus"),
        }
    };
    assert_eq!(d.subject.as_str(), "GMSEC.FF.SAT1.REQ.THRUST");
    assert_eq!(d.level, ServiceLevel::Fifo);
    assert_eq!(d.message.get("SAT"), Some(&Value::Str("SAT1".into())));
    assert_eq!(
        d.message.get("BURN"),
        Some(&Value::I32(7)),
        "HLAinteger32BE is an I"
    );
    assert_eq!(
        d.message.get("DV"),
        Some(&Value::F32(0.25)),
        "HLAfloat32BE is an F"
    );
    assert_eq!(d.message.get("ARMED"), Some(&Value::Bool(true)));
    stats_settle(&bridge, |s| s.refused_from_hla == 1 && s.from_hla == 1);
    assert!(
        thruster.try_recv().unwrap().is_none(),
        "the refused command was not forwarded"
    );
    assert_eq!(bridge.stats().failed, 0);

    bridge.close();
    simulator.close();
    for f in [executive, bridge_fed] {
        f.resign(ResignAction::DeleteObjects).unwrap();
    }
    rti.destroy_federation_execution(federation).unwrap();
}

#[test]
fn bus_and_hla_meet_both_ways_in_one_process() {
    let bus = BusConfig {
        hub: Some(InprocHub::new()),
        default_group: Subject::new("FFTB").unwrap(),
        ..BusConfig::default()
    };
    bridge_both_ways(bus, &Rti::inproc(), "ff-inproc");
}

#[test]
fn bus_and_hla_meet_both_ways_over_nats() {
    let store = std::env::temp_dir().join(format!("glidepath-hla-bridge-{}", std::process::id()));
    let server = glidepath::backend::nats::NatsServerProcess::start_with(
        None,
        &["--jetstream", "--store_dir", store.to_str().unwrap()],
    )
    .unwrap();
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = server.url();
    let _executive = glidepath::ensure_executive(&config).unwrap();
    let rti = Rti::from_config(&config).unwrap();
    let bus = BusConfig {
        default_group: Subject::new("FFTB").unwrap(),
        ..BusConfig::nats(&server.url())
    };
    bridge_both_ways(bus, &rti, "ff-nats");
    let _ = std::fs::remove_dir_all(store);
}

#[test]
fn a_route_the_fom_does_not_have_is_refused_naming_it() {
    let rti = Rti::inproc();
    rti.create_federation_execution("ff-routes", &[fom()])
        .unwrap();
    let f = rti
        .join("ff-routes", JoinOptions::named("bus-bridge", "bridge"))
        .unwrap();
    let bus = BusConfig {
        hub: Some(InprocHub::new()),
        ..BusConfig::default()
    };
    let unknown_class = ToHla {
        class: "Truth".into(),
        ..to_hla()
    };
    let e = HlaBridge::start(&bus, f.clone(), vec![to_hla(), unknown_class], vec![]).unwrap_err();
    assert!(matches!(e, HlaBridgeError::Route { .. }));
    assert!(
        e.to_string()
            .starts_with("to_hla route 2: interaction class `Truth`"),
        "{e}"
    );
    let unknown_param = FromHla {
        parameters: pairs(&[("fuel", "FUEL")]),
        ..from_hla()
    };
    let e = HlaBridge::start(&bus, f.clone(), vec![], vec![unknown_param]).unwrap_err();
    assert!(
        e.to_string()
            .contains("from_hla route 1: parameter `fuel` of `ThrustCommand`"),
        "{e}"
    );
    f.resign(ResignAction::DeleteObjects).unwrap();
    rti.destroy_federation_execution("ff-routes").unwrap();
}

//! glidepath's own FOM modules (`foms/benchmark.xml`, `foms/air-traffic.xml`) load,
//! merge together, and expose the classes, attributes and types other crates rely on.

mod support;

use glidepath_fom::{
    DataType, Endian, Fom, FomModule, FomSummary, ObjectClassHandle, OrderType, TransportationType,
    MIM_DATA_TYPE_COUNT,
};
use support::{foms_dir, mim, plus_mom};

fn both() -> Fom {
    Fom::load_files(&[
        foms_dir().join("benchmark.xml"),
        foms_dir().join("air-traffic.xml"),
    ])
    .expect("our modules merge")
}

#[test]
fn each_module_loads_on_its_own() {
    for file in ["benchmark.xml", "air-traffic.xml", "target-generator.xml"] {
        let module = FomModule::load(&foms_dir().join(file)).expect(file);
        assert_eq!(module.name, file);
        assert!(module
            .model_name
            .as_deref()
            .is_some_and(|n| n.starts_with("glidepath-")));
        Fom::merge(&[module]).expect(file);
    }
}

#[test]
fn merged_counts_include_the_mim() {
    assert_eq!(
        both().summary(),
        plus_mom(FomSummary {
            modules: 2,
            // HLAobjectRoot, BenchObject, Aircraft, FlightPlan.
            object_classes: 4,
            // HLAprivilegeToDeleteObject + 3 + 13 + 7 (Aircraft with the target
            // generator's heading, pitch, roll and type).
            attributes: 24,
            // HLAinteractionRoot + 5 benchmark classes + Track + SndemMessage +
            // BlockReport.
            interaction_classes: 9,
            parameters: 23,
            dimensions: 3,
            // EpochMicros, FlightRules, TrackMetadata on top of the MIM.
            data_types: MIM_DATA_TYPE_COUNT + 3,
        })
    );
}

#[test]
fn roots_and_mim_attribute_have_handle_zero() {
    let fom = both();
    assert_eq!(
        fom.object_class(Fom::OBJECT_ROOT).unwrap().qualified_name,
        "HLAobjectRoot"
    );
    assert_eq!(
        fom.interaction_class(Fom::INTERACTION_ROOT)
            .unwrap()
            .qualified_name,
        "HLAinteractionRoot"
    );
    let privilege = fom
        .attribute_by_name(Fom::OBJECT_ROOT, "HLAprivilegeToDeleteObject")
        .unwrap();
    assert_eq!(privilege.0, 0);
    let attribute = fom.attribute(privilege).unwrap();
    assert_eq!(attribute.data_type.as_deref(), Some("HLAtoken"));
    assert_eq!(attribute.order, OrderType::TimeStamp);
}

#[test]
fn handles_follow_module_order() {
    let fom = both();
    // User classes come after the MIM's (the roots and the MOM classes).
    let first = mim().object_classes.len() as u32;
    // Benchmark classes come first because benchmark.xml was given first.
    assert_eq!(
        fom.object_class_by_name("BenchObject"),
        Some(ObjectClassHandle(first))
    );
    assert_eq!(
        fom.object_class_by_name("Aircraft"),
        Some(ObjectClassHandle(first + 1))
    );
    assert_eq!(
        fom.object_class_by_qname["HLAobjectRoot.FlightPlan"],
        ObjectClassHandle(first + 2)
    );
    for (i, class) in fom.object_classes.iter().enumerate() {
        assert_eq!(class.handle.index(), i);
    }
    for (i, attribute) in fom.attributes.iter().enumerate() {
        assert_eq!(attribute.handle.index(), i);
    }

    let reversed = Fom::load_files(&[
        foms_dir().join("air-traffic.xml"),
        foms_dir().join("benchmark.xml"),
    ])
    .unwrap();
    assert_eq!(
        reversed.object_class_by_name("Aircraft"),
        Some(ObjectClassHandle(first))
    );
    assert_eq!(reversed.summary().attributes, both().summary().attributes);
}

#[test]
fn benchmark_attributes_cover_each_delivery_mode() {
    let fom = both();
    let bench = fom.object_class_by_name("BenchObject").unwrap();
    let mode = |name: &str| {
        let a = fom
            .attribute(fom.attribute_by_name(bench, name).unwrap())
            .unwrap();
        assert_eq!(a.data_type.as_deref(), Some("HLAopaqueData"));
        (a.transportation, a.order)
    };
    assert_eq!(
        mode("payload"),
        (TransportationType::Reliable, OrderType::Receive)
    );
    assert_eq!(
        mode("payloadBestEffort"),
        (TransportationType::BestEffort, OrderType::Receive)
    );
    assert_eq!(
        mode("payloadTso"),
        (TransportationType::Reliable, OrderType::TimeStamp)
    );

    let interaction = |name: &str| {
        let class = fom
            .interaction_class(fom.interaction_class_by_name(name).unwrap())
            .unwrap();
        (class.transportation, class.order)
    };
    assert_eq!(
        interaction("BenchInteraction"),
        (TransportationType::Reliable, OrderType::Receive)
    );
    assert_eq!(
        interaction("BenchInteractionTso"),
        (TransportationType::Reliable, OrderType::TimeStamp)
    );
    assert_eq!(
        interaction("BenchInteractionBestEffort"),
        (TransportationType::BestEffort, OrderType::Receive)
    );

    for name in ["Ping", "Pong"] {
        let class = fom.interaction_class_by_name(name).unwrap();
        let seq = fom
            .parameter(fom.parameter_by_name(class, "seq").unwrap())
            .unwrap();
        assert_eq!(seq.data_type.as_deref(), Some("HLAinteger64BE"));
        assert!(fom.parameter_by_name(class, "payload").is_some());
    }
}

#[test]
fn aircraft_carries_the_track_fields() {
    let fom = both();
    let aircraft = fom.object_class_by_name("Aircraft").unwrap();
    let class = fom.object_class(aircraft).unwrap();
    let names: Vec<&str> = class
        .all_attributes
        .iter()
        .map(|a| fom.attributes[a.index()].name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "HLAprivilegeToDeleteObject",
            "callsign",
            "latitudeDeg",
            "longitudeDeg",
            "altitudeFt",
            "groundSpeedKt",
            "courseDeg",
            "verticalSpeedFpm",
            "trackTime",
            "trackMetadata",
            "headingDeg",
            "pitchDeg",
            "rollDeg",
            "aircraftType",
        ]
    );
    let data_type = |name: &str| {
        fom.attribute(fom.attribute_by_name(aircraft, name).unwrap())
            .unwrap()
            .data_type
            .clone()
            .unwrap_or_default()
    };
    assert_eq!(data_type("callsign"), "HLAunicodeString");
    for field in [
        "latitudeDeg",
        "longitudeDeg",
        "altitudeFt",
        "groundSpeedKt",
        "courseDeg",
        "verticalSpeedFpm",
    ] {
        assert_eq!(data_type(field), "HLAfloat64BE", "{field}");
    }

    let flight_level = fom.dimension_by_name("FlightLevel").unwrap();
    assert_eq!(fom.dimensions[flight_level.index()].upper_bound, 1000);
    assert_eq!(
        fom.dimensions[flight_level.index()].default_range,
        glidepath_fom::DefaultRange::Excluded
    );
    let latitude = fom
        .attribute(fom.attribute_by_name(aircraft, "latitudeDeg").unwrap())
        .unwrap();
    assert_eq!(latitude.dimensions, [flight_level]);
}

#[test]
fn flight_plan_and_track_interaction() {
    let fom = both();
    let plan = fom.object_class_by_name("FlightPlan").unwrap();
    for name in [
        "callsign",
        "departure",
        "arrival",
        "aircraftType",
        "route",
        "cruiseAltitudeFt",
    ] {
        assert!(fom.attribute_by_name(plan, name).is_some(), "{name}");
    }

    let track = fom.interaction_class_by_name("Track").unwrap();
    let class = fom.interaction_class(track).unwrap();
    let names: Vec<&str> = class
        .all_parameters
        .iter()
        .map(|p| fom.parameters[p.index()].name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "callsign",
            "latitudeDeg",
            "longitudeDeg",
            "altitudeFt",
            "groundSpeedKt",
            "courseDeg",
            "verticalSpeedFpm",
            "trackTime",
            "src",
            "ver",
            "run",
            "tpub",
        ]
    );
    assert_eq!(
        class.dimensions,
        [fom.dimension_by_name("FlightLevel").unwrap()]
    );
}

#[test]
fn own_data_types_resolve() {
    let fom = both();
    match fom.data_type("TrackMetadata") {
        Some(DataType::FixedRecord {
            fields, encoding, ..
        }) => {
            let names: Vec<&str> = fields.iter().map(|(n, _)| n.as_str()).collect();
            assert_eq!(names, ["src", "ver", "run", "tpub"]);
            assert_eq!(encoding, "HLAfixedRecord");
        }
        other => panic!("TrackMetadata is {other:?}"),
    }
    assert_eq!(
        fom.basic_representation("EpochMicros"),
        Some(&DataType::Basic {
            name: "HLAinteger64BE".into(),
            size_bits: 64,
            endian: Endian::Big
        })
    );
    assert_eq!(
        fom.basic_representation("FlightRules").map(DataType::name),
        Some("HLAoctet")
    );
    assert_eq!(fom.basic_representation("TrackMetadata"), None);
}

#[test]
fn class_hierarchy_queries() {
    let fom = both();
    let aircraft = fom.object_class_by_name("Aircraft").unwrap();
    assert!(fom.is_object_subclass_of(aircraft, Fom::OBJECT_ROOT));
    assert!(fom.is_object_subclass_of(aircraft, aircraft));
    assert!(!fom.is_object_subclass_of(Fom::OBJECT_ROOT, aircraft));
    assert_eq!(fom.object_class_and_descendants(aircraft), [aircraft]);
    assert_eq!(
        fom.object_class_and_descendants(Fom::OBJECT_ROOT).len(),
        mim().object_classes.len() + 3
    );

    let ping = fom
        .interaction_class_by_name("HLAinteractionRoot.Ping")
        .unwrap();
    assert!(fom.is_interaction_subclass_of(ping, Fom::INTERACTION_ROOT));
    assert_eq!(
        fom.interaction_class_and_descendants(Fom::INTERACTION_ROOT)
            .len(),
        mim().interaction_classes.len() + 8
    );
}

#[test]
fn loading_a_module_twice_adds_nothing() {
    let module = FomModule::load(&foms_dir().join("air-traffic.xml")).unwrap();
    let once = Fom::merge(std::slice::from_ref(&module)).unwrap();
    let twice = Fom::merge(&[module.clone(), module]).unwrap();
    assert_eq!(
        twice.summary(),
        FomSummary {
            modules: 2,
            ..once.summary()
        }
    );
    assert_eq!(twice.object_classes, once.object_classes);
    assert_eq!(twice.attributes, once.attributes);
}

//! The target generator as any other HLA federate meets it: the `Aircraft` states it
//! publishes decode with the FOM's own data types (callsigns as `HLAunicodeString`), a
//! federate that joins late gets every callsign by asking for attribute values, and
//! messages from a peer that do not decode are counted and dropped, never an end to
//! the run.

use glidepath::fom::Value;
use glidepath::{Bytes, Callback, JoinOptions, ProcessModel, Rti};
use glidepath_tg::model::Model;
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::scenario;
use glidepath_tg::server::{LocalLayout, LocalRun, ServerConfig};

#[test]
fn an_outside_federate_reads_the_states_by_the_foms_data_types() {
    let rti = Rti::inproc();
    let demo = scenario::load("demo", PerformanceTable::builtin()).unwrap();
    let expected: Vec<String> = demo.aircraft.iter().map(|a| a.callsign.clone()).collect();
    let layout = LocalLayout::new(2, 1, Model::PointMass);
    let mut tg = LocalRun::start(&rti, "tg-peers", demo, &layout, ServerConfig::new(2)).unwrap();
    let watcher = rti
        .join(
            "tg-peers",
            JoinOptions::named("watcher", "test").with_process_model(ProcessModel::Evoked),
        )
        .unwrap();
    let aircraft = watcher.object_class_handle("Aircraft").unwrap();
    let attr = |name: &str| watcher.attribute_handle(aircraft, name).unwrap();
    let (callsign, kind, altitude, time) = (
        attr("callsign"),
        attr("aircraftType"),
        attr("altitudeFt"),
        attr("trackTime"),
    );
    watcher
        .subscribe_object_class_attributes(aircraft, &[callsign, kind, altitude, time])
        .unwrap();
    for _ in 0..3 {
        tg.server.step().unwrap();
    }
    let fom = watcher.fom().clone();
    let data_type = |h| fom.attribute(h).unwrap().data_type.clone().unwrap();
    let mut seen = Vec::new();
    while let Some(cb) = watcher.next_callback(std::time::Duration::from_millis(200)) {
        if let Callback::ReflectAttributeValues { values, .. } = cb {
            for (h, v) in values.iter() {
                let decoded = fom.decode_value(&data_type(*h), v).unwrap_or_else(|e| {
                    panic!("attribute {h:?} does not decode as its FOM type: {e}")
                });
                match decoded {
                    Value::Text(name) if *h == callsign => seen.push(name),
                    Value::Text(t) if *h == kind => assert!(!t.is_empty()),
                    Value::Float(ft) if *h == altitude => assert!(ft > -1000.0 && ft < 60_000.0),
                    Value::Int(us) if *h == time => assert!(us >= 0),
                    other => panic!("attribute {h:?}: unexpected {other:?}"),
                }
            }
        }
    }
    seen.sort();
    let mut expected = expected;
    expected.sort();
    assert_eq!(seen, expected, "each aircraft named once, by its callsign");
    watcher
        .resign(glidepath::ResignAction::DeleteObjects)
        .unwrap();
    tg.finish().unwrap();
}

#[test]
fn a_peers_garbage_is_counted_and_the_run_goes_on() {
    let rti = Rti::inproc();
    let demo = scenario::load("demo", PerformanceTable::builtin()).unwrap();
    let count = demo.aircraft.len() as u64;
    let layout = LocalLayout::new(1, 1, Model::PointMass);
    let mut tg = LocalRun::start(&rti, "tg-garbage", demo, &layout, ServerConfig::new(1)).unwrap();
    let peer = rti
        .join(
            "tg-garbage",
            JoinOptions::named("peer", "test").with_process_model(ProcessModel::Evoked),
        )
        .unwrap();
    let send = |class: &str, params: &[(&str, &[u8])]| {
        let c = peer.interaction_class_handle(class).unwrap();
        peer.publish_interaction_class(c).unwrap();
        let values: Vec<_> = params
            .iter()
            .map(|(p, v)| {
                (
                    peer.parameter_handle(c, p).unwrap(),
                    Bytes::copy_from_slice(v),
                )
            })
            .collect();
        peer.send_interaction(c, values, Bytes::new()).unwrap();
    };
    // To the server: a command that is not one, a frame report with a name that is no
    // HLAunicodeString. To the node: an assignment with a truncated count.
    send("TgCommand", &[("command", b"\x00\x00\x00\x03abc")]);
    send(
        "TgFrameDone",
        &[("node", b"\xff"), ("frame", b"\0\0\0\0\0\0\0\x01")],
    );
    let node = glidepath::mom::encode_unicode_string("tg-node-1");
    send("TgAssign", &[("node", &node), ("aircraft", b"\0\0")]);
    for _ in 0..3 {
        let frame = tg.server.step().unwrap();
        assert_eq!(frame.updates, count);
    }
    assert_eq!(tg.server.malformed(), 2);
    peer.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    let reports = tg.finish().unwrap();
    assert_eq!(
        reports.iter().map(|r| r.malformed).sum::<u64>(),
        1,
        "{reports:?}"
    );
}

#[test]
fn a_late_joiner_asks_for_and_gets_every_callsign() {
    let rti = Rti::inproc();
    let demo = scenario::load("demo", PerformanceTable::builtin()).unwrap();
    let count = demo.aircraft.len();
    let layout = LocalLayout::new(2, 1, Model::PointMass);
    let mut tg = LocalRun::start(&rti, "tg-late", demo, &layout, ServerConfig::new(2)).unwrap();
    for _ in 0..3 {
        tg.server.step().unwrap();
    }
    // Joined after every aircraft's first update, the one that carries its callsign.
    let late = rti
        .join(
            "tg-late",
            JoinOptions::named("late", "test").with_process_model(ProcessModel::Evoked),
        )
        .unwrap();
    let aircraft = late.object_class_handle("Aircraft").unwrap();
    let callsign = late.attribute_handle(aircraft, "callsign").unwrap();
    late.subscribe_object_class_attributes(aircraft, &[callsign])
        .unwrap();
    late.request_class_attribute_value_update(aircraft, &[callsign], Bytes::new())
        .unwrap();
    for _ in 0..2 {
        tg.server.step().unwrap();
    }
    let fom = late.fom().clone();
    let mut names = std::collections::BTreeSet::new();
    while let Some(cb) = late.next_callback(std::time::Duration::from_millis(200)) {
        if let Callback::ReflectAttributeValues { values, .. } = cb {
            for (_, v) in values.iter().filter(|(h, _)| *h == callsign) {
                match fom.decode_value("HLAunicodeString", v).unwrap() {
                    Value::Text(name) => {
                        names.insert(name);
                    }
                    other => panic!("{other:?}"),
                }
            }
        }
    }
    assert_eq!(names.len(), count, "{names:?}");
    late.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    tg.finish().unwrap();
}

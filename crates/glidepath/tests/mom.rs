//! The management object model: the RTI's `HLAmanager.HLAfederate` and
//! `HLAmanager.HLAfederation` instances, discovered by a subscriber as members join,
//! reflected on request and on the period `HLAsetTiming` sets, removed when a member
//! resigns; a malformed adjustment is counted. On `inproc` and over a real
//! `nats-server`.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::*;
use glidepath::backend::nats::NatsTestbed;
use glidepath::mom::{self, MomValue};
use glidepath::{
    AttributeHandle, Bytes, Callback, Federate, ObjectInstanceHandle, Rti, TimeRepresentation,
};

/// The MOM's handles, looked up through a federate.
struct Mom {
    federate: glidepath::ObjectClassHandle,
    federate_attributes: Vec<(AttributeHandle, &'static str)>,
    federation: glidepath::ObjectClassHandle,
    federation_attributes: Vec<(AttributeHandle, &'static str)>,
    set_timing: glidepath::InteractionClassHandle,
    set_timing_federate: glidepath::ParameterHandle,
    set_timing_period: glidepath::ParameterHandle,
}

impl Mom {
    fn of(f: &Federate) -> Mom {
        let federate = f.object_class_handle("HLAmanager.HLAfederate").unwrap();
        let federation = f.object_class_handle("HLAmanager.HLAfederation").unwrap();
        let set_timing = f
            .interaction_class_handle("HLAmanager.HLAfederate.HLAadjust.HLAsetTiming")
            .unwrap();
        Mom {
            federate,
            federate_attributes: mom::FEDERATE_ATTRIBUTES
                .iter()
                .map(|n| (f.attribute_handle(federate, n).unwrap(), *n))
                .collect(),
            federation,
            federation_attributes: mom::FEDERATION_ATTRIBUTES
                .iter()
                .map(|n| (f.attribute_handle(federation, n).unwrap(), *n))
                .collect(),
            set_timing,
            set_timing_federate: f.parameter_handle(set_timing, "HLAfederate").unwrap(),
            set_timing_period: f.parameter_handle(set_timing, "HLAreportPeriod").unwrap(),
        }
    }

    fn name_of(&self, a: AttributeHandle) -> &'static str {
        self.federate_attributes
            .iter()
            .chain(self.federation_attributes.iter())
            .find(|(h, _)| *h == a)
            .map(|(_, n)| *n)
            .expect("a MOM attribute")
    }
}

/// What a monitor has seen of one MOM instance.
#[derive(Default, Debug)]
struct Seen {
    name: String,
    values: BTreeMap<&'static str, MomValue>,
    reflections: usize,
}

/// Takes callbacks until `done` holds of what was seen (or fails after `TIMEOUT`).
fn watch(
    monitor: &Federate,
    m: &Mom,
    seen: &mut BTreeMap<ObjectInstanceHandle, Seen>,
    what: &str,
    mut done: impl FnMut(&BTreeMap<ObjectInstanceHandle, Seen>) -> bool,
) {
    let deadline = Instant::now() + TIMEOUT;
    while !done(seen) {
        let left = deadline.saturating_duration_since(Instant::now());
        let cb = monitor
            .next_callback(left)
            .unwrap_or_else(|| panic!("waiting for {what}: nothing more; seen {seen:#?}"));
        match cb {
            Callback::DiscoverObjectInstance { instance, name, .. } => {
                assert!(mom::is_mom_instance(instance), "{name}");
                seen.entry(instance).or_default().name = name;
            }
            Callback::ReflectAttributeValues {
                instance, values, ..
            } => {
                let s = seen.get_mut(&instance).expect("reflected after discovery");
                s.reflections += 1;
                for (a, v) in values.iter() {
                    let name = m.name_of(*a);
                    let value = mom::decode_attribute(name, TimeRepresentation::Float64, v)
                        .unwrap_or_else(|e| panic!("{name}: {e}"));
                    s.values.insert(name, value);
                }
            }
            Callback::RemoveObjectInstance { instance, .. } => {
                seen.remove(&instance).expect("removed after discovery");
            }
            _ => {}
        }
    }
}

fn by_name<'a>(seen: &'a BTreeMap<ObjectInstanceHandle, Seen>, name: &str) -> Option<&'a Seen> {
    seen.values().find(|s| s.name == name)
}

fn text(s: &Seen, attribute: &str) -> String {
    match s.values.get(attribute) {
        Some(MomValue::Text(t)) => t.clone(),
        other => panic!("{attribute}: {other:?}"),
    }
}

fn int(s: &Seen, attribute: &str) -> i32 {
    match s.values.get(attribute) {
        Some(MomValue::Int(i)) => *i,
        other => panic!("{attribute}: {other:?}"),
    }
}

fn the_mom_follows_the_federation(rti_for: impl Fn() -> Rti, federation: &str) {
    let first = rti_for();
    first
        .create_federation_execution_with_fom(federation, vehicles_fom())
        .unwrap();
    let alice = first
        .join(
            federation,
            glidepath::JoinOptions::named("alice", "generator"),
        )
        .unwrap();
    let bob_rti = rti_for();
    let bob = bob_rti
        .join(federation, glidepath::JoinOptions::named("bob", "pilot"))
        .unwrap();
    let monitor_rti = rti_for();
    let monitor = monitor_rti
        .join(
            federation,
            glidepath::JoinOptions::named("monitor", "status"),
        )
        .unwrap();
    let names = Names::of(&alice);
    let m = Mom::of(&monitor);

    // Alice does something the MOM counts: regulation, three updates, one interaction.
    alice.enable_time_regulation(2.0).unwrap();
    wait_for(&alice, "regulation", |c| {
        matches!(c, Callback::TimeRegulationEnabled { .. })
    });
    alice
        .publish_object_class_attributes(names.vehicle, &[names.label])
        .unwrap();
    alice.publish_interaction_class(names.alert).unwrap();
    let v = alice.register_object_instance(names.vehicle).unwrap();
    for i in 0..3 {
        alice
            .update_attribute_values(v, [(names.label, b(&format!("v{i}")))], "")
            .unwrap();
    }
    send_marker(&alice, &names, "counted");

    // The monitor subscribes: both members' instances and the federation's appear.
    let all: Vec<AttributeHandle> = m.federate_attributes.iter().map(|(a, _)| *a).collect();
    monitor
        .subscribe_object_class_attributes(m.federate, &all)
        .unwrap();
    let all_federation: Vec<AttributeHandle> =
        m.federation_attributes.iter().map(|(a, _)| *a).collect();
    monitor
        .subscribe_object_class_attributes(m.federation, &all_federation)
        .unwrap();
    let mut seen = BTreeMap::new();
    watch(&monitor, &m, &mut seen, "three discoveries", |s| {
        s.len() == 3
    });
    assert!(by_name(&seen, "HLAfederate.alice").is_some(), "{seen:#?}");
    assert!(by_name(&seen, "HLAfederate.bob").is_some(), "{seen:#?}");
    let federation_name = format!("HLAfederation.{federation}");
    assert!(by_name(&seen, &federation_name).is_some(), "{seen:#?}");

    // On request, every member answers for itself, and one for the federation.
    monitor
        .request_class_attribute_value_update(m.federate, &[], "status")
        .unwrap();
    monitor
        .request_class_attribute_value_update(m.federation, &[], "status")
        .unwrap();
    watch(&monitor, &m, &mut seen, "every instance's values", |s| {
        s.values().all(|x| x.reflections > 0)
    });
    let a = by_name(&seen, "HLAfederate.alice").unwrap();
    assert_eq!(text(a, "HLAfederateName"), "alice");
    assert_eq!(text(a, "HLAfederateType"), "generator");
    assert!(text(a, "HLARTIversion").starts_with("glidepath "));
    assert_eq!(
        a.values["HLAfederateHandle"],
        MomValue::Federate(alice.handle())
    );
    assert_eq!(a.values["HLAtimeRegulating"], MomValue::Bool(true));
    assert_eq!(a.values["HLAtimeConstrained"], MomValue::Bool(false));
    assert_eq!(a.values["HLAlookahead"], MomValue::Float(2.0));
    assert_eq!(a.values["HLAlogicalTime"], MomValue::Float(0.0));
    assert_eq!(int(a, "HLAupdatesSent"), 3);
    assert_eq!(int(a, "HLAinteractionsSent"), 1);
    assert_eq!(int(a, "HLAobjectInstancesRegistered"), 1);
    assert_eq!(int(a, "HLAfederateState"), 1, "ActiveFederate");
    let bob_seen = by_name(&seen, "HLAfederate.bob").unwrap();
    assert_eq!(bob_seen.values["HLAtimeRegulating"], MomValue::Bool(false));
    assert_eq!(int(bob_seen, "HLAupdatesSent"), 0);
    let fed = by_name(&seen, &federation_name).unwrap();
    assert_eq!(text(fed, "HLAfederationName"), federation);
    assert_eq!(
        fed.values["HLAfederatesInFederation"],
        MomValue::Federates(vec![alice.handle(), bob.handle(), monitor.handle()])
    );
    assert_eq!(text(fed, "HLAtimeImplementationName"), "HLAfloat64Time");

    // HLAsetTiming: bob reports every second by itself from now on.
    monitor.publish_interaction_class(m.set_timing).unwrap();
    let bob_instance = mom::federate_instance(bob.handle());
    let before = seen[&bob_instance].reflections;
    monitor
        .send_interaction(
            m.set_timing,
            [
                (
                    m.set_timing_federate,
                    mom::encode_federate_handle(bob.handle()),
                ),
                (m.set_timing_period, mom::encode_i32(1)),
            ],
            "",
        )
        .unwrap();
    watch(&monitor, &m, &mut seen, "three reports from bob", |s| {
        s[&bob_instance].reflections >= before + 3
    });
    // A change of a conditional attribute is reported at once, even with a period
    // of an hour: carol joins (the monitor discovers her), is asked for hourly
    // reports (her first, immediate, report says unconstrained), then becomes
    // time-constrained, and that report must come from the change.
    let carol_rti = rti_for();
    let carol = carol_rti
        .join(
            federation,
            glidepath::JoinOptions::named("carol", "station"),
        )
        .unwrap();
    let carol_instance = mom::federate_instance(carol.handle());
    watch(&monitor, &m, &mut seen, "carol discovered", |s| {
        s.contains_key(&carol_instance)
    });
    monitor
        .send_interaction(
            m.set_timing,
            [
                (
                    m.set_timing_federate,
                    mom::encode_federate_handle(carol.handle()),
                ),
                (m.set_timing_period, mom::encode_i32(3600)),
            ],
            "",
        )
        .unwrap();
    watch(&monitor, &m, &mut seen, "carol's first report", |s| {
        s[&carol_instance].reflections > 0
    });
    assert_eq!(
        seen[&carol_instance].values["HLAtimeConstrained"],
        MomValue::Bool(false)
    );
    carol.enable_time_constrained().unwrap();
    watch(&monitor, &m, &mut seen, "carol's change reported", |s| {
        s[&carol_instance].values.get("HLAtimeConstrained") == Some(&MomValue::Bool(true))
    });
    assert_eq!(seen[&carol_instance].reflections, 2);
    carol
        .resign(glidepath::ResignAction::DeleteObjects)
        .unwrap();

    // A malformed adjustment is counted by the federates that read it, not obeyed.
    monitor
        .send_interaction(
            m.set_timing,
            [(m.set_timing_federate, Bytes::from_static(&[0, 0, 0, 9, 1]))],
            "",
        )
        .unwrap();
    let deadline = Instant::now() + TIMEOUT;
    while alice.stats().malformed_mom == 0 {
        assert!(
            Instant::now() < deadline,
            "alice never counted the bad adjustment"
        );
        alice
            .evoke_callback(
                &mut glidepath::CallbackLog::default(),
                Duration::from_millis(10),
            )
            .unwrap();
    }

    // Bob resigns: his instance is removed at the monitor.
    bob.resign(glidepath::ResignAction::DeleteObjects).unwrap();
    watch(&monitor, &m, &mut seen, "bob's instance removed", |s| {
        !s.contains_key(&bob_instance)
    });
    assert!(by_name(&seen, "HLAfederate.alice").is_some());

    // The MOM's instances are the RTI's: no federate may update them.
    assert!(monitor
        .update_attribute_values(
            mom::federate_instance(alice.handle()),
            [(all[1], mom::encode_unicode_string("mallory"))],
            ""
        )
        .is_err());

    monitor
        .resign(glidepath::ResignAction::DeleteObjects)
        .unwrap();
    alice
        .resign(glidepath::ResignAction::DeleteObjects)
        .unwrap();
    first.destroy_federation_execution(federation).unwrap();
}

#[test]
fn inproc_the_mom_reports_members_on_request_and_on_their_period() {
    let rti = Rti::inproc();
    the_mom_follows_the_federation(|| rti.clone(), "mom-inproc");
}

#[test]
fn over_nats_the_mom_reports_members_on_request_and_on_their_period() {
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let url = testbed.url();
    the_mom_follows_the_federation(
        || Rti::nats(&url).unwrap_or_else(|e| panic!("{e}")),
        "mom-nats",
    );
}

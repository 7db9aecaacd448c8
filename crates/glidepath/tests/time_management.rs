//! Time management through the front API: enabling regulation and constrained,
//! time-stamp-order delivery, the TAR/TARA/NER/NERA/FQR grants, zero lookahead, and
//! a multi-federate lock-step run on separate threads.

mod common;

use std::thread;

use common::*;
use glidepath::{
    Callback, Federate, LogicalTime, ObjectError, OrderType, ResignAction, RtiError, TimeError,
    TimeValue,
};

/// Receives a `Fire` interaction and returns (time, target, received order).
fn fire(f: &Federate) -> (LogicalTime, String, OrderType) {
    match next(f) {
        Callback::ReceiveInteraction { values, info, .. } => (
            info.time.expect("time-stamped"),
            String::from_utf8(values[0].1.to_vec()).unwrap(),
            info.received_order,
        ),
        other => panic!("{}: expected a Fire interaction, got {other:?}", f.name()),
    }
}

fn expect_grant(f: &Federate, time: f64) {
    assert_eq!(
        next(f),
        Callback::TimeAdvanceGrant { time: t(time) },
        "{}: grant",
        f.name()
    );
}

#[test]
fn enabling_regulation_and_constrained_and_request_errors() {
    let rti = federation("tm-enable");
    let a = join(&rti, "tm-enable", "a");
    let b_ = join(&rti, "tm-enable", "b");
    a.enable_time_regulation(1.0).unwrap();
    assert_eq!(next(&a), Callback::TimeRegulationEnabled { time: t(0.0) });
    assert!(a.is_time_regulating());
    assert_eq!(
        a.enable_time_regulation(1.0),
        Err(RtiError::Time(TimeError::TimeRegulationAlreadyEnabled))
    );
    assert_eq!(
        a.enable_time_regulation(-1.0).unwrap_err(),
        RtiError::Time(TimeError::InvalidLookahead(TimeValue::Float(-1.0)))
    );
    assert_eq!(a.query_lookahead().as_f64(), 1.0);
    a.enable_time_constrained().unwrap();
    assert_eq!(next(&a), Callback::TimeConstrainedEnabled { time: t(0.0) });
    assert_eq!(
        a.enable_time_constrained(),
        Err(RtiError::Time(TimeError::TimeConstrainedAlreadyEnabled))
    );
    // Nobody else regulates: GALT is undefined and any advance is granted at once.
    assert_eq!(a.query_galt(), None);
    a.time_advance_request(5.0).unwrap();
    expect_grant(&a, 5.0);
    assert_eq!(a.query_logical_time(), t(5.0));
    assert_eq!(
        a.time_advance_request(3.0),
        Err(RtiError::Time(TimeError::LogicalTimeAlreadyPassed {
            requested: t(3.0),
            current: t(5.0)
        }))
    );
    assert!(
        matches!(a.time_advance_request(f64::NAN), Err(RtiError::Time(TimeError::InvalidLogicalTime(x))) if x.is_nan())
    );
    assert!(matches!(
        a.update_attribute_values_at(glidepath::ObjectInstanceHandle(1), [], "", f64::NAN),
        Err(RtiError::Time(TimeError::InvalidLogicalTime(_)))
    ));

    // b constrained behind a: its advance waits; a second request is refused. The
    // marker shows b has processed a's latest time status.
    let n = Names::of(&a);
    b_.subscribe_interaction_class(n.alert).unwrap();
    a.publish_interaction_class(n.alert).unwrap();
    send_marker(&a, &n, "status sent");
    assert!(is_marker(&next(&b_), "status sent"));
    b_.enable_time_constrained().unwrap();
    assert_eq!(next(&b_), Callback::TimeConstrainedEnabled { time: t(0.0) });
    assert_eq!(
        b_.query_galt(),
        Some(t(6.0)),
        "a's promise: logical time 5 plus lookahead 1"
    );
    b_.time_advance_request(10.0).unwrap();
    assert!(b_.is_time_advancing());
    assert_eq!(
        b_.time_advance_request(11.0),
        Err(RtiError::Time(TimeError::InTimeAdvancingState))
    );
    assert_eq!(
        b_.disable_time_regulation(),
        Err(RtiError::Time(TimeError::TimeRegulationIsNotEnabled))
    );
    a.time_advance_request(20.0).unwrap();
    expect_grant(&b_, 10.0);
    expect_grant(&a, 20.0);

    // A regulating federate may not send into the past of its promise.
    a.publish_interaction_class(n.fire).unwrap();
    assert_eq!(
        a.send_interaction_at(n.fire, [(n.target, b("x"))], "", 20.5),
        Err(RtiError::Object(ObjectError::InvalidLogicalTime {
            time: t(20.5),
            earliest: t(21.0)
        }))
    );
    a.disable_time_regulation().unwrap();
    a.disable_time_constrained().unwrap();
    assert!(!a.is_time_regulating() && !a.is_time_constrained());
}

#[test]
fn time_stamp_order_delivery_with_a_deterministic_tie_break() {
    let rti = federation("tm-tso");
    let s1 = join(&rti, "tm-tso", "s1");
    let s2 = join(&rti, "tm-tso", "s2");
    let r = join(&rti, "tm-tso", "r");
    let n = Names::of(&r);
    r.subscribe_interaction_class(n.fire).unwrap();
    r.subscribe_interaction_class(n.alert).unwrap();
    r.enable_time_constrained().unwrap();
    assert!(matches!(next(&r), Callback::TimeConstrainedEnabled { .. }));
    for s in [&s1, &s2] {
        s.enable_time_regulation(1.0).unwrap();
        assert!(matches!(next(s), Callback::TimeRegulationEnabled { .. }));
        s.publish_interaction_class(n.fire).unwrap();
        s.publish_interaction_class(n.alert).unwrap();
    }
    let send = |s: &Federate, time: f64| {
        s.send_interaction_at(
            n.fire,
            [(n.target, b(&format!("{}@{time}", s.name())))],
            "",
            time,
        )
        .unwrap()
    };
    send(&s2, 4.0);
    send(&s1, 5.0);
    send(&s2, 3.0);
    send(&s1, 3.0);
    send(&s1, 15.0);
    send_marker(&s2, &n, "receive order");
    // Receive-order traffic is not held back by the queue.
    assert!(is_marker(&next(&r), "receive order"));

    r.time_advance_request(10.0).unwrap();
    s1.time_advance_request(10.0).unwrap();
    s2.time_advance_request(10.0).unwrap();
    let got: Vec<(LogicalTime, String, OrderType)> = (0..4).map(|_| fire(&r)).collect();
    assert_eq!(
        got,
        vec![
            (t(3.0), "s1@3".to_string(), OrderType::TimeStamp),
            (t(3.0), "s2@3".to_string(), OrderType::TimeStamp),
            (t(4.0), "s2@4".to_string(), OrderType::TimeStamp),
            (t(5.0), "s1@5".to_string(), OrderType::TimeStamp),
        ],
        "time-stamp order, ties broken by sender handle"
    );
    expect_grant(&r, 10.0);
    // 15 is beyond the grant: it comes with the next advance, before its grant.
    r.time_advance_request(20.0).unwrap();
    s1.time_advance_request(20.0).unwrap();
    s2.time_advance_request(20.0).unwrap();
    assert_eq!(
        fire(&r),
        (t(15.0), "s1@15".to_string(), OrderType::TimeStamp)
    );
    expect_grant(&r, 20.0);
}

#[test]
fn an_unconstrained_federate_gets_time_stamped_messages_in_receive_order() {
    let rti = federation("tm-unconstrained");
    let s = join(&rti, "tm-unconstrained", "s");
    let r = join(&rti, "tm-unconstrained", "r");
    let n = Names::of(&r);
    r.subscribe_interaction_class(n.fire).unwrap();
    s.enable_time_regulation(1.0).unwrap();
    assert!(matches!(next(&s), Callback::TimeRegulationEnabled { .. }));
    s.publish_interaction_class(n.fire).unwrap();
    s.send_interaction_at(n.fire, [(n.target, b("late"))], "", 9.0)
        .unwrap();
    s.send_interaction_at(n.fire, [(n.target, b("early"))], "", 2.0)
        .unwrap();
    match next(&r) {
        Callback::ReceiveInteraction { values, info, .. } => {
            assert_eq!(values[0].1, "late", "arrival order");
            assert_eq!(
                (info.sent_order, info.received_order, info.time),
                (OrderType::TimeStamp, OrderType::Receive, Some(t(9.0)))
            );
        }
        other => panic!("expected an interaction, got {other:?}"),
    }
    assert_eq!(fire(&r), (t(2.0), "early".to_string(), OrderType::Receive));
}

#[test]
fn next_message_request_grants_at_the_next_message() {
    let rti = federation("tm-ner");
    let s = join(&rti, "tm-ner", "s");
    let r = join(&rti, "tm-ner", "r");
    let n = Names::of(&r);
    r.subscribe_interaction_class(n.fire).unwrap();
    r.enable_time_constrained().unwrap();
    assert!(matches!(next(&r), Callback::TimeConstrainedEnabled { .. }));
    s.enable_time_regulation(1.0).unwrap();
    assert!(matches!(next(&s), Callback::TimeRegulationEnabled { .. }));
    s.publish_interaction_class(n.fire).unwrap();
    s.send_interaction_at(n.fire, [(n.target, b("a"))], "", 7.0)
        .unwrap();
    s.send_interaction_at(n.fire, [(n.target, b("b"))], "", 3.0)
        .unwrap();
    s.time_advance_request(10.0).unwrap();
    expect_grant(&s, 10.0);

    r.next_message_request(20.0).unwrap();
    assert_eq!(fire(&r), (t(3.0), "b".to_string(), OrderType::TimeStamp));
    expect_grant(&r, 3.0);
    r.next_message_request(20.0).unwrap();
    assert_eq!(fire(&r), (t(7.0), "a".to_string(), OrderType::TimeStamp));
    expect_grant(&r, 7.0);
    // Nothing queued: granted at the requested time once s promises past it.
    r.next_message_request(20.0).unwrap();
    s.time_advance_request(30.0).unwrap();
    expect_grant(&r, 20.0);
    // Its logical time only ever grew.
    assert_eq!(r.query_logical_time(), t(20.0));
}

#[test]
fn flush_queue_request_delivers_everything_and_grants_what_is_safe() {
    let rti = federation("tm-fqr");
    let s = join(&rti, "tm-fqr", "s");
    let r = join(&rti, "tm-fqr", "r");
    let n = Names::of(&r);
    r.subscribe_interaction_class(n.fire).unwrap();
    r.enable_time_constrained().unwrap();
    assert!(matches!(next(&r), Callback::TimeConstrainedEnabled { .. }));
    s.enable_time_regulation(1.0).unwrap();
    assert!(matches!(next(&s), Callback::TimeRegulationEnabled { .. }));
    s.publish_interaction_class(n.fire).unwrap();
    s.send_interaction_at(n.fire, [(n.target, b("x"))], "", 8.0)
        .unwrap();
    s.send_interaction_at(n.fire, [(n.target, b("y"))], "", 5.0)
        .unwrap();
    // Wait until both are queued at r: s's next message is behind them.
    r.subscribe_interaction_class(n.alert).unwrap();
    s.publish_interaction_class(n.alert).unwrap();
    send_marker(&s, &n, "queued");
    assert!(is_marker(&next(&r), "queued"));
    assert_eq!(
        r.query_lits(),
        Some(t(1.0)),
        "GALT (s's promise 1) is below the first queued message"
    );

    r.flush_queue_request(10.0).unwrap();
    assert_eq!(fire(&r), (t(5.0), "y".to_string(), OrderType::TimeStamp));
    assert_eq!(fire(&r), (t(8.0), "x".to_string(), OrderType::TimeStamp));
    expect_grant(&r, 1.0);
}

#[test]
fn zero_lookahead_progresses_with_the_available_variants() {
    let rti = federation("tm-zero");
    let feds: Vec<Federate> = (0..2)
        .map(|i| join(&rti, "tm-zero", &format!("z{i}")))
        .collect();
    let n = Names::of(&feds[0]);
    for f in &feds {
        f.subscribe_interaction_class(n.fire).unwrap();
        f.publish_interaction_class(n.fire).unwrap();
    }
    for f in &feds {
        regulating_and_constrained(f, 0.0);
    }
    for step in 0..40u32 {
        let target = f64::from(step + 1);
        for f in &feds {
            // Zero lookahead: a message may carry the current request's time.
            f.send_interaction_at(n.fire, [(n.target, b(f.name()))], "", target)
                .unwrap();
            if step % 2 == 0 {
                f.time_advance_request_available(target).unwrap();
            } else {
                f.next_message_request_available(target).unwrap();
            }
        }
        for f in &feds {
            let mut fires = 0;
            loop {
                match next(f) {
                    Callback::ReceiveInteraction { info, .. } => {
                        assert_eq!(info.time, Some(t(target)));
                        fires += 1;
                    }
                    Callback::TimeAdvanceGrant { time } => {
                        assert_eq!(time, t(target), "{}: step {step}", f.name());
                        break;
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
            assert_eq!(
                fires,
                1,
                "{}: the peer's message at {target} comes before the grant",
                f.name()
            );
        }
    }
}

#[test]
fn lookahead_and_queries() {
    let rti = federation("tm-queries");
    let s = join(&rti, "tm-queries", "s");
    let r = join(&rti, "tm-queries", "r");
    let n = Names::of(&r);
    r.subscribe_interaction_class(n.fire).unwrap();
    r.subscribe_interaction_class(n.alert).unwrap();
    r.enable_time_constrained().unwrap();
    assert!(matches!(next(&r), Callback::TimeConstrainedEnabled { .. }));
    assert_eq!(r.query_galt(), None, "nobody regulates yet");
    s.enable_time_regulation(1.0).unwrap();
    assert!(matches!(next(&s), Callback::TimeRegulationEnabled { .. }));
    assert_eq!(
        s.modify_lookahead(f64::INFINITY),
        Err(RtiError::Time(TimeError::InvalidLookahead(
            TimeValue::Float(f64::INFINITY)
        )))
    );
    s.publish_interaction_class(n.fire).unwrap();
    s.publish_interaction_class(n.alert).unwrap();
    s.send_interaction_at(n.fire, [(n.target, b("q"))], "", 3.0)
        .unwrap();
    s.modify_lookahead(5.0).unwrap();
    send_marker(&s, &n, "after modify");
    assert!(is_marker(&next(&r), "after modify"));
    assert_eq!(
        r.query_galt(),
        Some(t(5.0)),
        "the new lookahead raises s's promise"
    );
    assert_eq!(
        r.query_lits(),
        Some(t(3.0)),
        "the queued message is the least incoming time stamp"
    );
    assert_eq!(s.query_lookahead().as_f64(), 5.0);
}

/// Every federate regulating and constrained, each on its own thread, in lock-step
/// for 1000 steps: at each step every federate receives exactly one message from
/// every other, all at the step's time, before its grant; grants never go back and
/// no time-stamped message is ever earlier than the receiver's logical time.
#[test]
fn lock_step_of_five_federates_for_a_thousand_steps() {
    const FEDERATES: usize = 5;
    const STEPS: u32 = 1000;
    let rti = federation("tm-lockstep");
    let feds: Vec<Federate> = (0..FEDERATES)
        .map(|i| join(&rti, "tm-lockstep", &format!("p{i}")))
        .collect();
    let n = Names::of(&feds[0]);
    for f in &feds {
        f.subscribe_interaction_class(n.fire).unwrap();
        f.publish_interaction_class(n.fire).unwrap();
        regulating_and_constrained(f, 1.0);
    }
    thread::scope(|scope| {
        for f in &feds {
            scope.spawn(move || {
                let mut now = f.query_logical_time();
                assert_eq!(now, t(0.0));
                for step in 1..=STEPS {
                    let target = f64::from(step);
                    f.send_interaction_at(n.fire, [(n.target, b(&step.to_string()))], "", target)
                        .unwrap();
                    f.time_advance_request(target).unwrap();
                    let mut from = Vec::new();
                    loop {
                        match next(f) {
                            Callback::ReceiveInteraction { values, info, .. } => {
                                let time = info.time.unwrap();
                                assert!(
                                    time > now,
                                    "{}: message at {time} while at {now}",
                                    f.name()
                                );
                                assert_eq!(time, t(target), "{}: step {step}", f.name());
                                assert_eq!(values[0].1, step.to_string().as_bytes());
                                assert_eq!(info.received_order, OrderType::TimeStamp);
                                from.push(info.producer);
                            }
                            Callback::TimeAdvanceGrant { time } => {
                                assert!(
                                    time >= now,
                                    "{}: grant went back from {now} to {time}",
                                    f.name()
                                );
                                assert_eq!(time, t(target));
                                now = time;
                                break;
                            }
                            other => panic!("{}: unexpected {other:?}", f.name()),
                        }
                    }
                    from.sort();
                    from.dedup();
                    assert_eq!(
                        from.len(),
                        FEDERATES - 1,
                        "{}: step {step} heard from every peer once",
                        f.name()
                    );
                }
                assert_eq!(f.query_logical_time(), t(f64::from(STEPS)));
            });
        }
    });
    for f in &feds {
        let stats = f.stats();
        assert_eq!(stats.out_of_order, 0);
        assert_eq!(stats.broken_promises, 0);
    }
}

// ----- federation dynamics and more grant semantics -------------------------------

/// A federate that becomes regulating while a constrained peer is at 100 starts at
/// 100, so it can never send into that peer's past.
#[test]
fn a_late_regulator_starts_at_the_constrained_peers_time() {
    let rti = federation("tm-late-regulator");
    let c = join(&rti, "tm-late-regulator", "c");
    c.enable_time_constrained().unwrap();
    assert!(matches!(next(&c), Callback::TimeConstrainedEnabled { .. }));
    c.time_advance_request(100.0).unwrap();
    expect_grant(&c, 100.0);
    let r = join(&rti, "tm-late-regulator", "r");
    r.enable_time_regulation(1.0).unwrap();
    assert_eq!(next(&r), Callback::TimeRegulationEnabled { time: t(100.0) });
    assert_eq!(r.query_logical_time(), t(100.0));
}

/// A constrained federate that joins late waits for the regulators it has not heard
/// from, then advances behind them.
#[test]
fn a_late_joiner_advances_behind_the_regulators() {
    let rti = federation("tm-late-joiner");
    let a = join(&rti, "tm-late-joiner", "a");
    a.enable_time_regulation(1.0).unwrap();
    assert!(matches!(next(&a), Callback::TimeRegulationEnabled { .. }));
    a.time_advance_request(50.0).unwrap();
    expect_grant(&a, 50.0);
    let c = join(&rti, "tm-late-joiner", "c");
    c.enable_time_constrained().unwrap();
    assert_eq!(next(&c), Callback::TimeConstrainedEnabled { time: t(0.0) });
    c.time_advance_request(40.0).unwrap();
    expect_grant(&c, 40.0);
    c.time_advance_request(60.0).unwrap();
    a.time_advance_request(70.0).unwrap();
    expect_grant(&c, 60.0);
}

/// NER granted at a message that arrives while the federate already waits.
#[test]
fn next_message_request_grants_at_a_message_arriving_while_waiting() {
    let rti = federation("tm-ner-wait");
    let s = join(&rti, "tm-ner-wait", "s");
    let r = join(&rti, "tm-ner-wait", "r");
    let n = Names::of(&r);
    r.subscribe_interaction_class(n.fire).unwrap();
    r.enable_time_constrained().unwrap();
    assert!(matches!(next(&r), Callback::TimeConstrainedEnabled { .. }));
    s.enable_time_regulation(1.0).unwrap();
    assert!(matches!(next(&s), Callback::TimeRegulationEnabled { .. }));
    s.publish_interaction_class(n.fire).unwrap();
    r.next_message_request(20.0).unwrap();
    s.send_interaction_at(n.fire, [(n.target, b("x"))], "", 5.0)
        .unwrap();
    s.time_advance_request(30.0).unwrap();
    assert_eq!(fire(&r), (t(5.0), "x".to_string(), OrderType::TimeStamp));
    expect_grant(&r, 5.0);
}

/// Two regulating and constrained federates both in NER: neither waits for the
/// other's lookahead to creep up to the requested time.
#[test]
fn two_federates_in_next_message_request_both_advance() {
    let rti = federation("tm-ner-pair");
    let a = join(&rti, "tm-ner-pair", "a");
    let z = join(&rti, "tm-ner-pair", "z");
    let n = Names::of(&a);
    for f in [&a, &z] {
        f.subscribe_interaction_class(n.fire).unwrap();
        f.publish_interaction_class(n.fire).unwrap();
        regulating_and_constrained(f, 1.0);
    }
    a.next_message_request(10.0).unwrap();
    z.next_message_request(10.0).unwrap();
    expect_grant(&a, 10.0);
    expect_grant(&z, 10.0);
    // A message at 13 brings z's grant forward; a is granted 20 once z asks again.
    a.send_interaction_at(n.fire, [(n.target, b("m"))], "", 13.0)
        .unwrap();
    a.next_message_request(20.0).unwrap();
    z.next_message_request(20.0).unwrap();
    assert_eq!(fire(&z), (t(13.0), "m".to_string(), OrderType::TimeStamp));
    expect_grant(&z, 13.0);
    z.next_message_request(20.0).unwrap();
    expect_grant(&z, 20.0);
    expect_grant(&a, 20.0);
}

/// A waiting constrained federate is released when the only regulator resigns or
/// stops regulating.
#[test]
fn a_regulator_leaving_releases_a_waiting_federate() {
    for leave in ["resign", "disable"] {
        let name = format!("tm-leave-{leave}");
        let rti = federation(&name);
        let a = join(&rti, &name, "a");
        let c = join(&rti, &name, "c");
        a.enable_time_regulation(1.0).unwrap();
        assert!(matches!(next(&a), Callback::TimeRegulationEnabled { .. }));
        c.enable_time_constrained().unwrap();
        assert!(matches!(next(&c), Callback::TimeConstrainedEnabled { .. }));
        c.time_advance_request(10.0).unwrap();
        match leave {
            "resign" => a.resign(ResignAction::NoAction).unwrap(),
            _ => a.disable_time_regulation().unwrap(),
        }
        expect_grant(&c, 10.0);
    }
}

/// Time-stamped deletions are delivered in time-stamp order after earlier updates.
#[test]
fn time_stamped_deletion_arrives_in_time_order() {
    let rti = federation("tm-delete");
    let s = join(&rti, "tm-delete", "s");
    let r = join(&rti, "tm-delete", "r");
    let n = Names::of(&r);
    r.subscribe_object_class_attributes(n.vehicle, &[n.position])
        .unwrap();
    r.enable_time_constrained().unwrap();
    assert!(matches!(next(&r), Callback::TimeConstrainedEnabled { .. }));
    s.enable_time_regulation(1.0).unwrap();
    assert!(matches!(next(&s), Callback::TimeRegulationEnabled { .. }));
    s.publish_object_class_attributes(n.vehicle, &[n.position])
        .unwrap();
    let v = s.register_object_instance(n.vehicle).unwrap();
    assert!(matches!(next(&r), Callback::DiscoverObjectInstance { .. }));
    s.update_attribute_values_at(v, [(n.position, b("p"))], "", 3.0)
        .unwrap();
    s.delete_object_instance_at(v, "gone", 5.0).unwrap();
    r.time_advance_request(4.0).unwrap();
    s.time_advance_request(10.0).unwrap();
    match next(&r) {
        Callback::ReflectAttributeValues { info, .. } => assert_eq!(info.time, Some(t(3.0))),
        other => panic!("expected the update at 3, got {other:?}"),
    }
    expect_grant(&r, 4.0);
    r.time_advance_request(6.0).unwrap();
    match next(&r) {
        Callback::RemoveObjectInstance { info, tag, .. } => {
            assert_eq!(
                (info.time, info.received_order),
                (Some(t(5.0)), OrderType::TimeStamp)
            );
            assert_eq!(tag, "gone");
        }
        other => panic!("expected the removal at 5, got {other:?}"),
    }
    expect_grant(&r, 6.0);
}

/// Four federates on their own threads advance by NER with sparse messages to a
/// common end time: every message arrives, none in a receiver's past, and every
/// grant is at most the requested time and never backwards.
#[test]
fn next_message_request_run_with_sparse_messages() {
    const END: f64 = 200.0;
    let rti = federation("tm-ner-run");
    let feds: Vec<_> = (0..4)
        .map(|i| join(&rti, "tm-ner-run", &format!("n{i}")))
        .collect();
    let n = Names::of(&feds[0]);
    for f in &feds {
        f.subscribe_interaction_class(n.fire).unwrap();
        f.publish_interaction_class(n.fire).unwrap();
        regulating_and_constrained(f, 0.5);
    }
    let (sent, received): (Vec<usize>, Vec<usize>) = thread::scope(|s| {
        let runs: Vec<_> = feds
            .iter()
            .enumerate()
            .map(|(i, f)| {
                let n = &n;
                s.spawn(move || {
                    let (mut now, mut sent, mut received) = (0.0f64, 0, 0);
                    while now < END {
                        let stamp = now + 0.5 + i as f64 * 0.1;
                        if (now as usize) % 7 == i && stamp <= END {
                            f.send_interaction_at(n.fire, [(n.target, b("z"))], "", stamp)
                                .unwrap();
                            sent += 1;
                        }
                        let requested = (now + 3.0).min(END);
                        f.next_message_request(requested).unwrap();
                        loop {
                            match next(f) {
                                Callback::ReceiveInteraction { info, .. } => {
                                    let time = info.time.unwrap().as_f64();
                                    assert!(
                                        time > now,
                                        "{}: message at {time} while at {now}",
                                        f.name()
                                    );
                                    received += 1;
                                }
                                Callback::TimeAdvanceGrant { time } => {
                                    let time = time.as_f64();
                                    assert!(
                                        time >= now && time <= requested,
                                        "{}: grant {time} from {now} asking {requested}",
                                        f.name()
                                    );
                                    now = time;
                                    break;
                                }
                                other => panic!("unexpected {other:?}"),
                            }
                        }
                    }
                    (sent, received)
                })
            })
            .collect();
        runs.into_iter().map(|h| h.join().unwrap()).unzip()
    });
    assert_eq!(
        received.iter().sum::<usize>(),
        3 * sent.iter().sum::<usize>(),
        "every message reached the three others"
    );
}

/// Regulation and constrained enabled by four federates at once, twenty times.
#[test]
fn concurrent_enabling_then_lock_step() {
    for round in 0..20 {
        let name = format!("tm-concurrent-{round}");
        let rti = federation(&name);
        let feds: Vec<Federate> = (0..4)
            .map(|i| join(&rti, &name, &format!("c{i}")))
            .collect();
        thread::scope(|s| {
            for f in &feds {
                s.spawn(move || regulating_and_constrained(f, 1.0));
            }
        });
        thread::scope(|s| {
            for f in &feds {
                s.spawn(move || {
                    for k in 1..=20u32 {
                        f.time_advance_request(k).unwrap();
                        assert_eq!(grant(f), t(f64::from(k)));
                    }
                });
            }
        });
    }
}

/// Zero lookahead on four threads for 300 steps with TARA and NERA: every message
/// sent at the step's time arrives before the grant at that time.
#[test]
fn zero_lookahead_run_on_four_threads() {
    let rti = federation("tm-zero-run");
    let feds: Vec<Federate> = (0..4)
        .map(|i| join(&rti, "tm-zero-run", &format!("z{i}")))
        .collect();
    let n = Names::of(&feds[0]);
    for f in &feds {
        f.subscribe_interaction_class(n.fire).unwrap();
        f.publish_interaction_class(n.fire).unwrap();
        regulating_and_constrained(f, 0.0);
    }
    thread::scope(|s| {
        for f in &feds {
            let n = &n;
            s.spawn(move || {
                let mut now = 0.0;
                for k in 1..=300u32 {
                    let target = f64::from(k);
                    f.send_interaction_at(n.fire, [(n.target, b("z"))], "", target)
                        .unwrap();
                    if k % 2 == 0 {
                        f.time_advance_request_available(target).unwrap();
                    } else {
                        f.next_message_request_available(target).unwrap();
                    }
                    let mut got = 0;
                    loop {
                        match next(f) {
                            Callback::ReceiveInteraction { info, .. } => {
                                let time = info.time.unwrap().as_f64();
                                assert!(
                                    time >= now && time <= target,
                                    "{}: {time} at {now} asking {target}",
                                    f.name()
                                );
                                got += 1;
                            }
                            Callback::TimeAdvanceGrant { time } => {
                                assert!(time.as_f64() >= now);
                                now = time.as_f64();
                                if now == target {
                                    break;
                                }
                                // NERA may grant at an earlier message time: ask again.
                                f.next_message_request_available(target).unwrap();
                            }
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                    assert_eq!(got, 3, "{}: step {k} heard from the three others", f.name());
                }
            });
        }
    });
    for f in &feds {
        assert_eq!(f.stats().broken_promises, 0, "{}", f.name());
    }
}

/// A regulating-only, a constrained-only and a regulating-and-constrained federate
/// advance together; the constrained ones never see a message from their past.
#[test]
fn mixed_roles_advance_together() {
    let rti = federation("tm-mixed");
    let p = join(&rti, "tm-mixed", "p");
    let c = join(&rti, "tm-mixed", "c");
    let rc = join(&rti, "tm-mixed", "rc");
    let n = Names::of(&p);
    for f in [&c, &rc] {
        f.subscribe_interaction_class(n.fire).unwrap();
    }
    for f in [&p, &rc] {
        f.publish_interaction_class(n.fire).unwrap();
    }
    p.enable_time_regulation(2.0).unwrap();
    assert!(matches!(next(&p), Callback::TimeRegulationEnabled { .. }));
    c.enable_time_constrained().unwrap();
    assert!(matches!(next(&c), Callback::TimeConstrainedEnabled { .. }));
    regulating_and_constrained(&rc, 1.0);
    // Each step: optionally send at step + lookahead, advance, check what arrives.
    let run = |f: &Federate, send_ahead: Option<f64>| {
        let mut now = 0.0;
        let mut received = 0;
        for k in 1..=100u32 {
            let x = f64::from(k);
            if let Some(ahead) = send_ahead {
                f.send_interaction_at(n.fire, [(n.target, b(f.name()))], "", x + ahead)
                    .unwrap();
            }
            f.time_advance_request(x).unwrap();
            loop {
                match next(f) {
                    Callback::ReceiveInteraction { info, .. } => {
                        let time = info.time.unwrap().as_f64();
                        assert!(
                            time > now && time <= x,
                            "{}: {time} at {now} asking {x}",
                            f.name()
                        );
                        received += 1;
                    }
                    Callback::TimeAdvanceGrant { time } => {
                        assert_eq!(time, t(x));
                        now = x;
                        break;
                    }
                    other => panic!("unexpected {other:?}"),
                }
            }
        }
        received
    };
    let (from_p, at_c, at_rc) = thread::scope(|s| {
        let hp = s.spawn(|| run(&p, Some(2.0)));
        let hc = s.spawn(|| run(&c, None));
        let hrc = s.spawn(|| run(&rc, Some(1.0)));
        (hp.join().unwrap(), hc.join().unwrap(), hrc.join().unwrap())
    });
    assert_eq!(from_p, 0, "p subscribes nothing");
    // By time 100, c has p's messages at 3..=100 and rc's at 2..=100.
    assert_eq!(at_c, 98 + 99);
    assert_eq!(at_rc, 98, "rc gets p's messages only (no self-delivery)");
}

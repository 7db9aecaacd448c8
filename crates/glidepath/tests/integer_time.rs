//! A federation whose FOM says `HLAinteger64Time` counts in exact integer ticks:
//! grants, time stamps and lookahead sums stay exact far beyond what a double holds,
//! and a fractional time is refused with an error that says why.

mod common;

use common::{next, regulating_and_constrained, wait_for, Names};
use glidepath::{
    Callback, Fom, JoinOptions, LogicalTime, ObjectError, Rti, RtiError, TimeError,
    TimeRepresentation, TimeValue,
};

/// The test FOM in an integer-time federation.
fn integer_federation(name: &str) -> Rti {
    let mut fom: Fom = common::vehicles_fom();
    fom.time_representation = TimeRepresentation::Integer64;
    let rti = Rti::inproc();
    rti.create_federation_execution_with_fom(name, fom)
        .expect("create");
    rti
}

/// 2^60 ticks: a double cannot tell `BASE + 1` from `BASE`.
const BASE: i64 = 1 << 60;

#[test]
fn integer_times_are_exact_beyond_the_precision_of_a_double() {
    assert_eq!((BASE as f64) as i64, ((BASE + 1) as f64) as i64);
    let rti = integer_federation("int-exact");
    let a = rti
        .join("int-exact", JoinOptions::named("a", "test"))
        .unwrap();
    let b = rti
        .join("int-exact", JoinOptions::named("b", "test"))
        .unwrap();
    let n = Names::of(&a);
    a.publish_interaction_class(n.fire).unwrap();
    b.subscribe_interaction_class(n.fire).unwrap();
    regulating_and_constrained(&a, 0.0);
    regulating_and_constrained(&b, 0.0);
    assert!(
        a.query_logical_time().is_integer(),
        "time zero is an integer time"
    );

    // Both jump to 2^60 ticks, then a sends at 2^60 + 1 and 2^60 + 3 (lookahead 1).
    a.modify_lookahead(1_i64).unwrap();
    a.time_advance_request_available(BASE).unwrap();
    b.time_advance_request_available(BASE).unwrap();
    assert_eq!(common::grant(&a).as_i64(), Some(BASE));
    assert_eq!(common::grant(&b).as_i64(), Some(BASE));
    a.send_interaction_at(n.fire, [(n.target, "one".into())], "", BASE + 3)
        .unwrap();
    a.send_interaction_at(n.fire, [(n.target, "two".into())], "", BASE + 1)
        .unwrap();
    // b asks for the next message: exactly 2^60 + 1, then 2^60 + 3, in time order.
    b.next_message_request(BASE + 10).unwrap();
    a.time_advance_request(BASE + 20).unwrap();
    let (first, _) = wait_for(&b, "the first Fire", |c| {
        matches!(c, Callback::ReceiveInteraction { .. })
    });
    let Callback::ReceiveInteraction { info, .. } = first else {
        unreachable!()
    };
    assert_eq!(info.time.and_then(LogicalTime::as_i64), Some(BASE + 1));
    assert_eq!(common::grant(&b).as_i64(), Some(BASE + 1));
    b.next_message_request(BASE + 10).unwrap();
    let (second, _) = wait_for(&b, "the second Fire", |c| {
        matches!(c, Callback::ReceiveInteraction { .. })
    });
    let Callback::ReceiveInteraction { info, .. } = second else {
        unreachable!()
    };
    assert_eq!(info.time.and_then(LogicalTime::as_i64), Some(BASE + 3));
    let granted = common::grant(&b);
    assert!(granted.is_integer());
    assert_eq!(granted.as_i64(), Some(BASE + 3));
}

#[test]
fn a_fractional_time_is_refused_in_an_integer_federation() {
    let rti = integer_federation("int-refuse");
    let a = rti
        .join("int-refuse", JoinOptions::named("a", "test"))
        .unwrap();
    let n = Names::of(&a);
    a.publish_interaction_class(n.fire).unwrap();
    regulating_and_constrained(&a, 2.0);
    assert_eq!(
        a.query_lookahead().as_i64(),
        Some(2),
        "2.0 is the integer 2"
    );
    assert_eq!(
        a.time_advance_request(10.5).unwrap_err(),
        RtiError::Time(TimeError::NotInTimeRepresentation {
            value: TimeValue::Float(10.5),
            representation: TimeRepresentation::Integer64,
        })
    );
    // A lookahead is checked before anything else.
    let e = a.enable_time_regulation(0.5).unwrap_err();
    assert_eq!(
        e,
        RtiError::Time(TimeError::InvalidLookahead(TimeValue::Float(0.5)))
    );
    assert!(e.to_string().contains("time representation"), "{e}");
    assert!(matches!(
        a.modify_lookahead(0.5).unwrap_err(),
        RtiError::Time(TimeError::InvalidLookahead(TimeValue::Float(_)))
    ));
    let e = a
        .send_interaction_at(n.fire, [(n.target, "x".into())], "", 12.25)
        .unwrap_err();
    assert!(
        matches!(
            e,
            RtiError::Object(ObjectError::TimeNotInRepresentation { .. })
        ),
        "{e}"
    );
    assert!(e.to_string().contains("Integer64"), "{e}");
    // Whole floats are accepted and become integers.
    a.time_advance_request(10.0).unwrap();
    match next(&a) {
        Callback::TimeAdvanceGrant { time } => {
            assert!(time.is_integer(), "{time:?}");
            assert_eq!(time.as_i64(), Some(10));
        }
        other => panic!("expected a grant, got {other:?}"),
    }
}

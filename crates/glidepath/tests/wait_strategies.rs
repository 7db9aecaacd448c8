//! Wait strategies (park, spin-park, spin) in both process models keep every
//! guarantee: updates arrive exactly once and in order while a spinning evoker and the
//! RTI thread both drain the inbox, and time-managed federates advance in lock-step
//! with time-stamp-ordered delivery.

mod common;

use std::thread;
use std::time::Duration;

use common::*;
use crossbeam_channel::{unbounded, Receiver, Sender};
use glidepath::{
    Bytes, Callback, Federate, FederateAmbassador, JoinOptions, ProcessModel, ResignAction, Rti,
    WaitStrategy,
};

const UPDATES: u64 = 20_000;
const STEPS: u32 = 200;

/// Every strategy, with a short spin budget so spin-park really parks in between.
fn strategies() -> [WaitStrategy; 3] {
    [
        WaitStrategy::Park,
        WaitStrategy::SpinPark {
            spin: Duration::from_micros(20),
        },
        WaitStrategy::Spin,
    ]
}

/// Forwards immediate callbacks to the test thread.
struct Forward(Sender<Callback>);

impl FederateAmbassador for Forward {
    fn callback(&mut self, callback: Callback) {
        let _ = self.0.send(callback);
    }
}

/// A federate under test and where its callbacks come from.
struct Member {
    federate: Federate,
    immediate: Option<Receiver<Callback>>,
}

impl Member {
    fn join(
        rti: &Rti,
        federation: &str,
        name: &str,
        model: ProcessModel,
        wait: WaitStrategy,
    ) -> Member {
        let options = JoinOptions::named(name, "test").with_wait(wait);
        match model {
            ProcessModel::Evoked => Member {
                federate: rti.join(federation, options).unwrap(),
                immediate: None,
            },
            ProcessModel::Immediate => {
                let (tx, rx) = unbounded();
                Member {
                    federate: rti
                        .join_immediate(federation, options, Forward(tx))
                        .unwrap(),
                    immediate: Some(rx),
                }
            }
        }
    }

    fn next(&self) -> Callback {
        let got = match &self.immediate {
            Some(rx) => rx.recv_timeout(TIMEOUT).ok(),
            None => self.federate.next_callback(TIMEOUT),
        };
        got.unwrap_or_else(|| panic!("{}: no callback within {TIMEOUT:?}", self.federate.name()))
    }

    fn wait_for(&self, what: &str, mut pred: impl FnMut(&Callback) -> bool) -> Callback {
        for _ in 0..10_000 {
            let cb = self.next();
            if pred(&cb) {
                return cb;
            }
        }
        panic!("{}: no {what} among 10,000 callbacks", self.federate.name());
    }
}

fn ordered_exactly_once(model: ProcessModel, wait: WaitStrategy) {
    let name = format!("wait-order-{model:?}-{wait}");
    let rti = federation(&name);
    let receiver = Member::join(&rti, &name, "receiver", model, wait);
    let n = Names::of(&receiver.federate);
    receiver
        .federate
        .subscribe_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    let sender = join(&rti, &name, "sender");
    sender
        .publish_object_class_attributes(n.vehicle, &[n.label])
        .unwrap();
    thread::scope(|s| {
        s.spawn(|| {
            let instance = sender.register_object_instance(n.vehicle).unwrap();
            for i in 1..=UPDATES {
                sender
                    .update_attribute_values(
                        instance,
                        [(n.label, Bytes::copy_from_slice(&i.to_be_bytes()))],
                        Bytes::new(),
                    )
                    .unwrap();
            }
            sender.resign(ResignAction::DeleteObjects).unwrap();
        });
        let mut expected = 1u64;
        loop {
            match receiver.next() {
                Callback::DiscoverObjectInstance { .. } => {}
                Callback::ReflectAttributeValues { values, .. } => {
                    let got = u64::from_be_bytes(values[0].1[..].try_into().unwrap());
                    assert_eq!(
                        got, expected,
                        "{model:?}/{wait}: lost, duplicated or reordered"
                    );
                    expected += 1;
                }
                Callback::RemoveObjectInstance { .. } => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert_eq!(expected - 1, UPDATES, "{model:?}/{wait}");
    });
    assert_eq!(receiver.federate.stats().out_of_order, 0);
    receiver
        .federate
        .resign(ResignAction::DeleteObjects)
        .unwrap();
}

fn lock_step(model: ProcessModel, wait: WaitStrategy) {
    let name = format!("wait-time-{model:?}-{wait}");
    let rti = federation(&name);
    let members: Vec<Member> = (0..2)
        .map(|i| Member::join(&rti, &name, &format!("f{i}"), model, wait))
        .collect();
    let n = Names::of(&members[0].federate);
    for m in &members {
        let f = &m.federate;
        f.publish_interaction_class(n.fire).unwrap();
        f.subscribe_interaction_class(n.fire).unwrap();
        f.enable_time_regulation(1.0).unwrap();
        m.wait_for("regulation enabled", |c| {
            matches!(c, Callback::TimeRegulationEnabled { .. })
        });
        f.enable_time_constrained().unwrap();
        m.wait_for("constrained enabled", |c| {
            matches!(c, Callback::TimeConstrainedEnabled { .. })
        });
    }
    thread::scope(|s| {
        for (i, m) in members.iter().enumerate() {
            s.spawn(move || {
                let f = &m.federate;
                let mut last_received = 0.0;
                for step in 1..=STEPS {
                    let now = f64::from(step);
                    f.send_interaction_at(n.fire, [(n.target, b(&format!("{i}")))], "", now)
                        .unwrap();
                    f.time_advance_request(now).unwrap();
                    let mut fires = 0;
                    loop {
                        match m.next() {
                            Callback::ReceiveInteraction { info, .. } => {
                                let ts = info.time.expect("time-stamp order").as_f64();
                                assert!(ts >= last_received && ts <= now, "{ts} at step {step}");
                                last_received = ts;
                                fires += 1;
                            }
                            Callback::TimeAdvanceGrant { time } => {
                                assert_eq!(time.as_f64(), now);
                                break;
                            }
                            other => panic!("unexpected {other:?}"),
                        }
                    }
                    // The peer's message of this step (time stamp `now`) is delivered
                    // by this grant, never later.
                    assert_eq!(fires, 1, "{model:?}/{wait} step {step}");
                }
            });
        }
    });
    for m in members {
        m.federate.resign(ResignAction::DeleteObjects).unwrap();
    }
}

#[test]
fn evoked_updates_arrive_once_and_in_order_whatever_the_wait() {
    for wait in strategies() {
        ordered_exactly_once(ProcessModel::Evoked, wait);
    }
}

#[test]
fn immediate_updates_arrive_once_and_in_order_whatever_the_wait() {
    for wait in strategies() {
        ordered_exactly_once(ProcessModel::Immediate, wait);
    }
}

#[test]
fn evoked_federates_advance_in_lock_step_whatever_the_wait() {
    for wait in strategies() {
        lock_step(ProcessModel::Evoked, wait);
    }
}

#[test]
fn immediate_federates_advance_in_lock_step_whatever_the_wait() {
    for wait in strategies() {
        lock_step(ProcessModel::Immediate, wait);
    }
}

#[test]
fn wait_strategies_parse_as_the_cli_spells_them() {
    assert_eq!("park".parse::<WaitStrategy>(), Ok(WaitStrategy::Park));
    assert_eq!("spin".parse::<WaitStrategy>(), Ok(WaitStrategy::Spin));
    assert_eq!(
        "spin-park".parse::<WaitStrategy>(),
        Ok(WaitStrategy::SpinPark {
            spin: WaitStrategy::DEFAULT_SPIN
        })
    );
    assert_eq!(
        "spin-park:7".parse::<WaitStrategy>(),
        Ok(WaitStrategy::SpinPark {
            spin: Duration::from_micros(7)
        })
    );
    let err = "spinny".parse::<WaitStrategy>().unwrap_err();
    assert!(err.contains("spinny") && err.contains("spin-park"), "{err}");
    for w in strategies() {
        assert_eq!(
            w.name().parse::<WaitStrategy>().map(|p| p.name()),
            Ok(w.name())
        );
    }
}

//! The two process models: evoked callbacks arrive only inside evoke calls on the
//! caller's thread; immediate callbacks arrive on the federate's RTI thread, in
//! order, and may call back into the federate.

mod common;

use std::thread::{self, ThreadId};
use std::time::Duration;

use common::*;
use crossbeam_channel::{unbounded, Receiver, Sender};
use glidepath::{
    Bytes, Callback, CallbackLog, FederateAmbassador, FederateHandle, InteractionClassHandle,
    JoinOptions, LogicalTime, MessageInfo, ParameterHandle, ProcessModel, ResignAction, Values,
    WeakFederate,
};

/// Records each callback with the thread it arrived on.
#[derive(Default)]
struct ThreadRecorder {
    seen: Vec<(ThreadId, Callback)>,
}

impl FederateAmbassador for ThreadRecorder {
    fn callback(&mut self, callback: Callback) {
        self.seen.push((thread::current().id(), callback));
    }
}

#[test]
fn evoked_callbacks_arrive_inside_evoke_calls_on_the_calling_thread() {
    let rti = federation("pm-evoked");
    let s = join(&rti, "pm-evoked", "s");
    let r = join(&rti, "pm-evoked", "r");
    let n = Names::of(&r);
    assert_eq!(r.process_model(), ProcessModel::Evoked);
    r.subscribe_interaction_class(n.fire).unwrap();
    r.enable_time_constrained().unwrap();
    s.enable_time_regulation(1.0).unwrap();
    s.publish_interaction_class(n.fire).unwrap();
    let mut amb = ThreadRecorder::default();
    assert!(r.evoke_callback(&mut amb, TIMEOUT).unwrap());
    assert!(matches!(
        amb.seen[0].1,
        Callback::TimeConstrainedEnabled { .. }
    ));
    assert!(matches!(next(&s), Callback::TimeRegulationEnabled { .. }));

    // Five time-stamped messages are held until the grant delivers them all at once.
    for i in 0..5 {
        s.send_interaction_at(
            n.fire,
            [(n.target, b(&i.to_string()))],
            "",
            2.0 + f64::from(i),
        )
        .unwrap();
    }
    r.time_advance_request(10.0).unwrap();
    s.time_advance_request(10.0).unwrap();
    // One evoke call delivers exactly one callback...
    assert!(r.evoke_callback(&mut amb, TIMEOUT).unwrap());
    assert_eq!(amb.seen.len(), 2);
    // ...and the rest are already queued (the grant queued them together).
    assert_eq!(r.pending_callbacks(), 5);
    assert_eq!(
        r.evoke_multiple_callbacks(&mut amb, Duration::ZERO, TIMEOUT)
            .unwrap(),
        5
    );
    let me = thread::current().id();
    assert!(
        amb.seen.iter().all(|(id, _)| *id == me),
        "every callback on the evoking thread"
    );
    assert!(matches!(
        amb.seen.last().unwrap().1,
        Callback::TimeAdvanceGrant { .. }
    ));
    let targets: Vec<Bytes> = amb
        .seen
        .iter()
        .filter_map(|(_, c)| match c {
            Callback::ReceiveInteraction { values, .. } => Some(values[0].1.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(
        targets,
        ["0", "1", "2", "3", "4"].map(Bytes::from),
        "in order"
    );
    // Nothing left: a short wait comes back empty.
    assert!(!r
        .evoke_callback(&mut amb, Duration::from_millis(20))
        .unwrap());
    assert_eq!(
        r.evoke_multiple_callbacks(&mut amb, Duration::ZERO, Duration::from_millis(20))
            .unwrap(),
        0
    );
}

#[test]
fn evoke_multiple_waits_for_the_minimum_time() {
    let rti = federation("pm-evoke-min");
    let a = join(&rti, "pm-evoke-min", "a");
    let b_ = join(&rti, "pm-evoke-min", "b");
    let n = Names::of(&a);
    b_.subscribe_interaction_class(n.alert).unwrap();
    a.publish_interaction_class(n.alert).unwrap();
    // Sent from another thread while b is inside the evoke call's minimum wait.
    let sender = a.clone();
    let (go_tx, go_rx) = unbounded::<()>();
    let worker = thread::spawn(move || {
        go_rx.recv().unwrap();
        for i in 0..3 {
            sender
                .send_interaction(n.alert, [(n.message, b(&format!("m{i}")))], "")
                .unwrap();
        }
    });
    let mut log = CallbackLog::default();
    go_tx.send(()).unwrap();
    let mut delivered = 0;
    while delivered < 3 {
        delivered += b_
            .evoke_multiple_callbacks(&mut log, Duration::from_millis(50), TIMEOUT)
            .unwrap();
    }
    worker.join().unwrap();
    assert_eq!(delivered, 3);
    assert_eq!(log.callbacks.len(), 3);
}

/// Sends every callback, with its thread name, to a channel; replies to `Alert`s with
/// `Fire` and re-requests time on each grant, through a weak handle to its federate.
struct Responder {
    me: Option<WeakFederate>,
    out: Sender<(String, Callback)>,
    fire: InteractionClassHandle,
    target: ParameterHandle,
    steps_left: u32,
}

impl FederateAmbassador for Responder {
    fn callback(&mut self, callback: Callback) {
        let thread = thread::current().name().unwrap_or("").to_string();
        // Dispatch to the named methods too, so overriding both works.
        let copy = callback.clone();
        match callback {
            Callback::ReceiveInteraction {
                class,
                values,
                tag,
                info,
            } => self.receive_interaction(class, values, tag, info),
            Callback::TimeAdvanceGrant { time } => self.time_advance_grant(time),
            _ => {}
        }
        self.out.send((thread, copy)).unwrap();
    }

    fn receive_interaction(
        &mut self,
        _class: InteractionClassHandle,
        values: Values<ParameterHandle>,
        _tag: Bytes,
        _info: MessageInfo,
    ) {
        if let Some(me) = self.me.as_ref().and_then(WeakFederate::upgrade) {
            me.send_interaction(self.fire, [(self.target, values[0].1.clone())], "reply")
                .unwrap();
        }
    }

    fn time_advance_grant(&mut self, time: LogicalTime) {
        if self.steps_left > 0 {
            self.steps_left -= 1;
            if let Some(me) = self.me.as_ref().and_then(WeakFederate::upgrade) {
                me.time_advance_request(time.as_f64() + 1.0).unwrap();
            }
        }
    }
}

fn responder(n: &Names, steps: u32) -> (Responder, Receiver<(String, Callback)>) {
    let (tx, rx) = unbounded();
    (
        Responder {
            me: None,
            out: tx,
            fire: n.fire,
            target: n.target,
            steps_left: steps,
        },
        rx,
    )
}

fn recv(rx: &Receiver<(String, Callback)>) -> (String, Callback) {
    rx.recv_timeout(TIMEOUT)
        .expect("an immediate callback within the timeout")
}

#[test]
fn immediate_callbacks_run_on_the_rti_thread_and_can_call_back() {
    let rti = federation("pm-immediate");
    let asker = join(&rti, "pm-immediate", "asker");
    let n = Names::of(&asker);
    let (amb, rx) = responder(&n, 0);
    // The ambassador needs its federate, which needs the ambassador: hand it over
    // through a channel the ambassador reads on first use.
    let (me_tx, me_rx) = unbounded::<WeakFederate>();
    struct Late {
        inner: Responder,
        me: Receiver<WeakFederate>,
    }
    impl FederateAmbassador for Late {
        fn callback(&mut self, callback: Callback) {
            if self.inner.me.is_none() {
                self.inner.me = self.me.recv_timeout(TIMEOUT).ok();
            }
            self.inner.callback(callback)
        }
    }
    let answerer = rti
        .join_immediate(
            "pm-immediate",
            JoinOptions::named("answerer", "test"),
            Late {
                inner: amb,
                me: me_rx,
            },
        )
        .unwrap();
    me_tx.send(answerer.downgrade()).unwrap();
    assert_eq!(answerer.process_model(), ProcessModel::Immediate);
    answerer.subscribe_interaction_class(n.alert).unwrap();
    answerer.publish_interaction_class(n.fire).unwrap();
    asker.subscribe_interaction_class(n.fire).unwrap();
    asker.publish_interaction_class(n.alert).unwrap();

    for i in 0..200 {
        asker
            .send_interaction(n.alert, [(n.message, b(&format!("q{i}")))], "")
            .unwrap();
    }
    for i in 0..200 {
        let (thread_name, cb) = recv(&rx);
        assert!(
            thread_name.starts_with("glidepath-rti-answerer"),
            "delivered on the RTI thread, not {thread_name:?}"
        );
        assert!(
            matches!(&cb, Callback::ReceiveInteraction { values, .. } if values[0].1 == format!("q{i}").as_bytes()),
            "in order: {cb:?}"
        );
        // The reply sent from inside the callback reaches the asker.
        match next(&asker) {
            Callback::ReceiveInteraction {
                class, values, tag, ..
            } => {
                assert_eq!((class, tag), (n.fire, Bytes::from_static(b"reply")));
                assert_eq!(values[0].1, format!("q{i}").as_bytes());
            }
            other => panic!("expected the reply, got {other:?}"),
        }
    }
    // Evoke calls do nothing in the immediate model.
    assert!(!answerer
        .evoke_callback(&mut CallbackLog::default(), Duration::ZERO)
        .unwrap());
    assert_eq!(answerer.next_callback(Duration::ZERO), None);
    answerer.resign(ResignAction::DeleteObjects).unwrap();
}

#[test]
fn immediate_callbacks_caused_by_user_calls_are_delivered() {
    let rti = federation("pm-immediate-local");
    let (tx, rx) = unbounded();
    let log = ChannelAmbassador(tx);
    let f = rti
        .join_immediate(
            "pm-immediate-local",
            JoinOptions::named("solo", "test"),
            log,
        )
        .unwrap();
    // No traffic arrives for these: the user calls themselves queue the callbacks.
    f.reserve_object_instance_name("Nautilus").unwrap();
    assert_eq!(
        rx.recv_timeout(TIMEOUT).unwrap(),
        Callback::ObjectInstanceNameReservationSucceeded {
            name: "Nautilus".into()
        }
    );
    f.enable_time_regulation(1.0).unwrap();
    assert_eq!(
        rx.recv_timeout(TIMEOUT).unwrap(),
        Callback::TimeRegulationEnabled {
            time: LogicalTime::ZERO
        }
    );
    f.time_advance_request(3.0).unwrap();
    assert_eq!(
        rx.recv_timeout(TIMEOUT).unwrap(),
        Callback::TimeAdvanceGrant { time: t(3.0) }
    );
    f.register_federation_synchronization_point("solo", "")
        .unwrap();
    assert!(matches!(
        rx.recv_timeout(TIMEOUT).unwrap(),
        Callback::SynchronizationPointRegistrationSucceeded { .. }
    ));
    assert!(matches!(
        rx.recv_timeout(TIMEOUT).unwrap(),
        Callback::AnnounceSynchronizationPoint { .. }
    ));
    f.resign(ResignAction::NoAction).unwrap();
    // After resigning the RTI thread is gone and the ambassador dropped with it.
    assert!(
        rx.recv_timeout(TIMEOUT).is_err(),
        "the channel closes when the ambassador is dropped"
    );
}

struct ChannelAmbassador(Sender<Callback>);

impl FederateAmbassador for ChannelAmbassador {
    fn callback(&mut self, callback: Callback) {
        let _ = self.0.send(callback);
    }
}

#[test]
fn an_immediate_federate_can_drive_time_from_its_callbacks() {
    const STEPS: u32 = 200;
    let rti = federation("pm-immediate-time");
    let peer = join(&rti, "pm-immediate-time", "peer");
    let n = Names::of(&peer);
    let (amb, rx) = responder(&n, STEPS);
    let (me_tx, me_rx) = unbounded::<WeakFederate>();
    struct Driver {
        inner: Responder,
        me: Receiver<WeakFederate>,
    }
    impl FederateAmbassador for Driver {
        fn callback(&mut self, callback: Callback) {
            if self.inner.me.is_none() {
                self.inner.me = self.me.recv_timeout(TIMEOUT).ok();
            }
            self.inner.callback(callback)
        }
    }
    let driver = rti
        .join_immediate(
            "pm-immediate-time",
            JoinOptions::named("driver", "test"),
            Driver {
                inner: amb,
                me: me_rx,
            },
        )
        .unwrap();
    me_tx.send(driver.downgrade()).unwrap();
    // The driver is constrained by the regulating peer, which lets time run to 1000.
    peer.enable_time_regulation(1.0).unwrap();
    assert!(matches!(
        next(&peer),
        Callback::TimeRegulationEnabled { .. }
    ));
    driver.enable_time_constrained().unwrap();
    peer.time_advance_request(1000.0).unwrap();
    driver.time_advance_request(1.0).unwrap();
    let mut last = LogicalTime::ZERO;
    let mut grants = 0;
    while grants < STEPS + 1 {
        match recv(&rx).1 {
            Callback::TimeAdvanceGrant { time } => {
                assert!(time > last, "grants move forward");
                last = time;
                grants += 1;
            }
            Callback::TimeConstrainedEnabled { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(last, t(f64::from(STEPS + 1)));
    assert_eq!(driver.query_logical_time(), last);
}

#[test]
fn dropping_an_immediate_federate_stops_its_thread() {
    let rti = federation("pm-immediate-drop");
    let watcher = join(&rti, "pm-immediate-drop", "watcher");
    let (tx, rx) = unbounded();
    let f = rti
        .join_immediate(
            "pm-immediate-drop",
            JoinOptions::named("short-lived", "test"),
            ChannelAmbassador(tx),
        )
        .unwrap();
    let handle: FederateHandle = f.handle();
    f.reserve_object_instance_name("x").unwrap();
    assert!(rx.recv_timeout(TIMEOUT).is_ok());
    drop(f);
    assert!(
        rx.recv_timeout(TIMEOUT).is_err(),
        "the ambassador was dropped with the RTI thread"
    );
    assert!(
        watcher
            .list_federates()
            .unwrap()
            .iter()
            .all(|i| i.handle != handle),
        "resigned on drop"
    );
}

//! The transport conformance suite run against the `inproc` backend, plus the
//! guarantees only an in-process bus can give (zero copy, synchronous delivery).

use std::sync::Arc;

use bytes::Bytes;
use glidepath_core::{
    Body, Envelope, ExecReply, ExecRequest, FederateHandle, Fom, InteractionClassHandle, OrderType,
    ParameterHandle, Topic, TransportationType,
};
use glidepath_transport::{conformance, Endpoint, InprocTransport, Transport};

/// A fresh in-process bus for each check.
struct Fixture {
    transport: InprocTransport,
}

fn fixture() -> Fixture {
    Fixture {
        transport: InprocTransport::new(),
    }
}

glidepath_transport::conformance_tests!(fixture, many = 200_000);

#[test]
fn run_all_on_one_shared_bus() {
    // A backend shared by many tests (as a NATS server would be) must pass too.
    let t = InprocTransport::new();
    conformance::run_all(&t);
    assert_eq!(t.name(), "inproc");
}

fn interaction(payload: Bytes) -> Envelope {
    Envelope {
        sender: FederateHandle(1),
        seq: 1,
        publish_time_ns: 0,
        body: Body::Interaction {
            class: InteractionClassHandle(1),
            values: Arc::from(vec![(ParameterHandle(1), payload)]),
            tag: Bytes::new(),
            order: OrderType::Receive,
            transport: TransportationType::Reliable,
            time: None,
            regions: None,
        },
    }
}

fn fed(endpoint: &dyn Endpoint) -> glidepath_core::FederationId {
    match endpoint.request(ExecRequest::Create {
        name: "zero-copy".into(),
        fom: Arc::new(Fom::default()),
    }) {
        Ok(ExecReply::Created { id }) => id,
        other => panic!("create: {other:?}"),
    }
}

#[test]
fn payloads_are_shared_not_copied() {
    let t = InprocTransport::new();
    let a = t.open_endpoint();
    let receivers = [t.open_endpoint(), t.open_endpoint()];
    let id = fed(&a);
    let topic = Topic::InteractionClass(InteractionClassHandle(1));
    for r in &receivers {
        r.subscribe(id, topic).unwrap();
    }
    let payload = Bytes::from(vec![7u8; 4096]);
    a.publish(id, topic, interaction(payload.clone())).unwrap();
    for r in &receivers {
        // Synchronous delivery: already in the inbox when publish returned.
        let env = r
            .inbox()
            .try_recv()
            .expect("inproc delivers before publish returns");
        let Body::Interaction { values, .. } = env.body else {
            panic!("unexpected {:?}", env.body)
        };
        assert_eq!(
            values[0].1.as_ptr(),
            payload.as_ptr(),
            "the payload must be shared, not copied"
        );
    }
}

#[test]
fn a_closed_inbox_keeps_everything_that_arrived() {
    let t = InprocTransport::new();
    let a = t.open_endpoint();
    let b = t.open_endpoint();
    let id = fed(&a);
    let topic = Topic::InteractionClass(InteractionClassHandle(1));
    b.subscribe(id, topic).unwrap();
    for seq in 1..=3 {
        let mut env = interaction(Bytes::new());
        env.seq = seq;
        a.publish(id, topic, env).unwrap();
    }
    b.close();
    a.publish(id, topic, interaction(Bytes::new())).unwrap();
    assert_eq!(conformance::drain_until_disconnected(&b), vec![1, 2, 3]);
}

#[test]
fn dropping_an_endpoint_unsubscribes_it() {
    let t = InprocTransport::new();
    let a = t.open_endpoint();
    let id = fed(&a);
    let topic = Topic::InteractionClass(InteractionClassHandle(1));
    let inbox = {
        let b = t.open_endpoint();
        b.subscribe(id, topic).unwrap();
        b.inbox().clone()
    };
    a.publish(id, topic, interaction(Bytes::new())).unwrap();
    assert!(
        inbox.recv().is_err(),
        "a dropped endpoint's inbox is disconnected and received nothing after the drop"
    );
}

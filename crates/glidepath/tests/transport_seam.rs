//! The front API over a transport of one's own: configuration, and transport failures
//! that the core cannot see reaching the user as `RtiError::Link`.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;
use crossbeam_channel::Receiver;
use glidepath::backend::{
    Endpoint, Envelope, ExecReply, ExecRequest, FederationId, InprocTransport, Topic, Transport,
    TransportError,
};
use glidepath::{Callback, JoinOptions, Rti, RtiConfig, RtiError, TransportKind};
use parking_lot::Mutex;

/// Inproc with a switch per opened endpoint that makes its publishes fail.
struct Flaky {
    inner: InprocTransport,
    switches: Mutex<Vec<Arc<AtomicBool>>>,
}

struct FlakyEndpoint {
    inner: Box<dyn Endpoint>,
    failing: Arc<AtomicBool>,
}

impl Transport for Flaky {
    fn open(&self) -> Result<Box<dyn Endpoint>, TransportError> {
        let failing = Arc::new(AtomicBool::new(false));
        self.switches.lock().push(failing.clone());
        Ok(Box::new(FlakyEndpoint {
            inner: self.inner.open()?,
            failing,
        }))
    }
    fn name(&self) -> &'static str {
        "flaky"
    }
}

impl Endpoint for FlakyEndpoint {
    fn publish(
        &self,
        federation: FederationId,
        topic: Topic,
        envelope: Envelope,
    ) -> Result<(), TransportError> {
        if self.failing.load(Ordering::SeqCst) {
            return Err(TransportError::Backend("injected".into()));
        }
        self.inner.publish(federation, topic, envelope)
    }
    fn subscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        self.inner.subscribe(federation, topic)
    }
    fn unsubscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        self.inner.unsubscribe(federation, topic)
    }
    fn request(&self, request: ExecRequest) -> Result<ExecReply, TransportError> {
        self.inner.request(request)
    }
    fn inbox(&self) -> &Receiver<Envelope> {
        self.inner.inbox()
    }
    fn close(&self) {
        self.inner.close()
    }
}

#[test]
fn configuration_picks_the_transport() {
    let rti = Rti::from_config(&RtiConfig::default()).unwrap();
    assert_eq!(rti.transport_name(), "inproc");
    let mut config = RtiConfig::default();
    config.transport = "INPROC".parse::<TransportKind>().unwrap();
    assert_eq!(
        Rti::from_config(&config).unwrap().transport_name(),
        "inproc"
    );
    // Clones share the bus: a federation created through one is joinable through the other.
    let clone = rti.clone();
    rti.create_federation_execution_with_fom("seam-clone", vehicles_fom())
        .unwrap();
    let f = clone.join("seam-clone", JoinOptions::default()).unwrap();
    let weak = f.downgrade();
    assert!(weak.upgrade().is_some());
    drop(f);
    assert!(
        weak.upgrade().is_none(),
        "a weak handle does not keep the federate"
    );
    clone.destroy_federation_execution("seam-clone").unwrap();
}

#[test]
fn transport_failures_surface_on_the_next_call() {
    let flaky = Arc::new(Flaky {
        inner: InprocTransport::new(),
        switches: Mutex::new(Vec::new()),
    });
    let rti = Rti::with_transport(flaky.clone());
    assert_eq!(rti.transport_name(), "flaky");
    rti.create_federation_execution_with_fom("seam-flaky", vehicles_fom())
        .unwrap();
    let a = join(&rti, "seam-flaky", "a");
    let b_ = join(&rti, "seam-flaky", "b");
    let switch = |i: usize| flaky.switches.lock()[i].clone();
    // Endpoint 0 is the RTI's control endpoint, then a and b.
    let (a_fails, b_fails) = (switch(1), switch(2));
    let n = Names::of(&a);
    a.publish_interaction_class(n.alert).unwrap();
    b_.subscribe_interaction_class(n.alert).unwrap();

    // A failure during a user call is that call's error.
    a_fails.store(true, Ordering::SeqCst);
    assert_eq!(
        a.send_interaction(n.alert, [(n.message, b("lost"))], ""),
        Err(RtiError::Link(TransportError::Backend("injected".into())))
    );
    assert_eq!(a.transport_failures(), 1);
    a_fails.store(false, Ordering::SeqCst);
    send_marker(&a, &n, "ok again");
    assert!(
        is_marker(&next(&b_), "ok again"),
        "reported once, then calls work again"
    );

    // A failure on the RTI thread (b acknowledging a's regulation request) is
    // reported by b's next call. The marker shows b has handled the request.
    b_fails.store(true, Ordering::SeqCst);
    a.enable_time_regulation(1.0).unwrap();
    send_marker(&a, &n, "after the request");
    assert!(matches!(
        b_.next_callback(TIMEOUT),
        Some(Callback::ReceiveInteraction { .. })
    ));
    // A loop that only waits for callbacks asks for it; it is reported once.
    assert!(
        matches!(b_.check_transport(), Err(RtiError::Link(TransportError::Backend(m))) if m == "injected")
    );
    assert_eq!(b_.check_transport(), Ok(()));
    assert_eq!(b_.transport_failures(), 1);
    b_fails.store(false, Ordering::SeqCst);
    assert_eq!(b_.list_federates().unwrap().len(), 2);
}

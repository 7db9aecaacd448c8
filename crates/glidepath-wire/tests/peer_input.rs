//! Whatever a peer sends, a federate's local RTI survives: random envelopes (decoded
//! or generated) are fed into a federate that subscribes everything, regulates, is
//! constrained and is waiting for a time advance; it never panics and still works.

mod common;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use bytes::Bytes;
use common::arb_envelope;
use common::fom::test_fom;
use glidepath_core::{
    AttributeHandle, Envelope, ExecReply, ExecRequest, Executive, FederationId,
    InteractionClassHandle, Link, LocalRti, ObjectClassHandle, Output, ResignAction, RtiError,
    Topic,
};
use proptest::prelude::*;

#[derive(Default)]
struct Loopback {
    exec: Executive,
    subs: BTreeMap<(FederationId, Topic), BTreeSet<u8>>,
    sent: VecDeque<Envelope>,
}

impl Loopback {
    /// Carries out what the federate queued, in order.
    fn carry_out(&mut self, queued: &mut Vec<Output>) {
        for output in queued.drain(..) {
            match output {
                Output::Publish { envelope, .. } => self.sent.push_back(envelope),
                Output::Subscribe { federation, topic } => {
                    self.subs.entry((federation, topic)).or_default().insert(0);
                }
                Output::Unsubscribe { federation, topic } => {
                    self.subs.remove(&(federation, topic));
                }
            }
        }
    }

    fn flush(&mut self, f: &mut LocalRti) {
        let mut queued = Vec::new();
        f.take_outputs(&mut queued);
        self.carry_out(&mut queued);
    }
}

impl Link for Loopback {
    fn request(
        &mut self,
        queued: &mut Vec<Output>,
        request: ExecRequest,
    ) -> Result<ExecReply, RtiError> {
        self.carry_out(queued);
        Ok(self.exec.handle(request).0)
    }
}

/// A federate in the most exposed state: every class subscribed, an owned instance,
/// regulating, constrained, waiting in a next message request.
fn victim() -> (LocalRti, Loopback) {
    let mut link = Loopback::default();
    link.exec.handle(ExecRequest::Create {
        name: "f".into(),
        fom: Arc::new(test_fom()),
    });
    let mut f = LocalRti::join(&mut link, "f", Some("victim"), "test").unwrap();
    let fom = f.fom().clone();
    for c in &fom.object_classes {
        f.subscribe_object_class_attributes(&mut link, c.handle, &c.all_attributes)
            .unwrap();
        f.publish_object_class_attributes(c.handle, &c.all_attributes)
            .unwrap();
    }
    for c in &fom.interaction_classes {
        f.subscribe_interaction_class(c.handle).unwrap();
        f.publish_interaction_class(c.handle).unwrap();
    }
    f.register_object_instance(&mut link, ObjectClassHandle(1), None)
        .unwrap();
    f.enable_time_regulation(&mut link, 1.0).unwrap();
    f.enable_time_constrained().unwrap();
    f.next_message_request(5.0, false).unwrap();
    link.flush(&mut f);
    (f, link)
}

fn still_works(f: &mut LocalRti, link: &mut Loopback) {
    while f.poll_callback().is_some() {}
    f.send_interaction(InteractionClassHandle(3), vec![], Bytes::new(), None)
        .unwrap();
    let _ = f.update_attribute_values(
        glidepath_core::ObjectInstanceHandle(1),
        vec![(AttributeHandle(2), Bytes::from_static(b"x"))],
        Bytes::new(),
        None,
    );
    f.resign(link, ResignAction::DeleteObjects).unwrap();
    link.flush(f);
    assert!(f.is_resigned() && !f.has_outputs());
}

proptest! {
    #![proptest_config(common::config(300))]

    #[test]
    fn random_envelopes_never_break_a_federate(envelopes in proptest::collection::vec(arb_envelope(), 1..40)) {
        let (mut f, mut link) = victim();
        for env in envelopes {
            f.handle_envelope(env);
            link.flush(&mut f);
            while f.poll_callback().is_some() {}
        }
        still_works(&mut f, &mut link);
    }

    #[test]
    fn random_bytes_that_decode_never_break_a_federate(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..80), 1..40)) {
        let (mut f, mut link) = victim();
        for bytes in chunks {
            // Mostly rejected by the decoder; whatever passes goes to the federate.
            let mut framed = vec![glidepath_wire::MAGIC, glidepath_wire::VERSION];
            framed.extend_from_slice(&bytes);
            for candidate in [&bytes[..], &framed[..]] {
                if let Ok(env) = glidepath_wire::decode_envelope(candidate) {
                    f.handle_envelope(env);
                    link.flush(&mut f);
                }
            }
        }
        still_works(&mut f, &mut link);
    }
}

//! Whatever a peer sends, a federate's local RTI survives: random envelopes (decoded
//! or generated) are fed into a federate that subscribes everything, regulates, is
//! constrained and is waiting for a time advance; it never panics and still works.

mod common;

use std::sync::Arc;

use bytes::Bytes;
use common::arb_envelope;
use common::fom::test_fom;
use glidepath_core::instant::InstantNetwork;
use glidepath_core::{
    AttributeHandle, ExecRequest, InteractionClassHandle, LocalRti, ObjectClassHandle, ResignAction,
};
use proptest::prelude::*;

/// A federate in the most exposed state: every class subscribed, an owned instance,
/// regulating, constrained, waiting in a next message request.
fn victim() -> (LocalRti, InstantNetwork) {
    let mut net = InstantNetwork::new();
    net.host.handle(
        ExecRequest::Create {
            name: "f".into(),
            fom: Arc::new(test_fom()),
        },
        0,
    );
    let mut f = net.join(0, "f", "victim").unwrap();
    let fom = f.fom().clone();
    for c in &fom.object_classes {
        f.subscribe_object_class_attributes(&mut net.link(0), c.handle, &c.all_attributes)
            .unwrap();
        f.publish_object_class_attributes(c.handle, &c.all_attributes)
            .unwrap();
    }
    for c in &fom.interaction_classes {
        f.subscribe_interaction_class(c.handle).unwrap();
        f.publish_interaction_class(c.handle).unwrap();
    }
    f.register_object_instance(&mut net.link(0), ObjectClassHandle(1), None)
        .unwrap();
    f.enable_time_regulation(&mut net.link(0), 1.0).unwrap();
    f.enable_time_constrained().unwrap();
    f.next_message_request(5.0, false).unwrap();
    net.flush(0, &mut f);
    (f, net)
}

fn still_works(f: &mut LocalRti, net: &mut InstantNetwork) {
    while f.poll_callback().is_some() {}
    f.send_interaction(InteractionClassHandle(3), vec![], Bytes::new(), None)
        .unwrap();
    let _ = f.update_attribute_values(
        glidepath_core::ObjectInstanceHandle(1),
        vec![(AttributeHandle(2), Bytes::from_static(b"x"))],
        Bytes::new(),
        None,
    );
    f.resign(&mut net.link(0), ResignAction::DeleteObjects)
        .unwrap();
    net.flush(0, f);
    assert!(f.is_resigned() && !f.has_outputs());
}

proptest! {
    #![proptest_config(common::config(300))]

    #[test]
    fn random_envelopes_never_break_a_federate(envelopes in proptest::collection::vec(arb_envelope(), 1..40)) {
        let (mut f, mut net) = victim();
        for env in envelopes {
            f.handle_envelope(env);
            net.flush(0, &mut f);
            while f.poll_callback().is_some() {}
        }
        still_works(&mut f, &mut net);
    }

    #[test]
    fn random_bytes_that_decode_never_break_a_federate(chunks in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..80), 1..40)) {
        let (mut f, mut net) = victim();
        for bytes in chunks {
            // Mostly rejected by the decoder; whatever passes goes to the federate.
            let mut framed = vec![glidepath_wire::MAGIC, glidepath_wire::VERSION];
            framed.extend_from_slice(&bytes);
            for candidate in [&bytes[..], &framed[..]] {
                if let Ok(env) = glidepath_wire::decode_envelope(candidate) {
                    f.handle_envelope(env);
                    net.flush(0, &mut f);
                }
            }
        }
        still_works(&mut f, &mut net);
    }
}

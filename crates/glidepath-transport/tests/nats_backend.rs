//! What only the `nats` backend has to show: corrupted and missing messages from the
//! network are counted and dropped (never delivered, never a crash), the executive
//! server survives garbage, and endpoints and the executive server carry on after
//! the NATS server restarts.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

use std::time::Duration;

use bytes::Bytes;
use glidepath_core::{Envelope, ExecReply, ExecRequest, FederateHandle};
use glidepath_transport::nats::subject::{flow_subject, retx_subject, topic_subject, EXEC_SUBJECT};
use glidepath_transport::nats::{NatsServerProcess, NatsTestbed};
use glidepath_transport::{Endpoint, NatsEndpoint, NatsTransport};

const TIMEOUT: Duration = Duration::from_secs(10);

mod support;
use support::*;

fn expect(endpoint: &NatsEndpoint, sender: u32, seq: u64) {
    expect_within(endpoint, sender, seq, TIMEOUT);
}

/// Joins federation `federation` as `name` through `e`; its handle (a refusal panics).
fn join_as(
    e: &NatsEndpoint,
    federation: glidepath_core::FederationId,
    name: &str,
) -> FederateHandle {
    match e.request(ExecRequest::Join {
        federation,
        federate_name: Some(name.into()),
        federate_type: "test".into(),
    }) {
        Ok(ExecReply::Joined { federate, .. }) => federate,
        other => panic!("join {name}: {other:?}"),
    }
}

fn testbed() -> NatsTestbed {
    NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn corrupted_and_missing_envelopes_are_counted_not_delivered() {
    let bed = testbed();
    let transport = NatsTransport::connect(&bed.url()).unwrap();
    let receiver = transport.open_endpoint().unwrap();
    let fed = create(&receiver, "corrupt");
    receiver.subscribe(fed, TOPIC).unwrap();
    let raw = Raw::connect(&bed.url());
    let subject = topic_subject(fed, TOPIC);
    let encode = |e: &Envelope| glidepath_wire::encode_envelope(e);
    // One connection, so these arrive in this order.
    raw.publish(subject.clone(), Bytes::from_static(b"\x00\x01garbage"));
    raw.publish(subject.clone(), encode(&data(5, 1)));
    let mut truncated = encode(&data(5, 2)).to_vec();
    truncated.truncate(truncated.len() / 2);
    raw.publish(subject.clone(), truncated);
    raw.publish(subject.clone(), encode(&data(5, 4)));
    raw.publish(format!("glidepath.{}.nonsense", fed.0), encode(&data(5, 5)));
    raw.publish(subject.clone(), encode(&data(5, 6)));
    expect(&receiver, 5, 1);
    // 2 was corrupted, 3 never sent: both are a gap before 4. 5 came on a subject
    // that names no topic, so it is dropped unread: a gap before 6.
    expect(&receiver, 5, 4);
    expect(&receiver, 5, 6);
    let stats = receiver.stats();
    assert_eq!(stats.malformed_envelopes, 3, "{stats:?}");
    assert_eq!(stats.lost_envelopes, 3, "{stats:?}");
    assert_eq!(receiver.lost_envelopes(), 3);
    assert_eq!(stats.slow_consumer_events, 0, "{stats:?}");
    // Still working after all that.
    let sender = transport.open_endpoint().unwrap();
    sender.publish(fed, TOPIC, data(6, 1)).unwrap();
    expect(&receiver, 6, 1);
}

#[test]
fn a_senders_notice_of_what_it_no_longer_keeps_ends_the_wait_for_a_lost_tail() {
    let bed = testbed();
    let transport = NatsTransport::connect(&bed.url()).unwrap();
    let receiver = transport.open_endpoint().unwrap();
    let fed = create(&receiver, "gone");
    receiver.subscribe(fed, TOPIC).unwrap();
    // The test plays sender 5, and learns the receiver's token from its first
    // acknowledgement.
    let raw = Raw::connect(&bed.url());
    let mut controls = raw.subscribe_subject(flow_subject(fed, FederateHandle(5)));
    let subject = topic_subject(fed, TOPIC);
    raw.publish(
        subject.clone(),
        glidepath_wire::encode_envelope(&data(5, 1)),
    );
    expect(&receiver, 5, 1);
    let ack = raw.next(&mut controls, TIMEOUT);
    assert_eq!(ack.payload[0], 1, "an acknowledgement");
    let token = u64::from_le_bytes(ack.payload[2..10].try_into().unwrap());
    let retx = retx_subject(fed, token);
    let notice = |first: u64, last: u64| {
        let mut b = 5u32.to_le_bytes().to_vec();
        b.extend(first.to_le_bytes());
        b.extend(last.to_le_bytes());
        Bytes::from(b)
    };
    // A malformed notice (too short; a backwards range) is counted and ignored.
    raw.publish_with_header(
        retx.clone(),
        ("Glidepath-Gone", "1"),
        Bytes::from_static(b"short"),
    );
    raw.publish_with_header(retx.clone(), ("Glidepath-Gone", "1"), notice(3, 2));
    // 2 and 3 were published and lost, and the sender no longer keeps them; nothing
    // later was published, so only the notice shows the receiver what it lacks.
    raw.publish_with_header(retx, ("Glidepath-Gone", "1"), notice(2, 3));
    let deadline = std::time::Instant::now() + TIMEOUT;
    while receiver.stats().lost_envelopes < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            receiver.stats()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let stats = receiver.stats();
    assert_eq!(
        (stats.lost_envelopes, stats.malformed_envelopes),
        (2, 2),
        "{stats:?}"
    );
    // The stream goes on after the skipped tail.
    raw.publish(subject, glidepath_wire::encode_envelope(&data(5, 4)));
    expect(&receiver, 5, 4);
    assert_eq!(receiver.stats().lost_envelopes, 2);
}

#[test]
fn the_executive_server_answers_garbage_with_an_error_and_carries_on() {
    let bed = testbed();
    let raw = Raw::connect(&bed.url());
    // No reply subject: nobody to answer, counted all the same.
    raw.publish(EXEC_SUBJECT.to_string(), Bytes::from_static(b"\xff"));
    // Behind it on the same connection and subscription: when this is answered, the
    // one before was handled.
    let reply = raw.request(EXEC_SUBJECT, b"{ this is not a request");
    let error = reply
        .headers
        .as_ref()
        .and_then(|h| h.get("Glidepath-Error"))
        .map(|v| v.as_str().to_string())
        .expect("an error header");
    assert!(error.starts_with("malformed request"), "{error}");
    let body: serde_json::Value = serde_json::from_slice(&reply.payload).unwrap();
    assert!(
        body["error"]
            .as_str()
            .unwrap()
            .starts_with("malformed request"),
        "{body}"
    );
    assert_eq!(bed.executive.malformed_requests(), 2);
    // An empty request is the presence probe a starting server sends: answered
    // empty, without an error and without counting it as malformed.
    let probe = raw.request(EXEC_SUBJECT, b"");
    assert!(probe.payload.is_empty(), "{:?}", probe.payload);
    assert!(probe.headers.is_none(), "{:?}", probe.headers);
    assert_eq!(bed.executive.malformed_requests(), 2);
    let transport = NatsTransport::connect(&bed.url()).unwrap();
    let endpoint = transport.open_endpoint().unwrap();
    create(&endpoint, "still-serving");
    assert_eq!(bed.executive.malformed_requests(), 2);
    assert_eq!(bed.executive.requests(), 4);
}

#[test]
fn endpoints_and_the_executive_carry_on_after_a_nats_server_restart() {
    let mut bed = testbed();
    let port = bed.server.port();
    let transport = NatsTransport::connect(&bed.url()).unwrap();
    let a = transport.open_endpoint().unwrap();
    let b = transport.open_endpoint().unwrap();
    let fed = create(&a, "restart");
    let joined = |e: &NatsEndpoint, name: &str| join_as(e, fed, name);
    let first = joined(&a, "a");
    b.subscribe(fed, TOPIC).unwrap();
    a.publish(fed, TOPIC, data(first.0, 1)).unwrap();
    expect(&b, first.0, 1);

    bed.server.stop();
    let restarted = NatsServerProcess::start_on_port(port).unwrap_or_else(|e| panic!("{e}"));
    // Both clients reconnect and resubscribe by themselves; flush returns once the
    // new server has everything each of them sent.
    a.flush().expect("a reconnects");
    b.flush().expect("b reconnects");
    for seq in 2..=1000 {
        a.publish(fed, TOPIC, data(first.0, seq)).unwrap();
    }
    for seq in 2..=1000 {
        expect(&b, first.0, seq);
    }
    assert_eq!(b.lost_envelopes(), 0);
    // The executive kept its state and answers again once it has reconnected.
    let second = joined(&b, "b");
    assert_ne!(first, second);
    match a.request(ExecRequest::ListFederates { federation: fed }) {
        Ok(ExecReply::Federates(list)) => assert_eq!(list.len(), 2, "{list:?}"),
        other => panic!("list: {other:?}"),
    }
    // Everything connected to the restarted server goes before it.
    drop((a, b, transport, bed));
    drop(restarted);
}

/// A member whose endpoint is gone without resigning (its process died) is resigned
/// by the executive server once the liveness probe has found nobody for
/// `lost_after`: the others hear `FederateLost`, and it is no longer listed. A
/// member that is still there is never taken for lost.
#[test]
fn a_member_whose_endpoint_is_gone_is_resigned_by_the_executive() {
    use glidepath_core::{Body, FederationId, Notification, Topic};
    let nats = NatsServerProcess::start().unwrap_or_else(|e| panic!("{e}"));
    let options = glidepath_transport::NatsOptions {
        lost_after: Some(Duration::from_millis(1500)),
        ..Default::default()
    };
    let executive = glidepath_transport::nats::serve_executive_with(&nats.url(), options)
        .unwrap_or_else(|e| panic!("{e}"));
    let transport = NatsTransport::connect(&nats.url()).unwrap();
    let doomed = transport.open_endpoint().unwrap();
    let survivor = transport.open_endpoint().unwrap();
    let fed = create(&survivor, "lost");
    let joined = |e: &NatsEndpoint, name: &str| join_as(e, fed, name);
    let lost = joined(&doomed, "doomed");
    let kept = joined(&survivor, "survivor");
    survivor.subscribe(fed, Topic::Federation).unwrap();
    // Both answer: after more than lost_after, both are still members.
    std::thread::sleep(Duration::from_millis(3000));
    let members = |e: &NatsEndpoint, federation: FederationId| match e
        .request(ExecRequest::ListFederates { federation })
    {
        Ok(ExecReply::Federates(list)) => list.into_iter().map(|m| m.handle).collect::<Vec<_>>(),
        other => panic!("list: {other:?}"),
    };
    assert_eq!(members(&survivor, fed), [lost, kept]);
    assert_eq!(executive.lost_federates(), 0);
    // The doomed one's connection goes, without a resign.
    doomed.close();
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        let envelope = survivor
            .inbox()
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("no FederateLost for the lost federate: {e}"));
        if matches!(envelope.body, Body::Exec(Notification::FederateLost { federate }) if federate == lost)
        {
            break;
        }
    }
    assert_eq!(members(&survivor, fed), [kept]);
    assert_eq!(executive.lost_federates(), 1);
}

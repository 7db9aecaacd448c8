//! The conformance suite: one generic check per point of the transport contract (see
//! the [crate documentation](crate)), run by every backend's tests.
//!
//! Each function takes a `&dyn Transport`, opens its own endpoints, creates its own
//! uniquely named federations (so backends that share a server between tests are
//! fine), and panics with a message naming the broken guarantee. No check sleeps:
//! "nothing arrived" is shown by a later envelope that per-sender FIFO puts behind
//! the one that must not arrive. Waits for something that should arrive give up
//! after [`RECEIVE_TIMEOUT`].
//!
//! ```
//! use glidepath_transport::{conformance, InprocTransport};
//! conformance::no_self_delivery(&InprocTransport::new());
//! ```
//!
//! The list of checks is kept once, in [`conformance_tests!`](crate::conformance_tests):
//! a backend's test file expands it into one `#[test]` per check, and [`run_all`] runs
//! the same list on one transport. A check added to the list runs for every backend.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use bytes::Bytes;
use glidepath_core::{
    Body, Envelope, ExecReply, ExecRequest, FederateHandle, FederationError, FederationId, Fom,
    InteractionClassHandle, Notification, ObjectClassHandle, OrderType, ParameterHandle, Topic,
    TransportationType,
};

use crate::{Endpoint, Transport, TransportError};

/// How long a check waits for an envelope that must arrive before calling it lost.
pub const RECEIVE_TIMEOUT: Duration = Duration::from_secs(10);

/// How many envelopes [`run_all`] sends through [`many_envelopes`].
pub const MANY_ENVELOPES: u64 = 200_000;

/// Runs every check of [`conformance_tests!`](crate::conformance_tests) in its order
/// on one transport (with [`many_envelopes`] at [`MANY_ENVELOPES`]).
pub fn run_all(transport: &dyn Transport) {
    crate::conformance_tests!(@each run, transport, MANY_ENVELOPES);
}

/// The conformance suite as tests: one `#[test]` per check, each on a fresh fixture.
///
/// `$fixture` is a function returning something with a `transport` field (any
/// [`Transport`]); `many` is the envelope count of [`many_envelopes`]. This macro holds
/// the one list of checks, which [`run_all`] runs too.
///
/// ```text
/// struct Fixture { transport: InprocTransport }
/// fn fixture() -> Fixture { Fixture { transport: InprocTransport::new() } }
/// glidepath_transport::conformance_tests!(fixture, many = 200_000);
/// ```
#[macro_export]
macro_rules! conformance_tests {
    ($fixture:path, many = $many:expr) => {
        $crate::conformance_tests!(@each test, $fixture, $many);
    };
    // The list: every check, in the order run_all runs them.
    (@each $mode:ident, $target:tt, $many:expr) => {
        $crate::conformance_tests!(@$mode $target, slow_subscriber_sheds_best_effort_only());
        $crate::conformance_tests!(@$mode $target, per_sender_fifo_across_topics());
        $crate::conformance_tests!(@$mode $target, no_self_delivery());
        $crate::conformance_tests!(@$mode $target, subscribe_and_unsubscribe());
        $crate::conformance_tests!(@$mode $target, federations_are_isolated());
        $crate::conformance_tests!(@$mode $target, executive_request_and_notifications());
        $crate::conformance_tests!(@$mode $target, concurrent_requests_keep_notification_order());
        $crate::conformance_tests!(@$mode $target, publication_time_is_stamped());
        $crate::conformance_tests!(@$mode $target, many_envelopes($many));
        $crate::conformance_tests!(@$mode $target, close_drains_and_refuses());
    };
    (@test $fixture:path, $check:ident($($arg:expr)?)) => {
        #[test]
        fn $check() {
            $crate::conformance::$check(&$fixture().transport $(, $arg)?);
        }
    };
    (@run $transport:ident, $check:ident($($arg:expr)?)) => {
        $crate::conformance::$check($transport $(, $arg)?);
    };
}

// ----- helpers ---------------------------------------------------------------------

fn open(transport: &dyn Transport) -> Box<dyn Endpoint> {
    transport
        .open()
        .unwrap_or_else(|e| panic!("{}: open failed: {e}", transport.name()))
}

/// Creates a federation with a unique name and an empty FOM; returns its id.
fn create_federation(endpoint: &dyn Endpoint, purpose: &str) -> (String, FederationId) {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let name = format!(
        "conformance-{purpose}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    match endpoint.request(ExecRequest::Create {
        name: name.clone(),
        fom: Arc::new(Fom::default()),
    }) {
        Ok(ExecReply::Created { id }) => (name, id),
        other => panic!("creating federation `{name}`: expected Created, got {other:?}"),
    }
}

/// A small data envelope that identifies itself by `(sender, seq)`.
pub(crate) fn data(sender: u32, seq: u64) -> Envelope {
    data_sent(sender, seq, TransportationType::Reliable)
}

/// [`data`] with the given transportation.
fn data_sent(sender: u32, seq: u64, transport: TransportationType) -> Envelope {
    Envelope {
        sender: FederateHandle(sender),
        seq,
        publish_time_ns: 0,
        body: Body::Interaction {
            class: InteractionClassHandle(1),
            values: Arc::from(vec![(ParameterHandle(1), Bytes::from_static(b"payload"))]),
            tag: Bytes::new(),
            order: OrderType::Receive,
            transport,
            time: None,
            regions: None,
        },
    }
}

fn publish(endpoint: &dyn Endpoint, federation: FederationId, topic: Topic, envelope: Envelope) {
    endpoint
        .publish(federation, topic, envelope)
        .unwrap_or_else(|e| panic!("publish on {topic:?} failed: {e}"));
}

fn subscribe(endpoint: &dyn Endpoint, federation: FederationId, topic: Topic) {
    endpoint
        .subscribe(federation, topic)
        .unwrap_or_else(|e| panic!("subscribe to {topic:?} failed: {e}"));
}

fn receive(endpoint: &dyn Endpoint, what: &str) -> Envelope {
    endpoint
        .inbox()
        .recv_timeout(RECEIVE_TIMEOUT)
        .unwrap_or_else(|e| panic!("waiting for {what}: nothing within {RECEIVE_TIMEOUT:?} ({e})"))
}

/// Receives the next envelope and checks it is `(sender, seq)`.
fn expect_next(endpoint: &dyn Endpoint, sender: u32, seq: u64, why: &str) {
    let got = receive(endpoint, why);
    assert_eq!(
        (got.sender, got.seq),
        (FederateHandle(sender), seq),
        "{why}: got {got:?}"
    );
}

/// Asserts the inbox holds nothing right now.
fn expect_empty(endpoint: &dyn Endpoint, why: &str) {
    if let Ok(extra) = endpoint.inbox().try_recv() {
        panic!("{why}: unexpected envelope {extra:?}");
    }
}

const TOPIC_A: Topic = Topic::ObjectClass(ObjectClassHandle(1));
const TOPIC_B: Topic = Topic::InteractionClass(InteractionClassHandle(1));

// ----- checks ----------------------------------------------------------------------

/// Contract point 1: several senders on their own threads publish round-robin over
/// three topics; each of two receivers gets every sender's envelopes exactly once,
/// in `seq` order, while they are being published.
pub fn per_sender_fifo_across_topics(transport: &dyn Transport) {
    const SENDERS: u32 = 4;
    const PER_SENDER: u64 = 20_000;
    let topics = [TOPIC_A, TOPIC_B, Topic::Time];
    let admin = open(transport);
    let (_, fed) = create_federation(&*admin, "fifo");
    let receivers: Vec<Box<dyn Endpoint>> = (0..2).map(|_| open(transport)).collect();
    for r in &receivers {
        for t in topics {
            subscribe(&**r, fed, t);
        }
    }
    let senders: Vec<Box<dyn Endpoint>> = (0..SENDERS).map(|_| open(transport)).collect();
    thread::scope(|s| {
        for (i, endpoint) in senders.iter().enumerate() {
            s.spawn(move || {
                for seq in 1..=PER_SENDER {
                    let topic = topics[(seq as usize + i) % topics.len()];
                    publish(&**endpoint, fed, topic, data(i as u32, seq));
                }
            });
        }
        for r in &receivers {
            s.spawn(move || {
                let mut last = vec![0u64; SENDERS as usize];
                for _ in 0..u64::from(SENDERS) * PER_SENDER {
                    let env = receive(&**r, "per-sender FIFO traffic");
                    let i = env.sender.0 as usize;
                    assert!(
                        i < SENDERS as usize,
                        "envelope from unknown sender {:?}",
                        env.sender
                    );
                    assert_eq!(
                        env.seq,
                        last[i] + 1,
                        "per-sender FIFO broken for sender {i}: seq {} after {}",
                        env.seq,
                        last[i]
                    );
                    last[i] = env.seq;
                }
                assert!(
                    last.iter().all(|l| *l == PER_SENDER),
                    "missing envelopes: {last:?}"
                );
            });
        }
    });
    for r in &receivers {
        expect_empty(&**r, "after all traffic");
    }
}

/// Contract point 2: a sender subscribed to its own topic does not receive what it
/// publishes. A peer echoes on another topic after receiving; the echo is the first
/// and only thing the sender gets.
pub fn no_self_delivery(transport: &dyn Transport) {
    let a = open(transport);
    let b = open(transport);
    let (_, fed) = create_federation(&*a, "self");
    subscribe(&*a, fed, TOPIC_A);
    subscribe(&*a, fed, TOPIC_B);
    subscribe(&*b, fed, TOPIC_A);
    publish(&*a, fed, TOPIC_A, data(1, 1));
    expect_next(&*b, 1, 1, "peer receives the original");
    publish(&*b, fed, TOPIC_B, data(2, 1));
    expect_next(
        &*a,
        2,
        1,
        "the sender's first envelope must be the peer's echo, not its own",
    );
    expect_empty(&*a, "no self-delivery");
}

/// Contract point 3: subscribe is effective on return, unsubscribe too, and
/// subscribing twice delivers once.
pub fn subscribe_and_unsubscribe(transport: &dyn Transport) {
    let a = open(transport);
    let b = open(transport);
    let (_, fed) = create_federation(&*a, "subscribe");
    // Nothing subscribed: envelope 1 is not delivered; the marker 2 comes after
    // subscribing to B and is the first thing received.
    publish(&*a, fed, TOPIC_A, data(1, 1));
    subscribe(&*b, fed, TOPIC_B);
    publish(&*a, fed, TOPIC_B, data(1, 2));
    expect_next(
        &*b,
        1,
        2,
        "only envelopes published after subscribe are delivered",
    );
    // Effective on return: published right after the call, delivered.
    subscribe(&*b, fed, TOPIC_A);
    publish(&*a, fed, TOPIC_A, data(1, 3));
    expect_next(&*b, 1, 3, "subscribe takes effect before it returns");
    // Twice is once.
    subscribe(&*b, fed, TOPIC_A);
    publish(&*a, fed, TOPIC_A, data(1, 4));
    publish(&*a, fed, TOPIC_B, data(1, 5));
    expect_next(&*b, 1, 4, "double subscription");
    expect_next(
        &*b,
        1,
        5,
        "a double subscription must not duplicate envelopes",
    );
    // One unsubscribe stops the topic; the other topic continues.
    b.unsubscribe(fed, TOPIC_A).expect("unsubscribe");
    publish(&*a, fed, TOPIC_A, data(1, 6));
    publish(&*a, fed, TOPIC_B, data(1, 7));
    expect_next(
        &*b,
        1,
        7,
        "nothing published after unsubscribe returns is delivered",
    );
    // Unsubscribing what is not subscribed is harmless.
    b.unsubscribe(fed, TOPIC_A).expect("unsubscribe again");
    b.unsubscribe(fed, Topic::Time)
        .expect("unsubscribe a topic never subscribed");
    expect_empty(&*b, "after unsubscribe");
}

/// Contract point 3: the same topic in two federations is two topics.
pub fn federations_are_isolated(transport: &dyn Transport) {
    let a = open(transport);
    let b = open(transport);
    let (_, fed1) = create_federation(&*a, "isolated-1");
    let (_, fed2) = create_federation(&*a, "isolated-2");
    assert_ne!(fed1, fed2, "two federations got the same id");
    subscribe(&*b, fed1, TOPIC_A);
    subscribe(&*b, fed2, TOPIC_B);
    publish(&*a, fed2, TOPIC_A, data(1, 1));
    publish(&*a, fed2, TOPIC_B, data(1, 2));
    expect_next(
        &*b,
        1,
        2,
        "a subscription in one federation must not receive another federation's topic",
    );
    publish(&*a, fed1, TOPIC_A, data(1, 3));
    expect_next(&*b, 1, 3, "the subscribed federation's topic");
    expect_empty(&*b, "federation isolation");
}

fn join(endpoint: &dyn Endpoint, federation: FederationId, name: &str) -> FederateHandle {
    match endpoint.request(ExecRequest::Join {
        federation,
        federate_name: Some(name.into()),
        federate_type: "conformance".into(),
    }) {
        Ok(ExecReply::Joined { federate, .. }) => federate,
        other => panic!("join as `{name}`: expected Joined, got {other:?}"),
    }
}

/// Receives the next envelope and checks it is an executive notification that
/// `federate` joined; returns its `seq`.
fn expect_joined(endpoint: &dyn Endpoint, federate: FederateHandle, why: &str) -> u64 {
    let env = receive(endpoint, why);
    assert_eq!(
        env.sender,
        FederateHandle::EXECUTIVE,
        "{why}: notifications come from the executive, got {env:?}"
    );
    match &env.body {
        Body::Exec(Notification::FederateJoined { federate: f, .. }) if *f == federate => env.seq,
        other => panic!("{why}: expected FederateJoined for {federate}, got {other:?}"),
    }
}

/// Contract point 4: replies come from the executive, refusals are `Ok` replies, and
/// notifications are published (to the requester too) before the reply returns,
/// ahead of anything published after it.
pub fn executive_request_and_notifications(transport: &dyn Transport) {
    let a = open(transport);
    let b = open(transport);
    let (name, fed) = create_federation(&*a, "exec");
    match a.request(ExecRequest::Lookup { name: name.clone() }) {
        Ok(ExecReply::Found { id, .. }) => {
            assert_eq!(id, fed, "lookup finds the created federation")
        }
        other => panic!("lookup: expected Found, got {other:?}"),
    }
    match a.request(ExecRequest::Create { name: name.clone(), fom: Arc::new(Fom::default()) }) {
        Ok(ExecReply::FederationError(FederationError::FederationExecutionAlreadyExists(n))) => assert_eq!(n, name),
        other => panic!("second create: expected FederationExecutionAlreadyExists as an Ok reply, got {other:?}"),
    }
    subscribe(&*a, fed, Topic::Federation);
    subscribe(&*b, fed, Topic::Federation);
    subscribe(&*b, fed, TOPIC_A);
    let first = join(&*a, fed, "first");
    // The requester receives the notification it caused: the executive is the sender.
    let seq_a = expect_joined(&*a, first, "the requester's own notification");
    // Published after the reply: behind the notification at every subscriber.
    publish(&*a, fed, TOPIC_A, data(first.0, 1));
    let seq_b = expect_joined(
        &*b,
        first,
        "the notification precedes data published after the reply",
    );
    assert_eq!(
        seq_a, seq_b,
        "every subscriber sees the same notification seq"
    );
    expect_next(&*b, first.0, 1, "data published after the reply");
    let second = join(&*b, fed, "second");
    let seq2 = expect_joined(&*b, second, "second join");
    assert!(
        seq2 > seq_b,
        "notification seq must increase per federation: {seq2} after {seq_b}"
    );
    assert_eq!(
        expect_joined(&*a, second, "second join seen by the first"),
        seq2
    );
    match b.request(ExecRequest::Join {
        federation: fed,
        federate_name: Some("first".into()),
        federate_type: "x".into(),
    }) {
        Ok(ExecReply::FederationError(FederationError::FederateNameAlreadyInUse(n))) => {
            assert_eq!(n, "first")
        }
        other => panic!("join with a used name: expected FederateNameAlreadyInUse, got {other:?}"),
    }
    match a.request(ExecRequest::Destroy { name: name.clone() }) {
        Ok(ExecReply::FederationError(FederationError::FederatesCurrentlyJoined {
            count: 2,
            ..
        })) => {}
        other => panic!("destroy with members: expected FederatesCurrentlyJoined, got {other:?}"),
    }
    expect_empty(&*a, "refused requests notify nobody");
    expect_empty(&*b, "refused requests notify nobody");
}

/// Contract point 4 under load: requests from several threads; every subscriber sees
/// one notification per join with strictly increasing `seq`.
pub fn concurrent_requests_keep_notification_order(transport: &dyn Transport) {
    const THREADS: usize = 4;
    const JOINS: usize = 50;
    let watchers: Vec<Box<dyn Endpoint>> = (0..2).map(|_| open(transport)).collect();
    let (_, fed) = create_federation(&*watchers[0], "exec-concurrent");
    for w in &watchers {
        subscribe(&**w, fed, Topic::Federation);
    }
    let requesters: Vec<Box<dyn Endpoint>> = (0..THREADS).map(|_| open(transport)).collect();
    thread::scope(|s| {
        for (t, r) in requesters.iter().enumerate() {
            s.spawn(move || {
                for j in 0..JOINS {
                    join(&**r, fed, &format!("t{t}-{j}"));
                }
            });
        }
    });
    for w in &watchers {
        let mut last = 0;
        for _ in 0..THREADS * JOINS {
            let env = receive(&**w, "a join notification");
            assert_eq!(env.sender, FederateHandle::EXECUTIVE);
            assert!(
                matches!(env.body, Body::Exec(Notification::FederateJoined { .. })),
                "unexpected {env:?}"
            );
            assert!(
                env.seq > last,
                "notification seq must increase: {} after {last}",
                env.seq
            );
            last = env.seq;
        }
        expect_empty(&**w, "exactly one notification per join");
    }
}

/// Contract point 5: zero publication times are stamped (non-decreasing per sender),
/// others kept.
pub fn publication_time_is_stamped(transport: &dyn Transport) {
    let a = open(transport);
    let b = open(transport);
    let (_, fed) = create_federation(&*a, "stamp");
    subscribe(&*b, fed, TOPIC_A);
    publish(&*a, fed, TOPIC_A, data(1, 1));
    publish(&*a, fed, TOPIC_A, data(1, 2));
    let mut kept = data(1, 3);
    kept.publish_time_ns = 42;
    publish(&*a, fed, TOPIC_A, kept);
    let first = receive(&*b, "stamped 1");
    let second = receive(&*b, "stamped 2");
    let third = receive(&*b, "kept");
    assert_ne!(
        first.publish_time_ns, 0,
        "a zero publication time must be stamped"
    );
    assert!(
        second.publish_time_ns >= first.publish_time_ns,
        "stamps must not go backwards for one sender"
    );
    assert_eq!(
        third.publish_time_ns, 42,
        "a non-zero publication time must be kept"
    );
}

/// Contract point 1 at volume: `count` envelopes from one sender arrive exactly once
/// and in order at a receiver draining on another thread.
pub fn many_envelopes(transport: &dyn Transport, count: u64) {
    let a = open(transport);
    let b = open(transport);
    let (_, fed) = create_federation(&*a, "volume");
    subscribe(&*b, fed, TOPIC_A);
    subscribe(&*b, fed, TOPIC_B);
    thread::scope(|s| {
        s.spawn(|| {
            for seq in 1..=count {
                let topic = if seq % 2 == 0 { TOPIC_A } else { TOPIC_B };
                publish(&*a, fed, topic, data(7, seq));
            }
        });
        let b = &b;
        s.spawn(move || {
            for seq in 1..=count {
                let env = receive(&**b, "bulk traffic");
                assert_eq!(
                    (env.sender, env.seq),
                    (FederateHandle(7), seq),
                    "bulk traffic lost, duplicated or reordered"
                );
            }
        });
    });
    expect_empty(&*b, "exactly `count` envelopes");
}

/// Bounded memory: a subscriber that does not read sheds best-effort envelopes once its
/// inbox holds [`crate::BEST_EFFORT_BACKLOG_MAX`] and counts them; it never drops a
/// reliable one, and what it does deliver keeps the sender's order.
pub fn slow_subscriber_sheds_best_effort_only(transport: &dyn Transport) {
    const EXTRA: u64 = 5_000;
    let best_effort = crate::BEST_EFFORT_BACKLOG_MAX as u64 + EXTRA;
    let a = open(transport);
    let b = open(transport);
    let (_, fed) = create_federation(&*a, "slow-subscriber");
    subscribe(&*b, fed, TOPIC_B);
    for seq in 1..=best_effort {
        publish(
            &*a,
            fed,
            TOPIC_B,
            data_sent(7, seq, TransportationType::BestEffort),
        );
    }
    for seq in best_effort + 1..=best_effort + 10 {
        publish(&*a, fed, TOPIC_B, data(7, seq));
    }
    // Only now does the subscriber read.
    let (mut delivered, mut last, mut reliable) = (0u64, 0u64, Vec::new());
    while reliable.len() < 10 {
        let env = receive(&*b, "the reliable envelopes after a best-effort flood");
        assert!(env.seq > last, "order broken: {} after {last}", env.seq);
        last = env.seq;
        if crate::is_best_effort(&env) {
            delivered += 1;
        } else {
            reliable.push(env.seq);
        }
    }
    assert_eq!(
        reliable,
        (best_effort + 1..=best_effort + 10).collect::<Vec<_>>(),
        "reliable envelopes are never shed"
    );
    let shed = b.stats().best_effort_dropped;
    assert_eq!(
        delivered + shed,
        best_effort,
        "every best-effort envelope is delivered or counted as shed"
    );
    assert!(
        shed <= EXTRA,
        "shed {shed}, more than the {EXTRA} beyond the backlog bound"
    );
}

/// Contract point 6: what was published before close is delivered; afterwards every
/// operation reports `Closed`, the closed endpoint receives nothing new, its inbox
/// drains then disconnects, and closing twice is harmless.
pub fn close_drains_and_refuses(transport: &dyn Transport) {
    const BEFORE_CLOSE: u64 = 10_000;
    let a = open(transport);
    let b = open(transport);
    let c = open(transport);
    let (_, fed) = create_federation(&*c, "close");
    subscribe(&*b, fed, TOPIC_A);
    subscribe(&*b, fed, TOPIC_B);
    for seq in 1..=BEFORE_CLOSE {
        publish(&*a, fed, TOPIC_A, data(1, seq));
    }
    a.close();
    for seq in 1..=BEFORE_CLOSE {
        expect_next(&*b, 1, seq, "an envelope published before close");
    }
    expect_empty(&*b, "nothing more from the closed sender");
    assert_eq!(
        a.publish(fed, TOPIC_A, data(1, BEFORE_CLOSE + 1)),
        Err(TransportError::Closed),
        "publish after close"
    );
    assert_eq!(
        a.subscribe(fed, TOPIC_A),
        Err(TransportError::Closed),
        "subscribe after close"
    );
    assert_eq!(
        a.unsubscribe(fed, TOPIC_A),
        Err(TransportError::Closed),
        "unsubscribe after close"
    );
    assert!(
        matches!(
            a.request(ExecRequest::ListFederates { federation: fed }),
            Err(TransportError::Closed)
        ),
        "request after close"
    );
    a.close();

    // The receiver closes with envelopes on their way: its inbox yields some prefix
    // of them in order, then disconnects; nothing published after close arrives.
    publish(&*c, fed, TOPIC_A, data(3, 1));
    publish(&*c, fed, TOPIC_B, data(3, 2));
    publish(&*c, fed, TOPIC_A, data(3, 3));
    expect_next(&*b, 3, 1, "before close");
    b.close();
    publish(&*c, fed, TOPIC_A, data(3, 4));
    let drained = drain_until_disconnected(&*b);
    assert!([&[][..], &[2], &[2, 3]].contains(&drained.as_slice()), "a closed inbox yields what had arrived, in order, and nothing published after close: {drained:?}");
    b.close();
}

/// Reads a closed endpoint's inbox until it reports disconnection; returns the seqs read.
pub fn drain_until_disconnected(endpoint: &dyn Endpoint) -> Vec<u64> {
    let mut drained = Vec::new();
    loop {
        match endpoint.inbox().recv_timeout(RECEIVE_TIMEOUT) {
            Ok(env) => drained.push(env.seq),
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => return drained,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => {
                panic!("a closed endpoint's inbox must disconnect once drained (read {drained:?})")
            }
        }
    }
}

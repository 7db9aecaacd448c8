//! Reliable delivery over core NATS (`glidepath_transport::nats::flow`): a slow
//! subscriber slows its publisher down instead of losing messages or growing anyone's
//! memory without bound, and what the NATS client drops is retransmitted — exactly
//! once and in order per sender, against a real `nats-server`.
//!
//! Without `nats-server` (on PATH or in GLIDEPATH_NATS_SERVER) these tests fail and
//! say how to install it: `bash scripts/test.sh`.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use bytes::Bytes;
use glidepath_core::FederateHandle;
use glidepath_transport::nats::flow::RELIABLE_BACKLOG_MAX;
use glidepath_transport::nats::{NatsOptions, NatsTestbed};
use glidepath_transport::{Endpoint, NatsTransport};

mod support;
use support::*;

/// With `options` on both sides, publishes `count` envelopes of 64 bytes as fast as it can while the receiver
/// first stalls, then reads slowly (a pause every `batch` envelopes), and checks what arrived: every
/// `seq` once, in order. Returns (sender stats, receiver stats, the longest inbox
/// seen, the sender's largest unacknowledged window, the times it waited for credit).
fn slow_subscriber(
    options: NatsOptions,
    count: u64,
    batch: u64,
    pause: Duration,
) -> (
    glidepath_transport::EndpointStats,
    glidepath_transport::EndpointStats,
    usize,
    u64,
    u64,
) {
    let bed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let sending = NatsTransport::connect_with(&bed.url(), options.clone()).unwrap();
    let receiving = NatsTransport::connect_with(&bed.url(), options).unwrap();
    let receiver = receiving.open_endpoint().unwrap();
    let fed = create(&receiver, "slow");
    receiver.subscribe(fed, TOPIC).unwrap();
    let sender = sending.open_endpoint().unwrap();
    let payload = Bytes::from(vec![7u8; 64]);

    let longest = Arc::new(AtomicUsize::new(0));
    let done = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (longest, done, inbox) = (longest.clone(), done.clone(), receiver.inbox().clone());
        thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                longest.fetch_max(inbox.len(), Ordering::Relaxed);
                thread::sleep(Duration::from_micros(200));
            }
        })
    };
    let published = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let sender = Arc::new(sender);
    let (published2, sender2) = (published.clone(), sender.clone());
    let publisher = thread::spawn(move || {
        let sender = sender2;
        for seq in 1..=count {
            sender
                .publish(fed, TOPIC, envelope_with(9, seq, payload.clone()))
                .unwrap();
            published2.store(seq, Ordering::Relaxed);
        }
        let (unacked, waits) = (sender.unacknowledged_max(), sender.credit_waits());
        // Close waits until the receiver has acknowledged everything.
        sender.close();
        (sender.stats(), unacked, waits)
    });
    // The subscriber stalls first, until a full inbox's worth was published: the
    // publisher then gets ahead however slow a loaded machine makes it (reading at
    // once, a publisher slowed by other work once never got half an inbox ahead).
    let stall_until = count.min(RELIABLE_BACKLOG_MAX as u64);
    let stall_deadline = Instant::now() + Duration::from_secs(30);
    while published.load(Ordering::Relaxed) < stall_until && Instant::now() < stall_deadline {
        thread::sleep(Duration::from_millis(1));
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    for seq in 1..=count {
        let left = deadline.saturating_duration_since(Instant::now());
        let env = receiver
            .inbox()
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("waiting for seq {seq} of {count}: {e}; receiver {:?}; sender published {} unacked max {} waits {} {:?}", receiver.stats(), published.load(Ordering::Relaxed), sender.unacknowledged_max(), sender.credit_waits(), sender.stats()));
        assert_eq!(
            (env.sender, env.seq),
            (FederateHandle(9), seq),
            "out of order or duplicated"
        );
        if seq % batch == 0 {
            thread::sleep(pause);
        }
    }
    let (sent, unacked, waits) = publisher.join().unwrap();
    done.store(true, Ordering::Relaxed);
    watcher.join().unwrap();
    // Nothing more arrives: no duplicate slipped through after the last one.
    assert!(receiver
        .inbox()
        .recv_timeout(Duration::from_millis(300))
        .is_err());
    (
        sent,
        receiver.stats(),
        longest.load(Ordering::Relaxed),
        unacked,
        waits,
    )
}

#[test]
fn a_slow_subscriber_slows_its_publisher_and_loses_nothing() {
    let options = NatsOptions::default();
    let window = options.window_envelopes as u64;
    // 400,000 envelopes: the receiver takes 1,000 every 5 ms (at most 200,000/s), so
    // a publisher gets ahead and must wait for credit, even on a loaded machine (at
    // 2,000 every 5 ms, a publisher slowed by other work once never got ahead).
    let (sent, received, longest, unacked, waits) =
        slow_subscriber(options.clone(), 400_000, 1_000, Duration::from_millis(5));
    assert_eq!(received.lost_envelopes, 0, "{received:?}");
    assert_eq!(received.slow_consumer_events, 0, "{received:?}");
    assert_eq!(sent.receivers_given_up, 0, "{sent:?}");
    // The sender never had more than a window unacknowledged, and the receiver's inbox
    // stayed within its bound plus what one window lets through.
    assert!(
        unacked <= window,
        "unacknowledged {unacked} > window {window}"
    );
    assert!(
        waits > 0,
        "the publisher never waited for credit: the test proves nothing"
    );
    assert!(
        longest <= RELIABLE_BACKLOG_MAX + options.window_envelopes,
        "inbox reached {longest} (bound {RELIABLE_BACKLOG_MAX} + window {window})"
    );
    assert!(
        longest >= RELIABLE_BACKLOG_MAX / 2,
        "the receiver was never behind ({longest}): the test proves nothing"
    );
}

#[test]
fn what_the_client_drops_is_retransmitted_exactly_once_in_order() {
    // A client channel of 1,024 messages against a window of 4,096: whenever the
    // reader stops (its inbox full: the receiver pauses a second every 50,000), the
    // client drops what does not fit, and only retransmission can fill the gaps.
    let options = NatsOptions {
        subscription_capacity: 1024,
        window_envelopes: 4096,
        ..NatsOptions::default()
    };
    let (sent, received, _, _, _) =
        slow_subscriber(options, 200_000, 50_000, Duration::from_secs(1));
    assert!(
        received.slow_consumer_events > 0,
        "the client never dropped anything: the test proves nothing; {received:?}"
    );
    assert!(sent.retransmitted > 0, "{sent:?}");
    assert_eq!(received.lost_envelopes, 0, "{received:?}");
}

//! The bus's API on both transports: patterns, service levels with several
//! publishers, membership notices, open groups, receive styles and malformed
//! messages. The NATS tests start a real `nats-server` with JetStream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use glidepath::backend::nats::NatsServerProcess;
use glidepath::bus::{
    Bus, BusConfig, Encoding, Event, MembershipKind, Message, Pattern, ServiceLevel, Subject,
};
use glidepath::Bytes;

const WAIT: Duration = Duration::from_secs(10);

fn subject(s: &str) -> Subject {
    Subject::new(s).unwrap()
}

fn pattern(s: &str) -> Pattern {
    Pattern::new(s).unwrap()
}

struct Nats {
    server: NatsServerProcess,
    _store: std::path::PathBuf,
}

fn nats() -> Nats {
    let store = std::env::temp_dir().join(format!(
        "glidepath-bus-test-{}-{}",
        std::process::id(),
        glidepath::monotonic_now_ns()
    ));
    std::fs::create_dir_all(&store).unwrap();
    let server = NatsServerProcess::start_with(
        None,
        &["--jetstream", "--store_dir", store.to_str().unwrap()],
    )
    .unwrap();
    Nats {
        server,
        _store: store,
    }
}

impl Drop for Nats {
    fn drop(&mut self) {
        self.server.stop();
        let _ = std::fs::remove_dir_all(&self._store);
    }
}

fn next_message(sub: &glidepath::bus::Subscription) -> glidepath::bus::Delivery {
    loop {
        match sub.recv_timeout(WAIT).unwrap() {
            Some(Event::Message(d)) => return d,
            Some(Event::Membership(_)) => continue,
            None => panic!("no message within {WAIT:?}"),
        }
    }
}

fn next_membership(sub: &glidepath::bus::Subscription) -> glidepath::bus::MembershipChange {
    loop {
        match sub.recv_timeout(WAIT).unwrap() {
            Some(Event::Membership(m)) => return m,
            Some(Event::Message(_)) => continue,
            None => panic!("no membership change within {WAIT:?}"),
        }
    }
}

/// Patterns pick subjects; every level delivers; a message's fields survive.
fn patterns_and_levels(config: &BusConfig, levels: &[ServiceLevel]) {
    let a = Bus::connect(&BusConfig {
        name: "a".into(),
        ..config.clone()
    })
    .unwrap();
    let b = Bus::connect_like(&a, "b").unwrap();
    let sat1 = b.subscribe(&pattern("FFTB.MMS.SAT1.+")).unwrap();
    let truth = b.subscribe(&pattern("FFTB.*.*.DATA.TRUTH.>")).unwrap();
    // Level by level: different levels may travel different paths (over NATS the
    // totally ordered ones through the group's stream), with no order between them.
    for (i, level) in levels.iter().enumerate() {
        let m = Message::new().with("i", i as i32).with("x", 1234.5f32);
        a.publish(
            &subject("FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL"),
            &m,
            *level,
        )
        .unwrap();
        a.publish(
            &subject("FFTB.MMS.SAT2.DATA.TRUTH.STARS.POSVEL"),
            &m,
            *level,
        )
        .unwrap();
        a.publish(&subject("FFTB.MMS.SAT1"), &m, *level).unwrap();
        let d = next_message(&sat1);
        assert_eq!(
            (d.subject.as_str(), d.level),
            ("FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL", *level)
        );
        assert_eq!(d.message.get_i32("i"), Ok(i as i32));
        assert_eq!(d.message.get_f32("x"), Ok(1234.5));
        assert_eq!(d.sender, a.member());
        if level.is_totally_ordered() {
            assert!(
                d.group_seq.is_some(),
                "{level} has a place in the group's order"
            );
        }
        assert_eq!(next_message(&sat1).subject.as_str(), "FFTB.MMS.SAT1");
        assert_eq!(
            next_message(&truth).subject.as_str(),
            "FFTB.MMS.SAT1.DATA.TRUTH.STARS.POSVEL"
        );
        assert_eq!(
            next_message(&truth).subject.as_str(),
            "FFTB.MMS.SAT2.DATA.TRUTH.STARS.POSVEL"
        );
    }
    assert_eq!(sat1.try_recv().unwrap().map(|_| ()), None);
    assert_eq!(b.stats().lost, 0);
}

/// Three publishers, three subscribers: FIFO per sender at every subscriber, and for
/// AGREED the same total order at every subscriber.
fn several_publishers(config: &BusConfig, level: ServiceLevel) {
    const N: i32 = 300;
    let first = Bus::connect(&BusConfig {
        name: "p0".into(),
        ..config.clone()
    })
    .unwrap();
    let publishers: Vec<Bus> = (0..3)
        .map(|i| {
            if i == 0 {
                first.clone()
            } else {
                Bus::connect_like(&first, &format!("p{i}")).unwrap()
            }
        })
        .collect();
    let subscribers: Vec<Bus> = (0..3)
        .map(|i| Bus::connect_like(&first, &format!("s{i}")).unwrap())
        .collect();
    let subs: Vec<_> = subscribers
        .iter()
        .map(|b| b.subscribe(&pattern("T.>")).unwrap())
        .collect();
    let threads: Vec<_> = publishers
        .iter()
        .map(|p| {
            let p = p.clone();
            std::thread::spawn(move || {
                for i in 0..N {
                    p.publish(&subject("T.X"), &Message::new().with("i", i), level)
                        .unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut orders = Vec::new();
    for sub in &subs {
        let mut next: HashMap<_, i32> = HashMap::new();
        let mut order = Vec::new();
        for _ in 0..3 * N {
            let d = next_message(sub);
            let i = d.message.get_i32("i").unwrap();
            let expected = next.entry(d.sender).or_insert(0);
            assert_eq!(i, *expected, "{level}: FIFO per sender");
            *expected += 1;
            order.push((d.sender, i));
        }
        orders.push(order);
    }
    if level.is_totally_ordered() {
        assert!(
            orders.windows(2).all(|w| w[0] == w[1]),
            "{level}: one total order"
        );
    }
    for s in &subscribers {
        assert_eq!(s.stats().lost, 0);
        assert_eq!(s.stats().order_violations, 0);
    }
}

/// Members see each other join and leave; a non-member may send to the group.
fn membership_and_open_group(config: &BusConfig) {
    let group = subject("FORMATION");
    let a = Bus::connect(&BusConfig {
        name: "fe-1".into(),
        ..config.clone()
    })
    .unwrap();
    let b = Bus::connect_like(&a, "fe-2").unwrap();
    let outsider = Bus::connect_like(&a, "ground").unwrap();
    let ja = a.join(&group).unwrap();
    let own = next_membership(&ja);
    assert_eq!(
        (own.kind, own.member, own.name.as_str()),
        (MembershipKind::Joined, a.member(), "fe-1")
    );
    let jb = b.join(&group).unwrap();
    let seen = next_membership(&ja);
    assert_eq!(
        (seen.kind, seen.member, seen.name.as_str()),
        (MembershipKind::Joined, b.member(), "fe-2")
    );
    assert_eq!(next_membership(&jb).member, b.member());
    outsider
        .publish_to(
            &group,
            &subject("FFTB.CMD"),
            &Message::new().with("burn", true),
            ServiceLevel::Agreed,
        )
        .unwrap();
    for j in [&ja, &jb] {
        let d = next_message(j);
        assert_eq!(
            (d.sender, d.message.get_bool("burn")),
            (outsider.member(), Ok(true))
        );
    }
    drop(jb);
    let left = next_membership(&ja);
    assert_eq!((left.kind, left.member), (MembershipKind::Left, b.member()));
}

/// A callback subscription, and a malformed message counted and dropped.
fn callback_and_malformed(config: &BusConfig) {
    let a = Bus::connect(&BusConfig {
        name: "a".into(),
        ..config.clone()
    })
    .unwrap();
    let b = Bus::connect_like(&a, "b").unwrap();
    let got = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = std::sync::mpsc::channel();
    let sink = got.clone();
    let cb = b
        .subscribe_with(&pattern("C.>"), move |e| {
            if let Event::Message(d) = e {
                sink.lock()
                    .unwrap()
                    .push(d.message.get_str("t").unwrap().to_string());
                let _ = tx.send(());
            }
        })
        .unwrap();
    let group = a.config().default_group.clone();
    let bad = Bytes::from_static(b"<msg><e key=\"t\" typ=\"S\" val=\"no prolog\" /></msg>");
    a.publish_encoded(
        &group,
        &subject("C.D"),
        bad,
        Encoding::Xml,
        ServiceLevel::Fifo,
    )
    .unwrap();
    a.publish(
        &subject("C.D"),
        &Message::new().with("t", "hello"),
        ServiceLevel::Fifo,
    )
    .unwrap();
    rx.recv_timeout(WAIT).unwrap();
    assert_eq!(*got.lock().unwrap(), vec!["hello".to_string()]);
    assert_eq!(b.stats().malformed, 1);
    drop(cb);
}

/// One sender mixes FIFO and AGREED in one group: nothing is counted lost or out of
/// order, and the FIFO messages arrive in the order sent.
fn mixed_levels_from_one_sender(config: &BusConfig) {
    const N: i32 = 50;
    let a = Bus::connect(&BusConfig {
        name: "a".into(),
        ..config.clone()
    })
    .unwrap();
    let b = Bus::connect_like(&a, "b").unwrap();
    let sub = b.subscribe(&pattern("MIXED.>")).unwrap();
    for i in 0..N {
        for level in [ServiceLevel::Fifo, ServiceLevel::Agreed] {
            a.publish(&subject("MIXED.X"), &Message::new().with("i", i), level)
                .unwrap();
        }
    }
    let mut fifo = Vec::new();
    let mut agreed = Vec::new();
    for _ in 0..2 * N {
        let d = next_message(&sub);
        let i = d.message.get_i32("i").unwrap();
        match d.level {
            ServiceLevel::Fifo => fifo.push(i),
            _ => agreed.push(i),
        }
    }
    let sent: Vec<i32> = (0..N).collect();
    assert_eq!(fifo, sent);
    assert_eq!(agreed, sent);
    assert_eq!(b.stats().lost, 0, "{:?}", b.stats());
    assert_eq!(b.stats().order_violations, 0);
}

#[test]
fn inproc_mixed_levels_from_one_sender() {
    mixed_levels_from_one_sender(&BusConfig::isolated_inproc());
}

#[test]
fn nats_mixed_levels_from_one_sender() {
    let n = nats();
    mixed_levels_from_one_sender(&BusConfig::nats(&n.server.url()));
}

#[test]
fn inproc_patterns_and_every_level() {
    patterns_and_levels(&BusConfig::isolated_inproc(), &ServiceLevel::ALL);
}

#[test]
fn inproc_several_publishers_fifo_agreed_and_safe() {
    several_publishers(&BusConfig::isolated_inproc(), ServiceLevel::Fifo);
    several_publishers(&BusConfig::isolated_inproc(), ServiceLevel::Agreed);
    several_publishers(&BusConfig::isolated_inproc(), ServiceLevel::Safe);
}

#[test]
fn inproc_membership_and_open_group() {
    membership_and_open_group(&BusConfig::isolated_inproc());
}

#[test]
fn inproc_callback_and_malformed() {
    callback_and_malformed(&BusConfig::isolated_inproc());
}

#[test]
fn nats_patterns_and_levels() {
    let n = nats();
    let config = BusConfig::nats(&n.server.url());
    patterns_and_levels(&config, &ServiceLevel::ALL);
}

#[test]
fn nats_several_publishers_fifo_agreed_and_safe() {
    let n = nats();
    let config = BusConfig::nats(&n.server.url());
    several_publishers(&config, ServiceLevel::Fifo);
    several_publishers(&config, ServiceLevel::Safe);
    several_publishers(
        &BusConfig {
            encoding: Encoding::Binary,
            ..config
        },
        ServiceLevel::Agreed,
    );
}

/// A member that joined and then fell silent (a raw NATS client speaking the frames of
/// `docs/wire-format.md` 7.5: it joins, never acknowledges) holds SAFE messages back
/// until the others declare it crashed; then they are handed out, in order with the
/// AGREED message sent after them, followed by the *crashed* notice, and later SAFE
/// messages no longer wait.
#[test]
fn nats_safe_waits_for_a_silent_member_until_it_is_declared_crashed() {
    use glidepath_bus::frame::{MemberId, MembershipFrame};
    let n = nats();
    let crash_timeout = Duration::from_millis(1500);
    let config = BusConfig {
        crash_timeout,
        default_group: subject("SAFEGROUP"),
        ..BusConfig::nats(&n.server.url())
    };
    let a = Bus::connect(&BusConfig {
        name: "a".into(),
        ..config.clone()
    })
    .unwrap();
    let b = Bus::connect_like(&a, "b").unwrap();
    let a_events = a.join(&subject("SAFEGROUP")).unwrap();
    let b_events = b.join(&subject("SAFEGROUP")).unwrap();
    assert_eq!(next_membership(&a_events).kind, MembershipKind::Joined);

    // The silent member joins through the group's stream, as a member does. It is
    // last heard no earlier than now: its crash timeout runs from here.
    let silent = MemberId(0x0051_1347);
    let joining = std::time::Instant::now();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = async_nats::connect(n.server.url()).await.unwrap();
        let frame = MembershipFrame {
            kind: MembershipKind::Joined,
            member: silent,
            name: "silent".into(),
        };
        client
            .publish("gpbus.SAFEGROUP.s.v", Bytes::from(frame.encode()))
            .await
            .unwrap();
        client.flush().await.unwrap();
    });
    for events in [&a_events, &b_events] {
        loop {
            let m = next_membership(events);
            if m.member == silent {
                assert_eq!(
                    (m.kind, m.name.as_str()),
                    (MembershipKind::Joined, "silent")
                );
                break;
            }
        }
    }

    let sent = std::time::Instant::now();
    a.publish(
        &subject("S.ONE"),
        &Message::new().with("i", 1),
        ServiceLevel::Safe,
    )
    .unwrap();
    a.publish(
        &subject("S.TWO"),
        &Message::new().with("i", 2),
        ServiceLevel::Agreed,
    )
    .unwrap();
    for events in [&a_events, &b_events] {
        let first = next_message(events);
        // Held until the silent member was found silent for the crash timeout,
        // which runs from when it was last heard (its join), not from the publish:
        // handed out at once, it would come milliseconds after both.
        assert!(
            joining.elapsed() >= crash_timeout,
            "SAFE handed out {:?} after the silent member joined ({:?} after it was sent), \
             before the silent member was declared crashed",
            joining.elapsed(),
            sent.elapsed()
        );
        assert_eq!(first.level, ServiceLevel::Safe);
        assert_eq!(first.message.get_i32("i").unwrap(), 1);
        let second = next_message(events);
        assert_eq!(second.message.get_i32("i").unwrap(), 2);
        assert!(first.group_seq < second.group_seq);
        let crashed = next_membership(events);
        assert_eq!(
            (crashed.kind, crashed.member),
            (MembershipKind::Crashed, silent)
        );
    }

    // The view is the two live members now: SAFE goes out without that wait.
    let again = std::time::Instant::now();
    b.publish(
        &subject("S.THREE"),
        &Message::new().with("i", 3),
        ServiceLevel::Safe,
    )
    .unwrap();
    for events in [&a_events, &b_events] {
        assert_eq!(next_message(events).message.get_i32("i").unwrap(), 3);
    }
    eprintln!(
        "SAFE with a silent member: {:?}; with two live members: {:?}",
        sent.elapsed(),
        again.elapsed()
    );
    assert_eq!(a.stats().lost + b.stats().lost, 0);
}

#[test]
fn nats_membership_and_open_group() {
    let n = nats();
    membership_and_open_group(&BusConfig::nats(&n.server.url()));
}

#[test]
fn nats_callback_and_malformed() {
    let n = nats();
    callback_and_malformed(&BusConfig::nats(&n.server.url()));
}

/// A hole in a member's copy of the group order (here opened by a forged republished
/// copy that arrives ahead of its predecessor) is filled, from the stream or by the
/// late copy, before anything after it is handed out: every message once, in order,
/// nothing counted lost, the duplicate dropped.
#[test]
fn nats_a_hole_in_the_order_is_filled_not_lost() {
    use glidepath_bus::frame::{DataFrame, MemberId};
    let n = nats();
    let config = BusConfig {
        default_group: subject("HOLE"),
        ..BusConfig::nats(&n.server.url())
    };
    let a = Bus::connect(&BusConfig {
        name: "a".into(),
        ..config.clone()
    })
    .unwrap();
    let b = Bus::connect_like(&a, "b").unwrap();
    let sub = a.subscribe(&pattern("H.>")).unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let client = async_nats::connect(n.server.url()).await.unwrap();
        let js = async_nats::jetstream::new(client.clone());
        let mut stream = js.get_stream("GPBUS_HOLE").await.unwrap();
        let last = stream.info().await.unwrap().state.last_sequence;
        // A copy of the second message to come, numbered as the stream will number it.
        let mut payload = Vec::new();
        Message::new()
            .with("i", 2)
            .encode(Encoding::Xml, &mut payload)
            .unwrap();
        let forged = DataFrame {
            level: ServiceLevel::Agreed,
            encoding: Encoding::Xml,
            sender: MemberId(0xF0F0),
            seq: 2,
            publish_time_ns: glidepath::monotonic_now_ns(),
            subject: subject("H.X"),
            payload: Bytes::from(payload),
        };
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Sequence", (last + 2).to_string().as_str());
        client
            .publish_with_headers("gpbus.HOLE.r.m.H.X", headers, Bytes::from(forged.encode()))
            .await
            .unwrap();
        client.flush().await.unwrap();
    });
    for i in 1..=3 {
        b.publish(
            &subject("H.X"),
            &Message::new().with("i", i),
            ServiceLevel::Agreed,
        )
        .unwrap();
    }
    let got: Vec<i32> = (0..3)
        .map(|_| next_message(&sub).message.get_i32("i").unwrap())
        .collect();
    assert_eq!(got, [1, 2, 3]);
    assert!(
        sub.recv_timeout(Duration::from_millis(300))
            .unwrap()
            .is_none(),
        "a duplicate"
    );
    assert_eq!(a.stats().lost, 0, "{:?}", a.stats());
}

/// A publisher faster than its group's stream is held back, not dropped: a server
/// whose streams queue at most 1,000 incoming messages (`max_buffered_msgs`; 10,000 by
/// default) drops what comes beyond that with nothing but a line in its log, and
/// 5,000 AGREED messages of 10 KB sent as fast as possible all arrive, in order.
#[test]
fn nats_a_flood_into_the_stream_waits_for_it_and_loses_nothing() {
    let store = std::env::temp_dir().join(format!(
        "glidepath-bus-flood-{}-{}",
        std::process::id(),
        glidepath::monotonic_now_ns()
    ));
    std::fs::create_dir_all(&store).unwrap();
    let conf = store.join("server.conf");
    std::fs::write(
        &conf,
        format!(
            "jetstream {{\n  store_dir: \"{}\"\n  max_buffered_msgs: 1000\n}}\n",
            store.display()
        ),
    )
    .unwrap();
    let mut server = NatsServerProcess::start_with(None, &["-c", conf.to_str().unwrap()]).unwrap();
    let config = BusConfig {
        default_group: subject("FLOOD"),
        ..BusConfig::nats(&server.url())
    };
    let a = Bus::connect(&BusConfig {
        name: "a".into(),
        ..config.clone()
    })
    .unwrap();
    let b = Bus::connect_like(&a, "b").unwrap();
    let sub = a.subscribe(&pattern("F.>")).unwrap();
    let filler = "x".repeat(10_000);
    let count = 5_000;
    for i in 0..count {
        b.publish(
            &subject("F.X"),
            &Message::new().with("i", i).with("fill", filler.as_str()),
            ServiceLevel::Agreed,
        )
        .unwrap();
    }
    for i in 0..count {
        assert_eq!(next_message(&sub).message.get_i32("i").unwrap(), i);
    }
    assert_eq!(b.stats().lost, 0, "{:?}", b.stats());
    assert_eq!(a.stats().lost, 0, "{:?}", a.stats());
    b.close();
    a.close();
    server.stop();
    let _ = std::fs::remove_dir_all(&store);
}

/// A member closed after its NATS server died does not wait for the server forever:
/// its leaving notice fails after the publish timeout and its last flush is bounded.
#[test]
fn nats_closing_after_the_server_died_returns() {
    let mut n = nats();
    let a = Bus::connect(&BusConfig::nats(&n.server.url())).unwrap();
    let sub = a.subscribe(&pattern("GONE.>")).unwrap();
    n.server.stop();
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        drop(sub);
        a.close();
        let _ = done_tx.send(());
    });
    done_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("close returned with the server gone");
}

/// RELIABLE and FIFO over core NATS across a server restart: the receiver asks the
/// sender for what core NATS dropped while the connections were down and delivers
/// it in order, so every message arrives once and in order, none counted lost.
#[test]
fn nats_fifo_survives_a_server_restart_by_repair() {
    use std::sync::atomic::{AtomicU64, Ordering};
    const N: i32 = 20_000;
    let mut n = nats();
    let port = n.server.port();
    let config = BusConfig::nats(&n.server.url());
    let a = Bus::connect(&BusConfig {
        name: "sender".into(),
        ..config.clone()
    })
    .unwrap();
    let b = Bus::connect(&BusConfig {
        name: "receiver".into(),
        ..config
    })
    .unwrap();
    let sub = b.subscribe(&Pattern::new("T.>").unwrap()).unwrap();
    let sent = Arc::new(AtomicU64::new(0));
    let publisher = {
        let sent = sent.clone();
        std::thread::spawn(move || {
            let subject = Subject::new("T.X").unwrap();
            for i in 0..N {
                let level = if i % 2 == 0 {
                    ServiceLevel::Fifo
                } else {
                    ServiceLevel::Reliable
                };
                a.publish(&subject, &Message::new().with("i", i), level)
                    .unwrap();
                sent.store(i as u64 + 1, Ordering::Relaxed);
                if i % 50 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            a
        })
    };
    while sent.load(Ordering::Relaxed) < 5_000 {
        std::thread::sleep(Duration::from_millis(1));
    }
    n.server.stop();
    std::thread::sleep(Duration::from_millis(300));
    n.server = NatsServerProcess::start_with(
        Some(port),
        &["--jetstream", "--store_dir", n._store.to_str().unwrap()],
    )
    .unwrap();
    let a = publisher.join().unwrap();
    let mut got = Vec::with_capacity(N as usize);
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while got.len() < N as usize {
        assert!(
            std::time::Instant::now() < deadline,
            "{} of {N} arrived: {:?}",
            got.len(),
            b.stats()
        );
        if let Some(Event::Message(d)) = sub.recv_timeout(Duration::from_millis(500)).unwrap() {
            got.push(d.message.get_i32("i").unwrap());
        }
    }
    let expected: Vec<i32> = (0..N).collect();
    assert!(
        got == expected,
        "first out of place at {:?}",
        got.iter().zip(&expected).position(|(g, e)| g != e)
    );
    let stats = b.stats();
    assert_eq!((stats.lost, stats.order_violations), (0, 0), "{stats:?}");
    eprintln!("messages repaired after the restart: {}", stats.repaired);
    assert!(
        sub.recv_timeout(Duration::from_millis(300))
            .unwrap()
            .is_none(),
        "nothing twice"
    );
    drop(a);
}

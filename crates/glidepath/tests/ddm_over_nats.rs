//! Data distribution management on the NATS wire, with a real `nats-server`: updates
//! and interactions sent with regions travel on the subjects of the grid cells they
//! cover, so a subscriber's connection reads little more than what overlaps its
//! regions, and still gets every overlapping message exactly once, in order, with time
//! management intact.

mod common;

use common::sectors::*;
use common::*;
use glidepath::backend::nats::NatsTestbed;
use glidepath::{Callback, Federate, RangeBounds, Rti, RtiConfig, TransportKind};

/// An RTI on the testbed's server cutting the plane into `cells` slices per axis.
fn rti(testbed: &NatsTestbed, cells: u32) -> Rti {
    let mut config = RtiConfig::default();
    config.transport = TransportKind::Nats;
    config.nats_url = testbed.url();
    config.ddm_cells = cells;
    Rti::from_config(&config).unwrap_or_else(|e| panic!("{e}"))
}

/// A seeded walk over the plane.
struct Points(u64);

impl Points {
    fn next(&mut self) -> (u64, u64) {
        let mut v = || {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % 1000
        };
        (v(), v())
    }
}

/// Sends contact `what` at point `p`, in a region of its own made for it (at `time`
/// when given), and deletes the region.
fn send_contact(sender: &Federate, s: &Sectors, what: &str, p: (u64, u64), time: Option<f64>) {
    let param = sender.parameter_handle(s.contact, "what").unwrap();
    let region = sender.create_region(&[s.x, s.y]).unwrap();
    sender
        .set_range_bounds(region, s.x, RangeBounds::new(p.0, p.0))
        .unwrap();
    sender
        .set_range_bounds(region, s.y, RangeBounds::new(p.1, p.1))
        .unwrap();
    sender.commit_region_modifications(&[region]).unwrap();
    let values = [(param, b(what))];
    match time {
        Some(t) => sender
            .send_interaction_with_regions_at(s.contact, values, &[region], "", t)
            .unwrap(),
        None => sender
            .send_interaction_with_regions(s.contact, values, &[region], "")
            .unwrap(),
    };
    sender.delete_region(region).unwrap();
}

struct Quadrant {
    f: Federate,
    x: (u64, u64),
    y: (u64, u64),
}

impl Quadrant {
    fn holds(&self, (x, y): (u64, u64)) -> bool {
        (self.x.0..self.x.1).contains(&x) && (self.y.0..self.y.1).contains(&y)
    }
}

/// Time-stamped contacts at random points: each quadrant subscriber gets exactly those
/// in its quadrant, in order, before the grant past them; a subscriber without regions
/// gets them all; and the quadrants' connections read far fewer messages than its.
#[test]
fn time_stamped_contacts_reach_exactly_the_overlapping_quadrants_and_little_else() {
    const SENT: u32 = 400;
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let main = rti(&testbed, 8);
    main.create_federation_execution_with_fom("quadrants", sectors_fom())
        .unwrap();
    let sender = join(&main, "quadrants", "sender");
    let s = Sectors::of(&sender);
    sender.publish_interaction_class(s.contact).unwrap();
    sender.publish_interaction_class(s.chat).unwrap();
    regulating_and_constrained(&sender, 1.0);
    let others: Vec<Rti> = (0..5).map(|_| rti(&testbed, 8)).collect();
    let mut quadrants = Vec::new();
    for (k, (x, y)) in [
        ((0, 500), (0, 500)),
        ((500, 1000), (0, 500)),
        ((0, 500), (500, 1000)),
        ((500, 1000), (500, 1000)),
    ]
    .into_iter()
    .enumerate()
    {
        let f = join(&others[k], "quadrants", &format!("q{k}"));
        let region = region_xy(&f, &s, r(x.0, x.1), Some(r(y.0, y.1)));
        f.subscribe_interaction_class_with_regions(s.contact, &[region])
            .unwrap();
        f.subscribe_interaction_class(s.chat).unwrap();
        regulating_and_constrained(&f, 1.0);
        quadrants.push(Quadrant { f, x, y });
    }
    let everywhere = join(&others[4], "quadrants", "everywhere");
    everywhere.subscribe_interaction_class(s.contact).unwrap();
    everywhere.subscribe_interaction_class(s.chat).unwrap();
    regulating_and_constrained(&everywhere, 1.0);
    let _ = until_chat(&sender, &everywhere, &s, "settled");
    for q in &quadrants {
        let _ = until_chat(&sender, &q.f, &s, "settled");
    }
    let before: Vec<u64> = quadrants
        .iter()
        .map(|q| q.f.transport_stats().wire_in_messages)
        .chain([everywhere.transport_stats().wire_in_messages])
        .collect();

    let mut points = Points(0x5eed_0fd0);
    let mut sent = Vec::new();
    for i in 0..SENT {
        let p = points.next();
        send_contact(
            &sender,
            &s,
            &format!("c{i}"),
            p,
            Some(2.0 + f64::from(i) / 1000.0),
        );
        sent.push((format!("c{i}"), p));
    }
    // Everyone advances past the contacts: the grant at 3 comes only after them all.
    std::thread::scope(|scope| {
        for f in quadrants.iter().map(|q| &q.f).chain([&everywhere, &sender]) {
            scope.spawn(move || {
                f.time_advance_request(3.0).unwrap();
                let (grant, before) = wait_for(f, "the grant at 3", |c| {
                    matches!(c, Callback::TimeAdvanceGrant { .. })
                });
                assert!(
                    matches!(grant, Callback::TimeAdvanceGrant { time } if time == t(3.0)),
                    "{grant:?}"
                );
                if f.name() != "sender" {
                    // Stash what came for the checks below.
                    let got = contacts(&before, &Sectors::of(f));
                    STORE.lock().unwrap().push((f.name().to_string(), got));
                }
            });
        }
    });
    let store = STORE.lock().unwrap();
    let got = |name: &str| {
        store
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, g)| g.clone())
            .unwrap()
    };
    let all: Vec<String> = sent.iter().map(|(w, _)| w.clone()).collect();
    assert_eq!(got("everywhere"), all);
    let mut covered = 0;
    for (k, q) in quadrants.iter().enumerate() {
        let expected: Vec<String> = sent
            .iter()
            .filter(|(_, p)| q.holds(*p))
            .map(|(w, _)| w.clone())
            .collect();
        covered += expected.len();
        assert_eq!(got(&format!("q{k}")), expected, "quadrant {k}");
    }
    assert_eq!(covered, SENT as usize, "the quadrants tile the plane");
    let after: Vec<u64> = quadrants
        .iter()
        .map(|q| q.f.transport_stats().wire_in_messages)
        .chain([everywhere.transport_stats().wire_in_messages])
        .collect();
    let read: Vec<u64> = after.iter().zip(&before).map(|(a, b)| a - b).collect();
    let everywhere_read = read[4];
    for (k, quadrant_read) in read[..4].iter().enumerate() {
        // A quarter of the contacts, the accounts and the time statuses; without
        // cells it would read as many as `everywhere`.
        assert!(
            *quadrant_read * 2 < everywhere_read,
            "quadrant {k} read {quadrant_read} messages, everywhere {everywhere_read}"
        );
    }
    for f in quadrants.iter().map(|q| &q.f).chain([&everywhere, &sender]) {
        let stats = f.transport_stats();
        assert_eq!(stats.lost_envelopes, 0, "{}", f.name());
        assert_eq!(stats.malformed_envelopes, 0, "{}", f.name());
    }
}

static STORE: std::sync::Mutex<Vec<(String, Vec<String>)>> = std::sync::Mutex::new(Vec::new());

/// A subscriber cutting the plane differently from the sender reads none of its cells,
/// yet loses nothing: what overlaps reaches it through retransmissions.
#[test]
fn a_subscriber_on_another_grid_still_gets_everything_that_overlaps() {
    const SENT: u32 = 200;
    let testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let main = rti(&testbed, 8);
    main.create_federation_execution_with_fom("grids", sectors_fom())
        .unwrap();
    let sender = join(&main, "grids", "sender");
    let s = Sectors::of(&sender);
    sender.publish_interaction_class(s.contact).unwrap();
    sender.publish_interaction_class(s.chat).unwrap();
    let other = rti(&testbed, 5);
    let west = join(&other, "grids", "west");
    let region = region_xy(&west, &s, r(0, 500), None);
    west.subscribe_interaction_class_with_regions(s.contact, &[region])
        .unwrap();
    west.subscribe_interaction_class(s.chat).unwrap();
    let _ = until_chat(&sender, &west, &s, "settled");
    let mut points = Points(77);
    let mut expected = Vec::new();
    for i in 0..SENT {
        let p = points.next();
        send_contact(&sender, &s, &format!("c{i}"), p, None);
        if p.0 < 500 {
            expected.push(format!("c{i}"));
        }
    }
    let got = contacts(&until_chat(&sender, &west, &s, "end"), &s);
    assert_eq!(got, expected);
    assert_eq!(west.transport_stats().lost_envelopes, 0);
    assert!(
        sender.transport_stats().retransmitted > 0,
        "what reached west came again"
    );
}

/// The NATS server restarts in the middle of a stream of contacts sent with regions:
/// what was on the wire (envelopes and accounts alike) is repaired, and each
/// subscriber gets exactly what overlaps its region, once, in order.
#[test]
fn contacts_with_regions_survive_a_nats_server_restart_exactly_once_in_order() {
    const SENT: u32 = 3000;
    let mut testbed = NatsTestbed::start().unwrap_or_else(|e| panic!("{e}"));
    let port = testbed.server.port();
    let main = rti(&testbed, 8);
    main.create_federation_execution_with_fom("restart", sectors_fom())
        .unwrap();
    let sender = join(&main, "restart", "sender");
    let s = Sectors::of(&sender);
    sender.publish_interaction_class(s.contact).unwrap();
    sender.publish_interaction_class(s.chat).unwrap();
    let other = rti(&testbed, 8);
    let halves: Vec<(Federate, (u64, u64))> = [(0, 500), (500, 1000)]
        .into_iter()
        .enumerate()
        .map(|(k, x)| {
            let f = join(&other, "restart", &format!("half{k}"));
            let region = region_xy(&f, &s, r(x.0, x.1), None);
            f.subscribe_interaction_class_with_regions(s.contact, &[region])
                .unwrap();
            f.subscribe_interaction_class(s.chat).unwrap();
            (f, x)
        })
        .collect();
    for (f, _) in &halves {
        let _ = until_chat(&sender, f, &s, "settled");
    }
    let mut points = Points(4242);
    let mut sent = Vec::new();
    let mut restarted = None;
    for i in 0..SENT {
        if i == SENT / 2 {
            testbed.server.stop();
            restarted = Some(
                glidepath::backend::nats::NatsServerProcess::start_on_port(port)
                    .unwrap_or_else(|e| panic!("{e}")),
            );
        }
        let p = points.next();
        send_contact(&sender, &s, &format!("c{i}"), p, None);
        sent.push((format!("c{i}"), p));
    }
    for (f, x) in &halves {
        let expected: Vec<String> = sent
            .iter()
            .filter(|(_, p)| (x.0..x.1).contains(&p.0))
            .map(|(w, _)| w.clone())
            .collect();
        let got = contacts(&until_chat(&sender, f, &s, "end"), &s);
        assert_eq!(got, expected, "{}", f.name());
        assert_eq!(f.transport_stats().lost_envelopes, 0, "{}", f.name());
    }
    drop(halves);
    drop(sender);
    drop((main, other, testbed));
    drop(restarted);
}

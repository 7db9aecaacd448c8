//! Shared test material: one hand-written envelope of every body kind, proptest
//! strategies that generate arbitrary valid envelopes, and a small FOM (`fom.rs`).

#![allow(dead_code)]

pub mod fom;

use std::sync::Arc;

use bytes::Bytes;
use glidepath_core::{
    Advance, AttributeHandle, Body, DimensionHandle, Envelope, Extent, FederateHandle,
    InteractionClassHandle, LogicalTime, LogicalTimeInterval, Notification, ObjectClassHandle,
    ObjectInstanceHandle, OrderType, OwnershipNotice, ParameterHandle, RangeBounds, RegionSet,
    Regulation, TimeStatus, TransportationType,
};
use proptest::prelude::*;

pub fn t(v: f64) -> LogicalTime {
    LogicalTime::new(v).expect("not NaN")
}

pub fn env(sender: u32, seq: u64, body: Body) -> Envelope {
    Envelope {
        sender: FederateHandle(sender),
        seq,
        publish_time_ns: 1_700_000_000_123_456_789,
        body,
    }
}

/// One envelope of every body kind, with edge values (empty and large fields,
/// extreme handles, infinities, negative zero).
pub fn samples() -> Vec<Envelope> {
    let status = TimeStatus {
        regulation: Regulation::Pending,
        constrained: true,
        logical_time: t(12.5),
        last_grant_available: true,
        lookahead: LogicalTimeInterval::new(0.25).unwrap(),
        delivered_up_to: LogicalTime::NEG_INFINITY,
        promise: LogicalTime::INFINITY,
        advance: Advance::Ner {
            time: t(20.0),
            next: t(13.0),
            available: true,
        },
        last_tso_seq: 41,
        seen: Arc::from(vec![
            (FederateHandle(1), 7),
            (FederateHandle(300), u64::MAX),
        ]),
        finished_below: FederateHandle(42),
        resigned: false,
    };
    vec![
        env(
            1,
            1,
            Body::Register {
                instance: ObjectInstanceHandle(9),
                class: ObjectClassHandle(2),
                name: Arc::from("Flight-ÅÄÖ 1"),
            },
        ),
        env(
            1,
            2,
            Body::Register {
                instance: ObjectInstanceHandle(u64::MAX),
                class: ObjectClassHandle(u32::MAX),
                name: Arc::from(""),
            },
        ),
        env(
            2,
            3,
            Body::Update {
                instance: ObjectInstanceHandle(7),
                class: ObjectClassHandle(3),
                values: Arc::from(vec![
                    (AttributeHandle(4), Bytes::from_static(b"hi")),
                    (AttributeHandle(300), Bytes::new()),
                    (AttributeHandle(5), Bytes::from(vec![0xAB; 1000])),
                ]),
                tag: Bytes::from_static(b"tag"),
                order: OrderType::TimeStamp,
                transport: TransportationType::Reliable,
                time: Some(t(10.5)),
                regions: None,
            },
        ),
        env(
            2,
            4,
            Body::Update {
                instance: ObjectInstanceHandle(0),
                class: ObjectClassHandle(0),
                values: Arc::from(Vec::new()),
                tag: Bytes::new(),
                order: OrderType::Receive,
                transport: TransportationType::BestEffort,
                time: None,
                regions: None,
            },
        ),
        env(
            3,
            5,
            Body::Interaction {
                class: InteractionClassHandle(6),
                values: Arc::from(vec![
                    (ParameterHandle(1), Bytes::from_static(&[0, 1, 2])),
                    (ParameterHandle(u32::MAX), Bytes::new()),
                ]),
                tag: Bytes::from_static(b"\x00\xff"),
                order: OrderType::TimeStamp,
                transport: TransportationType::BestEffort,
                time: Some(t(-0.0)),
                // Two regions: a point at the top of a large dimension and an empty
                // range, and a region without dimensions.
                regions: RegionSet::new(vec![
                    Extent::new([
                        (DimensionHandle(0), RangeBounds::new(u64::MAX, u64::MAX)),
                        (DimensionHandle(u32::MAX), RangeBounds::new(3, 3)),
                    ]),
                    Extent::new([]),
                ]),
            },
        ),
        env(
            3,
            6,
            Body::Interaction {
                class: InteractionClassHandle(0),
                values: Arc::from(Vec::new()),
                tag: Bytes::new(),
                order: OrderType::Receive,
                transport: TransportationType::Reliable,
                time: None,
                regions: None,
            },
        ),
        env(
            4,
            7,
            Body::Delete {
                instance: ObjectInstanceHandle(12),
                class: ObjectClassHandle(3),
                tag: Bytes::from_static(b"bye"),
                order: OrderType::TimeStamp,
                time: Some(LogicalTime::INFINITY),
            },
        ),
        env(
            4,
            8,
            Body::Delete {
                instance: ObjectInstanceHandle(1),
                class: ObjectClassHandle(1),
                tag: Bytes::new(),
                order: OrderType::Receive,
                time: None,
            },
        ),
        env(
            5,
            9,
            Body::RequestUpdate {
                instance: Some(ObjectInstanceHandle(12)),
                class: ObjectClassHandle(3),
                attributes: Arc::from(vec![AttributeHandle(4), AttributeHandle(200)]),
                tag: Bytes::from_static(b"please"),
                regions: RegionSet::new(vec![Extent::new([(
                    DimensionHandle(2),
                    RangeBounds::new(5, 9),
                )])]),
            },
        ),
        env(
            5,
            10,
            Body::RequestUpdate {
                instance: None,
                class: ObjectClassHandle(1),
                attributes: Arc::from(Vec::new()),
                tag: Bytes::new(),
                regions: None,
            },
        ),
        env(6, 11, Body::TimeStatus(Arc::new(status.clone()))),
        // An HLAinteger64Time federation's status: every time exact, beyond 2^53.
        env(
            6,
            12,
            Body::TimeStatus(Arc::new(TimeStatus {
                logical_time: LogicalTime::from_i64((1 << 60) + 1),
                lookahead: LogicalTimeInterval::from_i64(3).unwrap(),
                delivered_up_to: LogicalTime::from_i64(i64::MIN),
                promise: LogicalTime::from_i64(i64::MAX),
                advance: Advance::Tar {
                    time: LogicalTime::from_i64((1 << 60) + 2),
                    available: false,
                },
                ..status.clone()
            })),
        ),
        env(
            6,
            12,
            Body::TimeStatus(Arc::new(TimeStatus {
                regulation: Regulation::On,
                constrained: false,
                advance: Advance::Tar {
                    time: t(1e300),
                    available: false,
                },
                seen: Arc::from(Vec::new()),
                resigned: true,
                lookahead: LogicalTimeInterval::ZERO,
                ..status.clone()
            })),
        ),
        env(
            6,
            13,
            Body::TimeStatus(Arc::new(TimeStatus {
                regulation: Regulation::Off,
                advance: Advance::Idle,
                last_grant_available: false,
                ..status
            })),
        ),
        env(
            u32::MAX,
            14,
            Body::Exec(Notification::FederateJoined {
                federate: FederateHandle(7),
                name: "radar".into(),
                federate_type: "Sensor".into(),
            }),
        ),
        env(
            u32::MAX,
            15,
            Body::Exec(Notification::FederateResigned {
                federate: FederateHandle(7),
            }),
        ),
        env(
            u32::MAX,
            15,
            Body::Exec(Notification::FederateLost {
                federate: FederateHandle(9),
            }),
        ),
        env(
            u32::MAX,
            16,
            Body::Exec(Notification::AnnounceSynchronizationPoint {
                label: "ReadyToRun".into(),
                tag: Bytes::from_static(b"go"),
                targets: Arc::from(vec![FederateHandle(1), FederateHandle(2)]),
            }),
        ),
        env(
            u32::MAX,
            17,
            Body::Exec(Notification::FederationSynchronized {
                label: "ReadyToRun".into(),
                failed: vec![FederateHandle(2)],
                targets: Arc::from(vec![FederateHandle(1), FederateHandle(2)]),
            }),
        ),
        env(
            u32::MAX,
            u64::MAX,
            Body::Exec(Notification::FederationSynchronized {
                label: String::new(),
                failed: Vec::new(),
                targets: Arc::from(Vec::new()),
            }),
        ),
        env(
            u32::MAX,
            18,
            Body::Exec(Notification::Ownership {
                notice: OwnershipNotice::ReleaseRequested,
                federate: FederateHandle(3),
                instance: ObjectInstanceHandle(u64::from(u32::MAX) + 9),
                attributes: vec![AttributeHandle(1), AttributeHandle(300)],
                tag: Bytes::from_static(b"mine"),
            }),
        ),
        env(
            u32::MAX,
            19,
            Body::Exec(Notification::Ownership {
                notice: OwnershipNotice::Removed,
                federate: FederateHandle(1),
                instance: ObjectInstanceHandle(1),
                attributes: Vec::new(),
                tag: Bytes::new(),
            }),
        ),
        env(4, 20, Body::Restored { epoch: 3 }),
        env(
            5,
            22,
            Body::UpdateRegions {
                instance: ObjectInstanceHandle(12),
                class: ObjectClassHandle(3),
                attributes: Arc::from(vec![AttributeHandle(4), AttributeHandle(200)]),
                regions: RegionSet::new(vec![Extent::new([(
                    DimensionHandle(2),
                    RangeBounds::new(5, 9),
                )])]),
                owned: true,
                route: RegionSet::new(vec![
                    Extent::new([(DimensionHandle(2), RangeBounds::new(5, 9))]),
                    Extent::new([(DimensionHandle(2), RangeBounds::new(1, 2))]),
                ]),
            },
        ),
        env(
            5,
            23,
            Body::UpdateRegions {
                instance: ObjectInstanceHandle(12),
                class: ObjectClassHandle(3),
                attributes: Arc::from(vec![AttributeHandle(4)]),
                regions: None,
                owned: false,
                route: None,
            },
        ),
        env(
            6,
            24,
            Body::ScopeAdvisory {
                on: true,
                announce: true,
            },
        ),
        env(7, 25, Body::ScopeAnswered { first: 19 }),
        env(
            u32::MAX,
            21,
            Body::Exec(Notification::Save(
                glidepath_core::SaveNotice::InitiateRestore {
                    label: "t50".into(),
                    epoch: 3,
                    federate: FederateHandle(2),
                    saved_as: FederateHandle(4),
                    mapping: vec![(FederateHandle(4), FederateHandle(2))],
                    state: Bytes::from_static(b"GPSAVE\x00\x01state"),
                },
            )),
        ),
        env(
            u32::MAX,
            22,
            Body::Exec(Notification::Save(
                glidepath_core::SaveNotice::InitiateSave {
                    label: "t50".into(),
                    time: Some(glidepath_core::SavedTime::Integer(50)),
                },
            )),
        ),
    ]
}

// --- strategies -------------------------------------------------------------------

/// `cases` cases, with failing inputs saved beside the test file
/// (`tests/<name>.proptest-regressions`) so that they are replayed first next time.
pub fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    }
}

pub fn arb_time() -> impl Strategy<Value = LogicalTime> {
    prop_oneof![
        4 => any::<f64>().prop_filter_map("NaN", LogicalTime::new),
        1 => Just(LogicalTime::INFINITY),
        1 => Just(LogicalTime::NEG_INFINITY),
        1 => Just(t(-0.0)),
        2 => (0u32..1000).prop_map(LogicalTime::from),
        // Whole floats around the compact form's limit (2^53) and its varint size.
        2 => (-3i64..=3).prop_flat_map(|d| prop_oneof![
            Just(t((1i64 << 53) as f64 + (d * 2) as f64)),
            Just(t(-((1i64 << 53) as f64) - (d * 2) as f64)),
            Just(t(((1i64 << 55) + d * 16) as f64)),
        ]),
        // Integers around the eight-byte varint limit (zigzag 2^56).
        1 => (-4i64..=4).prop_map(|d| LogicalTime::from_i64((1i64 << 55) + d)),
        // HLAinteger64Time: any i64, including the ends.
        3 => any::<i64>().prop_map(LogicalTime::from_i64),
    ]
}

pub fn arb_interval() -> impl Strategy<Value = LogicalTimeInterval> {
    prop_oneof![
        any::<f64>().prop_filter_map("not a valid interval", |v| LogicalTimeInterval::new(
            v.abs()
        )),
        Just(LogicalTimeInterval::ZERO),
        (0i64..=i64::MAX).prop_filter_map("not negative", LogicalTimeInterval::from_i64),
    ]
}

fn arb_bytes() -> impl Strategy<Value = Bytes> {
    proptest::collection::vec(any::<u8>(), 0..40).prop_map(Bytes::from)
}

fn arb_u32() -> impl Strategy<Value = u32> {
    prop_oneof![0u32..200, any::<u32>()]
}

fn arb_u64() -> impl Strategy<Value = u64> {
    prop_oneof![0u64..200, any::<u64>()]
}

fn arb_order() -> impl Strategy<Value = OrderType> {
    prop_oneof![Just(OrderType::Receive), Just(OrderType::TimeStamp)]
}

fn arb_transport() -> impl Strategy<Value = TransportationType> {
    prop_oneof![
        Just(TransportationType::Reliable),
        Just(TransportationType::BestEffort)
    ]
}

fn arb_federates() -> impl Strategy<Value = Vec<FederateHandle>> {
    proptest::collection::vec(arb_u32().prop_map(FederateHandle), 0..6)
}

fn arb_values<H: std::fmt::Debug>(h: fn(u32) -> H) -> impl Strategy<Value = Arc<[(H, Bytes)]>> {
    proptest::collection::vec((arb_u32().prop_map(h), arb_bytes()), 0..6).prop_map(Arc::from)
}

fn arb_advance() -> impl Strategy<Value = Advance> {
    prop_oneof![
        Just(Advance::Idle),
        (arb_time(), any::<bool>()).prop_map(|(time, available)| Advance::Tar { time, available }),
        (arb_time(), arb_time(), any::<bool>()).prop_map(|(time, next, available)| Advance::Ner {
            time,
            next,
            available
        }),
    ]
}

fn arb_time_status() -> impl Strategy<Value = TimeStatus> {
    (
        prop_oneof![
            Just(Regulation::Off),
            Just(Regulation::Pending),
            Just(Regulation::On)
        ],
        any::<bool>(),
        arb_time(),
        any::<bool>(),
        arb_interval(),
        arb_time(),
        arb_time(),
        arb_advance(),
        arb_u64(),
        proptest::collection::vec((arb_u32().prop_map(FederateHandle), arb_u64()), 0..6),
        arb_u32().prop_map(FederateHandle),
        any::<bool>(),
    )
        .prop_map(
            |(
                regulation,
                constrained,
                logical_time,
                last_grant_available,
                lookahead,
                delivered_up_to,
                promise,
                advance,
                last_tso_seq,
                seen,
                finished_below,
                resigned,
            )| {
                TimeStatus {
                    regulation,
                    constrained,
                    logical_time,
                    last_grant_available,
                    lookahead,
                    delivered_up_to,
                    promise,
                    advance,
                    last_tso_seq,
                    seen: Arc::from(seen),
                    finished_below,
                    resigned,
                }
            },
        )
}

fn arb_notification() -> impl Strategy<Value = Notification> {
    prop_oneof![
        (arb_u32(), ".{0,12}", ".{0,12}").prop_map(|(f, name, federate_type)| {
            Notification::FederateJoined {
                federate: FederateHandle(f),
                name,
                federate_type,
            }
        }),
        arb_u32().prop_map(|f| Notification::FederateResigned {
            federate: FederateHandle(f)
        }),
        arb_u32().prop_map(|f| Notification::FederateLost {
            federate: FederateHandle(f)
        }),
        (".{0,12}", arb_bytes(), arb_federates()).prop_map(|(label, tag, targets)| {
            Notification::AnnounceSynchronizationPoint {
                label,
                tag,
                targets: Arc::from(targets),
            }
        }),
        (".{0,12}", arb_federates(), arb_federates()).prop_map(|(label, failed, targets)| {
            Notification::FederationSynchronized {
                label,
                failed,
                targets: Arc::from(targets),
            }
        }),
        (
            0..6usize,
            arb_u32(),
            arb_u64(),
            prop::collection::vec(arb_u32(), 0..6),
            arb_bytes()
        )
            .prop_map(|(n, f, i, attributes, tag)| Notification::Ownership {
                notice: [
                    OwnershipNotice::Offered,
                    OwnershipNotice::ConfirmDivestiture,
                    OwnershipNotice::ReleaseRequested,
                    OwnershipNotice::Acquired,
                    OwnershipNotice::Unavailable,
                    OwnershipNotice::Removed,
                ][n],
                federate: FederateHandle(f),
                instance: ObjectInstanceHandle(i),
                attributes: attributes.into_iter().map(AttributeHandle).collect(),
                tag,
            }),
    ]
}

/// A region set (`None`: the default region): up to three regions of up to three
/// dimensions each, every range `lower <= upper`.
fn arb_regions() -> impl Strategy<Value = Option<RegionSet>> {
    let range = (arb_u64(), arb_u64()).prop_map(|(a, b)| RangeBounds::new(a.min(b), a.max(b)));
    let extent = proptest::collection::btree_map(arb_u32(), range, 0..3)
        .prop_map(|m| Extent::new(m.into_iter().map(|(d, r)| (DimensionHandle(d), r))));
    proptest::collection::vec(extent, 0..3).prop_map(RegionSet::new)
}

pub fn arb_body() -> impl Strategy<Value = Body> {
    prop_oneof![
        (arb_u64(), arb_u32(), ".{0,16}").prop_map(|(i, c, name)| Body::Register {
            instance: ObjectInstanceHandle(i),
            class: ObjectClassHandle(c),
            name: Arc::from(name)
        }),
        (
            arb_u64(),
            arb_u32(),
            arb_values(AttributeHandle),
            arb_bytes(),
            arb_order(),
            arb_transport(),
            proptest::option::of(arb_time())
        )
            .prop_map(|(i, c, values, tag, order, transport, time)| Body::Update {
                instance: ObjectInstanceHandle(i),
                class: ObjectClassHandle(c),
                values,
                tag,
                order,
                transport,
                time,
                regions: None,
            }),
        (
            arb_u32(),
            arb_values(ParameterHandle),
            arb_bytes(),
            arb_order(),
            arb_transport(),
            proptest::option::of(arb_time())
        )
            .prop_map(
                |(c, values, tag, order, transport, time)| Body::Interaction {
                    class: InteractionClassHandle(c),
                    values,
                    tag,
                    order,
                    transport,
                    time,
                    regions: None,
                }
            ),
        (
            arb_u64(),
            arb_u32(),
            arb_bytes(),
            arb_order(),
            proptest::option::of(arb_time())
        )
            .prop_map(|(i, c, tag, order, time)| {
                Body::Delete {
                    instance: ObjectInstanceHandle(i),
                    class: ObjectClassHandle(c),
                    tag,
                    order,
                    time,
                }
            }),
        (
            proptest::option::of(arb_u64()),
            arb_u32(),
            proptest::collection::vec(arb_u32(), 0..6),
            arb_bytes(),
            arb_regions(),
        )
            .prop_map(|(i, c, a, tag, regions)| {
                Body::RequestUpdate {
                    instance: i.map(ObjectInstanceHandle),
                    class: ObjectClassHandle(c),
                    attributes: a.into_iter().map(AttributeHandle).collect(),
                    tag,
                    regions,
                }
            }),
        (
            arb_u64(),
            arb_u32(),
            proptest::collection::vec(arb_u32(), 0..6),
            arb_regions(),
            any::<bool>(),
            arb_regions(),
        )
            .prop_map(|(i, c, a, regions, owned, route)| Body::UpdateRegions {
                instance: ObjectInstanceHandle(i),
                class: ObjectClassHandle(c),
                attributes: a.into_iter().map(AttributeHandle).collect(),
                // Attributes no longer owned have no update regions.
                regions: regions.filter(|_| owned),
                owned,
                route,
            }),
        (any::<bool>(), any::<bool>())
            .prop_map(|(on, announce)| Body::ScopeAdvisory { on, announce }),
        arb_u64().prop_map(|first| Body::ScopeAnswered { first }),
        arb_time_status().prop_map(|s| Body::TimeStatus(Arc::new(s))),
        arb_notification().prop_map(Body::Exec),
    ]
}

pub fn arb_envelope() -> impl Strategy<Value = Envelope> {
    (arb_u32(), arb_u64(), arb_u64(), arb_body()).prop_map(
        |(sender, seq, publish_time_ns, body)| Envelope {
            sender: FederateHandle(sender),
            seq,
            publish_time_ns,
            body,
        },
    )
}

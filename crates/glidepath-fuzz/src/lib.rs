//! Fuzz harnesses for everything glidepath reads from a peer or a file, on a stable
//! compiler (coverage-guided fuzzing needs a nightly one these machines cannot
//! install). Each [`Target`] is a decoder and the property it must keep on any input:
//! return `Ok` or `Err`, never panic, and what it accepts must survive a round trip.
//! Inputs are valid messages (the corpus under `corpus/<target>/`, kept in the
//! repository, and samples built here) mutated by [`mutate`], seeded so that a run
//! repeats exactly; a panicking input is saved and becomes a regression test.
//!
//! `cargo run -p glidepath-fuzz --release -- all --cases 1000000` is the long run;
//! `tests/fuzz.rs` runs a bounded slice of every target and replays the regressions.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use glidepath_codec::{BundleConfig, Bundler, ChainConfig, Compression, EncoderChain};
use glidepath_core::{
    AttributeHandle, Body, Envelope, ExecRequest, FederateHandle, FederationId,
    InteractionClassHandle, LogicalTime, ObjectClassHandle, ObjectInstanceHandle, OrderType,
    ParameterHandle, TransportationType,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub mod mutate;

/// What is fuzzed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    /// The binary envelope (`glidepath_wire::decode_envelope`).
    Envelope,
    /// A bundle of envelopes (`glidepath_codec::unbundle`).
    Bundle,
    /// A frame of the encoder chain: zstd-compressed, and lz4 with a federation key.
    ChainFrame,
    /// The executive's JSON requests (`glidepath_wire::decode_request`).
    ExecRequest,
    /// A FOM module (OMT XML), parsed and merged.
    FomXml,
    /// An ATM layout (TOML).
    LayoutToml,
    /// A bus message in the formation-flying testbed's XML (`glidepath_bus`).
    BusXml,
    /// A bus message in the compact binary form.
    BusBinary,
    /// A NATS sender's cell account (`glidepath_transport::nats::cells::Account`).
    CellAccount,
    /// A bus frame as it travels (service level, sender, sequence, message).
    BusFrame,
    /// An attribute or parameter value decoded as its FOM data type
    /// (`Fom::decode_value`): the first byte picks one of [`TYPED_VALUE_TYPES`].
    TypedValue,
    /// What a station or a node sends the target generator: the first byte picks a
    /// command, an acknowledgement, an assignment (`glidepath_tg::wire`) or an
    /// operator's control line (`Control::parse`).
    TgMessage,
}

/// The data types the typed-value target decodes as: the air-traffic FOM's record
/// and enumeration, and the MIM's strings, lists and numbers.
pub const TYPED_VALUE_TYPES: [&str; 8] = [
    "TrackMetadata",
    "FlightRules",
    "HLAunicodeString",
    "HLAASCIIstring",
    "HLAmoduleDesignatorList",
    "HLAhandleList",
    "HLAboolean",
    "HLAfloat32LE",
];

/// The air-traffic FOM, merged once.
fn air_traffic_fom() -> &'static glidepath_fom::Fom {
    static FOM: std::sync::OnceLock<glidepath_fom::Fom> = std::sync::OnceLock::new();
    FOM.get_or_init(|| {
        let xml = include_str!("../../../foms/air-traffic.xml");
        let module = glidepath_fom::FomModule::parse_str("air-traffic.xml", xml)
            .expect("the repository's FOM parses");
        glidepath_fom::Fom::merge(&[module]).expect("the repository's FOM merges")
    })
}

impl Target {
    /// Every target.
    pub const ALL: [Target; 12] = [
        Target::Envelope,
        Target::Bundle,
        Target::ChainFrame,
        Target::ExecRequest,
        Target::FomXml,
        Target::LayoutToml,
        Target::BusXml,
        Target::BusBinary,
        Target::BusFrame,
        Target::TypedValue,
        Target::TgMessage,
        Target::CellAccount,
    ];

    /// Its name on the command line and under `corpus/`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Envelope => "envelope",
            Target::Bundle => "bundle",
            Target::ChainFrame => "chain-frame",
            Target::ExecRequest => "exec-request",
            Target::FomXml => "fom-xml",
            Target::LayoutToml => "layout-toml",
            Target::BusXml => "bus-xml",
            Target::BusBinary => "bus-binary",
            Target::BusFrame => "bus-frame",
            Target::TypedValue => "typed-value",
            Target::TgMessage => "tg-message",
            Target::CellAccount => "cell-account",
        }
    }

    /// The target called `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Runs the harness on one input; panics when a property breaks.
    pub fn run(self, input: &[u8]) {
        match self {
            Target::Envelope => envelope(input),
            Target::Bundle => {
                if let Ok(parts) = glidepath_codec::unbundle(&Bytes::copy_from_slice(input)) {
                    let total: usize = parts.iter().map(Bytes::len).sum();
                    assert!(total <= input.len(), "a bundle yielded more than it held");
                    for part in parts {
                        envelope(&part);
                    }
                }
            }
            Target::ChainFrame => {
                for chain in chains() {
                    if let Ok(payload) = chain.decode(input) {
                        assert!(payload.len() <= chain.config().message_bytes_max);
                        envelope(&payload);
                    }
                }
            }
            Target::ExecRequest => {
                if let Ok(request) = glidepath_wire::decode_request(input) {
                    let again = glidepath_wire::encode_request(&request);
                    let decoded = glidepath_wire::decode_request(&again)
                        .unwrap_or_else(|e| panic!("re-encoded request fails to decode: {e}"));
                    assert_eq!(
                        glidepath_wire::encode_request(&decoded),
                        again,
                        "a request changed on a round trip"
                    );
                }
            }
            Target::FomXml => {
                if let Ok(text) = std::str::from_utf8(input) {
                    if let Ok(module) = glidepath_fom::FomModule::parse_str("fuzz.xml", text) {
                        let _ = glidepath_fom::Fom::merge(&[module]);
                    }
                }
            }
            Target::LayoutToml => {
                if let Ok(text) = std::str::from_utf8(input) {
                    let _ = glidepath_atm::layout::parse_layout(text, "fuzz.toml");
                }
            }
            Target::BusXml => {
                if let Ok(m) = glidepath_bus::Message::from_xml(input) {
                    // What was read is written back and read back to the same message.
                    if let Ok(xml) = m.to_xml() {
                        let again = glidepath_bus::Message::from_xml(xml.as_bytes())
                            .unwrap_or_else(|e| panic!("written XML fails to parse: {e}"));
                        assert_eq!(
                            again.to_xml().ok(),
                            Some(xml),
                            "XML changed on a round trip"
                        );
                    }
                }
            }
            Target::BusBinary => {
                if let Ok(m) = glidepath_bus::Message::from_binary(input) {
                    let bytes = m.to_binary();
                    let again = glidepath_bus::Message::from_binary(&bytes)
                        .unwrap_or_else(|e| panic!("written binary fails to parse: {e}"));
                    assert_eq!(again.to_binary(), bytes, "binary changed on a round trip");
                }
            }
            Target::BusFrame => {
                let _ = glidepath_bus::frame::decode(&Bytes::copy_from_slice(input));
            }
            Target::TypedValue => typed_value(input),
            Target::TgMessage => tg_message(input),
            Target::CellAccount => {
                use glidepath_transport::nats::cells::Account;
                if let Ok(account) = Account::decode(input) {
                    assert!(
                        account.from <= account.upto,
                        "a range that ends before it starts"
                    );
                    let again = Account::decode(&account.encode())
                        .unwrap_or_else(|e| panic!("re-encoded account fails to decode: {e}"));
                    assert_eq!(again, account, "an account changed on a round trip");
                }
            }
        }
    }

    /// The built-in valid inputs (the corpus files come on top).
    pub fn samples(self) -> Vec<Vec<u8>> {
        match self {
            Target::Envelope => sample_envelopes()
                .iter()
                .map(|e| glidepath_wire::encode_envelope(e).to_vec())
                .collect(),
            Target::Bundle => {
                // Small bundles (about one envelope each) and one holding them all.
                let mut out = Vec::new();
                for bytes_max in [200, 4096] {
                    let mut bundler = Bundler::new(BundleConfig {
                        bundle_bytes_max: bytes_max,
                        bundle_time_ns_max: u64::MAX,
                    });
                    for e in sample_envelopes() {
                        out.extend(bundler.push(&glidepath_wire::encode_envelope(&e), 0));
                    }
                    out.extend(bundler.flush());
                }
                out.into_iter().map(|b| b.to_vec()).collect()
            }
            Target::ChainFrame => chains()
                .iter()
                .flat_map(|chain| {
                    sample_envelopes().into_iter().map(move |e| {
                        chain
                            .encode(&glidepath_wire::encode_envelope(&e))
                            .expect("a sample encodes")
                            .to_vec()
                    })
                })
                .collect(),
            Target::ExecRequest => sample_requests()
                .iter()
                .map(glidepath_wire::encode_request)
                .collect(),
            Target::BusXml => bus_samples()
                .iter()
                .filter_map(|m| m.to_xml().ok())
                .map(String::into_bytes)
                .collect(),
            Target::BusBinary => bus_samples().iter().map(|m| m.to_binary()).collect(),
            Target::BusFrame => {
                use glidepath_bus::frame::{DataFrame, MembershipFrame};
                use glidepath_bus::{Encoding, MemberId, MembershipKind, ServiceLevel, Subject};
                let subject = Subject::new("GMSEC.MMS.SAT1.MSG.TLM.GPS.POSITION").expect("valid");
                let mut frames: Vec<Vec<u8>> = bus_samples()
                    .iter()
                    .zip([
                        ServiceLevel::Agreed,
                        ServiceLevel::Fifo,
                        ServiceLevel::Unreliable,
                    ])
                    .map(|(m, level)| {
                        DataFrame {
                            level,
                            encoding: Encoding::Binary,
                            sender: MemberId(42),
                            seq: 7,
                            publish_time_ns: 1_700_000_000_000_000_000,
                            subject: subject.clone(),
                            payload: Bytes::from(m.to_binary()),
                        }
                        .encode()
                    })
                    .collect();
                frames.push(
                    MembershipFrame {
                        kind: MembershipKind::Joined,
                        member: MemberId(42),
                        name: "flight-executive".into(),
                    }
                    .encode(),
                );
                frames
            }
            Target::TypedValue => {
                use glidepath_fom::Value;
                let text = |s: &str| Value::Text(s.into());
                let values = [
                    Value::Record(vec![
                        ("src".into(), text("tg")),
                        ("ver".into(), Value::Int(3)),
                        ("run".into(), text("run-7")),
                        ("tpub".into(), Value::Int(1_700_000_000_000_000)),
                    ]),
                    text("VFR"),
                    text("Zürich ✈"),
                    text("KLM123"),
                    Value::List(vec![text("a.xml"), text("bb.xml"), text("")]),
                    Value::List(vec![Value::Bytes(vec![0, 0, 0, 9]), Value::Bytes(vec![1])]),
                    Value::Bool(true),
                    Value::Float(-1.25),
                ];
                let fom = air_traffic_fom();
                TYPED_VALUE_TYPES
                    .iter()
                    .zip(values)
                    .enumerate()
                    .map(|(i, (t, v))| {
                        let mut input = vec![i as u8];
                        input.extend(fom.encode_value(t, &v).expect("a sample encodes"));
                        input
                    })
                    .collect()
            }
            Target::TgMessage => tg_samples(),
            Target::CellAccount => cell_account_samples(),
            Target::FomXml | Target::LayoutToml => Vec::new(),
        }
    }
}

/// The envelope property: decoding never panics, and what is accepted is the
/// canonical encoding of what was decoded.
fn envelope(input: &[u8]) {
    if let Ok(e) = glidepath_wire::decode_envelope(input) {
        assert_eq!(
            &glidepath_wire::encode_envelope(&e)[..],
            input,
            "accepted a non-canonical encoding"
        );
    }
}

/// The typed-value property: decoding never panics, and what decodes encodes again
/// to bytes that decode to the same value (floats of 32 bits aside, the same bytes).
fn typed_value(input: &[u8]) {
    let Some((&pick, data)) = input.split_first() else {
        return;
    };
    let data_type = TYPED_VALUE_TYPES[pick as usize % TYPED_VALUE_TYPES.len()];
    let fom = air_traffic_fom();
    if let Ok(value) = fom.decode_value(data_type, data) {
        let again = fom
            .encode_value(data_type, &value)
            .unwrap_or_else(|e| panic!("a decoded {data_type} fails to encode: {e}"));
        if data_type != "HLAfloat32LE" {
            assert_eq!(again, data, "{data_type} changed on a round trip");
        }
        let value_again = fom
            .decode_value(data_type, &again)
            .unwrap_or_else(|e| panic!("a re-encoded {data_type} fails to decode: {e}"));
        assert_eq!(
            fom.encode_value(data_type, &value_again).ok(),
            Some(again),
            "{data_type} is not stable on a second round trip"
        );
    }
}

/// The chains a federation may run: compression alone, and compression with a key.
fn chains() -> Vec<EncoderChain> {
    vec![
        EncoderChain::new(ChainConfig {
            compression: Compression::Zstd { level: 3 },
            compress_bytes_min: 0,
            ..ChainConfig::default()
        })
        .expect("chain"),
        EncoderChain::new(ChainConfig {
            compression: Compression::Lz4,
            compress_bytes_min: 0,
            key: Some(glidepath_codec::FederationKey::from_bytes([7; 32])),
            ..ChainConfig::default()
        })
        .expect("chain"),
    ]
}

fn sample_envelopes() -> Vec<Envelope> {
    let t = |v: f64| LogicalTime::new(v).expect("not NaN");
    let env = |seq: u64, body: Body| Envelope {
        sender: FederateHandle(3),
        seq,
        publish_time_ns: 1_700_000_000_000_000_000,
        body,
    };
    vec![
        env(
            1,
            Body::Register {
                instance: ObjectInstanceHandle(9),
                class: ObjectClassHandle(2),
                name: Arc::from("KLM123"),
            },
        ),
        env(
            2,
            Body::Update {
                instance: ObjectInstanceHandle(9),
                class: ObjectClassHandle(2),
                values: Arc::from(vec![
                    (AttributeHandle(1), Bytes::from_static(b"52.3")),
                    (AttributeHandle(2), Bytes::from(vec![0xAB; 300])),
                ]),
                tag: Bytes::from_static(b"t"),
                order: OrderType::TimeStamp,
                transport: TransportationType::Reliable,
                time: Some(t(10.5)),
                regions: glidepath_core::RegionSet::new(vec![glidepath_core::Extent::new([
                    (
                        glidepath_core::DimensionHandle(1),
                        glidepath_core::RangeBounds::new(10, 20),
                    ),
                    (
                        glidepath_core::DimensionHandle(2),
                        glidepath_core::RangeBounds::new(0, 1 << 40),
                    ),
                ])]),
            },
        ),
        env(
            3,
            Body::Interaction {
                class: InteractionClassHandle(6),
                values: Arc::from(vec![(ParameterHandle(1), Bytes::from_static(&[0, 1, 2]))]),
                tag: Bytes::new(),
                order: OrderType::Receive,
                transport: TransportationType::BestEffort,
                time: None,
                regions: None,
            },
        ),
        env(
            4,
            Body::Delete {
                instance: ObjectInstanceHandle(9),
                class: ObjectClassHandle(2),
                tag: Bytes::from_static(b"bye"),
                order: OrderType::TimeStamp,
                time: Some(LogicalTime::INFINITY),
            },
        ),
        env(
            5,
            Body::UpdateRegions {
                instance: ObjectInstanceHandle(9),
                class: ObjectClassHandle(2),
                attributes: Arc::from(vec![AttributeHandle(1)]),
                regions: glidepath_core::RegionSet::new(vec![glidepath_core::Extent::new([(
                    glidepath_core::DimensionHandle(1),
                    glidepath_core::RangeBounds::new(30, 31),
                )])]),
                owned: true,
                route: glidepath_core::RegionSet::new(vec![
                    glidepath_core::Extent::new([(
                        glidepath_core::DimensionHandle(1),
                        glidepath_core::RangeBounds::new(30, 31),
                    )]),
                    glidepath_core::Extent::new([(
                        glidepath_core::DimensionHandle(1),
                        glidepath_core::RangeBounds::new(10, 11),
                    )]),
                ]),
            },
        ),
        env(
            6,
            Body::ScopeAdvisory {
                on: true,
                announce: true,
            },
        ),
        env(7, Body::ScopeAnswered { first: 5 }),
    ]
}

fn sample_requests() -> Vec<ExecRequest> {
    let f = FederationId(3);
    let me = FederateHandle(2);
    vec![
        ExecRequest::Destroy { name: "ATC".into() },
        ExecRequest::Lookup {
            name: "ATC \"quoted\" ✈".into(),
        },
        ExecRequest::Join {
            federation: f,
            federate_name: Some("radar".into()),
            federate_type: "Sensor".into(),
        },
        ExecRequest::ListFederates { federation: f },
        ExecRequest::RegisterInstance {
            federation: f,
            federate: me,
            class: ObjectClassHandle(1),
            name: Some("KLM123".into()),
            attributes: vec![AttributeHandle(0), AttributeHandle(4)],
        },
        ExecRequest::RegisterSyncPoint {
            federation: f,
            federate: me,
            label: "Ready".into(),
            tag: Bytes::from_static(b"\x00go\xff"),
            set: Some(vec![FederateHandle(1)]),
        },
        ExecRequest::EnableRegulation {
            federation: f,
            federate: me,
        },
    ]
}

fn bus_samples() -> Vec<glidepath_bus::Message> {
    use glidepath_bus::Message;
    vec![
        Message::new()
            .with("NUM-OF-PACKETS", 3i32)
            .with("TIME", 1.5f64)
            .with("NAME", "GPS-1"),
        Message::new().with("FLAG", true).with("BIG", 1i64 << 40),
        Message::new(),
    ]
}

/// The corpus directory of a target in this crate.
pub fn corpus_dir(target: Target) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("corpus")
        .join(target.name())
}

/// Saved crashing inputs of a target, replayed by the tests.
pub fn regressions_dir(target: Target) -> PathBuf {
    corpus_dir(target).join("regressions")
}

/// Files directly in `dir` (not in subdirectories), sorted by name.
pub fn files_in(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(PathBuf, Vec<u8>)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter_map(|p| std::fs::read(&p).ok().map(|b| (p, b)))
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

/// The seeds of a run: the corpus files, the built-in samples and the regressions.
pub fn seeds(target: Target) -> Vec<Vec<u8>> {
    let mut seeds: Vec<Vec<u8>> = files_in(&corpus_dir(target))
        .into_iter()
        .map(|(_, b)| b)
        .collect();
    seeds.extend(target.samples());
    seeds.extend(
        files_in(&regressions_dir(target))
            .into_iter()
            .map(|(_, b)| b),
    );
    if seeds.is_empty() {
        seeds.push(Vec::new());
    }
    seeds
}

/// A panicking input.
#[derive(Debug, Clone)]
pub struct Crash {
    /// The input.
    pub input: Vec<u8>,
    /// What the panic said.
    pub message: String,
}

/// What a run did.
#[derive(Debug, Clone)]
pub struct Report {
    /// The target.
    pub target: Target,
    /// Inputs tried (seeds included).
    pub cases: u64,
    /// Inputs that panicked (the first few of each message).
    pub crashes: Vec<Crash>,
}

/// Runs `input` through `target`, catching a panic.
pub fn check(target: Target, input: &[u8]) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| target.run(input))).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

/// Fuzzes `target` with `cases` inputs from `seed`: every seed once, then mutations.
/// Panics are caught (and their default report silenced) and returned.
pub fn fuzz(target: Target, cases: u64, seed: u64) -> Report {
    let seeds = seeds(target);
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ (target as u64).wrapping_mul(0x9E37_79B9));
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut crashes: Vec<Crash> = Vec::new();
    let record = |input: &[u8], message: String, crashes: &mut Vec<Crash>| {
        if crashes.iter().filter(|c| c.message == message).count() < 3 {
            crashes.push(Crash {
                input: input.to_vec(),
                message,
            });
        }
    };
    let mut done = 0u64;
    for s in &seeds {
        if done >= cases {
            break;
        }
        if let Err(m) = check(target, s) {
            record(s, m, &mut crashes);
        }
        done += 1;
    }
    while done < cases {
        let base = &seeds[rng.gen_range(0..seeds.len())];
        let other = &seeds[rng.gen_range(0..seeds.len())];
        let input = mutate::mutate(&mut rng, base, other);
        if let Err(m) = check(target, &input) {
            record(&input, m, &mut crashes);
        }
        done += 1;
    }
    std::panic::set_hook(previous);
    Report {
        target,
        cases: done,
        crashes,
    }
}

/// The tg-message property: nothing panics, and a command, an acknowledgement or an
/// assignment that decodes encodes to the same bytes (the encoding is canonical).
fn tg_message(input: &[u8]) {
    use glidepath_tg::wire;
    let Some((&kind, body)) = input.split_first() else {
        return;
    };
    match kind % 4 {
        0 => {
            if let Ok(c) = wire::decode_command(body) {
                assert_eq!(
                    wire::encode_command(&c),
                    body,
                    "a command changed on a round trip"
                );
            }
        }
        1 => {
            if let Ok(a) = wire::decode_ack(body) {
                assert_eq!(
                    wire::encode_ack(&a),
                    body,
                    "an acknowledgement changed on a round trip"
                );
            }
        }
        2 => {
            if let Ok((wind, aircraft)) = wire::decode_assignment(body) {
                let again = wire::encode_assignment(wind, &aircraft);
                let (_, decoded) = wire::decode_assignment(&again)
                    .unwrap_or_else(|e| panic!("a re-encoded assignment fails to decode: {e}"));
                assert_eq!(decoded.len(), aircraft.len(), "an assignment lost aircraft");
            }
        }
        _ => {
            if let Ok(line) = std::str::from_utf8(body) {
                let _ = glidepath_tg::runner::Control::parse(line);
            }
        }
    }
}

/// Valid target-generator messages, each behind the byte that picks its decoder.
fn tg_samples() -> Vec<Vec<u8>> {
    use glidepath_tg::command::{Command, CommandAck, Instruction, Refusal};
    use glidepath_tg::wire;
    let tagged = |kind: u8, body: Vec<u8>| [vec![kind], body].concat();
    let mut out = Vec::new();
    for (id, instruction) in [
        Instruction::Heading { deg: 270.0 },
        Instruction::Altitude { ft: 35_000.0 },
        Instruction::Speed { kt: 250.0 },
        Instruction::DirectTo {
            waypoint: "KSEA".into(),
        },
        Instruction::Resume,
    ]
    .into_iter()
    .enumerate()
    {
        let c = Command {
            id: id as u64 + 1,
            callsign: "UAL101".into(),
            instruction,
        };
        out.push(tagged(0, wire::encode_command(&c)));
    }
    for outcome in [
        Ok(()),
        Err(Refusal::UnknownAircraft("NOPE1".into())),
        Err(Refusal::OutOfEnvelope {
            type_code: "B738".into(),
            reason: "above Mmo".into(),
        }),
        Err(Refusal::UnknownWaypoint("KXYZ".into())),
        Err(Refusal::InvalidValue("NaN".into())),
    ] {
        let a = CommandAck {
            id: 7,
            callsign: "UAL101".into(),
            frame: 42,
            outcome,
        };
        out.push(tagged(1, wire::encode_ack(&a)));
    }
    let table = glidepath_tg::perf::PerformanceTable::builtin();
    let demo = glidepath_tg::scenario::load("demo", table).expect("the built-in demo");
    out.push(tagged(
        2,
        wire::encode_assignment(demo.wind, &demo.aircraft[..2]),
    ));
    for line in [
        "pause",
        "rate 30",
        "speed 2.5",
        "load us-400",
        "UAL101 heading 270",
        "DAL404 direct KSEA",
    ] {
        out.push(tagged(3, line.as_bytes().to_vec()));
    }
    out
}

fn cell_account_samples() -> Vec<Vec<u8>> {
    use glidepath_core::{FederateHandle, InteractionClassHandle, ObjectClassHandle, Topic};
    use glidepath_transport::nats::cells::Account;
    let o = Topic::ObjectClass(ObjectClassHandle(4));
    let i = Topic::InteractionClass(InteractionClassHandle(300));
    [
        (1, 0, 1, vec![((o, 0), 1)]),
        (
            0xbeef,
            1_000,
            1_512,
            vec![((o, 7), 300), ((o, 63), 200), ((i, 9), 12)],
        ),
        (7, u64::MAX - 3, u64::MAX, vec![((i, 4_000_000), 3)]),
    ]
    .into_iter()
    .map(|(grid, from, upto, counts)| {
        Account {
            grid,
            sender: FederateHandle(3),
            from,
            upto,
            counts: counts.into_iter().collect(),
        }
        .encode()
        .to_vec()
    })
    .collect()
}

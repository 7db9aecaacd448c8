//! Property tests: every message round-trips in both encodings, the decoders never
//! panic on any bytes (or on a valid message with bytes changed), and pattern
//! matching agrees with a direct reading of the wildcard rules.

use glidepath_bus::message::{binary, json, xml};
use glidepath_bus::repair;
use glidepath_bus::{Encoding, Message, Pattern, Subject, Value};
use proptest::prelude::*;

/// Text XML 1.0 can carry: any character but the control characters it forbids.
fn xml_text() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => proptest::char::range(' ', '~'),
            1 => prop::sample::select(vec!['\t', '\n', '\r', '&', '<', '>', '"', '\'', 'é', '☃', '\u{10348}', '\u{FFFD}']),
            1 => any::<char>().prop_filter("XML 1.0 character", |c| {
                matches!(*c, '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..)
            }),
        ],
        0..24,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

fn value() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i32>().prop_map(Value::I32),
        any::<i64>().prop_map(Value::I64),
        any::<u32>().prop_map(|b| Value::F32(f32::from_bits(b))),
        any::<u64>().prop_map(|b| Value::F64(f64::from_bits(b))),
        prop_oneof![
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(-0.0),
            Just(5e-324)
        ]
        .prop_map(Value::F64),
        any::<bool>().prop_map(Value::Bool),
        xml_text().prop_map(Value::Str),
        prop::collection::vec(any::<u8>(), 0..48).prop_map(|b| Value::Bin(b.into())),
    ]
}

fn message() -> impl Strategy<Value = Message> {
    prop::collection::vec(
        (
            xml_text().prop_filter("non-empty key", |k| !k.is_empty()),
            value(),
        ),
        0..12,
    )
    .prop_map(|entries| {
        let mut m = Message::new();
        for (k, v) in entries {
            // A repeated key replaces the earlier value: keys stay unique.
            m.set(k, v);
        }
        m
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn every_message_round_trips_in_both_encodings(m in message()) {
        for encoding in [Encoding::Xml, Encoding::Binary] {
            let mut bytes = Vec::new();
            m.encode(encoding, &mut bytes).unwrap();
            let back = Message::decode(encoding, &bytes).unwrap();
            prop_assert_eq!(&back, &m, "{}", encoding);
            // Canonical: re-encoding gives the same bytes.
            let mut again = Vec::new();
            back.encode(encoding, &mut again).unwrap();
            prop_assert_eq!(again, bytes);
        }
    }

    #[test]
    fn decoders_never_panic_on_any_bytes(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = xml::parse(&bytes);
        let _ = binary::parse(&bytes);
        let _ = json::parse(&bytes);
    }

    /// A repair request or reply from a peer is arbitrary bytes: reading one never
    /// panics, and a reply never takes a repair backwards or past its end.
    #[test]
    fn repair_requests_and_replies_never_panic(
        bytes in prop::collection::vec(any::<u8>(), 0..256),
        from in 0u64..1000,
        len in prop::option::of(0u64..50),
    ) {
        let _ = repair::Request::parse(&bytes);
        let to = len.map(|l| from + l);
        let mut fetch = repair::Fetch::new(from, to);
        fetch.on_reply(bytes::Bytes::from(bytes));
        prop_assert!(fetch.next >= from);
        if let Some(t) = to {
            prop_assert!(fetch.next <= t.max(from));
            prop_assert_eq!(fetch.frames.len() as u64 + fetch.lost, fetch.next - from);
        }
    }

    /// The bridge's JSON form carries every message the XML form does, exactly.
    #[test]
    fn every_message_round_trips_through_json(m in message()) {
        let subject = Subject::new("FFTB.MMS.SAT1").unwrap();
        let bytes = json::encode(&json::to_json(&subject, &m));
        let (back_subject, level, back) = json::parse(&bytes).unwrap();
        prop_assert_eq!(back_subject, subject);
        prop_assert_eq!(level, None);
        prop_assert_eq!(back, m);
    }

    #[test]
    fn decoders_never_panic_on_a_damaged_message(
        m in message(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        for encoding in [Encoding::Xml, Encoding::Binary] {
            let mut bytes = Vec::new();
            m.encode(encoding, &mut bytes).unwrap();
            let mut damaged = bytes.clone();
            for (at, b) in &edits {
                let i = at.index(damaged.len());
                damaged[i] = *b;
            }
            if let Ok(back) = Message::decode(encoding, &damaged) {
                // Whatever is accepted is a valid message that re-encodes.
                let mut out = Vec::new();
                back.encode(encoding, &mut out).unwrap();
            }
            // Every strict prefix of a message is refused.
            let truncated = &bytes[..cut.index(bytes.len())];
            prop_assert!(Message::decode(encoding, truncated).is_err());
        }
    }
}

fn element() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["A", "B", "C", "SAT1", "X-2", "Y_3"]).prop_map(str::to_string)
}

fn subject() -> impl Strategy<Value = String> {
    prop::collection::vec(element(), 1..5).prop_map(|e| e.join("."))
}

fn pattern() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(
            prop_oneof![3 => element(), 1 => Just("*".to_string())],
            0..4,
        ),
        prop_oneof![Just(None), Just(Some(">")), Just(Some("+"))],
    )
        .prop_filter_map("non-empty", |(mut e, tail)| {
            if let Some(t) = tail {
                e.push(t.to_string());
            }
            (!e.is_empty()).then(|| e.join("."))
        })
}

/// The wildcard rules read directly, element by element.
fn reference_match(pattern: &[&str], subject: &[&str]) -> bool {
    match (pattern.split_first(), subject.split_first()) {
        (None, None) => true,
        (Some((&"+", _)), _) => true,
        (Some((&">", _)), Some(_)) => true,
        (Some((&"*", p)), Some((_, s))) => reference_match(p, s),
        (Some((l, p)), Some((e, s))) => l == e && reference_match(p, s),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(5000))]

    #[test]
    fn pattern_matching_agrees_with_the_rules(p in pattern(), s in subject()) {
        let pattern = Pattern::new(&p).unwrap();
        let subject = Subject::new(&s).unwrap();
        let pe: Vec<&str> = p.split('.').collect();
        let se: Vec<&str> = s.split('.').collect();
        prop_assert_eq!(pattern.matches(&subject), reference_match(&pe, &se), "{} against {}", p, s);
    }
}

//! Hostile input: truncations, bit flips and random bytes must give `Ok` or `Err`,
//! never a panic, and whatever is accepted must be the canonical encoding of what
//! was decoded. Also one test per error variant.

mod common;

use bytes::Bytes;
use glidepath_core::{Body, Envelope};
use glidepath_wire::{
    decode_envelope, decode_envelope_bytes, decode_header, encode_envelope, WireError, MAGIC,
    VERSION,
};
use proptest::prelude::*;

/// Decodes both ways; they must agree, and an accepted input must re-encode to itself.
fn check(input: &[u8]) -> Result<Envelope, WireError> {
    let a = decode_envelope(input);
    let b = decode_envelope_bytes(Bytes::copy_from_slice(input));
    assert_eq!(a, b);
    if let Ok(e) = &a {
        assert_eq!(
            &encode_envelope(e)[..],
            input,
            "accepted a non-canonical encoding of {e:?}"
        );
        assert!(decode_header(input).is_ok());
    }
    a
}

#[test]
fn every_truncation_is_an_error() {
    for e in common::samples() {
        let bytes = encode_envelope(&e);
        for n in 0..bytes.len() {
            match check(&bytes[..n]) {
                Err(WireError::Truncated { .. } | WireError::LengthBeyondInput { .. }) => {}
                other => panic!("prefix {n} of {e:?}: {other:?}"),
            }
        }
    }
}

#[test]
fn every_bit_flip_is_handled() {
    for e in common::samples() {
        let bytes = encode_envelope(&e).to_vec();
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            let _ = check(&b);
        }
    }
}

#[test]
fn every_byte_value_at_every_position_is_handled() {
    // Smaller samples only: this is 256 decodes per byte.
    for e in common::samples()
        .into_iter()
        .filter(|e| encode_envelope(e).len() < 200)
    {
        let bytes = encode_envelope(&e).to_vec();
        for i in 0..bytes.len() {
            for v in 0..=255u8 {
                let mut b = bytes.clone();
                b[i] = v;
                let _ = check(&b);
            }
        }
    }
}

#[test]
fn appended_bytes_are_trailing() {
    for e in common::samples() {
        let mut bytes = encode_envelope(&e).to_vec();
        let len = bytes.len();
        bytes.push(0);
        assert_eq!(
            check(&bytes),
            Err(WireError::TrailingBytes {
                offset: len,
                count: 1
            })
        );
    }
}

/// A valid header (sender 1, seq 1, publish time 0) for `kind`, before the body.
fn header(kind: u8) -> Vec<u8> {
    vec![MAGIC, VERSION, kind, 1, 1, 0]
}

#[test]
fn each_error_is_reported() {
    assert_eq!(
        check(&[]),
        Err(WireError::Truncated {
            offset: 0,
            field: "magic"
        })
    );
    assert_eq!(check(&[0x48, 1]), Err(WireError::BadMagic { found: 0x48 }));
    assert_eq!(
        check(&[MAGIC]),
        Err(WireError::Truncated {
            offset: 1,
            field: "version"
        })
    );
    // Version 1 had untagged times, version 2 no ownership notifications, version 4
    // no finished_below: refused,
    // not misread.
    assert_eq!(
        check(&[MAGIC, 1, 0x02]),
        Err(WireError::UnsupportedVersion {
            version: 1,
            supported: 8
        })
    );
    assert_eq!(
        check(&[MAGIC, 2, 0x02]),
        Err(WireError::UnsupportedVersion {
            version: 2,
            supported: 8
        })
    );
    // Version 3 had no regions in updates and interactions, version 5 none in
    // update requests.
    assert_eq!(
        check(&[MAGIC, 4, 0x05]),
        Err(WireError::UnsupportedVersion {
            version: 4,
            supported: 8
        })
    );
    assert_eq!(
        check(&[MAGIC, 5, 0x05]),
        Err(WireError::UnsupportedVersion {
            version: 5,
            supported: 8
        })
    );
    assert_eq!(
        check(&[MAGIC, 3, 0x02]),
        Err(WireError::UnsupportedVersion {
            version: 3,
            supported: 8
        })
    );
    assert_eq!(
        check(&[MAGIC, 0, 0x02]),
        Err(WireError::UnsupportedVersion {
            version: 0,
            supported: 8
        })
    );
    assert_eq!(
        check(&[MAGIC, VERSION, 0x0f]),
        Err(WireError::UnknownKind { kind: 0x0f })
    );
    assert_eq!(
        check(&[MAGIC, VERSION, 0x00]),
        Err(WireError::UnknownKind { kind: 0x00 })
    );
    // Sender 2^32 does not fit a federate handle.
    assert_eq!(
        check(&[MAGIC, VERSION, 0x11, 0x80, 0x80, 0x80, 0x80, 0x10]),
        Err(WireError::VarintOverflow {
            offset: 3,
            field: "sender"
        })
    );
    // Seq of eleven bytes.
    let mut b = vec![MAGIC, VERSION, 0x11, 1];
    b.extend_from_slice(&[0xff; 11]);
    assert_eq!(
        check(&b),
        Err(WireError::VarintOverflow {
            offset: 4,
            field: "seq"
        })
    );
    // Seq 1 written in two bytes.
    assert_eq!(
        check(&[MAGIC, VERSION, 0x11, 1, 0x81, 0x00]),
        Err(WireError::NonCanonicalVarint {
            offset: 4,
            field: "seq"
        })
    );
    // Publish time cut short.
    assert_eq!(
        check(&[MAGIC, VERSION, 0x11, 1, 1, 0x80]),
        Err(WireError::Truncated {
            offset: 5,
            field: "publish_time_ns"
        })
    );

    // FederateResigned with federate 5 is valid; the same with a trailing byte is not.
    let mut ok = header(0x11);
    ok.push(5);
    assert!(check(&ok).is_ok());

    // Update: instance 1, class 1, the default region, order 2 (undefined).
    let mut b = header(0x02);
    b.extend_from_slice(&[1, 1, 0, 2]);
    assert_eq!(
        check(&b),
        Err(WireError::InvalidTag {
            offset: 9,
            field: "order",
            value: 2
        })
    );
    // Update with a NaN time.
    let mut b = header(0x02);
    b.extend_from_slice(&[1, 1, 0, 1, 0, 1]);
    b.extend_from_slice(&f64::NAN.to_le_bytes());
    assert_eq!(
        check(&b),
        Err(WireError::InvalidTime {
            offset: 12,
            field: "time"
        })
    );
    // Update with a tag longer than the input.
    let mut b = header(0x02);
    b.extend_from_slice(&[1, 1, 0, 0, 0, 0, 5, b'a']);
    assert_eq!(
        check(&b),
        Err(WireError::LengthBeyondInput {
            offset: 12,
            field: "tag",
            length: 5,
            remaining: 1
        })
    );
    // Regions: a region whose dimensions do not increase, one whose range ends before
    // it starts, and more ranges than the input could hold.
    for region in [
        &[2u8, 3, 0, 1, 2, 0, 1][..],
        &[2, 2, 0, 1, 2, 0, 1],
        &[1, 2, 5, 4],
    ] {
        let mut b = header(0x02);
        b.extend_from_slice(&[1, 1, 1]);
        b.extend_from_slice(region);
        b.extend_from_slice(&[0, 0, 0, 0, 0]);
        assert_eq!(
            check(&b),
            Err(WireError::InvalidRegion { offset: 9 }),
            "{region:?}"
        );
    }
    let mut b = header(0x03);
    b.extend_from_slice(&[1, 1, 9, 1, 1]);
    assert!(matches!(
        check(&b),
        Err(WireError::LengthBeyondInput {
            field: "region",
            length: 9,
            ..
        })
    ));
    // Update claiming 2^63 values: refused before allocating anything.
    let mut b = header(0x02);
    b.extend_from_slice(&[1, 1, 0, 0, 0, 0, 0]);
    b.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    assert!(matches!(
        check(&b),
        Err(WireError::LengthBeyondInput {
            field: "attribute values",
            length: 0x8000_0000_0000_0000,
            ..
        })
    ));
    // Register with a name that is not UTF-8.
    let mut b = header(0x01);
    b.extend_from_slice(&[1, 1, 2, 0xc3, 0x28]);
    assert_eq!(
        check(&b),
        Err(WireError::InvalidUtf8 {
            offset: 9,
            field: "instance name"
        })
    );
    // TimeStatus with a negative lookahead (float, then integer, each in the
    // eight-byte form, which is theirs: −1.5 is not whole, −2^60 needs more than
    // eight varint bytes).
    for (tag, bits) in [(1u8, (-1.5f64).to_bits()), (2, (-(1i64 << 60)) as u64)] {
        // Regulation on, constrained, time 1.0 (compact: tag 3, zigzag 2), no TARA.
        let mut b = header(0x06);
        b.extend_from_slice(&[2, 1, 3, 2, 0]);
        b.push(tag);
        b.extend_from_slice(&bits.to_le_bytes());
        assert_eq!(
            check(&b),
            Err(WireError::InvalidTime {
                offset: 12,
                field: "lookahead"
            })
        );
    }
    // A time whose representation tag is none of the six (1 to 6).
    let mut b = header(0x06);
    b.extend_from_slice(&[2, 1, 7]);
    assert_eq!(
        check(&b),
        Err(WireError::InvalidTag {
            offset: 8,
            field: "logical_time",
            value: 7
        })
    );
    // A time in a longer form than its own: 1.0 in eight bytes (it is tag 3, one
    // byte), and float +infinity likewise (it is the tag alone).
    for bits in [1.0f64.to_bits(), f64::INFINITY.to_bits()] {
        let mut b = header(0x06);
        b.extend_from_slice(&[2, 1, 1]);
        b.extend_from_slice(&bits.to_le_bytes());
        assert_eq!(
            check(&b),
            Err(WireError::NonCanonicalTime {
                offset: 8,
                field: "logical_time"
            })
        );
    }
    // A compact whole float of 2^53 + 1, which no f64 holds (it would round to 2^53
    // and re-encode differently): found by `mutated_encodings_never_panic`.
    let mut b = header(0x06);
    b.extend_from_slice(&[2, 1, 3]);
    b.extend_from_slice(&[0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x20]);
    assert_eq!(
        check(&b),
        Err(WireError::InvalidTime {
            offset: 9,
            field: "logical_time"
        })
    );
    // A compact whole float beyond 2^53, which no f64 holds exactly.
    let mut b = header(0x06);
    b.extend_from_slice(&[2, 1, 3]);
    b.extend_from_slice(&[0x82, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]);
    assert_eq!(
        check(&b),
        Err(WireError::InvalidTime {
            offset: 9,
            field: "logical_time"
        })
    );
    // A negative lookahead in the compact forms (float −1, integer −1).
    for tag in [3u8, 6] {
        let mut b = header(0x06);
        b.extend_from_slice(&[2, 1, 3, 2, 0]);
        b.extend_from_slice(&[tag, 0x01]);
        assert_eq!(
            check(&b),
            Err(WireError::InvalidTime {
                offset: 12,
                field: "lookahead"
            })
        );
    }
    // A boolean that is neither 0 nor 1.
    let mut b = header(0x06);
    b.extend_from_slice(&[2, 2]);
    assert_eq!(
        check(&b),
        Err(WireError::InvalidTag {
            offset: 7,
            field: "constrained",
            value: 2
        })
    );
}

#[test]
fn attributes_given_up_have_no_update_regions() {
    // UpdateRegions of instance 1, class 2, one attribute 3, not owned, with one
    // region (and no route): refused, naming where the region starts.
    let mut b = header(0x08);
    b.extend_from_slice(&[1, 2, 1, 3, 0, 1, 1, 2, 5, 9, 0]);
    let offset = b.len() - 6;
    assert_eq!(
        check(&b),
        Err(glidepath_wire::WireError::InvalidRegion { offset })
    );
    // The same, owned: it decodes.
    let owned = b.len() - 7;
    b[owned] = 1;
    assert!(check(&b).is_ok());
    // A scope advisory's flags are two bits.
    let mut b = header(0x09);
    b.push(4);
    assert!(matches!(
        check(&b),
        Err(glidepath_wire::WireError::InvalidTag { .. })
    ));
}

#[test]
fn errors_name_the_problem() {
    let e = check(&[MAGIC, 9]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "unsupported wire format version 9; this build speaks version 8"
    );
    let e = check(&[MAGIC, VERSION, 0x02, 1]).unwrap_err();
    assert_eq!(e.to_string(), "input ends inside seq (starting at byte 4)");
}

proptest! {
    #![proptest_config(common::config(10_000))]

    #[test]
    fn random_bytes_never_panic(input in proptest::collection::vec(any::<u8>(), 0..200)) {
        let _ = check(&input);
    }

    /// Random bodies behind a valid header, so that the body decoders are reached.
    #[test]
    fn random_bodies_never_panic(
        kind in prop_oneof![1u8..=0x0a, 0x10u8..=0x16],
        body in proptest::collection::vec(prop_oneof![4 => 0u8..4, 1 => any::<u8>()], 0..120),
    ) {
        let mut input = header(kind);
        input.extend_from_slice(&body);
        let _ = check(&input);
    }
}

proptest! {
    #![proptest_config(common::config(3000))]

    /// Valid encodings with a few bytes overwritten, cut or extended.
    #[test]
    fn mutated_encodings_never_panic(
        e in common::arb_envelope(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
        mode in 0u8..3,
    ) {
        let mut b = encode_envelope(&e).to_vec();
        for (i, v) in edits {
            let i = i.index(b.len());
            b[i] = v;
        }
        match mode {
            0 => {}
            1 => b.truncate(cut.index(b.len())),
            _ => b.push(cut.index(256) as u8),
        }
        let _ = check(&b);
    }
}

#[test]
fn huge_declared_lengths_are_refused_cheaply() {
    // A 64-byte input that declares a 2^62-byte tag must not try to allocate it.
    for kind in [0x02u8, 0x03, 0x04, 0x05, 0x12] {
        for fill in [0x00u8, 0x01] {
            let mut b = header(kind);
            b.extend(std::iter::repeat_n(fill, 6));
            b.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40]);
            b.extend(std::iter::repeat_n(0, 30));
            assert!(check(&b).is_err());
        }
    }
    // And whatever decodes keeps its payloads inside the input.
    let e = common::samples().remove(2);
    let bytes = encode_envelope(&e);
    if let Body::Update { values, .. } = decode_envelope_bytes(bytes.clone()).unwrap().body {
        assert!(values.iter().map(|(_, v)| v.len()).sum::<usize>() < bytes.len());
    }
}

//! Envelope round trips: one hand-written envelope of every body kind, then
//! proptest-generated envelopes; decode(encode(e)) == e and the size is exact.

mod common;

use std::collections::HashSet;

use bytes::{Bytes, BytesMut};
use glidepath_core::Body;
use glidepath_wire::{
    decode_envelope, decode_envelope_bytes, decode_header, encode_envelope, encode_envelope_into,
    encoded_len, BodyKind, MAGIC, VERSION,
};
use proptest::prelude::*;

#[test]
fn every_body_kind_round_trips() {
    let mut kinds = HashSet::new();
    for e in common::samples() {
        let bytes = encode_envelope(&e);
        assert_eq!(bytes.len(), encoded_len(&e), "{e:?}");
        assert_eq!(&bytes[..2], &[MAGIC, VERSION]);
        assert_eq!(decode_envelope(&bytes).as_ref(), Ok(&e));
        assert_eq!(decode_envelope_bytes(bytes.clone()).as_ref(), Ok(&e));

        let h = decode_header(&bytes).unwrap();
        assert_eq!(
            (h.kind, h.sender, h.seq, h.publish_time_ns),
            (BodyKind::of(&e.body), e.sender, e.seq, e.publish_time_ns)
        );
        assert_eq!(h.kind as u8, bytes[2]);
        assert_eq!(BodyKind::from_byte(bytes[2]), Some(h.kind));
        kinds.insert(h.kind);
    }
    // Every kind of this version is exercised by a hand-written case.
    let all: HashSet<BodyKind> = (0..=255u8).filter_map(BodyKind::from_byte).collect();
    assert_eq!(all.len(), 17);
    assert_eq!(kinds, all);
}

#[test]
fn negative_zero_and_infinities_keep_their_bits() {
    for e in common::samples() {
        let bytes = encode_envelope(&e);
        let back = decode_envelope(&bytes).unwrap();
        // `==` on times treats -0.0 and 0.0 alike; the bytes do not.
        assert_eq!(encode_envelope(&back), bytes);
    }
}

#[test]
fn decode_envelope_bytes_is_zero_copy() {
    let e = common::samples()
        .into_iter()
        .find(|e| matches!(e.body, Body::Update { .. }))
        .unwrap();
    let bytes = encode_envelope(&e);
    let range = bytes.as_ptr_range();
    let Body::Update { values, tag, .. } = decode_envelope_bytes(bytes.clone()).unwrap().body
    else {
        unreachable!()
    };
    for (_, v) in values.iter().filter(|(_, v)| !v.is_empty()) {
        assert!(range.contains(&v.as_ptr()), "value was copied");
    }
    assert!(range.contains(&tag.as_ptr()), "tag was copied");
}

#[test]
fn encode_into_appends_after_existing_bytes() {
    let samples = common::samples();
    let mut buf = BytesMut::from(&b"frame:"[..]);
    for e in &samples {
        encode_envelope_into(e, &mut buf);
    }
    let mut rest: Bytes = buf.freeze().slice(6..);
    for e in &samples {
        let n = encoded_len(e);
        assert_eq!(decode_envelope_bytes(rest.split_to(n)).as_ref(), Ok(e));
    }
    assert!(rest.is_empty());
}

proptest! {
    #![proptest_config(common::config(2000))]

    #[test]
    fn random_envelopes_round_trip(e in common::arb_envelope()) {
        let bytes = encode_envelope(&e);
        prop_assert_eq!(bytes.len(), encoded_len(&e));
        let back = decode_envelope(&bytes);
        prop_assert_eq!(back.as_ref(), Ok(&e));
        let zero_copy = decode_envelope_bytes(bytes.clone());
        prop_assert_eq!(zero_copy.as_ref(), Ok(&e));
        // Canonical: re-encoding what was decoded gives the same bytes.
        prop_assert_eq!(encode_envelope(&back.unwrap()), bytes);
    }
}

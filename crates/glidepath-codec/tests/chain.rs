//! The encoder chain and the SNDEM track message: exact inverses, byte-for-byte JSON,
//! and hostile input that is rejected, never a panic.

use glidepath_codec::track::{Track, TrackMeta};
use glidepath_codec::{ChainConfig, CodecError, Compression, EncoderChain, FederationKey};
use proptest::prelude::*;

const TABLE_4_1: &str = r#"{"vid":"UAL1967","latDeg":37.62231,"lonDeg":-122.38169,"altFt":6.0,"time":1458716400000,"gsKt":20.0,"crsDeg":286.0,"vsFpm":NaN,"meta":{"src":"ATAC Data.1","ver":"2.3","run":"1A","tpub":1603483450633}}"#;

fn sample() -> Track {
    Track {
        vid: "UAL1967".into(),
        lat_deg: 37.62231,
        lon_deg: -122.38169,
        alt_ft: 6.0,
        time: 1_458_716_400_000,
        gs_kt: 20.0,
        crs_deg: 286.0,
        vs_fpm: f64::NAN,
        meta: TrackMeta {
            src: "ATAC Data.1".into(),
            ver: "2.3".into(),
            run: "1A".into(),
            tpub: 1_603_483_450_633,
        },
    }
}

#[test]
fn table_4_1_is_reproduced_byte_for_byte() {
    let json = sample().to_sndem_json();
    assert_eq!(json, TABLE_4_1);
    assert_eq!(json.len(), 200, "the report gives a 200-byte payload");
    assert_eq!(sample().key().len(), 7, "and a 7-byte key");
    let back = Track::from_sndem_json(TABLE_4_1.as_bytes()).unwrap();
    assert_eq!(back, sample());
    assert!(back.vs_fpm.is_nan());
}

#[test]
fn json_reader_accepts_reordered_fields_whitespace_unknown_fields_and_missing_numbers() {
    let text = br#" { "meta" : {"tpub":5,"run":"r","extra":[1,{"a":null}],"src":"s","ver":"v"},
        "vid":"AB\"C\u00e9", "time": -3, "latDeg": 1e-4, "note": "ignored" } "#;
    let t = Track::from_sndem_json(text).unwrap();
    assert_eq!(t.vid, "AB\"Cé");
    assert_eq!(t.time, -3);
    assert_eq!(t.lat_deg, 1e-4);
    assert!(t.lon_deg.is_nan() && t.alt_ft.is_nan() && t.gs_kt.is_nan());
    assert_eq!(
        t.meta,
        TrackMeta {
            src: "s".into(),
            ver: "v".into(),
            run: "r".into(),
            tpub: 5
        }
    );
    // And what we write reads back the same.
    assert_eq!(
        Track::from_sndem_json(t.to_sndem_json().as_bytes()).unwrap(),
        t
    );
}

#[test]
fn java_number_format_matches_double_to_string() {
    let mut t = sample();
    for (v, text) in [
        (1e7, "1.0E7"),
        (1.5e-5, "1.5E-5"),
        (-2.5e10, "-2.5E10"),
        (0.001, "0.001"),
        (-0.0, "-0.0"),
        (9999999.5, "9999999.5"),
        (f64::INFINITY, "Infinity"),
    ] {
        t.alt_ft = v;
        let json = t.to_sndem_json();
        assert!(
            json.contains(&format!("\"altFt\":{text},")),
            "{v} -> {json}"
        );
        assert_eq!(Track::from_sndem_json(json.as_bytes()).unwrap(), t);
    }
}

#[test]
fn malformed_json_is_an_error_with_a_position() {
    for bad in [
        &b""[..],
        b"{",
        b"{\"vid\":\"A\"",
        b"{\"vid\":\"A\",\"latDeg\":abc}",
        b"{\"latDeg\":1}",
        b"{\"vid\":\"A\"} x",
        b"{\"vid\":\"\\q\"}",
    ] {
        match Track::from_sndem_json(bad) {
            Err(CodecError::Malformed(m)) => assert!(!m.is_empty()),
            other => panic!("{:?} -> {other:?}", String::from_utf8_lossy(bad)),
        }
    }
}

#[test]
fn binary_is_smaller_and_exact() {
    let mut out = Vec::new();
    sample().encode_binary(&mut out);
    assert!(out.len() < 100, "binary track is {} bytes", out.len());
    assert_eq!(Track::decode_binary(&out).unwrap(), sample());
    for cut in 0..out.len() {
        assert!(Track::decode_binary(&out[..cut]).is_err());
    }
}

fn chain(compression: Compression, key: Option<FederationKey>) -> EncoderChain {
    EncoderChain::new(ChainConfig {
        compression,
        compress_min_bytes: 64,
        key,
        ..ChainConfig::default()
    })
    .unwrap()
}

#[test]
fn every_combination_is_an_exact_inverse() {
    let key = FederationKey::generate().unwrap();
    let compressible = TABLE_4_1.repeat(20);
    for compression in [
        Compression::None,
        Compression::Lz4,
        Compression::Zstd { level: 3 },
    ] {
        for key in [None, Some(key.clone())] {
            let c = chain(compression, key);
            for payload in [&b""[..], b"short", compressible.as_bytes()] {
                let frame = c.encode(payload).unwrap();
                assert_eq!(&c.decode(&frame).unwrap()[..], payload, "{compression:?}");
            }
            if compression != Compression::None {
                let frame = c.encode(compressible.as_bytes()).unwrap();
                assert!(
                    frame.len() < compressible.len() / 2,
                    "{compression:?} compressed to {}",
                    frame.len()
                );
            }
        }
    }
}

#[test]
fn small_messages_are_sent_uncompressed() {
    let c = chain(Compression::Zstd { level: 3 }, None);
    let frame = c.encode(b"0123456789").unwrap();
    assert_eq!(
        frame[1], 0,
        "below the threshold no compression flag is set"
    );
    assert_eq!(&frame[2..], b"0123456789");
}

#[test]
fn wrong_key_tampering_and_missing_key_are_rejected() {
    let sender = chain(Compression::Lz4, Some(FederationKey::generate().unwrap()));
    let stranger = chain(Compression::Lz4, Some(FederationKey::generate().unwrap()));
    let keyless = chain(Compression::Lz4, None);
    let frame = sender.encode(TABLE_4_1.as_bytes()).unwrap();
    assert_eq!(
        stranger.decode(&frame),
        Err(CodecError::AuthenticationFailed)
    );
    assert_eq!(keyless.decode(&frame), Err(CodecError::KeyRequired));
    // A keyless process cannot inject into a keyed federation.
    let injected = keyless.encode(b"forged").unwrap();
    assert_eq!(sender.decode(&injected), Err(CodecError::Unauthenticated));
    // Flipping any single byte breaks authentication (or the frame header).
    for i in 0..frame.len() {
        let mut bad = frame.to_vec();
        bad[i] ^= 0x01;
        assert!(sender.decode(&bad).is_err(), "flip at {i} accepted");
    }
}

#[test]
fn keys_parse_from_hex_and_never_print() {
    let key = FederationKey::generate().unwrap();
    assert_eq!(FederationKey::from_hex(&key.to_hex()).unwrap(), key);
    assert!(FederationKey::from_hex("abc").is_err());
    assert!(FederationKey::from_hex(&"zz".repeat(32)).is_err());
    assert_eq!(format!("{key:?}"), "FederationKey(<redacted>)");
    assert_eq!(
        Compression::parse("zstd:7").unwrap(),
        Compression::Zstd { level: 7 }
    );
    assert!(Compression::parse("gzip").is_err());
}

#[test]
fn decompression_bombs_are_refused() {
    let big = vec![0u8; 1 << 20];
    let sender = EncoderChain::new(ChainConfig {
        compression: Compression::Zstd { level: 1 },
        ..ChainConfig::default()
    })
    .unwrap();
    let receiver = EncoderChain::new(ChainConfig {
        max_message_bytes: 1 << 16,
        ..ChainConfig::default()
    })
    .unwrap();
    let frame = sender.encode(&big).unwrap();
    assert!(matches!(
        receiver.decode(&frame),
        Err(CodecError::TooLarge { .. })
    ));
}

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let plain = chain(Compression::Lz4, None);
        let keyed = chain(Compression::Zstd { level: 1 }, Some(FederationKey::from_bytes([7; 32])));
        let _ = plain.decode(&bytes);
        let _ = keyed.decode(&bytes);
        let _ = Track::decode_binary(&bytes);
        let _ = Track::from_sndem_json(&bytes);
        // A frame header in front of random bytes reaches the decompressors.
        let mut framed = vec![0xE1, 1];
        framed.extend_from_slice(&bytes);
        let _ = plain.decode(&framed);
        framed[1] = 2;
        let _ = plain.decode(&framed);
    }

    #[test]
    fn tracks_round_trip_in_both_forms(
        vid in "[A-Z]{2,3}[0-9]{1,4}", lat in -90.0f64..90.0, lon in -180.0f64..180.0, alt in proptest::option::of(0.0f64..60000.0),
        time in any::<i64>(), tpub in any::<i64>(), src in ".{0,12}",
    ) {
        let t = Track { vid, lat_deg: lat, lon_deg: lon, alt_ft: alt.unwrap_or(f64::NAN), time, gs_kt: 250.5, crs_deg: 1e-4, vs_fpm: -1500.0,
            meta: TrackMeta { src, ver: "2.3".into(), run: "1A".into(), tpub } };
        prop_assert_eq!(Track::from_sndem_json(t.to_sndem_json().as_bytes()).unwrap(), t.clone());
        let mut b = Vec::new();
        t.encode_binary(&mut b);
        prop_assert_eq!(Track::decode_binary(&b).unwrap(), t);
    }
}

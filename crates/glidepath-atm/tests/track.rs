//! The SNDEM track message: byte-for-byte JSON as Table 4.1 prints it, exact inverses,
//! and hostile input that is rejected, never a panic.

use glidepath_atm::track::{Track, TrackMeta};
use glidepath_codec::CodecError;
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

proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let _ = Track::decode_binary(&bytes);
        let _ = Track::from_sndem_json(&bytes);
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

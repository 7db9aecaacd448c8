//! The SNDEM track's JSON writer and reader against the implementation they replaced
//! (`support/track_legacy.rs`): the same bytes out, the same tracks and errors in, on a
//! million doubles, random tracks, mutated messages and JSON soup. (That the fast paths
//! carry the common shapes is checked beside them, in `src/track/`.)

#[path = "support/doubles.rs"]
mod doubles;
#[path = "support/track_legacy.rs"]
mod legacy;

use doubles::{random_double, Rng};
use glidepath_atm::track::{write_java_double, Track, TrackMeta};
use proptest::prelude::*;

fn new_double(x: f64) -> Vec<u8> {
    let mut out = Vec::new();
    write_java_double(&mut out, x);
    out
}

fn old_double(x: f64) -> Vec<u8> {
    let mut out = Vec::new();
    legacy::write_java_double(&mut out, x);
    out
}

fn assert_same_double(x: f64) {
    let (new, old) = (new_double(x), old_double(x));
    assert_eq!(
        new,
        old,
        "{x:e} ({:#018x}): new {:?} old {:?}",
        x.to_bits(),
        String::from_utf8_lossy(&new),
        String::from_utf8_lossy(&old)
    );
}

#[test]
fn java_double_matches_the_old_writer_on_a_million_values() {
    let mut r = Rng(0x5EED_0FD0_0B1E);
    for _ in 0..1_000_000 {
        let x = random_double(&mut r);
        assert_same_double(x);
    }
}

#[test]
fn java_double_matches_the_old_writer_on_track_like_values() {
    let mut r = Rng(42);
    for _ in 0..200_000 {
        // Coordinates with 5 decimals, altitudes, speeds, as the TestBed writes them.
        let lat = (r.below(18_000_000) as f64 - 9_000_000.0) / 1e5;
        let alt = r.below(600_000) as f64 / 10.0;
        let x = lat + alt * 0.0;
        for v in [x, alt, -alt, (lat * 1e5).round() / 1e5] {
            assert_same_double(v);
        }
        // Arithmetic results have 16-17 digits and take the general path.
        assert_same_double(lat * 3.0);
    }
    for x in [
        37.62231,
        -122.38169,
        6.0,
        20.0,
        286.0,
        1e7,
        1.5e-5,
        -2.5e10,
        0.001,
        9999999.5,
        1e15,
        1e16,
        1e22,
        1e23,
        123456789012345.0,
        0.1 + 0.2,
        5e-324,
        1e-300,
        1.7976931348623157e308,
    ] {
        assert_same_double(x);
        assert_same_double(-x);
    }
}

fn new_json(t: &Track) -> Vec<u8> {
    let mut out = Vec::new();
    t.write_sndem_json(&mut out);
    out
}

fn old_json(t: &Track) -> Vec<u8> {
    let mut out = Vec::new();
    legacy::write_sndem_json(t, &mut out);
    out
}

/// The new and old reader agree: the same track, or the same error message.
fn assert_same_parse(input: &[u8]) {
    let new = Track::from_sndem_json(input);
    let old = legacy::from_sndem_json(input);
    match (&new, &old) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "input {:?}", String::from_utf8_lossy(input)),
        (Err(a), Err(b)) => assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "input {:?}",
            String::from_utf8_lossy(input)
        ),
        _ => panic!(
            "input {:?}: new {new:?} old {old:?}",
            String::from_utf8_lossy(input)
        ),
    }
}

fn any_double() -> impl Strategy<Value = f64> {
    prop_oneof![
        any::<f64>(),
        (-180_000_000i64..180_000_000).prop_map(|v| v as f64 / 1e6),
        (0u32..60_000).prop_map(f64::from),
        Just(f64::NAN),
        Just(-0.0),
    ]
}

fn any_track() -> impl Strategy<Value = Track> {
    (
        (
            any::<String>(),
            any_double(),
            any_double(),
            any_double(),
            any::<i64>(),
        ),
        (any_double(), any_double(), any_double()),
        (
            ".{0,12}",
            "[\\x00-\\x7f]{0,6}",
            any::<String>(),
            any::<i64>(),
        ),
    )
        .prop_map(
            |(
                (vid, lat_deg, lon_deg, alt_ft, time),
                (gs_kt, crs_deg, vs_fpm),
                (src, ver, run, tpub),
            )| Track {
                vid,
                lat_deg,
                lon_deg,
                alt_ft,
                time,
                gs_kt,
                crs_deg,
                vs_fpm,
                meta: TrackMeta {
                    src,
                    ver,
                    run,
                    tpub,
                },
            },
        )
}

/// Bytes that steer a mutation towards JSON structure rather than noise.
const JSONISH: &[u8] = b"{}[]:,\" \\\n\t0123456789.-+eEnNaIfuyltr/\x01\xc3\xa9\xff";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn writer_matches_the_old_writer_and_reads_back(t in any_track()) {
        let json = new_json(&t);
        prop_assert_eq!(&json, &old_json(&t));
        prop_assert_eq!(Track::from_sndem_json(&json).unwrap(), t.clone());
        prop_assert_eq!(legacy::from_sndem_json(&json).unwrap(), t.clone());
        // Appending to a buffer that already holds something.
        let mut out = b"xyz".to_vec();
        t.write_sndem_json(&mut out);
        prop_assert_eq!(&out[3..], &json[..]);
    }

    #[test]
    fn reading_into_a_used_track_forgets_what_it_held(t in any_track(), before in any_track()) {
        let mut reused = before;
        reused.read_sndem_json(&new_json(&t)).unwrap();
        prop_assert_eq!(&reused, &t);
        // A message that leaves fields out leaves them missing, not as they were.
        reused.read_sndem_json(br#"{"vid":"N1"}"#).unwrap();
        prop_assert_eq!(&reused.vid, "N1");
        prop_assert!(reused.lat_deg.is_nan() && reused.vs_fpm.is_nan());
        prop_assert_eq!(reused.time, 0);
        prop_assert!(reused.meta.src.is_empty() && reused.meta.run.is_empty());
        prop_assert_eq!(reused.meta.tpub, 0);
    }

    #[test]
    fn reader_matches_the_old_reader_on_mutated_input(
        t in any_track(),
        edits in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..3, any::<prop::sample::Index>(), any::<u8>()), 0..6),
        pretty in any::<bool>(),
    ) {
        let mut json = new_json(&t);
        if pretty {
            // Whitespace around every structural character.
            let mut spaced = Vec::new();
            for &b in &json {
                if matches!(b, b'{' | b'}' | b':' | b',') { spaced.extend_from_slice(b" \n"); spaced.push(b); spaced.extend_from_slice(b"\t "); } else { spaced.push(b); }
            }
            json = spaced;
        }
        assert_same_parse(&json);
        for (at, kind, pick, raw) in edits {
            let byte = if raw & 1 == 0 { JSONISH[pick.index(JSONISH.len())] } else { raw };
            match kind {
                0 if !json.is_empty() => { json.remove(at.index(json.len())); }
                1 => { let i = at.index(json.len() + 1); json.insert(i, byte); }
                _ if !json.is_empty() => { let i = at.index(json.len()); json[i] = byte; }
                _ => {}
            }
            assert_same_parse(&json);
        }
    }

    #[test]
    fn reader_matches_the_old_reader_on_json_soup(
        parts in proptest::collection::vec(prop_oneof![
            Just("{".to_string()), Just("}".to_string()), Just("[".to_string()), Just("]".to_string()),
            Just(",".to_string()), Just(":".to_string()), Just(" ".to_string()),
            prop::sample::select(vec!["\"vid\"", "\"latDeg\"", "\"lonDeg\"", "\"altFt\"", "\"time\"", "\"gsKt\"", "\"crsDeg\"", "\"vsFpm\"",
                "\"meta\"", "\"src\"", "\"ver\"", "\"run\"", "\"tpub\"", "\"x\"", "\"v\\u0069d\"", "\"\\ud83d\\ude00\"", "\"\\ud83d\"", "\"a\\qb\"",
                "NaN", "-Infinity", "Infinity", "null", "nul", "nan", "inf", "+1", "1e400", "-0", "1.5", ".5", "5.", "1e", "9223372036854775808", "-9223372036854775808", "0x10", "true"]).prop_map(str::to_string),
            any::<i64>().prop_map(|v| v.to_string()),
            any::<f64>().prop_map(|v| v.to_string()),
            "\"[^\"\\\\]{0,4}\"",
        ], 0..40),
    ) {
        let text = parts.concat();
        assert_same_parse(text.as_bytes());
        // And wrapped as an object with a vid, so more of them get deep.
        let wrapped = format!("{{\"vid\":\"A\",{}}}", &text);
        assert_same_parse(wrapped.as_bytes());
        let wrapped = format!("{{\"vid\":\"A\",\"meta\":{{{}}}}}", &text);
        assert_same_parse(wrapped.as_bytes());
    }
}

#[test]
fn reader_matches_the_old_reader_on_known_cases() {
    let cases: &[&[u8]] = &[
        b"",
        b"{",
        b"}",
        b"{}",
        b"{\"vid\":\"A\"}",
        b"{\"vid\":\"A\"",
        b"{\"vid\":\"A\",\"latDeg\":abc}",
        b"{\"latDeg\":1}",
        b"{\"vid\":\"A\"} x",
        b"{\"vid\":\"\\q\"}",
        b"{\"vid\":\"A\",}",
        b"{\"vid\":\"\xff\"}",
        b"{\"vid\":\"a\\u00e9\xff\"}",
        b"{\"vid\":\"\\ud800\"}",
        b"{\"vid\":\"\\ud800\\u0041\"}",
        b"{\"vid\":\"\\u+0041\"}",
        b"{\"vid\":\"\\u12\"}",
        b"{\"vid\":\"A\",\"time\":1.5}",
        b"{\"vid\":\"A\",\"latDeg\":null}",
        b"{\"vid\":\"A\",\"latDeg\":nul}",
        b"{\"vid\":\"A\",\"latDeg\":}",
        b"{\"vid\":\"A\",\"x\":}",
        b"{\"vid\":\"A\",\"x\":[1,[2,{}],\"s\"],\"y\":abc}",
        b"{\"vid\":\"A\",\"x\":[1,]}",
        b"{\"vid\":\"A\",\"meta\":{}}",
        b"{\"vid\":\"A\",\"meta\":{\"src\":\"s\"},\"meta\":{\"ver\":\"v\"}}",
        b"{\"vid\":\"A\",\"vid\":\"B\"}",
        b" {\"vid\" : \"A\" } \n",
        b"{\"vid\":\"A\",\"latDeg\":1.5\"}",
        b"{\"v\\u0069d\":\"A\"}",
        b"{\"vid\":\"A\\",
    ];
    for &c in cases {
        assert_same_parse(c);
    }
}

/// Control characters and non-ASCII text in every string field are escaped as the old
/// writer escaped them (before the move, this compared the two string writers alone).
#[test]
fn control_characters_are_escaped_as_before() {
    let s: String = (0u32..0x80)
        .filter_map(char::from_u32)
        .chain("é\u{2028}😀".chars())
        .collect();
    let t = Track {
        vid: s.clone(),
        meta: TrackMeta {
            src: s.clone(),
            ver: s.clone(),
            run: s,
            tpub: 0,
        },
        ..Track::default()
    };
    assert_eq!(new_json(&t), old_json(&t));
}

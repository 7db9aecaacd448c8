//! The ADS-B CSV reader: free column order, extra columns, empty callsigns, bad rows
//! with their line numbers, a missing column, and hostile bytes; timestamps in every
//! form exports write them, and OpenSky's column names and units.

use std::io::Cursor;

use glidepath_atm::{read_adsb_csv, AdsbError, AdsbFile, AdsbReader, TimestampUnit};

/// Reads `text` with its timestamps in seconds (the small numbers of these tests
/// would be ambiguous to the automatic rule).
fn read(text: &[u8]) -> Vec<Result<glidepath_atm::track::Track, glidepath_atm::CsvRowError>> {
    AdsbReader::new(Cursor::new(text.to_vec()))
        .unwrap()
        .with_timestamp_unit(TimestampUnit::Seconds)
        .collect()
}

#[test]
fn columns_in_any_order_with_extras_and_any_case() {
    let csv = "Track,extra,ICAO24,timestamp,callsign,latitude,longitude,altitude,groundspeed,vertical_rate,squawk\n\
               286.5,x,a1b2c3,1458716400.25,UAL1967 ,37.62231,-122.38169,6,20,,1200\n";
    let rows = read(csv.as_bytes());
    assert_eq!(rows.len(), 1);
    let t = rows[0].as_ref().unwrap();
    assert_eq!(t.vid, "UAL1967");
    assert_eq!(t.time, 1_458_716_400_250);
    assert_eq!(
        (t.lat_deg, t.lon_deg, t.alt_ft, t.gs_kt, t.crs_deg),
        (37.62231, -122.38169, 6.0, 20.0, 286.5)
    );
    assert!(t.vs_fpm.is_nan(), "an empty number is missing");
    assert_eq!(t.meta.ver, "2.3");
}

#[test]
fn an_empty_callsign_falls_back_to_the_icao24() {
    let csv =
        "timestamp,icao24,callsign,latitude,longitude,altitude,groundspeed,track,vertical_rate\n\
               1,abc123,,40,-75,,,,\n";
    let t = read(csv.as_bytes()).remove(0).unwrap();
    assert_eq!(t.vid, "abc123");
    assert!(t.alt_ft.is_nan() && t.gs_kt.is_nan() && t.crs_deg.is_nan());
}

#[test]
fn bad_rows_name_their_line_and_reading_goes_on() {
    let csv =
        "timestamp,icao24,callsign,latitude,longitude,altitude,groundspeed,track,vertical_rate\n\
               1,a,AAL1,40,-75,1000,200,90,0\n\
               2,a,AAL1,forty,-75,1000,200,90,0\n\
               3,a,AAL1\n\
               ,a,AAL1,40,-75,1000,200,90,0\n\
               5,,,40,-75,1000,200,90,0\n\
               6,a,AAL1,40,-75,1000,200,90,0\n";
    let rows = read(csv.as_bytes());
    assert_eq!(rows.len(), 6);
    assert!(rows[0].is_ok() && rows[5].is_ok());
    let err = |i: usize| rows[i].as_ref().unwrap_err().clone();
    assert_eq!(err(1).line, 3);
    assert!(
        err(1).what.contains("latitude") && err(1).what.contains("forty"),
        "{}",
        err(1)
    );
    assert_eq!(err(2).line, 4);
    assert!(err(2).what.contains("latitude"), "{}", err(2));
    assert_eq!(err(3).line, 5);
    assert!(err(3).what.contains("timestamp"), "{}", err(3));
    assert_eq!(err(4).line, 6);
    assert!(err(4).to_string().starts_with("line 6: "), "{}", err(4));
}

#[test]
fn a_missing_column_is_named() {
    let csv = "timestamp,icao24,callsign,latitude,longitude,altitude,groundspeed,track\n1,a,b,1,2,3,4,5\n";
    match AdsbReader::new(Cursor::new(csv)) {
        Err(e @ AdsbError::MissingColumn("vertical_rate")) => {
            // The message names every name the column may have.
            assert_eq!(
                e.to_string(),
                "ADS-B CSV header has no `vertical_rate` column (looked for `vertical_rate`, `vertrate`)"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn files_are_read_whole() {
    let dir = std::env::temp_dir().join(format!("glidepath-atm-adsb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("states.csv");
    std::fs::write(&path, "timestamp,icao24,callsign,latitude,longitude,altitude,groundspeed,track,vertical_rate\n1458716400,a,N1AB,40,-75,1000,100,90,0\nx,a,N1AB,40,-75,1000,100,90,0\n").unwrap();
    let (tracks, errors) = read_adsb_csv(&path).unwrap();
    assert_eq!((tracks.len(), errors.len(), errors[0].line), (1, 1, 3));
    assert!(matches!(
        read_adsb_csv(&dir.join("absent.csv")),
        Err(AdsbError::Open { .. })
    ));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn hostile_bytes_never_panic() {
    // A small deterministic generator: random bytes, random fields, broken quotes.
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let header =
        b"timestamp,icao24,callsign,latitude,longitude,altitude,groundspeed,track,vertical_rate\n";
    let alphabet = b",\n\r\"0123456789.-eE NaNinf\xff\xfe\x00abc";
    for round in 0..300 {
        let len = (next() % 2_000) as usize;
        let mut input = if round % 3 == 0 {
            Vec::new()
        } else {
            header.to_vec()
        };
        for _ in 0..len {
            let r = next();
            input.push(if round % 2 == 0 {
                r as u8
            } else {
                alphabet[(r % alphabet.len() as u64) as usize]
            });
        }
        let unit = [
            TimestampUnit::Auto,
            TimestampUnit::Seconds,
            TimestampUnit::Nanoseconds,
        ][round % 3];
        if let Ok(reader) = AdsbReader::new(Cursor::new(input)) {
            for row in reader.with_timestamp_unit(unit).take(10_000) {
                match row {
                    Ok(t) => assert!(!t.vid.is_empty()),
                    Err(e) => assert!(e.line >= 1 && !e.what.is_empty(), "{e:?}"),
                }
            }
        }
    }
}

const HEADER: &str =
    "timestamp,icao24,callsign,latitude,longitude,altitude,groundspeed,track,vertical_rate\n";

/// Two rows of real-looking state vectors with their time written as `time`.
fn rows_with_times(times: [&str; 2]) -> String {
    format!(
        "{HEADER}{},4b1806,SWR12K,47.46,8.55,3500,180.0,280.5,-832\n{},4b1806,SWR12K,47.47,8.53,3300,175.5,281.0,-768\n",
        times[0], times[1]
    )
}

fn tracks(text: &str, unit: TimestampUnit) -> Vec<glidepath_atm::track::Track> {
    AdsbReader::new(Cursor::new(text.as_bytes().to_vec()))
        .unwrap()
        .with_timestamp_unit(unit)
        .map(|r| r.unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

/// Acceptance (issue 12): the same rows with their times in milliseconds, in ISO 8601
/// or in any other form an export writes give exactly the tracks of the rows in
/// seconds (`tests/recorded.rs` plays them through a run).
#[test]
fn every_timestamp_form_gives_the_same_tracks() {
    let seconds = tracks(
        &rows_with_times(["1533123000", "1533123000.5"]),
        TimestampUnit::Seconds,
    );
    assert_eq!(seconds[0].time, 1_533_123_000_000);
    assert_eq!(seconds[1].time, 1_533_123_000_500);
    for (times, unit) in [
        (["1533123000", "1533123000.5"], TimestampUnit::Auto),
        (["1533123000000", "1533123000500"], TimestampUnit::Auto),
        (
            ["1533123000000", "1533123000500"],
            TimestampUnit::Milliseconds,
        ),
        (
            ["1533123000000000", "1533123000500000"],
            TimestampUnit::Auto,
        ),
        (
            ["1533123000000000", "1533123000500000"],
            TimestampUnit::Microseconds,
        ),
        (
            ["1533123000000000000", "1533123000500000000"],
            TimestampUnit::Auto,
        ),
        (
            ["1533123000000000000", "1533123000500000000"],
            TimestampUnit::Nanoseconds,
        ),
        (
            ["2018-08-01T11:30:00Z", "2018-08-01T11:30:00.5Z"],
            TimestampUnit::Auto,
        ),
        (
            ["2018-08-01T13:30:00+02:00", "2018-08-01T13:30:00.500+02:00"],
            TimestampUnit::Auto,
        ),
        (
            [
                "2018-08-01 11:30:00+00:00",
                "2018-08-01 11:30:00.500000+00:00",
            ],
            TimestampUnit::Seconds,
        ),
    ] {
        assert_eq!(
            tracks(&rows_with_times(times), unit),
            seconds,
            "{times:?} read as {unit}"
        );
    }
}

#[test]
fn ambiguous_and_local_timestamps_are_refused_with_the_fix() {
    let rows: Vec<_> = AdsbReader::new(Cursor::new(rows_with_times(["12", "2018-08-01T11:30:00"])))
        .unwrap()
        .collect();
    let e = rows[0].as_ref().unwrap_err();
    assert_eq!(e.line, 2);
    assert!(
        e.what.contains("`timestamp` 12 is ambiguous") && e.what.contains("timestamp_unit"),
        "{e}"
    );
    let e = rows[1].as_ref().unwrap_err();
    assert!(e.what.contains("no UTC offset"), "{e}");
}

/// OpenSky's historical state vectors (`state_vectors_data4`, and the CSVs of its
/// datasets) in their own column names and SI units read as the same tracks as the
/// same data in glidepath's names and units.
#[test]
fn opensky_state_vectors_read_in_their_names_and_units() {
    let opensky = "time,icao24,lat,lon,velocity,heading,vertrate,callsign,onground,alert,spi,squawk,baroaltitude,geoaltitude,lastposupdate,lastcontact,hour\n\
                   1533123000,4b1806,47.46,8.55,92.6,280.5,-4.22656,SWR12K  ,false,false,false,1000,1066.8,1120.14,1533122999.9,1533123000.1,1533121200\n\
                   1533123010,4b1806,47.47,8.53,90.28,281.0,-3.90144,SWR12K  ,false,false,false,1000,1005.84,1059.18,1533123009.9,1533123010.1,1533121200\n";
    let native = format!(
        "{HEADER}1533123000,4b1806,SWR12K,47.46,8.55,3500,180.0,280.5,-832\n1533123010,4b1806,SWR12K,47.47,8.53,3300,175.49,281.0,-768\n"
    );
    let from_opensky = tracks(opensky, TimestampUnit::Auto);
    assert_eq!(from_opensky, tracks(&native, TimestampUnit::Auto));
    let t = &from_opensky[0];
    // 1,066.8 m = 3,500 ft; 92.6 m/s = 180.0 kt; -4.22656 m/s = -832 ft/min.
    assert_eq!((t.alt_ft, t.gs_kt, t.vs_fpm), (3_500.0, 180.0, -832.0));
    let reader = AdsbReader::new(Cursor::new(opensky)).unwrap();
    let described = reader.columns().describe().unwrap();
    for part in [
        "timestamp from `time`",
        "altitude from `baroaltitude` (m → ft)",
        "groundspeed from `velocity` (m/s → kt)",
        "vertical_rate from `vertrate` (m/s → ft/min)",
    ] {
        assert!(described.contains(part), "{described}");
    }
}

/// OpenSky writes state vectors without a position (before it has one for an
/// aircraft): they are bad rows, with their line and the column, never tracks at NaN.
/// An on-ground row has a real position (taxiing, holding) and reads as any other.
#[test]
fn rows_without_a_position_are_bad_rows_and_on_ground_rows_play() {
    let opensky = "time,icao24,lat,lon,velocity,heading,vertrate,callsign,onground,alert,spi,squawk,baroaltitude,geoaltitude,lastposupdate,lastcontact,hour\n\
                   1533123000,4b1806,,,92.6,280.5,-4.22656,SWR12K  ,false,false,false,1000,1066.8,1120.14,,1533123000.1,1533121200\n\
                   1533123010,4b1806,47.47,,90.28,281.0,-3.90144,SWR12K  ,false,false,false,1000,1005.84,1059.18,1533123009.9,1533123010.1,1533121200\n\
                   1533123020,4b1806,NaN,8.52,90.28,281.0,-3.90144,SWR12K  ,false,false,false,1000,1005.84,1059.18,1533123019.9,1533123020.1,1533121200\n\
                   1533123030,4b1806,47.48,null,90.28,281.0,-3.90144,SWR12K  ,false,false,false,1000,1005.84,1059.18,1533123029.9,1533123030.1,1533121200\n\
                   1533123040,4b1a2f,47.45,8.56,5.14,120.0,0.0,SWR15   ,true,false,false,2000,,,1533123039.9,1533123040.1,1533121200\n";
    let rows: Vec<_> = AdsbReader::new(Cursor::new(opensky)).unwrap().collect();
    assert_eq!(rows.len(), 5);
    let errors: Vec<String> = rows[..4]
        .iter()
        .map(|r| r.as_ref().unwrap_err().to_string())
        .collect();
    assert_eq!(
        errors,
        [
            "line 2: `lat` is missing: a row without a position is not played",
            "line 3: `lon` is missing: a row without a position is not played",
            "line 4: `lat` is missing: a row without a position is not played",
            "line 5: `lon` is missing: a row without a position is not played",
        ]
    );
    let on_ground = rows[4].as_ref().unwrap();
    assert_eq!(on_ground.vid, "SWR15");
    assert_eq!((on_ground.lat_deg, on_ground.lon_deg), (47.45, 8.56));
    // 5.14 m/s of taxiing is 9.99 kt; no altitude on the ground.
    assert_eq!(on_ground.gs_kt, 9.99);
    assert!(on_ground.alt_ft.is_nan());

    // glidepath's own names say the same with their own header names.
    let native = format!("{HEADER}1533123000,4b1806,SWR12K,,8.55,3500,180,280,-832\n");
    let err = read(native.as_bytes()).remove(0).unwrap_err();
    assert_eq!(err.line, 2);
    assert_eq!(
        err.what,
        "`latitude` is missing: a row without a position is not played"
    );
}

/// A whole file read for playback counts everything: rows, bad rows with their
/// lines, empty callsigns, and says how it read the timestamps.
#[test]
fn a_file_read_for_playback_counts_what_it_skips() {
    let dir = std::env::temp_dir().join(format!("glidepath-atm-adsb-file-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("states.csv");
    std::fs::write(
        &path,
        format!(
            "{HEADER}1533123000000,4b1806,SWR12K,47.46,8.55,3500,180,280,-832\n\
             1533123010000,4b1806,,47.47,8.53,3300,175,281,NaN\n\
             1533123020000,4b1806,SWR12K,north,8.53,3300,175,281,-768\n\
             12,4b1806,SWR12K,47.48,8.52,3100,170,281,null\n"
        ),
    )
    .unwrap();
    let file = AdsbFile::read(&path, TimestampUnit::Auto).unwrap();
    assert_eq!(
        (
            file.rows,
            file.tracks.len(),
            file.bad_rows,
            file.empty_callsigns
        ),
        (4, 2, 2, 1)
    );
    assert_eq!(file.tracks[1].vid, "4b1806", "the icao24 stands in");
    assert!(file.tracks[1].vs_fpm.is_nan());
    let lines: Vec<u64> = file.errors.iter().map(|e| e.line).collect();
    assert_eq!(lines, [4, 5]);
    assert_eq!(
        file.reading(TimestampUnit::Auto),
        "timestamps: Unix milliseconds (detected)"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The ADS-B CSV reader: free column order, extra columns, empty callsigns, bad rows
//! with their line numbers, a missing column, and hostile bytes.

use std::io::Cursor;

use glidepath_atm::{read_adsb_csv, AdsbError, AdsbReader};

fn read(text: &[u8]) -> Vec<Result<glidepath_atm::track::Track, glidepath_atm::CsvRowError>> {
    AdsbReader::new(Cursor::new(text.to_vec()))
        .unwrap()
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
        Err(AdsbError::MissingColumn(c)) => assert_eq!(c, "vertical_rate"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn files_are_read_whole() {
    let dir = std::env::temp_dir().join(format!("glidepath-atm-adsb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("states.csv");
    std::fs::write(&path, "timestamp,icao24,callsign,latitude,longitude,altitude,groundspeed,track,vertical_rate\n1,a,N1AB,40,-75,1000,100,90,0\nx,a,N1AB,40,-75,1000,100,90,0\n").unwrap();
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
        if let Ok(reader) = AdsbReader::new(Cursor::new(input)) {
            for row in reader.take(10_000) {
                match row {
                    Ok(t) => assert!(!t.vid.is_empty()),
                    Err(e) => assert!(e.line >= 1 && !e.what.is_empty(), "{e:?}"),
                }
            }
        }
    }
}

//! The US airport table the traffic generator draws its routes from: `data/airports-us.csv`
//! (1,900 airports with ICAO and IATA codes, from the MIT-licensed `airportsdata`
//! package), compiled into the crate and parsed once on first use.

use std::sync::OnceLock;

/// The airport file, compiled in.
const AIRPORTS_CSV: &str = include_str!("../../../data/airports-us.csv");

/// The columns the file must have, in any order.
const COLUMNS: [&str; 9] = [
    "icao",
    "iata",
    "name",
    "city",
    "state",
    "elevation_ft",
    "lat_deg",
    "lon_deg",
    "tz",
];

/// One airport.
#[derive(Clone, Debug, PartialEq)]
pub struct Airport {
    /// Four-letter ICAO code, e.g. `KSFO`.
    pub icao: String,
    /// Three-letter IATA code, e.g. `SFO`.
    pub iata: String,
    /// Airport name.
    pub name: String,
    /// City served.
    pub city: String,
    /// US state (full name).
    pub state: String,
    /// Field elevation, feet above mean sea level.
    pub elevation_ft: f64,
    /// Latitude, degrees north.
    pub lat_deg: f64,
    /// Longitude, degrees east (negative in the US).
    pub lon_deg: f64,
    /// IANA time zone, e.g. `America/Los_Angeles`.
    pub tz: String,
}

impl Airport {
    /// UTC offset in hours on a day of daylight saving time (the report's day,
    /// 23 March 2016, was one): known zones by name, others from the longitude.
    pub fn utc_offset_dst_h(&self) -> f64 {
        match self.tz.as_str() {
            "Pacific/Honolulu" => -10.0,
            "America/Adak" => -9.0,
            "America/Anchorage" | "America/Juneau" | "America/Nome" | "America/Sitka"
            | "America/Yakutat" | "America/Metlakatla" => -8.0,
            "America/Los_Angeles" | "America/Phoenix" => -7.0,
            "America/Denver" | "America/Boise" => -6.0,
            "America/Puerto_Rico" => -4.0,
            tz if tz.starts_with("America/Chicago")
                || tz == "America/Menominee"
                || tz.starts_with("America/North_Dakota") =>
            {
                -5.0
            }
            tz if tz == "America/New_York"
                || tz == "America/Detroit"
                || tz.starts_with("America/Indiana")
                || tz.starts_with("America/Kentucky") =>
            {
                -4.0
            }
            _ => (self.lon_deg / 15.0).round() + 1.0,
        }
    }
}

/// The airport file is malformed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AirportsError {
    /// A required column is missing from the header.
    #[error("airport table: missing column `{0}` in the header")]
    MissingColumn(&'static str),
    /// A row could not be read.
    #[error("airport table line {line}: {what}")]
    BadRow {
        /// 1-based line number in the file.
        line: u64,
        /// What is wrong.
        what: String,
    },
    /// The table has no airports.
    #[error("airport table has no airports")]
    Empty,
}

/// Parses an airport table in the format of `data/airports-us.csv` (header with the
/// columns `icao,iata,name,city,state,elevation_ft,lat_deg,lon_deg,tz` in any order).
pub fn parse_airports(text: &str) -> Result<Vec<Airport>, AirportsError> {
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header = reader
        .headers()
        .map_err(|e| AirportsError::BadRow {
            line: 1,
            what: e.to_string(),
        })?
        .clone();
    let mut index = [0usize; 9];
    for (slot, name) in index.iter_mut().zip(COLUMNS) {
        *slot = header
            .iter()
            .position(|h| h.trim().eq_ignore_ascii_case(name))
            .ok_or(AirportsError::MissingColumn(name))?;
    }
    let mut out = Vec::new();
    for row in reader.records() {
        let row = row.map_err(|e| AirportsError::BadRow {
            line: e.position().map_or(0, |p| p.line()),
            what: e.to_string(),
        })?;
        let line = row.position().map_or(0, |p| p.line());
        let field = |i: usize| -> Result<&str, AirportsError> {
            row.get(index[i])
                .map(str::trim)
                .ok_or_else(|| AirportsError::BadRow {
                    line,
                    what: format!("no `{}` field", COLUMNS[i]),
                })
        };
        let number =
            |i: usize, range: std::ops::RangeInclusive<f64>| -> Result<f64, AirportsError> {
                let text = field(i)?;
                match text.parse::<f64>() {
                    Ok(v) if range.contains(&v) => Ok(v),
                    _ => Err(AirportsError::BadRow {
                        line,
                        what: format!("`{}` is `{text}`, not a number in {range:?}", COLUMNS[i]),
                    }),
                }
            };
        out.push(Airport {
            icao: field(0)?.to_string(),
            iata: field(1)?.to_string(),
            name: field(2)?.to_string(),
            city: field(3)?.to_string(),
            state: field(4)?.to_string(),
            elevation_ft: number(5, -1500.0..=15000.0)?,
            lat_deg: number(6, -90.0..=90.0)?,
            lon_deg: number(7, -180.0..=180.0)?,
            tz: field(8)?.to_string(),
        });
    }
    if out.is_empty() {
        return Err(AirportsError::Empty);
    }
    Ok(out)
}

/// The 1,900 US airports of `data/airports-us.csv`, parsed on first use.
pub fn us_airports() -> Result<&'static [Airport], AirportsError> {
    static TABLE: OnceLock<Result<Vec<Airport>, AirportsError>> = OnceLock::new();
    TABLE
        .get_or_init(|| parse_airports(AIRPORTS_CSV))
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

/// Rough daily departures of the busiest US airports (the FAA's Core 30 and the next
/// tier, order of magnitude from public operations counts). The generator weighs
/// airline origins and destinations by these; airports not listed get a small weight.
pub(crate) const HUB_DEPARTURES: &[(&str, f64)] = &[
    ("ATL", 1200.0),
    ("ORD", 1200.0),
    ("DFW", 900.0),
    ("LAX", 950.0),
    ("DEN", 800.0),
    ("CLT", 750.0),
    ("LAS", 650.0),
    ("PHX", 600.0),
    ("SFO", 600.0),
    ("IAH", 650.0),
    ("MSP", 550.0),
    ("DTW", 550.0),
    ("SEA", 550.0),
    ("BOS", 550.0),
    ("EWR", 580.0),
    ("JFK", 620.0),
    ("LGA", 500.0),
    ("PHL", 540.0),
    ("MIA", 550.0),
    ("MCO", 440.0),
    ("FLL", 400.0),
    ("BWI", 350.0),
    ("DCA", 400.0),
    ("IAD", 420.0),
    ("SLC", 450.0),
    ("SAN", 280.0),
    ("TPA", 260.0),
    ("MDW", 330.0),
    ("HNL", 420.0),
    ("MEM", 330.0),
    ("AUS", 250.0),
    ("BNA", 280.0),
    ("MCI", 170.0),
    ("OAK", 200.0),
    ("PDX", 280.0),
    ("RDU", 230.0),
    ("SJC", 170.0),
    ("SMF", 170.0),
    ("STL", 260.0),
    ("MSY", 170.0),
    ("SAT", 160.0),
    ("CLE", 180.0),
    ("PIT", 170.0),
    ("CVG", 230.0),
    ("IND", 180.0),
    ("CMH", 150.0),
    ("SNA", 170.0),
    ("BUR", 110.0),
    ("HOU", 200.0),
    ("DAL", 190.0),
    ("ANC", 320.0),
    ("OGG", 150.0),
    ("ABQ", 120.0),
    ("BDL", 110.0),
    ("BUF", 90.0),
    ("JAX", 110.0),
    ("OMA", 90.0),
    ("OKC", 80.0),
    ("RSW", 110.0),
    ("SDF", 200.0),
    ("ELP", 70.0),
    ("TUS", 70.0),
    ("ONT", 90.0),
    ("MKE", 120.0),
    ("PBI", 90.0),
    ("RIC", 70.0),
    ("ORF", 70.0),
    ("CHS", 70.0),
    ("SAV", 60.0),
    ("BOI", 60.0),
    ("RNO", 60.0),
    ("GEG", 50.0),
    ("DSM", 50.0),
    ("GRR", 50.0),
    ("BHM", 50.0),
    ("LIT", 40.0),
    ("TUL", 50.0),
    ("ALB", 45.0),
    ("PVD", 50.0),
    ("SYR", 40.0),
    ("ROC", 40.0),
    ("MHT", 30.0),
    ("KOA", 60.0),
    ("LIH", 60.0),
    ("FAI", 50.0),
    ("JNU", 40.0),
    ("PSP", 50.0),
    ("LGB", 50.0),
    ("SRQ", 40.0),
    ("PNS", 40.0),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compiled_table_parses() {
        let a = us_airports().unwrap();
        assert_eq!(a.len(), 1900);
        let sfo = a.iter().find(|a| a.iata == "SFO").unwrap();
        assert!((sfo.lat_deg - 37.6).abs() < 0.1 && (sfo.lon_deg + 122.4).abs() < 0.1);
        // Every hub the generator weighs is in the table.
        for (code, _) in HUB_DEPARTURES {
            assert!(a.iter().any(|a| a.iata == *code), "{code} missing");
        }
        // Quoted names with commas survive.
        assert!(a.iter().any(|a| a.name == "Baton Rouge Metro, Ryan Field"));
    }

    #[test]
    fn malformed_tables_say_what_and_where() {
        assert_eq!(
            parse_airports("icao,iata\nKSFO,SFO\n"),
            Err(AirportsError::MissingColumn("name"))
        );
        let bad = "icao,iata,name,city,state,elevation_ft,lat_deg,lon_deg,tz\nKSFO,SFO,S,C,St,13,north,-122,America/Los_Angeles\n";
        match parse_airports(bad) {
            Err(AirportsError::BadRow { line: 2, what }) => {
                assert!(what.contains("lat_deg"), "{what}")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            parse_airports("icao,iata,name,city,state,elevation_ft,lat_deg,lon_deg,tz\n"),
            Err(AirportsError::Empty)
        );
    }
}

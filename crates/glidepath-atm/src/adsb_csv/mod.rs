//! A reader for recorded ADS-B state vectors in CSV (the shape OpenSky-style exports
//! have), turning each row into an SNDEM [`Track`] for playback.
//!
//! The header names the columns, in any order and any letter case; extra columns are
//! ignored. Required: `timestamp` (Unix seconds, may be fractional), `icao24`,
//! `callsign` (may be empty: the `icao24` is the vehicle id then), `latitude`,
//! `longitude`, `altitude` (ft), `groundspeed` (kt), `track` (deg) and
//! `vertical_rate` (ft/min). An empty numeric field is a missing value (NaN). A
//! malformed row yields a [`CsvRowError`] naming its line and what is wrong, and
//! reading goes on with the next row: the reader never panics, whatever the bytes.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::track::{Track, TrackMeta};

use crate::traffic::SNDEM_VERSION;

/// The required columns, in the order of [`Columns`].
const REQUIRED: [&str; 9] = [
    "timestamp",
    "icao24",
    "callsign",
    "latitude",
    "longitude",
    "altitude",
    "groundspeed",
    "track",
    "vertical_rate",
];
const TIMESTAMP: usize = 0;
const ICAO24: usize = 1;
const CALLSIGN: usize = 2;
const LATITUDE: usize = 3;

/// One row that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct CsvRowError {
    /// 1-based line number where the row starts.
    pub line: u64,
    /// What is wrong.
    pub what: String,
}

/// The file as a whole could not be read.
#[derive(Debug, thiserror::Error)]
pub enum AdsbError {
    /// The file could not be opened.
    #[error("cannot open ADS-B CSV {path}: {source}")]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The header has no column of this name.
    #[error("ADS-B CSV header has no `{0}` column")]
    MissingColumn(&'static str),
    /// The header itself could not be read.
    #[error("ADS-B CSV header: {0}")]
    Header(String),
}

/// Reads tracks from a CSV of ADS-B state vectors, one row at a time.
#[derive(Debug)]
pub struct AdsbReader<R: BufRead> {
    reader: csv::Reader<R>,
    columns: [usize; 9],
    meta: TrackMeta,
    record: csv::ByteRecord,
    done: bool,
}

impl<R: BufRead> AdsbReader<R> {
    /// Reads the header. Tracks get `meta` `src = "ADS-B CSV"`, `ver = "2.3"`,
    /// `run = "1A"`, `tpub = 0`; change it with [`AdsbReader::with_meta`].
    pub fn new(input: R) -> Result<AdsbReader<R>, AdsbError> {
        let mut reader = csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(true)
            .from_reader(input);
        let header = reader
            .byte_headers()
            .map_err(|e| AdsbError::Header(e.to_string()))?
            .clone();
        let names: Vec<String> = header
            .iter()
            .map(|h| String::from_utf8_lossy(h).trim().to_ascii_lowercase())
            .collect();
        let mut columns = [0usize; 9];
        for (slot, name) in columns.iter_mut().zip(REQUIRED) {
            // A byte-order mark before the first name is tolerated.
            *slot = names
                .iter()
                .position(|n| n.trim_start_matches('\u{feff}') == name)
                .ok_or(AdsbError::MissingColumn(name))?;
        }
        Ok(AdsbReader {
            reader,
            columns,
            meta: TrackMeta {
                src: "ADS-B CSV".to_string(),
                ver: SNDEM_VERSION.to_string(),
                run: "1A".to_string(),
                tpub: 0,
            },
            record: csv::ByteRecord::new(),
            done: false,
        })
    }

    /// Sets the metadata every track gets.
    pub fn with_meta(mut self, meta: TrackMeta) -> AdsbReader<R> {
        self.meta = meta;
        self
    }

    /// The next track, `None` at the end of the input.
    pub fn next_track(&mut self) -> Option<Result<Track, CsvRowError>> {
        if self.done {
            return None;
        }
        match self.reader.read_byte_record(&mut self.record) {
            Ok(false) => {
                self.done = true;
                None
            }
            Ok(true) => {
                let line = self.record.position().map_or(0, |p| p.line());
                Some(self.row().map_err(|what| CsvRowError { line, what }))
            }
            Err(e) => {
                let line = match e.kind() {
                    csv::ErrorKind::Io(_) => {
                        // The input itself failed: nothing more can be read.
                        self.done = true;
                        self.reader.position().line()
                    }
                    _ => e
                        .position()
                        .map_or_else(|| self.reader.position().line(), |p| p.line()),
                };
                Some(Err(CsvRowError {
                    line,
                    what: e.to_string(),
                }))
            }
        }
    }

    fn field(&self, column: usize) -> Result<&str, String> {
        let bytes = self.record.get(self.columns[column]).ok_or_else(|| {
            format!(
                "row has {} fields, so no `{}` (field {})",
                self.record.len(),
                REQUIRED[column],
                self.columns[column] + 1
            )
        })?;
        std::str::from_utf8(bytes)
            .map(str::trim)
            .map_err(|_| format!("`{}` is not UTF-8", REQUIRED[column]))
    }

    fn number(&self, column: usize) -> Result<f64, String> {
        let text = self.field(column)?;
        if text.is_empty() {
            return Ok(f64::NAN);
        }
        text.parse::<f64>().map_err(|_| {
            format!(
                "`{}` is `{}`, not a number",
                REQUIRED[column],
                shorten(text)
            )
        })
    }

    fn row(&self) -> Result<Track, String> {
        let timestamp = self.number(TIMESTAMP)?;
        if !timestamp.is_finite() {
            return Err("`timestamp` is empty or not finite".to_string());
        }
        let time_ms = timestamp * 1000.0;
        if time_ms.abs() > 9.0e15 {
            return Err(format!("`timestamp` {timestamp} is out of range"));
        }
        let icao24 = self.field(ICAO24)?;
        let callsign = self.field(CALLSIGN)?;
        let vid = if callsign.is_empty() {
            icao24
        } else {
            callsign
        };
        if vid.is_empty() {
            return Err("both `callsign` and `icao24` are empty".to_string());
        }
        let mut values = [0.0; 6];
        for (i, v) in values.iter_mut().enumerate() {
            *v = self.number(LATITUDE + i)?;
        }
        let [lat_deg, lon_deg, alt_ft, gs_kt, crs_deg, vs_fpm] = values;
        if lat_deg.abs() > 90.0 {
            return Err(format!("`latitude` {lat_deg} is outside -90..90"));
        }
        if lon_deg.abs() > 180.0 {
            return Err(format!("`longitude` {lon_deg} is outside -180..180"));
        }
        Ok(Track {
            vid: vid.to_string(),
            lat_deg,
            lon_deg,
            alt_ft,
            time: time_ms.round() as i64,
            gs_kt,
            crs_deg,
            vs_fpm,
            meta: self.meta.clone(),
        })
    }
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= 40 {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(40).collect::<String>())
    }
}

impl<R: BufRead> Iterator for AdsbReader<R> {
    type Item = Result<Track, CsvRowError>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_track()
    }
}

/// Reads a whole ADS-B CSV file: the tracks of the good rows and the errors of the bad
/// ones, in file order.
pub fn read_adsb_csv(path: &Path) -> Result<(Vec<Track>, Vec<CsvRowError>), AdsbError> {
    let file = File::open(path).map_err(|source| AdsbError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    let mut tracks = Vec::new();
    let mut errors = Vec::new();
    for row in AdsbReader::new(BufReader::new(file))? {
        match row {
            Ok(t) => tracks.push(t),
            Err(e) => errors.push(e),
        }
    }
    Ok((tracks, errors))
}

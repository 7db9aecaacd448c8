//! A reader for recorded ADS-B state vectors in CSV (the shape OpenSky and `traffic`
//! exports have), turning each row into an SNDEM [`Track`] for playback.
//!
//! The header names the columns, in any order and any letter case; extra columns are
//! ignored. Each quantity may go by the names of the common exports, with their units
//! (the alias table of `columns.rs`, [`Columns`]): glidepath's own `timestamp`,
//! `icao24`, `callsign` (may be empty: the `icao24` is the vehicle id then),
//! `latitude`, `longitude`, `altitude` (ft), `groundspeed` (kt), `track` (deg) and
//! `vertical_rate` (ft/min), or OpenSky's `time`, `lat`, `lon`, `baroaltitude` (m),
//! `velocity` (m/s), `heading`, `vertrate` (m/s), ... Timestamps are Unix seconds,
//! milliseconds, microseconds or nanoseconds, or ISO 8601 date-times with an offset,
//! told apart by the rule of `time.rs` ([`TimestampUnit`]). An empty numeric field (or
//! `NaN`, `null`) is a missing value (NaN), except the latitude and longitude: a row
//! without a position is a bad row. Other columns (OpenSky's `onground`, ...) are not
//! read, so on-ground rows play as any other. A malformed row yields a [`CsvRowError`]
//! naming its line and what is wrong, and reading goes on with the next row: the reader
//! never panics, whatever the bytes.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use crate::track::{Track, TrackMeta};

use crate::traffic::SNDEM_VERSION;

mod columns;
mod time;

use columns::{names_tried, CALLSIGN, ICAO24, LATITUDE, TIMESTAMP};
pub use columns::{Columns, Unit};
pub use time::{TimestampForm, TimestampUnit};

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
    /// The header has no column for this quantity under any of its names.
    #[error("ADS-B CSV header has no `{0}` column (looked for {names})", names = names_tried(.0))]
    MissingColumn(&'static str),
    /// The header itself could not be read.
    #[error("ADS-B CSV header: {0}")]
    Header(String),
}

/// One row read: its track, its line, and whether its callsign was empty (the track
/// then carries the `icao24` as its vehicle id).
#[derive(Clone, Debug, PartialEq)]
pub struct AdsbRow {
    /// The track.
    pub track: Track,
    /// 1-based line number where the row starts.
    pub line: u64,
    /// The row's `callsign` was empty, so `track.vid` is its `icao24`.
    pub callsign_empty: bool,
    /// How the row's timestamp was read.
    pub timestamp: TimestampForm,
}

/// Reads tracks from a CSV of ADS-B state vectors, one row at a time.
#[derive(Debug)]
pub struct AdsbReader<R: BufRead> {
    reader: csv::Reader<R>,
    columns: Columns,
    unit: TimestampUnit,
    meta: TrackMeta,
    record: csv::ByteRecord,
    done: bool,
}

impl<R: BufRead> AdsbReader<R> {
    /// Reads the header. Tracks get `meta` `src = "ADS-B CSV"`, `ver = "2.3"`,
    /// `run = "1A"`, `tpub = 0`; change it with [`AdsbReader::with_meta`]. Numeric
    /// timestamps follow the automatic rule ([`TimestampUnit::Auto`]); change it with
    /// [`AdsbReader::with_timestamp_unit`].
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
            .map(|h| {
                // A byte-order mark before the first name is tolerated.
                String::from_utf8_lossy(h)
                    .trim_start_matches('\u{feff}')
                    .trim()
                    .to_ascii_lowercase()
            })
            .collect();
        let columns = Columns::find(&names).map_err(AdsbError::MissingColumn)?;
        Ok(AdsbReader {
            reader,
            columns,
            unit: TimestampUnit::Auto,
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

    /// Sets the unit of numeric timestamps.
    pub fn with_timestamp_unit(mut self, unit: TimestampUnit) -> AdsbReader<R> {
        self.unit = unit;
        self
    }

    /// Which column each quantity is read from, and in what unit.
    pub fn columns(&self) -> &Columns {
        &self.columns
    }

    /// The next track, `None` at the end of the input.
    pub fn next_track(&mut self) -> Option<Result<Track, CsvRowError>> {
        self.next_row().map(|r| r.map(|row| row.track))
    }

    /// The next row with what is known about it, `None` at the end of the input.
    pub fn next_row(&mut self) -> Option<Result<AdsbRow, CsvRowError>> {
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
                Some(self.row(line).map_err(|what| CsvRowError { line, what }))
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

    fn field(&self, q: usize) -> Result<&str, String> {
        let index = self.columns.index(q);
        let bytes = self.record.get(index).ok_or_else(|| {
            format!(
                "row has {} fields, so no `{}` (field {})",
                self.record.len(),
                self.columns.header(q),
                index + 1
            )
        })?;
        std::str::from_utf8(bytes)
            .map(str::trim)
            .map_err(|_| format!("`{}` is not UTF-8", self.columns.header(q)))
    }

    /// A number in the track's unit; NaN when the field is empty, `NaN` or `null`.
    fn number(&self, q: usize) -> Result<f64, String> {
        let text = self.field(q)?;
        if text.is_empty() || is_null(text) {
            return Ok(f64::NAN);
        }
        text.parse::<f64>()
            .map(|v| self.columns.unit(q).convert(v))
            .map_err(|_| {
                format!(
                    "`{}` is `{}`, not a number",
                    self.columns.header(q),
                    shorten(text)
                )
            })
    }

    fn row(&self, line: u64) -> Result<AdsbRow, String> {
        let (time, form) =
            time::parse_timestamp_ms(self.field(TIMESTAMP)?, self.unit).map_err(|e| {
                e.replace(
                    "`timestamp`",
                    &format!("`{}`", self.columns.header(TIMESTAMP)),
                )
            })?;
        let icao24 = self.field(ICAO24)?;
        let callsign = self.field(CALLSIGN)?;
        let callsign = if is_null(callsign) { "" } else { callsign };
        let vid = if callsign.is_empty() {
            icao24
        } else {
            callsign
        };
        if vid.is_empty() || is_null(vid) {
            return Err("both `callsign` and `icao24` are empty".to_string());
        }
        let mut values = [0.0; 6];
        for (i, v) in values.iter_mut().enumerate() {
            *v = self.number(LATITUDE + i)?;
        }
        let [lat_deg, lon_deg, alt_ft, gs_kt, crs_deg, vs_fpm] = values;
        // A state vector without a position (OpenSky writes them before its first
        // position of an aircraft, and when positions stop) places no track: it is a
        // bad row, not a message at NaN.
        for (q, v) in [(LATITUDE, lat_deg), (LATITUDE + 1, lon_deg)] {
            if v.is_nan() {
                return Err(format!(
                    "`{}` is missing: a row without a position is not played",
                    self.columns.header(q)
                ));
            }
        }
        if lat_deg.abs() > 90.0 {
            return Err(format!(
                "`{}` {lat_deg} is outside -90..90",
                self.columns.header(LATITUDE)
            ));
        }
        if lon_deg.abs() > 180.0 {
            return Err(format!(
                "`{}` {lon_deg} is outside -180..180",
                self.columns.header(LATITUDE + 1)
            ));
        }
        Ok(AdsbRow {
            track: Track {
                vid: vid.to_string(),
                lat_deg,
                lon_deg,
                alt_ft,
                time,
                gs_kt,
                crs_deg,
                vs_fpm,
                meta: self.meta.clone(),
            },
            line,
            callsign_empty: callsign.is_empty(),
            timestamp: form,
        })
    }
}

/// The spellings of a missing value that exports write: `NaN`, `null`, `None`, `NA`.
fn is_null(text: &str) -> bool {
    ["nan", "null", "none", "na"]
        .iter()
        .any(|n| text.eq_ignore_ascii_case(n))
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
    let file = open(path)?;
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

fn open(path: &Path) -> Result<File, AdsbError> {
    File::open(path).map_err(|source| AdsbError::Open {
        path: path.to_path_buf(),
        source,
    })
}

/// A whole ADS-B CSV file read for playback, with everything a report says about it.
#[derive(Clone, Debug, Default)]
pub struct AdsbFile {
    /// The tracks of the good rows, in file order.
    pub tracks: Vec<Track>,
    /// Rows read, good and bad.
    pub rows: u64,
    /// Rows skipped for a bad value.
    pub bad_rows: u64,
    /// The first [`AdsbFile::ERRORS_KEPT`] of them.
    pub errors: Vec<CsvRowError>,
    /// Good rows whose callsign was empty (played under their `icao24`).
    pub empty_callsigns: u64,
    /// Good rows per way their timestamp was read.
    pub timestamp_forms: Vec<(TimestampForm, u64)>,
    /// The columns read under another name or unit ([`Columns::describe`]).
    pub columns: Option<String>,
}

impl AdsbFile {
    /// How many row errors are kept (all are counted).
    pub const ERRORS_KEPT: usize = 20;

    /// Reads `path`, taking numeric timestamps in `unit`.
    pub fn read(path: &Path, unit: TimestampUnit) -> Result<AdsbFile, AdsbError> {
        let mut reader = AdsbReader::new(BufReader::new(open(path)?))?.with_timestamp_unit(unit);
        let mut file = AdsbFile {
            columns: reader.columns().describe(),
            ..AdsbFile::default()
        };
        while let Some(row) = reader.next_row() {
            file.rows += 1;
            match row {
                Ok(row) => {
                    file.empty_callsigns += u64::from(row.callsign_empty);
                    match file
                        .timestamp_forms
                        .iter_mut()
                        .find(|(f, _)| *f == row.timestamp)
                    {
                        Some((_, n)) => *n += 1,
                        None => file.timestamp_forms.push((row.timestamp, 1)),
                    }
                    file.tracks.push(row.track);
                }
                Err(e) => {
                    file.bad_rows += 1;
                    if file.errors.len() < Self::ERRORS_KEPT {
                        file.errors.push(e);
                    }
                }
            }
        }
        Ok(file)
    }

    /// How the file was read, in words: the timestamps' form and the columns read
    /// under another name or unit, e.g. "timestamps: Unix milliseconds (detected);
    /// altitude from `baroaltitude` (m → ft)".
    pub fn reading(&self, unit: TimestampUnit) -> String {
        let forms: Vec<String> = self
            .timestamp_forms
            .iter()
            .map(|(form, n)| {
                let what = match form {
                    TimestampForm::Epoch(u) => u.describe().to_string(),
                    TimestampForm::DateTime => "ISO 8601 date-times".to_string(),
                };
                let how = match (form, unit) {
                    (TimestampForm::Epoch(_), TimestampUnit::Auto) => " (detected)",
                    (TimestampForm::Epoch(_), _) => " (timestamp_unit)",
                    _ => "",
                };
                if self.timestamp_forms.len() > 1 {
                    format!("{what}{how} in {n} rows")
                } else {
                    format!("{what}{how}")
                }
            })
            .collect();
        let mut out = if forms.is_empty() {
            "timestamps: none read".to_string()
        } else {
            format!("timestamps: {}", forms.join(", "))
        };
        if let Some(c) = &self.columns {
            out.push_str("; ");
            out.push_str(c);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::columns::QUANTITIES;

    #[test]
    fn the_alias_table_starts_with_glidepaths_own_names() {
        let names: Vec<&str> = QUANTITIES.iter().map(|q| q.aliases[0].0).collect();
        assert_eq!(
            names,
            [
                "timestamp",
                "icao24",
                "callsign",
                "latitude",
                "longitude",
                "altitude",
                "groundspeed",
                "track",
                "vertical_rate"
            ]
        );
        assert!(QUANTITIES.iter().all(|q| q.name == q.aliases[0].0));
    }
}

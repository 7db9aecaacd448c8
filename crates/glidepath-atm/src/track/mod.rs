//! The SNDEM track message (ATM TestBed report, section 3.3 and Table 4.1) and its two
//! serialisations: JSON exactly as the TestBed writes it, and compact binary.
//!
//! JSON is written field for field in the report's order with Java's `Double.toString`
//! number format (`6.0`, `-122.38169`, `1.0E7`) and `NaN` for missing numbers, so the
//! sample of Table 4.1 comes out byte for byte. The reader accepts that output, any
//! field order, whitespace, unknown fields (skipped) and missing numbers (NaN).
//!
//! The type is here; its forms live beside it: [`Track::write_sndem_json`] in
//! `sndem_write.rs`, [`Track::read_sndem_json`] in `sndem_read.rs`, and
//! [`Track::encode_binary`] / [`Track::decode_binary`] in `binary.rs`. The
//! implementation the JSON writer and reader replaced is kept under `tests/support/`
//! as the oracle they are checked against (`tests/track_oracle.rs`).

mod binary;
mod sndem_read;
mod sndem_write;
#[cfg(test)]
#[path = "../../tests/support/doubles.rs"]
mod test_doubles;

pub use sndem_write::write_java_double;

/// The metadata section of an SNDEM message.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct TrackMeta {
    /// The publishing component, e.g. `ATAC Data.1`.
    pub src: String,
    /// The SNDEM format version, e.g. `2.3`.
    pub ver: String,
    /// The run name, e.g. `1A`.
    pub run: String,
    /// Publication time, milliseconds since the Unix epoch (T_P).
    pub tpub: i64,
}

/// One track: a vehicle's position and state at one time. Missing numbers are NaN.
#[derive(Clone, Debug, Default)]
pub struct Track {
    /// Vehicle identifier (the callsign), also the message key.
    pub vid: String,
    /// Latitude in degrees (WGS 84).
    pub lat_deg: f64,
    /// Longitude in degrees (WGS 84).
    pub lon_deg: f64,
    /// Altitude in feet.
    pub alt_ft: f64,
    /// When the track was recorded, milliseconds since the Unix epoch.
    pub time: i64,
    /// Ground speed in knots.
    pub gs_kt: f64,
    /// Course over the ground in degrees from true north.
    pub crs_deg: f64,
    /// Vertical speed in feet per minute (NaN when the source has none).
    pub vs_fpm: f64,
    /// Who published the message, and when.
    pub meta: TrackMeta,
}

/// Equality that treats NaN as equal to NaN (missing equals missing), bit for bit.
impl PartialEq for Track {
    fn eq(&self, o: &Self) -> bool {
        let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
        self.vid == o.vid
            && same(self.lat_deg, o.lat_deg)
            && same(self.lon_deg, o.lon_deg)
            && same(self.alt_ft, o.alt_ft)
            && self.time == o.time
            && same(self.gs_kt, o.gs_kt)
            && same(self.crs_deg, o.crs_deg)
            && same(self.vs_fpm, o.vs_fpm)
            && self.meta == o.meta
    }
}

impl Track {
    /// The message key: the vehicle identifier.
    pub fn key(&self) -> &str {
        &self.vid
    }
}

/// Exact powers of ten as doubles (10^22 is the largest exactly representable).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

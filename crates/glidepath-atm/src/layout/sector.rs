//! A monitor's or recorder's sector: a latitude/longitude box and an optional
//! altitude band, taken through data distribution management. The block subscribes to
//! the track messages with a region of the air-traffic FOM's `Latitude`, `Longitude`
//! and `FlightLevel` dimensions, every traffic block linked to it sends each track
//! with the track's point as its region, and the RTI delivers only what overlaps (on
//! `inproc`, the sender's side drops the rest).
//!
//! The dimensions count in whole units of their normalization (the FOM's
//! `normalization` text): thousandths of a degree for latitude (`(lat + 90) * 1000`)
//! and longitude (`(lon + 180) * 1000`), flight levels (hundreds of feet) for
//! altitude. A sector's bounds are normalized the same way, lower bound included and
//! upper excluded, so "in the sector" ([`Sector::contains`]) is exactly the DDM
//! overlap of the track's point `[v, v + 1)` with the sector's ranges.

use serde::Deserialize;

/// The `Latitude` dimension's upper bound (`foms/air-traffic.xml`).
pub const LATITUDE_BOUND: u64 = 180_000;
/// The `Longitude` dimension's upper bound.
pub const LONGITUDE_BOUND: u64 = 360_000;
/// The `FlightLevel` dimension's upper bound.
pub const FLIGHT_LEVEL_BOUND: u64 = 1_000;

/// A latitude/longitude box and an optional altitude band (`sector = { lat = [..],
/// lon = [..], alt_ft = [..] }` in a layout).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sector {
    /// South and north edges, degrees (`[south, north)`).
    pub lat_deg: [f64; 2],
    /// West and east edges, degrees (`[west, east)`).
    pub lon_deg: [f64; 2],
    /// Bottom and top, feet (`[bottom, top)`); `None`: every altitude.
    pub alt_ft: Option<[f64; 2]>,
}

/// A position normalized on the three dimensions (altitude `None` when unknown).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Point {
    /// On `Latitude`.
    pub lat: u64,
    /// On `Longitude`.
    pub lon: u64,
    /// On `FlightLevel`; `None` for a track without altitude, which no altitude band
    /// excludes (its region lacks the dimension, and overlap tests only the
    /// dimensions both regions have).
    pub fl: Option<u64>,
}

fn scaled(v: f64, offset: f64, scale: f64, bound: u64) -> u64 {
    if v.is_nan() {
        return 0;
    }
    ((v + offset) * scale)
        .floor()
        .clamp(0.0, (bound - 1) as f64) as u64
}

/// A latitude in degrees on the `Latitude` dimension (NaN: 0).
pub fn latitude(deg: f64) -> u64 {
    scaled(deg, 90.0, 1000.0, LATITUDE_BOUND)
}

/// A longitude in degrees on the `Longitude` dimension (NaN: 0).
pub fn longitude(deg: f64) -> u64 {
    scaled(deg, 180.0, 1000.0, LONGITUDE_BOUND)
}

/// An altitude in feet on the `FlightLevel` dimension; `None` when unknown (NaN).
pub fn flight_level(ft: f64) -> Option<u64> {
    (!ft.is_nan()).then(|| scaled(ft, 0.0, 0.01, FLIGHT_LEVEL_BOUND))
}

impl Point {
    /// A track's position.
    pub fn of(lat_deg: f64, lon_deg: f64, alt_ft: f64) -> Point {
        Point {
            lat: latitude(lat_deg),
            lon: longitude(lon_deg),
            fl: flight_level(alt_ft),
        }
    }
}

impl Sector {
    /// The sector's ranges on `Latitude`, `Longitude` and (with a band)
    /// `FlightLevel`, `[lower, upper)` each.
    pub fn ranges(&self) -> ([u64; 2], [u64; 2], Option<[u64; 2]>) {
        (
            [latitude(self.lat_deg[0]), latitude(self.lat_deg[1])],
            [longitude(self.lon_deg[0]), longitude(self.lon_deg[1])],
            self.alt_ft
                .map(|[b, t]| [flight_level(b).unwrap_or(0), flight_level(t).unwrap_or(0)]),
        )
    }

    /// Whether a track at `p` is in the sector: the DDM overlap of its point with the
    /// sector's ranges.
    pub fn contains(&self, p: Point) -> bool {
        let inside = |v: u64, [lo, hi]: [u64; 2]| lo <= v && v < hi;
        let (lat, lon, fl) = self.ranges();
        inside(p.lat, lat)
            && inside(p.lon, lon)
            && fl.is_none_or(|band| p.fl.is_none_or(|v| inside(v, band)))
    }
}

/// A sector as written, every field optional so validation says what is missing.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSector {
    pub(super) lat: Option<Vec<f64>>,
    pub(super) lon: Option<Vec<f64>>,
    pub(super) alt_ft: Option<Vec<f64>>,
}

impl RawSector {
    /// The sector, or the property at fault (`lat`, `lon`, `alt_ft`) and why.
    pub(super) fn check(&self) -> Result<Sector, (&'static str, String)> {
        let pair = |name: &'static str, v: &Option<Vec<f64>>, min: f64, max: f64| {
            let Some(v) = v else {
                return Err((name, "missing required property".to_string()));
            };
            match v.as_slice() {
                &[lo, hi] if lo.is_finite() && hi.is_finite() && min <= lo && lo < hi && hi <= max => {
                    Ok([lo, hi])
                }
                other => Err((
                    name,
                    format!("must be [lower, upper] with {min} <= lower < upper <= {max}, got {other:?}"),
                )),
            }
        };
        Ok(Sector {
            lat_deg: pair("lat", &self.lat, -90.0, 90.0)?,
            lon_deg: pair("lon", &self.lon, -180.0, 180.0)?,
            alt_ft: match &self.alt_ft {
                None => None,
                some => Some(pair("alt_ft", some, 0.0, 100_000.0)?),
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contains_is_the_overlap_of_normalized_ranges() {
        let s = Sector {
            lat_deg: [37.0, 38.5],
            lon_deg: [-123.0, -121.0],
            alt_ft: Some([10_000.0, 20_000.0]),
        };
        assert!(
            s.contains(Point::of(37.0, -123.0, 10_000.0)),
            "lower bounds are in"
        );
        assert!(
            !s.contains(Point::of(38.5, -122.0, 15_000.0)),
            "upper bounds are out"
        );
        assert!(s.contains(Point::of(38.4999, -121.0001, 19_999.0)));
        assert!(!s.contains(Point::of(37.5, -122.0, 20_000.0)));
        assert!(
            s.contains(Point::of(37.5, -122.0, f64::NAN)),
            "no altitude: no band excludes it"
        );
        assert!(!s.contains(Point::of(36.9999, -122.0, 15_000.0)));
        assert_eq!(latitude(90.0), LATITUDE_BOUND - 1);
        assert_eq!(longitude(-180.0), 0);
        assert_eq!(flight_level(45_000.0), Some(450));
    }
}

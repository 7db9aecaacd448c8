//! The seeded traffic day: flights between real US airports, flown as great circles
//! with a climb, a cruise and a descent, reported by surveillance feeds that sweep at
//! their own period. See the crate documentation for the model and its calibration.
//!
//! Here: the configuration, the shared flight model and its kinematics;
//! `traffic/generate.rs` draws the day's flights between airports,
//! `traffic/source.rs` is [`TrafficDay`], the per-second source of tracks.

mod generate;
mod source;

use std::f64::consts::PI;

use crate::airports::{Airport, AirportsError};
use crate::track::Track;

pub use source::TrafficDay;

/// Seconds in the simulated day.
pub const DAY_S: u32 = 86_400;

/// The SNDEM format version written in every track's metadata (Table 4.1).
pub const SNDEM_VERSION: &str = "2.3";

/// 2026-01-01T00:00:00Z in milliseconds since the Unix epoch.
pub const EPOCH_2026_MS: i64 = 1_767_225_600_000;

/// Earth radius in nautical miles.
const EARTH_RADIUS_NM: f64 = 3440.065;

/// How one generated day is set up.
#[derive(Clone, Debug, PartialEq)]
pub struct TrafficConfig {
    /// Seed of every random choice: the same seed gives the same tracks, bit for bit.
    /// Default 1.
    pub seed: u64,
    /// First simulated second generated (inclusive). Default 0 (00:00:00Z).
    pub start_s: u32,
    /// Last simulated second generated (exclusive), at most 86,400. Default 86,400, the
    /// whole day.
    pub end_s: u32,
    /// Scale of the flight count: 1.0 is the day calibrated to the report's Table 4.2
    /// (about 43.3 million tracks), 0.1 a tenth of the flights. Default 1.0.
    pub density: f64,
    /// `meta.src` of every track. Default `ATAC Data.1`, the report's main publisher.
    pub src: String,
    /// `meta.run` of every track. Default `1A`, the report's baseline run.
    pub run: String,
    /// Wall-clock time of simulated second 0, milliseconds since the Unix epoch.
    /// Default 2026-01-01T00:00:00Z, so `time` has 13 digits as in Table 4.1.
    pub epoch_ms: i64,
}

impl Default for TrafficConfig {
    fn default() -> Self {
        TrafficConfig {
            seed: 1,
            start_s: 0,
            end_s: DAY_S,
            density: 1.0,
            src: "ATAC Data.1".to_string(),
            run: "1A".to_string(),
            epoch_ms: EPOCH_2026_MS,
        }
    }
}

/// Why a traffic day could not be set up.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TrafficError {
    /// The window is empty or reversed.
    #[error("traffic window is empty: start_s ({start_s}) must be before end_s ({end_s})")]
    EmptyWindow {
        /// The configured start.
        start_s: u32,
        /// The configured end.
        end_s: u32,
    },
    /// The window reaches past the end of the day.
    #[error("traffic window ends at second {end_s}, past the end of the day (86400)")]
    PastEndOfDay {
        /// The configured end.
        end_s: u32,
    },
    /// The density is not a positive finite number.
    #[error("traffic density must be a positive finite number, got {density}")]
    BadDensity {
        /// The configured density.
        density: f64,
    },
    /// The compiled airport table could not be read.
    #[error(transparent)]
    Airports(#[from] AirportsError),
}

/// One flight: route, vertical and speed profile, callsign and report schedule. Times
/// are seconds from the start of the simulated day (negative for yesterday's flights).
#[derive(Clone, Debug)]
struct Flight {
    dep_s: f64,
    arr_s: f64,
    /// Origin as a unit vector and the unit tangent toward the destination.
    a: [f64; 3],
    u: [f64; 3],
    elev_o_ft: f64,
    alt_cruise_ft: f64,
    /// Speeds in nautical miles per second.
    v0_nm_s: f64,
    vc_nm_s: f64,
    climb_s: f64,
    cruise_s: f64,
    descent_s: f64,
    climb_nm: f64,
    cruise_nm: f64,
    climb_ft_s: f64,
    descent_ft_s: f64,
    /// Whether the feed reports a vertical rate (radar feeds do not: NaN).
    report_vs: bool,
    /// Whether positions have 6 decimals (some ADS-B feeds) rather than 5.
    fine: bool,
    period_s: u32,
    phase_s: u32,
    offset_ms: u32,
    callsign: String,
}

/// Latitude, longitude, altitude, ground speed, course, vertical rate.
type TrackFields = (f64, f64, f64, f64, f64, f64);

fn unit_vector(lat_deg: f64, lon_deg: f64) -> [f64; 3] {
    let (sl, cl) = lat_deg.to_radians().sin_cos();
    let (so, co) = lon_deg.to_radians().sin_cos();
    [cl * co, cl * so, sl]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn central_angle(a: &Airport, b: &Airport) -> f64 {
    dot(
        unit_vector(a.lat_deg, a.lon_deg),
        unit_vector(b.lat_deg, b.lon_deg),
    )
    .clamp(-1.0, 1.0)
    .acos()
}

fn round_to(x: f64, scale: f64) -> f64 {
    (x * scale).round() / scale
}

impl Flight {
    /// Position and state `tau_s` seconds after departure, rounded the way the
    /// surveillance data is: 5 decimals of a degree, whole feet, knots and degrees.
    #[inline]
    fn track_at(&self, tau_s: f64) -> TrackFields {
        let (s_nm, v_nm_s, alt_ft, vs_fpm) = if tau_s < self.climb_s {
            let s = self.v0_nm_s * tau_s
                + (self.vc_nm_s - self.v0_nm_s) * tau_s * tau_s / (2.0 * self.climb_s);
            let v = self.v0_nm_s + (self.vc_nm_s - self.v0_nm_s) * tau_s / self.climb_s;
            (
                s,
                v,
                self.elev_o_ft + self.climb_ft_s * tau_s,
                self.climb_ft_s * 60.0,
            )
        } else if tau_s < self.climb_s + self.cruise_s {
            (
                self.climb_nm + self.vc_nm_s * (tau_s - self.climb_s),
                self.vc_nm_s,
                self.alt_cruise_ft,
                0.0,
            )
        } else {
            let t = (tau_s - self.climb_s - self.cruise_s).min(self.descent_s);
            let s = self.climb_nm + self.cruise_nm + self.vc_nm_s * t
                - (self.vc_nm_s - self.v0_nm_s) * t * t / (2.0 * self.descent_s);
            let v = self.vc_nm_s - (self.vc_nm_s - self.v0_nm_s) * t / self.descent_s;
            (
                s,
                v,
                self.alt_cruise_ft - self.descent_ft_s * t,
                -self.descent_ft_s * 60.0,
            )
        };
        let (sin_t, cos_t) = (s_nm / EARTH_RADIUS_NM).sin_cos();
        let (a, u) = (self.a, self.u);
        let p = [
            a[0] * cos_t + u[0] * sin_t,
            a[1] * cos_t + u[1] * sin_t,
            a[2] * cos_t + u[2] * sin_t,
        ];
        let d = [
            u[0] * cos_t - a[0] * sin_t,
            u[1] * cos_t - a[1] * sin_t,
            u[2] * cos_t - a[2] * sin_t,
        ];
        let cos_lat = (p[0] * p[0] + p[1] * p[1]).sqrt();
        let lat = p[2].clamp(-1.0, 1.0).asin();
        let lon = p[1].atan2(p[0]);
        // North and east at p, from p itself (no more trigonometry).
        let (sin_lon, cos_lon) = if cos_lat > 1e-12 {
            (p[1] / cos_lat, p[0] / cos_lat)
        } else {
            (0.0, 1.0)
        };
        let north = -p[2] * cos_lon * d[0] - p[2] * sin_lon * d[1] + cos_lat * d[2];
        let east = -sin_lon * d[0] + cos_lon * d[1];
        let mut crs = east.atan2(north).to_degrees();
        if crs < 0.0 {
            crs += 360.0;
        }
        if self.report_vs {
            let places = if self.fine { 1e6 } else { 1e5 };
            // ADS-B resolution: 5 or 6 decimals of a degree, course to a hundredth, speed to
            // a tenth, vertical rate in steps of 64 ft/min.
            if crs >= 359.995 {
                crs -= 360.0;
            }
            (
                round_to(lat * (180.0 / PI), places),
                round_to(lon * (180.0 / PI), places),
                alt_ft.round(),
                round_to(v_nm_s * 3600.0, 10.0),
                round_to(crs, 100.0),
                (vs_fpm / 64.0).round() * 64.0,
            )
        } else {
            // Radar resolution: 5 decimals of a degree, whole knots and degrees, no
            // vertical rate.
            let mut crs = crs.round();
            if crs >= 360.0 {
                crs -= 360.0;
            }
            (
                round_to(lat * (180.0 / PI), 1e5),
                round_to(lon * (180.0 / PI), 1e5),
                alt_ft.round(),
                (v_nm_s * 3600.0).round(),
                crs,
                f64::NAN,
            )
        }
    }
}

/// The length of a track message as the report counts it (section 4, Table 4.1): the
/// key (the callsign) plus the SNDEM JSON payload. `scratch` is reused.
pub fn message_len(track: &Track, scratch: &mut Vec<u8>) -> usize {
    scratch.clear();
    track.write_sndem_json(scratch);
    track.key().len() + scratch.len()
}

//! [`TrafficDay`]: the per-second source that flies the generated flights and emits
//! the tracks each feed reports in a second, through a timing wheel.

use crate::airports::us_airports;
use crate::track::{Track, TrackMeta};

use super::generate::generate_flights;
use super::{Flight, TrackFields, TrafficConfig, TrafficError, DAY_S, SNDEM_VERSION};

/// Slots of the report timing wheel: more than twice the longest report period.
const WHEEL_SLOTS: usize = 128;

/// A generated day of US air traffic, read second by second.
#[derive(Debug)]
pub struct TrafficDay {
    config: TrafficConfig,
    /// Sorted by departure.
    flights: Vec<Flight>,
    /// Arrival seconds, sorted, for the airborne count.
    arrivals_s: Vec<f64>,
    next_departure: usize,
    next_arrival: usize,
    wheel: Vec<Vec<u32>>,
    scratch: Vec<u32>,
    /// The next second to process.
    cursor_s: u32,
    airborne: usize,
}

impl TrafficDay {
    /// Generates the day's flights (about 34,000 at density 1.0; a few tens of
    /// milliseconds). Tracks are computed lazily by [`TrafficDay::second`].
    pub fn new(config: TrafficConfig) -> Result<TrafficDay, TrafficError> {
        if config.end_s > DAY_S {
            return Err(TrafficError::PastEndOfDay {
                end_s: config.end_s,
            });
        }
        if config.start_s >= config.end_s {
            return Err(TrafficError::EmptyWindow {
                start_s: config.start_s,
                end_s: config.end_s,
            });
        }
        if !(config.density.is_finite() && config.density > 0.0) {
            return Err(TrafficError::BadDensity {
                density: config.density,
            });
        }
        let airports = us_airports()?;
        let mut flights = generate_flights(airports, &config);
        flights.sort_by(|a, b| a.dep_s.total_cmp(&b.dep_s));
        let mut arrivals_s: Vec<f64> = flights.iter().map(|f| f.arr_s).collect();
        arrivals_s.sort_by(f64::total_cmp);
        Ok(TrafficDay {
            cursor_s: config.start_s,
            config,
            flights,
            arrivals_s,
            next_departure: 0,
            next_arrival: 0,
            wheel: vec![Vec::new(); WHEEL_SLOTS],
            scratch: Vec::new(),
            airborne: 0,
        })
    }

    /// Appends the tracks reported during simulated second `t` to `out`.
    ///
    /// `start_s <= t < end_s`, and seconds are asked in increasing order (a skipped
    /// second's reports are dropped; asking a second again or going back yields
    /// nothing). `Track.time` is `epoch_ms + t·1000` plus the flight's fixed offset
    /// within the sweep (0–999 ms); `meta.tpub` is left 0 for the publisher to stamp.
    pub fn second(&mut self, t: u32, out: &mut Vec<Track>) {
        if !self.skip_to(t) {
            return;
        }
        let meta = TrackMeta {
            src: self.config.src.clone(),
            ver: SNDEM_VERSION.to_string(),
            run: self.config.run.clone(),
            tpub: 0,
        };
        self.step(
            t,
            |f, time, (lat_deg, lon_deg, alt_ft, gs_kt, crs_deg, vs_fpm)| {
                out.push(Track {
                    vid: f.callsign.clone(),
                    lat_deg,
                    lon_deg,
                    alt_ft,
                    time,
                    gs_kt,
                    crs_deg,
                    vs_fpm,
                    meta: meta.clone(),
                });
            },
        );
    }

    /// Like [`TrafficDay::second`], but *replaces* the content of `out` with the
    /// tracks of second `t`, reusing the tracks already there (their strings keep their
    /// allocations), so a caller that recycles one buffer allocates nothing per track
    /// in the steady state. The tracks are the same as `second` gives.
    pub fn second_reusing(&mut self, t: u32, out: &mut Vec<Track>) {
        if !self.skip_to(t) {
            out.clear();
            return;
        }
        let mut n = 0;
        let config = &self.config;
        let (src, run) = (config.src.clone(), config.run.clone());
        self.step(
            t,
            |f, time, (lat_deg, lon_deg, alt_ft, gs_kt, crs_deg, vs_fpm)| {
                if n == out.len() {
                    out.push(Track::default());
                }
                let track = &mut out[n];
                n += 1;
                track.vid.clear();
                track.vid.push_str(&f.callsign);
                (track.lat_deg, track.lon_deg, track.alt_ft, track.time) =
                    (lat_deg, lon_deg, alt_ft, time);
                (track.gs_kt, track.crs_deg, track.vs_fpm) = (gs_kt, crs_deg, vs_fpm);
                for (field, value) in [
                    (&mut track.meta.src, src.as_str()),
                    (&mut track.meta.ver, SNDEM_VERSION),
                    (&mut track.meta.run, run.as_str()),
                ] {
                    if field != value {
                        field.clear();
                        field.push_str(value);
                    }
                }
                track.meta.tpub = 0;
            },
        );
        out.truncate(n);
    }

    /// Moves the cursor to `t`, passing over skipped seconds; false if `t` is not to be
    /// generated (outside the window, or already passed).
    fn skip_to(&mut self, t: u32) -> bool {
        if t < self.cursor_s || t >= self.config.end_s {
            return false;
        }
        while self.cursor_s < t {
            let skipped = self.cursor_s;
            self.step(skipped, |_, _, _| {});
        }
        true
    }

    /// Flights airborne during the last second generated (departed at or before it and
    /// not yet arrived).
    pub fn airborne(&self) -> usize {
        self.airborne
    }

    /// The configuration the day was made with.
    pub fn config(&self) -> &TrafficConfig {
        &self.config
    }

    /// Number of flights in the day (including yesterday's still airborne at 00:00Z).
    pub fn flight_count(&self) -> usize {
        self.flights.len()
    }

    /// Processes second `t`: admits departures, updates the airborne count, and calls
    /// `emit(flight, time_ms, fields)` for every report due.
    fn step(&mut self, t: u32, mut emit: impl FnMut(&Flight, i64, TrackFields)) {
        let now = t as f64;
        // Admit the flights departing before the end of this second.
        while let Some(f) = self.flights.get(self.next_departure) {
            if f.dep_s >= now + 1.0 {
                break;
            }
            let id = self.next_departure as u32;
            self.next_departure += 1;
            let (p, off) = (f.period_s, f.offset_ms as f64 / 1000.0);
            let mut first = t + (f.phase_s + p - t % p) % p;
            if (first as f64) + off < f.dep_s {
                first += p;
            }
            if (first as f64) + off < f.arr_s && first < self.config.end_s {
                self.wheel[first as usize % WHEEL_SLOTS].push(id);
            }
        }
        while self.next_arrival < self.arrivals_s.len() && self.arrivals_s[self.next_arrival] <= now
        {
            self.next_arrival += 1;
        }
        let departed = self.flights[..self.next_departure].partition_point(|f| f.dep_s <= now);
        self.airborne = departed - self.next_arrival.min(departed);

        let slot = t as usize % WHEEL_SLOTS;
        std::mem::swap(&mut self.scratch, &mut self.wheel[slot]);
        for &id in &self.scratch {
            let f = &self.flights[id as usize];
            let instant = now + f.offset_ms as f64 / 1000.0;
            emit(
                f,
                self.config.epoch_ms + t as i64 * 1000 + f.offset_ms as i64,
                f.track_at(instant - f.dep_s),
            );
            let next = t + f.period_s;
            if (next as f64) + f.offset_ms as f64 / 1000.0 < f.arr_s && next < self.config.end_s {
                self.wheel[next as usize % WHEEL_SLOTS].push(id);
            }
        }
        self.scratch.clear();
        self.cursor_s = t + 1;
    }
}

//! The 3-degree-of-freedom point-mass model: one aircraft's state, its flight plan and
//! guidance, and the step that advances it by `dt`. Speeds follow the type's schedule
//! (CAS below the crossover, Mach above, 250 kt below 10,000 ft) within its envelope,
//! rates of climb and descent follow its altitude bands, turns are bank-limited with a
//! roll rate, and a flight plan is followed waypoint by waypoint (fly-by turns,
//! altitude and speed constraints, a descent path that meets every constraint ahead).
//!
//! A step reads nothing but the aircraft, its type and the wind, so each aircraft's
//! trajectory is the same bits whichever thread or node steps it.

use crate::atmosphere::{Isa, G0_MPS2, MPS_PER_KT, M_PER_FT, M_PER_NM};
use crate::geo::{bearing_rad, distance_m, wrap_2pi, wrap_pi, EARTH_RADIUS_M};
use crate::perf::Performance;

/// One waypoint of a flight plan, with optional constraints.
#[derive(Clone, Debug, PartialEq)]
pub struct Waypoint {
    /// Name (unique within the plan; what a direct-to command names).
    pub name: String,
    /// Latitude, degrees north.
    pub lat_deg: f64,
    /// Longitude, degrees east.
    pub lon_deg: f64,
    /// Altitude to be at when passing it, ft.
    pub alt_ft: Option<f64>,
    /// Calibrated airspeed to fly towards it, kt.
    pub speed_kt: Option<f64>,
}

/// A route of waypoints, with the distances guidance needs precomputed.
#[derive(Clone, Debug, PartialEq)]
pub struct FlightPlan {
    waypoints: Vec<Waypoint>,
    cruise_alt_ft: Option<f64>,
    /// Distance from waypoint i to the last waypoint along the route, m.
    to_end_m: Vec<f64>,
}

impl FlightPlan {
    /// A plan over `waypoints`; `cruise_alt_ft` overrides the type's cruise altitude.
    pub fn new(waypoints: Vec<Waypoint>, cruise_alt_ft: Option<f64>) -> FlightPlan {
        let mut to_end_m = vec![0.0; waypoints.len()];
        for i in (0..waypoints.len().saturating_sub(1)).rev() {
            let (a, b) = (&waypoints[i], &waypoints[i + 1]);
            to_end_m[i] = to_end_m[i + 1]
                + distance_m(
                    a.lat_deg.to_radians(),
                    a.lon_deg.to_radians(),
                    b.lat_deg.to_radians(),
                    b.lon_deg.to_radians(),
                );
        }
        FlightPlan {
            waypoints,
            cruise_alt_ft,
            to_end_m,
        }
    }

    /// The waypoints in order.
    pub fn waypoints(&self) -> &[Waypoint] {
        &self.waypoints
    }

    /// The cruise altitude the plan asks for, if any.
    pub fn cruise_alt_ft(&self) -> Option<f64> {
        self.cruise_alt_ft
    }

    /// The index of a waypoint by name.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.waypoints.iter().position(|w| w.name == name)
    }
}

/// Where the aircraft is and how it moves. Angles in radians, SI units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KinematicState {
    /// Latitude, rad.
    pub lat_rad: f64,
    /// Longitude, rad.
    pub lon_rad: f64,
    /// Pressure altitude, m.
    pub alt_m: f64,
    /// True airspeed, m/s.
    pub tas_mps: f64,
    /// True heading, rad in [0, 2π).
    pub heading_rad: f64,
    /// Vertical speed, m/s (positive up).
    pub vs_mps: f64,
    /// Bank angle, rad (positive right wing down).
    pub bank_rad: f64,
    /// Ground speed, m/s (derived each step).
    pub gs_mps: f64,
    /// Track over the ground, rad in [0, 2π) (derived each step).
    pub track_rad: f64,
}

/// How the aircraft is steered laterally.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lateral {
    /// Follow the flight plan from the active waypoint.
    FlightPlan,
    /// Fly a commanded true heading, rad.
    Heading(f64),
}

/// What the aircraft is asked to do: the flight plan, or pilot inputs over it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Guidance {
    /// Lateral mode.
    pub lateral: Lateral,
    /// A commanded altitude (ft) instead of the plan's vertical profile.
    pub altitude_ft: Option<f64>,
    /// A commanded calibrated airspeed (kt) instead of the plan's speeds.
    pub speed_kt: Option<f64>,
    /// The waypoint being flown to; the plan's length once the last is passed.
    pub active: usize,
}

/// A constant wind, the velocity of the air mass (towards which it blows), m/s.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Wind {
    /// Northward component, m/s.
    pub north_mps: f64,
    /// Eastward component, m/s.
    pub east_mps: f64,
}

/// One simulated aircraft: identity, type, plan, guidance and state.
#[derive(Clone, Debug, PartialEq)]
pub struct Aircraft {
    /// Callsign (unique in a scenario).
    pub callsign: String,
    /// Index of its type in the performance table.
    pub type_index: u16,
    /// Its flight plan.
    pub plan: FlightPlan,
    /// Its guidance.
    pub guidance: Guidance,
    /// Its kinematic state.
    pub state: KinematicState,
    /// How many steps it has taken.
    pub steps: u64,
}

/// What the target generator publishes of an aircraft, in the FOM's units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PublishedState {
    /// Latitude, degrees north.
    pub lat_deg: f64,
    /// Longitude, degrees east.
    pub lon_deg: f64,
    /// Pressure altitude, ft.
    pub alt_ft: f64,
    /// Ground speed, kt.
    pub gs_kt: f64,
    /// Track over the ground, degrees in [0, 360).
    pub course_deg: f64,
    /// Vertical speed, ft/min.
    pub vs_fpm: f64,
    /// True heading, degrees in [0, 360).
    pub heading_deg: f64,
    /// Pitch (the flight-path angle of a point mass), degrees.
    pub pitch_deg: f64,
    /// Roll (the bank angle), degrees.
    pub roll_deg: f64,
}

/// Time constant of heading capture, s.
const HEADING_TAU_S: f64 = 4.0;
/// Time constant of altitude capture, s.
const ALTITUDE_TAU_S: f64 = 20.0;
/// Below this altitude the speed is at most 250 kt, ft.
const SPEED_LIMIT_ALT_FT: f64 = 10_000.0;
/// Inside this distance of the last waypoint the aircraft flies its approach speed, m.
const APPROACH_DISTANCE_M: f64 = 8.0 * M_PER_NM;
/// A fraction of the type's descent gradient the planned descent path uses, so that
/// the real descent rate can always follow it.
const DESCENT_PATH_MARGIN: f64 = 0.7;
/// The descent path reaches a waypoint's altitude this far before the waypoint, m:
/// the fly-by turn sequences it early and the vertical speed lags the path.
const CONSTRAINT_EARLY_M: f64 = 3.0 * M_PER_NM;
/// Below this airspeed a vehicle turns on the spot (hover), m/s.
const HOVER_MPS: f64 = 5.0;

impl Aircraft {
    /// An aircraft at a position, flying its plan from waypoint `active`.
    pub fn new(
        callsign: String,
        type_index: u16,
        plan: FlightPlan,
        state: KinematicState,
        active: usize,
    ) -> Aircraft {
        Aircraft {
            callsign,
            type_index,
            plan,
            guidance: Guidance {
                lateral: Lateral::FlightPlan,
                altitude_ft: None,
                speed_kt: None,
                active,
            },
            state,
            steps: 0,
        }
    }

    /// The state in the FOM's units.
    pub fn published(&self) -> PublishedState {
        let s = &self.state;
        PublishedState {
            lat_deg: s.lat_rad.to_degrees(),
            lon_deg: s.lon_rad.to_degrees(),
            alt_ft: s.alt_m / M_PER_FT,
            gs_kt: s.gs_mps / MPS_PER_KT,
            course_deg: s.track_rad.to_degrees(),
            vs_fpm: s.vs_mps / M_PER_FT * 60.0,
            heading_deg: s.heading_rad.to_degrees(),
            pitch_deg: s.vs_mps.atan2(s.tas_mps.max(1e-3)).to_degrees(),
            roll_deg: s.bank_rad.to_degrees(),
        }
    }

    /// Puts the aircraft where a published state says it was, `steps` steps into
    /// the run (a failover: the node that flew it is gone). The airspeed is what the
    /// ground velocity less the wind gives; the active waypoint the first one ahead.
    pub fn resume_from(&mut self, p: &PublishedState, wind: Wind, steps: u64) {
        let s = &mut self.state;
        s.lat_rad = p.lat_deg.to_radians();
        s.lon_rad = p.lon_deg.to_radians();
        s.alt_m = p.alt_ft * M_PER_FT;
        s.heading_rad = p.heading_deg.to_radians();
        s.vs_mps = p.vs_fpm / 60.0 * M_PER_FT;
        s.bank_rad = p.roll_deg.to_radians();
        s.gs_mps = p.gs_kt * MPS_PER_KT;
        s.track_rad = p.course_deg.to_radians();
        let north = s.gs_mps * s.track_rad.cos() - wind.north_mps;
        let east = s.gs_mps * s.track_rad.sin() - wind.east_mps;
        s.tas_mps = north.hypot(east);
        self.steps = steps;
        let (lat, lon, track) = (s.lat_rad, s.lon_rad, s.track_rad);
        let ahead = self
            .plan
            .waypoints
            .iter()
            .enumerate()
            .skip(self.guidance.active)
            .find(|(_, w)| {
                let b = bearing_rad(lat, lon, w.lat_deg.to_radians(), w.lon_deg.to_radians());
                wrap_pi(b - track).abs() < 0.5 * std::f64::consts::PI
            });
        self.guidance.active = ahead.map_or(self.plan.waypoints.len(), |(i, _)| i);
    }

    /// Calibrated airspeed now, kt.
    pub fn cas_kt(&self) -> f64 {
        Isa::at(self.state.alt_m).tas_to_cas(self.state.tas_mps) / MPS_PER_KT
    }

    /// Mach number now.
    pub fn mach(&self) -> f64 {
        Isa::at(self.state.alt_m).mach(self.state.tas_mps)
    }

    /// Moves the aircraft straight ahead at its speed for `dt` seconds: what the
    /// stand-in model does after its fixed cost.
    pub fn dead_reckon(&mut self, dt: f64, wind: Wind) {
        self.integrate(dt, wind);
        self.steps += 1;
    }

    /// One step of the point-mass model: guidance, then speed, vertical speed and bank
    /// towards their targets within the type's limits, then the position.
    pub fn step(&mut self, perf: &Performance, dt: f64, wind: Wind) {
        let isa = Isa::at(self.state.alt_m);
        let remaining_m = self.sequence_waypoints(perf);
        self.turn(perf, dt, wind);
        let vs_cmd_fpm = self.vertical(perf, dt);
        self.speed(perf, &isa, dt, vs_cmd_fpm, remaining_m);
        self.integrate(dt, wind);
        self.steps += 1;
    }

    /// Moves to the next waypoint when the turn onto the next leg must begin (fly-by)
    /// or the waypoint is passed; returns the distance left along the route, m.
    fn sequence_waypoints(&mut self, perf: &Performance) -> f64 {
        let n = self.plan.waypoints.len();
        let s = self.state;
        while self.guidance.active < n {
            let i = self.guidance.active;
            let wp = &self.plan.waypoints[i];
            let (lat, lon) = (wp.lat_deg.to_radians(), wp.lon_deg.to_radians());
            let d = distance_m(s.lat_rad, s.lon_rad, lat, lon);
            let to_wp = bearing_rad(s.lat_rad, s.lon_rad, lat, lon);
            let radius = turn_radius_m(perf, s.tas_mps);
            let lead = match self.plan.waypoints.get(i + 1) {
                Some(next) if self.guidance.lateral == Lateral::FlightPlan => {
                    let leg = bearing_rad(
                        lat,
                        lon,
                        next.lat_deg.to_radians(),
                        next.lon_deg.to_radians(),
                    );
                    let change = wrap_pi(leg - to_wp).abs();
                    (radius * (change / 2.0).tan()).min(3.0 * radius)
                }
                _ => 0.0,
            };
            let passed =
                d < 2.0 * radius && wrap_pi(to_wp - s.track_rad).abs() > 0.5 * std::f64::consts::PI;
            if d <= lead.max(s.gs_mps * 2.0).max(50.0) || passed {
                self.guidance.active += 1;
                continue;
            }
            return d + self.plan.to_end_m[i];
        }
        0.0
    }

    /// Bank towards the bank the heading error asks for (at the roll rate, within the
    /// bank limit), and turn at the rate that bank gives.
    fn turn(&mut self, perf: &Performance, dt: f64, wind: Wind) {
        let s = &mut self.state;
        let desired = match self.guidance.lateral {
            Lateral::Heading(h) => Some(h),
            Lateral::FlightPlan => self.plan.waypoints.get(self.guidance.active).map(|wp| {
                let track = bearing_rad(
                    s.lat_rad,
                    s.lon_rad,
                    wp.lat_deg.to_radians(),
                    wp.lon_deg.to_radians(),
                );
                // Crab into the wind so that the track, not the heading, points at it.
                if s.tas_mps > HOVER_MPS {
                    let cross = wind.east_mps * track.cos() - wind.north_mps * track.sin();
                    track - (cross / s.tas_mps).clamp(-0.9, 0.9).asin()
                } else {
                    track
                }
            }),
        };
        let error = desired.map_or(0.0, |h| wrap_pi(h - s.heading_rad));
        let turn_max = perf.turn_rate_max_deg_s.to_radians();
        let rate_wanted = (error / HEADING_TAU_S).clamp(-turn_max, turn_max);
        let rate = if s.tas_mps < HOVER_MPS {
            s.bank_rad = 0.0;
            rate_wanted
        } else {
            let bank_max = perf.bank_max_deg.to_radians();
            let bank_wanted = (rate_wanted * s.tas_mps / G0_MPS2)
                .atan()
                .clamp(-bank_max, bank_max);
            let roll = perf.roll_rate_deg_s.to_radians() * dt;
            s.bank_rad += (bank_wanted - s.bank_rad).clamp(-roll, roll);
            (G0_MPS2 * s.bank_rad.tan() / s.tas_mps).clamp(-turn_max, turn_max)
        };
        // Never turn past the heading wanted within one step.
        let turned = rate * dt;
        let turned = if desired.is_some() && turned.abs() > error.abs() && turned * error >= 0.0 {
            error
        } else {
            turned
        };
        s.heading_rad = wrap_2pi(s.heading_rad + turned);
    }

    /// The altitude to fly at: the commanded one, else the highest altitude from which
    /// every altitude constraint ahead can still be met on the type's descent path,
    /// capped at the cruise altitude. Then the vertical speed towards it within the
    /// type's rates for this altitude. Returns the vertical speed wanted, ft/min.
    fn vertical(&mut self, perf: &Performance, dt: f64) -> f64 {
        let s = self.state;
        let alt_ft = s.alt_m / M_PER_FT;
        let target_ft = match self.guidance.altitude_ft {
            Some(a) => a,
            None => self.profile_altitude_ft(perf, alt_ft),
        }
        .min(perf.ceiling_ft);
        let delta = target_ft - alt_ft;
        let rate = if delta > 0.0 {
            if alt_ft < perf.climb_cas_alt_ft {
                perf.climb_rate_low_fpm
            } else if alt_ft < perf.climb_mach_alt_ft {
                perf.climb_rate_cas_fpm
            } else {
                perf.climb_rate_mach_fpm
            }
        } else if alt_ft > perf.descent_mach_alt_ft {
            perf.descent_rate_mach_fpm
        } else if alt_ft > perf.descent_cas_alt_ft {
            perf.descent_rate_cas_fpm
        } else {
            perf.descent_rate_low_fpm
        };
        let vs_cmd_fpm = delta.signum() * rate.min(delta.abs() * 60.0 / ALTITUDE_TAU_S);
        let vs_fpm = s.vs_mps / M_PER_FT * 60.0;
        let change = perf.vertical_accel_fpm_s * dt;
        let vs_fpm = vs_fpm + (vs_cmd_fpm - vs_fpm).clamp(-change, change);
        self.state.vs_mps = vs_fpm / 60.0 * M_PER_FT;
        vs_cmd_fpm
    }

    fn profile_altitude_ft(&self, perf: &Performance, alt_ft: f64) -> f64 {
        let plan = &self.plan;
        let s = self.state;
        let active = self.guidance.active;
        let Some(wp) = plan.waypoints.get(active) else {
            return plan
                .waypoints
                .last()
                .and_then(|w| w.alt_ft)
                .unwrap_or(alt_ft);
        };
        let to_active = distance_m(
            s.lat_rad,
            s.lon_rad,
            wp.lat_deg.to_radians(),
            wp.lon_deg.to_radians(),
        );
        let mut target = plan.cruise_alt_ft.unwrap_or(perf.cruise_alt_ft);
        for (j, w) in plan.waypoints.iter().enumerate().skip(active) {
            if let Some(h) = w.alt_ft {
                let along =
                    (to_active + plan.to_end_m[active] - plan.to_end_m[j] - CONSTRAINT_EARLY_M)
                        .max(0.0);
                target = target.min(descent_path_ft(perf, h, along));
            }
        }
        target
    }

    /// Accelerates towards the speed of the phase (or the commanded one), within the
    /// type's speed envelope.
    fn speed(&mut self, perf: &Performance, isa: &Isa, dt: f64, vs_cmd_fpm: f64, remaining_m: f64) {
        let alt_ft = self.state.alt_m / M_PER_FT;
        let a = isa.sound_speed_mps();
        let constraint = self
            .plan
            .waypoints
            .get(self.guidance.active)
            .and_then(|w| w.speed_kt);
        let tas_target = match self.guidance.speed_kt.or(constraint) {
            Some(cas_kt) => isa.cas_to_tas(cas_kt * MPS_PER_KT),
            None => {
                let (mut cas_kt, mach) = if vs_cmd_fpm > 100.0 {
                    (perf.climb_cas_kt, perf.climb_mach)
                } else if vs_cmd_fpm < -100.0 {
                    (perf.descent_cas_kt, perf.descent_mach)
                } else {
                    (perf.cruise_cas_kt, perf.cruise_mach)
                };
                let approaching = self.guidance.lateral == Lateral::FlightPlan
                    && self.guidance.active < self.plan.waypoints.len()
                    && remaining_m < APPROACH_DISTANCE_M;
                if approaching {
                    cas_kt = perf.approach_cas_kt;
                }
                if alt_ft < SPEED_LIMIT_ALT_FT {
                    cas_kt = cas_kt.min(250.0);
                }
                isa.cas_to_tas(cas_kt * MPS_PER_KT).min(mach * a)
            }
        };
        let tas_min = isa.cas_to_tas(perf.min_cas_kt * MPS_PER_KT);
        let tas_max = isa.cas_to_tas(perf.vmo_kt * MPS_PER_KT).min(perf.mmo * a);
        let tas_target = tas_target.clamp(tas_min, tas_max);
        let change = perf.accel_kt_s * MPS_PER_KT * dt;
        self.state.tas_mps += (tas_target - self.state.tas_mps).clamp(-change, change);
    }

    /// Air velocity plus wind; position and altitude forward by `dt`.
    fn integrate(&mut self, dt: f64, wind: Wind) {
        let s = &mut self.state;
        let north = s.tas_mps * s.heading_rad.cos() + wind.north_mps;
        let east = s.tas_mps * s.heading_rad.sin() + wind.east_mps;
        s.gs_mps = north.hypot(east);
        s.track_rad = wrap_2pi(east.atan2(north));
        let radius = EARTH_RADIUS_M + s.alt_m;
        // Short of the poles, where the longitude step divides by cos(lat).
        let pole = std::f64::consts::FRAC_PI_2 - 1e-4;
        s.lat_rad = (s.lat_rad + north * dt / radius).clamp(-pole, pole);
        s.lon_rad = wrap_pi(s.lon_rad + east * dt / (radius * s.lat_rad.cos()));
        s.alt_m = (s.alt_m + s.vs_mps * dt).max(0.0);
        if s.alt_m == 0.0 && s.vs_mps < 0.0 {
            s.vs_mps = 0.0;
        }
    }
}

/// The altitude `along_m` metres before a point at `alt_ft` on the type's descent
/// path: each of its altitude bands descends at its own rate and speed, with a margin.
fn descent_path_ft(perf: &Performance, alt_ft: f64, along_m: f64) -> f64 {
    let cas_tas =
        |cas_kt: f64, at_ft: f64| Isa::at(at_ft * M_PER_FT).cas_to_tas(cas_kt * MPS_PER_KT);
    let low_top = perf.descent_cas_alt_ft;
    let cas_top = perf.descent_mach_alt_ft.max(low_top);
    let bands = [
        (
            low_top,
            perf.descent_rate_low_fpm,
            cas_tas(perf.descent_cas_kt.min(250.0), low_top),
        ),
        (
            cas_top,
            perf.descent_rate_cas_fpm,
            cas_tas(perf.descent_cas_kt, cas_top),
        ),
        (
            f64::MAX,
            perf.descent_rate_mach_fpm,
            perf.descent_mach * Isa::at(cas_top * M_PER_FT).sound_speed_mps(),
        ),
    ];
    let (mut alt, mut left) = (alt_ft, along_m);
    for (top, rate_fpm, tas_mps) in bands {
        if alt >= top {
            continue;
        }
        let gradient = DESCENT_PATH_MARGIN * rate_fpm / (tas_mps.max(1.0) * 60.0);
        let need = (top - alt) / gradient;
        if left <= need {
            return alt + left * gradient;
        }
        alt = top;
        left -= need;
    }
    alt
}

/// The radius of a turn at the type's largest bank, m.
fn turn_radius_m(perf: &Performance, tas_mps: f64) -> f64 {
    let by_bank = tas_mps * tas_mps / (G0_MPS2 * perf.bank_max_deg.to_radians().tan());
    let by_rate = tas_mps / perf.turn_rate_max_deg_s.to_radians();
    by_bank.max(by_rate)
}

//! Every aircraft type climbs, cruises, turns and descends within its envelope; the
//! flight-plan guidance meets its constraints, with and without wind.

use glidepath_tg::atmosphere::{Isa, MPS_PER_KT, M_PER_FT};
use glidepath_tg::dynamics::{Aircraft, FlightPlan, KinematicState, Lateral, Waypoint, Wind};
use glidepath_tg::geo::{distance_m, wrap_pi};
use glidepath_tg::perf::{Performance, PerformanceTable, VehicleClass};

const DT: f64 = 0.1;

fn perf(code: &str) -> (u16, &'static Performance) {
    let table = PerformanceTable::builtin();
    let index = table
        .index_of(code)
        .unwrap_or_else(|| panic!("{code} is not in the table"));
    (index, table.get(index).unwrap())
}

fn aircraft_at(code: &str, alt_ft: f64, cas_kt: f64, plan: FlightPlan) -> Aircraft {
    let (index, _) = perf(code);
    let tas = Isa::at(alt_ft * M_PER_FT).cas_to_tas(cas_kt * MPS_PER_KT);
    let state = KinematicState {
        lat_rad: 40f64.to_radians(),
        lon_rad: (-100f64).to_radians(),
        alt_m: alt_ft * M_PER_FT,
        tas_mps: tas,
        heading_rad: 90f64.to_radians(),
        vs_mps: 0.0,
        bank_rad: 0.0,
        gs_mps: tas,
        track_rad: 90f64.to_radians(),
    };
    Aircraft::new(format!("T{code}"), index, plan, state, 0)
}

/// Steps until `done`, checking the envelope after every step; returns the seconds taken.
fn fly_until(
    a: &mut Aircraft,
    p: &Performance,
    limit_s: f64,
    what: &str,
    done: impl Fn(&Aircraft) -> bool,
) -> f64 {
    let mut t = 0.0;
    while !done(a) {
        let heading_before = a.state.heading_rad;
        a.step(p, DT, Wind::default());
        t += DT;
        assert!(
            t <= limit_s,
            "{}: {what} not done after {limit_s} s: {:?}",
            p.type_code,
            a.published()
        );
        check_envelope(a, p, heading_before, what);
    }
    t
}

fn check_envelope(a: &Aircraft, p: &Performance, heading_before: f64, what: &str) {
    let s = a.published();
    let ctx = || format!("{} while {what}: {s:?}", p.type_code);
    assert!(a.cas_kt() <= p.vmo_kt + 0.5, "above Vmo: {}", ctx());
    assert!(
        a.cas_kt() >= p.min_cas_kt - 0.5,
        "below the minimum speed: {}",
        ctx()
    );
    assert!(a.mach() <= p.mmo + 1e-3, "above Mmo: {}", ctx());
    assert!(
        s.alt_ft <= p.ceiling_ft + 1.0,
        "above the ceiling: {}",
        ctx()
    );
    assert!(
        s.roll_deg.abs() <= p.bank_max_deg + 1e-9,
        "bank beyond its limit: {}",
        ctx()
    );
    assert!(
        s.vs_fpm <= p.climb_rate_max_fpm + 1e-6,
        "climbing faster than it can: {}",
        ctx()
    );
    assert!(
        s.vs_fpm >= -p.descent_rate_max_fpm - 1e-6,
        "descending faster than it can: {}",
        ctx()
    );
    let turned = wrap_pi(a.state.heading_rad - heading_before)
        .abs()
        .to_degrees();
    assert!(
        turned <= p.turn_rate_max_deg_s * DT + 1e-9,
        "turning faster than it can: {}",
        ctx()
    );
}

/// Climb to cruise, cruise five minutes, turn 90° right, descend; each within the
/// type's envelope and in a time its rates allow.
fn climb_cruise_turn_descend(code: &str) {
    let (_, p) = perf(code);
    let low_ft = if p.class == VehicleClass::Evtol {
        300.0
    } else {
        3_000.0
    };
    let start_cas = p.climb_cas_kt.min(250.0);
    let mut a = aircraft_at(code, low_ft, start_cas, FlightPlan::new(Vec::new(), None));
    let cruise = p.cruise_alt_ft;

    // Climb: no faster than the best climb rate, no slower than the worst band allows.
    a.guidance.altitude_ft = Some(cruise);
    let slowest = p
        .climb_rate_low_fpm
        .min(p.climb_rate_cas_fpm)
        .min(p.climb_rate_mach_fpm);
    let climb_min = (cruise - low_ft) / p.climb_rate_max_fpm * 60.0;
    let climb_s = fly_until(
        &mut a,
        p,
        (cruise - low_ft) / slowest * 60.0 * 1.5 + 300.0,
        "climbing",
        |a| (a.published().alt_ft - cruise).abs() < 20.0 && a.published().vs_fpm.abs() < 50.0,
    );
    assert!(
        climb_s >= climb_min,
        "{code}: climbed {cruise} ft in {climb_s} s, faster than its rate"
    );

    // Cruise: level, at the cruise speed of the schedule.
    let isa = Isa::at(cruise * M_PER_FT);
    let cas = if cruise < 10_000.0 {
        p.cruise_cas_kt.min(250.0)
    } else {
        p.cruise_cas_kt
    };
    let expected_tas = isa
        .cas_to_tas(cas * MPS_PER_KT)
        .min(p.cruise_mach * isa.sound_speed_mps());
    let end = a.steps as f64 * DT + 300.0;
    fly_until(&mut a, p, f64::MAX, "cruising", |a| {
        a.steps as f64 * DT >= end
    });
    assert!(
        (a.published().alt_ft - cruise).abs() < 20.0,
        "{code}: left cruise altitude: {:?}",
        a.published()
    );
    assert!(
        (a.state.tas_mps - expected_tas).abs() < 0.5,
        "{code}: cruise TAS {} m/s, expected {expected_tas}",
        a.state.tas_mps
    );

    // Turn 90° right at no more than the bank limit, holding altitude.
    let target = a.state.heading_rad + 90f64.to_radians();
    a.guidance.lateral = Lateral::Heading(target % std::f64::consts::TAU);
    let rate = (9.80665 * p.bank_max_deg.to_radians().tan() / a.state.tas_mps)
        .to_degrees()
        .min(p.turn_rate_max_deg_s);
    let turn_s = fly_until(&mut a, p, 90.0 / rate + 60.0, "turning", |a| {
        wrap_pi(target - a.state.heading_rad).abs() < 0.1f64.to_radians()
            && a.state.bank_rad.abs() < 0.5f64.to_radians()
    });
    assert!(
        turn_s >= 90.0 / rate,
        "{code}: turned 90° in {turn_s} s, faster than {rate}°/s"
    );
    assert!(
        (a.published().alt_ft - cruise).abs() < 50.0,
        "{code}: lost altitude in the turn"
    );

    // Descend back down.
    a.guidance.altitude_ft = Some(low_ft);
    let slowest = p
        .descent_rate_low_fpm
        .min(p.descent_rate_cas_fpm)
        .min(p.descent_rate_mach_fpm);
    let descent_s = fly_until(
        &mut a,
        p,
        (cruise - low_ft) / slowest * 60.0 * 1.5 + 300.0,
        "descending",
        |a| (a.published().alt_ft - low_ft).abs() < 20.0 && a.published().vs_fpm.abs() < 50.0,
    );
    assert!(
        descent_s >= (cruise - low_ft) / p.descent_rate_max_fpm * 60.0,
        "{code}: descended too fast"
    );
    // Below 10,000 ft a jet slows to 250 kt.
    if p.class == VehicleClass::Jet {
        assert!(
            a.cas_kt() <= 250.5,
            "{code}: {} kt below 10,000 ft",
            a.cas_kt()
        );
    }
}

macro_rules! per_type {
    ($($name:ident => $code:literal),* $(,)?) => {
        $(#[test] fn $name() { climb_cruise_turn_descend($code); })*
        /// The list above covers every type of the table.
        #[test]
        fn every_type_has_its_test() {
            let mut tested = vec![$($code),*];
            tested.sort();
            let mut table: Vec<&str> = PerformanceTable::builtin().types().iter().map(|p| p.type_code.as_str()).collect();
            table.sort();
            assert_eq!(tested, table);
        }
    };
}

per_type! {
    a319 => "A319", a320 => "A320", a321 => "A321", a332 => "A332", a333 => "A333",
    a343 => "A343", a388 => "A388", b737 => "B737", b738 => "B738", b739 => "B739",
    b744 => "B744", b752 => "B752", b763 => "B763", b77w => "B77W", b788 => "B788",
    b789 => "B789", e190 => "E190", evtl => "EVTL", evmc => "EVMC",
}

fn wp(name: &str, lat: f64, lon: f64, alt: Option<f64>, speed: Option<f64>) -> Waypoint {
    Waypoint {
        name: name.into(),
        lat_deg: lat,
        lon_deg: lon,
        alt_ft: alt,
        speed_kt: speed,
    }
}

/// Flies a plan and returns, for each waypoint, the altitude and speed when it was
/// sequenced and how close the aircraft passed.
fn fly_plan(a: &mut Aircraft, wind: Wind, limit_s: f64) -> Vec<(f64, f64, f64)> {
    let p = PerformanceTable::builtin().get(a.type_index).unwrap();
    let n = a.plan.waypoints().len();
    let mut passes = Vec::new();
    let mut closest = f64::MAX;
    let mut t = 0.0;
    while a.guidance.active < n {
        let before = a.guidance.active;
        let w = &a.plan.waypoints()[before];
        let d = distance_m(
            a.state.lat_rad,
            a.state.lon_rad,
            w.lat_deg.to_radians(),
            w.lon_deg.to_radians(),
        );
        closest = closest.min(d);
        let heading_before = a.state.heading_rad;
        a.step(p, DT, wind);
        check_envelope(a, p, heading_before, "following its plan");
        if a.guidance.active != before {
            passes.push((a.published().alt_ft, a.cas_kt(), closest));
            closest = f64::MAX;
        }
        t += DT;
        assert!(
            t < limit_s,
            "plan not flown after {limit_s} s: {:?}, active {}",
            a.published(),
            a.guidance.active
        );
    }
    passes
}

#[test]
fn a_jet_follows_its_plan_meets_constraints_and_slows_for_the_approach() {
    // Out of 40N 100W eastwards, a dog-leg, a crossing restriction, then the arrival.
    let plan = FlightPlan::new(
        vec![
            wp("ALPHA", 40.0, -98.5, None, None),
            wp("BRAVO", 40.8, -97.0, None, None),
            wp("CHARL", 40.8, -94.5, Some(24_000.0), Some(280.0)),
            wp("DELTA", 40.2, -92.6, Some(11_000.0), None),
            wp("ARRIV", 39.6, -91.0, Some(3_000.0), None),
        ],
        Some(33_000.0),
    );
    let mut a = aircraft_at("B738", 8_000.0, 250.0, plan);
    let passes = fly_plan(&mut a, Wind::default(), 4.0 * 3600.0);
    assert_eq!(passes.len(), 5);
    for (i, (_, _, closest)) in passes.iter().enumerate() {
        assert!(*closest < 8_000.0, "waypoint {i} missed by {closest} m");
    }
    // At or below each restriction (the descent path aims at it), and not far above.
    for (i, limit) in [(2, 24_000.0), (3, 11_000.0), (4, 3_000.0)] {
        let alt = passes[i].0;
        assert!(
            (alt - limit).abs() < 600.0,
            "waypoint {i}: {alt} ft, restriction {limit} ft"
        );
    }
    assert!(
        (passes[2].1 - 280.0).abs() < 3.0,
        "speed constraint: {} kt",
        passes[2].1
    );
    let approach = PerformanceTable::builtin()
        .get(a.type_index)
        .unwrap()
        .approach_cas_kt;
    assert!(
        (passes[4].1 - approach).abs() < 3.0,
        "approach speed: {} kt",
        passes[4].1
    );
}

#[test]
fn a_crosswind_is_crabbed_into_and_the_track_still_meets_the_waypoints() {
    let plan = FlightPlan::new(
        vec![
            wp("EAST1", 40.0, -99.0, None, None),
            wp("NORTH", 41.0, -99.0, None, None),
        ],
        Some(5_000.0),
    );
    let mut a = aircraft_at("EVTL", 1_500.0, 100.0, plan);
    let wind = Wind {
        north_mps: 12.0,
        east_mps: -8.0,
    };
    let passes = fly_plan(&mut a, wind, 3.0 * 3600.0);
    assert_eq!(passes.len(), 2);
    assert!(passes.iter().all(|p| p.2 < 2_000.0), "{passes:?}");
    // Crabbing: heading and track differ while the wind blows across.
    assert!(wrap_pi(a.state.heading_rad - a.state.track_rad).abs() > 1f64.to_radians());
}

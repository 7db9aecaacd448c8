//! Random flights: airliners between the US airports of a region (`data/airports-us.csv`),
//! or eVTOL air taxis between vertiports scattered over a metropolitan area; each placed
//! somewhere along its route at an altitude its profile would have there, so a run
//! starts with traffic in every phase of flight. Seeded: the same block gives the same
//! flights.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::atmosphere::{Isa, MPS_PER_KT, M_PER_FT, M_PER_NM};
use crate::dynamics::{Aircraft, FlightPlan, KinematicState, Waypoint};
use crate::geo::{bearing_rad, destination, distance_m};
use crate::perf::{PerformanceTable, VehicleClass};

/// Which flights a block generates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FlightKind {
    /// Jet airliners between airports, 150–1,200 nm.
    Airline,
    /// eVTOL air taxis between vertiports of a metropolitan area, 5–40 nm.
    Uam,
}

/// Where flights are generated.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Region {
    /// The contiguous United States.
    Us,
    /// West of 104° W.
    West,
    /// Between 104° W and 87° W.
    Central,
    /// East of 87° W.
    East,
    /// The San Francisco Bay Area (for UAM).
    BayArea,
    /// New York City (for UAM).
    NewYork,
    /// Dallas–Fort Worth (for UAM).
    Dallas,
}

impl Region {
    /// Every region with its name in scenario files.
    pub const ALL: [(&'static str, Region); 7] = [
        ("us", Region::Us),
        ("west", Region::West),
        ("central", Region::Central),
        ("east", Region::East),
        ("bay-area", Region::BayArea),
        ("new-york", Region::NewYork),
        ("dallas", Region::Dallas),
    ];

    /// A metropolitan area's centre (lat, lon) and radius in nm.
    fn metro(self) -> (f64, f64, f64) {
        match self {
            Region::BayArea => (37.62, -122.20, 25.0),
            Region::NewYork => (40.73, -73.93, 20.0),
            Region::Dallas => (32.85, -97.00, 25.0),
            // A country-sized region used for UAM: its own centre, 25 nm.
            Region::Us | Region::Central => (39.0, -95.0, 25.0),
            Region::West => (37.62, -122.20, 25.0),
            Region::East => (40.73, -73.93, 20.0),
        }
    }

    fn contains(self, lat: f64, lon: f64) -> bool {
        let us = (24.0..50.0).contains(&lat) && (-125.0..-66.0).contains(&lon);
        us && match self {
            Region::West => lon < -104.0,
            Region::Central => (-104.0..-87.0).contains(&lon),
            Region::East => lon >= -87.0,
            _ => true,
        }
    }
}

const AIRLINES: [&str; 10] = [
    "AAL", "UAL", "DAL", "SWA", "JBU", "ASA", "SKW", "FFT", "NKS", "ENY",
];

/// `count` flights; `block` (the block's index in its file) keeps callsigns of
/// different blocks apart.
pub(super) fn flights(
    kind: FlightKind,
    region: Region,
    count: usize,
    seed: u64,
    block: usize,
    table: &PerformanceTable,
) -> Result<Vec<Aircraft>, String> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    match kind {
        FlightKind::Airline => airline(region, count, block, &mut rng, table),
        FlightKind::Uam => uam(region, count, block, &mut rng, table),
    }
}

fn airline(
    region: Region,
    count: usize,
    block: usize,
    rng: &mut ChaCha8Rng,
    table: &PerformanceTable,
) -> Result<Vec<Aircraft>, String> {
    let airports = glidepath_atm::airports::us_airports().map_err(|e| e.to_string())?;
    let here: Vec<_> = airports
        .iter()
        .filter(|a| region.contains(a.lat_deg, a.lon_deg))
        .collect();
    if here.len() < 2 {
        return Err("fewer than two airports in the region".into());
    }
    let jets: Vec<u16> = table.jets().map(|(i, _)| i).collect();
    if jets.is_empty() {
        return Err("the performance table has no jet types".into());
    }
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let from_index = rng.gen_range(0..here.len());
        let from = here[from_index];
        // A destination 150–1,200 nm away (the last try if none is in range).
        let mut to_index = rng.gen_range(0..here.len());
        for _ in 0..64 {
            let to = here[to_index];
            let d = dist_nm(from.lat_deg, from.lon_deg, to.lat_deg, to.lon_deg);
            if to_index != from_index && (150.0..1_200.0).contains(&d) {
                break;
            }
            to_index = rng.gen_range(0..here.len());
        }
        if to_index == from_index {
            to_index = (from_index + 1) % here.len();
        }
        let to = here[to_index];
        let type_index = jets[rng.gen_range(0..jets.len())];
        let perf = table.get(type_index).expect("index from the table");
        let d_nm = dist_nm(from.lat_deg, from.lon_deg, to.lat_deg, to.lon_deg);
        let cruise = (perf.cruise_alt_ft.min(12_000.0 + d_nm * 60.0) / 1_000.0).round() * 1_000.0;
        let callsign = format!(
            "{}{}",
            AIRLINES[rng.gen_range(0..AIRLINES.len())],
            block * 100_000 + i + 1
        );
        // One waypoint off the great circle halfway, for a dog-leg.
        let (la, lo) = (from.lat_deg.to_radians(), from.lon_deg.to_radians());
        let (lb, lob) = (to.lat_deg.to_radians(), to.lon_deg.to_radians());
        let course = bearing_rad(la, lo, lb, lob);
        let d_m = distance_m(la, lo, lb, lob);
        let (mla, mlo) = destination(la, lo, course, d_m / 2.0);
        let offset = rng.gen_range(-0.08..0.08) * d_m;
        let (wla, wlo) = destination(mla, mlo, course + std::f64::consts::FRAC_PI_2, offset);
        let waypoints = vec![
            Waypoint {
                name: from.icao.clone(),
                lat_deg: from.lat_deg,
                lon_deg: from.lon_deg,
                alt_ft: None,
                speed_kt: None,
            },
            Waypoint {
                name: format!("WP{}", i + 1),
                lat_deg: wla.to_degrees(),
                lon_deg: wlo.to_degrees(),
                alt_ft: None,
                speed_kt: None,
            },
            Waypoint {
                name: to.icao.clone(),
                lat_deg: to.lat_deg,
                lon_deg: to.lon_deg,
                alt_ft: Some(to.elevation_ft + 1_500.0),
                speed_kt: None,
            },
        ];
        let fraction = rng.gen_range(0.0..0.85);
        let climb_ft_per_nm = 300.0;
        let along_nm = fraction * d_nm;
        let alt = (from.elevation_ft + 1_500.0 + along_nm * climb_ft_per_nm)
            .min(to.elevation_ft + 1_500.0 + (d_nm - along_nm) * climb_ft_per_nm)
            .min(cruise);
        let cas = if alt < 10_000.0 {
            perf.climb_cas_kt.min(250.0)
        } else {
            perf.cruise_cas_kt
        };
        out.push(placed(
            callsign,
            type_index,
            FlightPlan::new(waypoints, Some(cruise)),
            fraction,
            alt,
            cas,
            perf.cruise_mach,
        ));
    }
    Ok(out)
}

fn uam(
    region: Region,
    count: usize,
    block: usize,
    rng: &mut ChaCha8Rng,
    table: &PerformanceTable,
) -> Result<Vec<Aircraft>, String> {
    let (clat, clon, radius_nm) = region.metro();
    let types: Vec<u16> = table
        .types()
        .iter()
        .enumerate()
        .filter(|(_, p)| p.class == VehicleClass::Evtol)
        .map(|(i, _)| i as u16)
        .collect();
    if types.is_empty() {
        return Err("the performance table has no eVTOL types".into());
    }
    // Vertiports scattered over the area (uniform over the disc).
    let ports: Vec<(f64, f64)> = (0..60)
        .map(|_| {
            let r = radius_nm * rng.gen::<f64>().sqrt() * M_PER_NM;
            let (la, lo) = destination(
                clat.to_radians(),
                clon.to_radians(),
                rng.gen_range(0.0..std::f64::consts::TAU),
                r,
            );
            (la.to_degrees(), lo.to_degrees())
        })
        .collect();
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let ai = rng.gen_range(0..ports.len());
        let mut bi = rng.gen_range(0..ports.len());
        for _ in 0..64 {
            let (a, b) = (ports[ai], ports[bi]);
            if ai != bi && (5.0..40.0).contains(&dist_nm(a.0, a.1, b.0, b.1)) {
                break;
            }
            bi = rng.gen_range(0..ports.len());
        }
        if ai == bi {
            bi = (ai + 1) % ports.len();
        }
        let (a, b) = (ports[ai], ports[bi]);
        let type_index = types[rng.gen_range(0..types.len())];
        let perf = table.get(type_index).expect("index from the table");
        let cruise = (rng.gen_range(1_000.0..2_500.0_f64) / 100.0).round() * 100.0;
        let waypoints = vec![
            Waypoint {
                name: format!("VP{}A", i + 1),
                lat_deg: a.0,
                lon_deg: a.1,
                alt_ft: None,
                speed_kt: None,
            },
            Waypoint {
                name: format!("VP{}B", i + 1),
                lat_deg: b.0,
                lon_deg: b.1,
                alt_ft: Some(300.0),
                speed_kt: None,
            },
        ];
        let fraction = rng.gen_range(0.05..0.8);
        out.push(placed(
            format!("UAM{}", block * 100_000 + i + 1),
            type_index,
            FlightPlan::new(waypoints, Some(cruise)),
            fraction,
            cruise,
            perf.cruise_cas_kt,
            perf.cruise_mach,
        ));
    }
    Ok(out)
}

/// An aircraft `fraction` of the way along the great circle from its plan's first
/// waypoint to its last, flying towards the next waypoint of the plan.
fn placed(
    callsign: String,
    type_index: u16,
    plan: FlightPlan,
    fraction: f64,
    alt_ft: f64,
    cas_kt: f64,
    mach: f64,
) -> Aircraft {
    let w = plan.waypoints();
    let (first, last) = (&w[0], &w[w.len() - 1]);
    let (la, lo) = (first.lat_deg.to_radians(), first.lon_deg.to_radians());
    let (lb, lob) = (last.lat_deg.to_radians(), last.lon_deg.to_radians());
    let d = distance_m(la, lo, lb, lob);
    let (lat, lon) = destination(la, lo, bearing_rad(la, lo, lb, lob), fraction * d);
    let active = if w.len() > 2 && fraction < 0.5 {
        1
    } else {
        w.len() - 1
    };
    let next = &w[active];
    let heading = bearing_rad(
        lat,
        lon,
        next.lat_deg.to_radians(),
        next.lon_deg.to_radians(),
    );
    let isa = Isa::at(alt_ft * M_PER_FT);
    let tas = isa
        .cas_to_tas(cas_kt * MPS_PER_KT)
        .min(mach * isa.sound_speed_mps());
    let state = KinematicState {
        lat_rad: lat,
        lon_rad: lon,
        alt_m: alt_ft * M_PER_FT,
        tas_mps: tas,
        heading_rad: heading,
        vs_mps: 0.0,
        bank_rad: 0.0,
        gs_mps: tas,
        track_rad: heading,
    };
    Aircraft::new(callsign, type_index, plan, state, active)
}

fn dist_nm(lat1: f64, lon1: f64, lat2: f64, lon2: f64) -> f64 {
    distance_m(
        lat1.to_radians(),
        lon1.to_radians(),
        lat2.to_radians(),
        lon2.to_radians(),
    ) / M_PER_NM
}

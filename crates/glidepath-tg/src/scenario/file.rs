//! The scenario file as written (every field optional and spanned, unknown keys
//! refused) and its validation into a [`Scenario`], with errors at the field's line.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

use super::generate::{self, FlightKind, Region};
use super::{Scenario, ScenarioError};
use crate::atmosphere::{Isa, MPS_PER_KT, M_PER_FT};
use crate::dynamics::{Aircraft, FlightPlan, KinematicState, Waypoint, Wind};
use crate::geo::bearing_rad;
use crate::perf::PerformanceTable;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawScenario {
    name: Option<Spanned<String>>,
    description: Option<Spanned<String>>,
    wind: Option<Spanned<RawWind>>,
    #[serde(default)]
    aircraft: Vec<Spanned<RawAircraft>>,
    #[serde(default)]
    generate: Vec<Spanned<RawGenerate>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWind {
    north_kt: Option<Spanned<f64>>,
    east_kt: Option<Spanned<f64>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAircraft {
    callsign: Option<Spanned<String>>,
    #[serde(rename = "type")]
    type_code: Option<Spanned<String>>,
    cruise_alt_ft: Option<Spanned<f64>>,
    lat_deg: Option<Spanned<f64>>,
    lon_deg: Option<Spanned<f64>>,
    alt_ft: Option<Spanned<f64>>,
    speed_kt: Option<Spanned<f64>>,
    heading_deg: Option<Spanned<f64>>,
    route: Option<Spanned<Vec<Spanned<RawWaypoint>>>>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawWaypoint {
    Airport(String),
    Point(RawPoint),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPoint {
    // Plain fields: serde's untagged enums cannot hold spans; errors point at the
    // waypoint's line instead.
    name: Option<String>,
    lat_deg: Option<f64>,
    lon_deg: Option<f64>,
    alt_ft: Option<f64>,
    speed_kt: Option<f64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGenerate {
    kind: Option<Spanned<String>>,
    count: Option<Spanned<i64>>,
    region: Option<Spanned<String>>,
    seed: Option<Spanned<i64>>,
}

struct Ctx<'a> {
    file: &'a str,
    text: &'a str,
}

impl Ctx<'_> {
    fn line(&self, span: &Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1
    }
    fn err(
        &self,
        span: &Range<usize>,
        field: impl Into<String>,
        reason: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError {
            file: self.file.to_string(),
            line: self.line(span),
            field: field.into(),
            reason: reason.into(),
        }
    }
    /// A required field, or an error at the enclosing table's line.
    fn need<'v, T>(
        &self,
        v: &'v Option<Spanned<T>>,
        at: &Range<usize>,
        field: &str,
    ) -> Result<&'v Spanned<T>, ScenarioError> {
        v.as_ref().ok_or_else(|| self.err(at, field, "missing"))
    }
    fn number(
        &self,
        v: &Spanned<f64>,
        field: &str,
        range: Range<f64>,
        unit: &str,
    ) -> Result<f64, ScenarioError> {
        self.number_at(*v.get_ref(), &v.span(), field, range, unit)
    }
    fn number_at(
        &self,
        x: f64,
        span: &Range<usize>,
        field: &str,
        range: Range<f64>,
        unit: &str,
    ) -> Result<f64, ScenarioError> {
        if !x.is_finite() || x < range.start || x > range.end {
            return Err(self.err(
                span,
                field,
                format!("{x} is outside {}–{} {unit}", range.start, range.end),
            ));
        }
        Ok(x)
    }
    fn need_at<T: Clone>(
        &self,
        v: &Option<T>,
        span: &Range<usize>,
        field: &str,
    ) -> Result<T, ScenarioError> {
        v.clone().ok_or_else(|| self.err(span, field, "missing"))
    }
}

pub(super) fn parse(
    file: &str,
    text: &str,
    table: &PerformanceTable,
) -> Result<Scenario, ScenarioError> {
    let ctx = Ctx { file, text };
    let raw: RawScenario = toml::from_str(text).map_err(|e| {
        let span = e.span().unwrap_or(0..0);
        ctx.err(&span, "toml", e.message().to_string())
    })?;
    let whole = 0..0;
    let name = ctx.need(&raw.name, &whole, "name")?.get_ref().clone();
    let description = raw.description.map(|d| d.into_inner()).unwrap_or_default();
    let wind = match &raw.wind {
        None => Wind::default(),
        Some(w) => {
            let w = w.get_ref();
            let comp = |v: &Option<Spanned<f64>>, f: &str| match v {
                None => Ok(0.0),
                Some(v) => ctx
                    .number(v, f, -200.0..200.0, "kt")
                    .map(|x| x * MPS_PER_KT),
            };
            Wind {
                north_mps: comp(&w.north_kt, "wind.north_kt")?,
                east_mps: comp(&w.east_kt, "wind.east_kt")?,
            }
        }
    };
    let airports: BTreeMap<&str, &glidepath_atm::airports::Airport> =
        glidepath_atm::airports::us_airports()
            .map_err(|e| ctx.err(&whole, "airports", e.to_string()))?
            .iter()
            .map(|a| (a.icao.as_str(), a))
            .collect();
    let mut aircraft = Vec::new();
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for (i, spanned) in raw.aircraft.iter().enumerate() {
        let a = aircraft_of(&ctx, i, spanned, table, &airports)?;
        let line = ctx.line(
            &spanned
                .get_ref()
                .callsign
                .as_ref()
                .map_or(spanned.span(), |c| c.span()),
        );
        if let Some(first) = seen.insert(a.callsign.clone(), line) {
            return Err(ctx.err(
                &spanned.span(),
                format!("aircraft[{i}].callsign"),
                format!("{} is already used on line {first}", a.callsign),
            ));
        }
        aircraft.push(a);
    }
    for (b, spanned) in raw.generate.iter().enumerate() {
        let g = spanned.get_ref();
        let at = spanned.span();
        let field = |f: &str| format!("generate[{b}].{f}");
        let kind_s = ctx.need(&g.kind, &at, &field("kind"))?;
        let kind = match kind_s.get_ref().as_str() {
            "airline" => FlightKind::Airline,
            "uam" => FlightKind::Uam,
            other => {
                return Err(ctx.err(
                    &kind_s.span(),
                    field("kind"),
                    format!("`{other}` is not airline or uam"),
                ))
            }
        };
        let count_s = ctx.need(&g.count, &at, &field("count"))?;
        let count = *count_s.get_ref();
        if !(1..=1_000_000).contains(&count) {
            return Err(ctx.err(
                &count_s.span(),
                field("count"),
                format!("{count} is outside 1–1000000"),
            ));
        }
        let region = match &g.region {
            None => {
                if kind == FlightKind::Uam {
                    Region::BayArea
                } else {
                    Region::Us
                }
            }
            Some(r) => Region::ALL
                .iter()
                .find(|(n, _)| n == r.get_ref())
                .map(|(_, region)| *region)
                .ok_or_else(|| {
                    let names: Vec<&str> = Region::ALL.iter().map(|(n, _)| *n).collect();
                    ctx.err(
                        &r.span(),
                        field("region"),
                        format!("`{}` is not one of {}", r.get_ref(), names.join(", ")),
                    )
                })?,
        };
        let seed = g.seed.as_ref().map_or(1, |s| *s.get_ref()) as u64;
        let flights = generate::flights(kind, region, count as usize, seed, b + 1, table)
            .map_err(|reason| ctx.err(&at, field("kind"), reason))?;
        for f in flights {
            if let Some(first) = seen.insert(f.callsign.clone(), ctx.line(&at)) {
                return Err(ctx.err(
                    &at,
                    field("count"),
                    format!(
                        "generated callsign {} is already used on line {first}",
                        f.callsign
                    ),
                ));
            }
            aircraft.push(f);
        }
    }
    if aircraft.is_empty() {
        return Err(ctx.err(
            &whole,
            "aircraft",
            "the scenario has no aircraft (no [[aircraft]] and no [[generate]])",
        ));
    }
    Ok(Scenario {
        name,
        description,
        wind,
        aircraft,
    })
}

fn aircraft_of(
    ctx: &Ctx<'_>,
    i: usize,
    spanned: &Spanned<RawAircraft>,
    table: &PerformanceTable,
    airports: &BTreeMap<&str, &glidepath_atm::airports::Airport>,
) -> Result<Aircraft, ScenarioError> {
    let a = spanned.get_ref();
    let at = spanned.span();
    let field = |f: &str| format!("aircraft[{i}].{f}");
    let callsign = ctx.need(&a.callsign, &at, &field("callsign"))?;
    if callsign.get_ref().trim().is_empty() {
        return Err(ctx.err(&callsign.span(), field("callsign"), "empty"));
    }
    let type_s = ctx.need(&a.type_code, &at, &field("type"))?;
    let type_index = table.index_of(type_s.get_ref()).ok_or_else(|| {
        let known: Vec<&str> = table.types().iter().map(|p| p.type_code.as_str()).collect();
        ctx.err(
            &type_s.span(),
            field("type"),
            format!(
                "unknown type `{}` (known: {})",
                type_s.get_ref(),
                known.join(", ")
            ),
        )
    })?;
    let perf = table.get(type_index).expect("index from the table");
    let route = ctx.need(&a.route, &at, &field("route"))?;
    let mut waypoints = Vec::new();
    let mut names = BTreeSet::new();
    let n = route.get_ref().len();
    for (j, w) in route.get_ref().iter().enumerate() {
        let wf = |f: &str| format!("aircraft[{i}].route[{j}]{f}");
        let wp = match w.get_ref() {
            RawWaypoint::Airport(code) => {
                let ap = airports
                    .get(code.to_ascii_uppercase().as_str())
                    .ok_or_else(|| {
                        ctx.err(
                            &w.span(),
                            wf(""),
                            format!(
                                "unknown airport `{code}` (ICAO codes of data/airports-us.csv)"
                            ),
                        )
                    })?;
                // The last airport of a route is where the approach ends: 1,500 ft above it.
                let alt_ft = (j + 1 == n).then_some(ap.elevation_ft + 1_500.0);
                Waypoint {
                    name: ap.icao.clone(),
                    lat_deg: ap.lat_deg,
                    lon_deg: ap.lon_deg,
                    alt_ft,
                    speed_kt: None,
                }
            }
            RawWaypoint::Point(p) => {
                let span = w.span();
                let lat = ctx.need_at(&p.lat_deg, &span, &wf(".lat_deg"))?;
                let lon = ctx.need_at(&p.lon_deg, &span, &wf(".lon_deg"))?;
                Waypoint {
                    name: ctx.need_at(&p.name, &span, &wf(".name"))?,
                    lat_deg: ctx.number_at(lat, &span, &wf(".lat_deg"), -90.0..90.0, "°")?,
                    lon_deg: ctx.number_at(lon, &span, &wf(".lon_deg"), -180.0..180.0, "°")?,
                    alt_ft: p
                        .alt_ft
                        .map(|v| {
                            ctx.number_at(v, &span, &wf(".alt_ft"), 0.0..perf.ceiling_ft, "ft")
                        })
                        .transpose()?,
                    speed_kt: p
                        .speed_kt
                        .map(|v| {
                            ctx.number_at(
                                v,
                                &span,
                                &wf(".speed_kt"),
                                perf.min_cas_kt..perf.vmo_kt,
                                "kt",
                            )
                        })
                        .transpose()?,
                }
            }
        };
        if !names.insert(wp.name.clone()) {
            return Err(ctx.err(
                &w.span(),
                wf(""),
                format!("waypoint {} appears twice in the route", wp.name),
            ));
        }
        waypoints.push(wp);
    }
    if waypoints.is_empty() {
        return Err(ctx.err(
            &route.span(),
            field("route"),
            "a route needs at least one waypoint",
        ));
    }
    let cruise = a
        .cruise_alt_ft
        .as_ref()
        .map(|v| ctx.number(v, &field("cruise_alt_ft"), 0.0..perf.ceiling_ft, "ft"))
        .transpose()?;
    let first = &waypoints[0];
    let opt = |v: &Option<Spanned<f64>>, f: &str, r: Range<f64>, unit: &str| {
        v.as_ref()
            .map(|v| ctx.number(v, &field(f), r, unit))
            .transpose()
    };
    let lat = opt(&a.lat_deg, "lat_deg", -90.0..90.0, "°")?.unwrap_or(first.lat_deg);
    let lon = opt(&a.lon_deg, "lon_deg", -180.0..180.0, "°")?.unwrap_or(first.lon_deg);
    let default_alt = first.alt_ft.unwrap_or_else(|| {
        airports
            .get(first.name.as_str())
            .map_or(3_000.0, |ap| ap.elevation_ft + 1_500.0)
    });
    let alt_ft = opt(&a.alt_ft, "alt_ft", 0.0..perf.ceiling_ft, "ft")?.unwrap_or(default_alt);
    let cas = opt(&a.speed_kt, "speed_kt", perf.min_cas_kt..perf.vmo_kt, "kt")?
        .unwrap_or(perf.climb_cas_kt.min(250.0));
    // Flying to the first waypoint unless the aircraft starts on it.
    let starts_on_first = a.lat_deg.is_none() && a.lon_deg.is_none();
    let active = usize::from(starts_on_first && waypoints.len() > 1);
    let (lat_r, lon_r) = (lat.to_radians(), lon.to_radians());
    let next = &waypoints[active];
    let heading = match opt(&a.heading_deg, "heading_deg", 0.0..360.0, "°")? {
        Some(h) => h.to_radians(),
        None => bearing_rad(
            lat_r,
            lon_r,
            next.lat_deg.to_radians(),
            next.lon_deg.to_radians(),
        ),
    };
    let isa = Isa::at(alt_ft * M_PER_FT);
    let tas = isa.cas_to_tas(cas * MPS_PER_KT);
    if isa.mach(tas) > perf.mmo {
        let span = a.speed_kt.as_ref().map_or(at.clone(), |s| s.span());
        return Err(ctx.err(
            &span,
            field("speed_kt"),
            format!("{cas} kt at {alt_ft} ft is above Mmo {}", perf.mmo),
        ));
    }
    let state = KinematicState {
        lat_rad: lat_r,
        lon_rad: lon_r,
        alt_m: alt_ft * M_PER_FT,
        tas_mps: tas,
        heading_rad: heading,
        vs_mps: 0.0,
        bank_rad: 0.0,
        gs_mps: tas,
        track_rad: heading,
    };
    Ok(Aircraft::new(
        callsign.get_ref().clone(),
        type_index,
        FlightPlan::new(waypoints, cruise),
        state,
        active,
    ))
}

//! Aircraft performance: the parameters the point-mass model flies by, one row per
//! type. Jet airliners come from `data/aircraft-performance.csv`, derived from OpenAP's
//! WRAP tables (LGPL-3.0, see `data/README.md`; a file given at run time replaces it);
//! the eVTOL types and the handling limits (bank, roll rate, accelerations) that OpenAP
//! does not give are glidepath's own round figures, kept in this file.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::OnceLock;

/// The performance file compiled in: jets derived from OpenAP 2.6.2.
const BUILTIN_CSV: &str = include_str!("../../../data/aircraft-performance.csv");
/// The name the compiled-in file is reported under.
const BUILTIN_NAME: &str = "data/aircraft-performance.csv";

/// What kind of vehicle a type is: decides the handling limits OpenAP does not give.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VehicleClass {
    /// A jet airliner: 25° bank, 5°/s roll rate, 1 kt/s speed change.
    Jet,
    /// An electric vertical take-off and landing vehicle of urban air mobility: hovers,
    /// so its minimum speed is zero and its turn rate is capped instead.
    Evtol,
}

/// One aircraft type's performance. Speeds are calibrated airspeeds unless named Mach,
/// altitudes are pressure altitudes, rates are magnitudes.
#[derive(Clone, Debug, PartialEq)]
pub struct Performance {
    /// ICAO type designator, e.g. `A320`.
    pub type_code: String,
    /// Human name, e.g. `Airbus A320`.
    pub name: String,
    /// Jet or eVTOL.
    pub class: VehicleClass,
    /// Maximum operating speed, kt.
    pub vmo_kt: f64,
    /// Maximum operating Mach number.
    pub mmo: f64,
    /// Service ceiling, ft.
    pub ceiling_ft: f64,
    /// Lowest speed the model accepts in a command (the low end of the observed
    /// approach speeds for jets; zero for a vehicle that hovers), kt.
    pub min_cas_kt: f64,
    /// Usual cruise altitude, ft.
    pub cruise_alt_ft: f64,
    /// Climb speed below the Mach crossover, kt.
    pub climb_cas_kt: f64,
    /// Climb Mach above the crossover.
    pub climb_mach: f64,
    /// Below this altitude the climb rate is `climb_rate_low_fpm`, ft.
    pub climb_cas_alt_ft: f64,
    /// Above this altitude the climb rate is `climb_rate_mach_fpm`, ft.
    pub climb_mach_alt_ft: f64,
    /// Climb rate at low altitude, ft/min.
    pub climb_rate_low_fpm: f64,
    /// Climb rate at constant CAS, ft/min.
    pub climb_rate_cas_fpm: f64,
    /// Climb rate at constant Mach, ft/min.
    pub climb_rate_mach_fpm: f64,
    /// The most the model ever climbs at, ft/min (the envelope's limit).
    pub climb_rate_max_fpm: f64,
    /// Cruise speed where the Mach limit does not bind, kt.
    pub cruise_cas_kt: f64,
    /// Cruise Mach.
    pub cruise_mach: f64,
    /// Descent Mach above the crossover.
    pub descent_mach: f64,
    /// Descent speed below the crossover, kt.
    pub descent_cas_kt: f64,
    /// Above this altitude the descent rate is `descent_rate_mach_fpm`, ft.
    pub descent_mach_alt_ft: f64,
    /// Below this altitude the descent rate is `descent_rate_low_fpm`, ft.
    pub descent_cas_alt_ft: f64,
    /// Descent rate at constant Mach, ft/min.
    pub descent_rate_mach_fpm: f64,
    /// Descent rate at constant CAS, ft/min.
    pub descent_rate_cas_fpm: f64,
    /// Descent rate at low altitude, ft/min.
    pub descent_rate_low_fpm: f64,
    /// The most the model ever descends at, ft/min (the envelope's limit).
    pub descent_rate_max_fpm: f64,
    /// Final approach speed, kt.
    pub approach_cas_kt: f64,
    /// Largest bank angle, degrees (ours: 25° is the usual autopilot limit for jets).
    pub bank_max_deg: f64,
    /// Roll rate, degrees per second (ours).
    pub roll_rate_deg_s: f64,
    /// Largest turn rate, degrees per second (ours; binds only at low speed).
    pub turn_rate_max_deg_s: f64,
    /// Largest change of airspeed, kt per second (ours).
    pub accel_kt_s: f64,
    /// Largest change of vertical speed, ft/min per second (ours: about 0.05 g).
    pub vertical_accel_fpm_s: f64,
}

/// A malformed performance file: which file, line and column, and what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {field}: {reason}")]
pub struct PerformanceError {
    /// The file's name.
    pub file: String,
    /// 1-based line.
    pub line: usize,
    /// The column (field) at fault, or `header`.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

/// Every known type, by ICAO designator.
#[derive(Clone, Debug)]
pub struct PerformanceTable {
    types: Vec<Performance>,
    by_code: BTreeMap<String, u16>,
}

/// The columns a performance file must have (any order; others are refused).
const COLUMNS: [&str; 30] = [
    "type",
    "name",
    "vmo_kt",
    "mmo",
    "ceiling_ft",
    "liftoff_kt",
    "cruise_alt_ft",
    "cruise_alt_max_ft",
    "climb_cas_kt",
    "climb_mach",
    "climb_cas_alt_ft",
    "climb_mach_alt_ft",
    "climb_rate_low_fpm",
    "climb_rate_cas_fpm",
    "climb_rate_mach_fpm",
    "climb_rate_max_fpm",
    "cruise_cas_kt",
    "cruise_mach",
    "cruise_mach_max",
    "descent_mach",
    "descent_cas_kt",
    "descent_mach_alt_ft",
    "descent_cas_alt_ft",
    "descent_rate_mach_fpm",
    "descent_rate_cas_fpm",
    "descent_rate_low_fpm",
    "descent_rate_max_fpm",
    "approach_cas_kt",
    "approach_cas_min_kt",
    "approach_rate_fpm",
];

impl PerformanceTable {
    /// The compiled-in table: the OpenAP-derived jets and glidepath's eVTOLs.
    pub fn builtin() -> &'static PerformanceTable {
        static TABLE: OnceLock<PerformanceTable> = OnceLock::new();
        TABLE.get_or_init(|| {
            PerformanceTable::parse_csv(BUILTIN_NAME, BUILTIN_CSV)
                .expect("the compiled-in performance file is valid (tested)")
        })
    }

    /// Reads a performance file in the layout of `data/aircraft-performance.csv`
    /// (lines starting with `#` are comments); glidepath's eVTOL types are added.
    pub fn from_path(path: &Path) -> Result<PerformanceTable, PerformanceError> {
        let name = path.display().to_string();
        let text = std::fs::read_to_string(path).map_err(|e| PerformanceError {
            file: name.clone(),
            line: 0,
            field: "file".into(),
            reason: e.to_string(),
        })?;
        PerformanceTable::parse_csv(&name, &text)
    }

    /// Parses a performance file's text; `file` names it in errors.
    pub fn parse_csv(file: &str, text: &str) -> Result<PerformanceTable, PerformanceError> {
        let err = |line: usize, field: &str, reason: String| PerformanceError {
            file: file.to_string(),
            line,
            field: field.to_string(),
            reason,
        };
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(i, l)| (i + 1, l.trim()))
            .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'));
        let (header_line, header) = lines
            .next()
            .ok_or_else(|| err(1, "header", "the file has no header line".into()))?;
        let names: Vec<&str> = header.split(',').map(str::trim).collect();
        let mut index = BTreeMap::new();
        for (i, name) in names.iter().enumerate() {
            if !COLUMNS.contains(name) {
                return Err(err(header_line, name, "unknown column".into()));
            }
            index.insert(*name, i);
        }
        if let Some(missing) = COLUMNS.iter().find(|c| !index.contains_key(*c)) {
            return Err(err(header_line, missing, "missing column".into()));
        }
        let mut table = PerformanceTable {
            types: Vec::new(),
            by_code: BTreeMap::new(),
        };
        for (line, row) in lines {
            let cells: Vec<&str> = row.split(',').map(str::trim).collect();
            if cells.len() != names.len() {
                return Err(err(
                    line,
                    "row",
                    format!("{} fields, the header has {}", cells.len(), names.len()),
                ));
            }
            let text_of = |c: &str| cells[index[c]];
            let num = |c: &str| -> Result<f64, PerformanceError> {
                let v: f64 = text_of(c)
                    .parse()
                    .map_err(|_| err(line, c, format!("`{}` is not a number", text_of(c))))?;
                if !v.is_finite() || v < 0.0 {
                    return Err(err(
                        line,
                        c,
                        format!("{v} is not a finite, non-negative value"),
                    ));
                }
                Ok(v)
            };
            let code = text_of("type").to_ascii_uppercase();
            if code.is_empty() {
                return Err(err(line, "type", "empty type designator".into()));
            }
            let perf = Performance {
                type_code: code.clone(),
                name: text_of("name").to_string(),
                class: VehicleClass::Jet,
                vmo_kt: num("vmo_kt")?,
                mmo: num("mmo")?,
                ceiling_ft: num("ceiling_ft")?,
                min_cas_kt: num("approach_cas_min_kt")?,
                cruise_alt_ft: num("cruise_alt_ft")?,
                climb_cas_kt: num("climb_cas_kt")?,
                climb_mach: num("climb_mach")?,
                climb_cas_alt_ft: num("climb_cas_alt_ft")?,
                climb_mach_alt_ft: num("climb_mach_alt_ft")?,
                climb_rate_low_fpm: num("climb_rate_low_fpm")?,
                climb_rate_cas_fpm: num("climb_rate_cas_fpm")?,
                climb_rate_mach_fpm: num("climb_rate_mach_fpm")?,
                climb_rate_max_fpm: num("climb_rate_max_fpm")?,
                cruise_cas_kt: num("cruise_cas_kt")?,
                cruise_mach: num("cruise_mach")?,
                descent_mach: num("descent_mach")?,
                descent_cas_kt: num("descent_cas_kt")?,
                descent_mach_alt_ft: num("descent_mach_alt_ft")?,
                descent_cas_alt_ft: num("descent_cas_alt_ft")?,
                descent_rate_mach_fpm: num("descent_rate_mach_fpm")?,
                descent_rate_cas_fpm: num("descent_rate_cas_fpm")?,
                descent_rate_low_fpm: num("descent_rate_low_fpm")?,
                descent_rate_max_fpm: num("descent_rate_max_fpm")?,
                approach_cas_kt: num("approach_cas_kt")?,
                bank_max_deg: 25.0,
                roll_rate_deg_s: 5.0,
                turn_rate_max_deg_s: 6.0,
                accel_kt_s: 1.0,
                vertical_accel_fpm_s: 600.0,
            };
            if perf.min_cas_kt >= perf.vmo_kt || perf.mmo <= 0.0 || perf.ceiling_ft <= 0.0 {
                return Err(err(
                    line,
                    "vmo_kt",
                    "an empty speed or altitude envelope".into(),
                ));
            }
            table
                .insert(perf)
                .map_err(|reason| err(line, "type", reason))?;
        }
        for evtol in evtol_types() {
            table
                .insert(evtol)
                .map_err(|reason| err(0, "type", reason))?;
        }
        Ok(table)
    }

    fn insert(&mut self, perf: Performance) -> Result<(), String> {
        if self.by_code.contains_key(&perf.type_code) {
            return Err(format!("type {} appears twice", perf.type_code));
        }
        let index = u16::try_from(self.types.len()).map_err(|_| "too many types".to_string())?;
        self.by_code.insert(perf.type_code.clone(), index);
        self.types.push(perf);
        Ok(())
    }

    /// The index of a type (what an aircraft keeps), by designator, any case.
    pub fn index_of(&self, type_code: &str) -> Option<u16> {
        self.by_code.get(&type_code.to_ascii_uppercase()).copied()
    }

    /// A type by index; `None` for an index this table never gave.
    pub fn get(&self, index: u16) -> Option<&Performance> {
        self.types.get(usize::from(index))
    }

    /// Every type, in file order, eVTOLs last.
    pub fn types(&self) -> &[Performance] {
        &self.types
    }

    /// The jet types (what the random-flights generator draws airliners from).
    pub fn jets(&self) -> impl Iterator<Item = (u16, &Performance)> {
        self.types
            .iter()
            .enumerate()
            .filter(|(_, p)| p.class == VehicleClass::Jet)
            .map(|(i, p)| (i as u16, p))
    }
}

/// glidepath's eVTOL types: round figures for a small lift-plus-cruise air taxi and a
/// multicopter, in the range published for current designs (cruise 90–130 kt at
/// 1,000–3,000 ft, climb and descent about 500–1,000 ft/min). Not from OpenAP.
fn evtol_types() -> Vec<Performance> {
    let base = |code: &str, name: &str, cruise_kt: f64, rate_fpm: f64| Performance {
        type_code: code.into(),
        name: name.into(),
        class: VehicleClass::Evtol,
        vmo_kt: cruise_kt * 1.25,
        mmo: 0.3,
        ceiling_ft: 10_000.0,
        min_cas_kt: 0.0,
        cruise_alt_ft: 1_500.0,
        climb_cas_kt: cruise_kt * 0.7,
        climb_mach: 0.3,
        climb_cas_alt_ft: 500.0,
        climb_mach_alt_ft: 10_000.0,
        climb_rate_low_fpm: rate_fpm,
        climb_rate_cas_fpm: rate_fpm,
        climb_rate_mach_fpm: rate_fpm,
        climb_rate_max_fpm: rate_fpm,
        cruise_cas_kt: cruise_kt,
        cruise_mach: 0.3,
        descent_mach: 0.3,
        descent_cas_kt: cruise_kt * 0.8,
        descent_mach_alt_ft: 10_000.0,
        descent_cas_alt_ft: 500.0,
        descent_rate_mach_fpm: rate_fpm,
        descent_rate_cas_fpm: rate_fpm,
        descent_rate_low_fpm: rate_fpm,
        descent_rate_max_fpm: rate_fpm,
        approach_cas_kt: 40.0,
        bank_max_deg: 30.0,
        roll_rate_deg_s: 10.0,
        turn_rate_max_deg_s: 15.0,
        accel_kt_s: 2.0,
        vertical_accel_fpm_s: 600.0,
    };
    vec![
        base("EVTL", "glidepath lift-plus-cruise eVTOL", 110.0, 800.0),
        base("EVMC", "glidepath multicopter eVTOL", 60.0, 500.0),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_table_has_every_openap_type_and_the_evtols() {
        let t = PerformanceTable::builtin();
        assert_eq!(t.jets().count(), 17);
        let a320 = t.get(t.index_of("a320").unwrap()).unwrap();
        assert_eq!(a320.name, "Airbus A320");
        assert_eq!(a320.vmo_kt, 350.0);
        assert!(t.index_of("EVTL").is_some() && t.index_of("EVMC").is_some());
        assert!(t.index_of("C172").is_none());
    }

    #[test]
    fn bad_files_name_the_line_and_field() {
        let header = COLUMNS.join(",");
        let e = PerformanceTable::parse_csv("p.csv", "# c\ntype,name\n").unwrap_err();
        assert_eq!((e.line, e.field.as_str()), (2, "vmo_kt"));
        let row = |vmo: &str| {
            let mut cells = vec!["1"; COLUMNS.len()];
            cells[0] = "X1";
            cells[2] = vmo;
            cells.join(",")
        };
        let e = PerformanceTable::parse_csv("p.csv", &format!("{header}\n\n{}\n", row("fast")))
            .unwrap_err();
        assert_eq!(e.to_string(), "p.csv:3: vmo_kt: `fast` is not a number");
        let e = PerformanceTable::parse_csv(
            "p.csv",
            &format!("{header}\n{}\n{}\n", row("300"), row("300")),
        )
        .unwrap_err();
        assert_eq!((e.line, e.reason.as_str()), (3, "type X1 appears twice"));
    }
}

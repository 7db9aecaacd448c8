//! Scenarios: the aircraft a run starts with, from a TOML file (hand-written aircraft
//! with their flight plans, and `[[generate]]` blocks of random flights between US
//! airports or urban-air-mobility vertiports) or one of the built-in files in
//! `scenarios/`. Every error names the file, the line and the field.

mod file;
mod generate;

use crate::dynamics::{Aircraft, Wind};
use crate::perf::PerformanceTable;

pub use generate::{FlightKind, Region};

/// A loaded scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// Its name.
    pub name: String,
    /// One line saying what it is.
    pub description: String,
    /// The wind over the whole scenario.
    pub wind: Wind,
    /// Every aircraft, hand-written ones first, in file order.
    pub aircraft: Vec<Aircraft>,
}

/// A scenario that cannot be loaded: where and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{file}:{line}: {field}: {reason}")]
pub struct ScenarioError {
    /// The file (or `builtin:NAME`).
    pub file: String,
    /// 1-based line (0 when the file could not be read).
    pub line: usize,
    /// The field at fault, e.g. `aircraft[2].type`.
    pub field: String,
    /// What is wrong.
    pub reason: String,
}

/// The built-in scenarios: name, and the file's text.
const BUILTIN: [(&str, &str); 5] = [
    ("demo", include_str!("../../../../scenarios/demo.toml")),
    ("us-400", include_str!("../../../../scenarios/us-400.toml")),
    (
        "us-1000",
        include_str!("../../../../scenarios/us-1000.toml"),
    ),
    (
        "us-10000",
        include_str!("../../../../scenarios/us-10000.toml"),
    ),
    (
        "uam-bay-area",
        include_str!("../../../../scenarios/uam-bay-area.toml"),
    ),
];

/// The built-in scenarios' names with their descriptions.
pub fn builtin_names() -> Vec<(&'static str, String)> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            let description = parse_str(
                &format!("builtin:{name}"),
                text,
                PerformanceTable::builtin(),
            )
            .map(|s| s.description)
            .unwrap_or_else(|e| format!("(broken: {e})"));
            (*name, description)
        })
        .collect()
}

/// A built-in scenario by name, else a scenario file at that path.
pub fn load(name_or_path: &str, table: &PerformanceTable) -> Result<Scenario, ScenarioError> {
    if let Some((name, text)) = BUILTIN.iter().find(|(n, _)| *n == name_or_path) {
        return parse_str(&format!("builtin:{name}"), text, table);
    }
    let text = std::fs::read_to_string(name_or_path).map_err(|e| ScenarioError {
        file: name_or_path.to_string(),
        line: 0,
        field: "file".into(),
        reason: format!(
            "{e} (not a built-in scenario either: {})",
            BUILTIN
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
        ),
    })?;
    parse_str(name_or_path, &text, table)
}

/// Parses a scenario file's text; `file` names it in errors.
pub fn parse_str(
    file: &str,
    text: &str,
    table: &PerformanceTable,
) -> Result<Scenario, ScenarioError> {
    file::parse(file, text, table)
}

/// `count` random flights, as a `[[generate]]` block makes them (for benchmarks).
pub fn random_flights(
    kind: FlightKind,
    region: Region,
    count: usize,
    seed: u64,
    table: &PerformanceTable,
) -> Result<Vec<Aircraft>, String> {
    generate::flights(kind, region, count, seed, 0, table)
}

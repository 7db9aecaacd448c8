//! Simulation layouts: which components (blocks) a run has, their properties, and which
//! block's messages flow to which (links), read from a TOML file.
//!
//! This mirrors the ATM TestBed memorandum (`000_5ec45ac95430ffab`): Figure 3.1 draws the
//! fast-time layout as blocks joined by directed links, and Table 3.1 lists each block's
//! properties — scheduled period and delay, traffic start and end time, data category,
//! publish track / flight plan, fast time, host key. [`Layout`] carries exactly those,
//! plus what glidepath needs to make a block run (its traffic [`TrafficSource`], a
//! recorder's output file, a real-time speed factor). `layouts/atm-testbed-day.toml` is
//! the memorandum's layout and `layouts/README.md` documents every key.
//!
//! A layout is user input, so a bad one never panics and never falls back to a silent
//! default: every [`LayoutError`] names the file and line, and the block and property
//! at fault (house style: "what is wrong and where").
//!
//! This file is the model and the entry points; `source.rs` is the file as written
//! (spanned TOML, line and column of a byte), `validate.rs` turns it into a [`Layout`]
//! or a located error, and `time.rs` reads instants and durations.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::adsb_csv::TimestampUnit;

pub mod sector;
mod source;
mod time;
mod validate;

pub use sector::Sector;
pub use time::{format_rfc3339, parse_duration, parse_rfc3339};
use validate::parse;

/// A whole layout: the blocks of Figure 3.1 and the links between them.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Short name of the layout (reports use it as the layout's label).
    pub name: String,
    /// Free text saying what the layout reproduces.
    pub description: String,
    /// Unix seconds of simulated second 0, e.g. 2016-03-23T07:00:00Z for the memorandum's
    /// day. A block's `scheduled_delay_s` counts from here. The layout's `day_start`,
    /// else the earliest `traffic_start` of its blocks; `None` when it has neither,
    /// which only a layout whose sources are all recorded may do: the run then starts
    /// at the data's first row ([`crate::run::frame`]).
    pub day_start: Option<i64>,
    /// The components, in file order.
    pub blocks: Vec<Block>,
    /// Directed message flows, in file order.
    pub links: Vec<Link>,
}

/// What a block does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// Publishes tracks (the memorandum's "ATAC Data" blocks).
    Traffic,
    /// Measures the messages it receives (the memorandum's "Network Performance" block).
    Monitor,
    /// Writes every message it receives to a file.
    Recorder,
    /// Plays a recorder's file back into a later run.
    Player,
    /// Publishes tracks from a federate of its own process, in any language, that
    /// joins the run's federation under the block's name and follows the protocol of
    /// `layouts/README.md` ("External blocks"): a Python model, a real component.
    External,
}

impl BlockKind {
    /// Every kind, in the spelling a layout file uses.
    pub const NAMES: [&'static str; 5] = ["traffic", "monitor", "recorder", "player", "external"];

    /// The kind a layout file spells `name`.
    pub fn from_name(name: &str) -> Option<BlockKind> {
        match name {
            "traffic" => Some(BlockKind::Traffic),
            "monitor" => Some(BlockKind::Monitor),
            "recorder" => Some(BlockKind::Recorder),
            "player" => Some(BlockKind::Player),
            "external" => Some(BlockKind::External),
            _ => None,
        }
    }

    /// The spelling in a layout file.
    pub fn name(self) -> &'static str {
        match self {
            BlockKind::Traffic => "traffic",
            BlockKind::Monitor => "monitor",
            BlockKind::Recorder => "recorder",
            BlockKind::Player => "player",
            BlockKind::External => "external",
        }
    }

    /// Whether blocks of this kind publish messages (may be a link's `from`).
    pub fn publishes(self) -> bool {
        matches!(
            self,
            BlockKind::Traffic | BlockKind::Player | BlockKind::External
        )
    }

    /// Whether blocks of this kind subscribe to messages (may be a link's `to`).
    pub fn subscribes(self) -> bool {
        matches!(self, BlockKind::Monitor | BlockKind::Recorder)
    }
}

impl fmt::Display for BlockKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a traffic or player block's tracks come from.
#[derive(Clone, Debug, PartialEq)]
pub enum TrafficSource {
    /// The seeded synthetic day of [`crate::traffic`]; two blocks with the same seed and
    /// density play complementary windows of the same day.
    Generated {
        /// Seed of every random choice.
        seed: u64,
        /// Flight-count scale; 1.0 is the day calibrated to Table 4.2.
        density: f64,
    },
    /// Recorded ADS-B state vectors ([`crate::adsb_csv`]).
    AdsbCsv {
        /// The CSV file (resolved against the layout's directory by [`load_layout`]).
        path: PathBuf,
        /// How numeric timestamps are read (`timestamp_unit`, default `auto`).
        timestamp_unit: TimestampUnit,
    },
    /// A file written by a recorder block in an earlier run.
    Recording {
        /// The recording (resolved against the layout's directory by [`load_layout`]).
        path: PathBuf,
    },
}

impl TrafficSource {
    /// The source kind as a layout spells it: `generated`, `adsb_csv`, `recording`.
    pub fn kind_name(&self) -> &'static str {
        match self {
            TrafficSource::Generated { .. } => "generated",
            TrafficSource::AdsbCsv { .. } => "adsb_csv",
            TrafficSource::Recording { .. } => "recording",
        }
    }

    /// The file a recorded source plays, `None` for the generated day.
    pub fn path(&self) -> Option<&Path> {
        match self {
            TrafficSource::Generated { .. } => None,
            TrafficSource::AdsbCsv { path, .. } | TrafficSource::Recording { path } => Some(path),
        }
    }

    /// Whether the source plays recorded data (a CSV or a recording) rather than the
    /// generated day.
    pub fn is_recorded(&self) -> bool {
        self.path().is_some()
    }
}

/// One component with the properties of Table 3.1.
#[derive(Clone, Debug, PartialEq)]
pub struct Block {
    /// Unique name, e.g. `ATAC Data:1`.
    pub name: String,
    /// What the block does.
    pub kind: BlockKind,
    /// Simulated seconds between two publications ("Scheduled Period"); 1 s in the memo.
    pub scheduled_period_s: f64,
    /// Simulated seconds after second 0 at which the block starts ("Scheduled Delay").
    pub scheduled_delay_s: f64,
    /// First traffic instant played, unix seconds ("Traffic Start Time").
    pub traffic_start: Option<i64>,
    /// End of the traffic played (exclusive), unix seconds ("Traffic End Time").
    pub traffic_end: Option<i64>,
    /// "Data Category": the region of the traffic (`USA`).
    pub data_category: String,
    /// "Publish Track": whether track messages are published.
    pub publish_track: bool,
    /// "Publish Flight Plan": whether flight-plan messages are published.
    pub publish_flight_plan: bool,
    /// "Fast Time": publish each simulated second as fast as the middleware takes it,
    /// rather than on the wall clock.
    pub fast_time: bool,
    /// Real-time speed factor (2.0 plays twice as fast as the wall clock); ignored in fast
    /// time. Default 1.0.
    pub speed: f64,
    /// "Host Key": where the component manager starts the block.
    pub host: String,
    /// The tracks of a traffic or player block; `None` for monitors and recorders.
    pub source: Option<TrafficSource>,
    /// The file a recorder writes; `None` for other kinds.
    pub output: Option<PathBuf>,
    /// Where the layout editor draws the block (`position = [x, y]`, pixels of its
    /// top-left corner); a run ignores it.
    pub position: Option<[f64; 2]>,
    /// How long the run waits for an external block's federate to join (`join_within`,
    /// default 2 minutes); `None` for other kinds.
    pub join_within_s: Option<f64>,
    /// A monitor's or recorder's sector: it receives only the tracks inside, through
    /// DDM (`sector = { lat = [..], lon = [..], alt_ft = [..] }`); `None`: all.
    pub sector: Option<Sector>,
}

/// A directed message flow between two blocks (an arrow of Figure 3.1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Link {
    /// The publishing block's name.
    pub from: String,
    /// The subscribing block's name.
    pub to: String,
}

impl Layout {
    /// The block called `name`.
    pub fn block(&self, name: &str) -> Option<&Block> {
        self.blocks.iter().find(|b| b.name == name)
    }

    /// The traffic blocks, in file order (players are not included).
    pub fn traffic_blocks(&self) -> impl Iterator<Item = &Block> {
        self.blocks.iter().filter(|b| b.kind == BlockKind::Traffic)
    }

    /// The blocks that receive `from`'s messages, in link order.
    pub fn sinks_of(&self, from: &str) -> Vec<&Block> {
        self.links
            .iter()
            .filter(|l| l.from == from)
            .filter_map(|l| self.block(&l.to))
            .collect()
    }
}

/// Why a layout was rejected. Every variant carries the file (`origin`) and a 1-based
/// line; variants about a block name it and the property at fault.
#[derive(Debug, thiserror::Error)]
pub enum LayoutError {
    /// The file could not be read.
    #[error("{}: cannot read layout: {source}", path.display())]
    Io {
        /// The layout file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Not TOML, a value of the wrong type, or a key the format does not know.
    #[error(
        "{origin}:{line}:{col}: {}{}{message}",
        in_block(block),
        in_property(property)
    )]
    Syntax {
        /// The layout file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        col: usize,
        /// The enclosing `[[block]]`'s name, when the error is inside one.
        block: Option<String>,
        /// The key whose value is wrong, when the parser's message does not name it.
        property: Option<String>,
        /// The TOML parser's message.
        message: String,
    },
    /// A top-level property is missing or wrong.
    #[error("{origin}:{line}: layout property `{property}`: {reason}")]
    InvalidLayout {
        /// The layout file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// The property.
        property: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `kind` names no block kind.
    #[error("{origin}:{line}: block \"{block}\": property `kind`: unknown block kind \"{kind}\" (expected one of: traffic, monitor, recorder, player, external)")]
    UnknownKind {
        /// The layout file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// The block's name.
        block: String,
        /// The kind as written.
        kind: String,
    },
    /// A property the block's kind requires is absent.
    #[error("{origin}:{line}: block \"{block}\": missing required property `{property}`")]
    MissingProperty {
        /// The layout file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// The block's name (`<unnamed>` when `name` itself is missing).
        block: String,
        /// The property.
        property: String,
    },
    /// A property has a value outside its domain (negative period, end before start,
    /// speed ≤ 0, malformed time, property not used by the block's kind, ...).
    #[error("{origin}:{line}: block \"{block}\": property `{property}`: {reason}")]
    InvalidProperty {
        /// The layout file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// The block's name.
        block: String,
        /// The property.
        property: String,
        /// What is wrong with it.
        reason: String,
    },
    /// Two blocks share a name.
    #[error("{origin}:{line}: block \"{block}\": property `name`: duplicate block name (first defined on line {first_line})")]
    DuplicateBlock {
        /// The layout file.
        origin: String,
        /// 1-based line of the second definition.
        line: usize,
        /// The name.
        block: String,
        /// 1-based line of the first definition.
        first_line: usize,
    },
    /// A link is wrong: an unknown block, a direction the kinds do not allow, a duplicate.
    #[error("{origin}:{line}: link {index} ({link}): property `{property}`: {reason}")]
    InvalidLink {
        /// The layout file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// 1-based position of the link among the `[[link]]` tables.
        index: usize,
        /// The link as written, `"from" -> "to"`.
        link: String,
        /// `from` or `to`.
        property: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A monitor or recorder that no link feeds: it would measure nothing.
    #[error("{origin}:{line}: block \"{block}\": property `links`: {kind} block has no incoming link, so it would receive nothing (add a [[link]] with to = \"{block}\")")]
    Unfed {
        /// The layout file.
        origin: String,
        /// 1-based line.
        line: usize,
        /// The block's name.
        block: String,
        /// Its kind.
        kind: BlockKind,
    },
}

impl LayoutError {
    /// The 1-based line at fault (`None` when the file could not be read).
    pub fn line(&self) -> Option<usize> {
        match self {
            LayoutError::Io { .. } => None,
            LayoutError::Syntax { line, .. }
            | LayoutError::InvalidLayout { line, .. }
            | LayoutError::UnknownKind { line, .. }
            | LayoutError::MissingProperty { line, .. }
            | LayoutError::InvalidProperty { line, .. }
            | LayoutError::DuplicateBlock { line, .. }
            | LayoutError::InvalidLink { line, .. }
            | LayoutError::Unfed { line, .. } => Some(*line),
        }
    }

    /// The block at fault, when the error is about one.
    pub fn block(&self) -> Option<&str> {
        match self {
            LayoutError::Syntax { block, .. } => block.as_deref(),
            LayoutError::UnknownKind { block, .. }
            | LayoutError::MissingProperty { block, .. }
            | LayoutError::InvalidProperty { block, .. }
            | LayoutError::DuplicateBlock { block, .. }
            | LayoutError::Unfed { block, .. } => Some(block),
            LayoutError::Io { .. }
            | LayoutError::InvalidLayout { .. }
            | LayoutError::InvalidLink { .. } => None,
        }
    }

    /// The property at fault, when the error names one (`kind`, `name`, `links`, a
    /// link's `from` or `to`, a top-level property).
    pub fn property(&self) -> Option<&str> {
        match self {
            LayoutError::Io { .. } => None,
            LayoutError::Syntax { property, .. } => property.as_deref(),
            LayoutError::UnknownKind { .. } => Some("kind"),
            LayoutError::DuplicateBlock { .. } => Some("name"),
            LayoutError::Unfed { .. } => Some("links"),
            LayoutError::InvalidLayout { property, .. }
            | LayoutError::MissingProperty { property, .. }
            | LayoutError::InvalidProperty { property, .. }
            | LayoutError::InvalidLink { property, .. } => Some(property),
        }
    }
}

fn in_property(property: &Option<String>) -> String {
    match property {
        Some(p) => format!("property `{p}`: "),
        None => String::new(),
    }
}

fn in_block(block: &Option<String>) -> String {
    match block {
        Some(b) => format!("block \"{b}\": "),
        None => String::new(),
    }
}

/// Reads and validates the layout file at `path`. Relative paths inside it (traffic
/// sources, recorder outputs) are resolved against the file's directory, so a layout can
/// be run from anywhere.
pub fn load_layout(path: &Path) -> Result<Layout, LayoutError> {
    let text = std::fs::read_to_string(path).map_err(|source| LayoutError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    parse(&text, &path.display().to_string(), Some(&base))
}

/// Parses and validates layout text; `origin` names it in errors (a file name, `<stdin>`).
/// Relative paths are kept as written.
pub fn parse_layout(text: &str, origin: &str) -> Result<Layout, LayoutError> {
    parse(text, origin, None)
}

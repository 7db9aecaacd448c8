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

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

/// A whole layout: the blocks of Figure 3.1 and the links between them.
#[derive(Clone, Debug, PartialEq)]
pub struct Layout {
    /// Short name of the layout (reports use it as the layout's label).
    pub name: String,
    /// Free text saying what the layout reproduces.
    pub description: String,
    /// Unix seconds of simulated second 0, e.g. 2016-03-23T07:00:00Z for the memorandum's
    /// day. A block's `scheduled_delay_s` counts from here.
    pub day_start: i64,
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
}

impl BlockKind {
    /// Every kind, in the spelling a layout file uses.
    pub const NAMES: [&'static str; 4] = ["traffic", "monitor", "recorder", "player"];

    /// The kind a layout file spells `name`.
    pub fn from_name(name: &str) -> Option<BlockKind> {
        match name {
            "traffic" => Some(BlockKind::Traffic),
            "monitor" => Some(BlockKind::Monitor),
            "recorder" => Some(BlockKind::Recorder),
            "player" => Some(BlockKind::Player),
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
        }
    }

    /// Whether blocks of this kind publish messages (may be a link's `from`).
    pub fn publishes(self) -> bool {
        matches!(self, BlockKind::Traffic | BlockKind::Player)
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
    },
    /// A file written by a recorder block in an earlier run.
    Recording {
        /// The recording (resolved against the layout's directory by [`load_layout`]).
        path: PathBuf,
    },
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
    #[error("{origin}:{line}: block \"{block}\": property `kind`: unknown block kind \"{kind}\" (expected one of: traffic, monitor, recorder, player)")]
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

// ---------------------------------------------------------------------------------------
// The file as written. Every field is optional and spanned so that validation, not serde,
// decides what is missing and can say which line it belongs to; unknown keys are refused
// by serde (deny_unknown_fields) with the span of the key.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLayout {
    name: Option<Spanned<String>>,
    description: Option<Spanned<String>>,
    day_start: Option<Spanned<toml::Value>>,
    #[serde(default)]
    block: Vec<Spanned<RawBlock>>,
    #[serde(default)]
    link: Vec<Spanned<RawLink>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBlock {
    name: Option<Spanned<String>>,
    kind: Option<Spanned<String>>,
    scheduled_period: Option<Spanned<toml::Value>>,
    scheduled_delay: Option<Spanned<toml::Value>>,
    traffic_start: Option<Spanned<toml::Value>>,
    traffic_end: Option<Spanned<toml::Value>>,
    data_category: Option<Spanned<String>>,
    publish_track: Option<Spanned<bool>>,
    publish_flight_plan: Option<Spanned<bool>>,
    fast_time: Option<Spanned<bool>>,
    speed: Option<Spanned<f64>>,
    host: Option<Spanned<String>>,
    source: Option<Spanned<RawSource>>,
    output: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSource {
    kind: Option<Spanned<String>>,
    seed: Option<Spanned<i64>>,
    density: Option<Spanned<f64>>,
    path: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLink {
    from: Option<Spanned<String>>,
    to: Option<Spanned<String>>,
}

/// Byte offset → 1-based (line, column in characters).
struct Lines<'a> {
    text: &'a str,
}

impl Lines<'_> {
    fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    fn line(&self, span: &Range<usize>) -> usize {
        self.line_col(span.start).0
    }

    /// The key whose value starts at `offset` (`fast_time`, or `source.seed` inside an
    /// inline table), read from the text before it on its line.
    fn key_before(&self, offset: usize) -> Option<String> {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line_start = self.text[..offset].rfind('\n').map_or(0, |i| i + 1);
        let mut prefix = self.text[line_start..offset].trim_end();
        let mut keys = Vec::new();
        while let Some(before) = prefix.strip_suffix('=') {
            let cut = before.rfind(['{', ',']).map_or(0, |i| i + 1);
            let key = before[cut..].trim().trim_matches('"');
            if key.is_empty() || key.contains(['=', '[', ']', '"']) {
                break;
            }
            keys.push(key.to_string());
            // An inline table: the key that holds it comes before its `{`.
            let Some(brace) = before.rfind('{') else {
                break;
            };
            prefix = before[..brace].trim_end();
        }
        keys.reverse();
        (!keys.is_empty()).then(|| keys.join("."))
    }

    /// The `name` of the `[[block]]` table that contains `offset`, found textually, so that
    /// serde's errors (unknown key, wrong type) can say which block they are in.
    fn enclosing_block(&self, offset: usize) -> Option<String> {
        let mut header: Option<usize> = None;
        let mut pos = 0;
        for line in self.text.split_inclusive('\n') {
            if pos > offset {
                break;
            }
            let t = line.trim_start();
            if t.starts_with('[') {
                let compact: String = t.chars().filter(|c| !c.is_whitespace()).collect();
                header = if compact.starts_with("[[block]]") {
                    Some(pos)
                } else {
                    None
                };
            }
            pos += line.len();
        }
        let start = header?;
        for line in self.text[start..].split_inclusive('\n').skip(1) {
            let t = line.trim();
            if t.starts_with('[') {
                break;
            }
            if let Some(rest) = t.strip_prefix("name") {
                let rest = rest.trim_start();
                if let Some(value) = rest.strip_prefix('=') {
                    let v = value.trim();
                    let quote = v.chars().next()?;
                    if quote == '"' || quote == '\'' {
                        let inner = &v[1..];
                        return inner.find(quote).map(|end| inner[..end].to_string());
                    }
                }
            }
        }
        None
    }
}

fn parse(text: &str, origin: &str, base: Option<&Path>) -> Result<Layout, LayoutError> {
    let lines = Lines { text };
    let raw: RawLayout = toml::from_str(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let (line, col) = lines.line_col(offset);
        let message = e.message().trim().to_string();
        // serde names the key of an unknown field but not of a value of the wrong type.
        let property = if message.contains('`') {
            None
        } else {
            e.span().and_then(|s| lines.key_before(s.start))
        };
        LayoutError::Syntax {
            origin: origin.to_string(),
            line,
            col,
            block: e.span().and_then(|s| lines.enclosing_block(s.start)),
            property,
            message,
        }
    })?;
    Validator {
        origin,
        lines,
        base,
    }
    .layout(raw)
}

struct Validator<'a> {
    origin: &'a str,
    lines: Lines<'a>,
    base: Option<&'a Path>,
}

/// The parts of a block error that do not change within one block.
struct BlockCtx<'a> {
    name: &'a str,
    line: usize,
}

impl Validator<'_> {
    fn invalid(
        &self,
        b: &BlockCtx,
        span: Option<&Range<usize>>,
        property: &str,
        reason: impl Into<String>,
    ) -> LayoutError {
        LayoutError::InvalidProperty {
            origin: self.origin.to_string(),
            line: span.map_or(b.line, |s| self.lines.line(s)),
            block: b.name.to_string(),
            property: property.to_string(),
            reason: reason.into(),
        }
    }

    fn missing(&self, b: &BlockCtx, property: &str) -> LayoutError {
        LayoutError::MissingProperty {
            origin: self.origin.to_string(),
            line: b.line,
            block: b.name.to_string(),
            property: property.to_string(),
        }
    }

    fn resolve(&self, path: &str) -> PathBuf {
        let p = PathBuf::from(path);
        match self.base {
            Some(base) if p.is_relative() => base.join(p),
            _ => p,
        }
    }

    fn layout(&self, raw: RawLayout) -> Result<Layout, LayoutError> {
        let mut blocks = Vec::with_capacity(raw.block.len());
        let mut first_line: HashMap<String, usize> = HashMap::new();
        for spanned in raw.block {
            // A block is located by its `name` line: toml's span of an array-of-tables
            // entry does not always start at its `[[block]]` header.
            let table_line = self.lines.line(&spanned.span());
            let line = spanned
                .get_ref()
                .name
                .as_ref()
                .map_or(table_line, |n| self.lines.line(&n.span()));
            let block = self.block(spanned.into_inner(), table_line)?;
            if let Some(first) = first_line.get(&block.name) {
                return Err(LayoutError::DuplicateBlock {
                    origin: self.origin.to_string(),
                    line,
                    block: block.name,
                    first_line: *first,
                });
            }
            first_line.insert(block.name.clone(), line);
            blocks.push((block, line));
        }

        let mut links: Vec<Link> = Vec::with_capacity(raw.link.len());
        for (i, spanned) in raw.link.into_iter().enumerate() {
            let line = self.lines.line(&spanned.span());
            let rl = spanned.into_inner();
            let from = rl
                .from
                .as_ref()
                .map(|s| s.get_ref().clone())
                .unwrap_or_default();
            let to = rl
                .to
                .as_ref()
                .map(|s| s.get_ref().clone())
                .unwrap_or_default();
            let err = |property: &str, span: Option<Range<usize>>, reason: String| {
                LayoutError::InvalidLink {
                    origin: self.origin.to_string(),
                    line: span.map_or(line, |s| self.lines.line(&s)),
                    index: i + 1,
                    link: format!("\"{from}\" -> \"{to}\""),
                    property: property.to_string(),
                    reason,
                }
            };
            for (property, end) in [("from", &rl.from), ("to", &rl.to)] {
                let Some(end) = end else {
                    return Err(err(property, None, "missing required property".to_string()));
                };
                let Some((target, _)) = blocks.iter().find(|(b, _)| &b.name == end.get_ref())
                else {
                    let known: Vec<String> = blocks
                        .iter()
                        .map(|(b, _)| format!("\"{}\"", b.name))
                        .collect();
                    return Err(err(
                        property,
                        Some(end.span()),
                        format!(
                            "unknown block \"{}\" (blocks: {})",
                            end.get_ref(),
                            known.join(", ")
                        ),
                    ));
                };
                let allowed = if property == "from" {
                    target.kind.publishes()
                } else {
                    target.kind.subscribes()
                };
                if !allowed {
                    let role = if property == "from" {
                        "publish (only traffic and player blocks do)"
                    } else {
                        "subscribe (only monitor and recorder blocks do)"
                    };
                    return Err(err(
                        property,
                        Some(end.span()),
                        format!(
                            "block \"{}\" is a {} block, which does not {role}",
                            target.name, target.kind
                        ),
                    ));
                }
            }
            if links.iter().any(|l| l.from == from && l.to == to) {
                return Err(err(
                    "to",
                    rl.to.as_ref().map(|s| s.span()),
                    "duplicate link".to_string(),
                ));
            }
            links.push(Link { from, to });
        }

        for (b, line) in &blocks {
            if b.kind.subscribes() && !links.iter().any(|l| l.to == b.name) {
                return Err(LayoutError::Unfed {
                    origin: self.origin.to_string(),
                    line: *line,
                    block: b.name.clone(),
                    kind: b.kind,
                });
            }
        }

        let top_err = |property: &str, span: Option<Range<usize>>, reason: String| {
            LayoutError::InvalidLayout {
                origin: self.origin.to_string(),
                line: span.map_or(1, |s| self.lines.line(&s)),
                property: property.to_string(),
                reason,
            }
        };
        let day_start = match &raw.day_start {
            Some(v) => {
                time_value(v.get_ref()).map_err(|r| top_err("day_start", Some(v.span()), r))?
            }
            // Without it, second 0 is the earliest traffic start: the natural origin.
            None => blocks
                .iter()
                .filter_map(|(b, _)| b.traffic_start)
                .min()
                .ok_or_else(|| {
                    top_err(
                        "day_start",
                        None,
                        "missing: required when no block has a traffic_start".to_string(),
                    )
                })?,
        };
        let name = raw
            .name
            .ok_or_else(|| top_err("name", None, "missing required property".to_string()))?
            .into_inner();
        if name.trim().is_empty() {
            return Err(top_err("name", None, "must not be empty".to_string()));
        }
        Ok(Layout {
            name,
            description: raw.description.map(Spanned::into_inner).unwrap_or_default(),
            day_start,
            blocks: blocks.into_iter().map(|(b, _)| b).collect(),
            links,
        })
    }

    fn block(&self, raw: RawBlock, line: usize) -> Result<Block, LayoutError> {
        let unnamed = BlockCtx {
            name: "<unnamed>",
            line,
        };
        let name = raw
            .name
            .as_ref()
            .ok_or_else(|| self.missing(&unnamed, "name"))?;
        let ctx = BlockCtx {
            name: name.get_ref(),
            line: self.lines.line(&name.span()),
        };
        let b = &ctx;
        if b.name.trim().is_empty() {
            return Err(self.invalid(b, Some(&name.span()), "name", "must not be empty"));
        }
        let kind_raw = raw.kind.as_ref().ok_or_else(|| self.missing(b, "kind"))?;
        let kind =
            BlockKind::from_name(kind_raw.get_ref()).ok_or_else(|| LayoutError::UnknownKind {
                origin: self.origin.to_string(),
                line: self.lines.line(&kind_raw.span()),
                block: b.name.to_string(),
                kind: kind_raw.get_ref().clone(),
            })?;

        // Properties that make no sense for the kind are refused rather than ignored, so a
        // typo in a layout (a monitor given a source) does not go unnoticed.
        let not_for = |present: bool,
                       span: Option<Range<usize>>,
                       property: &str,
                       kinds: &str|
         -> Result<(), LayoutError> {
            if present {
                return Err(self.invalid(
                    b,
                    span.as_ref(),
                    property,
                    format!("not used by a {kind} block (only by {kinds})"),
                ));
            }
            Ok(())
        };
        let is = |k: &[BlockKind]| k.contains(&kind);
        use BlockKind::*;
        not_for(
            !is(&[Traffic, Player]) && raw.source.is_some(),
            raw.source.as_ref().map(|s| s.span()),
            "source",
            "traffic and player blocks",
        )?;
        not_for(
            !is(&[Recorder]) && raw.output.is_some(),
            raw.output.as_ref().map(|s| s.span()),
            "output",
            "recorder blocks",
        )?;
        not_for(
            !is(&[Traffic, Player]) && raw.traffic_start.is_some(),
            raw.traffic_start.as_ref().map(|s| s.span()),
            "traffic_start",
            "traffic and player blocks",
        )?;
        not_for(
            !is(&[Traffic, Player]) && raw.traffic_end.is_some(),
            raw.traffic_end.as_ref().map(|s| s.span()),
            "traffic_end",
            "traffic and player blocks",
        )?;

        let duration = |v: &Option<Spanned<toml::Value>>,
                        property: &str,
                        default: Option<f64>|
         -> Result<f64, LayoutError> {
            match v {
                None => default.ok_or_else(|| self.missing(b, property)),
                Some(v) => duration_value(v.get_ref())
                    .map_err(|r| self.invalid(b, Some(&v.span()), property, r)),
            }
        };
        // Table 3.1 gives every traffic block a period; other kinds follow the 1 s clock.
        let period_default = if kind == Traffic { None } else { Some(1.0) };
        let scheduled_period_s =
            duration(&raw.scheduled_period, "scheduled_period", period_default)?;
        if scheduled_period_s <= 0.0 {
            let span = raw.scheduled_period.as_ref().map(|s| s.span());
            return Err(self.invalid(
                b,
                span.as_ref(),
                "scheduled_period",
                format!("must be positive, got {scheduled_period_s} s"),
            ));
        }
        let scheduled_delay_s = duration(&raw.scheduled_delay, "scheduled_delay", Some(0.0))?;
        if scheduled_delay_s < 0.0 {
            let span = raw.scheduled_delay.as_ref().map(|s| s.span());
            return Err(self.invalid(
                b,
                span.as_ref(),
                "scheduled_delay",
                format!("must not be negative, got {scheduled_delay_s} s"),
            ));
        }

        let time = |v: &Option<Spanned<toml::Value>>,
                    property: &str|
         -> Result<Option<i64>, LayoutError> {
            v.as_ref()
                .map(|v| {
                    time_value(v.get_ref())
                        .map_err(|r| self.invalid(b, Some(&v.span()), property, r))
                })
                .transpose()
        };
        let traffic_start = time(&raw.traffic_start, "traffic_start")?;
        let traffic_end = time(&raw.traffic_end, "traffic_end")?;
        if let (Some(start), Some(end)) = (traffic_start, traffic_end) {
            if end <= start {
                let span = raw.traffic_end.as_ref().map(|s| s.span());
                return Err(self.invalid(
                    b,
                    span.as_ref(),
                    "traffic_end",
                    format!(
                        "{} is not after traffic_start {}",
                        format_rfc3339(end),
                        format_rfc3339(start)
                    ),
                ));
            }
        }

        let speed = match &raw.speed {
            None => 1.0,
            Some(s) => {
                let v = *s.get_ref();
                if !(v.is_finite() && v > 0.0) {
                    return Err(self.invalid(
                        b,
                        Some(&s.span()),
                        "speed",
                        format!("must be a finite number > 0, got {v}"),
                    ));
                }
                v
            }
        };

        let source = match (&raw.source, kind) {
            (None, Traffic | Player) => return Err(self.missing(b, "source")),
            (None, _) => None,
            (Some(s), _) => Some(self.source(b, kind, s)?),
        };
        if kind == Traffic && matches!(source, Some(TrafficSource::Generated { .. })) {
            // The generator plays a window of its day: it needs both ends.
            if traffic_start.is_none() {
                return Err(self.missing(b, "traffic_start"));
            }
            if traffic_end.is_none() {
                return Err(self.missing(b, "traffic_end"));
            }
        }
        let output = match (&raw.output, kind) {
            (None, Recorder) => return Err(self.missing(b, "output")),
            (Some(o), _) if o.get_ref().trim().is_empty() => {
                return Err(self.invalid(b, Some(&o.span()), "output", "must not be empty"))
            }
            (o, _) => o.as_ref().map(|o| self.resolve(o.get_ref())),
        };
        let text = |v: &Option<Spanned<String>>,
                    property: &str,
                    default: &str|
         -> Result<String, LayoutError> {
            match v {
                None => Ok(default.to_string()),
                Some(v) if v.get_ref().trim().is_empty() => {
                    Err(self.invalid(b, Some(&v.span()), property, "must not be empty"))
                }
                Some(v) => Ok(v.get_ref().clone()),
            }
        };
        let flag =
            |v: &Option<Spanned<bool>>, default: bool| v.as_ref().map_or(default, |v| *v.get_ref());
        Ok(Block {
            name: b.name.to_string(),
            kind,
            scheduled_period_s,
            scheduled_delay_s,
            traffic_start,
            traffic_end,
            data_category: text(&raw.data_category, "data_category", "USA")?,
            publish_track: flag(&raw.publish_track, true),
            publish_flight_plan: flag(&raw.publish_flight_plan, false),
            fast_time: flag(&raw.fast_time, true),
            speed,
            host: text(&raw.host, "host", "localhost")?,
            source,
            output,
        })
    }

    fn source(
        &self,
        b: &BlockCtx,
        kind: BlockKind,
        s: &Spanned<RawSource>,
    ) -> Result<TrafficSource, LayoutError> {
        let raw = s.get_ref();
        let line_of = |sp: Option<Range<usize>>| sp.unwrap_or_else(|| s.span());
        let missing = |property: &str| {
            self.invalid(
                b,
                Some(&s.span()),
                &format!("source.{property}"),
                "missing required property",
            )
        };
        let Some(source_kind) = &raw.kind else {
            return Err(missing("kind"));
        };
        let unused =
            |present: Option<Range<usize>>, property: &str, k: &str| -> Result<(), LayoutError> {
                match present {
                    Some(sp) => Err(self.invalid(
                        b,
                        Some(&sp),
                        &format!("source.{property}"),
                        format!("not used by a \"{k}\" source"),
                    )),
                    None => Ok(()),
                }
            };
        let allowed: &[&str] = if kind == BlockKind::Player {
            &["recording"]
        } else {
            &["generated", "adsb_csv"]
        };
        let k = source_kind.get_ref().as_str();
        if !allowed.contains(&k) {
            let known = ["generated", "adsb_csv", "recording"].contains(&k);
            let reason = if known {
                format!(
                    "a {kind} block cannot play a \"{k}\" source (expected one of: {})",
                    allowed.join(", ")
                )
            } else {
                format!(
                    "unknown source kind \"{k}\" (expected one of: {})",
                    allowed.join(", ")
                )
            };
            return Err(self.invalid(b, Some(&source_kind.span()), "source.kind", reason));
        }
        match k {
            "generated" => {
                unused(raw.path.as_ref().map(|p| p.span()), "path", k)?;
                let seed = raw.seed.as_ref().ok_or_else(|| missing("seed"))?;
                let seed_v = u64::try_from(*seed.get_ref()).map_err(|_| {
                    self.invalid(
                        b,
                        Some(&line_of(Some(seed.span()))),
                        "source.seed",
                        format!("must not be negative, got {}", seed.get_ref()),
                    )
                })?;
                let density = raw.density.as_ref().map_or(Ok(1.0), |d| {
                    let v = *d.get_ref();
                    if v.is_finite() && v > 0.0 {
                        Ok(v)
                    } else {
                        Err(self.invalid(
                            b,
                            Some(&d.span()),
                            "source.density",
                            format!("must be a finite number > 0, got {v}"),
                        ))
                    }
                })?;
                Ok(TrafficSource::Generated {
                    seed: seed_v,
                    density,
                })
            }
            _ => {
                unused(raw.seed.as_ref().map(|p| p.span()), "seed", k)?;
                unused(raw.density.as_ref().map(|p| p.span()), "density", k)?;
                let path = raw.path.as_ref().ok_or_else(|| missing("path"))?;
                if path.get_ref().trim().is_empty() {
                    return Err(self.invalid(
                        b,
                        Some(&path.span()),
                        "source.path",
                        "must not be empty",
                    ));
                }
                let path = self.resolve(path.get_ref());
                Ok(if k == "adsb_csv" {
                    TrafficSource::AdsbCsv { path }
                } else {
                    TrafficSource::Recording { path }
                })
            }
        }
    }
}

/// A duration: a number of seconds, or a string `"<number> <unit>"` with unit `s`, `ms`,
/// `min` or `h` (Table 3.1 writes "1 s", "61200 s").
fn duration_value(v: &toml::Value) -> Result<f64, String> {
    let seconds = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        toml::Value::String(s) => parse_duration(s)?,
        other => {
            return Err(format!(
                "expected seconds as a number or a string like \"61200 s\", got {}",
                other.type_str()
            ))
        }
    };
    if !seconds.is_finite() {
        return Err(format!("must be a finite number of seconds, got {seconds}"));
    }
    Ok(seconds)
}

/// Parses `"61200 s"`, `"1s"`, `"1.5 min"`, `"250 ms"`, `"17 h"` into seconds.
pub fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E')))
        .unwrap_or(t.len());
    // An exponent letter followed by a unit would be mis-split; units never start with e.
    let (number, unit) = t.split_at(split);
    let value: f64 = number.trim().parse().map_err(|_| {
        format!(
            "\"{s}\" is not a duration (expected a number of seconds or a string like \"61200 s\")"
        )
    })?;
    let scale = match unit.trim() {
        "" | "s" => 1.0,
        "ms" => 1e-3,
        "min" => 60.0,
        "h" => 3600.0,
        other => {
            return Err(format!(
                "\"{s}\": unknown unit \"{other}\" (expected s, ms, min or h)"
            ))
        }
    };
    Ok(value * scale)
}

/// An instant: a TOML offset date-time (`2016-03-23T07:00:00Z`, unquoted) or the same as a
/// string.
fn time_value(v: &toml::Value) -> Result<i64, String> {
    match v {
        toml::Value::String(s) => parse_rfc3339(s),
        toml::Value::Datetime(d) => parse_rfc3339(&d.to_string()),
        other => Err(format!(
            "expected an RFC 3339 time like \"2016-03-23T07:00:00Z\", got {}",
            other.type_str()
        )),
    }
}

/// Parses an RFC 3339 date-time with a `Z` or `±hh:mm` offset into unix seconds
/// (fractional seconds are truncated). Local times without an offset are refused: a
/// layout must say which instant it means.
pub fn parse_rfc3339(s: &str) -> Result<i64, String> {
    let bad =
        |why: &str| format!("\"{s}\" is not an RFC 3339 time like \"2016-03-23T07:00:00Z\": {why}");
    let b = s.trim().as_bytes();
    if b.len() < 19 || !b.is_ascii() {
        return Err(bad("too short"));
    }
    let num = |r: Range<usize>| -> Result<i64, String> {
        let part = &b[r];
        if part.iter().all(u8::is_ascii_digit) {
            Ok(part
                .iter()
                .fold(0i64, |acc, d| acc * 10 + i64::from(d - b'0')))
        } else {
            Err(bad("expected digits"))
        }
    };
    if b[4] != b'-'
        || b[7] != b'-'
        || !matches!(b[10], b'T' | b't' | b' ')
        || b[13] != b':'
        || b[16] != b':'
    {
        return Err(bad("expected YYYY-MM-DDTHH:MM:SS"));
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return Err(bad("no such date"));
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(bad("no such time of day"));
    }
    let mut rest = &b[19..];
    if rest.first() == Some(&b'.') {
        let digits = rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 {
            return Err(bad("expected digits after '.'"));
        }
        rest = &rest[1 + digits..];
    }
    let offset_s = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] => {
            let d = |c: &u8| {
                if c.is_ascii_digit() {
                    Ok(i64::from(c - b'0'))
                } else {
                    Err(bad("bad offset"))
                }
            };
            let (oh, om) = (d(h1)? * 10 + d(h2)?, d(m1)? * 10 + d(m2)?);
            if oh > 23 || om > 59 {
                return Err(bad("bad offset"));
            }
            let o = oh * 3600 + om * 60;
            if *sign == b'+' {
                o
            } else {
                -o
            }
        }
        [] => return Err(bad("missing offset (write Z for UTC)")),
        _ => return Err(bad("expected Z or an offset like +02:00 at the end")),
    };
    Ok(days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s)
}

/// Formats unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn format_rfc3339(t: i64) -> String {
    let days = t.div_euclid(86_400);
    let secs = t.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's `days_from_civil` / `civil_from_days` (public-domain algorithms).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (
        if m <= 2 {
            yoe + era * 400 + 1
        } else {
            yoe + era * 400
        },
        m,
        d,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_and_offsets() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Ok(0));
        assert_eq!(parse_rfc3339("2016-03-23T07:00:00Z"), Ok(1_458_716_400));
        assert_eq!(
            parse_rfc3339("2016-03-23T00:00:00-07:00"),
            Ok(1_458_716_400)
        );
        assert_eq!(parse_rfc3339("2016-03-23T07:00:00.999Z"), Ok(1_458_716_400));
        assert_eq!(format_rfc3339(1_458_716_400), "2016-03-23T07:00:00Z");
        assert!(parse_rfc3339("2016-02-30T00:00:00Z").is_err());
        assert!(parse_rfc3339("2016-03-23T07:00:00").is_err());
        assert!(parse_rfc3339("2016-03-23T07:00:00ZZ").is_err());
        for t in [-86_401i64, 0, 951_782_400, 1_458_777_600, 4_102_444_800] {
            assert_eq!(parse_rfc3339(&format_rfc3339(t)), Ok(t));
        }
    }

    #[test]
    fn durations_in_both_spellings() {
        assert_eq!(parse_duration("61200 s"), Ok(61_200.0));
        assert_eq!(parse_duration("1s"), Ok(1.0));
        assert_eq!(parse_duration("250 ms"), Ok(0.25));
        assert_eq!(parse_duration("17 h"), Ok(61_200.0));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("1 fortnight").is_err());
        assert_eq!(duration_value(&toml::Value::Integer(5)), Ok(5.0));
    }
}

//! Validation: from the file as written to a [`Layout`], or to the first error, with
//! the file, line, block and property at fault.

use std::collections::HashMap;
use std::ops::Range;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::source::{Lines, RawBlock, RawLayout, RawSource};
use super::time::{duration_value, format_rfc3339, time_value};
use super::{Block, BlockKind, Layout, LayoutError, Link, TrafficSource};
use crate::adsb_csv::TimestampUnit;

pub(super) fn parse(text: &str, origin: &str, base: Option<&Path>) -> Result<Layout, LayoutError> {
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
                Some(time_value(v.get_ref()).map_err(|r| top_err("day_start", Some(v.span()), r))?)
            }
            // Without it, second 0 is the earliest traffic start: the natural origin. A
            // layout without any plays recorded sources only (a generated one needs its
            // traffic_start), and the run takes second 0 from their data.
            None => blocks.iter().filter_map(|(b, _)| b.traffic_start).min(),
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
                    format!(
                        "not used by {} {kind} block (only by {kinds})",
                        if kind == BlockKind::External {
                            "an"
                        } else {
                            "a"
                        }
                    ),
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
        not_for(
            !is(&[External]) && raw.join_within.is_some(),
            raw.join_within.as_ref().map(|s| s.span()),
            "join_within",
            "external blocks",
        )?;
        not_for(
            !is(&[Monitor, Recorder]) && raw.sector.is_some(),
            raw.sector.as_ref().map(|s| s.span()),
            "sector",
            "monitor and recorder blocks",
        )?;
        let sector = match &raw.sector {
            None => None,
            Some(s) => Some(s.get_ref().check().map_err(|(property, reason)| {
                self.invalid(b, Some(&s.span()), &format!("sector.{property}"), reason)
            })?),
        };
        let join_within_s = if kind == External {
            let s = duration(&raw.join_within, "join_within", Some(120.0))?;
            if s <= 0.0 {
                let span = raw.join_within.as_ref().map(|s| s.span());
                return Err(self.invalid(
                    b,
                    span.as_ref(),
                    "join_within",
                    format!("must be positive, got {s} s"),
                ));
            }
            Some(s)
        } else {
            None
        };
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
        let position = match &raw.position {
            None => None,
            Some(p) => match p.get_ref().as_slice() {
                &[x, y] if x.is_finite() && y.is_finite() && x >= 0.0 && y >= 0.0 => Some([x, y]),
                other => {
                    return Err(self.invalid(
                        b,
                        Some(&p.span()),
                        "position",
                        format!(
                            "must be two finite numbers >= 0, [x, y], got {} number(s) {other:?}",
                            other.len()
                        ),
                    ))
                }
            },
        };
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
            position,
            join_within_s,
            sector,
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
                unused(
                    raw.timestamp_unit.as_ref().map(|p| p.span()),
                    "timestamp_unit",
                    k,
                )?;
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
                if k != "adsb_csv" {
                    unused(
                        raw.timestamp_unit.as_ref().map(|p| p.span()),
                        "timestamp_unit",
                        k,
                    )?;
                    return Ok(TrafficSource::Recording { path });
                }
                let timestamp_unit = match &raw.timestamp_unit {
                    None => TimestampUnit::Auto,
                    Some(u) => TimestampUnit::from_name(u.get_ref()).ok_or_else(|| {
                        self.invalid(
                            b,
                            Some(&u.span()),
                            "source.timestamp_unit",
                            format!(
                                "unknown unit \"{}\" (expected one of: {})",
                                u.get_ref(),
                                TimestampUnit::NAMES.join(", ")
                            ),
                        )
                    })?,
                };
                Ok(TrafficSource::AdsbCsv {
                    path,
                    timestamp_unit,
                })
            }
        }
    }
}

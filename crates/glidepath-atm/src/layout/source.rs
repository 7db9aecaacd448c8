//! The layout file as written: every field optional and spanned, so that validation,
//! not serde, decides what is missing and says which line it belongs to; and where a
//! byte offset is (line, column, the key and the block around it).

use std::ops::Range;

use serde::Deserialize;
use toml::Spanned;

// ---------------------------------------------------------------------------------------
// The file as written. Every field is optional and spanned so that validation, not serde,
// decides what is missing and can say which line it belongs to; unknown keys are refused
// by serde (deny_unknown_fields) with the span of the key.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLayout {
    pub(super) name: Option<Spanned<String>>,
    pub(super) description: Option<Spanned<String>>,
    pub(super) day_start: Option<Spanned<toml::Value>>,
    #[serde(default)]
    pub(super) block: Vec<Spanned<RawBlock>>,
    #[serde(default)]
    pub(super) link: Vec<Spanned<RawLink>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawBlock {
    pub(super) name: Option<Spanned<String>>,
    pub(super) kind: Option<Spanned<String>>,
    pub(super) scheduled_period: Option<Spanned<toml::Value>>,
    pub(super) scheduled_delay: Option<Spanned<toml::Value>>,
    pub(super) traffic_start: Option<Spanned<toml::Value>>,
    pub(super) traffic_end: Option<Spanned<toml::Value>>,
    pub(super) data_category: Option<Spanned<String>>,
    pub(super) publish_track: Option<Spanned<bool>>,
    pub(super) publish_flight_plan: Option<Spanned<bool>>,
    pub(super) fast_time: Option<Spanned<bool>>,
    pub(super) speed: Option<Spanned<f64>>,
    pub(super) host: Option<Spanned<String>>,
    pub(super) source: Option<Spanned<RawSource>>,
    pub(super) output: Option<Spanned<String>>,
    pub(super) position: Option<Spanned<Vec<f64>>>,
    pub(super) join_within: Option<Spanned<toml::Value>>,
    pub(super) sector: Option<Spanned<super::sector::RawSector>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSource {
    pub(super) kind: Option<Spanned<String>>,
    pub(super) seed: Option<Spanned<i64>>,
    pub(super) density: Option<Spanned<f64>>,
    pub(super) path: Option<Spanned<String>>,
    pub(super) timestamp_unit: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLink {
    pub(super) from: Option<Spanned<String>>,
    pub(super) to: Option<Spanned<String>>,
}

/// Byte offset → 1-based (line, column in characters).
pub(super) struct Lines<'a> {
    pub(super) text: &'a str,
}

impl Lines<'_> {
    pub(super) fn line_col(&self, offset: usize) -> (usize, usize) {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &self.text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        (line, before[line_start..].chars().count() + 1)
    }

    pub(super) fn line(&self, span: &Range<usize>) -> usize {
        self.line_col(span.start).0
    }

    /// The key whose value starts at `offset` (`fast_time`, or `source.seed` inside an
    /// inline table), read from the text before it on its line.
    pub(super) fn key_before(&self, offset: usize) -> Option<String> {
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
    pub(super) fn enclosing_block(&self, offset: usize) -> Option<String> {
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

//! The JSON form of a message, for clients that speak plain NATS and JSON (the bus
//! bridge, `docs/wire-format.md` 7.6):
//!
//! ```json
//! {"subject": "FFTB.MMS.SAT1.CMD.MANEUVER.FE.BURN", "level": "fifo",
//!  "entries": [{"key": "dv", "typ": "D", "val": "0.25"}]}
//! ```
//!
//! `typ` is the letter of the XML form and `val` the same text the XML form writes
//! (section 7.3), so one lexical form serves both. `level` is optional on the way in.
//! On the way out the bridge adds `sender`, `publish_time_ns` and, for the totally
//! ordered levels, `group_seq`. Reading never panics; each error names the field and,
//! for an entry, its index and key.

use serde::{Deserialize, Serialize};

use super::{xml, Message, ValueType};
use crate::frame::ServiceLevel;
use crate::subject::Subject;

/// One entry as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonEntry {
    /// The key.
    pub key: String,
    /// The type letter.
    pub typ: String,
    /// The value's text.
    pub val: String,
}

/// A message with its subject, as JSON.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JsonMessage {
    /// The bus subject.
    pub subject: String,
    /// The service level's name (`fifo`, `agreed`, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub level: Option<String>,
    /// The sender's member token, as 16 hex digits (out only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender: Option<String>,
    /// Publication time, nanoseconds since the UNIX epoch (out only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub publish_time_ns: Option<u64>,
    /// The number in the group's total order (out only, ordered levels).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_seq: Option<u64>,
    /// The entries.
    pub entries: Vec<JsonEntry>,
}

/// Why JSON is not a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    /// Not JSON of the expected shape.
    #[error("not a bus message in JSON: {0}")]
    Shape(String),
    /// The subject is not a bus subject.
    #[error("field `subject`: {0}")]
    Subject(String),
    /// The level is not a service level.
    #[error("field `level`: {0}")]
    Level(String),
    /// An entry is wrong.
    #[error("entry {index} (`{key}`): {reason}")]
    Entry {
        /// Its place in `entries`, from 0.
        index: usize,
        /// Its key.
        key: String,
        /// What is wrong.
        reason: String,
    },
}

/// What a JSON message says: subject, level if given, message.
pub type Parsed = (Subject, Option<ServiceLevel>, Message);

/// Reads a message in JSON.
pub fn parse(bytes: &[u8]) -> Result<Parsed, JsonError> {
    let json: JsonMessage =
        serde_json::from_slice(bytes).map_err(|e| JsonError::Shape(e.to_string()))?;
    let subject = Subject::new(&json.subject).map_err(|e| JsonError::Subject(e.to_string()))?;
    let level = json
        .level
        .as_deref()
        .map(|l| {
            l.parse::<ServiceLevel>()
                .map_err(|e| JsonError::Level(e.to_string()))
        })
        .transpose()?;
    let mut message = Message::new();
    for (index, e) in json.entries.into_iter().enumerate() {
        let fail = |reason: String| JsonError::Entry {
            index,
            key: e.key.clone(),
            reason,
        };
        let typ = ValueType::from_letter(&e.typ)
            .ok_or_else(|| fail(format!("unknown type `{}`", e.typ)))?;
        let value =
            xml::value_from_text(typ, &e.val).map_err(|r| fail(format!("`{}`: {r}", e.val)))?;
        message
            .insert(e.key.clone(), value)
            .map_err(|r| fail(r.to_string()))?;
    }
    Ok((subject, level, message))
}

/// The bytes of a JSON message.
pub fn encode(json: &JsonMessage) -> Vec<u8> {
    serde_json::to_vec(json).expect("strings and numbers always serialise")
}

/// The JSON form of a message (the bridge fills in the delivery's details).
pub fn to_json(subject: &Subject, message: &Message) -> JsonMessage {
    JsonMessage {
        subject: subject.as_str().to_string(),
        level: None,
        sender: None,
        publish_time_ns: None,
        group_seq: None,
        entries: message
            .entries()
            .iter()
            .map(|e| JsonEntry {
                key: e.key.clone(),
                typ: e.value.value_type().letter().to_string(),
                val: xml::value_text(&e.value),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;

    #[test]
    fn every_type_round_trips_and_errors_say_where() {
        let m = Message::new()
            .with("i", -7i32)
            .with("f", 1234.5f32)
            .with("d", 1234.12345678f64)
            .with("l", i64::MIN)
            .with("b", true)
            .with("s", "a <b> \"c\" ü")
            .with("x", Bytes::from_static(b"\x00\xff"));
        let subject = Subject::new("FFTB.MMS.SAT1").unwrap();
        let json = serde_json::to_vec(&to_json(&subject, &m)).unwrap();
        assert_eq!(parse(&json).unwrap(), (subject, None, m));

        let bad = |text: &str| parse(text.as_bytes()).unwrap_err().to_string();
        assert!(bad("{").contains("not a bus message"));
        assert!(bad(r#"{"subject":"a.b","entries":[]}"#).contains("`subject`"));
        assert!(bad(r#"{"subject":"A","level":"total","entries":[]}"#).contains("`level`"));
        let e = bad(
            r#"{"subject":"A","entries":[{"key":"k","typ":"I","val":"1"},{"key":"n","typ":"I","val":"x"}]}"#,
        );
        assert!(e.starts_with("entry 1 (`n`)"), "{e}");
        assert!(
            bad(r#"{"subject":"A","entries":[{"key":"k","typ":"Q","val":"1"}]}"#)
                .contains("unknown type")
        );
        assert!(bad(r#"{"subject":"A","entries":[{"key":"k","typ":"I","val":"1"},{"key":"k","typ":"I","val":"2"}]}"#).contains("already"));
        assert!(bad(r#"{"subject":"A","entries":[],"extra":1}"#).contains("unknown field"));
        assert!(
            parse(r#"{"subject":"A","level":"SAFE","entries":[]}"#.as_bytes())
                .unwrap()
                .1
                == Some(ServiceLevel::Safe)
        );
    }
}

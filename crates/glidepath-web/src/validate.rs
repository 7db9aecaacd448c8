//! Every message from outside is checked here before anything acts on it: its size,
//! that it is JSON, that it matches its message's JSON schema (`schema.json`, served
//! at `/api/schema`), and then what a schema cannot know: that the aircraft exists and
//! that the value is within its type's envelope. A failed check becomes a
//! [`Rejection`] that names the rule, the field and the reason; [`Counters`] counts
//! each rule.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use jsonschema::error::ValidationErrorKind;
use jsonschema::Validator;
use parking_lot::Mutex;
use serde_json::Value;

/// The largest message accepted, bytes.
pub const MAX_MESSAGE_BYTES: usize = 4096;

/// The published schema, as served.
pub const SCHEMA: &str = include_str!("schema.json");

/// The messages a client may send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Message {
    /// `POST /api/command`.
    Command,
    /// `POST /api/control`.
    Control,
    /// A websocket text message.
    Subscribe,
    /// `POST /api/clearance`.
    Clearance,
}

impl Message {
    fn def(self) -> &'static str {
        match self {
            Message::Command => "command",
            Message::Control => "control",
            Message::Subscribe => "subscribe",
            Message::Clearance => "clearance",
        }
    }
}

/// Why a message was not accepted.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Rejection {
    /// The HTTP status it is answered with.
    #[serde(skip)]
    pub status: u16,
    /// Which rule: `too_large`, `malformed_json`, `schema`, `unauthorized`,
    /// `forbidden`, `unknown_aircraft`, `envelope`, `unknown_waypoint`, `refused`,
    /// `unknown_scenario`, `cannot_load`, `ended`.
    pub error: &'static str,
    /// The field at fault as a JSON pointer (`/value`); `""` for the whole message.
    pub field: String,
    /// What is wrong, in words.
    pub reason: String,
}

impl Rejection {
    /// A rejection of the whole message (no one field at fault), answered with
    /// HTTP `status`.
    pub fn whole(status: u16, error: &'static str, reason: impl Into<String>) -> Rejection {
        Rejection {
            status,
            error,
            field: String::new(),
            reason: reason.into(),
        }
    }

    /// A rejection answered with HTTP 400.
    pub fn bad(error: &'static str, field: &str, reason: impl Into<String>) -> Rejection {
        Rejection {
            status: 400,
            error,
            field: field.to_string(),
            reason: reason.into(),
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.field.is_empty() {
            write!(f, "{}: {}", self.error, self.reason)
        } else {
            write!(f, "{}: {}: {}", self.error, self.field, self.reason)
        }
    }
}

/// How many messages each rule turned away.
#[derive(Default)]
pub struct Counters(Mutex<BTreeMap<&'static str, u64>>);

impl Counters {
    /// Counts one rejection.
    pub fn count(&self, r: &Rejection) {
        *self.0.lock().entry(r.error).or_default() += 1;
    }

    /// Counts one event of a named kind (a dropped frame, a closed client).
    pub fn add(&self, what: &'static str, n: u64) {
        if n > 0 {
            *self.0.lock().entry(what).or_default() += n;
        }
    }

    /// The counts so far.
    pub fn snapshot(&self) -> BTreeMap<&'static str, u64> {
        self.0.lock().clone()
    }
}

fn validator(message: Message) -> &'static Validator {
    static VALIDATORS: OnceLock<[Validator; 4]> = OnceLock::new();
    let all = VALIDATORS.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA).expect("schema.json is JSON");
        let compile = |m: Message| {
            let mut root = schema.clone();
            root["$ref"] = Value::String(format!("#/$defs/{}", m.def()));
            jsonschema::validator_for(&root).expect("schema.json is a valid JSON schema")
        };
        [
            compile(Message::Command),
            compile(Message::Control),
            compile(Message::Subscribe),
            compile(Message::Clearance),
        ]
    });
    &all[message as usize]
}

/// Checks a message's size, syntax and schema; returns its JSON.
pub fn parse(message: Message, body: &[u8]) -> Result<Value, Rejection> {
    if body.len() > MAX_MESSAGE_BYTES {
        return Err(Rejection::whole(
            413,
            "too_large",
            format!(
                "the message is {} bytes; at most {MAX_MESSAGE_BYTES} are accepted",
                body.len()
            ),
        ));
    }
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| Rejection::bad("malformed_json", "", format!("not JSON: {e}")))?;
    if let Some(e) = validator(message).iter_errors(&value).next() {
        return Err(schema_rejection(&e));
    }
    Ok(value)
}

fn schema_rejection(e: &jsonschema::ValidationError<'_>) -> Rejection {
    let path = e.instance_path().as_str().to_string();
    let (field, reason) = match e.kind() {
        ValidationErrorKind::AdditionalProperties { unexpected } => (
            format!("{path}/{}", unexpected.first().map_or("", String::as_str)),
            "is not a field of this message".to_string(),
        ),
        ValidationErrorKind::Required { property } => (
            format!("{path}/{}", property.as_str().unwrap_or_default()),
            "is required".to_string(),
        ),
        // The only `not` in the schema forbids a value where none is taken.
        ValidationErrorKind::Not { .. } => (
            format!("{path}/value"),
            "is not taken by this instruction or action".to_string(),
        ),
        _ => (path, e.to_string()),
    };
    Rejection::bad("schema", &field, reason)
}

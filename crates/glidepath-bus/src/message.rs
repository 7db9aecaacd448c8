//! The bus's message model: a set of entries, each a key, a type letter and a value
//! (seed `003_...` section III.A.2), with typed accessors, and its two encodings: the
//! paper's XML ([`xml`]) and a compact binary form ([`binary`]).
//!
//! | letter | type | value | XML `val` |
//! |---|---|---|---|
//! | `I` | 32-bit signed integer | [`Value::I32`] | decimal, `-2147483648`..`2147483647` |
//! | `F` | 32-bit IEEE 754 float | [`Value::F32`] | shortest text that reads back to the same `f32`; `INF`, `-INF`, `NaN` |
//! | `D` | 64-bit IEEE 754 float | [`Value::F64`] | the same for `f64` |
//! | `L` | 64-bit signed integer | [`Value::I64`] | decimal |
//! | `B` | boolean | [`Value::Bool`] | `true` or `false` |
//! | `S` | Unicode string | [`Value::Str`] | the text, XML-escaped |
//! | `X` | binary | [`Value::Bin`] | standard base64 with padding (RFC 4648 section 4) |
//!
//! `I`, `F` and `D` are the paper's own; the others are ours. Keys are non-empty
//! strings; a message holds each key once. The paper calls the entries an unordered
//! set: a message keeps them in the order they were added (so encoding is
//! deterministic) and both encodings keep that order, but no reader should rely on it.

use std::fmt;

use bytes::Bytes;

pub mod binary;
pub mod json;
pub mod xml;

/// The type of a value, named by its letter in the `typ` attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ValueType {
    /// `I`: 32-bit signed integer.
    I32,
    /// `F`: 32-bit float.
    F32,
    /// `D`: 64-bit float.
    F64,
    /// `L`: 64-bit signed integer.
    I64,
    /// `B`: boolean.
    Bool,
    /// `S`: string.
    Str,
    /// `X`: binary.
    Bin,
}

impl ValueType {
    /// Every type, in the order of the table in the [module documentation](self).
    pub const ALL: [ValueType; 7] = [
        ValueType::I32,
        ValueType::F32,
        ValueType::F64,
        ValueType::I64,
        ValueType::Bool,
        ValueType::Str,
        ValueType::Bin,
    ];

    /// The letter in the `typ` attribute (and the binary encoding's type byte).
    pub const fn letter(self) -> char {
        match self {
            ValueType::I32 => 'I',
            ValueType::F32 => 'F',
            ValueType::F64 => 'D',
            ValueType::I64 => 'L',
            ValueType::Bool => 'B',
            ValueType::Str => 'S',
            ValueType::Bin => 'X',
        }
    }

    /// The type a letter names.
    pub fn from_letter(letter: &str) -> Option<ValueType> {
        ValueType::ALL
            .into_iter()
            .find(|t| letter.len() == 1 && letter.starts_with(t.letter()))
    }

    /// A name for people.
    pub const fn name(self) -> &'static str {
        match self {
            ValueType::I32 => "32-bit integer",
            ValueType::F32 => "32-bit float",
            ValueType::F64 => "64-bit float",
            ValueType::I64 => "64-bit integer",
            ValueType::Bool => "boolean",
            ValueType::Str => "string",
            ValueType::Bin => "binary",
        }
    }
}

impl fmt::Display for ValueType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` ({})", self.letter(), self.name())
    }
}

/// A typed value.
///
/// Floats compare by their bits, so `-0.0` differs from `0.0`, except that every NaN
/// equals every NaN: equality means "the same value in either encoding" (the XML
/// writes any NaN as `NaN`; the binary form keeps its bits).
#[derive(Clone, Debug)]
pub enum Value {
    /// `I`.
    I32(i32),
    /// `F`.
    F32(f32),
    /// `D`.
    F64(f64),
    /// `L`.
    I64(i64),
    /// `B`.
    Bool(bool),
    /// `S`.
    Str(String),
    /// `X`.
    Bin(Bytes),
}

impl Value {
    /// The value's type.
    pub fn value_type(&self) -> ValueType {
        match self {
            Value::I32(_) => ValueType::I32,
            Value::F32(_) => ValueType::F32,
            Value::F64(_) => ValueType::F64,
            Value::I64(_) => ValueType::I64,
            Value::Bool(_) => ValueType::Bool,
            Value::Str(_) => ValueType::Str,
            Value::Bin(_) => ValueType::Bin,
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::I32(a), Value::I32(b)) => a == b,
            (Value::F32(a), Value::F32(b)) => {
                a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
            }
            (Value::F64(a), Value::F64(b)) => {
                a.to_bits() == b.to_bits() || a.is_nan() && b.is_nan()
            }
            (Value::I64(a), Value::I64(b)) => a == b,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::Bin(a), Value::Bin(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Value {}

impl From<i32> for Value {
    fn from(v: i32) -> Value {
        Value::I32(v)
    }
}
impl From<f32> for Value {
    fn from(v: f32) -> Value {
        Value::F32(v)
    }
}
impl From<f64> for Value {
    fn from(v: f64) -> Value {
        Value::F64(v)
    }
}
impl From<i64> for Value {
    fn from(v: i64) -> Value {
        Value::I64(v)
    }
}
impl From<bool> for Value {
    fn from(v: bool) -> Value {
        Value::Bool(v)
    }
}
impl From<String> for Value {
    fn from(v: String) -> Value {
        Value::Str(v)
    }
}
impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Str(v.to_string())
    }
}
impl From<Bytes> for Value {
    fn from(v: Bytes) -> Value {
        Value::Bin(v)
    }
}
impl From<Vec<u8>> for Value {
    fn from(v: Vec<u8>) -> Value {
        Value::Bin(Bytes::from(v))
    }
}

/// One entry: a key and its typed value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Entry {
    /// The key, non-empty and unique within its message.
    pub key: String,
    /// The value.
    pub value: Value,
}

/// Why a typed accessor returned no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AccessError {
    /// No entry has this key.
    #[error("no entry `{key}`")]
    Missing {
        /// The key asked for.
        key: String,
    },
    /// The entry has another type.
    #[error("entry `{key}` is {found}, not {wanted}")]
    WrongType {
        /// The key asked for.
        key: String,
        /// The type asked for.
        wanted: ValueType,
        /// The entry's type.
        found: ValueType,
    },
}

/// Why an entry could not be added.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    /// Keys are non-empty.
    #[error("an entry key must not be empty")]
    EmptyKey,
    /// Each key once per message.
    #[error("the message already has an entry `{0}`")]
    DuplicateKey(String),
}

/// A message: entries of (key, type, value), each key once.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    entries: Vec<Entry>,
}

macro_rules! accessor {
    ($get:ident, $variant:ident, $t:ty, $doc:literal) => {
        #[doc = $doc]
        pub fn $get(&self, key: &str) -> Result<$t, AccessError> {
            match self.typed(key, ValueType::$variant)? {
                Value::$variant(v) => Ok(v.clone()),
                _ => unreachable!("typed() checked the type"),
            }
        }
    };
}

impl Message {
    /// A message with no entries.
    pub fn new() -> Message {
        Message::default()
    }

    /// Adds an entry, refusing an empty or duplicate key.
    pub fn insert(
        &mut self,
        key: impl Into<String>,
        value: impl Into<Value>,
    ) -> Result<(), EntryError> {
        let key = key.into();
        if key.is_empty() {
            return Err(EntryError::EmptyKey);
        }
        if self.get(&key).is_some() {
            return Err(EntryError::DuplicateKey(key));
        }
        self.entries.push(Entry {
            key,
            value: value.into(),
        });
        Ok(())
    }

    /// Sets a key's value, replacing an entry of that key (keeping its place) or
    /// adding one; returns the old value.
    ///
    /// # Panics
    /// On an empty key, a programming error ([`insert`](Self::insert) returns it).
    pub fn set(&mut self, key: impl Into<String>, value: impl Into<Value>) -> Option<Value> {
        let key = key.into();
        assert!(!key.is_empty(), "an entry key must not be empty");
        let value = value.into();
        match self.entries.iter_mut().find(|e| e.key == key) {
            Some(e) => Some(std::mem::replace(&mut e.value, value)),
            None => {
                self.entries.push(Entry { key, value });
                None
            }
        }
    }

    /// The message with one more entry (builder style); see [`set`](Self::set).
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Message {
        self.set(key, value);
        self
    }

    /// Removes an entry, returning its value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let i = self.entries.iter().position(|e| e.key == key)?;
        Some(self.entries.remove(i).value)
    }

    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries.iter().find(|e| e.key == key).map(|e| &e.value)
    }

    fn typed(&self, key: &str, wanted: ValueType) -> Result<&Value, AccessError> {
        let value = self.get(key).ok_or_else(|| AccessError::Missing {
            key: key.to_string(),
        })?;
        if value.value_type() != wanted {
            return Err(AccessError::WrongType {
                key: key.to_string(),
                wanted,
                found: value.value_type(),
            });
        }
        Ok(value)
    }

    accessor!(get_i32, I32, i32, "The `I` value of a key.");
    accessor!(get_f32, F32, f32, "The `F` value of a key.");
    accessor!(get_f64, F64, f64, "The `D` value of a key.");
    accessor!(get_i64, I64, i64, "The `L` value of a key.");
    accessor!(get_bool, Bool, bool, "The `B` value of a key.");
    accessor!(
        get_bin,
        Bin,
        Bytes,
        "The `X` value of a key (a cheap clone)."
    );

    /// The `S` value of a key.
    pub fn get_str(&self, key: &str) -> Result<&str, AccessError> {
        match self.typed(key, ValueType::Str)? {
            Value::Str(s) => Ok(s),
            _ => unreachable!("typed() checked the type"),
        }
    }

    /// The entries, in the order they were added.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True without entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Adds an entry known to be new (the decoders check duplicates themselves).
    pub(crate) fn push_unchecked(&mut self, entry: Entry) {
        self.entries.push(entry);
    }
}

/// Which encoding a message travels in, chosen by configuration.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// The paper's XML (section III.A.2). The default, because it is what the testbed
    /// exchanged and what any language can read.
    #[default]
    Xml,
    /// The compact binary encoding ([`binary`]).
    Binary,
}

impl Encoding {
    /// The configuration name: `xml` or `binary`.
    pub fn name(self) -> &'static str {
        match self {
            Encoding::Xml => "xml",
            Encoding::Binary => "binary",
        }
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Encoding {
    type Err = String;
    fn from_str(s: &str) -> Result<Encoding, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "xml" => Ok(Encoding::Xml),
            "binary" | "bin" => Ok(Encoding::Binary),
            other => Err(format!(
                "unknown message encoding `{other}`; known: xml, binary"
            )),
        }
    }
}

/// Why bytes did not decode into a message, in either encoding.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// An XML message was refused.
    #[error(transparent)]
    Xml(#[from] xml::XmlError),
    /// A binary message was refused.
    #[error(transparent)]
    Binary(#[from] binary::BinaryError),
}

/// Why a message could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// XML 1.0 cannot carry this text (a control character, even as a reference).
    #[error("entry `{key}`: XML 1.0 cannot carry the character {found:?} in a {what}")]
    NotXmlText {
        /// The entry's key.
        key: String,
        /// `key` or `value`.
        what: &'static str,
        /// The character.
        found: char,
    },
}

impl Message {
    /// Encodes in the given encoding, appending to `out`.
    pub fn encode(&self, encoding: Encoding, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        match encoding {
            Encoding::Xml => xml::write(self, out),
            Encoding::Binary => {
                binary::write(self, out);
                Ok(())
            }
        }
    }

    /// Decodes bytes in the given encoding.
    pub fn decode(encoding: Encoding, bytes: &[u8]) -> Result<Message, DecodeError> {
        match encoding {
            Encoding::Xml => Ok(xml::parse(bytes)?),
            Encoding::Binary => Ok(binary::parse(bytes)?),
        }
    }

    /// The paper's XML text.
    pub fn to_xml(&self) -> Result<String, EncodeError> {
        let mut out = Vec::new();
        xml::write(self, &mut out)?;
        Ok(String::from_utf8(out).expect("the writer writes UTF-8"))
    }

    /// Parses the paper's XML, strictly.
    pub fn from_xml(bytes: impl AsRef<[u8]>) -> Result<Message, xml::XmlError> {
        xml::parse(bytes.as_ref())
    }

    /// The compact binary form.
    pub fn to_binary(&self) -> Vec<u8> {
        let mut out = Vec::new();
        binary::write(self, &mut out);
        out
    }

    /// Reads the compact binary form, strictly.
    pub fn from_binary(bytes: &[u8]) -> Result<Message, binary::BinaryError> {
        binary::parse(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accessors_are_typed_and_name_the_key() {
        let m = Message::new()
            .with("n", 12)
            .with("x", 1.5f32)
            .with("y", 2.25f64)
            .with("big", i64::MAX)
            .with("ok", true)
            .with("name", "STARS")
            .with("raw", vec![1u8, 2, 3]);
        assert_eq!(m.get_i32("n"), Ok(12));
        assert_eq!(m.get_f32("x"), Ok(1.5));
        assert_eq!(m.get_f64("y"), Ok(2.25));
        assert_eq!(m.get_i64("big"), Ok(i64::MAX));
        assert_eq!(m.get_bool("ok"), Ok(true));
        assert_eq!(m.get_str("name"), Ok("STARS"));
        assert_eq!(&m.get_bin("raw").unwrap()[..], &[1, 2, 3]);
        assert_eq!(
            m.get_f64("n"),
            Err(AccessError::WrongType {
                key: "n".into(),
                wanted: ValueType::F64,
                found: ValueType::I32
            })
        );
        assert!(m
            .get_i32("none")
            .unwrap_err()
            .to_string()
            .contains("`none`"));
    }

    #[test]
    fn insert_refuses_duplicates_and_set_replaces_in_place() {
        let mut m = Message::new();
        m.insert("a", 1).unwrap();
        m.insert("b", 2).unwrap();
        assert_eq!(m.insert("a", 3), Err(EntryError::DuplicateKey("a".into())));
        assert_eq!(m.insert("", 3), Err(EntryError::EmptyKey));
        assert_eq!(m.set("a", 4), Some(Value::I32(1)));
        assert_eq!(m.entries()[0].key, "a");
        assert_eq!(m.remove("a"), Some(Value::I32(4)));
        assert_eq!(m.len(), 1);
    }

    #[test]
    fn letters_name_types_both_ways() {
        for t in ValueType::ALL {
            assert_eq!(ValueType::from_letter(&t.letter().to_string()), Some(t));
        }
        assert_eq!(ValueType::from_letter("Q"), None);
        assert_eq!(ValueType::from_letter("II"), None);
        assert_eq!(ValueType::from_letter(""), None);
    }
}

//! Typed values: the HLA encodings (IEEE 1516.2-2010, 4.13) of a FOM's data types, so
//! that a federate can write `1234.5` for an `HLAfloat64BE` attribute and a record of
//! named fields for an `HLAfixedRecord`, instead of assembling the bytes by hand.
//!
//! [`Fom::encode_value`] and [`Fom::decode_value`] walk the FOM's data type tables:
//!
//! | data type | [`Value`] |
//! |---|---|
//! | basic `HLAfloat32*`, `HLAfloat64*` | [`Value::Float`] |
//! | other basic types (the `HLAinteger*`, `HLAoctet*`, a module's own), simple types | [`Value::Int`] (signed, except `HLAoctet` and `HLAoctetPair*`) |
//! | `HLAboolean` | [`Value::Bool`] |
//! | other enumerations | [`Value::Text`], the enumerator's name (an [`Value::Int`] of one of its values is taken too) |
//! | arrays of `HLAASCIIchar` / `HLAunicodeChar` (`HLAASCIIstring`, `HLAunicodeString`) | [`Value::Text`] |
//! | arrays of `HLAbyte` / `HLAoctet` (`HLAopaqueData`) | [`Value::Bytes`] |
//! | other `HLAfixedArray` and `HLAvariableArray` | [`Value::List`] |
//! | `HLAfixedRecord` | [`Value::Record`], the fields by name in the FOM's order |
//! | `HLAvariantRecord` | [`Value::Record`]: the discriminant's field, then the selected alternative's (if it carries a value) |
//!
//! Layout, as the standard gives it: a value of octet boundary `V` starts at an offset
//! (from the start of the whole encoded value) that is a multiple of `V`, with zero
//! padding before it. `V` is a basic type's size, an enumeration's or simple type's
//! representation's, the largest of a record's fields, a fixed array's element's, and
//! for a variable array the larger of 4 (its `HLAinteger32BE` count) and its
//! element's; for a variant record the largest of its discriminant's and its
//! alternatives' (`values/variant.rs`: a [`Value::Record`] of the discriminant's
//! enumerator and the selected alternative's value). FOM-specific encodings are
//! refused with an error naming them. Decoding checks everything: counts, lengths, enumerator values, text,
//! padding left over.

use thiserror::Error;

use crate::model::{DataType, Endian, Fom, VariantAlternative};

mod variant;

/// A typed value of one of a FOM's data types.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `HLAboolean`.
    Bool(bool),
    /// An integer basic, simple or enumerated type.
    Int(i64),
    /// `HLAfloat32BE/LE`, `HLAfloat64BE/LE`.
    Float(f64),
    /// A string type, or an enumerator's name.
    Text(String),
    /// An array of bytes (`HLAopaqueData`).
    Bytes(Vec<u8>),
    /// Any other array.
    List(Vec<Value>),
    /// A fixed record: each field's name and value, in the FOM's order.
    Record(Vec<(String, Value)>),
}

/// Why a value could not be encoded or decoded: where (a path from the top, such as
/// `/position/2`), as which data type, and why.
#[derive(Clone, Debug, Error, PartialEq, Eq)]
#[error("{what} `{data_type}` at `{path}`: {reason}")]
pub struct ValueError {
    /// `"encoding"` or `"decoding"`.
    pub what: &'static str,
    /// Where in the value: `/field`, `/index`, nested; empty for the top.
    pub path: String,
    /// The data type being encoded or decoded there.
    pub data_type: String,
    /// What is wrong.
    pub reason: String,
}

/// How deep types may nest (a FOM whose record contains itself would never end).
const DEPTH_MAX: usize = 64;

/// What a data type name resolves to, for encoding.
enum Shape<'a> {
    Number {
        bytes: usize,
        endian: Endian,
        kind: Number,
    },
    Enumerated {
        name: &'a str,
        representation: &'a str,
        enumerators: &'a [(String, Vec<String>)],
    },
    Array {
        element: &'a str,
        fixed: Option<usize>,
    },
    Record {
        fields: &'a [(String, String)],
    },
    Variant {
        discriminant: &'a str,
        enum_type: &'a str,
        alternatives: &'a [VariantAlternative],
    },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Number {
    Signed,
    Unsigned,
    Float,
}

/// Arrays whose elements read as text or bytes, written and read whole: their
/// elements lie back to back after the 4-byte count, with no padding between them.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Run {
    /// `HLAASCIIchar`: one byte each.
    Ascii,
    /// `HLAunicodeChar`: one big-endian UTF-16 code unit of 2 bytes each.
    Unicode,
    /// `HLAbyte` or `HLAoctet`: one byte each.
    Bytes,
}

impl Run {
    /// The run an array of `element` reads as, if any.
    fn of(element: &str) -> Option<Run> {
        match element {
            "HLAASCIIchar" => Some(Run::Ascii),
            "HLAunicodeChar" => Some(Run::Unicode),
            "HLAbyte" | "HLAoctet" => Some(Run::Bytes),
            _ => None,
        }
    }

    /// Bytes per element.
    fn unit(self) -> usize {
        if self == Run::Unicode {
            2
        } else {
            1
        }
    }
}

impl Fom {
    /// The HLA encoding of `value` as data type `data_type` (see the module docs).
    pub fn encode_value(&self, data_type: &str, value: &Value) -> Result<Vec<u8>, ValueError> {
        let mut out = Vec::new();
        let mut walk = Walk::new(self, "encoding");
        walk.encode(data_type, value, &mut out)?;
        Ok(out)
    }

    /// The value that `bytes` encode as data type `data_type`; every byte must be
    /// used.
    pub fn decode_value(&self, data_type: &str, bytes: &[u8]) -> Result<Value, ValueError> {
        let mut walk = Walk::new(self, "decoding");
        let mut at = 0;
        let value = walk.decode(data_type, bytes, &mut at)?;
        if at != bytes.len() {
            return Err(walk.error(
                data_type,
                format!(
                    "{} bytes left over after the value's {at}",
                    bytes.len() - at
                ),
            ));
        }
        Ok(value)
    }

    /// The octet boundary of a data type (see the module docs).
    pub fn octet_boundary(&self, data_type: &str) -> Option<usize> {
        let mut walk = Walk::new(self, "encoding");
        walk.boundary(data_type).ok()
    }
}

struct Walk<'a> {
    fom: &'a Fom,
    /// The octet boundaries worked out so far in this walk.
    boundaries: Vec<(&'a str, usize)>,
    what: &'static str,
    path: String,
    depth: usize,
}

impl<'a> Walk<'a> {
    fn new(fom: &'a Fom, what: &'static str) -> Walk<'a> {
        Walk {
            fom,
            boundaries: Vec::new(),
            what,
            path: String::new(),
            depth: 0,
        }
    }

    fn error(&self, data_type: &str, reason: impl Into<String>) -> ValueError {
        ValueError {
            what: self.what,
            path: if self.path.is_empty() {
                "/".into()
            } else {
                self.path.clone()
            },
            data_type: data_type.to_string(),
            reason: reason.into(),
        }
    }

    fn shape(&mut self, name: &'a str) -> Result<Shape<'a>, ValueError> {
        let fom = self.fom;
        let mut current = name;
        for _ in 0..=fom.data_types.len() {
            let Some(t) = fom.data_type(current) else {
                return Err(self.error(name, format!("no data type `{current}` in the FOM")));
            };
            return Ok(match t {
                DataType::Basic { name, size_bits, endian } => {
                    if !matches!(size_bits, 8 | 16 | 32 | 64) {
                        return Err(self.error(name, format!("a basic type of {size_bits} bits is not supported (8, 16, 32 or 64)")));
                    }
                    let kind = if name.starts_with("HLAfloat") {
                        if *size_bits < 32 {
                            return Err(self.error(name, "a float of fewer than 32 bits"));
                        }
                        Number::Float
                    } else if name.starts_with("HLAoctet") {
                        Number::Unsigned
                    } else {
                        Number::Signed
                    };
                    Shape::Number { bytes: *size_bits as usize / 8, endian: *endian, kind }
                }
                DataType::Simple { representation, .. } => {
                    current = representation;
                    continue;
                }
                DataType::Enumerated { name, representation, enumerators } => Shape::Enumerated {
                    name,
                    representation,
                    enumerators,
                },
                DataType::Array { element, cardinality, encoding, .. } => match encoding.as_str() {
                    "HLAvariableArray" => Shape::Array { element, fixed: None },
                    "HLAfixedArray" => match cardinality.trim().parse::<usize>() {
                        Ok(n) => Shape::Array { element, fixed: Some(n) },
                        Err(_) => {
                            return Err(self.error(name, format!("an HLAfixedArray needs a number as its cardinality, not `{cardinality}`")))
                        }
                    },
                    other => return Err(self.error(name, format!("the array encoding `{other}` is FOM-specific: not supported"))),
                },
                DataType::FixedRecord { fields, encoding, .. } => {
                    if encoding != "HLAfixedRecord" {
                        return Err(self.error(name, format!("the record encoding `{encoding}` is FOM-specific: not supported")));
                    }
                    Shape::Record { fields }
                }
                DataType::VariantRecord { discriminant, data_type, alternatives, encoding, .. } => {
                    if encoding != "HLAvariantRecord" {
                        return Err(self.error(name, format!("the variant record encoding `{encoding}` is FOM-specific: not supported")));
                    }
                    Shape::Variant { discriminant, enum_type: data_type, alternatives }
                }
            });
        }
        Err(self.error(name, "its simple types alias each other in a cycle"))
    }

    fn enter(&mut self, data_type: &str) -> Result<(), ValueError> {
        self.depth += 1;
        if self.depth > DEPTH_MAX {
            return Err(self.error(
                data_type,
                format!("types nest more than {DEPTH_MAX} deep (a type that contains itself?)"),
            ));
        }
        Ok(())
    }

    fn boundary(&mut self, data_type: &'a str) -> Result<usize, ValueError> {
        if let Some(&(_, v)) = self.boundaries.iter().find(|(t, _)| *t == data_type) {
            return Ok(v);
        }
        self.enter(data_type)?;
        let v = match self.shape(data_type)? {
            Shape::Number { bytes, .. } => bytes,
            Shape::Enumerated { representation, .. } => self.boundary(representation)?,
            Shape::Array { element, fixed } => {
                let e = self.boundary(element)?;
                if fixed.is_some() {
                    e
                } else {
                    e.max(4)
                }
            }
            Shape::Record { fields } => {
                let mut v = 1;
                for (_, t) in fields {
                    v = v.max(self.boundary(t)?);
                }
                v
            }
            Shape::Variant {
                enum_type,
                alternatives,
                ..
            } => {
                let mut v = self.boundary(enum_type)?;
                for t in alternatives.iter().filter_map(|a| a.data_type.as_deref()) {
                    v = v.max(self.boundary(t)?);
                }
                v
            }
        };
        self.depth -= 1;
        self.boundaries.push((data_type, v));
        Ok(v)
    }

    fn encode(
        &mut self,
        data_type: &'a str,
        value: &Value,
        out: &mut Vec<u8>,
    ) -> Result<(), ValueError> {
        self.enter(data_type)?;
        let v = self.boundary(data_type)?;
        pad(out, v);
        match self.shape(data_type)? {
            Shape::Number {
                bytes,
                endian,
                kind,
            } => {
                let raw = match (kind, value) {
                    (Number::Float, Value::Float(f)) => float_bits(*f, bytes),
                    (Number::Float, Value::Int(i)) => float_bits(*i as f64, bytes),
                    (Number::Signed | Number::Unsigned, Value::Int(i)) => {
                        check_range(*i, bytes, kind).map_err(|r| self.error(data_type, r))?
                    }
                    (Number::Signed | Number::Unsigned, Value::Bool(b)) => u64::from(*b),
                    _ => {
                        return Err(self.error(
                            data_type,
                            format!("expected {}, got {}", number_name(kind), kind_of(value)),
                        ))
                    }
                };
                put(out, raw, bytes, endian);
            }
            Shape::Enumerated {
                name,
                representation,
                enumerators,
            } => {
                let number = match value {
                    Value::Bool(b) if name == "HLAboolean" => i64::from(*b),
                    Value::Text(t) => match enumerators.iter().find(|(n, _)| n == t) {
                        Some((_, values)) => {
                            first_value(values).map_err(|r| self.error(data_type, r))?
                        }
                        None => {
                            return Err(self.error(
                                data_type,
                                format!("no enumerator `{t}` (it has {})", names(enumerators)),
                            ))
                        }
                    },
                    Value::Int(i)
                        if enumerators
                            .iter()
                            .any(|(_, vs)| vs.iter().any(|v| v.trim().parse() == Ok(*i))) =>
                    {
                        *i
                    }
                    Value::Int(i) => {
                        return Err(self.error(
                            data_type,
                            format!(
                                "{i} is the value of no enumerator (it has {})",
                                names(enumerators)
                            ),
                        ))
                    }
                    other => {
                        return Err(self.error(
                            data_type,
                            format!("expected an enumerator's name, got {}", kind_of(other)),
                        ))
                    }
                };
                self.depth -= 1;
                return self.encode(representation, &Value::Int(number), out);
            }
            Shape::Array { element, fixed } => {
                // Text and bytes go straight into the buffer (see `Run`).
                let run = Run::of(element);
                let raw: Option<Vec<u8>> = match (run, value) {
                    (Some(Run::Ascii), Value::Text(t)) => {
                        if let Some(c) = t.chars().find(|c| !c.is_ascii()) {
                            return Err(self.error(data_type, format!("`{c}` is not ASCII")));
                        }
                        Some(t.as_bytes().to_vec())
                    }
                    (Some(Run::Unicode), Value::Text(t)) => {
                        Some(t.encode_utf16().flat_map(u16::to_be_bytes).collect())
                    }
                    (Some(Run::Bytes), Value::Bytes(b)) => Some(b.clone()),
                    _ => None,
                };
                let items: &[Value] = match (&raw, value) {
                    (Some(_), _) => &[],
                    (None, Value::List(items)) => items,
                    (None, other) => {
                        return Err(self.error(
                            data_type,
                            format!("expected a list, got {}", kind_of(other)),
                        ))
                    }
                };
                let len = match (&raw, run) {
                    (Some(r), Some(run)) => r.len() / run.unit(),
                    _ => items.len(),
                };
                match fixed {
                    Some(n) if n != len => {
                        return Err(self.error(
                            data_type,
                            format!("a fixed array of {n} elements, got {len}"),
                        ))
                    }
                    Some(_) => {}
                    None => {
                        let count = i32::try_from(len)
                            .map_err(|_| self.error(data_type, "more than 2^31 elements"))?;
                        put(out, count as u32 as u64, 4, Endian::Big);
                    }
                }
                if let Some(raw) = raw {
                    out.extend_from_slice(&raw);
                }
                let path = self.path.len();
                for (i, item) in items.iter().enumerate() {
                    self.path.push_str(&format!("/{i}"));
                    self.encode(element, item, out)?;
                    self.path.truncate(path);
                }
            }
            Shape::Record { fields } => {
                let Value::Record(given) = value else {
                    return Err(self.error(
                        data_type,
                        format!("expected a record, got {}", kind_of(value)),
                    ));
                };
                if let Some((unknown, _)) = given
                    .iter()
                    .find(|(n, _)| !fields.iter().any(|(f, _)| f == n))
                {
                    return Err(self.error(
                        data_type,
                        format!("no field `{unknown}` (it has {})", field_names(fields)),
                    ));
                }
                let path = self.path.len();
                for (field, field_type) in fields {
                    let Some((_, v)) = given.iter().find(|(n, _)| n == field) else {
                        return Err(
                            self.error(data_type, format!("the field `{field}` is missing"))
                        );
                    };
                    self.path.push_str(&format!("/{field}"));
                    self.encode(field_type, v, out)?;
                    self.path.truncate(path);
                }
            }
            Shape::Variant {
                discriminant,
                enum_type,
                alternatives,
            } => {
                self.encode_variant(data_type, discriminant, enum_type, alternatives, value, out)?
            }
        }
        self.depth -= 1;
        Ok(())
    }

    fn decode(
        &mut self,
        data_type: &'a str,
        bytes: &[u8],
        at: &mut usize,
    ) -> Result<Value, ValueError> {
        self.enter(data_type)?;
        let v = self.boundary(data_type)?;
        let start = at.next_multiple_of(v);
        if start > bytes.len() {
            return Err(self.error(
                data_type,
                format!(
                    "the data ends at {} before the padding to {start}",
                    bytes.len()
                ),
            ));
        }
        if bytes[*at..start].iter().any(|&b| b != 0) {
            return Err(self.error(
                data_type,
                format!("padding at {}..{start} is not zero", *at),
            ));
        }
        *at = start;
        let value = match self.shape(data_type)? {
            Shape::Number {
                bytes: n,
                endian,
                kind,
            } => {
                let raw = take(bytes, at, n, endian).map_err(|r| self.error(data_type, r))?;
                match kind {
                    Number::Float if n == 4 => Value::Float(f64::from(f32::from_bits(raw as u32))),
                    Number::Float => Value::Float(f64::from_bits(raw)),
                    Number::Unsigned => Value::Int(raw as i64),
                    Number::Signed => Value::Int(sign_extend(raw, n)),
                }
            }
            Shape::Enumerated {
                name,
                representation,
                enumerators,
            } => {
                let Value::Int(i) = self.decode(representation, bytes, at)? else {
                    return Err(self.error(data_type, "its representation is not an integer"));
                };
                let found = enumerators
                    .iter()
                    .find(|(_, vs)| vs.iter().any(|v| v.trim().parse() == Ok(i)));
                match found {
                    Some(_) if name == "HLAboolean" => Value::Bool(i != 0),
                    Some((n, _)) => Value::Text(n.clone()),
                    None => {
                        return Err(self.error(
                            data_type,
                            format!(
                                "{i} is the value of no enumerator (it has {})",
                                names(enumerators)
                            ),
                        ))
                    }
                }
            }
            Shape::Array { element, fixed } => {
                let count = match fixed {
                    Some(n) => n,
                    None => {
                        let raw = take(bytes, at, 4, Endian::Big)
                            .map_err(|r| self.error(data_type, r))?;
                        let count = raw as u32 as i32;
                        if count < 0 {
                            return Err(self
                                .error(data_type, format!("a negative element count ({count})")));
                        }
                        count as usize
                    }
                };
                // Every element takes a byte at least: a count beyond what is left is
                // refused before anything is allocated for it.
                if count > bytes.len() - *at {
                    return Err(self.error(
                        data_type,
                        format!(
                            "{count} elements, but only {} bytes left",
                            bytes.len() - *at
                        ),
                    ));
                }
                // Text and bytes are read straight from the buffer (see `Run`).
                if let Some(run) = Run::of(element) {
                    let n = count * run.unit();
                    let raw = bytes.get(*at..*at + n).ok_or_else(|| {
                        self.error(
                            data_type,
                            format!(
                                "{count} elements of {} bytes, but only {} bytes left",
                                run.unit(),
                                bytes.len() - *at
                            ),
                        )
                    })?;
                    *at += n;
                    match run {
                        Run::Ascii if raw.is_ascii() => {
                            Value::Text(String::from_utf8(raw.to_vec()).expect("ASCII"))
                        }
                        Run::Ascii => return Err(self.error(data_type, "not ASCII text")),
                        Run::Unicode => {
                            let units: Vec<u16> = raw
                                .chunks_exact(2)
                                .map(|u| u16::from_be_bytes([u[0], u[1]]))
                                .collect();
                            Value::Text(String::from_utf16(&units).map_err(|_| {
                                self.error(data_type, "not UTF-16 text (an unpaired surrogate)")
                            })?)
                        }
                        Run::Bytes => Value::Bytes(raw.to_vec()),
                    }
                } else {
                    let mut items = Vec::with_capacity(count);
                    let path = self.path.len();
                    for i in 0..count {
                        self.path.push_str(&format!("/{i}"));
                        items.push(self.decode(element, bytes, at)?);
                        self.path.truncate(path);
                    }
                    Value::List(items)
                }
            }
            Shape::Record { fields } => {
                let mut out = Vec::with_capacity(fields.len());
                let path = self.path.len();
                for (field, field_type) in fields {
                    self.path.push_str(&format!("/{field}"));
                    out.push((field.clone(), self.decode(field_type, bytes, at)?));
                    self.path.truncate(path);
                }
                Value::Record(out)
            }
            Shape::Variant {
                discriminant,
                enum_type,
                alternatives,
            } => {
                self.decode_variant(data_type, discriminant, enum_type, alternatives, bytes, at)?
            }
        };
        self.depth -= 1;
        Ok(value)
    }
}

fn pad(out: &mut Vec<u8>, boundary: usize) {
    let len = out.len().next_multiple_of(boundary);
    out.resize(len, 0);
}

fn put(out: &mut Vec<u8>, raw: u64, bytes: usize, endian: Endian) {
    let le = raw.to_le_bytes();
    match endian {
        Endian::Little => out.extend_from_slice(&le[..bytes]),
        Endian::Big => out.extend(le[..bytes].iter().rev()),
    }
}

fn take(data: &[u8], at: &mut usize, bytes: usize, endian: Endian) -> Result<u64, String> {
    let Some(slice) = data.get(*at..*at + bytes) else {
        return Err(format!(
            "{bytes} bytes needed at {}, the data ends at {}",
            *at,
            data.len()
        ));
    };
    *at += bytes;
    let mut le = [0u8; 8];
    match endian {
        Endian::Little => le[..bytes].copy_from_slice(slice),
        Endian::Big => slice.iter().rev().enumerate().for_each(|(i, b)| le[i] = *b),
    }
    Ok(u64::from_le_bytes(le))
}

fn sign_extend(raw: u64, bytes: usize) -> i64 {
    let shift = 64 - 8 * bytes as u32;
    ((raw << shift) as i64) >> shift
}

fn float_bits(f: f64, bytes: usize) -> u64 {
    if bytes == 4 {
        u64::from((f as f32).to_bits())
    } else {
        f.to_bits()
    }
}

fn check_range(i: i64, bytes: usize, kind: Number) -> Result<u64, String> {
    let bits = 8 * bytes as u32;
    let (lo, hi) = match (kind, bits) {
        (_, 64) if kind == Number::Unsigned => (0, i64::MAX),
        (_, 64) => (i64::MIN, i64::MAX),
        (Number::Unsigned, _) => (0, (1i64 << bits) - 1),
        _ => (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1),
    };
    if i < lo || i > hi {
        return Err(format!("{i} is outside {lo}..={hi}"));
    }
    Ok(i as u64 & (u64::MAX >> (64 - bits)))
}

fn first_value(values: &[String]) -> Result<i64, String> {
    let v = values.first().ok_or("the enumerator has no value")?;
    v.trim()
        .parse()
        .map_err(|_| format!("the enumerator's value `{v}` is not an integer"))
}

fn names(enumerators: &[(String, Vec<String>)]) -> String {
    enumerators
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn field_names(fields: &[(String, String)]) -> String {
    fields
        .iter()
        .map(|(n, _)| n.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

fn number_name(kind: Number) -> &'static str {
    match kind {
        Number::Float => "a number",
        _ => "an integer",
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "a boolean",
        Value::Int(_) => "an integer",
        Value::Float(_) => "a float",
        Value::Text(_) => "text",
        Value::Bytes(_) => "bytes",
        Value::List(_) => "a list",
        Value::Record(_) => "a record",
    }
}

//! The compact binary encoding of a [`Message`]: the same entries as the XML, in the
//! same order, without the text (`docs/wire-format.md`, "Bus messages").
//!
//! ```text
//! message = version:u8 (0x01) count:varint entry*count
//! entry   = key:string typ:u8 value
//! value   = I: zigzag varint (32-bit range)   L: zigzag varint
//!           F: 4 bytes, little-endian IEEE 754 D: 8 bytes, little-endian IEEE 754
//!           B: 0x00 or 0x01                   S: string   X: bytes
//! string  = length:varint UTF-8 bytes         bytes = length:varint bytes
//! ```
//!
//! `typ` is the type's letter in ASCII, as in the XML. Varints are
//! `glidepath_wire::varint`'s, shortest form only, so every message has exactly one
//! encoding. The reader never panics and never allocates more than the input
//! justifies; it refuses an unknown version or type, a truncated or oversized
//! length, a `B` other than 0 or 1, an `I` beyond 32 bits, invalid UTF-8, an empty
//! or repeated key and trailing bytes, naming the byte offset.

use std::collections::HashSet;
use std::fmt;

use bytes::Bytes;
use glidepath_wire::varint;

use super::{Entry, Message, Value, ValueType};

/// The version byte this module writes and reads.
pub const VERSION: u8 = 1;

/// Appends the message's binary form to `out`.
pub fn write(message: &Message, out: &mut Vec<u8>) {
    out.push(VERSION);
    varint::put(out, message.len() as u64);
    for Entry { key, value } in message.entries() {
        put_bytes(out, key.as_bytes());
        out.push(value.value_type().letter() as u8);
        match value {
            Value::I32(v) => varint::put(out, varint::zigzag_encode(i64::from(*v))),
            Value::I64(v) => varint::put(out, varint::zigzag_encode(*v)),
            Value::F32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::F64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Bool(v) => out.push(u8::from(*v)),
            Value::Str(s) => put_bytes(out, s.as_bytes()),
            Value::Bin(b) => put_bytes(out, b),
        }
    }
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    varint::put(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// What is wrong with a binary message.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum BinaryErrorKind {
    /// No bytes at all.
    Empty,
    /// A version byte this reader does not know.
    Version(u8),
    /// The input ends inside a field.
    Truncated,
    /// A varint longer than 64 bits or not in its shortest form.
    BadVarint,
    /// More entries than the remaining bytes could hold.
    TooManyEntries(u64),
    /// A key or string that is not UTF-8.
    NotUtf8,
    /// An empty key.
    EmptyKey,
    /// A key given twice.
    DuplicateKey(String),
    /// A type byte that names no type.
    UnknownType(u8),
    /// A boolean byte other than 0 and 1.
    BadBool(u8),
    /// An `I` beyond the 32-bit range.
    I32OutOfRange(i64),
    /// Bytes after the last entry.
    TrailingBytes(usize),
}

/// A binary message was refused: where (byte offset) and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BinaryError {
    /// Byte offset of the faulty field.
    pub offset: usize,
    /// What is wrong.
    pub kind: BinaryErrorKind,
}

impl fmt::Display for BinaryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "binary message, byte {}: ", self.offset)?;
        match &self.kind {
            BinaryErrorKind::Empty => write!(f, "empty"),
            BinaryErrorKind::Version(v) => {
                write!(f, "unknown version {v} (this reader knows {VERSION})")
            }
            BinaryErrorKind::Truncated => write!(f, "truncated"),
            BinaryErrorKind::BadVarint => write!(f, "bad varint (overlong or over 64 bits)"),
            BinaryErrorKind::TooManyEntries(n) => {
                write!(f, "{n} entries cannot fit in what remains")
            }
            BinaryErrorKind::NotUtf8 => write!(f, "text that is not UTF-8"),
            BinaryErrorKind::EmptyKey => write!(f, "empty key"),
            BinaryErrorKind::DuplicateKey(k) => write!(f, "key `{k}` appears twice"),
            BinaryErrorKind::UnknownType(t) => write!(f, "unknown type byte {t:#04x}"),
            BinaryErrorKind::BadBool(b) => write!(f, "boolean byte {b:#04x} (expected 0 or 1)"),
            BinaryErrorKind::I32OutOfRange(v) => write!(f, "`I` value {v} beyond 32 bits"),
            BinaryErrorKind::TrailingBytes(n) => write!(f, "{n} bytes after the last entry"),
        }
    }
}

impl std::error::Error for BinaryError {}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn fail<T>(&self, offset: usize, kind: BinaryErrorKind) -> Result<T, BinaryError> {
        Err(BinaryError { offset, kind })
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.at
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], BinaryError> {
        if n > self.remaining() {
            return self.fail(self.at, BinaryErrorKind::Truncated);
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    fn u8(&mut self) -> Result<u8, BinaryError> {
        Ok(self.take(1)?[0])
    }

    fn varint(&mut self) -> Result<u64, BinaryError> {
        match varint::get(&self.bytes[self.at..]) {
            Ok((v, n)) => {
                self.at += n;
                Ok(v)
            }
            Err(varint::VarintError::Truncated) => self.fail(self.at, BinaryErrorKind::Truncated),
            Err(_) => self.fail(self.at, BinaryErrorKind::BadVarint),
        }
    }

    fn bytes(&mut self) -> Result<&'a [u8], BinaryError> {
        let at = self.at;
        let n = self.varint()?;
        match usize::try_from(n) {
            Ok(n) if n <= self.remaining() => self.take(n),
            _ => self.fail(at, BinaryErrorKind::Truncated),
        }
    }

    fn string(&mut self) -> Result<&'a str, BinaryError> {
        let at = self.at;
        let b = self.bytes()?;
        std::str::from_utf8(b).or_else(|_| self.fail(at, BinaryErrorKind::NotUtf8))
    }
}

/// The fewest bytes an entry takes: a one-byte key length, one key byte, the type
/// and a one-byte value.
const ENTRY_BYTES_MIN: u64 = 4;

/// Reads a binary message strictly (see the [module documentation](self)).
pub fn parse(bytes: &[u8]) -> Result<Message, BinaryError> {
    let mut c = Cursor { bytes, at: 0 };
    if bytes.is_empty() {
        return c.fail(0, BinaryErrorKind::Empty);
    }
    let version = c.u8()?;
    if version != VERSION {
        return c.fail(0, BinaryErrorKind::Version(version));
    }
    let count_at = c.at;
    let count = c.varint()?;
    if count > c.remaining() as u64 / ENTRY_BYTES_MIN {
        return c.fail(count_at, BinaryErrorKind::TooManyEntries(count));
    }
    let mut message = Message::new();
    let mut keys: HashSet<&str> = HashSet::with_capacity(count as usize);
    for _ in 0..count {
        let key_at = c.at;
        let key = c.string()?;
        if key.is_empty() {
            return c.fail(key_at, BinaryErrorKind::EmptyKey);
        }
        if !keys.insert(key) {
            return c.fail(key_at, BinaryErrorKind::DuplicateKey(key.to_string()));
        }
        let type_at = c.at;
        let letter = c.u8()?;
        let Some(value_type) = ValueType::ALL
            .into_iter()
            .find(|t| t.letter() as u8 == letter)
        else {
            return c.fail(type_at, BinaryErrorKind::UnknownType(letter));
        };
        let value_at = c.at;
        let value = match value_type {
            ValueType::I32 => {
                let v = varint::zigzag_decode(c.varint()?);
                match i32::try_from(v) {
                    Ok(v) => Value::I32(v),
                    Err(_) => return c.fail(value_at, BinaryErrorKind::I32OutOfRange(v)),
                }
            }
            ValueType::I64 => Value::I64(varint::zigzag_decode(c.varint()?)),
            ValueType::F32 => {
                Value::F32(f32::from_le_bytes(c.take(4)?.try_into().expect("4 bytes")))
            }
            ValueType::F64 => {
                Value::F64(f64::from_le_bytes(c.take(8)?.try_into().expect("8 bytes")))
            }
            ValueType::Bool => match c.u8()? {
                0 => Value::Bool(false),
                1 => Value::Bool(true),
                b => return c.fail(value_at, BinaryErrorKind::BadBool(b)),
            },
            ValueType::Str => Value::Str(c.string()?.to_string()),
            ValueType::Bin => Value::Bin(Bytes::copy_from_slice(c.bytes()?)),
        };
        message.push_unchecked(Entry {
            key: key.to_string(),
            value,
        });
    }
    if c.remaining() > 0 {
        return c.fail(c.at, BinaryErrorKind::TrailingBytes(c.remaining()));
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_papers_example_in_binary() {
        let m = Message::new()
            .with("key4", 12)
            .with("key2", 1234.5f32)
            .with("key3", 1234.12345678f64);
        let b = m.to_binary();
        let mut expected = vec![1, 3, 4];
        expected.extend_from_slice(b"key4I");
        expected.push(24);
        expected.extend_from_slice(&[4]);
        expected.extend_from_slice(b"key2F");
        expected.extend_from_slice(&1234.5f32.to_le_bytes());
        expected.extend_from_slice(&[4]);
        expected.extend_from_slice(b"key3D");
        expected.extend_from_slice(&1234.12345678f64.to_le_bytes());
        assert_eq!(b, expected);
        assert_eq!(parse(&b).unwrap(), m);
        // 33 bytes against the XML's 191; the hex as docs/wire-format.md 7.4 shows it.
        assert_eq!(b.len(), 33);
        let hex: Vec<String> = b.iter().map(|x| format!("{x:02x}")).collect();
        assert_eq!(
            hex.join(" "),
            "01 03 04 6b 65 79 34 49 18 04 6b 65 79 32 46 00 50 9a 44 04 6b 65 79 33 44 47 42 74 6b 7e 48 93 40"
        );
    }

    #[test]
    fn faults_are_named_with_their_offset() {
        let kind = |b: &[u8]| parse(b).unwrap_err();
        assert_eq!(kind(&[]).kind, BinaryErrorKind::Empty);
        assert_eq!(kind(&[2, 0]).kind, BinaryErrorKind::Version(2));
        assert_eq!(kind(&[1, 0, 0]).kind, BinaryErrorKind::TrailingBytes(1));
        assert_eq!(kind(&[1, 0x80]).kind, BinaryErrorKind::Truncated);
        assert_eq!(kind(&[1, 0x80, 0x00]).kind, BinaryErrorKind::BadVarint);
        assert_eq!(
            kind(&[1, 100, 0, 0]).kind,
            BinaryErrorKind::TooManyEntries(100)
        );
        assert_eq!(
            kind(&[1, 1, 1, b'a', b'Q', 0]),
            BinaryError {
                offset: 4,
                kind: BinaryErrorKind::UnknownType(b'Q')
            }
        );
        assert_eq!(
            kind(&[1, 1, 1, b'a', b'B', 2]).kind,
            BinaryErrorKind::BadBool(2)
        );
        assert_eq!(kind(&[1, 1, 0, b'B', 0, 0]).kind, BinaryErrorKind::EmptyKey);
        assert_eq!(
            kind(&[1, 1, 1, 0xFF, b'B', 0]).kind,
            BinaryErrorKind::NotUtf8
        );
        assert_eq!(
            kind(&[1, 2, 1, b'a', b'B', 0, 1, b'a', b'B', 1]),
            BinaryError {
                offset: 6,
                kind: BinaryErrorKind::DuplicateKey("a".into())
            }
        );
        let mut big = vec![1, 1, 1, b'a', b'I'];
        varint::put(&mut big, varint::zigzag_encode(i64::from(i32::MAX) + 1));
        assert!(matches!(kind(&big).kind, BinaryErrorKind::I32OutOfRange(_)));
        assert_eq!(
            kind(&[1, 1, 1, b'a', b'S', 5, b'x']).kind,
            BinaryErrorKind::Truncated
        );
        assert_eq!(
            kind(&[1, 1, 1, b'a', b'D', 0, 0]).kind,
            BinaryErrorKind::Truncated
        );
    }
}

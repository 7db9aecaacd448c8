//! glidepath's wire format: how an [`Envelope`] and the executive's requests and
//! replies look as bytes, so that processes (and clients in other languages) can
//! interoperate. The layout is specified in `docs/wire-format.md`.
//!
//! Two planes, two encodings:
//! - the **data plane** ([`encode_envelope`], [`decode_envelope`],
//!   [`decode_envelope_bytes`]) is a compact, versioned binary layout written by hand
//!   (no serde on the hot path) and decoded with every byte checked;
//! - the **management plane** ([`encode_request`], [`decode_reply`], ...) is JSON, so
//!   that it is readable and easy to speak from another language.
//!
//! [`subject`] names the NATS subjects both travel on; [`varint`] is the one LEB128
//! varint implementation, which the codec's layouts use too.
//!
//! Decoding never panics and never allocates more than a small multiple of its
//! input, whatever the bytes; the tests feed it truncations, bit flips and random
//! input to keep it that way.

mod envelope;
mod json;
pub mod subject;
pub mod varint;

pub use envelope::{
    decode_envelope, decode_envelope_bytes, decode_header, encode_envelope, encode_envelope_into,
    encoded_len, BodyKind, EnvelopeHeader, MAGIC, VERSION,
};
pub use json::{decode_reply, decode_request, encode_reply, encode_request, JSON_VERSION};

#[cfg(doc)]
use glidepath_core::Envelope;

/// Why bytes could not be decoded. Decoding never panics, whatever the input.
///
/// Offsets count bytes from the start of the input; `field` names the field being
/// read as the specification does.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum WireError {
    /// The first byte is not [`MAGIC`]: these are not glidepath envelope bytes.
    #[error("not a glidepath envelope: first byte is {found:#04x}, expected 0x47 ('G')")]
    BadMagic {
        /// The byte found.
        found: u8,
    },
    /// A version this build does not speak (binary envelope or JSON message); the
    /// message is refused as a whole, nothing after the version is looked at.
    #[error("unsupported wire format version {version}; this build speaks version {supported}")]
    UnsupportedVersion {
        /// The version found.
        version: u64,
        /// The version this build speaks.
        supported: u64,
    },
    /// The body kind byte names no body kind of this version.
    #[error("unknown body kind {kind:#04x}")]
    UnknownKind {
        /// The kind byte found.
        kind: u8,
    },
    /// The input ends inside a field.
    #[error("input ends inside {field} (starting at byte {offset})")]
    Truncated {
        /// Where the field starts.
        offset: usize,
        /// The field being read.
        field: &'static str,
    },
    /// A varint does not fit its field (more than 64 bits, or more than 32 for a handle).
    #[error("varint {field} at byte {offset} is out of range")]
    VarintOverflow {
        /// Where the varint starts.
        offset: usize,
        /// The field being read.
        field: &'static str,
    },
    /// A varint is longer than its shortest form (every value has exactly one encoding).
    #[error("varint {field} at byte {offset} is not in its shortest form")]
    NonCanonicalVarint {
        /// Where the varint starts.
        offset: usize,
        /// The field being read.
        field: &'static str,
    },
    /// A length or element count larger than the rest of the input can hold.
    #[error("{field} at byte {offset} declares {length} but only {remaining} byte(s) follow")]
    LengthBeyondInput {
        /// Where the length starts.
        offset: usize,
        /// The field being read.
        field: &'static str,
        /// The length or count declared.
        length: u64,
        /// The bytes left after the length.
        remaining: usize,
    },
    /// A time is NaN, or an interval is negative or not finite.
    #[error("{field} at byte {offset} is not a valid time (NaN, or an interval < 0 or infinite)")]
    InvalidTime {
        /// Where the eight bytes start.
        offset: usize,
        /// The field being read.
        field: &'static str,
    },
    /// A time or interval written in another form than its shortest (version 7:
    /// every value has exactly one encoding).
    #[error("{field} at byte {offset} is a time not written in its shortest form")]
    NonCanonicalTime {
        /// Where its representation tag is.
        offset: usize,
        /// The field being read.
        field: &'static str,
    },
    /// A tag, flag or presence byte with a value its field does not define.
    #[error("{field} at byte {offset} has undefined value {value}")]
    InvalidTag {
        /// Where the byte is.
        offset: usize,
        /// The field being read.
        field: &'static str,
        /// The byte found.
        value: u8,
    },
    /// A region whose ranges are not in strictly increasing dimension order, or
    /// has a range whose lower bound exceeds its upper bound (version 4).
    #[error(
        "region at byte {offset} is not canonical: dimensions must increase and lower <= upper"
    )]
    InvalidRegion {
        /// Where the region starts.
        offset: usize,
    },
    /// A save/restore notice whose CBOR body does not decode (kind `0x15`).
    #[error("save notice at byte {offset} is not valid: {reason}")]
    InvalidSaveNotice {
        /// Where the notice's bytes start.
        offset: usize,
        /// What the CBOR decoder reported.
        reason: String,
    },
    /// A name or label that is not UTF-8.
    #[error("{field} at byte {offset} is not valid UTF-8")]
    InvalidUtf8 {
        /// Where the string's bytes start.
        offset: usize,
        /// The field being read.
        field: &'static str,
    },
    /// Bytes left over after a complete envelope.
    #[error("{count} trailing byte(s) after the envelope, from byte {offset}")]
    TrailingBytes {
        /// Where the extra bytes start.
        offset: usize,
        /// How many there are.
        count: usize,
    },
    /// A management-plane message that is not valid JSON for its type.
    #[error("malformed JSON message: {message}")]
    Json {
        /// serde_json's description, with line and column.
        message: String,
    },
}

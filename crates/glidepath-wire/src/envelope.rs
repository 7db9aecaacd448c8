//! The binary envelope (data plane): encoding and validating decoding.
//!
//! One function, `write_envelope` (in `envelope/encode.rs`), describes the layout; it runs twice per
//! encoding, first into a byte counter (to size the buffer exactly) and then into the
//! buffer, so the size and the bytes cannot disagree. The decoder reads the same
//! fields in the same order and checks every byte; `docs/wire-format.md` is the
//! specification both follow.
//!
//! The layout's shared parts live here (the [`BodyKind`] table, the header, the tags
//! both directions use); `envelope/encode.rs` writes, `envelope/decode.rs` reads.

mod decode;
mod encode;

#[cfg(doc)]
use glidepath_core::Envelope;
use glidepath_core::{Body, FederateHandle, Notification, OwnershipNotice};

pub use decode::{decode_envelope, decode_envelope_bytes, decode_header};
pub use encode::{encode_envelope, encode_envelope_into, encoded_len};

/// The first byte of every envelope, `'G'`: it tells a glidepath envelope from other
/// bytes before the version is looked at.
pub const MAGIC: u8 = 0x47;
/// The envelope layout version this build writes and the only one it reads.
pub const VERSION: u8 = 8;
/// Bytes before the sender: magic, version, kind.
const FIXED_HEADER_LEN: usize = 3;

/// The body kind byte (third byte of an envelope): which [`Body`] variant follows.
///
/// Data kinds are `0x01..=0x0a`; notifications of the federation execution
/// (`Body::Exec`) are `0x10..=0x15`, one kind per [`Notification`] variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum BodyKind {
    /// [`Body::Register`].
    Register = 0x01,
    /// [`Body::Update`].
    Update = 0x02,
    /// [`Body::Interaction`].
    Interaction = 0x03,
    /// [`Body::Delete`].
    Delete = 0x04,
    /// [`Body::RequestUpdate`].
    RequestUpdate = 0x05,
    /// [`Body::TimeStatus`].
    TimeStatus = 0x06,
    /// [`Body::Restored`] (a restore marker).
    Restored = 0x07,
    /// [`Body::UpdateRegions`] (version 8).
    UpdateRegions = 0x08,
    /// [`Body::ScopeAdvisory`] (version 8).
    ScopeAdvisory = 0x09,
    /// [`Body::ScopeAnswered`] (version 8).
    ScopeAnswered = 0x0a,
    /// [`Notification::FederateJoined`].
    FederateJoined = 0x10,
    /// [`Notification::FederateResigned`].
    FederateResigned = 0x11,
    /// [`Notification::AnnounceSynchronizationPoint`].
    AnnounceSynchronizationPoint = 0x12,
    /// [`Notification::FederationSynchronized`].
    FederationSynchronized = 0x13,
    /// [`Notification::Ownership`] (version 3).
    Ownership = 0x14,
    /// [`Notification::Save`]: its [`glidepath_core::SaveNotice`] as CBOR.
    Save = 0x15,
    /// [`Notification::FederateLost`] (version 7, session 16).
    FederateLost = 0x16,
}

impl BodyKind {
    /// The kind of a body.
    pub fn of(body: &Body) -> BodyKind {
        match body {
            Body::Register { .. } => BodyKind::Register,
            Body::Update { .. } => BodyKind::Update,
            Body::Interaction { .. } => BodyKind::Interaction,
            Body::Delete { .. } => BodyKind::Delete,
            Body::RequestUpdate { .. } => BodyKind::RequestUpdate,
            Body::TimeStatus(_) => BodyKind::TimeStatus,
            Body::Restored { .. } => BodyKind::Restored,
            Body::UpdateRegions { .. } => BodyKind::UpdateRegions,
            Body::ScopeAdvisory { .. } => BodyKind::ScopeAdvisory,
            Body::ScopeAnswered { .. } => BodyKind::ScopeAnswered,
            Body::Exec(Notification::FederateJoined { .. }) => BodyKind::FederateJoined,
            Body::Exec(Notification::FederateResigned { .. }) => BodyKind::FederateResigned,
            Body::Exec(Notification::FederateLost { .. }) => BodyKind::FederateLost,
            Body::Exec(Notification::AnnounceSynchronizationPoint { .. }) => {
                BodyKind::AnnounceSynchronizationPoint
            }
            Body::Exec(Notification::FederationSynchronized { .. }) => {
                BodyKind::FederationSynchronized
            }
            Body::Exec(Notification::Ownership { .. }) => BodyKind::Ownership,
            Body::Exec(Notification::Save(_)) => BodyKind::Save,
        }
    }

    /// The kind a byte stands for; `None` for bytes no kind uses in this version.
    pub fn from_byte(byte: u8) -> Option<BodyKind> {
        Some(match byte {
            0x01 => BodyKind::Register,
            0x02 => BodyKind::Update,
            0x03 => BodyKind::Interaction,
            0x04 => BodyKind::Delete,
            0x05 => BodyKind::RequestUpdate,
            0x06 => BodyKind::TimeStatus,
            0x07 => BodyKind::Restored,
            0x08 => BodyKind::UpdateRegions,
            0x09 => BodyKind::ScopeAdvisory,
            0x0a => BodyKind::ScopeAnswered,
            0x10 => BodyKind::FederateJoined,
            0x11 => BodyKind::FederateResigned,
            0x12 => BodyKind::AnnounceSynchronizationPoint,
            0x13 => BodyKind::FederationSynchronized,
            0x14 => BodyKind::Ownership,
            0x15 => BodyKind::Save,
            0x16 => BodyKind::FederateLost,
            _ => return None,
        })
    }
}

/// The fields in front of every envelope body, readable without decoding the body.
///
/// A transport can use it to drop its own echoes or to check a sender's `seq` for
/// gaps before paying for a full decode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EnvelopeHeader {
    /// Which body follows.
    pub kind: BodyKind,
    /// [`Envelope::sender`].
    pub sender: FederateHandle,
    /// [`Envelope::seq`].
    pub seq: u64,
    /// [`Envelope::publish_time_ns`].
    pub publish_time_ns: u64,
    /// Where the body starts in the input.
    pub body_offset: usize,
}

/// The representation tag of a time or interval: `1` a float (IEEE double), `2` an
/// integer (`i64`), each in eight bytes; the compact forms of version 7: `3` a float
/// with a whole value of at most 2^53 in magnitude (not −0.0) as a zigzag varint, `4`
/// float +infinity and `5` float −infinity (no bytes), `6` an integer as a zigzag
/// varint; `0` in an `opt_time` means "no time".
const TIME_FLOAT: u8 = 1;
const TIME_INTEGER: u8 = 2;
const TIME_FLOAT_WHOLE: u8 = 3;
const TIME_FLOAT_PLUS_INFINITY: u8 = 4;
const TIME_FLOAT_MINUS_INFINITY: u8 = 5;
const TIME_INTEGER_VARINT: u8 = 6;
/// One past the largest representation tag.
const TIME_TAGS: u8 = 7;
/// The largest magnitude a whole float may have in the compact form: every integer
/// up to it is exactly an `f64`.
const FLOAT_WHOLE_MAX: f64 = 9_007_199_254_740_992.0;

/// The one tag a time or interval is written with: the shortest form that keeps its
/// value and representation exactly (a varint form only while it takes at most
/// eight bytes). The decoder refuses any other, so every value has one encoding.
fn canonical_time_tag(v: glidepath_core::TimeValue) -> u8 {
    use crate::varint::{len, zigzag_encode};
    match v {
        glidepath_core::TimeValue::Integer(i) if len(zigzag_encode(i)) <= 8 => TIME_INTEGER_VARINT,
        glidepath_core::TimeValue::Integer(_) => TIME_INTEGER,
        glidepath_core::TimeValue::Float(f) if f == f64::INFINITY => TIME_FLOAT_PLUS_INFINITY,
        glidepath_core::TimeValue::Float(f) if f == f64::NEG_INFINITY => TIME_FLOAT_MINUS_INFINITY,
        glidepath_core::TimeValue::Float(f)
            if f.fract() == 0.0
                && f.abs() <= FLOAT_WHOLE_MAX
                && !(f == 0.0 && f.is_sign_negative())
                && len(zigzag_encode(f as i64)) <= 8 =>
        {
            TIME_FLOAT_WHOLE
        }
        glidepath_core::TimeValue::Float(_) => TIME_FLOAT,
    }
}

/// The notice tags of an ownership notification, in [`OwnershipNotice`] order.
const OWNERSHIP_NOTICES: [OwnershipNotice; 6] = [
    OwnershipNotice::Offered,
    OwnershipNotice::ConfirmDivestiture,
    OwnershipNotice::ReleaseRequested,
    OwnershipNotice::Acquired,
    OwnershipNotice::Unavailable,
    OwnershipNotice::Removed,
];

//! Decoding: the validating [`Reader`] over the input, the body decoder, and the
//! public decoders. Every byte is checked; malformed input is an error, never a panic.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use glidepath_core::{
    Advance, AttributeHandle, Body, DimensionHandle, Envelope, Extent, FederateHandle,
    InteractionClassHandle, LogicalTime, LogicalTimeInterval, Notification, ObjectClassHandle,
    ObjectInstanceHandle, OrderType, ParameterHandle, RangeBounds, RegionSet, Regulation,
    TimeStatus, TransportationType,
};

use super::{
    canonical_time_tag, BodyKind, EnvelopeHeader, FIXED_HEADER_LEN, FLOAT_WHOLE_MAX, MAGIC,
    OWNERSHIP_NOTICES, TIME_FLOAT_MINUS_INFINITY, TIME_FLOAT_PLUS_INFINITY, TIME_FLOAT_WHOLE,
    TIME_INTEGER, TIME_INTEGER_VARINT, TIME_TAGS, VERSION,
};
use crate::varint::{self, VarintError};
use crate::WireError;

/// A cursor over the input that checks every read against what remains.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

type Res<T> = Result<T, WireError>;

impl<'a> Reader<'a> {
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    fn take(&mut self, n: usize, field: &'static str) -> Res<&'a [u8]> {
        if n > self.remaining() {
            return Err(WireError::Truncated {
                offset: self.pos,
                field,
            });
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    fn u8(&mut self, field: &'static str) -> Res<u8> {
        match self.buf.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                Ok(b)
            }
            None => Err(WireError::Truncated {
                offset: self.pos,
                field,
            }),
        }
    }

    /// A one-byte tag that must be below `count`.
    fn tag(&mut self, count: u8, field: &'static str) -> Res<u8> {
        let offset = self.pos;
        let value = self.u8(field)?;
        if value < count {
            Ok(value)
        } else {
            Err(WireError::InvalidTag {
                offset,
                field,
                value,
            })
        }
    }

    fn bool(&mut self, field: &'static str) -> Res<bool> {
        Ok(self.tag(2, field)? == 1)
    }

    fn order(&mut self) -> Res<OrderType> {
        Ok(match self.tag(2, "order")? {
            0 => OrderType::Receive,
            _ => OrderType::TimeStamp,
        })
    }

    fn transport(&mut self) -> Res<TransportationType> {
        Ok(match self.tag(2, "transportation")? {
            0 => TransportationType::Reliable,
            _ => TransportationType::BestEffort,
        })
    }

    #[inline]
    fn varint(&mut self, field: &'static str) -> Res<u64> {
        let offset = self.pos;
        match varint::get(&self.buf[self.pos..]) {
            Ok((v, n)) => {
                self.pos += n;
                Ok(v)
            }
            Err(VarintError::Truncated) => Err(WireError::Truncated { offset, field }),
            Err(VarintError::Overflow) => Err(WireError::VarintOverflow { offset, field }),
            Err(VarintError::NonCanonical) => Err(WireError::NonCanonicalVarint { offset, field }),
        }
    }

    /// A varint that must fit 32 bits (handles other than object instances).
    #[inline]
    fn varint_u32(&mut self, field: &'static str) -> Res<u32> {
        let offset = self.pos;
        let v = self.varint(field)?;
        u32::try_from(v).map_err(|_| WireError::VarintOverflow { offset, field })
    }

    /// An element count, checked against the input: each element takes at least
    /// `min_element_len` bytes, so a count the input cannot hold is refused before
    /// anything is allocated for it.
    fn count(&mut self, min_element_len: usize, field: &'static str) -> Res<usize> {
        let offset = self.pos;
        let n = self.varint(field)?;
        let remaining = self.remaining();
        if n > (remaining / min_element_len) as u64 {
            return Err(WireError::LengthBeyondInput {
                offset,
                field,
                length: n,
                remaining,
            });
        }
        Ok(n as usize)
    }

    /// A varint length and that many bytes; returns their range in the input.
    #[inline]
    fn bytes_range(&mut self, field: &'static str) -> Res<Range<usize>> {
        let n = self.count(1, field)?;
        let start = self.pos;
        self.pos += n;
        Ok(start..self.pos)
    }

    fn str(&mut self, field: &'static str) -> Res<&'a str> {
        let range = self.bytes_range(field)?;
        let offset = range.start;
        std::str::from_utf8(&self.buf[range]).map_err(|_| WireError::InvalidUtf8 { offset, field })
    }

    #[inline]
    fn u64_le(&mut self, field: &'static str) -> Res<u64> {
        let b = self.take(8, field)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    /// The value of a time whose representation tag `tag` (1 to 6) was just read;
    /// refused unless `tag` is the one its value is written with.
    fn time_after_tag(&mut self, tag: u8, field: &'static str) -> Res<LogicalTime> {
        let offset = self.pos;
        let time = self.time_value(tag, field)?;
        if canonical_time_tag(time.into()) != tag {
            return Err(WireError::NonCanonicalTime {
                offset: offset - 1,
                field,
            });
        }
        Ok(time)
    }

    fn time_value(&mut self, tag: u8, field: &'static str) -> Res<LogicalTime> {
        let offset = self.pos;
        match tag {
            TIME_INTEGER => Ok(LogicalTime::from_i64(self.u64_le(field)? as i64)),
            TIME_INTEGER_VARINT => Ok(LogicalTime::from_i64(varint::zigzag_decode(
                self.varint(field)?,
            ))),
            TIME_FLOAT_PLUS_INFINITY => Ok(LogicalTime::new(f64::INFINITY).expect("not NaN")),
            TIME_FLOAT_MINUS_INFINITY => Ok(LogicalTime::new(f64::NEG_INFINITY).expect("not NaN")),
            TIME_FLOAT_WHOLE => {
                let whole = varint::zigzag_decode(self.varint(field)?);
                // Beyond 2^53 the integer would not be the float it claims to be
                // (checked on the integer: converted, 2^53 + 1 would round to 2^53).
                if whole.unsigned_abs() > FLOAT_WHOLE_MAX as u64 {
                    return Err(WireError::InvalidTime { offset, field });
                }
                Ok(LogicalTime::new(whole as f64).expect("a whole number is not NaN"))
            }
            _ => {
                let bits = self.u64_le(field)?;
                LogicalTime::new(f64::from_bits(bits))
                    .ok_or(WireError::InvalidTime { offset, field })
            }
        }
    }

    /// A representation tag (1 to 6) and the value in that form.
    fn time(&mut self, field: &'static str) -> Res<LogicalTime> {
        let offset = self.pos;
        match self.tag(TIME_TAGS, field)? {
            0 => Err(WireError::InvalidTag {
                offset,
                field,
                value: 0,
            }),
            tag => self.time_after_tag(tag, field),
        }
    }

    fn interval(&mut self, field: &'static str) -> Res<LogicalTimeInterval> {
        let offset = self.pos;
        let t = self.time(field)?;
        let interval = if t.is_integer() {
            t.as_i64().and_then(LogicalTimeInterval::from_i64)
        } else {
            LogicalTimeInterval::new(t.as_f64())
        };
        interval.ok_or(WireError::InvalidTime {
            offset: offset + 1,
            field,
        })
    }

    fn opt_time(&mut self) -> Res<Option<LogicalTime>> {
        match self.tag(TIME_TAGS, "time representation")? {
            0 => Ok(None),
            tag => Ok(Some(self.time_after_tag(tag, "time")?)),
        }
    }

    fn federate(&mut self, field: &'static str) -> Res<FederateHandle> {
        Ok(FederateHandle(self.varint_u32(field)?))
    }

    /// A count and that many federate handles (each at least one byte).
    fn federates(&mut self, field: &'static str) -> Res<Vec<FederateHandle>> {
        let n = self.count(1, field)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(self.federate(field)?);
        }
        Ok(v)
    }

    fn header(&mut self) -> Res<EnvelopeHeader> {
        let magic = self.u8("magic")?;
        if magic != MAGIC {
            return Err(WireError::BadMagic { found: magic });
        }
        let version = self.u8("version")?;
        if version != VERSION {
            return Err(WireError::UnsupportedVersion {
                version: u64::from(version),
                supported: u64::from(VERSION),
            });
        }
        let kind_byte = self.u8("kind")?;
        let kind =
            BodyKind::from_byte(kind_byte).ok_or(WireError::UnknownKind { kind: kind_byte })?;
        debug_assert_eq!(self.pos, FIXED_HEADER_LEN);
        let sender = self.federate("sender")?;
        let seq = self.varint("seq")?;
        let publish_time_ns = self.varint("publish_time_ns")?;
        Ok(EnvelopeHeader {
            kind,
            sender,
            seq,
            publish_time_ns,
            body_offset: self.pos,
        })
    }
}

/// Decodes only the header of an envelope (see [`EnvelopeHeader`]); the body is not
/// looked at, so a later full decode may still fail.
pub fn decode_header(bytes: &[u8]) -> Result<EnvelopeHeader, WireError> {
    Reader { buf: bytes, pos: 0 }.header()
}

/// Handles and payloads, sliced out of `src` without copying.
fn values<H>(
    r: &mut Reader<'_>,
    src: &Bytes,
    field: &'static str,
    handle: fn(u32) -> H,
) -> Res<Arc<[(H, Bytes)]>> {
    // Each value takes at least a one-byte handle and a one-byte length.
    let n = r.count(2, field)?;
    let mut v = Vec::with_capacity(n);
    for _ in 0..n {
        let h = handle(r.varint_u32(field)?);
        let range = r.bytes_range(field)?;
        v.push((h, src.slice(range)));
    }
    Ok(v.into())
}

/// A region set: `None` for a count of 0 (the default region). Each range takes at
/// least three bytes and each region at least one, counted before allocating; the
/// ranges of a region must have strictly increasing dimensions and `lower <= upper`.
fn regions(r: &mut Reader<'_>) -> Res<Option<RegionSet>> {
    let n = r.count(1, "regions")?;
    let mut extents = Vec::with_capacity(n);
    for _ in 0..n {
        let offset = r.pos;
        let m = r.count(3, "region")?;
        let mut ranges = Vec::with_capacity(m);
        for _ in 0..m {
            let d = DimensionHandle(r.varint_u32("region dimension")?);
            let lower = r.varint("range lower bound")?;
            let upper = r.varint("range upper bound")?;
            ranges.push((d, RangeBounds::new(lower, upper)));
        }
        extents.push(Extent::from_sorted(ranges).ok_or(WireError::InvalidRegion { offset })?);
    }
    Ok(RegionSet::new(extents))
}

fn body(r: &mut Reader<'_>, src: &Bytes, kind: BodyKind) -> Res<Body> {
    Ok(match kind {
        BodyKind::Register => Body::Register {
            instance: ObjectInstanceHandle(r.varint("instance")?),
            class: ObjectClassHandle(r.varint_u32("object class")?),
            name: Arc::from(r.str("instance name")?),
        },
        BodyKind::Update => {
            let instance = ObjectInstanceHandle(r.varint("instance")?);
            let class = ObjectClassHandle(r.varint_u32("object class")?);
            let regions = regions(r)?;
            let order = r.order()?;
            let transport = r.transport()?;
            let time = r.opt_time()?;
            let tag = src.slice(r.bytes_range("tag")?);
            let values = values(r, src, "attribute values", AttributeHandle)?;
            Body::Update {
                instance,
                class,
                values,
                tag,
                order,
                transport,
                time,
                regions,
            }
        }
        BodyKind::Interaction => {
            let class = InteractionClassHandle(r.varint_u32("interaction class")?);
            let regions = regions(r)?;
            let order = r.order()?;
            let transport = r.transport()?;
            let time = r.opt_time()?;
            let tag = src.slice(r.bytes_range("tag")?);
            let values = values(r, src, "parameter values", ParameterHandle)?;
            Body::Interaction {
                class,
                values,
                tag,
                order,
                transport,
                time,
                regions,
            }
        }
        BodyKind::Delete => {
            let instance = ObjectInstanceHandle(r.varint("instance")?);
            let class = ObjectClassHandle(r.varint_u32("object class")?);
            let order = r.order()?;
            let time = r.opt_time()?;
            let tag = src.slice(r.bytes_range("tag")?);
            Body::Delete {
                instance,
                class,
                tag,
                order,
                time,
            }
        }
        BodyKind::RequestUpdate => {
            let instance = if r.bool("instance presence")? {
                Some(ObjectInstanceHandle(r.varint("instance")?))
            } else {
                None
            };
            let class = ObjectClassHandle(r.varint_u32("object class")?);
            let regions = regions(r)?;
            let n = r.count(1, "attributes")?;
            let mut attributes = Vec::with_capacity(n);
            for _ in 0..n {
                attributes.push(AttributeHandle(r.varint_u32("attributes")?));
            }
            let tag = src.slice(r.bytes_range("tag")?);
            Body::RequestUpdate {
                instance,
                class,
                attributes: attributes.into(),
                tag,
                regions,
            }
        }
        BodyKind::TimeStatus => {
            let regulation = match r.tag(3, "regulation")? {
                0 => Regulation::Off,
                1 => Regulation::Pending,
                _ => Regulation::On,
            };
            let constrained = r.bool("constrained")?;
            let logical_time = r.time("logical_time")?;
            let last_grant_available = r.bool("last_grant_available")?;
            let lookahead = r.interval("lookahead")?;
            let delivered_up_to = r.time("delivered_up_to")?;
            let promise = r.time("promise")?;
            let advance = match r.tag(3, "advance")? {
                0 => Advance::Idle,
                1 => Advance::Tar {
                    time: r.time("advance time")?,
                    available: r.bool("advance available")?,
                },
                _ => Advance::Ner {
                    time: r.time("advance time")?,
                    next: r.time("advance next")?,
                    available: r.bool("advance available")?,
                },
            };
            let last_tso_seq = r.varint("last_tso_seq")?;
            // Each entry takes at least a one-byte federate and a one-byte seq.
            let n = r.count(2, "seen")?;
            let mut seen = Vec::with_capacity(n);
            for _ in 0..n {
                seen.push((r.federate("seen federate")?, r.varint("seen seq")?));
            }
            let finished_below = r.federate("finished_below")?;
            let resigned = r.bool("resigned")?;
            Body::TimeStatus(Arc::new(TimeStatus {
                regulation,
                constrained,
                logical_time,
                last_grant_available,
                lookahead,
                delivered_up_to,
                promise,
                advance,
                last_tso_seq,
                seen: seen.into(),
                finished_below,
                resigned,
            }))
        }
        BodyKind::FederateJoined => Body::Exec(Notification::FederateJoined {
            federate: r.federate("federate")?,
            name: r.str("federate name")?.to_owned(),
            federate_type: r.str("federate type")?.to_owned(),
        }),
        BodyKind::Restored => Body::Restored {
            epoch: r.varint("restore epoch")?,
        },
        BodyKind::UpdateRegions => {
            let instance = ObjectInstanceHandle(r.varint("instance")?);
            let class = ObjectClassHandle(r.varint_u32("object class")?);
            let n = r.count(1, "attributes")?;
            let mut attributes = Vec::with_capacity(n);
            for _ in 0..n {
                attributes.push(AttributeHandle(r.varint_u32("attributes")?));
            }
            let owned = r.bool("owned")?;
            let offset = r.pos;
            let new = regions(r)?;
            if !owned && new.is_some() {
                // Attributes no longer owned have no update regions.
                return Err(WireError::InvalidRegion { offset });
            }
            let route = regions(r)?;
            Body::UpdateRegions {
                instance,
                class,
                attributes: attributes.into(),
                regions: new,
                owned,
                route,
            }
        }
        BodyKind::ScopeAnswered => Body::ScopeAnswered {
            first: r.varint("first answering seq")?,
        },
        BodyKind::ScopeAdvisory => {
            let flags = r.tag(4, "scope advisory")?;
            Body::ScopeAdvisory {
                on: flags & 1 != 0,
                announce: flags & 2 != 0,
            }
        }
        BodyKind::Save => {
            let range = r.bytes_range("save notice")?;
            let offset = range.start;
            let bytes = &src[range];
            let notice: glidepath_core::SaveNotice = glidepath_core::save::decode_snapshot(bytes)
                .map_err(|e| WireError::InvalidSaveNotice {
                offset,
                reason: e.to_string(),
            })?;
            // CBOR has several spellings of one value (tags, byte-string keys); like
            // every other field, a notice has one encoding, the one we write.
            if glidepath_core::save::encode_snapshot(&notice) != bytes {
                return Err(WireError::InvalidSaveNotice {
                    offset,
                    reason: "not in its canonical encoding".into(),
                });
            }
            Body::Exec(Notification::Save(notice))
        }
        BodyKind::FederateResigned => Body::Exec(Notification::FederateResigned {
            federate: r.federate("federate")?,
        }),
        BodyKind::FederateLost => Body::Exec(Notification::FederateLost {
            federate: r.federate("federate")?,
        }),
        BodyKind::AnnounceSynchronizationPoint => {
            Body::Exec(Notification::AnnounceSynchronizationPoint {
                label: r.str("label")?.to_owned(),
                tag: src.slice(r.bytes_range("tag")?),
                targets: r.federates("targets")?.into(),
            })
        }
        BodyKind::FederationSynchronized => Body::Exec(Notification::FederationSynchronized {
            label: r.str("label")?.to_owned(),
            failed: r.federates("failed")?,
            targets: r.federates("targets")?.into(),
        }),
        BodyKind::Ownership => {
            let notice = OWNERSHIP_NOTICES
                [usize::from(r.tag(OWNERSHIP_NOTICES.len() as u8, "ownership notice")?)];
            let federate = r.federate("federate")?;
            let instance = ObjectInstanceHandle(r.varint("instance")?);
            let n = r.count(1, "attributes")?;
            let mut attributes = Vec::with_capacity(n);
            for _ in 0..n {
                attributes.push(AttributeHandle(r.varint_u32("attributes")?));
            }
            let tag = src.slice(r.bytes_range("tag")?);
            Body::Exec(Notification::Ownership {
                notice,
                federate,
                instance,
                attributes,
                tag,
            })
        }
    })
}

/// Decodes an envelope without copying: attribute and parameter values, tags and
/// other byte fields are slices of `bytes` (so they keep its buffer alive).
///
/// Every byte is validated; malformed input of any kind is an error, never a panic,
/// and nothing is allocated beyond a small multiple of the input's length.
pub fn decode_envelope_bytes(bytes: Bytes) -> Result<Envelope, WireError> {
    let mut r = Reader {
        buf: &bytes,
        pos: 0,
    };
    let h = r.header()?;
    let body = body(&mut r, &bytes, h.kind)?;
    if r.remaining() != 0 {
        return Err(WireError::TrailingBytes {
            offset: r.pos,
            count: r.remaining(),
        });
    }
    Ok(Envelope {
        sender: h.sender,
        seq: h.seq,
        publish_time_ns: h.publish_time_ns,
        body,
    })
}

/// Decodes an envelope from borrowed bytes; any malformed input is an error, never a panic.
///
/// The input is copied once into one buffer that the decoded byte fields share; use
/// [`decode_envelope_bytes`] when the input already is a [`Bytes`].
pub fn decode_envelope(bytes: &[u8]) -> Result<Envelope, WireError> {
    decode_envelope_bytes(Bytes::copy_from_slice(bytes))
}

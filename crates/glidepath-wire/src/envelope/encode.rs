//! Encoding: the [`Sink`] the layout writes to (a byte counter or a buffer),
//! [`write_envelope`] (the layout itself), the time writers, and the public encoders.

use bytes::{BufMut, Bytes, BytesMut};
use glidepath_core::{
    Advance, AttributeHandle, Body, Envelope, FederateHandle, LogicalTime, LogicalTimeInterval,
    Notification, OrderType, ParameterHandle, RegionSet, Regulation, TimeValue, TransportationType,
};

use super::{
    canonical_time_tag, BodyKind, MAGIC, OWNERSHIP_NOTICES, TIME_FLOAT, TIME_FLOAT_WHOLE,
    TIME_INTEGER, TIME_INTEGER_VARINT, VERSION,
};
use crate::varint;

/// Where the layout writes to: a byte counter or a buffer.
trait Sink {
    fn u8(&mut self, v: u8);
    fn varint(&mut self, v: u64);
    fn u64_le(&mut self, v: u64);
    /// A varint length followed by the bytes.
    fn bytes(&mut self, b: &[u8]);
}

/// Counts the bytes the layout would write.
struct Counter(usize);

impl Sink for Counter {
    #[inline]
    fn u8(&mut self, _: u8) {
        self.0 += 1;
    }
    #[inline]
    fn varint(&mut self, v: u64) {
        self.0 += varint::len(v);
    }
    #[inline]
    fn u64_le(&mut self, _: u64) {
        self.0 += 8;
    }
    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        self.0 += varint::len(b.len() as u64) + b.len();
    }
}

impl Sink for BytesMut {
    #[inline]
    fn u8(&mut self, v: u8) {
        self.put_u8(v);
    }
    #[inline]
    fn varint(&mut self, v: u64) {
        varint::put(self, v);
    }
    #[inline]
    fn u64_le(&mut self, v: u64) {
        self.put_u64_le(v);
    }
    #[inline]
    fn bytes(&mut self, b: &[u8]) {
        varint::put(self, b.len() as u64);
        self.put_slice(b);
    }
}

fn order_tag(o: OrderType) -> u8 {
    match o {
        OrderType::Receive => 0,
        OrderType::TimeStamp => 1,
    }
}

fn transport_tag(t: TransportationType) -> u8 {
    match t {
        TransportationType::Reliable => 0,
        TransportationType::BestEffort => 1,
    }
}

fn regulation_tag(r: Regulation) -> u8 {
    match r {
        Regulation::Off => 0,
        Regulation::Pending => 1,
        Regulation::On => 2,
    }
}
/// A time or interval: its representation tag and its value in the shortest form
/// that keeps it exactly ([`canonical_time_tag`]).
#[inline]
fn write_value(s: &mut impl Sink, v: TimeValue) {
    let tag = canonical_time_tag(v);
    s.u8(tag);
    match (tag, v) {
        (TIME_INTEGER_VARINT, TimeValue::Integer(i)) => s.varint(varint::zigzag_encode(i)),
        (TIME_INTEGER, TimeValue::Integer(i)) => s.u64_le(i as u64),
        (TIME_FLOAT_WHOLE, TimeValue::Float(f)) => s.varint(varint::zigzag_encode(f as i64)),
        (TIME_FLOAT, TimeValue::Float(f)) => s.u64_le(f.to_bits()),
        // The infinities are the tag alone.
        _ => {}
    }
}

#[inline]
fn write_time(s: &mut impl Sink, t: LogicalTime) {
    write_value(s, t.into());
}

#[inline]
fn write_interval(s: &mut impl Sink, t: LogicalTimeInterval) {
    write_value(s, t.into());
}

#[inline]
fn write_opt_time(s: &mut impl Sink, t: Option<LogicalTime>) {
    match t {
        None => s.u8(0),
        Some(t) => write_time(s, t),
    }
}

#[inline]
fn write_values<H: Copy>(s: &mut impl Sink, values: &[(H, Bytes)], handle: impl Fn(H) -> u32) {
    s.varint(values.len() as u64);
    for (h, v) in values {
        s.varint(u64::from(handle(*h)));
        s.bytes(v);
    }
}

/// A region set (version 4): the count of regions (0: the default region), then each
/// region as its count of ranges and each range as dimension, lower, upper.
fn write_regions(s: &mut impl Sink, regions: Option<&RegionSet>) {
    let Some(set) = regions else {
        s.varint(0);
        return;
    };
    s.varint(set.extents().len() as u64);
    for extent in set.extents() {
        s.varint(extent.ranges().len() as u64);
        for (d, r) in extent.ranges() {
            s.varint(u64::from(d.0));
            s.varint(r.lower);
            s.varint(r.upper);
        }
    }
}

fn write_federates(s: &mut impl Sink, federates: &[FederateHandle]) {
    s.varint(federates.len() as u64);
    for f in federates {
        s.varint(u64::from(f.0));
    }
}

/// The whole layout, header and body, in order.
#[inline]
fn write_envelope(s: &mut impl Sink, e: &Envelope) {
    s.u8(MAGIC);
    s.u8(VERSION);
    s.u8(BodyKind::of(&e.body) as u8);
    s.varint(u64::from(e.sender.0));
    s.varint(e.seq);
    s.varint(e.publish_time_ns);
    match &e.body {
        Body::Register {
            instance,
            class,
            name,
        } => {
            s.varint(instance.0);
            s.varint(u64::from(class.0));
            s.bytes(name.as_bytes());
        }
        Body::Update {
            instance,
            class,
            values,
            tag,
            order,
            transport,
            time,
            regions,
        } => {
            s.varint(instance.0);
            s.varint(u64::from(class.0));
            write_regions(s, regions.as_ref());
            s.u8(order_tag(*order));
            s.u8(transport_tag(*transport));
            write_opt_time(s, *time);
            s.bytes(tag);
            write_values(s, values, |h: AttributeHandle| h.0);
        }
        Body::Interaction {
            class,
            values,
            tag,
            order,
            transport,
            time,
            regions,
        } => {
            s.varint(u64::from(class.0));
            write_regions(s, regions.as_ref());
            s.u8(order_tag(*order));
            s.u8(transport_tag(*transport));
            write_opt_time(s, *time);
            s.bytes(tag);
            write_values(s, values, |h: ParameterHandle| h.0);
        }
        Body::Delete {
            instance,
            class,
            tag,
            order,
            time,
        } => {
            s.varint(instance.0);
            s.varint(u64::from(class.0));
            s.u8(order_tag(*order));
            write_opt_time(s, *time);
            s.bytes(tag);
        }
        Body::RequestUpdate {
            instance,
            class,
            attributes,
            tag,
            regions,
        } => {
            match instance {
                None => s.u8(0),
                Some(i) => {
                    s.u8(1);
                    s.varint(i.0);
                }
            }
            s.varint(u64::from(class.0));
            write_regions(s, regions.as_ref());
            s.varint(attributes.len() as u64);
            for a in attributes.iter() {
                s.varint(u64::from(a.0));
            }
            s.bytes(tag);
        }
        Body::TimeStatus(t) => {
            s.u8(regulation_tag(t.regulation));
            s.u8(u8::from(t.constrained));
            write_time(s, t.logical_time);
            s.u8(u8::from(t.last_grant_available));
            write_interval(s, t.lookahead);
            write_time(s, t.delivered_up_to);
            write_time(s, t.promise);
            match t.advance {
                Advance::Idle => s.u8(0),
                Advance::Tar { time, available } => {
                    s.u8(1);
                    write_time(s, time);
                    s.u8(u8::from(available));
                }
                Advance::Ner {
                    time,
                    next,
                    available,
                } => {
                    s.u8(2);
                    write_time(s, time);
                    write_time(s, next);
                    s.u8(u8::from(available));
                }
            }
            s.varint(t.last_tso_seq);
            s.varint(t.seen.len() as u64);
            for (f, seq) in t.seen.iter() {
                s.varint(u64::from(f.0));
                s.varint(*seq);
            }
            s.varint(u64::from(t.finished_below.0));
            s.u8(u8::from(t.resigned));
        }
        Body::Exec(Notification::FederateJoined {
            federate,
            name,
            federate_type,
        }) => {
            s.varint(u64::from(federate.0));
            s.bytes(name.as_bytes());
            s.bytes(federate_type.as_bytes());
        }
        Body::Exec(
            Notification::FederateResigned { federate } | Notification::FederateLost { federate },
        ) => {
            s.varint(u64::from(federate.0));
        }
        Body::Exec(Notification::AnnounceSynchronizationPoint {
            label,
            tag,
            targets,
        }) => {
            s.bytes(label.as_bytes());
            s.bytes(tag);
            write_federates(s, targets);
        }
        Body::Exec(Notification::FederationSynchronized {
            label,
            failed,
            targets,
        }) => {
            s.bytes(label.as_bytes());
            write_federates(s, failed);
            write_federates(s, targets);
        }
        Body::Exec(Notification::Ownership {
            notice,
            federate,
            instance,
            attributes,
            tag,
        }) => {
            let n = OWNERSHIP_NOTICES
                .iter()
                .position(|x| x == notice)
                .expect("every notice has a tag");
            s.u8(n as u8);
            s.varint(u64::from(federate.0));
            s.varint(instance.0);
            s.varint(attributes.len() as u64);
            for a in attributes {
                s.varint(u64::from(a.0));
            }
            s.bytes(tag);
        }
        Body::Restored { epoch } => s.varint(*epoch),
        Body::UpdateRegions {
            instance,
            class,
            attributes,
            regions,
            owned,
            route,
        } => {
            s.varint(instance.0);
            s.varint(u64::from(class.0));
            s.varint(attributes.len() as u64);
            for a in attributes.iter() {
                s.varint(u64::from(a.0));
            }
            s.u8(u8::from(*owned));
            write_regions(s, regions.as_ref());
            write_regions(s, route.as_ref());
        }
        Body::ScopeAdvisory { on, announce } => s.u8(u8::from(*on) | u8::from(*announce) << 1),
        Body::ScopeAnswered { first } => s.varint(*first),
        Body::Exec(Notification::Save(notice)) => {
            // The notice is rare and its restore state opaque bytes: CBOR keeps the
            // layout in one place (`glidepath_core::save`) instead of a field table.
            s.bytes(&glidepath_core::save::encode_snapshot(notice));
        }
    }
}

/// The exact number of bytes [`encode_envelope`] produces for `envelope`.
pub fn encoded_len(envelope: &Envelope) -> usize {
    let mut c = Counter(0);
    write_envelope(&mut c, envelope);
    c.0
}

/// Appends the encoding of `envelope` to `out`, reserving exactly the space it needs
/// (for callers that frame several things in one buffer, like the encoder chain).
pub fn encode_envelope_into(envelope: &Envelope, out: &mut BytesMut) {
    let len = encoded_len(envelope);
    out.reserve(len);
    let start = out.len();
    write_envelope(out, envelope);
    debug_assert_eq!(out.len() - start, len, "size pass and write pass disagree");
}

/// Encodes an envelope in the versioned binary layout (`docs/wire-format.md`).
///
/// One exact-size allocation; no serde on this path.
pub fn encode_envelope(envelope: &Envelope) -> Bytes {
    let mut out = BytesMut::with_capacity(encoded_len(envelope));
    write_envelope(&mut out, envelope);
    out.freeze()
}

//! The management object model (MOM): the MIM's `HLAmanager.HLAfederate` and
//! `HLAmanager.HLAfederation` object instances that the RTI itself publishes, the
//! handles reserved for them, and the IEEE 1516.2 encodings of their values.
//!
//! The instances are the RTI's, not a federate's: no federate registers them, the
//! executive does not list them, and no save keeps them. Every local RTI component
//! answers for its own federate's instance, and the member with the smallest handle
//! for the federation's. A subscriber discovers them from the membership it already
//! follows (a member's instance when it joins or when the class is subscribed,
//! removed when it resigns), so they cost nothing until somebody subscribes.
//! Their handles carry [`MOM_INSTANCE_BIT`], which the executive never hands out.

use bytes::{BufMut, Bytes, BytesMut};

use crate::types::{FederateHandle, ObjectInstanceHandle};
use crate::{AttributeHandle, Fom, InteractionClassHandle, ObjectClassHandle, ParameterHandle};
use glidepath_fom::TimeRepresentation;

/// The bit set in every MOM instance handle (the executive counts from 1 and never
/// gets near it).
pub const MOM_INSTANCE_BIT: u64 = 1 << 63;

/// The federation's `HLAmanager.HLAfederation` instance.
pub const FEDERATION_INSTANCE: ObjectInstanceHandle =
    ObjectInstanceHandle(MOM_INSTANCE_BIT | (1 << 62));

/// The `HLAmanager.HLAfederate` instance of a federate.
pub fn federate_instance(federate: FederateHandle) -> ObjectInstanceHandle {
    ObjectInstanceHandle(MOM_INSTANCE_BIT | u64::from(federate.0))
}

/// True for the handles of MOM instances.
pub fn is_mom_instance(instance: ObjectInstanceHandle) -> bool {
    instance.0 & MOM_INSTANCE_BIT != 0
}

/// The federate whose `HLAmanager.HLAfederate` instance this is.
pub fn instance_federate(instance: ObjectInstanceHandle) -> Option<FederateHandle> {
    (is_mom_instance(instance) && instance != FEDERATION_INSTANCE)
        .then_some(FederateHandle(instance.0 as u32))
}

/// The name of a federate's MOM instance (`HLAfederate.<name>`).
pub fn federate_instance_name(federate_name: &str) -> String {
    format!("HLAfederate.{federate_name}")
}

/// This RTI's version, as `HLARTIversion` reports it.
pub const RTI_VERSION: &str = concat!("glidepath ", env!("CARGO_PKG_VERSION"));

/// The MOM's classes, attributes and parameters in one merged FOM, looked up once by
/// their MIM names. `None` from [`MomHandles::resolve`] when the FOM lacks them.
#[derive(Clone, Debug)]
pub struct MomHandles {
    /// `HLAmanager.HLAfederate`.
    pub federate_class: ObjectClassHandle,
    /// Its attributes, in the order of [`FEDERATE_ATTRIBUTES`].
    pub federate_attributes: Vec<AttributeHandle>,
    /// `HLAmanager.HLAfederation`.
    pub federation_class: ObjectClassHandle,
    /// Its attributes, in the order of [`FEDERATION_ATTRIBUTES`].
    pub federation_attributes: Vec<AttributeHandle>,
    /// `HLAmanager.HLAfederate.HLAadjust.HLAsetTiming`.
    pub set_timing: InteractionClassHandle,
    /// Its `HLAfederate` parameter (the federate it adjusts).
    pub set_timing_federate: ParameterHandle,
    /// Its `HLAreportPeriod` parameter (seconds; 0 stops periodic reports).
    pub set_timing_period: ParameterHandle,
}

/// The `HLAmanager.HLAfederate` attributes this RTI reports, in a fixed order.
pub const FEDERATE_ATTRIBUTES: [&str; 22] = [
    "HLAfederateHandle",
    "HLAfederateName",
    "HLAfederateType",
    "HLAfederateHost",
    "HLARTIversion",
    "HLAtimeConstrained",
    "HLAtimeRegulating",
    "HLAasynchronousDelivery",
    "HLAfederateState",
    "HLAtimeManagerState",
    "HLAlogicalTime",
    "HLAlookahead",
    "HLAGALT",
    "HLALITS",
    "HLATSOlength",
    "HLAreflectionsReceived",
    "HLAupdatesSent",
    "HLAinteractionsReceived",
    "HLAinteractionsSent",
    "HLAobjectInstancesRegistered",
    "HLAobjectInstancesDiscovered",
    "HLAobjectInstancesDeleted",
];

/// The `HLAmanager.HLAfederation` attributes this RTI reports, in a fixed order.
pub const FEDERATION_ATTRIBUTES: [&str; 5] = [
    "HLAfederationName",
    "HLAfederatesInFederation",
    "HLARTIversion",
    "HLAFOMmoduleDesignatorList",
    "HLAtimeImplementationName",
];

impl MomHandles {
    /// Looks the MOM up in a merged FOM (every FOM glidepath merges starts with the
    /// standard MIM; a hand-built one may not).
    pub fn resolve(fom: &Fom) -> Option<MomHandles> {
        let federate_class = fom.object_class_by_name("HLAmanager.HLAfederate")?;
        let federation_class = fom.object_class_by_name("HLAmanager.HLAfederation")?;
        let attributes = |class, names: &[&str]| -> Option<Vec<AttributeHandle>> {
            names
                .iter()
                .map(|n| fom.attribute_by_name(class, n))
                .collect()
        };
        let set_timing =
            fom.interaction_class_by_name("HLAmanager.HLAfederate.HLAadjust.HLAsetTiming")?;
        Some(MomHandles {
            federate_class,
            federate_attributes: attributes(federate_class, &FEDERATE_ATTRIBUTES)?,
            federation_class,
            federation_attributes: attributes(federation_class, &FEDERATION_ATTRIBUTES)?,
            set_timing,
            set_timing_federate: fom.parameter_by_name(set_timing, "HLAfederate")?,
            set_timing_period: fom.parameter_by_name(set_timing, "HLAreportPeriod")?,
        })
    }
}

/// `HLAfederateState` (MIM enumeration).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FederateState {
    /// `ActiveFederate` (1).
    Active = 1,
    /// `FederateSaveInProgress` (3).
    SaveInProgress = 3,
    /// `FederateRestoreInProgress` (5).
    RestoreInProgress = 5,
}

/// A value decoded from its MOM attribute, as [`decode_federate_attribute`] reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum MomValue {
    /// `HLAunicodeString`.
    Text(String),
    /// `HLAboolean`.
    Bool(bool),
    /// `HLAcount`, `HLAmsec`, `HLAseconds` and the enumerations (`HLAinteger32BE`).
    Int(i32),
    /// `HLAhandle` of a federate.
    Federate(FederateHandle),
    /// `HLAhandleList` of federates.
    Federates(Vec<FederateHandle>),
    /// `HLAlogicalTime` / `HLAtimeInterval` of a float federation.
    Float(f64),
    /// `HLAlogicalTime` / `HLAtimeInterval` of an integer federation.
    Integer(i64),
    /// `HLAmoduleDesignatorList`.
    Texts(Vec<String>),
}

impl std::fmt::Display for MomValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MomValue::Text(s) => f.write_str(s),
            MomValue::Bool(b) => write!(f, "{b}"),
            MomValue::Int(i) => write!(f, "{i}"),
            MomValue::Federate(h) => write!(f, "{}", h.0),
            MomValue::Federates(v) => {
                let v: Vec<String> = v.iter().map(|h| h.0.to_string()).collect();
                f.write_str(&v.join(","))
            }
            MomValue::Float(x) => write!(f, "{x}"),
            MomValue::Integer(i) => write!(f, "{i}"),
            MomValue::Texts(v) => f.write_str(&v.join(",")),
        }
    }
}

/// Why a MOM value could not be decoded.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MomDecodeError {
    /// Fewer bytes than the encoding needs.
    #[error("{what}: {len} bytes, too short")]
    Truncated { what: &'static str, len: usize },
    /// A count or a code unit that no valid encoding has.
    #[error("{what}: {reason}")]
    Invalid { what: &'static str, reason: String },
}

// ----- IEEE 1516.2 encodings (HLAinteger32BE counts, 4-byte alignment) ----------------

/// `HLAinteger32BE`.
pub fn encode_i32(value: i32) -> Bytes {
    Bytes::copy_from_slice(&value.to_be_bytes())
}

/// `HLAcount`: a count, saturated at `i32::MAX`.
pub fn encode_count(value: u64) -> Bytes {
    encode_i32(i32::try_from(value).unwrap_or(i32::MAX))
}

/// `HLAboolean` (`HLAtrue` 1, `HLAfalse` 0).
pub fn encode_bool(value: bool) -> Bytes {
    encode_i32(i32::from(value))
}

fn put_unicode_string(buf: &mut BytesMut, s: &str) {
    let units: Vec<u16> = s.encode_utf16().collect();
    buf.put_i32(units.len() as i32);
    for u in units {
        buf.put_u16(u);
    }
}

/// `HLAunicodeString`: the number of UTF-16 code units, then the units big-endian.
pub fn encode_unicode_string(s: &str) -> Bytes {
    let mut buf = BytesMut::with_capacity(4 + 2 * s.len());
    put_unicode_string(&mut buf, s);
    buf.freeze()
}

fn put_federate_handle(buf: &mut BytesMut, h: FederateHandle) {
    buf.put_i32(4);
    buf.put_u32(h.0);
}

/// `HLAhandle` of a federate: a variable array of 4 bytes, the handle big-endian.
pub fn encode_federate_handle(h: FederateHandle) -> Bytes {
    let mut buf = BytesMut::with_capacity(8);
    put_federate_handle(&mut buf, h);
    buf.freeze()
}

/// `HLAhandleList` of federates (each element already on a 4-byte boundary).
pub fn encode_federate_handles(handles: &[FederateHandle]) -> Bytes {
    let mut buf = BytesMut::with_capacity(4 + 8 * handles.len());
    buf.put_i32(handles.len() as i32);
    for h in handles {
        put_federate_handle(&mut buf, *h);
    }
    buf.freeze()
}

/// A variable array of `HLAunicodeString`s (`HLAmoduleDesignatorList`): each element
/// starts on a 4-byte boundary, so an odd number of code units is padded.
pub fn encode_unicode_strings(strings: &[String]) -> Bytes {
    let mut buf = BytesMut::new();
    buf.put_i32(strings.len() as i32);
    for (i, s) in strings.iter().enumerate() {
        if i > 0 {
            while !buf.len().is_multiple_of(4) {
                buf.put_u8(0);
            }
        }
        put_unicode_string(&mut buf, s);
    }
    buf.freeze()
}

/// `HLAlogicalTime` / `HLAtimeInterval`: a variable array of bytes holding the time
/// in the federation's representation (`HLAfloat64Time`: float64 big-endian;
/// `HLAinteger64Time`: int64 big-endian).
pub fn encode_time(representation: TimeRepresentation, value: f64, integer: Option<i64>) -> Bytes {
    let mut buf = BytesMut::with_capacity(12);
    buf.put_i32(8);
    match (representation, integer) {
        (TimeRepresentation::Integer64, Some(i)) => buf.put_i64(i),
        (TimeRepresentation::Integer64, None) => {
            buf.put_i64(if value > 0.0 { i64::MAX } else { i64::MIN })
        }
        (TimeRepresentation::Float64, _) => buf.put_f64(value),
    }
    buf.freeze()
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8], what: &'static str) -> Self {
        Reader { bytes, at: 0, what }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], MomDecodeError> {
        let end = self.at.checked_add(n).filter(|e| *e <= self.bytes.len());
        let Some(end) = end else {
            return Err(MomDecodeError::Truncated {
                what: self.what,
                len: self.bytes.len(),
            });
        };
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn i32(&mut self) -> Result<i32, MomDecodeError> {
        Ok(i32::from_be_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn count(&mut self) -> Result<usize, MomDecodeError> {
        let n = self.i32()?;
        let n = usize::try_from(n).map_err(|_| MomDecodeError::Invalid {
            what: self.what,
            reason: format!("negative count {n}"),
        })?;
        // Every element takes at least one byte: a larger count is a lie.
        if n > self.bytes.len() - self.at {
            return Err(MomDecodeError::Truncated {
                what: self.what,
                len: self.bytes.len(),
            });
        }
        Ok(n)
    }
    fn align4(&mut self) -> Result<(), MomDecodeError> {
        let pad = (4 - self.at % 4) % 4;
        self.take(pad).map(|_| ())
    }
    fn unicode_string(&mut self) -> Result<String, MomDecodeError> {
        let n = self.i32()?;
        let n = usize::try_from(n).map_err(|_| MomDecodeError::Invalid {
            what: self.what,
            reason: format!("negative length {n}"),
        })?;
        let raw = self.take(n.checked_mul(2).ok_or(MomDecodeError::Truncated {
            what: self.what,
            len: self.bytes.len(),
        })?)?;
        let units: Vec<u16> = raw
            .chunks_exact(2)
            .map(|c| u16::from_be_bytes([c[0], c[1]]))
            .collect();
        String::from_utf16(&units).map_err(|e| MomDecodeError::Invalid {
            what: self.what,
            reason: e.to_string(),
        })
    }
    fn federate_handle(&mut self) -> Result<FederateHandle, MomDecodeError> {
        let n = self.count()?;
        let raw = self.take(n)?;
        let raw: [u8; 4] = raw.try_into().map_err(|_| MomDecodeError::Invalid {
            what: self.what,
            reason: format!("a federate handle of {n} bytes (glidepath's are 4)"),
        })?;
        Ok(FederateHandle(u32::from_be_bytes(raw)))
    }
    fn done(self) -> Result<(), MomDecodeError> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(MomDecodeError::Invalid {
                what: self.what,
                reason: format!("{} bytes left over", self.bytes.len() - self.at),
            })
        }
    }
}

/// Decodes an `HLAhandle` of a federate (the `HLAfederate` parameter of the MOM's
/// adjust interactions).
pub fn decode_federate_handle(bytes: &[u8]) -> Result<FederateHandle, MomDecodeError> {
    let mut r = Reader::new(bytes, "HLAhandle");
    let h = r.federate_handle()?;
    r.done()?;
    Ok(h)
}

/// Decodes an `HLAinteger32BE` (counts, seconds, milliseconds, enumerations).
pub fn decode_i32(bytes: &[u8]) -> Result<i32, MomDecodeError> {
    let mut r = Reader::new(bytes, "HLAinteger32BE");
    let v = r.i32()?;
    r.done()?;
    Ok(v)
}

/// Decodes a value of one of the MOM attributes glidepath reports, by its MIM name
/// (an `HLAmanager.HLAfederate` or `HLAmanager.HLAfederation` attribute).
pub fn decode_attribute(
    name: &str,
    representation: TimeRepresentation,
    bytes: &[u8],
) -> Result<MomValue, MomDecodeError> {
    let what = "MOM attribute";
    let mut r = Reader::new(bytes, what);
    let value = match name {
        "HLAfederateHandle" => MomValue::Federate(r.federate_handle()?),
        "HLAfederateName"
        | "HLAfederateType"
        | "HLAfederateHost"
        | "HLARTIversion"
        | "HLAfederationName"
        | "HLAtimeImplementationName" => MomValue::Text(r.unicode_string()?),
        "HLAtimeConstrained" | "HLAtimeRegulating" | "HLAasynchronousDelivery" => {
            MomValue::Bool(r.i32()? != 0)
        }
        "HLAlogicalTime" | "HLAlookahead" | "HLAGALT" | "HLALITS" => {
            let n = r.count()?;
            let raw: [u8; 8] = r.take(n)?.try_into().map_err(|_| MomDecodeError::Invalid {
                what,
                reason: format!("a time of {n} bytes (8 expected)"),
            })?;
            match representation {
                TimeRepresentation::Float64 => MomValue::Float(f64::from_be_bytes(raw)),
                TimeRepresentation::Integer64 => MomValue::Integer(i64::from_be_bytes(raw)),
            }
        }
        "HLAfederatesInFederation" => {
            let n = r.count()?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(r.federate_handle()?);
            }
            MomValue::Federates(v)
        }
        "HLAFOMmoduleDesignatorList" => {
            let n = r.count()?;
            let mut v = Vec::with_capacity(n);
            for i in 0..n {
                if i > 0 {
                    r.align4()?;
                }
                v.push(r.unicode_string()?);
            }
            MomValue::Texts(v)
        }
        _ => MomValue::Int(r.i32()?),
    };
    r.done()?;
    Ok(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_reserved_and_round_trip() {
        let i = federate_instance(FederateHandle(7));
        assert!(is_mom_instance(i));
        assert_eq!(instance_federate(i), Some(FederateHandle(7)));
        assert!(is_mom_instance(FEDERATION_INSTANCE));
        assert_eq!(instance_federate(FEDERATION_INSTANCE), None);
        assert!(!is_mom_instance(ObjectInstanceHandle(1)));
    }

    #[test]
    fn encodings_follow_1516_2() {
        assert_eq!(
            &encode_unicode_string("ab")[..],
            &[0, 0, 0, 2, 0, b'a', 0, b'b']
        );
        assert_eq!(&encode_bool(true)[..], &[0, 0, 0, 1]);
        assert_eq!(&encode_count(u64::MAX)[..], &i32::MAX.to_be_bytes());
        assert_eq!(
            &encode_federate_handle(FederateHandle(258))[..],
            &[0, 0, 0, 4, 0, 0, 1, 2]
        );
        // Two strings of one code unit: the second starts on a 4-byte boundary.
        let list = encode_unicode_strings(&["a".into(), "b".into()]);
        assert_eq!(
            &list[..],
            &[0, 0, 0, 2, 0, 0, 0, 1, 0, b'a', 0, 0, 0, 0, 0, 1, 0, b'b']
        );
    }

    #[test]
    fn values_decode_back() {
        let rep = TimeRepresentation::Float64;
        let d = |n, b: Bytes| decode_attribute(n, rep, &b).unwrap();
        assert_eq!(
            d("HLAfederateName", encode_unicode_string("pilot é")),
            MomValue::Text("pilot é".into())
        );
        assert_eq!(
            d(
                "HLAfederateHandle",
                encode_federate_handle(FederateHandle(3))
            ),
            MomValue::Federate(FederateHandle(3))
        );
        assert_eq!(
            d("HLAlogicalTime", encode_time(rep, 2.5, None)),
            MomValue::Float(2.5)
        );
        assert_eq!(
            decode_attribute(
                "HLAGALT",
                TimeRepresentation::Integer64,
                &encode_time(TimeRepresentation::Integer64, 9.0, Some(9))
            )
            .unwrap(),
            MomValue::Integer(9)
        );
        let handles = [FederateHandle(1), FederateHandle(5)];
        assert_eq!(
            d(
                "HLAfederatesInFederation",
                encode_federate_handles(&handles)
            ),
            MomValue::Federates(handles.to_vec())
        );
        let names = vec!["abc".to_string(), "de".to_string(), "f".to_string()];
        assert_eq!(
            d("HLAFOMmoduleDesignatorList", encode_unicode_strings(&names)),
            MomValue::Texts(names)
        );
        assert_eq!(d("HLAupdatesSent", encode_count(42)), MomValue::Int(42));
    }

    #[test]
    fn hostile_bytes_are_errors_not_panics() {
        let rep = TimeRepresentation::Float64;
        for bad in [
            &[][..],
            &[0, 0, 0][..],
            &[0x7f, 0xff, 0xff, 0xff, 0, 1][..],
            &[0, 0, 0, 1, 0xd8, 0x00][..],
        ] {
            for name in FEDERATE_ATTRIBUTES
                .iter()
                .chain(FEDERATION_ATTRIBUTES.iter())
            {
                assert!(decode_attribute(name, rep, bad).is_err(), "{name} {bad:?}");
            }
        }
        assert!(decode_federate_handle(&[0, 0, 0, 2, 1, 2]).is_err());
        assert!(decode_i32(&[0, 0, 0, 1, 9]).is_err());
    }
}

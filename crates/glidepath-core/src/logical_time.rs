//! Logical time and lookahead in the federation's representation: the standard's
//! `HLAfloat64Time` or `HLAinteger64Time`, chosen per federation by its FOM.
//!
//! How times compare. There is no epsilon anywhere: two times are compared exactly,
//! by their numeric values (a total order; `-0.0` sorts before `0.0`; the two
//! infinities bound everything). Within one federation every time has the
//! federation's representation, except `±infinity`, which both representations use
//! for "no bound". Integer times add exactly (saturating at the ends of `i64`); float
//! times add as IEEE doubles do, so a float federation whose times and lookaheads are
//! multiples of a power of two (0.5, 0.25, ...) is exact too, and one that adds 0.1
//! repeatedly sees the double's rounding, as its own arithmetic would. The only time
//! the RTI makes up is "just after `t`" ([`LogicalTime::next_after`]), used when a
//! zero-lookahead federate becomes regulating: `t + 1` for integers, the next double
//! for floats.

use std::cmp::Ordering;
use std::fmt;

pub use glidepath_fom::TimeRepresentation;

/// The largest integer magnitude a double holds exactly (2^53).
const F64_EXACT_INT: i64 = 1 << 53;

#[derive(Clone, Copy, Debug)]
enum Repr {
    Float(f64),
    Integer(i64),
}

/// A point on the federation time axis (`HLAfloat64Time` or `HLAinteger64Time`).
///
/// NaN is not a time: constructors reject it, so the ordering is total. Negative
/// and positive infinity are allowed; GALT is `+inf` when nobody regulates.
#[derive(Clone, Copy)]
pub struct LogicalTime(Repr);

/// A time or interval as a user gives it, before it is checked against the
/// federation's representation: `10.5`, `10_i64`, or an existing time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TimeValue {
    /// A float, as `HLAfloat64Time` federations use.
    Float(f64),
    /// An integer, as `HLAinteger64Time` federations use.
    Integer(i64),
}

impl TimeValue {
    /// True for a float NaN.
    pub fn is_nan(self) -> bool {
        matches!(self, TimeValue::Float(v) if v.is_nan())
    }
}

impl From<f64> for TimeValue {
    fn from(v: f64) -> Self {
        TimeValue::Float(v)
    }
}
impl From<i64> for TimeValue {
    fn from(v: i64) -> Self {
        TimeValue::Integer(v)
    }
}
impl From<LogicalTime> for TimeValue {
    fn from(t: LogicalTime) -> Self {
        match t.0 {
            Repr::Float(v) => TimeValue::Float(v),
            Repr::Integer(v) => TimeValue::Integer(v),
        }
    }
}
impl From<LogicalTimeInterval> for TimeValue {
    fn from(t: LogicalTimeInterval) -> Self {
        match t.0 {
            Repr::Float(v) => TimeValue::Float(v),
            Repr::Integer(v) => TimeValue::Integer(v),
        }
    }
}
impl fmt::Display for TimeValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeValue::Float(v) => write!(f, "{v}"),
            TimeValue::Integer(v) => write!(f, "{v}"),
        }
    }
}

impl LogicalTime {
    /// Time zero (as a float; equal to the integer zero).
    pub const ZERO: LogicalTime = LogicalTime(Repr::Float(0.0));
    /// Later than every finite time, in both representations.
    pub const INFINITY: LogicalTime = LogicalTime(Repr::Float(f64::INFINITY));
    /// Earlier than every finite time, in both representations.
    pub const NEG_INFINITY: LogicalTime = LogicalTime(Repr::Float(f64::NEG_INFINITY));

    /// A float time (`HLAfloat64Time`); `None` for NaN.
    pub fn new(value: f64) -> Option<LogicalTime> {
        (!value.is_nan()).then_some(LogicalTime(Repr::Float(value)))
    }
    /// An integer time (`HLAinteger64Time`).
    pub const fn from_i64(value: i64) -> LogicalTime {
        LogicalTime(Repr::Integer(value))
    }
    /// Zero in a representation.
    pub fn zero(representation: TimeRepresentation) -> LogicalTime {
        match representation {
            TimeRepresentation::Float64 => LogicalTime(Repr::Float(0.0)),
            TimeRepresentation::Integer64 => LogicalTime(Repr::Integer(0)),
        }
    }
    /// `value` as a time of `representation`; `None` when it is not one: NaN, a
    /// fraction or infinity for an integer federation, or an integer a double cannot
    /// hold exactly (beyond 2^53) for a float federation.
    pub fn in_representation(
        representation: TimeRepresentation,
        value: impl Into<TimeValue>,
    ) -> Option<LogicalTime> {
        match (representation, value.into()) {
            (TimeRepresentation::Float64, TimeValue::Float(v)) => LogicalTime::new(v),
            (TimeRepresentation::Float64, TimeValue::Integer(v)) => {
                (v.abs() <= F64_EXACT_INT).then_some(LogicalTime(Repr::Float(v as f64)))
            }
            (TimeRepresentation::Integer64, TimeValue::Integer(v)) => {
                Some(LogicalTime(Repr::Integer(v)))
            }
            (TimeRepresentation::Integer64, TimeValue::Float(v)) => {
                float_as_i64(v).map(|i| LogicalTime(Repr::Integer(i)))
            }
        }
    }
    /// The time as a float (integers beyond 2^53 are rounded).
    pub fn as_f64(self) -> f64 {
        match self.0 {
            Repr::Float(v) => v,
            Repr::Integer(v) => v as f64,
        }
    }
    /// The time as an integer, when it is one (an integer time, or a float with no
    /// fractional part inside the range of `i64`).
    pub fn as_i64(self) -> Option<i64> {
        match self.0 {
            Repr::Integer(v) => Some(v),
            Repr::Float(v) => float_as_i64(v),
        }
    }
    /// True for an integer time.
    pub fn is_integer(self) -> bool {
        matches!(self.0, Repr::Integer(_))
    }
    /// `self + interval`: exact for integers (saturating at the ends of `i64`), a
    /// double's sum for floats; infinity stays infinity.
    #[inline]
    pub fn plus(self, interval: LogicalTimeInterval) -> LogicalTime {
        match (self.0, interval.0) {
            (Repr::Integer(a), Repr::Integer(b)) => LogicalTime(Repr::Integer(a.saturating_add(b))),
            (Repr::Float(a), Repr::Float(b)) => LogicalTime(Repr::Float(a + b)),
            // Only "no bound" meets the other representation in one federation.
            (a, b) => LogicalTime(Repr::Float(repr_f64(a) + repr_f64(b))),
        }
    }
    /// The smallest time strictly after `self`: `t + 1` for integers, the next
    /// double for floats.
    pub fn next_after(self) -> LogicalTime {
        match self.0 {
            Repr::Integer(v) => LogicalTime(Repr::Integer(v.saturating_add(1))),
            Repr::Float(v) => LogicalTime(Repr::Float(v.next_up())),
        }
    }
    /// The smaller of two times.
    #[inline]
    pub fn min(self, other: LogicalTime) -> LogicalTime {
        if other < self {
            other
        } else {
            self
        }
    }
    /// The larger of two times.
    #[inline]
    pub fn max(self, other: LogicalTime) -> LogicalTime {
        if other > self {
            other
        } else {
            self
        }
    }
}

fn repr_f64(r: Repr) -> f64 {
    match r {
        Repr::Float(v) => v,
        Repr::Integer(v) => v as f64,
    }
}

/// A float with no fractional part inside the range of `i64`, as that integer.
fn float_as_i64(v: f64) -> Option<i64> {
    // 2^63 is exactly representable; every double below it and at or above -2^63
    // with no fraction converts exactly.
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    (v.fract() == 0.0 && (-TWO_63..TWO_63).contains(&v)).then_some(v as i64)
}

/// Exact comparison of an integer with a (non-NaN) double.
fn cmp_int_float(i: i64, f: f64) -> Ordering {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if f >= TWO_63 {
        return Ordering::Less;
    }
    if f < -TWO_63 {
        return Ordering::Greater;
    }
    let whole = f.trunc();
    match i.cmp(&(whole as i64)) {
        Ordering::Equal => 0.0_f64.total_cmp(&(f - whole)).then(Ordering::Equal),
        other => other,
    }
}

#[inline]
fn cmp_repr(a: Repr, b: Repr) -> Ordering {
    match (a, b) {
        (Repr::Float(x), Repr::Float(y)) => x.total_cmp(&y),
        (Repr::Integer(x), Repr::Integer(y)) => x.cmp(&y),
        (Repr::Integer(x), Repr::Float(y)) => cmp_int_float(x, y),
        (Repr::Float(x), Repr::Integer(y)) => cmp_int_float(y, x).reverse(),
    }
}

impl PartialEq for LogicalTime {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for LogicalTime {}
impl PartialOrd for LogicalTime {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for LogicalTime {
    #[inline]
    fn cmp(&self, other: &Self) -> Ordering {
        cmp_repr(self.0, other.0)
    }
}
impl fmt::Display for LogicalTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Float(v) => write!(f, "{v}"),
            Repr::Integer(v) => write!(f, "{v}"),
        }
    }
}
impl fmt::Debug for LogicalTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Float(v) => write!(f, "LogicalTime({v:?})"),
            Repr::Integer(v) => write!(f, "LogicalTime({v}i64)"),
        }
    }
}
impl From<u32> for LogicalTime {
    fn from(v: u32) -> Self {
        LogicalTime(Repr::Float(v as f64))
    }
}

/// A non-negative duration on the time axis (lookahead), in the federation's
/// representation (`HLAfloat64Interval` or `HLAinteger64Interval`).
#[derive(Clone, Copy)]
pub struct LogicalTimeInterval(Repr);

impl LogicalTimeInterval {
    /// Zero lookahead: allowed, and usable through the "available" advance variants.
    pub const ZERO: LogicalTimeInterval = LogicalTimeInterval(Repr::Float(0.0));
    /// A float interval; `None` for NaN, negative or infinite values.
    pub fn new(value: f64) -> Option<LogicalTimeInterval> {
        (value.is_finite() && value >= 0.0).then_some(LogicalTimeInterval(Repr::Float(value)))
    }
    /// An integer interval; `None` when negative.
    pub fn from_i64(value: i64) -> Option<LogicalTimeInterval> {
        (value >= 0).then_some(LogicalTimeInterval(Repr::Integer(value)))
    }
    /// Zero in a representation.
    pub fn zero(representation: TimeRepresentation) -> LogicalTimeInterval {
        match representation {
            TimeRepresentation::Float64 => LogicalTimeInterval(Repr::Float(0.0)),
            TimeRepresentation::Integer64 => LogicalTimeInterval(Repr::Integer(0)),
        }
    }
    /// `value` as an interval of `representation`; `None` when it is not one
    /// (negative, NaN, infinite, a fraction for integers, beyond 2^53 for floats).
    pub fn in_representation(
        representation: TimeRepresentation,
        value: impl Into<TimeValue>,
    ) -> Option<LogicalTimeInterval> {
        let t = LogicalTime::in_representation(representation, value)?;
        match t.0 {
            Repr::Float(v) => LogicalTimeInterval::new(v),
            Repr::Integer(v) => LogicalTimeInterval::from_i64(v),
        }
    }
    /// The interval as a float (integers beyond 2^53 are rounded).
    pub fn as_f64(self) -> f64 {
        repr_f64(self.0)
    }
    /// The interval as an integer, when it is one.
    pub fn as_i64(self) -> Option<i64> {
        LogicalTime(self.0).as_i64()
    }
    /// True for an integer interval.
    pub fn is_integer(self) -> bool {
        matches!(self.0, Repr::Integer(_))
    }
}
impl PartialEq for LogicalTimeInterval {
    fn eq(&self, other: &Self) -> bool {
        cmp_repr(self.0, other.0) == Ordering::Equal
    }
}
impl PartialOrd for LogicalTimeInterval {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(cmp_repr(self.0, other.0))
    }
}
impl fmt::Display for LogicalTimeInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", LogicalTime(self.0))
    }
}
impl fmt::Debug for LogicalTimeInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Float(v) => write!(f, "LogicalTimeInterval({v:?})"),
            Repr::Integer(v) => write!(f, "LogicalTimeInterval({v}i64)"),
        }
    }
}

// Serialization. JSON has no NaN or infinities (serde_json would write `null` and fail
// to read it back), so human-readable formats write the infinities as the strings
// "Infinity" and "-Infinity". A float is written as a float (`10.0`), an integer time
// as an integer (`10`), so the representation survives a round trip. Every format
// rejects NaN on decode, and an interval must be finite and non-negative.
impl serde::Serialize for LogicalTime {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Repr::Integer(v) => serializer.serialize_i64(v),
            Repr::Float(v) if !serializer.is_human_readable() || v.is_finite() => {
                serializer.serialize_f64(v)
            }
            Repr::Float(v) if v > 0.0 => serializer.serialize_str("Infinity"),
            Repr::Float(_) => serializer.serialize_str("-Infinity"),
        }
    }
}

struct TimeVisitor;
impl serde::de::Visitor<'_> for TimeVisitor {
    type Value = LogicalTime;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a logical time: a number (not NaN), \"Infinity\" or \"-Infinity\"")
    }
    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<LogicalTime, E> {
        LogicalTime::new(v).ok_or_else(|| E::custom("NaN is not a logical time"))
    }
    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<LogicalTime, E> {
        Ok(LogicalTime::from_i64(v))
    }
    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<LogicalTime, E> {
        i64::try_from(v)
            .map(LogicalTime::from_i64)
            .map_err(|_| E::custom(format_args!("{v} is beyond an integer logical time")))
    }
    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<LogicalTime, E> {
        match v {
            "Infinity" => Ok(LogicalTime::INFINITY),
            "-Infinity" => Ok(LogicalTime::NEG_INFINITY),
            _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
        }
    }
}

impl<'de> serde::Deserialize<'de> for LogicalTime {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(TimeVisitor)
        } else {
            deserializer.deserialize_f64(TimeVisitor)
        }
    }
}

impl serde::Serialize for LogicalTimeInterval {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Repr::Integer(v) => serializer.serialize_i64(v),
            Repr::Float(v) => serializer.serialize_f64(v),
        }
    }
}

impl<'de> serde::Deserialize<'de> for LogicalTimeInterval {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let t = <LogicalTime as serde::Deserialize>::deserialize(deserializer)?;
        let interval = match t.0 {
            Repr::Float(v) => LogicalTimeInterval::new(v),
            Repr::Integer(v) => LogicalTimeInterval::from_i64(v),
        };
        interval.ok_or_else(|| {
            serde::de::Error::custom(format_args!(
                "{t} is not a logical time interval (finite and >= 0)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_and_floats_compare_exactly() {
        let i = LogicalTime::from_i64;
        let f = |v| LogicalTime::new(v).unwrap();
        assert_eq!(i(3), f(3.0));
        assert!(i(3) < f(3.5) && f(2.5) < i(3));
        assert!(i(-3) > f(-3.5));
        // Beyond 2^53 a double cannot tell these integers apart; the comparison can.
        let big = (1_i64 << 53) + 1;
        assert!(i(big) > f((1_i64 << 53) as f64));
        assert!(i(i64::MAX) < LogicalTime::INFINITY);
        assert!(i(i64::MIN) > LogicalTime::NEG_INFINITY);
        assert!(f(-0.0) < f(0.0), "total order of doubles");
    }

    #[test]
    fn integer_arithmetic_is_exact_and_saturates() {
        let t = LogicalTime::from_i64((1 << 60) + 1);
        let la = LogicalTimeInterval::from_i64(3).unwrap();
        assert_eq!(t.plus(la).as_i64(), Some((1 << 60) + 4));
        assert_eq!(
            LogicalTime::from_i64(i64::MAX).plus(la).as_i64(),
            Some(i64::MAX)
        );
        assert_eq!(LogicalTime::from_i64(7).next_after().as_i64(), Some(8));
        assert_eq!(LogicalTime::INFINITY.plus(la), LogicalTime::INFINITY);
    }

    #[test]
    fn values_convert_only_when_representable() {
        use TimeRepresentation::*;
        assert_eq!(
            LogicalTime::in_representation(Integer64, 10.0).and_then(|t| t.as_i64()),
            Some(10)
        );
        assert!(LogicalTime::in_representation(Integer64, 10.5).is_none());
        assert!(LogicalTime::in_representation(Integer64, f64::INFINITY).is_none());
        assert!(LogicalTime::in_representation(Float64, f64::NAN).is_none());
        assert!(LogicalTime::in_representation(Float64, 1_i64 << 54).is_none());
        assert!(LogicalTime::in_representation(Integer64, 5_i64)
            .unwrap()
            .is_integer());
        assert!(LogicalTimeInterval::in_representation(Integer64, -1_i64).is_none());
        assert!(LogicalTimeInterval::in_representation(Float64, 0.5).is_some());
    }

    #[test]
    fn json_keeps_the_representation() {
        for t in [
            LogicalTime::from_i64(42),
            LogicalTime::new(42.0).unwrap(),
            LogicalTime::new(-0.5).unwrap(),
            LogicalTime::INFINITY,
        ] {
            let s = serde_json::to_string(&t).unwrap();
            let back: LogicalTime = serde_json::from_str(&s).unwrap();
            assert_eq!(back, t);
            assert_eq!(back.is_integer(), t.is_integer(), "{s}");
        }
    }
}

//! Handles and the logical time type shared by every service.

use std::cmp::Ordering;
use std::fmt;

/// A joined federate, unique within its federation execution for the execution's life.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct FederateHandle(pub u32);

impl FederateHandle {
    /// The sender handle used by the federation execution itself for its notifications.
    pub const EXECUTIVE: FederateHandle = FederateHandle(u32::MAX);
}

impl fmt::Display for FederateHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::EXECUTIVE {
            write!(f, "executive")
        } else {
            write!(f, "federate#{}", self.0)
        }
    }
}

/// A federation execution, as numbered by the process or server hosting it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct FederationId(pub u64);

/// An object instance, unique within its federation execution.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct ObjectInstanceHandle(pub u64);

impl fmt::Display for ObjectInstanceHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "object#{}", self.0)
    }
}

/// A point on the federation time axis (the standard's `HLAfloat64Time`).
///
/// NaN is not a time: constructors reject it, so the ordering is total. Negative
/// and positive infinity are allowed; GALT is `+inf` when nobody regulates.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LogicalTime(f64);

impl LogicalTime {
    /// The initial time of every federate.
    pub const ZERO: LogicalTime = LogicalTime(0.0);
    /// Later than every finite time.
    pub const INFINITY: LogicalTime = LogicalTime(f64::INFINITY);
    /// Earlier than every finite time.
    pub const NEG_INFINITY: LogicalTime = LogicalTime(f64::NEG_INFINITY);

    /// A time from seconds (or whatever unit the federation agrees on); `None` for NaN.
    pub fn new(value: f64) -> Option<LogicalTime> {
        if value.is_nan() {
            None
        } else {
            Some(LogicalTime(value))
        }
    }
    /// The time as a float.
    pub fn as_f64(self) -> f64 {
        self.0
    }
    /// `self + interval`, saturating at infinity.
    pub fn plus(self, interval: LogicalTimeInterval) -> LogicalTime {
        LogicalTime(self.0 + interval.0)
    }
    /// The smallest time strictly after `self`.
    pub fn next_after(self) -> LogicalTime {
        LogicalTime(self.0.next_up())
    }
    /// The smaller of two times.
    pub fn min(self, other: LogicalTime) -> LogicalTime {
        if other < self {
            other
        } else {
            self
        }
    }
    /// The larger of two times.
    pub fn max(self, other: LogicalTime) -> LogicalTime {
        if other > self {
            other
        } else {
            self
        }
    }
}

impl Eq for LogicalTime {}
impl PartialOrd for LogicalTime {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for LogicalTime {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}
impl fmt::Display for LogicalTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}
impl From<u32> for LogicalTime {
    fn from(v: u32) -> Self {
        LogicalTime(v as f64)
    }
}

/// A non-negative duration on the time axis (lookahead).
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
pub struct LogicalTimeInterval(f64);

impl LogicalTimeInterval {
    /// Zero lookahead: allowed, and usable through the "available" advance variants.
    pub const ZERO: LogicalTimeInterval = LogicalTimeInterval(0.0);
    /// An interval; `None` for NaN, negative or infinite values.
    pub fn new(value: f64) -> Option<LogicalTimeInterval> {
        if value.is_finite() && value >= 0.0 {
            Some(LogicalTimeInterval(value))
        } else {
            None
        }
    }
    /// The interval as a float.
    pub fn as_f64(self) -> f64 {
        self.0
    }
}
impl fmt::Display for LogicalTimeInterval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

// Serialization of times. JSON has no NaN or infinities (serde_json would write `null`
// and fail to read it back), so human-readable formats write the infinities as the
// strings "Infinity" and "-Infinity"; every format rejects NaN on decode, and an
// interval must be finite and non-negative, exactly as the constructors require.
impl serde::Serialize for LogicalTime {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            v if !serializer.is_human_readable() || v.is_finite() => serializer.serialize_f64(v),
            v if v > 0.0 => serializer.serialize_str("Infinity"),
            _ => serializer.serialize_str("-Infinity"),
        }
    }
}

impl<'de> serde::Deserialize<'de> for LogicalTime {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = LogicalTime;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a logical time: a number (not NaN), \"Infinity\" or \"-Infinity\"")
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<LogicalTime, E> {
                LogicalTime::new(v).ok_or_else(|| E::custom("NaN is not a logical time"))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<LogicalTime, E> {
                Ok(LogicalTime(v as f64))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<LogicalTime, E> {
                Ok(LogicalTime(v as f64))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<LogicalTime, E> {
                match v {
                    "Infinity" => Ok(LogicalTime::INFINITY),
                    "-Infinity" => Ok(LogicalTime::NEG_INFINITY),
                    _ => Err(E::invalid_value(serde::de::Unexpected::Str(v), &self)),
                }
            }
        }
        if deserializer.is_human_readable() {
            deserializer.deserialize_any(Visitor)
        } else {
            deserializer.deserialize_f64(Visitor)
        }
    }
}

impl serde::Serialize for LogicalTimeInterval {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_f64(self.0)
    }
}

impl<'de> serde::Deserialize<'de> for LogicalTimeInterval {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let v = <f64 as serde::Deserialize>::deserialize(deserializer)?;
        LogicalTimeInterval::new(v).ok_or_else(|| {
            serde::de::Error::custom(format_args!(
                "{v} is not a logical time interval (finite and >= 0)"
            ))
        })
    }
}

/// What a federate asks the RTI to do with its objects when it resigns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ResignAction {
    /// Leave the objects registered but owned by nobody.
    UnconditionallyDivestAttributes,
    /// Delete every object the federate registered.
    DeleteObjects,
    /// Nothing to cancel without ownership management; behaves as `NoAction`.
    CancelPendingOwnershipAcquisitions,
    /// Delete the objects the federate may delete, divest the rest.
    DeleteObjectsThenDivest,
    /// Same as `DeleteObjectsThenDivest` until ownership management lands.
    CancelThenDeleteThenDivest,
    /// Fail with `FederateOwnsAttributes` if the federate still owns objects.
    NoAction,
}

/// When callbacks reach the federate (thesis section 2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProcessModel {
    /// Callbacks are queued and delivered only inside `evoke_callback` /
    /// `evoke_multiple_callbacks` (the thesis's `tick()`).
    Evoked,
    /// Callbacks are delivered on an RTI thread as soon as a message arrives
    /// (the thesis's asynchronous multithreaded model, Figure 4).
    Immediate,
}

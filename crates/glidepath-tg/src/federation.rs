//! The target generator's federation: its FOM (the air-traffic module, whose `Aircraft`
//! class carries the states, and the target-generator module, whose interactions carry
//! control), the handles every member resolves, the value encodings, and the error type.

use glidepath::{
    AttributeHandle, Bytes, Federate, Fom, FomError, FomModule, InteractionClassHandle, NameError,
    ObjectClassHandle, ParameterHandle, RtiError,
};

use crate::scenario::ScenarioError;
use crate::wire::WireError;

/// The air-traffic FOM module, compiled in.
const AIR_TRAFFIC_FOM: &str = include_str!("../../../foms/air-traffic.xml");
/// The target-generator FOM module, compiled in.
const TARGET_GENERATOR_FOM: &str = include_str!("../../../foms/target-generator.xml");

/// What can go wrong running the target generator.
#[derive(Debug, thiserror::Error)]
pub enum TgError {
    /// The RTI refused a call.
    #[error(transparent)]
    Rti(#[from] RtiError),
    /// A class, attribute or parameter the target generator needs is not in the FOM.
    #[error(transparent)]
    Name(#[from] NameError),
    /// The compiled-in FOM modules do not merge.
    #[error(transparent)]
    Fom(#[from] Box<FomError>),
    /// A peer sent bytes that do not decode.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// The scenario cannot be loaded.
    #[error(transparent)]
    Scenario(#[from] ScenarioError),
    /// Fewer processing nodes announced themselves than the run needs.
    #[error("{ready} of {expected} processing nodes joined within {waited_s} s")]
    NodesMissing {
        /// Nodes the run needs.
        expected: usize,
        /// Nodes that announced themselves.
        ready: usize,
        /// How long the server waited.
        waited_s: f64,
    },
    /// A node did not finish a frame in time.
    #[error("processing node {node} did not finish frame {frame} within {waited_s} s")]
    NodeSilent {
        /// The node's name.
        node: String,
        /// The frame.
        frame: u64,
        /// How long the server waited.
        waited_s: f64,
    },
    /// A random-flights block could not be generated.
    #[error("generating flights: {0}")]
    Generate(String),
    /// A processing node thread ended with an error or a panic.
    #[error("processing node {node}: {reason}")]
    NodeFailed {
        /// The node's name.
        node: String,
        /// What happened.
        reason: String,
    },
}

/// The merged FOM of a target-generator federation.
pub fn fom() -> Result<Fom, Box<FomError>> {
    // Boxed: a FOM error is large and this path runs once.
    Ok(Fom::merge(&[
        FomModule::parse_str("air-traffic.xml", AIR_TRAFFIC_FOM)?,
        FomModule::parse_str("target-generator.xml", TARGET_GENERATOR_FOM)?,
    ])?)
}

/// The `Aircraft` attributes a target generator publishes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AircraftAttributes {
    pub callsign: AttributeHandle,
    pub aircraft_type: AttributeHandle,
    pub lat: AttributeHandle,
    pub lon: AttributeHandle,
    pub alt: AttributeHandle,
    pub gs: AttributeHandle,
    pub course: AttributeHandle,
    pub vs: AttributeHandle,
    pub heading: AttributeHandle,
    pub pitch: AttributeHandle,
    pub roll: AttributeHandle,
    pub track_time: AttributeHandle,
}

impl AircraftAttributes {
    /// Every attribute, for publishing and subscribing.
    pub fn all(&self) -> [AttributeHandle; 12] {
        [
            self.callsign,
            self.aircraft_type,
            self.lat,
            self.lon,
            self.alt,
            self.gs,
            self.course,
            self.vs,
            self.heading,
            self.pitch,
            self.roll,
            self.track_time,
        ]
    }
}

/// An interaction class with its parameters.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Class<const N: usize> {
    pub class: InteractionClassHandle,
    pub params: [ParameterHandle; N],
}

/// Every handle of the target generator's federation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Handles {
    pub aircraft: ObjectClassHandle,
    pub attrs: AircraftAttributes,
    /// node, threads
    pub node_ready: Class<2>,
    /// node, aircraft
    pub assign: Class<2>,
    /// node, callsigns
    pub release: Class<2>,
    /// node, aircraft
    pub handover: Class<2>,
    /// frame, dtSeconds
    pub step: Class<2>,
    /// command
    pub command: Class<1>,
    /// control (an operator's line)
    pub control: Class<1>,
    /// node, frame, command
    pub node_command: Class<3>,
    /// ack
    pub ack: Class<1>,
    /// node, frame, aircraft, computeNs, publishNs
    pub frame_done: Class<5>,
    pub stop: Class<0>,
}

impl Handles {
    pub fn resolve(f: &Federate) -> Result<Handles, NameError> {
        let aircraft = f.object_class_handle("Aircraft")?;
        let a = |n: &str| f.attribute_handle(aircraft, n);
        fn class<const N: usize>(
            f: &Federate,
            name: &str,
            params: [&str; N],
        ) -> Result<Class<N>, NameError> {
            let class = f.interaction_class_handle(name)?;
            let mut out = Vec::with_capacity(N);
            for p in params {
                out.push(f.parameter_handle(class, p)?);
            }
            let params = out.try_into().expect("one handle per name");
            Ok(Class { class, params })
        }
        Ok(Handles {
            aircraft,
            attrs: AircraftAttributes {
                callsign: a("callsign")?,
                aircraft_type: a("aircraftType")?,
                lat: a("latitudeDeg")?,
                lon: a("longitudeDeg")?,
                alt: a("altitudeFt")?,
                gs: a("groundSpeedKt")?,
                course: a("courseDeg")?,
                vs: a("verticalSpeedFpm")?,
                heading: a("headingDeg")?,
                pitch: a("pitchDeg")?,
                roll: a("rollDeg")?,
                track_time: a("trackTime")?,
            },
            node_ready: class(f, "TgNodeReady", ["node", "threads"])?,
            assign: class(f, "TgAssign", ["node", "aircraft"])?,
            release: class(f, "TgRelease", ["node", "callsigns"])?,
            handover: class(f, "TgHandover", ["node", "aircraft"])?,
            step: class(f, "TgStep", ["frame", "dtSeconds"])?,
            command: class(f, "TgCommand", ["command"])?,
            control: class(f, "TgControl", ["control"])?,
            node_command: class(f, "TgNodeCommand", ["node", "frame", "command"])?,
            ack: class(f, "TgCommandAck", ["ack"])?,
            frame_done: class(
                f,
                "TgFrameDone",
                ["node", "frame", "aircraft", "computeNs", "publishNs"],
            )?,
            stop: class(f, "TgStop", [])?,
        })
    }
}

/// The value of parameter `p`, if present.
pub(crate) fn value(values: &[(ParameterHandle, Bytes)], p: ParameterHandle) -> Option<&Bytes> {
    values.iter().find(|(h, _)| *h == p).map(|(_, v)| v)
}

/// HLAinteger64BE.
pub(crate) fn int(v: i64) -> Bytes {
    Bytes::copy_from_slice(&v.to_be_bytes())
}

/// Reads HLAinteger64BE.
pub(crate) fn read_int(v: Option<&Bytes>) -> Result<i64, WireError> {
    let b = v.ok_or(WireError("missing parameter"))?;
    let a: [u8; 8] = b[..]
        .try_into()
        .map_err(|_| WireError("an integer is 8 bytes"))?;
    Ok(i64::from_be_bytes(a))
}

/// Reads HLAfloat64BE.
pub(crate) fn read_f64(v: &[u8]) -> Option<f64> {
    Some(f64::from_be_bytes(v.try_into().ok()?))
}

/// HLAunicodeString, as the FOM declares every string of the target generator
/// (IEEE 1516.2: an HLAinteger32BE count of UTF-16 code units, then the units
/// big-endian), so that any HLA federate reads the callsigns it publishes.
pub(crate) fn unicode(s: &str) -> Bytes {
    glidepath::mom::encode_unicode_string(s)
}

/// Reads HLAunicodeString.
pub(crate) fn read_unicode(v: Option<&Bytes>) -> Result<String, WireError> {
    let b = v.ok_or(WireError("missing parameter"))?;
    let (count, units) = b
        .split_first_chunk::<4>()
        .ok_or(WireError("an HLAunicodeString starts with a 4-byte count"))?;
    let count = i32::from_be_bytes(*count);
    if count < 0 || units.len() != 2 * count as usize {
        return Err(WireError(
            "an HLAunicodeString's count does not match its length",
        ));
    }
    let units: Vec<u16> = units
        .chunks_exact(2)
        .map(|u| u16::from_be_bytes([u[0], u[1]]))
        .collect();
    String::from_utf16(&units).map_err(|_| WireError("an HLAunicodeString is not UTF-16"))
}

/// HLAopaqueData: an HLAinteger32BE count of bytes, then the bytes.
pub(crate) fn opaque(bytes: Vec<u8>) -> Bytes {
    let count = i32::try_from(bytes.len()).expect("a message under 2 GiB");
    let mut out = Vec::with_capacity(4 + bytes.len());
    out.extend_from_slice(&count.to_be_bytes());
    out.extend(bytes);
    Bytes::from(out)
}

/// Reads HLAopaqueData.
pub(crate) fn read_opaque(v: Option<&Bytes>) -> Result<&[u8], WireError> {
    let b = v.ok_or(WireError("missing parameter"))?;
    let (count, bytes) = b
        .split_first_chunk::<4>()
        .ok_or(WireError("HLAopaqueData starts with a 4-byte count"))?;
    let count = i32::from_be_bytes(*count);
    if count < 0 || bytes.len() != count as usize {
        return Err(WireError("HLAopaqueData's count does not match its length"));
    }
    Ok(bytes)
}

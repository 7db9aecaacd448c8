//! The Rust federate of the interoperability tests, written against the front crate
//! alone: in this process (`glidepath._glidepath._run_rust_peer`, over `inproc`) and
//! as the `glidepath-py-peer` program (over NATS, in a process of its own).
//!
//! It uses `foms/benchmark.xml`'s `BenchObject`: `payloadTso` (time-stamp order)
//! carries a big-endian `f64` for the lock-step run, `payload` (receive order) the
//! flood of the killed-subscriber run.

use std::time::Duration;

use glidepath::{
    AttributeHandle, Bytes, Callback, Federate, JoinOptions, ObjectClassHandle, ResignAction, Rti,
    RtiError,
};

/// How long the peer waits for any one callback before it reports a hang.
pub const CALLBACK_WAIT: Duration = Duration::from_secs(30);

/// Why the peer stopped early.
#[derive(Debug)]
pub enum PeerError {
    /// An RTI service failed.
    Rti(RtiError),
    /// No callback came within [`CALLBACK_WAIT`] while the peer waited for `what`.
    Timeout(&'static str),
    /// A grant came at another time than requested, or a value did not decode.
    Protocol(String),
}

impl From<RtiError> for PeerError {
    fn from(e: RtiError) -> Self {
        PeerError::Rti(e)
    }
}

impl std::fmt::Display for PeerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PeerError::Rti(e) => write!(f, "{e}"),
            PeerError::Timeout(what) => {
                write!(
                    f,
                    "no callback within {CALLBACK_WAIT:?} while waiting for {what}"
                )
            }
            PeerError::Protocol(what) => write!(f, "{what}"),
        }
    }
}

/// What the peer saw in a lock-step run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LockstepReport {
    /// Grants received, one per step.
    pub grants: u64,
    /// Reflections of the other federate's `payloadTso` whose value was the step's
    /// number, delivered before that step's grant.
    pub matched: u64,
    /// The logical time of the last grant.
    pub last_grant: f64,
}

struct Handles {
    class: ObjectClassHandle,
    payload: AttributeHandle,
    payload_tso: AttributeHandle,
}

fn handles(federate: &Federate) -> Result<Handles, PeerError> {
    let name = |e: glidepath::NameError| PeerError::Protocol(e.to_string());
    let class = federate.object_class_handle("BenchObject").map_err(name)?;
    Ok(Handles {
        class,
        payload: federate.attribute_handle(class, "payload").map_err(name)?,
        payload_tso: federate
            .attribute_handle(class, "payloadTso")
            .map_err(name)?,
    })
}

fn next(federate: &Federate, what: &'static str) -> Result<Callback, PeerError> {
    federate.check_transport()?;
    federate
        .next_callback(CALLBACK_WAIT)
        .ok_or(PeerError::Timeout(what))
}

/// What the peer has seen before its steps start: each wait looks at every callback,
/// since a discovery can arrive while it waits for regulation (the other federate's
/// object is discovered at subscription when it already exists).
#[derive(Default)]
struct Seen {
    regulating: bool,
    constrained: bool,
    discovered: bool,
}

fn wait_for(
    federate: &Federate,
    seen: &mut Seen,
    what: &'static str,
    done: impl Fn(&Seen) -> bool,
) -> Result<(), PeerError> {
    while !done(seen) {
        match next(federate, what)? {
            Callback::TimeRegulationEnabled { .. } => seen.regulating = true,
            Callback::TimeConstrainedEnabled { .. } => seen.constrained = true,
            Callback::DiscoverObjectInstance { .. } => seen.discovered = true,
            _ => {}
        }
    }
    Ok(())
}

fn decode_f64(value: &Bytes) -> Result<f64, PeerError> {
    let bytes: [u8; 8] = value[..].try_into().map_err(|_| {
        PeerError::Protocol(format!("payloadTso of {} bytes, expected 8", value.len()))
    })?;
    Ok(f64::from_be_bytes(bytes))
}

/// Lock-step with one other federate: both regulate (lookahead 1) and are
/// constrained; at each step k = 1..=steps the peer updates `payloadTso` = k at time
/// k, asks to advance to k, and counts the other's update of value k delivered
/// before the grant. Starts once it has discovered the other federate's object
/// (which it registers after enabling regulation and constraint).
pub fn lockstep(rti: &Rti, federation: &str, steps: u32) -> Result<LockstepReport, PeerError> {
    let federate = rti.join(federation, JoinOptions::named("rust-peer", "rust"))?;
    let result = lockstep_joined(&federate, steps);
    federate.resign(ResignAction::DeleteObjects)?;
    result
}

fn lockstep_joined(federate: &Federate, steps: u32) -> Result<LockstepReport, PeerError> {
    let h = handles(federate)?;
    federate.publish_object_class_attributes(h.class, &[h.payload_tso])?;
    federate.subscribe_object_class_attributes(h.class, &[h.payload_tso])?;
    let mut seen = Seen::default();
    federate.enable_time_regulation(1.0)?;
    wait_for(federate, &mut seen, "regulation", |s| s.regulating)?;
    federate.enable_time_constrained()?;
    wait_for(federate, &mut seen, "constraint", |s| s.constrained)?;
    let instance = federate.register_object_instance(h.class)?;
    wait_for(federate, &mut seen, "the other federate's object", |s| {
        s.discovered
    })?;

    let mut report = LockstepReport::default();
    for step in 1..=steps {
        let k = f64::from(step);
        federate.update_attribute_values_at(
            instance,
            [(h.payload_tso, Bytes::copy_from_slice(&k.to_be_bytes()))],
            "",
            k,
        )?;
        federate.time_advance_request(k)?;
        loop {
            match next(federate, "a reflection or the grant")? {
                Callback::ReflectAttributeValues { values, info, .. } => {
                    for (attribute, value) in values.iter() {
                        let time = info.time.map(|t| t.as_f64());
                        if *attribute == h.payload_tso && decode_f64(value)? == k && time == Some(k)
                        {
                            report.matched += 1;
                        }
                    }
                }
                Callback::TimeAdvanceGrant { time } => {
                    if time.as_f64() != k {
                        return Err(PeerError::Protocol(format!(
                            "granted {time}, requested {k}"
                        )));
                    }
                    report.grants += 1;
                    report.last_grant = k;
                    break;
                }
                _ => {}
            }
        }
    }
    Ok(report)
}

/// What the peer saw in a flood run.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FloodReport {
    /// Updates sent, the final `u64::MAX` one included.
    pub sent: u64,
    /// Receivers the transport stopped waiting for because they went silent (a
    /// killed process): `EndpointStats::receivers_given_up`, read after resigning.
    pub receivers_given_up: u64,
}

/// Floods `payload` with `updates` receive-order updates (8-byte big-endian
/// sequence numbers), then one of value `u64::MAX`, and resigns. Starts once it has
/// discovered another federate's object.
pub fn flood(rti: &Rti, federation: &str, updates: u64) -> Result<FloodReport, PeerError> {
    let federate = rti.join(federation, JoinOptions::named("rust-flood", "rust"))?;
    let result = flood_joined(&federate, updates);
    federate.resign(ResignAction::DeleteObjects)?;
    let sent = result?;
    Ok(FloodReport {
        sent,
        receivers_given_up: federate.transport_stats().receivers_given_up,
    })
}

fn flood_joined(federate: &Federate, updates: u64) -> Result<u64, PeerError> {
    let h = handles(federate)?;
    federate.publish_object_class_attributes(h.class, &[h.payload])?;
    federate.subscribe_object_class_attributes(h.class, &[h.payload])?;
    let instance = federate.register_object_instance(h.class)?;
    let mut seen = Seen::default();
    wait_for(federate, &mut seen, "another federate's object", |s| {
        s.discovered
    })?;
    for seq in (0..updates).chain([u64::MAX]) {
        federate.update_attribute_values(
            instance,
            [(h.payload, Bytes::copy_from_slice(&seq.to_be_bytes()))],
            "",
        )?;
    }
    federate.flush()?;
    Ok(updates + 1)
}

//! The bus bridge to an HLA federation (`glidepath bus bridge CONFIG` with `[hla]`):
//! components that speak the bus (small typed messages on named subjects) and
//! federates that speak HLA exchange data without either learning the other.
//!
//! - **To HLA**: each [`ToHla`] route subscribes a bus pattern and sends each message
//!   as an interaction of its class, each mapped key's value encoded as its
//!   parameter's FOM data type (an `I` into an `HLAinteger32BE`, a `D` into an
//!   `HLAfloat64BE`, an `S` into an `HLAunicodeString`, ...).
//! - **From HLA**: each [`FromHla`] route subscribes an interaction class and
//!   publishes each interaction received on its bus subject, each mapped parameter
//!   decoded from its data type into a bus value whose type follows the data type's
//!   basic representation (32-bit integers as `I`, 64-bit as `L`, 32-bit floats as
//!   `F`, 64-bit as `D`, strings and enumerators as `S`, booleans as `B`, opaque data
//!   as `X`).
//!
//! A message that cannot be carried across (a mapped key or parameter missing, a
//! value that does not fit its type, bytes that do not decode, an array or record
//! the bus cannot hold) is refused: counted ([`HlaBridgeStats`]), logged with the
//! reason and the route, never forwarded; the bridge carries on. Keys and parameters
//! no route maps are not forwarded. What the bridge sends on one side never comes
//! back on the other: its bus connection skips its own deliveries, and a federate
//! does not receive its own interactions.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;

use super::workers::{stopped, Workers};
use super::{Bus, BusConfig, BusError, Event, Message, Pattern, ServiceLevel, Subject, Value};
use crate::fom::{DataType, Fom, Value as HlaValue};
use crate::{Callback, Federate, InteractionClassHandle, ParameterHandle};

/// A route from the bus to HLA interactions.
#[derive(Clone, Debug)]
pub struct ToHla {
    /// The bus pattern forwarded.
    pub pattern: Pattern,
    /// Its group; `None` for the bus configuration's default group.
    pub group: Option<Subject>,
    /// The interaction class sent (its name in the FOM).
    pub class: String,
    /// Each forwarded key and the parameter it becomes.
    pub parameters: Vec<(String, String)>,
}

/// A route from HLA interactions to the bus.
#[derive(Clone, Debug)]
pub struct FromHla {
    /// The interaction class received (its name in the FOM).
    pub class: String,
    /// The bus subject published on.
    pub subject: Subject,
    /// The level published with.
    pub level: ServiceLevel,
    /// The bus group published to; `None` for the default group.
    pub group: Option<Subject>,
    /// Each forwarded parameter and the key it becomes.
    pub parameters: Vec<(String, String)>,
}

/// What the bridge has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HlaBridgeStats {
    /// Bus messages sent as interactions.
    pub to_hla: u64,
    /// Interactions published on the bus.
    pub from_hla: u64,
    /// Bus messages that could not become interactions: counted, logged, dropped.
    pub refused_to_hla: u64,
    /// Interactions that could not become bus messages: counted, logged, dropped.
    pub refused_from_hla: u64,
    /// Sends that failed in a transport (either way).
    pub failed: u64,
}

/// Why a bridge could not start.
#[derive(Debug, thiserror::Error)]
pub enum HlaBridgeError {
    /// A route names what the federation's FOM does not have.
    #[error("{route}: {reason}")]
    Route {
        /// `to_hla route N` or `from_hla route N` (from 1).
        route: String,
        /// What is wrong.
        reason: String,
    },
    /// The bus refused a connection or subscription.
    #[error(transparent)]
    Bus(#[from] BusError),
    /// The RTI refused to publish or subscribe.
    #[error("the RTI: {0}")]
    Rti(String),
}

#[derive(Default)]
struct Counters {
    to_hla: AtomicU64,
    from_hla: AtomicU64,
    refused_to_hla: AtomicU64,
    refused_from_hla: AtomicU64,
    failed: AtomicU64,
}

/// One parameter of a route, resolved in the FOM.
#[derive(Clone)]
struct Field {
    key: String,
    parameter: ParameterHandle,
    parameter_name: String,
    data_type: String,
}

/// A route resolved in the FOM.
#[derive(Clone)]
struct Resolved {
    name: String,
    class: InteractionClassHandle,
    fields: Vec<Field>,
}

/// A running bridge; [`HlaBridge::close`] (or dropping it) stops it. The federate
/// stays joined: it is the caller's.
pub struct HlaBridge {
    bus: Bus,
    counters: Arc<Counters>,
    workers: Workers,
}

/// How often a forwarding thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);

fn resolve(
    f: &Federate,
    route: String,
    class: &str,
    pairs: impl Iterator<Item = (String, String)>,
) -> Result<Resolved, HlaBridgeError> {
    let fail = |reason: String| HlaBridgeError::Route {
        route: route.clone(),
        reason,
    };
    let handle = f
        .interaction_class_handle(class)
        .map_err(|e| fail(format!("interaction class `{class}`: {e}")))?;
    let mut fields = Vec::new();
    for (key, parameter_name) in pairs {
        let parameter = f
            .parameter_handle(handle, &parameter_name)
            .map_err(|e| fail(format!("parameter `{parameter_name}` of `{class}`: {e}")))?;
        let data_type = f
            .fom()
            .parameter(parameter)
            .and_then(|p| p.data_type.clone())
            .ok_or_else(|| {
                fail(format!(
                    "parameter `{parameter_name}` of `{class}` has no data type in the FOM"
                ))
            })?;
        fields.push(Field {
            key,
            parameter,
            parameter_name,
            data_type,
        });
    }
    if fields.is_empty() {
        return Err(fail("maps no parameter".into()));
    }
    Ok(Resolved {
        name: route,
        class: handle,
        fields,
    })
}

impl HlaBridge {
    /// Connects to the bus, publishes and subscribes the routes' classes with
    /// `federate` (joined by the caller), and starts forwarding; effective when it
    /// returns.
    pub fn start(
        bus: &BusConfig,
        federate: Federate,
        to_hla: Vec<ToHla>,
        from_hla: Vec<FromHla>,
    ) -> Result<HlaBridge, HlaBridgeError> {
        let rti = |e: &dyn std::fmt::Display| HlaBridgeError::Rti(e.to_string());
        let mut outgoing = Vec::new();
        for (i, r) in to_hla.iter().enumerate() {
            let resolved = resolve(
                &federate,
                format!("to_hla route {}", i + 1),
                &r.class,
                r.parameters.iter().cloned(),
            )?;
            federate
                .publish_interaction_class(resolved.class)
                .map_err(|e| rti(&e))?;
            outgoing.push((r.clone(), resolved));
        }
        let mut incoming = Vec::new();
        for (i, r) in from_hla.iter().enumerate() {
            // The route maps parameter -> key; a field is key + parameter.
            let resolved = resolve(
                &federate,
                format!("from_hla route {}", i + 1),
                &r.class,
                r.parameters.iter().map(|(p, k)| (k.clone(), p.clone())),
            )?;
            federate
                .subscribe_interaction_class(resolved.class)
                .map_err(|e| rti(&e))?;
            incoming.push((r.clone(), resolved));
        }
        let default_group = bus.default_group.clone();
        let bus = Bus::connect(bus)?;
        let counters = Arc::new(Counters::default());
        let mut workers = Workers::default();
        for (route, resolved) in outgoing {
            let group = route.group.clone().unwrap_or_else(|| default_group.clone());
            let sub = bus.subscribe_in(&group, &route.pattern)?;
            let (me, f, counters) = (bus.member(), federate.clone(), counters.clone());
            spawn(&mut workers, "glidepath-hla-out", move |stop| {
                while !stopped(&stop) {
                    let d = match sub.recv_timeout(POLL) {
                        Ok(Some(Event::Message(d))) => d,
                        Ok(Some(Event::Membership(_))) | Ok(None) => continue,
                        Err(_) => return,
                    };
                    if d.sender == me {
                        continue;
                    }
                    let values = match to_parameters(f.fom(), &resolved, &d.message) {
                        Ok(values) => values,
                        Err(why) => {
                            counters.refused_to_hla.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!(
                                "bridge: {}: refused {} for {}: {why}",
                                resolved.name,
                                d.subject,
                                route.class
                            );
                            continue;
                        }
                    };
                    match f.send_interaction(resolved.class, values, Bytes::new()) {
                        Ok(()) => counters.to_hla.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            tracing::warn!("bridge: {}: to HLA: {e}", resolved.name);
                            counters.failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })?;
        }
        let (f, bus_in, counters_in) = (federate.clone(), bus.clone(), counters.clone());
        spawn(&mut workers, "glidepath-hla-in", move |stop| {
            while !stopped(&stop) {
                let Some(Callback::ReceiveInteraction { class, values, .. }) =
                    f.next_callback(POLL)
                else {
                    continue;
                };
                for (route, resolved) in incoming.iter().filter(|(_, r)| r.class == class) {
                    let message = match to_message(f.fom(), resolved, &values) {
                        Ok(m) => m,
                        Err(why) => {
                            counters_in.refused_from_hla.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!(
                                "bridge: {}: refused an interaction {}: {why}",
                                resolved.name,
                                route.class
                            );
                            continue;
                        }
                    };
                    let group = route.group.clone().unwrap_or_else(|| default_group.clone());
                    match bus_in.publish_to(&group, &route.subject, &message, route.level) {
                        Ok(()) => counters_in.from_hla.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            tracing::warn!("bridge: {}: to the bus: {e}", resolved.name);
                            counters_in.failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            }
        })?;
        Ok(HlaBridge {
            bus,
            counters,
            workers,
        })
    }

    /// The bridge's own member token on the bus (the sender of what it forwards in).
    pub fn member(&self) -> super::MemberId {
        self.bus.member()
    }

    /// What it has forwarded and refused so far.
    pub fn stats(&self) -> HlaBridgeStats {
        let c = &self.counters;
        HlaBridgeStats {
            to_hla: c.to_hla.load(Ordering::Relaxed),
            from_hla: c.from_hla.load(Ordering::Relaxed),
            refused_to_hla: c.refused_to_hla.load(Ordering::Relaxed),
            refused_from_hla: c.refused_from_hla.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
        }
    }

    /// Stops forwarding, waits for the routes and closes the bus connection.
    pub fn close(mut self) {
        self.shut();
    }

    fn shut(&mut self) {
        self.workers.stop();
        self.bus.close();
    }
}

impl Drop for HlaBridge {
    fn drop(&mut self) {
        if self.workers.running() {
            self.shut();
        }
    }
}

impl std::fmt::Debug for HlaBridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HlaBridge")
            .field("stats", &self.stats())
            .finish()
    }
}

/// A bus message's mapped keys as the route's parameters.
fn to_parameters(
    fom: &Fom,
    route: &Resolved,
    message: &Message,
) -> Result<Vec<(ParameterHandle, Bytes)>, String> {
    route
        .fields
        .iter()
        .map(|field| {
            let value = message
                .get(&field.key)
                .ok_or_else(|| format!("no key `{}`", field.key))?;
            let hla = match value {
                Value::I32(v) => HlaValue::Int(i64::from(*v)),
                Value::I64(v) => HlaValue::Int(*v),
                Value::F32(v) => HlaValue::Float(f64::from(*v)),
                Value::F64(v) => HlaValue::Float(*v),
                Value::Bool(v) => HlaValue::Bool(*v),
                Value::Str(v) => HlaValue::Text(v.clone()),
                Value::Bin(v) => HlaValue::Bytes(v.to_vec()),
            };
            let bytes = fom.encode_value(&field.data_type, &hla).map_err(|e| {
                format!(
                    "key `{}` as parameter `{}`: {e}",
                    field.key, field.parameter_name
                )
            })?;
            Ok((field.parameter, Bytes::from(bytes)))
        })
        .collect()
}

/// An interaction's mapped parameters as a bus message.
fn to_message(
    fom: &Fom,
    route: &Resolved,
    values: &[(ParameterHandle, Bytes)],
) -> Result<Message, String> {
    let mut message = Message::new();
    for field in &route.fields {
        let bytes = values
            .iter()
            .find(|(p, _)| *p == field.parameter)
            .map(|(_, v)| v)
            .ok_or_else(|| format!("no parameter `{}`", field.parameter_name))?;
        let decoded = fom
            .decode_value(&field.data_type, bytes)
            .map_err(|e| format!("parameter `{}`: {e}", field.parameter_name))?;
        let bits = match fom.basic_representation(&field.data_type) {
            Some(DataType::Basic { size_bits, .. }) => *size_bits,
            _ => 64,
        };
        let value = match decoded {
            HlaValue::Int(v) if bits <= 32 => i32::try_from(v).map_or(Value::I64(v), Value::I32),
            HlaValue::Int(v) => Value::I64(v),
            HlaValue::Float(v) if bits == 32 => Value::F32(v as f32),
            HlaValue::Float(v) => Value::F64(v),
            HlaValue::Bool(v) => Value::Bool(v),
            HlaValue::Text(v) => Value::Str(v),
            HlaValue::Bytes(v) => Value::Bin(Bytes::from(v)),
            HlaValue::List(_) | HlaValue::Record(_) => {
                return Err(format!(
                    "parameter `{}` is a {} (an array or record): a bus entry holds one value",
                    field.parameter_name, field.data_type
                ))
            }
        };
        message
            .insert(field.key.clone(), value)
            .map_err(|e| format!("key `{}`: {e}", field.key))?;
    }
    Ok(message)
}

fn spawn(
    workers: &mut Workers,
    name: &str,
    f: impl FnOnce(Arc<std::sync::atomic::AtomicBool>) + Send + 'static,
) -> Result<(), HlaBridgeError> {
    workers
        .spawn(name, f)
        .map_err(|e| HlaBridgeError::Rti(format!("cannot start a thread: {e}")))
}

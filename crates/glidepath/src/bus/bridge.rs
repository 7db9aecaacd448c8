//! The bus bridge to plain NATS and JSON (`glidepath bus bridge CONFIG`): any NATS
//! client in any language (the `nats` CLI, nats-py) publishes to the bus and reads
//! from it without speaking the bus's frames.
//!
//! - **To NATS**: each [`ToNats`] route subscribes a bus pattern (in a group) and
//!   publishes what arrives, as the JSON of `docs/wire-format.md` 7.6, on the NATS
//!   subject `PREFIX.SUBJECT`.
//! - **From NATS**: each [`FromNats`] route subscribes a NATS subject (wildcards
//!   allowed) and publishes each JSON message on the bus subject it names, with the
//!   level it names or the route's.
//!
//! What the bridge publishes on one side is never forwarded back: its bus connection
//! skips deliveries it sent itself, and its NATS connection does not receive its own
//! publications (`no_echo`). JSON that is not a bus message is refused, counted
//! ([`BridgeStats::refused_from_nats`]) and logged with the reason and its NATS
//! subject; nothing malformed is forwarded, and the bridge carries on.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use glidepath_bus::message::json;

use super::nats::block_on;
use super::workers::{stopped, Workers};
use super::{Bus, BusConfig, BusError, Event, Pattern, ServiceLevel, Subject};

const TRANSPORT: &str = "nats (bridge)";

/// A route from the bus to plain NATS.
#[derive(Clone, Debug)]
pub struct ToNats {
    /// The bus pattern forwarded.
    pub pattern: Pattern,
    /// Its group; `None` for the bus configuration's default group.
    pub group: Option<Subject>,
    /// The NATS subject is this prefix, a dot and the bus subject.
    pub prefix: String,
}

/// A route from plain NATS to the bus.
#[derive(Clone, Debug)]
pub struct FromNats {
    /// The NATS subject read (NATS wildcards `*` and `>` allowed).
    pub subject: String,
    /// The level of messages that do not name one.
    pub level: ServiceLevel,
    /// The bus group published to; `None` for the default group.
    pub group: Option<Subject>,
}

/// What to bridge.
#[derive(Clone, Debug)]
pub struct BridgeConfig {
    /// The bus side.
    pub bus: BusConfig,
    /// The plain NATS side's server.
    pub nats_url: String,
    /// TLS and credentials for it.
    pub nats_security: crate::NatsSecurity,
    /// Bus to NATS.
    pub to_nats: Vec<ToNats>,
    /// NATS to bus.
    pub from_nats: Vec<FromNats>,
}

/// What the bridge has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BridgeStats {
    /// Bus messages published on NATS.
    pub to_nats: u64,
    /// NATS messages published on the bus.
    pub from_nats: u64,
    /// NATS messages that were not bus messages in JSON (or named a level the bus
    /// refused): counted, logged, not forwarded.
    pub refused_from_nats: u64,
    /// Forwarding failures of the transports (either way).
    pub failed: u64,
}

#[derive(Default)]
struct Counters {
    to_nats: AtomicU64,
    from_nats: AtomicU64,
    refused_from_nats: AtomicU64,
    failed: AtomicU64,
}

/// A running bridge; [`Bridge::close`] (or dropping it) stops it.
pub struct Bridge {
    bus: Bus,
    client: async_nats::Client,
    counters: Arc<Counters>,
    workers: Workers,
}

impl std::fmt::Debug for Bridge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bridge")
            .field("stats", &self.stats())
            .finish()
    }
}

fn err(reason: impl std::fmt::Display) -> BusError {
    BusError::Transport {
        transport: TRANSPORT,
        reason: reason.to_string(),
    }
}

/// How often a forwarding thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);

impl Bridge {
    /// Connects both sides and starts every route; effective when it returns (the
    /// subscriptions on both sides are in place).
    pub fn start(config: BridgeConfig) -> Result<Bridge, BusError> {
        let bus = Bus::connect(&config.bus)?;
        let base = async_nats::ConnectOptions::new()
            .name("glidepath-bus-bridge")
            .no_echo();
        let client =
            super::nats::connect(&config.nats_url, &config.nats_security, base).map_err(err)?;
        let counters = Arc::new(Counters::default());
        let mut workers = Workers::default();
        let default_group = config.bus.default_group.clone();
        for route in config.to_nats {
            let group = route.group.unwrap_or_else(|| default_group.clone());
            let sub = bus.subscribe_in(&group, &route.pattern)?;
            let (me, client, counters) = (bus.member(), client.clone(), counters.clone());
            spawn(&mut workers, "glidepath-bridge-out", move |stop| {
                while !stopped(&stop) {
                    let d = match sub.recv_timeout(POLL) {
                        Ok(Some(Event::Message(d))) => d,
                        Ok(Some(Event::Membership(_))) | Ok(None) => continue,
                        Err(_) => return,
                    };
                    if d.sender == me {
                        continue;
                    }
                    let mut j = json::to_json(&d.subject, &d.message);
                    j.level = Some(d.level.name().to_string());
                    j.sender = Some(d.sender.to_string());
                    j.publish_time_ns = Some(d.publish_time_ns);
                    j.group_seq = d.group_seq;
                    let body = json::encode(&j);
                    let subject = format!("{}.{}", route.prefix, d.subject);
                    match block_on(client.publish(subject, Bytes::from(body))) {
                        Ok(()) => counters.to_nats.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            tracing::warn!("bridge: to NATS: {e}");
                            counters.failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })?;
        }
        for route in config.from_nats {
            let group = route.group.unwrap_or_else(|| default_group.clone());
            let nats_subject = route.subject.clone();
            let mut sub = block_on(client.subscribe(nats_subject.clone()))
                .map_err(|e| err(format!("cannot subscribe to {nats_subject}: {e}")))?;
            let (bus, counters) = (bus.clone(), counters.clone());
            spawn(&mut workers, "glidepath-bridge-in", move |stop| {
                while !stopped(&stop) {
                    let next = block_on(async { tokio::time::timeout(POLL, sub.next()).await });
                    let msg = match next {
                        Ok(Some(msg)) => msg,
                        Ok(None) => return,
                        Err(_) => continue,
                    };
                    let (subject, level, message) = match json::parse(&msg.payload) {
                        Ok(parsed) => parsed,
                        Err(e) => {
                            counters.refused_from_nats.fetch_add(1, Ordering::Relaxed);
                            tracing::warn!("bridge: refused a message on {}: {e}", msg.subject);
                            continue;
                        }
                    };
                    let level = level.unwrap_or(route.level);
                    match bus.publish_to(&group, &subject, &message, level) {
                        Ok(()) => counters.from_nats.fetch_add(1, Ordering::Relaxed),
                        Err(e) => {
                            tracing::warn!("bridge: to the bus ({subject}): {e}");
                            counters.failed.fetch_add(1, Ordering::Relaxed)
                        }
                    };
                }
            })?;
        }
        // Both sides' subscriptions are effective before `start` returns: the bus's
        // on return; NATS's after this round trip.
        // (The client's request timeout is async-nats's default, 10 s.)
        let request_timeout = Duration::from_secs(10);
        block_on(glidepath_transport::nats::barrier(&client, request_timeout)).map_err(err)?;
        Ok(Bridge {
            bus,
            client,
            counters,
            workers,
        })
    }

    /// The bridge's own member token on the bus (the sender of what it forwards in).
    pub fn member(&self) -> super::MemberId {
        self.bus.member()
    }

    /// What it has forwarded and refused so far.
    pub fn stats(&self) -> BridgeStats {
        let c = &self.counters;
        BridgeStats {
            to_nats: c.to_nats.load(Ordering::Relaxed),
            from_nats: c.from_nats.load(Ordering::Relaxed),
            refused_from_nats: c.refused_from_nats.load(Ordering::Relaxed),
            failed: c.failed.load(Ordering::Relaxed),
        }
    }

    /// Stops forwarding, waits for the routes and closes both connections.
    pub fn close(mut self) {
        self.shut();
    }

    fn shut(&mut self) {
        self.workers.stop();
        let client = self.client.clone();
        block_on(async move {
            let _ = tokio::time::timeout(super::nats::CLOSE_FLUSH, client.flush()).await;
        });
        self.bus.close();
    }
}

impl Drop for Bridge {
    fn drop(&mut self) {
        if self.workers.running() {
            self.shut();
        }
    }
}

fn spawn(
    workers: &mut Workers,
    name: &str,
    f: impl FnOnce(Arc<std::sync::atomic::AtomicBool>) + Send + 'static,
) -> Result<(), BusError> {
    workers
        .spawn(name, f)
        .map_err(|e| err(format!("cannot start a thread: {e}")))
}

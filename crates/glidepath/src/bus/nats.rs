//! The bus over NATS, with the official client (`async-nats`) directly: the bus
//! routes by subject patterns, which NATS does natively, not by the HLA transport's
//! `(federation, topic)` envelopes (`ARCHITECTURE.md`, "The bus").
//!
//! Subjects (`docs/wire-format.md` section 7.5), for a group `G` and a subject `S`:
//!
//! - `gpbus.G.d.S`: UNRELIABLE, RELIABLE and FIFO messages, core NATS, which delivers
//!   one connection's messages in order to each subscriber; the per-sender sequence
//!   number shows any loss as a gap, counted.
//! - `gpbus.G.s.m.S` and `gpbus.G.s.v`: CAUSAL and AGREED messages and membership
//!   changes go to the group's JetStream stream (`GPBUS_G`, memory storage), the
//!   group's single ordering point: the stream numbers them and republishes each, once
//!   stored, on `gpbus.G.r.m.S` / `gpbus.G.r.v` with its stream sequence in the
//!   `Nats-Sequence` header. Every member receives one sequence, so all deliver in the
//!   same total order, and an order given by one sequencer after delivery is also
//!   causal. A gap in `Nats-Sequence` is counted as lost.
//!
//! SAFE (stability acknowledgements) and crash detection are not offered over NATS
//! yet: publishing SAFE returns [`BusError::Unsupported`].

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};

use async_nats::jetstream;
use bytes::Bytes;
use glidepath_bus::frame::{
    self, DataFrame, Frame, MemberId, MembershipFrame, MembershipKind, ServiceLevel,
};
use glidepath_bus::Subject;
use parking_lot::Mutex;

use super::route::{RawEvent, Router};
use super::{Backend, BusError, Counters, MembershipChange};

const TRANSPORT: &str = "nats";

/// The runtime every NATS bus connection of the process shares.
fn runtime() -> &'static tokio::runtime::Runtime {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("glidepath-bus-nats")
            .enable_all()
            .build()
            .expect("the bus's NATS runtime starts")
    })
}

fn block_on<F: Future>(f: F) -> F::Output {
    runtime().block_on(f)
}

fn err(reason: impl std::fmt::Display) -> BusError {
    BusError::Transport {
        transport: TRANSPORT,
        reason: reason.to_string(),
    }
}

/// The stream name of a group: `GPBUS_` and the group with `_` written `_U` and `.`
/// written `_D` (stream names cannot hold dots; the escape keeps names distinct).
pub(crate) fn stream_name(group: &Subject) -> String {
    let mut s = String::from("GPBUS_");
    for c in group.as_str().chars() {
        match c {
            '_' => s.push_str("_U"),
            '.' => s.push_str("_D"),
            c => s.push(c),
        }
    }
    s
}

struct Joined {
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

pub(crate) struct NatsBackend {
    client: async_nats::Client,
    js: jetstream::Context,
    member: MemberId,
    name: String,
    router: Arc<Router>,
    counters: Arc<Counters>,
    streams: Mutex<HashMap<Subject, ()>>,
    joined: Mutex<HashMap<Subject, Joined>>,
}

impl NatsBackend {
    pub(crate) fn connect(
        url: &str,
        security: &crate::NatsSecurity,
        member: MemberId,
        name: String,
        router: Arc<Router>,
        counters: Arc<Counters>,
    ) -> Result<NatsBackend, BusError> {
        let shown = crate::redact_url(url);
        let client = block_on(async {
            let base = async_nats::ConnectOptions::new()
                .name(format!("glidepath-bus {name}"))
                .subscription_capacity(1 << 16);
            let (options, servers) = security
                .configure(base, url)
                .await
                .map_err(|e| e.to_string())?;
            options
                .connect(servers.as_slice())
                .await
                .map_err(|e| e.to_string())
        })
        .map_err(|e| err(format!("cannot connect to {shown}: {e}")))?;
        let js = {
            let _inside = runtime().enter();
            jetstream::new(client.clone())
        };
        Ok(NatsBackend {
            client,
            js,
            member,
            name,
            router,
            counters,
            streams: Mutex::new(HashMap::new()),
            joined: Mutex::new(HashMap::new()),
        })
    }

    /// Creates the group's stream unless this connection did already.
    fn ensure_stream(&self, group: &Subject) -> Result<(), BusError> {
        if self.streams.lock().contains_key(group) {
            return Ok(());
        }
        let g = group.as_str();
        let config = jetstream::stream::Config {
            name: stream_name(group),
            subjects: vec![format!("gpbus.{g}.s.>")],
            republish: Some(jetstream::stream::Republish {
                source: format!("gpbus.{g}.s.>"),
                destination: format!("gpbus.{g}.r.>"),
                headers_only: false,
            }),
            storage: jetstream::stream::StorageType::Memory,
            // A sequencer and a short recovery buffer, not an archive.
            max_bytes: 256 << 20,
            discard: jetstream::stream::DiscardPolicy::Old,
            allow_direct: true,
            ..Default::default()
        };
        block_on(self.js.get_or_create_stream(config)).map_err(|e| {
            err(format!(
                "group {g}: cannot create its JetStream stream (is JetStream enabled?): {e}"
            ))
        })?;
        self.streams.lock().insert(group.clone(), ());
        Ok(())
    }

    fn publish_membership(&self, group: &Subject, kind: MembershipKind) -> Result<(), BusError> {
        let frame = MembershipFrame {
            kind,
            member: self.member,
            name: self.name.clone(),
        };
        let subject = format!("gpbus.{group}.s.v");
        block_on(async {
            let ack = self
                .js
                .publish(subject, Bytes::from(frame.encode()))
                .await
                .map_err(err)?;
            ack.await.map_err(err)
        })?;
        Ok(())
    }
}

impl Backend for NatsBackend {
    fn name(&self) -> &'static str {
        TRANSPORT
    }

    fn publish(&self, group: &Subject, frame: DataFrame) -> Result<(), BusError> {
        let subject = match frame.level {
            ServiceLevel::Unreliable | ServiceLevel::Reliable | ServiceLevel::Fifo => {
                format!("gpbus.{group}.d.{}", frame.subject)
            }
            ServiceLevel::Causal | ServiceLevel::Agreed => {
                self.ensure_stream(group)?;
                format!("gpbus.{group}.s.m.{}", frame.subject)
            }
            ServiceLevel::Safe => {
                return Err(BusError::Unsupported {
                    level: frame.level,
                    transport: TRANSPORT,
                })
            }
        };
        let bytes = Bytes::from(frame.encode());
        block_on(self.client.publish(subject, bytes)).map_err(err)
    }

    fn join(&self, group: &Subject) -> Result<(), BusError> {
        self.ensure_stream(group)?;
        let g = group.as_str();
        let (data, ordered) = block_on(async {
            let data = self.client.subscribe(format!("gpbus.{g}.d.>")).await?;
            let ordered = self.client.subscribe(format!("gpbus.{g}.r.>")).await?;
            // No flush needed: the membership frame below is published with an
            // acknowledgement, which the server sends only after it has processed
            // these subscriptions (one connection's commands are taken in order), so
            // both are effective before `join` returns.
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((data, ordered))
        })
        .map_err(err)?;
        let tasks = vec![
            runtime().spawn(read_data(
                data,
                group.clone(),
                self.router.clone(),
                self.counters.clone(),
            )),
            runtime().spawn(read_ordered(
                ordered,
                group.clone(),
                self.router.clone(),
                self.counters.clone(),
            )),
        ];
        self.joined.lock().insert(group.clone(), Joined { tasks });
        self.publish_membership(group, MembershipKind::Joined)
    }

    fn leave(&self, group: &Subject) {
        if let Some(joined) = self.joined.lock().remove(group) {
            for t in joined.tasks {
                t.abort();
            }
            if let Err(e) = self.publish_membership(group, MembershipKind::Left) {
                tracing::warn!("bus: leaving {group}: {e}");
            }
        }
    }

    fn close(&self) {
        let groups: Vec<Subject> = self.joined.lock().keys().cloned().collect();
        for g in groups {
            self.leave(&g);
        }
        let client = self.client.clone();
        block_on(async move {
            let _ = client.flush().await;
        });
    }
}

async fn read_data(
    mut sub: async_nats::Subscriber,
    group: Subject,
    router: Arc<Router>,
    counters: Arc<Counters>,
) {
    use futures::StreamExt;
    // The last sequence number seen from each sender: the first message from a
    // sender starts its stream for us.
    let mut last: HashMap<MemberId, u64> = HashMap::new();
    while let Some(msg) = sub.next().await {
        let frame = match frame::decode(&msg.payload) {
            Ok(Frame::Data(f)) => f,
            Ok(Frame::Membership(_)) | Err(_) => {
                counters.malformed();
                continue;
            }
        };
        if frame.seq != 0 {
            let prev = last.entry(frame.sender).or_insert(frame.seq - 1);
            if frame.seq <= *prev {
                counters.order_violation();
                continue;
            }
            counters.lost(frame.seq - *prev - 1);
            *prev = frame.seq;
        }
        router.route(
            &group,
            RawEvent::Message {
                group: group.clone(),
                frame,
                group_seq: None,
            },
        );
    }
}

async fn read_ordered(
    mut sub: async_nats::Subscriber,
    group: Subject,
    router: Arc<Router>,
    counters: Arc<Counters>,
) {
    use futures::StreamExt;
    let mut last: u64 = 0;
    while let Some(msg) = sub.next().await {
        let seq = msg
            .headers
            .as_ref()
            .and_then(|h| h.get("Nats-Sequence"))
            .and_then(|v| v.as_str().parse::<u64>().ok());
        let Some(seq) = seq else {
            counters.malformed();
            continue;
        };
        if last != 0 {
            if seq <= last {
                counters.order_violation();
                continue;
            }
            counters.lost(seq - last - 1);
        }
        last = seq;
        match frame::decode(&msg.payload) {
            Ok(Frame::Data(frame)) => router.route(
                &group,
                RawEvent::Message {
                    group: group.clone(),
                    frame,
                    group_seq: Some(seq),
                },
            ),
            Ok(Frame::Membership(m)) => router.route(
                &group,
                RawEvent::Membership(MembershipChange {
                    group: group.clone(),
                    kind: m.kind,
                    member: m.member,
                    name: m.name,
                }),
            ),
            Err(_) => counters.malformed(),
        }
    }
}

//! The bus over NATS, with the official client (`async-nats`) directly: the bus
//! routes by subject patterns, which NATS does natively, not by the HLA transport's
//! `(federation, topic)` envelopes (`ARCHITECTURE.md`, "The bus").
//!
//! Subjects (`docs/wire-format.md` section 7.5), for a group `G` and a subject `S`:
//!
//! - `gpbus.G.d.S`: UNRELIABLE, RELIABLE and FIFO messages, core NATS, which delivers
//!   one connection's messages in order to each subscriber. A gap in a sender's
//!   sequence numbers (core NATS drops messages when a connection breaks) is repaired
//!   for RELIABLE and FIFO ([`super::repair`]): the receiver asks the sender, on
//!   `gpbus.repair.M`, for what it missed and delivers it in order before what came
//!   after; after its own connection comes back it asks every sender it knows for
//!   anything newer. Only what the sender no longer holds is counted lost.
//! - `gpbus.G.s.m.S` and `gpbus.G.s.v`: CAUSAL and AGREED messages and membership
//!   changes go to the group's JetStream stream (`GPBUS_G`, memory storage), the
//!   group's single ordering point: the stream numbers them and republishes each, once
//!   stored, on `gpbus.G.r.m.S` / `gpbus.G.r.v` with its stream sequence in the
//!   `Nats-Sequence` header. Every member receives one sequence, so all deliver in the
//!   same total order, and an order given by one sequencer after delivery is also
//!   causal. A gap in `Nats-Sequence` (core NATS dropped a republished copy) is
//!   fetched from the stream by direct get while what follows waits; only a frame
//!   the stream no longer holds is counted lost.
//!
//! - SAFE messages travel like AGREED ones; each member acknowledges how far it has
//!   received the group's order on `gpbus.G.a` (an ack frame, at once when a SAFE
//!   message arrives and every [`HEARTBEAT`] as a heartbeat), and hands a SAFE message
//!   out only once every member it knows has acknowledged it
//!   ([`glidepath_bus::stability`]). A member silent for [`BusConfig::crash_timeout`]
//!   is declared crashed by whoever notices: a *crashed* membership frame goes into the
//!   stream, so every member removes it at the same point of the order (a member told
//!   it crashed while alive joins again).
//!
//! [`BusConfig::crash_timeout`]: super::BusConfig::crash_timeout

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use async_nats::jetstream;
use bytes::Bytes;
use glidepath_bus::frame::{
    self, DataFrame, Frame, MemberId, MembershipFrame, MembershipKind, ServiceLevel,
};
use glidepath_bus::repair::{Arrival as DataArrival, Order};
use glidepath_bus::stability::{Arrival, Stability};
use glidepath_bus::Subject;
use parking_lot::Mutex;

use super::acks::AckWindow;
use super::repair::{self, Sent};
use super::route::{RawEvent, Router};
use super::{Backend, BusError, Counters, MembershipChange};

const TRANSPORT: &str = "nats";

/// How often a member acknowledges (its heartbeat) while it is in a group.
pub(crate) const HEARTBEAT: Duration = Duration::from_millis(100);

/// Nanoseconds on this process's monotonic clock, for [`Stability`].
fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

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

pub(crate) fn block_on<F: Future>(f: F) -> F::Output {
    runtime().block_on(f)
}

fn err(reason: impl std::fmt::Display) -> BusError {
    BusError::Transport {
        transport: TRANSPORT,
        reason: reason.to_string(),
    }
}

/// A NATS connection with `base`'s options and `security`'s TLS and credentials, on
/// the bus's runtime; the error names the server (without credentials).
pub(crate) fn connect(
    url: &str,
    security: &crate::NatsSecurity,
    base: async_nats::ConnectOptions,
) -> Result<async_nats::Client, String> {
    block_on(async {
        let (options, servers) = security
            .configure(base, url)
            .await
            .map_err(|e| e.to_string())?;
        options
            .connect(servers.as_slice())
            .await
            .map_err(|e| e.to_string())
    })
    .map_err(|e| format!("cannot connect to {}: {e}", crate::redact_url(url)))
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
    crash_timeout: Duration,
    router: Arc<Router>,
    counters: Arc<Counters>,
    streams: Mutex<HashMap<Subject, ()>>,
    joined: Mutex<HashMap<Subject, Joined>>,
    /// What this connection sent at RELIABLE and FIFO lately, for repairs.
    sent: Arc<Sent>,
    /// Its frames on their way into the groups' streams, not yet acknowledged.
    acks: AckWindow,
    /// Counts the connection's returns (and slow-consumer drops): each makes the
    /// readers ask their senders for anything newer.
    reconnects: tokio::sync::watch::Receiver<u64>,
    /// The repair server and the re-announcer, stopped when the backend goes.
    tasks: Vec<tokio::task::JoinHandle<()>>,
}

impl Drop for NatsBackend {
    fn drop(&mut self) {
        for t in &self.tasks {
            t.abort();
        }
    }
}

impl NatsBackend {
    pub(crate) fn connect(
        url: &str,
        security: &crate::NatsSecurity,
        member: MemberId,
        name: String,
        crash_timeout: Duration,
        router: Arc<Router>,
        counters: Arc<Counters>,
    ) -> Result<NatsBackend, BusError> {
        let (reconnected, reconnects) = tokio::sync::watch::channel(0u64);
        let base = async_nats::ConnectOptions::new()
            .name(format!("glidepath-bus {name}"))
            .subscription_capacity(1 << 16)
            .event_callback(move |event| {
                let reconnected = reconnected.clone();
                async move {
                    if matches!(
                        event,
                        async_nats::Event::Connected | async_nats::Event::SlowConsumer(_)
                    ) {
                        reconnected.send_modify(|n| *n += 1);
                    }
                }
            });
        let client = connect(url, security, base).map_err(err)?;
        let sent = Arc::new(Sent::default());
        let requests = block_on(client.subscribe(repair::repair_subject(member)))
            .map_err(|e| err(format!("cannot subscribe to its repair subject: {e}")))?;
        let tasks = vec![
            runtime().spawn(repair::serve(requests, client.clone(), sent.clone())),
            runtime().spawn(repair::reannounce(
                reconnects.clone(),
                client.clone(),
                sent.clone(),
            )),
        ];
        let js = {
            let _inside = runtime().enter();
            jetstream::new(client.clone())
        };
        let acks = AckWindow::new(runtime(), counters.clone());
        Ok(NatsBackend {
            acks,
            client,
            js,
            member,
            name,
            crash_timeout,
            router,
            counters,
            streams: Mutex::new(HashMap::new()),
            joined: Mutex::new(HashMap::new()),
            sent,
            reconnects,
            tasks,
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

    fn publish_membership(&self, group: &Subject, kind: MembershipKind) -> Result<u64, BusError> {
        block_on(put_membership(
            &self.js,
            group,
            kind,
            self.member,
            &self.name,
        ))
    }
}

impl Backend for NatsBackend {
    fn name(&self) -> &'static str {
        TRANSPORT
    }

    fn publish(&self, group: &Subject, frame: DataFrame) -> Result<(), BusError> {
        match frame.level {
            ServiceLevel::Unreliable | ServiceLevel::Reliable | ServiceLevel::Fifo => {
                let subject = format!("gpbus.{group}.d.{}", frame.subject);
                let bytes = Bytes::from(frame.encode());
                if frame.level != ServiceLevel::Unreliable {
                    // Kept before it goes: a receiver that misses it can still have it.
                    self.sent.keep(group, frame.seq, bytes.clone());
                }
                block_on(self.client.publish(subject, bytes)).map_err(err)
            }
            ServiceLevel::Causal | ServiceLevel::Agreed | ServiceLevel::Safe => {
                self.ensure_stream(group)?;
                let subject = format!("gpbus.{group}.s.m.{}", frame.subject);
                let bytes = Bytes::from(frame.encode());
                block_on(self.acks.publish(&self.js, subject, bytes)).map_err(err)
            }
        }
    }

    fn join(&self, group: &Subject) -> Result<(), BusError> {
        self.ensure_stream(group)?;
        let g = group.as_str();
        let (data, ordered, acks) = block_on(async {
            let data = self.client.subscribe(format!("gpbus.{g}.d.>")).await?;
            let ordered = self.client.subscribe(format!("gpbus.{g}.r.>")).await?;
            let acks = self.client.subscribe(format!("gpbus.{g}.a")).await?;
            // No flush needed: the membership frame below is published with an
            // acknowledgement, which the server sends only after it has processed
            // these subscriptions (one connection's commands are taken in order), so
            // all three are effective before `join` returns.
            Ok::<_, Box<dyn std::error::Error + Send + Sync>>((data, ordered, acks))
        })
        .map_err(err)?;
        let member = Member {
            group: group.clone(),
            me: self.member,
            name: self.name.clone(),
            client: self.client.clone(),
            js: self.js.clone(),
            router: self.router.clone(),
            counters: self.counters.clone(),
            stability: Arc::new(Mutex::new(Stability::new(
                self.member,
                now_ns(),
                self.crash_timeout.as_nanos() as u64,
            ))),
        };
        let member = Arc::new(member);
        let stability = member.stability.clone();
        let tasks = vec![
            runtime().spawn(read_data(
                data,
                DataReader {
                    group: group.clone(),
                    router: self.router.clone(),
                    counters: self.counters.clone(),
                    client: self.client.clone(),
                    reconnects: self.reconnects.clone(),
                },
            )),
            runtime().spawn(read_ordered(ordered, member.clone())),
            runtime().spawn(read_acks(acks, member.clone())),
            runtime().spawn(heartbeat(member.clone())),
        ];
        self.joined.lock().insert(group.clone(), Joined { tasks });
        let seq = self.publish_membership(group, MembershipKind::Joined)?;
        // This member's order starts at its joining, whether or not that copy comes.
        let mut out = Vec::new();
        let missing = stability.lock().joined_at(seq, now_ns(), &mut out);
        member.hand_out(out);
        if let Some(missing) = missing {
            runtime().spawn(member.fill(missing));
        }
        Ok(())
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
        // Bounded: with the server gone, a flush would wait for it forever.
        block_on(async move {
            let _ = tokio::time::timeout(CLOSE_FLUSH, client.flush()).await;
        });
        // What went into streams is answered (or counted lost) before the close returns.
        block_on(self.acks.drain(CLOSE_FLUSH));
    }
}

/// The longest a closing connection waits to hand what it holds to the server.
pub(crate) const CLOSE_FLUSH: Duration = Duration::from_secs(2);

/// What a group's data reader needs.
struct DataReader {
    group: Subject,
    router: Arc<Router>,
    counters: Arc<Counters>,
    client: async_nats::Client,
    reconnects: tokio::sync::watch::Receiver<u64>,
}

impl DataReader {
    fn route(&self, frame: DataFrame) {
        self.router.route(
            &self.group,
            RawEvent::Message {
                group: self.group.clone(),
                frame,
                group_seq: None,
            },
        );
    }

    /// Asks `sender` for its frames from `from` (to `to`, exclusive; `None`: all it
    /// holds), delivers what comes back and counts the rest lost; returns the number
    /// after the last frame accounted for.
    async fn repair(&self, sender: MemberId, from: u64, to: Option<u64>) -> u64 {
        let got = repair::fetch(&self.client, sender, &self.group, from, to).await;
        self.counters.repaired(got.frames.len() as u64);
        self.counters.lost(got.lost);
        for f in got.frames {
            self.route(f);
        }
        got.next
    }
}

/// Hands out one group's core-NATS frames in each sender's order
/// ([`glidepath_bus::repair::Order`]), repairing gaps before what follows them.
async fn read_data(mut sub: async_nats::Subscriber, mut r: DataReader) {
    use futures::{FutureExt, StreamExt};
    let mut order = Order::default();
    // A reconnection (or a dropped copy) seen: every known sender is asked for
    // anything newer once the frames already queued are read, so that a sender
    // first heard of in them is asked too.
    let mut ask = false;
    loop {
        let msg = if ask {
            match sub.next().now_or_never() {
                Some(Some(msg)) => msg,
                Some(None) => return,
                None => {
                    ask = false;
                    for (sender, from) in order.senders() {
                        let after = r.repair(sender, from, None).await;
                        order.repaired(sender, after);
                    }
                    continue;
                }
            }
        } else {
            tokio::select! {
                msg = sub.next() => match msg {
                    Some(msg) => msg,
                    None => return,
                },
                changed = r.reconnects.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    ask = true;
                    continue;
                }
            }
        };
        let frame = match frame::decode(&msg.payload) {
            Ok(Frame::Data(f)) => f,
            Ok(Frame::Membership(_) | Frame::Ack(_)) | Err(_) => {
                r.counters.malformed();
                continue;
            }
        };
        match order.arrive(&frame) {
            DataArrival::Deliver => {}
            DataArrival::Stale { violation } => {
                if violation {
                    r.counters.order_violation();
                }
                continue;
            }
            DataArrival::Gap { from, to } => {
                let after = r.repair(frame.sender, from, Some(to)).await;
                order.repaired(frame.sender, after);
            }
            DataArrival::Lost(n) => r.counters.lost(n),
        }
        r.route(frame);
    }
}

/// One member of one group: what its ordered reader, its acknowledgement reader and
/// its heartbeat share.
struct Member {
    group: Subject,
    me: MemberId,
    name: String,
    client: async_nats::Client,
    js: jetstream::Context,
    router: Arc<Router>,
    counters: Arc<Counters>,
    stability: Arc<Mutex<Stability>>,
}

impl Member {
    /// Hands frames of the order out to the subscriptions; a notice that this member
    /// crashed (it was silent too long, but is not dead) makes it join again.
    fn hand_out(&self, frames: Vec<(u64, Frame)>) {
        let group = &self.group;
        for (seq, frame) in frames {
            match frame {
                Frame::Data(frame) => self.router.route(
                    group,
                    RawEvent::Message {
                        group: group.clone(),
                        frame,
                        group_seq: Some(seq),
                    },
                ),
                Frame::Membership(m) => {
                    if m.kind == MembershipKind::Crashed && m.member == self.me {
                        tracing::warn!(
                            "bus: {group}: this member was declared crashed; joining again"
                        );
                        let (js, group, me, name) =
                            (self.js.clone(), group.clone(), self.me, self.name.clone());
                        let stability = self.stability.clone();
                        runtime().spawn(async move {
                            let joined =
                                put_membership(&js, &group, MembershipKind::Joined, me, &name);
                            match joined.await {
                                // Already in its order: this renews the number it
                                // learns the group by.
                                Ok(seq) => {
                                    let mut out = Vec::new();
                                    stability.lock().joined_at(seq, now_ns(), &mut out);
                                }
                                Err(e) => tracing::warn!("bus: {group}: joining again: {e}"),
                            }
                        });
                    }
                    self.router.route(
                        group,
                        RawEvent::Membership(MembershipChange {
                            group: group.clone(),
                            kind: m.kind,
                            member: m.member,
                            name: m.name,
                        }),
                    )
                }
                Frame::Ack(_) => self.counters.malformed(),
            }
        }
    }

    /// Publishes this member's acknowledgement of the order so far.
    async fn acknowledge(&self) {
        let frame = self.stability.lock().ack();
        let _ = self
            .client
            .publish(
                format!("gpbus.{}.a", self.group),
                Bytes::from(frame.encode()),
            )
            .await;
    }
}

/// Publishes a membership frame into the group's stream and waits for the stream;
/// returns the number the stream gave it.
async fn put_membership(
    js: &jetstream::Context,
    group: &Subject,
    kind: MembershipKind,
    member: MemberId,
    name: &str,
) -> Result<u64, BusError> {
    let frame = MembershipFrame {
        kind,
        member,
        name: name.to_string(),
    };
    let ack = js
        .publish(format!("gpbus.{group}.s.v"), Bytes::from(frame.encode()))
        .await
        .map_err(err)?;
    Ok(ack.await.map_err(err)?.sequence)
}

async fn read_ordered(mut sub: async_nats::Subscriber, member: Arc<Member>) {
    use futures::StreamExt;
    while let Some(msg) = sub.next().await {
        let seq = msg
            .headers
            .as_ref()
            .and_then(|h| h.get("Nats-Sequence"))
            .and_then(|v| v.as_str().parse::<u64>().ok());
        let Some(seq) = seq else {
            member.counters.malformed();
            continue;
        };
        member.take(seq, &msg.payload).await;
    }
}

impl Member {
    /// Frame `seq` of the order: handed to the state machine, whatever it releases
    /// handed out; a hole before it is fetched from the stream.
    async fn take(self: &Arc<Self>, seq: u64, payload: &Bytes) {
        let Some((arrival, safe)) = self.accept(seq, payload) else {
            return;
        };
        if let Arrival::Hole(missing) = arrival {
            let member = self.clone();
            runtime().spawn(async move { member.fill(missing).await });
        }
        if safe {
            // The others wait for this acknowledgement before they hand it out.
            self.acknowledge().await;
        }
    }

    /// The state machine's part of [`Member::take`]: what it made of the frame and
    /// whether it is a SAFE message; `None` for bytes that are not a frame of the
    /// order (counted; their place is given up so nothing waits behind it).
    fn accept(&self, seq: u64, payload: &Bytes) -> Option<(Arrival, bool)> {
        let mut out = Vec::new();
        let frame = match frame::decode(payload) {
            Ok(f @ (Frame::Data(_) | Frame::Membership(_))) => f,
            Ok(Frame::Ack(_)) | Err(_) => {
                self.counters.malformed();
                self.stability.lock().give_up(seq, now_ns(), &mut out);
                self.hand_out(out);
                return None;
            }
        };
        let safe = matches!(&frame, Frame::Data(d) if d.level == ServiceLevel::Safe);
        let arrival = self
            .stability
            .lock()
            .on_ordered(seq, frame, now_ns(), &mut out);
        self.hand_out(out);
        Some((arrival, safe))
    }

    /// Fetches what the stream has beyond this member's copy of the order.
    async fn catch_up(self: Arc<Self>) {
        // One stream-info request; the handle carries the answer.
        let Ok(stream) = self.js.get_stream(stream_name(&self.group)).await else {
            return;
        };
        let last = stream.cached_info().state.last_sequence;
        let missing = self.stability.lock().behind(last);
        if let Some(missing) = missing {
            self.fill(missing).await;
        }
    }

    /// Fetches the frames of a hole in the order from the group's stream (which keeps
    /// them, memory permitting); what it no longer has is counted lost and skipped.
    async fn fill(self: Arc<Self>, missing: std::ops::Range<u64>) {
        let stream = match self.js.get_stream(stream_name(&self.group)).await {
            Ok(s) => Some(s),
            Err(e) => {
                tracing::warn!(
                    "bus: {}: cannot fetch {missing:?} from the stream: {e}",
                    self.group
                );
                None
            }
        };
        for seq in missing {
            let mut got = Err("no stream".to_string());
            // A replica that serves direct gets may not have the frame yet: a few
            // tries, about 0.6 s in all, before it is given up.
            for pause_ms in [0, 20, 40, 80, 160, 320] {
                let Some(stream) = &stream else { break };
                tokio::time::sleep(Duration::from_millis(pause_ms)).await;
                if self.stability.lock().through() >= seq {
                    // The republished copy came meanwhile.
                    got = Ok(None);
                    break;
                }
                match stream.direct_get(seq).await {
                    Ok(m) => {
                        got = Ok(Some(m));
                        break;
                    }
                    Err(e) => got = Err(e.to_string()),
                }
            }
            match got {
                // Below the highest number received: it cannot open a new hole.
                Ok(None) => {}
                Ok(Some(m)) => {
                    if let Some((_, true)) = self.accept(seq, &m.payload) {
                        self.acknowledge().await;
                    }
                }
                Err(e) => {
                    tracing::warn!("bus: {}: frame {seq} of the order is lost: {e}", self.group);
                    let mut out = Vec::new();
                    let skipped = self.stability.lock().give_up(seq, now_ns(), &mut out);
                    self.counters.lost(skipped);
                    self.hand_out(out);
                }
            }
        }
    }
}

async fn read_acks(mut sub: async_nats::Subscriber, member: Arc<Member>) {
    use futures::StreamExt;
    while let Some(msg) = sub.next().await {
        let Ok(Frame::Ack(ack)) = frame::decode(&msg.payload) else {
            member.counters.malformed();
            continue;
        };
        let mut out = Vec::new();
        let missing = member.stability.lock().on_ack(&ack, now_ns(), &mut out);
        member.hand_out(out);
        if let Some(missing) = missing {
            // It has frames this member never received (a lost copy at the end).
            let m = member.clone();
            runtime().spawn(async move { m.fill(missing).await });
        }
    }
}

/// Every [`HEARTBEAT`]: acknowledges (the heartbeat), lets time pass in the member's
/// state, and declares crashed the members it finds silent.
async fn heartbeat(member: Arc<Member>) {
    let mut tick = tokio::time::interval(HEARTBEAT);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut beats = 0u64;
    loop {
        tick.tick().await;
        member.acknowledge().await;
        beats += 1;
        if beats.is_multiple_of(10) {
            // Once a second, the stream's last number: a copy lost at the end of the
            // order shows no hole, and no other member may be there to acknowledge it.
            runtime().spawn(member.clone().catch_up());
        }
        let mut out = Vec::new();
        let silent = member.stability.lock().on_tick(now_ns(), &mut out);
        member.hand_out(out);
        for who in silent {
            tracing::warn!(member = %who, group = %member.group, "bus: a member fell silent; declaring it crashed");
            if let Err(e) =
                put_membership(&member.js, &member.group, MembershipKind::Crashed, who, "").await
            {
                tracing::warn!("bus: {}: declaring {who} crashed: {e}", member.group);
            }
        }
    }
}

//! The executive server: hosts the [`Executive`] of every federation on a NATS
//! system, answers requests on [`EXEC_SUBJECT`] and publishes notifications.
//!
//! One task on a current-thread runtime of its own handles requests one at a time,
//! in arrival order, so each federation's notification `seq` increases by one per
//! notification with no gaps. A request's notifications are published before its
//! reply on the same connection. Anything that cannot be decoded is counted, logged,
//! and answered with an error reply (`Glidepath-Error` header and a JSON body
//! `{"error": "..."}`) when it has a reply subject; the server never stops for it.
//!
//! With a federation key ([`NatsOptions::messaging`]), requests are read only when
//! they are frames sealed with that key; any other request is counted
//! ([`ExecutiveServer::rejected_requests`]) and answered with a plaintext
//! `Glidepath-Error` saying authentication failed, which is how a process without
//! the key learns it cannot join. Replies and notifications are sealed with the key.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};

use async_nats::{Client, HeaderMap, Message, RequestErrorKind, Subject};
use bytes::Bytes;
use futures::StreamExt;
use glidepath_core::{
    Envelope, ExecReply, ExecRequest, ExecutiveHost, FederateHandle, FederationId, Hosted, Topic,
};
use tokio::sync::{mpsc, oneshot};

use super::alive;
use super::frames::{sender_of, FrameCodec, Refused};
use super::jetstream::StreamHost;
use super::save_bucket::{self, BucketSaveStore};
use super::subject::{topic_subject, BARRIER_SUBJECT, EXEC_SUBJECT};
use super::throttle::warn_throttled;
use super::{connect_client, Counters, NatsOptions};
use crate::{monotonic_now_ns, TransportError};

mod failover;
mod standby;
use failover::{Appended, Entry, Log};
pub use failover::{
    FailoverOptions, LEASE_BUCKET, LOG_STREAM, LOG_SUBJECT, REPUBLISH, SNAPSHOT_EVERY,
};
use standby::serve_failover;

/// A reply header set by the executive server when a request could not be decoded
/// or answered; its value says why, and the body is `{"error": "..."}`.
pub const ERROR_HEADER: &str = "Glidepath-Error";

/// A reply header set by the executive server when the request caused notifications:
/// `<federation> <seq>`, the federation and the `seq` of the last notification it
/// published (before the reply) on that federation's `fed` subject.
pub const NOTIFIED_HEADER: &str = "Glidepath-Notified";

/// Parses the value of [`NOTIFIED_HEADER`].
pub fn parse_notified(value: &str) -> Option<(FederationId, u64)> {
    let (federation, seq) = value.trim().split_once(' ')?;
    Some((FederationId(federation.parse().ok()?), seq.parse().ok()?))
}

/// A running executive server. Dropping it stops the server.
pub struct ExecutiveServer {
    url: String,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    counters: Arc<ServerCounters>,
}

#[derive(Default)]
struct ServerCounters {
    /// Whether this server answers requests (always, without failover; while it
    /// holds the lease, with it).
    active: AtomicBool,
    requests: AtomicU64,
    malformed: AtomicU64,
    rejected: AtomicU64,
    /// Members resigned because their endpoint was gone (`alive`).
    lost: AtomicU64,
}

impl std::fmt::Debug for ExecutiveServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExecutiveServer")
            .field("url", &super::redact_url(&self.url))
            .field("requests", &self.requests())
            .finish_non_exhaustive()
    }
}

impl ExecutiveServer {
    /// The NATS server URL it is connected to.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Requests received so far (malformed ones included).
    pub fn requests(&self) -> u64 {
        self.counters.requests.load(Ordering::Relaxed)
    }

    /// Requests that could not be decoded or had no reply subject.
    pub fn malformed_requests(&self) -> u64 {
        self.counters.malformed.load(Ordering::Relaxed)
    }

    /// Requests refused because they failed authentication (no key or a wrong key).
    pub fn rejected_requests(&self) -> u64 {
        self.counters.rejected.load(Ordering::Relaxed)
    }

    /// Members this server resigned because their endpoint had been gone for
    /// [`NatsOptions::lost_after`].
    pub fn lost_federates(&self) -> u64 {
        self.counters.lost.load(Ordering::Relaxed)
    }

    /// Whether this server answers requests now: always without failover; with it,
    /// only while it holds the lease (a standby follows the log).
    pub fn is_active(&self) -> bool {
        self.counters.active.load(Ordering::Acquire)
    }

    /// Whether the server has stopped (its connection closed for good).
    pub fn is_finished(&self) -> bool {
        self.thread.as_ref().is_none_or(|t| t.is_finished())
    }

    /// Blocks until the server stops, which it does only when its connection is
    /// closed for good (the client reconnects by itself after a NATS server restart).
    pub fn wait(mut self) {
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    /// Stops answering, flushes what was published and disconnects.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for ExecutiveServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// Starts an executive server on the NATS server at `url`, with default options.
/// Returns once it answers requests.
pub fn serve_executive(url: &str) -> Result<ExecutiveServer, TransportError> {
    serve_executive_with(url, NatsOptions::default())
}

/// [`serve_executive`] with options. Fails when the NATS server cannot be reached or
/// another executive server already answers there.
pub fn serve_executive_with(
    url: &str,
    options: NatsOptions,
) -> Result<ExecutiveServer, TransportError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TransportError::Io {
            what: "the executive server's runtime",
            reason: e.to_string(),
        })?;
    let counters = Arc::new(ServerCounters::default());
    let codec = FrameCodec::new(options.messaging.clone())?;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let (stop_tx, stop_rx) = oneshot::channel();
    let thread_url = url.to_string();
    let thread_counters = counters.clone();
    let thread = thread::Builder::new()
        .name("glidepath-executive".into())
        .spawn(move || {
            runtime.block_on(async move {
                if let Some(failover) = options.failover {
                    serve_failover(
                        &thread_url,
                        &options,
                        failover,
                        codec,
                        ready_tx,
                        stop_rx,
                        &thread_counters,
                    )
                    .await;
                    return;
                }
                let client = match start(&thread_url, &options).await {
                    Ok(started) => started,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let (client, exec, barrier) = client;
                let streams = match StreamHost::start(&client, &options.persistence).await {
                    Ok(streams) => streams,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let saves = save_bucket::for_server(&thread_url, &options);
                let _ = ready_tx.send(Ok(()));
                serve(
                    codec,
                    client,
                    exec,
                    barrier,
                    stop_rx,
                    &thread_counters,
                    options.request_timeout,
                    streams,
                    saves,
                    options.lost_after,
                )
                .await;
            });
        })
        .map_err(|e| TransportError::Io {
            what: "the executive server's thread",
            reason: e.to_string(),
        })?;
    let mut server = ExecutiveServer {
        url: url.to_string(),
        stop: Some(stop_tx),
        thread: Some(thread),
        counters,
    };
    match ready_rx.recv() {
        Ok(Ok(())) => Ok(server),
        Ok(Err(e)) => {
            server.shutdown();
            Err(e)
        }
        Err(_) => {
            server.shutdown();
            Err(TransportError::Io {
                what: "the executive server",
                reason: "its thread stopped while starting".into(),
            })
        }
    }
}

/// Connects, makes sure no other executive answers, and subscribes.
async fn start(
    url: &str,
    options: &NatsOptions,
) -> Result<(Client, async_nats::Subscriber, async_nats::Subscriber), TransportError> {
    let client = connect_client(
        url,
        options,
        "glidepath-executive".into(),
        Arc::new(Counters::default()),
    )
    .await?;
    // Our own connection does not hear itself (no_echo), so any answer is another server.
    match client.request(EXEC_SUBJECT, Bytes::new()).await {
        Err(e) if e.kind() == RequestErrorKind::NoResponders => {}
        Ok(_) => {
            return Err(TransportError::ExecutiveAlreadyHosted {
                url: super::redact_url(url),
                subject: EXEC_SUBJECT.to_string(),
            })
        }
        Err(e) => {
            return Err(TransportError::ConnectionFailed {
                operation: "probing for another executive server",
                reason: format!("{e} (at {})", super::redact_url(url)),
            })
        }
    }
    let subscribe_error = |e: async_nats::SubscribeError| TransportError::ConnectionFailed {
        operation: "subscribe",
        reason: e.to_string(),
    };
    let exec = client
        .subscribe(EXEC_SUBJECT)
        .await
        .map_err(subscribe_error)?;
    let barrier = client
        .subscribe(BARRIER_SUBJECT)
        .await
        .map_err(subscribe_error)?;
    // Subscribed at the server once a round trip is back (nobody answers ours).
    match client.request(BARRIER_SUBJECT, Bytes::new()).await {
        Ok(_) => {}
        Err(e) if e.kind() == RequestErrorKind::NoResponders => {}
        Err(e) => {
            return Err(TransportError::ConnectionFailed {
                operation: "round trip through the NATS server",
                reason: e.to_string(),
            })
        }
    }
    Ok((client, exec, barrier))
}

/// The request loop.
// Each argument is one independent piece the loop owns or borrows; a struct just to
// carry them into this one call would say nothing more.
#[allow(clippy::too_many_arguments)]
async fn serve(
    codec: FrameCodec,
    client: Client,
    mut exec: async_nats::Subscriber,
    mut barrier: async_nats::Subscriber,
    mut stop: oneshot::Receiver<()>,
    counters: &ServerCounters,
    timeout: std::time::Duration,
    streams: Option<StreamHost>,
    saves: Option<BucketSaveStore>,
    lost_after: Option<std::time::Duration>,
) {
    let mut executive = save_bucket::host(saves);
    if let Some(streams) = &streams {
        executive
            .executive_mut()
            .reserve_ids_through(streams.kept_through());
    }
    let mut host = Host {
        streams,
        executive,
        max_payload: client.server_info().max_payload,
        codec,
        log: None,
        members: Default::default(),
    };
    counters.active.store(true, Ordering::Release);
    let (mut lost, prober) = host.watch_members(&client, lost_after);
    loop {
        tokio::select! {
            biased;
            _ = &mut stop => break,
            message = exec.next() => match message {
                Some(m) => host.handle(&client, m, counters).await,
                None => break,
            },
            Some(member) = lost.recv() => host.resign_lost(&client, member, counters).await,
            message = barrier.next() => match message {
                Some(Message { reply: Some(reply), .. }) => {
                    let _ = client.publish(reply, Bytes::new()).await;
                }
                Some(_) => {}
                None => break,
            },
        }
    }
    if let Some(prober) = prober {
        prober.abort();
    }
    // Bounded: with the NATS server gone, neither would ever finish.
    let _ = tokio::time::timeout(timeout, client.flush()).await;
    let _ = tokio::time::timeout(timeout, client.drain()).await;
}

/// The executive (numbering each federation's notifications) and what the server
/// needs to answer and publish.
struct Host {
    executive: ExecutiveHost,
    max_payload: usize,
    /// Opens requests and seals replies and notifications.
    codec: FrameCodec,
    /// Creates each new federation's JetStream stream, with persistence.
    streams: Option<StreamHost>,
    /// With failover: the request log and the lease.
    log: Option<Log>,
    /// Every federation's members, for the liveness probe (`alive`).
    members: alive::Members,
}

/// Counts a request that cannot be read and logs it (rate-limited: a flood of bad
/// requests must not become a flood of log lines).
fn malformed(counters: &ServerCounters, bytes: usize, error: &dyn std::fmt::Display) {
    let total = counters.malformed.fetch_add(1, Ordering::Relaxed) + 1;
    warn_throttled!(%error, bytes, total, "dropped a malformed request");
}

impl Host {
    async fn handle(&mut self, client: &Client, message: Message, counters: &ServerCounters) {
        counters.requests.fetch_add(1, Ordering::Relaxed);
        let Some(reply_to) = message.reply else {
            malformed(counters, message.payload.len(), &"no reply subject");
            return;
        };
        // An empty request asks whether an executive answers here (a server starting
        // looks before it serves): answered empty, nothing applied, not malformed.
        if message.payload.is_empty() {
            let _ = client.publish(reply_to, Bytes::new()).await;
            return;
        }
        let body = match self.codec.open(&message.payload) {
            Ok(body) => body,
            Err(Refused::Rejected(e)) => {
                let total = counters.rejected.fetch_add(1, Ordering::Relaxed) + 1;
                warn_throttled!(error = %e, sender = sender_of(message.headers.as_ref()), total, "refused a request that failed authentication");
                reply_error(client, reply_to, &format!("authentication failed: {e}")).await;
                return;
            }
            Err(Refused::Malformed(e)) => {
                malformed(counters, message.payload.len(), &e);
                reply_error(client, reply_to, &format!("malformed request: {e}")).await;
                return;
            }
        };
        let request = match glidepath_wire::decode_request(&body) {
            Ok(r) => r,
            Err(e) => {
                malformed(counters, message.payload.len(), &e);
                reply_error(client, reply_to, &format!("malformed request: {e}")).await;
                return;
            }
        };
        if let Some(mut log) = self.log.take() {
            let logged = self.append_request(&mut log, &message.payload).await;
            self.log = Some(log);
            if let Err(why) = logged {
                tracing::warn!(%why, "a request was not logged: not applied");
                reply_error(client, reply_to, &why).await;
                return;
            }
        }
        let (reply, notified) = self.execute(client, request).await;
        self.compact_if_due().await;
        let payload = match self
            .codec
            .seal(None, Bytes::from(glidepath_wire::encode_reply(&reply)))
        {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %e, "could not seal a reply");
                reply_error(client, reply_to, &e.to_string()).await;
                return;
            }
        };
        if payload.len() > self.max_payload {
            let why = format!(
                "the reply ({} bytes) exceeds the NATS server's max_payload ({} bytes); raise `max_payload` in its configuration",
                payload.len(),
                self.max_payload
            );
            tracing::warn!("{why}");
            reply_error(client, reply_to, &why).await;
            return;
        }
        let mut headers = HeaderMap::new();
        if let Some((federation, seq)) = notified {
            headers.insert(NOTIFIED_HEADER, format!("{} {seq}", federation.0));
        }
        if let Err(e) = client
            .publish_with_headers(reply_to, headers, payload)
            .await
        {
            tracing::warn!(error = %e, "could not send a reply");
        }
    }

    /// Runs one request; publishes its notifications; returns the reply and the last
    /// notification published, if any.
    async fn execute(
        &mut self,
        client: &Client,
        request: ExecRequest,
    ) -> (ExecReply, Option<(FederationId, u64)>) {
        // Only these change who is a member (a standby's log replay does too; the
        // list is read afresh when it becomes active, `watch_members`).
        let membership = matches!(
            request,
            ExecRequest::Join { .. }
                | ExecRequest::Resign { .. }
                | ExecRequest::Lost { .. }
                | ExecRequest::Destroy { .. }
        );
        // Stamped when published, below.
        let hosted = self.executive.handle(request, 0);
        if membership {
            *self.members.lock() = self.executive.executive().all_members();
        }
        let last = hosted.last_notified();
        let Hosted {
            reply,
            federation,
            notifications,
            ..
        } = hosted;
        if let (Some(streams), ExecReply::Created { id }) = (&self.streams, &reply) {
            if let Err(e) = streams.ensure_stream(*id).await {
                tracing::warn!(error = %e, federation = id.0, "the federation's messages will not be kept");
            }
        }
        let Some(federation) = federation else {
            return (reply, None);
        };
        self.publish(client, federation, &notifications).await;
        if let Some(log) = &mut self.log {
            log.remember(federation, notifications);
        }
        (reply, last)
    }

    /// Starts asking the members whether they are still there, when `lost_after`
    /// says to: the receiver gets each one gone that long.
    fn watch_members(
        &mut self,
        client: &Client,
        lost_after: Option<std::time::Duration>,
    ) -> (
        mpsc::UnboundedReceiver<(FederationId, FederateHandle)>,
        Option<tokio::task::JoinHandle<()>>,
    ) {
        *self.members.lock() = self.executive.executive().all_members();
        let (tx, rx) = mpsc::unbounded_channel();
        let prober = lost_after.map(|after| {
            tokio::spawn(alive::probe(
                client.clone(),
                self.members.clone(),
                after,
                tx,
            ))
        });
        (rx, prober)
    }

    /// Resigns a member whose endpoint has been gone (`alive`), as if it had asked
    /// (logged first, with failover): its objects stay, its attributes are divested.
    async fn resign_lost(
        &mut self,
        client: &Client,
        (federation, federate): (FederationId, FederateHandle),
        counters: &ServerCounters,
    ) {
        let request = ExecRequest::Lost {
            federation,
            federate,
        };
        if let Some(mut log) = self.log.take() {
            let payload = self
                .codec
                .seal(None, Bytes::from(glidepath_wire::encode_request(&request)));
            let logged = match payload {
                Ok(p) => self.append_request(&mut log, &p).await,
                Err(e) => Err(e.to_string()),
            };
            self.log = Some(log);
            if let Err(why) = logged {
                tracing::warn!(%why, federation = federation.0, %federate, "could not log the resignation of a lost federate; asking again later");
                return;
            }
        }
        let (reply, _) = self.execute(client, request).await;
        if matches!(reply, ExecReply::Resigned { .. }) {
            counters.lost.fetch_add(1, Ordering::Relaxed);
            tracing::warn!(federation = federation.0, %federate, "resigned a federate whose endpoint is gone (its process died or lost its connection): its objects stay, its attributes are divested");
        }
    }

    /// Publishes notifications of `federation` on its `fed` subject.
    async fn publish(&self, client: &Client, federation: FederationId, notifications: &[Envelope]) {
        let subject = topic_subject(federation, Topic::Federation);
        for envelope in notifications {
            let mut envelope = envelope.clone();
            envelope.publish_time_ns = monotonic_now_ns();
            let payload = match self.codec.seal(
                Some(Topic::Federation),
                glidepath_wire::encode_envelope(&envelope),
            ) {
                Ok(p) => p,
                Err(e) => {
                    tracing::warn!(error = %e, federation = federation.0, "could not seal a notification");
                    continue;
                }
            };
            let result = if self.codec.plain() {
                client.publish(subject.clone(), payload).await
            } else {
                let mut headers = HeaderMap::new();
                headers.insert(super::SENDER_HEADER, "glidepath-executive");
                client
                    .publish_with_headers(subject.clone(), headers, payload)
                    .await
            };
            if let Err(e) = result {
                tracing::warn!(error = %e, federation = federation.0, "could not publish a notification");
            }
        }
    }

    /// Appends a request to the log before it is applied; catches up first when
    /// another server appended meanwhile, as long as we still hold the lease.
    async fn append_request(&mut self, log: &mut Log, payload: &Bytes) -> Result<(), String> {
        loop {
            match log.append(&Entry::Request(payload.clone())).await {
                Ok(Appended::At(seq)) => {
                    log.applied = seq;
                    return Ok(());
                }
                Ok(Appended::Behind) => {
                    if !log.renew().await {
                        return Err("this executive server lost its lease to another one during the request; ask again".into());
                    }
                    self.catch_up(log).await.map_err(|e| e.to_string())?;
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// Applies a logged entry without answering anyone (a standby, or catching up).
    /// Only a snapshot it cannot read is an error: what follows it would be applied
    /// to the wrong state, so this server must not serve (it stays a standby).
    fn apply(&mut self, log: &mut Log, entry: Entry) -> Result<(), TransportError> {
        match entry {
            Entry::Reserve(n) => self.executive.executive_mut().reserve_ids_through(n),
            Entry::Snapshot(payload) => {
                self.codec
                    .open(&payload)
                    .map_err(|e| e.to_string())
                    .and_then(|body| self.executive.restore_state(&body))
                    .map_err(|e| TransportError::ConnectionFailed {
                        operation: "reading a snapshot of the executive log",
                        reason: format!(
                            "{e} (written by another version, or with another federation key?)"
                        ),
                    })?;
            }
            Entry::Request(payload) => {
                // Only requests that opened and decoded are logged: never skipped.
                let Ok(body) = self.codec.open(&payload) else {
                    return Ok(());
                };
                let Ok(request) = glidepath_wire::decode_request(&body) else {
                    return Ok(());
                };
                let hosted = self.executive.handle(request, 0);
                if let Some(federation) = hosted.federation {
                    log.remember(federation, hosted.notifications);
                }
            }
        }
        Ok(())
    }

    /// Applies every entry of the log after the last one applied here.
    async fn catch_up(&mut self, log: &mut Log) -> Result<(), TransportError> {
        let (first, last) = log.bounds().await?;
        // Entries purged before we read them: the log now starts with a snapshot,
        // which replaces the state wholesale.
        let mut must_be_snapshot = log.applied + 1 < first && first <= last;
        if must_be_snapshot {
            log.applied = first - 1;
        }
        while log.applied < last {
            let seq = log.applied + 1;
            let entry = log.read(seq).await?;
            if must_be_snapshot {
                if !matches!(entry, Some(Entry::Snapshot(_))) {
                    return Err(TransportError::ConnectionFailed {
                        operation: "reading the executive log",
                        reason: format!("entries before {seq} were removed, and entry {seq} is not a snapshot: the log was cut by something other than an executive server; this server cannot rebuild the state"),
                    });
                }
                must_be_snapshot = false;
            }
            if let Some(entry) = entry {
                if matches!(entry, Entry::Snapshot(_)) {
                    log.snapshot_at = seq;
                }
                self.apply(log, entry)?;
            }
            log.applied = seq;
        }
        Ok(())
    }

    /// Writes a snapshot and purges the log before it, when one is due (active
    /// server only, after a request).
    async fn compact_if_due(&mut self) {
        let Some(mut log) = self.log.take() else {
            return;
        };
        if log.snapshot_due() {
            if let Err(e) = self.snapshot(&mut log).await {
                warn_throttled!(error = %e, "could not cut the executive log short; it keeps growing until a snapshot succeeds");
            }
        }
        self.log = Some(log);
    }

    async fn snapshot(&mut self, log: &mut Log) -> Result<(), TransportError> {
        let cbor =
            self.executive
                .state_snapshot()
                .map_err(|reason| TransportError::ConnectionFailed {
                    operation: "writing a snapshot of the executive",
                    reason,
                })?;
        let payload = self.codec.seal(None, Bytes::from(cbor))?;
        if payload.len() > self.max_payload {
            // Tried again after as many entries, not after every request.
            log.snapshot_at = log.applied;
            return Err(TransportError::ConnectionFailed {
                operation: "writing a snapshot of the executive",
                reason: format!(
                    "the snapshot ({} bytes) exceeds the NATS server's max_payload ({} bytes); raise `max_payload` in its configuration",
                    payload.len(),
                    self.max_payload
                ),
            });
        }
        match log.append(&Entry::Snapshot(payload)).await? {
            Appended::At(seq) => {
                log.applied = seq;
                log.snapshot_at = seq;
                log.purge_before(seq).await
            }
            // Another server appended meanwhile: the lease check stands us down.
            Appended::Behind => Ok(()),
        }
    }
}

async fn reply_error(client: &Client, reply_to: Subject, why: &str) {
    let mut headers = HeaderMap::new();
    // Header values are one line.
    headers.insert(ERROR_HEADER, why.replace(['\r', '\n'], " "));
    let body = serde_json::json!({ "error": why }).to_string();
    if let Err(e) = client
        .publish_with_headers(reply_to, headers, Bytes::from(body))
        .await
    {
        tracing::warn!(error = %e, "could not send an error reply");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notified_header_parses() {
        assert_eq!(parse_notified("7 12"), Some((FederationId(7), 12)));
        assert_eq!(parse_notified("7"), None);
        assert_eq!(parse_notified("x 1"), None);
    }
}

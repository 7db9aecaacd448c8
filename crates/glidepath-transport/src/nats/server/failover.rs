//! Executive failover: no single point of failure in the executive server.
//!
//! Every `glidepath server` started with failover is a replica of one deterministic
//! state machine, the [`glidepath_core::ExecutiveHost`], fed by one log:
//!
//! - **The log** is a JetStream stream ([`LOG_STREAM`], replicated as configured)
//!   holding every request the active server accepted, as received (sealed with the
//!   federation key when there is one). The active server appends a request *before*
//!   it applies it and answers, with JetStream's expected-last-sequence check: an
//!   append succeeds only if the log ends where this server believes it ends. So two
//!   servers can never apply different histories: a server that was superseded
//!   (another appended meanwhile) finds out on its next append, catches up, and goes
//!   on only if it still holds the lease.
//! - **The lease** is a key in a JetStream key-value bucket ([`LEASE_BUCKET`]) whose
//!   entries expire after [`FailoverOptions::lease`]. The active server renews it
//!   five times per lease with a compare-and-set on its revision; a standby tries to
//!   create it (which succeeds only once the key has expired) as often. Renewal
//!   failing means another server took over: the old one stops serving at once.
//! - **A standby** reads the log as it grows and applies each request to its own
//!   executive, discarding the replies, so its state (federations, members, names,
//!   synchronization points, regulators, owners) is the active one's. On taking the
//!   lease it reads the log to its end, publishes again the notifications of the last
//!   [`REPUBLISH`] requests (the old server may have died before publishing them;
//!   readers drop an executive notification whose `seq` they have seen), then answers
//!   requests. A request in flight when the active server died is either in the log
//!   (applied by the successor, whose reply the requester may miss) or not (never
//!   applied); the requester's timeout tells it to ask again.
//! - **Snapshots keep the log short.** Every [`FailoverOptions::snapshot_every`]
//!   entries the active server appends a snapshot of its whole state (the
//!   [`glidepath_core::ExecutiveHost`] in CBOR, sealed like a request) and purges every
//!   entry before it, so a federation with churn running for days keeps a log of at
//!   most about that many entries, and so does the NATS servers' memory. A replica
//!   whose next entry was purged (a standby that fell behind, or one started later)
//!   goes on from the snapshot the log now starts with: a snapshot replaces the state
//!   wholesale, so where the replica was before does not matter.

use std::collections::VecDeque;
use std::time::Duration;

use async_nats::jetstream::{self, kv, stream};
use async_nats::{Client, HeaderMap};
use bytes::Bytes;
use glidepath_core::{Envelope, FederationId};

use crate::TransportError;

/// The stream holding the executive's request log.
pub const LOG_STREAM: &str = "GLIDEPATH_EXECUTIVE_LOG";
/// The subject of the log's entries.
pub const LOG_SUBJECT: &str = "glidepath-exec-log";
/// The key-value bucket holding the lease of the active executive server.
pub const LEASE_BUCKET: &str = "GLIDEPATH_EXECUTIVE_LEASE";
const LEASE_KEY: &str = "active";
/// A log entry's kind: `request` (a request as received) or `reserve` (federation
/// ids kept in JetStream from before the log began, which new ids must skip).
const KIND_HEADER: &str = "Glidepath-Log";
/// How many requests' notifications a new active server publishes again.
pub const REPUBLISH: usize = 64;

/// Failover settings of an executive server.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailoverOptions {
    /// Copies of the log and the lease the NATS cluster keeps (1 on a single
    /// server; 3 on a cluster, so a node's loss loses neither).
    pub replicas: usize,
    /// How long the active server's lease lasts without renewal: a standby takes
    /// over at most this long (plus one poll, a fifth of it) after the active one
    /// stopped. Default 1 s.
    pub lease: Duration,
    /// Entries appended between two snapshots, after which the entries before the
    /// snapshot are purged (at least 1). Default [`SNAPSHOT_EVERY`].
    pub snapshot_every: u64,
}

/// The default of [`FailoverOptions::snapshot_every`].
pub const SNAPSHOT_EVERY: u64 = 1024;

impl Default for FailoverOptions {
    fn default() -> Self {
        FailoverOptions {
            replicas: 1,
            lease: Duration::from_secs(1),
            snapshot_every: SNAPSHOT_EVERY,
        }
    }
}

/// One entry of the log.
pub(super) enum Entry {
    Request(Bytes),
    Reserve(u64),
    /// The whole state after the entry before it (sealed CBOR).
    Snapshot(Bytes),
}

/// What an append did.
pub(super) enum Appended {
    /// In the log at this sequence.
    At(u64),
    /// The log had grown past what we applied: catch up first.
    Behind,
}

/// This server's handle on the log and the lease.
pub(super) struct Log {
    stream: stream::Stream,
    js: jetstream::Context,
    kv: kv::Store,
    me: String,
    /// The lease's revision while we hold it.
    revision: Option<u64>,
    /// The last log sequence applied here.
    pub(super) applied: u64,
    /// The log sequence of the last snapshot applied or written here (0: none).
    pub(super) snapshot_at: u64,
    /// Entries between two snapshots.
    pub(super) snapshot_every: u64,
    /// The notifications of the last requests applied, newest last.
    pub(super) recent: VecDeque<(FederationId, Vec<Envelope>)>,
}

fn failed(what: &'static str, e: impl std::fmt::Display) -> TransportError {
    let e = e.to_string();
    let lower = e.to_ascii_lowercase();
    let hint = if lower.contains("no responders") || lower.contains("not enabled") {
        " (executive failover needs JetStream: start nats-server with --jetstream)"
    } else {
        ""
    };
    TransportError::ConnectionFailed {
        operation: what,
        reason: format!("{e}{hint}"),
    }
}

impl Log {
    /// Opens (creating if needed) the log stream and the lease bucket.
    pub(super) async fn open(
        client: &Client,
        options: FailoverOptions,
    ) -> Result<Log, TransportError> {
        let js = jetstream::new(client.clone());
        let stream = js
            .get_or_create_stream(stream::Config {
                name: LOG_STREAM.into(),
                subjects: vec![LOG_SUBJECT.into()],
                storage: stream::StorageType::File,
                num_replicas: options.replicas.max(1),
                ..Default::default()
            })
            .await
            .map_err(|e| failed("opening the executive log", e))?;
        let kv = match js.get_key_value(LEASE_BUCKET).await {
            Ok(kv) => kv,
            Err(_) => js
                .create_key_value(kv::Config {
                    bucket: LEASE_BUCKET.into(),
                    history: 1,
                    max_age: options.lease,
                    num_replicas: options.replicas.max(1),
                    ..Default::default()
                })
                .await
                .map_err(|e| failed("opening the executive lease", e))?,
        };
        let me = format!(
            "{}-{}-{}",
            std::process::id(),
            crate::monotonic_now_ns(),
            client.server_info().client_id
        );
        Ok(Log {
            stream,
            js,
            kv,
            me,
            revision: None,
            applied: 0,
            snapshot_at: 0,
            snapshot_every: options.snapshot_every.max(1),
            recent: VecDeque::new(),
        })
    }

    /// Tries to take the lease: true once we hold it.
    pub(super) async fn try_acquire(&mut self) -> bool {
        match self
            .kv
            .create(LEASE_KEY, Bytes::from(self.me.clone()))
            .await
        {
            Ok(revision) => {
                self.revision = Some(revision);
                true
            }
            Err(_) => false,
        }
    }

    /// Renews the lease; false when it is no longer ours.
    pub(super) async fn renew(&mut self) -> bool {
        let Some(revision) = self.revision else {
            return false;
        };
        match self
            .kv
            .update(LEASE_KEY, Bytes::from(self.me.clone()), revision)
            .await
        {
            Ok(r) => {
                self.revision = Some(r);
                true
            }
            Err(_) => {
                self.revision = None;
                false
            }
        }
    }

    /// Lets the lease go at once (a clean stop), so a standby need not wait for it
    /// to expire.
    pub(super) async fn release(&mut self) {
        if let Some(revision) = self.revision.take() {
            let _ = self
                .kv
                .delete_expect_revision(LEASE_KEY, Some(revision))
                .await;
        }
    }

    /// The log's first and last sequences (the first is past the last when the log
    /// is empty).
    pub(super) async fn bounds(&mut self) -> Result<(u64, u64), TransportError> {
        self.stream
            .info()
            .await
            .map(|i| (i.state.first_sequence, i.state.last_sequence))
            .map_err(|e| failed("reading the executive log", e))
    }

    /// True when the active server should write a snapshot now.
    pub(super) fn snapshot_due(&self) -> bool {
        self.applied >= self.snapshot_at.saturating_add(self.snapshot_every)
    }

    /// Purges every entry before `seq` (a snapshot's).
    pub(super) async fn purge_before(&self, seq: u64) -> Result<(), TransportError> {
        self.stream
            .purge()
            .sequence(seq)
            .await
            .map(|_| ())
            .map_err(|e| failed("purging the executive log", e))
    }

    /// The entry at `seq` (`None` for one we cannot read, which is skipped).
    pub(super) async fn read(&self, seq: u64) -> Result<Option<Entry>, TransportError> {
        let message = self
            .stream
            .get_raw_message(seq)
            .await
            .map_err(|e| failed("reading the executive log", e))?;
        let kind = message
            .headers
            .get(KIND_HEADER)
            .map(|v| v.as_str().to_string())
            .unwrap_or_default();
        Ok(match kind.as_str() {
            "request" => Some(Entry::Request(message.payload)),
            "snapshot" => Some(Entry::Snapshot(message.payload)),
            "reserve" => std::str::from_utf8(&message.payload)
                .ok()
                .and_then(|s| s.parse().ok())
                .map(Entry::Reserve),
            _ => None,
        })
    }

    /// Appends `entry` where the log ends if it ends at what we applied.
    pub(super) async fn append(&mut self, entry: &Entry) -> Result<Appended, TransportError> {
        let mut headers = HeaderMap::new();
        let payload = match entry {
            Entry::Request(bytes) => {
                headers.insert(KIND_HEADER, "request");
                bytes.clone()
            }
            Entry::Reserve(n) => {
                headers.insert(KIND_HEADER, "reserve");
                Bytes::from(n.to_string())
            }
            Entry::Snapshot(bytes) => {
                headers.insert(KIND_HEADER, "snapshot");
                bytes.clone()
            }
        };
        let publish = jetstream::message::PublishMessage::build()
            .payload(payload)
            .headers(headers)
            .expected_last_sequence(self.applied);
        let ack = self
            .js
            .send_publish(LOG_SUBJECT, publish)
            .await
            .map_err(|e| failed("appending to the executive log", e))?;
        match ack.await {
            Ok(ack) => Ok(Appended::At(ack.sequence)),
            Err(e) if e.to_string().contains("wrong last sequence") => Ok(Appended::Behind),
            Err(e) => Err(failed("appending to the executive log", e)),
        }
    }

    /// Keeps a request's notifications for [`REPUBLISH`].
    pub(super) fn remember(&mut self, federation: FederationId, notifications: Vec<Envelope>) {
        if notifications.is_empty() {
            return;
        }
        if self.recent.len() == REPUBLISH {
            self.recent.pop_front();
        }
        self.recent.push_back((federation, notifications));
    }
}

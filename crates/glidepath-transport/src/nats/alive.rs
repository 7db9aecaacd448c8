//! Lost federates: a federate whose process died would otherwise stay a member for
//! ever, and as a regulator hold every constrained federate's time back.
//!
//! Every endpoint answers, for each federate it joined, requests on
//! [`alive_subject`] (`glidepath-alive.<federation>.<federate>`) with an empty reply
//! ([`Responders`]). The executive server asks every member once a second
//! ([`probe`]); NATS answers "no responders" at once when no connection subscribes
//! the subject (the process died, or its connection is gone). A member for which
//! that has been the answer for [`NatsOptions::lost_after`] is resigned by the server
//! itself, with `UnconditionallyDivestAttributes` (its objects stay, their attributes
//! go to a federate acquiring them or to nobody): the other members get its
//! `FederateLost` notification, take its last status as its final one, and time
//! advances go on without it. A reply that
//! is merely late (a slow link, a busy host) is not an absence: only "no responders"
//! counts, so a federate is never resigned for being slow, only for being gone longer
//! than a reconnection takes.
//!
//! [`NatsOptions::lost_after`]: super::NatsOptions::lost_after

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::{Client, RequestErrorKind};
use bytes::Bytes;
use futures::StreamExt;
use glidepath_core::{FederateHandle, FederationId};
use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};

use super::subject::alive_subject;

/// How often the executive server asks every member.
pub const PROBE_EVERY: Duration = Duration::from_secs(1);
/// How long one probe may take before it counts as answered late (not absent).
const PROBE_TIMEOUT: Duration = Duration::from_secs(1);

/// The answering side: one task per federate an endpoint joined.
#[derive(Default)]
pub(super) struct Responders {
    running: Mutex<HashMap<(FederationId, FederateHandle), oneshot::Sender<()>>>,
}

impl Responders {
    /// Starts answering for `federate` (after its join was accepted).
    pub(super) fn start(
        &self,
        client: &Client,
        runtime: &tokio::runtime::Handle,
        federation: FederationId,
        federate: FederateHandle,
    ) {
        let subject = alive_subject(federation, federate);
        let sub = runtime.block_on(client.subscribe(subject.clone()));
        let mut sub = match sub {
            Ok(sub) => sub,
            Err(e) => {
                tracing::warn!(error = %e, subject, "cannot answer liveness probes: the executive server may take this federate for lost");
                return;
            }
        };
        let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
        let client = client.clone();
        runtime.spawn(async move {
            loop {
                tokio::select! {
                    _ = &mut stop_rx => break,
                    message = sub.next() => match message {
                        Some(m) => {
                            if let Some(reply) = m.reply {
                                let _ = client.publish(reply, Bytes::new()).await;
                            }
                        }
                        None => break,
                    },
                }
            }
        });
        self.running.lock().insert((federation, federate), stop_tx);
    }

    /// Stops answering for `federate` (it resigned).
    pub(super) fn stop(&self, federation: FederationId, federate: FederateHandle) {
        if let Some(stop) = self.running.lock().remove(&(federation, federate)) {
            let _ = stop.send(());
        }
    }

    /// Stops answering for everyone (the endpoint closes).
    pub(super) fn stop_all(&self) {
        for (_, stop) in self.running.lock().drain() {
            let _ = stop.send(());
        }
    }
}

/// The members the server's probe asks about, kept current by the request loop.
pub(super) type Members = Arc<Mutex<Vec<(FederationId, FederateHandle)>>>;

/// The executive server's side: asks every member of `members` every
/// [`PROBE_EVERY`]; sends on `lost` each one that has not been there (no responders)
/// for `lost_after`. Runs until `lost` is closed.
pub(super) async fn probe(
    client: Client,
    members: Members,
    lost_after: Duration,
    lost: mpsc::UnboundedSender<(FederationId, FederateHandle)>,
) {
    let mut absent_since: HashMap<(FederationId, FederateHandle), Instant> = HashMap::new();
    let mut tick = tokio::time::interval(PROBE_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if lost.is_closed() {
            return;
        }
        let asked: Vec<(FederationId, FederateHandle)> = members.lock().clone();
        let answers = futures::future::join_all(asked.iter().map(|&(f, h)| {
            let client = client.clone();
            async move {
                let asked = client.request(alive_subject(f, h), Bytes::new());
                match tokio::time::timeout(PROBE_TIMEOUT, asked).await {
                    Ok(Err(e)) => e.kind() == RequestErrorKind::NoResponders,
                    // Answered, or late: there.
                    _ => false,
                }
            }
        }))
        .await;
        let now = Instant::now();
        absent_since.retain(|k, _| asked.contains(k));
        for (member, absent) in asked.iter().zip(answers) {
            if !absent {
                absent_since.remove(member);
                continue;
            }
            let since = *absent_since.entry(*member).or_insert(now);
            if now.duration_since(since) >= lost_after {
                absent_since.remove(member);
                if lost.send(*member).is_err() {
                    return;
                }
            }
        }
    }
}

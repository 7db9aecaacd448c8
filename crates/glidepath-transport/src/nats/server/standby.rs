//! The executive server with failover: a standby that follows the log, the active
//! server that answers while it holds the lease (see [`super::failover`]), and back.

use std::sync::atomic::Ordering;
use std::sync::Arc;

use async_nats::Message;
use bytes::Bytes;
use futures::StreamExt;
use glidepath_core::{Envelope, FederationId};
use tokio::sync::oneshot;

use super::failover::{Appended, Entry, FailoverOptions, Log};
use super::{Host, ServerCounters};
use crate::nats::frames::FrameCodec;
use crate::nats::jetstream::StreamHost;
use crate::nats::save_bucket::{self, BucketSaveStore};
use crate::nats::subject::{BARRIER_SUBJECT, EXEC_SUBJECT};
use crate::nats::throttle::warn_throttled;
use crate::nats::{connect_client, Counters, NatsOptions};
use crate::TransportError;

/// An executive server with failover (see [`failover`]): follows the log as a
/// standby, answers while it holds the lease, and stands by again if it loses it.
pub(super) async fn serve_failover(
    url: &str,
    options: &NatsOptions,
    failover: FailoverOptions,
    codec: FrameCodec,
    ready: std::sync::mpsc::Sender<Result<(), TransportError>>,
    mut stop: oneshot::Receiver<()>,
    counters: &ServerCounters,
) {
    let started = async {
        let client = connect_client(
            url,
            options,
            "glidepath-executive".into(),
            Arc::new(Counters::default()),
        )
        .await?;
        let streams = StreamHost::start(&client, &options.persistence).await?;
        let log = Log::open(&client, failover).await?;
        let saves = save_bucket::for_server(url, options);
        Ok::<_, TransportError>((client, streams, log, saves))
    };
    let (client, streams, log, saves) = match started.await {
        Ok(s) => s,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let _ = ready.send(Ok(()));
    let poll = failover.lease / 5;
    let mut host = Host {
        streams,
        executive: save_bucket::host(saves.clone()),
        max_payload: client.server_info().max_payload,
        codec,
        log: Some(log),
        members: Default::default(),
    };
    'serving: loop {
        // Standby: follow the log until the lease is ours; only the active server
        // writes saves to the bucket.
        counters.active.store(false, Ordering::Release);
        saves.iter().for_each(BucketSaveStore::hold);
        loop {
            let mut log = host.log.take().expect("the log");
            let followed = host.catch_up(&mut log).await;
            let acquired = followed.is_ok() && log.try_acquire().await;
            host.log = Some(log);
            if let Err(e) = followed {
                warn_throttled!(error = %e, "a standby executive server could not read the log");
            }
            if acquired {
                break;
            }
            tokio::select! {
                _ = &mut stop => break 'serving,
                _ = tokio::time::sleep(poll) => {}
            }
        }
        // Active: the whole log applied, the last notifications published again,
        // then requests.
        let mut log = host.log.take().expect("the log");
        if let Err(e) = host.catch_up(&mut log).await {
            tracing::warn!(error = %e, "could not read the log on taking over; standing by");
            host.log = Some(log);
            continue;
        }
        if log.applied == 0 {
            if let Some(kept) = host.streams.as_ref().map(StreamHost::kept_through) {
                if kept > 0 {
                    if let Ok(Appended::At(seq)) = log.append(&Entry::Reserve(kept)).await {
                        log.applied = seq;
                        let _ = host.apply(&mut log, Entry::Reserve(kept));
                    }
                }
            }
        }
        if let Some(Err(e)) = saves.as_ref().map(BucketSaveStore::release) {
            tracing::warn!(error = %e, "a save applied while standing by is not in the bucket");
        }
        let recent: Vec<(FederationId, Vec<Envelope>)> = log.recent.iter().cloned().collect();
        host.log = Some(log);
        for (federation, notifications) in &recent {
            host.publish(&client, *federation, notifications).await;
        }
        let (Ok(mut exec), Ok(mut barrier)) = (
            client.subscribe(EXEC_SUBJECT).await,
            client.subscribe(BARRIER_SUBJECT).await,
        ) else {
            tracing::warn!("could not subscribe to the executive's subjects; standing by");
            continue;
        };
        counters.active.store(true, Ordering::Release);
        tracing::info!("this executive server is now the active one");
        let mut renew = tokio::time::interval(poll);
        // Only the active server resigns lost members (logged, so standbys follow).
        let (mut lost, prober) = host.watch_members(&client, options.lost_after);
        let _stop_probing = AbortOnDrop(prober);
        loop {
            tokio::select! {
                biased;
                _ = &mut stop => {
                    if let Some(log) = &mut host.log {
                        log.release().await;
                    }
                    break 'serving;
                }
                message = exec.next() => match message {
                    Some(m) => host.handle(&client, m, counters).await,
                    None => break 'serving,
                },
                Some(member) = lost.recv() => host.resign_lost(&client, member, counters).await,
                message = barrier.next() => match message {
                    Some(Message { reply: Some(reply), .. }) => {
                        let _ = client.publish(reply, Bytes::new()).await;
                    }
                    Some(_) => {}
                    None => break 'serving,
                },
                _ = renew.tick() => {
                    let renewed = match &mut host.log {
                        Some(log) => log.renew().await,
                        None => false,
                    };
                    if !renewed {
                        tracing::warn!("this executive server lost its lease to another one; standing by");
                        break;
                    }
                }
            }
        }
        drop((exec, barrier));
    }
    counters.active.store(false, Ordering::Release);
    let _ = tokio::time::timeout(options.request_timeout, client.flush()).await;
    let _ = tokio::time::timeout(options.request_timeout, client.drain()).await;
}

/// Stops the liveness probe when the server stands by again (or stops).
struct AbortOnDrop(Option<tokio::task::JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        if let Some(task) = &self.0 {
            task.abort();
        }
    }
}

//! The stream and publisher side of JetStream persistence: the executive server's
//! [`StreamHost`] and an endpoint's [`JetStreamEndpoint`] with its window of
//! acknowledgements and retransmission.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream::context::{PublishAckFuture, PublishErrorKind};
use async_nats::jetstream::message::PublishMessage;
use async_nats::jetstream::Context;
use async_nats::Client;
use bytes::Bytes;
use futures::StreamExt;
use glidepath_core::FederationId;

use super::{
    stream_config, stream_name, JetStreamOptions, Persistence, ACK_TIMEOUT, ORIGIN_HEADER,
};
use crate::nats::NatsOptions;
use crate::TransportError;

// ----- executive server side ------------------------------------------------------------

/// Creates the streams of the federations the executive server creates.
pub(in crate::nats) struct StreamHost {
    context: Context,
    options: JetStreamOptions,
    /// The highest federation id that already has a stream on the server.
    kept_through: u64,
}

impl StreamHost {
    /// `None` without persistence; fails when the NATS server has no JetStream.
    pub(in crate::nats) async fn start(
        client: &Client,
        persistence: &Persistence,
    ) -> Result<Option<StreamHost>, TransportError> {
        let Persistence::JetStream(options) = persistence else {
            return Ok(None);
        };
        let context = async_nats::jetstream::new(client.clone());
        context
            .query_account()
            .await
            .map_err(|e| TransportError::PersistenceUnavailable {
                reason: e.to_string(),
            })?;
        // Streams outlive their executive (for replay) and are named by federation
        // id, which every executive counts from 1: a new federation must not get
        // the id, and so the full stream and the subjects, of an earlier one.
        let mut kept_through = 0;
        let mut names = context.stream_names();
        while let Some(name) = names.next().await {
            let name = name.map_err(|e| TransportError::PersistenceFailed {
                operation: "listing the JetStream streams".into(),
                reason: e.to_string(),
            })?;
            if let Some(id) = name
                .strip_prefix("GLIDEPATH_")
                .and_then(|id| id.parse::<u64>().ok())
            {
                kept_through = kept_through.max(id);
            }
        }
        Ok(Some(StreamHost {
            context,
            options: *options,
            kept_through,
        }))
    }

    /// The highest federation id that had a stream when the host started (0 for none).
    pub(in crate::nats) fn kept_through(&self) -> u64 {
        self.kept_through
    }

    /// Creates the stream of a new federation (keeps an existing one).
    pub(in crate::nats) async fn ensure_stream(
        &self,
        federation: FederationId,
    ) -> Result<(), TransportError> {
        self.context
            .get_or_create_stream(stream_config(federation, &self.options))
            .await
            .map(|_| ())
            .map_err(|e| TransportError::PersistenceFailed {
                operation: format!(
                    "creating the JetStream stream `{}`",
                    stream_name(federation)
                ),
                reason: e.to_string(),
            })
    }
}

// ----- endpoint side --------------------------------------------------------------------

/// A message published and not yet acknowledged.
struct Pending {
    subject: String,
    payload: Bytes,
    counter: u64,
    ack: Option<PublishAckFuture>,
}

#[derive(Default)]
struct Window {
    next_counter: u64,
    outstanding: VecDeque<Pending>,
}

/// An endpoint's JetStream half: publishes with acknowledgements, receives through
/// ordered consumers.
pub(in crate::nats) struct JetStreamEndpoint {
    pub(super) context: Context,
    pub(super) origin: String,
    pub(super) options: JetStreamOptions,
    timeout: Duration,
    window: tokio::sync::Mutex<Window>,
    outstanding_max: AtomicUsize,
    retransmitted: AtomicU64,
}

impl JetStreamEndpoint {
    /// The JetStream half of an endpoint on `client`, or `None` without persistence.
    pub(in crate::nats) fn new(
        client: &Client,
        runtime: &tokio::runtime::Handle,
        options: &NatsOptions,
    ) -> Option<Arc<JetStreamEndpoint>> {
        let Persistence::JetStream(js) = options.persistence else {
            return None;
        };
        // The context spawns its acknowledgement task on the current runtime.
        let _runtime = runtime.enter();
        let origin = client
            .new_inbox()
            .rsplit('.')
            .next()
            .unwrap_or_default()
            .to_string();
        // A lost acknowledgement (the server restarted) costs ACK_TIMEOUT before the
        // endpoint publishes again; a late one costs only a dropped duplicate. The
        // acknowledgements of messages published again are abandoned, and each holds
        // one of the client's in-flight permits until it arrives or times out: room
        // for several rounds of that beyond our own window.
        let context = async_nats::jetstream::ContextBuilder::new()
            .timeout(ACK_TIMEOUT)
            .ack_timeout(ACK_TIMEOUT)
            .max_ack_inflight(js.acks_outstanding_max.max(1).saturating_mul(8))
            .build(client.clone());
        Some(Arc::new(JetStreamEndpoint {
            context,
            origin,
            options: js,
            timeout: options.request_timeout,
            window: tokio::sync::Mutex::new(Window::default()),
            outstanding_max: AtomicUsize::new(0),
            retransmitted: AtomicU64::new(0),
        }))
    }

    /// The most messages that were ever waiting for their acknowledgement at once;
    /// never more than [`JetStreamOptions::acks_outstanding_max`].
    pub(in crate::nats) fn outstanding_max(&self) -> usize {
        self.outstanding_max.load(Ordering::Relaxed)
    }

    async fn send(
        &self,
        subject: &str,
        payload: &Bytes,
        counter: u64,
    ) -> Result<PublishAckFuture, TransportError> {
        let message = PublishMessage::build()
            .payload(payload.clone())
            .header(ORIGIN_HEADER, format!("{} {counter}", self.origin));
        self.context
            .send_publish(subject.to_string(), message)
            .await
            .map_err(|e| TransportError::PersistenceFailed {
                operation: "JetStream publish".into(),
                reason: e.to_string(),
            })
    }

    /// Publishes one message (waiting for the oldest acknowledgement when the window is full).
    pub(in crate::nats) async fn publish(
        &self,
        subject: String,
        payload: Bytes,
    ) -> Result<(), TransportError> {
        let mut window = self.window.lock().await;
        let bound = self.options.acks_outstanding_max.max(1);
        while window.outstanding.len() >= bound {
            self.settle_oldest(&mut window).await?;
        }
        let counter = window.next_counter + 1;
        let ack = self.send(&subject, &payload, counter).await?;
        window.next_counter = counter;
        window.outstanding.push_back(Pending {
            subject,
            payload,
            counter,
            ack: Some(ack),
        });
        self.outstanding_max
            .fetch_max(window.outstanding.len(), Ordering::Relaxed);
        Ok(())
    }

    /// Waits for the oldest message's acknowledgement; when it fails, publishes every
    /// waiting message again, in order, until acknowledged or the timeout passes.
    async fn settle_oldest(&self, window: &mut Window) -> Result<(), TransportError> {
        let deadline = tokio::time::Instant::now() + self.timeout;
        let mut backoff = Duration::from_millis(10);
        loop {
            let Some(front) = window.outstanding.front_mut() else {
                return Ok(());
            };
            let error = match front.ack.take() {
                Some(ack) => match ack.await {
                    Ok(_) => {
                        window.outstanding.pop_front();
                        return Ok(());
                    }
                    Err(e) => e,
                },
                None => async_nats::jetstream::context::PublishError::new(PublishErrorKind::Other),
            };
            if tokio::time::Instant::now() + backoff >= deadline {
                return Err(TransportError::Timeout(self.timeout));
            }
            tracing::debug!(error = %error, waiting = window.outstanding.len(), "JetStream publish not acknowledged; publishing again");
            if !matches!(error.kind(), PublishErrorKind::TimedOut) {
                // A fast refusal (no stream yet after a restart, stream full): do not spin.
                tokio::time::sleep(backoff).await;
                backoff = (backoff * 2).min(Duration::from_secs(1));
            }
            for pending in window.outstanding.iter_mut() {
                // Dropping an old acknowledgement future is harmless.
                pending.ack = None;
            }
            for i in 0..window.outstanding.len() {
                let (subject, payload, counter) = {
                    let p = &window.outstanding[i];
                    (p.subject.clone(), p.payload.clone(), p.counter)
                };
                match self.send(&subject, &payload, counter).await {
                    Ok(ack) => window.outstanding[i].ack = Some(ack),
                    Err(e) => {
                        tracing::debug!(error = %e, "could not publish again");
                        break;
                    }
                }
                self.retransmitted.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Waits until every message published is acknowledged (bounded by the timeout);
    /// what is left is logged as lost.
    pub(in crate::nats) async fn drain(&self) {
        let mut window = self.window.lock().await;
        while !window.outstanding.is_empty() {
            if let Err(e) = self.settle_oldest(&mut window).await {
                tracing::warn!(error = %e, lost = window.outstanding.len(), "closing: JetStream did not acknowledge every message");
                return;
            }
        }
    }
}

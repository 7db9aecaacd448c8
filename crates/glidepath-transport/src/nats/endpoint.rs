//! `NatsEndpoint`: the `Endpoint` contract over one NATS connection (publish, one
//! wildcard subscription per federation, requests to the executive server, close).

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_nats::{Message, RequestErrorKind};
use bytes::Bytes;
use crossbeam_channel::Receiver;
use glidepath_core::{Envelope, ExecReply, ExecRequest, FederateHandle, FederationId, Topic};
use parking_lot::RwLock;
use tokio::sync::oneshot;

use crate::{monotonic_now_ns, Endpoint, EndpointStats, TransportError};

use super::cell_routes::FederationCells;
use super::{
    barrier, federation_wildcard, flow, frames, jetstream, parse_notified, read_federation,
    subscribe_error, topic_subject, FederationSubscription, NatsEndpoint, Notified, Reader,
    ERROR_HEADER, EXEC_SUBJECT, NOTIFIED_HEADER,
};
#[cfg(doc)]
use super::{JetStreamOptions, NatsOptions};

impl Notified {
    pub(super) fn record(&self, federation: FederationId, seq: u64) {
        let mut seen = self.seen.lock();
        let entry = seen.entry(federation).or_insert(0);
        if seq > *entry {
            *entry = seq;
            self.changed.notify_all();
        }
    }

    /// Waits until notification `seq` of `federation` was delivered; false on timeout.
    pub(super) fn wait(&self, federation: FederationId, seq: u64, deadline: Instant) -> bool {
        let mut seen = self.seen.lock();
        while seen.get(&federation).copied().unwrap_or(0) < seq {
            if self.changed.wait_until(&mut seen, deadline).timed_out() {
                return seen.get(&federation).copied().unwrap_or(0) >= seq;
            }
        }
        true
    }
}

impl FederationSubscription {
    /// Stops delivery at once; the reader task ends and drops the NATS subscription.
    pub(super) fn stop(&mut self) {
        self.filter.write().clear();
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }

    /// Stops, then waits (a little) for the reader task to have said goodbye.
    pub(super) async fn stop_and_wait(&mut self) {
        self.stop();
        if let Some(task) = self.task.take() {
            let _ = tokio::time::timeout(Duration::from_secs(1), task).await;
        }
    }
}

impl NatsEndpoint {
    pub(super) fn check_open(&self) -> Result<(), TransportError> {
        if self.closed.load(Ordering::Acquire) {
            Err(TransportError::Closed)
        } else {
            Ok(())
        }
    }

    /// Envelopes that never arrived, found as gaps in their senders' `seq`.
    pub fn lost_envelopes(&self) -> u64 {
        self.counters.lost.load(Ordering::Relaxed)
    }

    /// Sends the bundle being gathered, if any, then waits until the NATS server has
    /// read everything this endpoint sent before (publications and subscriptions);
    /// while the client is reconnecting, that includes reconnecting and
    /// resubscribing. Fails with [`TransportError::Timeout`] after
    /// [`NatsOptions::request_timeout`].
    pub fn flush(&self) -> Result<(), TransportError> {
        self.check_open()?;
        self.cells.sender.publish_all();
        let timeout = self.transport.options.request_timeout;
        self.transport.block_on(async {
            self.outgoing.flush().await?;
            barrier(&self.client, timeout).await
        })?;
        self.counters.take_permission_error()
    }

    /// With persistence, the most JetStream publications that ever waited for their
    /// acknowledgement at once (never above [`JetStreamOptions::acks_outstanding_max`]).
    pub fn jetstream_acks_outstanding_max(&self) -> Option<usize> {
        self.jetstream.as_ref().map(|js| js.outstanding_max())
    }

    /// The most envelopes this endpoint ever had published but not yet acknowledged
    /// by its slowest receiver in one federation (never above
    /// [`NatsOptions::window_envelopes`]); 0 without flow control.
    pub fn unacknowledged_max(&self) -> u64 {
        self.flow
            .as_ref()
            .map_or(0, |f| f.unacked_max.load(Ordering::Relaxed))
    }

    /// How many times a publication waited for a receiver to acknowledge.
    pub fn credit_waits(&self) -> u64 {
        self.flow
            .as_ref()
            .map_or(0, |f| f.credit_waits.load(Ordering::Relaxed))
    }

    /// Messages this endpoint dropped because they failed authentication.
    pub fn rejected_frames(&self) -> u64 {
        self.counters.rejected.load(Ordering::Relaxed)
    }

    /// Sends a request to the executive. "No responders" after the executive server
    /// has answered any endpoint of this transport means the executive server is reconnecting (after a NATS server restart,
    /// say): then the request is repeated, backing off, until the request timeout.
    pub(super) async fn exec_request(
        &self,
        payload: Bytes,
    ) -> Result<Message, async_nats::RequestError> {
        let deadline = tokio::time::Instant::now() + self.transport.options.request_timeout;
        let mut backoff = Duration::from_millis(5);
        loop {
            let sent = match self.outgoing.sender_headers(&payload) {
                None => self.client.request(EXEC_SUBJECT, payload.clone()).await,
                Some(headers) => {
                    self.client
                        .request_with_headers(EXEC_SUBJECT, headers, payload.clone())
                        .await
                }
            };
            match sent {
                Err(e)
                    if e.kind() == RequestErrorKind::NoResponders
                        && self.transport.answered.load(Ordering::Relaxed)
                        && tokio::time::Instant::now() + backoff < deadline =>
                {
                    tracing::debug!("no executive server answers yet; asking again in {backoff:?}");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(Duration::from_millis(500));
                }
                Ok(message) => {
                    self.transport.answered.store(true, Ordering::Relaxed);
                    return Ok(message);
                }
                other => return other,
            }
        }
    }

    pub(super) fn request_error(&self, e: async_nats::RequestError) -> TransportError {
        let options = &self.transport.options;
        match e.kind() {
            RequestErrorKind::TimedOut => TransportError::Timeout(options.request_timeout),
            RequestErrorKind::NoResponders => TransportError::NoExecutive {
                url: super::redact_url(&self.transport.url),
                subject: EXEC_SUBJECT.to_string(),
            },
            RequestErrorKind::MaxPayloadExceeded => TransportError::PayloadTooLarge {
                what: "request",
                max_payload_bytes: self.client.server_info().max_payload,
            },
            _ => TransportError::ConnectionFailed {
                operation: "request to the executive",
                reason: e.to_string(),
            },
        }
    }
}

impl Endpoint for NatsEndpoint {
    fn publish(
        &self,
        federation: FederationId,
        topic: Topic,
        mut envelope: Envelope,
    ) -> Result<(), TransportError> {
        self.check_open()?;
        self.counters.take_permission_error()?;
        if envelope.publish_time_ns == 0 {
            envelope.publish_time_ns = monotonic_now_ns();
        }
        let payload = glidepath_wire::encode_envelope(&envelope);
        let subject = topic_subject(federation, topic);
        if let Some(js) = &self.jetstream {
            // The same payload as core NATS carries: a plain envelope, or a frame of
            // the encoder chain (never a bundle: refused with persistence).
            let payload = self.transport.codec.seal(Some(topic), payload)?;
            return self.transport.block_on(js.publish(subject, payload));
        }
        if let Some(flow) = &self.flow {
            if envelope.sender != FederateHandle::EXECUTIVE {
                let route = self.cells.route(federation, &envelope);
                // Kept first (perhaps waiting for credit, while the account thread
                // may still publish what releases it), then published.
                flow.admit(federation, &envelope, topic, &payload)?;
                if let Some(route) = route {
                    return self.cells.publish(
                        &self.client,
                        federation,
                        topic,
                        &envelope,
                        payload,
                        route,
                    );
                }
                self.cells.before_main(federation, envelope.sender);
            }
        }
        if !self.transport.codec.plain() {
            // Bundling and the chain; a plain executor as below, for the same reason.
            return futures::executor::block_on(self.outgoing.publish(subject, topic, payload));
        }
        // Publishing only queues a command for the connection task, which needs no
        // runtime context: a plain executor polls it, and waits (parked) only when
        // the client's queue is full. Cheaper than entering the runtime each time.
        futures::executor::block_on(self.client.publish(subject, payload))
            .map_err(|e| frames::publish_error(&self.client, &e))
    }

    fn subscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        let mut state = self.state.lock();
        let Some(inbox) = state.inbox_tx.clone() else {
            return Err(TransportError::Closed);
        };
        if let Some(sub) = state.federations.get_mut(&federation) {
            if sub.topics.insert(topic) {
                sub.filter.write().insert(topic);
            }
            if let Some(fc) = &mut sub.cells {
                self.cells_subscribed(federation, fc, topic)?;
            }
            return Ok(());
        }
        if let Some(js) = &self.jetstream {
            let sub = jetstream::subscribe(self, js, federation, topic, inbox)?;
            state.federations.insert(federation, sub);
            return Ok(());
        }
        let transport = &self.transport;
        let subscriber = transport
            .block_on(self.client.subscribe(federation_wildcard(federation)))
            .map_err(subscribe_error)?;
        let filter = Arc::new(RwLock::new(HashSet::from([topic])));
        let (stop_tx, stop_rx) = oneshot::channel();
        let receiver = self.window.enabled().then(|| {
            flow::Receiver::new(
                federation,
                self.token,
                self.window,
                self.client.clone(),
                transport.codec.clone(),
            )
        });
        let retransmissions = match &receiver {
            Some(r) => Some(
                transport
                    .block_on(self.client.subscribe(r.retx_subject()))
                    .map_err(subscribe_error)?,
            ),
            None => None,
        };
        let (cell_tx, cell_rx) = tokio::sync::mpsc::unbounded_channel();
        let mut fc = FederationCells::new(cell_tx);
        let task = transport.runtime.handle().spawn(read_federation(
            Reader {
                cell_view: fc.view.clone(),
                arrivals: Default::default(),
                federation,
                filter: filter.clone(),
                inbox,
                counters: self.counters.clone(),
                notified: self.notified.clone(),
                last_seq: HashMap::new(),
                codec: transport.codec.clone(),
                receiver,
                flow: self.flow.clone(),
            },
            subscriber,
            retransmissions,
            Some(cell_rx),
            stop_rx,
        ));
        if let Err(e) = self.cells_subscribed(federation, &mut fc, topic) {
            let _ = stop_tx.send(());
            return Err(e);
        }
        let mut sub = FederationSubscription {
            cells: Some(fc),
            topics: HashSet::from([topic]),
            filter,
            stop: Some(stop_tx),
            task: Some(task),
        };
        if let Err(e) = transport.block_on(barrier(&self.client, transport.options.request_timeout))
        {
            sub.stop();
            return Err(e);
        }
        state.federations.insert(federation, sub);
        Ok(())
    }

    fn unsubscribe(&self, federation: FederationId, topic: Topic) -> Result<(), TransportError> {
        let mut state = self.state.lock();
        if state.inbox_tx.is_none() {
            return Err(TransportError::Closed);
        }
        let Some(sub) = state.federations.get_mut(&federation) else {
            return Ok(());
        };
        if sub.topics.remove(&topic) {
            sub.filter.write().remove(&topic);
            if let Some(fc) = &mut sub.cells {
                NatsEndpoint::cells_unsubscribed(fc, topic);
            }
            if sub.topics.is_empty() {
                if let Some(mut sub) = state.federations.remove(&federation) {
                    sub.stop();
                }
            }
        }
        Ok(())
    }

    fn set_interest(
        &self,
        federation: FederationId,
        topic: Topic,
        regions: Option<glidepath_core::RegionSet>,
    ) -> Result<(), TransportError> {
        let mut state = self.state.lock();
        if state.inbox_tx.is_none() {
            return Err(TransportError::Closed);
        }
        match state
            .federations
            .get_mut(&federation)
            .and_then(|s| s.cells.as_mut())
        {
            Some(fc) => self.cells_told(federation, fc, topic, regions),
            None => Ok(()),
        }
    }

    fn set_dimensions(
        &self,
        federation: FederationId,
        dimensions: &[(glidepath_core::DimensionHandle, String, u64)],
    ) -> Result<(), TransportError> {
        if !self.cells.set_grid(federation, dimensions)? {
            return Ok(());
        }
        let mut state = self.state.lock();
        if let Some(sub) = state.federations.get_mut(&federation) {
            let topics: Vec<Topic> = sub.topics.iter().copied().collect();
            if let Some(fc) = &mut sub.cells {
                for topic in topics {
                    self.cells_subscribed(federation, fc, topic)?;
                }
            }
        }
        Ok(())
    }

    fn request(&self, request: ExecRequest) -> Result<ExecReply, TransportError> {
        self.check_open()?;
        let payload = self
            .transport
            .codec
            .seal(None, Bytes::from(glidepath_wire::encode_request(&request)))?;
        let message: Message = self
            .transport
            .block_on(self.exec_request(payload))
            .map_err(|e| self.request_error(e))?;
        let header = |name: &str| {
            message
                .headers
                .as_ref()
                .and_then(|h| h.get(name))
                .map(|v| v.as_str().to_string())
        };
        if let Some(error) = header(ERROR_HEADER) {
            return Err(TransportError::ExecutiveFailed { message: error });
        }
        let body = self.transport.codec.open(&message.payload).map_err(|e| {
            TransportError::UnexpectedReply {
                what: "unreadable",
                reason: e.to_string(),
            }
        })?;
        let reply =
            glidepath_wire::decode_reply(&body).map_err(|e| TransportError::UnexpectedReply {
                what: "undecodable",
                reason: e.to_string(),
            })?;
        // A joined federate answers the executive server's liveness probes until it
        // resigns (`alive`).
        match (&request, &reply) {
            (ExecRequest::Join { federation, .. }, ExecReply::Joined { federate, .. }) => {
                self.alive.start(
                    &self.client,
                    self.transport.runtime.handle(),
                    *federation,
                    *federate,
                )
            }
            (
                ExecRequest::Resign {
                    federation,
                    federate,
                    ..
                },
                ExecReply::Resigned { .. },
            ) => self.alive.stop(*federation, *federate),
            _ => {}
        }
        if let Some((federation, seq)) = header(NOTIFIED_HEADER).as_deref().and_then(parse_notified)
        {
            // As on inproc: the notifications this request caused are in our inbox
            // before the reply returns, if we listen to that federation at all.
            if self.state.lock().federations.contains_key(&federation) {
                let deadline = Instant::now() + self.transport.options.request_timeout;
                if !self.notified.wait(federation, seq, deadline) {
                    tracing::warn!(
                        federation = federation.0,
                        seq,
                        "executive notification did not arrive before the reply; counted as lost"
                    );
                }
            }
        }
        Ok(reply)
    }

    fn inbox(&self) -> &Receiver<Envelope> {
        &self.inbox
    }

    fn close(&self) {
        self.closed.store(true, Ordering::Release);
        let mut state = self.state.lock();
        if state.inbox_tx.take().is_none() {
            return;
        }
        let transport = self.transport.clone();
        let client = self.client.clone();
        let timeout = transport.options.request_timeout;
        let mut federations: Vec<FederationSubscription> =
            state.federations.drain().map(|(_, s)| s).collect();
        let outgoing = self.outgoing.clone();
        let timer_stop = self.timer_stop.lock().take();
        let jetstream = self.jetstream.clone();
        let flow = self.flow.clone();
        let flow_stop = self.flow_stop.lock().take();
        // What went to cells is accounted for before anything else closes.
        self.cells.sender.close();
        self.alive.stop_all();
        let finish = async move {
            // With persistence: until the stream has acknowledged everything.
            if let Some(js) = &jetstream {
                js.drain().await;
            }
            // The bundle being gathered goes first; nothing new can join it (closed).
            if let Err(e) = outgoing.flush().await {
                tracing::warn!(error = %e, "closing a NATS endpoint: could not send the last bundle");
            }
            if let Some(stop) = timer_stop {
                let _ = stop.send(());
            }
            // Everything published before is at the server once the round trip is back.
            if let Err(e) = barrier(&client, timeout).await {
                tracing::warn!(error = %e, "closing a NATS endpoint: could not confirm that the server has everything it published");
            }
            // Reliable over core NATS: until every receiver has acknowledged everything
            // (retransmitting meanwhile), or the request timeout.
            if let Some(flow) = &flow {
                let deadline = tokio::time::Instant::now() + timeout;
                while !flow.all_acknowledged() {
                    if tokio::time::Instant::now() >= deadline {
                        tracing::warn!("closing a NATS endpoint: receivers did not acknowledge everything within {timeout:?}");
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
                flow.close();
            }
            if let Some(stop) = flow_stop {
                let _ = stop.send(());
            }
            for sub in &mut federations {
                sub.stop_and_wait().await;
            }
            let _ = tokio::time::timeout(timeout, client.drain()).await;
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            // Dropped inside some async task: cannot block here, so finish in the background.
            transport.runtime.handle().spawn(finish);
        } else {
            transport.block_on(finish);
        }
    }

    fn stats(&self) -> EndpointStats {
        EndpointStats {
            lost_envelopes: self.counters.lost.load(Ordering::Relaxed),
            malformed_envelopes: self.counters.malformed.load(Ordering::Relaxed)
                + self
                    .flow
                    .as_ref()
                    .map_or(0, |f| f.malformed_controls.load(Ordering::Relaxed)),
            slow_consumer_events: self.counters.slow_consumer.load(Ordering::Relaxed),
            rejected_frames: self.counters.rejected.load(Ordering::Relaxed),
            permission_violations: self.counters.permission_denied.load(Ordering::Relaxed),
            best_effort_dropped: self.counters.best_effort_dropped.load(Ordering::Relaxed),
            duplicates_dropped: self.counters.duplicates.load(Ordering::Relaxed),
            retransmitted: self
                .flow
                .as_ref()
                .map_or(0, |f| f.retransmitted.load(Ordering::Relaxed)),
            receivers_given_up: self
                .flow
                .as_ref()
                .map_or(0, |f| f.peers_given_up.load(Ordering::Relaxed)),
            gone_notices: self
                .flow
                .as_ref()
                .map_or(0, |f| f.gone_notices.load(Ordering::Relaxed)),
            stream_consumer_restarts: self.counters.consumer_restarts.load(Ordering::Relaxed),
            wire_in_messages: self.client.statistics().in_messages.load(Ordering::Relaxed),
            wire_in_bytes: self.client.statistics().in_bytes.load(Ordering::Relaxed),
        }
    }

    /// Hands the bundle being gathered to the client, without the round trip through
    /// the server that [`NatsEndpoint::flush`] makes: the front crate calls this on
    /// every time advance request, where a round trip would only add latency (the
    /// client sends what it holds on its own).
    fn flush(&self) -> Result<(), TransportError> {
        self.check_open()?;
        self.cells.sender.publish_all();
        self.transport.block_on(self.outgoing.flush())?;
        self.counters.take_permission_error()
    }
}

impl Drop for NatsEndpoint {
    fn drop(&mut self) {
        self.close();
    }
}

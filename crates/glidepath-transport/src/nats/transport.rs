//! `NatsTransport`: the tokio runtime its endpoints share, their connections to the
//! NATS server (`connect_client`) and the round trip that proves the server has read
//! everything sent before (`barrier`).

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use async_nats::{Client, ConnectOptions, Event, RequestErrorKind};
use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::oneshot;

use crate::{Endpoint, Transport, TransportError};

use super::security;
use super::{
    flow, frames, jetstream, Counters, EndpointState, FrameCodec, NatsEndpoint, NatsOptions,
    NatsTransport, Notified, Outgoing, Persistence, RuntimeHolder, TransportInner, BARRIER_SUBJECT,
};

impl RuntimeHolder {
    pub(super) fn handle(&self) -> &tokio::runtime::Handle {
        self.0.as_ref().expect("present until dropped").handle()
    }
}

impl Drop for RuntimeHolder {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

impl TransportInner {
    /// Runs a future to completion on our runtime from a plain thread.
    pub(super) fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.handle().block_on(future)
    }
}

impl std::fmt::Debug for NatsTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NatsTransport")
            .field("url", &super::redact_url(&self.inner.url))
            .finish_non_exhaustive()
    }
}

impl NatsTransport {
    /// A transport to the NATS server at `url` (`nats://host:port`) with default
    /// options; fails when the server cannot be reached.
    pub fn connect(url: &str) -> Result<NatsTransport, TransportError> {
        NatsTransport::connect_with(url, NatsOptions::default())
    }

    /// [`NatsTransport::connect`] with options.
    pub fn connect_with(url: &str, options: NatsOptions) -> Result<NatsTransport, TransportError> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(options.runtime_workers.max(1))
            .thread_name("glidepath-nats")
            .enable_all()
            .build()
            .map_err(|e| TransportError::Io {
                what: "the NATS runtime",
                reason: e.to_string(),
            })?;
        let codec = Arc::new(FrameCodec::new(options.messaging.clone())?);
        // The JetStream path seals each envelope with the encoder chain (compression,
        // key) but has no bundler: its acknowledgement window and per-origin counters
        // count single envelopes. Refuse bundling rather than bypass it silently.
        if codec.options().bundling() && options.persistence != Persistence::None {
            return Err(TransportError::InvalidConfiguration(
                "JetStream persistence cannot be combined with bundling (compression and a federation key are fine): set bundle_bytes_max to 0".into(),
            ));
        }
        let inner = Arc::new(TransportInner {
            url: url.to_string(),
            codec,
            options,
            runtime: RuntimeHolder(Some(runtime)),
            next_endpoint: AtomicU64::new(1),
            answered: AtomicBool::new(false),
        });
        // Connect once now, so a wrong URL or a missing server is reported here.
        let probe = inner.block_on(connect_client(
            &inner.url,
            &inner.options,
            "glidepath-probe".into(),
            Arc::new(Counters::default()),
        ))?;
        inner.block_on(async {
            let _ = tokio::time::timeout(inner.options.request_timeout, probe.drain()).await;
        });
        Ok(NatsTransport { inner })
    }

    /// The NATS server URL.
    pub fn url(&self) -> &str {
        &self.inner.url
    }

    /// Opens an endpoint with its concrete type (for its loss counters).
    pub fn open_endpoint(&self) -> Result<NatsEndpoint, TransportError> {
        let inner = &self.inner;
        let id = inner.next_endpoint.fetch_add(1, Ordering::Relaxed);
        let counters = Arc::new(Counters::default());
        let name = format!("glidepath-endpoint-{}-{id}", std::process::id());
        let client = inner.block_on(connect_client(
            &inner.url,
            &inner.options,
            name.clone(),
            counters.clone(),
        ))?;
        let (tx, rx) = crossbeam_channel::unbounded();
        let outgoing = Arc::new(Outgoing::new(inner.codec.clone(), client.clone(), name));
        let window = flow::Window {
            envelopes: inner.options.window_envelopes,
            bytes: inner.options.window_bytes.max(1),
        };
        let flow =
            (window.enabled() && inner.options.persistence == Persistence::None).then(|| {
                flow::Flow::new(
                    window,
                    client.clone(),
                    inner.codec.clone(),
                    inner.runtime.handle().clone(),
                )
            });
        let flow_stop = flow.as_ref().map(|flow| {
            let (stop_tx, mut stop_rx) = oneshot::channel::<()>();
            let flow = flow.clone();
            inner.runtime.handle().spawn(async move {
                let mut tick = tokio::time::interval(Duration::from_millis(20));
                tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
                loop {
                    tokio::select! {
                        biased;
                        _ = &mut stop_rx => break,
                        _ = tick.tick() => flow.tick().await,
                    }
                }
            });
            stop_tx
        });
        let timer_stop = if inner.codec.options().bundling() {
            let (stop_tx, stop_rx) = oneshot::channel();
            inner
                .runtime
                .handle()
                .spawn(frames::run_timer(outgoing.clone(), stop_rx));
            Some(stop_tx)
        } else {
            None
        };
        let cells = super::cell_routes::Cells::new(
            flow.is_some() && inner.codec.plain(),
            inner.options.ddm_cells,
            inner.options.ddm_dimensions.clone(),
            client.clone(),
        );
        Ok(NatsEndpoint {
            cells,
            alive: Default::default(),
            jetstream: jetstream::JetStreamEndpoint::new(
                &client,
                inner.runtime.handle(),
                &inner.options,
            ),
            outgoing,
            timer_stop: Mutex::new(timer_stop),
            client,
            transport: inner.clone(),
            inbox: rx,
            closed: AtomicBool::new(false),
            state: Mutex::new(EndpointState {
                inbox_tx: Some(tx),
                federations: HashMap::new(),
            }),
            counters,
            notified: Arc::new(Notified::default()),
            flow,
            flow_stop: Mutex::new(flow_stop),
            token: flow::new_token(),
            window,
        })
    }
}

impl Transport for NatsTransport {
    fn open(&self) -> Result<Box<dyn Endpoint>, TransportError> {
        Ok(Box::new(self.open_endpoint()?))
    }

    fn name(&self) -> &'static str {
        "nats"
    }
}

/// Opens one connection with our options; `counters` hears of slow-consumer drops.
pub(super) async fn connect_client(
    url: &str,
    options: &NatsOptions,
    name: String,
    counters: Arc<Counters>,
) -> Result<Client, TransportError> {
    let conn_name = name.clone();
    let base = ConnectOptions::new()
        .no_echo()
        .name(name)
        .subscription_capacity(options.subscription_capacity)
        .client_capacity(options.client_capacity)
        .connection_timeout(options.connect_timeout)
        .request_timeout(Some(options.request_timeout))
        .event_callback(move |event| {
            let counters = counters.clone();
            let conn_name = conn_name.clone();
            async move {
                match event {
                    Event::SlowConsumer(sid) => {
                        counters.slow_consumer.fetch_add(1, Ordering::Relaxed);
                        tracing::warn!(connection = %conn_name, sid, "NATS client dropped messages: slow consumer");
                    }
                    Event::Disconnected => {
                        tracing::warn!(connection = %conn_name, "disconnected from the NATS server; reconnecting")
                    }
                    Event::Connected => {
                        tracing::debug!(connection = %conn_name, "connected to the NATS server")
                    }
                    Event::ServerError(async_nats::ServerError::Other(e))
                        if e.to_ascii_lowercase().contains("permissions violation") =>
                    {
                        *counters.permission_detail.lock() = e.clone();
                        counters.permission_denied.fetch_add(1, Ordering::AcqRel);
                        tracing::warn!(connection = %conn_name, error = %e, "the NATS server refused an operation: permissions");
                    }
                    Event::ServerError(e) => {
                        tracing::warn!(connection = %conn_name, error = %e, "NATS server error")
                    }
                    Event::ClientError(e) => {
                        tracing::warn!(connection = %conn_name, error = %e, "NATS client error")
                    }
                    other => tracing::debug!(connection = %conn_name, event = %other, "NATS event"),
                }
            }
        })
        ;
    let (connect, servers) = options.security.configure(base, url).await?;
    connect
        .connect(servers.as_slice())
        .await
        .map_err(|e| security::connect_error(url, e))
}

/// The [`TransportError`] of a failed subscription.
pub(super) fn subscribe_error(e: async_nats::SubscribeError) -> TransportError {
    TransportError::ConnectionFailed {
        operation: "subscribe",
        reason: e.to_string(),
    }
}

/// A round trip through the NATS server: when it returns `Ok`, the server has read
/// everything this client sent before it (a subscription made before is effective
/// there; `Client::flush` only empties the socket buffer). `timeout` is the client's
/// request timeout, for the error.
pub async fn barrier(client: &Client, timeout: Duration) -> Result<(), TransportError> {
    match client.request(BARRIER_SUBJECT, Bytes::new()).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == RequestErrorKind::NoResponders => Ok(()),
        Err(e) if e.kind() == RequestErrorKind::TimedOut => Err(TransportError::Timeout(timeout)),
        Err(e) => Err(TransportError::ConnectionFailed {
            operation: "round trip through the NATS server",
            reason: e.to_string(),
        }),
    }
}

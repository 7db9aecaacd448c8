//! Helpers shared by the NATS backend's test files: test envelopes, creating a
//! federation, waiting for one envelope, and a raw NATS connection that injects bytes
//! and watches what really travels.
#![allow(dead_code)]

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use glidepath_core::{
    Body, Envelope, ExecReply, ExecRequest, FederateHandle, FederationId, Fom,
    InteractionClassHandle, OrderType, ParameterHandle, Topic, TransportationType,
};
use glidepath_transport::nats::subject::federation_wildcard;
use glidepath_transport::{Endpoint, NatsEndpoint, TransportError};

/// The topic the tests publish on.
pub const TOPIC: Topic = Topic::InteractionClass(InteractionClassHandle(1));

/// An interaction envelope from `sender` with `seq` carrying `payload`.
pub fn envelope_with(sender: u32, seq: u64, payload: Bytes) -> Envelope {
    Envelope {
        sender: FederateHandle(sender),
        seq,
        publish_time_ns: 1,
        body: Body::Interaction {
            class: InteractionClassHandle(1),
            values: Arc::from(vec![(ParameterHandle(1), payload)]),
            tag: Bytes::new(),
            order: OrderType::Receive,
            transport: TransportationType::Reliable,
            time: None,
            regions: None,
        },
    }
}

/// An interaction envelope with a fixed small payload.
pub fn data(sender: u32, seq: u64) -> Envelope {
    envelope_with(sender, seq, Bytes::from_static(b"payload"))
}

/// Creates a federation on an empty FOM; a refusal by the executive panics.
pub fn try_create(endpoint: &dyn Endpoint, name: &str) -> Result<FederationId, TransportError> {
    match endpoint.request(ExecRequest::Create {
        name: name.into(),
        fom: Arc::new(Fom::default()),
    })? {
        ExecReply::Created { id } => Ok(id),
        other => panic!("create: {other:?}"),
    }
}

/// Creates a federation; any failure panics.
pub fn create(endpoint: &dyn Endpoint, name: &str) -> FederationId {
    try_create(endpoint, name).unwrap_or_else(|e| panic!("create {name}: {e}"))
}

/// Waits up to `timeout` for the next envelope and checks it is (`sender`, `seq`).
pub fn expect_within(
    endpoint: &NatsEndpoint,
    sender: u32,
    seq: u64,
    timeout: Duration,
) -> Envelope {
    let env = endpoint
        .inbox()
        .recv_timeout(timeout)
        .unwrap_or_else(|e| panic!("waiting for ({sender}, {seq}): {e}"));
    assert_eq!(
        (env.sender, env.seq),
        (FederateHandle(sender), seq),
        "{env:?}"
    );
    env
}

/// A raw NATS connection on its own runtime (which runs only inside `block_on`).
pub struct Raw {
    runtime: tokio::runtime::Runtime,
    client: async_nats::Client,
}

impl Raw {
    /// Connects to `url`.
    pub fn connect(url: &str) -> Raw {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let client = runtime.block_on(async_nats::connect(url)).unwrap();
        Raw { runtime, client }
    }

    /// Publishes and flushes: the NATS server has it when this returns.
    pub fn publish(&self, subject: String, payload: impl Into<Bytes>) {
        self.runtime.block_on(async {
            self.client.publish(subject, payload.into()).await.unwrap();
            self.client.flush().await.unwrap();
        });
    }

    /// Publishes with one header and flushes.
    pub fn publish_with_header(&self, subject: String, header: (&str, &str), payload: Bytes) {
        self.runtime.block_on(async {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert(header.0, header.1);
            self.client
                .publish_with_headers(subject, headers, payload)
                .await
                .unwrap();
            self.client.flush().await.unwrap();
        });
    }

    /// Subscribes one subject; effective when this returns.
    pub fn subscribe_subject(&self, subject: String) -> async_nats::Subscriber {
        self.runtime.block_on(async {
            let s = self.client.subscribe(subject).await.unwrap();
            self.client.flush().await.unwrap();
            s
        })
    }

    /// A request with a static payload.
    pub fn request(&self, subject: &str, payload: &'static [u8]) -> async_nats::Message {
        self.runtime
            .block_on(
                self.client
                    .request(subject.to_string(), Bytes::from_static(payload)),
            )
            .unwrap()
    }

    /// Subscribes a federation's subjects; effective when this returns.
    pub fn subscribe(&self, federation: FederationId) -> async_nats::Subscriber {
        self.runtime.block_on(async {
            let s = self
                .client
                .subscribe(federation_wildcard(federation))
                .await
                .unwrap();
            glidepath_transport::nats::barrier(&self.client, Duration::from_secs(10))
                .await
                .unwrap();
            s
        })
    }

    /// The next message of a subscription, waiting up to `timeout`.
    pub fn next(
        &self,
        subscriber: &mut async_nats::Subscriber,
        timeout: Duration,
    ) -> async_nats::Message {
        self.runtime
            .block_on(async { tokio::time::timeout(timeout, subscriber.next()).await })
            .expect("a NATS message in time")
            .expect("subscription open")
    }
}

/// A JetStream store directory under the system's temporary directory, unique in
/// this process (`what` names the test), removed on drop.
pub struct StoreDir(pub std::path::PathBuf);

impl StoreDir {
    pub fn new(what: &str) -> StoreDir {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let path = std::env::temp_dir().join(format!(
            "glidepath-{what}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        StoreDir(path)
    }

    /// The path, as a `--store_dir` argument.
    pub fn arg(&self) -> &str {
        self.0.to_str().expect("a UTF-8 temporary directory")
    }
}

impl Drop for StoreDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

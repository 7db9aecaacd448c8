//! The raw NATS peer's runtime and clients, which every suite's raw NATS run uses.

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::{anyhow, Context};
use bytes::Bytes;

/// The raw NATS peer's plumbing: a two-worker tokio runtime (the same size as the
/// glidepath NATS transport's) and clients with the same settings as glidepath's
/// connections, so that only glidepath differs between the two measurements.
pub struct RawNats {
    url: String,
    security: glidepath::NatsSecurity,
    runtime: tokio::runtime::Runtime,
}

impl std::fmt::Debug for RawNats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawNats")
            .field("url", &glidepath::redact_url(&self.url))
            .finish()
    }
}

impl RawNats {
    /// A runtime for raw clients of the NATS server at `url`; checks that the
    /// server answers.
    pub fn new(url: &str, security: &glidepath::NatsSecurity) -> anyhow::Result<RawNats> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("bench-raw-nats")
            .enable_all()
            .build()
            .context("starting the raw NATS peer's runtime")?;
        let raw = RawNats {
            url: url.to_string(),
            security: security.clone(),
            runtime,
        };
        let url = glidepath::redact_url(url);
        raw.block_on(async {
            let client = raw.connect().await?;
            client
                .flush()
                .await
                .map_err(|e| anyhow!("no answer from the NATS server at {url}: {e}"))
        })?;
        Ok(raw)
    }

    /// The NATS server's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Connects a new client (call inside [`RawNats::block_on`] or a spawned task).
    pub async fn connect(&self) -> anyhow::Result<async_nats::Client> {
        let base = async_nats::ConnectOptions::new()
            .subscription_capacity(4 << 20)
            .client_capacity(64 << 10)
            .connection_timeout(Duration::from_secs(5))
            .no_echo();
        let (options, servers) = self.security.configure(base, &self.url).await?;
        options.connect(servers.as_slice()).await.map_err(|e| {
            anyhow!(
                "cannot connect to the NATS server at {}: {e}",
                glidepath::redact_url(&self.url)
            )
        })
    }

    /// Runs a future on the runtime from a plain thread.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        self.runtime.block_on(future)
    }

    /// The runtime's handle, to spawn tasks or drive futures from several threads.
    pub fn handle(&self) -> &tokio::runtime::Handle {
        self.runtime.handle()
    }
}

/// Makes everything `client` sent so far, subscriptions included, effective at the
/// server. `Client::flush` only empties the socket buffer, so without this a
/// publisher on another connection can beat a fresh subscription to the server and
/// its first messages go nowhere. A request nobody answers comes back "no
/// responders" only after the server has processed what preceded it on this
/// connection.
pub async fn settle(client: &async_nats::Client) -> anyhow::Result<()> {
    static SETTLES: AtomicU64 = AtomicU64::new(0);
    let subject = format!(
        "glidepath-bench.settle.{}.{}",
        std::process::id(),
        SETTLES.fetch_add(1, Ordering::Relaxed)
    );
    match client.request(subject, Bytes::new()).await {
        Ok(_) => Ok(()),
        Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => Ok(()),
        Err(e) => Err(anyhow!("round trip to the NATS server failed: {e}")),
    }
}

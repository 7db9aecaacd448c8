//! Federation saves kept in a JetStream object store bucket: the NATS executive
//! server's [`SaveStore`], so a federation can be restored after every one of its
//! processes died, the executive server's included.
//!
//! # Layout
//!
//! One bucket, [`SAVE_BUCKET`] (`GLIDEPATH_SAVES`, the stream `OBJ_GLIDEPATH_SAVES`),
//! file storage, as many replicas as [`NatsOptions::save_replicas`] (the CLI's
//! `--stream-replicas`), created by the first executive server that needs it and
//! kept as it is afterwards. One object per save, named by [`object_name`]:
//! `FEDERATION/LABEL`, each part escaped so that any federation name and label map
//! to one object name and back (letters, digits, `-` and `_` stay; every other byte
//! becomes `=XX`, so `/`, `.` and `=` never appear unescaped). The object's bytes
//! are the encoded [`glidepath_core::SavedFederation`] (`docs/save-format.md`); the
//! object store checks them against their SHA-256 digest when they are read back.
//!
//! # Sync over async
//!
//! [`SaveStore`] is synchronous and the executive calls it from inside its request
//! loop, on the server's single-threaded runtime. A NATS connection is driven by the
//! runtime it was made on, so the store has a connection and a runtime of its own
//! on a thread of its own: a call sends the job there and waits for the answer, at
//! most [`NatsOptions::request_timeout`]. The executive handles requests one at a
//! time anyway, so waiting blocks nothing that could have run meanwhile.
//!
//! # With executive failover
//!
//! Every replica applies every logged request, saves included, but only the active
//! server writes the bucket: a lagging standby writing an older save over a newer
//! one of the same label would be wrong. A standby [`holds`](BucketSaveStore::hold)
//! the saves it applies in memory (and reads them first, so it sees the saves in
//! the log's order); on taking over it [`writes`](BucketSaveStore::release) those
//! the bucket does not hold as they are (the old active server may have died between
//! logging a save and writing it), then writes and reads the bucket.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use async_nats::jetstream::{self, object_store};
use glidepath_core::{ExecutiveHost, SaveStore, SaveStoreError};
use parking_lot::Mutex;
use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;

use super::{connect_client, Counters, NatsOptions};
use crate::TransportError;

/// The JetStream object store bucket federation saves are kept in.
pub const SAVE_BUCKET: &str = "GLIDEPATH_SAVES";

/// The object a save of `federation` labelled `label` is kept in:
/// `escape(federation)/escape(label)`, where letters, digits, `-` and `_` stay and
/// every other byte becomes `=XX` (two upper-case hex digits).
pub fn object_name(federation: &str, label: &str) -> String {
    format!("{}/{}", escape(federation), escape(label))
}

fn escape(name: &str) -> String {
    crate::save_dir::escape_save_name(name, '=')
}

type Answer<T> = std::sync::mpsc::Sender<Result<T, String>>;

enum Job {
    Put {
        name: String,
        bytes: Vec<u8>,
        answer: Answer<()>,
    },
    Get {
        name: String,
        answer: Answer<Option<Vec<u8>>>,
    },
}

/// Saves held by a standby: `Some` while holding, keyed by federation and label.
type Held = Option<BTreeMap<(String, String), Vec<u8>>>;

/// Federation saves in the JetStream object store bucket [`SAVE_BUCKET`]. Cheap to
/// clone; clones share the connection and what a standby holds. The connection
/// closes when the last clone is dropped.
#[derive(Clone)]
pub struct BucketSaveStore {
    jobs: mpsc::UnboundedSender<Job>,
    url: String,
    timeout: Duration,
    held: Arc<Mutex<Held>>,
}

impl std::fmt::Debug for BucketSaveStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BucketSaveStore")
            .field("url", &self.url)
            .field("bucket", &SAVE_BUCKET)
            .finish_non_exhaustive()
    }
}

impl BucketSaveStore {
    /// Connects to the NATS server at `url` with `options` (security, timeouts) and
    /// opens the bucket, creating it with [`NatsOptions::save_replicas`] replicas
    /// when it does not exist. Fails with [`TransportError::PersistenceFailed`]
    /// naming the bucket when the server (or the account) has no JetStream or the
    /// bucket cannot be opened or created, and with the connection's error when
    /// nothing answers at `url`.
    pub fn open(url: &str, options: &NatsOptions) -> Result<BucketSaveStore, TransportError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| TransportError::Io {
                what: "the save store's runtime",
                reason: e.to_string(),
            })?;
        let (jobs, mut queue) = mpsc::unbounded_channel::<Job>();
        let (ready_tx, ready_rx) = std::sync::mpsc::channel();
        let thread_url = url.to_string();
        let thread_options = options.clone();
        let timeout = options.request_timeout;
        thread::Builder::new()
            .name("glidepath-saves".into())
            .spawn(move || {
                runtime.block_on(async move {
                    let bucket = match open_bucket(&thread_url, &thread_options).await {
                        Ok(bucket) => bucket,
                        Err(e) => {
                            let _ = ready_tx.send(Err(e));
                            return;
                        }
                    };
                    let _ = ready_tx.send(Ok(()));
                    // Ends when the last clone of the store is dropped.
                    while let Some(job) = queue.recv().await {
                        match job {
                            Job::Put {
                                name,
                                bytes,
                                answer,
                            } => {
                                let put =
                                    tokio::time::timeout(timeout, put(&bucket, &name, &bytes));
                                let _ = answer.send(put.await.unwrap_or_else(|_| {
                                    Err(format!("no answer within {timeout:?}"))
                                }));
                            }
                            Job::Get { name, answer } => {
                                let got = tokio::time::timeout(timeout, get(&bucket, &name));
                                let _ = answer.send(got.await.unwrap_or_else(|_| {
                                    Err(format!("no answer within {timeout:?}"))
                                }));
                            }
                        }
                    }
                });
            })
            .map_err(|e| TransportError::Io {
                what: "the save store's thread",
                reason: e.to_string(),
            })?;
        match ready_rx.recv() {
            Ok(Ok(())) => Ok(BucketSaveStore {
                jobs,
                url: super::redact_url(url),
                timeout,
                held: Arc::new(Mutex::new(None)),
            }),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(TransportError::Io {
                what: "the save store",
                reason: "its thread stopped while starting".into(),
            }),
        }
    }

    /// Standby: from now on, saves are held in memory instead of written (see the
    /// module's documentation).
    pub fn hold(&self) {
        let mut held = self.held.lock();
        if held.is_none() {
            *held = Some(BTreeMap::new());
        }
    }

    /// Active again: writes every held save the bucket does not hold as it is, and
    /// from now on writes and reads the bucket. Returns how many saves were written;
    /// a save that cannot be written is skipped (the others are still tried) and
    /// the first such error returned.
    pub fn release(&self) -> Result<usize, SaveStoreError> {
        let Some(held) = self.held.lock().take() else {
            return Ok(0);
        };
        let mut written = 0;
        let mut first_error = None;
        for ((federation, label), bytes) in held {
            let name = object_name(&federation, &label);
            let kept = self.call(|answer| Job::Get {
                name: name.clone(),
                answer,
            });
            let result = match kept {
                Ok(Some(kept)) if kept == bytes => Ok(false),
                Ok(_) => self
                    .call(|answer| Job::Put {
                        name: name.clone(),
                        bytes,
                        answer,
                    })
                    .map(|()| true),
                Err(e) => Err(e),
            };
            match result {
                Ok(wrote) => written += usize::from(wrote),
                Err(e) => {
                    first_error.get_or_insert(self.error("write", &name, &e));
                }
            }
        }
        match first_error {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }

    fn error(&self, what: &str, name: &str, reason: &str) -> SaveStoreError {
        SaveStoreError(format!(
            "cannot {what} object `{name}` of the JetStream object store `{SAVE_BUCKET}` at {}: {reason}",
            self.url
        ))
    }

    /// Sends a job to the store's thread and waits for its answer.
    fn call<T>(&self, job: impl FnOnce(Answer<T>) -> Job) -> Result<T, String> {
        let (answer, answered) = std::sync::mpsc::channel();
        self.jobs
            .send(job(answer))
            .map_err(|_| "the save store's connection thread has stopped".to_string())?;
        // The thread bounds each job by the timeout; a little more here for the
        // answer to travel back.
        match answered.recv_timeout(self.timeout + Duration::from_secs(1)) {
            Ok(result) => result,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                Err(format!("no answer within {:?}", self.timeout))
            }
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                Err("the save store's connection thread has stopped".into())
            }
        }
    }
}

impl SaveStore for BucketSaveStore {
    fn put(&mut self, federation: &str, label: &str, bytes: &[u8]) -> Result<(), SaveStoreError> {
        if let Some(held) = self.held.lock().as_mut() {
            held.insert((federation.into(), label.into()), bytes.to_vec());
            return Ok(());
        }
        let name = object_name(federation, label);
        self.call(|answer| Job::Put {
            name: name.clone(),
            bytes: bytes.to_vec(),
            answer,
        })
        .map_err(|e| self.error("write", &name, &e))
    }

    fn get(&mut self, federation: &str, label: &str) -> Result<Option<Vec<u8>>, SaveStoreError> {
        if let Some(held) = self.held.lock().as_ref() {
            if let Some(bytes) = held.get(&(federation.to_string(), label.to_string())) {
                return Ok(Some(bytes.clone()));
            }
        }
        let name = object_name(federation, label);
        self.call(|answer| Job::Get {
            name: name.clone(),
            answer,
        })
        .map_err(|e| self.error("read", &name, &e))
    }
}

/// The executive server's saves: the bucket when the NATS server has JetStream,
/// otherwise none, with a warning that saves stay in this server's memory.
pub(super) fn for_server(url: &str, options: &NatsOptions) -> Option<BucketSaveStore> {
    match BucketSaveStore::open(url, options) {
        Ok(store) => {
            tracing::info!(
                bucket = SAVE_BUCKET,
                "federation saves are kept in a JetStream object store"
            );
            Some(store)
        }
        Err(e) => {
            tracing::warn!(
                error = %e,
                "federation saves are kept in this executive server's memory only, and lost when it stops"
            );
            None
        }
    }
}

/// An executive host keeping its saves in `saves`, or in memory without it.
pub(super) fn host(saves: Option<BucketSaveStore>) -> ExecutiveHost {
    match saves {
        Some(saves) => ExecutiveHost::with_store(Box::new(saves)),
        None => ExecutiveHost::new(),
    }
}

/// Connects and opens (or creates) the bucket.
async fn open_bucket(
    url: &str,
    options: &NatsOptions,
) -> Result<object_store::ObjectStore, TransportError> {
    let client = connect_client(
        url,
        options,
        "glidepath-executive-saves".into(),
        Arc::new(Counters::default()),
    )
    .await?;
    let no_jetstream = |reason: String| {
        TransportError::PersistenceFailed {
        operation: format!("opening the JetStream object store `{SAVE_BUCKET}` of federation saves"),
        reason: format!(
            "the NATS server at {} offers no JetStream ({reason}); start it with `nats-server --jetstream --store_dir DIR`",
            super::redact_url(url)
        ),
    }
    };
    if !client.server_info().jetstream {
        return Err(no_jetstream("it runs without `--jetstream`".into()));
    }
    let js = jetstream::new(client);
    js.query_account()
        .await
        .map_err(|e| no_jetstream(format!("not for this connection's account: {e}")))?;
    if let Ok(bucket) = js.get_object_store(SAVE_BUCKET).await {
        return Ok(bucket);
    }
    js.create_object_store(object_store::Config {
        bucket: SAVE_BUCKET.into(),
        description: Some("glidepath federation saves (docs/save-format.md)".into()),
        num_replicas: options.save_replicas.max(1),
        ..Default::default()
    })
    .await
    .map_err(|e| TransportError::PersistenceFailed {
        operation: format!("opening the JetStream object store `{SAVE_BUCKET}`"),
        reason: e.to_string(),
    })
}

async fn put(bucket: &object_store::ObjectStore, name: &str, bytes: &[u8]) -> Result<(), String> {
    let mut reader = bytes;
    bucket
        .put(name, &mut reader)
        .await
        .map(|_| ())
        .map_err(|e| e.to_string())
}

async fn get(bucket: &object_store::ObjectStore, name: &str) -> Result<Option<Vec<u8>>, String> {
    let mut object = match bucket.get(name).await {
        Ok(object) => object,
        Err(e) if e.kind() == object_store::GetErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    let size = object.info().size;
    let mut bytes = Vec::with_capacity(size);
    object
        .read_to_end(&mut bytes)
        .await
        .map_err(|e| e.to_string())?;
    if bytes.len() != size {
        return Err(format!(
            "read {} bytes of an object of {size} bytes",
            bytes.len()
        ));
    }
    Ok(Some(bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_names_are_unambiguous_and_valid() {
        assert_eq!(object_name("fed", "t50"), "fed/t50");
        assert_eq!(object_name("a/b", "c"), "a=2Fb/c");
        assert_eq!(object_name("a", "b/c"), "a/b=2Fc");
        assert_eq!(object_name("x.y", "=1 é"), "x=2Ey/=3D1=20=C3=A9");
        assert_ne!(object_name("a/b", "c"), object_name("a", "b/c"));
        let valid = |n: &str| {
            !n.starts_with('.')
                && !n.ends_with('.')
                && n.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"-/_=.".contains(&b))
        };
        for (f, l) in [("", ""), (".", "."), ("a b", "..")] {
            assert!(valid(&object_name(f, l)), "{}", object_name(f, l));
        }
    }
}

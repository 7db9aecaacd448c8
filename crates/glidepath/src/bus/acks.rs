//! Publishing into a group's stream (CAUSAL, AGREED, SAFE) with its acknowledgements
//! read: a publish into a stream over core NATS has no back-pressure, and a server
//! whose stream cannot take messages as fast as they come drops them once its ingest
//! queue is full (nats-server 2.11 on: `max_buffered_msgs`, 10,000 by default, and
//! `max_buffered_size`, 128 MiB), with one line in its log and nothing to the sender.
//! So a connection publishes with JetStream's acknowledgement and keeps at most
//! [`WINDOW_FRAMES`] frames and [`WINDOW_BYTES`] bytes without one: a publisher faster
//! than the stream waits instead, and the queue holds at most a window per publisher.
//! An acknowledgement that says the stream refused the frame, or that never comes, is
//! counted lost ([`super::BusStats::lost`]) and logged as an error: never silent.

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream;
use bytes::Bytes;
use tokio::sync::{mpsc, OwnedSemaphorePermit, Semaphore};

use super::Counters;

/// Frames a connection may have in a stream without an acknowledgement.
pub(crate) const WINDOW_FRAMES: u32 = 256;
/// Bytes it may have there: a 4 MiB frame (or larger) takes the whole window.
pub(crate) const WINDOW_BYTES: u32 = 4 << 20;

struct Pending {
    ack: jetstream::context::PublishAckFuture,
    subject: String,
    _frames: OwnedSemaphorePermit,
    _bytes: OwnedSemaphorePermit,
}

/// One connection's frames on their way into streams.
pub(crate) struct AckWindow {
    frames: Arc<Semaphore>,
    bytes: Arc<Semaphore>,
    pending: mpsc::UnboundedSender<Pending>,
}

impl AckWindow {
    /// A window whose acknowledgements a task of `runtime` reads, counting refusals
    /// in `counters`.
    pub(crate) fn new(runtime: &tokio::runtime::Runtime, counters: Arc<Counters>) -> AckWindow {
        let (pending, mut rx) = mpsc::unbounded_channel::<Pending>();
        runtime.spawn(async move {
            // In the order sent; each permit goes back once its frame is answered.
            while let Some(p) = rx.recv().await {
                if let Err(e) = p.ack.await {
                    counters.lost(1);
                    tracing::error!(
                        "bus: the group's stream did not take a frame published on {}: {e} \
                         (counted lost)",
                        p.subject
                    );
                }
            }
        });
        AckWindow {
            frames: Arc::new(Semaphore::new(WINDOW_FRAMES as usize)),
            bytes: Arc::new(Semaphore::new(WINDOW_BYTES as usize)),
            pending,
        }
    }

    /// Publishes `payload` on `subject` into its stream, first waiting for room in
    /// the window.
    pub(crate) async fn publish(
        &self,
        js: &jetstream::Context,
        subject: String,
        payload: Bytes,
    ) -> Result<(), String> {
        let frames = self
            .frames
            .clone()
            .acquire_owned()
            .await
            .map_err(|e| e.to_string())?;
        let size = u32::try_from(payload.len())
            .unwrap_or(u32::MAX)
            .clamp(1, WINDOW_BYTES);
        let bytes = self
            .bytes
            .clone()
            .acquire_many_owned(size)
            .await
            .map_err(|e| e.to_string())?;
        let ack = js
            .publish(subject.clone(), payload)
            .await
            .map_err(|e| e.to_string())?;
        self.pending
            .send(Pending {
                ack,
                subject,
                _frames: frames,
                _bytes: bytes,
            })
            .map_err(|_| "the acknowledgement reader has stopped".to_string())
    }

    /// Waits, at most `limit`, until every frame sent so far is answered.
    pub(crate) async fn drain(&self, limit: Duration) {
        let all = async {
            let _f = self.frames.acquire_many(WINDOW_FRAMES).await;
            let _b = self.bytes.acquire_many(WINDOW_BYTES).await;
        };
        let _ = tokio::time::timeout(limit, all).await;
    }
}

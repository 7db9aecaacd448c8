//! Replay: reading a federation's kept stream back, once each and in stream order.

use std::sync::Arc;

use bytes::Bytes;
use futures::StreamExt;
use glidepath_core::{Envelope, FederationId, Topic};

use super::consume::{ordered_messages, OriginFilter};
use super::stream_name;
use crate::nats::frames::FrameCodec;
use crate::nats::subject::parse_topic;
use crate::nats::{connect_client, Counters, NatsOptions};
use crate::TransportError;

/// One envelope read back from a federation's stream.
#[derive(Clone, Debug)]
pub struct ReplayedEnvelope {
    /// Its sequence number in the stream.
    pub stream_sequence: u64,
    /// The topic it was published on.
    pub topic: Topic,
    /// The envelope.
    pub envelope: Envelope,
}

/// What [`replay`] read.
#[derive(Clone, Debug, Default)]
pub struct Replay {
    /// The envelopes, once each and in stream order.
    pub envelopes: Vec<ReplayedEnvelope>,
    /// Messages that could not be decoded or named no topic.
    pub malformed: u64,
    /// Retransmitted duplicates (and messages stored out of order) that were skipped.
    pub duplicates: u64,
}

/// Reads a federation's stream from stream sequence `from_sequence` (1 for the
/// beginning) up to its last message at the time of the call.
/// Frames of the encoder chain are opened with [`NatsOptions::messaging`] (the same
/// federation key as the run's); bundles yield each envelope, with the bundle's
/// stream sequence.
pub fn replay(
    url: &str,
    federation: FederationId,
    from_sequence: u64,
    options: &NatsOptions,
) -> Result<Replay, TransportError> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| TransportError::Io {
            what: "the replay's runtime",
            reason: e.to_string(),
        })?;
    let codec = FrameCodec::new(options.messaging.clone())?;
    runtime.block_on(async {
        let client = connect_client(
            url,
            options,
            "glidepath-replay".into(),
            Arc::new(Counters::default()),
        )
        .await?;
        let context = async_nats::jetstream::new(client.clone());
        let stream = context
            .get_stream(stream_name(federation))
            .await
            .map_err(|e| TransportError::StreamNotFound {
                stream: stream_name(federation),
                reason: format!("{e}, at {}", crate::nats::redact_url(url)),
            })?;
        let last = stream.cached_info().state.last_sequence;
        let mut replay = Replay::default();
        if last >= from_sequence.max(1) {
            let mut messages = ordered_messages(&stream, federation, from_sequence.max(1)).await?;
            let mut filter = OriginFilter::new(None);
            while let Some(item) = tokio::time::timeout(options.request_timeout, messages.next())
                .await
                .map_err(|_| TransportError::Timeout(options.request_timeout))?
            {
                let Ok(m) = item else { continue };
                let sequence = m.info().map(|i| i.stream_sequence).unwrap_or(0);
                let message = m.message;
                if filter.admit(message.headers.as_ref()) {
                    match parse_topic(federation, &message.subject) {
                        Some(topic) => {
                            for envelope in open_envelopes(&codec, message.payload) {
                                match envelope {
                                    Some(envelope) => replay.envelopes.push(ReplayedEnvelope {
                                        stream_sequence: sequence,
                                        topic,
                                        envelope,
                                    }),
                                    None => replay.malformed += 1,
                                }
                            }
                        }
                        None => replay.malformed += 1,
                    }
                }
                if sequence >= last {
                    break;
                }
            }
            replay.duplicates = filter.dropped;
        }
        let _ = tokio::time::timeout(options.request_timeout, client.drain()).await;
        Ok(replay)
    })
}

/// The envelopes in one stored message (a plain envelope, or a frame of the encoder
/// chain holding one or a bundle); `None` for each one that cannot be read.
fn open_envelopes(codec: &FrameCodec, payload: Bytes) -> Vec<Option<Envelope>> {
    let bodies = if !codec.keyed() && payload.first() == Some(&glidepath_wire::MAGIC) {
        Ok(vec![payload])
    } else {
        codec.open(&payload).and_then(FrameCodec::split)
    };
    match bodies {
        Ok(bodies) => bodies
            .into_iter()
            .map(|b| glidepath_wire::decode_envelope_bytes(b).ok())
            .collect(),
        Err(_) => vec![None],
    }
}

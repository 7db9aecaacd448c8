//! What a NATS message's payload is, and the two paths through the encoder chain:
//! envelope → (bundle) → encoder chain → payload on the way out, and payload → chain
//! decode → unbundle → envelope bytes on the way in.
//!
//! # Payload format
//!
//! The first byte says what a payload is:
//!
//! | first byte | payload |
//! |---|---|
//! | `0x47` (`G`) | one plain envelope (`glidepath_wire`, `docs/wire-format.md`) |
//! | `0xB1` | a bundle of envelopes ([`glidepath_codec::bundle`]) |
//! | `0xE1` | an encoder-chain frame ([`glidepath_codec::frame`]) whose body is a plain envelope or a bundle |
//!
//! With no compression, no key and no bundling ([`MessagingOptions::is_plain`]),
//! envelopes travel plain, exactly as they did before the chain existed: no overhead.
//! With a key, every data payload, executive request, reply and notification is an
//! encrypted frame, and a receiver rejects anything else (counted in
//! `EndpointStats::rejected_frames`, never delivered). Frames and bundles carry a
//! plaintext [`SENDER_HEADER`] naming the sending connection, for diagnostics only.
//!
//! # Bundling keeps per-sender FIFO across topics
//!
//! One bundler per endpoint, behind one lock that is also held while its output is
//! handed to the client, so the timer and publishers cannot overtake each other. A
//! bundle holds only consecutive envelopes of one subject: an envelope for another
//! subject first sends the bundle. Envelopes on the `time` and `fed` topics and
//! direct messages are never held (time statuses are latency-critical): what waits
//! is sent first, then they go at once. So the order in which envelopes leave is the
//! order in which they were published, whatever is bundled.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_nats::{Client, HeaderMap};
use bytes::Bytes;
use glidepath_codec::bundle::BUNDLE_MARKER;
use glidepath_codec::{
    unbundle, BundleConfig, Bundler, ChainConfig, CodecError, Compression, EncoderChain,
};
use glidepath_core::Topic;
use tokio::sync::{oneshot, Mutex as AsyncMutex, Notify};

use crate::{monotonic_now_ns, TransportError};

/// The first byte of an encoder-chain frame.
pub const FRAME_MARKER: u8 = 0xE1;

/// A plaintext NATS header on frames and bundles naming the sending connection. For
/// diagnostics only (logged when a payload is rejected); nothing trusts it.
pub const SENDER_HEADER: &str = "Glidepath-Sender";

/// The sender a message's [`SENDER_HEADER`] names (from its headers), for logs.
pub(crate) fn sender_of(headers: Option<&HeaderMap>) -> &str {
    headers
        .and_then(|h| h.get(SENDER_HEADER))
        .map_or("(no Glidepath-Sender header)", |v| v.as_str())
}

/// Per-class settings that override [`MessagingOptions`] for one object or
/// interaction class (keyed by its [`Topic`]). `None` keeps the federation's setting.
/// The key is never per class: it belongs to the federation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassOverride {
    /// Compression for this class's messages.
    pub compression: Option<Compression>,
    /// `bundle_bytes_max` for this class (0 turns bundling off for it).
    pub bundle_bytes_max: Option<usize>,
    /// `bundle_time_ns_max` for this class.
    pub bundle_time_ns_max: Option<u64>,
}

/// The encoder chain and bundling settings of a messaging backend. The defaults
/// (no compression, no key, no bundling) send plain envelopes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MessagingOptions {
    /// Compression, its threshold and the federation key. Every process of a
    /// federation, the executive server included, needs the same key.
    pub chain: ChainConfig,
    /// Bundling limits of each endpoint (see [`BundleConfig`]'s default).
    pub bundle: BundleConfig,
    /// Per-class overrides, keyed by `Topic::ObjectClass` or `Topic::InteractionClass`.
    pub classes: HashMap<Topic, ClassOverride>,
}

impl MessagingOptions {
    /// True when envelopes travel plain: no compression, no key, no bundling.
    pub fn is_plain(&self) -> bool {
        self.chain.key.is_none()
            && self.chain.compression == Compression::None
            && !self.bundling()
            && self
                .classes
                .values()
                .all(|c| matches!(c.compression, None | Some(Compression::None)))
    }

    /// True when any class may be bundled.
    pub fn bundling(&self) -> bool {
        self.bundle.enabled()
            || self
                .classes
                .values()
                .any(|c| c.bundle_bytes_max.unwrap_or(0) > 0)
    }

    /// The bundling limits of `topic`, overrides applied.
    pub fn bundle_config(&self, topic: Topic) -> BundleConfig {
        let mut config = self.bundle;
        if let Some(o) = self.classes.get(&topic) {
            if let Some(b) = o.bundle_bytes_max {
                config.bundle_bytes_max = b;
            }
            if let Some(t) = o.bundle_time_ns_max {
                config.bundle_time_ns_max = t;
            }
        }
        config
    }
}

/// Why an incoming payload was not delivered.
#[derive(Debug)]
pub(crate) enum Refused {
    /// It failed authentication (wrong key, no key, tampered, or plaintext where the
    /// federation requires its key).
    Rejected(CodecError),
    /// It could not be decoded.
    Malformed(String),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Rejected(e) => write!(f, "{e}"),
            Refused::Malformed(e) => f.write_str(e),
        }
    }
}

fn classify(error: CodecError) -> Refused {
    match error {
        CodecError::AuthenticationFailed
        | CodecError::KeyRequired
        | CodecError::Unauthenticated => Refused::Rejected(error),
        other => Refused::Malformed(other.to_string()),
    }
}

/// The [`TransportError`] of a failed publish: a payload over the server's
/// `max_payload` is told apart from a connection that refused it.
pub(crate) fn publish_error(client: &Client, e: &async_nats::PublishError) -> TransportError {
    match e.kind() {
        async_nats::client::PublishErrorKind::MaxPayloadExceeded => {
            TransportError::PayloadTooLarge {
                what: "message",
                max_payload_bytes: client.server_info().max_payload,
            }
        }
        _ => TransportError::ConnectionFailed {
            operation: "publish",
            reason: e.to_string(),
        },
    }
}

/// A chain that does something, or `None` for the identity.
fn build_chain(config: &ChainConfig) -> Result<Option<EncoderChain>, TransportError> {
    if config.key.is_none() && config.compression == Compression::None {
        return Ok(None);
    }
    EncoderChain::new(config.clone()).map(Some).map_err(|e| {
        TransportError::InvalidConfiguration(format!("cannot build the encoder chain: {e}"))
    })
}

/// The configured chains of one transport (or executive server); shared, immutable.
pub(crate) struct FrameCodec {
    options: MessagingOptions,
    plain: bool,
    chain: Option<EncoderChain>,
    class_chains: HashMap<Topic, Option<EncoderChain>>,
    /// Decodes any frame (its flags say which compression); has the key if any.
    decoder: EncoderChain,
}

impl FrameCodec {
    pub(crate) fn new(options: MessagingOptions) -> Result<FrameCodec, TransportError> {
        let chain = build_chain(&options.chain)?;
        let mut class_chains = HashMap::new();
        for (topic, o) in &options.classes {
            if let Some(compression) = o.compression {
                let config = ChainConfig {
                    compression,
                    ..options.chain.clone()
                };
                class_chains.insert(*topic, build_chain(&config)?);
            }
        }
        let decoder = EncoderChain::new(ChainConfig {
            compression: Compression::None,
            ..options.chain.clone()
        })
        .map_err(|e| {
            TransportError::InvalidConfiguration(format!("cannot build the encoder chain: {e}"))
        })?;
        Ok(FrameCodec {
            plain: options.is_plain(),
            options,
            chain,
            class_chains,
            decoder,
        })
    }

    /// True when envelopes travel plain (see [`MessagingOptions::is_plain`]).
    pub(crate) fn plain(&self) -> bool {
        self.plain
    }

    /// True when a federation key is configured: only authenticated frames are read.
    pub(crate) fn keyed(&self) -> bool {
        self.options.chain.key.is_some()
    }

    pub(crate) fn options(&self) -> &MessagingOptions {
        &self.options
    }

    /// Applies the chain of `topic` (the federation's when `None` or not overridden).
    pub(crate) fn seal(&self, topic: Option<Topic>, body: Bytes) -> Result<Bytes, TransportError> {
        let chain = match topic.and_then(|t| self.class_chains.get(&t)) {
            Some(c) => c.as_ref(),
            None => self.chain.as_ref(),
        };
        match chain {
            None => Ok(body),
            Some(c) => c.encode(&body).map_err(|e| TransportError::Codec {
                what: "encoding a message failed",
                reason: e.to_string(),
            }),
        }
    }

    /// Undoes [`FrameCodec::seal`]: the body (a plain envelope, a bundle or, on the
    /// management plane, JSON). With a key, anything but an authentic frame is refused.
    pub(crate) fn open(&self, payload: &Bytes) -> Result<Bytes, Refused> {
        match payload.first() {
            None => Err(Refused::Malformed("empty payload".into())),
            Some(&FRAME_MARKER) => self.decoder.decode(payload).map_err(classify),
            Some(_) if self.keyed() => Err(Refused::Rejected(CodecError::Unauthenticated)),
            Some(_) => Ok(payload.clone()),
        }
    }

    /// The envelopes in a body: itself, or the contents of a bundle.
    pub(crate) fn split(body: Bytes) -> Result<Vec<Bytes>, Refused> {
        match body.first() {
            Some(&glidepath_wire::MAGIC) => Ok(vec![body]),
            Some(&BUNDLE_MARKER) => unbundle(&body).map_err(|e| Refused::Malformed(e.to_string())),
            Some(other) => Err(Refused::Malformed(format!(
                "unknown payload kind {other:#04x}"
            ))),
            None => Err(Refused::Malformed("empty payload".into())),
        }
    }
}

/// True for topics whose envelopes may wait in a bundle: object and interaction
/// classes. Time statuses, executive notifications and direct messages never wait.
fn holdable(topic: Topic) -> bool {
    matches!(topic, Topic::ObjectClass(_) | Topic::InteractionClass(_))
}

struct OutState {
    bundler: Bundler,
    /// The subject (and topic) of what waits in the bundler.
    subject: Option<(String, Topic)>,
}

/// The outgoing path of one endpoint: bundler, chain, client.
pub(crate) struct Outgoing {
    codec: Arc<FrameCodec>,
    client: Client,
    sender: String,
    /// One lock around the bundler and the hand-over to the client, so the timer and
    /// publishers keep the publication order.
    state: AsyncMutex<OutState>,
    /// Told when a new bundle starts, so the timer learns its deadline.
    wake: Notify,
}

impl Outgoing {
    pub(crate) fn new(codec: Arc<FrameCodec>, client: Client, sender: String) -> Outgoing {
        let bundler = Bundler::new(codec.options().bundle);
        Outgoing {
            codec,
            client,
            sender,
            state: AsyncMutex::new(OutState {
                bundler,
                subject: None,
            }),
            wake: Notify::new(),
        }
    }

    /// Sends, or holds in the bundle, one encoded envelope.
    pub(crate) async fn publish(
        &self,
        subject: String,
        topic: Topic,
        envelope: Bytes,
    ) -> Result<(), TransportError> {
        if !self.codec.options().bundling() {
            return self.send(subject, topic, envelope).await;
        }
        let config = self.codec.options().bundle_config(topic);
        let mut state = self.state.lock().await;
        if !holdable(topic) || !config.enabled() {
            self.flush_locked(&mut state).await?;
            return self.send(subject, topic, envelope).await;
        }
        if state.subject.as_ref().is_some_and(|(s, _)| *s != subject) {
            self.flush_locked(&mut state).await?;
        }
        if let Some(waiting) = state.bundler.reconfigure(config) {
            if let Some((s, t)) = state.subject.take() {
                self.send(s, t, waiting).await?;
            }
        }
        let out = state.bundler.push(&envelope, monotonic_now_ns());
        // Whatever push returns is this subject's: a full bundle, or the message alone.
        for bundle in out {
            self.send(subject.clone(), topic, bundle).await?;
        }
        match state.bundler.pending() {
            0 => state.subject = None,
            pending => {
                state.subject = Some((subject, topic));
                if pending == 1 {
                    self.wake.notify_one();
                }
            }
        }
        Ok(())
    }

    /// Sends what waits in the bundle.
    pub(crate) async fn flush(&self) -> Result<(), TransportError> {
        if !self.codec.options().bundling() {
            return Ok(());
        }
        let mut state = self.state.lock().await;
        self.flush_locked(&mut state).await
    }

    async fn flush_locked(&self, state: &mut OutState) -> Result<(), TransportError> {
        if let Some(bundle) = state.bundler.flush() {
            if let Some((s, t)) = state.subject.take() {
                return self.send(s, t, bundle).await;
            }
        }
        Ok(())
    }

    /// The `Glidepath-Sender` header for a payload that is a chain frame (`None` for a
    /// plain envelope, which names its sender itself).
    pub(crate) fn sender_headers(&self, payload: &[u8]) -> Option<HeaderMap> {
        if payload.first() == Some(&glidepath_wire::MAGIC) {
            return None;
        }
        let mut headers = HeaderMap::new();
        headers.insert(SENDER_HEADER, self.sender.as_str());
        Some(headers)
    }

    /// Applies the chain and hands the payload to the client.
    async fn send(&self, subject: String, topic: Topic, body: Bytes) -> Result<(), TransportError> {
        let payload = self.codec.seal(Some(topic), body)?;
        let result = match self.sender_headers(&payload) {
            None => self.client.publish(subject, payload).await,
            Some(headers) => {
                self.client
                    .publish_with_headers(subject, headers, payload)
                    .await
            }
        };
        result.map_err(|e| publish_error(&self.client, &e))
    }
}

/// Sends each bundle when its first message has waited `bundle_time_ns_max`, until
/// stopped.
pub(crate) async fn run_timer(out: Arc<Outgoing>, mut stop: oneshot::Receiver<()>) {
    loop {
        let deadline = out.state.lock().await.bundler.deadline();
        let expired = async {
            match deadline {
                Some(d) => {
                    tokio::time::sleep(Duration::from_nanos(d.saturating_sub(monotonic_now_ns())))
                        .await
                }
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = out.wake.notified() => {}
            _ = expired => {
                let mut state = out.state.lock().await;
                if let Some(bundle) = state.bundler.poll(monotonic_now_ns()) {
                    if let Some((s, t)) = state.subject.take() {
                        if let Err(e) = out.send(s, t, bundle).await {
                            tracing::warn!(error = %e, "could not send a bundle whose time was up");
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glidepath_codec::FederationKey;
    use glidepath_core::InteractionClassHandle;

    const CLASS: Topic = Topic::InteractionClass(InteractionClassHandle(1));

    #[test]
    fn defaults_are_plain_and_overrides_are_not() {
        let mut options = MessagingOptions::default();
        assert!(options.is_plain());
        options.classes.insert(
            CLASS,
            ClassOverride {
                bundle_bytes_max: Some(1024),
                ..Default::default()
            },
        );
        assert!(!options.is_plain());
        assert_eq!(options.bundle_config(CLASS).bundle_bytes_max, 1024);
        assert_eq!(options.bundle_config(Topic::Time).bundle_bytes_max, 0);
    }

    #[test]
    fn keyed_codecs_refuse_plaintext_and_other_keys() {
        let keyed = |key: FederationKey| {
            FrameCodec::new(MessagingOptions {
                chain: ChainConfig {
                    key: Some(key),
                    ..Default::default()
                },
                ..Default::default()
            })
            .unwrap()
        };
        let a = keyed(FederationKey::from_bytes([1; 32]));
        let b = keyed(FederationKey::from_bytes([2; 32]));
        let plain = FrameCodec::new(MessagingOptions::default()).unwrap();
        let body = Bytes::from_static(b"G-ish body");
        let sealed = a.seal(Some(CLASS), body.clone()).unwrap();
        assert_eq!(a.open(&sealed).unwrap(), body);
        assert!(matches!(b.open(&sealed), Err(Refused::Rejected(_))));
        assert!(matches!(plain.open(&sealed), Err(Refused::Rejected(_))));
        assert!(matches!(a.open(&body), Err(Refused::Rejected(_))));
        let mut flipped = sealed.to_vec();
        let last = flipped.len() - 1;
        flipped[last] ^= 1;
        assert!(matches!(
            a.open(&Bytes::from(flipped)),
            Err(Refused::Rejected(_))
        ));
    }
}

//! The reader side of JetStream persistence: an endpoint's subscription through one
//! ordered consumer per federation, exactly-once acceptance by origin counters, the
//! bounded inbox, and the stall check that replaces a silent consumer.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use async_nats::connection::State;
use async_nats::jetstream::consumer::{pull::OrderedConfig, DeliverPolicy};
use async_nats::{Client, HeaderMap, Message};
use futures::StreamExt;
use glidepath_core::{Envelope, FederationId, Topic};
use parking_lot::RwLock;
use tokio::sync::oneshot;

use super::publish::JetStreamEndpoint;
use super::{
    stream_name, BACKLOG_RECHECK, ORIGIN_HEADER, PULL_EXPIRES, RECONNECT_CHECK, STALL_CHECK,
};
use crate::nats::subject::federation_wildcard;
use crate::nats::throttle::warn_throttled;
use crate::nats::{FederationSubscription, NatsEndpoint, Reader, Via};
use crate::TransportError;

impl JetStreamEndpoint {
    /// Starts receiving a federation's stream from its end into `reader`.
    async fn start_reading(
        &self,
        runtime: &tokio::runtime::Handle,
        federation: FederationId,
        reader: Reader,
        stop: oneshot::Receiver<()>,
    ) -> Result<(), TransportError> {
        let stream = self
            .context
            .get_stream(stream_name(federation))
            .await
            .map_err(|e| TransportError::StreamNotFound {
                stream: stream_name(federation),
                reason: e.to_string(),
            })?;
        let start = stream.cached_info().state.last_sequence + 1;
        let messages = ordered_messages(&stream, federation, start).await?;
        runtime.spawn(read_stream(
            StreamReader {
                reader,
                client: self.context.client(),
                stream,
                federation,
                next: start,
                backlog_max: self.options.inbox_backlog_max.max(1),
                filter: OriginFilter::new(Some(self.origin.clone())),
            },
            messages,
            stop,
        ));
        Ok(())
    }
}

/// [`NatsEndpoint`]'s `subscribe` of a federation it does not listen to yet, with
/// persistence: one ordered consumer from the stream's end.
pub(in crate::nats) fn subscribe(
    endpoint: &NatsEndpoint,
    js: &JetStreamEndpoint,
    federation: FederationId,
    topic: Topic,
    inbox: crossbeam_channel::Sender<Envelope>,
) -> Result<FederationSubscription, TransportError> {
    let transport = &endpoint.transport;
    let filter = Arc::new(RwLock::new(HashSet::from([topic])));
    let (stop_tx, stop_rx) = oneshot::channel();
    let reader = Reader {
        cell_view: Default::default(),
        arrivals: Default::default(),
        federation,
        filter: filter.clone(),
        inbox,
        counters: endpoint.counters.clone(),
        notified: endpoint.notified.clone(),
        last_seq: HashMap::new(),
        codec: transport.codec.clone(),
        // JetStream has its own acknowledgements and exactly-once acceptance.
        receiver: None,
        flow: None,
    };
    transport.block_on(js.start_reading(
        transport.runtime.handle(),
        federation,
        reader,
        stop_rx,
    ))?;
    Ok(FederationSubscription {
        cells: None,
        topics: HashSet::from([topic]),
        filter,
        stop: Some(stop_tx),
        task: None,
    })
}

pub(super) async fn ordered_messages(
    stream: &async_nats::jetstream::stream::Stream,
    federation: FederationId,
    start_sequence: u64,
) -> Result<async_nats::jetstream::consumer::pull::Ordered, TransportError> {
    let consumer = stream
        .create_consumer(OrderedConfig {
            filter_subject: federation_wildcard(federation),
            deliver_policy: DeliverPolicy::ByStartSequence { start_sequence },
            // Shorter pulls than the client's 30 s make its idle heartbeat short too,
            // so a consumer notices a NATS server restart within seconds.
            max_expires: PULL_EXPIRES,
            ..Default::default()
        })
        .await
        .map_err(|e| TransportError::PersistenceFailed {
            operation: "creating a JetStream consumer".into(),
            reason: e.to_string(),
        })?;
    consumer
        .messages()
        .await
        .map_err(|e| TransportError::PersistenceFailed {
            operation: "reading the JetStream stream".into(),
            reason: e.to_string(),
        })
}

/// Accepts each origin's messages once and in order (see the module documentation).
pub(super) struct OriginFilter {
    own: Option<String>,
    last: HashMap<String, u64>,
    pub(super) dropped: u64,
}

impl OriginFilter {
    pub(super) fn new(own: Option<String>) -> OriginFilter {
        OriginFilter {
            own,
            last: HashMap::new(),
            dropped: 0,
        }
    }

    pub(super) fn admit(&mut self, headers: Option<&HeaderMap>) -> bool {
        let Some(value) = headers.and_then(|h| h.get(ORIGIN_HEADER)) else {
            return true;
        };
        let Some((origin, counter)) = value
            .as_str()
            .split_once(' ')
            .and_then(|(o, c)| Some((o, c.parse::<u64>().ok()?)))
        else {
            return true;
        };
        if self.own.as_deref() == Some(origin) {
            return false;
        }
        match self.last.get_mut(origin) {
            None => {
                self.last.insert(origin.to_string(), counter);
                true
            }
            Some(last) if counter == *last + 1 => {
                *last = counter;
                true
            }
            Some(_) => {
                self.dropped += 1;
                false
            }
        }
    }
}

/// What a federation's stream reader needs.
struct StreamReader {
    reader: Reader,
    client: Client,
    stream: async_nats::jetstream::stream::Stream,
    federation: FederationId,
    /// The stream sequence of the next message to deliver.
    next: u64,
    backlog_max: usize,
    filter: OriginFilter,
}

impl StreamReader {
    /// Whether the stream holds a message we have not been given: asked after
    /// [`STALL_CHECK`] of silence from the consumer. Logs the stall (rate-limited).
    async fn stalled(&self) -> bool {
        let last = match self.stream.get_info().await {
            Ok(info) => info.state.last_sequence,
            Err(e) => {
                tracing::debug!(error = %e, "cannot read the JetStream stream's state");
                return false;
            }
        };
        if last < self.next {
            return false;
        }
        warn_throttled!(
            federation = self.federation.0,
            next = self.next,
            last,
            "the JetStream consumer went silent with messages waiting; starting a new one"
        );
        true
    }
}

/// Moves a federation's stream into the reader until stopped.
///
/// The client's ordered consumer lives in the NATS server's memory; after a server
/// restart the client notices that it is gone only after several retries (about
/// 15 s). We notice the reconnection ourselves and start a new consumer at the
/// next stream sequence we want. Messages before it (a consumer recreated by the
/// client from the stream's beginning, an overlap between consumers) are skipped.
async fn read_stream(
    mut r: StreamReader,
    mut messages: async_nats::jetstream::consumer::pull::Ordered,
    mut stop: oneshot::Receiver<()>,
) {
    let mut check = tokio::time::interval(RECONNECT_CHECK);
    check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let statistics = r.client.statistics();
    let mut connects = statistics.connects.load(Ordering::Relaxed);
    // When the consumer last gave us something, or we last stopped waiting for it.
    let mut heard = tokio::time::Instant::now();
    loop {
        // Flow control: while the inbox is full, leave the backlog in the stream.
        // Nothing tells us when the application reads, so look again shortly.
        if r.reader.inbox.len() >= r.backlog_max {
            while r.reader.inbox.len() >= r.backlog_max {
                tokio::select! {
                    biased;
                    _ = &mut stop => return,
                    _ = tokio::time::sleep(BACKLOG_RECHECK) => {}
                }
            }
            // We were not listening; the consumer was not silent.
            heard = tokio::time::Instant::now();
        }
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = check.tick() => {
                // Counts every (re)connection, so even a short outage is seen.
                let now = statistics.connects.load(Ordering::Relaxed);
                let reconnected = now != connects;
                let connected = r.client.connection_state() == State::Connected;
                let restart = if reconnected {
                    connected
                } else if connected && heard.elapsed() >= STALL_CHECK {
                    // At most one look at the stream per STALL_CHECK of silence: an
                    // idle federation costs one small request a second.
                    heard = tokio::time::Instant::now();
                    r.stalled().await
                } else {
                    false
                };
                if restart {
                    match ordered_messages(&r.stream, r.federation, r.next).await {
                        Ok(fresh) => {
                            messages = fresh;
                            connects = now;
                            if !reconnected {
                                r.reader.counters.consumer_restarts.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        // JetStream may not be ready yet: try again at the next check.
                        Err(e) => tracing::debug!(error = %e, "cannot restart the JetStream consumer yet"),
                    }
                    heard = tokio::time::Instant::now();
                }
            }
            message = messages.next() => match message {
                Some(Ok(m)) => {
                    heard = tokio::time::Instant::now();
                    if let Ok(info) = m.info() {
                        if info.stream_sequence < r.next {
                            continue;
                        }
                        r.next = info.stream_sequence + 1;
                    }
                    let message: Message = m.message;
                    if r.filter.admit(message.headers.as_ref()) {
                        r.reader.handle(message, Via::Federation);
                    }
                }
                Some(Err(e)) => tracing::debug!(error = %e, "JetStream consumer hiccup; it recovers by itself"),
                None => break,
            },
        }
    }
    if r.filter.dropped > 0 {
        tracing::debug!(
            dropped = r.filter.dropped,
            "duplicate or out-of-order JetStream messages dropped"
        );
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::nats::frames::FrameCodec;
    use crate::nats::jetstream::{stream_config, JetStreamOptions};
    use crate::nats::Counters;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ORIGIN_HEADER, value);
        h
    }

    /// A consumer that stops delivering while messages wait in the stream is
    /// replaced within seconds, at the next message: here the reader is handed a
    /// consumer of another, empty stream, which stays silent for good (as the
    /// client's ordered consumer did for 8 s once a full ATM day).
    #[test]
    fn a_silent_consumer_is_replaced_while_messages_wait() {
        use glidepath_core::{FederateHandle, InteractionClassHandle};
        let store =
            std::env::temp_dir().join(format!("glidepath-silent-consumer-{}", std::process::id()));
        let server = crate::nats::NatsServerProcess::start_with(
            None,
            &["--jetstream", "--store_dir", store.to_str().unwrap()],
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let runtime = tokio::runtime::Runtime::new().unwrap();
        // The topic of conformance::data's interactions.
        let (federation, topic) = (
            FederationId(7),
            Topic::InteractionClass(InteractionClassHandle(1)),
        );
        let (inbox, delivered) = crossbeam_channel::unbounded();
        let counters = Arc::new(Counters::default());
        let sent = 500u64;
        runtime.block_on(async {
            let client = async_nats::connect(server.url()).await.unwrap();
            let js = async_nats::jetstream::new(client.clone());
            let stream = js
                .create_stream(stream_config(federation, &JetStreamOptions::default()))
                .await
                .unwrap();
            let empty = js
                .create_stream(stream_config(FederationId(8), &JetStreamOptions::default()))
                .await
                .unwrap();
            let silent = ordered_messages(&empty, FederationId(8), 1).await.unwrap();
            let reader = Reader {
                cell_view: Default::default(),
                arrivals: Default::default(),
                federation,
                filter: Arc::new(RwLock::new(HashSet::from([topic]))),
                inbox,
                counters: counters.clone(),
                notified: Arc::default(),
                last_seq: HashMap::new(),
                codec: Arc::new(FrameCodec::new(Default::default()).unwrap()),
                receiver: None,
                flow: None,
            };
            let (_stop, stop) = oneshot::channel();
            tokio::spawn(read_stream(
                StreamReader {
                    reader,
                    client: client.clone(),
                    stream,
                    federation,
                    next: 1,
                    backlog_max: 1 << 20,
                    filter: OriginFilter::new(None),
                },
                silent,
                stop,
            ));
            for seq in 1..=sent {
                let envelope = crate::conformance::data(3, seq);
                let subject = glidepath_wire::subject::topic_subject(federation, topic);
                let payload = glidepath_wire::encode_envelope(&envelope);
                js.publish(subject, payload).await.unwrap().await.unwrap();
            }
            // Received in order, once each, within a few stall checks.
            for seq in 1..=sent {
                let envelope =
                    tokio::task::block_in_place(|| delivered.recv_timeout(Duration::from_secs(30)))
                        .unwrap_or_else(|_| panic!("envelope {seq} of {sent} never came"));
                assert_eq!((envelope.sender, envelope.seq), (FederateHandle(3), seq));
            }
        });
        assert_eq!(counters.consumer_restarts.load(Ordering::Relaxed), 1);
        assert!(delivered.is_empty());
        drop(server);
        let _ = std::fs::remove_dir_all(&store);
    }

    #[test]
    fn origin_filter_admits_each_message_once_in_order() {
        let mut f = OriginFilter::new(Some("me".into()));
        assert!(f.admit(None));
        assert!(!f.admit(Some(&headers("me 1"))));
        assert!(f.admit(Some(&headers("a 1"))));
        assert!(f.admit(Some(&headers("a 2"))));
        // 3 lost in a restart: 4 and 5 wait for the retransmission of 3, 4, 5.
        assert!(!f.admit(Some(&headers("a 4"))));
        assert!(!f.admit(Some(&headers("a 5"))));
        assert!(!f.admit(Some(&headers("a 2"))));
        assert!(f.admit(Some(&headers("a 3"))));
        assert!(f.admit(Some(&headers("a 4"))));
        assert!(f.admit(Some(&headers("a 5"))));
        assert!(f.admit(Some(&headers("b 7"))));
        assert_eq!(f.dropped, 3);
    }
}

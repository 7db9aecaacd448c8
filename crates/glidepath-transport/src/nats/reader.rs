//! The receive path: one task per federation subscription (`read_federation`) takes
//! messages off the client, opens frames and bundles, applies reliable delivery and
//! hands envelopes to the endpoint's inbox.

use std::collections::hash_map::Entry;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use async_nats::{Message, Subscriber};
use bytes::Bytes;
use crossbeam_channel::Sender;
use futures::{FutureExt, StreamExt};
use glidepath_core::{Envelope, FederateHandle, Topic};
use tokio::sync::mpsc::UnboundedReceiver;
use tokio::sync::oneshot;

use crate::{is_best_effort, BEST_EFFORT_BACKLOG_MAX};

use super::cell_routes::CellCommand;
use super::{
    cells, flow, frames, parse_topic, subject, warn_throttled, Counters, FrameCodec, Reader,
    Refused, Via,
};

impl Reader {
    /// Takes one message from the federation's wildcard or from this endpoint's
    /// retransmission subject.
    pub(super) fn handle(&mut self, message: Message, via: Via) {
        if via == Via::Retransmission && flow::Receiver::is_gone_notice(&message) {
            if let Some(receiver) = &mut self.receiver {
                if !receiver.gone(&message) {
                    let total = self.counters.malformed.fetch_add(1, Ordering::Relaxed) + 1;
                    warn_throttled!(subject = %message.subject, total, "dropped a notice of envelopes no longer kept that failed authentication or decoding");
                }
            }
            return;
        }
        let topic = match (&self.receiver, via) {
            (_, Via::Cell(topic, _)) => Some(topic),
            (Some(receiver), Via::Retransmission) => receiver.retransmitted_topic(&message),
            _ => parse_topic(self.federation, &message.subject),
        };
        let Some(topic) = topic else {
            let total = self.counters.malformed.fetch_add(1, Ordering::Relaxed) + 1;
            warn_throttled!(subject = %message.subject, total, "dropped a message on a subject that is no glidepath topic");
            return;
        };
        let payload = message.payload;
        // Plain envelopes, the common case without a key, skip the frame machinery.
        if !self.codec.keyed() && payload.first() == Some(&glidepath_wire::MAGIC) {
            self.handle_envelope(topic, &message.subject, payload, via);
            return;
        }
        let envelopes = match self.codec.open(&payload).and_then(FrameCodec::split) {
            Ok(envelopes) => envelopes,
            Err(refused) => {
                let counter = match refused {
                    Refused::Rejected(_) => &self.counters.rejected,
                    Refused::Malformed(_) => &self.counters.malformed,
                };
                let total = counter.fetch_add(1, Ordering::Relaxed) + 1;
                warn_throttled!(subject = %message.subject, sender = frames::sender_of(message.headers.as_ref()), error = %refused, bytes = payload.len(), total, "dropped a message that failed authentication or decoding");
                return;
            }
        };
        for envelope in envelopes {
            self.handle_envelope(topic, &message.subject, envelope, via);
        }
    }

    pub(super) fn handle_envelope(
        &mut self,
        topic: Topic,
        subject: &str,
        payload: Bytes,
        via: Via,
    ) {
        // Envelopes of topics we do not want are read only as far as the header,
        // which is enough to check their sender's sequence.
        let wanted = self.filter.read().contains(&topic);
        let bytes = payload.len();
        let decoded = if wanted {
            glidepath_wire::decode_envelope_bytes(payload.clone())
                .map(|e| (e.sender, e.seq, Some(e)))
        } else {
            glidepath_wire::decode_header(&payload).map(|h| (h.sender, h.seq, None))
        };
        let (sender, seq, envelope) = match decoded {
            Ok(d) => d,
            Err(error) => {
                let total = self.counters.malformed.fetch_add(1, Ordering::Relaxed) + 1;
                warn_throttled!(subject, %error, bytes, total, "dropped an undecodable envelope");
                return;
            }
        };
        if sender != FederateHandle::EXECUTIVE {
            if let Some(receiver) = &mut self.receiver {
                let (inbox, counters) = (&self.inbox, &*self.counters);
                let mut deliver = |e: Envelope| deliver_to(inbox, counters, e);
                if let Via::Cell(topic, cell) = via {
                    self.arrivals.record(sender, seq, topic, cell);
                }
                let arrival = flow::Arrival {
                    sender,
                    seq,
                    bytes,
                    retransmitted: via == Via::Retransmission,
                    deferred: matches!(via, Via::Cell(..)),
                };
                match receiver.admit(arrival, envelope, &counters.lost, &mut deliver) {
                    flow::Admission::Accepted => {}
                    flow::Admission::Duplicate => {
                        counters.duplicates.fetch_add(1, Ordering::Relaxed);
                    }
                }
                return;
            }
        }
        match self.last_seq.entry(sender) {
            Entry::Vacant(v) => {
                v.insert(seq);
            }
            // A notification seen already: a new active executive server publishes
            // the last ones again when it takes over (see `server/failover.rs`).
            Entry::Occupied(o) if sender == FederateHandle::EXECUTIVE && seq <= *o.get() => {
                self.counters.duplicates.fetch_add(1, Ordering::Relaxed);
                return;
            }
            Entry::Occupied(mut o) => {
                let last = *o.get();
                if seq > last + 1 {
                    let total = self
                        .counters
                        .lost
                        .fetch_add(seq - last - 1, Ordering::Relaxed)
                        + (seq - last - 1);
                    warn_throttled!(federation = self.federation.0, %sender, seq, last, lost = seq - last - 1, total, "envelopes lost in transit");
                }
                if seq > last {
                    o.insert(seq);
                }
            }
        }
        if let Some(envelope) = envelope {
            if sender == FederateHandle::EXECUTIVE {
                self.member_left(&envelope.body);
            }
            self.deliver(envelope);
        }
        if sender == FederateHandle::EXECUTIVE {
            self.notified.record(self.federation, seq);
        }
    }

    /// A member resigned or was lost: what is kept per sender is let go of once its
    /// stream falls quiet (reliable delivery), or at once (the sequence check of
    /// unreliable streams: a late envelope of its starts afresh, and the core, which
    /// has finished with it, drops it).
    fn member_left(&mut self, body: &glidepath_core::Body) {
        use glidepath_core::{Body, Notification};
        let (Body::Exec(Notification::FederateResigned { federate })
        | Body::Exec(Notification::FederateLost { federate })) = body
        else {
            return;
        };
        self.last_seq.remove(federate);
        if let Some(receiver) = &mut self.receiver {
            receiver.sender_departed(*federate);
        }
    }

    /// Takes a message from a cell subscription.
    pub(super) fn handle_cell(&mut self, message: Message) {
        let grid = self.cell_view.read().grid;
        let parsed =
            grid.and_then(|g| subject::parse_cell_subject(self.federation, g, &message.subject));
        match parsed {
            Some((topic, cell)) => self.handle(message, Via::Cell(topic, cell)),
            None => {
                let total = self.counters.malformed.fetch_add(1, Ordering::Relaxed) + 1;
                warn_throttled!(subject = %message.subject, total, "dropped a message on a subject that is no cell of this federation's grid");
            }
        }
    }

    /// Takes a sender's account of what it sent to cells: skips what was not for
    /// this endpoint when it holds everything that was, else asks for the holes at
    /// once (see [`super::cells`]).
    pub(super) fn account(&mut self, payload: &[u8]) {
        let account = match cells::Account::decode(payload) {
            Ok(a) => a,
            Err(error) => {
                let total = self.counters.malformed.fetch_add(1, Ordering::Relaxed) + 1;
                warn_throttled!(federation = self.federation.0, %error, total, "dropped a cell account");
                return;
            }
        };
        let Some(receiver) = &mut self.receiver else {
            return;
        };
        let complete = {
            let view = self.cell_view.read();
            let filter = self.filter.read();
            if view.grid.is_some_and(|g| g != account.grid) {
                warn_throttled!(federation = self.federation.0, sender = %account.sender, theirs = account.grid, ours = view.grid.unwrap_or(0), "a sender cuts the federation into other cells than this endpoint (different --ddm-cells or --ddm-dimensions?); its envelopes with regions arrive only as retransmissions");
            }
            self.arrivals
                .complete(&account, &view, |t| filter.contains(&t))
        };
        if complete {
            let (inbox, counters) = (&self.inbox, &*self.counters);
            receiver.skip(
                account.sender,
                account.from + 1,
                account.upto,
                &counters.lost,
                &mut |e: Envelope| deliver_to(inbox, counters, e),
            );
        } else {
            receiver.expedite(account.sender);
        }
    }

    pub(super) fn deliver(&self, envelope: Envelope) {
        deliver_to(&self.inbox, &self.counters, envelope);
    }

    /// Whether to stop reading for now: the inbox holds a reliable backlog and this
    /// endpoint is not itself waiting for credit (see [`flow`], "Why no deadlock").
    pub(super) fn stalled(&self) -> bool {
        self.receiver.is_some()
            && self.inbox.len() >= flow::RELIABLE_BACKLOG_MAX
            && !self.flow.as_ref().is_some_and(|f| f.waiting())
    }

    pub(super) fn tick(&mut self) {
        let Some(receiver) = &mut self.receiver else {
            return;
        };
        let (inbox, counters) = (&self.inbox, &*self.counters);
        receiver.tick(&counters.lost, &mut |e: Envelope| {
            deliver_to(inbox, counters, e)
        });
    }
}

/// Into the inbox, unless it is best effort and the inbox is already long.
pub(super) fn deliver_to(inbox: &Sender<Envelope>, counters: &Counters, envelope: Envelope) {
    if is_best_effort(&envelope) && inbox.len() >= BEST_EFFORT_BACKLOG_MAX {
        // A slow subscriber sheds best-effort data; its seq was accounted for, so
        // this is not reported as loss in transit.
        counters.best_effort_dropped.fetch_add(1, Ordering::Relaxed);
        return;
    }
    // The receiver is gone only when the endpoint is closing.
    let _ = inbox.send(envelope);
}

/// The next message of an optional subscription; pending forever without one.
pub(super) async fn next_of(subscriber: &mut Option<Subscriber>) -> Option<Message> {
    match subscriber {
        Some(s) => s.next().await,
        None => std::future::pending().await,
    }
}

/// The next command of an optional channel; pending forever without one.
async fn next_command(
    commands: &mut Option<UnboundedReceiver<CellCommand>>,
) -> Option<CellCommand> {
    match commands {
        Some(r) => r.recv().await,
        None => std::future::pending().await,
    }
}

/// The cell subscriptions a federation's reader reads, and the commands that change
/// them.
struct CellSubscriptions {
    subs: Vec<(String, Subscriber)>,
    /// Where the next poll starts, so no cell starves the others.
    next: usize,
}

impl CellSubscriptions {
    fn apply(&mut self, command: CellCommand) {
        match command {
            CellCommand::Add(subject, sub) => self.subs.push((subject, sub)),
            CellCommand::Remove(subject) => self.subs.retain(|(s, _)| *s != subject),
        }
    }

    /// Takes the commands already waiting.
    fn apply_waiting(&mut self, commands: &mut Option<UnboundedReceiver<CellCommand>>) {
        while let Some(c) = commands.as_mut().and_then(|r| r.try_recv().ok()) {
            self.apply(c);
        }
    }

    /// The next message of any cell subscription; pending while there is none.
    fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Message> {
        let n = self.subs.len();
        for k in 0..n {
            let i = (self.next + k) % n;
            if let Poll::Ready(Some(m)) = self.subs[i].1.poll_next_unpin(cx) {
                self.next = (i + 1) % n;
                return Poll::Ready(m);
            }
        }
        Poll::Pending
    }

    /// Every message already waiting on the cell subscriptions, without waiting.
    /// Unconstrained by tokio's cooperative budget, which would otherwise report a
    /// channel empty that is not.
    fn drain(
        &mut self,
        commands: &mut Option<UnboundedReceiver<CellCommand>>,
        reader: &mut Reader,
    ) {
        self.apply_waiting(commands);
        let drain = std::future::poll_fn(|cx| loop {
            match self.poll_next(cx) {
                Poll::Ready(m) => reader.handle_cell(m),
                Poll::Pending => return Poll::Ready(()),
            }
        });
        let _ = tokio::task::unconstrained(drain).now_or_never();
    }
}

/// Moves one federation's messages from the client into the endpoint's inbox until
/// stopped; dropping the subscriber at the end unsubscribes at the server. With flow
/// control it also acknowledges on a timer, and stops reading while the inbox is full.
pub(super) async fn read_federation(
    mut reader: Reader,
    mut subscriber: Subscriber,
    mut retransmissions: Option<Subscriber>,
    mut cell_commands: Option<UnboundedReceiver<CellCommand>>,
    mut stop: oneshot::Receiver<()>,
) {
    let mut tick = tokio::time::interval(flow::ACK_INTERVAL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let accounts = subject::cells_subject(reader.federation);
    let mut cells = CellSubscriptions {
        subs: Vec::new(),
        next: 0,
    };
    loop {
        let stalled = reader.stalled();
        if let Some(receiver) = &mut reader.receiver {
            receiver.busy = stalled;
        }
        tokio::select! {
            biased;
            _ = &mut stop => break,
            _ = tick.tick(), if reader.receiver.is_some() => reader.tick(),
            // Retransmissions first: they fill gaps that hold newer envelopes back.
            Some(m) = next_of(&mut retransmissions), if !stalled => reader.handle(m, Via::Retransmission),
            Some(c) = next_command(&mut cell_commands) => cells.apply(c),
            message = subscriber.next(), if !stalled => match message {
                Some(m) if m.subject.as_str() == accounts => {
                    // Every cell envelope sent before the account is in hand first.
                    cells.drain(&mut cell_commands, &mut reader);
                    reader.account(&m.payload);
                }
                Some(m) => reader.handle(m, Via::Federation),
                None => break,
            },
            m = std::future::poll_fn(|cx| cells.poll_next(cx)), if !stalled => reader.handle_cell(m),
            _ = tokio::time::sleep(Duration::from_millis(1)), if stalled => {}
        }
        if let Some(receiver) = &mut reader.receiver {
            receiver.send().await;
        }
    }
    if let Some(receiver) = &mut reader.receiver {
        receiver.goodbye();
        receiver.send().await;
    }
}

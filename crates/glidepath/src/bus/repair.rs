//! RELIABLE and FIFO over core NATS, repaired: core NATS drops messages when a
//! connection breaks (a server restarts, a slow consumer is cut off), so every sender
//! keeps what it sent at these levels lately ([`Sent`]), and a receiver that finds a
//! gap in a sender's numbers, or whose connection comes back, asks that sender for
//! what it missed ([`fetch`]) and delivers it, in order, before anything later. A
//! sender whose own connection comes back sends its last frame again, so that a loss
//! at the end of its stream shows as a gap too.
//!
//! The request goes to the sender's own subject `gpbus.repair.<MEMBER>` (member id in
//! 16 hex digits, `docs/wire-format.md` 7.5); the request, the reply and the rules of
//! a repair are [`glidepath_bus::repair`]'s, without I/O, which the simulator drives
//! too (`glidepath-sim --bus-repair`). What the sender no longer holds is counted lost
//! by the receiver, never waited for.

use std::collections::HashMap;
use std::time::Duration;

use bytes::Bytes;
use glidepath_bus::frame::{self, Frame, MemberId};
use glidepath_bus::repair::{empty_answer, Fetch, Request, Window};
use glidepath_bus::Subject;
use parking_lot::Mutex;

/// How long a receiver waits for one reply.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);

/// A sender's subject for repair requests.
pub(crate) fn repair_subject(member: MemberId) -> String {
    format!("gpbus.repair.{member}")
}

/// What a sender keeps of the RELIABLE and FIFO frames it sent, per group.
#[derive(Default)]
pub(crate) struct Sent {
    groups: Mutex<HashMap<String, Window>>,
}

impl Sent {
    /// Keeps frame `seq` of `group` (encoded as sent), within the window's bounds.
    pub(crate) fn keep(&self, group: &Subject, seq: u64, frame: Bytes) {
        let mut groups = self.groups.lock();
        // No allocation per message: the group's name is copied once, when it is new.
        if !groups.contains_key(group.as_str()) {
            groups.insert(group.as_str().to_string(), Window::default());
        }
        groups
            .get_mut(group.as_str())
            .expect("inserted above")
            .keep(seq, frame);
    }

    /// The reply to `request` (see the module), or `None` when it is not one.
    pub(crate) fn answer(&self, request: &[u8]) -> Option<Bytes> {
        let request = Request::parse(request)?;
        let groups = self.groups.lock();
        Some(match groups.get(request.group) {
            Some(window) => window.answer(request.from, request.to),
            None => empty_answer(),
        })
    }

    /// The last frame sent in each group, with the subject it went on: sent again
    /// when the connection comes back, so that a receiver learns of frames lost at
    /// the end of the stream (it would otherwise only learn from a later frame).
    pub(crate) fn last_frames(&self) -> Vec<(String, Bytes)> {
        let groups = self.groups.lock();
        groups
            .iter()
            .filter_map(|(group, window)| {
                let bytes = window.last()?.clone();
                let Ok(Frame::Data(f)) = frame::decode(&bytes) else {
                    return None;
                };
                Some((format!("gpbus.{group}.d.{}", f.subject), bytes))
            })
            .collect()
    }
}

/// Answers repair requests on this connection's subject until it closes.
pub(crate) async fn serve(
    mut sub: async_nats::Subscriber,
    client: async_nats::Client,
    sent: std::sync::Arc<Sent>,
) {
    use futures::StreamExt;
    while let Some(msg) = sub.next().await {
        let (Some(reply), Some(body)) = (msg.reply, sent.answer(&msg.payload)) else {
            continue;
        };
        if let Err(e) = client.publish(reply, body).await {
            tracing::warn!("bus: answering a repair request: {e}");
        }
    }
}

/// Each time the connection comes back (or the client dropped messages for a slow
/// consumer), sends the last frame of every group again ([`Sent::last_frames`]).
pub(crate) async fn reannounce(
    mut reconnects: tokio::sync::watch::Receiver<u64>,
    client: async_nats::Client,
    sent: std::sync::Arc<Sent>,
) {
    while reconnects.changed().await.is_ok() {
        for (subject, bytes) in sent.last_frames() {
            if let Err(e) = client.publish(subject, bytes).await {
                tracing::warn!("bus: sending a group's last frame again: {e}");
            }
        }
    }
}

/// Asks `sender` for its frames of `group` from `from` up to `to` (exclusive; `None`:
/// everything it holds after `from`), as [`Fetch`] says, until it is done.
pub(crate) async fn fetch(
    client: &async_nats::Client,
    sender: MemberId,
    group: &Subject,
    from: u64,
    to: Option<u64>,
) -> Fetch {
    let mut fetch = Fetch::new(from, to);
    while let Some(request) = fetch.request(group) {
        let answer = tokio::time::timeout(
            REQUEST_TIMEOUT,
            client.request(repair_subject(sender), Bytes::from(request)),
        )
        .await;
        match answer {
            Ok(Ok(msg)) => fetch.on_reply(msg.payload),
            Ok(Err(e)) if e.kind() == async_nats::RequestErrorKind::NoResponders => {
                fetch.on_no_responders();
                if !fetch.is_done() {
                    tokio::time::sleep(Duration::from_nanos(fetch.retry_after_ns())).await;
                }
            }
            _ => {
                fetch.on_no_answer();
                if !fetch.is_done() {
                    tokio::time::sleep(Duration::from_nanos(fetch.retry_after_ns())).await;
                }
            }
        }
    }
    fetch
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Buf;
    use glidepath_bus::frame::DataFrame;

    #[test]
    fn a_sender_answers_per_group_and_refuses_what_is_not_a_request() {
        let sent = Sent::default();
        let g = Subject::new("G").unwrap();
        let frame = |seq| {
            Bytes::from(
                DataFrame {
                    level: glidepath_bus::ServiceLevel::Fifo,
                    encoding: glidepath_bus::Encoding::Binary,
                    sender: MemberId(7),
                    seq,
                    publish_time_ns: 0,
                    subject: Subject::new("A.B").unwrap(),
                    payload: Bytes::from_static(b"x"),
                }
                .encode(),
            )
        };
        for seq in 1..=3 {
            sent.keep(&g, seq, frame(seq));
        }
        assert_eq!(sent.answer(b"G 2 3").unwrap().get_u64(), 1);
        assert_eq!(sent.answer(b"H 1 -").unwrap().as_ref(), &[0u8; 8]);
        assert!(sent.answer(b"G 1").is_none());
        assert_eq!(
            sent.last_frames(),
            [("gpbus.G.d.A.B".to_string(), frame(3))]
        );
    }
}

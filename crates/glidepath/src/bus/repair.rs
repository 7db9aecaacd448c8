//! RELIABLE and FIFO over core NATS, repaired: core NATS drops messages when a
//! connection breaks (a server restarts, a slow consumer is cut off), so every sender
//! keeps what it sent at these levels lately ([`Sent`]), and a receiver that finds a
//! gap in a sender's numbers, or whose connection comes back, asks that sender for
//! what it missed ([`fetch`]) and delivers it, in order, before anything later.
//!
//! The request goes to the sender's own subject `gpbus.repair.<MEMBER>` (member id in
//! 16 hex digits, `docs/wire-format.md` 7.5) as the text `GROUP FROM TO` (`TO`
//! exclusive, `-` for "everything after FROM"); the reply is the first number the
//! sender still holds for that group (8 bytes, big-endian; 0 when it holds none) and
//! then up to [`REPLY_BYTES`] of consecutive frames from `FROM` on, each as a 4-byte
//! big-endian length and the frame as sent. What the sender no longer holds is counted
//! lost by the receiver, never waited for.

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use bytes::{Buf, BufMut, Bytes, BytesMut};
use glidepath_bus::frame::{self, DataFrame, Frame, MemberId};
use glidepath_bus::Subject;
use parking_lot::Mutex;

/// Frames a sender keeps per group: the last 65,536 ...
pub(crate) const KEEP_FRAMES: usize = 1 << 16;
/// ... within 64 MiB.
pub(crate) const KEEP_BYTES: usize = 64 << 20;
/// The most frame bytes one reply carries; the receiver asks again for the rest.
pub(crate) const REPLY_BYTES: usize = 256 << 10;
/// How long a receiver waits for one reply.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(2);
/// How many times a receiver asks a sender that does not answer (it may be
/// reconnecting too) before it counts the gap lost.
const ATTEMPTS: u32 = 10;

/// A sender's subject for repair requests.
pub(crate) fn repair_subject(member: MemberId) -> String {
    format!("gpbus.repair.{member}")
}

#[derive(Default)]
struct Kept {
    frames: VecDeque<(u64, Bytes)>,
    bytes: usize,
}

/// What a sender keeps of the RELIABLE and FIFO frames it sent, per group.
#[derive(Default)]
pub(crate) struct Sent {
    groups: Mutex<HashMap<String, Kept>>,
}

impl Sent {
    /// Keeps frame `seq` of `group` (encoded as sent), dropping the oldest beyond
    /// [`KEEP_FRAMES`] or [`KEEP_BYTES`].
    pub(crate) fn keep(&self, group: &Subject, seq: u64, frame: Bytes) {
        let mut groups = self.groups.lock();
        // No allocation per message: the group's name is copied once, when it is new.
        if !groups.contains_key(group.as_str()) {
            groups.insert(group.as_str().to_string(), Kept::default());
        }
        let kept = groups.get_mut(group.as_str()).expect("inserted above");
        kept.bytes += frame.len();
        kept.frames.push_back((seq, frame));
        while kept.frames.len() > KEEP_FRAMES || kept.bytes > KEEP_BYTES {
            match kept.frames.pop_front() {
                Some((_, f)) => kept.bytes -= f.len(),
                None => break,
            }
        }
    }

    /// The reply to `request` (see the module), or `None` when it is not one.
    pub(crate) fn answer(&self, request: &[u8]) -> Option<Bytes> {
        let text = std::str::from_utf8(request).ok()?;
        let mut parts = text.split(' ');
        let (group, from, to) = (parts.next()?, parts.next()?, parts.next()?);
        let from: u64 = from.parse().ok()?;
        let to: u64 = if to == "-" {
            u64::MAX
        } else {
            to.parse().ok()?
        };
        if parts.next().is_some() {
            return None;
        }
        let groups = self.groups.lock();
        let mut out = BytesMut::new();
        let Some(kept) = groups.get(group) else {
            out.put_u64(0);
            return Some(out.freeze());
        };
        out.put_u64(kept.frames.front().map_or(0, |(s, _)| *s));
        let start = kept.frames.partition_point(|(s, _)| *s < from);
        let mut size = 0;
        for (seq, f) in kept.frames.range(start..) {
            if *seq >= to || (size > 0 && size + f.len() > REPLY_BYTES) {
                break;
            }
            size += f.len();
            out.put_u32(f.len() as u32);
            out.put_slice(f);
        }
        Some(out.freeze())
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

/// What a receiver got back for a gap.
pub(crate) struct Fetched {
    /// The frames recovered, in order.
    pub(crate) frames: Vec<DataFrame>,
    /// The number after the last frame accounted for (recovered or lost).
    pub(crate) next: u64,
    /// Frames the sender no longer held (or that no answer brought): lost.
    pub(crate) lost: u64,
}

/// Asks `sender` for its frames of `group` from `from` up to `to` (exclusive; `None`:
/// everything it holds after `from`).
pub(crate) async fn fetch(
    client: &async_nats::Client,
    sender: MemberId,
    group: &Subject,
    from: u64,
    to: Option<u64>,
) -> Fetched {
    let mut got = Fetched {
        frames: Vec::new(),
        next: from,
        lost: 0,
    };
    let mut failures = 0;
    loop {
        if to.is_some_and(|t| got.next >= t) {
            return got;
        }
        let request = format!(
            "{group} {} {}",
            got.next,
            to.map_or("-".to_string(), |t| t.to_string())
        );
        let answer = tokio::time::timeout(
            REQUEST_TIMEOUT,
            client.request(repair_subject(sender), Bytes::from(request)),
        )
        .await;
        let mut body = match answer {
            Ok(Ok(msg)) => msg.payload,
            _ => {
                failures += 1;
                if failures >= ATTEMPTS {
                    // Nobody answers: what is missing up to `to` is lost.
                    got.lost += to.map_or(0, |t| t - got.next);
                    got.next = to.unwrap_or(got.next);
                    return got;
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        if body.len() < 8 {
            return got;
        }
        let first_held = body.get_u64();
        if first_held > got.next {
            // Dropped from the sender's memory before we asked.
            let upto = to.map_or(first_held, |t| first_held.min(t));
            got.lost += upto - got.next;
            got.next = upto;
        }
        let mut any = false;
        while body.remaining() >= 4 {
            let len = body.get_u32() as usize;
            if body.remaining() < len {
                break;
            }
            let bytes = body.split_to(len);
            if let Ok(Frame::Data(f)) = frame::decode(&bytes) {
                if f.seq == got.next {
                    got.next += 1;
                    got.frames.push(f);
                    any = true;
                }
            }
        }
        if !any {
            // Nothing more held: an open request is done; a closed one has lost the rest.
            if let Some(t) = to {
                got.lost += t - got.next;
                got.next = t;
            }
            return got;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glidepath_bus::frame::ServiceLevel;
    use glidepath_bus::Encoding;

    fn frame(seq: u64) -> Bytes {
        Bytes::from(
            DataFrame {
                level: ServiceLevel::Fifo,
                encoding: Encoding::Binary,
                sender: MemberId(7),
                seq,
                publish_time_ns: 0,
                subject: Subject::new("A.B").unwrap(),
                payload: Bytes::from(vec![0u8; 100]),
            }
            .encode(),
        )
    }

    #[test]
    fn a_sender_answers_what_it_holds_and_says_where_it_starts() {
        let sent = Sent::default();
        let g = Subject::new("G").unwrap();
        for seq in 1..=10 {
            sent.keep(&g, seq, frame(seq));
        }
        let mut reply = sent.answer(b"G 4 7").unwrap();
        assert_eq!(reply.get_u64(), 1);
        let mut seqs = Vec::new();
        while reply.remaining() >= 4 {
            let len = reply.get_u32() as usize;
            let Ok(Frame::Data(f)) = frame::decode(&reply.split_to(len)) else {
                panic!()
            };
            seqs.push(f.seq);
        }
        assert_eq!(seqs, [4, 5, 6]);
        let mut open = sent.answer(b"G 9 -").unwrap();
        assert_eq!(open.get_u64(), 1);
        assert!(open.remaining() > 0);
        assert_eq!(sent.answer(b"H 1 -").unwrap().as_ref(), &[0u8; 8]);
        for bad in [&b"G 1"[..], b"G x 2", b"G 1 2 3", &[0xff, 0xfe]] {
            assert!(sent.answer(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn a_sender_keeps_a_bounded_window() {
        let sent = Sent::default();
        let g = Subject::new("G").unwrap();
        for seq in 1..=(KEEP_FRAMES as u64 + 5) {
            sent.keep(&g, seq, Bytes::from_static(b"x"));
        }
        let mut reply = sent.answer(b"G 1 2").unwrap();
        assert_eq!(reply.get_u64(), 6, "the oldest five were dropped");
    }
}

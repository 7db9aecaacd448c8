//! RELIABLE and FIFO over a path that delivers one sender's frames in order but may
//! drop some (core NATS drops what is in flight when a connection breaks, and what a
//! slow consumer cannot take), without I/O:
//!
//! - [`Window`]: what a sender keeps of the frames it sent in one group, and its
//!   answer to a repair [`Request`];
//! - [`Fetch`]: one repair as a receiver works it, request after request, until the
//!   gap is filled or counted lost;
//! - [`Order`]: a receiver's view of every sender's numbers: deliver, drop a stale
//!   copy, or repair a gap first.
//!
//! `glidepath::bus` drives these over NATS (`docs/wire-format.md` 7.5);
//! `glidepath-sim --bus-repair` drives them over a network that breaks connections,
//! drops, duplicates and delays, and checks that every receiver delivers each
//! sender's frames once and in order, and accounts for every one it does not.
//!
//! The request is the text `GROUP FROM TO` (`TO` exclusive, `-` for "everything after
//! FROM"). The reply is the first number the sender still holds for that group (8
//! bytes, big-endian; 0 when it holds none) and then up to [`REPLY_BYTES`] of
//! consecutive frames from `FROM` on, each as a 4-byte big-endian length and the frame
//! as sent.

use std::collections::{HashMap, VecDeque};

use bytes::{Buf, BufMut, Bytes, BytesMut};

use crate::frame::{self, DataFrame, Frame, MemberId, ServiceLevel};
use crate::Subject;

/// Frames a sender keeps per group: the last 65,536 ...
pub const KEEP_FRAMES: usize = 1 << 16;
/// ... within 64 MiB.
pub const KEEP_BYTES: usize = 64 << 20;
/// The most frame bytes one reply carries; the receiver asks again for the rest.
pub const REPLY_BYTES: usize = 256 << 10;
/// How many times a receiver asks a sender that does not answer (it may be
/// reconnecting too) before it counts the gap lost; between tries it waits
/// [`Fetch::retry_after_ns`], 0.2 s doubling up to 2 s: about 13 s in all, longer than
/// a client takes to find a restarted server.
pub const ATTEMPTS: u32 = 10;
/// The longest wait between two tries.
const RETRY_MAX_NS: u64 = 2_000_000_000;

/// What a sender keeps of the RELIABLE and FIFO frames it sent in one group.
#[derive(Debug)]
pub struct Window {
    frames: VecDeque<(u64, Bytes)>,
    bytes: usize,
    max_frames: usize,
    max_bytes: usize,
}

impl Default for Window {
    fn default() -> Window {
        Window::new(KEEP_FRAMES, KEEP_BYTES)
    }
}

impl Window {
    /// A window of at most `max_frames` frames within `max_bytes`.
    pub fn new(max_frames: usize, max_bytes: usize) -> Window {
        Window {
            frames: VecDeque::new(),
            bytes: 0,
            max_frames: max_frames.max(1),
            max_bytes,
        }
    }

    /// Keeps frame `seq` (encoded as sent), dropping the oldest beyond the bounds.
    pub fn keep(&mut self, seq: u64, frame: Bytes) {
        self.bytes += frame.len();
        self.frames.push_back((seq, frame));
        while self.frames.len() > self.max_frames || self.bytes > self.max_bytes {
            match self.frames.pop_front() {
                Some((_, f)) => self.bytes -= f.len(),
                None => break,
            }
        }
    }

    /// The first number held (0: none).
    pub fn first_held(&self) -> u64 {
        self.frames.front().map_or(0, |(s, _)| *s)
    }

    /// The last frame sent, as sent: what a sender sends again once its connection is
    /// back, so that a receiver learns of a loss at the end of its stream.
    pub fn last(&self) -> Option<&Bytes> {
        self.frames.back().map(|(_, f)| f)
    }

    /// The reply to a request for `from..to` (see the module).
    pub fn answer(&self, from: u64, to: Option<u64>) -> Bytes {
        let to = to.unwrap_or(u64::MAX);
        let mut out = BytesMut::new();
        out.put_u64(self.first_held());
        let start = self.frames.partition_point(|(s, _)| *s < from);
        let mut size = 0;
        for (seq, f) in self.frames.range(start..) {
            if *seq >= to || (size > 0 && size + f.len() > REPLY_BYTES) {
                break;
            }
            size += f.len();
            out.put_u32(f.len() as u32);
            out.put_slice(f);
        }
        out.freeze()
    }
}

/// The reply of a sender that holds nothing for the group asked about.
pub fn empty_answer() -> Bytes {
    Bytes::from_static(&[0u8; 8])
}

/// A repair request: frames of `group` from `from` to `to` (exclusive; `None`:
/// everything held after `from`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    /// The group's name.
    pub group: &'a str,
    /// The first number wanted.
    pub from: u64,
    /// The number after the last one wanted, if bounded.
    pub to: Option<u64>,
}

impl<'a> Request<'a> {
    /// Reads a request; `None` when `bytes` is not one.
    pub fn parse(bytes: &'a [u8]) -> Option<Request<'a>> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut parts = text.split(' ');
        let (group, from, to) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || group.is_empty() {
            return None;
        }
        let from = from.parse().ok()?;
        let to = if to == "-" {
            None
        } else {
            Some(to.parse().ok()?)
        };
        Some(Request { group, from, to })
    }

    /// The request's text.
    pub fn encode(&self) -> String {
        match self.to {
            Some(to) => format!("{} {} {to}", self.group, self.from),
            None => format!("{} {} -", self.group, self.from),
        }
    }
}

/// One repair, as a receiver works it: ask ([`Fetch::request`]), take the reply
/// ([`Fetch::on_reply`]) or its absence ([`Fetch::on_no_answer`]), until
/// [`Fetch::is_done`].
#[derive(Debug)]
pub struct Fetch {
    /// The frames recovered, in order.
    pub frames: Vec<DataFrame>,
    /// The number after the last frame accounted for (recovered or lost).
    pub next: u64,
    /// Frames the sender no longer held (or that no answer brought): lost.
    pub lost: u64,
    to: Option<u64>,
    failures: u32,
    done: bool,
}

impl Fetch {
    /// A repair of `from..to` (`None`: everything the sender holds after `from`).
    pub fn new(from: u64, to: Option<u64>) -> Fetch {
        Fetch {
            frames: Vec::new(),
            next: from,
            lost: 0,
            to,
            failures: 0,
            done: to.is_some_and(|t| from >= t),
        }
    }

    /// Whether nothing more is to be asked.
    pub fn is_done(&self) -> bool {
        self.done
    }

    /// The next request for `group`, `None` once done.
    pub fn request(&self, group: &Subject) -> Option<String> {
        (!self.done).then(|| {
            Request {
                group: group.as_str(),
                from: self.next,
                to: self.to,
            }
            .encode()
        })
    }

    /// Takes a reply. One that cannot be read counts as no answer.
    pub fn on_reply(&mut self, mut body: Bytes) {
        if self.done {
            return;
        }
        if body.len() < 8 {
            self.on_no_answer();
            return;
        }
        let first_held = body.get_u64();
        if first_held > self.next {
            // Dropped from the sender's memory before we asked.
            let upto = self.to.map_or(first_held, |t| first_held.min(t));
            self.lost += upto - self.next;
            self.next = upto;
        }
        let mut any = false;
        while body.remaining() >= 4 {
            let len = body.get_u32() as usize;
            if body.remaining() < len {
                break;
            }
            let bytes = body.split_to(len);
            if let Ok(Frame::Data(f)) = frame::decode(&bytes) {
                if f.seq == self.next && self.to.is_none_or(|t| f.seq < t) {
                    self.next += 1;
                    self.frames.push(f);
                    any = true;
                }
            }
        }
        if self.to.is_some_and(|t| self.next >= t) {
            self.done = true;
        } else if !any {
            // Nothing more held: an open request is done; a bounded one has lost the rest.
            self.lose_rest();
        }
    }

    /// No reply came in time: the caller asks again, until [`ATTEMPTS`] have failed
    /// and the rest of a bounded gap is counted lost.
    pub fn on_no_answer(&mut self) {
        if self.done {
            return;
        }
        self.failures += 1;
        if self.failures >= ATTEMPTS {
            self.lose_rest();
        }
    }

    /// The server said nobody listens on the sender's repair subject: its connection is
    /// down (or it is gone). A bounded gap is asked for again, as after no answer;
    /// an open request ends at once, losing nothing: a sender whose connection comes
    /// back sends its last frame again, which shows any gap.
    pub fn on_no_responders(&mut self) {
        if self.to.is_none() {
            self.done = true;
        } else {
            self.on_no_answer();
        }
    }

    /// How long to wait before asking again after a failed try: 0.2 s, doubling with
    /// each failure, at most 2 s.
    pub fn retry_after_ns(&self) -> u64 {
        (100_000_000u64 << self.failures.min(5)).min(RETRY_MAX_NS)
    }

    fn lose_rest(&mut self) {
        if let Some(t) = self.to {
            self.lost += t.saturating_sub(self.next);
            self.next = self.next.max(t);
        }
        self.done = true;
    }
}

/// What a receiver does with one arriving frame ([`Order::arrive`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// Hand it out.
    Deliver,
    /// A copy of something delivered or accounted for already: drop it. `violation`
    /// when nothing explains it (not the sender's repeat of its last frame, not a copy
    /// a repair brought first): the path reordered or duplicated.
    Stale {
        /// Whether to count it as an order violation.
        violation: bool,
    },
    /// Frames `from..to` of its sender are missing: repair them (RELIABLE, FIFO),
    /// then hand this one out. [`Order::repaired`] records how far the repair went.
    Gap {
        /// The first missing.
        from: u64,
        /// The frame's own number.
        to: u64,
    },
    /// UNRELIABLE with a number (no repair): this many are lost; hand this one out.
    Lost(u64),
}

/// A receiver's per-sender numbers in one group.
#[derive(Debug, Default)]
pub struct Order {
    /// The next number expected from each sender: its first frame starts its stream.
    next: HashMap<MemberId, u64>,
    /// Per sender, the number after the last frame a repair accounted for: a later
    /// copy of one of those is expected (the repair came first), not a violation.
    repaired_to: HashMap<MemberId, u64>,
}

impl Order {
    /// What to do with `frame` (see [`Arrival`]); the frame counts as arrived.
    pub fn arrive(&mut self, frame: &DataFrame) -> Arrival {
        if frame.seq == 0 {
            return Arrival::Deliver;
        }
        let expected = *self.next.entry(frame.sender).or_insert(frame.seq);
        if frame.seq < expected {
            let repeat = frame.seq + 1 == expected;
            let repaired = frame.seq < self.repaired_to.get(&frame.sender).copied().unwrap_or(0);
            return Arrival::Stale {
                violation: !repeat && !repaired,
            };
        }
        self.next.insert(frame.sender, frame.seq + 1);
        if frame.seq == expected {
            Arrival::Deliver
        } else if matches!(frame.level, ServiceLevel::Reliable | ServiceLevel::Fifo) {
            Arrival::Gap {
                from: expected,
                to: frame.seq,
            }
        } else {
            Arrival::Lost(frame.seq - expected)
        }
    }

    /// A repair of `sender`'s frames accounted for everything before `next`.
    pub fn repaired(&mut self, sender: MemberId, next: u64) {
        self.repaired_to.insert(sender, next);
        let n = self.next.entry(sender).or_insert(next);
        *n = (*n).max(next);
    }

    /// After the receiver's own connection came back: every sender it has heard from,
    /// with the first number to ask it for (everything after is wanted).
    pub fn senders(&self) -> Vec<(MemberId, u64)> {
        let mut out: Vec<_> = self.next.iter().map(|(s, n)| (*s, *n)).collect();
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Encoding;

    fn data(seq: u64) -> DataFrame {
        DataFrame {
            level: ServiceLevel::Fifo,
            encoding: Encoding::Binary,
            sender: MemberId(7),
            seq,
            publish_time_ns: 0,
            subject: Subject::new("A.B").unwrap(),
            payload: Bytes::from(vec![0u8; 100]),
        }
    }

    fn frame(seq: u64) -> Bytes {
        Bytes::from(data(seq).encode())
    }

    fn seqs(mut reply: Bytes) -> (u64, Vec<u64>) {
        let first = reply.get_u64();
        let mut out = Vec::new();
        while reply.remaining() >= 4 {
            let len = reply.get_u32() as usize;
            let Ok(Frame::Data(f)) = frame::decode(&reply.split_to(len)) else {
                panic!("not a data frame")
            };
            out.push(f.seq);
        }
        (first, out)
    }

    #[test]
    fn a_sender_answers_what_it_holds_and_says_where_it_starts() {
        let mut w = Window::default();
        for seq in 1..=10 {
            w.keep(seq, frame(seq));
        }
        assert_eq!(seqs(w.answer(4, Some(7))), (1, vec![4, 5, 6]));
        assert_eq!(seqs(w.answer(9, None)), (1, vec![9, 10]));
        assert_eq!(seqs(Window::default().answer(1, None)), (0, vec![]));
        assert_eq!(w.last().unwrap(), &frame(10));
    }

    #[test]
    fn requests_round_trip_and_bad_ones_are_refused() {
        for r in [
            Request {
                group: "G",
                from: 4,
                to: Some(7),
            },
            Request {
                group: "G.H",
                from: 9,
                to: None,
            },
        ] {
            let text = r.encode();
            assert_eq!(Request::parse(text.as_bytes()), Some(r));
        }
        for bad in [&b"G 1"[..], b"G x 2", b"G 1 2 3", b" 1 2", &[0xff, 0xfe]] {
            assert!(Request::parse(bad).is_none(), "{bad:?}");
        }
    }

    #[test]
    fn a_sender_keeps_a_bounded_window() {
        let mut w = Window::new(KEEP_FRAMES, KEEP_BYTES);
        for seq in 1..=(KEEP_FRAMES as u64 + 5) {
            w.keep(seq, Bytes::from_static(b"x"));
        }
        assert_eq!(w.first_held(), 6, "the oldest five were dropped");
        let mut small = Window::new(100, 250);
        for seq in 1..=5 {
            small.keep(seq, Bytes::from(vec![0u8; 100]));
        }
        assert_eq!(small.first_held(), 4, "two frames fit in 250 bytes");
    }

    #[test]
    fn a_fetch_recovers_what_is_held_and_counts_the_rest_lost() {
        let mut w = Window::new(4, KEEP_BYTES);
        for seq in 1..=8 {
            w.keep(seq, frame(seq));
        }
        // Frames 2..7 wanted; 2..5 are gone, 5 and 6 are held.
        let mut f = Fetch::new(2, Some(7));
        let g = Subject::new("G").unwrap();
        assert_eq!(f.request(&g).as_deref(), Some("G 2 7"));
        f.on_reply(w.answer(2, Some(7)));
        assert!(f.is_done());
        assert_eq!(f.lost, 3);
        assert_eq!(f.frames.iter().map(|d| d.seq).collect::<Vec<_>>(), [5, 6]);
        assert_eq!(f.next, 7);
        assert_eq!(f.request(&g), None);
    }

    #[test]
    fn an_open_fetch_asks_until_nothing_more_is_held_and_loses_nothing() {
        let mut w = Window::default();
        for seq in 1..=3 {
            w.keep(seq, frame(seq));
        }
        let mut f = Fetch::new(2, None);
        f.on_reply(w.answer(2, None));
        assert!(!f.is_done(), "more may be held: it asks again");
        f.on_reply(w.answer(f.next, None));
        assert!(f.is_done());
        assert_eq!((f.next, f.lost, f.frames.len()), (4, 0, 2));
    }

    #[test]
    fn a_silent_sender_is_given_up_on_after_the_attempts() {
        let mut f = Fetch::new(3, Some(6));
        let mut waited = 0;
        for _ in 1..ATTEMPTS {
            f.on_no_answer();
            assert!(!f.is_done());
            waited += f.retry_after_ns();
        }
        assert_eq!(
            waited,
            200_000_000 + 400_000_000 + 800_000_000 + 1_600_000_000 + 5 * 2_000_000_000
        );
        // A reply too short to read is no answer either.
        f.on_reply(Bytes::from_static(b"abc"));
        assert!(f.is_done());
        assert_eq!((f.next, f.lost), (6, 3));
        let mut open = Fetch::new(3, None);
        for _ in 0..ATTEMPTS {
            open.on_no_answer();
        }
        assert!(open.is_done());
        assert_eq!(
            (open.next, open.lost),
            (3, 0),
            "an open request loses nothing it knows of"
        );
        let mut gone = Fetch::new(3, None);
        gone.on_no_responders();
        assert!(
            gone.is_done(),
            "an open request to a sender not connected ends at once"
        );
        let mut gap = Fetch::new(3, Some(5));
        gap.on_no_responders();
        assert!(!gap.is_done(), "a gap is asked for again");
    }

    #[test]
    fn the_order_delivers_repairs_and_drops_stale_copies() {
        let mut o = Order::default();
        assert_eq!(
            o.arrive(&data(5)),
            Arrival::Deliver,
            "the first frame starts the stream"
        );
        assert_eq!(o.arrive(&data(6)), Arrival::Deliver);
        assert_eq!(o.arrive(&data(9)), Arrival::Gap { from: 7, to: 9 });
        o.repaired(MemberId(7), 9);
        assert_eq!(
            o.arrive(&data(8)),
            Arrival::Stale { violation: false },
            "the repair brought it"
        );
        assert_eq!(
            o.arrive(&data(9)),
            Arrival::Stale { violation: false },
            "a repeat of the last"
        );
        assert_eq!(o.arrive(&data(10)), Arrival::Deliver);
        let mut other = data(4);
        other.sender = MemberId(8);
        assert_eq!(o.arrive(&other), Arrival::Deliver);
        other.seq = 5;
        assert_eq!(o.arrive(&other), Arrival::Deliver);
        other.seq = 3;
        assert_eq!(
            o.arrive(&other),
            Arrival::Stale { violation: true },
            "out of its order"
        );
        assert_eq!(o.senders(), [(MemberId(7), 11), (MemberId(8), 6)]);
        o.repaired(MemberId(7), 14);
        assert_eq!(o.arrive(&data(14)), Arrival::Deliver);
        let mut u = data(17);
        u.level = ServiceLevel::Unreliable;
        assert_eq!(o.arrive(&u), Arrival::Lost(2));
        u.seq = 0;
        assert_eq!(
            o.arrive(&u),
            Arrival::Deliver,
            "unnumbered frames are not checked"
        );
    }
}

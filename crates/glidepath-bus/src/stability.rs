//! SAFE delivery and crash detection over a group's total order, without I/O: one
//! member's view of who is in the group and how far each has received the order.
//!
//! A transport that numbers a group's CAUSAL, AGREED and SAFE messages and its
//! membership changes in one order (over NATS, the group's JetStream stream) feeds each
//! frame of that order to [`Stability::on_ordered`], each member's acknowledgement
//! ([`crate::frame::AckFrame`], also its heartbeat) to [`Stability::on_ack`], and calls
//! [`Stability::on_tick`] now and then. Frames come out in the same order, held back
//! only where Spread's SAFE requires:
//!
//! - **SAFE**: a SAFE message is handed out only once every member of this member's
//!   view has acknowledged the order through it (and so has it), and everything
//!   behind it in the order waits with it, so the total order is the same at every
//!   member. A member whose departure (left or crashed) is already in the order behind
//!   the message is not waited for: the message is handed out to the others, then the
//!   departure.
//! - **The view**: the members whose joining was handed out, the members heard from,
//!   and the members listed in the view of a member that has received this one's
//!   joining (so it has seen every change before it: a member that joined earlier
//!   is learnt from it). A departure handed out removes a member until it joins
//!   again. Until this member has heard such an acknowledgement, SAFE messages wait
//!   (at most `crash_timeout_ns` after joining: a member nobody answers is alone).
//! - **Crashes**: a member of the view not heard from for `crash_timeout_ns` is
//!   reported once by [`Stability::on_tick`]; the transport then puts a *crashed*
//!   membership frame into the order, and when it comes back out of this machine the
//!   member leaves the view, releasing any SAFE message that waited for it.
//!
//! Times are nanoseconds on any monotonic clock the caller chooses.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::frame::{Frame, MemberId, MembershipKind, ServiceLevel};

/// What [`Stability::on_ordered`] made of a frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arrival {
    /// The next of the order, or one that filled a hole.
    InOrder,
    /// Received before: ignored.
    Seen,
    /// Ahead of a hole: these numbers are missing (returned once), fetch them.
    Hole(std::ops::Range<u64>),
}

/// What this member knows of another.
#[derive(Clone, Copy, Debug)]
struct Peer {
    /// The last number of the order it acknowledged.
    through: u64,
    /// When it was last heard from.
    heard_ns: u64,
}

/// One member's SAFE-delivery and failure-detection state for one group.
#[derive(Debug)]
pub struct Stability {
    me: MemberId,
    view: BTreeMap<MemberId, Peer>,
    /// Members whose departure was handed out and who have not joined again: their
    /// late heartbeats do not bring them back.
    gone: BTreeSet<MemberId>,
    /// Members reported by `on_tick` and not heard from since.
    suspected: BTreeSet<MemberId>,
    /// Frames of the order received and not yet handed out, behind a SAFE message.
    held: VecDeque<(u64, Frame)>,
    /// The last number of the order received with nothing missing before it: what
    /// this member acknowledges.
    through: u64,
    /// Frames received ahead of a hole, by number.
    early: BTreeMap<u64, Frame>,
    /// The highest number received ahead of a hole: holes below it were reported.
    asked_through: u64,
    /// The number of this member's own joining in the order, once received.
    my_join: Option<u64>,
    /// Whether a member that has received this one's joining acknowledged it.
    learnt: bool,
    /// Past this, SAFE stops waiting for the view to be learnt (nobody answered).
    learn_until_ns: u64,
    crash_timeout_ns: u64,
}

impl Stability {
    /// A member `me` that joined at `now_ns`; a member silent for `crash_timeout_ns`
    /// is suspected.
    pub fn new(me: MemberId, now_ns: u64, crash_timeout_ns: u64) -> Stability {
        Stability {
            me,
            view: BTreeMap::new(),
            gone: BTreeSet::new(),
            suspected: BTreeSet::new(),
            held: VecDeque::new(),
            through: 0,
            early: BTreeMap::new(),
            asked_through: 0,
            my_join: None,
            learnt: false,
            learn_until_ns: now_ns.saturating_add(crash_timeout_ns),
            crash_timeout_ns,
        }
    }

    /// The last number of the order received with nothing missing before it: what
    /// this member acknowledges.
    pub fn through(&self) -> u64 {
        self.through
    }

    /// The other members this one knows, in order of their identity.
    pub fn view(&self) -> impl Iterator<Item = MemberId> + '_ {
        self.view.keys().copied()
    }

    /// How many frames wait behind a SAFE message.
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Frame number `seq` of the order, as it arrives: the first one received starts
    /// this member's order; a frame already received is ignored (returns `Seen`); one
    /// ahead of a hole waits for the hole to be filled, and the hole is returned once
    /// for the caller to fetch from the sequencer (and give [`Stability::on_ordered`]
    /// what it finds, or [`Stability::give_up`] what it cannot). What may be handed
    /// out now is appended to `out`, in order.
    pub fn on_ordered(
        &mut self,
        seq: u64,
        frame: Frame,
        now_ns: u64,
        out: &mut Vec<(u64, Frame)>,
    ) -> Arrival {
        if self.through == 0 && self.early.is_empty() {
            self.through = seq.saturating_sub(1);
        }
        if seq <= self.through || self.early.contains_key(&seq) {
            return Arrival::Seen;
        }
        if matches!(&frame, Frame::Membership(m) if m.member == self.me && m.kind == MembershipKind::Joined)
        {
            self.my_join = Some(seq);
        }
        let mut arrival = Arrival::InOrder;
        if seq == self.through + 1 {
            self.through = seq;
            self.held.push_back((seq, frame));
        } else {
            let from = self.through.max(self.asked_through) + 1;
            if seq > from {
                arrival = Arrival::Hole(from..seq);
            }
            self.asked_through = self.asked_through.max(seq);
            self.early.insert(seq, frame);
        }
        self.take_early();
        self.release(now_ns, out);
        arrival
    }

    /// The frames of the order through `upto` that the caller could not get are
    /// skipped (it counts them lost); returns how many.
    pub fn give_up(&mut self, upto: u64, now_ns: u64, out: &mut Vec<(u64, Frame)>) -> u64 {
        let mut skipped = 0;
        while self.through < upto {
            self.through += 1;
            match self.early.remove(&self.through) {
                Some(frame) => self.held.push_back((self.through, frame)),
                None => skipped += 1,
            }
        }
        self.take_early();
        self.release(now_ns, out);
        skipped
    }

    /// Frames that were waiting for a hole now filled move to the order.
    fn take_early(&mut self) {
        while let Some(frame) = self.early.remove(&(self.through + 1)) {
            self.through += 1;
            self.held.push_back((self.through, frame));
        }
    }

    /// Whether frames wait behind a hole in the order.
    pub fn has_hole(&self) -> bool {
        !self.early.is_empty()
    }

    /// Member `member` has received the order through `through` (and is alive), and
    /// knows the members `view`.
    pub fn on_ack(
        &mut self,
        member: MemberId,
        through: u64,
        view: &[MemberId],
        now_ns: u64,
        out: &mut Vec<(u64, Frame)>,
    ) {
        if member == self.me || self.gone.contains(&member) {
            return;
        }
        self.suspected.remove(&member);
        let peer = self.view.entry(member).or_insert(Peer {
            through: 0,
            heard_ns: now_ns,
        });
        peer.through = peer.through.max(through);
        peer.heard_ns = now_ns;
        if self.my_join.is_some_and(|j| through >= j) {
            // It has seen every change up to this member's joining: what it knows is
            // the group this member joined.
            self.learnt = true;
            for &m in view {
                if m != self.me && !self.gone.contains(&m) {
                    self.view.entry(m).or_insert(Peer {
                        through: 0,
                        heard_ns: now_ns,
                    });
                }
            }
        }
        self.release(now_ns, out);
    }

    /// Time passes: hands out what the end of learning released, and returns the
    /// members newly suspected of having crashed (each once until heard from again).
    pub fn on_tick(&mut self, now_ns: u64, out: &mut Vec<(u64, Frame)>) -> Vec<MemberId> {
        self.release(now_ns, out);
        let timeout = self.crash_timeout_ns;
        let silent: Vec<MemberId> = self
            .view
            .iter()
            .filter(|(id, p)| {
                now_ns.saturating_sub(p.heard_ns) > timeout && !self.suspected.contains(id)
            })
            .map(|(id, _)| *id)
            .collect();
        self.suspected.extend(silent.iter().copied());
        silent
    }

    /// Whether every member that must have frame `seq` has acknowledged it.
    fn stable(&self, seq: u64, now_ns: u64) -> bool {
        if !self.learnt && now_ns < self.learn_until_ns {
            return false;
        }
        // Members whose departure is already in the order behind `seq`.
        let departing: BTreeSet<MemberId> = self
            .held
            .iter()
            .filter_map(|(_, f)| match f {
                Frame::Membership(m) if m.kind != MembershipKind::Joined => Some(m.member),
                _ => None,
            })
            .collect();
        self.view
            .iter()
            .all(|(id, p)| p.through >= seq || departing.contains(id))
    }

    fn release(&mut self, now_ns: u64, out: &mut Vec<(u64, Frame)>) {
        while let Some((seq, frame)) = self.held.front() {
            if let Frame::Data(d) = frame {
                if d.level == ServiceLevel::Safe && !self.stable(*seq, now_ns) {
                    return;
                }
            }
            let (seq, frame) = self.held.pop_front().expect("a front");
            if let Frame::Membership(m) = &frame {
                match m.kind {
                    MembershipKind::Joined => {
                        self.gone.remove(&m.member);
                        if m.member != self.me {
                            // It has the order through its own joining.
                            let peer = self.view.entry(m.member).or_insert(Peer {
                                through: seq,
                                heard_ns: now_ns,
                            });
                            peer.through = peer.through.max(seq);
                            peer.heard_ns = now_ns;
                        }
                    }
                    MembershipKind::Left | MembershipKind::Crashed => {
                        let known = self.view.remove(&m.member).is_some();
                        self.suspected.remove(&m.member);
                        // A second notice of one departure (two members suspected
                        // the same crash) is not handed out again.
                        if !self.gone.insert(m.member) && !known {
                            continue;
                        }
                    }
                }
            }
            out.push((seq, frame));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{DataFrame, MembershipFrame};
    use crate::message::Encoding;
    use crate::subject::Subject;
    use bytes::Bytes;

    const MS: u64 = 1_000_000;

    fn data(level: ServiceLevel, n: u64) -> Frame {
        Frame::Data(DataFrame {
            level,
            encoding: Encoding::Binary,
            sender: MemberId(100),
            seq: n,
            publish_time_ns: 0,
            subject: Subject::new("A").unwrap(),
            payload: Bytes::new(),
        })
    }

    fn change(kind: MembershipKind, member: u64) -> Frame {
        Frame::Membership(MembershipFrame {
            kind,
            member: MemberId(member),
            name: String::new(),
        })
    }

    fn seqs(out: &[(u64, Frame)]) -> Vec<u64> {
        out.iter().map(|(s, _)| *s).collect()
    }

    /// Member 1 receives its own joining (1), member 2 acknowledges it (so member 1
    /// has learnt the group), then AGREED 2, SAFE 3, AGREED 4.
    fn two_members() -> (Stability, Vec<(u64, Frame)>) {
        let mut s = Stability::new(MemberId(1), 0, 2_000 * MS);
        let mut out = Vec::new();
        s.on_ordered(1, change(MembershipKind::Joined, 1), 5 * MS, &mut out);
        s.on_ack(MemberId(2), 1, &[MemberId(1)], 10 * MS, &mut out);
        s.on_ordered(2, data(ServiceLevel::Agreed, 2), 300 * MS, &mut out);
        s.on_ordered(3, data(ServiceLevel::Safe, 3), 300 * MS, &mut out);
        s.on_ordered(4, data(ServiceLevel::Agreed, 4), 300 * MS, &mut out);
        (s, out)
    }

    #[test]
    fn safe_waits_for_every_member_and_holds_what_follows() {
        let (mut s, mut out) = two_members();
        assert_eq!(
            seqs(&out),
            [1, 2],
            "SAFE 3 waits for member 2, AGREED 4 behind it"
        );
        assert_eq!(s.held(), 2);
        s.on_ack(MemberId(2), 2, &[], 310 * MS, &mut out);
        assert_eq!(seqs(&out), [1, 2]);
        s.on_ack(MemberId(2), 3, &[], 320 * MS, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3, 4]);
        assert_eq!(s.held(), 0);
    }

    #[test]
    fn the_view_is_learnt_from_a_member_that_has_the_joining() {
        let mut s = Stability::new(MemberId(1), 0, 2_000 * MS);
        let mut out = Vec::new();
        s.on_ordered(7, change(MembershipKind::Joined, 1), 0, &mut out);
        s.on_ordered(8, data(ServiceLevel::Safe, 8), 0, &mut out);
        // Member 2 has not seen the joining yet: its view does not count, and SAFE
        // waits.
        s.on_ack(MemberId(2), 6, &[MemberId(9)], 10 * MS, &mut out);
        assert_eq!(seqs(&out), [7]);
        assert_eq!(s.view().collect::<Vec<_>>(), [MemberId(2)]);
        // Now it has: member 3, which joined before member 1, is learnt from it, and
        // SAFE 8 waits for members 2 and 3.
        s.on_ack(
            MemberId(2),
            8,
            &[MemberId(1), MemberId(3)],
            20 * MS,
            &mut out,
        );
        assert_eq!(s.view().collect::<Vec<_>>(), [MemberId(2), MemberId(3)]);
        assert_eq!(seqs(&out), [7]);
        s.on_ack(MemberId(3), 8, &[], 30 * MS, &mut out);
        assert_eq!(seqs(&out), [7, 8]);
    }

    #[test]
    fn a_member_nobody_answers_is_alone_after_the_crash_timeout() {
        let mut s = Stability::new(MemberId(1), 0, 2_000 * MS);
        let mut out = Vec::new();
        s.on_ordered(1, change(MembershipKind::Joined, 1), 0, &mut out);
        s.on_ordered(2, data(ServiceLevel::Safe, 2), 50 * MS, &mut out);
        s.on_tick(1_999 * MS, &mut out);
        assert_eq!(seqs(&out), [1]);
        s.on_tick(2_000 * MS, &mut out);
        assert_eq!(seqs(&out), [1, 2]);
    }

    #[test]
    fn a_crash_is_suspected_once_and_its_notice_releases_safe() {
        let (mut s, mut out) = two_members();
        assert!(s.on_tick(1_000 * MS, &mut out).is_empty());
        assert_eq!(s.on_tick(2_011 * MS, &mut out), [MemberId(2)]);
        assert!(s.on_tick(2_100 * MS, &mut out).is_empty(), "reported once");
        // The notice comes back through the order, behind SAFE 3.
        s.on_ordered(5, change(MembershipKind::Crashed, 2), 2_110 * MS, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3, 4, 5]);
        assert_eq!(s.view().count(), 0);
        // A second detector's notice is not handed out again; late heartbeats do not
        // bring the member back, its joining does.
        s.on_ordered(6, change(MembershipKind::Crashed, 2), 2_120 * MS, &mut out);
        s.on_ack(MemberId(2), 4, &[], 2_130 * MS, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3, 4, 5]);
        assert_eq!(s.view().count(), 0);
        s.on_ordered(7, change(MembershipKind::Joined, 2), 2_140 * MS, &mut out);
        assert_eq!(s.view().collect::<Vec<_>>(), [MemberId(2)]);
        assert_eq!(seqs(&out), [1, 2, 3, 4, 5, 7]);
    }

    #[test]
    fn a_hole_is_reported_once_filled_in_order_and_duplicates_ignored() {
        let mut s = Stability::new(MemberId(1), 0, 2_000 * MS);
        let mut out = Vec::new();
        let agreed = |n| data(ServiceLevel::Agreed, n);
        assert_eq!(s.on_ordered(10, agreed(10), 0, &mut out), Arrival::InOrder);
        assert_eq!(
            s.on_ordered(13, agreed(13), 0, &mut out),
            Arrival::Hole(11..13)
        );
        assert_eq!(
            s.on_ordered(14, agreed(14), 0, &mut out),
            Arrival::InOrder,
            "asked already"
        );
        assert_eq!(
            s.on_ordered(16, agreed(16), 0, &mut out),
            Arrival::Hole(15..16)
        );
        assert!(s.has_hole());
        assert_eq!(seqs(&out), [10]);
        assert_eq!(
            s.through(),
            10,
            "acknowledges only what has no hole before it"
        );
        s.on_ordered(12, agreed(12), 0, &mut out);
        s.on_ordered(11, agreed(11), 0, &mut out);
        assert_eq!(seqs(&out), [10, 11, 12, 13, 14]);
        assert_eq!(s.on_ordered(12, agreed(12), 0, &mut out), Arrival::Seen);
        // 15 cannot be had: skipped, counted by the caller.
        assert_eq!(s.give_up(15, 0, &mut out), 1);
        assert_eq!(seqs(&out), [10, 11, 12, 13, 14, 16]);
        assert!(!s.has_hole());
        assert_eq!(s.through(), 16);
    }

    #[test]
    fn a_member_leaving_behind_a_safe_message_is_not_waited_for() {
        let (mut s, mut out) = two_members();
        s.on_ordered(5, change(MembershipKind::Left, 2), 400 * MS, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3, 4, 5]);
    }

    #[test]
    fn a_member_joining_after_a_safe_message_is_not_waited_for() {
        let mut s = Stability::new(MemberId(1), 0, 0);
        let mut out = Vec::new();
        s.on_ordered(1, data(ServiceLevel::Safe, 1), 0, &mut out);
        assert_eq!(seqs(&out), [1]);
        s.on_ordered(2, change(MembershipKind::Joined, 3), 10, &mut out);
        s.on_ordered(3, data(ServiceLevel::Safe, 3), 20, &mut out);
        assert_eq!(seqs(&out), [1, 2], "member 3 has it through 2 only");
        s.on_ack(MemberId(3), 3, &[], 30, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3]);
    }
}

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
//! - **The order** of a member starts at its own joining (its copy, or the number the
//!   stream acknowledged for it, [`Stability::joined_at`]). A hole (a copy lost by core
//!   NATS) is reported once for the caller to fetch from the stream; what follows
//!   waits. A lost copy at the end shows no hole: [`Stability::behind`] takes the
//!   order's end as another member acknowledged it or the stream reports it.
//! - **SAFE**: a SAFE message is handed out only once every member of this member's
//!   view has acknowledged the order through it (and so has it), and everything
//!   behind it in the order waits with it, so the total order is the same at every
//!   member. A member whose departure (left or crashed) is already in the order behind
//!   the message is not waited for: the message is handed out to the others, then the
//!   departure.
//! - **The view** is the group as of the last frame received, not handed out: a
//!   joining adds a member (having the order through its joining, so it is awaited
//!   only for SAFE messages after it), a departure removes it until it joins again.
//!   Members heard from are added too, and the members listed by a member whose view
//!   is the whole group (*learnt*) and which has received this one's joining (its list
//!   holds every member that joined earlier and is still there). A member is learnt
//!   when its order starts at the stream's first number (it saw every joining), or once
//!   it has taken such a list. Until it is learnt, a member hands out no SAFE message;
//!   after twice `crash_timeout_ns` with nobody to learn from it takes the members it
//!   heard meanwhile for the group (a member alive for a crash timeout after this one
//!   joined would have been heard; one silent that long counts as crashed).
//! - **Crashes**: a member of the view not heard from for `crash_timeout_ns` is
//!   reported once by [`Stability::on_tick`]; the transport then puts a *crashed*
//!   membership frame into the order, and when it arrives the member leaves the view,
//!   releasing any SAFE message that waited for it. A second notice of one departure
//!   (two members suspected the same crash) is dropped.
//!
//! The guarantee, as the simulator checks it (`glidepath-sim --bus`): a SAFE message
//! is handed out only when every member of the group at its place in the order has
//! received it, unless that member's departure is already in the order behind it or
//! it has been silent for longer than the crash timeout since (it counts as crashed).
//!
//! Times are nanoseconds on any monotonic clock the caller chooses.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::frame::{AckFrame, Frame, MemberId, MembershipKind, ServiceLevel};

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
    /// Frames received ahead of a hole (or before the order started), by number.
    early: BTreeMap<u64, Frame>,
    /// Whether the order has started (at this member's joining).
    started: bool,
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
            started: false,
            asked_through: 0,
            my_join: None,
            learnt: false,
            learn_until_ns: now_ns.saturating_add(crash_timeout_ns.saturating_mul(2)),
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

    /// Frame number `seq` of the order, as it arrives. This member's order starts at
    /// its own joining (from its copy, or [`Stability::joined_at`]); copies before
    /// that wait, and those numbered before the joining are dropped. A frame already
    /// received is ignored (`Seen`); one ahead of a hole waits for the hole to be
    /// filled, and the hole is returned once for the caller to fetch from the
    /// sequencer (and give to [`Stability::on_ordered`] what it finds, or to
    /// [`Stability::give_up`] what it cannot). What may be handed out now is
    /// appended to `out`, in order.
    pub fn on_ordered(
        &mut self,
        seq: u64,
        frame: Frame,
        now_ns: u64,
        out: &mut Vec<(u64, Frame)>,
    ) -> Arrival {
        let own_joining = matches!(&frame, Frame::Membership(m) if m.member == self.me && m.kind == MembershipKind::Joined);
        if !self.started {
            if !own_joining {
                self.early.entry(seq).or_insert(frame);
                return Arrival::InOrder;
            }
            self.start_at(seq);
        }
        if seq <= self.through || self.early.contains_key(&seq) {
            return Arrival::Seen;
        }
        if own_joining {
            self.my_join = Some(seq);
        }
        self.early.insert(seq, frame);
        self.take_early(now_ns);
        self.release(now_ns, out);
        match self.missing() {
            Some(hole) => Arrival::Hole(hole),
            None => Arrival::InOrder,
        }
    }

    /// The order starts at `seq` (this member's joining).
    fn start_at(&mut self, seq: u64) {
        self.started = true;
        self.through = seq.saturating_sub(1);
        self.asked_through = self.asked_through.max(self.through);
        self.early.retain(|&k, _| k >= seq);
        // An order from the stream's first number holds every joining.
        self.learnt |= seq == 1;
    }

    /// The numbers below the last frame waiting behind a hole that are neither
    /// received nor asked for yet (marked asked).
    fn missing(&mut self) -> Option<std::ops::Range<u64>> {
        let last = *self.early.keys().next_back()?;
        let from = self.through.max(self.asked_through) + 1;
        self.asked_through = self.asked_through.max(last);
        (last > from).then_some(from..last)
    }

    /// This member's joining was numbered `seq` (the sequencer's acknowledgement of
    /// its publication). If its copy has not come yet, the order starts there now:
    /// copies that came first move in, and what is missing between is returned to
    /// fetch (a lost first copy must not leave the member without an order).
    pub fn joined_at(
        &mut self,
        seq: u64,
        now_ns: u64,
        out: &mut Vec<(u64, Frame)>,
    ) -> Option<std::ops::Range<u64>> {
        self.my_join = Some(seq);
        if self.started {
            return None;
        }
        self.start_at(seq);
        self.take_early(now_ns);
        self.release(now_ns, out);
        match self.missing() {
            Some(hole) => Some(hole),
            // Its own joining itself is still to come.
            None if self.through < seq => {
                self.asked_through = self.asked_through.max(seq);
                Some(seq..seq + 1)
            }
            None => None,
        }
    }

    /// The frames of the order through `upto` that the caller could not get are
    /// skipped (it counts them lost); returns how many.
    pub fn give_up(&mut self, upto: u64, now_ns: u64, out: &mut Vec<(u64, Frame)>) -> u64 {
        let mut skipped = 0;
        while self.through < upto {
            self.through += 1;
            match self.early.remove(&self.through) {
                Some(frame) => self.hold(self.through, frame, now_ns),
                None => skipped += 1,
            }
        }
        self.take_early(now_ns);
        self.release(now_ns, out);
        skipped
    }

    /// Frames that were waiting for a hole now filled move to the order.
    fn take_early(&mut self, now_ns: u64) {
        while let Some(frame) = self.early.remove(&(self.through + 1)) {
            self.through += 1;
            self.hold(self.through, frame, now_ns);
        }
    }

    /// Frame `seq`, received with none missing before it, waits its turn to be handed
    /// out; a membership change applies to the view at once (the view is the group as
    /// of the last frame received, so the members it lists to a newcomer are the group
    /// the newcomer joined). A member joining counts as having the order through its
    /// joining; a second notice of one departure (two members suspected the same
    /// crash) is dropped.
    fn hold(&mut self, seq: u64, frame: Frame, now_ns: u64) {
        if let Frame::Membership(m) = &frame {
            match m.kind {
                MembershipKind::Joined => {
                    self.gone.remove(&m.member);
                    if m.member != self.me {
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
                    if !self.gone.insert(m.member) && !known {
                        return;
                    }
                }
            }
        }
        self.held.push_back((seq, frame));
    }

    /// Whether frames wait behind a hole in the order.
    pub fn has_hole(&self) -> bool {
        !self.early.is_empty()
    }

    /// This member's acknowledgement (and heartbeat), to send to the others.
    pub fn ack(&self) -> AckFrame {
        AckFrame {
            member: self.me,
            through: self.through,
            learnt: self.learnt,
            view: self.view().collect(),
        }
    }

    /// Whether this member knows the whole group (see the module documentation).
    pub fn learnt(&self) -> bool {
        self.learnt
    }

    /// The order is known to reach `last` (another member acknowledged it, or the
    /// sequencer said so): the numbers from the first neither received nor asked for
    /// through `last`, to fetch (a lost copy at the end of the order shows no hole
    /// until then).
    pub fn behind(&mut self, last: u64) -> Option<std::ops::Range<u64>> {
        if !self.started {
            // Where its order starts is not known yet.
            return None;
        }
        let from = self.through.max(self.asked_through) + 1;
        if last < from {
            return None;
        }
        self.asked_through = last;
        Some(from..last + 1)
    }

    /// Another member's acknowledgement: it is alive, has the order through
    /// `ack.through`, and knows `ack.view`. Returns frames it has that this member
    /// neither has nor asked for, to fetch.
    pub fn on_ack(
        &mut self,
        ack: &AckFrame,
        now_ns: u64,
        out: &mut Vec<(u64, Frame)>,
    ) -> Option<std::ops::Range<u64>> {
        let (member, through) = (ack.member, ack.through);
        if member == self.me || self.gone.contains(&member) {
            return None;
        }
        self.suspected.remove(&member);
        let peer = self.view.entry(member).or_insert(Peer {
            through: 0,
            heard_ns: now_ns,
        });
        peer.through = peer.through.max(through);
        peer.heard_ns = now_ns;
        if ack.learnt && self.my_join.is_some_and(|j| through >= j) {
            // It knows the group and has seen this member's joining: what it knows
            // is the group this member joined (or later members, still in it).
            self.learnt = true;
            for &m in &ack.view {
                if m != self.me && !self.gone.contains(&m) {
                    self.view.entry(m).or_insert(Peer {
                        through: 0,
                        heard_ns: now_ns,
                    });
                }
            }
        }
        self.release(now_ns, out);
        self.behind(through)
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
        // The view is the group as of the last frame received: a member that joined
        // after `seq` counts as having the order through its joining, and one whose
        // departure is already received is no longer in it.
        self.view.values().all(|p| p.through >= seq)
    }

    fn release(&mut self, now_ns: u64, out: &mut Vec<(u64, Frame)>) {
        while let Some((seq, frame)) = self.held.front() {
            if let Frame::Data(d) = frame {
                if d.level == ServiceLevel::Safe && !self.stable(*seq, now_ns) {
                    return;
                }
            }
            out.push(self.held.pop_front().expect("a front"));
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

    /// A learnt member's acknowledgement.
    fn ack(member: u64, through: u64, view: &[MemberId]) -> AckFrame {
        AckFrame {
            member: MemberId(member),
            through,
            learnt: true,
            view: view.to_vec(),
        }
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
        s.on_ack(&ack(2, 1, &[MemberId(1)]), 10 * MS, &mut out);
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
        s.on_ack(&ack(2, 2, &[]), 310 * MS, &mut out);
        assert_eq!(seqs(&out), [1, 2]);
        s.on_ack(&ack(2, 3, &[]), 320 * MS, &mut out);
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
        s.on_ack(&ack(2, 6, &[MemberId(9)]), 10 * MS, &mut out);
        assert_eq!(seqs(&out), [7]);
        // One that has it but does not know the whole group itself does not count.
        let unlearnt = AckFrame {
            learnt: false,
            ..ack(2, 8, &[MemberId(9)])
        };
        s.on_ack(&unlearnt, 15 * MS, &mut out);
        assert!(!s.learnt());
        assert_eq!(s.view().collect::<Vec<_>>(), [MemberId(2)]);
        // Now it has: member 3, which joined before member 1, is learnt from it, and
        // SAFE 8 waits for members 2 and 3.
        s.on_ack(&ack(2, 8, &[MemberId(1), MemberId(3)]), 20 * MS, &mut out);
        assert_eq!(s.view().collect::<Vec<_>>(), [MemberId(2), MemberId(3)]);
        assert_eq!(seqs(&out), [7]);
        s.on_ack(&ack(3, 8, &[]), 30 * MS, &mut out);
        assert_eq!(seqs(&out), [7, 8]);
    }

    #[test]
    fn a_member_nobody_answers_is_alone_after_twice_the_crash_timeout() {
        let mut s = Stability::new(MemberId(1), 0, 2_000 * MS);
        let mut out = Vec::new();
        s.on_ordered(5, change(MembershipKind::Joined, 1), 0, &mut out);
        s.on_ordered(6, data(ServiceLevel::Safe, 6), 50 * MS, &mut out);
        s.on_tick(3_999 * MS, &mut out);
        assert_eq!(seqs(&out), [5]);
        s.on_tick(4_000 * MS, &mut out);
        assert_eq!(seqs(&out), [5, 6]);
        // From the stream's first number on, a member saw every joining.
        let mut founder = Stability::new(MemberId(1), 0, 2_000 * MS);
        founder.on_ordered(1, change(MembershipKind::Joined, 1), 0, &mut out);
        assert!(founder.learnt());
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
        s.on_ack(&ack(2, 4, &[]), 2_130 * MS, &mut out);
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
        assert_eq!(s.joined_at(10, 0, &mut out), Some(10..11));
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
    fn a_lost_last_copy_is_found_from_an_acknowledgement() {
        let (mut s, mut out) = two_members();
        s.on_ack(&ack(2, 3, &[]), 320 * MS, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3, 4]);
        // Member 2 acknowledges 6: 5 and 6 never came here.
        assert_eq!(s.on_ack(&ack(2, 6, &[]), 400 * MS, &mut out), Some(5..7));
        assert_eq!(
            s.on_ack(&ack(2, 6, &[]), 500 * MS, &mut out),
            None,
            "asked once"
        );
        assert_eq!(s.behind(7), Some(7..8));
    }

    #[test]
    fn the_order_starts_at_the_joining_whatever_copy_comes_first() {
        let mut s = Stability::new(MemberId(1), 0, 2_000 * MS);
        let mut out = Vec::new();
        // Copies before the member knows where its order starts wait; one from
        // before its joining is dropped.
        s.on_ordered(6, data(ServiceLevel::Agreed, 6), 0, &mut out);
        s.on_ordered(9, data(ServiceLevel::Agreed, 9), 0, &mut out);
        assert_eq!(s.behind(9), None, "no order yet");
        assert!(out.is_empty());
        // Its joining was numbered 7 (the copy of 7 and 8 were lost): fetch them.
        assert_eq!(s.joined_at(7, 0, &mut out), Some(7..9));
        assert_eq!(s.through(), 6);
        s.on_ordered(8, data(ServiceLevel::Agreed, 8), 0, &mut out);
        s.on_ordered(7, change(MembershipKind::Joined, 1), 0, &mut out);
        assert_eq!(seqs(&out), [7, 8, 9]);
        // A member whose own copy came first knows already.
        let mut t = Stability::new(MemberId(1), 0, 2_000 * MS);
        t.on_ordered(4, change(MembershipKind::Joined, 1), 0, &mut out);
        assert_eq!(t.joined_at(4, 0, &mut out), None);
        assert_eq!(t.through(), 4);
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
        s.on_ordered(1, change(MembershipKind::Joined, 1), 0, &mut out);
        s.on_ordered(2, data(ServiceLevel::Safe, 2), 0, &mut out);
        assert_eq!(seqs(&out), [1, 2]);
        s.on_ordered(3, change(MembershipKind::Joined, 3), 10, &mut out);
        s.on_ordered(4, data(ServiceLevel::Safe, 4), 20, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3], "member 3 has it through 3 only");
        s.on_ack(&ack(3, 4, &[]), 30, &mut out);
        assert_eq!(seqs(&out), [1, 2, 3, 4]);
    }
}

//! Reliable delivery over a lossy network, as two pure state machines: a [`Sender`]
//! (what one sender keeps for its receivers, its window, its retransmissions) and a
//! [`Receiver`] (one reader's view of every sender: order, holes, acknowledgements,
//! NACKs, holes given up).
//!
//! Neither reads a clock, touches a socket or spawns anything (quinn-proto's style):
//! time comes in as `now_ns`, nanoseconds since any origin the driver picks, inputs
//! are `handle_*` calls, and what must go out is returned or taken with `poll_*`.
//! The NATS backend (`glidepath_transport::nats::flow`) drives them with the monotonic
//! clock and a NATS client; the simulator (`glidepath-sim --flow`) drives the same code
//! with a virtual clock over a network that loses, duplicates, delays and partitions.
//!
//! # The protocol
//!
//! Every envelope carries its sender's contiguous `seq`. A sender keeps what it
//! published until every receiver it knows of has acknowledged it, and runs at most a
//! window ahead of the slowest ([`Sender::has_credit`]). Receivers are learnt from
//! their acknowledgements; one that says goodbye is forgotten at once, one that stays
//! silent for [`PEER_TIMEOUT`] while data waits for it is given up, so that a crashed
//! receiver cannot stall its senders forever.
//!
//! A receiver delivers each sender's envelopes in `seq` order. An envelope after a gap
//! waits in a reorder buffer, and the receiver asks for the missing range (a NACK,
//! repeated every [`NACK_RETRY`] while the gap stays open). A gap nobody fills for
//! [`GAP_GIVEUP`] (the sender is gone, or no longer keeps it), or one that holds more
//! than two windows back, is counted as lost ([`Sink::lost`]) and skipped. The
//! give-up clock stands still while the receiver is busy ([`Receiver::set_busy`]):
//! a reader that has stopped reading because its inbox is full cannot see the
//! retransmission queued behind what it has not read yet. Receivers
//! acknowledge at the latest every [`ACK_INTERVAL`] and tell quiet senders they are
//! alive every [`KEEPALIVE`]. When a receiver's acknowledgement has not moved for the
//! retransmission timeout, a sender sends it again, unasked, its first
//! unacknowledged envelope and its last one: no later envelope would reveal a lost
//! tail as a gap, and the last one does (the receiver then NACKs the rest). The timeout adapts per receiver
//! as TCP's does (RFC 6298): [`RETX_AFTER`] at least, the smoothed time from
//! publication to acknowledgement plus four deviations (so a slow link's queue does
//! not look like a loss), doubled after each such retransmission up to
//! [`RETX_MAX`]; it runs from when data became outstanding, not from an old
//! acknowledgement.
//!
//! The first envelope a receiver gets from a sender starts that sender's stream for
//! it (it may have subscribed late): what came before is not asked for. A sender that
//! learns of a receiver late (its first acknowledgements were lost) may have dropped
//! what that receiver still lacks; it says so ([`Retransmission::gone`]), and so it
//! does for any range asked for that it no longer keeps. The receiver does not skip
//! at once (some of it may still be on its way): a hole there is given up after the
//! usual delay, and a tail with nothing after it, which no later envelope would
//! reveal, after the same delay without any of it arriving
//! ([`Receiver::handle_gone`], counted as [`GiveUp::Gone`]). A receiver
//! drops its state for a sender quiet for [`SENDER_QUIET`] but remembers where the
//! stream stood (for the [`QUIET_SENDERS_MAX`] most recent): when that sender speaks
//! again, a hole right after the silence is asked for, not skipped uncounted.
//!
//! Maps are ordered (`BTreeMap`), so the same inputs give the same outputs in the same
//! order: the simulator relies on it to replay a seed.

mod receiver;
mod sender;

use std::time::Duration;

pub use receiver::{Admission, Arrival, GiveUp, Receiver, Sink, QUIET_SENDERS_MAX};
pub use sender::{GivenUp, Retransmission, Sender};

/// How long a receiver may stay silent, while data waits for it, before a sender
/// gives it up. Long enough to ride out a NATS server restart (clients back off up to
/// 4 s between reconnection attempts).
pub const PEER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a sender waits for a receiver's acknowledgement to move before it
/// retransmits the unacknowledged tail to it.
pub const RETX_AFTER: Duration = Duration::from_millis(200);
/// The longest the retransmission timeout grows by backing off.
pub const RETX_MAX: Duration = Duration::from_secs(60);
/// How often a receiver repeats a NACK for a gap that is still open.
pub const NACK_RETRY: Duration = Duration::from_millis(100);
/// How long a gap may stay open without any retransmission arriving before the
/// receiver counts it as lost and moves on.
pub const GAP_GIVEUP: Duration = Duration::from_secs(2);
/// A receiver acknowledges progress at the latest this often.
pub const ACK_INTERVAL: Duration = Duration::from_millis(10);
/// A receiver tells every sender it has heard from lately that it is alive this often.
pub const KEEPALIVE: Duration = Duration::from_millis(500);
/// A receiver stops keeping a sender informed after this long without hearing from it.
pub const SENDER_QUIET: Duration = Duration::from_secs(30);
/// Most envelopes one retransmission sends to one receiver.
pub const RETX_BATCH: usize = 1024;

/// Window sizes; zero envelopes turns flow control off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Window {
    /// How many envelopes a sender may run ahead of its slowest receiver.
    pub envelopes: usize,
    /// How many bytes a sender may keep for its receivers.
    pub bytes: usize,
}

impl Window {
    /// Whether flow control is on.
    pub fn enabled(self) -> bool {
        self.envelopes > 0
    }
}

/// The window and the protocol's timers, in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct FlowConfig {
    pub window: Window,
    /// [`PEER_TIMEOUT`] by default.
    pub peer_timeout_ns: u64,
    /// [`RETX_AFTER`] by default: the shortest retransmission timeout.
    pub retx_after_ns: u64,
    /// [`RETX_MAX`] by default: the longest.
    pub retx_max_ns: u64,
    /// [`NACK_RETRY`] by default.
    pub nack_retry_ns: u64,
    /// [`GAP_GIVEUP`] by default.
    pub gap_giveup_ns: u64,
    /// [`ACK_INTERVAL`] by default.
    pub ack_interval_ns: u64,
    /// [`KEEPALIVE`] by default.
    pub keepalive_ns: u64,
    /// [`SENDER_QUIET`] by default.
    pub sender_quiet_ns: u64,
    /// [`RETX_BATCH`] by default.
    pub retx_batch: usize,
}

const fn ns(d: Duration) -> u64 {
    d.as_nanos() as u64
}

impl FlowConfig {
    /// The production timers with this window.
    pub const fn new(window: Window) -> FlowConfig {
        FlowConfig {
            window,
            peer_timeout_ns: ns(PEER_TIMEOUT),
            retx_after_ns: ns(RETX_AFTER),
            retx_max_ns: ns(RETX_MAX),
            nack_retry_ns: ns(NACK_RETRY),
            gap_giveup_ns: ns(GAP_GIVEUP),
            ack_interval_ns: ns(ACK_INTERVAL),
            keepalive_ns: ns(KEEPALIVE),
            sender_quiet_ns: ns(SENDER_QUIET),
            retx_batch: RETX_BATCH,
        }
    }
}

/// A control message from a receiver (named by its token) to a sender. Its encoding
/// belongs to the transport (`docs/wire-format.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Control {
    /// Everything up to `seq` was delivered; `busy`: the receiver's inbox is full.
    Ack { token: u64, seq: u64, busy: bool },
    /// Please resend `first..=last`.
    Nack { token: u64, first: u64, last: u64 },
    /// The receiver leaves: stop waiting for it.
    Bye { token: u64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Log {
        delivered: Vec<(u8, u64)>,
        lost: Vec<(u8, u64, u64, GiveUp)>,
    }

    impl Sink<u8, u64> for Log {
        fn deliver(&mut self, sender: u8, seq: u64, item: u64) {
            assert_eq!(seq, item);
            self.delivered.push((sender, seq));
        }
        fn lost(&mut self, sender: u8, first: u64, last: u64, why: GiveUp) {
            self.lost.push((sender, first, last, why));
        }
    }

    #[derive(Default)]
    struct Log32(usize);

    impl Sink<u32, u64> for Log32 {
        fn deliver(&mut self, _: u32, _: u64, _: u64) {
            self.0 += 1;
        }
        fn lost(&mut self, _: u32, _: u64, _: u64, _: GiveUp) {}
    }

    fn config(envelopes: usize) -> FlowConfig {
        FlowConfig::new(Window {
            envelopes,
            bytes: 1 << 20,
        })
    }

    fn arrival(seq: u64, retransmitted: bool) -> Arrival<u8> {
        Arrival {
            sender: 1,
            seq,
            bytes: 10,
            retransmitted,
            deferred: false,
        }
    }

    #[test]
    fn a_hole_is_nacked_filled_by_the_sender_and_delivered_in_order() {
        let mut sender = Sender::<u64>::new(config(8));
        let mut receiver = Receiver::<u8, u64>::new(7, config(8));
        let mut log = Log::default();
        for seq in 1..=4 {
            assert!(sender.has_credit());
            sender.keep(seq, seq, 10, 0);
        }
        receiver.handle_envelope(0, arrival(1, false), 1, &mut log);
        // 2 is lost; 3 opens a hole.
        receiver.handle_envelope(1, arrival(3, false), 3, &mut log);
        let mut nack = None;
        while let Some((_, c)) = receiver.poll_control() {
            sender.handle_control(2, c);
            if matches!(c, Control::Nack { .. }) {
                nack = Some(c);
            }
        }
        assert_eq!(
            nack,
            Some(Control::Nack {
                token: 7,
                first: 2,
                last: 2
            })
        );
        let retx = sender.poll_retransmission().expect("a retransmission");
        assert_eq!(retx.token, 7);
        assert_eq!(retx.items, vec![(2, 2)]);
        for (seq, item) in retx.items {
            receiver.handle_envelope(3, arrival(seq, true), item, &mut log);
        }
        receiver.handle_envelope(4, arrival(4, false), 4, &mut log);
        assert_eq!(log.delivered, vec![(1, 1), (1, 2), (1, 3), (1, 4)]);
        assert!(log.lost.is_empty());
        // A duplicate is refused.
        assert_eq!(
            receiver.handle_envelope(5, arrival(3, true), 3, &mut log),
            Admission::Duplicate
        );
    }

    #[test]
    fn a_hole_nobody_fills_is_counted_after_the_give_up_delay() {
        let c = config(8);
        let mut receiver = Receiver::<u8, u64>::new(7, c);
        let mut log = Log::default();
        receiver.handle_envelope(0, arrival(1, false), 1, &mut log);
        receiver.handle_envelope(0, arrival(5, false), 5, &mut log);
        receiver.handle_timeout(c.gap_giveup_ns - 1, &mut log);
        assert!(log.lost.is_empty());
        receiver.handle_timeout(c.gap_giveup_ns, &mut log);
        assert_eq!(log.lost, vec![(1, 2, 4, GiveUp::Timeout)]);
        assert_eq!(log.delivered, vec![(1, 1), (1, 5)]);
        assert_eq!(receiver.pending_len(1), 0);
    }

    #[test]
    fn a_busy_receiver_does_not_give_up_a_gap_it_cannot_read_the_repair_of() {
        let c = config(8);
        let mut receiver = Receiver::<u8, u64>::new(7, c);
        let mut log = Log::default();
        receiver.handle_envelope(0, arrival(1, false), 1, &mut log);
        receiver.handle_envelope(0, arrival(3, false), 3, &mut log);
        // The inbox fills: the reader stops reading for three give-up delays.
        receiver.set_busy(true);
        let step = c.gap_giveup_ns / 10;
        let mut now = 0;
        while now < 3 * c.gap_giveup_ns {
            now += step;
            receiver.handle_timeout(now, &mut log);
        }
        assert!(log.lost.is_empty(), "{:?}", log.lost);
        // It reads again: the repair was waiting behind the rest.
        receiver.set_busy(false);
        receiver.handle_envelope(now, arrival(2, true), 2, &mut log);
        assert_eq!(log.delivered, vec![(1, 1), (1, 2), (1, 3)]);
        // A gap it can read the repair of, and which stays open, is given up.
        receiver.handle_envelope(now, arrival(5, false), 5, &mut log);
        receiver.handle_timeout(now + c.gap_giveup_ns - 1, &mut log);
        assert!(log.lost.is_empty());
        receiver.handle_timeout(now + c.gap_giveup_ns, &mut log);
        assert_eq!(log.lost, vec![(1, 4, 4, GiveUp::Timeout)]);
    }

    #[test]
    fn a_sender_heard_again_after_a_long_silence_resumes_where_it_stood() {
        let c = config(8);
        let mut receiver = Receiver::<u8, u64>::new(7, c);
        let mut log = Log::default();
        for seq in 1..=5 {
            receiver.handle_envelope(0, arrival(seq, false), seq, &mut log);
        }
        // Quiet long enough for the receiver to drop its state for the sender.
        receiver.handle_timeout(0, &mut log);
        let later = c.sender_quiet_ns + 1;
        receiver.handle_timeout(later, &mut log);
        assert_eq!(receiver.delivered(1), None);
        while receiver.poll_control().is_some() {}
        // The first envelope after the silence is lost: the next one is held, and
        // the hole is asked for instead of skipped.
        receiver.handle_envelope(later, arrival(7, false), 7, &mut log);
        assert_eq!(receiver.delivered(1), Some(5));
        let nack = std::iter::from_fn(|| receiver.poll_control())
            .find(|(_, c)| matches!(c, Control::Nack { .. }));
        assert_eq!(
            nack,
            Some((
                1,
                Control::Nack {
                    token: 7,
                    first: 6,
                    last: 6
                }
            ))
        );
        receiver.handle_envelope(later + 1, arrival(6, true), 6, &mut log);
        assert_eq!(log.delivered, (1..=7).map(|s| (1, s)).collect::<Vec<_>>());
        assert!(log.lost.is_empty());
    }

    #[test]
    fn quiet_senders_are_remembered_up_to_a_bound() {
        let c = config(8);
        let mut receiver = Receiver::<u32, u64>::new(7, c);
        let mut log = Log32::default();
        let n = QUIET_SENDERS_MAX as u32 + 10;
        for sender in 0..n {
            let a = Arrival {
                sender,
                seq: 1,
                bytes: 10,
                retransmitted: false,
                deferred: false,
            };
            receiver.handle_envelope(u64::from(sender), a, 1, &mut log);
        }
        receiver.handle_timeout(u64::from(n), &mut log);
        receiver.handle_timeout(c.sender_quiet_ns + u64::from(n), &mut log);
        assert_eq!(receiver.quiet_len(), QUIET_SENDERS_MAX);
    }

    #[test]
    fn a_departed_sender_is_delivered_to_the_end_then_forgotten() {
        let c = config(8);
        let mut receiver = Receiver::<u8, u64>::new(7, c);
        let mut log = Log::default();
        // Sender 1 departs (announced) while its last envelopes are still coming;
        // sender 2 just falls quiet.
        receiver.handle_envelope(0, arrival(1, false), 1, &mut log);
        receiver.sender_departed(1);
        receiver.handle_envelope(0, arrival(2, false), 2, &mut log);
        let mut other = arrival(1, false);
        other.sender = 2;
        receiver.handle_envelope(0, other, 1, &mut log);
        assert_eq!(log.delivered, vec![(1, 1), (1, 2), (2, 1)]);
        receiver.handle_timeout(0, &mut log);
        receiver.handle_timeout(c.sender_quiet_ns + 1, &mut log);
        // Only the sender that may come back is remembered.
        assert_eq!(receiver.quiet_len(), 1);
        assert_eq!(receiver.delivered(1), None);
        // A departure announced after it fell quiet forgets it at once.
        receiver.sender_departed(2);
        assert_eq!(receiver.quiet_len(), 0);
    }

    #[test]
    fn a_receiver_the_sender_learns_late_is_told_what_it_can_no_longer_get() {
        // Receiver 1 is known and takes everything; receiver 2's first word arrives
        // when 1..=6 are trimmed (a partition cut its acknowledgements).
        let c = config(64);
        let mut sender = Sender::<u64>::new(c);
        let mut late = Receiver::<u8, u64>::new(2, c);
        let mut log = Log::default();
        sender.handle_control(
            0,
            Control::Ack {
                token: 1,
                seq: 0,
                busy: false,
            },
        );
        for seq in 1..=8 {
            sender.keep(seq, seq, 10, 0);
        }
        for seq in 1..=2 {
            late.handle_envelope(0, arrival(seq, false), seq, &mut log);
        }
        sender.handle_control(
            1,
            Control::Ack {
                token: 1,
                seq: 6,
                busy: false,
            },
        );
        assert_eq!(sender.kept_len(), 2);
        sender.handle_control(
            2,
            Control::Ack {
                token: 2,
                seq: 2,
                busy: false,
            },
        );
        let told = sender
            .poll_retransmission()
            .expect("a notice to the late receiver");
        assert_eq!(
            (told.token, told.gone, told.items.len()),
            (2, Some((3, 6)), 0)
        );
        // 3..=8 never reached it, and nothing more is published: without the notice
        // it would not know it lacks anything.
        late.handle_gone(3, 1, 3, 6);
        late.handle_timeout(3 + c.gap_giveup_ns - 1, &mut log);
        assert!(
            log.lost.is_empty(),
            "a tail is not given up before the delay"
        );
        late.handle_timeout(3 + c.gap_giveup_ns, &mut log);
        assert_eq!(log.lost, vec![(1, 3, 6, GiveUp::Gone)]);
        assert_eq!(late.delivered(1), Some(6));
        // What the sender still keeps, it still sends (its timer, on the ack).
        let mut now = 3 + c.gap_giveup_ns;
        while let Some((_, control)) = late.poll_control() {
            sender.handle_control(now, control);
        }
        while late.delivered(1) != Some(8) {
            now += c.retx_after_ns;
            sender.handle_timeout(now);
            while let Some(r) = sender.poll_retransmission() {
                // (The notice may come again until the receiver's next ack.)
                assert!(r.gone.is_none_or(|(_, last)| last <= 6), "{:?}", r.gone);
                for (seq, item) in r.items {
                    late.handle_envelope(now, arrival(seq, true), item, &mut log);
                }
            }
            late.handle_timeout(now, &mut log);
            while let Some((_, control)) = late.poll_control() {
                sender.handle_control(now, control);
            }
            assert!(
                now < 100 * c.retx_after_ns,
                "not repaired: {:?}",
                late.delivered(1)
            );
        }
        assert_eq!(log.lost.len(), 1);
    }

    #[test]
    fn a_gone_tail_is_given_up_after_the_delay_unless_it_arrives() {
        let c = config(64);
        let mut receiver = Receiver::<u8, u64>::new(2, c);
        let mut log = Log::default();
        receiver.handle_envelope(0, arrival(1, false), 1, &mut log);
        // 2..=5 are gone at the sender; 2 and 3 were still on their way.
        receiver.handle_gone(0, 1, 2, 5);
        receiver.handle_envelope(1, arrival(2, false), 2, &mut log);
        receiver.handle_envelope(c.gap_giveup_ns / 2, arrival(3, false), 3, &mut log);
        receiver.handle_timeout(c.gap_giveup_ns, &mut log);
        assert!(log.lost.is_empty());
        // While busy, the delay does not run.
        receiver.set_busy(true);
        receiver.handle_timeout(3 * c.gap_giveup_ns, &mut log);
        assert!(log.lost.is_empty());
        receiver.set_busy(false);
        receiver.handle_timeout(4 * c.gap_giveup_ns, &mut log);
        assert_eq!(log.lost, vec![(1, 4, 5, GiveUp::Gone)]);
        assert_eq!(receiver.delivered(1), Some(5));
        // A repeated notice changes nothing.
        receiver.handle_gone(5 * c.gap_giveup_ns, 1, 2, 5);
        receiver.handle_timeout(7 * c.gap_giveup_ns, &mut log);
        assert_eq!(log.lost.len(), 1);
    }

    #[test]
    fn the_window_stops_a_sender_until_the_slowest_receiver_acknowledges() {
        let mut sender = Sender::<u64>::new(config(4));
        sender.handle_control(
            0,
            Control::Ack {
                token: 1,
                seq: 0,
                busy: false,
            },
        );
        for seq in 1..=4 {
            assert!(sender.has_credit());
            assert_eq!(sender.keep(seq, seq, 10, 0), Some(seq));
        }
        assert!(!sender.has_credit());
        sender.handle_control(
            1,
            Control::Ack {
                token: 1,
                seq: 2,
                busy: false,
            },
        );
        assert!(sender.has_credit());
        assert_eq!(sender.kept_len(), 2);
        // A silent receiver is given up after the peer timeout, and its data dropped.
        let c = config(4);
        assert!(sender.give_up_silent(c.peer_timeout_ns).is_empty());
        let gone = sender.give_up_silent(1 + c.peer_timeout_ns);
        assert_eq!(
            gone,
            vec![GivenUp {
                token: 1,
                acked: 2,
                last: 4
            }]
        );
        assert!(sender.all_acknowledged());
    }

    #[test]
    fn a_lost_tail_is_retransmitted_after_the_delay() {
        let c = config(8);
        let mut sender = Sender::<u64>::new(c);
        sender.handle_control(
            0,
            Control::Ack {
                token: 3,
                seq: 0,
                busy: false,
            },
        );
        sender.keep(1, 1, 10, 0);
        sender.keep(2, 2, 10, 0);
        sender.handle_timeout(c.retx_after_ns - 1);
        assert!(sender.poll_retransmission().is_none());
        sender.handle_timeout(c.retx_after_ns);
        assert_eq!(
            sender.poll_retransmission(),
            Some(Retransmission {
                token: 3,
                items: vec![(1, 1), (2, 2)],
                gone: None,
            })
        );
    }

    fn ack(sender: &mut Sender<u64>, now_ns: u64, seq: u64) {
        sender.handle_control(
            now_ns,
            Control::Ack {
                token: 3,
                seq,
                busy: false,
            },
        );
    }

    #[test]
    fn the_timer_starts_when_data_becomes_outstanding_not_at_the_last_ack() {
        let c = config(8);
        let mut sender = Sender::<u64>::new(c);
        ack(&mut sender, 0, 0);
        // Idle for a long time (keep-alive acknowledgements do not move), then a publish.
        let t = 10 * c.retx_after_ns;
        sender.keep(1, 1, 10, t);
        sender.handle_timeout(t + c.retx_after_ns - 1);
        assert!(sender.poll_retransmission().is_none());
        sender.handle_timeout(t + c.retx_after_ns);
        assert!(sender.poll_retransmission().is_some());
    }

    #[test]
    fn a_backlog_once_acknowledged_gives_its_room_back() {
        // A receiver away for 50,000 envelopes (a NATS node restarting, say), then back.
        let c = FlowConfig::new(Window {
            envelopes: 100_000,
            bytes: 1 << 30,
        });
        let mut sender = Sender::<u64>::new(c);
        ack(&mut sender, 0, 0);
        for seq in 1..=50_000 {
            sender.keep(seq, seq, 10, 0);
        }
        assert!(sender.kept_capacity() >= 50_000);
        ack(&mut sender, 1, 50_000);
        assert_eq!(sender.kept_len(), 0);
        for seq in 50_001..=50_010 {
            sender.keep(seq, seq, 10, 2);
        }
        assert!(
            sender.kept_capacity() < 10_000,
            "the store still has room for {}",
            sender.kept_capacity()
        );
    }

    #[test]
    fn a_slow_links_queue_is_not_taken_for_a_lost_tail() {
        let c = config(64);
        let mut sender = Sender::<u64>::new(c);
        ack(&mut sender, 0, 0);
        // A burst crosses a slow link: each envelope is acknowledged 1 s after it was
        // published, one every 100 ms.
        let ms = 1_000_000;
        for seq in 1..=20 {
            sender.keep(seq, seq, 10, 0);
        }
        let mut retransmitted = 0;
        for step in 1..=60u64 {
            let now = step * 50 * ms;
            if now >= 1000 * ms && (now - 1000 * ms) % (100 * ms) == 0 {
                let seq = 1 + (now - 1000 * ms) / (100 * ms);
                if seq <= 20 {
                    ack(&mut sender, now, seq);
                }
            }
            sender.handle_timeout(now);
            while let Some(r) = sender.poll_retransmission() {
                retransmitted += r.items.len();
            }
        }
        // Before the first acknowledgement, the first timeout (200 ms) fires and backs
        // off (200, 400 ms: two retransmissions of the tail); once samples of about
        // 1 s arrive, the timeout covers the queue and nothing more is sent again.
        assert!(retransmitted <= 40, "{retransmitted} envelopes sent again");
        let before = retransmitted;
        for seq in 21..=40 {
            sender.keep(seq, seq, 10, 4000 * ms);
        }
        for step in 0..10u64 {
            let now = 4000 * ms + step * 50 * ms;
            if step == 9 {
                ack(&mut sender, now, 21);
            }
            sender.handle_timeout(now);
            while let Some(r) = sender.poll_retransmission() {
                retransmitted += r.items.len();
            }
        }
        assert_eq!(
            retransmitted, before,
            "the learnt timeout covers a 450 ms wait"
        );
    }

    #[test]
    fn unanswered_retransmissions_back_off() {
        let c = config(8);
        let mut sender = Sender::<u64>::new(c);
        ack(&mut sender, 0, 0);
        sender.keep(1, 1, 10, 0);
        let mut fired = Vec::new();
        let step = c.retx_after_ns / 4;
        for k in 1..=64u64 {
            sender.handle_timeout(k * step);
            if sender.poll_retransmission().is_some() {
                fired.push(k * step / c.retx_after_ns);
            }
        }
        // 1, then 1 + 2, then 3 + 4, then 7 + 8 timeouts later.
        assert_eq!(fired, vec![1, 3, 7, 15]);
        // The acknowledgement of a retransmitted envelope measures nothing (Karn):
        // the backed-off timeout (16 × the base) stays for the next envelope…
        let t = 64 * step;
        ack(&mut sender, t, 1);
        sender.keep(2, 2, 10, t);
        sender.handle_timeout(t + 15 * c.retx_after_ns);
        assert!(sender.poll_retransmission().is_none());
        sender.handle_timeout(t + 16 * c.retx_after_ns);
        assert!(sender.poll_retransmission().is_some());
        // …until an envelope sent once is acknowledged: 50 ms measured, the timeout
        // is back at its floor.
        let t = t + 20 * c.retx_after_ns;
        ack(&mut sender, t, 2);
        sender.keep(3, 3, 10, t);
        ack(&mut sender, t + 50_000_000, 3);
        sender.keep(4, 4, 10, t + 50_000_000);
        sender.handle_timeout(t + 50_000_000 + c.retx_after_ns - 1);
        assert!(sender.poll_retransmission().is_none());
        sender.handle_timeout(t + 50_000_000 + c.retx_after_ns);
        assert!(sender.poll_retransmission().is_some());
    }

    #[test]
    fn a_lost_tail_is_recovered_through_the_gap_its_last_envelope_shows() {
        let c = config(64);
        let mut sender = Sender::<u64>::new(c);
        let mut receiver = Receiver::<u8, u64>::new(3, c);
        let mut log = Log::default();
        ack(&mut sender, 0, 0);
        for seq in 1..=10 {
            sender.keep(seq, seq, 10, 0);
        }
        // Only 1 to 4 arrive; 5 to 10 are lost with a broken connection.
        for seq in 1..=4 {
            receiver.handle_envelope(0, arrival(seq, false), seq, &mut log);
        }
        receiver.handle_timeout(c.ack_interval_ns, &mut log);
        let mut now = c.ack_interval_ns;
        let mut rounds = 0;
        while log.delivered.len() < 10 {
            rounds += 1;
            assert!(rounds < 20, "not recovered: {:?}", log.delivered);
            while let Some((_, control)) = receiver.poll_control() {
                sender.handle_control(now, control);
            }
            now += c.retx_after_ns;
            sender.handle_timeout(now);
            while let Some(r) = sender.poll_retransmission() {
                for (seq, item) in r.items {
                    receiver.handle_envelope(now, arrival(seq, true), item, &mut log);
                }
            }
            receiver.handle_timeout(now, &mut log);
        }
        let seqs: Vec<u64> = log.delivered.iter().map(|d| d.1).collect();
        assert_eq!(seqs, (1..=10).collect::<Vec<_>>());
        assert!(log.lost.is_empty());
        // One timeout (first and last sent again), one NACK answered.
        assert!(rounds <= 3, "{rounds} rounds");
    }

    /// Items as `Option`: `None` is what a skip passes over.
    #[derive(Default)]
    struct Skips {
        delivered: Vec<u64>,
        lost: usize,
    }

    impl Sink<u8, Option<u64>> for Skips {
        fn deliver(&mut self, _: u8, _: u64, item: Option<u64>) {
            if let Some(i) = item {
                self.delivered.push(i);
            }
        }
        fn lost(&mut self, _: u8, _: u64, _: u64, _: GiveUp) {
            self.lost += 1;
        }
    }

    #[test]
    fn deferred_holes_wait_for_a_skip_and_are_asked_for_only_if_none_comes() {
        let c = config(64);
        let mut receiver = Receiver::<u8, Option<u64>>::new(7, c);
        let mut sink = Skips::default();
        let deferred = |seq| Arrival {
            deferred: true,
            ..arrival(seq, false)
        };
        receiver.handle_envelope(0, arrival(1, false), Some(1), &mut sink);
        while receiver.poll_control().is_some() {}
        // 2 and 3 went to other subjects; 4 is ours and waits without a NACK.
        receiver.handle_envelope(1, deferred(4), Some(4), &mut sink);
        assert!(receiver.poll_control().is_none(), "no NACK at once");
        receiver.handle_skip(2, 1, 2, 3, &mut sink);
        assert_eq!(sink.delivered, [1, 4]);
        assert_eq!(sink.lost, 0);
        // A skipped envelope arriving after all is a duplicate.
        assert_eq!(
            receiver.handle_envelope(3, arrival(2, true), Some(2), &mut sink),
            Admission::Duplicate
        );
        // A deferred hole no skip explains is asked for after the NACK delay.
        receiver.handle_envelope(4, deferred(7), Some(7), &mut sink);
        receiver.handle_timeout(5, &mut sink);
        let nacks = |r: &mut Receiver<u8, Option<u64>>| {
            std::iter::from_fn(|| r.poll_control())
                .filter(|(_, c)| matches!(c, Control::Nack { .. }))
                .count()
        };
        assert_eq!(nacks(&mut receiver), 0);
        receiver.handle_timeout(4 + c.nack_retry_ns, &mut sink);
        assert_eq!(nacks(&mut receiver), 1);
        // ... or at once when an account shows it lost.
        receiver.handle_envelope(5 + c.nack_retry_ns, deferred(9), Some(9), &mut sink);
        receiver.expedite_nack(1);
        receiver.handle_timeout(6 + c.nack_retry_ns, &mut sink);
        assert_eq!(nacks(&mut receiver), 1);
        receiver.handle_envelope(7 + c.nack_retry_ns, arrival(5, true), Some(5), &mut sink);
        receiver.handle_skip(8 + c.nack_retry_ns, 1, 6, 6, &mut sink);
        receiver.handle_envelope(9 + c.nack_retry_ns, arrival(8, true), Some(8), &mut sink);
        assert_eq!(sink.delivered, [1, 4, 5, 7, 8, 9]);
        assert_eq!(sink.lost, 0);
        // A claim larger than any window is not believed.
        receiver.handle_skip(10 + c.nack_retry_ns, 1, 10, 10_000, &mut sink);
        assert_eq!(receiver.delivered(1), Some(9));
    }
}

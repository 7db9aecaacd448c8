//! The flow simulator's checkers: the [`Checker`] sink every receiver delivers into
//! (order, integrity, exact accounting of holes), and the bounds and settling checks
//! run after every step.

use glidepath_flow::{GiveUp, Sender, Sink};

use super::{payload, FlowFailure, FlowOutcome, FlowSim, Traced, Track};

/// The checker's sink: asserts order, integrity and exact accounting as the receiver
/// delivers, and remembers the first violation.
pub(super) struct Checker<'a> {
    pub(super) receiver: usize,
    /// The cells the receiver reads.
    pub(super) cells: u8,
    /// Where each sender's envelopes went (by `seq − 1`; 0 to everyone).
    pub(super) dest: &'a [Vec<u8>],
    pub(super) tracks: &'a mut [Track],
    pub(super) published: &'a [u64],
    pub(super) out: &'a mut FlowOutcome,
    pub(super) violation: &'a mut Option<String>,
    /// Holes given up, for the trace.
    pub(super) notes: &'a mut Vec<Traced>,
}

impl Sink<usize, Option<u64>> for Checker<'_> {
    fn deliver(&mut self, sender: usize, seq: u64, item: Option<u64>) {
        if self.violation.is_some() {
            return;
        }
        let t = &mut self.tracks[sender];
        let r = self.receiver;
        let Some(item) = item else {
            // Passed over on an account: only ever what went to cells it does not read.
            let to = self.dest[sender].get(seq as usize - 1).copied();
            let violation = if seq != t.upto + 1 || t.first.is_none() {
                Some(format!(
                    "receiver {r} passed over seq {seq} of sender {sender} after {} (out of order)",
                    t.upto
                ))
            } else {
                match to {
                    None => Some(format!(
                        "receiver {r} passed over seq {seq} of sender {sender}, which published only {}",
                        self.published[sender]
                    )),
                    Some(0) => Some(format!(
                        "receiver {r} passed over seq {seq} of sender {sender}, sent to everyone"
                    )),
                    Some(m) if m & self.cells != 0 => Some(format!(
                        "receiver {r} passed over seq {seq} of sender {sender}, sent to cells {m:04b} of which it reads {:04b}",
                        self.cells
                    )),
                    Some(_) => None,
                }
            };
            if violation.is_some() {
                *self.violation = violation;
                return;
            }
            t.upto = seq;
            self.out.skipped += 1;
            return;
        };
        if t.first.is_none() {
            t.first = Some(seq);
            t.upto = seq.saturating_sub(1);
        }
        let violation = if seq != t.upto + 1 {
            Some(format!(
                "receiver {r} got seq {seq} of sender {sender} after {} (duplicate, out of order or an uncounted hole)",
                t.upto
            ))
        } else if seq > self.published[sender] {
            Some(format!(
                "receiver {r} got seq {seq} of sender {sender}, which published only {}",
                self.published[sender]
            ))
        } else if item != payload(sender, seq) {
            Some(format!(
                "receiver {r} got seq {seq} of sender {sender} with the wrong payload"
            ))
        } else {
            None
        };
        if violation.is_some() {
            *self.violation = violation;
            return;
        }
        t.upto = seq;
        t.delivered += 1;
        self.out.delivered += 1;
    }

    fn lost(&mut self, sender: usize, first: u64, last: u64, why: GiveUp) {
        if self.violation.is_some() {
            return;
        }
        let t = &mut self.tracks[sender];
        let r = self.receiver;
        let violation = if t.first.is_none() || first != t.upto + 1 || last < first {
            Some(format!(
                "receiver {r} reported {first}..={last} of sender {sender} lost after {} (not the hole)",
                t.upto
            ))
        } else if last > self.published[sender] {
            Some(format!(
                "receiver {r} reported {first}..={last} of sender {sender} lost, which published only {}",
                self.published[sender]
            ))
        } else {
            None
        };
        if violation.is_some() {
            *self.violation = violation;
            return;
        }
        self.notes.push(Traced::Lost {
            receiver: r,
            sender,
            first,
            last,
            why,
        });
        t.upto = last;
        t.lost += last + 1 - first;
        self.out.lost += last + 1 - first;
        // Of those, what went to cells this receiver does not read: it never wanted
        // them (counted lost all the same, since it could not tell).
        let not_for_it = (first..=last)
            .filter(|seq| {
                self.dest[sender]
                    .get(*seq as usize - 1)
                    .is_some_and(|m| *m != 0 && *m & self.cells == 0)
            })
            .count() as u64;
        self.out.lost_not_wanted += not_for_it;
        self.out.holes += 1;
        match why {
            GiveUp::Overflow => self.out.overflows += 1,
            GiveUp::Gone => self.out.gone += 1,
            GiveUp::Timeout => {}
        }
    }
}

impl FlowSim {
    /// The buffers stay within their bounds.
    pub(super) fn check_bounds(&self) -> Result<(), FlowFailure> {
        let w = self.flow.window;
        for (r, rec) in self.receivers.iter().enumerate() {
            for s in 0..self.senders.len() {
                let held = rec.protocol.held_len(s);
                if held > 2 * w.envelopes.max(1) {
                    return Err(self.fail(format!(
                        "receiver {r} holds {held} envelopes of sender {s} behind a gap (window {})",
                        w.envelopes
                    )));
                }
            }
        }
        for (s, sender) in self.senders.iter().enumerate() {
            let bound = w.bytes + Sender::<(u64, usize)>::weight_of(sender.bytes_max);
            if sender.protocol.kept_bytes() > bound {
                return Err(self.fail(format!(
                    "sender {s} keeps {} bytes, more than its window of {} plus one envelope",
                    sender.protocol.kept_bytes(),
                    w.bytes
                )));
            }
        }
        Ok(())
    }

    /// Whether the run is over: see the module doc.
    pub(super) fn settled(&self) -> bool {
        let senders_done = self
            .senders
            .iter()
            .all(|s| s.crashed || (s.published == s.total && s.protocol.all_acknowledged()));
        senders_done
            && self.receivers.iter().all(|rec| {
                rec.lost
                    || (!rec.busy
                        && rec.parked.is_empty()
                        && self.senders.iter().enumerate().all(|(s, sender)| {
                            let t = &rec.tracks[s];
                            if sender.crashed {
                                rec.protocol.pending_len(s) == 0
                            } else {
                                // Never heard of it at all: everything came before first contact.
                                t.first.is_none() || t.upto == sender.total
                            }
                        }))
            })
    }
}

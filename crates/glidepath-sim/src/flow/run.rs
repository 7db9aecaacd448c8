//! The flow simulator's run loop: setting a seed up, stepping through the network's
//! events, publishing, retransmitting and sending control messages, and the trace.

use std::collections::VecDeque;
use std::fmt::Write as _;

use glidepath_flow::{Admission, Arrival, FlowConfig, Receiver, Sender, Window};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::check::Checker;
use super::net::{Event, Network, Partition};
use super::{
    payload, FlowFailure, FlowOutcome, FlowSim, FlowSimConfig, SimReceiver, SimSender, Traced,
    Track, CELLS, RECEIVER_TICK_NS, SENDER_TICK_NS, TRACE_EVENTS,
};

impl FlowSim {
    pub(super) fn new(cfg: &FlowSimConfig) -> FlowSim {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let n_senders = rng.gen_range(1..=4);
        let n_receivers = rng.gen_range(1..=4);
        let window = Window {
            envelopes: [2, 4, 8, 32, 128][rng.gen_range(0..5)],
            bytes: [4 << 10, 16 << 10, 1 << 20][rng.gen_range(0..3)],
        };
        let flow = FlowConfig::new(window);
        let senders: Vec<SimSender> = (0..n_senders)
            .map(|_| SimSender {
                protocol: Sender::new(flow),
                total: rng.gen_range(20..=300),
                bytes_max: [64, 512, 2048][rng.gen_range(0..3)],
                interval_ns: [100_000, 1_000_000, 5_000_000][rng.gen_range(0..3)],
                published: 0,
                blocked: false,
                crashed: false,
                publish_queued: false,
                account: None,
            })
            .collect();
        let cells = cfg.cells.unwrap_or_else(|| rng.gen_bool(0.5));
        // Distinct tokens, not in receiver order, as random tokens would be.
        let mut tokens: Vec<u64> = Vec::new();
        while tokens.len() < n_receivers {
            let t = rng.gen();
            if !tokens.contains(&t) {
                tokens.push(t);
            }
        }
        let receivers = tokens
            .iter()
            .map(|&t| SimReceiver {
                protocol: Receiver::new(t, flow),
                tracks: vec![Track::default(); n_senders],
                cells: if cells { rng.gen_range(0..16) } else { 0 },
                arrivals: vec![Default::default(); n_senders],
                busy: false,
                parked: VecDeque::new(),
                lost: false,
            })
            .collect();
        let partition = cfg.partition.unwrap_or_else(|| rng.gen_bool(0.3)).then(|| {
            let start_ns = rng.gen_range(5_000_000..300_000_000);
            // Up to twice the give-up delay, and always shorter than the peer timeout.
            let end_ns = start_ns + rng.gen_range(50_000_000..4_000_000_000);
            let links = if rng.gen_bool(0.5) {
                let r = rng.gen_range(0..n_receivers);
                (0..n_senders).map(|s| (s, r)).collect()
            } else {
                let s = rng.gen_range(0..n_senders);
                (0..n_receivers).map(|r| (s, r)).collect()
            };
            Partition {
                start_ns,
                end_ns,
                links,
            }
        });
        let crash = cfg.crash.unwrap_or_else(|| rng.gen_bool(0.25)).then(|| {
            (
                rng.gen_range(0..n_senders),
                rng.gen_range(1_000_000..200_000_000),
            )
        });
        let mut net = Network::new(cfg.faults, partition);
        for (s, sender) in senders.iter().enumerate() {
            net.at(rng.gen_range(0..sender.interval_ns), Event::Publish(s));
            net.at(rng.gen_range(0..SENDER_TICK_NS), Event::SenderTick(s));
        }
        for r in 0..n_receivers {
            net.at(rng.gen_range(0..RECEIVER_TICK_NS), Event::ReceiverTick(r));
        }
        if let Some((s, at)) = crash {
            net.at(at, Event::Crash(s));
        }
        // A busy receiver, drawn apart so that every other draw of a seed stays as it
        // was: one to three periods of 10 ms to 3 s without reading.
        let mut busy_rng = ChaCha8Rng::seed_from_u64(cfg.seed ^ 0x0b05_7000_0000_0001);
        let mut busy_periods = 0;
        if cfg.busy.unwrap_or_else(|| busy_rng.gen_bool(0.3)) {
            let r = busy_rng.gen_range(0..n_receivers);
            let mut at = 0;
            for _ in 0..busy_rng.gen_range(1..=3) {
                at += busy_rng.gen_range(5_000_000..400_000_000);
                let until = at + busy_rng.gen_range(10_000_000..3_000_000_000);
                net.at(at, Event::Busy(r));
                net.at(until, Event::Unbusy(r));
                busy_periods += 1;
                at = until;
            }
        }
        // A receiver that dies, with more than one receiver (so something is still
        // delivered), from the same separate stream.
        let lost_receiver =
            n_receivers > 1 && cfg.lost_receiver.unwrap_or_else(|| busy_rng.gen_bool(0.15));
        if lost_receiver {
            let r = busy_rng.gen_range(0..n_receivers);
            net.at(
                busy_rng.gen_range(1_000_000..300_000_000),
                Event::ReceiverLost(r),
            );
        }
        let out = FlowOutcome {
            seed: cfg.seed,
            senders: n_senders,
            receivers: n_receivers,
            window_envelopes: window.envelopes,
            partitions: u64::from(net.partition.is_some()),
            busy_periods,
            ..FlowOutcome::default()
        };
        let mut sim = FlowSim {
            cells,
            cfg: cfg.clone(),
            rng,
            net,
            flow,
            senders,
            receivers,
            tokens,
            published: vec![0; n_senders],
            dest: vec![Vec::new(); n_senders],
            crash,
            now: 0,
            out,
            violation: None,
            notes: Vec::new(),
            trace: VecDeque::with_capacity(TRACE_EVENTS + 1),
        };
        for s in sim.senders.iter_mut() {
            s.publish_queued = true;
        }
        sim
    }

    pub(super) fn run(mut self) -> Result<FlowOutcome, FlowFailure> {
        while let Some((at, event)) = self.net.pop() {
            self.now = at;
            if self.now > self.cfg.max_virtual_ns {
                return Err(self.fail(format!(
                    "deadlock: not settled after {} s of virtual time\n{}",
                    self.cfg.max_virtual_ns / 1_000_000_000,
                    self.describe()
                )));
            }
            self.out.events += 1;
            self.trace(Traced::Event(event.clone()));
            self.step(event);
            for note in std::mem::take(&mut self.notes) {
                self.trace(note);
            }
            if let Some(v) = self.violation.take() {
                return Err(self.fail(v));
            }
            self.check_bounds()?;
            if self.settled() {
                return self.finish();
            }
        }
        Err(self.fail(format!(
            "deadlock: nothing left to happen, not settled\n{}",
            self.describe()
        )))
    }

    fn step(&mut self, event: Event) {
        // Nothing reaches a receiver that is gone; what reaches one that is not reading
        // waits for it.
        if let Event::Data { to, .. }
        | Event::Account { to, .. }
        | Event::Gone { to, .. }
        | Event::ReceiverTick(to)
        | Event::Busy(to)
        | Event::Unbusy(to) = event
        {
            if self.receivers[to].lost {
                return;
            }
        }
        if let Event::Data { to, .. } | Event::Account { to, .. } | Event::Gone { to, .. } = event {
            if self.receivers[to].busy {
                self.receivers[to].parked.push_back(event);
                return;
            }
        }
        match event {
            Event::ReceiverLost(r) => {
                self.receivers[r].lost = true;
                self.receivers[r].parked.clear();
                self.out.receivers_lost += 1;
            }
            Event::Busy(r) => {
                self.receivers[r].busy = true;
                self.receivers[r].protocol.set_busy(true);
            }
            Event::Unbusy(r) => {
                self.receivers[r].busy = false;
                self.receivers[r].protocol.set_busy(false);
                while let Some(e) = self.receivers[r].parked.pop_front() {
                    self.step(e);
                    if self.receivers[r].busy {
                        break;
                    }
                }
            }
            Event::Publish(s) => {
                self.senders[s].publish_queued = false;
                self.publish(s);
            }
            Event::SenderTick(s) => {
                if self.senders[s].crashed {
                    return;
                }
                let gone = self.senders[s].protocol.handle_timeout(self.now);
                for g in gone {
                    self.out.receivers_given_up += 1;
                    let r = self.receiver_of(g.token);
                    self.trace(Traced::GaveUp {
                        sender: s,
                        receiver: r,
                    });
                }
                self.retransmit(s);
                self.unblock(s);
                // Idle (as far as a tick can tell): what went to cells is accounted for.
                self.send_account(s);
                self.net.at(self.now + SENDER_TICK_NS, Event::SenderTick(s));
            }
            Event::ReceiverTick(r) => {
                let now = self.now;
                let rec = &mut self.receivers[r];
                let mut sink = Checker {
                    receiver: r,
                    cells: rec.cells,
                    dest: &self.dest,
                    tracks: &mut rec.tracks,
                    published: &self.published,
                    out: &mut self.out,
                    violation: &mut self.violation,
                    notes: &mut self.notes,
                };
                rec.protocol.handle_timeout(now, &mut sink);
                self.send_controls(r);
                self.net.at(now + RECEIVER_TICK_NS, Event::ReceiverTick(r));
            }
            Event::Crash(s) => {
                self.senders[s].crashed = true;
                self.out.crashes += 1;
            }
            Event::Data {
                from,
                to,
                seq,
                item,
                bytes,
                retransmitted,
                cell,
            } => {
                let now = self.now;
                let rec = &mut self.receivers[to];
                if let Some(c) = cell {
                    *rec.arrivals[from].entry(seq).or_insert(0) |= 1 << c;
                }
                let mut sink = Checker {
                    receiver: to,
                    cells: rec.cells,
                    dest: &self.dest,
                    tracks: &mut rec.tracks,
                    published: &self.published,
                    out: &mut self.out,
                    violation: &mut self.violation,
                    notes: &mut self.notes,
                };
                let arrival = Arrival {
                    sender: from,
                    seq,
                    bytes,
                    retransmitted,
                    deferred: cell.is_some(),
                };
                if rec
                    .protocol
                    .handle_envelope(now, arrival, Some(item), &mut sink)
                    == Admission::Duplicate
                {
                    self.out.duplicates_dropped += 1;
                }
                self.out.pending_max = self.out.pending_max.max(rec.protocol.held_len(from));
                self.send_controls(to);
            }
            Event::Account {
                from,
                to,
                first,
                upto,
                counts,
            } => self.account(from, to, first, upto, counts),
            Event::Gone {
                from,
                to,
                first,
                last,
            } => {
                self.receivers[to]
                    .protocol
                    .handle_gone(self.now, from, first, last);
            }
            Event::Control { from, to, control } => {
                let _ = from;
                if self.senders[to].crashed {
                    return;
                }
                self.senders[to].protocol.handle_control(self.now, control);
                self.retransmit(to);
                self.unblock(to);
            }
        }
    }

    /// Publishes sender `s`'s next envelope to every receiver, if it has credit.
    fn publish(&mut self, s: usize) {
        let sender = &mut self.senders[s];
        if sender.crashed || sender.published >= sender.total {
            return;
        }
        if !sender.protocol.has_credit() {
            if !sender.blocked {
                sender.blocked = true;
                self.out.credit_waits += 1;
                self.trace(Traced::Blocked(s));
            }
            return;
        }
        sender.blocked = false;
        let seq = sender.published + 1;
        let bytes = self.rng.gen_range(16..=sender.bytes_max);
        let item = payload(s, seq);
        let lag = sender.protocol.keep(seq, (item, bytes), bytes, self.now);
        sender.published = seq;
        self.published[s] = seq;
        self.out.published += 1;
        if let Some(lag) = lag {
            if lag > self.flow.window.envelopes as u64 {
                self.violation = Some(format!(
                    "sender {s} published seq {seq} {lag} envelopes ahead of its slowest receiver (window {})",
                    self.flow.window.envelopes
                ));
            }
        }
        self.trace(Traced::Published {
            sender: s,
            seq,
            lag,
        });
        // In a cells seed, most envelopes go to one or two cells, the rest to everyone.
        let dest: u8 = if self.cells && self.rng.gen_bool(0.7) {
            let mut m = 1 << self.rng.gen_range(0..CELLS);
            if self.rng.gen_bool(0.3) {
                m |= 1 << self.rng.gen_range(0..CELLS);
            }
            m
        } else {
            0
        };
        self.dest[s].push(dest);
        if dest == 0 {
            // What went to cells is accounted for before anything goes to everyone.
            self.send_account(s);
        }
        for r in 0..self.receivers.len() {
            let cells = if dest == 0 {
                vec![None]
            } else {
                (0..CELLS as u8)
                    .filter(|c| dest & self.receivers[r].cells & (1 << c) != 0)
                    .map(Some)
                    .collect()
            };
            for cell in cells {
                self.net.send(
                    &mut self.rng,
                    self.now,
                    (s, r),
                    Event::Data {
                        from: s,
                        to: r,
                        seq,
                        item,
                        bytes,
                        retransmitted: false,
                        cell,
                    },
                );
            }
        }
        if dest != 0 {
            let sender = &mut self.senders[s];
            let (_, upto, counts) = sender.account.get_or_insert((seq - 1, seq, [0; CELLS]));
            *upto = seq;
            for (c, n) in counts.iter_mut().enumerate() {
                if dest & (1 << c) != 0 {
                    *n += 1;
                }
            }
            if seq - sender.account.map_or(seq, |a| a.0) >= 8 {
                self.send_account(s);
            }
        }
        let sender = &mut self.senders[s];
        if sender.published < sender.total {
            let gap = self.rng.gen_range(0..=2 * sender.interval_ns);
            sender.publish_queued = true;
            self.net.at(self.now + gap, Event::Publish(s));
        }
    }

    /// Sends sender `s`'s open account, if any, to every receiver.
    fn send_account(&mut self, s: usize) {
        if self.senders[s].crashed {
            return;
        }
        let Some((first, upto, counts)) = self.senders[s].account.take() else {
            return;
        };
        self.out.accounts += 1;
        for r in 0..self.receivers.len() {
            self.net.send(
                &mut self.rng,
                self.now,
                (s, r),
                Event::Account {
                    from: s,
                    to: r,
                    first,
                    upto,
                    counts,
                },
            );
        }
    }

    /// Receiver `r` takes sender `s`'s account of `(first, upto]`: it passes over the
    /// range when it holds every envelope of it on the cells it reads, else asks for
    /// the holes at once (as `nats/reader.rs` does).
    fn account(&mut self, s: usize, r: usize, first: u64, upto: u64, counts: [u32; CELLS]) {
        let now = self.now;
        let rec = &mut self.receivers[r];
        let arrivals = &mut rec.arrivals[s];
        let complete = (0..CELLS).all(|c| {
            let bit = 1u8 << c;
            counts[c] == 0
                || rec.cells & bit == 0
                || arrivals
                    .range(first + 1..=upto)
                    .filter(|(_, m)| *m & bit != 0)
                    .count()
                    >= counts[c] as usize
        });
        let rest = arrivals.split_off(&(upto + 1));
        *arrivals = rest;
        if complete {
            self.notes.push(Traced::Skipped {
                receiver: r,
                sender: s,
                first: first + 1,
                last: upto,
            });
            let mut sink = Checker {
                receiver: r,
                cells: rec.cells,
                dest: &self.dest,
                tracks: &mut rec.tracks,
                published: &self.published,
                out: &mut self.out,
                violation: &mut self.violation,
                notes: &mut self.notes,
            };
            rec.protocol.handle_skip(now, s, first + 1, upto, &mut sink);
        } else {
            self.notes.push(Traced::Incomplete {
                receiver: r,
                sender: s,
            });
            rec.protocol.expedite_nack(s);
        }
        self.send_controls(r);
    }

    /// A blocked sender publishes as soon as it has credit again.
    fn unblock(&mut self, s: usize) {
        let sender = &mut self.senders[s];
        if sender.blocked && !sender.publish_queued && sender.protocol.has_credit() {
            sender.publish_queued = true;
            self.net.at(self.now, Event::Publish(s));
        }
    }

    fn receiver_of(&self, token: u64) -> usize {
        self.tokens
            .iter()
            .position(|&t| t == token)
            .expect("only receivers send control messages")
    }

    /// Sends what sender `s`'s protocol wants retransmitted.
    fn retransmit(&mut self, s: usize) {
        while let Some(retx) = self.senders[s].protocol.poll_retransmission() {
            let r = self.receiver_of(retx.token);
            if let Some((first, last)) = retx.gone {
                self.trace(Traced::Gone {
                    sender: s,
                    to: r,
                    first,
                    last,
                });
                self.out.gone_notices += 1;
                self.net.send(
                    &mut self.rng,
                    self.now,
                    (s, r),
                    Event::Gone {
                        from: s,
                        to: r,
                        first,
                        last,
                    },
                );
            }
            if let Some(&(first, _)) = retx.items.first() {
                self.trace(Traced::Retransmit {
                    sender: s,
                    to: r,
                    first,
                    count: retx.items.len(),
                });
            }
            for (seq, (item, bytes)) in retx.items {
                self.out.retransmitted += 1;
                self.net.send(
                    &mut self.rng,
                    self.now,
                    (s, r),
                    Event::Data {
                        from: s,
                        to: r,
                        seq,
                        item,
                        bytes,
                        retransmitted: true,
                        cell: None,
                    },
                );
            }
        }
    }

    /// Sends receiver `r`'s queued control messages.
    fn send_controls(&mut self, r: usize) {
        while let Some((s, control)) = self.receivers[r].protocol.poll_control() {
            self.out.controls += 1;
            self.trace(Traced::Sent {
                to_sender: s,
                control,
            });
            self.net.send(
                &mut self.rng,
                self.now,
                (s, r),
                Event::Control {
                    from: r,
                    to: s,
                    control,
                },
            );
        }
    }

    fn finish(mut self) -> Result<FlowOutcome, FlowFailure> {
        for rec in &self.receivers {
            for (s, sender) in self.senders.iter().enumerate() {
                let t = rec.tracks[s];
                match t.first {
                    Some(first) if rec.lost => {
                        self.out.before_first_contact += first.saturating_sub(1);
                        self.out.lost_receiver_tails += sender.published.saturating_sub(t.upto);
                    }
                    Some(first) => {
                        self.out.before_first_contact += first.saturating_sub(1);
                        self.out.crash_tails += sender.published.saturating_sub(t.upto);
                    }
                    None => self.out.before_first_contact += sender.published,
                }
            }
        }
        self.out.faults = self.net.counts;
        self.out.packets = self.net.packets;
        self.out.virtual_time_ns = self.now;
        Ok(self.out)
    }

    fn describe(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "  window {:?}, partition {:?}, crash {:?}",
            self.flow.window, self.net.partition, self.crash
        );
        for (i, x) in self.senders.iter().enumerate() {
            let _ = writeln!(
                s,
                "  sender {i}: published {}/{}, crashed {}, blocked {}, receivers known {}, kept {} ({} bytes), all acknowledged {}",
                x.published,
                x.total,
                x.crashed,
                x.blocked,
                x.protocol.receivers(),
                x.protocol.kept_len(),
                x.protocol.kept_bytes(),
                x.protocol.all_acknowledged()
            );
        }
        for (r, rec) in self.receivers.iter().enumerate() {
            for (i, t) in rec.tracks.iter().enumerate() {
                let _ = writeln!(
                    s,
                    "  receiver {r} ({:016x}) from sender {i}: {t:?}, protocol delivered {:?}, held {}",
                    self.tokens[r],
                    rec.protocol.delivered(i),
                    rec.protocol.pending_len(i)
                );
            }
        }
        s
    }

    fn trace(&mut self, t: Traced) {
        if self.cfg.verbose {
            println!("[{:>14}ns] {t:?}", self.now);
        }
        // Timers fire all the time; what they do is traced on its own.
        if let Traced::Event(Event::SenderTick(_) | Event::ReceiverTick(_)) = t {
            return;
        }
        self.trace.push_back((self.now, t));
        if self.trace.len() > TRACE_EVENTS {
            self.trace.pop_front();
        }
    }

    pub(super) fn fail(&self, message: String) -> FlowFailure {
        FlowFailure {
            simulator: "flow",
            seed: self.cfg.seed,
            message,
            replay: self.cfg.replay_command(),
            trace: self
                .trace
                .iter()
                .map(|(at, t)| format!("[{at:>14}ns] {t:?}"))
                .collect(),
        }
    }
}

//! Time management in the DDM simulator (half the seeds): every federate regulates
//! (a lookahead of its own) and is constrained, sends its updates of `position` and
//! its `Event`s time-stamped once regulating, and asks now and then to advance. The
//! checks: a grant is for the time asked; a time-stamped message is delivered only
//! while advancing, after the last grant and not beyond the time asked, in time-stamp
//! order; and at the end, once every federate asks for the same late time, everyone
//! is granted it (filtered messages never hold anyone back).

use glidepath_core::{Callback, LogicalTime, MessageInfo, OrderType};
use rand::Rng;

use super::{DdmFailure, DdmSim};

/// One federate's time, as the checker follows it.
#[derive(Clone, Debug, Default)]
pub(super) struct Clock {
    pub(super) lookahead: f64,
    pub(super) regulating: bool,
    pub(super) constrained: bool,
    /// The last grant (0 before any).
    pub(super) granted: f64,
    /// The time asked, while advancing.
    pub(super) advancing: Option<f64>,
    /// The time stamp of the last time-stamped delivery.
    pub(super) last_tso: f64,
}

impl Clock {
    /// The time stamp to send with now, when regulating: at least the lookahead past
    /// the time reached (or asked for).
    pub(super) fn send_time(&self, extra: f64) -> Option<LogicalTime> {
        if !self.regulating {
            return None;
        }
        let base = self.advancing.unwrap_or(self.granted).max(self.granted);
        LogicalTime::new(base + self.lookahead + extra)
    }
}

impl DdmSim {
    /// Turns regulation (lookahead 1 to 5) and constraint on for member `idx`;
    /// both complete with callbacks as the statuses go round.
    pub(super) fn enable_time(&mut self, idx: usize) -> Result<(), DdmFailure> {
        let lookahead = f64::from(self.rng.gen_range(1..=5u32));
        self.call(idx, "enable time management", |l, k| {
            l.enable_time_regulation(k, lookahead)?;
            l.enable_time_constrained()
        })?;
        self.members[idx].clock.lookahead = lookahead;
        Ok(())
    }

    /// Member `idx` asks to advance a little, if it may (both enabled, not advancing).
    pub(super) fn maybe_advance(&mut self, idx: usize) -> Result<bool, DdmFailure> {
        let c = &self.members[idx].clock;
        if !(c.regulating && c.constrained) || c.advancing.is_some() {
            return Ok(false);
        }
        let to = c.granted + f64::from(self.rng.gen_range(1..=30u32));
        self.log(format!("{idx} asks to advance to {to}"));
        self.members[idx].clock.advancing = Some(to);
        self.call(idx, "time advance request", |l, _| {
            l.time_advance_request(to, false)
        })?;
        Ok(true)
    }

    /// A time management callback of member `idx` (`Ok(false)`: not one).
    pub(super) fn time_callback(&mut self, idx: usize, cb: &Callback) -> Result<bool, DdmFailure> {
        let c = &mut self.members[idx].clock;
        match cb {
            Callback::TimeRegulationEnabled { .. } => c.regulating = true,
            Callback::TimeConstrainedEnabled { .. } => c.constrained = true,
            Callback::TimeAdvanceGrant { time } => {
                let t = time.as_f64();
                if c.advancing != Some(t) {
                    let asked = c.advancing;
                    return Err(self.fail(format!(
                        "federate {idx} was granted {t} having asked for {asked:?}"
                    )));
                }
                c.granted = t;
                c.advancing = None;
                self.out.grants += 1;
                self.log(format!("{idx} is granted {t}"));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// A reflection or interaction delivered to member `idx`: if in time-stamp order,
    /// while advancing, past the last grant, not beyond the time asked, in order.
    pub(super) fn check_time_order(
        &mut self,
        idx: usize,
        info: &MessageInfo,
    ) -> Result<(), DdmFailure> {
        if info.received_order != OrderType::TimeStamp {
            return Ok(());
        }
        let c = &self.members[idx].clock;
        let t = info.time.map_or(f64::NAN, LogicalTime::as_f64);
        let fine = c.constrained
            && c.advancing.is_some_and(|to| t <= to)
            && t > c.granted
            && t >= c.last_tso;
        if !fine {
            let c = c.clone();
            return Err(self.fail(format!(
                "federate {idx} got {}#{} at time {t} in time-stamp order out of place: {c:?}",
                info.producer, info.seq
            )));
        }
        self.members[idx].clock.last_tso = t;
        self.out.tso_delivered += 1;
        Ok(())
    }

    /// Once quiet: everyone regulating and constrained, and everyone granted one
    /// late time when all ask for it.
    pub(super) fn finish_time(&mut self) -> Result<(), DdmFailure> {
        for idx in 0..self.members.len() {
            let c = &self.members[idx].clock;
            if !(c.regulating && c.constrained) {
                let c = c.clone();
                return Err(self.fail(format!(
                    "federate {idx} never became regulating and constrained: {c:?}"
                )));
            }
        }
        let end = self
            .members
            .iter()
            .map(|m| m.clock.advancing.unwrap_or(m.clock.granted))
            .fold(0.0, f64::max)
            + 100.0;
        for idx in 0..self.members.len() {
            if self.members[idx].clock.advancing.is_none() {
                self.members[idx].clock.advancing = Some(end);
                self.log(format!("{idx} asks to advance to {end} (the end)"));
                self.call(idx, "the last time advance request", |l, _| {
                    l.time_advance_request(end, false)
                })?;
            }
        }
        // Those still advancing to an earlier time are granted it first, then ask
        // for the end.
        loop {
            self.quiesce()?;
            let waiting: Vec<usize> = (0..self.members.len())
                .filter(|i| self.members[*i].clock.advancing.is_none())
                .filter(|i| self.members[*i].clock.granted < end)
                .collect();
            if waiting.is_empty() {
                break;
            }
            for idx in waiting {
                self.members[idx].clock.advancing = Some(end);
                self.call(idx, "the last time advance request", |l, _| {
                    l.time_advance_request(end, false)
                })?;
            }
        }
        for idx in 0..self.members.len() {
            let c = &self.members[idx].clock;
            if c.granted != end {
                let c = c.clone();
                return Err(self.fail(format!(
                    "liveness: federate {idx} is not granted {end} with nothing in flight: {c:?}"
                )));
            }
        }
        Ok(())
    }
}

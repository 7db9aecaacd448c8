//! Random federation saves and restores, on the simulator's network (random delays,
//! per-sender order) and the executive every transport hosts.
//!
//! Two to five time-managed federates exchange time-stamped updates while advancing
//! one unit at a time. At random moments the schedule holds every federate once its
//! advance is granted and asks (from a random federate) for a save, now or at the
//! latest federate's time, or for a restore of a save taken earlier, with messages
//! from before it still in flight. Invariants:
//! - a restore brings every federate's RTI state back to what it saved
//!   (`LocalRti::rti_snapshot` equal), and its own state too;
//! - time management's guarantees hold throughout, restores included: each grant is
//!   the time asked for and never below the previous one since the last restore, and
//!   no time-stamped message is delivered below the federate's time (a message from
//!   before a restore reaching a restored federate would be);
//! - nothing deadlocks: every save and restore ends and every federate finishes.

use std::collections::HashMap;

use bytes::Bytes;
use glidepath_core::{
    Callback, Envelope, ExecReply, ExecRequest, ExecutiveHost, FederateSnapshot, LocalRti,
    LogicalTime, ObjectInstanceHandle, ResignAction, RtiError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::network::{Network, SimLink};
use crate::{sim_fom, Profile, SimFailure};

const FEDERATION: &str = "save-sim";
const END: f64 = 40.0;
/// Give up (and fail) after this many events: a livelock guard.
const MAX_EVENTS: u64 = 2_000_000;

/// What one save/restore run did.
#[derive(Clone, Debug, Default)]
pub struct SaveOutcome {
    pub federates: usize,
    pub events: u64,
    pub grants: u64,
    /// Federation saves that ended with *federation saved*.
    pub saves: u64,
    /// Federation restores that ended with *federation restored*.
    pub restores: u64,
    /// Federate snapshots compared after a restore.
    pub snapshots_checked: u64,
    /// Envelopes a restored federate dropped as sent before a peer's restore marker.
    pub dropped_before_restore: u64,
}

struct Member {
    lrc: LocalRti,
    instance: ObjectInstanceHandle,
    lookahead: f64,
    lt: f64,
    /// The time asked for, while an advance is pending.
    asked: Option<f64>,
    wake_at: Option<u64>,
    /// The model's own state: what it received, hashed.
    model: u64,
    /// Snapshots taken at saves not yet announced, and at saves kept, by label.
    saving: HashMap<String, (FederateSnapshot, u64, f64)>,
    saved: HashMap<String, (FederateSnapshot, u64, f64)>,
    busy: bool,
    done: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Plan {
    Run,
    /// Hold everyone, then save (timed or not).
    Save {
        timed: bool,
    },
    /// Hold everyone, then restore a kept save.
    Restore,
    /// A save or restore was asked for; wait for it to end.
    Waiting,
}

struct SaveSim {
    seed: u64,
    rng: ChaCha8Rng,
    net: Network,
    exec: ExecutiveHost,
    members: Vec<Member>,
    now: u64,
    plan: Plan,
    labels: Vec<String>,
    out: SaveOutcome,
}

fn t(x: f64) -> LogicalTime {
    LogicalTime::new(x).expect("finite")
}

/// Runs one seeded save/restore simulation.
pub fn run_save_restore(seed: u64) -> Result<SaveOutcome, SimFailure> {
    SaveSim::new(seed)?.run()
}

impl SaveSim {
    fn fail(&self, message: String) -> SimFailure {
        SimFailure {
            seed: self.seed,
            profile: Profile::Weighted,
            message: format!("save/restore: {message}"),
            trace: Vec::new(),
        }
    }

    fn link(&mut self, idx: usize) -> (&mut Vec<Member>, SimLink<'_>) {
        let SaveSim {
            members,
            net,
            exec,
            rng,
            now,
            ..
        } = self;
        (
            members,
            SimLink {
                node: idx,
                now: *now,
                net,
                exec,
                rng,
            },
        )
    }

    /// Calls a service of member `idx`; an error fails the run.
    fn call<R>(
        &mut self,
        idx: usize,
        f: impl FnOnce(&mut LocalRti, &mut SimLink) -> Result<R, RtiError>,
    ) -> Result<R, SimFailure> {
        let (members, mut link) = self.link(idx);
        let lrc = &mut members[idx].lrc;
        let r = f(lrc, &mut link);
        link.flush(lrc);
        r.map_err(|e| self.fail(format!("federate {idx}: {e}")))
    }

    fn new(seed: u64) -> Result<SaveSim, SimFailure> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0x5a5e_5a5e);
        let n = rng.gen_range(2..=5);
        let fom = std::sync::Arc::new(sim_fom());
        let mut exec = ExecutiveHost::new();
        let (reply, _, _) = exec.executive_mut().handle(ExecRequest::Create {
            name: FEDERATION.into(),
            fom: fom.clone(),
        });
        assert!(matches!(reply, ExecReply::Created { .. }));
        let vehicle = fom.object_class_by_name("Vehicle").expect("sim FOM");
        let position = fom.attribute_by_name(vehicle, "position").expect("sim FOM");
        let mut net = Network::default();
        let mut members = Vec::new();
        for idx in 0..n {
            let mut link = SimLink {
                node: idx,
                now: 0,
                net: &mut net,
                exec: &mut exec,
                rng: &mut rng,
            };
            let name = format!("f{idx}");
            let mut lrc = LocalRti::join(&mut link, FEDERATION, Some(&name), "sim")
                .map_err(|e| SaveSim::early(seed, format!("join: {e}")))?;
            lrc.publish_object_class_attributes(vehicle, &[position])
                .and_then(|()| {
                    lrc.subscribe_object_class_attributes(&mut link, vehicle, &[position])
                })
                .map_err(|e| SaveSim::early(seed, format!("declare: {e}")))?;
            let instance = lrc
                .register_object_instance(&mut link, vehicle, None)
                .map_err(|e| SaveSim::early(seed, format!("register: {e}")))?;
            link.flush(&mut lrc);
            let lookahead = [0.5, 1.0, 2.0][link.rng.gen_range(0..3)];
            members.push(Member {
                lrc,
                instance,
                lookahead,
                lt: 0.0,
                asked: None,
                wake_at: None,
                model: 0,
                saving: HashMap::new(),
                saved: HashMap::new(),
                busy: true,
                done: false,
            });
        }
        let mut sim = SaveSim {
            seed,
            rng,
            net,
            exec,
            members,
            now: 0,
            plan: Plan::Run,
            labels: Vec::new(),
            out: SaveOutcome {
                federates: n,
                ..SaveOutcome::default()
            },
        };
        for idx in 0..n {
            let la = sim.members[idx].lookahead;
            sim.call(idx, |l, link| l.enable_time_regulation(link, la))?;
        }
        Ok(sim)
    }

    fn early(seed: u64, message: String) -> SimFailure {
        SimFailure {
            seed,
            profile: Profile::Weighted,
            message: format!("save/restore set-up: {message}"),
            trace: Vec::new(),
        }
    }

    fn run(mut self) -> Result<SaveOutcome, SimFailure> {
        loop {
            self.out.events += 1;
            if self.out.events > MAX_EVENTS {
                return Err(self.fail(format!("no end after {MAX_EVENTS} events")));
            }
            let wake = self
                .members
                .iter()
                .enumerate()
                .filter_map(|(i, m)| m.wake_at.map(|w| (w, i)))
                .min();
            match (self.net.next_at(), wake) {
                (None, None) => break,
                (Some(at), w) if w.is_none_or(|(wt, _)| at <= wt) => {
                    let (at, to, env) = self.net.pop().expect("peeked");
                    self.now = at;
                    self.deliver(to, env)?;
                }
                (_, Some((wt, idx))) => {
                    self.now = wt;
                    self.members[idx].wake_at = None;
                    self.act(idx)?;
                }
                (Some(_), None) => unreachable!("covered by the guard above"),
            }
            if let Some(v) = self.net.violations.first() {
                return Err(self.fail(v.clone()));
            }
            if let Some(storm) = self.net.storm.take() {
                return Err(self.fail(storm));
            }
            self.maybe_start_plan()?;
        }
        if self.members.iter().any(|m| !m.done) {
            let states: Vec<String> = self
                .members
                .iter()
                .enumerate()
                .map(|(i, m)| {
                    format!(
                        "  federate {i} at {} asked {:?} busy {} done {}: {}",
                        m.lt,
                        m.asked,
                        m.busy,
                        m.done,
                        m.lrc.describe_time_state()
                    )
                })
                .collect();
            return Err(self.fail(format!(
                "deadlock, plan {:?}, {} saves, {} restores:\n{}",
                self.plan,
                self.out.saves,
                self.out.restores,
                states.join("\n")
            )));
        }
        for idx in 0..self.members.len() {
            self.call(idx, |l, link| {
                l.resign(link, ResignAction::CancelThenDeleteThenDivest)
            })?;
            self.out.dropped_before_restore += self.members[idx].lrc.stats().from_before_restore;
        }
        Ok(self.out)
    }

    fn deliver(&mut self, idx: usize, env: Envelope) -> Result<(), SimFailure> {
        // A newcomer is greeted with a status even if unchanged, and a restore
        // republishes a federate's status as an answer, like a greeting.
        self.net.greeting = matches!(
            env.body,
            glidepath_core::Body::Exec(
                glidepath_core::Notification::FederateJoined { .. }
                    | glidepath_core::Notification::Save(
                        glidepath_core::SaveNotice::InitiateRestore { .. }
                    )
            )
        );
        let (members, mut link) = self.link(idx);
        let lrc = &mut members[idx].lrc;
        lrc.handle_envelope(env);
        link.flush(lrc);
        self.net.greeting = false;
        self.callbacks(idx)
    }

    fn wake(&mut self, idx: usize) {
        let d = self.rng.gen_range(1_000..200_000);
        self.members[idx].wake_at = Some(self.now + d);
    }

    /// One step of member `idx`: send an update and ask for the next unit, unless
    /// the schedule holds it.
    fn act(&mut self, idx: usize) -> Result<(), SimFailure> {
        let m = &self.members[idx];
        if m.busy || m.asked.is_some() || m.done {
            return Ok(());
        }
        let holding = self.plan != Plan::Run;
        let target = self.hold_target();
        if holding && target.is_none_or(|t| m.lt >= t) {
            return Ok(());
        }
        if m.lt >= END {
            self.members[idx].done = true;
            return Ok(());
        }
        let (lt, la, instance, model) = (m.lt, m.lookahead, m.instance, m.model);
        let at = lt + la + f64::from(self.rng.gen_range(0..3u8)) * 0.5;
        let vehicle = self.members[idx].lrc.fom().object_class_by_name("Vehicle");
        let position =
            vehicle.and_then(|v| self.members[idx].lrc.fom().attribute_by_name(v, "position"));
        let position = position.expect("sim FOM");
        let value = Bytes::from(format!("{idx}:{model}"));
        self.call(idx, |l, _| {
            l.update_attribute_values(instance, vec![(position, value)], Bytes::new(), Some(t(at)))
        })?;
        self.members[idx].asked = Some(lt + 1.0);
        self.call(idx, |l, _| l.time_advance_request(lt + 1.0, false))?;
        self.callbacks(idx)
    }

    /// While holding, federates behind the latest one (counting the times asked for)
    /// catch up to it: holding one that others wait for would deadlock them.
    fn hold_target(&self) -> Option<f64> {
        match self.plan {
            Plan::Run | Plan::Waiting => None,
            Plan::Save { .. } | Plan::Restore => self
                .members
                .iter()
                .map(|m| m.asked.unwrap_or(m.lt).max(m.lt))
                .reduce(f64::max),
        }
    }

    /// Starts a save or restore once every federate is held (granted, not asking).
    fn maybe_start_plan(&mut self) -> Result<(), SimFailure> {
        if self.plan == Plan::Run {
            if self.members.iter().all(|m| !m.busy && !m.done) && self.rng.gen_bool(0.002) {
                self.plan = if !self.labels.is_empty() && self.rng.gen_bool(0.4) {
                    Plan::Restore
                } else {
                    Plan::Save {
                        timed: self.rng.gen_bool(0.5),
                    }
                };
            } else {
                return Ok(());
            }
        }
        if self.plan == Plan::Waiting || self.members.iter().any(|m| m.asked.is_some() || m.busy) {
            return Ok(());
        }
        if let Some(target) = self.hold_target() {
            if self.members.iter().any(|m| m.lt < target) {
                return Ok(());
            }
        }
        let who = self.rng.gen_range(0..self.members.len());
        match self.plan {
            Plan::Save { timed } => {
                let label = format!("s{}", self.labels.len() + self.out.saves as usize + 1);
                let at = timed.then_some(self.members[who].lt);
                self.call(who, |l, link| {
                    l.request_federation_save(link, &label, at.map(|x| x.into()))
                })?;
            }
            Plan::Restore => {
                let label = self.labels[self.rng.gen_range(0..self.labels.len())].clone();
                self.call(who, |l, link| l.request_federation_restore(link, &label))?;
            }
            Plan::Run | Plan::Waiting => unreachable!("checked above"),
        }
        self.plan = Plan::Waiting;
        for idx in 0..self.members.len() {
            self.callbacks(idx)?;
        }
        Ok(())
    }

    /// Handles every callback member `idx` has, checking the invariants.
    fn callbacks(&mut self, idx: usize) -> Result<(), SimFailure> {
        while let Some(cb) = self.members[idx].lrc.poll_callback() {
            self.callback(idx, cb)?;
        }
        Ok(())
    }

    fn callback(&mut self, idx: usize, cb: Callback) -> Result<(), SimFailure> {
        match cb {
            Callback::TimeRegulationEnabled { .. } => {
                self.call(idx, |l, _| l.enable_time_constrained())?;
            }
            Callback::TimeConstrainedEnabled { .. } => {
                self.members[idx].busy = false;
                self.wake(idx);
            }
            Callback::TimeAdvanceGrant { time } => {
                let (lt, asked) = (self.members[idx].lt, self.members[idx].asked);
                if Some(time.as_f64()) != asked || time.as_f64() < lt {
                    return Err(self.fail(format!(
                        "federate {idx} granted {time} at {lt} having asked {asked:?}"
                    )));
                }
                let m = &mut self.members[idx];
                m.lt = time.as_f64();
                m.asked = None;
                self.out.grants += 1;
                self.wake(idx);
            }
            Callback::ReflectAttributeValues { values, info, .. } => {
                let (lt, asked) = (self.members[idx].lt, self.members[idx].asked);
                let time = info.time.map_or(f64::NEG_INFINITY, LogicalTime::as_f64);
                // Before constrained is enabled, time-stamped messages arrive in
                // receive order: only time-stamp-order deliveries are bound.
                let tso = info.received_order == glidepath_core::OrderType::TimeStamp;
                if tso && (time < lt || asked.is_none_or(|a| time > a)) {
                    return Err(self.fail(format!(
                        "federate {idx} at {lt} (asking {asked:?}) got a time-stamped update at {time}"
                    )));
                }
                let m = &mut self.members[idx];
                for (_, v) in values.iter() {
                    for b in v.iter() {
                        m.model = (m.model ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3);
                    }
                }
            }
            Callback::InitiateFederateSave { label, .. } => {
                self.members[idx].busy = true;
                self.call(idx, |l, link| l.federate_save_begun(link))?;
                let m = &self.members[idx];
                let snapshot = m.lrc.rti_snapshot();
                let own = Bytes::from(m.model.to_be_bytes().to_vec());
                let kept = (snapshot, m.model, m.lt);
                self.members[idx].saving.insert(label, kept);
                self.call(idx, |l, link| l.federate_save_complete(link, own))?;
            }
            Callback::FederationSaved { label } => {
                let m = &mut self.members[idx];
                if let Some(kept) = m.saving.remove(&label) {
                    m.saved.insert(label.clone(), kept);
                }
                self.held_outcome(idx, Some(label))?;
            }
            Callback::FederationNotSaved { label, reason } => {
                return Err(self.fail(format!("save {label} failed: {reason}")));
            }
            Callback::RequestFederationRestoreFailed { label, reason } => {
                return Err(self.fail(format!("restore of {label} refused: {reason}")));
            }
            Callback::FederationRestoreBegun { .. } => self.members[idx].busy = true,
            Callback::InitiateFederateRestore {
                label, user_state, ..
            } => {
                let m = &mut self.members[idx];
                let Some((snapshot, model, lt)) = m.saved.get(&label).cloned() else {
                    return Err(
                        self.fail(format!("federate {idx} restores {label} it never saved"))
                    );
                };
                let now = m.lrc.rti_snapshot();
                if now != snapshot {
                    return Err(self.fail(format!(
                        "federate {idx}'s RTI state after restoring {label} differs from the save:\n  saved {snapshot:?}\n  now   {now:?}"
                    )));
                }
                if user_state[..] != model.to_be_bytes() {
                    return Err(self.fail(format!("federate {idx}'s own state came back altered")));
                }
                m.model = model;
                m.lt = lt;
                m.asked = None;
                m.done = false;
                m.wake_at = None;
                self.out.snapshots_checked += 1;
                self.call(idx, |l, link| l.federate_restore_complete(link))?;
            }
            Callback::FederationRestored { .. } => self.held_outcome(idx, None)?,
            Callback::FederationNotRestored { label, reason } => {
                return Err(self.fail(format!("restore of {label} failed: {reason}")));
            }
            _ => {}
        }
        Ok(())
    }

    /// A save (`Some(label)`) or restore ended for member `idx`: once every member
    /// has heard, the schedule runs on.
    fn held_outcome(&mut self, idx: usize, saved: Option<String>) -> Result<(), SimFailure> {
        self.members[idx].busy = false;
        self.wake(idx);
        if self.members.iter().all(|m| !m.busy) {
            match saved {
                Some(label) => {
                    self.out.saves += 1;
                    self.labels.push(label);
                }
                None => self.out.restores += 1,
            }
            self.plan = Plan::Run;
            // Whoever woke while the others had not heard yet was held: go on.
            for i in 0..self.members.len() {
                if self.members[i].asked.is_none() && self.members[i].wake_at.is_none() {
                    self.wake(i);
                }
            }
        }
        Ok(())
    }
}

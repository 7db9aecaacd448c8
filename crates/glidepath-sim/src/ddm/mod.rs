//! The data distribution management simulator (`glidepath-sim --ddm`): federates
//! with random regions on a plane (dimensions X and Y) that move their update,
//! interaction and subscription regions, commit at random moments and update and
//! send in between, over the simulated network (random delays, per-sender FIFO,
//! filtering at the source by each subscriber's interest, as the in-process bus
//! does).
//!
//! The checker keeps its own copy of every committed region and its own overlap
//! test, independent of the core's. When a message is published it notes, for every
//! receiver, whether that receiver should get it: the sender's region then overlaps
//! one of the receiver's subscription regions then (attributes subscribed with the
//! default region want everything). After every step, every reflection and received
//! interaction must be one that was wanted when sent (no false positive reaches a
//! callback); once nothing is in flight, every message wanted when sent must have
//! arrived (no false negative). A receiver that moves a subscription region while a
//! message is in flight may get it or not (the core tests again on arrival), so such
//! a message is not counted either way. Discovery follows overlap: a federate that
//! subscribes the class with regions only discovers an instance just before the
//! first reflection of it, never otherwise.
//!
//! Most federates turn their attribute scope advisory switch on when they join (and
//! some turn it off and on again as they go); `scope.rs` checks their scope
//! callbacks against the same overlap, once nothing is in flight. In half the seeds
//! every federate regulates and is constrained and sends time-stamped (`time.rs`):
//! a time-stamped message is tested against the receiver's regions when it is
//! delivered, so one still queued when the receiver moves its regions is uncertain
//! too; deliveries must be in time-stamp order within the grants, and at the end
//! everyone must be granted a common late time. `check.rs` holds the per-callback
//! checks.

mod check;
mod scope;
mod time;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

use bytes::Bytes;
use glidepath_core::fom::{DefaultRange, Dimension};
use glidepath_core::{
    AttributeHandle, DimensionHandle, ExecReply, ExecRequest, ExecutiveHost, FederateHandle, Fom,
    InteractionClassHandle, LocalRti, ObjectClassHandle, ObjectInstanceHandle, RangeBounds,
    RegionHandle, RtiError,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::network::{Network, SimLink};
use crate::sim_fom;

const FEDERATION: &str = "ddm";
/// The upper bound of both dimensions.
const UPPER: u64 = 1000;

/// What to simulate.
#[derive(Clone, Debug)]
pub struct DdmSimConfig {
    pub seed: u64,
    /// Number of federates; drawn from 2..=6 when `None`.
    pub federates: Option<usize>,
    /// Actions (updates, sends, region moves) all federates make together.
    pub actions: u32,
    /// Print every event.
    pub verbose: bool,
    /// Whether federates regulate, are constrained and send time-stamped; drawn
    /// (one seed in two) when `None`.
    pub timed: Option<bool>,
}

impl DdmSimConfig {
    /// The default run of a seed.
    pub fn for_seed(seed: u64) -> DdmSimConfig {
        DdmSimConfig {
            seed,
            federates: None,
            actions: 300,
            verbose: false,
            timed: None,
        }
    }
}

/// What one run counted.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DdmOutcome {
    pub seed: u64,
    pub federates: usize,
    /// Updates and interactions published, and (sender, receiver) pairs of them.
    pub published: u64,
    pub pairs: u64,
    /// Pairs wanted when sent, and of those, delivered.
    pub wanted: u64,
    pub delivered: u64,
    /// Pairs whose receiver moved a subscription region while in flight.
    pub uncertain: u64,
    /// Copies the network never sent because the receiver's interest excluded them.
    pub filtered_at_source: u64,
    /// Region commits: update and interaction regions, subscription regions.
    pub sender_moves: u64,
    pub subscriber_moves: u64,
    /// Instances discovered by federates subscribing with regions only.
    pub discovered_by_overlap: u64,
    /// Runs with time management, time-stamped deliveries checked, grants.
    pub timed_runs: u64,
    pub tso_delivered: u64,
    pub grants: u64,
    /// Scope callbacks (in and out) checked, and switch changes.
    pub scope_callbacks: u64,
    pub scope_switches: u64,
}

/// A violated invariant, with the seed that replays it.
#[derive(Clone, Debug)]
pub struct DdmFailure {
    pub seed: u64,
    pub message: String,
    pub trace: Vec<String>,
}

impl std::fmt::Display for DdmFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        crate::trace::write_failure(
            f,
            format_args!("DDM seed {} failed: {}", self.seed, self.message),
            format_args!(
                "cargo run -p glidepath-sim -- --ddm --seed {} --verbose",
                self.seed
            ),
            &self.trace,
        )
    }
}

/// A committed 2-D box, as the checker keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Box2 {
    x: (u64, u64),
    y: (u64, u64),
}

impl Box2 {
    /// The standard's overlap, written here apart from the core's.
    fn overlaps(&self, o: &Box2) -> bool {
        let one = |a: (u64, u64), b: (u64, u64)| a.0 == b.0 || (a.0 < b.1 && b.0 < a.1);
        one(self.x, o.x) && one(self.y, o.y)
    }
}

/// The FOM's handles the simulator uses.
#[derive(Clone, Copy)]
struct Handles {
    vehicle: ObjectClassHandle,
    position: AttributeHandle,
    label: AttributeHandle,
    event: InteractionClassHandle,
    x: DimensionHandle,
    y: DimensionHandle,
}

/// The simulator's FOM: its usual one, with X and Y (upper bound 1000, excluded
/// when unspecified) available to `Vehicle.position` and to `Event`.
fn ddm_fom() -> (Fom, Handles) {
    let mut fom = sim_fom();
    let mut dimension = |name: &str| {
        let handle = DimensionHandle(fom.dimensions.len() as u32);
        fom.dimensions.push(Dimension {
            handle,
            name: name.into(),
            data_type: None,
            upper_bound: UPPER,
            normalization: None,
            default_range: DefaultRange::Excluded,
        });
        handle
    };
    let (x, y) = (dimension("X"), dimension("Y"));
    let vehicle = fom.object_class_by_name("Vehicle").expect("the sim FOM");
    let position = fom
        .attribute_by_name(vehicle, "position")
        .expect("position");
    let label = fom.attribute_by_name(vehicle, "label").expect("label");
    fom.attributes[position.index()].dimensions = vec![x, y];
    let event = fom.interaction_class_by_name("Event").expect("Event");
    fom.interaction_classes[event.index()].dimensions = vec![x, y];
    let h = Handles {
        vehicle,
        position,
        label,
        event,
        x,
        y,
    };
    (fom, h)
}

/// One simulated federate.
struct Member {
    lrc: LocalRti,
    /// Its update region per instance it registered.
    instances: Vec<(ObjectInstanceHandle, RegionHandle)>,
    /// The region its interactions are sent with.
    send_region: RegionHandle,
    /// Its subscription regions (position and Event alike).
    subscription: Vec<RegionHandle>,
    /// Whether it subscribes `label` with the default region (then it discovers at
    /// registration).
    wants_label: bool,
    discovered: BTreeSet<ObjectInstanceHandle>,
    /// What its scope callbacks said.
    scope: scope::ScopeSeen,
    /// Its time, when the run is timed.
    clock: time::Clock,
}

/// What a receiver should make of one published message.
struct Expect {
    wanted: bool,
    /// Queued on the network towards the receiver, not yet arrived.
    in_flight: bool,
    uncertain: bool,
    delivered: bool,
    /// Sent in time-stamp order: tested against the receiver's regions when
    /// delivered, which may be long after it arrives.
    tso: bool,
}

struct DdmSim {
    cfg: DdmSimConfig,
    h: Handles,
    rng: ChaCha8Rng,
    net: Network,
    exec: ExecutiveHost,
    members: Vec<Member>,
    /// The checker's copy of every committed region.
    boxes: HashMap<RegionHandle, Box2>,
    /// Per (sender, seq, receiver node).
    expect: BTreeMap<(FederateHandle, u64, usize), Expect>,
    now: u64,
    wake: Vec<u64>,
    trace: Vec<String>,
    out: DdmOutcome,
    /// Federates regulate, are constrained and send time-stamped.
    timed: bool,
}

/// Runs one seeded DDM simulation, checking after every step.
pub fn run_ddm(cfg: &DdmSimConfig) -> Result<DdmOutcome, DdmFailure> {
    DdmSim::new(cfg)?.run()
}

impl DdmSim {
    fn new(cfg: &DdmSimConfig) -> Result<DdmSim, DdmFailure> {
        let mut rng = ChaCha8Rng::seed_from_u64(cfg.seed);
        let n = cfg.federates.unwrap_or_else(|| rng.gen_range(2..=6));
        let timed = cfg.timed.unwrap_or_else(|| rng.gen_bool(0.5));
        let (fom, h) = ddm_fom();
        let mut exec = ExecutiveHost::new();
        let (reply, _, _) = exec.executive_mut().handle(ExecRequest::Create {
            name: FEDERATION.into(),
            fom: Arc::new(fom),
        });
        assert!(matches!(reply, ExecReply::Created { .. }));
        let mut net = Network::default();
        net.published = Some(Vec::new());
        let mut sim = DdmSim {
            cfg: cfg.clone(),
            h,
            rng,
            net,
            exec,
            members: Vec::new(),
            boxes: HashMap::new(),
            expect: BTreeMap::new(),
            now: 0,
            wake: Vec::new(),
            trace: Vec::new(),
            out: DdmOutcome {
                seed: cfg.seed,
                federates: n,
                timed_runs: u64::from(timed),
                ..DdmOutcome::default()
            },
            timed,
        };
        for idx in 0..n {
            sim.join(idx)?;
        }
        // Everyone declares before anyone registers, so every registration reaches
        // every subscriber.
        for idx in 0..n {
            sim.declare(idx)?;
        }
        for idx in 0..n {
            for _ in 0..sim.rng.gen_range(1..=2) {
                sim.register(idx)?;
            }
        }
        if timed {
            for idx in 0..n {
                sim.enable_time(idx)?;
            }
        }
        sim.wake = (0..n).map(|_| sim.rng.gen_range(1_000..50_000)).collect();
        Ok(sim)
    }

    fn fail(&self, message: String) -> DdmFailure {
        let start = self.trace.len().saturating_sub(40);
        DdmFailure {
            seed: self.cfg.seed,
            message,
            trace: self.trace[start..].to_vec(),
        }
    }

    fn log(&mut self, line: String) {
        if self.cfg.verbose {
            println!("{:>12} {line}", self.now);
        }
        self.trace.push(format!("{:>12} {line}", self.now));
    }

    /// A random box: mostly small (a tenth of the plane on a side), sometimes large.
    fn random_box(&mut self) -> Box2 {
        let range = |rng: &mut ChaCha8Rng| {
            let width = if rng.gen_bool(0.2) {
                rng.gen_range(0..=UPPER)
            } else {
                rng.gen_range(0..=UPPER / 10)
            };
            let lower = rng.gen_range(0..=UPPER - width);
            (lower, lower + width)
        };
        let x = range(&mut self.rng);
        let y = range(&mut self.rng);
        Box2 { x, y }
    }

    /// Calls the core of member `idx` through its link and carries out its outputs.
    fn call<R>(
        &mut self,
        idx: usize,
        what: &str,
        f: impl FnOnce(&mut LocalRti, &mut SimLink) -> Result<R, RtiError>,
    ) -> Result<R, DdmFailure> {
        let mut link = SimLink {
            node: idx,
            now: self.now,
            net: &mut self.net,
            exec: &mut self.exec,
            rng: &mut self.rng,
        };
        let lrc = &mut self.members[idx].lrc;
        let result = f(lrc, &mut link);
        link.flush(lrc);
        let r = result.map_err(|e| self.fail(format!("federate {idx}: {what}: {e}")))?;
        self.note_published();
        self.drain(idx)?;
        Ok(r)
    }

    fn join(&mut self, idx: usize) -> Result<(), DdmFailure> {
        let mut link = SimLink {
            node: idx,
            now: self.now,
            net: &mut self.net,
            exec: &mut self.exec,
            rng: &mut self.rng,
        };
        let mut lrc = LocalRti::join(&mut link, FEDERATION, Some(&format!("fed{idx}")), "ddm")
            .map_err(|e| DdmFailure {
                seed: self.cfg.seed,
                message: format!("federate {idx} could not join: {e}"),
                trace: Vec::new(),
            })?;
        link.flush(&mut lrc);
        self.members.push(Member {
            lrc,
            instances: Vec::new(),
            send_region: RegionHandle {
                federate: FederateHandle(0),
                serial: 0,
            },
            subscription: Vec::new(),
            wants_label: false,
            discovered: BTreeSet::new(),
            scope: scope::ScopeSeen::default(),
            clock: time::Clock::default(),
        });
        if self.rng.gen_bool(0.75) {
            self.switch_scope(idx, true)?;
        }
        Ok(())
    }

    /// Turns member `idx`'s attribute scope advisory switch on or off.
    fn switch_scope(&mut self, idx: usize, on: bool) -> Result<(), DdmFailure> {
        self.call(idx, "scope advisory switch", |l, _| {
            if on {
                l.enable_attribute_scope_advisory_switch()
            } else {
                l.disable_attribute_scope_advisory_switch()
            }
        })?;
        self.members[idx].scope.switch(on);
        self.out.scope_switches += 1;
        self.log(format!(
            "{idx} turns scope advisories {}",
            if on { "on" } else { "off" }
        ));
        Ok(())
    }

    /// A region of member `idx` at a random box, committed.
    fn new_region(&mut self, idx: usize) -> Result<RegionHandle, DdmFailure> {
        let h = self.h;
        let b = self.random_box();
        let region = self.call(idx, "create region", |l, _| {
            let r = l.create_region(&[h.x, h.y])?;
            l.set_range_bounds(r, h.x, RangeBounds::new(b.x.0, b.x.1))?;
            l.set_range_bounds(r, h.y, RangeBounds::new(b.y.0, b.y.1))?;
            l.commit_region_modifications(&[r])?;
            Ok(r)
        })?;
        self.boxes.insert(region, b);
        Ok(region)
    }

    fn declare(&mut self, idx: usize) -> Result<(), DdmFailure> {
        let h = self.h;
        self.call(idx, "publish", |l, _| {
            l.publish_object_class_attributes(h.vehicle, &[h.position, h.label])?;
            l.publish_interaction_class(h.event)
        })?;
        let regions: Vec<RegionHandle> = (0..self.rng.gen_range(1..=2))
            .map(|_| self.new_region(idx))
            .collect::<Result<_, _>>()?;
        let wants_label = self.rng.gen_bool(0.3);
        let subscription = regions.clone();
        self.call(idx, "subscribe with regions", |l, k| {
            l.subscribe_object_class_attributes_with_regions(
                k,
                h.vehicle,
                &[(vec![h.position], subscription.clone())],
            )?;
            if wants_label {
                l.subscribe_object_class_attributes(k, h.vehicle, &[h.label])?;
            }
            l.subscribe_interaction_class_with_regions(h.event, &subscription)
        })?;
        let send_region = self.new_region(idx)?;
        let m = &mut self.members[idx];
        m.subscription = regions;
        m.wants_label = wants_label;
        m.send_region = send_region;
        let line = format!(
            "{idx} subscribes {:?}{}",
            m.subscription
                .iter()
                .map(|r| self.boxes[r])
                .collect::<Vec<_>>(),
            if wants_label { " and label" } else { "" }
        );
        self.log(line);
        Ok(())
    }

    fn register(&mut self, idx: usize) -> Result<(), DdmFailure> {
        let h = self.h;
        let region = self.new_region(idx)?;
        let instance = self.call(idx, "register with regions", |l, k| {
            l.register_object_instance_with_regions(
                k,
                h.vehicle,
                &[(vec![h.position], vec![region])],
                None,
            )
        })?;
        self.members[idx].instances.push((instance, region));
        let line = format!("{idx} registers {instance} at {:?}", self.boxes[&region]);
        self.log(line);
        Ok(())
    }

    /// One random action of member `idx`.
    fn act(&mut self, idx: usize) -> Result<(), DdmFailure> {
        let h = self.h;
        if self.timed && self.rng.gen_bool(0.15) && self.maybe_advance(idx)? {
            return Ok(());
        }
        let at = if self.timed {
            let extra = f64::from(self.rng.gen_range(0..10u32));
            self.members[idx].clock.send_time(extra)
        } else {
            None
        };
        let roll = self.rng.gen_range(0..100);
        match roll {
            0..=39 => {
                let k = self.rng.gen_range(0..self.members[idx].instances.len());
                let (instance, _) = self.members[idx].instances[k];
                let with_label = self.rng.gen_bool(0.3);
                let mut values = vec![(h.position, Bytes::from_static(b"p"))];
                if with_label {
                    values.push((h.label, Bytes::from_static(b"l")));
                }
                self.log(format!("{idx} updates {instance}"));
                self.call(idx, "update", |l, _| {
                    l.update_attribute_values(instance, values, Bytes::new(), at)
                })?;
            }
            40..=42 => {
                let on = !self.members[idx].scope.on;
                self.switch_scope(idx, on)?;
            }
            43..=54 => {
                let region = self.members[idx].send_region;
                self.log(format!("{idx} sends an interaction"));
                self.call(idx, "send interaction", |l, _| {
                    l.send_interaction_with_regions(
                        h.event,
                        Vec::new(),
                        &[region],
                        Bytes::new(),
                        at,
                    )
                })?;
            }
            55..=79 => {
                // A sender moves an update region or its interaction region.
                let m = &self.members[idx];
                let k = self.rng.gen_range(0..=m.instances.len());
                let region = m.instances.get(k).map_or(m.send_region, |(_, r)| *r);
                self.move_region(idx, region)?;
                self.out.sender_moves += 1;
            }
            _ => {
                let m = &self.members[idx];
                let region = m.subscription[self.rng.gen_range(0..m.subscription.len())];
                self.move_region(idx, region)?;
                self.out.subscriber_moves += 1;
                // Whatever is still in flight towards it may now go either way.
                for ((_, _, to), e) in self.expect.iter_mut() {
                    if *to == idx && (e.in_flight || (e.tso && !e.delivered)) {
                        e.uncertain = true;
                    }
                }
            }
        }
        Ok(())
    }

    /// Sets a region to a new random box and commits it (sometimes setting bounds
    /// first and committing on a later action is not modelled: a set without a
    /// commit changes nothing, which the core's own tests check).
    fn move_region(&mut self, idx: usize, region: RegionHandle) -> Result<(), DdmFailure> {
        let h = self.h;
        let b = self.random_box();
        self.call(idx, "move region", |l, _| {
            l.set_range_bounds(region, h.x, RangeBounds::new(b.x.0, b.x.1))?;
            l.set_range_bounds(region, h.y, RangeBounds::new(b.y.0, b.y.1))?;
            l.commit_region_modifications(&[region])
        })?;
        self.boxes.insert(region, b);
        self.log(format!("{idx} moves {region} to {b:?}"));
        Ok(())
    }

    /// Delivers everything in flight, and what that sends, until nothing is.
    fn quiesce(&mut self) -> Result<(), DdmFailure> {
        while let Some((at, to, env)) = self.net.pop() {
            self.now = self.now.max(at);
            self.deliver(to, env)?;
        }
        Ok(())
    }

    fn run(mut self) -> Result<DdmOutcome, DdmFailure> {
        let mut actions_left = self.cfg.actions;
        loop {
            let delivery = self.net.next_at();
            let wake = if actions_left > 0 {
                self.wake.iter().enumerate().map(|(i, w)| (*w, i)).min()
            } else {
                None
            };
            match (delivery, wake) {
                (None, None) => break,
                (Some(at), w) if w.is_none_or(|(wt, _)| at <= wt) => {
                    let (at, to, env) = self.net.pop().expect("peeked");
                    self.now = at;
                    self.deliver(to, env)?;
                }
                (_, Some((wt, idx))) => {
                    self.now = wt;
                    actions_left -= 1;
                    self.act(idx)?;
                    self.wake[idx] = self.now + self.rng.gen_range(10_000..200_000);
                }
                (Some(_), None) => unreachable!("covered by the guard above"),
            }
        }
        if self.timed {
            self.finish_time()?;
        }
        // Nothing in flight: every message wanted when sent, to a receiver that did
        // not move its regions meanwhile, has arrived.
        let mut missed = String::new();
        for ((sender, seq, to), e) in &self.expect {
            if e.uncertain {
                self.out.uncertain += 1;
                continue;
            }
            if e.wanted {
                self.out.wanted += 1;
                if e.delivered {
                    self.out.delivered += 1;
                } else if missed.len() < 400 {
                    let _ = write!(missed, " {sender}#{seq}->{to}");
                }
            }
        }
        if !missed.is_empty() {
            return Err(self.fail(format!(
                "false negatives: wanted when sent, never delivered:{missed}"
            )));
        }
        for idx in 0..self.members.len() {
            let expected = self.scope_now(idx);
            if let Err(e) = scope::compare(&self.members[idx].scope, &expected) {
                return Err(self.fail(format!("federate {idx}: {e}")));
            }
        }
        self.out.filtered_at_source = self.net.filtered_at_source;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checkers_overlap_is_the_standards() {
        let a = Box2 {
            x: (0, 10),
            y: (0, 10),
        };
        assert!(a.overlaps(&Box2 {
            x: (9, 20),
            y: (5, 5)
        }));
        assert!(!a.overlaps(&Box2 {
            x: (10, 20),
            y: (0, 10)
        }));
        assert!(Box2 {
            x: (3, 3),
            y: (0, 1)
        }
        .overlaps(&Box2 {
            x: (3, 5),
            y: (0, 1)
        }));
    }
}

//! The simulation server: a federate that waits for the processing nodes, balances the
//! scenario's aircraft over them, clocks the frames (`TgStep`), routes each command to
//! the node that owns its aircraft for the next frame, and subscribes to every state,
//! so a frame is done when every node's `TgFrameDone` has arrived behind its states.

use std::collections::HashMap;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use glidepath::{
    Bytes, Callback, Federate, FederateHandle, JoinOptions, ObjectInstanceHandle, ProcessModel,
    ResignAction, Rti,
};

use crate::command::{Command, CommandAck, Instruction, Refusal};
use crate::dynamics::{Aircraft, PublishedState, Wind};
use crate::federation::{
    fom, int, opaque, read_f64, read_int, read_opaque, read_unicode, unicode, value, Handles,
    TgError,
};
use crate::model::Model;
use crate::node::{run_node, NodeConfig, NodeReport};
use crate::runner::Control;
use crate::scenario::Scenario;
use crate::wire::{
    decode_ack, decode_assignment, decode_command, encode_ack, encode_assignment, encode_command,
};

mod rebalance;
pub use rebalance::Balance;

/// How the server runs.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Processing nodes to wait for before assigning aircraft.
    pub nodes: usize,
    /// Simulated seconds per frame: 1/60 s, the out-the-window rate DASE aims for.
    pub dt_s: f64,
    /// How long to wait for the nodes: 30 s, time enough to start node processes.
    pub node_wait: Duration,
    /// How long a frame may take before the server gives up on a node: 10 s, far
    /// above any frame of 10,000 aircraft on one core.
    pub frame_timeout: Duration,
    /// Aircraft per `TgAssign` message: 1,000 keeps a message under NATS's default
    /// 1 MiB payload limit.
    pub assign_batch: usize,
    /// Failover: a node that has not finished a frame this long after the others is
    /// taken as lost, and its aircraft continue on the others from their last
    /// published state. `None` (the default) waits `frame_timeout` and fails the run.
    pub node_timeout: Option<Duration>,
    /// Moving aircraft off a node that falls behind (`rebalance.rs`); `None` (the
    /// default here; `glidepath tg` turns it on) moves them only when a node joins
    /// or is lost.
    pub balance: Option<Balance>,
}

impl ServerConfig {
    /// The defaults for `nodes` nodes.
    pub fn new(nodes: usize) -> ServerConfig {
        ServerConfig {
            nodes,
            dt_s: 1.0 / 60.0,
            node_wait: Duration::from_secs(30),
            frame_timeout: Duration::from_secs(10),
            assign_batch: 1_000,
            node_timeout: None,
            balance: None,
        }
    }
}

/// The latest state of one aircraft as the server received it.
#[derive(Clone, Debug, PartialEq)]
pub struct Track {
    /// Callsign.
    pub callsign: String,
    /// ICAO type designator.
    pub aircraft_type: String,
    /// The state.
    pub state: PublishedState,
    /// Simulated time of the state, µs from the start of the run.
    pub track_time_us: i64,
    /// Updates received.
    pub updates: u64,
    /// The processing node that flies it.
    pub node: String,
}

/// What one frame took.
#[derive(Clone, Debug, PartialEq)]
pub struct FrameReport {
    /// The frame's number.
    pub frame: u64,
    /// Wall time from sending the step to the last node's report.
    pub wall: Duration,
    /// State updates received in the frame.
    pub updates: u64,
    /// The slowest node's parallel step.
    pub compute: Duration,
    /// The slowest node's publishing.
    pub publish: Duration,
    /// Nodes found lost in this frame, with how many aircraft each handed on.
    pub lost: Vec<(String, usize)>,
}

/// The simulation server of one federation.
pub struct SimulationServer {
    fed: Federate,
    h: Handles,
    config: ServerConfig,
    nodes: Vec<String>,
    node_frame: Vec<u64>,
    node_handles: Vec<FederateHandle>,
    alive: Vec<bool>,
    /// The scenario's aircraft: the plans a failover restarts from.
    originals: Vec<Aircraft>,
    wind: Wind,
    /// Commands routed and not yet acknowledged, and those applied, per aircraft:
    /// a failover re-applies them.
    routed: HashMap<u64, Command>,
    applied: HashMap<String, Vec<Instruction>>,
    owner: HashMap<String, usize>,
    tracks: Vec<Track>,
    by_callsign: HashMap<String, usize>,
    by_instance: HashMap<ObjectInstanceHandle, usize>,
    frame: u64,
    queued: Vec<Command>,
    acks: Vec<CommandAck>,
    next_id: u64,
    frame_updates: u64,
    compute_ns_max: u64,
    publish_ns_max: u64,
    malformed: u64,
    /// Controls from stations (`TgControl`), for the run to obey.
    controls: Vec<Control>,
    /// Nodes that joined after the start, waiting for their share (`rebalance.rs`).
    joined: Vec<usize>,
    /// Aircraft handed back by their nodes (`TgHandover`), not yet reassigned.
    handovers: Vec<(String, Vec<Aircraft>)>,
    /// Rebalances done, and why the last one was.
    rebalanced: u64,
    last_rebalance: Option<String>,
    /// Each node's compute time summed over the frames of the current window, and
    /// those frames (`rebalance.rs`: does a node fall behind?).
    node_compute_ns: Vec<u64>,
    window_frames: u64,
}

/// Creates a target-generator federation (both FOM modules) on `rti`.
pub fn create_federation(rti: &Rti, federation: &str) -> Result<(), TgError> {
    rti.create_federation_execution_with_fom(federation, fom()?)?;
    Ok(())
}

impl SimulationServer {
    /// Joins `federation` (which must exist), waits for `config.nodes` processing nodes
    /// and assigns them the scenario's aircraft, an equal share each.
    pub fn start(
        rti: &Rti,
        federation: &str,
        scenario: Scenario,
        config: ServerConfig,
    ) -> Result<SimulationServer, TgError> {
        let fed = rti.join(
            federation,
            JoinOptions::named("tg-server", "tg-server").with_process_model(ProcessModel::Evoked),
        )?;
        let h = Handles::resolve(&fed)?;
        fed.subscribe_object_class_attributes(h.aircraft, &h.attrs.all())?;
        for c in [
            h.node_ready.class,
            h.frame_done.class,
            h.ack.class,
            h.command.class,
            h.control.class,
            h.handover.class,
        ] {
            fed.subscribe_interaction_class(c)?;
        }
        for c in [
            h.assign.class,
            h.release.class,
            h.step.class,
            h.node_command.class,
            h.stop.class,
            h.ack.class,
        ] {
            fed.publish_interaction_class(c)?;
        }
        let table = crate::perf::PerformanceTable::builtin();
        let tracks: Vec<Track> = scenario
            .aircraft
            .iter()
            .map(|a| Track {
                callsign: a.callsign.clone(),
                aircraft_type: table
                    .get(a.type_index)
                    .map_or_else(String::new, |p| p.type_code.clone()),
                state: a.published(),
                track_time_us: 0,
                updates: 0,
                node: String::new(),
            })
            .collect();
        let by_callsign = tracks
            .iter()
            .enumerate()
            .map(|(i, t)| (t.callsign.clone(), i))
            .collect();
        let mut server = SimulationServer {
            fed,
            h,
            config,
            nodes: Vec::new(),
            node_frame: Vec::new(),
            node_handles: Vec::new(),
            alive: Vec::new(),
            originals: scenario.aircraft.clone(),
            wind: scenario.wind,
            routed: HashMap::new(),
            applied: HashMap::new(),
            owner: HashMap::new(),
            tracks,
            by_callsign,
            by_instance: HashMap::new(),
            frame: 0,
            queued: Vec::new(),
            acks: Vec::new(),
            next_id: 1,
            frame_updates: 0,
            compute_ns_max: 0,
            publish_ns_max: 0,
            malformed: 0,
            controls: Vec::new(),
            joined: Vec::new(),
            handovers: Vec::new(),
            rebalanced: 0,
            last_rebalance: None,
            node_compute_ns: Vec::new(),
            window_frames: 0,
        };
        server.wait_for_nodes()?;
        server.assign(&scenario)?;
        Ok(server)
    }

    fn wait_for_nodes(&mut self) -> Result<(), TgError> {
        let start = Instant::now();
        let deadline = start + self.config.node_wait;
        while self.nodes.len() < self.config.nodes {
            let now = Instant::now();
            let cb = (now < deadline)
                .then(|| self.fed.next_callback(deadline - now))
                .flatten();
            match cb {
                Some(cb) => self.handle_or_count(cb)?,
                None => {
                    return Err(TgError::NodesMissing {
                        expected: self.config.nodes,
                        ready: self.nodes.len(),
                        waited_s: start.elapsed().as_secs_f64(),
                    })
                }
            }
        }
        Ok(())
    }

    /// The load balancer: contiguous, equal shares in scenario order.
    fn assign(&mut self, scenario: &Scenario) -> Result<(), TgError> {
        let n = scenario.aircraft.len();
        let k = self.nodes.len();
        for (node, name) in self.nodes.clone().iter().enumerate() {
            let share = &scenario.aircraft[node * n / k..(node + 1) * n / k];
            for a in share {
                self.owner.insert(a.callsign.clone(), node);
                if let Some(&i) = self.by_callsign.get(&a.callsign) {
                    self.tracks[i].node = name.clone();
                }
            }
            for batch in share.chunks(self.config.assign_batch.max(1)) {
                let p = self.h.assign.params;
                self.fed.send_interaction(
                    self.h.assign.class,
                    [
                        (p[0], unicode(name)),
                        (p[1], opaque(encode_assignment(scenario.wind, batch))),
                    ],
                    Bytes::new(),
                )?;
            }
        }
        Ok(())
    }

    /// Queues a command for the next frame; returns its id (the acknowledgement's).
    pub fn command(&mut self, callsign: &str, instruction: Instruction) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.queued.push(Command {
            id,
            callsign: callsign.to_string(),
            instruction,
        });
        id
    }

    /// The acknowledgements received since the last call, in arrival order.
    pub fn take_acks(&mut self) -> Vec<CommandAck> {
        std::mem::take(&mut self.acks)
    }

    /// Every aircraft's latest state, in scenario order.
    pub fn tracks(&self) -> &[Track] {
        &self.tracks
    }

    /// The processing nodes, in the order they announced themselves.
    pub fn nodes(&self) -> &[String] {
        &self.nodes
    }

    /// The last frame stepped.
    pub fn frame(&self) -> u64 {
        self.frame
    }

    /// Simulated seconds per frame.
    pub fn dt_s(&self) -> f64 {
        self.config.dt_s
    }

    /// Sets the simulated seconds per frame (the speed factor at a given rate).
    pub fn set_dt_s(&mut self, dt_s: f64) {
        self.config.dt_s = dt_s;
    }

    /// Runs one frame: routes the queued commands to their nodes for this frame, sends
    /// the step, and waits until every node has reported it (its states arrived first).
    pub fn step(&mut self) -> Result<FrameReport, TgError> {
        let start = Instant::now();
        self.frame += 1;
        self.frame_updates = 0;
        self.compute_ns_max = 0;
        self.publish_ns_max = 0;
        if !self.joined.is_empty() {
            self.rebalance()?;
        } else {
            self.balance_for_speed()?;
        }
        for command in std::mem::take(&mut self.queued) {
            self.route(command)?;
        }
        let p = self.h.step.params;
        self.fed.send_interaction(
            self.h.step.class,
            [
                (p[0], int(self.frame as i64)),
                (
                    p[1],
                    Bytes::copy_from_slice(&self.config.dt_s.to_be_bytes()),
                ),
            ],
            Bytes::new(),
        )?;
        let deadline = start + self.config.frame_timeout;
        let mut lost = Vec::new();
        let mut first_done: Option<Instant> = None;
        while let Some(late) = self.late_node() {
            let now = Instant::now();
            if first_done.is_none()
                && self
                    .node_frame
                    .iter()
                    .zip(&self.alive)
                    .any(|(f, a)| *a && *f >= self.frame)
            {
                first_done = Some(now);
            }
            // Failover: the others are done and this one is overdue.
            if let (Some(limit), Some(done)) = (self.config.node_timeout, first_done) {
                if now >= done + limit {
                    lost.push(self.fail_over(late)?);
                    continue;
                }
            }
            let until = match (self.config.node_timeout, first_done) {
                (Some(limit), Some(done)) => deadline.min(done + limit),
                _ => deadline,
            };
            match (now < until)
                .then(|| self.fed.next_callback(until - now))
                .flatten()
            {
                Some(cb) => self.handle_or_count(cb)?,
                None if Instant::now() < deadline => {}
                None => {
                    self.fed.check_transport()?;
                    return Err(TgError::NodeSilent {
                        node: self.nodes[late].clone(),
                        frame: self.frame,
                        waited_s: start.elapsed().as_secs_f64(),
                    });
                }
            }
        }
        self.window_frames += 1;
        Ok(FrameReport {
            lost,
            frame: self.frame,
            wall: start.elapsed(),
            updates: self.frame_updates,
            compute: Duration::from_nanos(self.compute_ns_max),
            publish: Duration::from_nanos(self.publish_ns_max),
        })
    }

    /// A live node that has not finished the current frame.
    fn late_node(&self) -> Option<usize> {
        (0..self.nodes.len()).find(|&k| self.alive[k] && self.node_frame[k] < self.frame)
    }

    /// The nodes taken as lost so far.
    pub fn lost_nodes(&self) -> Vec<&str> {
        (0..self.nodes.len())
            .filter(|&k| !self.alive[k])
            .map(|k| self.nodes[k].as_str())
            .collect()
    }

    fn route(&mut self, command: Command) -> Result<(), TgError> {
        let Some(&node) = self.owner.get(&command.callsign) else {
            let ack = CommandAck {
                id: command.id,
                callsign: command.callsign.clone(),
                frame: self.frame,
                outcome: Err(Refusal::UnknownAircraft(command.callsign)),
            };
            self.fed.send_interaction(
                self.h.ack.class,
                [(self.h.ack.params[0], opaque(encode_ack(&ack)))],
                Bytes::new(),
            )?;
            self.acks.push(ack);
            return Ok(());
        };
        self.routed.insert(command.id, command.clone());
        let p = self.h.node_command.params;
        self.fed.send_interaction(
            self.h.node_command.class,
            [
                (p[0], unicode(&self.nodes[node])),
                (p[1], int(self.frame as i64)),
                (p[2], opaque(encode_command(&command))),
            ],
            Bytes::new(),
        )?;
        Ok(())
    }

    /// [`Self::handle`], but a message that does not decode is counted
    /// ([`Self::malformed`]) and logged instead of ending the run: nothing a peer
    /// sends stops the server.
    fn handle_or_count(&mut self, cb: Callback) -> Result<(), TgError> {
        match self.handle(cb) {
            Err(TgError::Wire(e)) => {
                self.malformed += 1;
                if self.malformed == 1 {
                    eprintln!("simulation server: dropped a message from a peer: {e} (the next ones are counted, not printed)");
                }
                Ok(())
            }
            other => other,
        }
    }

    /// How many times aircraft moved between nodes for a joined node or one that fell
    /// behind (not for a lost one: see [`SimulationServer::lost_nodes`]).
    pub fn rebalances(&self) -> u64 {
        self.rebalanced
    }

    /// Why the last rebalance moved aircraft: `a node joined`, or `NODE fell behind`.
    pub fn last_rebalance(&self) -> Option<&str> {
        self.last_rebalance.as_deref()
    }

    /// The controls stations sent (`TgControl`) since the last call, in order.
    pub fn take_controls(&mut self) -> Vec<Control> {
        std::mem::take(&mut self.controls)
    }

    /// Takes what peers sent for up to `wait` without running a frame (a paused run
    /// still hears its stations and nodes).
    pub fn poll(&mut self, wait: Duration) -> Result<(), TgError> {
        let deadline = Instant::now() + wait;
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            match self.fed.next_callback(deadline - now) {
                Some(cb) => self.handle_or_count(cb)?,
                None => return Ok(()),
            }
        }
    }

    /// Messages from peers that did not decode, dropped and counted.
    pub fn malformed(&self) -> u64 {
        self.malformed
    }

    fn handle(&mut self, cb: Callback) -> Result<(), TgError> {
        match cb {
            Callback::ReflectAttributeValues {
                instance,
                values,
                info,
                ..
            } => {
                if let Some(k) = self.node_handles.iter().position(|h| *h == info.producer) {
                    if !self.alive[k] {
                        return Ok(());
                    }
                }
                let a = self.h.attrs;
                let index = match self.by_instance.get(&instance) {
                    Some(&i) => i,
                    None => {
                        // The first update of an instance names its aircraft.
                        let Some((_, name)) = values.iter().find(|(h, _)| *h == a.callsign) else {
                            return Ok(());
                        };
                        let Some(&i) = read_unicode(Some(name))
                            .ok()
                            .and_then(|n| self.by_callsign.get(&n))
                        else {
                            return Ok(());
                        };
                        self.by_instance.insert(instance, i);
                        i
                    }
                };
                let t = &mut self.tracks[index];
                for (h, v) in values.iter() {
                    let Some(x) = read_f64(v) else { continue };
                    let s = &mut t.state;
                    match *h {
                        h if h == a.lat => s.lat_deg = x,
                        h if h == a.lon => s.lon_deg = x,
                        h if h == a.alt => s.alt_ft = x,
                        h if h == a.gs => s.gs_kt = x,
                        h if h == a.course => s.course_deg = x,
                        h if h == a.vs => s.vs_fpm = x,
                        h if h == a.heading => s.heading_deg = x,
                        h if h == a.pitch => s.pitch_deg = x,
                        h if h == a.roll => s.roll_deg = x,
                        h if h == a.track_time => {
                            t.track_time_us = i64::from_be_bytes(v[..].try_into().expect("8 bytes"))
                        }
                        _ => {}
                    }
                }
                t.updates += 1;
                self.frame_updates += 1;
            }
            Callback::RemoveObjectInstance { instance, .. } => {
                self.by_instance.remove(&instance);
            }
            Callback::ReceiveInteraction {
                class,
                values,
                info,
                ..
            } => {
                let h = self.h;
                if class == h.frame_done.class {
                    let p = h.frame_done.params;
                    let node = read_unicode(value(&values, p[0]))?;
                    if let Some(k) = self
                        .nodes
                        .iter()
                        .position(|n| *n == node)
                        .filter(|&k| self.alive[k])
                    {
                        self.node_frame[k] = read_int(value(&values, p[1]))? as u64;
                        let compute = read_int(value(&values, p[3]))?.max(0) as u64;
                        self.compute_ns_max = self.compute_ns_max.max(compute);
                        if let Some(sum) = self.node_compute_ns.get_mut(k) {
                            *sum += compute;
                        }
                        self.publish_ns_max = self
                            .publish_ns_max
                            .max(read_int(value(&values, p[4]))? as u64);
                    }
                } else if class == h.ack.class {
                    let ack = decode_ack(read_opaque(value(&values, h.ack.params[0]))?)?;
                    if let Some(c) = self.routed.remove(&ack.id) {
                        if ack.outcome.is_ok() {
                            self.applied
                                .entry(c.callsign)
                                .or_default()
                                .push(c.instruction);
                        }
                    }
                    self.acks.push(ack);
                } else if class == h.command.class {
                    let bytes = read_opaque(value(&values, h.command.params[0]))?;
                    self.queued.push(decode_command(bytes)?);
                } else if class == h.control.class {
                    let line = read_unicode(value(&values, h.control.params[0]))?;
                    match Control::parse(&line) {
                        Ok(c) => self.controls.push(c),
                        Err(e) => {
                            self.malformed += 1;
                            eprintln!("simulation server: a station's control {line:?}: {e}");
                        }
                    }
                } else if class == h.node_ready.class {
                    let node = read_unicode(value(&values, h.node_ready.params[0]))?;
                    if !self.nodes.contains(&node) {
                        // Past the nodes the run started with, a node joins: it gets
                        // a share before the next frame (rebalance.rs).
                        if self.nodes.len() >= self.config.nodes {
                            self.joined.push(self.nodes.len());
                        }
                        self.nodes.push(node);
                        self.node_frame.push(self.frame);
                        self.node_compute_ns.push(0);
                        self.node_handles.push(info.producer);
                        self.alive.push(true);
                    }
                } else if class == h.handover.class {
                    let donor = read_unicode(value(&values, h.handover.params[0]))?;
                    let bytes = read_opaque(value(&values, h.handover.params[1]))?;
                    let (_, aircraft) = decode_assignment(bytes)?;
                    self.handovers.push((donor, aircraft));
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// Ends the run: tells the nodes to stop and resigns.
    pub fn stop(self) -> Result<(), TgError> {
        self.fed
            .send_interaction(self.h.stop.class, [], Bytes::new())?;
        self.fed.resign(ResignAction::DeleteObjects)?;
        Ok(())
    }
}

/// A whole target generator in this process: the server and its processing nodes on
/// threads, over whatever transport `rti` uses.
pub struct LocalRun {
    /// The simulation server.
    pub server: SimulationServer,
    rti: Rti,
    federation: String,
    nodes: Vec<(String, JoinHandle<Result<NodeReport, TgError>>)>,
}

/// How a [`LocalRun`] is laid out.
#[derive(Clone, Debug)]
pub struct LocalLayout {
    /// Processing nodes (threads of this process, each a federate).
    pub nodes: usize,
    /// Threads in each node's pool.
    pub threads_per_node: usize,
    /// The model the nodes fly.
    pub model: Model,
    /// The performance table the nodes fly by.
    pub performance: std::sync::Arc<crate::perf::PerformanceTable>,
}

impl LocalLayout {
    /// `nodes` nodes of `threads_per_node` threads with the compiled-in performance table.
    pub fn new(nodes: usize, threads_per_node: usize, model: Model) -> LocalLayout {
        LocalLayout {
            nodes,
            threads_per_node,
            model,
            performance: std::sync::Arc::new(crate::perf::PerformanceTable::builtin().clone()),
        }
    }
}

impl LocalRun {
    /// Creates `federation` on `rti`, starts the nodes on threads and the server.
    pub fn start(
        rti: &Rti,
        federation: &str,
        scenario: Scenario,
        layout: &LocalLayout,
        mut config: ServerConfig,
    ) -> Result<LocalRun, TgError> {
        create_federation(rti, federation)?;
        config.nodes = layout.nodes;
        let mut nodes = Vec::new();
        for k in 0..layout.nodes {
            let name = format!("tg-node-{}", k + 1);
            let mut node_config =
                NodeConfig::new(name.clone(), layout.threads_per_node, layout.model);
            node_config.performance = layout.performance.clone();
            let (rti, federation) = (rti.clone(), federation.to_string());
            let handle = std::thread::Builder::new()
                .name(name.clone())
                .spawn(move || run_node(&rti, &federation, node_config))
                .map_err(|e| TgError::NodeFailed {
                    node: name.clone(),
                    reason: e.to_string(),
                })?;
            nodes.push((name, handle));
        }
        let server = SimulationServer::start(rti, federation, scenario, config)?;
        Ok(LocalRun {
            server,
            rti: rti.clone(),
            federation: federation.to_string(),
            nodes,
        })
    }

    /// Stops the nodes, waits for them and destroys the federation.
    pub fn finish(self) -> Result<Vec<NodeReport>, TgError> {
        self.server.stop()?;
        let mut reports = Vec::new();
        for (node, handle) in self.nodes {
            match handle.join() {
                Ok(r) => reports.push(r?),
                Err(_) => {
                    return Err(TgError::NodeFailed {
                        node,
                        reason: "panicked".into(),
                    })
                }
            }
        }
        self.rti.destroy_federation_execution(&self.federation)?;
        Ok(reports)
    }
}

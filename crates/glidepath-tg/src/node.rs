//! A processing node: a federate that flies the aircraft the simulation server assigns
//! it. On each `TgStep` it applies the commands routed to it for that frame, steps all
//! its aircraft in parallel on its own work-stealing pool (each aircraft once, so each
//! aircraft's steps stay strictly in order), publishes every state as an `Aircraft`
//! attribute update, and reports `TgFrameDone` after the states.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use glidepath::{
    Bytes, Callback, Federate, InteractionClassHandle, JoinOptions, ObjectInstanceHandle,
    ParameterHandle, ProcessModel, ResignAction, Rti,
};
use rayon::prelude::*;

use crate::command::{Command, CommandAck, Refusal};
use crate::dynamics::{Aircraft, Wind};
use crate::federation::{
    int, opaque, read_int, read_opaque, read_unicode, unicode, value, Handles, TgError,
};
use crate::model::Model;
use crate::perf::PerformanceTable;
use crate::wire::{decode_assignment, decode_command, encode_ack, encode_assignment};

/// How a processing node runs.
#[derive(Clone, Debug)]
pub struct NodeConfig {
    /// Its federate name, unique in the federation (the server addresses it by it).
    pub name: String,
    /// Threads of its pool (at least one).
    pub threads: usize,
    /// The model it steps aircraft with.
    pub model: Model,
    /// The performance table (every process of a run must use the same one).
    pub performance: Arc<PerformanceTable>,
    /// How often to repeat `TgNodeReady` until the server assigns aircraft: the server
    /// may start after the node (100 ms: quick to pair, negligible traffic).
    pub ready_repeat: Duration,
    /// A node that hears nothing for this long leaves (the server is gone).
    /// 60 s: far longer than any pause an operator makes in a run.
    pub silence_max: Duration,
}

impl NodeConfig {
    /// A node with the compiled-in performance table and the default timings.
    pub fn new(name: impl Into<String>, threads: usize, model: Model) -> NodeConfig {
        NodeConfig {
            name: name.into(),
            threads,
            model,
            performance: Arc::new(PerformanceTable::builtin().clone()),
            ready_repeat: Duration::from_millis(100),
            silence_max: Duration::from_secs(60),
        }
    }
}

/// What a node did, when it stops.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeReport {
    /// Frames stepped.
    pub frames: u64,
    /// Aircraft it flew at the end.
    pub aircraft: usize,
    /// Why it stopped: `TgStop`, or silence.
    pub stopped_by: NodeStop,
    /// Messages from peers that did not decode, dropped and counted.
    pub malformed: u64,
}

/// Why a node stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeStop {
    /// The server sent `TgStop`.
    Stopped,
    /// Nothing was heard for `silence_max`.
    Silence,
}

struct Flown {
    aircraft: Aircraft,
    instance: ObjectInstanceHandle,
    announced: bool,
}

struct Node {
    fed: Federate,
    h: Handles,
    config: NodeConfig,
    pool: rayon::ThreadPool,
    fleet: Vec<Flown>,
    by_callsign: HashMap<String, usize>,
    pending: Vec<(u64, Command)>,
    wind: Wind,
    frames: u64,
    /// One buffer per frame holds every state's values; updates carry slices of it.
    buffer: Vec<u8>,
    /// Messages from peers that did not decode, dropped.
    malformed: u64,
    /// Instances whose identity (callsign, type) a late joiner asked for.
    reannounce: std::collections::HashSet<ObjectInstanceHandle>,
}

/// What an interaction changed for the node's loop.
enum Received {
    Stop,
    Assigned,
}

/// Joins `federation` as a processing node and runs until `TgStop` (or silence).
pub fn run_node(rti: &Rti, federation: &str, config: NodeConfig) -> Result<NodeReport, TgError> {
    let fed = rti.join(
        federation,
        JoinOptions::named(config.name.clone(), "tg-node").with_process_model(ProcessModel::Evoked),
    )?;
    let h = Handles::resolve(&fed)?;
    fed.publish_object_class_attributes(h.aircraft, &h.attrs.all())?;
    for c in [
        h.node_ready.class,
        h.handover.class,
        h.frame_done.class,
        h.ack.class,
    ] {
        fed.publish_interaction_class(c)?;
    }
    for c in [
        h.assign.class,
        h.release.class,
        h.step.class,
        h.node_command.class,
        h.stop.class,
    ] {
        fed.subscribe_interaction_class(c)?;
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(config.threads.max(1))
        .thread_name({
            let name = config.name.clone();
            move |i| format!("{name}-{i}")
        })
        .build()
        .map_err(|e| TgError::NodeFailed {
            node: config.name.clone(),
            reason: format!("thread pool: {e}"),
        })?;
    let mut node = Node {
        fed,
        h,
        config,
        pool,
        fleet: Vec::new(),
        by_callsign: HashMap::new(),
        pending: Vec::new(),
        wind: Wind::default(),
        frames: 0,
        buffer: Vec::new(),
        malformed: 0,
        reannounce: Default::default(),
    };
    let stopped_by = node.run()?;
    node.fed.resign(ResignAction::DeleteObjects)?;
    Ok(NodeReport {
        frames: node.frames,
        aircraft: node.fleet.len(),
        stopped_by,
        malformed: node.malformed,
    })
}

impl Node {
    fn run(&mut self) -> Result<NodeStop, TgError> {
        let mut assigned = false;
        let mut heard = Instant::now();
        self.announce()?;
        loop {
            let wait = if assigned {
                Duration::from_millis(500)
            } else {
                self.config.ready_repeat
            };
            let Some(cb) = self.fed.next_callback(wait) else {
                if heard.elapsed() >= self.config.silence_max {
                    return Ok(NodeStop::Silence);
                }
                if !assigned {
                    self.announce()?;
                }
                self.fed.check_transport()?;
                continue;
            };
            heard = Instant::now();
            let (class, values) = match cb {
                Callback::ReceiveInteraction { class, values, .. } => (class, values),
                // A federate that joined late asks for the states it missed: the
                // next update of the instance carries its callsign and type again.
                Callback::ProvideAttributeValueUpdate { instance, .. } => {
                    self.reannounce.insert(instance);
                    continue;
                }
                _ => continue,
            };
            match self.on_interaction(class, &values) {
                Ok(Some(Received::Stop)) => return Ok(NodeStop::Stopped),
                Ok(Some(Received::Assigned)) => assigned = true,
                Ok(None) => {}
                // Nothing a peer sends stops the node: what does not decode is
                // counted and dropped.
                Err(TgError::Wire(e)) => {
                    self.malformed += 1;
                    if self.malformed == 1 {
                        eprintln!(
                            "processing node {}: dropped a message from a peer: {e} (the next ones are counted, not printed)",
                            self.config.name
                        );
                    }
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// One interaction: a step, a stop, or (addressed to this node) an assignment, a
    /// command or a release.
    fn on_interaction(
        &mut self,
        class: InteractionClassHandle,
        values: &[(ParameterHandle, Bytes)],
    ) -> Result<Option<Received>, TgError> {
        let h = self.h;
        if class == h.stop.class {
            return Ok(Some(Received::Stop));
        }
        if class == h.step.class {
            let frame = read_int(value(values, h.step.params[0]))? as u64;
            let dt = value(values, h.step.params[1])
                .and_then(|v| crate::federation::read_f64(v))
                .ok_or(crate::wire::WireError("dtSeconds"))?;
            self.step(frame, dt)?;
            return Ok(None);
        }
        // Everything else is addressed to one node.
        let node_param = if class == h.assign.class {
            h.assign.params[0]
        } else if class == h.node_command.class {
            h.node_command.params[0]
        } else if class == h.release.class {
            h.release.params[0]
        } else {
            return Ok(None);
        };
        if read_unicode(value(values, node_param))? != self.config.name {
            return Ok(None);
        }
        if class == h.assign.class {
            let (wind, aircraft) =
                decode_assignment(read_opaque(value(values, h.assign.params[1]))?)?;
            self.wind = wind;
            for a in aircraft {
                let instance = self.fed.register_object_instance(h.aircraft)?;
                self.by_callsign
                    .insert(a.callsign.clone(), self.fleet.len());
                self.fleet.push(Flown {
                    aircraft: a,
                    instance,
                    announced: false,
                });
            }
            return Ok(Some(Received::Assigned));
        }
        if class == h.node_command.class {
            let frame = read_int(value(values, h.node_command.params[1]))? as u64;
            let bytes = read_opaque(value(values, h.node_command.params[2]))?;
            self.pending.push((frame, decode_command(bytes)?));
        } else {
            let names = std::str::from_utf8(read_opaque(value(values, h.release.params[1]))?)
                .map_err(|_| crate::wire::WireError("callsigns not UTF-8"))?
                .to_string();
            self.release(names.lines())?;
        }
        Ok(None)
    }

    fn announce(&self) -> Result<(), TgError> {
        let h = &self.h;
        self.fed.send_interaction(
            h.node_ready.class,
            [
                (h.node_ready.params[0], unicode(&self.config.name)),
                (h.node_ready.params[1], int(self.config.threads as i64)),
            ],
            Bytes::new(),
        )?;
        Ok(())
    }

    /// Applies this frame's commands, steps every aircraft once in parallel, publishes
    /// the states in fleet order, then reports the frame.
    fn step(&mut self, frame: u64, dt: f64) -> Result<(), TgError> {
        let due: Vec<Command> = {
            let (due, later): (Vec<_>, Vec<_>) =
                self.pending.drain(..).partition(|(f, _)| *f <= frame);
            self.pending = later;
            due.into_iter().map(|(_, c)| c).collect()
        };
        for command in due {
            let outcome = match self.by_callsign.get(&command.callsign) {
                None => Err(Refusal::UnknownAircraft(command.callsign.clone())),
                Some(&i) => {
                    let a = &mut self.fleet[i].aircraft;
                    let perf = self
                        .config
                        .performance
                        .get(a.type_index)
                        .expect("the node's own table");
                    command
                        .instruction
                        .check(perf, a)
                        .map(|()| command.instruction.apply(a))
                }
            };
            let ack = CommandAck {
                id: command.id,
                callsign: command.callsign,
                frame,
                outcome,
            };
            self.fed.send_interaction(
                self.h.ack.class,
                [(self.h.ack.params[0], opaque(encode_ack(&ack)))],
                Bytes::new(),
            )?;
        }
        let compute_start = Instant::now();
        let (model, table, wind) = (self.config.model, &*self.config.performance, self.wind);
        let fleet = &mut self.fleet;
        self.pool.install(|| {
            fleet
                .par_iter_mut()
                .for_each(|f| model.step(table, &mut f.aircraft, dt, wind));
        });
        let compute_ns = compute_start.elapsed().as_nanos() as i64;
        let publish_start = Instant::now();
        self.publish(frame, dt)?;
        let publish_ns = publish_start.elapsed().as_nanos() as i64;
        self.frames += 1;
        let p = self.h.frame_done.params;
        self.fed.send_interaction(
            self.h.frame_done.class,
            [
                (p[0], unicode(&self.config.name)),
                (p[1], int(frame as i64)),
                (p[2], int(self.fleet.len() as i64)),
                (p[3], int(compute_ns)),
                (p[4], int(publish_ns)),
            ],
            Bytes::new(),
        )?;
        Ok(())
    }

    fn publish(&mut self, frame: u64, dt: f64) -> Result<(), TgError> {
        const FIELDS: usize = 10;
        self.buffer.clear();
        self.buffer.reserve(self.fleet.len() * FIELDS * 8);
        let track_time_us = (frame as f64 * dt * 1e6).round() as i64;
        for f in &self.fleet {
            let s = f.aircraft.published();
            for v in [
                s.lat_deg,
                s.lon_deg,
                s.alt_ft,
                s.gs_kt,
                s.course_deg,
                s.vs_fpm,
                s.heading_deg,
                s.pitch_deg,
                s.roll_deg,
            ] {
                self.buffer.extend_from_slice(&v.to_be_bytes());
            }
            self.buffer.extend_from_slice(&track_time_us.to_be_bytes());
        }
        let all = Bytes::from(std::mem::take(&mut self.buffer));
        let a = self.h.attrs;
        let handles = [
            a.lat,
            a.lon,
            a.alt,
            a.gs,
            a.course,
            a.vs,
            a.heading,
            a.pitch,
            a.roll,
            a.track_time,
        ];
        let table = &self.config.performance;
        for (i, f) in self.fleet.iter_mut().enumerate() {
            let base = i * FIELDS * 8;
            let states = handles
                .iter()
                .enumerate()
                .map(|(k, h)| (*h, all.slice(base + k * 8..base + k * 8 + 8)));
            if f.announced && !self.reannounce.remove(&f.instance) {
                self.fed
                    .update_attribute_values(f.instance, states, Bytes::new())?;
            } else {
                let type_code = table
                    .get(f.aircraft.type_index)
                    .map_or("", |p| p.type_code.as_str());
                let identity = [
                    (a.callsign, unicode(&f.aircraft.callsign)),
                    (a.aircraft_type, unicode(type_code)),
                ];
                self.fed.update_attribute_values(
                    f.instance,
                    identity.into_iter().chain(states),
                    Bytes::new(),
                )?;
                f.announced = true;
            }
        }
        Ok(())
    }

    /// Hands the named aircraft back to the server (rebalancing): deletes their
    /// instances and sends their whole state in `TgHandover`.
    fn release<'a>(&mut self, names: impl Iterator<Item = &'a str>) -> Result<(), TgError> {
        let mut out = Vec::new();
        for name in names {
            if let Some(i) = self.by_callsign.remove(name) {
                let f = self.fleet.swap_remove(i);
                if let Some(moved) = self.fleet.get(i) {
                    self.by_callsign.insert(moved.aircraft.callsign.clone(), i);
                }
                self.fed.delete_object_instance(f.instance, Bytes::new())?;
                out.push(f.aircraft);
            }
        }
        let h = self.h.handover;
        self.fed.send_interaction(
            h.class,
            [
                (h.params[0], unicode(&self.config.name)),
                (h.params[1], opaque(encode_assignment(self.wind, &out))),
            ],
            Bytes::new(),
        )?;
        Ok(())
    }
}

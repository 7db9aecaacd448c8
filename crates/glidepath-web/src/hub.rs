//! The meeting point of the simulation and the web: the scenario's catalog, the latest
//! snapshot of every aircraft, commands on their way to the simulation server and the
//! answers on their way back, and the counters. The simulation side ([`TgObserver`])
//! never waits for the web side: it replaces the snapshot and sends on unbounded or
//! lossy channels only.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use glidepath_tg::command::{CommandAck, Instruction};
use glidepath_tg::perf::PerformanceTable;
use glidepath_tg::runner::{Control, Observer, Status};
use glidepath_tg::scenario::Scenario;
use glidepath_tg::server::{FrameReport, SimulationServer};
use serde::Serialize;
use tokio::sync::{broadcast, oneshot, watch};

use crate::validate::{Counters, Rejection};

/// What a client may know of one aircraft that does not change during a run.
#[derive(Clone, Debug, Serialize)]
pub struct CatalogEntry {
    /// The frame rows' index of this aircraft.
    pub index: u32,
    /// Callsign.
    pub callsign: String,
    /// ICAO type designator.
    #[serde(rename = "type")]
    pub type_code: String,
    /// The type's name.
    pub type_name: String,
    /// Service ceiling, ft.
    pub ceiling_ft: f64,
    /// Lowest commanded speed, kt.
    pub min_speed_kt: f64,
    /// Highest commanded speed (Vmo), kt.
    pub max_speed_kt: f64,
    /// The flight plan's waypoints: name, latitude, longitude.
    pub waypoints: Vec<(String, f64, f64)>,
}

/// The scenario as the web serves it.
#[derive(Clone, Debug, Serialize)]
pub struct Catalog {
    /// The scenario's name.
    pub scenario: String,
    /// Its description.
    pub description: String,
    /// Every aircraft in scenario order (the order of the simulation's tracks).
    pub aircraft: Vec<CatalogEntry>,
}

impl Catalog {
    /// The catalog of a scenario whose types are in `table`.
    pub fn new(scenario: &Scenario, table: &PerformanceTable) -> Catalog {
        let aircraft = scenario
            .aircraft
            .iter()
            .enumerate()
            .map(|(i, a)| {
                let perf = table.get(a.type_index);
                CatalogEntry {
                    index: i as u32,
                    callsign: a.callsign.clone(),
                    type_code: perf.map_or_else(String::new, |p| p.type_code.clone()),
                    type_name: perf.map_or_else(String::new, |p| p.name.clone()),
                    ceiling_ft: perf.map_or(0.0, |p| p.ceiling_ft),
                    min_speed_kt: perf.map_or(0.0, |p| p.min_cas_kt),
                    max_speed_kt: perf.map_or(0.0, |p| p.vmo_kt),
                    waypoints: a
                        .plan
                        .waypoints()
                        .iter()
                        .map(|w| (w.name.clone(), w.lat_deg, w.lon_deg))
                        .collect(),
                }
            })
            .collect();
        Catalog {
            scenario: scenario.name.clone(),
            description: scenario.description.clone(),
            aircraft,
        }
    }
}

/// One aircraft's state in a snapshot (what the radar draws).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Row {
    /// Degrees north.
    pub lat: f32,
    /// Degrees east.
    pub lon: f32,
    /// Pressure altitude, ft.
    pub alt_ft: f32,
    /// Ground speed, kt.
    pub gs_kt: f32,
    /// True heading, degrees.
    pub heading_deg: f32,
    /// Vertical speed, ft/min.
    pub vs_fpm: f32,
}

/// Every aircraft at one frame.
#[derive(Debug, Default)]
pub struct Snapshot {
    /// Counts snapshots from 1 (0: none yet).
    pub seq: u64,
    /// The simulation's frame.
    pub frame: u64,
    /// Simulated seconds since the start.
    pub sim_time_s: f64,
    /// In catalog order.
    pub rows: Vec<Row>,
    /// The frame of every row, encoded once for all the clients that see everything.
    pub(crate) full: std::sync::OnceLock<bytes::Bytes>,
}

impl Snapshot {
    /// Every row as one binary frame (encoded on first use, then shared).
    pub fn full_frame(&self) -> bytes::Bytes {
        self.full
            .get_or_init(|| crate::stream::encode_frame(self, None, 0).into())
            .clone()
    }
}

/// The latest once-a-second status, as served.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StatusView {
    /// Wall seconds since the run started.
    pub elapsed_s: f64,
    /// The last frame.
    pub frame: u64,
    /// Simulated seconds.
    pub sim_time_s: f64,
    /// Aircraft flown.
    pub aircraft: usize,
    /// Frames per wall second.
    pub rate_hz: f64,
    /// Mean frame time, ms.
    pub frame_ms: f64,
    /// Deadline misses since the start.
    pub deadline_misses: u64,
    /// Whether the run is paused.
    pub paused: bool,
    /// Whether the run has ended.
    pub ended: bool,
}

impl From<&Status> for StatusView {
    fn from(s: &Status) -> StatusView {
        StatusView {
            elapsed_s: s.elapsed_s,
            frame: s.frame,
            sim_time_s: s.sim_time_s,
            aircraft: s.aircraft,
            rate_hz: s.rate_hz,
            frame_ms: s.frame_ms_mean,
            deadline_misses: s.deadline_misses,
            paused: s.paused,
            ended: false,
        }
    }
}

/// The answer to one command, as clients see it.
#[derive(Clone, Debug, Serialize)]
pub struct AckView {
    /// The command's id.
    pub id: u64,
    /// The aircraft.
    pub callsign: String,
    /// The frame it took effect (or was refused) at.
    pub frame: u64,
    /// `applied` or `refused`.
    pub outcome: &'static str,
    /// Why it was refused.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<&CommandAck> for AckView {
    fn from(a: &CommandAck) -> AckView {
        AckView {
            id: a.id,
            callsign: a.callsign.clone(),
            frame: a.frame,
            outcome: if a.outcome.is_ok() {
                "applied"
            } else {
                "refused"
            },
            reason: a.outcome.as_ref().err().map(|r| r.to_string()),
        }
    }
}

/// A command accepted by the web, waiting for the simulation server.
pub(crate) struct Submitted {
    pub callsign: String,
    pub instruction: Instruction,
    /// Gets the acknowledgement.
    pub ack: oneshot::Sender<AckView>,
}

/// The scenario the web serves now: replaced whole when the operator loads another.
pub struct Loaded {
    /// Its catalog.
    pub catalog: Catalog,
    pub(crate) json: bytes::Bytes,
    pub(crate) by_callsign: HashMap<String, usize>,
}

impl Loaded {
    fn new(catalog: Catalog) -> Arc<Loaded> {
        let by_callsign = catalog
            .aircraft
            .iter()
            .map(|a| (a.callsign.clone(), a.index as usize))
            .collect();
        let json = serde_json::to_vec(&catalog)
            .expect("a catalog serialises")
            .into();
        Arc::new(Loaded {
            catalog,
            json,
            by_callsign,
        })
    }
}

/// Shared by the web's tasks and the simulation's observer.
pub struct Hub {
    loaded: parking_lot::RwLock<Arc<Loaded>>,
    /// The scenarios the operator may load (name, description); empty when this run
    /// cannot change its scenario.
    pub(crate) scenarios: Vec<(String, String)>,
    pub(crate) snapshot: watch::Sender<Arc<Snapshot>>,
    pub(crate) status: watch::Sender<StatusView>,
    /// JSON text for every client: acknowledgements and statuses.
    pub(crate) events: broadcast::Sender<Arc<str>>,
    pub(crate) submitted: crossbeam_channel::Sender<Submitted>,
    pub(crate) controls: crossbeam_channel::Sender<Control>,
    /// Rejections per rule and the streams' drops.
    pub counters: Counters,
    clearances: std::sync::atomic::AtomicU64,
}

impl Hub {
    /// The next clearance's number (from 1).
    pub(crate) fn next_clearance(&self) -> u64 {
        self.clearances
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1
    }

    /// A hub for `catalog`'s run, whose controls go to `controls`; the receiver is
    /// the observer's. `scenarios`: what the operator may load instead.
    pub(crate) fn new(
        catalog: Catalog,
        scenarios: Vec<(String, String)>,
        controls: crossbeam_channel::Sender<Control>,
    ) -> (Arc<Hub>, crossbeam_channel::Receiver<Submitted>) {
        let (submitted, incoming) = crossbeam_channel::unbounded();
        let hub = Hub {
            loaded: parking_lot::RwLock::new(Loaded::new(catalog)),
            scenarios,
            snapshot: watch::channel(Arc::new(Snapshot::default())).0,
            status: watch::channel(StatusView::default()).0,
            events: broadcast::channel(256).0,
            submitted,
            controls,
            counters: Counters::default(),
            clearances: Default::default(),
        };
        (Arc::new(hub), incoming)
    }

    /// The scenario served now.
    pub fn loaded(&self) -> Arc<Loaded> {
        self.loaded.read().clone()
    }

    /// The run now flies `catalog`'s scenario (the caller started it): the pages are
    /// told to fetch the new catalog, and no frame of the old one is served again.
    pub fn replace_catalog(&self, catalog: Catalog) {
        let (name, aircraft) = (catalog.scenario.clone(), catalog.aircraft.len());
        *self.loaded.write() = Loaded::new(catalog);
        self.snapshot.send_replace(Arc::new(Snapshot::default()));
        self.event(
            "scenario",
            &serde_json::json!({ "scenario": name, "aircraft": aircraft }),
        );
    }

    /// Checks an operator's scenario to load: one this run offers.
    pub(crate) fn check_scenario(&self, name: &str) -> Result<(), Rejection> {
        if self.scenarios.is_empty() {
            return Err(Rejection::whole(
                409,
                "cannot_load",
                "this run cannot change its scenario (glidepath tg --web on the inproc transport can)",
            ));
        }
        if self.scenarios.iter().any(|(n, _)| n == name) {
            return Ok(());
        }
        let names: Vec<&str> = self.scenarios.iter().map(|(n, _)| n.as_str()).collect();
        Err(Rejection::bad(
            "unknown_scenario",
            "/value",
            format!("no scenario {name:?} (one of: {})", names.join(", ")),
        ))
    }

    /// Checks what a schema cannot: that the aircraft exists and the value is in its
    /// type's envelope and flight plan.
    pub fn check_command(&self, callsign: &str, i: &Instruction) -> Result<(), Rejection> {
        let loaded = self.loaded();
        let Some(&index) = loaded.by_callsign.get(callsign) else {
            return Err(Rejection::bad(
                "unknown_aircraft",
                "/callsign",
                format!(
                    "no aircraft {callsign} in scenario {}",
                    loaded.catalog.scenario
                ),
            ));
        };
        let a = &loaded.catalog.aircraft[index];
        let envelope = |reason: String| Err(Rejection::bad("envelope", "/value", reason));
        match i {
            Instruction::Altitude { ft } if *ft > a.ceiling_ft => envelope(format!(
                "{ft} ft is above the {} ceiling of {} ft",
                a.type_code, a.ceiling_ft
            )),
            Instruction::Speed { kt } if *kt < a.min_speed_kt || *kt > a.max_speed_kt => {
                envelope(format!(
                    "{kt} kt is outside the {} speed envelope {}–{} kt",
                    a.type_code, a.min_speed_kt, a.max_speed_kt
                ))
            }
            Instruction::DirectTo { waypoint } if !a.waypoints.iter().any(|w| w.0 == *waypoint) => {
                Err(Rejection::bad(
                    "unknown_waypoint",
                    "/value",
                    format!("{callsign}'s flight plan has no waypoint {waypoint}"),
                ))
            }
            _ => Ok(()),
        }
    }

    /// Sends a checked command to the simulation; the receiver gets its
    /// acknowledgement when a frame has taken it.
    pub(crate) fn submit(
        &self,
        callsign: String,
        instruction: Instruction,
    ) -> Result<oneshot::Receiver<AckView>, Rejection> {
        let (ack, rx) = oneshot::channel();
        self.submitted
            .send(Submitted {
                callsign,
                instruction,
                ack,
            })
            .map_err(|_| ended())?;
        Ok(rx)
    }

    /// Sends a control to the run.
    pub(crate) fn control(&self, c: Control) -> Result<(), Rejection> {
        self.controls.send(c).map_err(|_| ended())
    }

    pub(crate) fn event(&self, kind: &str, body: &impl Serialize) {
        let mut v = serde_json::to_value(body).unwrap_or_default();
        v["type"] = kind.into();
        // No receiver is not an error: nobody is watching.
        let _ = self.events.send(Arc::from(v.to_string()));
    }
}

fn ended() -> Rejection {
    Rejection::whole(503, "ended", "the simulation has ended")
}

/// A rate limit that tolerates jitter: a token bucket holding at most two frames'
/// worth, refilled at `rate` a second. A clock that ticks at exactly the rate but
/// unevenly (frames of varying cost) never loses a frame to it, and the long-run rate
/// never exceeds `rate`.
#[derive(Clone, Debug)]
pub(crate) struct Pacer {
    rate: f64,
    tokens: f64,
    at: Instant,
}

impl Pacer {
    pub(crate) fn new(rate: f64) -> Pacer {
        Pacer {
            rate: rate.max(0.01),
            tokens: 1.0,
            at: Instant::now(),
        }
    }

    fn refill(&mut self) {
        let now = Instant::now();
        self.tokens = (self.tokens + (now - self.at).as_secs_f64() * self.rate).min(2.0);
        self.at = now;
    }

    /// Whether one may go now (and if so, counts it).
    pub(crate) fn take(&mut self) -> bool {
        self.refill();
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// How long until one may go.
    pub(crate) fn wait(&mut self) -> Duration {
        self.refill();
        Duration::from_secs_f64(((1.0 - self.tokens) / self.rate).max(0.0))
    }

    /// The rate.
    pub(crate) fn period(&self) -> Duration {
        Duration::from_secs_f64(1.0 / self.rate)
    }
}

/// The simulation side: called by the run after every frame, on the run's thread.
/// It hands the web's commands to the server, returns the acknowledgements, and
/// publishes a snapshot at most `max_rate_hz` times a second.
pub struct TgObserver {
    hub: Arc<Hub>,
    incoming: crossbeam_channel::Receiver<Submitted>,
    waiting: HashMap<u64, oneshot::Sender<AckView>>,
    pacer: Pacer,
    last_frame: u64,
    seq: u64,
}

impl TgObserver {
    pub(crate) fn new(
        hub: Arc<Hub>,
        incoming: crossbeam_channel::Receiver<Submitted>,
        max_rate_hz: f64,
    ) -> TgObserver {
        TgObserver {
            hub,
            incoming,
            waiting: HashMap::new(),
            pacer: Pacer::new(max_rate_hz.max(0.1)),
            last_frame: u64::MAX,
            seq: 0,
        }
    }

    /// Takes the web's commands, answers the acknowledgements that arrived (returned
    /// too, for the caller to print), and publishes a snapshot when one is due.
    pub fn on_tick(&mut self, server: &mut SimulationServer, sim_time_s: f64) -> Vec<CommandAck> {
        for s in self.incoming.try_iter() {
            let id = server.command(&s.callsign, s.instruction);
            self.waiting.insert(id, s.ack);
        }
        let acks = server.take_acks();
        for a in &acks {
            let view = AckView::from(a);
            self.hub.event("ack", &view);
            if let Some(tx) = self.waiting.remove(&a.id) {
                // The asker may have given up waiting; the event still went out.
                let _ = tx.send(view);
            }
        }
        if server.frame() != self.last_frame && self.pacer.take() {
            self.publish(server, sim_time_s);
        }
        acks
    }

    fn publish(&mut self, server: &SimulationServer, sim_time_s: f64) {
        self.seq += 1;
        let rows = server
            .tracks()
            .iter()
            .map(|t| Row {
                lat: t.state.lat_deg as f32,
                lon: t.state.lon_deg as f32,
                alt_ft: t.state.alt_ft as f32,
                gs_kt: t.state.gs_kt as f32,
                heading_deg: t.state.heading_deg as f32,
                vs_fpm: t.state.vs_fpm as f32,
            })
            .collect();
        self.hub.snapshot.send_replace(Arc::new(Snapshot {
            seq: self.seq,
            frame: server.frame(),
            sim_time_s,
            rows,
            full: Default::default(),
        }));
        self.last_frame = server.frame();
    }

    /// Publishes a status (call once per status period).
    pub fn on_status(&mut self, status: &Status) {
        let view = StatusView::from(status);
        self.hub.event("status", &view);
        self.hub.status.send_replace(view);
    }

    /// The caller now runs `catalog`'s scenario on a new simulation server (after a
    /// [`Control::Load`]): commands still waiting for the old one are answered with
    /// `ended`, and the pages fetch the new catalog.
    pub fn load(&mut self, catalog: Catalog) {
        self.waiting.clear();
        self.last_frame = u64::MAX;
        self.hub.replace_catalog(catalog);
    }

    /// Tells the clients the run has ended; commands still waiting are answered
    /// with `ended`.
    pub fn finish(&mut self) {
        let mut view = self.hub.status.borrow().clone();
        view.ended = true;
        self.hub.event("status", &view);
        self.hub.status.send_replace(view);
        self.waiting.clear();
    }
}

/// An observer that only serves the web (for a run without status printing).
impl Observer for TgObserver {
    fn status(&mut self, status: &Status, _server: &mut SimulationServer) {
        self.on_status(status);
    }

    fn tick(&mut self, server: &mut SimulationServer, _: Option<&FrameReport>, sim_time_s: f64) {
        self.on_tick(server, sim_time_s);
    }
}

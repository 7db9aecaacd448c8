//! The performance monitor block: message lengths, per-second frequencies, latency
//! T_S − T_P and counts (lost, duplicated, malformed), for the report's tables.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hash, Hasher};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use glidepath::stats::Recorder;
use glidepath::{Callback, Federate, ParameterHandle};

use super::block::{advance, enable_time, Component, Linked};
use super::flights::{Flights, Prehashed};
use super::{
    BlockOutcome, Codec, Context, Latency, MonitorStats, Progress, SimulationState, Sndem,
    MONITOR_LOOKAHEAD,
};
use crate::layout::Block;
use crate::report::SecondStats;
use crate::track::Track;

/// The performance monitor: message lengths, per-second frequencies, latency, counts.
pub(super) struct MonitorBlock {
    name: String,
    day_start_ms: i64,
    end: u32,
    codec: Codec,
    sndem: Sndem,
    progress: Arc<Progress>,
    received: u64,
    malformed: u64,
    bytes: u64,
    lengths: Recorder,
    latency_us: Recorder,
    per_second: Vec<u32>,
    /// Distinct vehicle ids per simulated minute (hashes of the vehicle identifiers).
    minute_callsigns: Vec<u32>,
    /// The flights seen, for Figure 4.1(a)'s airborne count.
    flights: Flights,
    minute_seen: HashSet<u64, BuildHasherDefault<Prehashed>>,
    /// The track being decoded, reused message after message.
    scratch: Track,
    current_minute: u32,
    /// Per sender, the last sequence number seen: duplicates are counted, not hidden.
    last_seq: std::collections::HashMap<glidepath::FederateHandle, u64>,
    duplicated: u64,
    /// Names of the linked blocks, and their federates once known.
    sources: Vec<String>,
    linked: Linked,
    sector: Option<crate::layout::Sector>,
}

impl MonitorBlock {
    pub(super) fn new(block: &Block, ctx: &Context, sndem: Sndem) -> MonitorBlock {
        MonitorBlock {
            name: block.name.clone(),
            day_start_ms: ctx.day_start * 1000,
            end: ctx.end,
            codec: ctx.opts.codec,
            sndem,
            progress: ctx.progress.clone(),
            received: 0,
            malformed: 0,
            bytes: 0,
            lengths: Recorder::new(),
            latency_us: Recorder::new(),
            per_second: vec![0; ctx.end as usize],
            minute_callsigns: vec![0; (ctx.end as usize).div_ceil(60)],
            flights: Flights::default(),
            minute_seen: HashSet::default(),
            scratch: Track::default(),
            current_minute: 0,
            last_seq: Default::default(),
            duplicated: 0,
            sources: ctx.sources.clone(),
            linked: Linked::default(),
            sector: block.sector,
        }
    }

    fn receive(&mut self, cb: Callback) {
        let Callback::ReceiveInteraction {
            class,
            values,
            info,
            ..
        } = cb
        else {
            return;
        };
        if class != self.sndem.class || !self.linked.accepts(info.producer) {
            return;
        }
        let now_ns = glidepath::monotonic_now_ns();
        let last = self.last_seq.entry(info.producer).or_insert(0);
        if info.seq <= *last {
            self.duplicated += 1;
            return;
        }
        *last = info.seq;
        self.received += 1;
        self.progress.received.fetch_add(1, Ordering::Relaxed);
        let field = |p: ParameterHandle| values.iter().find(|(q, _)| *q == p).map(|(_, v)| v);
        let (Some(key), Some(message)) = (field(self.sndem.vid), field(self.sndem.message)) else {
            self.malformed += 1;
            return;
        };
        // "The length of a track message is the sum of the lengths of the key and the
        // payload" (memorandum, section 4): 7 + 200 bytes for Table 4.1's sample.
        let length = (key.len() + message.len()) as u64;
        self.bytes += length;
        self.lengths.record(length);
        self.latency_us
            .record(now_ns.saturating_sub(info.publish_time_ns) / 1000);
        if !self.codec.decode_into(message, &mut self.scratch) {
            self.malformed += 1;
            return;
        }
        let second = (self.scratch.time - self.day_start_ms).div_euclid(1000);
        if second >= 0 && (second as usize) < self.per_second.len() {
            let second = second as usize;
            self.per_second[second] += 1;
            let minute = (second / 60) as u32;
            if minute != self.current_minute {
                self.close_minute();
                self.current_minute = minute;
            }
            let mut h = std::collections::hash_map::DefaultHasher::new();
            self.scratch.vid.hash(&mut h);
            let vehicle = h.finish();
            self.minute_seen.insert(vehicle);
            self.flights.seen(vehicle, second as u32);
        }
    }

    fn close_minute(&mut self) {
        let m = self.current_minute as usize;
        if let Some(slot) = self.minute_callsigns.get_mut(m) {
            *slot = (*slot).max(self.minute_seen.len() as u32);
        }
        self.minute_seen.clear();
    }
}

impl Component for MonitorBlock {
    fn state(
        &mut self,
        state: SimulationState,
        f: &Federate,
        abort: &AtomicBool,
    ) -> Result<(), String> {
        match state {
            SimulationState::Startup => {
                super::sector::subscribe_tracks(f, self.sndem.class, self.sector.as_ref())
            }
            SimulationState::Initialization => {
                self.linked.learn(f, &self.sources)?;
                enable_time(f, abort, MONITOR_LOOKAHEAD, |cb| self.receive(cb))
            }
            SimulationState::Execution => {
                // The live view's latency is measured anew at most this often.
                const LATENCY_EVERY: Duration = Duration::from_millis(250);
                let mut measured = Instant::now();
                for t in 1..=self.end {
                    advance(f, abort, f64::from(t), &mut |cb| self.receive(cb))?;
                    self.progress
                        .monitor_second
                        .store(u64::from(t), Ordering::Relaxed);
                    // Granted t: the sources have passed t, so second t - 1 is whole.
                    let latency = (measured.elapsed() >= LATENCY_EVERY).then(|| {
                        measured = Instant::now();
                        Latency::of(&self.latency_us)
                    });
                    let closed = (t - 1) as usize;
                    self.progress.second_closed(
                        &self.name,
                        closed,
                        self.per_second.get(closed).copied().unwrap_or(0),
                        latency.flatten(),
                    );
                }
                self.close_minute();
                Ok(())
            }
            SimulationState::Shutdown => f.disable_time_regulation().map_err(|e| e.to_string()),
            _ => Ok(()),
        }
    }

    fn callback(&mut self, cb: Callback) {
        self.receive(cb);
    }

    fn outcome(self: Box<Self>) -> BlockOutcome {
        let mut frequencies = Recorder::new();
        for &n in &self.per_second {
            frequencies.record(u64::from(n));
        }
        let airborne = self.flights.airborne(self.per_second.len());
        let per_second = self
            .per_second
            .iter()
            .zip(airborne)
            .enumerate()
            .map(|(t, (&messages, flights))| SecondStats {
                t: t as u32,
                messages,
                flights,
                callsigns_in_minute: self.minute_callsigns.get(t / 60).copied().unwrap_or(0),
            })
            .collect();
        BlockOutcome::Monitor(Box::new(MonitorStats {
            received: self.received,
            duplicated: self.duplicated,
            malformed: self.malformed,
            bytes: self.bytes,
            lengths: self.lengths,
            frequencies,
            latency_us: self.latency_us,
            per_second,
        }))
    }
}

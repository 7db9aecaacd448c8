//! Moving aircraft between processing nodes while a target generator runs, between
//! two frames, so every aircraft takes every frame and its trajectory is the one it
//! would have had on its old node:
//!
//! - **a node joins**: the nodes with more than an even share hand their excess back
//!   (`TgRelease` → `TgHandover`, each aircraft's whole state bit for bit) and the
//!   server assigns them to the newcomer (`TgAssign`);
//! - **a node falls behind**: every [`Balance::every`] frames the server compares the
//!   nodes' compute times (each `TgFrameDone` carries its node's); when the slowest
//!   takes more than [`Balance::threshold`] longer than the fastest, aircraft move by
//!   the same hand-over so each node's share is proportional to its measured speed
//!   (aircraft stepped per unit of compute time) and the frame no longer waits for it;
//! - **a node is lost** ([`SimulationServer::fail_over`]): its aircraft continue on the
//!   least loaded nodes from their last published state.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use glidepath::Bytes;

use super::SimulationServer;
use crate::dynamics::Aircraft;
use crate::federation::{opaque, unicode, TgError};
use crate::wire::encode_assignment;

/// When the server moves aircraft off a node that falls behind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Balance {
    /// Frames over which each node's compute time is summed before the server decides:
    /// 120 (two seconds at 60 Hz), long enough that one descheduled frame is noise.
    pub every: u64,
    /// How much longer than the fastest node's the slowest node's compute time may be
    /// before aircraft move: 0.25 (25 %).
    pub threshold: f64,
    /// Below this mean compute time per frame on the slowest node nothing moves (it
    /// keeps up whatever the others do): 2 ms.
    pub min_compute: Duration,
}

impl Default for Balance {
    fn default() -> Balance {
        Balance {
            every: 120,
            threshold: 0.25,
            min_compute: Duration::from_millis(2),
        }
    }
}

impl SimulationServer {
    /// Gives the nodes that joined since the last frame an even share (see the module).
    pub(super) fn rebalance(&mut self) -> Result<(), TgError> {
        let joined = std::mem::take(&mut self.joined);
        let live: Vec<usize> = (0..self.nodes.len()).filter(|&n| self.alive[n]).collect();
        if joined.is_empty() || live.is_empty() {
            return Ok(());
        }
        let load = self.loads();
        let total: usize = live.iter().map(|&n| load[n]).sum();
        let share = total / live.len();
        // Newcomers take up to the share; old nodes give down to it, never take.
        let want: Vec<usize> = (0..self.nodes.len())
            .map(|n| {
                if joined.contains(&n) {
                    share
                } else {
                    load[n].min(share)
                }
            })
            .collect();
        if self.shift(&want)? {
            self.last_rebalance = Some("a node joined".into());
        }
        self.restart_window();
        Ok(())
    }

    /// Every [`Balance::every`] frames: moves aircraft off a node that falls behind
    /// the others (see the module). Nodes without aircraft are left to joins.
    pub(super) fn balance_for_speed(&mut self) -> Result<(), TgError> {
        let Some(b) = self.config.balance else {
            return Ok(());
        };
        if self.window_frames < b.every.max(1) {
            return Ok(());
        }
        let frames = self.window_frames as f64;
        let compute = self.node_compute_ns.clone();
        self.restart_window();
        let load = self.loads();
        let live: Vec<usize> = (0..self.nodes.len())
            .filter(|&n| self.alive[n] && load[n] > 0)
            .collect();
        if live.len() < 2 {
            return Ok(());
        }
        // Mean compute time per frame, ns.
        let mean = |n: usize| (compute[n] as f64 / frames).max(1.0);
        let slowest = live
            .iter()
            .copied()
            .max_by(|&a, &b| mean(a).total_cmp(&mean(b)));
        let fastest = live.iter().map(|&n| mean(n)).fold(f64::INFINITY, f64::min);
        let Some(slowest) = slowest else {
            return Ok(());
        };
        if mean(slowest) < b.min_compute.as_nanos() as f64
            || mean(slowest) <= fastest * (1.0 + b.threshold)
        {
            return Ok(());
        }
        // Shares proportional to speed (aircraft per ns of compute), by largest
        // remainder so they add up to the aircraft flown.
        let speed: Vec<f64> = live.iter().map(|&n| load[n] as f64 / mean(n)).collect();
        let total: usize = live.iter().map(|&n| load[n]).sum();
        let sum: f64 = speed.iter().sum();
        let ideal: Vec<f64> = speed.iter().map(|s| total as f64 * s / sum).collect();
        let mut want = load.clone();
        for (k, &n) in live.iter().enumerate() {
            want[n] = ideal[k].floor() as usize;
        }
        let mut short = total - live.iter().map(|&n| want[n]).sum::<usize>();
        let mut by_fraction: Vec<usize> = (0..live.len()).collect();
        by_fraction.sort_by(|&a, &b| {
            (ideal[b] - ideal[b].floor()).total_cmp(&(ideal[a] - ideal[a].floor()))
        });
        for k in by_fraction {
            if short == 0 {
                break;
            }
            want[live[k]] += 1;
            short -= 1;
        }
        if self.shift(&want)? {
            self.last_rebalance = Some(format!("{} fell behind", self.nodes[slowest]));
        }
        Ok(())
    }

    /// Aircraft flown by each node.
    fn loads(&self) -> Vec<usize> {
        let mut load = vec![0usize; self.nodes.len()];
        for &n in self.owner.values() {
            load[n] += 1;
        }
        load
    }

    /// Starts a new window of compute times (after any move: the shares changed).
    fn restart_window(&mut self) {
        self.window_frames = 0;
        self.node_compute_ns = vec![0; self.nodes.len()];
    }

    /// Moves aircraft so each live node flies `want[n]`: every node short of its
    /// share takes, in node order, from the most loaded node above its own, the
    /// aircraft that node got last (scenario order). Returns whether any moved.
    fn shift(&mut self, want: &[usize]) -> Result<bool, TgError> {
        let mut load = self.loads();
        let live: Vec<usize> = (0..self.nodes.len()).filter(|&n| self.alive[n]).collect();
        let mut order: Vec<usize> = (0..self.tracks.len()).collect();
        order.reverse();
        let mut moving: HashMap<usize, Vec<usize>> = HashMap::new(); // donor -> tracks
        let mut target: HashMap<String, usize> = HashMap::new(); // callsign -> taker
        for &j in &live {
            while load[j] < want[j] {
                let Some(donor) = live
                    .iter()
                    .copied()
                    .filter(|&n| load[n] > want[n])
                    .max_by_key(|&n| (load[n], std::cmp::Reverse(n)))
                else {
                    break;
                };
                let Some(&i) = order.iter().find(|&&i| {
                    self.owner.get(&self.tracks[i].callsign) == Some(&donor)
                        && !target.contains_key(&self.tracks[i].callsign)
                }) else {
                    break;
                };
                target.insert(self.tracks[i].callsign.clone(), j);
                moving.entry(donor).or_default().push(i);
                load[donor] -= 1;
                load[j] += 1;
            }
        }
        if target.is_empty() {
            return Ok(false);
        }
        let mut donors: Vec<usize> = moving.keys().copied().collect();
        donors.sort_unstable();
        let release = self.h.release.params;
        for &d in &donors {
            let names: Vec<&str> = moving[&d]
                .iter()
                .map(|&i| self.tracks[i].callsign.as_str())
                .collect();
            self.fed.send_interaction(
                self.h.release.class,
                [
                    (release[0], unicode(&self.nodes[d])),
                    (release[1], opaque(names.join("\n").into_bytes())),
                ],
                Bytes::new(),
            )?;
        }
        // The donors answer before they take another step: wait for every handover.
        let start = Instant::now();
        let deadline = start + self.config.frame_timeout;
        let mut handed: Vec<Aircraft> = Vec::new();
        let mut waiting: Vec<String> = donors.iter().map(|&d| self.nodes[d].clone()).collect();
        while !waiting.is_empty() {
            for (donor, aircraft) in std::mem::take(&mut self.handovers) {
                if let Some(k) = waiting.iter().position(|w| *w == donor) {
                    waiting.swap_remove(k);
                    handed.extend(aircraft);
                }
            }
            if waiting.is_empty() {
                break;
            }
            let now = Instant::now();
            match (now < deadline)
                .then(|| self.fed.next_callback(deadline - now))
                .flatten()
            {
                Some(cb) => self.handle_or_count(cb)?,
                None => {
                    return Err(TgError::NodeSilent {
                        node: waiting.join(", "),
                        frame: self.frame,
                        waited_s: start.elapsed().as_secs_f64(),
                    })
                }
            }
        }
        let mut per_node: HashMap<usize, Vec<Aircraft>> = HashMap::new();
        for a in handed {
            if let Some(j) = target.remove(&a.callsign) {
                self.owner.insert(a.callsign.clone(), j);
                if let Some(&i) = self.by_callsign.get(&a.callsign) {
                    self.tracks[i].node = self.nodes[j].clone();
                }
                per_node.entry(j).or_default().push(a);
            }
        }
        self.assign_to(per_node)?;
        self.rebalanced += 1;
        Ok(true)
    }

    /// Takes node `k` as lost: its updates are ignored from now on, it is told to
    /// release its aircraft (in case it is only slow), and each of its aircraft
    /// continues on the least loaded live node from its last published state, with
    /// the commands it had taken. Returns the node's name and how many moved.
    pub(super) fn fail_over(&mut self, k: usize) -> Result<(String, usize), TgError> {
        self.alive[k] = false;
        let name = self.nodes[k].clone();
        if !self.alive.iter().any(|a| *a) {
            return Err(TgError::NodeSilent {
                node: name,
                frame: self.frame,
                waited_s: 0.0,
            });
        }
        let moving: Vec<usize> = (0..self.tracks.len())
            .filter(|&i| self.owner.get(&self.tracks[i].callsign) == Some(&k))
            .collect();
        let release = self.h.release.params;
        let names: Vec<&str> = moving
            .iter()
            .map(|&i| self.tracks[i].callsign.as_str())
            .collect();
        self.fed.send_interaction(
            self.h.release.class,
            [
                (release[0], unicode(&name)),
                (release[1], opaque(names.join("\n").into_bytes())),
            ],
            Bytes::new(),
        )?;
        let mut per_node: HashMap<usize, Vec<Aircraft>> = HashMap::new();
        let mut load: Vec<usize> = (0..self.nodes.len())
            .map(|n| {
                if self.alive[n] {
                    self.owner.values().filter(|o| **o == n).count()
                } else {
                    usize::MAX
                }
            })
            .collect();
        for &i in &moving {
            let target = (0..load.len())
                .min_by_key(|&n| load[n])
                .expect("a live node");
            load[target] += 1;
            let t = &self.tracks[i];
            let mut a = self.originals[i].clone();
            a.resume_from(&t.state, self.wind, self.frame.saturating_sub(1));
            for instruction in self.applied.get(&t.callsign).into_iter().flatten() {
                instruction.apply(&mut a);
            }
            self.owner.insert(t.callsign.clone(), target);
            self.tracks[i].node = self.nodes[target].clone();
            per_node.entry(target).or_default().push(a);
        }
        self.assign_to(per_node)?;
        self.restart_window();
        Ok((name, moving.len()))
    }

    /// Sends each node its aircraft (`TgAssign`, in batches), nodes in order.
    pub(super) fn assign_to(
        &mut self,
        per_node: HashMap<usize, Vec<Aircraft>>,
    ) -> Result<(), TgError> {
        let mut targets: Vec<_> = per_node.into_iter().collect();
        targets.sort_by_key(|(n, _)| *n);
        for (n, aircraft) in targets {
            for batch in aircraft.chunks(self.config.assign_batch.max(1)) {
                let p = self.h.assign.params;
                self.fed.send_interaction(
                    self.h.assign.class,
                    [
                        (p[0], unicode(&self.nodes[n])),
                        (p[1], opaque(encode_assignment(self.wind, batch))),
                    ],
                    Bytes::new(),
                )?;
            }
        }
        Ok(())
    }
}

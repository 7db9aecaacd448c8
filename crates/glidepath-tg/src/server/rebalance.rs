//! Rebalancing when a processing node joins a running target generator: between two
//! frames, the nodes with more than an even share hand their excess aircraft back
//! (`TgRelease` → `TgHandover`, each aircraft's whole state bit for bit) and the
//! server assigns them to the newcomer (`TgAssign`), so every aircraft takes every
//! frame and its trajectory is the one it would have had on its old node.

use std::collections::HashMap;
use std::time::Instant;

use glidepath::Bytes;

use super::SimulationServer;
use crate::dynamics::Aircraft;
use crate::federation::{opaque, unicode, TgError};

impl SimulationServer {
    /// Moves aircraft to the nodes that joined since the last frame (see the module).
    pub(super) fn rebalance(&mut self) -> Result<(), TgError> {
        let joined = std::mem::take(&mut self.joined);
        let live: Vec<usize> = (0..self.nodes.len()).filter(|&n| self.alive[n]).collect();
        if joined.is_empty() || live.is_empty() {
            return Ok(());
        }
        let mut load = vec![0usize; self.nodes.len()];
        for &n in self.owner.values() {
            load[n] += 1;
        }
        let total: usize = live.iter().map(|&n| load[n]).sum();
        let share = total / live.len();
        // Each newcomer takes from the most loaded old node, the aircraft that node
        // got last (scenario order), until it has its share.
        let mut order: Vec<usize> = (0..self.tracks.len()).collect();
        order.reverse();
        let mut moving: HashMap<usize, Vec<usize>> = HashMap::new(); // donor -> tracks
        let mut target: HashMap<String, usize> = HashMap::new(); // callsign -> newcomer
        for &j in &joined {
            while load[j] < share {
                let Some(donor) = live
                    .iter()
                    .copied()
                    .filter(|n| !joined.contains(n) && load[*n] > share)
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
            return Ok(());
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
        Ok(())
    }
}

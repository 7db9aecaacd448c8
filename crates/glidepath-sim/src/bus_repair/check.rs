//! What the repair simulator checks: each hand-out in order and once, and at the end
//! every frame accounted for (see the parent module).

use glidepath_bus::frame::DataFrame;

use super::{RepairFailure, Sim};

impl Sim {
    pub(super) fn hand_out(&mut self, n: usize, f: &DataFrame) -> Result<(), RepairFailure> {
        if f.seq == 0 {
            return Ok(());
        }
        self.out.handed_out += 1;
        let last = self.nodes[n]
            .handed
            .get(&f.sender)
            .and_then(|h| h.last().copied());
        if let Some(last) = last.filter(|&last| f.seq <= last) {
            return Err(self.fail(format!(
                "node {n} handed out {}'s frame {} after {last}",
                f.sender, f.seq
            )));
        }
        self.nodes[n]
            .handed
            .entry(f.sender)
            .or_default()
            .push(f.seq);
        Ok(())
    }

    /// Once the network is quiet: every frame from the first handed out on is handed
    /// out or counted lost; none lost when windows never forget.
    pub(super) fn end_checks(&self) -> Result<(), RepairFailure> {
        for (n, node) in self.nodes.iter().enumerate() {
            if !node.alive {
                continue;
            }
            if node.repairing.is_some() || !node.inbox.is_empty() {
                return Err(self.fail(format!("node {n} is still busy at the end")));
            }
            for (sender, handed) in &node.handed {
                let s = &self.nodes[self.nodes.iter().position(|x| x.id == *sender).unwrap()];
                let first = handed[0];
                let lost = node.lost.get(sender).copied().unwrap_or(0);
                let last = if s.alive {
                    s.next_seq
                } else {
                    handed.last().copied().unwrap_or(0).max(first)
                };
                let accounted = handed.len() as u64 + lost;
                let owed = last - first + 1;
                let short = if s.alive {
                    accounted != owed
                } else {
                    accounted < owed
                };
                if short {
                    return Err(self.fail(format!(
                        "node {n}: of {sender}'s frames {first}..={last}, {} handed out and \
                         {lost} counted lost (it expects {:?} next)",
                        handed.len(),
                        node.order.senders()
                    )));
                }
                if !self.forgetting && s.alive && lost > 0 {
                    return Err(self.fail(format!(
                        "node {n} counted {lost} of {sender}'s frames lost, which its \
                         window still held"
                    )));
                }
            }
        }
        Ok(())
    }
}

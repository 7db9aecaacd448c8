//! GALT from time statuses alone: no LBTS exchange.
//!
//! The thesis (section 5.8, 6.3) measured 14 grants/s at 8 federates because every
//! grant waited for an N log N butterfly of LBTS messages. Here each regulating
//! federate's [`crate::TimeStatus`] travels on the same per-sender FIFO path as its
//! time-stamped messages, so a receiver that holds a status knows every earlier
//! message from that sender has arrived. A federate therefore computes GALT from the
//! statuses it already holds, one hop after the last promise.
//!
//! Each status gives an unconditional promise (nothing will ever be sent earlier). A
//! federate waiting in a next message request also gives a conditional one: "I will
//! be granted at `next` unless an earlier message reaches me". The conditional bound
//! is only used when the holder can tell that no time-stamped message is in flight
//! towards that federate (its status reports having processed every peer's latest
//! time-stamped message); then the bounds of all waiting federates form a min-plus
//! system (`B_j = min(next_j + L_j, min_k B_k + L_j)`) solved here like a shortest
//! path. This removes the lookahead creep of plain null messages, and lets zero
//! lookahead federations progress through the "available" variants.

use crate::types::{FederateHandle, LogicalTime, LogicalTimeInterval};

/// One regulating federate as seen by the federate computing GALT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RegulatorView {
    pub federate: FederateHandle,
    /// Unconditional promise: it will never send a time stamp below this.
    pub promise: LogicalTime,
    pub lookahead: LogicalTimeInterval,
    /// `next + lookahead` when it waits in a next message request and no message can
    /// be in flight towards it; `None` otherwise.
    pub conditional: Option<LogicalTime>,
}

/// GALT for `me`: the lowest time stamp any other regulating federate may still send.
///
/// `views` may contain `me` itself (when `me` regulates): its own future messages can
/// come back through others, which the min-plus closure accounts for. Returns
/// `+inf` when no other regulating federate exists.
pub fn galt_bound(me: FederateHandle, views: &[RegulatorView]) -> LogicalTime {
    let others = || views.iter().filter(|v| v.federate != me);
    // Without a conditional bound every federate's bound is its promise: the
    // closure below would find exactly that, in n^2 steps instead of n (a federation
    // in time advance requests, the common lock-step case).
    if views.iter().all(|v| v.conditional.is_none()) {
        return others().fold(LogicalTime::INFINITY, |g, v| g.min(v.promise));
    }
    // Per view: its distance (the bound before the unconditional promise applies),
    // which becomes its bound once settled, and whether it is settled. One
    // allocation; n is the number of regulators.
    let mut nodes: Vec<(LogicalTime, bool)> = views
        .iter()
        .map(|v| (v.conditional.unwrap_or(v.promise), false))
        .collect();
    let n = nodes.len();
    for _ in 0..n {
        let mut best: Option<usize> = None;
        for j in 0..n {
            if !nodes[j].1 && best.is_none_or(|b| nodes[j].0 < nodes[b].0) {
                best = Some(j);
            }
        }
        let Some(k) = best else { break };
        let bound = nodes[k].0.max(views[k].promise);
        nodes[k] = (bound, true);
        for j in 0..n {
            if !nodes[j].1 && views[j].conditional.is_some() {
                let via = bound.plus(views[j].lookahead);
                if via < nodes[j].0 {
                    nodes[j].0 = via;
                }
            }
        }
    }
    views
        .iter()
        .zip(&nodes)
        .filter(|(v, _)| v.federate != me)
        .fold(LogicalTime::INFINITY, |g, (_, (bound, _))| g.min(*bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(x: f64) -> LogicalTime {
        LogicalTime::new(x).unwrap()
    }
    fn l(x: f64) -> LogicalTimeInterval {
        LogicalTimeInterval::new(x).unwrap()
    }
    fn v(f: u32, promise: f64, la: f64, cond: Option<f64>) -> RegulatorView {
        RegulatorView {
            federate: FederateHandle(f),
            promise: t(promise),
            lookahead: l(la),
            conditional: cond.map(t),
        }
    }

    #[test]
    fn no_other_regulator_means_infinity() {
        assert_eq!(
            galt_bound(FederateHandle(1), &[v(1, 5.0, 1.0, None)]),
            LogicalTime::INFINITY
        );
        assert_eq!(galt_bound(FederateHandle(1), &[]), LogicalTime::INFINITY);
    }

    #[test]
    fn unconditional_promises_give_the_minimum() {
        let views = [
            v(1, 5.0, 1.0, None),
            v(2, 7.0, 1.0, None),
            v(3, 3.0, 1.0, None),
        ];
        assert_eq!(galt_bound(FederateHandle(1), &views), t(3.0));
        assert_eq!(galt_bound(FederateHandle(3), &views), t(5.0));
    }

    #[test]
    fn conditional_bounds_jump_past_creep() {
        // Both wait for time 100 with lookahead 1 and nothing queued: without the
        // conditional bound GALT would creep by one lookahead per exchange.
        let views = [v(1, 2.0, 1.0, Some(101.0)), v(2, 2.0, 1.0, Some(101.0))];
        assert_eq!(galt_bound(FederateHandle(1), &views), t(101.0));
    }

    #[test]
    fn a_lower_next_event_propagates_through_lookahead() {
        // Federate 3 will be granted at 10 and may then send at 12; federate 2 may then
        // be granted at 12 and send at 13.
        let views = [
            v(1, 0.0, 1.0, Some(51.0)),
            v(2, 0.0, 1.0, Some(51.0)),
            v(3, 0.0, 2.0, Some(12.0)),
        ];
        assert_eq!(galt_bound(FederateHandle(1), &views), t(12.0));
        assert_eq!(galt_bound(FederateHandle(3), &views), t(13.0));
    }

    #[test]
    fn an_unconditional_promise_is_never_lowered() {
        let views = [v(1, 20.0, 0.0, Some(5.0)), v(2, 1.0, 0.0, None)];
        assert_eq!(galt_bound(FederateHandle(2), &views), t(20.0));
    }
}

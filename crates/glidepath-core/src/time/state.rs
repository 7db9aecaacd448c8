//! One federate's time-management state: modes, the advance it waits for, the
//! time-stamp-order queue, the statuses of its peers, and why a status is published.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use crate::message::TimeStatus;
use crate::message::{Advance, Body, Regulation};
use crate::types::{FederateHandle, LogicalTime, LogicalTimeInterval};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Constrained {
    Off,
    Pending,
    On,
}

/// A time-stamped message waiting in the TSO queue, ordered by (time, sender, seq).
#[derive(Debug)]
pub(crate) struct Queued {
    pub(crate) time: LogicalTime,
    pub(crate) sender: FederateHandle,
    pub(crate) seq: u64,
    pub(crate) publish_time_ns: u64,
    pub(crate) body: Body,
}
impl PartialEq for Queued {
    fn eq(&self, o: &Self) -> bool {
        self.key() == o.key()
    }
}
impl Eq for Queued {}
impl PartialOrd for Queued {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Queued {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key().cmp(&o.key())
    }
}
impl Queued {
    pub(crate) fn key(&self) -> (LogicalTime, FederateHandle, u64) {
        (self.time, self.sender, self.seq)
    }
}

/// Why a time status is published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum StatusReason {
    /// Our time state may have changed: sent only when it tells peers something new
    /// (see `LocalRti::tells_something_new`).
    Changed,
    /// A peer waits for a status from us (a newcomer, a federate enabling
    /// regulation): always sent.
    Answer,
    /// Our last status: we resign and send nothing after it.
    Resign,
}

pub(crate) struct PendingRegulation {
    pub(crate) status_seq: u64,
    pub(crate) waiting: BTreeSet<FederateHandle>,
    /// Lowest time this federate may take so it cannot send into anyone's past.
    pub(crate) earliest: LogicalTime,
}

/// Time management state of one federate.
pub(crate) struct TimeState {
    pub(crate) logical_time: LogicalTime,
    pub(crate) lookahead: LogicalTimeInterval,
    pub(crate) regulation: Regulation,
    pub(crate) constrained: Constrained,
    pub(crate) advance: Advance,
    pub(crate) last_grant_available: bool,
    /// Largest time stamp delivered in time-stamp order.
    pub(crate) delivered_up_to: LogicalTime,
    /// Highest promise ever published: promises never move backwards.
    pub(crate) promise_floor: LogicalTime,
    pub(crate) last_tso_seq: u64,
    /// `last_tso_seq` as published in our last status: peers know of our time-stamped
    /// messages up to this one.
    pub(crate) announced_tso_seq: u64,
    /// `seen` as published in our last status (its listed entries).
    pub(crate) published_seen: HashMap<FederateHandle, u64>,
    /// `finished_below` as published in our last status.
    pub(crate) published_finished_below: FederateHandle,
    /// Our last published status, so one that promises nothing new is not sent again.
    pub(crate) last_status: Option<Arc<TimeStatus>>,
    /// `seq` of `last_status`.
    pub(crate) last_status_seq: u64,
    /// Latest status of every peer (seq, status).
    pub(crate) statuses: BTreeMap<FederateHandle, (u64, TimeStatus)>,
    /// Regulators announced by the executive whose status has not arrived yet.
    pub(crate) awaited_regulators: BTreeSet<FederateHandle>,
    pub(crate) queue: BinaryHeap<Reverse<Queued>>,
    pub(crate) pending_regulation: Option<PendingRegulation>,
    /// Peers whose pending regulation we have acknowledged.
    pub(crate) acked: HashSet<FederateHandle>,
    /// Resigned peers whose last status we have processed but whose last time-stamped
    /// message some member may not have processed yet: kept in `statuses` until every
    /// member's status says it has, then forgotten (see `forget_finished_peers`).
    pub(crate) resigned_pending: BTreeSet<FederateHandle>,
}
/// A snapshot of one federate's time state (see [`LocalRti::time_snapshot`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSnapshot {
    pub federate: FederateHandle,
    pub regulation: Regulation,
    pub constrained: bool,
    pub logical_time: LogicalTime,
    pub lookahead: LogicalTimeInterval,
    /// The unconditional promise it would publish now.
    pub promise: LogicalTime,
    /// Its advance, with `next` as of now for a next message request.
    pub advance: Advance,
    /// Constrained and waiting for a grant or for constrained mode.
    pub waits_on_galt: bool,
}

/// Whether a request for `target` may be granted under `galt`: strictly below it, or
/// at it for the "available" variants (messages at `target` may still arrive).
pub(crate) fn grant_allowed(target: LogicalTime, available: bool, galt: LogicalTime) -> bool {
    target < galt || (available && target <= galt)
}

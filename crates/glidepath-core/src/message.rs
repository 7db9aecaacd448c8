//! What travels between federates: topics, the envelope, and the time status that
//! carries each regulating federate's promise on the same ordered path as its data.

use std::sync::Arc;

use bytes::Bytes;

use crate::exec::Notification;
use crate::region::RegionSet;
use crate::types::{FederateHandle, LogicalTime, LogicalTimeInterval, ObjectInstanceHandle};
use crate::{
    AttributeHandle, InteractionClassHandle, ObjectClassHandle, OrderType, ParameterHandle,
    TransportationType,
};

/// A publish/subscribe topic inside one federation execution.
///
/// Data travels on class topics, so a transport routes it straight from sender to
/// subscribers without any relay. A subscriber to a class subscribes the topics of the
/// class and all its subclasses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Topic {
    /// Registrations, updates, deletions and update requests of one object class.
    ObjectClass(ObjectClassHandle),
    /// Interactions of one interaction class.
    InteractionClass(InteractionClassHandle),
    /// Time statuses of every federate; everyone subscribes.
    Time,
    /// Notifications of the federation execution; everyone subscribes.
    Federation,
    /// Messages addressed to one federate (for example provide-update requests).
    Federate(FederateHandle),
}

/// One message on the wire, before encoding.
///
/// `seq` numbers every envelope a federate sends, on every topic, from 1 upward. A
/// transport must deliver one sender's envelopes to one receiver in `seq` order
/// (per-sender FIFO across topics); the time management algorithm relies on it.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    pub sender: FederateHandle,
    pub seq: u64,
    /// Wall-clock publication time in nanoseconds, stamped by the driver (the core has no clock).
    pub publish_time_ns: u64,
    pub body: Body,
}

/// Attribute or parameter values: handle and opaque encoded bytes (cheap to clone).
pub type Values<H> = Arc<[(H, Bytes)]>;

/// The content of an [`Envelope`].
#[derive(Clone, Debug, PartialEq)]
pub enum Body {
    /// A new object instance (leads to discovery at subscribers).
    Register {
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        name: Arc<str>,
    },
    /// New values for some attributes of an instance.
    Update {
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        values: Values<AttributeHandle>,
        tag: Bytes,
        order: OrderType,
        transport: TransportationType,
        time: Option<LogicalTime>,
        /// The update regions it was sent with, filled for the attributes' available
        /// dimensions; `None` is the default region (overlaps every region).
        regions: Option<RegionSet>,
    },
    /// An interaction.
    Interaction {
        class: InteractionClassHandle,
        values: Values<ParameterHandle>,
        tag: Bytes,
        order: OrderType,
        transport: TransportationType,
        time: Option<LogicalTime>,
        /// The regions it was sent with, filled for the class's available dimensions;
        /// `None` is the default region.
        regions: Option<RegionSet>,
    },
    /// An instance was deleted.
    Delete {
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        tag: Bytes,
        order: OrderType,
        time: Option<LogicalTime>,
    },
    /// A request that owners provide current values.
    RequestUpdate {
        instance: Option<ObjectInstanceHandle>,
        class: ObjectClassHandle,
        attributes: Arc<[AttributeHandle]>,
        tag: Bytes,
        /// Request attribute value update with regions: only values whose update
        /// regions overlap these are wanted (filled for the attributes' available
        /// dimensions); `None`, every value.
        regions: Option<RegionSet>,
    },
    /// The sender's time status.
    TimeStatus(Arc<TimeStatus>),
    /// A notification from the federation execution.
    Exec(Notification),
    /// The sender has taken back its saved state in restore `epoch`: everything it
    /// sent before this is from before the restore, and its receivers drop it.
    Restored { epoch: u64 },
    /// The update regions the sender now uses for some attributes of an instance it
    /// owns, or (`owned` false) that it no longer owns them (data distribution
    /// management: what a receiver's attribute scope advisories follow). Sent only
    /// while some member has its attribute scope advisory switch on.
    UpdateRegions {
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        attributes: Arc<[AttributeHandle]>,
        /// Filled for the attributes' available dimensions; `None`, the default region.
        regions: Option<RegionSet>,
        owned: bool,
        /// What it travels by (filtered at the source like an update's regions): the
        /// new regions and the ones they replace, so every receiver whose scope may
        /// change hears of it; `None`, to every subscriber of the class.
        route: Option<RegionSet>,
    },
    /// The sender's attribute scope advisory switch: while on, owners tell it (with
    /// [`Body::UpdateRegions`]) when their update regions change. With `announce`,
    /// each owner also tells where everything it owns is now (routed by its regions:
    /// the sender hears of what overlaps its subscriptions).
    ScopeAdvisory { on: bool, announce: bool },
    /// To one federate (on its own topic): the sender has answered its
    /// [`Body::ScopeAdvisory`] with `announce`, in the envelopes from `first` on
    /// (routed by the asker's subscriptions as they are now): what it said of
    /// regions before `first` may be stale there.
    ScopeAnswered { first: u64 },
}

impl Body {
    /// The regions an update or interaction was sent with, or that a region notice
    /// travels by (`None`: the default region, or a body that carries none): what a
    /// transport filters by.
    pub fn regions(&self) -> Option<&RegionSet> {
        match self {
            Body::Update { regions, .. } | Body::Interaction { regions, .. } => regions.as_ref(),
            Body::UpdateRegions { route, .. } => route.as_ref(),
            _ => None,
        }
    }

    /// True for messages that go through the time-stamp-order queue when sent TSO.
    pub fn tso_time(&self) -> Option<LogicalTime> {
        match self {
            Body::Update {
                order: OrderType::TimeStamp,
                time,
                ..
            }
            | Body::Interaction {
                order: OrderType::TimeStamp,
                time,
                ..
            }
            | Body::Delete {
                order: OrderType::TimeStamp,
                time,
                ..
            } => *time,
            _ => None,
        }
    }
}

/// A federate's regulation state as seen by others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Regulation {
    Off,
    /// Enabling: every member must answer with its own status before the federate
    /// may send time-stamped messages.
    Pending,
    On,
}

/// The advance a federate is waiting for, if any.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Advance {
    /// Granted, not advancing.
    Idle,
    /// Time advance request (or TARA when `available`).
    Tar { time: LogicalTime, available: bool },
    /// Next message request (or NERA when `available`); `next` is the earlier of the
    /// requested time and the earliest queued time-stamped message when this status was sent.
    Ner {
        time: LogicalTime,
        next: LogicalTime,
        available: bool,
    },
}

/// A federate's time status.
///
/// It travels on the sender's ordered path, after every message it sent before, so
/// a receiver that has it knows every earlier time-stamped message from that sender
/// has already arrived: GALT needs no separate exchange (see [`crate::galt_bound`]).
#[derive(Clone, Debug, PartialEq)]
pub struct TimeStatus {
    pub regulation: Regulation,
    pub constrained: bool,
    pub logical_time: LogicalTime,
    /// Whether the last grant was one of the "available" variants (messages at
    /// `logical_time` may still arrive).
    pub last_grant_available: bool,
    pub lookahead: LogicalTimeInterval,
    /// The largest time stamp the sender has delivered in time-stamp order (it may
    /// be past `logical_time` while an advance is in progress). A federate enabling
    /// regulation starts after it, so nothing it sends lands behind delivered messages.
    pub delivered_up_to: LogicalTime,
    /// Unconditional lower bound on the time stamp of anything the sender will send.
    pub promise: LogicalTime,
    pub advance: Advance,
    /// `seq` of the sender's most recent time-stamped data message (0 if none).
    pub last_tso_seq: u64,
    /// For each peer, the `seq` of the last envelope the sender has processed from it,
    /// sorted by handle. Peers the sender is done with need not be listed: see
    /// `finished_below`.
    pub seen: Arc<[(FederateHandle, u64)]>,
    /// Every peer with a smaller handle that `seen` does not list has finished for the
    /// sender: it resigned, and the sender has processed the last envelope it sent (or
    /// it resigned before the sender joined). Such a peer reads as `u64::MAX`, so a
    /// status stays as small as the federation is now, not as large as every
    /// federate that ever joined it. `FederateHandle(0)` when nothing is summarised.
    pub finished_below: FederateHandle,
    /// The sender is resigning: it sends nothing after this status.
    pub resigned: bool,
}

impl TimeStatus {
    /// The `seq` of the last envelope the sender reports having processed from `k`:
    /// its entry in `seen`, else `u64::MAX` below `finished_below` (a finished peer),
    /// else 0. A `seen` out of order (a foreign peer) may read as 0, which only makes
    /// the sender's conditional bound untrusted: conservative, never unsafe.
    pub fn seen_from(&self, k: FederateHandle) -> u64 {
        match self.seen.binary_search_by_key(&k, |(h, _)| *h) {
            Ok(i) => self.seen[i].1,
            Err(_) if k < self.finished_below => u64::MAX,
            Err(_) => 0,
        }
    }
}

//! The local RTI component: one federate's declarations, known objects, time state and
//! pending callbacks, driven by calls and
//! incoming envelopes, emitting what the transport must do into an outbox.
//!
//! One type, [`LocalRti`], whose methods are cut along the HLA services: this file
//! holds the type, joining and sending; `federation`, `declaration`, `object`,
//! `ownership` and `ddm` (data distribution management) the services of those names,
//! `scope` the attribute scope advisories;
//! `incoming` what arrives from peers. Time management lives
//! next to the GALT closure in `crate::time`.

mod ddm;
mod declaration;

pub use ddm::AttributeRegions;
mod federation;
mod incoming;
mod mom;
mod object;
mod ownership;
mod save;
mod scope;

use crate::hash::{FastMap, FastSet};
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use crate::callback::Callback;
use crate::error::{FederationError, PeerError, RtiError};
use crate::exec::{ExecReply, ExecRequest, FederateInfo};
use crate::message::Topic;
use crate::message::{Advance, Body, Envelope, Regulation};
use crate::time::handles::HandleRanges;
use crate::time::state::*;
use crate::transport_error::TransportError;
use crate::types::{
    FederateHandle, FederationId, LogicalTime, LogicalTimeInterval, ObjectInstanceHandle,
};
use crate::{AttributeHandle, Fom, InteractionClassHandle, ObjectClassHandle};

/// What the core asks of the transport, in the order it must be done.
///
/// Every call and every incoming envelope appends to the core's outbox; whoever
/// drives the core takes the outputs ([`LocalRti::take_outputs`]) and carries them
/// out in order, outside any lock the core is kept under. The order is the
/// transport contract's: one sender's envelopes reach each receiver in the order
/// they were queued, across all topics.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    /// Publish an envelope on a topic of a federation.
    Publish {
        federation: FederationId,
        topic: Topic,
        envelope: Envelope,
    },
    /// Start receiving a topic of a federation.
    Subscribe {
        federation: FederationId,
        topic: Topic,
    },
    /// Stop receiving a topic of a federation.
    Unsubscribe {
        federation: FederationId,
        topic: Topic,
    },
    /// What this federate wants of a subscribed topic (data distribution
    /// management): only messages sent without regions or with regions overlapping
    /// these; `None`, everything. A transport may drop at the source what cannot
    /// interest the subscriber; one that does not filter ignores this.
    Interest {
        federation: FederationId,
        topic: Topic,
        regions: Option<crate::region::RegionSet>,
    },
}

/// The way to the executive: the only effect a core call waits for.
///
/// Contract: `request` first carries out `queued` in order, emptying it (so the
/// executive, and every peer, sees what the federate did before it asked), then asks
/// the [`crate::Executive`] hosting the federation and blocks until it answers;
/// notifications the request causes are published before the reply returns. Envelopes
/// published by one sender reach each subscribed receiver in publication order,
/// across all topics, and a sender does not receive its own envelopes.
pub trait Link {
    /// Carries out `queued`, then asks the executive.
    fn request(
        &mut self,
        queued: &mut Vec<Output>,
        request: ExecRequest,
    ) -> Result<ExecReply, RtiError>;
}

/// Counters a federate can read to see what went wrong without anything crashing.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LocalStats {
    pub received: u64,
    pub delivered: u64,
    /// Envelopes dropped because their sender's order was broken (duplicates).
    pub out_of_order: u64,
    /// Updates or deletes for instances this federate does not know.
    pub unknown_instance: u64,
    /// Messages about classes missing from the FOM.
    pub unknown_class: u64,
    /// Time-stamped messages below their sender's promise (delivered receive-order).
    pub broken_promises: u64,
    /// Data from federates that resigned before this one joined (dropped).
    pub from_departed: u64,
    /// Envelopes a peer sent before its restore marker, arriving after this
    /// federate restored (dropped: they belong to the state the restore left).
    pub from_before_restore: u64,
    /// Management object model interactions (`HLAsetTiming`) that could not be read.
    pub malformed_mom: u64,
    /// The last peer error seen, for logs.
    pub last_peer_error: Option<PeerError>,
}

/// An object instance this federate knows: registered here or discovered.
pub(crate) struct KnownInstance {
    /// The class it was registered as: its data travels on this class's topic.
    pub(crate) class: ObjectClassHandle,
    /// The class this federate knows it as: the registered class for its
    /// registrant, the subscribed class it was discovered as for the others.
    pub(crate) known_class: ObjectClassHandle,
    pub(crate) name: String,
    /// The attributes this federate owns. Changed only by the executive's replies
    /// and notifications, so it is never ahead of the executive's grant: the update
    /// path checks it without a round trip.
    pub(crate) owned: BTreeSet<AttributeHandle>,
    /// Attributes this federate waits to acquire.
    pub(crate) acquiring: BTreeSet<AttributeHandle>,
    /// Attributes this federate offers (negotiated divestiture).
    pub(crate) divesting: BTreeSet<AttributeHandle>,
}

impl KnownInstance {
    pub(crate) fn new(
        class: ObjectClassHandle,
        known_class: ObjectClassHandle,
        name: String,
    ) -> KnownInstance {
        KnownInstance {
            class,
            known_class,
            name,
            owned: BTreeSet::new(),
            acquiring: BTreeSet::new(),
            divesting: BTreeSet::new(),
        }
    }
}

/// One federate's local RTI component. No I/O and no clock: what it publishes and
/// subscribes waits in an outbox read with [`LocalRti::take_outputs`], callbacks in a
/// queue read with [`LocalRti::poll_callback`], and only the calls that must ask the
/// executive take a [`Link`].
pub struct LocalRti {
    pub(crate) federation: FederationId,
    pub(crate) federation_name: String,
    pub(crate) me: FederateHandle,
    pub(crate) name: String,
    pub(crate) fom: Arc<Fom>,
    pub(crate) seq: u64,
    pub(crate) resigned: bool,
    pub(crate) members: BTreeMap<FederateHandle, FederateInfo>,
    pub(crate) published_attributes: FastMap<ObjectClassHandle, BTreeSet<AttributeHandle>>,
    pub(crate) subscribed_attributes: FastMap<ObjectClassHandle, BTreeSet<AttributeHandle>>,
    pub(crate) published_interactions: FastSet<InteractionClassHandle>,
    pub(crate) subscribed_interactions: FastSet<InteractionClassHandle>,
    pub(crate) data_topics: BTreeSet<Topic>,
    /// The interest last told the transport for each data topic that has regions.
    pub(crate) topic_interest: BTreeMap<Topic, crate::region::RegionSet>,
    /// Every instance this federate registered or discovered, with what it owns of each.
    pub(crate) known: FastMap<ObjectInstanceHandle, KnownInstance>,
    pub(crate) announced: FastSet<String>,
    /// Federates that resigned before this one joined (smaller handles missing from
    /// the join reply). Their data was published before this federate could subscribe
    /// any data topic, so none of it is delivered, and peers are told (through `seen`)
    /// that nothing from them is in flight here.
    pub(crate) ghosts: HandleRanges,
    /// Peers that resigned after this federate joined and that it is done with: their
    /// last status processed, and (if they sent time-stamped messages) every member
    /// known to have processed those too. Nothing else is kept of them, so a long run
    /// with churn costs no memory per departed federate.
    pub(crate) finished: HandleRanges,
    pub(crate) last_seq_from: FastMap<FederateHandle, u64>,
    pub(crate) time: TimeState,
    pub(crate) callbacks: VecDeque<Callback>,
    pub(crate) stats: LocalStats,
    /// Data distribution management: this federate's regions.
    pub(crate) ddm: ddm::DdmState,
    /// What the transport must do next, in order ([`LocalRti::take_outputs`]).
    pub(crate) outbox: Vec<Output>,
    /// Federation save and restore at this federate.
    pub(crate) save: save::LocalSave,
    /// The management object model's part at this federate.
    pub(crate) mom: mom::MomState,
}

pub(crate) fn expect_ok(reply: ExecReply) -> Result<ExecReply, RtiError> {
    match reply {
        ExecReply::FederationError(e) => Err(e.into()),
        ExecReply::ObjectError(e) => Err(e.into()),
        ExecReply::SaveError(e) => Err(e.into()),
        other => Ok(other),
    }
}

pub(crate) fn unexpected(reply: &ExecReply) -> RtiError {
    RtiError::Link(TransportError::UnexpectedReply {
        what: "unexpected",
        reason: format!("{reply:?}"),
    })
}
impl LocalRti {
    /// Joins a federation execution: subscribes the federation-wide topics first (so no
    /// notification or time status published after the join is missed), then joins.
    pub fn join(
        link: &mut impl Link,
        federation_name: &str,
        federate_name: Option<&str>,
        federate_type: &str,
    ) -> Result<LocalRti, RtiError> {
        let mut outbox = Vec::new();
        let (federation, _) = match expect_ok(link.request(
            &mut outbox,
            ExecRequest::Lookup {
                name: federation_name.to_string(),
            },
        )?)? {
            ExecReply::Found { id, fom } => (id, fom),
            other => return Err(unexpected(&other)),
        };
        outbox.push(Output::Subscribe {
            federation,
            topic: Topic::Federation,
        });
        outbox.push(Output::Subscribe {
            federation,
            topic: Topic::Time,
        });
        let reply = link.request(
            &mut outbox,
            ExecRequest::Join {
                federation,
                federate_name: federate_name.map(str::to_string),
                federate_type: federate_type.to_string(),
            },
        );
        // On failure the caller closes its endpoint, which ends the two subscriptions.
        let reply = reply.and_then(expect_ok)?;
        let ExecReply::Joined {
            federate,
            fom,
            members,
            regulators,
        } = reply
        else {
            return Err(unexpected(&reply));
        };
        outbox.push(Output::Subscribe {
            federation,
            topic: Topic::Federate(federate),
        });
        let name = members
            .iter()
            .find(|m| m.handle == federate)
            .map(|m| m.name.clone())
            .unwrap_or_default();
        let representation = fom.time_representation;
        let mom_state = mom::MomState::new(&fom);
        let members_then: Vec<FederateHandle> = members.iter().map(|m| m.handle).collect();
        let ghosts = HandleRanges::below_except(federate.0, members.iter().map(|m| m.handle.0));
        Ok(LocalRti {
            federation,
            federation_name: federation_name.to_string(),
            me: federate,
            name,
            fom,
            seq: 0,
            resigned: false,
            members: members.into_iter().map(|m| (m.handle, m)).collect(),
            published_attributes: FastMap::default(),
            subscribed_attributes: FastMap::default(),
            published_interactions: FastSet::default(),
            subscribed_interactions: FastSet::default(),
            data_topics: BTreeSet::new(),
            topic_interest: BTreeMap::new(),
            known: FastMap::default(),
            announced: FastSet::default(),
            ghosts,
            finished: HandleRanges::default(),
            last_seq_from: FastMap::default(),
            time: TimeState {
                logical_time: LogicalTime::zero(representation),
                lookahead: LogicalTimeInterval::zero(representation),
                regulation: Regulation::Off,
                constrained: Constrained::Off,
                advance: Advance::Idle,
                // Nothing has been granted yet: time 0 is open to messages at 0.
                last_grant_available: true,
                delivered_up_to: LogicalTime::NEG_INFINITY,
                promise_floor: LogicalTime::NEG_INFINITY,
                last_tso_seq: 0,
                announced_tso_seq: 0,
                published_seen: HashMap::new(),
                published_finished_below: FederateHandle(0),
                last_status: None,
                last_status_seq: 0,
                statuses: BTreeMap::new(),
                // Every member, not only the regulators: one that stopped regulating
                // may still have time-stamped messages in flight to a waiting peer, and
                // only its status says how many (simulator seed 500137605).
                awaited_regulators: members_then
                    .into_iter()
                    .chain(regulators)
                    .filter(|r| *r != federate)
                    .collect(),
                queue: BinaryHeap::new(),
                pending_regulation: None,
                acked: HashSet::new(),
                resigned_pending: BTreeSet::new(),
            },
            callbacks: VecDeque::new(),
            stats: LocalStats::default(),
            ddm: ddm::DdmState::default(),
            outbox,
            save: save::LocalSave::default(),
            mom: mom_state,
        })
    }

    // ----- accessors -------------------------------------------------------------

    /// This federate's handle.
    pub fn handle(&self) -> FederateHandle {
        self.me
    }
    /// This federate's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// The federation's id at the host.
    pub fn federation(&self) -> FederationId {
        self.federation
    }
    /// The federation's name.
    pub fn federation_name(&self) -> &str {
        &self.federation_name
    }
    /// The merged FOM.
    pub fn fom(&self) -> &Arc<Fom> {
        &self.fom
    }
    /// The members this federate knows of.
    pub fn members(&self) -> impl Iterator<Item = &FederateInfo> {
        self.members.values()
    }
    /// Counters of dropped and suspicious input.
    pub fn stats(&self) -> &LocalStats {
        &self.stats
    }
    /// The next callback waiting for the federate.
    pub fn poll_callback(&mut self) -> Option<Callback> {
        let cb = self.callbacks.pop_front()?;
        self.mom.count_delivered(&cb);
        Some(cb)
    }
    /// How many callbacks are waiting.
    pub fn pending_callbacks(&self) -> usize {
        self.callbacks.len()
    }
    /// True when the transport has something to do ([`LocalRti::take_outputs`]).
    #[inline]
    pub fn has_outputs(&self) -> bool {
        !self.outbox.is_empty()
    }
    /// Moves what the transport must do, in order, to the end of `into`. Cheap when
    /// `into` is empty: the two buffers swap, so a driver that keeps one buffer
    /// allocates nothing in the steady state.
    #[inline]
    pub fn take_outputs(&mut self, into: &mut Vec<Output>) {
        if into.is_empty() {
            std::mem::swap(&mut self.outbox, into);
        } else {
            into.append(&mut self.outbox);
        }
    }
    /// True once resigned.
    pub fn is_resigned(&self) -> bool {
        self.resigned
    }

    pub(crate) fn live(&self) -> Result<(), FederationError> {
        if self.resigned {
            Err(FederationError::FederateNotExecutionMember)
        } else {
            Ok(())
        }
    }

    pub(crate) fn send(&mut self, topic: Topic, body: Body) -> u64 {
        self.seq += 1;
        if body.tso_time().is_some() {
            self.time.last_tso_seq = self.seq;
        }
        self.outbox.push(Output::Publish {
            federation: self.federation,
            topic,
            envelope: Envelope {
                sender: self.me,
                seq: self.seq,
                publish_time_ns: 0,
                body,
            },
        });
        self.seq
    }
}

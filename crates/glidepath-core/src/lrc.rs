//! The local RTI component: one federate's declarations, known objects, time state and
//! pending callbacks, driven through a [`Link`].

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use bytes::Bytes;

use crate::callback::{Callback, MessageInfo};
use crate::error::{
    DeclarationError, FederationError, ObjectError, PeerError, RtiError, TimeError,
};
use crate::exec::{ExecReply, ExecRequest, FederateInfo, Notification};
use crate::message::{Advance, Body, Envelope, Regulation, Values};
use crate::message::{TimeStatus, Topic};
use crate::time::{galt_bound, RegulatorView};
use crate::types::{
    FederateHandle, FederationId, LogicalTime, LogicalTimeInterval, ObjectInstanceHandle,
    ResignAction, TimeValue,
};
use crate::{
    AttributeHandle, Fom, InteractionClassHandle, ObjectClassHandle, OrderType, ParameterHandle,
    TransportationType,
};

/// How the services reach the rest of the federation: a transport in production, the
/// simulated network in tests.
///
/// Contract: envelopes published by one sender reach each subscribed receiver in
/// publication order, across all topics; a sender does not receive its own envelopes;
/// `request` is answered by the [`crate::Executive`] hosting the federation, and
/// notifications it causes are published before the reply returns.
pub trait Link {
    /// Publish an envelope on a topic of a federation.
    fn publish(&mut self, federation: FederationId, topic: Topic, envelope: Envelope);
    /// Start receiving a topic of a federation.
    fn subscribe(&mut self, federation: FederationId, topic: Topic);
    /// Stop receiving a topic of a federation.
    fn unsubscribe(&mut self, federation: FederationId, topic: Topic);
    /// Ask the executive; blocks until it answers.
    fn request(&mut self, request: ExecRequest) -> Result<ExecReply, RtiError>;
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
    /// The last peer error seen, for logs.
    pub last_peer_error: Option<PeerError>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Constrained {
    Off,
    Pending,
    On,
}

/// A time-stamped message waiting in the TSO queue, ordered by (time, sender, seq).
#[derive(Debug)]
struct Queued {
    time: LogicalTime,
    sender: FederateHandle,
    seq: u64,
    publish_time_ns: u64,
    body: Body,
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
    fn key(&self) -> (LogicalTime, FederateHandle, u64) {
        (self.time, self.sender, self.seq)
    }
}

/// Why a time status is published.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum StatusReason {
    /// Our time state may have changed: sent only when it tells peers something new
    /// (see `LocalRti::tells_something_new`).
    Changed,
    /// A peer waits for a status from us (a newcomer, a federate enabling
    /// regulation): always sent.
    Answer,
    /// Our last status: we resign and send nothing after it.
    Resign,
}

struct PendingRegulation {
    status_seq: u64,
    waiting: BTreeSet<FederateHandle>,
    /// Lowest time this federate may take so it cannot send into anyone's past.
    earliest: LogicalTime,
}

struct KnownInstance {
    known_class: ObjectClassHandle,
    name: String,
}

struct OwnedInstance {
    class: ObjectClassHandle,
    name: String,
}

/// Time management state of one federate.
struct TimeState {
    logical_time: LogicalTime,
    lookahead: LogicalTimeInterval,
    regulation: Regulation,
    constrained: Constrained,
    advance: Advance,
    last_grant_available: bool,
    /// Largest time stamp delivered in time-stamp order.
    delivered_up_to: LogicalTime,
    /// Highest promise ever published: promises never move backwards.
    promise_floor: LogicalTime,
    last_tso_seq: u64,
    /// `last_tso_seq` as published in our last status: peers know of our time-stamped
    /// messages up to this one.
    announced_tso_seq: u64,
    /// `seen` as published in our last status.
    published_seen: HashMap<FederateHandle, u64>,
    /// Our last published status, so one that promises nothing new is not sent again.
    last_status: Option<TimeStatus>,
    /// `seq` of `last_status`.
    last_status_seq: u64,
    /// Latest status of every peer (seq, status).
    statuses: BTreeMap<FederateHandle, (u64, TimeStatus)>,
    /// Regulators announced by the executive whose status has not arrived yet.
    awaited_regulators: BTreeSet<FederateHandle>,
    queue: BinaryHeap<Reverse<Queued>>,
    pending_regulation: Option<PendingRegulation>,
    /// Peers whose pending regulation we have acknowledged.
    acked: HashSet<FederateHandle>,
}

/// One federate's local RTI component. No I/O: every effect goes through the [`Link`]
/// passed to each call, and callbacks wait in a queue read with [`LocalRti::poll_callback`].
pub struct LocalRti {
    federation: FederationId,
    federation_name: String,
    me: FederateHandle,
    name: String,
    fom: Arc<Fom>,
    seq: u64,
    resigned: bool,
    members: BTreeMap<FederateHandle, FederateInfo>,
    published_attributes: HashMap<ObjectClassHandle, BTreeSet<AttributeHandle>>,
    subscribed_attributes: HashMap<ObjectClassHandle, BTreeSet<AttributeHandle>>,
    published_interactions: HashSet<InteractionClassHandle>,
    subscribed_interactions: HashSet<InteractionClassHandle>,
    data_topics: BTreeSet<Topic>,
    owned: BTreeMap<ObjectInstanceHandle, OwnedInstance>,
    known: HashMap<ObjectInstanceHandle, KnownInstance>,
    announced: HashSet<String>,
    /// Federates that resigned before this one joined (smaller handles missing from
    /// the join reply). Their data was published before this federate could subscribe
    /// any data topic, so none of it is delivered, and peers are told (through `seen`)
    /// that nothing from them is in flight here.
    ghosts: BTreeSet<FederateHandle>,
    last_seq_from: HashMap<FederateHandle, u64>,
    time: TimeState,
    callbacks: VecDeque<Callback>,
    stats: LocalStats,
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
fn grant_allowed(target: LogicalTime, available: bool, galt: LogicalTime) -> bool {
    target < galt || (available && target <= galt)
}

/// The seq a status reports having processed from `k` (0 if none). Statuses publish
/// `seen` sorted by handle; an unsorted one from a foreign peer may read as 0, which
/// only makes its conditional bound untrusted (conservative, never unsafe).
fn seen_in(seen: &[(FederateHandle, u64)], k: FederateHandle) -> u64 {
    seen.binary_search_by_key(&k, |(h, _)| *h)
        .map_or(0, |i| seen[i].1)
}

fn expect_ok(reply: ExecReply) -> Result<ExecReply, RtiError> {
    match reply {
        ExecReply::FederationError(e) => Err(e.into()),
        ExecReply::ObjectError(e) => Err(e.into()),
        other => Ok(other),
    }
}

fn unexpected(reply: &ExecReply) -> RtiError {
    RtiError::Transport(format!("unexpected reply from the executive: {reply:?}"))
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
        let (federation, _) = match expect_ok(link.request(ExecRequest::Lookup {
            name: federation_name.to_string(),
        })?)? {
            ExecReply::Found { id, fom } => (id, fom),
            other => return Err(unexpected(&other)),
        };
        link.subscribe(federation, Topic::Federation);
        link.subscribe(federation, Topic::Time);
        let reply = link.request(ExecRequest::Join {
            federation,
            federate_name: federate_name.map(str::to_string),
            federate_type: federate_type.to_string(),
        });
        let reply = match reply.and_then(expect_ok) {
            Ok(r) => r,
            Err(e) => {
                link.unsubscribe(federation, Topic::Federation);
                link.unsubscribe(federation, Topic::Time);
                return Err(e);
            }
        };
        let ExecReply::Joined {
            federate,
            fom,
            members,
            regulators,
        } = reply
        else {
            return Err(unexpected(&reply));
        };
        link.subscribe(federation, Topic::Federate(federate));
        let name = members
            .iter()
            .find(|m| m.handle == federate)
            .map(|m| m.name.clone())
            .unwrap_or_default();
        let representation = fom.time_representation;
        let ghosts = (1..federate.0)
            .map(FederateHandle)
            .filter(|h| !members.iter().any(|m| m.handle == *h))
            .collect();
        Ok(LocalRti {
            federation,
            federation_name: federation_name.to_string(),
            me: federate,
            name,
            fom,
            seq: 0,
            resigned: false,
            members: members.into_iter().map(|m| (m.handle, m)).collect(),
            published_attributes: HashMap::new(),
            subscribed_attributes: HashMap::new(),
            published_interactions: HashSet::new(),
            subscribed_interactions: HashSet::new(),
            data_topics: BTreeSet::new(),
            owned: BTreeMap::new(),
            known: HashMap::new(),
            announced: HashSet::new(),
            ghosts,
            last_seq_from: HashMap::new(),
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
                last_status: None,
                last_status_seq: 0,
                statuses: BTreeMap::new(),
                awaited_regulators: regulators.into_iter().filter(|r| *r != federate).collect(),
                queue: BinaryHeap::new(),
                pending_regulation: None,
                acked: HashSet::new(),
            },
            callbacks: VecDeque::new(),
            stats: LocalStats::default(),
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
        self.callbacks.pop_front()
    }
    /// How many callbacks are waiting.
    pub fn pending_callbacks(&self) -> usize {
        self.callbacks.len()
    }
    /// True once resigned.
    pub fn is_resigned(&self) -> bool {
        self.resigned
    }

    fn live(&self) -> Result<(), FederationError> {
        if self.resigned {
            Err(FederationError::FederateNotExecutionMember)
        } else {
            Ok(())
        }
    }

    fn send(&mut self, link: &mut impl Link, topic: Topic, body: Body) -> u64 {
        self.seq += 1;
        if body.tso_time().is_some() {
            self.time.last_tso_seq = self.seq;
        }
        link.publish(
            self.federation,
            topic,
            Envelope {
                sender: self.me,
                seq: self.seq,
                publish_time_ns: 0,
                body,
            },
        );
        self.seq
    }

    // ----- federation management ---------------------------------------------------

    /// Lists the federation's members as the executive knows them.
    pub fn list_federates(&mut self, link: &mut impl Link) -> Result<Vec<FederateInfo>, RtiError> {
        self.live()?;
        match expect_ok(link.request(ExecRequest::ListFederates {
            federation: self.federation,
        })?)? {
            ExecReply::Federates(list) => Ok(list),
            other => Err(unexpected(&other)),
        }
    }

    /// Resigns. Objects are deleted or divested as `action` says; the final time status
    /// tells every peer that nothing more will come from this federate.
    pub fn resign(&mut self, link: &mut impl Link, action: ResignAction) -> Result<(), RtiError> {
        self.live()?;
        let reply = expect_ok(link.request(ExecRequest::Resign {
            federation: self.federation,
            federate: self.me,
            action,
        })?)?;
        let ExecReply::Resigned { delete } = reply else {
            return Err(unexpected(&reply));
        };
        for info in delete {
            self.owned.remove(&info.instance);
            self.send(
                link,
                Topic::ObjectClass(info.class),
                Body::Delete {
                    instance: info.instance,
                    class: info.class,
                    tag: Bytes::new(),
                    order: OrderType::Receive,
                    time: None,
                },
            );
        }
        self.owned.clear();
        self.publish_status(link, StatusReason::Resign);
        self.resigned = true;
        for topic in std::mem::take(&mut self.data_topics) {
            link.unsubscribe(self.federation, topic);
        }
        link.unsubscribe(self.federation, Topic::Federate(self.me));
        link.unsubscribe(self.federation, Topic::Time);
        link.unsubscribe(self.federation, Topic::Federation);
        Ok(())
    }

    /// Registers a synchronization point for `set` (everyone joined when empty or `None`).
    pub fn register_federation_synchronization_point(
        &mut self,
        link: &mut impl Link,
        label: &str,
        tag: Bytes,
        set: Option<Vec<FederateHandle>>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let reply = link.request(ExecRequest::RegisterSyncPoint {
            federation: self.federation,
            federate: self.me,
            label: label.to_string(),
            tag,
            set,
        })?;
        match expect_ok(reply)? {
            ExecReply::SyncPointRegistered {
                label,
                result: Ok(()),
            } => self
                .callbacks
                .push_back(Callback::SynchronizationPointRegistrationSucceeded { label }),
            ExecReply::SyncPointRegistered {
                label,
                result: Err(reason),
            } => self
                .callbacks
                .push_back(Callback::SynchronizationPointRegistrationFailed { label, reason }),
            other => return Err(unexpected(&other)),
        }
        Ok(())
    }

    /// Says this federate has reached an announced synchronization point.
    pub fn synchronization_point_achieved(
        &mut self,
        link: &mut impl Link,
        label: &str,
        success: bool,
    ) -> Result<(), RtiError> {
        self.live()?;
        if !self.announced.contains(label) {
            return Err(
                FederationError::SynchronizationPointLabelNotAnnounced(label.to_string()).into(),
            );
        }
        expect_ok(link.request(ExecRequest::AchieveSyncPoint {
            federation: self.federation,
            federate: self.me,
            label: label.to_string(),
            success,
        })?)?;
        Ok(())
    }

    // ----- declaration management --------------------------------------------------

    fn check_class_attributes(
        &self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), DeclarationError> {
        let c = self
            .fom
            .object_class(class)
            .ok_or(DeclarationError::ObjectClassNotDefined(class))?;
        for a in attributes {
            if !c.all_attributes.contains(a) {
                return Err(DeclarationError::AttributeNotDefined {
                    class,
                    attribute: *a,
                });
            }
        }
        Ok(())
    }

    /// Publishes these attributes of `class` (added to what is already published).
    pub fn publish_object_class_attributes(
        &mut self,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, attributes)?;
        self.published_attributes
            .entry(class)
            .or_default()
            .extend(attributes.iter().copied());
        Ok(())
    }

    /// Stops publishing `class` entirely.
    pub fn unpublish_object_class(&mut self, class: ObjectClassHandle) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, &[])?;
        self.published_attributes.remove(&class);
        Ok(())
    }

    /// Subscribes these attributes of `class` (replacing the class's previous set, as the
    /// standard says). Instances already registered by others are discovered now.
    pub fn subscribe_object_class_attributes(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, attributes)?;
        if attributes.is_empty() {
            self.subscribed_attributes.remove(&class);
        } else {
            self.subscribed_attributes
                .insert(class, attributes.iter().copied().collect());
        }
        self.sync_topics(link);
        if attributes.is_empty() {
            return Ok(());
        }
        let classes = self.fom.object_class_and_descendants(class);
        let reply = expect_ok(link.request(ExecRequest::ListInstances {
            federation: self.federation,
            federate: self.me,
            classes,
        })?)?;
        let ExecReply::Instances(list) = reply else {
            return Err(unexpected(&reply));
        };
        for info in list {
            // Divested instances have no owner but still exist: discover them too.
            let producer = info.owner.unwrap_or(FederateHandle::EXECUTIVE);
            self.discover(info.instance, info.class, &info.name, producer);
        }
        Ok(())
    }

    /// Stops subscribing `class`. Known instances stay known but reflect nothing more
    /// unless another subscription covers them.
    pub fn unsubscribe_object_class(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, &[])?;
        self.subscribed_attributes.remove(&class);
        self.sync_topics(link);
        Ok(())
    }

    /// Publishes an interaction class.
    pub fn publish_interaction_class(
        &mut self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .interaction_class(class)
            .ok_or(DeclarationError::InteractionClassNotDefined(class))?;
        self.published_interactions.insert(class);
        Ok(())
    }

    /// Stops publishing an interaction class.
    pub fn unpublish_interaction_class(
        &mut self,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .interaction_class(class)
            .ok_or(DeclarationError::InteractionClassNotDefined(class))?;
        self.published_interactions.remove(&class);
        Ok(())
    }

    /// Subscribes an interaction class (and, through the hierarchy, its subclasses).
    pub fn subscribe_interaction_class(
        &mut self,
        link: &mut impl Link,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .interaction_class(class)
            .ok_or(DeclarationError::InteractionClassNotDefined(class))?;
        self.subscribed_interactions.insert(class);
        self.sync_topics(link);
        Ok(())
    }

    /// Stops subscribing an interaction class.
    pub fn unsubscribe_interaction_class(
        &mut self,
        link: &mut impl Link,
        class: InteractionClassHandle,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.fom
            .interaction_class(class)
            .ok_or(DeclarationError::InteractionClassNotDefined(class))?;
        self.subscribed_interactions.remove(&class);
        self.sync_topics(link);
        Ok(())
    }

    /// Brings the transport's subscriptions in line with the declarations: a class topic
    /// is needed when the class or one of its ancestors is subscribed.
    fn sync_topics(&mut self, link: &mut impl Link) {
        let mut want = BTreeSet::new();
        for class in self.subscribed_attributes.keys() {
            for c in self.fom.object_class_and_descendants(*class) {
                want.insert(Topic::ObjectClass(c));
            }
        }
        for class in &self.subscribed_interactions {
            for c in self.fom.interaction_class_and_descendants(*class) {
                want.insert(Topic::InteractionClass(c));
            }
        }
        for t in want.difference(&self.data_topics) {
            link.subscribe(self.federation, *t);
        }
        for t in self.data_topics.difference(&want) {
            link.unsubscribe(self.federation, *t);
        }
        self.data_topics = want;
    }

    /// The subscribed class an instance of `class` is known as: the closest subscribed
    /// ancestor (or the class itself).
    fn subscribed_object_class_for(&self, class: ObjectClassHandle) -> Option<ObjectClassHandle> {
        let mut c = Some(class);
        while let Some(h) = c {
            if self.subscribed_attributes.contains_key(&h) {
                return Some(h);
            }
            c = self.fom.object_class(h).and_then(|x| x.parent);
        }
        None
    }

    fn subscribed_interaction_class_for(
        &self,
        class: InteractionClassHandle,
    ) -> Option<InteractionClassHandle> {
        let mut c = Some(class);
        while let Some(h) = c {
            if self.subscribed_interactions.contains(&h) {
                return Some(h);
            }
            c = self.fom.interaction_class(h).and_then(|x| x.parent);
        }
        None
    }

    // ----- object management ------------------------------------------------------

    /// Asks the executive to reserve an instance name; the answer arrives as a callback.
    pub fn reserve_object_instance_name(
        &mut self,
        link: &mut impl Link,
        name: &str,
    ) -> Result<(), RtiError> {
        self.live()?;
        let reply = expect_ok(link.request(ExecRequest::ReserveName {
            federation: self.federation,
            federate: self.me,
            name: name.to_string(),
        })?)?;
        match reply {
            ExecReply::NameReserved {
                name,
                success: true,
            } => self
                .callbacks
                .push_back(Callback::ObjectInstanceNameReservationSucceeded { name }),
            ExecReply::NameReserved {
                name,
                success: false,
            } => self
                .callbacks
                .push_back(Callback::ObjectInstanceNameReservationFailed { name }),
            other => return Err(unexpected(&other)),
        }
        Ok(())
    }

    /// Releases a reserved name that was not used.
    pub fn release_object_instance_name(
        &mut self,
        link: &mut impl Link,
        name: &str,
    ) -> Result<(), RtiError> {
        self.live()?;
        expect_ok(link.request(ExecRequest::ReleaseName {
            federation: self.federation,
            federate: self.me,
            name: name.to_string(),
        })?)?;
        Ok(())
    }

    /// Registers an instance of a published class, optionally under a name this
    /// federate reserved. Subscribers discover it.
    pub fn register_object_instance(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        name: Option<&str>,
    ) -> Result<ObjectInstanceHandle, RtiError> {
        self.live()?;
        self.fom
            .object_class(class)
            .ok_or(ObjectError::ObjectClassNotDefined(class))?;
        if !self.published_attributes.contains_key(&class) {
            return Err(ObjectError::ObjectClassNotPublished(class).into());
        }
        let reply = expect_ok(link.request(ExecRequest::RegisterInstance {
            federation: self.federation,
            federate: self.me,
            class,
            name: name.map(str::to_string),
        })?)?;
        let ExecReply::Registered { instance, name } = reply else {
            return Err(unexpected(&reply));
        };
        self.owned.insert(
            instance,
            OwnedInstance {
                class,
                name: name.clone(),
            },
        );
        self.send(
            link,
            Topic::ObjectClass(class),
            Body::Register {
                instance,
                class,
                name: name.into(),
            },
        );
        Ok(instance)
    }

    /// The earliest time stamp this federate may send now.
    fn earliest_send_time(&self) -> LogicalTime {
        let base = match self.time.advance {
            Advance::Idle => self.time.logical_time,
            Advance::Tar { time, .. } | Advance::Ner { time, .. } => time,
        };
        base.plus(self.time.lookahead).max(self.time.promise_floor)
    }

    /// A time stamp a user gives, in the federation's representation (a float `3.0`
    /// becomes the integer 3 in an `HLAinteger64Time` federation; `3.5` is refused).
    fn federation_time(&self, t: LogicalTime) -> Result<LogicalTime, ObjectError> {
        let representation = self.fom.time_representation;
        LogicalTime::in_representation(representation, t).ok_or(
            ObjectError::TimeNotInRepresentation {
                time: t,
                representation,
            },
        )
    }

    fn federation_times(&self, t: Option<LogicalTime>) -> Result<Option<LogicalTime>, ObjectError> {
        t.map(|t| self.federation_time(t)).transpose()
    }

    /// A logical time a user asks for, in the federation's representation.
    fn requested_time(&self, value: TimeValue) -> Result<LogicalTime, TimeError> {
        let representation = self.fom.time_representation;
        LogicalTime::in_representation(representation, value).ok_or(if value.is_nan() {
            TimeError::InvalidLogicalTime(value)
        } else {
            TimeError::NotInTimeRepresentation {
                value,
                representation,
            }
        })
    }

    /// A lookahead a user gives, in the federation's representation.
    fn requested_lookahead(&self, value: TimeValue) -> Result<LogicalTimeInterval, TimeError> {
        LogicalTimeInterval::in_representation(self.fom.time_representation, value)
            .ok_or(TimeError::InvalidLookahead(value))
    }

    /// Decides the sent order of a message with the FOM's `order` and an optional time
    /// stamp: time-stamp order only from a regulating federate, checked against its promise.
    fn sent_order(
        &self,
        order: OrderType,
        time: Option<LogicalTime>,
    ) -> Result<OrderType, ObjectError> {
        match (order, time) {
            (OrderType::TimeStamp, Some(t)) if self.time.regulation == Regulation::On => {
                let earliest = self.earliest_send_time();
                if t < earliest {
                    return Err(ObjectError::InvalidLogicalTime { time: t, earliest });
                }
                Ok(OrderType::TimeStamp)
            }
            _ => Ok(OrderType::Receive),
        }
    }

    /// Updates any subset of an owned instance's published attributes. Values are split
    /// by the order and transportation the FOM gives each attribute.
    pub fn update_attribute_values(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        values: Vec<(AttributeHandle, Bytes)>,
        tag: Bytes,
        time: Option<LogicalTime>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let time = self.federation_times(time)?;
        let class = self
            .owned
            .get(&instance)
            .ok_or(ObjectError::ObjectInstanceNotKnown(instance))?
            .class;
        let fom = self.fom.clone();
        let c = fom
            .object_class(class)
            .ok_or(ObjectError::ObjectClassNotDefined(class))?;
        let published = self.published_attributes.get(&class);
        type Group = (
            (OrderType, TransportationType),
            Vec<(AttributeHandle, Bytes)>,
        );
        let mut groups: Vec<Group> = Vec::new();
        for (a, v) in values {
            if !c.all_attributes.contains(&a) {
                return Err(ObjectError::AttributeNotDefined {
                    class,
                    attribute: a,
                }
                .into());
            }
            if !published.is_some_and(|p| p.contains(&a)) {
                return Err(ObjectError::AttributeNotOwned(a).into());
            }
            let attr = &fom.attributes[a.index()];
            let order = self.sent_order(attr.order, time)?;
            let key = (order, attr.transportation);
            match groups.iter_mut().find(|(k, _)| *k == key) {
                Some((_, g)) => g.push((a, v)),
                None => groups.push((key, vec![(a, v)])),
            }
        }
        for ((order, transport), vals) in groups {
            self.send(
                link,
                Topic::ObjectClass(class),
                Body::Update {
                    instance,
                    class,
                    values: vals.into(),
                    tag: tag.clone(),
                    order,
                    transport,
                    time,
                },
            );
        }
        self.announce_if_owed(link);
        Ok(())
    }

    /// Sends an interaction of a published class.
    pub fn send_interaction(
        &mut self,
        link: &mut impl Link,
        class: InteractionClassHandle,
        values: Vec<(ParameterHandle, Bytes)>,
        tag: Bytes,
        time: Option<LogicalTime>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let time = self.federation_times(time)?;
        let fom = self.fom.clone();
        let c = fom
            .interaction_class(class)
            .ok_or(ObjectError::InteractionClassNotDefined(class))?;
        if !self.published_interactions.contains(&class) {
            return Err(ObjectError::InteractionClassNotPublished(class).into());
        }
        for (p, _) in &values {
            if !c.all_parameters.contains(p) {
                return Err(ObjectError::InteractionParameterNotDefined {
                    class,
                    parameter: *p,
                }
                .into());
            }
        }
        let order = self.sent_order(c.order, time)?;
        self.send(
            link,
            Topic::InteractionClass(class),
            Body::Interaction {
                class,
                values: values.into(),
                tag,
                order,
                transport: c.transportation,
                time,
            },
        );
        self.announce_if_owed(link);
        Ok(())
    }

    /// Deletes an owned instance; subscribers get `RemoveObjectInstance`.
    pub fn delete_object_instance(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        tag: Bytes,
        time: Option<LogicalTime>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let time = self.federation_times(time)?;
        let class = match self.owned.get(&instance) {
            Some(o) => o.class,
            None if self.known.contains_key(&instance) => {
                return Err(ObjectError::DeletePrivilegeNotHeld(instance).into())
            }
            None => return Err(ObjectError::ObjectInstanceNotKnown(instance).into()),
        };
        let order = self.sent_order(OrderType::TimeStamp, time)?;
        expect_ok(link.request(ExecRequest::DeleteInstance {
            federation: self.federation,
            federate: self.me,
            instance,
        })?)?;
        self.owned.remove(&instance);
        self.send(
            link,
            Topic::ObjectClass(class),
            Body::Delete {
                instance,
                class,
                tag,
                order,
                time,
            },
        );
        self.announce_if_owed(link);
        Ok(())
    }

    /// Asks the owner of `instance` to provide current values of `attributes`.
    pub fn request_instance_attribute_value_update(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) -> Result<(), RtiError> {
        self.live()?;
        let class = self
            .known
            .get(&instance)
            .ok_or(ObjectError::ObjectInstanceNotKnown(instance))?
            .known_class;
        self.check_class_attributes(class, attributes)?;
        let reply = expect_ok(link.request(ExecRequest::ListInstances {
            federation: self.federation,
            federate: self.me,
            classes: self.fom.object_class_and_descendants(class),
        })?)?;
        let ExecReply::Instances(list) = reply else {
            return Err(unexpected(&reply));
        };
        let Some(owner) = list
            .iter()
            .find(|i| i.instance == instance)
            .and_then(|i| i.owner)
        else {
            // Deleted or divested meanwhile: nobody can provide.
            return Ok(());
        };
        self.send(
            link,
            Topic::Federate(owner),
            Body::RequestUpdate {
                instance: Some(instance),
                class,
                attributes: attributes.into(),
                tag,
            },
        );
        Ok(())
    }

    /// Asks the owners of every instance of `class` (and subclasses) to provide values.
    pub fn request_class_attribute_value_update(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) -> Result<(), RtiError> {
        self.live()?;
        self.check_class_attributes(class, attributes)?;
        self.send(
            link,
            Topic::Federation,
            Body::RequestUpdate {
                instance: None,
                class,
                attributes: attributes.into(),
                tag,
            },
        );
        Ok(())
    }

    fn discover(
        &mut self,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        name: &str,
        producer: FederateHandle,
    ) {
        if self.known.contains_key(&instance) || self.owned.contains_key(&instance) {
            return;
        }
        let Some(known_class) = self.subscribed_object_class_for(class) else {
            return;
        };
        self.known.insert(
            instance,
            KnownInstance {
                known_class,
                name: name.to_string(),
            },
        );
        self.callbacks.push_back(Callback::DiscoverObjectInstance {
            instance,
            class: known_class,
            name: name.to_string(),
            producer,
        });
    }

    /// The instance's name, when this federate knows or owns it.
    pub fn object_instance_name(&self, instance: ObjectInstanceHandle) -> Option<&str> {
        match self.owned.get(&instance) {
            Some(o) => Some(o.name.as_str()),
            None => self.known.get(&instance).map(|k| k.name.as_str()),
        }
    }

    // ----- time management ----------------------------------------------------------

    /// Asks to become time-regulating with `lookahead`. Granted by a
    /// `TimeRegulationEnabled` callback once every member has acknowledged.
    pub fn enable_time_regulation(
        &mut self,
        link: &mut impl Link,
        lookahead: impl Into<TimeValue>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let lookahead = self.requested_lookahead(lookahead.into())?;
        match self.time.regulation {
            Regulation::On => return Err(TimeError::TimeRegulationAlreadyEnabled.into()),
            Regulation::Pending => return Err(TimeError::RequestForTimeRegulationPending.into()),
            Regulation::Off => {}
        }
        if self.time.advance != Advance::Idle {
            return Err(TimeError::InTimeAdvancingState.into());
        }
        let reply = expect_ok(link.request(ExecRequest::EnableRegulation {
            federation: self.federation,
            federate: self.me,
        })?)?;
        let ExecReply::RegulationEnabling { ack_from } = reply else {
            return Err(unexpected(&reply));
        };
        self.time.lookahead = lookahead;
        self.time.regulation = Regulation::Pending;
        let status_seq = self.publish_status(link, StatusReason::Answer);
        self.time.pending_regulation = Some(PendingRegulation {
            status_seq,
            waiting: ack_from.into_iter().collect(),
            earliest: self.time.logical_time,
        });
        self.evaluate(link);
        Ok(())
    }

    /// Stops regulating; peers drop this federate from GALT when the status arrives.
    pub fn disable_time_regulation(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        self.live()?;
        if self.time.regulation != Regulation::On {
            return Err(TimeError::TimeRegulationIsNotEnabled.into());
        }
        self.time.regulation = Regulation::Off;
        self.time.promise_floor = LogicalTime::NEG_INFINITY;
        self.publish_status(link, StatusReason::Changed);
        expect_ok(link.request(ExecRequest::DisableRegulation {
            federation: self.federation,
            federate: self.me,
        })?)?;
        Ok(())
    }

    /// Asks to become time-constrained; granted by `TimeConstrainedEnabled` once GALT
    /// has reached the federate's logical time.
    pub fn enable_time_constrained(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        self.live()?;
        match self.time.constrained {
            Constrained::On => return Err(TimeError::TimeConstrainedAlreadyEnabled.into()),
            Constrained::Pending => return Err(TimeError::RequestForTimeConstrainedPending.into()),
            Constrained::Off => {}
        }
        if self.time.advance != Advance::Idle {
            return Err(TimeError::InTimeAdvancingState.into());
        }
        self.time.constrained = Constrained::Pending;
        self.evaluate(link);
        Ok(())
    }

    /// Stops being constrained: queued time-stamped messages are delivered in receive order.
    pub fn disable_time_constrained(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        self.live()?;
        if self.time.constrained != Constrained::On {
            return Err(TimeError::TimeConstrainedIsNotEnabled.into());
        }
        self.time.constrained = Constrained::Off;
        while let Some(Reverse(q)) = self.time.queue.pop() {
            self.deliver(
                q.sender,
                q.seq,
                q.publish_time_ns,
                q.body,
                OrderType::Receive,
            );
        }
        if self.time.regulation != Regulation::Off {
            self.publish_status(link, StatusReason::Changed);
        }
        Ok(())
    }

    /// Changes lookahead. Promises already made stand, so a smaller lookahead takes
    /// effect only as logical time moves on.
    pub fn modify_lookahead(
        &mut self,
        link: &mut impl Link,
        lookahead: impl Into<TimeValue>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let la = self.requested_lookahead(lookahead.into())?;
        if self.time.regulation != Regulation::On {
            return Err(TimeError::TimeRegulationIsNotEnabled.into());
        }
        self.time.lookahead = la;
        self.publish_status(link, StatusReason::Changed);
        self.evaluate(link);
        Ok(())
    }

    fn check_request(&self, time: TimeValue) -> Result<LogicalTime, RtiError> {
        self.live()?;
        let t = self.requested_time(time)?;
        if self.time.advance != Advance::Idle {
            return Err(TimeError::InTimeAdvancingState.into());
        }
        if self.time.regulation == Regulation::Pending {
            return Err(TimeError::RequestForTimeRegulationPending.into());
        }
        if self.time.constrained == Constrained::Pending {
            return Err(TimeError::RequestForTimeConstrainedPending.into());
        }
        if t < self.time.logical_time {
            return Err(TimeError::LogicalTimeAlreadyPassed {
                requested: t,
                current: self.time.logical_time,
            }
            .into());
        }
        Ok(t)
    }

    /// Time advance request (`available` = TARA): grant exactly at `time` once no
    /// earlier time-stamped message can arrive.
    pub fn time_advance_request(
        &mut self,
        link: &mut impl Link,
        time: impl Into<TimeValue>,
        available: bool,
    ) -> Result<(), RtiError> {
        let t = self.check_request(time.into())?;
        self.time.advance = Advance::Tar { time: t, available };
        if self.time.regulation == Regulation::On {
            self.publish_status(link, StatusReason::Changed);
        }
        self.evaluate(link);
        Ok(())
    }

    /// Next message request (`available` = NERA): grant at the earlier of `time` and the
    /// next time-stamped message.
    pub fn next_message_request(
        &mut self,
        link: &mut impl Link,
        time: impl Into<TimeValue>,
        available: bool,
    ) -> Result<(), RtiError> {
        let t = self.check_request(time.into())?;
        let next = self.queue_head().map_or(t, |h| h.min(t));
        self.time.advance = Advance::Ner {
            time: t,
            next,
            available,
        };
        if self.time.regulation == Regulation::On {
            self.publish_status(link, StatusReason::Changed);
        }
        self.evaluate(link);
        Ok(())
    }

    /// Flush queue request: deliver every queued time-stamped message now and grant at
    /// the earliest of `time`, GALT and the first delivered time stamp.
    pub fn flush_queue_request(
        &mut self,
        link: &mut impl Link,
        time: impl Into<TimeValue>,
    ) -> Result<(), RtiError> {
        let t = self.check_request(time.into())?;
        let mut grant = t;
        if self.time.constrained == Constrained::On {
            grant = grant.min(self.galt());
            if let Some(h) = self.queue_head() {
                grant = grant.min(h);
            }
        }
        while let Some(Reverse(q)) = self.time.queue.pop() {
            self.deliver_tso(q);
        }
        let grant = grant.max(self.time.logical_time);
        // GALT may equal the grant, so messages at exactly the grant time can still
        // arrive: this grant behaves like an "available" one.
        self.grant(link, grant, true);
        Ok(())
    }

    /// The federate's logical time.
    pub fn logical_time(&self) -> LogicalTime {
        self.time.logical_time
    }
    /// The federate's lookahead.
    pub fn lookahead(&self) -> LogicalTimeInterval {
        self.time.lookahead
    }
    /// True when regulation is enabled (not pending).
    pub fn is_regulating(&self) -> bool {
        self.time.regulation == Regulation::On
    }
    /// True when constrained is enabled (not pending).
    pub fn is_constrained(&self) -> bool {
        self.time.constrained == Constrained::On
    }
    /// How many time-stamped messages wait in the queue.
    pub fn queued_tso(&self) -> usize {
        self.time.queue.len()
    }
    /// The earliest time stamp this federate may send in time-stamp order now (its
    /// logical time, or requested time while advancing, plus lookahead, never below a
    /// promise already made). `None` when not regulating.
    pub fn earliest_tso_send_time(&self) -> Option<LogicalTime> {
        (self.time.regulation == Regulation::On).then(|| self.earliest_send_time())
    }
    /// A one-line description of the time state, for diagnostics.
    pub fn describe_time_state(&self) -> String {
        format!(
            "lt {} regulation {:?} constrained {:?} advance {:?} galt {} promise {} queued {} pending-regulation {:?}",
            self.time.logical_time,
            self.time.regulation,
            self.time.constrained,
            self.time.advance,
            self.galt(),
            self.promise(),
            self.time.queue.len(),
            self.time.pending_regulation.as_ref().map(|p| (p.earliest, p.waiting.iter().copied().collect::<Vec<_>>())),
        )
    }
    /// For each peer waiting in a next message request, why its conditional bound is
    /// or is not trusted, for diagnostics.
    pub fn describe_conditionals(&self) -> String {
        let mut out = String::new();
        for (f, (_, s)) in &self.time.statuses {
            if let Advance::Ner { next, .. } = s.advance {
                let seen = |k: FederateHandle| seen_in(&s.seen, k);
                let mut why = Vec::new();
                if self.time.last_tso_seq > seen(self.me) {
                    why.push(format!(
                        "me: last tso {} > seen {}",
                        self.time.last_tso_seq,
                        seen(self.me)
                    ));
                }
                for (k, (_, ks)) in &self.time.statuses {
                    if k != f && ks.last_tso_seq > seen(*k) {
                        why.push(format!(
                            "{k}: last tso {} > seen {}",
                            ks.last_tso_seq,
                            seen(*k)
                        ));
                    }
                }
                out.push_str(&format!(
                    "[{f} {:?} constrained {} next {next}: {}] ",
                    s.regulation,
                    s.constrained,
                    if why.is_empty() {
                        "valid".to_string()
                    } else {
                        why.join(", ")
                    }
                ));
            }
        }
        out
    }
    /// What this federate would tell its peers about its time now, and whether it
    /// waits on GALT: for checkers (the simulator's liveness oracle) and diagnostics.
    pub fn time_snapshot(&self) -> TimeSnapshot {
        let advance = match self.time.advance {
            Advance::Ner {
                time, available, ..
            } => Advance::Ner {
                time,
                next: self.queue_head().map_or(time, |h| h.min(time)),
                available,
            },
            other => other,
        };
        TimeSnapshot {
            federate: self.me,
            regulation: self.time.regulation,
            constrained: self.time.constrained == Constrained::On,
            logical_time: self.time.logical_time,
            lookahead: self.time.lookahead,
            promise: self.promise(),
            advance,
            waits_on_galt: !self.resigned && self.waits_on_galt(),
        }
    }

    /// True when this federate, waiting on GALT, would proceed (be granted, or have
    /// constrained mode enabled) if its GALT were `galt`.
    pub fn can_proceed_with_galt(&self, galt: LogicalTime) -> bool {
        match (self.time.constrained, self.time.advance) {
            (Constrained::Pending, _) => galt >= self.time.logical_time,
            (Constrained::On, Advance::Tar { time, available }) => {
                grant_allowed(time, available, galt)
            }
            (
                Constrained::On,
                Advance::Ner {
                    time, available, ..
                },
            ) => grant_allowed(
                self.queue_head().map_or(time, |h| h.min(time)),
                available,
                galt,
            ),
            _ => false,
        }
    }

    /// True while a time advance is pending.
    pub fn is_advancing(&self) -> bool {
        self.time.advance != Advance::Idle
    }

    /// Greatest Available Logical Time: no time-stamped message below it can still
    /// arrive. `None` when no other federate regulates (the standard's "undefined").
    pub fn query_galt(&self) -> Option<LogicalTime> {
        let g = self.galt();
        (g != LogicalTime::INFINITY).then_some(g)
    }

    /// Least Incoming Time Stamp: the smaller of GALT and the earliest queued message.
    pub fn query_lits(&self) -> Option<LogicalTime> {
        let g = self.galt();
        let l = self.queue_head().map_or(g, |h| h.min(g));
        (l != LogicalTime::INFINITY).then_some(l)
    }

    fn queue_head(&self) -> Option<LogicalTime> {
        self.time.queue.peek().map(|Reverse(q)| q.time)
    }

    /// Computes GALT from the held statuses (see [`crate::galt_bound`]).
    fn galt(&self) -> LogicalTime {
        if !self.time.awaited_regulators.is_empty() {
            // A regulator we have not heard from yet could send anything above its
            // logical time: hold everything.
            return LogicalTime::NEG_INFINITY;
        }
        let mut views = Vec::with_capacity(self.time.statuses.len() + 1);
        for (f, (_, s)) in &self.time.statuses {
            if s.regulation == Regulation::Off || s.resigned {
                continue;
            }
            let conditional = match s.advance {
                Advance::Ner { next, .. }
                    if s.constrained
                        && s.regulation == Regulation::On
                        && self.no_message_in_flight_to(*f, s) =>
                {
                    Some(next.plus(s.lookahead))
                }
                _ => None,
            };
            views.push(RegulatorView {
                federate: *f,
                promise: s.promise,
                lookahead: s.lookahead,
                conditional,
            });
        }
        if self.time.regulation != Regulation::Off {
            let conditional = match self.time.advance {
                Advance::Ner { time, .. }
                    if self.time.constrained == Constrained::On
                        && self.time.regulation == Regulation::On =>
                {
                    Some(
                        self.queue_head()
                            .map_or(time, |h| h.min(time))
                            .plus(self.time.lookahead),
                    )
                }
                _ => None,
            };
            views.push(RegulatorView {
                federate: self.me,
                promise: self.current_promise_without_galt(),
                lookahead: self.time.lookahead,
                conditional,
            });
        }
        galt_bound(self.me, &views)
    }

    /// True when `status` of federate `f` reports having processed the latest
    /// time-stamped message of every regulating peer (as far as this federate knows).
    fn no_message_in_flight_to(&self, f: FederateHandle, status: &TimeStatus) -> bool {
        let seen = |k: FederateHandle| seen_in(&status.seen, k);
        if self.time.last_tso_seq > seen(self.me) {
            return false;
        }
        for (k, (_, s)) in &self.time.statuses {
            // Federates that stopped regulating or resigned count too: what they sent
            // before may still be on its way.
            if *k != f && s.last_tso_seq > seen(*k) {
                return false;
            }
        }
        true
    }

    /// Promise ignoring GALT: used for our own node in the GALT computation.
    fn current_promise_without_galt(&self) -> LogicalTime {
        let la = self.time.lookahead;
        let p = match (self.time.regulation, self.time.advance) {
            (Regulation::Off, _) => LogicalTime::INFINITY,
            (Regulation::Pending, _) => {
                let earliest = self
                    .time
                    .pending_regulation
                    .as_ref()
                    .map_or(self.time.logical_time, |p| p.earliest);
                self.time.logical_time.max(earliest).plus(la)
            }
            (Regulation::On, Advance::Idle) => self.time.logical_time.plus(la),
            (Regulation::On, Advance::Tar { time, .. }) => time.plus(la),
            (Regulation::On, Advance::Ner { time, .. }) => {
                if self.time.constrained == Constrained::On {
                    self.time.logical_time.plus(la)
                } else {
                    time.plus(la)
                }
            }
        };
        p.max(self.time.promise_floor)
    }

    /// The unconditional promise to publish now.
    fn promise(&self) -> LogicalTime {
        self.promise_given(None)
    }

    /// [`Self::promise`] with GALT already computed by the caller (it is the costly part).
    fn promise_given(&self, galt: Option<LogicalTime>) -> LogicalTime {
        if self.time.regulation == Regulation::Off {
            return LogicalTime::INFINITY;
        }
        let mut p = self.current_promise_without_galt();
        if let (Regulation::On, Advance::Ner { time, .. }) =
            (self.time.regulation, self.time.advance)
        {
            if self.time.constrained == Constrained::On {
                let next = self
                    .queue_head()
                    .map_or(time, |h| h.min(time))
                    .min(galt.unwrap_or_else(|| self.galt()));
                p = p.max(next.plus(self.time.lookahead));
            }
        }
        p
    }

    /// Publishes this federate's time status for `reason`; returns the seq of the status
    /// that stands (the previous one when nothing new was worth sending).
    fn publish_status(&mut self, link: &mut impl Link, reason: StatusReason) -> u64 {
        self.publish_status_given(link, reason, None)
    }

    /// [`Self::publish_status`] with GALT already computed by the caller.
    fn publish_status_given(
        &mut self,
        link: &mut impl Link,
        reason: StatusReason,
        galt: Option<LogicalTime>,
    ) -> u64 {
        let promise = self.promise_given(galt);
        let advance = match self.time.advance {
            Advance::Ner {
                time, available, ..
            } => Advance::Ner {
                time,
                next: self.queue_head().map_or(time, |h| h.min(time)),
                available,
            },
            other => other,
        };
        self.time.advance = advance;
        let mut seen: Vec<(FederateHandle, u64)> = self
            .last_seq_from
            .iter()
            .filter(|(f, _)| **f != FederateHandle::EXECUTIVE && !self.ghosts.contains(f))
            .map(|(f, s)| (*f, *s))
            .chain(self.ghosts.iter().map(|g| (*g, u64::MAX)))
            .collect();
        // Sorted by handle, so peers look entries up by binary search (see `seen_in`).
        seen.sort_unstable_by_key(|(h, _)| *h);
        let status = TimeStatus {
            regulation: self.time.regulation,
            constrained: self.time.constrained == Constrained::On,
            logical_time: self.time.logical_time,
            last_grant_available: self.time.last_grant_available,
            lookahead: self.time.lookahead,
            delivered_up_to: self.time.delivered_up_to,
            promise,
            advance,
            last_tso_seq: self.time.last_tso_seq,
            seen: seen.into(),
            resigned: reason == StatusReason::Resign,
        };
        if reason == StatusReason::Changed {
            if let Some(last) = &self.time.last_status {
                if !self.tells_something_new(last, &status) {
                    return self.time.last_status_seq;
                }
            }
        }
        if promise != LogicalTime::INFINITY {
            self.time.promise_floor = self.time.promise_floor.max(promise);
        }
        self.time.published_seen = status.seen.iter().copied().collect();
        self.time.announced_tso_seq = self.time.last_tso_seq;
        self.time.last_status = Some(status.clone());
        let seq = self.send(link, Topic::Time, Body::TimeStatus(status));
        self.time.last_status_seq = seq;
        seq
    }

    /// True when `new` tells peers something `last` did not: any field but `seen`
    /// differs, or `new.seen` covers time-stamped messages a peer has announced that
    /// `last.seen` did not (which is what lets peers trust our conditional bound). A
    /// `seen` that moved only over messages nobody depends on is not worth a message:
    /// re-sending it is how statuses would circle forever.
    fn tells_something_new(&self, last: &TimeStatus, new: &TimeStatus) -> bool {
        let same_but_seen = TimeStatus {
            seen: last.seen.clone(),
            ..new.clone()
        };
        if same_but_seen != *last {
            return true;
        }
        new.seen.iter().any(|(k, now)| {
            let announced = self.time.statuses.get(k).map_or(0, |(_, s)| s.last_tso_seq);
            let before = self.time.published_seen.get(k).copied().unwrap_or(0);
            before < announced && announced <= *now
        })
    }

    /// True while this federate's progress depends on GALT: constrained, and waiting
    /// for a grant or for constrained mode or regulation to be enabled.
    fn waits_on_galt(&self) -> bool {
        match self.time.constrained {
            Constrained::Off => false,
            Constrained::Pending => true,
            Constrained::On => {
                self.time.advance != Advance::Idle || self.time.pending_regulation.is_some()
            }
        }
    }

    /// Announces time-stamped messages sent since our last status when a waiting
    /// peer's conditional bound is distrusted only because of them.
    ///
    /// We trust a peer's conditional bound only once its status has seen our latest
    /// time-stamped message. The peer republishes when a status of ours announces
    /// messages it had not seen; but messages sent after our last status (while we
    /// wait) are announced by nobody, and a peer not subscribed to them never sees a
    /// newer seq from us. Both would wait for the other forever (simulator seed
    /// 5007226): so while we wait on GALT and such a peer exists, we announce.
    fn announce_if_owed(&mut self, link: &mut impl Link) {
        let (last, announced) = (self.time.last_tso_seq, self.time.announced_tso_seq);
        if last <= announced || self.resigned || !self.waits_on_galt() {
            return;
        }
        let me = self.me;
        let owed = self.time.statuses.values().any(|(_, s)| {
            let seen = seen_in(&s.seen, me);
            matches!(s.advance, Advance::Ner { .. })
                && s.constrained
                && s.regulation == Regulation::On
                && !s.resigned
                && seen < last
                && seen >= announced
        });
        if owed {
            self.publish_status(link, StatusReason::Changed);
        }
    }

    fn grant(&mut self, link: &mut impl Link, time: LogicalTime, available: bool) {
        self.time.logical_time = time;
        self.time.last_grant_available = available;
        self.time.advance = Advance::Idle;
        self.callbacks
            .push_back(Callback::TimeAdvanceGrant { time });
        // After a time advance request the promise made while waiting (t + lookahead)
        // is already what the grant implies: peers learn nothing new, so nothing is
        // sent. Grants that raise the promise (next message, flush) are published.
        if self.time.regulation == Regulation::On && self.promise() > self.time.promise_floor {
            self.publish_status(link, StatusReason::Changed);
        }
    }

    /// Moves time management forward as far as the held statuses allow: enables
    /// pending modes, delivers what is safe and grants what can be granted; then, if
    /// still waiting, announces what peers must know for us to move later.
    fn evaluate(&mut self, link: &mut impl Link) {
        if self.resigned {
            return;
        }
        self.evaluate_grants(link);
        self.announce_if_owed(link);
    }

    fn evaluate_grants(&mut self, link: &mut impl Link) {
        self.try_complete_regulation(link);
        if !self.waits_on_galt() {
            // Nothing here depends on GALT (its computation is the costly part of
            // handling an envelope): grant an unconstrained request at once.
            if let Advance::Tar { time, available }
            | Advance::Ner {
                time, available, ..
            } = self.time.advance
            {
                if self.time.constrained == Constrained::Off {
                    self.grant(link, time, available);
                }
            }
            return;
        }
        let galt = self.galt();
        if self.time.constrained == Constrained::Pending && galt >= self.time.logical_time {
            self.time.constrained = Constrained::On;
            // Enabled once GALT reached our time: a message at exactly that time may
            // still come, as after an "available" grant.
            self.time.last_grant_available = true;
            self.callbacks.push_back(Callback::TimeConstrainedEnabled {
                time: self.time.logical_time,
            });
            if self.time.regulation != Regulation::Off {
                self.publish_status(link, StatusReason::Changed);
            }
        }
        let constrained = self.time.constrained == Constrained::On;
        match self.time.advance {
            Advance::Idle => {}
            Advance::Tar { time, available } => {
                if !constrained {
                    self.grant(link, time, available);
                    return;
                }
                // Deliver what is already safe, then grant when the request is.
                while let Some(h) = self.queue_head() {
                    if h <= time && h < galt {
                        let Reverse(q) = self.time.queue.pop().expect("head");
                        self.deliver_tso(q);
                    } else {
                        break;
                    }
                }
                if grant_allowed(time, available, galt) {
                    while self.queue_head().is_some_and(|h| h <= time) {
                        let Reverse(q) = self.time.queue.pop().expect("head");
                        self.deliver_tso(q);
                    }
                    self.grant(link, time, available);
                }
            }
            Advance::Ner {
                time, available, ..
            } => {
                if !constrained {
                    self.grant(link, time, available);
                    return;
                }
                let next = self.queue_head().map_or(time, |h| h.min(time));
                if grant_allowed(next, available, galt) {
                    while self.queue_head().is_some_and(|h| h <= next) {
                        let Reverse(q) = self.time.queue.pop().expect("head");
                        self.deliver_tso(q);
                    }
                    self.grant(link, next, available);
                } else if self.time.regulation == Regulation::On
                    && self.promise_given(Some(galt)) > self.time.promise_floor
                {
                    // GALT moved: a higher unconditional promise lets peers move too.
                    self.publish_status_given(link, StatusReason::Changed, Some(galt));
                }
            }
        }
    }

    fn try_complete_regulation(&mut self, link: &mut impl Link) {
        let Some(p) = &mut self.time.pending_regulation else {
            return;
        };
        let status_seq = p.status_seq;
        let statuses = &self.time.statuses;
        let before = p.earliest;
        let mut earliest = p.earliest;
        let me = self.me;
        p.waiting.retain(|f| {
            let Some((_, s)) = statuses.get(f) else {
                return true;
            };
            let seen = seen_in(&s.seen, me);
            if s.resigned {
                return false;
            }
            if seen < status_seq {
                return true;
            }
            if s.constrained {
                earliest = earliest.max(s.logical_time).max(s.delivered_up_to);
            }
            false
        });
        let waiting = !p.waiting.is_empty();
        if !waiting {
            // With zero lookahead a message at `earliest` would land in the past of a
            // peer whose last grant was not an "available" one, or behind messages it
            // already delivered there: start just after it.
            let lt = self.time.logical_time.max(earliest);
            if self.time.lookahead == LogicalTimeInterval::ZERO
                && statuses.values().any(|(_, s)| {
                    s.constrained
                        && ((!s.last_grant_available && s.logical_time == lt)
                            || s.delivered_up_to == lt)
                })
            {
                earliest = lt.next_after();
            }
        }
        p.earliest = earliest;
        if earliest > before {
            // We will start no earlier than this: promise it now, so regulators behind
            // us are not held back by our old time.
            self.publish_status(link, StatusReason::Changed);
        }
        if waiting {
            return;
        }
        let lt = self.time.logical_time.max(earliest);
        if self.time.constrained == Constrained::On && lt > self.time.logical_time {
            // Jumping forward is a time advance for a constrained federate: wait until
            // nothing earlier can arrive, and deliver what is queued before `lt`.
            let galt = self.galt();
            while self.queue_head().is_some_and(|h| h < lt && h < galt) {
                let Reverse(q) = self.time.queue.pop().expect("head");
                self.deliver_tso(q);
            }
            if galt < lt {
                return;
            }
            self.time.last_grant_available = true;
        }
        self.time.pending_regulation = None;
        self.time.logical_time = lt;
        self.time.regulation = Regulation::On;
        self.publish_status(link, StatusReason::Changed);
        self.callbacks
            .push_back(Callback::TimeRegulationEnabled { time: lt });
    }

    // ----- incoming messages -----------------------------------------------------------

    /// Processes one envelope from the transport, then advances time management.
    pub fn handle_envelope(&mut self, link: &mut impl Link, env: Envelope) {
        if self.resigned || env.sender == self.me {
            return;
        }
        self.stats.received += 1;
        let last = self.last_seq_from.get(&env.sender).copied().unwrap_or(0);
        if env.seq <= last {
            self.stats.out_of_order += 1;
            self.stats.last_peer_error = Some(PeerError::OutOfOrder {
                sender: env.sender,
                seq: env.seq,
                last,
            });
            return;
        }
        self.last_seq_from.insert(env.sender, env.seq);
        let Envelope {
            sender,
            seq,
            publish_time_ns,
            body,
        } = env;
        if self.ghosts.contains(&sender) && !matches!(body, Body::TimeStatus(_) | Body::Exec(_)) {
            // Published before we could subscribe any data topic: not ours to deliver.
            self.stats.from_departed += 1;
            return;
        }
        let mut republish = false;
        match body {
            Body::TimeStatus(status) => republish = self.handle_status(link, sender, seq, status),
            Body::Exec(n) => self.handle_notification(link, n),
            Body::Register {
                instance,
                class,
                name,
            } => {
                if self.fom.object_class(class).is_none() {
                    self.peer_error(PeerError::UnknownObjectClass { sender, class });
                } else {
                    self.discover(instance, class, &name, sender);
                }
            }
            Body::RequestUpdate {
                instance,
                class,
                attributes,
                tag,
            } => {
                let targets: Vec<ObjectInstanceHandle> = match instance {
                    Some(i) => self
                        .owned
                        .contains_key(&i)
                        .then_some(i)
                        .into_iter()
                        .collect(),
                    None => self
                        .owned
                        .iter()
                        .filter(|(_, o)| self.fom.is_object_subclass_of(o.class, class))
                        .map(|(i, _)| *i)
                        .collect(),
                };
                for instance in targets {
                    self.callbacks
                        .push_back(Callback::ProvideAttributeValueUpdate {
                            instance,
                            attributes: attributes.to_vec(),
                            tag: tag.clone(),
                        });
                }
            }
            body => match body.tso_time() {
                Some(t) if self.time.constrained == Constrained::On => {
                    let promise = self.time.statuses.get(&sender).map(|(_, s)| s.promise);
                    let lower = if self.time.last_grant_available {
                        t < self.time.logical_time
                    } else {
                        t <= self.time.logical_time
                    };
                    if promise.is_some_and(|p| t < p) || lower {
                        self.peer_error(PeerError::BrokenPromise {
                            sender,
                            time: t,
                            promise: promise.unwrap_or(LogicalTime::NEG_INFINITY),
                        });
                        self.stats.broken_promises += 1;
                        self.deliver(sender, seq, publish_time_ns, body, OrderType::Receive);
                    } else {
                        self.time.queue.push(Reverse(Queued {
                            time: t,
                            sender,
                            seq,
                            publish_time_ns,
                            body,
                        }));
                        republish = matches!(self.time.advance, Advance::Ner { .. });
                    }
                }
                _ => self.deliver(sender, seq, publish_time_ns, body, OrderType::Receive),
            },
        }
        if republish
            && self.time.regulation == Regulation::On
            && self.time.constrained == Constrained::On
        {
            self.publish_status(link, StatusReason::Changed);
        }
        self.evaluate(link);
    }

    fn peer_error(&mut self, e: PeerError) {
        match e {
            PeerError::UnknownObjectClass { .. } | PeerError::UnknownInteractionClass { .. } => {
                self.stats.unknown_class += 1
            }
            _ => {}
        }
        self.stats.last_peer_error = Some(e);
    }

    /// Returns true when our own status should be republished.
    fn handle_status(
        &mut self,
        link: &mut impl Link,
        sender: FederateHandle,
        seq: u64,
        status: TimeStatus,
    ) -> bool {
        let mut republish = false;
        // A peer becoming regulating waits for everybody's status: answer once.
        // Once per enabling episode: two pending federates would otherwise answer each
        // other's answers forever.
        if status.regulation != Regulation::Pending {
            self.time.acked.remove(&sender);
        } else if self.time.acked.insert(sender) {
            self.time.statuses.insert(sender, (seq, status.clone()));
            self.time.awaited_regulators.remove(&sender);
            self.publish_status(link, StatusReason::Answer);
            return false;
        }
        // A waiting federate's published `seen` must cover every regulator's latest
        // time-stamped message for others to trust its conditional bound.
        if let Advance::Ner { .. } = self.time.advance {
            let published = self.time.published_seen.get(&sender).copied().unwrap_or(0);
            if status.last_tso_seq > published {
                republish = true;
            }
        }
        self.time.awaited_regulators.remove(&sender);
        if status.resigned {
            if let Some(p) = &mut self.time.pending_regulation {
                p.waiting.remove(&sender);
            }
        }
        // Resigned federates stay in the table (excluded from GALT): their last
        // time-stamped messages may still be in flight to a waiting peer.
        self.time.statuses.insert(sender, (seq, status));
        republish
    }

    fn handle_notification(&mut self, link: &mut impl Link, n: Notification) {
        match n {
            Notification::FederateJoined {
                federate,
                name,
                federate_type,
            } => {
                if federate == self.me {
                    return;
                }
                self.members.insert(
                    federate,
                    FederateInfo {
                        handle: federate,
                        name,
                        federate_type,
                    },
                );
                // The newcomer subscribed before joining; tell it where we stand.
                if self.time.regulation != Regulation::Off {
                    self.publish_status(link, StatusReason::Answer);
                }
            }
            Notification::FederateResigned { federate } => {
                // Not yet done with it as a regulator: this notification comes from the
                // executive and may overtake what the federate sent before resigning.
                // Its own last status (marked resigned) follows everything it sent, and
                // that is what releases GALT (simulator seed 100003103).
                self.members.remove(&federate);
            }
            Notification::AnnounceSynchronizationPoint {
                label,
                tag,
                targets,
            } => {
                if targets.contains(&self.me) {
                    self.announced.insert(label.clone());
                    self.callbacks
                        .push_back(Callback::AnnounceSynchronizationPoint { label, tag });
                }
            }
            Notification::FederationSynchronized {
                label,
                failed,
                targets,
            } => {
                if targets.contains(&self.me) {
                    self.announced.remove(&label);
                    self.callbacks
                        .push_back(Callback::FederationSynchronized { label, failed });
                }
            }
        }
    }

    fn deliver_tso(&mut self, q: Queued) {
        self.time.delivered_up_to = self.time.delivered_up_to.max(q.time);
        self.deliver(
            q.sender,
            q.seq,
            q.publish_time_ns,
            q.body,
            OrderType::TimeStamp,
        );
    }

    /// Turns a data body into a callback, filtered by the current subscriptions.
    fn deliver(
        &mut self,
        producer: FederateHandle,
        seq: u64,
        publish_time_ns: u64,
        body: Body,
        received_order: OrderType,
    ) {
        let info = |sent_order, transport, time| MessageInfo {
            producer,
            seq,
            sent_order,
            received_order,
            transport,
            time,
            publish_time_ns,
        };
        let cb = match body {
            Body::Update {
                instance,
                values,
                tag,
                order,
                transport,
                time,
                ..
            } => {
                let Some(known) = self.known.get(&instance) else {
                    self.stats.unknown_instance += 1;
                    return;
                };
                let class = known.known_class;
                let Some(subscribed) = self.subscribed_attributes.get(&class) else {
                    return;
                };
                let values: Values<AttributeHandle> =
                    if values.iter().all(|(a, _)| subscribed.contains(a)) {
                        values
                    } else {
                        values
                            .iter()
                            .filter(|(a, _)| subscribed.contains(a))
                            .cloned()
                            .collect()
                    };
                if values.is_empty() {
                    return;
                }
                Callback::ReflectAttributeValues {
                    instance,
                    class,
                    values,
                    tag,
                    info: info(order, transport, time),
                }
            }
            Body::Interaction {
                class,
                values,
                tag,
                order,
                transport,
                time,
            } => {
                if self.fom.interaction_class(class).is_none() {
                    self.peer_error(PeerError::UnknownInteractionClass {
                        sender: producer,
                        class,
                    });
                    return;
                }
                let Some(as_class) = self.subscribed_interaction_class_for(class) else {
                    return;
                };
                let own = &self.fom.interaction_classes[as_class.index()].all_parameters;
                let values: Values<ParameterHandle> = if values.iter().all(|(p, _)| own.contains(p))
                {
                    values
                } else {
                    values
                        .iter()
                        .filter(|(p, _)| own.contains(p))
                        .cloned()
                        .collect()
                };
                Callback::ReceiveInteraction {
                    class: as_class,
                    values,
                    tag,
                    info: info(order, transport, time),
                }
            }
            Body::Delete {
                instance,
                tag,
                order,
                time,
                ..
            } => {
                if self.known.remove(&instance).is_none() {
                    self.stats.unknown_instance += 1;
                    return;
                }
                Callback::RemoveObjectInstance {
                    instance,
                    tag,
                    info: info(order, TransportationType::Reliable, time),
                }
            }
            _ => return,
        };
        self.stats.delivered += 1;
        self.callbacks.push_back(cb);
    }
}

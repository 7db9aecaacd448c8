//! The simulated network: per-(sender, receiver) FIFO delivery with random delays,
//! and the [`Link`] a simulated federate talks through.
//!
//! Envelopes wait in one heap ordered by (delivery time, sender, receiver, send
//! order). A queue's delivery times never decrease, so one sender's envelopes reach
//! one receiver in order while different senders overtake each other.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap, HashSet};

use glidepath_core::{
    regions_overlap, Body, Envelope, ExecReply, ExecRequest, ExecutiveHost, FederateHandle,
    FederationId, Link, LocalRti, Output, RegionSet, RtiError, TimeStatus, Topic,
};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The executive's node number in the network.
pub(crate) const EXEC_NODE: usize = usize::MAX;

/// One envelope in flight.
struct InFlight {
    key: (u64, usize, usize, u64),
    // Boxed: the heap moves entries as it sifts, and an envelope is large.
    envelope: Box<Envelope>,
}
impl PartialEq for InFlight {
    fn eq(&self, o: &Self) -> bool {
        self.key == o.key
    }
}
impl Eq for InFlight {}
impl PartialOrd for InFlight {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for InFlight {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.key.cmp(&o.key)
    }
}

/// Envelopes in flight, subscriptions, and what the checkers watch on the wire.
#[derive(Default)]
pub(crate) struct Network {
    heap: BinaryHeap<Reverse<InFlight>>,
    /// Delivery time of the last envelope queued per (sender, receiver).
    last_at: HashMap<(usize, usize), u64>,
    sent: u64,
    pub(crate) subscribers: BTreeMap<(FederationId, Topic), BTreeSet<usize>>,
    pub(crate) envelopes: u64,
    /// Set while a federate handles a `FederateJoined` notification: it greets the
    /// newcomer with its status even when nothing changed.
    pub(crate) greeting: bool,
    /// Each sender's last status.
    last_status: HashMap<FederateHandle, TimeStatus>,
    /// A status sent again with nothing new in it (see [`Network::watch_status`]).
    pub(crate) storm: Option<String>,
    pub(crate) statuses: u64,
    /// The buffer a federate's outputs are carried out of ([`SimLink::flush`]).
    pub(crate) spare: Vec<Output>,
    /// Updates (sender, seq) whose sender owned every updated attribute, by the
    /// executive's registry, when it sent them.
    pub(crate) owner_checked: HashSet<(FederateHandle, u64)>,
    /// Invariant violations found while carrying outputs out.
    pub(crate) violations: Vec<String>,
    /// What each subscriber wants of a topic (data distribution management): a
    /// message sent with regions none of these overlaps is not sent to it, as the
    /// in-process bus filters at the source. Absent: everything.
    pub(crate) interest: HashMap<(FederationId, Topic, usize), RegionSet>,
    /// Copies sent to nobody because of `interest`.
    pub(crate) filtered_at_source: u64,
    /// When set, every envelope a federate publishes, with its sender's node and the
    /// nodes it was sent to, for a checker that models what each receiver should get
    /// (the DDM simulator).
    pub(crate) published: Option<Vec<(usize, Envelope, Vec<usize>)>>,
}

impl Network {
    pub(crate) fn send(
        &mut self,
        rng: &mut ChaCha8Rng,
        now: u64,
        from: usize,
        federation: FederationId,
        topic: Topic,
        env: Envelope,
    ) {
        if let Body::TimeStatus(s) = &env.body {
            self.watch_status(env.sender, env.seq, s);
        }
        let mut sent_to = Vec::new();
        if let Some(subs) = self.subscribers.get(&(federation, topic)) {
            for &to in subs {
                if to == from {
                    continue;
                }
                if env.body.regions().is_some()
                    && !regions_overlap(
                        env.body.regions(),
                        self.interest.get(&(federation, topic, to)),
                    )
                {
                    self.filtered_at_source += 1;
                    continue;
                }
                // Mostly short delays, sometimes a long one: different senders overtake
                // each other, one sender's envelopes never do.
                let delay = if rng.gen_bool(0.05) {
                    rng.gen_range(500_000..5_000_000)
                } else {
                    rng.gen_range(1_000..100_000)
                };
                let last = self.last_at.entry((from, to)).or_insert(0);
                let at = (*last).max(now + delay);
                *last = at;
                let mut e = env.clone();
                e.publish_time_ns = now;
                self.sent += 1;
                self.heap.push(Reverse(InFlight {
                    key: (at, from, to, self.sent),
                    envelope: Box::new(e),
                }));
                self.envelopes += 1;
                sent_to.push(to);
            }
        }
        if let Some(published) = &mut self.published {
            if from != EXEC_NODE {
                published.push((from, env, sent_to));
            }
        }
    }

    /// A status identical to the sender's previous one (other than a newcomer's
    /// greeting) tells nobody anything: statuses that circle forever start this way.
    fn watch_status(&mut self, sender: FederateHandle, seq: u64, status: &TimeStatus) {
        self.statuses += 1;
        if let Some(last) = self.last_status.get(&sender) {
            if last == status && !self.greeting && self.storm.is_none() {
                self.storm = Some(format!(
                    "status storm: {sender} re-sent an unchanged time status (seq {seq}): {status:?}"
                ));
            }
        }
        self.last_status.insert(sender, status.clone());
    }

    /// The delivery time of the next envelope.
    pub(crate) fn next_at(&self) -> Option<u64> {
        self.heap.peek().map(|Reverse(f)| f.key.0)
    }

    /// Takes the next envelope: (delivery time, receiver, envelope).
    pub(crate) fn pop(&mut self) -> Option<(u64, usize, Envelope)> {
        self.heap
            .pop()
            .map(|Reverse(f)| (f.key.0, f.key.2, *f.envelope))
    }

    /// True when nothing is in flight.
    pub(crate) fn is_quiet(&self) -> bool {
        self.heap.is_empty()
    }
}

/// The [`Link`] of one simulated federate.
pub(crate) struct SimLink<'a> {
    pub(crate) node: usize,
    pub(crate) now: u64,
    pub(crate) net: &'a mut Network,
    pub(crate) exec: &'a mut ExecutiveHost,
    pub(crate) rng: &'a mut ChaCha8Rng,
}

impl SimLink<'_> {
    /// Carries out what the federate queued, in order.
    pub(crate) fn carry_out(&mut self, queued: &mut Vec<Output>) {
        for output in queued.drain(..) {
            match output {
                Output::Publish {
                    federation,
                    topic,
                    envelope,
                } => {
                    self.check_owner(federation, &envelope);
                    self.net
                        .send(self.rng, self.now, self.node, federation, topic, envelope)
                }
                Output::Subscribe { federation, topic } => {
                    self.net
                        .subscribers
                        .entry((federation, topic))
                        .or_default()
                        .insert(self.node);
                }
                Output::Unsubscribe { federation, topic } => {
                    if let Some(s) = self.net.subscribers.get_mut(&(federation, topic)) {
                        s.remove(&self.node);
                    }
                }
                // Effective for what is sent after it, as on the in-process bus.
                Output::Interest {
                    federation,
                    topic,
                    regions,
                } => {
                    let key = (federation, topic, self.node);
                    match regions {
                        Some(r) => self.net.interest.insert(key, r),
                        None => self.net.interest.remove(&key),
                    };
                }
            }
        }
    }

    /// An update leaves its sender only if the executive records the sender as the
    /// owner of every attribute in it at that instant (or the instance is already
    /// deleted there: a deletion the sender has not heard of yet).
    fn check_owner(&mut self, federation: FederationId, envelope: &Envelope) {
        let Body::Update {
            instance, values, ..
        } = &envelope.body
        else {
            return;
        };
        let Some(fed) = self.exec.executive().federation(federation) else {
            return;
        };
        if !fed.instance_exists(*instance) {
            // Deleted by the holder of the privilege before this owner heard: its
            // last word on an instance that no longer exists (receivers that already
            // removed it drop it).
            self.net
                .owner_checked
                .insert((envelope.sender, envelope.seq));
            return;
        }
        for (a, _) in values.iter() {
            let owner = fed.attribute_owner(*instance, *a);
            if owner != Some(envelope.sender) {
                self.net.violations.push(format!(
                    "{} updated {a:?} of {instance} (seq {}) while the executive records {owner:?} as its owner",
                    envelope.sender, envelope.seq
                ));
                return;
            }
        }
        self.net
            .owner_checked
            .insert((envelope.sender, envelope.seq));
    }

    /// Carries out everything `lrc` queued (one buffer reused across calls).
    pub(crate) fn flush(&mut self, lrc: &mut LocalRti) {
        let mut queued = std::mem::take(&mut self.net.spare);
        lrc.take_outputs(&mut queued);
        self.carry_out(&mut queued);
        self.net.spare = queued;
    }
}

impl Link for SimLink<'_> {
    fn request(
        &mut self,
        queued: &mut Vec<Output>,
        request: ExecRequest,
    ) -> Result<ExecReply, RtiError> {
        self.carry_out(queued);
        let hosted = self.exec.handle(request, self.now);
        if let Some(fed) = hosted.federation {
            for env in hosted.notifications {
                self.net
                    .send(self.rng, self.now, EXEC_NODE, fed, Topic::Federation, env);
            }
        }
        Ok(hosted.reply)
    }
}

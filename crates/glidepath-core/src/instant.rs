//! A federation of [`LocalRti`]s on an instant, in-memory network, driven in one
//! thread: for benchmarks, examples and tests that exercise the core without a
//! transport (the seeded simulator has its own network, with delays).
//!
//! Every federate is a number (its index); envelopes wait in per-federate inboxes
//! until [`InstantNetwork::drain`] hands them over, and the executive answers at once
//! through an [`ExecutiveHost`].

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::error::RtiError;
use crate::exec::{ExecReply, ExecRequest};
use crate::host::ExecutiveHost;
use crate::local_rti::{Link, LocalRti, Output};
use crate::message::{Envelope, Topic};
use crate::types::FederationId;

/// The network, the executive and every federate's inbox.
#[derive(Default)]
pub struct InstantNetwork {
    /// The executive every request reaches.
    pub host: ExecutiveHost,
    subscribers: BTreeMap<(FederationId, Topic), BTreeSet<usize>>,
    inboxes: Vec<VecDeque<Envelope>>,
    /// Envelopes delivered to inboxes so far (one per receiver).
    pub envelopes: u64,
    spare: Vec<Output>,
}

/// The [`Link`] of federate `me` on an [`InstantNetwork`].
pub struct InstantLink<'a> {
    me: usize,
    net: &'a mut InstantNetwork,
}

impl InstantNetwork {
    /// An empty network with an executive that hosts no federation yet.
    pub fn new() -> InstantNetwork {
        InstantNetwork::default()
    }

    /// Federate `me`'s link (its inbox is made when it first appears).
    pub fn link(&mut self, me: usize) -> InstantLink<'_> {
        if self.inboxes.len() <= me {
            self.inboxes.resize_with(me + 1, VecDeque::new);
        }
        InstantLink { me, net: self }
    }

    /// Joins federate `me` to `federation` and carries out what the join queued.
    pub fn join(
        &mut self,
        me: usize,
        federation: &str,
        federate_name: &str,
    ) -> Result<LocalRti, RtiError> {
        let mut fed = LocalRti::join(&mut self.link(me), federation, Some(federate_name), "test")?;
        self.flush(me, &mut fed);
        Ok(fed)
    }

    /// Carries out what federate `me` queued; true when it had something.
    pub fn flush(&mut self, me: usize, fed: &mut LocalRti) -> bool {
        let mut queued = std::mem::take(&mut self.spare);
        fed.take_outputs(&mut queued);
        let any = !queued.is_empty();
        self.carry_out(me, &mut queued);
        self.spare = queued;
        any
    }

    /// Carries out what every federate queued and delivers every envelope in flight,
    /// until nothing moves. `seen` is shown each envelope with its receiver before
    /// that receiver handles it; callbacks stay queued in the federates.
    pub fn drain(&mut self, feds: &mut [LocalRti], mut seen: impl FnMut(usize, &Envelope)) {
        loop {
            let mut moved = false;
            for (i, fed) in feds.iter_mut().enumerate() {
                moved |= self.flush(i, fed);
                while let Some(env) = self.inboxes.get_mut(i).and_then(VecDeque::pop_front) {
                    seen(i, &env);
                    fed.handle_envelope(env);
                    self.flush(i, fed);
                    moved = true;
                }
            }
            if !moved {
                break;
            }
        }
    }

    fn carry_out(&mut self, me: usize, queued: &mut Vec<Output>) {
        for output in queued.drain(..) {
            match output {
                Output::Publish {
                    federation,
                    topic,
                    envelope,
                } => self.send(Some(me), federation, topic, envelope),
                Output::Subscribe { federation, topic } => {
                    self.subscribers
                        .entry((federation, topic))
                        .or_default()
                        .insert(me);
                }
                Output::Unsubscribe { federation, topic } => {
                    if let Some(s) = self.subscribers.get_mut(&(federation, topic)) {
                        s.remove(&me);
                    }
                }
                // Receivers filter by regions themselves: nothing to do here.
                Output::Interest { .. } => {}
            }
        }
    }

    /// Puts a copy in every subscriber's inbox but the sender's (`None`: the executive).
    fn send(&mut self, from: Option<usize>, fed: FederationId, topic: Topic, env: Envelope) {
        let Some(subscribers) = self.subscribers.get(&(fed, topic)) else {
            return;
        };
        for &to in subscribers {
            if Some(to) != from {
                if self.inboxes.len() <= to {
                    self.inboxes.resize_with(to + 1, VecDeque::new);
                }
                self.inboxes[to].push_back(env.clone());
                self.envelopes += 1;
            }
        }
    }
}

impl Link for InstantLink<'_> {
    fn request(
        &mut self,
        queued: &mut Vec<Output>,
        request: ExecRequest,
    ) -> Result<ExecReply, RtiError> {
        self.net.carry_out(self.me, queued);
        let hosted = self.net.host.handle(request, 0);
        if let Some(fed) = hosted.federation {
            for env in hosted.notifications {
                self.net.send(None, fed, Topic::Federation, env);
            }
        }
        Ok(hosted.reply)
    }
}

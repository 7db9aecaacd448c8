//! Random ownership schedules and their invariants: federates divest (unconditionally,
//! negotiated then confirmed, if wanted), acquire (and if available), cancel both,
//! deny releases, query, and resign with requests pending. After every step that
//! touches an instance's ownership, at most one federate claims each of its
//! attributes and the executive agrees with every claim; at every quiescent point
//! the federates' claims and the executive's registry are the same, and every
//! acquisition the executive holds is one a federate still waits for; at the end
//! every acquisition has ended. Every update is checked against the executive's
//! registry when it is sent (`network.rs`), and every reflection must be such an update.

use bytes::Bytes;
use glidepath_core::{
    AttributeHandle, Callback, FederationExecution, LocalRti, ObjectClassHandle,
    ObjectInstanceHandle, OwnershipError, ResignAction, RtiError,
};
use rand::Rng;

use crate::network::SimLink;
use crate::{Phase, Sim, SimFailure};

impl Sim {
    /// The federation execution, as the executive holds it.
    fn federation_execution(&self) -> Option<&FederationExecution> {
        let id = self.nodes.iter().find_map(|n| n.lrc.as_ref())?.federation();
        self.exec.executive().federation(id)
    }

    /// Calls an ownership service; the errors a race with the executive may cause
    /// (the instance was deleted, or the federate that waited cancelled meanwhile)
    /// come back as `None`, any other error fails the run.
    fn own_call<R>(
        &mut self,
        idx: usize,
        f: impl FnOnce(&mut LocalRti, &mut SimLink) -> Result<R, RtiError>,
    ) -> Result<Option<R>, SimFailure> {
        self.out.ownership_requests += 1;
        let (nodes, mut link) = self.link_of(idx);
        let lrc = nodes[idx].lrc.as_mut().expect("joined");
        let result = f(lrc, &mut link);
        link.flush(lrc);
        self.generation += 1;
        match result {
            Ok(r) => Ok(Some(r)),
            Err(RtiError::Ownership(
                OwnershipError::ObjectInstanceNotKnown(_) | OwnershipError::NoAcquisitionPending(_),
            )) => Ok(None),
            Err(e) => Err(self.fail(format!("federate {idx}: unexpected error: {e}"))),
        }
    }

    /// Keeps the federate's list of instances it owns something of in step with its RTI.
    pub(crate) fn refresh_owned(&mut self, idx: usize, instance: ObjectInstanceHandle) {
        let n = &mut self.nodes[idx];
        let Some(lrc) = n.lrc.as_ref() else {
            return;
        };
        let owns = !lrc.owned_attributes(instance).is_empty();
        let listed = n.owned.iter().position(|(i, _)| *i == instance);
        match (owns, listed) {
            (false, Some(p)) => {
                n.owned.remove(p);
            }
            (true, None) => {
                let class = n
                    .registered
                    .get(&instance)
                    .or_else(|| n.discovered.get(&instance))
                    .copied();
                if let Some(class) = class {
                    n.owned.push((instance, class));
                }
            }
            _ => {}
        }
    }

    /// A random subset (never empty when `from` is not) of `from`.
    fn some_of(&mut self, from: &[AttributeHandle]) -> Vec<AttributeHandle> {
        let mut picked: Vec<AttributeHandle> = from
            .iter()
            .copied()
            .filter(|_| self.rng.gen_bool(0.6))
            .collect();
        if picked.is_empty() && !from.is_empty() {
            picked.push(from[self.rng.gen_range(0..from.len())]);
        }
        picked
    }

    /// Instances the federate knows (registered or discovered) with the class it
    /// knows them as, in handle order.
    fn known_instances(&self, idx: usize) -> Vec<(ObjectInstanceHandle, ObjectClassHandle)> {
        let n = &self.nodes[idx];
        let mut v: Vec<_> = n
            .registered
            .iter()
            .chain(n.discovered.iter())
            .map(|(i, c)| (*i, *c))
            .collect();
        v.sort_unstable();
        v.dedup_by_key(|(i, _)| *i);
        v
    }

    /// One random ownership service by federate `idx`.
    pub(crate) fn ownership_action(&mut self, idx: usize) -> Result<(), SimFailure> {
        let roll = self.rng.gen_range(0..100);
        let lrc = self.nodes[idx].lrc.as_ref().expect("joined");
        let instance = match roll {
            // Acquire (a third of them if available).
            0..=34 => {
                let candidates: Vec<(ObjectInstanceHandle, Vec<AttributeHandle>)> = self
                    .known_instances(idx)
                    .into_iter()
                    .filter_map(|(i, class)| {
                        let published = self.nodes[idx].published.get(&class)?;
                        let (owned, acquiring) =
                            (lrc.owned_attributes(i), lrc.acquiring_attributes(i));
                        let free: Vec<_> = published
                            .iter()
                            .copied()
                            .filter(|a| !owned.contains(a) && !acquiring.contains(a))
                            .collect();
                        (!free.is_empty()).then_some((i, free))
                    })
                    .collect();
                if candidates.is_empty() {
                    return Ok(());
                }
                let (instance, free) = candidates[self.rng.gen_range(0..candidates.len())].clone();
                let attributes = self.some_of(&free);
                let if_available = self.rng.gen_bool(0.33);
                let asked = self.own_call(idx, |l, k| {
                    if if_available {
                        l.attribute_ownership_acquisition_if_available(k, instance, &attributes)
                    } else {
                        l.attribute_ownership_acquisition(k, instance, &attributes, Bytes::new())
                    }
                })?;
                if asked.is_some() {
                    self.out.acquisitions += attributes.len() as u64;
                    let n = &mut self.nodes[idx];
                    n.acquiring
                        .extend(attributes.iter().map(|a| (instance, *a)));
                }
                self.log(format!(
                    "{idx} acquires {attributes:?} of {instance} (if available: {if_available})"
                ));
                instance
            }
            // Divest: unconditionally, negotiated, or if wanted.
            35..=64 | 90..=99 => {
                if self.nodes[idx].owned.is_empty() {
                    return Ok(());
                }
                let i = self.rng.gen_range(0..self.nodes[idx].owned.len());
                let instance = self.nodes[idx].owned[i].0;
                let owned = lrc.owned_attributes(instance);
                let divesting = lrc.divesting_attributes(instance);
                match roll {
                    35..=49 => {
                        let attributes = self.some_of(&owned);
                        self.own_call(idx, |l, k| {
                            l.unconditional_attribute_ownership_divestiture(
                                k,
                                instance,
                                &attributes,
                            )
                        })?;
                        self.log(format!("{idx} divests {attributes:?} of {instance}"));
                    }
                    50..=64 => {
                        let offerable: Vec<_> = owned
                            .iter()
                            .copied()
                            .filter(|a| !divesting.contains(a))
                            .collect();
                        let attributes = self.some_of(&offerable);
                        if attributes.is_empty() {
                            return Ok(());
                        }
                        self.own_call(idx, |l, k| {
                            l.negotiated_attribute_ownership_divestiture(
                                k,
                                instance,
                                &attributes,
                                Bytes::from_static(b"offer"),
                            )
                        })?;
                        self.log(format!("{idx} offers {attributes:?} of {instance}"));
                    }
                    _ => {
                        let attributes = self.some_of(&owned);
                        self.own_call(idx, |l, k| {
                            l.attribute_ownership_divestiture_if_wanted(k, instance, &attributes)
                        })?;
                        self.log(format!(
                            "{idx} divests if wanted {attributes:?} of {instance}"
                        ));
                    }
                }
                instance
            }
            // Cancel an acquisition or an offer.
            65..=79 => {
                let cancel_acquisition = roll < 75;
                let pending: Vec<(ObjectInstanceHandle, Vec<AttributeHandle>)> = self
                    .known_instances(idx)
                    .into_iter()
                    .map(|(i, _)| {
                        let v = if cancel_acquisition {
                            lrc.acquiring_attributes(i)
                        } else {
                            lrc.divesting_attributes(i)
                        };
                        (i, v)
                    })
                    .filter(|(_, v)| !v.is_empty())
                    .collect();
                if pending.is_empty() {
                    return Ok(());
                }
                let (instance, from) = pending[self.rng.gen_range(0..pending.len())].clone();
                let attributes = self.some_of(&from);
                self.own_call(idx, |l, k| {
                    if cancel_acquisition {
                        l.cancel_attribute_ownership_acquisition(k, instance, &attributes)
                    } else {
                        l.cancel_negotiated_attribute_ownership_divestiture(
                            k,
                            instance,
                            &attributes,
                        )
                    }
                })?;
                self.log(format!(
                    "{idx} cancels {} of {attributes:?} of {instance}",
                    if cancel_acquisition {
                        "the acquisition"
                    } else {
                        "the offer"
                    }
                ));
                instance
            }
            // Query.
            _ => {
                let known = self.known_instances(idx);
                if known.is_empty() {
                    return Ok(());
                }
                let (instance, class) = known[self.rng.gen_range(0..known.len())];
                let all = self.fom.object_classes[class.index()]
                    .all_attributes
                    .clone();
                let attribute = all[self.rng.gen_range(0..all.len())];
                self.own_call(idx, |l, k| {
                    l.query_attribute_ownership(k, instance, attribute)
                })?;
                instance
            }
        };
        self.refresh_owned(idx, instance);
        self.check_instance_ownership(instance)
    }

    /// Reacts to an ownership callback as a federate of the schedule would, and
    /// checks it. Returns false for callbacks of other services.
    pub(crate) fn ownership_callback(
        &mut self,
        idx: usize,
        cb: &Callback,
    ) -> Result<bool, SimFailure> {
        let ended = |s: &mut Sim, instance, attributes: &[AttributeHandle], what: &str| {
            let n = &mut s.nodes[idx];
            for a in attributes {
                if !n.acquiring.remove(&(instance, *a)) {
                    return Err(s.fail(format!(
                        "federate {idx}: {what} for {a:?} of {instance}, which it was not acquiring"
                    )));
                }
            }
            Ok(())
        };
        match cb {
            Callback::RequestAttributeOwnershipAssumption {
                instance,
                attributes,
                ..
            } => {
                let instance = *instance;
                if self.rng.gen_bool(0.5) {
                    let lrc = self.nodes[idx].lrc.as_ref().expect("joined");
                    let acquiring = lrc.acquiring_attributes(instance);
                    let wanted: Vec<_> = attributes
                        .iter()
                        .copied()
                        .filter(|a| !acquiring.contains(a))
                        .collect();
                    if !wanted.is_empty() {
                        let asked = self.own_call(idx, |l, k| {
                            l.attribute_ownership_acquisition_if_available(k, instance, &wanted)
                        })?;
                        if asked.is_some() {
                            self.out.acquisitions += wanted.len() as u64;
                            self.nodes[idx]
                                .acquiring
                                .extend(wanted.iter().map(|a| (instance, *a)));
                        }
                    }
                }
                self.check_instance_ownership(instance)?;
            }
            Callback::RequestDivestitureConfirmation {
                instance,
                attributes,
            } => {
                let instance = *instance;
                let confirmed = if self.rng.gen_bool(0.75) {
                    self.own_call(idx, |l, k| {
                        l.confirm_divestiture(k, instance, attributes, Bytes::from_static(b"ok"))
                    })?
                    .is_some()
                } else {
                    false
                };
                if !confirmed {
                    // Withdrawn (or nobody waits for some any more): the waiting
                    // federates are told, or this federate is asked to release.
                    self.own_call(idx, |l, k| {
                        l.cancel_negotiated_attribute_ownership_divestiture(k, instance, attributes)
                    })?;
                }
                self.refresh_owned(idx, instance);
                self.check_instance_ownership(instance)?;
            }
            Callback::RequestAttributeOwnershipRelease {
                instance,
                attributes,
                ..
            } => {
                let instance = *instance;
                if self.rng.gen_bool(0.6) {
                    self.own_call(idx, |l, k| {
                        l.attribute_ownership_divestiture_if_wanted(k, instance, attributes)
                    })?;
                } else {
                    self.own_call(idx, |l, k| {
                        l.attribute_ownership_release_denied(k, instance, attributes)
                    })?;
                }
                self.refresh_owned(idx, instance);
                self.check_instance_ownership(instance)?;
            }
            Callback::AttributeOwnershipAcquisitionNotification {
                instance,
                attributes,
                ..
            } => {
                ended(self, *instance, attributes, "acquisition notification")?;
                self.out.ownership_transfers += attributes.len() as u64;
                self.out.acquisitions_granted += attributes.len() as u64;
                self.refresh_owned(idx, *instance);
                self.check_instance_ownership(*instance)?;
            }
            Callback::AttributeOwnershipUnavailable {
                instance,
                attributes,
            } => {
                ended(self, *instance, attributes, "unavailable")?;
                self.out.acquisitions_unavailable += attributes.len() as u64;
            }
            Callback::ConfirmAttributeOwnershipAcquisitionCancellation {
                instance,
                attributes,
            } => {
                ended(self, *instance, attributes, "cancellation")?;
                self.out.acquisitions_cancelled += attributes.len() as u64;
            }
            Callback::InformAttributeOwnership {
                instance,
                attribute,
                ..
            }
            | Callback::AttributeIsNotOwned {
                instance,
                attribute,
            } => {
                // Answered in the same step: the registry has not changed since.
                let owner = self
                    .federation_execution()
                    .and_then(|f| f.attribute_owner(*instance, *attribute));
                let told = match cb {
                    Callback::InformAttributeOwnership { owner, .. } => Some(*owner),
                    _ => None,
                };
                if owner != told {
                    return Err(self.fail(format!(
                        "federate {idx}: query of {attribute:?} of {instance} answered {told:?}, the executive records {owner:?}"
                    )));
                }
            }
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// An instance this federate knew is gone: what it waited to acquire of it ended.
    pub(crate) fn instance_gone(&mut self, idx: usize, instance: ObjectInstanceHandle) {
        let n = &mut self.nodes[idx];
        let before = n.acquiring.len();
        n.acquiring.retain(|(i, _)| *i != instance);
        self.out.acquisitions_unavailable += (before - n.acquiring.len()) as u64;
        n.registered.remove(&instance);
        self.refresh_owned(idx, instance);
    }

    /// Resigns with the action that cancels pending acquisitions, deletes what it may
    /// and divests the rest: the schedules resign with requests pending.
    pub(crate) fn resign_node(&mut self, idx: usize) -> Result<(), SimFailure> {
        self.link_call(idx, |l, k| {
            l.resign(k, ResignAction::CancelThenDeleteThenDivest)
        })?;
        let n = &mut self.nodes[idx];
        self.out.acquisitions_cancelled += n.acquiring.len() as u64;
        n.acquiring.clear();
        n.owned.clear();
        n.phase = Phase::Resigned;
        n.wake_at = None;
        Ok(())
    }

    /// At most one federate claims each attribute of `instance`, and the executive
    /// records every claim (unless it deleted the instance and the claimant has not
    /// heard yet).
    pub(crate) fn check_instance_ownership(
        &mut self,
        instance: ObjectInstanceHandle,
    ) -> Result<(), SimFailure> {
        self.out.ownership_checks += 1;
        let fed = self.federation_execution();
        let exists = fed.is_some_and(|f| f.instance_exists(instance));
        let mut claimed: Vec<(AttributeHandle, usize)> = Vec::new();
        for n in &self.nodes {
            let Some(lrc) = n.lrc.as_ref().filter(|l| !l.is_resigned()) else {
                continue;
            };
            for a in lrc.owned_attributes(instance) {
                if let Some((_, other)) = claimed.iter().find(|(b, _)| *b == a) {
                    return Err(self.fail(format!(
                        "two owners: federates {other} and {} both own {a:?} of {instance}",
                        n.idx
                    )));
                }
                claimed.push((a, n.idx));
                let recorded = fed.and_then(|f| f.attribute_owner(instance, a));
                if exists && recorded != Some(lrc.handle()) {
                    return Err(self.fail(format!(
                        "federate {} owns {a:?} of {instance} in its view, the executive records {recorded:?}",
                        n.idx
                    )));
                }
            }
        }
        Ok(())
    }

    /// At a quiescent point nothing is in flight: every federate's view is the
    /// executive's registry exactly, and the executive holds exactly the acquisitions
    /// the federates wait for.
    pub(crate) fn check_all_ownership(&mut self) -> Result<(), SimFailure> {
        let Some(fed) = self.federation_execution() else {
            return Ok(());
        };
        let mut problem = None;
        for (instance, attribute, owner) in fed.attribute_owners() {
            let held = self.nodes.iter().any(|n| {
                n.lrc.as_ref().is_some_and(|l| {
                    l.handle() == owner
                        && !l.is_resigned()
                        && l.owned_attributes(instance).contains(&attribute)
                })
            });
            if !held {
                problem = Some(format!(
                    "quiescent: the executive records {owner} as the owner of {attribute:?} of {instance}, but it does not know"
                ));
                break;
            }
        }
        let waiting: usize = self
            .nodes
            .iter()
            .filter(|n| n.phase != Phase::Resigned)
            .map(|n| n.acquiring.len())
            .sum();
        if problem.is_none() && waiting != fed.pending_acquisitions() {
            problem = Some(format!(
                "quiescent: federates wait for {waiting} acquisitions, the executive holds {}",
                fed.pending_acquisitions()
            ));
        }
        let instances: Vec<ObjectInstanceHandle> = self
            .nodes
            .iter()
            .filter_map(|n| n.lrc.as_ref())
            .flat_map(|l| l.owned_instance_attributes().map(|(i, _)| i))
            .collect();
        if let Some(p) = problem {
            return Err(self.fail(p));
        }
        for instance in instances {
            self.check_instance_ownership(instance)?;
        }
        Ok(())
    }

    /// An acquisition some federate asked for that never ended, if any.
    pub(crate) fn ended_check(&self) -> Option<((ObjectInstanceHandle, AttributeHandle), usize)> {
        self.nodes
            .iter()
            .find_map(|n| n.acquiring.first().map(|k| (*k, n.idx)))
    }
}

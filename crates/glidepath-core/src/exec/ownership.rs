//! Ownership management in the executive: the federation's one registry of who owns
//! each instance attribute, and every transfer as one request it serialises.
//!
//! Why here and not in a protocol between federates: the executive already
//! serialises registration and deletion, and a transfer handled inside one request
//! is atomic by construction, on every transport: the old owner loses the attribute
//! in the same step the new one gains it, so at no instant do two federates own it.
//! A federate's own local view follows the executive's, never leads it: it loses an
//! attribute only when its own request returns (it is blocked meanwhile, so it
//! cannot update), and gains one only from a reply or a notification sent after the
//! executive recorded the transfer.
//!
//! Callbacks for the requester come back in the reply ([`OwnershipOutcome`]);
//! callbacks for other federates are [`Notification::Ownership`]s on the federation
//! topic, numbered with every other notification.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::{ExecReply, FederationExecution, InstanceInfo, Notification};
use crate::error::{FederationError, OwnershipError};
use crate::types::{FederateHandle, ObjectInstanceHandle, ResignAction};
use crate::AttributeHandle;

/// The name of the attribute whose owner may delete an instance.
pub(crate) const PRIVILEGE_TO_DELETE: &str = "HLAprivilegeToDeleteObject";

/// One ownership management service on attributes of one instance
/// ([`super::ExecRequest::Ownership`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum OwnershipRequest {
    /// Unconditional attribute ownership divestiture: the attributes go to the first
    /// federate waiting to acquire each, or to nobody (then they are offered).
    UnconditionalDivest { attributes: Vec<AttributeHandle> },
    /// Negotiated attribute ownership divestiture: offer the attributes; the owner
    /// keeps them until it confirms a divestiture.
    NegotiatedDivest {
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    },
    /// Confirm divestiture: hand offered attributes to the federates waiting.
    ConfirmDivestiture {
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    },
    /// Attribute ownership divestiture if wanted: hand over those attributes some
    /// federate waits for; the reply lists them.
    DivestIfWanted { attributes: Vec<AttributeHandle> },
    /// Cancel negotiated attribute ownership divestiture.
    CancelDivestiture { attributes: Vec<AttributeHandle> },
    /// Attribute ownership acquisition: take unowned attributes now, wait for the
    /// owner's release of the others.
    Acquire {
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    },
    /// Attribute ownership acquisition if available: take unowned attributes, wait
    /// only for offered ones, and report the rest unavailable.
    AcquireIfAvailable { attributes: Vec<AttributeHandle> },
    /// Attribute ownership release denied: the owner keeps attributes it was asked
    /// to release; the federates waiting for them are told they are unavailable.
    ReleaseDenied { attributes: Vec<AttributeHandle> },
    /// Cancel attribute ownership acquisition.
    CancelAcquisition { attributes: Vec<AttributeHandle> },
    /// Query attribute ownership.
    Query { attribute: AttributeHandle },
}

impl OwnershipRequest {
    /// The same request with its attributes in handle order, each once: a repeated
    /// attribute would otherwise be decided twice in one request.
    pub fn normalized(mut self) -> OwnershipRequest {
        match &mut self {
            OwnershipRequest::UnconditionalDivest { attributes }
            | OwnershipRequest::NegotiatedDivest { attributes, .. }
            | OwnershipRequest::ConfirmDivestiture { attributes, .. }
            | OwnershipRequest::DivestIfWanted { attributes }
            | OwnershipRequest::CancelDivestiture { attributes }
            | OwnershipRequest::Acquire { attributes, .. }
            | OwnershipRequest::AcquireIfAvailable { attributes }
            | OwnershipRequest::ReleaseDenied { attributes }
            | OwnershipRequest::CancelAcquisition { attributes } => {
                attributes.sort_unstable();
                attributes.dedup();
            }
            OwnershipRequest::Query { .. } => {}
        }
        self
    }

    /// The attributes the request is about.
    pub fn attributes(&self) -> &[AttributeHandle] {
        match self {
            OwnershipRequest::UnconditionalDivest { attributes }
            | OwnershipRequest::NegotiatedDivest { attributes, .. }
            | OwnershipRequest::ConfirmDivestiture { attributes, .. }
            | OwnershipRequest::DivestIfWanted { attributes }
            | OwnershipRequest::CancelDivestiture { attributes }
            | OwnershipRequest::Acquire { attributes, .. }
            | OwnershipRequest::AcquireIfAvailable { attributes }
            | OwnershipRequest::ReleaseDenied { attributes }
            | OwnershipRequest::CancelAcquisition { attributes } => attributes,
            OwnershipRequest::Query { attribute } => std::slice::from_ref(attribute),
        }
    }
}

/// What an ownership request did for the requester; each list is empty unless the
/// request did that. The requester's local view changes by exactly this.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct OwnershipOutcome {
    /// Attributes the requester owns from now on.
    #[serde(default)]
    pub acquired: Vec<AttributeHandle>,
    /// Attributes the requester no longer owns.
    #[serde(default)]
    pub divested: Vec<AttributeHandle>,
    /// Attributes the requester now waits to acquire.
    #[serde(default)]
    pub pending: Vec<AttributeHandle>,
    /// Attributes an acquisition if available could not have.
    #[serde(default)]
    pub unavailable: Vec<AttributeHandle>,
    /// Acquisitions cancelled (the others ended before the cancel arrived).
    #[serde(default)]
    pub cancelled: Vec<AttributeHandle>,
    /// Offered attributes some federate already waits for: confirm the divestiture.
    #[serde(default)]
    pub confirm: Vec<AttributeHandle>,
    /// Attributes whose offer was withdrawn while federates still wait to acquire
    /// them: the requester is asked to release them.
    #[serde(default)]
    pub release: Vec<AttributeHandle>,
    /// The tag of the acquisition behind `release`.
    #[serde(default)]
    pub release_tag: Bytes,
}

/// Which ownership callback a [`Notification::Ownership`] carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum OwnershipNotice {
    /// Offered attributes (the notification's federate is the divesting one): every
    /// other federate that knows the instance and publishes them may acquire them.
    Offered,
    /// The federate must confirm (or cancel) the divestiture of attributes it offers.
    ConfirmDivestiture,
    /// The federate is asked to release attributes it owns.
    ReleaseRequested,
    /// The federate now owns the attributes.
    Acquired,
    /// The federate's acquisition of the attributes ended unsuccessfully.
    Unavailable,
    /// The instance was deleted (the notification's federate deleted it) while
    /// other federates owned some of its attributes: they own nothing of it now.
    Removed,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Candidate {
    federate: FederateHandle,
    /// Waits only for an offer (acquisition if available).
    if_available: bool,
    tag: Bytes,
}

/// One instance attribute's owner and pending transfers.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct AttributeOwnership {
    owner: Option<FederateHandle>,
    /// The owner's offer (negotiated divestiture) and its tag.
    offered: Option<Bytes>,
    /// The owner was asked to confirm a divestiture.
    confirmation_requested: bool,
    /// The owner was asked to release the attribute.
    release_requested: bool,
    /// Federates waiting to acquire it, first come first served.
    candidates: Vec<Candidate>,
}

impl AttributeOwnership {
    pub(crate) fn owned_by(federate: FederateHandle) -> Self {
        AttributeOwnership {
            owner: Some(federate),
            ..Default::default()
        }
    }

    /// The current owner, if any.
    pub(crate) fn owner(&self) -> Option<FederateHandle> {
        self.owner
    }

    fn is_idle(&self) -> bool {
        self.owner.is_none() && self.candidates.is_empty()
    }

    /// Gives the attribute to `to` and asks the new owner to release it when
    /// others still wait, so no acquisition waits on an owner nobody asked.
    fn transfer(
        &mut self,
        attribute: AttributeHandle,
        to: FederateHandle,
        tag: Bytes,
        notices: &mut Notices,
    ) {
        self.owner = Some(to);
        self.offered = None;
        self.confirmation_requested = false;
        self.release_requested = false;
        self.candidates.retain(|c| c.federate != to);
        notices.push(OwnershipNotice::Acquired, to, tag, attribute);
        if let Some(next) = self.candidates.first() {
            self.release_requested = true;
            notices.push(
                OwnershipNotice::ReleaseRequested,
                to,
                next.tag.clone(),
                attribute,
            );
        }
    }

    /// The owner lets go: the first federate waiting takes the attribute. Returns
    /// false when nobody did (the attribute is unowned now).
    fn give_up(&mut self, attribute: AttributeHandle, notices: &mut Notices) -> bool {
        match self.candidates.first().cloned() {
            Some(c) => {
                self.transfer(attribute, c.federate, c.tag, notices);
                true
            }
            None => {
                *self = AttributeOwnership::default();
                false
            }
        }
    }

    fn end_candidates(
        &mut self,
        attribute: AttributeHandle,
        keep: impl Fn(&Candidate) -> bool,
        notices: &mut Notices,
    ) {
        let (kept, ended): (Vec<_>, Vec<_>) = self.candidates.drain(..).partition(keep);
        self.candidates = kept;
        for c in ended {
            notices.push(
                OwnershipNotice::Unavailable,
                c.federate,
                Bytes::new(),
                attribute,
            );
        }
    }
}

/// Ownership notifications gathered during one request: one per (kind, federate,
/// tag), attributes in the order they were decided.
#[derive(Default)]
pub(crate) struct Notices(Vec<(OwnershipNotice, FederateHandle, Bytes, Vec<AttributeHandle>)>);

impl Notices {
    fn push(
        &mut self,
        notice: OwnershipNotice,
        federate: FederateHandle,
        tag: Bytes,
        attribute: AttributeHandle,
    ) {
        match self
            .0
            .iter_mut()
            .find(|(n, f, t, _)| *n == notice && *f == federate && *t == tag)
        {
            Some((_, _, _, attributes)) => attributes.push(attribute),
            None => self.0.push((notice, federate, tag, vec![attribute])),
        }
    }

    fn flush(self, instance: ObjectInstanceHandle, out: &mut Vec<Notification>) {
        for (notice, federate, tag, attributes) in self.0 {
            out.push(Notification::Ownership {
                notice,
                federate,
                instance,
                attributes,
                tag,
            });
        }
    }
}

impl FederationExecution {
    /// True while the instance is registered (not deleted).
    pub fn instance_exists(&self, instance: ObjectInstanceHandle) -> bool {
        self.instances.contains_key(&instance)
    }

    /// The owner of an instance attribute, as the executive records it.
    pub fn attribute_owner(
        &self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) -> Option<FederateHandle> {
        self.ownership.get(&instance)?.get(&attribute)?.owner
    }

    /// Every owned instance attribute and its owner, in handle order.
    pub fn attribute_owners(
        &self,
    ) -> impl Iterator<Item = (ObjectInstanceHandle, AttributeHandle, FederateHandle)> + '_ {
        self.ownership.iter().flat_map(|(i, attributes)| {
            attributes
                .iter()
                .filter_map(move |(a, o)| o.owner.map(|f| (*i, *a, f)))
        })
    }

    /// How many acquisitions wait for an owner, federation-wide.
    pub fn pending_acquisitions(&self) -> usize {
        self.ownership
            .values()
            .flat_map(|a| a.values())
            .map(|o| o.candidates.len())
            .sum()
    }

    /// Keeps the instance's listed owner (who may delete it) in step with its
    /// `HLAprivilegeToDeleteObject`.
    fn sync_privilege(&mut self, instance: ObjectInstanceHandle) {
        let Some(info) = self.instances.get_mut(&instance) else {
            return;
        };
        let privilege = self.fom.attribute_by_name(info.class, PRIVILEGE_TO_DELETE);
        info.owner = privilege.and_then(|p| {
            self.ownership
                .get(&instance)
                .and_then(|t| t.get(&p))
                .and_then(|o| o.owner)
        });
    }

    /// Deletes an instance; federates still waiting to acquire its attributes are
    /// told they are unavailable, so every acquisition ends.
    pub(crate) fn remove_instance(
        &mut self,
        instance: ObjectInstanceHandle,
        out: &mut Vec<Notification>,
    ) -> Option<InstanceInfo> {
        let info = self.instances.remove(&instance)?;
        self.names_in_use.remove(&info.name);
        let mut notices = Notices::default();
        let mut shared = false;
        for (a, mut o) in self.ownership.remove(&instance).unwrap_or_default() {
            shared |= o.owner.is_some() && o.owner != info.owner;
            o.end_candidates(a, |_| false, &mut notices);
        }
        notices.flush(instance, out);
        if let (true, Some(by)) = (shared, info.owner) {
            out.push(Notification::Ownership {
                notice: OwnershipNotice::Removed,
                federate: by,
                instance,
                attributes: Vec::new(),
                tag: Bytes::new(),
            });
        }
        Some(info)
    }

    /// What resigning with `action` does to the federate's ownership: checked as a
    /// whole first, so a refused resign changes nothing. Returns the instances to
    /// delete (the resigning federate publishes their deletion).
    pub(crate) fn resign_ownership(
        &mut self,
        federate: FederateHandle,
        action: ResignAction,
        out: &mut Vec<Notification>,
    ) -> Result<Vec<InstanceInfo>, FederationError> {
        use ResignAction as A;
        let cancel = matches!(
            action,
            A::CancelPendingOwnershipAcquisitions | A::CancelThenDeleteThenDivest
        );
        let delete = matches!(
            action,
            A::DeleteObjects | A::DeleteObjectsThenDivest | A::CancelThenDeleteThenDivest
        );
        let divest = matches!(
            action,
            A::UnconditionallyDivestAttributes
                | A::DeleteObjectsThenDivest
                | A::CancelThenDeleteThenDivest
        );
        let pending = self
            .ownership
            .values()
            .flat_map(|a| a.values())
            .filter(|o| o.candidates.iter().any(|c| c.federate == federate))
            .count();
        if pending > 0 && !cancel {
            return Err(FederationError::OwnershipAcquisitionPending(pending));
        }
        let deletable: Vec<ObjectInstanceHandle> = if delete {
            self.instances
                .values()
                .filter(|i| i.owner == Some(federate))
                .map(|i| i.instance)
                .collect()
        } else {
            Vec::new()
        };
        let kept: Vec<ObjectInstanceHandle> = self
            .ownership
            .iter()
            .filter(|(i, t)| {
                !deletable.contains(i) && t.values().any(|o| o.owner == Some(federate))
            })
            .map(|(i, _)| *i)
            .collect();
        if !kept.is_empty() && !divest {
            return Err(FederationError::FederateOwnsAttributes(kept.len()));
        }
        for table in self.ownership.values_mut() {
            for o in table.values_mut() {
                o.candidates.retain(|c| c.federate != federate);
            }
        }
        let mut deleted = Vec::new();
        for instance in deletable {
            deleted.extend(self.remove_instance(instance, out));
        }
        for instance in kept {
            let mut notices = Notices::default();
            let mut offered = Vec::new();
            if let Some(table) = self.ownership.get_mut(&instance) {
                for (a, o) in table.iter_mut() {
                    if o.owner == Some(federate) && !o.give_up(*a, &mut notices) {
                        offered.push(*a);
                    }
                }
                table.retain(|_, o| !o.is_idle());
            }
            for a in offered {
                notices.push(OwnershipNotice::Offered, federate, Bytes::new(), a);
            }
            notices.flush(instance, out);
            self.sync_privilege(instance);
        }
        Ok(deleted)
    }

    /// One ownership service for `federate` on `instance`; checked as a whole before
    /// anything changes.
    pub(crate) fn ownership_request(
        &mut self,
        federate: FederateHandle,
        instance: ObjectInstanceHandle,
        request: OwnershipRequest,
        out: &mut Vec<Notification>,
    ) -> Result<ExecReply, OwnershipError> {
        let result = self.apply_ownership(federate, instance, request.normalized(), out);
        if let Some(table) = self.ownership.get_mut(&instance) {
            table.retain(|_, o| !o.is_idle());
            if table.is_empty() {
                self.ownership.remove(&instance);
            }
        }
        self.sync_privilege(instance);
        result
    }

    fn apply_ownership(
        &mut self,
        federate: FederateHandle,
        instance: ObjectInstanceHandle,
        request: OwnershipRequest,
        out: &mut Vec<Notification>,
    ) -> Result<ExecReply, OwnershipError> {
        use OwnershipError as E;
        use OwnershipRequest as Q;
        let class = self
            .instances
            .get(&instance)
            .ok_or(E::ObjectInstanceNotKnown(instance))?
            .class;
        let c = self
            .fom
            .object_class(class)
            .ok_or(E::ObjectInstanceNotKnown(instance))?;
        if let Some(a) = request
            .attributes()
            .iter()
            .find(|a| !c.all_attributes.contains(a))
        {
            return Err(E::AttributeNotDefined {
                class,
                attribute: *a,
            });
        }
        let table = self.ownership.entry(instance).or_default();
        let state = |table: &BTreeMap<AttributeHandle, AttributeOwnership>, a| {
            table.get(&a).cloned().unwrap_or_default()
        };
        let owned = |table: &BTreeMap<_, _>, attributes: &[AttributeHandle]| match attributes
            .iter()
            .find(|a| state(table, **a).owner != Some(federate))
        {
            Some(a) => Err(E::AttributeNotOwned(*a)),
            None => Ok(()),
        };
        let offered = |table: &BTreeMap<_, _>, attributes: &[AttributeHandle]| match attributes
            .iter()
            .find(|a| state(table, **a).offered.is_none())
        {
            Some(a) => Err(E::AttributeDivestitureWasNotRequested(*a)),
            None => Ok(()),
        };
        let mut outcome = OwnershipOutcome::default();
        let mut notices = Notices::default();
        match request {
            Q::Query { attribute } => {
                let owner = state(table, attribute).owner;
                return Ok(ExecReply::AttributeOwner { owner });
            }
            Q::UnconditionalDivest { attributes } => {
                owned(table, &attributes)?;
                let mut free = Vec::new();
                for a in &attributes {
                    let o = table.entry(*a).or_default();
                    if !o.give_up(*a, &mut notices) {
                        free.push(*a);
                    }
                }
                for a in free {
                    notices.push(OwnershipNotice::Offered, federate, Bytes::new(), a);
                }
                outcome.divested = attributes;
            }
            Q::NegotiatedDivest { attributes, tag } => {
                owned(table, &attributes)?;
                if let Some(a) = attributes
                    .iter()
                    .find(|a| state(table, **a).offered.is_some())
                {
                    return Err(E::AttributeAlreadyBeingDivested(*a));
                }
                for a in attributes {
                    let o = table.entry(a).or_default();
                    o.offered = Some(tag.clone());
                    if o.candidates.is_empty() {
                        notices.push(OwnershipNotice::Offered, federate, tag.clone(), a);
                    } else {
                        o.confirmation_requested = true;
                        outcome.confirm.push(a);
                    }
                }
            }
            Q::ConfirmDivestiture { attributes, tag } => {
                owned(table, &attributes)?;
                offered(table, &attributes)?;
                if let Some(a) = attributes
                    .iter()
                    .find(|a| state(table, **a).candidates.is_empty())
                {
                    return Err(E::NoAcquisitionPending(*a));
                }
                for a in &attributes {
                    let o = table.entry(*a).or_default();
                    let to = o.candidates[0].federate;
                    o.transfer(*a, to, tag.clone(), &mut notices);
                }
                outcome.divested = attributes;
            }
            Q::DivestIfWanted { attributes } => {
                owned(table, &attributes)?;
                for a in attributes {
                    let o = table.entry(a).or_default();
                    if o.candidates.is_empty() {
                        o.release_requested = false;
                    } else {
                        o.give_up(a, &mut notices);
                        outcome.divested.push(a);
                    }
                }
            }
            Q::CancelDivestiture { attributes } => {
                owned(table, &attributes)?;
                offered(table, &attributes)?;
                for a in attributes {
                    let o = table.entry(a).or_default();
                    o.offered = None;
                    o.confirmation_requested = false;
                    // Acquisitions if available waited for the offer only.
                    o.end_candidates(a, |c| !c.if_available, &mut notices);
                    if let Some(first) = o.candidates.first() {
                        o.release_requested = true;
                        if outcome.release.is_empty() {
                            outcome.release_tag = first.tag.clone();
                        }
                        outcome.release.push(a);
                    }
                }
            }
            Q::Acquire { attributes, tag } => acquire(
                table,
                federate,
                attributes,
                tag,
                false,
                &mut outcome,
                &mut notices,
            )?,
            Q::AcquireIfAvailable { attributes } => acquire(
                table,
                federate,
                attributes,
                Bytes::new(),
                true,
                &mut outcome,
                &mut notices,
            )?,
            Q::ReleaseDenied { attributes } => {
                owned(table, &attributes)?;
                for a in attributes {
                    let o = table.entry(a).or_default();
                    if o.release_requested && o.offered.is_none() {
                        o.release_requested = false;
                        o.end_candidates(a, |_| false, &mut notices);
                    }
                }
            }
            Q::CancelAcquisition { attributes } => {
                for a in attributes {
                    if let Some(o) = table.get_mut(&a) {
                        if let Some(i) = o.candidates.iter().position(|c| c.federate == federate) {
                            o.candidates.remove(i);
                            outcome.cancelled.push(a);
                        }
                    }
                }
            }
        }
        notices.flush(instance, out);
        Ok(ExecReply::Ownership(outcome))
    }
}

/// Attribute ownership acquisition (if available): unowned attributes are taken at
/// once; offered ones wait for the owner's confirmation; owned ones wait for its
/// release (or, if available, are unavailable).
fn acquire(
    table: &mut BTreeMap<AttributeHandle, AttributeOwnership>,
    federate: FederateHandle,
    attributes: Vec<AttributeHandle>,
    tag: Bytes,
    if_available: bool,
    outcome: &mut OwnershipOutcome,
    notices: &mut Notices,
) -> Result<(), OwnershipError> {
    for a in &attributes {
        if let Some(o) = table.get(a) {
            if o.owner == Some(federate) {
                return Err(OwnershipError::FederateOwnsAttributes(*a));
            }
            if o.candidates.iter().any(|c| c.federate == federate) {
                return Err(OwnershipError::AttributeAlreadyBeingAcquired(*a));
            }
        }
    }
    for a in attributes {
        let o = table.entry(a).or_default();
        let candidate = Candidate {
            federate,
            if_available,
            tag: tag.clone(),
        };
        match o.owner {
            None => {
                o.owner = Some(federate);
                outcome.acquired.push(a);
            }
            Some(owner) if o.offered.is_some() => {
                o.candidates.push(candidate);
                outcome.pending.push(a);
                if !o.confirmation_requested {
                    o.confirmation_requested = true;
                    notices.push(OwnershipNotice::ConfirmDivestiture, owner, Bytes::new(), a);
                }
            }
            Some(_) if if_available => outcome.unavailable.push(a),
            Some(owner) => {
                o.candidates.push(candidate);
                outcome.pending.push(a);
                if !o.release_requested {
                    o.release_requested = true;
                    notices.push(OwnershipNotice::ReleaseRequested, owner, tag.clone(), a);
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

//! Ownership management in the local RTI component: the services (each one request
//! to the executive, which owns the registry; see `crate::exec::ownership`), the
//! local checks that come first, and the federate's view of what it owns, acquires
//! and offers, changed only by the executive's replies and notifications.

use bytes::Bytes;

use super::*;
use crate::callback::Callback;
use crate::error::{OwnershipError, RtiError};
use crate::exec::{ExecReply, ExecRequest, OwnershipNotice, OwnershipOutcome, OwnershipRequest};
use crate::types::{FederateHandle, ObjectInstanceHandle};
use crate::AttributeHandle;

/// Which local precondition an ownership service has on each attribute.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Needs {
    /// Owned by this federate.
    Owned,
    /// Owned and not offered yet.
    OwnedNotOffered,
    /// Owned and offered (negotiated divestiture pending).
    Offered,
    /// Published at the known class, not owned, not being acquired.
    Acquirable,
    /// Being acquired.
    Acquiring,
    /// Nothing (queries).
    Nothing,
}

impl LocalRti {
    /// Checks the local preconditions of an ownership service, asks the executive,
    /// and applies what it did to this federate's view.
    fn ownership(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        needs: Needs,
        request: OwnershipRequest,
    ) -> Result<ExecReply, RtiError> {
        self.live()?;
        let request = request.normalized();
        self.check_ownership(instance, needs, request.attributes())?;
        let reply = link.request(
            &mut self.outbox,
            ExecRequest::Ownership {
                federation: self.federation,
                federate: self.me,
                instance,
                request: request.clone(),
            },
        )?;
        let reply = match reply {
            ExecReply::OwnershipError(e) => return Err(e.into()),
            other => expect_ok(other)?,
        };
        if let ExecReply::Ownership(outcome) = &reply {
            self.apply_outcome(instance, &request, outcome);
        }
        Ok(reply)
    }

    fn check_ownership(
        &self,
        instance: ObjectInstanceHandle,
        needs: Needs,
        attributes: &[AttributeHandle],
    ) -> Result<(), OwnershipError> {
        use OwnershipError as E;
        let k = self
            .known
            .get(&instance)
            .ok_or(E::ObjectInstanceNotKnown(instance))?;
        let c = self
            .fom
            .object_class(k.class)
            .ok_or(E::ObjectInstanceNotKnown(instance))?;
        if needs == Needs::Acquirable && !self.published_attributes.contains_key(&k.known_class) {
            return Err(E::ObjectClassNotPublished(k.known_class));
        }
        for &a in attributes {
            if !c.all_attributes.contains(&a) {
                return Err(E::AttributeNotDefined {
                    class: k.class,
                    attribute: a,
                });
            }
            let owned = k.owned.contains(&a);
            let offered = k.divesting.contains(&a);
            match needs {
                Needs::Owned | Needs::OwnedNotOffered | Needs::Offered if !owned => {
                    return Err(E::AttributeNotOwned(a))
                }
                Needs::OwnedNotOffered if offered => {
                    return Err(E::AttributeAlreadyBeingDivested(a))
                }
                Needs::Offered if !offered => {
                    return Err(E::AttributeDivestitureWasNotRequested(a))
                }
                Needs::Acquirable => {
                    let published = self
                        .published_attributes
                        .get(&k.known_class)
                        .is_some_and(|p| p.contains(&a));
                    if !published && Some(a) != self.privilege_to_delete(k.class) {
                        return Err(E::AttributeNotPublished(a));
                    }
                    if owned {
                        return Err(E::FederateOwnsAttributes(a));
                    }
                    if k.acquiring.contains(&a) {
                        return Err(E::AttributeAlreadyBeingAcquired(a));
                    }
                }
                Needs::Acquiring if !k.acquiring.contains(&a) => {
                    return Err(E::AttributeAcquisitionWasNotRequested(a))
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Applies the executive's answer to this federate's own request.
    fn apply_outcome(
        &mut self,
        instance: ObjectInstanceHandle,
        request: &OwnershipRequest,
        o: &OwnershipOutcome,
    ) {
        let Some(k) = self.known.get_mut(&instance) else {
            return;
        };
        match request {
            OwnershipRequest::NegotiatedDivest { attributes, .. } => {
                k.divesting.extend(attributes.iter().copied())
            }
            OwnershipRequest::CancelDivestiture { attributes } => {
                for a in attributes {
                    k.divesting.remove(a);
                }
            }
            _ => {}
        }
        for a in &o.divested {
            k.owned.remove(a);
            k.divesting.remove(a);
        }
        for a in &o.acquired {
            k.owned.insert(*a);
        }
        k.acquiring.extend(o.pending.iter().copied());
        for a in &o.cancelled {
            k.acquiring.remove(a);
        }
        let tag = match request {
            OwnershipRequest::Acquire { tag, .. } => tag.clone(),
            _ => Bytes::new(),
        };
        let mut push = |cb| self.callbacks.push_back(cb);
        if !o.acquired.is_empty() {
            push(Callback::AttributeOwnershipAcquisitionNotification {
                instance,
                attributes: o.acquired.clone(),
                tag,
            });
        }
        if !o.unavailable.is_empty() {
            push(Callback::AttributeOwnershipUnavailable {
                instance,
                attributes: o.unavailable.clone(),
            });
        }
        if !o.cancelled.is_empty() {
            push(Callback::ConfirmAttributeOwnershipAcquisitionCancellation {
                instance,
                attributes: o.cancelled.clone(),
            });
        }
        if !o.confirm.is_empty() {
            push(Callback::RequestDivestitureConfirmation {
                instance,
                attributes: o.confirm.clone(),
            });
        }
        if !o.release.is_empty() {
            push(Callback::RequestAttributeOwnershipRelease {
                instance,
                attributes: o.release.clone(),
                tag: o.release_tag.clone(),
            });
        }
        // Scope: watchers hear of the change of owner; what this federate owns is
        // out of its own scope.
        self.announce_divested(instance, &o.divested);
        if !o.acquired.is_empty() {
            self.announce_update_regions(instance, &o.acquired, &super::scope::Was::Unknown);
        }
        self.refresh_scope(instance);
    }

    /// An ownership notification from the executive: callbacks for this federate,
    /// and the gains and ends of acquisitions it records.
    pub(crate) fn handle_ownership_notice(
        &mut self,
        notice: OwnershipNotice,
        federate: FederateHandle,
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    ) {
        let for_me = federate == self.me;
        let acquired_here = for_me && matches!(notice, OwnershipNotice::Acquired);
        let privilege = self
            .known
            .get(&instance)
            .and_then(|k| self.privilege_to_delete(k.class));
        let Some(k) = self.known.get_mut(&instance) else {
            return;
        };
        let keep = |pred: &dyn Fn(&AttributeHandle) -> bool| -> Vec<AttributeHandle> {
            attributes.iter().copied().filter(|a| pred(a)).collect()
        };
        let callback = match notice {
            OwnershipNotice::Offered if !for_me => {
                let published = self.published_attributes.get(&k.known_class);
                let offered = keep(&|a| {
                    !k.owned.contains(a)
                        && (published.is_some_and(|p| p.contains(a))
                            || (published.is_some() && Some(*a) == privilege))
                });
                (!offered.is_empty()).then_some(Callback::RequestAttributeOwnershipAssumption {
                    instance,
                    attributes: offered,
                    tag,
                })
            }
            OwnershipNotice::ConfirmDivestiture if for_me => {
                let wanted = keep(&|a| k.owned.contains(a) && k.divesting.contains(a));
                (!wanted.is_empty()).then_some(Callback::RequestDivestitureConfirmation {
                    instance,
                    attributes: wanted,
                })
            }
            OwnershipNotice::ReleaseRequested if for_me => {
                let wanted = keep(&|a| k.owned.contains(a));
                (!wanted.is_empty()).then_some(Callback::RequestAttributeOwnershipRelease {
                    instance,
                    attributes: wanted,
                    tag,
                })
            }
            OwnershipNotice::Acquired if for_me => {
                for a in &attributes {
                    k.acquiring.remove(a);
                    k.owned.insert(*a);
                }
                Some(Callback::AttributeOwnershipAcquisitionNotification {
                    instance,
                    attributes,
                    tag,
                })
            }
            OwnershipNotice::Unavailable if for_me => {
                let ended = keep(&|a| k.acquiring.contains(a));
                for a in &ended {
                    k.acquiring.remove(a);
                }
                (!ended.is_empty()).then_some(Callback::AttributeOwnershipUnavailable {
                    instance,
                    attributes: ended,
                })
            }
            OwnershipNotice::Removed if !for_me => {
                k.owned.clear();
                k.acquiring.clear();
                k.divesting.clear();
                None
            }
            _ => None,
        };
        self.callbacks.extend(callback);
        if acquired_here {
            let owned = attributes_now_owned(&self.known, instance);
            self.announce_update_regions(instance, &owned, &super::scope::Was::Unknown);
            self.refresh_scope(instance);
        }
    }

    // ----- the services ---------------------------------------------------------------

    /// Unconditional attribute ownership divestiture: the attributes go to the first
    /// federate waiting for each, or to nobody (and are offered to publishers).
    pub fn unconditional_attribute_ownership_divestiture(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::UnconditionalDivest {
            attributes: attributes.to_vec(),
        };
        self.ownership(link, instance, Needs::Owned, request)
            .map(drop)
    }

    /// Negotiated attribute ownership divestiture: offers the attributes; this
    /// federate owns them until it confirms a divestiture.
    pub fn negotiated_attribute_ownership_divestiture(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::NegotiatedDivest {
            attributes: attributes.to_vec(),
            tag,
        };
        self.ownership(link, instance, Needs::OwnedNotOffered, request)
            .map(drop)
    }

    /// Confirm divestiture of offered attributes some federate waits for.
    pub fn confirm_divestiture(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::ConfirmDivestiture {
            attributes: attributes.to_vec(),
            tag,
        };
        self.ownership(link, instance, Needs::Offered, request)
            .map(drop)
    }

    /// Attribute ownership divestiture if wanted: hands over the attributes some
    /// federate waits for, and returns them.
    pub fn attribute_ownership_divestiture_if_wanted(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<Vec<AttributeHandle>, RtiError> {
        let request = OwnershipRequest::DivestIfWanted {
            attributes: attributes.to_vec(),
        };
        match self.ownership(link, instance, Needs::Owned, request)? {
            ExecReply::Ownership(o) => Ok(o.divested),
            other => Err(unexpected(&other)),
        }
    }

    /// Cancel negotiated attribute ownership divestiture.
    pub fn cancel_negotiated_attribute_ownership_divestiture(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::CancelDivestiture {
            attributes: attributes.to_vec(),
        };
        self.ownership(link, instance, Needs::Offered, request)
            .map(drop)
    }

    /// Attribute ownership acquisition: unowned attributes are acquired at once, the
    /// others when their owner releases them.
    pub fn attribute_ownership_acquisition(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        tag: Bytes,
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::Acquire {
            attributes: attributes.to_vec(),
            tag,
        };
        self.ownership(link, instance, Needs::Acquirable, request)
            .map(drop)
    }

    /// Attribute ownership acquisition if available: unowned attributes are acquired,
    /// offered ones when their owner confirms, the rest are unavailable.
    pub fn attribute_ownership_acquisition_if_available(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::AcquireIfAvailable {
            attributes: attributes.to_vec(),
        };
        self.ownership(link, instance, Needs::Acquirable, request)
            .map(drop)
    }

    /// Attribute ownership release denied: keeps attributes this federate was asked
    /// to release; the federates waiting for them get *attribute ownership unavailable*.
    pub fn attribute_ownership_release_denied(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::ReleaseDenied {
            attributes: attributes.to_vec(),
        };
        self.ownership(link, instance, Needs::Owned, request)
            .map(drop)
    }

    /// Cancel attribute ownership acquisition. Acquisitions that ended before the
    /// executive saw the cancel (granted or unavailable) end with their own callback.
    pub fn cancel_attribute_ownership_acquisition(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::CancelAcquisition {
            attributes: attributes.to_vec(),
        };
        self.ownership(link, instance, Needs::Acquiring, request)
            .map(drop)
    }

    /// Query attribute ownership: the answer arrives as *inform attribute ownership*
    /// or *attribute is not owned*.
    pub fn query_attribute_ownership(
        &mut self,
        link: &mut impl Link,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) -> Result<(), RtiError> {
        let request = OwnershipRequest::Query { attribute };
        let callback = match self.ownership(link, instance, Needs::Nothing, request)? {
            ExecReply::AttributeOwner { owner: Some(owner) } => {
                Callback::InformAttributeOwnership {
                    instance,
                    attribute,
                    owner,
                }
            }
            ExecReply::AttributeOwner { owner: None } => Callback::AttributeIsNotOwned {
                instance,
                attribute,
            },
            other => return Err(unexpected(&other)),
        };
        self.callbacks.push_back(callback);
        Ok(())
    }

    /// Is attribute owned by federate: answered from this federate's own view.
    pub fn is_attribute_owned_by_federate(
        &self,
        instance: ObjectInstanceHandle,
        attribute: AttributeHandle,
    ) -> Result<bool, RtiError> {
        self.live()?;
        self.check_ownership(instance, Needs::Nothing, &[attribute])?;
        Ok(self
            .known
            .get(&instance)
            .is_some_and(|k| k.owned.contains(&attribute)))
    }

    /// The attributes of `instance` this federate owns, in handle order (empty for
    /// an instance it does not know).
    pub fn owned_attributes(&self, instance: ObjectInstanceHandle) -> Vec<AttributeHandle> {
        self.known
            .get(&instance)
            .map(|k| k.owned.iter().copied().collect())
            .unwrap_or_default()
    }

    /// The attributes of `instance` this federate waits to acquire, in handle order.
    pub fn acquiring_attributes(&self, instance: ObjectInstanceHandle) -> Vec<AttributeHandle> {
        self.known
            .get(&instance)
            .map(|k| k.acquiring.iter().copied().collect())
            .unwrap_or_default()
    }

    /// The attributes of `instance` this federate offers (negotiated divestiture
    /// pending), in handle order.
    pub fn divesting_attributes(&self, instance: ObjectInstanceHandle) -> Vec<AttributeHandle> {
        self.known
            .get(&instance)
            .map(|k| k.divesting.iter().copied().collect())
            .unwrap_or_default()
    }

    /// Every instance of which this federate owns an attribute, with those attributes.
    pub fn owned_instance_attributes(
        &self,
    ) -> impl Iterator<Item = (ObjectInstanceHandle, &BTreeSet<AttributeHandle>)> {
        self.known
            .iter()
            .filter(|(_, k)| !k.owned.is_empty())
            .map(|(i, k)| (*i, &k.owned))
    }

    /// Unconditionally divests what this federate owns of instances it knows as
    /// `class`, among `attributes` (unpublishing them divests them).
    pub(crate) fn divest_unpublished(
        &mut self,
        link: &mut impl Link,
        class: ObjectClassHandle,
        attributes: &BTreeSet<AttributeHandle>,
    ) -> Result<(), RtiError> {
        let mut owned: Vec<(ObjectInstanceHandle, Vec<AttributeHandle>)> = self
            .known
            .iter()
            .filter(|(_, k)| k.known_class == class)
            .map(|(i, k)| {
                let privilege = self.privilege_to_delete(k.class);
                let divest = k
                    .owned
                    .iter()
                    .copied()
                    .filter(|a| attributes.contains(a) && Some(*a) != privilege)
                    .collect::<Vec<_>>();
                (*i, divest)
            })
            .filter(|(_, a)| !a.is_empty())
            .collect();
        owned.sort_unstable_by_key(|(i, _)| *i);
        for (instance, attributes) in owned {
            self.unconditional_attribute_ownership_divestiture(link, instance, &attributes)?;
        }
        Ok(())
    }

    /// Refuses to unpublish attributes this federate is acquiring at `class`.
    pub(crate) fn check_no_acquisition(
        &self,
        class: ObjectClassHandle,
        attributes: &BTreeSet<AttributeHandle>,
    ) -> Result<(), crate::error::DeclarationError> {
        for k in self.known.values().filter(|k| k.known_class == class) {
            if let Some(a) = k.acquiring.iter().find(|a| attributes.contains(a)) {
                return Err(crate::error::DeclarationError::OwnershipAcquisitionPending(
                    *a,
                ));
            }
        }
        Ok(())
    }
}

/// The attributes this federate owns of an instance.
fn attributes_now_owned(
    known: &FastMap<ObjectInstanceHandle, KnownInstance>,
    instance: ObjectInstanceHandle,
) -> Vec<AttributeHandle> {
    known
        .get(&instance)
        .map(|k| k.owned.iter().copied().collect())
        .unwrap_or_default()
}

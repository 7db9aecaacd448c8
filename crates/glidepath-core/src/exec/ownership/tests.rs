//! The owner registry's rules, request by request: queues of acquirers, denials,
//! repeated attributes, and resign actions checked as a whole.

use std::sync::Arc;

use super::*;
use crate::exec::{ExecRequest, Executive};
use crate::types::FederationId;
use crate::{Fom, ObjectClassHandle};

/// A federation on the MIM alone: `HLAobjectRoot` and its one attribute,
/// `HLAprivilegeToDeleteObject`.
fn federation(members: u32) -> (Executive, FederationId, AttributeHandle) {
    let mut exec = Executive::new();
    let fom = Arc::new(Fom::merge(&[]).expect("the MIM alone merges"));
    let privilege = fom
        .attribute_by_name(ObjectClassHandle(0), PRIVILEGE_TO_DELETE)
        .expect("the MIM has it");
    let (reply, _, _) = exec.handle(ExecRequest::Create {
        name: "o".into(),
        fom,
    });
    let ExecReply::Created { id } = reply else {
        panic!("{reply:?}")
    };
    for i in 0..members {
        exec.handle(ExecRequest::Join {
            federation: id,
            federate_name: Some(format!("f{i}")),
            federate_type: "t".into(),
        });
    }
    (exec, id, privilege)
}

/// Federate 1 registers an instance of `HLAobjectRoot` owning `p`.
fn register(exec: &mut Executive, id: FederationId, p: AttributeHandle) -> ObjectInstanceHandle {
    let (reply, _, _) = exec.handle(ExecRequest::RegisterInstance {
        federation: id,
        federate: FederateHandle(1),
        class: ObjectClassHandle(0),
        name: None,
        attributes: vec![p],
    });
    let ExecReply::Registered { instance, .. } = reply else {
        panic!("{reply:?}")
    };
    instance
}

fn own(
    exec: &mut Executive,
    id: FederationId,
    federate: u32,
    instance: ObjectInstanceHandle,
    request: OwnershipRequest,
) -> (ExecReply, Vec<Notification>) {
    let (reply, _, out) = exec.handle(ExecRequest::Ownership {
        federation: id,
        federate: FederateHandle(federate),
        instance,
        request,
    });
    (reply, out)
}

fn ownership_error(reply: ExecReply) -> Option<OwnershipError> {
    match reply {
        ExecReply::OwnershipError(e) => Some(e),
        _ => None,
    }
}

fn federation_error(reply: ExecReply) -> Option<FederationError> {
    match reply {
        ExecReply::FederationError(e) => Some(e),
        _ => None,
    }
}

fn notice(out: &[Notification]) -> Vec<(OwnershipNotice, u32)> {
    out.iter()
        .filter_map(|n| match n {
            Notification::Ownership {
                notice, federate, ..
            } => Some((*notice, federate.0)),
            _ => None,
        })
        .collect()
}

#[test]
fn acquirers_queue_and_each_one_ends() {
    let (mut exec, id, p) = federation(3);
    let instance = register(&mut exec, id, p);
    let owner = |exec: &Executive| exec.federation(id).unwrap().attribute_owner(instance, p);
    assert_eq!(owner(&exec), Some(FederateHandle(1)));
    let acquire = OwnershipRequest::Acquire {
        attributes: vec![p],
        tag: Bytes::from_static(b"mine"),
    };
    // Two acquirers wait; the owner is asked once.
    let (reply, out) = own(&mut exec, id, 2, instance, acquire.clone());
    assert!(matches!(reply, ExecReply::Ownership(ref o) if o.pending == vec![p]));
    assert_eq!(notice(&out), vec![(OwnershipNotice::ReleaseRequested, 1)]);
    let (_, out) = own(&mut exec, id, 3, instance, acquire.clone());
    assert!(notice(&out).is_empty());
    assert_eq!(
        ownership_error(own(&mut exec, id, 3, instance, acquire).0),
        Some(OwnershipError::AttributeAlreadyBeingAcquired(p))
    );
    // The owner releases: the first acquirer gets it in the same step, and is
    // asked to release it for the second.
    let (reply, out) = own(
        &mut exec,
        id,
        1,
        instance,
        OwnershipRequest::DivestIfWanted {
            attributes: vec![p],
        },
    );
    assert!(matches!(reply, ExecReply::Ownership(ref o) if o.divested == vec![p]));
    assert_eq!(
        notice(&out),
        vec![
            (OwnershipNotice::Acquired, 2),
            (OwnershipNotice::ReleaseRequested, 2)
        ]
    );
    assert_eq!(owner(&exec), Some(FederateHandle(2)));
    // The privilege to delete moved with the attribute.
    assert_eq!(
        exec.federation(id).unwrap().instances[&instance].owner,
        Some(FederateHandle(2))
    );
    // The new owner denies: the second acquisition ends as unavailable.
    let (_, out) = own(
        &mut exec,
        id,
        2,
        instance,
        OwnershipRequest::ReleaseDenied {
            attributes: vec![p],
        },
    );
    assert_eq!(notice(&out), vec![(OwnershipNotice::Unavailable, 3)]);
    assert_eq!(exec.federation(id).unwrap().pending_acquisitions(), 0);
    // The old owner may no longer divest it.
    let divest = OwnershipRequest::UnconditionalDivest {
        attributes: vec![p],
    };
    assert_eq!(
        ownership_error(own(&mut exec, id, 1, instance, divest).0),
        Some(OwnershipError::AttributeNotOwned(p))
    );
}

#[test]
fn a_repeated_attribute_is_decided_once() {
    let (mut exec, id, p) = federation(1);
    let (reply, _, _) = exec.handle(ExecRequest::RegisterInstance {
        federation: id,
        federate: FederateHandle(1),
        class: ObjectClassHandle(0),
        name: None,
        attributes: Vec::new(),
    });
    let ExecReply::Registered { instance, .. } = reply else {
        panic!("{reply:?}")
    };
    let acquire = OwnershipRequest::Acquire {
        attributes: vec![p, p],
        tag: Bytes::new(),
    };
    let (reply, out) = own(&mut exec, id, 1, instance, acquire);
    assert!(
        matches!(reply, ExecReply::Ownership(ref o) if o.acquired == vec![p] && o.pending.is_empty())
    );
    assert!(notice(&out).is_empty());
    assert_eq!(exec.federation(id).unwrap().pending_acquisitions(), 0);
}

#[test]
fn a_refused_resign_changes_nothing_and_a_cancelling_one_ends_acquisitions() {
    let (mut exec, id, p) = federation(2);
    let instance = register(&mut exec, id, p);
    own(
        &mut exec,
        id,
        2,
        instance,
        OwnershipRequest::Acquire {
            attributes: vec![p],
            tag: Bytes::new(),
        },
    );
    let resign = |exec: &mut Executive, f, action| {
        exec.handle(ExecRequest::Resign {
            federation: id,
            federate: FederateHandle(f),
            action,
        })
    };
    assert_eq!(
        federation_error(resign(&mut exec, 2, ResignAction::NoAction).0),
        Some(FederationError::OwnershipAcquisitionPending(1))
    );
    assert_eq!(
        federation_error(
            resign(
                &mut exec,
                1,
                ResignAction::CancelPendingOwnershipAcquisitions
            )
            .0
        ),
        Some(FederationError::FederateOwnsAttributes(1))
    );
    assert_eq!(exec.federation(id).unwrap().pending_acquisitions(), 1);
    // Divesting at resign hands the attribute to the one waiting.
    let (reply, _, out) = resign(&mut exec, 1, ResignAction::UnconditionallyDivestAttributes);
    assert!(matches!(reply, ExecReply::Resigned { ref delete } if delete.is_empty()));
    assert_eq!(notice(&out), vec![(OwnershipNotice::Acquired, 2)]);
    let (reply, _, _) = resign(&mut exec, 2, ResignAction::DeleteObjects);
    assert!(matches!(reply, ExecReply::Resigned { ref delete } if delete.len() == 1));
    assert_eq!(exec.federation(id).unwrap().attribute_owners().count(), 0);
}

#[test]
fn a_resign_asked_again_gets_the_first_reply_and_changes_nothing() {
    let (mut exec, id, p) = federation(2);
    let instance = register(&mut exec, id, p);
    let resign = |exec: &mut Executive, f| {
        exec.handle(ExecRequest::Resign {
            federation: id,
            federate: FederateHandle(f),
            action: ResignAction::DeleteObjects,
        })
    };
    let (first, _, out) = resign(&mut exec, 1);
    assert!(
        matches!(first, ExecReply::Resigned { ref delete } if delete.len() == 1 && delete[0].instance == instance)
    );
    assert!(out
        .iter()
        .any(|n| matches!(n, Notification::FederateResigned { federate } if federate.0 == 1)));
    // The reply was lost (a failover): the same request again gets the same
    // answer, and tells nobody anything twice.
    let (again, _, out) = resign(&mut exec, 1);
    assert!(
        matches!(again, ExecReply::Resigned { ref delete } if delete.len() == 1 && delete[0].instance == instance)
    );
    assert!(out.is_empty(), "{out:?}");
    assert_eq!(exec.federation(id).unwrap().members().count(), 1);
    // A federate that never was a member is still refused.
    assert_eq!(
        federation_error(resign(&mut exec, 9).0),
        Some(FederationError::FederateNotExecutionMember)
    );
    // Only the last resigns are remembered.
    for i in 0..70 {
        exec.handle(ExecRequest::Join {
            federation: id,
            federate_name: Some(format!("churn{i}")),
            federate_type: "t".into(),
        });
        let (reply, _, _) = resign(&mut exec, 3 + i);
        assert!(matches!(reply, ExecReply::Resigned { .. }), "{reply:?}");
    }
    assert_eq!(
        federation_error(resign(&mut exec, 1).0),
        Some(FederationError::FederateNotExecutionMember)
    );
    assert!(matches!(
        resign(&mut exec, 72).0,
        ExecReply::Resigned { .. }
    ));
}

//! The executive's save and restore protocol, request by request, through an
//! [`ExecutiveHost`] with a memory store: who is told what, when a save counts as
//! kept, and what ends a save or a restore early.

use std::sync::Arc;

use crate::exec::{ExecReply, ExecRequest, Notification};
use crate::host::ExecutiveHost;
use crate::message::Body;
use crate::save::{
    RestoreFailureReason, RestoreStatus, SaveFailureReason, SaveNotice, SaveRequest, SaveStatus,
};
use crate::types::{FederateHandle, FederationId, ResignAction};
use crate::Fom;
use bytes::Bytes;

fn federation(host: &mut ExecutiveHost, name: &str, members: &[&str]) -> FederationId {
    let fom = Arc::new(Fom::merge(&[]).expect("the MIM alone merges"));
    let ExecReply::Created { id } = host
        .handle(
            ExecRequest::Create {
                name: name.into(),
                fom,
            },
            0,
        )
        .reply
    else {
        panic!("create")
    };
    for m in members {
        join(host, id, m);
    }
    id
}

fn join(host: &mut ExecutiveHost, id: FederationId, name: &str) -> ExecReply {
    host.handle(
        ExecRequest::Join {
            federation: id,
            federate_name: Some(name.into()),
            federate_type: "t".into(),
        },
        0,
    )
    .reply
}

fn save(
    host: &mut ExecutiveHost,
    id: FederationId,
    federate: u32,
    request: SaveRequest,
) -> (ExecReply, Vec<SaveNotice>) {
    let hosted = host.handle(
        ExecRequest::Save {
            federation: id,
            federate: FederateHandle(federate),
            request,
        },
        0,
    );
    let notices = hosted
        .notifications
        .into_iter()
        .filter_map(|e| match e.body {
            Body::Exec(Notification::Save(n)) => Some(n),
            _ => None,
        })
        .collect();
    (hosted.reply, notices)
}

fn request_save(host: &mut ExecutiveHost, id: FederationId, label: &str) -> Vec<SaveNotice> {
    let (reply, notices) = save(
        host,
        id,
        1,
        SaveRequest::RequestSave {
            label: label.into(),
            time: None,
        },
    );
    assert!(matches!(reply, ExecReply::Ok), "{reply:?}");
    notices
}

fn complete(host: &mut ExecutiveHost, id: FederationId, federate: u32) -> Vec<SaveNotice> {
    let (r, _) = save(host, id, federate, SaveRequest::SaveBegun);
    assert!(matches!(r, ExecReply::Ok), "{r:?}");
    let (r, notices) = save(
        host,
        id,
        federate,
        SaveRequest::SaveComplete {
            state: Bytes::from(vec![federate as u8]),
        },
    );
    assert!(matches!(r, ExecReply::Ok), "{r:?}");
    notices
}

#[test]
fn a_save_is_announced_only_when_every_member_completed_and_then_restores() {
    let mut host = ExecutiveHost::new();
    let id = federation(&mut host, "s", &["a", "b"]);
    assert_eq!(
        request_save(&mut host, id, "one"),
        vec![SaveNotice::InitiateSave {
            label: "one".into(),
            time: None
        }]
    );
    // A second save, or a joiner, waits for this one to end.
    let (r, _) = save(
        &mut host,
        id,
        2,
        SaveRequest::RequestSave {
            label: "two".into(),
            time: None,
        },
    );
    assert!(matches!(r, ExecReply::SaveError(_)), "{r:?}");
    assert!(matches!(
        join(&mut host, id, "late"),
        ExecReply::SaveError(_)
    ));
    // Completing before beginning is refused.
    let (r, _) = save(
        &mut host,
        id,
        2,
        SaveRequest::SaveComplete {
            state: Bytes::new(),
        },
    );
    assert!(matches!(r, ExecReply::SaveError(_)), "{r:?}");
    assert!(complete(&mut host, id, 1).is_empty());
    let (r, _) = save(&mut host, id, 2, SaveRequest::QuerySaveStatus);
    let ExecReply::SaveStatus(statuses) = r else {
        panic!("{r:?}")
    };
    assert_eq!(
        statuses,
        vec![
            (
                FederateHandle(1),
                SaveStatus::FederateWaitingForFederationToSave
            ),
            (FederateHandle(2), SaveStatus::FederateInstructedToSave),
        ]
    );
    assert_eq!(
        complete(&mut host, id, 2),
        vec![SaveNotice::Saved {
            label: "one".into()
        }]
    );
    // The restore: each member is told its part, with the mapping.
    let (r, notices) = save(
        &mut host,
        id,
        2,
        SaveRequest::RequestRestore {
            label: "one".into(),
        },
    );
    assert!(
        matches!(&r, ExecReply::RestoreRequest { result: Ok(()), .. }),
        "{r:?}"
    );
    assert_eq!(notices.len(), 3, "{notices:?}");
    let SaveNotice::InitiateRestore {
        federate,
        saved_as,
        state,
        epoch,
        ..
    } = &notices[2]
    else {
        panic!("{notices:?}")
    };
    assert_eq!(
        (*federate, *saved_as, state.as_ref(), *epoch),
        (FederateHandle(2), FederateHandle(2), &[2u8][..], 1)
    );
    let (r, n) = save(&mut host, id, 1, SaveRequest::RestoreComplete);
    assert!(matches!(r, ExecReply::Ok) && n.is_empty());
    let (r, _) = save(&mut host, id, 1, SaveRequest::QueryRestoreStatus);
    assert!(
        matches!(&r, ExecReply::RestoreStatus(s) if s[1] == (FederateHandle(2), RestoreStatus::FederateInstructedToRestore)),
        "{r:?}"
    );
    let (_, n) = save(&mut host, id, 2, SaveRequest::RestoreComplete);
    assert_eq!(
        n,
        vec![SaveNotice::Restored {
            label: "one".into()
        }]
    );
}

#[test]
fn not_complete_abort_and_resign_end_a_save_with_their_reason() {
    let mut host = ExecutiveHost::new();
    let id = federation(&mut host, "s", &["a", "b"]);
    request_save(&mut host, id, "x");
    complete(&mut host, id, 1);
    let (_, n) = save(&mut host, id, 2, SaveRequest::SaveNotComplete);
    assert_eq!(
        n,
        vec![SaveNotice::NotSaved {
            label: "x".into(),
            reason: SaveFailureReason::FederateReportedFailure
        }]
    );
    request_save(&mut host, id, "y");
    let (_, n) = save(&mut host, id, 2, SaveRequest::AbortSave);
    assert_eq!(
        n,
        vec![SaveNotice::NotSaved {
            label: "y".into(),
            reason: SaveFailureReason::SaveAborted
        }]
    );
    request_save(&mut host, id, "z");
    let hosted = host.handle(
        ExecRequest::Resign {
            federation: id,
            federate: FederateHandle(2),
            action: ResignAction::DeleteObjects,
        },
        0,
    );
    assert!(hosted.notifications.iter().any(|e| matches!(
        &e.body,
        Body::Exec(Notification::Save(SaveNotice::NotSaved {
            reason: SaveFailureReason::FederateResigned,
            ..
        }))
    )));
    // None of them was kept.
    for label in ["x", "y", "z"] {
        let (r, _) = save(
            &mut host,
            id,
            1,
            SaveRequest::RequestRestore {
                label: label.into(),
            },
        );
        assert!(
            matches!(&r, ExecReply::RestoreRequest { result: Err(e), .. } if e.contains("no save labelled")),
            "{r:?}"
        );
    }
}

#[test]
fn a_restore_needs_a_federate_of_each_saved_type_and_can_be_aborted() {
    let mut host = ExecutiveHost::new();
    let id = federation(&mut host, "s", &["a", "b"]);
    request_save(&mut host, id, "x");
    complete(&mut host, id, 1);
    complete(&mut host, id, 2);
    host.handle(
        ExecRequest::Resign {
            federation: id,
            federate: FederateHandle(2),
            action: ResignAction::DeleteObjects,
        },
        0,
    );
    let (r, n) = save(
        &mut host,
        id,
        1,
        SaveRequest::RequestRestore { label: "x".into() },
    );
    assert!(
        matches!(&r, ExecReply::RestoreRequest { result: Err(e), .. } if e.contains("the save has 2 federate(s), the federation 1")),
        "{r:?}"
    );
    assert!(n.is_empty());
    // A newcomer of the same type takes the saved federate's place.
    join(&mut host, id, "c");
    let (r, n) = save(
        &mut host,
        id,
        1,
        SaveRequest::RequestRestore { label: "x".into() },
    );
    assert!(
        matches!(&r, ExecReply::RestoreRequest { result: Ok(()), .. }),
        "{r:?}"
    );
    assert!(n.iter().any(|n| matches!(n, SaveNotice::InitiateRestore { federate, saved_as, .. } if *federate == FederateHandle(3) && *saved_as == FederateHandle(2))));
    // Registration waits for the restore to end.
    let hosted = host.handle(
        ExecRequest::RegisterInstance {
            federation: id,
            federate: FederateHandle(1),
            class: crate::ObjectClassHandle(0),
            name: None,
            attributes: vec![],
        },
        0,
    );
    assert!(
        matches!(hosted.reply, ExecReply::SaveError(_)),
        "{:?}",
        hosted.reply
    );
    let (_, n) = save(&mut host, id, 3, SaveRequest::AbortRestore);
    assert_eq!(
        n,
        vec![SaveNotice::NotRestored {
            label: "x".into(),
            reason: RestoreFailureReason::RestoreAborted
        }]
    );
}

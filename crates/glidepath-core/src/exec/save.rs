//! Federation save and restore in the executive: who has been told to save or
//! restore, who has finished, and the federation-wide outcome.
//!
//! A save ends when every member has answered (complete or not complete): the
//! executive then adds its own agreed state to the federates' snapshots and hands the
//! [`SavedFederation`] to its host ([`FederationExecution::take_finished_saves`]),
//! which stores it and reports back ([`FederationExecution::save_stored`]); only then
//! is *federation saved* (or *not saved*) announced, so a federation is never told a
//! save exists that was not kept. A restore is handed the save by the host before
//! the request ([`FederationExecution::stage_restore`]): the executive maps each saved
//! federate to a joined one (same name and type first, then same type), takes back its
//! own state, and tells every member its part.

use std::collections::BTreeMap;

use bytes::Bytes;

use super::ownership::AttributeOwnership;
use super::{ExecReply, FederationExecution, Notification};
use crate::error::SaveRestoreError;
use crate::save::{
    ExecSnapshot, RestoreFailureReason, RestoreStatus, SaveFailureReason, SaveNotice, SaveRequest,
    SaveStatus, SavedFederate, SavedFederation, SavedTime,
};
use crate::types::{FederateHandle, ObjectInstanceHandle};

/// A federation save in progress.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct SaveRun {
    label: String,
    time: Option<SavedTime>,
    status: BTreeMap<FederateHandle, SaveStatus>,
    states: BTreeMap<FederateHandle, Bytes>,
    failed: bool,
    /// Every member answered: the host is storing the save.
    storing: bool,
}

/// A federation restore in progress.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct RestoreRun {
    label: String,
    status: BTreeMap<FederateHandle, RestoreStatus>,
    failed: bool,
}

/// The save/restore part of a federation execution's state.
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct SaveState {
    pub(crate) save: Option<SaveRun>,
    pub(crate) restore: Option<RestoreRun>,
    /// How many restores this federation has begun.
    epoch: u64,
    /// What the host found for the next restore request: the label asked for and the
    /// save, `None` if nothing is kept under it, or why it could not be read.
    staged: Option<(String, Result<Option<SavedFederation>, String>)>,
    /// Finished saves for the host to store.
    finished: Vec<SavedFederation>,
}

impl SaveState {
    /// True while a restore is in progress: requests that change the agreed state
    /// (registration, deletion, ownership, regulation) are refused meanwhile.
    pub(crate) fn restoring(&self) -> bool {
        self.restore.is_some()
    }
}

impl FederationExecution {
    /// Hands the executive what the host found for a restore of `label`.
    pub fn stage_restore(&mut self, label: &str, found: Result<Option<SavedFederation>, String>) {
        self.saves.staged = Some((label.to_string(), found));
    }

    /// Saves every member has answered, for the host to store; each must be reported
    /// back with [`FederationExecution::save_stored`].
    pub fn take_finished_saves(&mut self) -> Vec<SavedFederation> {
        std::mem::take(&mut self.saves.finished)
    }

    /// The host stored (or failed to store) the save in progress: announces the
    /// outcome.
    pub fn save_stored(&mut self, result: Result<(), String>, out: &mut Vec<Notification>) {
        let Some(run) = self.saves.save.take() else {
            return;
        };
        out.push(Notification::Save(match result {
            Ok(()) => SaveNotice::Saved { label: run.label },
            Err(reason) => SaveNotice::NotSaved {
                label: run.label,
                reason: SaveFailureReason::StorageFailed(reason),
            },
        }));
    }

    /// A member resigned: a save or restore it took part in fails.
    pub(crate) fn save_member_left(
        &mut self,
        federate: FederateHandle,
        out: &mut Vec<Notification>,
    ) {
        if let Some(run) = &self.saves.save {
            if !run.storing && run.status.contains_key(&federate) {
                let run = self.saves.save.take().expect("present");
                out.push(Notification::Save(SaveNotice::NotSaved {
                    label: run.label,
                    reason: SaveFailureReason::FederateResigned,
                }));
            }
        }
        if let Some(run) = &self.saves.restore {
            if run.status.contains_key(&federate) {
                let run = self.saves.restore.take().expect("present");
                out.push(Notification::Save(SaveNotice::NotRestored {
                    label: run.label,
                    reason: RestoreFailureReason::FederateResigned,
                }));
            }
        }
    }

    /// True while a save or restore is in progress (a federate may not join).
    pub(crate) fn save_or_restore_busy(&self) -> Option<SaveRestoreError> {
        if self.saves.save.is_some() {
            Some(SaveRestoreError::SaveInProgress)
        } else if self.saves.restore.is_some() {
            Some(SaveRestoreError::RestoreInProgress)
        } else {
            None
        }
    }

    pub(crate) fn save_request(
        &mut self,
        federate: FederateHandle,
        request: SaveRequest,
        out: &mut Vec<Notification>,
    ) -> ExecReply {
        use ExecReply as R;
        let err = R::SaveError;
        match request {
            SaveRequest::RequestSave { label, time } => {
                if label.is_empty() {
                    return err(SaveRestoreError::IllegalLabel);
                }
                if let Some(e) = self.save_or_restore_busy() {
                    return err(e);
                }
                self.saves.save = Some(SaveRun {
                    label: label.clone(),
                    time,
                    status: self
                        .members
                        .keys()
                        .map(|m| (*m, SaveStatus::FederateInstructedToSave))
                        .collect(),
                    states: BTreeMap::new(),
                    failed: false,
                    storing: false,
                });
                out.push(Notification::Save(SaveNotice::InitiateSave { label, time }));
                R::Ok
            }
            SaveRequest::SaveBegun => match self.save_status_mut(federate) {
                Some(s @ SaveStatus::FederateInstructedToSave) => {
                    *s = SaveStatus::FederateSaving;
                    R::Ok
                }
                Some(_) => R::Ok,
                None => err(SaveRestoreError::SaveNotInitiated),
            },
            SaveRequest::SaveComplete { state } => {
                match self.save_status_mut(federate) {
                    Some(SaveStatus::FederateInstructedToSave) => {
                        return err(SaveRestoreError::FederateHasNotBegunSave)
                    }
                    Some(s) => *s = SaveStatus::FederateWaitingForFederationToSave,
                    None => return err(SaveRestoreError::SaveNotInitiated),
                }
                let run = self.saves.save.as_mut().expect("checked");
                run.states.insert(federate, state);
                self.finish_save_if_answered(out);
                R::Ok
            }
            SaveRequest::SaveNotComplete => {
                match self.save_status_mut(federate) {
                    Some(s) => *s = SaveStatus::FederateWaitingForFederationToSave,
                    None => return err(SaveRestoreError::SaveNotInitiated),
                }
                self.saves.save.as_mut().expect("checked").failed = true;
                self.finish_save_if_answered(out);
                R::Ok
            }
            SaveRequest::AbortSave => match &self.saves.save {
                Some(run) if !run.storing => {
                    let run = self.saves.save.take().expect("present");
                    out.push(Notification::Save(SaveNotice::NotSaved {
                        label: run.label,
                        reason: SaveFailureReason::SaveAborted,
                    }));
                    R::Ok
                }
                _ => err(SaveRestoreError::SaveNotInitiated),
            },
            SaveRequest::QuerySaveStatus => R::SaveStatus(
                self.members
                    .keys()
                    .map(|m| {
                        let s = self.saves.save.as_ref().and_then(|r| r.status.get(m));
                        (*m, s.copied().unwrap_or(SaveStatus::NoSaveInProgress))
                    })
                    .collect(),
            ),
            SaveRequest::RequestRestore { label } => self.request_restore(label, out),
            SaveRequest::RestoreComplete | SaveRequest::RestoreNotComplete => {
                let failed = matches!(request, SaveRequest::RestoreNotComplete);
                let Some(run) = self.saves.restore.as_mut() else {
                    return err(SaveRestoreError::RestoreNotRequested);
                };
                let Some(s) = run.status.get_mut(&federate) else {
                    return err(SaveRestoreError::RestoreNotRequested);
                };
                *s = RestoreStatus::FederateWaitingForFederationToRestore;
                run.failed |= failed;
                if run
                    .status
                    .values()
                    .all(|s| *s == RestoreStatus::FederateWaitingForFederationToRestore)
                {
                    let run = self.saves.restore.take().expect("present");
                    out.push(Notification::Save(if run.failed {
                        SaveNotice::NotRestored {
                            label: run.label,
                            reason: RestoreFailureReason::FederateReportedFailure,
                        }
                    } else {
                        SaveNotice::Restored { label: run.label }
                    }));
                }
                R::Ok
            }
            SaveRequest::AbortRestore => match self.saves.restore.take() {
                Some(run) => {
                    out.push(Notification::Save(SaveNotice::NotRestored {
                        label: run.label,
                        reason: RestoreFailureReason::RestoreAborted,
                    }));
                    R::Ok
                }
                None => err(SaveRestoreError::RestoreNotRequested),
            },
            SaveRequest::QueryRestoreStatus => R::RestoreStatus(
                self.members
                    .keys()
                    .map(|m| {
                        let s = self.saves.restore.as_ref().and_then(|r| r.status.get(m));
                        (*m, s.copied().unwrap_or(RestoreStatus::NoRestoreInProgress))
                    })
                    .collect(),
            ),
        }
    }

    fn save_status_mut(&mut self, federate: FederateHandle) -> Option<&mut SaveStatus> {
        self.saves
            .save
            .as_mut()
            .filter(|r| !r.storing)
            .and_then(|r| r.status.get_mut(&federate))
    }

    /// Once every member answered: a failed save is announced at once, a good one is
    /// handed to the host to store.
    fn finish_save_if_answered(&mut self, out: &mut Vec<Notification>) {
        let run = self.saves.save.as_mut().expect("a save in progress");
        if run
            .status
            .values()
            .any(|s| *s != SaveStatus::FederateWaitingForFederationToSave)
        {
            return;
        }
        if run.failed {
            let run = self.saves.save.take().expect("present");
            out.push(Notification::Save(SaveNotice::NotSaved {
                label: run.label,
                reason: SaveFailureReason::FederateReportedFailure,
            }));
            return;
        }
        run.storing = true;
        let federates = run
            .states
            .iter()
            .map(|(h, state)| {
                let info = &self.members[h];
                SavedFederate {
                    handle: *h,
                    name: info.name.clone(),
                    federate_type: info.federate_type.clone(),
                    state: state.clone(),
                }
            })
            .collect();
        let saved = SavedFederation {
            federation: self.name.clone(),
            label: run.label.clone(),
            time: run.time,
            executive: self.exec_snapshot(),
            federates,
        };
        self.saves.finished.push(saved);
    }

    fn exec_snapshot(&self) -> ExecSnapshot {
        ExecSnapshot {
            instances: self.instances.values().cloned().collect(),
            owners: self
                .ownership
                .iter()
                .map(|(i, attrs)| {
                    let owned = attrs
                        .iter()
                        .filter_map(|(a, o)| o.owner().map(|f| (*a, f)))
                        .collect();
                    (*i, owned)
                })
                .collect(),
            regulators: self.regulators.iter().copied().collect(),
            next_instance: self.next_instance,
        }
    }

    fn request_restore(&mut self, label: String, out: &mut Vec<Notification>) -> ExecReply {
        if let Some(e) = self.save_or_restore_busy() {
            return ExecReply::SaveError(e);
        }
        let staged = match self.saves.staged.take() {
            Some((l, found)) if l == label => found,
            _ => Ok(None),
        };
        let saved = match staged {
            Ok(Some(saved)) => saved,
            Ok(None) => {
                return ExecReply::RestoreRequest {
                    label: label.clone(),
                    result: Err(format!("no save labelled `{label}` of `{}`", self.name)),
                }
            }
            Err(reason) => {
                return ExecReply::RestoreRequest {
                    label,
                    result: Err(reason),
                }
            }
        };
        let mapping = match self.map_saved_federates(&saved.federates) {
            Ok(m) => m,
            Err(reason) => {
                return ExecReply::RestoreRequest {
                    label,
                    result: Err(reason),
                }
            }
        };
        self.restore_exec_state(&saved.executive, &mapping);
        self.saves.epoch += 1;
        let epoch = self.saves.epoch;
        self.saves.restore = Some(RestoreRun {
            label: label.clone(),
            status: self
                .members
                .keys()
                .map(|m| (*m, RestoreStatus::FederateInstructedToRestore))
                .collect(),
            failed: false,
        });
        out.push(Notification::Save(SaveNotice::RestoreBegun {
            label: label.clone(),
        }));
        let pairs: Vec<(FederateHandle, FederateHandle)> =
            mapping.iter().map(|(s, c)| (*s, *c)).collect();
        for saved_federate in &saved.federates {
            out.push(Notification::Save(SaveNotice::InitiateRestore {
                label: label.clone(),
                epoch,
                federate: mapping[&saved_federate.handle],
                saved_as: saved_federate.handle,
                mapping: pairs.clone(),
                state: saved_federate.state.clone(),
            }));
        }
        ExecReply::RestoreRequest {
            label,
            result: Ok(()),
        }
    }

    /// Saved handle to joined handle: the same name and type first, then any
    /// unassigned member of the same type (the standard matches by type).
    fn map_saved_federates(
        &self,
        saved: &[SavedFederate],
    ) -> Result<BTreeMap<FederateHandle, FederateHandle>, String> {
        if saved.len() != self.members.len() {
            return Err(format!(
                "the save has {} federate(s), the federation {}",
                saved.len(),
                self.members.len()
            ));
        }
        let mut mapping = BTreeMap::new();
        let mut taken = std::collections::BTreeSet::new();
        for s in saved {
            if let Some(m) = self.members.values().find(|m| {
                m.name == s.name && m.federate_type == s.federate_type && !taken.contains(&m.handle)
            }) {
                mapping.insert(s.handle, m.handle);
                taken.insert(m.handle);
            }
        }
        let unmapped: Vec<&SavedFederate> = saved
            .iter()
            .filter(|s| !mapping.contains_key(&s.handle))
            .collect();
        for s in unmapped {
            let Some(m) = self
                .members
                .values()
                .find(|m| m.federate_type == s.federate_type && !taken.contains(&m.handle))
            else {
                return Err(format!(
                    "no joined federate of type `{}` for saved federate `{}`",
                    s.federate_type, s.name
                ));
            };
            mapping.insert(s.handle, m.handle);
            taken.insert(m.handle);
        }
        Ok(mapping)
    }

    /// Takes back the agreed state of the save, federate handles mapped.
    fn restore_exec_state(
        &mut self,
        saved: &ExecSnapshot,
        mapping: &BTreeMap<FederateHandle, FederateHandle>,
    ) {
        let map = |f: FederateHandle| mapping.get(&f).copied().unwrap_or(f);
        self.instances = saved
            .instances
            .iter()
            .map(|i| {
                let mut i = i.clone();
                i.owner = i.owner.map(map);
                (i.instance, i)
            })
            .collect();
        self.names_in_use = self
            .instances
            .values()
            .map(|i| (i.name.clone(), i.instance))
            .collect();
        self.ownership = saved
            .owners
            .iter()
            .map(|(i, owned): &(ObjectInstanceHandle, _)| {
                let attrs = owned
                    .iter()
                    .map(|(a, f)| (*a, AttributeOwnership::owned_by(map(*f))))
                    .collect();
                (*i, attrs)
            })
            .collect();
        self.regulators = saved.regulators.iter().map(|f| map(*f)).collect();
        self.reserved.clear();
        // Handles of instances registered after the save are never given again:
        // a late message about one must not name a new instance.
        self.next_instance = self.next_instance.max(saved.next_instance);
    }
}

#[cfg(test)]
mod tests;

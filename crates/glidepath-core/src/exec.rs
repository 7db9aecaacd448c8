//! The federation executive: the federation-wide state that every member must agree on.
//!
//! [`Executive`] hosts any number of [`FederationExecution`]s by name. It is a plain
//! state machine: [`Executive::handle`] takes one request and returns the reply and the
//! notifications to broadcast on each federation's [`crate::Topic::Federation`] topic.
//! A transport decides where it runs (in the process for `inproc`, in a server process
//! for distributed transports); data messages never pass through it.

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

use bytes::Bytes;

mod ownership;
mod resign;
mod save;

use crate::error::{FederationError, ObjectError, OwnershipError, SaveRestoreError};
use crate::save::{RestoreStatus, SaveNotice, SaveRequest, SaveStatus};
use crate::types::{FederateHandle, FederationId, ObjectInstanceHandle, ResignAction};
use crate::{AttributeHandle, Fom, ObjectClassHandle};

use ownership::AttributeOwnership;
pub(crate) use ownership::PRIVILEGE_TO_DELETE;
pub use ownership::{OwnershipNotice, OwnershipOutcome, OwnershipRequest};

/// A request to the executive.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum ExecRequest {
    Create {
        name: String,
        fom: Arc<Fom>,
    },
    Destroy {
        name: String,
    },
    /// Find a federation by name (a joiner subscribes its topics before joining).
    Lookup {
        name: String,
    },
    Join {
        federation: FederationId,
        federate_name: Option<String>,
        federate_type: String,
    },
    Resign {
        federation: FederationId,
        federate: FederateHandle,
        action: ResignAction,
    },
    /// The executive's host found `federate`'s endpoint gone (its process died):
    /// resign it as lost, with `UnconditionallyDivestAttributes`. The members get
    /// [`Notification::FederateLost`] instead of `FederateResigned`, since no last
    /// status of its own will follow.
    Lost {
        federation: FederationId,
        federate: FederateHandle,
    },
    ListFederates {
        federation: FederationId,
    },
    ReserveName {
        federation: FederationId,
        federate: FederateHandle,
        name: String,
    },
    ReleaseName {
        federation: FederationId,
        federate: FederateHandle,
        name: String,
    },
    RegisterInstance {
        federation: FederationId,
        federate: FederateHandle,
        class: ObjectClassHandle,
        name: Option<String>,
        /// The attributes the registrant owns from the start: those it publishes at
        /// `class`, and `HLAprivilegeToDeleteObject`.
        #[serde(default)]
        attributes: Vec<AttributeHandle>,
    },
    DeleteInstance {
        federation: FederationId,
        federate: FederateHandle,
        instance: ObjectInstanceHandle,
    },
    /// Instances of these classes registered by others (for discovery on subscribe).
    ListInstances {
        federation: FederationId,
        federate: FederateHandle,
        classes: Vec<ObjectClassHandle>,
    },
    RegisterSyncPoint {
        federation: FederationId,
        federate: FederateHandle,
        label: String,
        tag: Bytes,
        set: Option<Vec<FederateHandle>>,
    },
    AchieveSyncPoint {
        federation: FederationId,
        federate: FederateHandle,
        label: String,
        success: bool,
    },
    /// Become time-regulating; the reply names every member that must acknowledge.
    EnableRegulation {
        federation: FederationId,
        federate: FederateHandle,
    },
    DisableRegulation {
        federation: FederationId,
        federate: FederateHandle,
    },
    /// An ownership management service on attributes of one instance.
    Ownership {
        federation: FederationId,
        federate: FederateHandle,
        instance: ObjectInstanceHandle,
        request: OwnershipRequest,
    },
    /// A federation save or restore service.
    Save {
        federation: FederationId,
        federate: FederateHandle,
        request: SaveRequest,
    },
}

/// A joined federate as listed by the executive.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FederateInfo {
    pub handle: FederateHandle,
    pub name: String,
    pub federate_type: String,
}

/// An object instance as listed by the executive.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct InstanceInfo {
    pub instance: ObjectInstanceHandle,
    pub class: ObjectClassHandle,
    pub name: String,
    pub owner: Option<FederateHandle>,
}

/// The executive's answer.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub enum ExecReply {
    Ok,
    Created {
        id: FederationId,
    },
    Found {
        id: FederationId,
        fom: Arc<Fom>,
    },
    Joined {
        federate: FederateHandle,
        fom: Arc<Fom>,
        members: Vec<FederateInfo>,
        regulators: Vec<FederateHandle>,
    },
    Resigned {
        delete: Vec<InstanceInfo>,
    },
    Federates(Vec<FederateInfo>),
    NameReserved {
        name: String,
        success: bool,
    },
    Registered {
        instance: ObjectInstanceHandle,
        name: String,
    },
    Instances(Vec<InstanceInfo>),
    SyncPointRegistered {
        label: String,
        result: Result<(), String>,
    },
    RegulationEnabling {
        ack_from: Vec<FederateHandle>,
    },
    /// What an ownership request did to the requester's attributes.
    Ownership(OwnershipOutcome),
    /// The answer to [`OwnershipRequest::Query`]: the attribute's owner, if any.
    AttributeOwner {
        owner: Option<FederateHandle>,
    },
    FederationError(FederationError),
    ObjectError(ObjectError),
    OwnershipError(OwnershipError),
    /// The answer to [`SaveRequest::RequestRestore`]: whether the restore begins
    /// (*request federation restore succeeded / failed*, with the reason).
    RestoreRequest {
        label: String,
        result: Result<(), String>,
    },
    /// The answer to [`SaveRequest::QuerySaveStatus`].
    SaveStatus(Vec<(FederateHandle, SaveStatus)>),
    /// The answer to [`SaveRequest::QueryRestoreStatus`].
    RestoreStatus(Vec<(FederateHandle, RestoreStatus)>),
    SaveError(SaveRestoreError),
}

/// A broadcast from the executive to the members of one federation.
#[derive(Clone, Debug, PartialEq)]
pub enum Notification {
    FederateJoined {
        federate: FederateHandle,
        name: String,
        federate_type: String,
    },
    FederateResigned {
        federate: FederateHandle,
    },
    /// A member resigned by the executive's host because its endpoint was gone: it
    /// will send nothing more, not even the last status a resigning federate sends.
    FederateLost {
        federate: FederateHandle,
    },
    AnnounceSynchronizationPoint {
        label: String,
        tag: Bytes,
        targets: Arc<[FederateHandle]>,
    },
    FederationSynchronized {
        label: String,
        failed: Vec<FederateHandle>,
        targets: Arc<[FederateHandle]>,
    },
    /// An ownership callback for `federate` (or, for an offer, for every federate
    /// but the divesting `federate` that can take the attributes).
    Ownership {
        notice: OwnershipNotice,
        federate: FederateHandle,
        instance: ObjectInstanceHandle,
        attributes: Vec<AttributeHandle>,
        tag: Bytes,
    },
    /// A federation save or restore callback (each notice says whom it is for).
    Save(SaveNotice),
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SyncPoint {
    members: BTreeSet<FederateHandle>,
    achieved: BTreeMap<FederateHandle, bool>,
}

/// One federation execution's agreed state.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct FederationExecution {
    pub id: FederationId,
    pub name: String,
    pub fom: Arc<Fom>,
    members: BTreeMap<FederateHandle, FederateInfo>,
    next_federate: u32,
    regulators: BTreeSet<FederateHandle>,
    reserved: HashMap<String, FederateHandle>,
    instances: BTreeMap<ObjectInstanceHandle, InstanceInfo>,
    /// Per instance, the owner and pending transfers of each attribute with any;
    /// an attribute missing here is unowned with nothing pending. The one owner
    /// registry of the federation: every transfer is one request handled here.
    ownership: BTreeMap<ObjectInstanceHandle, BTreeMap<AttributeHandle, AttributeOwnership>>,
    names_in_use: HashMap<String, ObjectInstanceHandle>,
    next_instance: u64,
    sync_points: BTreeMap<String, SyncPoint>,
    /// The save or restore in progress, and what the host handed over for them.
    saves: save::SaveState,
    /// The last [`RESIGN_MEMORY`] resigns and their replies, so that a resign asked
    /// again (its reply was lost: a timeout while the executive failed over) gets
    /// the same reply instead of *not a member*. Handles are never reused, so a
    /// handle found here is the same federate.
    #[serde(default)]
    resigned: VecDeque<(FederateHandle, Vec<InstanceInfo>)>,
}

/// How many resigns a federation execution remembers (see `resigned`).
const RESIGN_MEMORY: usize = 64;

impl FederationExecution {
    fn new(id: FederationId, name: String, fom: Arc<Fom>) -> Self {
        FederationExecution {
            id,
            name,
            fom,
            members: BTreeMap::new(),
            next_federate: 1,
            regulators: BTreeSet::new(),
            reserved: HashMap::new(),
            instances: BTreeMap::new(),
            ownership: BTreeMap::new(),
            names_in_use: HashMap::new(),
            next_instance: 1,
            sync_points: BTreeMap::new(),
            saves: save::SaveState::default(),
            resigned: VecDeque::new(),
        }
    }

    /// The joined federates, in join order.
    pub fn members(&self) -> impl Iterator<Item = &FederateInfo> {
        self.members.values()
    }

    fn member(&self, f: FederateHandle) -> Result<(), FederationError> {
        if self.members.contains_key(&f) {
            Ok(())
        } else {
            Err(FederationError::FederateNotExecutionMember)
        }
    }

    /// Completes every synchronization point all of whose members have achieved it.
    fn complete_sync_points(&mut self, out: &mut Vec<Notification>) {
        let done: Vec<String> = self
            .sync_points
            .iter()
            .filter(|(_, sp)| sp.members.iter().all(|m| sp.achieved.contains_key(m)))
            .map(|(l, _)| l.clone())
            .collect();
        for label in done {
            let sp = self.sync_points.remove(&label).expect("present");
            let failed = sp
                .achieved
                .iter()
                .filter(|(m, ok)| !**ok && sp.members.contains(m))
                .map(|(m, _)| *m)
                .collect();
            let targets: Arc<[FederateHandle]> = sp.members.iter().copied().collect();
            out.push(Notification::FederationSynchronized {
                label,
                failed,
                targets,
            });
        }
    }

    fn handle(&mut self, req: ExecRequest, out: &mut Vec<Notification>) -> ExecReply {
        use ExecReply as R;
        let fed_err = |e: FederationError| R::FederationError(e);
        if self.saves.restoring()
            && matches!(
                req,
                ExecRequest::RegisterInstance { .. }
                    | ExecRequest::DeleteInstance { .. }
                    | ExecRequest::Ownership { .. }
                    | ExecRequest::EnableRegulation { .. }
                    | ExecRequest::DisableRegulation { .. }
            )
        {
            // The agreed state is the save's until every member has restored.
            return R::SaveError(SaveRestoreError::RestoreInProgress);
        }
        match req {
            ExecRequest::Join {
                federate_name,
                federate_type,
                ..
            } => {
                if let Some(e) = self.save_or_restore_busy() {
                    return R::SaveError(e);
                }
                let handle = FederateHandle(self.next_federate);
                let name = federate_name.unwrap_or_else(|| format!("HLAfederate{}", handle.0));
                if self.members.values().any(|m| m.name == name) {
                    return fed_err(FederationError::FederateNameAlreadyInUse(name));
                }
                self.next_federate += 1;
                let info = FederateInfo {
                    handle,
                    name: name.clone(),
                    federate_type: federate_type.clone(),
                };
                self.members.insert(handle, info);
                out.push(Notification::FederateJoined {
                    federate: handle,
                    name,
                    federate_type,
                });
                R::Joined {
                    federate: handle,
                    fom: self.fom.clone(),
                    members: self.members.values().cloned().collect(),
                    regulators: self.regulators.iter().copied().collect(),
                }
            }
            ExecRequest::Resign {
                federate, action, ..
            } => self.resign(federate, action, false, out),
            ExecRequest::Lost { federate, .. } => self.resign(
                federate,
                ResignAction::UnconditionallyDivestAttributes,
                true,
                out,
            ),
            ExecRequest::ListFederates { .. } => {
                R::Federates(self.members.values().cloned().collect())
            }
            ExecRequest::ReserveName { federate, name, .. } => {
                if let Err(e) = self.member(federate) {
                    return fed_err(e);
                }
                if name.is_empty() || name.starts_with("HLA") {
                    return R::ObjectError(ObjectError::IllegalName(name));
                }
                let success =
                    !self.reserved.contains_key(&name) && !self.names_in_use.contains_key(&name);
                if success {
                    self.reserved.insert(name.clone(), federate);
                }
                R::NameReserved { name, success }
            }
            ExecRequest::ReleaseName { federate, name, .. } => {
                if self.reserved.get(&name) == Some(&federate) {
                    self.reserved.remove(&name);
                    R::Ok
                } else {
                    R::ObjectError(ObjectError::ObjectInstanceNameNotReserved(name))
                }
            }
            ExecRequest::RegisterInstance {
                federate,
                class,
                name,
                attributes,
                ..
            } => {
                if let Err(e) = self.member(federate) {
                    return fed_err(e);
                }
                let Some(c) = self.fom.object_class(class) else {
                    return R::ObjectError(ObjectError::ObjectClassNotDefined(class));
                };
                if let Some(a) = attributes.iter().find(|a| !c.all_attributes.contains(a)) {
                    return R::ObjectError(ObjectError::AttributeNotDefined {
                        class,
                        attribute: *a,
                    });
                }
                let instance = ObjectInstanceHandle(self.next_instance);
                let name = match name {
                    Some(n) => {
                        if self.reserved.get(&n) != Some(&federate) {
                            return R::ObjectError(if self.names_in_use.contains_key(&n) {
                                ObjectError::ObjectInstanceNameInUse(n)
                            } else {
                                ObjectError::ObjectInstanceNameNotReserved(n)
                            });
                        }
                        self.reserved.remove(&n);
                        n
                    }
                    None => format!("HLAobject{}", instance.0),
                };
                self.next_instance += 1;
                self.names_in_use.insert(name.clone(), instance);
                self.instances.insert(
                    instance,
                    InstanceInfo {
                        instance,
                        class,
                        name: name.clone(),
                        owner: Some(federate),
                    },
                );
                self.ownership.insert(
                    instance,
                    attributes
                        .into_iter()
                        .map(|a| (a, AttributeOwnership::owned_by(federate)))
                        .collect(),
                );
                R::Registered { instance, name }
            }
            ExecRequest::DeleteInstance {
                federate, instance, ..
            } => match self.instances.get(&instance) {
                None => R::ObjectError(ObjectError::ObjectInstanceNotKnown(instance)),
                Some(i) if i.owner != Some(federate) => {
                    R::ObjectError(ObjectError::DeletePrivilegeNotHeld(instance))
                }
                Some(_) => {
                    self.remove_instance(instance, out);
                    R::Ok
                }
            },
            ExecRequest::ListInstances {
                federate, classes, ..
            } => R::Instances(
                self.instances
                    .values()
                    .filter(|i| i.owner != Some(federate) && classes.contains(&i.class))
                    .cloned()
                    .collect(),
            ),
            ExecRequest::RegisterSyncPoint {
                federate,
                label,
                tag,
                set,
                ..
            } => {
                if let Err(e) = self.member(federate) {
                    return fed_err(e);
                }
                if self.sync_points.contains_key(&label) {
                    return R::SyncPointRegistered {
                        label,
                        result: Err("label already in use".into()),
                    };
                }
                let members: BTreeSet<FederateHandle> = match set {
                    Some(s) if !s.is_empty() => {
                        if let Some(bad) = s.iter().find(|f| !self.members.contains_key(f)) {
                            return R::SyncPointRegistered {
                                label,
                                result: Err(format!("{bad} is not joined")),
                            };
                        }
                        s.into_iter().collect()
                    }
                    _ => self.members.keys().copied().collect(),
                };
                let targets: Arc<[FederateHandle]> = members.iter().copied().collect();
                out.push(Notification::AnnounceSynchronizationPoint {
                    label: label.clone(),
                    tag,
                    targets,
                });
                self.sync_points.insert(
                    label.clone(),
                    SyncPoint {
                        members,
                        achieved: BTreeMap::new(),
                    },
                );
                R::SyncPointRegistered {
                    label,
                    result: Ok(()),
                }
            }
            ExecRequest::AchieveSyncPoint {
                federate,
                label,
                success,
                ..
            } => {
                match self.sync_points.get_mut(&label) {
                    Some(sp) if sp.members.contains(&federate) => {
                        sp.achieved.insert(federate, success);
                    }
                    _ => {
                        return fed_err(FederationError::SynchronizationPointLabelNotAnnounced(
                            label,
                        ))
                    }
                }
                self.complete_sync_points(out);
                R::Ok
            }
            ExecRequest::EnableRegulation { federate, .. } => {
                if let Err(e) = self.member(federate) {
                    return fed_err(e);
                }
                self.regulators.insert(federate);
                R::RegulationEnabling {
                    ack_from: self
                        .members
                        .keys()
                        .copied()
                        .filter(|m| *m != federate)
                        .collect(),
                }
            }
            ExecRequest::DisableRegulation { federate, .. } => {
                self.regulators.remove(&federate);
                R::Ok
            }
            ExecRequest::Ownership {
                federate,
                instance,
                request,
                ..
            } => {
                if let Err(e) = self.member(federate) {
                    return fed_err(e);
                }
                match self.ownership_request(federate, instance, request, out) {
                    Ok(reply) => reply,
                    Err(e) => R::OwnershipError(e),
                }
            }
            ExecRequest::Save {
                federate, request, ..
            } => {
                if let Err(e) = self.member(federate) {
                    return fed_err(e);
                }
                self.save_request(federate, request, out)
            }
            ExecRequest::Create { .. }
            | ExecRequest::Destroy { .. }
            | ExecRequest::Lookup { .. } => {
                unreachable!("handled by the Executive")
            }
        }
    }
}

/// All federation executions hosted in one place, by name.
/// Serializable as a whole (serde): an executive server with failover writes it into
/// its log as a snapshot, so the log can be cut short (see `glidepath-transport`'s
/// `nats::server::failover`).
#[derive(Default, serde::Serialize, serde::Deserialize)]
pub struct Executive {
    federations: BTreeMap<FederationId, FederationExecution>,
    by_name: HashMap<String, FederationId>,
    next_id: u64,
}

impl Executive {
    /// An executive hosting no federation.
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes every federation created from now on get an id above `last`: ids up
    /// to `last` are taken outside this executive (by the JetStream streams an
    /// earlier executive left on the same NATS server, which are named by id).
    pub fn reserve_ids_through(&mut self, last: u64) {
        self.next_id = self.next_id.max(last);
    }

    /// Every member of every hosted federation.
    pub fn all_members(&self) -> Vec<(FederationId, FederateHandle)> {
        self.federations
            .iter()
            .flat_map(|(id, f)| f.members().map(move |m| (*id, m.handle)))
            .collect()
    }

    /// A hosted federation execution.
    pub fn federation(&self, id: FederationId) -> Option<&FederationExecution> {
        self.federations.get(&id)
    }

    /// A hosted federation execution, for its host (handing saves over and back).
    pub fn federation_mut(&mut self, id: FederationId) -> Option<&mut FederationExecution> {
        self.federations.get_mut(&id)
    }

    /// Handles one request. Returns the reply and the notifications to broadcast on
    /// the [`crate::Topic::Federation`] topic of the returned federation.
    pub fn handle(
        &mut self,
        req: ExecRequest,
    ) -> (ExecReply, Option<FederationId>, Vec<Notification>) {
        let mut out = Vec::new();
        match req {
            ExecRequest::Create { name, fom } => {
                if self.by_name.contains_key(&name) {
                    return (
                        ExecReply::FederationError(
                            FederationError::FederationExecutionAlreadyExists(name),
                        ),
                        None,
                        out,
                    );
                }
                self.next_id += 1;
                let id = FederationId(self.next_id);
                self.by_name.insert(name.clone(), id);
                self.federations
                    .insert(id, FederationExecution::new(id, name, fom));
                (ExecReply::Created { id }, Some(id), out)
            }
            ExecRequest::Destroy { name } => {
                let Some(id) = self.by_name.get(&name).copied() else {
                    return (
                        ExecReply::FederationError(
                            FederationError::FederationExecutionDoesNotExist(name),
                        ),
                        None,
                        out,
                    );
                };
                let count = self.federations[&id].members.len();
                if count > 0 {
                    return (
                        ExecReply::FederationError(FederationError::FederatesCurrentlyJoined {
                            name,
                            count,
                        }),
                        None,
                        out,
                    );
                }
                self.by_name.remove(&name);
                self.federations.remove(&id);
                (ExecReply::Ok, Some(id), out)
            }
            ExecRequest::Lookup { name } => match self.by_name.get(&name) {
                Some(id) => (
                    ExecReply::Found {
                        id: *id,
                        fom: self.federations[id].fom.clone(),
                    },
                    Some(*id),
                    out,
                ),
                None => (
                    ExecReply::FederationError(FederationError::FederationExecutionDoesNotExist(
                        name,
                    )),
                    None,
                    out,
                ),
            },
            other => {
                let id = federation_of(&other);
                let Some(fed) = self.federations.get_mut(&id) else {
                    return (
                        ExecReply::FederationError(
                            FederationError::FederationExecutionDoesNotExist(format!("#{}", id.0)),
                        ),
                        None,
                        out,
                    );
                };
                let reply = fed.handle(other, &mut out);
                (reply, Some(id), out)
            }
        }
    }
}

fn federation_of(req: &ExecRequest) -> FederationId {
    match req {
        ExecRequest::Join { federation, .. }
        | ExecRequest::Resign { federation, .. }
        | ExecRequest::Lost { federation, .. }
        | ExecRequest::ListFederates { federation }
        | ExecRequest::ReserveName { federation, .. }
        | ExecRequest::ReleaseName { federation, .. }
        | ExecRequest::RegisterInstance { federation, .. }
        | ExecRequest::DeleteInstance { federation, .. }
        | ExecRequest::ListInstances { federation, .. }
        | ExecRequest::RegisterSyncPoint { federation, .. }
        | ExecRequest::AchieveSyncPoint { federation, .. }
        | ExecRequest::EnableRegulation { federation, .. }
        | ExecRequest::DisableRegulation { federation, .. }
        | ExecRequest::Ownership { federation, .. }
        | ExecRequest::Save { federation, .. } => *federation,
        ExecRequest::Create { .. } | ExecRequest::Destroy { .. } | ExecRequest::Lookup { .. } => {
            FederationId(0)
        }
    }
}

//! Federation save and restore at one federate: the services it calls, the notices
//! it receives, and its RTI state as a [`FederateSnapshot`] and back.
//!
//! A timed save is initiated here, not at the executive: the executive tells every
//! member at once, and a time-managed federate delivers *initiate federate save* only
//! once it is granted the save's time (at once if it already is), so every federate
//! saves at that time.
//!
//! A restore resets the federate while its peers may still have messages from before
//! the restore in flight to it. Each federate, as it takes back its state, publishes
//! a [`Body::Restored`] marker (then a fresh time status) on its ordered path; a
//! receiver that has restored drops whatever a peer sent before that peer's marker of
//! the same epoch, since everything it sent earlier reaches the receiver before it.

use std::cmp::Reverse;
use std::collections::HashMap;

use bytes::Bytes;

use super::*;
use crate::error::SaveRestoreError;
use crate::save::{
    decode_snapshot, encode_snapshot, FederateSnapshot, SaveNotice, SaveRequest, SavedInstance,
    SavedMessage, SavedTime,
};
use crate::types::TimeValue;
use crate::OrderType;

/// One federate's part in saves and restores.
#[derive(Default)]
pub(crate) struct LocalSave {
    /// Told to save; *initiate federate save* not delivered yet (waits for the time).
    pending: Option<(String, Option<LogicalTime>)>,
    /// *Initiate federate save* delivered, until *federation saved / not saved*.
    saving: Option<String>,
    /// This federate answered (save complete or not complete).
    answered: bool,
    /// The restore in progress (from *restore begun* to restored or not).
    restoring: Option<String>,
    /// Why this federate's state could not be taken back, if it could not.
    restore_error: Option<String>,
    /// The last restore epoch this federate took part in (0: none).
    epoch: u64,
    /// Per peer, the epoch of its last restore marker.
    markers: HashMap<FederateHandle, u64>,
}

impl LocalSave {
    /// Between *initiate federate save* and *federation saved / not saved*.
    pub(crate) fn in_save(&self) -> bool {
        self.saving.is_some()
    }
    /// Between *federation restore begun* and *restored / not restored*.
    pub(crate) fn in_restore(&self) -> bool {
        self.restoring.is_some()
    }
}

impl LocalRti {
    fn save_request(
        &mut self,
        link: &mut impl Link,
        request: SaveRequest,
    ) -> Result<ExecReply, RtiError> {
        self.live()?;
        let reply = link.request(
            &mut self.outbox,
            ExecRequest::Save {
                federation: self.federation,
                federate: self.me,
                request,
            },
        )?;
        expect_ok(reply)
    }

    /// Request federation save, now or (with `time`) when every federate has been
    /// granted that time.
    pub fn request_federation_save(
        &mut self,
        link: &mut impl Link,
        label: &str,
        time: Option<TimeValue>,
    ) -> Result<(), RtiError> {
        let time = match time {
            Some(t) => {
                let t = self.requested_time(t)?;
                let managed = self.time.constrained == Constrained::On
                    || self.time.regulation == Regulation::On;
                if managed && t < self.time.logical_time {
                    return Err(SaveRestoreError::LogicalTimeAlreadyPassed {
                        time: t.to_string(),
                        now: self.time.logical_time.to_string(),
                    }
                    .into());
                }
                Some(SavedTime::from(t))
            }
            None => None,
        };
        self.save_request(
            link,
            SaveRequest::RequestSave {
                label: label.to_string(),
                time,
            },
        )?;
        Ok(())
    }

    /// Federate save begun.
    pub fn federate_save_begun(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        if self.save.saving.is_none() || self.save.answered {
            return Err(SaveRestoreError::SaveNotInitiated.into());
        }
        self.save_request(link, SaveRequest::SaveBegun)?;
        Ok(())
    }

    /// Federate save complete: saves this federate's RTI state with `user_state`,
    /// the bytes it chose to keep under the save's label. A federate in the middle of
    /// a time advance or of enabling a time mode cannot be saved: it reports its save
    /// not complete and gets [`SaveRestoreError::SaveNotPossible`].
    pub fn federate_save_complete(
        &mut self,
        link: &mut impl Link,
        user_state: Bytes,
    ) -> Result<(), RtiError> {
        if self.save.saving.is_none() || self.save.answered {
            return Err(SaveRestoreError::SaveNotInitiated.into());
        }
        match self.checked_snapshot(user_state) {
            Ok(snapshot) => {
                let state = Bytes::from(encode_snapshot(&snapshot));
                self.save_request(link, SaveRequest::SaveComplete { state })?;
                self.save.answered = true;
                Ok(())
            }
            Err(e) => {
                self.save_request(link, SaveRequest::SaveNotComplete)?;
                self.save.answered = true;
                Err(e.into())
            }
        }
    }

    /// Federate save not complete.
    pub fn federate_save_not_complete(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        if self.save.saving.is_none() || self.save.answered {
            return Err(SaveRestoreError::SaveNotInitiated.into());
        }
        self.save_request(link, SaveRequest::SaveNotComplete)?;
        self.save.answered = true;
        Ok(())
    }

    /// Abort federation save.
    pub fn abort_federation_save(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        self.save_request(link, SaveRequest::AbortSave)?;
        Ok(())
    }

    /// Query federation save status: answered by a *federation save status response*
    /// callback.
    pub fn query_federation_save_status(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        match self.save_request(link, SaveRequest::QuerySaveStatus)? {
            ExecReply::SaveStatus(statuses) => {
                self.callbacks
                    .push_back(Callback::FederationSaveStatusResponse { statuses });
                Ok(())
            }
            other => Err(unexpected(&other)),
        }
    }

    /// Request federation restore: answered by *request federation restore
    /// succeeded* or *failed* (with the reason).
    pub fn request_federation_restore(
        &mut self,
        link: &mut impl Link,
        label: &str,
    ) -> Result<(), RtiError> {
        let request = SaveRequest::RequestRestore {
            label: label.to_string(),
        };
        match self.save_request(link, request)? {
            ExecReply::RestoreRequest { label, result } => {
                self.callbacks.push_back(match result {
                    Ok(()) => Callback::RequestFederationRestoreSucceeded { label },
                    Err(reason) => Callback::RequestFederationRestoreFailed { label, reason },
                });
                Ok(())
            }
            other => Err(unexpected(&other)),
        }
    }

    /// Federate restore complete. If this federate's saved state could not be taken
    /// back, reports its restore not complete instead and returns why.
    pub fn federate_restore_complete(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        if self.save.restoring.is_none() {
            return Err(SaveRestoreError::RestoreNotRequested.into());
        }
        if let Some(reason) = self.save.restore_error.take() {
            self.save_request(link, SaveRequest::RestoreNotComplete)?;
            return Err(SaveRestoreError::SaveNotPossible(reason).into());
        }
        self.save_request(link, SaveRequest::RestoreComplete)?;
        Ok(())
    }

    /// Federate restore not complete.
    pub fn federate_restore_not_complete(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        if self.save.restoring.is_none() {
            return Err(SaveRestoreError::RestoreNotRequested.into());
        }
        self.save_request(link, SaveRequest::RestoreNotComplete)?;
        Ok(())
    }

    /// Abort federation restore.
    pub fn abort_federation_restore(&mut self, link: &mut impl Link) -> Result<(), RtiError> {
        self.save_request(link, SaveRequest::AbortRestore)?;
        Ok(())
    }

    /// Query federation restore status: answered by a *federation restore status
    /// response* callback.
    pub fn query_federation_restore_status(
        &mut self,
        link: &mut impl Link,
    ) -> Result<(), RtiError> {
        match self.save_request(link, SaveRequest::QueryRestoreStatus)? {
            ExecReply::RestoreStatus(statuses) => {
                self.callbacks
                    .push_back(Callback::FederationRestoreStatusResponse { statuses });
                Ok(())
            }
            other => Err(unexpected(&other)),
        }
    }

    /// True from *initiate federate save* to *federation saved / not saved*, and
    /// from *federation restore begun* to *restored / not restored*: time advance
    /// requests are refused meanwhile.
    pub fn save_or_restore_in_progress(&self) -> bool {
        self.save.saving.is_some() || self.save.restoring.is_some()
    }

    fn is_time_managed(&self) -> bool {
        self.time.constrained == Constrained::On || self.time.regulation == Regulation::On
    }

    pub(crate) fn refuse_during_save(&self) -> Result<(), SaveRestoreError> {
        if self.save.restoring.is_some() {
            Err(SaveRestoreError::RestoreInProgress)
        } else if self.save.saving.is_some() {
            Err(SaveRestoreError::SaveInProgress)
        } else {
            Ok(())
        }
    }

    /// Delivers *initiate federate save* once the pending save may start here: at
    /// once for an untimed save or a federate outside time management, after the
    /// grant of the save's time otherwise.
    pub(crate) fn maybe_initiate_save(&mut self) {
        let Some((_, time)) = &self.save.pending else {
            return;
        };
        let ready = match time {
            None => true,
            Some(t) => {
                !self.is_time_managed()
                    || (self.time.advance == Advance::Idle && self.time.logical_time >= *t)
            }
        };
        if ready {
            let (label, time) = self.save.pending.take().expect("present");
            self.save.saving = Some(label.clone());
            self.save.answered = false;
            self.callbacks
                .push_back(Callback::InitiateFederateSave { label, time });
        }
    }

    /// A save or restore notice from the executive.
    pub(crate) fn handle_save_notice(&mut self, notice: SaveNotice) {
        match notice {
            SaveNotice::InitiateSave { label, time } => {
                self.save.pending = Some((label, time.and_then(SavedTime::time)));
                self.maybe_initiate_save();
            }
            SaveNotice::Saved { label } => {
                self.save.pending = None;
                self.save.saving = None;
                self.callbacks
                    .push_back(Callback::FederationSaved { label });
            }
            SaveNotice::NotSaved { label, reason } => {
                self.save.pending = None;
                self.save.saving = None;
                self.callbacks
                    .push_back(Callback::FederationNotSaved { label, reason });
            }
            SaveNotice::RestoreBegun { label } => {
                self.save.restoring = Some(label.clone());
                self.save.restore_error = None;
                self.callbacks
                    .push_back(Callback::FederationRestoreBegun { label });
            }
            SaveNotice::InitiateRestore {
                label,
                epoch,
                federate,
                saved_as,
                mapping,
                state,
            } if federate == self.me => {
                let mapping: HashMap<FederateHandle, FederateHandle> =
                    mapping.into_iter().collect();
                let user_state = match decode_snapshot::<FederateSnapshot>(&state) {
                    Ok(snapshot) => {
                        let user_state = snapshot.user_state.clone();
                        if let Err(e) = self.apply_snapshot(snapshot, &mapping) {
                            self.save.restore_error = Some(e);
                        }
                        user_state
                    }
                    Err(e) => {
                        self.save.restore_error = Some(e.to_string());
                        Bytes::new()
                    }
                };
                self.begin_epoch(epoch);
                self.callbacks.push_back(Callback::InitiateFederateRestore {
                    label,
                    name: self.name.clone(),
                    handle: self.me,
                    saved_as,
                    user_state,
                });
            }
            SaveNotice::InitiateRestore { .. } => {}
            SaveNotice::Restored { label } => {
                self.save.restoring = None;
                self.callbacks
                    .push_back(Callback::FederationRestored { label });
                self.evaluate();
            }
            SaveNotice::NotRestored { label, reason } => {
                self.save.restoring = None;
                self.callbacks
                    .push_back(Callback::FederationNotRestored { label, reason });
            }
        }
    }

    /// Handles a peer's restore marker; true if the envelope was one.
    pub(crate) fn take_restore_marker(&mut self, sender: FederateHandle, body: &Body) -> bool {
        if let Body::Restored { epoch } = body {
            let e = self.save.markers.entry(sender).or_insert(0);
            *e = (*e).max(*epoch);
            return true;
        }
        false
    }

    /// True for data from a peer sent before its restore marker of our epoch.
    pub(crate) fn sent_before_restore(&self, sender: FederateHandle) -> bool {
        self.save.epoch > 0
            && self.save.markers.get(&sender).copied().unwrap_or(0) < self.save.epoch
    }

    /// Starts restore `epoch` here: peers that have not marked it yet are awaited
    /// afresh (their statuses are from before), then our marker and status go out.
    fn begin_epoch(&mut self, epoch: u64) {
        self.save.epoch = epoch;
        let stale: Vec<FederateHandle> = self
            .members
            .keys()
            .copied()
            .filter(|m| *m != self.me && self.sent_before_restore(*m))
            .collect();
        for peer in stale {
            self.time.statuses.remove(&peer);
            self.time.awaited_regulators.insert(peer);
        }
        self.send(Topic::Time, Body::Restored { epoch });
        self.publish_status(StatusReason::Answer);
        self.restart_scope();
    }

    /// This federate's RTI state as it would be saved now (no user state).
    pub fn rti_snapshot(&self) -> FederateSnapshot {
        let info = self.members.get(&self.me);
        let sorted = |m: &FastMap<ObjectClassHandle, BTreeSet<AttributeHandle>>| {
            let mut v: Vec<(ObjectClassHandle, Vec<AttributeHandle>)> = m
                .iter()
                .filter(|(_, a)| !a.is_empty())
                .map(|(c, a)| (*c, a.iter().copied().collect()))
                .collect();
            v.sort_unstable_by_key(|(c, _)| *c);
            v
        };
        let mut published_interactions: Vec<_> =
            self.published_interactions.iter().copied().collect();
        published_interactions.sort_unstable();
        let mut subscribed_interactions: Vec<_> =
            self.subscribed_interactions.iter().copied().collect();
        subscribed_interactions.sort_unstable();
        // The management object model's instances are the RTI's, rebuilt from the
        // membership: no save keeps them.
        let mut instances: Vec<SavedInstance> = self
            .known
            .iter()
            .filter(|(i, _)| !crate::mom::is_mom_instance(**i))
            .map(|(i, k)| SavedInstance {
                instance: *i,
                class: k.class,
                known_class: k.known_class,
                name: k.name.clone(),
                owned: k.owned.iter().copied().collect(),
            })
            .collect();
        instances.sort_unstable_by_key(|i| i.instance);
        let mut queued: Vec<&Queued> = self.time.queue.iter().map(|Reverse(q)| q).collect();
        queued.sort_unstable_by_key(|q| q.key());
        let pending_tso = queued.into_iter().filter_map(saved_message).collect();
        FederateSnapshot {
            federate: self.me,
            name: self.name.clone(),
            federate_type: info.map(|i| i.federate_type.clone()).unwrap_or_default(),
            logical_time: self.time.logical_time.into(),
            lookahead: self.time.lookahead.into(),
            last_grant_available: self.time.last_grant_available,
            regulating: self.time.regulation == Regulation::On,
            constrained: self.time.constrained == Constrained::On,
            delivered_up_to: self.time.delivered_up_to.into(),
            published_attributes: sorted(&self.published_attributes),
            subscribed_attributes: sorted(&self.subscribed_attributes),
            published_interactions,
            subscribed_interactions,
            instances,
            pending_tso,
            user_state: Bytes::new(),
        }
    }

    fn checked_snapshot(&self, user_state: Bytes) -> Result<FederateSnapshot, SaveRestoreError> {
        if self.time.advance != Advance::Idle {
            return Err(SaveRestoreError::SaveNotPossible(
                "a time advance is in progress".into(),
            ));
        }
        if self.time.regulation == Regulation::Pending
            || self.time.constrained == Constrained::Pending
        {
            return Err(SaveRestoreError::SaveNotPossible(
                "a time mode is being enabled".into(),
            ));
        }
        let mut snapshot = self.rti_snapshot();
        snapshot.user_state = user_state;
        Ok(snapshot)
    }

    /// Takes back a saved RTI state, saved federate handles mapped to current ones.
    /// Regions (data distribution management) are not part of a save: what they
    /// were now is kept.
    fn apply_snapshot(
        &mut self,
        s: FederateSnapshot,
        mapping: &HashMap<FederateHandle, FederateHandle>,
    ) -> Result<(), String> {
        let map = |f: FederateHandle| mapping.get(&f).copied().unwrap_or(f);
        let time = |t: SavedTime, what: &str| t.time().ok_or_else(|| format!("bad saved {what}"));
        self.time.logical_time = time(s.logical_time, "logical time")?;
        self.time.lookahead = s.lookahead.interval().ok_or("bad saved lookahead")?;
        self.time.delivered_up_to = time(s.delivered_up_to, "delivered time")?;
        self.time.last_grant_available = s.last_grant_available;
        self.time.regulation = if s.regulating {
            Regulation::On
        } else {
            Regulation::Off
        };
        self.time.constrained = if s.constrained {
            Constrained::On
        } else {
            Constrained::Off
        };
        self.time.advance = Advance::Idle;
        self.time.pending_regulation = None;
        // The promise starts again from the saved time: every peer forgets our
        // statuses from before the restore.
        self.time.promise_floor = LogicalTime::NEG_INFINITY;
        self.time.last_status = None;
        self.time.queue.clear();
        for m in s.pending_tso {
            let q = queued_message(m, &map)?;
            self.time.queue.push(Reverse(q));
        }
        self.published_attributes = s
            .published_attributes
            .into_iter()
            .map(|(c, a)| (c, a.into_iter().collect()))
            .collect();
        self.ddm.subscription_cache = None;
        self.subscribed_attributes = s
            .subscribed_attributes
            .into_iter()
            .map(|(c, a)| (c, a.into_iter().collect()))
            .collect();
        self.published_interactions = s.published_interactions.into_iter().collect();
        self.subscribed_interactions = s.subscribed_interactions.into_iter().collect();
        self.sync_topics();
        // The MOM instances known now stay: they follow today's membership.
        let mut known: FastMap<ObjectInstanceHandle, KnownInstance> =
            std::mem::take(&mut self.known)
                .into_iter()
                .filter(|(i, _)| crate::mom::is_mom_instance(*i))
                .collect();
        known.extend(s.instances.into_iter().map(|i| {
            let mut k = KnownInstance::new(i.class, i.known_class, i.name);
            k.owned = i.owned.into_iter().collect();
            (i.instance, k)
        }));
        self.known = known;
        // Callbacks from before the restore belong to the state just left.
        self.callbacks.retain(is_save_callback);
        Ok(())
    }
}

fn is_save_callback(c: &Callback) -> bool {
    matches!(
        c,
        Callback::FederationRestoreBegun { .. }
            | Callback::RequestFederationRestoreSucceeded { .. }
            | Callback::FederationSaveStatusResponse { .. }
            | Callback::FederationRestoreStatusResponse { .. }
    )
}

fn saved_message(q: &Queued) -> Option<SavedMessage> {
    let time = SavedTime::from(q.time);
    Some(match &q.body {
        Body::Update {
            instance,
            class,
            values,
            tag,
            transport,
            ..
        } => SavedMessage::Update {
            sender: q.sender,
            seq: q.seq,
            time,
            instance: *instance,
            class: *class,
            values: values.to_vec(),
            tag: tag.clone(),
            transport: *transport,
        },
        Body::Interaction {
            class,
            values,
            tag,
            transport,
            ..
        } => SavedMessage::Interaction {
            sender: q.sender,
            seq: q.seq,
            time,
            class: *class,
            values: values.to_vec(),
            tag: tag.clone(),
            transport: *transport,
        },
        Body::Delete {
            instance,
            class,
            tag,
            ..
        } => SavedMessage::Delete {
            sender: q.sender,
            seq: q.seq,
            time,
            instance: *instance,
            class: *class,
            tag: tag.clone(),
        },
        _ => return None,
    })
}

fn queued_message(
    m: SavedMessage,
    map: &impl Fn(FederateHandle) -> FederateHandle,
) -> Result<Queued, String> {
    let bad = || "bad saved message time".to_string();
    let (sender, seq, time, body) = match m {
        SavedMessage::Update {
            sender,
            seq,
            time,
            instance,
            class,
            values,
            tag,
            transport,
        } => {
            let t = time.time().ok_or_else(bad)?;
            (
                sender,
                seq,
                t,
                Body::Update {
                    instance,
                    class,
                    values: values.into(),
                    tag,
                    order: OrderType::TimeStamp,
                    transport,
                    time: Some(t),
                    regions: None,
                },
            )
        }
        SavedMessage::Interaction {
            sender,
            seq,
            time,
            class,
            values,
            tag,
            transport,
        } => {
            let t = time.time().ok_or_else(bad)?;
            (
                sender,
                seq,
                t,
                Body::Interaction {
                    class,
                    values: values.into(),
                    tag,
                    order: OrderType::TimeStamp,
                    transport,
                    time: Some(t),
                    regions: None,
                },
            )
        }
        SavedMessage::Delete {
            sender,
            seq,
            time,
            instance,
            class,
            tag,
        } => {
            let t = time.time().ok_or_else(bad)?;
            (
                sender,
                seq,
                t,
                Body::Delete {
                    instance,
                    class,
                    tag,
                    order: OrderType::TimeStamp,
                    time: Some(t),
                },
            )
        }
    };
    Ok(Queued {
        time,
        sender: map(sender),
        seq,
        publish_time_ns: 0,
        body,
    })
}

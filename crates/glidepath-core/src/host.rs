//! `ExecutiveHost`: the [`Executive`] as every transport hosts it. It numbers each
//! federation's notifications and wraps them in envelopes from
//! [`FederateHandle::EXECUTIVE`]; the transport only publishes what comes out.
//!
//! Sans-I/O like the rest of the core: a request goes in, the reply and the envelopes
//! to publish on the federation's [`Topic::Federation`] come out, and the caller
//! passes the publication stamp (no clock is read here). The in-process bus, the NATS
//! executive server and the simulator share it, so they number notifications alike.
//!
//! It also keeps finished federation saves in its [`SaveStore`] and hands a save back
//! to the executive before a restore request: the store is the one piece of I/O it
//! calls, chosen by whoever builds the host (memory by default).

use std::collections::HashMap;

use crate::exec::{ExecReply, ExecRequest, Executive};
#[cfg(doc)]
use crate::message::Topic;
use crate::message::{Body, Envelope};
use crate::save::{
    decode_snapshot, encode_snapshot, MemorySaveStore, SaveRequest, SaveStore, SavedFederation,
};
use crate::types::{FederateHandle, FederationId};

/// An [`Executive`], the `seq` of each federation's last notification, and where
/// saves are kept. The first two are what a replica needs to go on from the request
/// after them ([`ExecutiveHost::state_snapshot`]); the save store is the host's own.
pub struct ExecutiveHost {
    executive: Executive,
    /// Per federation, so a receiver sees the executive's notifications of each
    /// federation as one contiguous sequence from 1.
    notification_seq: HashMap<FederationId, u64>,
    store: Box<dyn SaveStore>,
}

impl Default for ExecutiveHost {
    fn default() -> Self {
        ExecutiveHost::with_store(Box::new(MemorySaveStore::default()))
    }
}

/// What one request to an [`ExecutiveHost`] produced.
#[derive(Debug)]
pub struct Hosted {
    /// The answer to the requester.
    pub reply: ExecReply,
    /// The federation the request concerned, if any.
    pub federation: Option<FederationId>,
    /// The notifications to publish on `federation`'s [`Topic::Federation`], in
    /// order, before the reply is returned.
    pub notifications: Vec<Envelope>,
    /// True when the request destroyed `federation`: the transport may forget its
    /// routes (its notification numbering is already forgotten).
    pub destroyed: bool,
}

impl Hosted {
    /// The federation and `seq` of the last notification, if the request caused any.
    pub fn last_notified(&self) -> Option<(FederationId, u64)> {
        let federation = self.federation?;
        self.notifications.last().map(|e| (federation, e.seq))
    }
}

/// The replicated part of an [`ExecutiveHost`], as [`ExecutiveHost::state_snapshot`]
/// writes it.
#[derive(serde::Serialize)]
struct HostStateRef<'a> {
    executive: &'a Executive,
    notification_seq: &'a HashMap<FederationId, u64>,
}

#[derive(serde::Deserialize)]
struct HostState {
    executive: Executive,
    notification_seq: HashMap<FederationId, u64>,
}

impl ExecutiveHost {
    /// A host with an empty executive, keeping saves in memory.
    pub fn new() -> Self {
        Self::default()
    }

    /// The state a replica needs to go on from the next request: the executive and
    /// the notification numbering (not the save store, which is the host's own), as
    /// CBOR. An executive server with failover writes it into its log as a snapshot.
    pub fn state_snapshot(&self) -> Result<Vec<u8>, String> {
        let mut out = Vec::new();
        ciborium::into_writer(
            &HostStateRef {
                executive: &self.executive,
                notification_seq: &self.notification_seq,
            },
            &mut out,
        )
        .map_err(|e| e.to_string())?;
        Ok(out)
    }

    /// Replaces the executive and the notification numbering with a
    /// [`state_snapshot`](ExecutiveHost::state_snapshot); the save store stays.
    pub fn restore_state(&mut self, snapshot: &[u8]) -> Result<(), String> {
        let state: HostState = ciborium::from_reader(snapshot).map_err(|e| e.to_string())?;
        self.executive = state.executive;
        self.notification_seq = state.notification_seq;
        Ok(())
    }

    /// A host with an empty executive, keeping saves in `store`.
    pub fn with_store(store: Box<dyn SaveStore>) -> Self {
        ExecutiveHost {
            executive: Executive::new(),
            notification_seq: HashMap::new(),
            store,
        }
    }

    /// The executive, for inspection.
    pub fn executive(&self) -> &Executive {
        &self.executive
    }

    /// The executive, for setup before requests arrive (for example reserving
    /// federation ids that persisted streams still use).
    pub fn executive_mut(&mut self) -> &mut Executive {
        &mut self.executive
    }

    /// Handles one request. Each notification becomes an envelope from
    /// [`FederateHandle::EXECUTIVE`] with the federation's next `seq` and
    /// `publish_time_ns` as its stamp (0 lets the transport stamp it when it publishes).
    pub fn handle(&mut self, request: ExecRequest, publish_time_ns: u64) -> Hosted {
        let destroy = matches!(request, ExecRequest::Destroy { .. });
        if let ExecRequest::Save {
            federation,
            request: SaveRequest::RequestRestore { label },
            ..
        } = &request
        {
            self.stage_restore(*federation, label);
        }
        let (reply, federation, mut notifications) = self.executive.handle(request);
        if let Some(id) = federation {
            self.store_finished_saves(id, &mut notifications);
        }
        let destroyed = destroy && federation.is_some() && matches!(reply, ExecReply::Ok);
        let mut envelopes = Vec::with_capacity(notifications.len());
        if let Some(federation) = federation {
            if destroyed {
                self.notification_seq.remove(&federation);
            } else {
                let seq = self.notification_seq.entry(federation).or_insert(0);
                for notification in notifications {
                    *seq += 1;
                    envelopes.push(Envelope {
                        sender: FederateHandle::EXECUTIVE,
                        seq: *seq,
                        publish_time_ns,
                        body: Body::Exec(notification),
                    });
                }
            }
        }
        Hosted {
            reply,
            federation,
            notifications: envelopes,
            destroyed,
        }
    }
}

impl ExecutiveHost {
    /// Reads the save a restore request names and hands it to the executive.
    fn stage_restore(&mut self, federation: FederationId, label: &str) {
        let Some(name) = self
            .executive
            .federation(federation)
            .map(|f| f.name.clone())
        else {
            return;
        };
        let found = match self.store.get(&name, label) {
            Ok(Some(bytes)) => decode_snapshot::<SavedFederation>(&bytes)
                .map(Some)
                .map_err(|e| format!("save `{label}` of `{name}`: {e}")),
            Ok(None) => Ok(None),
            Err(e) => Err(e.to_string()),
        };
        if let Some(f) = self.executive.federation_mut(federation) {
            f.stage_restore(label, found);
        }
    }

    /// Stores the saves every member has answered, then lets the executive announce
    /// the outcome.
    fn store_finished_saves(
        &mut self,
        federation: FederationId,
        notifications: &mut Vec<crate::exec::Notification>,
    ) {
        let Some(f) = self.executive.federation_mut(federation) else {
            return;
        };
        for saved in f.take_finished_saves() {
            let bytes = encode_snapshot(&saved);
            let result = self
                .store
                .put(&saved.federation, &saved.label, &bytes)
                .map_err(|e| e.to_string());
            if let Some(f) = self.executive.federation_mut(federation) {
                f.save_stored(result, notifications);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fom::Fom;
    use std::sync::Arc;

    fn create(host: &mut ExecutiveHost, name: &str) -> FederationId {
        let fom = Arc::new(Fom::merge(&[]).expect("the MIM alone merges"));
        match host
            .handle(
                ExecRequest::Create {
                    name: name.into(),
                    fom,
                },
                0,
            )
            .reply
        {
            ExecReply::Created { id } => id,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn notifications_are_numbered_per_federation_from_one() {
        let mut host = ExecutiveHost::new();
        let a = create(&mut host, "a");
        let b = create(&mut host, "b");
        for (federation, name) in [(a, "x"), (a, "y"), (b, "z")] {
            let hosted = host.handle(
                ExecRequest::Join {
                    federation,
                    federate_name: Some(name.into()),
                    federate_type: "t".into(),
                },
                7,
            );
            assert_eq!(hosted.federation, Some(federation));
            assert!(hosted
                .notifications
                .iter()
                .all(|e| e.sender == FederateHandle::EXECUTIVE && e.publish_time_ns == 7));
        }
        let seqs = |f| host.notification_seq.get(&f).copied().unwrap_or(0);
        assert!(seqs(a) > seqs(b) && seqs(b) > 0, "{a:?} {b:?}");
    }
}

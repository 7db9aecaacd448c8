//! Federation management: membership, resigning, synchronization points.

use bytes::Bytes;

use super::*;
use crate::callback::Callback;
use crate::error::{FederationError, RtiError};
use crate::exec::{ExecReply, ExecRequest, FederateInfo};
use crate::message::Body;
use crate::message::Topic;
use crate::time::state::*;
use crate::types::{FederateHandle, ResignAction};
use crate::OrderType;

impl LocalRti {
    // ----- federation management ---------------------------------------------------

    /// Lists the federation's members as the executive knows them.
    pub fn list_federates(&mut self, link: &mut impl Link) -> Result<Vec<FederateInfo>, RtiError> {
        self.live()?;
        match expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::ListFederates {
                federation: self.federation,
            },
        )?)? {
            ExecReply::Federates(list) => Ok(list),
            other => Err(unexpected(&other)),
        }
    }

    /// Resigns. Objects are deleted or divested as `action` says; the final time status
    /// tells every peer that nothing more will come from this federate.
    pub fn resign(&mut self, link: &mut impl Link, action: ResignAction) -> Result<(), RtiError> {
        self.live()?;
        let reply = expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::Resign {
                federation: self.federation,
                federate: self.me,
                action,
            },
        )?)?;
        let ExecReply::Resigned { delete } = reply else {
            return Err(unexpected(&reply));
        };
        for info in delete {
            self.known.remove(&info.instance);
            self.send(
                Topic::ObjectClass(info.class),
                Body::Delete {
                    instance: info.instance,
                    class: info.class,
                    tag: Bytes::new(),
                    order: OrderType::Receive,
                    time: None,
                },
            );
        }
        for k in self.known.values_mut() {
            k.owned.clear();
            k.acquiring.clear();
            k.divesting.clear();
        }
        self.publish_status(StatusReason::Resign);
        self.resigned = true;
        for topic in std::mem::take(&mut self.data_topics) {
            self.outbox.push(Output::Unsubscribe {
                federation: self.federation,
                topic,
            });
        }
        self.outbox.push(Output::Unsubscribe {
            federation: self.federation,
            topic: Topic::Federate(self.me),
        });
        self.outbox.push(Output::Unsubscribe {
            federation: self.federation,
            topic: Topic::Time,
        });
        self.outbox.push(Output::Unsubscribe {
            federation: self.federation,
            topic: Topic::Federation,
        });
        Ok(())
    }

    /// Registers a synchronization point for `set` (everyone joined when empty or `None`).
    pub fn register_federation_synchronization_point(
        &mut self,
        link: &mut impl Link,
        label: &str,
        tag: Bytes,
        set: Option<Vec<FederateHandle>>,
    ) -> Result<(), RtiError> {
        self.live()?;
        let reply = link.request(
            &mut self.outbox,
            ExecRequest::RegisterSyncPoint {
                federation: self.federation,
                federate: self.me,
                label: label.to_string(),
                tag,
                set,
            },
        )?;
        match expect_ok(reply)? {
            ExecReply::SyncPointRegistered {
                label,
                result: Ok(()),
            } => self
                .callbacks
                .push_back(Callback::SynchronizationPointRegistrationSucceeded { label }),
            ExecReply::SyncPointRegistered {
                label,
                result: Err(reason),
            } => self
                .callbacks
                .push_back(Callback::SynchronizationPointRegistrationFailed { label, reason }),
            other => return Err(unexpected(&other)),
        }
        Ok(())
    }

    /// Says this federate has reached an announced synchronization point.
    pub fn synchronization_point_achieved(
        &mut self,
        link: &mut impl Link,
        label: &str,
        success: bool,
    ) -> Result<(), RtiError> {
        self.live()?;
        if !self.announced.contains(label) {
            return Err(
                FederationError::SynchronizationPointLabelNotAnnounced(label.to_string()).into(),
            );
        }
        expect_ok(link.request(
            &mut self.outbox,
            ExecRequest::AchieveSyncPoint {
                federation: self.federation,
                federate: self.me,
                label: label.to_string(),
                success,
            },
        )?)?;
        Ok(())
    }
}

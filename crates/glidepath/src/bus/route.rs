//! One connection's local subscriptions, by group, and the routing of what arrives
//! for a group to the subscriptions whose pattern matches (membership changes to
//! those made by `join`).

use glidepath_bus::frame::DataFrame;
use glidepath_bus::{Pattern, Subject};
use parking_lot::RwLock;
use std::collections::HashMap;

use super::{EventSender, MembershipChange};

/// What travels from a transport to a subscription, decoded when taken.
#[derive(Clone, Debug)]
pub(crate) enum RawEvent {
    Message {
        group: Subject,
        frame: DataFrame,
        group_seq: Option<u64>,
    },
    Membership(MembershipChange),
}

pub(crate) struct LocalSub {
    pub(crate) id: u64,
    pub(crate) pattern: Pattern,
    pub(crate) membership: bool,
    pub(crate) tx: EventSender,
}

pub(crate) struct Router {
    groups: RwLock<HashMap<Subject, Vec<LocalSub>>>,
}

impl Router {
    pub(crate) fn new() -> Router {
        Router {
            groups: RwLock::new(HashMap::new()),
        }
    }

    /// Adds a subscription; true when it is the first in its group.
    pub(crate) fn add(&self, group: &Subject, sub: LocalSub) -> bool {
        let mut groups = self.groups.write();
        let subs = groups.entry(group.clone()).or_default();
        subs.push(sub);
        subs.len() == 1
    }

    /// Removes a subscription; true when it was the last in its group.
    pub(crate) fn remove(&self, group: &Subject, id: u64) -> bool {
        let mut groups = self.groups.write();
        let Some(subs) = groups.get_mut(group) else {
            return false;
        };
        let before = subs.len();
        subs.retain(|s| s.id != id);
        if subs.is_empty() && before > 0 {
            groups.remove(group);
            return true;
        }
        false
    }

    /// Removes every subscription; returns the groups left.
    pub(crate) fn clear(&self) -> Vec<Subject> {
        self.groups.write().drain().map(|(g, _)| g).collect()
    }

    /// Hands an event of `group` to the subscriptions that want it.
    pub(crate) fn route(&self, group: &Subject, event: RawEvent) {
        let groups = self.groups.read();
        let Some(subs) = groups.get(group) else {
            return;
        };
        for sub in subs {
            let wanted = match &event {
                RawEvent::Message { frame, .. } => sub.pattern.matches(&frame.subject),
                RawEvent::Membership(_) => sub.membership,
            };
            if wanted {
                // A subscription being dropped may have let its receiver go.
                let _ = sub.tx.send(event.clone());
            }
        }
    }
}

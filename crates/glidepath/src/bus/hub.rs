//! The in-process hub: every connection of a program on one bus, no server.
//!
//! Each group is a mutex around its members. A publisher takes the group's lock,
//! numbers the message in the group's order and hands it to every member's
//! subscriptions before letting go, and joins and leaves are handed out under the
//! same lock: so every member sees one total order of messages and membership
//! changes, and a message is handed to a member only while every other member of the
//! view is handed it too. That single ordering point gives all six levels their
//! guarantees at once (none is ever lost or duplicated in a process); SAFE's "every
//! member has it" holds when the lock is let go, before any member can act on it.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, Weak};

use glidepath_bus::frame::{DataFrame, MemberId, MembershipKind};
use glidepath_bus::Subject;
use parking_lot::Mutex;

use super::route::{RawEvent, Router};
use super::{Backend, BusError, MembershipChange};

struct Member {
    id: MemberId,
    router: Weak<Router>,
}

#[derive(Default)]
struct Group {
    /// The last number given in this group's order.
    seq: u64,
    members: Vec<Member>,
}

#[derive(Default)]
struct HubInner {
    groups: Mutex<HashMap<Subject, Arc<Mutex<Group>>>>,
}

/// An in-process bus. Cloning gives another handle to the same hub; connections
/// through one hub see each other. [`super::BusConfig::default`] uses one hub for the
/// whole process.
#[derive(Clone, Default)]
pub struct InprocHub {
    inner: Arc<HubInner>,
}

impl std::fmt::Debug for InprocHub {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InprocHub").finish_non_exhaustive()
    }
}

impl InprocHub {
    /// A new, empty hub.
    pub fn new() -> InprocHub {
        InprocHub::default()
    }

    /// The process-wide hub.
    pub(crate) fn global() -> InprocHub {
        static GLOBAL: OnceLock<InprocHub> = OnceLock::new();
        GLOBAL.get_or_init(InprocHub::new).clone()
    }

    fn group(&self, name: &Subject) -> Arc<Mutex<Group>> {
        self.inner
            .groups
            .lock()
            .entry(name.clone())
            .or_default()
            .clone()
    }

    pub(crate) fn attach(&self, member: MemberId, name: String, router: Arc<Router>) -> HubBackend {
        HubBackend {
            hub: self.clone(),
            member,
            name,
            router: Arc::downgrade(&router),
        }
    }
}

pub(crate) struct HubBackend {
    hub: InprocHub,
    member: MemberId,
    name: String,
    router: Weak<Router>,
}

impl HubBackend {
    fn announce(&self, group_name: &Subject, group: &Group, kind: MembershipKind) {
        let change = MembershipChange {
            group: group_name.clone(),
            kind,
            member: self.member,
            name: self.name.clone(),
        };
        for m in &group.members {
            if let Some(router) = m.router.upgrade() {
                router.route(group_name, RawEvent::Membership(change.clone()));
            }
        }
    }
}

impl Backend for HubBackend {
    fn name(&self) -> &'static str {
        "inproc"
    }

    fn publish(&self, group_name: &Subject, frame: DataFrame) -> Result<(), BusError> {
        let group = self.hub.group(group_name);
        let mut group = group.lock();
        group.seq += 1;
        let group_seq = frame.level.is_totally_ordered().then_some(group.seq);
        for m in &group.members {
            if let Some(router) = m.router.upgrade() {
                router.route(
                    group_name,
                    RawEvent::Message {
                        group: group_name.clone(),
                        frame: frame.clone(),
                        group_seq,
                    },
                );
            }
        }
        Ok(())
    }

    fn join(&self, group_name: &Subject) -> Result<(), BusError> {
        let group = self.hub.group(group_name);
        let mut group = group.lock();
        group.members.push(Member {
            id: self.member,
            router: self.router.clone(),
        });
        group.seq += 1;
        self.announce(group_name, &group, MembershipKind::Joined);
        Ok(())
    }

    fn leave(&self, group_name: &Subject) {
        let group = self.hub.group(group_name);
        let mut group = group.lock();
        let before = group.members.len();
        group.members.retain(|m| m.id != self.member);
        if group.members.len() != before {
            group.seq += 1;
            self.announce(group_name, &group, MembershipKind::Left);
        }
    }

    fn close(&self) {}
}

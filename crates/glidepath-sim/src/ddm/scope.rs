//! The DDM simulator's check of attribute scope advisories: each federate whose
//! switch is on keeps, in the checker, the set of (instance, attribute) its scope
//! callbacks say is in scope. A callback must change that set (no "in" for what is
//! in, no "out" for what is out) and name an instance the federate discovered; once
//! nothing is in flight, the set must be exactly what overlaps then: `position` of
//! each discovered instance whose owner's update region overlaps one of the
//! federate's subscription regions, and `label` (the default region) of each
//! discovered instance when the federate subscribes it.

use std::collections::BTreeSet;

use glidepath_core::{AttributeHandle, ObjectInstanceHandle};

/// What one federate's scope callbacks have said.
#[derive(Default)]
pub(super) struct ScopeSeen {
    /// Its switch is on.
    pub(super) on: bool,
    pub(super) in_scope: BTreeSet<(ObjectInstanceHandle, AttributeHandle)>,
}

impl ScopeSeen {
    /// One scope callback: `came` true for in scope. An error names what is wrong.
    pub(super) fn callback(
        &mut self,
        came: bool,
        instance: ObjectInstanceHandle,
        attributes: &[AttributeHandle],
        discovered: &BTreeSet<ObjectInstanceHandle>,
    ) -> Result<(), String> {
        if !self.on {
            return Err(format!(
                "a scope callback for {instance} with the switch off"
            ));
        }
        if !discovered.contains(&instance) {
            return Err(format!(
                "a scope callback for {instance}, which it has not discovered"
            ));
        }
        if attributes.is_empty() {
            return Err(format!(
                "a scope callback for {instance} with no attributes"
            ));
        }
        for a in attributes {
            let changed = if came {
                self.in_scope.insert((instance, *a))
            } else {
                self.in_scope.remove(&(instance, *a))
            };
            if !changed {
                return Err(format!(
                    "{instance} {a} {} scope, and was already",
                    if came { "came into" } else { "went out of" }
                ));
            }
        }
        Ok(())
    }

    /// The switch turned on or off: the federate starts again from nothing in scope
    /// (on: owners' answers bring what is in scope; off: nothing more is told).
    pub(super) fn switch(&mut self, on: bool) {
        self.on = on;
        self.in_scope.clear();
    }
}

/// Compares what the callbacks said with what overlaps, once nothing is in flight.
pub(super) fn compare(
    seen: &ScopeSeen,
    expected: &BTreeSet<(ObjectInstanceHandle, AttributeHandle)>,
) -> Result<(), String> {
    if !seen.on || seen.in_scope == *expected {
        return Ok(());
    }
    let missing: Vec<_> = expected.difference(&seen.in_scope).collect();
    let extra: Vec<_> = seen.in_scope.difference(expected).collect();
    Err(format!(
        "scope differs from the overlap once quiet: missing {missing:?}, extra {extra:?}"
    ))
}

//! Federation save and restore on the [`Federate`] facade.
//!
//! Any federate may ask for a save (now, or at a logical time every time-managed
//! federate must be granted first) or for a restore of a kept save. Each federate
//! then answers its *initiate federate save* with [`Federate::federate_save_begun`]
//! and [`Federate::federate_save_complete`] (passing the bytes of its own state, kept
//! with its RTI state under the save's label), and its *initiate federate restore*
//! (which hands those bytes back) with [`Federate::federate_restore_complete`]. Where
//! saves are kept is the RTI's choice: a directory for `inproc`
//! ([`crate::RtiConfig::save_dir`]).

use bytes::Bytes;
use glidepath_core::{FederateSnapshot, RtiError};

use super::{Federate, IntoLogicalTime};

impl Federate {
    /// Request federation save `label` now: every federate gets *initiate federate
    /// save*.
    pub fn request_federation_save(&self, label: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.request_federation_save(l, label, None))
    }

    /// Request federation save `label` at `time`: each time-managed federate gets
    /// *initiate federate save* once it is granted `time` (others at once). Fails
    /// with `LogicalTimeAlreadyPassed` when this federate is past `time`.
    pub fn request_federation_save_at(
        &self,
        label: &str,
        time: impl IntoLogicalTime,
    ) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.request_federation_save(l, label, Some(time.into_time_value())))
    }

    /// Federate save begun (after *initiate federate save*).
    pub fn federate_save_begun(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.federate_save_begun(l))
    }

    /// Federate save complete: the RTI keeps this federate's RTI state and
    /// `user_state` (bytes of the federate's choosing) under the save's label.
    pub fn federate_save_complete(&self, user_state: impl Into<Bytes>) -> Result<(), RtiError> {
        let user_state = user_state.into();
        self.shared()
            .call(|r, l| r.federate_save_complete(l, user_state))
    }

    /// Federate save not complete: the federation save fails.
    pub fn federate_save_not_complete(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.federate_save_not_complete(l))
    }

    /// Abort federation save: every federate gets *federation not saved*.
    pub fn abort_federation_save(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.abort_federation_save(l))
    }

    /// Query federation save status: answered by *federation save status response*.
    pub fn query_federation_save_status(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.query_federation_save_status(l))
    }

    /// Request federation restore of the save `label`: answered by *request
    /// federation restore succeeded* (then every federate gets *federation restore
    /// begun* and *initiate federate restore*) or *failed* with the reason.
    pub fn request_federation_restore(&self, label: &str) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.request_federation_restore(l, label))
    }

    /// Federate restore complete (after *initiate federate restore*).
    pub fn federate_restore_complete(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.federate_restore_complete(l))
    }

    /// Federate restore not complete: the federation restore fails.
    pub fn federate_restore_not_complete(&self) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.federate_restore_not_complete(l))
    }

    /// Abort federation restore.
    pub fn abort_federation_restore(&self) -> Result<(), RtiError> {
        self.shared().call(|r, l| r.abort_federation_restore(l))
    }

    /// Query federation restore status: answered by *federation restore status
    /// response*.
    pub fn query_federation_restore_status(&self) -> Result<(), RtiError> {
        self.shared()
            .call(|r, l| r.query_federation_restore_status(l))
    }

    /// This federate's RTI state as a save would keep it now (without its own
    /// bytes): for checking that a restore brought it back.
    pub fn rti_snapshot(&self) -> Result<FederateSnapshot, RtiError> {
        self.shared().call(|r, _| Ok(r.rti_snapshot()))
    }
}

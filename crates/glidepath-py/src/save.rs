//! Federation save and restore on `glidepath.Federate` (IEEE 1516.1-2010 chapter 4),
//! as the Rust facade has them, and the names their callbacks' enumerations take in
//! Python.
//!
//! Any federate requests a save (now, or at a logical time); each federate answers
//! `initiate_federate_save` with `federate_save_begun` and `federate_save_complete`,
//! passing the bytes of its own state, which the RTI keeps with the federate's RTI
//! state under the save's label. A restore hands those bytes back in
//! `initiate_federate_restore`; the federate answers `federate_restore_complete`.
//! Where saves are kept is the RTI's choice: the `save_dir` setting for `inproc`.
//!
//! Reasons and statuses reach Python as the Rust enumerators' names (their `Debug`
//! names, without data): [`save_failure_name`], [`restore_failure_name`],
//! [`save_status_name`], [`restore_status_name`].

use glidepath::{RestoreFailureReason, RestoreStatus, SaveFailureReason, SaveStatus};
use pyo3::prelude::*;

use crate::convert::{with_time, PyTime};
use crate::errors::abort_error;
use crate::federate::PyFederate;

/// Why a federation save failed, for `federation_not_saved`.
pub(crate) fn save_failure_name(reason: &SaveFailureReason) -> &'static str {
    match reason {
        SaveFailureReason::FederateReportedFailure => "FederateReportedFailure",
        SaveFailureReason::FederateResigned => "FederateResigned",
        SaveFailureReason::SaveAborted => "SaveAborted",
        SaveFailureReason::StorageFailed(_) => "StorageFailed",
    }
}

/// Why a federation restore failed, for `federation_not_restored`.
pub(crate) fn restore_failure_name(reason: &RestoreFailureReason) -> &'static str {
    match reason {
        RestoreFailureReason::FederateReportedFailure => "FederateReportedFailure",
        RestoreFailureReason::FederateResigned => "FederateResigned",
        RestoreFailureReason::RestoreAborted => "RestoreAborted",
    }
}

/// One federate's part in a save, for `federation_save_status_response`.
pub(crate) fn save_status_name(status: SaveStatus) -> &'static str {
    match status {
        SaveStatus::NoSaveInProgress => "NoSaveInProgress",
        SaveStatus::FederateInstructedToSave => "FederateInstructedToSave",
        SaveStatus::FederateSaving => "FederateSaving",
        SaveStatus::FederateWaitingForFederationToSave => "FederateWaitingForFederationToSave",
    }
}

/// One federate's part in a restore, for `federation_restore_status_response`.
pub(crate) fn restore_status_name(status: RestoreStatus) -> &'static str {
    match status {
        RestoreStatus::NoRestoreInProgress => "NoRestoreInProgress",
        RestoreStatus::FederateInstructedToRestore => "FederateInstructedToRestore",
        RestoreStatus::FederateWaitingForFederationToRestore => {
            "FederateWaitingForFederationToRestore"
        }
    }
}

#[pymethods]
impl PyFederate {
    // ----- save ---------------------------------------------------------------------------

    /// Requests federation save `label`: every federate gets `initiate_federate_save`
    /// now, or (with `time`) each time-managed one once it is granted `time`.
    #[pyo3(signature = (label, time = None))]
    fn request_federation_save(
        &self,
        py: Python<'_>,
        label: &str,
        time: Option<PyTime>,
    ) -> PyResult<()> {
        match time {
            None => self.call(py, |f| f.request_federation_save(label)),
            Some(time) => with_time!(time, |t| self
                .call(py, |f| f.request_federation_save_at(label, t))),
        }
    }
    /// Federate save begun (after `initiate_federate_save`).
    fn federate_save_begun(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.federate_save_begun())
    }
    /// Federate save complete: the RTI keeps this federate's RTI state and
    /// `user_state` (bytes of the federate's choosing) under the save's label.
    #[pyo3(signature = (user_state = None))]
    fn federate_save_complete(&self, py: Python<'_>, user_state: Option<Vec<u8>>) -> PyResult<()> {
        let user_state = user_state.unwrap_or_default();
        self.call(py, |f| f.federate_save_complete(user_state))
    }
    /// Federate save not complete: the federation save fails
    /// (`federation_not_saved` with `"FederateReportedFailure"`).
    fn federate_save_not_complete(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.federate_save_not_complete())
    }
    /// Aborts the federation save in progress: every federate gets
    /// `federation_not_saved` with `"SaveAborted"`; `SaveNotInProgress` when none is.
    fn abort_federation_save(&self, py: Python<'_>) -> PyResult<()> {
        let federate = self.fed();
        py.allow_threads(|| federate.abort_federation_save())
            .map_err(abort_error)
    }
    /// Asks each federate's part in the save: answered by
    /// `federation_save_status_response`.
    fn query_federation_save_status(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.query_federation_save_status())
    }

    // ----- restore ------------------------------------------------------------------------

    /// Requests federation restore of the save `label`: answered by
    /// `request_federation_restore_succeeded` (then every federate gets
    /// `federation_restore_begun` and `initiate_federate_restore`) or `_failed`.
    fn request_federation_restore(&self, py: Python<'_>, label: &str) -> PyResult<()> {
        self.call(py, |f| f.request_federation_restore(label))
    }
    /// Federate restore complete (after `initiate_federate_restore`).
    fn federate_restore_complete(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.federate_restore_complete())
    }
    /// Federate restore not complete: the federation restore fails
    /// (`federation_not_restored` with `"FederateReportedFailure"`).
    fn federate_restore_not_complete(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.federate_restore_not_complete())
    }
    /// Aborts the federation restore in progress: every federate gets
    /// `federation_not_restored` with `"RestoreAborted"`; `RestoreNotInProgress`
    /// when none is.
    fn abort_federation_restore(&self, py: Python<'_>) -> PyResult<()> {
        let federate = self.fed();
        py.allow_threads(|| federate.abort_federation_restore())
            .map_err(abort_error)
    }
    /// Asks each federate's part in the restore: answered by
    /// `federation_restore_status_response`.
    fn query_federation_restore_status(&self, py: Python<'_>) -> PyResult<()> {
        self.call(py, |f| f.query_federation_restore_status())
    }
}

//! Federation save and restore: the requests, notices and statuses of the service
//! group, and the versioned format a save is kept in.
//!
//! A save is one [`SavedFederation`]: the executive's agreed state (instances, their
//! names and owners, the regulators) and, per federate, the bytes of its
//! [`FederateSnapshot`] (its RTI state plus the bytes the federate itself chose to
//! save). Both are CBOR (`ciborium`) behind an 8-byte header, `GPSAVE` and a
//! big-endian `u16` format version, so a reader refuses a file of another kind or a
//! newer version by name instead of misreading it (`docs/save-format.md`).
//!
//! Where a save is kept is the host's business ([`SaveStore`]): a directory for
//! `inproc`, a JetStream object store bucket in the NATS executive server (memory
//! when its NATS server has no JetStream), memory in the simulator. The executive only hands a finished save over
//! and is handed one back for a restore, so it stays free of I/O.

use std::collections::HashMap;

use bytes::Bytes;

use crate::exec::InstanceInfo;
use crate::types::{FederateHandle, LogicalTime, LogicalTimeInterval, ObjectInstanceHandle};
use crate::{AttributeHandle, InteractionClassHandle, ObjectClassHandle, ParameterHandle};
use crate::{TimeValue, TransportationType};

/// The first six bytes of every encoded save and federate snapshot.
pub const SAVE_MAGIC: &[u8; 6] = b"GPSAVE";
/// The snapshot format version this build writes and the only one it reads.
pub const SAVE_FORMAT_VERSION: u16 = 1;

/// A save/restore service on the federation ([`crate::ExecRequest::Save`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SaveRequest {
    /// Request federation save: now (`time` none) or when every federate has been
    /// granted `time`.
    RequestSave {
        label: String,
        time: Option<SavedTime>,
    },
    /// Federate save begun.
    SaveBegun,
    /// Federate save complete, with the encoded [`FederateSnapshot`].
    SaveComplete { state: Bytes },
    /// Federate save not complete.
    SaveNotComplete,
    /// Abort federation save.
    AbortSave,
    /// Query federation save status.
    QuerySaveStatus,
    /// Request federation restore.
    RequestRestore { label: String },
    /// Federate restore complete.
    RestoreComplete,
    /// Federate restore not complete.
    RestoreNotComplete,
    /// Abort federation restore.
    AbortRestore,
    /// Query federation restore status.
    QueryRestoreStatus,
}

/// A logical time as a save keeps it: its representation is explicit, so an integer
/// time comes back an integer from any format.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SavedTime {
    Float(f64),
    Integer(i64),
}

impl From<LogicalTime> for SavedTime {
    fn from(t: LogicalTime) -> SavedTime {
        match t.as_i64() {
            Some(v) if t.is_integer() => SavedTime::Integer(v),
            _ => SavedTime::Float(t.as_f64()),
        }
    }
}

impl From<LogicalTimeInterval> for SavedTime {
    fn from(t: LogicalTimeInterval) -> SavedTime {
        match t.as_i64() {
            Some(v) if t.is_integer() => SavedTime::Integer(v),
            _ => SavedTime::Float(t.as_f64()),
        }
    }
}

impl SavedTime {
    /// The logical time; `None` for a NaN float (which no save writes).
    pub fn time(self) -> Option<LogicalTime> {
        match self {
            SavedTime::Float(v) => LogicalTime::new(v),
            SavedTime::Integer(v) => Some(LogicalTime::from_i64(v)),
        }
    }

    /// The interval; `None` for a negative or non-finite value.
    pub fn interval(self) -> Option<LogicalTimeInterval> {
        match self {
            SavedTime::Float(v) => LogicalTimeInterval::new(v),
            SavedTime::Integer(v) => LogicalTimeInterval::from_i64(v),
        }
    }

    /// The value as a user gives a time.
    pub fn value(self) -> TimeValue {
        match self {
            SavedTime::Float(v) => TimeValue::Float(v),
            SavedTime::Integer(v) => TimeValue::Integer(v),
        }
    }
}

/// Why a federation save failed (*federation not saved*).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
pub enum SaveFailureReason {
    #[error("a federate reported its save not complete")]
    FederateReportedFailure,
    #[error("a federate resigned during the save")]
    FederateResigned,
    #[error("the save was aborted")]
    SaveAborted,
    #[error("the save could not be stored: {0}")]
    StorageFailed(String),
}

/// Why a federation restore failed (*federation not restored*).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, thiserror::Error)]
pub enum RestoreFailureReason {
    #[error("a federate reported its restore not complete")]
    FederateReportedFailure,
    #[error("a federate resigned during the restore")]
    FederateResigned,
    #[error("the restore was aborted")]
    RestoreAborted,
}

/// One federate's part in a federation save (*federation save status response*).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SaveStatus {
    NoSaveInProgress,
    /// Told to save (a timed save: once granted the save's time).
    FederateInstructedToSave,
    /// Federate save begun.
    FederateSaving,
    /// Federate save complete; waits for the others.
    FederateWaitingForFederationToSave,
}

/// One federate's part in a federation restore (*federation restore status response*).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum RestoreStatus {
    NoRestoreInProgress,
    /// Told to restore its saved state.
    FederateInstructedToRestore,
    /// Federate restore complete; waits for the others.
    FederateWaitingForFederationToRestore,
}

/// A save/restore callback the executive broadcasts ([`crate::Notification::Save`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SaveNotice {
    /// Every member: *initiate federate save* (for a timed save, once granted `time`).
    InitiateSave {
        label: String,
        time: Option<SavedTime>,
    },
    /// *Federation saved*.
    Saved { label: String },
    /// *Federation not saved*.
    NotSaved {
        label: String,
        reason: SaveFailureReason,
    },
    /// *Federation restore begun*.
    RestoreBegun { label: String },
    /// *Initiate federate restore* for `federate`, which takes the place of `saved_as`
    /// in the save; `mapping` maps every saved federate handle to the current one.
    /// `epoch` numbers the federation's restores: a member drops what a peer sent
    /// before that peer's marker of this epoch (see `LocalRti`'s restore).
    InitiateRestore {
        label: String,
        epoch: u64,
        federate: FederateHandle,
        saved_as: FederateHandle,
        mapping: Vec<(FederateHandle, FederateHandle)>,
        state: Bytes,
    },
    /// *Federation restored*.
    Restored { label: String },
    /// *Federation not restored*.
    NotRestored {
        label: String,
        reason: RestoreFailureReason,
    },
}

/// An object instance as a federate knew it when it saved.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedInstance {
    pub instance: ObjectInstanceHandle,
    pub class: ObjectClassHandle,
    pub known_class: ObjectClassHandle,
    pub name: String,
    /// The attributes the federate owned.
    pub owned: Vec<AttributeHandle>,
}

/// A time-stamp-order message waiting in a federate's queue when it saved.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum SavedMessage {
    Update {
        sender: FederateHandle,
        seq: u64,
        time: SavedTime,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        values: Vec<(AttributeHandle, Bytes)>,
        tag: Bytes,
        transport: TransportationType,
    },
    Interaction {
        sender: FederateHandle,
        seq: u64,
        time: SavedTime,
        class: InteractionClassHandle,
        values: Vec<(ParameterHandle, Bytes)>,
        tag: Bytes,
        transport: TransportationType,
    },
    Delete {
        sender: FederateHandle,
        seq: u64,
        time: SavedTime,
        instance: ObjectInstanceHandle,
        class: ObjectClassHandle,
        tag: Bytes,
    },
}

/// One federate's RTI state at a save, and the bytes it saved itself.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FederateSnapshot {
    pub federate: FederateHandle,
    pub name: String,
    pub federate_type: String,
    pub logical_time: SavedTime,
    pub lookahead: SavedTime,
    pub last_grant_available: bool,
    pub regulating: bool,
    pub constrained: bool,
    /// The largest time stamp delivered in time-stamp order.
    pub delivered_up_to: SavedTime,
    pub published_attributes: Vec<(ObjectClassHandle, Vec<AttributeHandle>)>,
    pub subscribed_attributes: Vec<(ObjectClassHandle, Vec<AttributeHandle>)>,
    pub published_interactions: Vec<InteractionClassHandle>,
    pub subscribed_interactions: Vec<InteractionClassHandle>,
    /// Known instances, in handle order.
    pub instances: Vec<SavedInstance>,
    /// Pending time-stamp-order messages, in delivery order.
    pub pending_tso: Vec<SavedMessage>,
    /// What the federate passed to *federate save complete*.
    pub user_state: Bytes,
}

/// A saved federate as the executive keeps it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedFederate {
    pub handle: FederateHandle,
    pub name: String,
    pub federate_type: String,
    /// Its encoded [`FederateSnapshot`].
    pub state: Bytes,
}

/// The executive's agreed state at a save.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ExecSnapshot {
    pub instances: Vec<InstanceInfo>,
    /// Per instance, the owner of each owned attribute (pending transfers are not
    /// kept: a restore ends every acquisition and offer).
    pub owners: Vec<(ObjectInstanceHandle, Vec<(AttributeHandle, FederateHandle)>)>,
    pub regulators: Vec<FederateHandle>,
    pub next_instance: u64,
}

/// One complete federation save.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SavedFederation {
    pub federation: String,
    pub label: String,
    pub time: Option<SavedTime>,
    pub executive: ExecSnapshot,
    pub federates: Vec<SavedFederate>,
}

/// A save or snapshot that cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotError {
    #[error("not a glidepath save (the first bytes are not `GPSAVE`)")]
    NotASave,
    #[error("save format version {found} (this build reads version {SAVE_FORMAT_VERSION})")]
    UnsupportedVersion { found: u16 },
    #[error("the save's body is not valid: {0}")]
    Malformed(String),
}

/// Encodes a save or snapshot: the header, then CBOR.
pub fn encode_snapshot<T: serde::Serialize>(value: &T) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    out.extend_from_slice(SAVE_MAGIC);
    out.extend_from_slice(&SAVE_FORMAT_VERSION.to_be_bytes());
    // Writing into a Vec cannot fail, and every saved type serialises.
    ciborium::into_writer(value, &mut out).expect("a save serialises into memory");
    out
}

/// Decodes what [`encode_snapshot`] wrote, checking the header first.
pub fn decode_snapshot<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, SnapshotError> {
    if bytes.len() < 8 || &bytes[..6] != SAVE_MAGIC {
        return Err(SnapshotError::NotASave);
    }
    let found = u16::from_be_bytes([bytes[6], bytes[7]]);
    if found != SAVE_FORMAT_VERSION {
        return Err(SnapshotError::UnsupportedVersion { found });
    }
    ciborium::from_reader(&bytes[8..]).map_err(|e| SnapshotError::Malformed(e.to_string()))
}

/// A storage operation that failed, with the host's reason.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("save storage: {0}")]
pub struct SaveStoreError(pub String);

/// Where an [`crate::ExecutiveHost`] keeps finished saves, by federation name and label.
///
/// Contract: a `put` that returned `Ok` is returned by every later `get` of the same
/// name and label (a later `put` replaces it); `get` of anything never put is
/// `Ok(None)`.
pub trait SaveStore: Send {
    /// Keeps `bytes` (an encoded [`SavedFederation`]).
    fn put(&mut self, federation: &str, label: &str, bytes: &[u8]) -> Result<(), SaveStoreError>;
    /// What was kept under the name and label, if anything.
    fn get(&mut self, federation: &str, label: &str) -> Result<Option<Vec<u8>>, SaveStoreError>;
}

/// Saves kept in memory: the default of an [`crate::ExecutiveHost`] and the simulator's.
#[derive(Default)]
pub struct MemorySaveStore {
    saves: HashMap<(String, String), Vec<u8>>,
}

impl SaveStore for MemorySaveStore {
    fn put(&mut self, federation: &str, label: &str, bytes: &[u8]) -> Result<(), SaveStoreError> {
        self.saves
            .insert((federation.to_string(), label.to_string()), bytes.to_vec());
        Ok(())
    }
    fn get(&mut self, federation: &str, label: &str) -> Result<Option<Vec<u8>>, SaveStoreError> {
        Ok(self
            .saves
            .get(&(federation.to_string(), label.to_string()))
            .cloned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_save_round_trips_and_a_foreign_header_is_refused() {
        let save = SavedFederation {
            federation: "f".into(),
            label: "l".into(),
            time: Some(SavedTime::Integer(50)),
            executive: ExecSnapshot {
                regulators: vec![FederateHandle(2)],
                next_instance: 7,
                ..Default::default()
            },
            federates: vec![SavedFederate {
                handle: FederateHandle(2),
                name: "a".into(),
                federate_type: "t".into(),
                state: Bytes::from_static(b"\x00\x01"),
            }],
        };
        let bytes = encode_snapshot(&save);
        assert_eq!(decode_snapshot::<SavedFederation>(&bytes), Ok(save));
        assert_eq!(
            decode_snapshot::<SavedFederation>(b"GPSAVX\x00\x01"),
            Err(SnapshotError::NotASave)
        );
        let mut newer = bytes.clone();
        newer[7] = 9;
        assert_eq!(
            decode_snapshot::<SavedFederation>(&newer),
            Err(SnapshotError::UnsupportedVersion { found: 9 })
        );
        assert!(matches!(
            decode_snapshot::<SavedFederation>(&bytes[..bytes.len() / 2]),
            Err(SnapshotError::Malformed(_))
        ));
    }

    #[test]
    fn saved_times_keep_their_representation() {
        let i = LogicalTime::from_i64(50);
        assert_eq!(SavedTime::from(i), SavedTime::Integer(50));
        assert_eq!(SavedTime::from(i).time(), Some(i));
        let f = LogicalTime::new(50.5).unwrap();
        assert_eq!(SavedTime::from(f).time(), Some(f));
    }
}

//! A member leaving a federation execution: asked by itself, or lost (its host found
//! its endpoint gone), with what it leaves behind settled.

use super::{ExecReply, FederationExecution, Notification, RESIGN_MEMORY};
use crate::error::FederationError;
use crate::types::{FederateHandle, ResignAction};

impl FederationExecution {
    /// Resigns `federate` (asked by it, or `lost` when its host found it gone).
    pub(super) fn resign(
        &mut self,
        federate: FederateHandle,
        action: ResignAction,
        lost: bool,
        out: &mut Vec<Notification>,
    ) -> ExecReply {
        use ExecReply as R;
        let fed_err = |e: FederationError| R::FederationError(e);
        if let Err(e) = self.member(federate) {
            // Asked again: the first resign was applied, its reply lost.
            return match self.resigned.iter().find(|(f, _)| *f == federate) {
                Some((_, delete)) => R::Resigned {
                    delete: delete.clone(),
                },
                None => fed_err(e),
            };
        }
        let delete = match self.resign_ownership(federate, action, out) {
            Ok(delete) => delete,
            Err(e) => return fed_err(e),
        };
        self.members.remove(&federate);
        self.regulators.remove(&federate);
        self.reserved.retain(|_, f| *f != federate);
        for sp in self.sync_points.values_mut() {
            sp.members.remove(&federate);
            sp.achieved.remove(&federate);
        }
        out.push(if lost {
            Notification::FederateLost { federate }
        } else {
            Notification::FederateResigned { federate }
        });
        self.save_member_left(federate, out);
        self.complete_sync_points(out);
        if self.resigned.len() == RESIGN_MEMORY {
            self.resigned.pop_front();
        }
        self.resigned.push_back((federate, delete.clone()));
        R::Resigned { delete }
    }
}

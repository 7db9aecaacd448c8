//! What every block does, whatever its kind: join, meet the others, go through the
//! seven states at the manager's synchronization points, and use time management as
//! flow control; and which producers a subscribing block listens to.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Duration;

use glidepath::{Callback, Federate, JoinOptions, ResignAction, Rti};

use super::monitor::MonitorBlock;
use super::recorder::RecorderBlock;
use super::traffic::TrafficBlock;
use super::{block_error, check_abort, BlockOutcome, Context, RunError, SimulationState, Sndem};
use crate::layout::{Block, BlockKind};

/// The work of one block in each state; callbacks outside the states' own waits go
/// to `callback`.
pub(super) trait Component {
    fn state(
        &mut self,
        state: SimulationState,
        f: &Federate,
        abort: &AtomicBool,
    ) -> Result<(), String>;
    fn callback(&mut self, _cb: Callback) {}
    fn outcome(self: Box<Self>) -> BlockOutcome;
}

pub(super) fn run_block(
    rti: &Rti,
    federation: &str,
    block: &Block,
    ctx: &Context,
    joined: &Barrier,
) -> Result<BlockOutcome, RunError> {
    let fail = |e: &dyn std::fmt::Display| block_error(&block.name, e);
    let joining = rti.join(
        federation,
        JoinOptions::named(&block.name, block.kind.name()).with_wait(ctx.opts.wait),
    );
    // Everyone meets at the barrier, joined or not, so the manager never waits forever.
    joined.wait();
    let f = joining.map_err(|e| fail(&e))?;
    let sndem = Sndem::of(&f).map_err(|e| fail(&e))?;
    let mut component: Box<dyn Component> = match block.kind {
        BlockKind::Traffic | BlockKind::Player => Box::new(TrafficBlock::new(block, ctx, sndem)),
        BlockKind::Monitor => Box::new(MonitorBlock::new(block, ctx, sndem)),
        BlockKind::Recorder => Box::new(RecorderBlock::new(block, ctx, sndem)),
        BlockKind::External => {
            return Err(fail(
                &"an external block joins from its own process, not from the run",
            ))
        }
    };
    let abort = &ctx.progress.abort;
    for state in SimulationState::ALL {
        let r = lifecycle_state(&f, abort, state, &mut *component);
        if let Err(e) = r {
            // Read before telling the federation: the manager sets the flag as soon
            // as it sees this block fail, and a block that failed of itself must not
            // then be taken for one the manager stopped.
            let stopped = abort.load(Ordering::SeqCst);
            let _ = f.synchronization_point_failed(state.name());
            let _ = f.resign(ResignAction::DeleteObjects);
            if stopped {
                return Err(RunError::Stopped(block.name.clone()));
            }
            return Err(fail(&format!("{state}: {e}")));
        }
    }
    let _ = f.resign(ResignAction::DeleteObjects);
    Ok(component.outcome())
}

/// Waits for `state`'s announcement, does the work, achieves, waits for the
/// federation to synchronize.
fn lifecycle_state(
    f: &Federate,
    abort: &AtomicBool,
    state: SimulationState,
    c: &mut dyn Component,
) -> Result<(), String> {
    // The synchronization after a state's work waits for the slowest block's work.
    let next = |c: &mut dyn Component| -> Result<Callback, String> {
        wait_until(
            f,
            abort,
            "synchronization",
            &mut |cb| c.callback(cb),
            |cb| {
                matches!(
                    cb,
                    Callback::AnnounceSynchronizationPoint { .. }
                        | Callback::FederationSynchronized { .. }
                )
            },
        )
    };
    loop {
        match next(c)? {
            Callback::AnnounceSynchronizationPoint { label, .. } if label == state.name() => break,
            _ => {}
        }
    }
    c.state(state, f, abort)?;
    f.synchronization_point_achieved(state.name())
        .map_err(|e| e.to_string())?;
    loop {
        match next(c)? {
            Callback::FederationSynchronized { label, .. } if label == state.name() => {
                return Ok(())
            }
            _ => {}
        }
    }
}

/// Enables regulation (lookahead `lookahead`) and constrained, feeding other
/// callbacks to `c`.
pub(super) fn enable_time(
    f: &Federate,
    abort: &AtomicBool,
    lookahead: f64,
    mut c: impl FnMut(Callback),
) -> Result<(), String> {
    f.enable_time_regulation(lookahead)
        .map_err(|e| e.to_string())?;
    wait_until(f, abort, "regulation", &mut c, |cb| {
        matches!(cb, Callback::TimeRegulationEnabled { .. })
    })?;
    f.enable_time_constrained().map_err(|e| e.to_string())?;
    wait_until(f, abort, "constrained", &mut c, |cb| {
        matches!(cb, Callback::TimeConstrainedEnabled { .. })
    })
    .map(drop)
}

/// Waits for the callback `done` accepts and returns it, feeding the others to `c`. No deadline: a
/// grant comes when the slowest regulating block gets there, which in a recorder's
/// case is the end of the run; the manager stops the run (`abort`) when something
/// failed, and a failed publish is reported at once.
pub(super) fn wait_until(
    f: &Federate,
    abort: &AtomicBool,
    what: &str,
    c: &mut impl FnMut(Callback),
    done: impl Fn(&Callback) -> bool,
) -> Result<Callback, String> {
    loop {
        check_abort(abort).map_err(|e| format!("waiting for {what}: {e}"))?;
        // A publish that failed (a full JetStream store, a lost server) is reported
        // here, not never.
        f.check_transport().map_err(|e| e.to_string())?;
        if let Some(cb) = f.next_callback(Duration::from_millis(100)) {
            if done(&cb) {
                return Ok(cb);
            }
            c(cb);
        }
    }
}

/// Asks to advance to `t` and waits for the grant.
pub(super) fn advance(
    f: &Federate,
    abort: &AtomicBool,
    t: f64,
    c: &mut impl FnMut(Callback),
) -> Result<(), String> {
    f.time_advance_request(t).map_err(|e| e.to_string())?;
    wait_until(f, abort, "time advance grant", c, |cb| {
        matches!(cb, Callback::TimeAdvanceGrant { .. })
    })
    .map(drop)
}

/// Which producers a subscribing block takes messages from: those of the blocks
/// linked to it in the layout (Figure 3.1's arrows). Learned from the federation's
/// list of federates during initialization, when every block has joined.
#[derive(Default)]
pub(super) struct Linked {
    handles: HashSet<glidepath::FederateHandle>,
    /// Messages from producers no link names: not counted as received.
    unlinked: u64,
}

impl Linked {
    pub(super) fn learn(&mut self, f: &Federate, sources: &[String]) -> Result<(), String> {
        let federates = f.list_federates().map_err(|e| e.to_string())?;
        for name in sources {
            let info = federates
                .iter()
                .find(|i| &i.name == name)
                .ok_or_else(|| format!("linked block `{name}` has not joined"))?;
            self.handles.insert(info.handle);
        }
        Ok(())
    }

    pub(super) fn accepts(&mut self, producer: glidepath::FederateHandle) -> bool {
        let ok = self.handles.contains(&producer);
        if !ok {
            self.unlinked += 1;
        }
        ok
    }
}

//! Deployment: every block on a thread of this process, or (NATS only) in a process
//! of its own that a [`Launcher`] starts and that writes its outcome to a file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use glidepath::{Federate, Rti};

use super::block::run_block;
use super::frame::{frame, with_frame};
use super::manager::context_of;
use super::{
    block_error, run_end, BlockLaunch, BlockOutcome, Launcher, Progress, RunError, RunOptions,
};
use crate::layout::{BlockKind, Layout};

/// Blocks that are running, and how to collect what they did.
pub(super) enum Deployed {
    Threads(Vec<(String, thread::JoinHandle<Result<BlockOutcome, RunError>>)>),
    Processes(BlockProcesses),
}

/// Starts every block on a thread of its own and returns once all have joined.
pub(super) fn deploy_threads(
    rti: &Rti,
    federation: &str,
    layout: &Layout,
    end: u32,
    opts: &RunOptions,
    progress: &Arc<Progress>,
) -> Result<Deployed, RunError> {
    let internal = || {
        layout
            .blocks
            .iter()
            .filter(|b| b.kind != BlockKind::External)
    };
    let joined = Arc::new(Barrier::new(internal().count() + 1));
    let mut threads = Vec::new();
    for block in internal() {
        let (block, rti, federation, joined) = (
            block.clone(),
            rti.clone(),
            federation.to_string(),
            joined.clone(),
        );
        let ctx = context_of(layout, &block, end, opts, progress);
        let name = block.name.clone();
        let spawned = thread::Builder::new()
            .name(format!("atm-{}", block.name))
            .spawn(move || run_block(&rti, &federation, &block, &ctx, &joined))
            .map_err(|e| RunError::Rti(format!("cannot start a thread: {e}")))?;
        threads.push((name, spawned));
    }
    joined.wait();
    Ok(Deployed::Threads(threads))
}

/// How a run ended, which decides how long its blocks get to finish.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RunEnd {
    /// Every state was reached: blocks are only resigning.
    Completed,
    /// The run failed: blocks may wait for what never comes, and are stopped.
    Failed,
}

impl Deployed {
    /// Fails when a block has already ended (during the run, it only ends by failing).
    pub(super) fn check_running(&mut self) -> Result<(), RunError> {
        match self {
            Deployed::Threads(threads) => match threads.iter().find(|(_, t)| t.is_finished()) {
                Some((name, _)) => Err(block_error(name, "ended before the run did")),
                None => Ok(()),
            },
            Deployed::Processes(p) => p.check_running("before the run did"),
        }
    }

    /// Waits for every block to end and returns each one's outcome by name. After a
    /// failed run, block processes get a short grace period, then are killed.
    pub(super) fn finish(self, end: RunEnd) -> Vec<(String, Result<BlockOutcome, RunError>)> {
        match self {
            Deployed::Threads(threads) => threads
                .into_iter()
                .map(|(name, t)| {
                    let outcome = t
                        .join()
                        .unwrap_or_else(|_| Err(block_error(&name, "its thread panicked")));
                    (name, outcome)
                })
                .collect(),
            Deployed::Processes(p) => p.finish(end),
        }
    }
}

/// Block processes of one run, with their outcome files.
pub(super) struct BlockProcesses {
    dir: PathBuf,
    children: Vec<BlockChild>,
}

struct BlockChild {
    name: String,
    child: std::process::Child,
    outcome: PathBuf,
    /// Held open while the run lasts: a block process started with
    /// `--exit-with-parent` ends when it reads end-of-file here.
    stdin: Option<std::process::ChildStdin>,
    /// Told to stop because the run failed elsewhere.
    stopped: bool,
}

/// How long block processes may take to start, connect and join.
const JOIN_WAIT: Duration = Duration::from_secs(120);

/// Starts every block as a process of its own and returns once all have joined.
pub(super) fn deploy_processes(
    launcher: &Launcher,
    manager: &Federate,
    federation: &str,
    layout: &Layout,
    opts: &RunOptions,
) -> Result<Deployed, RunError> {
    static DIRS: AtomicU64 = AtomicU64::new(0);
    let dir = std::env::temp_dir().join(format!(
        "glidepath-run-{}-{}",
        std::process::id(),
        DIRS.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| RunError::Rti(format!("cannot create {}: {e}", dir.display())))?;
    let mut processes = BlockProcesses {
        dir,
        children: Vec::new(),
    };
    let internal = layout
        .blocks
        .iter()
        .filter(|b| b.kind != BlockKind::External);
    for (i, block) in internal.enumerate() {
        let outcome = processes.dir.join(format!("block-{i}.json"));
        let mut command = launcher(&BlockLaunch {
            block: &block.name,
            federation,
            outcome: &outcome,
            options: opts,
        });
        command.stdin(std::process::Stdio::piped());
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(e) => {
                processes.finish(RunEnd::Failed);
                return Err(block_error(
                    &block.name,
                    format!(
                        "cannot start its process ({:?}): {e}",
                        command.get_program()
                    ),
                ));
            }
        };
        let stdin = child.stdin.take();
        processes.children.push(BlockChild {
            name: block.name.clone(),
            child,
            outcome,
            stdin,
            stopped: false,
        });
    }
    if let Err(e) = processes.wait_joined(manager) {
        processes.finish(RunEnd::Failed);
        return Err(e);
    }
    Ok(Deployed::Processes(processes))
}

impl BlockProcesses {
    /// Fails when a block process has already ended, saying it did so `when`.
    fn check_running(&mut self, when: &str) -> Result<(), RunError> {
        for c in &mut self.children {
            if let Ok(Some(status)) = c.child.try_wait() {
                return Err(block_error(
                    &c.name,
                    format!("its process ended ({status}) {when}"),
                ));
            }
        }
        Ok(())
    }

    /// Waits until every block process has joined the federation, or one of them
    /// has exited without joining.
    fn wait_joined(&mut self, manager: &Federate) -> Result<(), RunError> {
        let deadline = Instant::now() + JOIN_WAIT;
        loop {
            let joined = manager
                .list_federates()
                .map_err(|e| RunError::Rti(e.to_string()))?;
            let missing: Vec<String> = self
                .children
                .iter()
                .filter(|c| !joined.iter().any(|f| f.name == c.name))
                .map(|c| c.name.clone())
                .collect();
            if missing.is_empty() {
                return Ok(());
            }
            self.check_running("before the run began")?;
            if Instant::now() > deadline {
                return Err(RunError::Rti(format!(
                    "blocks {missing:?} did not join within {JOIN_WAIT:?}"
                )));
            }
            thread::sleep(Duration::from_millis(50));
        }
    }

    fn finish(mut self, end: RunEnd) -> Vec<(String, Result<BlockOutcome, RunError>)> {
        // A finished run's blocks are only resigning. A failed run's may wait for
        // announcements that will never come: the block that failed gets a moment to
        // write why and end, then the others are told to stop by closing their
        // standard input (`--exit-with-parent`), and killed if they still do not.
        let grace = if end == RunEnd::Failed {
            let moment = Instant::now() + Duration::from_secs(2);
            while Instant::now() < moment
                && self
                    .children
                    .iter_mut()
                    .all(|c| matches!(c.child.try_wait(), Ok(None)))
            {
                thread::sleep(Duration::from_millis(20));
            }
            thread::sleep(Duration::from_millis(200));
            for c in &mut self.children {
                // Those still running are stopped by us, not failing of themselves.
                c.stopped = matches!(c.child.try_wait(), Ok(None));
                c.stdin = None;
            }
            Duration::from_secs(5)
        } else {
            Duration::from_secs(60)
        };
        let deadline = Instant::now() + grace;
        let mut outcomes = Vec::new();
        for c in &mut self.children {
            let status = loop {
                match c.child.try_wait() {
                    Ok(Some(status)) => break Some(status),
                    Ok(None) if Instant::now() < deadline => {
                        thread::sleep(Duration::from_millis(20))
                    }
                    _ => {
                        let _ = c.child.kill();
                        let _ = c.child.wait();
                        break None;
                    }
                }
            };
            let outcome = match read_outcome(&c.outcome) {
                Ok(written) => written.map_err(|reason| block_error(&c.name, reason)),
                Err(_) if c.stopped => Err(RunError::Stopped(c.name.clone())),
                Err(e) => Err(block_error(
                    &c.name,
                    match status {
                        Some(status) if !c.outcome.exists() => {
                            format!("its process ended ({status}) without writing its outcome")
                        }
                        Some(status) => format!("its process ended ({status}): {e}"),
                        None => {
                            format!("its process did not end within {grace:?} and was killed")
                        }
                    },
                )),
            };
            outcomes.push((c.name.clone(), outcome));
        }
        let _ = std::fs::remove_dir_all(&self.dir);
        outcomes
    }
}

/// Reads the outcome a block process wrote.
fn read_outcome(path: &Path) -> Result<Result<BlockOutcome, String>, String> {
    let text = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs one block of `layout` in this process, joined to `federation` (created by the
/// manager of a run with [`Deployment::Processes`](super::Deployment::Processes)), and writes its outcome to
/// `outcome` for the manager to read — also when the block fails.
pub fn run_block_process(
    layout: &Layout,
    opts: &RunOptions,
    block: &str,
    federation: &str,
    outcome: &Path,
) -> Result<(), RunError> {
    let b = layout
        .blocks
        .iter()
        .find(|b| b.name == block)
        .ok_or_else(|| {
            RunError::Layout(format!(
                "no block named `{block}` (the layout has {:?})",
                layout.blocks.iter().map(|b| &b.name).collect::<Vec<_>>()
            ))
        })?;
    // The manager passes its frame (--day-start, --hours): nothing is read here.
    let opts = &with_frame(opts, &frame(layout, opts)?);
    let ctx = context_of(
        layout,
        b,
        run_end(opts),
        opts,
        &Arc::new(Progress::default()),
    );
    let result = Rti::from_config(&opts.config)
        .map_err(|e| RunError::Rti(e.to_string()))
        .and_then(|rti| run_block(&rti, federation, b, &ctx, &Barrier::new(1)));
    // The manager names the block itself: keep only the reason.
    let record: Result<&BlockOutcome, String> = result.as_ref().map_err(|e| match e {
        RunError::Block { reason, .. } => reason.clone(),
        other => other.to_string(),
    });
    let written = serde_json::to_vec(&record)
        .map_err(|e| format!("cannot encode the outcome: {e}"))
        .and_then(|body| {
            std::fs::write(outcome, body)
                .map_err(|e| format!("cannot write {}: {e}", outcome.display()))
        });
    // The block's own failure is the one worth reporting.
    result?;
    written.map_err(RunError::Rti)
}

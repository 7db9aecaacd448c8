//! External blocks: a block whose federate is not started by the run but joins it from
//! a process of its own, in any language (a numpy model through the Python wheel, a
//! real component through its own RTI binding), under the block's name.
//!
//! The manager waits for every external block to join before the first state, hands
//! it the run's frame in the Deployment synchronization point's tag ([`FrameTag`]),
//! watches that it stays joined, and counts its messages lost against the
//! `BlockReport` interaction it sends in the shutdown state. What the block must do
//! in each state is in `layouts/README.md` ("External blocks"); the monitor needs no
//! change, since time management makes an external block's messages of second `t`
//! reach it before its grant to `t + 1` exactly as a traffic block's do.

use std::time::{Duration, Instant};

use glidepath::fom::Value;
use glidepath::{
    Bytes, Callback, Federate, FederateHandle, InteractionClassHandle, ParameterHandle,
    TransportKind,
};

use super::{block_error, BlockOutcome, RunError, RunOptions};
use crate::layout::{BlockKind, Layout};
use crate::report::SourceStats;

/// The run's frame as an external block reads it from the Deployment point's tag
/// (JSON, one object).
#[derive(Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FrameTag {
    /// The version of the external block protocol: 1.
    pub protocol: u32,
    /// Unix seconds of simulated second 0.
    pub day_start: i64,
    /// The run covers simulated seconds `[0, end_s)`: the block advances to `end_s`.
    pub end_s: u32,
    /// How SndemMessage's `message` is encoded: `json` (Table 4.1) or `binary`.
    pub codec: String,
    /// The run's name, for every message's `meta.run`.
    pub run: String,
    /// The lookahead the block enables time regulation with, in simulated seconds.
    pub lookahead_s: f64,
}

/// The protocol version [`FrameTag`] describes.
pub const PROTOCOL: u32 = 1;

/// How often the manager checks that external blocks are still joined.
const PRESENCE_EVERY: Duration = Duration::from_secs(1);

/// How long after the shutdown state the manager waits for a report still missing
/// (it travels on the block's own route, not the synchronization's).
const REPORT_WAIT: Duration = Duration::from_secs(10);

struct External {
    name: String,
    join_within: Duration,
    /// The federate that joined under the block's name.
    handle: Option<FederateHandle>,
    published: Option<u64>,
}

#[derive(Clone, Copy)]
struct ReportClass {
    class: InteractionClassHandle,
    block: ParameterHandle,
    published: ParameterHandle,
}

/// The external blocks of one run, as the manager sees them.
pub(super) struct Externals {
    blocks: Vec<External>,
    report: Option<ReportClass>,
    /// Reports that could not be taken, each saying why (counted, never fatal alone).
    refused: Vec<String>,
    checked: Instant,
}

impl Externals {
    pub(super) fn of(layout: &Layout) -> Externals {
        Externals {
            blocks: layout
                .blocks
                .iter()
                .filter(|b| b.kind == BlockKind::External)
                .map(|b| External {
                    name: b.name.clone(),
                    join_within: Duration::from_secs_f64(b.join_within_s.unwrap_or(120.0)),
                    handle: None,
                    published: None,
                })
                .collect(),
            report: None,
            refused: Vec::new(),
            checked: Instant::now(),
        }
    }

    pub(super) fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Refuses a link the protocol cannot serve yet: an external block's tracks into a
    /// sectored block (the block would have to send each track with its point as region
    /// and report what it sent inside).
    pub(super) fn check_links(&self, layout: &Layout) -> Result<(), RunError> {
        for l in &layout.links {
            let sectored = layout.block(&l.to).is_some_and(|b| b.sector.is_some());
            if sectored && self.blocks.iter().any(|b| b.name == l.from) {
                return Err(RunError::Layout(format!(
                    "external block `{}` is linked to `{}`, which has a sector: external blocks \
                     do not send regions yet (link it to a block without a sector)",
                    l.from, l.to
                )));
            }
        }
        Ok(())
    }

    /// Refuses a transport another process cannot reach.
    pub(super) fn check_transport(&self, opts: &RunOptions) -> Result<(), RunError> {
        match (self.blocks.first(), opts.config.transport) {
            (Some(b), TransportKind::Inproc) => Err(RunError::Layout(format!(
                "external block `{}` joins from a process of its own: the run needs the nats \
                 or shm transport (this one uses inproc, which no other process reaches)",
                b.name
            ))),
            _ => Ok(()),
        }
    }

    /// Subscribes the manager to the blocks' reports (before any block can send one).
    pub(super) fn subscribe(&mut self, manager: &Federate) -> Result<(), RunError> {
        if self.is_empty() {
            return Ok(());
        }
        let rti = |e: &dyn std::fmt::Display| RunError::Rti(format!("BlockReport: {e}"));
        let class = manager
            .interaction_class_handle("BlockReport")
            .map_err(|e| rti(&e))?;
        let report = ReportClass {
            class,
            block: manager
                .parameter_handle(class, "block")
                .map_err(|e| rti(&e))?,
            published: manager
                .parameter_handle(class, "published")
                .map_err(|e| rti(&e))?,
        };
        manager
            .subscribe_interaction_class(class)
            .map_err(|e| rti(&e))?;
        self.report = Some(report);
        Ok(())
    }

    /// Waits until every external block has joined, each for at most its
    /// `join_within`, telling on stderr once what it waits for.
    pub(super) fn wait_joined(
        &mut self,
        manager: &Federate,
        federation: &str,
        opts: &RunOptions,
    ) -> Result<(), RunError> {
        if self.is_empty() {
            return Ok(());
        }
        let names: Vec<&str> = self.blocks.iter().map(|b| b.name.as_str()).collect();
        let on = match opts.config.transport {
            TransportKind::Shm => format!("shared-memory system `{}`", opts.config.shm_name),
            _ => opts.config.nats_url.clone(),
        };
        eprintln!(
            "waiting for external block(s) {names:?} to join federation `{federation}` on {on}"
        );
        let started = Instant::now();
        loop {
            let joined = manager
                .list_federates()
                .map_err(|e| RunError::Rti(e.to_string()))?;
            let mut missing = None;
            for b in &mut self.blocks {
                b.handle = joined.iter().find(|f| f.name == b.name).map(|f| f.handle);
                if b.handle.is_none() && missing.is_none() {
                    missing = Some(b);
                }
            }
            let Some(b) = missing else { return Ok(()) };
            if started.elapsed() > b.join_within {
                return Err(block_error(
                    &b.name,
                    format!(
                        "external block did not join federation `{federation}` within {:?} \
                         (its join_within)",
                        b.join_within
                    ),
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Fails when an external block has left the federation (resigned, or lost with
    /// its process) before the run ended; checks at most every second.
    pub(super) fn check_present(&mut self, manager: &Federate) -> Result<(), RunError> {
        if self.checked.elapsed() < PRESENCE_EVERY {
            return Ok(());
        }
        self.require_present(manager)
    }

    /// [`Externals::check_present`], now: at the end of every state but the last, so
    /// a block that left is named even when the run outpaces the periodic check.
    pub(super) fn require_present(&mut self, manager: &Federate) -> Result<(), RunError> {
        if self.is_empty() {
            return Ok(());
        }
        self.checked = Instant::now();
        let joined = manager
            .list_federates()
            .map_err(|e| RunError::Rti(e.to_string()))?;
        for b in &self.blocks {
            if !joined.iter().any(|f| Some(f.handle) == b.handle) {
                return Err(block_error(
                    &b.name,
                    "the external block left the federation before the run ended",
                ));
            }
        }
        Ok(())
    }

    /// Takes a `BlockReport` from `cb`, if it is one.
    pub(super) fn callback(&mut self, manager: &Federate, cb: &Callback) {
        let (
            Some(report),
            Callback::ReceiveInteraction {
                class,
                values,
                info,
                ..
            },
        ) = (self.report, cb)
        else {
            return;
        };
        if *class != report.class {
            return;
        }
        let field = |p: ParameterHandle, name: &str, data_type: &str| {
            let bytes = values
                .iter()
                .find(|(q, _)| *q == p)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("no `{name}` parameter"))?;
            manager
                .fom()
                .decode_value(data_type, bytes)
                .map_err(|e| e.to_string())
        };
        let taken = (|| -> Result<(), String> {
            let Value::Text(name) = field(report.block, "block", "HLAunicodeString")? else {
                return Err("`block` is not text".into());
            };
            let Value::Int(n) = field(report.published, "published", "HLAinteger64BE")? else {
                return Err("`published` is not an integer".into());
            };
            let b = self
                .blocks
                .iter_mut()
                .find(|b| b.name == name)
                .ok_or_else(|| format!("no external block is named `{name}`"))?;
            if b.handle != Some(info.producer) {
                return Err(format!(
                    "sent for block `{name}` by another federate ({:?})",
                    info.producer
                ));
            }
            b.published = Some(u64::try_from(n).map_err(|_| format!("published {n} < 0"))?);
            Ok(())
        })();
        if let Err(why) = taken {
            self.refused.push(format!("BlockReport refused: {why}"));
        }
    }

    /// After the shutdown state: waits (at most [`REPORT_WAIT`]) for the reports still
    /// missing, feeding the manager's other callbacks nowhere (there are none left
    /// that matter before archival).
    pub(super) fn wait_reports(&mut self, manager: &Federate) {
        let deadline = Instant::now() + REPORT_WAIT;
        while self.blocks.iter().any(|b| b.published.is_none()) && Instant::now() < deadline {
            if let Some(cb) = manager.next_callback(Duration::from_millis(50)) {
                self.callback(manager, &cb);
            }
        }
    }

    /// Each external block's outcome: what it reported publishing over the whole run.
    pub(super) fn outcomes(&self, end: u32) -> Vec<(String, Result<BlockOutcome, RunError>)> {
        self.blocks
            .iter()
            .map(|b| {
                let outcome = match b.published {
                    Some(published) => Ok(BlockOutcome::Published(Box::new(SourceStats {
                        block: b.name.clone(),
                        kind: "external".into(),
                        window_s: (0, end),
                        rows: published,
                        published,
                        ..SourceStats::default()
                    }))),
                    None => Err(block_error(
                        &b.name,
                        format!(
                            "the external block sent no BlockReport by the end of the shutdown \
                             state (+{REPORT_WAIT:?}){}",
                            if self.refused.is_empty() {
                                String::new()
                            } else {
                                format!("; {}", self.refused.join("; "))
                            }
                        ),
                    )),
                };
                (b.name.clone(), outcome)
            })
            .collect()
    }

    /// The Deployment point's tag: the run's frame for external blocks (internal
    /// blocks read theirs from the options).
    pub(super) fn frame_tag(opts: &RunOptions, end: u32, lookahead_s: f64) -> Bytes {
        let tag = FrameTag {
            protocol: PROTOCOL,
            day_start: opts.day_start.unwrap_or(0),
            end_s: end,
            codec: opts.codec.name().to_string(),
            run: opts.run_name.clone(),
            lookahead_s,
        };
        Bytes::from(serde_json::to_vec(&tag).expect("a frame tag serialises"))
    }
}

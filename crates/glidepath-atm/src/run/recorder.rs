//! The recorder block: writes every SNDEM message its links bring, as it travelled, to
//! a recording file (`recording.rs`) that a traffic block can play back.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use glidepath::{Callback, Federate};

use super::block::{advance, wait_until, Component, Linked};
use super::recording::RECORDING_MAGIC;
use super::{BlockOutcome, Codec, Context, Progress, SimulationState, Sndem};
use crate::layout::Block;

/// Writes every SNDEM message of a run to a file: after the magic, one record per
/// message — simulated second (u32 LE), length (u32 LE), the message bytes as they
/// travelled (JSON or binary).
pub(super) struct RecorderBlock {
    name: String,
    end: u32,
    sources: Vec<String>,
    linked: Linked,
    path: Option<PathBuf>,
    sndem: Sndem,
    out: Option<BufWriter<File>>,
    error: Option<String>,
    written: u64,
    progress: Arc<Progress>,
    sector: Option<crate::layout::Sector>,
}

impl RecorderBlock {
    pub(super) fn new(block: &Block, ctx: &Context, sndem: Sndem) -> RecorderBlock {
        RecorderBlock {
            name: block.name.clone(),
            end: ctx.end,
            sources: ctx.sources.clone(),
            linked: Linked::default(),
            path: block.output.clone(),
            sndem,
            out: None,
            error: None,
            written: 0,
            progress: ctx.progress.clone(),
            sector: block.sector,
        }
    }

    fn record(&mut self, cb: Callback) {
        let (
            Some(out),
            Callback::ReceiveInteraction {
                class,
                values,
                info,
                ..
            },
        ) = (&mut self.out, cb)
        else {
            return;
        };
        if class != self.sndem.class || self.error.is_some() || !self.linked.accepts(info.producer)
        {
            return;
        }
        let Some((_, message)) = values.iter().find(|(p, _)| *p == self.sndem.message) else {
            return;
        };
        let second = Codec::Json
            .decode(message)
            .or_else(|| Codec::Binary.decode(message))
            .map_or(0, |t| (t.time.div_euclid(1000)) as u32);
        let r = out
            .write_all(&second.to_le_bytes())
            .and_then(|()| out.write_all(&(message.len() as u32).to_le_bytes()))
            .and_then(|()| out.write_all(message));
        match r {
            Ok(()) => {
                self.written += 1;
                if self.written.is_multiple_of(1024) {
                    self.progress.block_received(&self.name, self.written);
                }
            }
            Err(e) => self.error = Some(e.to_string()),
        }
    }
}

impl Component for RecorderBlock {
    fn state(
        &mut self,
        state: SimulationState,
        f: &Federate,
        abort: &AtomicBool,
    ) -> Result<(), String> {
        match state {
            SimulationState::Deployment => {
                let path = self
                    .path
                    .clone()
                    .ok_or_else(|| format!("recorder {} has no output", self.name))?;
                if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
                }
                let mut file = BufWriter::new(
                    File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?,
                );
                file.write_all(RECORDING_MAGIC)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
                self.out = Some(file);
                Ok(())
            }
            SimulationState::Startup => {
                super::sector::subscribe_tracks(f, self.sndem.class, self.sector.as_ref())
            }
            SimulationState::Initialization => {
                self.linked.learn(f, &self.sources)?;
                // Constrained (not regulating: it holds nobody back), so the grant at
                // the end proves every message of the run has arrived.
                f.enable_time_constrained().map_err(|e| e.to_string())?;
                wait_until(f, abort, "constrained", &mut |cb| self.record(cb), |cb| {
                    matches!(cb, Callback::TimeConstrainedEnabled { .. })
                })
                .map(drop)
            }
            SimulationState::Execution => {
                advance(f, abort, f64::from(self.end), &mut |cb| self.record(cb))?;
                self.progress.block_received(&self.name, self.written);
                Ok(())
            }
            SimulationState::Archival => {
                if let Some(e) = self.error.take() {
                    return Err(e);
                }
                if let Some(mut out) = self.out.take() {
                    out.flush().map_err(|e| e.to_string())?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn callback(&mut self, cb: Callback) {
        self.record(cb);
    }

    fn outcome(self: Box<Self>) -> BlockOutcome {
        BlockOutcome::Other
    }
}

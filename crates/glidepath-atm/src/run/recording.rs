//! The recording file format: after an 8-byte magic, one record per message — the
//! simulated second (u32 LE), the length (u32 LE) and the message bytes as they
//! travelled (JSON or binary).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Magic at the start of a recording file.
pub(super) const RECORDING_MAGIC: &[u8; 8] = b"GPREC01\n";

/// Reads a recording: (unix second of the track, message bytes) per record.
pub(super) fn read_recording(path: &Path) -> Result<Vec<(u32, Vec<u8>)>, String> {
    let file = File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut r = BufReader::new(file);
    let mut magic = [0u8; 8];
    r.read_exact(&mut magic)
        .map_err(|e| format!("{}: not a recording ({e})", path.display()))?;
    if &magic != RECORDING_MAGIC {
        return Err(format!("{}: not a glidepath recording", path.display()));
    }
    let mut out = Vec::new();
    loop {
        if r.fill_buf().map_err(|e| e.to_string())?.is_empty() {
            return Ok(out);
        }
        let mut head = [0u8; 8];
        r.read_exact(&mut head).map_err(|e| {
            format!(
                "{}: record {} truncated ({e})",
                path.display(),
                out.len() + 1
            )
        })?;
        let second = u32::from_le_bytes(head[..4].try_into().expect("4 bytes"));
        let len = u32::from_le_bytes(head[4..].try_into().expect("4 bytes")) as usize;
        if len > 1 << 20 {
            return Err(format!(
                "{}: record {} claims {len} bytes",
                path.display(),
                out.len() + 1
            ));
        }
        let mut message = vec![0; len];
        r.read_exact(&mut message).map_err(|e| {
            format!(
                "{}: record {} truncated ({e})",
                path.display(),
                out.len() + 1
            )
        })?;
        out.push((second, message));
    }
}

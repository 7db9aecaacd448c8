//! The management plane: requests to the executive and its replies as JSON.
//!
//! Each message is one JSON object `{"version": 2, "request": ...}` or
//! `{"version": 2, "reply": ...}`; the request or reply is serde's externally tagged
//! form of [`ExecRequest`] / [`ExecReply`] (see `docs/wire-format.md`). The version is
//! read first, so a message from a newer peer is reported as
//! [`WireError::UnsupportedVersion`] rather than as a confusing parse error.

use glidepath_core::{ExecReply, ExecRequest};
use serde::{Deserialize, Serialize};

use crate::WireError;

/// The management-plane version this build writes and the only one it reads.
pub const JSON_VERSION: u64 = 3;

#[derive(Serialize)]
struct RequestOut<'a> {
    version: u64,
    request: &'a ExecRequest,
}

#[derive(Deserialize)]
struct RequestIn {
    request: ExecRequest,
}

#[derive(Serialize)]
struct ReplyOut<'a> {
    version: u64,
    reply: &'a ExecReply,
}

#[derive(Deserialize)]
struct ReplyIn {
    reply: ExecReply,
}

/// The version alone; every other member is skipped unparsed.
#[derive(Deserialize)]
struct VersionOnly {
    version: u64,
}

fn json_error(e: serde_json::Error) -> WireError {
    WireError::Json {
        message: e.to_string(),
    }
}

fn check_version(bytes: &[u8]) -> Result<(), WireError> {
    let v: VersionOnly = serde_json::from_slice(bytes).map_err(json_error)?;
    if v.version == JSON_VERSION {
        Ok(())
    } else {
        Err(WireError::UnsupportedVersion {
            version: v.version,
            supported: JSON_VERSION,
        })
    }
}

fn to_vec(value: &impl Serialize) -> Vec<u8> {
    // Cannot fail: every map in these types has string keys, and times are written
    // as numbers or strings, never as non-finite floats.
    serde_json::to_vec(value).expect("executive messages always serialize to JSON")
}

/// Encodes a request to the executive (JSON).
pub fn encode_request(request: &ExecRequest) -> Vec<u8> {
    to_vec(&RequestOut {
        version: JSON_VERSION,
        request,
    })
}

/// Decodes a request to the executive; malformed JSON or an unknown version is an error.
pub fn decode_request(bytes: &[u8]) -> Result<ExecRequest, WireError> {
    check_version(bytes)?;
    let m: RequestIn = serde_json::from_slice(bytes).map_err(json_error)?;
    Ok(m.request)
}

/// Encodes the executive's reply (JSON).
pub fn encode_reply(reply: &ExecReply) -> Vec<u8> {
    to_vec(&ReplyOut {
        version: JSON_VERSION,
        reply,
    })
}

/// Decodes the executive's reply; malformed JSON or an unknown version is an error.
pub fn decode_reply(bytes: &[u8]) -> Result<ExecReply, WireError> {
    check_version(bytes)?;
    let m: ReplyIn = serde_json::from_slice(bytes).map_err(json_error)?;
    Ok(m.reply)
}

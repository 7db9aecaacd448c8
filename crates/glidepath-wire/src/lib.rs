//! glidepath's wire format: how an [`Envelope`] and the executive's requests and
//! replies look as bytes, so that processes (and clients in other languages) can
//! interoperate. The layout is specified in `docs/wire-format.md`.

use bytes::Bytes;
use glidepath_core::{Envelope, ExecReply, ExecRequest};

/// Why bytes could not be decoded. Decoding never panics, whatever the input.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum WireError {
    /// Not implemented yet in this build.
    #[error("wire format not available: {0}")]
    Unsupported(&'static str),
}

/// Encodes an envelope in the versioned binary layout.
pub fn encode_envelope(envelope: &Envelope) -> Bytes {
    let _ = envelope;
    Bytes::new()
}

/// Decodes an envelope; any malformed input is an error, never a panic.
pub fn decode_envelope(bytes: &[u8]) -> Result<Envelope, WireError> {
    let _ = bytes;
    Err(WireError::Unsupported("decode_envelope"))
}

/// Encodes a request to the executive (JSON).
pub fn encode_request(request: &ExecRequest) -> Vec<u8> {
    let _ = request;
    Vec::new()
}

/// Decodes a request to the executive.
pub fn decode_request(bytes: &[u8]) -> Result<ExecRequest, WireError> {
    let _ = bytes;
    Err(WireError::Unsupported("decode_request"))
}

/// Encodes the executive's reply (JSON).
pub fn encode_reply(reply: &ExecReply) -> Vec<u8> {
    let _ = reply;
    Vec::new()
}

/// Decodes the executive's reply.
pub fn decode_reply(bytes: &[u8]) -> Result<ExecReply, WireError> {
    let _ = bytes;
    Err(WireError::Unsupported("decode_reply"))
}

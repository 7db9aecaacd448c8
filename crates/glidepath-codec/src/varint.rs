//! The codec's varints are the wire format's: `glidepath_wire::varint` is the one
//! LEB128 implementation. This module gives it the names the codec's layouts (bundles,
//! chain frames, track messages) use, and keeps their reading as it always was:
//! longer forms than needed are accepted.

pub(crate) use glidepath_wire::varint::len as varint_len;
pub use glidepath_wire::varint::{zigzag_decode, zigzag_encode};

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
#[inline]
pub fn write_varint(out: &mut Vec<u8>, v: u64) {
    glidepath_wire::varint::put(out, v);
}

/// Reads a varint from the front of `input`; returns the value and the bytes used, or
/// `None` when the input ends early or the value does not fit 64 bits.
#[inline]
pub fn read_varint(input: &[u8]) -> Option<(u64, usize)> {
    glidepath_wire::varint::get_any_form(input).ok()
}

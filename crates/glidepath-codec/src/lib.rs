//! The encoder chain of the ATM TestBed's Messaging Support (report `000_...`,
//! section 2): a message is made transmissible by `M_T = (f1 ∘ f2 ∘ … ∘ fn)(M)` and
//! restored by the inverse functions in reverse order.
//!
//! glidepath's chain has three stages, each optional and each with its exact inverse:
//!
//! 1. **serialisation** of typed messages (the SNDEM track message lives with the ATM
//!    layer, `glidepath_atm::track`: JSON byte for byte as Table 4.1 prints it, or
//!    compact binary with this crate's variable-length integers);
//! 2. **compression** ([`Compression::Lz4`] or [`Compression::Zstd`]), skipped below a
//!    size threshold where it costs more than it saves;
//! 3. **authenticated encryption** (XChaCha20-Poly1305 with a federation key): a frame
//!    that fails authentication is rejected, so a process without the key can neither
//!    read nor inject.
//!
//! Stages 2 and 3 operate on bytes and produce one self-describing [`frame`], so a
//! receiver decodes whatever settings the sender used. Decoding never panics and never
//! allocates more than [`ChainConfig::message_bytes_max`], whatever the input.

pub mod bundle;
pub mod frame;
mod varint;
// Typed messages in higher layers (the ATM track) lay their bytes out with the same varints.
pub use varint::{read_varint, write_varint, zigzag_decode, zigzag_encode};

pub use bundle::{unbundle, BundleConfig, Bundler};
pub use frame::{ChainConfig, CodecError, Compression, EncoderChain, FederationKey};

//! Compression and authenticated encryption as one self-describing frame.
//!
//! Layout (version 1), all integers unsigned LEB128 unless stated:
//!
//! | bytes | field |
//! |---|---|
//! | 0 | `0xE1`: frame marker (`0xE_`) and version (`_1`) |
//! | 1 | flags: bits 0–1 compression (0 none, 1 lz4, 2 zstd), bit 2 encrypted; other bits 0 |
//! | 2..26 | only when encrypted: the 24-byte XChaCha20 nonce |
//! | rest | the body; when encrypted, the body is ciphertext plus the 16-byte Poly1305 tag, authenticated together with bytes 0..26 |
//!
//! The (decrypted) body is the payload itself, or, when compressed, the varint length
//! of the original payload followed by the compressed block. Compression happens
//! before encryption (ciphertext does not compress), and decoding undoes the stages
//! in reverse order, as the TestBed report prescribes.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use bytes::Bytes;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};

use crate::varint::{read_varint, write_varint};

const MARKER: u8 = 0xE1;
const FLAG_COMPRESSION_MASK: u8 = 0b011;
const FLAG_ENCRYPTED: u8 = 0b100;
const NONCE_LEN: usize = 24;
const TAG_LEN: usize = 16;

/// Which compression the chain applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Compression {
    /// No compression: the default, because SNDEM-sized messages (about 200 B) lose
    /// more time compressing than they save (report section 4.3, run 2B).
    #[default]
    None,
    /// LZ4 block compression: fast, modest ratio.
    Lz4,
    /// Zstandard at the given level (1 is fast; 3 is zstd's default).
    Zstd { level: i32 },
}

impl Compression {
    fn flag(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Lz4 => 1,
            Compression::Zstd { .. } => 2,
        }
    }

    /// Parses `none`, `lz4`, `zstd` or `zstd:LEVEL`.
    pub fn parse(text: &str) -> Result<Compression, CodecError> {
        match text {
            "none" => Ok(Compression::None),
            "lz4" => Ok(Compression::Lz4),
            "zstd" => Ok(Compression::Zstd { level: 3 }),
            other => match other
                .strip_prefix("zstd:")
                .and_then(|l| l.parse::<i32>().ok())
            {
                Some(level) if (1..=22).contains(&level) => Ok(Compression::Zstd { level }),
                _ => Err(CodecError::InvalidSetting(format!(
                    "compression `{other}`: expected none, lz4, zstd or zstd:LEVEL (1-22)"
                ))),
            },
        }
    }
}

/// Written as [`Compression::parse`] reads it: `none`, `lz4` or `zstd:LEVEL`.
impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Compression::None => f.write_str("none"),
            Compression::Lz4 => f.write_str("lz4"),
            Compression::Zstd { level } => write!(f, "zstd:{level}"),
        }
    }
}

/// A federation's 256-bit secret key. Its `Debug` output never shows the key.
#[derive(Clone, PartialEq, Eq)]
pub struct FederationKey([u8; 32]);

impl FederationKey {
    /// A key from 32 raw bytes.
    pub fn from_bytes(bytes: [u8; 32]) -> FederationKey {
        FederationKey(bytes)
    }
    /// A key from 64 hexadecimal digits (how keys are written in configuration).
    pub fn from_hex(text: &str) -> Result<FederationKey, CodecError> {
        let text = text.trim();
        if text.len() != 64 {
            return Err(CodecError::InvalidSetting(format!(
                "a federation key is 64 hex digits, got {} characters",
                text.len()
            )));
        }
        let mut key = [0u8; 32];
        for (i, k) in key.iter_mut().enumerate() {
            *k = u8::from_str_radix(&text[2 * i..2 * i + 2], 16).map_err(|_| {
                CodecError::InvalidSetting("a federation key is 64 hex digits (0-9, a-f)".into())
            })?;
        }
        Ok(FederationKey(key))
    }
    /// A fresh random key from the operating system.
    pub fn generate() -> Result<FederationKey, CodecError> {
        let mut key = [0u8; 32];
        getrandom::getrandom(&mut key).map_err(|e| CodecError::Random(e.to_string()))?;
        Ok(FederationKey(key))
    }
    /// The key as 64 hex digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

impl fmt::Debug for FederationKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("FederationKey(<redacted>)")
    }
}

/// What the chain does. Public fields; each default says why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChainConfig {
    /// Compression algorithm; `None` by default (see [`Compression::None`]).
    pub compression: Compression,
    /// Payloads shorter than this are sent uncompressed: 512 B by default, because
    /// below that the frame overhead and CPU cost outweigh the saving on typical
    /// simulation messages.
    pub compress_bytes_min: usize,
    /// Encrypt and authenticate with this key; `None` (plaintext) by default, for a
    /// trusted local network.
    pub key: Option<FederationKey>,
    /// Largest payload a frame may decode to: 64 MiB by default, so a hostile frame
    /// cannot make a receiver allocate without bound.
    pub message_bytes_max: usize,
}

impl Default for ChainConfig {
    fn default() -> Self {
        ChainConfig {
            compression: Compression::None,
            compress_bytes_min: 512,
            key: None,
            message_bytes_max: 64 << 20,
        }
    }
}

/// Why a frame could not be encoded or decoded.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum CodecError {
    #[error("frame is empty or truncated")]
    Truncated,
    #[error("not an encoder-chain frame (first byte {0:#04x})")]
    NotAFrame(u8),
    #[error("unknown frame flags {0:#010b}")]
    UnknownFlags(u8),
    #[error("frame is encrypted but this federate has no federation key")]
    KeyRequired,
    #[error("frame is not encrypted but the federation requires its key")]
    Unauthenticated,
    #[error("frame failed authentication (wrong key or tampered bytes)")]
    AuthenticationFailed,
    #[error("frame declares {declared} bytes, more than the limit of {limit}")]
    TooLarge { declared: u64, limit: usize },
    #[error("decompression failed: {0}")]
    Decompression(String),
    #[error("compression failed: {0}")]
    Compression(String),
    #[error("no randomness from the operating system: {0}")]
    Random(String),
    #[error("invalid setting: {0}")]
    InvalidSetting(String),
    #[error("malformed message: {0}")]
    Malformed(String),
}

/// A configured chain: encodes payloads into frames and decodes frames back.
/// Shareable between threads.
pub struct EncoderChain {
    config: ChainConfig,
    cipher: Option<XChaCha20Poly1305>,
    /// Random per-chain prefix plus a counter make every nonce unique without a
    /// system call per message.
    nonce_prefix: [u8; 16],
    nonce_counter: AtomicU64,
}

impl fmt::Debug for EncoderChain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EncoderChain")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl EncoderChain {
    /// Builds a chain from its configuration.
    pub fn new(config: ChainConfig) -> Result<EncoderChain, CodecError> {
        let cipher = config
            .key
            .as_ref()
            .map(|k| XChaCha20Poly1305::new((&k.0).into()));
        let mut nonce_prefix = [0u8; 16];
        if cipher.is_some() {
            getrandom::getrandom(&mut nonce_prefix)
                .map_err(|e| CodecError::Random(e.to_string()))?;
        }
        Ok(EncoderChain {
            config,
            cipher,
            nonce_prefix,
            nonce_counter: AtomicU64::new(0),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &ChainConfig {
        &self.config
    }

    /// Applies compression then encryption: `M_T = encrypt(compress(M))`.
    pub fn encode(&self, payload: &[u8]) -> Result<Bytes, CodecError> {
        let mut out = Vec::with_capacity(
            payload.len()
                + 2
                + if self.cipher.is_some() {
                    NONCE_LEN + TAG_LEN
                } else {
                    0
                },
        );
        let mut body = Vec::new();
        let mut flags = 0u8;
        if self.config.compression != Compression::None
            && payload.len() >= self.config.compress_bytes_min
        {
            let compressed = match self.config.compression {
                Compression::Lz4 => lz4_flex::block::compress(payload),
                Compression::Zstd { level } => zstd::bulk::compress(payload, level)
                    .map_err(|e| CodecError::Compression(e.to_string()))?,
                Compression::None => unreachable!("checked above"),
            };
            // Incompressible data goes as it is: never pay for a larger message.
            if compressed.len() + 10 < payload.len() {
                flags |= self.config.compression.flag();
                write_varint(&mut body, payload.len() as u64);
                body.extend_from_slice(&compressed);
            }
        }
        let plain: &[u8] = if flags & FLAG_COMPRESSION_MASK != 0 {
            &body
        } else {
            payload
        };
        match &self.cipher {
            None => {
                out.push(MARKER);
                out.push(flags);
                out.extend_from_slice(plain);
            }
            Some(cipher) => {
                flags |= FLAG_ENCRYPTED;
                out.push(MARKER);
                out.push(flags);
                let n = self.nonce_counter.fetch_add(1, Ordering::Relaxed);
                let mut nonce = [0u8; NONCE_LEN];
                nonce[..16].copy_from_slice(&self.nonce_prefix);
                nonce[16..].copy_from_slice(&n.to_le_bytes());
                out.extend_from_slice(&nonce);
                let sealed = cipher
                    .encrypt(
                        XNonce::from_slice(&nonce),
                        Payload {
                            msg: plain,
                            aad: &out[..2 + NONCE_LEN],
                        },
                    )
                    .map_err(|_| CodecError::Compression("encryption failed".into()))?;
                out.extend_from_slice(&sealed);
            }
        }
        Ok(Bytes::from(out))
    }

    /// Undoes [`EncoderChain::encode`]: authenticate and decrypt, then decompress.
    pub fn decode(&self, frame: &[u8]) -> Result<Bytes, CodecError> {
        let (&marker, rest) = frame.split_first().ok_or(CodecError::Truncated)?;
        if marker != MARKER {
            return Err(CodecError::NotAFrame(marker));
        }
        let (&flags, rest) = rest.split_first().ok_or(CodecError::Truncated)?;
        if flags & !(FLAG_COMPRESSION_MASK | FLAG_ENCRYPTED) != 0
            || flags & FLAG_COMPRESSION_MASK == 3
        {
            return Err(CodecError::UnknownFlags(flags));
        }
        let opened;
        let body: &[u8] = if flags & FLAG_ENCRYPTED != 0 {
            let cipher = self.cipher.as_ref().ok_or(CodecError::KeyRequired)?;
            if rest.len() < NONCE_LEN + TAG_LEN {
                return Err(CodecError::Truncated);
            }
            let (nonce, sealed) = rest.split_at(NONCE_LEN);
            opened = cipher
                .decrypt(
                    XNonce::from_slice(nonce),
                    Payload {
                        msg: sealed,
                        aad: &frame[..2 + NONCE_LEN],
                    },
                )
                .map_err(|_| CodecError::AuthenticationFailed)?;
            &opened
        } else {
            if self.cipher.is_some() {
                return Err(CodecError::Unauthenticated);
            }
            rest
        };
        match flags & FLAG_COMPRESSION_MASK {
            0 => Ok(Bytes::copy_from_slice(body)),
            compression => {
                let (len, used) = read_varint(body).ok_or(CodecError::Truncated)?;
                if len > self.config.message_bytes_max as u64 {
                    return Err(CodecError::TooLarge {
                        declared: len,
                        limit: self.config.message_bytes_max,
                    });
                }
                let block = &body[used..];
                let out = if compression == 1 {
                    lz4_flex::block::decompress(block, len as usize)
                        .map_err(|e| CodecError::Decompression(e.to_string()))?
                } else {
                    zstd::bulk::decompress(block, len as usize)
                        .map_err(|e| CodecError::Decompression(e.to_string()))?
                };
                if out.len() as u64 != len {
                    return Err(CodecError::Decompression(format!(
                        "expected {len} bytes, got {}",
                        out.len()
                    )));
                }
                Ok(Bytes::from(out))
            }
        }
    }
}

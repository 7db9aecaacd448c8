//! The bus's frames on the wire (`docs/wire-format.md` section 7.5): a data frame
//! carries one encoded message with its service level, sender, per-sender sequence
//! number, publication time and subject; a membership frame records a member joining
//! or leaving a group; an acknowledgement frame says how far a member has received
//! the group's order (it is also the member's heartbeat).
//!
//! ```text
//! frame      = magic:u8 (0xB5) version:u8 (0x01) kind:u8 body
//! kind 0x01  data:       level:u8 encoding:u8 sender:varint seq:varint
//!                        publish_time_ns:u64 (LE) subject:string payload:rest
//! kind 0x02  membership: change:u8 (1 joined, 2 left, 3 crashed) member:varint name:string
//! kind 0x03  ack:        member:varint through:varint flags:u8 (bit 0: learnt)
//!                        count:varint member:varint × count
//! ```
//!
//! Decoding never panics; it refuses a wrong magic or version, an unknown kind, level,
//! encoding or change, a truncated field and an invalid subject.

use std::fmt;

use bytes::Bytes;
use glidepath_wire::varint;

use crate::message::Encoding;
use crate::subject::Subject;

/// The first byte of every bus frame.
pub const MAGIC: u8 = 0xB5;
/// The frame layout's version.
pub const VERSION: u8 = 1;

/// Spread's six service levels (version 3.17.3), weakest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ServiceLevel {
    /// May be dropped or duplicated.
    Unreliable,
    /// Once at every member, in any order.
    Reliable,
    /// Reliable, and in order per sender.
    Fifo,
    /// FIFO, and in causal order across senders.
    Causal,
    /// Causal, and every member delivers in the same total order.
    Agreed,
    /// Agreed, and delivered only once every member has the message.
    Safe,
}

impl ServiceLevel {
    /// Every level, weakest first.
    pub const ALL: [ServiceLevel; 6] = [
        ServiceLevel::Unreliable,
        ServiceLevel::Reliable,
        ServiceLevel::Fifo,
        ServiceLevel::Causal,
        ServiceLevel::Agreed,
        ServiceLevel::Safe,
    ];

    /// Spread's name in lower case (`agreed`), as configuration and the CLI spell it.
    pub const fn name(self) -> &'static str {
        match self {
            ServiceLevel::Unreliable => "unreliable",
            ServiceLevel::Reliable => "reliable",
            ServiceLevel::Fifo => "fifo",
            ServiceLevel::Causal => "causal",
            ServiceLevel::Agreed => "agreed",
            ServiceLevel::Safe => "safe",
        }
    }

    /// The byte in a data frame.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The level a data frame's byte names.
    pub fn from_code(code: u8) -> Option<ServiceLevel> {
        ServiceLevel::ALL.get(usize::from(code)).copied()
    }

    /// True for the levels whose messages every member delivers in one total order.
    pub const fn is_totally_ordered(self) -> bool {
        matches!(self, ServiceLevel::Agreed | ServiceLevel::Safe)
    }
}

impl fmt::Display for ServiceLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name().to_ascii_uppercase())
    }
}

impl std::str::FromStr for ServiceLevel {
    type Err = String;
    fn from_str(s: &str) -> Result<ServiceLevel, String> {
        let wanted = s.trim();
        ServiceLevel::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(wanted))
            .ok_or_else(|| {
                format!("unknown service level `{s}`; known: unreliable, reliable, fifo, causal, agreed, safe")
            })
    }
}

/// A member's identity on the bus: a random token per connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemberId(pub u64);

impl fmt::Display for MemberId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:016x}", self.0)
    }
}

/// One message as it travels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataFrame {
    /// The level it was sent with.
    pub level: ServiceLevel,
    /// The encoding of `payload`.
    pub encoding: Encoding,
    /// Who sent it.
    pub sender: MemberId,
    /// The sender's sequence number in the group, from 1; 0 for unreliable messages.
    pub seq: u64,
    /// Publication time, nanoseconds since the UNIX epoch.
    pub publish_time_ns: u64,
    /// The subject.
    pub subject: Subject,
    /// The encoded message.
    pub payload: Bytes,
}

/// What happened to a group's membership.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MembershipKind {
    /// A member joined.
    Joined,
    /// A member left.
    Left,
    /// A member stopped without leaving.
    Crashed,
}

/// A membership change as it travels.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MembershipFrame {
    /// What happened.
    pub kind: MembershipKind,
    /// To whom.
    pub member: MemberId,
    /// The member's name, for people.
    pub name: String,
}

/// A member's acknowledgement: it has received the group's order through sequence
/// `through`, and the other members it knows are `view`. Sent often enough to be the
/// member's heartbeat too; the view lets a newcomer learn members that joined before
/// it did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AckFrame {
    /// Who acknowledges.
    pub member: MemberId,
    /// The last number of the group's order it has received with none missing.
    pub through: u64,
    /// Whether its view is the whole group: it received the order from its first
    /// number, or learnt the group from a member whose view was (see
    /// [`crate::stability`]).
    pub learnt: bool,
    /// The other members in its view.
    pub view: Vec<MemberId>,
}

/// The most members an ack frame lists (a larger count is refused when decoding).
pub const ACK_VIEW_MAX: usize = 4096;

impl AckFrame {
    /// The whole frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 9 * self.view.len());
        out.extend_from_slice(&[MAGIC, VERSION, 0x03]);
        varint::put(&mut out, self.member.0);
        varint::put(&mut out, self.through);
        out.push(u8::from(self.learnt));
        varint::put(&mut out, self.view.len() as u64);
        for m in &self.view {
            varint::put(&mut out, m.0);
        }
        out
    }
}

/// A decoded frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Frame {
    /// A message.
    Data(DataFrame),
    /// A membership change.
    Membership(MembershipFrame),
    /// An acknowledgement (heartbeat).
    Ack(AckFrame),
}

/// Why bytes are not a frame.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    /// Not a bus frame (wrong magic byte) or an unknown version.
    #[error("not a bus frame of version {VERSION} (starts {0:02x?})")]
    NotAFrame(Vec<u8>),
    /// An unknown kind, level, encoding or change byte.
    #[error("unknown {what} byte {byte:#04x}")]
    Unknown {
        /// Which field.
        what: &'static str,
        /// Its value.
        byte: u8,
    },
    /// The frame ends inside a field.
    #[error("truncated frame")]
    Truncated,
    /// Text that is not UTF-8.
    #[error("a name that is not UTF-8")]
    NotUtf8,
    /// The subject is not a valid subject.
    #[error("bad subject: {0}")]
    Subject(#[from] crate::subject::SubjectError),
}

fn put_string(out: &mut Vec<u8>, s: &str) {
    varint::put(out, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

impl DataFrame {
    /// The frame's header (everything before the payload), appended to `out`; the
    /// payload follows it on the wire.
    pub fn encode_header(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&[
            MAGIC,
            VERSION,
            0x01,
            self.level.code(),
            encoding_code(self.encoding),
        ]);
        varint::put(out, self.sender.0);
        varint::put(out, self.seq);
        out.extend_from_slice(&self.publish_time_ns.to_le_bytes());
        put_string(out, self.subject.as_str());
    }

    /// The whole frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(32 + self.subject.as_str().len() + self.payload.len());
        self.encode_header(&mut out);
        out.extend_from_slice(&self.payload);
        out
    }
}

impl MembershipFrame {
    /// The whole frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![MAGIC, VERSION, 0x02, membership_code(self.kind)];
        varint::put(&mut out, self.member.0);
        put_string(&mut out, &self.name);
        out
    }
}

const fn encoding_code(e: Encoding) -> u8 {
    match e {
        Encoding::Xml => 0,
        Encoding::Binary => 1,
    }
}

const fn membership_code(k: MembershipKind) -> u8 {
    match k {
        MembershipKind::Joined => 1,
        MembershipKind::Left => 2,
        MembershipKind::Crashed => 3,
    }
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], FrameError> {
        if n > self.bytes.len() - self.at {
            return Err(FrameError::Truncated);
        }
        let s = &self.bytes[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, FrameError> {
        Ok(self.take(1)?[0])
    }
    fn varint(&mut self) -> Result<u64, FrameError> {
        let (v, n) = varint::get(&self.bytes[self.at..]).map_err(|_| FrameError::Truncated)?;
        self.at += n;
        Ok(v)
    }
    fn string(&mut self) -> Result<&'a str, FrameError> {
        let n = usize::try_from(self.varint()?).map_err(|_| FrameError::Truncated)?;
        std::str::from_utf8(self.take(n)?).map_err(|_| FrameError::NotUtf8)
    }
}

/// Decodes a frame; the payload of a data frame is a zero-copy slice of `bytes`.
pub fn decode(bytes: &Bytes) -> Result<Frame, FrameError> {
    let mut r = Reader { bytes, at: 0 };
    if bytes.len() < 3 || bytes[0] != MAGIC || bytes[1] != VERSION {
        return Err(FrameError::NotAFrame(
            bytes.iter().take(3).copied().collect(),
        ));
    }
    r.at = 2;
    match r.u8()? {
        0x01 => {
            let code = r.u8()?;
            let level = ServiceLevel::from_code(code).ok_or(FrameError::Unknown {
                what: "service level",
                byte: code,
            })?;
            let encoding = match r.u8()? {
                0 => Encoding::Xml,
                1 => Encoding::Binary,
                byte => {
                    return Err(FrameError::Unknown {
                        what: "encoding",
                        byte,
                    })
                }
            };
            let sender = MemberId(r.varint()?);
            let seq = r.varint()?;
            let publish_time_ns = u64::from_le_bytes(r.take(8)?.try_into().expect("8 bytes"));
            let subject = Subject::new(r.string()?)?;
            Ok(Frame::Data(DataFrame {
                level,
                encoding,
                sender,
                seq,
                publish_time_ns,
                subject,
                payload: bytes.slice(r.at..),
            }))
        }
        0x02 => {
            let kind = match r.u8()? {
                1 => MembershipKind::Joined,
                2 => MembershipKind::Left,
                3 => MembershipKind::Crashed,
                byte => {
                    return Err(FrameError::Unknown {
                        what: "membership change",
                        byte,
                    })
                }
            };
            let member = MemberId(r.varint()?);
            let name = r.string()?.to_string();
            if r.at != bytes.len() {
                return Err(FrameError::Truncated);
            }
            Ok(Frame::Membership(MembershipFrame { kind, member, name }))
        }
        0x03 => {
            let member = MemberId(r.varint()?);
            let through = r.varint()?;
            let learnt = match r.u8()? {
                0 => false,
                1 => true,
                byte => {
                    return Err(FrameError::Unknown {
                        what: "ack flags",
                        byte,
                    })
                }
            };
            let count = r.varint()?;
            if count > ACK_VIEW_MAX as u64 {
                return Err(FrameError::Truncated);
            }
            let mut view = Vec::with_capacity(count as usize);
            for _ in 0..count {
                view.push(MemberId(r.varint()?));
            }
            if r.at != bytes.len() {
                return Err(FrameError::Truncated);
            }
            Ok(Frame::Ack(AckFrame {
                member,
                through,
                learnt,
                view,
            }))
        }
        byte => Err(FrameError::Unknown {
            what: "frame kind",
            byte,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_bad_bytes_are_refused() {
        let data = DataFrame {
            level: ServiceLevel::Agreed,
            encoding: Encoding::Binary,
            sender: MemberId(0xDEAD_BEEF),
            seq: 42,
            publish_time_ns: 1_700_000_000_000_000_000,
            subject: Subject::new("FFTB.MMS.SAT1").unwrap(),
            payload: Bytes::from_static(b"\x01\x00"),
        };
        let bytes = Bytes::from(data.encode());
        assert_eq!(decode(&bytes), Ok(Frame::Data(data)));
        let m = MembershipFrame {
            kind: MembershipKind::Left,
            member: MemberId(7),
            name: "fe-1".into(),
        };
        assert_eq!(decode(&Bytes::from(m.encode())), Ok(Frame::Membership(m)));
        let a = AckFrame {
            member: MemberId(9),
            through: 300,
            learnt: true,
            view: vec![MemberId(1), MemberId(u64::MAX)],
        };
        assert_eq!(decode(&Bytes::from(a.encode())), Ok(Frame::Ack(a.clone())));
        let mut huge = vec![MAGIC, VERSION, 0x03, 1, 1, 0];
        varint::put(&mut huge, u64::MAX);
        assert!(
            decode(&Bytes::from(huge)).is_err(),
            "a view count beyond the limit"
        );
        let mut long = a.encode();
        long.push(0);
        assert!(decode(&Bytes::from(long)).is_err());
        for bad in [
            &b""[..],
            b"\xB5",
            b"\x00\x01\x01",
            b"\xB5\x01\x09",
            b"\xB5\x01\x01\x09",
            b"\xB5\x01\x01\x02\x00\x01",
        ] {
            assert!(decode(&Bytes::copy_from_slice(bad)).is_err(), "{bad:?}");
        }
        let mut truncated = bytes.to_vec();
        truncated.truncate(12);
        assert!(decode(&Bytes::from(truncated)).is_err());
    }

    #[test]
    fn levels_parse_by_name() {
        assert_eq!("AGREED".parse::<ServiceLevel>(), Ok(ServiceLevel::Agreed));
        assert!("total".parse::<ServiceLevel>().is_err());
        for l in ServiceLevel::ALL {
            assert_eq!(ServiceLevel::from_code(l.code()), Some(l));
        }
    }
}

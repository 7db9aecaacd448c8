//! The bytes of the target generator's interactions: aircraft handed to a node (their
//! whole state, bit for bit, so a trajectory continues the same on any node), commands
//! and acknowledgements. Big-endian, length-prefixed strings; decoding returns an error
//! for any malformed input and never panics.

use crate::command::{Command, CommandAck, Instruction, Refusal};
use crate::dynamics::{Aircraft, FlightPlan, Guidance, KinematicState, Lateral, Waypoint, Wind};

/// Bytes that do not decode.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("malformed target-generator message: {0}")]
pub struct WireError(pub &'static str);

/// Appends values to a buffer.
#[derive(Default)]
pub struct Writer {
    /// What was written.
    pub buf: Vec<u8>,
}

impl Writer {
    /// An unsigned integer, 8 bytes.
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_be_bytes());
    }
    /// A double, its exact bits.
    pub fn f64(&mut self, v: f64) {
        self.u64(v.to_bits());
    }
    /// A byte.
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    /// A string, length first.
    pub fn str(&mut self, s: &str) {
        self.u64(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }
    fn opt(&mut self, v: Option<f64>) {
        match v {
            Some(v) => {
                self.u8(1);
                self.f64(v);
            }
            None => self.u8(0),
        }
    }
}

/// Reads values back.
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads from `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { rest: bytes }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.rest.len() < n {
            return Err(WireError("truncated"));
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    /// An unsigned integer.
    pub fn u64(&mut self) -> Result<u64, WireError> {
        let b = self.take(8)?;
        Ok(u64::from_be_bytes(
            b.try_into().map_err(|_| WireError("truncated"))?,
        ))
    }
    /// A double.
    pub fn f64(&mut self) -> Result<f64, WireError> {
        Ok(f64::from_bits(self.u64()?))
    }
    /// A byte.
    pub fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    /// A string.
    pub fn str(&mut self) -> Result<String, WireError> {
        let n = usize::try_from(self.u64()?).map_err(|_| WireError("string too long"))?;
        let b = self.take(n)?;
        String::from_utf8(b.to_vec()).map_err(|_| WireError("string not UTF-8"))
    }
    fn opt(&mut self) -> Result<Option<f64>, WireError> {
        match self.u8()? {
            0 => Ok(None),
            1 => Ok(Some(self.f64()?)),
            _ => Err(WireError("bad option tag")),
        }
    }
    /// Whether everything was read.
    pub fn finished(&self) -> bool {
        self.rest.is_empty()
    }
}

/// Encodes aircraft with the scenario's wind (what a node needs to fly them).
pub fn encode_assignment(wind: Wind, aircraft: &[Aircraft]) -> Vec<u8> {
    let mut w = Writer::default();
    w.f64(wind.north_mps);
    w.f64(wind.east_mps);
    w.u64(aircraft.len() as u64);
    for a in aircraft {
        encode_aircraft(&mut w, a);
    }
    w.buf
}

/// Decodes [`encode_assignment`]'s bytes.
pub fn decode_assignment(bytes: &[u8]) -> Result<(Wind, Vec<Aircraft>), WireError> {
    let mut r = Reader::new(bytes);
    let wind = Wind {
        north_mps: r.f64()?,
        east_mps: r.f64()?,
    };
    let n = r.u64()?;
    // Each aircraft takes well over 64 bytes: a count beyond that is a lie.
    if n > (bytes.len() / 64) as u64 {
        return Err(WireError("aircraft count larger than the message"));
    }
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        out.push(decode_aircraft(&mut r)?);
    }
    if !r.finished() {
        return Err(WireError("trailing bytes"));
    }
    Ok((wind, out))
}

fn encode_aircraft(w: &mut Writer, a: &Aircraft) {
    w.str(&a.callsign);
    w.u64(u64::from(a.type_index));
    w.u64(a.steps);
    w.opt(a.plan.cruise_alt_ft());
    w.u64(a.plan.waypoints().len() as u64);
    for p in a.plan.waypoints() {
        w.str(&p.name);
        w.f64(p.lat_deg);
        w.f64(p.lon_deg);
        w.opt(p.alt_ft);
        w.opt(p.speed_kt);
    }
    let g = &a.guidance;
    match g.lateral {
        Lateral::FlightPlan => w.opt(None),
        Lateral::Heading(h) => w.opt(Some(h)),
    }
    w.opt(g.altitude_ft);
    w.opt(g.speed_kt);
    w.u64(g.active as u64);
    let s = &a.state;
    for v in [
        s.lat_rad,
        s.lon_rad,
        s.alt_m,
        s.tas_mps,
        s.heading_rad,
        s.vs_mps,
        s.bank_rad,
        s.gs_mps,
        s.track_rad,
    ] {
        w.f64(v);
    }
}

fn decode_aircraft(r: &mut Reader<'_>) -> Result<Aircraft, WireError> {
    let callsign = r.str()?;
    let type_index = u16::try_from(r.u64()?).map_err(|_| WireError("type index"))?;
    let steps = r.u64()?;
    let cruise = r.opt()?;
    let n = r.u64()?;
    if n > r.rest.len() as u64 / 26 {
        return Err(WireError("waypoint count larger than the message"));
    }
    let mut waypoints = Vec::with_capacity(n as usize);
    for _ in 0..n {
        waypoints.push(Waypoint {
            name: r.str()?,
            lat_deg: r.f64()?,
            lon_deg: r.f64()?,
            alt_ft: r.opt()?,
            speed_kt: r.opt()?,
        });
    }
    let lateral = match r.opt()? {
        None => Lateral::FlightPlan,
        Some(h) => Lateral::Heading(h),
    };
    let guidance = Guidance {
        lateral,
        altitude_ft: r.opt()?,
        speed_kt: r.opt()?,
        active: usize::try_from(r.u64()?).map_err(|_| WireError("active waypoint"))?,
    };
    let state = KinematicState {
        lat_rad: r.f64()?,
        lon_rad: r.f64()?,
        alt_m: r.f64()?,
        tas_mps: r.f64()?,
        heading_rad: r.f64()?,
        vs_mps: r.f64()?,
        bank_rad: r.f64()?,
        gs_mps: r.f64()?,
        track_rad: r.f64()?,
    };
    Ok(Aircraft {
        callsign,
        type_index,
        plan: FlightPlan::new(waypoints, cruise),
        guidance,
        state,
        steps,
    })
}

/// Encodes a command.
pub fn encode_command(c: &Command) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(c.id);
    w.str(&c.callsign);
    match &c.instruction {
        Instruction::Heading { deg } => {
            w.u8(1);
            w.f64(*deg);
        }
        Instruction::Altitude { ft } => {
            w.u8(2);
            w.f64(*ft);
        }
        Instruction::Speed { kt } => {
            w.u8(3);
            w.f64(*kt);
        }
        Instruction::DirectTo { waypoint } => {
            w.u8(4);
            w.str(waypoint);
        }
        Instruction::Resume => w.u8(5),
    }
    w.buf
}

/// Decodes [`encode_command`]'s bytes.
pub fn decode_command(bytes: &[u8]) -> Result<Command, WireError> {
    let mut r = Reader::new(bytes);
    let id = r.u64()?;
    let callsign = r.str()?;
    let instruction = match r.u8()? {
        1 => Instruction::Heading { deg: r.f64()? },
        2 => Instruction::Altitude { ft: r.f64()? },
        3 => Instruction::Speed { kt: r.f64()? },
        4 => Instruction::DirectTo { waypoint: r.str()? },
        5 => Instruction::Resume,
        _ => return Err(WireError("unknown instruction")),
    };
    if !r.finished() {
        return Err(WireError("trailing bytes"));
    }
    Ok(Command {
        id,
        callsign,
        instruction,
    })
}

/// Encodes an acknowledgement.
pub fn encode_ack(a: &CommandAck) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(a.id);
    w.str(&a.callsign);
    w.u64(a.frame);
    match &a.outcome {
        Ok(()) => w.u8(0),
        Err(Refusal::UnknownAircraft(c)) => {
            w.u8(1);
            w.str(c);
        }
        Err(Refusal::OutOfEnvelope { type_code, reason }) => {
            w.u8(2);
            w.str(type_code);
            w.str(reason);
        }
        Err(Refusal::UnknownWaypoint(n)) => {
            w.u8(3);
            w.str(n);
        }
        Err(Refusal::InvalidValue(v)) => {
            w.u8(4);
            w.str(v);
        }
    }
    w.buf
}

/// Decodes [`encode_ack`]'s bytes.
pub fn decode_ack(bytes: &[u8]) -> Result<CommandAck, WireError> {
    let mut r = Reader::new(bytes);
    let id = r.u64()?;
    let callsign = r.str()?;
    let frame = r.u64()?;
    let outcome = match r.u8()? {
        0 => Ok(()),
        1 => Err(Refusal::UnknownAircraft(r.str()?)),
        2 => Err(Refusal::OutOfEnvelope {
            type_code: r.str()?,
            reason: r.str()?,
        }),
        3 => Err(Refusal::UnknownWaypoint(r.str()?)),
        4 => Err(Refusal::InvalidValue(r.str()?)),
        _ => return Err(WireError("unknown outcome")),
    };
    // Trailing bytes are refused as after a command: an acknowledgement is exactly
    // its fields (found by the tg-message fuzz target).
    if !r.finished() {
        return Err(WireError("trailing bytes"));
    }
    Ok(CommandAck {
        id,
        callsign,
        frame,
        outcome,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aircraft_commands_and_acks_round_trip_and_garbage_is_an_error() {
        let plan = FlightPlan::new(
            vec![Waypoint {
                name: "W1".into(),
                lat_deg: 1.5,
                lon_deg: -2.25,
                alt_ft: Some(3000.0),
                speed_kt: None,
            }],
            Some(31_000.0),
        );
        let state = KinematicState {
            lat_rad: 0.1,
            lon_rad: -0.2,
            alt_m: 1000.0 + f64::EPSILON * 1000.0,
            tas_mps: 100.0,
            heading_rad: 1.0,
            vs_mps: -2.0,
            bank_rad: 0.01,
            gs_mps: 99.0,
            track_rad: 1.01,
        };
        let mut a = Aircraft::new("ABC1".into(), 3, plan, state, 0);
        a.guidance.lateral = Lateral::Heading(0.5);
        a.steps = 77;
        let wind = Wind {
            north_mps: 1.0,
            east_mps: -3.0,
        };
        let bytes = encode_assignment(wind, &[a.clone(), a.clone()]);
        assert_eq!(
            decode_assignment(&bytes).unwrap(),
            (wind, vec![a.clone(), a])
        );
        for cut in 0..bytes.len() {
            assert!(decode_assignment(&bytes[..cut]).is_err());
        }
        let c = Command {
            id: 9,
            callsign: "X".into(),
            instruction: Instruction::DirectTo {
                waypoint: "W1".into(),
            },
        };
        assert_eq!(decode_command(&encode_command(&c)).unwrap(), c);
        let ack = CommandAck {
            id: 9,
            callsign: "X".into(),
            frame: 4,
            outcome: Err(Refusal::OutOfEnvelope {
                type_code: "A320".into(),
                reason: "r".into(),
            }),
        };
        assert_eq!(decode_ack(&encode_ack(&ack)).unwrap(), ack);
        assert!(decode_command(&[0xff; 3]).is_err());
        assert!(decode_ack(&[]).is_err());
    }
}

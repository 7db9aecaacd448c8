//! Pilot inputs a station sends to one aircraft (heading, altitude, speed, direct to a
//! waypoint, resume the flight plan), the checks against the type's envelope, and the
//! acknowledgement that says whether and at which frame a command took effect.

use crate::atmosphere::{Isa, MPS_PER_KT, M_PER_FT};
use crate::dynamics::{Aircraft, Lateral};
use crate::perf::Performance;

/// What a command asks of an aircraft.
#[derive(Clone, Debug, PartialEq)]
pub enum Instruction {
    /// Fly a true heading, degrees in [0, 360).
    Heading {
        /// Degrees.
        deg: f64,
    },
    /// Climb or descend to an altitude, ft.
    Altitude {
        /// Feet.
        ft: f64,
    },
    /// Fly a calibrated airspeed, kt.
    Speed {
        /// Knots.
        kt: f64,
    },
    /// Fly direct to a waypoint of the plan and follow the plan from there.
    DirectTo {
        /// The waypoint's name.
        waypoint: String,
    },
    /// Drop every pilot input and follow the flight plan again.
    Resume,
}

/// One command to one aircraft.
#[derive(Clone, Debug, PartialEq)]
pub struct Command {
    /// Chosen by the sender; the acknowledgement repeats it.
    pub id: u64,
    /// The aircraft.
    pub callsign: String,
    /// What to do.
    pub instruction: Instruction,
}

/// Why a command was refused.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum Refusal {
    /// No aircraft of the scenario has this callsign.
    #[error("unknown aircraft {0}")]
    UnknownAircraft(String),
    /// The value is outside what the type can fly.
    #[error("out of the {type_code} envelope: {reason}")]
    OutOfEnvelope {
        /// The aircraft's type.
        type_code: String,
        /// Which limit, with the numbers.
        reason: String,
    },
    /// The plan has no waypoint of that name.
    #[error("no waypoint {0} in the flight plan")]
    UnknownWaypoint(String),
    /// A value that is not a finite number, or a heading outside [0, 360).
    #[error("invalid value: {0}")]
    InvalidValue(String),
}

/// The answer to a command: taken at a frame, or refused with the reason.
#[derive(Clone, Debug, PartialEq)]
pub struct CommandAck {
    /// The command's id.
    pub id: u64,
    /// The aircraft it named.
    pub callsign: String,
    /// The frame at whose step it took effect (or was refused).
    pub frame: u64,
    /// `Ok` when applied.
    pub outcome: Result<(), Refusal>,
}

impl Instruction {
    /// Whether `aircraft` (of type `perf`) can do this.
    pub fn check(&self, perf: &Performance, aircraft: &Aircraft) -> Result<(), Refusal> {
        let envelope = |reason: String| {
            Err(Refusal::OutOfEnvelope {
                type_code: perf.type_code.clone(),
                reason,
            })
        };
        let finite = |v: f64, what: &str| {
            if v.is_finite() {
                Ok(())
            } else {
                Err(Refusal::InvalidValue(format!("{what} {v}")))
            }
        };
        match self {
            Instruction::Heading { deg } => {
                finite(*deg, "heading")?;
                if !(0.0..360.0).contains(deg) {
                    return Err(Refusal::InvalidValue(format!(
                        "heading {deg}° is not in [0, 360)"
                    )));
                }
            }
            Instruction::Altitude { ft } => {
                finite(*ft, "altitude")?;
                if *ft < 0.0 || *ft > perf.ceiling_ft {
                    return envelope(format!(
                        "altitude {ft} ft is outside 0–{} ft",
                        perf.ceiling_ft
                    ));
                }
            }
            Instruction::Speed { kt } => {
                finite(*kt, "speed")?;
                if *kt < perf.min_cas_kt || *kt > perf.vmo_kt {
                    return envelope(format!(
                        "speed {kt} kt is outside {}–{} kt",
                        perf.min_cas_kt, perf.vmo_kt
                    ));
                }
                let isa = Isa::at(aircraft.state.alt_m);
                let mach = isa.mach(isa.cas_to_tas(kt * MPS_PER_KT));
                if mach > perf.mmo {
                    return envelope(format!(
                        "speed {kt} kt is Mach {mach:.3} at {:.0} ft, above Mmo {}",
                        aircraft.state.alt_m / M_PER_FT,
                        perf.mmo
                    ));
                }
            }
            Instruction::DirectTo { waypoint } => {
                if aircraft.plan.index_of(waypoint).is_none() {
                    return Err(Refusal::UnknownWaypoint(waypoint.clone()));
                }
            }
            Instruction::Resume => {}
        }
        Ok(())
    }

    /// Changes the aircraft's guidance; call [`Instruction::check`] first.
    pub fn apply(&self, aircraft: &mut Aircraft) {
        let g = &mut aircraft.guidance;
        match self {
            Instruction::Heading { deg } => g.lateral = Lateral::Heading(deg.to_radians()),
            Instruction::Altitude { ft } => g.altitude_ft = Some(*ft),
            Instruction::Speed { kt } => g.speed_kt = Some(*kt),
            Instruction::DirectTo { waypoint } => {
                if let Some(i) = aircraft.plan.index_of(waypoint) {
                    g.active = i;
                    g.lateral = Lateral::FlightPlan;
                }
            }
            Instruction::Resume => {
                g.lateral = Lateral::FlightPlan;
                g.altitude_ft = None;
                g.speed_kt = None;
            }
        }
    }

    /// Parses the command line's form: `heading 270`, `altitude 12000`, `speed 250`,
    /// `direct NAME`, `resume`.
    pub fn parse(text: &str) -> Result<Instruction, String> {
        let mut words = text.split_whitespace();
        let verb = words.next().ok_or("an empty command")?;
        let arg = words.next();
        let num = |what: &str| -> Result<f64, String> {
            let a = arg.ok_or(format!("`{verb}` needs a {what}"))?;
            a.parse().map_err(|_| format!("`{a}` is not a {what}"))
        };
        let instruction = match verb {
            "heading" => Instruction::Heading {
                deg: num("number of degrees")?,
            },
            "altitude" => Instruction::Altitude {
                ft: num("number of feet")?,
            },
            "speed" => Instruction::Speed {
                kt: num("number of knots")?,
            },
            "direct" => Instruction::DirectTo {
                waypoint: arg.ok_or("`direct` needs a waypoint name")?.to_string(),
            },
            "resume" => Instruction::Resume,
            other => {
                return Err(format!(
                    "unknown command `{other}` (heading, altitude, speed, direct, resume)"
                ))
            }
        };
        let extra = match instruction {
            Instruction::Resume => arg,
            _ => words.next(),
        };
        match extra {
            Some(extra) => Err(format!("unexpected `{extra}` after the command")),
            None => Ok(instruction),
        }
    }
}

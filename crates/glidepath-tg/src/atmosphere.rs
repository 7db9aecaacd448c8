//! The ISA standard atmosphere (troposphere and lower stratosphere) and the airspeed
//! conversions the dynamics fly by: calibrated airspeed (what speed limits and
//! commands are given in), Mach number and true airspeed.

/// Sea-level pressure, Pa.
const P0_PA: f64 = 101_325.0;
/// Sea-level temperature, K.
const T0_K: f64 = 288.15;
/// Specific gas constant of dry air, J/(kg·K).
const R_AIR: f64 = 287.052_87;
/// Ratio of specific heats of air.
const GAMMA: f64 = 1.4;
/// Standard gravity, m/s².
pub const G0_MPS2: f64 = 9.806_65;
/// Temperature lapse rate in the troposphere, K/m.
const LAPSE_K_PER_M: f64 = 0.0065;
/// Tropopause altitude, m.
const TROPOPAUSE_M: f64 = 11_000.0;

/// Metres per foot.
pub const M_PER_FT: f64 = 0.3048;
/// Metres per second per knot.
pub const MPS_PER_KT: f64 = 1852.0 / 3600.0;
/// Metres per nautical mile.
pub const M_PER_NM: f64 = 1852.0;

/// Temperature and pressure at a geopotential altitude.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Isa {
    /// Temperature, K.
    pub temperature_k: f64,
    /// Static pressure, Pa.
    pub pressure_pa: f64,
}

impl Isa {
    /// The standard atmosphere at `alt_m` metres (clamped to the lower stratosphere's
    /// top at 20 km, above any aircraft this crate flies).
    pub fn at(alt_m: f64) -> Isa {
        let h = alt_m.clamp(-1_000.0, 20_000.0);
        if h <= TROPOPAUSE_M {
            let t = T0_K - LAPSE_K_PER_M * h;
            let exponent = G0_MPS2 / (LAPSE_K_PER_M * R_AIR);
            Isa {
                temperature_k: t,
                pressure_pa: P0_PA * (t / T0_K).powf(exponent),
            }
        } else {
            let t11 = T0_K - LAPSE_K_PER_M * TROPOPAUSE_M;
            let p11 = P0_PA * (t11 / T0_K).powf(G0_MPS2 / (LAPSE_K_PER_M * R_AIR));
            Isa {
                temperature_k: t11,
                pressure_pa: p11 * (-G0_MPS2 / (R_AIR * t11) * (h - TROPOPAUSE_M)).exp(),
            }
        }
    }

    /// Speed of sound, m/s.
    pub fn sound_speed_mps(&self) -> f64 {
        (GAMMA * R_AIR * self.temperature_k).sqrt()
    }

    /// True airspeed (m/s) for a calibrated airspeed (m/s), compressible flow.
    pub fn cas_to_tas(&self, cas_mps: f64) -> f64 {
        let a0 = (GAMMA * R_AIR * T0_K).sqrt();
        let qc = P0_PA * ((1.0 + 0.2 * (cas_mps / a0).powi(2)).powf(3.5) - 1.0);
        let mach = (5.0 * ((qc / self.pressure_pa + 1.0).powf(2.0 / 7.0) - 1.0)).sqrt();
        mach * self.sound_speed_mps()
    }

    /// Calibrated airspeed (m/s) for a true airspeed (m/s).
    pub fn tas_to_cas(&self, tas_mps: f64) -> f64 {
        let a0 = (GAMMA * R_AIR * T0_K).sqrt();
        let mach = tas_mps / self.sound_speed_mps();
        let qc = self.pressure_pa * ((1.0 + 0.2 * mach * mach).powf(3.5) - 1.0);
        a0 * (5.0 * ((qc / P0_PA + 1.0).powf(2.0 / 7.0) - 1.0)).sqrt()
    }

    /// Mach number of a true airspeed (m/s).
    pub fn mach(&self, tas_mps: f64) -> f64 {
        tas_mps / self.sound_speed_mps()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sea_level_cas_is_tas_and_conversions_invert() {
        let sl = Isa::at(0.0);
        assert!((sl.cas_to_tas(100.0) - 100.0).abs() < 1e-9);
        // 250 kt CAS at FL350 is about 434 kt TAS (Mach 0.75): textbook values.
        let fl350 = Isa::at(35_000.0 * M_PER_FT);
        let tas_kt = fl350.cas_to_tas(250.0 * MPS_PER_KT) / MPS_PER_KT;
        assert!((425.0..445.0).contains(&tas_kt), "{tas_kt}");
        let back = fl350.tas_to_cas(fl350.cas_to_tas(123.4));
        assert!((back - 123.4).abs() < 1e-9);
        // The tropopause: 216.65 K and about 22.6 kPa.
        let trop = Isa::at(11_000.0);
        assert!((trop.temperature_k - 216.65).abs() < 1e-9);
        assert!(
            (trop.pressure_pa - 22_632.0).abs() < 5.0,
            "{}",
            trop.pressure_pa
        );
    }
}

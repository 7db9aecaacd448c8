//! Doubles for the SNDEM number tests: a small deterministic generator and values of
//! every shape the writer and reader must treat alike (shared by the unit tests in
//! `src/track/` and by `tests/track_oracle.rs`).

/// Exact powers of ten as doubles (the writer's own table, repeated so this file
/// stands alone).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// SplitMix64: a small deterministic generator for the million-value sweep.
pub struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A double of one of several shapes: any bit pattern, short decimals like track
/// fields, integers, values at powers of ten and their neighbours, tiny and huge
/// exponents, subnormals, zeros and the specials.
pub fn random_double(r: &mut Rng) -> f64 {
    let sign = if r.next() & 1 == 0 { 1.0 } else { -1.0 };
    match r.below(10) {
        0 | 1 => f64::from_bits(r.next()),
        2 | 3 => {
            // A decimal of 1..=17 digits at a scale around the plain range.
            let digits = 1 + r.below(17) as u32;
            let m = r.below(10u64.pow(digits)) as f64;
            let e = r.below(40) as i32 - 25;
            sign * m * 10f64.powi(e)
        }
        4 => sign * (r.below(1 << 53) as f64) / POW10[r.below(23) as usize],
        5 => sign * (r.below(1 << 53) as f64) * POW10[r.below(23) as usize],
        6 => {
            // Neighbours of powers of ten, where the notation and digit count change.
            let p = 10f64.powi(r.below(60) as i32 - 30);
            let steps = r.below(7) as i64 - 3;
            sign * f64::from_bits((p.to_bits() as i64 + steps) as u64)
        }
        7 => sign * f64::from_bits(r.below(1 << 52) + 1), // subnormal
        8 => sign * (r.next() as i64 as f64),
        _ => [
            0.0,
            -0.0,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::EPSILON,
            1e7,
            1e-3,
            9_999_999.999_999_998,
            0.000_999_999_999_999_999_9,
        ][r.below(13) as usize],
    }
}

//! The SNDEM JSON writer: a track field for field in Table 4.1's order, numbers in
//! Java's `Double.toString` format, without allocating when the buffer has room.

use super::{Track, POW10};

impl Track {
    /// Writes the SNDEM JSON payload (without the key).
    ///
    /// Makes no allocation when `out` has room (about 220 bytes for a typical track).
    pub fn write_sndem_json(&self, out: &mut Vec<u8>) {
        out.reserve(
            self.vid.len() + self.meta.src.len() + self.meta.ver.len() + self.meta.run.len() + 256,
        );
        out.extend_from_slice(b"{\"vid\":");
        write_json_string(out, &self.vid);
        out.extend_from_slice(b",\"latDeg\":");
        write_java_double(out, self.lat_deg);
        out.extend_from_slice(b",\"lonDeg\":");
        write_java_double(out, self.lon_deg);
        out.extend_from_slice(b",\"altFt\":");
        write_java_double(out, self.alt_ft);
        out.extend_from_slice(b",\"time\":");
        write_i64(out, self.time);
        out.extend_from_slice(b",\"gsKt\":");
        write_java_double(out, self.gs_kt);
        out.extend_from_slice(b",\"crsDeg\":");
        write_java_double(out, self.crs_deg);
        out.extend_from_slice(b",\"vsFpm\":");
        write_java_double(out, self.vs_fpm);
        out.extend_from_slice(b",\"meta\":{\"src\":");
        write_json_string(out, &self.meta.src);
        out.extend_from_slice(b",\"ver\":");
        write_json_string(out, &self.meta.ver);
        out.extend_from_slice(b",\"run\":");
        write_json_string(out, &self.meta.run);
        out.extend_from_slice(b",\"tpub\":");
        write_i64(out, self.meta.tpub);
        out.extend_from_slice(b"}}");
    }

    /// The SNDEM JSON payload as a string.
    pub fn to_sndem_json(&self) -> String {
        let mut out = Vec::with_capacity(224);
        self.write_sndem_json(&mut out);
        String::from_utf8(out).expect("JSON output is UTF-8")
    }
}

/// Writes a double as Java's `Double.toString` does: at least one fraction digit,
/// plain notation for magnitudes in [1e-3, 1e7), `d.dddE±n` otherwise, and `NaN`,
/// `Infinity`, `-Infinity`.
///
/// The digits are the shortest that read back as `x` (what Rust's `Display` gives).
/// Most values are written without allocating through an exact fast path (a decimal of
/// at most 15 significant digits that reads back as `x` is the only such decimal, so
/// it is the shortest); the rest go through `Display` / `LowerExp` into a stack buffer.
pub fn write_java_double(out: &mut Vec<u8>, x: f64) {
    if x.is_nan() {
        out.extend_from_slice(b"NaN");
        return;
    }
    if x.is_infinite() {
        out.extend_from_slice(if x > 0.0 {
            b"Infinity" as &[u8]
        } else {
            b"-Infinity"
        });
        return;
    }
    if x == 0.0 {
        out.extend_from_slice(if x.is_sign_negative() {
            b"-0.0" as &[u8]
        } else {
            b"0.0"
        });
        return;
    }
    let ax = x.abs();
    let plain = (1e-3..1e7).contains(&ax);
    match shortest_decimal(ax) {
        Some((m, e10)) => {
            if x.is_sign_negative() {
                out.push(b'-');
            }
            let mut buf = [0u8; 20];
            let digits = u64_digits(m, &mut buf);
            if plain {
                write_plain(out, digits, e10);
            } else {
                write_sci(out, digits, e10);
            }
        }
        None => write_java_double_fmt(out, x, plain),
    }
}

/// For a finite positive `ax`, a decimal `m × 10^e10` with `m` of at most 15 digits
/// (and no trailing zero) that reads back exactly as `ax`, when there is one that can
/// be checked with a single correctly rounded operation.
///
/// Because 10^15 < 2^52, two different decimals of at most 15 significant digits
/// never round to the same double: the decimal found is the only one of 15 digits or
/// fewer, so it is exactly the shortest round-trip representation that `Display`
/// gives. The check `m / 10^d == ax` (or `m × 10^k == ax`) is exact because `m` and
/// `10^d` are exactly representable and IEEE division / multiplication round
/// correctly, like decimal-to-double parsing does.
fn shortest_decimal(ax: f64) -> Option<(u64, i32)> {
    const LIMIT: f64 = 1e15;
    let (mut m, mut e10) = if ax < LIMIT {
        let mut found = None;
        for (d, &p) in POW10.iter().enumerate() {
            let s = ax * p;
            if s >= LIMIT {
                break;
            }
            let r = s.round();
            // If `r × 10^-d` reads back as `ax`, `s` is within 2^-52·s of `r` (half an
            // ulp of `ax` scaled, plus the rounding of `s`): skip the division otherwise.
            if (s - r).abs() <= s * 1e-15 && r / p == ax {
                found = Some((r as u64, -(d as i32)));
                break;
            }
        }
        found?
    } else {
        // Large values: ax = m × 10^k with k ≥ 1.
        let mut found = None;
        for (k, &p) in POW10.iter().enumerate().skip(1) {
            let s = ax / p;
            if s >= LIMIT {
                continue;
            }
            let r = s.round();
            if r * p == ax {
                found = Some((r as u64, k as i32));
            }
            break;
        }
        found?
    };
    if m == 0 {
        return None;
    }
    while m % 10 == 0 {
        m /= 10;
        e10 += 1;
    }
    Some((m, e10))
}

/// The decimal digits of `m`, written at the end of `buf`.
fn u64_digits(mut m: u64, buf: &mut [u8; 20]) -> &[u8] {
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (m % 10) as u8;
        m /= 10;
        if m == 0 {
            break;
        }
    }
    &buf[i..]
}

/// `digits × 10^e10` in plain notation with at least one fraction digit, as
/// `Display` writes it followed by the `.0` Java adds to whole numbers.
fn write_plain(out: &mut Vec<u8>, digits: &[u8], e10: i32) {
    if e10 >= 0 {
        out.extend_from_slice(digits);
        for _ in 0..e10 {
            out.push(b'0');
        }
        out.extend_from_slice(b".0");
    } else {
        let frac = e10.unsigned_abs() as usize;
        if digits.len() > frac {
            let (int, rest) = digits.split_at(digits.len() - frac);
            out.extend_from_slice(int);
            out.push(b'.');
            out.extend_from_slice(rest);
        } else {
            out.extend_from_slice(b"0.");
            for _ in 0..frac - digits.len() {
                out.push(b'0');
            }
            out.extend_from_slice(digits);
        }
    }
}

/// `digits × 10^e10` as `d.dddE±n` (Java's computerized scientific notation).
fn write_sci(out: &mut Vec<u8>, digits: &[u8], e10: i32) {
    out.push(digits[0]);
    out.push(b'.');
    if digits.len() > 1 {
        out.extend_from_slice(&digits[1..]);
    } else {
        out.push(b'0');
    }
    out.push(b'E');
    write_i64(out, i64::from(e10) + digits.len() as i64 - 1);
}

/// The general path of [`write_java_double`] for finite non-zero `x`: `Display` or
/// `LowerExp` into a stack buffer, then Java's adjustments.
#[cold]
fn write_java_double_fmt(out: &mut Vec<u8>, x: f64, plain: bool) {
    use std::fmt::Write as _;
    let mut s = StackStr::default();
    if plain {
        write!(s, "{x}").expect("a double fits the buffer");
        let s = s.as_str();
        out.extend_from_slice(s.as_bytes());
        if !s.contains('.') {
            out.extend_from_slice(b".0");
        }
    } else {
        write!(s, "{x:e}").expect("a double fits the buffer");
        let (mantissa, exp) = s
            .as_str()
            .split_once('e')
            .expect("`{:e}` always has an exponent");
        out.extend_from_slice(mantissa.as_bytes());
        if !mantissa.contains('.') {
            out.extend_from_slice(b".0");
        }
        out.push(b'E');
        out.extend_from_slice(exp.as_bytes());
    }
}

/// A small fixed-capacity string for formatting one number without allocating.
struct StackStr {
    buf: [u8; 64],
    len: usize,
}

impl Default for StackStr {
    fn default() -> Self {
        StackStr {
            buf: [0; 64],
            len: 0,
        }
    }
}

impl StackStr {
    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).expect("only whole `str`s are written")
    }
}

impl std::fmt::Write for StackStr {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > self.buf.len() {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes an integer in decimal without allocating.
fn write_i64(out: &mut Vec<u8>, v: i64) {
    if v < 0 {
        out.push(b'-');
    }
    let mut buf = [0u8; 20];
    out.extend_from_slice(u64_digits(v.unsigned_abs(), &mut buf));
}

/// Whether a byte must be escaped in a JSON string as written here.
#[inline]
fn needs_escape(b: u8) -> bool {
    b < 0x20 || b == b'"' || b == b'\\'
}

fn write_json_string(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        if !needs_escape(b) {
            continue;
        }
        out.extend_from_slice(&bytes[start..i]);
        start = i + 1;
        match b {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.extend_from_slice(b"\\u00");
                out.push(HEX[usize::from(b >> 4)]);
                out.push(HEX[usize::from(b & 0xf)]);
            }
        }
    }
    out.extend_from_slice(&bytes[start..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::track::test_doubles::{random_double, Rng};

    /// The fast path must carry the common shapes, not just be correct (that it writes
    /// what the old writer wrote is `tests/track_oracle.rs`'s job, on the same values).
    #[test]
    fn fast_path_takes_most_random_values() {
        let mut r = Rng(0x5EED_0FD0_0B1E);
        let mut fast = 0u32;
        for _ in 0..1_000_000 {
            let x = random_double(&mut r);
            if x.is_finite() && x != 0.0 && shortest_decimal(x.abs()).is_some() {
                fast += 1;
            }
        }
        assert!(fast > 150_000, "fast path took {fast} of 1,000,000");
    }

    #[test]
    fn fast_path_takes_every_track_like_value() {
        let mut r = Rng(42);
        for _ in 0..200_000 {
            // Coordinates with 5 decimals, altitudes, speeds, as the TestBed writes them.
            let lat = (r.below(18_000_000) as f64 - 9_000_000.0) / 1e5;
            let alt = r.below(600_000) as f64 / 10.0;
            let x = lat + alt * 0.0;
            for v in [x, alt, -alt, (lat * 1e5).round() / 1e5] {
                assert!(
                    v == 0.0 || shortest_decimal(v.abs()).is_some(),
                    "{v} missed the fast path"
                );
            }
        }
    }

    #[test]
    fn integers_are_written_like_to_string() {
        for v in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            1_481_068_800_000,
            i64::MAX,
            i64::MIN,
            i64::MIN + 1,
        ] {
            let mut out = Vec::new();
            write_i64(&mut out, v);
            assert_eq!(out, v.to_string().into_bytes());
        }
    }
}

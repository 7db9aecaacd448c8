//! Unsigned LEB128 varints, the one implementation for every glidepath layout: the
//! envelope (`docs/wire-format.md`), and the codec's bundles, chain frames and track
//! messages (`glidepath_codec` uses this module).
//!
//! Seven bits per byte, least significant group first, the high bit set on every byte
//! but the last. [`get`] accepts only the shortest form, so every value has exactly
//! one encoding; [`get_any_form`] also accepts longer forms, as the codec's layouts
//! always have. Signed values are zigzag-mapped first ([`zigzag_encode`]) so that
//! small magnitudes stay short.

/// The most bytes a `u64` takes (`ceil(64 / 7)`).
pub const MAX_LEN: usize = 10;

/// How many bytes `value` takes as a varint (1 to 10).
#[inline]
pub fn len(value: u64) -> usize {
    // Significant bits, at least one so that zero takes one byte.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Appends `value` to `out`.
#[inline]
pub fn put(out: &mut impl bytes::BufMut, mut value: u64) {
    while value >= 0x80 {
        out.put_u8(value as u8 | 0x80);
        value >>= 7;
    }
    out.put_u8(value as u8);
}

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The input ended before the last byte (one without the high bit).
    Truncated,
    /// More than 64 bits: an eleventh byte, or a tenth byte above 1.
    Overflow,
    /// A longer form than needed (the last byte is zero and is not the only byte).
    NonCanonical,
}

/// Reads a varint in its shortest form from the front of `input`; returns the value
/// and the bytes used.
#[inline]
pub fn get(input: &[u8]) -> Result<(u64, usize), VarintError> {
    // Fast path: most handles, counts and lengths fit in one byte.
    match input.first() {
        None => return Err(VarintError::Truncated),
        Some(&b) if b < 0x80 => return Ok((u64::from(b), 1)),
        Some(_) => {}
    }
    match scan(input)? {
        (value, used, true) => Ok((value, used)),
        (_, _, false) => Err(VarintError::NonCanonical),
    }
}

/// Reads a varint from the front of `input` like [`get`], but also accepts a longer
/// form than needed (`80 00` is 0): never [`VarintError::NonCanonical`]. The codec's
/// bundles, chain frames and track messages have always been read this way.
#[inline]
pub fn get_any_form(input: &[u8]) -> Result<(u64, usize), VarintError> {
    scan(input).map(|(value, used, _)| (value, used))
}

/// Reads a varint of any length up to [`MAX_LEN`]; returns the value, the bytes used
/// and whether that was the shortest form.
#[inline(always)]
fn scan(input: &[u8]) -> Result<(u64, usize, bool), VarintError> {
    let mut value = 0u64;
    for i in 0..MAX_LEN {
        let Some(&b) = input.get(i) else {
            return Err(VarintError::Truncated);
        };
        // The tenth byte carries bit 63 only.
        if i == MAX_LEN - 1 && b > 1 {
            return Err(VarintError::Overflow);
        }
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            // A zero last byte after others adds nothing: a longer form than needed.
            return Ok((value, i + 1, b != 0 || i == 0));
        }
    }
    // Ten bytes all with the high bit set: the tenth was > 1 and returned above.
    Err(VarintError::Overflow)
}

/// Maps a signed integer to an unsigned one so that small magnitudes stay small
/// (0, -1, 1, -2, … become 0, 1, 2, 3, …).
#[inline]
pub fn zigzag_encode(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag_encode`].
#[inline]
pub fn zigzag_decode(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc(v: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put(&mut out, v);
        out
    }

    #[test]
    fn known_encodings() {
        assert_eq!(enc(0), [0x00]);
        assert_eq!(enc(1), [0x01]);
        assert_eq!(enc(127), [0x7f]);
        assert_eq!(enc(128), [0x80, 0x01]);
        assert_eq!(enc(300), [0xac, 0x02]);
        assert_eq!(enc(u64::from(u32::MAX)), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(
            enc(u64::MAX),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
    }

    #[test]
    fn round_trip_and_length_at_every_boundary() {
        for shift in 0..64 {
            for v in [(1u64 << shift) - 1, 1u64 << shift, (1u64 << shift) + 1] {
                let e = enc(v);
                assert_eq!(e.len(), len(v), "{v}");
                assert_eq!(get(&e), Ok((v, e.len())), "{v}");
            }
        }
        assert_eq!(get(&enc(u64::MAX)), Ok((u64::MAX, 10)));
    }

    #[test]
    fn rejects_malformed() {
        assert_eq!(get(&[]), Err(VarintError::Truncated));
        assert_eq!(get(&[0x80]), Err(VarintError::Truncated));
        assert_eq!(get(&[0x80, 0x00]), Err(VarintError::NonCanonical));
        assert_eq!(get(&[0xff, 0x80, 0x00]), Err(VarintError::NonCanonical));
        // 2^64: tenth byte 2.
        assert_eq!(
            get(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02]),
            Err(VarintError::Overflow)
        );
        // Eleven bytes.
        assert_eq!(get(&[0xff; 11]), Err(VarintError::Overflow));
    }

    #[test]
    fn any_form_accepts_longer_forms_and_nothing_else() {
        assert_eq!(get_any_form(&[0x80, 0x00]), Ok((0, 2)));
        assert_eq!(get_any_form(&[0xff, 0x80, 0x00]), Ok((127, 3)));
        assert_eq!(
            get_any_form(&[0x80; 9].iter().chain(&[0x00]).copied().collect::<Vec<_>>()),
            Ok((0, 10))
        );
        assert_eq!(get_any_form(&[]), Err(VarintError::Truncated));
        assert_eq!(get_any_form(&[0x80]), Err(VarintError::Truncated));
        assert_eq!(get_any_form(&[0xff; 10]), Err(VarintError::Overflow));
        assert_eq!(
            get_any_form(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]),
            Err(VarintError::Overflow)
        );
        for v in [0u64, 1, 127, 128, 300, u64::from(u32::MAX), u64::MAX] {
            let e = enc(v);
            assert_eq!(get_any_form(&e), Ok((v, e.len())));
            assert_eq!(get_any_form(&e[..e.len() - 1]), Err(VarintError::Truncated));
        }
    }

    #[test]
    fn zigzag_round_trips() {
        assert_eq!(zigzag_encode(0), 0);
        assert_eq!(zigzag_encode(-1), 1);
        assert_eq!(zigzag_encode(1), 2);
        assert_eq!(zigzag_encode(-2), 3);
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -1_603_483_450_633] {
            assert_eq!(zigzag_decode(zigzag_encode(v)), v);
        }
    }
}

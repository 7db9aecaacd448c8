//! Unsigned LEB128 varints: seven bits per byte, least significant group first, the
//! high bit set on every byte but the last. Only the shortest form is accepted, so
//! every value has exactly one encoding.

/// The most bytes a `u64` takes (`ceil(64 / 7)`).
pub(crate) const MAX_LEN: usize = 10;

/// How many bytes `value` takes as a varint (1 to 10).
#[inline]
pub(crate) fn len(value: u64) -> usize {
    // Significant bits, at least one so that zero takes one byte.
    let bits = 64 - (value | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

/// Appends `value` to `out`.
#[inline]
pub(crate) fn put(out: &mut impl bytes::BufMut, mut value: u64) {
    while value >= 0x80 {
        out.put_u8(value as u8 | 0x80);
        value >>= 7;
    }
    out.put_u8(value as u8);
}

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VarintError {
    /// The input ended before the last byte (one without the high bit).
    Truncated,
    /// More than 64 bits: an eleventh byte, or a tenth byte above 1.
    Overflow,
    /// A longer form than needed (the last byte is zero and is not the only byte).
    NonCanonical,
}

/// Reads a varint from the front of `input`; returns the value and the bytes used.
#[inline]
pub(crate) fn get(input: &[u8]) -> Result<(u64, usize), VarintError> {
    // Fast path: most handles, counts and lengths fit in one byte.
    match input.first() {
        None => return Err(VarintError::Truncated),
        Some(&b) if b < 0x80 => return Ok((u64::from(b), 1)),
        Some(_) => {}
    }
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
            if b == 0 && i > 0 {
                return Err(VarintError::NonCanonical);
            }
            return Ok((value, i + 1));
        }
    }
    // Ten bytes all with the high bit set: the tenth was > 1 and returned above.
    Err(VarintError::Overflow)
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
}

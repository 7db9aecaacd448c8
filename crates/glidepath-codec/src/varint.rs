//! Unsigned LEB128 variable-length integers and zigzag mapping for signed values.

/// Appends `v` as an unsigned LEB128 varint (1 to 10 bytes).
pub fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a varint from the front of `input`; returns the value and the bytes used, or
/// `None` when the input ends early or the value does not fit 64 bits.
pub fn read_varint(input: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    for (i, b) in input.iter().enumerate().take(10) {
        let low = (b & 0x7f) as u64;
        if i == 9 && low > 1 {
            return None;
        }
        v |= low << (7 * i);
        if b & 0x80 == 0 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Maps a signed integer to an unsigned one so small magnitudes stay small.
pub fn zigzag_encode(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)) as u64
}

/// The inverse of [`zigzag_encode`].
pub fn zigzag_decode(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_overflow() {
        for v in [0u64, 1, 127, 128, 300, u32::MAX as u64, u64::MAX] {
            let mut b = Vec::new();
            write_varint(&mut b, v);
            assert_eq!(read_varint(&b), Some((v, b.len())));
            assert_eq!(read_varint(&b[..b.len() - 1]), None);
        }
        assert_eq!(read_varint(&[0xff; 10]), None);
        assert_eq!(
            read_varint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02]),
            None
        );
        for v in [0i64, -1, 1, i64::MIN, i64::MAX, -1_603_483_450_633] {
            assert_eq!(zigzag_decode(zigzag_encode(v)), v);
        }
    }
}

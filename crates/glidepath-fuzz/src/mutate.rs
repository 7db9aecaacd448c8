//! Byte-level mutations of a valid input, seeded and reproducible: the classic moves
//! of a mutation fuzzer (bit flips, interesting values, range deletion, duplication
//! and insertion, splicing with another corpus entry, truncation), several per case.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// Values that often sit on a boundary of a length, a count or a tag.
const INTERESTING: [u8; 10] = [0, 1, 0x7f, 0x80, 0xff, 0xfe, 0x40, b'<', b'"', b'='];

/// One mutated copy of `input`, drawing `other` (another corpus entry) for splices.
pub fn mutate(rng: &mut ChaCha8Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut out = input.to_vec();
    let moves = 1 + rng.gen_range(0..4);
    for _ in 0..moves {
        apply(rng, &mut out, other);
    }
    out
}

fn apply(rng: &mut ChaCha8Rng, out: &mut Vec<u8>, other: &[u8]) {
    let len = out.len();
    match rng.gen_range(0..9) {
        // Flip a bit.
        0 if len > 0 => {
            let i = rng.gen_range(0..len);
            out[i] ^= 1 << rng.gen_range(0..8);
        }
        // Set a byte to an interesting value.
        1 if len > 0 => {
            let i = rng.gen_range(0..len);
            out[i] = INTERESTING[rng.gen_range(0..INTERESTING.len())];
        }
        // Set a byte to anything.
        2 if len > 0 => {
            let i = rng.gen_range(0..len);
            out[i] = rng.gen();
        }
        // Delete a range.
        3 if len > 1 => {
            let a = rng.gen_range(0..len);
            let b = (a + 1 + rng.gen_range(0..16)).min(len);
            out.drain(a..b);
        }
        // Duplicate a range in place.
        4 if len > 0 => {
            let a = rng.gen_range(0..len);
            let b = (a + 1 + rng.gen_range(0..32)).min(len);
            let chunk: Vec<u8> = out[a..b].to_vec();
            let at = rng.gen_range(0..=out.len());
            out.splice(at..at, chunk);
        }
        // Insert random bytes.
        5 => {
            let at = rng.gen_range(0..=len);
            let n = 1 + rng.gen_range(0..8);
            let bytes: Vec<u8> = (0..n).map(|_| rng.gen()).collect();
            out.splice(at..at, bytes);
        }
        // Splice: our head, the other's tail.
        6 if !other.is_empty() => {
            let a = rng.gen_range(0..=len);
            let b = rng.gen_range(0..other.len());
            out.truncate(a);
            out.extend_from_slice(&other[b..]);
        }
        // Truncate.
        7 if len > 0 => {
            out.truncate(rng.gen_range(0..len));
        }
        // Overwrite 2, 4 or 8 bytes with an extreme little- or big-endian number.
        _ if len >= 8 => {
            let i = rng.gen_range(0..=len - 8);
            let v: u64 = match rng.gen_range(0..4) {
                0 => u64::MAX,
                1 => 0,
                2 => u64::from(u32::MAX),
                _ => 1 << rng.gen_range(0..64),
            };
            let bytes = if rng.gen() {
                v.to_le_bytes()
            } else {
                v.to_be_bytes()
            };
            let n = [2, 4, 8][rng.gen_range(0..3)];
            out[i..i + n].copy_from_slice(&bytes[..n]);
        }
        _ => {
            out.push(rng.gen());
        }
    }
}

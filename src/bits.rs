//! Bytes packed into the bits of words: the flags of 64 pixels tested, compared and
//! combined as one word.

/// Multiplier that gathers the low bit of each of a word's eight bytes into its top
/// byte, the first byte's bit lowest (no carry reaches past the top byte).
const GATHER: u64 = 0x0102_0408_1020_4080;

/// The bytes of `flags` (each 0 or 1) as the bits of a word, the first the lowest.
#[inline(always)]
pub(crate) fn pack_flags(flags: &[u8; 64]) -> u64 {
    flags
        .chunks_exact(8)
        .enumerate()
        .fold(0, |bits, (c, eight)| {
            let eight = u64::from_le_bytes(eight.try_into().expect("eight bytes"));
            bits | (eight.wrapping_mul(GATHER) >> 56) << (8 * c)
        })
}

/// Which of `bytes` (at most 64) are not zero, as the bits of a word, the first the
/// lowest.
#[inline(always)]
pub(crate) fn pack_nonzero(bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() <= 64);
    const LOW: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    let mut chunks = bytes.chunks_exact(8);
    let mut bits = 0;
    for (c, eight) in chunks.by_ref().enumerate() {
        let x = u64::from_le_bytes(eight.try_into().expect("eight bytes"));
        // a byte's top bit is set where the byte is not zero
        let set = (((x & LOW) + LOW) | x) >> 7 & 0x0101_0101_0101_0101;
        bits |= (set.wrapping_mul(GATHER) >> 56) << (8 * c);
    }
    let done = bytes.len() - chunks.remainder().len();
    for (i, &b) in chunks.remainder().iter().enumerate() {
        bits |= u64::from(b != 0) << (done + i);
    }
    bits
}

/// [`pack_nonzero`] of 64 bytes, 16 compared at once where the machine has SSE2
/// (every x86-64 does).
#[inline(always)]
pub(crate) fn pack_nonzero64(bytes: &[u8; 64]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{
            _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_setzero_si128,
        };
        let mut bits = 0;
        for (i, sixteen) in bytes.chunks_exact(16).enumerate() {
            // a bit per byte, set where the byte is zero
            // SAFETY: SSE2 is part of every x86-64; the unaligned load reads the 16
            // bytes of `sixteen`.
            let zero = unsafe {
                let v = _mm_loadu_si128(sixteen.as_ptr().cast());
                _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_setzero_si128()))
            } as u16;
            bits |= u64::from(!zero) << (16 * i);
        }
        bits
    }
    #[cfg(not(target_arch = "x86_64"))]
    pack_nonzero(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_bits::lcg;

    fn by_hand(bytes: &[u8]) -> u64 {
        (bytes.iter().enumerate()).fold(0, |b, (i, &v)| b | u64::from(v != 0) << i)
    }

    #[test]
    fn flags_pack_into_bits_in_order() {
        let mut bits = lcg(7);
        for _ in 0..200 {
            let flags: [u8; 64] = std::array::from_fn(|_| u8::from(bits() >> 62 == 0));
            assert_eq!(pack_flags(&flags), by_hand(&flags));
        }
    }

    #[test]
    fn sixty_four_bytes_pack_as_any_length_does() {
        let mut bits = lcg(13);
        for _ in 0..500 {
            let bytes: [u8; 64] = std::array::from_fn(|_| match bits() >> 62 {
                0 | 1 => 0,
                2 => 255,
                _ => (bits() >> 56) as u8,
            });
            assert_eq!(pack_nonzero64(&bytes), by_hand(&bytes), "{bytes:?}");
        }
    }

    #[test]
    fn any_nonzero_byte_packs_as_a_set_bit_at_any_length() {
        let mut bits = lcg(11);
        for len in 0..=64 {
            for _ in 0..20 {
                // zeros, ones, 255s and other values, each common
                let bytes: Vec<u8> = (0..len)
                    .map(|_| match bits() >> 61 {
                        0..=3 => 0,
                        4 => 1,
                        5 => 128,
                        6 => 255,
                        _ => (bits() >> 56) as u8,
                    })
                    .collect();
                assert_eq!(pack_nonzero(&bytes), by_hand(&bytes), "{bytes:?}");
            }
        }
    }
}

//! Deterministic pseudo-random bits for unit tests: Knuth's MMIX linear congruential
//! generator, so that a failing case comes again with the same data.

/// The generator's states from `seed` on, one per call (the high bits are the random
/// ones: take them with a shift).
pub(crate) fn lcg(mut seed: u64) -> impl FnMut() -> u64 {
    move || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        seed
    }
}

/// A `w`×`h` frame of random colours drawn from `bits` (index 0, time 0).
pub(crate) fn random_frame(
    bits: &mut impl FnMut() -> u64,
    w: u32,
    h: u32,
) -> crate::capture::Frame {
    crate::capture::Frame {
        width: w,
        height: h,
        rgb: (0..w * h * 3).map(|_| (bits() >> 56) as u8).collect(),
        timestamp: std::time::Duration::ZERO,
        index: 0,
    }
}

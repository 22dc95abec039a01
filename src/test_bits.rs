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

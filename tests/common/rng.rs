//! Small deterministic random generators, so every failure is reproducible from its seed.
//! Two algorithms stay because tests name particular instances by their seeds: the
//! property tests' recorded regressions were drawn with [`Rng`], and the GPU tests'
//! schedule checks were written against the grids [`XorShift`] draws.

/// splitmix64: the generator of the property tests and of most instances.
pub struct Rng(pub u64);

impl Rng {
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// A capacity from a mix that stresses solvers: many zeros, small values,
    /// medium values and values near `i32::MAX`.
    pub fn capacity(&mut self) -> i32 {
        match self.below(10) {
            0..=3 => 0,
            4..=6 => 1 + self.below(9) as i32,
            7..=8 => self.below(1000) as i32,
            _ => i32::MAX - self.below(4) as i32,
        }
    }
}

/// xorshift64*: the generator of the GPU tests' grids.
pub struct XorShift(pub u64);

impl XorShift {
    /// Next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

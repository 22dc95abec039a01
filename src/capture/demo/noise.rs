//! Deterministic pseudo-random numbers and value noise for the demo scene: hashes of
//! integer coordinates, so every pixel of every frame follows from the seed alone.

/// SplitMix64 finalizer: a fast, well-mixed 64-bit hash.
pub fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Hash of a seed and two integer coordinates.
pub fn hash2(seed: u64, x: i64, y: i64) -> u64 {
    mix(seed ^ mix((x as u64).wrapping_mul(0x8CB9_2BA7_2F3D_8DD7) ^ mix(y as u64)))
}

/// The top 24 bits of a hash as a float in [0, 1).
pub fn unit(h: u64) -> f32 {
    (h >> 40) as f32 / (1u64 << 24) as f32
}

/// A sequential generator (SplitMix64) for per-pixel sensor noise.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(mix(seed))
    }

    /// Next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix(self.0)
    }

    /// Uniform in [0, 1).
    pub fn next_unit(&mut self) -> f32 {
        unit(self.next_u64())
    }

    /// Uniform in [lo, hi).
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.next_unit()
    }

    /// Three noise values with zero mean and unit deviation from one 64-bit draw, each
    /// the sum of two 10-bit uniforms (triangular: cheap, and close enough to sensor
    /// noise).
    pub fn noise3(&mut self) -> [f32; 3] {
        let h = self.next_u64();
        // U1 + U2 - 1 has deviation 1/sqrt(6); 1023 steps per unit.
        const SCALE: f32 = 2.449_49 / 1023.0;
        std::array::from_fn(|c| {
            let a = (h >> (20 * c)) & 0x3FF;
            let b = (h >> (20 * c + 10)) & 0x3FF;
            (a as f32 + b as f32 - 1023.0) * SCALE
        })
    }
}

fn smooth(t: f32) -> f32 {
    t * t * (3.0 - 2.0 * t)
}

/// Value noise in [0, 1]: random values on the integer lattice, smoothly interpolated.
pub fn value(seed: u64, x: f32, y: f32) -> f32 {
    let (xf, yf) = (x.floor(), y.floor());
    let (xi, yi) = (xf as i64, yf as i64);
    let (tx, ty) = (smooth(x - xf), smooth(y - yf));
    let v = |dx, dy| unit(hash2(seed, xi + dx, yi + dy));
    let top = v(0, 0) + (v(1, 0) - v(0, 0)) * tx;
    let bottom = v(0, 1) + (v(1, 1) - v(0, 1)) * tx;
    top + (bottom - top) * ty
}

/// Fractal sum of `octaves` value-noise layers, each twice as fine and half as strong,
/// normalised to [0, 1].
pub fn fbm(seed: u64, x: f32, y: f32, octaves: u32) -> f32 {
    let (mut sum, mut amp, mut freq, mut norm) = (0.0, 1.0, 1.0, 0.0);
    for o in 0..octaves {
        sum += amp * value(seed.wrapping_add(o as u64 * 0x51ED), x * freq, y * freq);
        norm += amp;
        amp *= 0.5;
        freq *= 2.03;
    }
    sum / norm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn noise_is_deterministic_and_bounded() {
        for i in 0..500 {
            let (x, y) = (i as f32 * 0.37 - 40.0, i as f32 * 0.11);
            let v = fbm(7, x, y, 3);
            assert!((0.0..=1.0).contains(&v));
            assert_eq!(v, fbm(7, x, y, 3));
        }
        assert_ne!(fbm(7, 0.5, 0.5, 3), fbm(8, 0.5, 0.5, 3));
    }

    #[test]
    fn noise_values_have_unit_spread() {
        let mut rng = Rng::new(3);
        let n = 30_000;
        let (mut sum, mut sq) = (0.0f64, 0.0f64);
        for _ in 0..n {
            for g in rng.noise3() {
                sum += g as f64;
                sq += (g * g) as f64;
            }
        }
        let mean = sum / (3 * n) as f64;
        let var = sq / (3 * n) as f64 - mean * mean;
        assert!(mean.abs() < 0.02, "mean {mean}");
        assert!((var - 1.0).abs() < 0.05, "variance {var}");
    }
}

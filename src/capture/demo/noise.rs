//! Deterministic pseudo-random numbers, value noise and sensor noise for the demo scene:
//! hashes of integer coordinates, so every pixel of every frame follows from the seed
//! alone.

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

/// A sequential generator (SplitMix64) for the scene's random choices.
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

/// Sensor noise in quarter grey levels, read from one precomputed table: each row of
/// each frame takes a window at a random offset, so the noise is spatially independent,
/// different every frame, deterministic from the seed, and costs one add per channel.
#[derive(Clone, Debug)]
pub struct SensorNoise {
    seed: u64,
    table: Vec<i8>,
    row_len: usize,
}

/// Number of distinct window offsets in the table.
const NOISE_OFFSETS: usize = 1 << 18;

impl SensorNoise {
    /// A table of Gaussian-like noise (the sum of four uniforms) with deviation `sigma`
    /// grey levels, for rows of `row_len` bytes.
    pub fn new(seed: u64, sigma: f32, row_len: usize) -> Self {
        // The sum of four uniforms minus two has deviation 1/sqrt(3).
        let scale = 4.0 * sigma * 3f32.sqrt();
        let table = (0..NOISE_OFFSETS + row_len)
            .map(|i| {
                let h = mix(seed ^ mix(i as u64));
                let sum: f32 = (0..4).map(|k| ((h >> (16 * k)) & 0xFFFF) as f32).sum();
                let n = sum / 65536.0 - 2.0;
                (n * scale).round().clamp(-127.0, 127.0) as i8
            })
            .collect();
        Self {
            seed: mix(seed ^ 0x0015_E4A0),
            table,
            row_len,
        }
    }

    /// The noise of row `y` of frame `index`, `row_len` values.
    pub fn row(&self, index: u64, y: u32) -> &[i8] {
        let offset = hash2(self.seed, index as i64, y as i64) as usize % NOISE_OFFSETS;
        &self.table[offset..offset + self.row_len]
    }
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
    fn sensor_noise_has_the_requested_spread_and_changes_every_frame() {
        let noise = SensorNoise::new(3, 2.0, 3000);
        let rows: Vec<&[i8]> = (0..40).map(|y| noise.row(y / 4, (y % 4) as u32)).collect();
        let values: Vec<f64> = rows
            .iter()
            .flat_map(|r| r.iter())
            .map(|&q| q as f64 / 4.0)
            .collect();
        let mean = values.iter().sum::<f64>() / values.len() as f64;
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / values.len() as f64;
        assert!(mean.abs() < 0.05, "mean {mean}");
        assert!((var.sqrt() - 2.0).abs() < 0.1, "deviation {}", var.sqrt());
        assert_eq!(noise.row(5, 2), SensorNoise::new(3, 2.0, 3000).row(5, 2));
        assert_ne!(noise.row(5, 2), noise.row(6, 2), "another frame");
        assert_ne!(noise.row(5, 2), noise.row(5, 3), "another row");
    }
}

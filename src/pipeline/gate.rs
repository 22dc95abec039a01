//! A noise gate on frames: each pixel keeps the colour it had until one of its
//! channels moves by more than a threshold. Sensor noise alone changes every pixel of
//! a still camera's frames a little, and with them nearly every capacity of the
//! energy, so the engines' `update` finds everything changed and solves afresh. Behind
//! the gate the still parts of consecutive frames stay identical, and `update`
//! reworks only where the scene moved.

use crate::bands;

/// Sensor noise standard deviations within which [`threshold_for`] holds a pixel: two
/// noisy samples differ by √2 σ, so a still pixel passes this gate about once in
/// thousands of frames.
pub const GATE_SIGMAS: f32 = 5.0;

/// The gate threshold for a camera of sensor noise `noise` (grey levels, `None`
/// where unknown): the `chosen` one, raised to [`GATE_SIGMAS`] noise deviations where
/// the camera is noisier than it allows for. A gate below the noise lets a share of
/// every frame's still pixels through, and each such pixel costs the frame as much as
/// one that moved. 0 (the gate off) stays 0.
pub fn threshold_for(chosen: u8, noise: Option<f32>) -> u8 {
    if chosen == 0 {
        return 0;
    }
    let needed = noise.map_or(0.0, |n| (GATE_SIGMAS * n).ceil());
    chosen.max(needed.min(f32::from(u8::MAX)) as u8)
}

/// Holds the colours of the last gated frame.
#[derive(Clone, Debug, Default)]
pub struct NoiseGate {
    held: Vec<u8>,
    size: (u32, u32),
}

impl NoiseGate {
    /// Gates the RGB bytes of a `width`×`height` frame in place against the held
    /// colours and holds the result. A pixel whose channels all stay within
    /// `threshold` of the held ones takes the held colour; any other pixel keeps its
    /// own, which is held from then on. The first frame and a frame of another size
    /// pass unchanged; `threshold` 0 passes the frame and holds nothing. Returns how
    /// many pixels moved (all of a first frame; `None` with the gate off), as the
    /// device gate counts them.
    pub fn apply(&mut self, rgb: &mut [u8], width: u32, height: u32, threshold: u8) -> Option<u64> {
        let moved = self.pass(rgb, width, height, threshold);
        if moved.is_some() {
            bands::copy(rgb, &self.held, 3 * width as usize);
        }
        moved
    }

    /// [`Self::apply`] without writing the frame back: the gated frame is what the
    /// gate then holds, lent by [`Self::take_held`] (a still camera's frame is mostly
    /// held colours, so the pass only reads it where nothing moved).
    pub fn pass(&mut self, rgb: &[u8], width: u32, height: u32, threshold: u8) -> Option<u64> {
        if threshold == 0 {
            self.reset();
            return None;
        }
        if self.size != (width, height) || self.held.len() != rgb.len() {
            self.held.clear();
            self.held.extend_from_slice(rgb);
            self.size = (width, height);
            return Some((rgb.len() / 3) as u64);
        }
        let row = 3 * width as usize;
        let count = bands::sum_over_bands(&mut self.held, row, 1, |first, held| {
            gate_band(&rgb[first * row..][..held.len()], held, threshold)
        });
        Some(count)
    }

    /// Lends the gated frame of the last [`Self::pass`] (the held colours); hand it
    /// back with [`Self::restore_held`], or the next frame passes ungated.
    pub fn take_held(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }

    /// Takes back what [`Self::take_held`] lent.
    pub fn restore_held(&mut self, held: Vec<u8>) {
        self.held = held;
    }

    /// The held colours of a `width`×`height` frame, if any are held (for the device
    /// energy, which gates on the GPU, to go on from them).
    pub fn held(&self, width: u32, height: u32) -> Option<&[u8]> {
        let fits = self.size == (width, height) && !self.held.is_empty();
        fits.then_some(self.held.as_slice())
    }

    /// Holds `held`, the colours of a `width`×`height` frame (handed back by the device
    /// energy).
    pub fn hold(&mut self, held: Vec<u8>, width: u32, height: u32) {
        self.held = held;
        self.size = (width, height);
    }

    /// Forgets the held colours: the next frame passes unchanged.
    pub fn reset(&mut self) {
        self.held.clear();
    }
}

/// Pixels compared together before any is looked at alone.
const RUN: usize = 32;

/// Gates a band of pixels against the held ones; returns how many moved.
fn gate_band(rgb: &[u8], held: &mut [u8], threshold: u8) -> u64 {
    let mut count = 0;
    for (run, held) in rgb.chunks(3 * RUN).zip(held.chunks_mut(3 * RUN)) {
        // a run whose bytes all stay within the threshold (most of a still frame)
        // is passed over after one compare that vectorises
        let stirred = run
            .iter()
            .zip(held.iter())
            .fold(false, |any, (&a, &b)| any | (a.abs_diff(b) > threshold));
        if stirred {
            count += gate_run(run, held, threshold);
        }
    }
    count
}

/// Gates one run of pixels against the held ones pixel by pixel; returns how many
/// moved.
fn gate_run(rgb: &[u8], held: &mut [u8], threshold: u8) -> u64 {
    let mut count = 0;
    for (px, held) in rgb.chunks_exact(3).zip(held.chunks_exact_mut(3)) {
        let moved = px
            .iter()
            .zip(held.iter())
            .any(|(&a, &b)| a.abs_diff(b) > threshold);
        if moved {
            count += 1;
            held.copy_from_slice(px);
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::{NoiseGate, threshold_for};

    #[test]
    fn a_noisy_camera_raises_the_gate() {
        assert_eq!(threshold_for(10, None), 10);
        assert_eq!(
            threshold_for(10, Some(1.5)),
            10,
            "a quiet camera keeps the chosen gate"
        );
        assert_eq!(threshold_for(10, Some(3.3)), 17);
        assert_eq!(threshold_for(0, Some(3.3)), 0, "off stays off");
        assert_eq!(threshold_for(10, Some(1e6)), 255);
    }

    #[test]
    fn small_changes_keep_the_held_colour_and_large_ones_replace_it() {
        let mut gate = NoiseGate::default();
        let mut first = vec![100, 100, 100, 50, 50, 50];
        gate.apply(&mut first, 2, 1, 8);
        assert_eq!(first, [100, 100, 100, 50, 50, 50]);
        // Pixel 0 moves by 8 at most (held), pixel 1 by 9 in one channel (taken).
        let mut second = vec![108, 92, 100, 50, 59, 50];
        gate.apply(&mut second, 2, 1, 8);
        assert_eq!(second, [100, 100, 100, 50, 59, 50]);
        // Measured against the held colours, not the last input: 59 + 8 still holds.
        let mut third = vec![107, 100, 100, 50, 67, 50];
        gate.apply(&mut third, 2, 1, 8);
        assert_eq!(third, [100, 100, 100, 50, 59, 50]);
    }

    #[test]
    fn a_new_size_a_reset_or_threshold_zero_pass_the_frame() {
        let mut gate = NoiseGate::default();
        gate.apply(&mut [10, 10, 10], 1, 1, 8);
        let mut wide = vec![12, 12, 12, 12, 12, 12];
        gate.apply(&mut wide, 2, 1, 8);
        assert_eq!(wide, [12; 6]);
        let mut off = vec![13, 13, 13, 13, 13, 13];
        gate.apply(&mut off, 2, 1, 0);
        assert_eq!(off, [13; 6]);
        gate.reset();
        let mut after = vec![14, 14, 14, 14, 14, 14];
        gate.apply(&mut after, 2, 1, 8);
        assert_eq!(after, [14; 6]);
    }

    #[test]
    fn runs_passed_over_and_runs_gated_pixel_by_pixel_agree_with_the_rule() {
        // 100 pixels (three runs and a short one); a few pixels move past the gate
        let (w, t) = (100u32, 8u8);
        let base: Vec<u8> = (0..3 * w).map(|i| (i * 7 % 200) as u8).collect();
        let mut gate = NoiseGate::default();
        gate.pass(&base, w, 1, t);
        let mut next = base.clone();
        for (i, v) in next.iter_mut().enumerate() {
            *v = v.wrapping_add(if i % 37 == 5 { 30 } else { (i % 3) as u8 * 4 });
        }
        assert_eq!(gate.pass(&next, w, 1, t), Some(8), "bytes 5, 42, 79 … 264");
        let held = gate.take_held();
        for p in 0..w as usize {
            let moved = (0..3).any(|c| next[3 * p + c].abs_diff(base[3 * p + c]) > t);
            let want = if moved { &next } else { &base };
            assert_eq!(held[3 * p..3 * p + 3], want[3 * p..3 * p + 3], "pixel {p}");
        }
        gate.restore_held(held);
        assert!(gate.held(w, 1).is_some());
    }

    #[test]
    fn one_thread_and_two_gate_alike() {
        let (w, h, t) = (203u32, 151u32, 10u8);
        let mut bits = crate::test_bits::lcg(5);
        let mut noise = move || (bits() >> 59) as u8;
        let base: Vec<u8> = (0..3 * w * h).map(|i| (i * 13 % 251) as u8).collect();
        // noise everywhere, a block that moves past the gate in some frames
        let frames: Vec<Vec<u8>> = (0..4u32)
            .map(|k| {
                let mut f: Vec<u8> = base.iter().map(|&v| v.wrapping_add(noise())).collect();
                for y in 20 * k..20 * k + 40 {
                    let row = &mut f[(3 * w * y) as usize..][..3 * w as usize];
                    row[30 * 3..90 * 3]
                        .iter_mut()
                        .for_each(|v| *v = v.wrapping_add(99));
                }
                f
            })
            .collect();
        let run = |threads| {
            crate::bands::with_threads(threads, || {
                let mut gate = NoiseGate::default();
                let mut out = Vec::new();
                for f in &frames {
                    let mut f = f.clone();
                    let moved = gate.apply(&mut f, w, h, t);
                    out.push((moved, f));
                }
                out
            })
        };
        let one = run(1);
        assert!(
            one[1..]
                .iter()
                .all(|(moved, _)| moved.is_some_and(|m| m > 0))
        );
        assert!(one == run(2) && one == run(3));
    }
}

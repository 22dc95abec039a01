//! A noise gate on frames: each pixel keeps the colour it had until one of its
//! channels moves by more than a threshold. Sensor noise alone changes every pixel of
//! a still camera's frames a little, and with them nearly every capacity of the
//! energy, so the engines' `update` finds everything changed and solves afresh. Behind
//! the gate the still parts of consecutive frames stay identical, and `update`
//! reworks only where the scene moved.

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
        let mut count = 0u64;
        for (px, held) in rgb.chunks_exact_mut(3).zip(self.held.chunks_exact_mut(3)) {
            let moved = px
                .iter()
                .zip(held.iter())
                .any(|(&a, &b)| a.abs_diff(b) > threshold);
            count += u64::from(moved);
            if moved {
                held.copy_from_slice(px);
            } else {
                px.copy_from_slice(held);
            }
        }
        Some(count)
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

#[cfg(test)]
mod tests {
    use super::NoiseGate;

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
}

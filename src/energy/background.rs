//! Learned static background, for a fixed camera: the per-pixel mean and variance of
//! N frames of the empty scene. Afterwards a pixel that looks like its learned
//! background is cheap as background, and one that differs by more than about
//! [`THRESHOLD_SIGMAS`] standard deviations is cheaper as foreground.

/// Noise floor added to every learned variance (8-bit units²): camera noise and JPEG
/// artefacts that a short learning period underestimates.
const NOISE_FLOOR: f32 = 36.0;

/// Normalised colour distance at which both labels cost the same.
pub const THRESHOLD_SIGMAS: f32 = 3.0;

/// Largest background cost (nats per unit weight): beyond it a pixel is simply
/// "different", however different.
const MAX_COST: f32 = 4.0 * THRESHOLD_SIGMAS * THRESHOLD_SIGMAS;

/// Running per-pixel statistics of the background frames.
#[derive(Clone, Debug)]
pub struct BackgroundModel {
    width: u32,
    height: u32,
    target: u32,
    frames: u32,
    /// Per channel value: running mean (Welford).
    mean: Vec<f32>,
    /// Per channel value: running sum of squared deviations (Welford).
    m2: Vec<f32>,
}

impl BackgroundModel {
    /// Starts learning a `width`×`height` background over `frames` frames (at least 1).
    pub fn new(width: u32, height: u32, frames: u32) -> Self {
        let n = 3 * width as usize * height as usize;
        Self {
            width,
            height,
            target: frames.max(1),
            frames: 0,
            mean: vec![0.0; n],
            m2: vec![0.0; n],
        }
    }

    /// Whether the model is for frames of this size.
    pub fn fits(&self, width: u32, height: u32) -> bool {
        (self.width, self.height) == (width, height)
    }

    /// Frames still to learn before the model is used.
    pub fn frames_left(&self) -> u32 {
        self.target - self.frames
    }

    /// Whether learning is complete.
    pub fn is_ready(&self) -> bool {
        self.frames >= self.target
    }

    /// Adds one frame (`rgb`, the model's size) while learning; ignored once ready.
    pub fn learn(&mut self, rgb: &[u8]) {
        if self.is_ready() {
            return;
        }
        self.frames += 1;
        let k = self.frames as f32;
        for ((m, s), &v) in self.mean.iter_mut().zip(&mut self.m2).zip(rgb) {
            let v = v as f32;
            let delta = v - *m;
            *m += delta / k;
            *s += delta * (v - *m);
        }
    }

    /// Adds `weight` × the background data term to the per-pixel costs:
    /// background cost ½z² (capped), foreground cost ½·[`THRESHOLD_SIGMAS`]², where z²
    /// is the pixel's squared colour distance to its learned mean in units of its
    /// learned variance.
    pub fn add_costs(&self, rgb: &[u8], weight: f32, fg_cost: &mut [f32], bg_cost: &mut [f32]) {
        if !self.is_ready() || weight <= 0.0 {
            return;
        }
        let frames = self.frames as f32;
        let fg_add = weight * 0.5 * THRESHOLD_SIGMAS * THRESHOLD_SIGMAS;
        for (i, px) in rgb.chunks_exact(3).enumerate() {
            let mut z2 = 0.0;
            for (c, &value) in px.iter().enumerate() {
                let j = 3 * i + c;
                let var = self.m2[j] / frames + NOISE_FLOOR;
                let d = value as f32 - self.mean[j];
                z2 += d * d / var;
            }
            bg_cost[i] += weight * (0.5 * z2).min(MAX_COST);
            fg_cost[i] += fg_add;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learned_background_flags_changed_pixels() {
        let mut model = BackgroundModel::new(2, 1, 3);
        for v in [100u8, 102, 98] {
            assert!(!model.is_ready());
            model.learn(&[v, v, v, 10, 10, 10]);
        }
        assert!(model.is_ready());
        assert_eq!(model.frames_left(), 0);
        // Pixel 0 unchanged, pixel 1 turned bright.
        let mut fg = vec![0.0; 2];
        let mut bg = vec![0.0; 2];
        model.add_costs(&[101, 99, 100, 200, 210, 190], 1.0, &mut fg, &mut bg);
        assert!(bg[0] < fg[0], "unchanged pixel prefers background");
        assert!(bg[1] > fg[1], "changed pixel prefers foreground");
    }

    #[test]
    fn unready_model_adds_nothing() {
        let model = BackgroundModel::new(1, 1, 2);
        let mut fg = vec![0.0];
        let mut bg = vec![0.0];
        model.add_costs(&[1, 2, 3], 1.0, &mut fg, &mut bg);
        assert_eq!((fg[0], bg[0]), (0.0, 0.0));
    }
}

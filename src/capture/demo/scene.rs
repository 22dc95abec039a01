//! The demo scene itself: three textured objects (warm, saturated) drifting and spinning
//! over a textured, cool background, with soft shadows, a lighting change and sensor
//! noise, filmed by a still or a panning camera. Pure functions of (seed, frame index):
//! any frame can be rendered on its own, with its exact ground truth.
//!
//! Everything costly is rendered once when the scene is built (the background at full
//! light, the objects' sprites, a noise table); a frame is then composed row by row
//! from those layers with integer arithmetic, so the demo is never a pipeline's
//! bottleneck.

use super::DemoMotion;
use super::noise::{Rng, SensorNoise, fbm, mix, value};
use super::object::{Object, Pose, make_object};
use crate::capture::Frame;
use crate::energy::{SeedLabel, Seeds};
use crate::grid::Mask;
use std::f32::consts::TAU;
use std::time::Duration;

/// Rows composed together in a scratch buffer, layer by layer: few enough that the
/// buffer stays in the cache.
const BAND: usize = 16;

/// A colour in 8-bit levels, before quantisation.
pub(super) type Rgb = [f32; 3];

/// Background palette: slate blue, grey teal, muted green, warm grey.
const BACKGROUND: [Rgb; 4] = [
    [46.0, 78.0, 108.0],
    [96.0, 132.0, 146.0],
    [64.0, 100.0, 80.0],
    [122.0, 114.0, 102.0],
];

/// Sensor noise of the still camera, in grey levels: a webcam's in daylight.
const STILL_NOISE: f32 = 2.0;

/// Sensor noise of the panning camera, in grey levels.
const PAN_NOISE: f32 = 3.5;

/// Largest share of the light the still camera's exposure drifts away, and the period
/// of that drift in seconds: slow, like auto-exposure following a passing cloud.
const EXPOSURE_DRIFT: (f32, f32) = (0.05, 12.0);

pub(super) fn smoothstep(e0: f32, e1: f32, x: f32) -> f32 {
    let t = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    t * t * (3.0 - 2.0 * t)
}

pub(super) fn lerp(a: Rgb, b: Rgb, t: f32) -> Rgb {
    std::array::from_fn(|c| a[c] + (b[c] - a[c]) * t)
}

/// A deterministic synthetic scene of a given size and frame rate.
#[derive(Clone, Debug)]
pub struct DemoScene {
    width: u32,
    height: u32,
    fps: f32,
    seed: u64,
    motion: DemoMotion,
    /// Background at full light, RGB, larger than the frame by `drift` on every side
    /// (plus one texel for interpolation) where the camera pans.
    background: Vec<u8>,
    bg_width: usize,
    drift: (f32, f32),
    objects: Vec<Object>,
    noise: SensorNoise,
    stroke: f32,
}

/// Where the panning camera looks: the background's top-left texel and the weights of
/// the four texels around each pixel, in 256ths.
#[derive(Clone, Copy, Debug)]
struct Pan {
    x: usize,
    y: usize,
    weights: [u16; 4],
}

/// What changes from frame to frame: the objects' poses, the camera's pan and the light.
struct Moment {
    poses: Vec<Pose>,
    pan: Option<Pan>,
    /// Light on each byte of a row, in 256ths of full light.
    light: Vec<u16>,
}

impl DemoScene {
    /// Builds the scene filmed by a still camera.
    pub fn new(width: u32, height: u32, fps: u32, seed: u64) -> Self {
        Self::with_motion(width, height, fps, seed, DemoMotion::Still)
    }

    /// Builds the scene (background, sprites, motion paths, noise) from the seed.
    pub fn with_motion(width: u32, height: u32, fps: u32, seed: u64, motion: DemoMotion) -> Self {
        let (w, h) = (width as f32, height as f32);
        let s = w.min(h);
        let drift = match motion {
            DemoMotion::Still => (0.0, 0.0),
            DemoMotion::Pan => ((0.025 * w).ceil(), (0.025 * h).ceil()),
        };
        let sigma = match motion {
            DemoMotion::Still => STILL_NOISE,
            DemoMotion::Pan => PAN_NOISE,
        };
        let mut rng = Rng::new(seed ^ 0xD3E0);
        let objects = (0..3)
            .map(|i| make_object(i, w, h, &mut rng, seed))
            .collect();
        let mut scene = Self {
            width,
            height,
            fps: fps as f32,
            seed,
            motion,
            background: Vec::new(),
            bg_width: 0,
            drift,
            objects,
            noise: SensorNoise::new(mix(seed ^ 0x5E45), sigma, 3 * width as usize),
            stroke: (s / 90.0).max(1.0),
        };
        scene.paint_background();
        scene
    }

    /// Frame width and height.
    pub fn size(&self) -> (u32, u32) {
        (self.width, self.height)
    }

    /// Paints the background texture at full light: two value-noise fields mixing the
    /// palette, a faint cloth weave and fine grain.
    fn paint_background(&mut self) {
        let margin = |d: f32| if d > 0.0 { 2 * d as usize + 2 } else { 0 };
        let bw = self.width as usize + margin(self.drift.0);
        let bh = self.height as usize + margin(self.drift.1);
        let s = self.width.min(self.height) as f32;
        let (k1, k2, k3) = (
            mix(self.seed ^ 11),
            mix(self.seed ^ 12),
            mix(self.seed ^ 13),
        );
        let weave = (0.045 * s).max(3.0);
        let mut bg = Vec::with_capacity(bw * bh * 3);
        for y in 0..bh {
            for x in 0..bw {
                let (fx, fy) = (x as f32, y as f32);
                let t1 = fbm(k1, fx / (0.35 * s), fy / (0.35 * s), 4);
                let t2 = fbm(k2, fx / (0.22 * s), fy / (0.22 * s), 3);
                let cool = lerp(BACKGROUND[0], BACKGROUND[1], smoothstep(0.3, 0.7, t1));
                let earthy = lerp(BACKGROUND[2], BACKGROUND[3], smoothstep(0.3, 0.7, t1));
                let base = lerp(cool, earthy, smoothstep(0.42, 0.68, t2));
                let cloth = 1.0 + 0.05 * (TAU * fx / weave).sin() * (TAU * fy / weave).sin();
                let grain = (value(k3, fx / 1.7, fy / 1.7) - 0.5) * 16.0;
                bg.extend(base.map(|c| (c * cloth + grain).round().clamp(0.0, 255.0) as u8));
            }
        }
        self.background = bg;
        self.bg_width = bw;
    }

    fn time(&self, index: u64) -> f32 {
        index as f32 / self.fps
    }

    /// Where the panning camera looks at time t (within the painted margin), to a
    /// sixteenth of a pixel.
    fn pan(&self, t: f32) -> Pan {
        let sixteenths = |p: f32| (16.0 * p).round() as usize;
        let x = sixteenths(self.drift.0 * (1.0 + (TAU * t / 9.0).sin()));
        let y = sixteenths(self.drift.1 * (1.0 + (TAU * t / 7.0 + 1.0).sin()));
        let (fx, fy) = ((x % 16) as u16, (y % 16) as u16);
        Pan {
            x: x / 16,
            y: y / 16,
            weights: [
                (16 - fx) * (16 - fy),
                fx * (16 - fy),
                (16 - fx) * fy,
                fx * fy,
            ],
        }
    }

    /// The light on each byte of a row at time t, in 256ths of full light. The still
    /// camera's exposure drifts by a few percent; the panning camera sees a dip with a
    /// warm shift (to 72 % between 4 s and 8 s of every 10 s) and a soft band moving
    /// across.
    fn light(&self, t: f32) -> Vec<u16> {
        let w = self.width as usize;
        let level = |v: f32| (256.0 * v).round() as u16;
        match self.motion {
            DemoMotion::Still => {
                let (depth, period) = EXPOSURE_DRIFT;
                let gain = 1.0 - depth * 0.5 * (1.0 - (TAU * t / period).cos());
                vec![level(gain); 3 * w]
            }
            DemoMotion::Pan => {
                let p = t.rem_euclid(10.0);
                let dim = smoothstep(4.0, 5.0, p) * (1.0 - smoothstep(7.0, 8.0, p));
                let gain = 1.0 - 0.28 * dim;
                let tint = [gain * (1.0 + 0.03 * dim), gain, gain * (1.0 - 0.05 * dim)];
                (0..w)
                    .flat_map(|x| {
                        let x = x as f32 / w as f32;
                        let band = 1.0 - 0.08 * (0.5 + 0.5 * (TAU * x + 0.5 * t).sin());
                        tint.map(|c| level(c * band))
                    })
                    .collect()
            }
        }
    }

    fn moment(&self, index: u64) -> Moment {
        let t = self.time(index);
        Moment {
            poses: self.objects.iter().map(|o| o.pose(t)).collect(),
            pan: (self.motion == DemoMotion::Pan).then(|| self.pan(t)),
            light: self.light(t),
        }
    }

    /// Renders frame `index` and its ground truth (255 where an object covers at least
    /// half of the pixel).
    pub fn render(&self, index: u64) -> (Frame, Mask) {
        let (w, h) = (self.width as usize, self.height as usize);
        let moment = self.moment(index);
        let mut rgb = Vec::with_capacity(3 * w * h);
        let mut truth = Mask::empty(self.width, self.height);
        // Each band is composed in a scratch buffer that stays in the cache, and
        // exposed from there into the frame.
        let mut scratch = vec![0; BAND * 3 * w];
        for (b, truth) in truth.data.chunks_mut(BAND * w).enumerate() {
            let band = &mut scratch[..3 * truth.len()];
            self.compose_band(&moment, b * BAND, band, truth);
            for (row, y) in rows_from(band, w, b * BAND) {
                let noise = self.noise.row(index, y);
                rgb.extend(row.iter().zip(&moment.light).zip(noise).map(expose));
            }
        }
        let frame = Frame {
            width: self.width,
            height: self.height,
            rgb,
            timestamp: Duration::from_secs_f64(index as f64 / self.fps as f64),
            index,
        };
        (frame, truth)
    }

    /// The rows from `y0` on at full light, layer by layer: background, shadows, then
    /// objects, which also mark the truth.
    fn compose_band(&self, at: &Moment, y0: usize, rgb: &mut [u8], truth: &mut [u8]) {
        let (w, width) = (self.width as usize, self.width);
        match at.pan {
            None => rgb.copy_from_slice(&self.background[3 * w * y0..][..rgb.len()]),
            Some(pan) => {
                rows_from(rgb, w, y0).for_each(|(row, y)| self.pan_row(pan, y as usize, row))
            }
        }
        for (object, pose) in self.objects.iter().zip(&at.poses) {
            rows_from(rgb, w, y0).for_each(|(row, y)| object.shade_row(pose, y, width, row));
        }
        for (object, pose) in self.objects.iter().zip(&at.poses) {
            let truth_rows = truth.chunks_exact_mut(w);
            for ((row, y), truth) in rows_from(rgb, w, y0).zip(truth_rows) {
                object.paint_row(pose, y, width, row, truth);
            }
        }
    }

    /// Row `y` of the background as the panning camera sees it: bilinear between the
    /// four texels around each pixel.
    fn pan_row(&self, pan: Pan, y: usize, out: &mut [u8]) {
        let row = 3 * self.bg_width;
        let Pan { x, y: y0, weights } = pan;
        let start = (y + y0) * row + 3 * x;
        let n = out.len();
        let top = &self.background[start..start + n + 3];
        let bottom = &self.background[start + row..start + row + n + 3];
        let [w00, w10, w01, w11] = weights;
        let texels = top
            .iter()
            .zip(&top[3..])
            .zip(bottom.iter().zip(&bottom[3..]));
        for (o, ((&a, &b), (&c, &d))) in out.iter_mut().zip(texels) {
            let sum = a as u16 * w00 + b as u16 * w10 + c as u16 * w01 + d as u16 * w11;
            *o = ((sum + 128) >> 8) as u8;
        }
    }

    /// Ground truth of frame `index` alone (no rendering).
    pub fn truth(&self, index: u64) -> Mask {
        let t = self.time(index);
        let w = self.width as usize;
        let mut truth = Mask::empty(self.width, self.height);
        for object in &self.objects {
            let pose = object.pose(t);
            for (y, row) in truth.data.chunks_exact_mut(w).enumerate() {
                object.truth_row(&pose, y as u32, self.width, row);
            }
        }
        truth
    }

    /// Seeds for frame 0 that need no user: a cross-shaped stroke inside each object
    /// (foreground) and a frame-border rectangle plus a wavy line across the scene,
    /// kept clear of every object (background).
    pub fn default_seeds(&self) -> Seeds {
        let (w, h) = (self.width as f32, self.height as f32);
        let s = w.min(h);
        let poses: Vec<Pose> = self.objects.iter().map(|o| o.pose(0.0)).collect();
        let hw = self.stroke;
        let inset = (0.05 * s).round().max(hw + 1.0);
        let clearance = 3.0 + 0.06 * s;
        let wave_phase = (mix(self.seed ^ 21) % 628) as f32 / 100.0;
        let mut seeds = Seeds::unknown(self.width, self.height);
        for y in 0..self.height {
            for x in 0..self.width {
                let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
                let local: Vec<(f32, f32)> =
                    poses.iter().map(|p| Object::local(p, px, py)).collect();
                let in_stroke = self.objects.iter().zip(&local).any(|(o, &(u, v))| {
                    let rho = (u * u + v * v).sqrt().max(1e-6);
                    let inner =
                        rho <= 0.55 * o.shape.radius(u / rho, v / rho) && o.depth(u, v) >= 1.5;
                    inner && (v.abs() <= hw || u.abs() <= hw)
                });
                let clear = self
                    .objects
                    .iter()
                    .zip(&local)
                    .all(|(o, &(u, v))| o.depth(u, v) < -clearance);
                let border = [px - inset, w - inset - px, py - inset, h - inset - py];
                let on_rect =
                    border.iter().all(|&d| d >= -hw) && border.iter().any(|&d| d.abs() <= hw);
                let wave = h / 2.0 + 0.3 * h * (TAU * 1.3 * px / w + wave_phase).sin();
                let on_wave = (py - wave).abs() <= hw;
                let label = if in_stroke {
                    SeedLabel::Foreground
                } else if clear && (on_rect || on_wave) {
                    SeedLabel::Background
                } else {
                    continue;
                };
                seeds.labels[(y * self.width + x) as usize] = label;
            }
        }
        seeds
    }
}

/// The RGB rows of a frame `width` wide in `rgb`, numbered from `y0`.
fn rows_from(rgb: &mut [u8], width: usize, y0: usize) -> impl Iterator<Item = (&mut [u8], u32)> {
    rgb.chunks_exact_mut(3 * width).zip(y0 as u32..)
}

/// One byte at full light exposed: times the light (in 256ths), plus the sensor noise
/// (in quarter levels), quantised to 8 bits; 16-bit integers that the compiler
/// vectorises.
fn expose(((&c, &light), &noise): ((&u8, &u16), &i8)) -> u8 {
    let quarters = ((c as u16 * light + 32) >> 6) as i16;
    ((quarters + noise as i16 + 2) >> 2).clamp(0, 255) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Channel values of frames `a` and `b` where no object covers the pixel in either.
    fn background_pairs(scene: &DemoScene, a: u64, b: u64) -> Vec<(f64, f64)> {
        let ((fa, ta), (fb, tb)) = (scene.render(a), scene.render(b));
        let open = |i: usize| !ta.is_source(i / 3) && !tb.is_source(i / 3);
        (0..fa.rgb.len())
            .filter(|&i| open(i))
            .map(|i| (fa.rgb[i] as f64, fb.rgb[i] as f64))
            .collect()
    }

    fn median(mut values: Vec<f64>) -> f64 {
        values.sort_by(f64::total_cmp);
        values[values.len() / 2]
    }

    /// Median absolute change of the background between frames `a` and `b`: robust
    /// against the few pixels whose shadow moved.
    fn background_change(scene: &DemoScene, a: u64, b: u64) -> f64 {
        median(
            background_pairs(scene, a, b)
                .iter()
                .map(|(x, y)| (y - x).abs())
                .collect(),
        )
    }

    #[test]
    fn the_still_camera_sees_the_background_change_only_by_noise() {
        let still = DemoScene::new(320, 240, 30, 5);
        for (a, b) in [(0, 1), (40, 41), (0, 30)] {
            let change = background_change(&still, a, b);
            assert!(change <= 2.0, "frames {a} and {b}: {change}");
        }
        // One second on, the panning camera has moved the background by pixels.
        let pan = DemoScene::with_motion(320, 240, 30, 5, DemoMotion::Pan);
        let change = background_change(&pan, 0, 30);
        assert!(change >= 5.0, "panning background change {change}");
    }

    #[test]
    fn sensor_noise_is_a_webcams_and_new_every_frame() {
        // Differences of two frames have deviation sigma * sqrt(2); the median absolute
        // deviation estimates it past the moved shadows.
        let scene = DemoScene::new(320, 240, 30, 5);
        let pairs = background_pairs(&scene, 40, 41);
        let mad = median(pairs.iter().map(|(a, b)| (b - a).abs()).collect());
        let sigma = 1.4826 * mad / 2f64.sqrt();
        assert!((1.6..2.4).contains(&sigma), "noise deviation {sigma}");
    }

    #[test]
    fn the_still_cameras_exposure_drifts_a_few_percent() {
        // Six seconds in, the drift is at its deepest.
        let scene = DemoScene::new(320, 240, 30, 5);
        let pairs = background_pairs(&scene, 0, 180);
        let (before, after) = pairs
            .iter()
            .fold((0.0, 0.0), |(x, y), (a, b)| (x + a, y + b));
        let ratio = after / before;
        assert!((0.93..0.97).contains(&ratio), "light ratio {ratio}");
    }

    #[test]
    fn both_cameras_render_the_same_objects_and_truth() {
        let still = DemoScene::new(120, 90, 30, 8);
        let pan = DemoScene::with_motion(120, 90, 30, 8, DemoMotion::Pan);
        for index in [0, 45] {
            let (still_frame, still_truth) = still.render(index);
            let (pan_frame, pan_truth) = pan.render(index);
            assert_eq!(still_truth, pan_truth, "frame {index}");
            assert_eq!(pan.truth(index), pan_truth, "frame {index}");
            assert_ne!(still_frame.rgb, pan_frame.rgb);
        }
        assert_eq!(still.default_seeds(), pan.default_seeds());
    }
}

//! How the foreground moved between consecutive frames: the whole-pixel shift that
//! best aligns the previous mask's part of the frame before with the frame, so that a
//! panning camera's temporal prior follows the object instead of holding it where it
//! was. The shift is the foreground's, not the background's: a camera that follows an
//! object moves the background and keeps the object in place. It is looked for only
//! where much of the foreground changed and taken only where it explains the change
//! clearly better than none, so a still object keeps its zero and its dynamic cuts.

use crate::grid::Mask;
use std::borrow::Cow;

/// Rows and columns between the samples of the small grey picture motion is found on
/// (each sample the mean of `STRIDE` pixels of its row): a quarter of the rows read.
const STRIDE: usize = 4;

/// Motion is looked for once more than one of the foreground's samples in this many
/// changed: a still object (or a camera that follows it) changes few of them.
const LOOK_ABOVE: usize = 4;

/// Halvings of the sample picture the search starts from (coarse to fine), and how
/// far it looks at the coarsest: 3 samples of 4·2² pixels, ±48 pixels a frame.
const LEVELS: usize = 2;
const REACH: i32 = 3;

/// A shift is taken where the foreground's mean difference there is below this share of
/// no motion's: a shift that fits only part of it lowers it little, its true shift
/// takes most of it away.
const TAKE_BELOW: f64 = 0.6;

/// A shift must keep this share of the foreground's samples inside the frame for its
/// difference to count: one that moves most of it out compares too little.
const MIN_OVERLAP: f64 = 0.5;

/// The translation of a frame's content since the frame before, in pixels: what was
/// at (x, y) is at (x + dx, y + dy).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Motion {
    /// Pixels to the right.
    pub dx: i32,
    /// Pixels down.
    pub dy: i32,
}

impl Motion {
    /// No motion.
    pub const NONE: Self = Self { dx: 0, dy: 0 };

    /// Whether the content moved.
    pub fn is_some(self) -> bool {
        self != Self::NONE
    }
}

/// Finds each frame's motion against the frame before from a small grey picture of
/// each, kept from one frame to the next.
#[derive(Clone, Debug, Default)]
pub struct MotionEstimator {
    last: Option<Samples>,
    spare: Samples,
    /// The last frame's foreground on the samples' grid (kept for its allocation).
    region: Vec<bool>,
}

impl MotionEstimator {
    /// How the content of `region` (the last frame's foreground, its size) moved by
    /// the RGB frame `rgb` (`width`×`height`) since the last frame given, where more
    /// than one sample in `LOOK_ABOVE` moved by more than `threshold` grey levels.
    /// `None` for the first frame or one of another size; [`Motion::NONE`] where the
    /// foreground changed too little to look, or no shift explains the change.
    pub fn next(
        &mut self,
        rgb: &[u8],
        width: u32,
        height: u32,
        threshold: u8,
        region: Option<&Mask>,
    ) -> Option<Motion> {
        let mut current = std::mem::take(&mut self.spare);
        current.sample(rgb, width as usize, height as usize);
        let motion = match &self.last {
            Some(last) if last.size() == current.size() && !current.grey.is_empty() => {
                let fits = |m: &&Mask| (m.width, m.height) == (width, height);
                Some(match region.filter(fits) {
                    Some(mask) => {
                        sample_region(mask, last.size(), &mut self.region);
                        if changed_share_above(last, &current, &self.region, threshold) {
                            search(last, &current, &self.region)
                        } else {
                            Motion::NONE
                        }
                    }
                    None => Motion::NONE,
                })
            }
            _ => None,
        };
        self.spare = self.last.replace(current).unwrap_or_default();
        motion
    }

    /// Forgets the last frame: the next one has no motion to measure.
    pub fn reset(&mut self) {
        self.last = None;
    }
}

/// `mask` moved by `motion`, the pixels it leaves uncovered taking the label of the
/// nearest pixel at the frame's edge.
pub fn shifted(mask: &Mask, motion: Motion) -> Mask {
    let (w, h) = (mask.width as i64, mask.height as i64);
    let mut data = Vec::with_capacity(mask.data.len());
    for y in 0..h {
        let sy = (y - i64::from(motion.dy)).clamp(0, h - 1);
        let row = &mask.data[(sy * w) as usize..][..w as usize];
        data.extend((0..w).map(|x| row[(x - i64::from(motion.dx)).clamp(0, w - 1) as usize]));
    }
    Mask {
        width: mask.width,
        height: mask.height,
        data,
    }
}

/// Weights of r, g and b in a sample's grey ((r + 2g + b) / 4).
const GREY_WEIGHTS: [u32; 3] = [1, 2, 1];

/// A small grey picture: one sample per `STRIDE` pixels of every `STRIDE`-th row.
#[derive(Clone, Debug, Default)]
struct Samples {
    w: usize,
    h: usize,
    grey: Vec<u8>,
}

impl Samples {
    fn size(&self) -> (usize, usize) {
        (self.w, self.h)
    }

    /// Samples an RGB frame: each sample the mean grey ((r + 2g + b) / 4) of `STRIDE`
    /// pixels of its row.
    fn sample(&mut self, rgb: &[u8], width: usize, height: usize) {
        let (w, h) = (width / STRIDE, height.div_ceil(STRIDE));
        self.w = w;
        self.h = if w == 0 { 0 } else { h };
        self.grey.clear();
        if rgb.len() != 3 * width * height || w == 0 {
            self.h = 0;
            return;
        }
        for y in (0..height).step_by(STRIDE) {
            let row = &rgb[3 * y * width..][..3 * w * STRIDE];
            self.grey.extend(row.chunks_exact(3 * STRIDE).map(|px| {
                let px: &[u8; 3 * STRIDE] = px.try_into().expect("whole chunks");
                let sum: u32 = px
                    .iter()
                    .zip(GREY_WEIGHTS.iter().cycle())
                    .map(|(&v, &weight)| u32::from(v) * weight)
                    .sum();
                (sum / (4 * STRIDE as u32)) as u8
            }));
        }
    }

    /// The picture at half the size, each sample the mean of four.
    fn halved(&self) -> Samples {
        let (w, h) = (self.w / 2, self.h / 2);
        let mut grey = Vec::with_capacity(w * h);
        for y in 0..h {
            let (a, b) = (
                &self.grey[2 * y * self.w..],
                &self.grey[(2 * y + 1) * self.w..],
            );
            grey.extend((0..w).map(|x| {
                let sum = u16::from(a[2 * x])
                    + u16::from(a[2 * x + 1])
                    + u16::from(b[2 * x])
                    + u16::from(b[2 * x + 1]);
                (sum / 4) as u8
            }));
        }
        Samples { w, h, grey }
    }
}

/// Whether more than one of the foreground's samples (`region`) in `LOOK_ABOVE`
/// differs by more than `threshold`.
fn changed_share_above(last: &Samples, current: &Samples, region: &[bool], threshold: u8) -> bool {
    let (mut inside, mut changed) = (0, 0);
    for ((a, b), &at) in last.grey.iter().zip(&current.grey).zip(region) {
        inside += usize::from(at);
        changed += usize::from(at && a.abs_diff(*b) > threshold);
    }
    changed * LOOK_ABOVE > inside
}

// a sample's `STRIDE` mask pixels are read as one word
const _: () = assert!(STRIDE == std::mem::size_of::<u32>());

/// `mask` on the samples' grid (`w`×`h`), into `region`: a sample is in where any
/// pixel it averages is.
fn sample_region(mask: &Mask, (w, h): (usize, usize), region: &mut Vec<bool>) {
    let width = mask.width as usize;
    region.clear();
    for y in 0..h {
        let row = &mask.data[STRIDE * y * width..][..w * STRIDE];
        region.extend(
            row.chunks_exact(STRIDE)
                .map(|px| u32::from_ne_bytes(px.try_into().expect("whole chunks")) != 0),
        );
    }
}

/// One level of the search: the last frame's and this frame's samples, and which of
/// the last frame's samples are foreground.
/// The finest level borrows the estimator's pictures; coarser ones own their halves.
struct Level<'a> {
    last: Cow<'a, Samples>,
    current: Cow<'a, Samples>,
    region: Cow<'a, [bool]>,
    /// Columns and rows of the samples in `region`.
    inside: Vec<(i32, i32)>,
}

impl<'a> Level<'a> {
    fn new(last: Cow<'a, Samples>, current: Cow<'a, Samples>, region: Cow<'a, [bool]>) -> Self {
        let w = last.w.max(1);
        let inside = (0..region.len())
            .filter(|&i| region[i])
            .map(|i| ((i % w) as i32, (i / w) as i32))
            .collect();
        Self {
            last,
            current,
            region,
            inside,
        }
    }

    /// The level at half the size: a sample is in where any of its four is.
    fn halved(&self) -> Level<'static> {
        let (w, h) = (self.last.w / 2, self.last.h / 2);
        let at = |x: usize, y: usize| self.region[y * self.last.w + x];
        let region = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| {
                at(2 * x, 2 * y)
                    | at(2 * x + 1, 2 * y)
                    | at(2 * x, 2 * y + 1)
                    | at(2 * x + 1, 2 * y + 1)
            })
            .collect();
        let (last, current) = (self.last.halved(), self.current.halved());
        Level::new(Cow::Owned(last), Cow::Owned(current), Cow::Owned(region))
    }

    /// Mean absolute difference between the last frame's foreground samples and
    /// where `shift` moves them in this frame; infinite where too few stay inside it
    /// to judge.
    fn difference(&self, (sx, sy): (i32, i32)) -> f64 {
        let (w, h) = (self.current.w as i32, self.current.h as i32);
        let (mut sum, mut used) = (0u64, 0usize);
        for &(x, y) in &self.inside {
            let (mx, my) = (x + sx, y + sy);
            if (0..w).contains(&mx) && (0..h).contains(&my) {
                let now = self.current.grey[(my * w + mx) as usize];
                let then = self.last.grey[(y * w + x) as usize];
                sum += u64::from(now.abs_diff(then));
                used += 1;
            }
        }
        self.mean(sum as f64, used)
    }

    /// [`Self::difference`] for a shift by a fraction of a sample, this frame read
    /// between its samples (bilinear): what decides whether a shift explains the
    /// change.
    fn interpolated(&self, (fx, fy): (f64, f64)) -> f64 {
        let (w, h) = (self.current.w as i64, self.current.h as i64);
        let (ix, iy) = (fx.floor() as i64, fy.floor() as i64);
        let (tx, ty) = (fx - ix as f64, fy - iy as f64);
        let at = |x: i64, y: i64| f64::from(self.current.grey[(y * w + x) as usize]);
        let (mut sum, mut used) = (0.0, 0usize);
        for &(x, y) in &self.inside {
            // this frame at (x + fx, y + fy), between (x0, y0) and (x0 + 1, y0 + 1)
            let (x0, y0) = (i64::from(x) + ix, i64::from(y) + iy);
            if x0 < 0 || y0 < 0 || x0 + 1 >= w || y0 + 1 >= h {
                continue;
            }
            let top = at(x0, y0) * (1.0 - tx) + at(x0 + 1, y0) * tx;
            let bottom = at(x0, y0 + 1) * (1.0 - tx) + at(x0 + 1, y0 + 1) * tx;
            let moved = top * (1.0 - ty) + bottom * ty;
            let then = self.last.grey[(i64::from(y) * w + i64::from(x)) as usize];
            sum += (moved - f64::from(then)).abs();
            used += 1;
        }
        self.mean(sum, used)
    }

    /// `sum` over `used` samples, or infinite where fewer than `MIN_OVERLAP` of the
    /// foreground's were used.
    fn mean(&self, sum: f64, used: usize) -> f64 {
        if used == 0 || (used as f64) < MIN_OVERLAP * self.inside.len() as f64 {
            return f64::INFINITY;
        }
        sum / used as f64
    }
}

/// The shift that aligns the foreground of `last` (`region`) with `current` best,
/// coarse to fine, taken only where it beats no motion clearly.
fn search(last: &Samples, current: &Samples, region: &[bool]) -> Motion {
    let finest = Level::new(
        Cow::Borrowed(last),
        Cow::Borrowed(current),
        Cow::Borrowed(region),
    );
    let mut pyramid = vec![finest];
    for _ in 0..LEVELS {
        let finer = pyramid.last().expect("the finest level");
        if finer.last.w < 16 || finer.last.h < 16 {
            break;
        }
        let coarser = finer.halved();
        pyramid.push(coarser);
    }
    let mut best = (0, 0);
    for (i, level) in pyramid.iter().enumerate().rev() {
        let reach = if i + 1 == pyramid.len() { REACH } else { 1 };
        let centre = best;
        let mut lowest = level.difference(best);
        for sy in -reach..=reach {
            for sx in -reach..=reach {
                let s = (centre.0 + sx, centre.1 + sy);
                let d = level.difference(s);
                if d < lowest {
                    (best, lowest) = (s, d);
                }
            }
        }
        if i > 0 {
            best = (2 * best.0, 2 * best.1);
        }
    }
    let finest = &pyramid[0];
    let along = |step: (i32, i32)| {
        let at = |k: i32| finest.difference((best.0 + k * step.0, best.1 + k * step.1));
        vertex(at(-1), at(0), at(1))
    };
    let to_pixels = |s: i32, frac: f64| ((f64::from(s) + frac) * STRIDE as f64).round() as i32;
    let motion = Motion {
        dx: to_pixels(best.0, along((1, 0))),
        dy: to_pixels(best.1, along((0, 1))),
    };
    let to_samples = |p: i32| f64::from(p) / STRIDE as f64;
    let moved = finest.interpolated((to_samples(motion.dx), to_samples(motion.dy)));
    if motion.is_some() && moved < TAKE_BELOW * finest.difference((0, 0)) {
        motion
    } else {
        Motion::NONE
    }
}

/// Where the V through three equally spaced values (a difference grows about
/// linearly with the misalignment) has its lowest point, relative to the middle one
/// (within half a step).
fn vertex(before: f64, at: f64, after: f64) -> f64 {
    let slope = before.max(after) - at;
    if !slope.is_finite() || slope <= 0.0 {
        return 0.0;
    }
    ((before - after) / (2.0 * slope)).clamp(-0.5, 0.5)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_bits::lcg;

    /// A smooth random texture, `width`×`height`, seen through a window at (`ox`, `oy`)
    /// of a larger one: moving the window is a pan.
    fn scene(width: u32, height: u32, ox: i32, oy: i32) -> Vec<u8> {
        let mut bits = lcg(7);
        let (sw, sh) = (64usize, 48usize);
        let coarse: Vec<u8> = (0..sw * sh * 3).map(|_| (bits() >> 56) as u8).collect();
        let mut rgb = Vec::with_capacity(width as usize * height as usize * 3);
        for y in 0..height as i32 {
            for x in 0..width as i32 {
                // bilinear over an 8-pixel lattice: texture at every scale the search uses
                let (fx, fy) = ((x - ox + 400) as f64 / 8.0, (y - oy + 300) as f64 / 8.0);
                let (ix, iy) = (fx.floor() as usize, fy.floor() as usize);
                let (tx, ty) = (fx - ix as f64, fy - iy as f64);
                for c in 0..3 {
                    let at =
                        |x: usize, y: usize| f64::from(coarse[((y % sh) * sw + x % sw) * 3 + c]);
                    let top = at(ix, iy) * (1.0 - tx) + at(ix + 1, iy) * tx;
                    let bottom = at(ix, iy + 1) * (1.0 - tx) + at(ix + 1, iy + 1) * tx;
                    rgb.push((top * (1.0 - ty) + bottom * ty) as u8);
                }
            }
        }
        rgb
    }

    /// A `side`-pixel square at (`x`, `y`) as a mask of a 320×240 frame.
    fn square(x: usize, y: usize, side: usize) -> Mask {
        Mask::from_fn(320, 240, |p| {
            let (px, py) = (p % 320, p / 320);
            (x..x + side).contains(&px) && (y..y + side).contains(&py)
        })
    }

    /// `frame` with a textured `side`-pixel square drawn at (`x`, `y`), its texture (the
    /// scene's, inverted) moving with it.
    fn with_square(mut frame: Vec<u8>, x: usize, y: usize, side: usize) -> Vec<u8> {
        let texture = scene(320, 240, 0, 0);
        for py in y..y + side {
            for px in x..x + side {
                let from = ((py - y + 50) * 320 + (px - x + 70)) * 3;
                for c in 0..3 {
                    frame[(py * 320 + px) * 3 + c] = 255 - texture[from + c];
                }
            }
        }
        frame
    }

    #[test]
    fn a_pan_is_found_to_the_pixel() {
        let object = square(100, 60, 120);
        for (dx, dy) in [(3, 0), (0, -2), (7, 5), (-13, 4), (2, 2), (-30, -20)] {
            let mut m = MotionEstimator::default();
            assert_eq!(m.next(&scene(320, 240, 0, 0), 320, 240, 10, None), None);
            let found = m.next(&scene(320, 240, dx, dy), 320, 240, 10, Some(&object));
            assert_eq!(found, Some(Motion { dx, dy }), "moved by ({dx}, {dy})");
        }
    }

    #[test]
    fn an_object_the_camera_follows_stays_where_it_is() {
        let mut m = MotionEstimator::default();
        let object = square(100, 60, 120);
        for step in 0..4 {
            let frame = with_square(scene(320, 240, 6 * step, 0), 100, 60, 120);
            let found = m.next(&frame, 320, 240, 10, Some(&object));
            assert_eq!(found, (step > 0).then_some(Motion::NONE), "step {step}");
        }
    }

    #[test]
    fn an_object_moving_over_a_still_background_is_followed() {
        let mut m = MotionEstimator::default();
        let background = scene(320, 240, 0, 0);
        m.next(
            &with_square(background.clone(), 40, 60, 120),
            320,
            240,
            10,
            None,
        );
        for step in 1..4 {
            let frame = with_square(background.clone(), 40 + 10 * step, 60, 120);
            let last = square(40 + 10 * (step - 1), 60, 120);
            let found = m.next(&frame, 320, 240, 10, Some(&last));
            assert_eq!(found, Some(Motion { dx: 10, dy: 0 }), "step {step}");
        }
    }

    #[test]
    fn a_still_foreground_is_not_searched_while_other_things_move() {
        let mut m = MotionEstimator::default();
        let background = with_square(scene(320, 240, 0, 0), 40, 60, 60);
        m.next(
            &with_square(background.clone(), 200, 60, 80),
            320,
            240,
            10,
            None,
        );
        // the other square moves far; the foreground (the first square) stays
        let frame = with_square(background, 220, 100, 80);
        let found = m.next(&frame, 320, 240, 10, Some(&square(40, 60, 60)));
        assert_eq!(found, Some(Motion::NONE));
    }

    #[test]
    fn first_frames_and_new_sizes_have_no_motion() {
        let mut m = MotionEstimator::default();
        assert_eq!(m.next(&scene(64, 48, 0, 0), 64, 48, 10, None), None);
        assert_eq!(m.next(&scene(80, 48, 0, 0), 80, 48, 10, None), None);
        let all = Mask::from_fn(80, 48, |_| true);
        let found = m.next(&scene(80, 48, 0, 0), 80, 48, 10, Some(&all));
        assert_eq!(found, Some(Motion::NONE));
        m.reset();
        assert_eq!(m.next(&scene(80, 48, 2, 0), 80, 48, 10, Some(&all)), None);
        // too small to sample, or not a frame: nothing to find, no panic
        assert_eq!(m.next(&[0; 9], 3, 1, 10, None), None);
        assert_eq!(m.next(&[0; 5], 3, 1, 10, None), None);
    }

    #[test]
    fn a_shifted_mask_follows_the_content_and_repeats_its_edge() {
        let mask = Mask {
            width: 4,
            height: 3,
            data: vec![0, 255, 0, 0, 0, 0, 255, 0, 255, 0, 0, 0],
        };
        let moved = shifted(&mask, Motion { dx: 1, dy: 1 });
        assert_eq!(moved.data, vec![0, 0, 255, 0, 0, 0, 255, 0, 0, 0, 0, 255]);
        assert_eq!(shifted(&mask, Motion::NONE), mask);
        let far = shifted(&mask, Motion { dx: -10, dy: 0 });
        assert_eq!(far.data, vec![0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
}

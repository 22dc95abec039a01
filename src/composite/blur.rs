//! The strong, cheap blur of the background view.

use crate::capture::Frame;

/// A box-averaged, smoothed small copy of a frame, sampled back bilinearly: a cheap,
/// strong blur (O(pixels), independent of the blur radius).
pub(super) struct Downscaled {
    factor: u32,
    width: u32,
    height: u32,
    rgb: Vec<f32>,
}

impl Downscaled {
    pub(super) fn new(frame: &Frame, factor: u32) -> Self {
        let width = frame.width.div_ceil(factor).max(1);
        let height = frame.height.div_ceil(factor).max(1);
        let mut sum = vec![0f32; width as usize * height as usize * 3];
        let mut count = vec![0f32; width as usize * height as usize];
        for (i, rgb) in frame.rgb.chunks_exact(3).enumerate() {
            let (x, y) = (i as u32 % frame.width, i as u32 / frame.width);
            let j = ((y / factor) * width + x / factor) as usize;
            for c in 0..3 {
                sum[j * 3 + c] += rgb[c] as f32;
            }
            count[j] += 1.0;
        }
        for (j, n) in count.iter().enumerate() {
            for c in 0..3 {
                sum[j * 3 + c] /= n.max(1.0);
            }
        }
        let mut small = Self {
            factor,
            width,
            height,
            rgb: sum,
        };
        small.smooth();
        small
    }

    /// One 3×3 box pass over the small image (clamped at the borders).
    fn smooth(&mut self) {
        let (w, h) = (self.width as i64, self.height as i64);
        let src = self.rgb.clone();
        for y in 0..h {
            for x in 0..w {
                let mut acc = [0f32; 3];
                for (dx, dy) in (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (dx, dy))) {
                    let (sx, sy) = ((x + dx).clamp(0, w - 1), (y + dy).clamp(0, h - 1));
                    let j = (sy * w + sx) as usize * 3;
                    for (a, v) in acc.iter_mut().zip(&src[j..j + 3]) {
                        *a += v;
                    }
                }
                let j = (y * w + x) as usize * 3;
                for (dst, a) in self.rgb[j..j + 3].iter_mut().zip(acc) {
                    *dst = a / 9.0;
                }
            }
        }
    }

    /// The blur at full resolution `w`×`h` (RGB): each full-resolution pixel sampled
    /// bilinearly, computed separably (every small row widened once, then pairs of
    /// widened rows blended), since sampling pixel by pixel is most of the background
    /// view's cost on the UI thread.
    pub(super) fn upsampled(&self, w: u32, h: u32) -> Vec<u8> {
        let f = self.factor as f32;
        let taps = |i: u32, n: u32| {
            let p = ((i as f32 + 0.5) / f - 0.5).clamp(0.0, (n - 1) as f32);
            let i0 = p as u32;
            (i0, (i0 + 1).min(n - 1), p - i0 as f32)
        };
        let xs: Vec<(u32, u32, f32)> = (0..w).map(|x| taps(x, self.width)).collect();
        let row = w as usize * 3;
        let mut wide = Vec::with_capacity(row * self.height as usize);
        for sy in 0..self.height {
            let small = &self.rgb[(sy * self.width) as usize * 3..][..self.width as usize * 3];
            for &(x0, x1, tx) in &xs {
                for c in 0..3 {
                    let (a, b) = (small[x0 as usize * 3 + c], small[x1 as usize * 3 + c]);
                    wide.push(a * (1.0 - tx) + b * tx);
                }
            }
        }
        let mut out = Vec::with_capacity(row * h as usize);
        for y in 0..h {
            let (y0, y1, ty) = taps(y, self.height);
            let top = &wide[y0 as usize * row..][..row];
            let bottom = &wide[y1 as usize * row..][..row];
            out.extend(
                top.iter()
                    .zip(bottom)
                    .map(|(t, b)| (t * (1.0 - ty) + b * ty).round() as u8),
            );
        }
        out
    }
}

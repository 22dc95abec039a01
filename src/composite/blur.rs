//! The strong, cheap blur of the background view.

use crate::bands;
use crate::capture::Frame;

/// A box-averaged, smoothed small copy of a frame, sampled back bilinearly: a cheap,
/// strong blur (O(pixels), independent of the blur radius). Keeps its buffers from
/// frame to frame.
#[derive(Default)]
pub(super) struct Blur {
    factor: u32,
    width: u32,
    height: u32,
    /// The box means of the small copy.
    means: Vec<f32>,
    /// The small copy, smoothed.
    small: Vec<f32>,
    /// Horizontal taps of each full-resolution column.
    xs: Vec<Tap>,
    /// Each small row widened to full resolution.
    wide: Vec<f32>,
}

/// Where a full-resolution column or row samples the small copy: two neighbours and
/// the weight of the second.
type Tap = (u32, u32, f32);

impl Blur {
    /// Writes the blur of `frame` (RGB, the frame's size) into `out`: box means of
    /// `factor`×`factor` cells, one 3×3 smoothing pass, bilinear sampling back.
    pub(super) fn blur_into(&mut self, frame: &Frame, factor: u32, out: &mut Vec<u8>) {
        self.downscale(frame, factor.max(1));
        self.smooth();
        self.upsample(frame.width, frame.height, out);
    }

    /// The box means of the frame's `factor`×`factor` cells (clipped at the edges),
    /// in bands of small rows.
    fn downscale(&mut self, frame: &Frame, factor: u32) {
        self.factor = factor;
        self.width = frame.width.div_ceil(factor).max(1);
        self.height = frame.height.div_ceil(factor).max(1);
        let small_row = self.width as usize * 3;
        // every item is written below: the old contents need no clearing
        self.means.resize(small_row * self.height as usize, 0.0);
        bands::for_each_band(&mut self.means, small_row, 1, |first, band| {
            for (r, means) in band.chunks_exact_mut(small_row).enumerate() {
                cell_means(frame, factor, (first + r) as u32, means);
            }
        });
    }

    /// One 3×3 box pass over the small image (clamped at the borders).
    fn smooth(&mut self) {
        let (w, h) = (self.width as i64, self.height as i64);
        let src = &self.means;
        self.small.resize(src.len(), 0.0);
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
                for (dst, a) in self.small[j..j + 3].iter_mut().zip(acc) {
                    *dst = a / 9.0;
                }
            }
        }
    }

    /// The blur at full resolution `w`×`h` (RGB) into `out`: each full-resolution
    /// pixel sampled bilinearly, computed separably (every small row widened once,
    /// then pairs of widened rows blended), both steps in row bands.
    fn upsample(&mut self, w: u32, h: u32, out: &mut Vec<u8>) {
        let (factor, small_w) = (self.factor, self.width);
        self.xs.clear();
        self.xs.extend((0..w).map(|x| tap(x, small_w, factor)));
        let row = w as usize * 3;
        self.wide.resize(row * self.height as usize, 0.0);
        let (xs, small) = (&self.xs, &self.small);
        bands::for_each_band(&mut self.wide, row, 1, |first, band| {
            for (r, wide) in band.chunks_exact_mut(row).enumerate() {
                let start = (first + r) * small_w as usize * 3;
                widen(&small[start..][..small_w as usize * 3], xs, wide);
            }
        });
        out.resize(row * h as usize, 0);
        let (wide, small_h) = (&self.wide, self.height);
        bands::for_each_band(out, row, 1, |first, band| {
            for (r, out) in band.chunks_exact_mut(row).enumerate() {
                let (y0, y1, ty) = tap((first + r) as u32, small_h, factor);
                let top = &wide[y0 as usize * row..][..row];
                let bottom = &wide[y1 as usize * row..][..row];
                blend_rows(top, bottom, ty, out);
            }
        });
    }
}

/// The box means of small row `sy` of `frame`'s `factor`×`factor` cells into
/// `means` (RGB per cell). Sums are taken in integers, which are exact, so the order
/// of the additions does not matter.
fn cell_means(frame: &Frame, factor: u32, sy: u32, means: &mut [f32]) {
    let fw = frame.width as usize;
    let (f, rows) = (
        factor as usize,
        sy * factor..((sy + 1) * factor).min(frame.height),
    );
    for (cx, mean) in means.chunks_exact_mut(3).enumerate() {
        let (mut acc, mut n) = ([0u32; 3], 0u32);
        for y in rows.clone() {
            // pixels of the cell's part of row y (clipped to what the frame holds)
            let start = 3 * (y as usize * fw + cx * f);
            let end = 3 * (y as usize * fw + ((cx + 1) * f).min(fw));
            let Some(px) = frame.rgb.get(start..end.min(frame.rgb.len())) else {
                continue;
            };
            for p in px.chunks_exact(3) {
                for (a, &v) in acc.iter_mut().zip(p) {
                    *a += u32::from(v);
                }
                n += 1;
            }
        }
        for (m, a) in mean.iter_mut().zip(acc) {
            *m = a as f32 / n.max(1) as f32;
        }
    }
}

/// The two samples of the small copy (of `n` samples) that full-resolution
/// position `i` lies between, and the weight of the second.
fn tap(i: u32, n: u32, factor: u32) -> Tap {
    let p = ((i as f32 + 0.5) / factor as f32 - 0.5).clamp(0.0, (n - 1) as f32);
    let i0 = p as u32;
    (i0, (i0 + 1).min(n - 1), p - i0 as f32)
}

/// One small row (RGB) sampled at every full-resolution column.
fn widen(small: &[f32], xs: &[Tap], wide: &mut [f32]) {
    for (&(x0, x1, tx), out) in xs.iter().zip(wide.chunks_exact_mut(3)) {
        for (c, o) in out.iter_mut().enumerate() {
            let (a, b) = (small[x0 as usize * 3 + c], small[x1 as usize * 3 + c]);
            *o = a * (1.0 - tx) + b * tx;
        }
    }
}

/// Two widened rows mixed with weight `ty` on the second, rounded to bytes.
fn blend_rows(top: &[f32], bottom: &[f32], ty: f32, out: &mut [u8]) {
    for ((o, t), b) in out.iter_mut().zip(top).zip(bottom) {
        *o = round_to_byte(t * (1.0 - ty) + b * ty);
    }
}

/// `x.round() as u8` in lanes the compiler vectorises (`round` is a library call):
/// halves go up, as `round` takes them for the non-negative values here; the
/// fraction `x - trunc(x)` is exact in floats.
#[inline(always)]
fn round_to_byte(x: f32) -> u8 {
    // a NaN fails the comparison, so `x` ends finite and within 0..=255
    let x = if x > 0.0 { x.min(255.0) } else { 0.0 };
    // SAFETY: a finite value within 0..=255 truncates to an i32 (the checked `as`
    // would not vectorise)
    let whole: i32 = unsafe { x.to_int_unchecked() };
    (whole + i32::from(x - whole as f32 >= 0.5)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bands::with_threads;

    /// The blur in floats pixel by pixel, as it was before row bands: the reference.
    fn reference(frame: &Frame, factor: u32) -> Vec<u8> {
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
        let mut blur = Blur {
            factor,
            width,
            height,
            means: sum,
            ..Blur::default()
        };
        blur.smooth();
        let (w, h) = (frame.width, frame.height);
        let f = factor as f32;
        let taps = |i: u32, n: u32| {
            let p = ((i as f32 + 0.5) / f - 0.5).clamp(0.0, (n - 1) as f32);
            let i0 = p as u32;
            (i0, (i0 + 1).min(n - 1), p - i0 as f32)
        };
        let mut out = Vec::new();
        for y in 0..h {
            let (y0, y1, ty) = taps(y, height);
            for x in 0..w {
                let (x0, x1, tx) = taps(x, width);
                for c in 0..3 {
                    let at = |sx: u32, sy: u32| blur.small[(sy * width + sx) as usize * 3 + c];
                    let top = at(x0, y0) * (1.0 - tx) + at(x1, y0) * tx;
                    let bottom = at(x0, y1) * (1.0 - tx) + at(x1, y1) * tx;
                    out.push((top * (1.0 - ty) + bottom * ty).round() as u8);
                }
            }
        }
        out
    }

    #[test]
    fn rounding_to_bytes_is_rounds() {
        let mut x = -3.0f32;
        while x < 260.0 {
            assert_eq!(round_to_byte(x), x.round() as u8, "{x}");
            x = if (0.499..0.501).contains(&x.fract()) {
                x.next_up()
            } else {
                x + 0.0137
            };
        }
        for x in [
            0.5f32.next_down(),
            0.5,
            254.5,
            254.5f32.next_down(),
            255.0,
            1e9,
        ] {
            assert_eq!(round_to_byte(x), x.round() as u8, "{x}");
        }
        assert_eq!(round_to_byte(f32::NAN), 0);
    }

    #[test]
    fn row_bands_on_one_thread_and_two_give_the_reference() {
        let mut bits = crate::test_bits::lcg(3);
        for (w, h) in [(1, 1), (25, 13), (130, 71)] {
            let frame = crate::test_bits::random_frame(&mut bits, w, h);
            let want = reference(&frame, 12);
            for threads in [1, 2] {
                let (mut blur, mut out) = (Blur::default(), vec![1; 7]);
                with_threads(threads, || blur.blur_into(&frame, 12, &mut out));
                assert!(out == want, "{w}x{h} on {threads} threads");
            }
        }
    }
}

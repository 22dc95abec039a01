//! The strong, cheap blur of the background view.

use crate::bands;
use crate::capture::Frame;

/// Fraction bits of the small copy's levels (fixed point).
pub(super) const MEAN_BITS: u32 = 6;
/// Fraction bits of the bilinear weights.
pub(super) const WEIGHT_BITS: u32 = 8;
/// The largest blur factor: its cells' sums in fixed point fit a `u32`.
pub(super) const MAX_FACTOR: u32 = 32;

/// A box-averaged, smoothed small copy of a frame, sampled back bilinearly: a cheap,
/// strong blur (O(pixels), independent of the blur radius). In integers (fixed point),
/// so that the GPU's blur (`kernels/composite.wgsl`) gives the same bytes. Keeps its
/// buffers from frame to frame.
#[derive(Default)]
pub(super) struct Blur {
    factor: u32,
    width: u32,
    height: u32,
    /// The box means of the small copy (× 2^[`MEAN_BITS`]).
    means: Vec<u32>,
    /// The small copy, smoothed (× 2^[`MEAN_BITS`]).
    small: Vec<u32>,
    /// Horizontal taps of each full-resolution column.
    xs: Vec<Tap>,
    /// Each small row widened to full resolution (× 2^(MEAN_BITS + WEIGHT_BITS)).
    wide: Vec<u32>,
}

/// Where a full-resolution column or row samples the small copy: two neighbours and
/// the weight of the second (× 2^[`WEIGHT_BITS`]).
type Tap = (u32, u32, u32);

impl Blur {
    /// Writes the blur of `frame` (RGB, the frame's size) into `out`: box means of
    /// `factor`×`factor` cells (at most [`MAX_FACTOR`]), one 3×3 smoothing pass,
    /// bilinear sampling back.
    pub(super) fn blur_into(&mut self, frame: &Frame, factor: u32, out: &mut Vec<u8>) {
        self.downscale(frame, factor.clamp(1, MAX_FACTOR));
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
        self.means.resize(small_row * self.height as usize, 0);
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
        self.small.resize(src.len(), 0);
        for y in 0..h {
            for x in 0..w {
                let mut acc = [0u32; 3];
                for (dx, dy) in (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (dx, dy))) {
                    let (sx, sy) = ((x + dx).clamp(0, w - 1), (y + dy).clamp(0, h - 1));
                    let j = (sy * w + sx) as usize * 3;
                    for (a, v) in acc.iter_mut().zip(&src[j..j + 3]) {
                        *a += v;
                    }
                }
                let j = (y * w + x) as usize * 3;
                for (dst, a) in self.small[j..j + 3].iter_mut().zip(acc) {
                    *dst = (a + 4) / 9;
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
        self.wide.resize(row * self.height as usize, 0);
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
/// `means` (RGB per cell, × 2^[`MEAN_BITS`], rounded).
fn cell_means(frame: &Frame, factor: u32, sy: u32, means: &mut [u32]) {
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
        let n = n.max(1);
        for (m, a) in mean.iter_mut().zip(acc) {
            *m = ((a << MEAN_BITS) + n / 2) / n;
        }
    }
}

/// The two samples of the small copy (of `n` samples) that full-resolution
/// position `i` lies between, and the weight of the second: position
/// (i + ½) / factor − ½, clamped to the copy, in steps of 1 / (2·factor).
fn tap(i: u32, n: u32, factor: u32) -> Tap {
    let (steps, cell) = ((2 * i + 1).saturating_sub(factor), 2 * factor);
    let i0 = steps / cell;
    if i0 >= n - 1 {
        return (n - 1, n - 1, 0);
    }
    let weight = (((steps % cell) << WEIGHT_BITS) + factor) / cell;
    (i0, i0 + 1, weight)
}

/// One small row (RGB) sampled at every full-resolution column.
fn widen(small: &[u32], xs: &[Tap], wide: &mut [u32]) {
    for (&(x0, x1, tx), out) in xs.iter().zip(wide.chunks_exact_mut(3)) {
        for (c, o) in out.iter_mut().enumerate() {
            let (a, b) = (small[x0 as usize * 3 + c], small[x1 as usize * 3 + c]);
            // a·(1 − tx) + b·tx with one product: exact, and within 0..2^22
            *o = ((a << WEIGHT_BITS) as i32 + (b as i32 - a as i32) * tx as i32) as u32;
        }
    }
}

/// Two widened rows mixed with weight `ty` on the second, rounded to bytes.
fn blend_rows(top: &[u32], bottom: &[u32], ty: u32, out: &mut [u8]) {
    const SHIFT: u32 = MEAN_BITS + 2 * WEIGHT_BITS;
    for ((o, t), b) in out.iter_mut().zip(top).zip(bottom) {
        // t·(1 − ty) + b·ty with one product, as in `widen`: within 0..2^30
        let v = (t << WEIGHT_BITS) as i32 + (*b as i32 - *t as i32) * ty as i32;
        *o = ((v as u32 + (1 << (SHIFT - 1))) >> SHIFT) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bands::with_threads;

    /// The blur pixel by pixel, as it was before row bands: the reference, in the
    /// fixed point of the bands (sampling the small copy they make) and in reals (the
    /// look the fixed point keeps).
    fn reference(frame: &Frame, factor: u32) -> (Vec<u8>, Vec<f32>) {
        let mut blur = Blur::default();
        blur.downscale(frame, factor);
        blur.smooth();
        let (width, height) = (blur.width, blur.height);
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
        let means: Vec<f32> = (0..sum.len())
            .map(|j| sum[j] / count[j / 3].max(1.0))
            .collect();
        let (w, h) = (width as i64, height as i64);
        let mut smooth = vec![0f32; means.len()];
        for (j, s) in smooth.iter_mut().enumerate() {
            let (x, y, c) = ((j / 3) as i64 % w, (j / 3) as i64 / w, j % 3);
            for (dx, dy) in (-1..=1).flat_map(|dy| (-1..=1).map(move |dx| (dx, dy))) {
                let (sx, sy) = ((x + dx).clamp(0, w - 1), (y + dy).clamp(0, h - 1));
                *s += means[(sy * w + sx) as usize * 3 + c] / 9.0;
            }
        }
        let f = factor as f32;
        let real_tap = |i: u32, n: u32| {
            let p = ((i as f32 + 0.5) / f - 0.5).clamp(0.0, (n - 1) as f32);
            let i0 = p as u32;
            (i0, (i0 + 1).min(n - 1), p - i0 as f32)
        };
        let (mut exact, mut real) = (Vec::new(), Vec::new());
        let one = 1 << WEIGHT_BITS;
        for y in 0..frame.height {
            let (y0, y1, ty) = tap(y, height, factor);
            let (ry0, ry1, rty) = real_tap(y, height);
            for x in 0..frame.width {
                let (x0, x1, tx) = tap(x, width, factor);
                let (rx0, rx1, rtx) = real_tap(x, width);
                for c in 0..3 {
                    let at = |sx: u32, sy: u32| blur.small[(sy * width + sx) as usize * 3 + c];
                    let top = at(x0, y0) * (one - tx) + at(x1, y0) * tx;
                    let bottom = at(x0, y1) * (one - tx) + at(x1, y1) * tx;
                    let shift = MEAN_BITS + 2 * WEIGHT_BITS;
                    let v = (top * (one - ty) + bottom * ty + (1 << (shift - 1))) >> shift;
                    exact.push(v as u8);
                    let at = |sx: u32, sy: u32| smooth[(sy * width + sx) as usize * 3 + c];
                    let top = at(rx0, ry0) * (1.0 - rtx) + at(rx1, ry0) * rtx;
                    let bottom = at(rx0, ry1) * (1.0 - rtx) + at(rx1, ry1) * rtx;
                    real.push(top * (1.0 - rty) + bottom * rty);
                }
            }
        }
        (exact, real)
    }

    #[test]
    fn row_bands_on_one_thread_and_two_give_the_reference() {
        let mut bits = crate::test_bits::lcg(3);
        for (w, h) in [(1, 1), (25, 13), (130, 71)] {
            let frame = crate::test_bits::random_frame(&mut bits, w, h);
            let (exact, real) = reference(&frame, 12);
            for threads in [1, 2] {
                let (mut blur, mut out) = (Blur::default(), vec![1; 7]);
                with_threads(threads, || blur.blur_into(&frame, 12, &mut out));
                assert!(out == exact, "{w}x{h} on {threads} threads");
            }
            for (i, (&e, &r)) in exact.iter().zip(&real).enumerate() {
                assert!(
                    (f32::from(e) - r).abs() < 1.0,
                    "{w}x{h}, byte {i}: {e} against {r}"
                );
            }
        }
    }
}

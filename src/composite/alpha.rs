//! The soft alpha of a binary mask: a guided filter (He, Sun and Tang) of the mask
//! with the frame's luminance as guide, so that the matte's edge follows the image's
//! edges (hair, outlines) where the cut runs a pixel or two beside them. Only the
//! band around the cut is filtered; everywhere else the alpha is the mask itself,
//! so the mask stays the decision and the filter only softens its edge.

use crate::bands;
use crate::capture::Frame;
use crate::grid::Mask;
use std::ops::Range;

/// Radius of the filter's square windows in pixels: the band where the alpha may
/// be soft reaches twice this far from the cut.
pub const RADIUS: usize = 4;
/// Regularisation of the filter in grey levels squared: a window whose grey levels
/// vary less than this follows the mask's blur rather than the image.
pub const EPSILON: u32 = 100;
/// Fraction bits of the windows' coefficients `a` and `b` (fixed point): integers, so
/// that the GPU's filter (`kernels/composite.wgsl`) gives the same bytes; small enough
/// that every sum and product of the filter fits an `i32`.
pub(super) const COEF_BITS: u32 = 20;

/// The alpha (0 background … 255 foreground) of each pixel of `mask`, soft near the
/// cut along `frame`'s edges. A frame of another size gives the mask itself.
///
/// Only tiles within reach of the cut are filtered, each from sums over its own
/// neighbourhood: the cost follows the outline's length, not the frame's area.
pub fn soft_alpha(frame: &Frame, mask: &Mask) -> Vec<u8> {
    let mut buffers = AlphaBuffers::default();
    buffers.compute(frame, mask);
    buffers.alpha
}

/// [`soft_alpha`]'s buffers, kept from frame to frame: a stream of frames of one size
/// is filtered without allocating. The bands of tile rows run on every core.
#[derive(Default)]
pub struct AlphaBuffers {
    alpha: Vec<u8>,
    /// Per tile: 1 all background, 2 all foreground, 3 both.
    kinds: Vec<u8>,
}

impl AlphaBuffers {
    /// The soft alpha of `mask` along `frame`'s edges, as [`soft_alpha`] gives it.
    pub fn compute(&mut self, frame: &Frame, mask: &Mask) -> &[u8] {
        let (w, h) = (mask.width as usize, mask.height as usize);
        if (frame.width, frame.height) != (mask.width, mask.height)
            || mask.data.len() != w * h
            || frame.rgb.len() < 3 * w * h
        {
            self.alpha.clone_from(&mask.data);
            return &self.alpha;
        }
        let (cols, rows) = (w.div_ceil(TILE), h.div_ceil(TILE));
        self.kinds.clear();
        self.kinds.resize(cols * rows, 0);
        bands::for_each_band(&mut self.kinds, cols, 1, |first, band| {
            for (r, kinds) in band.chunks_exact_mut(cols).enumerate() {
                tile_kinds(mask, first + r, kinds);
            }
        });
        self.alpha.resize(w * h, 0);
        let kinds = &self.kinds;
        bands::for_each_band(&mut self.alpha, w * TILE, 1, |first, band| {
            band.copy_from_slice(&mask.data[first * w * TILE..][..band.len()]);
            SCRATCH.with_borrow_mut(|scratch| {
                for ty in first..first + band.len().div_ceil(w * TILE) {
                    filter_tile_row(frame, mask, kinds, ty, scratch, (first * w * TILE, band));
                }
            });
        });
        &self.alpha
    }
}

thread_local! {
    /// Each thread's buffers of one tile's filter, kept from tile to tile and frame to
    /// frame.
    static SCRATCH: std::cell::RefCell<Scratch> = std::cell::RefCell::default();
}

/// The kinds of the tiles of tile row `ty` (1 all background, 2 all foreground, 3
/// both) into `kinds`.
fn tile_kinds(mask: &Mask, ty: usize, kinds: &mut [u8]) {
    let (w, h) = (mask.width as usize, mask.height as usize);
    for y in ty * TILE..((ty + 1) * TILE).min(h) {
        let row = &mask.data[y * w..][..w];
        for (kind, run) in kinds.iter_mut().zip(row.chunks(TILE)) {
            let (background, foreground) = (run.contains(&0), run.iter().any(|&m| m != 0));
            *kind |= u8::from(background) | u8::from(foreground) << 1;
        }
    }
}

/// Filters the tiles of tile row `ty` that lie within reach of the cut into
/// `alpha`, the rows of the image from index `offset` on.
fn filter_tile_row(
    frame: &Frame,
    mask: &Mask,
    kinds: &[u8],
    ty: usize,
    scratch: &mut Scratch,
    (offset, alpha): (usize, &mut [u8]),
) {
    let (w, h) = (mask.width as usize, mask.height as usize);
    let (cols, rows) = (w.div_ceil(TILE), h.div_ceil(TILE));
    for tx in 0..cols {
        // the filter reaches 2·RADIUS < TILE: a tile whose neighbours and itself
        // hold one label only keeps the mask
        let mut seen = 0;
        for ny in ty.saturating_sub(1)..(ty + 2).min(rows) {
            for nx in tx.saturating_sub(1)..(tx + 2).min(cols) {
                seen |= kinds[ny * cols + nx];
            }
        }
        if seen == 3 {
            let xs = tx * TILE..((tx + 1) * TILE).min(w);
            let ys = ty * TILE..((ty + 1) * TILE).min(h);
            scratch.filter_tile(frame, mask, (xs, ys), (offset, alpha));
        }
    }
}

/// Side of the tiles filtered one at a time.
const TILE: usize = 32;

const _: () = assert!(2 * RADIUS < TILE);

/// Buffers of one tile's filter, kept from tile to tile.
#[derive(Default)]
struct Scratch {
    grey: Vec<u64>,
    fg: Vec<u64>,
    a: Vec<i32>,
    b: Vec<i32>,
    /// Summed-area tables of the crop: mask, grey, grey², grey × mask.
    sums: [Integral<u64>; 4],
}

impl Scratch {
    /// Writes the alpha of the pixels of tile `(xs, ys)` that lie within reach of the
    /// cut, from the frame and mask around it (clipped to the image), into `alpha`:
    /// the image's rows from pixel index `offset` on, the tile's rows among them.
    fn filter_tile(
        &mut self,
        frame: &Frame,
        mask: &Mask,
        (xs, ys): (Range<usize>, Range<usize>),
        (offset, alpha): (usize, &mut [u8]),
    ) {
        let (w, h) = (mask.width as usize, mask.height as usize);
        let reach = 2 * RADIUS;
        // the crop: the tile and every pixel its windows of windows read
        let cx = xs.start.saturating_sub(reach)..(xs.end + reach).min(w);
        let cy = ys.start.saturating_sub(reach)..(ys.end + reach).min(h);
        let (cw, ch) = (cx.len(), cy.len());
        let at = |i: usize| (cy.start + i / cw) * w + cx.start + i % cw;
        self.grey.clear();
        self.grey
            .extend((0..cw * ch).map(|i| luma(&frame.rgb[3 * at(i)..3 * at(i) + 3])));
        self.fg.clear();
        self.fg
            .extend((0..cw * ch).map(|i| u64::from(mask.data[at(i)] != 0)));
        let (grey, fg) = (&self.grey, &self.fg);
        let [sum_p, sum_i, sum_ii, sum_ip] = &mut self.sums;
        sum_p.fill(cw, ch, |i| fg[i]);
        sum_i.fill(cw, ch, |i| grey[i]);
        sum_ii.fill(cw, ch, |i| grey[i] * grey[i]);
        sum_ip.fill(cw, ch, |i| grey[i] * fg[i]);
        let (sum_p, sum_i, sum_ii, sum_ip) = (&*sum_p, &*sum_i, &*sum_ii, &*sum_ip);
        let near_cut = |x: usize, y: usize, r: usize| {
            let (n, count) = sum_p.window(x, y, r);
            n != 0 && n != count as u64
        };
        // Per window: the linear model p ≈ a·I + b. Computed on the crop's pixels
        // within RADIUS of the tile.
        self.a.clear();
        self.a.resize(cw * ch, 0);
        self.b.clear();
        self.b.resize(cw * ch, 0);
        let (x0, y0) = (xs.start - cx.start, ys.start - cy.start);
        let (lx, ly) = (x0.saturating_sub(RADIUS), y0.saturating_sub(RADIUS));
        let hx = (x0 + xs.len() + RADIUS).min(cw);
        let hy = (y0 + ys.len() + RADIUS).min(ch);
        for y in ly..hy {
            for x in lx..hx {
                let (p, n) = sum_p.window(x, y, RADIUS);
                (self.a[y * cw + x], self.b[y * cw + x]) = if p == 0 || p == n as u64 {
                    one_label(p)
                } else {
                    let sum = |s: &Integral<u64>| s.window(x, y, RADIUS).0 as u32;
                    let sums = [p as u32, sum(sum_i), sum(sum_ii), sum(sum_ip)];
                    coefficients(n as u32, sums)
                };
            }
        }
        for y in y0..y0 + ys.len() {
            for x in x0..x0 + xs.len() {
                if !near_cut(x, y, reach) {
                    continue;
                }
                let (sa, sb, m) = window_sums(&self.a, &self.b, cw, ch, x, y);
                alpha[at(y * cw + x) - offset] = blend_alpha(sa, sb, grey[y * cw + x] as i32, m);
            }
        }
    }
}

/// The linear model p ≈ a·I + b of a window of `n` pixels from its sums of p, I, I²
/// and I·p, in fixed point (× 2^[`COEF_BITS`], a rounded half away from zero): the
/// guided filter's a = cov / (var + ε), b = mean p − a · mean I, in integers scaled by
/// n². A window of one label gives a = 0, b = its label.
pub(super) fn coefficients(n: u32, [p, si, sii, sip]: [u32; 4]) -> (i32, i32) {
    if p == 0 || p == n {
        return one_label(p.into());
    }
    // n²·var ≥ 0 and |n²·cov| ≤ n²·√var / 2 (Cauchy–Schwarz): |a| ≤ 1/40, so a · Σ I
    // fits an i32
    let var = n * sii - si * si;
    let cov = (n * sip) as i32 - (si * p) as i32;
    let scaled = fraction(cov.unsigned_abs(), var + n * n * EPSILON) as i32;
    let a = if cov < 0 { -scaled } else { scaled };
    let b = div_round(((p << COEF_BITS) as i32) - a * si as i32, n as i32);
    (a, b)
}

/// The coefficients of a window of one label: a = 0, b = the label (`p`, the window's
/// foreground pixels, is 0 or all of them).
fn one_label(p: u64) -> (i32, i32) {
    (0, i32::from(p != 0) << COEF_BITS)
}

/// `num / den` in fixed point (× 2^[`COEF_BITS`]), rounded half up, for `num < den`;
/// the shader's long division gives the same quotient.
fn fraction(num: u32, den: u32) -> u32 {
    let x = u64::from(num) << COEF_BITS;
    let (q, r) = (x / u64::from(den), x % u64::from(den));
    q as u32 + u32::from(2 * r >= u64::from(den))
}

/// `x / n` rounded half away from zero (`n > 0`).
fn div_round(x: i32, n: i32) -> i32 {
    let q = (x.unsigned_abs() + n as u32 / 2) / n as u32;
    if x < 0 { -(q as i32) } else { q as i32 }
}

/// The alpha byte of a pixel of grey level `grey` from the sums `sa`, `sb` of the
/// coefficients of the `m` windows that hold it: (Σa · I + Σb) / m, clamped to 0..1,
/// in 255ths. Wrapping arithmetic, as the shader's.
pub(super) fn blend_alpha(sa: i32, sb: i32, grey: i32, m: u32) -> u8 {
    let v = sa.wrapping_mul(grey).wrapping_add(sb);
    let v = v.clamp(0, (m << COEF_BITS) as i32) as u32;
    let mean = (v + m / 2) / m;
    ((mean * 255 + (1 << (COEF_BITS - 1))) >> COEF_BITS) as u8
}

/// Sums of `a` and `b` over the window of radius [`RADIUS`] around (x, y) of a
/// `cw`×`ch` crop (clipped), and its pixel count.
fn window_sums(a: &[i32], b: &[i32], cw: usize, ch: usize, x: usize, y: usize) -> (i32, i32, u32) {
    let (x0, x1) = (x.saturating_sub(RADIUS), (x + RADIUS + 1).min(cw));
    let (y0, y1) = (y.saturating_sub(RADIUS), (y + RADIUS + 1).min(ch));
    let (mut sa, mut sb) = (0, 0);
    for yy in y0..y1 {
        let row = yy * cw;
        sa += a[row + x0..row + x1].iter().sum::<i32>();
        sb += b[row + x0..row + x1].iter().sum::<i32>();
    }
    (sa, sb, ((x1 - x0) * (y1 - y0)) as u32)
}

/// Grey level of an RGB pixel (BT.601 weights).
fn luma(rgb: &[u8]) -> u64 {
    (u64::from(rgb[0]) * 77 + u64::from(rgb[1]) * 150 + u64::from(rgb[2]) * 29) >> 8
}

/// Summed-area table: the sum over any window in four look-ups.
#[derive(Default)]
struct Integral<T> {
    width: usize,
    height: usize,
    /// (width + 1) × (height + 1) running sums, a zero row and column first.
    sums: Vec<T>,
}

impl<T> Integral<T>
where
    T: Copy + Default + std::ops::Add<Output = T> + std::ops::Sub<Output = T>,
{
    #[cfg(test)]
    fn new(width: usize, height: usize, value: impl Fn(usize) -> T) -> Self {
        let mut table = Self::default();
        table.fill(width, height, value);
        table
    }

    /// Makes this the table of a `width`×`height` image of `value`s, reusing its memory.
    fn fill(&mut self, width: usize, height: usize, value: impl Fn(usize) -> T) {
        let stride = width + 1;
        (self.width, self.height) = (width, height);
        self.sums.clear();
        self.sums.resize(stride * (height + 1), T::default());
        let sums = &mut self.sums;
        for y in 0..height {
            let mut row = T::default();
            for x in 0..width {
                row = row + value(y * width + x);
                sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row;
            }
        }
    }

    /// Sum and pixel count of the window of radius `r` around (x, y), clipped to the
    /// image.
    fn window(&self, x: usize, y: usize, r: usize) -> (T, usize) {
        let (x0, x1) = (x.saturating_sub(r), (x + r + 1).min(self.width));
        let (y0, y1) = (y.saturating_sub(r), (y + r + 1).min(self.height));
        let s = |x: usize, y: usize| self.sums[y * (self.width + 1) + x];
        // in this order no partial result falls below zero (unsigned sums)
        let sum = s(x1, y1) + s(x0, y0) - s(x0, y1) - s(x1, y0);
        (sum, (x1 - x0) * (y1 - y0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter over whole-frame sums, as it was before tiles: the reference, in the
    /// fixed point of the tiles and in reals (the look the fixed point keeps).
    fn reference(frame: &Frame, mask: &Mask) -> (Vec<u8>, Vec<u8>) {
        let (w, h) = (mask.width as usize, mask.height as usize);
        let grey: Vec<u64> = frame.rgb.chunks_exact(3).map(luma).collect();
        let fg: Vec<u64> = mask.data.iter().map(|&v| u64::from(v != 0)).collect();
        let sum_p = Integral::new(w, h, |i| fg[i]);
        let near_cut = |x: usize, y: usize, r: usize| {
            let (n, count) = sum_p.window(x, y, r);
            n != 0 && n != count as u64
        };
        let sum_i = Integral::new(w, h, |i| grey[i]);
        let sum_ii = Integral::new(w, h, |i| grey[i] * grey[i]);
        let sum_ip = Integral::new(w, h, |i| grey[i] * fg[i]);
        // Per window: the linear model p ≈ a·I + b; a uniform window gives a = 0, b = p.
        let (mut a, mut b) = (vec![0i64; w * h], vec![0i64; w * h]);
        let (mut ra, mut rb) = (vec![0f64; w * h], vec![0f64; w * h]);
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                let sum = |s: &Integral<u64>| s.window(x, y, RADIUS).0;
                let (p, n) = sum_p.window(x, y, RADIUS);
                let sums = [p, sum(&sum_i), sum(&sum_ii), sum(&sum_ip)].map(|s| s as u32);
                let (ai, bi) = coefficients(n as u32, sums);
                (a[i], b[i]) = (ai.into(), bi.into());
                if !near_cut(x, y, RADIUS) {
                    rb[i] = fg[i] as f64;
                    continue;
                }
                let n = n as f64;
                let mean = |s: &Integral<u64>| sum(s) as f64 / n;
                let (mi, mp) = (mean(&sum_i), p as f64 / n);
                let var = mean(&sum_ii) - mi * mi;
                let cov = mean(&sum_ip) - mi * mp;
                ra[i] = cov / (var + f64::from(EPSILON));
                rb[i] = mp - ra[i] * mi;
            }
        }
        let (sum_a, sum_b) = (Integral::new(w, h, |i| a[i]), Integral::new(w, h, |i| b[i]));
        let (sum_ra, sum_rb) = (
            Integral::new(w, h, |i| ra[i]),
            Integral::new(w, h, |i| rb[i]),
        );
        let (mut alpha, mut real) = (mask.data.clone(), mask.data.clone());
        for y in 0..h {
            for x in 0..w {
                if !near_cut(x, y, 2 * RADIUS) {
                    continue;
                }
                let i = y * w + x;
                let (sa, m) = sum_a.window(x, y, RADIUS);
                let sb = sum_b.window(x, y, RADIUS).0;
                alpha[i] = blend_alpha(sa as i32, sb as i32, grey[i] as i32, m as u32);
                let value = (sum_ra.window(x, y, RADIUS).0 * grey[i] as f64
                    + sum_rb.window(x, y, RADIUS).0)
                    / m as f64;
                real[i] = (value.clamp(0.0, 1.0) * 255.0).round() as u8;
            }
        }
        (alpha, real)
    }

    #[test]
    fn tiles_give_the_whole_frame_filter() {
        let mut bits = crate::test_bits::lcg(99);
        let mut next = move || (bits() >> 33) as u32;
        for (w, h) in [(7, 5), (70, 45), (100, 80), (150, 131)] {
            let frame = crate::test_bits::random_frame(&mut || u64::from(next()) << 32, w, h);
            let (cx, cy, r) = (next() % w, next() % h, 3 + next() % 30);
            let mask = Mask::from_fn(w, h, |i| {
                let (x, y) = (i as u32 % w, i as u32 / w);
                let (dx, dy) = (x as i64 - cx as i64, y as i64 - cy as i64);
                dx * dx + dy * dy <= i64::from(r * r) || next() % 50 == 0
            });
            let fast = soft_alpha(&frame, &mask);
            let (exact, real) = reference(&frame, &mask);
            assert!(fast == exact, "{w}x{h}");
            let mut buffers = AlphaBuffers::default();
            for threads in [1, 2] {
                let banded =
                    crate::bands::with_threads(threads, || buffers.compute(&frame, &mask).to_vec());
                assert!(banded == fast, "{w}x{h} on {threads} threads");
            }
            for (i, (&f, &s)) in fast.iter().zip(&real).enumerate() {
                assert!(f.abs_diff(s) <= 1, "{w}x{h}, pixel {i}: {f} against {s}");
            }
        }
    }
}

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
pub const EPSILON: f64 = 100.0;

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
    a: Vec<f64>,
    b: Vec<f64>,
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
        // Per window: the linear model p ≈ a·I + b; a uniform window gives a = 0,
        // b = p. Computed on the crop's pixels within RADIUS of the tile.
        self.a.clear();
        self.a.resize(cw * ch, 0.0);
        self.b.clear();
        self.b.resize(cw * ch, 0.0);
        let (x0, y0) = (xs.start - cx.start, ys.start - cy.start);
        let (lx, ly) = (x0.saturating_sub(RADIUS), y0.saturating_sub(RADIUS));
        let hx = (x0 + xs.len() + RADIUS).min(cw);
        let hy = (y0 + ys.len() + RADIUS).min(ch);
        for y in ly..hy {
            for x in lx..hx {
                let i = y * cw + x;
                if !near_cut(x, y, RADIUS) {
                    self.b[i] = fg[i] as f64;
                    continue;
                }
                let (p, n) = sum_p.window(x, y, RADIUS);
                let n = n as f64;
                let mean = |s: &Integral<u64>| s.window(x, y, RADIUS).0 as f64 / n;
                let (mi, mp) = (mean(sum_i), p as f64 / n);
                let var = mean(sum_ii) - mi * mi;
                let cov = mean(sum_ip) - mi * mp;
                self.a[i] = cov / (var + EPSILON);
                self.b[i] = mp - self.a[i] * mi;
            }
        }
        for y in y0..y0 + ys.len() {
            for x in x0..x0 + xs.len() {
                if !near_cut(x, y, reach) {
                    continue;
                }
                let (sa, sb, n) = window_sums(&self.a, &self.b, cw, ch, x, y);
                let value = (sa * grey[y * cw + x] as f64 + sb) / n as f64;
                alpha[at(y * cw + x) - offset] = (value.clamp(0.0, 1.0) * 255.0).round() as u8;
            }
        }
    }
}

/// Sums of `a` and `b` over the window of radius [`RADIUS`] around (x, y) of a
/// `cw`×`ch` crop (clipped), and its pixel count, added in one fixed order.
fn window_sums(
    a: &[f64],
    b: &[f64],
    cw: usize,
    ch: usize,
    x: usize,
    y: usize,
) -> (f64, f64, usize) {
    let (x0, x1) = (x.saturating_sub(RADIUS), (x + RADIUS + 1).min(cw));
    let (y0, y1) = (y.saturating_sub(RADIUS), (y + RADIUS + 1).min(ch));
    let (mut sa, mut sb) = (0.0, 0.0);
    for yy in y0..y1 {
        let row = yy * cw;
        sa += a[row + x0..row + x1].iter().sum::<f64>();
        sb += b[row + x0..row + x1].iter().sum::<f64>();
    }
    (sa, sb, (x1 - x0) * (y1 - y0))
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

    /// The filter over whole-frame sums, as it was before tiles: the reference.
    /// The alpha (0 background … 255 foreground) of each pixel of `mask`, soft near the
    /// cut along `frame`'s edges. A frame of another size gives the mask itself.
    fn reference(frame: &Frame, mask: &Mask) -> Vec<u8> {
        if (frame.width, frame.height) != (mask.width, mask.height) {
            return mask.data.clone();
        }
        let (w, h) = (mask.width as usize, mask.height as usize);
        let grey: Vec<u64> = frame.rgb.chunks_exact(3).map(luma).collect();
        let fg: Vec<u64> = mask.data.iter().map(|&v| u64::from(v != 0)).collect();
        let sum_p = Integral::new(w, h, |i| fg[i]);
        let near_cut = |x: usize, y: usize, r: usize| {
            let (n, count) = sum_p.window(x, y, r);
            n != 0 && n != count as u64
        };
        let (all, count) = sum_p.window(0, 0, w.max(h));
        if all == 0 || all == count as u64 {
            return mask.data.clone();
        }
        let sum_i = Integral::new(w, h, |i| grey[i]);
        let sum_ii = Integral::new(w, h, |i| grey[i] * grey[i]);
        let sum_ip = Integral::new(w, h, |i| grey[i] * fg[i]);
        // Per window: the linear model p ≈ a·I + b; a uniform window gives a = 0, b = p.
        let mut a = vec![0f64; w * h];
        let mut b = vec![0f64; w * h];
        for y in 0..h {
            for x in 0..w {
                let i = y * w + x;
                if !near_cut(x, y, RADIUS) {
                    b[i] = fg[i] as f64;
                    continue;
                }
                let (p, n) = sum_p.window(x, y, RADIUS);
                let n = n as f64;
                let mean = |s: &Integral<u64>| s.window(x, y, RADIUS).0 as f64 / n;
                let (mi, mp) = (mean(&sum_i), p as f64 / n);
                let var = mean(&sum_ii) - mi * mi;
                let cov = mean(&sum_ip) - mi * mp;
                a[i] = cov / (var + EPSILON);
                b[i] = mp - a[i] * mi;
            }
        }
        let sum_a = Integral::new(w, h, |i| a[i]);
        let sum_b = Integral::new(w, h, |i| b[i]);
        let mut alpha = mask.data.clone();
        for y in 0..h {
            for x in 0..w {
                if !near_cut(x, y, 2 * RADIUS) {
                    continue;
                }
                let i = y * w + x;
                let (sa, n) = sum_a.window(x, y, RADIUS);
                let (sb, _) = sum_b.window(x, y, RADIUS);
                let value = (sa * grey[i] as f64 + sb) / n as f64;
                alpha[i] = (value.clamp(0.0, 1.0) * 255.0).round() as u8;
            }
        }
        alpha
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
            let (fast, slow) = (soft_alpha(&frame, &mask), reference(&frame, &mask));
            let mut buffers = AlphaBuffers::default();
            for threads in [1, 2] {
                let banded =
                    crate::bands::with_threads(threads, || buffers.compute(&frame, &mask).to_vec());
                assert!(banded == fast, "{w}x{h} on {threads} threads");
            }
            for (i, (&f, &s)) in fast.iter().zip(&slow).enumerate() {
                assert!(f.abs_diff(s) <= 1, "{w}x{h}, pixel {i}: {f} against {s}");
            }
        }
    }
}

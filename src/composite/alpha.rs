//! The soft alpha of a binary mask: a guided filter (He, Sun and Tang) of the mask
//! with the frame's luminance as guide, so that the matte's edge follows the image's
//! edges (hair, outlines) where the cut runs a pixel or two beside them. Only the
//! band around the cut is filtered; everywhere else the alpha is the mask itself,
//! so the mask stays the decision and the filter only softens its edge.

use crate::capture::Frame;
use crate::grid::Mask;

/// Radius of the filter's square windows in pixels: the band where the alpha may
/// be soft reaches twice this far from the cut.
pub const RADIUS: usize = 4;
/// Regularisation of the filter in grey levels squared: a window whose grey levels
/// vary less than this follows the mask's blur rather than the image.
pub const EPSILON: f64 = 100.0;

/// The alpha (0 background … 255 foreground) of each pixel of `mask`, soft near the
/// cut along `frame`'s edges. A frame of another size gives the mask itself.
pub fn soft_alpha(frame: &Frame, mask: &Mask) -> Vec<u8> {
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

/// Grey level of an RGB pixel (BT.601 weights).
fn luma(rgb: &[u8]) -> u64 {
    (u64::from(rgb[0]) * 77 + u64::from(rgb[1]) * 150 + u64::from(rgb[2]) * 29) >> 8
}

/// Summed-area table: the sum over any window in four look-ups.
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
    fn new(width: usize, height: usize, value: impl Fn(usize) -> T) -> Self {
        let stride = width + 1;
        let mut sums = vec![T::default(); stride * (height + 1)];
        for y in 0..height {
            let mut row = T::default();
            for x in 0..width {
                row = row + value(y * width + x);
                sums[(y + 1) * stride + x + 1] = sums[y * stride + x + 1] + row;
            }
        }
        Self {
            width,
            height,
            sums,
        }
    }

    /// Sum and pixel count of the window of radius `r` around (x, y), clipped to the
    /// image.
    fn window(&self, x: usize, y: usize, r: usize) -> (T, usize) {
        let (x0, x1) = (x.saturating_sub(r), (x + r + 1).min(self.width));
        let (y0, y1) = (y.saturating_sub(r), (y + r + 1).min(self.height));
        let s = |x: usize, y: usize| self.sums[y * (self.width + 1) + x];
        let sum = s(x1, y1) - s(x0, y1) - s(x1, y0) + s(x0, y0);
        (sum, (x1 - x0) * (y1 - y0))
    }
}

//! A lower working resolution for machines that cannot keep up: the frame is cut at
//! 1/k of its width and height (each pixel the mean of a k×k block), and the mask is
//! brought back to full size along the full frame's edges with the composite's guided
//! filter, so its outline follows the picture rather than the coarse grid.

use crate::capture::Frame;
use crate::composite::alpha::soft_alpha;
use crate::grid::Mask;

/// Largest reduction offered: past it a webcam frame is too coarse to cut.
pub const MAX_WORKING_SCALE: u32 = 4;

/// The size a `width`×`height` frame is cut at with reduction `scale` (1 = full
/// size); `None` where the frame would be too small to reduce.
pub fn working_size(width: u32, height: u32, scale: u32) -> Option<(u32, u32)> {
    let scale = scale.clamp(1, MAX_WORKING_SCALE);
    let (w, h) = (width / scale, height / scale);
    (scale > 1 && w >= 16 && h >= 16).then_some((w, h))
}

/// `frame` reduced to `size` (from [`working_size`] with `scale`): each pixel the rounded
/// mean of its `scale`×`scale` block (the right and bottom remainders are left out).
pub fn reduce(frame: &Frame, scale: u32, (w, h): (u32, u32), out: &mut Frame) {
    let (k, width) = (scale as usize, frame.width as usize);
    let area = (k * k) as u32;
    out.rgb.clear();
    out.rgb.reserve(w as usize * h as usize * 3);
    let mut sums = vec![0u32; 3 * w as usize];
    for y in 0..h as usize {
        sums.fill(0);
        for row in frame.rgb[3 * y * k * width..]
            .chunks_exact(3 * width)
            .take(k)
        {
            for (x, sum) in sums.chunks_exact_mut(3).enumerate() {
                for px in row[3 * x * k..3 * (x + 1) * k].chunks_exact(3) {
                    for c in 0..3 {
                        sum[c] += u32::from(px[c]);
                    }
                }
            }
        }
        out.rgb
            .extend(sums.iter().map(|&s| ((s + area / 2) / area) as u8));
    }
    (out.width, out.height) = (w, h);
    (out.timestamp, out.index) = (frame.timestamp, frame.index);
}

/// The mask cut at reduced size brought back to `frame`'s size: each pixel takes its
/// block's label, then the guided filter moves the outline onto the frame's edges
/// (foreground where the filtered alpha reaches one half).
pub fn restore(mask: &Mask, frame: &Frame, scale: u32) -> Mask {
    let k = scale.max(1);
    let (mw, mh) = (mask.width.max(1), mask.height.max(1));
    let coarse = Mask::from_fn(frame.width, frame.height, |i| {
        let (x, y) = (i as u32 % frame.width, i as u32 / frame.width);
        let (sx, sy) = ((x / k).min(mw - 1), (y / k).min(mh - 1));
        mask.is_source((sy * mask.width + sx) as usize)
    });
    let alpha = soft_alpha(frame, &coarse);
    let mut mask = coarse;
    for (m, &a) in mask.data.iter_mut().zip(&alpha) {
        *m = if a >= 128 { 255 } else { 0 };
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn frame(width: u32, height: u32, pixel: impl Fn(u32, u32) -> [u8; 3]) -> Frame {
        Frame {
            width,
            height,
            rgb: (0..width * height)
                .flat_map(|i| pixel(i % width, i / width))
                .collect(),
            timestamp: Duration::ZERO,
            index: 3,
        }
    }

    #[test]
    fn sizes_are_reduced_within_bounds() {
        assert_eq!(working_size(640, 480, 2), Some((320, 240)));
        assert_eq!(working_size(641, 481, 3), Some((213, 160)));
        assert_eq!(working_size(640, 480, 1), None);
        assert_eq!(working_size(40, 40, 4), None, "too small to reduce");
        assert_eq!(working_size(640, 480, 9), Some((160, 120)), "at most 4");
    }

    #[test]
    fn reduction_averages_blocks() {
        let big = frame(5, 4, |x, y| [(10 * x) as u8, (10 * y) as u8, 7]);
        let mut small = frame(1, 1, |_, _| [0; 3]);
        reduce(&big, 2, (2, 2), &mut small);
        assert_eq!((small.width, small.height, small.index), (2, 2, 3));
        // block (0,0): x 0,10 → 5; y 0,10 → 5
        assert_eq!(small.rgb[..3], [5, 5, 7]);
        // block (1,1): x 20,30 → 25; y 20,30 → 25
        assert_eq!(small.rgb[9..12], [25, 25, 7]);
    }

    #[test]
    fn the_restored_outline_follows_the_frames_edge() {
        // a bright disk on a dark ground; the coarse mask's blocks are 4 pixels wide
        let inside = |x: u32, y: u32| {
            let (dx, dy) = (x as i64 - 40, y as i64 - 30);
            dx * dx + dy * dy <= 15 * 15
        };
        let big = frame(80, 60, |x, y| if inside(x, y) { [220; 3] } else { [30; 3] });
        let mut small = frame(1, 1, |_, _| [0; 3]);
        reduce(&big, 4, (20, 15), &mut small);
        let coarse = Mask::from_fn(20, 15, |i| small.rgb[3 * i] >= 125);
        let full = restore(&coarse, &big, 4);
        assert_eq!((full.width, full.height), (80, 60));
        let wrong = (0..80 * 60)
            .filter(|&i| full.is_source(i as usize) != inside(i % 80, i / 80))
            .count();
        let blocky = (0..80 * 60)
            .filter(|&i| {
                coarse.is_source(((i / 80 / 4).min(14) * 20 + (i % 80 / 4).min(19)) as usize)
                    != inside(i % 80, i / 80)
            })
            .count();
        assert!(
            wrong * 2 < blocky,
            "{wrong} pixels wrong, {blocky} in blocks"
        );
    }
}

//! Exact problem reduction for densely seeded frames (trimaps): only the bounding box
//! of the unconstrained pixels, grown by one pixel, needs to be cut.
//!
//! Why it is exact: every pixel outside the box is seeded, and so is the box's outer
//! ring (or it lies on the frame border). Arcs between two pixels of the same seed
//! label are never cut, arcs between opposite seeds are always cut, so neither
//! depends on the cut; everything that does lies inside the box. Cutting the box with
//! its own seeds gives the frame's minimum cut up to a constant in the flow value.

use super::seeds::{SeedLabel, Seeds};
use crate::grid::Mask;

/// A rectangle of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Region {
    /// Left column.
    pub x: u32,
    /// Top row.
    pub y: u32,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

impl Region {
    /// The bounding box of the unknown pixels grown by one pixel (clipped to the
    /// frame), or `None` when no pixel is unknown.
    pub fn around_unknown(seeds: &Seeds) -> Option<Self> {
        let w = seeds.width as usize;
        let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
        for (y, row) in seeds.labels.chunks_exact(w).enumerate() {
            let first = row.iter().position(|&l| l == SeedLabel::Unknown);
            if let Some(first) = first {
                let last = row
                    .iter()
                    .rposition(|&l| l == SeedLabel::Unknown)
                    .unwrap_or(first);
                x0 = x0.min(first);
                x1 = x1.max(last);
                y0 = y0.min(y);
                y1 = y1.max(y);
            }
        }
        if x0 == usize::MAX {
            return None;
        }
        let x0 = x0.saturating_sub(1);
        let y0 = y0.saturating_sub(1);
        let x1 = (x1 + 1).min(w - 1);
        let y1 = (y1 + 1).min(seeds.height as usize - 1);
        Some(Self {
            x: x0 as u32,
            y: y0 as u32,
            width: (x1 - x0 + 1) as u32,
            height: (y1 - y0 + 1) as u32,
        })
    }

    /// Whether the region is the whole `width`×`height` frame.
    pub fn is_whole(&self, width: u32, height: u32) -> bool {
        *self
            == Self {
                x: 0,
                y: 0,
                width,
                height,
            }
    }

    /// Number of pixels.
    pub fn pixels(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Row-major index ranges of the region's rows in a frame `frame_width` wide.
    fn rows(&self, frame_width: u32) -> impl Iterator<Item = std::ops::Range<usize>> + '_ {
        let fw = frame_width as usize;
        (self.y as usize..(self.y + self.height) as usize).map(move |y| {
            let start = y * fw + self.x as usize;
            start..start + self.width as usize
        })
    }

    /// Copies the region's RGB bytes out of a frame `frame_width` wide.
    pub fn crop_rgb(&self, rgb: &[u8], frame_width: u32, out: &mut Vec<u8>) {
        out.clear();
        for r in self.rows(frame_width) {
            out.extend_from_slice(&rgb[3 * r.start..3 * r.end]);
        }
    }

    /// The region's seeds.
    pub fn crop_seeds(&self, seeds: &Seeds) -> Seeds {
        let mut labels = Vec::with_capacity(self.pixels());
        for r in self.rows(seeds.width) {
            labels.extend_from_slice(&seeds.labels[r]);
        }
        Seeds {
            width: self.width,
            height: self.height,
            labels,
        }
    }

    /// The frame's mask: the region's mask inside, the seeds' labels outside.
    pub fn paste(&self, part: &Mask, seeds: &Seeds) -> Mask {
        let mut mask = Mask::from_fn(seeds.width, seeds.height, |i| {
            seeds.labels[i] == SeedLabel::Foreground
        });
        for (r, src) in self
            .rows(seeds.width)
            .zip(part.data.chunks_exact(self.width as usize))
        {
            mask.data[r].copy_from_slice(src);
        }
        mask
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn box_round_trip() {
        // 6x5 trimap: background everywhere, unknown at (2,1) and (3,2), fg at (2,2).
        let mut seeds = Seeds::unknown(6, 5);
        seeds.labels.fill(SeedLabel::Background);
        seeds.labels[6 + 2] = SeedLabel::Unknown;
        seeds.labels[12 + 3] = SeedLabel::Unknown;
        seeds.labels[12 + 2] = SeedLabel::Foreground;
        let region = Region::around_unknown(&seeds).unwrap();
        assert_eq!(
            region,
            Region {
                x: 1,
                y: 0,
                width: 4,
                height: 4
            }
        );
        assert!(!region.is_whole(6, 5));
        let crop = region.crop_seeds(&seeds);
        assert_eq!(crop.labels[4 + 1], SeedLabel::Unknown);
        let rgb: Vec<u8> = (0..90).map(|v| v as u8).collect();
        let mut out = Vec::new();
        region.crop_rgb(&rgb, 6, &mut out);
        assert_eq!(out.len(), 48);
        assert_eq!(&out[..3], &rgb[3..6]);
        let part = Mask::from_fn(4, 4, |i| i == 5);
        let full = region.paste(&part, &seeds);
        assert_eq!(
            full.count_source(),
            1,
            "only the pasted pixel; the fg seed was inside"
        );
        assert!(full.is_source(6 + 2));
    }

    #[test]
    fn fully_seeded_has_no_region() {
        let mut seeds = Seeds::unknown(3, 3);
        seeds.labels.fill(SeedLabel::Foreground);
        assert_eq!(Region::around_unknown(&seeds), None);
    }
}

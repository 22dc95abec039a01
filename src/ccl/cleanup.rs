//! Mask cleanup after the cut: drop foreground components that touch nothing known to
//! be the object (or are too small), fill background holes that are too small, and
//! smooth the outline (`smooth`).

use super::smooth::Smoother;
use super::{CclError, Labeller};
use crate::gpu::DeviceMask;
use crate::grid::{Connectivity, Mask};

/// Cleanup settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CleanupParams {
    /// Neighbourhood of the components.
    pub connectivity: Connectivity,
    /// Foreground components smaller than this are dropped and background holes
    /// smaller than this are filled (pixels; 0 = neither).
    pub min_area: u32,
    /// Drop foreground components that touch no anchor pixel.
    pub drop_unanchored: bool,
    /// Then close and open the mask with a 3×3 square ([`Smoother`]); fixed pixels
    /// keep their labels.
    pub smooth: bool,
}

/// What the caller knows about the pixels, as predicates over row-major indices.
pub struct Constraints<'a> {
    /// Pixels that must stay foreground (seeds): their component is always kept.
    /// `None` where there are none.
    pub fixed_foreground: Option<&'a dyn Fn(usize) -> bool>,
    /// Pixels that must stay background (seeds): their hole is never filled. `None`
    /// where there are none.
    pub fixed_background: Option<&'a dyn Fn(usize) -> bool>,
    /// Where the object is known to be (seeds, the previous frame's mask); `None`
    /// when nothing is known, and then no component is dropped for lacking an anchor.
    pub anchor: Option<&'a dyn Fn(usize) -> bool>,
}

/// What a cleanup changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CleanupReport {
    /// Foreground components dropped.
    pub dropped_components: u32,
    /// Background holes filled.
    pub filled_holes: u32,
    /// Pixels whose label changed.
    pub changed_pixels: u64,
    /// The first changed pixel's index and one past the last's (`None`: no change):
    /// what a copy of the mask elsewhere needs rewritten.
    pub changed_span: Option<(usize, usize)>,
}

impl CleanupReport {
    /// Counts pixel `p` as changed.
    fn changed(&mut self, p: usize) {
        self.changed_in(1, p, p + 1);
    }

    /// Counts `count` pixels between index `first` and `end` (exclusive) as changed.
    fn changed_in(&mut self, count: u64, first: usize, end: usize) {
        self.changed_pixels += count;
        self.changed_span = Some(match self.changed_span {
            Some((a, b)) => (a.min(first), b.max(end)),
            None => (first, end),
        });
    }
}

const FIXED: u8 = 1;
const ANCHORED: u8 = 2;
const BORDER: u8 = 4;

/// Runs cleanups, keeping its buffers from frame to frame.
#[derive(Debug, Default)]
pub struct Cleaner {
    labels: Vec<u32>,
    area: Vec<u32>,
    flags: Vec<u8>,
    smoother: Smoother,
}

impl Cleaner {
    /// A cleaner with no buffers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Cleans `mask` in place with `labeller`.
    pub fn clean(
        &mut self,
        mask: &mut Mask,
        params: &CleanupParams,
        constraints: &Constraints<'_>,
        labeller: &mut dyn Labeller,
    ) -> Result<CleanupReport, CclError> {
        self.clean_with_device(mask, None, params, constraints, labeller)
    }

    /// Cleans `mask` as [`Self::clean`] does, where `device` holds the same mask on the
    /// GPU (as the CUDA engine left it): the first labelling may read it there.
    pub fn clean_with_device(
        &mut self,
        mask: &mut Mask,
        device: Option<&DeviceMask<'_>>,
        params: &CleanupParams,
        constraints: &Constraints<'_>,
        labeller: &mut dyn Labeller,
    ) -> Result<CleanupReport, CclError> {
        let mut report = self.components(mask, device, params, constraints, labeller)?;
        if params.smooth {
            self.smooth(mask, constraints, &mut report);
        }
        Ok(report)
    }

    /// Closes and opens `mask`, the fixed pixels keeping their labels; counts the
    /// changed pixels into `report`.
    fn smooth(
        &mut self,
        mask: &mut Mask,
        constraints: &Constraints<'_>,
        report: &mut CleanupReport,
    ) {
        let fixed = |p: usize, was_foreground: bool| {
            let fixed = if was_foreground {
                constraints.fixed_foreground
            } else {
                constraints.fixed_background
            };
            fixed.is_some_and(|fixed| fixed(p))
        };
        if let (changed, Some((first, end))) = self.smoother.smooth(mask, fixed) {
            report.changed_in(changed, first, end);
        }
    }

    /// The components' part of [`Self::clean_with_device`]: small or unanchored
    /// foreground dropped, small holes filled.
    fn components(
        &mut self,
        mask: &mut Mask,
        device: Option<&DeviceMask<'_>>,
        params: &CleanupParams,
        constraints: &Constraints<'_>,
        labeller: &mut dyn Labeller,
    ) -> Result<CleanupReport, CclError> {
        let mut report = CleanupReport::default();
        let drop_unanchored = params.drop_unanchored && constraints.anchor.is_some();
        if params.min_area == 0 && !drop_unanchored {
            return Ok(report);
        }
        self.measure(mask, device, params, constraints, labeller)?;
        // Foreground components.
        let min_area = params.min_area;
        let keep = |root: usize, flags: &[u8], area: &[u32]| {
            let f = flags[root];
            f & FIXED != 0 || (area[root] >= min_area && (!drop_unanchored || f & ANCHORED != 0))
        };
        for p in 0..mask.data.len() {
            let root = self.labels[p] as usize;
            if mask.data[p] != 0 && !keep(root, &self.flags, &self.area) {
                if root == p {
                    report.dropped_components += 1;
                }
                mask.data[p] = 0;
                report.changed(p);
            }
        }
        if min_area == 0 {
            return Ok(report);
        }
        if report.dropped_components > 0 {
            // the mask changed: the device's copy no longer matches it
            self.measure(mask, None, params, constraints, labeller)?;
        }
        // Background holes.
        for p in 0..mask.data.len() {
            let root = self.labels[p] as usize;
            let f = self.flags[root];
            if mask.data[p] == 0 && f & (FIXED | BORDER) == 0 && self.area[root] < min_area {
                if root == p {
                    report.filled_holes += 1;
                }
                mask.data[p] = 255;
                report.changed(p);
            }
        }
        Ok(report)
    }

    /// Labels the mask and gathers per-component area and flags at the root index:
    /// FIXED (holds a fixed pixel of its own value), ANCHORED, BORDER.
    fn measure(
        &mut self,
        mask: &Mask,
        device: Option<&DeviceMask<'_>>,
        params: &CleanupParams,
        constraints: &Constraints<'_>,
        labeller: &mut dyn Labeller,
    ) -> Result<(), CclError> {
        let (w, h) = (mask.width as usize, mask.height as usize);
        labeller.label_with_device(
            &mask.data,
            device,
            mask.width,
            mask.height,
            params.connectivity,
            &mut self.labels,
        )?;
        let n = w * h;
        self.area.clear();
        self.area.resize(n, 0);
        self.flags.clear();
        self.flags.resize(n, 0);
        let anchor = constraints.anchor.filter(|_| params.drop_unanchored);
        // a row's pixels of one component at a time: a label holds along its run
        for y in 0..h {
            let row = &self.labels[y * w..(y + 1) * w];
            let mut x = 0;
            while x < w {
                let root = row[x] as usize;
                let end = x + row[x..].iter().take_while(|&&l| l as usize == root).count();
                let (first, last) = (y * w + x, y * w + end);
                self.area[root] += (end - x) as u32;
                let mut f = 0;
                if x == 0 || end == w || y == 0 || y + 1 == h {
                    f |= BORDER;
                }
                let fixed = if mask.data[first] != 0 {
                    constraints.fixed_foreground
                } else {
                    constraints.fixed_background
                };
                let seen = self.flags[root];
                let any = |held: Option<&dyn Fn(usize) -> bool>, flag: u8| {
                    held.filter(|_| seen & flag == 0)
                        .is_some_and(|held| (first..last).any(held))
                };
                if any(fixed, FIXED) {
                    f |= FIXED;
                }
                if any(anchor, ANCHORED) {
                    f |= ANCHORED;
                }
                self.flags[root] |= f;
                x = end;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ccl::CpuLabeller;

    fn mask(rows: &[&str]) -> Mask {
        let w = rows[0].len() as u32;
        let data = rows
            .iter()
            .flat_map(|r| r.bytes().map(|b| if b == b'#' { 255 } else { 0 }))
            .collect();
        Mask {
            width: w,
            height: rows.len() as u32,
            data,
        }
    }

    /// Cleans `m` on the CPU with 4-connected components, `min_area` and
    /// `drop_unanchored`, under the constraints `c`.
    fn clean_four(
        m: &mut Mask,
        min_area: u32,
        drop_unanchored: bool,
        c: &Constraints<'_>,
    ) -> CleanupReport {
        let params = CleanupParams {
            connectivity: Connectivity::Four,
            min_area,
            drop_unanchored,
            smooth: false,
        };
        Cleaner::new()
            .clean(m, &params, c, &mut CpuLabeller::new())
            .unwrap()
    }

    #[test]
    fn drops_unanchored_and_small_and_fills_holes() {
        let mut m = mask(&[
            "#####.....",
            "#.#.#...#.",
            "#####.....",
            "..........",
            "......###.",
        ]);
        let anchor = |p: usize| p == 0;
        let c = Constraints {
            fixed_foreground: None,
            fixed_background: None,
            anchor: Some(&anchor),
        };
        let report = clean_four(&mut m, 2, true, &c);
        assert_eq!(
            m,
            mask(&[
                "#####.....",
                "#####.....",
                "#####.....",
                "..........",
                "..........",
            ])
        );
        assert_eq!(report.dropped_components, 2);
        assert_eq!(report.filled_holes, 2);
        assert_eq!(report.changed_pixels, 6);
        assert_eq!(report.changed_span, Some((11, 49)));
    }

    /// A speck at (3, 1) and a notch at (3, 4) in the block below it.
    const SPECK_AND_NOTCH: [&str; 6] = [
        "........", "...#....", "........", "........", "###.####", "########",
    ];

    /// [`SPECK_AND_NOTCH`] smoothed (and nothing else) under `c`.
    fn smoothed(c: &Constraints<'_>) -> (Mask, CleanupReport) {
        let mut m = mask(&SPECK_AND_NOTCH);
        let params = CleanupParams {
            connectivity: Connectivity::Four,
            min_area: 0,
            drop_unanchored: false,
            smooth: true,
        };
        let report = Cleaner::new()
            .clean(&mut m, &params, c, &mut CpuLabeller::new())
            .unwrap();
        (m, report)
    }

    #[test]
    fn smoothing_keeps_seeded_pixels_and_reports_what_it_changed() {
        let fixed_fg = |p: usize| p == 11;
        let c = Constraints {
            fixed_foreground: Some(&fixed_fg),
            fixed_background: None,
            anchor: None,
        };
        let (m, report) = smoothed(&c);
        let after = [
            "........", "...#....", "........", "........", "########", "########",
        ];
        assert_eq!(m, mask(&after));
        assert_eq!(
            report.changed_pixels, 1,
            "the notch filled, the seeded speck kept"
        );
        assert_eq!(report.changed_span, Some((35, 36)));
    }

    #[test]
    fn smoothing_with_no_seeds_reports_every_change() {
        let none = Constraints {
            fixed_foreground: None,
            fixed_background: None,
            anchor: None,
        };
        let (m, report) = smoothed(&none);
        assert_eq!(report.changed_pixels, 2, "the speck and the notch");
        assert_eq!(report.changed_span, Some((11, 36)));
        let before = mask(&SPECK_AND_NOTCH);
        let differ = (before.data.iter().zip(&m.data)).filter(|(a, b)| a != b);
        assert_eq!(differ.count(), 2);
    }

    #[test]
    fn fixed_pixels_are_respected() {
        let mut m = mask(&["###...", "#.#...", "###..#"]);
        let fixed_fg = |p: usize| p == 17;
        let fixed_bg = |p: usize| p == 7;
        let c = Constraints {
            fixed_foreground: Some(&fixed_fg),
            fixed_background: Some(&fixed_bg),
            anchor: None,
        };
        let before = m.clone();
        let report = clean_four(&mut m, 3, false, &c);
        assert_eq!(m, before, "seeded component kept, seeded hole kept open");
        assert_eq!(report, CleanupReport::default());
    }
}

//! Colour models that keep up with a video: every few frames the models are compared
//! with ones learned from the pixels the last mask labels with confidence (those a
//! margin away from its outline), and where the scene's colours have moved away from
//! them (an object that turns, a background that slides into view) the fresh ones are
//! mixed in. A scene that keeps its colours never refreshes them, so a still camera's
//! frames keep their data term and continue from the kept graph; new scribbles still
//! replace the models at once. Decisions: `NOTES.md`, "Colour models that keep up".

use crate::capture::Frame;
use crate::energy::{ColorModelKind, ColorModels, Side};
use crate::grid::Mask;

/// Frames between two looks at the models' fit.
const CHECK_EVERY: u32 = 4;
/// Pixels a confident pixel is from the outline (a square's half side).
const MARGIN: usize = 6;
/// Mean cost difference, in nats, above which the models no longer fit the scene.
const MISFIT_NATS: f64 = 0.12;
/// Weight of the fresh models when they are mixed in.
const WEIGHT: f32 = 0.5;
/// Every this many pixels is read for the fit.
const SAMPLE_STRIDE: usize = 7;

/// Counts frames towards the next look at the models' fit.
#[derive(Clone, Debug, Default)]
pub(super) struct ModelRefresh {
    since_check: u32,
    /// The index of the last frame counted: a frame segmented again (a paused one
    /// after a change of parameters) is not counted twice.
    last: Option<u64>,
    /// The confident pixels' sides and the summed-area table behind them, kept for
    /// the next look.
    sides: Vec<Option<Side>>,
    sums: Vec<u32>,
}

impl ModelRefresh {
    /// Starts counting again (the models were just learned).
    pub(super) fn restart(&mut self) {
        self.since_check = 0;
    }

    /// After a frame cut with `models` (of `kind`) into `mask`: every few frames,
    /// mixes in models learned from the frame's confident pixels where the models no
    /// longer fit them. Returns whether the models changed.
    pub(super) fn after_frame(
        &mut self,
        models: &mut ColorModels,
        kind: ColorModelKind,
        frame: &Frame,
        mask: &Mask,
    ) -> bool {
        if self.last.replace(frame.index) == Some(frame.index) {
            return false;
        }
        self.since_check += 1;
        if self.since_check < CHECK_EVERY || mask.data.len() * 3 != frame.rgb.len() {
            return false;
        }
        self.since_check = 0;
        confident_sides(mask, MARGIN, &mut self.sums, &mut self.sides);
        let sides = &self.sides;
        let side = |i: usize| sides[i];
        let Some(mut fresh) = ColorModels::learn(kind, &frame.rgb, side) else {
            return false;
        };
        let misfit = models.misfit(&mut fresh, &frame.rgb, side, SAMPLE_STRIDE);
        misfit > MISFIT_NATS && models.mix_in(&fresh, WEIGHT)
    }
}

/// Each pixel's side where every pixel of the square `margin` around it (within the
/// frame) has its label, else `None`, into `sides`: counts of foreground pixels over
/// a summed-area table (in `sums`).
fn confident_sides(mask: &Mask, margin: usize, sums: &mut Vec<u32>, sides: &mut Vec<Option<Side>>) {
    let (w, h) = (mask.width as usize, mask.height as usize);
    // sums[(y + 1) * (w + 1) + x + 1]: foreground pixels above and left of (x, y), inclusive
    sums.clear();
    sums.resize((w + 1) * (h + 1), 0);
    for y in 0..h {
        let mut row = 0;
        for x in 0..w {
            row += u32::from(mask.is_source(y * w + x));
            sums[(y + 1) * (w + 1) + x + 1] = sums[y * (w + 1) + x + 1] + row;
        }
    }
    let at = |x: usize, y: usize| sums[y * (w + 1) + x];
    sides.clear();
    sides.extend((0..w * h).map(|i| {
        let (x, y) = (i % w, i / w);
        let (x0, y0) = (x.saturating_sub(margin), y.saturating_sub(margin));
        let (x1, y1) = ((x + margin + 1).min(w), (y + margin + 1).min(h));
        let fg = at(x1, y1) + at(x0, y0) - at(x0, y1) - at(x1, y0);
        let all = ((x1 - x0) * (y1 - y0)) as u32;
        match fg {
            0 => Some(Side::Background),
            n if n == all => Some(Side::Foreground),
            _ => None,
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_pixels_a_margin_from_the_outline_are_confident() {
        // a 10×10 foreground square in a 30×30 frame, margin 2
        let mask = Mask::from_fn(30, 30, |i| {
            (10..20).contains(&(i % 30)) && (10..20).contains(&(i / 30))
        });
        let (mut sums, mut sides) = (Vec::new(), Vec::new());
        confident_sides(&mask, 2, &mut sums, &mut sides);
        let side = |x: usize, y: usize| sides[y * 30 + x];
        assert_eq!(side(15, 15), Some(Side::Foreground));
        assert_eq!(side(12, 12), Some(Side::Foreground));
        assert_eq!(side(11, 12), None, "one pixel from the outline");
        assert_eq!(side(8, 15), None, "two pixels outside");
        assert_eq!(side(7, 15), Some(Side::Background));
        assert_eq!(side(0, 0), Some(Side::Background), "the frame's corner");
        let brute = |x: usize, y: usize| {
            let near = (y.saturating_sub(2)..(y + 3).min(30))
                .flat_map(|v| (x.saturating_sub(2)..(x + 3).min(30)).map(move |u| v * 30 + u));
            let labels: Vec<bool> = near.map(|j| mask.is_source(j)).collect();
            match (labels.iter().all(|&l| l), labels.iter().any(|&l| l)) {
                (true, _) => Some(Side::Foreground),
                (_, false) => Some(Side::Background),
                _ => None,
            }
        };
        for (x, y) in (0..30).flat_map(|y| (0..30).map(move |x| (x, y))) {
            assert_eq!(side(x, y), brute(x, y), "({x}, {y})");
        }
    }

    /// A frame of a red square on `background`, and its mask.
    fn scene(background: [u8; 3]) -> (Frame, Mask) {
        let (w, h) = (40u32, 30u32);
        let inside = |i: usize| (10..30).contains(&(i % 40)) && (8..22).contains(&(i / 40));
        let rgb = (0..(w * h) as usize)
            .flat_map(|i| if inside(i) { [240, 20, 20] } else { background })
            .collect();
        let frame = Frame {
            width: w,
            height: h,
            rgb,
            ..Frame::default()
        };
        (frame, Mask::from_fn(w, h, inside))
    }

    #[test]
    fn models_are_refreshed_only_where_the_scene_left_them() {
        let kind = ColorModelKind::Histogram { bits: 4 };
        let (first, mask) = scene([20, 20, 200]);
        let learn = |frame: &Frame| {
            ColorModels::learn(kind, &frame.rgb, |i| {
                Some(if mask.is_source(i) {
                    Side::Foreground
                } else {
                    Side::Background
                })
            })
            .unwrap()
        };
        let mut models = learn(&first);
        let generation = models.generation();
        let mut refresh = ModelRefresh::default();
        let numbered = |frame: &Frame, index: u64| Frame {
            index,
            ..frame.clone()
        };
        for k in 0..3 * CHECK_EVERY {
            let frame = numbered(&first, u64::from(k));
            assert!(!refresh.after_frame(&mut models, kind, &frame, &mask));
        }
        assert_eq!(
            models.generation(),
            generation,
            "a still scene keeps its models"
        );
        let (green, _) = scene([20, 200, 20]);
        let k = u64::from(3 * CHECK_EVERY);
        let again = numbered(&green, k);
        for _ in 0..2 * CHECK_EVERY {
            let redone = refresh.after_frame(&mut models, kind, &again, &mask);
            assert!(!redone, "a frame segmented again counts once");
        }
        let changed = (1..u64::from(CHECK_EVERY))
            .map(|n| refresh.after_frame(&mut models, kind, &numbered(&green, k + n), &mask))
            .collect::<Vec<_>>();
        assert_eq!(changed.iter().filter(|&&c| c).count(), 1, "{changed:?}");
        let g = [20u8, 200, 20];
        let (mut before, mut after) = (learn(&first), models.clone());
        assert!(after.background.cost(g) < before.background.cost(g));
    }
}

//! Colour models that keep up with a video: every few frames the models are compared
//! with ones learned from the pixels the last mask labels with confidence (those a
//! margin away from its outline), and where the scene's colours have moved away from
//! them (an object that turns, a background that slides into view) the fresh ones are
//! mixed in. A scene that keeps its colours never refreshes them, so a still camera's
//! frames keep their data term and continue from the kept graph; new scribbles still
//! replace the models at once. Decisions: `NOTES.md`, "Colour models that keep up".

use crate::bands;
use crate::capture::Frame;
use crate::energy::{ColorModelKind, ColorModels, Side};
use crate::grid::Mask;
use std::ops::Range;

/// Frames between two looks at the models' fit.
const CHECK_EVERY: u32 = 4;
/// Pixels a confident pixel is from the outline (a square's half side).
const MARGIN: usize = 6;
/// Mean cost difference, in nats, above which the models no longer fit the scene.
const MISFIT_NATS: f64 = 0.12;
/// Weight of the fresh models when they are mixed in.
const WEIGHT: f32 = 0.5;
/// Every this many samples is read for the fit.
const FIT_STRIDE: usize = 7;

/// Counts frames towards the next look at the models' fit.
#[derive(Clone, Debug, Default)]
pub(super) struct ModelRefresh {
    since_check: u32,
    /// The index of the last frame counted: a frame segmented again (a paused one
    /// after a change of parameters) is not counted twice.
    last: Option<u64>,
    /// The confident samples' colours of each side and the box counts behind them,
    /// kept for the next look.
    samples: Samples,
    counts: BoxCounts,
}

/// The working rows of [`confident_samples`], kept from look to look.
#[derive(Clone, Debug, Default)]
struct BoxCounts {
    /// Each pixel's foreground count along its row of the square.
    across: Vec<u16>,
    /// The squares' widths at each column.
    widths: Vec<u16>,
    /// Each row band's own working rows and samples.
    bands: Vec<BandRows>,
}

/// One row band's working rows of [`Look::confident_rows`] and the samples it found.
#[derive(Clone, Debug, Default)]
struct BandRows {
    /// A row's running foreground count (its prefix sums).
    prefix: Vec<u32>,
    /// The squares' counts down the columns, and the sides of a row.
    down: Vec<u16>,
    sides: Vec<Option<Side>>,
    samples: Samples,
}

/// Colours of confident pixels, by side.
#[derive(Clone, Debug, Default)]
struct Samples {
    foreground: Vec<[u8; 3]>,
    background: Vec<[u8; 3]>,
}

impl Samples {
    fn clear(&mut self) {
        self.foreground.clear();
        self.background.clear();
    }

    /// The colours of a row's (`rgb`) confident pixels, by their `sides`.
    fn push_row(&mut self, rgb: &[u8], sides: &[Option<Side>]) {
        for (side, p) in sides.iter().zip(rgb.chunks_exact(3)) {
            match side {
                Some(Side::Foreground) => self.foreground.push([p[0], p[1], p[2]]),
                Some(Side::Background) => self.background.push([p[0], p[1], p[2]]),
                None => {}
            }
        }
    }

    fn extend(&mut self, other: &Samples) {
        self.foreground.extend_from_slice(&other.foreground);
        self.background.extend_from_slice(&other.background);
    }
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
        let samples = &mut self.samples;
        confident_samples(frame, mask, MARGIN, &mut self.counts, samples);
        let (fg, bg) = (&samples.foreground, &samples.background);
        let Some(mut fresh) = ColorModels::from_samples(kind, fg, bg) else {
            return false;
        };
        let misfit = models.misfit(&mut fresh, fg, bg, FIT_STRIDE);
        misfit > MISFIT_NATS && models.mix_in(&fresh, WEIGHT)
    }
}

/// The colours of `frame`'s confident pixels (those whose square `margin` around them,
/// within the frame, has one label), by side, into `samples` in row-major order: box
/// counts of foreground pixels along the rows, then down the columns, in row bands on
/// every core, each band's samples appended in turn (the order of one pass).
fn confident_samples(
    frame: &Frame,
    mask: &Mask,
    margin: usize,
    counts: &mut BoxCounts,
    samples: &mut Samples,
) {
    let (w, h) = (mask.width as usize, mask.height as usize);
    let rows = counts_across(mask, margin, counts);
    let BoxCounts {
        across,
        widths,
        bands: scratch,
    } = counts;
    let parts = (scratch.iter_mut().enumerate())
        .map(|(b, band)| (b * rows..((b + 1) * rows).min(h), band))
        .collect();
    let (across, widths) = (&across[..], &widths[..]);
    bands::for_each_part(parts, |(rows, band): (Range<usize>, &mut BandRows)| {
        let BandRows {
            down,
            sides,
            samples,
            ..
        } = band;
        samples.clear();
        let look = Look {
            across,
            widths,
            w,
            h,
            margin,
        };
        look.confident_rows(rows, down, sides, |y, sides| {
            samples.push_row(&frame.rgb[3 * y * w..3 * (y + 1) * w], sides);
        });
    });
    samples.clear();
    scratch
        .iter()
        .for_each(|band| samples.extend(&band.samples));
}

/// Each pixel's foreground count along its row of the square `margin` around it into
/// `counts.across`, and the squares' widths, in row bands on every core; `counts.bands`
/// holds a band's working rows for each, and the bands' height is returned.
fn counts_across(mask: &Mask, margin: usize, counts: &mut BoxCounts) -> usize {
    let (w, h) = (mask.width as usize, mask.height as usize);
    counts.widths.clear();
    counts.widths.extend((0..w).map(|x| span(x, w, margin)));
    counts.across.clear();
    counts.across.resize(w * h, 0);
    let rows = bands::band_rows(h).max(1);
    counts
        .bands
        .resize_with(h.div_ceil(rows), BandRows::default);
    let parts = (counts.across.chunks_mut((rows * w).max(1)))
        .zip(counts.bands.iter_mut())
        .enumerate()
        .map(|(b, (across, band))| (b * rows, across, &mut band.prefix))
        .collect();
    bands::for_each_part(parts, |(first, across, prefix): (usize, &mut [u16], _)| {
        prefix.clear();
        prefix.resize(w + 1, 0);
        for (r, out) in across.chunks_exact_mut(w.max(1)).enumerate() {
            let row = &mask.data[(first + r) * w..][..w];
            for (x, &m) in row.iter().enumerate() {
                prefix[x + 1] = prefix[x] + u32::from(m != 0);
            }
            for (x, o) in out.iter_mut().enumerate() {
                // at most the square's width
                *o = (prefix[(x + margin + 1).min(w)] - prefix[x.saturating_sub(margin)]) as u16;
            }
        }
    });
    rows
}

/// How many of the `n` pixels of a row (or column) lie within `margin` of pixel `i`.
fn span(i: usize, n: usize, margin: usize) -> u16 {
    ((i + margin + 1).min(n) - i.saturating_sub(margin)) as u16
}

/// What [`Look::confident_rows`] reads: the counts along the rows of a `w`×`h` mask
/// and the squares' widths.
struct Look<'a> {
    across: &'a [u16],
    widths: &'a [u16],
    w: usize,
    h: usize,
    margin: usize,
}

impl Look<'_> {
    /// Each pixel's side of `rows`, `None` where its square holds both labels, a row
    /// at a time to `each_row(y, sides)`: the squares' counts down the columns, kept
    /// running from row to row (in `down`).
    fn confident_rows(
        &self,
        rows: Range<usize>,
        down: &mut Vec<u16>,
        sides: &mut Vec<Option<Side>>,
        mut each_row: impl FnMut(usize, &[Option<Side>]),
    ) {
        let (w, h, margin) = (self.w, self.h, self.margin);
        let row = |y: usize| &self.across[y * w..(y + 1) * w];
        down.clear();
        down.resize(w, 0);
        sides.clear();
        sides.resize(w, None);
        // the first row's squares whole, then each next row's by the rows it gains
        // and loses
        for y in rows.start.saturating_sub(margin)..(rows.start + margin + 1).min(h) {
            down.iter_mut().zip(row(y)).for_each(|(d, &a)| *d += a);
        }
        for y in rows.clone() {
            if y > rows.start {
                if y + margin < h {
                    down.iter_mut()
                        .zip(row(y + margin))
                        .for_each(|(d, &a)| *d += a);
                }
                if y > margin {
                    down.iter_mut()
                        .zip(row(y - margin - 1))
                        .for_each(|(d, &a)| *d -= a);
                }
            }
            let tall = span(y, h, margin);
            for ((side, &fg), &wide) in sides.iter_mut().zip(down.iter()).zip(self.widths) {
                *side = match fg {
                    0 => Some(Side::Background),
                    n if n == wide * tall => Some(Side::Foreground),
                    _ => None,
                };
            }
            each_row(y, sides);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pixel's side, the frame's rows as one band.
    fn sides_of(mask: &Mask, margin: usize, counts: &mut BoxCounts) -> Vec<Option<Side>> {
        let (w, h) = (mask.width as usize, mask.height as usize);
        counts_across(mask, margin, counts);
        let look = Look {
            across: &counts.across,
            widths: &counts.widths,
            w,
            h,
            margin,
        };
        let mut got = vec![None; w * h];
        let (mut down, mut sides) = (Vec::new(), Vec::new());
        look.confident_rows(0..h, &mut down, &mut sides, |y, row| {
            got[y * w..(y + 1) * w].copy_from_slice(row);
        });
        got
    }

    #[test]
    fn only_pixels_a_margin_from_the_outline_are_confident() {
        // a 10×10 foreground square in a 30×30 frame, margin 2
        let mask = Mask::from_fn(30, 30, |i| {
            (10..20).contains(&(i % 30)) && (10..20).contains(&(i / 30))
        });
        let sides = sides_of(&mask, 2, &mut BoxCounts::default());
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

    #[test]
    fn confident_pixels_of_random_masks_are_those_of_a_brute_force_square() {
        // three in four pixels foreground, scattered by a multiplicative hash
        let coin = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 61 < 6;
        // one set of working rows for every shape, as a refresh keeps them
        let mut counts = BoxCounts::default();
        for (w, h, margin) in [
            (17usize, 11usize, 1usize),
            (9, 23, 3),
            (5, 3, 6),
            (1, 7, 2),
            (40, 1, 2),
        ] {
            let mask = Mask::from_fn(w as u32, h as u32, coin);
            let got = sides_of(&mask, margin, &mut counts);
            for (x, y) in (0..h).flat_map(|y| (0..w).map(move |x| (x, y))) {
                let near = (y.saturating_sub(margin)..(y + margin + 1).min(h)).flat_map(|v| {
                    (x.saturating_sub(margin)..(x + margin + 1).min(w)).map(move |u| v * w + u)
                });
                let labels: Vec<bool> = near.map(|j| mask.is_source(j)).collect();
                let want = match (labels.iter().all(|&l| l), labels.iter().any(|&l| l)) {
                    (true, _) => Some(Side::Foreground),
                    (_, false) => Some(Side::Background),
                    _ => None,
                };
                assert_eq!(
                    got[y * w + x],
                    want,
                    "{w}x{h} margin {margin} at ({x}, {y})"
                );
            }
        }
    }

    #[test]
    fn samples_in_bands_are_those_of_one_pass_in_row_order() {
        let coin = |i: usize| (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 62 < 2;
        let mut counts = BoxCounts::default();
        for (w, h, margin) in [(37, 90, 3), (20, 200, 4), (50, 5, 1), (3, 1, 2)] {
            // a blob of foreground over a scattered one, so that both sides have samples
            let mask = Mask::from_fn(w as u32, h as u32, |i| {
                coin(i) || (i % w < w / 2 && i / w < h / 2)
            });
            let frame =
                crate::test_bits::random_frame(&mut crate::test_bits::lcg(3), w as u32, h as u32);
            let sides = sides_of(&mask, margin, &mut counts);
            let mut want = Samples::default();
            for (y, row) in sides.chunks_exact(w).enumerate() {
                want.push_row(&frame.rgb[3 * y * w..3 * (y + 1) * w], row);
            }
            for threads in [1, 2, 3] {
                let mut got = Samples::default();
                bands::with_threads(threads, || {
                    confident_samples(&frame, &mask, margin, &mut counts, &mut got)
                });
                assert_eq!(
                    got.foreground, want.foreground,
                    "{w}x{h}, {threads} threads"
                );
                assert_eq!(
                    got.background, want.background,
                    "{w}x{h}, {threads} threads"
                );
            }
            assert!(!want.foreground.is_empty() || h < margin);
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

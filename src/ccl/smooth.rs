//! The mask's outline smoothed: a 3×3 closing (pinholes, one-pixel notches and gaps
//! fill) then a 3×3 opening (specks and one-pixel spurs go), the morphology background
//! subtraction masks are usually given, closing first so that a pinhole near an edge
//! cannot eat into the region; pixels past the frame's border repeat its edge. The four
//! passes run band by band, in row bands on every core.

use crate::bands;
use crate::grid::Mask;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The smoothed mask's buffer, kept from frame to frame.
#[derive(Debug, Default)]
pub struct Smoother {
    out: Vec<u8>,
}

/// Rows of the frame each band's passes read beyond its own, above and below: one a
/// pass, for the four passes of [`smooth_band`].
const REACH: usize = 4;

impl Smoother {
    /// A smoother with no buffers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Closes then opens `mask` with a 3×3 square; `mask.data` is left holding the
    /// smoothed mask and [`Self::before`] the mask as it came. Returns how many pixels
    /// changed, and the first one's index and one past the last's.
    pub fn smooth(&mut self, mask: &mut Mask) -> (u64, Option<(usize, usize)>) {
        let (w, h) = (mask.width as usize, mask.height as usize);
        if w == 0 || h == 0 {
            return (0, None);
        }
        self.out.resize(w * h, 0);
        let src = &mask.data;
        let (first_changed, end_changed) = (AtomicUsize::new(usize::MAX), AtomicUsize::new(0));
        // all four passes in one go per band, from the rows it reaches (bands of a
        // multiple of 16 rows, so that those stay a fraction of it); a band whose reach
        // is one value all through is filled with it
        let changed = bands::sum_over_bands(&mut self.out, w, 4 * REACH, |first, band| {
            smooth_band(src, w, first, band);
            let at = first * w;
            let was = &src[at..at + band.len()];
            let differ = |(a, b): (&u8, &u8)| a != b;
            let Some(start) = band.iter().zip(was).position(differ) else {
                return 0;
            };
            let end = band
                .iter()
                .zip(was)
                .rposition(differ)
                .map_or(start, |e| e + 1);
            first_changed.fetch_min(at + start, Ordering::Relaxed);
            end_changed.fetch_max(at + end, Ordering::Relaxed);
            let (now, was) = (&band[start..end], &was[start..end]);
            now.iter().zip(was).filter(|&pair| differ(pair)).count() as u64
        });
        std::mem::swap(&mut self.out, &mut mask.data);
        let span = (changed > 0).then(|| (first_changed.into_inner(), end_changed.into_inner()));
        (changed, span)
    }

    /// The mask as it was before the last [`Self::smooth`].
    pub fn before(&self) -> &[u8] {
        &self.out
    }
}

/// The smoothed rows `first..` (`band`) of the `w`-pixel-wide mask `src`: dilate and
/// erode (the closing), erode and dilate (the opening).
fn smooth_band(src: &[u8], w: usize, first: usize, band: &mut [u8]) {
    let h = src.len() / w;
    let last = first + band.len() / w;
    let lo = first.saturating_sub(REACH);
    let reach = &src[lo * w..(last + REACH).min(h) * w];
    if reach.iter().all(|&v| v == reach[0]) {
        band.fill(reach[0]);
        return;
    }
    let mut rows = Rows {
        w,
        h,
        lo,
        now: reach.to_vec(),
        next: vec![0u8; reach.len()],
        column: vec![0u8; w],
    };
    // each pass makes the rows the next one needs: a row fewer on either side
    rows.pass(first..last, 3, u8::max);
    rows.pass(first..last, 2, u8::min);
    rows.pass(first..last, 1, u8::min);
    rows.pass(first..last, 0, u8::max);
    band.copy_from_slice(&rows.now[(first - lo) * w..(last - lo) * w]);
}

/// The rows `lo..` of one pass (`now`) and the next (`next`) of a band's smoothing.
struct Rows {
    w: usize,
    h: usize,
    lo: usize,
    now: Vec<u8>,
    next: Vec<u8>,
    column: Vec<u8>,
}

impl Rows {
    /// `pick` over each pixel's 3×3 square of `now`, for `band`'s rows and `extra` more
    /// on either side, into `next`; then `next` is `now`.
    fn pass(
        &mut self,
        band: std::ops::Range<usize>,
        extra: usize,
        pick: impl Fn(u8, u8) -> u8 + Copy,
    ) {
        let (w, h, lo) = (self.w, self.h, self.lo);
        let rows = band.start.saturating_sub(extra).max(lo)..(band.end + extra).min(h);
        for y in rows {
            let row = |y: usize| &self.now[(y - lo) * w..(y - lo + 1) * w];
            let (up, down) = (row(y.saturating_sub(1)), row((y + 1).min(h - 1)));
            for (((c, &u), &m), &d) in self.column.iter_mut().zip(up).zip(row(y)).zip(down) {
                *c = pick(pick(u, m), d);
            }
            across(
                &self.column,
                &mut self.next[(y - lo) * w..(y - lo + 1) * w],
                pick,
            );
        }
        std::mem::swap(&mut self.now, &mut self.next);
    }
}

/// `out[x]` = `pick` of `column[x - 1..=x + 1]`, the ends repeated.
fn across(column: &[u8], out: &mut [u8], pick: impl Fn(u8, u8) -> u8 + Copy) {
    let w = column.len();
    if w < 3 {
        let all = column.iter().copied().reduce(pick).unwrap_or(0);
        out.fill(all);
        return;
    }
    for (o, window) in out[1..w - 1].iter_mut().zip(column.windows(3)) {
        *o = pick(pick(window[0], window[1]), window[2]);
    }
    out[0] = pick(column[0], column[1]);
    out[w - 1] = pick(column[w - 2], column[w - 1]);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bands::with_threads;

    fn mask(rows: &[&str]) -> Mask {
        let data = rows
            .iter()
            .flat_map(|r| r.bytes().map(|b| if b == b'#' { 255 } else { 0 }))
            .collect();
        Mask {
            width: rows[0].len() as u32,
            height: rows.len() as u32,
            data,
        }
    }

    fn smoothed(rows: &[&str]) -> Mask {
        let mut m = mask(rows);
        Smoother::new().smooth(&mut m);
        m
    }

    #[test]
    fn specks_and_pinholes_go_and_straight_edges_stay() {
        let before = [
            "#.........",
            "......#...",
            "..........",
            ".....#####",
            "...#.##.##",
            ".....#####",
            ".....#####",
        ];
        let after = [
            "..........",
            "..........",
            "..........",
            ".....#####",
            ".....#####",
            ".....#####",
            ".....#####",
        ];
        assert_eq!(smoothed(&before), mask(&after));
        assert_eq!(smoothed(&after), mask(&after), "a square stays as it is");
    }

    #[test]
    fn narrow_frames_and_any_thread_count_agree() {
        // a one-pixel gap fills, in a column as in a row
        assert_eq!(smoothed(&["#", "#", ".", "#"]), mask(&["#", "#", "#", "#"]));
        assert_eq!(smoothed(&["##.#"]), mask(&["####"]));
        let wide: Vec<String> = (0..40)
            .map(|y| {
                (0..37)
                    .map(|x| if (x * x + 3 * y) % 7 < 3 { '#' } else { '.' })
                    .collect()
            })
            .collect();
        let rows: Vec<&str> = wide.iter().map(String::as_str).collect();
        let one = with_threads(1, || smoothed(&rows));
        for threads in [2, 5] {
            assert_eq!(with_threads(threads, || smoothed(&rows)), one);
        }
    }
}

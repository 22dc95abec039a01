//! The mask's outline smoothed: a 3×3 closing (pinholes, one-pixel notches and gaps
//! fill) then a 3×3 opening (specks and one-pixel spurs go), the morphology background
//! subtraction masks are usually given, closing first so that a pinhole near an edge
//! cannot eat into the region; pixels past the frame's border repeat its edge. The mask
//! is packed into bits, 64 pixels a word, so that a pass is a few word operations per
//! 64 pixels, and only the pixels that changed are written back.

use crate::bands;
use crate::bits::{pack_nonzero, pack_nonzero64};
use crate::grid::Mask;

/// The packed mask and the passes' words, kept from frame to frame.
#[derive(Debug, Default)]
pub struct Smoother {
    packed: Vec<u64>,
    smoothed: Vec<u64>,
}

/// Rows of the frame each band's passes read beyond its own, above and below: one a
/// pass, for the four passes of [`smooth_band`].
const REACH: usize = 4;

impl Smoother {
    /// A smoother with no buffers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Closes then opens `mask` with a 3×3 square, in place, except that a pixel `p`
    /// for which `keep(p, was_foreground)` holds keeps its label (a seed). Returns how
    /// many pixels changed, and the first one's index and one past the last's.
    pub fn smooth(
        &mut self,
        mask: &mut Mask,
        keep: impl Fn(usize, bool) -> bool,
    ) -> (u64, Option<(usize, usize)>) {
        let (w, h) = (mask.width as usize, mask.height as usize);
        if w == 0 || h == 0 {
            return (0, None);
        }
        let words = w.div_ceil(64);
        // the last word's bits that are pixels
        let tail = match w % 64 {
            0 => !0,
            r => (1u64 << r) - 1,
        };
        self.pack(mask, words);
        self.smoothed.resize(words * h, 0);
        let packed = &self.packed[..];
        // bands of a multiple of 16 rows, so that the rows they reach beyond their own
        // stay a fraction of them
        bands::for_each_band(&mut self.smoothed, words, 4 * REACH, |first, band| {
            smooth_band(packed, words, tail, first, band);
        });
        write_changes(&self.packed, &self.smoothed, words, mask, keep)
    }

    /// `mask` into `packed`, `words` words a row, in row bands on every core.
    fn pack(&mut self, mask: &Mask, words: usize) {
        let w = mask.width as usize;
        self.packed.resize(words * mask.height as usize, 0);
        bands::for_each_band(&mut self.packed, words, 1, |first, band| {
            for (r, row) in band.chunks_exact_mut(words).enumerate() {
                let pixels = &mask.data[(first + r) * w..][..w];
                for (word, bytes) in row.iter_mut().zip(pixels.chunks(64)) {
                    *word = match <&[u8; 64]>::try_from(bytes) {
                        Ok(whole) => pack_nonzero64(whole),
                        Err(_) => pack_nonzero(bytes),
                    };
                }
            }
        });
    }
}

/// The smoothed rows `first..` (`band`) of the packed mask `src` (`words` words a
/// row, the last word's pixels `tail`): dilate and erode (the closing), erode and
/// dilate (the opening), on a copy of the rows the band reaches, whose ends the
/// passes take for the frame's (wrong only within [`REACH`] rows of them). A band
/// that reaches no foreground stays empty.
fn smooth_band(src: &[u64], words: usize, tail: u64, first: usize, band: &mut [u64]) {
    let h = src.len() / words;
    let last = first + band.len() / words;
    let lo = first.saturating_sub(REACH);
    let reach = &src[lo * words..(last + REACH).min(h) * words];
    if reach.iter().all(|&v| v == 0) {
        band.fill(0);
        return;
    }
    let (mut one, mut other) = (reach.to_vec(), vec![0; reach.len()]);
    pass::<true>(&one, &mut other, words, tail);
    pass::<false>(&other, &mut one, words, tail);
    pass::<false>(&one, &mut other, words, tail);
    pass::<true>(&other, &mut one, words, tail);
    band.copy_from_slice(&one[(first - lo) * words..(last - lo) * words]);
}

/// One 3×3 pass from the packed rows `src` into `dst` (`words` words a row, the last
/// word's pixels `tail`): a dilation where `GROW` (the square's or), else an erosion
/// (its and). A pixel past the border stands for the edge's, which changes neither,
/// so it takes the operation's identity.
fn pass<const GROW: bool>(src: &[u64], dst: &mut [u64], words: usize, tail: u64) {
    let identity = if GROW { 0 } else { !0 };
    let op = |a: u64, b: u64| if GROW { a | b } else { a & b };
    // the columns of three first, into `dst`, as one run over the frame (the first
    // and last rows have no row beyond: the edge's own stands for it)
    dst.copy_from_slice(src);
    let n = src.len();
    if n > words {
        for (d, &below) in dst[..n - words].iter_mut().zip(&src[words..]) {
            *d = op(*d, below);
        }
        for (d, &above) in dst[words..].iter_mut().zip(&src[..n - words]) {
            *d = op(*d, above);
        }
    }
    // then across each row, beyond whose ends stands the identity
    for row in dst.chunks_exact_mut(words) {
        row[words - 1] |= identity & !tail;
        let mut before = identity;
        for k in 0..words {
            let now = row[k];
            let after = if k + 1 < words { row[k + 1] } else { identity };
            let left = now << 1 | before >> 63;
            let right = now >> 1 | after << 63;
            row[k] = op(op(left, now), right);
            before = now;
        }
        row[words - 1] &= tail;
    }
}

/// Writes into `mask` the pixels whose bits differ between `was` and `now` (both
/// `words` words a row) unless `keep(p, was_foreground)`; counts them, and gives the
/// first one's index and one past the last's.
fn write_changes(
    was: &[u64],
    now: &[u64],
    words: usize,
    mask: &mut Mask,
    keep: impl Fn(usize, bool) -> bool,
) -> (u64, Option<(usize, usize)>) {
    let w = mask.width as usize;
    let (mut changed, mut span) = (0, None);
    for (k, (&was, &now)) in was.iter().zip(now).enumerate() {
        let mut differ = was ^ now;
        let at = k / words * w + k % words * 64;
        while differ != 0 {
            let bit = differ.trailing_zeros() as usize;
            differ &= differ - 1;
            let (p, was_foreground) = (at + bit, was >> bit & 1 != 0);
            if keep(p, was_foreground) {
                continue;
            }
            mask.data[p] = if was_foreground { 0 } else { 255 };
            changed += 1;
            // pixels come in increasing order
            span = Some(span.map_or((p, p + 1), |(first, _)| (first, p + 1)));
        }
    }
    (changed, span)
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
        Smoother::new().smooth(&mut m, |_, _| false);
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

    /// The closing then opening pixel by pixel, the border's pixels repeated.
    fn reference(m: &Mask) -> Vec<u8> {
        let (w, h) = (m.width as i64, m.height as i64);
        let square = |v: &[u8], pick: fn(u8, u8) -> u8| -> Vec<u8> {
            let at = |x: i64, y: i64| v[(y.clamp(0, h - 1) * w + x.clamp(0, w - 1)) as usize];
            (0..h * w)
                .map(|p| {
                    let (x, y) = (p % w, p / w);
                    let mut out = at(x, y);
                    for (dx, dy) in (-1..=1).flat_map(|dx| (-1..=1).map(move |dy| (dx, dy))) {
                        out = pick(out, at(x + dx, y + dy));
                    }
                    out
                })
                .collect()
        };
        let mut v = m.data.clone();
        for pick in [u8::max, u8::min, u8::min, u8::max] {
            v = square(&v, pick);
        }
        v
    }

    #[test]
    fn random_masks_of_every_width_smooth_as_pixel_by_pixel_and_seeds_keep() {
        let mut bits = crate::test_bits::lcg(5);
        for (w, h) in [
            (1, 1),
            (2, 3),
            (63, 4),
            (64, 5),
            (65, 3),
            (130, 7),
            (200, 2),
            (7, 40),
        ]
        .into_iter()
        // tall ones again and again: band edges, each a chance to get a run wrong
        .chain(std::iter::repeat_n([(70, 99), (9, 160)], 12).flatten())
        {
            // pixels set at random (at four densities), then whole rows and whole
            // columns (runs across the bands' edges, which reach furthest)
            for density in [1u64, 3, 4, 6, 8, 9] {
                let rows: Vec<u64> = (0..h.max(w)).map(|_| bits() >> 63).collect();
                let data = (0..w * h)
                    .map(|p| match density {
                        8 => rows[(p / w) as usize] != 0,
                        9 => rows[(p % w) as usize] != 0,
                        _ => bits() >> 61 < density,
                    })
                    .map(|set| if set { 255 } else { 0 })
                    .collect();
                let m = Mask {
                    width: w,
                    height: h,
                    data,
                };
                let want = reference(&m);
                // seeds: every fifth pixel keeps its label
                let keep = |p: usize, _: bool| p.is_multiple_of(5);
                let mut got = m.clone();
                // bands of 16 rows: their edges are inside the taller masks
                let threads = 1 + (w as usize + density as usize) % 3;
                let (changed, span) =
                    with_threads(threads, || Smoother::new().smooth(&mut got, keep));
                let kept: Vec<u8> = (0..want.len())
                    .map(|p| if keep(p, false) { m.data[p] } else { want[p] })
                    .collect();
                assert_eq!(got.data, kept, "{w}x{h}, density {density}");
                let differ: Vec<usize> =
                    (0..kept.len()).filter(|&p| kept[p] != m.data[p]).collect();
                assert_eq!(changed, differ.len() as u64);
                assert_eq!(
                    span,
                    differ.first().map(|&a| (a, differ.last().unwrap() + 1))
                );
            }
        }
    }
}

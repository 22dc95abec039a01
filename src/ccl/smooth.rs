//! The mask's outline smoothed: a 3×3 closing (pinholes, one-pixel notches and gaps
//! fill) then a 3×3 opening (specks and one-pixel spurs go), the morphology background
//! subtraction masks are usually given, closing first so that a pinhole near an edge
//! cannot eat into the region; pixels past the frame's border repeat its edge. Each
//! pass runs in row bands on every core.

use crate::bands;
use crate::grid::Mask;

/// The buffers of the passes, kept from frame to frame.
#[derive(Debug, Default)]
pub struct Smoother {
    a: Vec<u8>,
    b: Vec<u8>,
}

impl Smoother {
    /// A smoother with no buffers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Closes then opens `mask` with a 3×3 square.
    pub fn smooth(&mut self, mask: &mut Mask) {
        let (w, h) = (mask.width as usize, mask.height as usize);
        if w == 0 || h == 0 {
            return;
        }
        self.a.resize(w * h, 0);
        self.b.resize(w * h, 0);
        square(&mask.data, &mut self.a, w, u8::max);
        square(&self.a, &mut self.b, w, u8::min);
        square(&self.b, &mut self.a, w, u8::min);
        square(&self.a, &mut mask.data, w, u8::max);
    }
}

/// `dst` = `pick` (min: erosion, max: dilation) of each pixel's 3×3 square of `src`,
/// whose rows are `w` pixels long.
fn square(src: &[u8], dst: &mut [u8], w: usize, pick: impl Fn(u8, u8) -> u8 + Copy + Sync) {
    let h = src.len() / w;
    bands::for_each_band(dst, w, 1, |first, band| {
        let mut column = vec![0u8; w];
        for (r, out) in band.chunks_exact_mut(w).enumerate() {
            let y = first + r;
            let row = |y: usize| &src[y * w..(y + 1) * w];
            let (up, down) = (row(y.saturating_sub(1)), row((y + 1).min(h - 1)));
            for (((c, &u), &m), &d) in column.iter_mut().zip(up).zip(row(y)).zip(down) {
                *c = pick(pick(u, m), d);
            }
            across(&column, out, pick);
        }
    });
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

//! The neighbour capacities kept for dynamic updates: the forward capacity of every
//! pair, one row-major array per forward direction, and per stretch of `SPAN` pairs
//! of a row whether their capacities are equal both ways. Smoothness terms are
//! symmetric, so where a new frame's forward capacities equal the kept ones and its
//! pairs are symmetric again, the whole stretch is unchanged: `update` compares
//! slices there instead of reading every pair's residuals, which pays on a still
//! camera's frames, where few arcs change (NOTES.md, `kept`). An update told which
//! arcs changed ([`crate::grid::ChangedArcs`]) compares nothing and keeps a stretch
//! symmetric only where the pairs it applied are.

use super::solver::Solver;
use super::state::Topology;
use crate::grid::{Direction, GridProblem};
use std::ops::Range;

/// Pairs per stretch of a row that `update` compares in one go.
pub(super) const SPAN: u32 = 64;
// a stretch's changed pairs are one bit each of a `u64`
const _: () = assert!(SPAN <= u64::BITS);

/// Where the pairs of one forward direction lie in a grid: the columns and rows of
/// their first pixel and the row-major offset to the second.
#[derive(Clone, Debug)]
pub(super) struct Pairs {
    /// Forward direction (an even index of `Direction::ALL`).
    pub(super) fwd: usize,
    /// Columns whose pixel has a neighbour in direction `fwd`.
    pub(super) xs: Range<u32>,
    /// Rows `0..rows` whose pixels have one.
    pub(super) rows: u32,
    /// Row-major index of the neighbour minus that of the pixel (> 0 forwards).
    pub(super) offset: usize,
}

impl Pairs {
    /// The pairs of forward direction `fwd` in a `width`×`height` grid.
    pub(super) fn of(fwd: usize, width: u32, height: u32) -> Self {
        let (dx, dy) = Direction::ALL[fwd].offset();
        let xs = match dx {
            1 => 0..width.saturating_sub(1),
            -1 => width.min(1)..width,
            _ => 0..width,
        };
        let rows = if dy > 0 {
            height.saturating_sub(1)
        } else {
            height
        };
        let offset = (i64::from(dy) * i64::from(width) + i64::from(dx)) as usize;
        Self {
            fwd,
            xs,
            rows,
            offset,
        }
    }

    /// Columns of stretch `s` that have pairs (possibly none).
    pub(super) fn span(&self, s: u32) -> Range<u32> {
        let (a, b) = (s * SPAN, (s + 1) * SPAN);
        a.max(self.xs.start)..b.min(self.xs.end)
    }

    /// Whether `problem`'s pairs starting at columns `xs` of row `y` carry equal
    /// capacities both ways.
    pub(super) fn symmetric(&self, problem: &GridProblem, y: u32, xs: &Range<u32>) -> bool {
        let rs = pixels(problem.width(), y, xs);
        let there = Direction::ALL[self.fwd];
        let back = problem.edges(there.reverse());
        problem.edges(there)[rs.clone()] == back[rs.start + self.offset..rs.end + self.offset]
    }
}

/// Row-major indices of the pixels at columns `xs` of row `y` of a `width`-pixel grid.
pub(super) fn pixels(width: u32, y: u32, xs: &Range<u32>) -> Range<usize> {
    let row = y as usize * width as usize;
    row + xs.start as usize..row + xs.end as usize
}

/// Stretches per row of a `width`-pixel grid.
pub(super) fn spans(width: u32) -> u32 {
    width.div_ceil(SPAN)
}

impl<T: Topology> Solver<T> {
    /// Index in `kept_fwd` of the forward capacity of pixel `r`'s pair in direction
    /// `fwd`.
    #[inline(always)]
    pub(super) fn kept_index(&self, fwd: usize, r: usize) -> usize {
        fwd / 2 * self.layout.pixels() + r
    }

    /// Entries `kept_sym` needs for this grid.
    pub(super) fn sym_len(&self) -> usize {
        T::K / 2 * self.layout.height() as usize * spans(self.layout.width()) as usize
    }
}

/// Keeps row `y` of `problem`'s capacities in forward direction `fwd`: copies them
/// into `caps` and records in `sym` which stretches are symmetric.
pub(super) fn keep_row(
    caps: &mut [i32],
    sym: &mut [bool],
    problem: &GridProblem,
    fwd: usize,
    y: u32,
) {
    let width = problem.width();
    caps.copy_from_slice(&problem.edges(Direction::ALL[fwd])[pixels(width, y, &(0..width))]);
    let pairs = Pairs::of(fwd, width, problem.height());
    for (s, sym) in (0..spans(width)).zip(sym) {
        let xs = pairs.span(s);
        *sym = y >= pairs.rows || xs.is_empty() || pairs.symmetric(problem, y, &xs);
    }
}

#[cfg(test)]
mod tests {
    use super::{Pairs, SPAN};
    use crate::grid::Direction;

    #[test]
    fn pairs_stay_inside_the_grid() {
        let fwd = |d: Direction| d.index();
        let e = Pairs::of(fwd(Direction::East), 5, 3);
        assert_eq!((e.xs, e.rows, e.offset), (0..4, 3, 1));
        let s = Pairs::of(fwd(Direction::South), 5, 3);
        assert_eq!((s.xs, s.rows, s.offset), (0..5, 2, 5));
        let sw = Pairs::of(fwd(Direction::SouthWest), 5, 3);
        assert_eq!((sw.xs, sw.rows, sw.offset), (1..5, 2, 4));
        let one = Pairs::of(fwd(Direction::SouthWest), 1, 3);
        assert!(one.xs.is_empty());
    }

    #[test]
    fn stretches_are_clipped_to_the_pairs() {
        let e = Pairs::of(Direction::East.index(), 2 * SPAN + 10, 1);
        assert_eq!(e.span(0), 0..SPAN);
        assert_eq!(e.span(2), 2 * SPAN..2 * SPAN + 9);
        assert!(e.span(3).is_empty());
    }
}

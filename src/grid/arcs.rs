//! Which capacities of a grid problem changed since the last one built, a bit per
//! pixel's terminal pair and per neighbour pair: what an energy that compares what it
//! writes tells an engine, so that the engine applies exactly those and reads nothing
//! else of the frame.

use super::{Connectivity, Direction};

/// Pixels (and pairs) per word of a row's bits.
pub const WORD: u32 = u64::BITS;

/// One bit per pixel of a `width`×`height` grid for its terminal pair, and per forward
/// direction one per neighbour pair, by the pair's first pixel: bit x % 64 of word
/// x / 64 of the row. A bit is set where a capacity of the pair differs from the last
/// problem built (either way for a neighbour pair). Rows the writer did not say it may
/// mark ([`Self::mark_live`]) hold none, so a frame that changed a few rows is reset
/// and read in those only.
#[derive(Clone, Debug, Default)]
pub struct ChangedArcs {
    width: u32,
    height: u32,
    connectivity: Option<Connectivity>,
    terminals: Vec<u64>,
    /// Per forward direction `Direction::ALL[2 i]`.
    pairs: Vec<Vec<u64>>,
    /// Per row, whether any of its words may be set.
    live: Vec<bool>,
}

impl PartialEq for ChangedArcs {
    /// The same grid and the same bits set (whichever rows were live).
    fn eq(&self, other: &Self) -> bool {
        let shape = |a: &Self| (a.width, a.height, a.connectivity);
        shape(self) == shape(other)
            && self.terminals == other.terminals
            && self.pairs == other.pairs
    }
}

impl ChangedArcs {
    /// No bit set and no row live, for a `width`×`height` grid of `connectivity`;
    /// reuses the arrays, clearing only the rows that were live.
    pub fn reset(&mut self, width: u32, height: u32, connectivity: Connectivity) {
        if self.fits(width, height, connectivity) {
            let n = self.row_words();
            for y in (0..height as usize).filter(|&y| self.live[y]) {
                self.terminals[y * n..][..n].fill(0);
                for words in &mut self.pairs {
                    words[y * n..][..n].fill(0);
                }
            }
            self.live.fill(false);
            return;
        }
        (self.width, self.height) = (width, height);
        self.connectivity = Some(connectivity);
        let len = width.div_ceil(WORD) as usize * height as usize;
        self.terminals.clear();
        self.terminals.resize(len, 0);
        self.pairs
            .resize_with(connectivity.number() as usize / 2, Vec::new);
        for words in &mut self.pairs {
            words.clear();
            words.resize(len, 0);
        }
        self.live.clear();
        self.live.resize(height as usize, false);
    }

    /// Lets rows `ys` be marked (clipped to the grid).
    pub fn mark_live(&mut self, ys: std::ops::Range<u32>) {
        let end = ys.end.min(self.height);
        self.live[ys.start.min(end) as usize..end as usize].fill(true);
    }

    /// Whether row `y` may hold set bits (a row that is not holds none).
    pub fn is_live(&self, y: u32) -> bool {
        self.live[y as usize]
    }

    /// Whether these bits are for a `width`×`height` grid of `connectivity`.
    pub fn fits(&self, width: u32, height: u32, connectivity: Connectivity) -> bool {
        (self.width, self.height, self.connectivity) == (width, height, Some(connectivity))
    }

    /// Words per row.
    pub fn row_words(&self) -> usize {
        self.width.div_ceil(WORD) as usize
    }

    /// Row `y`'s words of terminal bits.
    pub fn terminal_row(&self, y: u32) -> &[u64] {
        let n = self.row_words();
        &self.terminals[y as usize * n..][..n]
    }

    /// Row `y`'s words of the bits of the pairs in forward direction `fwd` (an even
    /// index of `Direction::ALL`).
    pub fn pair_row(&self, fwd: usize, y: u32) -> &[u64] {
        let n = self.row_words();
        &self.pairs[fwd / 2][y as usize * n..][..n]
    }

    /// The terminal bits of every row, to be set.
    pub fn terminals_mut(&mut self) -> &mut [u64] {
        &mut self.terminals
    }

    /// Per forward direction, the pair bits of every row, to be set.
    pub fn pairs_mut(&mut self) -> &mut [Vec<u64>] {
        &mut self.pairs
    }

    /// Set bits: the terminal pairs and neighbour pairs that changed.
    pub fn count(&self) -> u64 {
        let ones = |w: &[u64]| w.iter().map(|w| u64::from(w.count_ones())).sum::<u64>();
        ones(&self.terminals) + self.pairs.iter().map(|p| ones(p)).sum::<u64>()
    }

    /// The bits of two problems' differences, found by comparing every capacity: what
    /// an energy's bits must equal.
    pub fn between(a: &super::GridProblem, b: &super::GridProblem) -> Self {
        let (width, height) = (a.width(), a.height());
        let mut arcs = Self::default();
        arcs.reset(width, height, a.connectivity());
        arcs.mark_live(0..height);
        let n = arcs.row_words();
        for y in 0..height {
            let row = y as usize * width as usize..(y as usize + 1) * width as usize;
            let words = &mut arcs.terminals[y as usize * n..][..n];
            mark_differing(words, 0, &a.source()[row.clone()], &b.source()[row.clone()]);
            mark_differing(words, 0, &a.sink()[row.clone()], &b.sink()[row.clone()]);
            for (i, words) in arcs.pairs.iter_mut().enumerate() {
                let dir = Direction::ALL[2 * i];
                let words = &mut words[y as usize * n..][..n];
                for x in 0..width {
                    let Some(q) = a.neighbour(x, y, dir) else {
                        continue;
                    };
                    let p = row.start + x as usize;
                    let back = dir.reverse();
                    let moved =
                        a.edges(dir)[p] != b.edges(dir)[p] || a.edges(back)[q] != b.edges(back)[q];
                    words[x as usize / WORD as usize] |= u64::from(moved) << (x % WORD);
                }
            }
        }
        arcs
    }
}

/// Sets, in `row` (one row's words), the bit of every column `x0 + i` where `now[i]`
/// differs from `was[i]`.
fn mark_differing<T: PartialEq>(row: &mut [u64], x0: usize, now: &[T], was: &[T]) {
    debug_assert_eq!(now.len(), was.len());
    for_each_word(x0, now.len(), |x, range| {
        let flags = differing(&now[range.clone()], &was[range]);
        row[x / WORD as usize] |= crate::bits::pack_flags(&flags) << (x % WORD as usize);
    });
}

/// Copies `now` over `was` and sets, in `row` (one row's words), the bit of every
/// column `x0 + i` whose value changed: one pass where a writer would make one anyway.
pub fn copy_marking<T: PartialEq + Copy>(row: &mut [u64], x0: usize, was: &mut [T], now: &[T]) {
    debug_assert_eq!(now.len(), was.len());
    for_each_word(x0, now.len(), |x, range| {
        let flags = differing(&now[range.clone()], &was[range.clone()]);
        was[range.clone()].copy_from_slice(&now[range]);
        row[x / WORD as usize] |= crate::bits::pack_flags(&flags) << (x % WORD as usize);
    });
}

/// Calls `f(x, range)` for each part of columns `x0..x0 + len` within one word, `x` its
/// first column and `range` its indices from `x0`.
#[inline(always)]
fn for_each_word(x0: usize, len: usize, mut f: impl FnMut(usize, std::ops::Range<usize>)) {
    let word = WORD as usize;
    let end = x0 + len;
    let mut x = x0;
    while x < end {
        let stop = ((x / word + 1) * word).min(end);
        f(x, x - x0..stop - x0);
        x = stop;
    }
}

/// One byte per pair of `a` and `b` (at most 64), 1 where they differ: packed after,
/// as a bit shifted by its lane does not vectorise.
#[inline(always)]
fn differing<T: PartialEq>(a: &[T], b: &[T]) -> [u8; 64] {
    let mut flags = [0u8; 64];
    for (f, (p, q)) in flags.iter_mut().zip(a.iter().zip(b)) {
        *f = u8::from(p != q);
    }
    flags
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn differing_columns_set_their_bits_across_words() {
        let mut row = [0u64; 3];
        let was = vec![0i32; 150];
        let mut now = was.clone();
        for i in [0, 60, 61, 70, 149] {
            now[i] = 1;
        }
        mark_differing(&mut row, 3, &now[3..], &was[3..]);
        let set: Vec<usize> = (0..192)
            .filter(|&x| row[x / 64] >> (x % 64) & 1 == 1)
            .collect();
        assert_eq!(set, vec![60, 61, 70, 149]);
        mark_differing(&mut row, 0, &now[..1], &was[..1]);
        assert_eq!(row[0] & 1, 1, "bits are added to those set");
        let mut copied = [0u64; 3];
        let mut kept = was.clone();
        copy_marking(&mut copied, 3, &mut kept[3..], &now[3..]);
        assert_eq!(kept[3..], now[3..]);
        assert_eq!(copied, [row[0] & !1, row[1], row[2]]);
    }
}

//! A search stopped at its frame budget: the search state stays consistent (no
//! orphan waiting, no flow held back, the nodes still to grow keep their active
//! flag), so the next call continues it; the cut returned meanwhile is the better of
//! the two the search trees give, with how far its capacity can be above the
//! minimum (why these two: NOTES.md, "Frame budget").

use super::layout::BLOCK;
use super::solver::Solver;
use super::state::{SINK, SOURCE, TREE, Topology};
use crate::bands;
use crate::grid::Mask;
use std::ops::Range;
use std::sync::Mutex;
use std::time::Instant;

/// Grown nodes between two looks at the clock: a few microseconds of search, so a
/// stop comes well within a budget of a fraction of a millisecond.
pub(super) const CHECK_EVERY: u32 = 64;

impl<T: Topology> Solver<T> {
    /// Whether the search's deadline has passed (never without one).
    pub(super) fn past_deadline(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }

    /// The tree cut of the current state with the lower capacity, and by how much
    /// its capacity exceeds the flow pushed so far (for any flow and any s–t cut, the
    /// residual capacity leaving its source side).
    pub(super) fn budgeted_cut(&self) -> (Mask, u64) {
        let (source_tree, not_sink_tree) = self.tree_gaps();
        if source_tree <= not_sink_tree {
            (self.mask_where(|tree| tree == SOURCE), source_tree)
        } else {
            (self.mask_where(|tree| tree != SINK), not_sink_tree)
        }
    }

    /// The residual capacity leaving each tree cut's source side: (source tree, not
    /// sink tree), summed over bands of rows on every core (exact sums: the same on any
    /// number of threads).
    fn tree_gaps(&self) -> (u64, u64) {
        let height = self.layout.height();
        let rows = bands::band_rows(height as usize) as u32;
        let parts: Vec<Range<u32>> = (0..height)
            .step_by(rows as usize)
            .map(|y| y..(y + rows).min(height))
            .collect();
        let total = Mutex::new((0u64, 0u64));
        bands::for_each_part(parts, |ys| {
            let (a, b) = self.tree_gaps_in(ys);
            let mut total = total.lock().unwrap_or_else(|e| e.into_inner());
            total.0 += a;
            total.1 += b;
        });
        total.into_inner().unwrap_or_else(|e| e.into_inner())
    }

    /// [`Self::tree_gaps`] of the pixel rows `ys`, read a block's row of nodes (one
    /// contiguous run) at a time.
    fn tree_gaps_in(&self, ys: Range<u32>) -> (u64, u64) {
        let width = self.layout.width();
        let mut gaps = (0u64, 0u64);
        for y in ys {
            for x in (0..width).step_by(BLOCK as usize) {
                let first = self.layout.index(x, y);
                for u in first..first + BLOCK.min(width - x) {
                    let (a, b) = self.node_gaps(u);
                    gaps.0 += a;
                    gaps.1 += b;
                }
            }
        }
        gaps
    }

    /// Node `u`'s share of [`Self::tree_gaps`]: its terminal residual and residual arcs
    /// that leave each cut's source side.
    #[inline(always)]
    fn node_gaps(&self, u: u32) -> (u64, u64) {
        let (mut source_tree, mut not_sink_tree) = (0u64, 0u64);
        let tree = self.w(u) & TREE;
        let t = self.tr[u as usize];
        let (to_sink, from_source) = ((-t).max(0) as u64, t.max(0) as u64);
        if tree == SOURCE {
            source_tree += to_sink;
        } else {
            source_tree += from_source;
        }
        if tree == SINK {
            // a sink-tree node is on the sink side of both cuts: no arc of it leaves one
            return (source_tree, not_sink_tree + from_source);
        }
        not_sink_tree += to_sink;
        let source = tree == SOURCE;
        let base = u as usize * T::K;
        for (d, &r) in self.rc[base..base + T::K].iter().enumerate() {
            // an arc without residual capacity counts for nothing, and may leave the
            // grid: it reads `u` itself instead of its neighbour
            let v = if r != 0 {
                self.layout.neighbour(u, d)
            } else {
                u
            };
            let other = self.w(v) & TREE;
            source_tree += u64::from(r) * u64::from(source && other != SOURCE);
            not_sink_tree += u64::from(r) * u64::from(other == SINK);
        }
        (source_tree, not_sink_tree)
    }
}

//! A search stopped at its frame budget: the search state stays consistent (no
//! orphan waiting, no flow held back, the nodes still to grow keep their active
//! flag), so the next call continues it; the cut returned meanwhile is the better of
//! the two the search trees give, with how far its capacity can be above the
//! minimum (why these two: NOTES.md, "Frame budget").

use super::solver::Solver;
use super::state::{SINK, SOURCE, TREE, Topology, out_mask};
use crate::grid::Mask;
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
    /// sink tree).
    fn tree_gaps(&self) -> (u64, u64) {
        let k = T::K;
        let (width, height) = (self.layout.width(), self.layout.height());
        let (mut source_tree, mut not_sink_tree) = (0u64, 0u64);
        for y in 0..height {
            for x in 0..width {
                let u = self.layout.index(x, y);
                let tree = self.w(u) & TREE;
                let t = self.tr[u as usize];
                let (to_sink, from_source) = ((-t).max(0) as u64, t.max(0) as u64);
                if tree == SOURCE {
                    source_tree += to_sink;
                } else {
                    source_tree += from_source;
                }
                if tree == SINK {
                    not_sink_tree += from_source;
                } else {
                    not_sink_tree += to_sink;
                }
                let mut bits = out_mask::<T>(self.w(u));
                while bits != 0 {
                    let d = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    let other = self.w(self.layout.neighbour(u, d)) & TREE;
                    let r = u64::from(self.rc[u as usize * k + d]);
                    if tree == SOURCE && other != SOURCE {
                        source_tree += r;
                    }
                    if tree != SINK && other == SINK {
                        not_sink_tree += r;
                    }
                }
            }
        }
        (source_tree, not_sink_tree)
    }
}

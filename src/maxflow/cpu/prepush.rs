//! Short paths first: before the search trees grow, flow is pushed along every path
//! s → u → v → t that uses one neighbour arc, in one sweep in memory order.
//! Segmentation energies carry much of their flow over such paths, where the pixels
//! each terminal pulls meet; one cache-friendly sweep spares BK the growth step,
//! augmentation and orphan adoption that each of them costs there. Every push follows a
//! residual path from s to t, so BK afterwards finishes from a valid flow: exact.

use super::solver::Solver;
use super::state::{Topology, out_mask};

impl<T: Topology> Solver<T> {
    /// Pushes flow along the s → u → v → t paths of a freshly loaded problem. Nodes
    /// whose terminal residual reaches zero leave their one-node trees.
    pub(super) fn push_short_paths(&mut self) {
        let n = self.st.len() as u32;
        for u in 0..n {
            let mut excess = self.tr[u as usize];
            if excess <= 0 {
                continue;
            }
            let mut bits = out_mask::<T>(self.w(u));
            while bits != 0 {
                let d = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let v = self.layout.neighbour(u, d);
                let deficit = -*self.tr_mut(v);
                if deficit <= 0 {
                    continue;
                }
                let a = excess
                    .min(deficit)
                    .min(i64::from(self.rc_i(Self::arc(u, d))));
                self.push(u, v, d as u32, a as u32);
                self.flow += a;
                excess -= a;
                *self.tr_mut(v) += a;
                if a == deficit {
                    self.root_by_terminal(v);
                    self.terminals.1 -= 1;
                }
                if excess == 0 {
                    break;
                }
            }
            *self.tr_mut(u) = excess;
            if excess == 0 {
                self.root_by_terminal(u);
                self.terminals.0 -= 1;
            }
        }
    }
}

//! Deficits moved towards supply before the search. A breadth-first search from
//! every node s still feeds (folded terminal residual > 0) gives each node within
//! `RADIUS` its residual distance from the nearest supply (over the axis arcs, also
//! on 8C grids: `AXES`); then, farthest first, every
//! node the sink still pulls passes its deficit to neighbours one step closer to a
//! supply, as far as the arcs allow. Deficits merge on the way and each node passes
//! its share on once, where BK would carry the same flow one augmenting path at a
//! time, walking the whole path for a few units each (on segmentation energies
//! t-links are small against n-links, and paths are long).
//!
//! Exact: moving a deficit from v to its neighbour u is flow u → v → t; where u has
//! no supply to give, it is followed by flow t → u along an arc of unlimited capacity
//! out of the sink. Arcs out of t (and into s) cross no s–t cut forwards, so they
//! change neither the max-flow value nor any minimum cut, and BK finishes from the
//! moved deficits as from any other flow, with the same canonical cut.
//!
//! What the pass costs, and the forms tried instead of it (branch-free labelling and
//! pull, a distance transform, word-parallel labelling): NOTES.md, `transport`.
//!
//! Where the deficits outweigh the supplies in amount, the supplies move instead,
//! towards the deficits (`move_supplies`, the same two passes mirrored; the plan
//! chooses). On coins the moved deficits piled up at the coins' rims, behind
//! supplies the first deficits had used up; BK then gathered the thin supplies of the
//! coins' insides one root at a time, most of its paths ending at a root they emptied,
//! over long source paths.

use super::solver::Solver;
use super::state::{MARK, PARENT, TREE, Topology, in_mask, out_mask};

/// While deficits move no node is in a tree, so a labelled node (MARK set) keeps its
/// distance from the nearest supply in the tree and parent fields.
const LEVEL: u32 = TREE | PARENT;

/// The arcs both passes use: the four axis directions (the first four of
/// `Direction::ALL`), so that on 8C grids terminals move over the 4-connected
/// sub-grid. Levels and pulls over all eight arcs cost twice the work for moves that
/// leave BK no less to do (NOTES.md, `AXES`).
const AXES: u32 = 0xF;

/// Farthest distance labelled (fits `LEVEL`): farther, the moves cost more than they
/// save; nearer, most energies lose moves that paid (NOTES.md, `RADIUS`).
const RADIUS: u32 = 32;

impl<T: Topology> Solver<T> {
    /// Moves deficits towards supply on a freshly loaded problem, then makes every
    /// node with a terminal residual a root again, as `load` does. Uses `pa` as the
    /// search queue: no node has a tree arc before BK starts.
    pub(super) fn move_deficits(&mut self) {
        self.move_terminals::<true>();
    }

    /// The mirror of `move_deficits`: supplies move towards the sink's pull, each
    /// node s still feeds passing its supply on to neighbours one step closer to a
    /// deficit (levels by a search from the deficits over reverse residual arcs).
    /// Exact as the original: moving a supply from u to its neighbour v is flow
    /// s → u → v, followed, where v has no deficit to take it, by flow v → s along an
    /// arc into s, which crosses no s–t cut forwards.
    pub(super) fn move_supplies(&mut self) {
        self.move_terminals::<false>();
    }

    /// Deficits towards supply (`UP`) or supplies towards deficits, then fresh roots.
    fn move_terminals<const UP: bool>(&mut self) {
        let reached = self.label_from::<UP>();
        self.pull::<UP>(reached);
        self.roots_by_terminal();
    }

    /// Level of labelled node `u`.
    #[inline(always)]
    fn level(&self, u: u32) -> u32 {
        self.w(u) & LEVEL
    }

    /// Whether `u` carries a level.
    #[inline(always)]
    fn labelled(&self, u: u32) -> bool {
        self.w(u) & MARK != 0
    }

    /// Gives `u` the level `level`.
    #[inline(always)]
    fn set_level(&mut self, u: u32, level: u32) {
        self.set(u, (self.w(u) & !LEVEL) | MARK | level);
    }

    /// Breadth-first search over residual arcs from every supply node (`UP`; over
    /// reverse residual arcs from every deficit node otherwise), up to `RADIUS`;
    /// returns how many nodes it queued, in search order in `pa`. Where the seeds
    /// (level 0) are the majority, the search starts from level 1 instead
    /// (`first_level`), so that the seeds, which pass nothing on in `pull`, never
    /// enter the queue.
    fn label_from<const UP: bool>(&mut self) -> usize {
        let seeds = if UP {
            self.terminals.0
        } else {
            self.terminals.1
        };
        let queued = if 2 * seeds >= self.layout.pixels() {
            self.first_level::<UP>()
        } else {
            self.seeds::<UP>()
        };
        self.spread::<UP>(queued)
    }

    /// Goes on with the search from the `queued` nodes at the front of `pa`, level
    /// by level; returns how many nodes are queued in the end.
    fn spread<const UP: bool>(&mut self, queued: usize) -> usize {
        let mut tail = queued;
        let mut head = 0usize;
        while head < tail {
            let w = self.pa[head];
            head += 1;
            let next = self.level(w) + 1;
            if next > RADIUS {
                continue;
            }
            let mut bits = self.search_arcs::<UP>(w);
            while bits != 0 {
                let d = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let v = self.layout.neighbour(w, d);
                if !self.labelled(v) {
                    self.set_level(v, next);
                    self.pa[tail] = v;
                    tail += 1;
                }
            }
        }
        tail
    }

    /// Gives every seed level 0 and queues it in `pa`; returns how many. (Kept out
    /// of line, as `first_level` is: inlined, either costs the search that follows
    /// more instructions.)
    #[inline(never)]
    fn seeds<const UP: bool>(&mut self) -> usize {
        let mut tail = 0usize;
        for u in 0..self.st.len() as u32 {
            if self.seed::<UP>(u) {
                self.set_level(u, 0);
                self.pa[tail] = u;
                tail += 1;
            }
        }
        tail
    }

    /// Gives every seed level 0 and every other node with a search arc from a seed
    /// level 1, in one pass in memory order; queues only the latter in `pa` and
    /// returns how many. Each non-seed tests its neighbours, so this pays only where
    /// seeds are the majority (NOTES.md, `first_level`).
    #[inline(never)]
    fn first_level<const UP: bool>(&mut self) -> usize {
        let mut tail = 0usize;
        for u in 0..self.st.len() as u32 {
            if self.seed::<UP>(u) {
                self.set_level(u, 0);
                continue;
            }
            let mut bits = self.back_arcs::<UP>(u);
            while bits != 0 {
                let d = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.seed::<UP>(self.layout.neighbour(u, d)) {
                    self.set_level(u, 1);
                    self.pa[tail] = u;
                    tail += 1;
                    break;
                }
            }
        }
        tail
    }

    /// Directions of `u`'s arcs the search follows: residual arcs out of `u` when
    /// searching from the supplies (`UP`), into `u` from the deficits.
    #[inline(always)]
    fn search_arcs<const UP: bool>(&self, u: u32) -> u32 {
        let w = self.w(u);
        AXES & if UP {
            out_mask::<T>(w)
        } else {
            in_mask::<T>(w)
        }
    }

    /// Directions of `u`'s arcs the search would reach `u` over, and the pull
    /// moves amounts over: the reverse of `search_arcs`.
    #[inline(always)]
    fn back_arcs<const UP: bool>(&self, u: u32) -> u32 {
        let w = self.w(u);
        AXES & if UP {
            in_mask::<T>(w)
        } else {
            out_mask::<T>(w)
        }
    }

    /// Whether the search starts at `u`: s feeds it (`UP`) or the sink pulls it.
    #[inline(always)]
    fn seed<const UP: bool>(&self, u: u32) -> bool {
        let t = self.tr[u as usize];
        if UP { t > 0 } else { t < 0 }
    }

    /// Visits the labelled nodes farthest first; each one the sink pulls (`UP`; each
    /// one s feeds otherwise) passes what its arcs allow to or from neighbours one
    /// level closer, which pass it on in their turn (or cover it: flow).
    fn pull<const UP: bool>(&mut self, reached: usize) {
        // folded terminal residuals read as what a node holds of the kind that moves
        // (a deficit when `UP`, a supply otherwise) count negative times this
        let sign: i64 = if UP { 1 } else { -1 };
        for i in (0..reached).rev() {
            let v = self.pa[i];
            let mut amount = -sign * self.tr[v as usize];
            let lv = self.level(v);
            if amount <= 0 || lv == 0 {
                continue;
            }
            let mut bits = self.back_arcs::<UP>(v);
            while bits != 0 && amount > 0 {
                let d = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let u = self.layout.neighbour(v, d);
                if !self.labelled(u) || self.level(u) >= lv {
                    continue;
                }
                // the arc the amount crosses (u → v moving a deficit, v → u a supply)
                let (from, to, dir) = if UP { (u, v, d ^ 1) } else { (v, u, d) };
                let a = amount.min(i64::from(self.rc_i(Self::arc(from, dir))));
                self.push(from, to, dir as u32, a as u32);
                amount -= a;
                // what u holds of the opposite kind covers the amount: flow s → t
                let held = sign * *self.tr_mut(u);
                *self.tr_mut(u) -= sign * a;
                if held > 0 {
                    self.flow += a.min(held);
                }
            }
            self.tr[v as usize] = -sign * amount;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RADIUS;
    use crate::grid::{Connectivity, GridProblem};
    use crate::maxflow::cpu::layout::Layout;
    use crate::maxflow::cpu::solver::Solver;
    use crate::maxflow::cpu::state::{Eight, Four, Topology};

    /// Each node's level after the search of `p` (from its supplies when `UP`, else
    /// from its deficits), started from the queued seeds or, with `first`, from the
    /// first level.
    fn levels<T: Topology, const UP: bool>(p: &GridProblem, first: bool) -> Vec<Option<u32>> {
        let mut s = Solver::<T>::new(Layout::new(p.width(), p.height()).unwrap());
        s.load(p).unwrap();
        s.push_short_paths();
        let queued = if first {
            s.first_level::<UP>()
        } else {
            s.seeds::<UP>()
        };
        s.spread::<UP>(queued);
        (0..s.st.len() as u32)
            .map(|u| s.labelled(u).then(|| s.level(u)))
            .collect()
    }

    fn same_levels<T: Topology>(p: &GridProblem) {
        assert_eq!(levels::<T, true>(p, true), levels::<T, true>(p, false));
        assert_eq!(levels::<T, false>(p, true), levels::<T, false>(p, false));
    }

    #[test]
    fn the_search_from_the_first_level_labels_as_from_the_seeds() {
        // 13×11 is not whole 8×8 blocks; 90×2 has paths longer than the radius.
        for seed in 0..40 {
            for (w, h) in [(13, 11), (90, 2)] {
                same_levels::<Four>(&random_grid(seed, w, h, Connectivity::Four));
                same_levels::<Eight>(&random_grid(seed, w, h, Connectivity::Eight));
            }
        }
        // From a supply at one end of a line, both stop at the radius.
        for first in [true, false] {
            let reached = levels::<Four, true>(&line(90, &[0], &[89]), first);
            assert_eq!(reached.iter().flatten().max(), Some(&RADIUS));
            assert_eq!(reached.iter().flatten().count(), RADIUS as usize + 1);
        }
    }
    use crate::maxflow::Engine;
    use crate::maxflow::cpu::CpuEngine;
    use crate::maxflow::cpu::fixtures::{line, line_with, random_grid};

    #[test]
    fn a_deficit_within_reach_is_pulled_to_the_supply_without_search() {
        let s = CpuEngine::new().solve(&line(12, &[0], &[11])).unwrap();
        assert_eq!((s.flow, s.stats.iterations), (5, 0));
        assert_eq!(s.mask.count_source(), 0);
    }

    #[test]
    fn supplies_outweighed_by_deficits_move_to_them_without_search() {
        // 2 units fed at pixels 0 and 1, 8 pulled at pixels 10 and 11: the deficits
        // outweigh the supplies four times, so the supplies move.
        let (mut source, mut sink) = (vec![0; 12], vec![0; 12]);
        source[..2].fill(2);
        sink[10..].fill(8);
        let s = CpuEngine::new().solve(&line_with(source, sink)).unwrap();
        assert_eq!((s.flow, s.stats.iterations), (4, 0));
        assert_eq!(s.mask.count_source(), 0);
    }

    #[test]
    fn a_deficit_beyond_the_radius_is_left_to_the_search() {
        // Supplies at one end, deficits at the other, 2 units each: terminals at more
        // than one pixel in eight, so the pass runs.
        let n = RADIUS as usize + 8;
        let (mut source, mut sink) = (vec![0; n], vec![0; n]);
        source[..3].fill(2);
        sink[n - 3..].fill(2);
        let s = CpuEngine::new().solve(&line_with(source, sink)).unwrap();
        assert_eq!(s.flow, 6);
        // Pulled within reach, the deficits would end at pixel 2, taking its supply,
        // and leave the search the paths from pixels 0 and 1 only: two, not three.
        assert_eq!(s.stats.iterations, 3);
    }
}

//! Deficits moved towards supply before the search, as the 2D engine's `transport`
//! does: a breadth-first search from every node s still feeds labels each node within
//! `RADIUS` with its residual distance from the nearest supply (over the six axis
//! arcs); then, farthest first, every node the sink still pulls passes its deficit to
//! neighbours one step closer to a supply, as far as the arcs allow. Deficits merge on
//! the way, where BK would carry the same flow one augmenting path at a time.
//!
//! Exact: moving a deficit from v to its neighbour u is flow u → v → t; where u has no
//! supply to give, it is followed by flow t → u along an arc of unlimited capacity out
//! of the sink. Arcs out of t cross no s–t cut forwards, so they change neither the
//! max-flow value nor any minimum cut (nor the smallest source set of one), and BK
//! finishes from the moved deficits as from any other flow.

use super::hood::{Hood, in_mask, out_mask};
use super::solver::Solver;

/// The arcs the passes use: the six axis directions (the first six of `OFFSETS`), as
/// the 2D engine moves terminals over the axis arcs of 8-connected grids.
const AXES: u64 = 0x3F;

/// Farthest distance labelled, as in 2D.
const RADIUS: u8 = 32;

/// Not labelled (farther than `RADIUS` from any supply, or not reachable).
const FAR: u8 = u8::MAX;

impl<H: Hood> Solver<H> {
    /// Moves the deficits towards supply over the current residual graph (no node in
    /// a tree yet).
    pub(super) fn move_deficits(&mut self) {
        self.label_from_supplies();
        for k in (0..self.order.len()).rev() {
            let v = self.order[k];
            let level = self.level[v as usize];
            if level > 0 && self.tr[v as usize] < 0 {
                self.pass_deficit(v, level);
            }
        }
    }

    /// Labels every node within `RADIUS` residual steps of a supply with that
    /// distance (`level`), in breadth-first order (`order`).
    fn label_from_supplies(&mut self) {
        let n = self.st.len();
        self.level.clear();
        self.level.resize(n, FAR);
        self.order.clear();
        for u in 0..n as u32 {
            if self.tr[u as usize] > 0 {
                self.level[u as usize] = 0;
                self.order.push(u);
            }
        }
        let mut next = 0;
        while next < self.order.len() {
            let u = self.order[next];
            next += 1;
            let level = self.level[u as usize];
            if level == RADIUS {
                continue;
            }
            let mut bits = out_mask::<H>(self.w(u)) & AXES;
            while bits != 0 {
                let d = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let v = self.layout.neighbour(u, d);
                if self.level[v as usize] == FAR {
                    self.level[v as usize] = level + 1;
                    self.order.push(v);
                }
            }
        }
    }

    /// Passes node `v`'s deficit (it is at `level`) to its neighbours one level
    /// closer to a supply, over their residual arcs into `v`.
    fn pass_deficit(&mut self, v: u32, level: u8) {
        let mut bits = in_mask::<H>(self.w(v)) & AXES;
        while bits != 0 && self.tr[v as usize] < 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let u = self.layout.neighbour(v, d);
            if self.level[u as usize] != level - 1 {
                continue;
            }
            let deficit = -self.tr[v as usize];
            let a = deficit.min(self.rc(Self::arc(u, d ^ 1)) as i64);
            self.push(u, v, d ^ 1, a as u32);
            self.tr[v as usize] += a;
            self.tr[u as usize] -= a;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::grid::{VolumeConnectivity, VolumeProblem};
    use crate::maxflow::VolumeEngine;
    use crate::maxflow::cpu::CpuVolumeEngine;

    #[test]
    fn a_deficit_three_steps_from_a_supply_moves_to_it_and_leaves_bk_nothing() {
        // a line along z: s → 0 (5), 3 → t (3), every arc 10 both ways
        let c = VolumeConnectivity::Six;
        let mut edges = vec![vec![0; 5]; 6];
        edges[4][..4].fill(10);
        edges[5][1..].fill(10);
        let (source, sink) = (vec![5, 0, 0, 0, 0], vec![0, 0, 0, 3, 0]);
        let p = VolumeProblem::from_arrays((1, 1, 5), c, source, sink, edges).unwrap();
        let s = CpuVolumeEngine::new().solve(&p).unwrap();
        assert_eq!((s.flow, s.stats.iterations), (3, 0));
        assert_eq!(s.mask.data, vec![255, 255, 255, 255, 255]);
    }
}

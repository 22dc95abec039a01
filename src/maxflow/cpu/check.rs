//! Invariants of the finished solver state, checked after every run in debug builds
//! (tests): saturation bits agree with the residuals, tree links follow residual
//! arcs, terminal residuals hang from their tree's terminal, and the source tree is
//! closed (so it is exactly the set reachable from s). The sink tree need not be: its
//! roots may start passive (see `plan`).

use super::solver::{PA_TERMINAL, Solver};
use super::state::{
    ACTIVE, FREE, MARK, PARENT, SINK, SOURCE, TERMINAL, TREE, Topology, in_bit, out_bit,
};
use crate::grid::Direction;

impl<T: Topology> Solver<T> {
    /// Panics with a description of the first broken invariant.
    pub(super) fn check_invariants(&self) {
        let k = T::K;
        let (width, height) = (self.layout.width() as i64, self.layout.height() as i64);
        for y in 0..height {
            for x in 0..width {
                let u = self.layout.index(x as u32, y as u32);
                let w = self.w(u);
                let at = format!("node ({x}, {y}) state {w:#x}");
                assert_eq!(w & (ACTIVE | MARK), 0, "{at}: flag left set");
                for (d, dir) in Direction::ALL[..k].iter().enumerate() {
                    let (dx, dy) = dir.offset();
                    let (nx, ny) = (x + dx as i64, y + dy as i64);
                    let out = self.rc[u as usize * k + d] > 0;
                    assert_eq!(out, w & out_bit::<T>(d) != 0, "{at}: out bit {d}");
                    if nx < 0 || ny < 0 || nx >= width || ny >= height {
                        assert!(!out, "{at}: residual off the grid");
                        assert_eq!(w & in_bit::<T>(d), 0, "{at}: in bit {d} off the grid");
                        continue;
                    }
                    let v = self.layout.neighbour(u, d);
                    let inn = self.rc[v as usize * k + (d ^ 1)] > 0;
                    assert_eq!(inn, w & in_bit::<T>(d) != 0, "{at}: in bit {d}");
                    let tv = self.w(v) & TREE;
                    if w & TREE == SOURCE && out {
                        assert_eq!(tv, SOURCE, "{at}: source tree not closed along {d}");
                    }
                }
                let tr = self.tr[u as usize];
                let (tree, pc) = (w & TREE, w & PARENT);
                match tr {
                    1.. => assert_eq!((tree, pc), (SOURCE, TERMINAL), "{at}: tr {tr}"),
                    ..0 => assert_eq!((tree, pc), (SINK, TERMINAL), "{at}: tr {tr}"),
                    0 => assert!(tree == FREE || pc != TERMINAL, "{at}: root without tr"),
                }
                if tree != FREE && pc == TERMINAL {
                    assert_eq!(self.pa[u as usize], PA_TERMINAL, "{at}: root's tree arc");
                }
                if tree != FREE && pc != TERMINAL {
                    assert!((pc as usize) < k, "{at}: bad parent code");
                    let v = self.layout.neighbour(u, pc as usize);
                    let arc = (v as usize * k + (pc as usize ^ 1)) as u32;
                    assert_eq!(self.pa[u as usize], arc, "{at}: tree arc index");
                    assert_eq!(self.w(v) & TREE, tree, "{at}: parent in another tree");
                    let arc = if tree == SOURCE {
                        self.rc[v as usize * k + (pc as usize ^ 1)]
                    } else {
                        self.rc[u as usize * k + pc as usize]
                    };
                    assert!(arc > 0, "{at}: saturated tree arc");
                }
            }
        }
    }
}

//! How a fresh solve searches, chosen from how many nodes each terminal still touches
//! after the short-path sweep. Where supplies and deficits are both common, deficits
//! are moved towards supply first (`transport`), followed by the supplies left
//! where they outnumber the deficits left, or supplies towards the deficits where
//! those far outweigh them in amount. Where the sink pulls far more nodes than s
//! feeds (an object on a large background), nothing is moved and the sink
//! tree's roots start passive (not flagged active, so BK's initial sweep passes over
//! them), so that the source tree alone searches; a sink root that adoption
//! re-activates later grows like any node. Where terminal nodes are rare (seed
//! strokes), the trees grow breadth first from them.
//!
//! Passive sink roots keep BK exact. BK stops when no node is active, and the source
//! tree is then closed under residual arcs whatever the sink tree did: a source node
//! goes passive only once each of its residual arcs leads into the source tree (an arc
//! into the sink tree is augmented until it saturates or its head leaves that tree,
//! a free head joins), and a source node that is freed makes its feeders in the tree
//! active again. A closed source tree holding every supply is the set of nodes
//! reachable from s: the flow is maximum and the mask the canonical one. Growing the
//! sink tree only shortens the search, and where nearly every node is a sink root the
//! source tree meets one within a step or two anyway.

use super::solver::Solver;
use super::state::{ACTIVE, PARENT, SINK, TERMINAL, TREE, Topology};

/// Deficits are moved only where the scarcer kind of terminal node (supply or
/// deficit) is at least one in this many of the more common kind. Where one terminal
/// pulls a small region, BK's few paths from it are cheap and moving the abundant
/// deficits is wasted work (NOTES.md, `SCARCE` and `SPARSE`).
const SCARCE: usize = 4;

/// Deficits are moved only where at least one pixel in this many is a terminal
/// node: where terminals are sparse (seed strokes, t-links on a tenth of the pixels)
/// the pass labels much of the grid for few deficits. Image energies have terminal
/// residual at nearly every pixel.
const SPARSE: usize = 8;

/// The trees grow breadth first (`grow_breadth_first`) where fewer than one pixel in
/// this many is a terminal node, as from seed strokes: shorter tree paths and fewer
/// orphans there, while denser terminals no longer gain (NOTES.md, `BREADTH_FIRST`).
const BREADTH_FIRST: usize = 16;

/// Sink roots start passive where deficit nodes outnumber supply nodes this many
/// times or more. At lower ratios the sink tree's growth pays, where the sink's nodes
/// are few and far from the source's. Moving supplies towards deficits first (the
/// mirror of `move_deficits`) cut augmentations but cost more than it saved
/// (NOTES.md, `PASSIVE_SINK`).
const PASSIVE_SINK: usize = 8;

/// Supplies are moved towards deficits instead (`move_supplies`) where the deficits
/// outweigh the supplies this many times in amount (`Solver::amounts`, nodes pulled
/// harder than their arcs carry left out): moved deficits pile up behind the few
/// supplies, which BK's paths then collect a few units at a time, while moved
/// supplies are absorbed on the way. On balanced energies moving supplies instead
/// costs BK more augmentations; where many supplies are left after the deficits
/// moved, a second pass moves them (`SUPPLIES_LEFT_PERCENT`). See NOTES.md,
/// `MOVE_SUPPLIES`.
const MOVE_SUPPLIES: u64 = 2;

/// The supplies left after the deficits moved move too, towards the
/// deficits left, where the supply nodes left are at least this many percent of
/// the deficit nodes left: each such supply would cost BK a path of its own to a
/// deficit it now reaches merged with its neighbours'. Where fewer supplies are left
/// the second pass costs more than it saves (NOTES.md, `SUPPLIES_LEFT_PERCENT`).
const SUPPLIES_LEFT_PERCENT: usize = 150;

impl<T: Topology> Solver<T> {
    /// Prepares the search of a freshly loaded problem (after `push_short_paths`).
    pub(super) fn plan_search(&mut self) {
        let (supplies, deficits) = self.terminals;
        #[cfg(debug_assertions)]
        assert_eq!((supplies, deficits), self.terminal_nodes());
        self.place_terminals(supplies, deficits);
        if (supplies + deficits) * BREADTH_FIRST < self.layout.pixels() {
            self.grow_breadth_first();
        }
    }

    /// Moves deficits or supplies (where many supplies are left, supplies after
    /// deficits: `SUPPLIES_LEFT_PERCENT`), or makes the sink roots passive, as
    /// the counts of `supplies` and `deficits` suggest (or neither).
    fn place_terminals(&mut self, supplies: usize, deficits: usize) {
        if supplies == 0 || deficits == 0 {
            return;
        }
        if deficits >= PASSIVE_SINK * supplies {
            self.make_sink_roots_passive();
        } else if supplies.min(deficits) * SCARCE >= supplies.max(deficits)
            && (supplies + deficits) * SPARSE >= self.layout.pixels()
        {
            let (supply, deficit) = self.amounts;
            if deficit >= MOVE_SUPPLIES * supply {
                self.move_supplies();
            } else {
                self.move_deficits();
                let (left_s, left_d) = self.terminals;
                if 100 * left_s >= SUPPLIES_LEFT_PERCENT * left_d {
                    self.move_supplies();
                }
            }
        }
    }

    /// Queues every active node and ends the sweep before it starts, so that the
    /// trees grow breadth first: the sweep grows each node it finds flagged as soon
    /// as it reaches it, nodes ahead of it in memory order before nodes nearer a
    /// terminal, which is cheap where nearly every node starts active (image
    /// energies) but, from a few seed strokes, grows long winding tree paths whose
    /// augmentations orphan more. Such trees are not re-hung in growth either (8C's
    /// marking heuristic, see `run`): breadth-first trees start as shortest-path trees,
    /// and re-hanging them cost more augmentations than it saved walking. Dense 8C
    /// energies, whose trees grow by the sweep, keep it (NOTES.md, `GROW_MARK`).
    fn grow_breadth_first(&mut self) {
        for u in 0..self.st.len() as u32 {
            if self.w(u) & ACTIVE != 0 {
                self.queue.push_back(u);
            }
        }
        self.sweep = self.st.len();
    }

    /// Clears the active flag of every sink root. One branch-free pass over the state
    /// words: cheaper than the sweep testing each node it meets.
    fn make_sink_roots_passive(&mut self) {
        for w in self.st.iter_mut() {
            let v = T::get(*w);
            let root = v & (TREE | PARENT) == SINK | TERMINAL;
            *w = T::put(v & !(ACTIVE * u32::from(root)));
        }
    }

    /// How many nodes s feeds and how many the sink pulls, counted afresh.
    #[cfg(debug_assertions)]
    fn terminal_nodes(&self) -> (usize, usize) {
        let (mut supplies, mut deficits) = (0, 0);
        for &t in &self.tr {
            supplies += usize::from(t > 0);
            deficits += usize::from(t < 0);
        }
        (supplies, deficits)
    }
}

#[cfg(test)]
mod tests {
    use crate::grid::{Connectivity, Direction, GridProblem};
    use crate::maxflow::Engine;
    use crate::maxflow::cpu::CpuEngine;
    use crate::maxflow::cpu::fixtures::{line, line_with};
    use crate::maxflow::cpu::layout::Layout;
    use crate::maxflow::cpu::solver::Solver;
    use crate::maxflow::cpu::state::Four;

    /// The nodes a planned search of `p` has queued, and whether its sweep is over
    /// (so that growth re-hangs no nodes, see `run`).
    fn planned(p: &GridProblem) -> (Vec<u32>, bool) {
        let mut s = Solver::<Four>::new(Layout::new(p.width(), p.height()).unwrap());
        s.load(p).unwrap();
        s.push_short_paths();
        s.plan_search();
        let queued = std::iter::from_fn(|| s.queue.pop_front()).collect();
        (queued, s.sweep == s.st.len())
    }

    #[test]
    fn sparse_terminals_grow_breadth_first_and_dense_ones_by_the_sweep() {
        // 16×16, neighbour capacities 10: s feeds the two pixels of the top-left
        // corner, t pulls the bottom-right one (3 terminal pixels of 256).
        let n = 256;
        let (mut source, mut sink) = (vec![0; n], vec![0; n]);
        source[0] = 5;
        source[1] = 5;
        sink[n - 1] = 5;
        let grid = |s: Vec<i32>, t: Vec<i32>| {
            let c = Connectivity::Four;
            let inside = |i: i32, d: Direction| {
                let (x, y) = (i % 16 + d.offset().0, i / 16 + d.offset().1);
                (0..16).contains(&x) && (0..16).contains(&y)
            };
            let edges = (c.directions().iter())
                .map(|&d| {
                    (0..n as i32)
                        .map(|i| 10 * i32::from(inside(i, d)))
                        .collect()
                })
                .collect();
            GridProblem::from_arrays(16, 16, c, s, t, edges).unwrap()
        };
        let (queued, swept) = planned(&grid(source, sink));
        assert!(swept, "the sweep is skipped, and with it re-hanging");
        assert_eq!(queued.len(), 3, "every terminal node is queued");
        // Every pixel a terminal node: the sweep picks them up in memory order.
        let (queued, swept) = planned(&grid(vec![5; n], (0..n as i32).map(|i| i % 7).collect()));
        assert!(!swept && queued.is_empty());
    }

    #[test]
    fn the_supplies_left_after_the_deficits_moved_move_too() {
        // Supplies of 1 on pixels 0..=9, deficits of 2 on pixels 16..=20: the
        // deficits gather at pixel 9, which covers 1 of them; the 9 left would take
        // BK a path per supply, but the supplies gather at pixel 9 in turn.
        let (mut source, mut sink) = (vec![0; 21], vec![0; 21]);
        source[..10].fill(1);
        sink[16..].fill(2);
        let s = CpuEngine::new().solve(&line_with(source, sink)).unwrap();
        assert_eq!((s.flow, s.stats.iterations), (10, 0));
        assert_eq!(s.mask.count_source(), 0);
    }

    #[test]
    fn deficits_far_more_common_than_supplies_are_left_to_the_search() {
        let s = CpuEngine::new()
            .solve(&line(12, &[0], &[6, 7, 8, 9, 10, 11]))
            .unwrap();
        assert_eq!(s.flow, 5);
        assert!(s.stats.iterations > 0);
        assert_eq!(s.mask.count_source(), 0);
    }

    #[test]
    fn sparse_terminals_are_left_to_the_search() {
        // One supply and one deficit five pixels apart: within the deficit pass's
        // reach, but on 2 pixels of 40.
        let s = CpuEngine::new().solve(&line(40, &[0], &[5])).unwrap();
        assert_eq!((s.flow, s.stats.iterations), (5, 1));
    }

    #[test]
    fn passive_sink_roots_beyond_the_source_tree_are_never_grown() {
        // One supply at pixel 0, deficits on pixels 100..200: the source tree grows to
        // pixel 100 and the sink roots behind it are left alone.
        let pulls: Vec<usize> = (100..200).collect();
        let s = CpuEngine::new().solve(&line(200, &[0], &pulls)).unwrap();
        assert_eq!(s.flow, 5);
        let counts = s
            .stats
            .activity
            .expect("the CPU engine records activity")
            .counts;
        // Blocks of 8 pixels: block 13 starts at pixel 104.
        assert!(counts[..12].iter().all(|&c| c > 0));
        assert_eq!(counts[13..25], [0; 12]);
    }

    #[test]
    fn with_passive_sink_roots_the_source_tree_still_finds_every_path() {
        // One supply of 50 at the middle, eight deficits of 5 on each side reached
        // only through the supply's neighbours: every unit must be found by the
        // source tree growing out to them.
        let (mut source, mut sink) = (vec![0; 41], vec![0; 41]);
        source[20] = 50;
        for i in (0..8).chain(33..41) {
            sink[i] = 5;
        }
        let p = line_with(source, sink);
        let s = CpuEngine::new().solve(&p).unwrap();
        // 10 can leave towards each side (the arcs out of the supply carry 10 each).
        assert_eq!(s.flow, 20);
        assert_eq!(s.mask.count_source(), 1);
    }
}

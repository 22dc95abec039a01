//! Dynamic updates (Kohli & Torr, "Dynamic graph cuts"): new capacities are written
//! into the kept residual graph, arcs whose new capacity is below the flow they carry
//! are reparameterised through the terminals, and the search trees are repaired
//! around the changed nodes (Kolmogorov's tree reuse) before BK resumes.

use super::kept::{Pairs, SPAN, pixels, spans};
use super::solver::Solver;
use super::state::{
    FREE, MARK, ORPHAN, PARENT, SINK, SOURCE, TREE, Topology, growth_mask, in_bit, in_mask,
    out_bit, out_mask,
};
use crate::grid::{Direction, GridProblem, PixelRect};
use std::ops::Range;

/// Trees are grown anew instead of repaired when more than one pixel in this many
/// changed: past that, repairing them costs more (NOTES.md, `RESTART_FRACTION`).
const RESTART_FRACTION: u64 = 4;

/// `update` solves afresh without trying to continue when more than this share of the
/// sampled neighbour capacities changed: the frame changed throughout (a pan, a σ
/// estimated anew), and each changed arc leaves residual at its ends for the resumed
/// search. Below it, what each way has cost decides (NOTES.md, `FRESH_NUM` /
/// `FRESH_DEN`).
const FRESH_NUM: u64 = 1;
const FRESH_DEN: u64 = 2;

/// Pixels whose terminal capacities are compared at once before any is looked at alone.
const TERMINAL_RUN: usize = 32;

/// Every this many rows one is sampled, whole, for [`Solver::changed_throughout`] (whole
/// rows: a strided sample of pixels would read every cache line anyway).
const SAMPLE_STRIDE: usize = 8;

/// Where an update reads the new problem (each rectangle already grown by the pixel
/// an arc reaches): terminal capacities in `terminals`, pairs that start in `edges`.
pub(super) struct Rects {
    pub terminals: Vec<PixelRect>,
    pub edges: Vec<PixelRect>,
}

impl<T: Topology> Solver<T> {
    /// Whether more than `FRESH_NUM` in `FRESH_DEN` neighbour capacities of `problem`
    /// differ from those of the kept residual graph (same shape), judged on the
    /// forward arcs of every `SAMPLE_STRIDE`-th row: a cheap look that spares a frame
    /// that changed throughout a try at continuing.
    pub(super) fn changed_throughout(&self, problem: &GridProblem) -> bool {
        let width = (problem.width() as usize).max(1);
        let (mut seen, mut changed) = (0u64, 0u64);
        for fwd in (0..T::K).step_by(2) {
            let caps = problem.edges(Direction::ALL[fwd]);
            let kept = &self.kept_fwd[self.kept_index(fwd, 0)..][..caps.len()];
            for start in (0..caps.len()).step_by(width * SAMPLE_STRIDE) {
                let end = (start + width).min(caps.len());
                seen += (end - start) as u64;
                changed += caps[start..end]
                    .iter()
                    .zip(&kept[start..end])
                    .map(|(a, b)| u64::from(a != b))
                    .sum::<u64>();
            }
        }
        changed * FRESH_DEN > seen * FRESH_NUM
    }

    /// Writes `problem`'s capacities into the residual graph of the previous call
    /// (same shape), keeping the flow and marking every node whose terminal residual
    /// or incident arcs changed. Returns the number of arcs that changed (a pixel's
    /// terminal pair counts once, when s − t changed).
    pub(super) fn apply_changes(&mut self, problem: &GridProblem) -> u64 {
        self.queue.clear();
        self.orphans.clear();
        self.marked.clear();
        self.activity.fill(0);
        self.iterations = 0;
        self.terminal_changes(problem) + self.arc_changes(problem)
    }

    /// Applies new terminal capacities (folded to s − t, the minimum going to
    /// `offset`). The previous s − t comes from `kept_td`; on the first update, before
    /// it exists, from the terminal residual plus the net flow the node sends to its
    /// neighbours.
    fn terminal_changes(&mut self, problem: &GridProblem) -> u64 {
        let width = self.layout.width() as usize;
        let (source, sink) = (problem.source(), problem.sink());
        let known = self.kept_td.len() == source.len();
        if !known {
            self.kept_td.clear();
            self.kept_td.resize(source.len(), 0);
        }
        self.kept_min.clear();
        self.kept_min
            .extend(source.iter().zip(sink).map(|(&s, &t)| s.min(t)));
        self.offset = self.kept_min.iter().map(|&m| m as u64).sum();
        let mut changed = 0;
        // runs of pixels compared at once (vectorised, no early exit); only the pixels
        // of runs that changed are looked at one by one
        for start in (0..source.len()).step_by(TERMINAL_RUN) {
            let end = (start + TERMINAL_RUN).min(source.len());
            let same = source[start..end]
                .iter()
                .zip(&sink[start..end])
                .zip(&self.kept_td[start..end])
                .fold(true, |all, ((&s, &t), &k)| all & (s.wrapping_sub(t) == k));
            if known && same {
                continue;
            }
            for r in start..end {
                let new = source[r] - sink[r];
                if known && self.kept_td[r] == new {
                    continue;
                }
                let (x, y) = (r % width.max(1), r / width.max(1));
                changed += self.terminal_change(r, x as u32, y as u32, new, known);
            }
        }
        changed
    }

    /// [`Self::apply_changes`] where only the terminals and pairs of `rects` can
    /// differ from the kept problem (the changed tiles grown by a pixel,
    /// [`crate::grid::ChangedTiles::rects`]): nothing outside them is read. The first
    /// update after a fresh solve, which has no kept terminals yet, looks at every
    /// pixel.
    pub(super) fn apply_changes_in(&mut self, problem: &GridProblem, rects: &Rects) -> u64 {
        if self.kept_td.len() != problem.pixels() {
            return self.apply_changes(problem);
        }
        self.queue.clear();
        self.orphans.clear();
        self.marked.clear();
        self.activity.fill(0);
        self.iterations = 0;
        let mut changed = 0;
        for rect in &rects.terminals {
            changed += self.terminal_changes_in(problem, rect);
        }
        for rect in &rects.edges {
            changed += self.arc_changes_in(problem, rect);
        }
        changed
    }

    /// The terminal changes of the pixels in `rect`, with the offset corrected by
    /// their change of min(s, t): a row's minima and changes are found in passes that
    /// vectorise, and only the pixels that changed are looked at one by one.
    fn terminal_changes_in(&mut self, problem: &GridProblem, rect: &PixelRect) -> u64 {
        let width = problem.width() as usize;
        let (source, sink) = (problem.source(), problem.sink());
        let mut changed = 0;
        let mut delta = 0i64;
        for y in rect.ys.clone() {
            let row = y as usize * width;
            let span = row + rect.xs.start as usize..row + rect.xs.end as usize;
            let (s, t) = (&source[span.clone()], &sink[span.clone()]);
            for (m, (&a, &b)) in self.kept_min[span.clone()].iter_mut().zip(s.iter().zip(t)) {
                let min = a.min(b);
                delta += i64::from(min) - i64::from(*m);
                *m = min;
            }
            for start in (span.start..span.end).step_by(TERMINAL_RUN) {
                let end = (start + TERMINAL_RUN).min(span.end);
                let same = source[start..end]
                    .iter()
                    .zip(&sink[start..end])
                    .zip(&self.kept_td[start..end])
                    .fold(true, |all, ((&a, &b), &k)| all & (a.wrapping_sub(b) == k));
                if same {
                    continue;
                }
                for r in start..end {
                    let new = source[r] - sink[r];
                    if self.kept_td[r] != new {
                        let x = (r - row) as u32;
                        changed += self.terminal_change(r, x, y, new, true);
                    }
                }
            }
        }
        self.offset = (self.offset as i64 + delta) as u64;
        changed
    }

    /// The neighbour changes of the pairs that start in `rect` (whole stretches of
    /// the rows it covers).
    fn arc_changes_in(&mut self, problem: &GridProblem, rect: &PixelRect) -> u64 {
        let (width, height) = (self.layout.width(), self.layout.height());
        let all: [Pairs; 4] = std::array::from_fn(|i| Pairs::of(2 * i, width, height));
        if rect.xs.is_empty() {
            return 0;
        }
        let stretches = rect.xs.start / SPAN..(rect.xs.end - 1) / SPAN + 1;
        let mut changed = 0;
        for y in rect.ys.clone() {
            for s in stretches.clone() {
                changed += self.stretch_changes(problem, &all[..T::K / 2], y, s);
            }
        }
        changed
    }

    /// Applies the changed pairs of stretch `s` of row `y` in every forward direction.
    fn stretch_changes(&mut self, problem: &GridProblem, all: &[Pairs], y: u32, s: u32) -> u64 {
        let mut changed = 0;
        for pairs in all {
            let xs = pairs.span(s);
            if y >= pairs.rows || xs.is_empty() {
                continue;
            }
            let i = self.sym_index(pairs.fwd, y, s);
            let (moved, symmetric) = self.moved_pairs(problem, pairs, y, &xs, self.kept_sym[i]);
            if moved != 0 {
                changed += self.apply_span(problem, pairs, y, &xs, moved);
            }
            self.kept_sym[i] = symmetric;
        }
        changed
    }

    /// The pairs of row `y` starting at columns `xs` whose capacities may differ from
    /// the kept ones, one bit per pair (all of them where the span `was_symmetric`
    /// not: the kept backward capacity is then known only from the residuals), and
    /// whether the new ones are symmetric: one pass over the three rows that
    /// vectorises.
    fn moved_pairs(
        &self,
        problem: &GridProblem,
        pairs: &Pairs,
        y: u32,
        xs: &Range<u32>,
        was_symmetric: bool,
    ) -> (u64, bool) {
        let dir = Direction::ALL[pairs.fwd];
        let rs = pixels(problem.width(), y, xs);
        let pq = &problem.edges(dir)[rs.clone()];
        let qp = &problem.edges(dir.reverse())[rs.start + pairs.offset..rs.end + pairs.offset];
        let at = self.kept_index(pairs.fwd, 0);
        let kept = &self.kept_fwd[at + rs.start..at + rs.end];
        let mut moved = 0u64;
        let mut symmetric = true;
        for (i, ((&a, &b), &k)) in pq.iter().zip(qp).zip(kept).enumerate() {
            moved |= u64::from(!(was_symmetric && a == k && b == k)) << i;
            symmetric &= a == b;
        }
        (moved, symmetric)
    }

    /// Applies pixel r's (at x, y) new folded terminal capacity `new`; 1 where it
    /// changed the residual graph.
    #[inline]
    fn terminal_change(&mut self, r: usize, x: u32, y: u32, new: i32, known: bool) -> u64 {
        let kept = std::mem::replace(&mut self.kept_td[r], new);
        let u = self.layout.index(x, y);
        let old = if known {
            kept as i64
        } else {
            self.tr[u as usize] + self.net_outflow(u, x, y)
        };
        let new = new as i64;
        if old == new {
            return 0;
        }
        let ds = new.max(0) - old.max(0);
        let dt = (-new).max(0) - (-old).max(0);
        self.add_terminal(u, ds, dt);
        1
    }

    /// Net flow node `u` at (x, y) sends to its neighbours: capacity minus residual of
    /// each forward arc it starts, minus the same of each forward arc ending at it.
    fn net_outflow(&self, u: u32, x: u32, y: u32) -> i64 {
        let (width, height) = (self.layout.width() as i64, self.layout.height() as i64);
        let k = T::K;
        let mut out = 0i64;
        for (d, dir) in Direction::ALL[..k].iter().enumerate() {
            let (dx, dy) = dir.offset();
            let (nx, ny) = (x as i64 + dx as i64, y as i64 + dy as i64);
            if nx < 0 || ny < 0 || nx >= width || ny >= height {
                continue;
            }
            if d % 2 == 0 {
                let r = (y as i64 * width + x as i64) as usize;
                out += self.kept_fwd[self.kept_index(d, r)] as i64
                    - self.rc[u as usize * k + d] as i64;
            } else {
                let rq = (ny * width + nx) as usize;
                let v = self.layout.neighbour(u, d);
                let f = self.kept_fwd[self.kept_index(d ^ 1, rq)] as i64
                    - self.rc[v as usize * k + (d ^ 1)] as i64;
                out -= f;
            }
        }
        out
    }

    /// Applies new neighbour capacities pair by pair; flow above a new capacity is
    /// sent back through the terminals of the pair's ends. Stretches of a row that
    /// `kept` shows unchanged are passed over; elsewhere all of a pixel's pairs are
    /// applied together, so each node's residuals are read once (a pass per
    /// direction read them K/2 times).
    fn arc_changes(&mut self, problem: &GridProblem) -> u64 {
        let (width, height) = (self.layout.width(), self.layout.height());
        let all: [Pairs; 4] = std::array::from_fn(|i| Pairs::of(2 * i, width, height));
        let mut changed = 0;
        for y in 0..height {
            for s in 0..spans(width) {
                changed += self.stretch_changes(problem, &all[..T::K / 2], y, s);
            }
        }
        changed
    }

    /// Applies the pairs of row `y` starting at columns `xs` whose bit is set in
    /// `moved`; returns how many arcs changed.
    fn apply_span(
        &mut self,
        problem: &GridProblem,
        pairs: &Pairs,
        y: u32,
        xs: &Range<u32>,
        mut moved: u64,
    ) -> u64 {
        let dir = Direction::ALL[pairs.fwd];
        let (caps_pq, caps_qp) = (problem.edges(dir), problem.edges(dir.reverse()));
        let rs = pixels(problem.width(), y, xs);
        let mut changed = 0;
        while moved != 0 {
            let i = moved.trailing_zeros();
            moved &= moved - 1;
            let (x, r) = (xs.start + i, rs.start + i as usize);
            let new = (caps_pq[r] as u32, caps_qp[r + pairs.offset] as u32);
            let u = self.layout.index(x, y);
            changed += self.set_pair(u, pairs.fwd, self.kept_index(pairs.fwd, r), new);
        }
        changed
    }

    /// Gives the pair (u → v, v → u), v = u's neighbour in direction `d`, the
    /// capacities `new`; `kept` indexes the remembered capacity of u → v. Returns how
    /// many of the two arcs changed.
    fn set_pair(&mut self, u: u32, d: usize, kept: usize, new: (u32, u32)) -> u64 {
        let k = T::K;
        let v = self.layout.neighbour(u, d);
        let (iu, iv) = (u as usize * k + d, v as usize * k + (d ^ 1));
        let (r_uv, r_vu) = (self.rc[iu] as i64, self.rc[iv] as i64);
        let old_uv = self.kept_fwd[kept] as i64;
        let old_vu = r_uv + r_vu - old_uv;
        let (c_uv, c_vu) = (new.0 as i64, new.1 as i64);
        if c_uv == old_uv && c_vu == old_vu {
            return 0;
        }
        self.kept_fwd[kept] = new.0 as i32;
        // Net flow u → v, clamped into the new capacities.
        let mut f = old_uv - r_uv;
        if f > c_uv {
            let excess = f - c_uv;
            self.flow += excess;
            self.add_terminal(u, 0, -excess);
            self.add_terminal(v, -excess, 0);
            f = c_uv;
        } else if f < -c_vu {
            let excess = -c_vu - f;
            self.flow += excess;
            self.add_terminal(v, 0, -excess);
            self.add_terminal(u, -excess, 0);
            f = -c_vu;
        }
        let (was_uv, was_vu) = (r_uv > 0, r_vu > 0);
        let (r_uv, r_vu) = ((c_uv - f) as u32, (c_vu + f) as u32);
        self.rc[iu] = r_uv;
        self.rc[iv] = r_vu;
        let changed = (c_uv != old_uv) as u64 + (c_vu != old_vu) as u64;
        if (r_uv > 0, r_vu > 0) == (was_uv, was_vu) {
            // the same arcs are residual: the trees and the cut stand as they are
            return changed;
        }
        let (ou, iu_bit) = (out_bit::<T>(d), in_bit::<T>(d));
        let (ov, iv_bit) = (out_bit::<T>(d ^ 1), in_bit::<T>(d ^ 1));
        let mut wu = self.w(u) & !(ou | iu_bit);
        let mut wv = self.w(v) & !(ov | iv_bit);
        if r_uv > 0 {
            wu |= ou;
            wv |= iv_bit;
        }
        if r_vu > 0 {
            wv |= ov;
            wu |= iu_bit;
        }
        self.set(u, wu);
        self.set(v, wv);
        self.mark_changed(u);
        self.mark_changed(v);
        changed
    }

    /// Adds `ds` to u's residual s → u and `dt` to u → t (either may be negative),
    /// then folds the pair again; the flow changes so that every cut keeps
    /// residual capacity + flow = capacity. The node is marked for the tree repair
    /// only where its folded residual changed sign: the search trees depend on which
    /// arcs are residual, not on how much.
    fn add_terminal(&mut self, u: u32, ds: i64, dt: i64) {
        let t = self.tr[u as usize];
        self.flow += (t.max(0) + ds).min((-t).max(0) + dt);
        let new = t + ds - dt;
        self.tr[u as usize] = new;
        if new.signum() != t.signum() {
            self.mark_changed(u);
        }
    }

    /// Remembers `u` for the tree repair (once).
    fn mark_changed(&mut self, u: u32) {
        let w = self.w(u);
        if w & MARK == 0 {
            self.set(u, w | MARK);
            self.marked.push(u);
        }
    }

    /// Repairs the search trees after `apply_changes`: every changed node becomes
    /// active and a root of the tree its terminal residual says (or an orphan when it
    /// has none), its children in a tree it left become orphans, and all orphans are
    /// adopted. BK then resumes with a sweep over the active nodes.
    pub(super) fn reuse_trees(&mut self) {
        let pixels = self.layout.width() as u64 * self.layout.height() as u64;
        if self.marked.len() as u64 * RESTART_FRACTION > pixels {
            self.restart_trees();
            return;
        }
        // Timestamps of the previous call must not count as verified in this phase.
        self.tick();
        // the changed nodes are few: BK takes them from its queue instead of sweeping
        // over every node for their flags, unless a search stopped at its budget left
        // nodes flagged to grow
        self.sweep = if self.stopped { 0 } else { self.st.len() };
        for idx in 0..self.marked.len() {
            let i = self.marked[idx];
            self.set(i, self.w(i) & !MARK);
            self.set_active(i);
            let w = self.w(i);
            let t = self.tr[i as usize];
            if t == 0 {
                if w & TREE != FREE && w & PARENT != ORPHAN {
                    self.orphan_rear(i);
                }
                continue;
            }
            let (tree, other) = if t > 0 {
                (SOURCE, SINK)
            } else {
                (SINK, SOURCE)
            };
            if w & TREE != tree {
                self.leave_tree(i, w, other);
            }
            self.make_root(i, tree);
        }
        self.marked.clear();
        self.adopt();
    }

    /// Grows the search trees anew on the kept residual graph, as a fresh solve would
    /// after loading: when most nodes changed (a new video frame), repairing the old
    /// trees orphans nearly everything and costs more than growing new ones, while the
    /// flow already pushed is kept either way.
    fn restart_trees(&mut self) {
        self.roots_by_terminal();
        self.clear_search();
    }

    /// Node `i` (state `w`) moves into the tree opposite to `other`: unchanged
    /// children it had become orphans, and neighbours in `other` that now have a
    /// residual arc towards (source tree: from) it become active.
    fn leave_tree(&mut self, i: u32, w: u32, other: u32) {
        let old = w & TREE;
        let mut bits = in_mask::<T>(w) | out_mask::<T>(w);
        // Arcs along which `other` could reach i: i → j for the sink tree, j → i for
        // the source tree.
        let reach = growth_mask::<T>(w, other == SINK);
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let j = self.layout.neighbour(i, d);
            let wj = self.w(j);
            if wj & MARK != 0 || wj & TREE == FREE {
                continue;
            }
            if old != FREE && wj & TREE == old && (wj & PARENT) as usize == d ^ 1 {
                self.orphan_rear(j);
            }
            // A passive node of `other` must not keep a residual arc into (out of)
            // a node of the opposite tree: it grows again.
            if wj & TREE == other && reach & (1 << d) != 0 {
                self.set_active(j);
            }
        }
    }
}

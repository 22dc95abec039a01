//! Dynamic updates (Kohli & Torr, "Dynamic graph cuts"): new capacities are written
//! into the kept residual graph, arcs whose new capacity is below the flow they carry
//! are reparameterised through the terminals, and the search trees are repaired
//! around the changed nodes (Kolmogorov's tree reuse) before BK resumes.

use super::band::Band;
use super::kept::{Pairs, SPAN, pixels, spans};
use super::layout::BLOCK;
use super::solver::Solver;
use super::state::{
    FREE, MARK, ORPHAN, PARENT, SINK, SOURCE, TREE, Topology, growth_mask, in_bit, in_mask,
    out_bit, out_mask,
};
use crate::bands;
use crate::grid::{ChangedArcs, Direction, GridProblem, PixelRect};
use std::ops::Range;
use std::sync::Mutex;

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

/// Where an update finds a frame's changes.
pub(super) enum Changed<'a> {
    /// Anywhere in these rectangles: compared there with the kept capacities.
    Rects(Rects),
    /// Exactly the arcs whose bits are set (the energy compared what it wrote).
    Arcs(&'a ChangedArcs),
}

/// What a band's share of an update did: the arcs it changed, the flow and the
/// folded offset it moved, and the nodes it marked for the tree repair, in order.
#[derive(Default)]
struct Applied {
    changed: u64,
    flow: i64,
    offset: i64,
    marked: Vec<u32>,
}

/// The pairs of a grid's forward directions: all of them, those within a row, those
/// leading down a row; made once per update for every band.
struct PairSets {
    all: Vec<Pairs>,
    level: Vec<Pairs>,
    down: Vec<Pairs>,
}

impl PairSets {
    fn of<T: Topology>(width: u32, height: u32) -> Self {
        let all: Vec<Pairs> = (0..T::K / 2)
            .map(|i| Pairs::of(2 * i, width, height))
            .collect();
        let dy = |p: &&Pairs| Direction::ALL[p.fwd].offset().1;
        let level = all.iter().filter(|p| dy(p) == 0).cloned().collect();
        let down = all.iter().filter(|p| dy(p) > 0).cloned().collect();
        Self { all, level, down }
    }

    /// The pairs of row `y` whose ends are both in a band ending with row `last`: on
    /// that row only those within the row.
    fn within(&self, y: u32, last: u32) -> &[Pairs] {
        if y == last { &self.level } else { &self.all }
    }
}

/// The last rows of the bands of `rows` rows up to `end`: where pairs lead from one
/// band into the next.
fn borders(rows: u32, end: u32) -> impl Iterator<Item = u32> {
    (rows - 1..end).step_by(rows as usize)
}

/// A band of the residual graph taking a frame's new capacities: the pairs and
/// terminals of its rows, each pair whose ends are both its own.
struct Update<'a, T: Topology> {
    band: Band<'a, T>,
    applied: Applied,
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
        if self.kept_td.len() != problem.pixels() {
            self.recover_terminals(problem);
        }
        let whole = PixelRect {
            xs: 0..problem.width(),
            ys: 0..problem.height(),
        };
        let rects = Rects {
            terminals: vec![whole.clone()],
            edges: vec![whole],
        };
        self.apply_changes_in(problem, &Changed::Rects(rects))
    }

    /// Before the first update after a fresh solve, which kept no terminals: each
    /// pixel's s − t as loaded, from its terminal residual plus the net flow it sends
    /// to its neighbours, and `problem`'s min(s, t) with the offset they make.
    fn recover_terminals(&mut self, problem: &GridProblem) {
        let width = self.layout.width() as usize;
        let loaded = (0..problem.pixels()).map(|r| {
            let (x, y) = ((r % width) as u32, (r / width) as u32);
            let u = self.layout.index(x, y);
            (self.tr[u as usize] + self.net_outflow(u, x, y)) as i32
        });
        self.kept_td = loaded.collect();
        let (source, sink) = (problem.source(), problem.sink());
        self.kept_min.clear();
        self.kept_min
            .extend(source.iter().zip(sink).map(|(&s, &t)| s.min(t)));
        self.offset = self.kept_min.iter().map(|&m| m as u64).sum();
    }

    /// [`Self::apply_changes`] where only what `changed` says can differ from the kept
    /// problem: the terminals and pairs of its rectangles (the changed tiles grown by
    /// a pixel, [`crate::grid::ChangedTiles::rects`]) or its marked arcs; nothing else
    /// is read. The first update after a fresh solve, which has no kept terminals
    /// yet, looks at every pixel. The bands of block rows take their rows on every
    /// core; the pairs between one band's last row and the next band's first follow
    /// on this thread.
    pub(super) fn apply_changes_in(&mut self, problem: &GridProblem, changed: &Changed) -> u64 {
        if self.kept_td.len() != problem.pixels() {
            return self.apply_changes(problem);
        }
        self.queue.clear();
        self.orphans.clear();
        self.marked.clear();
        self.activity.fill(0);
        self.iterations = 0;
        let rows = bands::aligned_band_rows(problem.height() as usize, BLOCK as usize);
        let sets = PairSets::of::<T>(problem.width(), problem.height());
        let done = Mutex::new(Vec::new());
        let parts: Vec<_> = self.bands(rows).into_iter().enumerate().collect();
        bands::for_each_part(parts, |(i, band)| {
            let mut update = Update::new(band);
            match changed {
                Changed::Rects(rects) => {
                    for rect in &rects.terminals {
                        update.terminal_changes_in(problem, rect);
                    }
                    for rect in &rects.edges {
                        update.arc_changes_in(problem, &sets, rect);
                    }
                }
                Changed::Arcs(arcs) => {
                    update.marked_terminals(problem, arcs);
                    update.marked_pairs(problem, &sets, arcs);
                }
            }
            done.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((i, update.applied));
        });
        let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
        done.sort_unstable_by_key(|&(i, _)| i);
        let mut arcs = done.into_iter().map(|(_, a)| self.absorb(a)).sum::<u64>();
        let mut update = Update::new(self.whole());
        match changed {
            Changed::Rects(rects) => {
                for rect in &rects.edges {
                    update.arc_changes_across(problem, &sets, rect, rows as u32);
                }
            }
            Changed::Arcs(arcs) => update.marked_pairs_across(problem, &sets, arcs, rows as u32),
        }
        let across = update.applied;
        arcs += self.absorb(across);
        arcs
    }

    /// Takes a band's share of an update into the solver; returns its changed arcs.
    fn absorb(&mut self, applied: Applied) -> u64 {
        self.flow += applied.flow;
        self.offset = (self.offset as i64 + applied.offset) as u64;
        self.marked.extend(applied.marked);
        applied.changed
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

impl<'a, T: Topology> Update<'a, T> {
    fn new(band: Band<'a, T>) -> Self {
        Self {
            band,
            applied: Applied::default(),
        }
    }

    /// The terminal changes of the band's pixels in `rect`, with the offset corrected
    /// by their change of min(s, t): a row's minima and changes are found in passes
    /// that vectorise, and only the pixels that changed are looked at one by one.
    fn terminal_changes_in(&mut self, problem: &GridProblem, rect: &PixelRect) {
        let width = problem.width() as usize;
        let (source, sink) = (problem.source(), problem.sink());
        for y in bands::rows_within(&rect.ys, &self.band.rows) {
            let row = y as usize * width;
            let span = row + rect.xs.start as usize..row + rect.xs.end as usize;
            let kept = self.band.pixel(span.start)..self.band.pixel(span.end);
            let (s, t) = (&source[span.clone()], &sink[span.clone()]);
            let mut delta = 0i64;
            for (m, (&a, &b)) in self.band.kept_min[kept.clone()]
                .iter_mut()
                .zip(s.iter().zip(t))
            {
                let min = a.min(b);
                delta += i64::from(min) - i64::from(*m);
                *m = min;
            }
            self.applied.offset += delta;
            for start in (span.start..span.end).step_by(TERMINAL_RUN) {
                let end = (start + TERMINAL_RUN).min(span.end);
                let at = self.band.pixel(start);
                let same = source[start..end]
                    .iter()
                    .zip(&sink[start..end])
                    .zip(&self.band.kept_td[at..at + (end - start)])
                    .fold(true, |all, ((&a, &b), &k)| all & (a.wrapping_sub(b) == k));
                if same {
                    continue;
                }
                for r in start..end {
                    let x = (r - row) as u32;
                    self.terminal_change(r, x, y, source[r] - sink[r]);
                }
            }
        }
    }

    /// The terminal changes of the band's pixels whose bits `arcs` sets, with the
    /// offset corrected by their change of min(s, t).
    fn marked_terminals(&mut self, problem: &GridProblem, arcs: &ChangedArcs) {
        let width = problem.width() as usize;
        let (source, sink) = (problem.source(), problem.sink());
        for y in self.band.rows.clone().filter(|&y| arcs.is_live(y)) {
            for (w, &word) in arcs.terminal_row(y).iter().enumerate() {
                let mut bits = word;
                while bits != 0 {
                    let x = w * SPAN as usize + bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    if x >= width {
                        break;
                    }
                    let r = y as usize * width + x;
                    let at = self.band.pixel(r);
                    let min = source[r].min(sink[r]);
                    let was = std::mem::replace(&mut self.band.kept_min[at], min);
                    self.applied.offset += i64::from(min) - i64::from(was);
                    self.terminal_change(r, x as u32, y, source[r] - sink[r]);
                }
            }
        }
    }

    /// The pairs that `arcs` marks among those whose ends are both the band's: on its
    /// last row only the pairs within the row.
    fn marked_pairs(&mut self, problem: &GridProblem, sets: &PairSets, arcs: &ChangedArcs) {
        let last = self.band.rows.end - 1;
        for y in self.band.rows.clone().filter(|&y| arcs.is_live(y)) {
            self.marked_row(problem, sets.within(y, last), arcs, y);
        }
    }

    /// The pairs that `arcs` marks leading from the last row of one band of `rows`
    /// rows into the next (this band holding both).
    fn marked_pairs_across(
        &mut self,
        problem: &GridProblem,
        sets: &PairSets,
        arcs: &ChangedArcs,
        rows: u32,
    ) {
        for y in borders(rows, self.band.rows.end).filter(|&y| arcs.is_live(y)) {
            self.marked_row(problem, &sets.down, arcs, y);
        }
    }

    /// The pairs of `all` starting in row `y` that `arcs` marks.
    fn marked_row(&mut self, problem: &GridProblem, all: &[Pairs], arcs: &ChangedArcs, y: u32) {
        for pairs in all.iter().filter(|p| y < p.rows) {
            for (s, &word) in arcs.pair_row(pairs.fwd, y).iter().enumerate() {
                if word != 0 {
                    self.marked_stretch(problem, pairs, y, s as u32, word);
                }
            }
        }
    }

    /// Applies the pairs of stretch `s` of row `y` whose bits `word` sets; the
    /// stretch stays known as symmetric only if they are.
    fn marked_stretch(&mut self, problem: &GridProblem, pairs: &Pairs, y: u32, s: u32, word: u64) {
        let xs = pairs.span(s);
        if xs.is_empty() {
            return;
        }
        let moved = word >> (xs.start - s * SPAN) & u64::MAX >> (SPAN - xs.len() as u32);
        if moved == 0 {
            return;
        }
        let symmetric = self.apply_span(problem, pairs, y, &xs, moved);
        let i = (y - self.band.rows.start) as usize * spans(problem.width()) as usize + s as usize;
        self.band.kept_sym[pairs.fwd / 2][i] &= symmetric;
    }

    /// Applies pixel r's (at x, y) new folded terminal capacity `new` where it
    /// changed.
    #[inline]
    fn terminal_change(&mut self, r: usize, x: u32, y: u32, new: i32) {
        let at = self.band.pixel(r);
        let old = std::mem::replace(&mut self.band.kept_td[at], new) as i64;
        let new = new as i64;
        if old == new {
            return;
        }
        let ds = new.max(0) - old.max(0);
        let dt = (-new).max(0) - (-old).max(0);
        self.add_terminal(self.band.layout.index(x, y), ds, dt);
        self.applied.changed += 1;
    }

    /// The neighbour changes of the pairs that start in `rect` (whole stretches of
    /// the rows it covers) on the band's rows, those whose ends are both the band's:
    /// on its last row only the pairs within the row.
    fn arc_changes_in(&mut self, problem: &GridProblem, sets: &PairSets, rect: &PixelRect) {
        let last = self.band.rows.end - 1;
        for y in bands::rows_within(&rect.ys, &self.band.rows) {
            self.row_changes(problem, sets.within(y, last), rect, y);
        }
    }

    /// The neighbour changes of the pairs that start in `rect` and lead from the last
    /// row of one band of `rows` rows into the next (this band holding both).
    fn arc_changes_across(
        &mut self,
        problem: &GridProblem,
        sets: &PairSets,
        rect: &PixelRect,
        rows: u32,
    ) {
        for y in borders(rows, self.band.rows.end).filter(|y| rect.ys.contains(y)) {
            self.row_changes(problem, &sets.down, rect, y);
        }
    }

    /// The changes of `pairs` starting in row `y` of `rect` (whole stretches).
    fn row_changes(&mut self, problem: &GridProblem, pairs: &[Pairs], rect: &PixelRect, y: u32) {
        if rect.xs.is_empty() {
            return;
        }
        for s in rect.xs.start / SPAN..(rect.xs.end - 1) / SPAN + 1 {
            self.stretch_changes(problem, pairs, y, s);
        }
    }

    /// Applies the changed pairs of stretch `s` of row `y` in the directions of `all`.
    fn stretch_changes(&mut self, problem: &GridProblem, all: &[Pairs], y: u32, s: u32) {
        let spans = spans(problem.width()) as usize;
        for pairs in all {
            let xs = pairs.span(s);
            if y >= pairs.rows || xs.is_empty() {
                continue;
            }
            let i = (y - self.band.rows.start) as usize * spans + s as usize;
            let was_symmetric = self.band.kept_sym[pairs.fwd / 2][i];
            let (moved, symmetric) = self.moved_pairs(problem, pairs, y, &xs, was_symmetric);
            if moved != 0 {
                self.apply_span(problem, pairs, y, &xs, moved);
            }
            self.band.kept_sym[pairs.fwd / 2][i] = symmetric;
        }
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
        let at = self.band.pixel(rs.start);
        let kept = &self.band.kept_fwd[pairs.fwd / 2][at..at + rs.len()];
        // one byte per pair, then packed: a bit shifted by its lane does not vectorise
        let mut flags = [0u8; SPAN as usize];
        let mut symmetric = true;
        for (f, ((&a, &b), &k)) in flags.iter_mut().zip(pq.iter().zip(qp).zip(kept)) {
            *f = u8::from(!(was_symmetric && a == k && b == k));
            symmetric &= a == b;
        }
        (crate::bits::pack_flags(&flags), symmetric)
    }

    /// Applies the pairs of row `y` starting at columns `xs` whose bit is set in
    /// `moved`; returns whether their new capacities are equal both ways.
    fn apply_span(
        &mut self,
        problem: &GridProblem,
        pairs: &Pairs,
        y: u32,
        xs: &Range<u32>,
        mut moved: u64,
    ) -> bool {
        let dir = Direction::ALL[pairs.fwd];
        let (caps_pq, caps_qp) = (problem.edges(dir), problem.edges(dir.reverse()));
        let rs = pixels(problem.width(), y, xs);
        self.prefetch_pairs(pairs.fwd, xs.start, y, moved);
        let mut symmetric = true;
        while moved != 0 {
            let i = moved.trailing_zeros();
            moved &= moved - 1;
            let (x, r) = (xs.start + i, rs.start + i as usize);
            let new = (caps_pq[r] as u32, caps_qp[r + pairs.offset] as u32);
            symmetric &= new.0 == new.1;
            let u = self.band.layout.index(x, y);
            self.set_pair(u, pairs.fwd, r, new);
        }
        symmetric
    }

    /// Asks for the residuals of both ends of the pairs in `moved` (direction `d`,
    /// row `y`, from column `x0`) before any is applied: applying a pair waits on
    /// their loads, and the pairs' loads do not depend on each other.
    fn prefetch_pairs(&self, d: usize, x0: u32, y: u32, mut moved: u64) {
        while moved != 0 {
            let i = moved.trailing_zeros();
            moved &= moved - 1;
            let u = self.band.layout.index(x0 + i, y);
            let v = self.band.layout.neighbour(u, d);
            prefetch(self.band.rc, self.band.node(u) * T::K + d);
            prefetch(self.band.rc, self.band.node(v) * T::K + (d ^ 1));
        }
    }

    /// Gives the pair (u → v, v → u), v = u's neighbour in direction `d`, starting at
    /// pixel `r`, the capacities `new`.
    fn set_pair(&mut self, u: u32, d: usize, r: usize, new: (u32, u32)) {
        let k = T::K;
        let v = self.band.layout.neighbour(u, d);
        let (iu, iv) = (self.band.node(u) * k + d, self.band.node(v) * k + (d ^ 1));
        let kept = (d / 2, self.band.pixel(r));
        let (r_uv, r_vu) = (self.band.rc[iu] as i64, self.band.rc[iv] as i64);
        let old_uv = self.band.kept_fwd[kept.0][kept.1] as i64;
        let old_vu = r_uv + r_vu - old_uv;
        let (c_uv, c_vu) = (new.0 as i64, new.1 as i64);
        if c_uv == old_uv && c_vu == old_vu {
            return;
        }
        self.band.kept_fwd[kept.0][kept.1] = new.0 as i32;
        // Net flow u → v, clamped into the new capacities.
        let mut f = old_uv - r_uv;
        if f > c_uv {
            let excess = f - c_uv;
            self.applied.flow += excess;
            self.add_terminal(u, 0, -excess);
            self.add_terminal(v, -excess, 0);
            f = c_uv;
        } else if f < -c_vu {
            let excess = -c_vu - f;
            self.applied.flow += excess;
            self.add_terminal(v, 0, -excess);
            self.add_terminal(u, -excess, 0);
            f = -c_vu;
        }
        let (was_uv, was_vu) = (r_uv > 0, r_vu > 0);
        let (r_uv, r_vu) = ((c_uv - f) as u32, (c_vu + f) as u32);
        self.band.rc[iu] = r_uv;
        self.band.rc[iv] = r_vu;
        self.applied.changed += (c_uv != old_uv) as u64 + (c_vu != old_vu) as u64;
        if (r_uv > 0, r_vu > 0) == (was_uv, was_vu) {
            // the same arcs are residual: the trees and the cut stand as they are
            return;
        }
        let (ou, iu_bit) = (out_bit::<T>(d), in_bit::<T>(d));
        let (ov, iv_bit) = (out_bit::<T>(d ^ 1), in_bit::<T>(d ^ 1));
        let mut wu = self.band.w(u) & !(ou | iu_bit);
        let mut wv = self.band.w(v) & !(ov | iv_bit);
        if r_uv > 0 {
            wu |= ou;
            wv |= iv_bit;
        }
        if r_vu > 0 {
            wv |= ov;
            wu |= iu_bit;
        }
        self.band.set(u, wu);
        self.band.set(v, wv);
        self.mark_changed(u);
        self.mark_changed(v);
    }

    /// Adds `ds` to u's residual s → u and `dt` to u → t (either may be negative),
    /// then folds the pair again; the flow changes so that every cut keeps
    /// residual capacity + flow = capacity. The node is marked for the tree repair
    /// only where its folded residual changed sign: the search trees depend on which
    /// arcs are residual, not on how much.
    fn add_terminal(&mut self, u: u32, ds: i64, dt: i64) {
        let i = self.band.node(u);
        let t = self.band.tr[i];
        self.applied.flow += (t.max(0) + ds).min((-t).max(0) + dt);
        let new = t + ds - dt;
        self.band.tr[i] = new;
        if new.signum() != t.signum() {
            self.mark_changed(u);
        }
    }

    /// Remembers `u` for the tree repair (once).
    fn mark_changed(&mut self, u: u32) {
        let w = self.band.w(u);
        if w & MARK == 0 {
            self.band.set(u, w | MARK);
            self.applied.marked.push(u);
        }
    }
}

/// Asks the cache for `v[i]` (nothing where `i` is out of bounds).
#[inline(always)]
fn prefetch<V>(v: &[V], i: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = v.get(i) {
        // SAFETY: a prefetch reads nothing the program sees; `x` is a valid reference.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (x as *const V).cast::<i8>(),
            )
        };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (v, i);
}

#[cfg(test)]
mod tests {
    use super::Changed;
    use crate::bands::with_threads;
    use crate::grid::{ChangedArcs, Direction, GridProblem};
    use crate::maxflow::cpu::fixtures::{
        bits_follow_residuals, on_any_thread_count, random_grid, words_and_kept,
    };
    use crate::maxflow::cpu::layout::Layout;
    use crate::maxflow::cpu::solver::Solver;
    use crate::maxflow::cpu::state::{Eight, Four, MARK, Topology};

    /// A solver that solved one random `w`×`h` grid and then took another's
    /// capacities on `threads` threads (`first` true: the first update, which
    /// recovers the loaded terminals from the residuals), before any search.
    fn updated<T: Topology>(threads: usize, w: u32, h: u32, first: bool) -> Solver<T> {
        let p = random_grid(u64::from(w + 7 * h), w, h, T::connectivity());
        let next = next_grid::<T>(w, h);
        let mut s = Solver::<T>::new(Layout::new(w, h).unwrap());
        s.load(&p).unwrap();
        s.run();
        if !first {
            s.apply_changes(&p);
            s.reuse_trees();
            s.run();
        }
        with_threads(threads, || s.apply_changes(&next));
        s
    }

    /// The grid an update takes in [`updated`].
    fn next_grid<T: Topology>(w: u32, h: u32) -> GridProblem {
        random_grid(u64::from(w * h), w, h, T::connectivity())
    }

    /// The residual graph and what the update kept and marked (as a set).
    fn state<T: Topology>(s: &Solver<T>) -> impl PartialEq + std::fmt::Debug + use<T> {
        let mut marked = s.marked.clone();
        marked.sort_unstable();
        let flow = (s.flow, s.offset);
        (words_and_kept(s), s.rc.clone(), s.tr.clone(), flow, marked)
    }

    /// Every pair's residuals add up to its new capacities, which are kept, and every
    /// pixel's new s − t is kept.
    fn capacities_taken<T: Topology>(s: &Solver<T>, next: &GridProblem) {
        let (w, h) = (next.width(), next.height());
        for (y, x) in (0..h).flat_map(|y| (0..w).map(move |x| (y, x))) {
            let (u, r) = (s.layout.index(x, y), (y * w + x) as usize);
            for d in (0..T::K).step_by(2) {
                let dir = Direction::ALL[d];
                let Some(rv) = next.neighbour(x, y, dir) else {
                    continue;
                };
                let v = s.layout.neighbour(u, d);
                let residuals = s.rc[u as usize * T::K + d] + s.rc[v as usize * T::K + (d ^ 1)];
                let caps = next.edges(dir)[r] + next.edges(dir.reverse())[rv];
                assert_eq!(residuals, caps as u32, "pair ({x}, {y}) {d}");
                assert_eq!(s.kept_fwd[s.kept_index(d, r)], next.edges(dir)[r]);
            }
            assert_eq!(s.kept_td[r], next.source()[r] - next.sink()[r]);
        }
    }

    fn bands_agree<T: Topology>() {
        let shapes = [
            (37, 45, true),
            (37, 45, false),
            (23, 300, false),
            (5, 3, true),
        ];
        for (w, h, first) in shapes {
            let update = |threads| updated::<T>(threads, w, h, first);
            let alone = on_any_thread_count(update, state::<T>, &format!("{w}×{h}"));
            bits_follow_residuals(&alone);
            capacities_taken(&alone, &next_grid::<T>(w, h));
            let marked = |&u: &u32| T::get(alone.st[u as usize]) & MARK != 0;
            assert!(alone.marked.iter().all(marked));
        }
    }

    #[test]
    fn an_update_in_bands_is_the_update_on_one_thread() {
        bands_agree::<Four>();
        bands_agree::<Eight>();
    }

    /// `p` with about one pixel in `every` given new terminals and one pair in `every`
    /// new capacities (one way only for a third of those), from `seed`.
    fn perturbed(p: &GridProblem, seed: u64, every: u64) -> GridProblem {
        let other = random_grid(seed, p.width(), p.height(), p.connectivity());
        let (mut source, mut sink, mut edges) = p.clone().into_arrays();
        let mut pick = crate::test_bits::lcg(seed);
        for i in 0..source.len() {
            if (pick() >> 33).is_multiple_of(every) {
                (source[i], sink[i]) = (other.source()[i], other.sink()[i]);
            }
        }
        let (w, h) = (p.width(), p.height());
        for (y, x) in (0..h).flat_map(|y| (0..w).map(move |x| (y, x))) {
            for &dir in p.connectivity().directions().iter().step_by(2) {
                let (Some(q), true) =
                    (p.neighbour(x, y, dir), (pick() >> 33).is_multiple_of(every))
                else {
                    continue;
                };
                let r = (y * w + x) as usize;
                edges[dir.index()][r] = other.edges(dir)[r];
                if !(pick() >> 33).is_multiple_of(3) {
                    edges[dir.reverse().index()][q] = other.edges(dir)[r];
                }
            }
        }
        let c = p.connectivity();
        GridProblem::from_arrays(w, h, c, source, sink, edges).unwrap()
    }

    /// Updates told exactly which arcs changed leave the graph as updates that compare
    /// every capacity, on any number of threads; a stretch they call symmetric is.
    fn marked_arcs_agree<T: Topology>() {
        for (w, h) in [(37, 45), (70, 23), (5, 3)] {
            let p = random_grid(u64::from(3 * w + h), w, h, T::connectivity());
            let next = perturbed(&p, u64::from(w * h), 7);
            let arcs = ChangedArcs::between(&p, &next);
            let solver = |threads: usize, marked: bool| {
                let mut s = Solver::<T>::new(Layout::new(w, h).unwrap());
                s.load(&p).unwrap();
                s.run();
                s.apply_changes(&p);
                s.reuse_trees();
                s.run();
                with_threads(threads, || match marked {
                    true => s.apply_changes_in(&next, &Changed::Arcs(&arcs)),
                    false => s.apply_changes(&next),
                });
                s
            };
            let view = |s: &Solver<T>| {
                let mut marked = s.marked.clone();
                marked.sort_unstable();
                let words: Vec<u32> = s.st.iter().map(|&w| T::get(w)).collect();
                let kept = (&s.kept_fwd, &s.kept_td, &s.kept_min);
                let flow = (s.flow, s.offset);
                format!(
                    "{words:?} {kept:?} {:?} {:?} {flow:?} {marked:?}",
                    s.rc, s.tr
                )
            };
            let compared = solver(1, false);
            for threads in [1, 2, 3] {
                let mut told = solver(threads, true);
                assert_eq!(view(&told), view(&compared), "{w}×{h} on {threads} threads");
                let sym = told.kept_sym.iter().zip(&compared.kept_sym);
                assert!(sym.clone().all(|(&t, &c)| !t || c), "{w}×{h}: symmetry");
                told.reuse_trees();
                told.run();
                let mut fresh = Solver::<T>::new(Layout::new(w, h).unwrap());
                fresh.load(&next).unwrap();
                fresh.run();
                assert_eq!(told.total_flow(), fresh.total_flow(), "{w}×{h}: flow");
                assert!(told.mask() == fresh.mask(), "{w}×{h}: mask");
            }
        }
    }

    #[test]
    fn an_update_told_the_changed_arcs_is_the_update_that_compares() {
        marked_arcs_agree::<Four>();
        marked_arcs_agree::<Eight>();
    }
}

//! Building the residual graph of a problem from scratch (the pass of `Solver::load`
//! over every pixel), in bands of whole block rows on every core. A band's nodes are
//! contiguous in the blocked layout and its rows of the kept capacities are contiguous
//! in theirs, so each band writes its own part of every array. A node's saturation
//! bits, those of its incoming arcs too, are read from the problem's row-major
//! capacities rather than set on the neighbours, so no band writes into another and
//! every array is written once, in order. The result does not depend on how many
//! threads ran the bands.

use super::kept::{keep_row, spans};
use super::layout::{BLOCK, Layout};
use super::solver::{PA_NONE, PA_TERMINAL, Solver, root_bits};
use super::state::{Topology, in_bit, out_bit};
use crate::bands;
use crate::grid::{Direction, GridProblem};
use std::ops::Range;
use std::sync::Mutex;

/// What the load of some rows counted: Σ min(s, t), the supply and deficit nodes, and
/// their amounts (`Solver::terminals`, `Solver::amounts`).
#[derive(Default)]
struct Counts {
    offset: u64,
    supplies: usize,
    deficits: usize,
    supply: u64,
    deficit: u64,
}

impl Counts {
    fn add(&mut self, other: &Counts) {
        self.offset += other.offset;
        self.supplies += other.supplies;
        self.deficits += other.deficits;
        self.supply += other.supply;
        self.deficit += other.deficit;
    }
}

/// One band's share of the solver's arrays: the nodes of whole block rows and the
/// kept capacities of their pixel rows.
struct Band<'a, T: Topology> {
    layout: &'a Layout,
    /// The band's pixel rows (the grid's, without padding).
    rows: Range<u32>,
    /// Index of the band's first node.
    first: u32,
    st: &'a mut [T::Word],
    rc: &'a mut [u32],
    pa: &'a mut [u32],
    tr: &'a mut [i64],
    /// Distances (and timestamps) of the band's nodes; empty where the topology keeps
    /// none.
    dist: &'a mut [u32],
    /// Per forward direction, the kept forward capacities of the band's rows.
    kept_fwd: Vec<&'a mut [i32]>,
    /// Per forward direction, the symmetry of the band's rows' stretches.
    kept_sym: Vec<&'a mut [bool]>,
    /// The band's rows of `kept_td` and `kept_min`; empty where they are not kept.
    kept_td: &'a mut [i32],
    kept_min: &'a mut [i32],
    /// The state words of the row being loaded, before the root state.
    words: Vec<u32>,
}

impl<T: Topology> Solver<T> {
    /// Writes every pixel's node: residuals, saturation bits, folded terminal
    /// residual and root state; keeps the forward capacities (and, where kept, the
    /// folded terminals) and counts the terminal nodes (`terminals`) and their
    /// amounts (`amounts`). Returns Σ min(s, t). `st` needs no clearing first; padding
    /// nodes are the caller's.
    pub(super) fn load_pixels(&mut self, problem: &GridProblem) -> u64 {
        let rows = bands::aligned_band_rows(problem.height() as usize, BLOCK as usize);
        let counts = Mutex::new(Counts::default());
        bands::for_each_part(self.bands(rows), |band| {
            let band_counts = band.load(problem);
            let mut counts = counts.lock().unwrap_or_else(|e| e.into_inner());
            counts.add(&band_counts);
        });
        let counts = counts.into_inner().unwrap_or_else(|e| e.into_inner());
        self.terminals = (counts.supplies, counts.deficits);
        self.amounts = (counts.supply, counts.deficit);
        counts.offset
    }

    /// The solver's arrays (already sized for the grid) split into bands of `rows`
    /// rows each (a multiple of the block's).
    fn bands(&mut self, rows: usize) -> Vec<Band<'_, T>> {
        let (width, height) = (self.layout.width() as usize, self.layout.height() as usize);
        let nodes = rows / BLOCK as usize * self.layout.blocks_x() as usize * BLOCK_NODES;
        let marks = self.dist.len() / self.layout.nodes().max(1);
        let spans = spans(width as u32) as usize;
        let mut st = self.st.chunks_mut(nodes);
        let mut rc = self.rc.chunks_mut(nodes * T::K);
        let mut pa = self.pa.chunks_mut(nodes);
        let mut tr = self.tr.chunks_mut(nodes);
        let mut dist = parts(&mut self.dist, nodes * marks);
        let mut fwd: Vec<_> = (self.kept_fwd.chunks_exact_mut(width * height))
            .map(|dir| dir.chunks_mut(rows * width))
            .collect();
        let mut sym: Vec<_> = (self.kept_sym.chunks_exact_mut(height * spans))
            .map(|dir| dir.chunks_mut(rows * spans))
            .collect();
        let mut td = parts(&mut self.kept_td, rows * width);
        let mut min = parts(&mut self.kept_min, rows * width);
        let layout = &self.layout;
        (0..height.div_ceil(rows))
            .map(|b| Band {
                layout,
                rows: (b * rows) as u32..((b + 1) * rows).min(height) as u32,
                first: (b * nodes) as u32,
                st: st.next().unwrap_or_default(),
                rc: rc.next().unwrap_or_default(),
                pa: pa.next().unwrap_or_default(),
                tr: tr.next().unwrap_or_default(),
                dist: dist.next().unwrap_or_default(),
                kept_fwd: fwd
                    .iter_mut()
                    .map(|d| d.next().unwrap_or_default())
                    .collect(),
                kept_sym: sym
                    .iter_mut()
                    .map(|d| d.next().unwrap_or_default())
                    .collect(),
                kept_td: td.next().unwrap_or_default(),
                kept_min: min.next().unwrap_or_default(),
                words: vec![0; width],
            })
            .collect()
    }
}

/// Nodes per block.
const BLOCK_NODES: usize = (BLOCK * BLOCK) as usize;

/// `v` in chunks of `len`, then empty slices for ever: the parts of an array that
/// may be empty (not kept), one per band.
fn parts<V>(v: &mut [V], len: usize) -> impl Iterator<Item = &mut [V]> {
    v.chunks_mut(len.max(1))
        .chain(std::iter::repeat_with(<&mut [V]>::default))
}

impl<T: Topology> Band<'_, T> {
    /// Loads the band's rows, row by row and within a row node by node.
    fn load(mut self, problem: &GridProblem) -> Counts {
        let width = problem.width() as usize;
        let (source, sink) = (problem.source(), problem.sink());
        let mut counts = Counts::default();
        for y in self.rows.clone() {
            let row = y as usize * width..(y as usize + 1) * width;
            self.saturation(problem, y);
            self.keep(problem, y, &row);
            let caps: [&[i32]; 8] = std::array::from_fn(|d| {
                let dir = Direction::ALL[d.min(T::K - 1)];
                &problem.edges(dir)[row.clone()]
            });
            for (x, (&s, &t)) in source[row.clone()].iter().zip(&sink[row]).enumerate() {
                counts.offset += s.min(t) as u64;
                counts.supplies += usize::from(s > t);
                counts.deficits += usize::from(s < t);
                let arcs = self.node(x, y, &caps, s - t);
                let td = u64::from((s - t).unsigned_abs());
                // nodes pulled harder than their arcs carry are left out (see `amounts`)
                let amount = if td <= arcs { td } else { 0 };
                counts.supply += amount * u64::from(s > t);
                counts.deficit += amount * u64::from(s < t);
            }
        }
        counts
    }

    /// Fills `words` with the saturation bits of row `y`'s nodes: an arc out has
    /// residual where its capacity is not zero, an arc in where its neighbour's arc
    /// back is not (none off the grid).
    fn saturation(&mut self, problem: &GridProblem, y: u32) {
        let (width, height) = (problem.width() as usize, problem.height() as i64);
        let words = &mut self.words[..width];
        words.fill(0);
        for d in 0..T::K {
            let there = Direction::ALL[d];
            let out = &problem.edges(there)[y as usize * width..][..width];
            let bit = out_bit::<T>(d);
            for (w, &c) in words.iter_mut().zip(out) {
                *w |= if c != 0 { bit } else { 0 };
            }
            let (dx, dy) = there.offset();
            let ny = i64::from(y) + i64::from(dy);
            if !(0..height).contains(&ny) {
                continue;
            }
            // columns x whose neighbour x + dx is in the grid
            let (from, to) = (usize::from(dx < 0), width - usize::from(dx > 0));
            if from >= to {
                continue;
            }
            let start = (ny as usize * width + from).wrapping_add_signed(dx as isize);
            let back = &problem.edges(there.reverse())[start..][..to - from];
            let bit = in_bit::<T>(d);
            for (w, &c) in words[from..to].iter_mut().zip(back) {
                *w |= if c != 0 { bit } else { 0 };
            }
        }
    }

    /// Keeps row `y`'s forward capacities and, where kept, its folded terminals.
    fn keep(&mut self, problem: &GridProblem, y: u32, row: &Range<usize>) {
        let local = (y - self.rows.start) as usize;
        let (width, spans) = (row.len(), spans(problem.width()) as usize);
        for (i, fwd) in (0..T::K).step_by(2).enumerate() {
            let caps = &mut self.kept_fwd[i][local * width..][..width];
            let sym = &mut self.kept_sym[i][local * spans..][..spans];
            keep_row(caps, sym, problem, fwd, y);
        }
        if !self.kept_td.is_empty() {
            let (source, sink) = (&problem.source()[row.clone()], &problem.sink()[row.clone()]);
            let td = &mut self.kept_td[local * width..][..width];
            let min = &mut self.kept_min[local * width..][..width];
            for (((td, min), &s), &t) in td.iter_mut().zip(min).zip(source).zip(sink) {
                (*td, *min) = (s - t, s.min(t));
            }
        }
    }

    /// Writes the node of pixel (`x`, `y`): its residuals from `caps` (the row's
    /// capacities per direction), its saturation bits (`saturation`'s) with the root
    /// state of its folded terminal capacity `td` — `root_by_terminal`'s, written in
    /// the same store (NOTES.md, saturation bits) — and its tree arc and distance.
    /// Returns the capacity of its outgoing arcs.
    #[inline(always)]
    fn node(&mut self, x: usize, y: u32, caps: &[&[i32]; 8], td: i32) -> u64 {
        let i = (self.layout.index(x as u32, y) - self.first) as usize;
        let mut arcs = 0u64;
        for (d, arc) in self.rc[i * T::K..][..T::K].iter_mut().enumerate() {
            *arc = caps[d][x] as u32;
            arcs += u64::from(*arc);
        }
        self.tr[i] = i64::from(td);
        let root = td != 0;
        let mut w = self.words[x];
        if root {
            w |= root_bits(i64::from(td));
        }
        self.pa[i] = if root { PA_TERMINAL } else { PA_NONE };
        if T::GROW_MARK {
            // distance and timestamp side by side (`Solver::dist`)
            self.dist[2 * i..2 * i + 2].copy_from_slice(&[u32::from(root), 0]);
        } else if T::MARKING {
            self.dist[i] = u32::from(root);
        }
        self.st[i] = T::put(w);
        arcs
    }
}
#[cfg(test)]
mod tests {
    use crate::bands::with_threads;
    use crate::grid::Direction;
    use crate::maxflow::cpu::fixtures::random_grid;
    use crate::maxflow::cpu::layout::Layout;
    use crate::maxflow::cpu::solver::Solver;
    use crate::maxflow::cpu::state::{Eight, Four, Topology, in_bit, out_bit};

    /// Every array a load writes, after loading a random `w`×`h` grid on `threads`
    /// threads (a solver that kept terminals for updates, so those are written too).
    fn loaded<T: Topology>(threads: usize, w: u32, h: u32) -> Solver<T> {
        let p = random_grid(u64::from(w * 31 + h), w, h, T::connectivity());
        let mut s = Solver::<T>::new(Layout::new(w, h).unwrap());
        s.load(&p).unwrap();
        s.kept_td = vec![0; p.pixels()];
        s.kept_min = vec![0; p.pixels()];
        with_threads(threads, || s.load(&p)).unwrap();
        s
    }

    /// The words, residuals, tree arcs, terminals, distances and kept capacities.
    fn arrays<T: Topology>(s: &Solver<T>) -> impl PartialEq + std::fmt::Debug {
        let st: Vec<u32> = s.st.iter().map(|&w| T::get(w)).collect();
        let kept = (
            s.kept_fwd.clone(),
            s.kept_sym.clone(),
            s.kept_td.clone(),
            s.kept_min.clone(),
        );
        (
            st,
            s.rc.clone(),
            s.pa.clone(),
            s.tr.clone(),
            s.dist.clone(),
            kept,
            s.offset,
            s.terminals,
            s.amounts,
        )
    }

    /// Every node's in and out bits say whether its arcs in and out have residual.
    fn bits_follow_residuals<T: Topology>(s: &Solver<T>) {
        let (w, h) = (s.layout.width() as i32, s.layout.height() as i32);
        for (y, x) in (0..h).flat_map(|y| (0..w).map(move |x| (y, x))) {
            let u = s.layout.index(x as u32, y as u32);
            for (d, dir) in Direction::ALL[..T::K].iter().enumerate() {
                let (nx, ny) = (x + dir.offset().0, y + dir.offset().1);
                let word = T::get(s.st[u as usize]);
                let out = s.rc[u as usize * T::K + d] > 0;
                assert_eq!(word & out_bit::<T>(d) != 0, out, "({x}, {y}) out {d}");
                if (0..w).contains(&nx) && (0..h).contains(&ny) {
                    let v = s.layout.neighbour(u, d);
                    let inn = s.rc[v as usize * T::K + (d ^ 1)] > 0;
                    assert_eq!(word & in_bit::<T>(d) != 0, inn, "({x}, {y}) in {d}");
                }
            }
        }
    }

    fn bands_agree<T: Topology>() {
        for (w, h) in [(37, 45), (8, 80), (64, 17), (5, 3)] {
            let alone = loaded::<T>(1, w, h);
            bits_follow_residuals(&alone);
            for threads in [2, 3, 8] {
                let shared = loaded::<T>(threads, w, h);
                bits_follow_residuals(&shared);
                assert_eq!(
                    arrays(&shared),
                    arrays(&alone),
                    "{w}×{h} on {threads} threads"
                );
            }
        }
    }

    #[test]
    fn a_load_in_bands_is_the_load_on_one_thread() {
        bands_agree::<Four>();
        bands_agree::<Eight>();
    }
}

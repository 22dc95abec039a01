//! Building the residual graph of a problem from scratch (the pass of `Solver::load`
//! over every pixel), in bands of whole block rows on every core. A band's nodes are
//! contiguous in the blocked layout and its rows of the kept capacities are contiguous
//! in theirs, so each band writes its own part of every array. A node's saturation
//! bits, those of its incoming arcs too, are read from the problem's row-major
//! capacities rather than set on the neighbours, so no band writes into another and
//! every array is written once, in order. The result does not depend on how many
//! threads ran the bands.

use super::band::Band;
use super::kept::{keep_row, spans};
use super::layout::BLOCK;
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
}

impl<T: Topology> Band<'_, T> {
    /// Loads the band's rows, row by row and within a row node by node.
    fn load(mut self, problem: &GridProblem) -> Counts {
        let width = problem.width() as usize;
        let (source, sink) = (problem.source(), problem.sink());
        let mut counts = Counts::default();
        let mut words = vec![0; width];
        for y in self.rows.clone() {
            let row = y as usize * width..(y as usize + 1) * width;
            saturation::<T>(&mut words, problem, y);
            self.keep(problem, y, &row);
            let caps: [&[i32]; 8] = std::array::from_fn(|d| {
                let dir = Direction::ALL[d.min(T::K - 1)];
                &problem.edges(dir)[row.clone()]
            });
            for (x, (&s, &t)) in source[row.clone()].iter().zip(&sink[row]).enumerate() {
                counts.offset += s.min(t) as u64;
                counts.supplies += usize::from(s > t);
                counts.deficits += usize::from(s < t);
                let arcs = self.write_node(x, y, &caps, words[x], s - t);
                let td = u64::from((s - t).unsigned_abs());
                // nodes pulled harder than their arcs carry are left out (see `amounts`)
                let amount = if td <= arcs { td } else { 0 };
                counts.supply += amount * u64::from(s > t);
                counts.deficit += amount * u64::from(s < t);
            }
        }
        counts
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
    /// capacities per direction), its saturation bits `words` (`saturation`'s) with the root
    /// state of its folded terminal capacity `td` — `root_by_terminal`'s, written in
    /// the same store (NOTES.md, saturation bits) — and its tree arc and distance.
    /// Returns the capacity of its outgoing arcs.
    #[inline(always)]
    fn write_node(&mut self, x: usize, y: u32, caps: &[&[i32]; 8], words: u32, td: i32) -> u64 {
        let i = self.node(self.layout.index(x as u32, y));
        let mut arcs = 0u64;
        for (d, arc) in self.rc[i * T::K..][..T::K].iter_mut().enumerate() {
            *arc = caps[d][x] as u32;
            arcs += u64::from(*arc);
        }
        self.tr[i] = i64::from(td);
        let root = td != 0;
        let mut w = words;
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
/// Fills `words` with the saturation bits of row `y`'s nodes: an arc out has
/// residual where its capacity is not zero, an arc in where its neighbour's arc
/// back is not (none off the grid).
fn saturation<T: Topology>(words: &mut [u32], problem: &GridProblem, y: u32) {
    let (width, height) = (problem.width() as usize, problem.height() as i64);
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

#[cfg(test)]
mod tests {
    use crate::bands::with_threads;
    use crate::maxflow::cpu::fixtures::{
        bits_follow_residuals, on_any_thread_count, random_grid, words_and_kept,
    };
    use crate::maxflow::cpu::layout::Layout;
    use crate::maxflow::cpu::solver::Solver;
    use crate::maxflow::cpu::state::{Eight, Four, Topology};

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
    fn arrays<T: Topology>(s: &Solver<T>) -> impl PartialEq + std::fmt::Debug + use<T> {
        let nodes = (s.rc.clone(), s.pa.clone(), s.tr.clone(), s.dist.clone());
        let counts = (s.offset, s.terminals, s.amounts);
        (words_and_kept(s), nodes, counts)
    }

    fn bands_agree<T: Topology>() {
        for (w, h) in [(37, 45), (8, 80), (64, 17), (5, 3)] {
            let load = |threads| loaded::<T>(threads, w, h);
            let alone = on_any_thread_count(load, arrays::<T>, &format!("{w}×{h}"));
            bits_follow_residuals(&alone);
        }
    }

    #[test]
    fn a_load_in_bands_is_the_load_on_one_thread() {
        bands_agree::<Four>();
        bands_agree::<Eight>();
    }
}

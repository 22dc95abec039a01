//! A band of whole block rows of the solver's arrays: the unit that passes over the
//! residual graph share among threads (a fresh frame's load, a dynamic update). In the
//! blocked layout a band's nodes are contiguous, and so are its rows of every
//! row-major array kept beside them, so bands are disjoint slices that threads write
//! without locks; a band indexes them by the grid's node and pixel indices.

use super::kept::spans;
use super::layout::{BLOCK, Layout};
use super::solver::Solver;
use super::state::{TREE, Topology};
use std::ops::Range;

/// Nodes per block.
const BLOCK_NODES: usize = (BLOCK * BLOCK) as usize;

/// One band's share of the solver's arrays: the nodes of whole block rows and the
/// kept capacities of their pixel rows.
pub(super) struct Band<'a, T: Topology> {
    pub(super) layout: &'a Layout,
    /// The band's pixel rows (the grid's, without padding).
    pub(super) rows: Range<u32>,
    /// Index of the band's first node.
    pub(super) first: u32,
    pub(super) st: &'a mut [T::Word],
    pub(super) rc: &'a mut [u32],
    pub(super) pa: &'a mut [u32],
    pub(super) tr: &'a mut [i64],
    /// Distances (and timestamps) of the band's nodes; empty where the topology keeps
    /// none.
    pub(super) dist: &'a mut [u32],
    /// Per forward direction, the kept forward capacities of the band's rows.
    pub(super) kept_fwd: Vec<&'a mut [i32]>,
    /// Per forward direction, the symmetry of the band's rows' stretches.
    pub(super) kept_sym: Vec<&'a mut [bool]>,
    /// The band's rows of `kept_td` and `kept_min`; empty where they are not kept.
    pub(super) kept_td: &'a mut [i32],
    pub(super) kept_min: &'a mut [i32],
}

impl<T: Topology> Solver<T> {
    /// The solver's arrays (already sized for the grid) split into bands of `rows`
    /// rows each (a multiple of the block's; one band where it covers the grid).
    pub(super) fn bands(&mut self, rows: usize) -> Vec<Band<'_, T>> {
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
            })
            .collect()
    }

    /// The whole grid as one band.
    pub(super) fn whole(&mut self) -> Band<'_, T> {
        let rows = self.layout.blocks_y() as usize * BLOCK as usize;
        let mut bands = self.bands(rows);
        debug_assert_eq!(bands.len(), 1);
        bands.swap_remove(0)
    }
}

impl<T: Topology> Band<'_, T> {
    /// Index in the band's node arrays of node `u` (one of the band's).
    #[inline(always)]
    pub(super) fn node(&self, u: u32) -> usize {
        (u - self.first) as usize
    }

    /// Index in the band's row-major arrays of pixel `r` of the grid (one of the
    /// band's).
    #[inline(always)]
    pub(super) fn pixel(&self, r: usize) -> usize {
        r - self.rows.start as usize * self.layout.width() as usize
    }

    /// The band's state bits of node `u`.
    #[inline(always)]
    pub(super) fn w(&self, u: u32) -> u32 {
        T::get(self.st[self.node(u)])
    }

    /// Sets the state bits of node `u`, but not its tree: the trees move only in
    /// the search and its repair, where `Solver::set` marks their blocks for the mask.
    #[inline(always)]
    pub(super) fn set(&mut self, u: u32, v: u32) {
        let i = self.node(u);
        assert_eq!((T::get(self.st[i]) ^ v) & TREE, 0, "a band moved a tree");
        self.st[i] = T::put(v);
    }
}

/// `v` in chunks of `len`, then empty slices for ever: the parts of an array that
/// may be empty (not kept), one per band.
fn parts<V>(v: &mut [V], len: usize) -> impl Iterator<Item = &mut [V]> {
    v.chunks_mut(len.max(1))
        .chain(std::iter::repeat_with(<&mut [V]>::default))
}

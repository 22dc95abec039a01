//! The solver's memory: structure-of-arrays residual graph in the blocked layout, the
//! search-tree state, the work queues and the capacities kept for dynamic updates;
//! building it from a [`GridProblem`] and reading the cut back.

use super::layout::{BLOCK, Layout};
use super::state::{ACTIVE, SINK, SOURCE, TERMINAL, TREE, Topology, in_bit, out_bit};
use crate::grid::{Direction, GridProblem, Mask};
use crate::maxflow::{BlockActivity, EngineError};
use std::collections::VecDeque;
use std::mem::size_of;

/// `pa` value of a tree root (its parent is the terminal).
pub(super) const PA_TERMINAL: u32 = u32::MAX;
/// `pa` value of an orphan or a free node.
pub(super) const PA_NONE: u32 = u32::MAX - 1;

/// A node of an augmenting path and its tree arc (see `Solver::pa`).
pub(super) type TreeArc = (u32, u32);

/// Boykov–Kolmogorov state for one grid shape; reused across calls of that shape.
pub(super) struct Solver<T: Topology> {
    pub(super) layout: Layout,
    /// State word per node (tree, parent direction, flags, saturation masks).
    pub(super) st: Vec<T::Word>,
    /// Residual capacity of arc (u, d) at `u * K + d`.
    pub(super) rc: Vec<u32>,
    /// Tree arc of each node as the `rc` index of the arc parent → node (so the parent
    /// is `pa / K`), or `PA_TERMINAL` / `PA_NONE`: path walks read it directly instead
    /// of decoding a direction and computing the neighbour.
    pub(super) pa: Vec<u32>,
    /// Folded terminal residual: > 0 residual s→u, < 0 residual u→t.
    pub(super) tr: Vec<i64>,
    /// Distance to the terminal (adoption phase with `T::MARKING`, or kept up to date
    /// with `ts` under `T::GROW_MARK`).
    pub(super) dist: Vec<u32>,
    /// Time (augmentation count) when `dist` was set (only with `T::GROW_MARK`).
    pub(super) ts: Vec<u32>,
    /// Current time for `ts`.
    pub(super) time: u32,
    /// Nodes activated after the initial sweep, first in first out.
    pub(super) queue: VecDeque<u32>,
    /// Next node of the sweep that picks up nodes flagged active in bulk.
    pub(super) sweep: usize,
    /// Orphans waiting for adoption.
    pub(super) orphans: VecDeque<u32>,
    /// The augmenting path being pushed, source side then sink side: (node, its
    /// tree arc) per tree arc.
    pub(super) path: (Vec<TreeArc>, Vec<TreeArc>),
    /// Nodes carrying the MARK flag, to clear it at the end of a phase.
    pub(super) marked: Vec<u32>,
    /// Flow pushed in the folded problem (terminal pairs reduced to one arc).
    pub(super) flow: i64,
    /// Σ min(s, t) over pixels: flow the folding pushed up front.
    pub(super) offset: u64,
    /// Row-major capacity of the forward arc (even directions) of each neighbour pair,
    /// `K / 2` per pixel; the backward capacity and the terminal capacities of the
    /// last problem follow from it and the residuals.
    pub(super) kept_fwd: Vec<u32>,
    /// Row-major folded terminal capacity s − t of each pixel of the last problem, so
    /// an update finds the changed pixels by comparison. Empty until the first
    /// update (4 bytes per pixel that solve-only use does not pay).
    pub(super) kept_td: Vec<i32>,
    /// Work per 8×8 block in the current call, row-major over blocks.
    pub(super) activity: Vec<u32>,
    /// Augmenting paths in the current call.
    pub(super) iterations: u64,
}

impl<T: Topology> Solver<T> {
    /// An empty solver for `layout`'s grid; arrays are sized on the first load.
    pub(super) fn new(layout: Layout) -> Self {
        Self {
            layout,
            st: Vec::new(),
            rc: Vec::new(),
            pa: Vec::new(),
            tr: Vec::new(),
            dist: Vec::new(),
            ts: Vec::new(),
            time: 0,
            queue: VecDeque::new(),
            sweep: 0,
            orphans: VecDeque::new(),
            path: (Vec::new(), Vec::new()),
            marked: Vec::new(),
            flow: 0,
            offset: 0,
            kept_fwd: Vec::new(),
            kept_td: Vec::new(),
            activity: Vec::new(),
            iterations: 0,
        }
    }

    /// Whether this solver was built for `problem`'s shape.
    pub(super) fn fits(&self, problem: &GridProblem) -> bool {
        problem.width() == self.layout.width()
            && problem.height() == self.layout.height()
            && problem.connectivity() == T::connectivity()
    }

    // The accessors below skip bounds checks: the solver only follows arcs whose
    // saturation bits are set, those bits are only ever set for arcs between two
    // pixels of the grid (`GridProblem` guarantees zero capacity on arcs leaving it),
    // and tree arcs are such arcs, so every index it computes lies inside the padded
    // grid. Debug builds check every access.

    /// State bits of node `u`.
    #[inline(always)]
    pub(super) fn w(&self, u: u32) -> u32 {
        debug_assert!((u as usize) < self.st.len());
        // SAFETY: see above.
        T::get(unsafe { *self.st.get_unchecked(u as usize) })
    }

    /// Sets the state bits of node `u`.
    #[inline(always)]
    pub(super) fn set(&mut self, u: u32, v: u32) {
        debug_assert!((u as usize) < self.st.len());
        // SAFETY: see above.
        unsafe { *self.st.get_unchecked_mut(u as usize) = T::put(v) };
    }

    /// Residual capacity at `rc` index `i` (= node · K + direction).
    #[inline(always)]
    pub(super) fn rc_i(&self, i: u32) -> u32 {
        debug_assert!((i as usize) < self.rc.len());
        // SAFETY: see above.
        unsafe { *self.rc.get_unchecked(i as usize) }
    }

    /// Mutable residual capacity at `rc` index `i`.
    #[inline(always)]
    pub(super) fn rc_i_mut(&mut self, i: u32) -> &mut u32 {
        debug_assert!((i as usize) < self.rc.len());
        // SAFETY: see above.
        unsafe { self.rc.get_unchecked_mut(i as usize) }
    }

    /// `rc` index of arc (u, d).
    #[inline(always)]
    pub(super) fn arc(u: u32, d: usize) -> u32 {
        (u << T::SHIFT) | d as u32
    }

    /// Tree arc of `u` (see `pa`).
    #[inline(always)]
    pub(super) fn pa_of(&self, u: u32) -> u32 {
        debug_assert!((u as usize) < self.pa.len());
        // SAFETY: see above.
        unsafe { *self.pa.get_unchecked(u as usize) }
    }

    /// Sets the tree arc of `u`.
    #[inline(always)]
    pub(super) fn set_pa(&mut self, u: u32, v: u32) {
        debug_assert!((u as usize) < self.pa.len());
        // SAFETY: see above.
        unsafe { *self.pa.get_unchecked_mut(u as usize) = v };
    }

    /// Mutable folded terminal residual of `u`.
    #[inline(always)]
    pub(super) fn tr_mut(&mut self, u: u32) -> &mut i64 {
        debug_assert!((u as usize) < self.tr.len());
        // SAFETY: see above.
        unsafe { self.tr.get_unchecked_mut(u as usize) }
    }

    /// Mutable distance of `u` (with `T::MARKING` or `T::GROW_MARK`).
    #[inline(always)]
    pub(super) fn dist_mut(&mut self, u: u32) -> &mut u32 {
        let i = if T::GROW_MARK {
            2 * u as usize
        } else {
            u as usize
        };
        debug_assert!((T::MARKING || T::GROW_MARK) && i < self.dist.len());
        // SAFETY: see above; `dist` has one entry per node under these flags (two,
        // distance and timestamp, under `T::GROW_MARK`).
        unsafe { self.dist.get_unchecked_mut(i) }
    }

    /// Mutable timestamp of `u` (only with `T::GROW_MARK`).
    #[inline(always)]
    pub(super) fn ts_mut(&mut self, u: u32) -> &mut u32 {
        let i = 2 * u as usize + 1;
        debug_assert!(T::GROW_MARK && i < self.dist.len());
        // SAFETY: see above; the timestamp follows the distance in `dist`.
        unsafe { self.dist.get_unchecked_mut(i) }
    }

    /// Builds the residual graph of `problem` from scratch: terminal pairs folded,
    /// every node with a terminal residual a root of its tree and active.
    pub(super) fn load(&mut self, problem: &GridProblem) -> Result<(), EngineError> {
        let n = self.layout.nodes();
        let k = T::K;
        if (n as u64) << T::SHIFT >= PA_NONE as u64 {
            return Err(EngineError::TooLarge {
                engine: "cpu",
                reason: format!("{n} nodes of {k} arcs exceed 32-bit arc indices"),
            });
        }
        let pixels = problem.pixels();
        let marks = if T::MARKING || T::GROW_MARK { n } else { 0 };
        reset(&mut self.st, n, T::Word::default())?;
        reset(&mut self.rc, n * k, 0)?;
        reset(&mut self.pa, n, PA_NONE)?;
        reset(&mut self.tr, n, 0)?;
        reset(&mut self.dist, if T::GROW_MARK { 2 * n } else { marks }, 0)?;
        reset(&mut self.kept_fwd, pixels * k / 2, 0)?;
        reset(&mut self.activity, n / 64, 0)?;
        self.clear_search();
        self.flow = 0;
        self.iterations = 0;
        let (source, sink) = (problem.source(), problem.sink());
        let edges: Vec<&[i32]> = Direction::ALL[..k]
            .iter()
            .map(|&d| problem.edges(d))
            .collect();
        let width = self.layout.width() as usize;
        let mut offset = 0u64;
        for (r, (&s, &t)) in source.iter().zip(sink).enumerate() {
            let (x, y) = ((r % width) as u32, (r / width) as u32);
            let u = self.layout.index(x, y);
            offset += s.min(t) as u64;
            let td = s - t;
            self.tr[u as usize] = td as i64;
            let mut w = self.w(u);
            for (d, caps) in edges.iter().enumerate() {
                let c = caps[r];
                self.rc[u as usize * k + d] = c as u32;
                if d % 2 == 0 {
                    self.kept_fwd[r * k / 2 + d / 2] = c as u32;
                }
                if c > 0 {
                    w |= out_bit::<T>(d);
                    let v = self.layout.neighbour(u, d);
                    let wv = self.w(v) | in_bit::<T>(d ^ 1);
                    self.set(v, wv);
                }
            }
            if td != 0 {
                w |= root_bits(td as i64);
                self.pa[u as usize] = PA_TERMINAL;
                if marks > 0 {
                    *self.dist_mut(u) = 1;
                }
            }
            self.set(u, w);
        }
        self.offset = offset;
        if !self.kept_td.is_empty() {
            self.kept_td.clear();
            self.kept_td
                .extend(source.iter().zip(sink).map(|(&s, &t)| s - t));
        }
        Ok(())
    }

    /// Empties the growth queue, orphan list and marks and restarts the clock, as
    /// before the first growth on freshly set trees.
    pub(super) fn clear_search(&mut self) {
        self.queue.clear();
        self.orphans.clear();
        self.marked.clear();
        self.sweep = 0;
        self.time = 0;
    }

    /// Source tree as a row-major mask: after `run` it is exactly the set of pixels
    /// reachable from s in the residual graph.
    pub(super) fn mask(&self) -> Mask {
        let (w, h) = (self.layout.width(), self.layout.height());
        let mut data = Vec::with_capacity(w as usize * h as usize);
        for y in 0..h {
            for x in 0..w {
                let src = self.w(self.layout.index(x, y)) & TREE == SOURCE;
                data.push(if src { 255 } else { 0 });
            }
        }
        Mask {
            width: w,
            height: h,
            data,
        }
    }

    /// Max-flow value of the loaded problem (after `run`).
    pub(super) fn total_flow(&self) -> u64 {
        debug_assert!(self.flow >= 0, "negative flow {}", self.flow);
        self.offset + self.flow as u64
    }

    /// Bytes held in all allocations of this solver.
    pub(super) fn bytes(&self) -> u64 {
        (self.st.capacity() * size_of::<T::Word>()
            + self.rc.capacity() * 4
            + self.pa.capacity() * 4
            + self.tr.capacity() * 8
            + self.dist.capacity() * 4
            + self.ts.capacity() * 4
            + self.queue.capacity() * 4
            + self.orphans.capacity() * 4
            + (self.path.0.capacity() + self.path.1.capacity()) * 8
            + self.marked.capacity() * 4
            + self.kept_fwd.capacity() * 4
            + self.kept_td.capacity() * 4
            + self.activity.capacity() * 4
            + size_of::<Self>()) as u64
    }

    /// Per-block work of the last call.
    pub(super) fn block_activity(&self) -> BlockActivity {
        BlockActivity {
            block_width: BLOCK,
            block_height: BLOCK,
            columns: self.layout.blocks_x(),
            rows: self.layout.blocks_y(),
            counts: self.activity.clone(),
        }
    }

    /// Counts one unit of work in `u`'s block.
    #[inline(always)]
    pub(super) fn count(&mut self, u: u32) {
        if let Some(c) = self.activity.get_mut(Layout::block(u)) {
            *c = c.saturating_add(1);
        }
    }
}

/// Sets `v` to `len` copies of `value`, reusing its allocation; a failed allocation
/// is reported instead of aborting.
fn reset<V: Copy>(v: &mut Vec<V>, len: usize, value: V) -> Result<(), EngineError> {
    v.clear();
    v.try_reserve_exact(len)
        .map_err(|_| EngineError::TooLarge {
            engine: "cpu",
            reason: format!("cannot allocate {} bytes", len * size_of::<V>()),
        })?;
    v.resize(len, value);
    Ok(())
}

/// State bits of a tree root whose folded terminal residual is `t` (≠ 0): the tree
/// `t`'s sign names, hanging from its terminal, active.
pub(super) fn root_bits(t: i64) -> u32 {
    (if t > 0 { SOURCE } else { SINK }) | TERMINAL | ACTIVE
}

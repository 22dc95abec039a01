//! The solver's memory: structure-of-arrays residual graph in the blocked layout, the
//! search-tree state, the work queues and the capacities kept for dynamic updates;
//! building it from a [`GridProblem`] and reading the cut back.

use super::layout::Layout;
use super::state::{ACTIVE, SINK, SOURCE, TERMINAL, Topology, in_bit, out_bit};
use crate::grid::{Direction, GridProblem, Mask};
use crate::maxflow::{BlockActivity, EngineError};
use std::collections::VecDeque;
use std::mem::size_of;

/// Boykov–Kolmogorov state for one grid shape; reused across calls of that shape.
pub(super) struct Solver<T: Topology> {
    pub(super) layout: Layout,
    /// State word per node (tree, parent, flags, saturation masks).
    pub(super) st: Vec<T::Word>,
    /// Residual capacity of arc (u, d) at `u * K + d`.
    pub(super) rc: Vec<u32>,
    /// Folded terminal residual: > 0 residual s→u, < 0 residual u→t.
    pub(super) tr: Vec<i64>,
    /// Distance to the terminal of nodes marked in the current adoption phase
    /// (only with `T::MARKING`).
    pub(super) dist: Vec<u32>,
    /// Nodes activated after the initial sweep, first in first out.
    pub(super) queue: VecDeque<u32>,
    /// Next node of the sweep that picks up nodes flagged active in bulk.
    pub(super) sweep: usize,
    /// Orphans waiting for adoption.
    pub(super) orphans: VecDeque<u32>,
    /// Nodes carrying the MARK flag, to clear it at the end of a phase.
    pub(super) marked: Vec<u32>,
    /// Flow pushed in the folded problem (terminal pairs reduced to one arc).
    pub(super) flow: i64,
    /// Σ min(s, t) over pixels: flow the folding pushed up front.
    pub(super) offset: u64,
    /// Row-major s − t of the problem last loaded (dynamic updates diff against it).
    pub(super) kept_td: Vec<i32>,
    /// Row-major capacity of the forward arc (even directions) of each neighbour pair,
    /// `K / 2` per pixel; the backward capacity follows from the residuals.
    pub(super) kept_fwd: Vec<u32>,
    /// Work per 8×8 block in the current call.
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
            tr: Vec::new(),
            dist: Vec::new(),
            queue: VecDeque::new(),
            sweep: 0,
            orphans: VecDeque::new(),
            marked: Vec::new(),
            flow: 0,
            offset: 0,
            kept_td: Vec::new(),
            kept_fwd: Vec::new(),
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

    /// State bits of node `u`.
    #[inline(always)]
    pub(super) fn w(&self, u: u32) -> u32 {
        T::get(self.st[u as usize])
    }

    /// Sets the state bits of node `u`.
    #[inline(always)]
    pub(super) fn set(&mut self, u: u32, v: u32) {
        self.st[u as usize] = T::put(v);
    }

    /// Builds the residual graph of `problem` from scratch: terminal pairs folded,
    /// every node with a terminal residual a root of its tree and active.
    pub(super) fn load(&mut self, problem: &GridProblem) -> Result<(), EngineError> {
        let n = self.layout.nodes();
        let pixels = problem.pixels();
        let k = T::K;
        reset(&mut self.st, n, T::Word::default())?;
        reset(&mut self.rc, n * k, 0)?;
        reset(&mut self.tr, n, 0)?;
        reset(&mut self.dist, if T::MARKING { n } else { 0 }, 0)?;
        reset(&mut self.kept_td, pixels, 0)?;
        reset(&mut self.kept_fwd, pixels * k / 2, 0)?;
        reset(&mut self.activity, n / 64, 0)?;
        self.queue.clear();
        self.orphans.clear();
        self.marked.clear();
        self.sweep = 0;
        self.flow = 0;
        self.iterations = 0;
        let (source, sink) = (problem.source(), problem.sink());
        let edges: Vec<&[i32]> = Direction::ALL[..k].iter().map(|&d| problem.edges(d)).collect();
        let width = self.layout.width() as usize;
        let mut offset = 0u64;
        for (r, (&s, &t)) in source.iter().zip(sink).enumerate() {
            let (x, y) = ((r % width) as u32, (r / width) as u32);
            let u = self.layout.index(x, y);
            offset += s.min(t) as u64;
            let td = s - t;
            self.kept_td[r] = td;
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
            w |= match td {
                0 => 0,
                1.. => SOURCE | TERMINAL | ACTIVE,
                _ => SINK | TERMINAL | ACTIVE,
            };
            self.set(u, w);
        }
        self.offset = offset;
        Ok(())
    }

    /// Source tree as a row-major mask: after `run` it is exactly the set of pixels
    /// reachable from s in the residual graph.
    pub(super) fn mask(&self) -> Mask {
        let (w, h) = (self.layout.width(), self.layout.height());
        let mut data = Vec::with_capacity(w as usize * h as usize);
        for y in 0..h {
            for x in 0..w {
                let src = self.w(self.layout.index(x, y)) & super::state::TREE == SOURCE;
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
            + self.tr.capacity() * 8
            + self.dist.capacity() * 4
            + self.queue.capacity() * 4
            + self.orphans.capacity() * 4
            + self.marked.capacity() * 4
            + self.kept_td.capacity() * 4
            + self.kept_fwd.capacity() * 4
            + self.activity.capacity() * 4
            + size_of::<Self>()) as u64
    }

    /// Per-block work of the last call.
    pub(super) fn block_activity(&self) -> BlockActivity {
        BlockActivity {
            block_width: super::layout::BLOCK,
            block_height: super::layout::BLOCK,
            columns: self.layout.blocks_x(),
            rows: self.layout.blocks_y(),
            counts: self.activity.clone(),
        }
    }

    /// Counts one unit of work in `u`'s block.
    #[inline(always)]
    pub(super) fn count(&mut self, u: u32) {
        let c = &mut self.activity[Layout::block(u)];
        *c = c.saturating_add(1);
    }
}

/// Sets `v` to `len` copies of `value`, reusing its allocation; a failed allocation
/// is reported instead of aborting.
fn reset<V: Copy>(v: &mut Vec<V>, len: usize, value: V) -> Result<(), EngineError> {
    v.clear();
    v.try_reserve_exact(len).map_err(|_| EngineError::TooLarge {
        engine: "cpu",
        reason: format!("cannot allocate {} bytes", len * size_of::<V>()),
    })?;
    v.resize(len, value);
    Ok(())
}

//! The solver's memory: structure-of-arrays residual graph in the blocked layout, the
//! search-tree state, the work queues and the capacities kept for dynamic updates;
//! building it from a [`GridProblem`] and reading the cut back.

use super::layout::{BLOCK, Layout};
use super::ring::Ring;
use super::state::{ACTIVE, MARK, PARENT, SINK, SOURCE, TERMINAL, TREE, Topology};
use crate::bands;
use crate::grid::{GridProblem, Mask};
use crate::maxflow::{BlockActivity, EngineError, EngineKind};
use std::mem::size_of;
use std::time::Instant;

/// `pa` value of a tree root (its parent is the terminal).
pub(super) const PA_TERMINAL: u32 = u32::MAX;
/// `pa` value of an orphan or a free node.
pub(super) const PA_NONE: u32 = u32::MAX - 1;

/// A node of an augmenting path and its tree arc (see `Solver::pa`).
pub(super) type TreeArc = (u32, u32);

/// Flow that the paths found by one growing node have delivered but not yet taken
/// along that node's own tree path, which stays recorded in `Solver::path` (the
/// source half for a source-tree grower, else the sink half) until it is.
#[derive(Clone, Copy, Debug)]
pub(super) struct Held {
    /// The growing node.
    pub(super) node: u32,
    /// Whether it grows the source tree.
    pub(super) source: bool,
    /// Root of its tree path.
    pub(super) root: u32,
    /// What its tree path and root can still carry.
    pub(super) room: u64,
    /// Flow sent so far.
    pub(super) flow: u64,
}

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
    /// Distance to the terminal (adoption phase with `T::MARKING`); under
    /// `T::GROW_MARK` kept up to date and followed by the time (augmentation count)
    /// it was set, the two side by side (`dist_mut`, `ts_mut`): read together, one
    /// cache line serves both.
    pub(super) dist: Vec<u32>,
    /// Current time for the timestamps.
    pub(super) time: u32,
    /// Nodes activated after the initial sweep, first in first out.
    pub(super) queue: Ring,
    /// Next node of the sweep that picks up nodes flagged active in bulk.
    pub(super) sweep: usize,
    /// Orphans waiting for adoption.
    pub(super) orphans: Ring,
    /// The augmenting path being pushed, source side then sink side: (node, its
    /// tree arc) per tree arc.
    pub(super) path: (Vec<TreeArc>, Vec<TreeArc>),
    /// Flow the growing node has sent on but not yet taken along its own tree path
    /// (see `Solver::augment`).
    pub(super) held: Option<Held>,
    /// Nodes carrying the MARK flag, to clear it at the end of a phase.
    pub(super) marked: Vec<u32>,
    /// Flow pushed in the folded problem (terminal pairs reduced to one arc).
    pub(super) flow: i64,
    /// Σ min(s, t) over pixels: flow the folding pushed up front.
    pub(super) offset: u64,
    /// Capacity of the forward arc (even directions) of each neighbour pair in the
    /// last problem, one row-major array per forward direction (`kept_index`); the
    /// backward capacity and the terminal capacities follow from it and the
    /// residuals.
    pub(super) kept_fwd: Vec<i32>,
    /// Per stretch of a row and forward direction, whether the last problem's pairs
    /// there have equal capacities both ways (see `kept`).
    pub(super) kept_sym: Vec<bool>,
    /// Row-major folded terminal capacity s − t of each pixel of the last problem, so
    /// an update finds the changed pixels by comparison. Empty until the first
    /// update (4 bytes per pixel that solve-only use does not pay).
    pub(super) kept_td: Vec<i32>,
    /// Row-major min(s, t) of each pixel of the last problem (what the flow's offset
    /// holds of it), kept beside `kept_td` so that an update of a few tiles can
    /// correct the offset without a pass over every pixel.
    pub(super) kept_min: Vec<i32>,
    /// Work per 8×8 block in the current call, row-major over blocks.
    pub(super) activity: Vec<u32>,
    /// Per 8×8 block, whether a node of it changed trees since the last `mask`:
    /// flagged by `set`, through which every tree change goes (the load, which
    /// writes the words directly, starts the mask afresh).
    pub(super) tree_moved: Vec<u8>,
    /// The row-major mask as the last `mask` gave it, if it was given since the last
    /// load: a later one rewrites only the blocks whose trees moved.
    pub(super) cut: Vec<u8>,
    /// Augmenting paths in the current call.
    pub(super) iterations: u64,
    /// Nodes with a supply (residual s → u) and with a deficit (u → t), counted by
    /// `load`, kept by the short-path sweep and counted again whenever the trees are
    /// set afresh (`roots_by_terminal`), for the search plan.
    pub(super) terminals: (usize, usize),
    /// Σ |s − t| over the supply nodes and over the deficit nodes whose outgoing arcs
    /// could pass that much on (nodes pulled harder than their arcs carry, hard
    /// constraints among them, are left out), as `load` found them: the plan's
    /// measure of which kind of terminal is scarce in amount.
    pub(super) amounts: (u64, u64),
    /// When the search must stop (the frame's budget), if it must.
    pub(super) deadline: Option<Instant>,
    /// The last search stopped at its deadline: the state is a flow short of the
    /// maximum, and nodes still to grow carry their active flag for the next call.
    pub(super) stopped: bool,
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
            time: 0,
            queue: Ring::default(),
            sweep: 0,
            orphans: Ring::default(),
            path: (Vec::new(), Vec::new()),
            held: None,
            marked: Vec::new(),
            flow: 0,
            offset: 0,
            kept_fwd: Vec::new(),
            kept_sym: Vec::new(),
            kept_td: Vec::new(),
            kept_min: Vec::new(),
            activity: Vec::new(),
            tree_moved: Vec::new(),
            cut: Vec::new(),
            iterations: 0,
            terminals: (0, 0),
            amounts: (0, 0),
            deadline: None,
            stopped: false,
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
        if (self.w(u) ^ v) & TREE != 0
            && let Some(moved) = self.tree_moved.get_mut(Layout::block(u))
        {
            *moved = 1;
        }
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
    /// every node with a terminal residual a root of its tree and active. Arrays
    /// already of the right size are overwritten, not cleared first: for video
    /// frames of one size that saves a pass over ~30 MB per 854×480 8C frame.
    pub(super) fn load(&mut self, problem: &GridProblem) -> Result<(), EngineError> {
        let n = self.layout.nodes();
        let k = T::K;
        if (n as u64) << T::SHIFT >= PA_NONE as u64 {
            return Err(EngineError::TooLarge {
                engine: EngineKind::Cpu,
                reason: format!("{n} nodes of {k} arcs exceed 32-bit arc indices"),
            });
        }
        let marks = match (T::GROW_MARK, T::MARKING) {
            (true, _) => 2 * n,
            (false, true) => n,
            (false, false) => 0,
        };
        // every word is written: the pixels' by `load_pixels`, the padding's here
        sized(&mut self.st, n, T::Word::default())?;
        sized(&mut self.rc, n * k, 0)?;
        sized(&mut self.pa, n, PA_NONE)?;
        sized(&mut self.tr, n, 0)?;
        sized(&mut self.dist, marks, 0)?;
        sized(&mut self.kept_fwd, problem.pixels() * k / 2, 0)?;
        let spans = self.sym_len();
        sized(&mut self.kept_sym, spans, false)?;
        reset(&mut self.activity, n / 64, 0)?;
        reset(&mut self.tree_moved, n / 64, 0)?;
        self.cut.clear();
        self.clear_search();
        self.flow = 0;
        self.iterations = 0;
        if !self.kept_td.is_empty() {
            sized(&mut self.kept_td, problem.pixels(), 0)?;
            sized(&mut self.kept_min, problem.pixels(), 0)?;
        }
        self.clear_padding();
        self.offset = self.load_pixels(problem);
        Ok(())
    }

    /// Resets node `u` to a free node without arcs.
    fn clear_node(&mut self, u: u32) {
        self.set(u, 0);
        let base = u as usize * T::K;
        self.rc[base..base + T::K].fill(0);
        self.set_pa(u, PA_NONE);
        self.tr[u as usize] = 0;
        self.init_distance(u, 0);
    }

    /// Gives node `u` the distance `dist` to its terminal, as of time 0 (where the
    /// topology keeps distances and timestamps).
    fn init_distance(&mut self, u: u32, dist: u32) {
        if T::MARKING || T::GROW_MARK {
            *self.dist_mut(u) = dist;
        }
        if T::GROW_MARK {
            *self.ts_mut(u) = 0;
        }
    }

    /// Resets the nodes that pad the grid to whole blocks.
    fn clear_padding(&mut self) {
        let (w, h) = (self.layout.width(), self.layout.height());
        let (pw, ph) = (
            self.layout.blocks_x() * BLOCK,
            self.layout.blocks_y() * BLOCK,
        );
        for y in 0..ph {
            let xs = if y < h { w } else { 0 };
            for x in xs..pw {
                self.clear_node(self.layout.index(x, y));
            }
        }
    }

    /// Gives node `u` the tree state its folded terminal residual says, as `load`
    /// leaves it: an active root of the tree the residual's sign names, or a free node
    /// when it is zero; no parent, no mark, distance as of time 0.
    #[inline(always)]
    pub(super) fn root_by_terminal(&mut self, u: u32) {
        let t = self.tr[u as usize];
        let root = t != 0;
        let w = self.w(u) & !(TREE | PARENT | ACTIVE | MARK);
        self.set(u, if root { w | root_bits(t) } else { w });
        self.set_pa(u, if root { PA_TERMINAL } else { PA_NONE });
        self.init_distance(u, u32::from(root));
    }

    /// `root_by_terminal` for every node: fresh trees on the current residual graph,
    /// with the supply and deficit nodes counted afresh (`terminals`).
    pub(super) fn roots_by_terminal(&mut self) {
        let (mut supplies, mut deficits) = (0, 0);
        for u in 0..self.st.len() as u32 {
            let t = self.tr[u as usize];
            supplies += usize::from(t > 0);
            deficits += usize::from(t < 0);
            self.root_by_terminal(u);
        }
        self.terminals = (supplies, deficits);
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
    /// reachable from s in the residual graph. Once the solver is updated, the mask is
    /// kept, and later ones read again only the blocks whose trees moved (an update
    /// moves few).
    pub(super) fn mask(&mut self) -> Mask {
        let (w, h) = (self.layout.width(), self.layout.height());
        if self.kept_td.is_empty() {
            // no update yet: solve-only use keeps no copy
            return self.mask_where(|tree| tree == SOURCE);
        }
        if self.cut.len() == w as usize * h as usize {
            self.refresh_cut();
        } else {
            self.cut = self.mask_where(|tree| tree == SOURCE).data;
            self.tree_moved.fill(0);
        }
        Mask {
            width: w,
            height: h,
            data: self.cut.clone(),
        }
    }

    /// Rewrites the blocks of `cut` whose trees moved, and clears their flags.
    fn refresh_cut(&mut self) {
        let Self {
            layout,
            st,
            tree_moved,
            cut,
            ..
        } = self;
        let (w, h) = (layout.width(), layout.height());
        let columns = layout.blocks_x() as usize;
        // eight blocks' flags at a time: most are clear
        for (c, flags) in tree_moved.chunks_mut(8).enumerate() {
            if flags.iter().all(|&f| f == 0) {
                continue;
            }
            for (i, flag) in flags.iter_mut().enumerate() {
                if std::mem::take(flag) == 0 {
                    continue;
                }
                let b = 8 * c + i;
                let (x0, y0) = ((b % columns) as u32 * BLOCK, (b / columns) as u32 * BLOCK);
                if x0 >= w {
                    continue; // padding only
                }
                let run = BLOCK.min(w - x0) as usize;
                for y in y0..(y0 + BLOCK).min(h) {
                    let first = layout.index(x0, y) as usize;
                    let row = &mut cut[(y * w + x0) as usize..][..run];
                    for (out, &word) in row.iter_mut().zip(&st[first..first + run]) {
                        *out = if T::get(word) & TREE == SOURCE {
                            255
                        } else {
                            0
                        };
                    }
                }
            }
        }
    }

    /// Row-major mask of the pixels whose tree bits (`TREE`) satisfy `source_side`, in
    /// row bands on every core (a memory-bound pass over every node).
    pub(super) fn mask_where(&self, source_side: impl Fn(u32) -> bool + Sync) -> Mask {
        let (w, h) = (self.layout.width(), self.layout.height());
        let mut data = vec![0u8; w as usize * h as usize];
        let (layout, st) = (&self.layout, &self.st[..]);
        let label = |word: T::Word| {
            if source_side(T::get(word) & TREE) {
                255
            } else {
                0
            }
        };
        bands::for_each_band(&mut data, w as usize, 1, |first, band| {
            // a block's row of nodes is contiguous: read it as one run
            for (r, row) in band.chunks_exact_mut(w as usize).enumerate() {
                let y = (first + r) as u32;
                for (bx, run) in row.chunks_mut(BLOCK as usize).enumerate() {
                    let first = layout.index(bx as u32 * BLOCK, y) as usize;
                    let words = &st[first..first + run.len()];
                    // whole runs as fixed-size arrays, which the compiler vectorises
                    match (
                        <&mut [u8; BLOCK as usize]>::try_from(&mut *run),
                        <&[T::Word; BLOCK as usize]>::try_from(words),
                    ) {
                        (Ok(out), Ok(words)) => *out = words.map(label),
                        _ => run
                            .iter_mut()
                            .zip(words)
                            .for_each(|(out, &word)| *out = label(word)),
                    }
                }
            }
        });
        Mask {
            width: w,
            height: h,
            data,
        }
    }

    /// Flow of the loaded problem so far: during an update it can be below zero, the
    /// reparameterisation having taken back flow that the search has not yet pushed
    /// again (it is still a lower bound of the maximum flow).
    pub(super) fn flow_so_far(&self) -> i64 {
        self.offset as i64 + self.flow
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
            + self.queue.capacity() * 4
            + self.orphans.capacity() * 4
            + (self.path.0.capacity() + self.path.1.capacity()) * 8
            + self.marked.capacity() * 4
            + self.kept_fwd.capacity() * 4
            + self.kept_sym.capacity()
            + self.kept_td.capacity() * 4
            + self.kept_min.capacity() * 4
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

/// Gives `v` the length `len`, keeping its contents when it has that length
/// already (the caller overwrites every entry) and else filling it with `value`.
fn sized<V: Copy>(v: &mut Vec<V>, len: usize, value: V) -> Result<(), EngineError> {
    if v.len() == len {
        return Ok(());
    }
    reset(v, len, value)
}

/// Sets `v` to `len` copies of `value`, reusing its allocation; a failed allocation
/// is reported instead of aborting.
fn reset<V: Copy>(v: &mut Vec<V>, len: usize, value: V) -> Result<(), EngineError> {
    v.clear();
    v.try_reserve_exact(len)
        .map_err(|_| EngineError::TooLarge {
            engine: EngineKind::Cpu,
            reason: format!("cannot allocate {} bytes", len * size_of::<V>()),
        })?;
    crate::huge_pages::advise(v);
    v.resize(len, value);
    Ok(())
}

/// State bits of a tree root whose folded terminal residual is `t` (≠ 0): the tree
/// `t`'s sign names, hanging from its terminal, active.
pub(super) fn root_bits(t: i64) -> u32 {
    (if t > 0 { SOURCE } else { SINK }) | TERMINAL | ACTIVE
}

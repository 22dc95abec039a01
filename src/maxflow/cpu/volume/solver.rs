//! The 3D solver's memory: the residual graph in the blocked layout (structure of
//! arrays), the search-tree state and work queues, and the capacities of the last
//! problem for dynamic updates; building it from a [`VolumeProblem`], applying changed
//! capacities to the kept flow, and reading the cut and the flow back.

use super::super::ring::Ring;
use super::hood::{ACTIVE, FREE, Hood, SINK, SOURCE, TREE, in_bit, out_bit, out_mask};
use super::layout::Layout;
use crate::bands;
use crate::grid::{Mask, OFFSETS, VolumeProblem};
use crate::maxflow::{EngineError, EngineKind};
use std::mem::size_of;

/// `pa` value of a tree root (its parent is the terminal).
pub(super) const PA_TERMINAL: u32 = u32::MAX;
/// Sink roots start passive where deficit nodes outnumber supply nodes this many
/// times or more (an object on a large background): the source tree alone searches.
const PASSIVE_SINK: usize = 8;

/// Deficits move towards supply (`transport`) only where the scarcer kind of
/// terminal node is at least one in this many of the other, as in 2D.
const SCARCE: usize = 4;

/// ... and only where at least one node in this many is a terminal node, as in 2D.
const SPARSE: usize = 8;

/// `pa` value of an orphan or a free node.
pub(super) const PA_NONE: u32 = u32::MAX - 1;

/// A node of a recorded tree path and its tree arc (`pa`).
pub(super) type TreeArc = (u32, u32);

/// Boykov–Kolmogorov state for one volume shape; reused across calls of that shape.
pub(super) struct Solver<H: Hood> {
    pub(super) layout: Layout,
    /// State word per node (tree, active flag, saturation masks).
    pub(super) st: Vec<H::Word>,
    /// Residual capacity of arc (u, d) at `u * K + d`.
    pub(super) rc: Vec<u32>,
    /// Tree arc of each node as the `rc` index of the arc parent → node (the parent
    /// is `pa / K`), or `PA_TERMINAL` / `PA_NONE`.
    pub(super) pa: Vec<u32>,
    /// Folded terminal residual: > 0 residual s→u, < 0 residual u→t.
    pub(super) tr: Vec<i64>,
    /// BK's (timestamp, distance to the terminal) per node, read together.
    pub(super) marks: Vec<[u32; 2]>,
    /// Current time for the timestamps (one tick per augmentation).
    pub(super) time: u32,
    /// Distance from the nearest supply while deficits move (`transport`).
    pub(super) level: Vec<u8>,
    /// Nodes in the order `transport` labelled them.
    pub(super) order: Vec<u32>,
    /// Active nodes, first in first out: the trees grow breadth first.
    pub(super) queue: Ring,
    /// Orphans waiting for adoption.
    pub(super) orphans: Ring,
    /// The source- and sink-tree paths of the current augmentation (`walk_both`).
    pub(super) path: (Vec<TreeArc>, Vec<TreeArc>),
    /// Augmenting paths in the current call.
    pub(super) iterations: u64,
    /// The problem whose residual graph this is: the old capacities of an update,
    /// and the source capacities the flow is read from.
    kept: Option<VolumeProblem>,
}

impl<H: Hood> Solver<H> {
    /// An empty solver for `layout`'s volume; arrays are sized on the first load.
    pub(super) fn new(layout: Layout) -> Self {
        Self {
            layout,
            st: Vec::new(),
            rc: Vec::new(),
            pa: Vec::new(),
            tr: Vec::new(),
            marks: Vec::new(),
            time: 0,
            level: Vec::new(),
            order: Vec::new(),
            queue: Ring::default(),
            orphans: Ring::default(),
            path: (Vec::new(), Vec::new()),
            iterations: 0,
            kept: None,
        }
    }

    /// Whether this solver was built for `problem`'s shape.
    pub(super) fn fits(&self, problem: &VolumeProblem) -> bool {
        self.layout.size() == (problem.width(), problem.height(), problem.depth())
            && problem.connectivity() == H::connectivity()
    }

    // The accessors below skip bounds checks: the solver only follows arcs whose
    // saturation bits are set, those bits are only ever set for arcs between two
    // voxels of the volume (`VolumeProblem` guarantees zero capacity on arcs leaving
    // it), and tree arcs are such arcs, so every index it computes lies inside the
    // padded volume. Debug builds check every access.

    /// State bits of node `u`.
    #[inline(always)]
    pub(super) fn w(&self, u: u32) -> u64 {
        debug_assert!((u as usize) < self.st.len());
        // SAFETY: see above.
        H::get(unsafe { *self.st.get_unchecked(u as usize) })
    }

    /// Sets the state bits of node `u`.
    #[inline(always)]
    pub(super) fn set(&mut self, u: u32, v: u64) {
        debug_assert!((u as usize) < self.st.len());
        // SAFETY: see above.
        unsafe { *self.st.get_unchecked_mut(u as usize) = H::put(v) };
    }

    /// Mutable residual capacity at `rc` index `i` (= node · K + direction).
    #[inline(always)]
    pub(super) fn rc_mut(&mut self, i: u32) -> &mut u32 {
        debug_assert!((i as usize) < self.rc.len());
        // SAFETY: see above.
        unsafe { self.rc.get_unchecked_mut(i as usize) }
    }

    /// Residual capacity at `rc` index `i`.
    #[inline(always)]
    pub(super) fn rc(&self, i: u32) -> u32 {
        debug_assert!((i as usize) < self.rc.len());
        // SAFETY: see above.
        unsafe { *self.rc.get_unchecked(i as usize) }
    }

    /// `rc` index of arc (u, d).
    #[inline(always)]
    pub(super) fn arc(u: u32, d: usize) -> u32 {
        u * H::K as u32 + d as u32
    }

    /// Tree arc of `u` (see `pa`).
    #[inline(always)]
    pub(super) fn pa(&self, u: u32) -> u32 {
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

    /// Timestamp and distance of `u`.
    #[inline(always)]
    pub(super) fn mark(&mut self, u: u32) -> &mut [u32; 2] {
        debug_assert!((u as usize) < self.marks.len());
        // SAFETY: see above.
        unsafe { self.marks.get_unchecked_mut(u as usize) }
    }

    /// Mutable folded terminal residual of `u`.
    #[inline(always)]
    pub(super) fn tr_mut(&mut self, u: u32) -> &mut i64 {
        debug_assert!((u as usize) < self.tr.len());
        // SAFETY: see above.
        unsafe { self.tr.get_unchecked_mut(u as usize) }
    }

    /// Builds the residual graph of `problem` from scratch (terminal pairs folded) and
    /// every node's saturation bits, in no tree; [`Self::keep`] the problem after it.
    /// Each layer of blocks is filled on its own (over the band threads): a node's
    /// incoming-arc bits are read from its neighbours' capacities in the problem, so no
    /// layer writes into another. Nodes that pad the volume to whole blocks keep the
    /// zeros they were allocated with: no arc with capacity leads to them.
    pub(super) fn load(&mut self, problem: &VolumeProblem) -> Result<(), EngineError> {
        let n = self.layout.nodes();
        if (n as u64) * H::K as u64 >= PA_NONE as u64 {
            return Err(EngineError::TooLarge {
                engine: EngineKind::Cpu,
                reason: format!("{n} nodes of {} arcs exceed 32-bit arc indices", H::K),
            });
        }
        sized(&mut self.rc, n * H::K, 0)?;
        sized(&mut self.tr, n, 0)?;
        sized(&mut self.st, n, H::Word::default())?;
        sized(&mut self.pa, n, PA_NONE)?;
        sized(&mut self.marks, n, [0, 0])?;
        let (nodes, slices) = self.layout.layer();
        let layout = &self.layout;
        let layers = (self.st.chunks_mut(nodes))
            .zip(self.rc.chunks_mut(nodes * H::K))
            .zip(self.tr.chunks_mut(nodes))
            .enumerate()
            .collect();
        bands::for_each_part(layers, |(layer, ((st, rc), tr))| {
            let first = layer as u32 * slices;
            let last = (first + slices).min(problem.depth());
            let base = layer * nodes;
            for z in first..last {
                load_slice::<H>(problem, layout, z, base, (st, rc, tr));
            }
        });
        Ok(())
    }

    /// Keeps the problem just loaded: the old capacities of a later update, and the
    /// source capacities the flow is read from.
    pub(super) fn keep(&mut self, problem: VolumeProblem) {
        self.kept = Some(problem);
    }

    /// Calls `f(self, voxel)` for every voxel in row-major order.
    fn for_each_voxel(&mut self, mut f: impl FnMut(&mut Self, Voxel)) {
        let (w, h, d) = self.layout.size();
        let mut i = 0;
        for z in 0..d {
            for y in 0..h {
                for x in 0..w {
                    let u = self.layout.index(x, y, z);
                    f(
                        self,
                        Voxel {
                            i,
                            u,
                            at: (x, y, z),
                        },
                    );
                    i += 1;
                }
            }
        }
    }

    /// Sets every node's state word to its saturation bits (from the residuals),
    /// in no tree.
    fn set_saturation(&mut self) {
        self.st.fill(H::Word::default());
        for u in 0..self.st.len() as u32 {
            for d in 0..H::K {
                if self.rc[Self::arc(u, d) as usize] > 0 {
                    self.set(u, self.w(u) | out_bit(d));
                    let v = self.layout.neighbour(u, d);
                    self.set(v, self.w(v) | in_bit::<H>(d ^ 1));
                }
            }
        }
    }

    /// Starts the search on the loaded (or updated) residual graph: flow pushed along
    /// the paths s → u → v → t (`push_short_paths`), deficits moved as `plan` says,
    /// then every node with terminal residual a root of its tree, every other node
    /// free, and the roots queued in memory order.
    pub(super) fn start_search(&mut self) {
        self.push_short_paths();
        let sink_active = self.plan();
        self.set_roots(sink_active);
    }

    /// Moves deficits towards supply (`transport`) where supply and deficit nodes are
    /// both common (`SCARCE`, `SPARSE`), as the 2D engine's plan does; returns the
    /// flag sink roots start with: passive where the sink pulls far more nodes than s
    /// feeds (`PASSIVE_SINK`), or always in 10- and 26-connected volumes
    /// (`Hood::SOURCE_SEARCHES`). Passive sink roots keep BK exact: BK stops only when no
    /// node is active, and a source node goes passive only once every residual arc out
    /// of it leads into the source tree, so the source tree is still the set of nodes
    /// reachable from s; the sink tree grows where adoption wakes it.
    fn plan(&mut self) -> u64 {
        let (mut supplies, mut deficits) = self.terminal_nodes();
        let (few, many) = (supplies.min(deficits), supplies.max(deficits));
        let (w, h, d) = self.layout.size();
        let voxels = w as usize * h as usize * d as usize;
        if few * SCARCE >= many && (few + many) * SPARSE >= voxels {
            self.move_deficits();
            (supplies, deficits) = self.terminal_nodes();
        }
        if H::SOURCE_SEARCHES || deficits >= PASSIVE_SINK * supplies {
            0
        } else {
            ACTIVE
        }
    }

    /// Makes every node with terminal residual a root of its tree (sink roots with
    /// `sink_active`), every other node free, and queues the active roots.
    fn set_roots(&mut self, sink_active: u64) {
        self.time = 0;
        self.queue.clear();
        self.orphans.clear();
        self.iterations = 0;
        self.marks.fill([0, 1]);
        for u in 0..self.st.len() as u32 {
            let (tree, pa) = match self.tr[u as usize].signum() {
                1 => (SOURCE | ACTIVE, PA_TERMINAL),
                -1 => (SINK | sink_active, PA_TERMINAL),
                _ => (FREE, PA_NONE),
            };
            self.set(u, self.w(u) | tree);
            self.pa[u as usize] = pa;
            if tree & ACTIVE != 0 {
                self.queue.push_back(u);
            }
        }
    }

    /// How many nodes s feeds and how many the sink pulls.
    fn terminal_nodes(&self) -> (usize, usize) {
        self.tr.iter().fold((0, 0), |(s, d), &t| {
            (s + usize::from(t > 0), d + usize::from(t < 0))
        })
    }

    /// Pushes flow along every path s → u → v → t that uses one neighbour arc, in one
    /// sweep in memory order, as the 2D engine's `prepush` does: where the voxels each
    /// terminal pulls meet, this spares BK a growth step, an augmentation and an
    /// adoption per path. Every push follows a residual path from s to t: exact.
    fn push_short_paths(&mut self) {
        for u in 0..self.st.len() as u32 {
            let mut excess = self.tr[u as usize];
            let mut bits = out_mask::<H>(self.w(u)) * u64::from(excess > 0);
            while bits != 0 && excess > 0 {
                let d = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                let v = self.layout.neighbour(u, d);
                let deficit = -self.tr[v as usize];
                if deficit <= 0 {
                    continue;
                }
                let a = excess.min(deficit).min(self.rc(Self::arc(u, d)) as i64);
                self.push(u, v, d, a as u32);
                excess -= a;
                self.tr[v as usize] += a;
            }
            self.tr[u as usize] = excess;
        }
    }

    /// Applies `problem`'s capacities to the kept residual graph, keeping its flow
    /// where the new capacities allow (Kohli and Torr's reparameterisation): a changed
    /// terminal pair moves the folded residual by its change, a neighbour pair whose
    /// flow no longer fits is cut back to its new capacity and the difference left at
    /// its ends as terminal residual. Then the trees start afresh on the updated
    /// graph (`start_search`). Returns how many arcs changed.
    pub(super) fn apply_changes(&mut self, problem: &VolumeProblem) -> u64 {
        let old = self.kept.take().expect("apply_changes follows a load");
        let mut changed = 0u64;
        self.for_each_voxel(|s, voxel| {
            let (i, u) = (voxel.i, voxel.u);
            let (ds, dt) = (
                problem.source()[i] - old.source()[i],
                problem.sink()[i] - old.sink()[i],
            );
            changed += u64::from(ds != 0) + u64::from(dt != 0);
            s.tr[u as usize] += ds as i64 - dt as i64;
            for d in (0..H::K).step_by(2) {
                changed += s.reparameterise(&old, problem, voxel, d);
            }
        });
        self.kept = Some(problem.clone());
        self.set_saturation();
        changed
    }

    /// Moves the neighbour pair of `voxel` in forward direction `d` to the new
    /// capacities; returns how many of its two arcs changed.
    fn reparameterise(
        &mut self,
        old: &VolumeProblem,
        new: &VolumeProblem,
        voxel: Voxel,
        d: usize,
    ) -> u64 {
        let Some(j) = voxel.step(self.layout.size(), d) else {
            return 0;
        };
        let (i, u) = (voxel.i, voxel.u);
        let (a, a2) = (old.edges(d)[i] as i64, new.edges(d)[i] as i64);
        let (b, b2) = (old.edges(d ^ 1)[j] as i64, new.edges(d ^ 1)[j] as i64);
        if a == a2 && b == b2 {
            return 0;
        }
        let v = self.layout.neighbour(u, d);
        let (fwd, back) = (Self::arc(u, d) as usize, Self::arc(v, d ^ 1) as usize);
        // net flow u → v, kept where it fits the new pair
        let flow = a - self.rc[fwd] as i64;
        let kept = flow.clamp(-b2, a2);
        self.rc[fwd] = (a2 - kept) as u32;
        self.rc[back] = (b2 + kept) as u32;
        // u sends `flow - kept` less to v: its terminal takes it back, v's gives it
        let excess = flow - kept;
        self.tr[u as usize] += excess;
        self.tr[v as usize] -= excess;
        u64::from(a != a2) + u64::from(b != b2)
    }

    /// The minimum cut: voxels in the source tree (after `run`, exactly the voxels
    /// reachable from s), as the canonical W × (H·D) mask.
    pub(super) fn mask(&self) -> Mask {
        let (w, h, d) = self.layout.size();
        let mut data = Vec::with_capacity(w as usize * h as usize * d as usize);
        for z in 0..d {
            for y in 0..h {
                data.extend((0..w).map(|x| {
                    let source = self.w(self.layout.index(x, y, z)) & TREE == SOURCE;
                    if source { 255 } else { 0 }
                }));
            }
        }
        Mask {
            width: w,
            height: h * d,
            data,
        }
    }

    /// Max-flow value (after `run`): Σ s − Σ max(residual s→u, 0). In the folded
    /// graph each voxel's terminal pair carries s − max(residual, 0) from s, which
    /// also holds where an update left a pair carrying more than its new capacities.
    pub(super) fn total_flow(&self) -> u64 {
        let kept = self.kept.as_ref().expect("a loaded problem");
        let fed: i64 = kept.source().iter().map(|&s| s as i64).sum();
        let left: i64 = self.tr.iter().map(|&t| t.max(0)).sum();
        debug_assert!(fed >= left);
        (fed - left) as u64
    }

    /// Bytes held in all allocations of this solver.
    pub(super) fn bytes(&self) -> u64 {
        let kept = self
            .kept
            .as_ref()
            .map_or(0, |p| p.voxels() * (2 + H::K) * 4);
        (self.st.capacity() * size_of::<H::Word>()
            + self.rc.capacity() * 4
            + self.pa.capacity() * 4
            + self.tr.capacity() * 8
            + self.marks.capacity() * 8
            + (self.queue.capacity() + self.orphans.capacity()) * 4
            + kept
            + size_of::<Self>()) as u64
    }
}

/// A voxel as the loops over the volume meet it: its row-major index, its node and
/// its coordinates.
#[derive(Clone, Copy, Debug)]
struct Voxel {
    i: usize,
    u: u32,
    at: (u32, u32, u32),
}

impl Voxel {
    /// Row-major index of the neighbour in direction `d` inside a volume of `size`.
    fn step(self, (w, h, d): (u32, u32, u32), dir: usize) -> Option<usize> {
        let (dx, dy, dz) = OFFSETS[dir];
        let (x, y, z) = self.at;
        let inside = |c: u32, dc: i32, n: u32| c.checked_add_signed(dc).is_some_and(|c| c < n);
        let ok = inside(x, dx, w) && inside(y, dy, h) && inside(z, dz, d);
        let delta = (dz as i64 * h as i64 + dy as i64) * w as i64 + dx as i64;
        ok.then(|| (self.i as i64 + delta) as usize)
    }
}

/// Gives `v` the length `len`, reusing its allocation; a failed allocation is
/// reported instead of aborting. Entries kept from before are the caller's to reset.
/// Fills the nodes of slice `z` of `problem` into a layer's arrays (`base`: its first
/// node): arcs, folded terminal, and state word with the out- and in-arc bits.
fn load_slice<H: Hood>(
    problem: &VolumeProblem,
    layout: &Layout,
    z: u32,
    base: usize,
    (st, rc, tr): (&mut [H::Word], &mut [u32], &mut [i64]),
) {
    let (w, h, depth) = (problem.width(), problem.height(), problem.depth());
    let k = H::K;
    let edges: Vec<&[i32]> = (0..k).map(|d| problem.edges(d)).collect();
    let (source, sink) = (problem.source(), problem.sink());
    let inside = |c: u32, dc: i32, n: u32| (0..n as i64).contains(&(c as i64 + dc as i64));
    for y in 0..h {
        for x in 0..w {
            let i = ((z * h + y) * w + x) as usize;
            let u = layout.index(x, y, z) as usize - base;
            let mut word = 0u64;
            for (d, e) in edges.iter().enumerate() {
                let c = e[i] as u32;
                rc[u * k + d] = c;
                word |= out_bit(d) * u64::from(c > 0);
                // the arc into this voxel from its neighbour at OFFSETS[d]
                let (dx, dy, dz) = OFFSETS[d];
                if inside(x, dx, w) && inside(y, dy, h) && inside(z, dz, depth) {
                    let step = (dz as i64 * h as i64 + dy as i64) * w as i64 + dx as i64;
                    let j = (i as i64 + step) as usize;
                    word |= in_bit::<H>(d) * u64::from(edges[d ^ 1][j] > 0);
                }
            }
            st[u] = H::put(word);
            tr[u] = source[i] as i64 - sink[i] as i64;
        }
    }
}

fn sized<V: Copy>(v: &mut Vec<V>, len: usize, value: V) -> Result<(), EngineError> {
    if v.len() == len {
        return Ok(());
    }
    v.clear();
    v.try_reserve_exact(len)
        .map_err(|_| EngineError::TooLarge {
            engine: EngineKind::Cpu,
            reason: format!("cannot allocate {} bytes", len * size_of::<V>()),
        })?;
    v.resize(len, value);
    Ok(())
}

//! The Boykov–Kolmogorov loop on the compact grid: grow the source and sink search
//! trees from active nodes, augment along the path where they meet, adopt the
//! orphans the augmentation left, until no active node remains.

use super::budget::CHECK_EVERY;
use super::solver::{Held, PA_NONE, PA_TERMINAL, Solver, TreeArc};
use super::state::{
    ACTIVE, FREE, MARK, ORPHAN, PARENT, SINK, SOURCE, TERMINAL, TREE, Topology, growth_mask,
    in_bit, in_mask, out_bit, out_mask,
};

impl<T: Topology> Solver<T> {
    /// Runs BK to the maximum flow from the current residual graph and trees. On
    /// return the source tree is the set of nodes reachable from s.
    /// Growth re-hangs nodes (8C's marking heuristic) only where the trees grow by
    /// the sweep: `grow_breadth_first` ends the sweep before it starts, and trees
    /// grown breadth first are not re-hung (see there).
    pub(super) fn run(&mut self) {
        if T::GROW_MARK && self.sweep < self.st.len() {
            self.search::<true>();
        } else {
            self.search::<false>();
        }
    }

    /// `run`, re-hanging nodes in growth where `REHANG`: one loop for each, so that
    /// growth tests no flag per arc.
    fn search<const REHANG: bool>(&mut self) {
        let mut current: Option<u32> = None;
        self.stopped = false;
        let mut grown = 0u32;
        loop {
            grown = grown.wrapping_add(1);
            if grown.is_multiple_of(CHECK_EVERY) && self.past_deadline() {
                self.stop();
                return;
            }
            let resumed = current.take().and_then(|p| {
                let w = self.w(p) & !ACTIVE;
                self.set(p, w);
                (w & TREE != FREE).then_some(p)
            });
            let Some(p) = resumed.or_else(|| self.next_active()) else {
                break;
            };
            let w = self.w(p);
            let hit = if w & TREE == SOURCE {
                self.grow::<true, REHANG>(p, w)
            } else {
                self.grow::<false, REHANG>(p, w)
            };
            self.count(p);
            if let Some((a, d)) = hit {
                // Keep growing from p after this path; the flag keeps it off the queue.
                self.set(p, self.w(p) | ACTIVE);
                current = Some(p);
                self.tick();
                self.augment(p, a, d);
                self.adopt();
                self.iterations += 1;
            } else if self.held.is_some() {
                // p is done: its tree path finally carries what its paths sent.
                self.tick();
                self.release_held();
                self.adopt();
            }
        }
        debug_assert!(self.held.is_none());
        #[cfg(debug_assertions)]
        self.check_invariants();
    }

    /// Ends a search at its deadline in a state the next call can continue: the flow
    /// the current grower holds back goes along its tree path, and that grower keeps
    /// its active flag (the next call sweeps every node for the flag).
    fn stop(&mut self) {
        self.tick();
        self.release_held();
        self.adopt();
        self.stopped = true;
    }

    /// Next node to grow: first the sweep over nodes flagged in bulk, then the queue.
    /// (Skipping four passive nodes at once was tried: NOTES.md, `next_active`.)
    fn next_active(&mut self) -> Option<u32> {
        let n = self.st.len();
        while self.sweep < n {
            let u = self.sweep as u32;
            self.sweep += 1;
            if let Some(u) = self.take_active(u) {
                return Some(u);
            }
        }
        while let Some(u) = self.queue.pop_front() {
            if let Some(u) = self.take_active(u) {
                return Some(u);
            }
        }
        None
    }

    /// Clears `u`'s active flag; `u` if it was set and `u` is in a tree.
    #[inline(always)]
    fn take_active(&mut self, u: u32) -> Option<u32> {
        let w = self.w(u);
        if w & ACTIVE == 0 {
            return None;
        }
        self.set(u, w & !ACTIVE);
        (w & TREE != FREE).then_some(u)
    }

    /// Queues `u` for growth unless it is already flagged.
    #[inline(always)]
    pub(super) fn set_active(&mut self, u: u32) {
        let w = self.w(u);
        if w & ACTIVE == 0 {
            self.set(u, w | ACTIVE);
            if (u as usize) < self.sweep {
                self.queue.push_back(u);
            }
        }
    }

    /// Hangs `q` (state `wq`, keeping its other bits) below its neighbour `p`, which
    /// sees `q` in direction `d`.
    #[inline(always)]
    fn attach(&mut self, q: u32, wq: u32, p: u32, d: usize) {
        self.set(q, (wq & !PARENT) | (d as u32 ^ 1));
        self.set_pa(q, Self::arc(p, d));
    }

    /// Grows the tree of `p` (source tree when `SRC`) over the arcs with residual
    /// capacity; returns the arc (a, d), a in S and its neighbour in T, where the
    /// trees touch. Reading every direction's neighbour first, to decide without a
    /// branch per arc, cut growth's mispredicted branches but was slower everywhere
    /// (NOTES.md, `grow`).
    #[inline(always)]
    fn grow<const SRC: bool, const REHANG: bool>(
        &mut self,
        p: u32,
        w: u32,
    ) -> Option<(u32, usize)> {
        let (mine, other) = if SRC { (SOURCE, SINK) } else { (SINK, SOURCE) };
        let mut bits = growth_mask::<T>(w, SRC);
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let q = self.layout.neighbour(p, d);
            let wq = self.w(q);
            let tree = wq & TREE;
            if tree == FREE {
                self.attach(q, wq | mine | ACTIVE, p, d);
                if wq & ACTIVE == 0 && (q as usize) < self.sweep {
                    self.queue.push_back(q);
                }
                if T::GROW_MARK {
                    let (tp, dp) = (*self.ts_mut(p), *self.dist_mut(p));
                    *self.ts_mut(q) = tp;
                    *self.dist_mut(q) = dp + 1;
                }
            } else if tree == other {
                return Some(if SRC { (p, d) } else { (q, d ^ 1) });
            } else if T::GROW_MARK && REHANG && wq & PARENT < TERMINAL {
                // BK's marking heuristic: re-hang q below p when p is closer to the
                // terminal by information at least as recent.
                let (tp, dp) = (*self.ts_mut(p), *self.dist_mut(p));
                if *self.ts_mut(q) <= tp && *self.dist_mut(q) > dp {
                    self.attach(q, wq, p, d);
                    *self.ts_mut(q) = tp;
                    *self.dist_mut(q) = dp + 1;
                }
            }
        }
        None
    }

    /// Pushes the bottleneck along s → … → a → b → … → t, where b is a's neighbour
    /// in direction `d` and `p` (a or b) the node whose growth found the path; nodes
    /// whose tree arc saturates become orphans. Growth goes on from p after the path,
    /// and most of its next paths share p's tree path: so that path is walked once, its
    /// room remembered (`Held`) and the flow of all of them pushed along it in one
    /// walk when p is done or the room is spent. Until then nothing reads it: only
    /// p grows, and adoption stays in the other tree (p's tree loses no arc). Where a
    /// root's terminal arc is the bottleneck, its neighbouring roots add theirs
    /// (`fan`); those of p's tree, too, change only when p's flow is. Keeping the other
    /// half of the path as well was tried: NOTES.md, `Held`.
    fn augment(&mut self, p: u32, a: u32, d: usize) {
        let b = self.layout.neighbour(a, d);
        self.count(a);
        let (mut up, mut down) = std::mem::take(&mut self.path);
        let mut m = self.rc_i(Self::arc(a, d)) as u64;
        // Only p grows while flow is held for it (see `run`).
        debug_assert!(self.held.is_none_or(|h| h.node == p));
        let held = self.held;
        let (root_s, root_t) = match held {
            None => {
                let (root_s, path_s, root_t, path_t) = self.walk_both(a, b, &mut up, &mut down);
                let source = p == a;
                let (root, room) = if source {
                    let room_s = path_s.min(self.end_room::<true>(root_s, path_s));
                    let need = m.min(room_s).min(path_t);
                    m = need.min(self.end_room::<false>(root_t, need));
                    (root_s, room_s)
                } else {
                    let room_t = path_t.min(self.end_room::<false>(root_t, path_t));
                    let need = m.min(path_s).min(room_t);
                    m = need.min(self.end_room::<true>(root_s, need));
                    (root_t, room_t)
                };
                self.held = Some(Held {
                    node: p,
                    source,
                    root,
                    room,
                    flow: 0,
                });
                (root_s, root_t)
            }
            Some(h) if h.source => {
                let (root_t, path_t) = self.walk_sink(b, &mut down);
                let need = m.min(path_t).min(h.room);
                m = need.min(self.end_room::<false>(root_t, need));
                (h.root, root_t)
            }
            Some(h) => {
                let (root_s, path_s) = self.walk_source(a, &mut up);
                let need = m.min(path_s).min(h.room);
                m = need.min(self.end_room::<true>(root_s, need));
                (root_s, h.root)
            }
        };
        let source = self.held.is_some_and(|h| h.source);
        let m32 = m as u32;
        self.push(a, b, d as u32, m32);
        if source {
            self.push_sink_side(&down, root_t, m);
        } else {
            self.push_source_side(&up, root_s, m);
        }
        self.path = (up, down);
        self.flow += m as i64;
        let h = self.held.as_mut().expect("set above");
        h.room -= m;
        h.flow += m;
        if h.room == 0 {
            self.release_held();
        }
    }

    /// Walks both tree paths from a (source tree) and b (sink tree) at once (two
    /// independent chains of loads overlap), recording their tree arcs; returns each
    /// root with the room of its tree arcs (its terminal arc is the caller's).
    fn walk_both(
        &self,
        a: u32,
        b: u32,
        up: &mut Vec<TreeArc>,
        down: &mut Vec<TreeArc>,
    ) -> (u32, u64, u32, u64) {
        let mask = T::K as u32 - 1;
        up.clear();
        down.clear();
        let (mut ms, mut mt) = (u64::MAX, u64::MAX);
        let (mut xs, mut xt) = (a, b);
        let (mut ps, mut pt) = (self.pa_of(xs), self.pa_of(xt));
        while ps < PA_NONE || pt < PA_NONE {
            if ps < PA_NONE {
                ms = ms.min(self.rc_i(ps) as u64);
                up.push((xs, ps));
                xs = ps >> T::SHIFT;
                ps = self.pa_of(xs);
            }
            if pt < PA_NONE {
                mt = mt.min(self.rc_i((xt << T::SHIFT) | ((pt & mask) ^ 1)) as u64);
                down.push((xt, pt));
                xt = pt >> T::SHIFT;
                pt = self.pa_of(xt);
            }
        }
        debug_assert!(ps == PA_TERMINAL && pt == PA_TERMINAL);
        (xs, ms, xt, mt)
    }

    /// Walks the source-tree path from `a` (arcs parent → child), recording it;
    /// returns its root and the room of its tree arcs.
    fn walk_source(&self, a: u32, up: &mut Vec<TreeArc>) -> (u32, u64) {
        up.clear();
        let mut m = u64::MAX;
        let mut x = a;
        let mut p = self.pa_of(x);
        while p < PA_NONE {
            m = m.min(self.rc_i(p) as u64);
            up.push((x, p));
            x = p >> T::SHIFT;
            p = self.pa_of(x);
        }
        (x, m)
    }

    /// Walks the sink-tree path from `b` (arcs child → parent), recording it;
    /// returns its root and the room of its tree arcs.
    fn walk_sink(&self, b: u32, down: &mut Vec<TreeArc>) -> (u32, u64) {
        let mask = T::K as u32 - 1;
        down.clear();
        let mut m = u64::MAX;
        let mut x = b;
        let mut p = self.pa_of(x);
        while p < PA_NONE {
            m = m.min(self.rc_i((x << T::SHIFT) | ((p & mask) ^ 1)) as u64);
            down.push((x, p));
            x = p >> T::SHIFT;
            p = self.pa_of(x);
        }
        (x, m)
    }

    /// Pushes `m` along the recorded source-tree path into its root's terminal arc;
    /// the child end of a saturated arc, or the root, becomes an orphan.
    fn push_source_side(&mut self, up: &[TreeArc], root: u32, m: u64) {
        let mask = T::K as u32 - 1;
        let mut cut = None;
        for (i, &(x, p)) in up.iter().enumerate() {
            if self.push(p >> T::SHIFT, x, p & mask, m as u32) {
                self.orphan_front(x);
                cut = Some(i);
            }
        }
        let tr = self.tr_mut(root);
        let take = m.min(*tr as u64);
        *tr -= take as i64;
        if *tr == 0 {
            self.fan::<true>(root, m - take);
            self.orphan_front(root);
        } else if let Some(i) = cut {
            self.mark_intact(&up[i + 1..], root);
        }
    }

    /// Pushes `m` along the recorded sink-tree path and its root's terminal arc.
    fn push_sink_side(&mut self, down: &[TreeArc], root: u32, m: u64) {
        let mask = T::K as u32 - 1;
        let mut cut = None;
        for (i, &(x, p)) in down.iter().enumerate() {
            if self.push(x, p >> T::SHIFT, (p & mask) ^ 1, m as u32) {
                self.orphan_front(x);
                cut = Some(i);
            }
        }
        let tr = self.tr_mut(root);
        let take = m.min(tr.unsigned_abs());
        *tr += take as i64;
        if *tr == 0 {
            self.fan::<false>(root, m - take);
            self.orphan_front(root);
        } else if let Some(i) = cut {
            self.mark_intact(&down[i + 1..], root);
        }
    }

    /// What root `r` of the source tree (`SRC`) or the sink tree can pass of `need`
    /// through its terminal arc and, where that is not enough, through neighbouring
    /// roots of its tree (see `fan`).
    #[inline]
    fn end_room<const SRC: bool>(&self, r: u32, need: u64) -> u64 {
        let mut room = self.tr[r as usize].unsigned_abs();
        let mut bits = self.fan_arcs::<SRC>(r);
        while bits != 0 && room < need {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            room += self.fan_share::<SRC>(r, d).1;
        }
        room
    }

    /// Directions of the residual arcs a fan at root `r` can use: into `r` from
    /// the source tree's roots, out of `r` into the sink tree's.
    #[inline(always)]
    fn fan_arcs<const SRC: bool>(&self, r: u32) -> u32 {
        if SRC {
            in_mask::<T>(self.w(r))
        } else {
            out_mask::<T>(self.w(r))
        }
    }

    /// The neighbour of root `r` in direction `d` and what it can pass in a fan: its
    /// arc to (from) `r` and all but one unit of its terminal residual, where it is a
    /// root of `r`'s tree; else nothing.
    #[inline(always)]
    fn fan_share<const SRC: bool>(&self, r: u32, d: usize) -> (u32, u64) {
        let v = self.layout.neighbour(r, d);
        let t = self.tr[v as usize];
        let t = if SRC { t } else { -t };
        if t <= 1 {
            return (v, 0);
        }
        let arc = if SRC {
            Self::arc(v, d ^ 1)
        } else {
            Self::arc(r, d)
        };
        (v, (self.rc_i(arc) as u64).min(t as u64 - 1))
    }

    /// Passes `rest`, what a path takes from (source tree) or brings to (sink tree)
    /// root `r` beyond its own terminal arc, through neighbouring roots of its tree,
    /// so that a path whose bottleneck is its root's terminal arc carries more (fewer
    /// augmentations on image energies). Each keeps one unit: it stays a root, so the
    /// fan orphans nothing (emptied neighbours would be orphaned with `r`, free each
    /// other and their subtrees). Only roots have terminal residual (grown nodes are
    /// free ones, which have none), so the fan touches no tree arc. Drawing on the roots
    /// two steps out as well was tried: NOTES.md, `fan`.
    fn fan<const SRC: bool>(&mut self, r: u32, mut rest: u64) {
        let mut bits = self.fan_arcs::<SRC>(r);
        while bits != 0 && rest > 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let (v, share) = self.fan_share::<SRC>(r, d);
            let x = share.min(rest);
            if x == 0 {
                continue;
            }
            if SRC {
                self.push(v, r, (d ^ 1) as u32, x as u32);
                self.tr[v as usize] -= x as i64;
            } else {
                self.push(r, v, d as u32, x as u32);
                self.tr[v as usize] += x as i64;
            }
            rest -= x;
        }
        debug_assert_eq!(rest, 0, "fan short of its room");
    }

    /// Marks the part of a pushed path above its last saturated arc (`path`, ending
    /// below `root`) as verified for the adoption that follows: its chain to the root
    /// is intact, and the orphans' neighbours mostly hang from it, so their origin
    /// walks stop there instead of going on to the root (on 8C energies paths are
    /// long). Only where nodes keep timestamps: marking by flag costs more.
    fn mark_intact(&mut self, path: &[TreeArc], root: u32) {
        if !T::GROW_MARK {
            return;
        }
        let len = path.len() as u32;
        for (k, &(x, _)) in path.iter().enumerate() {
            self.mark(x, len - k as u32 + 1);
        }
        self.mark(root, 1);
    }

    /// Pushes the flow held back by `augment` along the grower's tree path.
    fn release_held(&mut self) {
        let Some(h) = self.held.take() else {
            return;
        };
        let (up, down) = std::mem::take(&mut self.path);
        if h.source {
            self.push_source_side(&up, h.root, h.flow);
        } else {
            self.push_sink_side(&down, h.root, h.flow);
        }
        self.path = (up, down);
    }

    /// Sends `m` along arc (x, d) to its head y, keeping both ends' saturation bits;
    /// true when the arc saturated.
    #[inline(always)]
    pub(super) fn push(&mut self, x: u32, y: u32, d: u32, m: u32) -> bool {
        let fwd = self.rc_i_mut((x << T::SHIFT) | d);
        let r = *fwd - m;
        *fwd = r;
        let back = self.rc_i_mut((y << T::SHIFT) | (d ^ 1));
        let was = *back;
        *back = was + m;
        let d = d as usize;
        if was == 0 {
            self.set(y, self.w(y) | out_bit::<T>(d ^ 1));
            self.set(x, self.w(x) | in_bit::<T>(d));
        }
        if r == 0 {
            self.set(x, self.w(x) & !out_bit::<T>(d));
            self.set(y, self.w(y) & !in_bit::<T>(d ^ 1));
        }
        r == 0
    }

    /// Makes `x` an orphan to be adopted before the ones already waiting.
    #[inline(always)]
    fn orphan_front(&mut self, x: u32) {
        self.set(x, (self.w(x) & !PARENT) | ORPHAN);
        self.set_pa(x, PA_NONE);
        self.orphans.push_front(x);
    }

    /// Makes `x` an orphan to be adopted after the ones already waiting.
    #[inline(always)]
    pub(super) fn orphan_rear(&mut self, x: u32) {
        self.set(x, (self.w(x) & !PARENT) | ORPHAN);
        self.set_pa(x, PA_NONE);
        self.orphans.push_back(x);
    }

    /// Makes `x` a root of the tree `tree`.
    #[inline(always)]
    pub(super) fn make_root(&mut self, x: u32, tree: u32) {
        self.set(x, (self.w(x) & !(TREE | PARENT)) | tree | TERMINAL);
        self.set_pa(x, PA_TERMINAL);
        if T::GROW_MARK {
            *self.ts_mut(x) = self.time;
            *self.dist_mut(x) = 1;
        }
    }

    /// Finds new parents for all orphans or frees them, then clears the marks.
    pub(super) fn adopt(&mut self) {
        while let Some(i) = self.orphans.pop_front() {
            let w = self.w(i);
            if w & PARENT != ORPHAN {
                continue;
            }
            self.count(i);
            if w & TREE == SOURCE {
                self.adopt_one::<true>(i, w);
            } else {
                self.adopt_one::<false>(i, w);
            }
        }
        self.clear_marks();
    }

    /// Clears the MARK flag of every node in `marked`.
    pub(super) fn clear_marks(&mut self) {
        for idx in 0..self.marked.len() {
            let u = self.marked[idx];
            self.set(u, self.w(u) & !MARK);
        }
        self.marked.clear();
    }

    /// Adoption of orphan `i` of the source tree (`SRC`) or the sink tree: a
    /// neighbour of the same tree with a residual arc towards `i` (away from it in the
    /// sink tree) whose chain of parents reaches the terminal becomes the parent; if
    /// none exists `i` is freed, its children become orphans and neighbours that could
    /// grow into it become active.
    fn adopt_one<const SRC: bool>(&mut self, i: u32, w: u32) {
        let mine = if SRC { SOURCE } else { SINK };
        let candidates = if SRC {
            in_mask::<T>(w)
        } else {
            out_mask::<T>(w)
        };
        let mut best: Option<(usize, u32)> = None;
        // Neighbours whose origin needs no walk (roots, nodes verified in this phase)
        // first; with first-valid adoption one of them ends the search.
        let mut walk = 0u32;
        let mut bits = candidates;
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let wj = self.w(self.layout.neighbour(i, d));
            let pc = wj & PARENT;
            if wj & TREE != mine || pc == ORPHAN || pc as usize == d ^ 1 {
                // Not in the tree, an orphan, or a child of i: no origin through them.
                continue;
            }
            let j = self.layout.neighbour(i, d);
            let marked = self.is_marked(j, wj);
            if pc == TERMINAL || marked {
                let dist = if !marked {
                    1
                } else if T::MARKING || T::GROW_MARK {
                    *self.dist_mut(j)
                } else {
                    0
                };
                if best.is_none_or(|(_, b)| dist < b) {
                    best = Some((d, dist));
                }
                if !T::MARKING {
                    break;
                }
            } else {
                walk |= 1 << d;
            }
        }
        let mut bits = if best.is_some() && !T::MARKING {
            0
        } else {
            walk
        };
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let j = self.layout.neighbour(i, d);
            if let Some(dist) = self.origin_distance(j) {
                if !T::MARKING {
                    best = Some((d, dist));
                    break;
                }
                if best.is_none_or(|(_, b)| dist < b) {
                    best = Some((d, dist));
                }
            }
        }
        if let Some((d, dist)) = best {
            let j = self.layout.neighbour(i, d);
            self.attach(i, self.w(i), j, d ^ 1);
            self.mark(i, dist + 1);
            return;
        }
        // No parent: free i.
        let w = self.w(i) & !(TREE | PARENT);
        self.set(i, w);
        let feeds = if SRC {
            in_mask::<T>(w)
        } else {
            out_mask::<T>(w)
        };
        let mut bits = in_mask::<T>(w) | out_mask::<T>(w);
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let j = self.layout.neighbour(i, d);
            let wj = self.w(j);
            if wj & TREE != mine {
                continue;
            }
            if feeds & (1 << d) != 0 {
                self.set_active(j);
            }
            if (wj & PARENT) as usize == d ^ 1 {
                self.orphan_rear(j);
            }
        }
    }

    /// Distance from `j` to its terminal along parent links, or `None` when the
    /// chain ends in an orphan. Marks the nodes of a successful walk as verified (with
    /// their distances) so later walks of this adoption phase stop there.
    #[inline]
    fn origin_distance(&mut self, j: u32) -> Option<u32> {
        let mut x = j;
        let mut dist = 0u32;
        loop {
            if self.is_marked(x, self.w(x)) {
                if T::MARKING || T::GROW_MARK {
                    dist += *self.dist_mut(x);
                }
                break;
            }
            dist += 1;
            let p = self.pa_of(x);
            if p == PA_TERMINAL {
                self.mark(x, 1);
                break;
            }
            if p == PA_NONE {
                return None;
            }
            x = p >> T::SHIFT;
        }
        let mut x = j;
        let mut dx = dist;
        while !self.is_marked(x, self.w(x)) {
            self.mark(x, dx);
            dx = dx.saturating_sub(1);
            x = self.pa_of(x) >> T::SHIFT;
        }
        Some(dist)
    }

    /// Marks `x` as verified in this adoption phase, at distance `dist` from its
    /// terminal: by timestamp where nodes have one, else by the MARK flag (remembered
    /// for clearing).
    #[inline(always)]
    pub(super) fn mark(&mut self, x: u32, dist: u32) {
        if T::GROW_MARK {
            *self.ts_mut(x) = self.time;
        } else {
            self.set(x, self.w(x) | MARK);
            self.marked.push(x);
        }
        if T::MARKING || T::GROW_MARK {
            *self.dist_mut(x) = dist;
        }
    }

    /// Whether `x` (state `w`) was verified in this adoption phase.
    #[inline(always)]
    fn is_marked(&mut self, x: u32, w: u32) -> bool {
        if T::GROW_MARK {
            *self.ts_mut(x) == self.time
        } else {
            w & MARK != 0
        }
    }

    /// Advances the clock of timestamps (one tick per augmentation); on wrap-around
    /// all timestamps restart so comparisons stay meaningful.
    pub(super) fn tick(&mut self) {
        if self.time == u32::MAX {
            for u in 0..self.st.len() as u32 {
                *self.ts_mut(u) = 0;
            }
            self.time = 0;
        }
        self.time += 1;
    }
}

#[cfg(test)]
mod tests {
    use crate::maxflow::Engine;
    use crate::maxflow::cpu::CpuEngine;
    use crate::maxflow::cpu::fixtures::line_with;

    /// Augmenting paths of a 1×41 line with 10 units on one side of the terminal
    /// pair at its middle pixel and 3 units on the other side at each of the eight
    /// pixels at either end (the middle's side feeding when `middle_feeds`).
    fn paths(middle_feeds: bool) -> u64 {
        let (mut middle, mut ends) = (vec![0; 41], vec![0; 41]);
        middle[20] = 10;
        for i in (0..8).chain(33..41) {
            ends[i] = 3;
        }
        let (source, sink) = if middle_feeds {
            (middle, ends)
        } else {
            (ends, middle)
        };
        let s = CpuEngine::new().solve(&line_with(source, sink)).unwrap();
        assert_eq!(s.flow, 10);
        s.stats.iterations
    }

    // Without the fan each path carries the 3 units of one end root: 4 paths. With
    // it the first takes 3 + 2 (its root's neighbour keeps 1), the next 1 + 2, ...

    #[test]
    fn a_path_into_a_weak_sink_root_goes_on_into_its_neighbour_root() {
        assert_eq!(paths(true), 3);
    }

    #[test]
    fn a_path_out_of_a_weak_source_root_draws_on_its_neighbour_root() {
        assert_eq!(paths(false), 3);
    }
}

//! The Boykov–Kolmogorov loop on the compact grid: grow the source and sink search
//! trees from active nodes, augment along the path where they meet, adopt the
//! orphans the augmentation left, until no active node remains.

use super::solver::Solver;
use super::state::{
    ACTIVE, FREE, MARK, ORPHAN, PARENT, SINK, SOURCE, TERMINAL, TREE, Topology, in_bit, in_mask,
    out_bit, out_mask,
};

impl<T: Topology> Solver<T> {
    /// Runs BK to the maximum flow from the current residual graph and trees. On
    /// return the source tree is the set of nodes reachable from s.
    pub(super) fn run(&mut self) {
        let mut current: Option<u32> = None;
        loop {
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
                self.grow::<true>(p, w)
            } else {
                self.grow::<false>(p, w)
            };
            self.count(p);
            if let Some((a, d)) = hit {
                // Keep growing from p after this path; the flag keeps it off the queue.
                self.set(p, self.w(p) | ACTIVE);
                current = Some(p);
                self.augment(a, d);
                self.adopt();
                self.iterations += 1;
            }
        }
        #[cfg(debug_assertions)]
        self.check_invariants();
    }

    /// Next node to grow: first the sweep over nodes flagged in bulk, then the queue.
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
            self.queue.push_back(u);
        }
    }

    /// Grows the tree of `p` (source tree when `SRC`) over the arcs with residual
    /// capacity; returns the arc (a, d), a in S and its neighbour in T, where the
    /// trees touch.
    #[inline(always)]
    fn grow<const SRC: bool>(&mut self, p: u32, w: u32) -> Option<(u32, usize)> {
        let (mine, other) = if SRC { (SOURCE, SINK) } else { (SINK, SOURCE) };
        let mut bits = if SRC { out_mask::<T>(w) } else { in_mask::<T>(w) };
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let q = self.layout.neighbour(p, d);
            let wq = self.w(q);
            let tree = wq & TREE;
            if tree == FREE {
                self.set(q, wq | mine | (d as u32 ^ 1) | ACTIVE);
                if wq & ACTIVE == 0 {
                    self.queue.push_back(q);
                }
            } else if tree == other {
                return Some(if SRC { (p, d) } else { (q, d ^ 1) });
            }
        }
        None
    }

    /// Pushes the bottleneck along s → … → a → b → … → t, where b is a's neighbour
    /// in direction `d`; nodes whose parent arc saturates become orphans.
    fn augment(&mut self, a: u32, d: usize) {
        let k = T::K;
        let b = self.layout.neighbour(a, d);
        self.count(a);
        let mut m = self.rc[a as usize * k + d] as u64;
        // Source side: from a up to its root.
        let mut x = a;
        loop {
            let pc = (self.w(x) & PARENT) as usize;
            if pc == TERMINAL as usize {
                m = m.min(self.tr[x as usize] as u64);
                break;
            }
            let y = self.layout.neighbour(x, pc);
            m = m.min(self.rc[y as usize * k + (pc ^ 1)] as u64);
            x = y;
        }
        // Sink side: from b down to its root.
        let mut x = b;
        loop {
            let pc = (self.w(x) & PARENT) as usize;
            if pc == TERMINAL as usize {
                m = m.min(self.tr[x as usize].unsigned_abs());
                break;
            }
            m = m.min(self.rc[x as usize * k + pc] as u64);
            x = self.layout.neighbour(x, pc);
        }
        let m32 = m as u32;
        self.push(a, d, m32);
        let mut x = a;
        loop {
            let pc = (self.w(x) & PARENT) as usize;
            if pc == TERMINAL as usize {
                self.tr[x as usize] -= m as i64;
                if self.tr[x as usize] == 0 {
                    self.orphan_front(x);
                }
                break;
            }
            let y = self.layout.neighbour(x, pc);
            if self.push(y, pc ^ 1, m32) {
                self.orphan_front(x);
            }
            x = y;
        }
        let mut x = b;
        loop {
            let pc = (self.w(x) & PARENT) as usize;
            if pc == TERMINAL as usize {
                self.tr[x as usize] += m as i64;
                if self.tr[x as usize] == 0 {
                    self.orphan_front(x);
                }
                break;
            }
            let y = self.layout.neighbour(x, pc);
            if self.push(x, pc, m32) {
                self.orphan_front(x);
            }
            x = y;
        }
        self.flow += m as i64;
    }

    /// Sends `m` along arc (x, d), keeping both ends' saturation bits; true when the
    /// arc saturated.
    #[inline(always)]
    fn push(&mut self, x: u32, d: usize, m: u32) -> bool {
        let k = T::K;
        let y = self.layout.neighbour(x, d);
        let i = x as usize * k + d;
        let j = y as usize * k + (d ^ 1);
        let r = self.rc[i] - m;
        self.rc[i] = r;
        let back = self.rc[j];
        self.rc[j] = back + m;
        let (mut wx, mut wy) = (self.w(x), self.w(y));
        if back == 0 {
            wy |= out_bit::<T>(d ^ 1);
            wx |= in_bit::<T>(d);
        }
        if r == 0 {
            wx &= !out_bit::<T>(d);
            wy &= !in_bit::<T>(d ^ 1);
        }
        self.set(x, wx);
        self.set(y, wy);
        r == 0
    }

    /// Makes `x` an orphan to be adopted before the ones already waiting.
    #[inline(always)]
    fn orphan_front(&mut self, x: u32) {
        self.set(x, (self.w(x) & !PARENT) | ORPHAN);
        self.orphans.push_front(x);
    }

    /// Makes `x` an orphan to be adopted after the ones already waiting.
    #[inline(always)]
    pub(super) fn orphan_rear(&mut self, x: u32) {
        self.set(x, (self.w(x) & !PARENT) | ORPHAN);
        self.orphans.push_back(x);
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
        let mut bits = if SRC { in_mask::<T>(w) } else { out_mask::<T>(w) };
        let mut best: Option<(usize, u32)> = None;
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let j = self.layout.neighbour(i, d);
            let wj = self.w(j);
            if wj & TREE != mine || wj & PARENT == ORPHAN {
                continue;
            }
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
            self.set(i, (self.w(i) & !PARENT) | d as u32);
            self.mark(i, dist + 1);
            return;
        }
        // No parent: free i.
        let w = self.w(i) & !(TREE | PARENT);
        self.set(i, w);
        let feeds = if SRC { in_mask::<T>(w) } else { out_mask::<T>(w) };
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
    fn origin_distance(&mut self, j: u32) -> Option<u32> {
        let mut x = j;
        let mut dist = 0u32;
        loop {
            let wx = self.w(x);
            if wx & MARK != 0 {
                if T::MARKING {
                    dist += self.dist[x as usize];
                }
                break;
            }
            let pc = wx & PARENT;
            dist += 1;
            if pc == TERMINAL {
                self.mark(x, 1);
                break;
            }
            if pc == ORPHAN {
                return None;
            }
            x = self.layout.neighbour(x, pc as usize);
        }
        let mut x = j;
        let mut dx = dist;
        loop {
            let wx = self.w(x);
            if wx & MARK != 0 {
                break;
            }
            self.mark(x, dx);
            dx = dx.saturating_sub(1);
            x = self.layout.neighbour(x, (wx & PARENT) as usize);
        }
        Some(dist)
    }

    /// Sets `x`'s MARK flag (remembering it for clearing) with distance `dist`.
    #[inline(always)]
    pub(super) fn mark(&mut self, x: u32, dist: u32) {
        self.set(x, self.w(x) | MARK);
        self.marked.push(x);
        if T::MARKING {
            self.dist[x as usize] = dist;
        }
    }
}

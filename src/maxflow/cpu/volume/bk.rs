//! The Boykov–Kolmogorov loop on the blocked volume: grow the source and sink search
//! trees from active nodes, augment along the path where they meet, adopt the orphans
//! the augmentation left (BK's timestamps and distances pick the parent closest to
//! the terminal), until no active node remains. The same loop as the 2D engine's
//! `bk.rs`, with its fan (a path whose root's terminal arc is the bottleneck also draws
//! on neighbouring roots) but not its held flow.

use super::hood::{ACTIVE, FREE, Hood, SINK, SOURCE, TREE, in_bit, in_mask, out_bit, out_mask};
use super::solver::{PA_NONE, PA_TERMINAL, Solver, TreeArc};

impl<H: Hood> Solver<H> {
    /// Runs BK to the maximum flow from the current residual graph and trees. On
    /// return the source tree is the set of nodes reachable from s: BK stops only when
    /// no node is active, and a source node goes passive only once every residual arc
    /// out of it leads into the source tree.
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
            if let Some((a, d)) = hit {
                // Keep growing from p after this path; the flag keeps it off the queue.
                self.set(p, self.w(p) | ACTIVE);
                current = Some(p);
                self.tick();
                self.augment(a, d);
                self.adopt();
                self.iterations += 1;
            }
        }
    }

    /// Next node to grow, from the queue.
    fn next_active(&mut self) -> Option<u32> {
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
    fn set_active(&mut self, u: u32) {
        let w = self.w(u);
        if w & ACTIVE == 0 {
            self.set(u, w | ACTIVE);
            self.queue.push_back(u);
        }
    }

    /// Grows the tree of `p` (the source tree when `SRC`) over its residual arcs;
    /// returns the arc (a, d), a in S and its neighbour in T, where the trees touch.
    /// Where `Hood::REHANG`, same-tree neighbours farther from the terminal by
    /// information at least as recent are re-hung below p (BK's distance heuristic).
    #[inline(always)]
    fn grow<const SRC: bool>(&mut self, p: u32, w: u64) -> Option<(u32, usize)> {
        let (mine, other) = if SRC { (SOURCE, SINK) } else { (SINK, SOURCE) };
        let mut bits = if SRC {
            out_mask::<H>(w)
        } else {
            in_mask::<H>(w)
        };
        let [tp, dp] = *self.mark(p);
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let q = self.layout.neighbour(p, d);
            let wq = self.w(q);
            let tree = wq & TREE;
            if tree == FREE {
                self.set(q, wq | mine | ACTIVE);
                self.set_pa(q, Self::arc(p, d));
                *self.mark(q) = [tp, dp + 1];
                if wq & ACTIVE == 0 {
                    self.queue.push_back(q);
                }
            } else if tree == other {
                return Some(if SRC { (p, d) } else { (q, d ^ 1) });
            } else if H::REHANG {
                let [tq, dq] = *self.mark(q);
                if tq <= tp && dq > dp {
                    self.set_pa(q, Self::arc(p, d));
                    *self.mark(q) = [tp, dp + 1];
                }
            }
        }
        None
    }

    /// Pushes the bottleneck along s → … → a → b → … → t, where b is a's neighbour in
    /// direction `d`; nodes whose tree arc saturates, and roots whose terminal arc
    /// does, become orphans. Both tree paths are walked once, together
    /// (`walk_both`), and the push reads them from the record.
    fn augment(&mut self, a: u32, d: usize) {
        let b = self.layout.neighbour(a, d);
        let (mut up, mut down) = std::mem::take(&mut self.path);
        let (root_s, ms, root_t, mt) = self.walk_both(a, b, &mut up, &mut down);
        let mut m = (self.rc(Self::arc(a, d)) as u64).min(ms).min(mt);
        m = m.min(self.end_room::<true>(root_s, m));
        m = m.min(self.end_room::<false>(root_t, m));
        let m32 = m as u32;
        self.push(a, b, d, m32);
        let k = H::K as u32;
        for &(x, p) in &up {
            if self.push(p / k, x, (p % k) as usize, m32) {
                self.orphan_front(x);
            }
        }
        for &(x, p) in &down {
            if self.push(x, p / k, (p % k) as usize ^ 1, m32) {
                self.orphan_front(x);
            }
        }
        self.path = (up, down);
        self.end_take::<true>(root_s, m);
        self.end_take::<false>(root_t, m);
    }

    /// Walks the tree paths from a (source tree) and b (sink tree) in one loop, so
    /// that the two chains of parent loads overlap, recording each node with its tree
    /// arc; returns each root with the least residual of its path's tree arcs.
    fn walk_both(
        &self,
        a: u32,
        b: u32,
        up: &mut Vec<TreeArc>,
        down: &mut Vec<TreeArc>,
    ) -> (u32, u64, u32, u64) {
        let k = H::K as u32;
        up.clear();
        down.clear();
        let (mut ms, mut mt) = (u64::MAX, u64::MAX);
        let (mut xs, mut xt) = (a, b);
        let (mut ps, mut pt) = (self.pa(xs), self.pa(xt));
        while ps < PA_NONE || pt < PA_NONE {
            if ps < PA_NONE {
                ms = ms.min(self.rc(ps) as u64);
                up.push((xs, ps));
                xs = ps / k;
                ps = self.pa(xs);
            }
            if pt < PA_NONE {
                mt = mt.min(self.rc(Self::arc(xt, (pt % k) as usize ^ 1)) as u64);
                down.push((xt, pt));
                xt = pt / k;
                pt = self.pa(xt);
            }
        }
        debug_assert!(ps == PA_TERMINAL && pt == PA_TERMINAL);
        (xs, ms, xt, mt)
    }

    /// Takes `m` through the terminal arc of root `r` of the source tree (`SRC`) or
    /// the sink tree, the part beyond its residual through neighbouring roots (`fan`);
    /// a root whose terminal arc saturates becomes an orphan.
    fn end_take<const SRC: bool>(&mut self, r: u32, m: u64) {
        let own = self.tr[r as usize].unsigned_abs();
        let take = m.min(own);
        *self.tr_mut(r) += if SRC { -(take as i64) } else { take as i64 };
        if m > take {
            self.fan::<SRC>(r, m - take);
        }
        if take == own {
            self.orphan_front(r);
        }
    }

    /// What root `r` of the source tree (`SRC`) or the sink tree can pass of `need`
    /// through its terminal arc and, where that is not enough, through neighbouring
    /// roots of its tree (`fan`).
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

    /// Directions of the residual arcs a fan at root `r` can use: into `r` from the
    /// source tree's roots, out of `r` into the sink tree's.
    #[inline(always)]
    fn fan_arcs<const SRC: bool>(&self, r: u32) -> u64 {
        let w = self.w(r);
        if SRC {
            in_mask::<H>(w)
        } else {
            out_mask::<H>(w)
        }
    }

    /// The neighbour of root `r` in direction `d` and what it can pass in a fan: its
    /// arc to (from) `r` and all but one unit of its terminal residual, where it is a
    /// root of `r`'s tree (only roots have terminal residual); else nothing.
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
        (v, (self.rc(arc) as u64).min(t as u64 - 1))
    }

    /// Passes `rest`, what a path takes from (source tree) or brings to (sink tree)
    /// root `r` beyond its own terminal arc, through neighbouring roots of its tree, as
    /// the 2D engine's `fan`: a path whose bottleneck is its root's terminal arc
    /// carries more. Each neighbour keeps one unit, so it stays a root and the fan
    /// orphans nothing.
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
                self.push(v, r, d ^ 1, x as u32);
                self.tr[v as usize] -= x as i64;
            } else {
                self.push(r, v, d, x as u32);
                self.tr[v as usize] += x as i64;
            }
            rest -= x;
        }
        debug_assert_eq!(rest, 0, "fan short of its room");
    }

    /// Sends `m` along arc (x, d) to its head y, keeping both ends' saturation bits;
    /// true when the arc saturated.
    #[inline(always)]
    pub(super) fn push(&mut self, x: u32, y: u32, d: usize, m: u32) -> bool {
        let fwd = self.rc_mut(Self::arc(x, d));
        let r = *fwd - m;
        *fwd = r;
        let back = self.rc_mut(Self::arc(y, d ^ 1));
        let was = *back;
        *back = was + m;
        if was == 0 {
            self.set(y, self.w(y) | out_bit(d ^ 1));
            self.set(x, self.w(x) | in_bit::<H>(d));
        }
        if r == 0 {
            self.set(x, self.w(x) & !out_bit(d));
            self.set(y, self.w(y) & !in_bit::<H>(d ^ 1));
        }
        r == 0
    }

    /// Makes `x` an orphan to be adopted before the ones already waiting.
    #[inline(always)]
    fn orphan_front(&mut self, x: u32) {
        self.set_pa(x, PA_NONE);
        self.orphans.push_front(x);
    }

    /// Makes `x` an orphan to be adopted after the ones already waiting.
    #[inline(always)]
    fn orphan_rear(&mut self, x: u32) {
        self.set_pa(x, PA_NONE);
        self.orphans.push_back(x);
    }

    /// Finds new parents for all orphans or frees them.
    fn adopt(&mut self) {
        while let Some(i) = self.orphans.pop_front() {
            let w = self.w(i);
            if self.pa(i) != PA_NONE || w & TREE == FREE {
                continue;
            }
            if w & TREE == SOURCE {
                self.adopt_one::<true>(i, w);
            } else {
                self.adopt_one::<false>(i, w);
            }
        }
    }

    /// Adoption of orphan `i` of the source tree (`SRC`) or the sink tree: of the
    /// neighbours in the same tree with a residual arc towards `i` (away from it in
    /// the sink tree) whose chain of parents reaches the terminal, the one closest to
    /// it becomes the parent; if there is none, `i` is freed, its children become
    /// orphans and the neighbours that could grow into it become active.
    fn adopt_one<const SRC: bool>(&mut self, i: u32, w: u64) {
        let mine = if SRC { SOURCE } else { SINK };
        let feeds = if SRC {
            in_mask::<H>(w)
        } else {
            out_mask::<H>(w)
        };
        let mut best: Option<(usize, u32)> = None;
        let mut bits = feeds;
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let j = self.layout.neighbour(i, d);
            if self.w(j) & TREE != mine || self.pa(j) == PA_NONE {
                continue;
            }
            if let Some(dist) = self.origin_distance(j)
                && best.is_none_or(|(_, b)| dist < b)
            {
                best = Some((d, dist));
            }
        }
        if let Some((d, dist)) = best {
            let j = self.layout.neighbour(i, d);
            self.set_pa(i, Self::arc(j, d ^ 1));
            *self.mark(i) = [self.time, dist + 1];
            return;
        }
        self.set(i, w & !TREE);
        let mut bits = in_mask::<H>(w) | out_mask::<H>(w);
        while bits != 0 {
            let d = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            let j = self.layout.neighbour(i, d);
            if self.w(j) & TREE != mine {
                continue;
            }
            if feeds & (1 << d) != 0 {
                self.set_active(j);
            }
            if self.pa(j) == Self::arc(i, d) {
                self.orphan_rear(j);
            }
        }
    }

    /// Distance from `j` to its terminal along parent links, or `None` when the chain
    /// ends in an orphan. Marks the nodes of a successful walk as verified at this
    /// time, with their distances, so later walks stop there.
    fn origin_distance(&mut self, j: u32) -> Option<u32> {
        let k = H::K as u32;
        let time = self.time;
        let mut x = j;
        let mut dist = 0u32;
        loop {
            let [tx, dx] = *self.mark(x);
            if tx == time {
                dist += dx;
                break;
            }
            dist += 1;
            match self.pa(x) {
                PA_TERMINAL => {
                    *self.mark(x) = [time, 1];
                    break;
                }
                PA_NONE => return None,
                p => x = p / k,
            }
        }
        let mut x = j;
        let mut dx = dist;
        while self.mark(x)[0] != time {
            *self.mark(x) = [time, dx];
            dx -= 1;
            x = self.pa(x) / k;
        }
        Some(dist)
    }

    /// Advances the clock of timestamps; on wrap-around all timestamps restart so
    /// comparisons stay meaningful.
    fn tick(&mut self) {
        if self.time == u32::MAX {
            self.marks.iter_mut().for_each(|m| m[0] = 0);
            self.time = 0;
        }
        self.time += 1;
    }
}

//! The solver's work queues (growth queue, orphan list): a double-ended ring of node
//! indices whose capacity is a power of two, so that a push or a pop is one store or
//! load and a masked index (`VecDeque` spends several times that on its bounds and
//! wrap-around arithmetic, and BK pushes and pops once per node it reaches).

/// A double-ended queue of `u32` node indices.
#[derive(Debug, Default)]
pub(super) struct Ring {
    /// Ring storage; its length is zero or a power of two.
    buf: Vec<u32>,
    /// Position of the first entry (wrapping; `& mask` indexes `buf`).
    head: usize,
    /// Position after the last entry (wrapping).
    tail: usize,
}

impl Ring {
    /// Appends `u` at the back.
    #[inline(always)]
    pub(super) fn push_back(&mut self, u: u32) {
        self.reserve_one();
        let i = self.tail & (self.buf.len() - 1);
        // SAFETY: `buf.len()` is a power of two after `reserve_one`, so `i` indexes it.
        unsafe { *self.buf.get_unchecked_mut(i) = u };
        self.tail = self.tail.wrapping_add(1);
    }

    /// Puts `u` in front of every entry.
    #[inline(always)]
    pub(super) fn push_front(&mut self, u: u32) {
        self.reserve_one();
        self.head = self.head.wrapping_sub(1);
        let i = self.head & (self.buf.len() - 1);
        // SAFETY: as in `push_back`.
        unsafe { *self.buf.get_unchecked_mut(i) = u };
    }

    /// Removes and returns the first entry.
    #[inline(always)]
    pub(super) fn pop_front(&mut self) -> Option<u32> {
        if self.head == self.tail {
            return None;
        }
        let i = self.head & (self.buf.len() - 1);
        // SAFETY: the ring holds an entry, so `buf` is a power of two long.
        let u = unsafe { *self.buf.get_unchecked(i) };
        self.head = self.head.wrapping_add(1);
        Some(u)
    }

    /// Empties the ring, keeping its storage.
    pub(super) fn clear(&mut self) {
        self.head = 0;
        self.tail = 0;
    }

    /// Entries the storage holds without growing.
    pub(super) fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// Makes room for one more entry.
    #[inline(always)]
    fn reserve_one(&mut self) {
        if self.tail.wrapping_sub(self.head) == self.buf.len() {
            self.grow();
        }
    }

    /// Doubles the storage (at least 64 entries), moving the entries to its start.
    #[cold]
    fn grow(&mut self) {
        let len = self.tail.wrapping_sub(self.head);
        let mut buf = vec![0; (2 * self.buf.len()).max(64)];
        for (k, slot) in buf.iter_mut().take(len).enumerate() {
            *slot = self.buf[self.head.wrapping_add(k) & (self.buf.len() - 1)];
        }
        self.buf = buf;
        self.head = 0;
        self.tail = len;
    }
}

#[cfg(test)]
mod tests {
    use super::Ring;
    use std::collections::VecDeque;

    #[test]
    fn behaves_as_a_deque_across_growth_and_wrap_around() {
        let (mut r, mut d) = (Ring::default(), VecDeque::new());
        let mut x = 1u32;
        for step in 0..30_000u32 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            // Mostly pushes early, mostly pops later: the ring grows, then wraps both ways.
            let push = if step < 15_000 { 70 } else { 40 };
            match x % 100 {
                v if v < push / 2 => {
                    r.push_front(step);
                    d.push_front(step);
                }
                v if v < push => {
                    r.push_back(step);
                    d.push_back(step);
                }
                _ => assert_eq!(r.pop_front(), d.pop_front()),
            }
        }
        while let Some(v) = d.pop_front() {
            assert_eq!(r.pop_front(), Some(v));
        }
        assert_eq!(r.pop_front(), None);
        r.push_front(7);
        r.clear();
        assert_eq!(r.pop_front(), None);
    }
}

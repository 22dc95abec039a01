//! Huge pages under the large arrays that are read at scattered places every frame.
//!
//! The solver's residual graph is megabytes and its search reads it node by node across
//! the frame; with 4 KiB pages most of those reads also miss the address translation
//! cache. Linux backs memory with 2 MiB pages where the program asks for them
//! (`madvise`, the default policy of most distributions): the whole huge pages inside
//! an array's allocation are asked for before it is first written. Elsewhere, and where
//! the kernel declines, the pages stay small; nothing else changes.

/// Bytes in one huge page (x86-64 and aarch64 Linux with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Asks for huge pages under the whole huge pages that `v`'s allocation (its capacity)
/// spans: a hint, taken before the memory is first touched.
pub(crate) fn advise<V>(v: &mut Vec<V>) {
    let bytes = v.capacity() * size_of::<V>();
    let start = v.as_mut_ptr() as usize;
    let (first, end) = (start.next_multiple_of(HUGE_PAGE), start + bytes);
    if end <= first || end - first < HUGE_PAGE {
        return;
    }
    let len = (end - first) / HUGE_PAGE * HUGE_PAGE;
    #[cfg(target_os = "linux")]
    // SAFETY: `first..first + len` lies inside `v`'s allocation, which stays where it
    // is while this runs; the advice changes how it is backed, never its contents.
    unsafe {
        libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
    #[cfg(not(target_os = "linux"))]
    let _ = len;
}

/// `v.resize(len, value)`, with huge pages asked for first where it allocates.
pub(crate) fn resize<V: Clone>(v: &mut Vec<V>, len: usize, value: V) {
    if len > v.capacity() {
        v.reserve_exact(len - v.len());
        advise(v);
    }
    v.resize(len, value);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn advised_arrays_keep_their_contents() {
        let mut v: Vec<u32> = Vec::with_capacity(3 * HUGE_PAGE / 4);
        advise(&mut v);
        v.extend(0..(3 * HUGE_PAGE / 4) as u32);
        advise(&mut v);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u32));
        let mut small = vec![7u8; 100];
        advise(&mut small);
        assert_eq!(small, vec![7u8; 100]);
    }
}

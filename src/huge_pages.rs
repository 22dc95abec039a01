//! Huge pages under the large arrays that are read at scattered places every frame.
//!
//! The solver's residual graph is megabytes and its search reads it node by node across
//! the frame; with 4 KiB pages most of those reads also miss the address translation
//! cache. Linux backs memory with 2 MiB pages where the program asks for them
//! (`madvise`, the default policy of most distributions): the whole huge pages inside
//! an array's allocation are asked for before it is first written. Elsewhere, and where
//! the kernel declines, the pages stay small; nothing else changes.

use std::ops::Range;

/// Bytes in one huge page (x86-64 and aarch64 Linux with 4 KiB base pages).
const HUGE_PAGE: usize = 2 << 20;

/// Asks for huge pages under the whole huge pages that `v`'s allocation (its capacity)
/// spans: a hint, taken before the memory is first touched.
pub(crate) fn advise<V>(v: &mut Vec<V>) {
    let start = v.as_mut_ptr() as usize;
    let Some(pages) = whole_pages(start, v.capacity() * size_of::<V>()) else {
        return;
    };
    #[cfg(target_os = "linux")]
    // SAFETY: `pages` lies inside `v`'s allocation (`whole_pages`), which stays where
    // it is while this runs; the advice changes how it is backed, never its contents.
    unsafe {
        libc::madvise(
            pages.start as *mut libc::c_void,
            pages.len(),
            libc::MADV_HUGEPAGE,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = pages;
}

/// `v.resize(len, value)`, with huge pages asked for first where it allocates.
pub(crate) fn resize<V: Clone>(v: &mut Vec<V>, len: usize, value: V) {
    if len > v.capacity() {
        v.reserve_exact(len - v.len());
        advise(v);
    }
    v.resize(len, value);
}

/// The addresses of the whole huge pages within `bytes` bytes from `start`; `None`
/// where there is none.
fn whole_pages(start: usize, bytes: usize) -> Option<Range<usize>> {
    let first = start.checked_next_multiple_of(HUGE_PAGE)?;
    let end = (start.checked_add(bytes)? / HUGE_PAGE) * HUGE_PAGE;
    (end > first).then_some(first..end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pages_advised_are_whole_and_inside_the_allocation() {
        let mb = 1 << 20;
        for (start, bytes) in [
            (4096, 3 * mb),
            (HUGE_PAGE, 2 * mb),
            (HUGE_PAGE + 16, 2 * mb),
            (5 * mb + 16, 9 * mb + 600_000),
            (16, mb),
            (HUGE_PAGE - 8, HUGE_PAGE + 8),
        ] {
            let whole = (start / HUGE_PAGE..=(start + bytes) / HUGE_PAGE)
                .map(|k| k * HUGE_PAGE)
                .filter(|&a| a >= start && a + HUGE_PAGE <= start + bytes)
                .count();
            match whole_pages(start, bytes) {
                Some(pages) => {
                    assert!(start <= pages.start && pages.end <= start + bytes);
                    assert_eq!(pages.start % HUGE_PAGE, 0);
                    assert_eq!(pages.len(), whole * HUGE_PAGE, "{start} {bytes}");
                }
                None => assert_eq!(whole, 0, "{start} {bytes}"),
            }
        }
        assert_eq!(whole_pages(usize::MAX - 10, 100), None);
    }

    #[test]
    fn a_resized_array_holds_what_resize_gives() {
        let mut v: Vec<u32> = vec![3; 10];
        resize(&mut v, HUGE_PAGE, 9);
        assert_eq!(v.len(), HUGE_PAGE);
        assert!(v[..10].iter().all(|&x| x == 3) && v[10..].iter().all(|&x| x == 9));
        resize(&mut v, 5, 0);
        assert_eq!(v, vec![3; 5]);
    }
}

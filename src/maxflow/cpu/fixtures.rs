//! Small problems shared by the CPU engine's unit tests.

use super::solver::Solver;
use super::state::{Topology, in_bit, out_bit};
use crate::grid::{Connectivity, Direction, GridProblem};

/// A 1×n line (n = `source.len()`) with neighbour capacities 10 both ways and the
/// given terminal capacities per pixel.
pub(super) fn line_with(source: Vec<i32>, sink: Vec<i32>) -> GridProblem {
    let n = source.len();
    let mut edges = vec![vec![0; n]; 4];
    edges[Direction::East.index()][..n - 1].fill(10);
    edges[Direction::West.index()][1..].fill(10);
    GridProblem::from_arrays(n as u32, 1, Connectivity::Four, source, sink, edges).unwrap()
}

/// A 1×`len` line as [`line_with`], s feeding the pixels in `feeds` and t pulling
/// those in `pulls`, 5 each.
pub(super) fn line(len: u32, feeds: &[usize], pulls: &[usize]) -> GridProblem {
    let n = len as usize;
    let (mut source, mut sink) = (vec![0; n], vec![0; n]);
    feeds.iter().for_each(|&i| source[i] = 5);
    pulls.iter().for_each(|&i| sink[i] = 5);
    line_with(source, sink)
}

/// A `w`×`h` grid of connectivity `c` whose capacities follow from `seed`: neighbour
/// arcs 0–19 (a quarter of them zero), and on each pixel s only, t only, both or
/// neither, 1–40 each.
pub(super) fn random_grid(seed: u64, w: u32, h: u32, c: Connectivity) -> GridProblem {
    let n = (w * h) as usize;
    // SplitMix64
    let mut state = seed;
    let mut next = |m: u64| {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % m
    };
    let probe = GridProblem::zeros(w, h, c).unwrap();
    let edges = (c.directions().iter())
        .map(|&d| {
            (0..n as u32)
                .map(|i| {
                    let inside = probe.neighbour(i % w, i / w, d).is_some();
                    let cap = next(20).saturating_sub(5) as i32;
                    if inside { cap } else { 0 }
                })
                .collect()
        })
        .collect();
    let (mut source, mut sink) = (vec![0; n], vec![0; n]);
    for i in 0..n {
        let kind = next(4);
        if kind == 0 || kind == 2 {
            source[i] = 1 + next(40) as i32;
        }
        if kind == 1 || kind == 2 {
            sink[i] = 1 + next(40) as i32;
        }
    }
    GridProblem::from_arrays(w, h, c, source, sink, edges).unwrap()
}

/// Every node's in and out bits say whether its arcs in and out have residual.
pub(super) fn bits_follow_residuals<T: Topology>(s: &Solver<T>) {
    let (w, h) = (s.layout.width() as i32, s.layout.height() as i32);
    for (y, x) in (0..h).flat_map(|y| (0..w).map(move |x| (y, x))) {
        let u = s.layout.index(x as u32, y as u32);
        for (d, dir) in Direction::ALL[..T::K].iter().enumerate() {
            let (nx, ny) = (x + dir.offset().0, y + dir.offset().1);
            let word = T::get(s.st[u as usize]);
            let out = s.rc[u as usize * T::K + d] > 0;
            assert_eq!(word & out_bit::<T>(d) != 0, out, "({x}, {y}) out {d}");
            if (0..w).contains(&nx) && (0..h).contains(&ny) {
                let v = s.layout.neighbour(u, d);
                let inn = s.rc[v as usize * T::K + (d ^ 1)] > 0;
                assert_eq!(word & in_bit::<T>(d) != 0, inn, "({x}, {y}) in {d}");
            }
        }
    }
}

/// The solver `make(threads)` builds on one thread, checked to equal (as `view` sees
/// them) those it builds on 2, 3 and 8: passes over bands must not depend on how many
/// threads ran them.
pub(super) fn on_any_thread_count<T: Topology, V: PartialEq + std::fmt::Debug>(
    make: impl Fn(usize) -> Solver<T>,
    view: impl Fn(&Solver<T>) -> V,
    what: &str,
) -> Solver<T> {
    let alone = make(1);
    for threads in [2, 3, 8] {
        assert_eq!(
            view(&make(threads)),
            view(&alone),
            "{what} on {threads} threads"
        );
    }
    alone
}

/// The state words and the capacities kept for updates: what every banded pass writes.
pub(super) fn words_and_kept<T: Topology>(
    s: &Solver<T>,
) -> impl PartialEq + std::fmt::Debug + use<T> {
    let words: Vec<u32> = s.st.iter().map(|&w| T::get(w)).collect();
    let kept = (s.kept_fwd.clone(), s.kept_sym.clone());
    (words, kept, s.kept_td.clone(), s.kept_min.clone())
}

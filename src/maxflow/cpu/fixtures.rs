//! Small problems shared by the CPU engine's unit tests.

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

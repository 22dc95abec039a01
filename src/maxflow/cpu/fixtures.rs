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

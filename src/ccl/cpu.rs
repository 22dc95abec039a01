//! Union–find labelling on the CPU by runs: each row is cut into runs of equal
//! values, a run is united with the runs of the row above that touch it and hold the
//! same value (overlapping columns; one column further either way 8-connected),
//! linking the later run under the earlier so that every root is its component's
//! first run, whose first pixel is the component's smallest index; then each run's
//! pixels get that index. A mask's rows are a few runs each, so the unions are few
//! and the pixels are only read once and written once.

use super::{CclError, Labeller, check_input};
use crate::grid::Connectivity;

/// The CPU labeller; keeps its run buffers from call to call.
#[derive(Clone, Debug, Default)]
pub struct CpuLabeller {
    runs: Vec<Run>,
    /// Per row, where its runs start in `runs` (and the end, last).
    rows: Vec<usize>,
    parent: Vec<u32>,
}

impl CpuLabeller {
    /// A CPU labeller.
    pub fn new() -> Self {
        Self::default()
    }
}

/// Columns `start..end` of a row holding `value`; `first` is the row-major index of
/// its first pixel.
#[derive(Clone, Copy, Debug)]
struct Run {
    start: u32,
    end: u32,
    first: u32,
    value: u8,
}

/// Root of `p` with path halving; every parent index is ≤ its child's.
fn find(parent: &mut [u32], mut p: u32) -> u32 {
    while parent[p as usize] != p {
        let grand = parent[parent[p as usize] as usize];
        parent[p as usize] = grand;
        p = grand;
    }
    p
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let ra = find(parent, a);
    let rb = find(parent, b);
    if ra < rb {
        parent[rb as usize] = ra;
    } else if rb < ra {
        parent[ra as usize] = rb;
    }
}

/// Appends the runs of `row`, whose first pixel has row-major index `at`, to `runs`.
fn push_runs(row: &[u8], at: u32, runs: &mut Vec<Run>) {
    let mut start = 0;
    while start < row.len() {
        let value = row[start];
        let len = row[start..].iter().take_while(|&&v| v == value).count();
        runs.push(Run {
            start: start as u32,
            end: (start + len) as u32,
            first: at + start as u32,
            value,
        });
        start += len;
    }
}

impl CpuLabeller {
    /// Unites the runs of ids `below` (a row) with the runs of ids `above` (the row
    /// above it) they touch and share a value with; `reach` widens a run by that many
    /// columns each way (1: diagonal neighbours).
    fn unite_rows(&mut self, above: (usize, usize), below: (usize, usize), reach: u32) {
        // the first run above that can still touch the current run below
        let mut first = above.0;
        for b in below.0..below.1 {
            let rb = self.runs[b];
            while first < above.1 && self.runs[first].end + reach <= rb.start {
                first += 1;
            }
            let mut a = first;
            while a < above.1 && self.runs[a].start < rb.end + reach {
                if self.runs[a].value == rb.value {
                    union(&mut self.parent, a as u32, b as u32);
                }
                a += 1;
            }
        }
    }
}

impl Labeller for CpuLabeller {
    fn on_gpu(&self) -> bool {
        false
    }

    fn label(
        &mut self,
        values: &[u8],
        width: u32,
        height: u32,
        connectivity: Connectivity,
        labels: &mut Vec<u32>,
    ) -> Result<(), CclError> {
        let n = check_input(values, width, height)?;
        let w = width as usize;
        let reach = u32::from(connectivity == Connectivity::Eight);
        self.runs.clear();
        let mut rows = std::mem::take(&mut self.rows);
        rows.clear();
        for (y, row) in values.chunks_exact(w).enumerate() {
            rows.push(self.runs.len());
            push_runs(row, (y * w) as u32, &mut self.runs);
        }
        rows.push(self.runs.len());
        self.parent.clear();
        self.parent.extend(0..self.runs.len() as u32);
        for y in 1..height as usize {
            self.unite_rows((rows[y - 1], rows[y]), (rows[y], rows[y + 1]), reach);
        }
        labels.clear();
        labels.resize(n, 0);
        for y in 0..height as usize {
            for r in rows[y]..rows[y + 1] {
                let root = find(&mut self.parent, r as u32) as usize;
                let label = self.runs[root].first;
                let run = self.runs[r];
                labels[y * w + run.start as usize..y * w + run.end as usize].fill(label);
            }
        }
        self.rows = rows;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(values: &[u8], w: u32, h: u32, c: Connectivity) -> Vec<u32> {
        let mut out = Vec::new();
        CpuLabeller::new().label(values, w, h, c, &mut out).unwrap();
        out
    }

    #[test]
    fn diagonal_touch_depends_on_connectivity() {
        #[rustfmt::skip]
        let v = [
            1, 0, 0,
            0, 1, 0,
            0, 0, 1,
        ];
        assert_eq!(
            label(&v, 3, 3, Connectivity::Eight),
            vec![0, 1, 1, 1, 0, 1, 1, 1, 0]
        );
        assert_eq!(
            label(&v, 3, 3, Connectivity::Four),
            vec![0, 1, 1, 3, 4, 1, 3, 3, 8]
        );
    }

    #[test]
    fn u_shape_merges_to_the_smallest_index() {
        #[rustfmt::skip]
        let v = [
            1, 0, 1,
            1, 0, 1,
            1, 1, 1,
        ];
        let labels = label(&v, 3, 3, Connectivity::Four);
        assert_eq!(labels, vec![0, 1, 0, 0, 1, 0, 0, 0, 0]);
    }

    #[test]
    fn bad_sizes_are_errors() {
        let mut out = Vec::new();
        assert!(
            CpuLabeller::new()
                .label(&[0; 5], 2, 2, Connectivity::Four, &mut out)
                .is_err()
        );
        assert!(
            CpuLabeller::new()
                .label(&[], 0, 0, Connectivity::Four, &mut out)
                .is_err()
        );
    }
}

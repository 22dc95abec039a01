//! Union–find labelling on the CPU: one raster scan uniting each pixel with its
//! already-visited neighbours of equal value, linking the larger root under the
//! smaller so that every root is its component's smallest index, then one pass that
//! replaces each parent by its root.

use super::{CclError, Labeller, check_input};
use crate::grid::Connectivity;

/// The CPU labeller (stateless).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuLabeller;

impl CpuLabeller {
    /// A CPU labeller.
    pub fn new() -> Self {
        Self
    }
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
        let diagonals = connectivity == Connectivity::Eight;
        labels.clear();
        labels.extend(0..n as u32);
        let parent = labels.as_mut_slice();
        for y in 0..height as usize {
            let row = y * w;
            for x in 0..w {
                let p = row + x;
                let v = values[p];
                if x > 0 && values[p - 1] == v {
                    // The west neighbour's root is already minimal for the run.
                    parent[p] = find(parent, (p - 1) as u32);
                }
                if y > 0 {
                    let up = p - w;
                    if values[up] == v {
                        union(parent, p as u32, up as u32);
                    }
                    if diagonals {
                        if x > 0 && values[up - 1] == v {
                            union(parent, p as u32, (up - 1) as u32);
                        }
                        if x + 1 < w && values[up + 1] == v {
                            union(parent, p as u32, (up + 1) as u32);
                        }
                    }
                }
            }
        }
        // Parents precede children, so one forward pass resolves every root.
        for p in 0..n {
            let q = parent[p] as usize;
            parent[p] = parent[q];
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn label(values: &[u8], w: u32, h: u32, c: Connectivity) -> Vec<u32> {
        let mut out = Vec::new();
        CpuLabeller.label(values, w, h, c, &mut out).unwrap();
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
            CpuLabeller
                .label(&[0; 5], 2, 2, Connectivity::Four, &mut out)
                .is_err()
        );
        assert!(
            CpuLabeller
                .label(&[], 0, 0, Connectivity::Four, &mut out)
                .is_err()
        );
    }
}

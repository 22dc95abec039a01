//! Blocked node layout of the GridCut paper for volumes: the grid is padded to whole
//! blocks of 64 nodes with power-of-two extents (4×4×4, or flatter where the volume
//! is thin), blocks are stored in scan-line order and so are the nodes inside a block,
//! and a neighbour is at one of a few constant offsets picked by the node's position
//! inside its block (its low six bits).

use crate::grid::OFFSETS;

/// Nodes per block (log2).
const BLOCK_BITS: u32 = 6;
/// Nodes per block.
pub(super) const BLOCK_NODES: u32 = 1 << BLOCK_BITS;

/// Maps voxel coordinates to 32-bit node indices of the blocked layout and gives the
/// neighbour of a node in each direction by a table lookup and one addition.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    /// Volume size (unpadded).
    size: (u32, u32, u32),
    /// log2 of the block extents along x, y and z (summing to 6).
    shift: (u32, u32, u32),
    /// Blocks along x and y, and in all.
    blocks: (u32, u32, u32),
    /// `offsets[d][u & 63]`: what to add (wrapping) to node `u` to reach its
    /// neighbour at step `OFFSETS[d]`.
    offsets: Vec<[u32; BLOCK_NODES as usize]>,
}

impl Layout {
    /// The layout of a `size` volume with `arcs` neighbours per node, or `None` when
    /// the padded volume has more nodes than 32-bit indices can address.
    pub(super) fn new(size: (u32, u32, u32), arcs: usize) -> Option<Self> {
        let (w, h, d) = size;
        if w == 0 || h == 0 || d == 0 {
            return None;
        }
        // thin volumes get flat blocks: 4 slices deep at most, as deep as the volume
        let sz = d.next_power_of_two().trailing_zeros().min(2);
        let sy = (BLOCK_BITS - sz) / 2;
        let shift = (BLOCK_BITS - sz - sy, sy, sz);
        let (bx, by, bz) = (
            w.div_ceil(1 << shift.0),
            h.div_ceil(1 << shift.1),
            d.div_ceil(1 << shift.2),
        );
        let nodes = bx as u64 * by as u64 * bz as u64 * BLOCK_NODES as u64;
        if nodes > u32::MAX as u64 {
            return None;
        }
        let mut layout = Self {
            size,
            shift,
            blocks: (bx, by, bx * by * bz),
            offsets: Vec::new(),
        };
        layout.offsets = (0..arcs).map(|dir| layout.offsets_of(dir)).collect();
        Some(layout)
    }

    /// The offset table of direction `dir`: the index difference to the neighbour
    /// from every position in a block, in the layout's index arithmetic.
    fn offsets_of(&self, dir: usize) -> [u32; BLOCK_NODES as usize] {
        let (dx, dy, dz) = OFFSETS[dir];
        let (sx, sy, sz) = self.shift;
        // a block away from every border, so that each neighbour has coordinates
        let base = (1i64 << sx, 1i64 << sy, 1i64 << sz);
        std::array::from_fn(|pos| {
            let pos = pos as i64;
            let local = (
                pos & ((1 << sx) - 1),
                (pos >> sx) & ((1 << sy) - 1),
                pos >> (sx + sy),
            );
            let at = (base.0 + local.0, base.1 + local.1, base.2 + local.2);
            let next = (at.0 + dx as i64, at.1 + dy as i64, at.2 + dz as i64);
            (self.index_i64(next) - self.index_i64(at)) as i32 as u32
        })
    }

    /// The index formula in signed arithmetic, for coordinates of any block.
    fn index_i64(&self, (x, y, z): (i64, i64, i64)) -> i64 {
        let (sx, sy, sz) = self.shift;
        let (bx, by) = (self.blocks.0 as i64, self.blocks.1 as i64);
        let block = ((z >> sz) * by + (y >> sy)) * bx + (x >> sx);
        let inner = ((z & ((1 << sz) - 1)) << (sx + sy))
            | ((y & ((1 << sy) - 1)) << sx)
            | (x & ((1 << sx) - 1));
        (block << BLOCK_BITS) | inner
    }

    /// Volume size (unpadded).
    pub(super) fn size(&self) -> (u32, u32, u32) {
        self.size
    }

    /// Nodes per layer of blocks (the blocks that share their slices), and the slices
    /// a layer holds: a layer's nodes are contiguous, so layers can be filled apart.
    pub(super) fn layer(&self) -> (usize, u32) {
        let nodes = self.blocks.0 as usize * self.blocks.1 as usize * BLOCK_NODES as usize;
        (nodes, 1 << self.shift.2)
    }

    /// Nodes of the padded volume (a multiple of 64).
    pub(super) fn nodes(&self) -> usize {
        self.blocks.2 as usize * BLOCK_NODES as usize
    }

    /// Node index of voxel (x, y, z).
    #[inline]
    pub(super) fn index(&self, x: u32, y: u32, z: u32) -> u32 {
        let (sx, sy, sz) = self.shift;
        let block = ((z >> sz) * self.blocks.1 + (y >> sy)) * self.blocks.0 + (x >> sx);
        let inner = ((z & ((1 << sz) - 1)) << (sx + sy))
            | ((y & ((1 << sy) - 1)) << sx)
            | (x & ((1 << sx) - 1));
        (block << BLOCK_BITS) | inner
    }

    /// Neighbour of `u` in direction `d`. Only meaningful when that neighbour lies in
    /// the padded volume; callers follow arcs with residual capacity, which never
    /// leave the real volume.
    #[inline(always)]
    pub(super) fn neighbour(&self, u: u32, d: usize) -> u32 {
        debug_assert!(d < self.offsets.len());
        // SAFETY: `d` is below the neighbourhood's arc count, the length of `offsets`,
        // and `u & 63` indexes a block's table.
        let table = unsafe { self.offsets.get_unchecked(d) };
        u.wrapping_add(table[(u & (BLOCK_NODES - 1)) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Coordinates of node `u` (the inverse of `index`), found by search.
    fn coords(l: &Layout, padded: (u32, u32, u32), u: u32) -> (u32, u32, u32) {
        let (w, h, d) = padded;
        (0..d)
            .flat_map(|z| (0..h).flat_map(move |y| (0..w).map(move |x| (x, y, z))))
            .find(|&(x, y, z)| l.index(x, y, z) == u)
            .expect("every node has coordinates")
    }

    #[test]
    fn indices_cover_the_padded_volume_once_and_blocks_hold_64_nodes() {
        for size in [(1, 1, 5), (5, 3, 2), (9, 6, 1), (13, 7, 9)] {
            let l = Layout::new(size, 26).unwrap();
            let (sx, sy, sz) = l.shift;
            assert_eq!(sx + sy + sz, 6);
            let padded = (
                l.blocks.0 << sx,
                l.blocks.1 << sy,
                l.nodes() as u32 / (l.blocks.0 << sx) / (l.blocks.1 << sy),
            );
            let mut seen = vec![false; l.nodes()];
            for z in 0..padded.2 {
                for y in 0..padded.1 {
                    for x in 0..padded.0 {
                        let u = l.index(x, y, z) as usize;
                        assert!(!seen[u], "{size:?}: index {u} twice");
                        seen[u] = true;
                    }
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn neighbours_match_coordinates_across_block_borders() {
        let size = (11, 6, 9);
        let l = Layout::new(size, 26).unwrap();
        let padded = (12, 8, 12);
        for z in 0..padded.2 as i32 {
            for y in 0..padded.1 as i32 {
                for x in 0..padded.0 as i32 {
                    let u = l.index(x as u32, y as u32, z as u32);
                    for (d, &(dx, dy, dz)) in OFFSETS.iter().enumerate() {
                        let (nx, ny, nz) = (x + dx, y + dy, z + dz);
                        let inside = |c: i32, n: u32| (0..n as i32).contains(&c);
                        if !(inside(nx, padded.0) && inside(ny, padded.1) && inside(nz, padded.2)) {
                            continue;
                        }
                        let v = l.neighbour(u, d);
                        assert_eq!(
                            l.index(nx as u32, ny as u32, nz as u32),
                            v,
                            "{d} of ({x},{y},{z})"
                        );
                        assert_eq!(l.neighbour(v, d ^ 1), u);
                    }
                }
            }
        }
        assert_eq!(coords(&l, padded, l.index(5, 7, 3)), (5, 7, 3));
    }

    #[test]
    fn thin_volumes_get_flat_blocks_and_huge_ones_are_refused() {
        assert_eq!(Layout::new((64, 64, 1), 6).unwrap().shift, (3, 3, 0));
        assert_eq!(Layout::new((64, 64, 2), 6).unwrap().shift, (3, 2, 1));
        assert_eq!(Layout::new((64, 64, 64), 6).unwrap().shift, (2, 2, 2));
        assert!(Layout::new((1 << 11, 1 << 11, 1 << 11), 6).is_none());
        assert!(Layout::new((0, 4, 4), 6).is_none());
    }
}

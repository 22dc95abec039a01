//! Blocked node layout of the GridCut paper: the grid is padded to whole 8×8 blocks,
//! blocks are stored in scan-line order and so are the 64 nodes inside a block, so
//! nodes that are close on the grid are close in memory, and every neighbour is at
//! one of two constant offsets chosen by the node's position inside its block.

use crate::grid::Direction;

/// log2 of the block side.
const SHIFT: u32 = 3;
/// Block side in nodes.
pub(super) const BLOCK: u32 = 1 << SHIFT;
/// Nodes per block.
const BLOCK_NODES: u32 = BLOCK * BLOCK;
/// `index & IN_BLOCK` = position inside the block.
const IN_BLOCK: u32 = BLOCK_NODES - 1;

/// Maps grid coordinates to 32-bit node indices of the blocked layout and gives the
/// neighbour of a node in each direction by a table lookup and one addition.
#[derive(Clone, Debug)]
pub(super) struct Layout {
    width: u32,
    height: u32,
    blocks_x: u32,
    blocks_y: u32,
    /// `offsets[d][u & 63]`: what to add (wrapping) to node `u` to reach its
    /// neighbour in direction `d`.
    offsets: [[u32; BLOCK_NODES as usize]; 8],
}

impl Layout {
    /// The layout of a `width`×`height` grid, or `None` when the padded grid has more
    /// nodes than 32-bit indices can address.
    pub(super) fn new(width: u32, height: u32) -> Option<Self> {
        let blocks_x = width.div_ceil(BLOCK);
        let blocks_y = height.div_ceil(BLOCK);
        let nodes = blocks_x as u64 * blocks_y as u64 * BLOCK_NODES as u64;
        if width == 0 || height == 0 || nodes > u32::MAX as u64 {
            return None;
        }
        // Moving one block row down from the last row of a block.
        let y_jump = (blocks_x * BLOCK_NODES - (BLOCK - 1) * BLOCK) as i64;
        let x_jump = (BLOCK_NODES - (BLOCK - 1)) as i64;
        let mut offsets = [[0u32; BLOCK_NODES as usize]; 8];
        for dir in Direction::ALL {
            let (dx, dy) = dir.offset();
            for pos in 0..BLOCK_NODES {
                let (bx, by) = ((pos & (BLOCK - 1)) as i32, (pos >> SHIFT) as i32);
                let ox = match (dx, bx + dx) {
                    (0, _) => 0,
                    (_, nx) if (0..BLOCK as i32).contains(&nx) => dx as i64,
                    _ => dx as i64 * x_jump,
                };
                let oy = match (dy, by + dy) {
                    (0, _) => 0,
                    (_, ny) if (0..BLOCK as i32).contains(&ny) => dy as i64 * BLOCK as i64,
                    _ => dy as i64 * y_jump,
                };
                offsets[dir.index()][pos as usize] = (ox + oy) as i32 as u32;
            }
        }
        Some(Self {
            width,
            height,
            blocks_x,
            blocks_y,
            offsets,
        })
    }

    /// Grid width (unpadded).
    pub(super) fn width(&self) -> u32 {
        self.width
    }

    /// Grid height (unpadded).
    pub(super) fn height(&self) -> u32 {
        self.height
    }

    /// Pixels of the grid (its padding not counted).
    pub(super) fn pixels(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Blocks per row.
    pub(super) fn blocks_x(&self) -> u32 {
        self.blocks_x
    }

    /// Block rows.
    pub(super) fn blocks_y(&self) -> u32 {
        self.blocks_y
    }

    /// Nodes of the padded grid (a multiple of 64).
    pub(super) fn nodes(&self) -> usize {
        (self.blocks_x * self.blocks_y * BLOCK_NODES) as usize
    }

    /// Node index of (x, y); also valid for padding coordinates inside the last blocks.
    #[inline]
    pub(super) fn index(&self, x: u32, y: u32) -> u32 {
        let block = (y >> SHIFT) * self.blocks_x + (x >> SHIFT);
        (block << (2 * SHIFT)) | ((y & (BLOCK - 1)) << SHIFT) | (x & (BLOCK - 1))
    }

    /// Grid coordinates of node `u` (inverse of [`Layout::index`]).
    #[cfg(test)]
    pub(super) fn coords(&self, u: u32) -> (u32, u32) {
        let block = u >> (2 * SHIFT);
        let x = (block % self.blocks_x) << SHIFT | (u & (BLOCK - 1));
        let y = (block / self.blocks_x) << SHIFT | ((u >> SHIFT) & (BLOCK - 1));
        (x, y)
    }

    /// Block (row-major over blocks) that node `u` belongs to.
    #[inline]
    pub(super) fn block(u: u32) -> usize {
        (u >> (2 * SHIFT)) as usize
    }

    /// Neighbour of `u` in direction `d` (`Direction::index`). Only meaningful when that
    /// neighbour lies inside the padded grid; callers follow arcs with residual
    /// capacity, which never leave the real grid.
    #[inline(always)]
    pub(super) fn neighbour(&self, u: u32, d: usize) -> u32 {
        u.wrapping_add(self.offsets[d & 7][(u & IN_BLOCK) as usize])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_and_coords_are_inverse_and_cover_the_padded_grid() {
        for (w, h) in [(1, 1), (1, 13), (13, 1), (8, 8), (9, 17), (24, 16)] {
            let l = Layout::new(w, h).unwrap();
            assert_eq!(l.nodes() % 64, 0);
            assert_eq!(l.nodes() as u32, w.div_ceil(8) * 8 * h.div_ceil(8) * 8);
            let mut seen = vec![false; l.nodes()];
            for y in 0..h.div_ceil(8) * 8 {
                for x in 0..w.div_ceil(8) * 8 {
                    let u = l.index(x, y);
                    assert_eq!(l.coords(u), (x, y));
                    assert!(!seen[u as usize], "index {u} used twice");
                    seen[u as usize] = true;
                }
            }
            assert!(seen.iter().all(|&s| s));
        }
    }

    #[test]
    fn nodes_of_a_block_are_contiguous_in_scan_line_order() {
        let l = Layout::new(20, 20).unwrap();
        // Second block of the second block row (blocks_x = 3): block 4.
        assert_eq!(l.index(8, 8), 4 * 64);
        assert_eq!(l.index(9, 8), 4 * 64 + 1);
        assert_eq!(l.index(8, 9), 4 * 64 + 8);
        assert_eq!(l.index(15, 15), 4 * 64 + 63);
        assert_eq!(Layout::block(l.index(17, 3)), 2);
    }

    #[test]
    fn neighbours_match_coordinates_also_across_block_borders() {
        let (w, h) = (27, 19);
        let l = Layout::new(w, h).unwrap();
        let (pw, ph) = (w.div_ceil(8) * 8, h.div_ceil(8) * 8);
        for y in 0..ph as i32 {
            for x in 0..pw as i32 {
                let u = l.index(x as u32, y as u32);
                for dir in Direction::ALL {
                    let (dx, dy) = dir.offset();
                    let (nx, ny) = (x + dx, y + dy);
                    if nx < 0 || ny < 0 || nx >= pw as i32 || ny >= ph as i32 {
                        continue;
                    }
                    let v = l.neighbour(u, dir.index());
                    assert_eq!(l.coords(v), (nx as u32, ny as u32), "{dir:?} of ({x}, {y})");
                    assert_eq!(l.neighbour(v, dir.reverse().index()), u);
                }
            }
        }
    }

    #[test]
    fn constant_offsets_of_the_paper_for_8x8_blocks() {
        let l = Layout::new(40, 16).unwrap(); // 5 blocks per row
        let y_ofs = 8 * (40 - 8 + 1);
        let u = l.index(7, 3); // right border of a block
        assert_eq!(l.neighbour(u, Direction::East.index()), u + 57);
        let u = l.index(8, 3); // left border
        assert_eq!(l.neighbour(u, Direction::West.index()), u - 57);
        let u = l.index(3, 7); // bottom border
        assert_eq!(l.neighbour(u, Direction::South.index()), u + y_ofs);
        let u = l.index(3, 8); // top border
        assert_eq!(l.neighbour(u, Direction::North.index()), u - y_ofs);
        let u = l.index(3, 4); // inside
        assert_eq!(l.neighbour(u, Direction::SouthEast.index()), u + 9);
    }

    #[test]
    fn too_many_nodes_are_refused() {
        assert!(Layout::new(1 << 16, 1 << 16).is_none());
        assert!(Layout::new(0, 4).is_none());
        assert!(Layout::new(1 << 15, 1 << 15).is_some());
    }
}

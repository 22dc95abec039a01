//! Which square tiles of a grid changed since the last frame: the change set that lets
//! the energy recompute, and an engine re-read, only what a still camera's frame moved.

use std::ops::Range;

/// Side of a tile in pixels: a few engine blocks (8×8) wide, so the tile list stays
/// short while a small moving object marks little more than its own area.
pub const TILE: u32 = 32;

/// The tiles of a `width`×`height` grid whose inputs changed, or "all of them" where
/// something frame-wide moved (σ, a colour model, the frame's size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedTiles {
    width: u32,
    height: u32,
    cols: u32,
    rows: u32,
    /// One flag per tile, row-major; ignored while `whole`.
    marked: Vec<bool>,
    whole: bool,
}

/// A rectangle of pixels: columns `xs` of rows `ys`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PixelRect {
    /// Columns.
    pub xs: Range<u32>,
    /// Rows.
    pub ys: Range<u32>,
}

impl ChangedTiles {
    /// No tile changed.
    pub fn none(width: u32, height: u32) -> Self {
        let (cols, rows) = (width.div_ceil(TILE), height.div_ceil(TILE));
        Self {
            width,
            height,
            cols,
            rows,
            marked: vec![false; cols as usize * rows as usize],
            whole: false,
        }
    }

    /// Every tile changed.
    pub fn whole(width: u32, height: u32) -> Self {
        let mut tiles = Self::none(width, height);
        tiles.whole = true;
        tiles
    }

    /// Forgets every mark (same size).
    pub fn clear(&mut self) {
        self.marked.fill(false);
        self.whole = false;
    }

    /// Marks every tile.
    pub fn mark_whole(&mut self) {
        self.whole = true;
    }

    /// Grid width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Grid height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// Tiles across and down.
    pub fn tiles(&self) -> (u32, u32) {
        (self.cols, self.rows)
    }

    /// Marked tiles (all of them while whole).
    pub fn count(&self) -> usize {
        if self.whole {
            self.marked.len()
        } else {
            self.marked.iter().filter(|&&m| m).count()
        }
    }

    /// Whether tile (`tx`, `ty`) is marked.
    pub fn is_marked(&self, tx: u32, ty: u32) -> bool {
        self.whole || self.marked[(ty * self.cols + tx) as usize]
    }

    /// Marks tile (`tx`, `ty`).
    pub fn mark(&mut self, tx: u32, ty: u32) {
        self.marked[(ty * self.cols + tx) as usize] = true;
    }

    /// Marks every tile that holds a pixel within `radius` pixels of `rect`.
    pub fn mark_rect(&mut self, rect: &PixelRect, radius: u32) {
        if rect.xs.is_empty() || rect.ys.is_empty() {
            return;
        }
        let x0 = rect.xs.start.saturating_sub(radius) / TILE;
        let x1 = ((rect.xs.end - 1 + radius) / TILE).min(self.cols - 1);
        let y0 = rect.ys.start.saturating_sub(radius) / TILE;
        let y1 = ((rect.ys.end - 1 + radius) / TILE).min(self.rows - 1);
        for ty in y0..=y1 {
            for tx in x0..=x1 {
                self.mark(tx, ty);
            }
        }
    }

    /// Marks every tile marked in `other` (same size).
    pub fn mark_all_of(&mut self, other: &ChangedTiles) {
        self.whole |= other.whole;
        for (m, &o) in self.marked.iter_mut().zip(&other.marked) {
            *m |= o;
        }
    }

    /// The pixels of the marked tiles, as one rectangle per run of marked tiles in a
    /// row of tiles, each grown by `halo` pixels on every side (clipped to the grid):
    /// with `halo` 1, every arc with an end in a marked tile starts in a rectangle.
    pub fn rects(&self, halo: u32) -> Vec<PixelRect> {
        let mut out = Vec::new();
        for ty in 0..self.rows {
            let mut tx = 0;
            while tx < self.cols {
                if !self.is_marked(tx, ty) {
                    tx += 1;
                    continue;
                }
                let start = tx;
                while tx < self.cols && self.is_marked(tx, ty) {
                    tx += 1;
                }
                out.push(PixelRect {
                    xs: (start * TILE).saturating_sub(halo)..(tx * TILE + halo).min(self.width),
                    ys: (ty * TILE).saturating_sub(halo)..((ty + 1) * TILE + halo).min(self.height),
                });
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_runs_and_halos() {
        let mut tiles = ChangedTiles::none(100, 70);
        assert_eq!(tiles.tiles(), (4, 3));
        assert!(tiles.count() == 0 && tiles.rects(1).is_empty());
        tiles.mark_rect(
            &PixelRect {
                xs: 31..33,
                ys: 40..41,
            },
            0,
        );
        assert_eq!((tiles.count(), tiles.is_marked(0, 1)), (2, true));
        assert!(tiles.is_marked(1, 1) && !tiles.is_marked(2, 1));
        let rects = tiles.rects(1);
        assert_eq!(
            rects,
            vec![PixelRect {
                xs: 0..65,
                ys: 31..65
            }]
        );
        tiles.mark(3, 2);
        assert_eq!(
            tiles.rects(0)[1],
            PixelRect {
                xs: 96..100,
                ys: 64..70
            }
        );
        tiles.clear();
        assert_eq!(tiles.count(), 0);
        tiles.mark_whole();
        assert!(tiles.count() == 12 && tiles.rects(0).len() == 3);
    }

    #[test]
    fn a_rect_marks_the_tiles_within_the_radius() {
        let mut tiles = ChangedTiles::none(160, 160);
        tiles.mark_rect(
            &PixelRect {
                xs: 70..80,
                ys: 70..80,
            },
            10,
        );
        assert_eq!(tiles.count(), 4, "60..90 spans tiles 1 and 2");
        assert!(tiles.is_marked(1, 1) && tiles.is_marked(2, 2) && !tiles.is_marked(3, 2));
        let mut far = ChangedTiles::none(160, 160);
        far.mark_rect(
            &PixelRect {
                xs: 70..80,
                ys: 70..80,
            },
            TILE,
        );
        assert_eq!(far.count(), 9, "38..112 spans tiles 1 to 3");
        far.mark_rect(&PixelRect { xs: 0..0, ys: 0..5 }, 100);
        assert_eq!(far.count(), 9, "an empty rect marks nothing");
    }
}

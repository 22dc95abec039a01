//! Which square tiles of a grid changed since the last frame: the change set that lets
//! the energy recompute, and an engine re-read, only what a still camera's frame moved.

use std::ops::Range;

/// Side of a tile in pixels: a few engine blocks (8×8) wide, so the tile list stays
/// short while a small moving object marks little more than its own area.
pub const TILE: u32 = 32;

/// The tiles of a `width`×`height` grid whose inputs changed, each with the box of its
/// pixels that did, or "all of them" where something frame-wide moved (σ, a colour
/// model, the frame's size). The boxes keep a tile that one noisy pixel changed from
/// costing the whole tile.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChangedTiles {
    width: u32,
    height: u32,
    cols: u32,
    rows: u32,
    /// Per tile, row-major: the box of its changed pixels (`EMPTY` where none);
    /// ignored while `whole`.
    boxes: Vec<TileBox>,
    whole: bool,
}

/// Columns `x0..x1` of rows `y0..y1` in grid coordinates, as `[x0, x1, y0, y1]`:
/// small and `Copy`, so a union is four min/max.
type TileBox = [u32; 4];

/// The box of no pixel: any union with it is the other box.
const EMPTY: TileBox = [u32::MAX, 0, u32::MAX, 0];

/// Where a problem can differ from the last one built, each within a pixel of the
/// tiles' boxes: what an energy that knows what it recomputed tells the engine, so
/// that the engine reads only there.
#[derive(Clone, Copy, Debug)]
pub struct ProblemChanges<'a> {
    /// Where any capacity can differ: terminal or neighbour.
    pub any: &'a ChangedTiles,
    /// Where neighbour capacities can differ (within `any`): a move of the previous
    /// mask changes only terminals.
    pub edges: &'a ChangedTiles,
    /// Exactly which terminal and neighbour pairs differ (within the tiles), where the
    /// energy compared what it wrote.
    pub arcs: Option<&'a super::ChangedArcs>,
}

/// A rectangle of pixels: columns `xs` of rows `ys`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PixelRect {
    /// Columns.
    pub xs: Range<u32>,
    /// Rows.
    pub ys: Range<u32>,
}

impl PixelRect {
    /// This rectangle grown by `by` pixels on every side, within a `width`×`height`
    /// grid.
    pub fn grown(&self, by: u32, width: u32, height: u32) -> PixelRect {
        PixelRect {
            xs: self.xs.start.saturating_sub(by).min(width)
                ..self.xs.end.saturating_add(by).min(width),
            ys: self.ys.start.saturating_sub(by).min(height)
                ..self.ys.end.saturating_add(by).min(height),
        }
    }
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
            boxes: vec![EMPTY; cols as usize * rows as usize],
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
        self.boxes.fill(EMPTY);
        self.whole = false;
    }

    /// Marks every tile.
    pub fn mark_whole(&mut self) {
        self.whole = true;
    }

    /// Whether every tile is marked as a whole (not tile by tile).
    pub fn is_whole(&self) -> bool {
        self.whole
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
            self.boxes.len()
        } else {
            self.boxes.iter().filter(|b| !is_empty(b)).count()
        }
    }

    /// Pixels in the marked tiles' boxes (every pixel while whole): what a frame
    /// recomputes.
    pub fn area(&self) -> u64 {
        if self.whole {
            return u64::from(self.width) * u64::from(self.height);
        }
        self.boxes
            .iter()
            .filter(|b| !is_empty(b))
            .map(|[x0, x1, y0, y1]| u64::from(x1 - x0) * u64::from(y1 - y0))
            .sum()
    }

    /// Whether tile (`tx`, `ty`) is marked.
    pub fn is_marked(&self, tx: u32, ty: u32) -> bool {
        self.whole || !is_empty(&self.boxes[(ty * self.cols + tx) as usize])
    }

    /// Marks the pixels `xs` of row `y` (clipped to the grid).
    pub fn mark_pixels(&mut self, y: u32, xs: Range<u32>) {
        let rect = PixelRect { xs, ys: y..y + 1 };
        self.mark_rect(&rect, 0);
    }

    /// Marks every pixel within `radius` pixels of `rect` (clipped to the grid).
    pub fn mark_rect(&mut self, rect: &PixelRect, radius: u32) {
        if rect.xs.is_empty() || rect.ys.is_empty() {
            return;
        }
        let grown = rect.grown(radius, self.width, self.height);
        let (x0, x1, y0, y1) = (grown.xs.start, grown.xs.end, grown.ys.start, grown.ys.end);
        if x0 >= x1 || y0 >= y1 {
            return;
        }
        for ty in y0 / TILE..=(y1 - 1) / TILE {
            for tx in x0 / TILE..=(x1 - 1) / TILE {
                let (tx0, ty0) = (tx * TILE, ty * TILE);
                let part = [
                    x0.max(tx0),
                    x1.min(tx0 + TILE),
                    y0.max(ty0),
                    y1.min(ty0 + TILE),
                ];
                self.extend(tx, ty, part);
            }
        }
    }

    /// Marks every pixel marked in `other` (same size).
    pub fn mark_all_of(&mut self, other: &ChangedTiles) {
        self.whole |= other.whole;
        for (b, o) in self.boxes.iter_mut().zip(&other.boxes) {
            *b = union(b, o);
        }
    }

    /// The changed pixels, as one rectangle per run of marked tiles in a row of tiles
    /// (the box of their changed pixels; whole tiles while `whole`), each grown by
    /// `halo` pixels on every side (clipped to the grid): with `halo` 1, every arc
    /// with an end on a changed pixel starts in a rectangle.
    pub fn rects(&self, halo: u32) -> Vec<PixelRect> {
        let mut out = Vec::new();
        for ty in 0..self.rows {
            let mut tx = 0;
            while tx < self.cols {
                if !self.is_marked(tx, ty) {
                    tx += 1;
                    continue;
                }
                let mut run = EMPTY;
                while tx < self.cols && self.is_marked(tx, ty) {
                    run = union(&run, &self.box_of(tx, ty));
                    tx += 1;
                }
                let [x0, x1, y0, y1] = run;
                out.push(PixelRect {
                    xs: x0.saturating_sub(halo)..(x1 + halo).min(self.width),
                    ys: y0.saturating_sub(halo)..(y1 + halo).min(self.height),
                });
            }
        }
        out
    }

    /// The box of tile (`tx`, `ty`)'s changed pixels: all of it while `whole`.
    fn box_of(&self, tx: u32, ty: u32) -> TileBox {
        if self.whole {
            let (x0, y0) = (tx * TILE, ty * TILE);
            [
                x0,
                (x0 + TILE).min(self.width),
                y0,
                (y0 + TILE).min(self.height),
            ]
        } else {
            self.boxes[(ty * self.cols + tx) as usize]
        }
    }

    /// Grows tile (`tx`, `ty`)'s box to hold `part` (within the tile).
    fn extend(&mut self, tx: u32, ty: u32, part: TileBox) {
        let b = &mut self.boxes[(ty * self.cols + tx) as usize];
        *b = union(b, &part);
    }
}

fn is_empty(b: &TileBox) -> bool {
    b[0] >= b[1]
}

fn union(a: &TileBox, b: &TileBox) -> TileBox {
    if is_empty(b) {
        return *a;
    }
    [
        a[0].min(b[0]),
        a[1].max(b[1]),
        a[2].min(b[2]),
        a[3].max(b[3]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Marks all of tile (`tx`, `ty`).
    fn mark_tile(tiles: &mut ChangedTiles, tx: u32, ty: u32) {
        let (x, y) = (tx * TILE, ty * TILE);
        let rect = PixelRect {
            xs: x..x + TILE,
            ys: y..y + TILE,
        };
        tiles.mark_rect(&rect, 0);
    }

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
                xs: 30..34,
                ys: 39..42
            }],
            "the run's changed pixels and a pixel around them"
        );
        mark_tile(&mut tiles, 0, 1);
        assert_eq!(
            tiles.rects(1),
            vec![PixelRect {
                xs: 0..34,
                ys: 31..65
            }]
        );
        mark_tile(&mut tiles, 3, 2);
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
    fn a_pixel_marks_its_own_box_and_a_tile_all_of_it() {
        let mut tiles = ChangedTiles::none(100, 70);
        tiles.mark_pixels(35, 40..41);
        tiles.mark_pixels(37, 45..47);
        assert_eq!((tiles.count(), tiles.area()), (1, 7 * 3));
        assert_eq!(
            tiles.rects(0),
            vec![PixelRect {
                xs: 40..47,
                ys: 35..38
            }]
        );
        // runs of pixels crossing tiles and the grid's edge are split and clipped
        tiles.clear();
        tiles.mark_pixels(69, 60..120);
        assert_eq!(tiles.count(), 3);
        assert_eq!(
            tiles.rects(2),
            vec![PixelRect {
                xs: 58..100,
                ys: 67..70
            }]
        );
        let mut other = ChangedTiles::none(100, 70);
        mark_tile(&mut other, 0, 0);
        tiles.mark_all_of(&other);
        assert_eq!(tiles.count(), 4);
        assert_eq!(
            tiles.rects(0)[0],
            PixelRect {
                xs: 0..32,
                ys: 0..32
            }
        );
        tiles.mark_whole();
        assert_eq!(
            tiles.rects(0)[2],
            PixelRect {
                xs: 0..100,
                ys: 64..70
            }
        );
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

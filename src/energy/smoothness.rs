//! Contrast-sensitive Potts smoothness: the capacity of the arcs between neighbours p
//! and q is `λ · exp(−β‖I_p − I_q‖²) / dist(p, q)`, with β = 1 / (2σ²) and σ² the mean
//! squared colour difference of neighbouring pixels unless the user fixes σ (GrabCut's
//! choice), and diagonals (8-connected) weighted by 1/√2.
//!
//! The weight depends on the squared difference only, an integer in 0..=3·255², so
//! the quantised capacity is read from a table instead of calling `exp` per arc.

use crate::bands;
use crate::grid::{Connectivity, Direction, PixelRect, TILE};
use std::sync::atomic::{AtomicI64, Ordering};

/// Squared colour distance below which σ is never estimated (flat synthetic frames).
const MIN_MEAN_SQUARED: f64 = 1.0;

/// Largest squared RGB difference of two pixels.
pub const MAX_SQUARED: usize = 3 * 255 * 255;

/// The four directions whose pairs cover every neighbour pair once.
const FORWARD: [Direction; 4] = [
    Direction::East,
    Direction::South,
    Direction::SouthEast,
    Direction::SouthWest,
];

/// Builds the quantised weight table of one arc length: entry d² is
/// `round(scale · λ · exp(−β d²) / length)`, cut where it reaches zero.
fn weight_table(lambda: f32, beta: f64, scale: f32, length: f64) -> Vec<i32> {
    let top = scale as f64 * lambda as f64 / length;
    let mut table = Vec::new();
    for d2 in 0..=MAX_SQUARED {
        let value = (top * (-beta * d2 as f64).exp()).round();
        if value < 1.0 {
            break;
        }
        table.push(value.min(i32::MAX as f64) as i32);
    }
    table
}

/// Squared colour differences of two equally long runs of RGB pixels, passed on
/// one by one.
#[inline]
fn row_squared<'a>(a: &'a [u8], b: &'a [u8]) -> impl Iterator<Item = i32> + 'a {
    a.chunks_exact(3).zip(b.chunks_exact(3)).map(|(p, q)| {
        let d0 = p[0] as i32 - q[0] as i32;
        let d1 = p[1] as i32 - q[1] as i32;
        let d2 = p[2] as i32 - q[2] as i32;
        d0 * d0 + d1 * d1 + d2 * d2
    })
}

/// One direction's pixel pairs, row by row: for each row, the index of the first
/// pixel p whose neighbour q = p + step is on the grid, and how many follow.
struct Pairs {
    step: isize,
    rows: std::ops::Range<usize>,
    x0: usize,
    len: usize,
    width: usize,
}

impl Pairs {
    fn new(dir: Direction, width: usize, height: usize) -> Self {
        let (dx, dy) = dir.offset();
        let x0 = usize::from(dx < 0);
        let x1 = width.saturating_sub(usize::from(dx > 0)).max(x0);
        let y0 = usize::from(dy < 0);
        let y1 = height.saturating_sub(usize::from(dy > 0)).max(y0);
        Self {
            step: dy as isize * width as isize + dx as isize,
            rows: y0..y1,
            x0,
            len: x1 - x0,
            width,
        }
    }

    /// (first p, first q) of every row.
    fn starts(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.rows.clone().map(|y| {
            let p = y * self.width + self.x0;
            (p, (p as isize + self.step) as usize)
        })
    }
}

/// Parameters of the smoothness term.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Smoothness {
    /// 4- or 8-connected neighbours.
    pub connectivity: Connectivity,
    /// Weight λ (in nats, before quantisation).
    pub lambda: f32,
    /// Contrast σ in 8-bit colour units; `None` estimates it from the frame.
    pub sigma: Option<f32>,
    /// Capacity units per nat.
    pub scale: f32,
}

/// The weight tables of the last parameters they were made for: a video's frames
/// share λ, σ (fixed or the learned background's) and the scale, and making the tables
/// costs an `exp` per entry.
#[derive(Clone, Debug, Default)]
pub struct WeightTables {
    key: Option<(u32, u32, u32)>,
    tables: [Vec<i32>; 2],
}

impl WeightTables {
    /// The straight and diagonal tables of `smoothness` at `sigma`, made anew only where
    /// the parameters changed.
    fn get(&mut self, smoothness: &Smoothness, sigma: f32) -> &[Vec<i32>; 2] {
        let key = (
            smoothness.lambda.to_bits(),
            sigma.to_bits(),
            smoothness.scale.to_bits(),
        );
        if self.key != Some(key) {
            self.tables = smoothness.weight_tables(sigma);
            self.key = Some(key);
        }
        &self.tables
    }
}

impl Smoothness {
    /// Fills `edges` (one array per direction of the connectivity, `Direction::ALL`
    /// order, each `width·height` long) with the capacities of an RGB frame, and
    /// returns the σ used. Arcs between two pixels that `fixed` marks (seeded pixels,
    /// whose labels no cut changes) get capacity 0. `tables` keeps the weight tables
    /// from one frame to the next.
    pub fn fill_edges(
        &self,
        rgb: &[u8],
        width: usize,
        height: usize,
        fixed: Option<&[bool]>,
        edges: &mut [Vec<i32>],
        tables: &mut WeightTables,
    ) -> f32 {
        let sigma = self.sigma_of(rgb, width, height);
        for &dir in self.connectivity.directions() {
            edges[dir.index()].fill(0);
        }
        let whole = PixelRect {
            xs: 0..width as u32,
            ys: 0..height as u32,
        };
        let tables = tables.get(self, sigma);
        self.fill_edges_in(rgb, width, &[whole], fixed, edges, tables, None);
        sigma
    }

    /// The σ this term uses on a frame: the given one, else the frame's estimate.
    pub fn sigma_of(&self, rgb: &[u8], width: usize, height: usize) -> f32 {
        match self.sigma {
            Some(s) if s > 0.0 => s,
            _ => estimate_sigma(rgb, width, height, self.connectivity),
        }
    }

    /// The weight tables of this term at `sigma`, kept in `tables`.
    pub fn tables<'t>(&self, sigma: f32, tables: &'t mut WeightTables) -> &'t [Vec<i32>; 2] {
        tables.get(self, sigma)
    }

    /// Writes the capacities of every neighbour pair whose first pixel (in the forward
    /// directions) lies in one of `rects`, both ways, from `tables` ([`Self::tables`]);
    /// the other arcs stay as they are. With the rectangles a changed region grown by
    /// one pixel, this redoes every pair that the change touched. Where `changed` is
    /// given (per forward direction, the bits of [`crate::grid::ChangedArcs`]), the
    /// bit of every pair whose capacity differs from the one it replaced is set. Each
    /// direction pair writes only its own two arrays, so the directions are shared out
    /// among the threads ([`bands::for_each_part`]).
    #[allow(clippy::too_many_arguments)]
    pub fn fill_edges_in(
        &self,
        rgb: &[u8],
        width: usize,
        rects: &[PixelRect],
        fixed: Option<&[bool]>,
        edges: &mut [Vec<i32>],
        tables: &[Vec<i32>; 2],
        changed: Option<&mut [Vec<u64>]>,
    ) {
        let dirs = self.connectivity.number() as usize;
        let mut changed = changed.map(|c| c.iter_mut());
        // `Direction::ALL` pairs each forward direction with its reverse (d ^ 1)
        let parts: Vec<_> = edges[..dirs]
            .chunks_exact_mut(2)
            .enumerate()
            .map(|(i, pair)| {
                let bits = changed.as_mut().and_then(|c| c.next());
                (Direction::ALL[2 * i], pair, bits)
            })
            .collect();
        debug_assert!(parts.iter().all(|(dir, _, _)| FORWARD.contains(dir)));
        bands::for_each_part(parts, |(dir, pair, mut bits)| {
            let [fwd, rev] = pair else {
                unreachable!("chunks of two")
            };
            for rect in rects {
                let arrays = (
                    fwd.as_mut_slice(),
                    rev.as_mut_slice(),
                    bits.as_deref_mut().map(Vec::as_mut_slice),
                );
                fill_direction(dir, rgb, width, rect, fixed, arrays, tables);
            }
        });
    }
}

/// The arrays one forward direction's pairs are written to: their capacities one way
/// and the other, and the bits of those that changed, where they are tracked.
type DirectionArrays<'a> = (&'a mut [i32], &'a mut [i32], Option<&'a mut [u64]>);

/// [`Smoothness::fill_edges_in`] for the pairs of one forward direction `dir` that
/// start in `rect`. The capacities are symmetric, so a pair's old capacity is the one
/// its backward arc still holds when the forward one is written.
fn fill_direction(
    dir: Direction,
    rgb: &[u8],
    width: usize,
    rect: &PixelRect,
    fixed: Option<&[bool]>,
    (fwd, rev, mut changed): DirectionArrays<'_>,
    [straight, diagonal]: &[Vec<i32>; 2],
) {
    let height = fwd.len() / width.max(1);
    let table = if dir.is_diagonal() {
        diagonal
    } else {
        straight
    };
    let pairs = Pairs::new(dir, width, height);
    let x0 = pairs.x0.max(rect.xs.start as usize);
    let x1 = (pairs.x0 + pairs.len).min(rect.xs.end as usize);
    if x0 >= x1 {
        return;
    }
    let n = x1 - x0;
    let ys = pairs.rows.start.max(rect.ys.start as usize)..pairs.rows.end.min(rect.ys.end as usize);
    for y in ys {
        let p = y * width + x0;
        let q = (p as isize + pairs.step) as usize;
        let out = &mut fwd[p..p + n];
        let squares = row_squared(&rgb[3 * p..3 * (p + n)], &rgb[3 * q..3 * (q + n)]);
        for (o, d2) in out.iter_mut().zip(squares) {
            *o = table.get(d2 as usize).copied().unwrap_or(0);
        }
        if let Some(fixed) = fixed {
            for ((o, &a), &b) in out.iter_mut().zip(&fixed[p..p + n]).zip(&fixed[q..q + n]) {
                if a && b {
                    *o = 0;
                }
            }
        }
        match changed.as_deref_mut() {
            Some(bits) => {
                let words = width.div_ceil(crate::grid::ARC_WORD as usize);
                let row = &mut bits[y * words..(y + 1) * words];
                crate::grid::copy_marking(row, x0, &mut rev[q..q + n], out);
            }
            None => rev[q..q + n].copy_from_slice(out),
        }
    }
}

impl Smoothness {
    /// The quantised weight tables of straight and of diagonal arcs at `sigma`, as
    /// [`Self::fill_edges`] reads them: entry d² is an arc's capacity at squared colour
    /// difference d², and 0 past the end (for the device energy's upload).
    pub(crate) fn weight_tables(&self, sigma: f32) -> [Vec<i32>; 2] {
        let beta = 1.0 / (2.0 * sigma as f64 * sigma as f64);
        [1.0, std::f64::consts::SQRT_2]
            .map(|length| weight_table(self.lambda, beta, self.scale, length))
    }
}

/// Largest relative difference between a frame's own σ estimate and the σ held from
/// the frames before for which the held σ stays (see [`hold_sigma`]).
pub const SIGMA_BAND: f32 = 0.1;

/// A frame of which fewer than one pixel in this many moved behind the noise gate is
/// still ([`is_still`]): a still camera's frames move a few percent (the objects in
/// view), a moving camera's a large share.
pub const STILL_FRACTION: u64 = 8;

/// Whether a frame of `pixels` pixels, `moved` of which moved behind the noise gate
/// (`None`: no gate), is still enough for its σ to be held.
pub fn is_still(moved: Option<u64>, pixels: u64) -> bool {
    moved.is_some_and(|m| m * STILL_FRACTION < pixels)
}

/// σ for a video frame whose own estimate is `estimate`, given the σ `held` from the
/// frames before: on a `still` frame ([`is_still`]) the held one while the estimate
/// stays within [`SIGMA_BAND`] of it, else the estimate, which the next frames then
/// hold. Every arc's capacity follows σ, so a σ estimated afresh for each frame changes
/// every arc of a still scene and leaves a dynamic cut nothing to keep; held, arcs
/// change only where the scene did. A frame that moved throughout (a pan) changes its
/// arcs anyway, and gets its own σ. The CPU and the device energy both take σ from here.
pub fn hold_sigma(held: Option<f32>, estimate: f32, still: bool) -> f32 {
    match held {
        Some(held) if still && (estimate - held).abs() <= SIGMA_BAND * held => held,
        _ => estimate,
    }
}

/// σ estimated from a frame: the root mean squared colour difference of its
/// neighbour pairs (at least 1).
pub fn estimate_sigma(rgb: &[u8], width: usize, height: usize, connectivity: Connectivity) -> f32 {
    let mut sum = 0u64;
    for &dir in &FORWARD[..connectivity.number() as usize / 2] {
        let pairs = Pairs::new(dir, width, height);
        for (p, q) in pairs.starts() {
            let n = pairs.len;
            sum += u64::from(squared_sum(
                &rgb[3 * p..3 * (p + n)],
                &rgb[3 * q..3 * (q + n)],
            ));
        }
    }
    sigma_of_sum(sum, width, height, connectivity)
}

/// [`estimate_sigma`] kept from frame to frame: the squared colour differences of the
/// pairs starting in each stretch of a row, summed. A frame redoes only the stretches
/// whose pixels, or whose neighbours' pixels, changed since the last one, so a still
/// camera's frame costs what it changed; the estimate always equals
/// [`estimate_sigma`]'s.
#[derive(Clone, Debug, Default)]
pub struct SigmaSums {
    width: usize,
    height: usize,
    connectivity: Option<Connectivity>,
    /// The last frame's colours.
    kept: Vec<u8>,
    /// Per stretch, row-major: the sum of its pairs.
    sums: Vec<u32>,
    /// Per stretch: which of its colours changed in the frame being read
    /// ([`MOVED`], [`FIRST_MOVED`], [`LAST_MOVED`]; scratch).
    moved: Vec<u8>,
    total: u64,
}

/// Pixels per stretch of [`SigmaSums`]: a tile's width, as the moves it may be told
/// come per tile; its sum stays within a `u32`.
const SIGMA_STRETCH: usize = TILE as usize;

/// A stretch's flag: some pixel of it changed.
const MOVED: u8 = 1;
/// A stretch's flag: its first pixel changed (pairs from the stretch to its left reach it).
const FIRST_MOVED: u8 = 2;
/// A stretch's flag: its last pixel changed (pairs from the stretch to its right reach it).
const LAST_MOVED: u8 = 4;

impl SigmaSums {
    /// σ of `rgb` as [`estimate_sigma`] finds it, redoing only what changed since the
    /// last frame: where `moves` say (as [`crate::energy::EnergyInputs::rgb_moves`]),
    /// else where the frames differ.
    pub fn estimate(
        &mut self,
        rgb: &[u8],
        width: usize,
        height: usize,
        connectivity: Connectivity,
        moves: Option<&[Vec<[u32; 3]>]>,
    ) -> f32 {
        let stretches = width.div_ceil(SIGMA_STRETCH);
        let same_shape = (self.width, self.height, self.connectivity)
            == (width, height, Some(connectivity))
            && self.kept.len() == rgb.len();
        if !same_shape {
            *self = Self {
                width,
                height,
                connectivity: Some(connectivity),
                kept: rgb.to_vec(),
                sums: vec![0; stretches * height],
                moved: vec![MOVED | FIRST_MOVED | LAST_MOVED; stretches * height],
                total: 0,
            };
        } else if let Some(moves) =
            moves.filter(|m| super::builder::moves_fit(m, width as u32, height as u32))
        {
            self.take_moves(rgb, moves);
        } else {
            self.find_moves(rgb);
        }
        self.total = self
            .total
            .wrapping_add_signed(self.redo_stale(rgb, connectivity));
        sigma_of_sum(self.total, width, height, connectivity)
    }

    /// Sums again the stretches whose pairs reach a pixel that moved, band by band;
    /// returns how much the total changed.
    fn redo_stale(&mut self, rgb: &[u8], connectivity: Connectivity) -> i64 {
        let (width, height) = (self.width, self.height);
        let stretches = width.div_ceil(SIGMA_STRETCH);
        let rows = bands::band_rows(height);
        let change = AtomicI64::new(0);
        let moved = &self.moved;
        let parts = self
            .sums
            .chunks_mut((rows * stretches).max(1))
            .enumerate()
            .collect();
        let all = FORWARD.map(|d| Pairs::new(d, width, height));
        let pairs = &all[..connectivity.number() as usize / 2];
        bands::for_each_part(parts, |(band, sums): (usize, &mut [u32])| {
            let mut delta = 0i64;
            for (r, row) in sums.chunks_mut(stretches.max(1)).enumerate() {
                let y = band * rows + r;
                for (c, slot) in row.iter_mut().enumerate() {
                    if stale(moved, height, y, c, stretches) {
                        let sum = stretch_sum(rgb, pairs, y, c);
                        delta += i64::from(sum) - i64::from(std::mem::replace(slot, sum));
                    }
                }
            }
            change.fetch_add(delta, Ordering::Relaxed);
        });
        change.into_inner()
    }

    /// Flags the stretches `moves` list and keeps their new colours.
    fn take_moves(&mut self, rgb: &[u8], moves: &[Vec<[u32; 3]>]) {
        let (width, stretches) = (self.width, self.width.div_ceil(SIGMA_STRETCH));
        self.moved.fill(0);
        for &[y, x0, x1] in moves.iter().flatten() {
            let (y, x0, x1) = (y as usize, x0 as usize, x1 as usize);
            let c = x0 / SIGMA_STRETCH;
            let end = ((c + 1) * SIGMA_STRETCH).min(width);
            let first = if x0 == c * SIGMA_STRETCH {
                FIRST_MOVED
            } else {
                0
            };
            let last = if x1 == end { LAST_MOVED } else { 0 };
            self.moved[y * stretches + c] = MOVED | first | last;
            let at = 3 * (y * width + x0)..3 * (y * width + x1);
            self.kept[at.clone()].copy_from_slice(&rgb[at]);
        }
        debug_assert!(self.kept == rgb, "the moves told are all that changed");
    }

    /// Marks the stretches whose colours differ from the kept frame's, and keeps the
    /// new ones, band by band.
    fn find_moves(&mut self, rgb: &[u8]) {
        let row = (3 * self.width).max(1);
        let stretches = self.width.div_ceil(SIGMA_STRETCH);
        let rows = bands::band_rows(self.height);
        let parts = rgb
            .chunks(rows * row)
            .zip(self.kept.chunks_mut(rows * row))
            .zip(self.moved.chunks_mut((rows * stretches).max(1)))
            .collect();
        bands::for_each_part(parts, |((now, kept), moved)| {
            find_moves_in(now, kept, moved, row, stretches);
        });
    }
}

/// [`SigmaSums::find_moves`] on a band of rows `row` bytes long.
fn find_moves_in(now: &[u8], kept: &mut [u8], moved: &mut [u8], row: usize, stretches: usize) {
    let stretch = 3 * SIGMA_STRETCH;
    for ((now, kept), moved) in now
        .chunks_exact(row)
        .zip(kept.chunks_exact_mut(row))
        .zip(moved.chunks_mut(stretches.max(1)))
    {
        if now == kept {
            moved.fill(0);
            continue;
        }
        for (m, (a, b)) in moved
            .iter_mut()
            .zip(now.chunks(stretch).zip(kept.chunks(stretch)))
        {
            *m = moved_flags(a, b);
        }
        kept.copy_from_slice(now);
    }
}

/// The flags of a stretch whose colours were `b` and are `a`.
fn moved_flags(a: &[u8], b: &[u8]) -> u8 {
    if a == b {
        return 0;
    }
    let last = a.len() - 3;
    let first_moved = if a[..3] != b[..3] { FIRST_MOVED } else { 0 };
    let last_moved = if a[last..] != b[last..] {
        LAST_MOVED
    } else {
        0
    };
    MOVED | first_moved | last_moved
}

/// Whether stretch `c` of row `y` (of `height`) has pairs with a pixel that `moved`:
/// pairs start in row `y` and end in it (one column right at most) or in the next
/// (one column to either side at most), so a neighbouring stretch matters only by the
/// pixel at its edge.
fn stale(moved: &[u8], height: usize, y: usize, c: usize, stretches: usize) -> bool {
    let flags = |r: usize, c: usize| moved[r * stretches + c];
    let right = |r: usize| c + 1 < stretches && flags(r, c + 1) & FIRST_MOVED != 0;
    let left = |r: usize| c > 0 && flags(r, c - 1) & LAST_MOVED != 0;
    let row = flags(y, c) & MOVED != 0 || right(y);
    row || (y + 1 < height && (flags(y + 1, c) & MOVED != 0 || left(y + 1) || right(y + 1)))
}

/// The squared colour differences of the `pairs` (one per forward direction) that
/// start in stretch `c` of row `y`.
fn stretch_sum(rgb: &[u8], pairs: &[Pairs], y: usize, c: usize) -> u32 {
    let mut sum = 0;
    for pairs in pairs {
        let width = pairs.width;
        let xs = c * SIGMA_STRETCH..((c + 1) * SIGMA_STRETCH).min(width);
        let (x0, x1) = (xs.start.max(pairs.x0), xs.end.min(pairs.x0 + pairs.len));
        if !pairs.rows.contains(&y) || x0 >= x1 {
            continue;
        }
        let p = y * width + x0;
        let q = (p as isize + pairs.step) as usize;
        let n = x1 - x0;
        sum += squared_sum(&rgb[3 * p..3 * (p + n)], &rgb[3 * q..3 * (q + n)]);
    }
    sum
}

/// Σ (a − b)² over the bytes of two colour runs: all channels alike, so the bytes are
/// read in one flat pass that vectorises.
fn squared_sum(a: &[u8], b: &[u8]) -> u32 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| {
            let d = i32::from(x) - i32::from(y);
            (d * d) as u32
        })
        .sum()
}

/// σ from the sum of the squared colour differences of a frame's neighbour pairs (the
/// device energy sums them on the GPU).
pub(crate) fn sigma_of_sum(
    sum: u64,
    width: usize,
    height: usize,
    connectivity: Connectivity,
) -> f32 {
    let count: u64 = FORWARD[..connectivity.number() as usize / 2]
        .iter()
        .map(|&dir| {
            let pairs = Pairs::new(dir, width, height);
            (pairs.rows.len() * pairs.len) as u64
        })
        .sum();
    let mean = if count == 0 {
        0.0
    } else {
        sum as f64 / count as f64
    };
    mean.max(MIN_MEAN_SQUARED).sqrt() as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grid::GridProblem;

    fn frame(width: usize, height: usize) -> Vec<u8> {
        (0..width * height)
            .flat_map(|i| {
                let v = if i % width < width / 2 { 20 } else { 220 };
                [v, v, (i % 7) as u8]
            })
            .collect()
    }

    /// Each row's stretch per tile from the first to the last pixel that differs.
    fn tile_moves(before: &[u8], after: &[u8], w: usize, h: usize) -> Vec<[u32; 3]> {
        let mut moves = Vec::new();
        for y in 0..h {
            for x0 in (0..w).step_by(SIGMA_STRETCH) {
                let xs: Vec<usize> = (x0..(x0 + SIGMA_STRETCH).min(w))
                    .filter(|&x| before[3 * (y * w + x)..][..3] != after[3 * (y * w + x)..][..3])
                    .collect();
                if let (Some(&a), Some(&b)) = (xs.first(), xs.last()) {
                    moves.push([y as u32, a as u32, b as u32 + 1]);
                }
            }
        }
        moves
    }

    #[test]
    fn kept_sums_equal_the_whole_frames_estimate() {
        let mut bits = crate::test_bits::lcg(7);
        let mut next = move || (bits() >> 33) as usize;
        for (w, h) in [(1, 1), (1, 40), (45, 1), (33, 17), (100, 64), (130, 9)] {
            for connectivity in [Connectivity::Four, Connectivity::Eight] {
                let (mut sums, mut told) = (SigmaSums::default(), SigmaSums::default());
                let mut rgb: Vec<u8> = (0..3 * w * h).map(|_| next() as u8).collect();
                for frame in 0..12 {
                    let before = rgb.clone();
                    // a few pixels, a run of a row, or nothing changes
                    for _ in 0..frame % 4 {
                        let i = next() % (w * h);
                        let run = 1 + next() % 40;
                        for b in &mut rgb[3 * i..(3 * (i + run)).min(3 * w * h)] {
                            *b = next() as u8;
                        }
                    }
                    // and one pixel at a stretch's edge, whose pairs reach the stretches
                    // beside it
                    let x = [31, 32, 63, 64, 95, 96][next() % 6].min(w - 1);
                    let p = 3 * ((next() % h) * w + x);
                    rgb[p] = rgb[p].wrapping_add(1 + next() as u8 % 200);
                    let kept = sums.estimate(&rgb, w, h, connectivity, None);
                    let whole = estimate_sigma(&rgb, w, h, connectivity);
                    assert_eq!(kept.to_bits(), whole.to_bits(), "{w}x{h} frame {frame}");
                    let moves = [tile_moves(&before, &rgb, w, h)];
                    let told = told.estimate(&rgb, w, h, connectivity, Some(&moves));
                    assert_eq!(
                        told.to_bits(),
                        whole.to_bits(),
                        "{w}x{h} frame {frame}, told"
                    );
                }
                // moves out of the frame are compared for, not read
                let bad = [vec![[h as u32, 0, 1], [0, 0, w as u32 + 1]]];
                let kept = told.estimate(&rgb, w, h, connectivity, Some(&bad));
                assert_eq!(
                    kept.to_bits(),
                    estimate_sigma(&rgb, w, h, connectivity).to_bits()
                );
                // another shape starts over
                let small = &rgb[..3 * w];
                let kept = sums.estimate(small, w, 1, connectivity, None);
                assert_eq!(kept, estimate_sigma(small, w, 1, connectivity));
            }
        }
    }

    #[test]
    fn weights_are_symmetric_valid_and_cut_at_edges() {
        let (w, h) = (9, 5);
        let rgb = frame(w, h);
        for conn in [Connectivity::Four, Connectivity::Eight] {
            let mut edges = vec![vec![-1; w * h]; conn.number() as usize];
            let params = Smoothness {
                connectivity: conn,
                lambda: 50.0,
                sigma: None,
                scale: 10.0,
            };
            params.fill_edges(&rgb, w, h, None, &mut edges, &mut WeightTables::default());
            let problem = GridProblem::from_arrays(
                w as u32,
                h as u32,
                conn,
                vec![0; w * h],
                vec![0; w * h],
                edges,
            )
            .expect("valid grid");
            for &dir in conn.directions() {
                for y in 0..h as u32 {
                    for x in 0..w as u32 {
                        let p = (y as usize) * w + x as usize;
                        if let Some(q) = problem.neighbour(x, y, dir) {
                            assert_eq!(problem.edges(dir)[p], problem.edges(dir.reverse())[q]);
                        }
                    }
                }
            }
            // Weak across the colour step, strong inside the flat halves.
            let east = problem.edges(Direction::East);
            assert!(east[w / 2 - 1] < east[0] / 10, "{east:?}");
            assert!(east[0] > 300);
        }
    }

    #[test]
    fn estimate_matches_the_one_used_by_fill() {
        let (w, h) = (9, 5);
        let rgb = frame(w, h);
        let params = Smoothness {
            connectivity: Connectivity::Eight,
            lambda: 1.0,
            sigma: None,
            scale: 1.0,
        };
        let used = params.fill_edges(
            &rgb,
            w,
            h,
            None,
            &mut vec![vec![0; w * h]; 8],
            &mut WeightTables::default(),
        );
        assert_eq!(estimate_sigma(&rgb, w, h, Connectivity::Eight), used);
    }

    #[test]
    fn arcs_between_fixed_pixels_are_dropped() {
        let rgb = vec![100u8; 3 * 6];
        let mut edges = vec![vec![0; 6]; 4];
        let params = Smoothness {
            connectivity: Connectivity::Four,
            lambda: 1.0,
            sigma: Some(5.0),
            scale: 10.0,
        };
        let fixed = [true, true, false, true, true, true];
        params.fill_edges(
            &rgb,
            3,
            2,
            Some(&fixed),
            &mut edges,
            &mut WeightTables::default(),
        );
        assert_eq!(edges[Direction::East.index()][..3], [0, 10, 0]);
        assert_eq!(edges[Direction::West.index()][..3], [0, 0, 10]);
        assert_eq!(edges[Direction::South.index()][..3], [0, 0, 10]);
        assert_eq!(edges[Direction::East.index()][3..], [0, 0, 0]);
    }

    #[test]
    fn fixed_sigma_and_diagonal_scaling() {
        let rgb = vec![100u8; 3 * 16];
        let mut edges = vec![vec![0; 16]; 8];
        let params = Smoothness {
            connectivity: Connectivity::Eight,
            lambda: 10.0,
            sigma: Some(5.0),
            scale: 10.0,
        };
        let sigma = params.fill_edges(&rgb, 4, 4, None, &mut edges, &mut WeightTables::default());
        assert_eq!(sigma, 5.0);
        assert_eq!(edges[Direction::East.index()][0], 100);
        assert_eq!(edges[Direction::SouthEast.index()][0], 71);
        assert_eq!(
            edges[Direction::East.index()][3],
            0,
            "off-grid arc stays zero"
        );
    }

    #[test]
    fn sigma_is_held_on_still_frames_within_its_band() {
        assert_eq!(
            hold_sigma(None, 12.0, true),
            12.0,
            "nothing held: the estimate"
        );
        assert_eq!(hold_sigma(Some(10.0), 10.9, true), 10.0);
        assert_eq!(
            hold_sigma(Some(10.0), 9.0, true),
            10.0,
            "the band's edge is inside"
        );
        assert_eq!(hold_sigma(Some(10.0), 11.5, true), 11.5, "out of the band");
        assert_eq!(
            hold_sigma(Some(10.0), 10.5, false),
            10.5,
            "a frame that moved"
        );
        assert!(is_still(Some(12), 100) && !is_still(Some(13), 100));
        assert!(!is_still(None, 100), "no gate: every pixel moves by noise");
    }
}

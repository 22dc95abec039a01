//! Temporal prior: in video, a pixel tends to keep the label it had in the previous
//! frame. Switching costs `weight · min(1, d / ramp)`, where d is the pixel's distance
//! (in pixels) to the previous mask's boundary: deep inside the old object or the old
//! background the label is held firmly, while near the old boundary, where a moving
//! object's edge will be, it is free to move. `ramp = 0` gives a uniform cost.

use crate::grid::{Mask, PixelRect};

/// Chamfer step costs (3-4 chamfer: straight 3, diagonal 4 ≈ 3√2), in thirds of a pixel.
const STRAIGHT: u32 = 3;
const DIAGONAL: u32 = 4;

/// Parameters of the temporal prior.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TemporalPrior {
    /// Cost (nats) of switching a pixel far from the old boundary; 0 = off.
    pub weight: f32,
    /// Distance (pixels) over which the cost rises from 0 at the old boundary.
    pub ramp: f32,
}

impl TemporalPrior {
    /// Adds the prior to the signed data capacities (background minus foreground cost
    /// per pixel, `scale` capacity units per nat): a pixel that was foreground gets the
    /// switching cost added to its background cost, and vice versa. The cost of each
    /// chamfer distance is rounded once, so it is an integer function of the previous
    /// mask alone and changes only where the mask's boundary moved. `distance` is a
    /// scratch buffer reused across frames.
    pub fn add_capacities(
        &self,
        previous: &Mask,
        scale: f32,
        distance: &mut Vec<u32>,
        data: &mut [i32],
    ) {
        if self.weight <= 0.0 {
            return;
        }
        boundary_distance(previous, distance);
        let ramp = self.ramp_table(scale);
        add_ramp(previous, &ramp, distance, 0, data);
    }

    /// Pixels beyond which a change of the previous mask leaves a pixel's prior as it
    /// was: the ramp, the boundary's own pixel, and one for rounding.
    pub fn reach(&self) -> u32 {
        self.ramp.max(0.0).ceil() as u32 + 2
    }
}

/// The prior's cost by chamfer distance, then the full cost past the ramp
/// ([`TemporalPrior::ramp_table`]).
pub(crate) type RampTable = (Vec<i32>, i32);

/// Adds the prior of `ramp` ([`TemporalPrior::ramp_table`]) to the capacities of pixels
/// `first..first + data.len()`, from the previous mask and their boundary distances
/// `distance` (one per pixel of `data`).
pub(crate) fn add_ramp(
    previous: &Mask,
    (table, full): &RampTable,
    distance: &[u32],
    first: usize,
    data: &mut [i32],
) {
    let was = &previous.data[first..first + data.len()];
    for ((&d, &label), value) in distance.iter().zip(was).zip(data.iter_mut()) {
        let cost = table.get(d as usize).copied().unwrap_or(*full);
        if label != 0 {
            *value += cost;
        } else {
            *value -= cost;
        }
    }
}

impl TemporalPrior {
    /// The prior's cost by chamfer distance from the previous boundary (in thirds of
    /// a pixel): the ramp's entries, then the full cost past its end.
    pub(crate) fn ramp_table(&self, scale: f32) -> RampTable {
        let full = (f64::from(self.weight) * f64::from(scale)).round() as i32;
        let ramp = (self.ramp.max(0.0) * STRAIGHT as f32).round() as u32;
        let table = (0..ramp)
            .map(|d| (f64::from(full) * f64::from(d) / f64::from(ramp)).round() as i32)
            .collect();
        (table, full)
    }
}

/// Chamfer distance (in thirds of a pixel) from every pixel to the nearest pixel on
/// the mask's boundary (a pixel with a 4-neighbour of the other label, which itself
/// gets 0). A mask with no boundary gets the largest value everywhere.
pub fn boundary_distance(mask: &Mask, distance: &mut Vec<u32>) {
    let whole = PixelRect {
        xs: 0..mask.width,
        ys: 0..mask.height,
    };
    boundary_distance_in(mask, &whole, distance);
}

/// [`boundary_distance`] of the part of `mask` in `window` alone (row-major over the
/// window; the mask outside it is not looked at): exact for the pixels farther
/// inside than the distances that matter, which is what a changed tile's prior needs
/// ([`TemporalPrior::reach`]).
pub(crate) fn boundary_distance_in(mask: &Mask, window: &PixelRect, distance: &mut Vec<u32>) {
    let stride = mask.width as usize;
    let w = window.xs.len();
    let h = window.ys.len();
    let far = u32::MAX / 2;
    distance.clear();
    distance.resize(w * h, far);
    let (x0, y0) = (window.xs.start as usize, window.ys.start as usize);
    let v = &mask.data;
    let line = |y: usize| &v[(y0 + y) * stride + x0..(y0 + y) * stride + x0 + w];
    // a row at a time, with no branch per pixel (it vectorises): a neighbour off the
    // window is the pixel itself, which never differs
    for (y, out) in distance.chunks_exact_mut(w.max(1)).enumerate().take(h) {
        let row = line(y);
        let up = if y > 0 { line(y - 1) } else { row };
        let down = if y + 1 < h { line(y + 1) } else { row };
        for x in 0..w {
            let (left, right) = (row[x.saturating_sub(1)], row[(x + 1).min(w - 1)]);
            let c = row[x];
            let differs = (left != c) | (right != c) | (up[x] != c) | (down[x] != c);
            out[x] = if differs { 0 } else { far };
        }
    }
    let d = distance;
    // Forward pass (neighbours above, then to the left), backward pass (below, then
    // to the right): each row first takes the finished row next to it, which
    // vectorises, then scans along itself; min commutes, so this equals the raster
    // order chamfer.
    if h == 0 {
        return;
    }
    scan_row(&mut d[..w], false);
    for y in 1..h {
        let (done, rest) = d.split_at_mut(y * w);
        relax_from_row(&mut rest[..w], &done[(y - 1) * w..]);
        scan_row(&mut rest[..w], false);
    }
    scan_row(&mut d[(h - 1) * w..], true);
    for y in (0..h - 1).rev() {
        let (head, done) = d.split_at_mut((y + 1) * w);
        relax_from_row(&mut head[y * w..], &done[..w]);
        scan_row(&mut head[y * w..], true);
    }
}

/// `row[x]` = min(itself, `other[x]` + straight, `other[x ± 1]` + diagonal): the
/// chamfer step from the finished neighbouring row.
fn relax_from_row(row: &mut [u32], other: &[u32]) {
    let w = row.len();
    for x in 0..w {
        row[x] = row[x].min(other[x] + STRAIGHT);
    }
    for x in 1..w {
        row[x] = row[x].min(other[x - 1] + DIAGONAL);
    }
    for x in 0..w.saturating_sub(1) {
        row[x] = row[x].min(other[x + 1] + DIAGONAL);
    }
}

/// The chamfer step along the row: left to right, or right to left (`backward`).
fn scan_row(row: &mut [u32], backward: bool) {
    let w = row.len();
    if backward {
        for x in (0..w.saturating_sub(1)).rev() {
            row[x] = row[x].min(row[x + 1] + STRAIGHT);
        }
    } else {
        for x in 1..w {
            row[x] = row[x].min(row[x - 1] + STRAIGHT);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The chamfer in plain raster order, pixel by pixel: the reference.
    fn raster_chamfer(mask: &Mask) -> Vec<u32> {
        let (w, h) = (mask.width as i64, mask.height as i64);
        let mut d = vec![u32::MAX / 2; (w * h) as usize];
        let v = &mask.data;
        let at = |x: i64, y: i64| (y * w + x) as usize;
        for y in 0..h {
            for x in 0..w {
                let p = at(x, y);
                let n4 = [(x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)];
                if n4
                    .iter()
                    .any(|&(a, b)| a >= 0 && b >= 0 && a < w && b < h && v[at(a, b)] != v[p])
                {
                    d[p] = 0;
                }
            }
        }
        let steps = [
            (-1, 0, STRAIGHT),
            (0, -1, STRAIGHT),
            (-1, -1, DIAGONAL),
            (1, -1, DIAGONAL),
        ];
        for pass in 0..2 {
            for i in 0..w * h {
                let i = if pass == 0 { i } else { w * h - 1 - i };
                let (x, y) = (i % w, i / w);
                for &(dx, dy, c) in &steps {
                    let (dx, dy) = if pass == 0 { (dx, dy) } else { (-dx, -dy) };
                    let (a, b) = (x + dx, y + dy);
                    if a >= 0 && b >= 0 && a < w && b < h {
                        d[at(x, y)] = d[at(x, y)].min(d[at(a, b)] + c);
                    }
                }
            }
        }
        d
    }

    #[test]
    fn row_passes_equal_the_raster_chamfer() {
        let mut bits = crate::test_bits::lcg(12345);
        for (w, h) in [(1, 1), (1, 9), (9, 1), (17, 13), (40, 31)] {
            for _ in 0..5 {
                let mask = Mask::from_fn(w, h, |_| (bits() >> 33).is_multiple_of(7));
                let mut fast = Vec::new();
                boundary_distance(&mask, &mut fast);
                assert_eq!(fast, raster_chamfer(&mask), "{w}x{h}");
            }
        }
    }

    #[test]
    fn distance_grows_away_from_the_boundary() {
        // Left 5 columns foreground of a 12x3 mask.
        let mask = Mask::from_fn(12, 3, |i| i % 12 < 5);
        let mut d = Vec::new();
        boundary_distance(&mask, &mut d);
        let row: Vec<u32> = d[12..24].to_vec();
        assert_eq!(row, vec![12, 9, 6, 3, 0, 0, 3, 6, 9, 12, 15, 18]);
    }

    #[test]
    fn prior_is_free_at_the_boundary_and_full_inside() {
        let mask = Mask::from_fn(12, 1, |i| i < 5);
        let prior = TemporalPrior {
            weight: 2.0,
            ramp: 2.0,
        };
        let mut data = vec![0; 12];
        prior.add_capacities(&mask, 10.0, &mut Vec::new(), &mut data);
        assert_eq!(data[4], 0);
        assert_eq!(data[3], 10, "halfway up the ramp");
        assert_eq!(data[0], 20, "old foreground: switching to background costs");
        assert_eq!(
            data[11], -20,
            "old background: switching to foreground costs"
        );
        let uniform = TemporalPrior {
            weight: 2.0,
            ramp: 0.0,
        };
        let mut data = vec![0; 12];
        uniform.add_capacities(&mask, 10.0, &mut Vec::new(), &mut data);
        assert_eq!(data[6], -20);
        assert_eq!(data[5], -20);
    }
}

//! A noise gate on frames: each pixel keeps the colour it had until one of its
//! channels moves by more than a threshold. Sensor noise alone changes every pixel of
//! a still camera's frames a little, and with them nearly every capacity of the
//! energy, so the engines' `update` finds everything changed and solves afresh. Behind
//! the gate the still parts of consecutive frames stay identical, and `update`
//! reworks only where the scene moved.

use crate::bands;
use crate::grid::TILE;
use std::sync::atomic::{AtomicU64, Ordering};

/// Sensor noise standard deviations within which [`threshold_for`] holds a pixel: two
/// noisy samples differ by √2 σ, so a still pixel passes this gate about once in
/// thousands of frames.
pub const GATE_SIGMAS: f32 = 5.0;

/// The gate threshold for a camera of sensor noise `noise` (grey levels, `None`
/// where unknown): the `chosen` one, raised to [`GATE_SIGMAS`] noise deviations where
/// the camera is noisier than it allows for. A gate below the noise lets a share of
/// every frame's still pixels through, and each such pixel costs the frame as much as
/// one that moved. 0 (the gate off) stays 0.
pub fn threshold_for(chosen: u8, noise: Option<f32>) -> u8 {
    if chosen == 0 {
        return 0;
    }
    let needed = noise.map_or(0.0, |n| (GATE_SIGMAS * n).ceil());
    chosen.max(needed.min(f32::from(u8::MAX)) as u8)
}

/// Holds the colours of the last gated frame.
#[derive(Clone, Debug, Default)]
pub struct NoiseGate {
    held: Vec<u8>,
    size: (u32, u32),
    /// Counts the frames held: each pass, hold and reset starts a new one.
    generation: u64,
    /// The last pass compared its frame with the one held before.
    compared: bool,
    /// Per band of rows, where the last pass changed the held colours.
    moves: Vec<Vec<[u32; 3]>>,
}

/// Where a pass of the gate changed the frame it holds: what a consumer of the gated
/// frames that kept the one before would otherwise find by comparing the two.
#[derive(Clone, Copy, Debug)]
pub struct GateMoves<'a> {
    /// The held frame's generation ([`NoiseGate::generation`]) after the pass; the
    /// stretches are its differences from generation − 1.
    pub generation: u64,
    /// Per band of rows, each row's changed stretch per tile of [`TILE`] pixels (its
    /// first to last changed pixel) as `[y, x0, x1]`, in row then column order.
    pub stretches: &'a [Vec<[u32; 3]>],
}

impl NoiseGate {
    /// Gates the RGB bytes of a `width`×`height` frame in place against the held
    /// colours and holds the result. A pixel whose channels all stay within
    /// `threshold` of the held ones takes the held colour; any other pixel keeps its
    /// own, which is held from then on. The first frame and a frame of another size
    /// pass unchanged; `threshold` 0 passes the frame and holds nothing. Returns how
    /// many pixels moved (all of a first frame; `None` with the gate off), as the
    /// device gate counts them.
    pub fn apply(&mut self, rgb: &mut [u8], width: u32, height: u32, threshold: u8) -> Option<u64> {
        let moved = self.pass(rgb, width, height, threshold);
        if moved.is_some() {
            bands::copy(rgb, &self.held, 3 * width as usize);
        }
        moved
    }

    /// [`Self::apply`] without writing the frame back: the gated frame is what the
    /// gate then holds, lent by [`Self::take_held`] (a still camera's frame is mostly
    /// held colours, so the pass only reads it where nothing moved).
    pub fn pass(&mut self, rgb: &[u8], width: u32, height: u32, threshold: u8) -> Option<u64> {
        if threshold == 0 {
            self.reset();
            return None;
        }
        self.generation += 1;
        self.compared = false;
        if self.size != (width, height) || self.held.len() != rgb.len() {
            self.held.clear();
            self.held.extend_from_slice(rgb);
            self.size = (width, height);
            return Some((rgb.len() / 3) as u64);
        }
        let row = 3 * width as usize;
        if row == 0 || height == 0 {
            self.moves.clear();
            self.compared = true;
            return Some(0);
        }
        let rows = bands::band_rows(height as usize);
        let count = self.held.len().div_ceil(rows * row).max(1);
        if self.moves.len() < count {
            self.moves.resize_with(count, Vec::new);
        }
        let moved = AtomicU64::new(0);
        let parts = (rgb.chunks(rows * row).zip(self.held.chunks_mut(rows * row)))
            .zip(self.moves.iter_mut())
            .enumerate()
            .collect();
        bands::for_each_part(parts, |(b, ((rgb, held), moves))| {
            moves.clear();
            let n = gate_rows(rgb, held, row, threshold, (b * rows) as u32, moves);
            moved.fetch_add(n, Ordering::Relaxed);
        });
        self.moves.truncate(count);
        self.compared = true;
        Some(moved.into_inner())
    }

    /// How the held frame is told apart from the one before (each pass, hold and
    /// reset starts a new generation).
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// Where the last pass changed the held frame, if it compared it with the one
    /// held before (not a first frame, one of a new size, or after a hold).
    pub fn moves(&self) -> Option<GateMoves<'_>> {
        self.compared.then_some(GateMoves {
            generation: self.generation,
            stretches: &self.moves,
        })
    }

    /// Lends the gated frame of the last [`Self::pass`] (the held colours); hand it
    /// back with [`Self::restore_held`], or the next frame passes ungated.
    pub fn take_held(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.held)
    }

    /// Takes back what [`Self::take_held`] lent.
    pub fn restore_held(&mut self, held: Vec<u8>) {
        self.held = held;
    }

    /// The held colours of a `width`×`height` frame, if any are held (for the device
    /// energy, which gates on the GPU, to go on from them).
    pub fn held(&self, width: u32, height: u32) -> Option<&[u8]> {
        let fits = self.size == (width, height) && !self.held.is_empty();
        fits.then_some(self.held.as_slice())
    }

    /// Holds `held`, the colours of a `width`×`height` frame (handed back by the device
    /// energy).
    pub fn hold(&mut self, held: Vec<u8>, width: u32, height: u32) {
        self.held = held;
        self.size = (width, height);
        self.generation += 1;
        self.compared = false;
    }

    /// Forgets the held colours: the next frame passes unchanged.
    pub fn reset(&mut self) {
        self.held.clear();
        self.generation += 1;
        self.compared = false;
    }
}

/// Gates a band of rows (`row` bytes each, the first row `y0`) against the held ones,
/// a tile of each row at a time, listing each tile's changed stretch in `moves`;
/// returns how many pixels moved.
fn gate_rows(
    rgb: &[u8],
    held: &mut [u8],
    row: usize,
    threshold: u8,
    y0: u32,
    moves: &mut Vec<[u32; 3]>,
) -> u64 {
    let tile = 3 * TILE as usize;
    let mut count = 0;
    let rows = rgb.chunks_exact(row).zip(held.chunks_exact_mut(row));
    for (y, (rgb, held)) in (y0..).zip(rows) {
        for (x0, (run, held)) in (0..)
            .step_by(TILE as usize)
            .zip(rgb.chunks(tile).zip(held.chunks_mut(tile)))
        {
            // a run whose bytes all stay within the threshold (most of a still frame)
            // is passed over after one compare that vectorises
            let stirred = run
                .iter()
                .zip(held.iter())
                .fold(false, |any, (&a, &b)| any | (a.abs_diff(b) > threshold));
            if !stirred {
                continue;
            }
            if let Some((n, xs)) = gate_run(run, held, threshold) {
                count += n;
                moves.push([y, x0 + xs.start, x0 + xs.end]);
            }
        }
    }
    count
}

/// Gates one run of pixels against the held ones; returns how many moved and the
/// first to the last that did, if any did. A whole tile's pixels are flagged at once
/// (byte flags, then a pixel's three folded: loops the compiler vectorises), and only
/// those that moved are copied.
fn gate_run(rgb: &[u8], held: &mut [u8], threshold: u8) -> Option<(u64, std::ops::Range<u32>)> {
    const PIXELS: usize = TILE as usize;
    const _: () = assert!(PIXELS <= 64, "a tile's pixels fit a word's bits");
    let (Ok(px), Ok(kept)) = (
        <&[u8; 3 * PIXELS]>::try_from(rgb),
        <&mut [u8; 3 * PIXELS]>::try_from(&mut *held),
    ) else {
        return gate_pixels(rgb, held, threshold);
    };
    let bytes: [u8; 3 * PIXELS] =
        std::array::from_fn(|i| u8::from(px[i].abs_diff(kept[i]) > threshold));
    let mut flags = [0u8; PIXELS];
    for (f, b) in flags.iter_mut().zip(bytes.chunks_exact(3)) {
        *f = b[0] | b[1] | b[2];
    }
    let mut moved = crate::bits::pack_nonzero(&flags);
    if moved == 0 {
        return None;
    }
    let xs = moved.trailing_zeros()..64 - moved.leading_zeros();
    let count = u64::from(moved.count_ones());
    while moved != 0 {
        let x = moved.trailing_zeros() as usize;
        moved &= moved - 1;
        kept[3 * x..3 * x + 3].copy_from_slice(&px[3 * x..3 * x + 3]);
    }
    Some((count, xs))
}

/// [`gate_run`] pixel by pixel, for a run shorter than a tile (a row's last).
fn gate_pixels(rgb: &[u8], held: &mut [u8], threshold: u8) -> Option<(u64, std::ops::Range<u32>)> {
    let mut count = 0;
    let mut xs: Option<std::ops::Range<u32>> = None;
    for (x, (px, held)) in (0..).zip(rgb.chunks_exact(3).zip(held.chunks_exact_mut(3))) {
        let moved = px
            .iter()
            .zip(held.iter())
            .any(|(&a, &b)| a.abs_diff(b) > threshold);
        if moved {
            count += 1;
            held.copy_from_slice(px);
            xs = Some(xs.map_or(x..x + 1, |r| r.start..x + 1));
        }
    }
    xs.map(|xs| (count, xs))
}

#[cfg(test)]
mod tests {
    use super::{NoiseGate, TILE, gate_pixels, gate_run, threshold_for};
    use crate::test_bits::lcg;

    /// A tile's pixels flagged at once move, count and copy as pixel by pixel: runs
    /// with none, one, some or every pixel past the threshold, at any threshold.
    #[test]
    fn a_tile_gates_as_its_pixels_one_by_one() {
        let mut bits = lcg(11);
        for case in 0..2000 {
            let n = 3 * TILE as usize;
            let rgb: Vec<u8> = (0..n).map(|_| (bits() >> 56) as u8).collect();
            let every = [1, 3, 40, 200][case % 4];
            let held: Vec<u8> = rgb
                .iter()
                .map(|&c| match bits() % every {
                    0 => (bits() >> 56) as u8,
                    _ => c.saturating_add((bits() % 6) as u8),
                })
                .collect();
            let threshold = [0, 5, 10, 254][case / 4 % 4];
            let (mut a, mut b) = (held.clone(), held);
            let tile = gate_run(&rgb, &mut a, threshold);
            assert_eq!(tile, gate_pixels(&rgb, &mut b, threshold), "case {case}");
            assert_eq!(a, b, "case {case}");
        }
    }

    #[test]
    fn a_noisy_camera_raises_the_gate() {
        assert_eq!(threshold_for(10, None), 10);
        assert_eq!(
            threshold_for(10, Some(1.5)),
            10,
            "a quiet camera keeps the chosen gate"
        );
        assert_eq!(threshold_for(10, Some(3.3)), 17);
        assert_eq!(threshold_for(0, Some(3.3)), 0, "off stays off");
        assert_eq!(threshold_for(10, Some(1e6)), 255);
    }

    #[test]
    fn small_changes_keep_the_held_colour_and_large_ones_replace_it() {
        let mut gate = NoiseGate::default();
        let mut first = vec![100, 100, 100, 50, 50, 50];
        gate.apply(&mut first, 2, 1, 8);
        assert_eq!(first, [100, 100, 100, 50, 50, 50]);
        // Pixel 0 moves by 8 at most (held), pixel 1 by 9 in one channel (taken).
        let mut second = vec![108, 92, 100, 50, 59, 50];
        gate.apply(&mut second, 2, 1, 8);
        assert_eq!(second, [100, 100, 100, 50, 59, 50]);
        // Measured against the held colours, not the last input: 59 + 8 still holds.
        let mut third = vec![107, 100, 100, 50, 67, 50];
        gate.apply(&mut third, 2, 1, 8);
        assert_eq!(third, [100, 100, 100, 50, 59, 50]);
    }

    #[test]
    fn a_new_size_a_reset_or_threshold_zero_pass_the_frame() {
        let mut gate = NoiseGate::default();
        gate.apply(&mut [10, 10, 10], 1, 1, 8);
        let mut wide = vec![12, 12, 12, 12, 12, 12];
        gate.apply(&mut wide, 2, 1, 8);
        assert_eq!(wide, [12; 6]);
        let mut off = vec![13, 13, 13, 13, 13, 13];
        gate.apply(&mut off, 2, 1, 0);
        assert_eq!(off, [13; 6]);
        gate.reset();
        let mut after = vec![14, 14, 14, 14, 14, 14];
        gate.apply(&mut after, 2, 1, 8);
        assert_eq!(after, [14; 6]);
    }

    #[test]
    fn runs_passed_over_and_runs_gated_pixel_by_pixel_agree_with_the_rule() {
        // 100 pixels (three runs and a short one); a few pixels move past the gate
        let (w, t) = (100u32, 8u8);
        let base: Vec<u8> = (0..3 * w).map(|i| (i * 7 % 200) as u8).collect();
        let mut gate = NoiseGate::default();
        gate.pass(&base, w, 1, t);
        let mut next = base.clone();
        for (i, v) in next.iter_mut().enumerate() {
            *v = v.wrapping_add(if i % 37 == 5 { 30 } else { (i % 3) as u8 * 4 });
        }
        assert_eq!(gate.pass(&next, w, 1, t), Some(8), "bytes 5, 42, 79 … 264");
        let held = gate.take_held();
        for p in 0..w as usize {
            let moved = (0..3).any(|c| next[3 * p + c].abs_diff(base[3 * p + c]) > t);
            let want = if moved { &next } else { &base };
            assert_eq!(held[3 * p..3 * p + 3], want[3 * p..3 * p + 3], "pixel {p}");
        }
        gate.restore_held(held);
        assert!(gate.held(w, 1).is_some());
    }

    #[test]
    fn the_moves_listed_are_where_the_held_frame_changed() {
        // widths a tile wide, not, and a band of rows over several bands
        for (w, h) in [(64u32, 3u32), (45, 70), (1, 5)] {
            let mut bits = crate::test_bits::lcg(u64::from(w));
            let mut next = move || (bits() >> 33) as usize;
            let mut frame: Vec<u8> = (0..3 * w * h).map(|_| next() as u8).collect();
            let mut gate = NoiseGate::default();
            gate.pass(&frame, w, h, 8);
            assert!(
                gate.moves().is_none(),
                "a first frame is compared with nothing"
            );
            for _ in 0..6 {
                let before = gate.held(w, h).expect("held").to_vec();
                for _ in 0..1 + next() % 30 {
                    let i = next() % frame.len();
                    frame[i] = frame[i].wrapping_add((next() % 40) as u8);
                }
                gate.pass(&frame, w, h, 8);
                let after = gate.held(w, h).expect("held");
                let moves = gate.moves().expect("compared");
                assert_eq!(moves.generation, gate.generation());
                let listed: Vec<[u32; 3]> = moves.stretches.iter().flatten().copied().collect();
                let mut want = Vec::new();
                for y in 0..h {
                    for x0 in (0..w).step_by(super::TILE as usize) {
                        let xs: Vec<u32> = (x0..(x0 + super::TILE).min(w))
                            .filter(|&x| {
                                let p = 3 * (y * w + x) as usize;
                                before[p..p + 3] != after[p..p + 3]
                            })
                            .collect();
                        if let (Some(&a), Some(&b)) = (xs.first(), xs.last()) {
                            want.push([y, a, b + 1]);
                        }
                    }
                }
                assert_eq!(listed, want, "{w}x{h}");
            }
            gate.reset();
            assert!(gate.moves().is_none(), "a reset forgets them");
        }
    }

    #[test]
    fn one_thread_and_two_gate_alike() {
        let (w, h, t) = (203u32, 151u32, 10u8);
        let mut bits = crate::test_bits::lcg(5);
        let mut noise = move || (bits() >> 59) as u8;
        let base: Vec<u8> = (0..3 * w * h).map(|i| (i * 13 % 251) as u8).collect();
        // noise everywhere, a block that moves past the gate in some frames
        let frames: Vec<Vec<u8>> = (0..4u32)
            .map(|k| {
                let mut f: Vec<u8> = base.iter().map(|&v| v.wrapping_add(noise())).collect();
                for y in 20 * k..20 * k + 40 {
                    let row = &mut f[(3 * w * y) as usize..][..3 * w as usize];
                    row[30 * 3..90 * 3]
                        .iter_mut()
                        .for_each(|v| *v = v.wrapping_add(99));
                }
                f
            })
            .collect();
        let run = |threads| {
            crate::bands::with_threads(threads, || {
                let mut gate = NoiseGate::default();
                let mut out = Vec::new();
                for f in &frames {
                    let mut f = f.clone();
                    let moved = gate.apply(&mut f, w, h, t);
                    let moves: Option<Vec<[u32; 3]>> = gate
                        .moves()
                        .map(|m| m.stretches.iter().flatten().copied().collect());
                    out.push((moved, f, moves));
                }
                out
            })
        };
        let one = run(1);
        assert!(
            one[1..]
                .iter()
                .all(|(moved, _, moves)| moved.is_some_and(|m| m > 0) && moves.is_some())
        );
        assert!(one == run(2) && one == run(3));
    }
}

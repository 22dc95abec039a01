//! Learned static background, for a fixed camera: the per-pixel mean and noise of N
//! frames of the empty scene. Afterwards a pixel that looks like its learned
//! background is cheap as background, and one that differs by more than about
//! [`THRESHOLD_SIGMAS`] noise deviations is cheaper as foreground.
//!
//! Made to hold up on real webcams:
//! - a global gain per channel (automatic exposure and white balance), estimated each
//!   frame from the pixels the previous mask left as background and held until it
//!   moves by more than [`GAIN_HYSTERESIS`], so a still scene keeps its capacities;
//! - shadows: a pixel darker than its background by a factor in
//!   [`SHADOW_MIN`]..1 is compared by chromaticity only;
//! - camera noise and JPEG blocks: each pixel's learned variance plus a floor
//!   ([`NOISE_FLOOR`]), a distance quantised to [`Z2_STEPS`] steps per unit, and a
//!   dead zone ([`STEADY_Z2`]) within which a pixel is exactly its background: its
//!   cost is that of z² = 0 and [`BackgroundModel::steady_rgb`] gives it the
//!   background's colour, so the still scene's capacities, contrast arcs included,
//!   stay the same from frame to frame and dynamic cuts pay;
//! - slow adaptation: background that has drifted out of the dead zone (but not past
//!   the threshold) moves its mean 1/2^[`ADAPT_SHIFT`] of the way to what it sees each
//!   frame, and a foreground pixel whose colour stays put for
//!   [`ABSORB_FRAMES`] frames (a moved chair) becomes background.
//!
//! Everything is integer arithmetic (means in 1/16 grey level, gains in 1/256) and the
//! cost comes from a table indexed by the quantised distance, so a GPU kernel computes
//! the very same capacities.

use crate::grid::Mask;

/// Fraction bits of the stored means: 1/16 grey level, fine enough for slow adaptation.
const MEAN_BITS: u32 = 4;

/// Fraction bits of the per-channel gains.
const GAIN_BITS: u32 = 8;

/// The gain of 1.
const UNIT_GAIN: u32 = 1 << GAIN_BITS;

/// Smallest change (in 1/256) of an estimated gain that replaces the held one: below
/// it the gain stays, so does every capacity of a still scene.
pub const GAIN_HYSTERESIS: u32 = 3;

/// Noise floor added to every learned variance (grey levels² per channel): the noise
/// and JPEG artefacts that a short learning period underestimates.
pub const NOISE_FLOOR: u32 = 200;

/// Normalised colour distance at which both labels cost the same.
pub const THRESHOLD_SIGMAS: u32 = 3;

/// Steps per unit of the squared normalised distance z² in the cost table.
pub const Z2_STEPS: u32 = 4;

/// z² below which a pixel counts as its background exactly (noise).
pub const STEADY_Z2: u32 = 4;

/// Largest z² told apart: beyond it a pixel is simply "different".
const MAX_Z2: u32 = 4 * THRESHOLD_SIGMAS * THRESHOLD_SIGMAS;

/// Darkest shadow, as a share (in 1/256) of the background's brightness: a pixel
/// between it and the background's brightness, of the same chromaticity, is
/// background in shadow.
pub const SHADOW_MIN: u32 = 215;

/// Brightest a pixel may be (in 1/256 of its background) to count as the background
/// in a lighter light, by chromaticity.
const SHADOW_MAX: u32 = 272;

/// A background pixel's mean moves 1/2^ADAPT_SHIFT of the way to its colour each frame
/// (a time constant of 32 frames, about one second at 30 fps).
pub const ADAPT_SHIFT: u32 = 5;

/// Frames a foreground pixel's colour must stay put before it becomes background
/// (20 s at 30 fps): long enough for a person sitting still, short enough for a moved
/// chair.
pub const ABSORB_FRAMES: u16 = 600;

/// Per-pixel statistics of the background, learned and then adapted.
#[derive(Clone, Debug)]
pub struct BackgroundModel {
    width: u32,
    height: u32,
    target: u32,
    frames: u32,
    /// While learning, per channel value: sum and sum of squares.
    sum: Vec<u64>,
    sum_sq: Vec<u64>,
    /// Per channel value: the mean, in 1/16 grey level.
    mean: Vec<u32>,
    /// Per pixel: [`Z2_STEPS`]·2^32 over its noise variance (mean over the channels,
    /// floor included) in (1/16 grey level)², so z² needs no division.
    inv_var: Vec<u64>,
    /// Per channel: held gain (1/256).
    gain: [u32; 3],
    /// Per pixel: quantised z² of the frame last observed.
    z2: Vec<u16>,
    /// Per pixel: frames its colour stayed put while foreground.
    still: Vec<u16>,
    /// The frame last observed (to see which colours stayed put).
    last_rgb: Vec<u8>,
    /// What the last `observe` computed `z2` from: the frame and the gain (empty: the
    /// next one computes every pixel). A pixel whose colour, mean and the gain stayed
    /// keeps its z², which is most of a still camera's frame behind the noise gate.
    observed: Vec<u8>,
    observed_gain: [u32; 3],
    /// Per pixel: its mean moved since the last `observe` (adaptation, absorption).
    moved_mean: Vec<bool>,
    /// Per stretch ([`STRETCH`] pixels of a row): the gain sums (seen, then expected
    /// colour) of its background-like pixels as of the last `observe`, redone only
    /// where a colour, mean, distance or the previous mask moved.
    stretch_sums: Vec<[u64; 6]>,
    /// Per stretch: its colours or means moved since the last frame (this `observe`'s
    /// scratch).
    stretch_moved: Vec<bool>,
    /// Per stretch: the last `observe` changed a z² of it (its gain sums are stale).
    z2_moved: Vec<bool>,
    /// The previous mask the last gain sums left out (empty: there was none).
    observed_previous: Vec<u8>,
    /// The frame last observed in its background's steady colours
    /// ([`Self::steady_rgb`]), kept up to date where it moved; empty while lent out.
    steady: Vec<u8>,
    /// Frames a still foreground pixel takes to become background.
    pub(crate) absorb_frames: u16,
    /// The camera's sensor noise seen while learning: the median over the pixels of
    /// their colours' standard deviation, in grey levels.
    noise: Option<f32>,
}

/// Signed capacities of the background term by quantised z², one table per weight.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CostTable {
    key: (u32, u32),
    /// Entry q: background cost minus foreground cost of a pixel at z² = q/Z2_STEPS.
    pub entries: Vec<i32>,
}

impl CostTable {
    /// The table for `weight` at `scale` capacity units per nat: background cost
    /// ½z² (capped at 2·T²), foreground cost ½T², each rounded to capacity units.
    pub fn new(weight: f32, scale: f32) -> Self {
        let unit = f64::from(weight.max(0.0)) * f64::from(scale);
        let t2 = f64::from(THRESHOLD_SIGMAS * THRESHOLD_SIGMAS);
        let fg = (unit * 0.5 * t2).round() as i32;
        let entries = (0..=MAX_Z2 * Z2_STEPS)
            .map(|q| (unit * 0.5 * f64::from(q) / f64::from(Z2_STEPS)).round() as i32 - fg)
            .collect();
        Self {
            key: (weight.to_bits(), scale.to_bits()),
            entries,
        }
    }

    fn fits(&self, weight: f32, scale: f32) -> bool {
        self.key == (weight.to_bits(), scale.to_bits()) && !self.entries.is_empty()
    }

    /// The signed capacity (background minus foreground) at quantised z² `q`.
    pub fn at(&self, q: u16) -> i32 {
        self.entries[usize::from(q).min(self.entries.len() - 1)]
    }

    /// Ensures `slot` holds the table for `weight` and `scale`.
    pub fn ensure(slot: &mut Self, weight: f32, scale: f32) {
        if !slot.fits(weight, scale) {
            *slot = Self::new(weight, scale);
        }
    }
}

impl BackgroundModel {
    /// Starts learning a `width`×`height` background over `frames` frames (at least 1).
    pub fn new(width: u32, height: u32, frames: u32) -> Self {
        let n = width as usize * height as usize;
        Self {
            width,
            height,
            target: frames.max(1),
            frames: 0,
            sum: vec![0; 3 * n],
            sum_sq: vec![0; 3 * n],
            mean: Vec::new(),
            inv_var: Vec::new(),
            gain: [UNIT_GAIN; 3],
            z2: vec![0; n],
            still: vec![0; n],
            last_rgb: Vec::new(),
            observed: Vec::new(),
            observed_gain: [UNIT_GAIN; 3],
            moved_mean: vec![false; n],
            stretch_sums: Vec::new(),
            stretch_moved: Vec::new(),
            z2_moved: Vec::new(),
            observed_previous: Vec::new(),
            steady: Vec::new(),
            absorb_frames: ABSORB_FRAMES,
            noise: None,
        }
    }

    /// The same model with another absorption time (frames; tests use short ones).
    pub fn with_absorb_frames(mut self, frames: u16) -> Self {
        self.absorb_frames = frames.max(1);
        self
    }

    /// Whether the model is for frames of this size.
    pub fn fits(&self, width: u32, height: u32) -> bool {
        (self.width, self.height) == (width, height)
    }

    /// Frames still to learn before the model is used.
    pub fn frames_left(&self) -> u32 {
        self.target - self.frames
    }

    /// Frames learned so far.
    pub fn frames_learned(&self) -> u32 {
        self.frames
    }

    /// Whether learning is complete.
    pub fn is_ready(&self) -> bool {
        self.frames >= self.target
    }

    /// The held per-channel gains, in 1/256.
    pub fn gain(&self) -> [u32; 3] {
        self.gain
    }

    /// Adds one frame (`rgb`, the model's size) while learning; returns whether the
    /// frame was taken (false once ready).
    pub fn learn(&mut self, rgb: &[u8]) -> bool {
        if self.is_ready() {
            return false;
        }
        self.frames += 1;
        for ((s, q), &v) in self.sum.iter_mut().zip(&mut self.sum_sq).zip(rgb) {
            *s += u64::from(v);
            *q += u64::from(v) * u64::from(v);
        }
        if self.is_ready() {
            self.finish_learning();
        }
        true
    }

    /// Turns the sums into means and noise variances.
    fn finish_learning(&mut self) {
        self.noise = Some(self.median_noise());
        let k = u64::from(self.frames);
        self.mean = self
            .sum
            .iter()
            .map(|&s| ((s << MEAN_BITS) + k / 2).div_euclid(k) as u32)
            .collect();
        self.inv_var = self
            .sum
            .chunks_exact(3)
            .zip(self.sum_sq.chunks_exact(3))
            .map(|(s, q)| {
                // Σ over channels of k·Σv² − (Σv)², divided by k² and 3: the mean
                // per-channel variance.
                let spread: u64 = s.iter().zip(q).map(|(&s, &q)| k * q - s * s).sum();
                let var = spread / (3 * k * k) + u64::from(NOISE_FLOOR);
                (u64::from(Z2_STEPS) << 32) / (var << (2 * MEAN_BITS))
            })
            .collect();
        self.sum = Vec::new();
        self.sum_sq = Vec::new();
        self.observed.clear();
    }

    /// The median over the pixels of their learned standard deviation (grey levels,
    /// the channels' mean variance, no floor): the camera's sensor noise, which moving
    /// things in view hardly shift.
    fn median_noise(&self) -> f32 {
        let k = u64::from(self.frames);
        if k < 2 {
            return 0.0;
        }
        let mut variances: Vec<u64> = self
            .sum
            .chunks_exact(3)
            .zip(self.sum_sq.chunks_exact(3))
            .map(|(s, q)| s.iter().zip(q).map(|(&s, &q)| k * q - s * s).sum::<u64>())
            .collect();
        if variances.is_empty() {
            return 0.0;
        }
        let mid = variances.len() / 2;
        let (_, &mut median, _) = variances.select_nth_unstable(mid);
        (median as f64 / (3 * k * (k - 1)) as f64).sqrt() as f32
    }

    /// The camera's sensor noise seen while learning (grey levels; `None` before
    /// learning is complete): what the noise gate must hold back.
    pub fn noise(&self) -> Option<f32> {
        self.noise.filter(|_| self.is_ready())
    }

    /// The learned background as RGB bytes (rounded means).
    pub fn mean_rgb(&self) -> Vec<u8> {
        self.mean
            .iter()
            .map(|&m| ((m + (1 << (MEAN_BITS - 1))) >> MEAN_BITS).min(255) as u8)
            .collect()
    }

    /// Looks at a frame before its cut: re-estimates the gains from the pixels that
    /// `previous` left as background (all pixels without one), computes every pixel's
    /// quantised distance to its background and the frame in steady colours
    /// ([`Self::take_steady`]). Only stretches of rows whose colours, means or
    /// previous labels moved are recomputed (all of them when the gain moves); the
    /// result equals a pass over every pixel.
    pub fn observe(&mut self, rgb: &[u8], previous: Option<&Mask>) {
        if !self.is_ready() {
            return;
        }
        let n = self.z2.len();
        let previous = previous.map(|m| m.data.as_slice()).filter(|p| p.len() == n);
        let stretches = self.stretches();
        let known = self.observed.len() == rgb.len()
            && self.stretch_sums.len() == stretches.count()
            && self.steady.len() == rgb.len();
        if !known {
            self.stretch_sums = vec![[0; 6]; stretches.count()];
            self.z2_moved = vec![true; stretches.count()];
            self.stretch_moved = vec![true; stretches.count()];
        }
        let previous_known = known
            && match previous {
                Some(p) => self.observed_previous.len() == p.len(),
                None => self.observed_previous.is_empty(),
            };
        self.sum_gain(rgb, previous, known, previous_known);
        let redo_all = !known || self.observed_gain != self.gain;
        if !known {
            self.steady.clear();
            self.steady.extend_from_slice(rgb);
            self.observed.clear();
            self.observed.extend_from_slice(rgb);
        }
        self.observe_moved(rgb, redo_all);
        self.observed_gain = self.gain;
        self.observed_previous.clear();
        if let Some(p) = previous {
            self.observed_previous.extend_from_slice(p);
        }
    }

    /// The stretches of this model's rows.
    fn stretches(&self) -> Stretches {
        Stretches {
            width: self.width as usize,
            height: self.height as usize,
        }
    }

    /// Row bands of this model's frames for [`crate::bands::for_each_part`]: pixels
    /// and stretches per band.
    fn band_sizes(&self) -> (usize, usize) {
        let rows = crate::bands::band_rows(self.height as usize);
        let width = self.width as usize;
        (rows * width, rows * width.div_ceil(STRETCH))
    }

    /// Re-estimates the gains from the stretch sums, redoing the sums of stretches
    /// whose inputs moved (every one where not `known`), and notes which stretches'
    /// colours or means moved; in row bands, in parallel.
    fn sum_gain(&mut self, rgb: &[u8], previous: Option<&[u8]>, known: bool, previous_known: bool) {
        let (pixels, stretches) = self.band_sizes();
        let width = self.width as usize;
        let bands = self.stretch_sums.len().div_ceil(stretches.max(1));
        let mut partial = vec![[0u64; 6]; bands];
        let parts: Vec<_> = self
            .stretch_moved
            .chunks_mut(stretches)
            .zip(self.stretch_sums.chunks_mut(stretches))
            .zip(self.z2_moved.chunks(stretches))
            .zip(partial.iter_mut())
            .enumerate()
            .collect();
        let (observed, moved_mean, observed_previous) =
            (&self.observed, &self.moved_mean, &self.observed_previous);
        let (z2, mean) = (&self.z2, &self.mean);
        crate::bands::for_each_part(
            parts,
            |(b, (((stretch_moved, stretch_sums), z2_moved), total))| {
                let first = b * pixels;
                let end = (first + pixels).min(z2.len());
                let band = Stretches {
                    width,
                    height: (end - first) / width.max(1),
                };
                let threshold = threshold_q();
                for (c, local) in band.iter().enumerate() {
                    let range = first + local.start..first + local.end;
                    let bytes = 3 * range.start..3 * range.end;
                    let moved = !known
                        || observed[bytes.clone()] != rgb[bytes.clone()]
                        || moved_mean[range.clone()].contains(&true);
                    stretch_moved[c] = moved;
                    let labels_moved = !previous_known
                        || previous
                            .is_some_and(|p| p[range.clone()] != observed_previous[range.clone()]);
                    if moved || labels_moved || z2_moved[c] {
                        let mut sums = [0u64; 6];
                        for i in range {
                            if previous.is_some_and(|p| p[i] != 0) || z2[i] > threshold {
                                continue;
                            }
                            for ch in 0..3 {
                                sums[ch] += u64::from(rgb[3 * i + ch]) << MEAN_BITS;
                                sums[3 + ch] += u64::from(mean[3 * i + ch]);
                            }
                        }
                        stretch_sums[c] = sums;
                    }
                    for (t, s) in total.iter_mut().zip(stretch_sums[c]) {
                        *t += s;
                    }
                }
            },
        );
        let (mut seen, mut expected) = ([0u64; 3], [0u64; 3]);
        for sums in &partial {
            for ch in 0..3 {
                seen[ch] += sums[ch];
                expected[ch] += sums[3 + ch];
            }
        }
        self.apply_gain_sums(seen, expected);
    }

    /// Recomputes the distances and steady colours of the stretches whose inputs
    /// moved (all of them where `redo_all`), keeps their colours as observed and notes
    /// which of them changed a distance; in row bands, in parallel.
    fn observe_moved(&mut self, rgb: &[u8], redo_all: bool) {
        let (pixels, stretches) = self.band_sizes();
        let (width, gain) = (self.width as usize, self.gain);
        let parts: Vec<_> = self
            .z2
            .chunks_mut(pixels)
            .zip(self.steady.chunks_mut(3 * pixels))
            .zip(self.observed.chunks_mut(3 * pixels))
            .zip(self.moved_mean.chunks_mut(pixels))
            .zip(self.z2_moved.chunks_mut(stretches))
            .zip(self.stretch_moved.chunks(stretches))
            .zip(
                self.mean
                    .chunks(3 * pixels)
                    .zip(self.inv_var.chunks(pixels)),
            )
            .zip(rgb.chunks(3 * pixels))
            .map(
                |(
                    ((((((z2, steady), observed), moved_mean), z2_moved), moved), (mean, inv_var)),
                    rgb,
                )| {
                    ObserveBand {
                        z2,
                        steady,
                        observed,
                        moved_mean,
                        mean,
                        inv_var,
                        rgb,
                        z2_moved,
                        moved,
                    }
                },
            )
            .collect();
        crate::bands::for_each_part(parts, |mut band: ObserveBand<'_>| {
            let rows = Stretches {
                width,
                height: band.z2.len() / width.max(1),
            };
            for (c, range) in rows.iter().enumerate() {
                if redo_all || band.moved[c] {
                    band.z2_moved[c] = band.observe_stretch(range, gain);
                }
            }
        });
    }

    /// The frame last observed in steady colours, lent out for its cut (hand it back
    /// with [`Self::restore_steady`], or the next `observe` redoes every pixel).
    pub fn take_steady(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.steady)
    }

    /// Takes back what [`Self::take_steady`] lent.
    pub fn restore_steady(&mut self, steady: Vec<u8>) {
        self.steady = steady;
    }

    /// The frame last observed with every pixel in the dead zone replaced by its
    /// background's colour (gain applied): the colours the contrast term sees, steady
    /// wherever the scene is. Computed over every pixel: what [`Self::take_steady`]
    /// keeps up to date.
    pub fn steady_rgb(&self, rgb: &[u8], out: &mut Vec<u8>) {
        out.clear();
        out.extend_from_slice(rgb);
        if !self.is_ready() {
            return;
        }
        for ((px, mean), &q) in out
            .chunks_exact_mut(3)
            .zip(self.mean.chunks_exact(3))
            .zip(&self.z2)
        {
            let steady = steady_colour(px, mean, self.gain, q);
            px.copy_from_slice(&steady);
        }
    }

    /// Takes the frame's gain from the sums of the seen and the expected colours over
    /// the pixels that look like background (the device energy sums them on the GPU).
    pub(crate) fn apply_gain_sums(&mut self, seen: [u64; 3], expected: [u64; 3]) {
        for c in 0..3 {
            if expected[c] == 0 {
                continue;
            }
            let estimate = ((seen[c] << GAIN_BITS) / expected[c]).min(4 * u64::from(UNIT_GAIN));
            let estimate = estimate as u32;
            if estimate.abs_diff(self.gain[c]) > GAIN_HYSTERESIS {
                self.gain[c] = estimate;
            }
        }
    }

    /// Takes the gain a device energy decided by [`Self::apply_gain_sums`]'s rule.
    pub(crate) fn set_gain(&mut self, gain: [u32; 3]) {
        self.gain = gain;
    }

    /// The per-pixel state, for the device energy; `None` until learned.
    pub(crate) fn state(&mut self) -> Option<ModelState<'_>> {
        if !self.is_ready() {
            return None;
        }
        // the device reads and writes the state: what `observe` kept no longer holds
        self.observed.clear();
        Some(ModelState {
            mean: &mut self.mean,
            inv_var: &self.inv_var,
            z2: &mut self.z2,
            still: &mut self.still,
            last_rgb: &mut self.last_rgb,
        })
    }

    /// Adds the background term to the signed data capacities (background minus
    /// foreground cost per pixel), read from `table` by the observed distances.
    pub fn add_capacities(&self, table: &CostTable, data: &mut [i32]) {
        self.add_capacities_from(table, 0, data);
    }

    /// [`Self::add_capacities`] for the pixels `first..first + data.len()` only.
    pub fn add_capacities_from(&self, table: &CostTable, first: usize, data: &mut [i32]) {
        if !self.is_ready() {
            return;
        }
        for (d, &q) in data.iter_mut().zip(&self.z2[first..]) {
            *d += table.at(q);
        }
    }

    /// Every pixel's quantised distance to its background as last observed (all 0
    /// until the model is ready): what the background term reads.
    pub fn observed_z2(&self) -> &[u16] {
        &self.z2
    }

    /// Learns from a frame's final mask: background that drifted (background in the
    /// mask, beyond the dead zone and within the threshold) adapts its mean; foreground that stays put for
    /// the absorption time becomes background.
    pub fn adapt(&mut self, rgb: &[u8], mask: &Mask) {
        if !self.is_ready() || mask.data.len() != self.z2.len() {
            return;
        }
        let had_last = self.last_rgb.len() == rgb.len();
        if !had_last {
            self.last_rgb.clear();
            self.last_rgb.extend_from_slice(rgb);
        }
        // What each channel value means without the gain, in 1/16 grey level.
        let ungained = self.gain.map(|g| {
            let g = g.max(1);
            (0..256u32)
                .map(|v| ((v << (MEAN_BITS + GAIN_BITS)) + g / 2) / g)
                .collect::<Vec<_>>()
        });
        let width = self.width as usize;
        let pixels = width * crate::bands::band_rows(self.height as usize);
        let parts = self
            .mean
            .chunks_mut(3 * pixels)
            .zip(self.still.chunks_mut(pixels))
            .zip(self.moved_mean.chunks_mut(pixels))
            .zip(self.last_rgb.chunks_mut(3 * pixels))
            .zip(self.z2.chunks(pixels).zip(rgb.chunks(3 * pixels)))
            .zip(mask.data.chunks(pixels))
            .map(
                |(((((mean, still), moved_mean), last_rgb), (z2, rgb)), mask)| AdaptBand {
                    mean,
                    still,
                    moved_mean,
                    last_rgb,
                    z2,
                    rgb,
                    mask,
                },
            )
            .collect();
        let absorb_frames = self.absorb_frames;
        crate::bands::for_each_part(parts, |band: AdaptBand<'_>| {
            band.adapt(width, had_last, absorb_frames, &ungained);
        });
    }
}

/// A band of whole rows of the model's state and of the frame it observes
/// ([`BackgroundModel::observe`]).
struct ObserveBand<'a> {
    z2: &'a mut [u16],
    steady: &'a mut [u8],
    observed: &'a mut [u8],
    moved_mean: &'a mut [bool],
    mean: &'a [u32],
    inv_var: &'a [u64],
    rgb: &'a [u8],
    /// Per stretch: a distance changed.
    z2_moved: &'a mut [bool],
    /// Per stretch: its colours or means moved.
    moved: &'a [bool],
}

impl ObserveBand<'_> {
    /// Recomputes the distances and steady colours of the band's pixels `range` at
    /// `gain` and keeps their colours as observed; returns whether a distance changed.
    fn observe_stretch(&mut self, range: std::ops::Range<usize>, gain: [u32; 3]) -> bool {
        let mut changed = false;
        for i in range.clone() {
            let px = &self.rgb[3 * i..3 * i + 3];
            let mean = &self.mean[3 * i..3 * i + 3];
            let q = observed_z2(px, mean, gain, self.inv_var[i]);
            changed |= q != self.z2[i];
            self.z2[i] = q;
            let steady = steady_colour(px, mean, gain, q);
            self.steady[3 * i..3 * i + 3].copy_from_slice(&steady);
        }
        let bytes = 3 * range.start..3 * range.end;
        self.observed[bytes.clone()].copy_from_slice(&self.rgb[bytes]);
        self.moved_mean[range].fill(false);
        changed
    }
}

/// A band of whole rows of the model's state and of the frame and mask it adapts to
/// ([`BackgroundModel::adapt`]): bands adapt on their own, in parallel.
struct AdaptBand<'a> {
    mean: &'a mut [u32],
    still: &'a mut [u16],
    moved_mean: &'a mut [bool],
    last_rgb: &'a mut [u8],
    z2: &'a [u16],
    rgb: &'a [u8],
    mask: &'a [u8],
}

impl AdaptBand<'_> {
    /// Adapts the band's stretches of rows `width` pixels wide.
    fn adapt(mut self, width: usize, had_last: bool, absorb_frames: u16, ungained: &[Vec<u32>; 3]) {
        let threshold = threshold_q();
        let stretches = Stretches {
            width,
            height: self.z2.len() / width.max(1),
        };
        for range in stretches.iter() {
            // a stretch all background, none of it counting still frames or drifted
            // past the dead zone, has nothing to learn
            let busy = self.mask[range.clone()].iter().any(|&m| m != 0)
                || self.still[range.clone()].iter().any(|&k| k != 0)
                || self.z2[range.clone()]
                    .iter()
                    .any(|&q| (1..=threshold).contains(&q));
            if busy {
                self.adapt_stretch(range.clone(), had_last, absorb_frames, ungained);
            }
            let bytes = 3 * range.start..3 * range.end;
            if self.last_rgb[bytes.clone()] != self.rgb[bytes.clone()] {
                self.last_rgb[bytes.clone()].copy_from_slice(&self.rgb[bytes]);
            }
        }
    }

    /// [`BackgroundModel::adapt`] for the pixels `range` of the band; `ungained` maps
    /// each channel's values to means.
    fn adapt_stretch(
        &mut self,
        range: std::ops::Range<usize>,
        had_last: bool,
        absorb_frames: u16,
        ungained: &[Vec<u32>; 3],
    ) {
        let threshold = threshold_q();
        for i in range {
            let px = &self.rgb[3 * i..3 * i + 3];
            let target = [
                ungained[0][usize::from(px[0])],
                ungained[1][usize::from(px[1])],
                ungained[2][usize::from(px[2])],
            ];
            let mean = &mut self.mean[3 * i..3 * i + 3];
            if self.mask[i] == 0 {
                self.still[i] = 0;
                // Within the dead zone the difference is noise: following it would
                // only make the steady colours jitter.
                if (1..=threshold).contains(&self.z2[i]) {
                    for (m, t) in mean.iter_mut().zip(target) {
                        *m = step_towards(*m, t);
                    }
                    self.moved_mean[i] = true;
                }
                continue;
            }
            let stayed = had_last && self.last_rgb[3 * i..3 * i + 3] == *px;
            self.still[i] = if stayed { self.still[i] + 1 } else { 0 };
            if self.still[i] >= absorb_frames {
                mean.copy_from_slice(&target);
                self.moved_mean[i] = true;
                self.still[i] = 0;
            }
        }
    }
}

/// Pixels per stretch of a row that `observe` and `adapt` take together: a stretch
/// whose inputs stayed keeps what was computed from them.
const STRETCH: usize = 32;

/// The stretches of a model's rows, row-major.
#[derive(Clone, Copy)]
struct Stretches {
    width: usize,
    height: usize,
}

impl Stretches {
    /// How many there are.
    fn count(self) -> usize {
        self.width.div_ceil(STRETCH) * self.height
    }

    /// Their pixel ranges, row-major.
    fn iter(self) -> impl Iterator<Item = std::ops::Range<usize>> {
        (0..self.height).flat_map(move |y| {
            (0..self.width).step_by(STRETCH).map(move |x| {
                let start = y * self.width + x;
                start..start + STRETCH.min(self.width - x)
            })
        })
    }
}

/// The colour the contrast term sees at a pixel of distance `q`: its background's
/// (gain applied) in the dead zone, else its own.
#[inline]
fn steady_colour(px: &[u8], mean: &[u32], gain: [u32; 3], q: u16) -> [u8; 3] {
    if q != 0 {
        return [px[0], px[1], px[2]];
    }
    let half = 1u32 << (MEAN_BITS + GAIN_BITS - 1);
    [0, 1, 2].map(|c| ((mean[c] * gain[c] + half) >> (MEAN_BITS + GAIN_BITS)).min(255) as u8)
}

/// The quantised z² at which both labels cost the same.
/// The background model's constants as NVRTC defines, so that the device energy
/// (`kernels/energy.cu`) computes with the same numbers.
pub(crate) fn kernel_defines() -> Vec<String> {
    [
        ("MEAN_BITS", MEAN_BITS),
        ("GAIN_BITS", GAIN_BITS),
        ("Z2_STEPS", Z2_STEPS),
        ("STEADY_Z2", STEADY_Z2),
        ("MAX_Z2", MAX_Z2),
        ("SHADOW_MIN", SHADOW_MIN),
        ("SHADOW_MAX", SHADOW_MAX),
        ("ADAPT_SHIFT", ADAPT_SHIFT),
        ("GAIN_HYSTERESIS", GAIN_HYSTERESIS),
    ]
    .iter()
    .map(|(name, value)| format!("-D{name}={value}u"))
    .collect()
}

/// The per-pixel state of a learned model, lent to the device energy, which keeps its
/// own copy while it runs and hands it back when it stops.
pub(crate) struct ModelState<'a> {
    /// Mean colour per channel, `MEAN_BITS` fractional bits.
    pub mean: &'a mut Vec<u32>,
    /// Inverse noise variance per pixel, scaled (see `quantised_z2`).
    pub inv_var: &'a [u64],
    /// Last frame's quantised distance per pixel.
    pub z2: &'a mut Vec<u16>,
    /// Frames a foreground pixel's colour has not changed.
    pub still: &'a mut Vec<u16>,
    /// Last adapted frame's colours (empty before the first).
    pub last_rgb: &'a mut Vec<u8>,
}

/// The distance at and below which a pixel counts as background for the gain
/// estimate and adaptation.
pub(crate) fn threshold_q() -> u16 {
    (THRESHOLD_SIGMAS * THRESHOLD_SIGMAS * Z2_STEPS) as u16
}

/// `mean` moved 1/2^[`ADAPT_SHIFT`] of the way to `target`, by one unit at least.
fn step_towards(mean: u32, target: u32) -> u32 {
    let gap = mean.abs_diff(target);
    let step = (gap >> ADAPT_SHIFT).max(gap.min(1));
    if target > mean {
        mean + step
    } else {
        mean - step
    }
}

/// A pixel's quantised distance to its background `mean` under `gain`: 0 in the dead
/// zone, where the distance is noise.
#[inline]
fn observed_z2(px: &[u8], mean: &[u32], gain: [u32; 3], inv_var: u64) -> u16 {
    let expected = [0, 1, 2].map(|c| (mean[c] * gain[c] + UNIT_GAIN / 2) >> GAIN_BITS);
    let seen = [0, 1, 2].map(|c| u32::from(px[c]) << MEAN_BITS);
    // the shadow test can only lower z², so a pixel whose plain distance is already in
    // the dead zone is steady without it (most of a still scene)
    let steady = |q: u64| q < u64::from(STEADY_Z2 * Z2_STEPS);
    let full = squared_distance(seen, expected);
    if steady((full * inv_var) >> 32) {
        return 0;
    }
    let q = quantised_z2(seen, expected, full, inv_var);
    if steady(u64::from(q)) { 0 } else { q }
}

/// Squared distance of a colour `seen` from its background `expected` (both in 1/16
/// grey level).
fn squared_distance(seen: [u32; 3], expected: [u32; 3]) -> u64 {
    (0..3)
        .map(|c| {
            let d = u64::from(seen[c].abs_diff(expected[c]));
            d * d
        })
        .sum()
}

/// z²·[`Z2_STEPS`] of a colour `seen` against its background `expected` (both in
/// 1/16 grey level; `full` their [`squared_distance`]), with `inv_var` =
/// [`Z2_STEPS`]·2^32 / variance, capped at the table's end. A pixel between
/// [`SHADOW_MIN`] and [`SHADOW_MAX`] of its background's brightness counts only its
/// distance from the background's chromaticity line, so the result is at most
/// `(full · inv_var) >> 32`.
fn quantised_z2(seen: [u32; 3], expected: [u32; 3], full: u64, inv_var: u64) -> u16 {
    let dot: u64 = (0..3)
        .map(|c| u64::from(seen[c]) * u64::from(expected[c]))
        .sum();
    let bb: u64 = expected.iter().map(|&b| u64::from(b) * u64::from(b)).sum();
    let mut distance = full;
    // The brightness ratio seen·b / |b|² against the shadow band, without dividing.
    let scaled = dot << GAIN_BITS;
    if bb > 0 && u64::from(SHADOW_MIN) * bb <= scaled && scaled <= u64::from(SHADOW_MAX) * bb {
        let cc: u64 = seen.iter().map(|&v| u64::from(v) * u64::from(v)).sum();
        // |seen|² − (seen·b)²/|b|²: the squared distance from the line through b.
        distance = distance.min(cc.saturating_sub(dot * dot / bb));
    }
    let q = (distance * inv_var) >> 32;
    q.min(u64::from(MAX_Z2 * Z2_STEPS)) as u16
}

#[cfg(test)]
mod tests {
    use super::*;

    fn learned(pixels: &[[u8; 3]], frames: u32) -> BackgroundModel {
        let mut model = BackgroundModel::new(pixels.len() as u32, 1, frames);
        let rgb: Vec<u8> = pixels.iter().flatten().copied().collect();
        for _ in 0..frames {
            model.learn(&rgb);
        }
        model
    }

    fn capacities(model: &mut BackgroundModel, rgb: &[u8], previous: Option<&Mask>) -> Vec<i32> {
        model.observe(rgb, previous);
        let mut data = vec![0; rgb.len() / 3];
        model.add_capacities(&CostTable::new(1.0, 10.0), &mut data);
        data
    }

    #[test]
    fn observing_and_adapting_in_bands_give_the_same_model_on_any_number_of_threads() {
        let (w, h) = (70u32, 53u32);
        let frame = |t: u32| -> Vec<u8> {
            (0..w * h * 3)
                .map(|i| ((i * 7 + t * (i % 5)) % 251) as u8)
                .collect()
        };
        let mut model = BackgroundModel::new(w, h, 3).with_absorb_frames(2);
        for t in 0..3 {
            model.learn(&frame(t % 2));
        }
        let mask = Mask::from_fn(w, h, |i| (i as u32 % w) > 40 && (i as u32 / w) > 20);
        let run = |threads: usize| {
            let mut m = model.clone();
            crate::bands::with_threads(threads, || {
                for t in 0..6 {
                    let rgb = frame(t / 2);
                    m.observe(&rgb, Some(&mask));
                    m.adapt(&rgb, &mask);
                }
            });
            let adapted = (m.mean.clone(), m.still.clone(), m.moved_mean.clone());
            let observed = (
                m.z2.clone(),
                m.steady.clone(),
                m.gain,
                m.stretch_sums.clone(),
            );
            (adapted, observed, m.last_rgb.clone())
        };
        let one = run(1);
        assert!(one.0.2.iter().any(|&moved| moved), "nothing adapted");
        assert_eq!(one, run(2));
        assert_eq!(one, run(3));
    }

    #[test]
    fn the_noise_is_the_median_pixels_spread() {
        let mut model = BackgroundModel::new(5, 1, 4);
        assert_eq!(model.noise(), None);
        for (f, v) in [10u8, 14, 10, 14].into_iter().enumerate() {
            // four still pixels two levels either side of 12, one that something crossed
            let mut rgb = vec![v; 15];
            rgb[12..].fill(if f == 1 { 250 } else { 0 });
            model.learn(&rgb);
        }
        let noise = model.noise().expect("learned");
        assert!((noise - (16.0f32 / 3.0).sqrt()).abs() < 1e-4, "{noise}");
    }

    #[test]
    fn learned_background_flags_changed_pixels() {
        let mut model = BackgroundModel::new(2, 1, 3);
        for v in [100u8, 102, 98] {
            assert!(!model.is_ready());
            assert!(model.learn(&[v, v, v, 10, 10, 10]));
        }
        assert!(model.is_ready());
        assert!(!model.learn(&[0; 6]), "a ready model takes no more frames");
        assert_eq!(model.frames_left(), 0);
        assert_eq!(model.mean_rgb(), [100, 100, 100, 10, 10, 10]);
        // Pixel 0 unchanged, pixel 1 turned bright.
        let changed = Mask::from_fn(2, 1, |i| i == 1);
        let data = capacities(&mut model, &[101, 99, 100, 200, 210, 190], Some(&changed));
        assert!(data[0] < 0, "unchanged pixel prefers background");
        assert!(data[1] > 0, "changed pixel prefers foreground");
    }

    #[test]
    fn unready_model_adds_nothing() {
        let mut model = BackgroundModel::new(1, 1, 2);
        assert_eq!(capacities(&mut model, &[1, 2, 3], None), [0]);
    }

    #[test]
    fn a_global_gain_is_compensated_and_held_within_the_hysteresis() {
        let pixels: Vec<[u8; 3]> = (0..20)
            .map(|i| [60 + 5 * i, 80 + 4 * i, 50 + 6 * i])
            .collect();
        let mut model = learned(&pixels, 2);
        let brighter: Vec<u8> = pixels
            .iter()
            .flatten()
            .map(|&v| (u32::from(v) * 5 / 4) as u8)
            .collect();
        let data = capacities(&mut model, &brighter, None);
        assert!(data.iter().all(|&d| d < 0), "{data:?}");
        let gain = model.gain()[0];
        assert!(gain.abs_diff(320) <= 2, "gain {gain}");
        // A change of a grey level in one pixel keeps the gain.
        let mut nudged = brighter.clone();
        nudged[0] += 1;
        capacities(&mut model, &nudged, None);
        assert_eq!(model.gain()[0], gain);
    }

    #[test]
    fn a_shadow_is_background_and_a_dark_object_is_not() {
        let wall = [240, 200, 160];
        let mut model = learned(&[wall; 4], 3);
        // 14 % darker: beyond the noise, within the shadow band.
        let shadow = [206, 172, 138];
        let other = [60, 90, 140];
        let black = [30, 30, 30];
        let rgb: Vec<u8> = [wall, shadow, other, black].into_iter().flatten().collect();
        // The previous mask keeps the gain from the unchanged pixel only.
        let previous = Mask::from_fn(4, 1, |i| i > 0);
        let data = capacities(&mut model, &rgb, Some(&previous));
        assert_eq!(model.gain(), [UNIT_GAIN; 3]);
        assert!(data[1] < 0, "shadow {data:?}");
        assert!(data[2] > 0, "other colour {data:?}");
        assert!(data[3] > 0, "much darker {data:?}");
    }

    #[test]
    fn uncovered_background_adapts_and_still_foreground_is_absorbed() {
        let mut model = learned(&[[100, 100, 100]; 12], 2).with_absorb_frames(5);
        // Pixel 0 drifts past the dead zone (background), pixel 1 is a chair put down,
        // the others stay.
        let mut rgb = vec![100; 36];
        rgb[..6].copy_from_slice(&[124, 124, 124, 20, 200, 20]);
        let mask = Mask::from_fn(12, 1, |i| i == 1);
        for _ in 0..100 {
            model.observe(&rgb, Some(&mask));
            model.adapt(&rgb, &mask);
        }
        assert!(model.mean_rgb()[0] > 102, "adapted into the dead zone");
        assert!(model.mean_rgb()[4] > 150, "absorbed (the gain taken out)");
        let data = capacities(&mut model, &rgb, Some(&mask));
        let steady = CostTable::new(1.0, 10.0).at(0);
        assert_eq!(data, [steady; 12], "all background, steadily");
    }

    #[test]
    fn the_table_is_signed_and_capped() {
        let table = CostTable::new(2.0, 10.0);
        assert_eq!(table.at(0), -90);
        assert_eq!(table.at(threshold_q()), 0);
        assert_eq!(table.at(u16::MAX), table.at((MAX_Z2 * Z2_STEPS) as u16));
    }

    /// `observe` keeps the z² of pixels whose colour, mean and gain stayed: on a
    /// sequence with noise, a square that moves and then stays (and is absorbed), a
    /// drifting region (adapted), and an exposure step it gives exactly the z² of
    /// computing every pixel.
    #[test]
    fn observing_only_what_changed_gives_every_pixels_z2() {
        let (w, h) = (24usize, 16usize);
        let frame = |k: usize| -> Vec<u8> {
            (0..w * h)
                .flat_map(|i| {
                    let (x, y) = (i % w, i / w);
                    // the square stops at frame 6 (and is absorbed); the bottom rows'
                    // red drifts beyond the dead zone (and adapts); a few pixels flicker by
                    // one; the exposure of two thirds steps up at frame 16 (a new gain for all)
                    let left = k.min(6);
                    let square = (left..left + 6).contains(&x) && (4..10).contains(&y);
                    let drift = if y >= 14 && k >= 3 { 35 } else { 0 };
                    let flicker = i32::from((i + k).is_multiple_of(11));
                    let exposure = if k >= 16 && x < 16 { 30 } else { 0 };
                    let base = if square { 220 } else { 60 + 4 * (x as i32 % 5) };
                    let v = base + flicker + exposure;
                    [0, 1, 2].map(|c| {
                        let red = if c == 0 { drift } else { 0 };
                        (v + 7 * c + red).clamp(0, 255) as u8
                    })
                })
                .collect()
        };
        let mut kept = BackgroundModel::new(w as u32, h as u32, 3).with_absorb_frames(3);
        for _ in 0..3 {
            kept.learn(&frame(0));
        }
        let (mut previous, mut adapted, mut absorbed) = (None::<Mask>, 0, 0);
        for k in 1..22 {
            let rgb = frame(k);
            let mut every = kept.clone();
            every.observed.clear();
            every.observe(&rgb, previous.as_ref());
            kept.observe(&rgb, previous.as_ref());
            assert_eq!(kept.z2, every.z2, "frame {k}");
            let mask = Mask::from_fn(w as u32, h as u32, |i| kept.z2[i] > threshold_q());
            let before = kept.mean.clone();
            kept.adapt(&rgb, &mask);
            let moved =
                (0..w * h).filter(|&i| kept.mean[3 * i..3 * i + 3] != before[3 * i..3 * i + 3]);
            for i in moved {
                if mask.is_source(i) {
                    absorbed += 1
                } else {
                    adapted += 1
                }
            }
            previous = Some(mask);
        }
        assert!(
            adapted > 0 && absorbed > 0,
            "adapted {adapted}, absorbed {absorbed}"
        );
    }
}

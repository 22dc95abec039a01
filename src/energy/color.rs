//! Colour models of the foreground and the background, learned from labelled pixels
//! (seeds, or a previous segmentation), and the per-pixel data costs −ln p(colour).
//!
//! Both kinds end up as a table over a quantised RGB cube, so a frame's data costs
//! cost one lookup per pixel whatever the model: a histogram *is* such a table, and a
//! Gaussian mixture is evaluated once per cube cell that a frame actually uses (at the
//! cell centre) and cached for later frames.

use super::gmm::Gmm;
use std::sync::atomic::{AtomicU64, Ordering};

/// Which colour model to learn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum ColorModelKind {
    /// Normalised colour histogram with `bits` bits per channel (2^(3·bits) bins),
    /// one pseudo-count per bin so unseen colours keep a finite cost.
    Histogram {
        /// Bits per channel, 1 to 7.
        bits: u8,
    },
    /// Gaussian mixture with `components` full-covariance components (GrabCut).
    Gmm {
        /// Number of components, 1 to 16.
        components: u8,
    },
}

impl ColorModelKind {
    /// Clamps the numbers into their supported ranges.
    fn sanitized(self) -> Self {
        match self {
            Self::Histogram { bits } => Self::Histogram {
                bits: bits.clamp(1, 7),
            },
            Self::Gmm { components } => Self::Gmm {
                components: components.clamp(1, 16),
            },
        }
    }

    /// Bits per channel of the cost table.
    fn table_bits(self) -> u32 {
        match self {
            Self::Histogram { bits } => bits as u32,
            Self::Gmm { .. } => GMM_TABLE_BITS,
        }
    }
}

/// Bits per channel of the cube a mixture is tabulated on (4 colour levels per cell).
const GMM_TABLE_BITS: u32 = 6;

/// Most samples a mixture is fitted on (an even subsample of larger sets).
const GMM_MAX_SAMPLES: usize = 40_000;

/// Pseudo-count added to every histogram bin.
const HISTOGRAM_PRIOR: f32 = 1.0;

/// Samples per cell each part of a histogram's count gets at least: with fewer, adding
/// up the parts' tables costs more than counting them on one core.
const SAMPLES_PER_CELL: usize = 8;

/// One learned colour distribution as a table of −ln p over the quantised cube.
#[derive(Clone, Debug)]
pub struct ColorModel {
    bits: u32,
    /// −ln density per cell; NaN = not evaluated yet (mixtures only).
    costs: Vec<f32>,
    gmm: Option<Gmm>,
}

impl ColorModel {
    /// Learns a model of `kind` from `samples` (at least one colour).
    pub fn learn(kind: ColorModelKind, samples: &[[u8; 3]]) -> Self {
        let kind = kind.sanitized();
        let bits = kind.table_bits();
        match kind {
            ColorModelKind::Histogram { .. } => Self::histogram(bits, samples),
            ColorModelKind::Gmm { components } => {
                let step = samples.len().div_ceil(GMM_MAX_SAMPLES).max(1);
                let subset: Vec<[u8; 3]> = samples.iter().step_by(step).copied().collect();
                Self {
                    bits,
                    costs: vec![f32::NAN; 1 << (3 * bits)],
                    gmm: Some(Gmm::fit(&subset, components as usize)),
                }
            }
        }
    }

    fn histogram(bits: u32, samples: &[[u8; 3]]) -> Self {
        let cells = 1usize << (3 * bits);
        let counts = cell_counts(samples, bits);
        let total = samples.len() as f32 + HISTOGRAM_PRIOR * cells as f32;
        // Density per unit colour volume, so costs do not depend on the bin size.
        let volume_ln = volume_ln(bits);
        let costs = counts
            .iter()
            .map(|&n| -((n as f32 + HISTOGRAM_PRIOR) / total).ln() + volume_ln)
            .collect();
        Self {
            bits,
            costs,
            gmm: None,
        }
    }

    /// −ln p(c) for one colour (evaluating and caching its cell if needed).
    pub fn cost(&mut self, c: [u8; 3]) -> f32 {
        self.cost_of_cell(cell(c, self.bits))
    }

    /// Evaluates the cells of every `stride`-th sample, for [`Self::known_cost`]
    /// (a histogram has every cell already).
    fn evaluate(&mut self, samples: &[[u8; 3]], stride: usize) {
        if self.gmm.is_some() {
            samples.iter().step_by(stride).for_each(|&c| {
                self.cost(c);
            });
        }
    }

    /// −ln p(c) for a colour whose cell is evaluated.
    fn known_cost(&self, c: [u8; 3]) -> f32 {
        self.costs[cell(c, self.bits)]
    }

    fn cost_of_cell(&mut self, index: usize) -> f32 {
        let cost = self.costs[index];
        if !cost.is_nan() {
            return cost;
        }
        let gmm = self
            .gmm
            .as_ref()
            .expect("only mixtures leave cells unevaluated");
        let cost = gmm.cost(cell_centre(index, self.bits)) as f32;
        self.costs[index] = cost;
        cost
    }
}

impl ColorModel {
    /// Whether [`Self::mix_in`] can take `other`: two histograms on the same cube.
    fn mixes_with(&self, other: &ColorModel) -> bool {
        self.gmm.is_none() && other.gmm.is_none() && self.bits == other.bits
    }

    /// Mixes `other`'s density (a histogram on the same cube, [`Self::mixes_with`])
    /// into this one with weight `weight`: 0 keeps this model, 1 takes `other`.
    fn mix_in(&mut self, other: &ColorModel, weight: f32) {
        let volume_ln = volume_ln(self.bits);
        let density = |cost: f32| (volume_ln - cost).exp();
        for (cost, &theirs) in self.costs.iter_mut().zip(&other.costs) {
            let mixed = (1.0 - weight) * density(*cost) + weight * density(theirs);
            *cost = volume_ln - mixed.ln();
        }
    }
}

/// Strided samples in a part of [`cost_gaps`]'s sum: a fixed number, so that the
/// sum's rounding does not depend on how many cores add the parts.
const GAP_PART: usize = 4096;

/// The sum of `model`'s cost less `fresh`'s over every `stride`-th sample (their cells
/// evaluated), in parts on every core, added in order.
fn cost_gaps(model: &ColorModel, fresh: &ColorModel, samples: &[[u8; 3]], stride: usize) -> f64 {
    let chunks = samples.chunks(GAP_PART * stride);
    let mut sums = vec![0f64; chunks.len()];
    let parts: Vec<_> = chunks.zip(sums.iter_mut()).collect();
    crate::bands::for_each_part(parts, |(chunk, sum)| {
        *sum = (chunk.iter().step_by(stride))
            .map(|&c| f64::from(model.known_cost(c) - fresh.known_cost(c)))
            .sum();
    });
    sums.iter().sum()
}

/// ln of a cube cell's colour volume with `bits` bits per channel: costs are densities
/// per unit colour volume, so they do not depend on the cell size.
fn volume_ln(bits: u32) -> f32 {
    3.0 * (8 - bits) as f32 * std::f32::consts::LN_2
}

/// How many of `samples` fall in each cell of a cube of `bits` bits per channel,
/// counted in parts on every core where there are many samples to a cell.
fn cell_counts(samples: &[[u8; 3]], bits: u32) -> Vec<u32> {
    let cells = 1usize << (3 * bits);
    let parts = (samples.len() / (SAMPLES_PER_CELL * cells)).clamp(1, crate::bands::threads());
    let mut tables = vec![vec![0u32; cells]; parts];
    let chunks = samples.chunks(samples.len().div_ceil(parts).max(1));
    let work: Vec<_> = chunks.zip(tables.iter_mut()).collect();
    crate::bands::for_each_part(work, |(chunk, table)| {
        for &c in chunk {
            table[cell(c, bits)] += 1;
        }
    });
    let mut tables = tables.into_iter();
    let mut counts = tables.next().unwrap_or_else(|| vec![0; cells]);
    for table in tables {
        counts.iter_mut().zip(table).for_each(|(n, m)| *n += m);
    }
    counts
}

/// Index of colour `c` in a cube of `bits` bits per channel.
fn cell(c: [u8; 3], bits: u32) -> usize {
    let s = 8 - bits;
    ((c[0] as usize >> s) << (2 * bits)) | ((c[1] as usize >> s) << bits) | (c[2] as usize >> s)
}

/// Centre colour of a cube cell.
fn cell_centre(index: usize, bits: u32) -> [f64; 3] {
    let mask = (1usize << bits) - 1;
    let size = (1usize << (8 - bits)) as f64;
    let at = |v: usize| v as f64 * size + (size - 1.0) / 2.0;
    [
        at(index >> (2 * bits)),
        at((index >> bits) & mask),
        at(index & mask),
    ]
}

/// The foreground and background models of one segmentation.
#[derive(Clone, Debug)]
pub struct ColorModels {
    /// Foreground (object) colours.
    pub foreground: ColorModel,
    /// Background colours.
    pub background: ColorModel,
    /// Which learning made these models (copies share it), so that an energy built
    /// from them can tell whether its data term is still theirs.
    generation: u64,
    /// Per colour cell, the quantised data capacity, filled as cells are met
    /// (`UNSEEN` until then): a pixel then costs one lookup instead of two costs and
    /// a rounding.
    capacities: Vec<i32>,
}

/// A cell of [`ColorModels::capacities`] not evaluated yet (no capacity is this low:
/// they are clamped to ±`MAX_DATA_NATS` in capacity units).
const UNSEEN: i32 = i32::MIN;

/// A generation no models had before (see [`ColorModels::generation`]).
fn next_generation() -> u64 {
    static LEARNED: AtomicU64 = AtomicU64::new(0);
    LEARNED.fetch_add(1, Ordering::Relaxed)
}

/// Which side a pixel's colour is a sample of when learning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Foreground sample.
    Foreground,
    /// Background sample.
    Background,
}

impl ColorModels {
    /// Learns both models from an RGB frame and a per-pixel side (`None` = not a
    /// sample). Returns `None` when either side has no sample.
    pub fn learn(
        kind: ColorModelKind,
        rgb: &[u8],
        side: impl Fn(usize) -> Option<Side>,
    ) -> Option<Self> {
        let mut fg = Vec::new();
        let mut bg = Vec::new();
        for (i, px) in rgb.chunks_exact(3).enumerate() {
            match side(i) {
                Some(Side::Foreground) => fg.push([px[0], px[1], px[2]]),
                Some(Side::Background) => bg.push([px[0], px[1], px[2]]),
                None => {}
            }
        }
        Self::from_samples(kind, &fg, &bg)
    }

    /// Learns both models from colour samples of each side. Returns `None` when
    /// either side has none.
    pub fn from_samples(kind: ColorModelKind, fg: &[[u8; 3]], bg: &[[u8; 3]]) -> Option<Self> {
        if fg.is_empty() || bg.is_empty() {
            return None;
        }
        Some(Self {
            foreground: ColorModel::learn(kind, fg),
            background: ColorModel::learn(kind, bg),
            generation: next_generation(),
            capacities: vec![UNSEEN; 1 << (3 * kind.sanitized().table_bits())],
        })
    }

    /// How much worse these models explain colour samples of each side than `fresh`
    /// (learned from them) does: the mean of the difference of their costs, in nats,
    /// over every `stride`-th sample. Near 0 while the scene keeps its colours; it
    /// grows as colours the models never saw come in.
    pub fn misfit(
        &mut self,
        fresh: &mut ColorModels,
        fg: &[[u8; 3]],
        bg: &[[u8; 3]],
        stride: usize,
    ) -> f64 {
        let stride = stride.max(1);
        let gaps = |model: &mut ColorModel, fresh: &mut ColorModel, samples: &[[u8; 3]]| {
            model.evaluate(samples, stride);
            fresh.evaluate(samples, stride);
            cost_gaps(model, fresh, samples, stride)
        };
        let f = gaps(&mut self.foreground, &mut fresh.foreground, fg);
        let b = gaps(&mut self.background, &mut fresh.background, bg);
        let n = fg.len().div_ceil(stride) + bg.len().div_ceil(stride);
        (f + b) / n.max(1) as f64
    }

    /// Mixes `fresh`'s densities into these with weight `weight` (histograms only: a
    /// mixture model is left as it is, `false`); the result is a new generation.
    pub fn mix_in(&mut self, fresh: &ColorModels, weight: f32) -> bool {
        if !(self.foreground.mixes_with(&fresh.foreground)
            && self.background.mixes_with(&fresh.background))
        {
            return false;
        }
        self.foreground.mix_in(&fresh.foreground, weight);
        self.background.mix_in(&fresh.background, weight);
        self.generation = next_generation();
        self.capacities.fill(UNSEEN);
        true
    }

    /// Which learning made these models: two models of the same generation give every
    /// colour the same costs.
    pub fn generation(&self) -> u64 {
        self.generation
    }

    /// The quantised data capacity of every colour cell (as [`super::EnergyBuilder`]
    /// gives a pixel of that cell), with the cells' bits per channel: the device
    /// energy's colour table.
    pub(crate) fn data_table(&mut self) -> (u32, Vec<i32>) {
        let bits = self.foreground.bits;
        let table = (0..1usize << (3 * bits))
            .map(|cell| self.capacity_of_cell(cell))
            .collect();
        (bits, table)
    }

    /// The quantised data capacity of colour cell `index`.
    fn capacity_of_cell(&mut self, index: usize) -> i32 {
        let known = self.capacities[index];
        if known != UNSEEN {
            return known;
        }
        let fg = self.foreground.cost_of_cell(index);
        let bg = self.background.cost_of_cell(index);
        let capacity = super::builder::data_capacity(fg, bg);
        self.capacities[index] = capacity;
        capacity
    }

    /// The quantised data capacity of colour `c` (as [`Self::data_table`] gives its
    /// cell), evaluating its cell if needed.
    pub(crate) fn data_capacity(&mut self, c: [u8; 3]) -> i32 {
        self.capacity_of_cell(cell(c, self.foreground.bits))
    }

    /// Writes the quantised data capacity of every pixel of `rgb` whose `wanted` flag
    /// is set into `out`, and 0 for the others, from the cells evaluated already:
    /// shared, so that bands of a frame look up at once. A wanted pixel whose cell is
    /// not evaluated yet gets 0 too, and its index plus `first` goes to `misses` for
    /// [`Self::data_capacity`] to add.
    pub(crate) fn known_data_capacities(
        &self,
        rgb: &[u8],
        wanted: impl Fn(usize) -> bool,
        first: usize,
        out: &mut [i32],
        misses: &mut Vec<u32>,
    ) {
        let bits = self.foreground.bits;
        for (i, (px, d)) in rgb.chunks_exact(3).zip(out.iter_mut()).enumerate() {
            let known = self.capacities[cell([px[0], px[1], px[2]], bits)];
            *d = if !wanted(i) {
                0
            } else if known == UNSEEN {
                misses.push((first + i) as u32);
                0
            } else {
                known
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_round_trip_through_centres() {
        for bits in [3, 4, 6] {
            for c in [[0u8, 0, 0], [255, 255, 255], [12, 200, 77]] {
                let centre = cell_centre(cell(c, bits), bits).map(|v| v.round() as u8);
                assert_eq!(cell(centre, bits), cell(c, bits));
            }
        }
    }

    #[test]
    fn cell_counts_are_one_count_per_sample() {
        let mut random = crate::test_bits::lcg(7);
        let mut next = || (random() >> 56) as u8;
        for len in [0, 1, 3, 4, 5, 9, 1000, 100_000] {
            // one colour often, among random ones
            let samples: Vec<[u8; 3]> = (0..len)
                .map(|i| {
                    if i % 3 == 0 {
                        [9, 9, 9]
                    } else {
                        [next(), next(), next()]
                    }
                })
                .collect();
            for bits in [1, 4, 6] {
                let mut expected = vec![0u32; 1 << (3 * bits)];
                samples.iter().for_each(|&c| expected[cell(c, bits)] += 1);
                for threads in 1..=3 {
                    let counts =
                        crate::bands::with_threads(threads, || cell_counts(&samples, bits));
                    assert_eq!(
                        counts, expected,
                        "{len} samples, {bits} bits, {threads} threads"
                    );
                }
            }
        }
    }

    #[test]
    fn the_misfit_is_the_mean_cost_gap_whatever_the_cores() {
        let mut random = crate::test_bits::lcg(11);
        let mut next = || (random() >> 56) as u8;
        let mut colours = |n: usize, base: [u8; 3]| -> Vec<[u8; 3]> {
            (0..n)
                .map(|_| base.map(|b| b.saturating_add(next() / 4)))
                .collect()
        };
        let (fg, bg) = (
            colours(30_000, [200, 20, 20]),
            colours(90_000, [20, 20, 200]),
        );
        let (fg2, bg2) = (
            colours(20_000, [180, 60, 20]),
            colours(70_000, [20, 90, 160]),
        );
        for kind in [
            ColorModelKind::Histogram { bits: 4 },
            ColorModelKind::Gmm { components: 3 },
        ] {
            let models = ColorModels::from_samples(kind, &fg, &bg).unwrap();
            let fresh = ColorModels::from_samples(kind, &fg2, &bg2).unwrap();
            let stride = 7;
            let (mut m, mut f) = (models.clone(), fresh.clone());
            let one_by_one: f64 = [(&fg2, true), (&bg2, false)]
                .iter()
                .flat_map(|(samples, fore)| {
                    samples.iter().step_by(stride).map(move |&c| (c, *fore))
                })
                .map(|(c, fore)| {
                    let (a, b) = if fore {
                        (m.foreground.cost(c), f.foreground.cost(c))
                    } else {
                        (m.background.cost(c), f.background.cost(c))
                    };
                    f64::from(a - b)
                })
                .sum::<f64>()
                / (fg2.len().div_ceil(stride) + bg2.len().div_ceil(stride)) as f64;
            let misfits: Vec<f64> = (1..=3)
                .map(|threads| {
                    let (mut m, mut f) = (models.clone(), fresh.clone());
                    crate::bands::with_threads(threads, || m.misfit(&mut f, &fg2, &bg2, stride))
                })
                .collect();
            assert!(one_by_one > 0.1, "{kind:?}: {one_by_one}");
            assert!(
                (misfits[0] - one_by_one).abs() < 1e-9,
                "{kind:?}: {misfits:?}, {one_by_one}"
            );
            assert!(
                misfits.iter().all(|m| m.to_bits() == misfits[0].to_bits()),
                "{kind:?}: {misfits:?}"
            );
        }
    }

    /// Models learned from a red object on blue, or on `background`.
    fn red_on(background: [u8; 3]) -> (ColorModels, Vec<u8>) {
        let rgb: Vec<u8> = [[250u8, 10, 10], background]
            .iter()
            .flat_map(|c| std::iter::repeat_n(*c, 20))
            .flatten()
            .collect();
        let side = |i: usize| {
            Some(if i < 20 {
                Side::Foreground
            } else {
                Side::Background
            })
        };
        let kind = ColorModelKind::Histogram { bits: 4 };
        (ColorModels::learn(kind, &rgb, side).unwrap(), rgb)
    }

    #[test]
    fn a_scene_that_keeps_its_colours_fits_and_one_that_changes_them_does_not() {
        let samples = |rgb: &[u8]| {
            let colours: Vec<[u8; 3]> = rgb.chunks_exact(3).map(|p| [p[0], p[1], p[2]]).collect();
            let (fg, bg) = colours.split_at(20);
            (fg.to_vec(), bg.to_vec())
        };
        let (mut models, rgb) = red_on([10, 10, 250]);
        let (mut same, _) = red_on([10, 10, 250]);
        let (fg, bg) = samples(&rgb);
        assert!(models.misfit(&mut same, &fg, &bg, 1).abs() < 1e-6);
        let (mut green, green_rgb) = red_on([10, 250, 10]);
        let (fg, bg) = samples(&green_rgb);
        let misfit = models.misfit(&mut green, &fg, &bg, 1);
        assert!(misfit > 1.0, "a background gone green: {misfit} nats");
    }

    #[test]
    fn mixing_in_moves_the_costs_towards_the_fresh_models() {
        let (blue, _) = red_on([10, 10, 250]);
        let (green, _) = red_on([10, 250, 10]);
        let g = [10u8, 250, 10];
        let cost = |m: &ColorModels| m.clone().background.cost(g);
        for (weight, expect) in [(0.0, cost(&blue)), (1.0, cost(&green))] {
            let mut mixed = blue.clone();
            assert!(mixed.mix_in(&green, weight));
            assert!((cost(&mixed) - expect).abs() < 1e-3, "weight {weight}");
            assert_ne!(mixed.generation(), blue.generation(), "a new generation");
        }
        let mut half = blue.clone();
        half.mix_in(&green, 0.5);
        assert!(cost(&green) < cost(&half) && cost(&half) < cost(&blue));
        let mixture = ColorModels::learn(ColorModelKind::Gmm { components: 2 }, &[10; 60], |i| {
            Some(if i < 10 {
                Side::Foreground
            } else {
                Side::Background
            })
        });
        let mut mixture = mixture.unwrap();
        let generation = mixture.generation();
        assert!(!mixture.mix_in(&green, 0.5), "mixtures are left alone");
        assert_eq!(mixture.generation(), generation);
    }

    #[test]
    fn models_prefer_their_own_colours() {
        for kind in [
            ColorModelKind::Histogram { bits: 4 },
            ColorModelKind::Gmm { components: 3 },
        ] {
            let rgb: Vec<u8> = [[250u8, 10, 10], [10, 10, 250]]
                .iter()
                .flat_map(|c| std::iter::repeat_n(*c, 20))
                .flatten()
                .collect();
            let mut models = ColorModels::learn(kind, &rgb, |i| {
                Some(if i < 20 {
                    Side::Foreground
                } else {
                    Side::Background
                })
            })
            .unwrap();
            // positive capacities pull towards the source (the foreground)
            let mut capacity = vec![0; 40];
            let mut misses = Vec::new();
            models.known_data_capacities(&rgb, |i| i != 1, 5, &mut capacity, &mut misses);
            let first = misses.clone();
            for &i in &first {
                let px = &rgb[3 * (i as usize - 5)..][..3];
                capacity[i as usize - 5] += models.data_capacity([px[0], px[1], px[2]]);
            }
            assert!(capacity[0] > 0 && capacity[39] < 0, "{kind:?}");
            assert_eq!(capacity[1], 0, "a pixel not wanted");
            assert!(
                !first.is_empty() && !first.contains(&6),
                "{kind:?}: unseen cells"
            );
            misses.clear();
            let mut again = vec![0; 40];
            models.known_data_capacities(&rgb, |i| i != 1, 5, &mut again, &mut misses);
            assert!(
                misses.is_empty(),
                "{kind:?}: every wanted cell evaluated once"
            );
            assert_eq!(again, capacity, "{kind:?}");
            let (_, table) = models.data_table();
            let red = cell([250, 10, 10], models.foreground.bits);
            assert_eq!(table[red], capacity[0], "the device's table agrees");
        }
    }

    #[test]
    fn one_sided_samples_learn_nothing() {
        let rgb = vec![1u8; 30];
        let kind = ColorModelKind::Histogram { bits: 4 };
        assert!(ColorModels::learn(kind, &rgb, |_| Some(Side::Foreground)).is_none());
    }
}

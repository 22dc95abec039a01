//! Assembles one frame's energy into an integer [`GridProblem`]: data costs from the
//! colour models, the learned background and the temporal prior; hard constraints on
//! seeded pixels; contrast-sensitive smoothness on the arcs.
//!
//! Quantisation: every term is in nats (negative log-probabilities; λ too) and becomes
//! a capacity of `round(CAPACITY_SCALE · nats)`, each term rounded on its own (the
//! colour models per pixel, the background and temporal terms through integer
//! tables), so a term that did not change leaves its capacities exactly as they
//! were. Terminal arcs are reparameterised (the
//! smaller of a pixel's two data costs is subtracted from both, which changes the
//! energy by a constant only), so each pixel has at most one non-zero terminal arc.
//! A seeded pixel's terminal arc is one more than the sum of its neighbour arcs: the
//! smallest capacity that no cut can afford, which keeps capacities (and the work of
//! push-relabel engines) small. Arcs between two seeded pixels are dropped (constant
//! energy), so the engines only see the unknown pixels and their seeded rim.

use super::background::{BackgroundModel, CostTable};
use super::color::ColorModels;
use super::seeds::{SeedLabel, Seeds};
use super::smoothness::{Smoothness, WeightTables};
use super::temporal::TemporalPrior;
use crate::grid::{GridError, GridProblem, Mask};

/// Capacity units per nat of energy.
pub const CAPACITY_SCALE: f32 = 10.0;

/// Largest data-cost difference (nats) a pixel may have; keeps capacities well inside
/// `i32` when a model gives a colour an absurd cost.
const MAX_DATA_NATS: f32 = 1.0e5;

/// The signed data capacity of a pixel whose colour costs `fg` and `bg` nats (positive:
/// towards the source), quantised; the device energy's colour table uses it too.
pub(crate) fn data_capacity(fg: f32, bg: f32) -> i32 {
    let diff = (bg - fg).clamp(-MAX_DATA_NATS, MAX_DATA_NATS) * CAPACITY_SCALE;
    diff.round() as i32
}

/// Everything one frame's energy is made of.
pub struct EnergyInputs<'a> {
    /// Frame width.
    pub width: u32,
    /// Frame height.
    pub height: u32,
    /// `width·height·3` bytes of RGB.
    pub rgb: &'a [u8],
    /// Smoothness term.
    pub smoothness: Smoothness,
    /// Colour models (data term), if learned.
    pub colors: Option<&'a mut ColorModels>,
    /// Hard constraints for this frame.
    pub seeds: Option<&'a Seeds>,
    /// Previous frame's mask and the prior's parameters.
    pub temporal: Option<(&'a Mask, TemporalPrior)>,
    /// Learned static background (observed on this frame) and its weight.
    pub background: Option<(&'a BackgroundModel, f32)>,
}

/// The arrays of a `GridProblem` (source, sink, per-direction edges), kept for reuse.
type ProblemArrays = (Vec<i32>, Vec<i32>, Vec<Vec<i32>>);

/// Builds grid problems frame after frame, reusing all its arrays.
#[derive(Debug, Default)]
pub struct EnergyBuilder {
    arrays: Option<ProblemArrays>,
    fg_cost: Vec<f32>,
    bg_cost: Vec<f32>,
    data: Vec<i32>,
    background_table: CostTable,
    distance: Vec<u32>,
    fixed: Vec<bool>,
    hard: Vec<i32>,
    sigma: f32,
    weights: WeightTables,
}

impl EnergyBuilder {
    /// A builder with no buffers yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// The σ of the last frame's smoothness term (estimated or given).
    pub fn last_sigma(&self) -> f32 {
        self.sigma
    }

    /// Hands a solved problem's arrays back for the next frame.
    pub fn recycle(&mut self, problem: GridProblem) {
        self.arrays = Some(problem.into_arrays());
    }

    /// Builds the frame's grid problem.
    pub fn build(&mut self, inputs: EnergyInputs<'_>) -> Result<GridProblem, GridError> {
        let EnergyInputs {
            width,
            height,
            rgb,
            smoothness,
            colors,
            seeds,
            temporal,
            background,
        } = inputs;
        let n = width as usize * height as usize;
        let dirs = smoothness.connectivity.number() as usize;
        let (mut source, mut sink, mut edges) = self.arrays.take().unwrap_or_default();
        source.resize(n, 0);
        sink.resize(n, 0);
        edges.resize_with(dirs, Vec::new);
        for e in &mut edges {
            e.resize(n, 0);
        }
        // Arcs between two seeded pixels only add a constant (never cut between equal
        // seeds, always cut between opposite ones): dropping them leaves the engine
        // the unknown pixels and their seeded rim.
        let fixed = seeds.map(|s| {
            self.fixed.clear();
            self.fixed
                .extend(s.labels.iter().map(|&l| l != SeedLabel::Unknown));
            self.fixed.as_slice()
        });
        self.sigma = smoothness.fill_edges(
            rgb,
            width as usize,
            height as usize,
            fixed,
            &mut edges,
            &mut self.weights,
        );

        let data = &mut self.data;
        data.clear();
        data.resize(n, 0);
        if let Some(models) = colors {
            let fg = &mut self.fg_cost;
            let bg = &mut self.bg_cost;
            fg.clear();
            fg.resize(n, 0.0);
            bg.clear();
            bg.resize(n, 0.0);
            let seeded = |i: usize| seeds.is_some_and(|s| s.labels[i] != SeedLabel::Unknown);
            models.data_costs(rgb, |i| !seeded(i), fg, bg);
            for ((d, &f), &b) in data.iter_mut().zip(fg.iter()).zip(bg.iter()) {
                *d = data_capacity(f, b);
            }
        }
        if let Some((model, weight)) = background {
            CostTable::ensure(&mut self.background_table, weight, CAPACITY_SCALE);
            model.add_capacities(&self.background_table, data);
        }
        if let Some((previous, prior)) = temporal {
            prior.add_capacities(previous, CAPACITY_SCALE, &mut self.distance, data);
        }
        for ((s, t), &d) in source.iter_mut().zip(sink.iter_mut()).zip(data.iter()) {
            (*s, *t) = if d > 0 { (d, 0) } else { (0, -d) };
        }
        if let Some(seeds) = seeds {
            // Arcs are symmetric, so the out-sum also bounds the arcs into a pixel.
            let hard = &mut self.hard;
            hard.clear();
            hard.resize(n, 1);
            for e in &edges {
                for (h, &c) in hard.iter_mut().zip(e) {
                    *h += c;
                }
            }
            for (i, label) in seeds.labels.iter().enumerate() {
                match label {
                    SeedLabel::Foreground => (source[i], sink[i]) = (hard[i], 0),
                    SeedLabel::Background => (source[i], sink[i]) = (0, hard[i]),
                    SeedLabel::Unknown => {}
                }
            }
        }
        GridProblem::from_arrays(width, height, smoothness.connectivity, source, sink, edges)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::color::{ColorModelKind, Side};
    use crate::grid::{Connectivity, Direction};

    fn smoothness() -> Smoothness {
        Smoothness {
            connectivity: Connectivity::Four,
            lambda: 5.0,
            sigma: None,
            scale: CAPACITY_SCALE,
        }
    }

    #[test]
    fn seeds_are_hard_and_data_terms_reparameterised() {
        // 4x1: red red blue blue; seeds on the two ends.
        let rgb = [200u8, 0, 0, 200, 0, 0, 0, 0, 200, 0, 0, 200];
        let mut seeds = Seeds::unknown(4, 1);
        seeds.labels[0] = SeedLabel::Foreground;
        seeds.labels[3] = SeedLabel::Background;
        let kind = ColorModelKind::Histogram { bits: 4 };
        let mut models = ColorModels::learn(kind, &rgb, |i| match seeds.labels[i] {
            SeedLabel::Foreground => Some(Side::Foreground),
            SeedLabel::Background => Some(Side::Background),
            SeedLabel::Unknown => None,
        })
        .unwrap();
        let mut builder = EnergyBuilder::new();
        let mut build = |builder: &mut EnergyBuilder| {
            builder
                .build(EnergyInputs {
                    width: 4,
                    height: 1,
                    rgb: &rgb,
                    smoothness: smoothness(),
                    colors: Some(&mut models),
                    seeds: Some(&seeds),
                    temporal: None,
                    background: None,
                })
                .unwrap()
        };
        let problem = build(&mut builder);
        let east = problem.edges(Direction::East);
        assert!(east[0] > 0, "seed to unknown arcs stay");
        assert_eq!(
            problem.edges(Direction::West)[1],
            east[0],
            "arcs are symmetric"
        );
        assert_eq!(problem.source()[0], 1 + east[0]);
        assert_eq!(problem.sink()[3], 1 + problem.edges(Direction::West)[3]);
        assert!(
            problem.source()[1] > 0 && problem.sink()[1] == 0,
            "red pixel leans fg"
        );
        assert!(
            problem.sink()[2] > 0 && problem.source()[2] == 0,
            "blue pixel leans bg"
        );
        // Arrays come back for the next frame and keep their size.
        builder.recycle(problem);
        let again = build(&mut builder);
        assert_eq!(again.pixels(), 4);
    }
}

//! Which terms of the energy changed a frame's capacities: the diagnosis of why the
//! frames of a still scene change more arcs than the scene did, which decides whether
//! a dynamic cut can pay. Each changed capacity is put down to the first cause that
//! explains it: the pixel's colour, the temporal prior, a hard seed, and else a
//! frame-wide number (σ for arcs; the colour models, the background's adaptation and
//! gain for terminals). Diagnostics only: the segmenter counts them when asked
//! (`livecut segment --json`), outside the timed stages.

use super::seeds::{SeedLabel, Seeds};
use super::temporal::TemporalPrior;
use crate::grid::{Direction, GridProblem, Mask};
use serde::Serialize;

/// One frame's changed capacities against the previous frame's, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct ChangeCensus {
    /// Neighbour arcs of the frame (each direction's arc once, as engines hold them).
    pub arcs: u64,
    /// Neighbour arcs whose capacity changed.
    pub arcs_changed: u64,
    /// Of those, arcs at a pixel whose colour changed (the scene).
    pub arcs_by_colour: u64,
    /// Of those, arcs at a seeded pixel of unchanged colour (seeds added or removed).
    pub arcs_by_seeds: u64,
    /// The rest: arcs between pixels of unchanged colour whose weight changed (σ, λ).
    pub arcs_by_weights: u64,
    /// Pixels whose terminal capacity (source minus sink) changed.
    pub terminals_changed: u64,
    /// Of those, pixels whose colour changed.
    pub terminals_by_colour: u64,
    /// Of those, pixels of unchanged colour whose temporal prior changed (the previous
    /// mask's boundary moved).
    pub terminals_by_prior: u64,
    /// Of those, seeded pixels (their hard capacity follows their arcs).
    pub terminals_by_seeds: u64,
    /// The rest: pixels of unchanged colour, prior and seeds (colour models, the
    /// learned background's adaptation and gain).
    pub terminals_by_model: u64,
    /// Pixels whose capacities the incremental energy recomputed (the boxes of its
    /// changed tiles, every pixel where it rebuilt the frame): what the frame cost,
    /// where the counts above say what it had to.
    pub recomputed: u64,
    /// Pixels whose colour passed the noise gate (`None` with the gate off): what moved
    /// in the frame, sensor noise above the gate included.
    pub passed_gate: Option<u64>,
    /// No previous frame of this shape: every capacity is new.
    pub whole: bool,
    /// More than half of the arcs changed: the frame changed throughout (a pan, a light
    /// switched on, σ estimated anew), and a dynamic cut has little to keep.
    pub throughout: bool,
}

/// What one frame's energy was made of, as the census reads it.
pub struct CensusInputs<'a> {
    /// The frame's problem.
    pub problem: &'a GridProblem,
    /// The RGB bytes the data term read (the gated frame).
    pub data_rgb: &'a [u8],
    /// The RGB bytes the smoothness term read (the gated frame, or its steady colours
    /// under a learned background).
    pub arc_rgb: &'a [u8],
    /// The previous mask and the prior's parameters, where the prior applied.
    pub temporal: Option<(&'a Mask, TemporalPrior)>,
    /// The frame's hard seeds.
    pub seeds: Option<&'a Seeds>,
}

/// The previous frame's energy, kept to compare the next one with; its buffers are
/// reused from frame to frame.
#[derive(Debug, Default)]
pub struct Census {
    shape: Option<(u32, u32, usize)>,
    terminals: Vec<i64>,
    edges: Vec<Vec<i32>>,
    data_rgb: Vec<u8>,
    arc_rgb: Vec<u8>,
    prior: Vec<i32>,
    distance: Vec<u32>,
    /// The frame being compared's terminals and prior (swapped with the kept ones).
    next_terminals: Vec<i64>,
    next_prior: Vec<i32>,
}

impl Census {
    /// Counts what changed since the last frame observed, and keeps this one.
    pub fn observe(&mut self, inputs: &CensusInputs<'_>) -> ChangeCensus {
        let p = inputs.problem;
        let (w, h) = (p.width(), p.height());
        let dirs = p.connectivity().number() as usize;
        let n = p.pixels();
        let mut prior = std::mem::take(&mut self.next_prior);
        self.prior_into(inputs.temporal, n, &mut prior);
        let mut terminals = std::mem::take(&mut self.next_terminals);
        terminals.clear();
        let pairs = p.source().iter().zip(p.sink());
        terminals.extend(pairs.map(|(&s, &t)| i64::from(s) - i64::from(t)));
        let mut census = ChangeCensus {
            arcs: (dirs * n) as u64,
            ..ChangeCensus::default()
        };
        let comparable = self.shape == Some((w, h, dirs))
            && self.data_rgb.len() == inputs.data_rgb.len()
            && self.arc_rgb.len() == inputs.arc_rgb.len();
        if comparable {
            self.count(inputs, &terminals, &prior, &mut census);
        } else {
            census.whole = true;
            census.arcs_changed = census.arcs;
            census.terminals_changed = n as u64;
        }
        census.throughout = 2 * census.arcs_changed > census.arcs;
        self.keep(inputs, terminals, prior);
        census
    }

    /// Keeps the frame just counted for the next comparison.
    fn keep(&mut self, inputs: &CensusInputs<'_>, terminals: Vec<i64>, prior: Vec<i32>) {
        let p = inputs.problem;
        let dirs = p.connectivity().number() as usize;
        self.shape = Some((p.width(), p.height(), dirs));
        self.next_terminals = std::mem::replace(&mut self.terminals, terminals);
        self.next_prior = std::mem::replace(&mut self.prior, prior);
        self.edges.resize_with(dirs, Vec::new);
        for (kept, &dir) in self.edges.iter_mut().zip(&Direction::ALL[..dirs]) {
            kept.clear();
            kept.extend_from_slice(p.edges(dir));
        }
        self.data_rgb.clear();
        self.data_rgb.extend_from_slice(inputs.data_rgb);
        self.arc_rgb.clear();
        self.arc_rgb.extend_from_slice(inputs.arc_rgb);
    }

    /// Forgets the kept frame: the next one counts as whole.
    pub fn reset(&mut self) {
        self.shape = None;
    }

    /// Each pixel's temporal prior into `out` (signed capacity toward the source; 0
    /// without one).
    fn prior_into(
        &mut self,
        temporal: Option<(&Mask, TemporalPrior)>,
        n: usize,
        out: &mut Vec<i32>,
    ) {
        out.clear();
        out.resize(n, 0);
        if let Some((previous, prior)) = temporal {
            prior.add_capacities(
                previous,
                crate::energy::CAPACITY_SCALE,
                &mut self.distance,
                out,
            );
        }
    }

    fn count(
        &self,
        inputs: &CensusInputs<'_>,
        terminals: &[i64],
        prior: &[i32],
        census: &mut ChangeCensus,
    ) {
        let p = inputs.problem;
        let width = p.width() as usize;
        let pixel =
            |rgb: &[u8], old: &[u8], i: usize| rgb[3 * i..3 * i + 3] != old[3 * i..3 * i + 3];
        let data_moved = |i: usize| pixel(inputs.data_rgb, &self.data_rgb, i);
        let arc_moved = |i: usize| pixel(inputs.arc_rgb, &self.arc_rgb, i);
        let seeded = |i: usize| {
            inputs
                .seeds
                .is_some_and(|s| s.labels[i] != SeedLabel::Unknown)
        };
        for (i, (&now, &before)) in terminals.iter().zip(&self.terminals).enumerate() {
            if now == before {
                continue;
            }
            census.terminals_changed += 1;
            if data_moved(i) || arc_moved(i) {
                census.terminals_by_colour += 1;
            } else if prior[i] != self.prior[i] {
                census.terminals_by_prior += 1;
            } else if seeded(i) {
                census.terminals_by_seeds += 1;
            } else {
                census.terminals_by_model += 1;
            }
        }
        for (k, &dir) in Direction::ALL[..self.edges.len()].iter().enumerate() {
            let (dx, dy) = dir.offset();
            let step = dy as isize * width as isize + dx as isize;
            for (i, (&now, &before)) in p.edges(dir).iter().zip(&self.edges[k]).enumerate() {
                if now == before {
                    continue;
                }
                census.arcs_changed += 1;
                // a changed arc has a capacity on one side: its far end is on the grid
                let q = (i as isize + step) as usize;
                if arc_moved(i) || (q < terminals.len() && arc_moved(q)) {
                    census.arcs_by_colour += 1;
                } else if seeded(i) || (q < terminals.len() && seeded(q)) {
                    census.arcs_by_seeds += 1;
                } else {
                    census.arcs_by_weights += 1;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::{CAPACITY_SCALE, EnergyBuilder, EnergyInputs, Smoothness};
    use crate::grid::Connectivity;

    /// A 6×4 frame: left half dark, right half bright.
    fn frame() -> Vec<u8> {
        (0..24)
            .flat_map(|i| if i % 6 < 3 { [20u8; 3] } else { [200u8; 3] })
            .collect()
    }

    fn census_of(
        builder: &mut EnergyBuilder,
        census: &mut Census,
        rgb: &[u8],
        sigma: f32,
    ) -> ChangeCensus {
        let problem = builder
            .build(EnergyInputs {
                width: 6,
                height: 4,
                rgb,
                smoothness: Smoothness {
                    connectivity: Connectivity::Four,
                    lambda: 5.0,
                    sigma: Some(sigma),
                    scale: CAPACITY_SCALE,
                },
                colors: None,
                seeds: None,
                temporal: None,
                background: None,
                rgb_moves: None,
            })
            .unwrap();
        let out = census.observe(&CensusInputs {
            problem: &problem,
            data_rgb: rgb,
            arc_rgb: rgb,
            temporal: None,
            seeds: None,
        });
        builder.recycle(problem);
        out
    }

    #[test]
    fn changes_are_put_down_to_colour_or_weights() {
        let (mut builder, mut census) = (EnergyBuilder::new(), Census::default());
        let rgb = frame();
        let first = census_of(&mut builder, &mut census, &rgb, 30.0);
        assert!(first.whole && first.throughout && first.arcs == 4 * 24);
        let same = census_of(&mut builder, &mut census, &rgb, 30.0);
        assert_eq!(
            same,
            ChangeCensus {
                arcs: 96,
                ..ChangeCensus::default()
            }
        );
        // one pixel brighter: only arcs at it change, all by colour
        let mut moved = rgb.clone();
        moved[3 * 7..3 * 8].copy_from_slice(&[120; 3]);
        let one = census_of(&mut builder, &mut census, &moved, 30.0);
        assert!(one.arcs_changed > 0 && one.arcs_changed <= 8, "{one:?}");
        assert_eq!(one.arcs_by_colour, one.arcs_changed);
        // another σ: arcs between unchanged pixels change by their weights
        let sigma = census_of(&mut builder, &mut census, &moved, 60.0);
        assert!(
            sigma.arcs_by_weights > 0 && sigma.arcs_by_colour == 0,
            "{sigma:?}"
        );
        assert!(!one.throughout && !sigma.throughout, "{sigma:?}");
        // a textured frame in place of the flat one: the frame changed throughout
        let textured: Vec<u8> = (0..moved.len()).map(|i| (i * 37 % 251) as u8).collect();
        let all = census_of(&mut builder, &mut census, &textured, 60.0);
        assert!(all.throughout && !all.whole, "{all:?}");
        // forgotten, the same frame again has nothing to be compared with
        census.reset();
        assert!(census_of(&mut builder, &mut census, &moved, 60.0).whole);
    }
}

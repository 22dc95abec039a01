//! Segmentation energy: colour models learned from seeds, data and contrast-sensitive
//! smoothness terms, optional temporal and static-background priors, quantised into an
//! integer [`crate::grid::GridProblem`] ([`EnergyBuilder`], scale [`CAPACITY_SCALE`]).

pub mod background;
pub mod builder;
pub mod census;
pub mod color;
pub mod crop;
pub mod cuda;
mod gmm;
pub mod plan;
pub mod seeds;
pub mod smoothness;
pub mod temporal;
pub mod volume;
pub mod wgpu;

pub use background::{BackgroundModel, CostTable};
pub use builder::{CAPACITY_SCALE, EnergyBuilder, EnergyInputs};
pub use census::{Census, CensusInputs, ChangeCensus};
pub use color::{ColorModel, ColorModelKind, ColorModels, Side};
pub use crop::Region;
pub use seeds::{SeedLabel, Seeds, SeedsError};
pub use smoothness::{
    MAX_SQUARED, SIGMA_BAND, STILL_FRACTION, SigmaSums, Smoothness, WeightTables, estimate_sigma,
    hold_sigma, is_still,
};
pub use temporal::TemporalPrior;

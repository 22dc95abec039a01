//! Segmentation energy: colour models learned from seeds, data and contrast-sensitive
//! smoothness terms, optional temporal and static-background priors, quantised into an
//! integer [`crate::grid::GridProblem`] (in progress).

pub mod seeds;

pub use seeds::{SeedLabel, Seeds, SeedsError};

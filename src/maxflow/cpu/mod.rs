//! Boykov–Kolmogorov on the CPU (in progress).
use super::{CutSide, Engine, EngineError, Solution};
use crate::grid::GridProblem;

/// Boykov–Kolmogorov max-flow on the compact blocked grid layout.
#[derive(Default)]
pub struct CpuEngine {}

impl CpuEngine {
    /// A new engine holding no problem yet.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Engine for CpuEngine {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn description(&self) -> String {
        "CPU (Boykov-Kolmogorov)".into()
    }
    fn cut_side(&self) -> CutSide {
        CutSide::ReachableFromSource
    }
    fn solve(&mut self, _problem: &GridProblem) -> Result<Solution, EngineError> {
        todo!()
    }
    fn update(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        self.solve(problem)
    }
}

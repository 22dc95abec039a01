//! Push-relabel on an NVIDIA GPU (in progress).
use super::{CutSide, Engine, EngineError, Solution};
use crate::grid::GridProblem;

/// Push-relabel max-flow on the GPU.
pub struct CudaEngine {}

impl CudaEngine {
    /// Opens the first CUDA device, or says why it cannot.
    pub fn new() -> Result<Self, EngineError> {
        Err(EngineError::CudaUnavailable("not built yet".into()))
    }
}

impl Engine for CudaEngine {
    fn name(&self) -> &'static str {
        "cuda"
    }
    fn description(&self) -> String {
        "CUDA".into()
    }
    fn cut_side(&self) -> CutSide {
        CutSide::CannotReachSink
    }
    fn solve(&mut self, _problem: &GridProblem) -> Result<Solution, EngineError> {
        todo!()
    }
    fn update(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        self.solve(problem)
    }
}

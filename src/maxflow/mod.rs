//! Exact grid max-flow engines behind one trait, and the DIMACS grid format.
//!
//! Every engine solves a [`GridProblem`] from scratch (`solve`) or continues from the
//! residual graph it kept from the previous call (`update`, dynamic graph cuts), and
//! reports the same statistics so the CLI, benchmarks and the app treat them alike.

pub mod cpu;
pub mod cuda;
pub mod dimacs;
mod pace;

use crate::gpu::{DeviceGrid, DeviceMask, GpuError};
use crate::grid::{GridProblem, Mask, ProblemChanges, VolumeProblem};
use serde::Serialize;
use std::time::Duration;
use thiserror::Error;

/// Which minimum cut an engine reports; both are unique for a given problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CutSide {
    /// Source side = pixels reachable from s in the final residual graph (smallest
    /// source set; the reference masks of the data use it).
    ReachableFromSource,
    /// Source side = pixels that cannot reach t in the final residual graph (largest
    /// source set; what push-relabel yields naturally).
    CannotReachSink,
}

impl CutSide {
    /// One-line description for people.
    pub fn describe(self) -> &'static str {
        match self {
            CutSide::ReachableFromSource => "source side = pixels reachable from s",
            CutSide::CannotReachSink => "source side = pixels that cannot reach t",
        }
    }
}

/// How many times each block of the grid was worked on during one call: the data
/// behind the app's heatmap of where the solver spent its effort.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct BlockActivity {
    /// Block width in pixels.
    pub block_width: u32,
    /// Block height in pixels.
    pub block_height: u32,
    /// Blocks per row.
    pub columns: u32,
    /// Block rows.
    pub rows: u32,
    /// Row-major count per block.
    pub counts: Vec<u32>,
}

/// Statistics of one `solve` or `update` call.
#[derive(Clone, Debug, Default, Serialize)]
pub struct SolveStats {
    /// Copying the problem into the engine's own layout (host→device for CUDA).
    pub upload_ms: f64,
    /// The max-flow computation alone.
    pub solve_ms: f64,
    /// Extracting the cut (device→host for CUDA).
    pub readback_ms: f64,
    /// Engine-specific iteration count (BK: augmentations; push-relabel: rounds).
    pub iterations: u64,
    /// Bytes of memory the engine holds for this problem.
    pub engine_bytes: u64,
    /// Whether this call continued from a kept residual graph.
    pub dynamic: bool,
    /// Arcs whose capacity changed since the previous call (dynamic calls only).
    pub changed_arcs: u64,
    /// Per-block activity for the heatmap, where the engine records it.
    pub activity: Option<BlockActivity>,
    /// What only the GPU engine counts (global relabels, launches, passes over the
    /// grid); `None` for the CPU engine.
    #[serde(flatten)]
    pub gpu: Option<cuda::GpuSolveStats>,
    /// Where the call stopped at its budget ([`Engine::set_budget`]) before the
    /// maximum flow: how far its cut can be from a minimum one. `None` where it ran to
    /// the end (the cut is minimum).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<Certificate>,
}

/// What a call stopped at its budget proves about its cut: the flow it pushed is at
/// most the maximum flow, which is at most the cut's capacity, so the minimum cut is
/// within `gap` of the cut returned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Certificate {
    /// Flow pushed from s to t so far.
    pub flow: u64,
    /// Capacity of the cut returned.
    pub cut: u64,
}

impl Certificate {
    /// How far the cut's capacity can be above the minimum: 0 means it is minimum.
    pub fn gap(&self) -> u64 {
        self.cut - self.flow
    }

    /// [`Self::gap`] as a share of the flow pushed (0 where no flow was pushed and
    /// the cut is empty).
    pub fn relative_gap(&self) -> f64 {
        match self.flow {
            0 if self.cut == 0 => 0.0,
            0 => f64::INFINITY,
            flow => self.gap() as f64 / flow as f64,
        }
    }
}

/// The answer of one call: the max-flow value, a minimum cut and the statistics.
#[derive(Clone, Debug)]
pub struct Solution {
    /// Max-flow value (= capacity of `mask`'s cut); the flow pushed so far where the
    /// call stopped at its budget (`stats.stopped`).
    pub flow: u64,
    /// Minimum cut, 255 on the source side; where the call stopped at its budget,
    /// the cut `stats.stopped` bounds.
    pub mask: Mask,
    /// What the call cost.
    pub stats: SolveStats,
}

/// Why an engine could not be created or could not solve.
#[derive(Debug, Error)]
pub enum EngineError {
    /// The GPU runtime could not do its part (no device, a driver call, a compilation).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The CUDA solve's kernels ended it without an answer.
    #[error("CUDA error: {0}")]
    Kernel(#[from] cuda::KernelFailure),
    /// The problem is too large for the engine.
    #[error("problem too large for the {engine} engine: {reason}")]
    TooLarge {
        /// Which engine refused it.
        engine: EngineKind,
        /// What limit was hit.
        reason: String,
    },
}

/// Which engine (or labeller) does the work: compared where the CPU and the GPU are
/// told apart, and written as `"cpu"` or `"cuda"` in reports and JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EngineKind {
    /// On the CPU.
    Cpu,
    /// On an NVIDIA GPU through CUDA.
    Cuda,
}

impl EngineKind {
    /// The short name used in reports and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            EngineKind::Cpu => "cpu",
            EngineKind::Cuda => "cuda",
        }
    }
}

impl std::fmt::Display for EngineKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An exact grid max-flow engine.
pub trait Engine: Send {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// Short name used in reports and JSON: `"cpu"` or `"cuda"`.
    fn name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// Longer description for people (e.g. the GPU's name).
    fn description(&self) -> String;

    /// Which minimum cut `Solution::mask` holds.
    fn cut_side(&self) -> CutSide;

    /// Exact max flow and minimum cut from scratch; the engine keeps the residual
    /// graph for a later `update`.
    fn solve(&mut self, problem: &GridProblem) -> Result<Solution, EngineError>;

    /// The capacities changed (same size and connectivity): continue from the kept
    /// residual graph. Gives the same flow value and cut as `solve`. Falls back to
    /// `solve` when nothing is kept or the grid's shape changed.
    fn update(&mut self, problem: &GridProblem) -> Result<Solution, EngineError>;

    /// Makes later calls stop their search once `budget` has passed since the call
    /// began, and return the cut of the state reached with a [`Certificate`]; the next
    /// call continues from that state. `None` (the default) runs every call to the
    /// exact answer. Returns whether this engine honours budgets (others stay exact).
    fn set_budget(&mut self, _budget: Option<Duration>) -> bool {
        false
    }

    /// [`Self::update`] told where the capacities can differ from the last problem's:
    /// only within a pixel of `changes`' tiles (an energy that knows what it
    /// recomputed says so). Engines that can, look only there; the others update as
    /// usual. Same flow and cut either way.
    fn update_changed(
        &mut self,
        problem: &GridProblem,
        _changes: ProblemChanges<'_>,
    ) -> Result<Solution, EngineError> {
        self.update(problem)
    }

    /// As [`Self::solve`] or, with `resume`, [`Self::update`], on capacities already on
    /// the device (the device energy's); `None` for engines that have no device, whose
    /// caller then builds the problem on the host.
    fn solve_device(
        &mut self,
        _grid: &DeviceGrid,
        _resume: bool,
    ) -> Option<Result<Solution, EngineError>> {
        None
    }

    /// Whether the engine has the stochastic-cuts scheme (skip idle blocks, revisit
    /// them every few rounds), so a UI can offer the switch only where it does something.
    fn has_stochastic(&self) -> bool {
        false
    }

    /// Turns stochastic cuts on or off for later calls (exact either way; only the
    /// work schedule changes). Engines without the scheme ignore it.
    fn set_stochastic(&mut self, _on: bool) {}

    /// The last solution's mask where the engine left it on the GPU, for a labeller on
    /// the same device to read without a copy; `None` for engines that keep none there.
    /// Borrowed, so it cannot outlive the engine's next call.
    fn device_mask(&self) -> Option<DeviceMask<'_>> {
        None
    }
}

/// An exact max-flow engine for volumes (W×H×D grids): the 3D sibling of [`Engine`],
/// with the same answer type (the mask is the canonical W × (H·D) one).
pub trait VolumeEngine: Send {
    /// Which engine this is.
    fn kind(&self) -> EngineKind;

    /// Longer description for people.
    fn description(&self) -> String;

    /// Which minimum cut `Solution::mask` holds.
    fn cut_side(&self) -> CutSide;

    /// Exact max flow and minimum cut from scratch; the engine keeps the residual
    /// graph for a later `update`.
    fn solve(&mut self, problem: &VolumeProblem) -> Result<Solution, EngineError>;

    /// The capacities changed (same shape): continue from the kept residual graph,
    /// giving the same flow value and cut as `solve`. Falls back to `solve` when
    /// nothing is kept or the shape changed.
    fn update(&mut self, problem: &VolumeProblem) -> Result<Solution, EngineError>;

    /// [`Self::solve`] of a problem the caller has no further use for: an engine that
    /// keeps the problem for `update` keeps this one instead of a copy.
    fn solve_owned(&mut self, problem: VolumeProblem) -> Result<Solution, EngineError> {
        self.solve(&problem)
    }
}

/// Creates the volume engine the user chose, as [`create_engine`] does for 2D grids:
/// `Auto` takes the CUDA engine where a device is present, else the CPU with a note.
pub fn create_volume_engine(
    choice: EngineChoice,
) -> Result<(Box<dyn VolumeEngine>, Option<String>), EngineError> {
    match choice {
        EngineChoice::Cpu => Ok((Box::new(cpu::CpuVolumeEngine::new()), None)),
        EngineChoice::Cuda => Ok((Box::new(cuda::CudaVolumeEngine::new()?), None)),
        EngineChoice::Auto => match cuda::CudaVolumeEngine::new() {
            Ok(engine) => Ok((Box::new(engine), None)),
            Err(err) => Ok((
                Box::new(cpu::CpuVolumeEngine::new()),
                Some(format!("{err}; using the CPU engine")),
            )),
        },
    }
}

/// Which engine the user asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum EngineChoice {
    /// CUDA when a device is present, else the CPU.
    #[default]
    Auto,
    /// Boykov–Kolmogorov on the CPU.
    Cpu,
    /// Push-relabel on an NVIDIA GPU.
    Cuda,
}

/// Creates the engine the user chose. Returns the engine and a note for people when
/// `Auto` fell back to the CPU (e.g. "no CUDA device: using the CPU engine").
pub fn create_engine(
    choice: EngineChoice,
) -> Result<(Box<dyn Engine>, Option<String>), EngineError> {
    match choice {
        EngineChoice::Cpu => Ok((Box::new(cpu::CpuEngine::new()), None)),
        EngineChoice::Cuda => Ok((Box::new(cuda::CudaEngine::new()?), None)),
        EngineChoice::Auto => match cuda::CudaEngine::new() {
            Ok(engine) => Ok((Box::new(engine), None)),
            Err(err) => Ok((
                Box::new(cpu::CpuEngine::new()),
                Some(format!("{err}; using the CPU engine")),
            )),
        },
    }
}

//! One frame → one mask: energy from the seeds and colour models, the cut (static or
//! dynamic), and connected-component cleanup. Used alike by the CLI, the worker thread
//! and the app (in progress: signatures are the contract, bodies are being written).

use crate::capture::Frame;
use crate::energy::Seeds;
use crate::grid::{Connectivity, Mask};
use crate::maxflow::{Engine, SolveStats};

/// User-facing segmentation parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SegmentParams {
    /// Smoothness weight λ.
    pub lambda: f32,
    /// Contrast σ; `None` estimates it from each frame.
    pub sigma: Option<f32>,
    /// 4- or 8-connected smoothness.
    pub connectivity: Connectivity,
    /// GrabCut-style re-estimation iterations on a still image (0 = one-shot cut).
    pub iterations: u32,
    /// Continue each frame from the previous frame's residual graph.
    pub dynamic: bool,
    /// Weight of the temporal prior from the previous mask (0 = off).
    pub temporal: f32,
    /// Drop foreground components smaller than this and fill smaller holes (pixels).
    pub cleanup_min_area: u32,
}

/// Milliseconds of each stage for one frame.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct StageTimings {
    /// Building the grid problem from the frame.
    pub energy_ms: f64,
    /// The engine's solve or update call.
    pub cut_ms: f64,
    /// Connected-component cleanup.
    pub cleanup_ms: f64,
}

/// The result for one frame.
#[derive(Clone, Debug)]
pub struct SegmentOutput {
    /// Final mask after cleanup (255 = foreground).
    pub mask: Mask,
    /// Max-flow value of the frame's energy.
    pub flow: u64,
    /// Stage timings.
    pub timings: StageTimings,
    /// The engine's statistics (iterations, activity, dynamic, changed arcs).
    pub stats: SolveStats,
}

/// Holds the engine, seeds, colour models and previous mask across frames.
pub struct Segmenter {
    engine: Box<dyn Engine>,
    params: SegmentParams,
    seeds: Option<Seeds>,
}

/// Why a frame could not be segmented.
#[derive(Debug, thiserror::Error)]
pub enum SegmentError {
    /// Seeds are missing a foreground or a background seed, or do not fit the frame.
    #[error("{0}")]
    Seeds(String),
    /// The engine failed.
    #[error(transparent)]
    Engine(#[from] crate::maxflow::EngineError),
}

impl Default for SegmentParams {
    fn default() -> Self {
        Self {
            lambda: 50.0,
            sigma: None,
            connectivity: Connectivity::Eight,
            iterations: 0,
            dynamic: true,
            temporal: 0.0,
            cleanup_min_area: 0,
        }
    }
}

impl Segmenter {
    /// A segmenter cutting with `engine`.
    pub fn new(engine: Box<dyn Engine>, params: SegmentParams) -> Self {
        Self {
            engine,
            params,
            seeds: None,
        }
    }

    /// New seeds (from a file or the user's scribbles); colour models are re-learned
    /// on the next frame.
    pub fn set_seeds(&mut self, seeds: Seeds) {
        self.seeds = Some(seeds);
    }

    /// New parameters, used from the next frame on.
    pub fn set_params(&mut self, params: SegmentParams) {
        self.params = params;
    }

    /// Swaps the engine (the next frame is solved from scratch).
    pub fn set_engine(&mut self, engine: Box<dyn Engine>) {
        self.engine = engine;
    }

    /// The engine's short name.
    pub fn engine_name(&self) -> &'static str {
        self.engine.name()
    }

    /// Segments one frame.
    pub fn segment(&mut self, _frame: &Frame) -> Result<SegmentOutput, SegmentError> {
        todo!("energy → cut → cleanup")
    }
}

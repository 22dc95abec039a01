//! The window's one seam to the segmentation worker: it starts the pipeline (capture
//! thread → latest-wins frame channel → worker) and turns the user's actions into
//! worker commands. Nothing else in the app touches threads of the pipeline.

use crate::capture::{FrameSource, SourceSpec};
use crate::compute::ComputeDevice;
use crate::energy::Seeds;
use crate::maxflow::{EngineChoice, create_engine};
use crate::pipeline::{
    Command, Event, Pipeline, PipelineOptions, SegmentParams, Segmenter, SourceId,
};

/// Handle on the running pipeline.
pub struct Backend {
    pipeline: Pipeline,
    /// The source last asked for: events of earlier ones are on their way from a
    /// source the user has already replaced.
    requested: SourceId,
    /// Parameters sent so far (see [`crate::pipeline::FrameResult::params`]).
    params_sent: u64,
}

impl Backend {
    /// Starts the worker on `source` with the CPU engine (always there, starts at once);
    /// the engine the user chose is then created on the worker thread, so CUDA start-up
    /// never delays the window.
    pub fn start(
        source: Box<dyn FrameSource>,
        params: SegmentParams,
        engine: EngineChoice,
    ) -> std::io::Result<Self> {
        let (cpu, _) = create_engine(EngineChoice::Cpu).map_err(std::io::Error::other)?;
        let segmenter = Segmenter::new(cpu, params);
        // Below the UI's priority: the window stays fluid when solving would take
        // every core, and the worker drops frames instead.
        let options = PipelineOptions {
            background: true,
            ..PipelineOptions::default()
        };
        let pipeline = Pipeline::start(segmenter, source, options)?;
        let backend = Self {
            pipeline,
            requested: SourceId::FIRST,
            params_sent: 0,
        };
        if engine != EngineChoice::Cpu {
            backend.set_engine(engine);
        }
        Ok(backend)
    }

    /// Lends a wgpu device to the energy beside the CPU engine.
    pub fn set_compute(&self, gpu: ComputeDevice) {
        self.pipeline.send(Command::SetCompute(gpu));
    }

    /// Everything the worker reported since the last call, oldest first.
    pub fn poll(&self) -> Vec<Event> {
        self.pipeline.events().try_iter().collect()
    }

    /// Whether `id` is the source last asked for (its events are current).
    pub fn is_current(&self, id: SourceId) -> bool {
        id == self.requested
    }

    /// New seeds drawn on the frames of `source`, used from the next frame (or at
    /// once on a paused frame) if that source is still the worker's.
    pub fn set_seeds(&self, source: SourceId, seeds: Seeds) {
        self.pipeline.send(Command::SetSeeds { source, seeds });
    }

    /// No usable seeds for `source`: its frames pass through unsegmented.
    pub fn clear_seeds(&self, source: SourceId) {
        self.pipeline.send(Command::ClearSeeds { source });
    }

    /// New parameters; returns how many have been sent, these included, which the
    /// results of frames cut with them carry.
    pub fn set_params(&mut self, params: SegmentParams) -> u64 {
        self.params_sent += 1;
        self.pipeline.send(Command::SetParams(params));
        self.params_sent
    }

    /// Switches the engine (created on the worker).
    pub fn set_engine(&self, engine: EngineChoice) {
        self.pipeline.send(Command::SetEngine(engine));
    }

    /// Switches the source (opened on the worker as the next [`SourceId`]).
    pub fn set_source(&mut self, spec: SourceSpec) {
        self.requested = self.requested.next();
        self.pipeline.send(Command::SetSource(spec));
    }

    /// Pauses or resumes taking frames.
    pub fn set_paused(&self, paused: bool) {
        self.pipeline.send(if paused {
            Command::Pause
        } else {
            Command::Resume
        });
    }

    /// Segments exactly one more frame, then stays paused.
    pub fn step(&self) {
        self.pipeline.send(Command::Step);
    }
}

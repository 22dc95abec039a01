//! One frame → one mask: energy from the seeds and colour models, the cut (static or
//! dynamic), and connected-component cleanup. Used alike by the CLI, the worker thread
//! and the app.
//!
//! A sequence starts with seeds (or a learned static background): the frame the seeds
//! arrive with is cut with the seeds as hard constraints and teaches the colour models;
//! later frames pass the noise gate (still pixels keep their colour), reuse those
//! models, add the temporal prior from the previous mask, and (with `dynamic`)
//! continue from the engine's residual graph.
//!
//! With a learned background (webcam mode) the first `background_frames` frames teach
//! the model and come out all background, flagged as learning; every later frame is cut
//! by the background term, the temporal prior and any seeds, which then hold as hard
//! constraints on every frame (an excluded region stays excluded).

mod device;

use super::gate::{NoiseGate, threshold_for};
use super::motion::{Motion, MotionEstimator, shifted};
use super::refresh::ModelRefresh;
use super::timing::FrameTiming;
use super::working::{reduce, restore, working_size};
use crate::capture::Frame;
use crate::ccl::{
    CclError, Cleaner, CleanupParams, CleanupReport, Constraints, CpuLabeller, CudaLabeller,
    Labeller, WgpuLabeller,
};
use crate::compute::{ComputeDevice, FrameOnDevice};
use crate::energy::plan::{EnergyDevice, GpuEnergy};
use crate::energy::{
    BackgroundModel, CAPACITY_SCALE, Census, CensusInputs, ChangeCensus, ColorModelKind,
    ColorModels, EnergyBuilder, EnergyInputs, Region, SeedLabel, Seeds, Side, SigmaSums,
    Smoothness, TemporalPrior, estimate_sigma, hold_sigma, is_still,
};
use crate::grid::{Connectivity, GridProblem, Mask};
use crate::maxflow::cpu::CpuEngine;
use crate::maxflow::{Engine, EngineError, EngineKind, Solution, SolveStats};
use device::device_energy_for;
use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Stochastic cuts in engines that have them (skip idle blocks, revisit them
    /// every few rounds); exact either way.
    pub stochastic: bool,
    /// Weight of the temporal prior from the previous mask (0 = off).
    pub temporal: f32,
    /// Drop foreground components smaller than this and fill smaller holes (pixels).
    pub cleanup_min_area: u32,
    /// Then close and open each mask with a 3×3 square: pinholes, one-pixel notches
    /// and specks go, so outlines flicker less (seeded pixels keep their labels).
    pub cleanup_smooth: bool,
    /// Colour model learned from the seeds.
    pub color_model: ColorModelKind,
    /// Distance (pixels) from the previous mask's boundary over which the temporal
    /// prior rises to its full weight (0 = uniform).
    pub temporal_ramp: f32,
    /// Drop foreground components that touch no foreground seed (on the seeded frame)
    /// or no foreground of the previous mask (later frames).
    pub drop_unanchored: bool,
    /// Frames of an empty scene to learn a static background from (0 = off; fixed
    /// camera only). Learning starts with the first frame after the setting.
    pub background_frames: u32,
    /// Weight of the learned-background data term.
    pub background_weight: f32,
    /// Largest change of a pixel's channels between frames still taken as sensor
    /// noise ([`NoiseGate`]; 0 = off): the still parts of a still camera's frames then
    /// stay identical, so dynamic updates pay. A learned background's camera noisier
    /// than this allows for raises it ([`threshold_for`]).
    pub noise_gate: u8,
    /// Cut at 1/k of the frame's width and height (1 = full size, at most
    /// [`super::MAX_WORKING_SCALE`]) and bring the mask back to full size along the
    /// frame's edges: for a machine that cannot keep up with the source.
    pub working_scale: u32,
    /// How long the engine may search each frame before it stops and returns the cut
    /// reached, with how far from minimum it can be (`None`: every cut exact); the
    /// next frame continues from there. Engines without budgets cut exactly.
    pub budget: Option<Duration>,
    /// Follow a moving camera: find how the foreground moved since the frame before and
    /// move the previous mask (the temporal prior) with it ([`super::motion`]). A
    /// still object, or one the camera follows, moves none and is cut as without it; a
    /// learned background (a still camera by definition) is never looked at.
    pub follow_motion: bool,
}

/// The result for one frame.
#[derive(Clone, Debug)]
pub struct SegmentOutput {
    /// Final mask after cleanup (255 = foreground).
    pub mask: Mask,
    /// Max-flow value of the frame's energy.
    pub flow: u64,
    /// Stage timings: `total_ms` is this call's, `decode_ms` 0 (the frame came decoded).
    pub timings: FrameTiming,
    /// Why the GPU engine was given up during this frame, which the CPU engine then cut
    /// (and cuts from now on); `None` on every other frame.
    pub fallback: Option<String>,
    /// The engine's statistics (iterations, activity, dynamic, changed arcs).
    pub stats: SolveStats,
    /// The frame taught the static background and was not cut: its mask is all
    /// background.
    pub learning: bool,
    /// The frame's changed capacities by cause, where the segmenter was asked to count
    /// them ([`Segmenter::set_census`]) and the energy was built on the CPU.
    pub census: Option<ChangeCensus>,
    /// The noise gate's threshold for this frame in grey levels (0: off): the chosen
    /// one or, for a noisier camera, what its noise needs.
    pub noise_gate: u8,
    /// The volume the frame was cut in, where the video is cut as volumes
    /// ([`super::volume`]); `flow` is then the volume's.
    pub volume: Option<super::volume::VolumeSpan>,
    /// Where the frame's energy was built.
    pub energy: EnergyDevice,
    /// What built it where a GPU did ("CUDA", or the wgpu adapter and its API).
    pub gpu: Option<String>,
    /// How the foreground moved since the frame before, where it was looked for
    /// ([`SegmentParams::follow_motion`]; not on a first frame or a learned background).
    pub motion: Option<Motion>,
    /// The frame's bytes where the wgpu energy left them on its device: a compositor
    /// on that device (the window's) draws from them without uploading the frame.
    pub frame_on_device: Option<Arc<FrameOnDevice>>,
}

/// Holds the engine, seeds, colour models and previous mask across frames.
pub struct Segmenter {
    engine: Box<dyn Engine>,
    params: SegmentParams,
    seeds: Option<Seeds>,
    /// The seeds have not been applied to a frame yet.
    seeds_pending: bool,
    models: Option<ColorModels>,
    previous: Option<Mask>,
    background: Option<BackgroundModel>,
    builder: EnergyBuilder,
    cleaner: Cleaner,
    labeller: Box<dyn Labeller>,
    /// The engine holds a residual graph that `update` may continue from.
    engine_warm: bool,
    /// Buffer for the RGB bytes of a cropped region.
    crop_rgb: Vec<u8>,
    /// How the last segmented frame started, to redo it the same way.
    last: Option<LastFrame>,
    /// Holds still pixels' colours across frames.
    gate: NoiseGate,
    /// Why the GPU engine was given up during the frame being segmented.
    fallback: Option<String>,
    /// σ of the learned background's mean image, the smoothness σ in background mode.
    background_sigma: Option<f32>,
    /// σ held from frame to frame where it is estimated ([`hold_sigma`]); `None` at
    /// the start of a sequence.
    held_sigma: Option<f32>,
    /// The sums behind the frames' σ estimates, redone where a frame changed.
    sigma_sums: SigmaSums,
    /// When the colour models are next looked at for their fit to the scene.
    refresh: ModelRefresh,
    /// Pixels that moved behind the noise gate in the frame being segmented (`None`
    /// with the gate off).
    gate_moved: Option<u64>,
    /// The gate's generation of the frame being segmented on the CPU, if it passed
    /// the gate: where it differs from the one before, the gate says.
    gated: Option<u64>,
    /// The gate's generation of the frame the energy was last built from, where that
    /// was the gated frame itself.
    gate_built: Option<u64>,
    /// The gate's generation of the frame σ's sums were last kept for, likewise.
    gate_summed: Option<u64>,
    /// The video frames' energy on a GPU: CUDA beside a CUDA engine where it loads,
    /// wgpu beside the CPU engine where a compute device was given.
    device: Option<Box<dyn GpuEnergy>>,
    /// The wgpu device for the energy beside the CPU engine, if any.
    compute: Option<ComputeDevice>,
    /// Whether video frames use `device` (on by default).
    device_energy: bool,
    /// The last frame's energy was built on the device.
    on_device: bool,
    /// Changes whenever `models` does (the device energy re-tables them then).
    models_version: u64,
    /// Changes whenever `previous` does (the device energy uploads it only then).
    previous_version: u64,
    /// Changes whenever new seeds are set (the device energy uploads them only then).
    seeds_version: u64,
    /// Counts each frame's changed capacities by cause, where asked.
    census: Option<Census>,
    /// The census of the frame being segmented.
    frame_census: Option<ChangeCensus>,
    /// Frames recompute only their changed tiles ([`Self::set_incremental`]).
    incremental: bool,
    /// The seeds as given, at the size they were drawn at; `seeds` is them at the
    /// working resolution.
    given_seeds: Option<Seeds>,
    /// Buffer for the frame at the working resolution.
    reduced: Frame,
    /// Finds how each frame's foreground moved since the frame before.
    motion: MotionEstimator,
    /// How the foreground of the frame being segmented moved, where it was looked for.
    frame_motion: Option<Motion>,
}

/// The state the last frame was segmented from. When the same frame comes again (the
/// app re-segments a paused frame after new parameters), it starts from the same
/// state: the same previous mask, and its seeds as hard constraints again if it was
/// the seeded frame.
struct LastFrame {
    index: u64,
    width: u32,
    height: u32,
    previous: Option<Mask>,
    seeded: bool,
    /// The frame was a learning frame (redoing it must not learn it twice).
    learning: bool,
}

/// The part of a frame one cut works on.
struct CutArea {
    /// `None` = the whole frame.
    region: Option<Region>,
    /// The region's hard seeds.
    seeds: Option<Seeds>,
    /// σ of the smoothness term (`None` = estimate from what is cut).
    sigma: Option<f32>,
    /// The region's RGB bytes (a buffer kept across frames).
    rgb: Vec<u8>,
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
    /// Nothing to segment by yet: no seeds, and no learned background.
    #[error("no seeds yet{}", .0.map_or(String::new(), |n| format!(" (static background: {n} frames left to learn)")))]
    NotReady(Option<u32>),
    /// The frame's pixel data does not match its size.
    #[error("frame {width}x{height} has {got} bytes of RGB, expected {expected}")]
    BadFrame {
        /// Frame width.
        width: u32,
        /// Frame height.
        height: u32,
        /// Bytes present.
        got: usize,
        /// Bytes expected.
        expected: usize,
    },
    /// The grid could not be built (e.g. a frame too large).
    #[error(transparent)]
    Grid(#[from] crate::grid::GridError),
    /// Connected-component labelling failed.
    #[error(transparent)]
    Labelling(#[from] CclError),
    /// A video cut as volumes cannot go on ([`super::volume`]).
    #[error("{0}")]
    Volume(String),
}

/// Where the gated frame of generation `now` differs from the one before, as the
/// gate found it, for a consumer that kept the frame of generation `last`; `None` where
/// it kept another (it then compares).
fn told_moves(gate: &NoiseGate, last: Option<u64>, now: Option<u64>) -> Option<&[Vec<[u32; 3]>]> {
    let (last, now) = (last?, now?);
    let moves = gate.moves()?;
    (moves.generation == now && last + 1 == now).then_some(moves.stretches)
}

/// Default noise gate: above the noise of webcam frames (σ ≈ 2 grey levels: a
/// pixel's change exceeds 10 in some channel once in ~800 frames), below the
/// contrast of edges worth cutting along.
const NOISE_GATE: u8 = 10;

impl Default for SegmentParams {
    fn default() -> Self {
        Self {
            lambda: 50.0,
            sigma: None,
            connectivity: Connectivity::Eight,
            iterations: 0,
            dynamic: true,
            stochastic: true,
            temporal: 5.0,
            cleanup_min_area: 0,
            cleanup_smooth: true,
            color_model: ColorModelKind::Histogram { bits: 4 },
            temporal_ramp: 3.0,
            drop_unanchored: false,
            background_frames: 0,
            background_weight: 2.0,
            noise_gate: NOISE_GATE,
            working_scale: 1,
            budget: None,
            follow_motion: true,
        }
    }
}

impl SegmentParams {
    /// Defaults for one still image: 4-connected smoothness at λ 40 and one
    /// GrabCut-style re-estimation of the colour models from the first cut. On the
    /// GrabCut images this is both better and twice as fast as the video defaults
    /// (8-connected, whose larger total boundary weight over-smooths thin parts);
    /// video keeps 8C, which its temporal prior needs.
    pub fn still() -> Self {
        Self {
            connectivity: Connectivity::Four,
            lambda: 40.0,
            iterations: 1,
            cleanup_smooth: false,
            ..Self::default()
        }
    }
}

/// The labeller that suits an engine: the CUDA one next to a CUDA engine, the wgpu one
/// on the compute device beside the CPU engine, when they can be opened; else the CPU
/// one.
fn labeller_for(engine: &dyn Engine, compute: Option<&ComputeDevice>) -> Box<dyn Labeller> {
    match engine.kind() {
        EngineKind::Cuda => {
            if let Ok(gpu) = CudaLabeller::new() {
                return Box::new(gpu);
            }
        }
        EngineKind::Cpu => {
            if let Some(Ok(gpu)) = compute.map(|gpu| WgpuLabeller::new(gpu.clone())) {
                return Box::new(gpu);
            }
        }
    }
    Box::new(CpuLabeller::new())
}

pub(super) fn side_of(label: SeedLabel) -> Option<Side> {
    match label {
        SeedLabel::Foreground => Some(Side::Foreground),
        SeedLabel::Background => Some(Side::Background),
        SeedLabel::Unknown => None,
    }
}

/// The previous mask and the temporal prior where they apply: not on the seeded frame
/// of a colour-model sequence ([`Segmenter::seeded_frame`]).
pub(super) fn temporal_input<'a>(
    previous: Option<&'a Mask>,
    params: &SegmentParams,
    seeded_frame: bool,
) -> Option<(&'a Mask, TemporalPrior)> {
    let prior = TemporalPrior {
        weight: params.temporal,
        ramp: params.temporal_ramp,
    };
    previous
        .filter(|_| !seeded_frame && prior.weight > 0.0)
        .map(|m| (m, prior))
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

impl Segmenter {
    /// A segmenter cutting with `engine`.
    pub fn new(mut engine: Box<dyn Engine>, params: SegmentParams) -> Self {
        engine.set_stochastic(params.stochastic);
        engine.set_budget(params.budget);
        let labeller = labeller_for(engine.as_ref(), None);
        Self {
            engine,
            params,
            seeds: None,
            seeds_pending: false,
            models: None,
            previous: None,
            background: None,
            builder: EnergyBuilder::new(),
            cleaner: Cleaner::new(),
            labeller,
            engine_warm: false,
            crop_rgb: Vec::new(),
            last: None,
            gate: NoiseGate::default(),
            fallback: None,
            background_sigma: None,
            held_sigma: None,
            sigma_sums: SigmaSums::default(),
            refresh: ModelRefresh::default(),
            gate_moved: None,
            gated: None,
            gate_built: None,
            gate_summed: None,
            device: None,
            compute: None,
            device_energy: true,
            on_device: false,
            models_version: 0,
            previous_version: 0,
            seeds_version: 0,
            census: None,
            frame_census: None,
            incremental: true,
            given_seeds: None,
            reduced: Frame::default(),
            motion: MotionEstimator::default(),
            frame_motion: None,
        }
        .with_device_energy()
    }

    /// New seeds (from a file or the user's scribbles); colour models are re-learned
    /// on the next frame.
    pub fn set_seeds(&mut self, seeds: Seeds) {
        self.given_seeds = Some(seeds.clone());
        self.seeds = Some(seeds);
        self.seeds_version += 1;
        self.seeds_pending = true;
    }

    /// New parameters, used from the next frame on.
    pub fn set_params(&mut self, params: SegmentParams) {
        if params.background_frames != self.params.background_frames {
            self.background = None;
            self.release_device();
        }
        if params.color_model != self.params.color_model && self.seeds.is_some() {
            self.seeds_pending = true;
        }
        self.engine.set_stochastic(params.stochastic);
        self.engine.set_budget(params.budget);
        self.params = params;
    }

    /// Whether frames recompute and hand the engine only the tiles that changed (the
    /// default) or every capacity: both give identical capacities, flows and masks;
    /// the full path is there to check that and to measure what the tiles save.
    pub fn set_incremental(&mut self, on: bool) {
        self.incremental = on;
    }

    /// Counts every frame's changed capacities by energy term into its output
    /// ([`SegmentOutput::census`]; frames whose energy is built on the CPU): the
    /// diagnosis of frames that change more arcs than their scene did. Off by default:
    /// it keeps a copy of the last frame's energy and costs passes over it, outside the
    /// timed stages.
    pub fn set_census(&mut self, on: bool) {
        self.census = on.then(Census::default);
    }

    /// The current parameters.
    pub fn params(&self) -> &SegmentParams {
        &self.params
    }

    /// Swaps the engine (the next frame is solved from scratch).
    pub fn set_engine(&mut self, mut engine: Box<dyn Engine>) {
        self.leave_device();
        engine.set_stochastic(self.params.stochastic);
        engine.set_budget(self.params.budget);
        self.labeller = labeller_for(engine.as_ref(), self.compute.as_ref());
        self.engine = engine;
        self.engine_warm = false;
        self.device = device_energy_for(self.engine.as_ref(), self.compute.as_ref());
    }

    /// Which engine cuts.
    pub fn engine_kind(&self) -> EngineKind {
        self.engine.kind()
    }

    /// The last frame's mask, which the temporal prior of the next frame uses.
    pub fn previous_mask(&self) -> Option<&Mask> {
        self.previous.as_ref()
    }

    /// σ of the last frame's smoothness term.
    pub fn last_sigma(&self) -> f32 {
        match &self.device {
            Some(device) if self.on_device => device.last_sigma(),
            _ => self.builder.last_sigma(),
        }
    }

    /// Frames still to learn of the static background (`None` when it is off).
    pub fn background_frames_left(&self) -> Option<u32> {
        (self.params.background_frames > 0).then(|| {
            self.background
                .as_ref()
                .map_or(self.params.background_frames, BackgroundModel::frames_left)
        })
    }

    /// Forgets the learned background and learns it again from the next frames.
    pub fn relearn_background(&mut self) {
        self.background = None;
        self.release_device();
    }

    /// Starts over as if new: forgets the seeds, colour models, previous mask and
    /// learned background, and the next cut is solved from scratch.
    pub fn reset(&mut self) {
        self.seeds = None;
        self.given_seeds = None;
        self.seeds_pending = false;
        self.set_models(None);
        self.set_previous(None);
        self.background = None;
        self.engine_warm = false;
        self.last = None;
        self.held_sigma = None;
        self.gate.reset();
        self.motion.reset();
        if let Some(census) = &mut self.census {
            census.reset();
        }
        self.release_device();
    }

    /// Forgets the previous mask (the next frame has no temporal prior), e.g. after a
    /// cut in the video.
    pub fn forget_previous(&mut self) {
        self.set_previous(None);
        self.held_sigma = None;
        self.gate.reset();
        self.motion.reset();
        if let Some(device) = &mut self.device {
            device.forget_previous();
        }
    }

    /// Segments one frame (through the noise gate), at the working resolution the
    /// parameters ask for; the mask is the frame's size either way.
    pub fn segment(&mut self, frame: &Frame) -> Result<SegmentOutput, SegmentError> {
        let start = Instant::now();
        let scale = self.params.working_scale;
        let Some(size) = working_size(frame.width, frame.height, scale)
            .filter(|_| frame.rgb.len() == frame.width as usize * frame.height as usize * 3)
        else {
            self.fit_seeds(frame, (frame.width, frame.height));
            return self.segment_at(frame);
        };
        let mut small = std::mem::take(&mut self.reduced);
        reduce(frame, scale, size, &mut small);
        self.fit_seeds(frame, size);
        let result = self.segment_at(&small);
        self.reduced = small;
        let mut output = result?;
        output.mask = restore(&output.mask, frame, scale);
        // the device holds the reduced frame, not this one
        output.frame_on_device = None;
        output.timings.total_ms = ms_since(start);
        Ok(output)
    }

    /// Brings the seeds in use to the working size `(width, height)` from those given
    /// for `frame`'s size, where the working resolution changed; seeds of another size
    /// are left for the size check to refuse.
    fn fit_seeds(&mut self, frame: &Frame, (width, height): (u32, u32)) {
        let (Some(given), Some(seeds)) = (&self.given_seeds, &self.seeds) else {
            return;
        };
        let drawn_for_frame = (given.width, given.height) == (frame.width, frame.height);
        if !drawn_for_frame || (seeds.width, seeds.height) == (width, height) {
            return;
        }
        self.seeds = Some(if (given.width, given.height) == (width, height) {
            given.clone()
        } else {
            given.resized(width, height)
        });
        self.seeds_version += 1;
        self.seeds_pending = true;
    }

    /// Segments one frame at its own size.
    fn segment_at(&mut self, frame: &Frame) -> Result<SegmentOutput, SegmentError> {
        let start = Instant::now();
        let (width, height) = (frame.width, frame.height);
        let expected = width as usize * height as usize * 3;
        if frame.rgb.len() != expected || expected == 0 {
            return Err(SegmentError::BadFrame {
                width,
                height,
                got: frame.rgb.len(),
                expected,
            });
        }
        self.follow_motion(frame);
        if let Some(output) = self.learn_background(frame, start) {
            return Ok(output);
        }
        let mut result = match self.segment_on_device(frame, start) {
            Some(result) => result,
            None => self.segment_on_host(frame, start),
        };
        if let Ok(output) = &mut result {
            // part of the frame's data term: its time is the energy's
            let refresh = Instant::now();
            self.refresh_models(frame, &output.mask);
            let ms = ms_since(refresh);
            output.timings.energy_ms += ms;
            output.timings.total_ms += ms;
        }
        result
    }

    /// [`Self::segment_at`] with the energy on the CPU, through the noise gate.
    fn segment_on_host(
        &mut self,
        frame: &Frame,
        start: Instant,
    ) -> Result<SegmentOutput, SegmentError> {
        let (width, height) = (frame.width, frame.height);
        let threshold = self.gate_threshold();
        if threshold == 0 {
            self.gate.reset();
            self.gate_moved = None;
            self.gated = None;
            return self.segment_gated(frame, start);
        }
        self.gate_moved = self.gate.pass(&frame.rgb, width, height, threshold);
        self.gated = Some(self.gate.generation());
        let gated = Frame {
            rgb: self.gate.take_held(),
            ..*frame
        };
        let result = self.segment_gated(&gated, start);
        self.gate.restore_held(gated.rgb);
        result
    }

    /// Segments one frame that has passed the noise gate.
    fn segment_gated(
        &mut self,
        frame: &Frame,
        start: Instant,
    ) -> Result<SegmentOutput, SegmentError> {
        self.restore_redone(frame);
        let background_ready = self.background_ready();
        let fresh = self.seeds_pending;
        if fresh {
            self.seeds_pending = false;
            if background_ready {
                self.check_background_seeds(frame)?;
            } else {
                self.learn_from_seeds(frame)?;
            }
        }
        if self.models.is_none() && !background_ready {
            return Err(SegmentError::NotReady(self.background_frames_left()));
        }
        let mut steady = Vec::new();
        if let Some(model) = self.background.as_mut().filter(|_| background_ready) {
            model.observe(&frame.rgb, self.previous.as_ref());
            steady = model.take_steady();
        }
        let steady = Frame {
            rgb: steady,
            ..*frame
        };
        // The still scene in the background's own colours where one is learned.
        let cut_frame = if background_ready { &steady } else { frame };
        let mut timings = FrameTiming {
            energy_ms: ms_since(start),
            ..Default::default()
        };
        // Seeds are hard on the frame they arrive with, and on every frame in
        // background mode.
        let hard = if fresh || background_ready {
            self.seeds.take()
        } else {
            None
        };
        let result = self.cut_and_clean(cut_frame, &frame.rgb, hard.as_ref(), &mut timings);
        if let Some(model) = self.background.as_mut().filter(|_| background_ready) {
            model.restore_steady(steady.rgb);
        }
        if hard.is_some() {
            self.seeds = hard;
        }
        let (mask, solution) = result?;
        if let Some(model) = self.background.as_mut().filter(|_| background_ready) {
            let start = Instant::now();
            model.adapt(&frame.rgb, &mask);
            timings.energy_ms += ms_since(start);
        }
        Ok(self.end_frame(frame, mask, solution, fresh, timings, start))
    }

    /// Ends a segmented frame: its mask becomes the previous one, the state it started
    /// from is kept for a redo, and the output is assembled.
    fn end_frame(
        &mut self,
        frame: &Frame,
        mask: Mask,
        solution: Solution,
        fresh: bool,
        mut timings: FrameTiming,
        start: Instant,
    ) -> SegmentOutput {
        let before = self.set_previous(Some(mask.clone()));
        self.last = Some(LastFrame {
            index: frame.index,
            width: frame.width,
            height: frame.height,
            previous: before,
            seeded: fresh,
            learning: false,
        });
        timings.total_ms = ms_since(start);
        SegmentOutput {
            mask,
            flow: solution.flow,
            timings,
            stats: solution.stats,
            fallback: self.fallback.take(),
            learning: false,
            census: self.frame_census.take(),
            noise_gate: self.gate_threshold(),
            volume: None,
            energy: match &self.device {
                Some(device) if self.on_device => device.kind(),
                _ => EnergyDevice::Cpu,
            },
            gpu: self
                .device
                .as_ref()
                .filter(|_| self.on_device)
                .map(|d| d.name()),
            motion: self.frame_motion,
            frame_on_device: self
                .device
                .as_ref()
                .filter(|_| self.on_device)
                .and_then(|d| d.frame_on_device()),
        }
    }

    /// After a frame cut by colour models, keeps them up with the scene's colours
    /// ([`ModelRefresh`]) as the frame came (before the noise gate, which only the
    /// host path's colours went through); the energies take new ones by version.
    fn refresh_models(&mut self, frame: &Frame, mask: &Mask) {
        if self.background_ready() {
            return;
        }
        let kind = self.params.color_model;
        if let Some(models) = self.models.as_mut()
            && self.refresh.after_frame(models, kind, frame, mask)
        {
            self.models_version += 1;
        }
    }

    /// Starts a frame that comes again (the app re-segmenting a paused frame) from the
    /// state it was first segmented from, and drops a previous mask of another size.
    fn restore_redone(&mut self, frame: &Frame) {
        let (width, height) = (frame.width, frame.height);
        if let Some(last) = &self.last
            && (last.index, last.width, last.height) == (frame.index, width, height)
        {
            let (previous, seeded) = (last.previous.clone(), last.seeded);
            self.set_previous(previous);
            self.seeds_pending |= seeded && self.seeds.is_some();
        }
        if self
            .previous
            .as_ref()
            .is_some_and(|m| (m.width, m.height) != (width, height))
        {
            self.set_previous(None);
        }
    }

    /// Finds how the foreground moved since the frame before and moves the previous
    /// mask (the temporal prior) with it. A frame that comes again keeps what was
    /// found the first time (its previous mask, kept for the redo, was moved then).
    /// The noise gate needs nothing: where the frame moved, its pixels pass it.
    fn follow_motion(&mut self, frame: &Frame) {
        let redone = self.last.as_ref().is_some_and(|last| {
            (last.index, last.width, last.height) == (frame.index, frame.width, frame.height)
        });
        if redone {
            return;
        }
        self.frame_motion = None;
        if !self.params.follow_motion || self.background.is_some() {
            self.motion.reset();
            return;
        }
        let threshold = match self.gate_threshold() {
            0 => NOISE_GATE,
            chosen => chosen,
        };
        let (rgb, width, height) = (&frame.rgb, frame.width, frame.height);
        self.frame_motion = self
            .motion
            .next(rgb, width, height, threshold, self.previous.as_ref());
        let moved = match (self.frame_motion, &self.previous) {
            (Some(motion), Some(previous)) if motion.is_some() => shifted(previous, motion),
            _ => return,
        };
        self.set_previous(Some(moved));
    }

    /// A new previous mask (or none), noted by its version; returns the one it replaces.
    fn set_previous(&mut self, mask: Option<Mask>) -> Option<Mask> {
        self.previous_version += 1;
        std::mem::replace(&mut self.previous, mask)
    }

    /// New colour models (or none), noted by their version.
    fn set_models(&mut self, models: Option<ColorModels>) {
        self.models = models;
        self.models_version += 1;
        self.refresh.restart();
    }

    /// Whether the frame cut with `hard` seeds is the seeded frame of a colour-model
    /// sequence, which starts afresh (no temporal prior); in background mode the seeds
    /// hold on every frame beside the prior.
    fn seeded_frame(&self, hard: Option<&Seeds>) -> bool {
        hard.is_some() && !self.background_ready()
    }

    /// Whether a learned background is ready to cut by.
    /// The noise gate's threshold for this stream: the chosen one, raised to what the
    /// camera's noise seen while learning the background needs ([`threshold_for`]).
    fn gate_threshold(&self) -> u8 {
        let noise = self
            .background
            .as_ref()
            .filter(|_| self.background_ready())
            .and_then(BackgroundModel::noise);
        threshold_for(self.params.noise_gate, noise)
    }

    fn background_ready(&self) -> bool {
        self.params.background_frames > 0
            && self
                .background
                .as_ref()
                .is_some_and(BackgroundModel::is_ready)
    }

    /// Feeds the background learner with a frame while it learns, and returns the
    /// frame's learning output (all background, nothing cut); `None` once the model is
    /// ready, or without one. A learning frame redone (the app re-segmenting a paused
    /// frame) gives the same output without being learned twice.
    fn learn_background(&mut self, frame: &Frame, start: Instant) -> Option<SegmentOutput> {
        let frames = self.params.background_frames;
        if frames == 0 {
            if self.background.take().is_some() {
                self.release_device();
            }
            return None;
        }
        let redo = self.last.as_ref().is_some_and(|l| {
            l.learning && (l.index, l.width, l.height) == (frame.index, frame.width, frame.height)
        });
        if !redo {
            let model = match &mut self.background {
                Some(m) if m.fits(frame.width, frame.height) => m,
                slot => slot.insert(BackgroundModel::new(frame.width, frame.height, frames)),
            };
            if !model.learn(&frame.rgb) {
                return None;
            }
            // a frame learned: whatever model the device held is out of date
            if let Some(device) = &mut self.device {
                device.release();
            }
            if model.is_ready() {
                self.background_sigma = Some(background_sigma(model, frame, &self.params));
            }
        }
        self.set_previous(None);
        self.engine_warm = false;
        self.gate.reset();
        self.last = Some(LastFrame {
            index: frame.index,
            width: frame.width,
            height: frame.height,
            previous: None,
            seeded: false,
            learning: true,
        });
        Some(learning_output(
            frame,
            ms_since(start),
            self.gate_threshold(),
        ))
    }

    /// Checks seeds given in background mode against the frame: any labels will do
    /// (the background term needs neither a foreground nor a background seed).
    fn check_background_seeds(&mut self, frame: &Frame) -> Result<(), SegmentError> {
        if let Some(seeds) = &self.seeds
            && let Err(message) = check_seeds(seeds, frame, false)
        {
            self.seeds = None;
            return Err(SegmentError::Seeds(message));
        }
        self.set_models(None);
        Ok(())
    }

    /// Checks the pending seeds against the frame and learns the colour models.
    fn learn_from_seeds(&mut self, frame: &Frame) -> Result<(), SegmentError> {
        let Some(seeds) = &self.seeds else {
            return Ok(());
        };
        if let Err(message) = check_seeds(seeds, frame, true) {
            self.seeds = None;
            return Err(SegmentError::Seeds(message));
        }
        let labels = &seeds.labels;
        let models =
            ColorModels::learn(self.params.color_model, &frame.rgb, |i| side_of(labels[i]));
        self.set_models(models);
        self.set_previous(None);
        // a sequence starts with its seeds: σ is the seeded frame's own
        self.held_sigma = None;
        Ok(())
    }

    /// Builds the energy, cuts it (plus GrabCut iterations on a seeded frame), and
    /// cleans the mask up.
    /// `data_rgb`: the frame the data term read (the gated one; `frame` is in the
    /// learned background's steady colours where there is one).
    fn cut_and_clean(
        &mut self,
        frame: &Frame,
        data_rgb: &[u8],
        hard: Option<&Seeds>,
        timings: &mut FrameTiming,
    ) -> Result<(Mask, Solution), SegmentError> {
        let start = Instant::now();
        let area = self.cut_area(frame, hard);
        timings.energy_ms += ms_since(start);
        let rounds = if hard.is_some() {
            1 + self.params.iterations
        } else {
            1
        };
        let mut solution: Option<Solution> = None;
        for round in 0..rounds {
            if round > 0 {
                let start = Instant::now();
                let mask = &solution.as_ref().expect("an earlier round cut").mask;
                let kind = self.params.color_model;
                if let Some(models) = ColorModels::learn(kind, &frame.rgb, |i| {
                    Some(if mask.is_source(i) {
                        Side::Foreground
                    } else {
                        Side::Background
                    })
                }) {
                    self.set_models(Some(models));
                }
                timings.energy_ms += ms_since(start);
            }
            let start = Instant::now();
            let problem = self.build(frame, &area, hard)?;
            timings.energy_ms += ms_since(start);
            if round + 1 == rounds {
                self.take_census(&problem, data_rgb, frame, &area, hard);
            }
            let start = Instant::now();
            let cut = match self.cut(&problem) {
                Err(e) if self.engine.kind() != EngineKind::Cpu => {
                    self.fall_back_to_cpu(&e);
                    self.engine.solve(&problem)
                }
                cut => cut,
            };
            self.engine_warm = cut.is_ok();
            self.builder.recycle(problem);
            let mut cut = cut?;
            if let (Some(region), Some(seeds)) = (area.region, hard) {
                cut.mask = region.paste(&cut.mask, seeds);
            }
            timings.cut_ms += ms_since(start);
            solution = Some(cut);
        }
        self.crop_rgb = area.rgb;
        let mut solution = solution.expect("at least one round");
        let start = Instant::now();
        let mut mask = std::mem::replace(&mut solution.mask, Mask::empty(0, 0));
        // a region's cut is pasted into the frame's mask: the engine's copy is not it
        let as_cut = area.region.is_none();
        if !self.labeller.on_gpu() || !self.labelling_runs() {
            self.clean(&mut mask, hard, as_cut)?;
        } else {
            let cut = mask.clone();
            match self.clean(&mut mask, hard, as_cut) {
                Err(SegmentError::Labelling(e)) => {
                    self.fall_back_to_cpu(&e);
                    mask = cut;
                    self.clean(&mut mask, hard, false)?;
                }
                other => {
                    other?;
                }
            }
        }
        timings.cleanup_ms = ms_since(start);
        Ok((mask, solution))
    }

    /// The engine's solve, or its update of the kept graph where that is asked for,
    /// told which tiles the energy changed.
    fn cut(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        if !(self.params.dynamic && self.engine_warm) {
            self.engine.solve(problem)
        } else if self.incremental {
            self.engine.update_changed(problem, self.builder.changes())
        } else {
            self.engine.update(problem)
        }
    }

    /// The GPU failed mid-stream (the engine or the labeller): the CPU engine and
    /// labeller take over from this frame on, so that no frame is lost, and the frame's
    /// output says why.
    fn fall_back_to_cpu(&mut self, error: &dyn std::fmt::Display) {
        self.fallback = Some(format!(
            "the GPU failed ({error}); continuing with the CPU engine"
        ));
        // a wgpu device that failed the cleanup builds no more energies either
        self.compute = None;
        self.set_engine(Box::new(CpuEngine::new()));
    }

    /// Decides what to cut: on a seeded frame without a learned background, only the
    /// region around the unknown pixels (exact; see [`Region`]), with σ taken from the
    /// whole frame so the result does not depend on the reduction.
    fn cut_area(&mut self, frame: &Frame, hard: Option<&Seeds>) -> CutArea {
        let mut rgb = std::mem::take(&mut self.crop_rgb);
        let background_on = self.background_ready();
        // With a learned background, σ is the empty scene's: one value for every frame,
        // so the arcs of a still scene stay as they were; else the frame's own, held.
        let sigma = match self.params.sigma {
            Some(sigma) => sigma,
            None => match self.background_sigma.filter(|_| background_on) {
                Some(sigma) => sigma,
                None => self.held_sigma_of(frame),
            },
        };
        let whole = CutArea {
            region: None,
            seeds: None,
            sigma: Some(sigma),
            rgb: Vec::new(),
        };
        let Some(seeds) = hard.filter(|_| !background_on) else {
            return CutArea { rgb, ..whole };
        };
        let Some(region) =
            Region::around_unknown(seeds).filter(|r| !r.is_whole(frame.width, frame.height))
        else {
            return CutArea { rgb, ..whole };
        };
        region.crop_rgb(&frame.rgb, frame.width, &mut rgb);
        CutArea {
            region: Some(region),
            seeds: Some(region.crop_seeds(seeds)),
            rgb,
            ..whole
        }
    }

    /// σ of a frame whose σ neither the user nor a learned background fixes: its own
    /// estimate, held from still frame to still frame within a band ([`hold_sigma`]),
    /// as the device energy holds it.
    fn held_sigma_of(&mut self, frame: &Frame) -> f32 {
        let (w, h) = (frame.width as usize, frame.height as usize);
        let connectivity = self.params.connectivity;
        // the frame is the gated one unless a learned background stands in for it
        let gated = self.gated.filter(|_| !self.background_ready());
        // without dynamic cuts every frame pays for the whole picture
        let estimate = if self.incremental && self.params.dynamic {
            let moves = told_moves(&self.gate, self.gate_summed, gated);
            let estimate = self
                .sigma_sums
                .estimate(&frame.rgb, w, h, connectivity, moves);
            self.gate_summed = gated;
            estimate
        } else {
            self.gate_summed = None;
            estimate_sigma(&frame.rgb, w, h, connectivity)
        };
        let still = is_still(self.gate_moved, (w * h) as u64);
        let sigma = hold_sigma(self.held_sigma, estimate, still);
        self.held_sigma = Some(sigma);
        sigma
    }

    fn build(
        &mut self,
        frame: &Frame,
        area: &CutArea,
        hard: Option<&Seeds>,
    ) -> Result<GridProblem, SegmentError> {
        let p = &self.params;
        let background = self
            .background
            .as_ref()
            .filter(|b| b.is_ready())
            .map(|b| (b, p.background_weight));
        let temporal = temporal_input(self.previous.as_ref(), p, self.seeded_frame(hard));
        let (width, height, rgb, seeds) = match area.region {
            Some(r) => (r.width, r.height, area.rgb.as_slice(), area.seeds.as_ref()),
            None => (frame.width, frame.height, frame.rgb.as_slice(), hard),
        };
        // the energy reads the gated frame itself, not a crop or the learned background
        let gated = self
            .gated
            .filter(|_| area.region.is_none() && background.is_none());
        let rgb_moves = told_moves(&self.gate, self.gate_built, gated);
        self.gate_built = None;
        let inputs = EnergyInputs {
            width,
            height,
            rgb,
            smoothness: Smoothness {
                connectivity: p.connectivity,
                lambda: p.lambda,
                sigma: area.sigma,
                scale: CAPACITY_SCALE,
            },
            colors: self.models.as_mut().filter(|_| background.is_none()),
            seeds,
            temporal,
            background,
            rgb_moves,
        };
        // without dynamic cuts every frame pays for the whole picture
        self.builder
            .set_incremental(self.incremental && self.params.dynamic);
        let problem = self.builder.build(inputs)?;
        self.gate_built = gated;
        Ok(problem)
    }

    /// Counts the frame's changed capacities by cause, where asked (untimed).
    fn take_census(
        &mut self,
        problem: &GridProblem,
        data_rgb: &[u8],
        frame: &Frame,
        area: &CutArea,
        hard: Option<&Seeds>,
    ) {
        if self.census.is_none() {
            return;
        }
        let (data_rgb, arc_rgb, seeds) = match area.region {
            Some(_) => (
                area.rgb.as_slice(),
                area.rgb.as_slice(),
                area.seeds.as_ref(),
            ),
            None => (data_rgb, frame.rgb.as_slice(), hard),
        };
        let seeded_frame = self.seeded_frame(hard);
        let inputs = CensusInputs {
            problem,
            data_rgb,
            arc_rgb,
            temporal: temporal_input(self.previous.as_ref(), &self.params, seeded_frame),
            seeds,
        };
        let (recomputed, passed_gate) = (self.builder.changed().area(), self.gate_moved);
        self.frame_census = self.census.as_mut().map(|c| ChangeCensus {
            recomputed,
            passed_gate,
            ..c.observe(&inputs)
        });
    }

    /// Whether the cleanup labels the mask's components (the defaults do not): only
    /// then can a GPU labeller fail it.
    fn labelling_runs(&self) -> bool {
        self.params.cleanup_min_area > 0 || self.params.drop_unanchored
    }

    /// Cleans the mask up; `as_cut`: it is the engine's last solution's mask as it was
    /// returned, which a GPU labeller may then read where the engine left it.
    fn clean(
        &mut self,
        mask: &mut Mask,
        hard: Option<&Seeds>,
        as_cut: bool,
    ) -> Result<CleanupReport, SegmentError> {
        let device = self.engine.device_mask().filter(|_| as_cut);
        let around = Around {
            hard,
            previous: self.previous.as_ref(),
        };
        let (cleaner, labeller) = (&mut self.cleaner, self.labeller.as_mut());
        let report = clean_frame(&self.params, around, |params, constraints| {
            cleaner.clean_with_device(mask, device.as_ref(), params, constraints, labeller)
        });
        Ok(report?)
    }
}

/// Whether `seeds` fit `frame` and, where `both`, hold a foreground and a background
/// seed (what a colour model needs); the reason where not.
pub(super) fn check_seeds(seeds: &Seeds, frame: &Frame, both: bool) -> Result<(), String> {
    seeds
        .check_size(frame.width, frame.height)
        .map_err(|e| e.to_string())?;
    let missing = [
        (SeedLabel::Foreground, "foreground"),
        (SeedLabel::Background, "background"),
    ]
    .into_iter()
    .find(|(l, _)| both && !seeds.labels.contains(l));
    match missing {
        Some((_, what)) => Err(format!("the seeds have no {what} seed")),
        None => Ok(()),
    }
}

/// What a frame's cleanup knows of its pixels: its hard seeds and the mask before it.
#[derive(Clone, Copy)]
pub(super) struct Around<'a> {
    pub hard: Option<&'a Seeds>,
    pub previous: Option<&'a Mask>,
}

/// Runs `clean` (a cleanup of the frame's mask) with the parameters' rules: seeded
/// pixels keep their labels, and the object is anchored by the foreground seeds where
/// there are any, else by the previous mask.
pub(super) fn clean_frame<R>(
    params: &SegmentParams,
    Around { hard, previous }: Around<'_>,
    clean: impl FnOnce(&CleanupParams, &Constraints<'_>) -> R,
) -> R {
    let cleanup = CleanupParams {
        connectivity: params.connectivity,
        min_area: params.cleanup_min_area,
        drop_unanchored: params.drop_unanchored,
        smooth: params.cleanup_smooth,
    };
    let is = |label: SeedLabel| hard.map(|s| move |i: usize| s.labels[i] == label);
    let (fixed_fg, fixed_bg) = (is(SeedLabel::Foreground), is(SeedLabel::Background));
    let previous_fg = previous.map(|m| move |i: usize| m.is_source(i));
    fn as_dyn(f: &impl Fn(usize) -> bool) -> &dyn Fn(usize) -> bool {
        f
    }
    let constraints = Constraints {
        fixed_foreground: fixed_fg.as_ref().map(as_dyn),
        fixed_background: fixed_bg.as_ref().map(as_dyn),
        // the seeds where there are seeds, else the previous mask
        anchor: match (&fixed_fg, &previous_fg) {
            (Some(f), _) => Some(as_dyn(f)),
            (None, Some(f)) => Some(as_dyn(f)),
            (None, None) => None,
        },
    };
    clean(&cleanup, &constraints)
}

/// σ of a learned background's mean image: the smoothness σ of every frame cut by it,
/// so that a still scene's arcs stay as they were.
pub(super) fn background_sigma(
    model: &BackgroundModel,
    frame: &Frame,
    params: &SegmentParams,
) -> f32 {
    let (w, h) = (frame.width as usize, frame.height as usize);
    estimate_sigma(&model.mean_rgb(), w, h, params.connectivity)
}

/// The output of a frame that taught the background (`ms` long) and was not cut: all
/// background.
pub(super) fn learning_output(frame: &Frame, ms: f64, noise_gate: u8) -> SegmentOutput {
    SegmentOutput {
        mask: Mask::empty(frame.width, frame.height),
        flow: 0,
        timings: FrameTiming {
            energy_ms: ms,
            total_ms: ms,
            ..Default::default()
        },
        fallback: None,
        stats: SolveStats::default(),
        learning: true,
        census: None,
        noise_gate,
        energy: EnergyDevice::Cpu,
        gpu: None,
        volume: None,
        motion: None,
        frame_on_device: None,
    }
}

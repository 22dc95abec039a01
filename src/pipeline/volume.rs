//! A video cut as volumes: N frames at a time as one x-y-t graph
//! ([`crate::energy::volume`]), for files rather than live sources (a frame's mask
//! comes once its volume is complete).
//!
//! Each frame gets the energy the frame-by-frame [`super::Segmenter`] gives it, less
//! the temporal prior, whose place the links along time take: the colour models of
//! the seeded first frame, or the learned background (its first frames teach it and
//! come out all background, as there). Consecutive volumes overlap by one frame: the
//! last frame of a volume, as cut, is the previous mask of the next volume's first
//! frame, whose temporal prior it gives as it would frame by frame, so that a wrong
//! label there is undone as frame by frame (`src/maxflow/cpu/NOTES.md`).

use super::segmenter::{
    Around, SegmentError, SegmentOutput, SegmentParams, background_sigma, check_seeds, clean_frame,
    learning_output, side_of, temporal_input,
};
use super::timing::FrameTiming;
use crate::capture::Frame;
use crate::ccl::{Cleaner, CpuLabeller};
use crate::energy::volume::{Gather, Slice, unstack};
use crate::energy::{
    BackgroundModel, CAPACITY_SCALE, ColorModels, EnergyBuilder, EnergyInputs, MAX_SQUARED, Seeds,
    Smoothness, WeightTables, estimate_sigma,
};
use crate::grid::Mask;
use crate::maxflow::VolumeEngine;
use std::time::Instant;

/// The most frames one volume may hold (the engine's memory grows with it).
pub const MAX_VOLUME_FRAMES: u32 = 64;

/// Where a frame's volume starts in the stream and how many frames it cut.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct VolumeSpan {
    /// Index of its first frame.
    pub first: u64,
    /// Frames cut together.
    pub frames: u32,
}

/// A frame waiting for its volume to fill.
struct Pending {
    index: u64,
    /// The frame's colours as captured, where a learned background adapts to them.
    rgb: Option<Vec<u8>>,
    /// The colours its energy read (the learned background's steady ones, else the
    /// frame's).
    cut_rgb: Vec<u8>,
    /// Its height in pixels (its energy waits in the volume's [`Gather`]).
    height: u32,
    hard: Option<Seeds>,
    /// σ of its smoothness term (its volume's).
    sigma: f32,
    energy_ms: f64,
}

/// Segments a stream N frames at a time.
pub struct VolumeSegmenter {
    engine: Box<dyn VolumeEngine>,
    params: SegmentParams,
    depth: usize,
    seeds: Option<Seeds>,
    /// The seeds have not been applied to a frame yet.
    seeds_pending: bool,
    models: Option<ColorModels>,
    background: Option<BackgroundModel>,
    background_sigma: Option<f32>,
    /// σ of the volume being gathered (set by its first frame).
    sigma: Option<f32>,
    builder: EnergyBuilder,
    weights: WeightTables,
    cleaner: Cleaner,
    labeller: CpuLabeller,
    pending: Vec<Pending>,
    /// The energies of the pending frames, as the volume's arrays.
    gather: Gather,
    /// The mask of the last frame cut: the previous mask of the next volume's first
    /// frame.
    last: Option<Mask>,
}

impl VolumeSegmenter {
    /// Cuts `depth` frames at a time (2 to [`MAX_VOLUME_FRAMES`]) with `engine`;
    /// `params` as for the frame-by-frame segmenter (the temporal prior applies to each
    /// volume's first frame; the noise gate, dynamic cuts, working scale and budget do
    /// not apply).
    pub fn new(
        engine: Box<dyn VolumeEngine>,
        params: SegmentParams,
        depth: u32,
    ) -> Result<Self, SegmentError> {
        if !(2..=MAX_VOLUME_FRAMES).contains(&depth) {
            return Err(SegmentError::Volume(format!(
                "a volume holds 2 to {MAX_VOLUME_FRAMES} frames, not {depth}"
            )));
        }
        let builder = EnergyBuilder::new();
        Ok(Self {
            engine,
            params,
            depth: depth as usize,
            seeds: None,
            seeds_pending: false,
            models: None,
            background: None,
            background_sigma: None,
            sigma: None,
            builder,
            weights: WeightTables::default(),
            cleaner: Cleaner::new(),
            labeller: CpuLabeller::new(),
            pending: Vec::new(),
            gather: Gather::new(depth as usize),
            last: None,
        })
    }

    /// Seeds for the next frame: with colour models, they teach the models and hold on
    /// that frame; with a learned background, they hold on every frame.
    pub fn set_seeds(&mut self, seeds: Seeds) {
        self.seeds = Some(seeds);
        self.seeds_pending = true;
    }

    /// Takes the next frame; returns the outputs of the frames it completed (a
    /// learning frame at once, a volume's frames once it is full), in stream order.
    pub fn push(&mut self, frame: &Frame) -> Result<Vec<SegmentOutput>, SegmentError> {
        let start = Instant::now();
        let expected = frame.width as usize * frame.height as usize * 3;
        if frame.rgb.len() != expected || expected == 0 {
            return Err(SegmentError::BadFrame {
                width: frame.width,
                height: frame.height,
                got: frame.rgb.len(),
                expected,
            });
        }
        if let Some(output) = self.learn_background(frame, start) {
            return Ok(vec![output]);
        }
        let slice = self.prepare(frame, start)?;
        self.pending.push(slice);
        if self.pending.len() < self.depth {
            return Ok(Vec::new());
        }
        self.cut()
    }

    /// Cuts the frames still waiting (a last volume shorter than the others).
    pub fn finish(&mut self) -> Result<Vec<SegmentOutput>, SegmentError> {
        if self.pending.is_empty() {
            return Ok(Vec::new());
        }
        self.cut()
    }

    /// Teaches the background a learning frame (`None` once it is learned, or without
    /// one), as the frame-by-frame segmenter does.
    fn learn_background(&mut self, frame: &Frame, start: Instant) -> Option<SegmentOutput> {
        let frames = self.params.background_frames;
        if frames == 0 {
            return None;
        }
        let model = self
            .background
            .get_or_insert_with(|| BackgroundModel::new(frame.width, frame.height, frames));
        if !model.fits(frame.width, frame.height) || !model.learn(&frame.rgb) {
            return None;
        }
        if model.is_ready() {
            self.background_sigma = Some(background_sigma(model, frame, &self.params));
        }
        Some(learning_output(frame, ms_since(start), 0))
    }

    fn background_ready(&self) -> bool {
        self.background
            .as_ref()
            .is_some_and(BackgroundModel::is_ready)
    }

    /// A frame's energy, waiting for its volume.
    fn prepare(&mut self, frame: &Frame, start: Instant) -> Result<Pending, SegmentError> {
        let background_ready = self.background_ready();
        if self
            .background
            .as_ref()
            .is_some_and(|b| !b.fits(frame.width, frame.height))
        {
            return Err(SegmentError::Volume(format!(
                "frame {} is {}x{}, unlike the frames the background was learned from",
                frame.index, frame.width, frame.height
            )));
        }
        let fresh = std::mem::take(&mut self.seeds_pending);
        // the seeds hold on this frame: checked against it (both labels where they
        // teach the colour models)
        if (fresh || background_ready)
            && let Some(seeds) = &self.seeds
            && let Err(message) = check_seeds(seeds, frame, fresh && !background_ready)
        {
            self.seeds = None;
            return Err(SegmentError::Seeds(message));
        }
        if fresh
            && !background_ready
            && let Some(seeds) = &self.seeds
        {
            let labels = &seeds.labels;
            self.models =
                ColorModels::learn(self.params.color_model, &frame.rgb, |i| side_of(labels[i]));
        }
        if self.models.is_none() && !background_ready {
            return Err(SegmentError::NotReady(
                (self.params.background_frames > 0).then(|| {
                    self.background
                        .as_ref()
                        .map_or(self.params.background_frames, BackgroundModel::frames_left)
                }),
            ));
        }
        let previous = self.last.as_ref();
        let cut_rgb = match self.background.as_mut().filter(|_| background_ready) {
            Some(model) => {
                model.observe(&frame.rgb, previous);
                let steady = model.take_steady();
                model.restore_steady(steady.clone());
                steady
            }
            None => frame.rgb.clone(),
        };
        let hard = if fresh || background_ready {
            self.seeds.clone()
        } else {
            None
        };
        let sigma = self.volume_sigma(&cut_rgb, frame);
        let p = &self.params;
        let background = self
            .background
            .as_ref()
            .filter(|_| background_ready)
            .map(|b| (b, p.background_weight));
        // the volume's first frame follows the frame before it, the others their links
        let previous = self.last.as_ref().filter(|_| self.pending.is_empty());
        let seeded_frame = hard.is_some() && !background_ready;
        let temporal = temporal_input(previous, p, seeded_frame);
        let inputs = EnergyInputs {
            width: frame.width,
            height: frame.height,
            rgb: &cut_rgb,
            smoothness: self.smoothness(sigma),
            colors: self.models.as_mut().filter(|_| background.is_none()),
            seeds: hard.as_ref(),
            temporal,
            background,
            rgb_moves: None,
        };
        // the builder keeps its arrays: the next frame recomputes only what changed
        let built = self.builder.build(inputs)?;
        let gathered = self.gather.push(&built);
        self.builder.recycle(built);
        gathered.map_err(|e| SegmentError::Volume(e.to_string()))?;
        Ok(Pending {
            index: frame.index,
            rgb: background_ready.then(|| frame.rgb.clone()),
            cut_rgb,
            height: frame.height,
            hard,
            sigma,
            energy_ms: ms_since(start),
        })
    }

    /// A time link's capacity by the squared colour difference of its pixels: the
    /// frames' straight-arc weight at `sigma` (time is one more direction of the
    /// smoothness term), plus the temporal prior's full weight, which the links carry
    /// in its place: where the colours differ (the camera moved), a pixel is still
    /// held to its label in the frames beside it as firmly as the prior holds it to
    /// the previous mask.
    fn time_weights(&mut self, sigma: f32) -> Vec<i32> {
        let floor = (self.params.temporal.max(0.0) * CAPACITY_SCALE).round() as i32;
        let smoothness = self.smoothness(sigma);
        let mut weights = smoothness.tables(sigma, &mut self.weights)[0].clone();
        weights
            .iter_mut()
            .for_each(|w| *w = w.saturating_add(floor));
        weights.resize(MAX_SQUARED + 1, floor);
        weights
    }

    /// The smoothness term of the frames at `sigma`.
    fn smoothness(&self, sigma: f32) -> Smoothness {
        Smoothness {
            connectivity: self.params.connectivity,
            lambda: self.params.lambda,
            sigma: Some(sigma),
            scale: CAPACITY_SCALE,
        }
    }

    /// σ of the volume being gathered: the given one, the learned background's, or
    /// the estimate of the volume's first frame, one value for every slice and the
    /// links between them.
    fn volume_sigma(&mut self, rgb: &[u8], frame: &Frame) -> f32 {
        if let Some(sigma) = self.params.sigma.filter(|&s| s > 0.0) {
            return sigma;
        }
        if let Some(sigma) = self.background_sigma.filter(|_| self.background_ready()) {
            return sigma;
        }
        if self.pending.is_empty() || self.sigma.is_none() {
            let (w, h) = (frame.width as usize, frame.height as usize);
            self.sigma = Some(estimate_sigma(rgb, w, h, self.params.connectivity));
        }
        self.sigma.expect("set above")
    }

    /// Cuts the waiting frames as one volume and returns their outputs.
    fn cut(&mut self) -> Result<Vec<SegmentOutput>, SegmentError> {
        let pending = std::mem::take(&mut self.pending);
        let sigma = pending[0].sigma;
        let start = Instant::now();
        let weights = self.time_weights(sigma);
        let gather = std::mem::replace(&mut self.gather, Gather::new(self.depth));
        let volume = {
            let slices: Vec<Slice<'_>> = pending
                .iter()
                .map(|p| Slice {
                    rgb: &p.cut_rgb,
                    hard: p.hard.as_ref(),
                })
                .collect();
            gather
                .finish(&slices, &weights)
                .map_err(|e| SegmentError::Volume(e.to_string()))?
        };
        let build_ms = ms_since(start);
        let start = Instant::now();
        let solution = self.engine.solve_owned(volume)?;
        let cut_ms = ms_since(start);
        let height = pending[0].height;
        let masks = unstack(&solution.mask, height);
        let span = VolumeSpan {
            first: pending[0].index,
            frames: pending.len() as u32,
        };
        let count = pending.len() as f64;
        let share = |ms: f64| ms / count;
        let mut outputs = Vec::with_capacity(pending.len());
        for (slice, mut mask) in pending.into_iter().zip(masks) {
            let start = Instant::now();
            let previous = self.last.as_ref();
            let around = Around {
                hard: slice.hard.as_ref(),
                previous,
            };
            let (cleaner, labeller) = (&mut self.cleaner, &mut self.labeller);
            clean_frame(&self.params, around, |params, constraints| {
                cleaner.clean(&mut mask, params, constraints, labeller)
            })?;
            self.adapt_background(&slice, &mask);
            let cleanup_ms = ms_since(start);
            let timings = FrameTiming {
                energy_ms: slice.energy_ms + share(build_ms),
                cut_ms: share(cut_ms),
                cleanup_ms,
                total_ms: slice.energy_ms + share(build_ms + cut_ms) + cleanup_ms,
                ..Default::default()
            };
            outputs.push(SegmentOutput {
                mask: mask.clone(),
                flow: solution.flow,
                timings,
                fallback: None,
                stats: solution.stats.clone(),
                learning: false,
                census: None,
                noise_gate: 0,
                volume: Some(span),
                energy: Default::default(),
                gpu: None,
                motion: None,
                frame_on_device: None,
            });
            self.last = Some(mask);
        }
        Ok(outputs)
    }

    /// Lets the learned background learn from a frame's final mask, as after a frame
    /// cut alone: the frame is observed again with the mask before it, then adapted to.
    fn adapt_background(&mut self, slice: &Pending, mask: &Mask) {
        let previous = self.last.as_ref();
        let model = self.background.as_mut().filter(|b| b.is_ready());
        if let (Some(model), Some(rgb)) = (model, &slice.rgb) {
            model.observe(rgb, previous);
            model.adapt(rgb, mask);
        }
    }
}

fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

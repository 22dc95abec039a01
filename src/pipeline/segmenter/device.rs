//! Video frames with the energy on a GPU: beside the CUDA engine the CUDA energy builds
//! the capacities, which the engine cuts there, the cleanup reads the cut on the
//! device, and one mask comes back; beside the CPU engine the wgpu energy (any GPU)
//! builds them and brings them back for the CPU engine. Frames of a learned
//! background, and the frames after the seeded one of a colour-model sequence (the
//! seeded frame itself, with its crop and colour re-learning, is cut on the CPU path).
//! Any GPU failure hands the frame (and the ones after it) to the CPU path, which
//! gives the same masks.

use super::{SegmentError, SegmentOutput, Segmenter, labeller_for, ms_since};
use crate::capture::Frame;
use crate::compute::{ComputeDevice, ComputeError};
use crate::energy::cuda::DeviceEnergy;
use crate::energy::plan::{Capacities, DataTerm, DeviceFrame, GpuEnergy};
use crate::energy::wgpu::WgpuEnergy;
use crate::energy::{CAPACITY_SCALE, Smoothness, TemporalPrior};
use crate::maxflow::{Engine, EngineKind};
use crate::pipeline::timing::FrameTiming;
use std::time::Instant;

/// The GPU energy that suits an engine: the CUDA energy beside a CUDA engine where its
/// kernels load; the wgpu energy on `compute` beside the CPU engine where given and
/// its shaders compile; else none.
pub(super) fn device_energy_for(
    engine: &dyn Engine,
    compute: Option<&ComputeDevice>,
) -> Option<Box<dyn GpuEnergy>> {
    match engine.kind() {
        EngineKind::Cuda => DeviceEnergy::new()
            .ok()
            .map(|e| Box::new(e) as Box<dyn GpuEnergy>),
        EngineKind::Cpu => compute
            .and_then(|gpu| WgpuEnergy::new(gpu.clone()).ok())
            .map(|e| Box::new(e) as Box<dyn GpuEnergy>),
    }
}

impl Segmenter {
    /// The device energy for the engine given at creation.
    pub(super) fn with_device_energy(mut self) -> Self {
        self.device = device_energy_for(self.engine.as_ref(), self.compute.as_ref());
        self
    }

    /// Builds video frames' energy with wgpu compute shaders on `gpu` while the engine
    /// is the CPU one (the capacities come back to it); `None` stops. The CUDA engine
    /// keeps its own energy. Where the shaders do not compile there, says why and keeps
    /// the CPU energy.
    pub fn set_compute(&mut self, gpu: Option<ComputeDevice>) -> Result<(), ComputeError> {
        self.compute = None;
        if self.engine.kind() == EngineKind::Cpu {
            self.leave_device();
            self.device = None;
            if let Some(gpu) = &gpu {
                self.device = Some(Box::new(WgpuEnergy::new(gpu.clone())?));
            }
            self.labeller = labeller_for(self.engine.as_ref(), gpu.as_ref());
        }
        self.compute = gpu;
        Ok(())
    }

    /// What the video frames' energy runs on where not on the CPU ("CUDA", or wgpu
    /// and its adapter), `None` where it has no GPU energy.
    pub fn gpu_energy(&self) -> Option<String> {
        let device = self.device.as_ref().filter(|_| self.device_energy)?;
        Some(device.name())
    }

    /// Whether the cleanup labels on a GPU (CUDA beside the CUDA engine, wgpu beside
    /// the CPU engine where a compute device was given).
    pub fn labels_on_gpu(&self) -> bool {
        self.labeller.on_gpu()
    }

    /// Turns the device energy on or off for video frames (on by default where the
    /// engine is CUDA): off, the energy is built on the CPU and uploaded. Either way
    /// the capacities, flows and masks are the same.
    pub fn set_device_energy(&mut self, on: bool) {
        if !on {
            self.leave_device();
        }
        self.device_energy = on;
    }

    /// Whether the last frame's energy was built on the device.
    pub fn device_energy_active(&self) -> bool {
        self.on_device
    }

    /// Takes the background model's state and the gate's held colours back from the
    /// device (the CPU path goes on from them); where that fails, the model keeps the
    /// state it had when the device took it, and the gate starts afresh.
    pub(super) fn leave_device(&mut self) {
        self.on_device = false;
        let Some(device) = self.device.as_mut() else {
            return;
        };
        if let Some(model) = self.background.as_mut()
            && device.holds_model()
            && device.hand_back(model).is_err()
        {
            device.release();
        }
        match device.hand_back_gate() {
            Ok(Some((held, width, height))) => self.gate.hold(held, width, height),
            Ok(None) => {}
            Err(_) => self.gate.reset(),
        }
    }

    /// Forgets what the device holds of the model (it was relearned or reset).
    pub(super) fn release_device(&mut self) {
        if let Some(device) = &mut self.device {
            device.release();
        }
    }

    /// Segments a video frame on the device; `None` where the device path does not
    /// apply (no device energy; a seeded frame, or one with nothing to cut by yet) or
    /// the GPU failed before the cut, and the CPU path takes the frame.
    pub(super) fn segment_on_device(
        &mut self,
        frame: &Frame,
        start: Instant,
    ) -> Option<Result<SegmentOutput, SegmentError>> {
        if !(self.device_energy && self.device.is_some()) {
            self.leave_device();
            return None;
        }
        self.restore_redone(frame);
        let background = self.background_ready();
        let colours = !background && self.models.is_some() && !self.seeds_pending;
        // the device estimates σ from the gated frame, the CPU from the steady one a
        // learned background gives: with a background, only a known σ goes there
        let sigma_known = self.params.sigma.or(self.background_sigma).is_some();
        if !(colours || background && sigma_known) {
            self.leave_device();
            return None;
        }
        // the engine will hold a problem the CPU energy did not build
        self.builder.forget();
        let fresh = self.seeds_pending;
        if fresh {
            self.seeds_pending = false;
            if let Err(e) = self.check_background_seeds(frame) {
                return Some(Err(e));
            }
        }
        let noise_gate = self.gate_threshold();
        let p = &self.params;
        let input = DeviceFrame {
            width: frame.width,
            height: frame.height,
            rgb: &frame.rgb,
            noise_gate,
            gate: self.gate.held(frame.width, frame.height),
            smoothness: Smoothness {
                connectivity: p.connectivity,
                lambda: p.lambda,
                // the empty scene's σ with a learned background, as on the CPU path
                sigma: p.sigma.or(self.background_sigma.filter(|_| background)),
                scale: CAPACITY_SCALE,
            },
            held_sigma: self.held_sigma,
            temporal: TemporalPrior {
                weight: p.temporal,
                ramp: p.temporal_ramp,
            },
            previous: self.previous.as_ref(),
            previous_version: self.previous_version,
            // seeds hold on every frame with a learned background; later frames of a
            // colour-model sequence have none
            seeds: self.seeds.as_ref().filter(|_| background),
            seeds_version: self.seeds_version,
        };
        let term = match (self.background.as_mut(), self.models.as_mut()) {
            (Some(model), _) if background => DataTerm::Background {
                model,
                weight: p.background_weight,
            },
            (_, Some(models)) => DataTerm::Colours {
                models,
                version: self.models_version,
            },
            _ => return None,
        };
        // true again once this frame is cut from the device's capacities
        let was_on_device = std::mem::take(&mut self.on_device);
        let device = self.device.as_mut()?;
        let built = match device.build(input, term) {
            Ok(built) => built,
            Err(e) => {
                self.give_up_device(&e);
                return None;
            }
        };
        let mut timings = FrameTiming {
            energy_ms: ms_since(start),
            ..Default::default()
        };
        let cut_start = Instant::now();
        let resume = self.params.dynamic && self.engine_warm;
        let solution = match built {
            Capacities::Device(grid) => self.engine.solve_device(grid, resume),
            // the engine's kept graph is of the last problem this energy brought back
            // where the frame before was built here too
            Capacities::Host(problem, Some(changes))
                if resume && was_on_device && self.incremental =>
            {
                Some(self.engine.update_changed(problem, changes))
            }
            Capacities::Host(problem, _) if resume => Some(self.engine.update(problem)),
            Capacities::Host(problem, _) => Some(self.engine.solve(problem)),
        };
        let solution = match solution {
            Some(Ok(solution)) => solution,
            Some(Err(e)) if self.engine.kind() == EngineKind::Cpu => {
                return Some(Err(SegmentError::Engine(e)));
            }
            Some(Err(e)) => {
                // the CPU engine (and CPU energy) take this frame and the later ones
                self.give_up_device(&e);
                self.fall_back_to_cpu(&e);
                return None;
            }
            None => {
                self.leave_device();
                self.device = None;
                return None;
            }
        };
        self.engine_warm = true;
        self.on_device = true;
        if self.params.sigma.is_none() && !background {
            // the device estimated σ and held it as the CPU path does
            self.held_sigma = self.device.as_ref().map(|d| d.last_sigma());
        }
        timings.cut_ms = ms_since(cut_start);
        Some(self.finish_on_device(frame, solution, fresh, timings, start))
    }

    /// The cleanup on the device's cut, the background's adaptation on the device, and
    /// the frame's output.
    fn finish_on_device(
        &mut self,
        frame: &Frame,
        mut solution: crate::maxflow::Solution,
        fresh: bool,
        mut timings: FrameTiming,
        start: Instant,
    ) -> Result<SegmentOutput, SegmentError> {
        let clean_start = Instant::now();
        let with_background = self.background_ready();
        // seeds are hard on every frame of a learned background only
        let seeds = self.seeds.take();
        let hard = seeds.as_ref().filter(|_| with_background);
        let mut mask = std::mem::replace(&mut solution.mask, crate::grid::Mask::empty(0, 0));
        // the cut again for the CPU labeller, should the device's fail; a cleanup that
        // does nothing cannot
        let cut = self.labelling_runs().then(|| mask.clone());
        let cleaned = match self.clean(&mut mask, hard, true) {
            Err(SegmentError::Labelling(e)) => {
                self.fall_back_to_cpu(&e);
                if let Some(cut) = cut {
                    mask = cut;
                }
                self.clean(&mut mask, hard, false)
            }
            other => other,
        };
        self.seeds = seeds;
        let report = cleaned?;
        timings.cleanup_ms = ms_since(clean_start);
        let adapt_start = Instant::now();
        // the version `end_frame` gives the mask as the previous one
        let version = self.previous_version + 1;
        // the engine's cut, still on the device, and what the cleanup changed of it
        let on_device = self
            .engine
            .device_mask()
            .map(|cut| (cut, report.changed_span));
        if let (Some(device), Some(model)) = (self.device.as_mut(), self.background.as_ref())
            && let Err(e) = device.finish(&mask, version, model, on_device)
        {
            self.give_up_device(&e);
        }
        timings.energy_ms += ms_since(adapt_start);
        let output = self.end_frame(frame, mask, solution, fresh, timings, start);
        debug_assert_eq!(self.previous_version, version);
        Ok(output)
    }

    /// Stops using the device energy after a GPU error: the model keeps the state it
    /// had when the device took it, and the window and CLI are told.
    fn give_up_device(&mut self, error: &dyn std::fmt::Display) {
        self.fallback = Some(format!(
            "the GPU energy failed ({error}); building the energy on the CPU"
        ));
        self.device = None;
        self.gate.reset();
        if self.engine.kind() == EngineKind::Cpu {
            // the wgpu device failed: its labeller goes with its energy
            self.compute = None;
            self.labeller = labeller_for(self.engine.as_ref(), None);
        }
    }
}

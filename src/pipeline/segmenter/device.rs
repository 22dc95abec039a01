//! Background-mode frames with the whole frame on the GPU: the device energy builds the
//! capacities beside the CUDA engine, which cuts them there; the cleanup reads the cut
//! on the device, and one mask comes back. Any GPU failure hands the frame (and the
//! ones after it) to the CPU path, which gives the same masks.

use super::{LastFrame, SegmentError, SegmentOutput, Segmenter, ms_since};
use crate::capture::Frame;
use crate::energy::cuda::{BackgroundFrame, DeviceEnergy};
use crate::energy::{CAPACITY_SCALE, Smoothness, TemporalPrior};
use crate::maxflow::{Engine, EngineKind};
use crate::pipeline::timing::FrameTiming;
use std::time::Instant;

/// The device energy that suits an engine: one beside a CUDA engine where its kernels
/// load, else none.
pub(super) fn device_energy_for(engine: &dyn Engine) -> Option<DeviceEnergy> {
    (engine.kind() == EngineKind::Cuda)
        .then(DeviceEnergy::new)
        .and_then(Result::ok)
}

impl Segmenter {
    /// The device energy for the engine given at creation.
    pub(super) fn with_device_energy(mut self) -> Self {
        self.device = device_energy_for(self.engine.as_ref());
        self
    }

    /// Turns the device energy on or off for background-mode frames (on by default
    /// where the engine is CUDA): off, the energy is built on the CPU and uploaded.
    /// Either way the capacities, flows and masks are the same.
    pub fn set_device_energy(&mut self, on: bool) {
        if !on {
            self.leave_device();
        }
        self.device_energy = on;
    }

    /// Whether the last background-mode frames were built on the device.
    pub fn device_energy_active(&self) -> bool {
        self.device_energy && self.device.as_ref().is_some_and(DeviceEnergy::holds_model)
    }

    /// Takes the background model's state back from the device (the CPU path goes on
    /// from it); where that fails, the model keeps the state it had when the device
    /// took it.
    pub(super) fn leave_device(&mut self) {
        let (Some(device), Some(model)) = (self.device.as_mut(), self.background.as_mut()) else {
            return;
        };
        if device.holds_model() {
            if device.hand_back(model).is_err() {
                device.release();
            }
            self.gate.reset();
        }
    }

    /// Forgets what the device holds of the model (it was relearned or reset).
    pub(super) fn release_device(&mut self) {
        if let Some(device) = &mut self.device {
            device.release();
        }
    }

    /// Segments a background-mode frame on the device; `None` where the device path
    /// does not apply (no device energy, no learned background, no fixed σ) or the GPU
    /// failed before the cut, and the CPU path takes the frame.
    pub(super) fn segment_on_device(
        &mut self,
        frame: &Frame,
        start: Instant,
    ) -> Option<Result<SegmentOutput, SegmentError>> {
        let sigma = self.params.sigma.or(self.background_sigma);
        let usable = self.device_energy && self.device.is_some() && self.background_ready();
        let Some(sigma) = sigma.filter(|_| usable) else {
            self.leave_device();
            return None;
        };
        self.restore_redone(frame);
        let fresh = self.seeds_pending;
        if fresh {
            self.seeds_pending = false;
            if let Err(e) = self.check_background_seeds(frame) {
                return Some(Err(e));
            }
        }
        let p = &self.params;
        let input = BackgroundFrame {
            width: frame.width,
            height: frame.height,
            rgb: &frame.rgb,
            noise_gate: p.noise_gate,
            smoothness: Smoothness {
                connectivity: p.connectivity,
                lambda: p.lambda,
                sigma: Some(sigma),
                scale: CAPACITY_SCALE,
            },
            background_weight: p.background_weight,
            temporal: TemporalPrior {
                weight: p.temporal,
                ramp: p.temporal_ramp,
            },
            previous: self.previous.as_ref(),
            seeds: self.seeds.as_ref(),
        };
        let device = self.device.as_mut()?;
        let model = self.background.as_mut()?;
        let grid = match device.build(input, model) {
            Ok(grid) => grid,
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
        let solution = match self.engine.solve_device(grid, resume) {
            Some(Ok(solution)) => solution,
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
        let hard = self.seeds.take();
        let mut mask = std::mem::replace(&mut solution.mask, crate::grid::Mask::empty(0, 0));
        let cut = mask.clone();
        let cleaned = match self.clean(&mut mask, hard.as_ref(), true) {
            Err(SegmentError::Labelling(e)) => {
                self.fall_back_to_cpu(&e);
                mask = cut;
                self.clean(&mut mask, hard.as_ref(), false)
            }
            other => other,
        };
        self.seeds = hard;
        cleaned?;
        timings.cleanup_ms = ms_since(clean_start);
        let adapt_start = Instant::now();
        if let (Some(device), Some(model)) = (self.device.as_mut(), self.background.as_ref())
            && let Err(e) = device.finish(&mask, model)
        {
            self.give_up_device(&e);
        }
        timings.energy_ms += ms_since(adapt_start);
        let before = self.previous.replace(mask.clone());
        self.last = Some(LastFrame {
            index: frame.index,
            width: frame.width,
            height: frame.height,
            previous: before,
            seeded: fresh,
            learning: false,
        });
        timings.total_ms = ms_since(start);
        Ok(SegmentOutput {
            mask,
            flow: solution.flow,
            timings,
            stats: solution.stats,
            fallback: self.fallback.take(),
            learning: false,
        })
    }

    /// Stops using the device energy after a GPU error: the model keeps the state it
    /// had when the device took it, and the window and CLI are told.
    fn give_up_device(&mut self, error: &dyn std::fmt::Display) {
        self.fallback = Some(format!(
            "the GPU energy failed ({error}); building the energy on the CPU"
        ));
        self.device = None;
        self.gate.reset();
    }
}

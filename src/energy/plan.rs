//! What a frame's energy on a GPU is built from (the frame, its data term, σ, the
//! prior and the seeds), shared by the CUDA and the wgpu energies so that both take the
//! same plan and check it the same way.

use super::{BackgroundModel, ColorModels, SeedLabel, Seeds, Smoothness, TemporalPrior};
use crate::compute::FrameOnDevice;
use crate::gpu::{DeviceGrid, DeviceMask, GpuError};
use crate::grid::{Direction, GridProblem, Mask, ProblemChanges};
use std::sync::Arc;

/// Where a frame's energy was built, for the JSON and the window.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EnergyDevice {
    /// On the CPU.
    #[default]
    Cpu,
    /// By the CUDA kernels.
    Cuda,
    /// By the wgpu compute shaders.
    Wgpu,
}

impl std::fmt::Display for EnergyDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EnergyDevice::Cpu => "cpu",
            EnergyDevice::Cuda => "cuda",
            EnergyDevice::Wgpu => "wgpu",
        })
    }
}

/// Where a GPU energy left a frame's capacities.
pub enum Capacities<'a> {
    /// On the CUDA device, for the CUDA engine to cut there.
    Device(&'a DeviceGrid),
    /// Brought back to the host, for the CPU engine, with where they can differ from
    /// the last ones brought back (`None`: anywhere).
    Host(&'a GridProblem, Option<ProblemChanges<'a>>),
}

impl Capacities<'_> {
    /// A host copy of the capacities (for tests and tools; the engines read them where
    /// they are).
    pub fn to_problem(&self) -> Result<GridProblem, GpuError> {
        match self {
            Capacities::Device(grid) => grid.to_problem(),
            Capacities::Host(problem, _) => Ok((*problem).clone()),
        }
    }
}

/// What a GPU energy holds on its device, so that it uploads only what changed and
/// knows what to hand back.
#[derive(Debug, Default)]
pub struct Held {
    /// The version of the previous mask on the device, if one is there.
    pub previous: Option<u64>,
    /// The version of the seeds on the device, if any are there.
    pub seeds: Option<u64>,
    /// The gate holds colours of an earlier frame.
    pub gate: bool,
    /// The model's state is on the device.
    pub model: bool,
    /// The device's `last` holds an adapted frame.
    pub had_last: bool,
}

/// A frame's energy built on a GPU from the shared plan, identical to the CPU
/// energy's: CUDA ([`super::cuda::DeviceEnergy`]) or wgpu ([`super::wgpu::WgpuEnergy`]).
/// While it runs it holds the background model's per-pixel state and the noise gate's
/// colours, which it hands back when the CPU energy takes over.
pub trait GpuEnergy: Send {
    /// What it runs on, for people ("CUDA", or the wgpu adapter and its API).
    fn name(&self) -> String;

    /// Which kind of GPU energy it is.
    fn kind(&self) -> EnergyDevice;

    /// Builds `frame`'s capacities with `term` as its data term.
    fn build(
        &mut self,
        frame: DeviceFrame<'_>,
        term: DataTerm<'_>,
    ) -> Result<Capacities<'_>, GpuError>;

    /// After the cut: `mask` becomes the previous mask on the device, as version
    /// `version`, and a learned background adapts to the frame by it. `cut`: the
    /// engine's cut where it is still on the same device, with the span of pixels the
    /// cleanup changed in it.
    fn finish(
        &mut self,
        mask: &Mask,
        version: u64,
        model: &BackgroundModel,
        cut: Option<(DeviceMask<'_>, Option<(usize, usize)>)>,
    ) -> Result<(), GpuError>;

    /// Copies the model's per-pixel state back into `model`; the device then holds none.
    fn hand_back(&mut self, model: &mut BackgroundModel) -> Result<(), GpuError>;

    /// The gate's held colours and their frame's size; the device gate then holds none.
    fn hand_back_gate(&mut self) -> Result<Option<(Vec<u8>, u32, u32)>, GpuError>;

    /// What it holds on the device.
    fn held(&mut self) -> &mut Held;

    /// Whether the device holds the background model's state (hand it back before the
    /// CPU energy uses the model again).
    fn holds_model(&mut self) -> bool {
        self.held().model
    }

    /// Forgets the model's, the gate's and the previous mask's state without handing
    /// it back (the model was relearned or reset).
    fn release(&mut self) {
        *self.held() = Held::default();
    }

    /// The last frame's bytes where they stay on a wgpu device for a compositor there
    /// (`None` by default: the CUDA energy's device is not the window's).
    fn frame_on_device(&self) -> Option<Arc<FrameOnDevice>> {
        None
    }

    /// Forgets the previous mask (the next frame has no temporal prior) and the gate's
    /// colours, as the CPU path does after a jump in the stream.
    fn forget_previous(&mut self) {
        let held = self.held();
        held.previous = None;
        held.gate = false;
    }

    /// σ of the last frame's contrast term.
    fn last_sigma(&self) -> f32;
}

/// One video frame to build the energy of.
#[derive(Clone, Copy, Debug)]
pub struct DeviceFrame<'a> {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// The camera's RGB bytes, before the noise gate.
    pub rgb: &'a [u8],
    /// Noise gate threshold (0 = off), as `SegmentParams::noise_gate`.
    pub noise_gate: u8,
    /// The CPU gate's held colours, which the device gate goes on from where it holds
    /// none (the frame before was gated on the CPU).
    pub gate: Option<&'a [u8]>,
    /// Contrast term; σ `None` is estimated from the gated frame and held as
    /// [`super::hold_sigma`] says, as on the CPU.
    pub smoothness: Smoothness,
    /// The σ held from the frames before, where σ is estimated.
    pub held_sigma: Option<f32>,
    /// The temporal prior from `previous`.
    pub temporal: TemporalPrior,
    /// The last frame's mask, if any.
    pub previous: Option<&'a Mask>,
    /// Changes whenever `previous` does (the device uploads it only then).
    pub previous_version: u64,
    /// Hard seeds, if any.
    pub seeds: Option<&'a Seeds>,
    /// Changes whenever `seeds` are new ones (the device uploads them only then).
    pub seeds_version: u64,
}

/// The data term of a frame.
#[derive(Debug)]
pub enum DataTerm<'a> {
    /// A learned background (webcam mode), with the weight of its term. Its gain is
    /// updated on the host, its per-pixel state moves to the device on the first frame.
    Background {
        /// The learned model.
        model: &'a mut BackgroundModel,
        /// Weight of the background term.
        weight: f32,
    },
    /// Colour models learned from seeds, tabled by colour cell and uploaded when
    /// `version` changes (which it must whenever the models do).
    Colours {
        /// The models.
        models: &'a mut ColorModels,
        /// Changes whenever the models do.
        version: u64,
    },
}

/// Errors unless the frame's bytes, the data term's model, the seeds and the previous
/// mask agree in size.
pub(crate) fn check_frame(frame: &DeviceFrame<'_>, term: &DataTerm<'_>) -> Result<(), GpuError> {
    let (w, h) = (frame.width, frame.height);
    let n = w as usize * h as usize;
    let model_fits = match term {
        DataTerm::Background { model, .. } => model.fits(w, h) && model.is_ready(),
        DataTerm::Colours { .. } => true,
    };
    let seeds_fit = frame.seeds.is_none_or(|s| s.check_size(w, h).is_ok());
    let previous_fits = frame.previous.is_none_or(|m| (m.width, m.height) == (w, h));
    if frame.rgb.len() != 3 * n || n == 0 || !model_fits || !seeds_fit || !previous_fits {
        return Err(GpuError::Mismatch(format!(
            "a {w}×{h} frame of {} bytes does not fit its model, seeds or previous mask",
            frame.rgb.len()
        )));
    }
    Ok(())
}

/// The seed label as the kernels read it: 0 none, 1 foreground, 2 background.
pub(crate) fn seed_code(label: SeedLabel) -> u8 {
    match label {
        SeedLabel::Unknown => 0,
        SeedLabel::Foreground => 1,
        SeedLabel::Background => 2,
    }
}

/// Every direction's offset packed as the kernels unpack it (`dir_dx`, `dir_dy`): four
/// bits per direction in `Direction::ALL` order, dx + 1 and dy + 1.
pub(crate) fn packed_offsets() -> u32 {
    Direction::ALL.iter().enumerate().fold(0, |acc, (d, dir)| {
        let (dx, dy) = dir.offset();
        acc | (((dx + 1) as u32) | (((dy + 1) as u32) << 2)) << (4 * d)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn energy_devices_print_as_the_json_names_them() {
        for device in [EnergyDevice::Cpu, EnergyDevice::Cuda, EnergyDevice::Wgpu] {
            let json = serde_json::to_string(&device).unwrap();
            assert_eq!(json, format!("\"{device}\""));
        }
    }

    #[test]
    fn packed_offsets_give_back_every_direction() {
        let packed = packed_offsets();
        for (d, dir) in Direction::ALL.iter().enumerate() {
            let dx = ((packed >> (4 * d)) & 3) as i32 - 1;
            let dy = ((packed >> (4 * d + 2)) & 3) as i32 - 1;
            assert_eq!((dx, dy), dir.offset(), "{dir:?}");
        }
    }
}

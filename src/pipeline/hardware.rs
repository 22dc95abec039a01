//! Where a video's frames run, as the user asked: the max-flow engine
//! ([`EngineChoice`]) and the device of the energy around it ([`GpuChoice`]). `auto`
//! prefers CUDA (engine and energy on the NVIDIA GPU), then the CPU engine beside the
//! wgpu energy on a real GPU of any maker, then the CPU alone, and says which it took.

use super::{SegmentParams, Segmenter};
use crate::compute::{AdapterChoice, ComputeDevice, ComputeError};
use crate::maxflow::{Engine, EngineChoice, EngineError, EngineKind, create_engine};
use serde::Serialize;

/// Why the hardware asked for cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum HardwareError {
    /// The engine did not start.
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// No wgpu adapter, or the energy's shaders did not compile on it.
    #[error(transparent)]
    Compute(#[from] ComputeError),
    /// `--engine` and `--gpu` ask for what cannot go together.
    #[error("{0}")]
    Conflict(&'static str),
}

/// Where the energy of video frames runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum GpuChoice {
    /// CUDA beside the CUDA engine; beside the CPU engine, wgpu on a real GPU where
    /// there is one; else the CPU.
    #[default]
    Auto,
    /// CUDA: engine and energy on the NVIDIA GPU.
    Cuda,
    /// wgpu compute shaders (Vulkan, Metal, DirectX 12) on the best adapter, software
    /// ones included, beside the CPU engine.
    Wgpu,
    /// The energy on the CPU.
    None,
}

/// The engine and the energy's device chosen for a video, with notes for people.
pub struct Hardware {
    /// The max-flow engine.
    pub engine: Box<dyn Engine>,
    /// The wgpu device of the energy beside the CPU engine, if any.
    pub compute: Option<ComputeDevice>,
    /// Whether the energy runs on a GPU at all.
    pub gpu_energy: bool,
    /// What was chosen instead of what was asked, and why.
    pub notes: Vec<String>,
}

impl Hardware {
    /// Chooses as asked; errors where a forced choice cannot be had or two choices
    /// contradict each other.
    pub fn choose(engine: EngineChoice, gpu: GpuChoice) -> Result<Self, HardwareError> {
        let engine = match (engine, gpu) {
            (EngineChoice::Cpu, GpuChoice::Cuda) | (EngineChoice::Cuda, GpuChoice::Wgpu) => {
                return Err(HardwareError::Conflict(
                    "the CUDA energy runs beside the CUDA engine, the wgpu energy beside the CPU engine",
                ));
            }
            (_, GpuChoice::Cuda) => EngineChoice::Cuda,
            (_, GpuChoice::Wgpu) => EngineChoice::Cpu,
            (engine, _) => engine,
        };
        let (engine, note) = create_engine(engine)?;
        let mut notes: Vec<String> = note.into_iter().collect();
        let mut compute = None;
        if engine.kind() == EngineKind::Cpu {
            let adapters = match gpu {
                GpuChoice::Wgpu => Some(AdapterChoice::Any),
                GpuChoice::Auto => Some(AdapterChoice::RealGpu),
                GpuChoice::Cuda | GpuChoice::None => None,
            };
            match adapters.map(ComputeDevice::open) {
                Some(Ok(device)) => {
                    notes.push(format!(
                        "the energy runs on {} through wgpu",
                        device.adapter
                    ));
                    compute = Some(device);
                }
                Some(Err(e)) if gpu == GpuChoice::Wgpu => return Err(e.into()),
                Some(Err(_)) | None => {}
            }
        }
        let gpu_energy =
            gpu != GpuChoice::None && (engine.kind() == EngineKind::Cuda || compute.is_some());
        Ok(Self {
            engine,
            compute,
            gpu_energy,
            notes,
        })
    }

    /// A segmenter on this hardware.
    pub fn segmenter(self, params: SegmentParams) -> Result<Segmenter, ComputeError> {
        let mut segmenter = Segmenter::new(self.engine, params);
        segmenter.set_compute(self.compute)?;
        segmenter.set_device_energy(self.gpu_energy);
        Ok(segmenter)
    }
}

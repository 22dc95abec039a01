//! Composing where the machine can: in wgpu compute shaders where a device was given,
//! else on the CPU. Both give the same bytes, so a device that fails mid-stream hands
//! its frames to the CPU with nothing but the time changed.

use super::wgpu::WgpuCompositor;
use super::{Buffers, Composite};
use crate::capture::Frame;
use crate::compute::{AdapterSummary, ComputeDevice, ComputeError};
use crate::grid::Mask;
use image::RgbaImage;

/// A composite maker for a stream of frames: the GPU's while it works, the CPU's
/// after, each keeping its buffers from frame to frame.
#[derive(Default)]
pub struct Compositor {
    cpu: Buffers,
    gpu: Option<WgpuCompositor>,
}

impl Compositor {
    /// Composes on the CPU.
    pub fn cpu() -> Self {
        Self::default()
    }

    /// Composes on `gpu`, or says why its shaders do not compile there.
    pub fn on(gpu: ComputeDevice) -> Result<Self, ComputeError> {
        Ok(Self {
            cpu: Buffers::default(),
            gpu: Some(WgpuCompositor::new(gpu)?),
        })
    }

    /// The adapter it composes on, `None` on the CPU.
    pub fn gpu(&self) -> Option<&AdapterSummary> {
        self.gpu.as_ref().map(|g| &g.device().adapter)
    }

    /// [`Composite::compose_into`] on the GPU where it has one, else on the CPU. Gives
    /// the error of a GPU that failed: that frame and the later ones are composed on
    /// the CPU.
    pub fn compose_into(
        &mut self,
        composite: &Composite,
        frame: &Frame,
        mask: &Mask,
        out: &mut RgbaImage,
    ) -> Option<ComputeError> {
        let failed = match &mut self.gpu {
            Some(gpu) => gpu.compose_into(composite, frame, mask, out).err(),
            None => {
                composite.compose_into(frame, mask, &mut self.cpu, out);
                return None;
            }
        };
        if failed.is_some() {
            self.gpu = None;
            composite.compose_into(frame, mask, &mut self.cpu, out);
        }
        failed
    }
}

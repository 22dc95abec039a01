//! Connected-component labelling of masks, on the CPU (union–find) and on the GPU
//! (label propagation with links and master cells, in CUDA or wgpu), and the mask cleanup built on it.
//!
//! Canonical labelling: pixels p and q are connected when they are neighbours (4- or
//! 8-connected) and hold the same value; every pixel's label is the smallest row-major
//! index `y·width + x` in its component. The labelling is unique, so the CPU and GPU
//! labellers must agree exactly.

pub mod cleanup;
pub mod cpu;
pub mod cuda;
pub mod smooth;
pub mod wgpu;

pub use cleanup::{Cleaner, CleanupParams, CleanupReport, Constraints};
pub use cpu::CpuLabeller;
pub use cuda::CudaLabeller;
pub use smooth::Smoother;
pub use wgpu::WgpuLabeller;

use crate::compute::ComputeError;
use crate::gpu::{DeviceMask, GpuError};
use crate::grid::Connectivity;
use thiserror::Error;

/// Why a labelling could not be computed.
#[derive(Debug, Error)]
pub enum CclError {
    /// The values do not hold one byte per pixel, or the grid is empty or too large.
    #[error("cannot label a {width}x{height} grid from {got} values")]
    BadInput {
        /// Grid width.
        width: u32,
        /// Grid height.
        height: u32,
        /// Number of values given.
        got: usize,
    },
    /// The grid has too many pixels for the GPU labeller's 32-bit link indices.
    #[error("a {width}x{height} grid is too large for 32-bit link indices")]
    TooLarge {
        /// Grid width.
        width: u32,
        /// Grid height.
        height: u32,
    },
    /// The GPU runtime could not do its part (no device, a driver call, a compilation).
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// The wgpu device failed (lost, out of memory, a shader refused).
    #[error(transparent)]
    Compute(#[from] ComputeError),
}

/// Something that labels the connected components of a grid of byte values.
pub trait Labeller: Send {
    /// Whether it labels on the GPU (else on the CPU).
    fn on_gpu(&self) -> bool;

    /// Writes the canonical labels (see the module documentation) of `values`, a
    /// row-major `width`×`height` grid, into `labels` (resized to fit).
    fn label(
        &mut self,
        values: &[u8],
        width: u32,
        height: u32,
        connectivity: Connectivity,
        labels: &mut Vec<u32>,
    ) -> Result<(), CclError>;

    /// Labels `values` as [`Labeller::label`] does, where `device` holds the same values
    /// on the GPU (the cut's mask as the CUDA engine left it): a labeller on that device
    /// reads them there instead of uploading `values`; the others ignore it.
    fn label_with_device(
        &mut self,
        values: &[u8],
        _device: Option<&DeviceMask<'_>>,
        width: u32,
        height: u32,
        connectivity: Connectivity,
        labels: &mut Vec<u32>,
    ) -> Result<(), CclError> {
        self.label(values, width, height, connectivity, labels)
    }
}

/// Checks that `values` fits a non-empty `width`×`height` grid with 32-bit indices.
fn check_input(values: &[u8], width: u32, height: u32) -> Result<usize, CclError> {
    let n = width as u64 * height as u64;
    if n == 0 || n >= u32::MAX as u64 || values.len() as u64 != n {
        return Err(CclError::BadInput {
            width,
            height,
            got: values.len(),
        });
    }
    Ok(n as usize)
}

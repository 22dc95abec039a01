//! A grid's capacities on the device, written by the energy kernels and read by the
//! max-flow engine on the same device, so a frame's graph never crosses to the host.

use super::{GpuError, driver};
use crate::grid::{Connectivity, GridError, GridProblem};
use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// Capacities of a `width`×`height` grid in the layout of [`GridProblem`]: row-major
/// source and sink arrays, and one row-major array per direction of the connectivity
/// (in `Direction::ALL` order) back to back. Owned by its writer; a reader on another
/// stream waits for [`Self::stream`] first.
pub struct DeviceGrid {
    pub(crate) width: u32,
    pub(crate) height: u32,
    pub(crate) connectivity: Connectivity,
    pub(crate) source: CudaSlice<i32>,
    pub(crate) sink: CudaSlice<i32>,
    pub(crate) edges: CudaSlice<i32>,
    pub(crate) stream: Arc<CudaStream>,
    /// Pixels with any terminal capacity, pixels the source feeds, pixels the sink
    /// pulls (after folding), counted by the writer for the engine's schedule choices.
    pub(crate) census: [u32; 3],
}

impl DeviceGrid {
    /// Zeroed arrays for a grid of this shape, written on `stream`.
    pub(crate) fn new(
        stream: &Arc<CudaStream>,
        width: u32,
        height: u32,
        connectivity: Connectivity,
    ) -> Result<Self, GpuError> {
        let n = (width as usize * height as usize).max(1);
        let dirs = connectivity.number() as usize;
        let alloc = |len: usize| {
            stream
                .alloc_zeros::<i32>(len)
                .map_err(driver("allocating the capacity arrays"))
        };
        Ok(Self {
            width,
            height,
            connectivity,
            source: alloc(n)?,
            sink: alloc(n)?,
            edges: alloc(n * dirs)?,
            stream: stream.clone(),
            census: [0; 3],
        })
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// 4- or 8-connected.
    pub fn connectivity(&self) -> Connectivity {
        self.connectivity
    }

    /// Pixels.
    pub fn pixels(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// Whether the arrays hold a grid of this shape.
    pub fn fits(&self, width: u32, height: u32, connectivity: Connectivity) -> bool {
        (self.width, self.height, self.connectivity) == (width, height, connectivity)
    }

    /// The capacities copied to the host (for tests and the CPU fallback).
    pub fn to_problem(&self) -> Result<GridProblem, GpuError> {
        let read = |slice: &CudaSlice<i32>| {
            self.stream
                .clone_dtoh(slice)
                .map_err(driver("reading the capacities"))
        };
        let n = self.pixels();
        let mut source = read(&self.source)?;
        let mut sink = read(&self.sink)?;
        let all = read(&self.edges)?;
        source.truncate(n);
        sink.truncate(n);
        let edges = all.chunks(n.max(1)).map(<[i32]>::to_vec).collect();
        GridProblem::from_arrays(
            self.width,
            self.height,
            self.connectivity,
            source,
            sink,
            edges,
        )
        .map_err(|e: GridError| GpuError::Mismatch(format!("device capacities: {e}")))
    }
}

impl std::fmt::Debug for DeviceGrid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceGrid")
            .field("width", &self.width)
            .field("height", &self.height)
            .field("connectivity", &self.connectivity)
            .finish_non_exhaustive()
    }
}

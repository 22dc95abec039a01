//! Host-to-device copies of large arrays through page-locked memory: each chunk is
//! copied (on every core) into one of two page-locked buffers while the device reads
//! the other, where a copy from ordinary memory goes through the driver's own staging
//! one chunk after another.

use super::{Gpu, GpuError, driver};
use crate::bands;
use cudarc::driver::{
    CudaEvent, CudaStream, CudaViewMut, DeviceRepr, PinnedHostSlice, ValidAsZeroBits,
};
use std::sync::Arc;

/// Elements of a chunk, and of each buffer.
const CHUNK: usize = 1 << 21;
/// Elements of a band of a chunk's host copy.
const BAND: usize = 1 << 14;

/// Two page-locked buffers, and the copies still reading them.
pub(crate) struct Staging<T> {
    buffers: [PinnedHostSlice<T>; 2],
    reading: [Option<CudaEvent>; 2],
    next: usize,
}

impl<T: DeviceRepr + ValidAsZeroBits + Copy + Send + Sync> Staging<T> {
    /// Allocates the buffers (page-locked, write-combined: the host only writes them).
    pub(crate) fn new(gpu: &Gpu) -> Result<Self, GpuError> {
        let alloc = || {
            // SAFETY: every element a copy reads is written first (`upload`).
            unsafe { gpu.context().alloc_pinned::<T>(CHUNK) }
                .map_err(driver("allocating page-locked staging memory"))
        };
        Ok(Self {
            buffers: [alloc()?, alloc()?],
            reading: [None, None],
            next: 0,
        })
    }

    /// Queues the copy of `src` into `dst` (at least as long) on `stream`; returns
    /// once every chunk is in a buffer, the last ones possibly still on their way.
    pub(crate) fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        src: &[T],
        dst: &mut CudaViewMut<'_, T>,
    ) -> Result<(), GpuError> {
        let err = || driver("uploading through page-locked memory");
        for (i, chunk) in src.chunks(CHUNK).enumerate() {
            let slot = self.next;
            self.next ^= 1;
            if let Some(reading) = self.reading[slot].take() {
                reading.synchronize().map_err(err())?;
            }
            let buffer = &mut self.buffers[slot].as_mut_slice().map_err(err())?[..chunk.len()];
            bands::as_copy(|| {
                bands::for_each_band(buffer, BAND, 1, |row, band| {
                    let at = row * BAND;
                    band.copy_from_slice(&chunk[at..at + band.len()]);
                })
            });
            let at = i * CHUNK;
            let mut part = dst.slice_mut(at..at + chunk.len());
            // a plain slice: the copy does not wait, the event says when it has read it
            stream.memcpy_htod(&*buffer, &mut part).map_err(err())?;
            self.reading[slot] = Some(stream.record_event(None).map_err(err())?);
        }
        Ok(())
    }
}

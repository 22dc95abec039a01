//! A cut's mask lent on the device from the engine that wrote it to a labeller.

use cudarc::driver::{CudaSlice, CudaStream};
use std::sync::Arc;

/// The mask of an engine's last solution where the engine left it on the GPU: row-major
/// `width`×`height` bytes, 255 on the source side, as the host's copy. Borrowed from the
/// engine, so it stays valid (and unchanged) until the engine's next call; a labeller on
/// the same device reads it there instead of uploading the host's copy.
#[derive(Clone, Copy)]
pub struct DeviceMask<'a> {
    data: &'a CudaSlice<u8>,
    stream: &'a Arc<CudaStream>,
    width: u32,
    height: u32,
}

impl<'a> DeviceMask<'a> {
    /// The `width`×`height` mask in `data`, written by work on `stream`.
    pub(crate) fn new(
        data: &'a CudaSlice<u8>,
        stream: &'a Arc<CudaStream>,
        width: u32,
        height: u32,
    ) -> Self {
        Self {
            data,
            stream,
            width,
            height,
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> u32 {
        self.width
    }

    /// Height in pixels.
    pub fn height(&self) -> u32 {
        self.height
    }

    /// The bytes on the device.
    pub(crate) fn data(&self) -> &'a CudaSlice<u8> {
        self.data
    }

    /// The stream whose work wrote the mask: a reader on another stream waits for it.
    pub(crate) fn stream(&self) -> &'a Arc<CudaStream> {
        self.stream
    }
}

impl std::fmt::Debug for DeviceMask<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceMask")
            .field("width", &self.width)
            .field("height", &self.height)
            .finish_non_exhaustive()
    }
}

//! The device's copy bandwidth: what a pass over device memory can at best reach.

use super::{GpuError, driver};
use cudarc::driver::CudaStream;
use cudarc::driver::sys::CUevent_flags;
use std::sync::Arc;

/// Bytes each buffer of the measurement holds: copies this large take long enough for
/// the events' resolution.
const BYTES: usize = 256 << 20;
/// Timed copies, after one untimed copy.
const COPIES: usize = 5;

/// Bytes a second that device-to-device copies on `stream` move (reads and writes
/// together), timed with events.
pub fn measure(stream: &Arc<CudaStream>) -> Result<f64, GpuError> {
    let src = stream
        .alloc_zeros::<u8>(BYTES)
        .map_err(driver("bandwidth buffer"))?;
    let mut dst = stream
        .alloc_zeros::<u8>(BYTES)
        .map_err(driver("bandwidth buffer"))?;
    let ctx = stream.context();
    let event = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(driver("bandwidth event"))
    };
    let (start, end) = (event()?, event()?);
    stream
        .memcpy_dtod(&src, &mut dst)
        .map_err(driver("bandwidth copy"))?;
    start.record(stream).map_err(driver("bandwidth event"))?;
    for _ in 0..COPIES {
        stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(driver("bandwidth copy"))?;
    }
    end.record(stream).map_err(driver("bandwidth event"))?;
    let ms = start.elapsed_ms(&end).map_err(driver("bandwidth timing"))? as f64;
    Ok(2.0 * (BYTES * COPIES) as f64 / (ms * 1e-3))
}

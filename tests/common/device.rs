//! GPU tests on machines without a GPU: an engine that could not start for want of a
//! device is skipped with a note; any other failure fails the test.

use livecut::gpu::GpuError;
use livecut::maxflow::EngineError;

/// The engine, or `None` (with a note) where it failed for want of a usable CUDA device.
pub fn skip_without_device<E>(engine: Result<E, EngineError>) -> Option<E> {
    match engine {
        Ok(engine) => Some(engine),
        Err(EngineError::Gpu(GpuError::Unavailable(why))) => {
            eprintln!("note: skipping, no CUDA device ({why})");
            None
        }
        Err(other) => panic!("CUDA engine failed to start: {other}"),
    }
}

//! GPU tests on machines without a GPU: an engine that could not start for want of a
//! device is skipped with a note; any other failure fails the test. The wgpu tests run
//! on any adapter, software ones included (lavapipe in CI, where
//! `LIVECUT_REQUIRE_WGPU=1` makes a missing adapter a failure instead of a skip).

use livecut::compute::{AdapterChoice, ComputeDevice};
use livecut::gpu::GpuError;
use livecut::maxflow::EngineError;

/// A wgpu device on any adapter, or `None` (with a note) where there is none.
pub fn compute_device() -> Option<ComputeDevice> {
    match ComputeDevice::open(AdapterChoice::Any) {
        Ok(gpu) => Some(gpu),
        Err(e) if std::env::var_os("LIVECUT_REQUIRE_WGPU").is_some() => {
            panic!("LIVECUT_REQUIRE_WGPU is set and no wgpu adapter opened: {e}")
        }
        Err(e) => {
            eprintln!("note: skipping the wgpu part, no adapter ({e})");
            None
        }
    }
}

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

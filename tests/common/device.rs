//! GPU tests on machines without a GPU: an engine that could not start for want of a
//! device is skipped with a note; any other failure fails the test. The wgpu tests run
//! on any adapter, software ones included (lavapipe in CI, where
//! `LIVECUT_REQUIRE_WGPU=1` makes a missing adapter a failure instead of a skip).

use livecut::compute::{AdapterChoice, ComputeDevice, FrameOnDevice};
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

/// The bytes of a frame left on a wgpu device (`len` of them), read back.
pub fn frame_bytes(gpu: &ComputeDevice, frame: &FrameOnDevice, len: usize) -> Vec<u8> {
    let size = frame.buffer.size();
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu.device.create_command_encoder(&Default::default());
    encoder.copy_buffer_to_buffer(&frame.buffer, 0, &staging, 0, size);
    gpu.queue.submit([encoder.finish()]);
    staging.map_async(wgpu::MapMode::Read, .., |r| r.expect("mapping"));
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .expect("waiting for the device");
    staging.get_mapped_range(..).expect("mapped")[..len].to_vec()
}

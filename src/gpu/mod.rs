//! The one CUDA runtime of the process, shared by every GPU user (the max-flow engine,
//! the labeller, later the energy kernels).
//!
//! [`Gpu::get`] is the only place that creates a CUDA context: it probes for the driver
//! and NVRTC libraries first, so that a machine without them gets a [`GpuError`] instead
//! of a panic, and opens device 0 once per process. The [`Gpu`] then compiles each
//! [`KernelFamily`] once per process and variant (NVRTC), hands out streams and measures
//! the copy bandwidth on request. Families load their kernels into typed handles; device
//! buffers belong to their users and may outlive one call, and a user can lend one to
//! another on the same device ([`DeviceMask`]) instead of copying it through the host.
//! Nothing above the engines sees cudarc; the UI never sees this module.

mod bandwidth;
mod device;
mod error;
mod grid;
mod mask;
mod module;
mod staging;

pub use device::Gpu;
pub use error::GpuError;
pub(crate) use error::driver;
pub use grid::DeviceGrid;
pub use mask::DeviceMask;
pub use module::{Compiled, KernelFamily, KernelSource, Program};
pub(crate) use staging::Staging;

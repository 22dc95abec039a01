//! The one error type of GPU work, which the engine's and the labeller's errors wrap.

use cudarc::driver::DriverError;
use thiserror::Error;

/// Why GPU work could not be done. `Clone`, because the runtime keeps a failed start or
/// compilation and answers every later call with it.
#[derive(Clone, Debug, Error)]
pub enum GpuError {
    /// No usable CUDA driver, NVRTC library or device; the reason is for people.
    #[error("CUDA is not available: {0}")]
    Unavailable(String),
    /// A CUDA driver call failed.
    #[error("CUDA error: {what}: {message}")]
    Driver {
        /// What was being done.
        what: String,
        /// The driver's message.
        message: String,
    },
    /// NVRTC could not compile a kernel program.
    #[error("kernel compilation failed: {program}: {log}")]
    Compile {
        /// The program's file name.
        program: &'static str,
        /// The start of the compiler's log.
        log: String,
    },
    /// A wgpu adapter, device or shader failed (the compute back-end for every GPU).
    #[error("GPU compute error: {0}")]
    Compute(String),
    /// Compiled kernels disagree with the host about their layout or shape.
    #[error("CUDA error: {0}")]
    Mismatch(String),
}

/// Turns a driver error into a [`GpuError`] that says what was being done.
pub(crate) fn driver(what: impl Into<String>) -> impl FnOnce(DriverError) -> GpuError {
    move |e| GpuError::Driver {
        what: what.into(),
        message: e.to_string(),
    }
}

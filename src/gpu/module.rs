//! Kernel programs, their compilation by NVRTC, and the typed handles a family of
//! kernels loads from its module.

use super::{Gpu, GpuError};
use cudarc::driver::{CudaFunction, CudaModule};
use cudarc::nvrtc::{CompileError, CompileOptions, Ptx};
use std::fmt::Debug;
use std::hash::Hash;
use std::ops::Deref;
use std::sync::Arc;

/// One CUDA C file embedded in the binary, and the `extern "C" __global__` entry points
/// its family loads from it.
#[derive(Clone, Copy, Debug)]
pub struct KernelSource {
    /// File name under `kernels/`.
    pub name: &'static str,
    /// The CUDA C text.
    pub text: &'static str,
    /// Entry points the family loads.
    pub entries: &'static [&'static str],
}

impl KernelSource {
    /// Entry point `name` (one of [`Self::entries`]) out of `module`, loaded from this
    /// source, as a family's typed handle.
    pub fn function(&self, module: &Arc<CudaModule>, name: &str) -> Result<CudaFunction, GpuError> {
        debug_assert!(self.entries.contains(&name), "{name} in {}", self.name);
        module
            .load_function(name)
            .map_err(super::driver(format!("kernel {name}")))
    }
}

/// What NVRTC compiles for one variant of a family.
#[derive(Clone, Debug)]
pub struct Program {
    /// File name for the compiler's messages.
    pub name: &'static str,
    /// The CUDA C text.
    pub text: String,
    /// NVRTC options (standard, defines); the runtime adds the device's architecture.
    pub options: Vec<String>,
}

/// A set of kernels compiled together: its program per variant, and the typed handles
/// (named fields, never a lookup by string at launch) it loads from the module.
pub trait KernelFamily: Sized + Send + Sync + 'static {
    /// What tells the family's modules apart (e.g. a tile height; `()` for one module).
    type Variant: Copy + Eq + Hash + Debug + Send + Sync + 'static;

    /// The program of one variant.
    fn program(variant: Self::Variant) -> Program;

    /// The handles out of the loaded module, after any check the family needs.
    fn load(gpu: &Gpu, module: &Arc<CudaModule>, variant: Self::Variant) -> Result<Self, GpuError>;
}

/// A family's kernels as loaded once per process and variant, with what that cost.
pub struct Compiled<F> {
    kernels: F,
    /// Milliseconds NVRTC took to compile the program.
    pub compile_ms: f64,
    /// Milliseconds the driver took to load the module (its JIT of the PTX).
    pub load_ms: f64,
}

impl<F> Compiled<F> {
    pub(super) fn new(kernels: F, compile_ms: f64, load_ms: f64) -> Self {
        Self {
            kernels,
            compile_ms,
            load_ms,
        }
    }
}

impl<F> Deref for Compiled<F> {
    type Target = F;

    fn deref(&self) -> &F {
        &self.kernels
    }
}

/// Compiles `program` for a device of compute capability `cc`; an NVRTC older than
/// the device does not know its architecture, so then for NVRTC's default target (the
/// driver JIT-compiles the PTX for the device).
pub(super) fn compile(program: &Program, cc: (i32, i32)) -> Result<Ptx, GpuError> {
    let arch = format!("--gpu-architecture=compute_{}{}", cc.0, cc.1);
    let attempt = |arch: Option<&str>| {
        let mut options = program.options.clone();
        options.extend(arch.map(str::to_string));
        cudarc::nvrtc::compile_ptx_with_opts(
            &program.text,
            CompileOptions {
                options,
                name: Some(program.name.into()),
                ..Default::default()
            },
        )
    };
    attempt(Some(&arch))
        .or_else(|_| attempt(None))
        .map_err(|e| GpuError::Compile {
            program: program.name,
            log: compile_log(&e),
        })
}

/// The first lines of the compiler's log, on one line.
fn compile_log(e: &CompileError) -> String {
    match e {
        CompileError::CompileError { log, .. } => log
            .to_string_lossy()
            .lines()
            .take(20)
            .collect::<Vec<_>>()
            .join(" | "),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::KernelSource;

    #[test]
    fn every_entry_point_is_defined_once() {
        let sources: Vec<&KernelSource> = crate::maxflow::cuda::KERNEL_SOURCES
            .iter()
            .chain([&crate::ccl::cuda::SOURCE, &crate::energy::cuda::SOURCE])
            .collect();
        for source in sources {
            assert!(!source.text.trim().is_empty(), "{} is empty", source.name);
            for entry in source.entries {
                let pattern = format!(" {entry}(");
                let defs = source
                    .text
                    .lines()
                    .filter(|l| l.starts_with("extern \"C\" __global__") && l.contains(&pattern))
                    .count();
                assert_eq!(defs, 1, "{entry} in {}", source.name);
            }
        }
    }
}

//! The process-wide CUDA runtime of the engine: driver and NVRTC presence checks, one
//! NVRTC compilation of the kernels per process and tile height, the loaded modules and
//! their functions.

use super::kernels::{KERNEL_SOURCES, program_text};
use super::layout::{Ctl, Params, TILE_HEIGHTS, TILE_W};
use crate::maxflow::EngineError;
use cudarc::driver::sys::{CUdevice_attribute, CUevent_flags, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{CompileOptions, Ptx};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Why the runtime could not start (kept in the `OnceLock`, so it must be `Clone`).
#[derive(Clone, Debug)]
enum StartError {
    Unavailable(String),
    Compile(String),
    Cuda(String),
}

impl From<StartError> for EngineError {
    fn from(e: StartError) -> Self {
        match e {
            StartError::Unavailable(s) => EngineError::CudaUnavailable(s),
            StartError::Compile(s) => EngineError::Compile(s),
            StartError::Cuda(s) => EngineError::Cuda(s),
        }
    }
}

/// Shared-memory bytes and other sizes the compiled kernels report about themselves.
#[derive(Clone, Copy, Debug)]
pub struct KernelLayout {
    /// Dynamic shared memory of a discharge block, per connectivity (4C, 8C).
    pub tile_smem: [u32; 2],
    /// Dynamic shared memory of a BFS block.
    pub bfs_smem: u32,
    /// Threads per tile block the kernels were compiled for (`BDIM`).
    pub block_threads: u32,
}

/// The device and the kernels compiled for it.
pub struct Runtime {
    /// The CUDA context of device 0 (primary context).
    pub ctx: Arc<CudaContext>,
    /// Device name, e.g. "NVIDIA H200".
    pub device_name: String,
    /// Compute capability.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Whether the device runs cooperative launches (the persistent solve).
    cooperative: bool,
    /// The kernels for each tile height of [`TILE_HEIGHTS`], compiled on first use
    /// (32-pixel tiles when the runtime starts).
    kernels: [OnceLock<Result<Arc<Kernels>, StartError>>; TILE_HEIGHTS.len()],
    /// Device-to-device copy bandwidth in bytes a second, measured on first use (`None`
    /// where the device could not spare the buffers).
    bandwidth: OnceLock<Option<f64>>,
}

/// The kernels compiled for one tile height: the loaded module, its functions and what
/// the engine needs to know about them.
pub struct Kernels {
    functions: HashMap<&'static str, CudaFunction>,
    _module: Arc<CudaModule>,
    /// Milliseconds NVRTC took to compile them.
    pub compile_ms: f64,
    /// Milliseconds to load the module (driver JIT of the PTX).
    pub load_ms: f64,
    /// Sizes reported by the kernels.
    pub layout: KernelLayout,
    /// Blocks of a persistent (cooperative) solve that fit on the device at once, per
    /// connectivity (4C, 8C); 0 when cooperative launches are not supported.
    pub coop_blocks: [u32; 2],
}

impl Kernels {
    /// The kernel `name` (one of the entries of [`KERNEL_SOURCES`]).
    pub fn function(&self, name: &str) -> Result<&CudaFunction, EngineError> {
        self.functions
            .get(name)
            .ok_or_else(|| EngineError::Cuda(format!("kernel {name} is not loaded")))
    }
}

/// Bytes each buffer of the bandwidth measurement holds, and how many timed copies it
/// makes: 256 MiB copies take long enough (~0.2 ms on an H100) for the events' resolution.
const BANDWIDTH_BYTES: usize = 256 << 20;
const BANDWIDTH_COPIES: usize = 5;

impl Runtime {
    /// The device's memory bandwidth as a large device-to-device copy moves data, in
    /// bytes a second (reads and writes together): what a sweep over the grid's state
    /// can at best reach. Measured on `stream` once per process, on first use; `None`
    /// where that failed (a statistic, so it never fails a solve).
    pub fn copy_bandwidth(&self, stream: &Arc<CudaStream>) -> Option<f64> {
        *self
            .bandwidth
            .get_or_init(|| measure_bandwidth(stream).ok())
    }

    /// The kernels for tiles `tile_h` pixels high (one of [`TILE_HEIGHTS`]), compiled
    /// the first time they are asked for.
    pub fn kernels(&self, tile_h: u32) -> Result<Arc<Kernels>, EngineError> {
        let slot = TILE_HEIGHTS
            .iter()
            .position(|&h| h == tile_h)
            .ok_or_else(|| {
                EngineError::Cuda(format!(
                    "no kernels for tiles {tile_h} pixels high (have {TILE_HEIGHTS:?})"
                ))
            })?;
        self.compiled(slot).map_err(EngineError::from)
    }

    /// The kernels of slot `slot` of [`TILE_HEIGHTS`], compiled and loaded on first use.
    fn compiled(&self, slot: usize) -> Result<Arc<Kernels>, StartError> {
        self.kernels[slot]
            .get_or_init(|| self.build(TILE_HEIGHTS[slot]).map(Arc::new))
            .clone()
    }

    /// Compiles and loads the kernels for tiles `tile_h` pixels high.
    fn build(&self, tile_h: u32) -> Result<Kernels, StartError> {
        let t0 = Instant::now();
        let ptx = compile(self.compute_capability, tile_h)?;
        let compile_ms = t0.elapsed().as_secs_f64() * 1e3;
        let t1 = Instant::now();
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(cuda("loading the compiled kernels"))?;
        let mut functions = HashMap::new();
        for source in KERNEL_SOURCES {
            for &entry in source.entries {
                let f = module
                    .load_function(entry)
                    .map_err(|e| StartError::Cuda(format!("kernel {entry}: {e}")))?;
                functions.insert(entry, f);
            }
        }
        let load_ms = t1.elapsed().as_secs_f64() * 1e3;
        let layout = check_layout(&self.ctx, &functions, tile_h)?;
        let coop_blocks = self.persistent_blocks(&functions, &layout)?;
        Ok(Kernels {
            functions,
            _module: module,
            compile_ms,
            load_ms,
            layout,
            coop_blocks,
        })
    }

    /// Blocks of a persistent solve that fit on the device at once, per connectivity
    /// (4C, 8C); 0 without cooperative launches.
    fn persistent_blocks(
        &self,
        functions: &HashMap<&'static str, CudaFunction>,
        layout: &KernelLayout,
    ) -> Result<[u32; 2], StartError> {
        let mut blocks = [0u32; 2];
        if !self.cooperative {
            return Ok(blocks);
        }
        for (k, solve) in ["pr_solve4", "pr_solve8"].into_iter().enumerate() {
            let per_sm = functions[solve]
                .occupancy_max_active_blocks_per_multiprocessor(
                    layout.block_threads,
                    layout.tile_smem[k] as usize,
                    None,
                )
                .map_err(cuda("occupancy"))?;
            blocks[k] = per_sm * self.sm_count;
        }
        Ok(blocks)
    }
}

static RUNTIME: OnceLock<Result<Arc<Runtime>, StartError>> = OnceLock::new();

/// The process-wide runtime, started on first use. Never panics: a missing driver or
/// NVRTC library, no device or a failing compilation come back as errors.
pub fn runtime() -> Result<Arc<Runtime>, EngineError> {
    RUNTIME
        .get_or_init(start_guarded)
        .clone()
        .map_err(EngineError::from)
}

fn start_guarded() -> Result<Arc<Runtime>, StartError> {
    // SAFETY: these only try to dlopen the libraries; nothing else is called yet.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(StartError::Unavailable(
            "the NVIDIA driver library (libcuda) was not found".into(),
        ));
    }
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(StartError::Unavailable(
            "the NVRTC library (libnvrtc, CUDA 12 or 13) was not found".into(),
        ));
    }
    // cudarc panics when a driver entry point is missing (e.g. a driver older than the
    // API it was built for): turn that into an error instead of ending the program.
    match std::panic::catch_unwind(start) {
        Ok(result) => result.map(Arc::new),
        Err(_) => Err(StartError::Unavailable(
            "the CUDA driver does not provide the expected API".into(),
        )),
    }
}

fn cuda(what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> StartError + '_ {
    move |e| StartError::Cuda(format!("{what}: {e}"))
}

/// Times [`BANDWIDTH_COPIES`] copies of [`BANDWIDTH_BYTES`] (after one untimed copy)
/// with events on `stream`.
fn measure_bandwidth(stream: &Arc<CudaStream>) -> Result<f64, StartError> {
    let src = stream
        .alloc_zeros::<u8>(BANDWIDTH_BYTES)
        .map_err(cuda("bandwidth buffer"))?;
    let mut dst = stream
        .alloc_zeros::<u8>(BANDWIDTH_BYTES)
        .map_err(cuda("bandwidth buffer"))?;
    let ctx = stream.context();
    let event = || {
        ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
            .map_err(cuda("bandwidth event"))
    };
    let (start, end) = (event()?, event()?);
    stream
        .memcpy_dtod(&src, &mut dst)
        .map_err(cuda("bandwidth copy"))?;
    start.record(stream).map_err(cuda("bandwidth event"))?;
    for _ in 0..BANDWIDTH_COPIES {
        stream
            .memcpy_dtod(&src, &mut dst)
            .map_err(cuda("bandwidth copy"))?;
    }
    end.record(stream).map_err(cuda("bandwidth event"))?;
    let ms = start.elapsed_ms(&end).map_err(cuda("bandwidth timing"))? as f64;
    Ok(2.0 * (BANDWIDTH_BYTES * BANDWIDTH_COPIES) as f64 / (ms * 1e-3))
}

fn start() -> Result<Runtime, StartError> {
    let count = CudaContext::device_count()
        .map_err(|e| StartError::Unavailable(format!("the CUDA driver did not start ({e})")))?;
    if count < 1 {
        return Err(StartError::Unavailable("no CUDA device found".into()));
    }
    let ctx = CudaContext::new(0)
        .map_err(|e| StartError::Unavailable(format!("cannot open CUDA device 0 ({e})")))?;
    // Each engine uses its own stream for its own buffers only: no cross-stream tracking.
    // SAFETY: no slice is ever shared between streams by this engine.
    unsafe { ctx.disable_event_tracking() };
    let device_name = ctx.name().map_err(cuda("device name"))?;
    let compute_capability = ctx
        .compute_capability()
        .map_err(cuda("compute capability"))?;
    let sm_count = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(cuda("multiprocessor count"))? as u32;
    let cooperative = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
        .map_err(cuda("cooperative launch attribute"))?
        != 0;

    let rt = Runtime {
        ctx,
        device_name,
        compute_capability,
        sm_count,
        cooperative,
        kernels: Default::default(),
        bandwidth: OnceLock::new(),
    };
    // The square tiles' kernels now: a device that cannot run them is found at start.
    rt.compiled(0)?;
    Ok(rt)
}

fn compile(cc: (i32, i32), tile_h: u32) -> Result<Ptx, StartError> {
    let arch = format!("--gpu-architecture=compute_{}{}", cc.0, cc.1);
    let attempt = |arch: Option<&str>| {
        let mut options = vec![
            "--std=c++17".to_string(),
            "-lineinfo".to_string(),
            format!("-DTH={tile_h}"),
        ];
        options.extend(arch.map(str::to_string));
        cudarc::nvrtc::compile_ptx_with_opts(
            program_text(),
            CompileOptions {
                options,
                name: Some("pushrelabel.cu".into()),
                ..Default::default()
            },
        )
    };
    // An NVRTC older than the device does not know its architecture: fall back to its
    // default target (the driver JIT-compiles the PTX for the device).
    attempt(Some(&arch))
        .or_else(|_| attempt(None))
        .map_err(|e| StartError::Compile(compile_message(&e)))
}

fn compile_message(e: &cudarc::nvrtc::CompileError) -> String {
    match e {
        cudarc::nvrtc::CompileError::CompileError { log, .. } => log
            .to_string_lossy()
            .lines()
            .take(20)
            .collect::<Vec<_>>()
            .join(" | "),
        other => format!("{other:?}"),
    }
}

/// Asks the module for its struct sizes, checks them against the Rust mirrors and raises
/// the dynamic shared-memory limit of the kernels that need more than 48 KB.
fn check_layout(
    ctx: &Arc<CudaContext>,
    functions: &HashMap<&'static str, CudaFunction>,
    tile_h: u32,
) -> Result<KernelLayout, StartError> {
    let stream = ctx.default_stream();
    let mut out = stream.alloc_zeros::<u32>(7).map_err(cuda("alloc"))?;
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (32, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: pr_layout writes 7 u32 to its argument, which holds 7.
    unsafe {
        stream
            .launch_builder(&functions["pr_layout"])
            .arg(&mut out)
            .launch(cfg)
    }
    .map_err(cuda("layout kernel"))?;
    let sizes = stream.clone_dtoh(&out).map_err(cuda("layout readback"))?;
    let expected = [
        std::mem::size_of::<Params>() as u32,
        std::mem::size_of::<Ctl>() as u32,
    ];
    if sizes[0] != expected[0] || sizes[1] != expected[1] {
        return Err(StartError::Cuda(format!(
            "kernel structs do not match the engine (Params {} vs {}, Ctl {} vs {})",
            sizes[0], expected[0], sizes[1], expected[1]
        )));
    }
    let layout = KernelLayout {
        tile_smem: [sizes[2], sizes[3]],
        bfs_smem: sizes[4],
        block_threads: sizes[5],
    };
    if sizes[6] != tile_h || layout.block_threads != TILE_W * tile_h {
        return Err(StartError::Cuda(format!(
            "kernels for {TILE_W}x{tile_h} tiles report {}-pixel-high tiles and {} threads per block",
            sizes[6], layout.block_threads
        )));
    }
    let attr = CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
    for (name, bytes) in [
        ("pr_discharge4", layout.tile_smem[0]),
        ("pr_discharge8", layout.tile_smem[1]),
        ("pr_solve4", layout.tile_smem[0]),
        ("pr_solve8", layout.tile_smem[1]),
        ("pr_gr_round4", layout.bfs_smem),
        ("pr_gr_round8", layout.bfs_smem),
    ] {
        functions[name]
            .set_attribute(attr, bytes as i32)
            .map_err(|e| {
                StartError::Cuda(format!("shared memory of {name} ({bytes} bytes): {e}"))
            })?;
    }
    Ok(layout)
}

//! Label propagation on an NVIDIA GPU (`kernels/ccl.cu`, compiled once per process with
//! NVRTC): tile-local labelling in shared memory, links by pointer jumping, then
//! double-buffered min-gather sweeps with master lookups until no label changes.

use super::{CclError, Labeller, check_input};
use crate::grid::Connectivity;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::{CompileOptions, Ptx};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

const SOURCE: &str = include_str!("../../kernels/ccl.cu");

/// Tile of `ccl_local` (must match `TILE_W`/`TILE_H` in the kernel source).
const TILE: (u32, u32) = (32, 8);

/// The kernels compiled by NVRTC, and how long that took (ms); compiled once.
static PTX: OnceLock<Result<(Ptx, f64), String>> = OnceLock::new();

fn compiled() -> Result<&'static (Ptx, f64), CclError> {
    PTX.get_or_init(|| {
        let start = Instant::now();
        let opts = CompileOptions {
            name: Some("ccl.cu".into()),
            ..Default::default()
        };
        cudarc::nvrtc::compile_ptx_with_opts(SOURCE, opts)
            .map(|ptx| (ptx, start.elapsed().as_secs_f64() * 1e3))
            .map_err(|e| e.to_string())
    })
    .as_ref()
    .map_err(|e| CclError::Compile(e.clone()))
}

fn cuda_err(e: impl std::fmt::Display) -> CclError {
    CclError::Cuda(e.to_string())
}

/// Device arrays for one grid size.
struct Buffers {
    pixels: usize,
    dirs: usize,
    values: CudaSlice<u8>,
    labels: [CudaSlice<u32>; 2],
    links: [CudaSlice<u32>; 2],
    changed: CudaSlice<u32>,
}

/// The GPU labeller: a CUDA context on device 0, the kernels, and device buffers
/// kept for the next call of the same size.
pub struct CudaLabeller {
    stream: Arc<CudaStream>,
    local: CudaFunction,
    links_init: CudaFunction,
    links_jump: CudaFunction,
    propagate: CudaFunction,
    buffers: Option<Buffers>,
    device_name: String,
    compile_ms: f64,
    last_sweeps: u32,
}

impl CudaLabeller {
    /// Opens device 0 and loads the kernels, or says why it cannot (no driver
    /// library, no NVRTC, no device, compilation failure). Never panics.
    pub fn new() -> Result<Self, CclError> {
        // SAFETY: only probes whether the shared libraries can be loaded.
        if !unsafe { cudarc::driver::sys::is_culib_present() } {
            return Err(CclError::CudaUnavailable(
                "no CUDA driver library found".into(),
            ));
        }
        // SAFETY: as above.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            return Err(CclError::CudaUnavailable("no NVRTC library found".into()));
        }
        cudarc::driver::result::init()
            .map_err(|e| CclError::CudaUnavailable(format!("driver init failed: {e}")))?;
        let count = CudaContext::device_count()
            .map_err(|e| CclError::CudaUnavailable(format!("cannot count devices: {e}")))?;
        if count < 1 {
            return Err(CclError::CudaUnavailable("no CUDA device".into()));
        }
        let ctx = CudaContext::new(0).map_err(cuda_err)?;
        let device_name = ctx.name().map_err(cuda_err)?;
        let (ptx, compile_ms) = compiled()?;
        let module = ctx.load_module(ptx.clone()).map_err(cuda_err)?;
        let load = |name: &str| module.load_function(name).map_err(cuda_err);
        Ok(Self {
            stream: ctx.default_stream(),
            local: load("ccl_local")?,
            links_init: load("ccl_links_init")?,
            links_jump: load("ccl_links_jump")?,
            propagate: load("ccl_propagate")?,
            buffers: None,
            device_name,
            compile_ms: *compile_ms,
            last_sweeps: 0,
        })
    }

    /// The GPU's name.
    pub fn device_name(&self) -> &str {
        &self.device_name
    }

    /// Milliseconds NVRTC took to compile the kernels (once per process).
    pub fn compile_ms(&self) -> f64 {
        self.compile_ms
    }

    /// Propagation sweeps of the last labelling (the last one changed nothing).
    pub fn last_sweeps(&self) -> u32 {
        self.last_sweeps
    }

    fn buffers(&mut self, pixels: usize, dirs: usize) -> Result<&mut Buffers, CclError> {
        let fits = self
            .buffers
            .as_ref()
            .is_some_and(|b| b.pixels == pixels && b.dirs == dirs);
        if !fits {
            self.buffers = None;
            let s = &self.stream;
            let alloc = |len: usize| s.alloc_zeros::<u32>(len).map_err(cuda_err);
            self.buffers = Some(Buffers {
                pixels,
                dirs,
                values: s.alloc_zeros::<u8>(pixels).map_err(cuda_err)?,
                labels: [alloc(pixels)?, alloc(pixels)?],
                links: [alloc(pixels * dirs)?, alloc(pixels * dirs)?],
                changed: alloc(1)?,
            });
        }
        Ok(self.buffers.as_mut().expect("just allocated"))
    }

    fn run(
        &mut self,
        values: &[u8],
        width: u32,
        height: u32,
        dirs: usize,
        labels: &mut [u32],
    ) -> Result<u32, CclError> {
        let stream = self.stream.clone();
        let (local, links_init, links_jump, propagate) = (
            self.local.clone(),
            self.links_init.clone(),
            self.links_jump.clone(),
            self.propagate.clone(),
        );
        let b = self.buffers(values.len(), dirs)?;
        let (w, h, d) = (width as i32, height as i32, dirs as i32);
        let cfg = LaunchConfig {
            grid_dim: (width.div_ceil(TILE.0), height.div_ceil(TILE.1), 1),
            block_dim: (TILE.0, TILE.1, 1),
            shared_mem_bytes: 0,
        };
        stream
            .memcpy_htod(values, &mut b.values)
            .map_err(cuda_err)?;
        let [lab_a, lab_b] = &mut b.labels;
        let [link_a, link_b] = &mut b.links;
        // SAFETY (all launches): argument lists match the kernels' signatures in
        // kernels/ccl.cu, and every buffer holds `pixels` (× `dirs`) elements.
        unsafe {
            stream
                .launch_builder(&local)
                .arg(&b.values)
                .arg(&mut *lab_a)
                .arg(&w)
                .arg(&h)
                .arg(&d)
                .launch(cfg)
                .map_err(cuda_err)?;
            stream
                .launch_builder(&links_init)
                .arg(&b.values)
                .arg(&mut *link_a)
                .arg(&w)
                .arg(&h)
                .arg(&d)
                .launch(cfg)
                .map_err(cuda_err)?;
        }
        let jumps = u32::BITS - (width.max(height).max(2) - 1).leading_zeros();
        let (mut link_in, mut link_out) = (link_a, link_b);
        for _ in 0..jumps {
            // SAFETY: see above.
            unsafe {
                stream
                    .launch_builder(&links_jump)
                    .arg(&*link_in)
                    .arg(&mut *link_out)
                    .arg(&w)
                    .arg(&h)
                    .arg(&d)
                    .launch(cfg)
                    .map_err(cuda_err)?;
            }
            std::mem::swap(&mut link_in, &mut link_out);
        }
        let (mut lab_in, mut lab_out) = (lab_a, lab_b);
        let mut sweeps = 0;
        let mut flag = [0u32];
        loop {
            sweeps += 1;
            stream.memset_zeros(&mut b.changed).map_err(cuda_err)?;
            // SAFETY: see above.
            unsafe {
                stream
                    .launch_builder(&propagate)
                    .arg(&b.values)
                    .arg(&*link_in)
                    .arg(&*lab_in)
                    .arg(&mut *lab_out)
                    .arg(&mut b.changed)
                    .arg(&w)
                    .arg(&h)
                    .arg(&d)
                    .launch(cfg)
                    .map_err(cuda_err)?;
            }
            std::mem::swap(&mut lab_in, &mut lab_out);
            stream
                .memcpy_dtoh(&b.changed, &mut flag)
                .map_err(cuda_err)?;
            stream.synchronize().map_err(cuda_err)?;
            if flag[0] == 0 {
                break;
            }
        }
        stream.memcpy_dtoh(&*lab_in, labels).map_err(cuda_err)?;
        stream.synchronize().map_err(cuda_err)?;
        Ok(sweeps)
    }
}

impl Labeller for CudaLabeller {
    fn kind(&self) -> crate::maxflow::EngineKind {
        crate::maxflow::EngineKind::Cuda
    }

    fn label(
        &mut self,
        values: &[u8],
        width: u32,
        height: u32,
        connectivity: Connectivity,
        labels: &mut Vec<u32>,
    ) -> Result<(), CclError> {
        let n = check_input(values, width, height)?;
        labels.resize(n, 0);
        let dirs = connectivity.number() as usize;
        if (n * dirs) as u64 >= u32::MAX as u64 {
            return Err(CclError::Cuda(format!(
                "a {width}x{height} grid is too large for 32-bit link indices"
            )));
        }
        self.last_sweeps = self.run(values, width, height, dirs, labels)?;
        Ok(())
    }
}

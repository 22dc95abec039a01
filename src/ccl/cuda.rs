//! Label propagation on an NVIDIA GPU (`kernels/ccl.cu`, compiled once per process by
//! the shared runtime): tile-local labelling in shared memory, links by pointer jumping,
//! then double-buffered min-gather sweeps with master lookups until no label changes.

use super::{CclError, Labeller, check_input};
use crate::gpu::{
    Compiled, DeviceMask, Gpu, GpuError, KernelFamily, KernelSource, Program, driver,
};
use crate::grid::Connectivity;
use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;

/// The labeller's kernel source and its entry points.
pub const SOURCE: KernelSource = KernelSource {
    name: "ccl.cu",
    text: include_str!("../../kernels/ccl.cu"),
    entries: &[
        "ccl_local",
        "ccl_links_init",
        "ccl_links_jump",
        "ccl_propagate",
    ],
};

/// Tile of `ccl_local` (must match `TILE_W`/`TILE_H` in the kernel source).
const TILE: (u32, u32) = (32, 8);

/// The labeller's kernels.
struct CclKernels {
    local: CudaFunction,
    links_init: CudaFunction,
    links_jump: CudaFunction,
    propagate: CudaFunction,
}

impl KernelFamily for CclKernels {
    /// One module.
    type Variant = ();

    fn program((): ()) -> Program {
        Program {
            name: SOURCE.name,
            text: SOURCE.text.to_string(),
            options: Vec::new(),
        }
    }

    fn load(_gpu: &Gpu, module: &Arc<CudaModule>, (): ()) -> Result<Self, GpuError> {
        let function = |name: &str| SOURCE.function(module, name);
        Ok(Self {
            local: function("ccl_local")?,
            links_init: function("ccl_links_init")?,
            links_jump: function("ccl_links_jump")?,
            propagate: function("ccl_propagate")?,
        })
    }
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

/// Where the values to label are.
enum Values<'a> {
    /// On the host: uploaded first.
    Host(&'a [u8]),
    /// Already on the device, written by work on another stream.
    Device(&'a DeviceMask<'a>),
}

/// The GPU labeller: the shared runtime's kernels, a stream of its own, and device
/// buffers kept for the next call of the same size.
pub struct CudaLabeller {
    gpu: Arc<Gpu>,
    kernels: Arc<Compiled<CclKernels>>,
    stream: Arc<CudaStream>,
    buffers: Option<Buffers>,
    last_sweeps: u32,
}

impl CudaLabeller {
    /// Opens the shared runtime and loads the kernels, or says why it cannot (no driver
    /// library, no NVRTC, no device, compilation failure). Never panics.
    pub fn new() -> Result<Self, CclError> {
        let gpu = Gpu::get()?;
        let kernels = gpu.kernels::<CclKernels>(())?;
        let stream = gpu.new_stream()?;
        Ok(Self {
            gpu,
            kernels,
            stream,
            buffers: None,
            last_sweeps: 0,
        })
    }

    /// The GPU's name.
    pub fn device_name(&self) -> &str {
        self.gpu.name()
    }

    /// Milliseconds NVRTC took to compile the kernels (once per process).
    pub fn compile_ms(&self) -> f64 {
        self.kernels.compile_ms
    }

    /// Propagation sweeps of the last labelling (the last one changed nothing).
    pub fn last_sweeps(&self) -> u32 {
        self.last_sweeps
    }

    fn buffers(&mut self, pixels: usize, dirs: usize) -> Result<&mut Buffers, GpuError> {
        let buffers = match self.buffers.take() {
            Some(b) if b.pixels == pixels && b.dirs == dirs => b,
            old => {
                drop(old); // free the old arrays before allocating new ones
                let s = &self.stream;
                let alloc = |len: usize| s.alloc_zeros::<u32>(len).map_err(driver("alloc"));
                Buffers {
                    pixels,
                    dirs,
                    values: s.alloc_zeros::<u8>(pixels).map_err(driver("alloc"))?,
                    labels: [alloc(pixels)?, alloc(pixels)?],
                    links: [alloc(pixels * dirs)?, alloc(pixels * dirs)?],
                    changed: alloc(1)?,
                }
            }
        };
        Ok(self.buffers.insert(buffers))
    }

    /// Labels `values` into `labels`; returns the propagation sweeps. Returns once the
    /// stream is done, so no work of it reads `values` afterwards.
    fn run(
        &mut self,
        values: Values<'_>,
        width: u32,
        height: u32,
        dirs: usize,
        labels: &mut [u32],
    ) -> Result<u32, GpuError> {
        let stream = self.stream.clone();
        let k = self.kernels.clone();
        let b = self.buffers(labels.len(), dirs)?;
        let values = match values {
            Values::Host(host) => {
                stream
                    .memcpy_htod(host, &mut b.values)
                    .map_err(driver("upload of the values"))?;
                &b.values
            }
            Values::Device(mask) => {
                // the writer's work on its stream comes first
                stream
                    .join(mask.stream())
                    .map_err(driver("waiting for the mask's stream"))?;
                mask.data()
            }
        };
        let (w, h, d) = (width as i32, height as i32, dirs as i32);
        let cfg = LaunchConfig {
            grid_dim: (width.div_ceil(TILE.0), height.div_ceil(TILE.1), 1),
            block_dim: (TILE.0, TILE.1, 1),
            shared_mem_bytes: 0,
        };
        let [lab_a, lab_b] = &mut b.labels;
        let [link_a, link_b] = &mut b.links;
        // SAFETY (all launches): argument lists match the kernels' signatures in
        // kernels/ccl.cu, and every buffer holds `pixels` (× `dirs`) elements.
        unsafe {
            stream
                .launch_builder(&k.local)
                .arg(values)
                .arg(&mut *lab_a)
                .arg(&w)
                .arg(&h)
                .arg(&d)
                .launch(cfg)
                .map_err(driver("labelling kernel"))?;
            stream
                .launch_builder(&k.links_init)
                .arg(values)
                .arg(&mut *link_a)
                .arg(&w)
                .arg(&h)
                .arg(&d)
                .launch(cfg)
                .map_err(driver("labelling kernel"))?;
        }
        let jumps = u32::BITS - (width.max(height).max(2) - 1).leading_zeros();
        let (mut link_in, mut link_out) = (link_a, link_b);
        for _ in 0..jumps {
            // SAFETY: see above.
            unsafe {
                stream
                    .launch_builder(&k.links_jump)
                    .arg(&*link_in)
                    .arg(&mut *link_out)
                    .arg(&w)
                    .arg(&h)
                    .arg(&d)
                    .launch(cfg)
                    .map_err(driver("labelling kernel"))?;
            }
            std::mem::swap(&mut link_in, &mut link_out);
        }
        let (mut lab_in, mut lab_out) = (lab_a, lab_b);
        let mut sweeps = 0;
        let mut flag = [0u32];
        loop {
            sweeps += 1;
            stream
                .memset_zeros(&mut b.changed)
                .map_err(driver("clearing the change flag"))?;
            // SAFETY: see above.
            unsafe {
                stream
                    .launch_builder(&k.propagate)
                    .arg(values)
                    .arg(&*link_in)
                    .arg(&*lab_in)
                    .arg(&mut *lab_out)
                    .arg(&mut b.changed)
                    .arg(&w)
                    .arg(&h)
                    .arg(&d)
                    .launch(cfg)
                    .map_err(driver("labelling kernel"))?;
            }
            std::mem::swap(&mut lab_in, &mut lab_out);
            stream
                .memcpy_dtoh(&b.changed, &mut flag)
                .map_err(driver("reading the change flag"))?;
            stream.synchronize().map_err(driver("labelling"))?;
            if flag[0] == 0 {
                break;
            }
        }
        stream
            .memcpy_dtoh(&*lab_in, labels)
            .map_err(driver("reading the labels"))?;
        stream.synchronize().map_err(driver("labelling"))?;
        Ok(sweeps)
    }
}

impl Labeller for CudaLabeller {
    fn on_gpu(&self) -> bool {
        true
    }

    fn label(
        &mut self,
        values: &[u8],
        width: u32,
        height: u32,
        connectivity: Connectivity,
        labels: &mut Vec<u32>,
    ) -> Result<(), CclError> {
        self.label_with_device(values, None, width, height, connectivity, labels)
    }

    /// Reads `device` in place of `values` when it has their size (it must hold the
    /// same bytes, as [`DeviceMask`] does for its engine's last solution).
    fn label_with_device(
        &mut self,
        values: &[u8],
        device: Option<&DeviceMask<'_>>,
        width: u32,
        height: u32,
        connectivity: Connectivity,
        labels: &mut Vec<u32>,
    ) -> Result<(), CclError> {
        let n = check_input(values, width, height)?;
        labels.resize(n, 0);
        let dirs = connectivity.number() as usize;
        if (n * dirs) as u64 >= u32::MAX as u64 {
            return Err(CclError::TooLarge { width, height });
        }
        let source = match device {
            Some(mask) if (mask.width(), mask.height()) == (width, height) => Values::Device(mask),
            _ => Values::Host(values),
        };
        self.last_sweeps = self.run(source, width, height, dirs, labels)?;
        Ok(())
    }
}

//! Label propagation in wgpu compute shaders (`kernels/ccl.wgsl`), for any GPU (Vulkan,
//! Metal, DirectX 12): the CUDA labeller's algorithm, the same canonical labels.
//!
//! A wgpu read-back waits for the whole queue, so the sweeps are submitted in batches,
//! each with its change flags and a copy of its labels: a batch whose last sweeps
//! changed nothing is the answer, read in one wait.

use super::{CclError, Labeller, check_input};
use crate::compute::{ComputeDevice, ComputeError, map_read, pipeline, shader, write_bytes};
use crate::grid::Connectivity;
use wgpu::util::DeviceExt;

/// The shaders.
pub const SOURCE: &str = include_str!("../../kernels/ccl.wgsl");

/// Workgroup tile of every shader (`TILE_W`, `TILE_H` in the source).
const TILE: (u32, u32) = (32, 8);
/// Sweeps of the first batch when nothing is known yet, and of every later batch.
const MIN_BATCH: u32 = 2;

/// The shaders' pipelines.
struct Kernels {
    local: wgpu::ComputePipeline,
    links_init: wgpu::ComputePipeline,
    links_jump: wgpu::ComputePipeline,
    propagate: wgpu::ComputePipeline,
}

impl Kernels {
    fn new(device: &wgpu::Device) -> Self {
        let module = shader(device, "ccl.wgsl", SOURCE.to_string());
        let pipeline = |entry: &str| pipeline(device, &module, entry);
        Self {
            local: pipeline("ccl_local"),
            links_init: pipeline("ccl_links_init"),
            links_jump: pipeline("ccl_links_jump"),
            propagate: pipeline("ccl_propagate"),
        }
    }
}

/// The shaders' `Params`.
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    width: u32,
    height: u32,
    dirs: u32,
    pixels: u32,
}

/// Device buffers and bind groups of one grid size and connectivity.
struct Buffers {
    width: u32,
    height: u32,
    dirs: u32,
    values: wgpu::Buffer,
    labels: [wgpu::Buffer; 2],
    /// A batch's change flags, one word per sweep, and where they come back.
    flags: wgpu::Buffer,
    flags_read: wgpu::Buffer,
    /// Where the labels come back.
    labels_read: wgpu::Buffer,
    local: wgpu::BindGroup,
    links_init: wgpu::BindGroup,
    /// Link jumps from buffer 0 to 1 and from 1 to 0.
    jumps: [wgpu::BindGroup; 2],
    /// Sweeps from label buffer 0 to 1 and from 1 to 0, reading the final links.
    sweeps: [wgpu::BindGroup; 2],
    /// Pointer-jumping steps (the final links are in buffer `jumps % 2`).
    jump_steps: u32,
    changed: wgpu::Buffer,
    _links: [wgpu::Buffer; 2],
    _params: wgpu::Buffer,
}

/// Most sweeps one batch holds (the flags buffer's words).
const MAX_BATCH: u32 = 64;

impl Buffers {
    fn new(device: &wgpu::Device, kernels: &Kernels, width: u32, height: u32, dirs: u32) -> Self {
        let pixels = width * height;
        let storage = |label: &str, words: u64, usage: wgpu::BufferUsages| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 4 * words.max(1),
                usage: wgpu::BufferUsages::STORAGE | usage,
                mapped_at_creation: false,
            })
        };
        let copy = wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
        let n = u64::from(pixels);
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("ccl params"),
            contents: bytemuck::bytes_of(&Params {
                width,
                height,
                dirs,
                pixels,
            }),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let values = storage("ccl values", n.div_ceil(4), copy);
        let labels = [0, 1].map(|_| storage("ccl labels", n, copy));
        let links = [0, 1].map(|_| storage("ccl links", n * u64::from(dirs), copy));
        let changed = storage("ccl changed", 1, copy);
        let read = |label: &str, words: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 4 * words,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let flags = storage("ccl flags", u64::from(MAX_BATCH), copy);
        let group = |pipeline: &wgpu::ComputePipeline, entries: &[(u32, &wgpu::Buffer)]| {
            let entries: Vec<_> = entries
                .iter()
                .map(|&(binding, buffer)| wgpu::BindGroupEntry {
                    binding,
                    resource: buffer.as_entire_binding(),
                })
                .collect();
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: None,
                layout: &pipeline.get_bind_group_layout(0),
                entries: &entries,
            })
        };
        let jump_steps = u32::BITS - (width.max(height).max(2) - 1).leading_zeros();
        let last_links = &links[(jump_steps % 2) as usize];
        let sweep = |from: usize, to: usize| {
            group(
                &kernels.propagate,
                &[
                    (0, &params),
                    (1, &values),
                    (2, &labels[to]),
                    (3, last_links),
                    (5, &labels[from]),
                    (6, &changed),
                ],
            )
        };
        let jump = |from: usize, to: usize| {
            group(
                &kernels.links_jump,
                &[(0, &params), (3, &links[from]), (4, &links[to])],
            )
        };
        Self {
            width,
            height,
            dirs,
            local: group(
                &kernels.local,
                &[(0, &params), (1, &values), (2, &labels[0])],
            ),
            links_init: group(
                &kernels.links_init,
                &[(0, &params), (1, &values), (4, &links[0])],
            ),
            jumps: [jump(0, 1), jump(1, 0)],
            sweeps: [sweep(0, 1), sweep(1, 0)],
            jump_steps,
            flags_read: read("ccl flags read", u64::from(MAX_BATCH)),
            labels_read: read("ccl labels read", n),
            flags,
            values,
            labels,
            changed,
            _links: links,
            _params: params,
        }
    }

    fn groups(&self) -> (u32, u32) {
        (self.width.div_ceil(TILE.0), self.height.div_ceil(TILE.1))
    }
}

/// The wgpu labeller: pipelines made once, buffers kept for the next call of the same
/// size.
pub struct WgpuLabeller {
    gpu: ComputeDevice,
    kernels: Kernels,
    buffers: Option<Buffers>,
    /// Sweeps the last labelling took: the next one's first batch.
    last_sweeps: u32,
}

impl WgpuLabeller {
    /// Compiles the shaders on `gpu`, or says why it cannot.
    pub fn new(gpu: ComputeDevice) -> Result<Self, ComputeError> {
        let (kernels, error) = gpu.checked(|| Kernels::new(&gpu.device));
        if let Some(e) = error {
            return Err(e);
        }
        Ok(Self {
            gpu,
            kernels,
            buffers: None,
            last_sweeps: 0,
        })
    }

    /// The device it labels on.
    pub fn device(&self) -> &ComputeDevice {
        &self.gpu
    }

    /// Propagation sweeps of the last labelling (the last one changed nothing).
    pub fn last_sweeps(&self) -> u32 {
        self.last_sweeps
    }

    /// Whether the device can hold the links of a grid of `pixels` × `dirs`.
    fn fits(&self, pixels: u64, dirs: u64) -> bool {
        let limits = self.gpu.device.limits();
        let bytes = 4 * pixels * dirs;
        bytes <= limits.max_storage_buffer_binding_size && bytes <= limits.max_buffer_size
    }

    /// Makes the buffers for this size unless it has them.
    fn ensure_buffers(&mut self, width: u32, height: u32, dirs: u32) {
        if let Some(b) = &self.buffers
            && (b.width, b.height, b.dirs) == (width, height, dirs)
        {
            return;
        }
        self.buffers = None; // free the old buffers before making new ones
        let buffers = Buffers::new(&self.gpu.device, &self.kernels, width, height, dirs);
        self.buffers = Some(buffers);
    }

    /// Labels `values` into `labels` (buffers made); gives the propagation sweeps.
    fn run(&self, values: &[u8], labels: &mut [u32]) -> Result<u32, ComputeError> {
        let (gpu, kernels) = (&self.gpu, &self.kernels);
        let b = self.buffers.as_ref().expect("buffers made");
        let mut batch = self.last_sweeps.clamp(MIN_BATCH, MAX_BATCH);
        write_bytes(&gpu.queue, &b.values, values);
        let mut encoder = encoder(gpu);
        start(&mut encoder, kernels, b);
        let (mut current, mut sweeps) = (0usize, 0u32);
        loop {
            for s in 0..batch {
                sweep(&mut encoder, kernels, b, current, s);
                current ^= 1;
            }
            encoder.copy_buffer_to_buffer(&b.flags, 0, &b.flags_read, 0, 4 * u64::from(batch));
            encoder.copy_buffer_to_buffer(&b.labels[current], 0, &b.labels_read, 0, None);
            gpu.queue.submit([encoder.finish()]);
            let flags = map_read(gpu, &b.flags_read, |f| f[..batch as usize].to_vec())?;
            if let Some(still) = flags.iter().position(|&f| f == 0) {
                sweeps += still as u32 + 1;
                break;
            }
            sweeps += batch;
            batch = MIN_BATCH;
            encoder = self::encoder(gpu);
        }
        map_read(gpu, &b.labels_read, |words| {
            labels.copy_from_slice(&words[..labels.len()])
        })?;
        Ok(sweeps)
    }
}

fn encoder(gpu: &ComputeDevice) -> wgpu::CommandEncoder {
    gpu.device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("ccl") })
}

/// Records the tile labelling and the links' pointer jumping.
fn start(encoder: &mut wgpu::CommandEncoder, kernels: &Kernels, b: &Buffers) {
    let groups = b.groups();
    let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
    pass.set_pipeline(&kernels.local);
    pass.set_bind_group(0, &b.local, &[]);
    pass.dispatch_workgroups(groups.0, groups.1, 1);
    pass.set_pipeline(&kernels.links_init);
    pass.set_bind_group(0, &b.links_init, &[]);
    pass.dispatch_workgroups(groups.0, groups.1, 1);
    pass.set_pipeline(&kernels.links_jump);
    for step in 0..b.jump_steps {
        pass.set_bind_group(0, &b.jumps[(step % 2) as usize], &[]);
        pass.dispatch_workgroups(groups.0, groups.1, 1);
    }
}

/// Records sweep `s` of a batch from label buffer `from`, its change flag copied to
/// word `s` of the flags.
fn sweep(encoder: &mut wgpu::CommandEncoder, kernels: &Kernels, b: &Buffers, from: usize, s: u32) {
    encoder.clear_buffer(&b.changed, 0, None);
    {
        let groups = b.groups();
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
        pass.set_pipeline(&kernels.propagate);
        pass.set_bind_group(0, &b.sweeps[from], &[]);
        pass.dispatch_workgroups(groups.0, groups.1, 1);
    }
    encoder.copy_buffer_to_buffer(&b.changed, 0, &b.flags, 4 * u64::from(s), 4);
}

impl Labeller for WgpuLabeller {
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
        let n = check_input(values, width, height)?;
        let dirs = connectivity.number();
        if !self.fits(n as u64, u64::from(dirs)) {
            return Err(CclError::TooLarge { width, height });
        }
        labels.resize(n, 0);
        let gpu = self.gpu.clone();
        let (sweeps, error) = gpu.checked(|| {
            self.ensure_buffers(width, height, dirs);
            self.run(values, labels)
        });
        if let Some(e) = error {
            // a failed device leaves no buffers worth keeping
            self.buffers = None;
            return Err(e.into());
        }
        self.last_sweeps = sweeps?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::shader_checks::{struct_layout, validated};

    #[test]
    fn the_shaders_are_valid_wgsl() {
        validated(SOURCE);
    }

    #[test]
    fn params_match_the_shaders_struct() {
        // one word a member, and the same size
        let words = std::mem::size_of::<Params>() / 4;
        assert_eq!(
            struct_layout(&validated(SOURCE), "Params"),
            (4 * words, words)
        );
    }
}

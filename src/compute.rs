//! The wgpu runtime for compute shaders (Vulkan, Metal, DirectX 12): any GPU, not only
//! an NVIDIA one with a CUDA driver (that is [`crate::gpu`]). Headless work opens its
//! own device ([`ComputeDevice::open`]); the window can lend eframe's
//! ([`ComputeDevice::shared`]), so that the frame and the picture share one device.

use crate::gpu::GpuError;
use std::fmt;

/// Why compute shaders cannot run: no adapter, a device refused, a shader that does
/// not compile there.
#[derive(Clone, Debug, thiserror::Error)]
#[error("GPU compute (wgpu): {0}")]
pub struct ComputeError(pub String);

impl From<ComputeError> for GpuError {
    fn from(e: ComputeError) -> Self {
        GpuError::Compute(e.0)
    }
}

/// Which adapters [`ComputeDevice::open`] may take.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AdapterChoice {
    /// A real GPU (discrete, integrated or virtual), never a software rasteriser: what
    /// `--gpu auto` wants, since a CPU emulating a GPU is slower than the CPU path.
    RealGpu,
    /// Any adapter, software ones included (lavapipe in CI).
    Any,
}

/// The adapter a device runs on, for the window, the CLI and the JSON.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdapterSummary {
    /// The adapter's name.
    pub name: String,
    /// The graphics API underneath ("vulkan", "metal", "dx12").
    pub backend: String,
}

impl fmt::Display for AdapterSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name, self.backend)
    }
}

impl AdapterSummary {
    fn of(info: &wgpu::AdapterInfo) -> Self {
        Self {
            name: info.name.clone(),
            backend: info.backend.to_str().to_string(),
        }
    }
}

/// A wgpu device and queue with the adapter they run on.
#[derive(Clone)]
pub struct ComputeDevice {
    /// The device.
    pub device: wgpu::Device,
    /// Its queue.
    pub queue: wgpu::Queue,
    /// The adapter.
    pub adapter: AdapterSummary,
}

impl fmt::Debug for ComputeDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ComputeDevice({})", self.adapter)
    }
}

impl ComputeDevice {
    /// Opens a device of its own on the best adapter `choice` allows (a discrete GPU
    /// first), with the adapter's largest buffers; says why where none is found.
    pub fn open(choice: AdapterChoice) -> Result<Self, ComputeError> {
        // Vulkan, Metal, DirectX 12: the APIs with compute shaders everywhere (GL's are
        // not, and probing it only prints noise on headless machines)
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::PRIMARY,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapters = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::PRIMARY));
        let adapter = adapters
            .into_iter()
            .filter(|a| {
                choice == AdapterChoice::Any || a.get_info().device_type != wgpu::DeviceType::Cpu
            })
            .filter(|a| {
                a.get_downlevel_capabilities()
                    .flags
                    .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
            })
            .min_by_key(|a| preference(a.get_info().device_type))
            .ok_or_else(|| {
                ComputeError(match choice {
                    AdapterChoice::RealGpu => "no GPU adapter with compute shaders".to_string(),
                    AdapterChoice::Any => "no adapter with compute shaders".to_string(),
                })
            })?;
        let supported = adapter.limits();
        let limits = wgpu::Limits {
            max_storage_buffer_binding_size: supported.max_storage_buffer_binding_size,
            max_buffer_size: supported.max_buffer_size,
            ..wgpu::Limits::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("livecut compute"),
            required_limits: limits,
            ..Default::default()
        }))
        .map_err(|e| ComputeError(format!("opening {}: {e}", adapter.get_info().name)))?;
        Ok(Self {
            device,
            queue,
            adapter: AdapterSummary::of(&adapter.get_info()),
        })
    }

    /// Runs `work` on this device and gives its result with the first error the device
    /// raised meanwhile (invalid use, out of memory, an internal error such as a lost
    /// device), which would otherwise reach the device's handler: a panic by default.
    pub fn checked<R>(&self, work: impl FnOnce() -> R) -> (R, Option<ComputeError>) {
        let scopes = [
            wgpu::ErrorFilter::Internal,
            wgpu::ErrorFilter::OutOfMemory,
            wgpu::ErrorFilter::Validation,
        ]
        .map(|filter| self.device.push_error_scope(filter));
        let result = work();
        // popped innermost first
        let error = scopes
            .into_iter()
            .rev()
            .filter_map(|scope| pollster::block_on(scope.pop()))
            .map(|e| ComputeError(e.to_string()))
            .last();
        (result, error)
    }

    /// A device opened by someone else (eframe's, for the window).
    pub fn shared(device: wgpu::Device, queue: wgpu::Queue, info: &wgpu::AdapterInfo) -> Self {
        Self {
            device,
            queue,
            adapter: AdapterSummary::of(info),
        }
    }
}

/// A frame's RGB bytes (packed, padded to whole words) left on a wgpu device by the
/// energy that uploaded them, so that a compositor on the same device (the window's)
/// copies them there instead of uploading the frame again.
#[derive(Debug)]
pub struct FrameOnDevice {
    /// The bytes.
    pub buffer: wgpu::Buffer,
    /// The device that holds them.
    pub device: wgpu::Device,
    /// Frame width.
    pub width: u32,
    /// Frame height.
    pub height: u32,
}

impl FrameOnDevice {
    /// A buffer for a `width`×`height` frame's bytes on `device`, to copy into and
    /// out of.
    pub fn new(device: &wgpu::Device, width: u32, height: u32) -> Self {
        let bytes = 3 * width as u64 * height as u64;
        let buffer = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("frame on the device"),
            size: bytes.next_multiple_of(4).max(4),
            usage: wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        Self {
            buffer,
            device: device.clone(),
            width,
            height,
        }
    }

    /// Whether it holds a `width`×`height` frame on `device`.
    pub fn fits(&self, device: &wgpu::Device, width: u32, height: u32) -> bool {
        &self.device == device && (self.width, self.height) == (width, height)
    }
}

/// Writes bytes to the start of a buffer, the last partial word padded with zeros:
/// copied into the queue's staging memory on every core (a frame is megabytes, too
/// many for one thread to copy while the device waits).
pub(crate) fn write_bytes(queue: &wgpu::Queue, buffer: &wgpu::Buffer, bytes: &[u8]) {
    let padded = bytes.len().next_multiple_of(4);
    let Some(size) = wgpu::BufferSize::new(padded as u64) else {
        return;
    };
    let Some(mut view) = queue.write_buffer_with(buffer, 0, size) else {
        // refused (the error scope of the caller has it): nothing to write into
        return;
    };
    let mut whole = view.slice(..);
    let start = whole.as_raw_ptr().cast::<u8>();
    whole.slice(bytes.len()..).fill(0);
    let parts: Vec<(usize, &[u8])> = bytes
        .chunks(COPY_CHUNK)
        .enumerate()
        .map(|(i, part)| (i * COPY_CHUNK, part))
        .collect();
    let to = Staging(start);
    crate::bands::as_copy(|| {
        crate::bands::for_each_part(parts, |(at, part)| {
            // SAFETY: the staging memory holds `padded` ≥ `bytes.len()` bytes and
            // lives with `view`, past this call; the parts are disjoint ranges of it.
            unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), to.at(at), part.len()) }
        })
    });
}

/// The start of a queue's staging memory, which the bands of [`write_bytes`] copy
/// into at disjoint offsets (wgpu's write-only slices do not cross threads).
#[derive(Clone, Copy)]
struct Staging(std::ptr::NonNull<u8>);

// SAFETY: each band writes its own range of the staging memory, which outlives them.
unsafe impl Send for Staging {}
// SAFETY: as above.
unsafe impl Sync for Staging {}

impl Staging {
    /// The pointer `offset` bytes in.
    ///
    /// # Safety
    /// `offset` lies within the staging memory.
    unsafe fn at(self, offset: usize) -> *mut u8 {
        // SAFETY: the caller's promise
        unsafe { self.0.as_ptr().add(offset) }
    }
}

/// Bytes per part of a banded copy into staging memory (a few cache-line pages).
const COPY_CHUNK: usize = 256 * 1024;

/// Waits for the device and reads a mapped buffer through `read`.
pub(crate) fn map_read<R>(
    gpu: &ComputeDevice,
    buffer: &wgpu::Buffer,
    read: impl FnOnce(&[u32]) -> R,
) -> Result<R, ComputeError> {
    let (tx, rx) = std::sync::mpsc::channel();
    buffer.map_async(wgpu::MapMode::Read, .., move |r| {
        let _ = tx.send(r);
    });
    gpu.device
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| ComputeError(format!("waiting for the GPU: {e}")))?;
    rx.recv()
        .map_err(|_| ComputeError("the GPU dropped a read".into()))?
        .map_err(|e| ComputeError(format!("reading back: {e}")))?;
    let out = {
        let view = buffer
            .get_mapped_range(..)
            .map_err(|e| ComputeError(format!("reading back: {e}")))?;
        read(bytemuck::cast_slice(&view))
    };
    buffer.unmap();
    Ok(out)
}

/// The first `len` words of a storage buffer, through a staging buffer.
pub(crate) fn read_words(
    gpu: &ComputeDevice,
    buffer: &wgpu::Buffer,
    len: usize,
) -> Result<Vec<u32>, ComputeError> {
    let size = 4 * len.max(1) as u64;
    let staging = gpu.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("read back"),
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = gpu
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("read back"),
        });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, size);
    gpu.queue.submit([encoder.finish()]);
    map_read(gpu, &staging, |w| w[..len].to_vec())
}

/// A WGSL module on `device`.
pub(crate) fn shader(device: &wgpu::Device, label: &str, source: String) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}

/// The compute pipeline of `entry` in `module`, with its automatic layout: its bind
/// group holds only the bindings that entry point uses (WebGPU's default limit is 8
/// storage buffers a stage; a shader file may hold more).
pub(crate) fn pipeline(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    entry: &str,
) -> wgpu::ComputePipeline {
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: None,
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// A compute pass for a run of kernels ([`Kernel::record`]).
pub(crate) fn pass(encoder: &mut wgpu::CommandEncoder) -> wgpu::ComputePass<'_> {
    encoder.begin_compute_pass(&wgpu::ComputePassDescriptor::default())
}

/// A compute pipeline with the bindings its entry point reads, and its bind groups made
/// on first use (one per variant: which buffers fill the bindings), kept until the
/// buffers are made anew ([`Kernel::forget`]).
pub(crate) struct Kernel {
    pipeline: wgpu::ComputePipeline,
    bindings: &'static [u32],
    groups: std::cell::RefCell<Vec<(usize, wgpu::BindGroup)>>,
}

impl Kernel {
    /// The pipeline of `entry` in `module`, which reads `bindings`.
    pub(crate) fn new(
        device: &wgpu::Device,
        module: &wgpu::ShaderModule,
        entry: &str,
        bindings: &'static [u32],
    ) -> Self {
        Self {
            pipeline: pipeline(device, module, entry),
            bindings,
            groups: Default::default(),
        }
    }

    /// Records the kernel over `workgroups` workgroups into `pass` with the bind group
    /// of `variant`, made the first time from `buffer` (the buffer at each binding).
    /// A run of kernels shares one pass: wgpu orders a pass's dispatches that touch
    /// the same storage as it orders passes, and a pass costs the host more to record.
    pub(crate) fn record<'a>(
        &self,
        device: &wgpu::Device,
        pass: &mut wgpu::ComputePass<'_>,
        (variant, buffer): (usize, impl Fn(u32) -> &'a wgpu::Buffer),
        workgroups: u32,
    ) {
        let mut groups = self.groups.borrow_mut();
        let at = match groups.iter().position(|(v, _)| *v == variant) {
            Some(at) => at,
            None => {
                let entries: Vec<wgpu::BindGroupEntry<'_>> = self
                    .bindings
                    .iter()
                    .map(|&binding| wgpu::BindGroupEntry {
                        binding,
                        resource: buffer(binding).as_entire_binding(),
                    })
                    .collect();
                let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: None,
                    layout: &self.pipeline.get_bind_group_layout(0),
                    entries: &entries,
                });
                groups.push((variant, group));
                groups.len() - 1
            }
        };
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &groups[at].1, &[]);
        pass.dispatch_workgroups(workgroups, 1, 1);
    }

    /// Forgets the bind groups: the buffers they name were made anew.
    pub(crate) fn forget(&self) {
        self.groups.borrow_mut().clear();
    }
}

/// Workgroups of `size` invocations for `n` items, within one dimension's dispatch
/// limit: shaders that take more items stride over the rest.
pub(crate) fn workgroups(n: usize, size: u32) -> u32 {
    (n as u32).div_ceil(size).clamp(1, 65_535)
}

/// Lower is better: discrete, then integrated, virtual, others, software.
fn preference(kind: wgpu::DeviceType) -> u8 {
    match kind {
        wgpu::DeviceType::DiscreteGpu => 0,
        wgpu::DeviceType::IntegratedGpu => 1,
        wgpu::DeviceType::VirtualGpu => 2,
        wgpu::DeviceType::Other => 3,
        wgpu::DeviceType::Cpu => 4,
    }
}

/// Checks of WGSL sources for unit tests, with no GPU: naga parses and validates them.
#[cfg(test)]
pub(crate) mod shader_checks {
    /// `source` parsed and validated (panics with naga's message where it is not valid).
    pub(crate) fn validated(source: &str) -> naga::Module {
        let module = naga::front::wgsl::parse_str(source).expect("the WGSL parses");
        naga::valid::Validator::new(
            naga::valid::ValidationFlags::all(),
            naga::valid::Capabilities::empty(),
        )
        .validate(&module)
        .expect("the WGSL validates");
        module
    }

    /// The size in bytes and the member count of the struct `name` in `module`.
    pub(crate) fn struct_layout(module: &naga::Module, name: &str) -> (usize, usize) {
        module
            .types
            .iter()
            .find_map(|(_, ty)| match (&ty.name, &ty.inner) {
                (Some(n), naga::TypeInner::Struct { members, span }) if n == name => {
                    Some((*span as usize, members.len()))
                }
                _ => None,
            })
            .unwrap_or_else(|| panic!("no struct {name} in the shader"))
    }
}

#[cfg(test)]
mod tests {
    use super::{AdapterChoice, COPY_CHUNK, ComputeDevice, read_words, write_bytes};

    /// Bytes written in parts on every core land where one copy would put them, the
    /// last partial word padded with zeros (on any adapter; skipped where none opens
    /// unless `LIVECUT_REQUIRE_WGPU` is set).
    #[test]
    fn bytes_are_written_whole_and_padded() {
        let gpu = match ComputeDevice::open(AdapterChoice::Any) {
            Ok(gpu) => gpu,
            Err(e) if std::env::var_os("LIVECUT_REQUIRE_WGPU").is_some() => panic!("{e}"),
            Err(e) => return eprintln!("note: no wgpu adapter ({e}); skipped"),
        };
        for len in [1, 5, 4 * COPY_CHUNK, 2 * COPY_CHUNK + 7] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 251) as u8).collect();
            let words = len.div_ceil(4);
            let buffer = gpu.device.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: 4 * words as u64 + 8,
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_DST
                    | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            gpu.queue
                .write_buffer(&buffer, 0, &vec![0xff; 4 * words + 8]);
            write_bytes(&gpu.queue, &buffer, &bytes);
            let back = read_words(&gpu, &buffer, words + 2).unwrap();
            let back: &[u8] = bytemuck::cast_slice(&back);
            assert_eq!(&back[..len], &bytes[..], "{len} bytes");
            assert!(
                back[len..4 * words].iter().all(|&b| b == 0),
                "{len}: padding"
            );
            assert!(
                back[4 * words..].iter().all(|&b| b == 0xff),
                "{len}: past it"
            );
        }
    }
}

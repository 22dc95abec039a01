//! The process-wide device: the probe, the context of device 0, what the device is, and
//! the store of compiled kernel families.

use super::module::{Compiled, KernelFamily, compile};
use super::{GpuError, bandwidth, driver};
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{CudaContext, CudaStream};
use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::Instant;

/// One variant of a family, compiled on first use; a failure is kept too, so that a
/// program that does not compile is not compiled again on every call.
type Slot<F> = Arc<OnceLock<Result<Arc<Compiled<F>>, GpuError>>>;

/// A family's slots by variant (the store holds one such map per family type).
type FamilySlots<F> = HashMap<<F as KernelFamily>::Variant, Slot<F>>;

/// Device 0 and everything shared by its users.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    name: String,
    compute_capability: (i32, i32),
    sm_count: u32,
    cooperative: bool,
    /// Each family's [`FamilySlots`], by the family's type.
    modules: Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>,
    /// Measured on first use; `None` where the device could not spare the buffers.
    bandwidth: OnceLock<Option<f64>>,
}

static GPU: OnceLock<Result<Arc<Gpu>, GpuError>> = OnceLock::new();

impl Gpu {
    /// The process-wide runtime, started on first use. Never panics: a missing driver or
    /// NVRTC library, a driver without the expected API, or no device come back as
    /// [`GpuError::Unavailable`], and so does every later call.
    pub fn get() -> Result<Arc<Gpu>, GpuError> {
        GPU.get_or_init(start_guarded).clone()
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Compute capability (major, minor).
    pub fn compute_capability(&self) -> (i32, i32) {
        self.compute_capability
    }

    /// Streaming multiprocessors.
    pub fn sm_count(&self) -> u32 {
        self.sm_count
    }

    /// Whether the device runs cooperative launches (all blocks resident at once).
    pub fn cooperative(&self) -> bool {
        self.cooperative
    }

    /// The CUDA context, for events and the families' checks.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// A new stream for one user's work. The context tracks no events across streams:
    /// a user that reads another's buffer orders its stream after the writer's (see
    /// [`super::DeviceMask`]).
    pub fn new_stream(&self) -> Result<Arc<CudaStream>, GpuError> {
        self.ctx.new_stream().map_err(driver("creating a stream"))
    }

    /// The kernels of family `F` for `variant`, compiled and loaded the first time any
    /// user asks for them.
    pub fn kernels<F: KernelFamily>(
        &self,
        variant: F::Variant,
    ) -> Result<Arc<Compiled<F>>, GpuError> {
        let slot = {
            // a panic while the lock was held cannot leave the maps half-written
            let mut modules = self.modules.lock().unwrap_or_else(PoisonError::into_inner);
            let family = modules
                .entry(TypeId::of::<F>())
                .or_insert_with(|| Box::new(FamilySlots::<F>::new()))
                .downcast_mut::<FamilySlots<F>>()
                .expect("each family's slots are stored under the family's own type");
            family.entry(variant).or_default().clone()
        };
        // compiled outside the lock: other families and variants need not wait
        slot.get_or_init(|| self.build_guarded::<F>(variant))
            .clone()
    }

    /// [`Self::build`], with a panic of cudarc (an NVRTC or driver entry point missing)
    /// turned into an error as at start.
    fn build_guarded<F: KernelFamily>(
        &self,
        variant: F::Variant,
    ) -> Result<Arc<Compiled<F>>, GpuError> {
        std::panic::catch_unwind(AssertUnwindSafe(|| self.build::<F>(variant)))
            .unwrap_or_else(|_| {
                Err(GpuError::Unavailable(
                    "NVRTC or the CUDA driver does not provide the expected API".into(),
                ))
            })
            .map(Arc::new)
    }

    fn build<F: KernelFamily>(&self, variant: F::Variant) -> Result<Compiled<F>, GpuError> {
        let program = F::program(variant);
        let t0 = Instant::now();
        let ptx = compile(&program, self.compute_capability)?;
        let compile_ms = t0.elapsed().as_secs_f64() * 1e3;
        let t1 = Instant::now();
        let module = self
            .ctx
            .load_module(ptx)
            .map_err(driver(format!("loading the module of {}", program.name)))?;
        let load_ms = t1.elapsed().as_secs_f64() * 1e3;
        let kernels = F::load(self, &module, variant)?;
        Ok(Compiled::new(kernels, compile_ms, load_ms))
    }

    /// The device's memory bandwidth as a large device-to-device copy moves data, in
    /// bytes a second (reads and writes together): what a pass over device memory can at
    /// best reach. Measured on `stream` once per process, on first use; `None` where that
    /// failed (a statistic, so it never fails its caller).
    pub fn copy_bandwidth(&self, stream: &Arc<CudaStream>) -> Option<f64> {
        *self
            .bandwidth
            .get_or_init(|| bandwidth::measure(stream).ok())
    }
}

/// Starts the runtime after checking that the libraries can be loaded.
fn start_guarded() -> Result<Arc<Gpu>, GpuError> {
    // SAFETY: these only try to dlopen the libraries; nothing else is called yet.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err(GpuError::Unavailable(
            "the NVIDIA driver library (libcuda) was not found".into(),
        ));
    }
    // SAFETY: as above.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err(GpuError::Unavailable(
            "the NVRTC library (libnvrtc, CUDA 12 or 13) was not found".into(),
        ));
    }
    // cudarc panics when a driver entry point is missing (e.g. a driver older than the
    // API it was built for): turn that into an error instead of ending the program.
    match std::panic::catch_unwind(start) {
        Ok(result) => result.map(Arc::new),
        Err(_) => Err(GpuError::Unavailable(
            "the CUDA driver does not provide the expected API".into(),
        )),
    }
}

fn start() -> Result<Gpu, GpuError> {
    let count = CudaContext::device_count()
        .map_err(|e| GpuError::Unavailable(format!("the CUDA driver did not start ({e})")))?;
    if count < 1 {
        return Err(GpuError::Unavailable("no CUDA device found".into()));
    }
    let ctx = CudaContext::new(0)
        .map_err(|e| GpuError::Unavailable(format!("cannot open CUDA device 0 ({e})")))?;
    // Every user works on its own stream and buffers, and orders its stream after
    // another's where it reads that one's buffer: no implicit tracking.
    // SAFETY: no buffer is used on two streams without such an explicit order.
    unsafe { ctx.disable_event_tracking() };
    let name = ctx.name().map_err(driver("device name"))?;
    let compute_capability = ctx
        .compute_capability()
        .map_err(driver("compute capability"))?;
    let sm_count = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(driver("multiprocessor count"))? as u32;
    let cooperative = ctx
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH)
        .map_err(driver("cooperative launch attribute"))?
        != 0;
    Ok(Gpu {
        ctx,
        name,
        compute_capability,
        sm_count,
        cooperative,
        modules: Mutex::new(HashMap::new()),
        bandwidth: OnceLock::new(),
    })
}

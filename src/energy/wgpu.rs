//! A video frame's energy in wgpu compute shaders (`kernels/energy.wgsl`), for any GPU
//! (Vulkan, Metal, DirectX 12): the same plan as the CUDA energy ([`DeviceFrame`],
//! [`DataTerm`]) and the same integer arithmetic, so that the capacities are identical
//! to the CPU energy's. The capacities come back as a [`GridProblem`] for the CPU
//! engine, which continues from its kept graph where the frame allows.
//!
//! While it runs it holds the background model's per-pixel state, as the CUDA energy
//! does; [`WgpuEnergy::hand_back`] returns it to the model.

use super::background::{CostTable, kernel_defines, threshold_q};
use super::plan::{
    Capacities, DataTerm, DeviceFrame, EnergyDevice, GpuEnergy, Held, check_frame, packed_offsets,
    seed_code,
};
use super::{BackgroundModel, CAPACITY_SCALE, Smoothness};
use crate::bands;
use crate::compute::{
    ComputeDevice, ComputeError, FrameOnDevice, Kernel, map_read, pass, read_words, shader,
    workgroups, write_bytes,
};
use crate::gpu::{DeviceMask, GpuError};
use crate::grid::{ChangedTiles, Connectivity, GridProblem, Mask, PixelRect, ProblemChanges, TILE};
use bytemuck::{Pod, Zeroable};
use std::sync::Arc;
use wgpu::util::DeviceExt;

/// The shaders, before the model's constants are prepended.
pub const SOURCE: &str = include_str!("../../kernels/energy.wgsl");

/// Invocations per workgroup of every shader (`WG` in the source).
const WORKGROUP: u32 = 256;

/// Words of the `info` buffer: the gate's count, six 64-bit gain sums, the σ sum, the
/// tiles packed (`INFO_*` in the source).
const INFO_WORDS: usize = 16;
const INFO_MOVED: usize = 0;
const INFO_SUMS: usize = 1;
const INFO_SIGMA: usize = 13;
const INFO_TILES: usize = 15;

/// A tile without a packed slot (`NO_SLOT` in the source).
const NO_SLOT: u32 = u32::MAX;

/// Most buffers of frames left on the device kept for reuse (the window, the
/// recorder and the virtual camera may each hold one while the next is made).
const SHOWN_BUFFERS: usize = 4;

/// The shaders' uniform parameters (`Params` in the source).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
struct Params {
    n: u32,
    width: u32,
    height: u32,
    dirs: u32,
    offsets: u32,
    gate_threshold: u32,
    gate_on: u32,
    first: u32,
    has_prev: u32,
    z2_threshold: u32,
    has_seeds: u32,
    use_steady: u32,
    straight_off: u32,
    straight_len: u32,
    diagonal_off: u32,
    diagonal_len: u32,
    colour_off: u32,
    colour_bits: u32,
    has_colour: u32,
    bg_off: u32,
    bg_len: u32,
    has_bg: u32,
    ramp_off: u32,
    ramp_len: u32,
    full: i32,
    has_prior: u32,
    had_last: u32,
    absorb: u32,
    tile_cols: u32,
    tiles: u32,
    pack_tiles: u32,
    _pad: [u32; 5],
}

/// The shaders' source with the host's constants prepended: the background model's,
/// the workgroup size, the change tiles' side and the layout of `info`.
pub fn shader_source() -> String {
    let model = kernel_defines().into_iter().filter_map(|d| {
        let (name, value) = d.strip_prefix("-D")?.split_once('=')?;
        Some((name.to_string(), value.to_string()))
    });
    let host = [
        ("WG", WORKGROUP),
        ("TILE", TILE),
        ("INFO_MOVED", INFO_MOVED as u32),
        ("INFO_SUMS", INFO_SUMS as u32),
        ("INFO_SIGMA", INFO_SIGMA as u32),
        ("INFO_TILES", INFO_TILES as u32),
        ("NO_SLOT", NO_SLOT),
    ]
    .map(|(name, value)| (name.to_string(), format!("{value}u")));
    let constants: String = model
        .chain(host)
        .map(|(name, value)| format!("const {name}: u32 = {value};\n"))
        .collect();
    constants + SOURCE
}

/// The shaders' pipelines.
struct Kernels {
    gate: Kernel,
    sigma_sum: Kernel,
    gain_sums: Kernel,
    gain: Kernel,
    observe: Kernel,
    edges: Kernel,
    boundary: Kernel,
    relax: Kernel,
    terminals: Kernel,
    adapt: Kernel,
    compare: Kernel,
    slots: Kernel,
    pack: Kernel,
}

impl Kernels {
    fn new(device: &wgpu::Device) -> Self {
        let module = shader(device, "energy.wgsl", shader_source());
        let kernel =
            |entry: &str, bindings: &'static [u32]| Kernel::new(device, &module, entry, bindings);
        // the bindings each entry point uses (its automatic layout holds only those)
        Self {
            gate: kernel("en_gate", &[0, 1, 2, 3, 4]),
            sigma_sum: kernel("en_sigma_sum", &[0, 1, 3]),
            gain_sums: kernel("en_gain_sums", &[0, 1, 3, 6, 8, 10]),
            gain: kernel("en_gain", &[1, 21]),
            observe: kernel("en_observe", &[0, 3, 5, 8, 9, 10, 21]),
            edges: kernel("en_edges", &[0, 3, 5, 7, 13, 14]),
            boundary: kernel("en_boundary", &[0, 6, 16]),
            relax: kernel("en_relax", &[0, 15, 16]),
            terminals: kernel("en_terminals", &[0, 3, 6, 7, 10, 13, 14, 15]),
            adapt: kernel("en_adapt", &[0, 3, 6, 8, 10, 11, 12, 21]),
            compare: kernel("en_compare", &[0, 14, 17, 18]),
            slots: kernel("en_slots", &[0, 1, 18, 19]),
            pack: kernel("en_pack", &[0, 14, 19, 20]),
        }
    }

    /// Every pipeline, for forgetting their bind groups.
    fn all(&self) -> [&Kernel; 13] {
        [
            &self.gate,
            &self.sigma_sum,
            &self.gain_sums,
            &self.gain,
            &self.observe,
            &self.edges,
            &self.boundary,
            &self.relax,
            &self.terminals,
            &self.adapt,
            &self.compare,
            &self.slots,
            &self.pack,
        ]
    }
}

/// Device buffers of one frame size, kept between frames.
struct Buffers {
    width: u32,
    height: u32,
    connectivity: Connectivity,
    params: wgpu::Buffer,
    info: wgpu::Buffer,
    info_read: wgpu::Buffer,
    raw: wgpu::Buffer,
    rgb: wgpu::Buffer,
    held: wgpu::Buffer,
    steady: wgpu::Buffer,
    previous: wgpu::Buffer,
    seeds: wgpu::Buffer,
    mean: wgpu::Buffer,
    inv_var: wgpu::Buffer,
    z2: wgpu::Buffer,
    still: wgpu::Buffer,
    last: wgpu::Buffer,
    distance: [wgpu::Buffer; 2],
    caps: wgpu::Buffer,
    /// What the capacities were when last brought back, per tile whether they changed
    /// since, where changed tiles are packed, and the packed tiles.
    kept: wgpu::Buffer,
    tile_flags: wgpu::Buffer,
    slots: wgpu::Buffer,
    packed: wgpu::Buffer,
    /// Tiles of the frame, and how many the packed buffer holds.
    tiles: u32,
    pack_tiles: u32,
    /// Where the flags, slots, `info` and packed tiles come back.
    tiles_read: wgpu::Buffer,
    /// The background's gain as the device decided it, and where it comes back.
    gains: wgpu::Buffer,
    gains_read: wgpu::Buffer,
    /// Where capacities come back (whole, or the packed tiles).
    caps_read: wgpu::Buffer,
}

impl Buffers {
    fn new(device: &wgpu::Device, width: u32, height: u32, connectivity: Connectivity) -> Self {
        use wgpu::BufferUsages as U;
        let n = (width as u64 * height as u64).max(1);
        let storage = U::STORAGE | U::COPY_DST | U::COPY_SRC;
        let buffer = |label: &str, words: u64, usage: U| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 4 * words.max(1),
                usage,
                mapped_at_creation: false,
            })
        };
        let dirs = u64::from(connectivity.number());
        let tiles = u64::from(width.div_ceil(TILE) * height.div_ceil(TILE));
        // packed tiles come back only while they are at most half the frame
        let pack_tiles = (n / 2).div_ceil(u64::from(TILE * TILE)) + 1;
        let pack_words = (dirs + 2) * pack_tiles * u64::from(TILE * TILE);
        Self {
            width,
            height,
            connectivity,
            params: buffer("params", 36, U::UNIFORM | U::COPY_DST),
            info: buffer("info", INFO_WORDS as u64, storage),
            info_read: buffer("info read", INFO_WORDS as u64, U::MAP_READ | U::COPY_DST),
            raw: buffer("raw frame", (3 * n).div_ceil(4), storage),
            rgb: buffer("rgb", n, storage),
            held: buffer("held", n, storage),
            steady: buffer("steady", n, storage),
            previous: buffer("previous", n.div_ceil(4), storage),
            seeds: buffer("seeds", n.div_ceil(4), storage),
            mean: buffer("mean", 3 * n, storage),
            inv_var: buffer("inv_var", n, storage),
            z2: buffer("z2", n, storage),
            still: buffer("still", n, storage),
            last: buffer("last", n, storage),
            distance: [
                buffer("distance", n, storage),
                buffer("distance", n, storage),
            ],
            caps: buffer("capacities", (dirs + 2) * n, storage),
            kept: buffer("kept capacities", (dirs + 2) * n, storage),
            tile_flags: buffer("tile flags", 3 * tiles, storage),
            slots: buffer("tile slots", tiles, storage),
            packed: buffer("packed tiles", pack_words, storage),
            tiles: tiles as u32,
            pack_tiles: pack_tiles as u32,
            tiles_read: buffer(
                "changes read",
                4 * tiles + INFO_WORDS as u64 + pack_words,
                U::MAP_READ | U::COPY_DST,
            ),
            caps_read: buffer("capacities read", (dirs + 2) * n, U::MAP_READ | U::COPY_DST),
            gains: buffer("gains", 3, storage),
            gains_read: buffer("gains read", 3, U::MAP_READ | U::COPY_DST),
        }
    }

    fn pixels(&self) -> usize {
        self.width as usize * self.height as usize
    }

    /// The buffer at a binding of `energy.wgsl`, the distances read (`from`) and
    /// written (`1 - from`) as the pass wants.
    fn binding<'a>(
        &'a self,
        binding: u32,
        tables: &'a wgpu::Buffer,
        from: usize,
    ) -> &'a wgpu::Buffer {
        match binding {
            0 => &self.params,
            1 => &self.info,
            2 => &self.raw,
            3 => &self.rgb,
            4 => &self.held,
            5 => &self.steady,
            6 => &self.previous,
            7 => &self.seeds,
            8 => &self.mean,
            9 => &self.inv_var,
            10 => &self.z2,
            11 => &self.still,
            12 => &self.last,
            13 => tables,
            14 => &self.caps,
            15 => &self.distance[from],
            16 => &self.distance[1 - from],
            17 => &self.kept,
            18 => &self.tile_flags,
            19 => &self.slots,
            20 => &self.packed,
            21 => &self.gains,
            _ => unreachable!("energy.wgsl has no binding {binding}"),
        }
    }
}

/// Where each table lies in the tables buffer, and the parameters they were made for.
#[derive(Clone, Copy, Default, PartialEq)]
struct TableLayout {
    straight: (u32, u32),
    diagonal: (u32, u32),
    colour: (u32, u32),
    colour_bits: u32,
    background: (u32, u32),
    ramp: (u32, u32),
    full: i32,
}

/// The parameters of the uploaded tables: contrast (λ, σ, scale), background weight,
/// colour models' version, temporal (weight, ramp).
type TablesKey = ((u32, u32, u32), Option<u32>, Option<u64>, (u32, u32));

/// The wgpu energy: the device, the pipelines, and the buffers and tables kept for the
/// next frame.
pub struct WgpuEnergy {
    gpu: ComputeDevice,
    kernels: Kernels,
    buffers: Option<Buffers>,
    held: Held,
    tables: Option<(TablesKey, TableLayout, wgpu::Buffer)>,
    sigma: f32,
    /// The last frame's capacities (their arrays are reused).
    problem: Option<GridProblem>,
    /// Where the last frame's capacities can differ from the frame's before (any,
    /// arcs), `None` where they were brought back whole.
    changes: Option<(ChangedTiles, ChangedTiles)>,
    /// Packed tiles to bring back with the flags (the last frame's count and a few).
    expected_tiles: usize,
    /// The frame's bytes copied on the device for a compositor there, and buffers of
    /// earlier frames to copy the next ones into once nobody holds them.
    shown: Option<Arc<FrameOnDevice>>,
    shown_pool: Vec<Arc<FrameOnDevice>>,
    /// The lab's per-phase milliseconds of each frame (`LIVECUT_WGPU_PHASES`).
    #[cfg(feature = "experiments")]
    phases: lab::Phases,
}

/// The lab's timing of a frame's phases, printed to stderr per frame where
/// `LIVECUT_WGPU_PHASES` is set: where the energy's milliseconds go.
#[cfg(feature = "experiments")]
mod lab {
    use std::cell::{Cell, RefCell};
    use std::time::Instant;

    #[derive(Default)]
    pub(super) struct Phases {
        last: Cell<Option<Instant>>,
        parts: RefCell<Vec<(&'static str, f64)>>,
    }

    impl Phases {
        /// Starts a frame's timing.
        pub(super) fn start(&self) {
            self.parts.borrow_mut().clear();
            let on = std::env::var_os("LIVECUT_WGPU_PHASES").is_some();
            self.last.set(on.then(Instant::now));
        }

        /// Ends the phase `name` here.
        pub(super) fn lap(&self, name: &'static str) {
            if let Some(last) = self.last.get() {
                let now = Instant::now();
                let ms = (now - last).as_secs_f64() * 1e3;
                self.parts.borrow_mut().push((name, ms));
                self.last.set(Some(now));
            }
        }

        /// Prints the phases timed since `start`.
        pub(super) fn print(&self) {
            if self.last.get().is_some() {
                let parts = self.parts.borrow();
                let parts: Vec<String> =
                    parts.iter().map(|(n, ms)| format!("{n} {ms:.3}")).collect();
                eprintln!("wgpu energy phases (ms): {}", parts.join(", "));
            }
        }
    }
}

impl GpuEnergy for WgpuEnergy {
    fn name(&self) -> String {
        format!("wgpu on {}", self.gpu.adapter)
    }

    fn kind(&self) -> EnergyDevice {
        EnergyDevice::Wgpu
    }

    fn held(&mut self) -> &mut Held {
        &mut self.held
    }

    /// σ of the last frame's contrast term.
    fn last_sigma(&self) -> f32 {
        self.sigma
    }

    /// Builds `frame`'s capacities with `term` as its data term and brings them back.
    fn build(
        &mut self,
        frame: DeviceFrame<'_>,
        term: DataTerm<'_>,
    ) -> Result<Capacities<'_>, GpuError> {
        check_frame(&frame, &term)?;
        let gpu = self.gpu.clone();
        let (built, error) = gpu.checked(|| self.build_frame(frame, term));
        let built = match error {
            Some(e) => Err(GpuError::Compute(format!("energy: {}", e.0))),
            None => built,
        };
        if built.is_err() {
            // the host's capacities may no longer be the kept ones: next time, all
            self.problem = None;
        }
        built?;
        let changes = self.changes.as_ref().map(|(any, edges)| ProblemChanges {
            any,
            edges,
            arcs: None,
        });
        Ok(Capacities::Host(
            self.problem.as_ref().expect("built"),
            changes,
        ))
    }

    /// After the cut: `mask` (the frame's final mask) becomes the previous mask on the
    /// device, as version `version`, and the background adapts to the frame by it (the
    /// CPU engine's cut is on the host: there is no device cut to copy).
    fn finish(
        &mut self,
        mask: &Mask,
        version: u64,
        model: &BackgroundModel,
        _cut: Option<(DeviceMask<'_>, Option<(usize, usize)>)>,
    ) -> Result<(), GpuError> {
        let gpu = self.gpu.clone();
        #[cfg(feature = "experiments")]
        self.phases.lap("the cut");
        let (done, error) = gpu.checked(|| self.adapt(mask, version, model));
        self.lap("adapt");
        #[cfg(feature = "experiments")]
        self.phases.print();
        checked(done, error)
    }

    /// Copies the model's per-pixel state back from the device into `model`; the
    /// device then holds none.
    fn hand_back(&mut self, model: &mut BackgroundModel) -> Result<(), GpuError> {
        let gpu = self.gpu.clone();
        let (done, error) = gpu.checked(|| self.read_model(model));
        checked(done, error)
    }

    fn frame_on_device(&self) -> Option<Arc<FrameOnDevice>> {
        self.shown.clone()
    }

    /// The gate's held colours and their frame's size (for the CPU gate to go on from);
    /// the device gate then holds none. `None` where it holds none.
    fn hand_back_gate(&mut self) -> Result<Option<(Vec<u8>, u32, u32)>, GpuError> {
        let gpu = self.gpu.clone();
        let (held, error) = gpu.checked(|| self.read_gate());
        checked(held, error)
    }
}

impl WgpuEnergy {
    /// Compiles the shaders on `gpu`, or says why they do not compile.
    pub fn new(gpu: ComputeDevice) -> Result<Self, ComputeError> {
        let (kernels, error) = gpu.checked(|| Kernels::new(&gpu.device));
        if let Some(e) = error {
            return Err(ComputeError(format!("energy shaders: {}", e.0)));
        }
        Ok(Self {
            gpu,
            kernels,
            buffers: None,
            held: Held::default(),
            tables: None,
            sigma: 0.0,
            problem: None,
            changes: None,
            expected_tiles: 0,
            shown: None,
            shown_pool: Vec::new(),
            #[cfg(feature = "experiments")]
            phases: lab::Phases::default(),
        })
    }

    /// Ends the lab's phase `name` (nothing without the `experiments` feature).
    fn lap(&self, _name: &'static str) {
        #[cfg(feature = "experiments")]
        self.phases.lap(_name);
    }

    /// The frame's capacities into `problem` and `changes` (see `build`).
    fn build_frame(
        &mut self,
        frame: DeviceFrame<'_>,
        mut term: DataTerm<'_>,
    ) -> Result<(), GpuError> {
        #[cfg(feature = "experiments")]
        self.phases.start();
        let (w, h) = (frame.width, frame.height);
        let n = w as usize * h as usize;
        self.ensure_buffers(w, h, frame.smoothness.connectivity);
        if let DataTerm::Background { model, .. } = &mut term
            && !self.held.model
        {
            self.upload_model(model)?;
        }
        self.upload_frame(&frame);
        self.shown = Some(self.shown_buffer(w, h));
        self.lap("upload");
        let background = matches!(term, DataTerm::Background { .. });
        let mut params = self.base_params(&frame);
        let known = frame.smoothness.sigma.filter(|s| *s > 0.0);
        let (encoder, info) = self.first_pass(&params, known.is_none(), background)?;
        self.lap("first pass");
        let sigma = match (known, info) {
            (Some(sigma), _) => sigma,
            (None, info) => {
                let info = info.expect("the first pass waits for σ's sum");
                let sum = word64(&info, INFO_SIGMA);
                let estimate = super::smoothness::sigma_of_sum(
                    sum,
                    w as usize,
                    h as usize,
                    frame.smoothness.connectivity,
                );
                let moved = (frame.noise_gate != 0).then_some(u64::from(info[0]));
                super::hold_sigma(frame.held_sigma, estimate, super::is_still(moved, n as u64))
            }
        };
        self.sigma = sigma;
        let layout = self.ensure_tables(&frame, &mut term, sigma);
        self.lap("tables");
        let prior = frame.previous.is_some() && frame.temporal.weight > 0.0;
        fill_table_params(&mut params, &layout, background, prior);
        let connectivity = frame.smoothness.connectivity;
        let gains = self.second_pass(encoder, &params, background, prior, connectivity)?;
        if let (DataTerm::Background { model, .. }, Some(gains)) = (term, gains) {
            model.set_gain(gains);
        }
        self.lap("gains");
        Ok(())
    }

    /// The background's adaptation to the frame by its final mask (see `finish`).
    fn adapt(
        &mut self,
        mask: &Mask,
        version: u64,
        model: &BackgroundModel,
    ) -> Result<(), GpuError> {
        let Some(b) = self.buffers.as_ref() else {
            return Ok(());
        };
        if mask.data.len() != b.pixels() || !self.held.model {
            return Ok(());
        }
        write_bytes(&self.gpu.queue, &b.previous, &mask.data);
        self.held.previous = Some(version);
        let params = Params {
            n: b.pixels() as u32,
            width: b.width,
            height: b.height,
            z2_threshold: u32::from(threshold_q()),
            had_last: u32::from(self.held.had_last),
            absorb: u32::from(model.absorb_frames),
            ..Default::default()
        };
        self.gpu
            .queue
            .write_buffer(&b.params, 0, bytemuck::bytes_of(&params));
        let mut encoder = self.encoder();
        let groups = dispatch_size(b.pixels());
        self.record(&mut pass(&mut encoder), &self.kernels.adapt, 0, groups);
        self.gpu.queue.submit([encoder.finish()]);
        self.held.had_last = true;
        Ok(())
    }

    /// The model's per-pixel state into `model` (see `hand_back`).
    fn read_model(&mut self, model: &mut BackgroundModel) -> Result<(), GpuError> {
        if !std::mem::take(&mut self.held.model) {
            return Ok(());
        }
        let had_last = self.held.had_last;
        let (Some(b), Some(state)) = (self.buffers.as_ref(), model.state()) else {
            return Ok(());
        };
        let n = b.pixels();
        *state.mean = read_words(&self.gpu, &b.mean, 3 * n)?;
        *state.z2 = read_words(&self.gpu, &b.z2, n)?
            .iter()
            .map(|&q| q as u16)
            .collect();
        *state.still = read_words(&self.gpu, &b.still, n)?
            .iter()
            .map(|&c| c as u16)
            .collect();
        state.last_rgb.clear();
        if had_last {
            *state.last_rgb = unpack_colours(&read_words(&self.gpu, &b.last, n)?);
        }
        Ok(())
    }

    /// The gate's held colours (see `hand_back_gate`).
    fn read_gate(&mut self) -> Result<Option<(Vec<u8>, u32, u32)>, GpuError> {
        if !std::mem::take(&mut self.held.gate) {
            return Ok(None);
        }
        let Some(b) = &self.buffers else {
            return Ok(None);
        };
        let held = unpack_colours(&read_words(&self.gpu, &b.held, b.pixels())?);
        Ok(Some((held, b.width, b.height)))
    }

    fn ensure_buffers(&mut self, width: u32, height: u32, connectivity: Connectivity) {
        if self
            .buffers
            .as_ref()
            .is_some_and(|b| (b.width, b.height, b.connectivity) == (width, height, connectivity))
        {
            return;
        }
        self.buffers = None;
        self.problem = None;
        self.changes = None;
        self.held = Held::default();
        self.kernels.all().iter().for_each(|k| k.forget());
        self.buffers = Some(Buffers::new(&self.gpu.device, width, height, connectivity));
    }

    fn upload_model(&mut self, model: &mut BackgroundModel) -> Result<(), GpuError> {
        let b = self.buffers.as_ref().expect("buffers before the model");
        let gain = model.gain();
        self.gpu
            .queue
            .write_buffer(&b.gains, 0, bytemuck::cast_slice(&gain));
        let state = model.state().expect("a learned model");
        let inv_var: Vec<u32> = state
            .inv_var
            .iter()
            .map(|&v| u32::try_from(v))
            .collect::<Result<_, _>>()
            .map_err(|_| {
                GpuError::Mismatch("a background variance below the noise floor".into())
            })?;
        let q = &self.gpu.queue;
        q.write_buffer(&b.mean, 0, bytemuck::cast_slice(state.mean));
        q.write_buffer(&b.inv_var, 0, bytemuck::cast_slice(&inv_var));
        let widen = |v: &[u16]| v.iter().map(|&x| u32::from(x)).collect::<Vec<u32>>();
        q.write_buffer(&b.z2, 0, bytemuck::cast_slice(&widen(state.z2)));
        q.write_buffer(&b.still, 0, bytemuck::cast_slice(&widen(state.still)));
        self.held.had_last = state.last_rgb.len() == 3 * b.pixels();
        if self.held.had_last {
            q.write_buffer(
                &b.last,
                0,
                bytemuck::cast_slice(&pack_colours(state.last_rgb)),
            );
        }
        self.held.model = true;
        Ok(())
    }

    /// A buffer for this frame's bytes on the device: one of earlier frames that
    /// nobody holds any longer, else a new one (kept for later frames, a few at most).
    fn shown_buffer(&mut self, width: u32, height: u32) -> Arc<FrameOnDevice> {
        let device = &self.gpu.device;
        self.shown_pool.retain(|f| f.fits(device, width, height));
        let free = self
            .shown_pool
            .iter()
            .find(|f| Arc::strong_count(f) == 1)
            .cloned();
        free.unwrap_or_else(|| {
            let made = Arc::new(FrameOnDevice::new(device, width, height));
            if self.shown_pool.len() < SHOWN_BUFFERS {
                self.shown_pool.push(made.clone());
            }
            made
        })
    }

    /// Uploads the frame, and the previous mask, the seeds and the CPU gate's colours
    /// where they changed.
    fn upload_frame(&mut self, frame: &DeviceFrame<'_>) {
        let b = self.buffers.as_ref().expect("buffers");
        let q = &self.gpu.queue;
        write_bytes(q, &b.raw, frame.rgb);
        if let Some(mask) = frame.previous
            && self.held.previous != Some(frame.previous_version)
        {
            write_bytes(q, &b.previous, &mask.data);
            self.held.previous = Some(frame.previous_version);
        }
        if let Some(seeds) = frame.seeds
            && self.held.seeds != Some(frame.seeds_version)
        {
            let codes: Vec<u8> = seeds.labels.iter().map(|&l| seed_code(l)).collect();
            write_bytes(q, &b.seeds, &codes);
            self.held.seeds = Some(frame.seeds_version);
        }
        if frame.noise_gate == 0 {
            self.held.gate = false;
        } else if let Some(held) = frame
            .gate
            .filter(|h| !self.held.gate && h.len() == frame.rgb.len())
        {
            q.write_buffer(&b.held, 0, bytemuck::cast_slice(&pack_colours(held)));
            self.held.gate = true;
        }
    }

    /// The parameters every pass shares.
    fn base_params(&self, frame: &DeviceFrame<'_>) -> Params {
        let gate_on = frame.noise_gate != 0;
        Params {
            n: frame.width * frame.height,
            width: frame.width,
            height: frame.height,
            dirs: frame.smoothness.connectivity.number(),
            offsets: packed_offsets(),
            gate_threshold: u32::from(frame.noise_gate),
            gate_on: u32::from(gate_on),
            first: u32::from(gate_on && !self.held.gate),
            has_prev: u32::from(frame.previous.is_some()),
            z2_threshold: u32::from(threshold_q()),
            has_seeds: u32::from(frame.seeds.is_some()),
            tile_cols: frame.width.div_ceil(TILE),
            tiles: frame.width.div_ceil(TILE) * frame.height.div_ceil(TILE),
            pack_tiles: self.buffers.as_ref().map_or(0, |b| b.pack_tiles),
            ..Default::default()
        }
    }

    /// The gate, the σ sum and the gain (its sums, then its rule), submitted (and,
    /// where σ is to be estimated, waited for, with `info`'s words), and an encoder
    /// for the second pass.
    fn first_pass(
        &mut self,
        params: &Params,
        sigma: bool,
        gain: bool,
    ) -> Result<(wgpu::CommandEncoder, Option<Vec<u32>>), GpuError> {
        let b = self.buffers.as_ref().expect("buffers");
        self.gpu
            .queue
            .write_buffer(&b.params, 0, bytemuck::bytes_of(params));
        let mut encoder = self.encoder();
        if let Some(shown) = &self.shown {
            // a copy: the next frame's upload overwrites `raw` while the window may
            // still be drawing this one
            encoder.copy_buffer_to_buffer(&b.raw, 0, &shown.buffer, 0, None);
        }
        encoder.clear_buffer(&b.info, 0, None);
        let groups = dispatch_size(b.pixels());
        {
            let mut pass = pass(&mut encoder);
            self.record(&mut pass, &self.kernels.gate, 0, groups);
            if sigma {
                self.record(&mut pass, &self.kernels.sigma_sum, 0, groups);
            }
            if gain {
                self.record(&mut pass, &self.kernels.gain_sums, 0, groups);
                self.record(&mut pass, &self.kernels.gain, 0, 1);
            }
        }
        if params.gate_on != 0 {
            self.held.gate = true;
        }
        if !sigma {
            // on its way: the frame's upload and the gate run while the host records
            // the second pass
            self.gpu.queue.submit([encoder.finish()]);
            return Ok((self.encoder(), None));
        }
        encoder.copy_buffer_to_buffer(&b.info, 0, &b.info_read, 0, None);
        self.gpu.queue.submit([encoder.finish()]);
        let info = map_read(&self.gpu, &b.info_read, |words| words.to_vec())?;
        Ok((self.encoder(), Some(info)))
    }

    /// The background distance, the contrast weights, the prior's distances and the
    /// terminals, then brings the capacities back.
    fn second_pass(
        &mut self,
        mut encoder: wgpu::CommandEncoder,
        params: &Params,
        background: bool,
        prior: bool,
        connectivity: Connectivity,
    ) -> Result<Option<[u32; 3]>, GpuError> {
        let b = self.buffers.as_ref().expect("buffers");
        // every pass of this submission reads these (the first pass's fields are the
        // same in both)
        self.gpu
            .queue
            .write_buffer(&b.params, 0, bytemuck::bytes_of(params));
        if background {
            encoder.copy_buffer_to_buffer(&b.gains, 0, &b.gains_read, 0, None);
        }
        let groups = dispatch_size(b.pixels());
        {
            let mut pass = pass(&mut encoder);
            if background {
                self.record(&mut pass, &self.kernels.observe, 0, groups);
            }
            self.record(&mut pass, &self.kernels.edges, 0, groups);
            // the boundary into distance[0]; each round reads one array and writes the other
            let mut from = 0;
            if prior {
                self.record(&mut pass, &self.kernels.boundary, 1, groups);
                for _ in 0..params.ramp_len.div_ceil(3) + 1 {
                    self.record(&mut pass, &self.kernels.relax, from, groups);
                    from = 1 - from;
                }
            }
            self.record(&mut pass, &self.kernels.terminals, from, groups);
        }
        let (w, h) = (b.width, b.height);
        match self.problem.take() {
            Some(problem) => {
                let (source, sink, arrays) = problem.into_arrays();
                let mut arrays = HostArrays {
                    source,
                    sink,
                    edges: arrays,
                };
                let (mut any, mut edges) = self
                    .changes
                    .take()
                    .unwrap_or_else(|| (ChangedTiles::none(w, h), ChangedTiles::none(w, h)));
                any.clear();
                edges.clear();
                let read = self.read_changes(encoder, &mut arrays, &mut any, &mut edges)?;
                // room for a little more change next frame, in the same copy (none
                // after a frame that changed throughout: it is no guide)
                self.expected_tiles = read.map_or(0, |count| count + 16);
                if read.is_none() {
                    self.read_whole(&mut arrays)?;
                }
                self.lap("changed tiles back");
                self.changes = Some((any, edges));
                self.problem = Some(arrays.into_problem(w, h, connectivity)?);
            }
            None => {
                // nothing kept yet: all of them come back, and are kept
                encoder.copy_buffer_to_buffer(&b.caps, 0, &b.kept, 0, None);
                self.gpu.queue.submit([encoder.finish()]);
                let n = b.pixels();
                let dirs = connectivity.number() as usize;
                let mut arrays = HostArrays {
                    source: vec![0; n],
                    sink: vec![0; n],
                    edges: vec![vec![0; n]; dirs],
                };
                self.read_whole(&mut arrays)?;
                self.changes = None;
                self.problem = Some(arrays.into_problem(w, h, connectivity)?);
            }
        }
        if !background {
            return Ok(None);
        }
        // done with the copies above: the wait is over
        let gains = map_read(&self.gpu, &b.gains_read, |w| [w[0], w[1], w[2]])?;
        Ok(Some(gains))
    }

    /// Brings every capacity back into `arrays`.
    fn read_whole(&self, arrays: &mut HostArrays) -> Result<(), GpuError> {
        let b = self.buffers.as_ref().expect("buffers");
        let mut encoder = self.encoder();
        encoder.copy_buffer_to_buffer(&b.caps, 0, &b.caps_read, 0, None);
        self.gpu.queue.submit([encoder.finish()]);
        let n = b.pixels();
        map_read(&self.gpu, &b.caps_read, |words| {
            let caps: &[i32] = bytemuck::cast_slice(words);
            let parts = arrays.iter_mut().enumerate().collect();
            bands::as_copy(|| {
                bands::for_each_part(parts, |(a, array)| {
                    array.copy_from_slice(&caps[a * n..(a + 1) * n]);
                })
            });
        })?;
        Ok(())
    }

    /// Finds the tiles whose capacities changed (against the kept ones, on the device)
    /// and brings theirs back into `arrays`, marking them in `any` and `edges`: the
    /// device claims a slot for each and packs them one after another, and the flags,
    /// slots and as many packed tiles as the last frame changed (and a few more) come
    /// back in one copy; more, in a second. Gives the tiles read, or `None` where more
    /// than half the frame changed and every capacity should be read instead.
    fn read_changes(
        &self,
        mut encoder: wgpu::CommandEncoder,
        arrays: &mut HostArrays,
        any: &mut ChangedTiles,
        edges: &mut ChangedTiles,
    ) -> Result<Option<usize>, GpuError> {
        let b = self.buffers.as_ref().expect("buffers");
        let (w, h) = (b.width, b.height);
        let tiles = b.tiles as usize;
        let tile_words = arrays.len() * (TILE * TILE) as usize;
        // the tiles' flags and boxes (three words a tile), their slots, `info`
        let header = 4 * tiles + INFO_WORDS;
        let prefix = self.expected_tiles.min(b.pack_tiles as usize);
        let groups = dispatch_size(b.pixels());
        encoder.clear_buffer(&b.tile_flags, 0, None);
        {
            let mut pass = pass(&mut encoder);
            self.record(&mut pass, &self.kernels.compare, 0, groups);
            self.record(&mut pass, &self.kernels.slots, 0, dispatch_size(tiles));
            self.record(&mut pass, &self.kernels.pack, 0, groups);
        }
        let words = |k: usize| 4 * k as u64;
        encoder.copy_buffer_to_buffer(&b.tile_flags, 0, &b.tiles_read, 0, words(3 * tiles));
        let slots_at = words(3 * tiles);
        encoder.copy_buffer_to_buffer(&b.slots, 0, &b.tiles_read, slots_at, words(tiles));
        let info_at = words(4 * tiles);
        encoder.copy_buffer_to_buffer(&b.info, 0, &b.tiles_read, info_at, words(INFO_WORDS));
        if prefix > 0 {
            let at = words(header);
            encoder.copy_buffer_to_buffer(
                &b.packed,
                0,
                &b.tiles_read,
                at,
                words(prefix * tile_words),
            );
        }
        self.gpu.queue.submit([encoder.finish()]);
        self.lap("second pass recorded");
        let (flags, slots, count) = map_read(&self.gpu, &b.tiles_read, |w| {
            let count = w[4 * tiles + INFO_TILES] as usize;
            (
                w[..3 * tiles].to_vec(),
                w[3 * tiles..4 * tiles].to_vec(),
                count,
            )
        })?;
        self.lap("wait for the flags");
        mark_tiles(&flags, w, h, any, edges);
        if count > b.pack_tiles as usize || 2 * count * (TILE * TILE) as usize > b.pixels() {
            return Ok(None);
        }
        if count > prefix {
            let mut encoder = self.encoder();
            let (from, at) = (
                words(prefix * tile_words),
                words(header + prefix * tile_words),
            );
            let size = words((count - prefix) * tile_words);
            encoder.copy_buffer_to_buffer(&b.packed, from, &b.tiles_read, at, size);
            self.gpu.queue.submit([encoder.finish()]);
        }
        let cols = w.div_ceil(TILE);
        let tile = TILE as usize;
        let area = tile * tile;
        let arrays_len = arrays.len();
        map_read(&self.gpu, &b.tiles_read, |words| {
            let packed: &[i32] = bytemuck::cast_slice(&words[header..]);
            let taken: Vec<(u32, usize)> = (0..tiles as u32)
                .zip(slots.iter().map(|&s| s as usize))
                .filter(|&(_, slot)| slot != NO_SLOT as usize)
                .collect();
            // an array a part: each writes its own
            let parts = arrays.iter_mut().enumerate().collect();
            let copy = |(a, array): (usize, &mut Vec<i32>)| {
                for &(t, slot) in &taken {
                    let (x0, y0) = ((t % cols * TILE) as usize, (t / cols * TILE) as usize);
                    let x1 = (x0 + tile).min(w as usize);
                    let y1 = (y0 + tile).min(h as usize);
                    let from = &packed[(slot * arrays_len + a) * area..][..area];
                    for y in y0..y1 {
                        let row = &from[(y - y0) * tile..][..x1 - x0];
                        array[y * w as usize + x0..y * w as usize + x1].copy_from_slice(row);
                    }
                }
            };
            // on every core: short rows scattered over the arrays, not one stream
            bands::for_each_part(parts, copy);
        })?;
        Ok(Some(count))
    }

    /// The contrast, background, colour and ramp tables in one buffer, uploaded where
    /// their parameters changed.
    fn ensure_tables(
        &mut self,
        frame: &DeviceFrame<'_>,
        term: &mut DataTerm<'_>,
        sigma: f32,
    ) -> TableLayout {
        let s: Smoothness = frame.smoothness;
        let t = frame.temporal;
        let key: TablesKey = (
            (s.lambda.to_bits(), sigma.to_bits(), s.scale.to_bits()),
            match term {
                DataTerm::Background { weight, .. } => Some(weight.to_bits()),
                DataTerm::Colours { .. } => None,
            },
            match term {
                DataTerm::Colours { version, .. } => Some(*version),
                DataTerm::Background { .. } => None,
            },
            (t.weight.to_bits(), t.ramp.to_bits()),
        );
        if let Some((k, layout, _)) = &self.tables
            && *k == key
        {
            return *layout;
        }
        let mut all: Vec<i32> = Vec::new();
        let mut place = |entries: &[i32]| {
            let at = (all.len() as u32, entries.len() as u32);
            all.extend_from_slice(entries);
            at
        };
        let [straight, diagonal] = s.weight_tables(sigma);
        let mut layout = TableLayout {
            straight: place(&straight),
            diagonal: place(&diagonal),
            ..Default::default()
        };
        match term {
            DataTerm::Background { weight, .. } => {
                layout.background = place(&CostTable::new(*weight, CAPACITY_SCALE).entries);
            }
            DataTerm::Colours { models, .. } => {
                let (bits, table) = models.data_table();
                layout.colour = place(&table);
                layout.colour_bits = bits;
            }
        }
        let (ramp, full) = t.ramp_table(CAPACITY_SCALE);
        layout.ramp = place(&ramp);
        layout.full = full;
        all.push(0); // never empty
        let buffer = self
            .gpu
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("tables"),
                contents: bytemuck::cast_slice(&all),
                usage: wgpu::BufferUsages::STORAGE,
            });
        self.tables = Some((key, layout, buffer));
        self.kernels.all().iter().for_each(|k| k.forget());
        layout
    }

    fn encoder(&self) -> wgpu::CommandEncoder {
        self.gpu
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("energy"),
            })
    }

    /// Records `kernel` over `workgroups` workgroups into `pass`, reading distances
    /// from `from`.
    fn record(
        &self,
        pass: &mut wgpu::ComputePass<'_>,
        kernel: &Kernel,
        from: usize,
        workgroups: u32,
    ) {
        let b = self.buffers.as_ref().expect("buffers");
        let tables = self.tables.as_ref().map_or(&b.info, |(_, _, t)| t);
        let buffer = |binding| b.binding(binding, tables, from);
        kernel.record(&self.gpu.device, pass, (from, buffer), workgroups);
    }
}

/// The capacities the host holds, as [`GridProblem::into_arrays`] gives them.
struct HostArrays {
    source: Vec<i32>,
    sink: Vec<i32>,
    edges: Vec<Vec<i32>>,
}

impl HostArrays {
    /// Every array in the device's order: the arcs by direction, source, sink.
    fn iter_mut(&mut self) -> impl Iterator<Item = &mut Vec<i32>> {
        self.edges
            .iter_mut()
            .chain([&mut self.source, &mut self.sink])
    }

    fn len(&self) -> usize {
        self.edges.len() + 2
    }

    fn into_problem(
        self,
        w: u32,
        h: u32,
        connectivity: Connectivity,
    ) -> Result<GridProblem, GpuError> {
        GridProblem::from_built_arrays(w, h, connectivity, self.source, self.sink, self.edges)
            .map_err(|e| GpuError::Mismatch(e.to_string()))
    }
}

/// Marks the boxes of the changed pixels of the tiles the device flagged (three words a
/// tile: bit 0 a capacity changed, bit 1 an arc's; a bit for each row, and for each
/// column, where one did) in `any`, and in `edges` where an arc changed.
fn mark_tiles(
    flags: &[u32],
    width: u32,
    height: u32,
    any: &mut ChangedTiles,
    edges: &mut ChangedTiles,
) {
    let cols = width.div_ceil(TILE);
    for (t, tile) in flags.chunks_exact(3).enumerate().filter(|(_, f)| f[0] != 0) {
        let (x0, y0) = (t as u32 % cols * TILE, t as u32 / cols * TILE);
        // the lowest and past the highest bit set: the box's rows and columns
        let span = |bits: u32| bits.trailing_zeros()..TILE - bits.leading_zeros();
        let (ys, xs) = (span(tile[1]), span(tile[2]));
        let rect = PixelRect {
            xs: x0 + xs.start..(x0 + xs.end).min(width),
            ys: y0 + ys.start..(y0 + ys.end).min(height),
        };
        any.mark_rect(&rect, 0);
        if tile[0] & 2 != 0 {
            edges.mark_rect(&rect, 0);
        }
    }
}

/// `result`, unless the device raised an error meanwhile.
fn checked<R>(result: Result<R, GpuError>, error: Option<ComputeError>) -> Result<R, GpuError> {
    match error {
        Some(e) => Err(GpuError::Compute(e.0)),
        None => result,
    }
}

/// The table offsets and flags of the second pass.
fn fill_table_params(params: &mut Params, layout: &TableLayout, background: bool, prior: bool) {
    (params.straight_off, params.straight_len) = layout.straight;
    (params.diagonal_off, params.diagonal_len) = layout.diagonal;
    (params.colour_off, _) = layout.colour;
    params.colour_bits = layout.colour_bits;
    (params.bg_off, params.bg_len) = layout.background;
    (params.ramp_off, params.ramp_len) = layout.ramp;
    params.full = layout.full;
    params.has_bg = u32::from(background);
    params.has_colour = u32::from(!background);
    params.use_steady = u32::from(background);
    params.has_prior = u32::from(prior);
}

/// Workgroups for `n` pixels; the shaders stride over the rest.
fn dispatch_size(n: usize) -> u32 {
    workgroups(n, WORKGROUP)
}

/// A 64-bit sum from its (low, high) words at `at`.
fn word64(words: &[u32], at: usize) -> u64 {
    u64::from(words[at]) | (u64::from(words[at + 1]) << 32)
}

/// RGB bytes as one word a pixel, 0x00BBGGRR.
fn pack_colours(rgb: &[u8]) -> Vec<u32> {
    rgb.chunks_exact(3)
        .map(|c| u32::from(c[0]) | (u32::from(c[1]) << 8) | (u32::from(c[2]) << 16))
        .collect()
}

/// Words of one pixel each back to RGB bytes.
fn unpack_colours(words: &[u32]) -> Vec<u8> {
    words
        .iter()
        .flat_map(|&w| [w as u8, (w >> 8) as u8, (w >> 16) as u8])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::shader_checks::{struct_layout, validated};

    #[test]
    fn the_shaders_are_valid_wgsl() {
        validated(&shader_source());
    }

    #[test]
    fn params_match_the_shaders_struct() {
        // one word a member, and the same size
        let words = std::mem::size_of::<Params>() / 4;
        assert_eq!(
            struct_layout(&validated(&shader_source()), "Params"),
            (4 * words, words)
        );
    }

    #[test]
    fn colours_pack_and_unpack() {
        let rgb: Vec<u8> = (0..30).map(|i| (i * 37 % 256) as u8).collect();
        assert_eq!(unpack_colours(&pack_colours(&rgb)), rgb);
    }
}

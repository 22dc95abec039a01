//! A video frame's energy on the GPU (`kernels/energy.cu`): the frame is uploaded once,
//! and the noise gate, the data term (a learned background's distance with its gain
//! and steady colours, or the colour models' table), the contrast weights, the temporal
//! prior and the hard seeds are computed by kernels straight into a [`DeviceGrid`]
//! that the CUDA engine reads on the device; after the cut, a learned background
//! adapts there too.
//!
//! The CPU energy ([`super::EnergyBuilder`], [`BackgroundModel`]) stays the reference
//! and the fallback: the kernels use the same integer arithmetic and the host's
//! tables, so both give identical capacities. While the device energy runs it holds
//! the model's per-pixel state; [`DeviceEnergy::hand_back`] returns it to the model.

use super::background::{CostTable, kernel_defines, threshold_q};
use super::plan::{
    Capacities, EnergyDevice, GpuEnergy, Held, check_frame, packed_offsets, seed_code,
};
pub use super::plan::{DataTerm, DeviceFrame};
use super::{BackgroundModel, CAPACITY_SCALE, Smoothness};
use crate::gpu::{
    Compiled, DeviceGrid, DeviceMask, Gpu, GpuError, KernelFamily, KernelSource, Program, driver,
};
use crate::grid::Mask;
use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, DeviceRepr, LaunchConfig, PushKernelArg,
    ValidAsZeroBits,
};
use std::sync::Arc;

/// The energy kernels' source and entry points.
pub const SOURCE: KernelSource = KernelSource {
    name: "energy.cu",
    text: include_str!("../../kernels/energy.cu"),
    entries: &[
        "en_gate",
        "en_gain_sums",
        "en_observe",
        "en_edges",
        "en_sigma_sum",
        "en_distance",
        "en_terminals",
        "en_adapt",
    ],
};

/// Threads per block of every energy kernel.
const BLOCK: u32 = 256;

/// Tile of `en_distance` (must match `DIST_W`/`DIST_H` in the kernel source).
const DISTANCE_TILE: (u32, u32) = (32, 8);

/// Most relaxation rounds of one `en_distance` launch: its halo, which shared memory holds.
const DISTANCE_ROUNDS: u32 = 16;

/// Blocks of the gain reduction (grid-stride), enough to fill a large GPU.
const SUM_BLOCKS: u32 = 1024;

/// The energy kernels.
struct EnergyKernels {
    gate: CudaFunction,
    gain_sums: CudaFunction,
    observe: CudaFunction,
    edges: CudaFunction,
    sigma_sum: CudaFunction,
    distance: CudaFunction,
    terminals: CudaFunction,
    adapt: CudaFunction,
}

impl KernelFamily for EnergyKernels {
    /// One module.
    type Variant = ();

    fn program((): ()) -> Program {
        Program {
            name: SOURCE.name,
            text: SOURCE.text.to_string(),
            options: kernel_defines(),
        }
    }

    fn load(_gpu: &Gpu, module: &Arc<CudaModule>, (): ()) -> Result<Self, GpuError> {
        let function = |name: &str| SOURCE.function(module, name);
        Ok(Self {
            gate: function("en_gate")?,
            gain_sums: function("en_gain_sums")?,
            observe: function("en_observe")?,
            edges: function("en_edges")?,
            sigma_sum: function("en_sigma_sum")?,
            distance: function("en_distance")?,
            terminals: function("en_terminals")?,
            adapt: function("en_adapt")?,
        })
    }
}

/// Device arrays of one frame size, kept between frames.
struct Buffers {
    rgb: CudaSlice<u8>,
    held: CudaSlice<u8>,
    steady: CudaSlice<u8>,
    previous: CudaSlice<u8>,
    distance: [CudaSlice<u32>; 2],
    seeds: CudaSlice<u8>,
    sums: CudaSlice<u64>,
    sigma: CudaSlice<u64>,
    /// Pixels the gate let through this frame.
    moved: CudaSlice<u64>,
    census: CudaSlice<u32>,
    grid: DeviceGrid,
    // the background model's state, while the device holds it
    mean: CudaSlice<u32>,
    inv_var: CudaSlice<u64>,
    z2: CudaSlice<u16>,
    still: CudaSlice<u16>,
    last: CudaSlice<u8>,
}

/// The parameters a table was made for, as bits (λ or weight, σ or ramp, scale).
type TableKey = (u32, u32, u32);

/// Uploaded tables with the parameters they were made for.
struct Table<K> {
    key: K,
    entries: CudaSlice<i32>,
    len: u32,
}

/// The device energy: the shared runtime's kernels, a stream, and the arrays and tables
/// kept for the next frame.
pub struct DeviceEnergy {
    kernels: Arc<Compiled<EnergyKernels>>,
    stream: Arc<CudaStream>,
    buffers: Option<Buffers>,
    held: Held,
    weights: Option<Table<TableKey>>,
    diagonal: Option<Table<TableKey>>,
    background: Option<Table<(u32, u32)>>,
    /// The colour models' table by cell (keyed by their version), and the cells' bits.
    colours: Option<(Table<u64>, u32)>,
    /// σ of the last frame's contrast term.
    sigma: f32,
    /// The temporal ramp, and the full cost past its end.
    ramp: Option<(Table<TableKey>, i32)>,
}

impl GpuEnergy for DeviceEnergy {
    fn name(&self) -> String {
        "CUDA".to_string()
    }

    fn kind(&self) -> EnergyDevice {
        EnergyDevice::Cuda
    }

    fn held(&mut self) -> &mut Held {
        &mut self.held
    }

    /// σ of the last frame's contrast term.
    fn last_sigma(&self) -> f32 {
        self.sigma
    }

    /// Builds `frame`'s capacities on the device with `term` as its data term.
    fn build(
        &mut self,
        frame: DeviceFrame<'_>,
        mut term: DataTerm<'_>,
    ) -> Result<Capacities<'_>, GpuError> {
        let (w, h) = (frame.width, frame.height);
        let n = w as usize * h as usize;
        check_frame(&frame, &term)?;
        self.ensure_buffers(w, h, frame.smoothness)?;
        let background = matches!(term, DataTerm::Background { .. });
        if let DataTerm::Background { model, .. } = &mut term
            && !self.held.model
        {
            self.upload_model(model)?;
        }
        self.upload_frame(&frame)?;
        self.gate(frame.noise_gate, frame.gate, n)?;
        let sigma = match frame.smoothness.sigma.filter(|s| *s > 0.0) {
            Some(sigma) => sigma,
            None => {
                let estimate = self.estimate_sigma(w, h, frame.smoothness)?;
                let still = super::is_still(self.moved_pixels(frame.noise_gate)?, n as u64);
                super::hold_sigma(frame.held_sigma, estimate, still)
            }
        };
        self.sigma = sigma;
        self.ensure_tables(&frame, &mut term, sigma)?;
        if let DataTerm::Background { model, .. } = term {
            self.observe(model, frame.previous.is_some(), n)?;
        }
        self.edges(frame.seeds.is_some(), w, h, frame.smoothness, background)?;
        let prior = frame.previous.is_some() && frame.temporal.weight > 0.0;
        if prior {
            self.distance(w, h)?;
        }
        self.terminals(prior, frame.seeds.is_some(), background, n)
            .map(Capacities::Device)
    }

    /// The engine's cut, where it is still on the device, is copied there and only the
    /// span the cleanup changed goes up: the whole mask's upload was a large part of a
    /// 1080p frame's energy.
    fn finish(
        &mut self,
        mask: &Mask,
        version: u64,
        model: &BackgroundModel,
        cut: Option<(DeviceMask<'_>, Option<(usize, usize)>)>,
    ) -> Result<(), GpuError> {
        let Some(b) = self.buffers.as_mut() else {
            return Ok(());
        };
        let n = b.grid.pixels();
        if mask.data.len() != n || !self.held.model {
            return Ok(());
        }
        let up = driver("upload of the mask");
        match cut.filter(|(c, _)| (c.width(), c.height()) == (b.grid.width(), b.grid.height())) {
            Some((cut, changed)) => {
                self.stream
                    .join(cut.stream())
                    .map_err(driver("waiting for the engine's stream"))?;
                self.stream
                    .memcpy_dtod(cut.data(), &mut b.previous)
                    .map_err(driver("copy of the cut"))?;
                if let Some((first, end)) = changed {
                    self.stream
                        .memcpy_htod(
                            &mask.data[first..end],
                            &mut b.previous.slice_mut(first..end),
                        )
                        .map_err(up)?;
                }
            }
            None => self
                .stream
                .memcpy_htod(&mask.data, &mut b.previous)
                .map_err(up)?,
        }
        self.held.previous = Some(version);
        let [g0, g1, g2] = model.gain();
        let (had_last, n32) = (u32::from(self.held.had_last), n as u32);
        let threshold = u32::from(threshold_q());
        let absorb = u32::from(model.absorb_frames);
        // SAFETY: the arguments match `en_adapt`; every array holds n pixels.
        unsafe {
            self.stream
                .launch_builder(&self.kernels.adapt)
                .arg(&b.rgb)
                .arg(&b.previous)
                .arg(&mut b.mean)
                .arg(&b.z2)
                .arg(&mut b.still)
                .arg(&mut b.last)
                .arg(&had_last)
                .arg(&n32)
                .arg(&threshold)
                .arg(&g0)
                .arg(&g1)
                .arg(&g2)
                .arg(&absorb)
                .launch(per_pixel(n))
                .map_err(driver("energy kernel en_adapt"))?;
        }
        self.held.had_last = true;
        Ok(())
    }

    /// Copies the model's per-pixel state back from the device into `model` (for the
    /// CPU energy to go on where the device left off); the device then holds none.
    fn hand_back(&mut self, model: &mut BackgroundModel) -> Result<(), GpuError> {
        if !self.held.model {
            return Ok(());
        }
        let had_last = self.held.had_last;
        self.held.model = false;
        let (Some(b), Some(state)) = (self.buffers.as_ref(), model.state()) else {
            return Ok(());
        };
        let read = |what: &str| driver(format!("reading the background's {what}"));
        self.stream
            .memcpy_dtoh(&b.mean, state.mean.as_mut_slice())
            .map_err(read("means"))?;
        self.stream
            .memcpy_dtoh(&b.z2, state.z2.as_mut_slice())
            .map_err(read("distances"))?;
        self.stream
            .memcpy_dtoh(&b.still, state.still.as_mut_slice())
            .map_err(read("still counts"))?;
        state.last_rgb.clear();
        if had_last {
            *state.last_rgb = self
                .stream
                .clone_dtoh(&b.last)
                .map_err(read("last frame"))?;
        }
        self.stream.synchronize().map_err(read("state"))?;
        Ok(())
    }

    /// The gate's held colours and their frame's size (for the CPU gate to go on
    /// from); the device gate then holds none. `None` where it holds none.
    fn hand_back_gate(&mut self) -> Result<Option<(Vec<u8>, u32, u32)>, GpuError> {
        if !std::mem::take(&mut self.held.gate) {
            return Ok(None);
        }
        let Some(b) = &self.buffers else {
            return Ok(None);
        };
        let held = self
            .stream
            .clone_dtoh(&b.held)
            .map_err(driver("reading the gate's colours"))?;
        Ok(Some((held, b.grid.width(), b.grid.height())))
    }
}

impl DeviceEnergy {
    /// Opens the shared runtime and loads the kernels, or says why it cannot.
    pub fn new() -> Result<Self, GpuError> {
        let gpu = Gpu::get()?;
        let kernels = gpu.kernels::<EnergyKernels>(())?;
        let stream = gpu.new_stream()?;
        Ok(Self {
            kernels,
            stream,
            buffers: None,
            held: Held::default(),
            weights: None,
            diagonal: None,
            background: None,
            ramp: None,
            colours: None,
            sigma: 0.0,
        })
    }

    fn ensure_buffers(
        &mut self,
        width: u32,
        height: u32,
        smoothness: Smoothness,
    ) -> Result<(), GpuError> {
        let conn = smoothness.connectivity;
        if let Some(b) = &self.buffers
            && b.grid.fits(width, height, conn)
        {
            return Ok(());
        }
        self.buffers = None; // free the old arrays before allocating new ones
        self.held = Held::default();
        let n = (width as usize * height as usize).max(1);
        let s = &self.stream;
        self.buffers = Some(Buffers {
            rgb: zeros(s, 3 * n)?,
            held: zeros(s, 3 * n)?,
            steady: zeros(s, 3 * n)?,
            previous: zeros(s, n)?,
            distance: [zeros(s, n)?, zeros(s, n)?],
            seeds: zeros(s, n)?,
            sums: zeros(s, 6)?,
            sigma: zeros(s, 1)?,
            moved: zeros(s, 1)?,
            census: zeros(s, 3)?,
            grid: DeviceGrid::new(s, width, height, conn)?,
            mean: zeros(s, 3 * n)?,
            inv_var: zeros(s, n)?,
            z2: zeros(s, n)?,
            still: zeros(s, n)?,
            last: zeros(s, 3 * n)?,
        });
        Ok(())
    }

    /// Uploads the contrast, background and temporal tables where their parameters
    /// changed.
    fn ensure_tables(
        &mut self,
        frame: &DeviceFrame<'_>,
        term: &mut DataTerm<'_>,
        sigma: f32,
    ) -> Result<(), GpuError> {
        let s = frame.smoothness;
        let key = (s.lambda.to_bits(), sigma.to_bits(), s.scale.to_bits());
        if self.weights.as_ref().is_none_or(|t| t.key != key) {
            let [straight, diagonal] = s.weight_tables(sigma);
            self.weights = Some(upload_table(&self.stream, key, &straight)?);
            self.diagonal = Some(upload_table(&self.stream, key, &diagonal)?);
        }
        match term {
            DataTerm::Background { weight, .. } => {
                let key = (weight.to_bits(), CAPACITY_SCALE.to_bits());
                if self.background.as_ref().is_none_or(|t| t.key != key) {
                    let table = CostTable::new(*weight, CAPACITY_SCALE);
                    self.background = Some(upload_table(&self.stream, key, &table.entries)?);
                }
            }
            DataTerm::Colours { models, version } => {
                if self.colours.as_ref().is_none_or(|(t, _)| t.key != *version) {
                    let (bits, table) = models.data_table();
                    self.colours = Some((upload_table(&self.stream, *version, &table)?, bits));
                }
            }
        }
        let t = frame.temporal;
        let key = (
            t.weight.to_bits(),
            t.ramp.to_bits(),
            CAPACITY_SCALE.to_bits(),
        );
        if self.ramp.as_ref().is_none_or(|(t, _)| t.key != key) {
            let (ramp, full) = t.ramp_table(CAPACITY_SCALE);
            self.ramp = Some((upload_table(&self.stream, key, &ramp)?, full));
        }
        Ok(())
    }

    fn upload_model(&mut self, model: &mut BackgroundModel) -> Result<(), GpuError> {
        let b = self.buffers.as_mut().expect("buffers before the model");
        let state = model.state().expect("a learned model");
        let up = |what: &str| driver(format!("upload of the background's {what}"));
        self.stream
            .memcpy_htod(state.mean.as_slice(), &mut b.mean)
            .map_err(up("means"))?;
        self.stream
            .memcpy_htod(state.inv_var, &mut b.inv_var)
            .map_err(up("variances"))?;
        self.stream
            .memcpy_htod(state.z2.as_slice(), &mut b.z2)
            .map_err(up("distances"))?;
        self.stream
            .memcpy_htod(state.still.as_slice(), &mut b.still)
            .map_err(up("still counts"))?;
        self.held.had_last = state.last_rgb.len() == b.grid.pixels() * 3;
        if self.held.had_last {
            self.stream
                .memcpy_htod(state.last_rgb.as_slice(), &mut b.last)
                .map_err(up("last frame"))?;
        }
        self.held.model = true;
        Ok(())
    }

    /// Uploads the frame, and the previous mask and the seeds where they changed.
    fn upload_frame(&mut self, frame: &DeviceFrame<'_>) -> Result<(), GpuError> {
        let b = self.buffers.as_mut().expect("buffers");
        self.stream
            .memcpy_htod(frame.rgb, &mut b.rgb)
            .map_err(driver("upload of the frame"))?;
        match frame.previous {
            Some(mask) if self.held.previous != Some(frame.previous_version) => {
                self.stream
                    .memcpy_htod(&mask.data, &mut b.previous)
                    .map_err(driver("upload of the previous mask"))?;
                self.held.previous = Some(frame.previous_version);
            }
            _ => {}
        }
        if let Some(seeds) = frame.seeds
            && self.held.seeds != Some(frame.seeds_version)
        {
            let codes: Vec<u8> = seeds.labels.iter().map(|&l| seed_code(l)).collect();
            self.stream
                .memcpy_htod(&codes, &mut b.seeds)
                .map_err(driver("upload of the seeds"))?;
            self.held.seeds = Some(frame.seeds_version);
        }
        Ok(())
    }

    /// The noise gate, in place on the uploaded frame (which the later kernels read),
    /// with the held colours kept in `held`; where the device holds none, it goes on
    /// from `cpu_held` (the CPU gate's), if given.
    fn gate(&mut self, threshold: u8, cpu_held: Option<&[u8]>, n: usize) -> Result<(), GpuError> {
        let b = self.buffers.as_mut().expect("buffers");
        if threshold == 0 {
            self.held.gate = false;
            return Ok(());
        }
        if let Some(held) = cpu_held.filter(|h| !self.held.gate && h.len() == 3 * n) {
            self.stream
                .memcpy_htod(held, &mut b.held)
                .map_err(driver("upload of the gate's colours"))?;
            self.held.gate = true;
        }
        let first = u32::from(!self.held.gate);
        let (t, n32) = (u32::from(threshold), n as u32);
        self.stream
            .memset_zeros(&mut b.moved)
            .map_err(driver("clearing the gate's count"))?;
        // SAFETY: the arguments match `en_gate`; both arrays hold 3n bytes, `moved` one
        // word.
        unsafe {
            self.stream
                .launch_builder(&self.kernels.gate)
                .arg(&mut b.rgb)
                .arg(&mut b.held)
                .arg(&n32)
                .arg(&t)
                .arg(&first)
                .arg(&mut b.moved)
                .launch(per_pixel(n))
                .map_err(driver("energy kernel en_gate"))?;
        }
        self.held.gate = true;
        Ok(())
    }

    /// The gain from the background-looking pixels (summed on the device, decided on
    /// the host), then the background distance and the steady frame.
    fn observe(
        &mut self,
        model: &mut BackgroundModel,
        has_previous: bool,
        n: usize,
    ) -> Result<(), GpuError> {
        let b = self.buffers.as_mut().expect("buffers");
        let s = &self.stream;
        s.memset_zeros(&mut b.sums)
            .map_err(driver("clearing the gain sums"))?;
        let (has_prev, n32) = (u32::from(has_previous), n as u32);
        let threshold = u32::from(threshold_q());
        let blocks = (n as u32).div_ceil(BLOCK).clamp(1, SUM_BLOCKS);
        // SAFETY: the arguments match `en_gain_sums`; `sums` holds 6 words. Then
        // `en_observe`'s; every array holds n pixels.
        unsafe {
            s.launch_builder(&self.kernels.gain_sums)
                .arg(&b.rgb)
                .arg(&b.mean)
                .arg(&b.z2)
                .arg(&b.previous)
                .arg(&has_prev)
                .arg(&n32)
                .arg(&threshold)
                .arg(&mut b.sums)
                .launch(LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                })
                .map_err(driver("energy kernel en_gain_sums"))?;
        }
        let sums = s
            .clone_dtoh(&b.sums)
            .map_err(driver("reading the gain sums"))?;
        model.apply_gain_sums([sums[0], sums[1], sums[2]], [sums[3], sums[4], sums[5]]);
        let [g0, g1, g2] = model.gain();
        // SAFETY: see above.
        unsafe {
            s.launch_builder(&self.kernels.observe)
                .arg(&b.rgb)
                .arg(&b.mean)
                .arg(&b.inv_var)
                .arg(&mut b.z2)
                .arg(&mut b.steady)
                .arg(&n32)
                .arg(&g0)
                .arg(&g1)
                .arg(&g2)
                .launch(per_pixel(n))
                .map_err(driver("energy kernel en_observe"))?;
        }
        Ok(())
    }

    /// The contrast weights, of the steady frame (background) or of the gated frame.
    fn edges(
        &mut self,
        has_seeds: bool,
        width: u32,
        height: u32,
        smoothness: Smoothness,
        steady: bool,
    ) -> Result<(), GpuError> {
        let b = self.buffers.as_mut().expect("buffers");
        let straight = self.weights.as_ref().expect("tables");
        let diagonal = self.diagonal.as_ref().expect("tables");
        let has_seeds = u32::from(has_seeds);
        let dirs = smoothness.connectivity.number();
        let offsets = packed_offsets();
        // SAFETY: the arguments match `en_edges`; `edges` holds `dirs` arrays of n.
        unsafe {
            self.stream
                .launch_builder(&self.kernels.edges)
                .arg(if steady { &b.steady } else { &b.rgb })
                .arg(&b.seeds)
                .arg(&has_seeds)
                .arg(&straight.entries)
                .arg(&straight.len)
                .arg(&diagonal.entries)
                .arg(&diagonal.len)
                .arg(&mut b.grid.edges)
                .arg(&width)
                .arg(&height)
                .arg(&dirs)
                .arg(&offsets)
                .launch(per_pixel(width as usize * height as usize))
                .map_err(driver("energy kernel en_edges"))?;
        }
        Ok(())
    }

    /// σ of the gated frame as [`super::estimate_sigma`] gives it: the squared
    /// differences summed on the device (exactly, in integers), the root of their mean
    /// taken on the host.
    fn estimate_sigma(
        &mut self,
        width: u32,
        height: u32,
        smoothness: Smoothness,
    ) -> Result<f32, GpuError> {
        let b = self.buffers.as_mut().expect("buffers");
        let s = &self.stream;
        s.memset_zeros(&mut b.sigma)
            .map_err(driver("clearing the σ sum"))?;
        let dirs = smoothness.connectivity.number();
        let offsets = packed_offsets();
        let n = width as usize * height as usize;
        let blocks = (n as u32).div_ceil(BLOCK).clamp(1, SUM_BLOCKS);
        // SAFETY: the arguments match `en_sigma_sum`; `sigma` holds one word.
        unsafe {
            s.launch_builder(&self.kernels.sigma_sum)
                .arg(&b.rgb)
                .arg(&width)
                .arg(&height)
                .arg(&dirs)
                .arg(&offsets)
                .arg(&mut b.sigma)
                .launch(LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (BLOCK, 1, 1),
                    shared_mem_bytes: 0,
                })
                .map_err(driver("energy kernel en_sigma_sum"))?;
        }
        let sum = s
            .clone_dtoh(&b.sigma)
            .map_err(driver("reading the σ sum"))?[0];
        Ok(super::smoothness::sigma_of_sum(
            sum,
            width as usize,
            height as usize,
            smoothness.connectivity,
        ))
    }

    /// How many pixels this frame's gate let through (`None` with the gate off).
    fn moved_pixels(&mut self, threshold: u8) -> Result<Option<u64>, GpuError> {
        if threshold == 0 {
            return Ok(None);
        }
        let b = self.buffers.as_ref().expect("buffers");
        let moved = self
            .stream
            .clone_dtoh(&b.moved)
            .map_err(driver("reading the gate's count"))?[0];
        Ok(Some(moved))
    }

    /// The chamfer distance from the previous boundary, exact below the ramp's end, into
    /// `distance[0]`: the rounds in launches of at most `DISTANCE_ROUNDS` (each launch's
    /// halo is its rounds), alternating between the two arrays.
    fn distance(&mut self, width: u32, height: u32) -> Result<(), GpuError> {
        let b = self.buffers.as_mut().expect("buffers");
        let ramp = self.ramp.as_ref().map_or(0, |(t, _)| t.len);
        // each round fixes the distances one more arc away; arcs are 3 or 4 long
        let mut left = ramp.div_ceil(3) + 1;
        let launches = left.div_ceil(DISTANCE_ROUNDS);
        let [a, c] = &mut b.distance;
        // the last launch writes `distance[0]`
        let (mut from, mut to) = if launches.is_multiple_of(2) {
            (a, c)
        } else {
            (c, a)
        };
        let mut from_mask = 1u32;
        while left > 0 {
            let rounds = left.min(DISTANCE_ROUNDS);
            let (rw, rh) = (DISTANCE_TILE.0 + 2 * rounds, DISTANCE_TILE.1 + 2 * rounds);
            let config = LaunchConfig {
                grid_dim: (
                    width.div_ceil(DISTANCE_TILE.0),
                    height.div_ceil(DISTANCE_TILE.1),
                    1,
                ),
                block_dim: (DISTANCE_TILE.0, DISTANCE_TILE.1, 1),
                shared_mem_bytes: 2 * 4 * rw * rh + (rw + 2) * (rh + 2),
            };
            // SAFETY: the arguments match `en_distance`; both arrays hold n pixels, the
            // mask n bytes, and the shared memory the kernel's two buffers and labels.
            unsafe {
                self.stream
                    .launch_builder(&self.kernels.distance)
                    .arg(&b.previous)
                    .arg(&*from)
                    .arg(&from_mask)
                    .arg(&mut *to)
                    .arg(&width)
                    .arg(&height)
                    .arg(&rounds)
                    .launch(config)
                    .map_err(driver("energy kernel en_distance"))?;
            }
            std::mem::swap(&mut from, &mut to);
            from_mask = 0;
            left -= rounds;
        }
        Ok(())
    }

    /// The terminal capacities and their census, then waits for the frame's work.
    fn terminals(
        &mut self,
        prior: bool,
        has_seeds: bool,
        background: bool,
        n: usize,
    ) -> Result<&DeviceGrid, GpuError> {
        let b = self.buffers.as_mut().expect("buffers");
        let (ramp, full) = self.ramp.as_ref().expect("tables");
        // the term not in use is passed any table; its flag keeps it unread
        let (bg_entries, bg_len) = self
            .background
            .as_ref()
            .map_or((&ramp.entries, 0), |t| (&t.entries, t.len));
        let (colour_entries, bits) = self
            .colours
            .as_ref()
            .map_or((&ramp.entries, 0), |(t, bits)| (&t.entries, *bits));
        let (has_bg, has_colour) = (u32::from(background), u32::from(!background));
        let s = &self.stream;
        s.memset_zeros(&mut b.census)
            .map_err(driver("clearing the census"))?;
        let (prior, has_seeds, n32) = (u32::from(prior), u32::from(has_seeds), n as u32);
        let dirs = b.grid.connectivity.number();
        let grid = &mut b.grid;
        // SAFETY: the arguments match `en_terminals`; every array holds n pixels (the
        // edges `dirs` arrays of n), the tables their lengths.
        unsafe {
            s.launch_builder(&self.kernels.terminals)
                .arg(&b.rgb)
                .arg(colour_entries)
                .arg(&bits)
                .arg(&has_colour)
                .arg(&b.z2)
                .arg(&has_bg)
                .arg(bg_entries)
                .arg(&bg_len)
                .arg(&b.previous)
                .arg(&b.distance[0])
                .arg(&prior)
                .arg(&ramp.entries)
                .arg(&ramp.len)
                .arg(full)
                .arg(&b.seeds)
                .arg(&has_seeds)
                .arg(&grid.edges)
                .arg(&dirs)
                .arg(&mut grid.source)
                .arg(&mut grid.sink)
                .arg(&n32)
                .arg(&mut b.census)
                .launch(per_pixel(n))
                .map_err(driver("energy kernel en_terminals"))?;
        }
        let census = s
            .clone_dtoh(&b.census)
            .map_err(driver("reading the terminals' census"))?;
        grid.census = [census[0], census[1], census[2]];
        Ok(&b.grid)
    }
}

/// One thread per pixel.
fn per_pixel(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(BLOCK).max(1), 1, 1),
        block_dim: (BLOCK, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn zeros<T: DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    len: usize,
) -> Result<CudaSlice<T>, GpuError> {
    stream
        .alloc_zeros::<T>(len.max(1))
        .map_err(driver("allocating the energy's arrays"))
}

fn upload_table<K>(
    stream: &Arc<CudaStream>,
    key: K,
    entries: &[i32],
) -> Result<Table<K>, GpuError> {
    // an empty table still needs one entry to point at; its length stays 0
    let mut slice = zeros::<i32>(stream, entries.len())?;
    if !entries.is_empty() {
        stream
            .memcpy_htod(entries, &mut slice)
            .map_err(driver("upload of a table"))?;
    }
    Ok(Table {
        key,
        entries: slice,
        len: entries.len() as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_get_the_models_constants() {
        let defines = kernel_defines();
        for name in [
            "MEAN_BITS",
            "GAIN_BITS",
            "Z2_STEPS",
            "SHADOW_MIN",
            "ADAPT_SHIFT",
        ] {
            assert!(
                SOURCE.text.contains(name),
                "{name} is not used by the kernels"
            );
            assert!(defines.iter().any(|d| d.starts_with(&format!("-D{name}="))));
        }
    }
}

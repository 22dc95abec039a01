//! Exact max-flow on volumes on an NVIDIA GPU: Hong's lock-free push-relabel over the
//! problem's own structure of arrays (`kernels/volume.cu`), with exact global
//! relabels (BFS from the sink, tile fixpoints repeated until no height falls) that
//! also decide termination. The source side is the voxels that cannot reach the sink
//! (`CutSide::CannotReachSink`), as the 2D CUDA engine's.

#[cfg(feature = "experiments")]
mod wff;

#[cfg(feature = "experiments")]
pub use wff::{VolumeSchedule, WFF};

use super::GpuSolveStats;
use crate::gpu::{Compiled, Gpu, GpuError, KernelFamily, KernelSource, Program, Staging, driver};
use crate::grid::{Mask, VolumeProblem};
use crate::maxflow::{CutSide, EngineError, EngineKind, Solution, SolveStats, VolumeEngine};
use cudarc::driver::{
    CudaFunction, CudaModule, CudaSlice, CudaStream, LaunchConfig, PushKernelArg,
};
use std::sync::Arc;
use std::time::Instant;

/// The volume engine's kernel source and its entry points.
pub const VOLUME: KernelSource = KernelSource {
    name: "volume.cu",
    text: include_str!("../../../../kernels/volume.cu"),
    entries: &[
        "vol_init",
        "vol_push",
        "vol_relabel_init",
        "vol_bfs",
        "vol_count",
        "vol_finish",
    ],
};

/// Tile of a `vol_bfs` block (`BX`, `BY`, `BZ` in the kernel source).
const BFS_TILE: (u32, u32, u32) = (32, 4, 4);
/// Threads of the one-voxel-a-thread launches.
const THREADS: u32 = 256;
/// `vol_bfs` launches between reads of the change flag.
const BFS_BATCH: u32 = 4;
/// Push or relabel steps of a voxel in one `vol_push` launch (public for the kernel
/// emulation, which replays the host loop).
pub const CYCLES: i32 = 4;
/// `vol_push` (or `wff_wave`) launches after the first global relabel, and the most
/// between two: doubled while a relabel finds the active voxels not halved since the
/// last one (public for the kernel emulation).
pub const PUSHES: (u32, u32) = (8, 256);

/// The kernels of one neighbourhood (`VOL_K`).
struct VolumeKernels {
    init: CudaFunction,
    push: CudaFunction,
    /// Wave Front Fetch's unit operation (the schedule experiments).
    #[cfg(feature = "experiments")]
    wave: CudaFunction,
    relabel_init: CudaFunction,
    bfs: CudaFunction,
    count: CudaFunction,
    finish: CudaFunction,
}

impl KernelFamily for VolumeKernels {
    /// Neighbours per voxel: 6, 10 or 26.
    type Variant = u32;

    fn program(k: u32) -> Program {
        Program {
            name: VOLUME.name,
            text: program_text(),
            options: vec![
                "--std=c++17".into(),
                "-lineinfo".into(),
                format!("-DVOL_K={k}"),
            ],
        }
    }

    fn load(_gpu: &Gpu, module: &Arc<CudaModule>, _k: u32) -> Result<Self, GpuError> {
        let function = |name: &str| VOLUME.function(module, name);
        Ok(Self {
            init: function("vol_init")?,
            push: function("vol_push")?,
            #[cfg(feature = "experiments")]
            wave: wff::WFF.function(module, "wff_wave")?,
            relabel_init: function("vol_relabel_init")?,
            bfs: function("vol_bfs")?,
            count: function("vol_count")?,
            finish: function("vol_finish")?,
        })
    }
}

/// The kernels' source: push-relabel's, and with the schedule experiments Wave Front
/// Fetch's after it.
fn program_text() -> String {
    #[cfg(feature = "experiments")]
    return format!("{}\n{}", VOLUME.text, wff::WFF.text);
    #[cfg(not(feature = "experiments"))]
    VOLUME.text.to_string()
}

/// Device arrays for one shape of volume, kept for the next problem of that shape.
struct Buffers {
    voxels: usize,
    dirs: usize,
    source: CudaSlice<i32>,
    sink_cap: CudaSlice<i32>,
    /// Residual capacities, direction-major (`u32` in the kernels).
    res: CudaSlice<i32>,
    excess: CudaSlice<i64>,
    /// Residual capacity to the sink (`u32` in the kernels).
    sink: CudaSlice<i32>,
    height: CudaSlice<i32>,
    /// Wave Front Fetch's time stamps (the schedule experiments).
    #[cfg(feature = "experiments")]
    stamp: CudaSlice<i32>,
    mask: CudaSlice<u8>,
    /// The change flag of `vol_bfs` and the count of `vol_count`.
    flags: CudaSlice<u32>,
    /// The excess `vol_finish` finds left.
    left: CudaSlice<u64>,
}

impl Buffers {
    fn new(stream: &Arc<CudaStream>, voxels: usize, dirs: usize) -> Result<Self, GpuError> {
        let alloc = || driver("allocating the volume's arrays");
        Ok(Self {
            voxels,
            dirs,
            source: stream.alloc_zeros(voxels).map_err(alloc())?,
            sink_cap: stream.alloc_zeros(voxels).map_err(alloc())?,
            res: stream.alloc_zeros(voxels * dirs).map_err(alloc())?,
            excess: stream.alloc_zeros(voxels).map_err(alloc())?,
            sink: stream.alloc_zeros(voxels).map_err(alloc())?,
            height: stream.alloc_zeros(voxels).map_err(alloc())?,
            #[cfg(feature = "experiments")]
            stamp: stream.alloc_zeros(voxels).map_err(alloc())?,
            mask: stream.alloc_zeros(voxels).map_err(alloc())?,
            flags: stream.alloc_zeros(2).map_err(alloc())?,
            left: stream.alloc_zeros(1).map_err(alloc())?,
        })
    }

    /// Device memory held, in bytes.
    fn bytes(&self) -> u64 {
        (self.voxels * (4 * (self.dirs + 5) + 8 + 1)) as u64
    }
}

/// What the host loop of one solve did.
#[derive(Default)]
struct Work {
    global_relabels: u64,
    launches: u64,
    /// Launches that moved excess.
    push_launches: u64,
}

/// Push-relabel on volumes on an NVIDIA GPU. Keeps its device arrays for the next
/// problem of the same shape; every call solves from scratch (`update` too: it gives
/// the same answer as `solve`, as the trait asks).
pub struct CudaVolumeEngine {
    gpu: Arc<Gpu>,
    stream: Arc<CudaStream>,
    buffers: Option<Buffers>,
    /// Page-locked memory the uploads go through, allocated by the first.
    staging: Option<Staging<i32>>,
    /// The schedule experiments' Wave Front Fetch.
    #[cfg(feature = "experiments")]
    lab: wff::Lab,
}

impl CudaVolumeEngine {
    /// Opens the shared GPU runtime, or says why it cannot (no driver, no device).
    /// The kernels are compiled by the first solve of each neighbourhood.
    pub fn new() -> Result<Self, EngineError> {
        let gpu = Gpu::get()?;
        let stream = gpu.new_stream()?;
        Ok(Self {
            gpu,
            stream,
            buffers: None,
            staging: None,
            #[cfg(feature = "experiments")]
            lab: wff::Lab::default(),
        })
    }

    fn buffers(&mut self, voxels: usize, dirs: usize) -> Result<(), GpuError> {
        match &self.buffers {
            Some(b) if b.voxels == voxels && b.dirs == dirs => Ok(()),
            _ => {
                self.buffers = None; // free the old arrays before allocating new ones
                self.buffers = Some(Buffers::new(&self.stream, voxels, dirs)?);
                Ok(())
            }
        }
    }

    /// Copies the problem's capacities to the device and folds the terminals.
    fn upload(&mut self, problem: &VolumeProblem, k: &VolumeKernels) -> Result<(), GpuError> {
        let n = problem.voxels();
        let stream = self.stream.clone();
        if self.staging.is_none() {
            self.staging = Some(Staging::new(&self.gpu)?);
        }
        let staging = self.staging.as_mut().expect("staging allocated");
        let b = self.buffers.as_mut().expect("buffers allocated");
        staging.upload(&stream, problem.source(), &mut b.source.slice_mut(..))?;
        staging.upload(&stream, problem.sink(), &mut b.sink_cap.slice_mut(..))?;
        for d in 0..b.dirs {
            let mut view = b.res.slice_mut(d * n..(d + 1) * n);
            staging.upload(&stream, problem.edges(d), &mut view)?;
        }
        let n64 = n as i64;
        // SAFETY: the arguments match vol_init's signature; every array holds n voxels.
        unsafe {
            stream
                .launch_builder(&k.init)
                .arg(&b.source)
                .arg(&b.sink_cap)
                .arg(&mut b.excess)
                .arg(&mut b.sink)
                .arg(&n64)
                .launch(linear(n))
                .map_err(driver("the volume's init kernel"))?;
        }
        Ok(())
    }

    /// Sets every height to its exact distance to the sink in the residual graph
    /// (INF where there is none) and returns the voxels with excess that can reach it.
    fn global_relabel(
        &mut self,
        k: &VolumeKernels,
        size: (u32, u32, u32),
        work: &mut Work,
    ) -> Result<u32, GpuError> {
        let stream = self.stream.clone();
        let b = self.buffers.as_mut().expect("buffers allocated");
        let n = b.voxels;
        let n64 = n as i64;
        let (w, h, d) = (size.0 as i32, size.1 as i32, size.2 as i32);
        let launch = || driver("the volume's global relabel");
        let tiles = LaunchConfig {
            grid_dim: (
                size.0.div_ceil(BFS_TILE.0),
                size.1.div_ceil(BFS_TILE.1),
                size.2.div_ceil(BFS_TILE.2),
            ),
            block_dim: BFS_TILE,
            shared_mem_bytes: 0,
        };
        // SAFETY (all launches): the arguments match the kernels' signatures in
        // kernels/volume.cu; every array holds n voxels (`res` n per direction).
        unsafe {
            stream
                .launch_builder(&k.relabel_init)
                .arg(&b.sink)
                .arg(&mut b.height)
                .arg(&n64)
                .launch(linear(n))
                .map_err(launch())?;
        }
        work.launches += 1;
        let mut flags = [0u32; 2];
        loop {
            stream.memset_zeros(&mut b.flags).map_err(launch())?;
            for _ in 0..BFS_BATCH {
                unsafe {
                    stream
                        .launch_builder(&k.bfs)
                        .arg(&b.res)
                        .arg(&mut b.height)
                        .arg(&w)
                        .arg(&h)
                        .arg(&d)
                        .arg(&mut b.flags)
                        .launch(tiles)
                        .map_err(launch())?;
                }
            }
            work.launches += u64::from(BFS_BATCH);
            stream.memcpy_dtoh(&b.flags, &mut flags).map_err(launch())?;
            stream.synchronize().map_err(launch())?;
            if flags[0] == 0 {
                break;
            }
        }
        unsafe {
            stream
                .launch_builder(&k.count)
                .arg(&b.excess)
                .arg(&b.height)
                .arg(&n64)
                .arg(&mut b.flags)
                .launch(linear(n))
                .map_err(launch())?;
        }
        work.launches += 1;
        work.global_relabels += 1;
        stream.memcpy_dtoh(&b.flags, &mut flags).map_err(launch())?;
        stream.synchronize().map_err(launch())?;
        Ok(flags[0])
    }

    /// `count` push launches.
    fn push(
        &mut self,
        k: &VolumeKernels,
        size: (u32, u32),
        count: u32,
        work: &mut Work,
    ) -> Result<(), GpuError> {
        let stream = self.stream.clone();
        let b = self.buffers.as_mut().expect("buffers allocated");
        let n = b.voxels;
        let n64 = n as i64;
        let (w, h) = (size.0 as i32, size.1 as i32);
        for _ in 0..count {
            // SAFETY: the arguments match vol_push's signature; arrays as in upload.
            unsafe {
                stream
                    .launch_builder(&k.push)
                    .arg(&mut b.res)
                    .arg(&mut b.excess)
                    .arg(&mut b.sink)
                    .arg(&mut b.height)
                    .arg(&w)
                    .arg(&h)
                    .arg(&n64)
                    .arg(&CYCLES)
                    .launch(linear(n))
                    .map_err(driver("the volume's push kernel"))?;
            }
        }
        work.launches += u64::from(count);
        work.push_launches += u64::from(count);
        Ok(())
    }

    /// Runs the preflow to its maximum.
    fn run(&mut self, k: &VolumeKernels, size: (u32, u32, u32)) -> Result<Work, GpuError> {
        let mut work = Work::default();
        #[cfg(feature = "experiments")]
        self.start_waves()?;
        let (mut pushes, mut last) = (PUSHES.0, u32::MAX);
        loop {
            let active = self.global_relabel(k, size, &mut work)?;
            if active == 0 {
                return Ok(work);
            }
            if active > last / 2 {
                pushes = (pushes * 2).min(PUSHES.1);
            }
            #[cfg(feature = "experiments")]
            self.lab.watch(active, last, pushes == PUSHES.1);
            last = active;
            #[cfg(feature = "experiments")]
            if self.lab.waving() {
                self.waves(k, (size.0, size.1), pushes, &mut work)?;
                continue;
            }
            self.push(k, (size.0, size.1), pushes, &mut work)?;
        }
    }

    /// The cut's mask and the excess left in the volume.
    fn finish(&mut self, k: &VolumeKernels, mask: &mut [u8]) -> Result<u64, GpuError> {
        let stream = self.stream.clone();
        let b = self.buffers.as_mut().expect("buffers allocated");
        let n = b.voxels;
        let n64 = n as i64;
        let read = || driver("reading the volume's cut");
        stream.memset_zeros(&mut b.left).map_err(read())?;
        // SAFETY: the arguments match vol_finish's signature; arrays as in upload.
        unsafe {
            stream
                .launch_builder(&k.finish)
                .arg(&b.excess)
                .arg(&b.height)
                .arg(&mut b.mask)
                .arg(&n64)
                .arg(&mut b.left)
                .launch(linear(n))
                .map_err(read())?;
        }
        stream.memcpy_dtoh(&b.mask, mask).map_err(read())?;
        let mut left = [0u64];
        stream.memcpy_dtoh(&b.left, &mut left).map_err(read())?;
        stream.synchronize().map_err(read())?;
        Ok(left[0])
    }
}

/// One thread a voxel.
fn linear(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u64).div_ceil(u64::from(THREADS)) as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The flow the terminals carry at once (Σ min(s, t)) and the excess they leave
/// (Σ max(s − t, 0)).
fn folded_terminals(problem: &VolumeProblem) -> (u64, u64) {
    problem
        .source()
        .iter()
        .zip(problem.sink())
        .fold((0, 0), |(base, excess), (&s, &t)| {
            let (s, t) = (s as u64, t as u64);
            (base + s.min(t), excess + s.saturating_sub(t))
        })
}

impl VolumeEngine for CudaVolumeEngine {
    fn kind(&self) -> EngineKind {
        EngineKind::Cuda
    }

    fn description(&self) -> String {
        format!("CUDA push-relabel on {}", self.gpu.name())
    }

    fn cut_side(&self) -> CutSide {
        CutSide::CannotReachSink
    }

    fn solve(&mut self, problem: &VolumeProblem) -> Result<Solution, EngineError> {
        let start = Instant::now();
        let dirs = problem.connectivity().number();
        let kernels: Arc<Compiled<VolumeKernels>> = self.gpu.kernels(dirs)?;
        let compiled = Instant::now();
        let n = problem.voxels();
        self.buffers(n, dirs as usize)?;
        self.upload(problem, &kernels)?;
        self.stream
            .synchronize()
            .map_err(driver("uploading the volume"))?;
        let uploaded = Instant::now();
        let size = (problem.width(), problem.height(), problem.depth());
        let work = self.run(&kernels, size)?;
        let solved = Instant::now();
        let (mask_w, mask_h) = problem.mask_size();
        let mut data = vec![0u8; n];
        let left = self.finish(&kernels, &mut data)?;
        let (base, excess) = folded_terminals(problem);
        let ms = |a: Instant, b: Instant| (b - a).as_secs_f64() * 1e3;
        let stats = SolveStats {
            upload_ms: ms(start, uploaded) - ms(start, compiled),
            solve_ms: ms(uploaded, solved),
            readback_ms: ms(solved, Instant::now()),
            iterations: work.push_launches,
            engine_bytes: self.buffers.as_ref().map_or(0, Buffers::bytes),
            gpu: Some(GpuSolveStats {
                global_relabels: work.global_relabels,
                launches: work.launches,
                ..GpuSolveStats::default()
            }),
            ..SolveStats::default()
        };
        Ok(Solution {
            flow: base + excess - left,
            mask: Mask {
                width: mask_w,
                height: mask_h,
                data,
            },
            stats,
        })
    }

    /// Solves afresh: the engine keeps no residual graph between calls.
    fn update(&mut self, problem: &VolumeProblem) -> Result<Solution, EngineError> {
        self.solve(problem)
    }
}

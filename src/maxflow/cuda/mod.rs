//! Exact push-relabel max-flow on an NVIDIA GPU (CUDA Cuts on tiles).
//!
//! The residual graph lives on the device in a tiled layout (`layout`, `buffers`). Each
//! round discharges the active tiles of one colour at a time in shared memory, several
//! push/relabel steps per launch with region relabels inside the tile; an exact global
//! relabel (BFS from the sink, tile fixpoints looped on the device) runs periodically and
//! decides termination: when no pixel with excess can reach the sink the preflow is
//! maximum, and the pixels that cannot reach the sink are the source side of a minimum
//! cut (`CutSide::CannotReachSink`). The kernels (`kernels/*.cu`) are compiled once per
//! process with NVRTC. See `kernels/pushrelabel/common.cu` for the algorithm in detail and
//! `kernels/NOTES.md` for the measurements behind its schedule.

mod buffers;
mod config;
mod kernels;
mod layout;
mod schedule;
mod terminals;
mod volume;

#[cfg(not(feature = "experiments"))]
use config::CudaConfig;
#[cfg(feature = "experiments")]
pub use config::CudaConfig;
pub use config::{auto_relabel_rounds, auto_step_budget};
pub use kernels::{KERNEL_SOURCES, PUSH_RELABEL};
pub use layout::{KernelFailure, TILE_HEIGHTS, TILE_W, auto_tile_height, few_square_tiles};
#[cfg(feature = "experiments")]
pub use layout::{LOG_COLS, LOG_ROWS};
pub use schedule::Schedule;
pub use terminals::Terminals;
pub use volume::{CYCLES as VOLUME_CYCLES, CudaVolumeEngine, PUSHES as VOLUME_PUSHES, VOLUME};
#[cfg(feature = "experiments")]
pub use volume::{VolumeSchedule, WFF};

use super::pace::Pace;
use super::{BlockActivity, Certificate, CutSide, Engine, EngineError, Solution, SolveStats};
use crate::gpu::{DeviceGrid, DeviceMask, Gpu, driver};
use crate::grid::{Connectivity, GridProblem, Mask};
use buffers::DeviceState;
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};
use kernels::PushRelabelKernels;
use layout::{Ctl, NO_BUDGET, SUM_CHANGED, SUM_OFFSET, SUM_OVERFLOW, Status, Tiling};
use serde::Serialize;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the CUDA engine reports of each call beyond every engine's statistics
/// ([`SolveStats::gpu`]), for the CLI's tables and JSON.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct GpuSolveStats {
    /// Exact global relabels.
    pub global_relabels: u64,
    /// Kernel launches.
    pub launches: u64,
    /// Passes over the whole grid's state the solve made (tiles loaded or relaxed over
    /// the tile count, plus the whole-grid passes), for comparing a solve with the
    /// memory floor.
    pub sweeps: f64,
    /// What `sweeps` passes reading and writing the grid's state take at the device's
    /// measured copy bandwidth: the least time a solve with that many passes could take
    /// (`None` where the bandwidth could not be measured).
    pub memory_floor_ms: Option<f64>,
}

/// What the last call did on the device, beyond [`SolveStats`] (the lab's counters:
/// tests and the schedule harness read them).
#[cfg(feature = "experiments")]
#[derive(Clone, Debug, Default, Serialize)]
pub struct CudaDetails {
    /// How the solve was driven.
    pub schedule: Schedule,
    /// Blocks of the persistent launch (0 for the host loop).
    pub blocks: u32,
    /// NVRTC compile time of the kernels for this tile height (paid once per process,
    /// by the first solve that needs them).
    pub compile_ms: f64,
    /// Tiles of the grid.
    pub tiles: u32,
    /// Tile height in pixels (tiles are [`TILE_W`] wide).
    pub tile_height: u32,
    /// Push/relabel steps a tile visit could run (the configured or automatic budget).
    pub step_budget: u32,
    /// Discharge rounds (one pass per tile colour each).
    pub rounds: u32,
    /// Exact global relabels.
    pub global_relabels: u32,
    /// BFS rounds over all global relabels (the persistent solve: one queue pass each).
    pub bfs_rounds: u32,
    /// Tile visits of the discharge passes that did work (at least one step).
    pub tile_visits: u32,
    /// Tiles loaded by the discharge passes, idle ones included: stochastic cuts
    /// exist to keep this low.
    pub tile_loads: u32,
    /// Tiles relaxed in BFS rounds.
    pub bfs_tiles: u32,
    /// Push/relabel steps summed over tile visits.
    pub steps: u64,
    /// Jacobi iterations of BFS and region relabels summed over tiles.
    pub bfs_iterations: u64,
    /// Local relabel operations.
    pub relabels: u64,
    /// SM cycles spent inside discharge visits, summed over tiles.
    #[cfg(feature = "experiments")]
    pub discharge_cycles: u64,
    /// SM cycles spent relaxing BFS tiles, summed over tiles.
    #[cfg(feature = "experiments")]
    pub bfs_cycles: u64,
    /// Critical path of the persistent solve, in block 0's SM cycles from barrier to
    /// barrier: spent in global-relabel passes, and in discharge passes (where a
    /// relabel follows the rounds with no barrier, split where block 0 ends its rounds).
    #[cfg(feature = "experiments")]
    pub path_cycles: (u64, u64),
    /// Persistent solve: cycles blocks waited for work in global-relabel passes, and
    /// spent in grid barriers (both summed over blocks).
    #[cfg(feature = "experiments")]
    pub wait_cycles: (u64, u64),
    /// Persistent solve: whether global relabels handed tiles to their owner blocks
    /// (`CudaConfig::owner_relabel_tiles`) rather than through the queue.
    pub owner_relabel: bool,
    /// Persistent solve: tiles taken from the global relabel's queue, or woken tiles an
    /// owner took (with each block's last, empty take).
    pub queue_takes: u64,
    /// Persistent solve: global relabels whose BFS stopped at a cap
    /// (`CudaConfig::relabel_cap_margin`).
    pub capped_relabels: u32,
    /// Passes over the whole grid's memory: tile loads and BFS tiles over the tile
    /// count, plus the full-grid passes of each global relabel (2) and the output (1).
    pub sweeps: f64,
}

/// Push-relabel max-flow on the GPU.
pub struct CudaEngine {
    gpu: Arc<Gpu>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
    end: CudaEvent,
    config: CudaConfig,
    /// The arrays of the last grid shape; `None` before the first solve and after a
    /// failed one.
    state: Option<DeviceState>,
    #[cfg(feature = "experiments")]
    details: CudaDetails,
    /// What fresh and continued solves cost on this stream (`update` takes the cheaper).
    pace: Pace,
    /// `update` always continues from the kept graph (tests, measurements).
    #[cfg(feature = "experiments")]
    always_resume: bool,
    /// How long a call may take before its solve stops ([`Engine::set_budget`]).
    budget: Option<Duration>,
}

impl CudaEngine {
    /// Opens the first CUDA device with the product's schedule, or says why it cannot.
    /// Never panics.
    pub fn new() -> Result<Self, EngineError> {
        Self::with_settings(CudaConfig::default())
    }

    /// Opens the first CUDA device with the given schedule settings.
    #[cfg(feature = "experiments")]
    pub fn with_config(config: CudaConfig) -> Result<Self, EngineError> {
        Self::with_settings(config)
    }

    fn with_settings(config: CudaConfig) -> Result<Self, EngineError> {
        let gpu = Gpu::get()?;
        // The square tiles' kernels now: a device that cannot run them is found here.
        PushRelabelKernels::for_tile_height(&gpu, TILE_HEIGHTS[0])?;
        let stream = gpu.new_stream()?;
        let event = || {
            gpu.context()
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(driver("creating an event"))
        };
        let (start, end) = (event()?, event()?);
        Ok(Self {
            gpu,
            stream,
            start,
            end,
            config,
            state: None,
            #[cfg(feature = "experiments")]
            details: CudaDetails::default(),
            pace: Pace::default(),
            #[cfg(feature = "experiments")]
            always_resume: false,
            budget: None,
        })
    }

    /// The schedule settings in use.
    #[cfg(feature = "experiments")]
    pub fn config(&self) -> CudaConfig {
        self.config
    }

    /// Changes the schedule settings for later calls.
    #[cfg(feature = "experiments")]
    pub fn set_config(&mut self, config: CudaConfig) {
        self.config = config;
    }

    /// Device-side counters of the last call.
    #[cfg(feature = "experiments")]
    pub fn details(&self) -> &CudaDetails {
        &self.details
    }

    /// Counters after each global relabel of the last call when it ran the persistent
    /// schedule (at most `LOG_ROWS`; empty otherwise), read from the device on request:
    /// critical-path cycles in global-relabel and discharge passes, active tiles, tile
    /// visits, steps, BFS tile relaxations, flow into t, relabels (all cumulative).
    #[cfg(feature = "experiments")]
    pub fn relabel_log(&self) -> Result<Vec<[u64; LOG_COLS]>, EngineError> {
        let rows = (self.details.global_relabels as usize).min(LOG_ROWS);
        let Some(state) = self.state.as_ref() else {
            return Ok(Vec::new());
        };
        if self.details.schedule != Schedule::Persistent || rows == 0 {
            return Ok(Vec::new());
        }
        let words = self
            .stream
            .clone_dtoh(&state.log.slice(0..rows * LOG_COLS))
            .map_err(driver("reading the relabel log"))?;
        Ok(words
            .chunks_exact(LOG_COLS)
            .map(|r| std::array::from_fn(|k| r[k]))
            .collect())
    }

    /// Solves `problem`, from scratch or, where `resume` and the kept residual graph has
    /// the same tiling, as a dynamic update of it.
    fn run(&mut self, problem: Input<'_>, resume: bool) -> Result<Solution, EngineError> {
        let called = Instant::now();
        let config = self.config;
        let gpu = self.gpu.clone();
        let sms = gpu.sm_count();
        // counted once, and only where a choice below depends on it
        let census = std::cell::OnceCell::new();
        let terminals = || *census.get_or_init(|| problem.terminals());
        let (width, height, connectivity) = problem.shape();
        let tile_h = match config.tile_height {
            0 => auto_tile_height(width, height, connectivity, sms, terminals),
            h => h,
        };
        let kernels = PushRelabelKernels::for_tile_height(&gpu, tile_h)?;
        let tiling = Tiling::new(width, height, connectivity, tile_h);
        let dirs = tiling.dirs;
        let coop = kernels.conn(dirs).coop_blocks;
        let stream = self.stream.clone();

        let t0 = Instant::now();
        let resume = resume && self.state.as_ref().is_some_and(|s| s.tiling == tiling);
        let state = state_for(&mut self.state, &stream, tiling)?;
        if resume {
            state.keep_as_old();
        }
        match problem {
            Input::Host(problem) => state.upload(&stream, problem)?,
            Input::Device(grid) => state.copy_from(&stream, grid)?,
        }
        let mut params = state.params(&stream);
        params.step_budget = match config.step_budget {
            0 => auto_step_budget(width, height, dirs, sms, terminals),
            b => b,
        };
        params.region_every = config.region_every;
        params.revisit_every = config.revisit_every;
        params.gr_rounds = match config.global_relabel_rounds {
            0 => auto_relabel_rounds(dirs, !few_square_tiles(width, height, sms), terminals),
            r => r,
        };
        params.gr_work_num = config.global_relabel_work;
        params.gr_rate_pct = config.relabel_rate_percent;
        params.gr_few_tiles = config.few_active_tiles;
        params.gr_few_rounds = config.few_active_rounds.max(1);
        params.max_rounds = config.max_rounds.max(1);
        params.concurrent = u32::from(config.concurrent);
        let persistent = config.schedule == Schedule::Persistent && coop > 0;
        // what is left of the budget when the solve starts (the persistent solve keeps it)
        params.budget_ns = match self.budget.filter(|_| persistent) {
            Some(budget) => budget.saturating_sub(called.elapsed()).as_nanos() as u64,
            None => NO_BUDGET,
        };
        params.nblocks = if persistent {
            coop.min(params.ntiles)
        } else {
            0
        };
        // the owners' ways where each persistent block has at most `limit` tiles, or on
        // energies of an object on a large background (see CudaConfig::owner_relabel_tiles)
        let owned = |limit: u32| {
            persistent
                && limit > 0
                && (u64::from(params.ntiles) <= u64::from(limit) * u64::from(params.nblocks)
                    || terminals().object())
        };
        params.gr_owners = u32::from(owned(config.owner_relabel_tiles));
        params.owned_discharge = u32::from(dirs == 4 && owned(config.owner_discharge_tiles));
        if persistent && dirs == 4 && params.owned_discharge == 0 {
            params.gr_rate_max = config.relabel_rate_rounds;
        }
        if persistent && dirs == 4 && tile_h == 32 && terminals().sparse() {
            params.gr_cap_margin = config.relabel_cap_margin;
        }
        let sums = if resume {
            schedule::launch_reparam(&kernels, &stream, &params, dirs)?;
            let sums = stream
                .clone_dtoh(&state.sums)
                .map_err(driver("reading the update's sums"))?;
            Some(sums).filter(|s| s[SUM_OVERFLOW] == 0)
        } else {
            None
        };
        if resume && sums.is_none() {
            // an offset would not fit 32 bits: this frame is solved afresh
            state.clear_counters(&stream)?;
        }
        if sums.is_none() {
            schedule::launch_init(&kernels, &stream, &params, dirs)?;
        }
        stream.synchronize().map_err(driver("upload"))?;
        let upload_ms = t0.elapsed().as_secs_f64() * 1e3;

        self.start.record(&stream).map_err(driver("timing event"))?;
        let outcome = if persistent {
            schedule::run_persistent(&kernels, &stream, &params, dirs)?
        } else {
            schedule::run_host_loop(&kernels, &stream, state, &params, dirs)?
        };
        self.end.record(&stream).map_err(driver("timing event"))?;
        let solve_ms = self.start.elapsed_ms(&self.end).map_err(driver("solve"))? as f64;

        let t2 = Instant::now();
        let mut ctl = Ctl::from_words(
            &stream
                .clone_dtoh(&state.ctl)
                .map_err(driver("reading counters"))?,
        );
        // the host loop keeps these counters itself, and ends only with an answer
        let status = match outcome.host_counts {
            Some((rounds, grs, bfs_rounds)) => {
                ctl.rounds = rounds;
                ctl.global_relabels = grs;
                ctl.bfs_rounds = bfs_rounds;
                Ok(Status::Done)
            }
            None => Status::from_code(ctl.status),
        };
        match status {
            Ok(Status::Done) => {}
            Ok(Status::Hang) => return Err(KernelFailure::Stalled.into()),
            Ok(Status::RoundCap) => return Err(KernelFailure::RoundCap(params.max_rounds).into()),
            Ok(Status::Running) => return Err(KernelFailure::Status(ctl.status).into()),
            Err(code) => return Err(KernelFailure::Status(code).into()),
        }
        let stopped = if ctl.stopped != 0 {
            schedule::launch_cut(&kernels, &stream, &params, dirs)?;
            let words = stream
                .clone_dtoh(&state.ctl)
                .map_err(driver("reading the cut's capacity"))?;
            Some(Ctl::from_words(&words).cut_capacity)
        } else {
            None
        };
        let mask = stream
            .clone_dtoh(&state.mask)
            .map_err(driver("reading the cut"))?;
        let counts = stream
            .clone_dtoh(&state.activity)
            .map_err(driver("reading activity"))?;
        let readback_ms = t2.elapsed().as_secs_f64() * 1e3;

        let ntiles = tiling.ntiles();
        let sweeps = (ctl.tile_loads as f64 + ctl.bfs_tiles as f64) / ntiles as f64
            + 2.0 * ctl.global_relabels as f64
            + 1.0;
        #[cfg(feature = "experiments")]
        {
            self.details = CudaDetails {
                schedule: if persistent {
                    Schedule::Persistent
                } else {
                    Schedule::HostLoop
                },
                blocks: params.nblocks,
                compile_ms: kernels.compile_ms,
                tiles: ntiles,
                tile_height: tile_h,
                step_budget: params.step_budget,
                rounds: ctl.rounds,
                global_relabels: ctl.global_relabels,
                bfs_rounds: if persistent {
                    ctl.global_relabels
                } else {
                    ctl.bfs_rounds
                },
                tile_visits: ctl.tile_visits,
                tile_loads: ctl.tile_loads,
                bfs_tiles: ctl.bfs_tiles,
                steps: ctl.steps,
                bfs_iterations: ctl.bfs_iters,
                relabels: ctl.relabels,
                #[cfg(feature = "experiments")]
                discharge_cycles: ctl.cyc_discharge,
                #[cfg(feature = "experiments")]
                bfs_cycles: ctl.cyc_bfs,
                #[cfg(feature = "experiments")]
                path_cycles: (ctl.path_bfs, ctl.path_discharge),
                #[cfg(feature = "experiments")]
                wait_cycles: (ctl.bfs_wait, ctl.barrier_cycles),
                owner_relabel: params.gr_owners != 0,
                queue_takes: ctl.bfs_pops,
                capped_relabels: ctl.gr_capped,
                sweeps,
            };
        }
        let stats = SolveStats {
            upload_ms,
            solve_ms,
            readback_ms,
            iterations: ctl.rounds as u64,
            engine_bytes: state.bytes,
            dynamic: sums.is_some(),
            changed_arcs: sums.as_ref().map_or(0, |s| s[SUM_CHANGED]),
            activity: Some(BlockActivity {
                block_width: TILE_W,
                block_height: tile_h,
                columns: tiling.tiles_x,
                rows: tiling.tiles_y,
                counts,
            }),
            gpu: Some(GpuSolveStats {
                global_relabels: ctl.global_relabels as u64,
                launches: outcome.launches + 1,
                sweeps,
                memory_floor_ms: gpu
                    .copy_bandwidth(&stream)
                    .map(|bandwidth| sweeps * sweep_ms(&tiling, bandwidth)),
            }),
            stopped: None,
        };
        // the offsets added the same constant to every cut (pr_reparam*)
        let offsets = sums.as_ref().map_or(0, |s| s[SUM_OFFSET]);
        let (flow, stats) = match stopped {
            // short of the maximum, the flow less the offsets may be below zero: still
            // a lower bound of the maximum flow
            Some(cut) => {
                let flow = ctl.sink_flow.saturating_sub(offsets);
                let stopped = Some(Certificate { flow, cut });
                (flow, SolveStats { stopped, ..stats })
            }
            None => (ctl.sink_flow.wrapping_sub(offsets), stats),
        };
        Ok(Solution {
            flow,
            mask: Mask {
                width,
                height,
                data: mask,
            },
            stats,
        })
    }
}

impl CudaEngine {
    fn call(&mut self, problem: Input<'_>, resume: bool) -> Result<Solution, EngineError> {
        let shape = self.state.as_ref().map(|s| s.tiling);
        let start = Instant::now();
        let result = self.run(problem, resume);
        match &result {
            Ok(solution) => {
                if self.state.as_ref().map(|s| s.tiling) != shape {
                    self.pace.reset();
                }
                let ms = start.elapsed().as_secs_f64() * 1e3;
                self.pace.record(solution.stats.dynamic, ms);
            }
            // a failed solve may leave the arrays half-written: start afresh next time
            Err(_) => self.state = None,
        }
        result
    }

    /// Makes `update` continue from the kept residual graph on every call (by default
    /// it solves afresh where that has been cheaper on this stream): for tests of the
    /// reparameterisation and for measuring what the reuse costs.
    #[cfg(feature = "experiments")]
    pub fn set_always_resume(&mut self, on: bool) {
        self.always_resume = on;
    }
}

impl CudaEngine {
    /// Whether `update` continues from the kept graph even where afresh is cheaper.
    fn always_resume(&self) -> bool {
        #[cfg(feature = "experiments")]
        return self.always_resume;
        #[cfg(not(feature = "experiments"))]
        false
    }
}

/// Milliseconds one pass reading and writing the residual state of `tiling`'s grid
/// (residuals, sink residuals, excesses and heights of every padded pixel) takes at
/// `bandwidth` bytes a second (reads and writes counted together).
fn sweep_ms(tiling: &Tiling, bandwidth: f64) -> f64 {
    let bytes_per_pixel = 4 * u64::from(tiling.dirs) + 4 + 8 + 4;
    2.0 * (tiling.padded_pixels() * bytes_per_pixel) as f64 / bandwidth * 1e3
}

/// Where a call's capacities are: on the host, or already on the device.
#[derive(Clone, Copy)]
enum Input<'a> {
    Host(&'a GridProblem),
    Device(&'a DeviceGrid),
}

impl Input<'_> {
    /// Width, height and connectivity of the grid.
    fn shape(&self) -> (u32, u32, Connectivity) {
        match self {
            Input::Host(p) => (p.width(), p.height(), p.connectivity()),
            Input::Device(g) => (g.width(), g.height(), g.connectivity()),
        }
    }

    /// The terminals' census: counted on the host, or as the energy kernels counted it.
    fn terminals(&self) -> Terminals {
        match self {
            Input::Host(p) => Terminals::of(p),
            Input::Device(g) => Terminals::from_census(g.census, g.pixels()),
        }
    }
}

/// The device arrays for `tiling`, reallocated when the grid's shape changed.
fn state_for<'a>(
    slot: &'a mut Option<DeviceState>,
    stream: &Arc<CudaStream>,
    tiling: Tiling,
) -> Result<&'a mut DeviceState, EngineError> {
    let state = match slot.take() {
        Some(state) if state.tiling == tiling => state,
        old => {
            drop(old); // free the old arrays before allocating new ones
            DeviceState::new(stream, tiling)?
        }
    };
    Ok(slot.insert(state))
}

impl Engine for CudaEngine {
    fn kind(&self) -> super::EngineKind {
        super::EngineKind::Cuda
    }

    fn description(&self) -> String {
        let (major, minor) = self.gpu.compute_capability();
        let compiled = match PushRelabelKernels::for_tile_height(&self.gpu, TILE_HEIGHTS[0]) {
            Ok(k) => format!(
                "; kernels compiled in {:.0} ms, loaded in {:.0} ms",
                k.compile_ms, k.load_ms
            ),
            Err(_) => String::new(),
        };
        format!(
            "CUDA push-relabel on {} (sm_{major}{minor}, {} SMs{compiled})",
            self.gpu.name(),
            self.gpu.sm_count()
        )
    }

    fn cut_side(&self) -> CutSide {
        CutSide::CannotReachSink
    }

    /// Honoured by the persistent solve (the product's schedule): it stops at the
    /// first whole global relabel past the budget that follows the call's first
    /// discharge rounds, with the cut of that relabel.
    fn set_budget(&mut self, budget: Option<Duration>) -> bool {
        self.budget = budget;
        true
    }

    fn solve(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        self.call(Input::Host(problem), false)
    }

    /// Reparameterises the kept residual graph on the device (`pr_reparam*`) and resumes
    /// the solve from it, where that has been the cheaper way on this stream (`maxflow/pace.rs`);
    /// afresh otherwise, and where nothing is kept, the tiling changed or an offset would
    /// overflow (`stats.dynamic` says which).
    fn update(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        let resume = self.always_resume() || self.pace.resume();
        self.call(Input::Host(problem), resume)
    }

    /// As `solve` or (with `resume`) `update`, on capacities the energy kernels left on
    /// the device: copied there device to device, never through the host.
    fn solve_device(
        &mut self,
        grid: &DeviceGrid,
        resume: bool,
    ) -> Option<Result<Solution, EngineError>> {
        let resume = resume && (self.always_resume() || self.pace.resume());
        Some(self.call(Input::Device(grid), resume))
    }

    fn has_stochastic(&self) -> bool {
        true
    }

    /// On: idle tiles are skipped and revisited every `revisit_every` rounds (the
    /// default period unless a custom one is set); off: every tile, every round.
    fn set_stochastic(&mut self, on: bool) {
        let every = &mut self.config.revisit_every;
        if !on {
            *every = 1;
        } else if *every == 1 {
            *every = CudaConfig::default().revisit_every;
        }
    }

    /// The mask `pr_mask` wrote for the last solution, on the engine's stream (none
    /// before the first solve or after a failed one).
    fn device_mask(&self) -> Option<DeviceMask<'_>> {
        let state = self.state.as_ref()?;
        let t = &state.tiling;
        Some(DeviceMask::new(
            &state.mask,
            &self.stream,
            t.width,
            t.height,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::{Tiling, sweep_ms};
    use crate::grid::Connectivity;

    #[test]
    fn a_sweep_reads_and_writes_the_padded_grids_state_once() {
        // 1920×1088 padded pixels of 32 bytes (4C: four residuals, sink residual,
        // excess, height), read and written; 8C adds 16 bytes a pixel.
        let four = Tiling::new(1920, 1080, Connectivity::Four, 32);
        assert!((sweep_ms(&four, 3e12) - 2.0 * 1920.0 * 1088.0 * 32.0 / 3e9).abs() < 1e-9);
        let eight = Tiling::new(1920, 1080, Connectivity::Eight, 32);
        assert!((sweep_ms(&eight, 3e12) / sweep_ms(&four, 3e12) - 1.5).abs() < 1e-12);
    }
}

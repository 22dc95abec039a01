//! Exact push-relabel max-flow on an NVIDIA GPU (CUDA Cuts on tiles).
//!
//! The residual graph lives on the device in a tiled layout (`layout`, `buffers`). Each
//! round discharges the active tiles of one colour at a time in shared memory, several
//! push/relabel steps per launch with region relabels inside the tile; an exact global
//! relabel (BFS from the sink, tile fixpoints looped on the device) runs periodically and
//! decides termination: when no pixel with excess can reach the sink the preflow is
//! maximum, and the pixels that cannot reach the sink are the source side of a minimum
//! cut (`CutSide::CannotReachSink`). The kernels (`kernels/*.cu`) are compiled once per
//! process with NVRTC. See `kernels/pushrelabel.cu` for the algorithm in detail and
//! `kernels/NOTES.md` for the measurements behind its schedule.

mod buffers;
mod kernels;
mod layout;
mod runtime;
mod schedule;
mod terminals;

pub use kernels::{KERNEL_SOURCES, KernelSource};
pub use layout::{LOG_COLS, LOG_ROWS, TILE_HEIGHTS, TILE_W, auto_tile_height, few_square_tiles};
pub use schedule::Schedule;
pub use terminals::Terminals;

use super::{BlockActivity, CutSide, Engine, EngineError, Solution, SolveStats};
use crate::grid::{GridProblem, Mask};
use buffers::{DeviceState, cuda_err};
use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, CudaStream};
use layout::{Ctl, SUM_CHANGED, SUM_OFFSET, SUM_OVERFLOW, Tiling, status};
use runtime::Runtime;
use serde::Serialize;
use std::sync::Arc;
use std::time::Instant;

/// Tuning of the CUDA engine's schedule. Every setting keeps the result exact; they
/// only move work between kinds of passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct CudaConfig {
    /// Persistent kernel or one launch per pass.
    pub schedule: Schedule,
    /// Discharge all tiles at once each round (halo heights may be stale) instead of one
    /// checkerboard colour at a time (2 phases per round, frozen halos but for 8C corners).
    pub concurrent: bool,
    /// Push/relabel steps a tile may run per visit before it is written back; 0 picks
    /// by grid size ([`auto_step_budget`]).
    pub step_budget: u32,
    /// Region relabel (BFS inside the tile) after this many steps in which no flow left
    /// the tile (0: only at the start of a visit).
    pub region_every: u32,
    /// Stochastic cuts: tiles without active pixels are skipped, and all tiles are
    /// visited every this many rounds anyway (0: never; 1: stochastic cuts off, every
    /// tile is visited every round).
    pub revisit_every: u32,
    /// Global relabel after at most this many discharge rounds; 0 picks by connectivity
    /// ([`auto_relabel_rounds`]).
    pub global_relabel_rounds: u32,
    /// ... or once local relabels since the last one exceed pixels × this / 16.
    pub global_relabel_work: u32,
    /// Persistent solve of a 4C grid whose rounds go by phases (many tiles a block):
    /// after `global_relabel_rounds`, further rounds (at most this many in all; 0: none)
    /// while the last round's flow into t came at least [`Self::relabel_rate_percent`] %
    /// as fast as the flow since the global relabel began, its own time included (a
    /// relabel is due once more rounds would lower the long-run rate). Large seed disks
    /// are 7–10 % faster than with fixed rounds; measurements in `kernels/NOTES.md`.
    pub relabel_rate_rounds: u32,
    /// See [`Self::relabel_rate_rounds`].
    pub relabel_rate_percent: u32,
    /// Where tile owners run the discharge rounds ([`Self::owner_discharge_tiles`]): after
    /// a global relabel that finds at most this many active tiles,
    /// [`Self::few_active_rounds`] rounds before the next one instead of
    /// `global_relabel_rounds` (0: never), so that a small tail gets more rounds a relabel
    /// (seeds_disk 10 % faster); measurements in `kernels/NOTES.md`.
    pub few_active_tiles: u32,
    /// See [`Self::few_active_tiles`].
    pub few_active_rounds: u32,
    /// Safety cap on discharge rounds; reaching it is an error, never an answer.
    pub max_rounds: u32,
    /// Tile height in pixels, one of [`TILE_HEIGHTS`]; 0 picks by grid size and kind of
    /// energy ([`auto_tile_height`]).
    pub tile_height: u32,
    /// Persistent solve: a global relabel hands a tile that must relax again to the block
    /// that owns it (a wake it polls for) where the grid has at most this many tiles per
    /// block, else to whichever block takes it from a shared queue (0: always the
    /// queue). Owners cut the hand-over's round trips, which small grids wait on; on
    /// large ones a busy owner holds up its other tiles. Energies of an object on a
    /// large background ([`Terminals::lopsided`], not seeded), whose work stays near the
    /// object, take the owners' ways at any size (with a nonzero limit; on 4C for the
    /// rounds too, and see [`auto_step_budget`] for 8C): large generated objects 20–30 %
    /// faster; measurements in `kernels/NOTES.md`.
    pub owner_relabel_tiles: u32,
    /// Persistent solve, coloured, 4-connected: a tile's discharge visit waits only for
    /// its edge neighbours' visits before it (each block visits the tiles it owns) where
    /// the grid has at most this many tiles per block, instead of a grid barrier after
    /// each phase (0: always the barriers). The shared 4C instances are 6–7 % faster; 8C
    /// ones are up to 7 % slower (they keep the barriers), and so are grids of many tiles
    /// per block, where a block's busy tile holds up its others. Where owners run the
    /// relabels as well, on half-height tiles, each global relabel follows the rounds with
    /// no barrier either: a tile relaxes once its edge neighbours are done. Measurements in
    /// `kernels/NOTES.md`.
    pub owner_discharge_tiles: u32,
    /// Persistent solve of a seeded 4C energy ([`Terminals::sparse`]) in square tiles: a
    /// global relabel after one that left excess stops its BFS this many levels above the
    /// highest height of that excess, giving the pixels beyond a lower bound of their
    /// distance; one that leaves excess at that bound, or finds none, is followed by a
    /// whole one, and only a whole one ends the solve (0: every relabel whole). In the
    /// seed disks' tail the excess sits at a third to two thirds of the highest height, and
    /// a whole relabel's wave runs on through the detours beyond: large seed disks are 5–6 %
    /// faster (the kernels' `relabel_cap`; measurements in `kernels/NOTES.md`).
    pub relabel_cap_margin: u32,
}

impl Default for CudaConfig {
    fn default() -> Self {
        Self {
            schedule: Schedule::Persistent,
            concurrent: false,
            step_budget: 0,
            region_every: 0,
            revisit_every: 8,
            global_relabel_rounds: 0,
            global_relabel_work: 16,
            relabel_rate_rounds: 8,
            relabel_rate_percent: 150,
            few_active_tiles: 8,
            few_active_rounds: 4,
            max_rounds: 1 << 20,
            tile_height: 0,
            owner_relabel_tiles: 4,
            owner_discharge_tiles: 4,
            relabel_cap_margin: 64,
        }
    }
}

/// Steps per tile visit for a `width`×`height` grid of `dirs` arcs per pixel on a
/// device of `sms` multiprocessors, given its `terminals`. Where the grid fills the
/// device only a few times over ([`few_square_tiles`]), shorter visits let tile borders
/// exchange flow and heights more often: 32 steps, 24 for an object on a large
/// background ([`Terminals::lopsided`], not seeded), whose work stays near the object.
/// On large grids longer visits save passes: 64 steps, but 32 for seeded 4C energies
/// ([`Terminals::sparse`]), whose flow travels hundreds of pixels tile to tile, and for
/// 8C energies that are not seeded (with 4 rounds a relabel,
/// [`auto_relabel_rounds`]). Measurements in `kernels/NOTES.md`.
pub fn auto_step_budget(
    width: u32,
    height: u32,
    dirs: u32,
    sms: u32,
    terminals: impl FnOnce() -> Terminals,
) -> u32 {
    let t = terminals();
    if few_square_tiles(width, height, sms) {
        if t.object() { 24 } else { 32 }
    } else if (dirs == 4 && t.sparse()) || (dirs == 8 && !t.sparse()) {
        32
    } else {
        64
    }
}

/// Discharge rounds between global relabels on a grid of `dirs` arcs per pixel, given
/// whether it fills the device many times over (not [`few_square_tiles`]) and its
/// `terminals`: 2 on 4C, 3 on 8C, and 4 on large 8C grids that are not seeded (with
/// visits of 32 steps, [`auto_step_budget`]). Measurements in `kernels/NOTES.md`.
pub fn auto_relabel_rounds(
    dirs: u32,
    many_tiles: bool,
    terminals: impl FnOnce() -> Terminals,
) -> u32 {
    if dirs == 4 {
        2
    } else if many_tiles && !terminals().sparse() {
        4
    } else {
        3
    }
}

/// What the last call did on the device, beyond [`SolveStats`].
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
    pub discharge_cycles: u64,
    /// SM cycles spent relaxing BFS tiles, summed over tiles.
    pub bfs_cycles: u64,
    /// Critical path of the persistent solve, in block 0's SM cycles from barrier to
    /// barrier: spent in global-relabel passes, and in discharge passes (where a
    /// relabel follows the rounds with no barrier, split where block 0 ends its rounds).
    pub path_cycles: (u64, u64),
    /// Persistent solve: cycles blocks waited for work in global-relabel passes, and
    /// spent in grid barriers (both summed over blocks).
    pub wait_cycles: (u64, u64),
    /// Persistent solve: whether global relabels handed tiles to their owner blocks
    /// ([`CudaConfig::owner_relabel_tiles`]) rather than through the queue.
    pub owner_relabel: bool,
    /// Persistent solve: tiles taken from the global relabel's queue, or woken tiles an
    /// owner took (with each block's last, empty take).
    pub queue_takes: u64,
    /// Persistent solve: global relabels whose BFS stopped at a cap
    /// ([`CudaConfig::relabel_cap_margin`]).
    pub capped_relabels: u32,
    /// Passes over the whole grid's memory: tile loads and BFS tiles over the tile
    /// count, plus the full-grid passes of each global relabel (2) and the output (1).
    pub sweeps: f64,
}

/// Push-relabel max-flow on the GPU.
pub struct CudaEngine {
    rt: Arc<Runtime>,
    stream: Arc<CudaStream>,
    start: CudaEvent,
    end: CudaEvent,
    config: CudaConfig,
    state: Option<DeviceState>,
    details: CudaDetails,
}

impl CudaEngine {
    /// Opens the first CUDA device with the default schedule, or says why it cannot.
    pub fn new() -> Result<Self, EngineError> {
        Self::with_config(CudaConfig::default())
    }

    /// Opens the first CUDA device with the given schedule settings.
    pub fn with_config(config: CudaConfig) -> Result<Self, EngineError> {
        let rt = runtime::runtime()?;
        let stream = rt.ctx.new_stream().map_err(cuda_err("creating a stream"))?;
        let event = || {
            rt.ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(cuda_err("creating an event"))
        };
        let (start, end) = (event()?, event()?);
        Ok(Self {
            rt,
            stream,
            start,
            end,
            config,
            state: None,
            details: CudaDetails::default(),
        })
    }

    /// The schedule settings in use.
    pub fn config(&self) -> CudaConfig {
        self.config
    }

    /// Changes the schedule settings for later calls.
    pub fn set_config(&mut self, config: CudaConfig) {
        self.config = config;
    }

    /// Device-side counters of the last call.
    pub fn details(&self) -> &CudaDetails {
        &self.details
    }

    /// Counters after each global relabel of the last call when it ran the persistent
    /// schedule (at most `LOG_ROWS`; empty otherwise), read from the device on request:
    /// critical-path cycles in global-relabel and discharge passes, active tiles, tile
    /// visits, steps, BFS tile relaxations, flow into t, relabels (all cumulative).
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
            .map_err(cuda_err("reading the relabel log"))?;
        Ok(words
            .chunks_exact(LOG_COLS)
            .map(|r| std::array::from_fn(|k| r[k]))
            .collect())
    }

    /// Solves `problem`, from scratch or, where `resume` and the kept residual graph has
    /// the same tiling, as a dynamic update of it.
    fn run(&mut self, problem: &GridProblem, resume: bool) -> Result<Solution, EngineError> {
        let config = self.config;
        let rt = self.rt.clone();
        // counted once, and only where a choice below depends on it
        let census = std::cell::OnceCell::new();
        let terminals = || *census.get_or_init(|| Terminals::of(problem));
        let tile_h = match config.tile_height {
            0 => auto_tile_height(
                problem.width(),
                problem.height(),
                problem.connectivity(),
                rt.sm_count,
                terminals,
            ),
            h => h,
        };
        let kernels = rt.kernels(tile_h)?;
        let tiling = Tiling::new(
            problem.width(),
            problem.height(),
            problem.connectivity(),
            tile_h,
        );
        let dirs = tiling.dirs;
        let coop = kernels.coop_blocks[usize::from(dirs == 8)];
        let stream = self.stream.clone();

        let t0 = Instant::now();
        let resume = resume && self.state.as_ref().is_some_and(|s| s.tiling == tiling);
        let state = state_for(&mut self.state, &stream, tiling)?;
        if resume {
            state.upload_next(&stream, problem)?;
        } else {
            state.upload(&stream, problem)?;
        }
        let mut params = state.params(&stream);
        params.step_budget = match config.step_budget {
            0 => auto_step_budget(
                problem.width(),
                problem.height(),
                dirs,
                rt.sm_count,
                terminals,
            ),
            b => b,
        };
        params.region_every = config.region_every;
        params.revisit_every = config.revisit_every;
        params.gr_rounds = match config.global_relabel_rounds {
            0 => auto_relabel_rounds(
                dirs,
                !few_square_tiles(problem.width(), problem.height(), rt.sm_count),
                terminals,
            ),
            r => r,
        };
        params.gr_work_num = config.global_relabel_work;
        params.gr_rate_pct = config.relabel_rate_percent;
        params.gr_few_tiles = config.few_active_tiles;
        params.gr_few_rounds = config.few_active_rounds.max(1);
        params.max_rounds = config.max_rounds.max(1);
        params.concurrent = u32::from(config.concurrent);
        let persistent = config.schedule == Schedule::Persistent && coop > 0;
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
                .map_err(cuda_err("reading the update's sums"))?;
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
        stream.synchronize().map_err(cuda_err("upload"))?;
        let upload_ms = t0.elapsed().as_secs_f64() * 1e3;

        self.start
            .record(&stream)
            .map_err(cuda_err("timing event"))?;
        let outcome = if persistent {
            schedule::run_persistent(&kernels, &stream, &params, dirs)?
        } else {
            schedule::run_host_loop(&kernels, &stream, state, &params, dirs)?
        };
        self.end.record(&stream).map_err(cuda_err("timing event"))?;
        let solve_ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(cuda_err("solve"))? as f64;

        let t2 = Instant::now();
        let mut ctl = Ctl::from_words(
            &stream
                .clone_dtoh(&state.ctl)
                .map_err(cuda_err("reading counters"))?,
        );
        if let Some((rounds, grs, bfs_rounds)) = outcome.host_counts {
            ctl.rounds = rounds;
            ctl.global_relabels = grs;
            ctl.bfs_rounds = bfs_rounds;
            ctl.status = status::DONE;
        }
        match ctl.status {
            status::DONE => {}
            status::HANG => {
                return Err(EngineError::Cuda(
                    "the persistent solve stalled at a grid barrier".into(),
                ));
            }
            status::ROUND_CAP => {
                return Err(EngineError::Cuda(format!(
                    "no convergence within {} discharge rounds",
                    params.max_rounds
                )));
            }
            other => {
                return Err(EngineError::Cuda(format!(
                    "the solve ended with status {other}"
                )));
            }
        }
        let mask = stream
            .clone_dtoh(&state.mask)
            .map_err(cuda_err("reading the cut"))?;
        let counts = stream
            .clone_dtoh(&state.activity)
            .map_err(cuda_err("reading activity"))?;
        let readback_ms = t2.elapsed().as_secs_f64() * 1e3;

        let ntiles = tiling.ntiles();
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
            discharge_cycles: ctl.cyc_discharge,
            bfs_cycles: ctl.cyc_bfs,
            path_cycles: (ctl.path_bfs, ctl.path_discharge),
            wait_cycles: (ctl.bfs_wait, ctl.barrier_cycles),
            owner_relabel: params.gr_owners != 0,
            queue_takes: ctl.bfs_pops,
            capped_relabels: ctl.gr_capped,
            sweeps: (ctl.tile_loads as f64 + ctl.bfs_tiles as f64) / ntiles as f64
                + 2.0 * ctl.global_relabels as f64
                + 1.0,
        };
        let stats = SolveStats {
            upload_ms,
            solve_ms,
            readback_ms,
            iterations: ctl.rounds as u64,
            global_relabels: ctl.global_relabels as u64,
            launches: outcome.launches + 1,
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
            sweeps: Some(self.details.sweeps),
            memory_floor_ms: rt
                .copy_bandwidth(&stream)
                .map(|bandwidth| self.details.sweeps * sweep_ms(&tiling, bandwidth)),
        };
        Ok(Solution {
            // the offsets added the same constant to every cut (pr_reparam*)
            flow: ctl
                .sink_flow
                .wrapping_sub(sums.as_ref().map_or(0, |s| s[SUM_OFFSET])),
            mask: Mask {
                width: problem.width(),
                height: problem.height(),
                data: mask,
            },
            stats,
        })
    }
}

impl CudaEngine {
    fn call(&mut self, problem: &GridProblem, resume: bool) -> Result<Solution, EngineError> {
        let result = self.run(problem, resume);
        if result.is_err() {
            // a failed solve may leave the arrays half-written: start afresh next time
            self.state = None;
        }
        result
    }
}

/// Milliseconds one pass reading and writing the residual state of `tiling`'s grid
/// (residuals, sink residuals, excesses and heights of every padded pixel) takes at
/// `bandwidth` bytes a second (reads and writes counted together).
fn sweep_ms(tiling: &Tiling, bandwidth: f64) -> f64 {
    let bytes_per_pixel = 4 * u64::from(tiling.dirs) + 4 + 8 + 4;
    2.0 * (tiling.padded_pixels() * bytes_per_pixel) as f64 / bandwidth * 1e3
}

/// The device arrays for `tiling`, reallocated when the grid's shape changed.
fn state_for<'a>(
    slot: &'a mut Option<DeviceState>,
    stream: &Arc<CudaStream>,
    tiling: Tiling,
) -> Result<&'a mut DeviceState, EngineError> {
    if slot.as_ref().map(|s| s.tiling) != Some(tiling) {
        *slot = None; // free the old arrays before allocating new ones
        *slot = Some(DeviceState::new(stream, tiling)?);
    }
    slot.as_mut()
        .ok_or_else(|| EngineError::Cuda("device state missing".into()))
}

impl Engine for CudaEngine {
    fn kind(&self) -> super::EngineKind {
        super::EngineKind::Cuda
    }

    fn description(&self) -> String {
        let (major, minor) = self.rt.compute_capability;
        let compiled = match self.rt.kernels(TILE_HEIGHTS[0]) {
            Ok(k) => format!(
                "; kernels compiled in {:.0} ms, loaded in {:.0} ms",
                k.compile_ms, k.load_ms
            ),
            Err(_) => String::new(),
        };
        format!(
            "CUDA push-relabel on {} (sm_{major}{minor}, {} SMs{compiled})",
            self.rt.device_name, self.rt.sm_count
        )
    }

    fn cut_side(&self) -> CutSide {
        CutSide::CannotReachSink
    }

    fn solve(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        self.call(problem, false)
    }

    /// Reparameterises the kept residual graph on the device (`pr_reparam*`) and resumes
    /// the solve from it; afresh where nothing is kept, the tiling changed or an offset
    /// would overflow (`stats.dynamic` says which).
    fn update(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        self.call(problem, true)
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
}

#[cfg(test)]
mod tests {
    use super::{Terminals, Tiling, auto_relabel_rounds, auto_step_budget, sweep_ms};
    use crate::grid::Connectivity;

    #[test]
    fn a_sweep_reads_and_writes_the_padded_grids_state_once() {
        // 1920×1088 padded pixels of 32 bytes (4C: four residuals, sink residual,
        // excess, height), read and written at 3 TB/s: 44.6 µs, as the floor
        // of ~20 µs a one-way pass over ~60 MB says; 8C adds 16 bytes a pixel.
        let four = Tiling::new(1920, 1080, Connectivity::Four, 32);
        assert!((sweep_ms(&four, 3e12) - 2.0 * 1920.0 * 1088.0 * 32.0 / 3e9).abs() < 1e-9);
        let eight = Tiling::new(1920, 1080, Connectivity::Eight, 32);
        assert!((sweep_ms(&eight, 3e12) / sweep_ms(&four, 3e12) - 1.5).abs() < 1e-12);
    }

    /// Terminals of a 1920×1080 grid: `any` pixels with one, `supplies` of them fed.
    fn census(any: usize, supplies: usize) -> Terminals {
        Terminals {
            any,
            supplies,
            deficits: any - supplies,
            pixels: 1920 * 1080,
        }
    }

    #[test]
    fn visits_follow_the_grid_size_and_the_kind_of_energy() {
        let image = census(1_800_000, 800_000);
        let object = census(1_800_000, 100_000);
        let seeded = census(40_000, 10_000);
        // 80, 300 and 528 square tiles; 2,040
        for t in [image, seeded] {
            assert_eq!(auto_step_budget(320, 240, 4, 132, || t), 32);
            assert_eq!(auto_step_budget(640, 480, 8, 132, || t), 32);
            assert_eq!(auto_step_budget(32 * 44, 32 * 12, 4, 132, || t), 32);
        }
        assert_eq!(auto_step_budget(640, 480, 4, 132, || object), 24);
        assert_eq!(auto_step_budget(1920, 1080, 4, 132, || image), 64);
        assert_eq!(auto_step_budget(1920, 1080, 4, 132, || object), 64);
        assert_eq!(auto_step_budget(1920, 1080, 4, 132, || seeded), 32);
        assert_eq!(auto_step_budget(1920, 1080, 8, 132, || seeded), 64);
        assert_eq!(auto_step_budget(1920, 1080, 8, 132, || image), 32);
        assert_eq!(auto_step_budget(1920, 1080, 8, 132, || object), 32);
    }

    #[test]
    fn large_unseeded_8c_grids_take_more_rounds_a_relabel() {
        let (image, object, seeded) = (
            census(1_800_000, 800_000),
            census(1_800_000, 100_000),
            census(40_000, 10_000),
        );
        for t in [image, object, seeded] {
            assert_eq!(auto_relabel_rounds(4, true, || t), 2);
            assert_eq!(auto_relabel_rounds(8, false, || t), 3);
        }
        assert_eq!(auto_relabel_rounds(8, true, || image), 4);
        assert_eq!(auto_relabel_rounds(8, true, || object), 4);
        assert_eq!(auto_relabel_rounds(8, true, || seeded), 3);
    }
}

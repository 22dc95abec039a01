//! The two ways of driving the kernels: one persistent cooperative launch that runs the
//! whole solve on the device, or the plain scheme of one launch per pass with the host
//! reading the counters to decide what comes next.

use super::buffers::DeviceState;
use super::kernels::PushRelabelKernels;
use super::layout::{Ctl, KernelFailure, MAX_COLOURS, Params};
use crate::gpu::driver;
use crate::maxflow::EngineError;
use cudarc::driver::{CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use serde::Serialize;
use std::sync::Arc;

/// How the solve loop is driven.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Schedule {
    /// One cooperative launch: every block loops over tiles and meets the others at
    /// grid barriers; termination is decided on the device.
    #[default]
    Persistent,
    /// One launch per pass and a blocking read of the counters after each BFS round and
    /// each discharge round (the plain scheme, for comparison and as a fallback).
    HostLoop,
}

fn per_tile(k: &PushRelabelKernels, blocks: u32, smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks.max(1), 1, 1),
        block_dim: (k.block_threads, 1, 1),
        shared_mem_bytes: smem,
    }
}

/// Builds the tiled residual graph from the uploaded capacities (`pr_init*`).
pub fn launch_init(
    k: &PushRelabelKernels,
    stream: &Arc<CudaStream>,
    params: &Params,
    dirs: u32,
) -> Result<(), EngineError> {
    launch_on_tiles(&k.conn(dirs).init, k, stream, params, "init kernel")
}

/// Turns the kept residual graph into a preflow of the uploaded capacities
/// (`pr_reparam*`), the start of a dynamic update; `old_*` hold the last solve's.
pub fn launch_reparam(
    k: &PushRelabelKernels,
    stream: &Arc<CudaStream>,
    params: &Params,
    dirs: u32,
) -> Result<(), EngineError> {
    launch_on_tiles(
        &k.conn(dirs).reparam,
        k,
        stream,
        params,
        "reparameterisation kernel",
    )
}

/// Launches `f`, which takes only `params`, with one block per tile.
fn launch_on_tiles(
    f: &CudaFunction,
    k: &PushRelabelKernels,
    stream: &Arc<CudaStream>,
    params: &Params,
    what: &'static str,
) -> Result<(), EngineError> {
    // SAFETY: `params` points at arrays of the shape it describes (DeviceState::params).
    unsafe {
        stream
            .launch_builder(f)
            .arg(params)
            .launch(per_tile(k, params.ntiles, 0))
    }
    .map_err(driver(what))?;
    Ok(())
}

/// What a schedule reports besides the device counters.
#[derive(Clone, Copy, Debug, Default)]
pub struct Outcome {
    /// Kernel launches made.
    pub launches: u64,
    /// Counters the host loop keeps itself (rounds, global relabels, BFS rounds); the
    /// persistent kernel keeps them in `Ctl`.
    pub host_counts: Option<(u32, u32, u32)>,
}

/// Runs the persistent solve with `params.nblocks` co-resident blocks.
pub fn run_persistent(
    k: &PushRelabelKernels,
    stream: &Arc<CudaStream>,
    params: &Params,
    dirs: u32,
) -> Result<Outcome, EngineError> {
    let conn = k.conn(dirs);
    // SAFETY: as above; all `nblocks` blocks fit on the device at once (checked by the
    // caller against the occupancy), which the grid barriers need.
    unsafe {
        stream
            .launch_builder(&conn.solve)
            .arg(params)
            .launch_cooperative(per_tile(k, params.nblocks, conn.tile_smem))
    }
    .map_err(driver("persistent solve kernel"))?;
    Ok(Outcome {
        launches: 1,
        host_counts: None,
    })
}

/// Adds the capacity of the cut in the mask to `Ctl::cut_capacity` (`pr_cut*`): the
/// certificate of a solve stopped at its budget.
pub fn launch_cut(
    k: &PushRelabelKernels,
    stream: &Arc<CudaStream>,
    params: &Params,
    dirs: u32,
) -> Result<(), EngineError> {
    let pixels = params.width * params.height;
    let blocks = pixels.div_ceil(k.block_threads).clamp(1, CUT_BLOCKS);
    let cfg = LaunchConfig {
        grid_dim: (blocks, 1, 1),
        block_dim: (k.block_threads, 1, 1),
        shared_mem_bytes: 0,
    };
    // SAFETY: `params` points at arrays of the shape it describes, the mask written.
    unsafe {
        stream
            .launch_builder(&k.conn(dirs).cut)
            .arg(params)
            .launch(cfg)
    }
    .map_err(driver("cut capacity kernel"))?;
    Ok(())
}

/// Blocks of the cut capacity's launch at most (each strides over the pixels).
const CUT_BLOCKS: u32 = 1024;

fn read_ctl(stream: &Arc<CudaStream>, state: &DeviceState) -> Result<Ctl, EngineError> {
    let words = stream
        .clone_dtoh(&state.ctl)
        .map_err(driver("reading counters"))?;
    Ok(Ctl::from_words(&words))
}

/// Runs the plain host-driven schedule.
pub fn run_host_loop(
    k: &PushRelabelKernels,
    stream: &Arc<CudaStream>,
    state: &DeviceState,
    params: &Params,
    dirs: u32,
) -> Result<Outcome, EngineError> {
    let conn = k.conn(dirs);
    let (gr_round, discharge, mask) = (&conn.gr_round, &conn.discharge, &k.mask);
    let tile_smem = conn.tile_smem;
    let bfs_smem = k.bfs_smem;
    let nt = params.ntiles;
    let mut launches = 0u64;
    let (mut rounds, mut global_relabels, mut bfs_rounds) = (0u32, 0u32, 0u32);
    // SAFETY (all launches below): `params` describes the arrays it points at, and each
    // kernel gets the scalar arguments its signature declares.
    loop {
        let mut prev = read_ctl(stream, state)?.gr_changes;
        for round in 0u32.. {
            unsafe {
                stream
                    .launch_builder(gr_round)
                    .arg(params)
                    .arg(&round)
                    .launch(per_tile(k, nt, bfs_smem))
            }
            .map_err(driver("global relabel round"))?;
            launches += 1;
            bfs_rounds += 1;
            let changes = read_ctl(stream, state)?.gr_changes;
            if changes == prev {
                break;
            }
            prev = changes;
        }
        global_relabels += 1;
        let ctl = read_ctl(stream, state)?;
        if ctl.active_tiles == 0 {
            break;
        }
        let work0 = ctl.relabels;
        let work_cap = params.npix as u64 * params.gr_work_num as u64 / 16;
        let mut since = 0u32;
        loop {
            let revisit = u32::from(
                params.revisit_every != 0
                    && rounds % params.revisit_every == params.revisit_every - 1,
            );
            let region_first = u32::from(since > 0);
            let phases = if params.concurrent != 0 {
                1
            } else {
                MAX_COLOURS
            };
            for phase in 0..phases {
                let (first, count) = if params.concurrent != 0 {
                    (0, nt)
                } else {
                    (
                        params.colour_start[phase],
                        params.colour_start[phase + 1] - params.colour_start[phase],
                    )
                };
                if count == 0 {
                    continue;
                }
                unsafe {
                    stream
                        .launch_builder(discharge)
                        .arg(params)
                        .arg(&first)
                        .arg(&revisit)
                        .arg(&region_first)
                        .launch(per_tile(k, count, tile_smem))
                }
                .map_err(driver("discharge kernel"))?;
                launches += 1;
            }
            rounds += 1;
            since += 1;
            let ctl = read_ctl(stream, state)?;
            if rounds >= params.max_rounds {
                return Err(KernelFailure::RoundCap(params.max_rounds).into());
            }
            let idle = ctl.active_tiles == 0 && ctl.mail_tiles == 0;
            if idle || since >= params.gr_rounds || ctl.relabels - work0 > work_cap {
                break;
            }
        }
    }
    unsafe {
        stream
            .launch_builder(mask)
            .arg(params)
            .launch(per_tile(k, nt, 0))
    }
    .map_err(driver("mask kernel"))?;
    launches += 1;
    Ok(Outcome {
        launches,
        host_counts: Some((rounds, global_relabels, bfs_rounds)),
    })
}

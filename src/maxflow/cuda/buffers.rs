//! Device memory of one grid shape: the residual graph in the tiled layout, the per-tile
//! flags, the counters and the row-major input and output arrays.

use super::layout::{
    CTL_WORDS, MAIL_SLOTS, MAX_COLOURS, MAX_PIXELS, NO_BUDGET, Params, REPARAM_SUMS, Tiling,
};
#[cfg(feature = "experiments")]
use super::layout::{LOG_COLS, LOG_ROWS};
use crate::gpu::{DeviceGrid, driver};
use crate::grid::GridProblem;
use crate::maxflow::{EngineError, EngineKind};
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, ValidAsZeroBits};
use std::sync::Arc;

/// Slots of the persistent solve's work queue for `tiles` tiles: a power of two above
/// the most items it can hold (each tile once, plus one slot per block waiting for a
/// push under way; there are never more blocks than tiles).
fn queue_slots(tiles: u64) -> u64 {
    (2 * tiles + 1).next_power_of_two()
}

/// All device arrays of one grid shape; reused while the shape stays the same.
pub struct DeviceState {
    /// The grid and its tiles.
    pub tiling: Tiling,
    res: CudaSlice<u32>,
    tres: CudaSlice<u32>,
    exc: CudaSlice<u64>,
    h: CudaSlice<u32>,
    rmask: CudaSlice<u16>,
    gh: CudaSlice<u64>,
    pend: CudaSlice<u32>,
    tile_active: CudaSlice<u32>,
    tile_mail: CudaSlice<u32>,
    tile_dirty: CudaSlice<u32>,
    tile_round: CudaSlice<u32>,
    tile_calm: CudaSlice<u32>,
    queue: CudaSlice<u32>,
    tile_q: CudaSlice<u32>,
    /// Discharge visits per tile (the heatmap).
    pub activity: CudaSlice<u32>,
    /// Counters after each global relabel of the persistent solve (`LOG_ROWS` × `LOG_COLS`),
    /// read only when asked for (`CudaEngine::relabel_log`).
    #[cfg(feature = "experiments")]
    pub log: CudaSlice<u64>,
    colour_tiles: CudaSlice<u32>,
    colour_start: [u32; MAX_COLOURS + 1],
    /// Counters (`Ctl`), as 64-bit words.
    pub ctl: CudaSlice<u64>,
    in_src: CudaSlice<i32>,
    in_sink: CudaSlice<i32>,
    in_edges: CudaSlice<i32>,
    old_src: CudaSlice<i32>,
    old_sink: CudaSlice<i32>,
    old_edges: CudaSlice<i32>,
    off: CudaSlice<u32>,
    /// What `pr_reparam*` added up (`REPARAM_SUMS` words).
    pub sums: CudaSlice<u64>,
    /// Output mask, row-major.
    pub mask: CudaSlice<u8>,
    /// Bytes held on the device.
    pub bytes: u64,
}

fn alloc<T: DeviceRepr + ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    len: u64,
    bytes: &mut u64,
) -> Result<CudaSlice<T>, EngineError> {
    let n = usize::try_from(len.max(1)).map_err(|_| EngineError::TooLarge {
        engine: EngineKind::Cuda,
        reason: "array length overflows".into(),
    })?;
    *bytes += (n * std::mem::size_of::<T>()) as u64;
    Ok(stream
        .alloc_zeros::<T>(n)
        .map_err(driver("device allocation"))?)
}

impl DeviceState {
    /// Allocates the arrays for `tiling`, or says why it cannot (too many pixels, not
    /// enough device memory).
    pub fn new(stream: &Arc<CudaStream>, tiling: Tiling) -> Result<Self, EngineError> {
        if tiling.pixels() > MAX_PIXELS || tiling.padded_pixels() * tiling.dirs as u64 >= 1 << 40 {
            return Err(EngineError::TooLarge {
                engine: EngineKind::Cuda,
                reason: format!("{} pixels (at most {MAX_PIXELS})", tiling.pixels()),
            });
        }
        let npix = tiling.padded_pixels();
        if npix > u32::MAX as u64 {
            return Err(EngineError::TooLarge {
                engine: EngineKind::Cuda,
                reason: format!("{npix} padded pixels do not fit 32-bit indices"),
            });
        }
        let real = tiling.pixels();
        let dirs = tiling.dirs as u64;
        let nt = tiling.ntiles() as u64;
        let need = npix * (4 * dirs + 4 + 8 + 4 + 2 + 4)
            + real * (2 * 4 * (2 + dirs) + 1)
            + nt * (32 + 4 * dirs * MAIL_SLOTS as u64)
            + 4 * queue_slots(nt);
        let (free, _) = stream
            .context()
            .mem_get_info()
            .map_err(driver("device memory query"))?;
        if need > free as u64 {
            return Err(EngineError::TooLarge {
                engine: EngineKind::Cuda,
                reason: format!(
                    "needs {} MB of device memory, {} MB free",
                    need >> 20,
                    free >> 20
                ),
            });
        }
        let (tiles, colour_start) = tiling.colour_lists();
        let mut bytes = 0u64;
        let mut colour_tiles = alloc::<u32>(stream, nt, &mut bytes)?;
        stream
            .memcpy_htod(&tiles, &mut colour_tiles)
            .map_err(driver("upload of the tile lists"))?;
        Ok(Self {
            tiling,
            res: alloc(stream, npix * dirs, &mut bytes)?,
            tres: alloc(stream, npix, &mut bytes)?,
            exc: alloc(stream, npix, &mut bytes)?,
            h: alloc(stream, npix, &mut bytes)?,
            rmask: alloc(stream, npix, &mut bytes)?,
            gh: alloc(stream, npix, &mut bytes)?,
            pend: alloc(stream, nt * dirs * MAIL_SLOTS as u64, &mut bytes)?,
            tile_active: alloc(stream, nt, &mut bytes)?,
            tile_mail: alloc(stream, nt, &mut bytes)?,
            tile_dirty: alloc(stream, 2 * nt, &mut bytes)?,
            tile_round: alloc(stream, nt, &mut bytes)?,
            tile_calm: alloc(stream, nt, &mut bytes)?,
            queue: alloc(stream, queue_slots(nt), &mut bytes)?,
            tile_q: alloc(stream, 2 * nt, &mut bytes)?,
            activity: alloc(stream, nt, &mut bytes)?,
            #[cfg(feature = "experiments")]
            log: alloc(stream, (LOG_ROWS * LOG_COLS) as u64, &mut bytes)?,
            colour_tiles,
            colour_start,
            ctl: alloc(stream, CTL_WORDS as u64, &mut bytes)?,
            in_src: alloc(stream, real, &mut bytes)?,
            in_sink: alloc(stream, real, &mut bytes)?,
            in_edges: alloc(stream, real * dirs, &mut bytes)?,
            old_src: alloc(stream, real, &mut bytes)?,
            old_sink: alloc(stream, real, &mut bytes)?,
            old_edges: alloc(stream, real * dirs, &mut bytes)?,
            off: alloc(stream, npix, &mut bytes)?,
            sums: alloc(stream, REPARAM_SUMS as u64, &mut bytes)?,
            mask: alloc(stream, real, &mut bytes)?,
            bytes,
        })
    }

    /// Keeps the last call's capacities as the old ones of a dynamic update (the next
    /// upload or copy writes the new ones into the other buffers).
    pub fn keep_as_old(&mut self) {
        std::mem::swap(&mut self.in_src, &mut self.old_src);
        std::mem::swap(&mut self.in_sink, &mut self.old_sink);
        std::mem::swap(&mut self.in_edges, &mut self.old_edges);
    }

    /// Copies capacities the energy kernels wrote on the device, after their stream's
    /// work, and clears the counters.
    pub fn copy_from(
        &mut self,
        stream: &Arc<CudaStream>,
        grid: &DeviceGrid,
    ) -> Result<(), EngineError> {
        stream
            .join(&grid.stream)
            .map_err(driver("waiting for the energy's stream"))?;
        let n = grid.pixels();
        let dirs = grid.connectivity.number() as usize;
        stream
            .memcpy_dtod(&grid.source.slice(..n), &mut self.in_src.slice_mut(..n))
            .map_err(driver("copy of source capacities"))?;
        stream
            .memcpy_dtod(&grid.sink.slice(..n), &mut self.in_sink.slice_mut(..n))
            .map_err(driver("copy of sink capacities"))?;
        stream
            .memcpy_dtod(
                &grid.edges.slice(..n * dirs),
                &mut self.in_edges.slice_mut(..n * dirs),
            )
            .map_err(driver("copy of edge capacities"))?;
        self.clear_counters(stream)
    }

    /// Copies the problem's capacities (row-major, as given) to the device and clears
    /// the counters. The tiled residual graph is built from them by `pr_init*`.
    pub fn upload(
        &mut self,
        stream: &Arc<CudaStream>,
        problem: &GridProblem,
    ) -> Result<(), EngineError> {
        let n = problem.pixels();
        stream
            .memcpy_htod(problem.source(), &mut self.in_src)
            .map_err(driver("upload of source capacities"))?;
        stream
            .memcpy_htod(problem.sink(), &mut self.in_sink)
            .map_err(driver("upload of sink capacities"))?;
        for (d, &dir) in problem.connectivity().directions().iter().enumerate() {
            let mut view = self.in_edges.slice_mut(d * n..(d + 1) * n);
            stream
                .memcpy_htod(problem.edges(dir), &mut view)
                .map_err(driver("upload of edge capacities"))?;
        }
        self.clear_counters(stream)
    }

    /// Clears the counters and the update's sums (before solving afresh what an update
    /// could not take).
    pub fn clear_counters(&mut self, stream: &Arc<CudaStream>) -> Result<(), EngineError> {
        stream
            .memset_zeros(&mut self.sums)
            .map_err(driver("clearing counters"))?;
        stream
            .memset_zeros(&mut self.ctl)
            .map_err(driver("clearing counters"))?;
        Ok(())
    }

    /// The kernels' parameter block pointing at these arrays.
    pub fn params(&self, stream: &CudaStream) -> Params {
        let t = &self.tiling;
        Params {
            width: t.width,
            height: t.height,
            tiles_x: t.tiles_x,
            tiles_y: t.tiles_y,
            ntiles: t.ntiles(),
            npix: t.ntiles() * t.tile_px(),
            hmax: (t.pixels() + 1) as u32,
            colour_start: self.colour_start,
            res: self.res.device_ptr(stream).0,
            tres: self.tres.device_ptr(stream).0,
            exc: self.exc.device_ptr(stream).0,
            h: self.h.device_ptr(stream).0,
            rmask: self.rmask.device_ptr(stream).0,
            gh: self.gh.device_ptr(stream).0,
            pend: self.pend.device_ptr(stream).0,
            tile_active: self.tile_active.device_ptr(stream).0,
            tile_mail: self.tile_mail.device_ptr(stream).0,
            tile_dirty: self.tile_dirty.device_ptr(stream).0,
            tile_round: self.tile_round.device_ptr(stream).0,
            tile_calm: self.tile_calm.device_ptr(stream).0,
            qcap: queue_slots(t.ntiles() as u64) as u32,
            queue: self.queue.device_ptr(stream).0,
            tile_q: self.tile_q.device_ptr(stream).0,
            activity: self.activity.device_ptr(stream).0,
            #[cfg(feature = "experiments")]
            log: self.log.device_ptr(stream).0,
            colour_tiles: self.colour_tiles.device_ptr(stream).0,
            ctl: self.ctl.device_ptr(stream).0,
            in_src: self.in_src.device_ptr(stream).0,
            in_sink: self.in_sink.device_ptr(stream).0,
            in_edges: self.in_edges.device_ptr(stream).0,
            mask: self.mask.device_ptr(stream).0,
            old_src: self.old_src.device_ptr(stream).0,
            old_sink: self.old_sink.device_ptr(stream).0,
            old_edges: self.old_edges.device_ptr(stream).0,
            off: self.off.device_ptr(stream).0,
            sums: self.sums.device_ptr(stream).0,
            budget_ns: NO_BUDGET,
            ..Params::default()
        }
    }
}

//! Tile geometry and the parameter blocks shared with `kernels/pushrelabel/common.cu`. The
//! `#[repr(C)]` structs mirror the kernel's `Params` and `Ctl` field for field; the engine
//! checks their sizes against the compiled kernels once at start-up.

use super::Terminals;
use crate::grid::Connectivity;
use cudarc::driver::DeviceRepr;
use thiserror::Error;

/// Tile width in pixels (`TW` in the kernels).
pub const TILE_W: u32 = 32;
/// Tile heights the kernels are compiled for (`TH`, one module each): square tiles
/// first, the default, then half-height tiles for grids of few tiles
/// ([`auto_tile_height`]).
pub const TILE_HEIGHTS: [u32; 2] = [32, 16];
/// Mailbox slots per tile and direction (`PSLOTS`).
pub const MAIL_SLOTS: u32 = 64;
/// Most tile colours a schedule uses (`MAX_COLOURS`).
pub const MAX_COLOURS: usize = 2;
/// Rows and columns of the persistent solve's per-global-relabel log (`LOG_ROWS`,
/// `LOG_COLS`; profiling builds only).
#[cfg(feature = "experiments")]
pub const LOG_ROWS: usize = 128;
/// Counters per log row.
#[cfg(feature = "experiments")]
pub const LOG_COLS: usize = 8;
/// Height meaning "cannot reach the sink" (`INF`).
pub const INF_HEIGHT: u32 = 0x7fff_ffff;

/// Words of the update's sums (`REPARAM_SUMS`): the offsets' total (`SUM_OFFSET`), the
/// capacities that changed (`SUM_CHANGED`) and the pixels whose offset would overflow
/// (`SUM_OVERFLOW`).
pub const REPARAM_SUMS: usize = 3;
/// Word of the offsets' total in the update's sums.
pub const SUM_OFFSET: usize = 0;
/// Word of the changed capacities.
pub const SUM_CHANGED: usize = 1;
/// Word of the pixels whose offset would overflow.
pub const SUM_OVERFLOW: usize = 2;

/// Largest number of real pixels: heights up to `pixels + 1` must stay below `INF`.
pub const MAX_PIXELS: u64 = INF_HEIGHT as u64 - 2;

/// What the kernels left in `Ctl::status` (`ST_*`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// No kernel ended the solve (`ST_RUNNING`).
    Running,
    /// The solve finished with a proof of optimality (`ST_DONE`).
    Done,
    /// A grid barrier waited too long (`ST_HANG`).
    Hang,
    /// The safety cap on discharge rounds was reached (`ST_ROUND_CAP`).
    RoundCap,
}

/// Why the kernels ended a solve without an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Error)]
pub enum KernelFailure {
    /// A grid barrier of the persistent solve waited too long (`ST_HANG`).
    #[error("the persistent solve stalled at a grid barrier")]
    Stalled,
    /// The safety cap on discharge rounds was reached (`ST_ROUND_CAP`).
    #[error("no convergence within {0} discharge rounds")]
    RoundCap(u32),
    /// The solve ended with no status or an unknown one (the code).
    #[error("the solve ended with status {0}")]
    Status(u32),
}

impl Status {
    /// The status the kernels mean by `code`; `Err(code)` for a code they never write.
    pub fn from_code(code: u32) -> Result<Self, u32> {
        match code {
            0 => Ok(Status::Running),
            1 => Ok(Status::Done),
            2 => Ok(Status::Hang),
            3 => Ok(Status::RoundCap),
            other => Err(other),
        }
    }
}

/// A W×H grid padded to whole tiles, with the tile colouring of the discharge passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tiling {
    /// Real width.
    pub width: u32,
    /// Real height.
    pub height: u32,
    /// 4 or 8 neighbour directions.
    pub dirs: u32,
    /// Tiles per row.
    pub tiles_x: u32,
    /// Tile rows.
    pub tiles_y: u32,
    /// Tile height in pixels (one of [`TILE_HEIGHTS`]; tiles are `TILE_W` wide).
    pub tile_h: u32,
}

/// Whether a `width`×`height` grid in square tiles fills a device of `sms`
/// multiprocessors only a few (at most 4) times over: then the engine takes half-height
/// tiles and short visits.
pub fn few_square_tiles(width: u32, height: u32, sms: u32) -> bool {
    let square = width.div_ceil(TILE_W) as u64 * height.div_ceil(TILE_HEIGHTS[0]) as u64;
    square <= 4 * sms as u64
}

/// Tile height for a `width`×`height` grid on a device of `sms` multiprocessors. Where
/// square tiles would fill the device only a few times over, half-height tiles (512
/// threads, two blocks per SM) give twice the tiles to spread over it and shorter paths
/// across each tile; on large grids they double the tile hops of the global relabel and
/// the border traffic, but large 8C energies that are not seeded and large 4C energies of
/// an object on a large background ([`Terminals::lopsided`], not seeded) still gain from
/// them. `terminals` is asked only for grids of many tiles. Measurements in
/// `kernels/NOTES.md`.
pub fn auto_tile_height(
    width: u32,
    height: u32,
    connectivity: Connectivity,
    sms: u32,
    terminals: impl FnOnce() -> Terminals,
) -> u32 {
    let eight = connectivity == Connectivity::Eight;
    let half = |t: Terminals| (eight && !t.sparse()) || t.object();
    if few_square_tiles(width, height, sms) || half(terminals()) {
        TILE_HEIGHTS[1]
    } else {
        TILE_HEIGHTS[0]
    }
}

impl Tiling {
    /// Tiling of a `width`×`height` grid of the given connectivity into tiles `tile_h`
    /// pixels high.
    pub fn new(width: u32, height: u32, connectivity: Connectivity, tile_h: u32) -> Self {
        Self {
            width,
            height,
            dirs: connectivity.number(),
            tiles_x: width.div_ceil(TILE_W),
            tiles_y: height.div_ceil(tile_h),
            tile_h,
        }
    }

    /// Pixels per tile (threads per tile block).
    pub fn tile_px(&self) -> u32 {
        TILE_W * self.tile_h
    }

    /// Number of tiles.
    pub fn ntiles(&self) -> u32 {
        self.tiles_x * self.tiles_y
    }

    /// Pixels of the padded grid (`ntiles * tile_px`), in 64 bits.
    pub fn padded_pixels(&self) -> u64 {
        self.ntiles() as u64 * self.tile_px() as u64
    }

    /// Real pixels.
    pub fn pixels(&self) -> u64 {
        self.width as u64 * self.height as u64
    }

    /// Colour of the tile at (tx, ty), one of [`MAX_COLOURS`]: tiles of one colour share
    /// no edge (a checkerboard). 8C tiles of one colour touch at corners, whose heights
    /// may then be stale during a phase (costs work, never exactness; four colours
    /// measured slower, see `kernels/pushrelabel/`).
    pub fn colour_of(&self, tx: u32, ty: u32) -> u32 {
        (tx + ty) & 1
    }

    /// Tile ids grouped by colour, and where each colour's group starts (the last entry
    /// is the total).
    pub fn colour_lists(&self) -> (Vec<u32>, [u32; MAX_COLOURS + 1]) {
        let mut tiles = Vec::with_capacity(self.ntiles() as usize);
        let mut start = [0u32; MAX_COLOURS + 1];
        for colour in 0..MAX_COLOURS as u32 {
            start[colour as usize] = tiles.len() as u32;
            for t in 0..self.ntiles() {
                if self.colour_of(t % self.tiles_x, t / self.tiles_x) == colour {
                    tiles.push(t);
                }
            }
        }
        start[MAX_COLOURS] = tiles.len() as u32;
        (tiles, start)
    }
}

/// Mirror of the kernels' `Params` (passed by value to every kernel; the relabel log's
/// pointer only where the kernels are built to profile, `LIVECUT_PROFILE`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Params {
    pub width: u32,
    pub height: u32,
    pub tiles_x: u32,
    pub tiles_y: u32,
    pub ntiles: u32,
    pub npix: u32,
    pub hmax: u32,
    pub colour_start: [u32; MAX_COLOURS + 1],
    pub step_budget: u32,
    pub region_every: u32,
    pub revisit_every: u32,
    pub gr_rounds: u32,
    pub gr_work_num: u32,
    pub max_rounds: u32,
    pub nblocks: u32,
    pub concurrent: u32,
    pub qcap: u32,
    pub gr_owners: u32,
    pub owned_discharge: u32,
    pub gr_rate_max: u32,
    pub gr_rate_pct: u32,
    pub gr_few_tiles: u32,
    pub gr_few_rounds: u32,
    pub gr_cap_margin: u32,
    pub res: u64,
    pub tres: u64,
    pub exc: u64,
    pub h: u64,
    pub rmask: u64,
    pub gh: u64,
    pub pend: u64,
    pub tile_active: u64,
    pub tile_mail: u64,
    pub tile_dirty: u64,
    pub tile_round: u64,
    pub tile_calm: u64,
    pub queue: u64,
    pub tile_q: u64,
    pub activity: u64,
    #[cfg(feature = "experiments")]
    pub log: u64,
    pub colour_tiles: u64,
    pub ctl: u64,
    pub in_src: u64,
    pub in_sink: u64,
    pub in_edges: u64,
    pub mask: u64,
    pub old_src: u64,
    pub old_sink: u64,
    pub old_edges: u64,
    pub off: u64,
    pub sums: u64,
    /// Nanoseconds after which the persistent solve stops at its next whole global
    /// relabel ([`NO_BUDGET`]: never).
    pub budget_ns: u64,
}

/// `Params::budget_ns` of a solve that runs to the maximum flow.
pub const NO_BUDGET: u64 = u64::MAX;

// SAFETY: plain old data with the C layout of the kernels' `Params`; checked against
// `sizeof(Params)` reported by the compiled module before any launch.
unsafe impl DeviceRepr for Params {}

/// Mirror of the kernels' `Snap`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Snap {
    pub relabels: u64,
    pub active_tiles: u32,
    pub mail_tiles: u32,
    pub stamp: u32,
    pub gr_epoch: u32,
    pub more: u32,
    pub late: u32,
}

/// Mirror of the kernels' `Ctl`: counters and status of one solve (the cycle counters
/// only where the kernels are built to profile, `LIVECUT_PROFILE`).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct Ctl {
    pub sink_flow: u64,
    pub relabels: u64,
    pub steps: u64,
    pub bfs_iters: u64,
    #[cfg(feature = "experiments")]
    pub cyc_discharge: u64,
    #[cfg(feature = "experiments")]
    pub cyc_bfs: u64,
    #[cfg(feature = "experiments")]
    pub path_bfs: u64,
    #[cfg(feature = "experiments")]
    pub path_discharge: u64,
    #[cfg(feature = "experiments")]
    pub bfs_wait: u64,
    #[cfg(feature = "experiments")]
    pub barrier_cycles: u64,
    pub bfs_pops: u64,
    pub rate_t0: u64,
    pub rate_f0: u64,
    pub rate_t: u64,
    pub rate_f: u64,
    pub rate_w0: u64,
    pub active_tiles: u32,
    pub mail_tiles: u32,
    pub gr_changes: u32,
    pub tile_visits: u32,
    pub tile_loads: u32,
    pub rounds: u32,
    pub global_relabels: u32,
    pub bfs_rounds: u32,
    pub bfs_tiles: u32,
    pub status: u32,
    pub bar_count: u32,
    pub bar_gen: u32,
    pub q_head: u32,
    pub q_tail: u32,
    pub q_pending: u32,
    pub stamp: u32,
    pub gr_epoch: u32,
    pub pad: u32,
    pub snap: Snap,
    pub gr_hact: [u32; 2],
    pub gr_capped: u32,
    pub pad2: u32,
    pub deadline_ns: u64,
    pub cut_capacity: u64,
    pub stopped: u32,
    pub pad3: u32,
}

/// `Ctl` is read back as this many 64-bit words.
pub const CTL_WORDS: usize = std::mem::size_of::<Ctl>() / 8;

impl Ctl {
    /// Rebuilds the counters from the words read back from the device.
    pub fn from_words(words: &[u64]) -> Self {
        let mut ctl = Ctl::default();
        let n = CTL_WORDS.min(words.len());
        // SAFETY: Ctl is repr(C), 8-byte aligned, made of integers only (any bit pattern
        // is valid) and exactly CTL_WORDS words long; at most that many are copied.
        unsafe {
            std::ptr::copy_nonoverlapping(words.as_ptr(), (&mut ctl as *mut Ctl).cast::<u64>(), n);
        }
        ctl
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_sizes_match_the_kernel_layout() {
        // Field-by-field sums of kernels/pushrelabel/common.cu (checked again on the device):
        // Params holds 26 u32 (104 bytes) before its 26 pointers and the budget, Ctl 10
        // u64 counters before its u32 ones and the budget's deadline, cut capacity and
        // flag after them; profiling adds the log's pointer and 6 cycle counters.
        let profile = usize::from(cfg!(feature = "experiments"));
        assert_eq!(std::mem::size_of::<Params>(), 104 + (26 + profile) * 8 + 8);
        assert_eq!(std::mem::size_of::<Snap>(), 32);
        assert_eq!(
            std::mem::size_of::<Ctl>(),
            (10 + 6 * profile) * 8 + 4 * 18 + 32 + 4 * 4 + 2 * 8 + 2 * 4
        );
        assert_eq!(std::mem::size_of::<Ctl>() % 8, 0);
    }

    #[test]
    fn status_codes_are_the_kernels() {
        let text = super::super::kernels::PUSH_RELABEL.text;
        for (name, status) in [
            ("ST_RUNNING", Status::Running),
            ("ST_DONE", Status::Done),
            ("ST_HANG", Status::Hang),
            ("ST_ROUND_CAP", Status::RoundCap),
        ] {
            let define = format!("#define {name} ");
            let code: u32 = text
                .lines()
                .find_map(|l| l.strip_prefix(&define))
                .and_then(|v| v.trim().trim_end_matches('u').parse().ok())
                .unwrap_or_else(|| panic!("{name} is not defined"));
            assert_eq!(Status::from_code(code), Ok(status), "{name}");
        }
        assert_eq!(Status::from_code(4), Err(4));
    }

    #[test]
    fn grids_of_few_square_tiles_get_half_height_tiles() {
        // 300 and 150 square tiles on 132 SMs; 920 (1280×720) and 2,040 (1920×1080).
        let (four, eight) = (Connectivity::Four, Connectivity::Eight);
        // terminals on `any` of 100 pixels, `supplies` of them fed, the rest pulled
        let census = |any, supplies| Terminals {
            any,
            supplies,
            deficits: any - supplies,
            pixels: 100,
        };
        let (balanced, lopsided, seeded) = (census(90, 40), census(90, 5), census(5, 2));
        for t in [balanced, lopsided, seeded] {
            let h = |w, h, c| auto_tile_height(w, h, c, 132, || t);
            assert_eq!(h(640, 480, four), 16);
            assert_eq!(h(451, 300, eight), 16);
            assert_eq!(h(1, 1, four), 16);
        }
        // large 4C grids: an object on a large background only
        for (w, h) in [(1280, 720), (1920, 1080)] {
            assert_eq!(auto_tile_height(w, h, four, 132, || balanced), 32);
            assert_eq!(auto_tile_height(w, h, four, 132, || lopsided), 16);
            assert_eq!(auto_tile_height(w, h, four, 132, || seeded), 32);
        }
        // large 8C image energies too, large 8C seeded ones not
        assert_eq!(auto_tile_height(1920, 1080, eight, 132, || balanced), 16);
        assert_eq!(auto_tile_height(1920, 1080, eight, 132, || seeded), 32);
        // a device with fewer SMs fills with fewer tiles
        assert_eq!(auto_tile_height(640, 480, four, 40, || balanced), 32);
    }

    #[test]
    fn colour_lists_cover_every_tile_once_and_edge_neighbours_differ() {
        for (w, h, c, th) in [
            (1, 40, Connectivity::Four, 32),
            (100, 70, Connectivity::Eight, 32),
            (33, 33, Connectivity::Four, 32),
            (100, 70, Connectivity::Eight, 16),
            (33, 33, Connectivity::Four, 16),
        ] {
            let tiling = Tiling::new(w, h, c, th);
            let (tiles, start) = tiling.colour_lists();
            let mut seen = vec![false; tiling.ntiles() as usize];
            for &t in &tiles {
                assert!(!seen[t as usize]);
                seen[t as usize] = true;
            }
            assert!(seen.iter().all(|&s| s));
            assert_eq!(start[MAX_COLOURS] as usize, tiles.len());
            let reach: i32 = 1;
            for ty in 0..tiling.tiles_y as i32 {
                for tx in 0..tiling.tiles_x as i32 {
                    for dy in -reach..=reach {
                        for dx in -reach..=reach {
                            let (nx, ny) = (tx + dx, ty + dy);
                            let edge = (dx == 0) != (dy == 0);
                            if edge
                                && nx >= 0
                                && ny >= 0
                                && nx < tiling.tiles_x as i32
                                && ny < tiling.tiles_y as i32
                            {
                                assert_ne!(
                                    tiling.colour_of(tx as u32, ty as u32),
                                    tiling.colour_of(nx as u32, ny as u32)
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn ctl_round_trips_through_words() {
        let mut words = vec![0u64; CTL_WORDS];
        words[0] = 1 << 40;
        // active_tiles and mail_tiles share the word after the u64 counters
        words[std::mem::offset_of!(Ctl, active_tiles) / 8] = 7 | (9 << 32);
        let ctl = Ctl::from_words(&words);
        assert_eq!(ctl.sink_flow, 1 << 40);
        assert_eq!(ctl.active_tiles, 7);
        assert_eq!(ctl.mail_tiles, 9);
    }
}

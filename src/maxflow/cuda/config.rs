//! How the engine schedules a solve. The product's choices are plain functions of the
//! grid, the device and the energy's terminals ([`Terminals`]): the tile height
//! ([`auto_tile_height`](super::auto_tile_height)), the steps of a tile visit ([`auto_step_budget`]), the
//! discharge rounds between global relabels ([`auto_relabel_rounds`]), and the defaults
//! of [`CudaConfig`] for the rest. Every setting keeps the result exact; they only move
//! work between kinds of passes. The settings are there to compare alternatives: the
//! cargo feature `experiments` makes them public (tests and `benches/gpu_schedules.rs`),
//! the product never changes them but for the stochastic switch
//! (`Engine::set_stochastic`). Why each choice: `kernels/NOTES.md`, by the name of its
//! function or setting.

use super::Terminals;
use super::layout::few_square_tiles;
use super::schedule::Schedule;
use serde::Serialize;

/// Settings of the CUDA engine's schedule; 0 in a setting that says so picks by the
/// grid (the `auto_*` functions).
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
    /// gain over fixed rounds.
    pub relabel_rate_rounds: u32,
    /// See [`Self::relabel_rate_rounds`].
    pub relabel_rate_percent: u32,
    /// Where tile owners run the discharge rounds ([`Self::owner_discharge_tiles`]): after
    /// a global relabel that finds at most this many active tiles,
    /// [`Self::few_active_rounds`] rounds before the next one instead of
    /// `global_relabel_rounds` (0: never), so that a small tail gets more rounds a relabel.
    pub few_active_tiles: u32,
    /// See [`Self::few_active_tiles`].
    pub few_active_rounds: u32,
    /// Safety cap on discharge rounds; reaching it is an error, never an answer.
    pub max_rounds: u32,
    /// Tile height in pixels, one of [`TILE_HEIGHTS`](super::TILE_HEIGHTS); 0 picks by
    /// grid size and kind of energy ([`auto_tile_height`](super::auto_tile_height)).
    pub tile_height: u32,
    /// Persistent solve: a global relabel hands a tile that must relax again to the block
    /// that owns it (a wake it polls for) where the grid has at most this many tiles per
    /// block, else to whichever block takes it from a shared queue (0: always the
    /// queue). Owners cut the hand-over's round trips, which small grids wait on; on
    /// large ones a busy owner holds up its other tiles. Energies of an object on a
    /// large background ([`Terminals::lopsided`], not seeded), whose work stays near the
    /// object, take the owners' ways at any size (with a nonzero limit; on 4C for the
    /// rounds too, and see [`auto_step_budget`] for 8C).
    pub owner_relabel_tiles: u32,
    /// Persistent solve, coloured, 4-connected: a tile's discharge visit waits only for
    /// its edge neighbours' visits before it (each block visits the tiles it owns) where
    /// the grid has at most this many tiles per block, instead of a grid barrier after
    /// each phase (0: always the barriers). 8C grids keep the barriers, and so do grids
    /// of many tiles per block, where a block's busy tile holds up its others. Where
    /// owners run the relabels as well, on half-height tiles, each global relabel follows
    /// the rounds with no barrier either: a tile relaxes once its edge neighbours are done.
    pub owner_discharge_tiles: u32,
    /// Persistent solve of a seeded 4C energy ([`Terminals::sparse`]) in square tiles: a
    /// global relabel after one that left excess stops its BFS this many levels above the
    /// highest height of that excess, giving the pixels beyond a lower bound of their
    /// distance; one that leaves excess at that bound, or finds none, is followed by a
    /// whole one, and only a whole one ends the solve (0: every relabel whole). In the
    /// seed disks' tail the excess sits well below the highest height, and a whole
    /// relabel's wave runs on through the detours beyond (the kernels' `relabel_cap`).
    pub relabel_cap_margin: u32,
}

impl Default for CudaConfig {
    /// The product's schedule.
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
/// [`auto_relabel_rounds`]).
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
/// visits of 32 steps, [`auto_step_budget`]).
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

#[cfg(test)]
mod tests {
    use super::{Terminals, auto_relabel_rounds, auto_step_budget};

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

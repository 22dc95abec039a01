//! The CUDA engine against the shared instances, a reference max-flow and itself.
//!
//! Tests that need a device print a note and return when there is none (CI). Where the
//! shared data lives: `$LIVECUT_GRIDS`, else `../shared/data/grids` beside the checkout,
//! else `grids/` in the working directory (how the GPU machine gets them).
//!
//! The tests run the product's schedule; with the cargo feature `experiments` they run
//! every way of driving the kernels (`CudaConfig`) as well.

mod common;

use common::device::skip_without_device;
use common::generators::{
    Change, change, connectivity, image_like, neighbour_capacities, object_like, random_grid,
    seeds_disk,
};
use common::grids::{grids_dir, manifest};
use common::reference::reference_flow;
// xorshift64*: the generator these tests' instances were drawn with.
use common::rng::Rng as SplitMix;
use common::rng::XorShift as Rng;
use livecut::ccl::{CpuLabeller, CudaLabeller, Labeller};
use livecut::gpu::GpuError;
use livecut::grid::{Connectivity, Direction, GridProblem, cut_capacity};
#[cfg(feature = "experiments")]
use livecut::maxflow::cuda::{CudaConfig, Schedule, TILE_HEIGHTS};
use livecut::maxflow::cuda::{CudaEngine, KERNEL_SOURCES, Terminals};
use livecut::maxflow::{CutSide, Engine, EngineChoice, EngineError, create_engine, dimacs};

// ---------------------------------------------------------------------------------
// Helpers

/// The engine with the product's schedule, or `None` (with a note) without a device.
fn product_engine_or_skip() -> Option<CudaEngine> {
    skip_without_device(CudaEngine::new())
}

/// The engine with the schedule `config`, or `None` (with a note) without a device.
#[cfg(feature = "experiments")]
fn engine_or_skip(config: CudaConfig) -> Option<CudaEngine> {
    skip_without_device(CudaEngine::with_config(config))
}

/// An engine for each way of driving the kernels ([`schedules`]), with its
/// description, one at a time; none without a device.
#[cfg(feature = "experiments")]
fn engines() -> impl Iterator<Item = (String, CudaEngine)> {
    schedules()
        .into_iter()
        .map_while(|config| engine_or_skip(config).map(|engine| (describe(&config), engine)))
}

/// The product's engine alone (the other schedules need the `experiments` feature).
#[cfg(not(feature = "experiments"))]
fn engines() -> impl Iterator<Item = (String, CudaEngine)> {
    product_engine_or_skip()
        .map(|engine| ("product schedule".to_string(), engine))
        .into_iter()
}

/// Every way of driving the kernels: persistent or host loop, coloured or concurrent,
/// on each tile height.
#[cfg(feature = "experiments")]
fn schedules() -> Vec<CudaConfig> {
    let mut all = Vec::new();
    for tile_height in TILE_HEIGHTS {
        for schedule in [Schedule::Persistent, Schedule::HostLoop] {
            for concurrent in [false, true] {
                all.push(CudaConfig {
                    schedule,
                    concurrent,
                    tile_height,
                    ..CudaConfig::default()
                });
            }
        }
        // the persistent solve's global relabel and 4C discharge both ways on every grid:
        // by owners (the default on the small grids of most tests) and by the queue and
        // the barriers (with 4C rounds by the flow-rate rule, and by a fixed count)
        for (owners, rate) in [(0, 8), (0, 0), (u32::MAX, 8)] {
            all.push(CudaConfig {
                tile_height,
                owner_relabel_tiles: owners,
                owner_discharge_tiles: owners,
                relabel_rate_rounds: rate,
                ..CudaConfig::default()
            });
        }
        // seeded energies' relabels all whole, by the queue (they cap them by default)
        all.push(CudaConfig {
            tile_height,
            owner_relabel_tiles: 0,
            owner_discharge_tiles: 0,
            relabel_cap_margin: 0,
            ..CudaConfig::default()
        });
        // ... and capped as tightly as it goes: every capped relabel leaves work beyond
        all.push(CudaConfig {
            tile_height,
            owner_relabel_tiles: 0,
            owner_discharge_tiles: 0,
            relabel_cap_margin: 1,
            ..CudaConfig::default()
        });
    }
    all
}

/// How a test names the schedule settings it ran.
#[cfg(feature = "experiments")]
fn describe(config: &CudaConfig) -> String {
    format!(
        "{:?}, concurrent {}, 32x{} tiles, owners up to {}/{} tiles a block, relabel after {} rounds (flow-rate rule up to {}), relabel cap margin {}",
        config.schedule,
        config.concurrent,
        config.tile_height,
        config.owner_relabel_tiles,
        config.owner_discharge_tiles,
        match config.global_relabel_rounds {
            0 => "auto".to_string(),
            r => r.to_string(),
        },
        config.relabel_rate_rounds,
        config.relabel_cap_margin
    )
}

/// Solves, checks the certificate (cut capacity of the returned mask == flow) and
/// returns the flow.
fn solve_certified(engine: &mut CudaEngine, problem: &GridProblem, what: &str) -> u64 {
    let solution = engine
        .solve(problem)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let cut = cut_capacity(problem, &solution.mask);
    assert_eq!(
        cut, solution.flow,
        "{what}: cut capacity differs from the flow"
    );
    assert!(
        solution.mask.data.iter().all(|&v| v == 0 || v == 255),
        "{what}: mask values"
    );
    solution.flow
}

// ---------------------------------------------------------------------------------
// CPU-only tests

#[test]
fn every_kernel_source_is_embedded_with_its_entry_points() {
    assert!(!KERNEL_SOURCES.is_empty());
    for source in KERNEL_SOURCES {
        assert!(source.text.len() > 1000, "{} looks empty", source.name);
        for entry in source.entries {
            let declared = source.text.lines().any(|l| {
                l.starts_with("extern \"C\" __global__") && l.contains(&format!(" {entry}("))
            });
            assert!(declared, "{} does not define {entry}", source.name);
        }
    }
}

#[test]
fn auto_falls_back_to_the_cpu_without_a_device() {
    let (engine, note) = create_engine(EngineChoice::Auto).expect("auto never fails");
    match CudaEngine::new() {
        Ok(_) => {
            assert_eq!(engine.name(), "cuda");
            assert!(note.is_none());
        }
        Err(EngineError::Gpu(GpuError::Unavailable(why))) => {
            assert_eq!(engine.name(), "cpu");
            let note = note.expect("a note says why");
            assert!(note.contains("CUDA"), "{note}");
            assert!(!why.is_empty());
            assert!(matches!(
                create_engine(EngineChoice::Cuda),
                Err(EngineError::Gpu(GpuError::Unavailable(_)))
            ));
        }
        Err(other) => panic!("unexpected error: {other}"),
    }
}

#[test]
fn reference_matches_small_shared_instances() {
    let Some(dir) = grids_dir() else { return };
    for (file, expected) in manifest(&dir) {
        if file.starts_with("tiny")
            || file.starts_with("line")
            || file.starts_with("dups")
            || file.starts_with("rand_64")
        {
            let problem = dimacs::read_path(&dir.join(&file)).expect("instance");
            assert_eq!(reference_flow(&problem), expected, "{file}");
        }
    }
}

#[test]
fn reference_matches_the_worked_example() {
    let mut edges = vec![vec![0; 2]; 4];
    edges[Direction::East.index()][0] = 3;
    let p = GridProblem::from_arrays(2, 1, Connectivity::Four, vec![5, 0], vec![1, 4], edges)
        .expect("grid");
    assert_eq!(reference_flow(&p), 4);
}

// ---------------------------------------------------------------------------------
// GPU tests

#[test]
fn shared_instances_give_the_manifest_flow_and_a_certified_cut() {
    let Some(dir) = grids_dir() else { return };
    for (schedule, mut engine) in engines() {
        assert_eq!(engine.cut_side(), CutSide::CannotReachSink);
        for (file, expected) in manifest(&dir) {
            let problem = dimacs::read_path(&dir.join(&file)).expect("instance");
            let what = format!("{file} ({schedule})");
            let flow = solve_certified(&mut engine, &problem, &what);
            assert_eq!(flow, expected, "{what}");
            let d = engine.details();
            eprintln!(
                "{what}: flow {flow} rounds {} GR {} BFS rounds {} visits {} sweeps {:.1}",
                d.rounds, d.global_relabels, d.bfs_rounds, d.tile_visits, d.sweeps
            );
        }
    }
}

#[test]
fn random_grids_match_the_reference() {
    for (schedule, mut engine) in engines() {
        let mut rng = Rng(0x5eed_0001);
        for case in 0..60 {
            let w = 1 + rng.below(80) as u32;
            let h = 1 + rng.below(70) as u32;
            let eight = rng.below(2) == 1;
            let max_cap = [2, 10, 1000, 1 << 20][rng.below(4) as usize];
            let density = [5, 30, 100][rng.below(3) as usize];
            let p = random_grid(&mut rng, w, h, eight, max_cap, density);
            let what = format!(
                "case {case}: {w}x{h} {}C caps<{max_cap} density {density}% ({schedule})",
                if eight { 8 } else { 4 }
            );
            assert_eq!(
                solve_certified(&mut engine, &p, &what),
                reference_flow(&p),
                "{what}"
            );
        }
    }
}

#[test]
fn capacities_near_two_to_the_31_do_not_overflow() {
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    let mut rng = Rng(77);
    for (w, h, eight) in [
        (40, 33, false),
        (33, 40, true),
        (1, 200, false),
        (150, 1, true),
    ] {
        let p = random_grid(&mut rng, w, h, eight, i32::MAX as u64 + 1, 60);
        let expected = reference_flow(&p);
        assert!(
            expected > 1 << 33,
            "the flow itself exceeds 32 bits ({expected})"
        );
        let what = format!("big caps {w}x{h}");
        assert_eq!(solve_certified(&mut engine, &p, &what), expected, "{what}");
    }
    // every neighbour pair's residuals sum above 2^31, all flow crosses the grid
    let (w, h) = (70u32, 45u32);
    let n = (w * h) as usize;
    let mut src = vec![0; n];
    let mut sink = vec![0; n];
    for y in 0..h as usize {
        src[y * w as usize] = i32::MAX;
        sink[y * w as usize + w as usize - 1] = i32::MAX;
    }
    let mut edges = vec![vec![0; n]; 4];
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            if x + 1 < w {
                edges[Direction::East.index()][i] = i32::MAX - (x as i32);
                edges[Direction::West.index()][i + 1] = i32::MAX - 7;
            }
            if y + 1 < h {
                edges[Direction::South.index()][i] = i32::MAX / 3;
                edges[Direction::North.index()][i + w as usize] = i32::MAX / 5;
            }
        }
    }
    let p = GridProblem::from_arrays(w, h, Connectivity::Four, src, sink, edges).expect("grid");
    assert_eq!(
        solve_certified(&mut engine, &p, "pair sums > 2^31"),
        reference_flow(&p)
    );
}

#[test]
fn single_rows_and_columns() {
    for (schedule, mut engine) in engines() {
        for (w, h) in [(1, 1), (1, 2), (700, 1), (1, 513), (2, 300)] {
            for eight in [false, true] {
                let n = (w * h) as usize;
                let c = connectivity(eight);
                // source at one end, sink at the other, random chain capacities
                let mut rng = Rng(w as u64 * 31 + h as u64);
                let mut src = vec![0; n];
                let mut sink = vec![0; n];
                src[0] = 1_000_000_000;
                sink[n - 1] = 1_000_000_000;
                let probe = GridProblem::zeros(w, h, c).expect("size");
                let mut edges = vec![vec![0; n]; c.number() as usize];
                for &d in c.directions() {
                    for (i, cap) in edges[d.index()].iter_mut().enumerate() {
                        let (x, y) = ((i % w as usize) as u32, (i / w as usize) as u32);
                        if probe.neighbour(x, y, d).is_some() {
                            *cap = 1 + rng.below(50) as i32;
                        }
                    }
                }
                let p = GridProblem::from_arrays(w, h, c, src, sink, edges).expect("grid");
                let what = format!("{w}x{h} {}C ({schedule})", c.number());
                assert_eq!(
                    solve_certified(&mut engine, &p, &what),
                    reference_flow(&p),
                    "{what}"
                );
            }
        }
    }
}

/// A corridor winding through the whole grid row by row (arcs along the rows, between
/// rows only at alternate ends, no diagonals), source at its start, sink at its end: in
/// a 32-wide grid one tile's BFS runs ~1,000 levels deep, in a wider one the seeds of a
/// tile's border lie hundreds of levels apart, so the square tiles' one-warp BFS must
/// hand both to the Jacobi iterations.
#[test]
fn winding_corridors_deeper_than_a_tile_bfs_records() {
    for (schedule, mut engine) in engines() {
        for (w, h) in [(32, 64), (48, 40)] {
            for eight in [false, true] {
                let p = winding_corridor(w, h, eight);
                let what = format!(
                    "corridor {w}x{h} {}C ({schedule})",
                    p.connectivity().number()
                );
                assert_eq!(
                    solve_certified(&mut engine, &p, &what),
                    reference_flow(&p),
                    "{what}"
                );
            }
        }
    }
}

/// The corridor of [`winding_corridors_deeper_than_a_tile_bfs_records`], capacities
/// 1..=50 each way.
fn winding_corridor(w: u32, h: u32, eight: bool) -> GridProblem {
    let c = connectivity(eight);
    let n = (w * h) as usize;
    let mut rng = Rng(u64::from(w) << 8 | u64::from(h));
    let (mut src, mut sink) = (vec![0; n], vec![0; n]);
    src[0] = 1_000_000_000;
    let end = if h.is_multiple_of(2) {
        (h - 1) * w
    } else {
        h * w - 1
    };
    sink[end as usize] = 1_000_000_000;
    let edges = neighbour_capacities(w, h, c, |i, j, d| {
        let Some(j) = j.filter(|_| !d.is_diagonal()) else {
            return 0;
        };
        // between rows y and y + 1 only at the right end for even y, the left for odd
        let (x, y) = (i as u32 % w, i as u32 / w);
        let top = y.min(j as u32 / w);
        let turn = if top % 2 == 0 { w - 1 } else { 0 };
        if d.offset().1 == 0 || x == turn {
            1 + rng.below(50) as i32
        } else {
            0
        }
    });
    GridProblem::from_arrays(w, h, c, src, sink, edges).expect("grid")
}

/// On every schedule: the seed disks' inner tiles have no terminal arcs, which the
/// global relabels of some treat apart (8C square tiles by the queue: calm tiles).
#[test]
fn seed_only_disks_and_images_match_the_reference() {
    for (schedule, mut engine) in engines() {
        seed_disks_and_images(&mut engine, &schedule);
    }
}

fn seed_disks_and_images(engine: &mut CudaEngine, schedule: &str) {
    let mut rng = Rng(4242);
    for (w, h, eight) in [
        (97, 61, false),
        (64, 64, true),
        (130, 100, false),
        (150, 110, true),
    ] {
        let p = seeds_disk(&mut rng, w, h, eight);
        let what = format!("seeds disk {w}x{h} ({schedule})");
        assert_eq!(
            solve_certified(engine, &p, &what),
            reference_flow(&p),
            "{what}"
        );
        let p = image_like(&mut rng, w, h, eight);
        let what = format!("image {w}x{h} ({schedule})");
        assert_eq!(
            solve_certified(engine, &p, &what),
            reference_flow(&p),
            "{what}"
        );
    }
}

/// Capped global relabels run on seeded grids in square tiles (a cap one level above the
/// excess leaves work beyond nearly every time, so whole relabels follow) and the flow
/// stays the reference's, with a certified cut.
#[cfg(feature = "experiments")]
#[test]
fn capped_relabels_on_seed_disks_stay_exact() {
    for margin in [1, 64] {
        let Some(mut engine) = engine_or_skip(CudaConfig {
            tile_height: 32,
            relabel_cap_margin: margin,
            ..CudaConfig::default()
        }) else {
            return;
        };
        let mut rng = Rng(31);
        for (w, h) in [(256, 192), (200, 130)] {
            let p = seeds_disk(&mut rng, w, h, false);
            let what = format!("seeds disk {w}x{h}, cap margin {margin}");
            assert_eq!(
                solve_certified(&mut engine, &p, &what),
                reference_flow(&p),
                "{what}"
            );
            let d = engine.details();
            assert!(d.capped_relabels > 0, "{what}: no capped relabel");
            assert!(d.capped_relabels < d.global_relabels, "{what}");
        }
    }
}

#[test]
fn update_gives_the_same_flow_as_a_fresh_solve() {
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    let Some(mut fresh) = product_engine_or_skip() else {
        return;
    };
    let mut rng = Rng(9);
    let first = random_grid(&mut rng, 50, 40, false, 1000, 40);
    engine.solve(&first).expect("first solve");
    for frame in 0..4 {
        let next = random_grid(&mut rng, 50, 40, false, 1000, 40);
        let updated = engine.update(&next).expect("update");
        assert_eq!(
            cut_capacity(&next, &updated.mask),
            updated.flow,
            "frame {frame}"
        );
        assert_eq!(
            updated.flow,
            solve_certified(&mut fresh, &next, "fresh"),
            "frame {frame}"
        );
    }
}

/// Solves `frames` in turn, the first from scratch and the others as updates that always
/// continue from the kept graph (`set_always_resume`), and checks
/// that every update has the reference flow and gives the same cut as a fresh solve (both
/// engines return the pixels that cannot reach t). Returns how many updates resumed from
/// the kept graph (the others had an offset too large for 32 bits and were solved afresh).
fn check_updates(
    engine: &mut CudaEngine,
    fresh: &mut CudaEngine,
    frames: &[GridProblem],
    what: &str,
) -> usize {
    engine.set_always_resume(true);
    solve_certified(engine, &frames[0], what);
    let mut resumed = 0;
    for (k, p) in frames.iter().enumerate().skip(1) {
        let updated = engine.update(p).expect("update");
        let again = fresh.solve(p).expect("fresh solve");
        let what = format!("{what}, frame {k}");
        assert_eq!(updated.flow, reference_flow(p), "{what}");
        assert_eq!(updated.flow, again.flow, "{what}");
        assert!(updated.mask.data == again.mask.data, "{what}: another cut");
        resumed += usize::from(updated.stats.dynamic);
    }
    resumed
}

/// Sequences of every kind of change (one arc, a few percent, every value, terminals
/// only, neighbours only, a rectangle zeroed and back, a scribble) on 4C and 8C grids,
/// under every schedule.
#[test]
fn updates_of_every_kind_match_fresh_solves() {
    for (schedule, mut engine) in engines() {
        let mut fresh = product_engine_or_skip().expect("a second engine");
        let (mut updates, mut resumed) = (0, 0);
        for (seed, eight) in [(1u64, false), (2, true), (3, false), (4, true)] {
            let mut rng = SplitMix(seed);
            let (w, h) = (40 + rng.below(90) as u32, 30 + rng.below(70) as u32);
            let mut frames = vec![common::generators::random_problem(
                &mut rng,
                w,
                h,
                connectivity(eight),
            )];
            for kind in Change::ALL {
                let last = frames.last().expect("a frame").clone();
                frames.push(change(&mut rng, &last, kind));
                if kind == Change::Zeroed {
                    frames.push(last);
                }
            }
            let what = format!("{schedule} {w}x{h} {}C", if eight { 8 } else { 4 });
            resumed += check_updates(&mut engine, &mut fresh, &frames, &what);
            updates += frames.len() - 1;
        }
        // capacities near 2^31 make some offsets too large; most updates resume
        assert!(
            2 * resumed > updates,
            "{schedule}: {resumed} of {updates} resumed"
        );
    }
}

/// Seed-disk sequences, whose flow crosses many tiles: the stroke moves, a few percent
/// of the values change, and the first frame comes back.
#[test]
fn updates_of_seed_disks_match_fresh_solves() {
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    let mut fresh = product_engine_or_skip().expect("a second engine");
    let mut rng = Rng(31);
    for eight in [false, true] {
        let first = seeds_disk(&mut rng, 300, 200, eight);
        let mut crng = SplitMix(5);
        let frames = [
            first.clone(),
            change(&mut crng, &first, Change::Scribble),
            change(&mut crng, &first, Change::Few),
            first.clone(),
        ];
        let resumed = check_updates(
            &mut engine,
            &mut fresh,
            &frames,
            &format!("seed disk {eight}"),
        );
        assert_eq!(resumed, frames.len() - 1, "seed disk {eight}");
    }
}

#[test]
fn stochastic_cuts_skip_idle_tiles_and_off_visits_every_tile() {
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    assert!(engine.has_stochastic());
    let mut rng = Rng(77);
    for eight in [false, true] {
        let p = seeds_disk(&mut rng, 300, 200, eight);
        let expected = reference_flow(&p);
        engine.set_stochastic(false);
        assert_eq!(solve_certified(&mut engine, &p, "stochastic off"), expected);
        let off = engine.details().clone();
        assert_eq!(
            off.tile_loads as u64,
            off.rounds as u64 * off.tiles as u64,
            "off: every tile every round ({eight})"
        );
        engine.set_stochastic(true);
        assert_eq!(solve_certified(&mut engine, &p, "stochastic on"), expected);
        let on = engine.details().clone();
        assert!(
            (on.tile_loads as u64) < on.rounds as u64 * on.tiles as u64,
            "on: idle tiles skipped ({eight}): {} loads, {} rounds × {} tiles",
            on.tile_loads,
            on.rounds,
            on.tiles
        );
        eprintln!(
            "seeds disk 300x200 {}C: stochastic off {} rounds {} loads {:.1} sweeps; on {} rounds {} loads {:.1} sweeps",
            if eight { 8 } else { 4 },
            off.rounds,
            off.tile_loads,
            off.sweeps,
            on.rounds,
            on.tile_loads,
            on.sweeps
        );
    }
}

#[test]
fn stats_describe_the_solve() {
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    let mut rng = Rng(5);
    let p = random_grid(&mut rng, 100, 70, true, 100, 50);
    let solution = engine.solve(&p).expect("solve");
    let flow = solution.flow;
    let s = solution.stats;
    let gpu = s.gpu.expect("the GPU engine's statistics");
    let a = s.activity.expect("activity");
    // 4×3 square tiles fill no device: half-height tiles, 4×5 of them.
    assert_eq!(engine.details().tile_height, 16);
    assert_eq!((a.block_width, a.block_height), (32, 16));
    assert_eq!((a.columns, a.rows), (4, 5));
    assert_eq!(a.counts.len(), 20);
    assert!(a.counts.iter().map(|&c| c as u64).sum::<u64>() > 0);
    assert!(gpu.global_relabels >= 1 && gpu.launches >= 2 && s.engine_bytes > 0);
    assert!(s.solve_ms > 0.0 && s.upload_ms > 0.0);
    assert!(!s.dynamic);
    // every relabel passes over the grid twice, the output once; those passes over
    // 20 tiles' state (under 1 MB each) take microseconds at full bandwidth
    let sweeps = gpu.sweeps;
    assert_eq!(sweeps, engine.details().sweeps);
    assert!(sweeps >= 2.0 * gpu.global_relabels as f64 + 1.0);
    let floor = gpu.memory_floor_ms.expect("memory floor");
    assert!(
        floor > 0.0 && floor < s.solve_ms,
        "floor {floor} ms, solve {} ms",
        s.solve_ms
    );
    // 20 tiles: far fewer than the device runs at once, so short visits.
    assert_eq!(engine.details().step_budget, 32);
    // the persistent solve of a profiling build logs its counters after every global
    // relabel
    #[cfg(feature = "experiments")]
    {
        let log = engine.relabel_log().expect("relabel log");
        assert_eq!(log.len() as u64, gpu.global_relabels);
        assert!(
            log.windows(2)
                .all(|w| w[1][3] >= w[0][3] && w[1][5] >= w[0][5])
        );
        assert_eq!(
            log.last().map(|r| r[6]),
            Some(flow),
            "flow into t at the last relabel"
        );
    }
    #[cfg(not(feature = "experiments"))]
    let _ = flow;
}

/// The GPU labeller reads the engine's cut where the engine left it on the device: given
/// host values that differ, its labels follow the device's bytes (nothing was uploaded),
/// and they are the canonical labels of the cut the host got.
#[test]
fn the_cut_is_labelled_where_the_engine_left_it() {
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    assert!(engine.device_mask().is_none(), "no cut before a solve");
    let mut gpu = CudaLabeller::new().expect("the labeller opens the engine's device");
    let mut rng = Rng(8);
    for eight in [false, true] {
        let (w, h) = (130, 100);
        let p = seeds_disk(&mut rng, w, h, eight);
        let cut = engine.solve(&p).expect("solve").mask;
        assert!(
            cut.data.contains(&0) && cut.data.contains(&255),
            "a cut with two sides"
        );
        let mut expected = Vec::new();
        CpuLabeller::new()
            .label(&cut.data, w, h, p.connectivity(), &mut expected)
            .expect("CPU labels");
        let device = engine.device_mask().expect("the cut on the device");
        assert_eq!((device.width(), device.height()), (w, h));
        let zeros = vec![0u8; cut.data.len()];
        let mut labels = Vec::new();
        gpu.label_with_device(&zeros, Some(&device), w, h, p.connectivity(), &mut labels)
            .expect("GPU labels of the device's cut");
        assert_eq!(labels, expected, "{}C", p.connectivity().number());
    }
}

#[test]
fn a_large_object_energy_takes_half_height_tiles_and_the_owners_ways() {
    let mut rng = Rng(720);
    // 40×23 square tiles: more than an H100 or H200 runs four times over
    let object = object_like(&mut rng, 1280, 720, false);
    let image = image_like(&mut rng, 1280, 720, false);
    let (o, i) = (Terminals::of(&object), Terminals::of(&image));
    assert!(o.object(), "{o:?}");
    assert!(!i.lopsided() && !i.sparse(), "{i:?}");
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    let flow = solve_certified(&mut engine, &object, "object 1280x720");
    let d = engine.details();
    assert!(d.tile_height == 16 && d.owner_relabel, "{d:?}");
    // the same grid as a balanced image energy keeps square tiles and the queue
    solve_certified(&mut engine, &image, "image 1280x720");
    let d = engine.details();
    assert!(d.tile_height == 32 && !d.owner_relabel, "{d:?}");
    // and the object again, on the engine's reused buffers
    assert_eq!(solve_certified(&mut engine, &object, "object again"), flow);
    // 8C: the owners' relabels and short visits
    let object8 = object_like(&mut rng, 1280, 720, true);
    solve_certified(&mut engine, &object8, "object 1280x720 8C");
    let d = engine.details();
    assert!(d.owner_relabel && d.step_budget == 32, "{d:?}");
}

/// Small solves (4 tiles, 4C and 8C, coloured and concurrent, and a seeded 4C grid whose
/// relabels the persistent solve in square tiles must cap) for `compute-sanitizer --tool
/// racecheck|memcheck`, on every schedule setting of `schedule`.
#[cfg(feature = "experiments")]
fn sanitizer_solves(schedule: Schedule) {
    for config in schedules().into_iter().filter(|c| c.schedule == schedule) {
        let Some(mut engine) = engine_or_skip(config) else {
            return;
        };
        let mut rng = Rng(1234);
        sanitizer_small_grids(&mut engine, &mut rng, &describe(&config));
        // a seeded grid, whose relabels in square tiles are capped
        if config.tile_height != 32 {
            continue;
        }
        let p = seeds_disk(&mut rng, 64, 48, false);
        let what = format!("small seeds disk {}", describe(&config));
        assert_eq!(
            solve_certified(&mut engine, &p, &what),
            reference_flow(&p),
            "{what}"
        );
        // the persistent solve caps some of its relabels here
        let d = engine.details();
        let capping = config.schedule == Schedule::Persistent && config.relabel_cap_margin > 0;
        assert_eq!(d.capped_relabels > 0, capping, "{what}: {d:?}");
        eprintln!(
            "{what}: ok, {} of {} global relabels capped",
            d.capped_relabels, d.global_relabels
        );
    }
}

/// The small random grids of the sanitizer runs, 4C and 8C.
fn sanitizer_small_grids(engine: &mut CudaEngine, rng: &mut Rng, schedule: &str) {
    for eight in [false, true] {
        let p = random_grid(rng, 50, 40, eight, 50, 30);
        let what = format!("small {schedule} {}C", if eight { 8 } else { 4 });
        assert_eq!(
            solve_certified(engine, &p, &what),
            reference_flow(&p),
            "{what}"
        );
        let next = change(&mut SplitMix(7), &p, Change::Few);
        let updated = engine.update(&next).expect("update");
        assert_eq!(updated.flow, reference_flow(&next), "{what}: update");
        assert_eq!(
            cut_capacity(&next, &updated.mask),
            updated.flow,
            "{what}: update cut"
        );
        eprintln!("{what}: ok");
    }
}

#[test]
fn sanitizer_small_persistent() {
    #[cfg(feature = "experiments")]
    sanitizer_solves(Schedule::Persistent);
    // the product's schedule is the persistent one
    #[cfg(not(feature = "experiments"))]
    if let Some(mut engine) = product_engine_or_skip() {
        sanitizer_small_grids(&mut engine, &mut Rng(1234), "product schedule");
    }
}

#[cfg(feature = "experiments")]
#[test]
fn sanitizer_small_host_loop() {
    sanitizer_solves(Schedule::HostLoop);
}

/// A budgeted solve, its continuation and the exact call after it on small grids: the
/// stop, the cut's capacity kernel and the update from a stopped preflow, small enough
/// for the sanitizers.
#[test]
fn sanitizer_small_budgeted() {
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    engine.set_always_resume(true);
    let mut rng = Rng(4321);
    for eight in [false, true] {
        let p = random_grid(&mut rng, 96, 72, eight, 50, 30);
        let exact = reference_flow(&p);
        engine.set_budget(Some(std::time::Duration::ZERO));
        for call in 0..2 {
            let s = if call == 0 {
                engine.solve(&p)
            } else {
                engine.update(&p)
            }
            .unwrap();
            if let Some(c) = s.stats.stopped {
                assert_eq!(cut_capacity(&p, &s.mask), c.cut, "{eight} call {call}");
                assert!(c.flow <= exact && exact <= c.cut, "{c:?} vs {exact}");
            } else {
                assert_eq!(s.flow, exact, "{eight} call {call}: a call run to the end");
            }
        }
        engine.set_budget(None);
        let s = engine.update(&p).unwrap();
        assert_eq!(s.flow, exact, "{eight}: the call without a budget");
        assert_eq!(cut_capacity(&p, &s.mask), exact, "{eight}: its cut");
    }
}

/// Solves and updates stopped at once by a zero budget return cuts whose certificates
/// hold, and the first call without a budget gives the exact flow and mask: it
/// continues from the stopped preflow or solves afresh, exact either way.
#[test]
fn budgeted_calls_certify_their_cuts_and_the_next_calls_finish_them() {
    let Some(mut engine) = product_engine_or_skip() else {
        return;
    };
    let mut exact = product_engine_or_skip().expect("a device, as above");
    let (mut calls, mut stops) = (0, 0);
    for seed in 0..24u64 {
        let mut rng = Rng(seed + 1);
        let mut changes = SplitMix(seed);
        // large enough that a solve takes several global relabels
        let (w, h) = (192 + 32 * (seed as u32 % 5), 144 + 24 * (seed as u32 % 4));
        let mut p = random_grid(&mut rng, w, h, seed % 2 == 1, 1000, 60);
        engine.set_always_resume(true);
        assert!(engine.set_budget(Some(std::time::Duration::ZERO)));
        for step in 0..4 {
            if step > 0 {
                p = change(&mut changes, &p, Change::ALL[(seed as usize + step) % 7]);
            }
            let s = if step == 0 {
                engine.solve(&p)
            } else {
                engine.update(&p)
            }
            .unwrap();
            let best = exact.solve(&p).unwrap();
            calls += 1;
            let Some(c) = s.stats.stopped else {
                assert_eq!(
                    (s.flow, &s.mask),
                    (best.flow, &best.mask),
                    "seed {seed}: exact"
                );
                continue;
            };
            stops += 1;
            assert_eq!(c.flow, s.flow, "seed {seed} step {step}");
            assert_eq!(
                cut_capacity(&p, &s.mask),
                c.cut,
                "seed {seed} step {step}: cut"
            );
            assert!(
                c.flow <= best.flow && best.flow <= c.cut,
                "seed {seed} step {step}: {c:?} vs {}",
                best.flow
            );
        }
        engine.set_budget(None);
        let s = engine.update(&p).unwrap();
        let best = exact.solve(&p).unwrap();
        assert!(s.stats.stopped.is_none());
        assert_eq!(
            (s.flow, &s.mask),
            (best.flow, &best.mask),
            "seed {seed}: finished"
        );
    }
    assert!(
        stops * 4 > calls,
        "only {stops} of {calls} calls stopped at their budget"
    );
}

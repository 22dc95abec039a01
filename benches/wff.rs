//! Wave Front Fetch against push-relabel on the CUDA volume engine (cargo feature
//! `experiments`, a GPU needed): every 2D instance of `../shared/data/grids` (cut as a
//! volume of one slice, beside the tiled 2D engine), every 3D instance of
//! `../shared/data/grids3d`, each schedule checked against the manifest's flow, and the
//! generated volumes of `benches/volumes.rs`.
//!
//! `cargo bench --features experiments --bench wff` prints, per instance, the median
//! wall milliseconds of a whole solve (upload, search, cut) of each, runs alternating,
//! and the ratio WFF / push-relabel. Where the shared data lives: `$LIVECUT_GRIDS` and
//! `$LIVECUT_GRIDS3D`, else beside the checkout, else `grids/` and `grids3d/` here.

// The test suite's instance lookup.
#[path = "../tests/common/mod.rs"]
mod common;

use common::grids::{grids_dir, manifest};
use common::volumes::{GENERATED, drifting_disk, grids3d_dir, manifest3d};
use livecut::energy::volume::{Gather, Slice};
use livecut::grid::{GridProblem, VolumeProblem};
use livecut::maxflow::cuda::{CudaEngine, CudaVolumeEngine, VolumeSchedule};
use livecut::maxflow::{Engine, VolumeEngine, dimacs};
use std::time::Instant;

const RUNS: usize = 7;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// A 2D problem as a volume of one slice (4 neighbours: 6, 8: 10; no arcs along z).
fn one_slice(p: &GridProblem) -> VolumeProblem {
    let mut gather = Gather::new(1);
    gather.push(p).expect("one frame");
    let rgb = vec![0; 3 * p.pixels()];
    let slice = Slice {
        rgb: &rgb,
        hard: None,
    };
    gather.finish(&[slice], &[]).expect("a volume of one slice")
}

/// Wall milliseconds and flow of one solve by `solve`.
fn timed(solve: &mut dyn FnMut() -> u64) -> (f64, u64) {
    let t = Instant::now();
    let flow = solve();
    (t.elapsed().as_secs_f64() * 1e3, flow)
}

/// Medians of the solvers, run in turn `RUNS` times after one warm-up each; every flow
/// must be `expected`.
fn race(name: &str, expected: u64, solvers: &mut [&mut dyn FnMut() -> u64]) -> Vec<f64> {
    let mut times = vec![Vec::new(); solvers.len()];
    for solve in solvers.iter_mut() {
        timed(*solve);
    }
    for _ in 0..RUNS {
        for (k, solve) in solvers.iter_mut().enumerate() {
            let (ms, flow) = timed(*solve);
            assert_eq!(flow, expected, "{name}: solver {k}");
            times[k].push(ms);
        }
    }
    times.into_iter().map(median).collect()
}

fn main() {
    let (mut pr, mut wff, mut plane) = match (
        CudaVolumeEngine::with_schedule(VolumeSchedule::PushRelabel),
        CudaVolumeEngine::with_schedule(VolumeSchedule::WaveFrontFetch),
        CudaEngine::new(),
    ) {
        (Ok(a), Ok(b), Ok(c)) => (a, b, c),
        _ => {
            println!("no CUDA device: nothing to time");
            return;
        }
    };
    println!("{}", pr.description());
    println!(
        "| instance | size | C | 2D engine ms | push-relabel ms | WFF ms | WFF / PR | WFF handed over |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |");
    if let Some(dir) = grids_dir() {
        for (file, expected) in manifest(&dir) {
            let p = dimacs::read_path(&dir.join(&file)).expect("2D instance");
            let v = one_slice(&p);
            let ms = race(
                &file,
                expected,
                &mut [
                    &mut || plane.solve(&p).expect("2D solve").flow,
                    &mut || pr.solve(&v).expect("push-relabel").flow,
                    &mut || wff.solve(&v).expect("WFF").flow,
                ],
            );
            let size = format!("{}×{}", p.width(), p.height());
            let c = p.connectivity().number();
            row(&file, &size, c, Some(ms[0]), ms[1], ms[2], wff.took_over());
        }
    }
    if let Some(dir) = grids3d_dir() {
        for (file, [w, h, d, c], expected) in manifest3d(&dir) {
            let v = dimacs::read_volume_path(&dir.join(&file)).expect("3D instance");
            let ms = race(
                &file,
                expected,
                &mut [
                    &mut || pr.solve(&v).expect("push-relabel").flow,
                    &mut || wff.solve(&v).expect("WFF").flow,
                ],
            );
            let size = format!("{w}×{h}×{d}");
            row(&file, &size, c, None, ms[0], ms[1], wff.took_over());
        }
    }
    for (size, c) in GENERATED {
        let v = drifting_disk(size, c);
        let expected = pr.solve(&v).expect("push-relabel").flow;
        let ms = race(
            "generated",
            expected,
            &mut [
                &mut || pr.solve(&v).expect("push-relabel").flow,
                &mut || wff.solve(&v).expect("WFF").flow,
            ],
        );
        let size = format!("{}×{}×{}", size.0, size.1, size.2);
        row(
            "generated",
            &size,
            c.number(),
            None,
            ms[0],
            ms[1],
            wff.took_over(),
        );
    }
}

fn row(file: &str, size: &str, c: u32, plane: Option<f64>, pr: f64, wff: f64, took_over: bool) {
    let plane = plane.map_or("-".to_string(), |ms| format!("{ms:.2}"));
    let over = if took_over { "yes" } else { "no" };
    println!(
        "| {file} | {size} | {c} | {plane} | {pr:.2} | {wff:.2} | {:.2} | {over} |",
        wff / pr
    );
}

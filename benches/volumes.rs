//! The volume engines side by side on generated segmentation-like volumes of 0.3 to
//! 3.3 M voxels (6, 10 and 26 neighbours; a video volume of 854×480×8): a blob of
//! foreground voxels drifting through the slices, noisy data terms and smooth
//! neighbour arcs, so that flow crosses many voxels as in a real cut.
//!
//! `cargo bench --bench volumes` prints, per volume, the median wall milliseconds of a
//! whole solve (upload, search, cut) of the CPU engine and, where a CUDA device is
//! present, of the CUDA engine (and the medians of its upload and search), with the
//! ratio CPU / CUDA; runs alternate between the engines, and both must give the same
//! flow.

// The test suite's volume generator.
#[path = "../tests/common/mod.rs"]
mod common;

use common::volumes::{GENERATED, drifting_disk as volume};
use livecut::grid::VolumeProblem;
use livecut::maxflow::VolumeEngine;
use livecut::maxflow::cpu::CpuVolumeEngine;
use livecut::maxflow::cuda::CudaVolumeEngine;
use std::time::Instant;

const RUNS: usize = 5;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// What one solve took: wall milliseconds, and the engine's upload and search.
struct Timed {
    wall: f64,
    upload: f64,
    search: f64,
    flow: u64,
}

fn time(engine: &mut dyn VolumeEngine, p: &VolumeProblem) -> Timed {
    let t = Instant::now();
    let s = engine.solve(p).expect("solve");
    Timed {
        wall: t.elapsed().as_secs_f64() * 1e3,
        upload: s.stats.upload_ms,
        search: s.stats.solve_ms,
        flow: s.flow,
    }
}

fn main() {
    let mut cuda = match CudaVolumeEngine::new() {
        Ok(engine) => {
            println!("CUDA: {}", engine.description());
            Some(engine)
        }
        Err(err) => {
            println!("no CUDA volume engine ({err}): CPU only");
            None
        }
    };
    let mut cpu = CpuVolumeEngine::new();
    println!("| volume | C | voxels | CPU ms | CUDA ms (upload + search) | CPU / CUDA |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: |");
    for (size, c) in GENERATED {
        let p = volume(size, c);
        if let Some(engine) = cuda.as_mut() {
            time(engine, &p); // the kernels' compilation and first allocation
        }
        let (mut on_cpu, mut on_gpu) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let timed = time(&mut cpu, &p);
            if let Some(engine) = cuda.as_mut() {
                let gpu = time(engine, &p);
                let what = format!("{size:?} {}C", c.number());
                assert_eq!(gpu.flow, timed.flow, "{what}: the engines' flows");
                on_gpu.push(gpu);
            }
            on_cpu.push(timed.wall);
        }
        let cpu_ms = median(on_cpu);
        let (gpu, ratio) = if on_gpu.is_empty() {
            ("-".to_string(), "-".to_string())
        } else {
            let of = |f: fn(&Timed) -> f64| median(on_gpu.iter().map(f).collect());
            let (wall, upload, search) = (of(|t| t.wall), of(|t| t.upload), of(|t| t.search));
            (
                format!("{wall:.1} ({upload:.1} + {search:.1})"),
                format!("{:.2}", cpu_ms / wall),
            )
        };
        println!(
            "| {}×{}×{} | {} | {} | {cpu_ms:.1} | {gpu} | {ratio} |",
            size.0,
            size.1,
            size.2,
            c.number(),
            p.voxels()
        );
    }
}

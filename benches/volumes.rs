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

use livecut::grid::{VolumeConnectivity, VolumeProblem};
use livecut::maxflow::VolumeEngine;
use livecut::maxflow::cpu::CpuVolumeEngine;
use livecut::maxflow::cuda::CudaVolumeEngine;
use std::time::Instant;

const RUNS: usize = 5;

const VOLUMES: [((u32, u32, u32), VolumeConnectivity); 6] = [
    ((360, 240, 4), VolumeConnectivity::Ten),
    ((854, 480, 8), VolumeConnectivity::Ten),
    ((128, 128, 64), VolumeConnectivity::Six),
    ((256, 256, 32), VolumeConnectivity::Six),
    ((64, 64, 64), VolumeConnectivity::TwentySix),
    ((128, 128, 64), VolumeConnectivity::TwentySix),
];

/// xorshift64: deterministic noise.
struct Noise(u64);

impl Noise {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// A disk of source voxels that moves a voxel per slice, in a field of sink voxels,
/// with data terms of ±40 plus noise of ±60 and neighbour arcs of 20–49.
fn volume((w, h, d): (u32, u32, u32), c: VolumeConnectivity) -> VolumeProblem {
    let probe = VolumeProblem::zeros(w, h, d, c).expect("volume size");
    let n = probe.voxels();
    let mut noise = Noise(0x9E37_79B9_7F4A_7C15);
    let (cx, cy, r) = (w as f64 / 3.0, h as f64 / 2.0, w.min(h) as f64 / 4.0);
    let (mut source, mut sink) = (vec![0; n], vec![0; n]);
    for i in 0..n {
        let (x, y, z) = probe.coords(i);
        let (dx, dy) = (x as f64 - cx - z as f64, y as f64 - cy);
        let prior = if dx * dx + dy * dy < r * r { 40 } else { -40 };
        let data = prior + noise.below(121) as i32 - 60;
        if data > 0 {
            source[i] = data;
        } else {
            sink[i] = -data;
        }
    }
    let edges = (0..c.number() as usize)
        .map(|k| {
            (0..n)
                .map(|i| probe.step(i, k).map_or(0, |_| 20 + noise.below(30) as i32))
                .collect()
        })
        .collect();
    VolumeProblem::from_arrays((w, h, d), c, source, sink, edges).expect("a valid volume")
}

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
    for (size, c) in VOLUMES {
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

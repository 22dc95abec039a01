//! The CUDA engine's schedule lab (cargo feature `experiments`, a GPU needed): what each
//! schedule setting does on the shared instances and on generated grids, what a block
//! barrier costs, and one host-loop solve to profile. Not a check: the tests are in
//! `tests/cuda_engine.rs`.
//!
//! `cargo bench --features experiments --bench gpu_schedules -- [schedules|barrier|host-loop|dynamic]`
//! (default `schedules`); on the GPU machine, the binary that
//! `cargo bench --features experiments --no-run --bench gpu_schedules` names, with the
//! same argument (`benches/gpu/run.sh`). `schedules` reads `LIVECUT_VARIANTS=a,b`
//! (settings), `LIVECUT_ONLY=a,b` (instances whose names contain one of those) and
//! `LIVECUT_LOG=1` (the counters after every global relabel of each setting). Where the
//! shared data lives: `$LIVECUT_GRIDS`, else `../shared/data/grids` beside the checkout,
//! else `grids/` in the working directory. `dynamic` segments a sequence
//! (`LIVECUT_SEQUENCE`: a frames folder or `demo`; `LIVECUT_SIZE=WxH`, `LIVECUT_FRAMES`,
//! `LIVECUT_BACKGROUND`, default 10) with the energy on the device and solves every frame
//! both afresh and continued from the kept graph, printing what each did. `transfer`
//! times a 1080p frame's upload and mask download from pageable and pinned host memory.

// The test suite's generators and instance lookup, which earlier reports used.
#[path = "../tests/common/mod.rs"]
mod common;

use common::generators::{image_like, object_like, seeds_disk};
use common::grids::{grids_dir, manifest};
use common::rng::XorShift as Rng;
use cudarc::driver::{CudaFunction, CudaModule, LaunchConfig, PushKernelArg};
use livecut::gpu::{Gpu, GpuError, KernelFamily, Program};
use livecut::grid::{GridProblem, cut_capacity};
use livecut::maxflow::cuda::{CudaConfig, CudaEngine, Schedule};
use livecut::maxflow::{Engine, EngineError, dimacs};
use std::sync::Arc;

fn main() {
    // `cargo bench` adds `--bench`; the first other argument picks the harness
    let which = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_else(|| "schedules".to_string());
    match which.as_str() {
        "schedules" => report_schedules(),
        "barrier" => barrier_cost(),
        "host-loop" => profile_host_loop(),
        "dynamic" => dynamic::report(),
        "transfer" => transfer_cost(),
        other => {
            eprintln!(
                "unknown harness {other}: schedules, barrier, host-loop, dynamic or transfer"
            );
            std::process::exit(2);
        }
    }
}

/// The engine with `config`, or `None` (with a note) when this machine has no device.
fn engine_or_skip(config: CudaConfig) -> Option<CudaEngine> {
    match CudaEngine::with_config(config) {
        Ok(engine) => Some(engine),
        Err(EngineError::Gpu(GpuError::Unavailable(why))) => {
            eprintln!("note: skipping, no CUDA device ({why})");
            None
        }
        Err(other) => panic!("CUDA engine failed to start: {other}"),
    }
}

// ---------------------------------------------------------------------------------
// What a block barrier costs

/// A kernel of its own that times `iters` barriers of one kind per block.
struct BarrierKernel {
    bar: CudaFunction,
}

impl KernelFamily for BarrierKernel {
    type Variant = ();

    fn program((): ()) -> Program {
        Program {
            name: "barrier.cu",
            text: BARRIER_SOURCE.to_string(),
            options: Vec::new(),
        }
    }

    fn load(_gpu: &Gpu, module: &Arc<CudaModule>, (): ()) -> Result<Self, GpuError> {
        let bar = module.load_function("bar").map_err(|e| GpuError::Driver {
            what: "kernel bar".into(),
            message: e.to_string(),
        })?;
        Ok(Self { bar })
    }
}

const BARRIER_SOURCE: &str = r#"
extern "C" __global__ void bar(unsigned long long* out, int iters, int kind) {
    __shared__ int x[1024];
    int v = threadIdx.x;
    long long t0 = clock64();
    for (int k = 0; k < iters; ++k) {
        x[threadIdx.x] = v;
        if (kind == 0) __syncthreads();
        else if (kind == 1) v += __syncthreads_or(v & 1);
        else __syncwarp();
        v += x[(threadIdx.x + 1) % blockDim.x];
    }
    long long t1 = clock64();
    if (threadIdx.x == 0) out[blockIdx.x] = (unsigned long long)(t1 - t0);
    if (v == 12345678) out[0] = 0;
}"#;

/// The process's GPU, or `None` after saying why there is none.
fn gpu_or_skip() -> Option<Arc<Gpu>> {
    Gpu::get()
        .map_err(|e| eprintln!("note: skipping ({e})"))
        .ok()
}

/// Cycles per block barrier for 1024/512/256-thread blocks (what a tile step or BFS
/// iteration pays per barrier), on one block and on 132.
fn barrier_cost() {
    let Some(gpu) = gpu_or_skip() else {
        return;
    };
    let kernel = gpu.kernels::<BarrierKernel>(()).expect("barrier kernel");
    let stream = gpu.new_stream().expect("stream");
    let iters = 2000i32;
    for blocks in [1u32, 132] {
        for threads in [1024u32, 512, 256] {
            for (kind, name) in [
                (0i32, "__syncthreads"),
                (1, "__syncthreads_or"),
                (2, "__syncwarp"),
            ] {
                let mut out = stream.alloc_zeros::<u64>(blocks as usize).expect("alloc");
                let cfg = LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (threads, 1, 1),
                    shared_mem_bytes: 0,
                };
                for _ in 0..2 {
                    // SAFETY: `bar` takes the output array (one word per block) and two ints.
                    unsafe {
                        stream
                            .launch_builder(&kernel.bar)
                            .arg(&mut out)
                            .arg(&iters)
                            .arg(&kind)
                            .launch(cfg)
                    }
                    .expect("launch");
                }
                let cycles = stream.clone_dtoh(&out).expect("read");
                let max = *cycles.iter().max().expect("blocks") as f64 / iters as f64;
                println!(
                    "micro: {blocks:>3} blocks x {threads:>4} threads {name:<17} {max:>7.1} cycles per iteration"
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------
// What a frame's copies cost

/// The middle of `values` (0 for none).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied().unwrap_or(0.0)
}

/// Median milliseconds of `f` over `runs` calls.
fn median_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let t = std::time::Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

/// A 1920×1080 RGB frame up and its mask down, from and to pageable memory and through
/// pinned staging buffers (the host copy included), each synchronised.
fn transfer_cost() {
    let Some(gpu) = gpu_or_skip() else {
        return;
    };
    let stream = gpu.new_stream().expect("stream");
    let (rgb_len, mask_len) = (1920 * 1080 * 3, 1920 * 1080);
    let frame: Vec<u8> = (0..rgb_len).map(|i| (i * 7) as u8).collect();
    let mut mask = vec![0u8; mask_len];
    let mut d_rgb = stream.alloc_zeros::<u8>(rgb_len).expect("alloc");
    let d_mask = stream.alloc_zeros::<u8>(mask_len).expect("alloc");
    // SAFETY: the pinned buffers are written before any copy reads them.
    let (mut p_rgb, mut p_mask) = unsafe {
        (
            gpu.context().alloc_pinned::<u8>(rgb_len).expect("pinned"),
            gpu.context().alloc_pinned::<u8>(mask_len).expect("pinned"),
        )
    };
    let up_pageable = median_ms(40, || {
        stream.memcpy_htod(&frame, &mut d_rgb).unwrap();
        stream.synchronize().unwrap();
    });
    let up_pinned = median_ms(40, || {
        p_rgb.as_mut_slice().unwrap().copy_from_slice(&frame);
        stream.memcpy_htod(&p_rgb, &mut d_rgb).unwrap();
        stream.synchronize().unwrap();
    });
    let up_pinned_only = median_ms(40, || {
        stream.memcpy_htod(&p_rgb, &mut d_rgb).unwrap();
        stream.synchronize().unwrap();
    });
    let down_pageable = median_ms(40, || {
        stream.memcpy_dtoh(&d_mask, &mut mask).unwrap();
        stream.synchronize().unwrap();
    });
    let down_pinned = median_ms(40, || {
        stream.memcpy_dtoh(&d_mask, &mut p_mask).unwrap();
        stream.synchronize().unwrap();
        mask.copy_from_slice(p_mask.as_slice().unwrap());
    });
    println!(
        "1080p frame up: pageable {up_pageable:.3} ms, pinned staging {up_pinned:.3} (copy alone {up_pinned_only:.3}); mask down: pageable {down_pageable:.3}, pinned staging {down_pinned:.3}"
    );
}

// ---------------------------------------------------------------------------------
// Fresh against continued solves on a sequence

mod dynamic {
    use livecut::capture::{DemoConfig, DemoSource, Frame, FrameSource, SourceSpec};
    use livecut::gpu::{DeviceGrid, DeviceMask};
    use livecut::grid::GridProblem;
    use livecut::maxflow::cuda::{CudaConfig, CudaDetails, CudaEngine};
    use livecut::maxflow::{CutSide, Engine, EngineError, EngineKind, Solution};
    use livecut::pipeline::{SegmentParams, Segmenter};
    use std::sync::{Arc, Mutex};

    use super::median;

    /// What one engine call did.
    #[derive(Clone, Debug)]
    struct Call {
        ms: f64,
        flow: u64,
        dynamic: bool,
        changed: u64,
        details: CudaDetails,
        log: Vec<[u64; livecut::maxflow::cuda::LOG_COLS]>,
    }

    /// Two engines on the same capacities: one always afresh, one always continued.
    struct Paired {
        fresh: CudaEngine,
        kept: CudaEngine,
        calls: Arc<Mutex<Vec<(Call, Call)>>>,
    }

    fn call(engine: &CudaEngine, s: &Solution) -> Call {
        Call {
            ms: s.stats.solve_ms,
            flow: s.flow,
            dynamic: s.stats.dynamic,
            changed: s.stats.changed_arcs,
            details: engine.details().clone(),
            log: engine.relabel_log().unwrap_or_default(),
        }
    }

    impl Paired {
        fn both(
            &mut self,
            fresh: Result<Solution, EngineError>,
            kept: Result<Solution, EngineError>,
        ) -> Result<Solution, EngineError> {
            let (fresh, kept) = (fresh?, kept?);
            let pair = (call(&self.fresh, &fresh), call(&self.kept, &kept));
            self.calls.lock().unwrap().push(pair);
            Ok(kept)
        }
    }

    impl Engine for Paired {
        fn kind(&self) -> EngineKind {
            EngineKind::Cuda
        }
        fn description(&self) -> String {
            self.kept.description()
        }
        fn cut_side(&self) -> CutSide {
            self.kept.cut_side()
        }
        fn solve(&mut self, p: &GridProblem) -> Result<Solution, EngineError> {
            let (a, b) = (self.fresh.solve(p), self.kept.solve(p));
            self.both(a, b)
        }
        fn update(&mut self, p: &GridProblem) -> Result<Solution, EngineError> {
            let (a, b) = (self.fresh.solve(p), self.kept.update(p));
            self.both(a, b)
        }
        fn solve_device(
            &mut self,
            grid: &DeviceGrid,
            resume: bool,
        ) -> Option<Result<Solution, EngineError>> {
            let a = self.fresh.solve_device(grid, false)?;
            let b = self.kept.solve_device(grid, resume)?;
            Some(self.both(a, b))
        }
        fn device_mask(&self) -> Option<DeviceMask<'_>> {
            self.kept.device_mask()
        }
    }

    fn env(name: &str) -> Option<String> {
        std::env::var(name).ok().filter(|v| !v.is_empty())
    }

    fn frames(source: &str, size: Option<(u32, u32)>, count: usize) -> Vec<Frame> {
        let mut src: Box<dyn FrameSource> = if source == "demo" {
            let (width, height) = size.unwrap_or((640, 480));
            Box::new(
                DemoSource::new(DemoConfig {
                    width,
                    height,
                    frames: Some(count as u64),
                    ..DemoConfig::default()
                })
                .expect("demo"),
            )
        } else {
            SourceSpec::Folder(source.into())
                .open()
                .expect("frames folder")
        };
        let frames: Vec<Frame> = std::iter::from_fn(|| src.next_frame().unwrap().map(|c| c.frame))
            .take(count)
            .collect();
        let Some((w, h)) = size else { return frames };
        frames
            .into_iter()
            .map(|f| {
                if (f.width, f.height) == (w, h) {
                    return f;
                }
                let image = image::RgbImage::from_raw(f.width, f.height, f.rgb.clone()).unwrap();
                let scaled =
                    image::imageops::resize(&image, w, h, image::imageops::FilterType::Triangle);
                Frame {
                    width: w,
                    height: h,
                    rgb: scaled.into_raw(),
                    ..f
                }
            })
            .collect()
    }

    /// Segments the sequence and prints each frame's fresh and continued solve.
    pub fn report() {
        let source = env("LIVECUT_SEQUENCE").unwrap_or_else(|| "demo".into());
        let size = env("LIVECUT_SIZE").and_then(|s| {
            let (w, h) = s.split_once('x')?;
            Some((w.parse().ok()?, h.parse().ok()?))
        });
        let background: u32 = env("LIVECUT_BACKGROUND").map_or(10, |v| v.parse().unwrap());
        let count: usize = env("LIVECUT_FRAMES").map_or(60, |v| v.parse().unwrap());
        let log = env("LIVECUT_LOG").is_some();
        let open = || match CudaEngine::with_config(CudaConfig::default()) {
            Ok(e) => Some(e),
            Err(e) => {
                eprintln!("note: skipping ({e})");
                None
            }
        };
        let (Some(fresh), Some(mut kept)) = (open(), open()) else {
            return;
        };
        kept.set_always_resume(true);
        let calls = Arc::new(Mutex::new(Vec::new()));
        let paired = Paired {
            fresh,
            kept,
            calls: calls.clone(),
        };
        let params = SegmentParams {
            dynamic: true,
            background_frames: background,
            ..SegmentParams::default()
        };
        let mut segmenter = Segmenter::new(Box::new(paired), params);
        segmenter.set_device_energy(true);
        let frames = frames(&source, size, count + background as usize);
        println!(
            "{source} {}x{}, {} frames, background {background}",
            frames[0].width,
            frames[0].height,
            frames.len()
        );
        println!(
            "{:>5} | {:>7} {:>3} {:>4} {:>6} {:>6} | {:>7} {:>3} {:>4} {:>6} {:>6} {:>8} {:>3} | same",
            "frame",
            "fresh",
            "gr",
            "rnd",
            "loads",
            "bfs",
            "kept",
            "gr",
            "rnd",
            "loads",
            "bfs",
            "changed",
            "dyn"
        );
        for (k, frame) in frames.iter().enumerate() {
            segmenter.segment(frame).expect("segment");
            let calls = calls.lock().unwrap();
            let Some((a, b)) = calls.last().filter(|_| k >= background as usize) else {
                continue;
            };
            let d = |c: &Call| {
                format!(
                    "{:>7.3} {:>3} {:>4} {:>6} {:>6}",
                    c.ms,
                    c.details.global_relabels,
                    c.details.rounds,
                    c.details.tile_loads,
                    c.details.bfs_tiles
                )
            };
            println!(
                "{k:>5} | {} | {} {:>8} {:>3} | {}",
                d(a),
                d(b),
                b.changed,
                u8::from(b.dynamic),
                if a.flow == b.flow { "yes" } else { "NO" }
            );
            if log {
                for row in &b.log {
                    println!("        kept log {row:?}");
                }
            }
        }
        let calls = calls.lock().unwrap();
        let tail = &calls[calls.len().min(1)..];
        let fresh = median(tail.iter().map(|(a, _)| a.ms).collect());
        let kept = median(tail.iter().map(|(_, b)| b.ms).collect());
        let gr =
            |f: &dyn Fn(&(Call, Call)) -> u32| median(tail.iter().map(|c| f(c) as f64).collect());
        println!(
            "median cut ms: fresh {fresh:.3} (gr {:.0}, rounds {:.0}), kept {kept:.3} (gr {:.0}, rounds {:.0}): {:.2}x; flows same on {}/{}",
            gr(&|c| c.0.details.global_relabels),
            gr(&|c| c.0.details.rounds),
            gr(&|c| c.1.details.global_relabels),
            gr(&|c| c.1.details.rounds),
            fresh / kept,
            tail.iter().filter(|(a, b)| a.flow == b.flow).count(),
            tail.len()
        );
    }
}

// ---------------------------------------------------------------------------------
// One host-loop solve to profile

/// One host-loop solve of the rocket instance, for `ncu -k regex:pr_...`.
fn profile_host_loop() {
    let Some(dir) = grids_dir() else { return };
    let Some(mut engine) = engine_or_skip(CudaConfig {
        schedule: Schedule::HostLoop,
        ..CudaConfig::default()
    }) else {
        return;
    };
    let p = dimacs::read_path(&dir.join("rocket_640x480_4c.max.gz")).expect("instance");
    let s = engine.solve(&p).expect("solve");
    assert_eq!(cut_capacity(&p, &s.mask), s.flow, "certified cut");
}

// ---------------------------------------------------------------------------------
// Schedules

/// Prints what each schedule setting does on the shared instances and on generated
/// grids, with the critical path split between global relabels and discharge.
fn report_schedules() {
    let Some(dir) = grids_dir() else { return };
    let Some(mut engine) = engine_or_skip(CudaConfig::default()) else {
        return;
    };
    println!("{}", engine.description());
    let mut problems: Vec<(String, GridProblem, Option<u64>)> = manifest(&dir)
        .into_iter()
        .filter(|(f, _)| {
            f.starts_with("rocket")
                || f.starts_with("coins")
                || f.starts_with("seeds")
                || f.starts_with("chelsea")
                || f.starts_with("camera")
        })
        .map(|(f, flow)| {
            (
                f.clone(),
                dimacs::read_path(&dir.join(&f)).expect("instance"),
                Some(flow),
            )
        })
        .collect();
    // Generated in this order from one seed: the 1080p grids first, as earlier reports
    // generated them.
    type Make = fn(&mut Rng, u32, u32, bool) -> GridProblem;
    let generated: [(&str, Make, u32, u32, bool); 24] = [
        ("seeds_disk", seeds_disk, 1920, 1080, false),
        ("image", image_like, 1920, 1080, false),
        ("image", image_like, 1920, 1080, true),
        ("image", image_like, 640, 480, false),
        ("image", image_like, 1280, 720, false),
        ("seeds_disk", seeds_disk, 1280, 720, false),
        ("image", image_like, 1280, 720, true),
        ("seeds_disk", seeds_disk, 1920, 1080, true),
        ("object", object_like, 640, 480, false),
        ("object", object_like, 400, 300, true),
        ("object", object_like, 384, 288, false),
        ("seeds_disk", seeds_disk, 640, 480, false),
        ("seeds_disk", seeds_disk, 512, 384, false),
        ("seeds_disk", seeds_disk, 400, 300, false),
        ("seeds_disk", seeds_disk, 352, 256, false),
        ("image", image_like, 512, 512, false),
        ("image", image_like, 400, 300, false),
        ("object", object_like, 512, 384, false),
        ("image", image_like, 1024, 768, false),
        ("object", object_like, 1280, 720, false),
        ("object", object_like, 1024, 768, false),
        ("object", object_like, 1920, 1080, false),
        ("object", object_like, 1280, 720, true),
        ("object", object_like, 1920, 1080, true),
    ];
    let mut rng = Rng(1080);
    for (kind, make, w, h, eight) in generated {
        let c = if eight { 8 } else { 4 };
        problems.push((
            format!("{kind}_{w}x{h}_{c}c (generated)"),
            make(&mut rng, w, h, eight),
            None,
        ));
    }
    let base = CudaConfig::default();
    let with = |label: &'static str, edit: &dyn Fn(&mut CudaConfig)| {
        let mut config = base;
        edit(&mut config);
        (label, config)
    };
    let variants = [
        with("default", &|_| {}),
        with("host-loop", &|c| c.schedule = Schedule::HostLoop),
        with("b16", &|c| c.step_budget = 16),
        with("b32", &|c| c.step_budget = 32),
        with("b24", &|c| c.step_budget = 24),
        with("b48", &|c| c.step_budget = 48),
        with("b64", &|c| c.step_budget = 64),
        with("gr1", &|c| c.global_relabel_rounds = 1),
        with("gr2", &|c| c.global_relabel_rounds = 2),
        with("gr3", &|c| c.global_relabel_rounds = 3),
        with("gr4", &|c| c.global_relabel_rounds = 4),
        with("gr8", &|c| c.global_relabel_rounds = 8),
        with("few0", &|c| c.few_active_tiles = 0),
        with("fixed", &|c| c.relabel_rate_rounds = 0),
        with("rate100", &|c| c.relabel_rate_percent = 100),
        with("rate200", &|c| c.relabel_rate_percent = 200),
        with("rate4", &|c| c.relabel_rate_rounds = 4),
        with("rate16", &|c| c.relabel_rate_rounds = 16),
        with("stall8", &|c| c.region_every = 8),
        with("b8", &|c| c.step_budget = 8),
        with("conc", &|c| c.concurrent = true),
        with("t32", &|c| c.tile_height = 32),
        with("t16", &|c| c.tile_height = 16),
        with("queue", &|c| c.owner_relabel_tiles = 0),
        with("owners", &|c| c.owner_relabel_tiles = u32::MAX),
        with("phases", &|c| c.owner_discharge_tiles = 0),
        with("dataflow", &|c| c.owner_discharge_tiles = u32::MAX),
        with("od", &|c| {
            c.owner_relabel_tiles = u32::MAX;
            c.owner_discharge_tiles = u32::MAX;
        }),
        with("ob", &|c| {
            c.owner_relabel_tiles = u32::MAX;
            c.step_budget = 32;
        }),
        with("gb", &|c| {
            c.global_relabel_rounds = 4;
            c.step_budget = 32;
        }),
        with("whole", &|c| c.relabel_cap_margin = 0),
        with("cap16", &|c| c.relabel_cap_margin = 16),
        with("cap32", &|c| c.relabel_cap_margin = 32),
        with("cap128", &|c| c.relabel_cap_margin = 128),
        with("qp", &|c| {
            c.owner_relabel_tiles = 0;
            c.owner_discharge_tiles = 0;
        }),
    ];
    // LIVECUT_VARIANTS=default,gr4 picks some
    let picked = std::env::var("LIVECUT_VARIANTS").ok();
    let variants: Vec<_> = variants
        .into_iter()
        .filter(|(label, _)| {
            picked
                .as_ref()
                .is_none_or(|p| p.split(',').any(|v| v == *label))
        })
        .collect();
    println!(
        "{:<36} {:<10} {:>9} {:>9} {:>7} {:>6} {:>4} {:>6} {:>7} {:>9} {:>10} {:>7} {:>8} {:>8} {:>5}",
        "instance",
        "variant",
        "solve ms",
        "min ms",
        "upload",
        "rounds",
        "GR",
        "BFS r",
        "visits",
        "steps",
        "bfs iters",
        "sweeps",
        "cyc/step",
        "cyc/bfst",
        "ok"
    );
    println!(
        "(then: critical path Mcycles in BFS / discharge passes, SM busy share of discharge passes)"
    );
    let only = std::env::var("LIVECUT_ONLY").ok();
    for (name, p, expected) in &problems {
        if only
            .as_ref()
            .is_some_and(|o| !o.split(',').any(|o| name.contains(o)))
        {
            continue;
        }
        for (label, config) in &variants {
            engine.set_config(*config);
            let mut times = Vec::new();
            let mut last = None;
            for _ in 0..6 {
                let s = engine.solve(p).expect("solve");
                times.push(s.stats.solve_ms);
                last = Some(s);
            }
            let s = last.expect("runs");
            times.remove(0);
            times.sort_by(f64::total_cmp);
            let d = engine.details().clone();
            let certified =
                cut_capacity(p, &s.mask) == s.flow && expected.is_none_or(|e| e == s.flow);
            println!(
                "{:<36} {:<10} {:>9.3} {:>9.3} {:>7.2} {:>6} {:>4} {:>6} {:>7} {:>9} {:>10} {:>7.1} {:>8.0} {:>8.0} {:>5}",
                name,
                label,
                times[times.len() / 2],
                times[0],
                s.stats.upload_ms,
                d.rounds,
                d.global_relabels,
                d.bfs_rounds,
                d.tile_visits,
                d.steps,
                d.bfs_iterations,
                d.sweeps,
                d.discharge_cycles as f64 / d.steps.max(1) as f64,
                d.bfs_cycles as f64 / d.bfs_tiles.max(1) as f64,
                if certified { "yes" } else { "NO" }
            );
            let (pb, pd) = d.path_cycles;
            if pb + pd == 0 {
                continue; // the host loop has no critical path of its own to report
            }
            println!(
                "    path {:.3} / {:.3} Mcyc, discharge busy {:.1} %, steps/visit {:.1}",
                pb as f64 / 1e6,
                pd as f64 / 1e6,
                100.0 * d.discharge_cycles as f64 / (pd.max(1) as f64 * d.blocks.max(1) as f64),
                d.steps as f64 / d.tile_visits.max(1) as f64
            );
            let nb = d.blocks.max(1) as f64;
            println!(
                "    per block: waiting for relabel work {:.1} kcyc, in barriers {:.1} kcyc, queue takes {:.1}, relaxing {:.1} kcyc; {:.1} kcyc per global relabel",
                d.wait_cycles.0 as f64 / nb / 1e3,
                d.wait_cycles.1 as f64 / nb / 1e3,
                d.queue_takes as f64 / nb,
                d.bfs_cycles as f64 / nb / 1e3,
                pb as f64 / d.global_relabels.max(1) as f64 / 1e3
            );
            if std::env::var_os("LIVECUT_LOG").is_some() {
                let mut prev = [0u64; 8];
                for (k, row) in engine.relabel_log().expect("log").iter().enumerate() {
                    println!(
                        "      GR {k:>3}: bfs {:>6.1} kcyc, discharge before {:>7.1} kcyc, active {:>5}, visits {:>5}, steps {:>6}, bfs tiles {:>5}, flow +{}",
                        (row[0] - prev[0]) as f64 / 1e3,
                        (row[1] - prev[1]) as f64 / 1e3,
                        row[2],
                        row[3] - prev[3],
                        row[4] - prev[4],
                        row[5] - prev[5],
                        row[6] - prev[6]
                    );
                    prev = *row;
                }
            }
        }
    }
}

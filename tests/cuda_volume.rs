//! The CUDA volume engine against a reference max-flow (random volumes of 6, 10 and 26
//! neighbours, degenerate shapes, zero and near-2^31 capacities), the shared 3D
//! instances, the CPU volume engine on volumes larger than the reference can solve,
//! and a video cut as volumes on both engines. Timings: `cargo bench --bench volumes`.
//!
//! Every test needs a device: it prints a note and returns where there is none (CI).

mod common;

use common::device::skip_without_device;
use common::reference::volume_max_flow as reference;
use common::rng::Rng;
use common::volumes::{grids3d_dir, manifest3d, random_volume};
use common::walk::{LEARN, plain, truth};
use livecut::grid::{Mask, VolumeConnectivity, VolumeProblem};
use livecut::maxflow::cpu::CpuVolumeEngine;
use livecut::maxflow::cuda::CudaVolumeEngine;
use livecut::maxflow::dimacs;
use livecut::maxflow::{CutSide, VolumeEngine};
use livecut::pipeline::SegmentParams;
use livecut::pipeline::segmenter::SegmentOutput;
use livecut::pipeline::volume::VolumeSegmenter;

const CONNECTIVITIES: [VolumeConnectivity; 3] = [
    VolumeConnectivity::Six,
    VolumeConnectivity::Ten,
    VolumeConnectivity::TwentySix,
];

/// The engine, or `None` (with a note) when this machine has no usable CUDA device.
fn engine_or_skip() -> Option<CudaVolumeEngine> {
    skip_without_device(CudaVolumeEngine::new())
}

/// Solves a random volume of `size` and `c` and checks it against the reference: flow,
/// and the voxels that cannot reach t.
fn check_random(
    engine: &mut CudaVolumeEngine,
    rng: &mut Rng,
    size: (u32, u32, u32),
    c: VolumeConnectivity,
    what: &str,
) {
    let p = random_volume(rng, size, c);
    let what = format!("{what}: {size:?} {}C", c.number());
    let got = engine.solve(&p).unwrap_or_else(|e| panic!("{what}: {e}"));
    let (flow, side) = cannot_reach_sink(&p);
    assert_eq!(got.flow, flow, "{what}: flow");
    assert_eq!(p.cut_capacity(&got.mask), Ok(flow), "{what}: cut capacity");
    assert_eq!(got.mask, side, "{what}: mask = voxels that cannot reach t");
}

/// The source side of `p`'s largest minimum-cut source set (the voxels that cannot
/// reach t), as the reference finds it.
fn cannot_reach_sink(p: &VolumeProblem) -> (u64, Mask) {
    let r = reference(p);
    let (w, h) = p.mask_size();
    (r.flow, Mask::from_fn(w, h, |i| !r.reaches_sink[i]))
}

/// A few small volumes of each neighbourhood, for `compute-sanitizer` (memcheck and
/// racecheck) on the GPU machine (`benches/gpu/run.sh`).
#[test]
fn sanitizer_small_volumes() {
    let Some(mut engine) = engine_or_skip() else {
        return;
    };
    let mut rng = Rng(77);
    for (k, c) in CONNECTIVITIES.into_iter().enumerate() {
        let size = (9 + k as u32, 7, 5);
        let p = random_volume(&mut rng, size, c);
        let (flow, side) = cannot_reach_sink(&p);
        let got = engine.solve(&p).unwrap();
        assert_eq!(
            (got.flow, &got.mask),
            (flow, &side),
            "{size:?} {}C",
            c.number()
        );
    }
}

#[test]
fn random_volumes_match_the_reference_flow_and_cut() {
    let Some(mut engine) = engine_or_skip() else {
        return;
    };
    assert_eq!(engine.cut_side(), CutSide::CannotReachSink);
    let mut rng = Rng(0x3d_c0da);
    // one engine throughout: its arrays are reused and replaced as shapes change
    for case in 0..240 {
        let side = |rng: &mut Rng, most: u64| {
            if rng.below(5) == 0 {
                1
            } else {
                1 + rng.below(most) as u32
            }
        };
        let most = if case % 10 == 0 { 40 } else { 9 };
        let size = (
            side(&mut rng, most),
            side(&mut rng, most),
            side(&mut rng, 9),
        );
        let c = CONNECTIVITIES[case % 3];
        check_random(&mut engine, &mut rng, size, c, &format!("case {case}"));
    }
}

/// Wave Front Fetch (the schedule experiments): random volumes and the shared ones
/// against the reference, as push-relabel.
#[cfg(feature = "experiments")]
#[test]
fn wave_front_fetch_matches_the_reference_flow_and_cut() {
    use livecut::maxflow::cuda::VolumeSchedule;
    let engine = CudaVolumeEngine::with_schedule(VolumeSchedule::WaveFrontFetch);
    let Some(mut engine) = skip_without_device(engine) else {
        return;
    };
    let mut rng = Rng(0x3d_3aef);
    for case in 0..120 {
        let size = (
            1 + rng.below(12) as u32,
            1 + rng.below(12) as u32,
            1 + rng.below(8) as u32,
        );
        let c = CONNECTIVITIES[case % 3];
        check_random(&mut engine, &mut rng, size, c, &format!("WFF case {case}"));
    }
    let Some(dir) = grids3d_dir() else { return };
    for (file, _, flow) in manifest3d(&dir) {
        let p = dimacs::read_volume_path(&dir.join(&file)).unwrap();
        let s = engine.solve(&p).unwrap();
        assert_eq!(s.flow, flow, "{file}");
        assert_eq!(p.cut_capacity(&s.mask), Ok(flow), "{file}: cut");
        eprintln!("{file} by WFF: taken over {}", engine.took_over());
    }
}

#[test]
fn shared_volumes_give_their_manifest_flows_and_a_minimum_cut() {
    let Some(dir) = grids3d_dir() else { return };
    let Some(mut engine) = engine_or_skip() else {
        return;
    };
    for (file, _, flow) in manifest3d(&dir) {
        let p = dimacs::read_volume_path(&dir.join(&file)).unwrap();
        let s = engine.solve(&p).unwrap();
        assert_eq!(s.flow, flow, "{file}");
        assert_eq!(p.cut_capacity(&s.mask), Ok(flow), "{file}: cut");
        // the canonical (smallest) source side lies inside the largest one
        let png = dir.join(file.replace(".max.gz", ".mask.png"));
        let smallest = Mask::read_png(&png).unwrap();
        let inside =
            (0..smallest.data.len()).all(|i| !smallest.is_source(i) || s.mask.is_source(i));
        assert!(
            inside,
            "{file}: the reference's source side is not within the cut's"
        );
        let gpu = s.stats.gpu.unwrap();
        eprintln!(
            "{file}: flow {flow}, {:.2} ms, {} global relabels, {} launches",
            s.stats.solve_ms, gpu.global_relabels, gpu.launches
        );
    }
}

#[test]
fn large_volumes_match_the_cpu_engine() {
    let Some(mut engine) = engine_or_skip() else {
        return;
    };
    let mut rng = Rng(1_000_003);
    for (size, c) in [
        ((200, 150, 8), VolumeConnectivity::Ten),
        ((64, 64, 48), VolumeConnectivity::Six),
        ((48, 48, 32), VolumeConnectivity::TwentySix),
        // more voxels than one chunk of the page-locked upload
        ((256, 256, 36), VolumeConnectivity::Six),
    ] {
        let p = random_volume(&mut rng, size, c);
        let cpu = CpuVolumeEngine::new().solve(&p).unwrap();
        let gpu = engine.solve(&p).unwrap();
        let what = format!("{size:?} {}C", c.number());
        assert_eq!(gpu.flow, cpu.flow, "{what}: flow");
        assert_eq!(p.cut_capacity(&gpu.mask), Ok(cpu.flow), "{what}: cut");
        let stats = gpu.stats.gpu.unwrap();
        eprintln!(
            "{what}: CPU {:.1} ms, CUDA {:.1} ms ({} global relabels, {} launches)",
            cpu.stats.solve_ms, gpu.stats.solve_ms, stats.global_relabels, stats.launches
        );
    }
}

#[test]
fn a_video_cut_as_volumes_on_the_gpu_has_the_cpu_flows() {
    let Some(engine) = engine_or_skip() else {
        return;
    };
    let params = SegmentParams {
        background_frames: LEARN,
        ..SegmentParams::default()
    };
    let mut on_gpu = VolumeSegmenter::new(Box::new(engine), params.clone(), 4).unwrap();
    let mut on_cpu = VolumeSegmenter::new(Box::new(CpuVolumeEngine::new()), params, 4).unwrap();
    let (mut rng_a, mut rng_b) = (Rng(8), Rng(8));
    let (mut gpu, mut cpu) = (Vec::new(), Vec::new());
    for i in 0..LEARN as u64 + 11 {
        gpu.extend(on_gpu.push(&plain(&mut rng_a, i)).unwrap());
        cpu.extend(on_cpu.push(&plain(&mut rng_b, i)).unwrap());
    }
    gpu.extend(on_gpu.finish().unwrap());
    cpu.extend(on_cpu.finish().unwrap());
    assert_eq!(gpu.len(), cpu.len());
    let spans = |v: &[_]| {
        v.iter()
            .map(|o: &SegmentOutput| o.volume.map(|s| (s.first, s.frames)))
            .collect::<Vec<_>>()
    };
    assert_eq!(spans(&gpu), spans(&cpu));
    // the first volume is the same problem on both: the same flow, and cuts that differ
    // only where minimum cuts tie; later ones follow each engine's own masks
    let first = LEARN as usize;
    for k in first..first + 4 {
        assert_eq!(gpu[k].flow, cpu[k].flow, "frame {k}: flow");
    }
    for (k, out) in gpu.iter().enumerate().skip(first) {
        let (m, t) = (&out.mask, truth(k as u64));
        let both = (0..m.data.len())
            .filter(|&p| m.is_source(p) && t.is_source(p))
            .count();
        let either = (0..m.data.len())
            .filter(|&p| m.is_source(p) || t.is_source(p))
            .count();
        let iou = both as f64 / either.max(1) as f64;
        assert!(iou > 0.9, "frame {k}: IoU {iou}");
    }
}

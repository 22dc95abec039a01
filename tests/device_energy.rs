//! The video energy on the GPU — CUDA, and wgpu compute shaders — against the CPU
//! energy, its reference: the same integer capacities on every frame, with a learned
//! background (the demo scene, the demo scene with an exposure drift, seeds, real
//! still-camera frames) and with colour models (histogram and mixture), the same model
//! state afterwards, and the same masks and flows through the segmenter with the energy
//! on the device or not, static and dynamic. Each back-end is skipped, with a note,
//! where its device is missing (CI runs the wgpu one on lavapipe and requires it).

mod common;

use common::device::{compute_device, frame_bytes};
use common::footage::pedestrian_frames;
use common::pan::panned_demo;
use livecut::capture::{DemoConfig, DemoSource, Frame, FrameSource};
use livecut::compute::ComputeDevice;
use livecut::energy::cuda::DeviceEnergy;
use livecut::energy::plan::{Capacities, DataTerm, DeviceFrame, GpuEnergy};
use livecut::energy::wgpu::WgpuEnergy;
use livecut::energy::{
    BackgroundModel, CAPACITY_SCALE, ColorModelKind, ColorModels, EnergyBuilder, EnergyInputs,
    SeedLabel, Seeds, Side, Smoothness, TemporalPrior, estimate_sigma,
};
use livecut::gpu::GpuError;
use livecut::grid::{Connectivity, Direction, GridProblem, Mask};
use livecut::maxflow::Engine;
use livecut::maxflow::cpu::CpuEngine;
use livecut::maxflow::cuda::CudaEngine;
use livecut::pipeline::worker::iou;
use livecut::pipeline::{NoiseGate, SegmentOutput, SegmentParams, Segmenter};

/// Frames the background is learned from.
const LEARN: usize = 10;

/// The GPU energies this machine has: CUDA where a device is, wgpu where an adapter is.
fn energies() -> Vec<Box<dyn GpuEnergy>> {
    let mut out: Vec<Box<dyn GpuEnergy>> = Vec::new();
    match DeviceEnergy::new() {
        Ok(energy) => out.push(Box::new(energy)),
        Err(GpuError::Unavailable(why)) => eprintln!("note: skipping CUDA, no device ({why})"),
        Err(other) => panic!("the CUDA energy failed to start: {other}"),
    }
    if let Some(gpu) = compute_device() {
        out.push(Box::new(
            WgpuEnergy::new(gpu).expect("the energy shaders compile"),
        ));
    }
    out
}

/// The demo scene, `width`×`height`, ending after `count` frames.
fn demo_source(width: u32, height: u32, count: u64) -> DemoSource {
    DemoSource::new(DemoConfig {
        width,
        height,
        frames: Some(count),
        ..DemoConfig::default()
    })
    .unwrap()
}

/// `count` frames of the still demo scene (sensor noise, light change, objects moving).
fn demo_frames(width: u32, height: u32, count: u64) -> Vec<Frame> {
    let mut source = demo_source(width, height, count);
    std::iter::from_fn(|| source.next_frame().unwrap().map(|c| c.frame)).collect()
}

/// The demo frames with the exposure rising after the learning frames, as a webcam's
/// automatic exposure does when a person walks in (up to +20 %).
fn drifting_frames(width: u32, height: u32, count: u64) -> Vec<Frame> {
    let mut frames = demo_frames(width, height, count);
    for (k, frame) in frames.iter_mut().enumerate().skip(LEARN) {
        let gain = 1.0 + 0.2 * ((k - LEARN) as f32 / 20.0).min(1.0);
        for v in &mut frame.rgb {
            *v = (f32::from(*v) * gain).round().min(255.0) as u8;
        }
    }
    frames
}

fn params() -> SegmentParams {
    SegmentParams {
        background_frames: LEARN as u32,
        ..SegmentParams::default()
    }
}

/// What the CPU and the device energy of a sequence share: the frame size, the noise
/// gate, the contrast term, the temporal prior and the seeds.
#[derive(Clone, Copy)]
struct Shared<'a> {
    width: u32,
    height: u32,
    noise_gate: u8,
    smoothness: Smoothness,
    temporal: TemporalPrior,
    seeds: Option<&'a Seeds>,
}

impl<'a> Shared<'a> {
    /// The terms of `p` (σ given, or `None` to estimate) for frames the size of `frame`.
    fn new(
        p: &SegmentParams,
        frame: &Frame,
        connectivity: Connectivity,
        sigma: Option<f32>,
        seeds: Option<&'a Seeds>,
    ) -> Self {
        let smoothness = Smoothness {
            connectivity,
            lambda: p.lambda,
            sigma,
            scale: CAPACITY_SCALE,
        };
        let temporal = TemporalPrior {
            weight: p.temporal,
            ramp: p.temporal_ramp,
        };
        Self {
            width: frame.width,
            height: frame.height,
            noise_gate: p.noise_gate,
            smoothness,
            temporal,
            seeds,
        }
    }

    /// The CPU energy's inputs: `rgb` as the CPU gated (or steadied) it, the mask of
    /// the frame before, and the data term (colour models or a weighted background).
    fn cpu(
        &self,
        rgb: &'a [u8],
        previous: Option<&'a Mask>,
        colors: Option<&'a mut ColorModels>,
        background: Option<(&'a BackgroundModel, f32)>,
    ) -> EnergyInputs<'a> {
        EnergyInputs {
            width: self.width,
            height: self.height,
            rgb,
            smoothness: self.smoothness,
            colors,
            seeds: self.seeds,
            temporal: previous.map(|m| (m, self.temporal)),
            background,
            rgb_moves: None,
        }
    }

    /// The device energy of frame `k` as a problem: `rgb` as the camera gave it (the
    /// device gates it, going on from the CPU gate's held colours `gate` where given),
    /// the mask of the frame before, and the data term.
    fn on_device(
        &self,
        device: &mut dyn GpuEnergy,
        rgb: &[u8],
        k: usize,
        previous: Option<&Mask>,
        gate: Option<&[u8]>,
        data: DataTerm<'_>,
    ) -> GridProblem {
        let frame = DeviceFrame {
            width: self.width,
            height: self.height,
            rgb,
            noise_gate: self.noise_gate,
            gate,
            smoothness: self.smoothness,
            held_sigma: None,
            temporal: self.temporal,
            previous,
            previous_version: k as u64,
            seeds: self.seeds,
            seeds_version: 0,
        };
        device.build(frame, data).unwrap().to_problem().unwrap()
    }
}

/// The arrays of two problems are equal, or the first difference is named.
fn assert_same_capacities(cpu: &GridProblem, device: &GridProblem, what: &str) {
    let first = |a: &[i32], b: &[i32]| a.iter().zip(b).position(|(x, y)| x != y);
    if let Some(i) = first(cpu.source(), device.source()) {
        panic!(
            "{what}: source capacity of pixel {i}: cpu {} device {}",
            cpu.source()[i],
            device.source()[i]
        );
    }
    if let Some(i) = first(cpu.sink(), device.sink()) {
        panic!(
            "{what}: sink capacity of pixel {i}: cpu {} device {}",
            cpu.sink()[i],
            device.sink()[i]
        );
    }
    for &dir in cpu.connectivity().directions() {
        if let Some(i) = first(cpu.edges(dir), device.edges(dir)) {
            panic!(
                "{what}: {dir:?} arc of pixel {i}: cpu {} device {}",
                cpu.edges(dir)[i],
                device.edges(dir)[i]
            );
        }
    }
}

/// Seeds that hold a corner as background and a block as foreground, on every frame.
fn corner_seeds(width: u32, height: u32) -> Seeds {
    let mut seeds = Seeds::unknown(width, height);
    for y in 0..height / 8 {
        for x in 0..width / 8 {
            seeds.labels[(y * width + x) as usize] = SeedLabel::Background;
        }
    }
    let (cx, cy) = (width / 2, height / 2);
    for y in cy..cy + 4 {
        for x in cx..cx + 4 {
            seeds.labels[(y * width + x) as usize] = SeedLabel::Foreground;
        }
    }
    seeds
}

/// Runs the CPU energy (as the segmenter runs it in background mode) and the device
/// energy side by side over `frames`, learning from the first ones, cutting each frame
/// with the CPU engine and adapting both models by its mask; every frame's capacities
/// and gains must agree, and so must the models' state at the end. `p` gives the
/// weights and the temporal ramp.
fn compare_energies_with(
    p: &SegmentParams,
    frames: &[Frame],
    connectivity: Connectivity,
    seeds: Option<&Seeds>,
    what: &str,
) {
    for device in energies() {
        compare_energy_with(device, p, frames, connectivity, seeds, what);
    }
}

/// [`compare_energies_with`] one GPU energy.
fn compare_energy_with(
    mut device: Box<dyn GpuEnergy>,
    p: &SegmentParams,
    frames: &[Frame],
    connectivity: Connectivity,
    seeds: Option<&Seeds>,
    what: &str,
) {
    let what = format!("{}: {what}", device.name());
    let (w, h) = (frames[0].width, frames[0].height);
    let mut cpu_model = BackgroundModel::new(w, h, LEARN as u32);
    for frame in &frames[..LEARN] {
        cpu_model.learn(&frame.rgb);
    }
    let mut device_model = cpu_model.clone();
    let sigma = estimate_sigma(&cpu_model.mean_rgb(), w as usize, h as usize, connectivity);
    let shared = Shared::new(p, &frames[0], connectivity, Some(sigma), seeds);
    let (mut gate, mut builder, mut engine) =
        (NoiseGate::default(), EnergyBuilder::new(), CpuEngine::new());
    let mut previous: Option<Mask> = None;
    let mut steady = Vec::new();
    for (k, frame) in frames.iter().enumerate().skip(LEARN) {
        let what = format!("{what}, frame {k}");
        let mut gated = frame.rgb.clone();
        gate.apply(&mut gated, w, h, p.noise_gate);
        cpu_model.observe(&gated, previous.as_ref());
        cpu_model.steady_rgb(&gated, &mut steady);
        let background = Some((&cpu_model, p.background_weight));
        let problem = builder
            .build(shared.cpu(&steady, previous.as_ref(), None, background))
            .unwrap();
        let on_device = shared.on_device(
            device.as_mut(),
            &frame.rgb,
            k,
            previous.as_ref(),
            None,
            DataTerm::Background {
                model: &mut device_model,
                weight: p.background_weight,
            },
        );
        assert_eq!(cpu_model.gain(), device_model.gain(), "{what}: gains");
        assert_same_capacities(&problem, &on_device, &what);
        let mask = engine.solve(&problem).unwrap().mask;
        cpu_model.adapt(&gated, &mask);
        device
            .finish(&mask, k as u64 + 1, &device_model, None)
            .unwrap();
        builder.recycle(problem);
        previous = Some(mask);
    }
    device.hand_back(&mut device_model).unwrap();
    assert!(!device.holds_model());
    assert_eq!(
        cpu_model.mean_rgb(),
        device_model.mean_rgb(),
        "{what}: adapted means"
    );
    // the rest of the state (distances, still counts, last colours) shows in the next
    // frame the CPU builds from each model
    let next = &frames[frames.len() - 1];
    let mut both = [cpu_model, device_model].map(|mut model| {
        model.observe(&next.rgb, previous.as_ref());
        let mask = Mask {
            width: w,
            height: h,
            data: vec![255; (w * h) as usize],
        };
        for _ in 0..3 {
            model.adapt(&next.rgb, &mask);
        }
        model
    });
    let [a, b] = &mut both;
    assert_eq!(a.mean_rgb(), b.mean_rgb(), "{what}: state handed back");
}

/// [`compare_energies_with`] the default parameters of background mode.
fn compare_energies(
    frames: &[Frame],
    connectivity: Connectivity,
    seeds: Option<&Seeds>,
    what: &str,
) {
    compare_energies_with(&params(), frames, connectivity, seeds, what);
}

#[test]
fn a_long_temporal_ramp_is_exact_over_several_launches() {
    // 24 pixels: 25 rounds of the chamfer relaxation, in two launches of at most 16
    let p = SegmentParams {
        temporal_ramp: 24.0,
        ..params()
    };
    let frames = demo_frames(120, 90, 24);
    compare_energies_with(&p, &frames, Connectivity::Eight, None, "ramp 24");
}

#[test]
fn the_demo_scenes_capacities_are_the_cpus_on_the_device() {
    let frames = demo_frames(160, 120, 40);
    compare_energies(&frames, Connectivity::Four, None, "demo 4C");
    compare_energies(&frames, Connectivity::Eight, None, "demo 8C");
}

#[test]
fn an_exposure_drift_gives_the_same_gains_and_capacities() {
    let frames = drifting_frames(160, 120, 40);
    compare_energies(&frames, Connectivity::Eight, None, "drift");
}

#[test]
fn hard_seeds_hold_alike_on_the_device() {
    let frames = demo_frames(96, 72, 24);
    let seeds = corner_seeds(96, 72);
    compare_energies(&frames, Connectivity::Four, Some(&seeds), "seeded 4C");
    compare_energies(&frames, Connectivity::Eight, Some(&seeds), "seeded 8C");
}

#[test]
fn real_still_camera_frames_give_the_same_capacities() {
    let Some(frames) = pedestrian_frames(60) else {
        return;
    };
    compare_energies(&frames, Connectivity::Eight, None, "pedestrians");
}

/// Where the segmenter cuts: the CUDA engine beside the CUDA energy, or the CPU engine
/// beside the wgpu energy.
#[derive(Clone)]
enum Backend {
    Cuda,
    Wgpu(ComputeDevice),
}

/// The back-ends this machine has.
fn backends() -> Vec<Backend> {
    let cuda = match CudaEngine::new() {
        Ok(_) => Some(Backend::Cuda),
        Err(e) => {
            eprintln!("note: skipping CUDA, no device ({e})");
            None
        }
    };
    cuda.into_iter()
        .chain(compute_device().map(Backend::Wgpu))
        .collect()
}

/// Segments `frames` on `backend` with `params` (each of `scribbles` set as the seeds
/// before the frame it names), the energy on the device or on the CPU: each frame's
/// mask and flow.
fn segment(
    backend: &Backend,
    frames: &[Frame],
    params: SegmentParams,
    scribbles: &[(usize, &Seeds)],
    device_energy: bool,
) -> Vec<(Vec<u8>, u64)> {
    let mut segmenter = match backend {
        Backend::Cuda => Segmenter::new(Box::new(CudaEngine::new().unwrap()), params),
        Backend::Wgpu(gpu) => {
            let mut s = Segmenter::new(Box::new(CpuEngine::new()), params);
            s.set_compute(Some(gpu.clone())).unwrap();
            s
        }
    };
    segmenter.set_device_energy(device_energy);
    let mut left_on_device = 0;
    let out = frames
        .iter()
        .enumerate()
        .map(|(k, frame)| {
            for (_, seeds) in scribbles.iter().filter(|(at, _)| *at == k) {
                segmenter.set_seeds((*seeds).clone());
            }
            let output = segmenter.segment(frame).unwrap();
            assert!(output.fallback.is_none(), "{:?}", output.fallback);
            left_on_device += usize::from(frame_left_on_device(backend, frame, &output));
            (output.mask.data, output.flow)
        })
        .collect();
    assert_eq!(
        segmenter.device_energy_active(),
        device_energy,
        "the energy ran where asked"
    );
    let wgpu = matches!(backend, Backend::Wgpu(_));
    assert_eq!(
        left_on_device > 0,
        wgpu && device_energy,
        "the wgpu energy leaves its frames on the device for the window"
    );
    out
}

/// Whether the output holds the frame's bytes on the wgpu device (checked equal to
/// the frame's where it does).
fn frame_left_on_device(backend: &Backend, frame: &Frame, output: &SegmentOutput) -> bool {
    let (Backend::Wgpu(gpu), Some(on_device)) = (backend, &output.frame_on_device) else {
        return false;
    };
    assert!(on_device.fits(&gpu.device, frame.width, frame.height));
    let bytes = frame_bytes(gpu, on_device, frame.rgb.len());
    assert!(
        bytes == frame.rgb,
        "frame {}: the bytes left on the device",
        frame.index
    );
    true
}

/// The same masks and flows with the energy on the CPU and on the device, static and
/// dynamic (nothing is checked where there is no device).
fn same_on_device(frames: &[Frame], params: SegmentParams, scribbles: &[(usize, &Seeds)]) {
    for backend in backends() {
        same_on_backend(&backend, frames, params.clone(), scribbles);
    }
}

/// [`same_on_device`] on one back-end.
fn same_on_backend(
    backend: &Backend,
    frames: &[Frame],
    params: SegmentParams,
    scribbles: &[(usize, &Seeds)],
) {
    for dynamic in [false, true] {
        let params = SegmentParams {
            dynamic,
            ..params.clone()
        };
        let on_cpu = segment(backend, frames, params.clone(), scribbles, false);
        let on_device = segment(backend, frames, params, scribbles, true);
        for (k, (a, b)) in on_cpu.iter().zip(&on_device).enumerate() {
            assert_eq!(a.1, b.1, "frame {k} (dynamic {dynamic}): flows");
            assert!(a.0 == b.0, "frame {k} (dynamic {dynamic}): masks differ");
        }
        let cut = on_device
            .iter()
            .filter(|(m, _)| m.iter().any(|&v| v != 0))
            .count();
        assert!(cut > 0, "some frame has foreground");
    }
}

#[test]
fn the_segmenter_gives_the_same_masks_and_flows_with_the_energy_on_the_device() {
    let frames = drifting_frames(200, 150, 50);
    same_on_device(&frames, params(), &[]);
}

#[test]
fn the_cleaned_mask_is_the_next_frames_previous_on_the_device() {
    // a cleanup that drops every object: each frame's final mask differs from its cut,
    // and the next frame's temporal prior must come from the final one on both paths
    // (the device copies the cut and uploads what the cleanup changed)
    let (w, h) = (160, 120);
    let frames = demo_frames(w, h, 30);
    let params = SegmentParams {
        cleanup_min_area: w * h,
        ..params()
    };
    for backend in backends() {
        for dynamic in [false, true] {
            let params = SegmentParams {
                dynamic,
                ..params.clone()
            };
            let on_cpu = segment(&backend, &frames, params.clone(), &[], false);
            let on_device = segment(&backend, &frames, params, &[], true);
            for (k, (a, b)) in on_cpu.iter().zip(&on_device).enumerate() {
                assert_eq!(a.1, b.1, "frame {k} (dynamic {dynamic}): flows");
                assert!(a.0 == b.0, "frame {k} (dynamic {dynamic}): masks differ");
            }
        }
    }
}

#[test]
fn the_cleanup_on_the_wgpu_device_leaves_the_cpus_masks() {
    // small specks dropped and holes filled by the wgpu labeller's components, frame
    // after frame, against the CPU alone
    let Some(gpu) = compute_device() else {
        return;
    };
    let (w, h) = (160, 120);
    let frames = drifting_frames(w, h, 30);
    for dynamic in [false, true] {
        let params = SegmentParams {
            cleanup_min_area: 40,
            dynamic,
            ..params()
        };
        let mut on_cpu = Segmenter::new(Box::new(CpuEngine::new()), params.clone());
        let mut on_gpu = Segmenter::new(Box::new(CpuEngine::new()), params);
        on_gpu.set_compute(Some(gpu.clone())).unwrap();
        assert!(on_gpu.labels_on_gpu() && !on_cpu.labels_on_gpu());
        let mut uncleaned = Segmenter::new(
            Box::new(CpuEngine::new()),
            SegmentParams {
                cleanup_min_area: 0,
                ..on_cpu.params().clone()
            },
        );
        let mut cleaned = 0;
        for (k, frame) in frames.iter().enumerate() {
            let a = on_cpu.segment(frame).unwrap();
            let b = on_gpu.segment(frame).unwrap();
            assert!(b.fallback.is_none(), "{:?}", b.fallback);
            assert_eq!(a.flow, b.flow, "frame {k} (dynamic {dynamic}): flows");
            assert!(
                a.mask == b.mask,
                "frame {k} (dynamic {dynamic}): masks differ"
            );
            cleaned += usize::from(uncleaned.segment(frame).unwrap().mask != a.mask);
        }
        assert!(cleaned > 0, "the cleanup changed some frame");
    }
}

#[test]
fn new_scribbles_mid_stream_reach_the_device() {
    // seeds set on the first frame, then other ones later in the stream: the device
    // uploads each set once, and both energies cut alike throughout
    let (w, h) = (160, 120);
    let frames = demo_frames(w, h, 40);
    let first = corner_seeds(w, h);
    let mut second = Seeds::unknown(w, h);
    for y in h / 2..h / 2 + 10 {
        for x in w / 4..w / 4 + 10 {
            second.labels[(y * w + x) as usize] = SeedLabel::Foreground;
        }
    }
    same_on_device(&frames, params(), &[(0, &first), (LEARN + 8, &second)]);
}

#[test]
fn every_direction_reads_its_own_arcs() {
    // a single bright pixel: its arcs are weak in every direction, its neighbours'
    // arcs towards it alike (the symmetry the engine's reverse-arc table relies on)
    for device in energies() {
        every_direction_on(device);
    }
}

fn every_direction_on(mut device: Box<dyn GpuEnergy>) {
    let (w, h) = (7u32, 5u32);
    let flat = Frame {
        width: w,
        height: h,
        rgb: vec![60; (w * h * 3) as usize],
        timestamp: Default::default(),
        index: 0,
    };
    let mut model = BackgroundModel::new(w, h, 1);
    model.learn(&flat.rgb);
    let mut lit = flat.rgb.clone();
    let centre = (2 * w + 3) as usize;
    lit[3 * centre..3 * centre + 3].copy_from_slice(&[250, 250, 250]);
    let grid = device
        .build(
            DeviceFrame {
                width: w,
                height: h,
                rgb: &lit,
                noise_gate: 0,
                gate: None,
                smoothness: Smoothness {
                    connectivity: Connectivity::Eight,
                    lambda: 5.0,
                    sigma: Some(10.0),
                    scale: CAPACITY_SCALE,
                },
                held_sigma: None,
                temporal: TemporalPrior {
                    weight: 0.0,
                    ramp: 0.0,
                },
                previous: None,
                previous_version: 0,
                seeds: None,
                seeds_version: 0,
            },
            DataTerm::Background {
                model: &mut model,
                weight: 1.0,
            },
        )
        .unwrap()
        .to_problem()
        .unwrap();
    for &dir in Connectivity::Eight.directions() {
        let (dx, dy) = dir.offset();
        let q = ((2 + dy) as u32 * w + (3 + dx) as u32) as usize;
        assert_eq!(
            grid.edges(dir)[centre],
            grid.edges(dir.reverse())[q],
            "{dir:?}: the pair's two arcs"
        );
        let beside = grid.edges(Direction::East)[0];
        assert!(
            grid.edges(dir)[centre] < beside,
            "{dir:?}: the edge is weak"
        );
    }
}

/// Seeds of the demo's first frame from its ground truth: well inside the object
/// foreground, well outside background.
fn demo_seeds(frame: &Frame, truth: &Mask) -> Seeds {
    let (w, h) = (frame.width as i64, frame.height as i64);
    let mut seeds = Seeds::unknown(frame.width, frame.height);
    let at = |x: i64, y: i64| (y * w + x) as usize;
    for y in 0..h {
        for x in 0..w {
            let around = |v: bool| {
                (-3..=3).all(|dy: i64| {
                    (-3..=3).all(|dx: i64| {
                        let (a, b) = ((x + dx).clamp(0, w - 1), (y + dy).clamp(0, h - 1));
                        truth.is_source(at(a, b)) == v
                    })
                })
            };
            seeds.labels[at(x, y)] = if around(true) {
                SeedLabel::Foreground
            } else if around(false) {
                SeedLabel::Background
            } else {
                SeedLabel::Unknown
            };
        }
    }
    seeds
}

/// The demo's frames with their first frame's ground truth.
fn demo_with_truth(width: u32, height: u32, count: u64) -> (Vec<Frame>, Mask) {
    let mut source = demo_source(width, height, count);
    let mut truth = None;
    let frames = std::iter::from_fn(|| source.next_frame().unwrap())
        .map(|c| {
            if truth.is_none() {
                truth = c.truth.clone();
            }
            c.frame
        })
        .collect();
    (frames, truth.expect("the demo has ground truth"))
}

/// The CPU energy of a colour-model sequence (frames after the seeded one) against
/// the device energy: colour table, σ estimated from each gated frame, temporal prior.
fn compare_colour_energies(kind: ColorModelKind, connectivity: Connectivity) {
    for device in energies() {
        compare_colour_energy(device, kind, connectivity);
    }
}

/// [`compare_colour_energies`] on one GPU energy.
fn compare_colour_energy(
    mut device: Box<dyn GpuEnergy>,
    kind: ColorModelKind,
    connectivity: Connectivity,
) {
    let (frames, truth) = demo_with_truth(160, 120, 16);
    let (w, h) = (frames[0].width, frames[0].height);
    let seeds = demo_seeds(&frames[0], &truth);
    let mut models = ColorModels::learn(kind, &frames[0].rgb, |i| match seeds.labels[i] {
        SeedLabel::Foreground => Some(Side::Foreground),
        SeedLabel::Background => Some(Side::Background),
        SeedLabel::Unknown => None,
    })
    .expect("both kinds of seed");
    let mut device_models = models.clone();
    let p = SegmentParams::default();
    let shared = Shared::new(&p, &frames[0], connectivity, None, None);
    let (mut gate, mut builder, mut engine) =
        (NoiseGate::default(), EnergyBuilder::new(), CpuEngine::new());
    let mut previous = Some(truth.clone());
    for (k, frame) in frames.iter().enumerate() {
        let what = format!("{}: {kind:?} {connectivity:?}, frame {k}", device.name());
        let mut gated = frame.rgb.clone();
        // the device gate goes on from the CPU gate's colours after the first frame
        let held = gate.held(w, h).map(<[u8]>::to_vec);
        gate.apply(&mut gated, w, h, p.noise_gate);
        let problem = builder
            .build(shared.cpu(&gated, previous.as_ref(), Some(&mut models), None))
            .unwrap();
        let on_device = shared.on_device(
            device.as_mut(),
            &frame.rgb,
            k,
            previous.as_ref(),
            held.as_deref().filter(|_| k == 1),
            DataTerm::Colours {
                models: &mut device_models,
                version: 1,
            },
        );
        assert_eq!(builder.last_sigma(), device.last_sigma(), "{what}: σ");
        assert_same_capacities(&problem, &on_device, &what);
        let mask = engine.solve(&problem).unwrap().mask;
        builder.recycle(problem);
        previous = Some(mask);
        if k == 0 {
            // the device's first frame started its own gate; from the next it adopts
            // the CPU gate's colours, as the segmenter hands them over
            device.forget_previous();
        }
    }
}

#[test]
fn colour_tables_give_the_cpus_capacities() {
    compare_colour_energies(ColorModelKind::Histogram { bits: 4 }, Connectivity::Eight);
    compare_colour_energies(ColorModelKind::Gmm { components: 5 }, Connectivity::Four);
}

#[test]
fn a_seeded_sequence_gives_the_same_masks_and_flows_with_the_energy_on_the_device() {
    let (frames, truth) = demo_with_truth(200, 150, 30);
    let seeds = demo_seeds(&frames[0], &truth);
    same_on_device(&frames, SegmentParams::default(), &[(0, &seeds)]);
}

#[test]
fn a_panning_camera_moves_the_prior_alike_on_the_device() {
    let (frames, seeds) = panned_demo(240, 150, 4, 12);
    let frames: Vec<Frame> = frames.into_iter().map(|(frame, _)| frame).collect();
    same_on_device(&frames, SegmentParams::default(), &[(0, &seeds)]);
}

/// A still textured scene, `width`×`height`, with a 24-pixel square crossing it three
/// pixels a frame after the learning frames.
fn moving_square_frames(width: u32, height: u32, count: usize) -> Vec<Frame> {
    (0..count)
        .map(|k| {
            let x0 = (k.saturating_sub(LEARN) * 3 + 40) as u32;
            let rgb = (0..width * height)
                .flat_map(|i| {
                    let (x, y) = (i % width, i / width);
                    let inside = k >= LEARN && (x0..x0 + 24).contains(&x) && (80..104).contains(&y);
                    if inside {
                        [200, 40, 40]
                    } else {
                        let t = ((x * 7 + y * 13) % 23) as u8;
                        [60 + t, 90 + (y / 4) as u8, 120 - t]
                    }
                })
                .collect();
            Frame {
                width,
                height,
                rgb,
                timestamp: Default::default(),
                index: k as u64,
            }
        })
        .collect()
}

#[test]
fn a_still_scene_brings_back_only_the_tiles_that_moved() {
    let Some(gpu) = compute_device() else {
        return;
    };
    let (w, h) = (256, 192);
    let frames = moving_square_frames(w, h, 30);
    // the capacities patched tile by tile are the CPU's on every frame
    let energy = Box::new(WgpuEnergy::new(gpu.clone()).unwrap());
    compare_energy_with(
        energy,
        &params(),
        &frames,
        Connectivity::Eight,
        None,
        "square",
    );
    // and only the tiles around the square's old and new places come back
    let mut energy = WgpuEnergy::new(gpu).unwrap();
    let mut model = BackgroundModel::new(w, h, LEARN as u32);
    for frame in &frames[..LEARN] {
        model.learn(&frame.rgb);
    }
    let shared = Shared::new(&params(), &frames[0], Connectivity::Eight, Some(10.0), None);
    let mut counts = Vec::new();
    for (k, frame) in frames.iter().enumerate().skip(LEARN - 1) {
        let rgb = if k < LEARN {
            &frames[0].rgb
        } else {
            &frame.rgb
        };
        let input = DeviceFrame {
            width: w,
            height: h,
            rgb,
            noise_gate: shared.noise_gate,
            gate: None,
            smoothness: shared.smoothness,
            held_sigma: None,
            temporal: shared.temporal,
            previous: None,
            previous_version: 0,
            seeds: None,
            seeds_version: 0,
        };
        let term = DataTerm::Background {
            model: &mut model,
            weight: 1.0,
        };
        match energy.build(input, term).unwrap() {
            Capacities::Host(_, changes) => counts.push(changes.map(|c| c.any.count())),
            Capacities::Device(_) => panic!("the wgpu energy brings its capacities back"),
        }
    }
    assert_eq!(counts[0], None, "the first frame comes back whole");
    // the square's first frame moves the gain (its pixels looked like background the
    // frame before), and the next moves it back (they no longer do): every pixel
    // changes twice; from then on only the square's surroundings
    let tiles = (w.div_ceil(32) * h.div_ceil(32)) as usize;
    for (k, count) in counts.iter().enumerate().skip(3) {
        let count = count.expect("later frames come back by tiles");
        assert!(
            (1..=9).contains(&count),
            "frame {k}: {count} of {tiles} tiles changed"
        );
    }
}

#[test]
fn the_chosen_hardware_builds_the_energy_where_it_says() {
    use livecut::maxflow::EngineChoice;
    use livecut::pipeline::{GpuChoice, Hardware};
    let energy_of = |engine, gpu| {
        Hardware::choose(engine, gpu)
            .and_then(|h| Ok(h.segmenter(params())?))
            .map(|s| s.gpu_energy())
    };
    if CudaEngine::new().is_ok() {
        let cuda = energy_of(EngineChoice::Cuda, GpuChoice::Auto).unwrap();
        assert_eq!(
            cuda.as_deref(),
            Some("CUDA"),
            "the CUDA engine keeps its energy"
        );
        let none = energy_of(EngineChoice::Cuda, GpuChoice::None).unwrap();
        assert_eq!(none, None, "--gpu none builds on the CPU");
    }
    if compute_device().is_some() {
        let wgpu = energy_of(EngineChoice::Cpu, GpuChoice::Wgpu).unwrap();
        assert!(wgpu.is_some_and(|name| name.starts_with("wgpu on ")));
    }
    assert_eq!(energy_of(EngineChoice::Cpu, GpuChoice::None).unwrap(), None);
    assert!(
        energy_of(EngineChoice::Cpu, GpuChoice::Cuda).is_err(),
        "a contradiction"
    );
}

#[test]
fn a_lost_wgpu_device_hands_its_frames_to_the_cpu() {
    // without a cleanup, and with one (the labeller is on the device too)
    for cleanup_min_area in [0, 40] {
        let Some(gpu) = compute_device() else {
            return;
        };
        let params = SegmentParams {
            cleanup_min_area,
            ..params()
        };
        lose_the_device(gpu, params);
    }
}

fn lose_the_device(gpu: ComputeDevice, params: SegmentParams) {
    use livecut::energy::plan::EnergyDevice;
    let frames = drifting_frames(160, 120, 30);
    let lost_at = LEARN + 6;
    let reference = segment(
        &Backend::Wgpu(gpu.clone()),
        &frames,
        params.clone(),
        &[],
        false,
    );
    let mut segmenter = Segmenter::new(Box::new(CpuEngine::new()), params);
    segmenter.set_compute(Some(gpu.clone())).unwrap();
    for (k, frame) in frames.iter().enumerate() {
        if k == lost_at {
            gpu.device.destroy();
        }
        // every frame comes out, once
        let out = segmenter.segment(frame).expect("every frame is segmented");
        let (mask, flow) = &reference[k];
        if k < lost_at {
            assert!(out.mask.data == *mask, "frame {k}: masks differ");
            assert_eq!(out.flow, *flow, "frame {k}: flows");
            let expected = if k < LEARN {
                EnergyDevice::Cpu
            } else {
                EnergyDevice::Wgpu
            };
            assert_eq!(out.energy, expected, "frame {k}");
        } else {
            // the CPU takes over from the model's state when the device took it (six
            // frames of exposure drift ago; a lost device cannot hand it back) and a
            // gate started afresh: close to the CPU's own masks, not equal
            assert_eq!(out.energy, EnergyDevice::Cpu, "frame {k}");
            assert!(
                iou(
                    &out.mask,
                    &Mask {
                        width: 160,
                        height: 120,
                        data: mask.clone()
                    }
                ) > 0.8,
                "frame {k}: far from the CPU's mask"
            );
        }
        assert_eq!(
            out.fallback.is_some(),
            k == lost_at,
            "frame {k}: the loss is told once"
        );
    }
    assert_eq!(segmenter.gpu_energy(), None);
    assert!(!segmenter.labels_on_gpu());
}

/// A seeded sequence whose energy starts on one wgpu device and is handed, at frame
/// `lent`, to another (the window lending its own mid-stream) gives the CPU's masks.
fn lent_mid_stream(frames: &[Frame], seeds: &Seeds, lent: usize) {
    let (Some(first), Some(second)) = (compute_device(), compute_device()) else {
        return;
    };
    let run = |devices: Option<(&ComputeDevice, &ComputeDevice)>| {
        let mut s = Segmenter::new(Box::new(CpuEngine::new()), SegmentParams::default());
        if let Some((a, _)) = devices {
            s.set_compute(Some(a.clone())).unwrap();
            s.set_device_energy(true);
        }
        s.set_seeds(seeds.clone());
        let masks: Vec<(Vec<u8>, u64)> = (frames.iter().enumerate())
            .map(|(k, frame)| {
                if let Some((_, b)) = devices.filter(|_| k == lent) {
                    s.set_compute(Some(b.clone())).unwrap();
                }
                let output = s.segment(frame).unwrap();
                (output.mask.data, output.flow)
            })
            .collect();
        masks
    };
    let on_cpu = run(None);
    let handed = run(Some((&first, &second)));
    for (k, (a, b)) in on_cpu.iter().zip(&handed).enumerate() {
        assert_eq!(a.1, b.1, "lent at {lent}, frame {k}: flows");
        assert!(a.0 == b.0, "lent at {lent}, frame {k}: masks differ");
    }
}

#[test]
fn a_device_lent_mid_stream_gives_the_same_masks() {
    let (frames, truth) = demo_with_truth(200, 150, 14);
    let seeds = demo_seeds(&frames[0], &truth);
    for lent in [1, 2, 5, 9] {
        lent_mid_stream(&frames, &seeds, lent);
    }
}

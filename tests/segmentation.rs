//! The segmentation pipeline end to end: `Segmenter` on the demo scene and on small
//! generated images, static against dynamic cuts, the exactness of the trimap
//! reduction, the learned static background, bad input, and `livecut eval`.

mod common;

use common::cli::{assert_fails_with, json_output, livecut};
use common::pan::panned_demo;
use common::rng::Rng;
use livecut::capture::{DemoScene, Frame};
use livecut::energy::{
    CAPACITY_SCALE, ColorModelKind, ColorModels, EnergyBuilder, EnergyInputs, SeedLabel, Seeds,
    Side, Smoothness, estimate_sigma,
};
use livecut::gpu::GpuError;
use livecut::grid::GridProblem;
use livecut::grid::{Connectivity, Mask};
use livecut::maxflow::cpu::CpuEngine;
use livecut::maxflow::{CutSide, Engine, EngineError, EngineKind, Solution};
use livecut::pipeline::motion::Motion;
use livecut::pipeline::segmenter::SegmentError;
use livecut::pipeline::{SegmentParams, Segmenter};
use std::path::Path;
use std::process::Output;
use std::time::Duration;

fn segmenter(params: SegmentParams) -> Segmenter {
    Segmenter::new(Box::new(CpuEngine::new()), params)
}

fn iou(a: &Mask, b: &Mask) -> f64 {
    let (mut inter, mut union) = (0u64, 0u64);
    for (&x, &y) in a.data.iter().zip(&b.data) {
        inter += u64::from(x != 0 && y != 0);
        union += u64::from(x != 0 || y != 0);
    }
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

/// Runs the demo scene for `frames` frames from its default seeds; returns per frame
/// (IoU against the truth, flow, mask).
fn run_demo(params: SegmentParams, frames: u64) -> Vec<(f64, u64, Mask)> {
    let scene = DemoScene::new(160, 120, 30, 7);
    let mut s = segmenter(params);
    s.set_seeds(scene.default_seeds());
    (0..frames)
        .map(|i| {
            let (frame, truth) = scene.render(i);
            let out = s.segment(&frame).expect("demo frame segments");
            (iou(&out.mask, &truth), out.flow, out.mask)
        })
        .collect()
}

#[test]
fn demo_scene_is_followed_from_first_frame_seeds() {
    let results = run_demo(SegmentParams::default(), 12);
    let mean = results[1..].iter().map(|r| r.0).sum::<f64>() / (results.len() - 1) as f64;
    assert!(results[0].0 > 0.9, "seeded frame IoU {}", results[0].0);
    assert!(mean > 0.85, "mean IoU of the following frames {mean}");
}

#[test]
fn static_and_dynamic_cuts_give_identical_masks_and_flows() {
    let params = SegmentParams {
        iterations: 2,
        ..SegmentParams::default()
    };
    let fixed = run_demo(
        SegmentParams {
            dynamic: false,
            ..params.clone()
        },
        8,
    );
    let moving = run_demo(
        SegmentParams {
            dynamic: true,
            ..params
        },
        8,
    );
    for (i, (a, b)) in fixed.iter().zip(&moving).enumerate() {
        assert_eq!(a.1, b.1, "flow of frame {i}");
        assert!(a.2 == b.2, "mask of frame {i}");
    }
}

/// A GPU engine that fails from its `fail_from`-th call on (a device lost mid-stream).
struct FailingGpu {
    inner: CpuEngine,
    calls: u32,
    fail_from: u32,
}

impl Engine for FailingGpu {
    fn kind(&self) -> EngineKind {
        EngineKind::Cuda
    }
    fn description(&self) -> String {
        "a GPU that fails".into()
    }
    fn cut_side(&self) -> CutSide {
        self.inner.cut_side()
    }
    fn solve(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        self.calls += 1;
        if self.calls >= self.fail_from {
            return Err(GpuError::Unavailable("device lost".into()).into());
        }
        self.inner.solve(problem)
    }
    fn update(&mut self, problem: &GridProblem) -> Result<Solution, EngineError> {
        self.solve(problem)
    }
}

#[test]
fn a_gpu_failure_mid_stream_is_survived_on_the_cpu_without_losing_a_frame() {
    let scene = DemoScene::new(160, 120, 30, 7);
    let params = SegmentParams::default();
    let gpu = FailingGpu {
        inner: CpuEngine::new(),
        calls: 0,
        fail_from: 3,
    };
    let mut failing = Segmenter::new(Box::new(gpu), params.clone());
    let mut cpu = segmenter(params);
    failing.set_seeds(scene.default_seeds());
    cpu.set_seeds(scene.default_seeds());
    for i in 0..5 {
        let (frame, _) = scene.render(i);
        let out = failing.segment(&frame).expect("every frame is segmented");
        let reference = cpu.segment(&frame).expect("cpu frame");
        assert_eq!(
            out.fallback.is_some(),
            i == 2,
            "frame {i}: {:?}",
            out.fallback
        );
        if let Some(why) = &out.fallback {
            assert!(
                why.contains("device lost") && why.contains("CPU engine"),
                "{why}"
            );
        }
        let expected = if i < 2 {
            EngineKind::Cuda
        } else {
            EngineKind::Cpu
        };
        assert_eq!(failing.engine_kind(), expected, "frame {i}");
        assert_eq!(out.flow, reference.flow, "frame {i}");
        assert!(out.mask == reference.mask, "frame {i}");
    }
}

/// A 64x48 image: a warm ellipse with texture on a cool textured background, moved
/// right by `index` pixels.
fn ellipse_frame(index: u64) -> (Frame, Mask) {
    let (w, h) = (64u32, 48u32);
    let inside = |x: u32, y: u32| {
        let (dx, dy) = (
            (x as f32 - 30.0 - index as f32) / 17.0,
            (y as f32 - 24.0) / 12.0,
        );
        dx * dx + dy * dy <= 1.0
    };
    let mut rgb = Vec::with_capacity((w * h * 3) as usize);
    for y in 0..h {
        for x in 0..w {
            let t = ((x * 7 + y * 13) % 17) as u8;
            rgb.extend(if inside(x, y) {
                [200 + t, 110 + t, 50 + t]
            } else {
                [70 + t, 95 + t, 130 + t]
            });
        }
    }
    let frame = Frame {
        width: w,
        height: h,
        rgb,
        timestamp: Duration::ZERO,
        index,
    };
    (
        frame,
        Mask::from_fn(w, h, |i| inside(i as u32 % w, i as u32 / w)),
    )
}

/// A trimap of the mask: 4 px inside = foreground, 4 px outside = background.
fn trimap(mask: &Mask) -> Seeds {
    Seeds::from_mask(mask, 4)
}

/// The ellipse frame standing still, with sensor noise of up to ±`amp` levels on
/// every channel (deterministic per frame `index`).
fn noisy_still_frame(index: u64, amp: u8) -> Frame {
    let (mut frame, _) = ellipse_frame(0);
    frame.index = index;
    let mut rng = Rng(index);
    for v in frame.rgb.iter_mut() {
        let noise = rng.below(2 * amp as u64 + 1) as i16 - amp as i16;
        *v = (*v as i16 + noise).clamp(0, 255) as u8;
    }
    frame
}

#[test]
fn the_noise_gate_lets_a_still_camera_continue_from_the_kept_graph() {
    let seeds = trimap(&ellipse_frame(0).1);
    let run = |dynamic: bool, noise_gate: u8| {
        let mut s = segmenter(SegmentParams {
            dynamic,
            noise_gate,
            ..SegmentParams::default()
        });
        s.set_seeds(seeds.clone());
        (0..6)
            .map(|i| {
                let out = s.segment(&noisy_still_frame(i, 4)).expect("frame segments");
                (out.flow, out.mask, out.stats.dynamic)
            })
            .collect::<Vec<_>>()
    };
    let gated = run(true, 10);
    // Frame 1 is cut on another grid than the seeded frame's crop; from frame 2 on the
    // noise is held back and the engine continues from the kept graph (the first two
    // updates continue, to learn what that costs; later ones may probe a fresh solve).
    let resumed: Vec<bool> = gated.iter().map(|r| r.2).collect();
    assert_eq!(resumed[2..4], [true; 2], "{resumed:?}");
    for (i, (a, b)) in gated.iter().zip(&run(false, 10)).enumerate() {
        assert_eq!(a.0, b.0, "flow of frame {i}");
        assert!(a.1 == b.1, "mask of frame {i}");
    }
    let ungated: Vec<bool> = run(true, 0).iter().map(|r| r.2).collect();
    assert_eq!(ungated[2..], [false; 4], "noise changes too much to resume");
}

#[test]
fn trimap_reduction_is_exact() {
    let (frame, truth) = ellipse_frame(0);
    let seeds = trimap(&truth);
    // the cut itself, compared with the whole frame's: no smoothing after it
    let params = SegmentParams {
        lambda: 20.0,
        cleanup_smooth: false,
        ..SegmentParams::default()
    };
    let mut s = segmenter(params.clone());
    s.set_seeds(seeds.clone());
    let reduced = s.segment(&frame).expect("segments").mask;

    // The same energy on the whole frame, cut directly.
    let (w, h) = (frame.width as usize, frame.height as usize);
    let mut models =
        ColorModels::learn(params.color_model, &frame.rgb, |i| match seeds.labels[i] {
            SeedLabel::Foreground => Some(Side::Foreground),
            SeedLabel::Background => Some(Side::Background),
            SeedLabel::Unknown => None,
        })
        .unwrap();
    let sigma = estimate_sigma(&frame.rgb, w, h, params.connectivity);
    let problem = EnergyBuilder::new()
        .build(EnergyInputs {
            width: frame.width,
            height: frame.height,
            rgb: &frame.rgb,
            smoothness: Smoothness {
                connectivity: params.connectivity,
                lambda: params.lambda,
                sigma: Some(sigma),
                scale: CAPACITY_SCALE,
            },
            colors: Some(&mut models),
            seeds: Some(&seeds),
            temporal: None,
            background: None,
            rgb_moves: None,
        })
        .unwrap();
    let whole = CpuEngine::new().solve(&problem).unwrap().mask;
    assert_eq!(reduced, whole);
    assert!(iou(&reduced, &truth) > 0.95);
}

#[test]
fn every_colour_model_and_connectivity_segments_the_ellipse() {
    let (frame, truth) = ellipse_frame(0);
    let mut seeds = Seeds::unknown(frame.width, frame.height);
    // Scribbles: a short stroke inside, the border outside.
    for x in 25..36 {
        seeds.labels[24 * 64 + x] = SeedLabel::Foreground;
    }
    for (i, l) in seeds.labels.iter_mut().enumerate() {
        let (x, y) = (i % 64, i / 64);
        if x == 0 || y == 0 || x == 63 || y == 47 {
            *l = SeedLabel::Background;
        }
    }
    for color_model in [
        ColorModelKind::Histogram { bits: 4 },
        ColorModelKind::Gmm { components: 3 },
    ] {
        for connectivity in [Connectivity::Four, Connectivity::Eight] {
            let mut s = segmenter(SegmentParams {
                color_model,
                connectivity,
                iterations: 1,
                cleanup_min_area: 20,
                drop_unanchored: true,
                ..SegmentParams::default()
            });
            s.set_seeds(seeds.clone());
            let out = s.segment(&frame).expect("segments");
            let score = iou(&out.mask, &truth);
            assert!(score > 0.9, "{color_model:?} {connectivity:?}: IoU {score}");
        }
    }
}

#[test]
fn bad_seeds_and_frames_are_errors_not_panics() {
    let (frame, truth) = ellipse_frame(0);
    let mut s = segmenter(SegmentParams::default());
    assert!(matches!(
        s.segment(&frame),
        Err(SegmentError::NotReady(None))
    ));

    s.set_seeds(Seeds::unknown(10, 10));
    let err = s.segment(&frame).unwrap_err();
    assert!(matches!(err, SegmentError::Seeds(_)));
    assert!(err.to_string().contains("10x10"), "{err}");

    let mut only_fg = trimap(&truth);
    for l in &mut only_fg.labels {
        if *l == SeedLabel::Background {
            *l = SeedLabel::Unknown;
        }
    }
    s.set_seeds(only_fg);
    let err = s.segment(&frame).unwrap_err();
    assert_eq!(err.to_string(), "the seeds have no background seed");

    let mut only_bg = trimap(&truth);
    for l in &mut only_bg.labels {
        if *l == SeedLabel::Foreground {
            *l = SeedLabel::Unknown;
        }
    }
    s.set_seeds(only_bg);
    assert_eq!(
        s.segment(&frame).unwrap_err().to_string(),
        "the seeds have no foreground seed"
    );

    let short = Frame {
        rgb: frame.rgb[..100].to_vec(),
        ..frame.clone()
    };
    assert!(matches!(
        s.segment(&short),
        Err(SegmentError::BadFrame { .. })
    ));

    // Still usable afterwards.
    s.set_seeds(trimap(&truth));
    assert!(iou(&s.segment(&frame).unwrap().mask, &truth) > 0.95);
}

#[test]
fn the_same_frame_again_is_segmented_the_same_way() {
    let scene = DemoScene::new(160, 120, 30, 11);
    let (first, _) = scene.render(0);
    let (second, _) = scene.render(1);
    let mut s = segmenter(SegmentParams {
        temporal: 3.0,
        temporal_ramp: 5.0,
        ..SegmentParams::default()
    });
    // A foreground seed patch on the background: only hard constraints keep it.
    let mut seeds = scene.default_seeds();
    for y in 50..56 {
        for x in 2..8 {
            seeds.labels[y * 160 + x] = SeedLabel::Foreground;
        }
    }
    s.set_seeds(seeds);
    let seeded = s.segment(&first).unwrap();
    assert!(seeded.mask.is_source(52 * 160 + 4));
    let again = s.segment(&first).unwrap();
    assert_eq!(
        seeded.flow, again.flow,
        "the seeded frame redone with its seeds"
    );
    assert_eq!(seeded.mask, again.mask);
    let next = s.segment(&second).unwrap();
    let next_again = s.segment(&second).unwrap();
    assert_eq!(
        next.flow, next_again.flow,
        "a later frame redone from the same previous mask"
    );
    assert_eq!(next.mask, next_again.mask);
}

#[test]
fn learned_static_background_segments_without_seeds() {
    let (w, h) = (48u32, 32u32);
    let scene = |index: u64, object: bool| {
        let mut rgb = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let n = ((x * 31 + y * 17 + index as u32 * 7) % 5) as u8;
                let obj = object && (10..22).contains(&x) && (8..20).contains(&y);
                rgb.extend(if obj {
                    [150 + n, 60 + n, 60 + n]
                } else {
                    [90 + n, 120 + (x as u8), 80 + n]
                });
            }
        }
        Frame {
            width: w,
            height: h,
            rgb,
            timestamp: Duration::ZERO,
            index,
        }
    };
    let mut s = segmenter(SegmentParams {
        background_frames: 4,
        ..SegmentParams::default()
    });
    for i in 0..4 {
        let learning = s.segment(&scene(i, false)).expect("a learning frame");
        assert!(learning.learning);
        assert_eq!(learning.mask.count_source(), 0);
    }
    assert_eq!(s.background_frames_left(), Some(0));
    let empty = s.segment(&scene(4, false)).expect("the empty scene");
    assert!(!empty.learning);
    assert_eq!(empty.mask.count_source(), 0);
    let out = s.segment(&scene(5, true)).unwrap();
    let truth = Mask::from_fn(w, h, |i| {
        let (x, y) = (i as u32 % w, i as u32 / w);
        (10..22).contains(&x) && (8..20).contains(&y)
    });
    assert!(
        iou(&out.mask, &truth) > 0.95,
        "IoU {}",
        iou(&out.mask, &truth)
    );
}

// ---- livecut eval ----

fn write_rgb(path: &Path, frame: &Frame) {
    image::RgbImage::from_raw(frame.width, frame.height, frame.rgb.clone())
        .unwrap()
        .save(path)
        .unwrap();
}

fn write_grey(path: &Path, w: u32, h: u32, data: Vec<u8>) {
    image::GrayImage::from_raw(w, h, data)
        .unwrap()
        .save(path)
        .unwrap();
}

/// The `--images`, `--gt` and `--seeds` folders of an [`image_set`].
struct ImageSet {
    images: String,
    gt: String,
    seeds: String,
}

impl ImageSet {
    /// The three folders as `livecut eval` options.
    fn args(&self) -> [&str; 6] {
        [
            "--images",
            &self.images,
            "--gt",
            &self.gt,
            "--seeds",
            &self.seeds,
        ]
    }
}

/// images/, seeds/, gt/ for two generated images; returns those three folders' paths.
fn image_set(root: &Path) -> ImageSet {
    for d in ["images", "seeds", "gt"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for (name, index) in [("a", 0), ("b", 1)] {
        let (frame, truth) = ellipse_frame(index);
        write_rgb(&root.join(format!("images/{name}.png")), &frame);
        let seeds = trimap(&truth);
        write_grey(
            &root.join(format!("seeds/{name}.png")),
            64,
            48,
            seeds.to_grey(),
        );
        let mut gt = truth.data.clone();
        gt[0] = 128; // an ignored pixel
        write_grey(&root.join(format!("gt/{name}.png")), 64, 48, gt);
    }
    ImageSet {
        images: p(root, "images"),
        gt: p(root, "gt"),
        seeds: p(root, "seeds"),
    }
}

/// Runs `livecut eval` on the CPU engine.
fn eval(args: &[&str]) -> Output {
    livecut(&[&["eval"], args, &["--engine", "cpu"]].concat())
}

fn p(root: &Path, sub: &str) -> String {
    root.join(sub).to_str().unwrap().to_owned()
}

#[test]
fn eval_scores_images() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let folders = image_set(root);
    let json_args: [&str; 5] = ["--json", "--masks-out", &p(root, "out"), "--mode", "both"];
    let out = eval(&[&folders.args()[..], &json_args].concat());
    let json = json_output(&out);
    let images = json["images"].as_array().unwrap();
    assert_eq!(images.len(), 2);
    assert_eq!(images[0]["name"], "a");
    assert!(json["mean_iou"].as_f64().unwrap() > 0.95, "{json}");
    assert!(root.join("out/b.png").is_file());
    // The table form names every image and the mean.
    let out = eval(&folders.args());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines().any(|l| l.starts_with("a ")) && text.contains("mean"),
        "{text}"
    );
}

#[test]
fn eval_follows_a_video_from_first_frame_truth() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("frames")).unwrap();
    std::fs::create_dir_all(root.join("gt")).unwrap();
    let scene = DemoScene::new(96, 64, 30, 3);
    for i in 0..5 {
        let (frame, truth) = scene.render(i);
        write_rgb(&root.join(format!("frames/{i:05}.png")), &frame);
        write_grey(&root.join(format!("gt/{i:05}.png")), 96, 64, truth.data);
    }
    let out = eval(&[
        "--frames",
        &p(root, "frames"),
        "--gt",
        &p(root, "gt"),
        "--mode",
        "both",
        "--json",
    ]);
    let json = json_output(&out);
    assert_eq!(json["frames"].as_array().unwrap().len(), 5);
    assert!(json["mean_iou"].as_f64().unwrap() > 0.7, "{json}");
    assert_eq!(json["cut_modes"].as_array().unwrap().len(), 2);
}

#[test]
fn eval_rejects_bad_input_with_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let folders = image_set(root);
    let set = folders.args();
    let (gt, seeds) = (&folders.gt, &folders.seeds);
    std::fs::create_dir_all(root.join("empty")).unwrap();
    let empty = p(root, "empty");
    let no_images = eval(&["--images", &empty, "--gt", gt, "--seeds", seeds]);
    assert_fails_with(&no_images, "no images");

    // Seeds with no foreground for image b.
    std::fs::write(root.join("seeds/b.png"), b"").unwrap();
    assert_fails_with(&eval(&set), "b.png");
    write_grey(&root.join("seeds/b.png"), 64, 48, vec![0; 64 * 48]);
    assert_fails_with(&eval(&set), "no foreground seed");
    write_grey(&root.join("seeds/b.png"), 64, 48, vec![255; 64 * 48]);
    assert_fails_with(&eval(&set), "no background seed");
    write_grey(&root.join("seeds/b.png"), 20, 10, vec![0; 200]);
    assert_fails_with(&eval(&set), "20x10");

    // An unreadable image and a missing ground truth.
    image_set(root);
    std::fs::write(root.join("images/c.png"), b"not a png").unwrap();
    std::fs::copy(root.join("seeds/a.png"), root.join("seeds/c.png")).unwrap();
    std::fs::copy(root.join("gt/a.png"), root.join("gt/c.png")).unwrap();
    assert_fails_with(&eval(&set), "c.png");
    std::fs::remove_file(root.join("images/c.png")).unwrap();
    std::fs::remove_file(root.join("gt/b.png")).unwrap();
    assert_fails_with(&eval(&set), "no ground truth for b");
    let frames = eval(&["--frames", &folders.images, "--gt", gt]);
    assert_fails_with(&frames, "no ground truth for b");
}

/// A still scene's frames keep one σ (their own estimates drift within its band), so
/// their arcs change only where the scene did; a frame that changed throughout (here
/// its contrast halved) gets its own σ, and the census says what moved.
#[test]
fn a_still_scene_keeps_its_sigma_and_a_changed_one_gets_its_own() {
    let (first, truth) = ellipse_frame(0);
    let mut s = segmenter(SegmentParams::default());
    s.set_census(true);
    s.set_seeds(trimap(&truth));
    let mut sigmas = Vec::new();
    let mut last = None;
    for i in 0..4 {
        let out = s.segment(&noisy_still_frame(i, 4)).expect("frame segments");
        sigmas.push(s.last_sigma());
        last = out.census;
    }
    assert!(sigmas.windows(2).all(|w| w[0] == w[1]), "{sigmas:?}");
    let held = last.expect("counted");
    assert!(held.arcs_by_weights == 0, "{held:?}");
    let own = estimate_sigma(&first.rgb, 64, 48, Connectivity::Eight);
    assert!((own - sigmas[0]).abs() <= 0.1 * sigmas[0]);
    let mut flat = noisy_still_frame(4, 4);
    flat.rgb.iter_mut().for_each(|v| *v = 64 + *v / 2);
    let out = s.segment(&flat).expect("frame segments");
    assert!(
        s.last_sigma() < 0.9 * sigmas[0],
        "{} {sigmas:?}",
        s.last_sigma()
    );
    let moved = out.census.expect("counted");
    assert!(moved.throughout, "{moved:?}");
    assert!(!held.throughout, "{held:?}");
}

/// A lower working resolution cuts a reduced copy of each frame and gives masks of the
/// frame's size that still follow the object, from seeds drawn at full size; the scale
/// changes mid-stream without an error. A learned background is learned again at the
/// new size.
#[test]
fn a_lower_working_resolution_gives_full_size_masks_that_follow_the_object() {
    let scene = DemoScene::new(320, 240, 30, 7);
    for learned in [false, true] {
        let params = SegmentParams {
            working_scale: 2,
            background_frames: if learned { 5 } else { 0 },
            ..SegmentParams::default()
        };
        let mut s = segmenter(params.clone());
        if !learned {
            s.set_seeds(scene.default_seeds());
        }
        let (mut scores, mut learning) = (Vec::new(), Vec::new());
        for i in 0..30 {
            let scale = match i {
                15 => Some(3),
                22 => Some(1),
                _ => None,
            };
            if let Some(working_scale) = scale {
                s.set_params(SegmentParams {
                    working_scale,
                    ..params.clone()
                });
            }
            let (frame, truth) = scene.render(i);
            let out = s.segment(&frame).expect("every frame segments");
            assert_eq!((out.mask.width, out.mask.height), (320, 240));
            if out.learning {
                learning.push(i);
            } else {
                scores.push(iou(&out.mask, &truth));
            }
        }
        if learned {
            // the demo's objects are in view while it learns: only the relearning
            // at each new size is checked here
            let expected: Vec<u64> = [0..5, 15..20, 22..27].into_iter().flatten().collect();
            assert_eq!(learning, expected);
        } else {
            let mean = scores.iter().sum::<f64>() / scores.len() as f64;
            assert!(mean > 0.9, "mean IoU {mean:.3} ({scores:?})");
        }
    }
}

#[test]
fn a_panning_camera_is_followed() {
    let (frames, seeds) = panned_demo(240, 150, 4, 16);
    let run = |follow_motion: bool| {
        let params = SegmentParams {
            follow_motion,
            ..SegmentParams::default()
        };
        let mut s = segmenter(params);
        s.set_seeds(seeds.clone());
        let mut results = Vec::new();
        for (k, (frame, truth)) in frames.iter().enumerate() {
            let out = s.segment(frame).unwrap();
            if k == 5 {
                // the same frame again starts from the same (moved) previous mask
                let again = s.segment(frame).unwrap();
                assert_eq!((again.flow, again.motion), (out.flow, out.motion));
                assert!(again.mask == out.mask, "a redone frame's mask");
            }
            results.push((iou(&out.mask, truth), out.motion));
        }
        results
    };
    let (on, off) = (run(true), run(false));
    let mean = |r: &[(f64, Option<Motion>)]| {
        r[1..].iter().map(|x| x.0).sum::<f64>() / (r.len() - 1) as f64
    };
    assert_eq!(on[0].1, None, "no frame before the first");
    for (k, (_, motion)) in on.iter().enumerate().skip(1) {
        // the camera moves right: the content, 4 pixels left a frame
        let motion = motion.expect("looked for on every later frame");
        assert!(
            (-6..=-2).contains(&motion.dx) && motion.dy == 0,
            "frame {k}: {motion:?}"
        );
    }
    assert!(off.iter().all(|x| x.1.is_none()), "not looked for when off");
    assert!(
        mean(&on) > mean(&off) + 0.01,
        "the moved prior keeps the masks truer: {:.4} against {:.4}",
        mean(&on),
        mean(&off)
    );
}

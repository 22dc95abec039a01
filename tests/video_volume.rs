//! A video cut as volumes (`segment --volume N`): frames stacked with links along
//! time and cut exactly with their seeds held, the segmenter on a scene with a known
//! answer, and the commands.

mod common;

use common::cli::{assert_fails_with, json_output, livecut};
use common::generators::{neighbour_capacities, symmetrise};
use common::reference::volume_max_flow;
use common::rng::Rng;
use common::walk::{H, LEARN, W, plain, truth};
use livecut::energy::volume::{Gather, Slice, StackError, unstack};
use livecut::energy::{SeedLabel, Seeds};
use livecut::grid::{Connectivity, GridProblem, Mask, VolumeProblem};
use livecut::maxflow::VolumeEngine;
use livecut::maxflow::cpu::CpuVolumeEngine;
use livecut::pipeline::SegmentParams;
use livecut::pipeline::segmenter::SegmentError;
use livecut::pipeline::volume::VolumeSegmenter;
use std::path::Path;

/// One frame's energy as the builder makes them: small neighbour arcs, one terminal
/// arc per pixel, and seeded pixels (a few, where `seeded`) pulled by one more than the
/// sum of their arcs.
struct Frame {
    problem: GridProblem,
    rgb: Vec<u8>,
    seeds: Option<Seeds>,
}

fn frame(rng: &mut Rng, w: u32, h: u32, c: Connectivity, seeded: bool) -> Frame {
    let n = (w * h) as usize;
    // symmetric arcs, as contrast weights are, so that a seed's pull outweighs its
    // neighbours' too
    let arcs = neighbour_capacities(w, h, c, |_, _, _| rng.below(60) as i32);
    let zeros = vec![0; n];
    let arcs = GridProblem::from_arrays(w, h, c, zeros.clone(), zeros, arcs).unwrap();
    let (_, _, edges) = symmetrise(&arcs).into_arrays();
    let labels: Vec<SeedLabel> = (0..n)
        .map(|_| match (seeded, rng.below(12)) {
            (true, 0) => SeedLabel::Foreground,
            (true, 1) => SeedLabel::Background,
            _ => SeedLabel::Unknown,
        })
        .collect();
    let (mut source, mut sink) = (vec![0; n], vec![0; n]);
    for (p, label) in labels.iter().enumerate() {
        let arcs: i32 = edges.iter().map(|e| e[p]).sum();
        let data = rng.below(200) as i32 - 100;
        match label {
            SeedLabel::Foreground => source[p] = arcs + 1,
            SeedLabel::Background => sink[p] = arcs + 1,
            SeedLabel::Unknown if data > 0 => source[p] = data,
            SeedLabel::Unknown => sink[p] = -data,
        }
    }
    // colours that mostly stay from frame to frame, as a still scene's do
    let rgb = (0..3 * n).map(|_| 100 + rng.below(40) as u8).collect();
    Frame {
        problem: GridProblem::from_arrays(w, h, c, source, sink, edges).unwrap(),
        rgb,
        seeds: seeded.then_some(Seeds {
            width: w,
            height: h,
            labels,
        }),
    }
}

/// Time-link weights falling with the colour difference, with a floor.
fn weights() -> Vec<i32> {
    (0..=3 * 255 * 255)
        .map(|d2| 10 + (80 - d2 / 20).max(0))
        .collect()
}

/// The frames' energies gathered into one volume with their colours' and seeds' links.
fn stack(frames: &[Frame], weights: &[i32]) -> Result<VolumeProblem, StackError> {
    let mut gather = Gather::new(frames.len());
    for f in frames {
        gather.push(&f.problem)?;
    }
    let slices: Vec<Slice<'_>> = frames
        .iter()
        .map(|f| Slice {
            rgb: &f.rgb,
            hard: f.seeds.as_ref(),
        })
        .collect();
    gather.finish(&slices, weights)
}

#[test]
fn a_volume_is_cut_exactly_and_its_seeds_hold() {
    let mut rng = Rng(11);
    for case in 0..24u32 {
        let c = [Connectivity::Four, Connectivity::Eight][case as usize % 2];
        let (w, h, depth) = (5 + case % 6, 4 + case % 5, 1 + case as usize % 4);
        let frames: Vec<Frame> = (0..depth)
            .map(|z| frame(&mut rng, w, h, c, z == 0 || case % 3 == 0))
            .collect();
        let volume = stack(&frames, &weights()).unwrap();
        let solution = CpuVolumeEngine::new().solve(&volume).unwrap();
        let reference = volume_max_flow(&volume);
        assert_eq!(solution.flow, reference.flow, "case {case}");
        let (mw, mh) = volume.mask_size();
        let reachable = Mask::from_fn(mw, mh, |i| reference.reachable[i]);
        assert_eq!(solution.mask, reachable, "case {case}");
        let masks = unstack(&solution.mask, h);
        for (z, (f, m)) in frames.iter().zip(masks).enumerate() {
            let Some(seeds) = &f.seeds else { continue };
            for (p, &label) in seeds.labels.iter().enumerate() {
                let want = match label {
                    SeedLabel::Foreground => true,
                    SeedLabel::Background => false,
                    SeedLabel::Unknown => continue,
                };
                assert_eq!(m.is_source(p), want, "case {case}: seed {p} of frame {z}");
            }
        }
    }
}

#[test]
fn slices_that_do_not_match_are_refused() {
    let mut rng = Rng(3);
    let a = frame(&mut rng, 6, 4, Connectivity::Eight, false);
    let b = frame(&mut rng, 6, 5, Connectivity::Eight, false);
    let c = frame(&mut rng, 6, 4, Connectivity::Four, false);
    let w = weights();
    assert_eq!(stack(&[], &w).unwrap_err(), StackError::Empty);
    for (other, what) in [(&b, "size"), (&c, "connectivity")] {
        let mut gather = Gather::new(2);
        gather.push(&a.problem).unwrap();
        assert_eq!(gather.frames(), 1);
        let err = gather.push(&other.problem).unwrap_err();
        assert_eq!(err, StackError::Mismatch { index: 1, what });
    }
    let mut gather = Gather::new(2);
    gather.push(&a.problem).unwrap();
    gather.push(&a.problem).unwrap();
    let slice = |rgb| Slice { rgb, hard: None };
    let err = gather
        .finish(&[slice(&a.rgb), slice(&a.rgb[3..])], &w)
        .unwrap_err();
    assert_eq!(
        err,
        StackError::Mismatch {
            index: 1,
            what: "colours"
        }
    );
    let mut gather = Gather::new(2);
    gather.push(&a.problem).unwrap();
    let err = gather
        .finish(&[slice(&a.rgb), slice(&a.rgb)], &w)
        .unwrap_err();
    assert_eq!(
        err,
        StackError::Mismatch {
            index: 1,
            what: "frame count"
        }
    );
}

fn volume_segmenter(depth: u32, params: SegmentParams) -> VolumeSegmenter {
    VolumeSegmenter::new(Box::new(CpuVolumeEngine::new()), params, depth).unwrap()
}

/// Mean IoU of `masks` against the walking object's truth from frame `first` on.
fn mean_iou(masks: &[Mask], first: u64) -> f64 {
    let ious = masks.iter().zip(first..).map(|(m, i)| {
        let t = truth(i);
        let both = (0..m.data.len()).filter(|&p| m.is_source(p) && t.is_source(p));
        let either = (0..m.data.len()).filter(|&p| m.is_source(p) || t.is_source(p));
        both.count() as f64 / either.count().max(1) as f64
    });
    ious.sum::<f64>() / masks.len() as f64
}

#[test]
fn a_learned_background_video_comes_out_volume_by_volume_in_order() {
    let mut segmenter = volume_segmenter(
        4,
        SegmentParams {
            background_frames: LEARN,
            ..SegmentParams::default()
        },
    );
    let mut rng = Rng(8);
    let mut outputs = Vec::new();
    for i in 0..LEARN as u64 + 10 {
        let got = segmenter.push(&plain(&mut rng, i)).unwrap();
        // learning frames come at once, a volume's frames when it is full
        let want = if i < LEARN as u64 {
            1
        } else {
            usize::from((i + 1 - LEARN as u64).is_multiple_of(4)) * 4
        };
        assert_eq!(got.len(), want, "after frame {i}");
        outputs.extend(got);
    }
    outputs.extend(segmenter.finish().unwrap());
    assert_eq!(outputs.len(), LEARN as usize + 10);
    assert!(segmenter.finish().unwrap().is_empty());
    let (learning, cut) = outputs.split_at(LEARN as usize);
    assert!(learning.iter().all(|o| o.learning && o.volume.is_none()));
    let spans: Vec<(u64, u32)> = cut
        .iter()
        .map(|o| o.volume.map(|v| (v.first, v.frames)).unwrap())
        .collect();
    let first = LEARN as u64;
    let want = [(first, 4); 4].into_iter().chain([(first + 4, 4); 4]);
    let want: Vec<_> = want.chain([(first + 8, 2); 2]).collect();
    assert_eq!(spans, want);
    let masks: Vec<Mask> = cut.iter().map(|o| o.mask.clone()).collect();
    let iou = mean_iou(&masks, first);
    assert!(iou > 0.9, "mean IoU {iou}");
}

#[test]
fn a_seeded_video_follows_its_object_from_the_first_frame() {
    let mut segmenter = volume_segmenter(3, SegmentParams::default());
    let first = LEARN as u64;
    segmenter.set_seeds(Seeds::from_mask(&truth(first), 2));
    let mut rng = Rng(2);
    let mut masks = Vec::new();
    for i in first..first + 8 {
        masks.extend(
            segmenter
                .push(&plain(&mut rng, i))
                .unwrap()
                .into_iter()
                .map(|o| o.mask),
        );
    }
    masks.extend(segmenter.finish().unwrap().into_iter().map(|o| o.mask));
    assert_eq!(masks.len(), 8);
    let iou = mean_iou(&masks, first);
    assert!(iou > 0.9, "mean IoU {iou}");
}

#[test]
fn bad_depths_seeds_and_frames_are_errors() {
    for depth in [0, 1, 65] {
        let made = VolumeSegmenter::new(
            Box::new(CpuVolumeEngine::new()),
            SegmentParams::default(),
            depth,
        );
        assert!(
            matches!(made, Err(SegmentError::Volume(_))),
            "depth {depth}"
        );
    }
    let mut rng = Rng(4);
    let mut segmenter = volume_segmenter(2, SegmentParams::default());
    let frame = plain(&mut rng, LEARN as u64);
    assert!(matches!(
        segmenter.push(&frame),
        Err(SegmentError::NotReady(None))
    ));
    let mut no_background = Seeds::from_mask(&truth(LEARN as u64), 2);
    for l in &mut no_background.labels {
        if *l == SeedLabel::Background {
            *l = SeedLabel::Unknown;
        }
    }
    segmenter.set_seeds(no_background);
    assert!(matches!(
        segmenter.push(&frame),
        Err(SegmentError::Seeds(_))
    ));
    segmenter.set_seeds(Seeds::from_mask(&truth(LEARN as u64), 2));
    segmenter.push(&frame).unwrap();
    let mut short = plain(&mut rng, LEARN as u64 + 1);
    short.rgb.truncate(10);
    assert!(matches!(
        segmenter.push(&short),
        Err(SegmentError::BadFrame { .. })
    ));
}

/// The walking scene's frames `0..count` and their truths, as files.
fn write_walk(dir: &Path, count: u64) -> (String, String) {
    let (frames, gt) = (dir.join("frames"), dir.join("gt"));
    std::fs::create_dir_all(&frames).unwrap();
    std::fs::create_dir_all(&gt).unwrap();
    let mut rng = Rng(9);
    for i in 0..count {
        let f = plain(&mut rng, i);
        image::RgbImage::from_raw(W, H, f.rgb)
            .unwrap()
            .save(frames.join(format!("{i:03}.png")))
            .unwrap();
        truth(i).write_png(&gt.join(format!("{i:03}.png"))).unwrap();
    }
    let text = |p: &Path| p.to_str().unwrap().to_owned();
    (text(&frames), text(&gt))
}

#[test]
fn segment_writes_a_mask_per_frame_and_says_which_volume_cut_it() {
    let dir = tempfile::tempdir().unwrap();
    let (frames, _) = write_walk(dir.path(), 12);
    let (out, json) = (dir.path().join("masks"), dir.path().join("frames.jsonl"));
    let (out, json) = (out.to_str().unwrap(), json.to_str().unwrap());
    let learn = LEARN.to_string();
    let args = ["segment", "--input", &frames, "--out", out, "--json", json];
    let run = livecut(&[&args[..], &["--background", &learn, "--volume", "4"]].concat());
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("volumes of 4 frames"), "{stdout}");
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(json)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let frames_seen: Vec<u64> = lines.iter().map(|l| l["frame"].as_u64().unwrap()).collect();
    assert_eq!(frames_seen, (0..12).collect::<Vec<_>>());
    let firsts: Vec<Option<u64>> = lines
        .iter()
        .map(|l| l["volume"]["first"].as_u64())
        .collect();
    let first = LEARN as u64;
    let mut want = vec![None; LEARN as usize];
    want.extend([Some(first); 4].into_iter().chain([Some(first + 4); 3]));
    assert_eq!(firsts, want);
    for i in 0..12 {
        assert!(Path::new(out).join(format!("{i:03}.png")).is_file());
    }
    let budget = ["--background", &learn, "--volume", "4", "--budget-ms", "5"];
    let run = livecut(&[&args[..], &budget].concat());
    assert_fails_with(&run, "--volume does not take --budget-ms");
    // clap's own refusal, with its usage hint
    let run = livecut(&[&args[..], &["--volume", "1"]].concat());
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: ") && err.contains("--volume"),
        "{err}"
    );
}

#[test]
fn eval_scores_a_video_cut_as_volumes() {
    let dir = tempfile::tempdir().unwrap();
    let (frames, gt) = write_walk(dir.path(), 14);
    let learn = LEARN.to_string();
    let args = [
        "eval",
        "--frames",
        &frames,
        "--gt",
        &gt,
        "--background",
        &learn,
    ];
    let out = livecut(&[&args[..], &["--volume", "3", "--engine", "cpu", "--json"]].concat());
    let json = json_output(&out);
    assert_eq!(json["volume"], 3);
    assert_eq!(json["first_scored"], LEARN);
    let iou = json["mean_iou"].as_f64().unwrap();
    assert!(iou > 0.9, "mean IoU {iou}");
}

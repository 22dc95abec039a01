//! `livecut segment` as a user runs it: the built binary on small generated inputs.

use livecut::capture::{DemoScene, video};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_livecut");

/// Frame size of the generated images.
const W: u32 = 48;
const H: u32 = 36;

fn livecut(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Whether pixel (x, y) lies in the disc of frame `shift` (which moves right).
fn in_disc(x: u32, y: u32, shift: u32) -> bool {
    let (dx, dy) = (x as f32 - (20 + shift) as f32, y as f32 - 18.0);
    dx * dx + dy * dy <= 100.0
}

/// An orange disc on a blue-grey background with a little deterministic texture.
fn write_frame(path: &Path, shift: u32) {
    let img = image::RgbImage::from_fn(W, H, |x, y| {
        let t = ((x * 7 + y * 13) % 11) as u8;
        if in_disc(x, y, shift) {
            image::Rgb([215 + t, 120 + t, 40 + t])
        } else {
            image::Rgb([60 + t, 90 + t, 120 + t])
        }
    });
    img.save(path).unwrap();
}

/// Seeds: foreground at the disc centre, background along the border (128 elsewhere).
fn write_seeds(path: &Path, w: u32, h: u32, fg: bool, bg: bool) {
    let img = image::GrayImage::from_fn(w, h, |x, y| {
        let value = if fg && (18..=22).contains(&x) && (16..=20).contains(&y) {
            255
        } else if bg && (x < 2 || y < 2 || x >= w - 2 || y >= h - 2) {
            0
        } else {
            128
        };
        image::Luma([value])
    });
    img.save(path).unwrap();
}

fn read_mask(path: &Path) -> image::GrayImage {
    image::open(path).unwrap().into_luma8()
}

fn json_lines(path: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every field of a JSON line, in order (`iou` follows where the source has a truth).
const FIELDS: [&str; 20] = [
    "frame",
    "mask",
    "width",
    "height",
    "decode_ms",
    "energy_ms",
    "cut_ms",
    "cleanup_ms",
    "total_ms",
    "flow",
    "iterations",
    "dynamic",
    "changed_arcs",
    "dropped",
    "engine",
    "energy",
    "foreground",
    "learning",
    "changed",
    "noise_gate",
];

/// Checks that one raw JSON line has exactly [`FIELDS`] (then `motion` with
/// `motion`, and `iou` last with `iou`), in that order.
fn assert_fields_in_order(line: &str, motion: bool, iou: bool) {
    let fields: Vec<&str> = FIELDS
        .into_iter()
        .chain(motion.then_some("motion"))
        .chain(iou.then_some("iou"))
        .collect();
    let value: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(value.as_object().unwrap().len(), fields.len(), "{line}");
    let at: Vec<usize> = fields
        .iter()
        .map(|f| {
            line.find(&format!("\"{f}\":"))
                .unwrap_or_else(|| panic!("missing {f} in {line}"))
        })
        .collect();
    assert!(at.is_sorted(), "fields out of order in {line}");
}

fn assert_success(out: &Output) {
    assert!(
        out.status.success(),
        "exit {:?}\nstderr: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    // stderr is not a terminal here: no progress bar, and the CPU engine needs no note.
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
}

/// Exit 2, exactly one `error:` line, no panic, and none of `outputs` exists.
fn assert_clean_failure(out: &Output, needle: &str, outputs: &[&Path]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "stderr: {stderr}");
    let errors: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(errors.len(), 1, "stderr: {stderr}");
    assert!(
        errors[0].contains(needle),
        "expected {needle:?} in {:?}",
        errors[0]
    );
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    for path in outputs {
        assert!(!path.exists(), "{} was left behind", path.display());
    }
}

struct Case {
    _dir: tempfile::TempDir,
    root: PathBuf,
    out: PathBuf,
    json: PathBuf,
}

fn case() -> Case {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    Case {
        out: root.join("masks"),
        json: root.join("frames.jsonl"),
        root,
        _dir: dir,
    }
}

/// `livecut segment` of `input` into the mask folder `out`, with `extra` options after.
fn segment(input: &str, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["segment", "--input", input, "--out", arg(out)];
    args.extend(extra);
    livecut(&args)
}

impl Case {
    /// `livecut segment` of `input` into this case's mask folder and JSON file on the
    /// CPU engine, with `extra` options after.
    fn segment(&self, input: &str, extra: &[&str]) -> Output {
        let mut args = vec!["--json", arg(&self.json), "--engine", "cpu"];
        args.extend(extra);
        segment(input, &self.out, &args)
    }
}

#[test]
fn an_image_gives_one_mask_named_after_it_and_one_json_line() {
    let c = case();
    let input = c.root.join("disc.png");
    let seeds = c.root.join("seeds.png");
    write_frame(&input, 0);
    write_seeds(&seeds, W, H, true, true);
    let out = c.segment(arg(&input), &["--seeds", arg(&seeds)]);
    assert_success(&out);
    let names: Vec<_> = std::fs::read_dir(&c.out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["disc.png"], "one mask, no temporary files");
    let mask = read_mask(&c.out.join("disc.png"));
    assert_eq!(mask.dimensions(), (W, H));
    assert!(mask.pixels().all(|p| p[0] == 0 || p[0] == 255));
    let wrong = mask
        .enumerate_pixels()
        .filter(|(x, y, p)| (p[0] == 255) != in_disc(*x, *y, 0))
        .count();
    assert!(wrong < (W * H / 20) as usize, "{wrong} pixels wrong");
    let lines = json_lines(&c.json);
    assert_eq!(lines.len(), 1);
    assert_fields_in_order(
        std::fs::read_to_string(&c.json).unwrap().trim_end(),
        false,
        false,
    );
    assert_eq!(lines[0]["frame"], 0);
    assert_eq!(lines[0]["engine"], "cpu");
    assert_eq!(lines[0]["dropped"], 0);
    assert!(lines[0]["dynamic"].is_boolean());
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 mask(s) written"));
}

#[test]
fn a_folder_gives_a_mask_per_image_and_dynamic_follows_the_flag() {
    let c = case();
    let seq = c.root.join("seq");
    std::fs::create_dir(&seq).unwrap();
    // The disc moves once, then the scene stands still: frames 2 and 3 change no
    // capacity, so `update` continues from the kept graph (a moving disc changes
    // more than the few percent of arcs it resumes for).
    for (i, shift) in [0, 1, 1, 1].into_iter().enumerate() {
        write_frame(&seq.join(format!("f{i:02}.png")), shift);
    }
    std::fs::write(seq.join("readme.txt"), "not an image").unwrap();
    let seeds = c.root.join("seeds.png");
    write_seeds(&seeds, W, H, true, true);
    for (dynamic, json) in [
        ("on", c.root.join("on.jsonl")),
        ("off", c.root.join("off.jsonl")),
    ] {
        let options = [
            "--seeds",
            arg(&seeds),
            "--json",
            arg(&json),
            "--engine",
            "cpu",
        ];
        let mode = ["--dynamic", dynamic, "--connectivity", "4"];
        let out = segment(arg(&seq), &c.out, &[&options[..], &mode].concat());
        assert_success(&out);
        let lines = json_lines(&json);
        let frames: Vec<u64> = lines.iter().map(|l| l["frame"].as_u64().unwrap()).collect();
        assert_eq!(frames, [0, 1, 2, 3], "every frame, in order");
        let flags: Vec<bool> = lines
            .iter()
            .map(|l| l["dynamic"].as_bool().unwrap())
            .collect();
        if dynamic == "on" {
            // The first frame is solved from scratch; later ones continue from the kept
            // residual graph (the engine may still solve afresh when the grid's shape
            // changes, e.g. after a seeded frame cut on a crop).
            assert!(!flags[0], "{flags:?}");
            assert_eq!(flags[2..], [true, true], "update after the first frames");
        } else {
            assert_eq!(flags, [false; 4]);
        }
    }
    for i in 0..4 {
        let mask = read_mask(&c.out.join(format!("f{i:02}.png")));
        assert_eq!(mask.dimensions(), (W, H));
    }
    assert_eq!(std::fs::read_dir(&c.out).unwrap().count(), 4);
}

/// A speck of the object's colour away from it is cut as foreground, and `--min-area`
/// drops it.
#[test]
fn min_area_drops_small_foreground_components() {
    let c = case();
    let input = c.root.join("speck.png");
    let seeds = c.root.join("seeds.png");
    write_frame(&input, 0);
    let mut img = image::open(&input).unwrap().into_rgb8();
    let speck = [(40, 28), (41, 28), (40, 29), (41, 29)];
    for (x, y) in speck {
        img.put_pixel(x, y, image::Rgb([220, 125, 45]));
    }
    img.save(&input).unwrap();
    write_seeds(&seeds, W, H, true, true);
    let speck_on = |extra: &[&str]| {
        let out = c.segment(arg(&input), &[&["--seeds", arg(&seeds)], extra].concat());
        assert_success(&out);
        let mask = read_mask(&c.out.join("speck.png"));
        speck
            .iter()
            .filter(|&&(x, y)| mask.get_pixel(x, y)[0] == 255)
            .count()
    };
    assert_eq!(speck_on(&[]), 4, "the speck without a minimum area");
    assert_eq!(
        speck_on(&["--min-area", "20"]),
        0,
        "the speck below 20 pixels"
    );
}

#[test]
fn the_demo_needs_no_seeds_and_segments_well() {
    let c = case();
    let out = c.segment("demo", &["--size", "96x72", "--frames", "4"]);
    assert_success(&out);
    for i in 0..4 {
        assert!(c.out.join(format!("{i:06}.png")).is_file());
    }
    assert_eq!(std::fs::read_dir(&c.out).unwrap().count(), 4);
    // how the foreground moved is looked for on every frame after the first
    for (k, line) in std::fs::read_to_string(&c.json)
        .unwrap()
        .lines()
        .enumerate()
    {
        assert_fields_in_order(line, k > 0, true);
    }
    let lines = json_lines(&c.json);
    assert_eq!(lines.len(), 4);
    for line in &lines {
        let iou = line["iou"].as_f64().unwrap();
        assert!(iou > 0.8, "demo frame {} has IoU {iou}", line["frame"]);
    }
}

/// A budget too short for any cut: frames stop, their JSON certifies the cut they
/// kept (flow pushed ≤ cut capacity, and the gap between), and the summary says so.
#[test]
fn a_frame_budget_stops_cuts_and_certifies_them() {
    let c = case();
    let out = c.segment(
        "demo",
        &["--size", "320x240", "--frames", "4", "--budget-ms", "0.001"],
    );
    assert_success(&out);
    let stopped: Vec<_> = json_lines(&c.json)
        .into_iter()
        .filter_map(|line| line.get("stopped").cloned())
        .collect();
    assert!(!stopped.is_empty(), "no frame stopped at its budget");
    for s in &stopped {
        let (flow, cut, gap) = (s["flow"].as_u64(), s["cut"].as_u64(), s["gap"].as_u64());
        let (flow, cut, gap) = (flow.unwrap(), cut.unwrap(), gap.unwrap());
        assert!(flow <= cut && gap == cut - flow, "{s}");
    }
    let stdout = String::from_utf8_lossy(&out.stdout);
    let said = format!("{} of 4 frame(s) stopped at the budget", stopped.len());
    assert!(stdout.contains(&said), "{stdout}");
}

#[test]
fn a_video_gives_numbered_masks() {
    if !video::program_available("ffmpeg") || !video::program_available("ffprobe") {
        eprintln!("note: ffmpeg not installed; skipping");
        return;
    }
    let c = case();
    let scene = DemoScene::new(64, 48, 10, 2);
    let frames = c.root.join("frames");
    std::fs::create_dir(&frames).unwrap();
    for i in 0..5 {
        let (frame, _) = scene.render(i);
        image::RgbImage::from_raw(64, 48, frame.rgb)
            .unwrap()
            .save(frames.join(format!("{i}.png")))
            .unwrap();
    }
    let seeds = c.root.join("seeds.png");
    image::GrayImage::from_raw(64, 48, scene.default_seeds().to_grey())
        .unwrap()
        .save(&seeds)
        .unwrap();
    let clip = c.root.join("clip.mkv");
    let made = Command::new("ffmpeg")
        .args(["-v", "error", "-framerate", "10", "-i"])
        .arg(frames.join("%d.png"))
        .args(["-c:v", "ffv1"])
        .arg(&clip)
        .status()
        .unwrap();
    assert!(made.success());
    let out = c.segment(arg(&clip), &["--seeds", arg(&seeds)]);
    assert_success(&out);
    let names: Vec<String> = (0..5).map(|i| format!("{i:06}.png")).collect();
    for name in &names {
        assert_eq!(read_mask(&c.out.join(name)).dimensions(), (64, 48));
    }
    assert_eq!(json_lines(&c.json).len(), 5);
}

#[test]
fn bad_inputs_fail_cleanly_without_output() {
    let c = case();
    let good = c.root.join("good.png");
    write_frame(&good, 0);
    let seeds = c.root.join("seeds.png");
    write_seeds(&seeds, W, H, true, true);
    let broken = c.root.join("broken.png");
    std::fs::write(&broken, b"definitely not a png").unwrap();
    let small_seeds = c.root.join("small.png");
    write_seeds(&small_seeds, W - 1, H, true, true);
    let no_fg = c.root.join("no_fg.png");
    write_seeds(&no_fg, W, H, false, true);
    let no_bg = c.root.join("no_bg.png");
    write_seeds(&no_bg, W, H, true, false);
    let empty = c.root.join("empty");
    std::fs::create_dir(&empty).unwrap();
    let outputs = [c.out.as_path(), c.json.as_path()];
    let run = |input: &Path, seeds: &Path, extra: &[&str]| {
        let mut args = vec!["--seeds", arg(seeds)];
        args.extend(extra);
        c.segment(arg(input), &args)
    };
    let cases: Vec<(Output, &str)> = vec![
        (run(&broken, &seeds, &[]), "broken.png"),
        (run(&good, &broken, &[]), "seeds"),
        (
            run(&good, &small_seeds, &[]),
            "47x36 but the frame is 48x36",
        ),
        (run(&good, &no_fg, &[]), "no foreground seed"),
        (run(&good, &no_bg, &[]), "no background seed"),
        (run(&empty, &seeds, &[]), "no images in folder"),
        (
            run(&c.root.join("absent.png"), &seeds, &[]),
            "absent.png: no such file",
        ),
        (
            run(&good, &seeds, &["--connectivity", "6"]),
            "expected 4 or 8",
        ),
        (
            run(&good, &seeds, &["--frames", "0"]),
            "--frames must be at least 1",
        ),
        (
            run(&good, &seeds, &["--lambda=-1"]),
            "--lambda must be a number",
        ),
        (
            run(&good, &seeds, &["--budget-ms", "0"]),
            "expected milliseconds > 0, got \"0\"",
        ),
    ];
    for (out, needle) in &cases {
        assert_clean_failure(out, needle, &outputs);
    }
}

#[test]
fn seeds_are_required_except_for_the_demo() {
    let c = case();
    let good = c.root.join("good.png");
    write_frame(&good, 0);
    let out = livecut(&[
        "segment",
        "--input",
        arg(&good),
        "--out",
        arg(&c.out),
        "--engine",
        "cpu",
    ]);
    assert_clean_failure(&out, "--seeds PNG is needed", &[&c.out]);
}

#[test]
fn masks_may_not_replace_the_inputs() {
    let c = case();
    let seq = c.root.join("seq");
    std::fs::create_dir(&seq).unwrap();
    write_frame(&seq.join("a.png"), 0);
    let seeds = c.root.join("seeds.png");
    write_seeds(&seeds, W, H, true, true);
    let out = segment(arg(&seq), &seq, &["--seeds", arg(&seeds)]);
    assert_clean_failure(&out, "is the input folder", &[]);
    let out = segment(arg(&seq.join("a.png")), &seq, &["--seeds", arg(&seeds)]);
    assert_clean_failure(&out, "would replace the input image", &[]);
    assert_eq!(
        std::fs::read_dir(&seq).unwrap().count(),
        1,
        "the input is untouched"
    );
}

#[test]
fn a_missing_camera_is_a_clear_error() {
    let c = case();
    let out = livecut(&[
        "segment",
        "--input",
        "camera:99",
        "--out",
        arg(&c.out),
        "--json",
        arg(&c.json),
    ]);
    assert_clean_failure(&out, "camera", &[&c.out, &c.json]);
}

#[test]
fn a_missing_ffmpeg_is_a_clear_error() {
    let c = case();
    let clip = c.root.join("clip.mp4");
    std::fs::write(&clip, b"not really a video").unwrap();
    let seeds = c.root.join("seeds.png");
    write_seeds(&seeds, W, H, true, true);
    let empty_path = c.root.join("no-programs");
    std::fs::create_dir(&empty_path).unwrap();
    let out = Command::new(BIN)
        .args([
            "segment",
            "--input",
            arg(&clip),
            "--seeds",
            arg(&seeds),
            "--out",
            arg(&c.out),
        ])
        .env("PATH", &empty_path)
        .output()
        .unwrap();
    assert_clean_failure(&out, "is not installed", &[&c.out]);
}

#[test]
fn cameras_are_listed_or_their_absence_said() {
    let out = livecut(&["cameras"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with("camera:") || text.starts_with("no camera found"),
        "{text}"
    );
}

#[test]
fn the_energy_on_wgpu_is_said_in_the_note_and_every_frames_json() {
    let c = case();
    let out = segment(
        "demo",
        &c.out,
        &["--json", arg(&c.json), "--gpu", "wgpu", "--frames", "5"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && std::env::var_os("LIVECUT_REQUIRE_WGPU").is_none() {
        eprintln!("note: skipping, no wgpu adapter: {stderr}");
        return;
    }
    assert!(out.status.success(), "stderr: {stderr}");
    assert!(
        stderr.contains("through wgpu"),
        "the note says where: {stderr}"
    );
    let lines = json_lines(&c.json);
    assert_eq!(lines.len(), 5);
    // the seeded first frame is cut on the CPU path, the others on the device
    assert_eq!(lines[0]["energy"], "cpu");
    assert!(lines[0].get("gpu").is_none());
    for line in &lines[1..] {
        assert_eq!(line["energy"], "wgpu", "{line}");
        let gpu = line["gpu"].as_str().expect("the adapter is named");
        assert!(gpu.starts_with("wgpu on "), "{gpu}");
    }
    // and a contradiction is one line
    let bad = segment("demo", &c.out, &["--engine", "cpu", "--gpu", "cuda"]);
    assert_clean_failure(&bad, "beside the CUDA engine", &[]);
}

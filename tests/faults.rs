//! Faults a long session meets, survived without losing what was already written: a
//! video with a damaged stretch in the middle, and a process killed while it records.
//! The window's faults (a camera that disappears and comes back, a disk that fills
//! while recording, unusable saved settings) are tested in `tests/app.rs`.

use livecut::capture::video::program_available;
use livecut::grid::Mask;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_livecut");

/// Frame size of the generated video.
const W: u32 = 64;
const H: u32 = 48;
/// Frames of the generated video.
const FRAMES: u64 = 30;

/// An orange disc moving right over a blue-grey background.
fn frame(k: u32) -> image::RgbImage {
    image::RgbImage::from_fn(W, H, |x, y| {
        let (dx, dy) = (x as i32 - (20 + k as i32 % 10), y as i32 - 24);
        if dx * dx + dy * dy <= 100 {
            image::Rgb([215, 120, 40])
        } else {
            image::Rgb([60, 90, 120])
        }
    })
}

/// Foreground seeds on the disc's path, background along the border.
fn write_seeds(path: &Path) {
    image::GrayImage::from_fn(W, H, |x, y| {
        let value = if (20..=30).contains(&x) && (22..=26).contains(&y) {
            255
        } else if x < 2 || y < 2 || x >= W - 2 || y >= H - 2 {
            0
        } else {
            128
        };
        image::Luma([value])
    })
    .save(path)
    .unwrap();
}

/// A Matroska MJPEG video of the disc at 10 fps whose middle fifth is scrambled.
fn write_damaged_video(dir: &Path) -> std::path::PathBuf {
    for k in 0..FRAMES as u32 {
        frame(k).save(dir.join(format!("f{k:02}.png"))).unwrap();
    }
    let video = dir.join("disc.mkv");
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-framerate", "10", "-i"])
        .arg(dir.join("f%02d.png"))
        .args(["-c:v", "mjpeg", "-q:v", "3"])
        .arg(&video)
        .status()
        .unwrap();
    assert!(status.success());
    let mut bytes = std::fs::read(&video).unwrap();
    let n = bytes.len();
    for b in &mut bytes[n * 2 / 5..n * 3 / 5] {
        *b = b.wrapping_mul(7).wrapping_add(13);
    }
    let damaged = dir.join("damaged.mkv");
    std::fs::write(&damaged, bytes).unwrap();
    damaged
}

/// Frame indices of the masks in `dir` (`NNNNNN.png`).
fn mask_indices(dir: &Path) -> Vec<u64> {
    let mut indices: Vec<u64> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.strip_suffix(".png")?.parse().ok()
        })
        .collect();
    indices.sort();
    indices
}

#[test]
fn a_video_with_a_damaged_stretch_is_segmented_before_and_after_it() {
    if !program_available("ffmpeg") || !program_available("ffprobe") {
        eprintln!("note: ffmpeg not installed; skipping the damaged-video test");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let video = write_damaged_video(dir.path());
    let seeds = dir.path().join("seeds.png");
    write_seeds(&seeds);
    let out = dir.path().join("masks");
    let json = dir.path().join("frames.jsonl");
    let run = Command::new(BIN)
        .args(["segment", "--engine", "cpu", "--input"])
        .arg(&video)
        .arg("--seeds")
        .arg(&seeds)
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr),
    );
    assert!(run.status.success(), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("could not be decoded; skipped"),
        "the damaged stretch is reported: {stderr}"
    );
    let lost: u64 = stdout
        .lines()
        .find_map(|l| {
            l.strip_suffix(" frame(s) of the input could not be decoded and were skipped")
        })
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("the lost frames are counted: {stdout}"));
    let masks = mask_indices(&out);
    assert!(lost > 0 && !masks.is_empty());
    assert_eq!(masks.len() as u64 + lost, FRAMES, "{masks:?}");
    // Frames before the stretch and after it were segmented, in their places.
    let gap = masks.windows(2).find(|w| w[1] > w[0] + 1).expect("a gap");
    assert!(
        gap[0] >= 1 && masks[masks.len() - 1] == FRAMES - 1,
        "{masks:?}"
    );
    let records = std::fs::read_to_string(&json).unwrap();
    assert_eq!(records.lines().count(), masks.len());
    for index in [masks[0], gap[1]] {
        let mask = Mask::read_png(&out.join(format!("{index:06}.png"))).unwrap();
        assert!(mask.count_source() > 100, "frame {index} found the disc");
    }
}

#[test]
fn a_process_killed_while_recording_leaves_only_whole_files_under_final_names() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("masks");
    let json = out.join("frames.jsonl");
    let mut child = Command::new(BIN)
        .args([
            "segment", "--input", "demo", "--size", "64x48", "--engine", "cpu",
        ])
        .args(["--frames", "1000000", "--out"])
        .arg(&out)
        .arg("--json")
        .arg(&json)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !out.exists() || mask_indices(&out).len() < 20 {
        assert!(start.elapsed() < Duration::from_secs(120), "no masks came");
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let mut whole = 0;
    for entry in std::fs::read_dir(&out).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue; // a temporary name: allowed to be half-written
        }
        assert!(name.ends_with(".png"), "{name} carries a final name");
        let mask = Mask::read_png(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!((mask.width, mask.height), (W, H), "{name}");
        whole += 1;
    }
    assert!(whole >= 20);
    // The JSON lines are in their temporary file, every line whole but perhaps the last.
    assert!(!json.exists());
    let part = std::fs::read_to_string(out.join(".frames.jsonl.part")).unwrap();
    let lines: Vec<&str> = part.lines().collect();
    assert!(lines.len() >= 19, "{} lines", lines.len());
    for line in &lines[..lines.len() - 1] {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
}

//! Sources opened the way the CLI and the app open them: from what the user typed.

use livecut::capture::{CaptureError, FrameSource, SourceSpec, StreamSettings, VideoSource, video};
use livecut::energy::SeedLabel;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn settings(width: u32, height: u32) -> StreamSettings {
    StreamSettings {
        width,
        height,
        fps: 25,
    }
}

fn open(input: &Path) -> Result<Box<dyn FrameSource>, CaptureError> {
    SourceSpec::parse(input.to_str().unwrap(), settings(64, 48))?.open()
}

fn drain(source: &mut dyn FrameSource) -> Vec<livecut::capture::CapturedFrame> {
    std::iter::from_fn(|| source.next_frame().unwrap()).collect()
}

#[test]
fn demo_by_name_has_the_requested_size_seeds_and_truth() {
    let mut demo = SourceSpec::parse("demo", settings(80, 60))
        .unwrap()
        .open()
        .unwrap();
    assert_eq!(demo.size(), (80, 60));
    assert!(
        !demo.is_live(),
        "the CLI's demo is read as fast as possible, losslessly"
    );
    let seeds = demo.default_seeds().unwrap();
    let first = demo.next_frame().unwrap().unwrap();
    let truth = first.truth.unwrap();
    assert_eq!((first.frame.width, first.frame.height), (80, 60));
    for (i, l) in seeds.labels.iter().enumerate() {
        if *l != SeedLabel::Unknown {
            assert_eq!(truth.is_source(i), *l == SeedLabel::Foreground);
        }
    }
    assert_eq!(demo.next_frame().unwrap().unwrap().frame.index, 1);
}

#[test]
fn the_demo_films_a_still_camera_unless_asked_to_pan() {
    let open = |input| {
        SourceSpec::parse(input, settings(80, 60))
            .unwrap()
            .open()
            .unwrap()
    };
    let (mut still, mut pan) = (open("demo"), open("demo:pan"));
    assert!(
        still.describe().contains("still camera"),
        "{}",
        still.describe()
    );
    assert!(
        pan.describe().contains("panning camera"),
        "{}",
        pan.describe()
    );
    assert_eq!(still.default_seeds(), pan.default_seeds());
    let (a, b) = (
        still.next_frame().unwrap().unwrap(),
        pan.next_frame().unwrap().unwrap(),
    );
    assert_eq!(a.truth, b.truth, "the same objects in the same places");
    assert_ne!(a.frame.rgb, b.frame.rgb, "seen by another camera");

    let err = SourceSpec::parse("demo:zoom", settings(80, 60)).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("demo:zoom") && text.contains("pan") && !text.contains('\n'));
}

#[test]
fn the_preferred_live_source_is_the_paced_demo_without_a_camera() {
    let spec = SourceSpec::preferred(settings(32, 24));
    match &spec {
        SourceSpec::Demo(config) => assert!(config.realtime),
        SourceSpec::Camera { .. } => {
            eprintln!("note: a camera is present; the demo fallback is not exercised")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn images_and_folders_open_from_their_paths() {
    let dir = tempfile::tempdir().unwrap();
    let seq = dir.path().join("seq");
    std::fs::create_dir(&seq).unwrap();
    for (i, name) in ["f02.png", "f01.png", "f10.png"].iter().enumerate() {
        image::RgbImage::from_pixel(6, 4, image::Rgb([i as u8, 0, 0]))
            .save(seq.join(name))
            .unwrap();
    }
    let mut folder = open(&seq).unwrap();
    assert!(folder.describe().contains("3 images"));
    let names: Vec<String> = drain(folder.as_mut())
        .into_iter()
        .map(|f| f.name.unwrap())
        .collect();
    assert_eq!(names, ["f01", "f02", "f10"]);

    let mut image = open(&seq.join("f10.png")).unwrap();
    let frames = drain(image.as_mut());
    assert_eq!(frames.len(), 1);
    assert_eq!(frames[0].frame.rgb[0], 2);
}

#[test]
fn open_errors_are_single_lines_naming_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let cases = [
        (
            open(&dir.path().join("missing.png")).err().unwrap(),
            "missing.png",
        ),
        (open(&empty).err().unwrap(), "no images"),
    ];
    for (err, needle) in cases {
        let text = err.to_string();
        assert!(text.contains(needle) && !text.contains('\n'), "{text}");
    }
}

#[test]
fn a_camera_that_is_not_there_is_an_error_not_a_panic() {
    let err = SourceSpec::parse("camera:99", settings(64, 48))
        .unwrap()
        .open()
        .err()
        .unwrap();
    let text = err.to_string();
    assert!(text.contains("camera"), "{text}");
    assert!(!text.contains('\n'));
}

/// Every frame of a generated clip, opened from its path, in order and timed by the
/// clip's frame rate; the end stays the end.
#[test]
fn a_video_is_read_through_ffmpeg_frame_by_frame() {
    if !video::program_available("ffmpeg") || !video::program_available("ffprobe") {
        eprintln!("note: ffmpeg not installed; skipping");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mkv");
    let ok = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-f",
            "lavfi",
            "-i",
            "testsrc2=size=40x30:rate=10",
            "-frames:v",
            "9",
        ])
        .args(["-c:v", "ffv1"])
        .arg(&clip)
        .status()
        .unwrap()
        .success();
    assert!(ok);
    let mut source = open(&clip).unwrap();
    assert_eq!(source.size(), (40, 30));
    assert!(
        source.describe().contains("10.00 fps"),
        "{}",
        source.describe()
    );
    let frames = drain(source.as_mut());
    assert_eq!(frames.len(), 9);
    for (n, f) in (0u64..).zip(&frames) {
        assert_eq!(f.frame.index, n);
        assert_eq!(f.frame.timestamp, Duration::from_millis(100 * n));
        assert!(f.name.is_none() && f.frame.rgb.len() == 40 * 30 * 3);
    }
    assert!(source.next_frame().unwrap().is_none());
    assert_ne!(frames[0].frame.rgb, frames[8].frame.rgb);
}

#[test]
fn a_missing_ffmpeg_is_named_in_the_error() {
    let dir = tempfile::tempdir().unwrap();
    let clip = dir.path().join("clip.mp4");
    std::fs::write(&clip, b"data").unwrap();
    let err = VideoSource::open_with(&clip, "no-such-ffmpeg".as_ref(), "no-such-ffprobe".as_ref())
        .err()
        .unwrap();
    assert!(
        err.to_string()
            .contains("`no-such-ffprobe` is not installed"),
        "{err}"
    );
}

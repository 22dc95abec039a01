//! `livecut segment --virtual-camera`: the writer a v4l2loopback device gets, run
//! into a file sink (no loopback device exists on test machines), and the errors of
//! a missing or wrong device.

mod common;

use common::cli::{assert_fails_with, livecut};
use std::time::{Duration, Instant};

const W: usize = 96;
const H: usize = 64;
const FRAMES: usize = 6;
const FPS: u64 = 10;

#[test]
fn the_file_sink_gets_every_frame_as_yuyv_at_the_source_rate() {
    let dir = tempfile::tempdir().unwrap();
    let sink = dir.path().join("camera.yuyv");
    let masks = dir.path().join("masks");
    let start = Instant::now();
    let out = livecut(&[
        "segment",
        "--input",
        "demo",
        "--frames",
        &FRAMES.to_string(),
        "--size",
        &format!("{W}x{H}"),
        "--fps",
        &FPS.to_string(),
        "--engine",
        "cpu",
        "--out",
        masks.to_str().unwrap(),
        "--virtual-camera",
        &format!("file:{}", sink.display()),
        "--composite",
        "cutout",
    ]);
    let elapsed = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&sink).unwrap();
    let frame_bytes = W * H * 2;
    assert_eq!(bytes.len(), FRAMES * frame_bytes, "{FRAMES} YUYV frames");
    // The frames went out one per 1/FPS seconds.
    let span = Duration::from_millis(1000 * (FRAMES as u64 - 1) / FPS);
    assert!(
        elapsed >= span,
        "{elapsed:?} for {FRAMES} frames at {FPS} fps"
    );
    let frames: Vec<&[u8]> = bytes.chunks_exact(frame_bytes).collect();
    assert!(frames.windows(2).any(|p| p[0] != p[1]), "the scene moves");
    // The cut-out's background is the grey checkerboard: a corner of the first frame
    // is a light grey pixel pair (Y of 204 grey, no chroma).
    assert_eq!(&frames[0][..4], &[191, 128, 191, 128]);
}

#[test]
fn a_missing_device_says_how_to_load_the_module() {
    let dir = tempfile::tempdir().unwrap();
    let masks = dir.path().join("masks");
    let out = segment_demo_to(&masks, "/dev/video97", "blur");
    assert_fails_with(
        &out,
        "no /dev/video97: load the module with `sudo modprobe v4l2loopback devices=1 video_nr=97 card_label=livecut exclusive_caps=1`",
    );
    assert!(!masks.exists(), "nothing written before the device is open");
}

#[test]
fn a_file_that_is_no_device_and_a_bad_composite_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("plain");
    std::fs::write(&plain, b"").unwrap();
    let masks = dir.path().join("masks");
    let run = |camera: &str, composite: &str| segment_demo_to(&masks, camera, composite);
    assert_fails_with(
        &run(plain.to_str().unwrap(), "blur"),
        "is not a v4l2loopback device",
    );
    let missing = dir.path().join("missing.png");
    let replace = format!("replace:{}", missing.display());
    let sink = format!("file:{}", dir.path().join("sink").display());
    assert_fails_with(&run(&sink, &replace), "background picture");
    let bad = run(&sink, "green");
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("expected cutout, blur or replace:IMAGE")
    );
    assert!(!masks.exists());
}

/// Two demo frames, their masks into `masks`, composited as `composite` to `camera`.
fn segment_demo_to(masks: &std::path::Path, camera: &str, composite: &str) -> std::process::Output {
    livecut(&[
        "segment",
        "--input",
        "demo",
        "--frames",
        "2",
        "--out",
        masks.to_str().unwrap(),
        "--virtual-camera",
        camera,
        "--composite",
        composite,
    ])
}

#[test]
fn composites_made_in_wgpu_reach_the_camera_as_the_cpus() {
    // the energy and the composites on the wgpu device, against both on the CPU: the
    // same bytes to the camera
    if common::device::compute_device().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sinks = ["none", "wgpu"].map(|gpu| {
        let sink = dir.path().join(format!("camera-{gpu}.yuyv"));
        let out = livecut(&[
            "segment",
            "--input",
            "demo",
            "--frames",
            "4",
            "--size",
            &format!("{W}x{H}"),
            "--fps",
            "100",
            "--gpu",
            gpu,
            "--out",
            dir.path().join(format!("masks-{gpu}")).to_str().unwrap(),
            "--virtual-camera",
            &format!("file:{}", sink.display()),
            "--composite",
            "blur",
        ]);
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "{said}");
        if gpu == "wgpu" {
            assert!(said.contains("the composites are made on"), "{said}");
        }
        std::fs::read(&sink).unwrap()
    });
    assert_eq!(sinks[0].len(), 4 * W * H * 2);
    assert!(sinks[0] == sinks[1], "the camera got other bytes");
}

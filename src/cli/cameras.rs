//! `livecut cameras`: list the cameras with the modes livecut can decode.

use livecut::capture::{CameraMode, list_cameras};
use std::collections::BTreeMap;

/// Options of `livecut cameras`.
#[derive(clap::Args, Debug)]
pub struct CamerasArgs {}

/// Runs the command.
pub fn run(_args: CamerasArgs) -> anyhow::Result<()> {
    let cameras = list_cameras()?;
    if cameras.is_empty() {
        println!("no camera found (livecut segment --input demo runs the built-in demo scene)");
        return Ok(());
    }
    for camera in cameras {
        println!(
            "camera:{}  {}  ({})",
            camera.index, camera.name, camera.description
        );
        if let Some(note) = &camera.note {
            println!("    modes unavailable: {note}");
        } else if camera.modes.is_empty() {
            println!("    no colour mode livecut can decode");
        }
        for line in mode_lines(&camera.modes) {
            println!("    {line}");
        }
    }
    Ok(())
}

/// One line per size, largest first: `1280x720  MJPEG 30/15 fps, YUYV 10 fps`.
fn mode_lines(modes: &[CameraMode]) -> Vec<String> {
    let mut by_size: BTreeMap<(u64, u32, u32), BTreeMap<&str, Vec<u32>>> = BTreeMap::new();
    for m in modes {
        let key = (
            u64::MAX - m.width as u64 * m.height as u64,
            m.width,
            m.height,
        );
        by_size
            .entry(key)
            .or_default()
            .entry(m.format.as_str())
            .or_default()
            .push(m.fps);
    }
    by_size
        .into_iter()
        .map(|((_, w, h), formats)| {
            let formats: Vec<String> = formats
                .into_iter()
                .map(|(format, mut rates)| {
                    rates.sort_unstable_by(|a, b| b.cmp(a));
                    rates.dedup();
                    let rates: Vec<String> = rates.iter().map(u32::to_string).collect();
                    format!("{format} {} fps", rates.join("/"))
                })
                .collect();
            format!("{w}x{h}  {}", formats.join(", "))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_are_grouped_by_size() {
        let m = |width, height, fps, format: &str| CameraMode {
            width,
            height,
            fps,
            format: format.into(),
        };
        let lines = mode_lines(&[
            m(640, 480, 15, "MJPEG"),
            m(1280, 720, 10, "YUYV"),
            m(640, 480, 30, "MJPEG"),
            m(1280, 720, 30, "MJPEG"),
        ]);
        assert_eq!(
            lines,
            [
                "1280x720  MJPEG 30 fps, YUYV 10 fps",
                "640x480  MJPEG 30/15 fps"
            ]
        );
    }
}

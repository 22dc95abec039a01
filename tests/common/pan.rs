//! The demo scene filmed by a panning camera: windows of a wider render moving a few
//! pixels a frame, with the truth cut alike and the first frame's seeds.

use livecut::capture::{DemoScene, Frame};
use livecut::energy::Seeds;
use livecut::grid::Mask;

/// `frames` frames of the demo scene (`width`×`height`) filmed by a camera panning
/// `step` pixels a frame to the right, each with its truth, and the first frame's seeds.
pub fn panned_demo(width: u32, height: u32, step: u32, frames: u64) -> (Vec<(Frame, Mask)>, Seeds) {
    let (scene, frames) = panned_demo_scene(width, height, step, frames);
    (frames, seeds_cropped(&scene, width))
}

/// The demo scene filmed by a camera panning `step` pixels a frame to the right:
/// `width`×`height` windows of a wider render, each frame's truth cut the same way.
pub fn panned_demo_scene(
    width: u32,
    height: u32,
    step: u32,
    frames: u64,
) -> (DemoScene, Vec<(Frame, Mask)>) {
    let wide = width + step * frames as u32;
    let scene = DemoScene::new(wide, height, 30, 5);
    let window = |index: u64| {
        let (frame, truth) = scene.render(index);
        let x0 = (step as u64 * index) as usize;
        let (w, stride) = (width as usize, wide as usize);
        let rows = 0..height as usize;
        let rgb = rows
            .clone()
            .flat_map(|y| frame.rgb[3 * (y * stride + x0)..][..3 * w].to_vec())
            .collect();
        let mask = rows
            .flat_map(|y| truth.data[y * stride + x0..][..w].to_vec())
            .collect();
        let frame = Frame {
            width,
            height,
            rgb,
            ..frame
        };
        (
            frame,
            Mask {
                width,
                height,
                data: mask,
            },
        )
    };
    let frames = (0..frames).map(window).collect();
    (scene, frames)
}

/// The demo's default seeds for the first `width` columns of a wider render.
fn seeds_cropped(scene: &DemoScene, width: u32) -> Seeds {
    let seeds = scene.default_seeds();
    let labels = (0..seeds.height as usize)
        .flat_map(|y| seeds.labels[y * seeds.width as usize..][..width as usize].to_vec())
        .collect();
    Seeds {
        width,
        labels,
        ..seeds
    }
}

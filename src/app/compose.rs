//! Turning a frame and its mask into the picture the user sees or records: tinted
//! overlay, cut-out on a checkerboard, background replaced, the mask alone, or the
//! solver's block activity over the frame. Pure functions on plain pixel buffers, so
//! the view (UI thread) and the recorder (writer thread) show the same thing; the
//! cut-out and the background are the library's [`crate::composite`].

use super::heatmap;
use super::settings::ViewMode;
use crate::capture::Frame;
use crate::composite::{self, map_pixels};
use crate::energy::{SeedLabel, Seeds};
use crate::grid::Mask;
use crate::maxflow::BlockActivity;
use image::RgbaImage;

pub use crate::composite::{Backdrop, cut_out_alpha};

/// Everything that decides how a frame is drawn, besides the frame and mask.
#[derive(Clone, Debug)]
pub struct Look {
    /// The view.
    pub mode: ViewMode,
    /// Foreground tint of the overlay.
    pub tint: [u8; 3],
    /// Background of [`ViewMode::Background`].
    pub backdrop: Backdrop,
}

/// Composes the picture of `mode` for one frame. Without a mask (nothing segmented
/// yet), every view shows the frame as it is, except the mask view (black).
pub fn compose(
    frame: &Frame,
    mask: Option<&Mask>,
    activity: Option<&BlockActivity>,
    look: &Look,
) -> RgbaImage {
    let mask = mask.filter(|m| (m.width, m.height) == (frame.width, frame.height));
    match (look.mode, mask) {
        (ViewMode::Heatmap, _) => {
            let mut img = heatmap_view(frame, activity);
            if let Some(m) = mask {
                outline(&mut img, m);
            }
            img
        }
        (ViewMode::Mask, Some(m)) => mask_view(m),
        (ViewMode::Mask, None) => {
            RgbaImage::from_pixel(frame.width, frame.height, [0, 0, 0, 255].into())
        }
        (_, None) => plain(frame),
        (ViewMode::Overlay, Some(m)) => overlay(frame, m, look.tint),
        (ViewMode::CutOut, Some(m)) => composite::cut_out(frame, m),
        (ViewMode::Background, Some(m)) => composite::replace_background(frame, m, &look.backdrop),
    }
}

/// The frame as it is, opaque.
pub fn plain(frame: &Frame) -> RgbaImage {
    map_pixels(frame, |_, _, _, rgb| [rgb[0], rgb[1], rgb[2], 255])
}

/// Paints the seeds over a picture of the same size: foreground green, background
/// red, both translucent (the view shows them; recordings do not).
pub fn paint_seeds(img: &mut RgbaImage, seeds: &Seeds) {
    if img.dimensions() != (seeds.width, seeds.height) {
        return;
    }
    for (px, label) in img.pixels_mut().zip(&seeds.labels) {
        let colour = match label {
            SeedLabel::Foreground => [40, 230, 80],
            SeedLabel::Background => [240, 60, 60],
            SeedLabel::Unknown => continue,
        };
        for (c, s) in px.0.iter_mut().zip(colour) {
            *c = ((*c as u16 * 2 + s as u16 * 3) / 5) as u8;
        }
    }
}

/// The mask alone, white foreground on black.
pub fn mask_view(mask: &Mask) -> RgbaImage {
    let mut out = RgbaImage::new(mask.width, mask.height);
    for (px, &v) in out.pixels_mut().zip(&mask.data) {
        *px = [v, v, v, 255].into();
    }
    out
}

/// Foreground tinted, background dimmed.
fn overlay(frame: &Frame, mask: &Mask, tint: [u8; 3]) -> RgbaImage {
    map_pixels(frame, |_, _, i, rgb| {
        if mask.is_source(i) {
            let mix = |c: u8, t: u8| ((c as u16 * 3 + t as u16 * 2) / 5) as u8;
            [
                mix(rgb[0], tint[0]),
                mix(rgb[1], tint[1]),
                mix(rgb[2], tint[2]),
                255,
            ]
        } else {
            let dim = |c: u8| (c as u16 * 9 / 20) as u8;
            [dim(rgb[0]), dim(rgb[1]), dim(rgb[2]), 255]
        }
    })
}

/// The frame in dim grey with each block coloured by how often the solver touched it.
fn heatmap_view(frame: &Frame, activity: Option<&BlockActivity>) -> RgbaImage {
    let grey =
        |rgb: &[u8]| ((rgb[0] as u32 * 77 + rgb[1] as u32 * 150 + rgb[2] as u32 * 29) >> 9) as u8;
    let Some(act) = activity.filter(|a| a.block_width > 0 && a.block_height > 0) else {
        return map_pixels(frame, |_, _, _, rgb| {
            let g = grey(rgb);
            [g, g, g, 255]
        });
    };
    let colours = heatmap::block_colours(act);
    map_pixels(frame, |x, y, _, rgb| {
        let g = grey(rgb);
        let (bx, by) = (x / act.block_width, y / act.block_height);
        let colour = (bx < act.columns && by < act.rows)
            .then(|| colours[(by * act.columns + bx) as usize])
            .flatten();
        match colour {
            Some(c) => {
                let mix = |c: u8| ((c as u16 + g as u16) / 2) as u8;
                [mix(c[0]), mix(c[1]), mix(c[2]), 255]
            }
            None => [g, g, g, 255],
        }
    })
}

/// Draws the mask's boundary in white: where the cut runs, over the heatmap of where
/// the solver worked.
fn outline(img: &mut RgbaImage, mask: &Mask) {
    let (w, h) = (mask.width, mask.height);
    for y in 0..h {
        for x in 0..w {
            let i = (y * w + x) as usize;
            let right = x + 1 < w && mask.data[i + 1] != mask.data[i];
            let down = y + 1 < h && mask.data[i + w as usize] != mask.data[i];
            if right || down {
                img.put_pixel(x, y, [255, 255, 255, 255].into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::RgbImage;
    use std::sync::Arc;
    use std::time::Duration;

    fn frame(w: u32, h: u32, f: impl Fn(u32, u32) -> [u8; 3]) -> Frame {
        let rgb = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .flat_map(|(x, y)| f(x, y))
            .collect();
        Frame {
            width: w,
            height: h,
            rgb,
            timestamp: Duration::ZERO,
            index: 0,
        }
    }

    fn look(mode: ViewMode, backdrop: Backdrop) -> Look {
        Look {
            mode,
            tint: [0, 255, 0],
            backdrop,
        }
    }

    /// Left half foreground.
    fn half_mask(w: u32, h: u32) -> Mask {
        Mask::from_fn(w, h, |i| (i as u32 % w) < w / 2)
    }

    #[test]
    fn cut_out_shows_foreground_and_checkerboard() {
        let f = frame(64, 32, |_, _| [200, 10, 10]);
        let img = compose(
            &f,
            Some(&half_mask(64, 32)),
            None,
            &look(ViewMode::CutOut, Backdrop::Blur),
        );
        assert_eq!(img.get_pixel(3, 3).0, [200, 10, 10, 255]);
        assert_eq!(img.get_pixel(40, 3).0, [204, 204, 204, 255]);
        assert_eq!(img.get_pixel(48, 3).0, [153, 153, 153, 255]);
    }

    #[test]
    fn overlay_tints_foreground_and_dims_background() {
        let f = frame(8, 2, |_, _| [100, 100, 100]);
        let img = compose(
            &f,
            Some(&half_mask(8, 2)),
            None,
            &look(ViewMode::Overlay, Backdrop::Blur),
        );
        let fg = img.get_pixel(0, 0).0;
        let bg = img.get_pixel(7, 0).0;
        assert!(
            fg[1] > 100 && fg[0] < 100,
            "foreground tinted green: {fg:?}"
        );
        assert!(bg[0] < 100 && bg[0] == bg[1], "background dimmed: {bg:?}");
    }

    #[test]
    fn background_colour_and_image_replace_only_the_background() {
        // Wide enough that the soft edge of the cut leaves both ends alone.
        let f = frame(64, 4, |_, _| [9, 9, 9]);
        let m = half_mask(64, 4);
        let img = compose(
            &f,
            Some(&m),
            None,
            &look(ViewMode::Background, Backdrop::Colour([1, 2, 3])),
        );
        assert_eq!(img.get_pixel(0, 0).0, [9, 9, 9, 255]);
        assert_eq!(img.get_pixel(63, 3).0, [1, 2, 3, 255]);
        // A 2×1 picture stretched over the frame: right half takes its right pixel.
        let pic = RgbImage::from_raw(2, 1, vec![10, 20, 30, 40, 50, 60]).unwrap();
        let img = compose(
            &f,
            Some(&m),
            None,
            &look(ViewMode::Background, Backdrop::Image(Arc::new(pic))),
        );
        assert_eq!(img.get_pixel(63, 0).0, [40, 50, 60, 255]);
        assert_eq!(img.get_pixel(0, 0).0, [9, 9, 9, 255]);
    }

    #[test]
    fn blur_keeps_flat_colour_and_smooths_edges() {
        let flat = frame(40, 30, |_, _| [77, 88, 99]);
        let all_bg = Mask::empty(40, 30);
        let img = compose(
            &flat,
            Some(&all_bg),
            None,
            &look(ViewMode::Background, Backdrop::Blur),
        );
        assert!(img.pixels().all(|p| p.0 == [77, 88, 99, 255]));
        // A hard vertical edge becomes a ramp.
        let edge = frame(96, 24, |x, _| if x < 48 { [0; 3] } else { [240; 3] });
        let img = compose(
            &edge,
            Some(&Mask::empty(96, 24)),
            None,
            &look(ViewMode::Background, Backdrop::Blur),
        );
        let v = img.get_pixel(47, 12).0[0];
        assert!(v > 20 && v < 220, "edge pixel blurred: {v}");
        assert_eq!(img.get_pixel(0, 12).0[0], 0);
    }

    #[test]
    fn seeds_are_painted_over_the_picture() {
        let mut img = RgbaImage::from_pixel(3, 1, [100, 100, 100, 255].into());
        let mut seeds = Seeds::unknown(3, 1);
        seeds.labels[0] = SeedLabel::Foreground;
        seeds.labels[2] = SeedLabel::Background;
        paint_seeds(&mut img, &seeds);
        let [fg, free, bg] = [0, 1, 2].map(|x| img.get_pixel(x, 0).0);
        assert!(fg[1] > 150 && fg[0] < 100, "{fg:?}");
        assert_eq!(free, [100, 100, 100, 255]);
        assert!(bg[0] > 150 && bg[1] < 100, "{bg:?}");
        assert_eq!(fg[3], 255, "still opaque");
        // Seeds of another size (a source change in flight) are left out.
        let before = img.clone();
        paint_seeds(&mut img, &Seeds::unknown(2, 2));
        assert_eq!(img, before);
    }

    #[test]
    fn mask_view_and_cut_out_alpha() {
        let f = frame(40, 1, |x, _| [x as u8; 3]);
        let m = half_mask(40, 1);
        let img = compose(&f, Some(&m), None, &look(ViewMode::Mask, Backdrop::Blur));
        assert_eq!(img.get_pixel(0, 0).0, [255, 255, 255, 255]);
        assert_eq!(img.get_pixel(39, 0).0, [0, 0, 0, 255]);
        // The mask stays binary; the cut-out's alpha is soft only near the cut.
        assert_eq!(img.get_pixel(19, 0).0, [255, 255, 255, 255]);
        let cut = cut_out_alpha(&f, &m);
        assert_eq!(cut.get_pixel(1, 0).0, [1, 1, 1, 255]);
        assert_eq!(cut.get_pixel(38, 0).0, [38, 38, 38, 0]);
        let edge = cut.get_pixel(19, 0).0[3];
        assert!(edge > 0 && edge < 255, "soft at the cut: {edge}");
    }

    #[test]
    fn without_a_mask_the_frame_shows_as_it_is() {
        let f = frame(3, 2, |x, y| [x as u8, y as u8, 5]);
        let img = compose(&f, None, None, &look(ViewMode::CutOut, Backdrop::Blur));
        assert_eq!(img, plain(&f));
        let wrong_size = Mask::empty(2, 2);
        assert_eq!(
            compose(
                &f,
                Some(&wrong_size),
                None,
                &look(ViewMode::Overlay, Backdrop::Blur)
            ),
            plain(&f)
        );
    }

    #[test]
    fn heatmap_colours_active_blocks_only() {
        let f = frame(8, 4, |_, _| [100, 100, 100]);
        let act = BlockActivity {
            block_width: 4,
            block_height: 4,
            columns: 2,
            rows: 1,
            counts: vec![0, 9],
        };
        let img = compose(
            &f,
            None,
            Some(&act),
            &look(ViewMode::Heatmap, Backdrop::Blur),
        );
        let idle = img.get_pixel(0, 0).0;
        let busy = img.get_pixel(6, 2).0;
        assert_eq!(idle[0], idle[1], "idle block stays grey");
        assert_ne!(busy[0], busy[2], "busy block coloured: {busy:?}");
        // With a mask, its boundary is drawn in white.
        let m = half_mask(8, 4);
        let look = look(ViewMode::Heatmap, Backdrop::Blur);
        let img = compose(&f, Some(&m), Some(&act), &look);
        assert_eq!(img.get_pixel(3, 1).0, [255, 255, 255, 255]);
        assert_ne!(img.get_pixel(1, 1).0, [255, 255, 255, 255]);
    }
}

//! Composites of a frame and its mask for people to look at or send on: the cut-out
//! (with a transparent or checkerboard background) and the background blurred or
//! replaced by a colour or a picture. The mask's edge is softened along the image's
//! edges by [`alpha::soft_alpha`], so hair and outlines do not look jagged; the mask
//! itself stays binary. Pure functions on plain pixel buffers, shared by the window
//! (view and recordings), `livecut segment` and the virtual camera.

pub mod alpha;
mod blur;

use crate::capture::Frame;
use crate::grid::Mask;
use image::{RgbImage, RgbaImage};
use std::sync::Arc;

pub use alpha::soft_alpha;

/// Side of a checkerboard square in pixels.
const CHECKER: u32 = 16;
/// Downscale factor of the blurred background: big enough to hide detail.
const BLUR_FACTOR: u32 = 12;

/// What replaces the background.
#[derive(Clone, Debug)]
pub enum Backdrop {
    /// The frame itself, blurred.
    Blur,
    /// A flat colour.
    Colour([u8; 3]),
    /// A picture, stretched to the frame.
    Image(Arc<RgbImage>),
}

/// The composite sent on (to a virtual camera): the cut-out on a checkerboard, or
/// the foreground over another background.
#[derive(Clone, Debug)]
pub enum Composite {
    /// The foreground on a checkerboard, as the window's cut-out view shows it.
    CutOut,
    /// The foreground over this background.
    Background(Backdrop),
}

impl Composite {
    /// The opaque composite of `frame` with the foreground of `mask` (the frame as
    /// it is when the mask is another size).
    pub fn compose(&self, frame: &Frame, mask: &Mask) -> RgbaImage {
        if (mask.width, mask.height) != (frame.width, frame.height) {
            return map_pixels(frame, |_, _, _, rgb| [rgb[0], rgb[1], rgb[2], 255]);
        }
        match self {
            Composite::CutOut => cut_out(frame, mask),
            Composite::Background(backdrop) => replace_background(frame, mask, backdrop),
        }
    }
}

/// The frame with the soft alpha of the mask: a cut-out with a transparent
/// background.
pub fn cut_out_alpha(frame: &Frame, mask: &Mask) -> RgbaImage {
    let alpha = soft_alpha(frame, mask);
    map_pixels(frame, |_, _, i, rgb| [rgb[0], rgb[1], rgb[2], alpha[i]])
}

/// The foreground on a grey checkerboard, which shows where the cut-out is
/// transparent.
pub fn cut_out(frame: &Frame, mask: &Mask) -> RgbaImage {
    blend_over(frame, mask, checker)
}

/// The foreground over `backdrop`.
pub fn replace_background(frame: &Frame, mask: &Mask, backdrop: &Backdrop) -> RgbaImage {
    match backdrop {
        Backdrop::Colour(c) => blend_over(frame, mask, |_, _| *c),
        Backdrop::Image(img) => {
            let (bw, bh) = img.dimensions();
            let (fw, fh) = (frame.width as u64, frame.height as u64);
            blend_over(frame, mask, |x, y| {
                let sx = (x as u64 * bw as u64 / fw) as u32;
                let sy = (y as u64 * bh as u64 / fh) as u32;
                img.get_pixel(sx.min(bw - 1), sy.min(bh - 1)).0
            })
        }
        Backdrop::Blur => {
            let blurred =
                blur::Downscaled::new(frame, BLUR_FACTOR).upsampled(frame.width, frame.height);
            blend_over(frame, mask, |x, y| {
                let j = (y as usize * frame.width as usize + x as usize) * 3;
                [blurred[j], blurred[j + 1], blurred[j + 2]]
            })
        }
    }
}

/// The frame over the background `behind(x, y)`, mixed by the mask's soft alpha.
fn blend_over(frame: &Frame, mask: &Mask, behind: impl Fn(u32, u32) -> [u8; 3]) -> RgbaImage {
    let alpha = soft_alpha(frame, mask);
    map_pixels(frame, |x, y, i, rgb| match alpha[i] {
        255 => [rgb[0], rgb[1], rgb[2], 255],
        a => {
            let b = behind(x, y);
            let (a, na) = (u32::from(a), u32::from(255 - a));
            let mix = |f: u8, b: u8| ((u32::from(f) * a + u32::from(b) * na + 127) / 255) as u8;
            [mix(rgb[0], b[0]), mix(rgb[1], b[1]), mix(rgb[2], b[2]), 255]
        }
    })
}

fn checker(x: u32, y: u32) -> [u8; 3] {
    if (x / CHECKER + y / CHECKER).is_multiple_of(2) {
        [204, 204, 204]
    } else {
        [153, 153, 153]
    }
}

/// Builds an RGBA image from a per-pixel function of (x, y, index, rgb).
pub(crate) fn map_pixels(
    frame: &Frame,
    f: impl Fn(u32, u32, usize, &[u8]) -> [u8; 4],
) -> RgbaImage {
    let (w, h) = (frame.width, frame.height);
    let mut out = vec![0u8; w as usize * h as usize * 4];
    for (i, (dst, rgb)) in out
        .chunks_exact_mut(4)
        .zip(frame.rgb.chunks_exact(3))
        .enumerate()
    {
        let (x, y) = ((i % w as usize) as u32, (i / w as usize) as u32);
        dst.copy_from_slice(&f(x, y, i, rgb));
    }
    RgbaImage::from_raw(w, h, out).expect("buffer has the image's size")
}

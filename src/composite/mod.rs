//! Composites of a frame and its mask for people to look at or send on: the cut-out
//! (with a transparent or checkerboard background) and the background blurred or
//! replaced by a colour or a picture. The mask's edge is softened along the image's
//! edges by [`alpha::soft_alpha`], so hair and outlines do not look jagged; the mask
//! itself stays binary. Pure functions on plain pixel buffers, shared by the window
//! (view and recordings), `livecut segment` and the virtual camera; the same in wgpu
//! compute shaders ([`wgpu::WgpuCompositor`], with integer arithmetic on both sides so
//! the bytes are the same), and [`Compositor`] to use the GPU where there is one.

pub mod alpha;
mod blur;
mod compositor;
pub mod wgpu;

use crate::bands;
use crate::capture::Frame;
use crate::grid::Mask;
use image::{RgbImage, RgbaImage};
use std::sync::Arc;

pub use alpha::soft_alpha;
pub use compositor::Compositor;

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
        let mut out = RgbaImage::default();
        self.compose_into(frame, mask, &mut Buffers::default(), &mut out);
        out
    }

    /// [`Self::compose`] into `out`, with the intermediate images in `buffers`: a
    /// stream of frames of one size composes without allocating.
    pub fn compose_into(
        &self,
        frame: &Frame,
        mask: &Mask,
        buffers: &mut Buffers,
        out: &mut RgbaImage,
    ) {
        if (mask.width, mask.height) != (frame.width, frame.height) {
            return map_pixels_into(frame, out, |_, _, _, rgb| [rgb[0], rgb[1], rgb[2], 255]);
        }
        match self {
            Composite::CutOut => blend_over(frame, mask, buffers, out, checker),
            Composite::Background(backdrop) => {
                replace_background_into(frame, mask, backdrop, buffers, out)
            }
        }
    }
}

/// The images a composite is made from, kept from frame to frame.
#[derive(Default)]
pub struct Buffers {
    alpha: alpha::AlphaBuffers,
    blur: blur::Blur,
    blurred: Vec<u8>,
}

/// The frame with the soft alpha of the mask: a cut-out with a transparent
/// background.
pub fn cut_out_alpha(frame: &Frame, mask: &Mask) -> RgbaImage {
    let mut alpha = alpha::AlphaBuffers::default();
    let alpha = alpha.compute(frame, mask);
    map_pixels(frame, |_, _, i, rgb| [rgb[0], rgb[1], rgb[2], alpha[i]])
}

/// The foreground on a grey checkerboard, which shows where the cut-out is
/// transparent.
pub fn cut_out(frame: &Frame, mask: &Mask) -> RgbaImage {
    Composite::CutOut.compose(frame, mask)
}

/// The foreground over `backdrop`.
pub fn replace_background(frame: &Frame, mask: &Mask, backdrop: &Backdrop) -> RgbaImage {
    Composite::Background(backdrop.clone()).compose(frame, mask)
}

/// [`replace_background`] into `out`, with the intermediate images in `buffers`.
fn replace_background_into(
    frame: &Frame,
    mask: &Mask,
    backdrop: &Backdrop,
    buffers: &mut Buffers,
    out: &mut RgbaImage,
) {
    match backdrop {
        Backdrop::Colour(c) => blend_over(frame, mask, buffers, out, |_, _| *c),
        Backdrop::Image(img) => {
            let (bw, bh) = img.dimensions();
            let (fw, fh) = (frame.width as u64, frame.height as u64);
            blend_over(frame, mask, buffers, out, |x, y| {
                let sx = (x as u64 * bw as u64 / fw) as u32;
                let sy = (y as u64 * bh as u64 / fh) as u32;
                img.get_pixel(sx.min(bw - 1), sy.min(bh - 1)).0
            })
        }
        Backdrop::Blur => {
            let mut blurred = std::mem::take(&mut buffers.blurred);
            buffers.blur.blur_into(frame, BLUR_FACTOR, &mut blurred);
            let width = frame.width as usize;
            blend_over(frame, mask, buffers, out, |x, y| {
                let j = (y as usize * width + x as usize) * 3;
                [blurred[j], blurred[j + 1], blurred[j + 2]]
            });
            buffers.blurred = blurred;
        }
    }
}

/// The frame over the background `behind(x, y)`, mixed by the mask's soft alpha,
/// into `out`.
fn blend_over(
    frame: &Frame,
    mask: &Mask,
    buffers: &mut Buffers,
    out: &mut RgbaImage,
    behind: impl Fn(u32, u32) -> [u8; 3] + Sync,
) {
    let alpha = buffers.alpha.compute(frame, mask);
    map_pixels_into(frame, out, |x, y, i, rgb| match alpha[i] {
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
    f: impl Fn(u32, u32, usize, &[u8]) -> [u8; 4] + Sync,
) -> RgbaImage {
    let mut out = RgbaImage::default();
    map_pixels_into(frame, &mut out, f);
    out
}

/// [`map_pixels`] into `out` (its memory reused), in row bands on every core.
pub(crate) fn map_pixels_into(
    frame: &Frame,
    out: &mut RgbaImage,
    f: impl Fn(u32, u32, usize, &[u8]) -> [u8; 4] + Sync,
) {
    let (w, h) = (frame.width, frame.height);
    let mut raw = std::mem::take(out).into_raw();
    if frame.rgb.len() < 3 * w as usize * h as usize {
        raw.clear(); // pixels the frame lacks stay black
    }
    raw.resize(w as usize * h as usize * 4, 0);
    let row = w as usize * 4;
    bands::for_each_band(&mut raw, row, 1, |first, band| {
        for (r, dst_row) in band.chunks_exact_mut(row).enumerate() {
            let y = (first + r) as u32;
            let start = (first + r) * w as usize;
            let src_row = frame.rgb.get(3 * start..).unwrap_or_default();
            for (x, (dst, rgb)) in dst_row
                .chunks_exact_mut(4)
                .zip(src_row.chunks_exact(3))
                .enumerate()
            {
                dst.copy_from_slice(&f(x as u32, y, start + x, rgb));
            }
        }
    });
    *out = RgbaImage::from_raw(w, h, raw).expect("buffer has the image's size");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bands::with_threads;
    use crate::capture::DemoScene;

    #[test]
    fn composites_are_alike_on_one_thread_and_two_and_with_used_buffers() {
        let picture = Arc::new(RgbImage::from_fn(30, 20, |x, y| {
            [x as u8 * 8, y as u8 * 12, 90].into()
        }));
        let composites = [
            Composite::CutOut,
            Composite::Background(Backdrop::Blur),
            Composite::Background(Backdrop::Colour([10, 200, 30])),
            Composite::Background(Backdrop::Image(picture)),
        ];
        // buffers used for a frame of another size first
        let (mut buffers, mut out) = (Buffers::default(), RgbaImage::default());
        for (w, h) in [(97, 61), (160, 120)] {
            let (frame, mask) = DemoScene::new(w, h, 30, 2).render(5);
            for composite in &composites {
                let fresh = with_threads(1, || composite.compose(&frame, &mask));
                for threads in [1, 2] {
                    with_threads(threads, || {
                        composite.compose_into(&frame, &mask, &mut buffers, &mut out)
                    });
                    assert!(out == fresh, "{composite:?} {w}x{h} on {threads} threads");
                }
            }
        }
    }
}

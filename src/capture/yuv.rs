//! Cameras' uncompressed frames to RGB: YUYV 4:2:2 and NV12 4:2:0, with the integer
//! BT.601 limited-range formula of nokhwa's converters (the same bytes), in row bands
//! on every core and in integer lanes the compiler vectorises.

use crate::bands;

/// A YUYV 4:2:2 frame (Y0 U Y1 V per pair of pixels) of `width`×`height` as RGB
/// bytes; `None` if the width is odd or the buffer is short (bytes past the frame,
/// which some drivers leave, are ignored).
pub fn yuyv_to_rgb(yuyv: &[u8], width: u32, height: u32) -> Option<Vec<u8>> {
    let mut rgb = Vec::new();
    yuyv_to_rgb_into(yuyv, width, height, &mut rgb)?;
    Some(rgb)
}

/// [`yuyv_to_rgb`] into `rgb` (its memory reused).
pub fn yuyv_to_rgb_into(yuyv: &[u8], width: u32, height: u32, rgb: &mut Vec<u8>) -> Option<()> {
    let (w, h) = (width as usize, height as usize);
    let yuyv = yuyv.get(..2 * w * h).filter(|_| w.is_multiple_of(2))?;
    rgb.resize(3 * w * h, 0);
    bands::for_each_band(rgb, 3 * w, 1, |first, band| {
        for (src, dst) in yuyv[2 * w * first..]
            .chunks_exact(4)
            .zip(band.chunks_exact_mut(6))
        {
            let (u, v) = (i32::from(src[1]), i32::from(src[3]));
            dst[..3].copy_from_slice(&to_rgb(i32::from(src[0]), u, v));
            dst[3..].copy_from_slice(&to_rgb(i32::from(src[2]), u, v));
        }
    });
    Some(())
}

/// An NV12 frame (the Y plane, then a half-height plane of interleaved U V for each
/// 2×2 block) of `width`×`height` as RGB bytes; `None` if a side is odd or the buffer
/// has another length.
pub fn nv12_to_rgb(nv12: &[u8], width: u32, height: u32) -> Option<Vec<u8>> {
    let mut rgb = Vec::new();
    nv12_to_rgb_into(nv12, width, height, &mut rgb)?;
    Some(rgb)
}

/// [`nv12_to_rgb`] into `rgb` (its memory reused).
pub fn nv12_to_rgb_into(nv12: &[u8], width: u32, height: u32, rgb: &mut Vec<u8>) -> Option<()> {
    let (w, h) = (width as usize, height as usize);
    if !w.is_multiple_of(2) || !h.is_multiple_of(2) || nv12.len() != w * h * 3 / 2 {
        return None;
    }
    let (luma, chroma) = nv12.split_at(w * h);
    rgb.resize(3 * w * h, 0);
    bands::for_each_band(rgb, 3 * w, 1, |first, band| {
        for (r, dst) in band.chunks_exact_mut(3 * w).enumerate() {
            let y = first + r;
            let luma = &luma[y * w..][..w];
            let chroma = &chroma[y / 2 * w..][..w];
            for ((ys, uv), dst) in luma
                .chunks_exact(2)
                .zip(chroma.chunks_exact(2))
                .zip(dst.chunks_exact_mut(6))
            {
                let (u, v) = (i32::from(uv[0]), i32::from(uv[1]));
                dst[..3].copy_from_slice(&to_rgb(i32::from(ys[0]), u, v));
                dst[3..].copy_from_slice(&to_rgb(i32::from(ys[1]), u, v));
            }
        }
    });
    Some(())
}

/// One pixel's Y, U and V (limited range) as RGB, nokhwa's integer formula.
#[inline(always)]
fn to_rgb(y: i32, u: i32, v: i32) -> [u8; 3] {
    let c = (y - 16) * 298;
    let (d, e) = (u - 128, v - 128);
    let r = (c + 409 * e + 128) >> 8;
    let g = (c - 100 * d - 208 * e + 128) >> 8;
    let b = (c + 516 * d + 128) >> 8;
    [r, g, b].map(|x| x.clamp(0, 255) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bands::with_threads;
    use nokhwa::pixel_format::RgbFormat;
    use nokhwa::utils::{FrameFormat, Resolution};

    /// Bytes of a noisy gradient, as a camera would send them.
    fn bytes(n: usize) -> Vec<u8> {
        let mut bits = crate::test_bits::lcg(7);
        (0..n)
            .map(|i| ((i / 7) as u64 + (bits() >> 60)) as u8)
            .collect()
    }

    fn nokhwa_rgb(data: &[u8], w: u32, h: u32, format: FrameFormat) -> Vec<u8> {
        let buffer = nokhwa::Buffer::new(Resolution::new(w, h), data, format);
        buffer.decode_image::<RgbFormat>().unwrap().into_raw()
    }

    #[test]
    fn yuyv_gives_nokhwas_bytes_on_one_thread_and_two() {
        let (w, h) = (122, 37);
        let data = bytes((2 * w * h) as usize);
        let want = nokhwa_rgb(&data, w, h, FrameFormat::YUYV);
        for threads in [1, 2] {
            let got = with_threads(threads, || yuyv_to_rgb(&data, w, h));
            assert!(got.as_ref() == Some(&want), "{threads} threads");
        }
        assert!(yuyv_to_rgb(&data[1..], w, h).is_none(), "short");
        assert!(yuyv_to_rgb(&data, w + 1, h).is_none(), "odd width");
    }

    #[test]
    fn nv12_gives_nokhwas_bytes_on_one_thread_and_two() {
        let (w, h) = (122, 38);
        let data = bytes((w * h * 3 / 2) as usize);
        let want = nokhwa_rgb(&data, w, h, FrameFormat::NV12);
        for threads in [1, 2] {
            let got = with_threads(threads, || nv12_to_rgb(&data, w, h));
            assert!(got.as_ref() == Some(&want), "{threads} threads");
        }
        assert!(nv12_to_rgb(&data[1..], w, h).is_none(), "short");
        assert!(nv12_to_rgb(&data, w, h - 1).is_none(), "odd height");
    }
}

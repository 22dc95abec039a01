//! Webcam-like MJPEG frames for tests and benches: baseline JPEGs with 4:2:2 chroma
//! (the UVC MJPEG format) or 4:2:0 (what many webcams send too), with a restart marker
//! after every `restart_rows` rows of MCUs (0: none), encoded by libjpeg-turbo through
//! mozjpeg-sys (the `image` crate's encoder writes 4:4:4 without markers, the `mozjpeg`
//! crate sets no restarts).

use mozjpeg_sys::*;
use std::ffi::{c_int, c_ulong};

/// `rgb`, a `w`×`h` picture, as a webcam's JPEG of `quality` (1–100), 4:2:2.
pub fn webcam_jpeg(rgb: &[u8], w: u32, h: u32, quality: c_int, restart_rows: c_int) -> Vec<u8> {
    webcam_jpeg_sampled(rgb, w, h, quality, restart_rows, 1)
}

/// [`webcam_jpeg`] with chroma halved across and `v_half` times down (1: 4:2:2,
/// 2: 4:2:0).
pub fn webcam_jpeg_sampled(
    rgb: &[u8],
    w: u32,
    h: u32,
    quality: c_int,
    restart_rows: c_int,
    v_half: c_int,
) -> Vec<u8> {
    assert_eq!(rgb.len(), 3 * w as usize * h as usize);
    // SAFETY: libjpeg's documented sequence on structs it initialises; the rows
    // handed to it lie within `rgb`; its output buffer is freed with `free` as its
    // memory destination asks.
    unsafe {
        let mut err: jpeg_error_mgr = std::mem::zeroed();
        let mut cinfo: jpeg_compress_struct = std::mem::zeroed();
        cinfo.common.err = jpeg_std_error(&mut err);
        jpeg_create_compress(&mut cinfo);
        let (mut buffer, mut size): (*mut u8, c_ulong) = (std::ptr::null_mut(), 0);
        jpeg_mem_dest(&mut cinfo, &mut buffer, &mut size);
        (cinfo.image_width, cinfo.image_height) = (w, h);
        cinfo.input_components = 3;
        cinfo.in_color_space = J_COLOR_SPACE::JCS_RGB;
        let fastest = JINT_COMPRESS_PROFILE_VALUE::JCP_FASTEST as c_int;
        jpeg_c_set_int_param(&mut cinfo, J_INT_PARAM::JINT_COMPRESS_PROFILE, fastest);
        jpeg_set_defaults(&mut cinfo);
        jpeg_set_quality(&mut cinfo, quality, 1);
        (
            (*cinfo.comp_info).h_samp_factor,
            (*cinfo.comp_info).v_samp_factor,
        ) = (2, v_half);
        cinfo.restart_in_rows = restart_rows;
        jpeg_start_compress(&mut cinfo, 1);
        for row in rgb.chunks_exact(3 * w as usize) {
            let rows = [row.as_ptr()];
            jpeg_write_scanlines(&mut cinfo, rows.as_ptr(), 1);
        }
        jpeg_finish_compress(&mut cinfo);
        let jpeg = std::slice::from_raw_parts(buffer, size as usize).to_vec();
        libc::free(buffer.cast());
        jpeg_destroy_compress(&mut cinfo);
        jpeg
    }
}

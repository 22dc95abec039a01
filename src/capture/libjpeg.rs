//! A safe hold on libjpeg-turbo's decompressor (mozjpeg's build through
//! `mozjpeg-sys`, which nokhwa links already) for the few calls a split decode needs:
//! the header, skipping rows by their Huffman codes alone, and reading rows as RGB.
//!
//! libjpeg reports a fatal error by calling `error_exit`, which here unwinds (without
//! the panic hook, so a corrupt camera frame prints nothing) to the call that made it;
//! every call returns `None` on one. A warning (corrupt or cut-off data, which libjpeg
//! would fill in grey) counts as a failure too: a frame decodes whole or not at all.

use mozjpeg_sys::{
    J_COLOR_SPACE, JDIMENSION, jpeg_common_struct, jpeg_create_decompress, jpeg_decompress_struct,
    jpeg_destroy_decompress, jpeg_error_mgr, jpeg_mem_src, jpeg_read_header, jpeg_read_scanlines,
    jpeg_skip_scanlines, jpeg_start_decompress, jpeg_std_error,
};
use std::ffi::{c_int, c_ulong};
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// What `error_exit` unwinds with.
struct Fatal;

/// libjpeg's fatal errors, as an unwind to the call that made them.
extern "C-unwind" fn unwind(_: &mut jpeg_common_struct) {
    resume_unwind(Box::new(Fatal));
}

/// libjpeg's messages, silenced; its warnings (level −1) counted.
extern "C-unwind" fn count_warnings(cinfo: &mut jpeg_common_struct, level: c_int) {
    if level < 0 {
        // SAFETY: `err` is the error manager `Decoder::open` gave this struct.
        unsafe { (*cinfo.err).num_warnings += 1 };
    }
}

/// A decompressor reading one JPEG held in memory, its header read.
pub(super) struct Decoder<'a> {
    // boxed: libjpeg holds the error manager's address, and the struct's own
    cinfo: Box<jpeg_decompress_struct>,
    err: Box<jpeg_error_mgr>,
    bytes: PhantomData<&'a [u8]>,
}

impl<'a> Decoder<'a> {
    /// A decompressor of `bytes` with its header read and RGB asked for; `None`
    /// where the header does not read.
    pub fn open(bytes: &'a [u8]) -> Option<Self> {
        // SAFETY: zeroed structs are what libjpeg's setup functions expect to fill
        // (and what `jpeg_destroy_decompress` takes as nothing to free); the decoder
        // owns both boxes for as long as libjpeg may use them.
        let mut decoder = unsafe {
            let mut err: Box<jpeg_error_mgr> = Box::new(std::mem::zeroed());
            jpeg_std_error(&mut err);
            err.error_exit = Some(unwind);
            err.emit_message = Some(count_warnings);
            let mut cinfo: Box<jpeg_decompress_struct> = Box::new(std::mem::zeroed());
            cinfo.common.err = &mut *err;
            Decoder {
                cinfo,
                err,
                bytes: PhantomData,
            }
        };
        // SAFETY: a zeroed struct with its error manager, as libjpeg asks.
        decoder.call(|c| unsafe { jpeg_create_decompress(c) })?;
        decoder.call(|c| {
            // SAFETY: `bytes` outlives the decoder (its lifetime); libjpeg only reads it.
            unsafe { jpeg_mem_src(c, bytes.as_ptr(), bytes.len() as c_ulong) };
            // SAFETY: a created struct with a source, as libjpeg asks.
            unsafe { jpeg_read_header(c, 1) };
            c.out_color_space = J_COLOR_SPACE::JCS_RGB;
        })?;
        Some(decoder)
    }

    /// The picture's width and height.
    pub fn size(&self) -> (usize, usize) {
        (
            self.cinfo.image_width as usize,
            self.cinfo.image_height as usize,
        )
    }

    /// Pixel rows an MCU row spans.
    pub fn mcu_rows(&self) -> usize {
        8 * self.cinfo.max_v_samp_factor.max(1) as usize
    }

    /// Starts decompressing.
    pub fn start(&mut self) -> Option<()> {
        // SAFETY: the header is read (`open`).
        self.call(|c| unsafe {
            jpeg_start_decompress(c);
        })
    }

    /// Passes over the next `rows` rows by their Huffman codes alone.
    pub fn skip(&mut self, rows: usize) -> Option<()> {
        let rows = JDIMENSION::try_from(rows).ok()?;
        // SAFETY: decompression has started (`start`).
        let skipped = self.call(|c| unsafe { jpeg_skip_scanlines(c, rows) })?;
        (skipped == rows).then_some(())
    }

    /// Decodes the next rows into `out`, whole rows of RGB (written, never read:
    /// it may start uninitialised).
    pub fn read(&mut self, out: &mut [MaybeUninit<u8>]) -> Option<()> {
        let row_len = 3 * self.cinfo.output_width as usize;
        if row_len == 0 || !out.len().is_multiple_of(row_len) {
            return None;
        }
        for row in out.chunks_exact_mut(row_len) {
            let mut at = row.as_mut_ptr().cast::<u8>();
            // SAFETY: decompression has started; `at` points at one row of the
            // output's width in RGB.
            let read = self.call(|c| unsafe { jpeg_read_scanlines(c, &mut at, 1) })?;
            if read != 1 {
                return None;
            }
        }
        Some(())
    }

    /// Runs one libjpeg call on the struct; `None` where it failed or warned.
    fn call<R>(&mut self, f: impl FnOnce(&mut jpeg_decompress_struct) -> R) -> Option<R> {
        let cinfo = &mut *self.cinfo;
        let result = catch_unwind(AssertUnwindSafe(|| f(cinfo))).ok()?;
        (self.err.num_warnings == 0).then_some(result)
    }
}

impl Drop for Decoder<'_> {
    fn drop(&mut self) {
        // SAFETY: the struct was created in `open`, and is destroyed once; libjpeg
        // allows it after a fatal error.
        let _ = catch_unwind(AssertUnwindSafe(|| unsafe {
            jpeg_destroy_decompress(&mut self.cinfo)
        }));
    }
}

#[cfg(test)]
mod tests {
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    unsafe extern "C" {
        /// libjpeg-turbo's own test for its SIMD inverse DCT (0 where built without).
        fn jsimd_can_idct_islow() -> std::ffi::c_int;
    }

    /// The build decides the decoder's speed: without `nasm`, mozjpeg-sys builds
    /// libjpeg-turbo without SIMD, silently.
    #[test]
    #[cfg(any(target_arch = "x86_64", target_arch = "aarch64"))]
    fn libjpeg_turbo_is_built_with_its_simd() {
        // SAFETY: a query without arguments, linked from the same library.
        let simd = unsafe { jsimd_can_idct_islow() };
        assert_ne!(
            simd, 0,
            "libjpeg-turbo was built without SIMD: install nasm and rebuild \
             (camera MJPEG frames decode about twice as slowly without it)"
        );
    }

    #[test]
    fn what_is_not_a_jpeg_opens_not_at_all() {
        for bytes in [&b""[..], b"\xFF\xD8", b"not a jpeg at all"] {
            assert!(super::Decoder::open(bytes).is_none());
        }
    }
}

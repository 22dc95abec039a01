//! The image reader of `segment` and `eval` (PNG, JPEG, BMP) on any bytes, as far as
//! the RGB frame they make of it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(img) = livecut::capture::files::decode_image(data) {
        let rgb = img.into_rgb8();
        let (w, h) = rgb.dimensions();
        assert_eq!(rgb.into_raw().len(), w as usize * h as usize * 3);
    }
});

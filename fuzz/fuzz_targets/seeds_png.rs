//! The seeds/trimap reader (any size, bit depth, palette, alpha) on any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use livecut::capture::files::decode_seeds;
use livecut::energy::SeedLabel;

fuzz_target!(|data: &[u8]| {
    if let Ok(seeds) = decode_seeds(data) {
        assert_eq!(
            seeds.labels.len(),
            seeds.width as usize * seeds.height as usize
        );
        let _ = seeds.count(SeedLabel::Foreground);
    }
});

//! The saved-settings loader on any text, and what the window makes of settings it
//! accepts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use livecut::app::settings::Settings;

fuzz_target!(|data: &[u8]| {
    if let Ok(settings) = Settings::from_stored(&String::from_utf8_lossy(data)) {
        let _ = settings.segment_params();
    }
});

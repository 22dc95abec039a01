//! The DIMACS reader on any bytes: plain text, or a gzip stream where they start with
//! its magic (then mostly a corrupt one).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = livecut::maxflow::dimacs::read_any(std::io::Cursor::new(data.to_vec()));
});

//! The DIMACS reader on well-formed gzip streams of fuzzed text, whole or cut short.
//! The first byte chooses: even, the whole stream; odd, the stream cut at that many
//! 256ths of its length.
#![no_main]

use flate2::Compression;
use flate2::write::GzEncoder;
use libfuzzer_sys::fuzz_target;
use std::io::Write;

fuzz_target!(|data: &[u8]| {
    let Some((&cut, text)) = data.split_first() else {
        return;
    };
    let mut gz = GzEncoder::new(Vec::new(), Compression::fast());
    gz.write_all(text).expect("writing to memory");
    let mut bytes = gz.finish().expect("writing to memory");
    if cut & 1 == 1 {
        bytes.truncate(bytes.len() * cut as usize / 256);
    }
    let _ = livecut::maxflow::dimacs::read_any(std::io::Cursor::new(bytes));
});

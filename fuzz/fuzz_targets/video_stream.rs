//! The video reader's frame parsing on ffmpeg-shaped streams: the input is ffprobe's
//! text, a NUL, ffmpeg's log, a NUL, then the raw rgb24 pictures.
#![no_main]

use libfuzzer_sys::fuzz_target;
use livecut::capture::video::{Probe, VideoStream};
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    let mut parts = data.splitn(3, |&b| b == 0);
    let (Some(probe), Some(log), Some(pictures)) = (parts.next(), parts.next(), parts.next())
    else {
        return;
    };
    let Some(probe) = Probe::parse(&String::from_utf8_lossy(probe)) else {
        return;
    };
    let log = Cursor::new(log.to_vec());
    let mut stream = VideoStream::new(probe, Cursor::new(pictures), log).expect("a log thread");
    let mut last = None;
    while let Ok(Some(frame)) = stream.next_frame() {
        let len = probe.width as usize * probe.height as usize * 3;
        assert_eq!(frame.rgb.len(), len);
        assert!(last.is_none_or(|l| frame.index > l), "indices increase");
        last = Some(frame.index);
    }
});

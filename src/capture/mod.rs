//! Frame sources: camera, image files, folders, video through ffmpeg, and the built-in
//! demo scene, all behind one [`FrameSource`] trait.

use std::time::Duration;

/// One RGB frame, 8 bits per channel, row-major, no padding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// `width * height * 3` bytes, R G B.
    pub rgb: Vec<u8>,
    /// Time since the source started (capture time for cameras, nominal for files).
    pub timestamp: Duration,
    /// Position in the stream, from 0.
    pub index: u64,
}

//! Frame sources: camera, image files, folders, video through ffmpeg, and the built-in
//! demo scene, all behind one [`FrameSource`] trait.
//!
//! A source is opened from a [`SourceSpec`] (what the user typed, e.g. `demo`,
//! `camera:1`, a path) and then yields [`CapturedFrame`]s until the stream ends. Sources
//! know nothing about threads: [`crate::pipeline`] runs them on a capture thread.

pub mod camera;
pub mod demo;
mod error;
pub mod files;
mod jpeg;
mod libjpeg;
mod spec;
pub mod video;
pub mod yuv;

pub use camera::{CameraDescription, CameraMode, CameraSource, list_cameras};
pub use demo::{DemoConfig, DemoMotion, DemoScene, DemoSource};
pub use error::CaptureError;
pub use files::{FolderSource, ImageSource};
pub use spec::{SourceSpec, StreamSettings};
pub use video::VideoSource;

use crate::energy::Seeds;
use crate::grid::Mask;
use std::time::Duration;

/// One RGB frame, 8 bits per channel, row-major, no padding (the default one is
/// empty, 0×0).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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

/// A frame as a source delivers it, with what the source knows about it.
#[derive(Clone, Debug)]
pub struct CapturedFrame {
    /// The pixels.
    pub frame: Frame,
    /// Milliseconds spent reading and decoding (or rendering) this frame; waiting for
    /// a camera's next exposure is not counted.
    pub decode_ms: f64,
    /// Name for per-frame output files (the input file's stem), where the frame came
    /// from a named file; `None` for streams, which are numbered instead.
    pub name: Option<String>,
    /// The true foreground, where the source knows it (the demo scene).
    pub truth: Option<Mask>,
}

/// Anything that produces RGB frames: opened once, then read frame by frame.
pub trait FrameSource: Send {
    /// One line for people, e.g. `camera 0: HD Webcam (1280x720 MJPEG @ 30 fps)`.
    fn describe(&self) -> String;

    /// Width and height of every frame this source yields.
    fn size(&self) -> (u32, u32);

    /// Whether frames keep coming in real time whether or not they are read (cameras,
    /// the paced demo): such sources are read through a latest-wins channel. Files and
    /// videos are read at the consumer's pace.
    fn is_live(&self) -> bool {
        false
    }

    /// Number of frames, where known before reading them (files; videos whose
    /// container says so); used for progress bars.
    fn len_hint(&self) -> Option<u64> {
        None
    }

    /// Seeds that segment the first frame without user input, where the source knows
    /// what the foreground is (the demo scene).
    fn default_seeds(&self) -> Option<Seeds> {
        None
    }

    /// How to open this source again after it failed (a camera: the same device and
    /// mode), for the window to offer when the device is back; `None` where opening
    /// it again would not help.
    fn reopen_spec(&self) -> Option<SourceSpec> {
        None
    }

    /// The next frame; `Ok(None)` at the end of the stream. After an error the stream
    /// is over (a camera that disappeared, a truncated file). It may wait for the
    /// next frame but must return within a bounded time (a camera gives up after a
    /// few seconds without frames): stopping a source waits for this call.
    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError>;
}

/// Milliseconds elapsed since `start`, for the per-stage timings.
pub(crate) fn millis_since(start: std::time::Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

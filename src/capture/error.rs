//! Why a source could not be opened or read.

use std::path::PathBuf;
use thiserror::Error;

/// Why a source could not be opened or stopped delivering frames. Every message is
/// one line that names the file or device.
#[derive(Debug, Error)]
pub enum CaptureError {
    /// The input is neither a keyword (`demo`, `camera[:N]`) nor an existing path.
    #[error(
        "{0}: no such file or directory (expected an image, a folder, a video, demo or camera[:N])"
    )]
    NotFound(PathBuf),
    /// The input text could not be understood.
    #[error("bad input {input:?}: {reason}")]
    BadSpec {
        /// What the user typed.
        input: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A file or folder could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An image file could not be decoded.
    #[error("cannot read image {path}: {source}")]
    Image {
        /// The image file.
        path: PathBuf,
        /// The decoder's error.
        source: image::ImageError,
    },
    /// A folder holds no image files.
    #[error("no images in folder {0} (looked for .png, .jpg, .jpeg and .bmp files)")]
    EmptyFolder(PathBuf),
    /// Two images of a folder would give the same output name.
    #[error("{first} and {second} would both write the mask {name}.png; rename one of them")]
    DuplicateName {
        /// The shared stem.
        name: String,
        /// One file.
        first: PathBuf,
        /// The other file.
        second: PathBuf,
    },
    /// A frame of a sequence differs in size from the first frame.
    #[error("{path} is {got_w}x{got_h} but the sequence started at {want_w}x{want_h}")]
    SizeChanged {
        /// The offending file.
        path: PathBuf,
        /// Its width.
        got_w: u32,
        /// Its height.
        got_h: u32,
        /// Width of the first frame.
        want_w: u32,
        /// Height of the first frame.
        want_h: u32,
    },
    /// The `ffmpeg` (or `ffprobe`) program is not installed.
    #[error(
        "cannot read video {path}: `{program}` is not installed (install ffmpeg, or convert the video to a folder of images)"
    )]
    FfmpegMissing {
        /// The video.
        path: PathBuf,
        /// The missing program.
        program: String,
    },
    /// ffmpeg/ffprobe ran but the video could not be read.
    #[error("cannot read video {path}: {reason}")]
    Video {
        /// The video.
        path: PathBuf,
        /// What went wrong.
        reason: String,
    },
    /// The system has no camera.
    #[error("no camera found (use --input demo for the built-in demo scene)")]
    NoCamera,
    /// A camera could not be listed or opened.
    #[error("camera {index}: {reason}")]
    Camera {
        /// The camera's index.
        index: u32,
        /// What went wrong.
        reason: String,
    },
    /// A camera stopped delivering frames (unplugged, taken by another program).
    #[error("camera {index} stopped delivering frames: {reason}")]
    CameraLost {
        /// The camera's index.
        index: u32,
        /// The backend's error.
        reason: String,
    },
    /// A requested size or frame rate is unusable.
    #[error("{0}")]
    Settings(String),
}

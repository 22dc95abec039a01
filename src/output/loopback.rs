//! The v4l2loopback sink: a video-output device node whose other side video-call
//! programs open as a camera. The format is set once, when opened; frames are then
//! written with `write`, which the loopback driver takes whole.

use super::{FrameSink, OutputError};
use std::path::{Path, PathBuf};

/// Where the kernel lists loaded modules: tells "not loaded" from "loaded with
/// other devices".
const MODULE_DIR: &str = "/sys/module/v4l2loopback";

/// An open v4l2loopback device taking YUYV frames.
pub struct Loopback {
    path: PathBuf,
    #[cfg(target_os = "linux")]
    device: v4l::Device,
}

impl Loopback {
    /// Opens `path` and sets its output format to YUYV `width` × `height` at `fps`.
    #[cfg(target_os = "linux")]
    pub fn open(path: &Path, width: u32, height: u32, fps: u32) -> Result<Self, OutputError> {
        use std::io::ErrorKind;
        use v4l::video::Output;
        use v4l::video::output::Parameters;
        if !path.exists() {
            return Err(missing(path));
        }
        let device = v4l::Device::with_path(path).map_err(|source| match source.kind() {
            ErrorKind::NotFound => missing(path),
            ErrorKind::PermissionDenied => OutputError::Permission(path.to_path_buf()),
            _ => OutputError::Io {
                path: path.to_path_buf(),
                source,
            },
        })?;
        let mut wanted = v4l::Format::new(width, height, v4l::FourCC::new(b"YUYV"));
        wanted.stride = width * 2;
        wanted.size = width * height * 2;
        let got = device
            .set_format(&wanted)
            .map_err(|source| OutputError::NotLoopback {
                path: path.to_path_buf(),
                source,
            })?;
        if (got.width, got.height, got.fourcc) != (width, height, wanted.fourcc) {
            return Err(OutputError::FormatRefused {
                path: path.to_path_buf(),
                wanted: format!("{width}x{height} YUYV"),
                got: format!("{}x{} {}", got.width, got.height, got.fourcc),
            });
        }
        // The rate readers are told; a driver that ignores it still gets paced frames.
        let _ = device.set_params(&Parameters::with_fps(fps));
        Ok(Self {
            path: path.to_path_buf(),
            device,
        })
    }

    /// Virtual cameras exist on Linux only.
    #[cfg(not(target_os = "linux"))]
    pub fn open(_path: &Path, _width: u32, _height: u32, _fps: u32) -> Result<Self, OutputError> {
        Err(OutputError::Unsupported)
    }
}

impl FrameSink for Loopback {
    /// Writes the frame; a device not ready for it (no reader keeps up) skips it.
    fn write_frame(&mut self, yuyv: &[u8]) -> Result<(), OutputError> {
        #[cfg(target_os = "linux")]
        {
            use std::io::Write;
            match self.device.write_all(yuyv) {
                Err(e) if e.kind() != std::io::ErrorKind::WouldBlock => Err(OutputError::Io {
                    path: self.path.clone(),
                    source: e,
                }),
                _ => Ok(()),
            }
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = yuyv;
            Err(OutputError::Unsupported)
        }
    }
}

/// The error of a missing device node, with the command that makes it.
fn missing(path: &Path) -> OutputError {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let number = name
        .strip_prefix("video")
        .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .unwrap_or("10")
        .to_string();
    let reload = if Path::new(MODULE_DIR).exists() {
        " (the module is loaded with other devices: unload it first with `sudo modprobe -r v4l2loopback`)"
    } else {
        ""
    };
    OutputError::NoDevice {
        path: path.to_path_buf(),
        number,
        reload,
    }
}

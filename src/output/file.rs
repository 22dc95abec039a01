//! The file sink: the virtual camera's frames appended to a file as raw YUYV 4:2:2,
//! exactly the bytes a device would get (play them with `ffplay -f rawvideo
//! -pixel_format yuyv422 -video_size WxH FILE`).

use super::{FrameSink, OutputError};
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

/// Raw frames in a file, created (or emptied) when opened.
pub struct FileSink {
    path: PathBuf,
    file: BufWriter<File>,
}

impl FileSink {
    /// Creates the file.
    pub fn create(path: &Path) -> Result<Self, OutputError> {
        let file = File::create(path).map_err(|source| OutputError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        Ok(Self {
            path: path.to_path_buf(),
            file: BufWriter::new(file),
        })
    }
}

impl FrameSink for FileSink {
    /// Appends the frame, whole, so a reader sees complete frames only.
    fn write_frame(&mut self, yuyv: &[u8]) -> Result<(), OutputError> {
        self.file
            .write_all(yuyv)
            .and_then(|()| self.file.flush())
            .map_err(|source| OutputError::Io {
                path: self.path.clone(),
                source,
            })
    }
}

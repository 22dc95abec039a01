//! Recording results: one mask PNG per frame and, optionally, one JSON line per frame
//! with its timings and solver statistics. Nothing is created before the first frame
//! (a run that fails early leaves no files), and nothing half-written ever carries a
//! final name: every PNG is written beside its target and renamed into place, and the
//! JSON lines go to a `.NAME.part` file, written a whole line at a time as each frame
//! is done and renamed to its name when the recorder finishes. A killed process
//! leaves the lines so far in the `.part` file.

use super::motion::Motion;
use super::timing::FrameTiming;
use super::volume::VolumeSpan;
use super::worker::FrameResult;
use crate::energy::ChangeCensus;
use crate::energy::plan::EnergyDevice;
use crate::maxflow::{Certificate, EngineKind};
use serde::Serialize;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use thiserror::Error;

/// Why a result could not be recorded.
#[derive(Debug, Error)]
pub enum RecordError {
    /// A file or folder could not be written.
    #[error("cannot write {path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The frame has no mask (no seeds, or segmentation failed).
    #[error("frame {0} has no mask to record")]
    NoMask(u64),
}

/// One JSON line: what happened to one frame.
#[derive(Clone, Debug, Serialize)]
pub struct FrameRecord {
    /// Frame index in the source's stream.
    pub frame: u64,
    /// The mask file's name inside the output folder.
    pub mask: String,
    /// Frame width.
    pub width: u32,
    /// Frame height.
    pub height: u32,
    /// Stage timings, decode to mask (writing it not counted).
    #[serde(flatten)]
    pub timing: FrameTiming,
    /// Max-flow value.
    pub flow: u64,
    /// Engine iterations.
    pub iterations: u64,
    /// Whether the engine continued from the previous frame's residual graph.
    pub dynamic: bool,
    /// Arcs whose capacity changed since the previous frame (dynamic calls).
    pub changed_arcs: u64,
    /// Frames dropped before this one by the latest-wins channel.
    pub dropped: u64,
    /// Engine that cut the frame.
    pub engine: EngineKind,
    /// Where the frame's energy was built: cpu, cuda or wgpu.
    pub energy: EnergyDevice,
    /// What built it where a GPU did: "CUDA", or the wgpu adapter and its API.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// Foreground pixels in the mask.
    pub foreground: usize,
    /// The frame taught the static background and was not cut (its mask is all
    /// background).
    pub learning: bool,
    /// The capacities that changed since the previous frame, by energy term, where
    /// they were counted (`segment --json`; energies built on the CPU).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed: Option<ChangeCensus>,
    /// The noise gate's threshold in grey levels (0: off), raised above the chosen one
    /// for a camera noisier than it allows for.
    pub noise_gate: u8,
    /// How the foreground moved since the frame before, in pixels (`dx`, `dy`), where
    /// it was looked for: zero for a still object or one the camera follows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub motion: Option<Motion>,
    /// Agreement with the source's ground truth, where it has one (the demo).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iou: Option<f64>,
    /// Where the engine stopped at the frame's budget before the minimum cut: what
    /// the mask's cut is proven to be worth.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<StopRecord>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub volume: Option<VolumeSpan>,
}

/// A cut stopped at its budget, as the JSON says it: the flow pushed, the cut's
/// capacity, and their difference, which bounds how far the cut is from minimum.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct StopRecord {
    /// Flow pushed so far (at most the maximum flow).
    pub flow: u64,
    /// Capacity of the mask's cut (at least the minimum cut).
    pub cut: u64,
    /// `cut - flow`: 0 would mean the cut is minimum.
    pub gap: u64,
    /// `gap / flow`.
    pub relative_gap: f64,
}

impl From<Certificate> for StopRecord {
    fn from(c: Certificate) -> Self {
        Self {
            flow: c.flow,
            cut: c.cut,
            gap: c.gap(),
            relative_gap: c.relative_gap(),
        }
    }
}

impl FrameRecord {
    /// The record of a result; `None` when it has no mask.
    pub fn of(result: &FrameResult) -> Option<Self> {
        let output = result.output.as_ref()?;
        let frame = &result.captured.frame;
        Some(Self {
            frame: frame.index,
            mask: mask_name(result),
            width: frame.width,
            height: frame.height,
            timing: result.timings,
            flow: output.flow,
            iterations: output.stats.iterations,
            dynamic: output.stats.dynamic,
            changed_arcs: output.stats.changed_arcs,
            dropped: result.dropped,
            engine: result.engine,
            energy: output.energy,
            gpu: output.gpu.clone(),
            foreground: output.mask.count_source(),
            learning: output.learning,
            iou: result.iou(),
            changed: output.census,
            noise_gate: output.noise_gate,
            motion: output.motion,
            stopped: output.stats.stopped.map(StopRecord::from),
            volume: output.volume,
        })
    }
}

/// File name of a frame's mask: the input file's stem for named frames, the six-digit
/// frame index for streams.
pub fn mask_name(result: &FrameResult) -> String {
    match &result.captured.name {
        Some(name) => format!("{name}.png"),
        None => format!("{:06}.png", result.captured.frame.index),
    }
}

/// Writes masks into a folder and records into a JSON Lines file, both created on the
/// first frame.
pub struct Recorder {
    dir: PathBuf,
    dir_ready: bool,
    json_path: Option<PathBuf>,
    json: Option<File>,
    written: u64,
}

/// The name a file is written under until it is complete: `.NAME.part` beside it.
pub fn part_path(path: &Path) -> PathBuf {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    path.with_file_name(format!(".{name}.part"))
}

impl Recorder {
    /// A recorder writing masks into `dir` and, with `json`, records into that file.
    pub fn new(dir: &Path, json: Option<&Path>) -> Self {
        Self {
            dir: dir.to_path_buf(),
            dir_ready: false,
            json_path: json.map(Path::to_path_buf),
            json: None,
            written: 0,
        }
    }

    /// Where masks go.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Masks written so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Writes the frame's mask and its JSON line; returns the record.
    pub fn record(&mut self, result: &FrameResult) -> Result<FrameRecord, RecordError> {
        let record =
            FrameRecord::of(result).ok_or(RecordError::NoMask(result.captured.frame.index))?;
        let mask = &result
            .output
            .as_ref()
            .expect("a record implies a mask")
            .mask;
        if !self.dir_ready {
            std::fs::create_dir_all(&self.dir).map_err(|source| RecordError::Io {
                path: self.dir.clone(),
                source,
            })?;
            self.dir_ready = true;
        }
        let path = self.dir.join(&record.mask);
        mask.write_png(&path)
            .map_err(|source| RecordError::Io { path, source })?;
        self.written += 1;
        if let Some(json_path) = &self.json_path {
            let io = |source| RecordError::Io {
                path: json_path.clone(),
                source,
            };
            if self.json.is_none() {
                self.json = Some(File::create(part_path(json_path)).map_err(io)?);
            }
            let mut line = serde_json::to_string(&record).expect("records serialise");
            line.push('\n');
            let file = self.json.as_mut().expect("opened above");
            let end = file.stream_position().map_err(io)?;
            if let Err(e) = file.write_all(line.as_bytes()) {
                // A line cut short (a full disk) is taken back: the file keeps whole lines.
                let _ = file.set_len(end);
                let _ = file.seek(SeekFrom::Start(end));
                return Err(io(e));
            }
        }
        Ok(record)
    }

    /// Gives the JSON lines their name (also done when the recorder is dropped).
    pub fn finish(&mut self) -> Result<(), RecordError> {
        let (Some(file), Some(path)) = (self.json.take(), &self.json_path) else {
            return Ok(());
        };
        drop(file);
        std::fs::rename(part_path(path), path).map_err(|source| RecordError::Io {
            path: path.clone(),
            source,
        })
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

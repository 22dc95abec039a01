//! Recording masks, cut-outs or composited frames as numbered PNG sequences, and
//! snapshots of the current frame, on a writer thread: the UI hands frames over
//! without waiting, and a full disk stops the recording with a message instead of
//! stalling or crashing the window. Also the recording controls.

use super::command::Command;
use super::compose::{self, Look};
use super::settings::{RecordKind, Settings};
use super::shortcuts::{Action, shortcut_button};
use super::tasks::Pick;
use crate::capture::CapturedFrame;
use crate::compute::FrameOnDevice;
use crate::grid::Mask;
use crate::maxflow::BlockActivity;
use crossbeam_channel::{Receiver, Sender, TrySendError, bounded, unbounded};
use egui::{RichText, Ui};
use image::{DynamicImage, GrayImage, ImageFormat};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread;

/// Frames waiting for the writer before new ones are skipped.
const QUEUE: usize = 16;

/// One processed frame, shared between the view and the writer.
#[derive(Clone, Debug)]
pub struct Shot {
    /// The frame as captured.
    pub captured: Arc<CapturedFrame>,
    /// Its mask, when segmented.
    pub mask: Option<Arc<Mask>>,
    /// The engine's block activity.
    pub activity: Option<Arc<BlockActivity>>,
    /// The frame's bytes where the energy left them on the window's device (the
    /// picture is composed from them there).
    pub on_device: Option<Arc<FrameOnDevice>>,
}

/// What the writer thread is asked to do.
enum Job {
    /// Frame `number` of the sequence of recording `take`.
    Sequence {
        take: u64,
        folder: PathBuf,
        kind: RecordKind,
        number: u64,
        shot: Shot,
        look: Look,
    },
    /// Composite, mask and frame of one moment, under the next free snapshot name.
    Snapshot {
        folder: PathBuf,
        shot: Shot,
        look: Look,
    },
}

/// What the writer thread reports.
enum Report {
    Written(PathBuf),
    Failed(String),
}

/// State of the current or last recording.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Progress {
    /// Recording now.
    pub active: bool,
    /// Folder of the sequence.
    pub folder: Option<PathBuf>,
    /// Frames handed to the writer.
    pub queued: u64,
    /// Frames on disk.
    pub written: u64,
    /// Frames skipped because the writer was behind.
    pub skipped: u64,
    /// Last file written.
    pub last_file: Option<PathBuf>,
}

/// The UI side of the writer thread.
pub struct Recorder {
    jobs: Sender<Job>,
    reports: Receiver<Report>,
    kind: RecordKind,
    progress: Progress,
    /// Recordings started so far: the writer drops what is left of one that failed.
    take: u64,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

impl Recorder {
    /// Starts the writer thread (it ends when the recorder is dropped).
    pub fn new() -> Self {
        let (jobs, job_rx) = bounded(QUEUE);
        let (report_tx, reports) = unbounded();
        thread::Builder::new()
            .name("livecut-writer".into())
            .spawn(move || writer(job_rx, report_tx))
            .expect("spawning the writer thread");
        Self {
            jobs,
            reports,
            kind: RecordKind::Composites,
            progress: Progress::default(),
            take: 0,
        }
    }

    /// Progress of the current or last recording.
    pub fn progress(&self) -> &Progress {
        &self.progress
    }

    /// Starts a sequence of `kind` in `folder` (created if missing).
    pub fn start(&mut self, folder: PathBuf, kind: RecordKind) {
        self.kind = kind;
        self.take += 1;
        self.progress = Progress {
            active: true,
            folder: Some(folder),
            ..Progress::default()
        };
    }

    /// Stops the sequence; frames already handed over are still written.
    pub fn stop(&mut self) {
        self.progress.active = false;
    }

    /// Hands one frame to the writer when recording; never waits.
    pub fn offer(&mut self, shot: &Shot, look: &Look) {
        let Some(folder) = self
            .progress
            .folder
            .clone()
            .filter(|_| self.progress.active)
        else {
            return;
        };
        if self.kind != RecordKind::Composites && shot.mask.is_none() {
            return;
        }
        let job = Job::Sequence {
            take: self.take,
            folder,
            kind: self.kind,
            number: self.progress.queued + self.progress.skipped,
            shot: shot.clone(),
            look: look.clone(),
        };
        match self.jobs.try_send(job) {
            Ok(()) => self.progress.queued += 1,
            Err(TrySendError::Full(_)) => self.progress.skipped += 1,
            Err(TrySendError::Disconnected(_)) => self.progress.active = false,
        }
    }

    /// Saves composite, mask and frame of `shot` in `folder`. Returns false when the
    /// writer is too busy to take it now.
    pub fn snapshot(&mut self, folder: PathBuf, shot: &Shot, look: &Look) -> bool {
        self.jobs
            .try_send(Job::Snapshot {
                folder,
                shot: shot.clone(),
                look: look.clone(),
            })
            .is_ok()
    }

    /// Collects the writer's reports; returns error messages for the user. An error
    /// stops the recording (a full disk would fail every following frame too).
    pub fn poll(&mut self) -> Vec<String> {
        let mut errors = Vec::new();
        for report in self.reports.try_iter() {
            match report {
                Report::Written(path) => {
                    if self.progress.folder.as_deref() == path.parent() {
                        self.progress.written += 1;
                    }
                    self.progress.last_file = Some(path);
                }
                Report::Failed(message) => {
                    self.progress.active = false;
                    errors.push(message);
                }
            }
        }
        errors
    }

    /// What to record and where, record/stop and snapshot, and the progress.
    pub(super) fn ui(&self, ui: &mut Ui, settings: &mut Settings, commands: &mut Vec<Command>) {
        let recording = self.progress.active;
        ui.add_enabled_ui(!recording, |ui| {
            ui.horizontal(|ui| {
                for kind in RecordKind::ALL {
                    let name = match kind {
                        RecordKind::Masks => "Masks",
                        RecordKind::CutOuts => "Cut-outs",
                        RecordKind::Composites => "Composites",
                    };
                    ui.radio_value(&mut settings.record_kind, kind, name);
                }
            });
        });
        ui.horizontal_wrapped(|ui| {
            let folder = settings
                .record_folder
                .as_ref()
                .map_or("no folder chosen".to_string(), |p| p.display().to_string());
            ui.label(RichText::new(folder).small());
            if ui
                .add_enabled(!recording, egui::Button::new("Folder…"))
                .clicked()
            {
                let start = settings.record_folder.clone();
                commands.push(Command::Pick(Pick::RecordFolder, start));
            }
        });
        ui.horizontal(|ui| {
            let label = if recording {
                "Stop recording"
            } else {
                "Record"
            };
            let tip = "Save every frame as a PNG in the folder";
            if shortcut_button(ui, label, tip, Action::Record) {
                commands.push(Command::ToggleRecording);
            }
            let tip = "Save this frame's view, mask and cut-out";
            if shortcut_button(ui, "Snapshot", tip, Action::Snapshot) {
                commands.push(Command::Snapshot);
            }
        });
        self.progress_ui(ui);
    }

    /// Frames written (and skipped) of the current or last recording.
    fn progress_ui(&self, ui: &mut Ui) {
        let p = &self.progress;
        if p.queued + p.written + p.skipped > 0 {
            let mut line = format!("{} of {} frames written", p.written, p.queued);
            if p.skipped > 0 {
                line += &format!(", {} skipped (disk too slow)", p.skipped);
            }
            ui.label(line);
            if p.queued > 0 {
                ui.add(
                    egui::ProgressBar::new(p.written as f32 / p.queued as f32).desired_height(6.0),
                );
            }
        }
    }
}

/// Writes what it is handed until the recorder is dropped. After a failure (a full
/// disk) the rest of that recording is dropped: its sequence ends at the last whole
/// file, with no gap filled later.
fn writer(jobs: Receiver<Job>, reports: Sender<Report>) {
    let mut failed_take = None;
    for job in jobs {
        let results = match job {
            Job::Sequence { take, .. } if failed_take == Some(take) => continue,
            Job::Sequence {
                take,
                folder,
                kind,
                number,
                shot,
                look,
            } => {
                let path = folder.join(format!("{}-{number:06}.png", kind.label()));
                let result = write_kind(&path, kind, &shot, &look).map(|()| path);
                if result.is_err() {
                    failed_take = Some(take);
                }
                vec![result]
            }
            Job::Snapshot { folder, shot, look } => write_snapshot(&folder, &shot, &look),
        };
        for result in results {
            let report = match result {
                Ok(path) => Report::Written(path),
                Err(message) => Report::Failed(message),
            };
            if reports.send(report).is_err() {
                return;
            }
        }
    }
}

fn write_kind(path: &Path, kind: RecordKind, shot: &Shot, look: &Look) -> Result<(), String> {
    let image = match (kind, shot.mask.as_deref()) {
        (RecordKind::Masks, Some(mask)) => {
            let grey = GrayImage::from_raw(mask.width, mask.height, mask.data.clone())
                .ok_or("mask buffer does not match its size")?;
            DynamicImage::ImageLuma8(grey)
        }
        (RecordKind::CutOuts, Some(mask)) => {
            DynamicImage::ImageRgba8(compose::cut_out_alpha(&shot.captured.frame, mask))
        }
        (RecordKind::Masks | RecordKind::CutOuts, None) => return Err("no mask to record".into()),
        (RecordKind::Composites, mask) => DynamicImage::ImageRgba8(compose::compose(
            &shot.captured.frame,
            mask,
            shot.activity.as_deref(),
            look,
        )),
    };
    write_png(path, &image)
}

fn write_snapshot(folder: &Path, shot: &Shot, look: &Look) -> Vec<Result<PathBuf, String>> {
    if let Err(err) = std::fs::create_dir_all(folder) {
        return vec![Err(format!("cannot create {}: {err}", folder.display()))];
    }
    let stem = (1..)
        .map(|n| format!("snapshot-{n:04}"))
        .find(|s| !folder.join(format!("{s}-composite.png")).exists())
        .expect("some snapshot number is free");
    let mut kinds = vec![RecordKind::Composites];
    if shot.mask.is_some() {
        kinds.extend([RecordKind::Masks, RecordKind::CutOuts]);
    }
    kinds
        .into_iter()
        .map(|kind| {
            let path = folder.join(format!("{stem}-{}.png", kind.label()));
            write_kind(&path, kind, shot, look).map(|()| path)
        })
        .collect()
}

/// Writes a PNG beside its target and renames it into place, so a failed write (a
/// full disk) leaves no broken file behind. The PNG is encoded in memory and written
/// with one checked call: a buffered file writer would lose the error of its last
/// flush, which is where a full disk shows with small files.
pub fn write_png(path: &Path, image: &DynamicImage) -> Result<(), String> {
    let fail = |err: &dyn std::fmt::Display| format!("cannot write {}: {err}", path.display());
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| fail(&e))?;
    }
    let mut png = Vec::new();
    image
        .write_to(&mut std::io::Cursor::new(&mut png), ImageFormat::Png)
        .map_err(|e| fail(&e))?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp"));
    let result = std::fs::write(&tmp, &png)
        .and_then(|()| std::fs::rename(&tmp, path))
        .map_err(|e| fail(&e));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// A 4×2 grey frame `index` (at `index` ms) and its mask, for the output parts' tests.
#[cfg(test)]
pub(super) fn test_shot(grey: u8, index: u64, mask: Option<Mask>) -> Shot {
    let frame = crate::capture::Frame {
        width: 4,
        height: 2,
        rgb: vec![grey; 24],
        timestamp: std::time::Duration::from_millis(index),
        index,
    };
    Shot {
        captured: Arc::new(CapturedFrame {
            frame,
            decode_ms: 0.0,
            name: None,
            truth: None,
        }),
        mask: mask.map(Arc::new),
        activity: None,
        on_device: None,
    }
}

/// A look of `mode` over a blurred backdrop, for the output parts' tests.
#[cfg(test)]
pub(super) fn test_look(mode: super::settings::ViewMode) -> Look {
    Look {
        mode,
        tint: [0, 255, 0],
        backdrop: crate::composite::Backdrop::Blur,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::settings::ViewMode;
    use std::time::{Duration, Instant};

    fn shot() -> Shot {
        let mask = Mask::from_fn(4, 2, |i| i % 2 == 0);
        test_shot(50, 0, Some(mask))
    }

    fn look() -> Look {
        test_look(ViewMode::CutOut)
    }

    /// Polls until `n` files were reported or a few seconds passed.
    fn wait_written(rec: &mut Recorder, n: u64) -> Vec<String> {
        let start = Instant::now();
        let mut errors = Vec::new();
        while rec.progress().written < n
            && errors.is_empty()
            && start.elapsed() < Duration::from_secs(10)
        {
            errors.extend(rec.poll());
            std::thread::sleep(Duration::from_millis(5));
        }
        errors
    }

    #[test]
    fn records_a_mask_sequence() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("seq");
        let mut rec = Recorder::new();
        rec.offer(&shot(), &look());
        assert_eq!(rec.progress().queued, 0, "not recording yet");
        rec.start(folder.clone(), RecordKind::Masks);
        rec.offer(&shot(), &look());
        rec.offer(&shot(), &look());
        assert!(wait_written(&mut rec, 2).is_empty());
        let mask = Mask::read_png(&folder.join("mask-000001.png")).unwrap();
        assert_eq!(mask, *shot().mask.unwrap());
        let names: Vec<_> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names.len(), 2, "no temporary files left: {names:?}");
    }

    #[test]
    fn snapshot_writes_composite_mask_and_cut_out_under_fresh_names() {
        let dir = tempfile::tempdir().unwrap();
        let mut rec = Recorder::new();
        assert!(rec.snapshot(dir.path().to_path_buf(), &shot(), &look()));
        let start = Instant::now();
        while !dir.path().join("snapshot-0001-cutout.png").exists()
            && start.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(rec.snapshot(dir.path().to_path_buf(), &shot(), &look()));
        while !dir.path().join("snapshot-0002-cutout.png").exists()
            && start.elapsed() < Duration::from_secs(10)
        {
            std::thread::sleep(Duration::from_millis(5));
        }
        let cut = image::open(dir.path().join("snapshot-0002-cutout.png"))
            .unwrap()
            .into_rgba8();
        let shot = shot();
        let alpha = crate::composite::soft_alpha(&shot.captured.frame, shot.mask.as_ref().unwrap());
        let written: Vec<u8> = cut.pixels().map(|p| p.0[3]).collect();
        assert_eq!(
            written, alpha,
            "the cut-out's alpha is the mask's soft alpha"
        );
        assert!(dir.path().join("snapshot-0001-composite.png").exists());
        assert!(dir.path().join("snapshot-0001-mask.png").exists());
    }

    #[test]
    fn a_write_error_stops_the_recording_with_a_message() {
        let dir = tempfile::tempdir().unwrap();
        // A file where the folder should be: every write fails.
        let blocker = dir.path().join("not-a-folder");
        std::fs::write(&blocker, b"x").unwrap();
        let mut rec = Recorder::new();
        rec.start(blocker, RecordKind::Composites);
        rec.offer(&shot(), &look());
        let errors = wait_written(&mut rec, 1);
        assert_eq!(errors.len(), 1, "{errors:?}");
        assert!(errors[0].contains("cannot write"), "{}", errors[0]);
        assert!(!rec.progress().active);
    }
}

//! One-off background jobs of the window — native file dialogs, reading and writing
//! seeds and pictures, probing the CUDA device — each on its own thread, so the UI
//! thread never waits on a dialog, a disk or a driver.

use crate::capture::CameraDescription;
use crate::capture::files::read_seeds;
use crate::energy::Seeds;
use crate::maxflow::{EngineChoice, create_engine};
use crossbeam_channel::{Receiver, Sender, unbounded};
use image::{DynamicImage, GrayImage, RgbImage};
use std::path::PathBuf;
use std::sync::Arc;
use std::thread;

/// Why the user is picking a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// An image or video file to use as the source.
    SourceFile,
    /// A folder of images to use as the source.
    SourceFolder,
    /// A seeds PNG to load.
    LoadSeeds,
    /// Where to save the seeds PNG.
    SaveSeeds,
    /// A background picture.
    BackgroundImage,
    /// The folder of recordings and snapshots.
    RecordFolder,
}

/// A finished job.
#[derive(Debug)]
pub enum Done {
    /// A dialog closed; `None` when cancelled or when no dialog could be shown.
    Picked(Pick, Option<PathBuf>),
    /// Seeds read from a file.
    SeedsLoaded(Result<Seeds, String>),
    /// A background picture read from a file.
    BackdropLoaded(PathBuf, Result<Arc<RgbImage>, String>),
    /// Seeds written to a file.
    SeedsSaved(Result<PathBuf, String>),
    /// The CUDA device's description, or why there is none.
    CudaProbed(Result<String, String>),
    /// The cameras of the system, or why they could not be listed.
    Cameras(Result<Vec<CameraDescription>, String>),
}

/// Runs jobs on threads and collects what they finish.
pub struct Tasks {
    tx: Sender<Done>,
    rx: Receiver<Done>,
    pending: usize,
}

impl Default for Tasks {
    fn default() -> Self {
        let (tx, rx) = unbounded();
        Self { tx, rx, pending: 0 }
    }
}

impl Tasks {
    /// Runs `job` on a new thread.
    pub fn spawn(&mut self, job: impl FnOnce() -> Done + Send + 'static) {
        let tx = self.tx.clone();
        let started = thread::Builder::new()
            .name("livecut-task".into())
            .spawn(move || {
                let _ = tx.send(job());
            });
        if started.is_ok() {
            self.pending += 1;
        }
    }

    /// Jobs still running.
    pub fn pending(&self) -> usize {
        self.pending
    }

    /// Finished jobs since the last call.
    pub fn poll(&mut self) -> Vec<Done> {
        let done: Vec<Done> = self.rx.try_iter().collect();
        self.pending = self.pending.saturating_sub(done.len());
        done
    }

    /// Opens the native dialog for `pick`.
    pub fn pick(&mut self, pick: Pick, start_dir: Option<PathBuf>) {
        self.spawn(move || {
            let mut dialog = rfd::FileDialog::new();
            if let Some(dir) = start_dir {
                dialog = dialog.set_directory(dir);
            }
            let path = match pick {
                Pick::SourceFile => dialog
                    .set_title("Open an image or video")
                    .add_filter(
                        "images and videos",
                        &[
                            "png", "jpg", "jpeg", "bmp", "mp4", "mkv", "avi", "mov", "webm",
                        ],
                    )
                    .pick_file(),
                Pick::SourceFolder => dialog.set_title("Open a folder of images").pick_folder(),
                Pick::LoadSeeds => dialog
                    .set_title("Load seeds")
                    .add_filter("PNG", &["png"])
                    .pick_file(),
                Pick::SaveSeeds => dialog
                    .set_title("Save seeds")
                    .set_file_name("seeds.png")
                    .add_filter("PNG", &["png"])
                    .save_file(),
                Pick::BackgroundImage => dialog
                    .set_title("Background picture")
                    .add_filter("images", &["png", "jpg", "jpeg", "bmp"])
                    .pick_file(),
                Pick::RecordFolder => dialog.set_title("Folder for recordings").pick_folder(),
            };
            Done::Picked(pick, path)
        });
    }

    /// Reads a seeds PNG.
    pub fn load_seeds(&mut self, path: PathBuf) {
        self.spawn(move || {
            Done::SeedsLoaded(read_seeds(&path).map_err(|e| format!("{}: {e}", path.display())))
        });
    }

    /// Writes seeds as a grey PNG (0 background, 128 unknown, 255 foreground).
    pub fn save_seeds(&mut self, path: PathBuf, seeds: Seeds) {
        self.spawn(move || {
            let result = GrayImage::from_raw(seeds.width, seeds.height, seeds.to_grey())
                .ok_or_else(|| "seeds buffer does not match their size".to_string())
                .and_then(|img| super::recorder::write_png(&path, &DynamicImage::ImageLuma8(img)))
                .map(|()| path);
            Done::SeedsSaved(result)
        });
    }

    /// Reads a background picture.
    pub fn load_backdrop(&mut self, path: PathBuf) {
        self.spawn(move || {
            let result = crate::capture::files::read_image(&path)
                .map(|img| Arc::new(img.into_rgb8()))
                .map_err(|e| format!("{}: {e}", path.display()));
            Done::BackdropLoaded(path, result)
        });
    }

    /// Asks for the CUDA engine to learn whether a device is there: the answer names
    /// it, or says why not.
    pub fn probe_cuda(&mut self) {
        self.spawn(|| {
            let result = std::panic::catch_unwind(|| {
                create_engine(EngineChoice::Cuda)
                    .map(|(engine, _)| engine.description())
                    .map_err(|e| e.to_string())
            })
            .unwrap_or_else(|_| Err("the CUDA probe panicked".into()));
            Done::CudaProbed(result)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::energy::SeedLabel;
    use std::time::{Duration, Instant};

    fn wait(tasks: &mut Tasks) -> Done {
        let start = Instant::now();
        loop {
            if let Some(done) = tasks.poll().pop() {
                return done;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "task did not finish"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    #[test]
    fn seeds_round_trip_through_png() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.png");
        let mut seeds = Seeds::unknown(5, 3);
        seeds.labels[0] = SeedLabel::Foreground;
        seeds.labels[14] = SeedLabel::Background;
        let mut tasks = Tasks::default();
        tasks.save_seeds(path.clone(), seeds.clone());
        assert_eq!(tasks.pending(), 1);
        assert!(matches!(wait(&mut tasks), Done::SeedsSaved(Ok(p)) if p == path));
        assert_eq!(tasks.pending(), 0);
        tasks.load_seeds(path);
        match wait(&mut tasks) {
            Done::SeedsLoaded(Ok(loaded)) => assert_eq!(loaded, seeds),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unreadable_files_give_messages() {
        let mut tasks = Tasks::default();
        tasks.load_backdrop(PathBuf::from("/nonexistent/pic.png"));
        match wait(&mut tasks) {
            Done::BackdropLoaded(_, Err(msg)) => {
                assert!(msg.contains("/nonexistent/pic.png"), "{msg}")
            }
            other => panic!("{other:?}"),
        }
    }
}

//! What the window does with the worker's events and the background jobs' results.

use super::engine::DeviceStatus;
use super::lag::Behind;
use super::recorder::Shot;
use super::settings::BackgroundKind;
use super::source::{CameraList, Lost, SourceState, demo_spec};
use super::tasks::{Done, Pick};
use super::window::LivecutApp;
use crate::capture::{CameraDescription, SourceSpec};
use crate::energy::Seeds;
use crate::maxflow::EngineKind;
use crate::pipeline::{Event, FrameResult, SourceInfo};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

impl LivecutApp {
    /// Takes in one event of the worker. Events of a source the user (or a fallback)
    /// has already replaced are dropped: the worker opens the replacement next, and
    /// its own events follow.
    pub(super) fn on_event(&mut self, event: Event, now: Instant) {
        match event {
            Event::SourceOpened(info) if self.backend.is_current(info.id) => self.on_source(info),
            Event::SourceEnded(id) if self.backend.is_current(id) => {
                self.source.state = SourceState::Ended;
                // Keep the last frame segmentable: seeds edits redo a paused frame.
                self.set_paused(true);
            }
            Event::SourceFailed { source, message } if self.backend.is_current(source) => {
                self.on_source_failed(message)
            }
            Event::SourceOpened(_) | Event::SourceEnded(_) | Event::SourceFailed { .. } => {}
            Event::Frame(result) => self.on_frame(*result, now),
            Event::EngineChanged {
                engine,
                note,
                stochastic,
                energy,
            } => {
                self.engine.in_use = engine;
                self.engine.has_stochastic = stochastic;
                self.engine.energy = energy;
                self.stats.timing.clear_samples();
                if let Some(note) = note {
                    self.notices.push(note, false);
                }
            }
            Event::EnergyChanged(energy) => self.engine.energy = energy,
            Event::CommandFailed(message) => self.notices.push(message, true),
            Event::GpuFailed(why) => {
                self.engine.in_use = EngineKind::Cpu;
                self.engine.energy = None;
                self.engine.has_stochastic = false;
                self.notices.push(why, true);
            }
        }
    }

    fn on_source(&mut self, info: SourceInfo) {
        self.stats.reset_lag();
        self.engine.behind = None;
        // A source the user chose ends the offer to reopen a lost one; the fallback
        // to the demo scene does not.
        if !self.source.falling_back {
            self.source.lost = None;
        }
        if self.seeds.on_source(&info) {
            self.view.stale = true;
        }
        self.source.state = SourceState::Running;
        self.source.falling_back = false;
        self.stats.timing.clear_samples();
        self.source.info = Some(info);
    }

    /// A failed source is replaced by the demo scene, unless that failed too. A
    /// running source that can be opened again (a camera) is offered for reopening.
    fn on_source_failed(&mut self, message: String) {
        let was_running = self.source.state == SourceState::Running;
        self.source.state = SourceState::Failed(message.clone());
        if let (true, Some(info)) = (was_running, &self.source.info)
            && let Some(spec) = info.reopen.clone()
        {
            self.source.lost = Some(Lost::new(spec, &info.description));
        }
        if self.source.falling_back {
            self.notices
                .push(format!("The demo scene failed too: {message}"), true);
        } else {
            self.notices
                .push(format!("{message} — showing the demo scene instead"), true);
            self.source.falling_back = true;
            self.backend.set_source(demo_spec());
        }
    }

    fn on_frame(&mut self, result: FrameResult, now: Instant) {
        self.stats.on_frame(&result, now);
        let live = self.source.info.as_ref().is_some_and(|i| i.live);
        if live
            && self.source.is_live()
            && let Some(behind) = self.stats.keeping_up(&result)
        {
            self.on_behind(behind);
        }
        self.background.on_frame(&result);
        if let Some(error) = &result.error {
            self.on_segment_error(error);
        }
        let (mask, activity, on_device) = match result.output {
            Some(mut output) => {
                let activity = output.stats.activity.take().map(Arc::new);
                let on_device = output.frame_on_device.take();
                (Some(Arc::new(output.mask)), activity, on_device)
            }
            None => (None, None, None),
        };
        let shot = Shot {
            captured: result.captured,
            mask,
            activity,
            on_device,
        };
        let look = self.view.look(&self.settings);
        self.recorder.offer(&shot, &look);
        self.vcam.offer(&shot, &look);
        self.view.latest = Some(shot);
        self.view.stale = true;
    }

    /// The machine fell behind the live source: say so, and offer a lower working
    /// resolution in the engine panel.
    fn on_behind(&mut self, behind: Behind) {
        let offer = if self.settings.working_scale < crate::pipeline::MAX_WORKING_SCALE {
            "; cut at a lower resolution (Segmentation panel) to keep up"
        } else {
            ""
        };
        self.notices.push(
            format!(
                "This machine is not keeping up: frames take {:.0} ms but the source sends one every {:.0} ms, so frames are dropped{offer}",
                behind.work_ms, behind.interval_ms
            ),
            true,
        );
        self.engine.behind = Some(behind);
    }

    /// A frame could not be segmented (a GPU failure never ends here: the segmenter
    /// carries on with the CPU and reports it as an engine change).
    fn on_segment_error(&mut self, error: &str) {
        self.notices
            .push(format!("Segmentation failed: {error}"), true);
    }

    /// Takes in one finished background job.
    pub(super) fn on_done(&mut self, done: Done) {
        match done {
            Done::Picked(_, None) => {}
            Done::Picked(pick, Some(path)) => self.on_picked(pick, path),
            Done::SeedsLoaded(Ok(seeds)) => self.on_seeds_loaded(seeds),
            Done::SeedsLoaded(Err(e)) => self.notices.push(format!("Cannot load seeds: {e}"), true),
            Done::SeedsSaved(Ok(path)) => self
                .notices
                .push(format!("Seeds saved to {}", path.display()), false),
            Done::SeedsSaved(Err(e)) => self.notices.push(format!("Cannot save seeds: {e}"), true),
            Done::BackdropLoaded(path, Ok(img)) => {
                self.view.backdrop = Some(img);
                self.settings.background_image = Some(path);
                self.view.stale = true;
            }
            Done::BackdropLoaded(_, Err(e)) => {
                self.notices
                    .push(format!("Cannot load the background picture: {e}"), true);
                if self.view.backdrop.is_none() {
                    self.settings.background = BackgroundKind::Blur;
                    self.view.stale = true;
                }
            }
            Done::CudaProbed(Ok(name)) => self.engine.cuda = DeviceStatus::Ready(name),
            Done::CudaProbed(Err(reason)) => self.engine.cuda = DeviceStatus::Missing(reason),
            Done::Cameras(Ok(list)) => {
                self.on_cameras_listed(&list);
                self.source.cameras = CameraList::Ready(list);
            }
            Done::Cameras(Err(reason)) => {
                self.on_cameras_listed(&[]);
                self.source.cameras = CameraList::Failed(reason);
            }
        }
    }

    /// A lost camera listed again is offered for reopening.
    fn on_cameras_listed(&mut self, cameras: &[CameraDescription]) {
        let Some(lost) = &mut self.source.lost else {
            return;
        };
        if let Some(message) = lost.listed(cameras) {
            self.notices.push(message, false);
        }
    }

    /// Loaded seeds replace the scribbles when they fit the frames.
    fn on_seeds_loaded(&mut self, seeds: Seeds) {
        let Some(src) = &self.source.info else {
            self.notices
                .push("No source yet to load seeds for".into(), true);
            return;
        };
        if (seeds.width, seeds.height) != (src.width, src.height) {
            let message = format!(
                "The seeds are {}x{} but the frames are {}x{}",
                seeds.width, seeds.height, src.width, src.height
            );
            self.notices.push(message, true);
            return;
        }
        self.seeds.reset(seeds);
    }

    fn on_picked(&mut self, pick: Pick, path: PathBuf) {
        match pick {
            Pick::SourceFile | Pick::SourceFolder => {
                match SourceSpec::parse(&path.to_string_lossy(), Default::default()) {
                    Ok(spec) => self.switch_source(spec),
                    Err(e) => self.notices.push(e.to_string(), true),
                }
            }
            Pick::LoadSeeds => self.tasks.load_seeds(path),
            Pick::SaveSeeds => {
                if let Some(s) = &self.seeds.scribbles {
                    self.tasks.save_seeds(path, s.rasterize());
                }
            }
            Pick::BackgroundImage => {
                self.settings.background = BackgroundKind::Image;
                self.tasks.load_backdrop(path);
            }
            Pick::RecordFolder => self.settings.record_folder = Some(path),
        }
    }
}

//! The source part of the window: what is being segmented, how it is doing, whether
//! it is paused, the cameras to switch to, and a lost camera to reopen, with the
//! source controls.

use super::command::Command;
use super::tasks::Pick;
use crate::capture::{CameraDescription, DemoConfig, DemoMotion, SourceSpec, StreamSettings};
use crate::pipeline::SourceInfo;
use egui::{Color32, RichText, Ui};
use std::time::Instant;

/// The cameras found on the system.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CameraList {
    /// Listing is still running.
    Listing,
    /// The cameras (possibly none).
    Ready(Vec<CameraDescription>),
    /// Why they could not be listed.
    Failed(String),
}

/// How the current source is doing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SourceState {
    /// Waiting for the worker to open it.
    Opening,
    /// Frames are coming.
    Running,
    /// The stream is over (files); the last frame stays for editing seeds.
    Ended,
    /// It failed; the message says why.
    Failed(String),
}

/// A source that failed and can be opened again (an unplugged camera): the window
/// offers to reopen it, and says so when the cameras list it again.
#[derive(Clone, Debug)]
pub(super) struct Lost {
    /// What to open.
    pub(super) spec: SourceSpec,
    /// What to call it, e.g. `camera 0`.
    pub(super) name: String,
    /// The cameras list it again.
    pub(super) back: bool,
    /// When the cameras were last listed to look for it.
    pub(super) looked: Option<Instant>,
    /// A listing is running.
    pub(super) listing: bool,
}

impl Lost {
    /// The source `spec` described as `description` failed.
    pub(super) fn new(spec: SourceSpec, description: &str) -> Self {
        let name = match &spec {
            SourceSpec::Camera { index: Some(i), .. } => format!("camera {i}"),
            _ => description
                .split(':')
                .next()
                .unwrap_or(description)
                .to_string(),
        };
        Self {
            spec,
            name,
            back: false,
            looked: None,
            listing: false,
        }
    }

    /// Takes in a listing of the cameras; the message for the user when it shows the
    /// source back.
    pub(super) fn listed(&mut self, cameras: &[CameraDescription]) -> Option<String> {
        self.listing = false;
        if self.back || !self.is_listed(cameras) {
            return None;
        }
        self.back = true;
        Some(format!(
            "{} is back: \"Reopen {}\" in the source panel opens it again",
            self.name, self.name
        ))
    }

    /// Whether `cameras` show it back (sources other than cameras always are).
    fn is_listed(&self, cameras: &[CameraDescription]) -> bool {
        match &self.spec {
            SourceSpec::Camera { index: Some(i), .. } => cameras.iter().any(|c| c.index == *i),
            SourceSpec::Camera { index: None, .. } => !cameras.is_empty(),
            _ => true,
        }
    }
}

/// The running source and the choice of others.
pub(super) struct Source {
    /// What the worker opened (`None` until it has).
    pub(super) info: Option<SourceInfo>,
    pub(super) state: SourceState,
    /// Frames are not taken.
    pub(super) paused: bool,
    /// A failed source was replaced by the demo scene, which is opening.
    pub(super) falling_back: bool,
    pub(super) cameras: CameraList,
    /// The source that failed, to offer reopening it.
    pub(super) lost: Option<Lost>,
}

impl Default for Source {
    fn default() -> Self {
        Self {
            info: None,
            state: SourceState::Opening,
            paused: false,
            falling_back: false,
            cameras: CameraList::Listing,
            lost: None,
        }
    }
}

impl Source {
    /// The running source's description.
    pub(super) fn description(&self) -> Option<&str> {
        self.info.as_ref().map(|s| s.description.as_str())
    }

    /// Whether new frames are coming and shown.
    pub(super) fn is_live(&self) -> bool {
        !self.paused && self.state == SourceState::Running
    }

    /// A word on the stream for the top bar.
    pub(super) fn status(&self) -> &'static str {
        match &self.state {
            SourceState::Opening => "opening…",
            SourceState::Running if self.paused => "paused",
            SourceState::Running => "running",
            SourceState::Ended => "end of stream",
            SourceState::Failed(_) => "source failed",
        }
    }

    /// The source's description and failure, and the buttons of the other sources.
    pub(super) fn ui(&self, ui: &mut Ui, commands: &mut Vec<Command>) {
        if let Some(desc) = self.description() {
            ui.label(RichText::new(desc).small());
        }
        if let SourceState::Failed(message) = &self.state {
            ui.colored_label(Color32::from_rgb(255, 140, 100), message);
        }
        if let Some(lost) = &self.lost {
            ui.horizontal_wrapped(|ui| {
                let state = if lost.back { "is back" } else { "was lost" };
                ui.label(format!("{} {state}", lost.name));
                if ui
                    .button(format!("Reopen {}", lost.name))
                    .on_hover_text("Open it again, as it was before it was lost")
                    .clicked()
                {
                    commands.push(Command::SwitchSource(lost.spec.clone()));
                }
            });
        }
        ui.horizontal_wrapped(|ui| {
            if ui
                .button("Demo scene")
                .on_hover_text("The built-in synthetic scene")
                .clicked()
            {
                commands.push(Command::SwitchSource(demo_spec()));
            }
            if ui
                .button("Panning demo")
                .on_hover_text(
                    "The demo scene filmed by a panning camera: the whole background moves",
                )
                .clicked()
            {
                commands.push(Command::SwitchSource(demo_spec_with(DemoMotion::Pan)));
            }
            if ui
                .button("Open file…")
                .on_hover_text("An image or a video")
                .clicked()
            {
                commands.push(Command::Pick(Pick::SourceFile, None));
            }
            if ui
                .button("Open folder…")
                .on_hover_text("A folder of images, in name order")
                .clicked()
            {
                commands.push(Command::Pick(Pick::SourceFolder, None));
            }
        });
        self.cameras_ui(ui, commands);
    }

    /// Each camera with its modes, one button per mode.
    fn cameras_ui(&self, ui: &mut Ui, commands: &mut Vec<Command>) {
        let list = match &self.cameras {
            CameraList::Listing => {
                ui.label("Looking for cameras…");
                return;
            }
            CameraList::Failed(reason) => {
                ui.label(format!("Cameras unavailable: {reason}"));
                return;
            }
            CameraList::Ready(list) if list.is_empty() => {
                ui.label("No camera found");
                return;
            }
            CameraList::Ready(list) => list,
        };
        for camera in list {
            ui.collapsing(format!("Camera {}: {}", camera.index, camera.name), |ui| {
                if let Some(note) = &camera.note {
                    ui.label(RichText::new(note).weak());
                }
                for mode in &camera.modes {
                    let text = format!(
                        "{}×{} @ {} fps {}",
                        mode.width, mode.height, mode.fps, mode.format
                    );
                    if ui.button(text).clicked() {
                        commands.push(Command::SwitchSource(SourceSpec::Camera {
                            index: Some(camera.index),
                            settings: StreamSettings {
                                width: mode.width,
                                height: mode.height,
                                fps: mode.fps,
                            },
                        }));
                    }
                }
            });
        }
    }
}

/// The demo scene in real time, as the app shows it (still camera).
pub fn demo_spec() -> SourceSpec {
    demo_spec_with(DemoMotion::Still)
}

/// The demo scene in real time filmed by a camera that moves as `motion` says.
pub fn demo_spec_with(motion: DemoMotion) -> SourceSpec {
    SourceSpec::Demo(DemoConfig {
        realtime: true,
        motion,
        ..DemoConfig::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn camera(index: u32) -> CameraDescription {
        CameraDescription {
            index,
            name: "test".into(),
            description: String::new(),
            modes: Vec::new(),
            note: None,
        }
    }

    #[test]
    fn a_lost_camera_is_back_once_listed_again() {
        let spec = SourceSpec::Camera {
            index: Some(2),
            settings: StreamSettings::default(),
        };
        let mut lost = Lost::new(spec, "camera 2: HD Webcam (640x480 MJPEG @ 30 fps)");
        assert_eq!(lost.name, "camera 2");
        lost.listing = true;
        assert_eq!(lost.listed(&[]), None);
        assert!(!lost.listing, "a listing ended");
        assert_eq!(lost.listed(&[camera(0), camera(1)]), None);
        assert!(!lost.back);
        let message = lost.listed(&[camera(0), camera(2)]).unwrap();
        assert!(message.contains("camera 2 is back"), "{message}");
        assert!(message.contains("Reopen camera 2"), "{message}");
        assert!(lost.back);
        assert_eq!(lost.listed(&[camera(2)]), None, "said once");
    }

    #[test]
    fn any_camera_brings_back_the_first_camera() {
        let spec = SourceSpec::Camera {
            index: None,
            settings: StreamSettings::default(),
        };
        let mut lost = Lost::new(spec, "camera 0: HD Webcam");
        assert_eq!(lost.name, "camera 0");
        assert!(lost.listed(&[camera(3)]).is_some());
    }
}

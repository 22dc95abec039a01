//! The source part of the window: what is being segmented, how it is doing, whether
//! it is paused, and the cameras to switch to, with the source controls.

use super::command::Command;
use super::tasks::Pick;
use crate::capture::{CameraDescription, DemoConfig, DemoMotion, SourceSpec, StreamSettings};
use crate::pipeline::SourceInfo;
use egui::{Color32, RichText, Ui};

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
}

impl Default for Source {
    fn default() -> Self {
        Self {
            info: None,
            state: SourceState::Opening,
            paused: false,
            falling_back: false,
            cameras: CameraList::Listing,
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

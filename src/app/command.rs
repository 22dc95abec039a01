//! What the user asks for — buttons, keys, strokes on the picture — as commands. The
//! parts of the window collect them while they draw, and [`LivecutApp::apply`]
//! carries every one out in one place: the parts only read each other's state.

use super::scribbles::Tool;
use super::seeds::BRUSH_RANGE;
use super::settings::ViewMode;
use super::shortcuts::Action;
use super::source::SourceState;
use super::tasks::Pick;
use super::window::LivecutApp;
use crate::capture::SourceSpec;
use crate::maxflow::EngineChoice;
use std::path::PathBuf;

/// One thing the user asked for.
#[derive(Debug)]
pub(super) enum Command {
    /// Pause or resume taking frames.
    TogglePause,
    /// Segment one more frame, then stay paused.
    Step,
    /// What the left button paints.
    SetTool(Tool),
    /// The pointer is down on the picture at `at` (frame pixels): start or extend a
    /// stroke of `radius`; the secondary button paints background.
    Paint {
        /// Where, in frame pixels.
        at: [f32; 2],
        /// The secondary (right) button is down.
        secondary: bool,
        /// Brush radius in frame pixels.
        radius: f32,
    },
    /// The pointer is up: end the stroke.
    EndStroke,
    /// Take back the last stroke.
    Undo,
    /// Remove every seed.
    ClearSeeds,
    /// Back to the source's default seeds (or the generic defaults).
    ResetSeeds,
    /// Scale the brush radius by this factor (within [`BRUSH_RANGE`]).
    ScaleBrush(f32),
    /// Turn dynamic cuts on or off.
    ToggleDynamic,
    /// Turn stochastic cuts on or off (engines that have them).
    ToggleStochastic,
    /// The segmentation settings changed: send the parameters to the worker.
    ParamsChanged,
    /// Cut with this engine.
    SwitchEngine(EngineChoice),
    /// Segment this source instead.
    SwitchSource(SourceSpec),
    /// Show this view.
    SetView(ViewMode),
    /// The look changed: compose the picture again.
    Recompose,
    /// Ask for a path with a native dialog (starting in the folder, if given).
    Pick(Pick, Option<PathBuf>),
    /// Start recording (asking for a folder first if none is chosen), or stop.
    ToggleRecording,
    /// Save the current frame's composite, mask and cut-out.
    Snapshot,
    /// Start or stop sending composites to the virtual camera.
    ToggleVirtualCamera,
    /// Learn the empty scene from the next frames (again), then cut with no seeds.
    LearnBackground,
    /// Stop using the learned background: back to seeded cuts.
    StopBackground,
    /// Remove the notice with this index.
    Dismiss(usize),
}

impl Command {
    /// The command of a keyboard shortcut's action.
    pub(super) fn of(action: Action) -> Option<Self> {
        Some(match action {
            Action::PauseResume => Command::TogglePause,
            Action::Step => Command::Step,
            Action::ToolForeground => Command::SetTool(Tool::Foreground),
            Action::ToolBackground => Command::SetTool(Tool::Background),
            Action::ToolErase => Command::SetTool(Tool::Erase),
            Action::Undo => Command::Undo,
            Action::Clear => Command::ClearSeeds,
            Action::BrushSmaller => Command::ScaleBrush(1.0 / 1.25),
            Action::BrushBigger => Command::ScaleBrush(1.25),
            Action::ToggleDynamic => Command::ToggleDynamic,
            Action::ToggleStochastic => Command::ToggleStochastic,
            Action::Record => Command::ToggleRecording,
            Action::Snapshot => Command::Snapshot,
            Action::View(i) => Command::SetView(*ViewMode::ALL.get(i)?),
        })
    }
}

impl LivecutApp {
    /// Carries out one command.
    pub(super) fn apply(&mut self, command: Command) {
        match command {
            Command::TogglePause => self.set_paused(!self.source.paused),
            Command::Step => {
                self.source.paused = true;
                self.backend.step();
            }
            Command::SetTool(tool) => self.seeds.tool = tool,
            Command::Paint {
                at,
                secondary,
                radius,
            } => self.seeds.paint(at, secondary, radius),
            Command::EndStroke => self.seeds.end_stroke(),
            Command::Undo => self.seeds.undo(),
            Command::ClearSeeds => self.seeds.clear(),
            Command::ResetSeeds => self.reset_seeds(),
            Command::ScaleBrush(factor) => {
                let r = self.settings.brush_radius * factor;
                self.settings.brush_radius = r.clamp(*BRUSH_RANGE.start(), *BRUSH_RANGE.end());
            }
            Command::ToggleDynamic => {
                self.settings.dynamic = !self.settings.dynamic;
                self.params_changed();
            }
            Command::ToggleStochastic => {
                if self.engine.has_stochastic {
                    self.settings.stochastic = !self.settings.stochastic;
                    self.params_changed();
                }
            }
            Command::ParamsChanged => {
                self.params_changed();
            }
            Command::SwitchEngine(choice) => self.switch_engine(choice),
            Command::SwitchSource(spec) => self.switch_source(spec),
            Command::SetView(mode) => {
                if self.settings.view != mode {
                    self.settings.view = mode;
                    self.view.stale = true;
                }
            }
            Command::Recompose => self.view.stale = true,
            Command::Pick(pick, start) => self.tasks.pick(pick, start),
            Command::ToggleRecording => self.toggle_recording(),
            Command::Snapshot => self.snapshot(),
            Command::ToggleVirtualCamera => self.vcam.toggle(),
            Command::LearnBackground => self.learn_background(),
            Command::StopBackground => {
                self.background.stop();
                self.params_changed();
            }
            Command::Dismiss(index) => self.notices.dismiss(index),
        }
    }

    /// Asks the worker for another source; the view keeps the old frame until then.
    pub(super) fn switch_source(&mut self, spec: SourceSpec) {
        self.source.state = SourceState::Opening;
        self.source.falling_back = false;
        self.backend.set_source(spec);
        if self.source.paused {
            self.set_paused(false);
        }
    }

    /// Switches to the engine the user asked for (or the CPU after a failure).
    pub(super) fn switch_engine(&mut self, engine: EngineChoice) {
        self.settings.engine = engine;
        self.backend.set_engine(engine);
    }

    /// Stops or resumes taking frames.
    pub(super) fn set_paused(&mut self, paused: bool) {
        self.source.paused = paused;
        self.backend.set_paused(paused);
    }

    /// Sends the settings' parameters to the worker, with the background mode's;
    /// returns their number (see [`crate::pipeline::FrameResult::params`]).
    fn params_changed(&mut self) -> u64 {
        // whether the machine keeps up is judged afresh under the new parameters
        self.stats.reset_lag();
        self.engine.behind = None;
        self.backend.set_params(self.segment_params())
    }

    fn segment_params(&self) -> crate::pipeline::SegmentParams {
        crate::pipeline::SegmentParams {
            background_frames: self.background.frames,
            ..self.settings.segment_params()
        }
    }

    /// Starts learning the empty scene afresh: the scribbles are cleared (they would be
    /// hard constraints on every frame), and the worker forgets any model it has (the
    /// mode off, then on) before it learns from the next frames.
    fn learn_background(&mut self) {
        self.seeds.clear();
        if self.background.frames > 0 {
            self.background.stop();
            self.params_changed();
        }
        self.background.start();
        let sent = self.params_changed();
        self.background.count_from(sent);
        self.notices.push(
            format!(
                "Learning the empty scene from the next {} frames: keep out of view",
                self.background.frames
            ),
            false,
        );
    }

    /// Back to the source's default seeds (or the generic defaults).
    fn reset_seeds(&mut self) {
        if let Some(src) = &self.source.info {
            let base = src
                .seeds
                .clone()
                .unwrap_or_else(|| super::scribbles::default_seeds(src.width, src.height));
            self.seeds.reset(base);
        }
    }

    /// Starts recording into the chosen folder, or asks for one first.
    fn toggle_recording(&mut self) {
        if self.recorder.progress().active {
            self.recorder.stop();
            return;
        }
        match self.settings.record_folder.clone() {
            Some(folder) => self.recorder.start(folder, self.settings.record_kind),
            None => self.tasks.pick(Pick::RecordFolder, None),
        }
    }

    /// Saves the current frame's composite, mask and cut-out in the record folder.
    fn snapshot(&mut self) {
        let Some(folder) = self.settings.record_folder.clone() else {
            self.tasks.pick(Pick::RecordFolder, None);
            return;
        };
        let Some(shot) = self.view.latest.clone() else {
            return;
        };
        let look = self.view.look(&self.settings);
        if self.recorder.snapshot(folder.clone(), &shot, &look) {
            self.notices
                .push(format!("Snapshot saved in {}", folder.display()), false);
        } else {
            self.notices
                .push("The writer is busy; snapshot not taken".into(), true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::shortcuts::SHORTCUTS;

    #[test]
    fn every_shortcut_has_a_command() {
        for (shortcut, action) in SHORTCUTS {
            assert!(Command::of(action).is_some(), "{shortcut:?} does nothing");
        }
        assert!(Command::of(Action::View(ViewMode::ALL.len())).is_none());
    }
}

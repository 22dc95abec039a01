//! The webcam-mode part of the window: learn the empty scene from the next frames, then
//! cut out whatever steps in, with no seeds (scribbles on top still count, as hard
//! constraints). Shows the countdown while learning.

use super::command::Command;
use crate::pipeline::FrameResult;
use egui::{ProgressBar, RichText, Ui};

/// Frames the learned background is taken from: a second of a webcam's frames.
pub(super) const LEARN_FRAMES: u32 = 30;

/// Whether a learned background is in use, and how far learning has come.
#[derive(Default)]
pub(super) struct BackgroundMode {
    /// Frames the model learns from; 0 while the mode is off.
    pub(super) frames: u32,
    /// Frames learned so far.
    pub(super) learned: u32,
    /// Results of frames cut with parameters sent before these (see
    /// [`FrameResult::params`]) are on their way from before learning began: not counted.
    counted_from: u64,
}

impl BackgroundMode {
    /// Starts learning afresh from the next frames.
    pub(super) fn start(&mut self) {
        self.frames = LEARN_FRAMES;
        self.learned = 0;
    }

    /// Counts only the results of frames cut with parameters number `params` or later:
    /// the parameters that turned learning on.
    pub(super) fn count_from(&mut self, params: u64) {
        self.counted_from = params;
    }

    /// Back to seeded cuts.
    pub(super) fn stop(&mut self) {
        *self = Self::default();
    }

    /// Whether the model is still learning.
    pub(super) fn learning(&self) -> bool {
        self.frames > 0 && self.learned < self.frames
    }

    /// Counts a segmented frame: a learning frame, or the first cut after them.
    pub(super) fn on_frame(&mut self, result: &FrameResult) {
        let Some(output) = &result.output else {
            return;
        };
        if self.frames == 0 || result.reprocessed || result.params < self.counted_from {
            return;
        }
        self.learned = if output.learning {
            (self.learned + 1).min(self.frames - 1)
        } else {
            self.frames
        };
    }

    /// The section's controls: learn (again), stop, and the countdown.
    pub(super) fn ui(&self, ui: &mut Ui, commands: &mut Vec<Command>) {
        if self.learning() {
            let left = self.frames - self.learned;
            ui.add(
                ProgressBar::new(self.learned as f32 / self.frames as f32)
                    .text(format!("Learning the empty scene: {left} frames left")),
            );
            ui.label(
                RichText::new("Keep out of view until it is done.")
                    .small()
                    .weak(),
            );
        } else if self.frames > 0 {
            ui.label("Cutting out whatever is not the learned scene.");
            ui.label(
                RichText::new("Scribble to keep or exclude a region.")
                    .small()
                    .weak(),
            );
        }
        ui.horizontal_wrapped(|ui| {
            let label = if self.frames == 0 {
                "Learn background"
            } else {
                "Learn again"
            };
            if ui
                .button(label)
                .on_hover_text(format!(
                    "Learn the empty scene from the next {LEARN_FRAMES} frames, then cut out \
                     whatever steps in, with no seeds needed"
                ))
                .clicked()
            {
                commands.push(Command::LearnBackground);
            }
            if self.frames > 0
                && ui
                    .button("Stop")
                    .on_hover_text("Back to cuts from the scribbles' colour models")
                    .clicked()
            {
                commands.push(Command::StopBackground);
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::capture::{CapturedFrame, Frame};
    use crate::grid::Mask;
    use crate::maxflow::{EngineKind, SolveStats};
    use crate::pipeline::{FrameTiming, SegmentOutput};
    use std::sync::Arc;
    use std::time::Duration;

    fn result(learning: bool) -> FrameResult {
        FrameResult {
            captured: Arc::new(CapturedFrame {
                frame: Frame {
                    width: 2,
                    height: 1,
                    rgb: vec![0; 6],
                    timestamp: Duration::ZERO,
                    index: 0,
                },
                decode_ms: 0.0,
                name: None,
                truth: None,
            }),
            output: Some(SegmentOutput {
                mask: Mask::from_fn(2, 1, |_| false),
                flow: 0,
                timings: FrameTiming::default(),
                stats: SolveStats::default(),
                fallback: None,
                learning,
                census: None,
                noise_gate: 0,
                volume: None,
                energy: Default::default(),
                gpu: None,
                motion: None,
                frame_on_device: None,
            }),
            error: None,
            timings: FrameTiming::default(),
            dropped: 0,
            engine: EngineKind::Cpu,
            reprocessed: false,
            queued: 0,
            params: 1,
        }
    }

    #[test]
    fn the_countdown_follows_learning_frames_and_ends_with_the_first_cut() {
        let mut mode = BackgroundMode::default();
        mode.on_frame(&result(true));
        assert!(
            !mode.learning() && mode.learned == 0,
            "off: nothing counted"
        );
        mode.start();
        assert!(mode.learning());
        for _ in 0..LEARN_FRAMES + 5 {
            mode.on_frame(&result(true));
        }
        assert!(mode.learning(), "learning frames alone never end it");
        assert_eq!(mode.learned, LEARN_FRAMES - 1);
        mode.on_frame(&result(false));
        assert!(!mode.learning() && mode.frames == LEARN_FRAMES);
        mode.stop();
        assert_eq!((mode.frames, mode.learned), (0, 0));
    }

    /// A frame cut before the worker took the parameters that turned learning on
    /// reaches the window after the click: it neither counts nor ends learning.
    #[test]
    fn a_cut_from_before_learning_began_does_not_end_it() {
        let mut mode = BackgroundMode::default();
        mode.start();
        mode.count_from(2);
        mode.on_frame(&result(false));
        assert!(mode.learning() && mode.learned == 0);
        let learning = FrameResult {
            params: 2,
            ..result(true)
        };
        mode.on_frame(&learning);
        assert_eq!(mode.learned, 1);
        let cut = FrameResult {
            params: 3,
            ..result(false)
        };
        mode.on_frame(&cut);
        assert!(
            !mode.learning(),
            "a cut with these parameters or later ends it"
        );
    }
}

//! The timing part of the window: what each frame cost, what the newest result said,
//! how many frames came and how fast since start, with the timing panel, the rates in
//! the top bar and the report printed at a timed close.

use super::lag::{Behind, Lag};
use super::timing::{self, FrameSample, Timing};
use crate::pipeline::FrameResult;
use crate::pipeline::motion::Motion;
use egui::{Color32, RichText, Ui};
use std::time::{Duration, Instant};

/// What the newest result said besides its pictures and timings.
#[derive(Clone, Debug, Default)]
struct ResultInfo {
    /// Share of foreground pixels, 0..=1.
    foreground: f64,
    /// Agreement with the source's ground truth (demo scene).
    iou: Option<f64>,
    /// Why the frame was not segmented.
    error: Option<String>,
    /// How the foreground moved since the frame before, where it moved.
    motion: Option<Motion>,
}

/// What the window says of a frame whose foreground moved: the prior followed it.
fn motion_label(motion: Motion) -> String {
    format!(
        "prior moved with the foreground: {:+}, {:+} px",
        motion.dx, motion.dy
    )
}

/// Timings and counts since the window opened.
pub(super) struct Stats {
    pub(super) timing: Timing,
    info: Option<ResultInfo>,
    /// Frames processed since start (segmented or passed through).
    pub(super) processed: u64,
    started: Instant,
    /// Close the window this long after start.
    quit_after: Option<Duration>,
    /// Whether the machine keeps up with a live source.
    lag: Lag,
}

impl Stats {
    /// Counting from now; the window closes after `quit_after`, if given.
    pub(super) fn new(quit_after: Option<Duration>) -> Self {
        Self {
            timing: Timing::default(),
            info: None,
            processed: 0,
            started: Instant::now(),
            quit_after,
            lag: Lag::default(),
        }
    }

    /// Follows whether the machine keeps up with a live source, from each frame the
    /// worker segmented; returns what to tell the user when it falls behind.
    pub(super) fn keeping_up(&mut self, result: &FrameResult) -> Option<Behind> {
        if result.reprocessed {
            return None;
        }
        let t = &result.timings;
        // decoding runs on the capture thread, beside the worker
        let work_ms = t.total_ms - t.decode_ms;
        self.lag
            .on_frame(result.captured.frame.timestamp, work_ms, result.dropped)
    }

    /// Forgets how the machine kept up (another source, another working resolution).
    pub(super) fn reset_lag(&mut self) {
        self.lag.reset();
    }

    /// Counts one frame from the worker and keeps its numbers.
    pub(super) fn on_frame(&mut self, result: &FrameResult, now: Instant) {
        self.processed += 1;
        self.timing.dropped += result.dropped;
        let frame = &result.captured.frame;
        let pixels = (frame.width as f64 * frame.height as f64).max(1.0);
        let mut info = ResultInfo {
            error: result.error.clone(),
            iou: result.iou(),
            ..ResultInfo::default()
        };
        if let Some(output) = &result.output {
            info.foreground = output.mask.count_source() as f64 / pixels;
            info.motion = output.motion.filter(|m| m.is_some());
            let sample = FrameSample {
                index: self.processed,
                timing: result.timings,
                display_ms: 0.0,
                iterations: output.stats.iterations,
                flow: output.flow,
                dynamic: output.stats.dynamic,
                stopped_gap: output.stats.stopped.map(|c| c.relative_gap()),
            };
            self.timing.push(sample, now);
        }
        self.info = Some(info);
    }

    /// Whether the window was asked to close by now.
    pub(super) fn time_is_up(&self) -> bool {
        self.quit_after
            .is_some_and(|limit| self.started.elapsed() >= limit)
    }

    /// Whether the window closes by itself (and reports the rates then).
    pub(super) fn closes_by_itself(&self) -> bool {
        self.quit_after.is_some()
    }

    /// One line on the frame rates since start.
    pub(super) fn report(&self) -> String {
        let secs = self.started.elapsed().as_secs_f64().max(1e-3);
        format!(
            "{:.1} s: {:.1} UI frames/s ({:.1} ms each on the UI thread before rendering), \
             {:.1} segmented frames/s, {} frames dropped by the worker",
            secs,
            self.timing.ui.total() as f64 / secs,
            self.timing.ui_ms_per_frame(),
            self.processed as f64 / secs,
            self.timing.dropped
        )
    }

    /// The rates of the last second and the dropped frames, for the top bar.
    pub(super) fn rates_ui(&mut self, ui: &mut Ui) {
        let now = Instant::now();
        let ui_fps = self.timing.ui.rate(now);
        let seg_fps = self.timing.processed.rate(now);
        ui.label(format!(
            "{seg_fps:.0} fps segmented · UI {ui_fps:.0} fps · {} dropped",
            self.timing.dropped
        ));
    }

    /// The newest frame's numbers, static against dynamic cut times, and the plot.
    pub(super) fn ui(&self, ui: &mut Ui) {
        ui.horizontal_wrapped(|ui| {
            self.last_frame_ui(ui);
            self.result_ui(ui);
        });
        self.comparison_ui(ui);
        let height = ui.available_height().max(80.0);
        timing::plot(ui, &self.timing, height);
    }

    fn last_frame_ui(&self, ui: &mut Ui) {
        match self.timing.last() {
            Some(last) => {
                let t = &last.timing;
                ui.label(format!(
                    "capture {:.1} · energy {:.1} · cut {:.1} · cleanup {:.1} · display {:.1} ms",
                    t.decode_ms, t.energy_ms, t.cut_ms, t.cleanup_ms, last.display_ms
                ));
                ui.separator();
                ui.label(format!(
                    "{} iterations · flow {}",
                    last.iterations, last.flow
                ));
                if let Some(gap) = last.stopped_gap {
                    let text = if gap.is_finite() {
                        format!(
                            "stopped at the budget: within {:.2}% of the minimum cut",
                            gap * 100.0
                        )
                    } else {
                        "stopped at the budget before any flow reached t".to_string()
                    };
                    ui.label(RichText::new(text).color(ui.visuals().warn_fg_color))
                        .on_hover_text(
                            "The cut shown costs at most this much more than the minimum \
                         (its capacity minus the flow pushed, over that flow)",
                        );
                }
            }
            None => {
                ui.label("No segmented frame yet");
            }
        }
    }

    fn result_ui(&self, ui: &mut Ui) {
        let Some(info) = &self.info else {
            return;
        };
        ui.separator();
        ui.label(format!("foreground {:.1}%", info.foreground * 100.0));
        if let Some(iou) = info.iou {
            ui.label(format!("IoU vs truth {:.3}", iou));
        }
        if let Some(motion) = info.motion {
            ui.label(motion_label(motion));
        }
        if let Some(error) = &info.error {
            ui.colored_label(
                Color32::from_rgb(255, 140, 100),
                format!("not segmented: {error}"),
            );
        }
    }

    fn comparison_ui(&self, ui: &mut Ui) {
        let Some(c) = self.timing.comparison() else {
            ui.label(
                RichText::new("Toggle “Dynamic cuts” (D) to compare static and dynamic cut times.")
                    .weak(),
            );
            return;
        };
        let speedup = c.speedup();
        let (factor, word) = if speedup >= 1.0 {
            (speedup, "faster")
        } else {
            (1.0 / speedup, "slower")
        };
        ui.label(format!(
            "cut from scratch {:.2} ms · dynamic {:.2} ms · dynamic is {:.1}× {}",
            c.static_ms, c.dynamic_ms, factor, word
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_motion_label_gives_both_directions_with_their_signs() {
        let label = motion_label(Motion { dx: -4, dy: 2 });
        assert_eq!(label, "prior moved with the foreground: -4, +2 px");
    }
}

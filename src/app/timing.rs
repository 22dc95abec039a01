//! Timing at a glance: the recent frames' milliseconds by stage, frame rates, dropped
//! frames, and the cut time of static against dynamic frames, with the plot of them.

use crate::pipeline::FrameTiming;
use egui::{Color32, Ui};
use egui_plot::{Bar, BarChart, Legend, Plot};
use std::collections::VecDeque;
use std::time::{Duration, Instant};

/// Frames kept for the plot (five seconds of a 30 fps source).
const HISTORY: usize = 150;
/// Frames of each kind kept for the static/dynamic comparison.
const COMPARE: usize = 60;

/// What one processed frame cost, stage by stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct FrameSample {
    /// Frame index in the stream.
    pub index: u64,
    /// The worker's stages, capture (decoding) to cleanup.
    pub timing: FrameTiming,
    /// Composing and uploading the picture on the UI side.
    pub display_ms: f64,
    /// Engine iterations.
    pub iterations: u64,
    /// Max-flow value.
    pub flow: u64,
    /// Whether the cut continued from the previous residual graph.
    pub dynamic: bool,
    /// Where the cut stopped at the frame budget: how far its capacity can be above
    /// the minimum, as a share of the flow.
    pub stopped_gap: Option<f64>,
}

impl FrameSample {
    /// Sum of all stages.
    pub fn total_ms(&self) -> f64 {
        let t = &self.timing;
        t.decode_ms + t.energy_ms + t.cut_ms + t.cleanup_ms + self.display_ms
    }
}

/// Events per second over a sliding window of one second.
#[derive(Clone, Debug, Default)]
pub struct RateMeter {
    times: VecDeque<Instant>,
    total: u64,
}

impl RateMeter {
    /// Counts one event at `now`.
    pub fn tick(&mut self, now: Instant) {
        self.times.push_back(now);
        self.total += 1;
        self.trim(now);
    }

    /// Events in the last second before `now`.
    pub fn rate(&mut self, now: Instant) -> f64 {
        self.trim(now);
        self.times.len() as f64
    }

    /// Events ever counted.
    pub fn total(&self) -> u64 {
        self.total
    }

    fn trim(&mut self, now: Instant) {
        while let Some(&t) = self.times.front() {
            if now.duration_since(t) > Duration::from_secs(1) {
                self.times.pop_front();
            } else {
                break;
            }
        }
    }
}

/// Recent samples and counters.
#[derive(Clone, Debug, Default)]
pub struct Timing {
    samples: VecDeque<FrameSample>,
    static_cut: VecDeque<f64>,
    dynamic_cut: VecDeque<f64>,
    /// Frames the worker dropped because it was busy (total since start).
    pub dropped: u64,
    /// Processed frames per second.
    pub processed: RateMeter,
    /// UI frames per second.
    pub ui: RateMeter,
    /// Milliseconds the UI thread spent building frames (excluding rendering), total.
    pub ui_busy_ms: f64,
}

/// Median cut time of static and of dynamic frames, where both were seen.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// Median cut ms of frames solved from scratch.
    pub static_ms: f64,
    /// Median cut ms of frames that continued from the previous residual graph.
    pub dynamic_ms: f64,
}

impl Comparison {
    /// How many times faster dynamic is.
    pub fn speedup(&self) -> f64 {
        self.static_ms / self.dynamic_ms.max(1e-6)
    }
}

impl Timing {
    /// Records one processed frame.
    pub fn push(&mut self, sample: FrameSample, now: Instant) {
        let kind = if sample.dynamic {
            &mut self.dynamic_cut
        } else {
            &mut self.static_cut
        };
        kind.push_back(sample.timing.cut_ms);
        if kind.len() > COMPARE {
            kind.pop_front();
        }
        self.samples.push_back(sample);
        if self.samples.len() > HISTORY {
            self.samples.pop_front();
        }
        self.processed.tick(now);
    }

    /// Sets the display time of the newest frame (known only after it was shown).
    pub fn set_display_ms(&mut self, ms: f64) {
        if let Some(last) = self.samples.back_mut() {
            last.display_ms = ms;
        }
    }

    /// The newest sample.
    pub fn last(&self) -> Option<&FrameSample> {
        self.samples.back()
    }

    /// Samples, oldest first.
    pub fn samples(&self) -> impl Iterator<Item = &FrameSample> {
        self.samples.iter()
    }

    /// Static vs dynamic cut times, once frames of both kinds were seen.
    pub fn comparison(&self) -> Option<Comparison> {
        Some(Comparison {
            static_ms: median(self.static_cut.iter().copied())?,
            dynamic_ms: median(self.dynamic_cut.iter().copied())?,
        })
    }

    /// Mean milliseconds the UI thread spent per frame building it.
    pub fn ui_ms_per_frame(&self) -> f64 {
        self.ui_busy_ms / self.ui.total().max(1) as f64
    }

    /// Forgets the samples (new source or engine: old numbers mislead).
    pub fn clear_samples(&mut self) {
        self.samples.clear();
        self.static_cut.clear();
        self.dynamic_cut.clear();
    }
}

/// The median of `values` (the upper one of an even count); `None` for none.
pub(super) fn median(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied()
}

/// One stage of the stacked plot.
struct Stage {
    name: &'static str,
    colour: Color32,
    ms: fn(&FrameSample) -> f64,
}

const STAGES: [Stage; 6] = [
    Stage {
        name: "capture",
        colour: Color32::from_rgb(120, 144, 156),
        ms: |s| s.timing.decode_ms,
    },
    Stage {
        name: "energy",
        colour: Color32::from_rgb(66, 165, 245),
        ms: |s| s.timing.energy_ms,
    },
    Stage {
        name: "cut (static)",
        colour: Color32::from_rgb(239, 83, 80),
        ms: |s| if s.dynamic { 0.0 } else { s.timing.cut_ms },
    },
    Stage {
        name: "cut (dynamic)",
        colour: Color32::from_rgb(255, 167, 38),
        ms: |s| if s.dynamic { s.timing.cut_ms } else { 0.0 },
    },
    Stage {
        name: "cleanup",
        colour: Color32::from_rgb(102, 187, 106),
        ms: |s| s.timing.cleanup_ms,
    },
    Stage {
        name: "display",
        colour: Color32::from_rgb(171, 71, 188),
        ms: |s| s.display_ms,
    },
];

/// Draws the stacked per-frame plot. Bars are stacked here rather than with
/// `BarChart::stack_on` so that stages with nothing to show (the cut kind a frame did
/// not use, an idle cleanup) add no bar: every bar is tessellated and rasterised, which
/// is most of the window's cost on a software renderer.
pub fn plot(ui: &mut Ui, timing: &Timing, height: f32) {
    let mut base: Vec<f64> = vec![0.0; timing.samples.len()];
    let charts: Vec<BarChart> = STAGES
        .iter()
        .map(|stage| {
            let bars = timing
                .samples()
                .zip(base.iter_mut())
                .filter_map(|(s, below)| {
                    let ms = (stage.ms)(s);
                    let bar = Bar::new(s.index as f64, ms)
                        .base_offset(*below)
                        .width(1.0)
                        .fill(stage.colour);
                    *below += ms;
                    (ms > 0.0).then_some(bar)
                })
                .collect();
            BarChart::new(stage.name, bars).color(stage.colour)
        })
        .collect();
    Plot::new("timing-plot")
        .height(height)
        .legend(Legend::default())
        // The window's own colour behind the bars: one plot-sized fill less to shade.
        .show_background(false)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .include_y(0.0)
        .y_axis_label("ms")
        .x_axis_label("frame")
        .show(ui, |plot_ui| {
            for chart in charts {
                plot_ui.bar_chart(chart);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(index: u64, cut_ms: f64, dynamic: bool) -> FrameSample {
        FrameSample {
            index,
            timing: FrameTiming {
                cut_ms,
                ..FrameTiming::default()
            },
            dynamic,
            ..FrameSample::default()
        }
    }

    #[test]
    fn comparison_needs_both_kinds() {
        let now = Instant::now();
        let mut t = Timing::default();
        t.push(sample(0, 10.0, false), now);
        t.push(sample(1, 12.0, false), now);
        t.push(sample(2, 30.0, false), now);
        assert_eq!(t.comparison(), None);
        t.push(sample(3, 3.0, true), now);
        let c = t.comparison().unwrap();
        assert_eq!(c.static_ms, 12.0);
        assert_eq!(c.dynamic_ms, 3.0);
        assert_eq!(c.speedup(), 4.0);
    }

    #[test]
    fn history_is_bounded_and_display_time_lands_on_the_last_frame() {
        let now = Instant::now();
        let mut t = Timing::default();
        for i in 0..(HISTORY as u64 + 10) {
            t.push(sample(i, 1.0, true), now);
        }
        assert_eq!(t.samples().count(), HISTORY);
        assert_eq!(t.samples().next().unwrap().index, 10);
        t.set_display_ms(2.5);
        assert_eq!(t.last().unwrap().display_ms, 2.5);
        assert_eq!(t.last().unwrap().total_ms(), 3.5);
    }

    #[test]
    fn rate_meter_counts_the_last_second() {
        let start = Instant::now();
        let mut m = RateMeter::default();
        for k in 0..30 {
            m.tick(start + Duration::from_millis(k * 50));
        }
        // At 1.45 s the ticks from 0.45 s on count: k = 9..=29.
        assert_eq!(m.rate(start + Duration::from_millis(1450)), 21.0);
        assert_eq!(m.rate(start + Duration::from_secs(10)), 0.0);
        assert_eq!(m.total(), 30);
    }
}

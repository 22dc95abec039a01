//! One soak session of the live pipeline: the paced demo scene through the CPU engine,
//! recording off for the first half and on (mask PNGs and JSON lines) for the second,
//! with resident memory, dropped frames, the frame channel's occupancy and frame times
//! taken per window of source frames. Shared by the soak bench (the hour-long run) and
//! the short soak test, which apply the same checks.

use livecut::capture::{DemoConfig, DemoSource};
use livecut::maxflow::{EngineChoice, create_engine};
use livecut::pipeline::{Event, Pipeline, PipelineOptions, Recorder, SegmentParams, Segmenter};
use std::path::PathBuf;

/// What to run.
#[derive(Clone, Debug)]
pub struct Config {
    /// Frame width of the demo scene.
    pub width: u32,
    /// Frame height of the demo scene.
    pub height: u32,
    /// Frames per second the scene is paced at.
    pub fps: u32,
    /// Source frames in the whole session.
    pub frames: u64,
    /// Source frames per window (one table row, one memory sample).
    pub window: u64,
    /// Folder the second half is recorded into.
    pub out: PathBuf,
}

/// One window of source frames.
#[derive(Clone, Debug)]
pub struct Window {
    /// Source frames up to the end of this window.
    pub frames: u64,
    /// Resident memory at the end of the window, in bytes.
    pub rss: u64,
    /// Frames segmented in the window.
    pub processed: u64,
    /// Frames the latest-wins channel dropped in the window.
    pub dropped: u64,
    /// Most frames seen waiting in the frame channel.
    pub max_queued: usize,
    /// Decode-to-mask milliseconds of each segmented frame.
    pub times: Vec<f64>,
    /// Whether the window was recorded.
    pub recording: bool,
}

impl Window {
    /// Share of the window's frames that were dropped.
    pub fn dropped_share(&self) -> f64 {
        share(self.dropped, self.processed + self.dropped)
    }
}

/// Everything a session measured.
#[derive(Debug)]
pub struct Report {
    /// The windows in order.
    pub windows: Vec<Window>,
    /// The frame channel's capacity.
    pub bound: usize,
    /// Masks written while recording.
    pub written: u64,
}

/// Limits the checks apply; the short run in CI is noisier, so it allows more.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest growth of resident memory after warm-up, as a fraction.
    pub memory_growth: f64,
    /// Largest rise of the dropped share from start to end, in share points.
    pub dropped_rise: f64,
    /// Largest ratio of the end's median frame time to the start's.
    pub time_ratio: f64,
    /// Milliseconds added to the allowed end median, for timer and scheduler noise.
    pub time_slack_ms: f64,
}

/// Frame statistics of a stretch of windows.
#[derive(Clone, Copy, Debug)]
pub struct Stretch {
    /// Median decode-to-mask time.
    pub p50_ms: f64,
    /// 99th-percentile decode-to-mask time.
    pub p99_ms: f64,
    /// Share of frames dropped.
    pub dropped_share: f64,
}

/// Runs the session; `on_window` sees each window as it ends (for a live table).
pub fn run(config: &Config, mut on_window: impl FnMut(&Window)) -> Result<Report, String> {
    let demo = DemoConfig {
        width: config.width,
        height: config.height,
        fps: config.fps,
        frames: Some(config.frames),
        realtime: true,
        ..DemoConfig::default()
    };
    let source = DemoSource::new(demo).map_err(|e| e.to_string())?;
    let (engine, _) = create_engine(EngineChoice::Cpu).map_err(|e| e.to_string())?;
    let options = PipelineOptions::default();
    let bound = options.queue;
    let segmenter = Segmenter::new(engine, SegmentParams::default());
    let pipeline =
        Pipeline::start(segmenter, Box::new(source), options).map_err(|e| e.to_string())?;
    let json = config.out.join("frames.jsonl");
    let mut recorder = Recorder::new(&config.out, Some(&json));
    let record_from = config.frames / 2;
    let mut windows = Vec::new();
    let mut current = empty_window(config.window, false);
    for event in pipeline.events() {
        let result = match event {
            Event::Frame(result) if !result.reprocessed => result,
            Event::SourceEnded(_) => break,
            Event::SourceFailed { message, .. } | Event::CommandFailed(message) => {
                return Err(message);
            }
            _ => continue,
        };
        let index = result.captured.frame.index;
        while index >= current.frames {
            let next = empty_window(
                current.frames + config.window,
                current.frames >= record_from,
            );
            let done = std::mem::replace(&mut current, next);
            on_window(&done);
            windows.push(done);
        }
        if let Some(error) = &result.error {
            return Err(format!("frame {index}: {error}"));
        }
        current.processed += 1;
        current.dropped += result.dropped;
        current.max_queued = current.max_queued.max(result.queued);
        current.times.push(result.timings.total_ms);
        if index >= record_from {
            recorder.record(&result).map_err(|e| e.to_string())?;
        }
        current.rss = resident_bytes();
    }
    current.rss = resident_bytes();
    on_window(&current);
    windows.push(current);
    drop(pipeline.finish());
    Ok(Report {
        windows,
        bound,
        written: recorder.written(),
    })
}

fn empty_window(frames: u64, recording: bool) -> Window {
    Window {
        frames,
        rss: 0,
        processed: 0,
        dropped: 0,
        max_queued: 0,
        times: Vec::new(),
        recording,
    }
}

/// Resident memory of this process (Linux `/proc`), 0 where unknown.
fn resident_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib * 1024)
}

fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 / whole as f64
    }
}

impl Report {
    /// Windows of warm-up (the first 5 %, at least one): memory is measured from
    /// their end, and the start's statistics from the windows after them.
    pub fn warm_up(&self) -> usize {
        (self.windows.len() / 20).max(1).min(self.windows.len() - 1)
    }

    /// Windows pooled for the start and for the end statistics (10 %, at least one).
    fn pooled(&self) -> usize {
        (self.windows.len() / 10).max(1)
    }

    /// Resident memory at the end of warm-up.
    pub fn warm_rss(&self) -> u64 {
        self.windows[self.warm_up() - 1].rss
    }

    /// Resident memory of each phase (recording off, then on) after its own warm-up
    /// and at its end, with the phase's name. Turning recording on costs a fixed amount
    /// once (encoder and file buffers, filled over the first few hundred frames), so
    /// growth is measured within each phase after the phase's own warm-up (at least
    /// its first quarter): a leak keeps growing within one.
    pub fn memory_phases(&self) -> Vec<(&'static str, u64, u64)> {
        self.windows
            .chunk_by(|a, b| a.recording == b.recording)
            .filter(|phase| phase.len() >= 2)
            .map(|phase| {
                let name = if phase[0].recording {
                    "recording"
                } else {
                    "not recording"
                };
                let warm = self.warm_up().max(phase.len().div_ceil(4));
                let after_warm_up = phase[warm.min(phase.len() - 1) - 1].rss;
                (name, after_warm_up, phase[phase.len() - 1].rss)
            })
            .collect()
    }

    /// Resident memory at the end.
    pub fn end_rss(&self) -> u64 {
        self.windows.last().map_or(0, |w| w.rss)
    }

    /// Statistics right after warm-up.
    pub fn start(&self) -> Stretch {
        let from = self.warm_up();
        let to = (from + self.pooled()).min(self.windows.len());
        stretch(&self.windows[from..to])
    }

    /// Statistics of the last windows.
    pub fn end(&self) -> Stretch {
        let n = self.windows.len();
        stretch(&self.windows[n - self.pooled().min(n)..])
    }

    /// Source frames covered.
    pub fn frames(&self) -> u64 {
        self.windows.iter().map(|w| w.processed + w.dropped).sum()
    }

    /// Share of all frames dropped.
    pub fn dropped_share(&self) -> f64 {
        let dropped = self.windows.iter().map(|w| w.dropped).sum();
        share(dropped, self.frames())
    }

    /// Most frames ever seen waiting in the frame channel.
    pub fn max_queued(&self) -> usize {
        self.windows.iter().map(|w| w.max_queued).max().unwrap_or(0)
    }

    /// What broke the limits, one line each; empty when the session held.
    pub fn failures(&self, limits: &Limits) -> Vec<String> {
        let mut failures = Vec::new();
        for (phase, warm, end) in self.memory_phases() {
            let (warm, end) = (warm as f64, end as f64);
            if warm == 0.0 || end > warm * (1.0 + limits.memory_growth) {
                failures.push(format!(
                    "resident memory grew from {:.1} to {:.1} MiB after warm-up while {phase} (limit {:.0} %)",
                    mib(warm),
                    mib(end),
                    limits.memory_growth * 100.0
                ));
            }
        }
        if self.max_queued() > self.bound {
            failures.push(format!(
                "the frame channel held {} frames, more than its bound {}",
                self.max_queued(),
                self.bound
            ));
        }
        let (start, last) = (self.start(), self.end());
        if last.dropped_share > start.dropped_share + limits.dropped_rise {
            failures.push(format!(
                "the dropped share rose from {:.1} % to {:.1} %",
                start.dropped_share * 100.0,
                last.dropped_share * 100.0
            ));
        }
        if last.p50_ms > start.p50_ms * limits.time_ratio + limits.time_slack_ms {
            failures.push(format!(
                "the median frame time drifted from {:.2} to {:.2} ms",
                start.p50_ms, last.p50_ms
            ));
        }
        if self.frames() == 0 {
            failures.push("no frames came".into());
        }
        failures
    }

    /// The per-window table's heading.
    pub fn window_heading() -> String {
        format!(
            "{:>8} {:>9} {:>9} {:>9} {:>8} {:>8} {:>7} {:>6}",
            "frames", "rss MiB", "segmented", "dropped", "p50 ms", "p99 ms", "queued", "rec"
        )
    }

    /// One row of the per-window table.
    pub fn window_row(w: &Window) -> String {
        let s = stretch(std::slice::from_ref(w));
        format!(
            "{:>8} {:>9.1} {:>9} {:>8.1}% {:>8.2} {:>8.2} {:>7} {:>6}",
            w.frames,
            mib(w.rss as f64),
            w.processed,
            w.dropped_share() * 100.0,
            s.p50_ms,
            s.p99_ms,
            w.max_queued,
            if w.recording { "on" } else { "off" }
        )
    }

    /// The summary table: frames, memory at warm-up and at the end, dropped share,
    /// median and 99th-percentile frame time at the start and the end.
    pub fn summary(&self) -> String {
        let (start, end) = (self.start(), self.end());
        let growth: Vec<String> = self
            .memory_phases()
            .iter()
            .map(|&(phase, warm, end)| {
                let g = if warm == 0 {
                    0.0
                } else {
                    (end as f64 / warm as f64 - 1.0) * 100.0
                };
                format!("{g:+.2} % {phase}")
            })
            .collect();
        [
            "| frames | memory at warm-up | memory at end | growth within phases | dropped (all / start / end) | p50 start | p50 end | p99 start | p99 end | channel max / bound | masks recorded |".to_string(),
            "|---|---|---|---|---|---|---|---|---|---|---|".to_string(),
            format!(
                "| {} | {:.1} MiB | {:.1} MiB | {} | {:.1} % / {:.1} % / {:.1} % | {:.2} ms | {:.2} ms | {:.2} ms | {:.2} ms | {} / {} | {} |",
                self.frames(),
                mib(self.warm_rss() as f64),
                mib(self.end_rss() as f64),
                growth.join(", "),
                self.dropped_share() * 100.0,
                start.dropped_share * 100.0,
                end.dropped_share * 100.0,
                start.p50_ms,
                end.p50_ms,
                start.p99_ms,
                end.p99_ms,
                self.max_queued(),
                self.bound,
                self.written
            ),
        ]
        .join("\n")
    }
}

fn mib(bytes: f64) -> f64 {
    bytes / (1u64 << 20) as f64
}

fn stretch(windows: &[Window]) -> Stretch {
    let mut times: Vec<f64> = windows
        .iter()
        .flat_map(|w| w.times.iter().copied())
        .collect();
    times.sort_by(f64::total_cmp);
    let at = |q: f64| {
        if times.is_empty() {
            return 0.0;
        }
        let i = ((times.len() - 1) as f64 * q).round() as usize;
        times[i]
    };
    let dropped: u64 = windows.iter().map(|w| w.dropped).sum();
    let processed: u64 = windows.iter().map(|w| w.processed).sum();
    Stretch {
        p50_ms: at(0.5),
        p99_ms: at(0.99),
        dropped_share: share(dropped, dropped + processed),
    }
}

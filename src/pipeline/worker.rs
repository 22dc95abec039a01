//! The segmentation worker: one thread that owns the segmenter, takes frames from the
//! capture thread, obeys commands, and sends results with per-stage timings to the
//! consumer (the CLI, the app). [`Pipeline`] is the consumer's handle on it.
//!
//! ```text
//! capture thread ──frame channel──▶ worker ──events (bounded)──▶ consumer
//!                                     ▲────────commands (unbounded)──┘
//! ```
//!
//! Commands take priority over frames. Events are bounded: a consumer that falls
//! behind makes the worker wait, which a live source turns into dropped frames and a
//! file source into back-pressure, so memory stays bounded either way.

use super::channel::{Delivery, Stamped};
use super::feed::{Feed, SourceId, SourceInfo};
use super::priority;
use super::segmenter::{SegmentError, SegmentOutput, SegmentParams, Segmenter};
use super::timing::FrameTiming;
use crate::capture::{CapturedFrame, Frame, FrameSource, SourceSpec};
use crate::compute::ComputeDevice;
use crate::energy::Seeds;
use crate::grid::Mask;
use crate::maxflow::{Engine, EngineChoice, EngineKind, create_engine};
use crossbeam_channel::{Receiver, Sender, bounded, never, select_biased, unbounded};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

/// What the worker runs on each frame: the [`Segmenter`] in the program, simpler
/// stand-ins in tests of the threading.
pub trait FrameProcessor: Send {
    /// Segments one frame.
    fn process(&mut self, frame: &Frame) -> Result<SegmentOutput, SegmentError>;
    /// New seeds, applied from the next frame on.
    fn set_seeds(&mut self, seeds: Seeds);
    /// New parameters, applied from the next frame on.
    fn set_params(&mut self, params: SegmentParams);
    /// A new engine, used from the next frame on.
    fn set_engine(&mut self, engine: Box<dyn Engine>);
    /// Which engine is in use.
    fn engine_kind(&self) -> EngineKind;
    /// Whether frames wait for seeds (false: a learned background segments them).
    fn needs_seeds(&self) -> bool {
        true
    }
    /// A wgpu device for the energy beside the CPU engine; says why it cannot be used.
    fn set_compute(&mut self, _gpu: ComputeDevice) -> Result<(), String> {
        Err("this processor builds no energy on a GPU".into())
    }
    /// What the energy runs on where not on the CPU, for people.
    fn gpu_energy(&self) -> Option<String> {
        None
    }
}

impl FrameProcessor for Segmenter {
    fn process(&mut self, frame: &Frame) -> Result<SegmentOutput, SegmentError> {
        self.segment(frame)
    }
    fn set_seeds(&mut self, seeds: Seeds) {
        Segmenter::set_seeds(self, seeds);
    }
    fn set_params(&mut self, params: SegmentParams) {
        Segmenter::set_params(self, params);
    }
    fn set_engine(&mut self, engine: Box<dyn Engine>) {
        Segmenter::set_engine(self, engine);
    }
    fn set_compute(&mut self, gpu: ComputeDevice) -> Result<(), String> {
        Segmenter::set_compute(self, Some(gpu)).map_err(|e| e.to_string())
    }
    fn gpu_energy(&self) -> Option<String> {
        Segmenter::gpu_energy(self)
    }
    fn engine_kind(&self) -> EngineKind {
        Segmenter::engine_kind(self)
    }
    fn needs_seeds(&self) -> bool {
        self.params().background_frames == 0
    }
}

/// Instructions from the consumer to the worker.
#[derive(Debug)]
pub enum Command {
    /// New seeds (scribbles) made for the frames of `source`; while paused, the current
    /// frame is segmented again. Dropped when the worker has moved on to another source
    /// (they were made for frames it no longer has).
    SetSeeds {
        /// The source whose frames the seeds were drawn on.
        source: SourceId,
        /// The seeds.
        seeds: Seeds,
    },
    /// Forget the seeds of `source`: its frames pass through unsegmented until new
    /// seeds arrive. Dropped, like `SetSeeds`, when `source` is no longer the worker's.
    ClearSeeds {
        /// The source whose seeds are cleared.
        source: SourceId,
    },
    /// New parameters; while paused, the current frame is segmented again.
    SetParams(SegmentParams),
    /// Switch engine (created on the worker: CUDA start-up never blocks the UI).
    SetEngine(EngineChoice),
    /// A wgpu device (the window's) for the energy while the engine is the CPU one.
    SetCompute(ComputeDevice),
    /// Switch source: the old capture thread is stopped and joined, the new source
    /// (the next [`SourceId`]) opened on the worker, its default seeds (if any) replace
    /// the current ones, and a pause ends (the new source is shown).
    SetSource(SourceSpec),
    /// Stop taking frames (a live source keeps running and its frames are dropped).
    Pause,
    /// Take frames again.
    Resume,
    /// Process exactly one more frame, then stay paused.
    Step,
    /// End the worker and the capture thread.
    Stop,
}

/// The worker's answer for one frame.
#[derive(Clone, Debug)]
pub struct FrameResult {
    /// The frame as captured (shared, not copied).
    pub captured: Arc<CapturedFrame>,
    /// The segmentation, unless there are no seeds yet or it failed.
    pub output: Option<SegmentOutput>,
    /// Why segmentation failed, if it did.
    pub error: Option<String>,
    /// Stage timings, decoding included (0 for a frame segmented again).
    pub timings: FrameTiming,
    /// Frames the latest-wins channel dropped since the previous result.
    pub dropped: u64,
    /// Frames left waiting in the frame channel when this one was taken (never more
    /// than its capacity; 0 for a frame segmented again).
    pub queued: usize,
    /// Engine that cut this frame.
    pub engine: EngineKind,
    /// Whether this is the paused frame segmented again after a command.
    pub reprocessed: bool,
    /// How many `SetParams` the worker had taken when it segmented this frame: a
    /// consumer tells by it the results of parameters it has since replaced.
    pub params: u64,
}

impl FrameResult {
    /// The result of a frame segmented outside the worker, read at the consumer's
    /// pace (nothing dropped or queued): its timings are the output's with the
    /// frame's decoding added.
    pub fn single(captured: Arc<CapturedFrame>, output: SegmentOutput, engine: EngineKind) -> Self {
        let decode_ms = captured.decode_ms;
        let timings = FrameTiming {
            decode_ms,
            total_ms: decode_ms + output.timings.total_ms,
            ..output.timings
        };
        Self {
            captured,
            output: Some(output),
            error: None,
            timings,
            dropped: 0,
            queued: 0,
            engine,
            reprocessed: false,
            params: 0,
        }
    }

    /// Intersection over union of the mask with the source's ground truth, where both
    /// exist (the demo scene). Two empty masks agree perfectly.
    pub fn iou(&self) -> Option<f64> {
        let mask = &self.output.as_ref()?.mask;
        let truth = self.captured.truth.as_ref()?;
        Some(iou(mask, truth))
    }
}

/// Intersection over union of two masks' foregrounds (1 when both are empty).
pub fn iou(a: &Mask, b: &Mask) -> f64 {
    let (mut inter, mut union) = (0u64, 0u64);
    for (&x, &y) in a.data.iter().zip(&b.data) {
        inter += (x != 0 && y != 0) as u64;
        union += (x != 0 || y != 0) as u64;
    }
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

/// What the worker tells the consumer, in order.
#[derive(Debug)]
pub enum Event {
    /// A source is open and running (at start and after `SetSource`).
    SourceOpened(SourceInfo),
    /// One frame's result.
    Frame(Box<FrameResult>),
    /// The source has no more frames (files; the frame limit reached).
    SourceEnded(SourceId),
    /// The source failed (unreadable file, camera unplugged) or could not be opened;
    /// the stream is over. The worker keeps running for a new `SetSource`.
    SourceFailed {
        /// Which source failed.
        source: SourceId,
        /// Why, for people.
        message: String,
    },
    /// The engine changed; `note` says if a fallback was taken.
    EngineChanged {
        /// The engine now in use.
        engine: EngineKind,
        /// Note for people, e.g. why CUDA was not used.
        note: Option<String>,
        /// Whether the engine has stochastic cuts (the switch does something).
        stochastic: bool,
        /// What the energy runs on where not on the CPU ("CUDA", "wgpu on …").
        energy: Option<String>,
    },
    /// Where the energy runs changed (a wgpu device was given): what it runs on where
    /// not on the CPU.
    EnergyChanged(Option<String>),
    /// A command could not be carried out (e.g. the engine could not be created).
    CommandFailed(String),
    /// The GPU failed during a frame; that frame and the later ones are cut by the CPU
    /// engine. Says why.
    GpuFailed(String),
}

/// How the pipeline starts.
#[derive(Clone, Debug)]
pub struct PipelineOptions {
    /// Seeds for the first source; `None` uses the source's default seeds, if any.
    pub seeds: Option<Seeds>,
    /// Frame delivery; `None` picks latest-wins for live sources, lossless otherwise.
    pub delivery: Option<Delivery>,
    /// Frames the frame channel holds (at least 1).
    pub queue: usize,
    /// Stop each source after this many frames.
    pub max_frames: Option<u64>,
    /// Events the result channel holds before the worker waits for the consumer.
    pub events: usize,
    /// Run the worker and capture threads below the starting thread's priority
    /// ([`priority`]), for a consumer that draws a UI on the same cores.
    pub background: bool,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        Self {
            seeds: None,
            delivery: None,
            queue: 2,
            max_frames: None,
            events: 4,
            background: false,
        }
    }
}

/// The consumer's handle: send commands, receive events, shut down.
pub struct Pipeline {
    commands: Sender<Command>,
    events: Receiver<Event>,
    worker: Option<JoinHandle<()>>,
}

impl Pipeline {
    /// Starts the worker (and through it the capture thread) on an open source.
    pub fn start<P: FrameProcessor + 'static>(
        processor: P,
        source: Box<dyn FrameSource>,
        options: PipelineOptions,
    ) -> std::io::Result<Self> {
        let (commands, command_rx) = unbounded();
        let (event_tx, events) = bounded(options.events.max(1));
        let worker = std::thread::Builder::new()
            .name("livecut-worker".into())
            .spawn(move || {
                if options.background {
                    priority::lower_current_thread(priority::BACKGROUND_NICENESS);
                }
                let mut worker = Worker::new(processor, command_rx, event_tx, options);
                worker.run(source);
            })?;
        Ok(Self {
            commands,
            events,
            worker: Some(worker),
        })
    }

    /// Sends a command; `false` if the worker has ended.
    pub fn send(&self, command: Command) -> bool {
        self.commands.send(command).is_ok()
    }

    /// The event stream, for `recv`, `try_iter` or `select!`. It disconnects when the
    /// worker ends.
    pub fn events(&self) -> &Receiver<Event> {
        &self.events
    }

    /// Stops the worker and the capture thread, waits for both, and returns the
    /// events that were still on their way (none are lost).
    pub fn finish(mut self) -> Vec<Event> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Vec<Event> {
        let _ = self.commands.send(Command::Stop);
        // Draining lets a worker blocked on a full event channel see the command.
        let rest: Vec<Event> = self.events.iter().collect();
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
        rest
    }
}

impl Drop for Pipeline {
    fn drop(&mut self) {
        if self.worker.is_some() {
            self.shutdown();
        }
    }
}

/// Whether the worker goes on.
#[derive(PartialEq, Eq)]
enum Flow {
    Continue,
    Stop,
}

struct Worker<P> {
    processor: P,
    commands: Receiver<Command>,
    events: Sender<Event>,
    options: PipelineOptions,
    feed: Option<Feed>,
    /// The source `feed` reads, or the last one asked for when none runs.
    source: SourceId,
    /// `SetParams` taken so far.
    params: u64,
    has_seeds: bool,
    paused: bool,
    steps: u32,
    last: Option<Arc<CapturedFrame>>,
    /// Seeds or parameters changed after `last` was segmented and no redo followed.
    stale: bool,
}

impl<P: FrameProcessor> Worker<P> {
    fn new(
        processor: P,
        commands: Receiver<Command>,
        events: Sender<Event>,
        options: PipelineOptions,
    ) -> Self {
        Self {
            processor,
            commands,
            events,
            options,
            feed: None,
            source: SourceId::FIRST,
            params: 0,
            has_seeds: false,
            paused: false,
            steps: 0,
            last: None,
            stale: false,
        }
    }

    fn run(&mut self, source: Box<dyn FrameSource>) {
        let seeds = self.options.seeds.take();
        if self.open(source, seeds) == Flow::Continue {
            while self.step() == Flow::Continue {}
        }
        if let Some(feed) = self.feed.take() {
            feed.stop();
        }
    }

    fn emit(&self, event: Event) -> Flow {
        match self.events.send(event) {
            Ok(()) => Flow::Continue,
            Err(_) => Flow::Stop,
        }
    }

    /// Waits for one command or frame and handles it.
    fn step(&mut self) -> Flow {
        let wants_frame = !self.paused || self.steps > 0;
        let frames = match &self.feed {
            Some(feed) if wants_frame => feed.frames.raw().clone(),
            _ => never(),
        };
        select_biased! {
            recv(self.commands) -> command => match command {
                Ok(command) => self.command(command),
                Err(_) => Flow::Stop,
            },
            recv(frames) -> item => match item {
                Ok(item) => self.frame(item),
                Err(_) => self.source_done(),
            },
        }
    }

    fn command(&mut self, command: Command) -> Flow {
        match command {
            Command::SetSeeds { source, .. } | Command::ClearSeeds { source }
                if source != self.source =>
            {
                Flow::Continue
            }
            Command::SetSeeds { seeds, .. } => {
                self.processor.set_seeds(seeds);
                self.has_seeds = true;
                self.redo()
            }
            Command::ClearSeeds { .. } => {
                self.has_seeds = false;
                self.redo()
            }
            Command::SetParams(params) => {
                self.processor.set_params(params);
                self.params += 1;
                self.redo()
            }
            Command::SetEngine(choice) => match create_engine(choice) {
                Ok((engine, note)) => {
                    let stochastic = engine.has_stochastic();
                    self.processor.set_engine(engine);
                    let engine = self.processor.engine_kind();
                    let changed = Event::EngineChanged {
                        engine,
                        note,
                        stochastic,
                        energy: self.processor.gpu_energy(),
                    };
                    if self.emit(changed) == Flow::Stop {
                        return Flow::Stop;
                    }
                    self.redo()
                }
                Err(e) => self.emit(Event::CommandFailed(e.to_string())),
            },
            Command::SetCompute(gpu) => match self.processor.set_compute(gpu) {
                Ok(()) => self.emit(Event::EnergyChanged(self.processor.gpu_energy())),
                Err(e) => self.emit(Event::CommandFailed(e)),
            },
            Command::SetSource(spec) => {
                if let Some(feed) = self.feed.take() {
                    feed.stop();
                }
                self.source = self.source.next();
                self.last = None;
                self.paused = false;
                self.steps = 0;
                match spec.open() {
                    Ok(source) => self.open(source, None),
                    Err(e) => self.failed(e.to_string()),
                }
            }
            Command::Pause => {
                self.paused = true;
                self.steps = 0;
                Flow::Continue
            }
            Command::Resume => {
                self.paused = false;
                self.steps = 0;
                Flow::Continue
            }
            Command::Step => {
                self.paused = true;
                self.steps += 1;
                Flow::Continue
            }
            Command::Stop => Flow::Stop,
        }
    }

    /// Starts the capture thread on `source` with `seeds` or else its default seeds.
    fn open(&mut self, source: Box<dyn FrameSource>, seeds: Option<Seeds>) -> Flow {
        let (width, height) = source.size();
        let live = source.is_live();
        let delivery = self.options.delivery.unwrap_or(if live {
            Delivery::LatestWins
        } else {
            Delivery::Lossless
        });
        let frames = match (source.len_hint(), self.options.max_frames) {
            (Some(n), Some(m)) => Some(n.min(m)),
            (n, m) => n.or(m),
        };
        let description = source.describe();
        let reopen = source.reopen_spec();
        let seeds = seeds.or_else(|| source.default_seeds());
        self.has_seeds = seeds.is_some();
        if let Some(seeds) = &seeds {
            self.processor.set_seeds(seeds.clone());
        }
        match Feed::start(
            source,
            delivery,
            self.options.queue,
            self.options.max_frames,
        ) {
            Ok(feed) => self.feed = Some(feed),
            Err(e) => return self.failed(format!("cannot start the capture thread: {e}")),
        }
        self.emit(Event::SourceOpened(SourceInfo {
            id: self.source,
            description,
            width,
            height,
            live,
            delivery,
            frames,
            seeds,
            reopen,
        }))
    }

    /// Reports that the current source failed.
    fn failed(&self, message: String) -> Flow {
        self.emit(Event::SourceFailed {
            source: self.source,
            message,
        })
    }

    fn frame(&mut self, item: Stamped<CapturedFrame>) -> Flow {
        let Some(feed) = &mut self.feed else {
            return Flow::Continue;
        };
        let received = feed.frames.accept(item);
        let queued = feed.frames.raw().len();
        self.steps = self.steps.saturating_sub(1);
        let captured = Arc::new(received.value);
        self.last = Some(captured.clone());
        self.segment(captured, received.dropped, queued, false)
    }

    /// Segments the last frame again after a change, so the user sees its effect: when
    /// paused, or when the source has ended and no newer frame will come.
    fn redo(&mut self) -> Flow {
        let Some(last) = self.last.clone() else {
            return Flow::Continue;
        };
        if self.paused || self.feed.is_none() {
            return self.segment(last, 0, 0, true);
        }
        // The next frame takes the change; if none comes, `source_done` redoes.
        self.stale = true;
        Flow::Continue
    }

    fn segment(
        &mut self,
        captured: Arc<CapturedFrame>,
        dropped: u64,
        queued: usize,
        reprocessed: bool,
    ) -> Flow {
        self.stale = false;
        let decode_ms = if reprocessed { 0.0 } else { captured.decode_ms };
        let start = Instant::now();
        let wanted = self.has_seeds || !self.processor.needs_seeds();
        let result = wanted.then(|| self.processor.process(&captured.frame));
        let segment_ms = start.elapsed().as_secs_f64() * 1e3;
        let (output, error) = match result {
            Some(Ok(mut output)) => {
                if let Some(why) = output.fallback.take()
                    && self.emit(Event::GpuFailed(why)) == Flow::Stop
                {
                    return Flow::Stop;
                }
                (Some(output), None)
            }
            Some(Err(e)) => (None, Some(e.to_string())),
            None => (None, None),
        };
        let stages = output.as_ref().map(|o| o.timings).unwrap_or_default();
        let timings = FrameTiming {
            decode_ms,
            total_ms: decode_ms + segment_ms,
            ..stages
        };
        self.emit(Event::Frame(Box::new(FrameResult {
            captured,
            output,
            error,
            timings,
            dropped,
            queued,
            engine: self.processor.engine_kind(),
            reprocessed,
            params: self.params,
        })))
    }

    /// The frame channel ran dry and closed: report how the stream ended.
    fn source_done(&mut self) -> Flow {
        let Some(feed) = self.feed.take() else {
            return Flow::Continue;
        };
        let ended = match feed.finish() {
            Ok(()) => self.emit(Event::SourceEnded(self.source)),
            Err(message) => self.failed(message),
        };
        // A change that arrived after the last frame would otherwise never be seen.
        if ended == Flow::Continue && self.stale {
            return self.redo();
        }
        ended
    }
}

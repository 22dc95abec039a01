//! Threads, channels and commands of the pipeline, with a fake processor standing in
//! for the segmenter and small in-test sources whose pace the test controls.

use crossbeam_channel::{Receiver, Sender, unbounded};
use livecut::capture::{CaptureError, CapturedFrame, DemoConfig, Frame, FrameSource, SourceSpec};
use livecut::energy::{SeedLabel, Seeds};
use livecut::grid::Mask;
use livecut::maxflow::{Engine, EngineChoice, EngineKind, SolveStats};
use livecut::pipeline::segmenter::SegmentError;
use livecut::pipeline::{
    Command, Delivery, Event, FrameProcessor, FrameResult, FrameTiming, Pipeline, PipelineOptions,
    SegmentOutput, SegmentParams, SourceId,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Long enough that only a hung pipeline hits it.
const HANG: Duration = Duration::from_secs(20);

/// What a [`FakeProcessor`] was told, one line a call.
type Log = Arc<Mutex<Vec<String>>>;

/// Records what it is told; its "mask" marks pixels whose red exceeds 127, its flow
/// is the frame index. Fails frames while its seeds have no foreground. It reports the
/// CUDA engine until given another, so a switch to the CPU engine shows.
struct FakeProcessor {
    log: Log,
    work: Duration,
    engine: EngineKind,
    has_foreground: bool,
    /// The frame during which the GPU fails (the CPU then takes over).
    gpu_fails_at: Option<u64>,
}

impl FakeProcessor {
    fn new(work: Duration) -> (Self, Log) {
        let log = Arc::new(Mutex::new(Vec::new()));
        let fake = Self {
            log: log.clone(),
            work,
            engine: EngineKind::Cuda,
            has_foreground: true,
            gpu_fails_at: None,
        };
        (fake, log)
    }
}

impl FrameProcessor for FakeProcessor {
    fn process(&mut self, frame: &Frame) -> Result<SegmentOutput, SegmentError> {
        self.log
            .lock()
            .unwrap()
            .push(format!("frame {}", frame.index));
        if !self.has_foreground {
            return Err(SegmentError::Seeds("no foreground seed".into()));
        }
        std::thread::sleep(self.work);
        let fallback = (self.gpu_fails_at == Some(frame.index)).then(|| {
            self.engine = EngineKind::Cpu;
            "the GPU failed (device lost); continuing with the CPU engine".to_string()
        });
        Ok(SegmentOutput {
            mask: Mask::from_fn(frame.width, frame.height, |i| frame.rgb[3 * i] > 127),
            flow: frame.index,
            timings: FrameTiming {
                energy_ms: 1.0,
                cut_ms: 2.0,
                cleanup_ms: 0.5,
                ..FrameTiming::default()
            },
            stats: SolveStats::default(),
            fallback,
            learning: false,
            census: None,
            noise_gate: 0,
            volume: None,
            energy: Default::default(),
            gpu: None,
            motion: None,
            frame_on_device: None,
        })
    }
    fn set_seeds(&mut self, seeds: Seeds) {
        self.has_foreground = seeds.count(SeedLabel::Foreground) > 0;
        self.log
            .lock()
            .unwrap()
            .push(format!("seeds {}x{}", seeds.width, seeds.height));
    }
    fn set_params(&mut self, params: SegmentParams) {
        self.log
            .lock()
            .unwrap()
            .push(format!("lambda {}", params.lambda));
    }
    fn set_engine(&mut self, engine: Box<dyn Engine>) {
        self.engine = engine.kind();
        self.log
            .lock()
            .unwrap()
            .push(format!("engine {}", engine.name()));
    }
    fn engine_kind(&self) -> EngineKind {
        self.engine
    }
}

fn tiny_frame(index: u64) -> CapturedFrame {
    CapturedFrame {
        frame: Frame {
            width: 4,
            height: 2,
            rgb: (0..24)
                .map(|i| if i < 12 { 200 } else { (index % 100) as u8 })
                .collect(),
            timestamp: Duration::from_millis(index * 10),
            index,
        },
        decode_ms: 0.25,
        name: None,
        truth: None,
    }
}

/// The tiny frame numbered `*next`, counting it.
fn next_tiny_frame(next: &mut u64) -> CapturedFrame {
    *next += 1;
    tiny_frame(*next - 1)
}

/// Sets its flag when dropped, so that a test sees the source holding it dropped.
struct DropFlag(Arc<AtomicBool>);

impl DropFlag {
    /// A flag not set yet, and the handle that reads it.
    fn new() -> (Self, Arc<AtomicBool>) {
        let flag = Arc::new(AtomicBool::new(false));
        (Self(flag.clone()), flag)
    }
}

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.store(true, Ordering::SeqCst);
    }
}

/// Yields `frames` tiny frames (forever for `None`) as fast as it is read, failing
/// at `fail_at`; its flag is set when it is dropped.
struct Counter {
    next: u64,
    frames: Option<u64>,
    live: bool,
    fail_at: Option<u64>,
    _dropped: DropFlag,
}

impl Counter {
    fn new(frames: Option<u64>, live: bool) -> (Self, Arc<AtomicBool>) {
        let (flag, dropped) = DropFlag::new();
        let counter = Self {
            next: 0,
            frames,
            live,
            fail_at: None,
            _dropped: flag,
        };
        (counter, dropped)
    }
}

impl FrameSource for Counter {
    fn describe(&self) -> String {
        "counter".into()
    }
    fn size(&self) -> (u32, u32) {
        (4, 2)
    }
    fn is_live(&self) -> bool {
        self.live
    }
    fn len_hint(&self) -> Option<u64> {
        self.frames
    }
    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        if self.fail_at == Some(self.next) {
            return Err(CaptureError::CameraLost {
                index: 7,
                reason: "unplugged".into(),
            });
        }
        if self.frames.is_some_and(|n| self.next >= n) {
            return Ok(None);
        }
        Ok(Some(next_tiny_frame(&mut self.next)))
    }
}

/// Yields one frame per message on its gate; ends when the gate closes.
struct Gated {
    gate: Receiver<()>,
    next: u64,
    _dropped: DropFlag,
}

/// Starts a pipeline with `options` on a fake processor that takes no time, reading a
/// [`Gated`] source: the pipeline, the source's gate, the processor's log and the
/// source's drop flag.
fn start_gated(options: PipelineOptions) -> (Pipeline, Sender<()>, Log, Arc<AtomicBool>) {
    let (fake, log) = FakeProcessor::new(Duration::ZERO);
    let (tx, gate) = unbounded();
    let (flag, dropped) = DropFlag::new();
    let source = Gated {
        gate,
        next: 0,
        _dropped: flag,
    };
    let p = Pipeline::start(fake, Box::new(source), options).unwrap();
    (p, tx, log, dropped)
}

impl FrameSource for Gated {
    fn describe(&self) -> String {
        "gated".into()
    }
    fn size(&self) -> (u32, u32) {
        (4, 2)
    }
    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        if self.gate.recv().is_err() {
            return Ok(None);
        }
        Ok(Some(next_tiny_frame(&mut self.next)))
    }
}

fn seeds(foreground: bool) -> Seeds {
    let mut s = Seeds::unknown(4, 2);
    s.labels[0] = if foreground {
        SeedLabel::Foreground
    } else {
        SeedLabel::Background
    };
    s.labels[7] = SeedLabel::Background;
    s
}

fn next(p: &Pipeline) -> Event {
    p.events().recv_timeout(HANG).expect("the pipeline answers")
}

fn next_frame(p: &Pipeline) -> Box<FrameResult> {
    match next(p) {
        Event::Frame(r) => r,
        other => panic!("expected a frame, got {other:?}"),
    }
}

/// Frames until the stream ends; panics on anything unexpected.
fn frames_until_end(p: &Pipeline) -> Vec<FrameResult> {
    let mut out = Vec::new();
    loop {
        match next(p) {
            Event::Frame(r) => out.push(*r),
            Event::SourceEnded(_) => return out,
            Event::SourceOpened(_) => {}
            other => panic!("unexpected {other:?}"),
        }
    }
}

fn with_seeds() -> PipelineOptions {
    PipelineOptions {
        seeds: Some(seeds(true)),
        ..PipelineOptions::default()
    }
}

#[test]
fn a_file_source_is_processed_completely_and_in_order() {
    let (fake, log) = FakeProcessor::new(Duration::from_millis(1));
    let (source, source_dropped) = Counter::new(Some(40), false);
    let p = Pipeline::start(fake, Box::new(source), with_seeds()).unwrap();
    match next(&p) {
        Event::SourceOpened(info) => {
            assert_eq!(info.delivery, Delivery::Lossless);
            assert_eq!((info.width, info.height, info.frames), (4, 2, Some(40)));
            assert_eq!(info.seeds, Some(seeds(true)));
        }
        other => panic!("{other:?}"),
    }
    let frames = frames_until_end(&p);
    let indices: Vec<u64> = frames.iter().map(|r| r.captured.frame.index).collect();
    assert_eq!(indices, (0..40).collect::<Vec<_>>());
    for r in &frames {
        let out = r.output.as_ref().unwrap();
        assert_eq!(r.dropped, 0);
        assert_eq!(out.flow, r.captured.frame.index);
        assert_eq!(out.mask.count_source(), 4);
        assert_eq!(r.timings.decode_ms, 0.25);
        assert_eq!(
            (r.timings.energy_ms, r.timings.cut_ms, r.timings.cleanup_ms),
            (1.0, 2.0, 0.5)
        );
        assert!(
            r.timings.total_ms >= r.timings.decode_ms + 1.0,
            "total includes the 1 ms of work"
        );
        assert_eq!(r.engine, EngineKind::Cuda);
    }
    assert!(p.finish().is_empty());
    assert!(
        source_dropped.load(Ordering::SeqCst),
        "the capture thread ended and closed its source"
    );
    assert_eq!(log.lock().unwrap()[0], "seeds 4x2");
}

#[test]
fn a_gpu_failure_is_reported_once_and_no_frame_is_lost() {
    let (mut fake, _) = FakeProcessor::new(Duration::from_millis(1));
    fake.gpu_fails_at = Some(3);
    let (source, _) = Counter::new(Some(6), false);
    let p = Pipeline::start(fake, Box::new(source), with_seeds()).unwrap();
    assert!(matches!(next(&p), Event::SourceOpened(_)));
    let mut seen = Vec::new();
    loop {
        match next(&p) {
            Event::Frame(r) => {
                assert!(r.output.is_some() && r.error.is_none());
                seen.push((r.captured.frame.index, r.engine));
            }
            Event::GpuFailed(why) => {
                assert!(why.contains("device lost"), "{why}");
                seen.push((u64::MAX, EngineKind::Cpu));
            }
            Event::SourceEnded(_) => break,
            other => panic!("{other:?}"),
        }
    }
    let cuda = EngineKind::Cuda;
    let cpu = EngineKind::Cpu;
    assert_eq!(
        seen,
        [
            (0, cuda),
            (1, cuda),
            (2, cuda),
            (u64::MAX, cpu),
            (3, cpu),
            (4, cpu),
            (5, cpu)
        ]
    );
}

#[test]
fn a_slow_worker_drops_live_frames_and_counts_every_one() {
    let (fake, _) = FakeProcessor::new(Duration::from_millis(3));
    let (source, _) = Counter::new(Some(300), true);
    let options = PipelineOptions {
        events: 2,
        ..with_seeds()
    };
    let p = Pipeline::start(fake, Box::new(source), options).unwrap();
    let mut frames = Vec::new();
    loop {
        assert!(p.events().len() <= 2, "results are bounded");
        match next(&p) {
            Event::SourceOpened(info) => assert_eq!(info.delivery, Delivery::LatestWins),
            Event::Frame(r) => frames.push(*r),
            Event::SourceEnded(_) => break,
            other => panic!("{other:?}"),
        }
    }
    let dropped: u64 = frames.iter().map(|r| r.dropped).sum();
    assert!(
        dropped > 0,
        "a 3 ms solver cannot keep up with an instant camera"
    );
    assert_eq!(
        frames.len() as u64 + dropped,
        300,
        "every frame is processed or counted as dropped"
    );
    assert_eq!(
        frames.last().unwrap().captured.frame.index,
        299,
        "the newest frame wins"
    );
    let indices: Vec<u64> = frames.iter().map(|r| r.captured.frame.index).collect();
    assert!(indices.windows(2).all(|w| w[0] < w[1]));
    drop(p.finish());
}

#[test]
fn commands_reach_the_worker_between_frames() {
    let (p, gate, log, _) = start_gated(PipelineOptions::default());
    assert!(matches!(next(&p), Event::SourceOpened(info) if info.seeds.is_none()));

    gate.send(()).unwrap();
    let r = next_frame(&p);
    assert!(
        r.output.is_none() && r.error.is_none(),
        "no seeds yet: the frame passes through"
    );

    p.send(Command::SetSeeds {
        source: SourceId::FIRST,
        seeds: seeds(true),
    });
    p.send(Command::SetParams(SegmentParams {
        lambda: 7.5,
        ..SegmentParams::default()
    }));
    p.send(Command::SetEngine(EngineChoice::Cpu));
    assert!(matches!(
        next(&p),
        Event::EngineChanged {
            engine: EngineKind::Cpu,
            note: None,
            stochastic: false,
            energy: None,
        }
    ));
    gate.send(()).unwrap();
    let r = next_frame(&p);
    assert_eq!((r.captured.frame.index, r.engine), (1, EngineKind::Cpu));
    assert!(r.output.is_some());
    assert_eq!(
        *log.lock().unwrap(),
        ["seeds 4x2", "lambda 7.5", "engine cpu", "frame 1"]
    );

    // Paused: a new frame waits in the channel; new seeds re-segment the shown frame.
    p.send(Command::Pause);
    gate.send(()).unwrap();
    p.send(Command::SetSeeds {
        source: SourceId::FIRST,
        seeds: seeds(true),
    });
    let r = next_frame(&p);
    assert_eq!(
        (r.captured.frame.index, r.reprocessed, r.timings.decode_ms),
        (1, true, 0.0)
    );

    // Step takes exactly the waiting frame.
    p.send(Command::Step);
    let r = next_frame(&p);
    assert_eq!((r.captured.frame.index, r.reprocessed), (2, false));
    p.send(Command::ClearSeeds {
        source: SourceId::FIRST,
    });
    let r = next_frame(&p);
    assert!(
        r.reprocessed && r.output.is_none(),
        "cleared seeds show the plain frame"
    );

    p.send(Command::SetSeeds {
        source: SourceId::FIRST,
        seeds: seeds(true),
    });
    assert!(next_frame(&p).reprocessed);
    p.send(Command::Resume);
    gate.send(()).unwrap();
    gate.send(()).unwrap();
    assert_eq!(next_frame(&p).captured.frame.index, 3);
    assert_eq!(next_frame(&p).captured.frame.index, 4);
    // Sources must not block for long in next_frame; closing the gate ends this one.
    drop(gate);
    drop(p.finish());
}

/// The race an image file meets in the app: its one frame passes through unsegmented,
/// the default seeds arrive before the stream closes. The frame must be cut with them
/// once the stream ends, and after the end a change re-segments it straight away.
#[test]
fn seeds_that_arrive_after_the_last_frame_still_cut_it() {
    let (p, gate, _, _) = start_gated(PipelineOptions::default());
    assert!(matches!(next(&p), Event::SourceOpened(_)));
    gate.send(()).unwrap();
    assert!(next_frame(&p).output.is_none(), "no seeds yet");
    p.send(Command::SetSeeds {
        source: SourceId::FIRST,
        seeds: seeds(true),
    });
    // Not paused and the stream still open: the change waits for a next frame.
    assert!(p.events().recv_timeout(Duration::from_millis(100)).is_err());
    drop(gate);
    assert!(matches!(next(&p), Event::SourceEnded(_)));
    let r = next_frame(&p);
    assert!(
        r.reprocessed && r.output.is_some(),
        "cut once the stream ended"
    );
    p.send(Command::ClearSeeds {
        source: SourceId::FIRST,
    });
    assert!(
        next_frame(&p).output.is_none(),
        "an ended stream redoes at once"
    );
    drop(p.finish());
}

#[test]
fn segmentation_errors_are_reported_per_frame() {
    let (fake, _) = FakeProcessor::new(Duration::ZERO);
    let (source, _) = Counter::new(Some(2), false);
    let options = PipelineOptions {
        seeds: Some(seeds(false)),
        ..PipelineOptions::default()
    };
    let p = Pipeline::start(fake, Box::new(source), options).unwrap();
    let frames = frames_until_end(&p);
    assert_eq!(frames.len(), 2);
    for r in frames {
        assert!(r.output.is_none());
        assert_eq!(r.error.as_deref(), Some("no foreground seed"));
    }
}

#[test]
fn a_source_failure_ends_the_stream_with_its_message() {
    let (fake, _) = FakeProcessor::new(Duration::ZERO);
    let (mut source, _) = Counter::new(None, false);
    source.fail_at = Some(3);
    let p = Pipeline::start(fake, Box::new(source), with_seeds()).unwrap();
    let mut frames = 0;
    loop {
        match next(&p) {
            Event::SourceOpened(_) => {}
            Event::Frame(_) => frames += 1,
            Event::SourceFailed { message, .. } => {
                assert_eq!(message, "camera 7 stopped delivering frames: unplugged");
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(frames, 3, "frames before the failure are all delivered");
    // The worker outlives its source: it still obeys commands.
    p.send(Command::SetSeeds {
        source: SourceId::FIRST,
        seeds: seeds(true),
    });
    drop(p.finish());
}

#[test]
fn the_frame_limit_ends_the_stream() {
    let (fake, _) = FakeProcessor::new(Duration::ZERO);
    let (source, _) = Counter::new(None, false);
    let options = PipelineOptions {
        max_frames: Some(5),
        ..with_seeds()
    };
    let p = Pipeline::start(fake, Box::new(source), options).unwrap();
    assert_eq!(frames_until_end(&p).len(), 5);
}

#[test]
fn finishing_mid_stream_joins_every_thread() {
    for live in [true, false] {
        let (fake, _) = FakeProcessor::new(Duration::from_millis(1));
        let (source, source_dropped) = Counter::new(None, live);
        let p = Pipeline::start(fake, Box::new(source), with_seeds()).unwrap();
        for _ in 0..5 {
            let _ = next(&p);
        }
        let rest = p.finish();
        assert!(
            rest.len() <= PipelineOptions::default().events + 1,
            "only what was in flight"
        );
        assert!(
            source_dropped.load(Ordering::SeqCst),
            "live={live}: the capture thread ended"
        );
    }
}

#[test]
fn dropping_the_handle_also_stops_everything() {
    let (fake, _) = FakeProcessor::new(Duration::ZERO);
    let (source, source_dropped) = Counter::new(None, false);
    let p = Pipeline::start(fake, Box::new(source), with_seeds()).unwrap();
    let _ = next(&p);
    drop(p);
    assert!(source_dropped.load(Ordering::SeqCst));
}

/// A 32×24 demo scene of `frames` frames, to switch to.
fn small_demo(frames: u64) -> SourceSpec {
    SourceSpec::Demo(DemoConfig {
        width: 32,
        height: 24,
        frames: Some(frames),
        ..DemoConfig::default()
    })
}

#[test]
fn a_source_change_stops_the_old_source_and_uses_the_new_seeds() {
    let (p, gate, log, old_dropped) = start_gated(with_seeds());
    assert!(matches!(next(&p), Event::SourceOpened(_)));
    p.send(Command::SetSource(small_demo(3)));
    // The old capture thread waits at its gate; closing it lets the worker join it.
    drop(gate);
    match next(&p) {
        Event::SourceOpened(info) => {
            assert_eq!((info.width, info.height, info.frames), (32, 24, Some(3)));
            assert!(info.description.starts_with("demo scene"));
            assert!(info.seeds.is_some(), "the demo brings its own seeds");
        }
        other => panic!("{other:?}"),
    }
    assert!(
        old_dropped.load(Ordering::SeqCst),
        "the old capture thread was joined"
    );
    let frames = frames_until_end(&p);
    assert_eq!(frames.len(), 3);
    assert!(
        frames
            .iter()
            .all(|r| r.captured.truth.is_some() && r.iou().is_some())
    );
    assert!(log.lock().unwrap().contains(&"seeds 32x24".to_string()));

    let missing = std::env::temp_dir().join("livecut-no-such-dir/none.png");
    p.send(Command::SetSource(SourceSpec::Image(missing)));
    assert!(matches!(next(&p), Event::SourceFailed { message: m, .. } if m.contains("none.png")));
}

/// A window's seeds and its source switch cross on the way: seeds drawn on the old
/// source's frames and sent after the switch must not reach the new source (they did,
/// and the window's reopened demo failed every frame on 160x120 seeds).
#[test]
fn seeds_made_for_a_replaced_source_are_dropped() {
    let (p, gate, log, _) = start_gated(with_seeds());
    assert!(matches!(next(&p), Event::SourceOpened(info) if info.id == SourceId::FIRST));
    p.send(Command::SetSource(small_demo(2)));
    p.send(Command::SetSeeds {
        source: SourceId::FIRST,
        seeds: seeds(true),
    });
    p.send(Command::ClearSeeds {
        source: SourceId::FIRST,
    });
    drop(gate);
    match next(&p) {
        Event::SourceOpened(info) => assert_eq!(info.id, SourceId(1)),
        other => panic!("{other:?}"),
    }
    let frames = frames_until_end(&p);
    assert_eq!(frames.len(), 2);
    assert!(
        frames.iter().all(|r| r.output.is_some()),
        "cut with the demo's seeds"
    );
    let seeds_set = || {
        let log = log.lock().unwrap();
        let set = log.iter().filter(|l| l.starts_with("seeds"));
        set.cloned().collect::<Vec<_>>()
    };
    assert_eq!(
        seeds_set(),
        ["seeds 4x2", "seeds 32x24"],
        "only the first source's and the demo's own seeds"
    );
    // Seeds for the source now running are taken.
    p.send(Command::SetSeeds {
        source: SourceId(1),
        seeds: seeds(true),
    });
    drop(p.finish());
    assert_eq!(seeds_set(), ["seeds 4x2", "seeds 32x24", "seeds 4x2"]);
}

/// Records the nice value of the thread that calls it: the worker's through the
/// processor, the capture thread's through the source.
#[cfg(target_os = "linux")]
struct NiceProbe<T> {
    inner: T,
    seen: Arc<Mutex<Vec<i32>>>,
}

#[cfg(target_os = "linux")]
impl<T> NiceProbe<T> {
    fn record(&self) {
        let nice = livecut::pipeline::priority::current_niceness().expect("Linux");
        self.seen.lock().unwrap().push(nice);
    }
}

#[cfg(target_os = "linux")]
impl FrameProcessor for NiceProbe<FakeProcessor> {
    fn process(&mut self, frame: &Frame) -> Result<SegmentOutput, SegmentError> {
        self.record();
        self.inner.process(frame)
    }
    fn set_seeds(&mut self, seeds: Seeds) {
        self.inner.set_seeds(seeds)
    }
    fn set_params(&mut self, params: SegmentParams) {
        self.inner.set_params(params)
    }
    fn set_engine(&mut self, engine: Box<dyn Engine>) {
        self.inner.set_engine(engine)
    }
    fn engine_kind(&self) -> EngineKind {
        self.inner.engine_kind()
    }
}

#[cfg(target_os = "linux")]
impl FrameSource for NiceProbe<Counter> {
    fn describe(&self) -> String {
        self.inner.describe()
    }
    fn size(&self) -> (u32, u32) {
        self.inner.size()
    }
    fn is_live(&self) -> bool {
        self.inner.is_live()
    }
    fn next_frame(&mut self) -> Result<Option<CapturedFrame>, CaptureError> {
        self.record();
        self.inner.next_frame()
    }
}

#[cfg(target_os = "linux")]
#[test]
fn a_background_pipeline_runs_its_threads_below_the_starting_thread() {
    use livecut::pipeline::priority::{BACKGROUND_NICENESS, current_niceness};
    let mine = current_niceness().expect("Linux");
    for background in [false, true] {
        let (fake, _) = FakeProcessor::new(Duration::ZERO);
        let (counter, _) = Counter::new(Some(3), false);
        let worker_seen = Arc::new(Mutex::new(Vec::new()));
        let capture_seen = Arc::new(Mutex::new(Vec::new()));
        let options = PipelineOptions {
            background,
            ..with_seeds()
        };
        let processor = NiceProbe {
            inner: fake,
            seen: worker_seen.clone(),
        };
        let source = NiceProbe {
            inner: counter,
            seen: capture_seen.clone(),
        };
        let p = Pipeline::start(processor, Box::new(source), options).unwrap();
        assert_eq!(frames_until_end(&p).len(), 3);
        let expected = if background {
            (mine + BACKGROUND_NICENESS).min(19)
        } else {
            mine
        };
        for (thread, seen) in [("worker", &worker_seen), ("capture", &capture_seen)] {
            let seen = seen.lock().unwrap();
            assert!(!seen.is_empty(), "{thread} thread ran");
            assert!(
                seen.iter().all(|&n| n == expected),
                "background={background}: {thread} thread nice values {seen:?}, expected {expected}"
            );
        }
    }
    assert_eq!(
        current_niceness(),
        Some(mine),
        "the caller keeps its priority"
    );
}

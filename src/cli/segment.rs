//! `livecut segment`: segment an image, a folder, a video, the demo scene or a camera
//! into one mask PNG per frame, with optional JSON Lines of per-frame timings.
//!
//! Everything that can be checked before the first frame is (input, seeds, engine,
//! output paths), so a bad run fails with one line and leaves no files. File sources
//! are read losslessly (every frame, in order); only cameras drop frames when the
//! solver falls behind, and the JSON lines say how many.

use anyhow::{Context, bail, ensure};
use image::RgbaImage;
use indicatif::{ProgressBar, ProgressStyle};
use livecut::capture::files;
use livecut::capture::{CapturedFrame, FrameSource, SourceSpec, StreamSettings};
use livecut::composite::{Backdrop, Composite, Compositor};
use livecut::compute::{AdapterChoice, ComputeDevice};
use livecut::energy::{SeedLabel, Seeds};
use livecut::grid::Connectivity;
use livecut::maxflow::{EngineChoice, create_volume_engine};
use livecut::output::VirtualCamera;
use livecut::pipeline::SegmentOutput;
use livecut::pipeline::volume::VolumeSegmenter;
use livecut::pipeline::{Event, FrameResult, Pipeline, PipelineOptions, Recorder, SegmentParams};
use livecut::pipeline::{GpuChoice, Hardware};
use std::collections::VecDeque;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Frames of the demo scene when `--frames` is not given (10 s at 30 fps).
const DEMO_FRAMES: u64 = 300;

/// Options of `livecut segment`.
#[derive(clap::Args, Debug)]
pub struct SegmentArgs {
    /// What to segment: an image, a folder of images (name order), a video file (read
    /// with ffmpeg), `demo` (built-in scene, still camera), `demo:pan` (the scene
    /// filmed by a panning camera), or `camera[:N]`.
    #[arg(long, short, value_name = "INPUT")]
    pub input: String,
    /// Seeds PNG for the first frame, the frame's size: grey ≥ 192 foreground, ≤ 64
    /// background, between unknown. Needed for all inputs but the demo, unless
    /// --background is given (then any seeds are hard constraints on every frame).
    #[arg(long, value_name = "PNG")]
    pub seeds: Option<PathBuf>,
    /// Learn the empty scene from the first N frames (a still camera), then segment
    /// every later frame by what differs from it, with no seeds needed. The learning
    /// frames' masks are all background, and their JSON records say `"learning": true`.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub background: u32,
    /// Folder for the masks (255 = foreground), created on the first frame; masks are
    /// named after input files, or 000000.png… for streams.
    #[arg(long, value_name = "DIR", default_value = "masks")]
    pub out: PathBuf,
    /// Engine: auto picks CUDA when a device is present, else the CPU.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,
    /// Where the energy around the cut runs: auto (CUDA beside the CUDA engine, else
    /// wgpu on a real GPU beside the CPU engine, else the CPU), cuda, wgpu (any adapter,
    /// software ones too) or none (the CPU).
    #[arg(long, value_enum, default_value_t = GpuChoice::Auto)]
    pub gpu: GpuChoice,
    /// Stop after N frames (default: all frames of a file, 300 of the demo, until
    /// interrupted for a camera).
    #[arg(long, value_name = "N")]
    pub frames: Option<u64>,
    /// Write one JSON object per frame (timings, flow, statistics) to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Smoothness neighbourhood: 4 or 8 [default: 4 for one image, 8 otherwise].
    #[arg(long, value_name = "4|8", value_parser = parse_connectivity)]
    pub connectivity: Option<Connectivity>,
    /// Smoothness weight λ [default: 40 for one image, 50 otherwise].
    #[arg(long, value_name = "X")]
    pub lambda: Option<f32>,
    /// Colour-model re-estimation iterations on a still image (0 = one cut) [default: 1
    /// for one image, 0 otherwise].
    #[arg(long, value_name = "N")]
    pub iterations: Option<u32>,
    /// Continue each frame from the previous frame's residual graph (on), or solve
    /// every frame from scratch (off).
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub dynamic: bool,
    /// Stochastic cuts in the CUDA engine: skip idle blocks and revisit them every few
    /// rounds (on), or visit every block every round (off). Exact either way.
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub stochastic: bool,
    /// Follow a moving camera (on): find how the foreground moved since the frame
    /// before and move the previous mask, the temporal prior, with it (the JSON's
    /// `motion`); a still object, or one the camera follows, moves none. Off: the prior
    /// stays where the last mask was. Not with --background (a still camera).
    #[arg(long, value_name = "on|off", default_value = "on", value_parser = parse_on_off, action = clap::ArgAction::Set)]
    pub follow_motion: bool,
    /// Largest change of a pixel's channels between frames taken as sensor noise: the
    /// pixel keeps its colour, so the still parts of consecutive frames stay identical
    /// and dynamic updates pay with a still camera (0 = off). With --background, a
    /// camera noisier than this allows for gets the gate its noise seen while learning
    /// needs (the JSON's `noise_gate`).
    #[arg(long, value_name = "LEVELS", default_value_t = SegmentParams::default().noise_gate)]
    pub noise_gate: u8,
    /// Cut at 1/K of the frame's width and height (1 = full size, at most 4) and bring
    /// each mask back to full size along the frame's edges: for a machine that cannot
    /// keep up with the source.
    #[arg(long, value_name = "K", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=livecut::pipeline::MAX_WORKING_SCALE as i64))]
    pub working_scale: u32,
    /// Stop each frame's cut after MS milliseconds of the engine's call and keep the
    /// cut reached: the JSON's `stopped` gives the flow pushed and that cut's capacity,
    /// whose gap bounds how far it is from minimum; the next frame continues from
    /// there (the CUDA engine stops at its next whole global relabel). Off by default:
    /// every cut is exact.
    #[arg(long, value_name = "MS", value_parser = parse_budget)]
    pub budget_ms: Option<Duration>,
    /// Drop foreground components smaller than PX pixels and fill smaller background
    /// holes (0 = off), as the window's cleanup slider does.
    #[arg(long, value_name = "PX", default_value_t = 0)]
    pub min_area: u32,
    /// Close then open each mask with a 3×3 square after the cleanup: pinholes,
    /// one-pixel notches and specks go, so outlines flicker less; seeded pixels keep
    /// their labels. On by default for video, off for one image (where it gains
    /// nothing); the window's "Smooth outline" does the same.
    #[arg(long, value_name = "on|off", value_parser = parse_on_off)]
    pub smooth: Option<bool>,
    /// Cut N frames at a time as one x-y-t graph (files and the demo, not live
    /// sources): each pixel linked to itself in the previous and next frame by their
    /// colour likeness plus the temporal prior's weight; a volume's first frame takes
    /// the prior from the last frame cut; the noise gate and dynamic cuts are left out.
    /// The CPU engine cuts volumes.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=livecut::pipeline::volume::MAX_VOLUME_FRAMES as i64))]
    pub volume: Option<u32>,
    /// Frame size of the demo scene, and the size asked of a camera.
    #[arg(long, value_name = "WxH", default_value = "640x480", value_parser = parse_size)]
    pub size: (u32, u32),
    /// Frame rate of the demo scene, and the rate asked of a camera.
    #[arg(long, value_name = "FPS", default_value_t = 30)]
    pub fps: u32,
    /// Send the composited frames, at the source's rate, to this virtual camera: a
    /// v4l2loopback device such as /dev/video10, or file:PATH for raw YUYV frames.
    #[arg(long, value_name = "DEVICE")]
    pub virtual_camera: Option<String>,
    /// What the virtual camera shows: the cut-out on a checkerboard, the background
    /// blurred, or the background replaced by a picture.
    #[arg(long, value_name = "cutout|blur|replace:IMAGE", default_value = "blur", value_parser = parse_composite)]
    pub composite: CompositeArg,
}

/// The value of `--composite`.
#[derive(Clone, Debug)]
pub enum CompositeArg {
    /// The foreground on a checkerboard.
    CutOut,
    /// The background blurred.
    Blur,
    /// The background replaced by this picture.
    Replace(PathBuf),
}

fn parse_composite(text: &str) -> Result<CompositeArg, String> {
    match text {
        "cutout" => Ok(CompositeArg::CutOut),
        "blur" => Ok(CompositeArg::Blur),
        _ => match text.strip_prefix("replace:") {
            Some(path) if !path.is_empty() => Ok(CompositeArg::Replace(path.into())),
            _ => Err(format!(
                "expected cutout, blur or replace:IMAGE, got {text:?}"
            )),
        },
    }
}

fn parse_connectivity(text: &str) -> Result<Connectivity, String> {
    text.parse()
        .ok()
        .and_then(Connectivity::from_number)
        .ok_or_else(|| format!("expected 4 or 8, got {text:?}"))
}

pub(super) fn parse_on_off(text: &str) -> Result<bool, String> {
    match text {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("expected on or off, got {text:?}")),
    }
}

/// A frame budget in milliseconds (`--budget-ms`, of `segment` and `eval`).
pub(super) fn parse_budget(text: &str) -> Result<Duration, String> {
    match text.parse::<f64>() {
        Ok(ms) if ms.is_finite() && ms > 0.0 => Ok(Duration::from_secs_f64(ms / 1e3)),
        _ => Err(format!("expected milliseconds > 0, got {text:?}")),
    }
}

pub(super) fn parse_size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected WIDTHxHEIGHT such as 640x480, got {text:?}");
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    Ok((w.parse().map_err(|_| bad())?, h.parse().map_err(|_| bad())?))
}

/// Runs the command.
pub fn run(args: SegmentArgs) -> anyhow::Result<()> {
    ensure!(args.frames != Some(0), "--frames must be at least 1");
    let settings = StreamSettings {
        width: args.size.0,
        height: args.size.1,
        fps: args.fps,
    };
    let spec = SourceSpec::parse(&args.input, settings)?;
    let params = params_of(&args, matches!(spec, SourceSpec::Image(_)))?;
    let is_demo = matches!(spec, SourceSpec::Demo(_));
    let limit = args.frames.or(is_demo.then_some(DEMO_FRAMES));
    let source = spec.open()?;
    let seeds = if args.background > 0 {
        args.seeds
            .as_deref()
            .map(|path| read_seeds(path, source.size(), false))
            .transpose()?
    } else {
        Some(load_seeds(
            args.seeds.as_deref(),
            &args.input,
            source.as_ref(),
        )?)
    };
    check_outputs(&spec, &args.out)?;
    if let Some(depth) = args.volume {
        return run_volume(&args, depth, params, source, seeds, limit);
    }
    let mut camera = open_camera(&args, source.size())?;
    let mut hardware = Hardware::choose(args.engine, args.gpu)?;
    for note in &hardware.notes {
        eprintln!("note: {note}");
    }
    if let Some(camera) = &mut camera {
        camera.compose_on_gpu(hardware.compute.clone(), args.gpu);
    }
    let engine_kind = hardware.engine.kind();
    if params.budget.is_some() && !hardware.engine.set_budget(params.budget) {
        eprintln!("note: the {engine_kind} engine has no frame budget; its cuts stay exact");
    }
    let live = source.is_live();
    let total = match (source.len_hint(), limit) {
        (Some(n), Some(m)) => Some(n.min(m)),
        (n, m) => n.or(m),
    };
    let options = PipelineOptions {
        seeds,
        // Live sources drop frames when the solver is slow; the limit then counts
        // masks written, not frames captured.
        max_frames: if live { None } else { limit },
        ..PipelineOptions::default()
    };
    let start = Instant::now();
    let mut segmenter = hardware.segmenter(params)?;
    // the JSON says what changed each frame's capacities, by energy term
    segmenter.set_census(args.json.is_some());
    let pipeline = Pipeline::start(segmenter, source, options)
        .context("cannot start the segmentation threads")?;
    let progress = progress_bar(total);
    let mut recorder = Recorder::new(&args.out, args.json.as_deref());
    let outcome = consume(&pipeline, &mut recorder, camera.as_mut(), limit, &progress);
    progress.finish_and_clear();
    // Frames still in flight past the limit or after an error are not wanted.
    drop(pipeline.finish());
    let (frames, ms_per_frame, lost) = outcome?;
    recorder.finish()?;
    let wall = start.elapsed().as_secs_f64();
    println!(
        "{frames} mask(s) written to {} in {wall:.1} s ({ms_per_frame:.1} ms per frame, {engine_kind} engine)",
        recorder.dir().display()
    );
    if lost > 0 {
        println!("{lost} frame(s) of the input could not be decoded and were skipped");
    }
    if let Some(json) = &args.json {
        println!("per-frame statistics in {}", json.display());
    }
    if let Some(target) = &args.virtual_camera {
        println!("composites sent to {target}");
    }
    Ok(())
}

/// `segment --volume N`: reads the source at its own pace, cuts it N frames at a
/// time and writes each volume's masks as it completes.
fn run_volume(
    args: &SegmentArgs,
    depth: u32,
    params: SegmentParams,
    mut source: Box<dyn FrameSource>,
    seeds: Option<Seeds>,
    limit: Option<u64>,
) -> anyhow::Result<()> {
    ensure!(
        !source.is_live(),
        "--volume cuts files and the demo, not live sources (a frame's mask waits for its volume)"
    );
    let refused = [
        (args.virtual_camera.is_some(), "--virtual-camera"),
        (args.working_scale > 1, "--working-scale"),
        (args.budget_ms.is_some(), "--budget-ms"),
    ];
    if let Some((_, option)) = refused.iter().find(|(given, _)| *given) {
        bail!("--volume does not take {option}");
    }
    let (engine, note) = create_volume_engine(args.engine)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let engine_kind = engine.kind();
    let mut segmenter = VolumeSegmenter::new(engine, params, depth)?;
    if let Some(seeds) = seeds {
        segmenter.set_seeds(seeds);
    }
    let total = match (source.len_hint(), limit) {
        (Some(n), Some(m)) => Some(n.min(m)),
        (n, m) => n.or(m),
    };
    let progress = progress_bar(total);
    let mut recorder = Recorder::new(&args.out, args.json.as_deref());
    let start = Instant::now();
    // the frames whose masks are still to come, in order
    let mut waiting: VecDeque<Arc<CapturedFrame>> = VecDeque::new();
    let mut total_ms = 0.0;
    let mut write = |outputs: Vec<SegmentOutput>, waiting: &mut VecDeque<_>| {
        for output in outputs {
            let captured = waiting.pop_front().context("a mask without its frame")?;
            let result = FrameResult::single(captured, output, engine_kind);
            total_ms += result.timings.total_ms;
            recorder.record(&result)?;
            progress.inc(1);
        }
        anyhow::Ok(())
    };
    let mut read = 0u64;
    while limit.is_none_or(|n| read < n) {
        let Some(captured) = source
            .next_frame()
            .with_context(|| format!("reading {}", args.input))?
        else {
            break;
        };
        read += 1;
        let captured = Arc::new(captured);
        waiting.push_back(captured.clone());
        let outputs = segmenter
            .push(&captured.frame)
            .with_context(|| format!("frame {}", captured.frame.index))?;
        write(outputs, &mut waiting)?;
    }
    write(segmenter.finish().context("the last volume")?, &mut waiting)?;
    progress.finish_and_clear();
    recorder.finish()?;
    let frames = recorder.written();
    ensure!(frames > 0, "the input has no frames");
    println!(
        "{frames} mask(s) written to {} in {:.1} s ({:.1} ms per frame, volumes of {depth} frames, {engine_kind} engine)",
        recorder.dir().display(),
        start.elapsed().as_secs_f64(),
        total_ms / frames as f64,
    );
    if let Some(json) = &args.json {
        println!("per-frame statistics in {}", json.display());
    }
    Ok(())
}

/// The segmenter's parameters with the options applied: the still-image defaults
/// for one image, the video ones otherwise.
fn params_of(args: &SegmentArgs, still: bool) -> anyhow::Result<SegmentParams> {
    let base = if still {
        SegmentParams::still()
    } else {
        SegmentParams::default()
    };
    let mut params = SegmentParams {
        connectivity: args.connectivity.unwrap_or(base.connectivity),
        dynamic: args.dynamic,
        stochastic: args.stochastic,
        follow_motion: args.follow_motion,
        noise_gate: args.noise_gate,
        background_frames: args.background,
        working_scale: args.working_scale,
        budget: args.budget_ms,
        cleanup_min_area: args.min_area,
        cleanup_smooth: args.smooth.unwrap_or(base.cleanup_smooth),
        ..base
    };
    if let Some(lambda) = args.lambda {
        ensure!(
            lambda.is_finite() && lambda >= 0.0,
            "--lambda must be a number ≥ 0, got {lambda}"
        );
        params.lambda = lambda;
    }
    if let Some(iterations) = args.iterations {
        params.iterations = iterations;
    }
    Ok(params)
}

/// The seeds file (checked against the frame size and for both labels), or the
/// source's own seeds (the demo's).
pub(super) fn load_seeds(
    path: Option<&Path>,
    input: &str,
    source: &dyn FrameSource,
) -> anyhow::Result<Seeds> {
    let (width, height) = source.size();
    let Some(path) = path else {
        return source.default_seeds().with_context(|| {
            format!(
                "--seeds PNG is needed for {input} (a {width}x{height} grey image: ≥ 192 foreground, ≤ 64 background)"
            )
        });
    };
    read_seeds(path, (width, height), true)
}

/// A seeds file checked against the frame size and, where `both`, for a foreground
/// and a background seed.
pub(super) fn read_seeds(
    path: &Path,
    (width, height): (u32, u32),
    both: bool,
) -> anyhow::Result<Seeds> {
    let seeds = files::read_seeds(path).with_context(|| format!("seeds {}", path.display()))?;
    seeds
        .check_size(width, height)
        .with_context(|| format!("seeds {}", path.display()))?;
    if !both {
        return Ok(seeds);
    }
    ensure!(
        seeds.count(SeedLabel::Foreground) > 0,
        "seeds {} have no foreground seed (no pixel ≥ 192)",
        path.display()
    );
    ensure!(
        seeds.count(SeedLabel::Background) > 0,
        "seeds {} have no background seed (no pixel ≤ 64)",
        path.display()
    );
    Ok(seeds)
}

/// Refuses an output folder where a mask would replace an input image.
fn check_outputs(spec: &SourceSpec, out: &Path) -> anyhow::Result<()> {
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    match spec {
        SourceSpec::Folder(dir) if same(dir, out) => {
            bail!(
                "--out {} is the input folder; masks would mix with (or replace) its images",
                out.display()
            )
        }
        SourceSpec::Image(path) => {
            let stem = path.file_stem().unwrap_or_default().to_string_lossy();
            let target = out.join(format!("{stem}.png"));
            ensure!(
                !same(path, &target),
                "the mask {} would replace the input image; choose another --out",
                target.display()
            );
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Writes results as they come until the stream ends or `limit` masks are written;
/// returns the count, the mean decode-to-mask milliseconds and the frames the source
/// could not decode (reported as they show).
fn consume(
    pipeline: &Pipeline,
    recorder: &mut Recorder,
    mut camera: Option<&mut CameraOut>,
    limit: Option<u64>,
    progress: &ProgressBar,
) -> anyhow::Result<(u64, f64, u64)> {
    let mut total_ms = 0.0;
    let mut gaps = Gaps::default();
    let mut stops = Stops::default();
    let summary = |recorder: &Recorder, total_ms: f64, lost: u64, stops: &Stops| {
        let n = recorder.written();
        ensure!(n > 0, "the input has no frames");
        stops.report(n);
        Ok((n, total_ms / n as f64, lost))
    };
    for event in pipeline.events() {
        match event {
            Event::Frame(result) => {
                let index = result.captured.frame.index;
                if let Some(error) = &result.error {
                    bail!("frame {index}: {error}");
                }
                if let Some(first) = gaps.skipped(index, result.dropped) {
                    progress.suspend(|| {
                        eprintln!(
                            "warning: frames {first} to {} of the input could not be decoded; skipped",
                            index - 1
                        )
                    });
                }
                recorder.record(&result)?;
                if let Some(camera) = camera.as_deref_mut() {
                    camera.send(&result)?;
                }
                total_ms += result.timings.total_ms;
                stops.count(&result);
                progress.inc(1);
                if limit.is_some_and(|n| recorder.written() >= n) {
                    return summary(recorder, total_ms, gaps.lost, &stops);
                }
            }
            Event::SourceEnded(_) => return summary(recorder, total_ms, gaps.lost, &stops),
            Event::SourceFailed { message, .. } | Event::CommandFailed(message) => {
                bail!("{message}")
            }
            Event::GpuFailed(why) => progress.suspend(|| eprintln!("note: {why}")),
            Event::SourceOpened(_) | Event::EngineChanged { .. } | Event::EnergyChanged(_) => {}
        }
    }
    bail!("the segmentation worker stopped unexpectedly")
}

/// The frames whose cut stopped at the budget, and the largest gap among them.
#[derive(Default)]
struct Stops {
    frames: u64,
    worst: f64,
}

impl Stops {
    /// Counts `result` if its cut stopped at the budget.
    fn count(&mut self, result: &FrameResult) {
        let stopped = result.output.as_ref().and_then(|o| o.stats.stopped);
        if let Some(c) = stopped {
            self.frames += 1;
            self.worst = self.worst.max(c.relative_gap());
        }
    }

    /// Says how many of `frames` stopped at the budget, if any did.
    fn report(&self, frames: u64) {
        if self.frames > 0 {
            println!(
                "{} of {frames} frame(s) stopped at the budget; the largest gap was {:.3} % of the flow",
                self.frames,
                100.0 * self.worst
            );
        }
    }
}

/// The virtual camera of `--virtual-camera` and what it shows.
struct CameraOut {
    camera: VirtualCamera,
    composite: Composite,
    /// Composes on a GPU where there is one, keeping its buffers from frame to frame.
    compositor: Compositor,
    image: RgbaImage,
}

impl CameraOut {
    /// Composes on the segmentation's wgpu device, or on a real GPU's where `gpu`
    /// allows one; says where (and why not, where the shaders do not compile).
    fn compose_on_gpu(&mut self, device: Option<ComputeDevice>, gpu: GpuChoice) {
        let device = device.or_else(|| match gpu {
            GpuChoice::Auto | GpuChoice::Cuda => ComputeDevice::open(AdapterChoice::RealGpu).ok(),
            GpuChoice::Wgpu | GpuChoice::None => None,
        });
        let Some(device) = device else { return };
        let adapter = device.adapter.clone();
        match Compositor::on(device) {
            Ok(compositor) => {
                eprintln!("note: the composites are made on {adapter} through wgpu");
                self.compositor = compositor;
            }
            Err(e) => eprintln!("note: the composites are made on the CPU ({e})"),
        }
    }

    /// Composites one result and sends it, once due.
    fn send(&mut self, result: &FrameResult) -> anyhow::Result<()> {
        let frame = &result.captured.frame;
        let mask = result
            .output
            .as_ref()
            .with_context(|| format!("frame {} has no mask to composite", frame.index))?;
        let image = &mut self.image;
        if let Some(e) = self
            .compositor
            .compose_into(&self.composite, frame, &mask.mask, image)
        {
            eprintln!("note: the GPU failed composing ({e}); composing on the CPU");
        }
        Ok(self.camera.send(image, frame.timestamp)?)
    }
}

/// Opens the virtual camera for frames of `size`, with its background picture, when
/// asked for: before the first frame, so a missing device fails the run at once.
fn open_camera(args: &SegmentArgs, size: (u32, u32)) -> anyhow::Result<Option<CameraOut>> {
    let Some(target) = &args.virtual_camera else {
        return Ok(None);
    };
    let composite = match &args.composite {
        CompositeArg::CutOut => Composite::CutOut,
        CompositeArg::Blur => Composite::Background(Backdrop::Blur),
        CompositeArg::Replace(path) => {
            let picture = image::open(path)
                .with_context(|| format!("background picture {}", path.display()))?;
            Composite::Background(Backdrop::Image(picture.into_rgb8().into()))
        }
    };
    let camera = VirtualCamera::open(target, size.0, size.1, args.fps)?;
    Ok(Some(CameraOut {
        camera,
        composite,
        compositor: Compositor::cpu(),
        image: RgbaImage::default(),
    }))
}

/// Frames missing from the stream: indices skipped by the source (a damaged stretch of
/// a video) beyond those the frame channel dropped.
#[derive(Default)]
struct Gaps {
    next: Option<u64>,
    lost: u64,
}

impl Gaps {
    /// Takes in the next frame's index; the first skipped index where frames are
    /// missing before it.
    fn skipped(&mut self, index: u64, dropped: u64) -> Option<u64> {
        let expected = self.next.unwrap_or(0);
        self.next = Some(index + 1);
        let missing = index.saturating_sub(expected).saturating_sub(dropped);
        self.lost += missing;
        (missing > 0).then_some(index - missing)
    }
}

/// A progress bar on a terminal (with a length where known), nothing otherwise.
fn progress_bar(len: Option<u64>) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let (bar, template) = match len {
        Some(n) => (
            ProgressBar::new(n),
            "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} frames ({per_sec}, eta {eta})",
        ),
        None => (
            ProgressBar::new_spinner(),
            "{spinner} [{elapsed_precise}] {pos} frames ({per_sec})",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

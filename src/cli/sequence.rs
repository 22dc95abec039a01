//! `livecut bench --sequence SOURCE`: segment a stream of frames with each engine, once
//! solving every frame from scratch (static) and once continuing from the kept graph
//! (dynamic), and print the median and 95th percentile of every stage per frame. With
//! `--background N` the first N frames teach the background (untimed) and the rest
//! are segmented with no seeds. Every back-end the machine has runs in the same run
//! (or those `--engine` names): the CPU engine with the CPU energy, then beside the wgpu
//! energy (on a real GPU, or any adapter with `--wgpu`); the CUDA engine with the energy
//! built on the CPU and uploaded, then with the whole frame on the device (every frame
//! of a learned background; the frames after the seeded one otherwise). Flows must be
//! the same in every run and masks the same within each engine; the table says so.

use super::segment::{load_seeds, read_seeds};
use anyhow::{Context, ensure};
use livecut::capture::{Frame, SourceSpec, StreamSettings};
use livecut::compute::{AdapterChoice, ComputeDevice};
use livecut::energy::Seeds;
use livecut::maxflow::EngineChoice;
use livecut::pipeline::{GpuChoice, Hardware, SegmentParams};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What `--sequence` runs on and how.
pub struct SequenceOptions<'a> {
    /// The source, as `livecut segment --input` takes it.
    pub source: &'a str,
    /// Frame size: the demo's, or the size files are resized to.
    pub size: Option<(u32, u32)>,
    /// Frames to segment (the first is a warm-up, left out of the figures).
    pub frames: u64,
    /// Seeds PNG for the first frame (the demo has its own).
    pub seeds: Option<&'a Path>,
    /// Frames to learn the background from before those segmented (0 = seeds).
    pub background: u32,
    /// Engines to time; empty: every engine the machine has.
    pub engines: &'a [EngineChoice],
    /// Time the CPU engine beside the wgpu energy on any adapter, software ones
    /// included (else only on a real GPU).
    pub wgpu: bool,
    /// Also write the rows as JSON here.
    pub json: Option<&'a PathBuf>,
}

/// Static (every frame from scratch) or dynamic (updates of the kept graph).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Static,
    Dynamic,
}

/// Median and 95th percentile of one stage, in milliseconds.
#[derive(Clone, Copy, Debug, Default, Serialize)]
struct Spread {
    median: f64,
    p95: f64,
}

impl Spread {
    fn of(mut values: Vec<f64>) -> Self {
        if values.is_empty() {
            return Self::default();
        }
        values.sort_by(f64::total_cmp);
        let at = |q: f64| values[((values.len() - 1) as f64 * q).round() as usize];
        Self {
            median: at(0.5),
            p95: at(0.95),
        }
    }
}

/// The stages of a frame, as the table names them; `engine` is the engine's whole call
/// (upload, cut and download: for the CPU engine, building its graph or applying the
/// changes to the kept one, the search, and reading the cut back).
const STAGES: [&str; 7] = [
    "energy", "upload", "cut", "download", "engine", "cleanup", "total",
];

/// One engine in one mode over the sequence.
#[derive(Debug, Serialize)]
struct Row {
    source: String,
    width: u32,
    height: u32,
    engine: String,
    /// Where the energy was built: `cpu`, `cuda` or `wgpu`.
    energy: String,
    /// The GPU that built it, where one did (the wgpu adapter and its API, or "CUDA").
    gpu: Option<String>,
    mode: Mode,
    /// Frames timed (the warm-up frame left out).
    frames: usize,
    /// Of those, the frames the engine continued from the kept graph.
    continued: usize,
    /// Per stage, in the order of [`STAGES`].
    stages: Vec<(String, Spread)>,
    /// The process's CPU time per frame (every thread's), where the system tells it:
    /// what a frame costs the machine, beside the wall time of `total`.
    cpu_ms: Option<Spread>,
    /// Whether every frame's flow equals this engine's first run's.
    same_flows: bool,
    /// Whether every frame's mask equals this engine's first run's.
    same_masks: bool,
    /// The first frame whose mask differs from the first run's (the CPU engine's where
    /// it ran): another engine's minimum cut where minimum cuts tie (see
    /// [`livecut::maxflow::CutSide`]); the later frames' temporal priors follow it.
    first_other_cut: Option<usize>,
    /// Whether every frame's flow equals the first run's up to that frame (all of them
    /// where there is none): the same maximum flows while the inputs are the same.
    same_flows_as_first: bool,
    /// Every frame's flow (the warm-up and learning frames included).
    flows: Vec<u64>,
}

/// The back-ends to run: (engine, energy device) pairs.
fn backends(options: &SequenceOptions) -> Vec<(EngineChoice, GpuChoice)> {
    let every = options.engines.is_empty();
    let engines: Vec<EngineChoice> = if every {
        let cuda = livecut::maxflow::cuda::CudaEngine::new().is_ok();
        [EngineChoice::Cpu]
            .into_iter()
            .chain(cuda.then_some(EngineChoice::Cuda))
            .collect()
    } else {
        options.engines.to_vec()
    };
    let mut out = Vec::new();
    for engine in engines {
        match engine {
            EngineChoice::Cpu => {
                out.push((engine, GpuChoice::None));
                let adapters = if options.wgpu {
                    Some(AdapterChoice::Any)
                } else {
                    every.then_some(AdapterChoice::RealGpu)
                };
                if adapters.is_some_and(|a| ComputeDevice::open(a).is_ok()) || options.wgpu {
                    out.push((engine, GpuChoice::Wgpu));
                }
            }
            _ => out.extend([(engine, GpuChoice::None), (engine, GpuChoice::Auto)]),
        }
    }
    out
}

/// Runs the sequence benchmark and prints its table.
pub fn run(options: &SequenceOptions) -> anyhow::Result<()> {
    ensure!(
        options.frames >= 2,
        "--frames must be at least 2 (the first is a warm-up)"
    );
    let (frames, seeds) = read_frames(options)?;
    let (width, height) = (frames[0].width, frames[0].height);
    eprintln!(
        "{} frames of {width}x{height} from {}",
        frames.len(),
        options.source
    );
    let mut rows = Vec::new();
    // the first run's flows and masks, and each engine's first run's masks
    let mut first: Option<Vec<(u64, u64)>> = None;
    let mut engine_first: Vec<(String, Vec<(u64, u64)>)> = Vec::new();
    for (choice, gpu) in backends(options) {
        for mode in [Mode::Static, Mode::Dynamic] {
            let hardware = Hardware::choose(choice, gpu)?;
            for note in &hardware.notes {
                eprintln!("note: {note}");
            }
            let engine_name = hardware.engine.kind().to_string();
            let energy = match gpu {
                GpuChoice::None => "on the CPU",
                GpuChoice::Wgpu => "in wgpu",
                GpuChoice::Auto | GpuChoice::Cuda => "on the GPU",
            };
            eprintln!("{engine_name} engine, the energy {energy}, {mode:?} ...");
            let run = run_one(options, &frames, seeds.as_ref(), hardware, mode)?;
            let outcomes = &run.outcomes;
            let first = first.get_or_insert_with(|| outcomes.clone());
            let reference = match engine_first.iter().find(|(e, _)| *e == engine_name) {
                Some((_, reference)) => reference,
                None => {
                    engine_first.push((engine_name.clone(), outcomes.clone()));
                    outcomes
                }
            };
            let same_flows = outcomes.iter().zip(reference).all(|(a, b)| a.0 == b.0);
            let same_masks = outcomes.iter().zip(reference).all(|(a, b)| a.1 == b.1);
            let pairs = || outcomes.iter().zip(first.iter());
            let first_other_cut = pairs().position(|(a, b)| a.1 != b.1);
            let same_flows_as_first = pairs()
                .take(first_other_cut.map_or(usize::MAX, |k| k + 1))
                .all(|(a, b)| a.0 == b.0);
            let learning = options.background as usize;
            rows.push(Row {
                source: options.source.to_string(),
                width,
                height,
                engine: engine_name,
                energy: run.energy,
                gpu: run.gpu,
                mode,
                frames: frames.len() - 1 - learning,
                continued: run.continued,
                stages: STAGES
                    .iter()
                    .zip(run.samples)
                    .map(|(name, values)| (name.to_string(), Spread::of(values)))
                    .collect(),
                cpu_ms: (!run.cpu.is_empty()).then(|| Spread::of(run.cpu)),
                same_flows,
                same_masks,
                first_other_cut,
                same_flows_as_first,
                flows: outcomes.iter().map(|o| o.0).collect(),
            });
        }
    }
    print_table(&rows);
    if let Some(path) = options.json {
        let text = serde_json::to_string_pretty(&rows)?;
        std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    }
    ensure!(
        rows.iter()
            .all(|r| r.same_flows && r.same_masks && r.same_flows_as_first),
        "the runs gave different flows, or one engine different masks"
    );
    Ok(())
}

/// What one run over the sequence measured.
struct Run {
    /// Per stage, each timed frame's milliseconds.
    samples: Vec<Vec<f64>>,
    /// Each timed frame's CPU milliseconds, where the system tells them.
    cpu: Vec<f64>,
    /// Every frame's flow and mask fingerprint.
    outcomes: Vec<(u64, u64)>,
    continued: usize,
    energy: String,
    gpu: Option<String>,
}

/// Segments `frames` on `hardware` in `mode`, timing every stage.
fn run_one(
    options: &SequenceOptions,
    frames: &[Frame],
    seeds: Option<&Seeds>,
    hardware: Hardware,
    mode: Mode,
) -> anyhow::Result<Run> {
    let params = SegmentParams {
        dynamic: mode == Mode::Dynamic,
        background_frames: options.background,
        ..SegmentParams::default()
    };
    let mut segmenter = hardware.segmenter(params)?;
    if let Some(seeds) = seeds {
        segmenter.set_seeds(seeds.clone());
    }
    let learning = options.background as usize;
    let mut run = Run {
        samples: vec![Vec::new(); STAGES.len()],
        cpu: Vec::new(),
        outcomes: Vec::new(),
        continued: 0,
        energy: String::new(),
        gpu: None,
    };
    for (k, frame) in frames.iter().enumerate() {
        let cpu_before = process_cpu_ms();
        let out = segmenter
            .segment(frame)
            .with_context(|| format!("frame {k}"))?;
        let cpu = process_cpu_ms().zip(cpu_before).map(|(a, b)| a - b);
        run.outcomes.push((out.flow, fingerprint(&out.mask.data)));
        if k <= learning {
            continue; // learning, and the warm-up: kernel compilation, allocations
        }
        run.continued += usize::from(out.stats.dynamic);
        run.energy = out.energy.to_string();
        run.gpu = out.gpu.clone();
        run.cpu.extend(cpu);
        let t = &out.timings;
        let s = &out.stats;
        for (samples, value) in run.samples.iter_mut().zip([
            t.energy_ms,
            s.upload_ms,
            s.solve_ms,
            s.readback_ms,
            s.upload_ms + s.solve_ms + s.readback_ms,
            t.cleanup_ms,
            t.total_ms,
        ]) {
            samples.push(value);
        }
    }
    Ok(run)
}

/// Reads the frames (resized where `--size` asks) and the first frame's seeds.
fn read_frames(options: &SequenceOptions) -> anyhow::Result<(Vec<Frame>, Option<Seeds>)> {
    let mut settings = StreamSettings::default();
    if let Some((width, height)) = options.size {
        (settings.width, settings.height) = (width, height);
    }
    let spec = SourceSpec::parse(options.source, settings)?;
    let mut source = spec.open()?;
    let seeds = match (options.background, options.seeds) {
        (0, path) => Some(load_seeds(path, options.source, source.as_ref())?),
        (_, None) => None,
        (_, Some(path)) => Some(read_seeds(path, source.size(), false)?),
    };
    let wanted = options.frames + u64::from(options.background);
    let mut frames = Vec::new();
    while (frames.len() as u64) < wanted {
        match source.next_frame()? {
            Some(captured) => frames.push(captured.frame),
            None => break,
        }
    }
    ensure!(
        frames.len() >= 2 + options.background as usize,
        "{} gave fewer than {} frames",
        options.source,
        2 + options.background
    );
    let Some((w, h)) = options.size else {
        return Ok((frames, seeds));
    };
    if (frames[0].width, frames[0].height) == (w, h) {
        return Ok((frames, seeds));
    }
    let frames = frames.into_iter().map(|f| resize(f, w, h)).collect();
    Ok((frames, seeds.map(|s| s.resized(w, h))))
}

/// `frame` scaled to `w`×`h` (bilinear).
fn resize(frame: Frame, w: u32, h: u32) -> Frame {
    let image = image::RgbImage::from_raw(frame.width, frame.height, frame.rgb)
        .expect("a frame holds width × height × 3 bytes");
    let scaled = image::imageops::resize(&image, w, h, image::imageops::FilterType::Triangle);
    Frame {
        width: w,
        height: h,
        rgb: scaled.into_raw(),
        ..frame
    }
}

/// CPU time the process has used so far, every thread's, in milliseconds (`None`
/// where the system does not tell it).
#[cfg(unix)]
fn process_cpu_ms() -> Option<f64> {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into `t`, which outlives the call.
    let ok = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut t) } == 0;
    ok.then_some(t.tv_sec as f64 * 1e3 + t.tv_nsec as f64 * 1e-6)
}

#[cfg(not(unix))]
fn process_cpu_ms() -> Option<f64> {
    None
}

/// A 64-bit FNV-1a hash: compares masks across runs without keeping them.
fn fingerprint(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn print_table(rows: &[Row]) {
    let mut header = format!(
        "{:<7} {:<6} {:<8} {:>6} {:>9}",
        "engine", "energy", "mode", "frames", "continued"
    );
    for stage in STAGES {
        header += &format!(" {:>17}", format!("{stage} med/p95"));
    }
    header += &format!(" {:>17}", "cpu med/p95");
    println!("{header}");
    for r in rows {
        let share = 100.0 * r.continued as f64 / r.frames.max(1) as f64;
        let mut line = format!(
            "{:<7} {:<6} {:<8} {:>6} {:>9}",
            r.engine,
            r.energy,
            format!("{:?}", r.mode).to_lowercase(),
            r.frames,
            format!("{} {share:.0}%", r.continued)
        );
        for (_, s) in &r.stages {
            line += &format!(" {:>8.3}/{:<8.3}", s.median, s.p95);
        }
        match &r.cpu_ms {
            Some(s) => line += &format!(" {:>8.3}/{:<8.3}", s.median, s.p95),
            None => line += &format!(" {:>17}", "-"),
        }
        println!("{line}");
    }
    for pair in rows.chunks(2) {
        if let [fixed, dynamic] = pair {
            let ratio = |k: usize| fixed.stages[k].1.median / dynamic.stages[k].1.median;
            let cpu = match (&fixed.cpu_ms, &dynamic.cpu_ms) {
                (Some(a), Some(b)) => format!(", cpu {:.2}x", a.median / b.median),
                _ => String::new(),
            };
            println!(
                "{} ({} energy): static/dynamic median cut {:.2}x, engine call {:.2}x, total {:.2}x{cpu}",
                fixed.engine,
                fixed.energy,
                ratio(2),
                ratio(4),
                ratio(6),
            );
        }
    }
    print_against_first(rows);
    print_identity(rows);
}

/// Each dynamic run's median total and CPU time against the first back-end's dynamic
/// run (the CPU alone, where it ran), measured in this run.
fn print_against_first(rows: &[Row]) {
    let dynamic: Vec<&Row> = rows.iter().filter(|r| r.mode == Mode::Dynamic).collect();
    let Some((base, others)) = dynamic.split_first() else {
        return;
    };
    let total = |r: &Row| r.stages[STAGES.len() - 1].1.median;
    for r in others {
        let cpu = match (&base.cpu_ms, &r.cpu_ms) {
            (Some(a), Some(b)) => format!(", cpu time {:.2} of it", b.median / a.median),
            _ => String::new(),
        };
        println!(
            "{} engine, {} energy, dynamic: median total {:.2}x the {} engine's with the {} energy{cpu}",
            r.engine,
            r.energy,
            total(base) / total(r),
            base.engine,
            base.energy,
        );
    }
}

/// Whether the runs agree: flows everywhere, masks within each engine and across.
fn print_identity(rows: &[Row]) {
    let runs = rows.len();
    let flows = if rows.iter().all(|r| r.same_flows) {
        "identical"
    } else {
        "DIFFER"
    };
    let masks = if rows.iter().all(|r| r.same_masks) {
        "identical"
    } else {
        "DIFFER"
    };
    let engines = rows.iter().filter(|r| r.engine != rows[0].engine).count();
    let across = match rows.iter().filter_map(|r| r.first_other_cut).min() {
        _ if engines == 0 => String::new(),
        None => ", identical across engines too".to_string(),
        Some(k) => {
            let flows = if rows.iter().all(|r| r.same_flows_as_first) {
                "the same"
            } else {
                "DIFFERENT"
            };
            format!(
                "; across engines {flows} flows up to frame {k}, where their cuts first differ on a tie (each engine's own minimum cut; the later frames' priors follow it)"
            )
        }
    };
    println!("{runs} runs: flows {flows}; masks {masks} within each engine{across}");
    for r in rows
        .iter()
        .filter(|r| !(r.same_flows && r.same_flows_as_first))
    {
        let differ: Vec<String> = r
            .flows
            .iter()
            .zip(&rows[0].flows)
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(5)
            .map(|(k, (a, b))| format!("frame {k}: {a} against {b}"))
            .collect();
        println!(
            "  {} engine, {} energy, {:?}: {}",
            r.engine,
            r.energy,
            r.mode,
            differ.join(", ")
        );
    }
}

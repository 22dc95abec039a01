//! `livecut eval`: segment still images with their seed files, or a video from seeds on
//! its first frame or from a background learned on its first frames, and score the
//! masks against ground truth by intersection over union; videos also by CDnet's
//! F-measure and by flicker (ground-truth pixels of value 128, GrabCut's unlabelled
//! boundary band and CDnet's unknown, are left out). Everything is checked and computed before anything is printed or
//! written, so a failure leaves one error line and no partial output.

use anyhow::{Context, bail, ensure};
use livecut::capture::Frame;
use livecut::capture::files::{read_image, read_seeds};
use livecut::energy::{ColorModelKind, Seeds};
use livecut::grid::{Connectivity, Mask};
use livecut::maxflow::{EngineChoice, create_volume_engine};
use livecut::pipeline::volume::VolumeSegmenter;
use livecut::pipeline::{FrameTiming, SegmentOutput, SegmentParams, Segmenter};
use livecut::pipeline::{GpuChoice, Hardware};
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Options of `livecut eval`.
#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// Folder of still images; each needs a seeds file (--seeds) and a ground-truth
    /// mask (--gt) with the same file stem.
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "frames",
        conflicts_with = "frames"
    )]
    pub images: Option<PathBuf>,
    /// Folder of seed images (0/64 background, 128 unknown, 255 foreground) for --images.
    #[arg(long, value_name = "DIR", requires = "images")]
    pub seeds: Option<PathBuf>,
    /// Folder of video frames, in file-name order; seeds come from the first frame only.
    #[arg(long, value_name = "DIR")]
    pub frames: Option<PathBuf>,
    /// Folder of ground-truth masks (same stems; 255 object, 0 background, 128 ignored).
    #[arg(long, value_name = "DIR")]
    pub gt: PathBuf,
    /// Seeds of the first video frame: `auto` derives them from the first ground-truth
    /// mask (eroded by --seed-margin = foreground, beyond the mask dilated by it =
    /// background), or a seeds PNG.
    #[arg(
        long,
        value_name = "auto|PNG",
        default_value = "auto",
        requires = "frames"
    )]
    pub first_seeds: String,
    /// Learn the background from the first N video frames and segment the rest with
    /// no seeds (a seeds PNG in --first-seeds is then a hard constraint on every
    /// frame); the learning frames are not scored.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "frames")]
    pub background: u32,
    /// Erosion/dilation radius in pixels for `--first-seeds auto`.
    #[arg(long, value_name = "PX", default_value_t = 7)]
    pub seed_margin: u32,
    /// Cut each frame from scratch (static), continue from the residual graph
    /// (dynamic), or run both, check they agree, and report both cut times.
    #[arg(long, value_enum, default_value_t = Mode::Dynamic)]
    pub mode: Mode,
    /// Max-flow engine.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,
    /// Where the energy around the cut runs: auto (CUDA beside the CUDA engine, else
    /// wgpu on a real GPU beside the CPU engine, else the CPU), cuda, wgpu (any adapter,
    /// software ones too) or none (the CPU).
    #[arg(long, value_enum, default_value_t = GpuChoice::Auto)]
    pub gpu: GpuChoice,
    /// Write the final masks as PNGs into this folder (created if needed).
    #[arg(long, value_name = "DIR")]
    pub masks_out: Option<PathBuf>,
    /// Score the masks in this folder (the frames' stems, ≥ 128 foreground) instead of
    /// segmenting: another method's masks scored by the same code and definitions as
    /// livecut's. With --background N its first N frames are not scored, else the
    /// first.
    #[arg(long, value_name = "DIR", requires = "frames")]
    pub score_masks: Option<PathBuf>,
    /// Cut the video N frames at a time as one x-y-t graph (`segment --volume`) instead
    /// of frame by frame; the milliseconds per frame are each volume's shared out.
    #[arg(long, value_name = "N", requires = "frames", conflicts_with = "score_masks", value_parser = clap::value_parser!(u32).range(2..=livecut::pipeline::volume::MAX_VOLUME_FRAMES as i64))]
    pub volume: Option<u32>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub params: ParamArgs,
}

/// Static cuts, dynamic cuts, or both.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Every cut from scratch.
    Static,
    /// Later cuts continue from the engine's residual graph.
    Dynamic,
    /// Both, compared mask by mask and flow by flow.
    Both,
}

/// Segmentation parameters on the command line; anything not given keeps the
/// default: [`SegmentParams::still`] for images, [`SegmentParams::default`] for video.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct ParamArgs {
    /// Smoothness weight λ.
    #[arg(long)]
    pub lambda: Option<f32>,
    /// Contrast σ (8-bit colour units); default: estimated per frame.
    #[arg(long)]
    pub sigma: Option<f32>,
    /// Neighbourhood: 4 or 8.
    #[arg(long, value_parser = parse_connectivity)]
    pub connectivity: Option<Connectivity>,
    /// GrabCut-style re-estimation iterations on a seeded frame.
    #[arg(long)]
    pub iterations: Option<u32>,
    /// Colour model: `hist:BITS` (bits per channel) or `gmm:K` (components).
    #[arg(long, value_parser = parse_color_model)]
    pub color_model: Option<ColorModelKind>,
    /// Weight of the temporal prior (nats; 0 = off).
    #[arg(long)]
    pub temporal: Option<f32>,
    /// Distance over which the temporal prior rises from the old boundary (pixels).
    #[arg(long)]
    pub temporal_ramp: Option<f32>,
    /// Minimum foreground component and hole area kept (pixels; 0 = off).
    #[arg(long)]
    pub min_area: Option<u32>,
    /// Drop foreground components touching no seed / no previous foreground.
    #[arg(long)]
    pub drop_unanchored: Option<bool>,
    /// Close then open each mask with a 3×3 square after the cleanup (on by default for
    /// video, off for images).
    #[arg(long, value_name = "on|off", value_parser = super::segment::parse_on_off)]
    pub smooth: Option<bool>,
    /// Noise gate between frames (grey levels; 0 = off).
    #[arg(long)]
    pub noise_gate: Option<u8>,
    /// Follow a moving camera: move the temporal prior with the foreground's shift
    /// since the frame before (on by default).
    #[arg(long, value_name = "on|off", value_parser = super::segment::parse_on_off)]
    pub follow_motion: Option<bool>,
    /// Weight of the learned-background data term.
    #[arg(long)]
    pub background_weight: Option<f32>,
    /// Stop each frame's cut after MS milliseconds of the engine's call (its
    /// certificate's gap is reported); off: every cut exact.
    #[arg(long, value_name = "MS", value_parser = super::segment::parse_budget)]
    pub budget_ms: Option<Duration>,
}

fn parse_connectivity(s: &str) -> Result<Connectivity, String> {
    s.parse::<u32>()
        .ok()
        .and_then(Connectivity::from_number)
        .ok_or_else(|| format!("expected 4 or 8, got {s:?}"))
}

fn parse_color_model(s: &str) -> Result<ColorModelKind, String> {
    let bad = || format!("expected hist:BITS (1-7) or gmm:K (1-16), got {s:?}");
    let (kind, n) = s.split_once(':').ok_or_else(bad)?;
    let n: u8 = n.parse().map_err(|_| bad())?;
    match kind {
        "hist" if (1..=7).contains(&n) => Ok(ColorModelKind::Histogram { bits: n }),
        "gmm" if (1..=16).contains(&n) => Ok(ColorModelKind::Gmm { components: n }),
        _ => Err(bad()),
    }
}

impl ParamArgs {
    /// `base` with the given options applied.
    pub fn params(&self, base: SegmentParams) -> SegmentParams {
        let mut p = base;
        if self.sigma.is_some() {
            p.sigma = self.sigma;
        }
        // Each given option replaces its field.
        macro_rules! given {
            ($($option:ident => $field:ident),*) => {
                $(if let Some(v) = self.$option { p.$field = v; })*
            };
        }
        given!(lambda => lambda, connectivity => connectivity, iterations => iterations);
        given!(color_model => color_model, temporal => temporal, temporal_ramp => temporal_ramp);
        given!(min_area => cleanup_min_area, drop_unanchored => drop_unanchored);
        given!(noise_gate => noise_gate, background_weight => background_weight);
        given!(follow_motion => follow_motion, smooth => cleanup_smooth);
        if self.budget_ms.is_some() {
            p.budget = self.budget_ms;
        }
        p
    }
}

/// The per-image or per-frame table: `first` heads the name column, `width` wide.
fn print_scores(first: &str, width: usize, rows: &[Scored]) {
    println!(
        "{first:<width$} {:>7} {:>8} {:>8} {:>8} {:>8}",
        "IoU", "ms", "energy", "cut", "cleanup"
    );
    for r in rows {
        println!(
            "{:<width$} {:>7.4} {:>8.1} {:>8.1} {:>8.1} {:>8.1}",
            r.name, r.iou, r.ms, r.timing.energy_ms, r.timing.cut_ms, r.timing.cleanup_ms
        );
    }
}

/// Score of one image or frame.
#[derive(Serialize, Debug, Clone)]
struct Scored {
    name: String,
    iou: f64,
    /// The `segment` call, timed around it.
    ms: f64,
    /// The segmenter's stage timings (no decoding: frames are read before the call).
    #[serde(flatten)]
    timing: FrameTiming,
    flow: u64,
    /// Where the cut stopped at its budget: its gap as a share of the flow.
    #[serde(skip_serializing_if = "Option::is_none")]
    relative_gap: Option<f64>,
    /// The frame taught the background and was not cut (nor scored).
    learning: bool,
    #[serde(skip)]
    mask: Mask,
    #[serde(skip)]
    counts: Counts,
    #[serde(skip)]
    gt: Vec<u8>,
}

/// True and false positives and false negatives of a mask against ground truth.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Counts {
    tp: u64,
    fp: u64,
    fn_: u64,
}

impl Counts {
    /// Counts of `mask` against `gt` (> 128 foreground; 128 left out).
    fn of(mask: &Mask, gt: &[u8]) -> Self {
        let mut c = Self::default();
        for (&m, &g) in mask.data.iter().zip(gt) {
            if g == 128 {
                continue;
            }
            let (a, b) = (m != 0, g > 128);
            c.tp += u64::from(a && b);
            c.fp += u64::from(a && !b);
            c.fn_ += u64::from(!a && b);
        }
        c
    }

    /// Share of the found foreground that is foreground.
    fn precision(self) -> f64 {
        ratio(self.tp, self.tp + self.fp)
    }

    /// Share of the foreground that was found.
    fn recall(self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }

    fn add(self, o: Self) -> Self {
        Self {
            tp: self.tp + o.tp,
            fp: self.fp + o.fp,
            fn_: self.fn_ + o.fn_,
        }
    }

    /// CDnet's F-measure 2TP / (2TP + FP + FN); 1 when there is nothing to find and
    /// nothing was found.
    fn f_measure(self) -> f64 {
        let denominator = 2 * self.tp + self.fp + self.fn_;
        if denominator == 0 {
            1.0
        } else {
            (2 * self.tp) as f64 / denominator as f64
        }
    }
}

/// `a / b`, 1 when both are 0.
fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 { 1.0 } else { a as f64 / b as f64 }
}

/// Flicker: of the pixels whose ground truth keeps its label between consecutive
/// frames (128 in either left out), the share whose mask label flips.
fn flicker(rows: &[Scored]) -> f64 {
    let (mut flips, mut steady) = (0u64, 0u64);
    for pair in rows.windows(2) {
        let (a, b) = (&pair[0], &pair[1]);
        for (((&ma, &mb), &ga), &gb) in a.mask.data.iter().zip(&b.mask.data).zip(&a.gt).zip(&b.gt) {
            if ga == 128 || gb == 128 || (ga > 128) != (gb > 128) {
                continue;
            }
            steady += 1;
            flips += u64::from((ma != 0) != (mb != 0));
        }
    }
    if steady == 0 {
        0.0
    } else {
        flips as f64 / steady as f64
    }
}

/// Runs the command.
pub fn run(args: EvalArgs) -> anyhow::Result<()> {
    if let Some(dir) = &args.masks_out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    match (&args.images, &args.frames) {
        (Some(images), None) => {
            let seeds = args
                .seeds
                .as_deref()
                .context("--images needs --seeds DIR")?;
            eval_images(
                &args,
                images,
                seeds,
                args.params.params(SegmentParams::still()),
            )
        }
        (None, Some(frames)) => {
            eval_video(&args, frames, args.params.params(SegmentParams::default()))
        }
        _ => bail!("give either --images DIR --seeds DIR or --frames DIR"),
    }
}

const IMAGE_EXTENSIONS: [&str; 5] = ["png", "jpg", "jpeg", "bmp", "tif"];

fn is_image(path: &Path) -> bool {
    path.is_file()
        && path
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// Image files of a folder, sorted by name.
fn list_images(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("cannot read {}", dir.display()))?;
    let mut files = Vec::new();
    for entry in entries {
        let path = entry
            .with_context(|| format!("cannot read {}", dir.display()))?
            .path();
        if is_image(&path) {
            files.push(path);
        }
    }
    files.sort();
    ensure!(!files.is_empty(), "no images in {}", dir.display());
    Ok(files)
}

fn stem(path: &Path) -> String {
    path.file_stem()
        .unwrap_or_default()
        .to_string_lossy()
        .into_owned()
}

/// The image file in `dir` with the given stem (PNG preferred).
fn find_by_stem(dir: &Path, name: &str, what: &str) -> anyhow::Result<PathBuf> {
    let png = dir.join(format!("{name}.png"));
    if png.is_file() {
        return Ok(png);
    }
    IMAGE_EXTENSIONS
        .iter()
        .map(|e| dir.join(format!("{name}.{e}")))
        .find(|p| p.is_file())
        .with_context(|| format!("no {what} for {name} in {}", dir.display()))
}

fn read_frame(path: &Path, index: u64) -> anyhow::Result<Frame> {
    let img = read_image(path)
        .with_context(|| format!("cannot read image {}", path.display()))?
        .into_rgb8();
    let (width, height) = img.dimensions();
    Ok(Frame {
        width,
        height,
        rgb: img.into_raw(),
        timestamp: Duration::ZERO,
        index,
    })
}

/// Ground truth as grey values, checked against the frame's size.
fn read_gt(path: &Path, frame: &Frame) -> anyhow::Result<Vec<u8>> {
    read_grey(path, "ground truth", (frame.width, frame.height))
}

/// An image read as grey values (`what`: ground truth, a mask), checked against the
/// frames' size.
fn read_grey(path: &Path, what: &str, (width, height): (u32, u32)) -> anyhow::Result<Vec<u8>> {
    let grey = read_image(path)
        .with_context(|| format!("cannot read {what} {}", path.display()))?
        .into_luma8();
    ensure!(
        grey.dimensions() == (width, height),
        "{what} {} is {}x{} but the image is {width}x{height}",
        path.display(),
        grey.width(),
        grey.height(),
    );
    Ok(grey.into_raw())
}

/// Intersection over union of the mask's foreground and the ground truth's (> 128),
/// leaving out ground-truth pixels of exactly 128. Two empty sets score 1.
fn iou(mask: &Mask, gt: &[u8]) -> f64 {
    let (mut inter, mut union) = (0u64, 0u64);
    for (&m, &g) in mask.data.iter().zip(gt) {
        if g == 128 {
            continue;
        }
        let (a, b) = (m != 0, g > 128);
        inter += u64::from(a && b);
        union += u64::from(a || b);
    }
    if union == 0 {
        1.0
    } else {
        inter as f64 / union as f64
    }
}

fn new_segmenter(args: &EvalArgs, params: SegmentParams) -> anyhow::Result<Segmenter> {
    let hardware = Hardware::choose(args.engine, args.gpu)?;
    for note in &hardware.notes {
        eprintln!("note: {note}");
    }
    Ok(hardware.segmenter(params)?)
}

fn modes(mode: Mode) -> &'static [bool] {
    match mode {
        Mode::Static => &[false],
        Mode::Dynamic => &[true],
        Mode::Both => &[false, true],
    }
}

/// One timed `segment` call, scored.
fn score(
    segmenter: &mut Segmenter,
    frame: &Frame,
    gt: &[u8],
    name: String,
) -> anyhow::Result<Scored> {
    let start = Instant::now();
    let out: SegmentOutput = segmenter.segment(frame).with_context(|| name.clone())?;
    let ms = start.elapsed().as_secs_f64() * 1e3;
    Ok(Scored {
        iou: iou(&out.mask, gt),
        ms,
        timing: out.timings,
        flow: out.flow,
        relative_gap: out.stats.stopped.map(|c| c.relative_gap()),
        learning: out.learning,
        counts: Counts::of(&out.mask, gt),
        mask: out.mask,
        gt: gt.to_vec(),
        name,
    })
}

/// The masks of another method, one per frame (`files`, ground truths `gts`), scored;
/// the first `learning` frames marked as learning (not scored).
fn given_masks(
    dir: &Path,
    files: &[PathBuf],
    gts: &[PathBuf],
    first: &Frame,
    learning: u32,
) -> anyhow::Result<Vec<Scored>> {
    let mut rows = Vec::new();
    for (i, (file, gt_path)) in files.iter().zip(gts).enumerate() {
        let name = stem(file);
        let path = find_by_stem(dir, &name, "mask")?;
        let grey = read_grey(&path, "mask", (first.width, first.height))?;
        let mask = Mask {
            width: first.width,
            height: first.height,
            data: grey
                .into_iter()
                .map(|v| if v >= 128 { 255 } else { 0 })
                .collect(),
        };
        let gt = read_gt(gt_path, first)?;
        rows.push(Scored {
            iou: iou(&mask, &gt),
            ms: 0.0,
            timing: FrameTiming::default(),
            flow: 0,
            relative_gap: None,
            learning: (i as u32) < learning,
            counts: Counts::of(&mask, &gt),
            mask,
            gt,
            name,
        });
    }
    Ok(rows)
}

/// The video's frames with their ground truths and names, read one at a time as they
/// are asked for, each checked to be the first frame's size.
fn read_frames<'a>(
    files: &'a [PathBuf],
    gts: &'a [PathBuf],
    first: &'a Frame,
) -> impl Iterator<Item = anyhow::Result<(Frame, Vec<u8>, String)>> + 'a {
    files
        .iter()
        .zip(gts)
        .enumerate()
        .map(|(i, (file, gt_path))| {
            let frame = read_frame(file, i as u64)?;
            ensure!(
                (frame.width, frame.height) == (first.width, first.height),
                "{} is {}x{} but the first frame is {}x{}",
                file.display(),
                frame.width,
                frame.height,
                first.width,
                first.height
            );
            let gt = read_gt(gt_path, &frame)?;
            Ok((frame, gt, stem(file)))
        })
}

/// The video cut as volumes of `depth` frames, scored frame by frame; each frame's
/// milliseconds are its own energy and its share of its volume's cut.
fn volume_rows(
    args: &EvalArgs,
    depth: u32,
    params: &SegmentParams,
    seeds: Option<Seeds>,
    frames: impl Iterator<Item = anyhow::Result<(Frame, Vec<u8>, String)>>,
) -> anyhow::Result<Vec<Scored>> {
    let (engine, note) = create_volume_engine(args.engine)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let mut segmenter = VolumeSegmenter::new(engine, params.clone(), depth)?;
    if let Some(seeds) = seeds {
        segmenter.set_seeds(seeds);
    }
    // the truths and names of the frames whose masks are still to come
    let mut waiting = std::collections::VecDeque::new();
    let mut rows = Vec::new();
    let mut score = |outputs: Vec<SegmentOutput>, waiting: &mut std::collections::VecDeque<_>| {
        for out in outputs {
            let (gt, name): (Vec<u8>, String) =
                waiting.pop_front().context("a mask without its frame")?;
            rows.push(Scored {
                iou: iou(&out.mask, &gt),
                ms: out.timings.total_ms,
                timing: out.timings,
                flow: out.flow,
                relative_gap: None,
                learning: out.learning,
                counts: Counts::of(&out.mask, &gt),
                mask: out.mask,
                gt,
                name,
            });
        }
        anyhow::Ok(())
    };
    for read in frames {
        let (frame, gt, name) = read?;
        waiting.push_back((gt, name.clone()));
        let outputs = segmenter.push(&frame).with_context(|| name)?;
        score(outputs, &mut waiting)?;
    }
    score(segmenter.finish().context("the last volume")?, &mut waiting)?;
    Ok(rows)
}

/// Checks that static and dynamic runs gave the same flows and masks.
fn check_agree(a: &[Scored], b: &[Scored]) -> anyhow::Result<()> {
    for (x, y) in a.iter().zip(b) {
        ensure!(
            x.flow == y.flow && x.mask == y.mask,
            "internal error: static and dynamic cuts differ on {} (flow {} vs {})",
            x.name,
            x.flow,
            y.flow
        );
    }
    Ok(())
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, n) = values.fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    if n == 0 { 0.0 } else { sum / n as f64 }
}

fn write_masks(dir: Option<&Path>, rows: &[Scored]) -> anyhow::Result<()> {
    let Some(dir) = dir else { return Ok(()) };
    for row in rows {
        let path = dir.join(format!("{}.png", row.name));
        row.mask
            .write_png(&path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

fn eval_images(
    args: &EvalArgs,
    images: &Path,
    seeds_dir: &Path,
    params: SegmentParams,
) -> anyhow::Result<()> {
    let files = list_images(images)?;
    let mut jobs = Vec::new();
    for file in &files {
        let name = stem(file);
        let seeds = find_by_stem(seeds_dir, &name, "seeds file")?;
        let gt = find_by_stem(&args.gt, &name, "ground truth")?;
        jobs.push((name, file, seeds, gt));
    }
    let mut runs = Vec::new();
    for &dynamic in modes(args.mode) {
        let mut segmenter = new_segmenter(
            args,
            SegmentParams {
                dynamic,
                ..params.clone()
            },
        )?;
        let mut rows = Vec::new();
        for (name, file, seeds_path, gt_path) in &jobs {
            let frame = read_frame(file, 0)?;
            let seeds = read_seeds(seeds_path).with_context(|| seeds_path.display().to_string())?;
            seeds
                .check_size(frame.width, frame.height)
                .with_context(|| seeds_path.display().to_string())?;
            let gt = read_gt(gt_path, &frame)?;
            segmenter.reset();
            segmenter.set_seeds(seeds);
            let mut row = score(&mut segmenter, &frame, &gt, name.clone())?;
            row.gt = Vec::new();
            rows.push(row);
        }
        runs.push((dynamic, rows));
    }
    if let [(_, a), (_, b)] = runs.as_slice() {
        check_agree(a, b)?;
    }
    let rows = &runs.last().expect("one run at least").1;
    write_masks(args.masks_out.as_deref(), rows)?;
    let mean_iou = mean(rows.iter().map(|r| r.iou));
    let mean_ms = mean(rows.iter().map(|r| r.ms));
    if args.json {
        let cut_ms: Vec<_> = runs
            .iter()
            .map(|(d, r)| serde_json::json!({"dynamic": d, "mean_cut_ms": mean(r.iter().map(|x| x.timing.cut_ms))}))
            .collect();
        let out = serde_json::json!({
            "mode": "images",
            "engine": args.engine,
            "params": params_json(&params),
            "images": rows,
            "mean_iou": mean_iou,
            "mean_ms": mean_ms,
            "cut_modes": cut_ms,
        });
        println!("{out}");
        return Ok(());
    }
    print_scores("image", 16, rows);
    println!("{:<16} {:>7.4} {:>8.1}", "mean", mean_iou, mean_ms);
    print_modes(&runs);
    Ok(())
}

fn print_modes(runs: &[(bool, Vec<Scored>)]) {
    if runs.len() > 1 {
        for (dynamic, rows) in runs {
            let label = if *dynamic { "dynamic" } else { "static" };
            println!(
                "{label:<8} cut {:.2} ms mean",
                mean(rows.iter().map(|r| r.timing.cut_ms))
            );
        }
    }
}

fn params_json(p: &SegmentParams) -> serde_json::Value {
    serde_json::json!({
        "lambda": p.lambda,
        "sigma": p.sigma,
        "connectivity": p.connectivity.number(),
        "iterations": p.iterations,
        "color_model": p.color_model,
        "temporal": p.temporal,
        "temporal_ramp": p.temporal_ramp,
        "min_area": p.cleanup_min_area,
        "smooth": p.cleanup_smooth,
        "drop_unanchored": p.drop_unanchored,
        "noise_gate": p.noise_gate,
        "background_frames": p.background_frames,
        "background_weight": p.background_weight,
    })
}

fn eval_video(args: &EvalArgs, frames_dir: &Path, params: SegmentParams) -> anyhow::Result<()> {
    let files = list_images(frames_dir)?;
    ensure!(
        files.len() >= 2,
        "{} holds one frame; a video needs two at least",
        frames_dir.display()
    );
    let gts = files
        .iter()
        .map(|f| find_by_stem(&args.gt, &stem(f), "ground truth"))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let first = read_frame(&files[0], 0)?;
    let seeds = if args.background > 0 && args.first_seeds == "auto" {
        None
    } else if args.first_seeds == "auto" {
        let grey = read_gt(&gts[0], &first)?;
        let mask = Mask {
            width: first.width,
            height: first.height,
            data: grey
                .into_iter()
                .map(|v| if v > 128 { 255 } else { 0 })
                .collect(),
        };
        Some(Seeds::from_mask(&mask, args.seed_margin))
    } else {
        let path = Path::new(&args.first_seeds);
        let seeds = read_seeds(path).with_context(|| path.display().to_string())?;
        seeds
            .check_size(first.width, first.height)
            .with_context(|| path.display().to_string())?;
        Some(seeds)
    };
    let params = SegmentParams {
        background_frames: args.background,
        ..params
    };
    ensure!(
        params.budget.is_none() || args.mode != Mode::Both,
        "--budget-ms makes masks differ between static and dynamic cuts: give --mode static or dynamic"
    );
    let mut runs = Vec::new();
    if let Some(dir) = &args.score_masks {
        runs.push((
            true,
            given_masks(dir, &files, &gts, &first, args.background)?,
        ));
    }
    if let Some(depth) = args.volume {
        ensure!(
            params.budget.is_none(),
            "--volume does not take --budget-ms"
        );
        let frames = read_frames(&files, &gts, &first);
        runs.push((
            false,
            volume_rows(args, depth, &params, seeds.clone(), frames)?,
        ));
    }
    let segmented: &[bool] = if runs.is_empty() {
        modes(args.mode)
    } else {
        &[]
    };
    for &dynamic in segmented {
        let mut segmenter = new_segmenter(
            args,
            SegmentParams {
                dynamic,
                ..params.clone()
            },
        )?;
        if let Some(seeds) = &seeds {
            segmenter.set_seeds(seeds.clone());
        }
        let mut rows = Vec::new();
        for read in read_frames(&files, &gts, &first) {
            let (frame, gt, name) = read?;
            rows.push(score(&mut segmenter, &frame, &gt, name)?);
        }
        runs.push((dynamic, rows));
    }
    if let [(_, a), (_, b)] = runs.as_slice() {
        check_agree(a, b)?;
    }
    let rows = &runs.last().expect("one run at least").1;
    write_masks(args.masks_out.as_deref(), rows)?;
    // Scored: the frames after the seeded one, or after the learning ones.
    let skip = |rows: &[Scored]| {
        if args.background > 0 {
            rows.iter().take_while(|r| r.learning).count()
        } else {
            1
        }
    };
    let first_scored = skip(rows);
    ensure!(
        first_scored < rows.len(),
        "no frame left to score after the {first_scored} first"
    );
    let later = &rows[first_scored..];
    let mean_iou = mean(later.iter().map(|r| r.iou));
    let mean_ms = mean(later.iter().map(|r| r.ms));
    let totals = later
        .iter()
        .map(|r| r.counts)
        .fold(Counts::default(), Counts::add);
    let f = totals.f_measure();
    let flick = flicker(later);
    let cut = |rows: &[Scored]| mean(rows[skip(rows)..].iter().map(|r| r.timing.cut_ms));
    // the figure speed is reported by (0 where no frame was cut)
    let cut_median = |rows: &[Scored]| {
        let cuts: Vec<f64> = rows[skip(rows)..].iter().map(|r| r.timing.cut_ms).collect();
        if cuts.is_empty() {
            0.0
        } else {
            super::bench::median(cuts)
        }
    };
    if args.json {
        let cut_ms: Vec<_> = runs
            .iter()
            .map(|(d, r)| {
                serde_json::json!({"dynamic": d, "mean_cut_ms": cut(r), "median_cut_ms": cut_median(r)})
            })
            .collect();
        let out = serde_json::json!({
            "mode": "video",
            "engine": args.engine,
            "volume": args.volume,
            "params": params_json(&params),
            "frames": rows,
            "first_frame_ms": rows[0].ms,
            "first_scored": first_scored,
            "mean_iou": mean_iou,
            "f_measure": f,
            "precision": totals.precision(),
            "recall": totals.recall(),
            "flicker": flick,
            "mean_ms": mean_ms,
            "cut_modes": cut_ms,
        });
        println!("{out}");
        return Ok(());
    }
    print_scores("frame", 10, rows);
    let timing = match &args.score_masks {
        Some(dir) => format!("masks from {}", dir.display()),
        None => format!("{mean_ms:.1} ms/frame (first frame {:.1} ms)", rows[0].ms),
    };
    println!(
        "frames {first_scored}..{}: mean IoU {:.4}, F-measure {f:.4} (precision {:.4}, recall {:.4}), flicker {flick:.5}, {timing}",
        rows.len() - 1,
        mean_iou,
        totals.precision(),
        totals.recall(),
    );
    let gaps: Vec<f64> = later.iter().filter_map(|r| r.relative_gap).collect();
    if !gaps.is_empty() {
        println!(
            "{} of {} scored frames stopped at the budget; certified gap median {:.3} %, largest {:.3} % of the flow",
            gaps.len(),
            later.len(),
            100.0 * super::bench::median(gaps.clone()),
            100.0 * gaps.iter().fold(0.0f64, |a, &b| a.max(b)),
        );
    }
    if runs.len() > 1 {
        for (dynamic, rows) in &runs {
            let label = if *dynamic { "dynamic" } else { "static" };
            println!(
                "{label:<8} cut median {:.2}, mean {:.2} ms/frame (frames {first_scored}..)",
                cut_median(rows),
                cut(rows)
            );
        }
        if let [(_, fixed), (_, dynamic)] = runs.as_slice() {
            println!(
                "dynamic cuts {:.2}x faster (medians)",
                cut_median(fixed) / cut_median(dynamic).max(1e-9)
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iou_ignores_the_boundary_band() {
        let mask = Mask {
            width: 4,
            height: 1,
            data: vec![255, 255, 0, 0],
        };
        assert_eq!(iou(&mask, &[255, 128, 0, 0]), 1.0);
        assert_eq!(iou(&mask, &[255, 0, 255, 128]), 1.0 / 3.0);
        assert_eq!(iou(&Mask::empty(2, 1), &[0, 0]), 1.0);
    }

    #[test]
    fn colour_model_syntax() {
        assert_eq!(
            parse_color_model("hist:5"),
            Ok(ColorModelKind::Histogram { bits: 5 })
        );
        assert_eq!(
            parse_color_model("gmm:5"),
            Ok(ColorModelKind::Gmm { components: 5 })
        );
        assert!(parse_color_model("gmm:0").is_err());
        assert!(parse_color_model("hist").is_err());
        assert!(parse_connectivity("6").is_err());
    }
}

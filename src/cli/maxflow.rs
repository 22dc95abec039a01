//! `livecut maxflow FILE`: solve one DIMACS grid instance, 2D or 3D.

use anyhow::{Context, anyhow};
use livecut::grid::cut_capacity;
use livecut::maxflow::dimacs::{self, DimacsError, Instance};
use livecut::maxflow::{CutSide, EngineChoice, Solution, create_engine, create_volume_engine};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `livecut maxflow`.
#[derive(clap::Args, Debug)]
pub struct MaxflowArgs {
    /// DIMACS grid instance (`c grid W H C` first line, or `c grid W H D C` for a
    /// volume), plain or gzip.
    pub file: PathBuf,
    /// Engine: auto picks CUDA when a device is present, else the CPU (volumes: the CPU).
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,
    /// Write the minimum cut as an 8-bit PNG (255 = source side; a volume's is
    /// W × (H·D), slice z in rows z·H to z·H + H − 1).
    #[arg(long, value_name = "PNG")]
    pub mask_out: Option<PathBuf>,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Reads an instance of either dimension, turning parse errors into `FILE:LINE: what`
/// messages; also returns the milliseconds the read took.
pub fn load_any_instance(path: &Path) -> anyhow::Result<(Instance, f64)> {
    let start = Instant::now();
    let instance = dimacs::read_instance_path(path).map_err(|e| match e {
        DimacsError::Syntax { line, message } => anyhow!("{}:{line}: {message}", path.display()),
        other => anyhow!("{}: {other}", path.display()),
    })?;
    Ok((instance, start.elapsed().as_secs_f64() * 1e3))
}

/// What the report says of the grid, whichever its dimension.
pub struct Shape {
    /// Width.
    pub width: u32,
    /// Height.
    pub height: u32,
    /// Slices (`None` for a 2D grid).
    pub depth: Option<u32>,
    /// Neighbours per pixel or voxel.
    pub connectivity: u32,
    /// Pixels or voxels.
    pub pixels: usize,
}

impl Shape {
    /// The shape of `instance`.
    pub fn of(instance: &Instance) -> Self {
        match instance {
            Instance::Plane(p) => Self {
                width: p.width(),
                height: p.height(),
                depth: None,
                connectivity: p.connectivity().number(),
                pixels: p.pixels(),
            },
            Instance::Volume(v) => Self {
                width: v.width(),
                height: v.height(),
                depth: Some(v.depth()),
                connectivity: v.connectivity().number(),
                pixels: v.voxels(),
            },
        }
    }

    /// "WxH" or "WxHxD".
    pub fn size(&self) -> String {
        match self.depth {
            None => format!("{}x{}", self.width, self.height),
            Some(d) => format!("{}x{}x{d}", self.width, self.height),
        }
    }
}

/// The engine's answer and what the report says of the engine.
struct Solved {
    solution: Solution,
    cut: u64,
    name: &'static str,
    description: String,
    cut_side: CutSide,
}

/// Solves `instance` with the chosen engine (volumes with the volume engine) and
/// computes its cut's capacity.
fn solve(instance: &Instance, choice: EngineChoice) -> anyhow::Result<Solved> {
    match instance {
        Instance::Plane(problem) => {
            let (mut engine, note) = create_engine(choice)?;
            print_note(note);
            let solution = engine
                .solve(problem)
                .with_context(|| format!("{} engine", engine.name()))?;
            let cut = cut_capacity(problem, &solution.mask);
            Ok(Solved {
                cut,
                name: engine.name(),
                description: engine.description(),
                cut_side: engine.cut_side(),
                solution,
            })
        }
        Instance::Volume(problem) => {
            let (mut engine, note) = create_volume_engine(choice)?;
            print_note(note);
            let name = engine.kind().as_str();
            let solution = engine
                .solve(problem)
                .with_context(|| format!("{name} engine"))?;
            let cut = problem.cut_capacity(&solution.mask)?;
            Ok(Solved {
                cut,
                name,
                description: engine.description(),
                cut_side: engine.cut_side(),
                solution,
            })
        }
    }
}

fn print_note(note: Option<String>) {
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
}

/// Runs the command.
pub fn run(args: MaxflowArgs) -> anyhow::Result<()> {
    let (instance, read_ms) = load_any_instance(&args.file)?;
    let shape = Shape::of(&instance);
    let solved = solve(&instance, args.engine)?;
    let solution = &solved.solution;
    anyhow::ensure!(
        solved.cut == solution.flow,
        "internal error: the {} engine's cut has capacity {} but its flow is {}",
        solved.name,
        solved.cut,
        solution.flow
    );
    if let Some(path) = &args.mask_out {
        solution
            .mask
            .write_png(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    if args.json {
        print_json(&args, &shape, &solved, read_ms);
    } else {
        print_text(&args, &shape, &solved, read_ms);
    }
    Ok(())
}

fn print_json(args: &MaxflowArgs, shape: &Shape, solved: &Solved, read_ms: f64) {
    let s = &solved.solution.stats;
    // the GPU engine's own counts; the CPU engine reports none
    let gpu = s.gpu.unwrap_or_default();
    let out = json!({
        "file": args.file.display().to_string(),
        "flow": solved.solution.flow,
        "cut_capacity": solved.cut,
        "width": shape.width,
        "height": shape.height,
        "depth": shape.depth,
        "connectivity": shape.connectivity,
        "engine": solved.name,
        "engine_description": solved.description,
        "cut_side": solved.cut_side,
        "read_ms": read_ms,
        "build_ms": s.upload_ms,
        "solve_ms": s.solve_ms,
        "readback_ms": s.readback_ms,
        "iterations": s.iterations,
        "global_relabels": gpu.global_relabels,
        "launches": gpu.launches,
        "engine_bytes": s.engine_bytes,
        "sweeps": s.gpu.map(|g| g.sweeps),
        "memory_floor_ms": s.gpu.and_then(|g| g.memory_floor_ms),
        "source_side_pixels": solved.solution.mask.count_source(),
    });
    println!("{out}");
}

fn print_text(args: &MaxflowArgs, shape: &Shape, solved: &Solved, read_ms: f64) {
    let solution = &solved.solution;
    let s = &solution.stats;
    let unit = if shape.depth.is_some() {
        "voxel"
    } else {
        "pixel"
    };
    println!("{}", args.file.display());
    println!(
        "  grid        {} {}-connected",
        shape.size(),
        shape.connectivity
    );
    println!("  engine      {} ({})", solved.name, solved.description);
    println!("  max flow    {}", solution.flow);
    println!(
        "  min cut     {} source-side {unit}s ({})",
        solution.mask.count_source(),
        solved.cut_side.describe()
    );
    println!("  read        {read_ms:.1} ms");
    println!("  build       {:.1} ms", s.upload_ms);
    println!(
        "  solve       {:.1} ms ({} iterations)",
        s.solve_ms, s.iterations
    );
    if let Some((sweeps, Some(floor))) = s.gpu.map(|g| (g.sweeps, g.memory_floor_ms)) {
        println!(
            "  sweeps      {sweeps:.1} over the grid's state, {floor:.3} ms at full memory bandwidth"
        );
    }
    println!(
        "  memory      {:.1} MB ({:.1} bytes/{unit})",
        s.engine_bytes as f64 / 1e6,
        s.engine_bytes as f64 / shape.pixels as f64
    );
    if let Some(path) = &args.mask_out {
        println!("  mask        {}", path.display());
    }
}

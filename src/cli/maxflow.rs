//! `livecut maxflow FILE`: solve one DIMACS grid instance.

use anyhow::{Context, anyhow};
use livecut::grid::{GridProblem, cut_capacity};
use livecut::maxflow::dimacs::{self, DimacsError};
use livecut::maxflow::{EngineChoice, create_engine};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Options of `livecut maxflow`.
#[derive(clap::Args, Debug)]
pub struct MaxflowArgs {
    /// DIMACS grid instance (`c grid W H C` first line), plain or gzip.
    pub file: PathBuf,
    /// Engine: auto picks CUDA when a device is present, else the CPU.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub engine: EngineChoice,
    /// Write the minimum cut as an 8-bit PNG (255 = source side).
    #[arg(long, value_name = "PNG")]
    pub mask_out: Option<PathBuf>,
    /// Print one JSON object on stdout instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Reads an instance, turning parse errors into `FILE:LINE: what` messages.
pub fn load_instance(path: &Path) -> anyhow::Result<(GridProblem, f64)> {
    let start = Instant::now();
    let problem = dimacs::read_path(path).map_err(|e| match e {
        DimacsError::Syntax { line, message } => anyhow!("{}:{line}: {message}", path.display()),
        other => anyhow!("{}: {other}", path.display()),
    })?;
    Ok((problem, start.elapsed().as_secs_f64() * 1e3))
}

/// Runs the command.
pub fn run(args: MaxflowArgs) -> anyhow::Result<()> {
    let (problem, read_ms) = load_instance(&args.file)?;
    let (mut engine, note) = create_engine(args.engine)?;
    if let Some(note) = note {
        eprintln!("note: {note}");
    }
    let solution = engine
        .solve(&problem)
        .with_context(|| format!("{} engine", engine.name()))?;
    let cut = cut_capacity(&problem, &solution.mask);
    anyhow::ensure!(
        cut == solution.flow,
        "internal error: the {} engine's cut has capacity {cut} but its flow is {}",
        engine.name(),
        solution.flow
    );
    if let Some(path) = &args.mask_out {
        solution
            .mask
            .write_png(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    let s = &solution.stats;
    // the GPU engine's own counts; the CPU engine reports none
    let gpu = s.gpu.unwrap_or_default();
    let sweeps = s.gpu.map(|g| g.sweeps);
    let memory_floor_ms = s.gpu.and_then(|g| g.memory_floor_ms);
    if args.json {
        let out = json!({
            "file": args.file.display().to_string(),
            "flow": solution.flow,
            "cut_capacity": cut,
            "width": problem.width(),
            "height": problem.height(),
            "connectivity": problem.connectivity().number(),
            "engine": engine.name(),
            "engine_description": engine.description(),
            "cut_side": engine.cut_side(),
            "read_ms": read_ms,
            "build_ms": s.upload_ms,
            "solve_ms": s.solve_ms,
            "readback_ms": s.readback_ms,
            "iterations": s.iterations,
            "global_relabels": gpu.global_relabels,
            "launches": gpu.launches,
            "engine_bytes": s.engine_bytes,
            "sweeps": sweeps,
            "memory_floor_ms": memory_floor_ms,
            "source_side_pixels": solution.mask.count_source(),
        });
        println!("{out}");
    } else {
        println!("{}", args.file.display());
        println!(
            "  grid        {}x{} {}-connected",
            problem.width(),
            problem.height(),
            problem.connectivity().number()
        );
        println!("  engine      {} ({})", engine.name(), engine.description());
        println!("  max flow    {}", solution.flow);
        println!(
            "  min cut     {} source-side pixels ({})",
            solution.mask.count_source(),
            engine.cut_side().describe()
        );
        println!("  read        {read_ms:.1} ms");
        println!("  build       {:.1} ms", s.upload_ms);
        println!(
            "  solve       {:.1} ms ({} iterations)",
            s.solve_ms, s.iterations
        );
        if let (Some(sweeps), Some(floor)) = (sweeps, memory_floor_ms) {
            println!(
                "  sweeps      {sweeps:.1} over the grid's state, {floor:.3} ms at full memory bandwidth"
            );
        }
        println!(
            "  memory      {:.1} MB ({:.1} bytes/pixel)",
            s.engine_bytes as f64 / 1e6,
            s.engine_bytes as f64 / problem.pixels() as f64
        );
        if let Some(path) = &args.mask_out {
            println!("  mask        {}", path.display());
        }
    }
    Ok(())
}

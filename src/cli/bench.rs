//! `livecut bench FILE…`: time engines on instances and print a table and JSON.

use super::maxflow::{Shape, load_any_instance};
use anyhow::Context;
use livecut::maxflow::dimacs::Instance;
use livecut::maxflow::{
    EngineChoice, EngineError, Solution, VolumeEngine, create_engine, create_volume_engine,
};
use serde::Serialize;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Options of `livecut bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// DIMACS grid instances, 2D or 3D (plain or gzip).
    #[arg(required_unless_present = "sequence")]
    pub files: Vec<PathBuf>,
    /// Instead of instances, segment this stream (`demo`, a folder of frames, a video)
    /// static and dynamic with each engine and time every stage per frame.
    #[arg(long, value_name = "SOURCE", conflicts_with = "files")]
    pub sequence: Option<String>,
    /// With --sequence: the demo's frame size, or the size frames are scaled to.
    #[arg(long, value_name = "WxH", value_parser = super::segment::parse_size, requires = "sequence")]
    pub size: Option<(u32, u32)>,
    /// With --sequence: frames to segment, the first a warm-up.
    #[arg(long, default_value_t = 60, requires = "sequence")]
    pub frames: u64,
    /// With --sequence: seeds PNG of the first frame (the demo has its own).
    #[arg(long, value_name = "PNG", requires = "sequence")]
    pub seeds: Option<PathBuf>,
    /// With --sequence: learn the background from the first N frames (not timed,
    /// not counted in --frames) and segment the rest with no seeds.
    #[arg(long, value_name = "N", default_value_t = 0, requires = "sequence")]
    pub background: u32,
    /// Engines to time, comma-separated, each on every instance in the same run
    /// (instances: the CPU engine when not given; --sequence: every engine present).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub engine: Vec<EngineChoice>,
    /// With --sequence: time the CPU engine beside the energy in wgpu compute shaders
    /// on the best adapter, software ones included (without it: on a real GPU only).
    #[arg(long, requires = "sequence")]
    pub wgpu: bool,
    /// Timed runs per instance and engine (the median is reported).
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Untimed runs first.
    #[arg(long, default_value_t = 1)]
    pub warmup: usize,
    /// Also write the results as a JSON array to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// CSV `file,W,H,C,maxflow` to check flows against (default: manifest.csv beside
    /// each instance, where there is one).
    #[arg(long)]
    pub manifest: Option<PathBuf>,
}

/// One row of the results.
#[derive(Serialize, Debug)]
struct Row {
    instance: String,
    width: u32,
    height: u32,
    /// Slices of a volume.
    #[serde(skip_serializing_if = "Option::is_none")]
    depth: Option<u32>,
    connectivity: u32,
    engine: String,
    flow: u64,
    expected: Option<u64>,
    correct: Option<bool>,
    runs: usize,
    solve_ms_median: f64,
    solve_ms_min: f64,
    upload_ms_median: f64,
    readback_ms_median: f64,
    iterations: u64,
    global_relabels: u64,
    launches: u64,
    engine_bytes: u64,
    bytes_per_pixel: f64,
    /// Passes over the grid's state (engines that work in passes).
    sweeps: Option<f64>,
    /// What those passes take at the device's copy bandwidth.
    memory_floor_ms: Option<f64>,
}

/// Runs the command.
pub fn run(args: BenchArgs) -> anyhow::Result<()> {
    if let Some(source) = &args.sequence {
        return super::sequence::run(&super::sequence::SequenceOptions {
            source,
            size: args.size,
            frames: args.frames,
            seeds: args.seeds.as_deref(),
            background: args.background,
            engines: &args.engine,
            wgpu: args.wgpu,
            json: args.json.as_ref(),
        });
    }
    anyhow::ensure!(args.runs > 0, "--runs must be at least 1");
    let mut engines = Vec::new();
    let choices = if args.engine.is_empty() {
        vec![EngineChoice::Cpu]
    } else {
        args.engine.clone()
    };
    for &choice in &choices {
        let (engine, note) = create_engine(choice)?;
        if let Some(note) = note {
            eprintln!("note: {note}");
        }
        engines.push(engine);
    }
    // volume engines only once a volume comes (the CUDA engine refuses them)
    let mut volume_engines: Option<Vec<Box<dyn VolumeEngine>>> = None;
    let mut rows = Vec::new();
    let mut manifests = Manifests::default();
    for file in &args.files {
        let (instance, _) = load_any_instance(file)?;
        let expected = manifests.expected(file, args.manifest.as_deref())?;
        let case = Case {
            file,
            shape: Shape::of(&instance),
            expected,
        };
        match &instance {
            Instance::Plane(problem) => {
                for engine in &mut engines {
                    eprintln!("{} on {} ...", engine.name(), file.display());
                    rows.push(time_one(
                        engine.name(),
                        || engine.solve(problem),
                        &case,
                        &args,
                    )?);
                }
            }
            Instance::Volume(problem) => {
                if volume_engines.is_none() {
                    volume_engines = Some(create_volume_engines(&choices)?);
                }
                for engine in volume_engines.iter_mut().flatten() {
                    let name = engine.kind().as_str();
                    eprintln!("{name} on {} ...", file.display());
                    rows.push(time_one(name, || engine.solve(problem), &case, &args)?);
                }
            }
        }
    }
    if let Some(path) = &args.json {
        let text = serde_json::to_string_pretty(&rows)?;
        std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    print_table(&rows);
    let wrong: Vec<_> = rows.iter().filter(|r| r.correct == Some(false)).collect();
    anyhow::ensure!(
        wrong.is_empty(),
        "{} result(s) differ from the manifest: {}",
        wrong.len(),
        wrong
            .iter()
            .map(|r| format!("{} {}", r.engine, r.instance))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(())
}

/// The volume engines of the chosen kinds.
fn create_volume_engines(choices: &[EngineChoice]) -> anyhow::Result<Vec<Box<dyn VolumeEngine>>> {
    let mut engines = Vec::new();
    for &choice in choices {
        let (engine, note) = create_volume_engine(choice)?;
        if let Some(note) = note {
            eprintln!("note: {note}");
        }
        engines.push(engine);
    }
    Ok(engines)
}

/// One instance to time: its file, shape and expected flow.
struct Case<'a> {
    file: &'a Path,
    shape: Shape,
    expected: Option<u64>,
}

/// Times `solve` (one engine on one instance): warm-up runs, then the timed ones.
fn time_one(
    engine: &str,
    mut solve: impl FnMut() -> Result<Solution, EngineError>,
    case: &Case,
    args: &BenchArgs,
) -> anyhow::Result<Row> {
    let (file, expected) = (case.file, case.expected);
    for _ in 0..args.warmup {
        solve()?;
    }
    let solutions = (0..args.runs)
        .map(|_| solve())
        .collect::<Result<Vec<Solution>, _>>()?;
    let stat = |f: fn(&Solution) -> f64| median(solutions.iter().map(f).collect());
    let last = solutions.last().expect("runs > 0");
    let flow = last.flow;
    let gpu = last.stats.gpu;
    Ok(Row {
        instance: file
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned(),
        width: case.shape.width,
        height: case.shape.height,
        depth: case.shape.depth,
        connectivity: case.shape.connectivity,
        engine: engine.to_string(),
        flow,
        expected,
        correct: expected.map(|e| solutions.iter().all(|s| s.flow == e)),
        runs: args.runs,
        solve_ms_median: stat(|s| s.stats.solve_ms),
        solve_ms_min: solutions
            .iter()
            .map(|s| s.stats.solve_ms)
            .fold(f64::INFINITY, f64::min),
        upload_ms_median: stat(|s| s.stats.upload_ms),
        readback_ms_median: stat(|s| s.stats.readback_ms),
        iterations: last.stats.iterations,
        global_relabels: gpu.map_or(0, |g| g.global_relabels),
        launches: gpu.map_or(0, |g| g.launches),
        engine_bytes: last.stats.engine_bytes,
        bytes_per_pixel: last.stats.engine_bytes as f64 / case.shape.pixels as f64,
        sweeps: gpu.map(|g| g.sweeps),
        memory_floor_ms: gpu.and_then(|g| g.memory_floor_ms),
    })
}

/// Median of a non-empty list.
pub(super) fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn print_table(rows: &[Row]) {
    println!(
        "{:<34} {:>10} {:>2} {:>6} {:>12} {:>5} {:>10} {:>9} {:>9} {:>9} {:>9} {:>6} {:>7} {:>9} {:>7}",
        "instance",
        "size",
        "C",
        "engine",
        "flow",
        "ok",
        "solve ms",
        "min ms",
        "upload",
        "readback",
        "iters",
        "B/px",
        "sweeps",
        "floor ms",
        "x floor"
    );
    for r in rows {
        let ok = match r.correct {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        // passes, their floor and the solve's distance from it, where the engine counts them
        let (sweeps, floor, ratio) = match (r.sweeps, r.memory_floor_ms) {
            (Some(s), Some(f)) => (
                format!("{s:.1}"),
                format!("{f:.3}"),
                format!("{:.0}", r.solve_ms_median / f),
            ),
            _ => ("-".into(), "-".into(), "-".into()),
        };
        println!(
            "{:<34} {:>10} {:>2} {:>6} {:>12} {:>5} {:>10.2} {:>9.2} {:>9.2} {:>9.2} {:>9} {:>6.1} {:>7} {:>9} {:>7}",
            r.instance,
            match r.depth {
                None => format!("{}x{}", r.width, r.height),
                Some(d) => format!("{}x{}x{d}", r.width, r.height),
            },
            r.connectivity,
            r.engine,
            r.flow,
            ok,
            r.solve_ms_median,
            r.solve_ms_min,
            r.upload_ms_median,
            r.readback_ms_median,
            r.iterations,
            r.bytes_per_pixel,
            sweeps,
            floor,
            ratio
        );
    }
}

/// Expected flows read from manifest files, cached per file.
#[derive(Default)]
struct Manifests {
    cache: HashMap<PathBuf, HashMap<String, u64>>,
}

impl Manifests {
    fn expected(&mut self, file: &Path, explicit: Option<&Path>) -> anyhow::Result<Option<u64>> {
        let path = match explicit {
            Some(p) => p.to_path_buf(),
            None => file.with_file_name("manifest.csv"),
        };
        if !self.cache.contains_key(&path) {
            let table = if path.exists() {
                read_manifest(&path)?
            } else {
                HashMap::new()
            };
            self.cache.insert(path.clone(), table);
        }
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        Ok(self.cache[&path].get(name.as_ref()).copied())
    }
}

/// Reads `file,W,H,C,maxflow` (2D) or `file,W,H,D,C,maxflow` (3D) lines, header
/// first, into file → flow; the flow is the column the header names `maxflow`.
pub fn read_manifest(path: &Path) -> anyhow::Result<HashMap<String, u64>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let column = text
        .lines()
        .next()
        .and_then(|header| header.split(',').position(|f| f.trim() == "maxflow"))
        .unwrap_or(4);
    let mut table = HashMap::new();
    for (i, line) in text.lines().enumerate().skip(1) {
        let fields: Vec<&str> = line.split(',').collect();
        if line.trim().is_empty() {
            continue;
        }
        let flow = fields
            .get(column)
            .and_then(|f| f.trim().parse::<u64>().ok())
            .with_context(|| {
                format!(
                    "{}:{}: expected a flow in column {}",
                    path.display(),
                    i + 1,
                    column + 1
                )
            })?;
        table.insert(fields[0].trim().to_string(), flow);
    }
    Ok(table)
}

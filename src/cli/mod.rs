//! Command-line interface: parses arguments, runs one command, and turns every failure
//! into one `error: …` line on stderr with exit status 2.

mod app;
mod bench;
mod cameras;
mod eval;
mod maxflow;
mod segment;
mod sequence;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Real-time foreground extraction with exact graph cuts. With no command, opens the
/// window on the first camera, or on the built-in demo scene when there is none.
#[derive(Parser, Debug)]
#[command(
    name = "livecut",
    version,
    about,
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    app: app::AppArgs,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Solve one DIMACS grid max-flow instance and print the flow value.
    Maxflow(maxflow::MaxflowArgs),
    /// Time engines on instance files: warm-up, median of N runs, table and JSON.
    Bench(bench::BenchArgs),
    /// Segment an image, a folder, a video, the demo scene or a camera into masks.
    Segment(segment::SegmentArgs),
    /// Segment images with seed files and score them against ground truth (IoU).
    ///
    /// Images are scored by intersection over union. Videos are scored, from the
    /// frame after the seeded or the last learning one, by mean IoU, by CDnet's
    /// F-measure (precision and recall of the foreground over all scored frames) and
    /// by flicker: of the pixels whose ground truth keeps its label from one frame to
    /// the next, the share whose mask label flips; a pixel marked 128 (unknown) in
    /// either frame's ground truth is left out of every score.
    Eval(eval::EvalArgs),
    /// List the cameras and the modes livecut can read from them.
    Cameras(cameras::CamerasArgs),
}

/// Entry point of the binary.
/// Headless commands look for a GPU through Vulkan; with no session (no
/// `XDG_RUNTIME_DIR`), Mesa's device-selection layer can reach no display to choose by
/// and only prints an error line per adapter search: turn it off there, unless the
/// user set it either way.
fn quiet_headless_vulkan() {
    let no_session = std::env::var_os("XDG_RUNTIME_DIR").is_none_or(|d| d.is_empty());
    if no_session && std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: called first thing in `main`, before any other thread exists.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    if cli.command.is_some() {
        quiet_headless_vulkan();
    }
    let result = match cli.command {
        None => app::run(cli.app),
        Some(Command::Maxflow(args)) => maxflow::run(args),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::Segment(args)) => segment::run(args),
        Some(Command::Eval(args)) => eval::run(args),
        Some(Command::Cameras(args)) => cameras::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            let text = format!("{err:#}").replace('\n', " ");
            eprintln!("error: {text}");
            ExitCode::from(2)
        }
    }
}

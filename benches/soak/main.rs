//! The soak run: the live pipeline on the paced demo scene (640×480, 30 frames/s, CPU
//! engine) for 100,000 frames, about an hour, recording off for the first half and on
//! for the second. Prints a row per 1,000 frames as it goes, then the summary table
//! and the checks; exits non-zero when a check fails.
//!
//! `cargo bench --bench soak` runs it; `-- --frames N --window N --size WxH --fps N`
//! change the run (e.g. `-- --frames 3000` for a short one).

mod session;

use session::{Config, Limits, Report};
use std::process::ExitCode;

/// The hour-long run's limits (the issue's): memory after warm-up within 5 % (in each
/// phase, recording off and on), the dropped share steady, no upward drift of the
/// median frame time.
const LIMITS: Limits = Limits {
    memory_growth: 0.05,
    dropped_rise: 0.10,
    time_ratio: 1.25,
    time_slack_ms: 1.0,
};

fn main() -> ExitCode {
    let config = match parse_args() {
        Ok(c) => c,
        Err(message) => {
            eprintln!("error: {message}");
            return ExitCode::from(2);
        }
    };
    println!(
        "soak: demo {}x{} @ {} fps, CPU engine, {} frames, recording from frame {} into {}",
        config.width,
        config.height,
        config.fps,
        config.frames,
        config.frames / 2,
        config.out.display()
    );
    println!("{}", Report::window_heading());
    let report = session::run(&config, |w| println!("{}", Report::window_row(w)));
    let _ = std::fs::remove_dir_all(&config.out);
    let report = match report {
        Ok(r) => r,
        Err(message) => {
            eprintln!("error: the session failed: {message}");
            return ExitCode::FAILURE;
        }
    };
    println!("\n{}\n", report.summary());
    let failures = report.failures(&LIMITS);
    for failure in &failures {
        println!("FAIL: {failure}");
    }
    if failures.is_empty() {
        println!("all checks held");
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn parse_args() -> Result<Config, String> {
    let mut config = Config {
        width: 640,
        height: 480,
        fps: 30,
        frames: 100_000,
        window: 1_000,
        out: std::env::temp_dir().join(format!("livecut-soak-{}", std::process::id())),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or(format!("{arg} needs a value"));
        let number = |text: String| {
            text.parse::<u64>()
                .map_err(|_| format!("{arg}: not a number: {text}"))
        };
        match arg.as_str() {
            "--bench" => {}
            "--frames" => config.frames = number(value()?)?,
            "--window" => config.window = number(value()?)?.max(1),
            "--fps" => config.fps = number(value()?)? as u32,
            "--size" => {
                let text = value()?;
                let (w, h) = text
                    .split_once('x')
                    .ok_or(format!("--size: expected WxH, got {text}"))?;
                config.width = number(w.into())? as u32;
                config.height = number(h.into())? as u32;
            }
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(config)
}

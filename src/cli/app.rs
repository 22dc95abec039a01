//! `livecut` with no command: the desktop window.

use anyhow::Context;
use livecut::app::settings::ViewMode;
use livecut::app::{self, AppOptions, demo_spec, demo_spec_with};
use livecut::capture::{SourceSpec, StreamSettings};
use livecut::maxflow::EngineChoice;
use livecut::pipeline::GpuChoice;
use std::time::Duration;

/// Options of the window.
#[derive(clap::Args, Debug)]
pub struct AppArgs {
    /// What to segment: `camera`, `camera:N`, an image, a folder of images, a video,
    /// `demo` (the built-in scene, still camera) or `demo:pan` (panning camera)
    /// [default: the first camera, else the demo scene]
    #[arg(long, value_name = "SOURCE")]
    source: Option<String>,
    /// Engine to start with [default: the one chosen last time, at first `auto`]
    #[arg(long, value_enum)]
    engine: Option<EngineChoice>,
    /// Where the energy runs: auto (CUDA beside the CUDA engine, else the window's GPU
    /// through wgpu where it is a real one, else the CPU), cuda, wgpu or none
    #[arg(long, value_enum, default_value_t = GpuChoice::Auto)]
    gpu: GpuChoice,
    /// View to start with [default: the one chosen last time, at first `overlay`]
    #[arg(long, value_enum)]
    view: Option<ViewMode>,
    /// Close the window after this many seconds and print the UI and segmentation
    /// frame rates (for demos and timing)
    #[arg(long, value_name = "SECONDS")]
    quit_after: Option<f64>,
}

/// Opens the window.
pub fn run(args: AppArgs) -> anyhow::Result<()> {
    let spec = match &args.source {
        None => preferred(),
        Some(text) => {
            let spec = SourceSpec::parse(text, StreamSettings::default())
                .with_context(|| format!("--source {text}"))?;
            match spec {
                // The window shows the demo in real time, like a camera.
                SourceSpec::Demo(config) => demo_spec_with(config.motion),
                other => other,
            }
        }
    };
    let (source, notice) = match spec.open() {
        Ok(source) => (source, None),
        Err(err) if matches!(spec, SourceSpec::Camera { .. }) => {
            let demo = demo_spec().open().context("opening the demo scene")?;
            (
                demo,
                Some(format!("{err} — showing the demo scene instead")),
            )
        }
        Err(err) => {
            return Err(err).with_context(|| {
                format!("opening {}", args.source.as_deref().unwrap_or("the source"))
            });
        }
    };
    let quit_after = match args.quit_after {
        Some(s) if s.is_finite() && s > 0.0 => Some(Duration::from_secs_f64(s)),
        Some(s) => anyhow::bail!("--quit-after must be a positive number of seconds, got {s}"),
        None => None,
    };
    app::run(AppOptions {
        source,
        engine: args.engine,
        view: args.view,
        notice,
        quit_after,
        gpu: args.gpu,
    })?;
    Ok(())
}

/// The first camera, else the demo scene in real time.
fn preferred() -> SourceSpec {
    match SourceSpec::preferred(StreamSettings::default()) {
        SourceSpec::Demo(_) => demo_spec(),
        camera => camera,
    }
}
